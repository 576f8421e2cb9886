#!/usr/bin/env python3
"""Accuracy benchmark: ccls's predictions vs callgrind instruction counts and measured time.

    python3 bench/accuracy/run.py [--repeats 30] [--rounds 15] [--only k_sum_n,k_dot] [--no-ccls] [--json PATH]

Steps: build the kernels with the flags ccls compiles them with and link them to the generated
driver; ask `python3 -m ccls analyze` for each kernel at that kernel's sizes; run each kernel once
under `valgrind --tool=callgrind --toggle-collect=KERNEL` (the kernel's own Ir: kernels call
nothing); time it (median of --repeats calls, taken in --rounds interleaved passes over all
kernels, each pass warming up first, pinned to one CPU); print the agreement tables and write
results/latest.json. See README.md for the method.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from baselines import BASELINES, GAS_PRICE_BY_BASE  # noqa: E402
from gen_driver import generate  # noqa: E402
from manifest import KERNELS, Kernel  # noqa: E402
from stats import agreement, relative_error  # noqa: E402

CLANG = os.environ.get("CCLS_CLANG", "clang-19")
# What ccls compiles C with when no compile database is found (issue 2 §1); replaced by the flags
# ccls reports in its JSON when it reports them. -gline-tables-only and value names change no code.
DEFAULT_KERNEL_FLAGS = ["-O2", "-gline-tables-only", "-fno-discard-value-names"]
BUILD = HERE / "build"
CCLS_TIMEOUT_S = 300
CALLGRIND_TIMEOUT_S = 900
TIME_TIMEOUT_S = 300


class BenchError(Exception):
    """A benchmark step failed; the message names the step and carries the tool's own output."""


def _run(argv: list[str], timeout_s: float, cwd: Path | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, cwd=cwd)
    except FileNotFoundError as e:
        raise BenchError(f"{argv[0]} not found: {e}") from None
    except subprocess.TimeoutExpired:
        raise BenchError(f"timed out after {timeout_s} s: {' '.join(argv)}") from None


def _checked(argv: list[str], timeout_s: float, what: str, cwd: Path | None = None) -> str:
    result = _run(argv, timeout_s, cwd)
    if result.returncode != 0:
        raise BenchError(f"{what} failed (exit {result.returncode}): {' '.join(argv)}\n{result.stderr.strip()}")
    return result.stdout


def _sizes(kernel: Kernel) -> list[str]:
    return [f"{name}={value}" for name, value in {**kernel.params, **kernel.inputs}.items()]


# ---------------------------------------------------------------- ccls

def ccls_available() -> tuple[bool, str]:
    result = _run([sys.executable, "-m", "ccls", "analyze", "--help"], 60, cwd=REPO)
    lines = (result.stderr or result.stdout).strip().splitlines()
    return result.returncode == 0, (lines[-1] if lines else f"exit {result.returncode}")


HOST_MEASUREMENTS = REPO / "cost_tables" / "derive" / "host-measurements"


def host_record() -> dict | None:
    """What cost_tables/derive/measure_host.py recorded on this very CPU (same model name,
    family and model), if anything."""
    here: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            here.setdefault(key.strip(), value.strip())
    except OSError:
        return None
    for path in sorted(HOST_MEASUREMENTS.glob("*.json")):
        record = json.loads(path.read_text())
        if all(record["cpu"].get(k) == here.get(k) for k in ("model name", "cpu family", "model")):
            return record
    return None


def choose_arch(requested: str, record: dict | None) -> tuple[str, str]:
    """The --arch for ccls and why: `auto` takes the table measured on this CPU, else x86_64."""
    if requested != "auto":
        return requested, "chosen with --arch"
    if record is None:
        return "x86_64", "no table was measured on this CPU: the default x86_64 (Zen 4, literature) table"
    cpu = record["cpu"]
    return record["arch"], (f"measured on this CPU ({cpu['model name']}, family {cpu['cpu family']} "
                            f"model {cpu['model']}) on {record['date']}")


def ccls_analyze(kernel: Kernel, arch: str, params: dict[str, int] | None = None, *extra: str) -> dict:
    """The JSON document of `ccls analyze` for one kernel file at the kernel's sizes (or `params`)."""
    argv = [sys.executable, "-m", "ccls", "analyze", str(HERE / "kernels" / kernel.file), "--format", "json",
            "--arch", arch, *extra]
    for name, value in (kernel.params if params is None else params).items():
        argv += ["--param", f"{name}={value}"]
    result = _run(argv, CCLS_TIMEOUT_S, cwd=REPO)
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError:
        raise BenchError(f"ccls analyze {kernel.file} gave no JSON (exit {result.returncode}): "
                         f"{(result.stderr or result.stdout).strip()[-2000:]}") from None


