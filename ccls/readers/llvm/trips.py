"""Loop trip counts: ScalarEvolution's counts as polynomials, and what it leaves unknown
(logarithmic loops, data walks, early exits, error paths, merged counters, alias-check copies).
"""
from __future__ import annotations

import math
import re
from typing import Callable
from dataclasses import replace
from fractions import Fraction

from ccls.early_exit import early_exit_trip, first_difference_trip
from ccls.model import TripCount
from ccls.polynomial import LOG2_PREFIX, Polynomial
from ccls.readers import alias_checks, data_walks
from ccls.readers.recursion import recursing_pass
from ccls.readers.llvm import physical_bounds, tree_descents
from ccls.readers.llvm.fixpoint import fixpoint_rounds, until_found_rounds
from ccls.readers.llvm.named_rounds import named_rounds
from ccls.readers.llvm.opcodes import _callee_name
from ccls.readers.llvm.heap_children import child_growth, compared_with
from ccls.readers.llvm.reading import _exit_test, _Reading, _scev_context, _successors
from ccls.readers.llvm.text import IRInstruction
from ccls.readers.scev import (BudgetExhausted, FunctionAnalyses, NotPolynomial, ReadingBudget, ValueTable,
                               add_recurrence, split_add_recurrence, spoken, to_polynomial)
from ccls.readers.scev import UNKNOWN as UNKNOWN_SCEV


_HALVING = re.compile(r"^%(?P<name>[-\w.$]+) = (?:lshr|ashr|udiv|sdiv)(?: exact)? i\d+ %(?P<phi>[-\w.$]+), (?P<k>\d+)$")
_GROWING = re.compile(r"^%(?P<name>[-\w.$]+) = (?:shl|mul)(?: nuw)?(?: nsw)? i\d+ %(?P<phi>[-\w.$]+), (?P<k>\d+)$")
_COMPARE = re.compile(r"= icmp \w+ i\d+ %?(?P<a>[-\w.$]+), %?(?P<b>[-\w.$]+)$")


def _halving_trip(record, body: list, definitions: dict, analyses: FunctionAnalyses, parameters: set[str],
                  assumptions: list[str], reading: _Reading | None = None) -> TripCount | None:
    """Logarithmic loops ScalarEvolution has no closed form for: ``while (x > 1) x >>= k`` or
    ``x /= c`` runs about log_c(x₀) times (its start linear in one parameter), and
    ``for (i = 1; i < n; i *= c)`` about log_c(n) (its bound linear in one parameter). The
    result is symbolic in ``log2(param)``, scaled by 1 / log2(c)."""
    if record.backedge_taken and UNKNOWN_SCEV not in record.backedge_taken:
        return None
    header = next((instrs for name, instrs in body if name == record.header), None)
    if header is None:
        return None
    inside = set(record.blocks)
    header_phis = {i.name: i.text for i in header if i.opcode == "phi"}
    loop_instrs = [(i.name, i.text.split(", !")[0]) for name, block in body if name in inside for i in block]
    merges: dict = {}  # _grown_then_merged's answers for this loop's values
    for instr in header:
        if instr.opcode != "phi":
            continue
        if (sifted := _sift_down_trip(instr.name, header_phis, record, body, loop_instrs, definitions, analyses,
                                      parameters, assumptions, reading)) is not None:
            return sifted
        pairs = _PHI_INCOMING.findall(instr.text)
        step = [v for v, block in pairs if block in inside]
        start = [v for v, block in pairs if block not in inside]
        if len(step) != 1 or len(start) != 1:
            continue
        step_text = definitions[step[0]].text.split(", !")[0] if step[0] in definitions else ""  # without metadata
        shrinking, growing = _HALVING.match(step_text), _GROWING.match(step_text)
        grown = None if shrinking or growing else _grown_then_merged(step[0], instr.name, inside, definitions, merges)
        if grown is not None:  # `j = k + k; if (…) j++; k = j`: the product, then a merge with it plus a constant
            growing, step_text = grown
        m = shrinking or growing
        if not m or int(m["k"]) < 1 or m["phi"] != instr.name and not (
                growing and _at_least(m["phi"], instr.name, inside, definitions)):
            continue
        k = int(m["k"])
        bits = k if ("shr" in step_text or "shl" in step_text) else math.log2(k) if k >= 2 else 0.0
        if bits <= 0:
            continue
        if shrinking:
            symbol = _log2_symbol(start[0], analyses, parameters)
            how = f"divided by {2 ** k if 'shr' in step_text else k} each iteration"
            if symbol is None and (top := _counter_max(start[0], analyses)) is not None and top >= 2:
                # it starts at a count an enclosing loop keeps (a heap's size as it fills): at most its largest
                iterations = Polynomial.constant(Fraction(math.log2(top + 1) / bits).limit_denominator(1000))
                assumptions.append(f"loop %{record.header}: %{instr.name} is {how}, from a value an enclosing "
                                   f"loop counts, at most {top}: trip count taken as {iterations}")
                return TripCount("bounded", iterations, record.backedge_taken or "")
        else:
            symbol = _growth_bound(instr.name, {step[0], m["name"]}, record, body, definitions, analyses,
                                   parameters, reading)
            how = f"multiplied by {2 ** k if 'shl' in step_text else k} each iteration until it reaches the bound"
            if m["phi"] != instr.name or grown is not None:
                how = (f"multiplied by {2 ** k if 'shl' in step_text else k} each iteration, after adding a small "
                       f"constant on some paths (a heap's child index), until it passes the bound, or leaves "
                       f"earlier on data (at most that many)")
        if symbol is None:
            continue
        iterations = Polynomial.symbol(symbol) * Fraction(1 / bits).limit_denominator(1000)
        assumptions.append(f"loop %{record.header}: %{instr.name} is {how}; trip count taken as {iterations}")
        return TripCount("bounded", iterations, record.backedge_taken or "")
    return None


def _sift_down_trip(index: str, header_phis: dict[str, str], record, body: list, instrs: list[tuple[str, str]],
                    definitions: dict, analyses: FunctionAnalyses, parameters: set[str], assumptions: list[str],
                    reading: _Reading | None) -> TripCount | None:
    """A heap's sift-down whose children are carried round the loop (`heap_children`): at most
    log₂ of the bound its children are compared with. `instrs`: the loop's (name, text without
    metadata)."""
    inside = set(record.blocks)
    grown = child_growth(index, header_phis, inside, instrs, definitions)
    if grown is None:
        return None
    if (symbol := _growth_bound(index, grown, record, body, definitions, analyses, parameters, reading)) is not None:
        iterations = Polynomial.symbol(symbol)
    else:  # a bound an enclosing loop counts (a heap filled or emptied): its largest
        tops = [top for bound in compared_with(grown, instrs) if (top := _counter_max(bound, analyses)) is not None]
        if not tops or max(tops) < 2:
            return None
        iterations = Polynomial.constant(Fraction(math.log2(max(tops) + 1)).limit_denominator(1000))
    assumptions.append(f"loop %{record.header}: %{index} moves each iteration to one of its children, which hold "
                       f"twice it plus a small constant (a heap's child index), or the loop leaves: it at least "
                       f"doubles until its children pass the bound, so at most {iterations} iterations, taken as that")
    return TripCount("bounded", iterations, record.backedge_taken or "")


def _counter_max(value: str, analyses: FunctionAnalyses) -> int | None:
    """The most `value`, a count an enclosing loop keeps, reaches: C for `{C,+,-k}` (counted down
    from C), C + k·B for `{C,+,k}` over a loop whose back edge is taken a constant B times."""
    recurrence = add_recurrence(analyses.value_scevs.get(value, ""))
    if recurrence is None or recurrence.constant_start is None:
        return None
    start, step = recurrence.constant_start, recurrence.step
    if step <= 0:
        return start
    record = analyses.loops.get(recurrence.loop)
    taken = re.sub(r"^i\d+ ", "", record.backedge_taken or "") if record is not None else ""
    return start + step * int(taken) if taken.isdigit() else None


_SMALL_STEP = re.compile(r"^%(?P<name>[-\w.$]+) = (?:add(?: nuw)?(?: nsw)?|or(?: disjoint)?) i\d+ "
                         r"%(?P<phi>[-\w.$]+), (?P<c>\d+)$")


