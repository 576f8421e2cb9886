"""`AnalysisService`: the engine both views call. Counts (cached on disk, per function or per
file), reports (memoised, cohort-rescored), the tables, and what the program's own call sites
pass its functions. The language server holds one for its lifetime; `ccls analyze` uses the
same count cache through `ccls.service.batch`."""
from __future__ import annotations

from typing import Callable, Sequence

from ccls.cache import CountCache
from ccls.engine import ReportSettings
from ccls.frontends import language_named
from ccls.options import AnalysisOptions
from ccls.service.counts import Analyzer, Outcome, Snapshot
from ccls.service.program_sizes import DocumentSizes, ProgramSizes
from ccls.service.reports import Cohort, PeerCosts, ReportMemo, UnitReports
from ccls.service.tables import TableStore


class AnalysisService:
    def __init__(self, tables: TableStore, cache_directory: str | None = None):
        self.tables = tables
        self.cache = CountCache(cache_directory)
        self.analyzer = Analyzer(self.cache, tables)
        self.program_sizes = ProgramSizes()  # what the workspace's call sites pass its functions
        self.memo = ReportMemo()
        self.peer_costs = PeerCosts()

    def open_cache(self, directory: str | None) -> list[str]:
        """Count with the cache in `directory` from now on; returns its messages for the user."""
        self.cache.close()
        self.cache = CountCache(directory)
        self.analyzer = Analyzer(self.cache, self.tables)
        return list(self.cache.messages)

    def counts(self, snapshot: Snapshot, options: AnalysisOptions, cancelled: Callable[[], bool] = lambda: False,
               remember: bool = True, previous: Outcome | None = None,
               sizes: DocumentSizes | None = None, order: Sequence[int] | None = None,
               batch: int | None = None, whole_up_to: int = 0, preamble: bool = True) -> Outcome:
        """Counted functions of one snapshot (see `Analyzer.analyse`): with `batch`, at most that
        many uncached ones, the first in `order`. Thread-safe."""
        return self.analyzer.analyse(snapshot, options, cancelled, remember, previous, sizes, order, batch,
                                     whole_up_to, preamble)

    def warm_up(self, languages: Sequence[str] = ("c", "cpp")) -> None:
        """Load what a first analysis needs before a document asks for one: the tables, the
        front ends and readers (their imports take ~0.4 s) and the tools' versions (part of
        every count key; `--version` runs once per binary, then the cache directory has it)."""
        self.tables.get()
        for name in languages:
            record = language_named(name)
            record.entry_point()
            for tool in record.tools:
                self.analyzer.tool_version(tool)

    def reports(self, document: str, outcome: Outcome, settings: ReportSettings, options: AnalysisOptions,
                cohort: Cohort | None = None) -> UnitReports:
        """Reports per unit of `outcome`, scored with the workspace's `cohort` where one is given."""
        tables = self.tables.get()
        peers = self.peer_costs.peers(cohort, tables, settings, options) if cohort is not None else []
        return self.memo.reports_for(document, outcome, tables, settings, options, peers,
                                     cohort.generation if cohort is not None else None)

    def forget_document(self, document: str) -> None:
        self.memo.forget(document)

    def close(self) -> None:
        self.cache.close()
