"""Recursion: the call graph's cycles, and loops that recurse on every pass (inline IR and C)."""
import shutil

import pytest

from ccls.counting import count_function
from ccls.frontends import SourceFile
from ccls.frontends.c_family import analyze_with_clang
from ccls.options import AnalysisOptions
from ccls.readers.llvm.text import read_module
from ccls.readers.recursion import recursive_cycles


def test_recursive_cycles_are_the_call_graphs_cycles_with_twins_as_their_originals():
    ir = ("define void @a() {\n  call void @b.ccls.as.built()\n  ret void\n}\n"
          "define internal fastcc void @b.ccls.as.built() {\n  call void @a()\n  call void @leaf()\n  ret void\n}\n"
          "define void @self(ptr %fp) {\n  call void @self(ptr %fp)\n  call void %fp()\n  ret void\n}\n"
          "define void @leaf() {\n  call void @llvm.donothing()\n  ret void\n}\n"
          "define void @caller() {\n  call void @a()\n  ret void\n}\n"
          "declare void @llvm.donothing()\n")
    cycles = recursive_cycles(read_module(ir).functions)
    assert cycles == {"a": {"a", "b"}, "b": {"a", "b"}, "self": {"self"}}


@pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None, reason="clang-19 is not installed")
def test_a_loop_that_recurses_on_every_pass_runs_once_per_entry():
    # Both loops leave only when the call succeeds: ScalarEvolution has no count. The one whose
    # call comes back into its own function (a backtracking search) runs once per entry over
    # the recursion; the one calling an outside function stays a count the data decides.
    code = ("extern int next(int);\nextern int ok(int *, int);\n"
            "int solve(int *board, int k) {\n if (k >= 8) return 1;\n board[k] = 0;\n"
            " while (!solve(board, k + 1))\n  board[k] = next(board[k]);\n return 0;\n}\n"
            "int retry(int *board, int k) {\n board[k] = 0;\n while (!ok(board, k))\n  board[k] = next(board[k]);\n"
            " return 0;\n}\n")
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/rec.c", code), AnalysisOptions(), "c", [])
    counted = {f.display_name: count_function(f, None, lambda s: 1000.0) for f in result.functions}
    trips = {name: [str(l.trip_count.iterations) for l in fn.loops] for name, fn in counted.items()}
    assert trips == {"solve": ["1"], "retry": ["calls(ok)"]}
    assert any("in a recursion with this function (solve)" in a for a in counted["solve"].assumptions)
