"""The workspace beyond open documents: a watchdog observer that invalidates what external
changes (git checkout, a regenerated compile database, edited headers, the project file)
affect, and a cancellable background pass that counts every source file for workspace-wide
cohort scoring. The pass runs on the worker processes (`ccls.service.background`), one file
per worker at a time, files near the open ones (their directories, the headers they include)
first; the open files' own work comes before any of them.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from lsprotocol import types
from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from ccls.frontends import handles, included_suffixes
from ccls.lsp.scheduler import BACKGROUND, WorkerPool
from ccls.lsp.settings import PROJECT_FILE, Settings
from ccls.lsp.workspace_worker import count_file
from ccls.service import units
from ccls.service.analysis import AnalysisService
from ccls.service.background import NEAR_FILE, OTHER_FILE, BackgroundWork, release_freed_memory
from ccls.service.counts import size_values
from ccls.service.reports import Cohort, CohortMember

log = logging.getLogger(__name__)

FLAG_FILES = ("compile_commands.json", "compile_flags.txt")
HEADER_SUFFIXES = included_suffixes()
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                       ".mypy_cache", ".pytest_cache", ".cache"})
_EVENT_SETTLE_S = 0.3
STALE_SIZES_S = 30.0  # how old a size inference the background pass may use
RECHECK_DELAY_S = 2.0  # open documents are re-checked against new call sites this long after a file is learned


@dataclass(frozen=True)
class WorkspaceEvents:
    """What the workspace tells the session (it holds no reference to it)."""

    show: Callable[[str], None]  # a visible message
    project_file_changed: Callable[[], None]
    flags_or_headers_changed: Callable[[], None]  # open documents' keys may have changed
    sizes_changed: Callable[[float], None]  # call sites changed: re-check open documents after a delay
    pass_done: Callable[[], None]  # a background pass finished (cohort members changed)


class WorkspaceIndex:
    def __init__(self, service: AnalysisService, pool: WorkerPool, background: BackgroundWork, folders: list[str],
                 settings: Callable[[], Settings], open_paths: Callable[[], set[str]],
                 near_open: Callable[[], tuple[set[str], set[str]]], events: WorkspaceEvents, progress: Any = None):
        self.service = service
        self.pool = pool
        self.background = background
        self.folders = folders
        self._settings = settings
        self._open_paths = open_paths
        self._near_open = near_open  # (directories, headers) of the open documents
        self.events = events
        self._progress = progress  # pygls work-done progress where the client supports it
        self.functions: dict[str, list[CohortMember]] = {}  # path -> what cohort scoring needs
        self.generation = 0  # bumps whenever `functions` changes
        self.files_done = 0
        self.passes = 0
        self.cancelled = False
        self.running = False
        self._observer: Any = None
        self._pending_events: set[str] = set()
        self._event_timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task | None = None
        self._queue: list[str] = []
        self._queued: set[str] = set()
        self._submitted: dict[str, Future] = {}  # files handed to the workers, not yet back
        self._loop: asyncio.AbstractEventLoop | None = None
        self._resized: set[str] = set()  # files re-queued once to count at their own calls' sizes

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._start_observer()
        if self._settings().background_analysis:
            self.request_pass()

    def stop(self) -> None:
        if self._observer is not None:
            try:
                self._observer.stop()
            except Exception:  # the observer thread may already be gone
                pass
            self._observer = None
        if self._task is not None:
            self._task.cancel()

    def _start_observer(self) -> None:
        index = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write") or event.is_directory:
                    return
                for path in (getattr(event, "src_path", None), getattr(event, "dest_path", None)):
                    if path:
                        index._from_thread(os.fsdecode(path))

        observer = Observer()
        observer.daemon = True
        for folder in self.folders:
            if os.path.isdir(folder):
                try:
                    observer.schedule(Handler(), folder, recursive=True)
                except OSError as exc:  # e.g. inotify watch limit reached
                    self.events.show(f"cannot watch {folder} for changes ({exc})")
        try:
            observer.start()
        except OSError as exc:
            self.events.show(f"cannot watch the workspace for changes ({exc})")
            return
        self._observer = observer

    # -- file events -------------------------------------------------------------------------

    def _from_thread(self, path: str) -> None:
        if not _interesting(path) or self._ignored(path):
            return
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._note_event, path)

    def _ignored(self, path: str) -> bool:
        cache_dir = self.service.cache.directory
        if cache_dir and os.path.abspath(path).startswith(os.path.abspath(cache_dir) + os.sep):
            return True
        return any(part in SKIP_DIRS for part in path.split(os.sep))

    def _note_event(self, path: str) -> None:
        self._pending_events.add(path)
        if self._event_timer is not None:
            self._event_timer.cancel()
        self._event_timer = asyncio.get_running_loop().call_later(_EVENT_SETTLE_S, self._settle)

    def _settle(self) -> None:
        """Apply a burst of changes (a checkout touches many files) at once."""
        self._event_timer = None
        paths, self._pending_events = self._pending_events, set()
        names = {os.path.basename(p) for p in paths}
        if PROJECT_FILE in names:
            self.events.project_file_changed()
        open_paths = self._open_paths()
        for path in paths:
            self.service.analyzer.forget_header(path)
        if names & set(FLAG_FILES) or any(p.endswith(HEADER_SUFFIXES) for p in paths):
            # Flags or a header changed: the keys of open documents may have changed. Keys that
            # did not change hit the cache, so this compiles only what is really affected.
            self.events.flags_or_headers_changed()
            if names & set(FLAG_FILES):
                self.request_pass()
        for path in paths:
            if path in open_paths or not handles(path):
                continue
            if not os.path.exists(path):
                self._set_functions(path, None)
                self.service.program_sizes.forget(path)
            elif self._settings().background_analysis:
                self._enqueue(path)

    def note_saved(self, path: str) -> None:
        if self._settings().background_analysis:
            self._enqueue(path)

    # -- background pass ---------------------------------------------------------------------

    def request_pass(self) -> None:
        """Queue every source file of the workspace; the directory walk runs off the loop."""
        self._resized.clear()
        future = self.pool.submit(self._discover, BACKGROUND)
        loop = asyncio.get_running_loop()

        def queued(done: Any) -> None:
            if not done.cancelled() and done.exception() is None:
                loop.call_soon_threadsafe(self._enqueue_all, done.result())
        future.add_done_callback(queued)

    def _enqueue_all(self, paths: list[str]) -> None:
        for path in paths:
            self._enqueue(path)

    def _enqueue(self, path: str) -> None:
        if path not in self._queued:
            self._queue.append(path)
            self._queued.add(path)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def _discover(self) -> list[str]:
        found = []
        for folder in self.folders:
            for root, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                for name in sorted(files):
                    path = os.path.join(root, name)
                    if handles(path) and not self._ignored(path):
                        found.append(path)
        return found

    async def _run(self) -> None:
        self.running, self.cancelled = True, False
        self.passes += 1
        token = None
        progress = self._progress
        if progress is not None:
            token = f"ccls-workspace-{uuid.uuid4().hex[:8]}"
            try:
                await progress.create_async(token)
                progress.begin(token, types.WorkDoneProgressBegin(
                    title="ccls: analysing workspace", cancellable=True, percentage=0))
            except Exception as exc:  # the client refused a progress token: work without one
                log.info("no progress token: %s", exc)
                token = None
        total_hint = len(self._queue)
        done = 0
        last_report = 0.0
        in_flight: set[asyncio.Task] = set()
        try:
            while self._queue or in_flight:
                if token is not None and progress.tokens.get(token) is not None and progress.tokens[token].cancelled():
                    self.cancelled = True
                    self._queue.clear()
                    self._queued.clear()
                    break
                # One file per worker: what is left stays here, to be ordered when a worker frees.
                while self._queue and len(in_flight) < self.background.workers:
                    path, priority = self._next()
                    in_flight.add(asyncio.get_running_loop().create_task(self._analyse_file(path, priority)))
                finished, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                done += len(finished)
                total_hint = max(total_hint, done + len(self._queue) + len(in_flight))
                if token is not None and time.monotonic() - last_report > 0.2:
                    last_report = time.monotonic()
                    progress.report(token, types.WorkDoneProgressReport(
                        message=f"{done}/{total_hint} files", percentage=int(100 * done / max(1, total_hint))))
        finally:
            for task in in_flight:
                task.cancel()
            self.running = False
            if token is not None:
                progress.end(token, types.WorkDoneProgressEnd(
                    message="cancelled" if self.cancelled else f"{done} files analysed"))
        release_freed_memory()
        if done:
            self.events.pass_done()

    def _next(self) -> tuple[str, int]:
        """The next file to count, and its priority: one near an open file, else the first queued."""
        directories, headers = self._near_open()
        at = next((i for i, path in enumerate(self._queue) if is_near(path, directories, headers)), None)
        path = self._queue.pop(0 if at is None else at)
        self._queued.discard(path)
        return path, OTHER_FILE if at is None else NEAR_FILE

    async def _analyse_file(self, path: str, priority: int) -> None:
        if path in self._open_paths():
            return  # open documents are analysed in the foreground
        service = self.service
        options = self._settings().analysis_options()
        program_sizes = service.program_sizes
        refresh = path in self._resized
        try:
            # Sizes inferred up to half a minute ago will do (the keys hold the values used), but
            # for a file re-queued because its own calls pass sizes. Inference covers the whole
            # workspace: on a thread, not on the loop.
            sizes = await asyncio.wrap_future(self.pool.submit(
                lambda: program_sizes.for_document(path, max_age_s=0.0 if refresh else STALE_SIZES_S), BACKGROUND))
            future = self._submitted[path] = self.background.submit(
                priority, service.tables.get(), count_file, path, options, sizes, service.cache.directory)
            done = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("background analysis of %s failed", path)
            return
        finally:
            self._submitted.pop(path, None)
        self._set_functions(path, done[0] if done is not None else None)
        self.files_done += 1
        if done is not None and program_sizes.learn(path, done[1]):
            self.events.sizes_changed(RECHECK_DELAY_S)
            own = program_sizes.own_sizes(path)
            used = dict(done[2])
            if not refresh and any(dict(size_values({name: params})).get(name) != used.get(name)
                                   for name, params in own.items()):
                self._resized.add(path)  # once: its own calls pass its functions sizes it was not counted at
                self._enqueue(path)

    def cohort_members(self, exclude_paths: set[str]) -> Cohort:
        """(path, members) of every analysed workspace file but `exclude_paths` (the open
        documents), with the generation they are of: taken on the event loop, costed on a
        worker by the service."""
        return Cohort(self.generation,
                      tuple((path, members) for path, members in self.functions.items() if path not in exclude_paths))

    def _set_functions(self, path: str, members: list[CohortMember] | None) -> None:
        if members is None:
            self.functions.pop(path, None)
        else:
            self.functions[path] = members
        self.service.peer_costs.forget(path)
        self.generation += 1

    def stats(self) -> dict:
        started = sum(1 for future in self._submitted.values() if future.running() or future.done())
        return {"files": len(self.functions), "functions": sum(len(f) for f in self.functions.values()),
                "filesAnalysed": self.files_done, "passes": self.passes, "running": self.running,
                "queued": len(self._queue), "cancelled": self.cancelled,
                # Files not yet on a worker: queued here, or handed over behind other work.
                "waiting": len(self._queue) + len(self._submitted) - started,
                "watching": self._observer is not None}


def near_open_files(documents: Iterable[tuple[str, bytes]]) -> tuple[set[str], set[str]]:
    """(the open files' directories, the headers they include by "name"), from each open
    document's (path, text): what the workspace pass counts first."""
    directories, headers = set(), set()
    for path, data in documents:
        directory = os.path.dirname(path)
        directories.add(directory)
        headers.update(os.path.normpath(os.path.join(directory, name))
                       for name, quoted in units.include_lines(data) if quoted)
    return directories, headers


def is_near(path: str, directories: set[str], headers: set[str]) -> bool:
    """Whether a workspace file is near the open ones: in one's directory, or a header one includes."""
    return path in headers or os.path.dirname(path) in directories


def _interesting(path: str) -> bool:
    name = os.path.basename(path)
    return name in FLAG_FILES or name == PROJECT_FILE or name.endswith(HEADER_SUFFIXES) \
        or handles(path)
