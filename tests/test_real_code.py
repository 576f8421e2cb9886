"""Shapes of real C libraries (zlib, lz4, xxHash, stb, cJSON) that the IR reader got wrong:
each reproduces issue 17's finding with clang-19 and opt-19, and checks what ccls reads now."""
import shutil
from fractions import Fraction
import subprocess
import time

import pytest

from ccls import toolchain
from ccls.counting import count_function
from ccls.frontends import SourceFile
from ccls.frontends.c_family import ANALYSIS_PASSES, analyze_with_clang
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.readers.llvm_ir import IRNotReadable, ModuleText, parse_module, read_functions, readable_ir
from ccls.readers.scev import parse_opt_output
from tests.test_scev import deadline

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")

n = Polynomial.symbol("n")


def analyse(code: str, path: str = "/tmp/ccls-test/real.c", **options):
    result = analyze_with_clang(SourceFile(path, code), AnalysisOptions(**options), "c", [])
    return {f.display_name: f for f in result.functions}, result.errors


def module(code: str) -> tuple[str, str]:
    """(IR, opt's analyses) of C code at -O2, as the C front end gets them."""
    clang = subprocess.run([toolchain.require_tool("clang"), "-x", "c", "-O2", "-gline-tables-only", "-fno-discard-value-names",
                            "-Xclang", "-disable-llvm-passes", "-S", "-emit-llvm", "-o", "-", "-"],
                           input=code, capture_output=True, text=True, check=True)
    opt = subprocess.run([toolchain.require_tool("opt"), f"-passes=default<O2>,{ANALYSIS_PASSES}", "-S", "-o", "-"],
                         input=clang.stdout, capture_output=True, text=True, check=True)
    return opt.stdout, opt.stderr


def phichain(depth: int) -> str:
    """issue 17's gen_phichain.py: `depth` if/else merges, then a loop to their sum."""
    merges = "\n".join(f"  if (a[{i}]) {{ s += {2 * i + 1}; g(); }} else {{ s += {2 * i + 2}; h(); }}"
                       for i in range(depth))
    return ("void g(void); void h(void);\nint phichain(const int *a, int n) {\n  int s = n;\n" + merges +
            "\n  int t = 0;\n  for (int i = 0; i < s; i++) t += a[i];\n  return t;\n}\n")


# -- 1. no hang: a phi web is resolved once per value, within a budget ----------------------------

def test_a_chain_of_forty_if_else_merges_is_read_in_well_under_a_second():
    # 12 → 18 merges took 2.0 → 57.5 s before the memo (doubling per merge): 40 would never end.
    ir, analyses = module(phichain(40))
    started = time.monotonic()
    with deadline(30):
        [fn] = read_functions(parse_module(ModuleText(ir, parse_opt_output(analyses))), "p.c", "c", "x86_64", 100)
    assert time.monotonic() - started < 5
    trips = {loop.trip_count.kind: loop.trip_count.iterations for loop in fn.loops.values()}
    # the vectorised loop runs to s = n + Σ(2i + 1.5), eight at a time
    assert trips["symbolic"].symbols == {"n"}
    assert trips["symbolic"].evaluate({"n": 8000}) == pytest.approx((8000 + sum(2 * i + 1.5 for i in range(40))) / 8,
                                                                     abs=2)
    assert not any("analysis stopped" in a for a in fn.assumptions)


def test_a_function_over_its_budget_is_reported_with_what_is_known_and_says_so():
    ir, analyses = module(phichain(6))
    parsed = parse_module(ModuleText(ir, parse_opt_output(analyses)))
    [fn] = read_functions(parsed, "p.c", "c", "x86_64", 100, budget_steps=10)
    [note] = [a for a in fn.assumptions if a.startswith("analysis stopped after")]
    assert "loop trip counts in the loops at line" in note and "assumed 100" in note
    assert {loop.trip_count.kind for loop in fn.loops.values()} == {"unknown"}
    assert fn.blocks and sum(len(b.instructions) for b in fn.blocks) > 50  # instructions still counted
    [full] = read_functions(parsed, "p.c", "c", "x86_64", 100)
    assert sum(len(b.instructions) for b in fn.blocks) == sum(len(b.instructions) for b in full.blocks)
    # Stopped by its steps, it reads the same on any machine; by the clock, it is marked so (the
    # count cache keeps no such reading).
    assert not fn.stopped_on_time and not full.stopped_on_time


