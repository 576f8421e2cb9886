"""`ccls calibrate`: the project's host probe (--quick) into a private cache directory, then
`--arch host` costs with the table it wrote."""
import json
import shutil

import pytest

from ccls import calibrate
from ccls.cli import main
from ccls.tables import default_table_dir, load_tables
from ccls.targets import CPU_ARCHES, host_target

DIVIDE = "long f(const long *a, long n, long m) { long s = 0; for (long i = 0; i < n; i++) s += a[i] / m; return s; }\n"

needs_tools = pytest.mark.skipif(
    shutil.which("clang-19") is None or shutil.which("llvm-mca-19") is None or not host_target()[0].startswith("x86_64"),
    reason="calibration needs clang-19, llvm-mca-19 and an x86-64 machine")


def bundled(arch="x86_64"):
    return json.loads((default_table_dir() / f"{arch}.json").read_text())


def test_host_is_an_arch_and_its_table_lives_in_the_cache_dir(tmp_path, monkeypatch):
    assert "host" in CPU_ARCHES
    monkeypatch.setenv("CCLS_CACHE_DIR", str(tmp_path))
    assert calibrate.table_path() == str(tmp_path / "calibration" / "host.json")
    assert calibrate.table_path(str(tmp_path / "elsewhere")) == str(tmp_path / "elsewhere" / "calibration" / "host.json")


def test_the_server_finds_the_calibrated_table_or_says_how_to_make_it(tmp_path):
    from ccls.service.tables import calibrated_table

    assert calibrated_table("x86_64", str(tmp_path)) == (None, None)
    path, missing = calibrated_table("host", str(tmp_path))
    assert path is None and "ccls calibrate" in missing
    written = tmp_path / "calibration" / "host.json"
    written.parent.mkdir()
    written.write_text("{}")
    assert calibrated_table("host", str(tmp_path)) == (str(written), None)


def test_the_figures_printed_come_from_the_tables():
    zen3, x86 = calibrate.figures(bundled("x86_64-zen3")), calibrate.figures(bundled())
    assert x86["clock (GHz)"] == pytest.approx(3.55)
    assert zen3["32-bit divide (CU)"] == bundled("x86_64-zen3")["data"]["divider"]["i32"]["cycles"]
    text = calibrate.comparison_text(bundled("x86_64-zen3"), bundled(), "x86_64")
    header, rule, *rows = text.splitlines()
    assert header.split() == ["this", "machine", "x86_64", "ratio"] and set(rule) <= {"-", " "}
    assert len(rows) == len(x86)
    clock = next(r for r in rows if r.startswith("clock (GHz)"))
    assert clock.split()[-1] == f"{zen3['clock (GHz)'] / 3.55:.2f}×"


def test_without_a_calibration_arch_host_says_what_to_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CCLS_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "k.c"
    src.write_text(DIVIDE)
    assert main(["analyze", str(src), "--arch", "host"]) == 2
    err = capsys.readouterr().err
    assert "no calibration of this machine yet: run `ccls calibrate`" in err and "Traceback" not in err


@needs_tools
def test_calibrate_quick_then_analyze_with_arch_host(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CCLS_CACHE_DIR", str(cache))
    assert main(["calibrate", "--quick"]) == 0
    out = capsys.readouterr().out
    path = cache / "calibration" / "host.json"
    assert f"wrote {path}" in out
    assert "this machine" in out and "x86_64" in out and "32-bit divide (CU)" in out

    table = json.loads(path.read_text())
    meta, data = table["metadata"], table["data"]
    assert data["arch"] == "host"
    assert meta["source"].startswith("ccls calibrate on this machine")
    assert "+host." in meta["version"] and "--quick" in meta["notes"]
    triple, cpu = host_target()
    assert f"-mcpu={cpu}" in meta["hardware"] and f"-mcpu={cpu}" in meta["source"]
    measured = data["measurements"]
    assert measured["schema"] == "ccls.calibration/1" and measured["quick"] is True and measured["llvm_cpu"] == cpu
    assert measured["method"] == "measured" and "host_probe.c --quick" in measured["source"]
    # the measured figures are the table's: clock and divider from the probe, not the bundled table's
    assert data["clock_hz"]["value"] == pytest.approx(measured["derived"]["clock_hz"])
    assert data["divider"]["i32"]["cycles"] == measured["derived"]["divide_cycles"]["i32"]
    assert data["classes"]["int_div.i32"]["method"] == "measured"
    assert "ccls calibrate" in data["classes"]["load.DRAM.chase"]["source"]
    host = load_tables(None, host_table=path).cost["host"]
    assert host.clock_hz == data["clock_hz"]["value"] and host.metadata["source"] == meta["source"]

    src = tmp_path / "k.c"
    src.write_text(DIVIDE)
    assert main(["analyze", str(src), "--arch", "host", "--format", "json"]) == 0
    on_host = json.loads(capsys.readouterr().out)
    assert main(["analyze", str(src), "--format", "json"]) == 0
    on_x86 = json.loads(capsys.readouterr().out)
    assert on_host["arch"] == "host" and on_host["table_version"] != on_x86["table_version"]
    [fn_host], [fn_x86] = on_host["functions"], on_x86["functions"]
    assert fn_host["compile_flags"][0] == f"--target={triple}"
    # the measured divider prices the loop's divisions: the cost differs from the bundled Zen 4 table's
    assert fn_host["counts"]["int_div"] == fn_x86["counts"]["int_div"]
    assert fn_host["metrics"]["CU"] != fn_x86["metrics"]["CU"]


@needs_tools
def test_calibrate_rejects_an_unknown_comparison_table(tmp_path, capsys):
    assert main(["calibrate", "--quick", "--cache-dir", str(tmp_path), "--compare", "pdp11"]) == 2
    assert "unknown arch 'pdp11'" in capsys.readouterr().err
    assert not (tmp_path / "calibration").exists()


@needs_tools
async def test_the_server_costs_with_the_calibrated_table(tmp_path):
    from lsprotocol import types

    from tests.e2e.conftest import hints, open_doc, running_server, vscode_capabilities, wait_published

    workspace, cache = tmp_path / "ws", tmp_path / "cache"
    workspace.mkdir()
    path = workspace / "k.c"
    path.write_text(DIVIDE)
    options = {"arch": "host", "workspace": {"backgroundAnalysis": False}}

    async def label_and_warnings():
        async with running_server(workspace, cache, vscode_capabilities(), initialization_options=options) as client:
            uri = open_doc(client, path)
            await wait_published(client, uri, 1)
            [hint] = await hints(client, uri)
            label = hint.label if isinstance(hint.label, str) else "".join(part.value for part in hint.label)
            return label, [m.message for m in client.messages if m.type == types.MessageType.Warning]

    uncalibrated, warnings = await label_and_warnings()
    assert any("no calibration of this machine yet: run `ccls calibrate`" in m for m in warnings)
    calibrate.calibrate(str(cache), quick=True)
    calibrated, warnings = await label_and_warnings()
    assert not any("calibration" in m for m in warnings)
    # the same function, costed with this machine's measured divider and clock instead of x86_64's
    assert calibrated != uncalibrated


def test_a_busy_machine_is_said_to_be_busy():
    assert calibrate.busy_warning({"before": 0.4, "after": 1.9, "cores": 2}) is None
    warning = calibrate.busy_warning({"before": 7.3, "after": 9.2, "cores": 2})
    assert "load average 9.2 on 2 cores" in warning and "calibrate again on an idle machine" in warning
