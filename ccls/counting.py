"""FunctionIR → CountedFunction: estimated executed counts per instruction class.

A block inside loops L1 ⊃ … ⊃ Lk runs Σ_{i1} … Σ_{ik-1} T_k(i1…) times, where T is each loop's
trip count (which may depend on outer loops' indices: triangular nests). Loads and stores are
then split across memory tiers from their access pattern and the loop nest's working set.
Pure: the cache geometry comes in as an argument.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace
from fractions import Fraction
from typing import Callable, Collection, NamedTuple

from ccls.model import (AtPoint, BasicBlock, CountedFunction, FindingSite, FunctionIR, Instruction, Loop,
                        LoopSummary, MemoryAccess, MemoryOverlap)
from ccls.polynomial import Polynomial, sum_of
from ccls.table_types import CacheModel, DividerModel
from ccls.taxonomy import DIVISION_CLASSES, STREAM_TIER, STRIDED_TIER, overlaps_compute, split, with_vector
from ccls.unknown_nests import guessed_around

MISPREDICT = "branch.mispredict"
# A predictor learns a branch's usual direction: on data that takes it with probability p, it is
# wrong min(p, 1 − p) of the time. p is unknown here (blocks are counted at an even split), and
# min(p, 1 − p) averages 1/4 over all p; 1/2 (random data, p = 1/2) is the worst case and 0
# (data that always goes one way) the best: the ends of the CU band (engine._with_uncertainty).
MISPREDICT_RATE = Fraction(1, 4)
MISPREDICT_WORST = Fraction(1, 2)
# PTX and CPython classes whose instructions are divisions too.
_DIVISION_BASES = set(DIVISION_CLASSES) | {"py"}


# What counting reads of a core: its caches, window and divider. Without a cost table,
# CacheModel()'s defaults (a generic server core).
CacheGeometry = CacheModel


def block_executions(block: BasicBlock, loops: dict[str, Loop]) -> Polynomial:
    """Executions of one block per call of its function: its share of its loop's iterations,
    times each enclosing loop's iterations and entries."""
    count = Polynomial.constant(block.frequency)
    loop_id = block.loop
    while loop_id is not None:
        loop = loops[loop_id]
        count = count.sum_over("@" + loop.id, loop.trip_count.iterations) * loop.entry_frequency
        loop_id = loop.parent
    return count


def count_function(fn: FunctionIR, cache: CacheGeometry | None,
                   parameter_value: Callable[[str], float]) -> CountedFunction:
    cache = cache or CacheModel()
    executions = {b.name: block_executions(b, fn.loops) for b in fn.blocks}
    values = {s: parameter_value(s) for p in executions.values() for s in p.symbols}
    runs = {name: poly.evaluate(values) for name, poly in executions.items()}  # at the evaluation point
    idle = _idle_loops(fn, runs)
    notes = ["numbers evaluated at " + ", ".join(f"{k}={v:g}" for k, v in sorted(values.items()))] if values else []
    if not idle:
        return _count(fn, cache, parameter_value, executions, runs, values, notes)
    # Loops whose count formula is below zero here do not run here: their blocks count 0 in the
    # numbers at this point, while the polynomials stay the cost expression for large inputs.
    idle_blocks = {b.name for b in fn.blocks if _in_idle_loop(b.loop, idle, fn.loops) or runs[b.name] < 0}
    runs = {name: 0.0 if name in idle_blocks else run for name, run in runs.items()}
    notes += [f"loop at line {fn.loops[key].line or '?'}: its count {fn.loops[key].trip_count.iterations.format()} "
              f"is below zero at these values, so it does not run here: counted as 0 iterations (the formula "
              f"holds for large inputs)" for key in sorted(idle) if fn.loops[key].parent not in idle]
    counted = _count(fn, cache, parameter_value, executions, runs, values, notes)
    floored = _count(fn, cache, parameter_value,
                     {name: Polynomial() if name in idle_blocks else poly for name, poly in executions.items()},
                     runs, values, notes)

    def at(poly: Polynomial | None) -> float | None:
        return max(0.0, poly.evaluate({s: parameter_value(s) for s in poly.symbols})) if poly is not None else None

    return replace(counted, at_point=AtPoint(
        dict(values), {cls: at(poly) for cls, poly in floored.counts.items()}, at(floored.machine_instructions),
        at(floored.machine_cycles), {callee: at(poly) for callee, poly in floored.calls.items()}))


def _idle_loops(fn: FunctionIR, runs: dict[str, float]) -> set[str]:
    """Loops whose header's executions come out below zero at the evaluation point."""
    return {key for key in fn.loops if runs.get(key, 0.0) < 0}


def _in_idle_loop(loop_id: str | None, idle: set[str], loops: dict[str, Loop]) -> bool:
    while loop_id is not None:
        if loop_id in idle:
            return True
        loop_id = loops[loop_id].parent if loops[loop_id].parent in loops else None
    return False


