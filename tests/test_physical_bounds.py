"""Loops that ScalarEvolution cannot count, bounded by what their own operations allow in C
(issue 17 §2): a bit buffer's counter is a shift amount, defined only below the shifted value's
width. Inline C, compiled by clang-19 as the C front end does."""
import shutil
from fractions import Fraction

import pytest

from ccls.polynomial import Polynomial
from tests.test_data_loops import analyse as analyse_c

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")


def analyse(code: str):
    return analyse_c(code, "/tmp/ccls-test/physical_bounds.c")


def by_line(fn) -> dict:
    return {loop.line: (loop.trip_count.kind, loop.trip_count.iterations) for loop in fn.loops.values()}


# A decoder's bit buffer: how many bits it needs comes from a table indexed by the data, and the
# input it may read is a run-time count: ScalarEvolution counts neither exit.
BIT_BUFFER = """
struct stream { const unsigned char *next; unsigned avail; unsigned long hold; unsigned bits;
                int mode; unsigned lens[16]; };
int pull(struct stream *s) {
  const unsigned char *next = s->next; unsigned have = s->avail;
  unsigned long hold = s->hold; unsigned bits = s->bits;
  for (;;) {
    unsigned need = s->lens[hold & 15];
    while (bits < need) {
      if (have == 0) goto leave;
      have--; hold += (unsigned long)(*next++) << %s; bits += 8;
    }
    s->mode = (int)(hold & 7); hold >>= need; bits -= need;
    if (s->mode == 0) break;
  }
leave:
  s->next = next; s->avail = have; s->hold = hold; s->bits = bits; return 0;
}
"""


def test_a_bit_buffer_runs_at_most_its_width_over_the_step():
    fn = analyse(BIT_BUFFER % "bits")["pull"]
    # 64-bit `hold`, 8 bits a byte: the shifts that go round again take 8 distinct amounts below
    # 64; one more iteration may leave
    assert by_line(fn)[10] == ("bounded", Polynomial.constant(9))
    assert any("is the amount of a shift of a 64-bit value, which C defines only below 64: at most 9 "
               "iterations" in note for note in fn.assumptions)
    assert by_line(fn)[8][0] == "unknown"  # the decoder's own loop ends on the data: nothing to say


def test_a_masked_shift_amount_bounds_nothing():
    # `bits & 63` is always a defined shift, whatever the counter reaches
    fn = analyse(BIT_BUFFER % "(bits & 63)")["pull"]
    assert not any("C defines only below" in note for note in fn.assumptions)
    # what is left: it reads at most the `have` bytes of input it holds, and may stop before
    kind, count = by_line(fn)[10]
    assert kind == "expected" and count.symbols == {"have"}
    assert any("at most have + 1, which depends on the value of the C variable `have`" in note
               for note in fn.assumptions)


def test_a_counter_stepped_down_to_zero_by_a_constant_counts_start_over_step():
    # ScalarEvolution gives no count: n need not be a multiple of 4 as far as it knows
    fn = analyse("""
unsigned sum4(const unsigned *p, unsigned n) {
  unsigned s = 0;
  do { s = s * 7 + p[0] + p[3]; p += 4; } while (n -= 4);
  return s;
}
""")["sum4"]
    assert by_line(fn)[4] == ("symbolic", Polynomial.symbol("n") * Polynomial.constant(0.25))
    assert any("its counter steps by -4 until it is exactly zero, taken to meet it (a start at a multiple of 4" in note
               for note in fn.assumptions)


# A copy whose length the function decodes from its input (an LZ77 match): LLVM unrolls it by 8
# after a prologue for the remainder, and the main body's count is in the decoded `len`.
DECODER = """
unsigned run(const unsigned char *in, unsigned char *out) {
  unsigned copied = 0;
  while (*in) {
    unsigned len = (unsigned)(*in++) + 3;
    const unsigned char *from = out - (*in++);
    copied += len;
    do { *out++ = *from++; } while (--len);
  }
  return copied;
}
"""


def test_a_count_in_a_decoded_value_is_named_after_its_variable():
    fn = analyse(DECODER)["run"]
    kinds = sorted(kind for kind, _ in by_line_all(fn))
    assert kinds == ["constant", "data", "data"]  # the prologue (its remainder's mean), the body, the walk
    body = [count for kind, count in by_line_all(fn) if kind == "data" and "len" in count.symbols]
    assert len(body) == 1 and body[0].symbols == {"len"}
    assert any("depends on the value of the C variable `len`" in note and "--param 'len=N'" in note
               for note in fn.assumptions)


