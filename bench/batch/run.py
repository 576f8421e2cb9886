"""Batch speed of `ccls analyze` against bare `clang-19 -O2 -c` of the same files.

Prints, for generated C (FILES × FUNCTIONS, `generate.py`) and for a real source tree given as
`--repo DIR`: bare clang (one process per file, as many at once as ccls uses), ccls cold (an
empty count cache), ccls warm (the same command again), and ccls cold with `--jobs 1`, each with
its ratio next to issue 14's target. The runs are timed as a user runs them (the table report,
stderr not a terminal); the three must print the same report (checked).

    .venv/bin/python bench/batch/run.py [--repo DIR] [--jobs N] [--repeat K] [--profile]

`--profile` adds a cProfile of one cold `--jobs 1` run (top functions by own time) for each input.
"""
from __future__ import annotations

import argparse
import cProfile
import glob
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from generate import generate  # noqa: E402

COLD_TARGET = 1.5  # × bare clang
WARM_TARGET = 0.05  # × cold
CCLS = [sys.executable, "-m", "ccls"]
ENV = dict(os.environ, PYTHONPATH=ROOT)  # the ccls of this tree, whatever is installed


def _children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's finished child processes and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bare_clang(files: list[str], jobs: int, clang: str, flags: list[str]) -> tuple[float, float]:
    """Seconds (wall, CPU) to compile every file with `clang -O2 -c`, `jobs` at a time."""
    with tempfile.TemporaryDirectory() as out:
        def one(index_path: tuple[int, str]) -> int:
            index, path = index_path
            return subprocess.run([clang, "-O2", *flags, "-c", path, "-o", os.path.join(out, f"{index}.o")],
                                  capture_output=True).returncode
        started, cpu = time.perf_counter(), _children_cpu_s()
        with ThreadPoolExecutor(jobs) as pool:
            failed = sum(1 for rc in pool.map(one, enumerate(files)) if rc)
        elapsed, cpu = time.perf_counter() - started, _children_cpu_s() - cpu
    if failed:
        print(f"  note: bare clang failed on {failed} of {len(files)} files", file=sys.stderr)
    return elapsed, cpu


