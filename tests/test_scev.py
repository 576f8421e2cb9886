"""ScalarEvolution text → polynomials, on expressions copied from opt-19's output."""
from fractions import Fraction

import pytest

from ccls.polynomial import Polynomial
from ccls.readers.scev import NotPolynomial, ScevContext, parse_opt_output, to_polynomial

n = Polynomial.symbol("n")


def ctx(**kw):
    return ScevContext(kw.get("params", {"n", "a"}), kw.get("values", {}), kw.get("phis", {}), kw.get("loops", set()))


def test_casts_and_flags_are_transparent():
    assert to_polynomial("(-1 + (zext i32 %n to i64))<nsw>", ctx()) == n - 1


def test_add_recurrence_over_an_enclosing_loop_is_its_index():
    p = to_polynomial("{0,+,1}<nuw><nsw><%outer>", ctx(loops={"outer"}))
    assert p == Polynomial.symbol("@outer")
    with pytest.raises(NotPolynomial):
        to_polynomial("{0,+,1}<%elsewhere>", ctx())


def test_unsigned_division_uses_the_expected_floor():
    p = to_polynomial("((-8 + (8 * (%n /u 8))) /u 8)", ctx())
    # ((-8 + 8·(n - 3.5)/8) - 3.5) / 8 = (n - 15) / 8
    assert p.evaluate({"n": 1000}) == pytest.approx((1000 - 15) / 8)


def test_narrow_cast_is_a_remainder_mean_and_is_reported():
    c = ctx(loops={"outer"})
    assert to_polynomial("(zext i2 {0,+,1}<%outer> to i64)", c) == Polynomial.constant(1.5)
    assert any("mean" in a for a in c.assumptions)


def test_unknown_run_time_value_is_not_polynomial():
    with pytest.raises(NotPolynomial):
        to_polynomial("(-1 + %len.loaded)", ctx())
    with pytest.raises(NotPolynomial):
        to_polynomial("***COULDNOTCOMPUTE***", ctx())


def test_remainder_phi_takes_the_value_after_the_main_loop():
    c = ctx(values={"n.vec": "(8 * (%n /u 8))"}, phis={"i.ph": ["0", "%n.vec"]})
    p = to_polynomial("(-1 + (-1 * %i.ph) + %n)", c)
    assert p.evaluate({"n": 1000}) == pytest.approx(2.5)


def test_remainder_phi_after_a_prologue_is_the_mean_of_its_computed_starts():
    c = ctx(values={"n.vec": "(4 * (%n /u 4))", "j.ph": "%j.ph", "inc.prol": "(1 + %j.ph)"},
            phis={"j.ph": ["0", "%n.vec"], "j.unr": ["%j.ph", "%inc.prol"]})
    p = to_polynomial("%j.unr", c)
    assert p.evaluate({"n": 1000}) == pytest.approx(1000 - 1.5 + 0.5)


def test_a_vectorised_loops_end_index_with_its_low_bit_set_is_its_mean():
    # opt-19 on a 5-point stencil: %ind.end = or i64 %i13, 1, which ScalarEvolution keeps opaque.
    text = ("Printing analysis 'Scalar Evolution Analysis' for function 'k':\n"
            "Classifying expressions for: @k\n"
            "  %i13 = add i64 %n, -2\n  -->  (-2 + %n) U: full-set S: full-set\n"
            "  %ind.end = or i64 %i13, 1\n  -->  %ind.end U: [1,0) S: [1,0)\n"
            "  %j.ph = phi i64 [ 1, %outer ], [ %ind.end, %middle.block ]\n"
            "  -->  %j.ph U: full-set S: full-set\n")
    f = parse_opt_output(text)["k"]
    assert f.low_bits_set == {"ind.end": ("i13", 1)}
    c = ScevContext({"n"}, f.value_scevs, f.phi_incoming, set(), low_bits_set=f.low_bits_set)
    remainder = to_polynomial("(-2 + (-1 * %j.ph) + %n)", c)  # the scalar loop's backedge count
    assert remainder.evaluate({"n": 1000}) == pytest.approx(-0.5)  # 0 or 1 iterations: mean 0.5 trips
    assert any("%ind.end = %i13 | 1 taken as %i13 + 0.5" in a for a in c.assumptions)