def _count(fn: FunctionIR, cache: CacheGeometry, parameter_value: Callable[[str], float],
           executions: dict[str, Polynomial], runs: dict[str, float], values: dict[str, float],
           notes_first: list[str]) -> CountedFunction:
    assumptions = list(fn.assumptions) + notes_first
    static: dict[str, int] = defaultdict(int)
    # What each count adds up, summed once at the end (`sum_of`)
    counts: dict[str, list[Polynomial]] = defaultdict(list)
    line_counts: dict[int, dict[str, list[Polynomial]]] = defaultdict(lambda: defaultdict(list))
    calls: dict[str, list[Polynomial]] = defaultdict(list)
    machine = Polynomial() if any(b.machine_instructions is not None for b in fn.blocks) else None
    trips = _mean_trips(fn, runs)
    notes: set[str] = set()
    cycles, loop_cycles = _machine_cycles(fn, executions, runs, _entry_overlap(fn, runs, cache.reorder_buffer),
                                          cache.reorder_buffer, cache.divider, notes)
    for loop, extra in _chain_floors(fn, executions, runs, values, loop_cycles, cache, notes).items():
        cycles, loop_cycles[loop] = cycles + extra, loop_cycles[loop] + extra
    overlapped: dict[str, dict[str, list[Polynomial]]] = defaultdict(lambda: defaultdict(list))

    working_sets = _working_sets(fn, runs, values, cache, trips)
    footprints = _loop_footprints(fn, cache, trips)
    reuse = _reuse(fn, runs, values, cache, trips)
    stored = _store_strides(fn)

    def tiers(instr: Instruction, loop_id: str | None, notes: set[str]) -> list[tuple[str, Fraction]]:
        # A small, hot array (a histogram's buckets) stays in L1 whatever streams past it.
        reach = _span(instr.access, trips, values, cache.line_bytes) if instr.access else float("inf")
        working_set = working_sets.get(_outermost(loop_id, fn.loops), 0) if reach > cache.l1_bytes else 0
        return _tiered(instr, loop_id, working_set, cache, notes, footprints.get(loop_id, 0.0),
                       reuse.get(id(instr)), stored.get(loop_id, frozenset()))

    # Loops of guessed count around each block (`ccls.unknown_nests`), for the inclusive cost.
    around = {block.name: guessed_around(block.loop, fn.loops, parameter_value) for block in fn.blocks}
    guessed_calls: dict[str, tuple[int, float, tuple[int, ...]]] = {}
    guessed_counts: dict[str, Polynomial] = defaultdict(Polynomial)
    # Their share of its work: of its blocks' core cycles (llvm-mca) where each has a figure, else of its instructions.
    by_cycles = any(b.machine_instructions for b in fn.blocks) and all(
        b.machine_cycles is not None for b in fn.blocks if b.machine_instructions)
    run = {block.name: max(0.0, runs.get(block.name, 0.0)) * ((block.machine_cycles or 0.0) if by_cycles
                                                                else len(block.instructions)) for block in fn.blocks}
    in_guessed = sum(n for name, n in run.items() if around[name][0] >= 1 and around[name][2])
    nest = (max((k for k, _, open_ in around.values() if open_), default=0),
            max((p for k, p, open_ in around.values() if k and open_), default=1.0))
    open_calls: dict[str, tuple[Polynomial, Polynomial]] = {}
    for block in fn.blocks:
        times = executions[block.name]
        # Most instructions of a block take the same share (1): the product is made once per
        # block and share (a Polynomial is immutable, so the sums may hold it many times).
        scaled: dict[Fraction, Polynomial] = {}
        if machine is not None and block.machine_instructions:
            machine = machine + times * block.machine_instructions
        for instr in block.instructions:
            static[instr.cls] += 1
            for cls, share in tiers(instr, block.loop, notes):
                executed = scaled.get(share)
                if executed is None:
                    executed = scaled[share] = times * share
                counts[cls].append(executed)
                if block.loop is not None and overlaps_compute(cls):
                    overlapped[block.loop][cls].append(executed)
                if instr.line is not None:
                    line_counts[instr.line][cls].append(executed)
            if instr.data_dependent and instr.program_data:
                notes.add(f"branch at {_where(instr, block)} follows data the program stored in its own arrays "
                          f"(zero-filled globals): assumed predicted (regular patterns), no mispredictions")
            elif instr.data_dependent:
                counts[MISPREDICT].append(times * MISPREDICT_RATE)
                notes.add(f"branch at {_where(instr, block)} follows loaded data: assumed mispredicted "
                          f"{float(MISPREDICT_RATE):.0%} of the time (0% if the data always goes one way, "
                          f"50% if it goes either way at random)")
            if instr.bulk_bytes is not None:
                moved, copy_cycles = _bulk_classes(instr, cache, parameter_value, notes)
                for cls, per_call in moved:
                    counts[cls].append(times * per_call)
                    if instr.line is not None:
                        line_counts[instr.line][cls].append(times * per_call)
                    # The copy's new lines arrive while it moves the ones it has: in a loop, they
                    # overlap its cycles as any loop's misses overlap its compute.
                    if block.loop is not None and cycles is not None and overlaps_compute(cls):
                        overlapped[block.loop][cls].append(times * per_call)
                if cycles is not None:
                    cycles = cycles + times * copy_cycles
                    if block.loop is not None:
                        loop_cycles[block.loop] = loop_cycles.get(block.loop, Polynomial()) + times * copy_cycles
            elif split(instr.cls)[0] in ("call", "call_indirect") or instr.cls == "py.call":
                calls[instr.callee or ""].append(times)
                k, product, open_ = around[block.name]
                if instr.callee and open_:  # the callee's own guessed loops continue this function's
                    inside, outside = open_calls.get(instr.callee, (Polynomial(), Polynomial()))
                    open_calls[instr.callee] = (inside + times, outside) if k else (inside, outside + times)
                if instr.callee and k >= 1:  # inside loops of guessed count
                    depth, most, lines = guessed_calls.get(instr.callee, (0, 0.0, ()))
                    if (k, product) > (depth, most):
                        depth, most = k, product
                    lines = tuple(sorted(set(lines) | ({instr.line - (fn.line or 0)} if instr.line else set())))
                    guessed_calls[instr.callee] = (depth, most, lines)
                    guessed_counts[instr.callee] = guessed_counts[instr.callee] + times
    for loop in fn.loops.values():
        if (misses := _varying_exit_misses(loop, executions)) is not None:
            counts[MISPREDICT].append(misses)
            notes.add(f"loop at line {loop.line or '?'}: it leaves at an iteration the data decides (a search, a "
                      f"tree's depth): its exit assumed mispredicted once per entry")
    # Which side of each overlap is hidden depends on the cost table: the report says (engine).
    overlaps = [MemoryOverlap(loop, loop_cycles[loop], {cls: sum_of(parts) for cls, parts in classes.items()})
                for loop, classes in overlapped.items() if cycles is not None and loop in loop_cycles]
    totals = {cls: sum_of(parts) for cls, parts in counts.items()}
    assumptions.extend(sorted(notes))

    return CountedFunction(
        name=fn.name, display_name=fn.display_name, file=fn.file, line=fn.line, end_line=fn.end_line,
        language=fn.language, arch=fn.arch, parameters=list(fn.parameters),
        static_counts=dict(static), counts={k: v for k, v in totals.items() if not v.is_zero},
        machine_instructions=machine, loops=[LoopSummary(l.id, l.depth, l.line, l.trip_count) for l in fn.loops.values()],
        line_counts={line: {cls: sum_of(parts) for cls, parts in c.items()} for line, c in line_counts.items()},
        calls={callee: sum_of(parts) for callee, parts in calls.items()},
        sites=_division_sites(fn, executions) + _miss_sites(fn, executions, working_sets, cache, tiers),
        assumptions=assumptions, ir_text=fn.ir_text, machine_cycles=cycles, compile_flags=fn.compile_flags,
        overlaps=overlaps, stopped_on_time=fn.stopped_on_time,
        guessed_calls=guessed_calls, guessed_call_counts=dict(guessed_counts), open_call_counts=open_calls,
        guessed_nest=nest,
        guessed_share=in_guessed / sum(run.values()) if in_guessed else 0.0,
    )


