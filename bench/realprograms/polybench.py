"""PolyBench/C 4.2.1: 30 numeric kernels (linear algebra, stencils, data mining, medley), each a
`kernel_X` in `X.c` that `main` calls once between `polybench_start_instruments` and
`polybench_stop_instruments`.

A private copy of the suite is made in the work directory (never in the project) with a generated
compile_commands.json in its build/ folder: every kernel with PolyBench's own flags, as its
makefiles build it with `utilities/polybench.c`. The measured binaries link a patched copy of
polybench.c (build/polybench_timed.c; the kernels and the copy's own polybench.c are untouched):
`polybench_timer_start` ends by opening the region (thread-CPU and monotonic clocks, callgrind
collection on) and `polybench_timer_stop` begins by closing it (collection off, one callgrind dump,
one `polybench-region WALL_NS CPU_NS` line). clang -O2 inlines the static `kernel_X` into main, so
the region's Ir is read per function from the dump: the kernel's code is in main's self Ir.
"""
from __future__ import annotations

import concurrent.futures
import json
import re
import statistics
import time
from pathlib import Path

import harness as H

# utilities/makefile-gen.pl's config.mk: CFLAGS=-O2 -DPOLYBENCH_DUMP_ARRAYS -DPOLYBENCH_USE_C99_PROTO.
# -DPOLYBENCH_DUMP_ARRAYS is left out: it only makes main print every live-out array to stderr after
# the timed region (the output check); the README's timing recipe uses -DPOLYBENCH_TIME instead.
CFLAGS = ["-O2", "-DPOLYBENCH_USE_C99_PROTO", "-DPOLYBENCH_TIME"]
LDLIBS = ["-lm"]  # makefile-gen.pl adds -lm to cholesky, gramschmidt, correlation; harmless elsewhere
DATASET = "MEDIUM_DATASET"
MIN_TIME_NS = 20_000  # regions shorter than this are left out of the time statistics
REGION = "polybench region"  # the callgrind dump's trigger name

_LIST_LINE = re.compile(r"^\s*(?:\./)?(\S+\.c)\s*$")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_TIMED = re.compile(r"polybench_start_instruments\s*;(.*?)polybench_stop_instruments\s*;", re.S)
_CALLEE = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_SAMPLE = re.compile(r"^polybench-region (-?\d+) (-?\d+)$")
_SECONDS = re.compile(r"^\d+\.\d+$")

# Added to the private copy of polybench.c, before polybench_timer_start.
REGION_CODE = r"""
/* Added by bench/realprograms/polybench.py: the timed region, for thread-CPU time and callgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CCLS_HAVE_CALLGRIND_H 1
#endif
#endif
#ifndef CCLS_HAVE_CALLGRIND_H
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(x)
#endif
static struct timespec ccls_wall0, ccls_cpu0;

static void ccls_region_start (void)
{
  clock_gettime (CLOCK_MONOTONIC, &ccls_wall0);
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ccls_cpu0);
  CALLGRIND_TOGGLE_COLLECT;
}

static void ccls_region_stop (void)
{
  struct timespec wall1, cpu1;
  CALLGRIND_TOGGLE_COLLECT;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &cpu1);
  clock_gettime (CLOCK_MONOTONIC, &wall1);
  CALLGRIND_DUMP_STATS_AT ("polybench region");
  printf ("polybench-region %lld %lld\n",
          (long long) (wall1.tv_sec - ccls_wall0.tv_sec) * 1000000000LL + (wall1.tv_nsec - ccls_wall0.tv_nsec),
          (long long) (cpu1.tv_sec - ccls_cpu0.tv_sec) * 1000000000LL + (cpu1.tv_nsec - ccls_cpu0.tv_nsec));
}

"""


def parse_benchmark_list(text: str) -> list[str]:
    """The kernels' sources (relative paths) from utilities/benchmark_list, the suite's own list."""
    out = []
    for line in text.splitlines():
        match = _LIST_LINE.match(line)
        if match:
            out.append(match.group(1))
    return out