def test_a_reading_the_clock_stops_is_marked_so_through_counting(monkeypatch):
    import ccls.readers.llvm_ir as llvm_ir
    from ccls.readers.scev import BudgetExhausted, ReadingBudget

    class OutOfTime(ReadingBudget):
        def spend(self, steps: int = 1) -> None:
            self.exhausted = self.over_time = True
            raise BudgetExhausted("analysis stopped after 0 ms")

    monkeypatch.setattr(llvm_ir, "ReadingBudget", OutOfTime)
    ir, analyses = module(phichain(6))
    [fn] = read_functions(parse_module(ModuleText(ir, parse_opt_output(analyses))), "p.c", "c", "x86_64", 100)
    assert fn.stopped_on_time and any(a.startswith("analysis stopped after") for a in fn.assumptions)
    assert count_function(fn, None, lambda s: 1000.0).stopped_on_time


# -- 2. IR that llvmlite's newer LLVM cannot read costs that file, not the run --------------------

MMX = """#include <mmintrin.h>
__m64 add8(__m64 a, __m64 b) { return _mm_add_pi8(a, b); }
int plain(int n) { return n + 1; }
"""


def test_an_mmx_intrinsic_is_read_as_llvm_upgrades_its_type():
    # clang-19 prints the x86_mmx type, which LLVM 20 removed (llvmlite's LLVM: "expected type")
    functions, errors = analyse(MMX)
    assert errors == []
    assert set(functions) == {"add8", "plain"}
    assert "<1 x i64>" in functions["add8"].ir_text


def test_ir_the_parser_rejects_is_an_error_naming_the_function_and_line():
    ir = ("define i32 @good(i32 %n) {\nentry:\n  ret i32 %n\n}\n\n"
          "define i32 @bad(i32 %n) {\nentry:\n  %x = frobnicate i32 %n\n  ret i32 %x\n}\n")
    with pytest.raises(IRNotReadable) as raised:
        parse_module(ModuleText(ir, {}))
    assert (raised.value.function, raised.value.line) == ("bad", 8)
    assert "IR line 8, in function bad: `%x = frobnicate i32 %n`" in str(raised.value)


def test_the_mmx_upgrade_rewrites_types_and_leaves_strings_alone():
    text = '@s = constant [8 x i8] c"x86_mmx\\00"\ndefine x86_mmx @f(x86_mmx %a) {\n  ret x86_mmx %a\n}\n'
    assert readable_ir(text) == ('@s = constant [8 x i8] c"x86_mmx\\00"\n'
                                 'define <1 x i64> @f(<1 x i64> %a) {\n  ret <1 x i64> %a\n}\n')


# -- 3. a do-while's bound is the operand of max that grows with the sizes ------------------------

def test_an_xxhash_style_do_while_runs_len_over_16_times():
    functions, _ = analyse("""#include <stddef.h>
unsigned hash16(const unsigned char *input, size_t len) {
    const unsigned char *p = input;
    const unsigned char *const bEnd = p + len;
    unsigned v = 0;
    if (len >= 16) {
        const unsigned char *const limit = bEnd - 15;
        do {
            v = v * 31 + p[0] + p[4] + p[8] + p[12];
            p += 16;
        } while (p < limit);
    }
    return v;
}
""")
    [loop] = functions["hash16"].loops.values()
    assert loop.trip_count.kind == "symbolic"  # was "constant", 1.47 iterations
    assert loop.trip_count.iterations.evaluate({"len": 1_000_000}) == pytest.approx(1_000_000 / 16, rel=1e-3)


# -- 4. a type's maximum is never a trip count ------------------------------------------------------

BIT_REVERSAL = """static unsigned rev(unsigned code, int len) {
    unsigned res = 0;
    do { res |= code & 1; code >>= 1, res <<= 1; } while (--len > 0);
    return res >> 1;
}
void codes(const unsigned short *lens, unsigned short *out, int n) {
    for (int i = 0; i < n; i++) {
        int len = lens[i];
        if (len == 0) continue;
        out[i] = (unsigned short)rev((unsigned)i, len);
    }
}
"""


def test_a_loop_to_a_loaded_short_is_unknown_not_its_types_maximum():
    # zlib's bit reversal inlined into a loop over codes: len is an unsigned short (really <= 15).
    functions, _ = analyse(BIT_REVERSAL)
    codes = functions["codes"]
    inner = sorted((loop for loop in codes.loops.values() if loop.depth == 2), key=lambda l: l.trip_count.kind)
    # the loop unrolled by 4 (its maximum, 16383, is 65535 / 4), and its remainder (len mod 4)
    assert [loop.trip_count.kind for loop in inner] == ["constant", "unknown"]
    assert inner[0].trip_count.iterations == Polynomial.constant(1.5)
    assert inner[1].trip_count.iterations == Polynomial.constant(100)  # the default, said so:
    assert any("its maximum 16383 is only the range of a run-time value's type, not a count" in a
               for a in codes.assumptions)


# -- 6. a count that falls as a size grows is bounded by its value at size 0 -----------------------

