"""Loops of unknown count nested across a call share the default as they do inside one function
(`ccls.unknown_nests.across_call`, in the inclusive cost: `ccls.engine._inclusive_metrics`)."""
from __future__ import annotations

import pytest

from ccls.counting import count_function
from ccls.engine import _inclusive_metrics
from ccls.model import BasicBlock, CountedFunction, FunctionIR, Instruction, Loop, Metrics, TripCount
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.serialize import counted_from_json, counted_to_json
from ccls.service.units import shift_lines
from ccls.unknown_nests import across_call, guessed_around

C = Polynomial.constant


def test_the_factor_for_two_full_nests():
    # k = 1 around the call (100), m = 1 in the callee (100): its part inside its nest runs 100
    # times in all, not 100 × 100; the rest once per iteration of the caller's level, 10 not 100
    assert across_call(1, 100.0, 1, 100.0, 1.0, 100) == (pytest.approx(0.01), 100.0)
    assert across_call(1, 100.0, 1, 100.0, 0.0, 100)[0] == pytest.approx(0.1)
    assert across_call(1, 100.0, 1, 100.0, 0.5, 100)[0] == pytest.approx(0.5 * 0.01 + 0.5 * 0.1)
    # k = 2, m = 1: the caller's two levels give 100^(2/3) = 21.5 of the three
    assert across_call(2, 100.0, 1, 100.0, 0.0, 100)[0] == pytest.approx(100 ** (2 / 3) / 100)
    # nothing to share: no guessed loop around the call, none in the callee, or a default of 1
    assert across_call(0, 1.0, 1, 100.0, 1.0, 100) == (1.0, 100.0)
    assert across_call(1, 100.0, 0, 1.0, 0.0, 100) == (1.0, 100.0)
    assert across_call(1, 1.0, 1, 1.0, 1.0, 1)[0] == 1.0
    # a worst case of 8 around the call: the joint nest is capped at 100 (100 / 800), the rest
    # keeps its 8 (100^(1/2) = 10 is more)
    assert across_call(1, 8.0, 1, 100.0, 1.0, 100) == (pytest.approx(0.125), 100.0)
    assert across_call(1, 8.0, 1, 100.0, 0.0, 100)[0] == 1.0
    # a joint nest already below the default is left as it is
    assert across_call(1, 4.0, 1, 8.0, 1.0, 100) == (1.0, 32.0)


def _loop(key: str, parent: str | None, depth: int, kind: str = "unknown", n: int = 100,
          worst_case: bool = False) -> Loop:
    return Loop(key, parent, depth, TripCount(kind, C(n), worst_case=worst_case), line=depth * 10)


def test_guessed_loops_around_a_block_and_whether_their_nest_is_open():
    loops = {"u": _loop("u", None, 1, n=10), "k": _loop("k", "u", 2, "constant", 8), "v": _loop("v", "k", 3, n=10),
             "t": _loop("t", None, 1, "constant", 16), "w": _loop("w", "t", 2, "bounded", 50, worst_case=True),
             "b": _loop("b", None, 1, "bounded", 50)}
    value = lambda symbol: 0.0  # noqa: E731
    assert guessed_around(None, loops, value) == (0, 1.0, True)  # outside any loop: open
    assert guessed_around("u", loops, value) == (1, 10.0, True)
    assert guessed_around("k", loops, value) == (1, 10.0, True)  # a known loop inside a guessed one
    assert guessed_around("v", loops, value) == (2, 100.0, True)
    assert guessed_around("w", loops, value) == (1, 50.0, False)  # a worst case inside a known loop: closed
    assert guessed_around("t", loops, value) == (0, 1.0, False)  # known loops only
    assert guessed_around("b", loops, value) == (0, 1.0, False)  # a bound seen, not a worst case: known


def _fn(name: str, calls: dict[str, float] | None = None, *, guessed: dict[str, tuple[int, float]] | None = None,
        open_in: tuple[str, ...] = (), open_out: tuple[str, ...] = (), nest: tuple[int, float] = (0, 1.0),
        share: float = 0.0) -> CountedFunction:
    calls = calls or {}
    guessed = guessed or {}
    return CountedFunction(
        name=name, display_name=name, file="a.c", line=1, end_line=9, language="c", arch="x86_64", parameters=[],
        static_counts={}, counts={}, machine_instructions=None, loops=[], line_counts={},
        calls={callee: C(times) for callee, times in calls.items()}, sites=[], assumptions=[],
        guessed_calls={callee: (k, around, (6,)) for callee, (k, around) in guessed.items()},  # line 7
        guessed_call_counts={callee: C(calls[callee]) for callee in guessed},
        open_call_counts={callee: (C(calls[callee]) if callee in open_in else C(0),
                                   C(calls[callee]) if callee in open_out else C(0))
                          for callee in set(open_in) | set(open_out)},
        guessed_nest=nest, guessed_share=share)


def _m(cu: float) -> Metrics:
    return Metrics(cu, cu * 2, cu * 3, cu * 4)


def _inclusive(functions: list[CountedFunction], cus: list[float]):
    return _inclusive_metrics(functions, [_m(cu) for cu in cus], AnalysisOptions())


