"""clang-19 → IR → loops/SCEV → counts, on inline C/C++ (real compiler, nothing executed)."""
import dataclasses
import shutil
from fractions import Fraction

import pytest

from ccls.advice import recommendation
from ccls.counting import count_function
from ccls.frontends import SourceFile
from ccls.frontends.c_family import analyze_with_clang
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")


def analyse(code: str, language: str = "c", path: str = "/tmp/ccls-test/unit.c", **options):
    result = analyze_with_clang(SourceFile(path, code), AnalysisOptions(**options), language, [])
    counted = {f.display_name: count_function(f, None, lambda s: 1000.0) for f in result.functions}
    return counted, result.errors


def test_symbolic_trip_count_and_runtime_division():
    counted, errors = analyse("long f(const long *a, long n, long m) {\n  long s = 0;\n"
                              "  for (long i = 0; i < n; i++)\n    s += a[i] % m;\n  return s;\n}\n")
    assert errors == []
    f = counted["f"]
    assert f.line == 1 and f.end_line == 6
    assert f.counts["int_div"].symbols == {"n"}
    assert f.counts["int_div"].evaluate({"n": 1000}) == pytest.approx(1000, rel=0.01)
    [site] = [s for s in f.sites if s.kind == "division-in-loop"]
    assert site.line == 4 and site.cause == "loop-invariant"  # m does not change inside the loop
    assert f.machine_instructions is not None and f.machine_instructions.degree() == 1


def test_constant_divisor_is_costed_as_the_multiply_it_becomes():
    counted, _ = analyse("long g(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i] % 7; return s; }")
    assert "int_div" not in counted["g"].counts
    assert not [s for s in counted["g"].sites if s.kind == "division-in-loop"]


def test_triangular_nest_is_quadratic_with_half_coefficient():
    counted, _ = analyse("void t(double *m, long n, double d) {\n for (long i = 0; i < n; i++)\n"
                         "  for (long j = 0; j < i; j++)\n   m[i*n+j] /= d;\n}\n")
    counts = counted["t"].counts
    # Scalar divisions plus vectorised ones (two doubles per 128-bit lane group).
    divisions = counts.get("fp_div", 0) + 2 * counts.get("fp_div@v128", 0) + 4 * counts.get("fp_div@v256", 0)
    assert divisions.degree() == 2
    assert divisions.evaluate({"n": 1000}) == pytest.approx(1000 * 999 / 2, rel=0.02)


def test_column_major_walk_is_a_miss_heavy_loop():
    counted, _ = analyse("double c(const double *m, long n) { double s = 0;\n for (long j = 0; j < n; j++)\n"
                         "  for (long i = 0; i < n; i++)\n   s += m[i*n + j];\n return s; }\n")
    sites = [s for s in counted["c"].sites if s.kind == "miss-heavy-loop"]
    assert sites and sites[0].cause == "strided" and "interchange" in recommendation("miss-heavy-loop", sites[0].cause)
    counts = {cls: poly.evaluate({"n": 1000}) for cls, poly in counted["c"].counts.items()}
    beyond = sum(v for cls, v in counts.items() if cls.startswith(("load.L3", "load.DRAM")))
    # 1000 rows × 64 B fit in L2, so the next column finds 7 of every 8 lines there again.
    assert counts["load.L2"] == pytest.approx(7 * beyond, rel=0.05)
    assert beyond == pytest.approx(1000 * 1000 / 8, rel=0.05)


def test_small_hot_array_stays_in_l1_and_pointer_chase_pays_full_latency():
    counted, _ = analyse("void h(const unsigned char *a, long *hist, long n) {\n for (long i = 0; i < n; i++)\n"
                         "  hist[a[i]]++;\n}\n"
                         "long p(const long *next, long steps) { long q = 0;\n for (long i = 0; i < steps; i++)\n"
                         "  q = next[q];\n return q; }\n")
    assert not [cls for cls in counted["h"].counts if cls.startswith(("load.L2", "load.L3", "load.DRAM", "store.L"))
                and not cls.startswith("store.L1")]
    chase = {cls: v for cls, v in counted["p"].counts.items() if cls.endswith(".chase")}
    assert sum(v.evaluate({"steps": 1000}) for v in chase.values()) == pytest.approx(1000, rel=0.01)  # unrolled copies too


def test_branch_on_loaded_data_is_charged_mispredictions_but_a_search_exit_is_not():
    counted, _ = analyse("void f(const int *a, int *o, long n) {\n long k = 0;\n for (long i = 0; i < n; i++)\n"
                         "  if (a[i] > 0)\n   o[k++] = a[i];\n}\n"
                         "long g(const long *a, long n, long key) {\n for (long i = 0; i < n; i++)\n"
                         "  if (a[i] == key) return i;\n return -1; }\n")
    assert counted["f"].counts["branch.mispredict"].evaluate({"n": 1000}) == pytest.approx(250, rel=0.01)
    assert any("mispredicted 25%" in a for a in counted["f"].assumptions)
    assert "branch.mispredict" not in counted["g"].counts


def test_branch_on_the_programs_own_zero_filled_arrays_is_not_charged_mispredictions():
    # `a` and `b` start empty: what the branch reads there the program stored itself; `t` is
    # a table written in the source and `p` the caller's data: those stay at the mean rate.
    counted, _ = analyse("float a[4096], b[4096]; int o[4096];\n"
                         "int t[8] = {3, -1, 4, -1, 5, -9, 2, 6};\n"
                         "void own(void) {\n for (int i = 0; i < 4096; i++)\n  if (a[i] > b[i])\n   o[i] = i;\n}\n"
                         "void table(long n) {\n for (long i = 0; i < n; i++)\n  if (t[i & 7] > 0)\n   o[i & 4095] = 1;\n}\n"
                         "void given(const float *p, long n) {\n for (long i = 0; i < n; i++)\n  if (p[i] > a[i])\n"
                         "   o[i] = 1;\n}\n")
    assert "branch.mispredict" not in counted["own"].counts
    assert any("program stored in its own arrays" in a for a in counted["own"].assumptions)
    assert counted["table"].counts["branch.mispredict"].evaluate({"n": 1000}) == pytest.approx(250, rel=0.01)
    assert counted["given"].counts["branch.mispredict"].evaluate({"n": 1000}) == pytest.approx(250, rel=0.01)


def test_a_count_the_program_keeps_itself_is_its_own_data_too():
    # `marked` starts at 3 and the program only resets or steps it (a Petri net's marking); a
    # seed the program mixes (`seed = seed * a + c`) is a pseudo-random stream: the mean rate.
    counted, _ = analyse("volatile int marked = 3;\nvolatile unsigned seed = 1;\nint hits;\n"
                         "void own(long n) {\n for (long i = 0; i < n; i++) {\n  marked = 3;\n"
                         "  if (marked >= 3) { marked -= 3; hits++; }\n }\n}\n"
                         "void mixed(long n) {\n for (long i = 0; i < n; i++) {\n  seed = seed * 1103515245u + 12345u;\n"
                         "  if (seed & 1) hits++;\n }\n}\n")
    assert "branch.mispredict" not in counted["own"].counts
    assert counted["mixed"].counts["branch.mispredict"].evaluate({"n": 1000}) == pytest.approx(250, rel=0.01)


