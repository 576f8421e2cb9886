"""The server's state and its one-way flow: documents → the analysis service (on the worker
pool) → reports → what is published. `server.py` handlers call into a `Session`; everything
here runs on the event loop except the functions handed to the worker pool.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from lsprotocol import types
from pygls.uris import to_fs_path

from ccls import toolchain
from ccls.cache import default_cache_dir
from ccls.engine import ReportSettings, check_settings
from ccls.lsp import convert
from ccls.lsp.convert import Placed
from ccls.lsp.documents import DocumentModel, definition_rows
from ccls.lsp.positions import UTF16
from ccls.lsp.scheduler import BACKGROUND, FOREGROUND, DocumentScheduler, WorkerPool
from ccls.lsp.settings import Settings, merge, parse_settings, read_project_file, unwrap_section
from ccls.lsp.workspace import WorkspaceEvents, WorkspaceIndex
from ccls.model import AnalysisError
from ccls.render import hint_filter, hint_label, hover_markdown
from ccls.service import units, viewport
from ccls.service.analysis import AnalysisService
from ccls.service.background import OPEN_FILE, BackgroundWork, BatchCounts, count_functions
from ccls.service.counts import Cancelled, Outcome, all_counted, language_for, size_values
from ccls.service.program_sizes import DocumentSizes
from ccls.service.reports import Cohort, UnitReports
from ccls.service.tables import TableStore

log = logging.getLogger(__name__)
# Re-parse once typing pauses this long: well inside the shortest debounce (50 ms), and not once
# per keystroke (a large file's re-parse and call graph take tens of ms on the event loop).
PARSE_AHEAD_S = 0.02
# Loaded once in the worker processes' fork server: the C family's front end, readers, counting.
WORKER_MODULES = ("ccls.service.background", "ccls.lsp.workspace_worker", "ccls.frontends.c_family")


@dataclass
class DocResult:
    """The last analysis published for a document."""

    version: int
    outcome: Outcome
    reports: UnitReports  # unit key -> FunctionReports, most costly first
    file_mode: bool
    errors: list[AnalysisError]
    placed_memo: tuple[Any, list[Placed]] | None = None


@dataclass
class Stats:
    analyses: int = 0
    published: int = 0
    stale_dropped: int = 0
    superseded: int = 0
    last: dict[str, dict] = field(default_factory=dict)


class Session:
    def __init__(self, server: Any):
        self.server = server
        self.docs: dict[str, DocumentModel] = {}
        self.results: dict[str, DocResult] = {}
        self.layers: dict[str, dict] = {"project": {}, "init": {}, "client": {}, "command": {}}
        self.settings = Settings()
        self.encoding = UTF16
        self.folders: list[str] = []
        self.capabilities: types.ClientCapabilities | None = None
        self.pool = WorkerPool(2)
        # The rest of open files and the workspace pass: on worker processes, one per core.
        self.background = BackgroundWork(preload=WORKER_MODULES)
        self.scheduler = DocumentScheduler(self._analyse)
        self.service: AnalysisService | None = None  # opened with the settings' cache directory
        self._table_store = TableStore()
        self.stats = Stats()
        self.workspace: WorkspaceIndex | None = None  # started after initialize
        self._shown: set[str] = set()
        self._parse_ahead: dict[str, asyncio.TimerHandle] = {}
        self._sizes_used: dict[str, tuple] = {}  # uri -> the size values its last analysis used
        self._recheck_pending = False
        self._screens: dict[str, tuple[int, int]] = {}  # uri -> rows of its last inlayHint request
        self._cursor_rows: dict[str, int] = {}  # uri -> row of the last edit or hover
        self._screen_waiters: dict[str, asyncio.Event] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def initialize(self, params: types.InitializeParams, encoding: str) -> None:
        self.capabilities = params.capabilities
        self.encoding = str(getattr(encoding, "value", encoding) or UTF16)
        folders = [f.uri for f in (params.workspace_folders or [])]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        self.folders = [p for p in (_uri_to_path(u) for u in folders) if p]
        self.layers["init"] = _section(params.initialization_options)
        self.layers["project"] = self._read_project_files()
        self.reload_settings(initial=True, quiet=True)  # custom profiles and the cache directory
        try:
            self.tables  # noqa: B018 - load now so that profile and region names can be checked
        except Exception as exc:
            self.show(f"cannot load the cost tables ({exc}); costs are unavailable", types.MessageType.Error)
            return
        self.reload_settings(initial=True)

    def warm_up(self) -> None:
        """Front ends, tables and tool versions loaded while the client opens its first file."""
        if self.service is not None:
            self.pool.submit(self.service.warm_up).add_done_callback(
                lambda f: f.cancelled() or f.exception() is None or log.info("warm-up failed: %s", f.exception()))

    def shutdown(self) -> None:
        """On `shutdown`, and again when the process ends (after `exit`, or the client gone)."""
        if self.workspace is not None:
            self.workspace.stop()
        self.background.shutdown()
        self.pool.shutdown()
        toolchain.SPARES.clear()
        if self.service is not None:
            self.service.close()

    def _read_project_files(self) -> dict:
        merged: dict = {}
        for folder in reversed(self.folders):  # the first folder wins
            values, messages = read_project_file(folder)
            merged.update(values)
            for message in messages:
                self.show(message)
        return merged

    # -- client capabilities -----------------------------------------------------------------

    def _cap(self, *path: str) -> Any:
        node: Any = self.capabilities
        for name in path:
            node = getattr(node, name, None) if node is not None else None
        return node

    @property
    def supports_configuration(self) -> bool:
        return bool(self._cap("workspace", "configuration"))

    @property
    def supports_hint_refresh(self) -> bool:
        return bool(self._cap("workspace", "inlay_hint", "refresh_support"))

    @property
    def supports_lens_refresh(self) -> bool:
        return bool(self._cap("workspace", "code_lens", "refresh_support"))

    @property
    def supports_progress(self) -> bool:
        return bool(self._cap("window", "work_done_progress"))

    @property
    def resolves_tooltips(self) -> bool:
        props = self._cap("text_document", "inlay_hint", "resolve_support", "properties") or ()
        return "tooltip" in props

    # -- messages ----------------------------------------------------------------------------

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """A visible message, once per text (settings are re-read often)."""
        log.warning("%s", message)
        if message in self._shown:
            return
        self._shown.add(message)
        self.server.window_show_message(types.ShowMessageParams(type=kind, message=f"ccls: {message}"))

    # -- settings ----------------------------------------------------------------------------

    def reload_settings(self, initial: bool = False, quiet: bool = False) -> None:
        """Re-merge the setting layers; re-cost or re-analyse what the change affects."""
        raw = merge(self.layers["project"], self.layers["init"], self.layers["client"], self.layers["command"])
        tables = self._table_store.loaded
        known_profiles = tuple(tables.profiles) if tables is not None else None
        known_regions = tuple(tables.regions) if tables is not None else None
        kwargs = {"known_regions": known_regions}
        if known_profiles:
            kwargs["known_profiles"] = known_profiles
        settings, messages = parse_settings(raw, **kwargs)
        for message in messages if not quiet else ():
            self.show(message)
        old, self.settings = self.settings, settings
        host_table = self._host_table(settings, quiet)
        if old.custom_profiles != settings.custom_profiles or tables is None or host_table != self._table_store.host_table:
            self._table_store.reload(settings.custom_profiles_dict() or None, host_table)  # loaded on next use
        if self.service is None or old.cache_directory != settings.cache_directory:
            self._open_cache()
        if initial:
            return
        if old.analysis_options() != settings.analysis_options():
            for uri in self.docs:
                self.scheduler.schedule(uri, 0)
            if self.workspace is not None and settings.background_analysis:
                self.workspace.request_pass()  # counts (and so cohort members) changed
        elif old != settings:
            self.refresh_reports()

    def _host_table(self, settings: Settings, quiet: bool) -> str | None:
        """The calibrated table where the arch is `host` (`ccls calibrate` wrote it); without one,
        a message, and the engine costs with the x86_64 table (saying so in the assumptions)."""
        from ccls.calibrate import table_path
        from ccls.tables import NO_CALIBRATION
        from ccls.targets import HOST_ARCH

        if settings.analysis_options().arch != HOST_ARCH:
            return None
        path = table_path(settings.cache_directory)
        if os.path.isfile(path):
            return path
        if not quiet:
            self.show(f"{NO_CALIBRATION}; costing with the x86_64 table until then")
        return None

    async def pull_configuration(self) -> None:
        if not self.supports_configuration:
            return
        try:
            result = await self.server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="ccls")]))
        except Exception as exc:  # a client that fails the request keeps the other layers
            log.info("workspace/configuration failed: %s", exc)
            return
        self.layers["client"] = _section(result[0] if result else None)
        self.reload_settings()

    async def configuration_changed(self, settings: Any) -> None:
        """didChangeConfiguration: pull-model clients send null settings; push-model send them."""
        if self.supports_configuration:
            await self.pull_configuration()
            return
        self.layers["client"] = _section(settings)
        self.reload_settings()

    def project_file_changed(self) -> None:
        self.layers["project"] = self._read_project_files()
        self.reload_settings()

    def _open_cache(self) -> None:
        # Outside the source tree by default ($XDG_CACHE_HOME); the watcher ignores it wherever it is.
        directory = default_cache_dir(self.settings.cache_directory)
        if self.service is None:
            self.service = AnalysisService(self._table_store, directory)
            messages = self.service.cache.messages
        else:
            messages = self.service.open_cache(directory)
        for message in messages:
            self.show(message)

    # -- tables and reports (worker threads) -------------------------------------------------

    @property
    def tables(self) -> Any:
        return self._table_store.get()

    @property
    def analyzer(self) -> Any:
        return self.service.analyzer if self.service is not None else None

    @property
    def program_sizes(self) -> Any:
        return self.service.program_sizes if self.service is not None else None

    def _report_settings(self, settings: Settings) -> Any:
        """The settings' profile/region, or DEFAULT/WORLD (with a message) when the tables lack them."""
        chosen = ReportSettings(settings.profile, settings.region, settings.scoring, settings.normalization)
        try:
            check_settings(self.tables, chosen)
            return chosen
        except KeyError as unknown:
            self._call_soon(self.show, f"{unknown.args[0]}; using DEFAULT/WORLD")
            return ReportSettings(scoring=settings.scoring, normalization=settings.normalization)

    def _unit_reports(self, uri: str, outcome: Outcome, settings: Settings, cohort: Cohort | None) -> UnitReports:
        """Reports per unit (most costly first), from the service's memo; under cohort scoring
        scored together with the workspace's functions (`cohort`, or None)."""
        return self.service.reports(uri, outcome, self._report_settings(settings), settings.analysis_options(), cohort)

    def report_settings(self) -> ReportSettings:
        return ReportSettings(self.settings.profile, self.settings.region, self.settings.scoring,
                              self.settings.normalization)

    def _call_soon(self, fn: Callable, *args: Any) -> None:
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(fn, *args)

    @property
    def _loop(self) -> asyncio.AbstractEventLoop | None:
        return getattr(self, "_event_loop", None)

    def bind_loop(self) -> None:
        self._event_loop = asyncio.get_running_loop()

    # -- documents ---------------------------------------------------------------------------

    def open(self, uri: str, text: str, version: int) -> None:
        path = _uri_to_path(uri)
        language = language_for(path) if path else None
        if language is None:
            log.debug("ignoring %s: not a file type ccls analyses", uri)
            return
        self.docs[uri] = DocumentModel(uri, path, language, text, version)
        self.scheduler.schedule(uri, 0)

    def change(self, uri: str, version: int, changes: list) -> None:
        model = self.docs.get(uri)
        if model is None:
            return
        for change in changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                start, end = change.range.start, change.range.end
                model.apply_change((start.line, start.character), (end.line, end.character), change.text,
                                   self.encoding)
            else:
                model.apply_change(None, None, change.text, self.encoding)
        model.version = version
        if changes and isinstance(changes[-1], types.TextDocumentContentChangePartial):
            self._cursor_rows[uri] = changes[-1].range.start.line
        self.scheduler.schedule(uri)
        # Re-parse (incrementally) while the debounce runs rather than after it, once per pause.
        self._cancel_parse_ahead(uri)
        self._parse_ahead[uri] = asyncio.get_running_loop().call_later(PARSE_AHEAD_S, self._parse_now, uri)

    def _cancel_parse_ahead(self, uri: str) -> None:
        pending = self._parse_ahead.pop(uri, None)
        if pending is not None:
            pending.cancel()

    def _parse_now(self, uri: str) -> None:
        self._parse_ahead.pop(uri, None)
        model = self.docs.get(uri)
        if model is not None:
            model.call_graph()

    def close(self, uri: str) -> None:
        self.scheduler.close(uri)
        self._cancel_parse_ahead(uri)
        self.results.pop(uri, None)
        self._sizes_used.pop(uri, None)
        self._screens.pop(uri, None)
        self._cursor_rows.pop(uri, None)
        if self.service is not None:
            self.service.forget_document(uri)
        if self.docs.pop(uri, None) is not None:
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def saved(self, uri: str) -> None:
        """The buffer is what is analysed; a save changes nothing for it, but tells the
        workspace index that the file on disk is current."""
        if self.workspace is not None and uri in self.docs:
            self.workspace.note_saved(self.docs[uri].path)

    def start_workspace(self) -> None:
        if self.workspace is None and self.folders and self.service is not None:
            events = WorkspaceEvents(show=self.show, project_file_changed=self.project_file_changed,
                                     flags_or_headers_changed=self.reanalyse_all, sizes_changed=self.recheck_sizes,
                                     pass_done=self._workspace_pass_done)
            progress = self.server.work_done_progress if self.supports_progress else None
            self.workspace = WorkspaceIndex(self.service, self.pool, self.background, self.folders,
                                            lambda: self.settings, self._open_paths, self._near_open, events, progress)
            self.workspace.start()

    def _workspace_pass_done(self) -> None:
        if self.settings.scoring == "cohort":
            self.refresh_reports()

    def _open_paths(self) -> set[str]:
        return {model.path for model in self.docs.values()}

    def _near_open(self) -> tuple[set[str], set[str]]:
        """(the open files' directories, the headers they include by "name"): what the workspace
        pass counts first."""
        directories, headers = set(), set()
        for model in self.docs.values():
            directory = os.path.dirname(model.path)
            directories.add(directory)
            headers.update(os.path.normpath(os.path.join(directory, name))
                           for name, quoted in units.include_lines(model.data) if quoted)
        return directories, headers

    def reanalyse_all(self) -> None:
        for uri in self.docs:
            self.scheduler.schedule(uri, 0)

    # -- analysis ----------------------------------------------------------------------------

    async def _analyse(self, uri: str, generation: int) -> None:
        """One pass over a document: what is cached, plus the uncounted functions on (and near)
        the editor's screen, counted here and published at once; then the rest on the worker
        processes (`_count_rest`), with `$/progress`. An edit starts a new pass (the
        scheduler's generation)."""
        model = self.docs.get(uri)
        if model is None or self.service is None:
            return
        snapshot = model.snapshot()
        settings = self.settings
        service = self.service
        stop = threading.Event()
        cohort = self.workspace.cohort_members(self._open_paths()) if (
            self.workspace is not None and settings.scoring == "cohort") else None
        previous = self.results.get(uri)
        program_sizes = self.program_sizes
        if previous is None and snapshot.functions is not None and uri not in self._screens and self._hints_on_screen:
            await self._wait_for_screen(uri)  # the client's first inlayHint request says what is visible

        prior = previous.outcome if previous is not None else None
        progress = _PassProgress(self.server.work_done_progress if self.supports_progress else None,
                                 os.path.basename(model.path))
        try:
            screen = self._screen(uri)
            order, batch = viewport.plan(snapshot.functions, screen, first=True)
            # A file's first screen does not wait for its preamble to be precompiled.
            found = await self._count(uri, model, snapshot, settings, service, program_sizes, cohort, stop,
                                      prior, order, batch, preamble=previous is not None)
            if found is None:
                return  # superseded, or an engine failure (said)
            outcome, reports, sizes = found
            if not self._publish_pass(uri, generation, model, snapshot, outcome, reports, sizes):
                return
            if outcome.pending:
                outcome = await self._count_rest(uri, generation, model, snapshot, settings, cohort, outcome, sizes,
                                                 screen, progress)
                if outcome is None:
                    return
        finally:
            progress.end()
        if self.program_sizes.learn(model.path, all_counted(outcome)):
            self.recheck_sizes()
        if outcome.compiles:
            self.pool.submit(toolchain.SPARES.replenish)  # compilers ready for the next edit
        if self.settings != settings:
            self.refresh_reports()  # profile/region changed while this was analysed

    def _publish_pass(self, uri: str, generation: int, model: DocumentModel, snapshot: Any, outcome: Outcome,
                      reports: UnitReports, sizes: DocumentSizes) -> bool:
        """Publish what a pass has counted so far; False when the document moved on (dropped)."""
        self.stats.analyses += 1
        self.stats.last[uri] = {
            "version": snapshot.version, "compiles": outcome.compiles,
            "compiledFunctions": outcome.compiled_functions, "cachedFunctions": outcome.cached_functions,
            "reduced": outcome.reduced, "fallback": outcome.fallback,
            "durationMs": round(outcome.duration_s * 1000, 1), "pendingFunctions": len(outcome.pending),
        }
        if not self.scheduler.is_current(uri, generation) or self.docs.get(uri) is not model \
                or model.version != snapshot.version:
            self.stats.stale_dropped += 1
            return False
        self.results[uri] = _doc_result(outcome, reports)
        self._sizes_used[uri] = size_values(sizes)
        self.publish(uri)
        self.refresh_clients()
        return True

    async def _count_rest(self, uri: str, generation: int, model: DocumentModel, snapshot: Any, settings: Settings,
                          cohort: Cohort | None, outcome: Outcome, sizes: DocumentSizes, screen_used: tuple[int, int],
                          progress: "_PassProgress") -> Outcome | None:
        """The functions a pass left after the screen, on the worker processes: a batch per
        free worker, each taken nearest the screen as it is when that worker frees (a scroll
        is served next), each published as it comes. None when the document moved on."""
        functions = snapshot.functions
        pending = set(outcome.pending)
        claimed: dict[asyncio.Future, list[int]] = {}
        options = settings.analysis_options()
        tables = self.tables
        directory = self.service.cache.directory

        def supersede() -> None:
            for future in claimed:
                future.cancel()  # a batch still waiting for a worker is dropped; a running one ignored

        unregister = self.scheduler.on_cancel(uri, supersede)
        try:
            while pending:
                left = pending.difference(*claimed.values())
                while left and len(claimed) < self.background.workers:
                    screen = self._screen(uri)
                    order, batch = viewport.plan(functions, screen, first=screen != screen_used, pending=sorted(left))
                    screen_used, chunk = screen, order[:batch]
                    future = asyncio.wrap_future(self.background.submit(
                        OPEN_FILE, tables, count_functions, snapshot, options, sizes, chunk, directory))
                    claimed[future] = chunk
                    left.difference_update(chunk)
                done, _ = await asyncio.wait(claimed, return_when=asyncio.FIRST_COMPLETED)
                batches = []
                for future in done:
                    pending.difference_update(claimed.pop(future))
                    if future.cancelled():
                        continue
                    if future.exception() is not None:  # a worker died or failed: those functions stay without hints
                        self.show(f"analysis of {os.path.basename(model.path)} failed in a worker process: "
                                  f"{future.exception()}", types.MessageType.Error)
                        continue
                    batches.append(future.result())
                if not self.scheduler.is_current(uri, generation):
                    self.stats.superseded += 1
                    return None
                outcome = _merged(outcome, batches, pending)
                reports = await asyncio.wrap_future(self.pool.submit(
                    lambda counted=outcome: self._unit_reports(uri, counted, settings, cohort), FOREGROUND))
                if not self._publish_pass(uri, generation, model, snapshot, outcome, reports, sizes):
                    return None
                total = len(functions)
                await progress.report(total - len(pending), total)
            return outcome
        finally:
            supersede()
            unregister()

    async def _count(self, uri: str, model: DocumentModel, snapshot: Any, settings: Settings,
                     service: AnalysisService, program_sizes: Any, cohort: Cohort | None, stop: threading.Event,
                     prior: Outcome | None, order: list[int] | None, batch: int | None,
                     preamble: bool) -> tuple[Outcome, UnitReports, DocumentSizes] | None:
        """One batch of a pass on the worker pool; None when superseded or failed."""
        def work() -> tuple[Outcome, dict, DocumentSizes]:
            sizes = program_sizes.for_document(model.path)  # inference can take a while: not on the loop
            outcome = service.counts(snapshot, settings.analysis_options(), stop.is_set, previous=prior,
                                     sizes=sizes, order=order, batch=batch, whole_up_to=viewport.WHOLE_UP_TO,
                                     preamble=preamble)
            return outcome, self._unit_reports(uri, outcome, settings, cohort), sizes

        future = self.pool.submit(work, FOREGROUND)

        def supersede() -> None:
            stop.set()
            future.cancel()  # only succeeds while the job is still queued

        unregister = self.scheduler.on_cancel(uri, supersede)
        try:
            return await asyncio.wrap_future(future)
        except (asyncio.CancelledError, Cancelled):
            self.stats.superseded += 1
            return None
        except Exception as exc:  # an engine bug: say so once, keep serving what is known
            log.exception("analysis of %s failed", uri)
            self.show(f"analysis of {os.path.basename(model.path)} failed: {exc}", types.MessageType.Error)
            return None
        finally:
            unregister()

    # -- what is on screen -------------------------------------------------------------------

    @property
    def _hints_on_screen(self) -> bool:
        return self.settings.hints_enabled and self._cap("text_document", "inlay_hint") is not None

    def _screen(self, uri: str) -> tuple[int, int]:
        """Rows (0-based) the user sees: the last inlayHint range, else around the last edit or
        hover, else the first screenful."""
        if uri in self._screens:
            return self._screens[uri]
        row = self._cursor_rows.get(uri)
        if row is not None:
            return max(0, row - viewport.SCREEN_ROWS // 2), row + viewport.SCREEN_ROWS // 2
        return 0, viewport.SCREEN_ROWS

    def saw_screen(self, uri: str, first_row: int, last_row: int) -> None:
        self._screens[uri] = (first_row, last_row)
        waiter = self._screen_waiters.pop(uri, None)
        if waiter is not None:
            waiter.set()

    async def _wait_for_screen(self, uri: str) -> None:
        waiter = self._screen_waiters.setdefault(uri, asyncio.Event())
        try:
            await asyncio.wait_for(waiter.wait(), viewport.FIRST_RANGE_WAIT_S)
        except asyncio.TimeoutError:
            pass  # a client that asks later (or never) gets the first screenful first
        finally:
            self._screen_waiters.pop(uri, None)

    def recheck_sizes(self, delay_s: float = 0.0) -> None:
        """Re-analyse the documents whose functions' sizes from call sites have changed (a
        constant edited at a call, a caller opened or indexed): their keys change with them.
        Coalesced, and worked out on a worker (inference covers the whole workspace)."""
        if self._recheck_pending:
            return
        self._recheck_pending = True

        def compare() -> list[str]:
            return [uri for uri, path in paths.items()
                    if size_values(self.program_sizes.for_document(path)) != self._sizes_used.get(uri)]

        def run() -> None:
            self._recheck_pending = False
            nonlocal paths
            paths = {uri: model.path for uri, model in self.docs.items() if uri in self._sizes_used}
            if paths:
                self.pool.submit(compare, BACKGROUND).add_done_callback(
                    lambda f: f.exception() is None and self._call_soon(self._reschedule, f.result()))
        paths: dict[str, str] = {}
        loop = self._loop
        if loop is None:
            self._recheck_pending = False
        elif delay_s:
            loop.call_later(delay_s, run)
        else:
            loop.call_soon(run)

    def _reschedule(self, uris: list[str]) -> None:
        for uri in uris:
            if uri in self.docs:
                self.scheduler.schedule(uri, 0)

    def refresh_reports(self) -> None:
        """Re-cost every open document's cached counts (profile, region, tables changed)."""
        settings = self.settings
        for uri, result in list(self.results.items()):
            cohort = self.workspace.cohort_members(self._open_paths()) if (
                self.workspace is not None and settings.scoring == "cohort") else None
            future = self.pool.submit(lambda u=uri, r=result: self._unit_reports(u, r.outcome, settings, cohort),
                                      FOREGROUND)
            future.add_done_callback(lambda f, u=uri, r=result: self._call_soon(self._rereported, u, r, f))

    def _rereported(self, uri: str, result: DocResult, future: Any) -> None:
        if future.cancelled() or future.exception() is not None or self.results.get(uri) is not result:
            if not future.cancelled() and future.exception() is not None:
                log.error("re-costing %s failed: %s", uri, future.exception())
            return
        self.results[uri] = _doc_result(result.outcome, future.result())
        self.publish(uri)
        self.refresh_clients()

    def refresh_clients(self) -> None:
        if self.supports_hint_refresh:
            self.server.workspace_inlay_hint_refresh(None)
        if self.settings.code_lens_enabled and self.supports_lens_refresh:
            self.server.workspace_code_lens_refresh(None)

    # -- views -------------------------------------------------------------------------------

    def placed(self, uri: str) -> tuple[DocumentModel, list[Placed]] | None:
        """The current functions of a document that have reports, positioned in its current text."""
        model, result = self.docs.get(uri), self.results.get(uri)
        if model is None or result is None:
            return None
        memo_key = (model.version, id(model.data))
        if result.placed_memo is not None and result.placed_memo[0] == memo_key:
            return model, result.placed_memo[1]
        placed: list[Placed] = []
        if result.file_mode:
            if model.version == result.version:
                index = model.index
                for key, reports in result.reports.items():
                    rows = definition_rows(index.lines, model.language, reports[0].counted)
                    if rows is None:
                        continue
                    row, end_row = rows
                    col = len(index.line(row).encode("utf-8", "surrogatepass"))
                    placed.append(Placed(key, row, end_row, row, 0, row, col, reports))
        else:
            for fn in model.functions() or ():
                reports = result.reports.get(fn.text_hash)
                if reports:
                    placed.append(Placed(fn.text_hash, fn.start_line - 1, fn.end_line - 1, fn.name_start[0],
                                         fn.name_start[1], fn.signature_end[0], fn.signature_end[1], reports))
        result.placed_memo = (memo_key, placed)
        return model, placed

    def publish(self, uri: str) -> None:
        found = self.placed(uri)
        result = self.results.get(uri)
        if found is None or result is None:
            return
        model, placed = found
        diagnostics = convert.lsp_diagnostics(model.index, placed, result.errors, self.settings.severity,
                                              self.settings.min_share, self.encoding)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=model.version))
        self.stats.published += 1

    def inlay_hints(self, uri: str, rng: types.Range) -> list[types.InlayHint]:
        if uri in self.docs:
            self.saw_screen(uri, rng.start.line, rng.end.line)  # what to count first
        if not self.settings.hints_enabled:
            return []
        found = self.placed(uri)
        if found is None:
            return []
        model, placed = found
        hints = []
        resolve = self.resolves_tooltips
        shown = self._hint_filter(placed)
        for item in placed:
            if not rng.start.line <= item.hint_row <= rng.end.line or not shown(item.reports[0]):
                continue
            label = hint_label(item.reports[0], self.settings.hints_format)
            tooltip = None if resolve else self._tooltip(item)
            hints.append(convert.lsp_inlay_hint(model.index, item, label, self.encoding,
                                                {"uri": uri, "key": item.key}, tooltip))
        return hints

    def _hint_filter(self, placed: list[Placed]) -> Callable[[Any], bool]:
        """ccls.hints.show over the document's functions (inlay hints and code lenses alike)."""
        try:
            grades = tuple(grade for _, grade, _ in self.tables.grades.bands)
        except Exception:  # no tables: no grades to compare, only shares
            grades = ()
        return hint_filter([item.reports[0] for item in placed], self.settings.hints_show, grades)

    def resolve_hint(self, hint: types.InlayHint) -> types.InlayHint:
        data = hint.data if isinstance(hint.data, dict) else {}
        found = self.placed(data.get("uri", ""))
        if found is not None:
            for item in found[1]:
                if item.key == data.get("key"):
                    hint.tooltip = types.MarkupContent(kind=types.MarkupKind.Markdown, value=self._tooltip(item))
                    break
        return hint

    def _tooltip(self, item: Placed) -> str:
        return hover_markdown(item.reports[0], self.report_settings())

    def at(self, uri: str, line: int, character: int, signature_only: bool) -> tuple[DocumentModel, Placed] | None:
        found = self.placed(uri)
        if found is None:
            return None
        model, placed = found
        col = model.index.character_to_byte_col(line, character, self.encoding)
        best = None
        for item in placed:
            if signature_only:
                inside = (item.start_row, 0) <= (line, col) <= (item.hint_row, item.hint_col)
            else:
                inside = item.start_row <= line <= item.end_row
            if inside and (best is None or best.end_row - best.start_row > item.end_row - item.start_row):
                best = item
        return (model, best) if best is not None else None

    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        if uri in self.docs:
            self._cursor_rows[uri] = position.line
        found = self.at(uri, position.line, position.character, signature_only=False)  # anywhere in the function
        if found is None:
            return None
        model, item = found
        return convert.lsp_hover(model.index, item, self.explain(item), self.encoding)

    def explain(self, item: Placed) -> str:
        settings = self.report_settings()
        return "\n\n---\n\n".join(hover_markdown(r, settings) for r in item.reports)

    def code_lenses(self, uri: str) -> list[types.CodeLens]:
        if not self.settings.code_lens_enabled:
            return []
        found = self.placed(uri)
        if found is None:
            return []
        model, placed = found
        shown = self._hint_filter(placed)
        return [convert.lsp_code_lens(model.index, item, hint_label(item.reports[0], self.settings.hints_format),
                                      uri, self.encoding) for item in placed if shown(item.reports[0])]

    # -- commands ----------------------------------------------------------------------------

    def set_layer_value(self, key: str, value: Any) -> str:
        """ccls.setProfile / ccls.setRegion: a session-wide override above every other source."""
        known = self._known(key)
        if not isinstance(value, str) or (known is not None and value.upper() not in {k.upper() for k in known}):
            raise ValueError(f"unknown {key} {value!r}; known: {', '.join(sorted(known or ()))}")
        self.layers["command"][key] = value
        self.reload_settings()
        return getattr(self.settings, key)

    def _known(self, key: str) -> tuple[str, ...] | None:
        tables = self.tables
        if key == "profile":
            return tuple(tables.profiles) + tuple(n for n, _ in self.settings.custom_profiles)
        if key == "region":
            return tuple(tables.regions)
        return None

    def function_at(self, uri: str, position: Any) -> Placed | None:
        line, character = _position_args(position)
        found = self.at(uri, line, character, signature_only=False)
        return found[1] if found else None

    def stats_json(self) -> dict:
        analyzer = self.analyzer
        cache = self.service.cache if self.service is not None else None
        memo = self.service.memo if self.service is not None else None
        return {
            "compiles": analyzer.compiles if analyzer else 0,
            "functionsCompiled": analyzer.functions_compiled if analyzer else 0,
            "cacheHits": cache.hits if cache else 0,
            "cacheMisses": cache.misses if cache else 0,
            "cacheWrites": cache.writes if cache else 0,
            "cachePath": cache.path if cache else None,
            "analyses": self.stats.analyses,
            "published": self.stats.published,
            "staleDropped": self.stats.stale_dropped,
            "superseded": self.stats.superseded,
            "reports": memo.reports if memo else 0,
            "cohortSize": memo.cohort_size if memo else 0,
            "debounceMs": round(self.scheduler.debounce_s() * 1000, 1),
            "positionEncoding": self.encoding,
            "settings": {"profile": self.settings.profile, "region": self.settings.region,
                         "scoring": self.settings.scoring},
            "documents": self.stats.last,
            "workspace": self.workspace.stats() if self.workspace is not None else None,
            "background": self.background.stats(),
            "rssMB": _rss_mb(),
        }


