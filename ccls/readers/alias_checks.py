"""The loop vectorizer's run-time alias checks, decided where the loops' own ranges decide them.

A vectorised loop is guarded by a check that the arrays it reads and writes do not overlap
(`found.conflict`, `conflict.rdx`); on an overlap the scalar copy runs the whole range instead.
When the ranges overlap for every value the enclosing loops' indices take — a shortest-path or
LU update reads `d[i][k]`, inside the row `d[i][…]` it writes — the vector loop never runs and
the scalar copy runs from the start. ScalarEvolution prints each bound's address; the check is
decided from those polynomials: over the enclosing loops' index ranges, for every size. The same
holds for a vector copy versioned on a symbolic stride being 1 (`ident.check`): a matrix row of
one element, taken as never the case. Pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ccls.polynomial import Polynomial

CONFLICT = re.compile(r"^(?:found\.conflict|conflict\.rdx)")
IDENT_CHECK = re.compile(r"^ident\.check")  # LoopVersioning's test of a symbolic stride against 1
_PREDICATE = re.compile(r"= icmp (\w+) ptr ")
_INCOMING = re.compile(r"\[\s*([^,\]]+),\s*%(\"[^\"]+\"|[-\w.$]+)\s*\]")


@dataclass
class Overlapping:
    """What an always-failing check means for the loops it guards."""

    vector_entries: set[str] = field(default_factory=set)  # blocks the check sends nothing to
    unit_stride: set[str] = field(default_factory=set)  # those of them behind a unit-stride check
    scalar_starts: dict[str, str] = field(default_factory=dict)  # start phi -> its value off the vector path


def always_overlapping(definitions: Mapping[str, Any], terminators: Mapping[str, Any],
                       phis: Mapping[str, list], address: Callable[[str], Polynomial | None],
                       last_index: Callable[[str], Polynomial | None]) -> Overlapping:
    """Checks that find an overlap whatever the enclosing loops' indices (`phis`: each block's
    phis; `address`: a pointer value's polynomial, loop indices as `@loop`; `last_index`: a
    loop's last index)."""
    out = Overlapping()
    for block, term in terminators.items():
        if term.opcode != "br" or len(term.operands) != 3:
            continue
        conflict = _conflict_in(term.operands[0].name, definitions)
        if conflict is not None and _decide(conflict, definitions, address, last_index) is True:
            scalar, vector = term.operands[2].name, term.operands[1].name  # br i1 %c, %true, %false
        elif (taken := _without_unit_stride(term.operands[0].name, definitions)) is not None:
            # the path the condition always takes is the scalar copy's (operands: cond, false, true)
            scalar, vector = (term.operands[2].name, term.operands[1].name) if taken else \
                (term.operands[1].name, term.operands[2].name)
            if not vector.startswith("vector.") or scalar.startswith("vector."):
                continue
            out.unit_stride.add(vector)
        else:
            continue
        out.vector_entries.add(vector)
        for phi in phis.get(scalar, []):
            incoming = _INCOMING.findall(phi.text)
            if any(source.startswith("middle.block") for _, source in incoming):
                others = {value.strip() for value, source in incoming if not source.startswith("middle.block")}
                if len(others) == 1:
                    out.scalar_starts[phi.name] = others.pop()
    return out


def is_vectorizer_check(condition: str, definitions: Mapping[str, Any]) -> bool:
    """Whether a branch condition is the vectorizer's run-time alias or unit-stride check: which
    copy runs is decided from the addresses (`always_overlapping`, the fallbacks in `trips`),
    not by the data a loaded pointer points at."""
    return _conflict_in(condition, definitions) is not None or bool(IDENT_CHECK.match(condition or ""))


def _conflict_in(condition: str, definitions: Mapping[str, Any]) -> str | None:
    """The conflict value a branch condition carries: itself, or through the vectorizer's
    `select %min.iters.check, true, %conflict.rdx` / `or`."""
    if CONFLICT.match(condition or ""):
        return condition
    instr = definitions.get(condition)
    if instr is None or instr.opcode not in ("select", "or"):
        return None
    for op in instr.operands[1:]:
        if CONFLICT.match(op.name or ""):
            return op.name
    return None


def _without_unit_stride(condition: str, definitions: Mapping[str, Any], depth: int = 0) -> bool | None:
    """The value of a branch condition that holds the vectorizer's unit-stride versioning
    (`%ident.check.not = icmp eq i32 %m, 1`: the vector copy assumes a symbolic stride of 1, a
    matrix row of one element), taking the stride as not 1; None where it stays undecided."""
    instr = definitions.get(condition)
    if instr is None or depth > 8:
        return None
    if IDENT_CHECK.match(condition):
        if instr.opcode == "icmp" and scales_an_index_only(instr.operands[0].name, definitions):
            return None  # an increment, not a row length: `unit_stride_increment`
        return instr.opcode == "icmp" and " ne " in instr.text  # `eq %m, 1` is false, `ne %m, 1` true
    if instr.opcode not in ("and", "or", "xor", "select"):
        return None
    values = [_without_unit_stride(op.name, definitions, depth + 1) if op.name else
              {"true": True, "false": False}.get(str(op).split()[-1] if str(op).split() else "")
              for op in instr.operands]
    if instr.opcode == "select":  # select c, a, b
        c, a, b = values
        return a if c is True else b if c is False else a if a is not None and a == b else None
    if instr.opcode == "xor":
        return None if None in values else values[0] != values[1]
    wanted = instr.opcode == "or"  # one operand of that value decides an `or` (true) or an `and` (false)
    if wanted in values:
        return wanted
    return None if None in values else not wanted



