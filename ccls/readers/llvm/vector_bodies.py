"""Vectorised loops whose scalar copy was read at the whole range: the vector body's count
from it, where ScalarEvolution's is unreadable, and the scalar copy's the left-over.

LoopVectorize emits `vector.body` (the loop, VF × IC source iterations a pass) → `middle.block`
→ the scalar loop (the remainder, or the whole range when a run-time check fails). Where the
vector body's count is in values ccls cannot name (a copy whose length comes from pointers and
decoded data) but the scalar copy's is named — read at the whole range, since where the vector
loop ended is unreadable too — the vector body runs the whole passes of that range and the
scalar copy what is left over (fewer than VF × IC iterations).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ccls.model import TripCount
from ccls.polynomial import Polynomial
from ccls.readers import data_walks
from ccls.readers.llvm.reading import _exit_test, _Reading, _successors
from ccls.readers.scev import FunctionAnalyses, split_add_recurrence, spoken

_WALK_LIMIT = 8  # blocks from `middle.block` to the scalar loop (preheaders, the unroller's checks)


@dataclass(frozen=True)
class ScalarCopy:
    """The scalar loop a vector body hands its left-over iterations to."""

    main: str  # its header: the loop that runs `unroll` source iterations a pass
    unroll: int  # the runtime unroller's factor (1: not unrolled)
    leftover: str | None  # the unroller's prologue or epilogue loop (count mod `unroll`), if any


def count_from_scalar_copies(trips: dict[str, TripCount | None], analyses: FunctionAnalyses, terminators: dict,
                             reading: _Reading, never_run: set[str], assumptions: list[str]) -> None:
    """Give each vector body of unknown count the whole passes of the range its scalar copy
    was read at (where the vector loop ended being unreadable too), and that scalar copy the
    left-over iterations instead of the whole range (in place). `never_run`: vector bodies a
    run-time check always skips, whose scalar copy does run the whole range."""
    for header, record in analyses.loops.items():
        trip = trips.get(header)
        if header in never_run or trip is None or trip.kind != "unknown" and not trip.is_named_guess:
            continue
        found = _pass_size(record, analyses, terminators, reading)
        copy = _scalar_copy(found[1], record, analyses, terminators, reading) if found else None
        if copy is None or copy.main == header:
            continue
        per_pass, whole = found[0], trips.get(copy.main)
        leftover = trips.get(copy.leftover) if copy.leftover else None
        if whole is None or whole.kind not in ("symbolic", "data") or per_pass % copy.unroll \
                or copy.leftover and (leftover is None or leftover.kind != "constant"):
            continue
        _count_vector_body(header, copy, per_pass, whole, trips, assumptions)
        _count_left_over(header, copy, per_pass, whole, trips, assumptions)


def _count_vector_body(header: str, copy: ScalarCopy, per_pass: int, whole: TripCount,
                       trips: dict[str, TripCount | None], assumptions: list[str]) -> None:
    """The vector body's count: the whole passes of the range its scalar copy was read at."""
    size = whole.iterations * copy.unroll  # source iterations of the whole range
    # E[floor(n / c)] over a uniform remainder is (n - (c - 1)/2) / c, as for `/u` in a count.
    passes = (size - Fraction(per_pass - 1, 2)) * Fraction(1, per_pass)
    trips[header] = TripCount(whole.kind, passes, trips[header].source_text)
    assumptions[:] = [note for note in assumptions if not note.startswith(f"loop %{header}: trip count unknown")]
    unrolled = f" (unrolled by {copy.unroll})" if copy.unroll > 1 else ""
    assumptions.append(f"loop %{header}: a vector body whose count is in run-time values ccls cannot name; "
                       f"the same loop's scalar copy{unrolled} reads the whole range as {spoken(size)} iterations, "
                       f"so the vector body, {per_pass} of them a pass, runs {spoken(passes)} passes (its run-time "
                       f"checks taken to pass)")


