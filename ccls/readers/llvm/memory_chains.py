"""Loop-carried dependencies through memory: an iteration stores a value computed from what it
loaded at the same address, and the next iteration loads it back (`tmp[i] = A[i][j] * x[j] +
tmp[i]` with pointers the compiler cannot prove apart, so `tmp[i]` stays in memory). Each such
round trip waits for store-to-load forwarding plus the operations between the load and the
store: a latency chain that a block simulated with independent loads and stores (llvm-mca's
default) does not see. Pure: IR in, chains out; ccls.counting prices them.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable

from ccls.model import MemoryChain
from ccls.readers.llvm.opcodes import classify

# A chain passes through arithmetic, casts, selects and the intrinsics that lower to them
# (llvm.fmuladd); another load, a call or a phi ends the walk (a phi carries a value across
# iterations: that is a register chain, which the simulated block already sees).
_STOP = frozenset({"load", "store", "invoke", "phi", "alloca", "atomicrmw", "cmpxchg"})
_NOT_AN_OPERATION = (None, "call", "call_indirect", "other")


def memory_chains(body: Iterable[tuple[str, list]], block_loop: dict[str, str],
                  line_of: Callable[[object], int | None]) -> dict[str, tuple[MemoryChain, ...]]:
    """Per loop (its own blocks, not its inner loops'), one chain per address that its
    iterations store to and load back: for each store that depends on a load of that address,
    its block and the operations on the longest path from the load to it."""
    by_loop: dict[str, list] = defaultdict(list)  # loop -> its own blocks' (block, instruction), in order
    for block, instrs in body:
        if (loop := block_loop.get(block)) is not None:
            by_loop[loop].extend((block, instr) for instr in instrs)
    out: dict[str, tuple[MemoryChain, ...]] = {}
    for loop, placed in by_loop.items():
        defined_here = {i.name: i for _, i in placed if i.name}
        loads: dict[str, list] = defaultdict(list)  # invariant address -> its loads in the loop
        chains: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
        lines: dict[str, int | None] = {}
        for block, instr in placed:
            if instr.opcode == "load" and (address := _invariant_address(instr.operands[0], defined_here)):
                loads[address].append(instr)
            elif instr.opcode == "store" and (address := _invariant_address(instr.operands[1], defined_here)) \
                    and loads.get(address):
                link = _path(instr.operands[0].name, {l.name for l in loads[address]}, defined_here)
                if link is not None:
                    chains[address].append((block, link))
                    lines.setdefault(address, line_of(instr))
        found = [MemoryChain(tuple(links), _is_fp(loads[address][0]), lines[address])
                 for address, links in chains.items()]
        if found:
            out[loop] = tuple(found)
    return out


def _invariant_address(pointer, defined_here: dict) -> str | None:
    """The pointer's name when the loop does not compute it (the same address every iteration)."""
    name = pointer.name
    return name if name and name not in defined_here else None


def _path(value: str, sources: set[str], defined_here: dict) -> tuple[str, ...] | None:
    """Classes of the operations on the longest path from one of `sources` (loads) to `value`,
    inside one iteration; None when `value` does not depend on them."""
    memo: dict[str, tuple[str, ...] | None] = {}

    def longest(name: str) -> tuple[str, ...] | None:
        if name in sources:
            return ()
        if name in memo:
            return memo[name]
        memo[name] = None  # a cycle cannot happen without a phi; this guards malformed input
        instr = defined_here.get(name)
        best = None
        cls = classify(instr.opcode, instr.text, instr.type_text)[0] if instr is not None else None
        passes = instr is not None and instr.opcode not in _STOP \
            and not (instr.opcode == "call" and cls in _NOT_AN_OPERATION)
        if passes:
            for operand in instr.operands:
                if operand.name and (below := longest(operand.name)) is not None \
                        and (best is None or len(below) >= len(best)):
                    best = below
            if best is not None:
                best = best + ((cls,) if cls else ())
        memo[name] = best
        return best

    return longest(value) if value else None


def _is_fp(load) -> bool:
    return load.type_text in ("float", "double", "half", "bfloat", "x86_fp80", "fp128")
