"""A counter that falls by d each iteration and is refilled by K when a branch finds it at zero
(a bit reader's `if (!bits_left) { buf |= next_byte(); bits_left += 8; }`) runs its refill on
d / K of the iterations; a switch runs one of its cases each time, not all of them. Inline C,
compiled by clang-19 as the C front end does."""
import shutil
from fractions import Fraction

import pytest

from ccls.counting import count_function
from ccls.readers.refill_counters import refill_branch_probabilities
from tests.test_data_loops import analyse

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")

BIT_READER = """
unsigned char next_byte(void);
unsigned char bits_left;
unsigned short bit_buf;
static inline int get_bit(void) {
  int bit = bit_buf >> 15;
  if (!bits_left) { bit_buf |= next_byte(); bits_left += 8; }
  bits_left--;
  bit_buf <<= 1;
  return bit;
}
int read_code(const unsigned short *max_code) {  /* a Huffman decoder: one bit per round */
  int code = get_bit();
  for (int i = 0; i < 16; i++) {
    if (code <= max_code[i]) return i;
    code = code << 1 | get_bit();
  }
  return -1;
}
void gray(void), colour(void), planar(void);
int by_format(int format, int n, int *out) {
  for (int i = 0; i < n; i++) out[i] = i;  /* a loop: its branches outside loops stay sizes */
  switch (format) {  /* each case its own work (calls LLVM cannot merge), meeting at the end */
    case 0: gray(); break;
    case 1: colour(); break;
    case 2: planar(); break;
    default: break;
  }
  return n;
}
"""


@pytest.fixture(scope="module")
def functions():
    return analyse(BIT_READER, "/tmp/ccls-test/refill_counters.c")


def _calls(fn, callee: str) -> float:
    counted = count_function(fn, None, lambda name: 1000.0)
    return float(counted.calls[callee].evaluate({})) if callee in counted.calls else 0.0


def test_a_bit_readers_refill_runs_once_per_byte_of_bits(functions):
    fn = functions["read_code"]
    trip = next(iter(fn.loops.values())).trip_count.iterations.constant_value()
    # one refill on entry (outside the loop, not weighed), then 1 in 8 of the loop's rounds
    assert _calls(fn, "next_byte") == pytest.approx(1 + float(trip) / 8)


def test_a_switch_runs_one_case_per_execution(functions):
    # one case of three that work runs (the empty default costs nothing): a third each, not 1
    fn = functions["by_format"]
    assert [_calls(fn, f) for f in ("gray", "colour", "planar")] == pytest.approx([1 / 3] * 3)


def test_refill_probabilities_from_the_loop_body():
    class I:
        def __init__(self, name, opcode, text):
            self.name, self.opcode, self.text = name, opcode, text
    definitions = {i.name: i for i in (
        I("c", "phi", "%c = phi i8 [ 0, %entry ], [ %c.next, %merge ]"),
        I("z", "icmp", "%z = icmp eq i8 %c, 0"),
        I("refilled", "add", "%refilled = add i8 %loaded, 8"),
        I("m", "phi", "%m = phi i8 [ %refilled, %refill ], [ %c, %loop ]"),
        I("c.next", "add", "%c.next = add i8 %m, -1"),
    )}
    terminators = {"loop": I("", "br", "br i1 %z, label %refill, label %merge"),
                   "refill": I("", "br", "br label %merge"),
                   "merge": I("", "br", "br i1 %more, label %loop, label %out")}
    found = refill_branch_probabilities({"loop": ["loop", "refill", "merge"]}, {"loop": {"c"}}, terminators,
                                        definitions)
    assert found == {("loop", "refill"): Fraction(1, 8), ("loop", "merge"): Fraction(7, 8)}
