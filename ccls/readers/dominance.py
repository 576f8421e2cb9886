"""Dominance in a control-flow graph of any node type (LLVM block names, PTX block indices,
bytecode offsets): the one implementation the readers share.

Pure: a graph in (its entry and each node's successors), dominators out.
"""
from __future__ import annotations

from typing import Callable, Hashable, Iterable, TypeVar

Node = TypeVar("Node", bound=Hashable)


def immediate_dominators(entry: Node, successors: Callable[[Node], Iterable[Node]]) -> dict[Node, Node]:
    """Each node reachable from `entry` → its immediate dominator (the entry's is itself).
    Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm" (2001): iterate over the
    nodes in reverse postorder, meeting predecessors' dominator-tree paths."""
    order: list[Node] = []
    seen = {entry}
    stack = [(entry, iter(dict.fromkeys(successors(entry))))]
    predecessors: dict[Node, list[Node]] = {}
    while stack:  # postorder without recursion (functions of thousands of blocks)
        node, pending = stack[-1]
        for target in pending:
            predecessors.setdefault(target, []).append(node)
            if target not in seen:
                seen.add(target)
                stack.append((target, iter(dict.fromkeys(successors(target)))))
                break
        else:
            order.append(node)
            stack.pop()
    rank = {node: n for n, node in enumerate(order)}  # postorder number: the entry's is the largest
    idom = {entry: entry}

    def meet(a: Node, b: Node) -> Node:
        while a != b:
            while rank[a] < rank[b]:
                a = idom[a]
            while rank[b] < rank[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for node in reversed(order):
            if node == entry:
                continue
            done = [p for p in predecessors.get(node, ()) if p in idom]
            if not done:
                continue
            new = done[0]
            for other in done[1:]:
                new = meet(other, new)
            if idom.get(node) != new:
                idom[node], changed = new, True
    return idom


def dominator_sets(idom: dict[Node, Node]) -> dict[Node, set[Node]]:
    """Each node → every node that dominates it, itself included (its path up the tree)."""
    out: dict[Node, set[Node]] = {}
    for node in idom:
        chain, walk = {node}, node
        while idom[walk] != walk:
            walk = idom[walk]
            chain.add(walk)
        out[node] = chain
    return out
