"""Sizes from the program's own call sites: the IR reader (inline IR), the inference over the
call graph (inline records), and the whole path through clang (inline C, two files)."""
from __future__ import annotations

import shutil

import pytest

from ccls.engine import count_sources
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.model import CallSite, FieldStore
from ccls.readers.call_sites import ModuleCalls, read_call_sites
from ccls.sizes import infer_sizes, module_of

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None or shutil.which("opt-19") is None,
                                 reason="clang-19/opt-19 not installed")

IR = """
define dso_local void @kernel(i32 noundef %n, ptr noundef %a) #0 !dbg !9 {
entry:
  ret void
}
define internal void @mid(i32 noundef %m, ptr noundef %a) #0 !dbg !29 {
entry:
  %mul = mul nsw i32 %m, 2, !dbg !30
  %wide = sext i32 %mul to i64
  call void @kernel(i32 noundef %mul, ptr noundef %a), !dbg !31
  ret void
}
define dso_local i32 @main(i32 noundef %argc, ptr noundef %argv) #0 !dbg !52 {
entry:
  %n.0 = phi i32 [ 120, %entry ], [ 3, %if.then ]
  call void @llvm.lifetime.start.p0(i64 8000, ptr %a)
  call void @kernel(i32 noundef 481, ptr noundef %a), !dbg !54
  call void @mid(i32 noundef 64, ptr noundef %a), !dbg !56
  %r = call i32 @other(i32 noundef %argc, { i32, i32 } %pair, double 2.0), !dbg !57
  call void @kernel(i32 noundef %n.0, ptr noundef %a), !dbg !62
  ret i32 0
}
!31 = !DILocation(line: 5, column: 37, scope: !29)
!54 = !DILocation(line: 12, column: 3, scope: !52)
!56 = !DILocation(line: 13, column: 3, scope: !52)
!57 = !DILocation(line: 14, column: 3, scope: !52)
!62 = !DILocation(line: 16, column: 3, scope: !52)
"""


def test_reader_takes_constants_parameters_arithmetic_and_choices():
    module = read_call_sites(IR, "/src/a.c")
    assert module.parameters == {"kernel": ("n", "a"), "mid": ("m", "a"), "main": ("argc", "argv")}
    assert module.internal == {"mid"}
    by_line = {site.line: site for site in module.sites}
    assert set(by_line) == {5, 12, 13, 14, 16}  # llvm.* intrinsics are not calls to sizes
    assert by_line[12].args == (("const", 481), None)
    assert by_line[5].args[0] == ("op", "mul", ("param", "m"), ("const", 2))
    assert by_line[16].args[0] == ("choice", (("const", 120), ("const", 3)))
    assert by_line[14].callee == "other" and by_line[14].args == (("param", "argc"), None, None)


STRINGS_IR = r"""
@text = dso_local global [6 x i8] c"ab\0Acd\00", align 1
@scratch = dso_local global [8 x i8] c"abcdefg\00", align 1
@.str = private unnamed_addr constant [3 x i8] c"xy\00", align 1
define dso_local void @match(ptr noundef %s, i32 noundef %len) {
entry:
  ret void
}
define dso_local void @run() {
entry:
  %0 = call i64 @strlen(ptr noundef nonnull dereferenceable(1) @text)
  %1 = trunc i64 %0 to i32
  call void @match(ptr noundef @text, i32 noundef %1)
  %2 = call i64 @strlen(ptr noundef nonnull dereferenceable(1) @scratch)
  %3 = trunc i64 %2 to i32
  call void @match(ptr noundef @scratch, i32 noundef %3)
  call void @llvm.memcpy.p0.p0.i64(ptr @scratch, ptr @.str, i64 3, i1 false)
  ret void
}
"""


def test_strlen_of_a_global_string_is_the_length_of_the_text_it_is_initialised_with():
    first, second = [site for site in read_call_sites(STRINGS_IR, "/src/s.c").sites if site.callee == "match"]
    assert first.args[1] == ("const", 5)  # "ab\ncd": an escaped byte is one character
    assert second.args[1] is None  # copied into: its text at the call is not the initial one


