"""Loops that run until a round changes nothing (`while (!stable) { stable = 1; … }`): 2 rounds
expected, not the default of a loop ScalarEvolution cannot count. Inline C, compiled by clang-19
as the C front end does."""
import shutil

import pytest

from ccls.polynomial import Polynomial
from tests.test_data_loops import analyse as analyse_c

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")


def analyse(code: str):
    return analyse_c(code, "/tmp/ccls-test/fixpoint_loops.c")


def by_line(fn) -> dict:
    return {loop.line: (loop.trip_count.kind, loop.trip_count.iterations) for loop in fn.loops.values()}


STATE_MACHINE = """
char stable, state, door, light;
void step_door(void);
void run(void) {
  stable = 0;
  while (!stable) {
    stable = 1;
    switch (state) {
      case 1: if (door) { state = 2; stable = 0; } break;
      case 2: if (!door) { state = 1; stable = 0; } break;
      default: state = 1; stable = 0;
    }
    step_door();
    if (light != door) { light = door; stable = 0; }
  }
}
"""


def test_a_state_machine_run_until_stable_takes_two_rounds():
    fn = analyse(STATE_MACHINE)["run"]
    assert by_line(fn)[7] == ("expected", Polynomial.constant(2))
    assert any("it runs until a round changes nothing: each round sets `stable` to 1" in note
               for note in fn.assumptions)


def test_a_flag_the_header_does_not_reset_is_no_fixpoint():
    # `done` is only ever set inside: a loop waiting on something, not settling
    fn = analyse("""
char done, state;
void poll(void);
void wait(void) {
  while (!done) { poll(); if (state == 3) done = 1; }
}
""")["wait"]
    assert by_line(fn)[5][0] == "unknown"


def test_a_flag_loop_that_sweeps_an_array_each_round_is_left_alone():
    # a bubble sort's `swapped`: rounds repeat once per element out of place, not twice
    fn = analyse("""
int swapped;
void sort(int *a, int n) {
  do {
    swapped = 0;
    for (int i = 1; i < n; i++)
      if (a[i - 1] > a[i]) { int t = a[i]; a[i] = a[i - 1]; a[i - 1] = t; swapped = 1; }
  } while (swapped);
}
""")["sort"]
    assert not any("runs until a round changes nothing" in note for note in fn.assumptions)


ITERATOR = """
struct node { struct node *left, *right; };
struct iter { struct node *current; struct node *path[64]; char pass[64]; short depth; short order; };
void next(struct iter *it) {  /* one step of an in-order walk kept in `it` across calls */
  it->current = 0;
  while (it->depth > 0 && it->current == 0) {
    int i = it->depth - 1;
    if (it->pass[i] >= 2) it->depth--;
    else {
      struct node *s = it->pass[i] == 0 ? it->path[i]->left : it->path[i]->right;
      if (s) { it->path[i + 1] = s; it->pass[i + 1] = 0; it->depth++; }
      it->pass[i]++;
    }
    if (it->depth > 0 && it->order == it->pass[it->depth - 1]) it->current = it->path[it->depth - 1];
  }
}
"""


def test_a_search_until_a_pass_stores_its_result_takes_two_passes():
    fn = analyse(ITERATOR)["next"]
    assert by_line(fn)[6] == ("expected", Polynomial.constant(2))
    assert any("it searches until a pass finds a result: what it keeps at `it` is cleared before the loop" in note
               for note in fn.assumptions)


def test_a_result_not_cleared_before_the_loop_is_no_search_of_this_kind():
    # `current` may hold what an earlier call found: the loop may not run at all, or run on
    fn = analyse(ITERATOR.replace("  it->current = 0;\n", ""))["next"]
    assert not any("it searches until a pass finds a result" in note for note in fn.assumptions)
