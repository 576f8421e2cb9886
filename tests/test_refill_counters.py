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
    # the bit on entry and each of the loop's rounds take one bit of the byte a refill brings:
    # 1 in 8 of them refill (the entry's counter is kept in memory, the loop's in a register)
    assert _calls(fn, "next_byte") == pytest.approx((1 + float(trip)) / 8)


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


COUNTDOWNS = """
void restart(void), flush(void), spend(void), visit(int);
unsigned short restarts_left, until_flush, budget;
int decode_unit(int n, int *out) {  /* a restart every so many units: the callee refills the counter */
  if (restarts_left == 0) restart();
  restarts_left--;
  for (int i = 0; i < n; i++) out[i] = i;
  return n;
}
void write_unit(void) {  /* a flush every 16 units, refilled here */
  if (until_flush == 0) { flush(); until_flush = 16; }
  until_flush--;
}
void pay(void) {  /* a budget that stays spent at zero: not a countdown */
  if (budget == 0) { spend(); return; }
  budget--;
}
void per_element(int n, unsigned char *left) {  /* one counter per element: the data decides */
  for (int i = 0; i < n; i++) { if (left[i] == 0) { visit(i); left[i] = 4; } left[i]--; }
}
"""


@pytest.fixture(scope="module")
def countdowns():
    return analyse(COUNTDOWNS, "/tmp/ccls-test/countdowns.c")


def test_a_countdown_refilled_by_a_call_fires_once_in_the_default_count(countdowns):
    # what restart() sets the counter to is not read: one unit in an unknown count (100) of them
    fn = countdowns["decode_unit"]
    assert _calls(fn, "restart") == pytest.approx(1 / 100)
    assert any("counts down by 1" in note and "(the default count)" in note for note in fn.assumptions)


def test_a_countdown_refilled_by_a_constant_fires_once_per_period(countdowns):
    assert _calls(countdowns["write_unit"], "flush") == pytest.approx(1 / 16)


def test_a_spent_budget_and_per_element_counters_are_not_countdowns(countdowns):
    # no refill on the zero side: LLVM's static estimate (3/8 for `== 0`) stays
    assert _calls(countdowns["pay"], "spend") == pytest.approx(12 / 32)
    # a counter per element is tested once each: its loop's branch keeps its own weighing
    fn = countdowns["per_element"]
    assert not any("counts down" in note for note in fn.assumptions)
