"""Precompiled preambles: which include blocks are split off, and that compiling with a PCH
counts exactly what compiling the whole text counts, against real clang."""
from __future__ import annotations

import os
import re
import shutil

import pytest

from ccls import preamble, toolchain
from ccls.engine import count_source
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.serialize import counted_to_json

CLANG = shutil.which("clang-19") or shutil.which("clang")
needs_clang = pytest.mark.skipif(CLANG is None, reason="clang not installed")


def test_split_takes_the_leading_include_block_and_keeps_line_numbers():
    text = ("// header comment\n#define _GNU_SOURCE\n#include <math.h>\n/* between */\n"
            "#include \"local.h\" // why\n\nint x;\n#include <late.h>\n")
    found = preamble.split(text)
    assert found.header == "// header comment\n#define _GNU_SOURCE\n#include <math.h>\n/* between */\n" \
                           "#include \"local.h\" // why\n"
    assert found.body == "\n\n\n\n\n\nint x;\n#include <late.h>\n"
    assert found.body.count("\n") == text.count("\n")


@pytest.mark.parametrize("text", [
    "int x;\n#include <math.h>\n",  # code first
    "#if X\n#include <math.h>\n#endif\n",  # a conditional
    "#include <math.h> /* a comment that\n goes on */\n",  # the cut would split a comment
    "#define WHERE __FILE__\n#include <math.h>\n",  # expands differently in a header
    "#define LONG 1 + \\\n 2\n#include <math.h>\n",  # a continued line
    "#pragma once\n#include <math.h>\n",  # pragmas are not taken
    "#define S \"a\"\n#include <math.h>\n",  # string literals are not taken
])
def test_no_preamble_where_splitting_could_change_meaning(text):
    found = preamble.split(text)
    assert found is None or "#include <math.h>" not in found.header


C_TEXT = """#include <stdlib.h>
#include <string.h>
#include "sq.h"

double f(const double *a, const char *s, long n) {
    double t = atoi(s) + sq(3);
    for (long i = 0; i < n; i++)
        t += a[i] / (double)(i + 1) + (double)strlen(s);
    return t;
}
"""
CPP_TEXT = """#include <vector>
#include <algorithm>
#include "sq.h"

double g(const std::vector<double> &v) {
    std::vector<double> w(v);
    std::sort(w.begin(), w.end());
    double t = sq(2);
    for (size_t i = 0; i < w.size(); i++) t += w[i] / (double)(i + 1);
    return t;
}
"""


def _counts(result) -> list[dict]:
    """Everything counted; IR text without metadata and attribute numbers (PCH renumbers them)."""
    out = []
    for fn in result.functions:
        data = counted_to_json(fn)
        data["ir_text"] = re.sub(r"[#!]\d+", "#N", data["ir_text"])
        out.append(data)
    return out


def _compiles(monkeypatch) -> list[list[str]]:
    seen: list[list[str]] = []
    start = toolchain.start_tool  # every tool run starts here

    def recording(argv, **kwargs):
        seen.append(list(argv))
        return start(argv, **kwargs)
    monkeypatch.setattr(toolchain, "start_tool", recording)
    return seen


@needs_clang
@pytest.mark.parametrize("name,text", [("k.c", C_TEXT), ("k.cpp", CPP_TEXT)])
def test_a_precompiled_preamble_counts_what_the_whole_text_counts(tmp_path, monkeypatch, name, text):
    project, store = tmp_path / "project", tmp_path / "cache" / "preambles"
    project.mkdir()
    (project / "sq.h").write_text("static inline int sq(int x) { return x * x; }\n")
    source = SourceFile(str(project / name), text)
    whole = count_source(source, AnalysisOptions())
    assert whole.errors == [] and whole.functions

    runs = _compiles(monkeypatch)
    options = AnalysisOptions(preamble_dir=str(store))
    first = count_source(source, options)  # compiles whole, then builds the PCH
    assert [os.path.splitext(p)[1] for p in sorted(os.listdir(store))] == [".h", ".pch"]
    runs.clear()
    second = count_source(source, options)  # compiles the body against the PCH
    clang_runs = [argv for argv in runs if "-emit-llvm" in argv and argv[argv.index("-x") + 1] != "ir"]  # not the optimiser
    assert len(clang_runs) == 1 and "-include-pch" in clang_runs[0]
    assert _counts(first) == _counts(whole)
    assert _counts(second) == _counts(whole)
    assert sorted(os.listdir(project)) == sorted(["sq.h"])  # nothing written into the source tree


@needs_clang
def test_a_header_changed_since_the_pch_was_built_is_read_again(tmp_path):
    project, store = tmp_path / "project", tmp_path / "preambles"
    project.mkdir()
    header = project / "sq.h"
    header.write_text("static inline int sq(int x) { return x * x; }\n")
    source = SourceFile(str(project / "k.c"), C_TEXT)
    options = AnalysisOptions(preamble_dir=str(store))
    count_source(source, options)
    assert any(name.endswith(".pch") for name in os.listdir(store))
    header.write_text("static inline int sq(int x) { return x / 7 + x % 5; }\n")  # divisions now
    after = count_source(source, options)
    assert after.errors == []
    assert _counts(after) == _counts(count_source(source, AnalysisOptions()))
    assert not any(name.endswith(".pch") for name in os.listdir(store))  # the stale one is gone


@needs_clang
def test_a_compile_error_is_reported_at_its_line_with_a_preamble(tmp_path):
    project, store = tmp_path / "project", tmp_path / "preambles"
    project.mkdir()
    (project / "sq.h").write_text("static inline int sq(int x) { return x * x; }\n")
    options = AnalysisOptions(preamble_dir=str(store))
    count_source(SourceFile(str(project / "k.c"), C_TEXT), options)
    broken = SourceFile(str(project / "k.c"), C_TEXT.replace("return t;", "return t"))
    with_preamble = count_source(broken, options)
    assert [e.line for e in with_preamble.errors] == [9]
    assert "expected ';'" in with_preamble.errors[0].message
    assert with_preamble.errors == count_source(broken, AnalysisOptions()).errors
