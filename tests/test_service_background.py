"""The language server's worker processes (ccls.service.background): counts equal to the
server's own, the count cache shared, work taken by priority, no process left behind — on
shutdown, when idle, and when the server is killed — and their batches merged into a pass."""
from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from ccls import toolchain
from ccls.options import AnalysisOptions
from ccls.service import background, units
from ccls.service.background import OPEN_FILE, OTHER_FILE, BackgroundWork, count_functions
from ccls.service.counts import Analyzer, Snapshot, parse_functions
from ccls.service.tables import TableStore
from ccls.cache import CountCache
from tests.test_service_viewport import generated

CLANG = shutil.which("clang-19") or shutil.which("clang")
REPO = Path(__file__).resolve().parents[1]


def _snapshot(path: Path, functions: int) -> Snapshot:
    text = generated(functions)
    path.write_text(text)
    data = text.encode()
    _, spans = parse_functions(data, "c")
    return Snapshot(path.as_uri(), str(path), "c", 1, text, data, spans, units.callees(data, spans))


def _by_line(unit_lists) -> dict:
    return {unit.identity[1]: unit.counted for units_ in unit_lists for unit in units_}


def _gone(pids: list[int], timeout_s: float) -> list[int]:
    """The pids still running (zombies count as gone) after waiting up to `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        alive = [pid for pid in pids if psutil.pid_exists(pid) and _status(pid) != psutil.STATUS_ZOMBIE]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _status(pid: int) -> str | None:
    try:
        return psutil.Process(pid).status()
    except psutil.NoSuchProcess:
        return None


@pytest.fixture
def work():
    pool = BackgroundWork(2, preload=["ccls.service.background"])
    yield pool
    pool.shutdown()


@pytest.mark.skipif(CLANG is None, reason="clang not installed")
def test_workers_count_as_the_server_does_into_the_same_cache(tmp_path, work):
    snapshot = _snapshot(tmp_path / "many.c", 12)
    options, store = AnalysisOptions(), TableStore()
    cache = str(tmp_path / "cache")
    chunks = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    futures = [work.submit(OPEN_FILE, store.get(), count_functions, snapshot, options, {}, chunk, cache)
               for chunk in chunks]
    batches = [future.result(timeout=300) for future in futures]
    assert work.worker_pids and os.getpid() not in work.worker_pids
    in_workers = _by_line(batch.units for batch in batches)
    assert len(in_workers) == 12 and all(batch.compiles == 1 for batch in batches)

    # The same batches counted in this process: equal, IR and all.
    here = Analyzer(CountCache(str(tmp_path / "here")), store)
    same = _by_line(here.analyse(snapshot, options, remember=False, only=chunk).units for chunk in chunks)
    assert same == in_workers
    # The whole file in one compile: the same counts (only the IR's metadata numbering differs).
    whole = _by_line([Analyzer(CountCache(str(tmp_path / "whole")), store).analyse(snapshot, options).units])

    def without_ir(counted):
        return [dataclasses.replace(cf, ir_text="") for cf in counted]
    assert {line: without_ir(c) for line, c in whole.items()} == {line: without_ir(c) for line, c in in_workers.items()}

    # The workers wrote the server's count cache: a server on it compiles nothing.
    server = Analyzer(CountCache(cache), store)
    outcome = server.analyse(snapshot, options)
    assert outcome.compiles == 0 and outcome.cached_functions == 12
    assert _by_line([outcome.units]) == in_workers


def test_a_task_submitted_later_with_a_higher_priority_runs_first(tmp_path):
    work = BackgroundWork(1)
    try:
        finished: list[str] = []
        lock = threading.Lock()

        def note(name):
            def done(future):
                with lock:
                    finished.append(name)
            return done
        tables = TableStore().get()
        blocker = work.submit(OTHER_FILE, tables, time.sleep, 1.0)  # holds the only worker
        _until(lambda: work.stats()["running"] == 1)
        later = [work.submit(OTHER_FILE, tables, str, name) for name in ("far-1", "far-2")]
        urgent = work.submit(OPEN_FILE, tables, str, "open")
        assert work.waiting() == 3 and work.stats()["running"] == 1
        for future, name in zip([*later, urgent], ["far-1", "far-2", "open"]):
            future.add_done_callback(note(name))
        assert [f.result(timeout=120) for f in (*later, urgent)] == ["far-1", "far-2", "open"]
        blocker.result(timeout=120)
        assert finished == ["open", "far-1", "far-2"]
        assert work.waiting() == 0 and work.tasks_done == 4
    finally:
        work.shutdown()


def _sleeping_tool() -> functools.partial:
    return functools.partial(toolchain.run_tool, ["sleep", "60"], timeout_s=120, memory_mb=512)


def _tree(pids: list[int]) -> list[int]:
    found = list(pids)
    for pid in pids:
        try:
            found += [child.pid for child in psutil.Process(pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
    return found


def _until(predicate, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_shutdown_stops_a_busy_worker_and_the_compiler_it_runs(tmp_path):
    work = BackgroundWork(1)
    tables = TableStore().get()
    future = work.submit(OTHER_FILE, tables, _sleeping_tool())
    workers = _until(work.processes)
    # The worker and the tool it waits on (prlimit execs `sleep`, in its own process group).
    tree = _until(lambda: (lambda t: t if len(t) > 1 else None)(_tree(workers)))
    started = time.monotonic()
    work.shutdown()
    assert time.monotonic() - started < background.STOP_WAIT_S + 2
    assert _gone(tree, 5.0) == []
    assert future.running() or future.done()  # it was running: not silently re-queued
    assert work.submit(OTHER_FILE, tables, str, "x").cancelled()  # nothing new after shutdown


def test_idle_workers_exit_and_come_back_for_new_work(monkeypatch, work):
    monkeypatch.setattr(background, "IDLE_S", 0.3)
    tables = TableStore().get()
    assert work.submit(OTHER_FILE, tables, str, "a").result(timeout=120) == "a"
    first = work.worker_pids.copy()
    assert _gone(sorted(first), 10.0) == [] and work.processes() == []
    assert work.submit(OTHER_FILE, tables, str, "b").result(timeout=120) == "b"
    assert work.worker_pids - first  # a new process


SERVER_SCRIPT = textwrap.dedent("""
    import functools, sys, time
    from ccls import toolchain
    from ccls.service.background import BackgroundWork, OTHER_FILE
    from ccls.service.tables import TableStore

    if __name__ == "__main__":
        work = BackgroundWork(2)
        tool = functools.partial(toolchain.run_tool, ["sleep", "60"], timeout_s=120, memory_mb=512)
        tables = TableStore().get()
        for _ in range(3):
            work.submit(OTHER_FILE, tables, tool)
        while len(work.processes()) < 2:
            time.sleep(0.05)
        print(" ".join(map(str, work.processes())), flush=True)
        time.sleep(600)
