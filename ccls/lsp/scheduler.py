"""When analyses run: per-document adaptive debounce, one analysis per document at a time,
superseded work cancelled, and a small worker pool of our own with a background lane.

The pool is separate from pygls's thread pool (which reads stdin): compiles block a thread
for seconds and must never starve message handling. Foreground jobs (open documents) always
find a free worker because background jobs (the workspace pass) may occupy at most
`workers - 1` of them.
"""
from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import statistics
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

log = logging.getLogger(__name__)

FOREGROUND, BACKGROUND = 0, 10


class WorkerPool:
    """Threads pulling jobs by priority; background jobs limited to `workers - 1` at once."""

    def __init__(self, workers: int = 2, name: str = "ccls-worker"):
        self._workers = max(2, workers)
        self._queue: list[tuple[int, int, Future, Callable[[], Any]]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._background_running = 0
        self._stopped = False
        self._threads = [threading.Thread(target=self._loop, name=f"{name}-{i}", daemon=True)
                         for i in range(self._workers)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[[], Any], priority: int = FOREGROUND) -> Future:
        future: Future = Future()
        with self._cond:
            if self._stopped:
                future.cancel()
                return future
            heapq.heappush(self._queue, (priority, next(self._seq), future, fn))
            self._cond.notify_all()
        return future

    def shutdown(self) -> None:
        with self._cond:
            self._stopped = True
            for _, _, future, _ in self._queue:
                future.cancel()
            self._queue.clear()
            self._cond.notify_all()

    def _take(self) -> tuple[int, Future, Callable[[], Any]] | None:
        with self._cond:
            while True:
                if self._stopped:
                    return None
                for entry in sorted(self._queue):
                    priority, _seq, future, fn = entry
                    if priority >= BACKGROUND and self._background_running >= self._workers - 1:
                        continue
                    self._queue.remove(entry)
                    heapq.heapify(self._queue)
                    if priority >= BACKGROUND:
                        self._background_running += 1
                    return priority, future, fn
                self._cond.wait()

    def _loop(self) -> None:
        while True:
            taken = self._take()
            if taken is None:
                return
            priority, future, fn = taken
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(fn())
                    except BaseException as exc:  # delivered to the awaiting coroutine
                        future.set_exception(exc)
            finally:
                if priority >= BACKGROUND:
                    with self._cond:
                        self._background_running -= 1
                        self._cond.notify_all()


@dataclass
class DebouncePolicy:
    """clangd's policy: wait as long as the median of recent analyses took, within [min, max]."""

    min_s: float = 0.05
    max_s: float = 0.5
    ratio: float = 1.0

    def compute(self, history: list[float]) -> float:
        if not history:
            return self.max_s
        target = self.ratio * statistics.median(history[-15:])
        return min(self.max_s, max(self.min_s, target))


@dataclass
class _DocState:
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task | None = None
    rerun: bool = False
    closed: bool = False
    generation: int = 0  # bumps on every schedule(): a running analysis compares against it
    adaptive: bool = False  # scheduled by an edit: its duration feeds the debounce history
    last_change: float = float("-inf")  # monotonic time of the latest edit
    cancel_hooks: list[Callable[[], None]] = field(default_factory=list)


class DocumentScheduler:
    """Coalesces change bursts into few analyses; at most one analysis per document runs.

    `analyse(key, generation)` is awaited on the event loop; it is told its generation so it
    can check `is_current(key, generation)` before publishing.
    """

    def __init__(self, analyse: Callable[[str, int], Awaitable[None]],
                 policy: DebouncePolicy | None = None):
        self._analyse = analyse
        self.policy = policy or DebouncePolicy()
        self._docs: dict[str, _DocState] = {}
        self.history: deque[float] = deque(maxlen=15)
        self.runs = 0

    def debounce_s(self) -> float:
        return self.policy.compute(list(self.history))

    def schedule(self, key: str, delay_s: float | None = None) -> None:
        """(Re)start the debounce timer for a document; supersedes queued work for it."""
        loop = asyncio.get_running_loop()
        state = self._docs.setdefault(key, _DocState())
        state.closed = False
        state.generation += 1
        if state.timer is not None:
            state.timer.cancel()
        for hook in state.cancel_hooks:
            hook()  # cancel jobs still queued for an older version
        state.adaptive = delay_s is None
        now = time.monotonic()
        if delay_s is None:
            # clangd waits the adaptive debounce after every edit. An edit after a pause longer
            # than that window is not part of a burst: it waits only the minimum.
            debounce = self.debounce_s()
            delay = debounce if now - state.last_change < debounce else self.policy.min_s
            state.last_change = now
        else:
            delay = delay_s
        state.timer = loop.call_later(delay, self._start, key)

    def on_cancel(self, key: str, hook: Callable[[], None]) -> Callable[[], None]:
        """Register `hook` to run when the document's work is superseded; returns an unregister."""
        state = self._docs.setdefault(key, _DocState())
        state.cancel_hooks.append(hook)

        def remove() -> None:
            if hook in state.cancel_hooks:
                state.cancel_hooks.remove(hook)
        return remove

    def is_current(self, key: str, generation: int) -> bool:
        state = self._docs.get(key)
        return state is not None and not state.closed and state.generation == generation

    def generation(self, key: str) -> int:
        state = self._docs.get(key)
        return state.generation if state else 0

    def close(self, key: str) -> None:
        state = self._docs.pop(key, None)
        if state is None:
            return
        state.closed = True
        if state.timer is not None:
            state.timer.cancel()
        for hook in state.cancel_hooks:
            hook()

    def _start(self, key: str) -> None:
        state = self._docs.get(key)
        if state is None or state.closed:
            return
        state.timer = None
        if state.task is not None:
            state.rerun = True  # picked up when the running analysis finishes
            return
        state.task = asyncio.get_running_loop().create_task(
            self._run(key, state, state.generation, state.adaptive))

    async def _run(self, key: str, state: _DocState, generation: int, adaptive: bool) -> None:
        started = time.monotonic()
        completed = False
        try:
            await self._analyse(key, generation)
            completed = True
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("analysis of %s failed", key)
        finally:
            # Only edits' analyses set the pace: opening a file (a cold, whole-file compile)
            # says nothing about how long the next keystroke's analysis takes.
            if completed and adaptive:
                self.history.append(time.monotonic() - started)
            self.runs += 1
            state.task = None
            if state.rerun and not state.closed:
                state.rerun = False
                if state.timer is None:
                    state.timer = asyncio.get_running_loop().call_later(0, self._start, key)
