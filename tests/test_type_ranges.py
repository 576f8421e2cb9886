"""A narrow integer's range is a bound, never a count: a loop compared with a loaded `unsigned
char` is not taken to run 255 times (nor its mean, 128), and a size named after one is
evaluated at no more than its type holds (real clang, inline C)."""
import shutil

import pytest

from ccls.engine import count_source
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.readers.llvm.trips import _only_a_types_range

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")

# `p` may point at `w`, so `w` is read again at each iteration; ScalarEvolution's only bound is
# what an unsigned char allows (254 back edges).
RELOADED = """\
extern unsigned char w;
extern unsigned short h;
void clear(unsigned char *p) {
  for (unsigned char y = 0; y < w; y++)
    p[y] = 0;
}
void clear16(unsigned short *p) {
  for (unsigned short y = 0; y < h; y++)
    p[y] = 0;
}
"""


def _counted(code: str, **options):
    counted = count_source(SourceFile("/tmp/ccls-test/ranges.c", code), AnalysisOptions(**options))
    assert counted.errors == []
    return {f.name: f for f in counted.functions}


def test_a_bound_read_again_each_iteration_is_named_not_its_types_range():
    clear = _counted(RELOADED)["clear"]
    [loop] = clear.loops
    assert loop.trip_count.kind == "data" and loop.trip_count.iterations.format() == "w"
    assert not any("successful search" in note for note in clear.assumptions)


def test_a_size_named_after_an_8_bit_value_is_evaluated_at_most_at_255():
    functions = _counted(RELOADED)
    clear, clear16 = functions["clear"], functions["clear16"]
    assert clear.inferred_sizes == {"w": 255.0}
    assert any(note.startswith("w = 255, the most it can be: its type holds no more") for note in clear.size_notes)
    stores = sum(poly.evaluate(clear.inferred_sizes) for cls, poly in clear.counts.items() if cls.startswith("store"))
    assert stores == pytest.approx(255, rel=0.05)
    # 16 bits hold 65535, more than the default: the default stands.
    assert "h" not in clear16.inferred_sizes and clear16.loops[0].trip_count.iterations.format() == "h"
    # A value the user gives wins, and a default below the ceiling needs none.
    assert _counted(RELOADED, parameter_values=(("w", 40.0),))["clear"].inferred_sizes == {}
    assert _counted(RELOADED, default_parameter_value=100.0)["clear"].inferred_sizes == {}


# Each global is read again at every iteration (`p` may point at them): ScalarEvolution's only
# bound, (255 + 255) · (255 + 255) + 255 back edges, is what four unsigned chars allow.
PRODUCT_READ_AGAIN = """\
extern unsigned char a, b, c, d;
void fill(unsigned char *p, const unsigned char *q) {
  for (int i = 0; i < (a + b) * (c + d) + d; i++)
    p[i] = q[i] << 1;
}
void search(unsigned char *p, int x) {
  for (int i = 0; i < 64; i++)
    if (p[i] == x) break; else p[i]++;
}
"""


def test_a_bound_computed_from_values_read_in_the_loop_is_no_count_even_when_not_2_to_the_k_minus_1():
    functions = _counted(PRODUCT_READ_AGAIN)
    [loop] = functions["fill"].loops
    assert loop.trip_count.kind == "unknown" and loop.trip_count.iterations.constant_value() == 100
    assert any("its maximum 260355 is only the range" in note for note in functions["fill"].assumptions)
    # A fixed bound with a search exit keeps its maximum (the loop is unrolled by two: 32 back edges).
    [search] = functions["search"].loops
    assert search.trip_count.kind == "expected" and search.trip_count.iterations.constant_value() == 16.5


# A static global the file only ever sets to constants: no run gives it more than 6.
STATIC_MODE = """\
static unsigned char blocks_per_unit;
void configure(int kind) {
  if (kind == 1) blocks_per_unit = 1;
  else if (kind == 2) blocks_per_unit = 4;
  else blocks_per_unit = 6;
}
void clear_units(short *coefficients) {
  for (unsigned char b = 0; b < blocks_per_unit; b++)
    coefficients[b * 64] = 0;
}
unsigned char blocks_now(void) { return blocks_per_unit; }
"""
# ... and one whose address escapes, or that is set from data, has only its type's range
ESCAPING = STATIC_MODE.replace("unsigned char blocks_now(void) { return blocks_per_unit; }",
                               "unsigned char *where(void) { return &blocks_per_unit; }")


def test_a_static_global_set_only_to_constants_is_evaluated_at_most_at_the_largest():
    clear = _counted(STATIC_MODE)["clear_units"]
    assert clear.inferred_sizes == {"blocks_per_unit": 6.0}
    # every write the program makes to it is known (`ccls.sizes`): the largest, and where from
    assert any(note.startswith("blocks_per_unit = 6 from the write at ") and "also set to 4 (" in note
               for note in clear.size_notes)
    assert _counted(ESCAPING)["clear_units"].inferred_sizes == {"blocks_per_unit": 255.0}


def test_stored_maxima_reads_initial_values_and_constant_stores_of_file_local_scalars():
    from ccls.readers.global_constants import stored_maxima
    ir = """@mode = internal unnamed_addr global i8 2, align 1
@level = internal global i32 0, align 4
@shared = dso_local global i32 0, align 4
@taken = internal global i16 0, align 2
define void @f(i32 %x) {
  store i8 5, ptr @mode, align 1, !tbaa !1
  store i32 %x, ptr @level, align 4
  store i32 9, ptr @shared, align 4
  %a = load i16, ptr @taken, align 2
  call void @g(ptr @taken)
  %b = load i8, ptr @mode, align 1
  ret void
}
"""
    # @level is set from data, @shared is any file's, @taken's address escapes
    assert stored_maxima(ir) == {"mode": 5}


@pytest.mark.parametrize("trips,only_a_range", [(127, True), (255, True), (65535, True), (256, False),
                                                  (100, False), (63, False), (254, False)])
def test_only_counts_of_2_to_the_k_minus_1_from_127_up_are_a_types_range(trips, only_a_range):
    assert _only_a_types_range(trips) is only_a_range


def test_a_count_in_a_variable_scalar_evolution_bounds_is_evaluated_at_most_at_that_bound():
    # r = byte >> 4 lies in [0, 16): LLVM's ScalarEvolution prints that range, and the count,
    # named after `r`, is evaluated at 15, not the default 1000.
    zeros = _counted("""\
int zeros(const unsigned char *p, int n, short *out) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    unsigned r = p[i] >> 4;
    while (r) {
      out[k++ & 63] = 0;
      r--;
    }
  }
  return k;
}
""")["zeros"]
    assert "r" in {s for loop in zeros.loops for s in loop.trip_count.iterations.symbols}
    assert zeros.inferred_sizes == {"r": 15.0}
    assert any(note.startswith("r = 15, the most it can be: LLVM's value range") for note in zeros.size_notes)


def test_printed_ranges_give_the_largest_value_where_they_do_not_wrap():
    from ccls.readers.scev import _SIGNED_RANGE, _UNSIGNED_RANGE, _range, _range_maximum

    def most(printed: str) -> int | None:
        return _range_maximum(_range(_UNSIGNED_RANGE, printed), _range(_SIGNED_RANGE, printed))
    assert most("  -->  %x U: [0,16) S: [0,16)") == 15
    assert most("  -->  %r.unr U: [-3,16) S: [-3,16)") == 15  # unsigned wraps, signed does not
    assert most("  -->  %y U: full-set S: full-set") is None
    assert most("  -->  %z U: [4,-3) S: [-9223372036854775808,9223372036854775805)") == 9223372036854775804
