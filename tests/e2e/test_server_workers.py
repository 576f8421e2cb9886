"""The background on worker processes (issue 15): the workspace pass runs in processes of the
server's own (not in it), `ccls/stats` counts what waits down to 0, and the processes end with
the server — on shutdown and exit, when the client goes away, and when the server is killed."""
from __future__ import annotations

import asyncio
import contextlib
import signal
import time

import psutil

from tests.e2e.conftest import open_doc, running_server, stats, vscode_capabilities, wait_published
from tests.e2e.test_server_incremental import generated_c

FILES = 10


def _workspace(workspace, files: int = FILES):
    for i in range(files):
        (workspace / f"lib{i}.c").write_text(generated_c(2 + i % 3, bound=50 + i))
    main = workspace / "main.c"
    main.write_text(generated_c(2))
    return main


def _descendants(pid: int) -> set[int]:
    try:
        return {child.pid for child in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


async def _gone(pids: set[int], timeout_s: float) -> set[int]:
    """The pids still running after up to `timeout_s` (zombies count as gone)."""
    deadline = time.monotonic() + timeout_s
    while True:
        alive = set()
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    alive.add(pid)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        await asyncio.sleep(0.1)


@contextlib.contextmanager
def _no_leftovers(tree: set[int]):
    """A failing test kills what it left, or the client's teardown waits on their pipes."""
    try:
        yield
    finally:
        for pid in tree:
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).kill()


async def _workers_running(client) -> tuple[set[int], set[int]]:
    """(the worker processes, every process below the server) once the pass has workers busy."""
    server = client._server.pid
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        info = await stats(client)
        workers = set(info["background"]["processes"])
        if workers and info["background"]["running"]:
            return workers, _descendants(server)
        await asyncio.sleep(0.05)
    raise AssertionError("no worker process started")


async def test_the_workspace_pass_runs_on_worker_processes_until_nothing_waits(workspace, cache_dir):
    main = _workspace(workspace)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        server = client._server.pid
        uri = open_doc(client, main)
        most_waiting, below_server = 0, set()
        deadline = time.monotonic() + 300
        while True:
            info = await stats(client)
            ws = info["workspace"]
            if ws is not None:
                most_waiting = max(most_waiting, ws["waiting"])
                below_server |= _descendants(server)
                if ws["filesAnalysed"] >= FILES and not ws["running"]:
                    break
            assert time.monotonic() < deadline, f"the pass did not finish: {info}"
            await asyncio.sleep(0.05)
        await wait_published(client, uri, 1)
        assert ws["waiting"] == 0 and ws["queued"] == 0 and info["background"]["waiting"] == 0
        assert most_waiting > 0  # files did wait for a worker on the way
        assert ws["files"] == FILES and ws["functions"] == sum(2 + i % 3 for i in range(FILES))
        used = set(info["background"]["workerPids"])
        # Counted in processes of the server's own, not in the server.
        assert used and server not in used and used <= below_server
        assert info["background"]["workers"] == len(psutil.Process(server).cpu_affinity())


async def test_shutdown_and_exit_end_the_workers(workspace, cache_dir):
    _workspace(workspace)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        workers, tree = await _workers_running(client)
        assert workers <= tree
        with _no_leftovers(tree):
            await client.shutdown_session()
            assert await _gone({client._server.pid}, 30.0) == set()
            assert await _gone(tree, 10.0) == set()


async def test_a_client_that_goes_away_takes_the_workers_with_it(workspace, cache_dir):
    _workspace(workspace)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        _, tree = await _workers_running(client)
        with _no_leftovers(tree):
            client._server.stdin.close()  # the editor died: the server reads end of file
            assert await _gone({client._server.pid}, 30.0) == set()
            assert await _gone(tree, 10.0) == set()


async def test_a_killed_server_leaves_no_process_behind(workspace, cache_dir):
    _workspace(workspace)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        _, tree = await _workers_running(client)
        with _no_leftovers(tree):
            client._server.send_signal(signal.SIGKILL)
            # The workers see their server gone, cancel their compilers and exit.
            assert await _gone(tree, 10.0) == set()