def pick_function(doc: dict, name: str) -> dict | None:
    for function in doc.get("functions", []):
        if function.get("name") == name:
            return function
    return None


def reported_flags(doc: dict) -> list[str] | None:
    """Compile flags ccls says it used, if its JSON reports them (top level or per function)."""
    candidates = [doc] + list(doc.get("functions", []))
    for holder in candidates:
        for key in ("compile_flags", "flags", "compile_command"):
            value = holder.get(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return value
            if isinstance(value, dict):
                for inner in ("flags", "argv", "arguments"):
                    if isinstance(value.get(inner), list):
                        return value[inner]
    return None


def codegen_flags(flags: list[str]) -> list[str]:
    """The flags that shape generated code; drops input/output/IR-emission flags ccls adds for itself."""
    kept, skip = [], False
    for flag in flags:
        if skip:
            skip = False
            continue
        if flag in ("-o", "-x", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if flag in ("-S", "-c", "-emit-llvm", "-E") or flag.endswith((".c", ".ll", ".bc")) or flag.startswith("-o"):
            continue
        if os.path.basename(flag).startswith(("clang", "gcc", "cc")) and not flag.startswith("-"):
            continue
        kept.append(flag)
    return kept


# ---------------------------------------------------------------- build and measure

def build(flags: list[str]) -> Path:
    BUILD.mkdir(exist_ok=True)
    (BUILD / "driver.c").write_text(generate(HERE / "kernels"))
    objects = []
    for source in sorted({k.file for k in KERNELS}):
        obj = BUILD / (Path(source).stem + ".o")
        _checked([CLANG, *flags, "-c", str(HERE / "kernels" / source), "-o", str(obj)], 120, f"compiling {source}")
        objects.append(str(obj))
    _checked([CLANG, "-O2", "-c", str(BUILD / "driver.c"), "-o", str(BUILD / "driver.o")], 120, "compiling driver.c")
    driver = BUILD / "driver"
    _checked([CLANG, str(BUILD / "driver.o"), *objects, "-lm", "-o", str(driver)], 120, "linking driver")
    # Valgrind 3.19 cannot read clang-19's DWARF 5; callgrind only needs the symbol table, and
    # stripping debug sections leaves the code byte-for-byte the same.
    _checked(["strip", "--strip-debug", str(driver)], 60, "strip --strip-debug")
    return driver


_ANNOTATE_LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(?:\S*:)?(\S+)")


def callgrind_ir(driver: Path, kernel: Kernel) -> tuple[int, dict[str, int]]:
    """(the kernel's self Ir, Ir of any other function collected while inside it)."""
    out = BUILD / f"callgrind.{kernel.name}.out"
    _checked(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--toggle-collect={kernel.name}",
              str(driver), kernel.name, "once", "0", *_sizes(kernel)], CALLGRIND_TIMEOUT_S, f"callgrind {kernel.name}")
    text = _checked(["callgrind_annotate", "--inclusive=no", "--threshold=100", str(out)], 120, "callgrind_annotate")
    per_function: dict[str, int] = {}
    for line in text.splitlines():
        match = _ANNOTATE_LINE.match(line)
        if match and "PROGRAM TOTALS" not in line:
            per_function[match.group(2)] = per_function.get(match.group(2), 0) + int(match.group(1).replace(",", ""))
    if kernel.name not in per_function:
        raise BenchError(f"callgrind_annotate shows no cost for {kernel.name}:\n{text[-2000:]}")
    own = per_function.pop(kernel.name)
    return own, per_function


def time_ns(driver: Path, kernel: Kernel, repeats: int) -> list[tuple[int, int]]:
    """(wall ns, thread CPU ns) of each of `repeats` calls after a warm-up call."""
    argv = [str(driver), kernel.name, "time", str(repeats), *_sizes(kernel)]
    if shutil.which("taskset"):
        argv = ["taskset", "-c", "1" if (os.cpu_count() or 1) > 1 else "0", *argv]
    text = _checked(argv, TIME_TIMEOUT_S, f"timing {kernel.name}")
    samples = [(int(line.split()[1]), int(line.split()[2])) for line in text.splitlines() if line.startswith("ns ")]
    if len(samples) != repeats:
        raise BenchError(f"timing {kernel.name}: expected {repeats} samples, got {len(samples)}")
    return samples


# ---------------------------------------------------------------- environment

def clock_ghz() -> float | None:
    """The clock the kernel reports (/proc/cpuinfo "cpu MHz"), to turn time into nominal cycles."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("cpu MHz"):
                return float(line.split(":", 1)[1]) / 1000.0
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
        for line in _checked(["lscpu"], 30, "lscpu").splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except BenchError:
        pass
    clang = _run([CLANG, "--version"], 30).stdout.splitlines()[:1]
    valgrind = _run(["valgrind", "--version"], 30).stdout.strip()
    commit = _run(["git", "rev-parse", "--short", "HEAD"], 30, cwd=REPO).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "cpu_model": cpu, "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "clang": clang[0] if clang else "unknown", "valgrind": valgrind, "repo_commit": commit,
            "clock_ghz": clock_ghz(),
            "note": "times measured on a shared 2-core KVM guest (other jobs running); medians of repeated runs; "
                    "time = thread CPU time of the call (wall-clock also recorded)"}


# ---------------------------------------------------------------- report

def _si(x: float | None) -> str:
    if x is None or x != x:
        return "—"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}"


def _fmt(x: float, digits: int = 3) -> str:
    return "—" if x != x else f"{x:.{digits}f}"  # NaN → dash


def _pct(x: float) -> str:
    return "—" if x != x else f"{100 * x:.1f}%"


def table(headers: list[str], rows: list[list[str]], text_columns: int = 1) -> str:
    """Plain-text table; the first `text_columns` columns are left-aligned, numbers right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) if i < text_columns else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
            for r in rows]
    return "\n".join(out)


