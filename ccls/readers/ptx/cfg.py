"""Control flow of one PTX function: basic blocks split at branch targets and after branches,
immediate dominators, natural loops from back edges."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from ccls.readers.dominance import immediate_dominators
from ccls.readers.ptx.instructions import Instr


@dataclass
class Block:
    name: str
    instrs: list[int]  # indices into the function's instruction list
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


@dataclass
class LoopInfo:
    header: int
    body: set[int]
    latches: list[int]
    parent: int | None = None  # header block of the enclosing loop
    depth: int = 1


def dominators(blocks: list[Block]) -> list[int | None]:
    """Immediate dominator per block (entry → itself, unreachable → None)."""
    idom = immediate_dominators(0, lambda b: blocks[b].succs) if blocks else {}
    return [idom.get(b) for b in range(len(blocks))]


def _retreating_edges(blocks: list[Block]) -> set[tuple[int, int]]:
    """Edges to a block still on the depth-first search stack."""
    found: set[tuple[int, int]] = set()
    if not blocks:
        return found
    state = [0] * len(blocks)  # 0 new, 1 on stack, 2 done
    stack: list[tuple[int, Iterator[int]]] = [(0, iter(blocks[0].succs))]
    state[0] = 1
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[node] = 2
            stack.pop()
        elif state[nxt] == 1:
            found.add((node, nxt))
        elif state[nxt] == 0:
            state[nxt] = 1
            stack.append((nxt, iter(blocks[nxt].succs)))
    return found


def dominates(idom: list[int | None], a: int, b: int) -> bool:
    if idom[b] is None or idom[a] is None:
        return False
    while True:
        if b == a:
            return True
        parent = idom[b]
        if parent is None or parent == b:
            return False
        b = parent


def natural_loops(blocks: list[Block], idom: list[int | None]) -> tuple[dict[int, LoopInfo], list[tuple[int, int]]]:
    """Loops by header block, and the retreating edges that are not back edges (irreducible)."""
    retreating = _retreating_edges(blocks)
    loops: dict[int, LoopInfo] = {}
    irreducible: list[tuple[int, int]] = []
    for u, block in enumerate(blocks):
        if idom[u] is None:
            continue
        for h in block.succs:
            if dominates(idom, h, u):
                info = loops.setdefault(h, LoopInfo(h, {h}, []))
                info.latches.append(u)
                work = [u]
                while work:
                    x = work.pop()
                    if x not in info.body:
                        info.body.add(x)
                        work.extend(p for p in blocks[x].preds if idom[p] is not None)
            elif (u, h) in retreating:
                irreducible.append((u, h))
    for h, info in loops.items():
        containing = [o for o in loops.values() if o.header != h and h in o.body and info.body <= o.body]
        if containing:
            info.parent = min(containing, key=lambda o: len(o.body)).header
    for info in loops.values():
        depth, p = 1, info.parent
        while p is not None:
            depth += 1
            p = loops[p].parent
        info.depth = depth
    return loops, irreducible


class UndefinedLabel(Exception):
    """A branch names a label the function does not define: no control flow can be built."""

    def __init__(self, branch: Instr, target: str):
        super().__init__(f"branch to undefined label {target!r}")
        self.branch = branch


def build_blocks(items: list[Instr | str],
                 branch_tables: dict[str, list[str]]) -> tuple[list[Instr], list[Block], list[str]]:
    """Instructions and labels in order → (instructions, blocks with edges, notes). Only branch
    targets start blocks (debug labels such as `$L__tmp0` do not). `branch_tables` holds
    `.branchtargets` lists for `brx.idx`. Raises UndefinedLabel."""
    targets: set[str] = set()
    for item in items:
        if isinstance(item, Instr) and item.base == "bra" and item.operands:
            targets.add(item.operands[0].strip())
        elif isinstance(item, Instr) and item.base == "brx" and len(item.operands) > 1:
            targets.update(branch_tables.get(item.operands[1].strip(), ()))
    instrs: list[Instr] = []
    blocks: list[Block] = []
    labels: dict[str, int] = {}
    notes: list[str] = []
    current: Block | None = None
    used_names = {x for x in items if isinstance(x, str)}

    def fresh() -> str:
        k = len(blocks)
        while f"%bb.{k}" in used_names:
            k += 1
        used_names.add(f"%bb.{k}")
        return f"%bb.{k}"

    for item in items:
        if isinstance(item, str):
            if item not in targets:
                continue
            if current is not None and not current.instrs and current.name.startswith("%bb.") and blocks:
                used_names.discard(current.name)
                current.name = item
            else:
                current = Block(item, [])
                blocks.append(current)
            labels[item] = len(blocks) - 1
            continue
        if current is None:
            current = Block(fresh(), [])
            blocks.append(current)
        item.block = len(blocks) - 1
        current.instrs.append(len(instrs))
        instrs.append(item)
        if item.base in ("bra", "brx", "ret", "exit", "trap"):
            current = None
    if not blocks:
        blocks.append(Block("%bb.0", []))
    for b, block in enumerate(blocks):
        last = instrs[block.instrs[-1]] if block.instrs else None
        nxt = [b + 1] if b + 1 < len(blocks) else []
        if last is None:
            block.succs = nxt
        elif last.base == "bra":
            target = last.operands[0].strip() if last.operands else ""
            if target not in labels:
                raise UndefinedLabel(last, target)
            block.succs = [labels[target]] + (nxt if last.guard is not None else [])
        elif last.base == "brx":
            names = branch_tables.get(last.operands[1].strip(), []) if len(last.operands) > 1 else []
            found = [labels[t] for t in names if t in labels]
            if not found:
                notes.append(f"indirect branch {last.text!r}: targets unknown; treated as falling through")
                found = nxt
            block.succs = found
        elif last.base in ("ret", "exit", "trap"):
            block.succs = nxt if last.guard is not None else []
        else:
            block.succs = nxt
        block.succs = list(dict.fromkeys(block.succs))
    for b, block in enumerate(blocks):
        for s in block.succs:
            blocks[s].preds.append(b)
    return instrs, blocks, notes
