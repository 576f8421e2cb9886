#!/usr/bin/env python3
"""Real-programs benchmark: ccls on public suites nobody on the project wrote, run as a user runs it.

    python3 bench/realprograms/run.py --suite tsvc --path /work/shared/suites/tsvc_2
    python3 bench/realprograms/run.py --suite embench --path /work/shared/suites/embench-iot
    python3 bench/realprograms/run.py --suite polybench --path DIR   # PolyBench/C 4.2.1 checkout
    python3 bench/realprograms/run.py --suite all --suites-dir /work/shared/suites
    python3 bench/realprograms/run.py --markdown            # results/*.json as a Markdown table

Each suite is copied into a work directory outside the project (--work), built with its own flags
and a generated compile_commands.json, measured (callgrind self Ir per function, thread-CPU time
of the timed region) and analysed with `ccls analyze FILES --format json` (never --param).
Measurements are cached in the work directory, keyed by the suite's sources, flags and harness:
a second run only re-runs ccls (--remeasure measures again; --no-ccls measures only).
See README.md.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness as H  # noqa: E402

# Suite name → (folder under --suites-dir, module implementing run(suite, work, args, log)).
# pyperformance is measured by another part of the project; its module plugs in here.
REGISTRY: dict[str, tuple[str, str]] = {
    "tsvc": ("tsvc_2", "tsvc"),
    "embench": ("embench-iot", "embench"),
    "polybench": ("polybench", "polybench"),
    "pyperformance": ("pyperformance", "pyperformance_suite"),
}
# Where to get a suite that is not in /work/shared/suites (printed when its folder is absent).
WHERE_TO_GET = {
    "polybench": "get it with `git clone https://github.com/MatthiasJReisinger/PolyBenchC-4.2.1 DIR` "
                 "(PolyBench/C 4.2.1) and pass --path DIR, or put it at SUITES_DIR/polybench",
}
RESULTS = HERE / "results"
DEFAULT_WORK = Path(os.environ.get("CCLS_REALPROGRAMS_WORK", "/tmp/ccls-realprograms"))


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- summary

def summarize(result: dict) -> dict:
    """Agreement tables of one suite result: instructions (per function) and time (per kernel or
    per program)."""
    summary: dict = {}
    rows = [r for r in result["functions"] if r.get("ccls") and r.get("ir")]
    if rows:
        models = {"ccls": [r["ccls"]["instructions"] for r in rows]}
        for label in ("B1 uniform", "B2 mem×10", "B3 gas-like"):
            models[label] = [r["ccls"]["baselines"].get(label) for r in rows]
        summary["instructions"] = H.summarize_pairs(models, [r["ir"] for r in rows])
    timed = [r for r in (result.get("programs") or result["functions"]) if r.get("ccls") and r.get("timed")]
    if timed:
        per_program = "programs" in result
        cycles = [r["cycles"] for r in timed]
        models = {"ccls CU": [r["ccls"]["CU_for_time"] for r in timed]}
        for label in ("B1 uniform", "B2 mem×10", "B3 gas-like"):
            models[label] = [r["ccls"]["baselines"].get(label) for r in timed]
        models[H.B4] = [r["ccls"].get("instructions") for r in timed]
        models["ref: measured Ir"] = [r.get("ir_inclusive") or r.get("ir_region") for r in timed]
        summary["time"] = H.summarize_pairs(models, cycles)
        if per_program:
            for label in ("B1 uniform", "B2 mem×10", "B3 gas-like", H.B4):
                summary["time"][label]["note"] = "n/a: ccls's JSON has per-function self counts only"
        clock = result["clock_hz"] / 1e9
        ccls_cu = models["ccls CU"]
        summary["time_wall"] = H.summarize_pairs({"ccls CU": ccls_cu}, [r["wall_ms"] * 1e6 * clock for r in timed])
        summary["time_fastest"] = H.summarize_pairs({"ccls CU": ccls_cu},
                                                    [r["fastest_ms"] * 1e6 * clock for r in timed])
    return summary


def worst(result: dict) -> dict:
    out = {}
    rows = [r for r in result["functions"] if r.get("ccls")]
    out["instructions"] = [
        {"name": n, "ccls": p, "measured": m, "ratio": q} for n, p, m, q in
        H.worst_by_ratio(rows, lambda r: r["ccls"]["instructions"], lambda r: r.get("ir"))]
    timed = [r for r in (result.get("programs") or result["functions"]) if r.get("ccls") and r.get("timed")]
    scale = (result.get("summary", {}).get("time", {}).get("ccls CU", {}) or {}).get("best_scale")
    if timed:
        # Ranked by the raw ratio: CU is meant to be cycles, and the best scale is itself pulled
        # by the outliers this list is for; the ratio at the best scale is shown beside it.
        scale = scale if scale and scale == scale else 1.0
        ranked = H.worst_by_ratio(timed, lambda r: r["ccls"]["CU_for_time"], lambda r: r["cycles"])
        out["time"] = [{"name": n, "ccls": p, "measured": m, "ratio": q, "ratio_scaled": q * scale}
                       for n, p, m, q in ranked]
    return out


# ---------------------------------------------------------------- report

def render(result: dict) -> str:
    s = result.get("summary", {})
    env = result["measured"].get("environment", {})
    out = [f"=== {result['suite']}: {result['source']}",
           f"measured {env.get('date', '?')} on {env.get('cpu_model', '?')} ({env.get('cpu_count', '?')} CPUs), "
           f"{env.get('clang', '?')}; load {result['measured'].get('load_before')} → {result['measured'].get('load_after')}",
           f"build flags: {' '.join(result['flags'])}; config: "
           + ", ".join(f"{k}={v}" for k, v in result["config"].items() if k not in ("patches", "defines")),
           ]
    if result["config"].get("patches"):
        out.append("patched in the private copy: " + "; ".join(result["config"]["patches"]))
    if result["config"].get("defines"):
        out.append("defines: " + " ".join(result["config"]["defines"]))
    ccls = result.get("ccls")
    if ccls:
        out.append(f"ccls: {ccls.get('seconds')} s, compiled at {ccls.get('level')}; table {ccls.get('arch')} "
                   f"({result.get('arch_reason', '')})")
    else:
        out.append("ccls: not run (--no-ccls)")
    out.append(f"time = median thread CPU time of the timed region, as cycles at {result['clock_hz'] / 1e9:.3g} GHz "
               f"({result.get('clock_source')})")
    out.append("")
    if "instructions" in s:
        what = result.get("describe", {}).get("instructions") or (
            "per kernel (self Ir of the kernel inside its timed region)" if result["suite"] == "tsvc" else
            "per function (self Ir per call, while benchmark() runs)")
        out.append(H.render_summary(f"Executed instructions vs callgrind Ir, {what}", s["instructions"],
                                    "instructions", "best scale"))
        out.append("")
    if "time" in s:
        what = result.get("describe", {}).get("time") or (
            "per kernel (inclusive CU: tsvc.c and dummy.c analysed together)" if result["suite"] == "tsvc" else
            "per program (inclusive CU of benchmark(): the program's .c files and beebsc.c analysed together)")
        out.append(H.render_summary(f"CU vs measured time, {what}", s["time"], "time", "best scale (→cycles)"))
        notes = {m: a["note"] for m, a in s["time"].items() if a.get("note")}
        if notes:
            out.append(f"  ({', '.join(notes)}: {next(iter(notes.values()))})")
        out.append(f"  against median wall-clock instead: ccls CU ρ {H._fmt(s['time_wall']['ccls CU']['spearman_rho'])}; "
                   f"against the fastest call: ρ {H._fmt(s['time_fastest']['ccls CU']['spearman_rho'])}")
        out.append("")
    w = result.get("worst", {})
    by_name = {r["name"]: r for r in result["functions"] + result.get("programs", [])}
    if w.get("instructions"):
        out.append(H.render_worst("Worst 10 by instructions ratio (ccls / callgrind Ir):",
                                  [(x["name"], x["ccls"], x["measured"], x["ratio"]) for x in w["instructions"]]))
        out.append("")
    if w.get("time"):
        rows = [[x["name"], H.si(x["ccls"]), H.si(x["measured"]), f"{x['ratio']:.3g}×", f"{x['ratio_scaled']:.3g}×",
                 callee_note(by_name.get(x["name"], {}))] for x in w["time"]]
        headers = ["function", "ccls CU", "cycles", "ratio", "ratio @best scale", "timed region also ran"]
        if not any(r[-1] for r in rows):
            rows, headers = [r[:-1] for r in rows], headers[:-1]
        out.append("Worst 10 by time ratio (ccls CU / measured cycles):\n" + H.table(headers, rows))
        out.append("")
    skipped = [r for r in (result.get("programs") or result["functions"]) if not r.get("timed")]
    if skipped:
        out.append("left out of the time statistics (timed region < "
                   f"{result['config'].get('min_time_ns', 0) / 1000:.0f} µs): "
                   + ", ".join(f"{r['name']} ({r['time_ms'] * 1000:.1f} µs)" for r in skipped))
    errors = [f"  {r['name']}: {r['ccls_error']}" for r in result["functions"] + result.get("programs", [])
              if r.get("ccls_error")]
    if errors:
        out += [f"not in ccls's output ({len(errors)}):", *errors[:30]]
        if len(errors) > 30:
            out.append(f"  … and {len(errors) - 30} more")
    for program, message in (result.get("failed") or {}).items():
        out.append(f"FAILED {program}: {message}")
    if ccls and ccls.get("errors"):
        out.append(f"ccls errors: {json.dumps(ccls['errors'])[:1000]}")
    return "\n".join(out)


def callee_note(row: dict) -> str:
    """`memcpy 99%`: other functions' share of the measured region's Ir (TSVC rows)."""
    region = row.get("ir_region") or 0
    parts = [f"{fn} {100 * ir / region:.0f}%" for fn, ir in (row.get("callees_ir") or {}).items() if region]
    return ", ".join(parts[:3])


def render_rows(result: dict) -> str:
    """Every row: measured and predicted, for --all-rows."""
    out = []
    body = []
    for r in result["functions"]:
        c = r.get("ccls") or {}
        ratio = c["instructions"] / r["ir"] if c.get("instructions") and r.get("ir") else None
        body.append([r["name"], H.si(r.get("ir")), H.si(c.get("instructions")), H._fmt(ratio, 3),
                     f"{r['time_ms']:.3f}" if "time_ms" in r else "", H.si(r.get("cycles")),
                     H.si(c.get("CU_for_time") or c.get("CU")), callee_note(r) or r.get("ccls_error", "")])
    out.append(H.table(["function", "callgrind Ir", "ccls instr", "ratio", "cpu ms", "cycles", "ccls CU",
                        "note"], body))
    if result.get("programs"):
        body = [[r["name"], f"{r['time_ms']:.3f}", H.si(r["cycles"]), H.si(r.get("ir_inclusive")),
                 H.si((r.get("ccls") or {}).get("CU_for_time")),
                 H._fmt((r.get("ccls") or {}).get("CU_for_time", 0) / r["cycles"] if r.get("ccls") else None)]
                for r in result["programs"]]
        out.append("")
        out.append(H.table(["program", "cpu ms", "cycles", "callgrind Ir (incl.)", "ccls CU (incl.)", "ratio"], body))
    return "\n".join(out)


def markdown() -> str:
    lines = ["| suite | comparison | n | ccls ρ | ccls τ | median \\|err\\| | median ratio | \\|err\\| @best scale "
             "| B1 / B2 / B3 ρ | B4 (instr.) ρ | measured Ir ρ | target |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for path in sorted(RESULTS.glob("*.json")):
        result = json.loads(path.read_text())
        for metric, label, model in (("instructions", "instructions vs callgrind Ir", "ccls"),
                                     ("time", "CU vs time (cycles)", "ccls CU")):
            block = result.get("summary", {}).get(metric)
            if not block:
                continue
            a = block[model]
            base = " / ".join(H._fmt(block[b]["spearman_rho"]) if not block[b].get("note") else "n/a"
                              for b in ("B1 uniform", "B2 mem×10", "B3 gas-like"))
            b4 = block.get(H.B4)
            b4_text = "—" if not b4 or b4.get("note") else H._fmt(b4["spearman_rho"])
            verdict = H.target_verdict(metric, block).split(":")[0]
            ref = block.get("ref: measured Ir")
            ref_text = H._fmt(ref["spearman_rho"]) if ref else "—"
            ccls = result.get("ccls") or {}
            when = f"ccls {ccls.get('repo_commit', '?')}{'+' if ccls.get('uncommitted_ccls_changes') else ''}"
            lines.append(f"| {result['suite']} ({when}) "
                         f"| {label} | {a['n']} | {H._fmt(a['spearman_rho'])} | {H._fmt(a['kendall_tau'])} "
                         f"| {H._pct(a['median_abs_rel_err'])} | {H._fmt(a['median_ratio'])} "
                         f"| {H._pct(a['median_abs_rel_err_scaled'])} | {base} | {b4_text} | {ref_text} | {verdict} |")
    return "\n".join(lines)


def small(result: dict) -> dict:
    """The JSON written to results/: per function the measured and predicted figures and the summary."""
    keep = ("name", "function", "holder", "ir", "ir_region", "callees_ir", "ir_total", "calls", "ir_inclusive", "time_ms", "wall_ms", "cycles", "timed",
            "ccls_error")

    def row(r):
        out = {k: r[k] for k in keep if k in r}
        c = r.get("ccls")
        if c:
            out["ccls"] = {k: c.get(k) for k in ("instructions", "instructions_self", "CU", "CU_inclusive",
                                                 "CU_for_time", "cost_expression", "n_assumptions") if k in c}
            if c.get("baselines"):
                out["ccls"]["baselines"] = c["baselines"]
        return out

    out = {k: v for k, v in result.items() if k not in ("functions", "programs")}
    out["functions"] = [row(r) for r in result["functions"]]
    if "programs" in result:
        out["programs"] = [row(r) for r in result["programs"]]
    return out


# ---------------------------------------------------------------- main

def run_suite(name: str, path: Path, args) -> int:
    folder, module_name = REGISTRY[name]
    standalone = " (its standalone harness: python3 bench/realprograms/pyperf.py)" \
        if name == "pyperformance" and (HERE / "pyperf.py").exists() else ""
    if not path.is_dir():
        where = f" ({WHERE_TO_GET[name]})" if name in WHERE_TO_GET else ""
        print(f"{name}: suite not found at {path}; skipped{standalone}{where}")
        return 0
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        print(f"{name}: no harness module `{module_name}.py` with run(suite, work, args, log) in "
              f"bench/realprograms yet; skipped{standalone}")
        return 0
    tools = [H.CLANG, "valgrind", "strip", "objcopy", "nm"]
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        print(f"{name}: needs {', '.join(missing)} on PATH (Debian: apt-get install clang-19 valgrind binutils); skipped")
        return 0
    started = time.monotonic()
    work = Path(args.work).resolve()
    if str(work).startswith(str(H.REPO) + os.sep):
        print("--work must be outside the project (suites are copied there)", file=sys.stderr)
        return 2
    try:
        result = module.run(path.resolve(), work, args, log)
    except H.BenchError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 1
    if result.get("ccls"):
        result["ccls"]["date"] = H.datetime.datetime.now(H.datetime.timezone.utc).isoformat(timespec="seconds")
        result["ccls"]["repo_commit"] = H.run_cmd(["git", "rev-parse", "--short", "HEAD"], 30, cwd=H.REPO).stdout.strip()
        dirty = H.run_cmd(["git", "status", "--porcelain", "--", "ccls", "cost_tables"], 30, cwd=H.REPO).stdout
        result["ccls"]["uncommitted_ccls_changes"] = bool(dirty.strip())
    result["arch_reason"] = args.arch_reason
    result["clock_source"] = args.clock_source
    result["clock_hz"] = args.clock_hz
    result["summary"] = summarize(result)
    result["worst"] = worst(result)
    result["run_seconds"] = round(time.monotonic() - started, 1)
    result["schema"] = "ccls.bench.realprograms/1"
    print(render(result))
    if args.all_rows:
        print("\n" + render_rows(result))
    print(f"({name}: {result['run_seconds']} s)\n")
    if args.only and not args.json_dir:
        log("--only: results/ not written (a partial run); use --json-dir to keep it")
    elif not args.no_ccls:
        RESULTS.mkdir(exist_ok=True)
        target = Path(args.json_dir) / f"{name}.json" if args.json_dir else RESULTS / f"{name}.json"
        target.write_text(json.dumps(small(result), indent=1, ensure_ascii=False) + "\n")
        log(f"wrote {os.path.relpath(target)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=[*REGISTRY, "all"], help="which suite")
    parser.add_argument("--path", help="the suite's folder (with --suite NAME)")
    parser.add_argument("--suites-dir", default="/work/shared/suites", help="folder holding every suite (--suite all)")
    parser.add_argument("--work", default=str(DEFAULT_WORK), help="work directory outside the project "
                        "(private suite copies, builds, cached measurements)")
    parser.add_argument("--remeasure", action="store_true", help="measure again even if cached measurements match")
    parser.add_argument("--no-ccls", action="store_true", help="measure only (and cache); do not run ccls")
    parser.add_argument("--arch", default="auto", help="ccls --arch: auto (default) = the table measured on this "
                        "CPU if there is one, else ccls's default; 'default' = never pass --arch; or a table name")
    parser.add_argument("--jobs", type=int, default=2, help="parallel callgrind / ccls processes")
    parser.add_argument("--rounds", type=int, default=10, help="TSVC timing rounds (one process each)")
    parser.add_argument("--tsvc-per-round", type=int, default=2, help="calls of each TSVC kernel per round")
    parser.add_argument("--tsvc-iterations", type=int, default=256, help="value patched into TSVC's "
                        "`#define iterations` (suite: 100000)")
    parser.add_argument("--embench-runs", type=int, default=25, help="timed runs (processes) per Embench program")
    parser.add_argument("--polybench-runs", type=int, default=9, help="timed runs (processes) per PolyBench kernel")
    parser.add_argument("--polybench-dataset", default="MEDIUM_DATASET",
                        choices=["MINI_DATASET", "SMALL_DATASET", "MEDIUM_DATASET", "LARGE_DATASET", "EXTRALARGE_DATASET"],
                        help="PolyBench's dataset macro (-D)")
    parser.add_argument("--json-dir", default="", help="write <suite>.json here instead of results/")
    parser.add_argument("--only", default="", help="Embench programs or PolyBench kernels, comma-separated (quicker ccls re-runs); "
                        "results/ is then not written")
    parser.add_argument("--all-rows", action="store_true", help="also print every function's (and program's) row")
    parser.add_argument("--markdown", action="store_true", help="print results/*.json as a Markdown table and exit")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown())
        return 0
    if not args.suite:
        parser.error("--suite is required (or --markdown)")
    args.arch_flag, args.arch_reason, measured_clock = H.choose_arch(args.arch)
    if measured_clock:
        args.clock_hz, args.clock_source = measured_clock, "measured on this CPU by measure_host.py"
    else:
        args.clock_hz, args.clock_source = (H.nominal_clock_hz() or 1e9), "nominal, /proc/cpuinfo cpu MHz"
    if args.suite == "all":
        rc = 0
        for name, (folder, _) in REGISTRY.items():
            rc = max(rc, run_suite(name, Path(args.suites_dir) / folder, args))
        return rc
    path = Path(args.path) if args.path else Path(args.suites_dir) / REGISTRY[args.suite][0]
    return run_suite(args.suite, path, args)


if __name__ == "__main__":
    sys.exit(main())