def test_a_constant_element_of_the_programs_own_array_is_its_own_data_too():
    # `m[1]`, `m[2]` are addressed by a constant expression (`getelementptr (…, ptr @m, …)`),
    # not an instruction: still the zero-filled array the program stores into itself. The same
    # reads of a table written in the source stay at the mean rate.
    counted, _ = analyse("volatile long m[3];\nvolatile long t[3] = {1, 2, 3};\nint hits;\n"
                         "void own(long n) {\n for (long i = 0; i < n; i++) {\n  m[0] = i;\n"
                         "  if (m[1] == m[2]) hits++;\n }\n}\n"
                         "void table(long n) {\n for (long i = 0; i < n; i++)\n  if (t[1] == t[2]) hits++;\n}\n")
    assert "branch.mispredict" not in counted["own"].counts
    assert any("program stored in its own arrays" in a for a in counted["own"].assumptions)
    assert counted["table"].counts["branch.mispredict"].evaluate({"n": 1000}) == pytest.approx(250, rel=0.01)


def test_an_index_read_from_data_into_a_local_array_reaches_no_more_than_that_array():
    # cnt[idx[i]]: where the loaded index points is unknown, but C defines the access only
    # inside cnt's 512 longs (4 KiB), as for a global array; the streamed arrays have no bound.
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/local.c", (
        "float big[1 << 22];\nlong count(const int *idx, const long *init) {\n long cnt[512];\n"
        " for (int i = 0; i < 512; i++) cnt[i] = init[i];\n for (int i = 0; i < (1 << 18); i++)\n"
        "  cnt[idx[i]] += (long)big[i * 16];\n long s = 0;\n for (int i = 0; i < 512; i++) s += cnt[i];\n"
        " return s;\n}\n")), AnalysisOptions(), "c", [])
    (fn,) = result.functions
    indirect = [i.access for b in fn.blocks for i in b.instructions
                if i.access is not None and i.access.pattern == "indirect"]
    assert indirect and all(a.span_bytes == 512 * 8 for a in indirect)


def test_local_array_sizes_are_the_fixed_size_arrays_a_function_allocates():
    from ccls.readers.llvm.memory import local_array_sizes
    from ccls.readers.llvm.text import read_module
    ir = ("define void @f(i64 %n) {\n  %link = alloca [512 x i32], align 16\n  %grid = alloca [4 x [8 x double]], align 16\n"
          "  %one = alloca i32, align 4\n  %vla = alloca i32, i64 %n, align 16\n  ret void\n}\n")
    assert local_array_sizes(read_module(ir).functions[0].blocks) == {"link": 2048, "grid": 256}


def test_a_vector_loops_remainder_under_a_moving_start_runs_less_than_a_vector_step():
    # `i` starts at j + 1: the scalar remainder resumes after the vector loop (or, for the last
    # few j, runs the few iterations left), never half the row.
    counted, _ = analyse("float a[256], aa[256][256];\nvoid tri(void) {\n for (int j = 0; j < 256; j++)\n"
                         "  for (int i = j + 1; i < 256; i++)\n   a[i] -= aa[j][i] * a[j];\n}\n")
    trips = sorted(l.trip_count.iterations.constant_value() for l in counted["tri"].loops
                   if l.trip_count.iterations.constant_value() is not None)
    assert trips[0] < 8 and trips[-1] == 256  # the remainder's mean, the outer loop
    assert any("the start of a remainder loop" in a for a in counted["tri"].assumptions)


def test_program_filled_globals_are_the_writable_ones_that_start_empty():
    from ccls.readers.llvm.memory import program_filled_globals
    from ccls.readers.llvm.text import read_module

    def filled(ir: str) -> frozenset[str]:
        return program_filled_globals(ir, read_module(ir).functions)

    ir = ("@a = dso_local global [32000 x float] zeroinitializer, align 64\n"
          "@aa = dso_local local_unnamed_addr global [256 x [256 x float]] zeroinitializer, align 64\n"
          "@n = internal global i32 0, align 4\n"
          "@x = dso_local global double 0.000000e+00, align 8\n"
          "@k = internal global i32 7, align 4\n"
          "@t = internal constant [2 x i32] zeroinitializer, align 4\n"
          "@s = dso_local global { i32, [4 x i32] } { i32 1, [4 x i32] zeroinitializer }, align 4\n"
          "@e = external global [8 x float], align 4\n")
    # zero-filled scalars (a state machine's flags) too; one with a value of its own is not
    assert filled(ir) == {"a", "aa", "n", "x"}
    # unless the program keeps it: only set to constants or stepped by one (a Petri net's marking
    # count, `P1_is_marked = 3; … P1_is_marked -= 3;`); a seed mixed by a multiply is not
    kept = ("@seed = internal global i32 1, align 4\n"
            "define void @step() {\n  %m = load volatile i32, ptr @k, align 4\n  %sub = add nsw i32 %m, -3\n"
            "  store volatile i32 %sub, ptr @k, align 4\n  store i32 3, ptr @k, align 4\n"
            "  %s = load i32, ptr @seed, align 4\n  %mul = mul i32 %s, 1103515245\n  %add = add i32 %mul, 12345\n"
            "  store i32 %add, ptr @seed, align 4\n  ret void\n}\n")
    assert filled(ir + kept) == {"a", "aa", "n", "x", "k"}
    read = "define void @r() {\n  %1 = call i32 (ptr, ...) @__isoc99_scanf(ptr @fmt, ptr noundef nonnull @n)\n  ret void\n}\n"
    assert filled(ir + read) == {"a", "aa", "x"}  # read from input
    # read from a file, or copied from the caller's memory: input; copied from another array: not
    calls = ("@buf = internal global [64 x i8] zeroinitializer, align 16\n"
             "@copy = internal global [64 x i8] zeroinitializer, align 16\n"
             "define void @load(ptr %f, ptr %p) {\n"
             "  %1 = call i64 @fread(ptr noundef nonnull @buf, i64 1, i64 64, ptr %f)\n"
             "  call void @llvm.memcpy.p0.p0.i64(ptr align 1 getelementptr inbounds (i8, ptr @a, i64 4), ptr %p, "
             "i64 8, i1 false)\n"
             "  call void @llvm.memcpy.p0.p0.i64(ptr align 1 @copy, ptr @aa, i64 8, i1 false)\n  ret void\n}\n")
    assert filled(ir + calls) == {"aa", "copy", "n", "x"}
    # a call's result stored there (`a[i] = rand() % 26`), or a table of the source copied in:
    # input; a ramp of the index: the program's own
    stores = ("@r = internal global [64 x i8] zeroinitializer, align 16\n"
              "@ramp = internal global [64 x i8] zeroinitializer, align 16\n"
              "@from_table = internal global [64 x i8] zeroinitializer, align 16\n"
              "@table = internal constant [64 x i8] zeroinitializer, align 16\n"
              "define void @fill(i64 %i) {\n"
              "  %x = call i32 @rand()\n  %m = srem i32 %x, 26\n  %v = trunc i32 %m to i8\n"
              "  %p = getelementptr inbounds [64 x i8], ptr @r, i64 0, i64 %i\n  store i8 %v, ptr %p, align 1\n"
              "  %w = trunc i64 %i to i8\n"
              "  %q = getelementptr inbounds [64 x i8], ptr @ramp, i64 0, i64 %i\n  store i8 %w, ptr %q, align 1\n"
              "  call void @llvm.memcpy.p0.p0.i64(ptr align 1 @from_table, ptr @table, i64 8, i1 false)\n"
              "  %f = sitofp i64 %i to float\n  %y = call float @sinf(float %f)\n"
              "  %s = getelementptr inbounds [64 x float], ptr @sines, i64 0, i64 %i\n  store float %y, ptr %s, align 4\n"
              "  ret void\n}\n")
    # sinf of the index: a math function of the program's own values stays the program's own
    stores = "@sines = internal global [64 x float] zeroinitializer, align 16\n" + stores
    assert filled(stores) == {"ramp", "sines"}


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="llvm-mca-19 is not installed")
def test_machine_cycles_see_the_dependency_chain_a_class_sum_cannot():
    # Same instructions per element; the first chains every add on the previous one.
    counted, _ = analyse("double chain(const double *a, long n) { double s = 0;\n"
                         " for (long i = 0; i < n; i++) s = s * 0.5 + a[i];\n return s; }\n"
                         "double spread(const double *a, double *o, long n) {\n"
                         " for (long i = 0; i < n; i++) o[i] = a[i] * 0.5 + 1.0;\n return 0; }\n")
    chain = counted["chain"].machine_cycles.evaluate({"n": 1000})
    spread = counted["spread"].machine_cycles.evaluate({"n": 1000})
    assert chain > 3 * spread  # a mul+add latency chain per element vs throughput-bound vector code


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="llvm-mca-19 is not installed")
def test_block_cycles_are_simulated_once_per_distinct_block(monkeypatch):
    from ccls.frontends import machine_cycles
    memo, runs = machine_cycles.CycleMemo(), []
    real = machine_cycles.block_cycles

    def counting(blocks, *args):
        runs.append(len(blocks))
        return real(blocks, *args)
    monkeypatch.setattr(machine_cycles, "block_cycles", counting)
    chain, spread = ("addq %rax, %rbx", "imulq %rbx, %rbx"), ("addq %rax, %rbx", "addq %rcx, %rdx")
    first = memo.cycles({chain, spread}, AnalysisOptions())
    assert runs == [2] and first[chain].cycles > first[spread].cycles > 0
    assert first[chain].throughput < first[chain].cycles  # the multiply chain binds, not the ports
    assert memo.cycles({chain}, AnalysisOptions()) == {chain: first[chain]} and runs == [2]  # no new run
    monkeypatch.setattr(machine_cycles, "block_cycles", lambda blocks, *a: runs.append(len(blocks)) or [None] * len(blocks))
    bad = ("not an instruction",)
    assert memo.cycles({bad}, AnalysisOptions()) == {bad: None}
    memo.cycles({bad}, AnalysisOptions())
    assert runs == [2, 1, 1]  # a failure is not remembered: tried again