def test_inference_follows_the_call_graph_and_keeps_the_largest():
    sizes = infer_sizes([read_call_sites(IR, "/src/a.c")])
    kernel = sizes[("/src/a.c", "kernel")]["n"]
    assert kernel.value == 481 and kernel.origin == "the call at a.c:12"
    assert [value for value, _ in kernel.others] == [128, 120, 3]
    assert "passing on m = 64 from the call at a.c:13" in dict(kernel.others)[128]
    assert sizes[("/src/a.c", "mid")]["m"].value == 64
    assert ("/src/a.c", "main") not in sizes  # nobody calls main


def test_a_value_known_only_at_run_time_is_listed_not_guessed():
    module = ModuleCalls("/src/b.c", {"f": ("n",), "g": ("k",)},
                         (CallSite("g", "f", 3, (("param", "k"),)), CallSite("g", "f", 4, (("const", 10),))))
    f = infer_sizes([module])[("/src/b.c", "f")]["n"]
    assert f.value == 10 and f.unknown_at == ("the call at b.c:3",)
    assert "known only at run time (the call at b.c:3)" in f.describe("n")
    assert infer_sizes([ModuleCalls("/src/b.c", {"f": ("n",)}, (CallSite("g", "f", 3, (None,)),))]) == {}


def test_recursion_ends():
    module = ModuleCalls("/src/r.c", {"f": ("n",), "main": ()},
                         (CallSite("f", "f", 2, (("op", "sub", ("param", "n"), ("const", 1)),)),
                          CallSite("main", "f", 5, (("const", 50),))))
    f = infer_sizes([module])[("/src/r.c", "f")]["n"]
    assert f.value == 50 and len(f.others) < 20


def test_static_functions_resolve_within_their_own_file():
    a = ModuleCalls("/src/a.c", {"helper": ("n",), "main": ()}, (CallSite("main", "helper", 3, (("const", 7),)),),
                    frozenset({"helper"}))
    b = ModuleCalls("/src/b.c", {"helper": ("n",), "run": ()}, (CallSite("run", "helper", 9, (("const", 900),)),),
                    frozenset({"helper"}))
    sizes = infer_sizes([a, b])
    assert sizes[("/src/a.c", "helper")]["n"].value == 7
    assert sizes[("/src/b.c", "helper")]["n"].value == 900


PROGRAM = """
#define SIZE 120
#define SCALE(x) ((x) * 4)
static const int ROWS = 64;
enum { DEPTH = 3 };
double total(int n, const double *a) { double s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
void scale(int n, double *a) { for (int i = 0; i < n; i++) a[i] *= 2.0; }
static void pass_on(int m, double *a) { scale(m, a); }
void grid(int rows, int cols, double *a) { for (int i = 0; i < rows; i++) for (int j = 0; j < cols; j++) a[i * cols + j] += 1; }
void untouched(int n, double *a) { for (int i = 0; i < n; i++) a[i] = a[i] * 3 + 1; }
int main(int argc, char **argv) {
  static double a[1 << 16];
  int n = SIZE;
  double s = total(n, a);
  s += total(SCALE(n) + 1, a);
  pass_on(ROWS * DEPTH, a);
  grid(ROWS, argc, a);
  untouched(argc, a);
  return (int)s;
}
"""

OTHER_FILE = """
void scale(int n, double *a);
void driver(double *a) { scale(5000, a); }
"""


def _by_name(tmp_path, options: AnalysisOptions = AnalysisOptions(), with_other: bool = False):
    main = tmp_path / "prog.c"
    main.write_text(PROGRAM)
    sources = [SourceFile(str(main), PROGRAM)]
    if with_other:
        other = tmp_path / "driver.c"
        other.write_text(OTHER_FILE)
        sources.append(SourceFile(str(other), OTHER_FILE))
    counted = count_sources(sources, options)
    assert not [e for f in counted for e in f.errors]
    return {fn.name: fn for f in counted for fn in f.functions}


