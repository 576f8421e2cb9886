"""The language server's background work on worker processes: the workspace pass and the
functions of open files after their first screen, on as many processes as the machine has
cores, so that the event loop and the foreground (an edit, a file's first screen) stay free.

The processes come from `ccls.service.batch.process_pool`, as `ccls analyze --jobs`'s do, but
through a fork server: the server runs threads, and a forked copy of a threaded process can
inherit a lock another thread held. Each worker counts with its own `Analyzer` on the server's
count cache directory (sqlite in WAL mode serves several processes), so its counts are the
server's cache entries; it runs at a lower CPU priority than the server and is replaced after
`MAX_TASKS_PER_WORKER` tasks (memory glibc and LLVM keep after a large file stays with the old
process). When nothing is left to do for `IDLE_S`, the workers exit; the next task starts them.

Tasks are taken by priority (open files, then files near them, then the rest) and at most one
per worker is handed to the pool, so a task submitted later with a higher priority runs next.
A worker told to stop, or whose server is gone (killed, its client dead), cancels the compiler
it runs and exits: no orphans.
`merge_batches` folds what the workers counted for an open file into its pass's outcome.
"""
from __future__ import annotations

import ctypes
import heapq
import itertools
import logging
import multiprocessing
import os
import select
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from ccls.cache import CountCache
from ccls.model import AnalysisError
from ccls.options import AnalysisOptions
from ccls.service.batch import default_jobs, process_pool, worker_tables
from ccls.service.counts import Analyzer, Outcome, Snapshot, Unit
from ccls.service.program_sizes import DocumentSizes
from ccls.service.tables import TableStore
from ccls.table_types import Tables

log = logging.getLogger(__name__)

OPEN_FILE, NEAR_FILE, OTHER_FILE = 0, 1, 2  # task priorities: the lowest runs first
START_METHOD = "forkserver"
MAX_TASKS_PER_WORKER = 20
IDLE_S = 5.0  # workers with nothing to do exit after this long
STOP_WAIT_S = 3.0  # how long shutdown waits for a worker to cancel its compile and exit
WORKER_NICENESS = 5  # the server's own work (an edit, a first screen) comes before the background's


class BackgroundWork:
    """Runs `fn(*args)` (a module-level function, picklable arguments) on worker processes, the
    lowest priority first, at most `workers` at a time. Thread-safe."""

    def __init__(self, workers: int | None = None, preload: Sequence[str] = ()):
        self.workers = max(1, workers or default_jobs())
        if preload and START_METHOD in multiprocessing.get_all_start_methods():
            # Imported once in the fork server: each worker starts with them loaded.
            multiprocessing.get_context(START_METHOD).set_forkserver_preload(list(preload))
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)  # a task queued, or a worker freed
        self._dispatcher: threading.Thread | None = None
        self._queue: list[tuple[int, int, Future, Tables, Callable, tuple]] = []
        self._seq = itertools.count()
        self._running = 0
        self._pool: ProcessPoolExecutor | None = None
        self._pool_tables: Tables | None = None
        self._idle_timer: threading.Timer | None = None
        self._stopped = False
        self.tasks_done = 0
        self.worker_pids: set[int] = set()  # the processes that ran a task

    def submit(self, priority: int, tables: Tables, fn: Callable, *args: Any) -> Future:
        future: Future = Future()
        with self._lock:
            if self._stopped:
                future.cancel()
                return future
            heapq.heappush(self._queue, (priority, next(self._seq), future, tables, fn, args))
            if self._idle_timer is not None:
                self._idle_timer.cancel()
                self._idle_timer = None
            if self._dispatcher is None:
                self._dispatcher = threading.Thread(target=self._dispatch, name="ccls-background", daemon=True)
                self._dispatcher.start()
            self._wake.notify()
        return future

    def waiting(self) -> int:
        """Tasks not yet handed to a worker."""
        with self._lock:
            return sum(1 for entry in self._queue if not entry[2].cancelled())

    def processes(self) -> list[int]:
        """The worker processes' ids (the pool forgets one that has exited)."""
        with self._lock:
            return sorted(_processes(self._pool))

    def stats(self) -> dict:
        waiting, processes = self.waiting(), self.processes()
        with self._lock:
            return {"workers": self.workers, "waiting": waiting, "running": self._running,
                    "tasksDone": self.tasks_done, "processes": processes, "workerPids": sorted(self.worker_pids)}

    def shutdown(self) -> None:
        """Cancel what waits, stop the workers (cancelling their compiles), and wait for them."""
        with self._lock:
            self._stopped = True
            self._wake.notify_all()
            for entry in self._queue:
                entry[2].cancel()
            self._queue.clear()
            if self._idle_timer is not None:
                self._idle_timer.cancel()
            pool, self._pool = self._pool, None
        if pool is not None:
            _stop(pool)

    # -- the dispatching thread and the pool's callbacks -----------------------------------

    def _dispatch(self) -> None:
        """Hand waiting tasks to the pool, on this thread: starting a worker process waits for
        the fork server (its imports, the first time), which the event loop must not."""
        while True:
            with self._lock:
                while not self._stopped and not (self._queue and self._running < self.workers):
                    self._wake.wait()
                if self._stopped:
                    return
                _, _, future, tables, fn, args = heapq.heappop(self._queue)
                if not future.set_running_or_notify_cancel():
                    continue
                self._running += 1
                pool = self._pool_for(tables)
            try:
                inner = pool.submit(_task, fn, args)
            except Exception as exc:  # noqa: BLE001 - no worker could start: the task's error, not a dead dispatcher
                with self._lock:
                    self._running -= 1
                    if self._pool is pool:
                        self._pool = None
                future.set_exception(exc)
                continue
            inner.add_done_callback(lambda done, outer=future, used=pool: self._finished(outer, done, used))

    def _pool_for(self, tables: Tables) -> ProcessPoolExecutor:
        if self._pool is not None and tables is not self._pool_tables:
            self._pool.shutdown(wait=False)  # its running tasks finish; new ones count with these tables
            self._pool = None
        if self._pool is None:
            self._pool = process_pool(self.workers, tables, START_METHOD, MAX_TASKS_PER_WORKER,
                                      _start_worker, (os.getpid(), WORKER_NICENESS))
            self._pool_tables = tables
        return self._pool

    def _finished(self, outer: Future, inner: Future, pool: ProcessPoolExecutor) -> None:
        error = inner.exception() if not inner.cancelled() else RuntimeError("cancelled")
        with self._lock:
            self._running -= 1
            if isinstance(error, BrokenProcessPool) and self._pool is pool:
                self._pool = None  # a worker died (killed, out of memory): the next task starts new ones
            if error is None:
                pid, result = inner.result()
                self.tasks_done += 1
                self.worker_pids.add(pid)
            stopped = self._stopped
            if not stopped:
                self._wake.notify()
                if not self._running and not self._queue and self._pool is not None:
                    self._idle_timer = threading.Timer(IDLE_S, self._idle)
                    self._idle_timer.daemon = True
                    self._idle_timer.start()
        if stopped:
            return  # shutting down: nobody waits for it any more
        if error is not None:
            outer.set_exception(error)
        else:
            outer.set_result(result)

    def _idle(self) -> None:
        with self._lock:
            if self._running or self._queue or self._pool is None:
                return
            pool, self._pool = self._pool, None
        pool.shutdown(wait=False)


