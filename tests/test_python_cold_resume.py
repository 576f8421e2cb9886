"""Python: calls named by the module function they reach (``self.step`` → ``Walker.step``), and
a caller charged a cold restart (`py.work.resume`) for each return from a call long enough to
cycle L2 (`ccls.cold_resume`)."""
from __future__ import annotations

import textwrap

import pytest

from ccls.cold_resume import RESUME, resume_threshold_cu, with_cold_resumes
from ccls.engine import ReportSettings, count_source, report
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.tables import load_tables

TABLES = load_tables()
PY = TABLES.cost["cpython-3.11"]


def analyse(source: str):
    options = AnalysisOptions()
    counted = count_source(SourceFile("/src/example.py", textwrap.dedent(source)), options, TABLES)
    return {r.counted.name: r for r in report(counted.functions, TABLES, ReportSettings(), options)}


def test_the_threshold_is_as_many_typical_bytecodes_as_l2_has_lines_and_the_resume_cost_is_measured():
    lines = PY.cache.l2_bytes / PY.cache.line_bytes  # 8192 on the measuring machine
    assert resume_threshold_cu(PY) == pytest.approx(lines * PY.classes["py.other"].cu)
    entry = PY.classes[RESUME]  # its own key, not a fallback to py.work / py
    assert entry.method == "measured" and "cpython_builtins.py" in entry.source
    assert 20 * PY.classes["py.call"].cu < entry.cu < 5000  # ~100s of ns: misses, not a bytecode


# A call long enough to cycle L2: 200,000 iterations.
LONG_WORK = """
        def long_work():
            s = 0
            for i in range(200000):
                s += i
            return s
"""


def test_a_return_from_a_long_call_costs_the_caller_a_cold_restart_and_a_short_one_does_not():
    r = analyse(LONG_WORK + """
        def short_work():
            return 1

        def caller():
            a = long_work()
            b = short_work()
            return a + b

        def caller_of_short():
            return short_work() + short_work()
    """)
    caller, short = r["caller"], r["caller_of_short"]
    assert caller.counts[RESUME] == 1  # long_work: 200,000 iterations; short_work: none
    assert RESUME not in short.counts
    (resume,) = [b for b in caller.breakdown if b.cls == RESUME]
    assert resume.known and resume.cu == pytest.approx(PY.classes[RESUME].cu)
    assert any("returns from long_work" in a and RESUME in a for a in caller.assumptions)
    # the caller's inclusive cost carries its own cold restart once, beside the callees' costs
    assert caller.inclusive_metrics.cu == pytest.approx(
        caller.metrics.cu + r["long_work"].metrics.cu + r["short_work"].metrics.cu)


def test_each_return_inside_a_loop_is_cold_and_a_recursive_call_is_not_charged():
    r = analyse(LONG_WORK + """
        def repeat():
            for k in range(7):
                long_work()

        def recurse(n):
            for i in range(100000):
                n += i
            return recurse(n - 1)
    """)
    assert r["repeat"].counts[RESUME] == 7
    assert RESUME not in r["recurse"].counts


def test_a_callee_long_only_by_loops_of_guessed_count_is_not_charged():
    r = analyse("""
        def chase(node):
            while node is not None:
                node = node.next
            return node

        def caller(head):
            return chase(head)
    """)
    assert r["chase"].metrics.cu > 0
    assert RESUME not in r["caller"].counts  # chase's cost is its while loop, assumed 100 times


def test_self_method_calls_reach_the_class_method_for_the_inclusive_cost():
    r = analyse("""
        class Walker:
            def __init__(self):
                self.steps = 0

            def step(self):
                self.steps += 1

            def walk(self):
                for i in range(10):
                    self.step()

        def make():
            return Walker()
    """)
    walk = r["Walker.walk"]
    assert walk.unknown_callees == ["range"]  # a builtin: its cost is the reader's, not a callee's
    assert walk.inclusive_metrics.cu == pytest.approx(walk.metrics.cu + 10 * r["Walker.step"].metrics.cu)
    make = r["make"]  # calling the class runs its __init__
    assert "Walker" not in make.unknown_callees
    assert make.inclusive_metrics.cu == pytest.approx(make.metrics.cu + r["Walker.__init__"].metrics.cu)


def test_a_method_name_two_classes_define_is_left_unresolved():
    r = analyse("""
        class A:
            def go(self):
                return 1

        class B:
            def go(self):
                return 2

        def use(x):
            return x.go()
    """)
    assert r["use"].unknown_callees == ["x.go"]


def test_compiled_functions_are_never_charged():
    from dataclasses import replace

    from ccls.model import CountedFunction
    from ccls.polynomial import Polynomial
    fn = CountedFunction(name="f", display_name="f", file="/src/f.c", line=1, end_line=3, language="c",
                         arch="x86_64", parameters=[], static_counts={}, counts={}, machine_instructions=None,
                         loops=[], line_counts={}, calls={"g": Polynomial.constant(1)}, sites=[], assumptions=[])
    assert with_cold_resumes(fn, {"g": 1e12}, 1.0) is fn
    charged = with_cold_resumes(replace(fn, language="python"), {"g": 1e12}, 1.0)
    assert charged.counts[RESUME] == Polynomial.constant(1)
