"""Bounds that a loop's own operations put on how often it can run, where ScalarEvolution gives
none: what C leaves undefined cannot happen in a correct program, so it limits the count.
"""
from __future__ import annotations

import math
import re

from ccls.readers.llvm.reading import _Reading, _successors
from ccls.readers.scev import FunctionAnalyses

_SHIFTS = ("shl", "lshr", "ashr")
_CASTS = ("zext", "sext", "trunc", "freeze")
_ADD_RECURRENCE = re.compile(r"^\{(?P<start>.+),\+,(?P<step>\d+)\}(?:<[a-z]+>)*<%(?P<loop>\"[^\"]+\"|[-\w.$]+)>$")
_INT = re.compile(r"^i(\d+)$")


def _uncast(name: str, reading: _Reading) -> str:
    """The value behind integer casts (`zext nneg i32 %bits to i64` → `bits`)."""
    for _ in range(4):
        instr = reading.definitions.get(name)
        if instr is None or instr.opcode not in _CASTS or not instr.operands[0].name:
            return name
        name = instr.operands[0].name
    return name


def _reaches_avoiding(start: str, goals: set[str], avoid: str, inside: set[str], terminators: dict) -> bool:
    """Whether a path inside the loop leads from `start` to one of `goals` without passing `avoid`."""
    seen, stack = {start}, [start]
    while stack:
        block = stack.pop()
        if block in goals:
            return True
        for target in _successors(terminators[block]) if block in terminators else ():
            target = target.strip('"')
            if target in inside and target != avoid and target not in seen:
                seen.add(target)
                stack.append(target)
    return False


def _on_every_iteration(block: str, header: str, inside: set[str], terminators: dict) -> bool:
    """Whether `block` runs on every iteration that goes round again: each path from the header
    to a block that jumps back to it passes through `block`."""
    if block == header:
        return True
    latches = {b for b in inside if b in terminators
               and header in (t.strip('"') for t in _successors(terminators[b]))}
    return bool(latches) and not _reaches_avoiding(header, latches, block, inside, terminators)


def shift_width_trip(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading) -> tuple[int, str] | None:
    """A counter stepped up by a constant that is, on every iteration, the amount of a shift
    (a bit buffer: `while (bits < need) { hold += (unsigned long)*in++ << bits; bits += 8; }`).
    C defines `x << n` only for 0 <= n < the width of x, so the counter takes at most
    ceil(width / step) values on the iterations that go round again: the loop runs at most one
    more time than that. (iterations, what the bound assumes, in words), or None."""
    inside = set(record.blocks)
    best: tuple[int, str] | None = None
    for block in record.blocks:
        for instr in reading.instructions.get(block, ()):
            if instr.opcode not in _SHIFTS or len(instr.operands) < 2 or not instr.operands[1].name:
                continue
            width = _INT.match(instr.operands[0].type_text or "")
            counter = _uncast(instr.operands[1].name, reading)
            recurrence = _ADD_RECURRENCE.match(analyses.value_scevs.get(counter, ""))
            if width is None or recurrence is None or recurrence["loop"].strip('"') != record.header:
                continue
            bits, step = int(width[1]), int(recurrence["step"])
            if not 0 < step < bits or not _on_every_iteration(block, record.header, inside, terminators):
                continue
            # the iterations that go round again each shift by a distinct amount in [0, bits)
            most = math.ceil(bits / step) + (0 if block == record.header else 1)
            why = (f"its counter grows by {step} each iteration and is the amount of a shift of a {bits}-bit "
                   f"value, which C defines only below {bits}: at most {most} iterations")
            if best is None or most < best[0]:
                best = (most, why)
    return best
