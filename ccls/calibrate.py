"""`ccls calibrate`: measure this machine with the project's own probe and write its cost table.

The probe is cost_tables/derive/host_probe.c (our microbenchmarks: no user code is compiled or
run); the figures are derived as for the bundled measured tables (x86_64-zen3, x86_64-zen4):
`measure_host.derive`, then `cpu_tables.host_core` and `cpu_tables.build` with llvm-mca's model
of this CPU (LLVM's name for it: `targets.host_target`). The table is written, with the raw
figures and where they came from, to `<cache dir>/calibration/host.json`; `--arch host` reads it
(`tables.load_tables(host_table=…)`).

This module is the edge: it compiles and runs the probe, reads /proc and /sys, writes the file.
"""
from __future__ import annotations

import datetime
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from ccls.cache import default_cache_dir
from ccls.targets import HOST_ARCH, host_target

CALIBRATION_DIR = "calibration"
TABLE_FILE = "host.json"
SCHEMA = "ccls.calibration/1"
BASE_ARCH = "x86_64"  # what the probe cannot measure (fill bandwidths, mispredicts, atomics) comes from here
PROBE_TIMEOUT_S = 900.0  # one full probe run takes about a minute on an idle machine
# Reorder-buffer entries by LLVM CPU name (vendors' disclosures as commonly cited, as recalled, not
# re-read); a CPU not listed keeps the x86_64 (Zen 4) table's 320.
REORDER_BUFFER = {
    "znver1": 192, "znver2": 224, "znver3": 256, "znver4": 320, "znver5": 448,
    "skylake": 224, "skylake-avx512": 224, "cascadelake": 224, "cooperlake": 224,
    "icelake-client": 352, "icelake-server": 352, "tigerlake": 352, "rocketlake": 352,
    "alderlake": 512, "raptorlake": 512, "meteorlake": 512, "sapphirerapids": 512, "emeraldrapids": 512,
}


class CalibrationError(Exception):
    """The probe could not be built, run or read; the message says what to do."""


@dataclass(frozen=True)
class Calibration:
    path: str
    table: dict  # the envelope written
    warning: str | None = None  # the machine was busy: wall-clock figures (the clock first) are off


def table_path(cache_setting: str | None = None) -> str:
    """Where the calibrated table lives: <cache dir>/calibration/host.json."""
    return os.path.join(default_cache_dir(cache_setting), CALIBRATION_DIR, TABLE_FILE)


