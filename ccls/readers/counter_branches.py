"""The exact share of each side of a branch on a loop's own counter (`if (i < 16)` in a loop of
64 rounds), where the loop's count, the counter's start and step and the value it is compared
with are all constants.

Such a branch decides on nothing the data can change: which iterations take each side is fixed
by the arithmetic, so its shares are counted, not estimated (LLVM's heuristics give an integer
`<` an even split). Within an innermost loop's body, each block is reached on a set of
iterations: all of them at the header; a branch on the counter passes each side the iterations
whose counter value makes its compare true or false; any other branch passes them all on; a
merge joins them. A side's probability is its share of the iterations that reach the branch,
so a chain `if (i < 16) … else if (i < 32) …` gets 16/64, then 16/48, as the rounds run.

Pure: ScalarEvolution's texts and the loop body's edges in, probabilities out.
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Mapping, Sequence

from ccls.readers.scev import add_recurrence

MAX_ITERATIONS = 1 << 16  # counted one by one: a round-based loop, not a size
_COMPARE = re.compile(r"= icmp (?P<predicate>eq|ne|[su](?:lt|le|gt|ge)) i(?P<bits>\d+) "
                      r"(?P<a>%?(?:\"[^\"]+\"|[-\w.$]+)), (?P<b>%?(?:\"[^\"]+\"|[-\w.$]+))(?:,|$)")
_SWAPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _holds(predicate: str, a: int, b: int, bits: int) -> bool:
    """`icmp predicate` on two integers of `bits` bits."""
    mask = (1 << bits) - 1
    a, b = a & mask, b & mask
    if predicate[0] == "s":  # as two's complement
        a, b = (a - (1 << bits) if a >> (bits - 1) else a), (b - (1 << bits) if b >> (bits - 1) else b)
    relation = predicate if predicate in ("eq", "ne") else predicate[1:]
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[relation]


def _counter_compare(compare_text: str, loop: str, value_scevs: Mapping[str, str]):
    """(start, step, predicate, constant, bits) where `compare_text` compares an add recurrence of
    `loop` with constant start and step against an integer constant; else None."""
    m = _COMPARE.search(compare_text)
    if m is None:
        return None
    predicate, sides = m["predicate"], [m["a"], m["b"]]
    for counter, other, relation in ((sides[0], sides[1], predicate),
                                     (sides[1], sides[0], predicate[:1] * (len(predicate) == 3) + _SWAPPED[predicate[-2:]])):
        recurrence = add_recurrence(value_scevs.get(counter[1:].strip('"'), "")) if counter.startswith("%") else None
        if recurrence is not None and recurrence.constant_start is not None and recurrence.loop == loop \
                and re.fullmatch(r"-?\d+", other):
            return recurrence.constant_start, recurrence.step, relation, int(other), int(m["bits"])
    return None


def counter_branch_probabilities(header: str, body: Sequence[str], iterations: int,
                                 branches: Mapping[str, tuple[str, str, str]],
                                 successors: Mapping[str, Sequence[str]],
                                 value_scevs: Mapping[str, str]) -> dict[tuple[str, str], Fraction]:
    """(block, target) → the share of the block's runs that go to target, for each branch on the
    counter of the innermost loop `header` (its blocks `body`, which runs `iterations` times).
    `branches`: block → (its compare's text, the target when true, the target when false)."""
    if not 0 < iterations <= MAX_ITERATIONS or not any(
            _counter_compare(text, header, value_scevs) for text, _, _ in branches.values()):
        return {}  # no branch on the counter: nothing to count one by one
    inside = set(body)
    edges = {b: [t for t in successors.get(b, ()) if t in inside and t != header] for b in body}
    waiting = {b: 0 for b in body}
    for b in body:
        for t in edges[b]:
            waiting[t] += 1
    reach: dict[str, set[int]] = {b: set() for b in body}
    reach[header] = set(range(iterations))
    ready, out = [header] if waiting.get(header) == 0 else [], {}
    done = 0
    while ready:
        block = ready.pop()
        done += 1
        here = reach[block]
        found = branches.get(block)
        compare = _counter_compare(found[0], header, value_scevs) if found is not None else None
        passed = {t: here for t in edges[block]}
        if compare is not None and header not in found[1:] and found[1] in inside and found[2] in inside \
                and found[1] != found[2]:
            start, step, predicate, constant, bits = compare
            true = {k for k in here if _holds(predicate, start + step * k, constant, bits)}
            passed = {found[1]: true, found[2]: here - true}
            if here:
                out[(block, found[1])] = Fraction(len(true), len(here))
                out[(block, found[2])] = Fraction(len(here) - len(true), len(here))
        for target in edges[block]:
            if target in passed:
                reach[target] = reach[target] | passed[target]
            waiting[target] -= 1
            if waiting[target] == 0:
                ready.append(target)
    return out if done == len(body) else {}  # a cycle no loop explains: nothing said
