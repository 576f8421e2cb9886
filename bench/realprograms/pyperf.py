"""Python accuracy on real programs: pyperformance's pure-Python benchmarks, per function, CU
against measured self time.

    python3 bench/realprograms/pyperf.py                   # benchmarks from the installed pyperformance
    python3 bench/realprograms/pyperf.py --benchmarks DIR  # a folder of bm_*/run_benchmark.py
    python3 bench/realprograms/pyperf.py --only nbody,go --repeats 3

Ground truth (the benchmark runs the code; ccls never does): each benchmark's run_benchmark.py
runs in a subprocess with a stand-in for pyperf.Runner that calls the benchmarked function once
(bench_time_func: loops = 1): once to warm up, then under one cProfile profiler `--repeats` + 1
times with the garbage collector off (as timeit does), each run after the first read as the
difference of two snapshots (so no run pays for the profiler creating its entries). A function's
measured time per call is the minimum over those runs of

    (its tottime + the tottime of the C builtins it calls directly + that of the comprehensions
     and generator expressions written inside it) / its calls

which is what ccls's CU covers: its own bytecode, the work of builtins it calls, its comprehensions
(inlined), and not its Python callees. cProfile's own cost per call (measured on an empty
function in the same process) is subtracted. Generator functions and coroutines are left out
(cProfile counts each resume as a call; ccls costs a whole run).

ccls: `ccls analyze FILE --format json`, no --param, as a user would run it: a size that reaches a
function through its arguments is evaluated where the file's own calls set it (constants, module
constants, lengths of sequences built there, followed through the call graph), else at the
default (1000; loops of unknown count at 100); what the benchmark passes through pyperf's runner
is not a call ccls can read. The baseline is ccls's own executed bytecode count (JSON counts,
less the py.work.* units: the work inside builtins and instance creation).

Target (issue 12): Python CU vs time Spearman rho >= 0.90. Results: results/pyperformance.json.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RESULTS = HERE / "results" / "pyperformance.json"
TARGET_RHO = 0.90
# Pure-Python benchmarks that need nothing beyond the standard library and pyperf.
BENCHMARKS = ("nbody", "richards", "fannkuch", "spectral_norm", "float", "chaos", "deltablue", "go", "hexiom",
              "nqueens", "raytrace", "pyflate", "meteor_contest", "scimark", "comprehensions", "deepcopy")
GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR
INLINED = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")


def _stats():
    """bench/accuracy/stats.py's agreement(), loaded by path."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("accuracy_stats", REPO / "bench" / "accuracy" / "stats.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.agreement


def default_benchmarks_dir() -> Path | None:
    try:
        import pyperformance
    except ImportError:
        return None
    path = Path(pyperformance.__file__).resolve().parent / "data-files" / "benchmarks"
    return path if path.is_dir() else None


# -- ground truth: runs in a subprocess (`--_profile FILE REPEATS`) ----------------------------
class _Runner:
    """Stands in for pyperf.Runner: records what the benchmark would time."""

    def __init__(self, *args, add_cmdline_args=None, **kwargs):
        self.argparser = argparse.ArgumentParser()
        self.metadata: dict = {}
        self.calls: list[tuple] = []

    def parse_args(self, args=None):
        return self.argparser.parse_args([])

    def bench_func(self, name, func, *args, inner_loops=None):
        self.calls.append((func, args))

    def bench_time_func(self, name, func, *args, inner_loops=None):
        self.calls.append((func, (1,) + args))  # loops = 1

    def bench_async_func(self, name, func, *args, inner_loops=None):
        import asyncio
        self.calls.append((lambda *a: asyncio.run(func(*a)), args))

    def bench_command(self, *args, **kwargs):
        pass


