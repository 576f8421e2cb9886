"""Nests of loops of unknown count share the default instead of multiplying it (inline loops)."""
from __future__ import annotations

from ccls.model import Loop, TripCount
from ccls.polynomial import Polynomial
from ccls.unknown_nests import share_unknown_nests


def _loop(key: str, parent: str | None, depth: int, kind: str = "unknown", n: int = 100) -> Loop:
    return Loop(key, parent, depth, TripCount(kind, Polynomial.constant(n)), line=depth * 10)


def _trips(loops: dict[str, Loop]) -> dict[str, float]:
    return {key: float(loop.trip_count.iterations.constant_value()) for key, loop in loops.items()}


def test_a_lone_unknown_loop_keeps_the_default():
    loops = {"a": _loop("a", None, 1), "b": _loop("b", "a", 2, "constant", 8), "c": _loop("c", None, 1)}
    assert share_unknown_nests(loops, 100) == []
    assert _trips(loops) == {"a": 100.0, "b": 8.0, "c": 100.0}


def test_each_path_of_a_nest_runs_its_innermost_body_at_most_the_default():
    loops = {"a": _loop("a", None, 1), "k": _loop("k", "a", 2, "constant", 8), "b": _loop("b", "k", 3),
             "c": _loop("c", "b", 4), "d": _loop("d", "a", 2)}
    (note,) = share_unknown_nests(loops, 100)
    trips = _trips(loops)
    assert trips["k"] == 8.0  # a known count is never touched
    assert trips["a"] == trips["b"] == trips["c"] == 4.64  # three unknown deep: 100^(1/3) each
    assert trips["d"] == 10.0  # its path has two unknown loops: 4.64 × 10 ≤ 100
    assert note.startswith("loops at lines 10, 20, 30, 40: counts unknown and nested up to 3 deep")
    assert "100 times per entry in all (4.64 per level), not 100^3" in note


def test_a_default_of_one_is_left_alone():
    loops = {"a": _loop("a", None, 1, n=1), "b": _loop("b", "a", 2, n=1)}
    assert share_unknown_nests(loops, 1) == [] and _trips(loops) == {"a": 1.0, "b": 1.0}


def test_a_worst_case_taken_as_a_count_is_a_level_of_the_unknown_nest_around_it():
    # for (i = 0; i < info->n; i++) for (j = i + 1; j < info->n; j++) over a 100-slot array:
    # the inner count is only the array's length, as much a guess as the outer default
    loops = {"a": _loop("a", None, 1), "b": _loop("b", "a", 2, "bounded", 100)}
    loops["b"] = Loop("b", "a", 2, TripCount("bounded", Polynomial.constant(100), worst_case=True), line=20)
    (note,) = share_unknown_nests(loops, 100)
    assert _trips(loops) == {"a": 10.0, "b": 10.0}
    assert "counts unknown or only a worst case and nested up to 2 deep" in note
    # a worst case below its share keeps it and is no level; one with no unknown loop around or
    # inside is left alone
    loops = {"a": _loop("a", None, 1), "b": Loop("b", "a", 2, TripCount("bounded", Polynomial.constant(8),
                                                                         worst_case=True), line=20)}
    assert share_unknown_nests(loops, 100) == []
    assert _trips(loops) == {"a": 100.0, "b": 8.0}
    alone = {"a": Loop("a", None, 1, TripCount("bounded", Polynomial.constant(100), worst_case=True)),
             "b": Loop("b", "a", 2, TripCount("bounded", Polynomial.constant(100), worst_case=True))}
    assert share_unknown_nests(alone, 100) == [] and _trips(alone) == {"a": 100.0, "b": 100.0}