def test_entries_of_an_inner_loop_are_independent_unless_a_value_flows_between_them():
    horner = ("void h(const double *c, long deg, const double *x, double *y, long n) {\n"
              " for (long i = 0; i < n; i++) { double p = c[0];\n"
              "  for (long k = 1; k <= deg; k++) p = p * x[i] + c[k];\n  y[i] = p; } }\n")
    chained = ("unsigned g(const unsigned char *s, long n, long m) { unsigned x = 0;\n"
               " for (long i = 0; i < n; i++)\n  for (long k = 0; k < m; k++) x = x * 31 + s[i * m + k];\n"
               " return x; }\n")
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/e.c", horner + chained), AnalysisOptions(), "c", [])
    inner = {f.name: [l for l in f.loops.values() if l.parent is not None] for f in result.functions}
    assert inner["h"] and all(l.independent_entries for l in inner["h"])
    assert inner["g"] and not any(l.independent_entries for l in inner["g"])
    assert not any(l.independent_entries for f in result.functions for l in f.loops.values() if l.parent is None)


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="llvm-mca-19 is not installed")
def test_overlapping_entries_cut_a_short_inner_chain_to_its_throughput():
    from ccls.tables import load_tables
    code = ("void h(const double *c, long deg, const double *x, double *y, long n) {\n"
            " for (long i = 0; i < n; i++) { double p = c[0];\n"
            "  for (long k = 1; k <= deg; k++) p = p * x[i] + c[k];\n  y[i] = p; } }\n")
    [fn] = analyze_with_clang(SourceFile("/tmp/ccls-test/h.c", code), AnalysisOptions(), "c", []).functions
    window = load_tables().cost["x86_64"].cache
    values = {"deg": 16.0, "n": 1000.0}
    alone = count_function(fn, dataclasses.replace(window, reorder_buffer=None), values.__getitem__)
    overlapped = count_function(fn, window, values.__getitem__)
    assert overlapped.machine_cycles.evaluate(values) < 0.5 * alone.machine_cycles.evaluate(values)
    assert any("out-of-order window" in a for a in overlapped.assumptions)
    long_rows = {"deg": 2000.0, "n": 1000.0}  # one entry no longer fits the window: no overlap
    assert count_function(fn, window, long_rows.__getitem__).machine_cycles.evaluate(long_rows) == \
        pytest.approx(alone.machine_cycles.evaluate(long_rows), rel=0.05)


def test_the_slow_half_of_the_division_bypass_is_assumed_not_taken():
    counted, _ = analyse("long f(const long *a, const long *d, long n) { long s = 0;\n"
                         " for (long i = 0; i < n; i++) s += a[i] / d[i];\n return s; }\n")
    assert any("fit in 32 bits" in a for a in counted["f"].assumptions)


def _tiers(code: str, name: str, values: dict[str, float], **cache_changes) -> dict[str, float]:
    """Executed loads and stores per memory tier (vector widths folded), on the x86_64 table's caches."""
    from ccls.tables import load_tables
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/m.c", code), AnalysisOptions(), "c", [])
    [fn] = [f for f in result.functions if f.display_name == name]
    cache = dataclasses.replace(load_tables().cost["x86_64"].cache, **cache_changes)
    counted = count_function(fn, cache, values.__getitem__)
    tiers: dict[str, float] = {}
    for cls, poly in counted.counts.items():
        if cls.startswith(("load.", "store.")):
            key = cls.split("@")[0]
            tiers[key] = tiers.get(key, 0.0) + poly.evaluate(values)
    return tiers, counted.assumptions


def test_matmul_reads_b_again_from_l2_and_keeps_c_in_l1():
    code = ("void mm(const double *A, const double *B, double *C, long n) {\n"
            " for (long i = 0; i < n; i++)\n  for (long k = 0; k < n; k++) { double a = A[i * n + k];\n"
            "   for (long j = 0; j < n; j++) C[i * n + j] += a * B[k * n + j]; } }\n")
    tiers, notes = _tiers(code, "mm", {"n": 200.0})  # 3 x 320 KB: B fits the 1 MB L2, a row of C fits L1
    assert tiers.get("load.L3", 0) + tiers.get("store.L3", 0) < 0.01 * tiers["load.L1"]  # only first touches
    assert tiers["load.L2"] > 0 and not tiers.get("store.L2")
    assert any("reread by every iteration of loop" in a and "found in L2" in a for a in notes)
    tiers, _ = _tiers(code, "mm", {"n": 1000.0})  # B is 8 MB: no longer in L2
    assert not tiers.get("load.L2")


def test_a_stencils_trailing_rows_hit_what_the_leading_row_brought_in():
    code = ("void st(const double *in, double *out, long n) {\n for (long i = 1; i < n - 1; i++)\n"
            "  for (long j = 1; j < n - 1; j++)\n   out[i * n + j] = in[(i - 1) * n + j] + in[(i + 1) * n + j]"
            " + in[i * n + j - 1] + in[i * n + j + 1]; }\n")
    tiers, notes = _tiers(code, "st", {"n": 1500.0})  # 18 MB per array: a stream from DRAM
    far = sum(v for k, v in tiers.items() if k.startswith("load.") and k not in ("load.L1", "load.L2"))
    near = tiers.get("load.L2", 0)
    assert near > 0 and far > 0 and near >= 0.9 * far  # one row streams in, the row two behind hits L2
    assert any("leading access of the same stream" in a for a in notes)
    # A core whose streamed lines last 1 KiB of other traffic (the Zen 4 guest, measured): rows i
    # and i-1 stream in again, three streams; in[j-1] still finds what in[j+1] brought, in L1.
    short, notes = _tiers(code, "st", {"n": 1500.0}, stream_reuse_bytes=1024)
    assert short.get("load.stream", 0) == pytest.approx(3 * far, rel=0.01) and not short.get("load.L2")
    assert short["load.L1"] > 0 and any("streamed again" in a for a in notes)