def _at_least(value: str, phi: str, inside: set[str], definitions: dict, depth: int = 0) -> bool:
    """Whether `value` merges, inside the loop, `phi` and `phi` plus a small constant (`j` or
    `j + 1`, a heap's left or right child, through phis and selects): a value at least the
    phi's, so that a counter multiplied from it grows at least as fast as one multiplied from it."""
    merge = definitions.get(value)
    if value == phi or depth > 3 or merge is None or merge.opcode not in ("phi", "select"):
        return False
    if merge.opcode == "phi":
        pairs = _PHI_INCOMING.findall(merge.text)
        if not pairs or any(block not in inside for _, block in pairs):
            return False
        arms = [v for v, _ in pairs]
    else:
        arms = [op.name for op in merge.operands[1:3]]
    if phi not in arms:
        return False
    for v in arms:
        step = definitions.get(v)
        m = _SMALL_STEP.match(step.text.split(", !")[0]) if step is not None else None
        if v != phi and not (m and m["phi"] == phi and int(m["c"]) <= 16) \
                and not _at_least(v, phi, inside, definitions, depth + 1):
            return False
    return True


def _grown_then_merged(value: str, phi: str, inside: set[str], definitions: dict, memo: dict,
                       depth: int = 0) -> tuple[re.Match, str] | None:
    """(the match, its text) of the product `phi · c` (or `phi << k`) that `value` merges with
    itself plus a small constant (`j = k + k; if (…) j++;`: a heap's left or right child), so
    that the counter grows at least as fast as the product; None for any other value. `memo`:
    answers already found for this loop (a state machine's phis share their arms: unremembered,
    the walk grows as the arms to the power of the depth)."""
    key = (value, phi, depth)
    if key not in memo:
        memo[key] = _grown_then_merged_once(value, phi, inside, definitions, memo, depth)
    return memo[key]


def _grown_then_merged_once(value: str, phi: str, inside: set[str], definitions: dict, memo: dict,
                            depth: int) -> tuple[re.Match, str] | None:
    merge = definitions.get(value)
    if merge is None or merge.opcode not in ("phi", "select") or depth > 3:
        return None
    arms = [v for v, _ in _PHI_INCOMING.findall(merge.text)] if merge.opcode == "phi" else \
        [op.name for op in merge.operands[1:3]]
    for arm in arms:
        text = definitions[arm].text.split(", !")[0] if arm in definitions else ""
        m = _GROWING.match(text)
        if m and m["phi"] == phi and _at_least(value, arm, inside, definitions):
            return m, text
        if (deeper := _grown_then_merged(arm, phi, inside, definitions, memo, depth + 1)) is not None \
                and _at_least(value, deeper[0]["name"], inside, definitions):
            return deeper
    return None


_BY_CONSTANT = re.compile(r"^%(?P<name>[-\w.$]+) = (?:sdiv|udiv|lshr|ashr)(?: exact)? i\d+ %(?P<of>[-\w.$]+), \d+$")


def _growth_bound(phi: str, steps: set[str], record, body: list, definitions: dict, analyses: FunctionAnalyses,
                  parameters: set[str], reading: _Reading | None = None) -> str | None:
    """``log2(n)`` for the bound a growing index (its phi, or a step of it) is compared with in
    its loop (`i < n`, `j <= s->heap_len` read at each iteration from a member the loop does not
    store to, `k <= n / 2`: the constant divisor dropped, as log₂ drops constants), n a
    parameter, a member, or a C variable the function computes (`variable_of`)."""
    inside = set(record.blocks)
    compared = {phi} | steps
    for name, instrs in body:
        if name not in inside:
            continue
        for instr in instrs:
            m = _COMPARE.search(instr.text.split(", !")[0]) if instr.opcode == "icmp" else None
            if m and {m["a"], m["b"]} & compared:
                other = m["b"] if m["a"] in compared else m["a"]
                if other in definitions and (divided := _BY_CONSTANT.match(definitions[other].text.split(", !")[0])):
                    other = divided["of"]
                symbol = _log2_symbol(other, analyses, parameters) or _log2_of_member(other, record, body,
                                                                                      definitions, parameters)
                if symbol is None and reading is not None:
                    symbol = _log2_of_variable(other, inside, analyses, parameters, reading)
                if symbol is not None:
                    return symbol
    return None


def _log2_of_variable(value: str, inside: set[str], analyses: FunctionAnalyses, parameters: set[str],
                      reading: _Reading) -> str | None:
    """``log2(n)`` for a bound set before the loop from one C variable the function computes
    (`n`, `n - 1` as an enclosing loop counts n down: its constants and outer-loop steps
    dropped, as `_log2_symbol` drops them)."""
    bare = physical_bounds.uncast(value, reading)
    if reading.block_of.get(bare) in inside:
        return None
    named = {physical_bounds.variable_of(v, reading, parameters)
             for v in [bare, *re.findall(r"%([-\w.$]+)", analyses.value_scevs.get(bare, ""))]
             if v in reading.definitions}
    named.discard(None)
    if len(named) != 1:
        return None
    variable = named.pop()
    reading.counted_values.setdefault(variable, set()).add(bare)
    return f"{LOG2_PREFIX}{variable})"


def _log2_of_member(value: str, record, body: list, definitions: dict, parameters: set[str]) -> str | None:
    """``log2(s->heap_len)`` for a bound read from a named member, before the loop or in it from
    an address the loop never stores to."""
    loaded = definitions.get(value)
    if loaded is None or loaded.opcode != "load":
        return None
    inside = set(record.blocks)
    in_loop = {i.name for name, instrs in body if name in inside for i in instrs if i.name}
    address = loaded.operands[0].name
    if address in in_loop or value in in_loop and any(
            i.opcode == "store" and len(i.operands) == 2 and i.operands[1].name == address
            for name, instrs in body if name in inside for i in instrs):
        return None
    named = data_walks.Names(definitions, parameters).value(value)
    return f"{LOG2_PREFIX}{named})" if named is not None else None


_PHI_INCOMING = re.compile(r"\[\s*%?([-\w.$]+),\s*%([-\w.$]+)\s*\]")


def _independent_entries(record, analyses: FunctionAnalyses, body: list, definitions: dict,
                         defined_in: dict[str, str], budget: ReadingBudget) -> bool:
    """Whether no value this loop carries starts from what an enclosing loop carried out of the
    loop's previous entry (``p = c[0]`` per point: independent; ``h`` hashed on across rows:
    not). Top-level loops say no: their entries are calls, which this function cannot see.
    Each question is a closure over the enclosing loop's values, found once (linear), not
    walked again from every start value."""
    if record.parent is None:
        return False
    inside = set(record.blocks)
    outer = set(analyses.loops[record.parent].blocks)
    headers = {r.header: r for r in analyses.loops.values() if r.header != record.header}
    in_outer = [i for name, instrs in body if name in outer for i in instrs if i.name]
    users: dict[str, list[str]] = {}  # value → the values of the enclosing loop computed from it
    for instr in in_outer:
        budget.spend()
        for op in instr.operands:
            if op.name:
                users.setdefault(op.name, []).append(instr.name)
    # values of the enclosing loop computed from a value of this loop
    from_inside = _closure({i.name for i in in_outer if defined_in.get(i.name) in inside}, users, budget)
    # ... and those computed from a loop header's phi fed (round that loop) by such a value
    fed_back = set()
    for instr in in_outer:
        block = defined_in.get(instr.name)
        if instr.opcode == "phi" and block in headers:
            loop_blocks = set(headers[block].blocks)
            if any(v in from_inside for v, b in _PHI_INCOMING.findall(instr.text) if b in loop_blocks):
                fed_back.add(instr.name)
    carried = _closure(fed_back, users, budget)
    header = next((instrs for name, instrs in body if name == record.header), [])
    for phi in (i for i in header if i.opcode == "phi"):
        if any(v in carried for v, b in _PHI_INCOMING.findall(phi.text) if b not in inside):
            return False
    return True


