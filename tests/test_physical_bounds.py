"""Loops that ScalarEvolution cannot count, bounded by what their own operations allow in C
(issue 17 §2): a bit buffer's counter is a shift amount, defined only below the shifted value's
width. Inline C, compiled by clang-19 as the C front end does."""
import json
import shutil
import subprocess
import sys
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
    # 64; one more iteration may leave. It may also leave earlier on data (input used up, enough
    # bits): the early-exit policy's mean of that bound, (9 + 1) / 2
    trip = [l.trip_count for l in fn.loops.values() if l.line == 10][0]
    assert (trip.kind, trip.iterations, trip.worst_case) == ("expected", Polynomial.constant(5), True)
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
    # the latch: at most 63 iterations, not the tests on some paths only (k > 48 is one). On
    # average it rises by 1 + (7.5 + 15) / 2 = 12.25 (r = s >> 4 at the middle of [0, 15], the
    # two paths alike): 63 / 12.25 = 36/7 iterations fit; it also leaves on data (an
    # end-of-block code): the early-exit policy's mean (36/7 + 1) / 2
    assert (kind, count) == ("expected", Polynomial.constant(Fraction(43, 14)))
    assert any("it rises by 12.2 on average" in a for a in fns["decode"].assumptions)
    assert any("rises by at least 1 each iteration" in a for a in fns["decode"].assumptions)
    [(kind, _)] = by_line(fns["wander"]).values()
    assert kind == "unknown"


# A canonical-code builder's step to the next code (`while (huff & incr) incr >>= 1;`): where
# `incr` starts is only known at run time, but a 32-bit value shifted right by 1 is zero after
# 32 shifts, and so is its AND with anything.
NEXT_CODE = """
unsigned next_code(unsigned huff, unsigned len) {
  unsigned incr = 1U << (len - 1);
  while (huff & incr)
    incr >>= 1;
  if (incr != 0) { huff &= incr - 1; huff += incr; } else huff = 0;
  return huff;
}
unsigned digits(const unsigned *p, unsigned x) {
  unsigned v = *p, n = 0;
  while (v & x) { v >>= 3; n++; }
  return n;
}
int signed_mask(int huff, int len) {
  int incr = -(1 << len);  /* an arithmetic shift keeps the sign bit: never zero */
  while (huff & incr) incr >>= 1;
  return incr;
}
"""


def test_a_mask_shifted_right_until_it_shares_no_bit_runs_at_most_its_width():
    fns = analyse(NEXT_CODE)
    assert by_line_all(fns["next_code"]) == [("bounded", Polynomial.constant(33))]
    assert any("it leaves once `incr` (a 32-bit value), shifted right by 1 each iteration, shares no set bit "
               "with another value, whatever it starts at; after 32 shifts it is zero" in note
               and "at most 33 iterations (a worst case" in note for note in fns["next_code"].assumptions)
    # a value read from memory, shifted by 3: ⌈32 / 3⌉ = 11 shifts
    assert by_line_all(fns["digits"]) == [("bounded", Polynomial.constant(11))]  # tested after the shift
    assert any("shifted right by 3 each iteration, shares no set bit with another value, whatever it starts at; "
               "after 11 shifts it is zero" in note for note in fns["digits"].assumptions)


def test_an_arithmetic_shift_right_bounds_nothing():
    fn = analyse(NEXT_CODE)["signed_mask"]
    assert [kind for kind, _ in by_line_all(fn)] == ["unknown"]
    assert not any("shifted right by" in note for note in fn.assumptions)


