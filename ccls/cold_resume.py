"""Returning to an interpreted caller after a long call: the caller pays for a cold restart.

A callee that runs long enough to touch as many cache lines as L2 holds evicts its caller's
working set. CPython's caller then refetches, from L3 or DRAM, the frame it resumes, its code
and constants, the dict entries of the globals it loads and the objects it reads: hundreds of ns
for the next few statements, where a warm caller takes tens (measured as ``py.work.resume`` by
cost_tables/derive/cpython_builtins.py). A compiled caller resumes from a few stack lines and
registers, so only the Python front end's functions are charged. The callee's cost must be known:
a function of the same run (or a peer) called by name, its inclusive cost with its own callees.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ccls.model import CountedFunction
from ccls.polynomial import Polynomial
from ccls.table_types import CostTable

RESUME = "py.work.resume"
BYTECODE_CLASS = "py.other"  # what one typical bytecode costs, for the threshold


def resume_threshold_cu(table: CostTable) -> float:
    """The least inclusive CU of a call that can have cycled L2: as many bytecodes as L2 has
    lines, at about one new line per bytecode (a walk over objects touches ~0.3)."""
    bytecode = table.lookup(BYTECODE_CLASS)
    lines = table.cache.l2_bytes / table.cache.line_bytes
    return lines * (bytecode.cu if bytecode is not None else 1.0)


def with_cold_resumes(fn: CountedFunction, inclusive_cu: Mapping[str, float], threshold_cu: float) -> CountedFunction:
    """``fn`` with one ``py.work.resume`` per call to a callee whose inclusive CU reaches
    ``threshold_cu`` (recursive calls left out: their cost is cut from the inclusive one)."""
    if fn.language != "python":
        return fn
    own = {fn.name, fn.display_name}
    long_calls = sorted(c for c in fn.calls
                        if c and c not in own and inclusive_cu.get(c, 0.0) >= threshold_cu)
    if not long_calls:
        return fn
    returns = sum((fn.calls[c] for c in long_calls), Polynomial.constant(0))
    counts = {**fn.counts, RESUME: fn.counts.get(RESUME, Polynomial.constant(0)) + returns}
    point = fn.at_point
    if point is not None:
        resumed = sum(point.calls.get(c, 0.0) for c in long_calls)
        point = replace(point, counts={**point.counts, RESUME: point.counts.get(RESUME, 0.0) + resumed})
    note = (f"returns from {', '.join(long_calls)} (each {threshold_cu:.3g} CU or more with its callees: long "
            f"enough to evict this function's data from L2) costed as {RESUME} each: the caller's frame, code "
            f"and the objects it reads next are fetched again")
    return replace(fn, counts=counts, at_point=point, assumptions=fn.assumptions + [note])