def _closure(seeds: set[str], users: dict[str, list[str]], budget: ReadingBudget) -> set[str]:
    """`seeds` and every value computed from one of them, through `users`."""
    found, work = set(seeds), list(seeds)
    while work:
        budget.spend()
        for user in users.get(work.pop(), ()):
            if user not in found:
                found.add(user)
                work.append(user)
    return found


def _log2_symbol(start: str, analyses: FunctionAnalyses, parameters: set[str]) -> str | None:
    """``log2(n)`` when the start value is n (+ constants or outer-loop indices, which are
    dropped: they shift log₂ little when n dominates)."""
    if start in parameters:
        return f"{LOG2_PREFIX}{start})"
    scev = analyses.value_scevs.get(start)
    if scev is None:
        return None
    named = set(re.findall(r"%([-\w.$]+)", scev))
    params = named & parameters
    if len(params) != 1:
        return None
    return f"{LOG2_PREFIX}{params.pop()})"


def _trip_count(record, analyses: FunctionAnalyses, parameters: set[str], enclosing: set[str],
                default_trip_count: int, early_exit: str, assumptions: list[str],
                substituted: dict[str, Polynomial], terminators: dict, reading: _Reading) -> TripCount:
    """`terminators`: each block's last instruction, to tell early exits from error paths.
    Raises BudgetExhausted when the function's budget runs out."""
    if _never_left(record, terminators):
        assumptions.append(f"loop %{record.header}: it has no exit (only exit(), abort() or a hang end it, as in "
                           f"an assertion's `while (1);`): a call that returns never runs it, so it is counted 0")
        return TripCount("constant", Polynomial.constant(0), record.backedge_taken or "")
    text = record.backedge_taken or ""
    unread = unread_bound = ""  # counts and bounds in run-time values, for `_named_run_time_values`
    ctx = _scev_context(analyses, parameters, enclosing, substituted, reading)
    derived = physical_bounds.exact_stride(record, analyses, terminators, reading) if not text else None
    target = _stride_target(derived, analyses, ctx) if derived is not None else None
    if target is None:
        derived = None
    else:
        text = derived.start
        assumptions.append(f"loop %{record.header}: {derived.note}")

    def counted(start: Polynomial) -> Polynomial:  # iterations from the counter's start
        return start + 1 if derived is None else (target - start) * Fraction(1, derived.step) + 1

    if text:
        try:
            iterations = counted(to_polynomial(text, ctx))
            if (few := iterations.constant_value()) is not None and few <= 1 and "max" in text and "%" in text:
                # max(c, s) − s read as s − s: the constant was the bound (`for (i = n1 - 1; i < 32000;
                # …)`). Not for a remainder loop, whose start is where the main loop ended.
                again = replace(ctx, max_takes_constant=True, assumptions=[], memo=ValueTable())
                retried = counted(to_polynomial(text, again))
                if not again.read_phi_merge:
                    ctx, iterations = again, retried
            for note in dict.fromkeys(ctx.assumptions):
                assumptions.append(f"loop %{record.header}: {note}")
            if (most := _at_most_at_zero_sizes(iterations, record.header, assumptions)) is not None:
                return TripCount("bounded", most, text)
            kind = "constant" if iterations.constant_value() is not None else \
                "data" if iterations.symbols & reading.data_symbols else "symbolic"
            return TripCount(kind, iterations, text)
        except NotPolynomial as why:
            reason = str(why)
            unread = text  # a count in run-time values: named after their variables below, if nothing else says more
        if derived is not None:  # the count from the counter alone says no more than ScalarEvolution
            assumptions.pop(next(i for i in range(len(assumptions) - 1, -1, -1) if derived.note in assumptions[i]))
            text, reason = "", "ScalarEvolution cannot predict it"
    else:
        reason = "ScalarEvolution cannot predict it"
    # An exit that depends on data (a search, a break): ScalarEvolution still knows how often
    # the loop can run at most; the policy takes that bound or the mean exit, and says so.
    bound_text = record.symbolic_max_backedge_taken or ""
    read_again = False  # its maximum only what the types of values read in the loop allow
    if bound_text and UNKNOWN_SCEV not in bound_text:
        ctx.assumptions.clear()
        try:
            bound = to_polynomial(bound_text, ctx) + 1
        except NotPolynomial:
            bound, unread_bound = None, bound_text
        if bound is not None and (most := _at_most_at_zero_sizes(bound, record.header, assumptions)) is not None:
            bound = most
        limit = bound.constant_value() if bound is not None else None
        read_again = limit is not None and _bound_read_in_loop(record, analyses, terminators, reading)
        if bound is not None and (limit is None or 0 < limit < 1 << 20 and not _only_a_types_range(limit)
                                  and not read_again):
            if failing := _leaves_early_only_to_fail(record, terminators, reading):
                assumptions.append(f"loop %{record.header}: its other exits {failing}: taken as not taken, so it "
                                   f"runs to its bound {spoken(bound)}")
                return TripCount("bounded", bound, bound_text)
            trip, how = early_exit_trip(bound, early_exit, bound_text, spoken)
            assumptions.append(f"loop %{record.header}: trip count depends on data ({reason}); {how}")
            return trip
    most = record.constant_max_backedge_taken
    if most is not None and most < 1 << 20:
        bound = most + 1
        if not _range_of_run_time_values(bound_text) and not _only_a_types_range(bound) and not read_again:
            assumptions.append(f"loop %{record.header}: trip count unknown ({reason}); using its maximum {bound}")
            return TripCount("bounded", Polynomial.constant(bound), text)
        if bound <= default_trip_count:  # a worst case below what a loop without one is assumed to run
            assumptions.append(f"loop %{record.header}: trip count unknown ({reason}); at most {bound} (what the "
                               f"types of the values it depends on allow), taken as {bound}")
            return TripCount("bounded", Polynomial.constant(bound), text, worst_case=True)
        # e.g. 16383 for `len / 4` of a loaded unsigned short that is really at most 15: a type's
        # maximum, larger than any default, says nothing of how often the loop runs
        reason += f"; its maximum {bound} is only the range of a run-time value's type, not a count"
    if (walked := _walk_trip(record, parameters, analyses, early_exit, assumptions, terminators, reading)) is not None:
        return walked
    if (descent := tree_descents.tree_descent(record, terminators, reading, parameters, default_trip_count)) is not None:
        assumptions.append(f"loop %{record.header}: {descent.why}")
        if descent.node_bytes is not None:
            reading.tree_bytes[record.header] = descent.node_bytes
        return TripCount("expected", descent.iterations, text)
    if (merged := _merged_counter_trip(record, analyses, terminators, reading, ctx)) is not None:
        assumptions.append(f"loop %{record.header}: its counter is stepped on each path through the body (the "
                           f"copies merge before the exit test): {spoken(merged)} iterations")
        return TripCount("constant" if merged.constant_value() is not None else "symbolic", merged, text)
    if (stepped := _run_time_step_trip(record, analyses, terminators, reading, ctx)) is not None:
        most, step = stepped
        assumptions.append(f"loop %{record.header}: its counter steps by a value the loop does not change, known "
                           f"only at run time: at most {spoken(most)} iterations (a step of 1), taken as that, "
                           f"and its addresses move at that step")
        reading.unit_steps.update(step)
        return TripCount("bounded", most, text, worst_case=True)
    if (chunked := physical_bounds.chunked_count(record, terminators, reading, parameters, default_trip_count)) is not None:
        return _chunked_trip(chunked, record, text, early_exit, terminators, reading, assumptions)
    if (ratio := physical_bounds.run_time_stride_to_zero(record, terminators, reading, parameters)) is not None:
        extra, symbol, why = ratio
        reading.data_symbols.add(symbol)
        assumptions.append(f"loop %{record.header}: {why}; kept symbolic (set it with --param '{symbol}=N')")
        return TripCount("data", Polynomial.symbol(symbol) + extra, text)
    if unread and (read := _named_run_time_values(unread, ctx, parameters, reading)) is not None \
            and _at_least_once(counted(read[0])):
        # a count in values the function computes, named after the variables that hold them
        value_of, named, notes = read
        iterations = counted(value_of)
        symbols = iterations.symbols & (set(named.values()) | reading.data_symbols)
        for value, variable in named.items():
            reading.counted_values.setdefault(variable, set()).add(value)
        if derived is not None:
            assumptions.append(f"loop %{record.header}: {derived.note}")
        assumptions.extend(f"loop %{record.header}: {note}" for note in notes)
        reading.data_symbols.update(symbols)
        if not symbols:  # the values named cancelled: a count of its own
            assumptions.append(f"loop %{record.header}: its count, {spoken(iterations)}, is a difference in which "
                               f"the run-time values it reads cancel")
            return TripCount("constant", iterations, unread)
        assumptions.append(f"loop %{record.header}: its count, {spoken(iterations)}, depends on "
                           f"{_variables_note(named, symbols)}")
        return TripCount("data", iterations, unread)
    if (converging := _converging_trip(record, terminators, reading, ctx)) is not None:
        assumptions.append(f"loop %{record.header}: two counters move towards each other (one up, one down) and it "
                           f"leaves where they meet: {spoken(converging)} iterations")
        return TripCount("constant" if converging.constant_value() is not None else "symbolic", converging, text)
    if early_exit == "expected" and (compared := physical_bounds.first_difference(record, terminators, reading)):
        trip, how = first_difference_trip(compared[1], compared[0], text)
        assumptions.append(f"loop %{record.header}: trip count depends on data ({reason}); {how}")
        return trip
    rising = physical_bounds.rising_counter_trip(record, terminators, reading)
    bounds = [found for found in (physical_bounds.shift_width_trip(record, analyses, terminators, reading),
                                  physical_bounds.array_index_trip(record, analyses, terminators, reading),
                                  physical_bounds.shifted_mask_trip(record, terminators, reading),
                                  rising,
                                  physical_bounds.shifted_out_trip(record, terminators, reading)) if found]
    if bounds:
        most, why = min(bounds)
        step = physical_bounds.rising_counter_mean_step(record, terminators, reading, analyses.value_maxima) \
            if early_exit == "expected" and (most, why) == rising and most <= default_trip_count else None
        if step is not None:
            # The counter crosses its range in steps of the data's mean size, not of 1: the
            # iterations that fit are the range over the mean step (its worst case stays stated).
            most = Fraction(most / step).limit_denominator(1000)
            why += (f"; it rises by {float(step):.3g} on average (1 and the amounts the data adds on some paths, "
                    f"each taken at the middle of its range, the paths alike), so about {float(most):.3g} at that mean")
        if most <= default_trip_count and _leaves_early_on_data(record, terminators, reading):
            # what bounds the counter is one exit; another, on data, ends most entries sooner.
            # Still a guess from a worst case (`worst_case`): it joins a nest of unknown loops.
            trip, how = early_exit_trip(Polynomial.constant(most), early_exit, text, spoken)
            assumptions.append(f"loop %{record.header}: {why}, or leaves earlier on data; {how}")
            return replace(trip, worst_case=True)
        if most <= default_trip_count:
            assumptions.append(f"loop %{record.header}: {why}, taken as that")
            return TripCount("bounded" if step is None else "expected", Polynomial.constant(most), text,
                             worst_case=True)
        # A worst case above what a loop of unknown count is taken to run says little of how
        # often it runs (as for a type's range): the default stays, and the bound is stated.
        reason += f"; {why}"
    if unread and (indexed := _bounded_by_an_index(unread, record, ctx, terminators, reading)) is not None:
        most, why = indexed
        if most <= default_trip_count:
            assumptions.append(f"loop %{record.header}: {why}, taken as that")
            return TripCount("bounded", Polynomial.constant(most), text, worst_case=True)
        reason += f"; {why}"
    if unread_bound and (read := _named_run_time_values(unread_bound, ctx, parameters, reading)) is not None \
            and _at_least_once(read[0] + 1):
        # it may leave early on data, at the latest after a count in such values
        value_of, named, notes = read
        bound = value_of + 1
        symbols = bound.symbols & (set(named.values()) | reading.data_symbols)
        for value, variable in named.items():
            reading.counted_values.setdefault(variable, set()).add(value)
        assumptions.extend(f"loop %{record.header}: {note}" for note in notes)
        reading.data_symbols.update(symbols)
        trip, how = early_exit_trip(bound, early_exit, unread_bound, spoken)
        assumptions.append(f"loop %{record.header}: trip count depends on data; at most {spoken(bound)}, which "
                           f"depends on {_variables_note(named, symbols)}; {how}")
        return trip
    if (callee := recursing_pass(record, terminators, reading)) is not None:
        assumptions.append(f"loop %{record.header}: trip count unknown ({reason}); each pass calls {callee}, in a "
                           f"recursion with this function ({', '.join(sorted(reading.recursion))}): its calls form a tree, fewer "
                           f"than one per invocation on average, so it is taken to run once per entry (not "
                           f"{default_trip_count} passes each recursing)")
        return TripCount("expected", Polynomial.constant(1), text)
    if (rounds := fixpoint_rounds(record, analyses, terminators, reading)) is not None:
        expected, why = rounds
        assumptions.append(f"loop %{record.header}: {why}")
        return TripCount("expected", Polynomial.constant(expected), text)
    if (rounds := until_found_rounds(record, terminators, reading, list(reading.instructions))) is not None:
        expected, why = rounds
        assumptions.append(f"loop %{record.header}: {why}")
        return TripCount("expected", Polynomial.constant(expected), text)
    if (named := named_rounds(record, terminators, reading, parameters)) is not None:
        symbol, why = named  # a count only the data decides, named after what decides it
        reading.data_symbols.add(symbol)
        assumptions.append(f"loop %{record.header}: {why}; kept symbolic as `{symbol}` (set it with --param "
                           f"'{symbol}=N'; unset, the default {default_trip_count}, as for an unknown count)")
        return TripCount("data", Polynomial.symbol(symbol), text)
    assumptions.append(f"loop %{record.header}: trip count unknown ({reason}); assuming {default_trip_count}")
    return TripCount("unknown", Polynomial.constant(default_trip_count), text)