def scales_an_index_only(value: str, definitions: Mapping[str, Any]) -> bool:
    """Whether `value` (or a cast of it) is used only to multiply an index (`a[i * inc]`) and in
    unit-stride checks: an increment. A value also compared (a size that bounds or guards a
    loop: syrk's row length `m`, also `k < m`) or added (a loop's own step, `i += inc`) is not."""
    if not value:
        return False  # a constant: nothing to tell
    names, grown = {value}, True
    while grown:
        grown = False
        for name, instr in definitions.items():
            if name not in names and instr.opcode in ("zext", "sext", "trunc") and instr.operands \
                    and instr.operands[0].name in names:
                names.add(name)
                grown = True
    uses = [(name, instr) for name, instr in definitions.items() if name not in names
            and not IDENT_CHECK.match(name) and any(op.name in names for op in instr.operands)]
    return bool(uses) and all(instr.opcode in ("mul", "shl") for _, instr in uses)


def unit_stride_increment(condition: str, definitions: Mapping[str, Any]) -> int | None:
    """For a branch on LoopVersioning's unit-stride check whose symbolic stride only scales an
    index (an increment, `a[i * inc]`, not a row length or a loop's step): the operand index (1: false, 2: true) of
    the edge taken when the stride is not 1. Such an increment is 1 in the usual call (BLAS's
    `incx`), which is why the vectorizer versions on it: that edge's copy is taken as not run.
    None for any other branch."""
    instr = definitions.get(condition)
    if instr is None or not IDENT_CHECK.match(condition) or instr.opcode != "icmp" \
            or not scales_an_index_only(instr.operands[0].name, definitions):
        return None
    return 2 if " ne " in instr.text else 1  # `eq %s, 1` is false for a stride other than 1


def _decide(name: str, definitions: Mapping[str, Any], address: Callable, last_index: Callable,
            depth: int = 0) -> bool | None:
    """True when the check is true for every index, None when that is not shown."""
    instr = definitions.get(name)
    if instr is None or depth > 8:
        return None
    if instr.opcode in ("and", "or"):
        parts = [_decide(op.name, definitions, address, last_index, depth + 1) for op in instr.operands]
        return True if (all if instr.opcode == "and" else any)(p is True for p in parts) else None
    if instr.opcode != "icmp":
        return None
    m = _PREDICATE.search(instr.text)
    left, right = (address(op.name) if op.name else None for op in instr.operands)
    if m is None or left is None or right is None:
        return None
    predicate = m.group(1)
    if predicate in ("ugt", "sgt", "uge", "sge"):
        difference, strict = left - right, predicate in ("ugt", "sgt")
    elif predicate in ("ult", "slt", "ule", "sle"):
        difference, strict = right - left, predicate in ("ult", "slt")
    else:
        return None
    return _always_positive(difference, strict, last_index)


def _always_positive(poly: Polynomial, strict: bool, last_index: Callable) -> bool | None:
    """True when `poly` > 0 (≥ 0 unless strict) for every loop index in its range and every
    size ≥ 1 (each index, linear in it at a rate of one sign for all sizes, taken at the end
    that makes `poly` smallest, then the sizes); None when that is not shown."""
    for symbol in sorted(s for s in poly.symbols if s.startswith("@")):
        if poly.degree(symbol) > 1:
            return None
        rate = poly.substitute(symbol, Polynomial.constant(1)) - poly.substitute(symbol, Polynomial.constant(0))
        last = last_index(symbol[1:])
        signs = {coefficient > 0 for _, coefficient in rate.terms if coefficient}
        if len(signs) > 1 or last is None or any(s.startswith("@") for s in rate.symbols):
            return None  # a rate whose sign is not the same for every size (a row of n elements: 4·n > 0)
        poly = poly.substitute(symbol, Polynomial.constant(0) if signs != {False} else last)
    if any(s.startswith("@") for s in poly.symbols):
        return None
    sized = [coefficient for monomial, coefficient in poly.terms if monomial]
    if any(coefficient < 0 for coefficient in sized):
        return None  # could go either way as the sizes grow
    at_one = poly.evaluate({s: 1.0 for s in poly.symbols})
    return True if (at_one > 0 if strict else at_one >= 0) else None