def test_unrolled_copies_of_a_stream_bring_each_line_in_once():
    code = "long sum(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i]; return s; }\n"
    tiers, notes = _tiers(code, "sum", {"n": 8e6})  # 64 MB: beyond every cache, read once as a stream
    lines = 8e6 * 8 / 64
    far = sum(v for k, v in tiers.items() if k.startswith("load.") and k != "load.L1")
    assert far == pytest.approx(lines, rel=0.01)
    assert any("working set of 61 MiB" in a for a in notes)  # the unrolled copies share one span


def test_copies_of_a_wide_stride_touch_lines_of_their_own():
    # Unrolled, a[16i] and a[16(i+1)] are one stream at offsets 128 bytes apart: no line is shared.
    code = "double s16(const double *a, long n) { double s = 0; for (long i = 0; i < n; i += 16) s += a[i];" \
           " return s; }\n"
    tiers, notes = _tiers(code, "s16", {"n": 16e6})
    far = sum(v for k, v in tiers.items() if k.startswith("load.") and k != "load.L1")
    assert far == pytest.approx(16e6 / 16, rel=0.01)
    assert not any("leading access of the same stream" in a for a in notes)
    # two lines apart, each line is a request of its own: strided misses, not a stream
    assert tiers.get("load.DRAM.strided", 0) == pytest.approx(far) and "load.stream" not in tiers


def test_strided_misses_overlap_compute_and_a_pointer_chase_does_not():
    from ccls.tables import load_tables

    code = ("double s16(const double *a, long n) { double s = 0; for (long i = 0; i < n; i += 16) s += a[i];"
            " return s; }\n"
            "long walk(const long *next, long steps) { long p = 0; for (long i = 0; i < steps; i++) p = next[p];"
            " return p; }\n")
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/o.c", code), AnalysisOptions(), "c", [])
    cache = load_tables().cost["x86_64-zen4"].cache
    counted = {f.display_name: count_function(f, cache, {"n": 16e6, "steps": 1e6}.__getitem__)
               for f in result.functions}
    [overlap] = counted["s16"].overlaps
    assert set(overlap.misses) == {"load.DRAM.strided"}
    assert "load.DRAM.chase" in counted["walk"].counts and not counted["walk"].overlaps


def test_a_streaming_loop_records_its_compute_and_transfer_for_overlap():
    from ccls.engine import ReportSettings, report
    from ccls.tables import load_tables
    code = "double dot(const double *x, const double *y, long n) {\n  double s = 0;\n" \
           "  for (long i = 0; i < n; i++)\n    s += x[i] * y[i];\n  return s;\n}\n"
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/o.c", code), AnalysisOptions(), "c", [])
    [fn] = result.functions
    values = {"n": 4e6}  # 64 MB in two streams
    tables = load_tables()
    counted = count_function(fn, tables.cost["x86_64"].cache, values.__getitem__)
    [overlap] = [o for o in counted.overlaps if o.misses]
    streamed = sum(p.evaluate(values) for p in overlap.misses.values())
    assert set(overlap.misses) == {"load.stream"} and streamed == pytest.approx(2 * 4e6 * 8 / 64, rel=0.01)
    # the loop's own cycles: the whole function's but for the code around the loop
    assert 0.99 * counted.machine_cycles.evaluate(values) < overlap.cycles.evaluate(values) \
        <= counted.machine_cycles.evaluate(values)
    # a dependent FP add per element (3-4 cycles) outlasts two lines per 8 elements from DRAM
    [costed] = report([counted], tables, ReportSettings(), AnalysisOptions(parameter_values=(("n", 4e6),)))
    [note] = [a for a in costed.assumptions if "bound;" in a]
    assert note.startswith(f"loop %{overlap.loop} (line 4): compute-bound; its memory accesses complete while it computes")
    assert costed.metrics.cu == pytest.approx(overlap.cycles.evaluate(values), rel=0.01)


def test_lines_streamed_from_l2_overlap_compute_as_from_dram():
    """A Zen core's L2-to-L1 transfers overlap its work like DRAM's (ECM): a dot product over
    two 64 KiB arrays (past L1, within L2) costs its dependent add chain, not chain + lines."""
    from ccls.engine import ReportSettings, report
    from ccls.tables import load_tables
    code = "double dot(const double *x, const double *y, long n) {\n  double s = 0;\n" \
           "  for (long i = 0; i < n; i++)\n    s += x[i] * y[i];\n  return s;\n}\n"
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/o.c", code), AnalysisOptions(), "c", [])
    [fn] = result.functions
    values = {"n": 8192.0}  # 128 KiB in two arrays: L2 on the Zen 4 table (32 KiB L1, 1 MiB L2)
    tables = load_tables()
    counted = count_function(fn, tables.cost["x86_64"].cache, values.__getitem__)
    [overlap] = [o for o in counted.overlaps if o.misses]
    assert set(overlap.misses) == {"load.L2"}
    [costed] = report([counted], tables, ReportSettings(), AnalysisOptions(parameter_values=(("n", 8192.0),)))
    [note] = [a for a in costed.assumptions if "bound;" in a]
    assert note.startswith(f"loop %{overlap.loop} (line 4): compute-bound")
    assert costed.metrics.cu == pytest.approx(counted.machine_cycles.evaluate(values), rel=0.01)


def test_measured_divider_replaces_llvm_mcas_in_block_cycles():
    from ccls.tables import load_tables
    code = "long dm(const long *a, const long *d, long n) { long s = 0;\n" \
           " for (long i = 0; i < n; i++) s += a[i] / d[i] + a[i] % d[i]; return s; }\n"
    tables = load_tables()
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/d.c", code), AnalysisOptions(arch="x86_64-zen3"), "c", [])
    [fn] = result.functions
    assert any(b.machine_divides[0] for b in fn.blocks)  # the 32-bit half of the bypass: divl
    at = {"n": 1e6}.__getitem__
    measured = count_function(fn, tables.cost["x86_64-zen3"].cache, at)
    model_only = count_function(fn, dataclasses.replace(tables.cost["x86_64-zen3"].cache, divider=None), at)
    per_iteration = measured.machine_cycles.evaluate({"n": 1e6}) / 1e6
    assert per_iteration < 0.7 * model_only.machine_cycles.evaluate({"n": 1e6}) / 1e6
    assert per_iteration >= tables.cost["x86_64-zen3"].cache.divider.cycles[0]  # one divl per iteration
    assert any("measured divider throughput" in a for a in measured.assumptions)


def test_unknown_trip_count_uses_the_default_and_says_so():
    counted, _ = analyse("long w(const int *a, int k) { long i = 0; while (a[i] != k) i++; return i; }",
                         default_trip_count=37)
    f = counted["w"]
    assert any("assuming 37" in a for a in f.assumptions)
    assert [l.trip_count.kind for l in f.loops] == ["unknown"]


FIND = ("long find(const long *a, long n, long key) {\n  for (long i = 0; i < n; i++)\n"
        "    if (a[i] == key)\n      return i;\n  return -1;\n}\n")


def test_early_exit_loop_takes_the_mean_exit_within_the_scalar_evolution_bound():
    counted, _ = analyse(FIND)
    [loop] = counted["find"].loops
    n = Polynomial.symbol("n")
    assert loop.trip_count.kind == "expected" and loop.trip_count.iterations == (n + 1) * Fraction(1, 2)
    assert any("mean 0.5·n + 0.5 of an exit equally likely" in a and "worst case n" in a
               for a in counted["find"].assumptions)


