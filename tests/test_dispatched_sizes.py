"""Sizes that reach a function through a dispatcher (a function-pointer parameter it calls) and
through a pointer to a local of the caller (`&n`, `&(struct cfg){…}`, a `void *` in a harness's
argument struct): the IR reader, the inference, and the whole path through clang (inline C)."""
from __future__ import annotations

import shutil

import pytest

from ccls.engine import count_sources
from ccls.frontends import SourceFile
from ccls.model import CallSite
from ccls.options import AnalysisOptions
from ccls.readers.call_sites import ModuleCalls, read_call_sites
from ccls.readers.local_contents import local_record
from ccls.sizes import field_sizes, infer_sizes

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None or shutil.which("opt-19") is None,
                                 reason="clang-19/opt-19 not installed")

# What clang -O2 emits before optimisation, after SROA: a harness that hands each kernel a
# struct whose `void *` field points at the caller's settings.
HARNESS_IR = """
%struct.args_t = type { %struct.timeval, %struct.timeval, ptr }
%struct.timeval = type { i64, i64 }
%struct.anon = type { i32 }
define dso_local float @kernel(ptr noundef %func_args) #0 !dbg !9 {
entry:
  ret float 0.0
}
define dso_local void @time_function(ptr noundef %vector_func, ptr noundef %arg_info) #0 !dbg !20 {
entry:
  %func_args = alloca %struct.args_t, align 8
  call void @llvm.lifetime.start.p0(i64 40, ptr %func_args)
  call void @llvm.memset.p0.i64(ptr align 8 %func_args, i8 0, i64 40, i1 false), !dbg !21
  %arg_info1 = getelementptr inbounds %struct.args_t, ptr %func_args, i32 0, i32 2, !dbg !22
  store ptr %arg_info, ptr %arg_info1, align 8, !dbg !22
  %call = call float %vector_func(ptr noundef %func_args), !dbg !23
  ret void
}
define dso_local i32 @main() #0 !dbg !30 {
entry:
  %n1 = alloca i32, align 4
  %.compoundliteral = alloca %struct.anon, align 4
  store i32 1, ptr %n1, align 4
  store i32 16000, ptr %.compoundliteral, align 4
  call void @time_function(ptr noundef @kernel, ptr noundef %n1), !dbg !31
  call void @time_function(ptr noundef @kernel, ptr noundef %.compoundliteral), !dbg !32
  ret i32 0
}
!23 = !DILocation(line: 9, column: 3, scope: !20)
!31 = !DILocation(line: 20, column: 3, scope: !30)
!32 = !DILocation(line: 21, column: 3, scope: !30)
"""


def test_reader_keeps_calls_through_a_parameter_function_addresses_and_locals_with_their_stores():
    module = read_call_sites(HARNESS_IR, "/src/h.c")
    by_line = {site.line: site for site in module.sites}
    # The struct GEP's offset follows LLVM's layout: two 16-byte timevals, then the pointer.
    assert by_line[9].callee == "%vector_func"
    assert by_line[9].args == (("local", "func_args in time_function", ((32, 64, ("param", "arg_info")),)),)
    assert by_line[20].args == (("function", "kernel"), ("local", "n1 in main", ((0, 32, ("const", 1)),)))
    assert by_line[21].args[1] == ("local", ".compoundliteral in main", ((0, 32, ("const", 16000)),))


def test_a_local_whose_address_escapes_or_goes_to_another_function_has_no_known_contents():
    lines = ["  %n = alloca i32, align 4", "  store i32 5, ptr %n, align 4",
             "  call void @fill(ptr noundef %n)", "  call void @run(ptr noundef %n)"]
    assert local_record("n", lines, lambda t, i: None).callees == {"@fill", "@run"}  # `fill` may write it
    stored = ["  %n = alloca i32, align 4", "  store i32 5, ptr %n, align 4", "  store ptr %n, ptr @g, align 8"]
    assert local_record("n", stored, lambda t, i: None) is None  # its address is kept somewhere
    twice = ["  %n = alloca i32, align 4", "  store i32 5, ptr %n, align 4", "  store i32 %m, ptr %n, align 4",
             "  call void @run(ptr noundef %n)"]
    assert local_record("n", twice, lambda t, i: None).fields == ()  # two values there: neither is known
    ir = HARNESS_IR.replace("  call void @time_function(ptr noundef @kernel, ptr noundef %n1), !dbg !31",
                            "  call void @fill(ptr noundef %n1)\n"
                            "  call void @time_function(ptr noundef @kernel, ptr noundef %n1), !dbg !31")
    site = next(s for s in read_call_sites(ir, "/src/h.c").sites if s.line == 20)
    assert site.args == (("function", "kernel"), None)