def calibrate(cache_setting: str | None = None, quick: bool = False, runs: int | None = None,
              progress: Callable[[int, int, str], None] | None = None) -> Calibration:
    """Measure, build the table, validate it, write it. `progress(done, total, step)` after each
    probe step."""
    triple, mcpu = host_target()
    if not triple.startswith("x86_64"):
        raise CalibrationError(f"calibration needs an x86-64 machine (this one is {triple}): the probe's clock "
                               "and divider kernels are x86-64 assembly")
    from ccls import toolchain
    from ccls.tables import TableError, load_tables

    clang, mca = toolchain.find_tool("clang"), toolchain.find_tool("llvm-mca")
    for name, path in (("clang", clang), ("llvm-mca", mca)):
        if path is None:
            raise CalibrationError(f"{name} not found: {toolchain.install_hint(name)}")
    runs = runs if runs is not None else (1 if quick else 3)
    derive_dir = _derive_dir()
    measure_host = _load_module(derive_dir, "measure_host")
    load_before = _load_average()
    raw = measure(clang, derive_dir / "host_probe.c", runs, quick, progress)
    load = {"before": load_before, "after": _load_average(), "cores": os.cpu_count() or 1}
    try:
        identity = measure_host.cpu_identity()
    except (OSError, ValueError) as problem:
        raise CalibrationError(f"cannot read this CPU's identity from /proc and /sys: {problem}") from None
    today = datetime.date.today().isoformat()
    table = build_table(raw, identity, triple, mcpu, quick, runs, today, derive_dir, mca)
    table["data"]["measurements"]["load_average"] = load
    warning = busy_warning(load)
    if warning:
        table["metadata"]["notes"] = f"{warning}. {table['metadata']['notes']}"
    path = table_path(cache_setting)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".host-", suffix=".json", dir=os.path.dirname(path))
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(table, indent=1) + "\n")
        load_tables(None, host_table=temporary)  # validated as --arch host will read it
        os.replace(temporary, path)
    except TableError as problem:
        raise CalibrationError(f"the calibrated table does not validate: {problem}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return Calibration(path, table, warning)


def busy_warning(load: dict) -> str | None:
    """Words for a run on a machine with more runnable work than cores (the probe times in wall
    clock: a core shared with others measures a slower clock, and everything in cycles moves)."""
    busiest = max(load["before"], load["after"])
    if busiest <= load["cores"]:
        return None
    return (f"measured while the machine was busy (load average {busiest:.1f} on {load['cores']} cores): the clock "
            "and the figures in cycles are likely off; calibrate again on an idle machine")


def _load_average() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def measure(clang: str, probe: Path, runs: int, quick: bool,
            progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Compile the probe and run it `runs` times; the median of each figure over the runs."""
    with tempfile.TemporaryDirectory(prefix="ccls-calibrate-") as work:
        binary = os.path.join(work, "host_probe")
        built = subprocess.run([clang, "-O2", str(probe), "-o", binary], capture_output=True, text=True)
        if built.returncode != 0:
            raise CalibrationError(f"the probe did not compile with {clang}: {built.stderr.strip()[:500]}")
        results, done = [], 0
        for _ in range(runs):
            argv = [binary, "--quick"] if quick else [binary]
            with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as run:
                total = 0
                for line in run.stderr:  # "steps N", then "step NAME" as each measurement starts
                    word, _, value = line.strip().partition(" ")
                    if word == "steps" and value.isdigit():
                        total = int(value) * runs
                    elif word == "step":
                        if progress is not None:
                            progress(done, total, value)
                        done += 1
                output = run.stdout.read()
                status = run.wait(timeout=PROBE_TIMEOUT_S)
            if status != 0:
                raise CalibrationError(f"the probe failed (exit status {status})")
            try:
                results.append(json.loads(output))
            except ValueError:
                raise CalibrationError("the probe printed something that is not JSON") from None
        if progress is not None:
            progress(done, done, "done")
    return _median_tree(results)


def _median_tree(results: list) -> Any:
    if isinstance(results[0], dict):
        return {key: _median_tree([r[key] for r in results]) for key in results[0]}
    return statistics.median(results)


def build_table(raw: dict, identity: dict, triple: str, mcpu: str, quick: bool, runs: int, date: str,
                derive_dir: Path, mca: str) -> dict:
    """The envelope of the `host` table: cpu_tables' derivation of a measured core, with this
    machine's record and the raw figures kept in data.measurements."""
    measure_host = _load_module(derive_dir, "measure_host")
    cpu_tables = _load_module(derive_dir, "cpu_tables")
    derived = measure_host.derive(raw)
    repeats = 3 if quick else 7
    method = (f"cost_tables/derive/host_probe.c{' --quick' if quick else ''} (clang -O2), median of {repeats} "
              f"repeats per figure, median of {runs} run{'s' if runs != 1 else ''}")
    record = {"arch": HOST_ARCH, "date": date, "cpu": identity, "method": method, "raw": raw, "derived": derived}
    model = identity.get("model name", "an unnamed CPU")
    where = (f"measured by ccls calibrate on this machine ({model}, family {identity.get('cpu family')}, model "
             f"{identity.get('model')}{', virtualised' if identity.get('virtualised') else ''}) on {date} with "
             f"{method}; raw figures in data.measurements")
    caches = identity.get("caches") or {}
    if "L1" not in caches or "L2" not in caches:
        raise CalibrationError("cannot read the L1 and L2 sizes from /sys/devices/system/cpu/cpu0/cache")
    base = cpu_tables.CORES[BASE_ARCH]
    borrowed = f"not measured here: the {BASE_ARCH} (Zen 4) table's figure"
    flags = _cpu_flags()
    widest = 512 if "avx512f" in flags else 256 if "avx2" in flags else 128
    core = cpu_tables.host_core(
        HOST_ARCH, base, mcpu, f"this machine: {model} (LLVM -mcpu={mcpu}), measured by ccls calibrate",
        {
            "reorder_buffer": REORDER_BUFFER.get(mcpu, base["reorder_buffer"]),
            "window_source": (f"{mcpu}: {REORDER_BUFFER[mcpu]}-entry reorder buffer (vendors' disclosures as "
                              "commonly cited; as recalled, not re-read)" if mcpu in REORDER_BUFFER
                              else f"{borrowed}: {base['window_source']}"),
            "fill_source": f"{borrowed}: {base['fill_source']}",
            "mispredict_source": f"{borrowed}: {base['mispredict_source']}",
            "atomic_source": f"{borrowed}: {base['atomic_source']}",
            "vector_probes": {family: (scalar, {w: asm for w, asm in by_width.items() if w <= widest})
                              for family, (scalar, by_width) in base["vector_probes"].items()},
            "native_bits": min(widest, 256),
            "native_note": f"vector widths up to {widest} bits from this CPU's flags in /proc/cpuinfo",
        },
        host=(record, where))
    ways = _ways()
    if ways:
        core["cache"].update(ways)
        core["cache_source"] += "; l1d_ways and l2_ways from /sys (ways_of_associativity)"
    try:
        table = cpu_tables.build(HOST_ARCH, core, audit=False, mca=mca)
    except (subprocess.CalledProcessError, SystemExit) as problem:
        detail = getattr(problem, "stderr", None) or problem
        raise CalibrationError(f"llvm-mca could not model this CPU ({mcpu}): {str(detail).strip()[:500]}") from None
    table["data"]["measurements"] = {
        "schema": SCHEMA, "cpu": identity, "llvm_cpu": mcpu, "triple": triple, "quick": quick, "runs": runs,
        "raw": raw, "derived": derived, "source": where, "method": "measured",
    }
    meta = table["metadata"]
    meta.update(
        version=f"{meta['version']}+host.{date.replace('-', '')}",
        date=date,
        source=f"ccls calibrate on this machine ({model}); {meta['source']}",
        notes=(f"Calibrated with {'--quick (fewer repeats, 64 MiB buffers: rough DRAM figures)' if quick else 'the full probe'}"
               f" by ccls {_version()} on {date}; recalibrate with `ccls calibrate`. "
               + meta["notes"].replace(" Regenerate with cost_tables/derive/cpu_tables.py.", "")),
    )
    return table


def figures(table: dict) -> dict[str, float | None]:
    """What `ccls calibrate` prints of a cost table envelope: clock, latencies, bandwidth, divider."""
    data = table["data"]
    classes = data["classes"]
    clock_hz = data["clock_hz"]["value"]

    def cu(name: str) -> float | None:
        entry = classes.get(name)
        return entry["cu"] if entry else None

    dram = cu("load.DRAM.chase")
    return {
        "clock (GHz)": clock_hz / 1e9,
        "L1 load-to-use (cycles)": classes.get("load", {}).get("latency_cycles"),
        "L2 load-to-use (cycles)": cu("load.L2.chase"),
        "L3 load-to-use (cycles)": cu("load.L3.chase"),
        "DRAM load-to-use (ns)": dram / clock_hz * 1e9 if dram is not None else None,
        "independent DRAM miss (CU)": cu("load.DRAM"),
        "strided DRAM miss (CU)": cu("load.DRAM.strided"),
        "stream, per 64-byte line (CU)": cu("load.stream"),
        "32-bit divide (CU)": cu("int_div.i32"),
        "64-bit divide (CU)": cu("int_div.i64"),
        "f64 divide (CU)": cu("fp_div.f64"),
        "effective L3 (MiB)": data["cache"]["l3_bytes"] / 2**20 if data["cache"].get("l3_bytes") else None,
        "reorder buffer (entries)": data.get("window", {}).get("reorder_buffer"),
    }


def comparison_text(host: dict, bundled: dict, bundled_name: str) -> str:
    """The calibrated figures next to a bundled table's, one row each."""
    mine, theirs = figures(host), figures(bundled)
    rows = [("", "this machine", bundled_name, "ratio")]
    for label, value in mine.items():
        other = theirs.get(label)
        ratio = f"{value / other:.2f}×" if value and other else ""
        rows.append((label, _cell(value), _cell(other), ratio))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [f"{row[0].ljust(widths[0])}  {row[1].rjust(widths[1])}  {row[2].rjust(widths[2])}  {row[3].rjust(widths[3])}"
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _derive_dir() -> Path:
    """cost_tables/derive, shipped with the package's tables."""
    from ccls.tables import default_table_dir

    folder = default_table_dir() / "derive"
    if not (folder / "host_probe.c").is_file():
        raise CalibrationError(f"the host probe is missing ({folder / 'host_probe.c'}); reinstall ccls-cost")
    return folder


def _load_module(folder: Path, name: str) -> ModuleType:
    """A derivation script of cost_tables/derive as a module (they are scripts, not a package)."""
    key = f"ccls_derive_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, folder / f"{name}.py")
    if spec is None or spec.loader is None:
        raise CalibrationError(f"cannot load {folder / (name + '.py')}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def _ways() -> dict[str, int]:
    """L1d and L2 associativity from /sys (where a strided walk's lines can stay)."""
    out = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            ways = int((index / "ways_of_associativity").read_text().strip())
        except (OSError, ValueError):
            continue
        key = {("1", "Data"): "l1d_ways", ("2", "Unified"): "l2_ways"}.get((level, kind))
        if key and ways > 0:
            out[key] = ways
    return out


def _version() -> str:
    from ccls import __version__
    return __version__