def _mispredicted(instr: Instruction) -> bool:
    """A branch charged MISPREDICT_RATE: on loaded data other than the program's own arrays."""
    return instr.data_dependent and not instr.program_data


def _where(instr: Instruction, block: BasicBlock) -> str:
    return f"line {instr.line}" if instr.line else f"block %{block.name}"


def _varying_exit_misses(loop: Loop, executions: dict[str, Polynomial]) -> Polynomial | None:
    """Mispredicted exits of a loop that leaves at an iteration the data decides (kind
    `expected`: a search's hit, a tree descent's leaf): the predictor learns to stay in the loop,
    so the exit, at a different iteration each entry, is missed once per entry. Its entries are
    its header's executions over its count, where that count is a constant (a polynomial
    divides by no other)."""
    if not _exit_varies(loop) or loop.id not in executions:
        return None
    return executions[loop.id] * (1 / Fraction(loop.trip_count.iterations.constant_value()))


def _exit_varies(loop: Loop) -> bool:
    """Whether the loop leaves at an iteration the data decides, its count a constant mean
    (kind `expected`): its exit is mispredicted once per entry (`_varying_exit_misses`)."""
    trip = loop.trip_count
    mean = trip.iterations.constant_value() if trip.kind == "expected" else None
    # Under 2 (a comparison that leaves at the first difference), it leaves at the first
    # iteration almost every entry: the predictor learns that too.
    return mean is not None and mean >= 2


# A bulk copy or fill (memcpy, memmove, memset) moves 32 bytes per instruction and stores one such
# chunk per cycle: glibc's AVX2 routines on x86-64, whose cores store 32 bytes a cycle (modelled,
# not measured here).
BULK_CHUNK_BYTES = 32


def _bulk_classes(instr: Instruction, cache: CacheGeometry, parameter_value: Callable[[str], float],
                  notes: set[str]) -> tuple[list[tuple[str, Polynomial]], Polynomial]:
    """What one memcpy/memmove/memset call moves, per class, and the cycles it takes: its bytes
    in 32-byte loads and stores, the new lines from the tier its size reaches (a stream beyond
    L3), one chunk stored per cycle."""
    size = instr.bulk_bytes
    chunks = size * Fraction(1, BULK_CHUNK_BYTES)
    lines = size * Fraction(1, cache.line_bytes)
    at = size.evaluate({s: parameter_value(s) for s in size.symbols})
    tier = "L1" if at <= cache.l1_bytes else "L2" if at <= cache.l2_bytes else \
        "L3" if cache.l3_bytes and at <= cache.l3_bytes else STREAM_TIER
    notes.add(f"{instr.callee} of {_human_bytes(at)} per call: {BULK_CHUNK_BYTES}-byte moves, one stored per cycle "
              f"(modelled), new lines from {tier}")
    out = []
    for base in (("store",) if instr.callee == "memset" else ("load", "store")):
        out.append((with_vector(f"{base}.L1", 8 * BULK_CHUNK_BYTES), chunks if tier == "L1" else chunks - lines))
        if tier != "L1":
            out.append((f"{base}.{tier}", lines))
    return out, chunks


def _machine_cycles(fn: FunctionIR, executions: dict[str, Polynomial], runs: dict[str, float],
                    overlap: dict[str, tuple[float, float]],
                    window: int | None, divider: DividerModel | None, notes: set[str]
                    ) -> tuple[Polynomial | None, dict[str, Polynomial]]:
    """Σ executions × llvm-mca cycles per block, and the same sum per innermost loop; (None, {})
    unless every block with machine code has a figure (a partial sum would understate the
    function). A block in a loop whose entries overlap k-fold (`overlap`: loop -> (k, instructions per entry)) costs max(its throughput
    bound, its cycles / k). With a measured `divider`, each divide's excess over llvm-mca's
    charge is taken off (see _divider_corrected). Notes name only corrections applied to a total
    that is returned."""
    spent_in, applied = [], set()  # what each block spends, summed once at the end (`sum_of`)
    per_loop: dict[str, list[Polynomial]] = defaultdict(list)
    together = _overlap_in_body(fn, runs)
    for block in fn.blocks:
        if not block.machine_instructions:
            continue
        if block.machine_cycles is None:
            return None, {}
        per, throughput = block.machine_cycles, block.machine_throughput
        if block.loop in together:
            share = together[block.loop]
            per, throughput = per * share, throughput * share if throughput is not None else None
            applied.add(f"loop %{block.loop}: its blocks simulated as one body take {share:.0%} of their cycles "
                        f"simulated one by one (the core overlaps them): each costs that share")
        if divider is not None and any(block.machine_divides):
            per, throughput = _divider_corrected(per, throughput, block.machine_divides, divider)
            applied.add("integer divides costed at the table's measured divider throughput instead of "
                        "llvm-mca's scheduling model")
        loop = max(_enclosing(block.loop, fn.loops), key=lambda l: overlap.get(l, (1.0, 0.0))[0], default=None)
        if loop in overlap and throughput is not None:
            k, per_entry = overlap[loop]
            per = max(throughput, per / k)
            applied.add(f"loop %{loop}: each entry starts afresh and runs ~{per_entry:.0f} instructions, so "
                        f"~{k:.1f} entries overlap in the core's {window}-entry out-of-order "
                        f"window (its blocks cost max(throughput, cycles / {k:.1f}))")
        spent = executions[block.name] * Fraction(round(per, 4)).limit_denominator(10_000)
        spent_in.append(spent)
        if block.loop is not None:
            per_loop[block.loop].append(spent)
    if not any(b.machine_instructions for b in fn.blocks):
        return None, {}
    notes.update(applied)
    return sum_of(spent_in), {loop: sum_of(parts) for loop, parts in per_loop.items()}