def test_exits_that_only_fail_are_not_early_exits():
    counted, _ = analyse(
        "#include <stdlib.h>\n#include <stdio.h>\n"
        "long checked(const long *a, long n) { long s = 0;\n for (long i = 0; i < n; i++) {\n"
        "  if (a[i] < 0) { fprintf(stderr, \"bad\\n\"); exit(1); }\n  s += a[i]; }\n return s; }\n"
        "long search_or_abort(const long *a, long n, long key) {\n for (long i = 0; i < n; i++) {\n"
        "  if (a[i] < 0) abort();\n  if (a[i] == key) return i; }\n return -1; }\n")
    [checked] = counted["checked"].loops
    assert (checked.trip_count.kind, checked.trip_count.iterations) == ("bounded", Polynomial.symbol("n"))
    assert any("reach only code that does not return" in a for a in counted["checked"].assumptions)
    [search] = counted["search_or_abort"].loops  # the return is an early exit whatever abort() does
    assert search.trip_count.kind == "expected"


def test_an_assertion_that_hangs_is_not_an_early_exit():
    # embedded code fails an assertion with `while (1);`: the exit into that hang never returns,
    # so the loop runs to its count, not to a search's mean
    counted, _ = analyse(
        "void assert_or_hang(int ok) { if (!ok) while (1); }\n"
        "long fill(long *q, long n, long cap) { long used = 0;\n for (long i = 0; i < n; i++) {\n"
        "  assert_or_hang(used < cap);\n  q[used++] = i; }\n return used; }\n")
    kinds = sorted(loop.trip_count.kind for loop in counted["fill"].loops)
    assert kinds == ["bounded", "constant", "symbolic"]  # the hang itself 0; LLVM peels the rest in two
    assert any("reach only code that does not return" in a for a in counted["fill"].assumptions)


def test_early_exit_loop_at_its_worst_case_on_request():
    counted, _ = analyse(FIND, early_exit="worst")
    [loop] = counted["find"].loops
    assert loop.trip_count.kind == "bounded" and loop.trip_count.iterations == Polynomial.symbol("n")
    assert any("upper bound n (the worst case)" in a for a in counted["find"].assumptions)


def test_halving_loop_runs_log2_of_its_start_times():
    counted, _ = analyse("long h(long n) { long s = 0; long x = n;\n while (x > 1) { x >>= 1; s += x & 3; }\n return s; }\n")
    f = counted["h"]
    [loop] = f.loops
    assert loop.trip_count.iterations == Polynomial.symbol("log2(n)")
    assert AnalysisOptions(parameter_values=(("n", 1024.0),)).parameter_value("log2(n)") == 10
    assert f.machine_instructions.big_o() == "O(log2(n))"


def test_vectorised_loop_remainder_starts_after_the_vector_loop():
    # i-k-j matmul: the vectoriser's scalar fallback and remainder must not count as n more
    # iterations; about n³/VF vector iterations dominate.
    counted, _ = analyse("void mm(const double *A, const double *B, double *C, long n) {\n"
                         " for (long i = 0; i < n; i++)\n  for (long k = 0; k < n; k++)\n"
                         "   for (long j = 0; j < n; j++)\n    C[i*n+j] += A[i*n+k] * B[k*n+j];\n}\n")
    f = counted["mm"]
    assert not any(l.trip_count.kind == "unknown" for l in f.loops)
    executed = f.machine_instructions.evaluate({"n": 200})
    assert 3.0 * 200**3 < executed < 6.0 * 200**3  # callgrind measures 3.34·n³ at n = 200


def test_sqrt_fast_path_split_by_codegen_keeps_its_loop_count():
    counted, _ = analyse("#include <math.h>\nvoid r(const double *a, double *o, long n) {\n"
                         " for (long i = 0; i < n; i++)\n  o[i] = sqrt(a[i]);\n}\n")
    f = counted["r"]
    assert f.machine_instructions.evaluate({"n": 1000}) > 5 * 1000  # load, compare, sqrt, store, loop
    assert any("errno path" in a for a in f.assumptions)


def test_cpp_inline_members_and_templates_are_analysed_and_demangled():
    code = ("namespace ns { template <typename T> T dot(const T *x, const T *y, long n) { T s{}; "
            "for (long i = 0; i < n; ++i) s += x[i] * y[i]; return s; }\n"
            "struct M { long n; void twice(double *v) const { for (long i = 0; i < n; ++i) v[i] *= 2; } };\n"
            "double use(const double *x, long n) { return dot(x, x, n); } }\n")
    counted, errors = analyse(code, "cpp", "/tmp/ccls-test/unit.cpp")
    assert errors == []
    assert {"ns::dot<double>", "ns::M::twice", "ns::use"} <= set(counted)


def test_compile_error_names_line_and_compiler_message():
    counted, errors = analyse("int f(void) {\n  return undeclared_name;\n}\n")
    assert counted == {}
    [error] = errors
    assert error.line == 2 and "undeclared_name" in error.message and error.file.endswith("unit.c")


def test_compile_timeout_is_an_error_not_a_hang():
    counted, errors = analyse("int f(void) { return 0; }", compile_timeout_s=0.001)
    assert counted == {} and "timed out" in errors[0].message


def test_a_bound_read_from_memory_is_named_as_the_source_names_it():
    code = ("struct Grid { long rows; long cols; double *cells; };\n"
            "long N;\n"
            "double total(const struct Grid *g) {\n"
            "  double s = 0;\n"
            "  for (long r = 0; r < g->rows; r++)\n"
            "    for (long c = 0; c < g->cols; c++)\n"
            "      s += g->cells[r * g->cols + c];\n"
            "  return s;\n"
            "}\n"
            "double sum_global(const double *a) { double s = 0; for (long i = 0; i < N; i++) s += a[i]; return s; }\n")
    counted, errors = analyse(code)
    assert errors == []
    grid = counted["total"]
    trips = sorted(str(loop.trip_count.iterations) for loop in grid.loops if loop.trip_count.kind == "data")
    assert "g->rows" in trips and any("g->cols" in t for t in trips)
    assert grid.machine_instructions.symbols == {"g->rows", "g->cols"}
    assert any("kept symbolic as `g->rows`" in a for a in grid.assumptions)
    glob = counted["sum_global"]
    assert {s for loop in glob.loops for s in loop.trip_count.iterations.symbols} == {"N"}
    assert not any("assuming 100" in a for a in grid.assumptions + glob.assumptions)


def test_a_bound_read_from_memory_that_the_source_does_not_name_is_named_from_the_ir():
    # issue 17 §2: `i + 1 < v->n` names no bound in the loop's header; the IR reads it at offset
    # 0 of v (no member name survives there), so it is `*v`, not an assumed 100
    code = ("struct V { long n; };\n"
            "double f(const struct V *v, const double *a) {\n"
            "  double s = 0; for (long i = 0; i + 1 < v->n; i++) s += a[i]; return s; }\n")
    counted, _ = analyse(code)
    assert not any("assuming 100" in a for a in counted["f"].assumptions)
    assert {s for loop in counted["f"].loops for s in loop.trip_count.iterations.symbols} == {"*v"}


