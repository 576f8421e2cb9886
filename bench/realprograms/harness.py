"""Shared machinery of the real-programs benchmark: commands, callgrind output, ccls, statistics,
caching of measurements and the printed report. Suite modules (tsvc.py, embench.py) build and
measure; this module compares.
"""
from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def _load(name: str):
    """bench/accuracy's stats.py and baselines.py, reused as they are (loaded by path, so that
    their folder's run.py never shadows this one's)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"accuracy_{name}", REPO / "bench" / "accuracy" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


BASELINES = _load("baselines").BASELINES
agreement = _load("stats").agreement

CLANG = os.environ.get("CCLS_CLANG", "clang-19")
CCLS_TIMEOUT_S = 900
# Bump when the way measurements are taken changes: cached measurements with another version are
# not reused.
MEASUREMENT_VERSION = 1

TARGETS = {
    "instructions": "ρ ≥ 0.98 and median |err| ≤ 10%",
    "time": "ρ ≥ 0.95 and ≥ 0.02 above the instruction-count baseline (B4)",
}


class BenchError(Exception):
    """A step failed; the message names the step and carries the tool's own output."""


def run_cmd(argv: Sequence[str], timeout_s: float, cwd: Path | None = None,
            env: dict | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, cwd=cwd,
                              env=env)
    except FileNotFoundError as e:
        raise BenchError(f"{argv[0]} not found: {e}") from None
    except subprocess.TimeoutExpired:
        raise BenchError(f"timed out after {timeout_s} s: {' '.join(map(str, argv))}") from None


def checked(argv: Sequence[str], timeout_s: float, what: str, cwd: Path | None = None) -> str:
    result = run_cmd(argv, timeout_s, cwd)
    if result.returncode != 0:
        raise BenchError(f"{what} failed (exit {result.returncode}): {' '.join(map(str, argv))}\n"
                         f"{(result.stderr or result.stdout).strip()[-3000:]}")
    return result.stdout


def pinned(argv: list[str]) -> list[str]:
    """Pin timing runs to the last CPU (the accuracy bench does the same) when taskset exists."""
    if shutil.which("taskset") and (os.cpu_count() or 1) > 1:
        return ["taskset", "-c", str((os.cpu_count() or 2) - 1), *argv]
    return argv