def _overlap_in_body(fn: FunctionIR, runs: dict[str, float]) -> dict[str, float]:
    """Innermost loop → the share of its blocks' summed cycles that they take in the core, where
    that is less. Simulated as one piece (`FunctionIR.trace_cycles`), the body's blocks overlap
    (a test, the arm it picks and the latch in a cycle or two), where llvm-mca, repeating each
    block alone, charges each at least a cycle. An iteration whose branch is mispredicted
    restarts after it and overlaps nothing: the share rises with the mispredictions expected
    per iteration (MISPREDICT_RATE for each branch on loaded data)."""
    out = {}
    for loop, trace in fn.trace_cycles.items():
        body = [b for b in fn.blocks if b.loop == loop and b.machine_instructions]
        alone = sum(b.machine_cycles or 0.0 for b in body)
        if alone <= 0 or trace >= alone or runs.get(loop, 0.0) <= 0:
            continue
        flushed = min(1.0, sum(float(MISPREDICT_RATE) * runs.get(b.name, 0.0) / runs[loop]
                               for b in body for instr in b.instructions if _mispredicted(instr)))
        share = trace / alone
        out[loop] = share + (1 - share) * flushed
    return out


def _chain_floors(fn: FunctionIR, executions: dict[str, Polynomial], runs: dict[str, float],
                  values: dict[str, float], loop_cycles: dict[str, Polynomial], cache: CacheGeometry,
                  notes: set[str]) -> dict[str, Polynomial]:
    """Cycles to add to innermost loops whose iterations hand a value on through memory
    (`Loop.memory_chains`): an iteration cannot finish before the previous one's store reaches
    its load and the operations after it are done, however few cycles its instructions need
    when loads and stores are taken as independent (as llvm-mca simulates them). Chains at
    different addresses run side by side: the longest sets the pace."""
    if cache.store_forward_cycles is None:
        return {}
    latency = dict(cache.latencies)
    parents = {l.parent for l in fn.loops.values()}
    out: dict[str, Polynomial] = {}
    for loop in fn.loops.values():
        iterations = runs.get(loop.id, 0.0)
        if not loop.memory_chains or loop.id in parents or loop.id not in loop_cycles or iterations <= 0:
            continue
        # A link in a block that runs in some iterations only (one arm of an if) lengthens the
        # chain by its share of them.
        forward_int, forward_fp = cache.store_forward_cycles
        chain = max(sum(((forward_fp if m.floating_point else forward_int) + sum(latency.get(c, 1.0) for c in link))
                        * runs.get(block, 0.0) / iterations for block, link in m.links) for m in loop.memory_chains)
        simulated = loop_cycles[loop.id].evaluate(values) / iterations
        if chain <= simulated:
            continue
        out[loop.id] = executions[loop.id] * Fraction(round(chain - simulated, 4)).limit_denominator(10_000)
        line = next((m.line for m in loop.memory_chains if m.line), None)
        notes.add(f"loop %{loop.id}{f' (line {loop.line})' if loop.line else ''}: each iteration loads what the "
                  f"previous one stored{f' at line {line}' if line else ''}: a chain through memory of "
                  f"{chain:.1f} cycles per iteration (store-to-load forwarding, measured, and the operations "
                  f"between), longer than the {simulated:.1f} its instructions take otherwise")
    return out


def _divider_corrected(cycles: float, throughput: float | None, counts: tuple[int, int],
                       divider: DividerModel) -> tuple[float, float | None]:
    """llvm-mca's block figures with each divide charged its measured cycles instead of the
    model's: less the difference, never below the divides' own measured time."""
    excess = sum(n * (mca - real) for n, mca, real in zip(counts, divider.mca_cycles, divider.cycles))
    floor = sum(n * real for n, real in zip(counts, divider.cycles))
    return max(cycles - excess, floor), max(throughput - excess, floor) if throughput is not None else None


def _enclosing(loop_id: str | None, loops: dict[str, Loop]) -> list[str]:
    out = []
    while loop_id is not None:
        out.append(loop_id)
        loop_id = loops[loop_id].parent
    return out


def _entry_overlap(fn: FunctionIR, runs: dict[str, float], window: int | None) -> dict[str, tuple[float, float]]:
    """How many entries of each loop an out-of-order core holds at once (and the machine
    instructions one entry executes): the window
    (reorder-buffer entries) over the machine instructions one entry executes, for loops whose
    entries start afresh (`Loop.independent_entries`, e.g. Horner's rule per point). Their
    dependency chains then overlap instead of running one after another, as llvm-mca's
    repetition of a single block assumes."""
    if not window:
        return {}
    per_loop: dict[str, float] = defaultdict(float)
    for block in fn.blocks:
        if block.machine_instructions:
            for loop in _enclosing(block.loop, fn.loops):
                per_loop[loop] += block.machine_instructions * runs[block.name]
    overlap = {}
    for loop in fn.loops.values():
        if not loop.independent_entries or loop.parent not in runs or _exit_varies(loop):
            continue  # an exit missed once per entry: the core fetches the next entry only after it
        entries = runs[loop.parent]
        per_entry = per_loop.get(loop.id, 0.0) / entries if entries > 0 else 0.0
        if per_entry > 0 and window / per_entry > 1:
            overlap[loop.id] = (window / per_entry, per_entry)
    return overlap


def _outermost(loop_id: str | None, loops: dict[str, Loop]) -> str | None:
    while loop_id is not None and loops[loop_id].parent is not None:
        loop_id = loops[loop_id].parent
    return loop_id


def _touched_bytes(access: MemoryAccess, line_bytes: int) -> int:
    """Distinct bytes one execution of the access brings in, for the working-set estimate."""
    if access.pattern == "invariant":
        return 0
    if access.pattern == "unit":
        return access.element_bytes
    return line_bytes