def _processes(pool: ProcessPoolExecutor | None) -> dict[int, Any]:
    # CPython's executor keeps its processes by pid; it has no public accessor for them.
    return dict(getattr(pool, "_processes", None) or {}) if pool is not None else {}


def _stop(pool: ProcessPoolExecutor) -> None:
    processes = list(_processes(pool).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()  # SIGTERM: the worker cancels its compile (`_on_term`) and exits
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + STOP_WAIT_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join(1.0)


# -- in the worker processes ---------------------------------------------------------------

class _Stop(BaseException):
    """Raised in a worker's task on SIGTERM: unwinds through the tools' clean-up (a running
    compiler's process group is killed), past every `except Exception`."""


_IN_TASK = False
_ANALYZERS: dict[str | None, Analyzer] = {}


def _start_worker(server_pid: int, niceness: int) -> None:
    # The server's stdout is the editor's channel: nothing a worker prints may reach it.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    try:
        os.nice(niceness)
    except OSError:
        pass
    signal.signal(signal.SIGTERM, _on_term)
    threading.Thread(target=_watch_server, args=(server_pid,), name="ccls-watch-server", daemon=True).start()


def _on_term(signum: int, frame: Any) -> None:
    if _IN_TASK:
        raise _Stop()
    os._exit(0)


def _watch_server(pid: int) -> None:
    """SIGTERM to this worker once the server process is gone."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (Linux < 5.3): ask every second
        while True:
            time.sleep(1.0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                continue
    else:
        select.select([fd], [], [])  # readable when the process exits
    os.kill(os.getpid(), signal.SIGTERM)


def _task(fn: Callable, args: tuple) -> tuple[int, Any]:
    global _IN_TASK
    _IN_TASK = True
    try:
        return os.getpid(), fn(*args)
    except _Stop:
        os._exit(0)
    finally:
        _IN_TASK = False
        release_freed_memory()  # a file's compile and reading leave megabytes glibc would keep


def release_freed_memory() -> None:
    """Hand memory freed by a pass over many files back to the OS (glibc keeps it otherwise)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc


def worker_analyzer(cache_directory: str | None) -> Analyzer:
    """This worker's analyzer on the server's count cache (one per directory)."""
    found = _ANALYZERS.get(cache_directory)
    if found is None:
        found = _ANALYZERS[cache_directory] = Analyzer(CountCache(cache_directory), TableStore(tables=worker_tables()))
    return found


@dataclass
class BatchCounts:
    """What a worker counted of some of a snapshot's functions (`count_functions`)."""

    units: list[Unit]
    errors: list[AnalysisError]
    compiles: int
    compiled_functions: list[str]
    cached_functions: int
    reduced: bool
    fallback: str | None
    duration_s: float

    @classmethod
    def of(cls, outcome: Outcome) -> "BatchCounts":
        return cls(outcome.units, outcome.errors, outcome.compiles, outcome.compiled_functions,
                   outcome.cached_functions, outcome.reduced, outcome.fallback, outcome.duration_s)


def count_functions(snapshot: Snapshot, options: AnalysisOptions, sizes: DocumentSizes, only: Sequence[int],
                    cache_directory: str | None) -> BatchCounts:
    """The functions `only` (indices) of `snapshot`: from the cache, else counted (one reduced
    compile), as `Analyzer.analyse` counts them in the server."""
    outcome = worker_analyzer(cache_directory).analyse(snapshot, options, remember=False, sizes=sizes, only=only)
    return BatchCounts.of(outcome)


def merge_batches(outcome: Outcome, batches: list[BatchCounts], pending: set[int]) -> Outcome:
    """A pass's outcome so far: `outcome` and what worker batches counted since, `pending` left."""
    by_identity = {unit.identity: unit for unit in outcome.units}
    errors = list(outcome.errors)
    merged = replace(outcome, pending=sorted(pending), compiled_functions=list(outcome.compiled_functions))
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