def by_line_all(fn) -> list:
    return [(loop.trip_count.kind, loop.trip_count.iterations) for loop in fn.loops.values()]


def test_a_count_in_a_value_llvm_made_is_not_named():
    # `k * 3` is no variable of the source: the loop keeps what the types allow
    fn = analyse("""
void fill(const unsigned char *in, unsigned char *out) {
  while (*in) {
    unsigned k = *in++;
    unsigned j = 0;
    do { out[j] = (unsigned char)(out[j] * k + 1); j += 3; } while (j != k * 3u);
    out += k;
  }
}
""")["fill"]
    assert ("bounded", Polynomial.constant(63)) in by_line_all(fn)
    assert not any("C variable" in note for note in fn.assumptions)


# A search down a table of 16 counts for the last one in use (a Huffman coder's bit lengths):
# the table is a struct member, re-read after each store, so ScalarEvolution counts nothing.
TABLE_SEARCH = """
struct coder { unsigned short count[16]; int overflow; };
void rebalance(struct coder *s, int bits) {
  do {
    int b = bits - 1;
    while (s->count[b] == 0) b--;
    s->count[b]--;
    s->count[b + 1] += 2;
    s->overflow -= 2;
  } while (s->overflow > 0);
}
"""


def test_a_counter_indexing_an_array_runs_at_most_its_length():
    fn = analyse(TABLE_SEARCH)["rebalance"]
    outer, inner = sorted(by_line_all(fn), key=lambda trip: trip[0] != "data")
    assert outer[0] == "data" and outer[1].symbols == {"s->overflow"}  # as before: ScalarEvolution's count
    assert inner == ("bounded", Polynomial.constant(16))
    assert any("indexes an array of 16 elements on every iteration, which C defines only below 16: at most 16 "
               "iterations" in note for note in fn.assumptions)


def test_an_array_of_unknown_length_bounds_nothing():
    # a trailing `[1]` array is the old idiom for one of any length: no bound from it
    fn = analyse(TABLE_SEARCH.replace("unsigned short count[16]; int overflow;",
                                      "int overflow; unsigned short count[1];"))["rebalance"]
    assert not any("indexes an array" in note for note in fn.assumptions)


@pytest.mark.parametrize("value, opcode, type_text, variable", [
    ("len.0", "phi", "i32", "len"),            # mem2reg's merge of a local
    ("op.3.ph", "phi", "i32", "op"),           # … through LLVM's unroller and vectoriser
    ("copy.61449.unr", "phi", "i32", "copy"),
    ("chain_length.0", "select", "i32", "chain_length"),  # `if (…) chain_length >>= 2;` as a select
    ("size.addr.0", "phi", "i64", None),       # a parameter's own variable: its value at entry is the parameter
    ("have913.promoted2123", "phi", "i32", None),  # LICM's copy of a memory location
    ("add60", "phi", "i32", None),             # values LLVM made
    ("spec.select.3", "phi", "i32", None),
    ("indvars.iv.1", "phi", "i64", None),
    ("i42", "phi", "i32", None),
    ("out.0", "phi", "ptr", None),             # an address is no count
    ("len.0", "load", "i32", None),
])
def test_which_values_are_named_after_a_variable(value, opcode, type_text, variable):
    from types import SimpleNamespace
    from ccls.readers.llvm.physical_bounds import variable_of
    reading = SimpleNamespace(definitions={value: SimpleNamespace(opcode=opcode, type_text=type_text, text="")})
    assert variable_of(value, reading, {"size"}) == variable


def test_a_search_of_a_constant_table_runs_at_most_its_length():
    # no bound in the loop's condition: the table's 12 entries are the only limit
    fn = analyse("""
static const unsigned sizes[12] = {53, 97, 193, 389, 769, 1543, 3079, 6151, 12289, 24593, 49157, 98317};
unsigned bucket_count(unsigned want) {
  unsigned i = 0;
  while (sizes[i] < want) i++;
  return sizes[i];
}
""")["bucket_count"]
    assert by_line_all(fn) == [("bounded", Polynomial.constant(12))]