OPT_OUTPUT = """\
Loop info for function 'f':
Loop at depth 1 containing: %search<header><latch><exiting>
Parallel Loop at depth 1 containing: %outer<header>,%inner.ph,%inner,%outer.latch<latch><exiting>
    Loop at depth 2 containing: %inner<header><latch><exiting>
Printing analysis 'Scalar Evolution Analysis' for function 'f':
Classifying expressions for: @f
  %iv = phi i64 [ 0, %entry ], [ %iv.next, %outer.latch ]
  -->  {0,+,1}<nuw><nsw><%outer> U: [0,-1) S: [0,-1)
Determining loop execution counts for: @f
Loop %inner: backedge-taken count is (-1 + {1,+,1}<%outer>)
Loop %inner: constant max backedge-taken count is i64 9
Loop %outer: backedge-taken count is (-1 + %n)
Loop %search: symbolic max backedge-taken count is (-1 + %n)
"""


def test_parse_opt_output_builds_the_nest():
    f = parse_opt_output(OPT_OUTPUT)["f"]
    assert f.loops["inner"].parent == "outer" and f.loops["outer"].parent is None
    assert f.loops["inner"].backedge_taken == "(-1 + {1,+,1}<%outer>)"
    assert f.loops["inner"].constant_max_backedge_taken == 9
    assert f.value_scevs["iv"] == "{0,+,1}<nuw><nsw><%outer>"
    assert f.phi_incoming["iv"] == ["0", "%iv.next"]
    assert f.loops["search"].symbolic_max_backedge_taken == "(-1 + %n)"  # "Parallel" loops are loops too


def test_an_order_two_recurrence_is_a_binomial_sum():
    # `for (j = 0; j < i * i; j++)`: the bound is {0,+,1,+,2}<outer>, i.e. k + k(k-1) = k².
    k = Polynomial.symbol("@outer")
    assert to_polynomial("{0,+,1,+,2}<%outer>", ctx(loops={"outer"})) == k * k
    assert to_polynomial("{3,+,0,+,0,+,6}<%outer>", ctx(loops={"outer"})) == 3 + k * (k - 1) * (k - 2)


def test_bounds_of_min_and_max_are_chosen_for_large_sizes():
    loops = {"outer"}
    # max(n, i + 1) guards `for (j = i; j < n; ...)`: n, not the enclosing loop's index
    c = ctx(loops=loops)
    assert to_polynomial("((1 + {0,+,1}<%outer>) smax %n)", c) == n
    # min(63, n - 64·ii - 1): a tile's bound is the tile once n is large
    c = ctx(loops=loops)
    assert to_polynomial("(63 umin (-1 + (-64 * {0,+,1}<%outer>) + %n))", c) == Polynomial.constant(63)
    assert any("constant operand 63" in a for a in c.assumptions)
    assert to_polynomial("(%a umin %n)", ctx()) == Polynomial.symbol("a")  # two sizes: the first, said so


