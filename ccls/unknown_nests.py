"""How many iterations to take for loops of unknown count nested in one another.

A loop whose count no analysis finds is assumed to run the configured default D times per
entry: an amount of work, stated as a guess. Nested, those guesses would multiply (D^k for k
such loops: 10^6 and beyond), although such nests in real code mostly share one amount of work
between their levels: a merge or a tokenizer advances one index in its inner and outer loops, a
search inside a scan stops where the scan resumes. So a nest of k unknown loops is taken to run
its innermost body D times per entry in all, D^(1/k) at each level; a lone unknown loop keeps D.
Either way the choice is stated, and the default stays the one number a user sets.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from ccls.model import Loop
from ccls.polynomial import Polynomial


def share_unknown_nests(loops: dict[str, Loop], default: int) -> list[str]:
    """Replaces the default count of each unknown loop nested with other unknown loops by its
    share of the nest's D; the notes that say so (one per nest)."""
    unknown = {key for key, loop in loops.items() if loop.trip_count.kind == "unknown"}
    if len(unknown) < 2 or default <= 1:
        return []
    children: dict[str | None, list[str]] = {}
    for key, loop in loops.items():
        children.setdefault(loop.parent if loop.parent in loops else None, []).append(key)

    def above(key: str | None) -> int:  # unknown loops from the outermost down to `key`
        count = 0
        while key is not None:
            count += key in unknown
            key = loops[key].parent if loops[key].parent in loops else None
        return count

    def below(key: str) -> int:  # the most unknown loops on one path from `key` inward
        return (key in unknown) + max((below(child) for child in children.get(key, ())), default=0)

    levels = {key: above(key) + below(key) - 1 for key in unknown}
    notes: list[str] = []
    nests: dict[str, list[str]] = {}
    for key in sorted((k for k in loops if k in unknown), key=lambda k: loops[k].depth):  # stable: the loops' order
        if levels[key] < 2:
            continue
        share = Fraction(round(default ** (1 / levels[key]), 2)).limit_denominator(100)
        loop = loops[key]
        loops[key] = replace(loop, trip_count=replace(loop.trip_count, iterations=Polynomial.constant(share)))
        outermost = key
        while loops[outermost].parent in loops:
            outermost = loops[outermost].parent
        nests.setdefault(outermost, []).append(key)
    for keys in nests.values():
        deepest = max(levels[k] for k in keys)
        lines = ", ".join(str(loops[k].line) if loops[k].line else f"%{k}" for k in keys)
        notes.append(f"loops at lines {lines}: counts unknown and nested up to {deepest} deep: the nest taken to "
                     f"run its innermost body {default} times per entry in all ({default ** (1 / deepest):.3g} per "
                     f"level), not {default}^{deepest}")
    return notes
