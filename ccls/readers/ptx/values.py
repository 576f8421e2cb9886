"""Symbolic values of PTX registers. Registers are not SSA, so reaching definitions pick the
definitions a use sees; a small evaluator turns them into polynomials over parameters (`n`),
special registers (`%tid.x`), loop indices (`@<header>`), bounded ranges (`n & 3`) and opaque
values (`?…`)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from ccls.polynomial import Polynomial
from ccls.readers.ptx.cfg import Block, LoopInfo
from ccls.readers.ptx.instructions import FLOAT_TYPES, Instr, int_literal, is_special, operand_types, state_space


_CUDA_NAMES = {"tid": "threadIdx", "ntid": "blockDim", "ctaid": "blockIdx", "nctaid": "gridDim"}
# Value ranges of special registers used to bound trip counts (PTX ISA, "Special Registers").
GRID_SIZES = re.compile(r"%n(tid|ctaid)\.[xyz]\Z")  # blockDim, gridDim: the launch's sizes
SPECIAL_RANGES = {"%tid.x": (0, 1023), "%tid.y": (0, 1023), "%tid.z": (0, 63), "%laneid": (0, 31)}


def const(value: int | Fraction) -> Polynomial:
    return Polynomial.constant(value)


def coefficients(poly: Polynomial, symbol: str) -> dict[int, Polynomial] | None:
    """poly as Σ_k c_k · symbol^k → {k: c_k}."""
    out: dict[int, dict] = {}
    for mono, coef in poly.terms:
        powers = dict(mono)
        k = powers.pop(symbol, 0)
        rest = tuple(sorted(powers.items()))
        out.setdefault(k, {})[rest] = out.get(k, {}).get(rest, Fraction(0)) + coef
    return {k: Polynomial(tuple(sorted((m, c) for m, c in d.items() if c))) for k, d in out.items()}


def linear(poly: Polynomial, symbol: str) -> tuple[Polynomial, Polynomial] | None:
    coeffs = coefficients(poly, symbol)
    if coeffs is None or any(k > 1 for k in coeffs):
        return None
    return coeffs.get(0, Polynomial()), coeffs.get(1, Polynomial())


@dataclass
class Range:
    low: Fraction
    high: Fraction
    text: str  # how a person reads it: "(n & 3)"
    home: int  # block where it was computed


class Analysis:
    """Per-function analyses over the instruction list: reaching definitions, values, loops."""

    _MAX_DEPTH = 60

    def __init__(self, instrs: list[Instr], blocks: list[Block], idom: list[int | None],
                 loops: dict[int, LoopInfo], param_symbols: Mapping[str, str]):
        self.instrs, self.blocks, self.idom, self.loops = instrs, blocks, idom, loops
        self.position = {i: k for block in blocks for k, i in enumerate(block.instrs)}
        self.param_symbols = param_symbols  # PTX param name → symbol (source parameter name)
        self.loop_of_symbol = {f"@{blocks[h].name}": h for h in loops}
        self.defs: list[tuple[int, str]] = []
        self.defs_at: dict[int, list[int]] = {}
        self.defs_of: dict[str, list[int]] = {}
        for i, ins in enumerate(instrs):
            for reg in ins.dests:
                d = len(self.defs)
                self.defs.append((i, reg))
                self.defs_at.setdefault(i, []).append(d)
                self.defs_of.setdefault(reg, []).append(d)
        self.rd_in = self._reaching_definitions()
        self.memo: dict[int, Polynomial] = {}
        self.iv: dict[int, tuple[int, Polynomial, Polynomial]] = {}  # def → (loop header, init, step)
        self.ranges: dict[str, Range] = {}
        self.opaque_home: dict[str, int] = {}
        self.depth = 0

    # -- reaching definitions ---------------------------------------------------------------------
    def _reaching_definitions(self) -> list[int]:
        nblocks = len(self.blocks)
        gen, kill = [0] * nblocks, [0] * nblocks
        for b, block in enumerate(self.blocks):
            last: dict[str, int] = {}
            for i in block.instrs:
                for d in self.defs_at.get(i, ()):
                    last[self.defs[d][1]] = d
            for reg, d in last.items():
                gen[b] |= 1 << d
                for other in self.defs_of[reg]:
                    if other != d:
                        kill[b] |= 1 << other
        rd_in, rd_out = [0] * nblocks, gen[:]
        changed = True
        while changed:
            changed = False
            for b in range(nblocks):
                new_in = 0
                for p in self.blocks[b].preds:
                    new_in |= rd_out[p]
                new_out = gen[b] | (new_in & ~kill[b])
                if new_in != rd_in[b] or new_out != rd_out[b]:
                    rd_in[b], rd_out[b] = new_in, new_out
                    changed = True
        return rd_in

    def reaching(self, reg: str, at: int) -> list[int]:
        """Definitions of `reg` that reach the point just before instruction `at`."""
        block = self.blocks[self.instrs[at].block]
        for i in reversed(block.instrs[:self.position[at]]):
            for d in self.defs_at.get(i, ()):
                if self.defs[d][1] == reg:
                    return [d]
        live = self.rd_in[self.instrs[at].block]
        return [d for d in self.defs_of.get(reg, ()) if live >> d & 1]

    # -- loops ---------------------------------------------------------------------------------------
    def loops_containing(self, block: int) -> list[int]:
        return [h for h, info in self.loops.items() if block in info.body]

    def innermost_loop(self, block: int) -> int | None:
        inside = self.loops_containing(block)
        return min(inside, key=lambda h: len(self.loops[h].body)) if inside else None

    def invariant_in(self, poly: Polynomial, header: int) -> bool:
        body = self.loops[header].body
        for s in poly.symbols:
            if s in self.loop_of_symbol and self.loop_of_symbol[s] in body:
                return False
            home = self.opaque_home.get(s, self.ranges[s].home if s in self.ranges else None)
            if home is not None and home in body:
                return False
        return True

    # -- values ----------------------------------------------------------------------------------
    def opaque(self, key: str, home: int) -> Polynomial:
        name = f"?{key}"
        self.opaque_home[name] = home
        return Polynomial.symbol(name)

    def value(self, operand: str, at: int) -> Polynomial:
        """Value of an operand just before instruction `at`."""
        operand = operand.strip()
        lit = int_literal(operand)
        if lit is not None:
            return const(lit)
        if operand == "WARP_SZ":  # PTX's run-time constant for CUDA's warpSize: 32 on every NVIDIA GPU to date
            return const(32)
        if is_special(operand):
            return Polynomial.symbol(operand)
        if not operand.startswith("%") and re.fullmatch(r"[A-Za-z_$][\w$]*", operand) and operand not in self.defs_of:
            return Polynomial.symbol("&" + operand)  # address of a variable (shared array, global)
        block = self.instrs[at].block
        defs = self.reaching(operand, at)
        if not defs:
            return self.opaque(f"{operand}@{at}", block)
        if self.depth > self._MAX_DEPTH:
            return self.opaque(f"{operand}@{at}", block)
        self.depth += 1
        try:
            values = [self.of_def(d) for d in defs]
        finally:
            self.depth -= 1
        if len(defs) > 1:
            merged = self._merge_at_header(defs, at)
            if merged is not None:
                return self._in_scope(merged, at, operand)
        if all(v == values[0] for v in values):
            return self._in_scope(values[0], at, operand)
        return self.opaque(f"{operand}@{at}", block)

    def _merge_at_header(self, defs: list[int], at: int) -> Polynomial | None:
        """Before the increment of an induction variable of loop L: init + @L·step."""
        ivs = [d for d in defs if d in self.iv]
        if len(ivs) != 1:
            return None
        header, init, step = self.iv[ivs[0]]
        body = self.loops[header].body
        if self.instrs[at].block not in body:
            return None
        if any(self.instrs[self.defs[d][0]].block in body for d in defs if d != ivs[0]):
            return None
        return init + Polynomial.symbol(f"@{self.blocks[header].name}") * step

    def _in_scope(self, value: Polynomial, at: int, operand: str) -> Polynomial:
        """Loop indices of loops that do not contain `at` mean nothing there (a final value)."""
        block = self.instrs[at].block
        for s in value.symbols:
            h = self.loop_of_symbol.get(s)
            if h is not None and block not in self.loops[h].body:
                return self.opaque(f"{operand}@{at}", block)
        return value

    def of_def(self, d: int) -> Polynomial:
        if d in self.memo:
            return self.memo[d]
        i, reg = self.defs[d]
        self.memo[d] = self.opaque(f"{reg}#{i}", self.instrs[i].block)  # cycle guard
        value = self._induction(d)
        if value is None:
            value = self._evaluate(d)
        self.memo[d] = value
        return value

    def _induction(self, d: int) -> Polynomial | None:
        """`add r, r, step` inside loop L where r has no other definition in L → init + (@L+1)·step."""
        i, reg = self.defs[d]
        ins = self.instrs[i]
        if ins.base not in ("add", "sub") or len(ins.operands) != 3 or ins.guard is not None:
            return None
        if "cc" in ins.mods or any(t in FLOAT_TYPES for t in operand_types(ins.mods)):
            return None
        header = self.innermost_loop(ins.block)
        if header is None:
            return None
        body = self.loops[header].body
        if [x for x in self.defs_of[reg] if self.instrs[self.defs[x][0]].block in body] != [d]:
            return None
        a, b = ins.operands[1].strip(), ins.operands[2].strip()
        if a == reg:
            other = b
        elif b == reg and ins.base == "add":
            other = a
        else:
            return None
        incoming = self.reaching(reg, i)
        if d not in incoming or len(incoming) < 2:
            return None
        self.depth += 1
        try:
            step = self.value(other, i)
            inits = [self.of_def(x) for x in incoming if x != d]
        finally:
            self.depth -= 1
        if ins.base == "sub":
            step = -step
        if not inits or any(v != inits[0] for v in inits) or not self.invariant_in(step, header):
            return None
        init = inits[0]
        for s in init.symbols:  # an init computed in an earlier sibling loop is its final value
            h = self.loop_of_symbol.get(s)
            if h is not None and header not in self.loops[h].body:
                return None
        self.iv[d] = (header, init, step)
        index = Polynomial.symbol(f"@{self.blocks[header].name}")
        return init + (index + 1) * step

    def _evaluate(self, d: int) -> Polynomial:
        i, reg = self.defs[d]
        ins = self.instrs[i]
        block = ins.block
        unknown = self.opaque(f"{reg}#{i}", block)
        ops = ins.operands
        types = operand_types(ins.mods)
        if any(t in FLOAT_TYPES for t in types) and ins.base not in ("ld",):
            return unknown
        if len(ins.dests) != 1 or ins.guard is not None:
            return unknown  # predicated definitions merge with older values
        base = ins.base

        def v(k: int) -> Polynomial:
            return self.value(ops[k], i) if k < len(ops) else unknown

        if base in ("mov", "cvta") and len(ops) == 2 and not ops[1].startswith("{"):
            return v(1)
        if base == "cvt" and len(ops) == 2 and not any(t in FLOAT_TYPES for t in types):
            return v(1)
        if base == "ld" and state_space(ins.mods) == "param" and len(ops) == 2:
            m = re.fullmatch(r"\[\s*([A-Za-z_$][\w$]*)\s*(?:\+\s*0\s*)?\]", ops[1])
            if m and m.group(1) in self.param_symbols and not any(t in FLOAT_TYPES for t in types):
                return Polynomial.symbol(self.param_symbols[m.group(1)])
            return unknown
        if base in ("add", "sub", "mul", "mad", "shl", "neg", "and", "or", "xor", "shr", "div", "rem", "not"):
            return self._arith(ins, i, reg, unknown)
        return unknown

    def _arith(self, ins: Instr, i: int, reg: str, unknown: Polynomial) -> Polynomial:
        base, mods, ops = ins.base, ins.mods, ins.operands
        vals = [self.value(o, i) for o in ops[1:]]
        consts = [x.constant_value() for x in vals]
        if base == "add" and len(vals) == 2 and "cc" not in mods:
            return vals[0] + vals[1]
        if base == "sub" and len(vals) == 2 and "cc" not in mods:
            return vals[0] - vals[1]
        if base == "neg" and len(vals) == 1:
            return -vals[0]
        if base == "mul" and len(vals) == 2 and ("lo" in mods or "wide" in mods):
            return vals[0] * vals[1]
        if base == "mad" and len(vals) == 3 and ("lo" in mods or "wide" in mods) and "cc" not in mods:
            return vals[0] * vals[1] + vals[2]
        if base == "shl" and len(vals) == 2 and consts[1] is not None and 0 <= consts[1] < 64:
            return vals[0] * (2 ** int(consts[1]))
        if all(c is not None and c.denominator == 1 for c in consts):
            return self._fold(base, [int(c) for c in consts], unknown)  # type: ignore[arg-type]
        if base == "and" and len(vals) == 2:
            for x, mask in ((vals[0], consts[1]), (vals[1], consts[0])):
                if mask is not None and mask.denominator == 1:
                    return self._masked(x, int(mask), reg, i, unknown)
        divisor = consts[1] if len(consts) == 2 else None
        if divisor is not None and divisor.denominator == 1 and divisor > 0:
            # x >> k, x / c, x % c by constants (non-negative x assumed): x/c minus a fraction in
            # [0, (c-1)/c], and a remainder in [0, c-1] — bounded values the trip counts can use.
            c = 2 ** int(divisor) if base == "shr" and divisor < 64 else (int(divisor) if base in ("div", "rem") else 0)
            name, block = f"~{reg}#{i}", self.instrs[i].block
            if c > 1 and base in ("shr", "div"):
                frac = self._range(name, 0, Fraction(c - 1, c), f"frac({self.plain(vals[0])}/{c})", block)
                return vals[0] * Fraction(1, c) - frac
            if c > 1 and base == "rem":
                return self._range(name, 0, c - 1, f"({self.plain(vals[0])} % {c})", block)
        return unknown

    @staticmethod
    def _fold(base: str, c: list[int], unknown: Polynomial) -> Polynomial:
        try:
            if base == "and" and len(c) == 2:
                return const(c[0] & c[1])
            if base == "or" and len(c) == 2:
                return const(c[0] | c[1])
            if base == "xor" and len(c) == 2:
                return const(c[0] ^ c[1])
            if base == "shr" and len(c) == 2 and 0 <= c[1] < 64:
                return const(c[0] >> c[1])
            if base == "div" and len(c) == 2 and c[1]:
                return const(int(c[0] / c[1]) if abs(c[0]) < 2 ** 52 else c[0] // c[1])
            if base == "rem" and len(c) == 2 and c[1]:
                return const(int(math.fmod(c[0], c[1])))
            if base == "not" and len(c) == 1:
                return const(~c[0])
        except (OverflowError, ValueError):
            pass
        return unknown

    def _masked(self, x: Polynomial, mask: int, reg: str, i: int, unknown: Polynomial) -> Polynomial:
        """`x & (2^k-1)` is a value in [0, 2^k-1]; `x & ~(2^k-1)` is x minus such a value
        (the remainder and the main count of a loop unrolled k times)."""
        block = self.instrs[i].block
        for width in (32, 64):
            full = (1 << width) - 1
            m = mask & full
            low = m + 1
            if m and low & m == 0:  # mask = 2^k - 1
                return self._range(f"~{reg}#{i}", 0, m, f"({self.plain(x)} & {m})", block)
            for top in (full, full >> 1):  # ~(2^k-1), with or without the sign bit
                rest = top & ~m
                if m & ~top == 0 and (rest + 1) & rest == 0 and rest:
                    return x - self._range(f"~{reg}#{i}", 0, rest, f"({self.plain(x)} & {rest})", block)
        return unknown

    def readable(self, poly: Polynomial) -> Polynomial:
        """Ranged symbols replaced by their text, special registers by CUDA names, for messages."""
        for s in poly.symbols:
            if s in self.ranges:
                poly = poly.substitute(s, Polynomial.symbol(self.ranges[s].text))
            elif is_special(s):
                poly = poly.substitute(s, Polynomial.symbol(cuda_name(s)))
        return poly

    def plain(self, poly: Polynomial) -> str:
        text = self.readable(poly).format()
        return text if re.fullmatch(r"[\w@$%.]+", text) else f"({text})"

    def _range(self, name: str, low: int | Fraction, high: int | Fraction, text: str, home: int) -> Polynomial:
        self.ranges[name] = Range(Fraction(low), Fraction(high), text, home)
        return Polynomial.symbol(name)


def cuda_name(special: str) -> str:
    m = re.fullmatch(r"%(\w+)\.([xyz])", special)
    if m and m.group(1) in _CUDA_NAMES:
        return f"{_CUDA_NAMES[m.group(1)]}.{m.group(2)}"
    return special