# A decoding table's replication (`fill` and `incr` powers of two only the run knows) and a count
# taken down by a run-time chunk: each leaves only on meeting zero exactly.
RATIOS = """
typedef struct { unsigned char op, bits; unsigned short val; } code;
void replicate(code *next, code here, unsigned huff, unsigned len, unsigned drop, unsigned curr) {
  unsigned incr = 1U << (len - drop);
  unsigned fill = 1U << curr;
  do {
    fill -= incr;
    next[(huff >> drop) + fill] = here;
  } while (fill != 0);
}
void chunks(unsigned char *p, unsigned n, unsigned size) {
  do { p[n - 1] = 0; n -= size; } while (n != 0);
}
void steps(unsigned char *p, unsigned n, unsigned size) {
  do { p[n - 1] = 0; n -= size; size++; } while (n != 0);  /* a step that changes: no ratio */
}
"""


def test_a_counter_taken_to_zero_by_a_run_time_step_counts_the_ratio():
    fns = analyse(RATIOS)
    assert by_line_all(fns["replicate"]) == [("data", Polynomial.symbol("(1<<curr)/(1<<(len-drop))"))]
    assert any("`fill` starts at `1<<curr` and goes down by `1<<(len-drop)` (fixed before the loop, known only at "
               "run time) each iteration until it is exactly zero" in note
               and "--param '(1<<curr)/(1<<(len-drop))=N'" in note for note in fns["replicate"].assumptions)
    assert by_line_all(fns["chunks"]) == [("data", Polynomial.symbol("n/size"))]
    # a step that changes has no ratio: only named, as a quantity consumed in run-time pieces
    assert by_line_all(fns["steps"]) == [("data", Polynomial.symbol("chunks(n)"))]


def test_a_ratio_count_is_set_with_param():
    code = RATIOS.split("void steps")[0]
    path = "/tmp/ccls-test/ratios.c"
    import os
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(code)
    out = subprocess.run([sys.executable, "-m", "ccls", "analyze", path, "--format", "json", "--param", "n/size=4"],
                         capture_output=True, text=True, check=True).stdout
    [chunks] = [f for f in json.loads(out)["functions"] if f["name"] == "chunks"]
    assert chunks["loops"][0]["kind"] == "data"
    out_8 = subprocess.run([sys.executable, "-m", "ccls", "analyze", path, "--format", "json", "--param",
                            "n/size=8"], capture_output=True, text=True, check=True).stdout
    [chunks_8] = [f for f in json.loads(out_8)["functions"] if f["name"] == "chunks"]
    assert chunks_8["instructions"] > chunks["instructions"]  # twice the iterations, more instructions


# An LZ77 copy of a match, three bytes a time while more than two are left: LLVM unrolls it by two
# after a prologue, and ScalarEvolution gives up on an unsigned counter that might step past zero.
THREES = """
unsigned char *copy(unsigned char *out, const unsigned char *from, unsigned len) {
  while (len > 2) {
    *out++ = *from++; *out++ = *from++; *out++ = *from++;
    len -= 3;
  }
  if (len) { *out++ = *from++; if (len > 1) *out++ = *from++; }
  return out;
}
"""


def test_a_counter_stepped_down_while_above_a_floor_counts_the_distance_over_the_step():
    fn = analyse(THREES)["copy"]
    [(kind, count)] = by_line_all(fn)
    assert kind == "symbolic" and count.symbols == {"len"}
    assert dict(count.terms)[(("len", 1),)] == Fraction(1, 6)  # the unrolled body: two copies of 3 a pass
    assert any("its counter steps by -6 while above 2: (start − 2) / 6 iterations more, within one" in note
               and "taken not to step from above 2 past zero" in note for note in fn.assumptions)


# A canonical Huffman code's bits reversed: the length is read from the tree, and on the way into
# the loop it indexes `next_code[16]`.
REVERSED = """
struct ct { unsigned short code, len; };
static unsigned bi_reverse(unsigned code, int len) {
  unsigned res = 0;
  do { res |= code & 1; code >>= 1, res <<= 1; } while (--len > 0);
  return res >> 1;
}
void gen_codes(struct ct *tree, int max_code, const unsigned short *bl_count) {
  unsigned short next_code[16]; unsigned code = 0; int bits, n;
  for (bits = 1; bits <= 15; bits++) { code = (code + bl_count[bits - 1]) << 1; next_code[bits] = (unsigned short)code; }
  for (n = 0; n <= max_code; n++) {
    int len = tree[n].len;
    if (len == 0) continue;
    tree[n].code = (unsigned short)bi_reverse(next_code[len]++, len);
  }
}
void after(struct ct *tree, int max_code, unsigned short *seen) {
  for (int n = 0; n <= max_code; n++) {
    int len = tree[n].len;
    if (len == 0) continue;
    tree[n].code = (unsigned short)bi_reverse(n, len);
    seen[len]++;  /* a pointer, not an array: no length */
  }
}
"""


