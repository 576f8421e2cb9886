"""The facade every view calls. Two stages:

- `count_source`: expensive — compile/parse one file, read, count (cacheable per function);
- `report`: cheap — cost the counts with a table and region, score a cohort under a profile,
  turn finding sites into findings. Changing profile, region or tables only re-runs this.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple, Sequence

from ccls.advice import recommendation
from ccls.cold_resume import resume_threshold_cu, with_cold_resumes
from ccls.costing import (ClassBreakdown, Hidden, cost_counts, cu_expression, hidden_by_overlap, metric_parts,
                          metrics_band)
from ccls.counting import MISPREDICT, MISPREDICT_RATE, MISPREDICT_WORST, count_function
from ccls.frontends import FrontendResult, SourceFile, frontend_for
from ccls.model import AnalysisError, AtPoint, CountedFunction, Finding, FunctionIR, LoopSummary, Metrics
from ccls.options import AnalysisOptions
from ccls.polynomial import LOG2_PREFIX, Polynomial
from ccls.readers.components import strongly_connected
from ccls.report_types import FunctionReport, ReportSettings
from ccls.scoring import NORMALIZATION_WORDS, NORMALIZATIONS, absolute_score, composite_scores, grade_for
from ccls.sizes import InferredSize, field_sizes, infer_sizes, sizes_of_globals, value_ceilings
from ccls.table_types import CostTable, Tables, reference_family
from ccls.targets import CPU_TARGETS
from ccls.unknown_nests import across_call


@dataclass
class CountedFile:
    path: str
    language: str
    functions: list[CountedFunction] = field(default_factory=list)
    errors: list[AnalysisError] = field(default_factory=list)


@dataclass
class ReadFile:
    """One file compiled or parsed, not yet counted."""

    path: str
    language: str
    result: FrontendResult


def read_source(source: SourceFile, options: AnalysisOptions) -> ReadFile:
    """Compile or parse one file (the expensive part)."""
    found = frontend_for(source.path)
    if found is None:
        return ReadFile(source.path, "", FrontendResult(errors=[AnalysisError(source.path, None, "not a supported file type")]))
    language, frontend = found
    return ReadFile(source.path, language, frontend(source, options))


SizesFor = Callable[[FunctionIR], dict[str, InferredSize]]  # a function's sizes from its call sites


def count_read(read: ReadFile, options: AnalysisOptions, tables: Tables | None = None,
               sizes_for: SizesFor = lambda fn: {}) -> CountedFile:
    """Count every function of a read file, each at the sizes its callers pass (`sizes_for`,
    from `ccls.sizes.infer_sizes`) where the user gave none."""
    counted = CountedFile(read.path, read.language, errors=list(read.result.errors))
    calls = read.result.calls.sites if read.result.calls is not None else ()
    stores = read.result.calls.field_stores if read.result.calls is not None else ()
    for fn in read.result.functions:
        cache = tables.cost[fn.arch].cache if tables is not None and fn.arch in tables.cost else None
        passed = sizes_for(fn)
        inferred = _sizes_used(fn, {**passed, **field_sizes(fn.field_symbols, passed),
                                    **sizes_of_globals(fn.global_symbols, passed)}, options)
        inferred.update(value_ceilings(fn.value_ceilings, inferred, options))
        values = {name: float(size.value) for name, size in inferred.items()}
        function = count_function(fn, cache, options.for_function(values).parameter_value)
        function.inferred_sizes = values
        function.size_notes = [size.describe(name) for name, size in inferred.items()]
        function.call_sites = tuple(site for site in calls if site.caller == fn.name)
        slots = read.result.calls.parameters.get(fn.name, ()) if read.result.calls is not None else ()
        function.size_slots = tuple(slots) if tuple(slots) != tuple(fn.parameters) else ()
        # a module's own facts (a global's initial value, its address in data) travel with each function
        function.field_stores = tuple(store for store in stores if store.writer in (fn.name, ""))
        counted.functions.append(function)
    return counted


def _sizes_used(fn: FunctionIR, inferred: dict[str, InferredSize], options: AnalysisOptions) -> dict[str, InferredSize]:
    """The inferred sizes the function's trip counts and bulk copies use, and the user did not set."""
    used = {symbol for loop in fn.loops.values() for symbol in loop.trip_count.iterations.symbols}
    used |= {symbol for block in fn.blocks for instr in block.instructions if instr.bulk_bytes is not None
             for symbol in instr.bulk_bytes.symbols}
    return {name: size for name, size in inferred.items()
            if not options.given(name) and (name in used or f"{LOG2_PREFIX}{name})" in used)}