class _PassProgress:
    """`$/progress` for the batches after a pass's first (begun only when there are some)."""

    def __init__(self, progress: Any, name: str):
        self._progress = progress
        self._name = name
        self._token: str | None = None
        self._tried = False

    async def report(self, done: int, total: int) -> None:
        progress = self._progress
        if progress is None:
            return
        if not self._tried:
            self._tried = True
            token = f"ccls-file-{uuid.uuid4().hex[:8]}"
            try:
                await progress.create_async(token)
                progress.begin(token, types.WorkDoneProgressBegin(
                    title=f"ccls: analysing {self._name}", percentage=int(100 * done / max(1, total))))
                self._token = token
            except Exception as exc:  # the client refused a progress token: work without one
                log.info("no progress token: %s", exc)
            return
        if self._token is not None:
            progress.report(self._token, types.WorkDoneProgressReport(
                message=f"{done}/{total} functions", percentage=int(100 * done / max(1, total))))

    def end(self) -> None:
        if self._token is not None:
            self._progress.end(self._token, types.WorkDoneProgressEnd(message="done"))
            self._token = None


def _merged(outcome: Outcome, batches: list[BatchCounts], pending: set[int]) -> Outcome:
    """A pass's outcome so far: `outcome` and what worker batches counted since, `pending` left."""
    by_identity = {unit.identity: unit for unit in outcome.units}
    errors = list(outcome.errors)
    merged = dataclasses.replace(outcome, pending=sorted(pending), compiled_functions=list(outcome.compiled_functions))
    for batch in batches:
        by_identity.update((unit.identity, unit) for unit in batch.units)
        # Each batch's compile reports the errors of the bodies it kept: once each.
        errors += [error for error in batch.errors if error not in errors]
        merged.compiles += batch.compiles
        merged.compiled_functions += batch.compiled_functions
        merged.cached_functions += batch.cached_functions
        merged.reduced = merged.reduced and batch.reduced
        merged.fallback = merged.fallback or batch.fallback
        merged.duration_s += batch.duration_s
    merged.units = sorted(by_identity.values(), key=lambda unit: unit.identity[-1])  # by first line
    merged.errors = errors
    return merged


def _doc_result(outcome: Outcome, reports: UnitReports) -> DocResult:
    return DocResult(outcome.snapshot.version, outcome, reports, outcome.snapshot.functions is None, outcome.errors)


def _section(raw: Any) -> dict:
    section = unwrap_section(plain_json(raw))
    return dict(section) if section else {}


def plain_json(value: Any) -> Any:
    """pygls hands unknown JSON objects over as namedtuples; turn them back into dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain_json(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value


def _position_args(position: Any) -> tuple[int, int]:
    position = plain_json(position)
    if isinstance(position, dict):
        return int(position.get("line", 0)), int(position.get("character", 0))
    if isinstance(position, (list, tuple)) and len(position) == 2:
        return int(position[0]), int(position[1])
    raise ValueError("expected a position {line, character}")


def _uri_to_path(uri: str) -> str | None:
    try:
        path = to_fs_path(uri)
    except Exception:
        return None
    return os.path.abspath(path) if path else None


def _rss_mb() -> float | None:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None
