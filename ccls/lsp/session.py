"""The server's state and its one-way flow: documents → the analysis service (on the worker
pool) → reports → what is published. `server.py` handlers call into a `Session`; everything
here runs on the event loop except the functions handed to the worker pool.

The session schedules and publishes; its helpers have a module each: what clients send
(`params`) and can do (`capabilities`), settings and their sources (`settings`), the rows on
screen (`screens`), where reported functions are in the current text (`placement`), protocol
objects (`convert`), a pass's progress (`progress`) and the server's counters (`stats`).
"""
from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any, Callable

from lsprotocol import types

from ccls import toolchain
from ccls.cache import default_cache_dir
from ccls.engine import ReportSettings, check_settings
from ccls.lsp import convert, placement
from ccls.lsp.capabilities import ClientFeatures
from ccls.lsp.convert import Placed
from ccls.lsp.documents import DocumentModel
from ccls.lsp.params import position_args, settings_section, uri_to_path
from ccls.lsp.positions import UTF16
from ccls.lsp.progress import PassProgress
from ccls.lsp.scheduler import BACKGROUND, FOREGROUND, DocumentScheduler, WorkerPool
from ccls.lsp.screens import Screens
from ccls.lsp.settings import Settings, known_names, merge, parse_against_tables, read_project_files
from ccls.lsp.stats import Stats, pass_figures, stats_json
from ccls.lsp.workspace import WorkspaceEvents, WorkspaceIndex, near_open_files
from ccls.render import hint_filter, hint_label, hover_markdown
from ccls.service import viewport
from ccls.service.analysis import AnalysisService
from ccls.service.background import OPEN_FILE, BackgroundWork, count_functions, merge_batches
from ccls.service.counts import Cancelled, Outcome, all_counted, language_for, size_values
from ccls.service.program_sizes import DocumentSizes
from ccls.service.reports import Cohort, UnitReports
from ccls.service.tables import TableStore, calibrated_table

log = logging.getLogger(__name__)
# Re-parse once typing pauses this long: well inside the shortest debounce (50 ms), and not once
# per keystroke (a large file's re-parse and call graph take tens of ms on the event loop).
PARSE_AHEAD_S = 0.02
# Loaded once in the worker processes' fork server: the C family's front end, readers, counting.
WORKER_MODULES = ("ccls.service.background", "ccls.lsp.workspace_worker", "ccls.frontends.c_family")