def timed_function(source: str) -> str:
    """The function main calls between polybench_start_instruments and _stop_ (`kernel_gemm`)."""
    match = _TIMED.search(_COMMENT.sub(" ", source))
    if not match:
        raise H.BenchError("no call between polybench_start_instruments and polybench_stop_instruments")
    callee = _CALLEE.search(match.group(1))
    if not callee:
        raise H.BenchError("the timed region calls no function")
    return callee.group(1)


def patch_polybench_c(text: str) -> str:
    """polybench.c with the region opened at the end of polybench_timer_start (after its cache
    flush and its own clock) and closed at the start of polybench_timer_stop (before its clock)."""
    start = re.search(r"^void polybench_timer_start\s*\(\s*\)\s*\{\n", text, re.M)
    stop = re.search(r"^void polybench_timer_stop\s*\(\s*\)\s*\{\n", text, re.M)
    if not start or not stop:
        raise H.BenchError("utilities/polybench.c: polybench_timer_start/stop not found")
    start_end = text.index("\n}\n", start.end())  # the function's closing brace at column 0
    return (text[:start.start()] + REGION_CODE + text[start.start():start_end] + "\n  ccls_region_start ();"
            + text[start_end:stop.end()] + "  ccls_region_stop ();\n" + text[stop.end():])


def parse_timing(text: str) -> tuple[int, int, float | None] | None:
    """(wall ns, thread CPU ns) of the region from the patched timer's line, and the seconds
    PolyBench's own timer printed (gettimeofday, -DPOLYBENCH_TIME), if any."""
    sample, seconds = None, None
    for line in text.splitlines():
        line = line.strip()
        match = _SAMPLE.match(line)
        if match:
            sample = int(match.group(1)), int(match.group(2))
        elif _SECONDS.match(line):
            seconds = float(line)
    return None if sample is None else (*sample, seconds)


def kernel_flags(root: Path, kernel_dir: Path, dataset: str) -> list[str]:
    return [*CFLAGS, f"-D{dataset}", f"-I{root / 'utilities'}", f"-I{kernel_dir}"]


def compile_entries(root: Path, kernels: list[str], dataset: str) -> list[tuple[Path, list[str]]]:
    """Compile database entries: each kernel with its flags, and utilities/polybench.c (built with
    every kernel by PolyBench's makefiles; its flags here name no kernel folder)."""
    entries = [(root / k, kernel_flags(root, (root / k).parent, dataset)) for k in kernels]
    entries.append((root / "utilities" / "polybench.c",
                    [*CFLAGS, f"-D{dataset}", f"-I{root / 'utilities'}"]))
    return entries


def prepare(suite: Path, work: Path, dataset: str) -> dict:
    root = work / "polybench" / "suite"
    H.copy_suite(suite, root)
    listing = root / "utilities" / "benchmark_list"
    if not listing.exists():
        raise H.BenchError(f"{suite}: no utilities/benchmark_list (is this PolyBench/C 4.2?)")
    sources = parse_benchmark_list(listing.read_text())
    kernels = {}
    for rel in sources:
        path = root / rel
        if not path.exists():
            raise H.BenchError(f"{suite}: utilities/benchmark_list names {rel}, which is absent")
        try:
            function = timed_function(path.read_text(errors="replace"))
        except H.BenchError as e:
            raise H.BenchError(f"{rel}: {e}") from None
        kernels[path.stem] = {"source": path, "rel": rel, "function": function}
    build = root / "build"
    H.write_compile_db(build, compile_entries(root, sources, dataset))
    timed_c = patch_polybench_c((root / "utilities" / "polybench.c").read_text())
    (build / "polybench_timed.c").write_text(timed_c)
    files = [root / "utilities" / "polybench.c", root / "utilities" / "polybench.h"]
    for k in kernels.values():
        files += sorted(k["source"].parent.glob("*.[ch]"))
    key = H.tree_digest(files, {"cflags": CFLAGS, "ldlibs": LDLIBS, "dataset": dataset, "timed": timed_c,
                                "clang": H.run_cmd([H.CLANG, "--version"], 30).stdout})
    return {"root": root, "build": build, "kernels": kernels, "dataset": dataset, "key": key}