def ccls_analyze(files: list[str], cache_dir: str, jobs: int, flags: list[str]) -> tuple[float, float, str]:
    """Seconds (wall, CPU of ccls and the tools it ran) and the report."""
    started, cpu = time.perf_counter(), _children_cpu_s()
    extra = [f"--flags={' '.join(flags)}"] if flags else []
    done = subprocess.run([*CCLS, "analyze", *files, "--format", "table", "--jobs", str(jobs), "--cache-dir", cache_dir,
                           *extra],
                          capture_output=True, text=True, env=ENV)
    elapsed, cpu = time.perf_counter() - started, _children_cpu_s() - cpu
    if done.returncode not in (0, 1):
        sys.exit(f"ccls analyze failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, cpu, done.stdout


def measure(name: str, files: list[str], jobs: int, repeat: int, clang: str, flags: list[str]) -> dict:
    clang_runs = [bare_clang(files, jobs, clang, flags) for _ in range(max(3, repeat))]
    clang_1_runs = [bare_clang(files, 1, clang, flags) for _ in range(repeat)]
    cold, warm, single = [], [], []
    outputs = set()
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            *seconds, out = ccls_analyze(files, cache, jobs, flags)
            cold.append(seconds)
            outputs.add(out)
            *seconds, out = ccls_analyze(files, cache, jobs, flags)
            warm.append(seconds)
            outputs.add(out)
        with tempfile.TemporaryDirectory() as cache:
            *seconds, out = ccls_analyze(files, cache, 1, flags)
            single.append(seconds)
            outputs.add(out)
    wall = lambda runs: statistics.median(r[0] for r in runs)  # noqa: E731
    cpu = lambda runs: statistics.median(r[1] for r in runs)  # noqa: E731
    with tempfile.TemporaryDirectory() as cache:  # what was analysed (not timed)
        extra = [f"--flags={' '.join(flags)}"] if flags else []
        analysis = json.loads(subprocess.run([*CCLS, "analyze", *files, "--format", "json", "--cache-dir", cache, *extra],
                                             capture_output=True, text=True, env=ENV).stdout)
    row = {"input": name, "files": len(files), "functions": len(analysis["functions"]),
           "errors": len(analysis["errors"]), "jobs": jobs,
           "clang_s": wall(clang_runs), "clang_jobs1_s": wall(clang_1_runs), "cold_s": wall(cold),
           "warm_s": wall(warm), "jobs1_s": wall(single), "identical": len(outputs) == 1,
           # CPU seconds (user + system, the tools included) are what a loaded machine inflates least
           "clang_cpu_s": cpu(clang_runs), "cold_cpu_s": cpu(cold), "warm_cpu_s": cpu(warm), "jobs1_cpu_s": cpu(single)}
    row["cold_ratio"] = row["cold_s"] / row["clang_s"]
    row["cold_cpu_ratio"] = row["cold_cpu_s"] / row["clang_cpu_s"]
    row["warm_ratio"] = row["warm_s"] / row["cold_s"]
    row["jobs1_ratio"] = row["jobs1_s"] / row["clang_jobs1_s"]
    return row


def show(row: dict) -> None:
    ok = lambda good: "meets" if good else "MISSES"  # noqa: E731
    print(f"\n{row['input']}: {row['files']} files, {row['functions']} functions, {row['errors']} errors, "
          f"{row['jobs']} jobs")
    print(f"  {'measure':<44}{'seconds':>9}  {'ratio':>8}  target")
    print(f"  {'bare clang-19 -O2 -c, ' + str(row['jobs']) + ' at a time':<44}{row['clang_s']:>9.2f}")
    print(f"  {'ccls analyze, cold (empty cache)':<44}{row['cold_s']:>9.2f}  {row['cold_ratio']:>7.2f}x  "
          f"<= {COLD_TARGET}x bare clang ({ok(row['cold_ratio'] <= COLD_TARGET)})")
    print(f"  {'ccls analyze, warm (unchanged re-run)':<44}{row['warm_s']:>9.2f}  {row['warm_ratio']:>7.1%}  "
          f"<= {WARM_TARGET:.0%} of cold ({ok(row['warm_ratio'] <= WARM_TARGET)})")
    print(f"  {'bare clang-19 -O2 -c, one at a time':<44}{row['clang_jobs1_s']:>9.2f}")
    print(f"  {'ccls analyze --jobs 1, cold':<44}{row['jobs1_s']:>9.2f}  {row['jobs1_ratio']:>7.2f}x  "
          f"(vs one-at-a-time clang)")
    print(f"  CPU seconds (user + system): bare clang {row['clang_cpu_s']:.2f}, cold {row['cold_cpu_s']:.2f} "
          f"({row['cold_cpu_ratio']:.2f}x), warm {row['warm_cpu_s']:.2f}, --jobs 1 {row['jobs1_cpu_s']:.2f}")
    print(f"  same report from cold, warm and --jobs 1: {'yes' if row['identical'] else 'NO'}")


def profile(files: list[str], flags: list[str], top: int = 25) -> str:
    """cProfile of one cold in-process `--jobs 1` run: the functions with the most own time."""
    from ccls import cli
    profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory() as cache:
        stdout = sys.stdout
        sys.stdout = io.StringIO()
        try:
            extra = [f"--flags={' '.join(flags)}"] if flags else []
            profiler.runcall(cli.main, ["analyze", *files, "--format", "json", "--jobs", "1", "--cache-dir", cache,
                                        *extra])
        finally:
            sys.stdout = stdout
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


def repo_files(directory: str) -> list[str]:
    """The C files at the top of a source tree (its library; tests and contrib need other flags)."""
    return sorted(glob.glob(os.path.join(directory, "*.c")))


def compile_ccls() -> None:
    """ccls's modules compiled to bytecode first, as an installed package has them (pip compiles
    them at install; bench/realcode does the same): with PYTHONDONTWRITEBYTECODE set and no
    __pycache__, every run would compile ccls's own source again (~0.15 s, a warm run's third)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "ccls")], stdout=subprocess.DEVNULL,
                   check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", help="a real source tree: its top-level .c files are analysed "
                                       "(e.g. zlib: git --git-dir=/work/.mirror/madler+zlib/repo archive HEAD | "
                                       "tar -x -C /tmp/zlib)")
    parser.add_argument("--repo-flags", default="", help="compile flags for the real tree, given to clang and "
                                                            "ccls alike (zlib without ./configure: -DHAVE_UNISTD_H)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--functions", type=int, default=150)
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of a cold --jobs 1 run")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    clang = shutil.which("clang-19")
    if clang is None:
        sys.exit("clang-19 is not installed: nothing to compare against")
    compile_ccls()
    rows = []
    with tempfile.TemporaryDirectory() as generated:
        inputs = [(f"generated C ({args.files} x {args.functions} functions)",
                   generate(generated, args.files, args.functions))]
        if args.repo:
            found = repo_files(args.repo)
            if not found:
                sys.exit(f"no .c files at the top of {args.repo}")
            inputs.append((f"{os.path.basename(os.path.normpath(args.repo))} (top-level .c)", found))
        for k, (name, files) in enumerate(inputs):
            flags = args.repo_flags.split() if k else []
            row = measure(name, files, args.jobs, args.repeat, clang, flags)
            show(row)
            rows.append(row)
            if args.profile:
                print(profile(files, flags))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    main()