""")


def test_a_killed_server_leaves_no_worker_or_compiler_behind(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER_SCRIPT)
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        workers = [int(pid) for pid in server.stdout.readline().split()]
        assert len(workers) == 2
        tree = _until(lambda: (lambda t: t if len(t) >= 4 else None)(_tree(workers)))  # each with its tool
        server.send_signal(signal.SIGKILL)
        server.wait(10)
        assert _gone(tree, 10.0) == []
    finally:
        if server.poll() is None:
            server.kill()


def test_worker_batches_merge_into_the_pass_in_line_order_each_error_once():
    from ccls.model import AnalysisError
    from ccls.service.background import BatchCounts, merge_batches
    from ccls.service.counts import Outcome, Unit

    first_error, second_error = AnalysisError("a.c", 1, "one"), AnalysisError("a.c", 9, "two")
    outcome = Outcome(None, [Unit("a", ("ka", 1), ())], [first_error], compiles=1, compiled_functions=["a"],
                      reduced=True, duration_s=0.5, pending=[1, 2])
    batch = BatchCounts([Unit("c", ("kc", 30), ()), Unit("b", ("kb", 10), ())], [first_error, second_error],
                        1, ["b", "c"], 1, False, "why", 0.25)
    merged = merge_batches(outcome, [batch], set())
    assert [unit.key for unit in merged.units] == ["a", "b", "c"]
    assert merged.errors == [first_error, second_error]
    assert (merged.compiles, merged.compiled_functions, merged.cached_functions, merged.reduced, merged.fallback,
            merged.duration_s, merged.pending) == (2, ["a", "b", "c"], 1, False, "why", 0.75, [])
    assert (outcome.compiled_functions, outcome.pending) == (["a"], [1, 2])  # the pass's outcome as it was