def _count_left_over(header: str, copy: ScalarCopy, per_pass: int, whole: TripCount,
                     trips: dict[str, TripCount | None], assumptions: list[str]) -> None:
    """The scalar copy's count: what the vector body leaves, not the whole range."""
    # The left-over r, uniform in [0, per_pass), runs floor(r / unroll) passes of the unrolled
    # loop (its prologue or epilogue runs r mod unroll, already read as such).
    left = Polynomial.constant(Fraction(per_pass - copy.unroll, 2 * copy.unroll))
    trips[copy.main] = TripCount("constant", left, whole.source_text)
    # its own count, read at the whole range, is superseded
    assumptions[:] = [note for note in assumptions if not note.startswith(f"loop %{copy.main}: its count, ")]
    assumptions.append(f"loop %{copy.main}: the scalar remainder after the vector body: fewer than {per_pass} "
                       f"iterations, taken as their mean: {spoken(left)} passes, not the whole range "
                       f"{spoken(whole.iterations)} (the vector loop's end is unreadable)")


def _pass_size(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading) -> tuple[int, str] | None:
    """(source iterations a pass, the `middle.block` it leaves to) of a vector body: its index
    steps by VF × IC and leaves on meeting the vector count (`icmp eq %index.next, %n.vec`)."""
    branch, test = _exit_test(record, terminators, reading)
    if branch is None or test is None or not test.operands:
        return None
    middle = next((target for target in (branch["true"], branch["false"])
                   if target.strip('"') not in record.blocks), None)
    if middle is None or not middle.startswith("middle.block"):
        return None
    induction = split_add_recurrence(analyses.value_scevs.get(test.operands[0].name, ""))
    if induction is None or induction[2] != record.header or induction[0] != induction[1] \
            or not induction[1].isdigit() or int(induction[1]) < 2:
        return None
    return int(induction[1]), middle


def _scalar_copy(middle: str, record, analyses: FunctionAnalyses, terminators: dict,
                 reading: _Reading) -> ScalarCopy | None:
    """The scalar loop `middle` sends the left-over iterations to (`br i1 %cmp.n, label %exit,
    label %scalar.ph`): the first loop reached from the side taken when some are left, with
    the same parent."""
    branch = data_walks.BRANCH.match(terminators[middle].text) if middle in terminators else None
    test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
    predicate = test.text.split()[3] if test is not None and test.opcode == "icmp" else ""
    if predicate not in ("eq", "ne"):  # `icmp eq %n, %n.vec`: all done in the vector loop, or not
        return None
    done, scalar = (branch["true"], branch["false"]) if predicate == "eq" else (branch["false"], branch["true"])
    first = _first_loop(scalar, {done, *record.blocks}, analyses, terminators)
    if first is None or first.startswith("vec") or analyses.loops[first].parent != record.parent:
        return None
    if first.endswith(".prol"):  # the unroller's prologue runs first, then the unrolled loop
        main, leftover = first[:-len(".prol")], first
    else:
        main, leftover = first, f"{first}.epil" if f"{first}.epil" in analyses.loops else None
    if main not in analyses.loops:
        return None
    unroll = _unroll_factor(analyses.loops[leftover], terminators, reading) if leftover else 1
    return ScalarCopy(main, unroll, leftover) if unroll else None


def _first_loop(start: str, avoid: set[str], analyses: FunctionAnalyses, terminators: dict) -> str | None:
    """The first loop header reached from `start`, not through `avoid`, within a few blocks."""
    queue, seen = [start], set()
    while queue and len(seen) < _WALK_LIMIT:
        block = queue.pop(0)
        if block in seen or block in avoid:
            continue
        if block in analyses.loops:
            return block
        seen.add(block)
        queue.extend(_successors(terminators[block]) if block in terminators else [])
    return None


def _unroll_factor(leftover, terminators: dict, reading: _Reading) -> int | None:
    """The factor of a runtime-unrolled loop, from its prologue's (or epilogue's) exit test on
    the count mod the factor (`icmp eq %prol.iter.next, %xtraiter`, `%xtraiter = and %n, 7`)."""
    _, test = _exit_test(leftover, terminators, reading)
    mask = reading.definitions.get(test.operands[1].name) if test is not None and len(test.operands) > 1 else None
    if mask is None or mask.opcode != "and" or len(mask.operands) < 2:
        return None
    spelled = mask.operands[1].text.split()
    low_bits = int(spelled[-1]) if len(spelled) == 2 and spelled[-1].isdigit() else 0
    return low_bits + 1 if low_bits > 0 and low_bits & (low_bits + 1) == 0 else None