# Multiplication of polynomials over GF(2), a bit at a time (a CRC combiner's): it ends at the
# lowest set bit of `a`, which ScalarEvolution cannot see; the mask that finds it walks 32 bits.
GF2_PRODUCT = """
unsigned product(unsigned a, unsigned b) {
  unsigned m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ 0xedb88320u : b >> 1;
  }
  return p;
}
"""


def test_a_loop_steered_by_a_shifted_mask_ends_within_its_bits():
    fn = analyse(GF2_PRODUCT)["product"]
    assert by_line_all(fn) == [("bounded", Polynomial.constant(33))]
    assert any("on a mask shifted by a constant each iteration, which is zero after 32 iterations" in note
               and "if it ends at all it ends within 33 iterations" in note for note in fn.assumptions)


def test_a_branch_on_other_carried_state_keeps_the_loop_unknown():
    # the exit also tests `b`, which the loop keeps changing after the mask is spent
    fn = analyse(GF2_PRODUCT.replace("if ((a & (m - 1)) == 0) break;", "if ((a & (m - 1)) == b) break;"))["product"]
    assert [kind for kind, _ in by_line_all(fn)] == ["unknown"]


def test_a_count_in_a_member_the_outer_loop_re_reads_is_named_after_it():
    # `s->lookahead` is read before the loop and again after each refill: the inner loop's count
    # is in whichever read reached it, which the source names as one member
    fn = analyse("""
struct win { unsigned strstart; unsigned lookahead; };
void refill(struct win *s);
void mark(struct win *s, unsigned str);
void insert_all(struct win *s) {
  while (s->lookahead >= 3) {
    unsigned str = s->strstart;
    unsigned n = s->lookahead - 2;
    do { mark(s, str); str++; } while (--n);
    s->strstart = str;
    s->lookahead = 2;
    refill(s);
  }
}
""")["insert_all"]
    assert ("data", Polynomial.symbol("s->lookahead") - Polynomial.constant(2)) in by_line_all(fn)
    assert any("depends on `s->lookahead`" in note and "read from memory on each entry" in note
               for note in fn.assumptions)


def test_a_counter_stepped_up_by_a_constant_to_a_size_it_must_meet_counts_the_distance_over_the_step():
    # `i != n` with i += 4: it leaves only on meeting n, so (n − 0) / 4 iterations where it ends.
    fn = analyse("""
void g(void);
long every_fourth(const long *a, long n) {
    long s = 0;
    for (long i = 0; i != n; i += 4) { s += a[i]; if (s == 12345) g(); }
    return s;
}
""")["every_fourth"]
    counts = [loop.trip_count for loop in fn.loops.values()]
    assert any(t.iterations == Polynomial.symbol("n") * Fraction(1, 4) for t in counts), counts


# A run-length decoder: each coefficient may skip ahead by a count read from the data, and the
# loop leaves early on an end-of-block code; the skips are checked, so the additions cannot wrap.
SKIPPING = """
int decode(const unsigned char *codes, short *out) {
  unsigned char k;
  for (k = 1; k < 64; k++) {
    unsigned char s = *codes++, r = s >> 4;
    if (s & 15) {
      if (k + r > 63) return -1;
      k = (unsigned char)(k + r);
      out[k] = s & 15;
    } else if (r == 15) {
      if (k > 48) return -1;
      k += 15;
    } else
      break;
  }
  return k;
}
int wander(const unsigned char *codes, short *out) {
  int k = 1;
  while (k < 64) { out[k & 63] = 1; k += (signed char)*codes++; }  /* may step back: no bound */
  return k;
}
"""


def test_a_counter_that_skips_ahead_by_data_runs_at_most_its_bound_minus_its_start():
    fns = analyse(SKIPPING)
    [(kind, count)] = by_line(fns["decode"]).values()
    # k rises by at least 1 each time round (k = k + r, k += 15, then k++), tested k < 64 at
    # the latch: at most 63 iterations, not the tests on some paths only (k > 48 is one)
    assert (kind, count) == ("bounded", Polynomial.constant(63))
    assert any("rises by at least 1 each iteration" in a for a in fns["decode"].assumptions)
    [(kind, _)] = by_line(fns["wander"]).values()
    assert kind == "unknown"
