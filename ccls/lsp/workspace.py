"""The workspace beyond open documents: a watchdog observer that invalidates what external
changes (git checkout, a regenerated compile database, edited headers, the project file)
affect, and a cancellable background pass that counts every source file for workspace-wide
cohort scoring. Background jobs use the pool's low-priority lane, one file at a time, so they
never delay open documents.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
import logging
import os
import threading
import time
import uuid
from collections import deque
from typing import Any, NamedTuple

from lsprotocol import types

from ccls.engine import CohortPeer, evaluate_count, function_metrics
from ccls.lsp.incremental import DocumentModel, all_counted, language_for, size_values
from ccls.lsp.scheduler import BACKGROUND
from ccls.lsp.settings import PROJECT_FILE
from ccls.model import CountedFunction, MemoryOverlap
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial

log = logging.getLogger(__name__)

FLAG_FILES = ("compile_commands.json", "compile_flags.txt")
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox",
                       ".mypy_cache", ".pytest_cache", ".cache"})
MAX_FILE_BYTES = 2 * 1024 * 1024
_EVENT_SETTLE_S = 0.3
STALE_SIZES_S = 30.0  # how old a size inference the background pass may use
RECHECK_DELAY_S = 2.0  # open documents are re-checked against new call sites this long after a file is learned


class WorkspaceIndex:
    def __init__(self, session: Any):
        self.session = session
        self.functions: dict[str, list[CohortMember]] = {}  # path -> what cohort scoring needs
        self.generation = 0  # bumps whenever `functions` changes
        self._peers: dict[str, tuple] = {}  # path -> (members, tables, signature, CohortPeers)
        self._peers_lock = threading.Lock()
        self.files_done = 0
        self.passes = 0
        self.cancelled = False
        self.running = False
        self._observer: Any = None
        self._pending_events: set[str] = set()
        self._event_timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task | None = None
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._resized: set[str] = set()  # files re-queued once to count at their own calls' sizes

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._start_observer()
        if self.session.settings.background_analysis:
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
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            log.info("watchdog is not installed: external changes are not watched")
            return
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
        for folder in self.session.folders:
            if os.path.isdir(folder):
                try:
                    observer.schedule(Handler(), folder, recursive=True)
                except OSError as exc:  # e.g. inotify watch limit reached
                    self.session.show(f"cannot watch {folder} for changes ({exc})")
        try:
            observer.start()
        except OSError as exc:
            self.session.show(f"cannot watch the workspace for changes ({exc})")
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
        cache = self.session.cache
        cache_dir = cache.directory if cache is not None else None
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
            self.session.project_file_changed()
        open_paths = {m.path for m in self.session.docs.values()}
        analyzer = self.session.analyzer
        for path in paths:
            if analyzer is not None:
                analyzer.forget_header(path)
        if names & set(FLAG_FILES) or any(p.endswith(HEADER_SUFFIXES) for p in paths):
            # Flags or a header changed: the keys of open documents may have changed. Keys that
            # did not change hit the cache, so this compiles only what is really affected.
            self.session.reanalyse_all()
            if names & set(FLAG_FILES):
                self.request_pass()
        for path in paths:
            if path in open_paths or language_for(path) is None:
                continue
            if not os.path.exists(path):
                self._set_functions(path, None)
                self.session.program_sizes.forget(path)
            elif self.session.settings.background_analysis:
                self._enqueue(path)

    def note_saved(self, path: str) -> None:
        if self.session.settings.background_analysis:
            self._enqueue(path)

    # -- background pass ---------------------------------------------------------------------

    def request_pass(self) -> None:
        """Queue every source file of the workspace; the directory walk runs off the loop."""
        self._resized.clear()
        future = self.session.pool.submit(self._discover, BACKGROUND)
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
        for folder in self.session.folders:
            for root, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
                for name in sorted(files):
                    path = os.path.join(root, name)
                    if language_for(path) is not None and not self._ignored(path):
                        found.append(path)
        return found

    async def _run(self) -> None:
        self.running, self.cancelled = True, False
        self.passes += 1
        token = None
        progress = self.session.server.work_done_progress
        if self.session.supports_progress:
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
        try:
            while self._queue:
                if token is not None and progress.tokens.get(token) is not None and progress.tokens[token].cancelled():
                    self.cancelled = True
                    self._queue.clear()
                    self._queued.clear()
                    break
                path = self._queue.popleft()
                self._queued.discard(path)
                await self._analyse_file(path)
                done += 1
                total_hint = max(total_hint, done + len(self._queue))
                if token is not None and time.monotonic() - last_report > 0.2:
                    last_report = time.monotonic()
                    progress.report(token, types.WorkDoneProgressReport(
                        message=f"{done}/{total_hint} files", percentage=int(100 * done / max(1, total_hint))))
        finally:
            self.running = False
            if token is not None:
                progress.end(token, types.WorkDoneProgressEnd(
                    message="cancelled" if self.cancelled else f"{done} files analysed"))
        release_freed_memory()
        if self.session.settings.scoring == "cohort" and done:
            self.session.refresh_reports()

    async def _analyse_file(self, path: str) -> None:
        if path in {m.path for m in self.session.docs.values()}:
            return  # open documents are analysed in the foreground
        analyzer = self.session.analyzer
        settings = self.session.settings
        if analyzer is None:
            return

        program_sizes = self.session.program_sizes
        refresh = path in self._resized

        def work() -> tuple[list[CohortMember], list[CountedFunction], tuple] | None:
            language = language_for(path)
            try:
                if language is None or os.path.getsize(path) > MAX_FILE_BYTES:
                    return None
                with open(path, "rb") as handle:
                    raw = handle.read()
            except OSError:
                return None  # deleted or unreadable meanwhile
            # surrogateescape: undecodable bytes reach the compiler unchanged.
            model = DocumentModel("file://" + path, path, language, raw.decode("utf-8", "surrogateescape"), 0)
            options = settings.analysis_options()
            # Sizes inferred up to half a minute ago will do (the keys hold the values used),
            # but for a file re-queued because its own calls pass sizes.
            sizes = program_sizes.for_document(path, max_age_s=0.0 if refresh else STALE_SIZES_S)
            outcome = analyzer.analyse(model.snapshot(), options, remember=False, sizes=sizes)
            counted = all_counted(outcome)
            members = [CohortMember.of(cf, options) for cf in counted]
            del outcome, model
            release_freed_memory()  # a file's compile leaves megabytes glibc would otherwise keep
            return members, counted, size_values(sizes)
        try:
            done = await asyncio.wrap_future(self.session.pool.submit(work, BACKGROUND))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("background analysis of %s failed", path)
            return
        self._set_functions(path, done[0] if done is not None else None)
        self.files_done += 1
        if done is not None and self.session.program_sizes.learn(path, done[1]):
            self.session.recheck_sizes(delay_s=RECHECK_DELAY_S)
            own = self.session.program_sizes.own_sizes(path)
            used = dict(done[2])
            if not refresh and any(dict(size_values({name: params})).get(name) != used.get(name)
                                   for name, params in own.items()):
                self._resized.add(path)  # once: its own calls pass its functions sizes it was not counted at
                self._enqueue(path)

    def cohort_members(self, exclude: set[str]) -> Cohort:
        """(path, members) of every analysed workspace file but the documents `exclude` names,
        with the generation they are of: taken on the event loop, costed on a worker by `peers`."""
        skip = {self.session.docs[u].path for u in exclude if u in self.session.docs}
        return Cohort(self.generation,
                      tuple((path, members) for path, members in self.functions.items() if path not in skip))

    def peers(self, cohort: Cohort, tables: Any, settings: Any, options: AnalysisOptions) -> list[CohortPeer]:
        """The cohort's functions with their metrics, costed once per file and setting."""
        signature = (settings.region, options)
        out: list[CohortPeer] = []
        for path, members in cohort.files:
            with self._peers_lock:
                memo = self._peers.get(path)
            if memo is None or memo[0] is not members or memo[1] is not tables or memo[2] != signature:
                costed = [CohortPeer(m.name, m.display_name, function_metrics(m.counted(), tables, settings, options))
                          for m in members]
                memo = (members, tables, signature, costed)
                with self._peers_lock:
                    self._peers[path] = memo
            out.extend(memo[3])
        return out

    def _set_functions(self, path: str, members: list[CohortMember] | None) -> None:
        if members is None:
            self.functions.pop(path, None)
        else:
            self.functions[path] = members
        with self._peers_lock:
            self._peers.pop(path, None)
        self.generation += 1

    def stats(self) -> dict:
        return {"files": len(self.functions), "functions": sum(len(f) for f in self.functions.values()),
                "filesAnalysed": self.files_done, "passes": self.passes, "running": self.running,
                "queued": len(self._queue), "cancelled": self.cancelled,
                "watching": self._observer is not None}


class Cohort(NamedTuple):
    """The workspace's functions as cohort scoring saw them at one generation."""

    generation: int
    files: tuple[tuple[str, list[CohortMember]], ...]  # (path, members)


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


def release_freed_memory() -> None:
    """Hand memory freed by a pass over many files back to the OS (glibc keeps it otherwise)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc


def _interesting(path: str) -> bool:
    name = os.path.basename(path)
    return name in FLAG_FILES or name == PROJECT_FILE or name.endswith(HEADER_SUFFIXES) \
        or language_for(path) is not None