def test_each_call_of_a_dispatcher_sizes_the_function_it_hands_over_with_its_own_arguments():
    module = read_call_sites(HARNESS_IR, "/src/h.c")
    size = infer_sizes([module])[("/src/h.c", "kernel")]["func_args"]
    values = [size.value, *(value for value, _ in size.others)]
    # One struct per handing-over call, its pointer field at byte 32 leading to that call's local.
    assert sorted(v[3][0][2][3] for v in values) == [((0, 32, 1),), ((0, 32, 16000),)]
    assert {v[3][0][:2] for v in values} == {(32, 64)}
    assert size.origin in ("the call at h.c:20 through time_function", "the call at h.c:21 through time_function")
    # `*(int *)args->arg_info`: loads the pointer at byte 32, then the int at byte 0.
    read = field_sizes({"M": ("func_args", 0, 32, (32,))}, {"func_args": size})["M"]
    assert (read.value, [v for v, _ in read.others]) == (16000, [1])
    assert read.describe("M") == ("M = 16000 from what main stores in its local .compoundliteral, passed by the "
                                  "call at h.c:21 through time_function; also called with 1 (what main stores in "
                                  "its local n1, passed by the call at h.c:20 through time_function)")


def test_a_dispatcher_handed_a_run_time_function_or_value_sizes_nothing():
    sites = (CallSite("main", "dispatch", 3, (("param", "f"), ("local", "n in main", ((0, 32, ("param", "argc")),)))),
             CallSite("dispatch", "%fp", 2, (("param", "arg"),)))
    module = ModuleCalls("/src/d.c", {"main": ("argc", "f"), "dispatch": ("fp", "arg"), "k": ("p",)}, sites)
    assert ("/src/d.c", "k") not in infer_sizes([module])


HARNESS_C = """
struct args_t { long t[4]; void *arg_info; };
float a[64000], b[64000];
void dummy(float *, float *);
float shift(struct args_t *func_args) {
    int M = *(int *)func_args->arg_info;
    for (int i = 0; i < M; i++)
        a[i + M] = a[i] + b[i];
    dummy(a, b);
    return a[0];
}
float strided(struct args_t *func_args) {
    struct { int inc; int n; } *x = func_args->arg_info;
    int n = x->n;
    for (int i = 0; i < n; i++)
        a[i] += b[i];
    dummy(a, b);
    return a[0];
}
typedef float (*test_function_t)(struct args_t *);
void time_function(test_function_t vector_func, void *arg_info) {
    struct args_t func_args = {.arg_info = arg_info};
    float result = vector_func(&func_args);
    dummy(a, &result);
}
int main(void) {
    time_function(&shift, &(struct {int a;}){16000});
    time_function(&strided, &(struct {int inc; int n;}){3, 24000});
    return 0;
}
"""


@needs_clang
def test_a_harness_kernel_runs_at_the_sizes_main_hands_it_through_a_void_pointer(tmp_path):
    path = tmp_path / "harness.c"
    counted = count_sources([SourceFile(str(path), HARNESS_C)], AnalysisOptions())
    fns = {fn.name: fn for f in counted for fn in f.functions}
    assert fns["shift"].inferred_sizes == {"*func_args->arg_info": 16000.0}
    assert fns["shift"].size_notes == ["*func_args->arg_info = 16000 from what main stores in its local "
                                       ".compoundliteral, passed by the call at harness.c:27 through time_function"]
    assert fns["strided"].inferred_sizes == {"func_args->arg_info->n": 24000.0}


@needs_clang
def test_a_field_the_callee_writes_itself_is_not_taken_from_the_callers_store(tmp_path):
    source = """
struct info { int n; int limit; };
int a[100000];
__attribute__((noinline)) int scan(struct info *in) {
    int s = 0;
    for (int i = 0; i < in->limit; i++) { s += a[i]; in->n++; }
    return s;
}
int run(void) { struct info in; in.n = 0; in.limit = 5000; return scan(&in); }
"""
    fns = {fn.name: fn for f in count_sources([SourceFile(str(tmp_path / "scan.c"), source)], AnalysisOptions())
           for fn in f.functions}
    # `limit` only run() sets: its 5000 holds; `n` scan() counts up, so 0 is only where it starts.
    assert fns["scan"].inferred_sizes == {"in->limit": 5000.0}
    site = next(s for s in fns["run"].call_sites if s.callee == "scan")
    assert site.args == (("local", "in in run", ((4, 32, ("const", 5000)),)),)


@needs_clang
def test_a_local_initialised_from_a_constant_keeps_its_values_where_nothing_is_stored_over_them(tmp_path):
    source = """
struct cfg { int n; int m; long pad[3]; };
int a[100000];
__attribute__((noinline)) int scan(struct cfg *c) {
    int s = 0;
    for (int i = 0; i < c->n; i++) s += a[i];
    return s;
}
int run(int k) { struct cfg c = {5000, 7, {1, 2, 3}}; c.m = k; return scan(&c); }
"""
    fns = {fn.name: fn for f in count_sources([SourceFile(str(tmp_path / "cfg.c"), source)], AnalysisOptions())
           for fn in f.functions}
    # clang copies the initializer from a constant (memcpy); `c.m = k` overwrites the 7 it copied.
    (site,) = [s for s in fns["run"].call_sites if s.callee == "scan"]
    fields = {offset: value for offset, _, value in site.args[0][2]}
    assert fields[0] == ("const", 5000) and fields[4] == ("param", "k")
    assert fns["scan"].inferred_sizes == {"c->n": 5000.0}