def _profile(path: str, repeats: int) -> dict:
    """Per-function self time per call (ns) and calls, min over repeats; printed as JSON."""
    import cProfile
    import pstats
    import time

    fake = types.ModuleType("pyperf")
    fake.perf_counter = time.perf_counter
    runners: list[_Runner] = []
    fake.Runner = lambda *a, **k: runners.append(_Runner(*a, **k)) or runners[-1]
    sys.modules["pyperf"] = fake
    sys.path.insert(0, str(Path(path).parent))
    sys.argv = [path]
    os.chdir(Path(path).parent)
    code = compile(Path(path).read_text(), path, "exec")
    exec(code, {"__name__": "__main__", "__file__": path})  # the benchmark's own main block

    import gc
    calls = [c for r in runners for c in r.calls]
    for func, args in calls:  # warm-up, unprofiled
        func(*args)
    gc.collect()
    gc.disable()  # as timeit does: a collection's pause would land on whichever function allocated
    calibrations = []
    # One profiler across repeats: the first run pays for creating its entries (charged to the
    # callers); each later run is read as the difference of two snapshots of the totals.
    profiler = cProfile.Profile()
    snapshots = []
    for _ in range(repeats + 1):
        calibrations.extend(_calibrate() for _ in range(5))  # the minimum of several: a busy machine adds
        profiler.enable()
        for func, args in calls:
            func(*args)
        profiler.disable()
        snapshots.append(_totals(pstats.Stats(profiler).stats, path))
        gc.collect()
    best: dict[str, dict] = {}
    for before, after in zip(snapshots, snapshots[1:]):  # the minimum over the runs after the first
        for label, row in after.items():
            prior = before.get(label)
            delta = {k: (v - prior[k] if prior and k not in ("line", "name") else v) for k, v in row.items()}
            if delta["calls"] <= 0:
                continue
            total = delta["tottime_s"] + delta["builtins_s"]
            if label not in best or total < best[label]["tottime_s"] + best[label]["builtins_s"]:
                best[label] = delta
    callee = min(c[0] for c in calibrations)
    caller = max(0.0, min(c[1] for c in calibrations) - min(c[2] for c in calibrations))
    return {"functions": list(best.values()), "profiler_overhead_ns": {"callee": callee, "caller": caller},
            "timed_calls": len(calls)}


def _totals(stats: dict, path: str) -> dict[str, dict]:
    """Per function of `path`: calls, tottime, the time and calls of the C builtins it calls
    directly, and how many calls it makes (cumulative, as the profiler holds them)."""
    builtin_s: dict[tuple, float] = {}
    builtin_calls: dict[tuple, int] = {}
    child_calls: dict[tuple, int] = {}
    for key, (cc, nc, tt, ct, callers) in stats.items():
        for caller, info in callers.items():  # info: (calls, primitive calls, tottime, cumtime)
            if caller[0] != path:
                continue
            child_calls[caller] = child_calls.get(caller, 0) + info[0]
            if key[0] == "~":
                builtin_s[caller] = builtin_s.get(caller, 0.0) + info[2]
                builtin_calls[caller] = builtin_calls.get(caller, 0) + info[0]
    return {f"{key[1]}:{key[2]}": {"line": key[1], "name": key[2], "calls": nc, "tottime_s": tt,
                                    "builtins_s": builtin_s.get(key, 0.0), "builtin_calls": builtin_calls.get(key, 0),
                                    "child_calls": child_calls.get(key, 0)}
            for key, (cc, nc, tt, ct, callers) in stats.items() if key[0] == path}


def _empty():
    pass


def _parent(n):
    for _ in range(n):
        _empty()


def _calibrate(n: int = 20000) -> tuple[float, float, float]:
    """cProfile's own cost, ns: per call, in the called function's tottime; and, per call made,
    the caller's tottime and the same loop's time unprofiled (their difference is cProfile's
    cost in the caller, taken from the minimum of each over several calibrations)."""
    import cProfile
    import pstats
    import time
    _parent(n)
    t0 = time.perf_counter_ns()
    _parent(n)
    bare = (time.perf_counter_ns() - t0) / n
    profiler = cProfile.Profile()
    profiler.runcall(_parent, n)
    stats = pstats.Stats(profiler).stats
    tt = {key[2]: v[2] for key, v in stats.items() if key[2] in ("_empty", "_parent")}
    callee = tt["_empty"] / n * 1e9
    return callee, tt["_parent"] / n * 1e9, bare