@needs_clang
def test_sizes_from_macros_locals_constants_and_arithmetic(tmp_path):
    fns = _by_name(tmp_path)
    total = fns["total"]
    assert total.inferred_sizes == {"n": 481.0}  # SCALE(SIZE) + 1 beats SIZE
    assert total.size_notes == ["n = 481 from the call at prog.c:15; also called with 120 (the call at prog.c:14)"]
    assert "numbers evaluated at n=481" in total.assumptions
    assert any("n" in loop.trip_count.iterations.symbols for loop in total.loops)  # the expression stays symbolic
    assert fns["pass_on"].inferred_sizes == {"m": 192.0}  # ROWS * DEPTH through a const and an enum
    assert fns["scale"].inferred_sizes == {"n": 192.0}  # through pass_on: a call chain
    assert "passing on m = 192" in fns["scale"].size_notes[0]
    assert [(site.callee, site.line) for site in fns["main"].call_sites][:2] == [("total", 14), ("total", 15)]
    # grid: rows from the call, cols only known at run time: the default, stated as before.
    assert fns["grid"].inferred_sizes == {"rows": 64.0}
    assert "numbers evaluated at cols=1000, rows=64" in fns["grid"].assumptions
    assert fns["untouched"].inferred_sizes == {}
    assert "numbers evaluated at n=1000" in fns["untouched"].assumptions


@needs_clang
def test_sizes_flow_from_another_file_and_user_values_win(tmp_path):
    fns = _by_name(tmp_path, with_other=True)
    assert fns["scale"].inferred_sizes == {"n": 5000.0}
    assert fns["scale"].size_notes[0].startswith("n = 5000 from the call at driver.c:3")
    given = _by_name(tmp_path, AnalysisOptions(parameter_values=(("n", 7.0),)), with_other=True)
    assert given["scale"].inferred_sizes == {} and given["total"].inferred_sizes == {}
    assert "numbers evaluated at n=7" in given["total"].assumptions
    assert given["pass_on"].inferred_sizes == {"m": 192.0}  # only n was given


@needs_clang
def test_report_evaluates_each_function_at_its_own_sizes(tmp_path):
    from ccls.engine import ReportSettings, report
    from ccls.tables import load_tables

    fns = _by_name(tmp_path)
    reports = {r.counted.name: r for r in report([fns["total"], fns["untouched"]], load_tables(None),
                                                 ReportSettings(), AnalysisOptions())}
    assert reports["total"].assumptions[-1].startswith("n = 481 from the call at prog.c:15")
    per_element_total = reports["total"].instructions / 481
    per_element_untouched = reports["untouched"].instructions / 1000
    assert 0.5 < per_element_total / per_element_untouched < 2.0  # both about a few instructions per element


def test_a_web_of_merging_phis_is_read_once_per_value():
    # A decoder's state machine: each phi merges the two before it. Read naively, the last one
    # has 2^depth paths (zlib's inflate() never finished); each value is now read once, and an
    # argument built from more than a few dozen values is not taken as a size.
    lines = ["define void @callee(i32 %n) {", "entry:", "  ret void", "}", "define void @f(i32 %a) {", "entry:",
             "  %p0 = phi i32 [ 1, %entry ], [ 2, %entry ]", "  %p1 = phi i32 [ 3, %entry ], [ %p0, %entry ]"]
    lines += [f"  %p{k} = phi i32 [ %p{k - 1}, %entry ], [ %p{k - 2}, %entry ]" for k in range(2, 12)]
    lines += ["  call void @callee(i32 %p11)", "  call void @callee(i32 %p3)", "  ret void", "}"]
    module = read_call_sites("\n".join(lines), "/src/w.c")
    deep, shallow = (site.args[0] for site in module.sites)
    assert deep is None  # 144 paths: too many to be a size
    assert shallow is not None
    assert infer_sizes([module])[("/src/w.c", "callee")]["n"].value == 3


@needs_clang
def test_a_bulk_fill_is_sized_from_its_call_sites_too(tmp_path):
    code = ("void clear(int n, double *x) { for (int i = 0; i < n; i++) x[i] = 0; }\n"
            "void driver(double *x) { clear(5000, x); }\n")
    path = tmp_path / "fill.c"
    path.write_text(code)
    [counted] = count_sources([SourceFile(str(path), code)], AnalysisOptions())
    clear = next(fn for fn in counted.functions if fn.name == "clear")
    assert clear.inferred_sizes == {"n": 5000.0}  # used by the memset's length, not by a loop
    assert any(a.startswith("memset of 39 KiB per call") for a in clear.assumptions)