def _working_sets(fn: FunctionIR, runs: dict[str, float], values: dict[str, float],
                  cache: CacheGeometry, trips: dict[str, float]) -> dict[str | None, float]:
    """Bytes touched by each outermost loop nest per entry. Each access counts the lesser of
    what its executions bring in and the span its address can cover (reuse inside the nest).
    Accesses to one array region (unrolled copies a[i], a[i+2]) share its span: together they
    touch the sum of what each brings in, at most the widest span."""
    sizes: dict[str | None, float] = defaultdict(float)
    regions: dict[tuple[str | None, str], tuple[float, float]] = {}  # (bytes brought in, span)
    for block in fn.blocks:
        if block.loop is None:
            continue
        outer = _outermost(block.loop, fn.loops)
        times = runs[block.name]
        for instr in block.instructions:
            if instr.access is None:
                continue
            brought = times * _touched_bytes(instr.access, cache.line_bytes)
            span = _span(instr.access, trips, values, cache.line_bytes)
            if not instr.access.region:
                sizes[outer] += min(brought, span)
                continue
            key = (outer, instr.access.region)
            total, widest = regions.get(key, (0.0, 0.0))
            regions[key] = (total + brought, max(widest, span))
    for (outer, _), (brought, span) in regions.items():
        sizes[outer] += min(brought, span)
    return dict(sizes)


def _mean_trips(fn: FunctionIR, runs: dict[str, float]) -> dict[str, float]:
    """Average iterations of each loop per entry: header executions / its parent's."""
    out = {}
    for loop in fn.loops.values():
        entries = runs.get(loop.parent, 1.0) if loop.parent is not None else 1.0
        out[loop.id] = runs.get(loop.id, 0.0) / entries if entries > 0 else 0.0
    return out


def _span(access: MemoryAccess, trips: dict[str, float], values: dict[str, float], line_bytes: int,
          loops: Collection[str] | None = None) -> float:
    """Bytes an access's address can range over: Σ |stride per loop| × that loop's iterations
    (over `loops` only, if given), and never more than the array it is in, where that is known."""
    bound = float(access.span_bytes) if access.span_bytes is not None else float("inf")
    if access.pattern == "invariant":
        return min(float(line_bytes), bound)  # one address: one line, however often it is read
    if not access.loop_strides:
        return bound
    span = float(line_bytes)
    for loop, stride in access.loop_strides:
        if loops is not None and loop not in loops:
            continue
        step = _number(stride, values)
        if step is None:
            return bound  # moves with an outer index we cannot evaluate here
        span += abs(step) * trips.get(loop, 0.0)
    return min(span, bound)


def _miss_fraction(access: MemoryAccess, line_bytes: int) -> Fraction:
    """Share of executions that bring in a new cache line: |stride| / line for a stream that
    moves by a known amount (an unrolled copy of a[i] moves by the unroll factor × the
    element; its sibling copies find those lines as group reuse), else element / line."""
    if access.pattern == "invariant":
        return Fraction(0)
    stride = access.stride_bytes.constant_value() if access.stride_bytes is not None else None
    if access.pattern in ("unit", "strided") and stride:
        return min(Fraction(1), Fraction(abs(int(stride)), line_bytes))
    if access.pattern in ("unit", "unknown"):
        return min(Fraction(1), Fraction(access.element_bytes, line_bytes))
    return Fraction(1)


def _tier_for(working_set: float, cache: CacheGeometry) -> str:
    if working_set <= cache.l2_bytes:
        return "L2"
    if cache.l3_bytes and working_set <= cache.l3_bytes:
        return "L3"
    return "DRAM"


def _loop_footprints(fn: FunctionIR, cache: CacheGeometry, trips: dict[str, float]) -> dict[str, float]:
    """Bytes one entry into each loop touches in its own blocks: average iterations per entry
    × bytes brought in per iteration."""
    per_iteration: dict[str, float] = defaultdict(float)
    for block in fn.blocks:
        for instr in block.instructions:
            if block.loop is not None and instr.access is not None:
                per_iteration[block.loop] += _touched_bytes(instr.access, cache.line_bytes)
    return {loop: trips[loop] * per_iteration[loop] for loop in fn.loops}


class _Reuse(NamedTuple):
    """Where an access finds lines an earlier access (or its own earlier iteration) brought in."""

    level: str  # L1 / L2 / L3: the nearest cache holding what is touched between the two uses
    cold: Fraction  # share of its new lines that are first touches (from the far tier)
    why: str
    distance: float  # bytes touched between the two uses


def _reuse(fn: FunctionIR, runs: dict[str, float], values: dict[str, float],
           cache: CacheGeometry, trips: dict[str, float]) -> dict[int, _Reuse]:
    """Accesses whose lines come back from a near cache (by id of the instruction):
    - temporal: the address does not move with an enclosing loop (B[k][j] in an i-k-j matrix
      multiply), so each iteration of that loop reads the same lines again; they stay in the
      cache that holds one iteration's data;
    - group: accesses of one stream at different offsets (a stencil's rows in[i-1], in[i+1]):
      the trailing ones read what the leading one brought in, as long as what is touched in
      between fits."""
    per_iteration = _iteration_footprints(fn, runs, values, cache, trips)
    members: dict[str, list[tuple[Instruction, float]]] = defaultdict(list)
    for block in fn.blocks:
        for instr in block.instructions:
            access = instr.access
            if block.loop is not None and access is not None and access.region and access.offset is not None \
                    and access.pattern in ("unit", "strided") and not (access.offset.symbols - set(values)):
                members[access.region].append((instr, access.offset.evaluate(values)))
    out: dict[int, _Reuse] = {}
    for group in members.values():
        for instr, offset in group:
            strides = [(loop, _number(stride, values)) for loop, stride in instr.access.loop_strides]
            if any(v is None for _, v in strides):
                continue
            found = []
            for loop, stride in strides[1:]:  # zero in the innermost loop is the "invariant" pattern
                if stride == 0 and trips.get(loop, 0) > 1:
                    footprint = per_iteration.get(loop, float("inf"))
                    found.append((_near(footprint, cache), Fraction(1, max(1, round(trips[loop]))),
                                  f"data reread by every iteration of loop %{loop}", footprint))
                    break
            lead = next((v for _, v in strides if v), 0.0)  # how the stream moves, innermost first
            step = abs(lead)
            # The nearest access ahead in the stream's direction touched these lines last. It only
            # ever touched lines a whole number of its steps ahead (a[i+2] of a stencil); copies of
            # a wide stride at other offsets (a[16i], a[16i+16]) touch lines of their own.
            ahead = [(other - offset) if lead >= 0 else (offset - other) for _, other in group]
            behind = min((b for b in ahead if b > 0 and (not step or min(b % step, step - b % step) < cache.line_bytes)),
                         default=0.0)
            if behind > 0:
                # The outermost loop that moves the stream by no more than the gap: the gap is
                # that many of its iterations, each touching its footprint.
                moving = [(loop, abs(v)) for loop, v in strides if v and abs(v) <= behind]
                between = behind / moving[-1][1] * per_iteration.get(moving[-1][0], float("inf")) if moving else 0.0
                found.append((_near(between, cache), Fraction(0),
                              "lines a leading access of the same stream brought in", between))
            found = [f for f in found if f[0] is not None]
            if found:
                out[id(instr)] = _Reuse(*min(found, key=lambda f: _TIER_ORDER.index(f[0])))
    return out


