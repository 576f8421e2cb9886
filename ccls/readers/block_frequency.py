"""How often each block runs per iteration of its loop (per call, outside loops), and each loop
is entered, from LLVM's static branch probabilities (BranchProbabilityInfo, printed by `opt`).

A loop's trip count says how often its header runs; the blocks (and inner loops) behind a branch
on the data it reads (`if (a[i] > t)`, `switch (state)`) run on the share of iterations (or
calls) that take that branch. LLVM estimates
those shares without running anything (Ball and Larus's heuristics: pointer, integer and float
comparisons, calls, `__builtin_expect`, cold paths to `unreachable`). Within an iteration the
loop is taken to continue: its exit edges are left out and the rest renormalised, so every
block up to the latch runs on every iteration but the last (the trip count already counts the
exit). An inner loop is one node of its parent's body, left by its own exit edges. Branches on
anything else (`n > 0`, a vector loop's minimum, a run-time alias check, the counter) decide on
sizes the trip counts already settle, where the heuristics could only guess: every successor
runs whenever the branch does, as every block did before; no block runs more than once per
iteration. A region whose edges form a cycle no loop explains keeps 1 for all its blocks.
Pure: block graph and probabilities in, fractions out.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping, Sequence


def block_frequencies(blocks: Sequence[str], successors: Mapping[str, Sequence[str]],
                      loops: Mapping[str, tuple[Sequence[str], str | None]],
                      probabilities: Mapping[tuple[str, str], Fraction]
                      ) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """(each block's share of its innermost loop's iterations, or of the calls outside loops;
    each loop's entries per iteration of its parent, or per call). `blocks` in function order,
    the entry first; `loops`: header → (its blocks, inner loops' included; its parent's
    header); `probabilities`: those of the branches that decide on data."""
    innermost: dict[str, str | None] = {b: None for b in blocks}
    for header, (members, _) in sorted(loops.items(), key=lambda item: -len(item[1][0])):
        for block in members:
            innermost[block] = header  # inner loops have fewer blocks: they come later and win

    def node(block: str, region: str | None) -> str | None:
        """What `block` is in `region`'s graph: itself, or the header of the child loop holding
        it; None outside the region."""
        loop, child = innermost.get(block), None
        while loop != region:
            if loop is None:
                return None
            child, loop = loop, loops[loop][1]
        return child if child is not None else block

    block_share: dict[str, Fraction] = {}
    entry_share: dict[str, Fraction] = {}
    for region in (None, *loops):
        members = list(blocks) if region is None else [b for b in loops[region][0] if b in innermost]
        start = region if region is not None else blocks[0] if blocks else None
        children = {h for h in loops if h != region and loops[h][1] == region}
        shares = _region_shares(start, members, children, successors, probabilities,
                                lambda block, region=region: node(block, region)) if start else None
        for n, share in (shares or {}).items():  # a cycle no loop explains: its blocks keep 1
            exact = Fraction(share).limit_denominator(4096)  # the heuristics' own precision is coarser
            (entry_share if n in children else block_share)[n] = exact
    return block_share, entry_share


def _region_shares(start: str, members: list[str], children: set[str], successors: Mapping[str, Sequence[str]],
                   probabilities: Mapping[tuple[str, str], Fraction], node) -> dict[str, float] | None:
    """Each node's runs per run of `start` in one region (a loop's body or the function's, its
    child loops one node each, named by their headers); None where its edges form a cycle."""
    nodes = list(dict.fromkeys(node(m) for m in members))
    flow: dict[str, dict[str, float]] = {n: {} for n in nodes}
    for block in members:
        here = node(block)
        edges = [(node(target), probabilities.get((block, target))) for target in successors.get(block, ())]
        # Exits of the region are left out (the iteration goes on); inside a child loop, so are its own
        # edges; so is a target the loop information does not place in the region (inconsistent input).
        edges = [(there, p) for there, p in edges
                 if there in flow and not (here in children and there == here)]
        total = sum(p for _, p in edges if p is not None)
        for there, p in edges:
            if there != start:  # an edge back to the header ends the iteration
                # Without probabilities (a branch on sizes), every successor runs whenever this block does.
                share = float(p / total) if p is not None and total else 1.0
                flow[here][there] = flow[here].get(there, 0.0) + share
    for n in nodes:  # what enters a child loop leaves it, split between its exits
        weight = sum(flow[n].values())
        if n in children and weight:
            flow[n] = {m: w / weight for m, w in flow[n].items()}
    waiting = {n: 0 for n in nodes}
    for n in nodes:
        for m in flow[n]:
            waiting[m] += 1
    shares = {n: 0.0 for n in nodes}
    shares[start] = 1.0
    ready, done = [n for n in nodes if waiting[n] == 0], 0
    while ready:
        n = ready.pop()
        done += 1
        for m, w in flow[n].items():
            shares[m] = min(1.0, shares[m] + shares[n] * w)  # a block runs at most once per iteration
            waiting[m] -= 1
            if waiting[m] == 0:
                ready.append(m)
    return shares if done == len(nodes) else None


MAX_BLOCKS_FOR_ARMS = 2000  # reachability per branch: quadratic in the blocks
MAX_CASES = 64  # a switch's cases compared pairwise


class _ForwardWalks:
    """Blocks as bits of one integer. `forward(block)`: its successors less the edges back to a
    loop's header (`inside`: each header's blocks); `reach(block)`: the bits of every block forward
    edges lead to from it, itself included; each walk stops where an earlier one was complete
    (chains of branches share their targets: linear, not quadratic, in the blocks)."""

    def __init__(self, successors: Mapping[str, Sequence[str]], inside: Mapping[str, set[str]]):
        self.successors, self.inside = successors, inside
        names = list(dict.fromkeys([*successors, *(t for ts in successors.values() for t in ts)]))
        self.bit = {name: 1 << i for i, name in enumerate(names)}
        self._names = names
        self._next = {name: [self.bit[t] for t in self.forward(name)] for name in successors}
        self._index = {1 << i: name for i, name in enumerate(names)}
        self._reached: dict[int, int] = {}

    def forward(self, block: str) -> list[str]:
        return [t for t in self.successors.get(block, ()) if not (t in self.inside and block in self.inside[t])]

    def reach(self, block: str) -> int:
        start = self.bit[block]
        if start not in self._reached:
            seen, pending = 0, [start]
            while pending:
                node = pending.pop()
                if seen & node:
                    continue
                done = self._reached.get(node)
                if done is not None:
                    seen |= done
                    continue
                seen |= node
                pending.extend(self._next.get(self._index[node], ()))
            self._reached[start] = seen
        return self._reached[start]

    def mask(self, blocks) -> int:
        out = 0
        for block in blocks:
            out |= self.bit.get(block, 0)
        return out

    def names(self, mask: int) -> set[str]:
        return {name for name in self._names if mask & self.bit[name]}


def two_armed_branches(branches: Sequence[str], successors: Mapping[str, Sequence[str]],
                       loops: Mapping[str, tuple[Sequence[str], str | None]],
                       lines: Mapping[str, frozenset[int]] | None = None,
                       counts: Mapping[str, str | None] | None = None) -> set[str]:
    """The blocks among `branches` whose two-way branch picks one of two arms that both do work
    and meet again (`if (p == q) A; else B;`): neither side reaches the other before the join
    (back edges left out), some block is reached from both, and both or neither enter a loop
    of their own. A guard (`if (n > 0) loop`, a vector loop's minimum or alias check, an early
    `goto out`) has one side reaching the other, or alone entering a loop: it is not one. Nor
    are two copies of the same loop (`lines`: each block's source lines; compared over the
    loops' blocks), which the compiler made to choose between at run time (an unswitched or versioned
    loop): the counts of their loops decide which runs, as for any guard — unless those counts are
    the same on both sides (`counts`: each loop's backedge-taken count as ScalarEvolution prints
    it, None where it has none): then no count decides, the branch tests something else (a loop
    unswitched on an invariant flag), and one copy runs per pass."""
    if len(successors) > MAX_BLOCKS_FOR_ARMS:
        return set()
    inside = {header: set(members) for header, (members, _) in loops.items()}
    walks = _ForwardWalks(successors, inside)
    headers = walks.mask(inside)

    out = set()
    for block in branches:
        targets = list(dict.fromkeys(walks.forward(block)))
        if len(targets) != 2 or len(successors.get(block, ())) != 2:
            continue
        first, second = walks.reach(targets[0]), walks.reach(targets[1])
        if first & walks.bit[targets[1]] or second & walks.bit[targets[0]] or not first & second:
            continue
        # One side entering a loop the other skips is a guard on its size, whatever the
        # compiler's threading made of the join (`if (n > 0) for …`): not two arms.
        own_loops = first & ~second & headers, second & ~first & headers
        if bool(own_loops[0]) != bool(own_loops[1]):
            continue
        if lines is not None and own_loops[0]:
            first_loops, second_loops = walks.names(own_loops[0]), walks.names(own_loops[1])
            if _source_lines({b for h in first_loops for b in inside[h]}, lines) & \
                    _source_lines({b for h in second_loops for b in inside[h]}, lines) and \
                    not _same_counts(first_loops, second_loops, counts):
                continue
        out.add(block)
    return out


def _same_counts(first: set[str], second: set[str], counts: Mapping[str, str | None] | None) -> bool:
    """Whether two sets of loops have the same known backedge-taken counts, loop for loop."""
    if counts is None or len(first) != len(second):
        return False
    texts = [sorted(counts.get(h) or "" for h in side) for side in (first, second)]
    return "" not in texts[0] and texts[0] == texts[1]


def one_case_switches(switches: Sequence[str], successors: Mapping[str, Sequence[str]],
                      loops: Mapping[str, tuple[Sequence[str], str | None]], unreachable: set[str],
                      idle: set[str]) -> dict[str, set[str]]:
    """The blocks among `switches` whose switch runs one of its cases, each doing its own work
    before they meet again (a format chosen once: `switch (scan_type) { case A: … break; … }`):
    some block is reached from all its targets (back edges left out; those that end in
    `unreachable` never run), and no two of them share a block the others do not reach (the
    join itself may be one: an empty `default: break`). A switch some of whose cases go on
    together where another leaves (`default: return error;` beside cases that continue to the
    rest of the function) is not one: every case keeps running, as before. Each such switch's
    block → its empty cases: targets that do nothing (`idle`: no call, store or loop) on the
    way to where the cases meet (an error return, a `default: break` for values that do not
    come): they cost nothing, so the cases that work share the executions."""
    if len(successors) > MAX_BLOCKS_FOR_ARMS:
        return {}
    inside = {header: set(members) for header, (members, _) in loops.items()}
    walks = _ForwardWalks(successors, inside)

    out: dict[str, set[str]] = {}
    for block in switches:
        targets = [t for t in dict.fromkeys(walks.forward(block)) if t not in unreachable]
        if len(targets) < 2 or len(set(successors.get(block, ())) - unreachable) != len(targets):
            continue
        if len(targets) > MAX_CASES:
            continue
        reached = [walks.reach(t) for t in targets]
        common = reached[0]
        for mask in reached[1:]:
            common &= mask
        if common and all(not (reached[i] & reached[j] & ~common)
                          for i in range(len(reached)) for j in range(i + 1, len(reached))):
            joins = walks.names(common)
            out[block] = {t for t in targets if _empty(t, joins, successors, idle)}
    return out


def _empty(target: str, common: set[str], successors: Mapping[str, Sequence[str]], idle: set[str]) -> bool:
    """Whether a switch's target does nothing before the cases meet: it is where they meet, or
    idle blocks lead it there (a jump to a shared return)."""
    block = target
    for _ in range(4):
        if block in common:
            return True
        following = successors.get(block, ())
        if block not in idle or len(following) != 1:
            return False
        block = following[0]
    return False


def _source_lines(region: set[str], lines: Mapping[str, frozenset[int]]) -> set[int]:
    return set().union(*(lines.get(block, ()) for block in region))