def count_source(source: SourceFile, options: AnalysisOptions, tables: Tables | None = None,
                 sizes_for: SizesFor | None = None) -> CountedFile:
    """Compile or parse one file and count every function in it, at the sizes `sizes_for`
    gives (the language server's, from the whole workspace), else at those its own call sites
    pass."""
    read = read_source(source, options)
    if sizes_for is None:
        sizes = infer_sizes([read.result.calls]) if read.result.calls is not None else {}
        sizes_for = lambda fn: sizes.get((read.path, fn.name), {})  # noqa: E731
    return count_read(read, options, tables, sizes_for)


def count_sources(sources: Sequence[SourceFile], options: AnalysisOptions,
                  tables: Tables | None = None) -> list[CountedFile]:
    """Count several files as one program: a function's sizes may come from calls in any of them."""
    reads = [read_source(source, options) for source in sources]
    sizes = infer_sizes([r.result.calls for r in reads if r.result.calls is not None])
    return [count_read(read, options, tables, lambda fn, path=read.path: sizes.get((path, fn.name), {}))
            for read in reads]


def table_for(counted: CountedFunction, tables: Tables, options: AnalysisOptions) -> tuple[CostTable, list[str]]:
    """The cost table for a function: its own arch (GPU, CPython) or the chosen CPU."""
    arch = counted.arch
    if arch in CPU_TARGETS and options.arch in tables.cost:
        arch = options.arch
    if arch in tables.cost:
        return tables.cost[arch], []
    # A newer CPython's bytecode is costed with the nearest measured interpreter.
    fallback = "cpython-3.11" if arch.startswith("cpython-") else "x86_64"
    return tables.cost[fallback], [f"no cost table for {arch}; costed with {fallback}"]


def evaluate_count(poly: Polynomial, options: AnalysisOptions) -> float:
    """An executed count (or cycles) at the options' parameter values. The polynomials are exact
    for large inputs; at small ones a vector loop's `n/4 − 3/4` can come out below zero, which
    means the code does not run: 0."""
    return max(0.0, _at(poly, options))


def _at(poly: Polynomial, options: AnalysisOptions) -> float:
    return poly.evaluate({s: options.parameter_value(s) for s in poly.symbols})


@dataclass(frozen=True)
class CohortPeer:
    """A function scored together with the reported ones without being reported itself (the
    rest of a workspace): its metrics join the cohort's min–max normalisation, and calls to
    it by name add them to the caller's inclusive metrics."""

    name: str
    display_name: str
    metrics: Metrics


def check_settings(tables: Tables, settings: ReportSettings) -> None:
    if settings.profile not in tables.profiles:
        raise KeyError(f"unknown profile {settings.profile!r}; known: {', '.join(sorted(tables.profiles))}")
    if settings.region not in tables.regions:
        raise KeyError(f"unknown region {settings.region!r}; known: {', '.join(sorted(tables.regions))}")
    if settings.normalization not in NORMALIZATIONS:
        raise KeyError(f"unknown normalization {settings.normalization!r}; known: {', '.join(NORMALIZATIONS)}")


class _Costed(NamedTuple):
    fn: CountedFunction
    table: CostTable
    counts: dict[str, float]
    metrics: Metrics
    breakdown: list[ClassBreakdown]
    notes: list[str]
    hidden: list[Hidden]  # what each loop's compute/memory overlap hides