def copy_suite(src: Path, dst: Path) -> None:
    """A private copy of a suite (outside the project) that may be patched and given a compile
    database. Recopied every time so that an edit of the original is seen."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=False, ignore=shutil.ignore_patterns(".git"))


def write_compile_db(build_dir: Path, entries: Iterable[tuple[Path, list[str]]]) -> Path:
    """compile_commands.json as CMake would write it: one entry per source, `arguments` form."""
    build_dir.mkdir(parents=True, exist_ok=True)
    db = [{"directory": str(build_dir), "file": str(source),
           "arguments": [CLANG, *flags, "-c", str(source), "-o", str(build_dir / (source.stem + ".o"))]}
          for source, flags in entries]
    path = build_dir / "compile_commands.json"
    path.write_text(json.dumps(db, indent=1) + "\n")
    return path


def tree_digest(paths: Iterable[Path], extra: object = None) -> str:
    """A key for cached measurements: file names and contents, plus anything else that shapes them
    (flags, sizes, harness code, this module's MEASUREMENT_VERSION)."""
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(str(path.name).encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(json.dumps([MEASUREMENT_VERSION, extra], sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- callgrind output files

_POSITION = re.compile(r"^([+-]?\d+|\*)\s")


@dataclass
class CallgrindProfile:
    """Self Ir and incoming call counts per function name, from one callgrind output file."""
    self_ir: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)  # calls into a function (summed over callers)
    description: str = ""  # the `desc: Trigger:` line, which names a client-request dump
    totals: int = 0


def parse_callgrind(text: str) -> CallgrindProfile:
    """Parse callgrind's output format (name compression `(id) name`, `calls=` lines whose
    following cost line is inclusive and so not the caller's self cost). Only the first event
    (Ir) is read."""
    prof = CallgrindProfile()
    names: dict[str, str] = {}

    def resolve(value: str) -> str:
        value = value.strip()
        match = re.match(r"^\((\d+)\)(?:\s+(.*))?$", value)
        if not match:
            return value
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
            return match.group(2)
        return names.get(match.group(1), value)

    current = None
    callee = None
    after_calls = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line:
            continue
        if line.startswith("fn="):
            current = resolve(line[3:])
            prof.self_ir.setdefault(current, 0)
            after_calls = False
        elif line.startswith(("cfn=", "cfi=", "cfl=", "cob=", "ob=", "fl=", "fi=", "fe=")):
            if line.startswith("cfn="):
                callee = resolve(line[4:])
            elif line.startswith(("cfi=", "cfl=", "cob=", "ob=", "fl=", "fi=", "fe=")):
                pass  # file / object names use separate id spaces; not needed here
        elif line.startswith("calls="):
            count = int(line[6:].split()[0])
            if callee is not None:
                prof.calls[callee] = prof.calls.get(callee, 0) + count
            after_calls = True
        elif line.startswith("desc: Trigger:"):
            prof.description = line.split(":", 2)[2].strip()
        elif line.startswith(("summary:", "totals:")):
            prof.totals = int(line.split(":", 1)[1].split()[0] or 0)
        elif _POSITION.match(line) and current is not None:
            parts = line.split()
            cost = int(parts[1]) if len(parts) > 1 else 0
            if after_calls:
                after_calls = False  # inclusive cost of the call just named: not self cost
            else:
                prof.self_ir[current] += cost
    return prof


# ---------------------------------------------------------------- ccls

@dataclass
class CclsRun:
    doc: dict
    seconds: float
    argv: list[str]


def ccls_python() -> str:
    """The interpreter that runs ccls: $CCLS_PYTHON, else the project's .venv, else this one."""
    if os.environ.get("CCLS_PYTHON"):
        return os.environ["CCLS_PYTHON"]
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def ccls_analyze(paths: Sequence[Path], arch: str, cwd: Path) -> CclsRun:
    """`ccls analyze PATHS --format json` as a user runs it: the compile database next to the
    sources is found by ccls itself; never a --param."""
    import time
    argv = [ccls_python(), "-m", "ccls", "analyze", *map(str, paths), "--format", "json"]
    if arch:
        argv += ["--arch", arch]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    started = time.monotonic()
    result = run_cmd(argv, CCLS_TIMEOUT_S, cwd=cwd, env=env)
    seconds = time.monotonic() - started
    try:
        doc = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise BenchError(f"ccls analyze gave no JSON (exit {result.returncode}): "
                         f"{(result.stderr or result.stdout).strip()[-3000:]}") from None
    return CclsRun(doc, seconds, argv)


# LLVM's copies of a function for some of its callers (`WikiSort.specialized.1`, a constant
# comparator folded in): the binary runs the source's function under that name.
_CLONE_SUFFIX = re.compile(r"\.(?:specialized|constprop|isra|argprom)\.\d+$")


def by_source_function(measured: dict[str, dict]) -> dict[str, dict]:
    """Callgrind's functions (name → self_ir, calls) with LLVM's copies summed into the
    source function they were made from, as ccls reports it."""
    out: dict[str, dict] = {}
    for name, f in measured.items():
        into = out.setdefault(_CLONE_SUFFIX.sub("", name), {"self_ir": 0, "calls": 0})
        into["self_ir"] += f["self_ir"]
        into["calls"] += f["calls"]
    return out


def ccls_functions(doc: dict) -> dict[str, dict]:
    """Function name → the JSON function record (first one wins, as ccls's own index does)."""
    out: dict[str, dict] = {}
    for function in doc.get("functions", []):
        out.setdefault(function.get("name"), function)
    return out


def ccls_level(doc: dict) -> str:
    """The -O level ccls compiled at (the last -O in its reported flags), and where it said so."""
    for function in doc.get("functions", []):
        flags = function.get("compile_flags") or []
        levels = [f for f in flags if f.startswith("-O")]
        if levels:
            return f"{levels[-1]} (compile_flags {' '.join(flags)})"
    return "unknown"


def ccls_record(function: dict) -> dict:
    """The small part of a ccls function record the results keep."""
    counts = function.get("counts") or {}
    inclusive = (function.get("inclusive_metrics") or {}).get("CU")
    return {"instructions": function.get("instructions"), "CU": (function.get("metrics") or {}).get("CU"),
            "CU_inclusive": inclusive, "unknown_callees": function.get("unknown_callees", []),
            "cost_expression": function.get("cost_expression"), "loops": function.get("loops", []),
            "n_assumptions": len(function.get("assumptions", [])),
            "baselines": {label: fn(counts) for label, fn in BASELINES.items()},
            }


def ccls_kernel_record(function: dict) -> dict:
    """`ccls_record` of a kernel timed on its own: what its time is compared with is its
    inclusive CU where it calls others, else its own."""
    record = ccls_record(function)
    record["CU_for_time"] = record["CU_inclusive"] if record["CU_inclusive"] is not None else record["CU"]
    return record


def build_each(items: Sequence[str], build: Callable[[str], tuple], jobs: int, log: Callable[[str], None],
               suite: str) -> tuple[dict, dict]:
    """`build(item)` for every item, `jobs` at a time: (item → what it built, item → why it
    failed) — a BenchError loses that item only, said in the log."""
    def one(item: str):
        try:
            return item, build(item), None
        except BenchError as e:
            return item, None, str(e)

    built, failed = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for item, ok, error in pool.map(one, items):
            if ok:
                built[item] = ok
            else:
                failed[item] = error
                log(f"{suite}: {item} FAILED: {error.splitlines()[0]}")
    return built, failed


def build_and_time(items: Sequence[str], build: Callable[[str], tuple], jobs: int, runs: int, timeout_s: float,
                   parse: Callable[[str], tuple | None], log: Callable[[str], None], suite: str,
                   what: str) -> tuple[dict, dict, dict, dict]:
    """`build_each`, then `interleaved_timing` of what was built: (built, failed, samples, the
    seconds each phase took and the load average around the timing)."""
    started = time.monotonic()
    built, failed = build_each(items, build, jobs, log, suite)
    callgrind_s = time.monotonic() - started
    log(f"{suite}: build + callgrind took {callgrind_s:.0f} s; timing {runs} runs per {what} …")
    load_before = load_average()
    started = time.monotonic()
    samples = interleaved_timing(built, runs, timeout_s, parse)
    phases = {"callgrind_s": round(callgrind_s, 1), "timing_s": round(time.monotonic() - started, 1),
              "load_before": load_before, "load_after": load_average()}
    return built, failed, samples, phases


def interleaved_timing(built: dict, runs: int, timeout_s: float, parse: Callable[[str], tuple | None]) -> dict:
    """`runs` timed runs of every executable in `built` (name → (executable, …)), interleaved one
    run of each per pass so that the machine's drift spreads over all; each run's parsed sample."""
    samples: dict[str, list] = {name: [] for name in built}
    for _ in range(runs):
        for name, (exe, *_) in built.items():
            result = run_cmd(pinned([str(exe)]), timeout_s)
            sample = parse(result.stdout)
            if result.returncode != 0 or sample is None:
                raise BenchError(f"{name}: timing run failed (exit {result.returncode}): {result.stderr[-500:]}")
            samples[name].append(sample)
    return samples


# ---------------------------------------------------------------- host and environment

HOST_MEASUREMENTS = REPO / "cost_tables" / "derive" / "host-measurements"


def host_record() -> dict | None:
    """What cost_tables/derive/measure_host.py recorded on this very CPU, if anything (as
    bench/accuracy does)."""
    here: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            here.setdefault(key.strip(), value.strip())
    except OSError:
        return None
    for path in sorted(HOST_MEASUREMENTS.glob("*.json")):
        try:
            record = json.loads(path.read_text())
            if all(record["cpu"].get(k) == here.get(k) for k in ("model name", "cpu family", "model")):
                return record
        except (OSError, ValueError, KeyError):
            continue
    return None


def choose_arch(requested: str) -> tuple[str, str, float | None]:
    """(--arch for ccls ("" = ccls's default), why, measured clock in Hz or None)."""
    record = host_record()
    clock = record["derived"]["clock_hz"] if record else None
    if requested == "default":
        return "", "ccls's default table (no --arch)", clock
    if requested != "auto":
        return requested, "chosen with --arch", clock
    if record is None:
        return "", "no table was measured on this CPU: ccls's default table (no --arch)", None
    cpu = record["cpu"]
    return record["arch"], (f"measured on this CPU ({cpu['model name']}, family {cpu['cpu family']} "
                            f"model {cpu['model']}) on {record['date']}"), clock


def nominal_clock_hz() -> float | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("cpu MHz"):
                return float(line.split(":", 1)[1]) * 1e6
    except (OSError, ValueError):
        pass
    return None


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def environment() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    clang = run_cmd([CLANG, "--version"], 30).stdout.splitlines()[:1]
    valgrind = run_cmd(["valgrind", "--version"], 30).stdout.strip()
    commit = run_cmd(["git", "rev-parse", "--short", "HEAD"], 30, cwd=REPO).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "cpu_model": cpu, "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "clang": clang[0] if clang else "unknown", "valgrind": valgrind, "repo_commit": commit}


# ---------------------------------------------------------------- statistics and report

B4 = "B4 ccls instructions"


def summarize_pairs(models: dict[str, Sequence[float | None]], measured: Sequence[float | None]) -> dict:
    """Agreement of each model with the measurement, plus the median raw ratio pred/measured."""
    out = {}
    for label, predicted in models.items():
        a = asdict(agreement(list(predicted), list(measured)))
        ratios = [p / m for p, m in zip(predicted, measured)
                  if p and m and p > 0 and m > 0 and math.isfinite(p) and math.isfinite(m)]
        a["median_ratio"] = statistics.median(ratios) if ratios else float("nan")
        out[label] = a
    return out


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None or x != x else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "—" if x is None or x != x else f"{100 * x:.1f}%"


def si(x: float | None) -> str:
    if x is None or x != x:
        return "—"
    if abs(x) >= 1e15:
        return f"{x:.3g}"
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}"


def table(headers: list[str], rows: list[list[str]], text_columns: int = 1) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) if i < text_columns else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
            for r in rows]
    return "\n".join(out)


