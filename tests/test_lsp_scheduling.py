"""Scheduling: the debounce policy, the worker pool's foreground reserve, bursts of changes
coalesced into few analyses, parsing ahead once per pause, and the rows on screen (counted first)."""
from __future__ import annotations

import asyncio
import threading
import time

from ccls.lsp.scheduler import BACKGROUND, FOREGROUND, DebouncePolicy, DocumentScheduler, WorkerPool
from ccls.lsp.screens import Screens
from ccls.service.viewport import SCREEN_ROWS


def test_debounce_policy_is_clangds():
    policy = DebouncePolicy()
    assert policy.compute([]) == 0.5
    assert policy.compute([0.01, 0.02, 0.03]) == 0.05
    assert policy.compute([0.1, 0.2, 5.0]) == 0.2
    assert policy.compute([2.0, 3.0]) == 0.5


def test_background_jobs_never_take_the_last_worker():
    pool = WorkerPool(2)
    release = threading.Event()
    started = []
    try:
        background = [pool.submit(lambda i=i: (started.append(i), release.wait(5)), BACKGROUND) for i in range(3)]
        time.sleep(0.1)
        assert len(started) == 1  # one background job at a time with two workers
        t0 = time.monotonic()
        assert pool.submit(lambda: "fg", FOREGROUND).result(timeout=2) == "fg"
        assert time.monotonic() - t0 < 1.0
        release.set()
        for future in background:
            future.result(timeout=5)
    finally:
        release.set()
        pool.shutdown()


def test_a_burst_of_changes_coalesces_into_few_analyses():
    async def scenario():
        runs: list[int] = []
        current: list[bool] = []

        async def analyse(key, generation):
            runs.append(generation)
            await asyncio.sleep(0.05)
            current.append(scheduler.is_current(key, generation))

        scheduler = DocumentScheduler(analyse, DebouncePolicy(min_s=0.02, max_s=0.02))
        for _ in range(200):
            scheduler.schedule("doc")
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.4)
        return runs, current, scheduler.generation("doc")

    runs, current, last = asyncio.run(scenario())
    assert 1 <= len(runs) <= 20
    assert runs[-1] == last and current[-1] is True


def test_a_burst_of_edits_is_parsed_ahead_once_per_pause():
    from lsprotocol import types

    from ccls.lsp.session import PARSE_AHEAD_S, Session

    class Model:
        def __init__(self):
            self.parses, self.version = 0, 0

        def apply_change(self, *args):
            pass

        def call_graph(self):
            self.parses += 1

    class Scheduler:
        def schedule(self, uri):
            pass

    async def scenario():
        session = Session(server=None)
        session.scheduler, model = Scheduler(), Model()
        session.docs["file:///a.c"] = model
        for version in range(1, 30):  # keystrokes, each handled before the next (callbacks run)
            session.change("file:///a.c", version, [types.TextDocumentContentChangeWholeDocument(text="x")])
            await asyncio.sleep(0)
        await asyncio.sleep(PARSE_AHEAD_S * 5)
        during_burst = model.parses
        session.change("file:///a.c", 30, [types.TextDocumentContentChangeWholeDocument(text="y")])
        await asyncio.sleep(PARSE_AHEAD_S * 5)
        return during_burst, model.parses

    during_burst, after_pause = asyncio.run(scenario())
    assert during_burst == 1 and after_pause == 2


def test_an_edit_after_a_pause_waits_only_the_minimum():
    async def scenario():
        started: list[float] = []

        async def analyse(key, generation):
            started.append(time.monotonic())

        scheduler = DocumentScheduler(analyse, DebouncePolicy(min_s=0.05, max_s=0.5))
        scheduler.history.extend([0.4, 0.4, 0.4])  # recent analyses took 400 ms
        t0 = time.monotonic()
        scheduler.schedule("doc")  # first edit after a long pause
        await asyncio.sleep(0.3)
        isolated = started[0] - t0
        t1 = time.monotonic()
        scheduler.schedule("doc")  # 300 ms later: inside the window, so part of a burst
        await asyncio.sleep(0.6)
        return isolated, started[1] - t1

    isolated, burst = asyncio.run(scenario())
    assert isolated < 0.2
    assert burst >= 0.38


def test_the_screen_is_the_last_hint_range_else_around_the_cursor_else_the_top():
    screens = Screens()
    assert screens.rows("a") == (0, SCREEN_ROWS) and not screens.has_range("a")
    screens.saw_cursor("a", 100)
    assert screens.rows("a") == (100 - SCREEN_ROWS // 2, 100 + SCREEN_ROWS // 2)
    screens.saw_range("a", 40, 70)
    assert screens.rows("a") == (40, 70) and screens.has_range("a")
    screens.forget("a")
    assert screens.rows("a") == (0, SCREEN_ROWS) and not screens.has_range("a")


def test_a_cold_open_waits_for_the_first_range_until_it_comes_or_briefly():
    async def scenario():
        screens = Screens()
        await screens.wait_for_range("a")  # no client request: gives up after FIRST_RANGE_WAIT_S
        waiting = asyncio.ensure_future(screens.wait_for_range("b"))
        await asyncio.sleep(0)
        screens.saw_range("b", 10, 40)
        for _ in range(20):
            if waiting.done():
                break
            await asyncio.sleep(0)
        return waiting.done(), screens.rows("b")

    assert asyncio.run(scenario()) == (True, (10, 40))
