"""Loops that descend a tree: each iteration reads the next node from the current one, at one of
two or more places that data chooses between (`s = c < 0 ? s->left : s->right` of a binary
search tree; a decision tree kept as index tables, `id = x[f[id]] < v[id] ? left[id] : right[id]`).

ScalarEvolution cannot count them (the exit tests a loaded link), and the default count of a loop
says nothing of them: a descent visits one node per level, so from the root it ends after about
log2 of the tree's node count (the depth of a balanced tree; a search that misses ends there, one
that hits a level or so earlier). A linked list, whose next node is read from one place, is a
walk of its whole length instead (`ccls.readers.data_walks`).

Pure: IR values (`ccls.readers.llvm.text.IRInstruction`) in, a count and its reason out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ccls.polynomial import LOG2_PREFIX, Polynomial
from ccls.readers.data_walks import BRANCH, LIST_LEN, Names, _incoming, _unquote
from ccls.readers.llvm.physical_bounds import uncast
from ccls.readers.llvm.reading import _Reading, _successors

_CASTS = ("zext", "sext", "trunc", "freeze")
_MERGES = ("phi", "select")
_DEPTH = 6  # merges and casts followed from a link to the load that reads it
# An index of at most this many bits: the tree it numbers holds at most 2^bits nodes. A wider
# type's range (2^32 nodes) says nothing of the tree's size.
_INDEX_BITS = 16


# A node read as one cache line (64 B on the cores the cost tables describe): what the nodes of a
# tree of n nodes can occupy, at most, is n lines.
NODE_BYTES = 64


@dataclass(frozen=True)
class TreeDescent:
    """A loop that goes one level down a tree each iteration: its header's executions per entry,
    and where its depth is a constant, the most bytes its nodes occupy (2^depth nodes)."""

    iterations: Polynomial
    why: str  # for the assumption
    node_bytes: int | None = None


def tree_descent(record, terminators: dict, reading: _Reading, parameters: set[str],
                 default_trip_count: int) -> TreeDescent | None:
    """The descent this loop makes, if a header phi's next value is read from the node it holds
    (through it as a pointer, or with it as an index into tables the loop does not move) at two
    or more places, and an exit tests that node or the link read."""
    inside = set(record.blocks)
    definitions = reading.definitions
    header = reading.instructions.get(record.header, ())
    for phi in header:
        if phi.opcode != "phi":
            continue
        pairs = _incoming(phi)
        starts = [value for value, block in pairs if block not in inside]
        nexts = {value for value, block in pairs if block in inside}
        if len(starts) != 1 or not nexts:
            continue
        links = [load for value in nexts for load in (_loads(value, phi.name, inside, reading) or [None])]
        if not links or None in links:
            continue
        places: set = set()
        for load in links:
            found = _places(load.operands[0].name, phi.name, phi.type_text == "ptr", inside, reading)
            if found is None:
                places = set()
                break
            places |= found
        if len(places) < 2 or not _exit_tests(record, terminators, {phi.name} | {l.name for l in links}, reading):
            continue
        return _depth(phi, starts[0], len(places), definitions, parameters, default_trip_count)
    return None


def _depth(phi, start: str, places: int, definitions: dict, parameters: set[str],
           default_trip_count: int) -> TreeDescent:
    """log2 of the node count: an index's type bounds it (2^bits); a pointer's tree is named
    after its root (`log2(len(root))`, a data size), or, unnamed, taken to hold the default count."""
    read = f"read from the node it holds at one of {places} places chosen by data (a tree's children)"
    bits = int(phi.type_text[1:]) if phi.type_text.startswith("i") and phi.type_text[1:].isdigit() else None
    if bits is not None and bits <= _INDEX_BITS:
        return TreeDescent(Polynomial.constant(bits),
                           f"descends a tree: each iteration's node index is {read}; an {bits}-bit index numbers "
                           f"at most 2^{bits} nodes, a tree {bits} levels deep when balanced: {bits} iterations")
    named = Names(definitions, parameters).value(start) if phi.type_text == "ptr" else None
    if named is not None:
        symbol = f"{LOG2_PREFIX}{LIST_LEN}{named}))"
        return TreeDescent(Polynomial.symbol(symbol),
                           f"descends the tree at {named}: each iteration's node is {read}; one node per level, "
                           f"log2 of its node count when balanced: {symbol} iterations (set its size with "
                           f"--param '{LIST_LEN}{named})=N')")
    levels = Fraction(math.log2(max(2, default_trip_count))).limit_denominator(1000)
    return TreeDescent(Polynomial.constant(levels),
                       f"descends a tree: each iteration's node is {read}; one node per level, a balanced tree of "
                       f"{default_trip_count} nodes (the default count) {float(levels):.3g} levels deep",
                       max(2, default_trip_count) * NODE_BYTES)


def _loads(value: str, phi: str, inside: set[str], reading: _Reading, depth: int = 0) -> list | None:
    """The loads in the loop whose values `value` merges (through casts, phis and selects in the
    loop); None if any of its arms is something else (a constant, the phi itself, arithmetic)."""
    instr = reading.definitions.get(value)
    if instr is None or depth > _DEPTH or reading.block_of.get(value) not in inside:
        return None
    if instr.opcode == "load":
        return [instr]
    if instr.opcode in _CASTS and instr.operands[0].name:
        return _loads(instr.operands[0].name, phi, inside, reading, depth + 1)
    if instr.opcode not in _MERGES:
        return None
    arms = [v for v, _ in _incoming(instr)] if instr.opcode == "phi" else [op.name for op in instr.operands[1:3]]
    out = []
    for arm in arms:
        if not arm or arm == phi or (found := _loads(arm, phi, inside, reading, depth + 1)) is None:
            return None
        out += found
    return out


def _places(address: str, phi: str, through_pointer: bool, inside: set[str], reading: _Reading,
            depth: int = 0) -> set | None:
    """Where in the node `address` reads its link: the constant offsets from the node's pointer
    (`s->left`, `s->right`), or the tables the node's index reads (`left[id]`, `right[id]`);
    None if it is read from anywhere else."""
    instr = reading.definitions.get(address)
    if depth > _DEPTH:
        return None
    if through_pointer and address == phi:
        return {("offset", "0")}
    if instr is None:
        return None
    if instr.opcode in _MERGES:  # the address itself chosen by data
        arms = [v for v, _ in _incoming(instr)] if instr.opcode == "phi" else [op.name for op in instr.operands[1:3]]
        out: set = set()
        for arm in arms:
            found = _places(arm, phi, through_pointer, inside, reading, depth + 1) if arm else None
            if found is None:
                return None
            out |= found
        return out
    if instr.opcode != "getelementptr":
        return None
    base, indices = instr.operands[0].name, instr.operands[1:]
    if through_pointer:
        if base != phi:
            return None
        offsets = [_constants(index, inside, reading) for index in indices]
        if any(o is None for o in offsets):
            return None
        combos: list[tuple] = [()]
        for choices in offsets:
            combos = [c + (choice,) for c in combos for choice in choices]
        return {("offset", ",".join(c)) for c in combos}
    if not any(index.name and uncast(index.name, reading) == phi for index in indices):
        return None
    return _tables(base, inside, reading, depth + 1)


def _constants(index, inside: set[str], reading: _Reading) -> list[str] | None:
    """The constant values an index of a node's address takes: itself, or the arms of a merge of
    constants (`phi [8, %a], [16, %b]`: the left or the right link)."""
    if not index.name:
        return [index.text.split()[-1]]
    instr = reading.definitions.get(index.name)
    if instr is None or instr.opcode not in _MERGES:
        return None
    arms = [v for v, _ in _incoming(instr)] if instr.opcode == "phi" else \
        [op.text.split()[-1] if not op.name else None for op in instr.operands[1:3]]
    if any(a is None or a in reading.definitions or not a.lstrip("-").isdigit() for a in arms):
        return None
    return arms


def _tables(base: str, inside: set[str], reading: _Reading, depth: int) -> set | None:
    """The tables an indexed node's link is read from: values the loop does not compute (a global,
    an argument, an address made before the loop), through the choices and constant or
    loop-invariant offsets it makes of them."""
    if reading.block_of.get(base) not in inside:
        return {("table", base)}
    instr = reading.definitions.get(base)
    if instr is None or depth > _DEPTH:
        return None
    if instr.opcode == "getelementptr" and all(not i.name or reading.block_of.get(i.name) not in inside
                                               for i in instr.operands[1:]):
        return _tables(instr.operands[0].name, inside, reading, depth + 1)
    if instr.opcode in _MERGES:
        arms = [v for v, _ in _incoming(instr)] if instr.opcode == "phi" else [op.name for op in instr.operands[1:3]]
        out: set = set()
        for arm in arms:
            found = _tables(arm, inside, reading, depth + 1) if arm else None
            if found is None:
                return None
            out |= found
        return out
    return None


def _exit_tests(record, terminators: dict, nodes: set[str], reading: _Reading) -> bool:
    """Whether a branch out of the loop tests one of `nodes` (the node, the link just read):
    against null, a leaf's mark, a bound."""
    inside = set(record.blocks)
    for block in record.blocks:
        term = terminators.get(block)
        if term is None or term.opcode != "br" or all(t in inside for t in _successors(term)):
            continue
        branch = BRANCH.match(term.text)
        test = reading.definitions.get(_unquote(branch["cond"])) if branch else None
        if test is not None and test.opcode == "icmp" and any(
                op.name and _masked(op.name, reading) in nodes for op in test.operands):
            return True
    return False


def _masked(name: str, reading: _Reading) -> str:
    """The value behind casts and a constant mask (`id & 0x80`: a leaf's mark)."""
    for _ in range(4):
        name = uncast(name, reading)
        instr = reading.definitions.get(name)
        if instr is None or instr.opcode != "and" or not instr.operands[0].name or instr.operands[1].name:
            return name
        name = instr.operands[0].name
    return name
