"""A loop that runs only where a branch bounds its size (`if (size <= 32)`, a hybrid sort's
small case) counts at most its count at that bound; a loop bounded by its own operations that
may also leave earlier on data takes the early-exit policy's count. Inline C, compiled by
clang-19 as the C front end does."""
import shutil
from fractions import Fraction

import pytest

from ccls.polynomial import Polynomial
from tests.test_data_loops import analyse as analyse_c

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")

CODE = """
void sort(long *a, long size) {
  if (size <= 32) {
    for (long i = 1; i < size; i++) { long v = a[i], j = i; while (j > 0 && a[j - 1] > v) { a[j] = a[j - 1]; j--; } a[j] = v; }
    return;
  }
  for (long i = 0; i < size; i++) a[i] += 1;
}
short zag[64];
unsigned char next_symbol(void);
int decode(short *out) {  /* a JPEG block's AC coefficients: runs of zeros, then an end of block */
  unsigned char k;
  for (k = 1; k < 64; k++) {
    unsigned char s = next_symbol(), r = s >> 4;
    s &= 15;
    if (s) {
      if (r) { if ((k + r) > 63) return -1; k = (unsigned char)(k + r); }
      out[zag[k]] = s;
    } else if (r == 15) {
      if ((k + 16) > 64) return -1;
      k += 15;
    } else
      break;
  }
  return k;
}
"""


@pytest.fixture(scope="module")
def functions():
    return analyse_c(CODE, "/tmp/ccls-test/guarded_sizes.c")


def test_a_loop_behind_a_small_size_branch_counts_at_most_that_size(functions):
    sort = functions["sort"]
    capped = [loop.trip_count for loop in sort.loops.values() if loop.trip_count.kind == "bounded"]
    assert capped and all(t.worst_case and t.iterations.constant_value() <= 31 for t in capped)
    assert any("runs only where `size < 33` holds, so size <= 32 there" in a for a in sort.assumptions)
    # the other branch's loop keeps its count in size
    assert any(Polynomial.symbol("size").symbols <= loop.trip_count.iterations.symbols
               for loop in sort.loops.values() if loop.trip_count.kind == "symbolic")


def test_a_bounded_counter_that_leaves_early_on_data_takes_the_mean(functions):
    trips = [loop.trip_count for loop in functions["decode"].loops.values()]
    # k rises by 1 plus, on its three paths, 0, r (s >> 4: 7.5 at the middle of [0, 15]) or 15:
    # 8.5 on average, so about 63 / 8.5 = 126/17 iterations fit below 64; it also leaves on data
    # (an end of block): the early-exit policy's mean (126/17 + 1) / 2
    assert [(t.kind, t.iterations) for t in trips] == [("expected", Polynomial.constant(Fraction(143, 34)))]