_TIER_ORDER = ("L1", "L2", "L3")


def _number(poly: Polynomial, values: dict[str, float]) -> float | None:
    return None if poly.symbols - set(values) else poly.evaluate(values)


def _near(footprint: float, cache: CacheGeometry) -> str | None:
    """The nearest cache that holds `footprint` bytes; None beyond the last."""
    if footprint <= cache.l1_bytes:
        return "L1"
    tier = _tier_for(footprint, cache)
    return None if tier == "DRAM" else tier


def _iteration_footprints(fn: FunctionIR, runs: dict[str, float], values: dict[str, float],
                          cache: CacheGeometry, trips: dict[str, float]) -> dict[str, float]:
    """Bytes one iteration of each loop touches, inner loops included (each stream once)."""
    reach: dict[tuple[str, str], float] = {}
    for block in fn.blocks:
        if block.loop is None:
            continue
        times = runs[block.name]
        enclosing = _enclosing(block.loop, fn.loops)
        for instr in block.instructions:
            access = instr.access
            if access is None:
                continue
            for depth, loop in enumerate(enclosing):
                header = runs.get(loop, 0.0)
                per_iteration = times / header * _touched_bytes(access, cache.line_bytes) if header else 0.0
                # A stream's extent is its span over the loops inside (unrolled copies share it),
                # but no more than a line per iteration of those loops (a column walk's rows
                # 3200 bytes apart touch a line each, not the 3200 in between); others, what
                # they touch.
                inside = enclosing[:depth]
                bytes_ = min(_span(access, trips, values, cache.line_bytes, inside),
                             cache.line_bytes * math.prod(trips.get(l, 0.0) for l in inside)) \
                    if access.loop_strides and access.pattern in ("unit", "strided") else per_iteration
                key = (loop, access.region or f"#{id(instr)}", _own_lines(access, values, cache.line_bytes))
                reach[key] = max(reach.get(key, 0.0), bytes_)
    out: dict[str, float] = defaultdict(float)
    for (loop, *_), value in reach.items():
        out[loop] += value
    return dict(out)