_ORDERED = re.compile(r"= icmp (?P<predicate>ne|[su](?:lt|le|gt|ge)) i\d+ %(?P<a>\"[^\"]+\"|[-\w.$]+), "
                      r"%(?P<b>\"[^\"]+\"|[-\w.$]+)(?:,|$)")


def _converging_trip(record, terminators: dict, reading: _Reading, ctx) -> Polynomial | None:
    """The count of a loop whose one exit test compares two counters of its own that approach
    each other (`for (i = 0, j = n - 1; i < j; i++, j--)`: a reversal, a two-ended scan), which
    ScalarEvolution leaves uncounted: tested at iteration k, they are A + a·k and B + b·k; with
    a > b, `A + a·k < B + b·k` first fails at k = (B − A) / (a − b), and the header has run once
    more than the tests that passed. None for any other loop."""
    branch, test = _exit_test(record, terminators, reading)
    compare = _ORDERED.search(test.text) if test is not None else None
    if compare is None:
        return None
    predicate, low, high = compare["predicate"], compare["a"].strip('"'), compare["b"].strip('"')
    if branch["true"].strip('"') not in record.blocks:  # it goes on while the compare fails: the converse
        if predicate == "ne":
            return None
        predicate = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}[predicate[1:]]
    if predicate[-2:] in ("gt", "ge"):
        low, high = high, low
    recurrences = [split_add_recurrence(ctx.value_scevs.get(physical_bounds.uncast(name, reading), "")) for name in (low, high)]
    if any(r is None or r[2].strip('"') != record.header or not re.fullmatch(r"-?\d+", r[1]) for r in recurrences):
        return None
    (start_low, step_low, _), (start_high, step_high, _) = recurrences
    closing = int(step_low) - int(step_high)
    if int(step_low) == 0 or int(step_high) == 0 or closing <= 0:
        return None  # one counter alone: ScalarEvolution's own case
    try:
        gap = to_polynomial(start_high, ctx) - to_polynomial(start_low, ctx)
    except NotPolynomial:
        return None
    passed = gap * Fraction(1, closing) + (1 if predicate[-1] == "e" else 0)  # `<=` passes at the meeting point too
    return passed + 1


