"""How many iterations to take for loops of unknown count nested in one another.

A loop whose count no analysis finds is assumed to run the configured default D times per
entry: an amount of work, stated as a guess. Nested, those guesses would multiply (D^k for k
such loops: 10^6 and beyond), although such nests in real code mostly share one amount of work
between their levels: a merge or a tokenizer advances one index in its inner and outer loops, a
search inside a scan stops where the scan resumes. So a nest of k unknown loops is taken to run
its innermost body D times per entry in all, D^(1/k) at each level; a lone unknown loop keeps D.
A loop taken to run a worst case below D (a type's range, an array's length: `TripCount.worst_case`)
is as much a guess, and a level of the nest like them: it runs the lesser of its worst case and
its level's share. Either way the choice is stated, and the default stays the one number a user sets.

Across a call the same holds (`across_call`, applied to the inclusive cost): whether the compiler
inlined a function must not change the estimate, so a call inside such loops to a function whose
own such loops are open from its entry is taken as one nest with them.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Callable

from ccls.model import Loop
from ccls.polynomial import Polynomial


def share_unknown_nests(loops: dict[str, Loop], default: int) -> list[str]:
    """Replaces the default count of each unknown loop nested with other unknown loops by its
    share of the nest's D; the notes that say so (one per nest)."""
    unknown = {key for key, loop in loops.items()
               if loop.trip_count.kind == "unknown" or loop.trip_count.is_named_guess}
    if not unknown or default <= 1:
        return []
    children: dict[str | None, list[str]] = {}
    for key, loop in loops.items():
        children.setdefault(loop.parent if loop.parent in loops else None, []).append(key)

    def inside(key: str) -> set[str]:
        return {key}.union(*(inside(child) for child in children.get(key, ())))

    def outside(key: str) -> set[str]:
        out = set()
        while (key := loops[key].parent) in loops:
            out.add(key)
        return out

    # Worst cases join a nest that holds an unknown loop (alone, nested bounds are left as they are).
    unknown |= {key for key, loop in loops.items() if loop.trip_count.worst_case
                and loop.trip_count.iterations.constant_value() is not None
                and (inside(key) | outside(key)) & unknown}
    if len(unknown) < 2:
        return []

    def above(key: str | None) -> int:  # unknown loops from the outermost down to `key`
        count = 0
        while key is not None:
            count += key in unknown
            key = loops[key].parent if loops[key].parent in loops else None
        return count

    def below(key: str) -> int:  # the most unknown loops on one path from `key` inward
        return (key in unknown) + max((below(child) for child in children.get(key, ())), default=0)

    def level_count(key: str) -> int:  # guessed loops on the deepest path through `key`
        return above(key) + below(key) - 1

    # A worst case no larger than its level's share is left as it is, and is no level.
    while small := {key for key in unknown if loops[key].trip_count.worst_case
                    and loops[key].trip_count.iterations.constant_value() <= default ** (1 / level_count(key))}:
        unknown -= small
    levels = {key: level_count(key) for key in unknown}
    notes: list[str] = []
    nests: dict[str, list[str]] = {}
    for key in sorted((k for k in loops if k in unknown), key=lambda k: loops[k].depth):  # stable: the loops' order
        if levels[key] < 2:
            continue
        each = Fraction(round(default ** (1 / levels[key]), 2)).limit_denominator(100)
        loop = loops[key]
        share = Polynomial.constant(each)
        if loop.trip_count.is_named_guess:  # its name kept, at its share of the nest: D^(1/k) of D
            share = loop.trip_count.iterations * (each / default)
        loops[key] = replace(loop, trip_count=replace(loop.trip_count, iterations=share))
        outermost = key
        while loops[outermost].parent in loops:
            outermost = loops[outermost].parent
        nests.setdefault(outermost, []).append(key)
    for keys in nests.values():
        deepest = max(levels[k] for k in keys)
        lines = ", ".join(str(loops[k].line) if loops[k].line else f"%{k}" for k in keys)
        what = "unknown" if not any(loops[k].trip_count.worst_case for k in keys) else "unknown or only a worst case"
        if any(loops[k].trip_count.is_named_guess for k in keys):  # their names kept in the notes above
            what += " (or named by the data, at the default)"
        notes.append(f"loops at lines {lines}: counts {what} and nested up to {deepest} deep: the nest taken to "
                     f"run its innermost body {default} times per entry in all ({default ** (1 / deepest):.3g} per "
                     f"level), not {default}^{deepest}")
    return notes


# Across a call. Whether the compiler inlined a function must not change the estimate: a call
# inside loops of unknown count, to a function whose cost comes partly from its own such loops,
# is one nest with them (`across_call`).

def is_guessed(loop: Loop) -> bool:
    """A loop whose count is a guess: unknown (the default) or only a worst case (`TripCount.worst_case`)."""
    return loop.trip_count.kind == "unknown" or loop.trip_count.worst_case or loop.trip_count.is_named_guess


def guessed_around(loop_id: str | None, loops: dict[str, Loop],
                   value: Callable[[str], float]) -> tuple[int, float, bool]:
    """The loops of guessed count enclosing `loop_id` (itself included): how many, the product of
    their counts (as they are, nest-shared) at the values `value` gives, and whether the nest is
    open from the function's entry: no loop of known count encloses the outermost of them
    (outside any loop: open; inside known loops only: not). Only an open nest continues the
    guessed loops a caller runs it in; one inside a known loop restarts at each of its
    iterations (a walk per item)."""
    depth, product, closed, start = 0, 1.0, False, loop_id
    while loop_id is not None and loop_id in loops:
        loop = loops[loop_id]
        if is_guessed(loop):
            iterations = loop.trip_count.iterations
            depth += 1
            product *= max(1.0, iterations.evaluate({s: value(s) for s in iterations.symbols}))
            closed = False
        else:
            closed = True
        loop_id = loop.parent
    return depth, product, not closed and (depth > 0 or start is None)


def across_call(k: int, around: float, m: int, nest: float, inside: float, default: int) -> tuple[float, float]:
    """The factors on a callee's (inclusive) cost for calls made inside k ≥ 1 loops of guessed
    count of the caller (their counts' product: `around`), where m ≥ 1 levels of the callee's
    cost are its own guessed loops, through its callees too (their deepest path, product `nest`),
    and `inside` is the share of its cost that runs in them. Inlined, the k + m loops would be one
    nest, running its innermost body D times in all, D^(1/(k+m)) per level (`share_unknown_nests`);
    apart, the caller's levels give D and the callee's D again. So, as one nest:

    - the part inside the callee's guessed loops runs D times in all, not D × D: factor
      D / (around × nest), 1/D for two full nests;
    - the rest runs once per iteration of the caller's k levels, which give D^(k/(k+m)) instead
      of `around`: factor D^(−m/(k+m)) for a full nest.

    Neither factor exceeds 1 (a nest already below D is left as it is). Approximations, stated:
    the call is taken to sit in the caller's deepest guessed level at the site with the most
    such levels, and the callee's guessed loops to be one path (its deepest). Returns (the factor
    on the callee's cost per call, the product of the joint path's counts per caller entry)."""
    if k < 1 or m < 1 or default <= 1:
        return 1.0, around * nest
    in_nest = min(1.0, default / (around * nest))
    rest = min(1.0, default ** (k / (k + m)) / around)
    return inside * in_nest + (1.0 - inside) * rest, min(around * nest, float(max(default, 1)))
