"""Measure this machine's core clock, integer divider, cache and DRAM latencies, memory-level
parallelism and stream bandwidth, for a CPU cost table that describes the machine itself.

    python3 cost_tables/derive/measure_host.py x86_64-zen3   # ~1 min; run on an otherwise idle machine
    python3 cost_tables/derive/cpu_tables.py                  # then rebuild the tables from the file

Compiles our own microbenchmarks (host_probe.c, nothing of a user's) with clang-19 -O2, runs them,
and writes host-measurements/<arch>.json: the raw figures, the CPU's identity (/proc/cpuinfo,
/sys cache sizes), the date, and the derived values cpu_tables.py uses. Each figure is the median
of 7 timed repeats inside the probe; this script runs the probe `--runs` times and keeps the
median of those too (shared machines are noisy).
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

HERE = Path(__file__).resolve().parent
OUT = HERE / "host-measurements"


def cpu_identity() -> dict:
    info: dict[str, str] = {}
    cpuinfo = Path("/proc/cpuinfo").read_text()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "cpu family", "model", "stepping") and key not in info:
            info[key] = value.strip()
    caches = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        level, kind = (index / "level").read_text().strip(), (index / "type").read_text().strip()
        if kind in ("Data", "Unified"):
            caches[f"L{level}"] = (index / "size").read_text().strip()
    hypervisor = "hypervisor" in cpuinfo
    return {**info, "caches": caches, "virtualised": hypervisor, "kernel": platform.release()}


def run_probe(runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "host_probe"
        subprocess.run(["clang-19", "-O2", str(HERE / "host_probe.c"), "-o", str(binary)], check=True)
        results = [json.loads(subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout)
                   for _ in range(runs)]
    return _median_tree(results)


def _median_tree(results: list) -> dict | float:
    if isinstance(results[0], dict):
        return {key: _median_tree([r[key] for r in results]) for key in results[0]}
    return statistics.median(results)


def derive(raw: dict) -> dict:
    """The values a cost table needs, from the raw figures."""
    ghz = raw["clock_ghz"]
    chase = {int(size): ns for size, ns in raw["chase_ns"].items()}
    sizes = sorted(chase)
    l1_ns, l2_ns, dram_ns = chase[sizes[0]], chase[sizes[1]], chase[sizes[-1]]
    # The L3 sweep: sizes whose latency is nearer L3's than DRAM's (geometric midpoint) are
    # served by the L3; the largest of them is the share of L3 this core can count on.
    l3_ns = chase[sizes[2]]
    midpoint = (l3_ns * dram_ns) ** 0.5
    in_l3 = [s for s in sizes[2:-1] if chase[s] < midpoint]
    effective_l3 = max(in_l3) if in_l3 else None
    l3_typical = statistics.median(chase[s] for s in in_l3) if in_l3 else l3_ns
    gather_ns = next(iter(raw["gather_ns"].values()))
    reread = raw.get("reread_ns")
    stream = {int(size): v for size, v in raw["stream"].items()}
    biggest = stream[max(stream)]
    return {
        "clock_hz": ghz * 1e9,
        "latency_cycles": {"L1": round(l1_ns * ghz, 1), "L2": round(l2_ns * ghz, 1), "L3": round(l3_typical * ghz, 1)},
        "dram_ns": round(dram_ns, 1),
        "effective_l3_bytes": effective_l3,
        "memory_level_parallelism": round(dram_ns / gather_ns, 1),
        "stream_read_gb_s": biggest["read_gb_s"],
        "stream_copy_gb_s": biggest["copy_gb_s"],
        "divide_cycles": {"i32": round(raw["divl_ns"] * ghz, 2), "i64": round(raw["divq_ns"] * ghz, 2)},
        **({"stream_reuse_bytes": stream_reuse_bytes(reread)} if reread else {}),
        **({"strided_miss_ns": round(statistics.median(raw["strided_ns"].values()), 3)} if "strided_ns" in raw else {}),
    }


def stream_reuse_bytes(reread: dict) -> int | None:
    """How far behind its leading access a re-read still finds a stream's lines: the largest
    tested distance before the first one that costs nearer two streams than one (None: every
    tested distance found them, no limit seen)."""
    midpoint = (reread["one"] + reread["two"]) / 2
    reach = 0
    for distance in sorted(int(d) for d in reread if d.isdigit()):
        if reread[str(distance)] >= midpoint:
            return reach
        reach = distance
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("arch", help="the table this machine's figures are for, e.g. x86_64-zen3")
    parser.add_argument("--runs", type=int, default=3, help="probe runs (median taken)")
    args = parser.parse_args(argv)
    raw = run_probe(args.runs)
    record = {"arch": args.arch, "date": datetime.date.today().isoformat(), "cpu": cpu_identity(),
              "method": "cost_tables/derive/host_probe.c (clang-19 -O2), median of 7 repeats per figure, "
                        f"median of {args.runs} runs", "raw": raw, "derived": derive(raw)}
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{args.arch}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record["derived"], indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
