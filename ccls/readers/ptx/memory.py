"""Memory access pattern of one PTX load/store from its address polynomial: coalesced over
threads, strided along a loop, invariant, indirect (address loaded from memory) or unknown."""
from __future__ import annotations

import re

from ccls.model import MemoryAccess
from ccls.polynomial import Polynomial
from ccls.readers.ptx.instructions import REGISTER, Instr, int_literal, is_special, state_space
from ccls.readers.ptx.values import Analysis, const, linear


_ADDRESS = re.compile(r"\[\s*([^\]+]+?)\s*(?:\+\s*(-?\s*(?:0[xX][0-9a-fA-F]+|\d+)))?\s*\]\Z")
_LOADS_WITH_VALUES = ("global", "shared", "local", "const", "generic", "tex")


def _address_operand(ins: Instr) -> str | None:
    for op in ins.operands:
        if op.strip().startswith("["):
            return op.strip()
    return None


def _derives_from_load(an: Analysis, operand: str, at: int, seen: set[int], budget: list[int]) -> bool:
    """Does the value in `operand` depend (through arithmetic) on a value loaded from memory?"""
    if not operand.startswith("%") or budget[0] <= 0:
        return False
    for d in an.reaching(operand, at):
        if d in seen:
            continue
        seen.add(d)
        budget[0] -= 1
        i, _ = an.defs[d]
        ins = an.instrs[i]
        if ins.base in ("ld", "ldu", "atom", "tex", "suld") and state_space(ins.mods) in _LOADS_WITH_VALUES:
            return True
        for op in ins.operands[1:]:
            for reg in REGISTER.findall(op):
                if not is_special(reg) and _derives_from_load(an, reg, i, seen, budget):
                    return True
    return False


def memory_access(an: Analysis, i: int, space: str, access_bytes: int) -> MemoryAccess:
    ins = an.instrs[i]
    if space == "param":
        return MemoryAccess("invariant", access_bytes, None, space)
    operand = _address_operand(ins)
    m = _ADDRESS.match(operand) if operand else None
    if m is None:
        return MemoryAccess("unknown", access_bytes, None, space)
    base = m.group(1).strip()
    if base.startswith("%") and _derives_from_load(an, base, i, set(), [200]):
        return MemoryAccess("indirect", access_bytes, None, space)
    offset = int_literal(m.group(2).replace(" ", "")) if m.group(2) else 0
    address = an.value(base, i) + const(offset or 0)
    header = an.innermost_loop(ins.block)
    stride: Polynomial | None = None
    split = None
    if header is not None:
        split = linear(address, f"@{an.blocks[header].name}")
        if split is not None and split[1].constant_value() is not None and an.invariant_in(split[0], header):
            stride = split[1]
    tid = linear(address, "%tid.x")
    if tid is not None and tid[1].constant_value() == access_bytes:
        return MemoryAccess("unit", access_bytes, stride, space)  # consecutive threads, consecutive bytes
    if header is not None:
        if an.invariant_in(address, header):
            return MemoryAccess("invariant", access_bytes, const(0), space)
        if stride is not None:
            step = stride.constant_value()
            pattern = "unit" if step is not None and abs(step) == access_bytes else "strided"
            return MemoryAccess(pattern, access_bytes, stride, space)  # type: ignore[arg-type]
        return MemoryAccess("unknown", access_bytes, None, space)
    if not any(s.startswith(("?", "~", "%")) for s in address.symbols):
        return MemoryAccess("invariant", access_bytes, None, space)  # same address in every thread
    return MemoryAccess("unknown", access_bytes, None, space)