def test_a_call_inside_an_unknown_loop_to_a_function_with_its_own_unknown_loop_is_one_nest():
    # caller: 50 CU of its own; while (?) f();   f: 1000 CU per call, 90% inside its while (?)
    caller = _fn("caller", {"f": 100}, guessed={"f": (1, 100.0)}, open_in=("f",), nest=(1, 100.0), share=1.0)
    f = _fn("f", nest=(1, 100.0), share=0.9)
    (metrics, unknown, notes), (leaf, _, _) = _inclusive([caller, f], [50, 1000])
    assert metrics.cu == pytest.approx(50 + 100 * 1000 * (0.9 * 0.01 + 0.1 * 0.1))  # 1950, not 100,050
    assert metrics.energy_joules == pytest.approx(2 * metrics.cu)  # every metric alike
    assert unknown == [] and leaf is None
    (note,) = notes
    assert note.startswith("calls at line 7 to f inside loops of unknown count: f's own unknown loops taken to "
                           "share the default with them, as if inlined")
    assert "× 0.019" in note
    # the function moved 10 lines down in its file (the language server shifts cached counts): so does the note
    (_, _, (moved,)), _ = _inclusive([shift_lines(caller, 10), f], [50, 1000])
    assert moved.startswith("calls at line 17 to f")


def test_a_callee_without_unknown_loops_and_a_call_outside_them_are_untouched():
    plain = _fn("f")  # no guessed loops of its own
    caller = _fn("caller", {"f": 100}, guessed={"f": (1, 100.0)}, open_in=("f",), nest=(1, 100.0), share=1.0)
    (metrics, _, notes), _ = _inclusive([caller, plain], [50, 1000])
    assert metrics.cu == pytest.approx(50 + 100 * 1000) and notes == []
    looping = _fn("f", nest=(1, 100.0), share=0.9)
    outside = _fn("caller", {"f": 3}, open_out=("f",))  # three calls in straight-line code
    (metrics, _, notes), _ = _inclusive([outside, looping], [50, 1000])
    assert metrics.cu == pytest.approx(50 + 3 * 1000) and notes == []


def test_the_nest_runs_through_callees_and_stops_at_a_known_loop():
    # top: while (?) mid();  mid: c();  (outside any loop)  c: while (?) {...}
    c = _fn("c", nest=(1, 100.0), share=1.0)
    mid = _fn("mid", {"c": 1}, open_out=("c",))
    top = _fn("top", {"mid": 100}, guessed={"mid": (1, 100.0)}, open_in=("mid",), nest=(1, 100.0), share=1.0)
    (incl, _, notes), (mid_incl, _, _), _ = _inclusive([top, mid, c], [50, 10, 1000])
    assert mid_incl.cu == pytest.approx(1010)
    share = 1000 / 1010  # of mid's inclusive CU, inside c's unknown loop
    assert incl.cu == pytest.approx(50 + 100 * 1010 * (share * 0.01 + (1 - share) * 0.1))
    assert len(notes) == 1 and "to mid inside loops" in notes[0]
    # mid calls c inside a loop of known count: c's walk restarts at each of its iterations and
    # does not continue top's loop
    closed = _fn("mid", {"c": 8})  # neither inside guessed loops nor open
    (incl, _, notes), _, _ = _inclusive([top, closed, c], [50, 10, 1000])
    assert incl.cu == pytest.approx(50 + 100 * (10 + 8 * 1000)) and notes == []


def test_recursion_is_still_cut():
    # f: while (?) { f(); g(); }  its call to itself is cut (counted once), g's is one nest with it
    f = _fn("f", {"f": 100, "g": 100}, guessed={"f": (1, 100.0), "g": (1, 100.0)}, open_in=("f", "g"),
            nest=(1, 100.0), share=1.0)
    g = _fn("g", nest=(1, 100.0), share=1.0)
    (f_incl, _, notes), _ = _inclusive([f, g], [50, 1000])
    assert f_incl.cu == pytest.approx(50 + 100 * 1000 * 0.01)
    assert len(notes) == 1 and "to g inside loops" in notes[0]


def test_counting_records_the_guessed_loops_around_calls():
    loops = {"w": Loop("w", None, 1, TripCount("unknown", C(100)), line=4),
             "k": Loop("k", None, 1, TripCount("constant", C(8)), line=8)}
    fn = FunctionIR("caller", "caller", "a.c", 1, 12, "c", "x86_64", blocks=[
        BasicBlock("entry", None, [Instruction("call", line=2, callee="a"), Instruction("add")]),
        BasicBlock("w", "w", [Instruction("call", line=5, callee="f"), Instruction("add"), Instruction("add")]),
        BasicBlock("k", "k", [Instruction("call", line=9, callee="g")]),
    ], loops=loops)
    counted = count_function(fn, None, lambda symbol: 0.0)
    assert counted.guessed_calls == {"f": (1, 100.0, (4,))}  # line 5, 4 after the function's first
    assert counted.guessed_call_counts == {"f": C(100)}
    assert counted.open_call_counts == {"a": (C(0), C(1)), "f": (C(100), C(0))}  # g's calls: in a known loop
    assert counted.guessed_nest == (1, 100.0)
    # instructions run: 2 outside, 300 in the unknown loop, 8 in the known one
    assert counted.guessed_share == pytest.approx(300 / 310)
    assert counted_from_json(counted_to_json(counted)) == counted  # the count cache keeps them