def summarize(rows: list[dict]) -> dict:
    """Agreement of each model with Ir and with time; time is compared as nominal cycles."""
    usable = [r for r in rows if r.get("ccls") and r["ir"] and r["cycles"]]
    # Time (median thread CPU time) is the target's view. Four more: wall-clock time includes time
    # the shared VM gave to other jobs; the fastest repeat is the one they disturbed least; ccls
    # told the data-dependent trip counts (manifest actual_params); and only the kernels whose
    # trip counts do not depend on data, where no early-exit policy can help or hurt.
    every, static = (lambda r: True), (lambda r: not r["actual_trip"])
    views = {  # view -> (measured key, ccls's prediction, kernels taken)
        "instructions": ("ir", lambda c: c["instructions"], every),
        "time": ("cycles", lambda c: c["CU"], every),
        "time_wall": ("cycles_wall", lambda c: c["CU"], every),
        "time_fastest": ("cycles_fastest", lambda c: c["CU"], every),
        "time_actual_trips": ("cycles", lambda c: c.get("CU_actual_trips", c["CU"]), every),
        "time_static_trips": ("cycles", lambda c: c["CU"], static),
    }
    summary: dict = {"kernels": len(usable)}
    for view, (key, predicted, taken) in views.items():
        kept = [r for r in usable if taken(r)]
        truth = [r[key] for r in kept]
        ccls = [predicted(r["ccls"]) for r in kept]
        summary[view] = {"ccls" if view == "instructions" else "ccls CU": asdict(agreement(ccls, truth))}
        for label in BASELINES if view != "time_actual_trips" else ():  # they are never told
            summary[view][label] = asdict(agreement([r["baselines"][label] for r in kept], truth))
    return summary