def test_a_depth_limited_recursion_runs_at_most_its_limit_not_minus_n():
    # stb_truetype's tesselate_curve: the tail call becomes a loop from n up to 16
    functions, _ = analyse("""void emit(float x);
int split(float *pts, float a, float b, float eps, int n) {
    float m = (a + b) / 2;
    if (n > 16) return 1;
    if ((b - a) * (b - a) > eps) {
        split(pts, a, m, eps, n + 1);
        split(pts, m, b, eps, n + 1);
    } else {
        emit(b);
    }
    return 1;
}
""")
    split = functions["split"]
    [loop] = split.loops.values()
    assert loop.trip_count.iterations.symbols == frozenset()  # was -0.5·n + 9: O(n), negative at n = 1000
    assert loop.trip_count.iterations == Polynomial.constant(9)  # the mean exit of at most 17
    assert any("falls as n grows" in a and "at most 17" in a for a in split.assumptions)
    counts = count_function(split, None, lambda s: 1000.0).counts
    assert counts and all(not count.symbols for count in counts.values())  # O(1), never negative


# -- issue item 15. a `return NULL` after a failed allocation is an error path, not a search exit -

def test_a_loop_leaving_only_when_malloc_fails_runs_to_its_end():
    functions, _ = analyse("""#include <stdlib.h>
#include <string.h>
char **dup_all(char **src, int n) {
    char **out = malloc(n * sizeof *out);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        out[i] = malloc(strlen(src[i]) + 1);
        if (!out[i]) return NULL;
        strcpy(out[i], src[i]);
    }
    return out;
}
char *first_null(char **src, int n) {
    for (int i = 0; i < n; i++)
        if (!src[i]) return NULL;  /* a null the data holds: a search */
    return src[0];
}
""")
    [copy] = functions["dup_all"].loops.values()
    assert (copy.trip_count.kind, copy.trip_count.iterations) == ("bounded", n)  # was 0.5·n + 0.5
    assert any("other exits are taken only when an allocation returned null (out of memory)" in a
               for a in functions["dup_all"].assumptions)
    [search] = functions["first_null"].loops.values()
    assert search.trip_count.kind == "expected"


# -- 5. no IR names in what the reader says ---------------------------------------------------------

def test_the_readers_notes_name_loops_and_values_by_their_lines_not_ir_names():
    functions, _ = analyse("""typedef struct { float x; int flag; } edge;
void ins_sort(edge *p, int n) {
    for (int i = 1; i < n; ++i) {
        edge t = p[i];
        int j = i;
        while (j > 0) {
            if (!(t.x < p[j - 1].x)) break;
            p[j] = p[j - 1];
            --j;
        }
        if (i != j) p[j] = t;
    }
}
""")
    fn = functions["ins_sort"]
    headers = [loop.id for loop in fn.loops.values()]  # for.body, while.body: IR block names
    notes = " ".join(fn.assumptions)
    assert not [h for h in headers if h in notes] and "%" not in notes
    # was "loop %while.body: … taking the mean 0.5·for.body + 1"; a loop's line is the one its
    # report shows (its header's first line)
    outer, inner = sorted(fn.loops.values(), key=lambda loop: loop.depth)
    assert f"loop at line {inner.line}: trip count depends on data" in notes
    assert f"taking the mean 0.5·(iteration of the loop at line {outer.line}) + 1" in notes


def test_a_loop_to_a_loaded_byte_runs_at_most_what_the_byte_allows_when_that_is_below_the_default():
    # the bit reversal above, its lengths read from bytes: the unrolled loop runs at most 255 / 4
    functions, _ = analyse(BIT_REVERSAL.replace("unsigned short *lens", "unsigned char *lens"))
    codes = functions["codes"]
    [unrolled] = [loop for loop in codes.loops.values() if loop.depth == 2 and loop.trip_count.kind != "constant"]
    assert (unrolled.trip_count.kind, unrolled.trip_count.iterations) == ("bounded", Polynomial.constant(63))
    assert any("at most 63 (what the types of the values it depends on allow)" in a for a in codes.assumptions)


RUN_TIME_STEP = """
struct step { int first; int inc; };
float a[32000];
void strided(const struct step *s) {
    for (int i = s->first - 1; i < 32000; i += s->inc)
        a[i] += 1.0f;
}
void strided_to(int n, const int *inc) {
    for (int i = 0; i < n; i += *inc)
        a[i] += 1.0f;
}
"""


