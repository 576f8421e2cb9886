"""Loops whose counter is carried as `r = r op c` (`s >>= 1` tree reductions, `i *= 2`): no
linear closed form. From a constant start to a constant bound, run the recurrence and count;
a geometric one over a size (`s = blockDim.x / 2; s > 0; s >>= 1`) runs log_c of that size."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from ccls.polynomial import LOG2_PREFIX, Polynomial
from ccls.readers.ptx.instructions import FLOAT_TYPES, is_special, operand_types
from ccls.readers.ptx.values import GRID_SIZES, Analysis, const, cuda_name


_RECURRENCES = {"shr": lambda x, c: x >> c, "shl": lambda x, c: x << c, "mul": lambda x, c: x * c,
                "div": lambda x, c: int(x / c), "add": lambda x, c: x + c, "sub": lambda x, c: x - c}
_COMPARE = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
            "ge": lambda x, y: x >= y, "ne": lambda x, y: x != y, "eq": lambda x, y: x == y}
_SIMULATION_LIMIT = 1 << 16
_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "ne": "ne", "eq": "eq"}


@dataclass(frozen=True)
class _Recurrence:
    start: Polynomial  # the value entering the loop
    op: str  # shr, shl, mul, div, add, sub
    c: int
    post: bool  # whether the test sees the updated value

    def step(self, x: int) -> int:
        return _RECURRENCES[self.op](x, self.c)


def simulate(an: Analysis, header: int, setp_index: int, cmp: str) -> int | None:
    """Constant start, constant bound, `r = r op c` each iteration (`s >>= 1` tree reductions):
    run the recurrence and count. Returns the trip count or None."""
    setp = an.instrs[setp_index]
    for k in (1, 2):
        operand, other = setp.operands[k].strip(), setp.operands[3 - k].strip()
        bound = an.value(other, setp_index).constant_value()
        if bound is None or bound.denominator != 1:
            continue
        test = _COMPARE[cmp if k == 1 else _FLIPPED[cmp]]
        found = _tested_recurrence(an, header, operand, setp_index)
        start = found.start.constant_value() if found is not None else None
        if start is None or start.denominator != 1:
            continue
        x = int(start)
        try:
            for trip in range(1, _SIMULATION_LIMIT):
                if not test(found.step(x) if found.post else x, int(bound)):
                    return trip
                x = found.step(x)
                if abs(x) > 1 << 64:
                    return None
        except (ValueError, ZeroDivisionError, OverflowError):
            return None
        return None
    return None


def geometric(an: Analysis, header: int, setp_index: int, cmp: str,
              sizes: Mapping[str, int]) -> tuple[Polynomial, str] | None:
    """`r ← r·c` from a constant up to a size, or `r ← r/c` from a size down to a constant
    (shl, mul, shr, div by a constant): about log_c(size) iterations, as LLVM's reader counts a
    halving loop — `log2(blockDim.x)` for a tree reduction over the block, or its value when a
    launch in the file gives the size. The size must be a parameter or a grid size. Returns the
    count and how it was read, or None."""
    setp = an.instrs[setp_index]
    for k in (1, 2):
        operand, other = setp.operands[k].strip(), setp.operands[3 - k].strip()
        test = cmp if k == 1 else _FLIPPED[cmp]
        found = _tested_recurrence(an, header, operand, setp_index)
        if found is None or found.op not in ("shl", "mul", "shr", "div") or found.c < 1:
            continue
        bits = found.c if found.op in ("shl", "shr") else math.log2(found.c) if found.c >= 2 else 0.0
        bound = an.value(other, setp_index)
        growing = found.op in ("shl", "mul")
        if growing and test in ("lt", "le", "ne") and _at_least_one(found.start):
            size = _log2_size(bound, sizes)  # from s₀ up to the size: log_c(size / s₀)
            lowest = found.start.constant_value()
            extra = Fraction(0)
        elif not growing and test in ("gt", "ge", "ne") and _at_least_one(bound + (0 if test == "ge" else 1)):
            size = _log2_size(found.start, sizes)  # from the size down to the last value L it runs
            lowest = bound.constant_value() + (0 if test == "ge" else 1)  # with: log_c(size / L) + 1
            extra = Fraction(1)
        else:
            continue
        if size is None or bits <= 0:
            continue
        log2_size, named = size
        factor = 2 ** found.c if found.op in ("shl", "shr") else found.c
        scale = Fraction(1 / bits).limit_denominator(1000)
        count = (log2_size - const(Fraction(math.log2(lowest)).limit_denominator(1000))) * scale + const(extra)
        return count, f"{'multiplied' if growing else 'divided'} by {factor} each iteration between a constant " \
                      f"and {named}: log{factor} of it"
    return None


def _at_least_one(value: Polynomial) -> bool:
    c = value.constant_value()
    return c is not None and c >= 1


def _log2_size(value: Polynomial, sizes: Mapping[str, int]) -> tuple[Polynomial, str] | None:
    """log₂ of `a·X + …` for one size X (a parameter or a grid size; bounded remainders such as
    a shift's lost bits dropped, as constants are): a number when a launch gives X, else the
    symbol `log2(X)`; and X's name."""
    terms = [(m, c) for m, c in value.terms if m and not any(s.startswith("~") for s, _ in m)]
    if len(terms) != 1 or len(terms[0][0]) != 1 or terms[0][0][0][1] != 1 or terms[0][1] <= 0:
        return None
    symbol, a = terms[0][0][0][0], terms[0][1]
    if is_special(symbol):
        if not GRID_SIZES.match(symbol):
            return None
        name = cuda_name(symbol)
        if symbol in sizes:
            return const(Fraction(math.log2(max(1.0, float(a) * sizes[symbol]))).limit_denominator(1000)), \
                f"{name} = {sizes[symbol]} from the launch"
    elif symbol.startswith(("?", "~", "%", "&", "@")):
        return None
    else:
        name = symbol
    offset = Fraction(math.log2(float(a))).limit_denominator(1000)  # a size halved before the loop
    return Polynomial.symbol(f"{LOG2_PREFIX}{name})") + const(offset), name


def _tested_recurrence(an: Analysis, header: int, operand: str, at: int) -> _Recurrence | None:
    """The loop test reads `operand`; if it is a register carried around the loop as
    r ← r op c (directly, or through `x = r op c; mov r, x`), return the recurrence."""
    body = an.loops[header].body
    defs = an.reaching(operand, at)
    # the test reads `x = r op c` computed this iteration
    if len(defs) == 1 and an.instrs[an.defs[defs[0]][0]].block in body:
        upd_index = an.defs[defs[0]][0]
        update = _update(an, upd_index)
        if update is not None and update[0] != operand:
            start = _carried(an, header, update[0], operand)
            if start is not None:
                return _Recurrence(start, update[1], update[2], True)
    start = _carried(an, header, operand, None)
    if start is None:
        return None
    inside = [d for d in defs if an.instrs[an.defs[d][0]].block in body]
    if len(inside) != 1:
        return None
    own = _update(an, an.defs[inside[0]][0])
    update = own if own is not None and own[0] == operand else _through_move(an, inside[0], operand)
    if update is None:
        return None
    return _Recurrence(start, update[1], update[2], len(defs) == 1)


def _update(an: Analysis, index: int) -> tuple[str, str, int] | None:
    """`op x, r, c` with a constant c → (r, op, c)."""
    ins = an.instrs[index]
    if (ins.base not in _RECURRENCES or ins.guard is not None or len(ins.operands) != 3
            or any(t in FLOAT_TYPES for t in operand_types(ins.mods)) or "hi" in ins.mods):
        return None
    c = an.value(ins.operands[2], index).constant_value()
    if c is None or c.denominator != 1:
        return None
    return _unsigned_source(an, ins.operands[1].strip(), index) if ins.base == "shr" else ins.operands[1].strip(), \
        ins.base, int(c)


def _unsigned_source(an: Analysis, reg: str, at: int) -> str:
    """A signed division by 2^k is `(r + (r >>u 31)) >> k`: the add rounds a negative r toward
    zero and adds nothing to a counter that stays positive. Returns r, or `reg` itself."""
    defs = an.reaching(reg, at)
    if len(defs) != 1:
        return reg
    add = an.instrs[an.defs[defs[0]][0]]
    if add.base != "add" or len(add.operands) != 3 or add.guard is not None:
        return reg
    for r, fix in ((add.operands[1].strip(), add.operands[2].strip()), (add.operands[2].strip(), add.operands[1].strip())):
        fix_defs = an.reaching(fix, an.defs[defs[0]][0])
        if len(fix_defs) != 1:
            continue
        sign = an.instrs[an.defs[fix_defs[0]][0]]
        if (sign.base == "shr" and len(sign.operands) == 3 and sign.operands[1].strip() == r
                and an.value(sign.operands[2], an.defs[fix_defs[0]][0]).constant_value() in (31, 63)):
            return r
    return reg


def _through_move(an: Analysis, d: int, reg: str) -> tuple[str, str, int] | None:
    """`mov reg, x` where x = reg op c earlier in the iteration → the update of reg."""
    index = an.defs[d][0]
    ins = an.instrs[index]
    if ins.base != "mov" or len(ins.operands) != 2 or ins.guard is not None:
        return None
    src_defs = an.reaching(ins.operands[1].strip(), index)
    if len(src_defs) != 1:
        return None
    update = _update(an, an.defs[src_defs[0]][0])
    return update if update is not None and update[0] == reg else None


def _carried(an: Analysis, header: int, reg: str, via: str | None) -> Polynomial | None:
    """The value `reg` has when the loop is entered (the same on every entering path), if its
    only in-loop definition is its update (`reg op= c`, or `mov reg, via`)."""
    body = an.loops[header].body
    inside = [d for d in an.defs_of.get(reg, ()) if an.instrs[an.defs[d][0]].block in body]
    if len(inside) != 1:
        return None
    ins = an.instrs[an.defs[inside[0]][0]]
    if via is not None and not (ins.base == "mov" and len(ins.operands) == 2 and ins.operands[1].strip() == via):
        return None
    entering = [d for d in an.defs_of.get(reg, ()) if an.rd_in[header] >> d & 1 and d != inside[0]]
    values = [an.of_def(d) for d in entering]
    if not values or any(v != values[0] for v in values):
        return None
    return values[0]
