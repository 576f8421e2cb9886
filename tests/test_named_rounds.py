"""Loops only the data decides, named after what decides them (`readers.llvm.named_rounds`): a
quantity consumed in pieces the run decides, a state machine, a loop repeating a call until it
says done. Inline C, compiled by clang-19 as the C front end does."""
import shutil
from fractions import Fraction

import pytest

from ccls.model import Loop, TripCount
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.unknown_nests import share_unknown_nests
from tests.test_data_loops import analyse as analyse_c

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")


def analyse(code: str):
    return analyse_c(code, "/tmp/ccls-test/named_rounds.c")


def trips(fn) -> list:
    return [(loop.trip_count.kind, loop.trip_count.iterations) for loop in fn.loops.values()]


BUFFERED = """
struct buf { unsigned have; unsigned char *next; int eof; };
int refill(struct buf *b);
/* skip len bytes of a buffered stream: each round takes what the buffer holds, or refills it */
int skip(struct buf *b, unsigned long len) {
  while (len) {
    if (b->have) {
      unsigned n = b->have > len ? (unsigned)len : b->have;
      b->have -= n; b->next += n; len -= n;
    } else if (b->eof) break;
    else if (refill(b) == -1) return -1;
  }
  return 0;
}
"""


def test_a_quantity_consumed_in_run_time_pieces_is_named_after_it():
    fn = analyse(BUFFERED)["skip"]
    assert trips(fn) == [("data", Polynomial.symbol("chunks(len)"))]
    assert any("`len` is consumed to zero in pieces the loop decides at run time" in note
               and "--param 'chunks(len)=N'" in note and "unset, the default 100" in note for note in fn.assumptions)
    # unset, it is the default trip count (as an unknown count was); set, it is what was given
    assert AnalysisOptions().parameter_value("chunks(len)") == 100.0
    assert AnalysisOptions(parameter_values=(("chunks(len)", 3.0),)).parameter_value("chunks(len)") == 3.0
    assert fn.loops[next(iter(fn.loops))].trip_count.is_named_guess


STATES = """
struct st { int left; int mode; };  /* mode not first: at offset 0 it reads as `*s` */
int emit(struct st *s);
int run(struct st *s) {
  for (;;)
    switch (s->mode) {
    case 0: s->mode = emit(s) ? 1 : 2; break;
    case 1: if (s->left-- == 0) s->mode = 3; else s->mode = 2; break;
    case 2: s->mode = emit(s) + 1; break;
    case 3: return s->left;
    default: return -1;
    }
}
"""


def test_a_state_machine_counts_its_steps_by_the_state_it_dispatches_on():
    fn = analyse(STATES)["run"]
    assert trips(fn) == [("data", Polynomial.symbol("steps(s->mode)"))]
    assert any("a state machine: each round dispatches on `s->mode`" in note for note in fn.assumptions)


UNTIL_DONE = """
int step(void *stream, int flush);
int drain(void *stream) {
  int err;
  do err = step(stream, 4); while (err == 0);
  return err == 1 ? 0 : err;
}
"""


def test_a_loop_repeating_a_call_until_it_says_done_counts_its_calls():
    fn = analyse(UNTIL_DONE)["drain"]
    assert trips(fn) == [("data", Polynomial.symbol("calls(step)"))]


def test_an_error_exit_on_a_call_names_nothing():
    # the call's result only leaves (an error); what goes round again is data the call changes
    fn = analyse("""
struct s { int more; };
int fetch(struct s *p);
void pump(struct s *p) {
  do { if (fetch(p) == -1) return; } while (p->more);
}
""")["pump"]
    assert [kind for kind, _ in trips(fn)] == ["unknown"]


def test_named_counts_nested_in_each_other_share_the_default_as_unknown_loops_do():
    outer = Loop("a", None, 1, TripCount("data", Polynomial.symbol("calls(step)")), line=10)
    inner = Loop("b", "a", 2, TripCount("data", Polynomial.symbol("chunks(len)")), line=20)
    known = Loop("c", None, 1, TripCount("data", Polynomial.symbol("s->count")), line=30)
    loops = {"a": outer, "b": inner, "c": known}
    (note,) = share_unknown_nests(loops, 100)
    # 10 at each level at the default, the names kept; a count named after data is no guess
    assert loops["a"].trip_count.iterations == Polynomial.symbol("calls(step)") * Fraction(1, 10)
    assert loops["b"].trip_count.iterations == Polynomial.symbol("chunks(len)") * Fraction(1, 10)
    assert loops["c"].trip_count.iterations == Polynomial.symbol("s->count")
    assert "(or named by the data, at the default)" in note and "not 100^2" in note


STORED = """
struct st { int mode; unsigned length; };
typedef unsigned (*in_func)(void *, unsigned char **);
/* copy a stored block: its length lives in the state, taken down by what input and room allow */
unsigned copy_block(struct st *state, in_func in, void *desc, unsigned char *put, unsigned left) {
  unsigned have = 0; unsigned char *next = 0;
  while (state->length != 0) {
    unsigned copy = state->length;
    if (have == 0) { have = in(desc, &next); if (have == 0) return 1; }
    if (copy > have) copy = have;
    if (copy > left) copy = left;
    __builtin_memcpy(put, next, copy);
    have -= copy; next += copy; left -= copy; put += copy;
    state->length -= copy;
  }
  return 0;
}
/* the same count, but a call handed the state may refill it: no quantity consumed */
void refill(struct st *state);
void drain(struct st *state, unsigned char *put, unsigned left) {
  while (state->length != 0) {
    unsigned copy = state->length > left ? left : state->length;
    put[copy - 1] = 0;
    state->length -= copy;
    refill(state);
  }
}
"""


def test_a_count_kept_in_a_member_is_named_after_the_member():
    fns = analyse(STORED)
    assert trips(fns["copy_block"]) == [("data", Polynomial.symbol("chunks(state->length)"))]
    assert not any("chunks(" in str(iterations) for _, iterations in trips(fns["drain"]))


def test_a_walk_that_also_ends_at_a_list_end_is_not_a_callee_s_count():
    # `for (; a && b; a = a->next, b = b->next) if (!same(a, b)) return 0;`: its end is the lists'
    fn = analyse("""
struct node { struct node *next; int v; };
int same(struct node *a, struct node *b);
int all_same(struct node *a, struct node *b) {
  for (; a != 0 && b != 0; a = a->next, b = b->next)
    if (!same(a, b)) return 0;
  return a == b;
}
""")["all_same"]
    assert not any("calls(" in str(iterations) for _, iterations in trips(fn))
