"""The report stage of the service: counted functions → costed, scored, graded reports.

Cheap next to counting, but a large file re-costed on every keystroke is not: `ReportMemo`
keeps each unit's reports while its identity (cache key, first line) is unchanged, shifts those
of units that only moved, and re-scores everything together under cohort scoring, with the
rest of the workspace (`Cohort`, costed once per file and setting by `PeerCosts`).
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, replace
from typing import NamedTuple, Sequence

from ccls.engine import CohortPeer, FunctionReport, ReportSettings, evaluate_count, function_metrics, report, rescore
from ccls.model import CountedFunction, MemoryOverlap
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.service.counts import Outcome
from ccls.service.units import shift_line_mentions
from ccls.table_types import Tables

UnitReports = dict[str, tuple[FunctionReport, ...]]  # unit key -> its reports, most costly first


class ReportMemo:
    """Reports per document and unit, reused across analyses of the same document."""

    def __init__(self) -> None:
        self._memo: dict[str, tuple[tuple, dict]] = {}  # document -> (signature, identity -> reports)
        self._lock = threading.Lock()
        self.reports = 0  # report() calls: how often something was costed
        self.cohort_size = 0  # functions scored together in the latest call

    def reports_for(self, document: str, outcome: Outcome, tables: Tables, settings: ReportSettings,
                    options: AnalysisOptions, peers: Sequence[CohortPeer] = (),
                    generation: int | None = None) -> UnitReports:
        """Reports per unit of `outcome` (most costly first). A function's costs depend only on
        itself, so reports of units whose identity is unchanged are reused and those of units
        that only moved are shifted: an edit re-costs one function, not the file. Under cohort
        scoring every report is then re-scored together with `peers` (of cohort `generation`)."""
        # Peers are callees too (inclusive metrics): a new workspace generation re-costs everything.
        signature = (settings, options, getattr(tables, "version", id(tables)), generation)
        with self._lock:
            memo_signature, memo = self._memo.get(document, (None, {}))
        if memo_signature != signature:
            memo = {}
        # A function that only moved (lines added above it) keeps its report, shifted.
        by_place = {identity[:-1]: (identity, reports) for identity, reports in memo.items()}
        for unit in outcome.units:
            old = by_place.get(unit.identity[:-1])
            if unit.identity not in memo and old is not None and len(old[1]) == len(unit.counted):
                memo[unit.identity] = tuple(moved_report(r, cf) for r, cf in zip(old[1], unit.counted))
        todo = [unit for unit in outcome.units if unit.identity not in memo]
        if todo:
            # Cohort scores are given below, to every report at once.
            costing = dataclasses.replace(settings, scoring="absolute") if settings.scoring == "cohort" else settings
            fresh = report([cf for unit in todo for cf in unit.counted], tables, costing, options, peers)
            self.reports += 1
            position = 0
            for unit in todo:
                memo[unit.identity] = tuple(fresh[position:position + len(unit.counted)])
                position += len(unit.counted)
        keep = {unit.identity: memo[unit.identity] for unit in outcome.units}
        if settings.scoring == "cohort":
            identities = list(keep)
            scored = iter(rescore([r for i in identities for r in keep[i]], tables, settings, peers))
            keep = {i: tuple(next(scored) for _ in keep[i]) for i in identities}
        self.cohort_size = sum(len(r) for r in keep.values()) + len(peers)
        with self._lock:
            self._memo[document] = (signature, keep)
        return {unit.key: tuple(sorted(keep[unit.identity], key=lambda r: -r.metrics.cu))
                for unit in outcome.units if keep[unit.identity]}

    def forget(self, document: str) -> None:
        with self._lock:
            self._memo.pop(document, None)


def moved_report(r: FunctionReport, counted: CountedFunction) -> FunctionReport:
    """`r` for its function moved in its file, `counted` being `r.counted` after shift_lines:
    the costs stay, the lines follow (cheaper than costing it again)."""
    old = r.counted
    delta = (counted.line or 0) - (old.line or 0)
    if delta == 0:
        return replace(r, counted=counted)

    def move_text(text: str) -> str:
        return shift_line_mentions(text, delta, old.line, old.end_line)
    return replace(
        r, counted=counted,
        findings=[replace(f, line=None if f.line is None else f.line + delta, message=move_text(f.message))
                  for f in r.findings],
        assumptions=[move_text(text) for text in r.assumptions],
        hottest_lines=[(line + delta, cu) for line, cu in r.hottest_lines],
    )


class Cohort(NamedTuple):
    """The workspace's functions as cohort scoring saw them at one generation."""

    generation: int
    files: tuple[tuple[str, list[CohortMember]], ...]  # (path, members)


