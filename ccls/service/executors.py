"""Where a batch's per-file work runs beyond this machine's process pool: a Dask cluster.

`ccls analyze --executor dask://HOST:PORT` connects to a running scheduler; `--executor dask-local`
starts a `LocalCluster` of `--jobs` worker processes here. Either is a `concurrent.futures.Executor`
to `ccls.service.batch`, which keeps the one pipeline (the count cache stays with the client: the
workers only compile and count, so they need the sources, their headers and the compiler at the
same paths — this machine or a shared filesystem — but no access to the cache).

Dask is an optional extra (`pip install 'ccls-cost[distributed]'`); without it, or without a
reachable scheduler with workers, `ExecutorError` says so in a sentence.
"""
from __future__ import annotations

import logging
from concurrent.futures import Executor, Future
from typing import Any, Callable

CONNECT_TIMEOUT_S = 5.0  # a scheduler that does not answer in this time is reported, not waited on
LOCAL = "dask-local"
SCHEMES = ("dask://", "tcp://", "tls://")


class ExecutorError(Exception):
    """An executor that cannot be used, in words for the command line."""


def check_spec(text: str) -> str:
    """`text` if it names an executor this module can open (for argparse: a usage error otherwise)."""
    if text == LOCAL or (text.startswith(SCHEMES) and len(text) > text.index("://") + 3):
        return text
    raise ValueError(f"expected dask://HOST:PORT or {LOCAL}, got {text!r}")


class DaskExecutor(Executor):
    """`submit(fn, *args)` runs `call(shared, fn, *args)` on a Dask worker; `shared` is sent to
    every worker once (not with each task)."""

    def __init__(self, client: Any, cluster: Any, call: Callable, shared: Any) -> None:
        self._client, self._cluster, self._call = client, cluster, call
        self._tasks = client.get_executor(pure=False)  # every task runs: a file's text may repeat
        self._shared = client.scatter(shared, broadcast=True, hash=False)
        self.where = f"the Dask cluster at {client.scheduler.address}"

    @property
    def worker_died(self) -> tuple[type[BaseException], ...]:
        """The errors that mean a worker died (killed, out of memory) with a task on it."""
        from distributed.scheduler import KilledWorker

        return (KilledWorker,)

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        return self._tasks.submit(self._call, self._shared, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        try:
            self._client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()


def open_dask(spec: str, workers: int, call: Callable, shared: Any) -> DaskExecutor:
    """A `DaskExecutor` on the scheduler `spec` names, or on a local cluster of `workers` processes."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ExecutorError(f"--executor {spec} needs Dask distributed, which is not installed: "
                            "pip install 'ccls-cost[distributed]'") from None
    cluster = client = None
    try:
        if spec == LOCAL:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster, timeout=CONNECT_TIMEOUT_S)
        else:
            address = "tcp://" + spec[len("dask://"):] if spec.startswith("dask://") else spec
            try:
                client = Client(address, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ExecutorError(f"cannot reach the Dask scheduler at {spec} within "
                                    f"{CONNECT_TIMEOUT_S:g} s ({_reason(exc)})") from None
            try:
                client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError):
                raise ExecutorError(f"the Dask scheduler at {spec} has no workers "
                                    f"(none joined within {CONNECT_TIMEOUT_S:g} s)") from None
        _check_workers(client, spec)
        return DaskExecutor(client, cluster, call, shared)
    except BaseException:
        for opened in (client, cluster):
            if opened is not None:
                opened.close()
        raise


def _check_workers(client: Any, spec: str) -> None:
    """Every worker counts with this ccls's counting code: a worker with other code would put
    its counts in the cache under this version's keys."""
    from ccls.service.digest import engine_digest

    try:
        digests = client.run(engine_digest)
    except Exception as exc:  # noqa: BLE001 - most often: ccls is not installed on a worker
        raise ExecutorError(f"the Dask workers at {spec} cannot run ccls ({_reason(exc)}); install "
                            "this ccls-cost on them") from None
    others = sorted(worker for worker, digest in digests.items() if digest != engine_digest())
    if others:
        raise ExecutorError(f"{len(others)} Dask worker(s) at {spec} run other ccls counting code than this "
                            f"command (first: {others[0]}); install the same ccls-cost version on them")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