def test_a_small_opaque_value_is_the_middle_of_its_range():
    # opt-19 on `for (i = 0; i < n; i += 2)` vectorised: the remainder is a select ScalarEvolution
    # cannot see through, but it bounds it to [0, 8).
    text = ("Printing analysis 'Scalar Evolution Analysis' for function 'k':\n"
            "Classifying expressions for: @k\n"
            "  %i18 = select i1 %i17, i64 4, i64 %n.mod.vf\n"
            "  -->  %i18 U: [0,8) S: [0,8)\n"
            "  %big = select i1 %c, i64 4, i64 %m\n"
            "  -->  %big U: [0,1000) S: [0,1000)\n")
    analyses = parse_opt_output(text)["k"]
    assert analyses.small_ranges == {"i18": (0, 8)}  # a range of 1000 values is not small
    c = ScevContext({"n"}, analyses.value_scevs, {}, set(), small_ranges=analyses.small_ranges)
    assert to_polynomial("(-3 + (-1 * %i18) + %n)", c) == n - Polynomial.constant(6.5)
    assert any("[0, 8)" in a for a in c.assumptions)
    with pytest.raises(NotPolynomial):
        to_polynomial("%big", c)


# -- a function's phi web is read once per value, within a budget ---------------------------------

import contextlib
import signal

