"""Loops whose counter is carried as `r = r op c` from a constant start (`s >>= 1` tree
reductions, `i *= 2`): no linear closed form, so run the recurrence and count."""
from __future__ import annotations

from ccls.readers.ptx.instructions import FLOAT_TYPES, operand_types
from ccls.readers.ptx.values import Analysis


_RECURRENCES = {"shr": lambda x, c: x >> c, "shl": lambda x, c: x << c, "mul": lambda x, c: x * c,
                "div": lambda x, c: int(x / c), "add": lambda x, c: x + c, "sub": lambda x, c: x - c}
_COMPARE = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
            "ge": lambda x, y: x >= y, "ne": lambda x, y: x != y, "eq": lambda x, y: x == y}
_SIMULATION_LIMIT = 1 << 16


def simulate(an: Analysis, header: int, setp_index: int, cmp: str) -> int | None:
    """Constant start, constant bound, `r = r op c` each iteration (`s >>= 1` tree reductions):
    run the recurrence and count. Returns the trip count or None."""
    setp = an.instrs[setp_index]
    flipped = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "ne": "ne", "eq": "eq"}
    for k in (1, 2):
        operand, other = setp.operands[k].strip(), setp.operands[3 - k].strip()
        bound = an.value(other, setp_index).constant_value()
        if bound is None or bound.denominator != 1:
            continue
        test = _COMPARE[cmp if k == 1 else flipped[cmp]]
        found = _tested_recurrence(an, header, operand, setp_index)
        if found is None:
            continue
        x, step, post = found
        try:
            for trip in range(1, _SIMULATION_LIMIT):
                if not test(step(x) if post else x, int(bound)):
                    return trip
                x = step(x)
                if abs(x) > 1 << 64:
                    return None
        except (ValueError, ZeroDivisionError, OverflowError):
            return None
        return None
    return None


def _tested_recurrence(an: Analysis, header: int, operand: str, at: int):
    """The loop test reads `operand`; if it is a register carried around the loop as
    r ← r op c (directly, or through `x = r op c; mov r, x`) from a constant start, return
    (start, the update as a function, whether the test sees the updated value)."""
    body = an.loops[header].body
    defs = an.reaching(operand, at)
    # the test reads `x = r op c` computed this iteration
    if len(defs) == 1 and an.instrs[an.defs[defs[0]][0]].block in body:
        upd_index = an.defs[defs[0]][0]
        update = _update(an, upd_index)
        if update is not None and update[0] != operand:
            carried = _carried(an, header, update[0], operand)
            if carried is not None:
                return carried, update[1], True
    carried_start = _carried(an, header, operand, None)
    if carried_start is None:
        return None
    inside = [d for d in defs if an.instrs[an.defs[d][0]].block in body]
    if len(inside) != 1:
        return None
    own = _update(an, an.defs[inside[0]][0])
    step = own[1] if own is not None and own[0] == operand else _through_move(an, inside[0], operand)
    if step is None:
        return None
    return carried_start, step, len(defs) == 1


def _update(an: Analysis, index: int):
    """`op x, r, c` with a constant c → (r, λ r: r op c)."""
    ins = an.instrs[index]
    if (ins.base not in _RECURRENCES or ins.guard is not None or len(ins.operands) != 3
            or any(t in FLOAT_TYPES for t in operand_types(ins.mods)) or "hi" in ins.mods):
        return None
    c = an.value(ins.operands[2], index).constant_value()
    if c is None or c.denominator != 1:
        return None
    op, c_int = _RECURRENCES[ins.base], int(c)
    return ins.operands[1].strip(), (lambda r: op(r, c_int))


def _through_move(an: Analysis, d: int, reg: str):
    """`mov reg, x` where x = reg op c earlier in the iteration → the update of reg."""
    index = an.defs[d][0]
    ins = an.instrs[index]
    if ins.base != "mov" or len(ins.operands) != 2 or ins.guard is not None:
        return None
    src_defs = an.reaching(ins.operands[1].strip(), index)
    if len(src_defs) != 1:
        return None
    update = _update(an, an.defs[src_defs[0]][0])
    return update[1] if update is not None and update[0] == reg else None


def _carried(an: Analysis, header: int, reg: str, via: str | None) -> int | None:
    """Constant value `reg` has when the loop is entered, if its only in-loop definition is its
    update (`reg op= c`, or `mov reg, via`)."""
    body = an.loops[header].body
    inside = [d for d in an.defs_of.get(reg, ()) if an.instrs[an.defs[d][0]].block in body]
    if len(inside) != 1:
        return None
    ins = an.instrs[an.defs[inside[0]][0]]
    if via is not None and not (ins.base == "mov" and len(ins.operands) == 2 and ins.operands[1].strip() == via):
        return None
    entering = [d for d in an.defs_of.get(reg, ()) if an.rd_in[header] >> d & 1 and d != inside[0]]
    values = {an.of_def(d).constant_value() for d in entering}
    if len(values) != 1 or None in values:
        return None
    value = next(iter(values))
    return int(value) if value is not None and value.denominator == 1 else None