def test_a_count_in_a_value_that_indexes_an_array_runs_at_most_its_count_at_the_last_index():
    fns = analyse(REVERSED)
    kinds = by_line_all(fns["gen_codes"])
    # the loop over codes, and bi_reverse's loop unrolled by 4: at most 3 passes for a length of 15
    # (then the remainder's mean)
    assert ("bounded", Polynomial.constant(3)) in kinds
    assert any("its count grows with a value read at run time that also indexes `next_code`, an array of 16 "
               "elements, before the loop; C defines that only below 16, so the loop runs at most 3 times" in note
               for note in fns["gen_codes"].assumptions)
    assert not any("indexes" in note and "array of" in note for note in fns["after"].assumptions)


def test_a_counter_kept_in_memory_counts_from_the_value_forwarded_on_entry():
    # `s->heap_len = 0` before the loop: LLVM forwards the 0 to the counter's phi
    fn = analyse("""
struct st { int heap[64]; int heap_len; long opt; };
void build(struct st *s, int max_code) {
  s->heap_len = 0;
  while (s->heap_len < 2) {
    s->heap[++(s->heap_len)] = (max_code < 2 ? ++max_code : 0);
    s->opt--;
  }
}
""")["build"]
    assert by_line_all(fn) == [("bounded", Polynomial.constant(2))]
    assert any("steps `s->heap_len` (kept in memory) by 1 until it reaches 2" in note for note in fn.assumptions)


# Counts consumed in chunks of a fixed size: by the loop itself, or by a call handed each chunk
# (taken to consume all of it, as a complete write or read does).
CHUNKS = """
#include <stddef.h>
#include <unistd.h>
void put(unsigned char *p, size_t len) {
  while (len) {
    size_t n = len < 4096 ? len : 4096;
    p[n - 1] = 0; p += n;
    len -= n;
  }
}
struct gz { int fd; unsigned char *next_in; unsigned avail_in; };
int drain(struct gz *s) {
  unsigned put, max = ((unsigned)-1 >> 2) + 1;
  while (s->avail_in) {
    put = s->avail_in > max ? max : s->avail_in;
    long writ = write(s->fd, s->next_in, put);
    if (writ < 0) return -1;
    s->avail_in -= (unsigned)writ;
    s->next_in += writ;
  }
  return 0;
}
int load(int fd, unsigned char *buf, unsigned len, unsigned *have) {
  int ret; unsigned get, max = ((unsigned)-1 >> 2) + 1;
  *have = 0;
  do {
    get = len - *have;
    if (get > max) get = max;
    ret = read(fd, buf + *have, get);
    if (ret <= 0) break;
    *have += (unsigned)ret;
  } while (*have < len);
  return ret < 0 ? -1 : 0;
}
void uneven(unsigned char *p, size_t len) {
  size_t step = 1;
  while (len) {
    size_t n = len < step ? len : step;  /* a chunk that grows: no count */
    p[n - 1] = 0; p += n; step += step;
    len -= n;
  }
}
"""