def build_kernel(p: dict, name: str) -> tuple[Path, bool]:
    """(executable, whether kernel_X survived as a function of its own) as PolyBench's Makefile
    builds it: `cc -o X X.c CFLAGS -I. -I utilities utilities/polybench.c`, with the timed copy."""
    k = p["kernels"][name]
    out = p["build"] / name
    out.mkdir(parents=True, exist_ok=True)
    flags = kernel_flags(p["root"], k["source"].parent, p["dataset"])
    objects = []
    for source, obj in ((k["source"], out / f"{name}.o"), (p["build"] / "polybench_timed.c", out / "polybench.o")):
        H.checked([H.CLANG, *flags, "-c", str(source), "-o", str(obj)], 300, f"{name}: compiling {source.name}")
        objects.append(str(obj))
    exe = out / name
    H.checked([H.CLANG, "-O2", *objects, *LDLIBS, "-o", str(exe)], 120, f"{name}: linking")
    symbols = H.checked(["nm", "--defined-only", objects[0]], 60, "nm").split()
    return exe, k["function"] in symbols


def callgrind_kernel(p: dict, name: str, exe: Path) -> dict:
    """Self Ir per function inside the timed region (one client-request dump)."""
    base = exe.parent / "callgrind.out"
    for old in exe.parent.glob("callgrind.out*"):
        old.unlink()
    H.checked(["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={base}", str(exe)],
              3600, f"{name}: callgrind")
    for dump in sorted(exe.parent.glob("callgrind.out.*")):
        prof = H.parse_callgrind(dump.read_text(errors="replace"))
        if prof.description.endswith(REGION):
            return {fn: ir for fn, ir in prof.self_ir.items() if ir}
    raise H.BenchError(f"{name}: no callgrind dump of the region (valgrind/callgrind.h missing?)")


def measure(p: dict, names: list[str], runs: int, jobs: int, log) -> dict:
    log(f"polybench: building and running {len(names)} kernels under callgrind ({H.CLANG} {' '.join(CFLAGS)} "
        f"-D{p['dataset']}), {jobs} at a time …")
    def one(name: str) -> tuple[Path, bool, dict]:
        exe, own_function = build_kernel(p, name)
        return exe, own_function, callgrind_kernel(p, name, exe)

    built, failed, samples, phases = H.build_and_time(names, one, jobs, runs, 600, parse_timing, log,
                                                      "polybench", "kernel")
    kernels = {}
    for name, (exe, own_function, region) in built.items():
        function = p["kernels"][name]["function"]
        holder = function if own_function and region.get(function) else "main"
        s = samples[name]
        own_seconds = [x for _, _, x in s if x is not None]
        kernels[name] = {"function": function, "inlined_into_main": not own_function, "holder": holder,
                         "ir": region.get(holder, 0), "ir_region": sum(region.values()),
                         "callees_ir": {fn: ir for fn, ir in sorted(region.items(), key=lambda t: -t[1])
                                        if fn != holder and ir >= 1000},
                         "time_ns": statistics.median(c for _, c, _ in s),
                         "wall_ns": statistics.median(w for w, _, _ in s), "fastest_ns": min(c for _, c, _ in s),
                         "polybench_seconds": statistics.median(own_seconds) if own_seconds else None,
                         "samples": len(s)}
    return {"kernels": kernels, "failed": failed, **phases}


