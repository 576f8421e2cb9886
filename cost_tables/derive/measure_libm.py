"""Measure what the C library's math functions (exp, log, sin, pow …) cost per call on this
machine, for the `fp_transcendental.<function>` classes of the x86-64 cost tables.

    python3 cost_tables/derive/measure_libm.py   # ~1 min; run on an otherwise idle machine
    python3 cost_tables/derive/cpu_tables.py     # then rebuild the tables from the file

Compiles our own probe (libm_probe.c, nothing of a user's) with clang-19 -O2 -fno-builtin, runs
it `--runs` times and keeps each figure's median, and writes libm-measurements.json: ns per call,
cycles per call at the probe's measured clock, the CPU, the C library and the date. The figures
are throughput (independent calls in a loop), which is how calls inside a loop body overlap.
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import tempfile
from pathlib import Path

from measure_host import cpu_identity

HERE = Path(__file__).resolve().parent
OUT = HERE / "libm-measurements.json"


def run_probe(runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "libm_probe"
        subprocess.run(["clang-19", "-O2", "-fno-builtin", "-D_GNU_SOURCE", str(HERE / "libm_probe.c"),
                        "-o", str(binary), "-lm"], check=True)
        results = [json.loads(subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout)
                   for _ in range(runs)]
    return {"clock_ghz": statistics.median(r["clock_ghz"] for r in results),
            "ns_per_call": {name: statistics.median(r["ns_per_call"][name] for r in results)
                            for name in results[0]["ns_per_call"]}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="probe runs (median taken)")
    args = parser.parse_args(argv)
    raw = run_probe(args.runs)
    libc = " ".join(platform.libc_ver())
    record = {
        "date": datetime.date.today().isoformat(), "cpu": cpu_identity(), "libc": libc,
        "method": "cost_tables/derive/libm_probe.c (clang-19 -O2 -fno-builtin): independent calls, "
                  f"median of 7 repeats per figure, median of {args.runs} runs; cycles = ns x the probe's clock",
        "raw": raw,
        "cycles_per_call": {name: round(ns * raw["clock_ghz"], 1) for name, ns in raw["ns_per_call"].items()},
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record["cycles_per_call"], indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