def test_a_triangular_nest_from_i_to_n_is_quadratic():
    # for (j = i; j < n; j++): ScalarEvolution bounds the inner loop by smax(n, i + 1) and starts
    # its vector remainder at either i (short rows) or where the vector loop stopped.
    code = "long tri(long n, const long *a) { long t = 0;\n for (long i = 0; i < n; i++)\n" \
           "  for (long j = i; j < n; j++) t += a[j];\n return t; }\n"
    counted, errors = analyse(code)
    assert errors == []
    f = counted["tri"]
    n = 3000
    elements = sum(poly.evaluate({"n": n}) * (2 if cls.endswith("@v128") else 1)
                   for cls, poly in f.counts.items() if cls.startswith("load"))
    assert elements == pytest.approx(n * (n + 1) / 2, rel=0.01)
    assert f.machine_instructions.degree() == 2
    assert any("smax of a bound taken as its symbolic operand n" in a for a in f.assumptions)


@pytest.mark.parametrize("code, name, per_log2", [
    ("long up(long n, const long *a) { long t = 0; for (long i = 1; i < n; i *= 2) t += a[i]; return t; }\n",
     "up", 1.0),
    ("long digits(long n) { long d = 0; while (n > 0) { n /= 10; d++; } return d; }\n", "digits", 0.301),
])
def test_loops_that_multiply_or_divide_their_index_run_logarithmically(code, name, per_log2):
    counted, errors = analyse(code)
    assert errors == []
    [loop] = counted[name].loops
    assert loop.trip_count.iterations.symbols == {"log2(n)"}
    assert loop.trip_count.iterations.evaluate({"log2(n)": 10.0}) == pytest.approx(10 * per_log2, rel=0.01)
    assert not any("assuming 100" in a for a in counted[name].assumptions)


def test_step_two_and_tiled_loops_keep_their_sizes():
    code = ("long step2(long n, const long *a) { long t = 0; for (long i = 0; i < n; i += 2) t += a[i] ^ i; return t; }\n"
            "long tiled(long n, const long *a) { long t = 0;\n"
            "  for (long ii = 0; ii < n; ii += 64) for (long i = ii; i < ii + 64 && i < n; i++) t += a[i] ^ i;\n"
            "  return t; }\n")
    counted, errors = analyse(code)
    assert errors == []
    for name in ("step2", "tiled"):
        f = counted[name]
        assert f.machine_instructions.degree() == 1, name  # linear in n: not a constant, not n²
        assert not any("assuming 100" in a for a in f.assumptions), name
    elements = sum(poly.evaluate({"n": 64000}) * (2 if cls.endswith("@v128") else 1)
                   for cls, poly in counted["tiled"].counts.items() if cls.startswith("load"))
    assert elements == pytest.approx(64000, rel=0.05)  # full 64-element tiles (the bound's min is the tile)


def test_a_pointer_bounded_loop_is_symbolic_in_its_pointers():
    # while (p < end): ScalarEvolution guards the count with max(end, p + 8); end is the bound.
    counted, errors = analyse("long walk(const long *p, const long *end) { long s = 0; while (p < end) s += *p++; return s; }\n")
    assert errors == []
    f = counted["walk"]
    elements = sum(poly.evaluate({"p": 0.0, "end": 8000.0}) * (2 if cls.endswith("@v128") else 1)
                   for cls, poly in f.counts.items() if cls.startswith("load"))
    assert elements == pytest.approx(1000, rel=0.01)  # 8000 bytes of longs
    assert any("symbolic operand end" in a for a in f.assumptions)


def test_code_inlined_from_a_header_counts_at_its_call_site():
    # operator[] of std::vector is inlined from <vector>: its debug lines are the header's (~1100),
    # the analysed function's own line is where it was called.
    code = ("#include <vector>\n#include <cstddef>\n"
            "struct Grid { std::size_t rows, cols; std::vector<double> data;\n"
            "  double sum() const;\n};\n"
            "double Grid::sum() const {\n"
            "  double s = 0;\n"
            "  for (std::size_t r = 0; r < rows; r++)\n"
            "    for (std::size_t c = 0; c < cols; c++)\n"
            "      s += data[r * cols + c];\n"
            "  return s;\n"
            "}\n")
    counted, errors = analyse(code, "cpp", "/tmp/ccls-test/grid.cpp")
    assert errors == []
    f = counted["Grid::sum"]
    assert f.line == 6 and f.end_line == 12
    assert set(f.line_counts) <= set(range(6, 13)) and {loop.line for loop in f.loops} <= set(range(6, 13))
    assert f.machine_instructions.symbols == {"rows", "cols"}  # both fields, named as the source names them


@pytest.mark.parametrize("loop", ["for (std::size_t i = 0; i < v.size(); i++)\n    s += v[i] ^ 3;",
                                  "for (long x : v)\n    s += x ^ 3;",
                                  # standard algorithms: their inlined loops, named from the call's range
                                  "s = std::accumulate(v.begin(), v.end(), 0L, [](long a, long x) { return a + (x ^ 3); });",
                                  "std::for_each(std::begin(v), std::end(v), [&](long x) { s += x ^ 3; });"])
def test_a_loop_over_a_vector_is_symbolic_in_its_size(loop):
    code = ("#include <vector>\n#include <cstddef>\n#include <numeric>\n#include <algorithm>\n#include <iterator>\n"
            f"long xor_all(const std::vector<long> &v) {{\n  long s = 0;\n  {loop}\n  return s;\n}}\n")
    counted, errors = analyse(code, "cpp", "/tmp/ccls-test/vec.cpp")
    assert errors == []
    f = counted["xor_all"]
    assert f.machine_instructions.symbols == {"v.size()"}
    elements = sum(poly.evaluate({"v.size()": 1000.0}) * (2 if cls.endswith("@v128") else 1)
                   for cls, poly in f.counts.items() if cls.startswith("load"))
    assert elements == pytest.approx(1000, rel=0.01)


@pytest.mark.parametrize("demangled, shown", [
    ("void ns::f<int>(int, char)", "ns::f<int>"),
    ("std::vector<int, std::allocator<int>> make<int>(unsigned long)", "make<int>"),
    ("xor_all(std::vector<long, std::allocator<long>> const&)::$_0::operator()(long, long) const",
     "xor_all::$_0::operator()"),  # a lambda: its enclosing function's parameters go, the scope stays
    ("f(int)::{lambda(int)#1}::operator()(int) const", "f::{lambda(int)#1}::operator()"),
    ("bool operator<(A const&, A const&)", "operator<"),
    ("std::ostream& operator<<(std::ostream&, P const&)", "operator<<"),
    ("P::operator->() const", "P::operator->"),
    ("operator new(unsigned long)", "operator new"),
    ("ns::C::~C()", "ns::C::~C"),
])
def test_demangled_names_are_shown_without_parameters(demangled, shown):
    from ccls.frontends.c_family import without_parameters
    assert without_parameters(demangled) == shown


def test_an_access_inside_a_global_array_reaches_no_more_than_the_array():
    # The stride is in an unknown argument (evaluated at 1000: 4000 bytes apart, 32 MB of span);
    # the array is 128 KiB, so its lines come from L2 at most, never from DRAM.
    counted, _ = analyse("float g[32000];\nfloat f(long inc) { float s = 0;\n"
                         " for (long i = 0; i < 8000; i++) s += g[i * inc];\n return s; }\n")
    loads = {cls for cls in counted["f"].counts if cls.startswith("load.")}
    assert loads and not [cls for cls in loads if "DRAM" in cls or "L3" in cls]