def test_a_count_consumed_in_fixed_chunks_runs_the_count_over_the_chunk():
    fns = analyse(CHUNKS)
    # ⌈len / 4096⌉, taken as len / 4096 and the rounding's mean 4095 / 8192
    assert by_line_all(fns["put"]) == [("symbolic", Polynomial.symbol("len") * Fraction(1, 4096)
                                        + Fraction(4095, 8192))]
    assert any("it takes `4096` at a time from `len` (or all that is left, if less) and leaves when nothing is "
               "left: ⌈len / 4096⌉ iterations" in note for note in fns["put"].assumptions)
    # a chunk that grows has no ratio: only named, as a quantity consumed in run-time pieces
    assert by_line_all(fns["uneven"]) == [("data", Polynomial.symbol("chunks(len)"))]


def test_a_count_handed_to_a_call_in_fixed_chunks_is_named_after_what_it_counts():
    fns = analyse(CHUNKS)
    # the count kept in memory (`s->avail_in`, read again after each write), taken down by what
    # each write returns; the write's failure is another way out: the early-exit policy's mean
    [(kind, count)] = by_line_all(fns["drain"])
    assert kind == "expected" and count.symbols == {"s->avail_in"}
    assert any("it takes `1073741824` at a time from `s->avail_in`" in note
               and "each call to write that is handed the chunk is taken to consume all of it" in note
               for note in fns["drain"].assumptions)
    # a count rising by what each read returns (`*have`, kept in memory) to `len`
    [(kind, count)] = by_line_all(fns["load"])
    assert kind == "expected" and count.symbols == {"len"}
    assert any("it takes `1073741824` at a time from `len`" in note and "each call to read" in note
               for note in fns["load"].assumptions)


# Comparisons that run only while the elements they read are equal: they leave at the first
# pair that differs, which for unrelated data is the first.
FIRST_DIFFERENCE = """
int find(char (*names)[100], int n, const char *key) {
  for (int i = 0; i < n; i++) {
    const char *a = names[i], *b = key;
    for (; *a && *b && *a == *b; a++, b++);
    if (*a == 0 && *b == 0) return i;
  }
  return -1;
}
unsigned long length_bytes(const unsigned char **in) {
  unsigned long length = 0; unsigned s;
  do { s = *(*in)++; length += s; } while (s == 255);
  return length;
}
const char *scan_to(const char *p, char stop) {
  while (*p != stop) p++;
  return p;
}
"""


def test_a_comparison_of_two_walks_leaves_at_the_first_difference():
    fns = analyse(FIRST_DIFFERENCE)
    mean = Fraction(256, 255)  # 1 / (1 − 2^-8): the run of equal pairs of unrelated bytes
    assert by_line(fns["find"])[5] == ("expected", Polynomial.constant(mean))
    assert any("compares two sequences element by element and leaves at the first difference"
               in note for note in fns["find"].assumptions)
    assert by_line(fns["length_bytes"])[12] == ("expected", Polynomial.constant(mean))
    assert any("runs while the elements it reads equal one value" in note for note in fns["length_bytes"].assumptions)
    # a walk that continues while the elements differ is a search for the value: not a first difference
    assert by_line(fns["scan_to"])[16][0] == "unknown"


ROUNDS = """
unsigned rounds(const unsigned *w) {
  unsigned a = 1, b = 2, c = 3, d = 4;
  for (unsigned i = 0; i < 64; i++) {
    unsigned f, g;
    if (i < 16) { f = (b & c) | (~b & d); g = i; }
    else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) % 16; }
    else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) % 16; }
    else { f = c ^ (b | ~d); g = (7 * i) % 16; }
    unsigned t = d; d = c; c = b; b = b + ((a + f + w[g]) << 7); a = t;
  }
  return a + b + c + d;
}
"""


def test_the_arms_of_a_chain_on_the_round_counter_run_a_quarter_of_the_rounds_each():
    fn = analyse(ROUNDS)["rounds"]
    inner = [b for b in fn.blocks if b.loop is not None]
    arms = sorted(b.frequency for b in inner if b.frequency < 1)
    # four arms of 16 rounds each, and the two else-tests passed by 48 and 32 of the 64
    assert arms.count(Fraction(1, 4)) == 4 and Fraction(3, 4) in arms and Fraction(1, 2) in arms