class PeerCosts:
    """A cohort's functions with their metrics, costed once per file, tables and setting."""

    def __init__(self) -> None:
        self._peers: dict[str, tuple] = {}  # path -> (members, tables, signature, CohortPeers)
        self._lock = threading.Lock()

    def peers(self, cohort: Cohort, tables: Tables, settings: ReportSettings,
              options: AnalysisOptions) -> list[CohortPeer]:
        signature = (settings.region, options)
        out: list[CohortPeer] = []
        for path, members in cohort.files:
            with self._lock:
                memo = self._peers.get(path)
            if memo is None or memo[0] is not members or memo[1] is not tables or memo[2] != signature:
                costed = [CohortPeer(m.name, m.display_name, function_metrics(m.counted(), tables, settings, options))
                          for m in members]
                memo = (members, tables, signature, costed)
                with self._lock:
                    self._peers[path] = memo
            out.extend(memo[3])
        return out

    def forget(self, path: str) -> None:
        with self._lock:
            self._peers.pop(path, None)


@dataclass(frozen=True)
class CohortMember:
    """What cohort scoring needs of a workspace function, in a few hundred bytes: its counts
    evaluated at the configured parameter values. Costing `counted()` gives the metrics of
    the function it stands for; it has no IR, loops, per-line counts or finding sites."""

    name: str
    display_name: str
    file: str
    line: int | None
    language: str
    arch: str
    counts: tuple[tuple[str, float], ...]
    machine_instructions: float | None
    machine_cycles: float | None
    overlaps: tuple[tuple[str, float, tuple[tuple[str, float], ...]], ...] = ()  # (loop, cycles, misses)

    @classmethod
    def of(cls, cf: CountedFunction, options: AnalysisOptions) -> "CohortMember":
        options = options.for_function(cf.inferred_sizes)

        def value(poly: Polynomial) -> float:
            return evaluate_count(poly, options)
        return cls(cf.name, cf.display_name, cf.file, cf.line, cf.language, cf.arch,
                   tuple((k, value(p)) for k, p in cf.counts.items()),
                   value(cf.machine_instructions) if cf.machine_instructions is not None else None,
                   value(cf.machine_cycles) if cf.machine_cycles is not None else None,
                   tuple((o.loop, value(o.cycles), tuple((k, value(p)) for k, p in o.misses.items()))
                         for o in cf.overlaps))

    def counted(self) -> CountedFunction:
        return CountedFunction(
            name=self.name, display_name=self.display_name, file=self.file, line=self.line, end_line=self.line,
            language=self.language, arch=self.arch, parameters=[], static_counts={},
            counts={k: Polynomial.constant(v) for k, v in self.counts},
            machine_instructions=Polynomial.constant(self.machine_instructions)
            if self.machine_instructions is not None else None,
            loops=[], line_counts={}, calls={}, sites=[], assumptions=[],
            machine_cycles=Polynomial.constant(self.machine_cycles) if self.machine_cycles is not None else None,
            overlaps=[MemoryOverlap(loop, Polynomial.constant(cycles), {k: Polynomial.constant(v) for k, v in misses})
                      for loop, cycles, misses in self.overlaps])