def test_a_pointer_picked_from_a_table_each_iteration_is_a_gather_not_a_chase():
    counted, _ = analyse("float a[1000], b[1000], c[1000], d[1000], e[1000]; int idx[1000];\n"
                         "void f(void) { for (int i = 0; i < 1000; i++) { float *p;\n"
                         "  switch (idx[i]) { case 1: p = b; break; case 2: p = c; break; case 3: p = d; break;"
                         " default: p = e; }\n  a[i] += p[i] * p[i]; } }\n"
                         "struct node { struct node *next; long v; };\n"
                         "long walk(struct node *n, long steps) { long s = 0;\n"
                         " for (long i = 0; i < steps && n; i++) { s += n->v; n = n->next; }\n return s; }\n")
    assert not [cls for cls in counted["f"].counts if cls.endswith(".chase")]
    assert [cls for cls in counted["walk"].counts if cls.endswith(".chase")]  # p = p->next still is


def test_block_contexts_are_the_blocks_that_always_run_before_in_the_same_iteration():
    from ccls.readers.llvm.machine import _contexts
    from ccls.readers.scev import FunctionAnalyses, LoopRecord

    loops = FunctionAnalyses(loops={"body": LoopRecord("body", 1, ["body", "test", "then", "latch"], None)})
    preds = {"body": ["entry", "latch"], "test": ["body"], "then": ["test"], "latch": ["test", "then"],
             "exit": ["latch"]}
    # The header's live-ins come round the loop: it has none. The latch, reached from the test or
    # its arm, runs after the header and the test on every path.
    assert _contexts(preds, loops) == {"test": ("body",), "then": ("body", "test"), "latch": ("body", "test")}


def test_a_block_context_keeps_the_last_lines_of_the_blocks_before_it():
    from ccls.readers.llvm_ir import MAX_CONTEXT_LINES, _context_code

    machine = {f"b{k}": [f"op{k}.{line}" for line in range(k)] for k in range(12)}  # b0 has no code
    blocks = tuple(machine)
    joined = tuple(line for b in blocks for line in machine[b])
    assert len(joined) > MAX_CONTEXT_LINES
    assert _context_code(machine, blocks) == joined[-MAX_CONTEXT_LINES:]
    assert _context_code(machine, ("b0", "b3", "b2")) == ("op3.0", "op3.1", "op3.2", "op2.0", "op2.1")
    assert _context_code(machine, ("b2", "gone")) == () == _context_code(machine, ())


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="llvm-mca-19 is not installed")
def test_the_blocks_of_a_branchy_body_overlap_as_one_piece():
    # Two tests on loaded data and the arms they guard: one by one llvm-mca charges each small
    # block a cycle or more (≈5 an iteration); as one body they share cycles.
    source = ("float a[32000], b[32000], c[32000], d[32000], e[32000];\n"
              "void f(void) { for (int i = 0; i < 31999; i++) {\n"
              "  if (a[i] >= 0.f) continue;\n  if (b[i] < 0.f) a[i] += c[i] * d[i];\n"
              "  b[i + 1] = c[i] + d[i] * e[i]; } }\n")
    counted, _ = analyse(source, flags_override=["-O3"])
    per_iteration = counted["f"].machine_cycles.evaluate({}) / 31999
    assert per_iteration < 4
    assert any("simulated as one body" in note for note in counted["f"].assumptions)


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="llvm-mca-19 is not installed")
def test_a_conditional_block_is_simulated_after_the_block_that_defines_its_inputs():
    # Alone, llvm-mca repeats `if.then` as a loop and chains each `s` on the last (≈13 cycles a
    # run); after the header that loads a[i] and b[i], nothing carries over (≈2).
    counted, _ = analyse("float a[32000], b[32000], c[32000], d[32000];\n"
                         "void f(int n) { for (int i = 0; i < 32000; i++)\n"
                         "  if (a[i] > b[i]) { float s = a[i] - b[i] * d[i]; c[i] += s; a[i] = s; } }\n",
                         flags_override=["-O3"])
    per_iteration = counted["f"].machine_cycles.evaluate({}) / 32000
    assert 1 < per_iteration < 6


def test_a_loop_from_a_run_time_start_up_to_a_constant_counts_to_the_constant():
    # ScalarEvolution: max(31999, s - 1) - (s - 1). Taking the symbolic operand of the max would
    # cancel the count to one iteration; the constant is the bound.
    counted, _ = analyse("float g[32000];\nvoid f(int s) {\n for (int i = s - 1; i < 32000; i++)\n  g[i] += 1;\n}\n")
    # clang vectorises it by 8: the vector loop runs ~32000/8 times, the remainder loop after it
    # a few (its start is where the vector loop ended, not s - 1).
    loops = {loop.id: loop.trip_count.iterations.evaluate({"s": 1}) for loop in counted["f"].loops}
    assert 3900 < loops["vector.body"] < 4100 and loops["for.body"] < 8
    assert any("taken as its constant operand 31999" in a for a in counted["f"].assumptions)


def test_a_counter_stepped_on_both_sides_of_a_goto_is_still_counted():
    # clang copies `++i` into both paths and tests the merge: ScalarEvolution gives up on it.
    counted, _ = analyse("float a[32000], b[32000], c[32000], d[32000];\nvoid f(void) {\n"
                         " for (int i = 0; i < 31999; ++i) {\n  if (b[i] < 0.f) goto L20;\n  a[i] = c[i] + d[i];\n"
                         "  goto L10;\nL20:\n  c[i + 1] = a[i] + d[i];\nL10:\n  ;\n }\n}\n", flags_override=["-O3"])
    [loop] = counted["f"].loops
    assert loop.trip_count.kind == "constant" and loop.trip_count.iterations.evaluate({}) == 31999


def test_the_two_opt_runs_read_per_function_as_one_run_printed_them():
    """Names and loops first, ScalarEvolution and branch probabilities second, cut per function
    as they are printed: the same analyses as the single run of ANALYSIS_PASSES."""
    import subprocess

    from ccls import toolchain
    from ccls.frontends.c_family import (ANALYSIS_PASSES, NAMING_PASSES, SCEV_PASSES, _by_function, _Printout)
    from ccls.readers.scev import parse_opt_output

    code = ("double dot(const double *a, const double *b, int n) { double s = 0;\n"
            "  for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }\n"
            "void tri(int *m, int n) { for (int i = 0; i < n; i++) for (int j = 0; j < i; j++) m[i * n + j] = i ^ j; }\n"
            "int none(int x) { return x > 3 ? x * 2 : x - 1; }\n")
    clang, opt = toolchain.require_tool("clang"), toolchain.require_tool("opt")
    ir = subprocess.run([clang, "-O2", "-x", "c", "-S", "-emit-llvm", "-o", "-", "-"], input=code,
                        capture_output=True, text=True, check=True).stdout
    one = subprocess.run([opt, f"-passes={ANALYSIS_PASSES}", "-S", "-o", "-", "-"], input=ir,
                         capture_output=True, text=True, check=True)
    named = subprocess.run([opt, f"-passes={NAMING_PASSES}", "-S", "-o", "-", "-"], input=ir,
                           capture_output=True, text=True, check=True)
    assert named.stdout == one.stdout  # the IR every reader reads
    printed = _Printout(toolchain.start_tool([opt, f"-passes={SCEV_PASSES}", "-disable-output", "-"], memory_mb=4096),
                        named.stdout, 60)
    loops, analyses = _by_function(named.stderr), {}
    sections = list(printed.sections())
    assert [name for name, _ in sections] == ["dot", "tri", "none"] and printed.result().returncode == 0
    for name, text in sections:
        analyses.update(parse_opt_output(loops.pop(name, "") + text))
    assert analyses == parse_opt_output(one.stderr)
    assert analyses["tri"].loops and analyses["dot"].value_scevs and analyses["tri"].edge_probabilities