def run(suite: Path, work: Path, args, log) -> dict:
    dataset = args.polybench_dataset
    p = prepare(suite, work, dataset)
    names = list(p["kernels"])
    if args.only:
        wanted = args.only.split(",")
        unknown = [w for w in wanted if w not in p["kernels"]]
        if unknown:
            raise H.BenchError(f"--only: no kernel {unknown} in {suite}")
        names = [n for n in names if n in wanted]
    selection = "" if not args.only else "-" + H.tree_digest([], sorted(names))[:8]
    cache = work / "polybench" / f"measurements-{p['key']}-n{args.polybench_runs}{selection}.json"
    full = work / "polybench" / f"measurements-{p['key']}-n{args.polybench_runs}.json"
    if args.only and not cache.exists() and full.exists() and not args.remeasure:
        cache = full  # a full measurement holds every kernel
    if cache.exists() and not args.remeasure:
        measured = json.loads(cache.read_text())
        log(f"polybench: reusing measurements from {measured['environment']['date']} ({cache}); --remeasure to redo")
    else:
        measured = measure(p, names, args.polybench_runs, args.jobs, log)
        measured["environment"] = H.environment()
        cache.write_text(json.dumps(measured, indent=1) + "\n")
    flags = [*CFLAGS, f"-D{dataset}", "-I<root>/utilities", "-I<kernel dir>"]
    result = {"suite": "polybench", "source": f"PolyBench/C at {suite}", "flags": flags, "ldflags": ["-O2", *LDLIBS],
              "config": {"dataset": dataset, "runs": args.polybench_runs, "min_time_ns": MIN_TIME_NS,
                         "patches": ["build/polybench_timed.c = utilities/polybench.c with the region opened at "
                                     "the end of polybench_timer_start and closed at the start of "
                                     "polybench_timer_stop (clocks, callgrind toggle and dump); kernels untouched"]},
              "describe": {"instructions": "per kernel (self Ir of the kernel's code inside the timed region: "
                                           "main's, where kernel_X was inlined)",
                           "time": "per kernel (inclusive CU of kernel_X; one ccls run per kernel file)"},
              "measurement_key": p["key"], "measured": {k: v for k, v in measured.items() if k != "kernels"},
              "failed": dict(measured["failed"])}
    docs: dict[str, dict] = {}
    if not args.no_ccls:
        log(f"polybench: ccls analyze X.c from each kernel's folder ({args.jobs} at a time) …")

        def analyse(name):
            source = p["kernels"][name]["source"]
            try:
                return name, H.ccls_analyze([Path(source.name)], args.arch_flag, source.parent), None
            except H.BenchError as e:
                return name, None, str(e)

        started = time.monotonic()
        per_kernel = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for name, ccls_run, error in pool.map(analyse, [n for n in names if n in measured["kernels"]]):
                if ccls_run is None:
                    result["failed"][name] = f"ccls: {error}"
                    log(f"polybench: ccls failed on {name}: {error.splitlines()[0]}")
                    continue
                docs[name] = ccls_run.doc
                per_kernel[name] = {"seconds": round(ccls_run.seconds, 1), "errors": ccls_run.doc.get("errors", [])}
        result["ccls"] = {"argv": "ccls analyze X.c --format json (cwd: the kernel's folder)"
                                  + (f" --arch {args.arch_flag}" if args.arch_flag else ""),
                          "seconds": round(time.monotonic() - started, 1),
                          "level": next((H.ccls_level(d) for d in docs.values()), "unknown"),
                          "per_kernel": per_kernel, "errors": [e for k in per_kernel.values() for e in k["errors"]],
                          "arch": next((d.get("arch") for d in docs.values()), None)}
    rows = []
    for name in names:
        m = measured["kernels"].get(name)
        if m is None:
            continue
        big = {fn: ir for fn, ir in m["callees_ir"].items() if ir >= 0.05 * max(m["ir_region"], 1)}
        row = {"name": name, "function": m["function"], "holder": m["holder"], "ir": m["ir"],
               "ir_region": m["ir_region"], "callees_ir": big, "time_ms": m["time_ns"] / 1e6,
               "wall_ms": m["wall_ns"] / 1e6, "fastest_ms": m["fastest_ns"] / 1e6,
               "cycles": m["time_ns"] * args.clock_hz / 1e9, "timed": m["time_ns"] >= MIN_TIME_NS}
        if name in docs:
            f = H.ccls_functions(docs[name]).get(m["function"])
            if f is None:
                row["ccls_error"] = f"{m['function']} not in ccls's output"
            else:
                row["ccls"] = H.ccls_kernel_record(f)
        rows.append(row)
    result["functions"] = rows
    return result