def _cost(fn: CountedFunction, tables: Tables, settings: ReportSettings, options: AnalysisOptions) -> _Costed:
    options = options.for_function(fn.inferred_sizes)
    table, notes = table_for(fn, tables, options)
    point = _at_point(fn, options)
    if point is not None:  # some loops do not run at these values (counting says which)
        counts, cycles = dict(point.counts), point.machine_cycles
    else:
        raw = {cls: _at(poly, options) for cls, poly in fn.counts.items()}
        counts = {cls: max(0.0, value) for cls, value in raw.items()}
        if any(value < 0 for value in raw.values()):
            notes = notes + ["at these parameter values some counts' formulas (exact for large inputs) fall below "
                             "zero: counted as 0"]
        cycles = evaluate_count(fn.machine_cycles, options) if fn.machine_cycles is not None else None
    hidden = hidden_by_overlap(fn.overlaps, table, lambda poly: evaluate_count(poly, options)) if cycles is not None else []
    metrics, breakdown = cost_counts(counts, table, tables.regions[settings.region], cycles, hidden)
    notes = notes + _overlap_notes(fn, hidden)
    unknown = [b.cls for b in breakdown if not b.known and b.count]
    if unknown:
        notes = notes + [f"no cost in table {table.arch} for: {', '.join(sorted(unknown))} (counted as 0)"]
    return _Costed(fn, table, counts, metrics, breakdown, notes, hidden)


def _at_point(fn: CountedFunction, options: AnalysisOptions) -> AtPoint | None:
    """The function's numbers at these options' values, where counting left out loops that do
    not run there; None where it did not, or counted at other values."""
    point = fn.at_point
    if point is None or any(options.parameter_value(s) != v for s, v in point.values.items()):
        return None
    return point


def _instructions(fn: CountedFunction, options: AnalysisOptions) -> float | None:
    point = _at_point(fn, options)
    if point is not None:
        return point.machine_instructions
    return evaluate_count(fn.machine_instructions, options) if fn.machine_instructions is not None else None


def _overlap_notes(fn: CountedFunction, hidden: list[Hidden]) -> list[str]:
    """Which side bounds each loop with overlapped misses, in words."""
    lines = {loop.id: loop.line for loop in fn.loops}
    notes = []
    for h in hidden:
        where = f"loop %{h.loop}" + (f" (line {lines[h.loop]})" if lines.get(h.loop) else "")
        how = "compute-bound; its memory accesses complete while it computes" if h.memory else \
            "memory-bound; its compute runs while its misses are in flight"
        notes.append(f"{where}: {how} ({h.amount:.3g} cycles overlapped: it costs the larger of the two, not their sum)")
    return notes


def function_metrics(fn: CountedFunction, tables: Tables, settings: ReportSettings,
                     options: AnalysisOptions) -> Metrics:
    """A function's metrics alone (what a `CohortPeer` carries)."""
    check_settings(tables, settings)
    return _cost(fn, tables, settings, options).metrics


def _scores_by_profile(metrics: list[Metrics], archs: list[str], peers: Sequence[CohortPeer], tables: Tables,
                       settings: ReportSettings) -> dict[str, list[float]]:
    """Each profile's score of each of `metrics` (peers only take part in cohort scoring). Absolute
    scores use the reference ranges of each function's arch (GPU figures are per thread)."""
    cohort = metrics + [p.metrics for p in peers]
    references = [tables.reference.for_arch(arch) for arch in archs]

    def scores_for(profile_name: str) -> list[float]:
        profile = tables.profiles[profile_name]
        if settings.scoring == "cohort" and len(cohort) > 1:
            return composite_scores(cohort, profile, settings.normalization)[:len(metrics)]
        return [absolute_score(m, profile, reference) for m, reference in zip(metrics, references)]
    return {name: scores_for(name) for name in tables.profiles}


def _graded_by(settings: ReportSettings, cohort_size: int, arch: str) -> str:
    """Which mode graded a function, in words (the hover says it)."""
    if settings.scoring == "cohort" and cohort_size > 1:
        return f"cohort of {cohort_size} functions, {NORMALIZATION_WORDS[settings.normalization]}"
    family = reference_family(arch)
    why = " (a cohort of one cannot be min–max scaled)" if settings.scoring == "cohort" else ""
    return f"absolute: fixed reference ranges ({family}){why}"


def rescore(reports: list[FunctionReport], tables: Tables, settings: ReportSettings,
            peers: Sequence[CohortPeer] = ()) -> list[FunctionReport]:
    """The same reports scored and graded as one cohort (with `peers`): what changes for
    functions whose counts did not when others in their cohort did."""
    check_settings(tables, settings)
    by_profile = _scores_by_profile([r.metrics for r in reports], [r.counted.arch for r in reports], peers,
                                    tables, settings)
    size = len(reports) + len(peers)
    return _within_uncertainty([replace(r, **_graded(by_profile, index, settings, tables),
                                        graded_by=_graded_by(settings, size, r.counted.arch))
                                for index, r in enumerate(reports)])