def test_a_counter_stepped_by_a_run_time_value_runs_at_most_its_count_at_a_step_of_one():
    # TSVC s122/s172/s175: ScalarEvolution cannot count `i += inc` (the step's sign is unknown)
    # (-O2 also makes a vectorised copy for a step of 1, entered after a run-time check: not this rule's)
    functions, _ = analyse(RUN_TIME_STEP)
    [to_constant] = [loop for loop in functions["strided"].loops.values() if loop.trip_count.kind == "bounded"]
    assert to_constant.trip_count.iterations == Polynomial.constant(32001)  # its start, read at run time, as 0
    assert any("steps by a value the loop does not change, known only at run time: at most 32001 iterations "
               "(a step of 1)" in a for a in functions["strided"].assumptions)
    [to_n] = [loop for loop in functions["strided_to"].loops.values() if loop.trip_count.kind == "bounded"]
    assert to_n.trip_count.iterations == n
    # its addresses move at the step its count was taken at: a float a step, not `inc` at the
    # default 1000 (a miss on every access)
    [walk] = [i.access for b in functions["strided"].blocks if b.loop == to_constant.id
              for i in b.instructions if i.cls.startswith("store") and i.access is not None]
    assert walk.pattern == "unit" and walk.stride_bytes == Polynomial.constant(4)
    assert any("and its addresses move at that step" in a for a in functions["strided"].assumptions)


STATE_MACHINE = """
int state;
int step(int *out) {
    if (state == 3) { out[0] = 1; out[1] = 2; out[2] = 3; out[3] = 4; out[4] = 5; out[5] = 6; return 1; }
    if (state == 7) { out[6] = out[0] * 3 + out[1]; out[7] = out[2] ^ out[3]; return 2; }
    return 0;
}
int guarded(int n, int *out) {
    if (n > 0) { out[0] = 1; out[1] = 2; out[2] = 3; out[3] = 4; out[4] = 5; out[5] = 6; }
    return n;
}
"""


def test_a_function_without_loops_runs_one_path_on_the_branch_probabilities():
    functions, _ = analyse(STATE_MACHINE)
    step = functions["step"]
    shares = {block.name: block.frequency for block in step.blocks}
    assert shares[step.blocks[0].name] == 1 and 0 < min(shares.values()) < 1  # the entry always; each case on its share
    assert any("one path per call" in a and "BranchProbabilityInfo" in a for a in step.assumptions)
    # A branch on a parameter is a size check: both sides run, as before
    assert all(block.frequency == 1 for block in functions["guarded"].blocks)


FILTER = """
int keep(int n, const int *a, int *o) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (a[i] > 0) { o[k] = a[i] * 3 + 1; k++; }
    return k;
}
"""


def test_blocks_behind_a_branch_on_loaded_data_run_on_their_share_of_the_iterations():
    functions, _ = analyse(FILTER)
    keep = functions["keep"]
    inside = [block for block in keep.blocks if block.loop is not None]
    assert any(block.frequency < 1 for block in inside) and max(block.frequency for block in inside) == 1
    assert any("branches on data loaded in their loop" in a for a in keep.assumptions)


STENCIL = """
void stencil(int tmax, int nx, int ny, double ex[nx][ny], double ey[nx][ny], double hz[nx][ny]) {
    for (int t = 0; t < tmax; t++)
        for (int i = 0; i < nx - 1; i++)
            for (int j = 0; j < ny - 1; j++)
                hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
}
"""


def test_a_counter_merged_from_copies_of_i_plus_1_counts_to_a_size_and_moves_addresses():
    # PolyBench fdtd-2d: GVN computes i + 1 apart on each path into the latch; ScalarEvolution
    # sees no counter ("unknown, 100"), and the addresses it indexes moved with nothing.
    functions, _ = analyse(STENCIL)
    stencil = functions["stencil"]
    rows = [loop for loop in stencil.loops.values() if loop.depth == 2]
    assert [loop.trip_count.iterations for loop in rows] == [Polynomial.symbol("nx") - 1]
    assert all(loop.trip_count.kind != "unknown" for loop in stencil.loops.values())
    moving = [i.access for b in stencil.blocks for i in b.instructions if i.access is not None and b.loop is not None]
    assert all(access.pattern != "unknown" for access in moving)


def test_a_counter_stepped_by_16_to_exactly_zero_runs_length_over_16_times():
    # nettle's FOR_BLOCKS: ScalarEvolution leaves it unknown (length −= 16 could step past 0 and
    # wrap); a loop that ends meets 0 exactly, after length/16 blocks.
    functions, errors = analyse("""
void blocks(unsigned long length, unsigned char *dst, const unsigned char *src) {
  for (; length; length -= 16, dst += 16, src += 16)
    for (int k = 0; k < 16; k++) dst[k] = src[k] ^ 0x5a;
}
""")
    assert not errors
    [loop] = functions["blocks"].loops.values()
    assert loop.trip_count.kind == "symbolic"
    assert loop.trip_count.iterations == Polynomial.symbol("length") * Fraction(1, 16)
    assert any("steps by -16 until it is exactly zero" in a for a in functions["blocks"].assumptions)