def test_a_loop_without_exit_is_never_run_by_a_call_that_returns():
    fn = analyse("""
#define check(e) { if (!(e)) while (1); }
void fill(unsigned *k, unsigned nk, unsigned n) {
  check(nk != 0);
  for (unsigned i = 0; i < n; i++) k[i] = i * nk;
}
""")["fill"]
    assert by_line(fn)[4] == ("constant", Polynomial.constant(0))  # the assertion's hang
    assert any("it has no exit" in note and "counted 0" in note for note in fn.assumptions)
    assert not any(loop.trip_count.kind == "unknown" for loop in fn.loops.values())


def test_two_counters_that_approach_each_other_meet_halfway():
    fn = analyse("""
void reverse_groups(unsigned *dst, unsigned rounds) {
  unsigned i, j, k, t;
  for (i = 0, j = rounds * 4; i < j; i += 4, j -= 4)
    for (k = 0; k < 4; k++) { t = dst[i + k]; dst[i + k] = dst[j + k]; dst[j + k] = t; }
}
""")["reverse_groups"]
    # i = 0, 4, … and j = 4·rounds, 4·rounds − 4, …: they meet after rounds / 2 iterations
    assert by_line(fn)[5] == ("symbolic", Polynomial.symbol("rounds") * Fraction(1, 2))
    assert any("two counters move towards each other" in note for note in fn.assumptions)


def test_a_narrow_counter_that_rises_through_inner_loops_is_bounded_by_its_test():
    fn = analyse("""
typedef unsigned char u8;
extern u8 next_symbol(void);
short coeff[64]; const u8 zag[64];
int decode(void) {
  u8 k;
  for (k = 1; k < 64; k++) {
    u8 s = next_symbol(), r = s >> 4;
    s &= 15;
    if (s) {
      if (k + r > 63) return -1;
      while (r) { coeff[zag[k++]] = 0; r--; }
      coeff[zag[k]] = s;
    } else if (r == 15) {
      if (k + 16 > 64) return -1;
      for (r = 16; r > 0; r--) coeff[zag[k++]] = 0;
      k--;
    } else break;
  }
  return k;
}
""")["decode"]
    outer = next(loop for loop in fn.loops.values() if loop.parent is None)
    assert outer.trip_count.kind == "expected"  # at most 64, leaving earlier on data: the mean
    assert outer.trip_count.iterations.constant_value() <= 64
    assert any("rises by at least 1 each iteration" in note for note in fn.assumptions)


def test_a_counter_stepped_through_rejoining_merges_is_walked_once_per_value_and_depth(monkeypatch):
    """`if (a) n++; if (b) n++; …` rejoins after each test: the walk for the most a pass adds
    meets each merge along many paths, and answers each (value, depth) once."""
    from types import SimpleNamespace as NS

    from ccls.readers.llvm import physical_bounds

    def value(name):
        return NS(name=name, text=f"i32 %{name}")
    definitions, previous = {}, "n"
    for k in range(1, 6):  # n.k = select %c.k, (previous + 1), previous
        definitions[f"inc.{k}"] = NS(opcode="add", operands=[value(previous), NS(name="", text="i32 1")],
                                     text=f"%inc.{k} = add nsw i32 %{previous}, 1")
        definitions[f"n.{k}"] = NS(opcode="select", operands=[value(f"c.{k}"), value(f"inc.{k}"), value(previous)],
                                   text=f"%n.{k} = select i1 %c.{k}, i32 %inc.{k}, i32 %{previous}")
        previous = f"n.{k}"
    reading = NS(definitions=definitions, block_of={name: "body" for name in definitions})
    walks = []
    once = physical_bounds._most_added_once
    monkeypatch.setattr(physical_bounds, "_most_added_once", lambda *a: walks.append(a[:1] + a[5:6]) or once(*a))
    assert physical_bounds._most_added("n.5", "n", {"body"}, reading, {"header"}) == 5
    assert len(walks) == len(set(walks)) == 36  # once per path, 94 walks