class Session:
    def __init__(self, server: Any):
        self.server = server
        self.docs: dict[str, DocumentModel] = {}
        self.results: dict[str, placement.DocResult] = {}
        self.layers: dict[str, dict] = {"project": {}, "init": {}, "client": {}, "command": {}}
        self.settings = Settings()
        self.encoding = UTF16
        self.folders: list[str] = []
        self.client = ClientFeatures()  # what the client can do: set at initialize
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
        self.screens = Screens()  # what the user sees of each document: counted first

    # -- lifecycle ---------------------------------------------------------------------------

    def initialize(self, params: types.InitializeParams, encoding: str) -> None:
        self.client = ClientFeatures(params.capabilities)
        self.encoding = str(getattr(encoding, "value", encoding) or UTF16)
        folders = [f.uri for f in (params.workspace_folders or [])]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        self.folders = [p for p in (uri_to_path(u) for u in folders) if p]
        self.layers["init"] = settings_section(params.initialization_options)
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
        settings, messages = parse_against_tables(raw, tables)
        for message in messages if not quiet else ():
            self.show(message)
        old, self.settings = self.settings, settings
        host_table, missing = calibrated_table(settings.analysis_options().arch, settings.cache_directory)
        if missing and not quiet:
            self.show(missing)
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

    async def pull_configuration(self) -> None:
        if not self.client.configuration:
            return
        try:
            result = await self.server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="ccls")]))
        except Exception as exc:  # a client that fails the request keeps the other layers
            log.info("workspace/configuration failed: %s", exc)
            return
        self.layers["client"] = settings_section(result[0] if result else None)
        self.reload_settings()

    async def configuration_changed(self, settings: Any) -> None:
        """didChangeConfiguration: pull-model clients send null settings; push-model send them."""
        if self.client.configuration:
            await self.pull_configuration()
            return
        self.layers["client"] = settings_section(settings)
        self.reload_settings()

    def project_file_changed(self) -> None:
        self.layers["project"] = self._read_project_files()
        self.reload_settings()

    def _read_project_files(self) -> dict:
        values, messages = read_project_files(self.folders)
        for message in messages:
            self.show(message)
        return values

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
    def program_sizes(self) -> Any:
        return self.service.program_sizes if self.service is not None else None

    def _report_settings(self, settings: Settings) -> Any:
        """The settings' profile/region, or DEFAULT/WORLD (with a message) when the tables lack them."""
        chosen = settings.report_settings()
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
        return self.settings.report_settings()

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
        path = uri_to_path(uri)
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
            self.screens.saw_cursor(uri, changes[-1].range.start.line)
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
        self.screens.forget(uri)
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
            progress = self.server.work_done_progress if self.client.progress else None
            self.workspace = WorkspaceIndex(self.service, self.pool, self.background, self.folders,
                                            lambda: self.settings, self._open_paths, self._near_open, events, progress)
            self.workspace.start()

    def _workspace_pass_done(self) -> None:
        if self.settings.scoring == "cohort":
            self.refresh_reports()

    def _open_paths(self) -> set[str]:
        return {model.path for model in self.docs.values()}

    def _near_open(self) -> tuple[set[str], set[str]]:
        """What the workspace pass counts first (`near_open_files`)."""
        return near_open_files((model.path, model.data) for model in self.docs.values())

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
        if previous is None and snapshot.functions is not None and not self.screens.has_range(uri) \
                and self._hints_on_screen:
            await self.screens.wait_for_range(uri)  # the client's first inlayHint request says what is visible

        prior = previous.outcome if previous is not None else None
        progress = PassProgress(self.server.work_done_progress if self.client.progress else None,
                                os.path.basename(model.path))
        try:
            screen = self.screens.rows(uri)
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
        self.stats.last[uri] = pass_figures(snapshot.version, outcome)
        if not self.scheduler.is_current(uri, generation) or self.docs.get(uri) is not model \
                or model.version != snapshot.version:
            self.stats.stale_dropped += 1
            return False
        self.results[uri] = placement.doc_result(outcome, reports)
        self._sizes_used[uri] = size_values(sizes)
        self.publish(uri)
        self.refresh_clients()
        return True

    async def _count_rest(self, uri: str, generation: int, model: DocumentModel, snapshot: Any, settings: Settings,
                          cohort: Cohort | None, outcome: Outcome, sizes: DocumentSizes, screen_used: tuple[int, int],
                          progress: PassProgress) -> Outcome | None:
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
                    screen = self.screens.rows(uri)
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
                outcome = merge_batches(outcome, batches, pending)
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

    @property
    def _hints_on_screen(self) -> bool:
        return self.settings.hints_enabled and self.client.inlay_hints

    # -- re-analysis and re-costing ----------------------------------------------------------

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

    def _rereported(self, uri: str, result: placement.DocResult, future: Any) -> None:
        if future.cancelled() or future.exception() is not None or self.results.get(uri) is not result:
            if not future.cancelled() and future.exception() is not None:
                log.error("re-costing %s failed: %s", uri, future.exception())
            return
        self.results[uri] = placement.doc_result(result.outcome, future.result())
        self.publish(uri)
        self.refresh_clients()

    def refresh_clients(self) -> None:
        if self.client.hint_refresh:
            self.server.workspace_inlay_hint_refresh(None)
        if self.settings.code_lens_enabled and self.client.lens_refresh:
            self.server.workspace_code_lens_refresh(None)

    # -- views -------------------------------------------------------------------------------

    def placed(self, uri: str) -> tuple[DocumentModel, list[Placed]] | None:
        """The current functions of a document that have reports, positioned in its current text."""
        model, result = self.docs.get(uri), self.results.get(uri)
        if model is None or result is None:
            return None
        return model, placement.placed(model, result)

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
            self.screens.saw_range(uri, rng.start.line, rng.end.line)  # what to count first
        if not self.settings.hints_enabled:
            return []
        found = self.placed(uri)
        if found is None:
            return []
        model, placed = found
        hints = []
        resolve = self.client.resolves_tooltips
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
        best = placement.innermost_at(placed, line, col, signature_only)
        return (model, best) if best is not None else None

    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        if uri in self.docs:
            self.screens.saw_cursor(uri, position.line)
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
        known = known_names(key, self.tables, self.settings)
        if not isinstance(value, str) or (known is not None and value.upper() not in {k.upper() for k in known}):
            raise ValueError(f"unknown {key} {value!r}; known: {', '.join(sorted(known or ()))}")
        self.layers["command"][key] = value
        self.reload_settings()
        return getattr(self.settings, key)

    def function_at(self, uri: str, position: Any) -> Placed | None:
        line, character = position_args(position)
        found = self.at(uri, line, character, signature_only=False)
        return found[1] if found else None

    def stats_json(self) -> dict:
        return stats_json(self.stats, self.service, self.scheduler.debounce_s(), self.encoding, self.settings,
                          self.workspace, self.background)