def _graded(by_profile: dict[str, list[float]], index: int, settings: ReportSettings, tables: Tables) -> dict:
    """The score fields of one report: its score, grade and rating under the chosen profile,
    and (score, grade) under every profile."""
    score = by_profile[settings.profile][index]
    grade, rating = grade_for(score, tables.grades)
    return {"score": score, "grade": grade, "rating": rating,
            "scores_by_profile": {name: (s[index], grade_for(s[index], tables.grades)[0])
                                  for name, s in by_profile.items()}}


def report(functions: list[CountedFunction], tables: Tables, settings: ReportSettings,
           options: AnalysisOptions, peers: Sequence[CohortPeer] = ()) -> list[FunctionReport]:
    """Cost, score and grade `functions` as one cohort (together with `peers`, if any)."""
    check_settings(tables, settings)
    costed = [_cost(fn, tables, settings, options) for fn in functions]
    if any(fn.language == "python" and fn.calls for fn in functions):  # cold returns need the callees' costs
        first = _inclusive_costs(functions, [c.metrics for c in costed], options, peers)
        functions = _with_cold_resumes(costed, first, peers)
        costed = [c if c.fn is fn else _cost(fn, tables, settings, options) for c, fn in zip(costed, functions)]
    inclusive = _inclusive_metrics(functions, [c.metrics for c in costed], options, peers)
    all_metrics = [c.metrics for c in costed]
    by_profile = _scores_by_profile(all_metrics, [fn.arch for fn in functions], peers, tables, settings)
    reports = []
    for index, (fn, table, counts, metrics, breakdown, notes, hidden) in enumerate(costed):
        expression = cu_expression(fn.counts, table, fn.machine_cycles, hidden)
        rates = {b.cls: b.rate for b in breakdown}
        at = options.for_function(fn.inferred_sizes)
        reports.append(FunctionReport(
            counted=fn, counts=counts,
            instructions=_instructions(fn, at),
            metrics=metrics, breakdown=breakdown, cost_expression=expression, big_o=expression.big_o(),
            **_graded(by_profile, index, settings, tables),
            findings=_findings(fn, rates, metrics, at),
            assumptions=fn.assumptions + fn.size_notes + notes + inclusive[index][2],
            hottest_lines=_hottest_lines(fn, rates, at),
            inclusive_metrics=inclusive[index][0], unknown_callees=inclusive[index][1],
            graded_by=_graded_by(settings, len(functions) + len(peers), fn.arch),
        ))
    return _with_uncertainty(reports, tables, settings, options)


# An unknown trip count (the configured default) is taken as known to a decade either way: a
# design choice, stated in the README; bounded and expected counts take their own extremes.
UNKNOWN_TRIP_FACTORS = (0.1, 10.0)
NEAREST_WITHIN_UNCERTAINTY = 5
SCAN_WITHIN_UNCERTAINTY = 200  # neighbours in CU order looked at on each side (bounds the work in large cohorts)


def _with_uncertainty(reports: list[FunctionReport], tables: Tables, settings: ReportSettings,
                      options: AnalysisOptions) -> list[FunctionReport]:
    """Each report with its metrics' parts and bands, and the reported functions within its CU band."""
    region = tables.regions[settings.region]
    out = []
    for r in reports:
        table, _ = table_for(r.counted, tables, options)
        cu = r.metrics.cu
        at = options.for_function(r.counted.inferred_sizes)  # where the counts were evaluated
        low, high = _assumed_cu_range(r.counted, {b.cls: b.rate for b in r.breakdown}, cu, at)
        # Mispredictions are charged at the mean rate: none at all … twice as many (random data).
        mispredicted = sum(b.cu for b in r.breakdown if b.cls == MISPREDICT)
        low, high = max(0.0, low - mispredicted), high + mispredicted * float(MISPREDICT_WORST / MISPREDICT_RATE - 1)
        out.append(replace(r, metric_parts=metric_parts(r.breakdown, cu, table, region),
                           metrics_band=metrics_band(r.breakdown, cu, low, high, table, region)))
    return _within_uncertainty(out)


