"""Loop trip counts from PTX: the compare that decides each loop's exit, as a linear function
of the loop index, solved for the first failing iteration (counted, unrolled, grid-stride
loops), or a simulated constant recurrence (`s >>= 1`). Counts are per thread."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from ccls.early_exit import early_exit_trip
from ccls.model import TripCount
from ccls.polynomial import Polynomial
from ccls.readers.ptx.cfg import dominates
from ccls.readers.ptx.instructions import FLOAT_TYPES, Instr, is_special, operand_types
from ccls.readers.ptx.recurrence import geometric, simulate
from ccls.readers.ptx.values import GRID_SIZES, SPECIAL_RANGES, Analysis, coefficients, const, cuda_name, linear


_NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le",
           "lo": "hs", "hs": "lo", "ls": "hi", "hi": "ls"}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@dataclass
class Trip:
    count: TripCount
    note: str | None  # assumption text, when the count is not exact


class _Unknown(Exception):
    """Why a trip count could not be derived, and the loop test it was derived from."""

    def __init__(self, reason: str, source: str = ""):
        super().__init__(reason)
        self.reason, self.source = reason, source


def trip_count(an: Analysis, header: int, default: int, where: str, sizes: Mapping[str, int],
               early_exit: str = "expected") -> Trip:
    """Iterations per entry into the loop, per thread. `sizes`: launch sizes known from the source
    (`%ntid.x` → 256), for stride loops; `early_exit`: the policy for loops with other exits."""
    try:
        return _derive_trip(an, header, where, sizes, early_exit)
    except _Unknown as why:
        return Trip(TripCount("unknown", const(default), why.source),
                     f"{where}: trip count unknown ({why.reason}); assumed {default} iterations")


def _derive_trip(an: Analysis, header: int, where: str, sizes: Mapping[str, int], early_exit: str) -> Trip:
    info = an.loops[header]
    if len(info.latches) != 1:
        raise _Unknown("several back edges")
    latch = info.latches[0]
    idom = an.idom
    exiting = [b for b in sorted(info.body, reverse=True)
               if any(s not in info.body for s in an.blocks[b].succs)]
    if not exiting:
        raise _Unknown("no exit")
    candidates = [b for b in exiting if dominates(idom, b, latch)]
    if not candidates:
        raise _Unknown("the exit test does not run on every iteration")
    last_error: _Unknown | None = None
    for exit_block in candidates:
        try:
            trip = _trip_from_exit(an, header, exit_block, where, sizes)
        except _Unknown as why:
            last_error = why
            continue
        if len(exiting) > 1 and trip.count.kind != "unknown":
            count, how = early_exit_trip(trip.count.iterations, early_exit, trip.count.source_text)
            more = f"{where}: loop has {len(exiting) - 1} other exit(s), taken on data; {how}"
            trip = Trip(count, f"{trip.note}; {more}" if trip.note else more)
        return trip
    assert last_error is not None
    raise last_error


def _trip_from_exit(an: Analysis, header: int, exit_block: int, where: str, sizes: Mapping[str, int]) -> Trip:
    block = an.blocks[exit_block]
    term = an.instrs[block.instrs[-1]] if block.instrs else None
    if term is None or term.base != "bra" or term.guard is None or not term.operands:
        raise _Unknown("the loop exit is not a conditional branch")
    body = an.loops[header].body
    taken = [s for s in block.succs if an.blocks[s].name == term.operands[0].strip()]
    stays_when_taken = bool(taken) and taken[0] in body
    continue_if_true = stays_when_taken != term.guard_negated
    pred = term.guard
    defs = an.reaching(pred, block.instrs[-1])
    if len(defs) != 1:
        raise _Unknown(f"predicate {pred} has {len(defs)} reaching definitions")
    setp_index, _ = an.defs[defs[0]]
    setp = an.instrs[setp_index]
    if setp.base != "setp" or len(setp.operands) != 3 or not setp.mods:
        raise _Unknown(f"exit predicate is computed by {setp.opcode}", setp.text)
    if any(t in FLOAT_TYPES for t in operand_types(setp.mods)):
        raise _Unknown("floating-point loop test", setp.text)
    cmp = setp.mods[0]
    if cmp not in _NEGATE:
        raise _Unknown(f"unsupported compare {cmp}", setp.text)
    if "|" in setp.operands[0] and setp.operands[0].split("|")[1].strip() == pred:
        cmp = _NEGATE[cmp]  # the complement predicate of `setp %p|%q`
    if not continue_if_true:
        cmp = _NEGATE[cmp]
    cmp = _UNSIGNED.get(cmp, cmp)
    index = f"@{an.blocks[header].name}"
    a = an.value(setp.operands[1], setp_index)
    b = an.value(setp.operands[2], setp_index)
    split = linear(a - b, index)
    if split is None or not an.invariant_in(split[0], header):
        simulated = simulate(an, header, setp_index, cmp)
        if simulated is not None:
            return _finish_trip(an, header, const(simulated), setp, where, "")
        logarithmic = geometric(an, header, setp_index, cmp, sizes)
        if logarithmic is not None:
            count, how = logarithmic
            return _finish_trip(an, header, count, setp, where, f"{where}: the counter is {how}: {count.format()} "
                                                                 f"iterations")
        if split is None:
            raise _Unknown("test is not linear in the iteration", setp.text)
        raise _Unknown("bound changes inside the loop", setp.text)
    c0, c1 = split
    step = c1.constant_value()
    if step is None:
        return _stride_loop(an, header, c0, c1, cmp, setp, where, sizes)
    if step == 0:
        raise _Unknown("no induction variable in the test", setp.text)
    count = _count(cmp, -c0 * (Fraction(1) / step), step)
    if count is None:
        raise _Unknown(f"compare {cmp} never reaches its bound with step {step}", setp.text)
    return _finish_trip(an, header, count + 1, setp, where, "", sizes=sizes)




def _count(cmp: str, t: Polynomial, step: Fraction) -> Polynomial | None:
    """Back edges taken while `c0 + c1·k <cmp> 0` holds for k = 0, 1, … (t = −c0/c1)."""
    tc = t.constant_value()
    if cmp in ("lt", "gt") and (step > 0) == (cmp == "lt"):
        return const(max(0, math.ceil(tc))) if tc is not None else t  # ⌈t⌉ ≈ t for symbols
    if cmp in ("le", "ge") and (step > 0) == (cmp == "le"):
        return const(max(0, math.floor(tc) + 1)) if tc is not None else t + 1
    if cmp == "ne":
        if tc is not None and (tc < 0 or tc.denominator != 1):
            return None
        return t
    return None


def _stride_loop(an: Analysis, header: int, c0: Polynomial, c1: Polynomial, cmp: str, setp: Instr,
                 where: str, sizes: Mapping[str, int]) -> Trip:
    """Step = k·blockDim·gridDim (a grid- or block-stride loop). Over a bound of the grid's size
    (`i < n`) the threads share the iterations: each runs bound / step of them on average, known
    only with the launch sizes; over a bound in units of the step (`i < n·blockDim.x`) each
    thread runs bound / step of them whatever the sizes."""
    if len(c1.terms) != 1:
        raise _Unknown("step is not a constant", setp.text)
    mono, k = c1.terms[0]
    if k <= 0 or not mono or not all(GRID_SIZES.match(s) for s, _ in mono) or cmp not in ("lt", "le", "ne"):
        raise _Unknown("step is not a constant", setp.text)
    stride = "·".join(cuda_name(s) + (f"^{p}" if p > 1 else "") for s, p in mono)
    if k != 1:
        stride = f"{k}·{stride}"
    remaining = -c0
    shared = Polynomial(tuple((m, c) for m, c in remaining.terms if not any(is_special(s) for s, _ in m)))
    if not shared.is_zero:
        return _shared_stride(an, header, shared, k, mono, stride, setp, where, sizes)
    per_thread = Polynomial(tuple((m, c) for m, c in remaining.terms if dict(m).keys() >= dict(mono).keys()))
    quotient = Polynomial(tuple((tuple((s, p - dict(mono).get(s, 0)) for s, p in m if p - dict(mono).get(s, 0)), c / k)
                                for m, c in per_thread.terms))
    count = _count(cmp, quotient, Fraction(1))
    if count is None:
        raise _Unknown("stride loop never reaches its bound", setp.text)
    note = f"{where}: stride loop (step {stride}) over a bound in the same units; thread offsets ignored"
    return _finish_trip(an, header, count + 1, setp, where, note, kind="bounded")


def _shared_stride(an: Analysis, header: int, bound: Polynomial, k: Fraction, mono: tuple, stride: str,
                   setp: Instr, where: str, sizes: Mapping[str, int]) -> Trip:
    """The threads of the stride share `bound` iterations: bound / (k·Π sizes) each, on average."""
    formula = f"{an.plain(bound)}/({stride})"
    if all(s in sizes for s, _ in mono):
        threads = Fraction(k) * math.prod(sizes[s] ** p for s, p in mono)
        note = (f"{where}: stride loop (step {stride} = {threads} from the launch): each thread runs "
                f"{formula} iterations on average")
        return _finish_trip(an, header, bound * (1 / threads), setp, where, note, whole_iterations=False)
    checked = _finish_trip(an, header, bound, setp, where, "")  # the bound must be a parameter or constant
    total = checked.count.iterations.format()
    note = (f"{where}: stride loop (step {stride}): each thread runs about {formula} iterations; launch "
            f"configuration unknown, so 1 per thread is assumed (at least {total} threads along the stride, "
            f"as a `<<<({total} + B - 1) / B, B>>>` launch has)")
    return Trip(TripCount("unknown", const(1), checked.count.source_text), note)


def _finish_trip(an: Analysis, header: int, trip: Polynomial, setp: Instr, where: str, note: str,
                 kind: str | None = None, whole_iterations: bool = True, sizes: Mapping[str, int] | None = None) -> Trip:
    """Replace ranged symbols: computed ones (`n & 3`, a division's remainder) by their mean, as
    the LLVM reader does; thread indices (threadIdx.x) by their extreme, an upper bound. Then
    check that only parameters and outer loop indices remain. `whole_iterations`: a count below 1
    is an error (not for a mean over threads)."""
    shown = an.readable(trip)
    source = f"{setp.text} → {shown.format()}"
    trip, launched, named = _grid_sizes(trip, sizes) if sizes is not None else (trip, [], [])
    means: list[str] = []
    bounded: list[str] = []
    for s in sorted(trip.symbols):
        if s in an.ranges or s in SPECIAL_RANGES:
            coeffs = coefficients(trip, s) or {}
            if any(k > 1 for k in coeffs) or (1 in coeffs and coeffs[1].constant_value() is None):
                raise _Unknown("trip count depends non-linearly on a bounded value", source)
            if s in an.ranges:
                value = (an.ranges[s].low + an.ranges[s].high) / 2
                means.append(f"{an.ranges[s].text} taken as its mean {_number(value)}")
            else:
                low, high = SPECIAL_RANGES[s]
                c = coeffs.get(1, Polynomial()).constant_value() or Fraction(0)
                value = Fraction(high if c > 0 else low)
                bounded.append(f"{cuda_name(s)} = {value}")
            trip = trip.substitute(s, const(value))
    ancestors = set()
    p = an.loops[header].parent
    while p is not None:
        ancestors.add(f"@{an.blocks[p].name}")
        p = an.loops[p].parent
    for s in trip.symbols:
        if s.startswith("@") and s not in ancestors:
            raise _Unknown("depends on another loop's index", source)
        if s.startswith(("?", "~", "%", "&")):
            raise _Unknown("bound is not a parameter or constant", source)
    value = trip.constant_value()
    if value is not None and (value <= 0 or (whole_iterations and value < 1)):
        raise _Unknown(f"computed {value} iterations", source)
    notes = [note] if note else []
    if launched:
        notes.append(f"{where}: {', '.join(launched)} from the launch in this file")
    if named:
        notes.append(f"{where}: {', '.join(named)} not given by a launch in this file: a named size "
                     f"(set it with --param {named[0]}=…)")
    if means:
        notes.append(f"{where}: {', '.join(means)} (the expected value): {trip.format()} iterations "
                     f"(exact: {shown.format()})")
    if bounded:
        notes.append(f"{where}: at most {trip.format()} iterations (exact: {shown.format()}; took "
                     f"{', '.join(bounded)})")
        kind = "bounded"
    if kind is None:
        kind = "constant" if value is not None else "symbolic"
    return Trip(TripCount(kind, trip, source), "; ".join(notes) or None)  # type: ignore[arg-type]


def _grid_sizes(trip: Polynomial, sizes: Mapping[str, int]) -> tuple[Polynomial, list[str], list[str]]:
    """blockDim/gridDim in a trip count: their value where a launch in the file gives it, else
    the named size `blockDim.x` (a parameter the user can set). Returns the count, the sizes
    taken from launches and the sizes named."""
    launched, named = [], []
    for s in sorted(trip.symbols):
        if GRID_SIZES.match(s):
            if s in sizes:
                trip = trip.substitute(s, const(sizes[s]))
                launched.append(f"{cuda_name(s)} = {sizes[s]}")
            else:
                trip = trip.substitute(s, Polynomial.symbol(cuda_name(s)))
                named.append(cuda_name(s))
    return trip, launched, named


def _number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"