def _never_left(record, terminators: dict) -> bool:
    """Whether no edge leaves the loop: once in it, the function never returns."""
    inside = set(record.blocks)
    return all(b in terminators for b in record.blocks) and not any(
        target not in inside for b in record.blocks for target in _successors(terminators[b]))


def _chunked_trip(chunked, record, text: str, early_exit: str, terminators: dict, reading: _Reading,
                  assumptions: list[str]) -> TripCount:
    """The count of a loop that takes a count in chunks (`physical_bounds.chunked_count`): its
    count where it has no other way out but to fail, else the early-exit policy's count with that
    as its bound."""
    count, data, why, edge = chunked
    reading.data_symbols.update(data)
    kind = "data" if data else "symbolic"
    sets = " ".join(f"--param '{symbol}=N'" for symbol in sorted(count.symbols))
    named = f"kept symbolic (set it with {sets})"
    inside = set(record.blocks)
    others = [(block, target) for block in record.blocks if block in terminators
              for target in _successors(terminators[block]) if target not in inside and (block, target) != edge]
    ordinary = [(b, t) for b, t in others
                if not _never_returns(t, terminators) and not _on_allocation_failure(terminators[b], t, reading)]
    if not ordinary:
        assumptions.append(f"loop %{record.header}: {why}: {spoken(count)}, {named}")
        return TripCount(kind, count, text)
    trip, how = early_exit_trip(count, early_exit, text, spoken)
    assumptions.append(f"loop %{record.header}: {why}, or leaves earlier on other data; at most {spoken(count)}, "
                       f"{named}; {how}")
    return trip


def _bounded_by_an_index(text: str, record, ctx, terminators: dict, reading: _Reading) -> tuple[int, str] | None:
    """A count that grows with one run-time value (`do { … } while (--len > 0)`, `len` read from a
    table) which the function, on its way into the loop, also uses to index an array of N
    elements (`next_code[len]++`): C defines that only below N, so the value is at most N − 1,
    and the loop runs at most its count there, a worst case of the data. (iterations, why), or
    None where the count is in no such value, or does not grow with it."""
    try:
        to_polynomial(text, replace(ctx, assumptions=[], memo=ValueTable()))
        return None
    except NotPolynomial as why:
        m = _RUN_TIME_VALUE.match(str(why))
    if m is None:
        return None
    value = m["value"].strip('"')
    found = physical_bounds.indexed_array_length(value, record, terminators, reading)
    if found is None:
        return None
    n, array = found
    marker = "index·value"
    again = replace(ctx, substituted={**ctx.substituted, value: Polynomial.symbol(marker)}, assumptions=[],
                    memo=ValueTable())
    try:
        count = to_polynomial(text, again) + 1
    except NotPolynomial:
        return None
    if count.symbols != {marker} or count.degree(marker) != 1 or dict(count.terms).get(((marker, 1),), 0) <= 0:
        return None
    most = count.substitute(marker, Polynomial.constant(n - 1)).constant_value()
    if most is None or most < 1:
        return None
    most = math.ceil(most)
    return most, (f"its count grows with a value read at run time that also indexes {array}, an array of {n} "
                  f"elements, before the loop; C defines that only below {n}, so the loop runs at most {most} "
                  f"times (its count at {n - 1})")


def _at_least_once(count: Polynomial) -> bool:
    """Whether a count read in run-time values is one a loop, once entered, can have: symbolic,
    or a constant of at least 1 (below that, the means it was read with did not hold together)."""
    value = count.constant_value()
    return value is None or value >= 1


_RUN_TIME_VALUE = re.compile(r"^depends on %(?P<value>\"[^\"]+\"|[-\w.$]+), a run-time value$")
# a pointer an enclosing loop carries (`op` advanced by each copy's length): as an address it
# can only cancel, in the distance from it to another (`_as_distances`)
_CARRIED = re.compile(r"^%(?P<value>\"[^\"]+\"|[-\w.$]+) is carried round a loop")


def _named_run_time_values(text: str, ctx, parameters: set[str],
                           reading: _Reading) -> tuple[Polynomial, dict[str, str], list[str]] | None:
    """SCEV text in values the function computes at run time (a length decoded from the data)
    read with each such value that is a C variable's (`physical_bounds.variable_of`) kept
    symbolic under the variable's name: (the polynomial, value → variable, the reading's notes),
    or None where one is not a variable's or the text names none."""
    substituted, named = dict(ctx.substituted), {}
    pointers = {symbol for symbol in ctx.parameters if f"ptrtoint ptr %{symbol} " in text}  # addresses, as numbers
    for _ in range(6):
        # Under the same named values, the loops of a nest resolve the same phi webs: share them.
        memo = reading.memo.table(ctx.parameters, ctx.enclosing_loops, ctx.global_bases,
                                  frozenset((value, str(substituted[value])) for value in named)) \
            if not ctx.max_takes_constant else ValueTable()
        again = replace(ctx, substituted=substituted, assumptions=[], memo=memo)
        try:
            value_of = to_polynomial(text, again)
        except NotPolynomial as why:
            m = _RUN_TIME_VALUE.match(str(why))
            if m is None and (carried := _CARRIED.match(str(why))) \
                    and f"ptrtoint ptr %{carried['value']} " in text:
                m = carried
            value, root = (m["value"].strip('"') if m else None), None
            if value and f"ptrtoint ptr %{value} " in text \
                    and (root := _merged_pointer_root(value, ctx, substituted, reading, parameters)):
                value = root  # name where the merge starts; the merge then reads as its incoming values
            variable = physical_bounds.variable_of(value, reading, parameters) if value else None
            if variable is None and value and (f"ptrtoint ptr %{value} " in text or value == root):
                variable = _pointer_name(value, reading, parameters)
                pointers.add(variable)
            if variable is None or value in substituted:
                return None
            substituted[value] = Polynomial.symbol(variable)
            named[value] = variable
            continue
        if pointers & value_of.symbols:
            value_of = _as_distances(value_of, pointers)
            if value_of is None:
                return None
            named = {value: name for value, name in named.items() if name not in pointers}
            named.update({f"{symbol}": symbol for symbol in value_of.symbols if symbol.startswith("(")
                          and symbol.endswith(")") and "-" in symbol})
        if not value_of.symbols & (set(named.values()) | reading.data_symbols) \
                and not (named and value_of.constant_value() is not None):
            return None  # a count in none of the values named here, nor in data named before
        # (a constant once named values cancel: a vectorised copy's remainder, `op + 8·n.vec` to `op + len`)
        # only the names the count keeps: a pointer that cancelled (`op` in `op + *ip - op`) is none
        named = {value: name for value, name in named.items() if name in value_of.symbols}
        return value_of, named, list(dict.fromkeys(again.assumptions))
    return None


def _merged_pointer_root(value: str, ctx, substituted: dict, reading: _Reading, parameters: set[str]) -> str | None:
    """For a pointer phi that merges, outside any enclosing loop's header, values computed from
    one pointer (a vectorised copy's scalar remainder starts at `op` or at `op + 8·n.vec`):
    that pointer, named first so that the merge reads as its incoming values and the pointers
    can cancel in a distance (`_as_distances`); None where the phi is none such."""
    phi = reading.definitions.get(value)
    if phi is None or phi.opcode != "phi" or phi.type_text != "ptr" \
            or reading.block_of.get(value) in ctx.enclosing_loops:
        return None
    root = None
    for incoming, _ in _PHI_INCOMING.findall(phi.text):
        for name in [incoming, *re.findall(r"%([-\w.$]+)", ctx.value_scevs.get(incoming, ""))]:
            instr = reading.definitions.get(name)
            if name == value or name in substituted or instr is None or instr.type_text != "ptr" \
                    or not re.search(rf"%{re.escape(name)}\b", ctx.value_scevs.get(incoming, "") or f"%{incoming}"):
                continue
            if ctx.value_scevs.get(name, f"%{name}") != f"%{name}":
                continue  # a value ScalarEvolution reads through: not where it starts
            if _pointer_name(name, reading, parameters) is not None:
                if root not in (None, name):
                    return None  # computed from two pointers: no one start
                root = name
    return root