def _assumed_cu_range(fn: CountedFunction, rates: dict[str, float], cu: float,
                      options: AnalysisOptions) -> tuple[float, float]:
    """CU if every assumed trip count were at either end of what it could be: unknown → the
    default ÷10 … ×10; expected (the mean of a data-dependent exit) → 1 … the bound (2·mean − 1);
    bounded (an upper bound) → 1 … the bound. Each line's CU moves by the product of the factors of
    the assumed loops around it (a loop spans its header's line to the next loop at its depth or
    shallower, in source order: approximate). CU that no line carries stays put. Without line
    information (IR without debug info), the whole CU moves by the widest factors of its loops."""
    assumed = [loop for loop in fn.loops if loop.trip_count.is_assumed]
    if not assumed:
        return cu, cu
    per_line = {line: _class_cu(classes, rates, options) for line, classes in fn.line_counts.items()}
    if any(loop.line is None for loop in assumed) or sum(per_line.values()) <= 0:
        factors = [_trip_factors(loop, options) for loop in assumed]
        return cu * min(a for a, _ in factors), cu * max(b for _, b in factors)
    loops = sorted((loop for loop in fn.loops if loop.line is not None), key=lambda loop: (loop.line, loop.depth))
    spans = []
    for k, loop in enumerate(loops):
        if not loop.trip_count.is_assumed:
            continue
        end = next((other.line for other in loops[k + 1:] if other.line > loop.line and other.depth <= loop.depth),
                   (fn.end_line or loop.line) + 1)
        spans.append((loop.line, end, _trip_factors(loop, options)))
    low = high = max(0.0, cu - sum(per_line.values()))
    for line, line_cu in per_line.items():
        f_low = f_high = 1.0
        for start, end, (a, b) in spans:
            if start <= line < end:
                f_low, f_high = f_low * a, f_high * b
        low, high = low + line_cu * f_low, high + line_cu * f_high
    return min(low, cu), max(high, cu)


def _trip_factors(loop: LoopSummary, options: AnalysisOptions) -> tuple[float, float]:
    """How far an assumed trip count may be off, as (low, high) multipliers of what was used."""
    iterations = max(1.0, evaluate_count(loop.trip_count.iterations, options))
    if loop.trip_count.kind == "unknown" or loop.trip_count.is_named_guess:
        return UNKNOWN_TRIP_FACTORS
    if loop.trip_count.kind == "expected":
        return 1.0 / iterations, (2.0 * iterations - 1.0) / iterations
    return 1.0 / iterations, 1.0  # bounded: the bound is what was used


def _within_uncertainty(reports: list[FunctionReport]) -> list[FunctionReport]:
    """Each report with the (nearest few) other reported functions whose CU bands overlap its
    own: the hover does not rank it against them."""
    bands = [(r.metrics_band.low.cu, r.metrics_band.high.cu) if r.metrics_band is not None else (r.metrics.cu,) * 2
             for r in reports]
    order = sorted(range(len(reports)), key=lambda k: reports[k].metrics.cu)
    # Plain lists in CU order: this runs over a window of 2 × 200 neighbours per function.
    lows, highs = [bands[k][0] for k in order], [bands[k][1] for k in order]
    shifted_cu = [reports[k].metrics.cu + 1e-12 for k in order]
    names = [reports[k].counted.display_name for k in order]
    out: list[FunctionReport | None] = [None] * len(reports)
    for p, i in enumerate(order):
        lo, hi = bands[i]
        own = shifted_cu[p]
        # Outward from p, nearest CU first (CU order is distance order on each side), until the
        # next one is farther than the nearest few found (ties still taken: they sort by name).
        first, last = max(0, p - SCAN_WITHIN_UNCERTAINTY), min(len(order) - 1, p + SCAN_WITHIN_UNCERTAINTY)
        left, right, near = p - 1, p + 1, []
        while left >= first or right <= last:
            below = abs(math.log(shifted_cu[left] / own)) if left >= first else math.inf
            above = abs(math.log(shifted_cu[right] / own)) if right <= last else math.inf
            distance = min(below, above)
            if len(near) >= NEAREST_WITHIN_UNCERTAINTY and distance > near[NEAREST_WITHIN_UNCERTAINTY - 1][0]:
                break
            if below <= above:
                q, left = left, left - 1
            else:
                q, right = right, right + 1
            if lows[q] <= hi and lo <= highs[q]:
                near.append((distance, names[q]))
        near.sort()
        out[i] = replace(reports[i], within_uncertainty_of=[name for _, name in near[:NEAREST_WITHIN_UNCERTAINTY]])
    return out


