"""Python front end: the two arms of a branch on data are exclusive, so each runs on a share of
the passes (half each; all but never for an arm that raises); a branch on sizes runs both."""
from __future__ import annotations

import textwrap
from fractions import Fraction

from ccls.counting import block_executions
from ccls.model import FunctionIR
from ccls.readers.python_bytecode import is_work_loop, read_module


def read(source: str) -> dict[str, FunctionIR]:
    functions, errors = read_module(textwrap.dedent(source), "/src/example.py")
    assert errors == []
    return {f.name: f for f in functions}


def runs_by_class(f: FunctionIR, cls: str) -> Fraction:
    """How often instructions of one class run per call (n and loop counts evaluated at 10)."""
    total = Fraction(0)
    for b in f.blocks:
        runs = block_executions(b, f.loops)
        values = {s: 10 for s in runs.symbols}
        total += Fraction(runs.evaluate(values)).limit_denominator(1 << 24) * sum(i.cls == cls for i in b.instructions)
    return total


def test_the_arms_of_an_if_else_on_data_share_its_runs():
    f = read("""
        def pick(x, a):
            if x.ok:
                y = a * 2
                y = y * 3
            else:
                y = a - 1
            return y
    """)["pick"]
    assert runs_by_class(f, "py.binary_mul") == 1  # two multiplications, on half of the calls
    assert runs_by_class(f, "py.binary_add") == Fraction(1, 2)
    assert runs_by_class(f, "py.return") == 1  # the join runs on every call


def test_an_arm_that_raises_is_cold_and_the_rest_runs_every_time():
    f = read("""
        def guard(u, lo):
            if u < lo.v:
                raise ValueError("out of range")
            return u + 1
    """)["guard"]
    assert runs_by_class(f, "py.binary_add") == 1
    raising = [b for b in f.blocks if any(i.opcode == "RAISE_VARARGS" for i in b.instructions)]
    assert raising and all(b.frequency < Fraction(1, 1000) for b in raising)


def test_a_branch_on_sizes_runs_both_arms_as_the_trip_counts_already_decide():
    f = read("""
        def sized(n):
            t = 0
            for i in range(n):
                if i < 3:
                    t += 1
                else:
                    t -= 1
            return t
    """)["sized"]
    assert all(b.frequency == 1 for b in f.blocks)
    assert runs_by_class(f, "py.binary_add") == 20  # both arms, on each of the 10 iterations


def test_what_is_spliced_into_an_arm_runs_as_often_as_the_arm():
    f = read("""
        def loop(xs, n):
            t = 0
            for x in xs:
                if x.ok:
                    t += sum([v for v in range(n)])
            return t
    """)["loop"]
    comprehension = [lp for lp in f.loops.values() if ".L" in lp.id and not is_work_loop(lp.id)]
    assert comprehension and all(lp.entry_frequency == Fraction(1, 2) for lp in comprehension)
    work = [lp for lp in f.loops.values() if is_work_loop(lp.id)]
    assert work and all(lp.entry_frequency == Fraction(1, 2) for lp in work)
    # 10 items, half of them ok, each building 10 items: 50 appends
    assert runs_by_class(f, "py.build.append") == 50


def test_a_loop_exit_on_data_leaves_the_rest_of_the_iteration_whole():
    f = read("""
        def first(xs):
            for x in xs:
                if x.done:
                    break
                x.step()
            return x
    """)["first"]
    # The exit is the trip count's business (the mean of an exit equally likely anywhere, 5.5 of
    # 10 iterations), not a share: the rest of the iteration runs on each of them.
    assert all(b.frequency == 1 for b in f.blocks if b.loop is not None)
    assert runs_by_class(f, "py.call") == Fraction(11, 2)
    # Once out, the loop was left by the break or by running out of items: half each.
    (after_break,) = [b for b in f.blocks if b.loop is None and [i.opcode for i in b.instructions][-1:] == ["JUMP_FORWARD"]]
    assert after_break.frequency == Fraction(1, 2)


def test_the_test_before_a_while_loop_is_the_loop_s_own_and_never_halves_it():
    f = read("""
        def collatz_steps(x):
            steps = 0
            while x != 1:
                x = x // 2 if x % 2 == 0 else 3 * x + 1
                steps += 1
            return steps
    """)["collatz_steps"]
    (loop,) = f.loops.values()
    assert loop.entry_frequency == 1 and loop.trip_count.kind == "unknown"
    # x % 2 on each of the 100 (default) iterations and x // 2 on half of them; 3 * x on the other half
    assert runs_by_class(f, "py.binary_div") == 150 and runs_by_class(f, "py.binary_mul") == 50