def target_verdict(metric: str, summary: dict) -> str:
    """Whether the issue's targets are met by ccls in this summary block."""
    ccls = summary.get("ccls") or summary.get("ccls CU")
    if not ccls or ccls["n"] < 3:
        return "not measured"
    rho = ccls["spearman_rho"]
    if metric == "instructions":
        ok = rho >= 0.98 and ccls["median_abs_rel_err"] <= 0.10
        return (f"{'MET' if ok else 'NOT MET'}: ρ {rho:.3f} (≥ 0.98), median |err| "
                f"{_pct(ccls['median_abs_rel_err'])} (≤ 10%)")
    b4 = summary.get(B4, {}).get("spearman_rho", float("nan"))
    ok = rho >= 0.95 and (b4 != b4 or rho >= b4 + 0.02)
    b4_text = f"B4 ρ {b4:.3f}, need ≥ {b4 + 0.02:.3f}" if b4 == b4 else "B4 n/a"
    return f"{'MET' if ok else 'NOT MET'}: ρ {rho:.3f} (≥ 0.95; {b4_text})"


def render_summary(title: str, block: dict, metric: str, scale_name: str) -> str:
    rows = []
    for model, a in block.items():
        if not isinstance(a, dict) or "spearman_rho" not in a:
            continue
        rows.append([model, str(a["n"]), _fmt(a["spearman_rho"]), _fmt(a["kendall_tau"]),
                     _pct(a["median_abs_rel_err"]), _fmt(a["median_ratio"]), _pct(a["median_abs_rel_err_scaled"]),
                     si(a["best_scale"])])
    text = [title, f"target: {TARGETS[metric]} → {target_verdict(metric, block)}",
            table(["model", "n", "Spearman ρ", "Kendall τ", "median |err|", "median ratio", "|err| @best scale",
                   scale_name], rows)]
    return "\n".join(text)


def worst_by_ratio(rows: list[dict], predicted: Callable[[dict], float | None], measured: Callable[[dict], float | None],
                   count: int = 10) -> list[tuple[str, float, float, float]]:
    """(name, predicted, measured, ratio) of the rows whose ratio is farthest from 1 (in log)."""
    out = []
    for r in rows:
        p, m = predicted(r), measured(r)
        if p and m and p > 0 and m > 0:
            out.append((r["name"], p, m, p / m))
    out.sort(key=lambda t: -abs(math.log(t[3])))
    return out[:count]


def render_worst(title: str, worst: list[tuple[str, float, float, float]], scale: float | None = None) -> str:
    rows = []
    for name, p, m, ratio in worst:
        row = [name, si(p), si(m), f"{ratio:.3g}×"]
        if scale:
            row.append(f"{ratio * scale:.3g}×")
        rows.append(row)
    headers = ["function", "ccls", "measured", "ratio ccls/measured"]
    if scale:
        headers.append("ratio @best scale")
    return title + "\n" + table(headers, rows)


def median(xs: Sequence[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