def _pointer_name(value: str, reading: _Reading, parameters: set[str]) -> str | None:
    """The source's name of a pointer the function holds (`*ip` read through a `const BYTE **`,
    `s->next_in`, a local `d`), for a count in the distance between two pointers."""
    instr = reading.definitions.get(value)
    if instr is None or instr.type_text != "ptr" or instr.opcode not in ("load", "phi", "select"):
        return None
    named = physical_bounds.variable_name(value) if instr.opcode != "load" else \
        data_walks.Names(reading.definitions, parameters).value(value)
    return named if named is not None and "-" not in named else None


def _as_distances(count: Polynomial, pointers: set[str]) -> Polynomial | None:
    """`count` with each pair of pointers that appear only as a difference (`c·ip − c·anchor`,
    the bytes from one to the other) made one size, `(ip-anchor)`; None where an address
    appears otherwise (alone, or multiplied): a count in an address itself means nothing."""
    weights: dict[str, Fraction] = {}
    for monomial, coefficient in count.terms:
        used = [symbol for symbol, _ in monomial if symbol in pointers]
        if not used:
            continue
        if len(monomial) != 1 or monomial[0][1] != 1:
            return None
        weights[used[0]] = weights.get(used[0], Fraction(0)) + coefficient
    ends = sorted((symbol for symbol, w in weights.items() if w > 0), key=lambda s: (weights[s], s))
    starts = sorted((symbol for symbol, w in weights.items() if w < 0), key=lambda s: (-weights[s], s))
    if len(ends) != len(starts):
        return None
    for end, start in zip(ends, starts):
        if weights[end] != -weights[start]:
            return None
        distance = Polynomial.symbol(f"({end}-{start})") * weights[end]
        count = count.substitute(end, Polynomial()).substitute(start, Polynomial()) + distance
    return count


def _variables_note(named: dict[str, str], symbols: set[str]) -> str:
    """What the named run-time values are, in words, and how to set them."""
    distances = [name for value, name in named.items() if value == name]  # `_as_distances`' sizes
    variables = [f"`{name}` (%{value})" for value, name in named.items() if name.isidentifier()]
    members = [f"`{name}` (%{value})" for value, name in named.items()
               if not name.isidentifier() and value != name]
    said = []
    for name in distances:
        end, start = name[1:-1].split("-", 1)
        said.append(f"the bytes from the pointer `{start}` to `{end}`, which the function computes at run time")
    if variables:
        said.append(f"the value of the C variable{'s' if len(variables) > 1 else ''} {', '.join(variables)}, which "
                    f"the function computes at run time")
    if members:
        said.append(f"{', '.join(members)}, read from memory on each entry")
    if data := sorted(symbols - set(named.values())):  # named before, from memory read before the loop
        said.append(f"{', '.join(f'`{name}`' for name in data)}, read from memory before the loop")
    sets = " ".join(f"--param '{symbol}=N'" for symbol in sorted(symbols))
    return f"{' and '.join(said)}: kept symbolic (set it with {sets})"


def _walk_trip(record, parameters: set[str], analyses: FunctionAnalyses, early_exit: str, assumptions: list[str],
               terminators: dict, reading: _Reading) -> TripCount | None:
    """A loop that ends on data it walks (`ccls.readers.data_walks`): its count in the named size
    (`strlen(s) + 1`, kind `data`), or, where it may also leave on other data (a mismatch of two
    strings), the early-exit policy's count with that as its bound."""
    reading.budget.spend()
    walk = data_walks.data_walk(record, reading.definitions, reading.block_of, reading.instructions, parameters,
                                analyses.value_scevs, terminators)
    if walk is None:
        return None
    if (most := _at_most_at_zero_sizes(walk.iterations, record.header, assumptions)) is not None:
        assumptions.append(f"loop %{record.header}: {walk.what}")  # `19 - s->have`: at most 19
        return TripCount("bounded", most, record.backedge_taken or "")
    if walk.iterations.constant_value() is not None:  # a counter in memory from a constant to a constant
        assumptions.append(f"loop %{record.header}: {walk.what}: {spoken(walk.iterations)} iterations")
        return TripCount("constant", walk.iterations, record.backedge_taken or "")
    reading.data_symbols.add(walk.symbol)
    if walk.at_most:
        assumptions.append(f"loop %{record.header}: {walk.what}: {spoken(walk.iterations)} iterations")
        return TripCount("bounded", walk.iterations, record.backedge_taken or "")
    inside = set(record.blocks)
    others = [(block, target) for block in record.blocks if block in terminators
              for target in _successors(terminators[block])
              if target not in inside and (block, target) != (walk.exit_block, walk.exit_target)]
    ordinary = [(b, t) for b, t in others
                if not _never_returns(t, terminators) and not _on_allocation_failure(terminators[b], t, reading)]
    named = f"kept symbolic as `{walk.symbol}` (set it with --param '{walk.symbol}=N')"
    if not ordinary:
        assumptions.append(f"loop %{record.header}: {walk.what}: {spoken(walk.iterations)} iterations, {named}")
        return TripCount("data", walk.iterations, record.backedge_taken or "")
    trip, how = early_exit_trip(walk.iterations, early_exit, record.backedge_taken or "", spoken)
    assumptions.append(f"loop %{record.header}: {walk.what}, or leaves earlier on other data; at most "
                       f"{spoken(walk.iterations)} iterations, {named}; {how}")
    return trip


_COMPARE_CONSTANT = re.compile(r"= icmp (?P<predicate>eq|ne|slt|ult) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), "
                               r"(?P<bound>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+))\s*(?:,|$)")
_STEP_FROM = re.compile(r"^\((?P<step>\d+) \+ %(?P<counter>\"[^\"]+\"|[-\w.$]+)\)(?:<[a-z]+>)*$")


def _merged_counter(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading):
    """(exit branch, its compare, the counter's phi, its start, its step) of a loop whose counter
    is stepped on each path and merged before the exit test (`_merged_counter_trip`), or None.
    Found once per loop (the index substitution and the trip count both ask)."""
    if record.header not in reading.merged_counters:
        reading.merged_counters[record.header] = _find_merged_counter(record, analyses, terminators, reading)
    return reading.merged_counters[record.header]


def _find_merged_counter(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading):
    branch, test = _exit_test(record, terminators, reading)
    compare = _COMPARE_CONSTANT.search(test.text) if test is not None else None
    if compare is None:
        return None
    merged = compare["value"].strip('"')
    # Each copy is `counter + k`, the counter the header's phi of a constant start and the merge.
    steps = {analyses.value_scevs.get(value.lstrip("%").strip('"')) for value in analyses.phi_incoming.get(merged, [])}
    step = _STEP_FROM.match(steps.pop()) if len(steps) == 1 and None not in steps else None
    counter = step["counter"].strip('"') if step else ""
    starts = [v for v in analyses.phi_incoming.get(counter, []) if v.lstrip("%").strip('"') != merged]
    if step is None or int(step["step"]) <= 0 or reading.block_of.get(counter) != record.header \
            or len(starts) != 1 or not re.fullmatch(r"-?\d+", starts[0]):
        return None
    return branch, compare, counter, int(starts[0]), int(step["step"])


def _merged_counters(analyses: FunctionAnalyses, terminators: dict, reading: _Reading) -> dict[str, Polynomial]:
    """Each merged counter (`_merged_counter`) as its loop's index: start + step · @loop, so the
    addresses it computes move with that loop as ScalarEvolution's own counters do."""
    out: dict[str, Polynomial] = {}
    for header, record in analyses.loops.items():
        if record.backedge_taken and UNKNOWN_SCEV not in record.backedge_taken:
            continue
        found = _merged_counter(record, analyses, terminators, reading)
        if found is not None:
            _, _, counter, start, stride = found
            out[counter] = Polynomial.constant(start) + Polynomial.symbol("@" + header) * stride
    return out