def test_c_library_math_calls_cost_their_measured_bodies_not_just_the_call():
    """llvm-mca sees `call sinf` and nothing of sinf itself: the table's measured cycles per call
    (cost_tables/derive/libm-measurements.json) are added, float and double versions apart."""
    from ccls.engine import ReportSettings, report
    from ccls.tables import load_tables
    code = ("#include <math.h>\nvoid waves(float *o, const float *a, double *d, long n) {\n"
            "  for (long i = 0; i < n; i++) {\n    o[i] = sinf(a[i]) + expf(a[i]);\n    d[i] = pow(d[i], 1.7);\n  }\n}\n"
            "void scale(float *o, const float *a, long n) {\n  for (long i = 0; i < n; i++)\n    o[i] = 3 * a[i] + 1;\n}\n")
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/libm.c", code), AnalysisOptions(), "c", [])
    tables = load_tables()
    table = tables.cost["x86_64"]
    counted = {fn.name: count_function(fn, table.cache, {"n": 1000.0}.__getitem__) for fn in result.functions}
    per_call = {name: counted["waves"].counts[f"fp_transcendental.{name}"].evaluate({"n": 1000}) for name in
                ("sinf", "expf", "pow")}
    assert per_call == {"sinf": 1000, "expf": 1000, "pow": 1000}
    costed = {r.counted.name: r for r in report(list(counted.values()), tables, ReportSettings(),
                                        AnalysisOptions(parameter_values=(("n", 1000.0),)))}
    bodies = sum(table.lookup(f"fp_transcendental.{name}").cu - table.lookup("call").cu for name in per_call)
    assert bodies > 40  # measured: sinf 13, expf 10, pow 58 cycles per call on the measuring core
    # each iteration pays the three bodies on top of the loop's own simulated cycles
    assert costed["waves"].metrics.cu > 1000 * bodies > 20 * costed["scale"].metrics.cu


@pytest.mark.parametrize("row_floats, crowded", [(256, True), (264, False)])
def test_a_column_walk_whose_rows_crowd_few_l1_sets_is_priced_as_measured(row_floats, crowded):
    """Rows 1 KiB apart put a column's lines in 1/16 of L1's sets: each line brought in evicts one
    of the walk's own (measured: 6 cycles per store from L2). Rows 1056 B apart use every set
    (2 cycles per store, the plain L2 class)."""
    code = (f"float aa[256][{row_floats}];\nvoid zero_columns(void) {{\n  for (int i = 0; i < 256; i++)\n"
            f"    for (int j = 0; j < 256; j++)\n      aa[j][i] = 0;\n}}\n")
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/columns.c", code), AnalysisOptions(), "c", ["-O2"])
    [fn] = result.functions
    from ccls.tables import load_tables
    counted = count_function(fn, load_tables().cost["x86_64"].cache, lambda name: 1.0)
    stores = {cls: poly.evaluate({}) for cls, poly in counted.counts.items() if cls.startswith("store")}
    assert sum(stores.values()) == pytest.approx(256 * 256, rel=0.01)
    assert (stores.get("store.L2.crowded", 0) > 0.9 * 256 * 256) is crowded
    assert any("of L1's sets" in a for a in counted.assumptions) is crowded


@pytest.mark.parametrize("row_floats, body, aliased", [
    (256, "aa[j][i] = aa[j][i] + bb[j][i];", True),  # stores at the loads' stride, rows 1 KiB apart
    (256, "s += aa[j][i] + bb[j][i];", False),  # crowded, but nothing stored in the walk
    (256, "cc[j] = aa[j][i] + bb[j][i];", False),  # stored at another stride (4 bytes)
    (264, "aa[j][i] = aa[j][i] + bb[j][i];", False),  # rows 1056 B apart: not crowded, no page-offset match
])
def test_a_crowded_column_walk_that_stores_its_rows_waits_on_page_offset_aliasing(row_floats, body, aliased):
    """A column walk that stores each row at the stride its loads move by, rows 1 KiB apart: row
    j+4's loads sit at the page offset of row j's store, still in flight, and wait for it
    (measured: ~8 cycles per load from L2, against 3.5 for a load-only walk). A load-only walk,
    one whose store moves by another stride, and rows that are not a page fraction apart keep
    their own classes."""
    code = (f"float aa[256][{row_floats}], bb[256][{row_floats}], cc[256];\n"
            f"float walk(void) {{\n  float s = 0;\n  for (int i = 0; i < 256; i++)\n"
            f"    for (int j = 0; j < 256; j++)\n      {body}\n  return s;\n}}\n")
    tiers, notes = _tiers(code, "walk", {})
    loads = sum(v for k, v in tiers.items() if k.startswith("load."))
    assert loads == pytest.approx(2 * 256 * 256, rel=0.02)
    assert (tiers.get("load.L2.crowded.aliased", 0) > 0.9 * loads) is aliased
    assert any("store-to-load aliasing" in a for a in notes) is aliased
    if row_floats == 256 and not aliased:
        assert tiers.get("load.L2.crowded", 0) > 0.9 * loads


def test_aliased_column_loads_cost_their_measured_cycles_in_the_x86_64_table():
    """The `.crowded.aliased` loads are measured (cost_tables/derive/beyond_mca_probe.c, an update
    walk less its store-only walk), never below an L1 hit (a Zen 5's update walk outruns its
    store-only walk: the loads hide under the stores); tables without them fall back to `.crowded`."""
    from ccls.tables import load_tables
    tables = load_tables().cost
    table = tables["x86_64"]
    for tier in ("L2", "L3"):
        aliased = table.lookup(f"load.{tier}.crowded.aliased")
        assert aliased.method == "measured" and "loads and stores each element" in aliased.source
        assert aliased.cu >= table.lookup("load.L1").cu
        # the walk's stores wait for their lines in turn: each costs more than a load-only walk's access
        assert table.lookup(f"store.{tier}.crowded").cu > table.lookup(f"load.{tier}.crowded").cu
    assert tables["aarch64"].lookup("load.L2.crowded.aliased") == tables["aarch64"].lookup("load.L2.crowded")


def test_an_address_scalar_evolution_cannot_follow_stays_within_the_global_array_it_names():
    # k runs on across both loops: ScalarEvolution gives the store no affine address, but it
    # stays inside flat[], 256 KiB, and so does the working set it adds.
    code = ("float flat[256 * 256], aa[256][256];\nvoid f(void) {\n  int k = -1;\n"
            "  for (int i = 0; i < 256; i++)\n    for (int j = 0; j < 256; j++) {\n"
            "      k++;\n      flat[k] = aa[i][j] * 2.0f;\n    }\n}\n")
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/unit.c", code), AnalysisOptions(), "c", [])
    stores = [i.access for f in result.functions for b in f.blocks if b.loop for i in b.instructions
              if i.access is not None and i.cls.startswith("store")]
    assert stores and all(a.pattern == "unknown" and a.span_bytes == 256 * 256 * 4 for a in stores)


def test_machine_code_comes_from_the_builds_llc_and_from_llvmlite_without_one(monkeypatch):
    from ccls import toolchain
    from ccls.frontends import c_family

    code = "long f(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i] * 3; return s; }"
    started, real_lowering, real_find = [], c_family._Lowering, toolchain.find_tool
    monkeypatch.setattr(c_family, "_Lowering", lambda llc, *rest: started.append(llc) or real_lowering(llc, *rest))
    by_llc, _ = analyse(code)
    assert len(started) == 1 and "llc" in started[0]
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None if name == "llc" else real_find(name))
    by_llvmlite, _ = analyse(code)
    assert len(started) == 1  # no llc: lowered in this process
    executed = [counted["f"].machine_instructions.evaluate({"n": 1000}) for counted in (by_llc, by_llvmlite)]
    assert executed[0] > 1000 and executed[0] == pytest.approx(executed[1], rel=0.25)