# -- ccls ----------------------------------------------------------------------------------
def ccls_functions(path: Path) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "ccls", "analyze", str(path), "--format", "json"],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    if out.returncode not in (0, 1) or not out.stdout.strip():
        raise RuntimeError(f"ccls failed on {path}: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)["functions"]


def generator_lines(path: Path) -> set[int]:
    """First lines of generator functions and coroutines (compiled, not run)."""
    found, todo = set(), [compile(path.read_text(), str(path), "exec")]
    while todo:
        code = todo.pop()
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        if code.co_flags & GENERATOR_FLAGS and code.co_name not in INLINED:
            found.add(code.co_firstlineno)
    return found


def compare(bench: str, path: Path, measured: dict, functions: list[dict]) -> list[dict]:
    """One row per function that both sides know: measured ns per call, CU, bytecode count."""
    callee_ns, caller_ns = measured["profiler_overhead_ns"]["callee"], measured["profiler_overhead_ns"]["caller"]

    def corrected_s(m: dict) -> float:
        """Self time with cProfile's hooks taken out: those of the builtins it calls (counted in
        their time) and those around each call it makes (counted in its own)."""
        return (m["tottime_s"] + m["builtins_s"]
                - (callee_ns * m["builtin_calls"] + caller_ns * m["child_calls"]) * 1e-9)
    generators = generator_lines(path)
    by_line = {}
    for f in functions:
        by_line.setdefault(f["line"], []).append(f)
    rows: dict[str, dict] = {}
    spans = sorted(((f["line"], f["end_line"], f) for f in functions), key=lambda t: t[1] - t[0])
    inlined = []
    for m in measured["functions"]:
        if m["name"] in INLINED:
            inlined.append(m)
            continue
        match = [f for f in by_line.get(m["line"], []) if f["name"].split(".")[-1] == m["name"]]
        if not match or m["line"] in generators:
            continue
        f = match[0]
        rows[f["name"]] = {"benchmark": bench, "function": f["name"], "line": f["line"], "calls": m["calls"],
                           "self_s": corrected_s(m), "raw_s": m["tottime_s"] + m["builtins_s"],
                           "cu": f["metrics"]["CU"],
                           "bytecodes": sum(v for k, v in f["counts"].items() if not k.startswith("py.work.")),
                           "big_o": f["big_o"], "cost_expression": f["cost_expression"],
                           "defaults": [a for a in f["assumptions"] if a.startswith("numbers evaluated at")
                                        or "assumed" in a and ("iterations" in a or "not known" in a)]}
    for m in inlined:  # a comprehension's time belongs to the function it is written in (ccls inlines it)
        owner = next((f for lo, hi, f in spans if lo <= m["line"] <= hi and f["name"] in rows), None)
        if owner is not None:
            rows[owner["name"]]["self_s"] += corrected_s(m) - callee_ns * m["calls"] * 1e-9
            rows[owner["name"]]["raw_s"] += m["tottime_s"] + m["builtins_s"]
    out = []
    for r in rows.values():
        raw = r.pop("raw_s") / r["calls"] * 1e9
        per_call = r.pop("self_s") / r["calls"] * 1e9 - callee_ns
        r["measured_ns_per_call"] = round(max(per_call, raw * 0.05), 2)  # a floor: never 0 or negative
        r["measured_ns_per_call_raw"] = round(raw, 2)
        out.append(r)
    return out


def run(bench_dir: Path, names: list[str], repeats: int) -> dict:
    agreement = _stats()
    rows, skipped = [], []
    for name in names:
        path = (bench_dir / f"bm_{name}" / "run_benchmark.py").resolve()
        if not path.exists():
            skipped.append(f"{name}: {path} not found")
            continue
        proc = subprocess.run([sys.executable, __file__, "--_profile", str(path), str(repeats)],
                              capture_output=True, text=True, timeout=1200)
        if proc.returncode != 0:
            skipped.append(f"{name}: the benchmark failed: {proc.stderr.strip().splitlines()[-1:]}")
            continue
        measured = json.loads(proc.stdout.strip().splitlines()[-1])
        got = compare(name, path, measured, ccls_functions(path))
        oh = measured["profiler_overhead_ns"]
        print(f"{name:16s} {len(got):3d} functions  (cProfile's own cost: {oh['callee']:.0f} ns per call in the "
              f"callee, {oh['caller']:.0f} ns per call made in the caller)", flush=True)
        rows.extend(got)
    times = [r["measured_ns_per_call"] for r in rows]
    summary = {}
    for label, key in (("CU", "cu"), ("bytecode count (baseline)", "bytecodes")):
        a = agreement([r[key] for r in rows], times)
        summary[label] = {"n": a.n, "spearman_rho": round(a.spearman_rho, 3), "kendall_tau": round(a.kendall_tau, 3),
                          "best_scale_ns_per_unit": round(a.best_scale, 4),
                          "median_abs_rel_err_at_best_scale": round(a.median_abs_rel_err_scaled, 3)}
    known = [r for r in rows if not r["defaults"]]
    a = agreement([r["cu"] for r in known], [r["measured_ns_per_call"] for r in known])
    b = agreement([r["bytecodes"] for r in known], [r["measured_ns_per_call"] for r in known])
    summary["CU, functions whose counts use no default size"] = {
        "n": a.n, "spearman_rho": round(a.spearman_rho, 3), "kendall_tau": round(a.kendall_tau, 3),
        "median_abs_rel_err_at_best_scale": round(a.median_abs_rel_err_scaled, 3)}
    summary["bytecode count, the same functions"] = {
        "n": b.n, "spearman_rho": round(b.spearman_rho, 3), "kendall_tau": round(b.kendall_tau, 3),
        "median_abs_rel_err_at_best_scale": round(b.median_abs_rel_err_scaled, 3)}
    raw = agreement([r["cu"] for r in rows], [r["measured_ns_per_call_raw"] for r in rows])
    summary["CU vs time without the profiler-overhead correction"] = {
        "n": raw.n, "spearman_rho": round(raw.spearman_rho, 3), "kendall_tau": round(raw.kendall_tau, 3)}
    scale = summary["CU"]["best_scale_ns_per_unit"]
    for r in rows:
        r["ratio_at_best_scale"] = round(r["cu"] * scale / r["measured_ns_per_call"], 3)
    worst = sorted(rows, key=lambda r: -abs(math.log(r["ratio_at_best_scale"])) if r["ratio_at_best_scale"] > 0
                   else -math.inf)[:10]
    return {"python": sys.version.split()[0], "benchmarks_dir": str(bench_dir), "repeats": repeats,
            "target": {"spearman_rho_cu_vs_time": TARGET_RHO}, "summary": summary, "skipped": skipped,
            "worst_by_ratio": [{k: r[k] for k in ("benchmark", "function", "ratio_at_best_scale", "cu",
                                                  "measured_ns_per_call", "calls", "big_o")} for r in worst],
            "functions": rows}


def print_report(result: dict) -> None:
    s = result["summary"]
    print(f"\npyperformance, {s['CU']['n']} functions from {len(set(r['benchmark'] for r in result['functions']))} "
          "benchmarks (ccls at its default sizes, no --param)")
    print(f"{'':48s} {'rho':>6s} {'tau':>6s} {'med|err| at best scale':>24s}")
    for label in ("CU", "bytecode count (baseline)", "CU, functions whose counts use no default size",
                  "bytecode count, the same functions"):
        a = s[label]
        print(f"{label:48s} {a['spearman_rho']:6.3f} {a['kendall_tau']:6.3f} "
              f"{a['median_abs_rel_err_at_best_scale']:23.1%}  (n = {a['n']})")
    rho = s["CU"]["spearman_rho"]
    print(f"target: CU vs time rho >= {TARGET_RHO:.2f}: {'met' if rho >= TARGET_RHO else 'NOT met'} ({rho:.3f})")
    print("\nworst 10 by ratio (CU at best scale / measured):")
    for r in result["worst_by_ratio"]:
        print(f"  {r['ratio_at_best_scale']:9.3g}x  {r['benchmark']}:{r['function']}  ({r['calls']} calls, "
              f"{r['measured_ns_per_call']:.0f} ns/call, {r['big_o']})")
    for line in result["skipped"]:
        print(f"skipped {line}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_profile"]:
        print(json.dumps(_profile(argv[1], int(argv[2]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=Path, help="folder holding bm_*/run_benchmark.py "
                        "(default: the installed pyperformance package's data-files/benchmarks)")
    parser.add_argument("--only", help="comma-separated benchmark names (default: %s)" % ",".join(BENCHMARKS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    bench_dir = args.benchmarks or default_benchmarks_dir()
    if bench_dir is None or not bench_dir.is_dir():
        print(f"skipped: no pyperformance benchmarks ({args.benchmarks or 'pyperformance is not installed'}); "
              "pip install pyperformance, or pass --benchmarks DIR")
        return 0
    names = args.only.split(",") if args.only else list(BENCHMARKS)
    result = run(bench_dir, names, args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print_report(result)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