def _own_lines(access: MemoryAccess, values: dict[str, float], line_bytes: int) -> int:
    """Which lines of its stream a copy of a wide-strided walk touches: copies whose offsets
    differ by a line or more modulo the stride (a[2i][2i] and a[2i+1][2i+1] of an unrolled
    diagonal) never meet the same line, so their footprints add; copies a whole number of
    strides apart (a stencil's b[(i-1)n], b[(i+1)n]) revisit each other's lines: one phase."""
    stride = access.stride_bytes.constant_value() if access.stride_bytes is not None else None
    if access.pattern != "strided" or stride is None or abs(stride) < 2 * line_bytes or access.offset is None:
        return 0
    offset = _number(access.offset, values)
    return 0 if offset is None else int((offset % abs(float(stride))) // line_bytes)


def _store_strides(fn: FunctionIR) -> dict[str, frozenset[Fraction]]:
    """Innermost loop -> the constant strides (bytes per iteration) its strided stores move by."""
    out: dict[str, set[Fraction]] = defaultdict(set)
    for block in fn.blocks:
        for instr in block.instructions:
            access = instr.access
            if block.loop is None or access is None or split(instr.cls)[0] != "store" \
                    or access.pattern != "strided" or access.stride_bytes is None:
                continue
            stride = access.stride_bytes.constant_value()
            if stride is not None:
                out[block.loop].add(abs(stride))
    return {loop: frozenset(strides) for loop, strides in out.items()}


def _tiered(instr: Instruction, loop_id: str | None, working_set: float, cache: CacheGeometry,
            notes: set[str], loop_footprint: float = 0.0, reuse: _Reuse | None = None,
            stored_strides: Collection[Fraction] = ()) -> list[tuple[str, Fraction]]:
    """(class, share) pairs for one instruction: loads/stores split across memory tiers.
    `stored_strides`: the strides of the strided stores in the same loop."""
    base, qualifier, width = split(instr.cls)
    access = instr.access
    if base not in ("load", "store") or qualifier is not None or access is None:
        return [(instr.cls, Fraction(1))]
    if loop_id is None or working_set <= cache.l1_bytes:
        return [(with_vector(f"{base}.L1", width), Fraction(1))]
    miss = _miss_fraction(access, cache.line_bytes)
    tier = _tier_for(working_set, cache)
    if access.pattern == "pointer-chase":
        # Each address comes from the previous load: no overlap, the whole latency each time.
        # Nodes inside one known array stay in the cache that holds it; elsewhere their real
        # footprint is unseen (what the loop touches is a lower bound), so a chase beyond L2 is
        # taken to reach DRAM.
        if access.span_bytes is not None:
            near = _near(access.span_bytes, cache) or "DRAM"
            notes.add(f"pointer chase within an array of {_human_bytes(access.span_bytes)}: each load waits for "
                      f"the previous one, served from {near}")
            return [(with_vector(f"{base}.{near}" + (".chase" if near != "L1" else ""), width), Fraction(1))]
        tier = "DRAM" if working_set > cache.l2_bytes else tier
        notes.add("pointer chase: each load waits for the previous one; nodes assumed scattered beyond L2")
        return [(with_vector(f"{base}.{tier}.chase", width), Fraction(1))]
    if access.pattern == "indirect" and access.span_bytes is not None:
        return _gathered(base, width, float(access.span_bytes), tier, cache, notes)
    stride = access.stride_bytes.constant_value() if access.stride_bytes is not None else None
    prefetchable = access.pattern in ("unit", "unknown") or (
        access.pattern == "strided" and stride is not None and abs(stride) <= cache.line_bytes)
    if base == "load" and access.pattern == "strided" and not prefetchable and tier == "DRAM":
        # A regular stride of two lines or more: a miss per line, at addresses the prefetchers
        # can predict (tables that measured it price it; others fall back to load.DRAM).
        tier = STRIDED_TIER
    crowded = _crowded_share(access, stride, cache)
    # A crowded stride is a multiple of 1/8 of the page (with 64 sets of 64-byte lines), so a
    # store of the same walk lands at this load's address modulo the page a few iterations back
    # (8 or fewer), still in flight: x86 cores match loads against older stores on the page
    # offset first, and this load waits for that store (arrays of page-multiple rows are
    # assumed to start at the same page offset, as page-aligned allocations do).
    aliased = base == "load" and crowded is not None and abs(stride) in stored_strides

    def served(level: str) -> str:
        if crowded is None or level not in ("L2", "L3"):
            return f"{base}.{level}"
        notes.add(f"a walk with a stride of {_human_bytes(abs(int(stride)))} per iteration uses {crowded:.0%} of "
                  f"L1's sets: each line it brings in evicts one of its own")
        if aliased:
            notes.add(f"loads of a walk with a stride of {_human_bytes(abs(int(stride)))} in a loop that stores at the "
                      f"same stride: each sits at the page offset of a store a few iterations back, still in flight, "
                      f"and waits for it (store-to-load aliasing, measured)")
            return f"{base}.{level}.crowded.aliased"
        return f"{base}.{level}.crowded"

    column = _outer_reuse(access, loop_footprint, cache, notes)
    if column is not None:
        near, new_lines = column
        notes.add("lines of a strided walk are reused by the next iteration of the loop around it")
        out = [(with_vector(served(near), width), 1 - new_lines)] if new_lines < 1 else []
        return out + [(with_vector(served(tier), width), new_lines)]
    if prefetchable and tier == "DRAM":
        # The hardware prefetcher streams consecutive lines in at DRAM bandwidth, not at its
        # latency. (From L2/L3 the independent-miss cost applies.)
        tier = STREAM_TIER
    notes.add(f"memory tiers estimated from access patterns and a working set of "
              f"{_human_bytes(working_set)}")
    shares = {"L1": 1 - miss}
    if reuse is not None and tier == STREAM_TIER and cache.stream_reuse_bytes is not None \
            and reuse.distance > cache.stream_reuse_bytes:
        notes.add(f"memory: {reuse.why} would be {_human_bytes(reuse.distance)} behind; this core's streamed "
                  f"lines last {_human_bytes(cache.stream_reuse_bytes)} of other traffic (measured): streamed again")
        reuse = None
    if reuse is not None:
        notes.add(f"memory: {reuse.why}, found in {reuse.level}")
        shares[reuse.level] = shares.get(reuse.level, Fraction(0)) + miss * (1 - reuse.cold)
        miss = miss * reuse.cold
    if miss:
        shares[tier] = shares.get(tier, Fraction(0)) + miss
    return [(with_vector(served(level), width), share) for level, share in shares.items() if share]


def _gathered(base: str, width: int | None, span: float, tier: str, cache: CacheGeometry,
              notes: set[str]) -> list[tuple[str, Fraction]]:
    """A gather or scatter (`b[idx[i]]`) within one array of `span` bytes, its index read from
    data: the array's lines that L1 holds are hits (a share L1 / span for indices spread over
    it), and the rest come from the nearest cache that holds the whole array, never from
    farther than the loop's working set reaches: every access is a miss only where the array
    is too large for any cache."""
    in_l1 = min(Fraction(1), Fraction(cache.l1_bytes) / Fraction(span))
    levels = ("L2", "L3", "DRAM")
    held = _near(span, cache) or "DRAM"
    held = "L2" if held == "L1" else held
    level = levels[min(levels.index(held), levels.index(tier))] if tier in levels else held
    notes.add(f"accesses at indices read from data within an array of {_human_bytes(span)}: "
              f"{float(in_l1):.0%} find their line in L1, the rest come from {level}")
    return [(with_vector(f"{base}.{cls}", width), share)
            for cls, share in (("L1", in_l1), (level, 1 - in_l1)) if share]


# At most this share of L1's sets: a stride of 8 lines or a multiple (512 B, 1 KiB rows). Copies
# of an unrolled walk 1056 B apart move by 4224 B per iteration, which shares a factor of 2 with
# the sets and walks them all: not crowded (measured: 2.0 cycles per store, 6.0 at 1 KiB).
CROWDED_SHARE = Fraction(1, 8)


def _crowded_share(access: MemoryAccess, stride: Fraction | None, cache: CacheGeometry) -> float | None:
    """The share of L1's sets a walk can use when it takes a new line on every access at a
    stride that confines it to an eighth or less of them (rows a power-of-two apart); else
    None. Each line such a walk brings in evicts one of its own (written back first where it
    stores), so its misses wait for each other more than independent misses do (priced by the
    `.crowded` classes, measured)."""
    if access.pattern != "strided" or stride is None or abs(stride) < cache.line_bytes or not cache.l1_ways:
        return None
    usable = _set_capacity(cache.l1_bytes, cache.l1_ways, abs(int(stride)), cache)
    return usable / cache.l1_bytes if usable <= cache.l1_bytes * CROWDED_SHARE else None


def _outer_reuse(access: MemoryAccess, footprint: float, cache: CacheGeometry,
                 notes: set[str] | None = None) -> tuple[str, Fraction] | None:
    """A column walk (``a[i*n + j]`` with i inner): each inner iteration takes a new line, but
    the next outer iteration moves by less than a line and finds the same lines again if the
    inner loop's lines stay in a cache until then. Returns (where those lines stay, share of
    new lines). They stay only if they fit the cache as its sets let them (a stride of a
    multiple of the page puts every line in a few sets) and their pages fit the TLB (else each
    access waits for a page walk, and the lines are evicted by the walks' own traffic)."""
    if access.pattern != "strided" or len(access.loop_strides) < 2:
        return None
    outer = access.loop_strides[1][1].constant_value()  # per iteration of the loop around it
    inner = access.loop_strides[0][1].constant_value()
    if outer is None or outer == 0 or abs(outer) >= cache.line_bytes:
        return None
    stride = abs(int(inner)) if inner is not None else 0
    ways = {"L1": cache.l1_ways, "L2": cache.l2_ways}
    sizes = {"L1": cache.l1_bytes, "L2": cache.l2_bytes}
    level = next((name for name in ("L1", "L2")
                  if footprint <= _set_capacity(sizes[name], ways[name], stride, cache)), None)
    if level is None:
        if notes is not None and footprint <= cache.l2_bytes and stride:
            notes.add(f"a walk with a stride of {_human_bytes(stride)} per iteration uses few cache sets: its lines do not stay "
                      f"for the next iteration of the loop around it")
        return None
    tlb = cache.tlb_entries
    pages = footprint / cache.line_bytes * min(1.0, stride / cache.page_bytes)
    if tlb and pages > tlb:
        if notes is not None:
            notes.add(f"a walk over {pages:.0f} pages per sweep exceeds the TLB's {tlb} entries: its lines "
                      f"do not stay for the next iteration of the loop around it")
        return None
    return level, Fraction(abs(int(outer)), cache.line_bytes)


def _set_capacity(size_bytes: int, ways: int | None, stride: int, cache: CacheGeometry) -> float:
    """Bytes of a cache that lines `stride` bytes apart can occupy. A set is chosen by the
    address's line index; below the page size that index comes from the virtual address (as
    the stride sets it), above it from physical pages (spread): so lines a multiple of k lines
    apart use 1/gcd(k, lines per page) of the sets (a 32 KiB stride: 1/64)."""
    line = cache.line_bytes
    if not ways or not stride or stride % line:
        return size_bytes
    sets = size_bytes // (ways * line)
    if sets <= 0:
        return size_bytes
    per_page = max(1, cache.page_bytes // line)
    return size_bytes / math.gcd(stride // line, min(sets, per_page))


def _human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.0f} TiB"


def _is_division(instr: Instruction) -> bool:
    base, qualifier, _ = split(instr.cls)
    if base == "py":
        return qualifier == "binary_div"
    return base in DIVISION_CLASSES


# Access patterns a miss-heavy loop is reported for (ccls.advice has what to do about each).
MISS_PATTERNS = ("strided", "indirect", "pointer-chase")


def _division_sites(fn: FunctionIR, executions: dict[str, Polynomial]) -> list[FindingSite]:
    by_line: dict[tuple[int | None, str], dict[str, Polynomial]] = {}
    divisors: dict[tuple[int | None, str], str | None] = {}
    for block in fn.blocks:
        if block.loop is None:
            continue
        for instr in block.instructions:
            if not _is_division(instr):
                continue
            # One finding per source line: vectorised, unrolled and remainder copies of a loop
            # are the same loop to the person reading the code.
            key = (instr.line, "" if instr.line is not None else (_outermost(block.loop, fn.loops) or block.loop))
            classes = by_line.setdefault(key, {})
            classes[instr.cls] = classes.get(instr.cls, Polynomial()) + executions[block.name]
            divisors[key] = divisors.get(key) or instr.divisor
    sites = []
    for (line, key_loop), classes in by_line.items():
        divisor = divisors.get((line, key_loop))
        loop = key_loop or next((b.loop for b in fn.blocks for i in b.instructions if i.line == line and b.loop), "")
        kinds = sorted({"floating-point" if split(c)[0] == "fp_div" else "integer" for c in classes})
        where = f"line {line}" if line else "this function"
        sites.append(FindingSite(
            "division-in-loop", line, loop, classes,
            f"{' and '.join(kinds)} division inside a loop at {where}", divisor or "variant"))
    return sites


def _miss_sites(fn: FunctionIR, executions: dict[str, Polynomial], working_sets: dict[str | None, float],
                cache: CacheGeometry, tiers: Callable[[Instruction, str | None, set[str]], list[tuple[str, Fraction]]]
                ) -> list[FindingSite]:
    """Loops whose accesses miss, priced with the same tiers as the counts (`tiers`)."""
    sites = []
    for outer, working_set in working_sets.items():
        if outer is None or working_set <= cache.l2_bytes:
            continue
        offending: dict[str, dict[str, Polynomial]] = defaultdict(lambda: defaultdict(Polynomial))
        lines: dict[str, int | None] = {}
        strides: dict[str, Polynomial | None] = {}
        for block in fn.blocks:
            if _outermost(block.loop, fn.loops) != outer:
                continue
            for instr in block.instructions:
                access = instr.access
                if access is None or access.pattern not in MISS_PATTERNS:
                    continue
                for cls, share in tiers(instr, block.loop, set()):
                    if not cls.split("@")[0].endswith(".L1"):
                        offending[access.pattern][cls] += executions[block.name] * share
                lines.setdefault(access.pattern, instr.line)
                strides.setdefault(access.pattern, access.stride_bytes)
        for pattern, classes in offending.items():
            stride = strides.get(pattern)
            detail = f" (stride {stride.format()} bytes)" if pattern == "strided" and stride is not None else ""
            line = lines.get(pattern) or fn.loops[outer].line
            sites.append(FindingSite(
                "miss-heavy-loop", line, outer, dict(classes),
                f"{pattern.replace('-', ' ')} accesses{detail} over a working set of about "
                f"{_human_bytes(working_set)}, larger than the {_human_bytes(cache.l2_bytes)} L2 cache",
                pattern))
    return sites