def _merged_counter_trip(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading,
                         ctx) -> Polynomial | None:
    """A loop whose counter is stepped on each path through its body (`if (…) goto L; …; L: ;` with
    `i++` copied into both sides, or `i + 1` computed apart on each path by GVN) and tested after
    the copies merge: ScalarEvolution does not see the merged value as the counter, and gives
    up. Its count, where the loop's only exit tests that merge against a constant or a value
    ScalarEvolution knows (`nx - 1`); else None."""
    inside = set(record.blocks)
    found = _merged_counter(record, analyses, terminators, reading)
    if found is None:
        return None
    branch, compare, _, start, stride = found
    start += stride  # the merged value after the first iteration
    leaves_when_true = branch["true"].strip('"') not in inside
    if compare["bound"].startswith("%"):  # a size: counted on, its remainder by the stride taken as exact
        try:
            size = to_polynomial(analyses.value_scevs.get(compare["bound"][1:].strip('"'), "") or "?", ctx)
        except NotPolynomial:
            return None
        goes_on = (compare["predicate"] in ("eq", "ne") and leaves_when_true == (compare["predicate"] == "eq")
                   or compare["predicate"] in ("slt", "ult") and not leaves_when_true)
        return (size - start) * Fraction(1, stride) + 1 if goes_on and size.symbols else None
    bound = int(compare["bound"])
    # After iteration j the counter is start + stride·j; the loop goes on while it has not reached the bound.
    if compare["predicate"] in ("eq", "ne") and leaves_when_true == (compare["predicate"] == "eq") \
            and bound >= start and (bound - start) % stride == 0:
        return Polynomial.constant((bound - start) // stride + 1)
    if compare["predicate"] in ("slt", "ult") and not leaves_when_true:
        return Polynomial.constant(max(0, -(-(bound - start) // stride)) + 1)
    return None


_COMPARE_BOUND = re.compile(r"= icmp (?P<predicate>slt|ult|ne) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), "
                            r"(?P<bound>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+))\s*(?:,|$)")


def _stride_target(stride: physical_bounds.ExactStride, analyses: FunctionAnalyses, ctx) -> Polynomial | None:
    """The value an exact-stride counter leaves on, as a polynomial (None where it is not one)."""
    try:
        if stride.target[0] != "%":
            return Polynomial.constant(int(stride.target))
        return to_polynomial(analyses.value_scevs.get(stride.target[1:].strip('"'), "") or stride.target, ctx)
    except NotPolynomial:
        return None


def _run_time_step_trip(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading,
                        ctx) -> tuple[Polynomial, frozenset[str]] | None:
    """A counter that steps by a value the loop does not change but only the run knows
    (`for (i = lo; i < 32000; i += inc)`): ScalarEvolution cannot count it (the step's sign is
    unknown). Bounded by its count at a step of 1, the smallest that ends the loop, from a start
    taken as 0 where it is not known; with the values the step is made of. None for any other
    loop."""
    inside = set(record.blocks)
    branch, test = _exit_test(record, terminators, reading)
    compare = _COMPARE_BOUND.search(test.text) if test is not None else None
    if compare is None or branch["true"].strip('"') not in inside:  # goes on while below the bound
        return None
    counter = split_add_recurrence(analyses.value_scevs.get(compare["value"].strip('"'), ""))
    if counter is None or counter[2] != record.header or re.fullmatch(r"-?\d+", counter[1]):
        return None  # not this loop's counter, or a constant step ScalarEvolution would have counted
    try:
        bound = Polynomial.constant(int(compare["bound"])) if compare["bound"][0] != "%" else \
            to_polynomial(analyses.value_scevs.get(compare["bound"][1:].strip('"'), "") or compare["bound"], ctx)
    except NotPolynomial:
        return None
    try:
        start = to_polynomial(counter[0], ctx)
    except NotPolynomial:  # where it starts is read at run time too: from 0, at most
        start = Polynomial()
    for name in start.symbols:
        start = start.substitute(name, Polynomial())
    most = bound - start
    value = most.constant_value()
    if value is not None and value <= 0:
        return None
    return most, frozenset(name.strip('"') for name in re.findall(r'%("[^"]+"|[-\w.$]+)', counter[1]))


def _at_most_at_zero_sizes(count: Polynomial, header: str, assumptions: list[str]) -> Polynomial | None:
    """A count that only falls as sizes grow, `17 - n` for a loop from n up to 16 (a recursion
    depth limit turned into a loop): it runs at most its value at sizes 0, and not at all once
    they pass it, so it is no function of the sizes' growth. That most, with a note; None for
    any other count (one that grows with a size, or moves with an enclosing loop)."""
    start = dict(count.terms).get((), 0)
    sized = [(monomial, coefficient) for monomial, coefficient in count.terms if monomial]
    if not sized or start <= 0 or any(coefficient > 0 for _, coefficient in sized) \
            or any(symbol.startswith("@") for monomial, _ in sized for symbol, _ in monomial):
        return None
    symbols = sorted({symbol for monomial, _ in sized for symbol, _ in monomial})
    most = Polynomial.constant(start)
    assumptions.append(f"loop %{header}: its count {count} falls as {', '.join(symbols)} grow"
                       f"{'s' if len(symbols) == 1 else ''} (a count up to a constant; none once past it): "
                       f"taken as at most {most}, its value at {' = '.join(symbols)} = 0")
    return most


def _only_a_types_range(trips: int | Fraction) -> bool:
    """Whether a data-dependent loop's constant maximum count, 2^k − 1 (127, 255, 32767,
    65535, …), is only how far a counter compared with a run-time value of a k-bit type can go
    (`y < w` for a loaded unsigned char w: 255): the type's worst case, not the loop's."""
    return trips >= 127 and int(trips) == trips and (int(trips) + 1) & int(trips) == 0


def _bound_read_in_loop(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading) -> bool:
    """Whether the loop's counter is compared, at an exit, with a value the loop computes from
    memory it reads at each iteration (`i < (a + b) * c` of globals a store through a `char *`
    may change), and with nothing fixed at any other exit: ScalarEvolution's constant maximum
    is then what the types of the values read allow ((255 + 255) · 255), a worst case of the
    data, not a count."""
    inside = set(record.blocks)
    found = False
    for block in record.blocks:
        term = terminators.get(block)
        if term is None or not any(target not in inside for target in _successors(term)):
            continue
        branch = data_walks.BRANCH.match(term.text) if term.opcode == "br" else None
        test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
        if test is None or test.opcode != "icmp" or len(test.operands) < 2:
            return False  # a switch, a combined condition: what bounds it is not read here
        counted = [op.name for op in test.operands[:2]
                   if op.name and (start := split_add_recurrence(_unwrapped_casts(analyses.value_scevs.get(op.name, ""))))
                   and start[2] == record.header]
        if len(counted) != 1:
            continue  # a test of data (a search), which gives ScalarEvolution no maximum
        other = next(op for op in test.operands[:2] if op.name != counted[0])
        if not other.name or reading.block_of.get(other.name) not in inside:
            return False  # a constant or a value fixed before the loop: its maximum may be the loop's own
        if not _reads_memory_in_loop(other.name, inside, reading):
            return False
        found = True
    return found


_CAST_SCEV = re.compile(r"^\((?:zext|sext|trunc) i\d+ (?P<inner>.+) to i\d+\)$")


def _unwrapped_casts(scev: str) -> str:
    """A SCEV without its outer integer casts (`(zext i32 {0,+,1}<%l> to i64)` → the recurrence)."""
    while m := _CAST_SCEV.match(scev):
        scev = m["inner"]
    return scev


def _reads_memory_in_loop(value: str, inside: set[str], reading: _Reading) -> bool:
    """Whether `value` is computed, within the loop, from a load the loop makes (a few steps)."""
    seen, work = {value}, [value]
    while work and len(seen) < 64:
        instr = reading.definitions.get(work.pop())
        if instr is None or reading.block_of.get(instr.name) not in inside:
            continue
        if instr.opcode == "load":
            return True
        if instr.opcode in ("phi", "call", "invoke"):
            continue  # carried state or a call's result: not a value read afresh
        for op in instr.operands:
            if op.name and op.name not in seen:
                seen.add(op.name)
                work.append(op.name)
    return False


def _range_of_run_time_values(symbolic_max: str) -> bool:
    """Whether ScalarEvolution's constant maximum of a loop's count is the range of an
    expression in run-time values (its symbolic maximum names one): what their types allow (a
    loaded `unsigned short`: 65535), a worst case, not a count. A constant maximum without such
    an expression comes from the loop's own code."""
    return bool(symbolic_max) and UNKNOWN_SCEV not in symbolic_max and "%" in symbolic_max


def _checked_overlaps(analyses: FunctionAnalyses, parameters: list[str], body: list, definitions: dict,
                      terminators: dict, substituted: dict[str, Polynomial], reading: _Reading,
                      assumptions: list[str]) -> dict[str, str]:
    """Loops (headers) that a run-time check never lets run, with why: "overlap" (the arrays
    overlap for every index) or "stride" (a symbolic stride is taken as not 1), see
    `ccls.readers.alias_checks`; the scalar copies' start values are set in `substituted` to
    where they start then (the beginning, not the vector loop's end)."""
    if not any(alias_checks.CONFLICT.match(name) or alias_checks.IDENT_CHECK.match(name) for name in definitions):
        return {}
    loops = set(analyses.loops)

    def address(name: str) -> Polynomial | None:
        if name in parameters:
            return Polynomial.symbol(name)
        text = analyses.value_scevs.get(name)
        if text is None:
            return None
        try:
            return to_polynomial(text, _scev_context(analyses, set(parameters), loops, substituted, reading,
                                                     addresses=True))
        except (NotPolynomial, BudgetExhausted):
            return None

    def last_index(loop: str) -> Polynomial | None:
        record = analyses.loops.get(loop)
        if record is None or not record.backedge_taken or UNKNOWN_SCEV in record.backedge_taken:
            return None
        try:
            return to_polynomial(record.backedge_taken, _scev_context(analyses, set(parameters), loops, substituted,
                                                                      reading))
        except (NotPolynomial, BudgetExhausted):
            return None

    phis = {block: [i for i in instrs if i.opcode == "phi"] for block, instrs in body}
    found = alias_checks.always_overlapping(definitions, terminators, phis, address, last_index)
    for phi, value in found.scalar_starts.items():
        start = Polynomial.constant(int(value)) if re.fullmatch(r"-?\d+", value) else address(value.lstrip("%"))
        if start is not None:
            substituted[phi] = start
    entered = {target: block for block, term in terminators.items() if block in found.vector_entries
               for target in _successors(term)}
    return {header: "stride" if (header if header in found.vector_entries else entered[header]) in found.unit_stride
            else "overlap" for header in analyses.loops if header in found.vector_entries or header in entered}


# A branch on the loop vectorizer's run-time alias check (LoopVectorize names the condition):
# true when the arrays overlap, and then only the scalar copy of the loop runs.
_ALIAS_CHECK = re.compile(r"^(?:found\.conflict|conflict\.rdx)")


def _fallback_for_overlap(header: str, record, terminators: dict) -> bool:
    """Whether the loop is entered only on the overlap edge of a run-time alias check (through
    blocks with one way in and one way out): the scalar fallback of a vectorised loop that has
    no remainder to run."""
    return _entered_only_on(header, record, terminators, lambda term: 2 if _ALIAS_CHECK.match(
        term.operands[0].name or "") else None)


def _fallback_for_increment(header: str, record, terminators: dict, definitions: dict) -> bool:
    """Whether the loop is entered only on the other-than-1 edge of a unit-stride check on an
    increment (`alias_checks.unit_stride_increment`), or on an alias check's overlap edge next
    to one: the scalar copy beside a vector copy made for an increment of 1."""
    def edge_of(term) -> int | None:
        return 2 if _ALIAS_CHECK.match(term.operands[0].name or "") else \
            alias_checks.unit_stride_increment(term.operands[0].name or "", definitions)
    return any(alias_checks.unit_stride_increment(term.operands[0].name or "", definitions) is not None
               for term in terminators.values() if term.opcode == "br" and len(term.operands) == 3) \
        and _entered_only_on(header, record, terminators, edge_of)


def _entered_only_on(header: str, record, terminators: dict, edge_of: Callable) -> bool:
    """Whether the loop is entered only (through blocks with one way out) on the edges `edge_of`
    names: a conditional branch's operand index (1: false, 2: true) or None. A block with one
    way out that several branches reach (a preheader two checks share) is entered on each."""
    inside = set(record.blocks)
    predecessors: dict[str, list[str]] = {}
    for name, term in terminators.items():
        for target in _successors(term):
            predecessors.setdefault(target, []).append(name)
    edges = [(p, header) for p in predecessors.get(header, []) if p not in inside]
    for _ in range(4):  # through a preheader with one way out
        forwarded = []
        for source, target in edges:
            term = terminators.get(source)
            if term is not None and term.opcode == "br" and len(_successors(term)) == 1 \
                    and predecessors.get(source) and len(predecessors[source]) <= 4:
                forwarded.extend((before, source) for before in predecessors[source])
            else:
                forwarded.append((source, target))
        edges = forwarded
    return bool(edges) and all(
        term is not None and term.opcode == "br" and len(term.operands) == 3
        and (side := edge_of(term)) is not None and term.operands[side].name == target
        for source, target in edges for term in [terminators.get(source)])


def _leaves_early_only_to_fail(record, terminators: dict, reading: _Reading) -> str | None:
    """All but one of the loop's exit edges are error paths, not early exits: they lead only to
    code that never returns (a block ending in `unreachable` after abort(), exit(), a throw), as
    LLVM's branch-probability heuristics take them, or are taken only when an allocator returned
    null (`if (!(p = malloc(…))) return NULL;`: out of memory). What they are, or None."""
    inside = set(record.blocks)
    exits = [(name, target) for name in record.blocks if name in terminators
             for target in _successors(terminators[name]) if target not in inside]
    kinds, ordinary = set(), 0
    for name, target in exits:
        if _never_returns(target, terminators):
            kinds.add("reach only code that does not return (abort, exit, a throw)")
        elif _on_allocation_failure(terminators[name], target, reading):
            kinds.add("are taken only when an allocation returned null (out of memory)")
        else:
            ordinary += 1
    return " or ".join(sorted(kinds, reverse=True)) if len(exits) > 1 and ordinary == 1 else None


def _leaves_early_on_data(record, terminators: dict, reading: _Reading) -> bool:
    """Whether the loop has two or more exit edges that are not error paths (code that never
    returns, an allocation's failure): one ends the count, the others leave earlier on data."""
    inside = set(record.blocks)
    exits = [(name, target) for name in record.blocks if name in terminators
             for target in _successors(terminators[name]) if target not in inside]
    return sum(1 for name, target in exits if not _never_returns(target, terminators)
               and not _on_allocation_failure(terminators[name], target, reading)) >= 2


_NULL_TEST = re.compile(r"= icmp (?P<predicate>eq|ne) ptr %(?P<pointer>\"[^\"]+\"|[-\w.$]+), null\b")


def _on_allocation_failure(terminator: IRInstruction, target: str, reading: _Reading) -> bool:
    """Whether the edge to `target` is taken only when a pointer an allocator returned is null."""
    branch = data_walks.BRANCH.match(terminator.text) if terminator.opcode == "br" else None
    test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
    null = _NULL_TEST.search(test.text) if test is not None and test.opcode == "icmp" else None
    if null is None:
        return False
    source = reading.definitions.get(null["pointer"].strip('"'))
    if source is None or source.opcode not in ("call", "invoke") or _callee_name(source.text) not in reading.allocators:
        return False
    taken_on_null = branch["true"] if null["predicate"] == "eq" else branch["false"]
    return target == taken_on_null.strip('"')


def _never_returns(block: str, terminators: dict, steps: int = 4) -> bool:
    """`block` ends in `unreachable`, or falls through unconditionally (a few blocks) to one that
    does, or to a hang: unconditional branches that come round again with no way out (an
    assertion's `while (1);`, as embedded code spells abort())."""
    seen = set()
    for _ in range(steps):
        term = terminators.get(block)
        if term is None:
            return False
        if term.opcode == "unreachable" or block in seen:
            return True
        seen.add(block)
        targets = _successors(term)
        if term.opcode != "br" or len(targets) != 1:
            return False
        block = targets[0]
    return False
