"""Measure, on this machine, what llvm-mca's simulation of a machine block cannot see: what the
C library's math functions (exp, log, sin, pow …) cost per call (the block holds only the call),
how long a value takes to come back through memory when a loop stores it and the next
iteration loads it (the simulation takes loads and stores as independent), and what a column
walk's accesses cost when its stride crowds them into a few L1 sets (the simulation takes them
as L1 hits). For the `fp_transcendental.<function>` classes, the `memory_chain` figures and the
`load/store.L2/L3.crowded` classes of the x86-64 tables; and what the same walk's load costs when
the walk also stores (its load waits for a store to the same page offset a few rows back):
the `load.L2/L3.crowded.aliased` classes.

    python3 cost_tables/derive/measure_beyond_mca.py   # ~1 min; run on an otherwise idle machine
    python3 cost_tables/derive/measure_beyond_mca.py --only column  # the column walks alone, added
                                                       # to the file's other figures
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


PARTS = ("ns_per_call", "chain_ns_per_iteration", "column_walk_ns_per_access", "column_update_ns_per_row")
COLUMN_PARTS = ("column_walk_ns_per_access", "column_update_ns_per_row")


def run_probe(runs: int, only: str | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "beyond_mca_probe"
        subprocess.run(["clang-19", "-O2", "-fno-builtin", "-D_GNU_SOURCE", str(HERE / "beyond_mca_probe.c"),
                        "-o", str(binary), "-lm"], check=True)
        argv = [str(binary)] + (["--only", only] if only else [])
        results = [json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
                   for _ in range(runs)]
    return {"clock_ghz": statistics.median(r["clock_ghz"] for r in results),
            **{part: {name: statistics.median(r[part][name] for r in results) for name in results[0][part]}
               for part in PARTS if part in results[0]}}


def aliased_load_cycles(raw: dict, ghz: float) -> dict[str, float]:
    """Cycles of the load in a column walk that loads and stores each element: the walk's time per
    row less its store's (the store-only walk of the same run, same tier)."""
    return {f"load.{tier}": round((ns - raw["column_walk_ns_per_access"][f"store.{tier}"]) * ghz, 2)
            for tier, ns in raw["column_update_ns_per_row"].items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="probe runs (median taken)")
    parser.add_argument("--only", choices=("column",),
                        help="measure the column walks alone and add them to the file's other figures")
    args = parser.parse_args(argv)
    raw = run_probe(args.runs, args.only)
    ghz = raw["clock_ghz"]
    if args.only:
        # The walks' own figures beside the file's others, with their own date and CPU: the
        # crowded classes and the aliased load come from this run's walks (cpu_tables.py).
        record = json.loads(OUT.read_text())
        record["column_update"] = {
            "date": datetime.date.today().isoformat(), "cpu": cpu_identity(),
            "method": "cost_tables/derive/beyond_mca_probe.c --only column (clang-19 -O2 -fno-builtin): median "
                      f"of 7 repeats per figure, median of {args.runs} runs; cycles = ns x the probe's clock",
            "raw": {"clock_ghz": ghz, **{part: raw[part] for part in COLUMN_PARTS}},
            "column_walk_cycles_per_access": {name: round(ns * ghz, 2)
                                              for name, ns in raw["column_walk_ns_per_access"].items()},
            "aliased_load_cycles": aliased_load_cycles(raw, ghz)}
        OUT.write_text(json.dumps(record, indent=1) + "\n")
        print(json.dumps(record["column_update"], indent=1))
        print(f"wrote {OUT}")
        return
    record = {
        "date": datetime.date.today().isoformat(), "cpu": cpu_identity(), "libc": " ".join(platform.libc_ver()),
        "method": "cost_tables/derive/beyond_mca_probe.c (clang-19 -O2 -fno-builtin): median of 7 repeats per "
                  f"figure, median of {args.runs} runs; cycles = ns x the probe's clock",
        "raw": raw,
        "cycles_per_call": {name: round(ns * ghz, 1) for name, ns in raw["ns_per_call"].items()},
        "chain_cycles_per_iteration": {name: round(ns * ghz, 2) for name, ns in raw["chain_ns_per_iteration"].items()},
        "column_walk_cycles_per_access": {name: round(ns * ghz, 2)
                                          for name, ns in raw["column_walk_ns_per_access"].items()},
        "column_update": {"raw": {part: raw[part] for part in COLUMN_PARTS},
                          "column_walk_cycles_per_access": {name: round(ns * ghz, 2)
                                                            for name, ns in raw["column_walk_ns_per_access"].items()},
                          "aliased_load_cycles": aliased_load_cycles(raw, ghz)},
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: record[k] for k in ("cycles_per_call", "chain_cycles_per_iteration",
                                             "column_walk_cycles_per_access")}, indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
