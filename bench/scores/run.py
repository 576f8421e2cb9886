#!/usr/bin/env python3
"""Do grades discriminate, stay put, and do profiles matter? (issue 13)

    python3 bench/scores/run.py [SUITE_DIR …] [--save DIR] [--load DIR]

SUITE_DIR defaults to ../shared/suites/tsvc_2 and ../shared/suites/embench-iot (public suites
nobody on this project wrote; see their README). A suite that is absent is skipped with a
message. Each suite is one cohort, analysed by the real CLI with its defaults (cohort scoring,
log-minmax normalisation, DEFAULT profile, WORLD region, no --param):

- TSVC 2: `ccls analyze src/tsvc.c` (its headers sit beside it);
- Embench-IoT: `ccls analyze src/<name>/ …` (every benchmark in one call) with the include
  directories and the three macros its build defines (`support/`, the native board's folder,
  GLOBAL_SCALE_FACTOR = CPU_MHZ = WARMUP_HEAT = 1).

Printed per suite:
1. grade spread: the share of the cohort in each grade (target: no grade above 40 %), next to
   what the paper's eq. 4 (linear min–max) gives on the same metrics;
2. the one-outlier test: one function 100× the cohort's largest value of every metric joins; how
   many grade steps does any other function move (target: at most one);
3. HPC ↔ MOBILE: the share of pairs whose order flips, and the pairs with the largest swing:
   which profile prefers which, where on the line between the profiles they cross, and why (each
   function's energy per cycle and the memory share of its energy, when the JSON has parts).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

from ccls.model import Metrics  # noqa: E402
from ccls.scoring import MINMAX, composite_scores, grade_for, profile_flips, weights_at  # noqa: E402
from ccls.tables import load_tables  # noqa: E402

SUITES = REPO.parent / "shared" / "suites"
DEFAULTS = [SUITES / "tsvc_2", SUITES / "embench-iot"]
TARGET_SHARE = 0.40
OUTLIER_FACTOR = 100.0
COMPARABLE = 3.0  # pairs this close in CU are the ones a profile can reorder


def analyze_command(suite: Path) -> tuple[str, list[str]] | None:
    """(name, ccls analyze arguments) for a suite folder, from its layout; None if not known."""
    if (suite / "src" / "tsvc.c").is_file():
        return "TSVC 2", [str(suite / "src" / "tsvc.c")]
    if (suite / "support").is_dir() and (suite / "src").is_dir():
        board = suite / "examples" / "native" / "speed"
        flags = (f"-O2 -I{suite / 'support'} -I{board} -DGLOBAL_SCALE_FACTOR=1 -DCPU_MHZ=1 -DWARMUP_HEAT=1")
        dirs = sorted(str(d) for d in (suite / "src").iterdir() if d.is_dir())
        return "Embench-IoT", dirs + ["--flags", flags]
    return None


def run_suite(suite: Path, save: Path | None, load: Path | None) -> tuple[str, dict] | None:
    found = analyze_command(suite)
    if found is None:
        print(f"skip {suite}: neither TSVC 2 (src/tsvc.c) nor Embench-IoT (src/<name>/, support/)")
        return None
    name, args = found
    cached = load / f"{suite.name}.json" if load else None
    if cached is not None and cached.is_file():
        return name, json.loads(cached.read_text())
    command = [sys.executable, "-m", "ccls", "analyze", *args, "--format", "json"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        print(f"skip {name}: ccls analyze exited {done.returncode}: {done.stderr.strip()[:400]}")
        return None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        (save / f"{suite.name}.json").write_text(done.stdout)
    return name, json.loads(done.stdout)


def _metrics(fn: dict) -> Metrics:
    m = fn["metrics"]
    return Metrics(cu=m["CU"], energy_joules=m["EU"], co2_kg=m["CO2"], usd=m["USD"])


def _log_metrics(metrics: list[Metrics]) -> list[Metrics]:
    """log10 of every metric (0 taken as the cohort's smallest positive value): eq. 4 on these is
    plain min–max of the logarithm, without the percentile ends ccls uses."""
    columns = []
    for field in ("cu", "energy_joules", "co2_kg", "usd"):
        values = [getattr(m, field) for m in metrics]
        floor = min((v for v in values if v > 0), default=1.0)
        columns.append([math.log10(max(v, floor)) for v in values])
    return [Metrics(*row) for row in zip(*columns)]


def spread(grades: list[str], order: list[str]) -> str:
    counts = Counter(grades)
    return "  ".join(f"{g} {100 * counts[g] / len(grades):.0f}%" for g in order)


def report_suite(name: str, doc: dict) -> dict:
    tables = load_tables()
    order = [g for _, g, _ in tables.grades.bands]
    functions = doc["functions"]
    n = len(functions)
    print(f"\n== {name}: {n} functions, {len(doc['errors'])} files with errors; scoring {doc['scoring']}"
          f" ({doc.get('normalization', 'minmax')}), profile {doc['profile']}, region {doc['region']}")
    if n < 2:
        print("  fewer than two functions: nothing to compare")
        return {"functions": n}
    metrics = [_metrics(f) for f in functions]
    profile = tables.profiles[doc["profile"]]
    grades = [f["grade"] for f in functions]
    top_share = max(Counter(grades).values()) / n
    verdict = "ok" if top_share <= TARGET_SHARE else "MISSED"
    print(f"1. grade spread (ccls's own grades): {spread(grades, order)}")
    print(f"   largest grade share {100 * top_share:.0f}% (target ≤ {100 * TARGET_SHARE:.0f}%): {verdict}")
    linear = [grade_for(s, tables.grades)[0] for s in composite_scores(metrics, profile, MINMAX)]
    print(f"   paper eq. 4 on the same metrics:  {spread(linear, order)}")

    logs = _log_metrics(metrics)
    plain = [grade_for(s, tables.grades)[0] for s in composite_scores(logs, profile, MINMAX)]
    print(f"   plain min–max of log10:           {spread(plain, order)}")

    normalization = doc.get("normalization", MINMAX)
    before = composite_scores(metrics, profile, normalization)
    outlier = Metrics(*(OUTLIER_FACTOR * max(getattr(m, f) for m in metrics)
                        for f in ("cu", "energy_joules", "co2_kg", "usd")))
    after = composite_scores(metrics + [outlier], profile, normalization)[:-1]
    steps = [abs(order.index(grade_for(a, tables.grades)[0]) - order.index(grade_for(b, tables.grades)[0]))
             for a, b in zip(before, after)]
    moved = Counter(steps)
    shift = max(abs(a - b) for a, b in zip(before, after))
    verdict = "ok" if max(steps) <= 1 else "MISSED"
    print(f"2. one function {OUTLIER_FACTOR:g}× the costliest joins: grade steps moved "
          + ", ".join(f"{k}: {moved[k]}" for k in sorted(moved))
          + f"; largest score shift {shift:.1f} (target: at most one step): {verdict}")
    steps_linear = [abs(order.index(grade_for(a, tables.grades)[0]) - order.index(grade_for(b, tables.grades)[0]))
                    for a, b in zip(composite_scores(metrics, profile, MINMAX),
                                    composite_scores(metrics + [outlier], profile, MINMAX)[:-1])]
    print(f"   paper eq. 4: {sum(s > 1 for s in steps_linear)} functions move more than one step "
          f"(largest {max(steps_linear)})")
    logs_after = _log_metrics(metrics + [outlier])
    steps_plain = [abs(order.index(grade_for(a, tables.grades)[0]) - order.index(grade_for(b, tables.grades)[0]))
                   for a, b in zip(composite_scores(logs, profile, MINMAX),
                                   composite_scores(logs_after, profile, MINMAX)[:-1])]
    print(f"   plain min–max of log10: {sum(s > 1 for s in steps_plain)} functions move more than one step "
          f"(largest {max(steps_plain)})")

    hpc = [f["scores_by_profile"]["HPC"]["score"] for f in functions]
    mobile = [f["scores_by_profile"]["MOBILE"]["score"] for f in functions]
    flips = profile_flips(hpc, mobile)
    pairs = n * (n - 1) // 2
    print(f"3. HPC ↔ MOBILE: {len(flips)} of {pairs} pairs flip ({100 * len(flips) / pairs:.1f}%)")
    cu = [m.cu for m in metrics]
    close = [(i, j) for i in range(n) for j in range(i + 1, n)
             if cu[i] > 0 and cu[j] > 0 and max(cu[i], cu[j]) <= COMPARABLE * min(cu[i], cu[j])]
    flipped = {(min(f.better_first, f.better_second), max(f.better_first, f.better_second)) for f in flips}
    if close:
        print(f"   among the {len(close)} pairs within {COMPARABLE:g}× of each other in CU: "
              f"{sum(p in flipped for p in close)} flip ({100 * sum(p in flipped for p in close) / len(close):.1f}%); "
              f"pairs further apart are ordered by time in every profile")
    flips.sort(key=lambda f: -abs((hpc[f.better_first] - hpc[f.better_second])
                                  - (mobile[f.better_first] - mobile[f.better_second])))
    for flip in flips[:8]:
        a, b = functions[flip.better_first], functions[flip.better_second]
        w = weights_at(tables.profiles["HPC"], tables.profiles["MOBILE"], flip.t)
        print(f"   HPC prefers {a['name']}, MOBILE prefers {b['name']}; they cross at w = "
              f"({', '.join(f'{x:.2f}' for x in w)}) (CU, EU, CO2, $)")
        print(f"     {_character(a)}\n     {_character(b)}")
        ma, mb = a["metrics"], b["metrics"]
        if ma["CU"] > 0 and mb["EU"] > 0:
            print(f"     why: {a['name']} takes {mb['CU'] / ma['CU']:.2g}× less time ({_kind(a)}), {b['name']} "
                  f"{ma['EU'] / mb['EU']:.2g}× less energy ({_kind(b)})")
    return {"functions": n, "largest_grade_share": top_share, "outlier_max_steps": max(steps),
            "outlier_max_shift": shift, "hpc_mobile_flips": len(flips), "pairs": pairs}


def _kind(fn: dict) -> str:
    """A function's energy character, from its EU parts: waiting, moving data, or computing."""
    parts = (fn.get("metric_parts") or {}).get("EU")
    if not parts or sum(parts.values()) <= 0:
        return "no energy parts"
    total = sum(parts.values())
    static, memory, compute = parts["static"] / total, parts["dynamic_memory"] / total, parts["dynamic_compute"] / total
    if static >= 0.6:
        return f"mostly waiting: {100 * static:.0f}% of its energy is constant power"
    if memory >= compute:
        return f"moving data: {100 * memory:.0f}% of its energy is loads and stores"
    return f"computing: {100 * compute:.0f}% of its energy is operations"


def _character(fn: dict) -> str:
    """Why a function ranks as it does: its time, energy, energy per cycle, memory share."""
    m = fn["metrics"]
    per_cycle = m["EU"] / m["CU"] if m["CU"] > 0 else math.nan
    text = f"{fn['name']}: {m['CU']:.3g} CU, {m['EU']:.3g} J, {per_cycle * 1e12:.0f} pJ/cycle"
    parts = (fn.get("metric_parts") or {}).get("EU")
    if parts:
        total = sum(parts.values()) or 1.0
        text += f"; energy {', '.join(f'{k} {100 * v / total:.0f}%' for k, v in parts.items())}"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", type=Path, default=DEFAULTS)
    parser.add_argument("--save", type=Path, help="write each suite's ccls JSON here")
    parser.add_argument("--load", type=Path, help="read each suite's ccls JSON from here instead of analysing")
    args = parser.parse_args(argv)
    print(f"bench/scores {datetime.date.today().isoformat()} · cost tables {load_tables().version}")
    results = {}
    for suite in args.suites:
        if not suite.is_dir():
            print(f"skip {suite}: not found (the public suites live in ../shared/suites/; pass their paths)")
            continue
        found = run_suite(suite, args.save, args.load)
        if found is not None:
            results[found[0]] = report_suite(*found)
    if not results:
        print("no suite analysed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