class _Inclusive(NamedTuple):
    metrics: Metrics
    guessed_share: float  # the share of its CU that runs inside loops of guessed count (its own or its callees')
    guessed_depth: int  # the deepest path of such loops, across calls
    guessed_product: float  # the product of that path's counts


def _with_cold_resumes(costed: list[_Costed], inclusive: list[tuple[_Inclusive | None, list[str], list[str]]],
                       peers: Sequence[CohortPeer]) -> list[CountedFunction]:
    """Each function, charged `py.work.resume` for its returns from long calls
    (`ccls.cold_resume`), the callees looked up by name as the inclusive cost does. A callee is
    long by what it surely runs: its inclusive CU outside loops of guessed count."""
    surely_cu: dict[str, float] = {}
    for c, (total, _, _) in zip(costed, inclusive):
        cu = total.metrics.cu * (1.0 - total.guessed_share) if total is not None else \
            c.metrics.cu * (1.0 - c.fn.guessed_share)
        surely_cu.setdefault(c.fn.name, cu)
        surely_cu.setdefault(c.fn.display_name, cu)
    for peer in peers:  # what a peer's loops are is not known here: its CU as it is
        surely_cu.setdefault(peer.name, peer.metrics.cu)
        surely_cu.setdefault(peer.display_name, peer.metrics.cu)
    return [with_cold_resumes(c.fn, surely_cu, resume_threshold_cu(c.table)) for c in costed]


def _inclusive_metrics(functions: list[CountedFunction], metrics: list[Metrics], options: AnalysisOptions,
                       peers: Sequence[CohortPeer] = ()) -> list[tuple[Metrics | None, list[str], list[str]]]:
    """`_inclusive_costs` with each function's inclusive metrics alone."""
    return [(total.metrics if total is not None else None, unknown, notes)
            for total, unknown, notes in _inclusive_costs(functions, metrics, options, peers)]