def render(rows: list[dict], summary: dict, env: dict, flags: list[str], flags_source: str) -> str:
    out = [f"ccls accuracy benchmark — {env['date']}",
           f"CPU: {env['cpu_model']} ({env['cpu_count']} CPUs) · {env['clang']} · {env['valgrind']}",
           f"kernel flags: {' '.join(flags)} ({flags_source})",
           f"ccls --arch {env.get('arch', 'x86_64')}: {env.get('arch_reason', '')}",
           f"NOTE: {env['note']}; load average {env.get('load_before', '?')} before timing, "
           f"{env.get('load_after', '?')} after.", ""]
    targets = {"instructions": "targets: ccls ρ ≥ 0.98, median |err| ≤ 15%, ahead of every baseline",
               "time": "target: ccls ρ ≥ 0.95, ahead of every baseline"}
    titles = {"instructions": "Executed instructions vs callgrind Ir (kernel self cost)",
              "time": "Predicted cost vs measured time (median thread CPU time of the repeats, as "
                      f"cycles = ns × {env.get('clock_ghz') or 1:.3g} GHz)"}
    if not summary["kernels"]:
        out += ["No ccls predictions (--no-ccls, or ccls failed on every kernel): measurements only.", ""]
    for metric in ("instructions", "time") if summary["kernels"] else ():
        out.append(f"{titles[metric]} — {summary['kernels']} kernels; {targets[metric]}")
        body = []
        for model, a in summary[metric].items():
            body.append([model, _fmt(a["spearman_rho"]), _fmt(a["kendall_tau"]), _pct(a["median_abs_rel_err"]),
                         _pct(a["median_abs_rel_err_scaled"]), _si(a["best_scale"])])
        scale_name = "best scale (pred→Ir)" if metric == "instructions" else "best scale (pred→cycles)"
        out.append(table(["model", "Spearman ρ", "Kendall τ", "median |err|", "median |err| @best scale",
                          scale_name], body))
        if metric == "time":
            for view, what in (("time_wall", "against median wall-clock time instead"),
                               ("time_fastest", "against the fastest repeat (thread CPU time) instead"),
                               ("time_actual_trips", "if ccls were told the data-dependent trip counts "
                                                     "(manifest actual_params; not the target's measure)"),
                               ("time_static_trips", f"over the {summary['time_static_trips']['ccls CU']['n']} "
                                                     "kernels whose trip counts do not depend on data")):
                out.append(f"{what}: " + ", ".join(
                    f"{model} ρ {_fmt(a['spearman_rho'])}" for model, a in summary[view].items()))
        out.append("")
    out.append("B1/B2/B3 price ccls's executed IR counts (no machine lowering); their raw |err| compares a "
               "unitless score with Ir, so the @best-scale column is the fair one for them.")
    out.append("")
    body = []
    for r in rows:
        c = r.get("ccls")
        err = relative_error(c["instructions"], r["ir"]) if c and c.get("instructions") and r["ir"] else float("nan")
        body.append([r["kernel"], r["shape"], _si(r["ir"]), _si(c["instructions"]) if c else "—",
                     f"{100 * err:+.1f}%" if err == err else "—", f"{r['time_ms']:.2f}" if r["time_ms"] else "—",
                     _si(r["cycles"]), _si(c["CU"]) if c else "—",
                     _si(r["baselines"].get("B1 uniform")) if c else "—",
                     str(len(c["assumptions"])) if c else r.get("ccls_error", "—")[:40]])
    out.append(table(["kernel", "shape", "callgrind Ir", "ccls instr", "err", "cpu ms", "cycles", "ccls CU", "B1 IR",
                      "assumptions"], body, text_columns=2))
    notes = [f"  {r['kernel']}: in the measured run, {r['actual_trip']}" for r in rows if r["actual_trip"]]
    extra = [f"  {r['kernel']}: callgrind also saw {r['callees']}" for r in rows if r["callees"]]
    if notes or extra:
        out += ["", "data-dependent kernels (ccls may assume a different trip count):", *notes, *extra]
    errors = [f"  {r['kernel']}: {r['ccls_error']}" for r in rows if r.get("ccls_error")]
    if errors:
        out += ["", "ccls errors (kernels left out of the statistics):", *errors]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed calls per kernel in all (≥ 7)")
    parser.add_argument("--rounds", type=int, default=15,
                        help="interleaved passes over the kernels the timed calls are spread over")
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    parser.add_argument("--no-ccls", action="store_true", help="measure only (ccls not needed)")
    parser.add_argument("--json", default=str(HERE / "results" / "latest.json"), help="where to write results")
    parser.add_argument("--arch", default="auto",
                        help="ccls --arch; auto (default): the table measured on this machine if there is one")
    args = parser.parse_args(argv)
    if args.repeats < 7:
        parser.error("--repeats must be at least 7")
    if not 1 <= args.rounds <= args.repeats:
        parser.error("--rounds must be between 1 and --repeats")
    kernels = [k for k in KERNELS if not args.only or k.name in args.only.split(",")]
    if not kernels:
        parser.error(f"no kernel matches --only {args.only}")
    for tool in (CLANG, "valgrind", "callgrind_annotate", "strip"):
        if not shutil.which(tool):
            print(f"run.py: {tool} not found on PATH (Debian: apt-get install clang-19 valgrind binutils)",
                  file=sys.stderr)
            return 2

    record = host_record()
    arch, arch_reason = choose_arch(args.arch, record)
    try:
        docs: dict[str, dict] = {}
        actual_docs: dict[str, dict] = {}  # kernels whose data decides a trip count, at the measured one
        flags, flags_source = DEFAULT_KERNEL_FLAGS, "ccls default: -O2, line tables; no compile database"
        if not args.no_ccls:
            ok, why = ccls_available()
            if not ok:
                print(f"run.py: `python3 -m ccls analyze` is not usable yet ({why}); use --no-ccls to measure only",
                      file=sys.stderr)
                return 2
            for kernel in kernels:
                print(f"ccls analyze {kernel.file} …", file=sys.stderr)
                docs[kernel.name] = ccls_analyze(kernel, arch)
                if kernel.actual_params:  # the real exit as the loop's bound, taken as it is
                    actual_docs[kernel.name] = ccls_analyze(kernel, arch, {**kernel.params, **kernel.actual_params},
                                                            "--early-exit", "worst")
            reported = next((f for f in map(reported_flags, docs.values()) if f), None)
            if reported:
                flags, flags_source = codegen_flags(reported), "as reported in ccls's JSON"
        driver = build(flags)
        env = environment()
        env.update(arch=arch, arch_reason=arch_reason)
        if record is not None:
            # The clock measured on this CPU (boost included) turns time into core cycles, whatever
            # table ccls is asked to use.
            env.update(clock_ghz=record["derived"]["clock_hz"] / 1e9, clock_source="measured (measure_host.py)")
        callgrind: dict[str, tuple[int, dict[str, int], float]] = {}
        for kernel in kernels:
            print(f"callgrind {kernel.name} …", file=sys.stderr)
            started = time.monotonic()
            ir, callees = callgrind_ir(driver, kernel)
            callgrind[kernel.name] = (ir, callees, round(time.monotonic() - started, 1))
        # Interleaved rounds: a burst of load from other jobs on the shared VM then lands on several
        # kernels a little rather than on one kernel's every sample.
        samples: dict[str, list[tuple[int, int]]] = {k.name: [] for k in kernels}
        per_round = [args.repeats // args.rounds + (i < args.repeats % args.rounds) for i in range(args.rounds)]
        env["load_before"] = load_average()
        for round_index, count in enumerate(per_round):
            print(f"timing round {round_index + 1}/{args.rounds} …", file=sys.stderr)
            for kernel in kernels:
                samples[kernel.name] += time_ns(driver, kernel, count)
        env["load_after"] = load_average()
        ghz = env["clock_ghz"] or 1.0
        rows = []
        for kernel in kernels:
            ir, callees, callgrind_s = callgrind[kernel.name]
            cpu_ns = statistics.median(cpu for _, cpu in samples[kernel.name])
            wall_ns = statistics.median(wall for wall, _ in samples[kernel.name])
            fastest_ns = min(cpu for _, cpu in samples[kernel.name])
            row = {"kernel": kernel.name, "file": kernel.file, "shape": kernel.shape, "params": kernel.params,
                   "inputs": kernel.inputs, "actual_trip": kernel.actual_trip, "ir": ir, "callees": callees,
                   "time_ms": cpu_ns / 1e6, "wall_ms": wall_ns / 1e6, "cycles": cpu_ns * ghz,
                   "cycles_wall": wall_ns * ghz, "cycles_fastest": fastest_ns * ghz,
                   "time_samples_ns": [{"wall": w, "cpu": c} for w, c in samples[kernel.name]],
                   "callgrind_s": callgrind_s, "baselines": {}}
            if kernel.name in docs:
                function = pick_function(docs[kernel.name], kernel.name)
                if function is None or function.get("instructions") is None:
                    errs = docs[kernel.name].get("errors") or "function missing or has no instruction estimate"
                    row["ccls_error"] = json.dumps(errs)[:300]
                else:
                    metrics = function.get("metrics", {})
                    row["ccls"] = {"instructions": function["instructions"], "CU": metrics.get("CU"),
                                   "metrics": metrics, "counts": function.get("counts", {}),
                                   "cost_expression": function.get("cost_expression"),
                                   "big_o": function.get("big_o"), "assumptions": function.get("assumptions", [])}
                    row["baselines"] = {label: fn(function.get("counts", {})) for label, fn in BASELINES.items()}
                    actual = pick_function(actual_docs[kernel.name], kernel.name) if kernel.name in actual_docs else None
                    row["ccls"]["CU_actual_trips"] = (actual or function).get("metrics", {}).get("CU")
            rows.append(row)
    except BenchError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 1

    summary = summarize(rows)
    print(render(rows, summary, env, flags, flags_source))
    result = {"schema": "ccls.bench.accuracy/1", "environment": env, "kernel_flags": flags,
              "kernel_flags_source": flags_source, "repeats": args.repeats, "rounds": args.rounds, "gas_schedule": GAS_PRICE_BY_BASE,
              "summary": summary, "kernels": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"\nwrote {os.path.relpath(args.json)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
