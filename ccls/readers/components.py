"""Strongly connected components of a call graph: the functions that can call one another back."""
from __future__ import annotations

from typing import Iterable, Mapping, TypeVar

T = TypeVar("T")


def strongly_connected(calls: Mapping[T, Iterable[T]]) -> list[set[T]]:
    """Tarjan's strongly connected components of a graph (node → its successors; successors that
    are not nodes are ignored), with an explicit stack (call chains of thousands). Each component
    comes after every component it reaches."""
    index: dict[T, int] = {}
    low: dict[T, int] = {}
    on_stack: set[T] = set()
    stack: list[T] = []
    out: list[set[T]] = []
    for root in calls:
        if root in index:
            continue
        work = [(root, iter(sorted(calls[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, callees = work[-1]
            for callee in callees:
                if callee not in calls:
                    continue  # not a node (a function declared only: no calls of its own here)
                if callee not in index:
                    index[callee] = low[callee] = len(index)
                    stack.append(callee)
                    on_stack.add(callee)
                    work.append((callee, iter(sorted(calls[callee]))))
                    break
                if callee in on_stack:
                    low[node] = min(low[node], index[callee])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    out.append(component)
    return out
