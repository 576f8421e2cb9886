"""Measure, on this machine, what llvm-mca's simulation of a machine block cannot see: what the
C library's math functions (exp, log, sin, pow …) cost per call (the block holds only the call),
how long a value takes to come back through memory when a loop stores it and the next
iteration loads it (the simulation takes loads and stores as independent), and what a column
walk's accesses cost when its stride crowds them into a few L1 sets (the simulation takes them
as L1 hits). For the `fp_transcendental.<function>` classes, the `memory_chain` figures and the
`load/store.L2/L3.crowded` classes of the x86-64 tables.

    python3 cost_tables/derive/measure_beyond_mca.py   # ~1 min; run on an otherwise idle machine
    python3 cost_tables/derive/cpu_tables.py           # then rebuild the tables from the file

Compiles our own probe (beyond_mca_probe.c, nothing of a user's) with clang-19 -O2 -fno-builtin,
runs it `--runs` times and keeps each figure's median, and writes beyond-mca-measurements.json:
the raw nanoseconds, cycles at the probe's measured clock, the CPU, the C library and the date.
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
OUT = HERE / "beyond-mca-measurements.json"


def run_probe(runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "beyond_mca_probe"
        subprocess.run(["clang-19", "-O2", "-fno-builtin", "-D_GNU_SOURCE", str(HERE / "beyond_mca_probe.c"),
                        "-o", str(binary), "-lm"], check=True)
        results = [json.loads(subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout)
                   for _ in range(runs)]
    return {"clock_ghz": statistics.median(r["clock_ghz"] for r in results),
            **{part: {name: statistics.median(r[part][name] for r in results) for name in results[0][part]}
               for part in ("ns_per_call", "chain_ns_per_iteration", "column_walk_ns_per_access")}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="probe runs (median taken)")
    args = parser.parse_args(argv)
    raw = run_probe(args.runs)
    ghz = raw["clock_ghz"]
    record = {
        "date": datetime.date.today().isoformat(), "cpu": cpu_identity(), "libc": " ".join(platform.libc_ver()),
        "method": "cost_tables/derive/beyond_mca_probe.c (clang-19 -O2 -fno-builtin): median of 7 repeats per "
                  f"figure, median of {args.runs} runs; cycles = ns x the probe's clock",
        "raw": raw,
        "cycles_per_call": {name: round(ns * ghz, 1) for name, ns in raw["ns_per_call"].items()},
        "chain_cycles_per_iteration": {name: round(ns * ghz, 2) for name, ns in raw["chain_ns_per_iteration"].items()},
        "column_walk_cycles_per_access": {name: round(ns * ghz, 2)
                                          for name, ns in raw["column_walk_ns_per_access"].items()},
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: record[k] for k in ("cycles_per_call", "chain_cycles_per_iteration",
                                             "column_walk_cycles_per_access")}, indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
