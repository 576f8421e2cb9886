"""`ccls analyze --executor`: the per-file work on a Dask cluster gives the JSON of `--jobs 1`, byte
for byte, and a clear exit 2 when Dask or its scheduler is not there (issue 14, §5)."""
from __future__ import annotations

import json
import shutil
import socket
import sys

import pytest

from ccls import cli
from ccls.service import executors

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="needs clang to compile the generated C files")


def _distributed():
    try:
        import distributed
    except ImportError:
        pytest.skip("Dask distributed is not installed (pip install 'ccls-cost[distributed]')")
    return distributed


@pytest.fixture
def program(tmp_path, monkeypatch):
    """Four C files that are one program: sizes flow from a call in one file into another's loops."""
    monkeypatch.setenv("CCLS_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "kernels.h").write_text("#include <stddef.h>\n"
                                      + "".join(f"double sum{i}(const double *a, size_t n);\n" for i in range(3)))
    for i in range(3):
        (folder / f"kernel{i}.c").write_text(
            '#include "kernels.h"\n'
            f"double sum{i}(const double *a, size_t n) {{\n"
            f"  double s = 0;\n  for (size_t k = 0; k < n; k++) s += a[k] / (double)(k + {i + 1});\n"
            f"  for (size_t k = 0; k < n; k++) for (size_t j = 0; j < n; j++) s += a[j] * {i};\n  return s;\n}}\n")
    (folder / "main.c").write_text(
        '#include "kernels.h"\n'
        "double run(double *a) {\n"
        + "".join(f"  double r{i} = sum{i}(a, {100 * (i + 1)});\n" for i in range(3))
        + "  return r0 + r1 + r2;\n}\n")
    return folder


def _analyze(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(["analyze", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_dask_cluster_gives_the_json_of_one_job_and_shares_the_cache(program, capsys, monkeypatch):
    distributed = _distributed()
    code, reference, _ = _analyze(capsys, str(program), "--jobs", "1", "--no-cache")
    assert code == 0
    functions = json.loads(reference)["functions"]
    assert len(functions) == 4
    assert any("from the call at main.c" in note for f in functions for note in f["assumptions"])  # across files
    # Threads, not processes, in the test: worker processes take many seconds to start on a small CI
    # machine. The tasks still go through the scheduler over TCP, serialised as for remote workers.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        address = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
        code, cold, _ = _analyze(capsys, str(program), "--executor", address)
        assert code == 0 and cold == reference
        assert "with_tables" in cluster.scheduler.task_prefixes  # the files ran as the cluster's tasks
    # The count cache stays with the command: a local re-run finds every file in what the
    # cluster's run stored, and compiles nothing.
    from ccls.service import batch

    def no_work(*args):
        raise AssertionError("a cached file was compiled again")
    monkeypatch.setattr(batch, "_read", no_work)
    monkeypatch.setattr(batch, "_count", no_work)
    code, warm, _ = _analyze(capsys, str(program), "--jobs", "1")
    assert code == 0 and warm == reference


def test_dask_local_starts_worker_processes(program, capsys):
    _distributed()
    code, reference, _ = _analyze(capsys, str(program), "--jobs", "1", "--no-cache")
    code, out, err = _analyze(capsys, str(program), "--executor", "dask-local", "--jobs", "2", "--no-cache")
    assert (code, out) == (0, reference), err


def test_an_unreachable_scheduler_is_exit_2_in_a_sentence(program, capsys, monkeypatch):
    _distributed()
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, err = _analyze(capsys, str(program), "--executor", f"dask://127.0.0.1:{port}")
    assert code == 2 and out == ""
    assert f"cannot reach the Dask scheduler at dask://127.0.0.1:{port} within 1 s" in err
    assert "Traceback" not in err


def test_without_distributed_the_executor_is_exit_2_with_the_install_command(program, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed: importing it fails
    code, out, err = _analyze(capsys, str(program), "--executor", "dask-local")
    assert code == 2 and out == ""
    assert "needs Dask distributed, which is not installed: pip install 'ccls-cost[distributed]'" in err


def test_an_executor_that_is_not_dask_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["analyze", "x.c", "--executor", "spark://host:7077"])
    assert stop.value.code == 2
    assert "expected dask://HOST:PORT or dask-local" in capsys.readouterr().err


def _digest_by_thread() -> str:
    import threading

    return threading.current_thread().name  # the workers' loop thread is not the test's main thread


def test_workers_with_other_counting_code_are_refused(program, capsys, monkeypatch):
    distributed = _distributed()
    from ccls.service import digest

    monkeypatch.setattr(digest, "engine_digest", _digest_by_thread)  # the workers' digest differs from ours
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        address = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
        code, out, err = _analyze(capsys, str(program), "--executor", address)
    assert code == 2 and out == ""
    assert f"2 Dask worker(s) at {address} run other ccls counting code" in err