# -- struct fields the program sets only to known values -------------------------------------

def _fields_module(*stores: FieldStore) -> ModuleCalls:
    """`set_key(n)` writes ctx->rounds; `encrypt(ctx)` passes ctx->rounds on to `rounds_loop(r)`."""
    return ModuleCalls("/src/aes.c", {"main": (), "set_key": ("n",), "encrypt": ("ctx",), "rounds_loop": ("r",)},
                       (CallSite("main", "set_key", 3, (("const", 10),)), CallSite("main", "set_key", 4, (("const", 14),)),
                        CallSite("encrypt", "rounds_loop", 9, (("field", "aes_ctx", 0),))), field_stores=stores)


def test_a_field_the_program_only_sets_to_known_values_sizes_what_reads_it():
    sizes = infer_sizes([_fields_module(FieldStore("aes_ctx", 0, "set_key", 6, ("param", "n")),
                                        FieldStore("aes_ctx", 0, "copy_key", 7, ("field", "aes_ctx", 0)))])
    rounds = sizes[("/src/aes.c", "rounds_loop")]["r"]
    assert rounds.value == 14 and [value for value, _ in rounds.others] == [10]
    assert "struct aes_ctx's field at byte 0, set to 14 by the write at aes.c:6" in rounds.origin


@pytest.mark.parametrize("other", [
    FieldStore("aes_ctx", 0, "reset", 8, None),  # a value known only at run time
    FieldStore("aes_ctx", 0, "step", 8, ("op", "add", ("field", "aes_ctx", 0), ("const", 1))),  # a counter
])
def test_a_field_also_written_with_a_run_time_value_or_from_itself_sizes_nothing(other):
    sizes = infer_sizes([_fields_module(FieldStore("aes_ctx", 0, "set_key", 6, ("param", "n")), other)])
    assert "r" not in sizes.get(("/src/aes.c", "rounds_loop"), {})


def test_a_field_written_from_a_parameter_some_call_passes_at_run_time_sizes_nothing():
    module = _fields_module(FieldStore("aes_ctx", 0, "set_key", 6, ("param", "n")))
    module = ModuleCalls(module.file, {**module.parameters, "load": ("argc",)},
                         module.sites + (CallSite("load", "set_key", 12, (None,)),), field_stores=module.field_stores)
    sizes = infer_sizes([module])
    assert sizes[("/src/aes.c", "set_key")]["n"].unknown_at == ("the call at aes.c:12",)
    assert "r" not in sizes.get(("/src/aes.c", "rounds_loop"), {})


@needs_clang
def test_a_loop_to_a_field_set_by_an_init_function_runs_at_the_values_it_is_set_to(tmp_path):
    source = ("""
struct ctx { unsigned rounds; unsigned keys[60]; };
static void init(struct ctx *c, int bits) { c->rounds = bits == 256 ? 14 : bits == 192 ? 12 : 10; }
__attribute__((noinline)) unsigned mix(unsigned rounds, const unsigned *keys) {
    unsigned s = 0;
    for (unsigned i = 1; i < rounds; i++) s = (s << 3) ^ keys[i];
    return s;
}
unsigned run(struct ctx *c) { return mix(c->rounds, c->keys); }
int main(int argc, char **argv) { struct ctx c; init(&c, argc > 1 ? 256 : 128); return (int)run(&c); }
""")
    fns = {fn.name: fn for f in count_sources([SourceFile(str(tmp_path / "ctx.c"), source)], AnalysisOptions())
           for fn in f.functions}
    assert fns["mix"].inferred_sizes == {"rounds": 14.0}
    assert "struct ctx's field at byte 0, set to 14 by the write at ctx.c:3" in fns["mix"].size_notes[0]
    # The language server infers again from what it keeps per function: the writes travel with them.
    again = infer_sizes([module_of(str(tmp_path / "ctx.c"), fns.values())])
    assert again[(str(tmp_path / "ctx.c"), "mix")]["rounds"].value == 14