def _inclusive_costs(functions: list[CountedFunction], metrics: list[Metrics], options: AnalysisOptions,
                     peers: Sequence[CohortPeer] = ()) -> list[tuple[_Inclusive | None, list[str], list[str]]]:
    """Self cost plus, for each call to a function analysed in the same run (or a peer), that
    function's inclusive cost × the number of calls. Recursion is cut, the same whichever
    function is reached first: calls within a recursive cycle (a strongly connected component of
    the call graph: itself, or functions that call one another back) add nothing, as the
    recursion's depth is unknown; a caller outside the cycle includes each member it calls.
    Other callees are listed as unknown. Calls made inside loops of guessed count (unknown, or only a
    worst case), to a function whose cost runs partly in such loops of its own (or its callees'),
    join one nest with them, as if inlined (`ccls.unknown_nests.across_call`): the default is
    shared, not multiplied. A function's such loops count only where they are open from its
    entry (no loop of known count around them, `guessed_around`), through its callees too: the
    deepest path of them across calls, and the share of its inclusive CU inside them. Each
    function's (inclusive metrics, unknown callees, notes)."""
    index = {}
    for i, fn in enumerate(functions):
        index.setdefault(fn.name, i)
        index.setdefault(fn.display_name, i)
    callees: list[dict[str, Polynomial]] = [fn.calls for fn in functions]
    metrics = list(metrics)
    for peer in peers:  # a peer calls nothing: its inclusive cost is its own
        index.setdefault(peer.name, len(metrics))
        index.setdefault(peer.display_name, len(metrics))
        callees.append({})
        metrics.append(peer.metrics)
    default = options.default_trip_count
    cycle_of = {member: frozenset(component) for component in strongly_connected(
        {i: {index[c] for c in calls if c in index} for i, calls in enumerate(callees)}) for member in component}
    memo: dict[int, _Inclusive] = {}
    notes: dict[int, list[str]] = {}

    def total(i: int) -> _Inclusive:
        if i in memo:
            return memo[i]
        own = metrics[i]
        parts = [own.cu, own.energy_joules, own.co2_kg, own.usd]
        fn = functions[i] if i < len(functions) else None
        at = options.for_function(fn.inferred_sizes) if fn is not None else options
        point = _at_point(fn, at) if fn is not None else None
        depth, product = fn.guessed_nest if fn is not None else (0, 1.0)
        guessed_cu = own.cu * (fn.guessed_share if fn is not None else 0.0)
        for callee, calls in callees[i].items():
            j = index.get(callee)
            if j is None or j in cycle_of[i]:
                continue
            # A callee's cost is its own, at the sizes its callers pass (the largest).
            times = point.calls.get(callee, 0.0) if point is not None else evaluate_count(calls, at)
            sub = total(j)
            k, around, lines = fn.guessed_calls.get(callee, (0, 1.0, ())) if fn is not None else (0, 1.0, ())
            inside = min(times, evaluate_count(fn.guessed_call_counts[callee], at)) if k else 0.0
            factor, joint = across_call(k, around, sub.guessed_depth, sub.guessed_product, sub.guessed_share, default)
            weight = times - inside + inside * factor
            for n, value in enumerate((sub.metrics.cu, sub.metrics.energy_joules, sub.metrics.co2_kg, sub.metrics.usd)):
                parts[n] += weight * value
            # What of it stays in an open nest of this function's (no known loop around), for its callers.
            open_in, open_out = fn.open_call_counts.get(callee, (None, None)) if fn is not None else (None, None)
            open_in = min(inside, evaluate_count(open_in, at)) if open_in is not None else 0.0
            open_out = min(times - inside, evaluate_count(open_out, at)) if open_out is not None else 0.0
            guessed_cu += open_out * sub.metrics.cu * sub.guessed_share + open_in * factor * sub.metrics.cu
            if open_out > 0 and sub.guessed_depth:
                depth, product = max(depth, sub.guessed_depth), max(product, sub.guessed_product)
            if open_in > 0:
                depth, product = max(depth, k + sub.guessed_depth), max(product, joint)
            if inside > 0 and factor < 1.0 and fn is not None:
                name = functions[j].display_name if j < len(functions) else callee
                lines = [(fn.line or 0) + offset for offset in lines]  # recorded after its first line
                where = f"at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))} " if lines else ""
                notes.setdefault(i, []).append(
                    f"calls {where}to {name} inside loops of unknown count: {name}'s own unknown loops taken to "
                    f"share the default with them, as if inlined (one nest {k + sub.guessed_depth} deep runs its "
                    f"innermost body {default} times in all, not {default} × {default}: its cost per call there "
                    f"× {factor:.3g})")
        cu = parts[0]
        memo[i] = _Inclusive(Metrics(*parts), min(1.0, guessed_cu / cu) if cu > 0 else 0.0, depth, product)
        return memo[i]

    out = []
    for i, fn in enumerate(functions):
        if not fn.calls:
            out.append((None, [], []))
            continue
        unknown = sorted(c or "(indirect call)" for c in fn.calls if index.get(c) is None)
        out.append((total(i), unknown, notes.get(i, [])))
    return out


def _class_cu(classes: dict[str, Polynomial], rates: dict[str, float], options: AnalysisOptions) -> float:
    return sum(evaluate_count(poly, options) * rates.get(cls, 0.0) for cls, poly in classes.items())


def _findings(fn: CountedFunction, rates: dict[str, float], metrics: Metrics, options: AnalysisOptions) -> list[Finding]:
    findings = []
    for site in fn.sites:
        share = _class_cu(site.classes, rates, options) / metrics.cu if metrics.cu > 0 else None
        share_text = f" (~{share:.0%} of this function's CU)" if share is not None else ""
        findings.append(Finding(site.kind, site.line, site.message + share_text, recommendation(site.kind, site.cause),
                                share))
    findings.sort(key=lambda f: -(f.share_of_cu or 0))
    return findings


def _hottest_lines(fn: CountedFunction, rates: dict[str, float], options: AnalysisOptions,
                   top: int = 5) -> list[tuple[int, float]]:
    per_line = [(line, _class_cu(classes, rates, options)) for line, classes in fn.line_counts.items()]
    per_line.sort(key=lambda item: -item[1])
    return [item for item in per_line[:top] if item[1] > 0]