from ccls.readers.scev import BudgetExhausted, ReadingBudget, ValueTable


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail (instead of hanging) when the body runs longer than `seconds`."""
    def expire(*_):
        raise TimeoutError(f"took more than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def if_else_chain(depth: int):
    """opt-19's values for `s = n; if (a[k]) s += 2k+1; else s += 2k+2;` repeated `depth` times
    (issue 17's gen_phichain.py): each merge %s.k reads both arms, and each arm reads %s.(k-1)."""
    values, phis = {}, {}
    for k in range(depth):
        before = "%n" if k == 0 else f"%s.{k - 1}"
        values[f"then.{k}"] = f"({2 * k + 1} + {before})"
        values[f"else.{k}"] = f"({2 * k + 2} + {before})"
        values[f"s.{k}"] = f"%s.{k}"
        phis[f"s.{k}"] = [f"%then.{k}", f"%else.{k}"]
    return values, phis


def test_a_chain_of_if_else_merges_is_resolved_once_per_value():
    # 1000 merges: 2^1000 paths for a resolver without a memo (it took 57 s at 18), deeper than
    # Python's recursion limit for one that recursed through them, and 1000 notes to pass on
    depth = 1000
    values, phis = if_else_chain(depth)
    budget = ReadingBudget()
    c = ScevContext({"n"}, values, phis, set(), budget=budget)
    with deadline(10):
        p = to_polynomial(f"(-1 + (zext i32 %s.{depth - 1} to i64))", c)
    # each merge adds the mean of its arms, 2k + 1.5
    assert p == n - 1 + sum(Fraction(4 * k + 3, 2) for k in range(depth))
    assert budget.steps < 40 * depth  # linear in the chain
    assert not budget.exhausted
    assert len(c.assumptions) == depth and c.assumptions[0].startswith("%s.0, merging 2 computed values")


def test_a_shared_memo_replays_its_notes_in_every_context_that_uses_it():
    values, phis = if_else_chain(3)
    table = ValueTable()
    first = ScevContext({"n"}, values, phis, set(), memo=table)
    second = ScevContext({"n"}, values, phis, set(), memo=table)
    assert to_polynomial("%s.2", first) == to_polynomial("%s.2", second)
    assert first.assumptions and first.assumptions == second.assumptions
    assert set(table.values) >= {"s.0", "s.1", "s.2"}


def test_a_value_carried_round_a_loop_is_read_from_outside_its_cycle_whoever_asks_first():
    # %x = phi [%y.next, …], [%start, …]; %y = phi [%x.next, …], [%m.plus, …]: x and y feed each
    # other (a state machine's variables), so each takes only the value entering from outside.
    values = {"y.next": "(1 + %y)", "start": "(2 + %n)", "x.next": "(3 + %x)", "m.plus": "(4 + %n)",
              "x": "%x", "y": "%y"}
    phis = {"x": ["%y.next", "%start"], "y": ["%x.next", "%m.plus"]}
    answers = []
    for order in (("x", "y"), ("y", "x")):
        c = ScevContext({"n"}, values, phis, set())
        answers.append({name: to_polynomial(f"%{name}", c) for name in order})
    assert answers[0] == answers[1] == {"x": n + 2, "y": n + 4}


def test_a_reading_over_its_budget_stops_with_budget_exhausted_not_a_guess():
    values, phis = if_else_chain(30)
    c = ScevContext({"n"}, values, phis, set(), budget=ReadingBudget(max_steps=20))
    with pytest.raises(BudgetExhausted):
        to_polynomial("%s.29", c)
    with pytest.raises(BudgetExhausted):  # and stays spent
        to_polynomial("(1 + %n)", c)
    assert not c.budget.over_time  # spent by its steps: the same on any machine


def test_a_share_of_the_budget_stops_its_part_alone_and_counts_as_spent():
    budget = ReadingBudget(max_steps=100)
    budget.spend(30)
    part = budget.share(50)
    assert part.max_steps == 50 and not part.exhausted
    with pytest.raises(BudgetExhausted):
        part.spend(51)
    assert part.exhausted and not budget.exhausted  # the rest of the reading goes on
    budget.absorb(part)
    assert budget.steps == 81
    assert budget.share(50).max_steps == 19  # never more than is left
    with pytest.raises(BudgetExhausted):
        budget.spend(20)
    assert budget.share(50).exhausted


def test_a_do_while_runs_to_the_operand_of_max_that_grows_with_the_sizes():
    # opt-19 on xxHash's `do { …; p += 16; } while (p < input + len - 15)`: the loop runs at least
    # once, so its end is max(input + 16, input + len - 15); the second exceeds the first by len - 31.
    text = ("((-1 + (-1 * (ptrtoint ptr %input to i64)) + ((16 + (ptrtoint ptr %input to i64)) umax "
            "(-15 + (ptrtoint ptr %input to i64) + %len))) /u 16)")
    c = ctx(params={"input", "len"})
    backedges = to_polynomial(text, c)
    assert backedges.symbols == {"len"}
    assert (backedges + 1).evaluate({"len": 1600}) == pytest.approx(1600 / 16, abs=1)
    # two sizes, neither larger whatever they are: the bare one, as before
    assert to_polynomial("((8 + %p) umax %end)", ctx(params={"p", "end"})) == Polynomial.symbol("end")


def test_a_value_modulo_a_small_power_of_two_is_its_mean_whatever_the_value():
    # the remainder loop of `do … while (--len > 0)` unrolled by 4, len loaded (opt-19)
    c = ctx()
    assert to_polynomial("(-1 + (zext i2 (trunc i16 %len.loaded to i2) to i32))<nsw>", c) == Polynomial.constant(0.5)
    assert "value modulo 4 taken as its mean 1.5" in c.assumptions


def test_a_minimum_with_a_constant_is_at_most_that_constant_whatever_the_other_operand():
    # opt-19 on zlib's inflate(): a bit-pulling loop's bound; %have is loaded
    c = ctx()
    assert to_polynomial("(1 + (31 umin (zext i32 %have to i64)) + %n)", c) == n + 32
    assert any("umin of a bound taken as its constant operand 31" in a for a in c.assumptions)
    with pytest.raises(NotPolynomial):  # a maximum is at least its constant: no bound
        to_polynomial("(31 umax (zext i32 %have to i64))", ctx())


def test_an_expression_nested_too_deeply_to_read_is_not_a_polynomial_not_a_crash():
    deep = "(1 + " * 5000 + "%n" + ")" * 5000
    with pytest.raises(NotPolynomial):
        to_polynomial(deep, ctx())


def test_the_time_budget_runs_from_the_first_step_and_stops_a_long_reading():
    import time
    budget = ReadingBudget(max_seconds=0.02)
    time.sleep(0.05)  # reading the instructions: not the analysis, not counted
    budget.spend()
    with pytest.raises(BudgetExhausted, match=r"analysis stopped after \d+ ms"):
        while True:
            budget.spend()
    assert budget.exhausted and budget.over_time and budget.elapsed_seconds() >= 0.02
