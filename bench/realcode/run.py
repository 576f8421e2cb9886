#!/usr/bin/env python3
"""Real libraries through `ccls analyze`, the way a new user would try them (issue 17 §3).

    python3 bench/realcode/run.py zlib=/tmp/zlib cjson=/tmp/cJSON/cJSON.c lz4=/tmp/lz4/lib \
        --flags zlib=-DHAVE_UNISTD_H

Each argument is NAME=PATH[,PATH…] (a file or a folder; folders give their C/C++/CUDA/Python files,
not walked below their top level unless --recursive). Every file is analysed by its own
`ccls analyze FILE --format json` (so each file's time can be set against its own compile) and
compiled bare by `clang-19 -O2 -c` (`clang++-19` for C++, `nvcc -O2 -c` for CUDA where nvcc is
installed, else clang's own CUDA compile; Python's own `compile()` for Python).
Per library it prints: files, functions, errors (the tools' own messages), seconds, the ratio to
the bare compile (whole library and worst file), peak RSS, and the share of loops by kind.
Targets (issue 17): no file over 10x its bare compile; every library finishes; unknown loops
<= 15 % on cJSON and zlib. Results go to bench/realcode/results/ (text and JSON).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUFFIXES = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".cu": "cuda", ".py": "python"}
KINDS = ("constant", "symbolic", "data", "expected", "bounded", "unknown")
FILE_RATIO_TARGET = 10.0
UNKNOWN_TARGET = 0.15


@dataclass
class FileRun:
    path: str
    seconds: float
    bare_seconds: float | None
    peak_rss_mb: float
    functions: int
    loops: dict[str, int]
    errors: list[str]
    finished: bool

    @property
    def ratio(self) -> float | None:
        return self.seconds / self.bare_seconds if self.bare_seconds else None


@dataclass
class LibraryRun:
    name: str
    files: list[FileRun] = field(default_factory=list)

    def loops(self) -> collections.Counter:
        total = collections.Counter()
        for f in self.files:
            total.update(f.loops)
        return total


def _timed(argv: list[str], timeout: float, cwd: str | None = None,
           env: dict | None = None) -> tuple[float, float, int | None, str, str]:
    """(seconds, peak RSS in MB of the process and the children it waited for, exit status or
    None when killed at the timeout, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        process = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, env=env, start_new_session=True)
        status, peak_kb = None, 0.0
        while True:
            pid, raw, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                status, peak_kb = os.waitstatus_to_exitcode(raw), usage.ru_maxrss
                break
            if time.monotonic() - started > timeout:
                os.killpg(process.pid, 9)
                _, _, usage = os.wait4(process.pid, 0)
                peak_kb = usage.ru_maxrss
                break
            time.sleep(0.002)  # a bare compile of a small file takes 0.03 s: polled finely enough to time it
        seconds = time.monotonic() - started
        process.returncode = status if status is not None else -9
        out.seek(0)
        err.seek(0)
        return seconds, peak_kb / 1024, status, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def bare_compile(path: str, language: str, flags: list[str], timeout: float) -> tuple[float | None, str]:
    """Seconds of the compile ccls's analysis is set against, and its error text if it failed."""
    if language == "python":
        argv = [sys.executable, "-c", "import sys; compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')", path]
    elif language == "cuda":
        # What a CUDA user compiles with: nvcc (host and device code); clang's CUDA mode where
        # the toolkit's driver is missing (device code for sm_70, no CUDA library needed).
        argv = [shutil.which("nvcc"), "-O2", *flags, "-c", path, "-o", os.devnull] if shutil.which("nvcc") else \
            [shutil.which("clang++-19") or "clang++", "-O2", "-x", "cuda", "--cuda-gpu-arch=sm_70", "-nocudalib",
             *flags, "-c", path, "-o", os.devnull]
    else:
        compiler = shutil.which("clang++-19" if language == "cpp" else "clang-19") or \
            shutil.which("clang++" if language == "cpp" else "clang")
        argv = [compiler, "-O2", *flags, "-c", path, "-o", os.devnull]
    seconds, _, status, _, err = _timed(argv, timeout, cwd=os.path.dirname(os.path.abspath(path)))
    return (seconds, "") if status == 0 else (None, err.strip()[:2000])


def analyse(path: str, flags: list[str], timeout: float) -> FileRun:
    argv = [sys.executable, "-m", "ccls", "analyze", path, "--format", "json"]
    if flags:
        argv.append("--flags=" + " ".join(flags))
    with tempfile.TemporaryDirectory(prefix="ccls-bench-cache-") as cache:  # a cold run: no cached counts
        seconds, peak_mb, status, out, err = _timed(argv, timeout, cwd=str(ROOT), env={**os.environ,
                                                                                     "CCLS_CACHE_DIR": cache})
    loops: collections.Counter = collections.Counter()
    functions, errors = 0, []
    if status is None:
        errors.append(f"did not finish in {timeout:g} s")
    else:
        try:
            document = json.loads(out)
        except ValueError:
            errors.append(f"exit {status}, no JSON: {(err.strip() or out.strip())[-2000:]}")
        else:
            functions = len(document["functions"])
            loops.update(loop["kind"] for f in document["functions"] for loop in f["loops"])
            errors += [f"{e.get('file')}:{e.get('line') or ''} {e['message']}" for e in document["errors"]]
            if "Traceback" in err:
                errors.append("traceback on stderr: " + err.strip().splitlines()[-1])
    return FileRun(path, seconds, None, peak_mb, functions, dict(loops), errors, status is not None)


def files_of(spec: str, recursive: bool) -> list[str]:
    found = []
    for part in spec.split(","):
        path = Path(part).expanduser()
        if path.is_file():
            found.append(str(path))
        elif path.is_dir():
            walk = sorted(path.rglob("*") if recursive else path.iterdir())
            found += [str(p) for p in walk if p.is_file() and p.suffix in SUFFIXES]
        else:
            raise SystemExit(f"run.py: no such file or folder: {part}")
    return found


# A file whose analysis takes less than this is timed REPEATS times, alternating with its bare
# compile, and each side's fastest run kept: on a shared machine one run of a 0.05 s compile
# swings by half with the load, and a larger file's run is long enough to average it out.
SHORT_S = 2.0
REPEATS = 3


def run_library(name: str, paths: list[str], flags: list[str], timeout: float, progress) -> LibraryRun:
    library = LibraryRun(name)
    for path in paths:
        language = SUFFIXES.get(Path(path).suffix, "c")
        bare, bare_error = bare_compile(path, language, flags, timeout)
        run = analyse(path, flags, timeout)
        for _ in range(REPEATS - 1 if run.seconds < SHORT_S and bare is not None and not run.errors else 0):
            bare = min(bare, bare_compile(path, language, flags, timeout)[0] or bare)
            run.seconds = min(run.seconds, analyse(path, flags, timeout).seconds)
        run.bare_seconds = bare
        if bare_error:
            run.errors.append(f"bare compile failed: {bare_error}")
        library.files.append(run)
        progress(f"{name}: {os.path.basename(path)} {run.seconds:.1f} s"
                 + (f" ({run.ratio:.1f}x bare)" if run.ratio else "") + (" ERROR" if run.errors else ""))
    return library


def shares(loops: collections.Counter) -> str:
    total = sum(loops.values())
    return " ".join(f"{kind} {100 * loops.get(kind, 0) / total:.0f}%" for kind in KINDS) if total else "no loops"


def report(libraries: list[LibraryRun]) -> str:
    lines = ["| library | files | functions | errors | seconds | bare clang s | ratio | worst file (ratio) | "
             "peak RSS MB | loops | by kind |", "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|"]
    notes = []
    for lib in libraries:
        seconds = sum(f.seconds for f in lib.files)
        bare = sum(f.bare_seconds or 0 for f in lib.files)
        rated = [f for f in lib.files if f.ratio is not None]
        worst = max(rated, key=lambda f: f.ratio, default=None)
        loops = lib.loops()
        errors = sum(len(f.errors) for f in lib.files)
        lines.append(f"| {lib.name} | {len(lib.files)} | {sum(f.functions for f in lib.files)} | {errors} | "
                     f"{seconds:.1f} | {bare:.2f} | {seconds / bare:.1f}x | "
                     f"{os.path.basename(worst.path) + f' ({worst.ratio:.1f}x)' if worst else '-'} | "
                     f"{max((f.peak_rss_mb for f in lib.files), default=0):.0f} | {sum(loops.values())} | {shares(loops)} |"
                     if bare else
                     f"| {lib.name} | {len(lib.files)} | {sum(f.functions for f in lib.files)} | {errors} | "
                     f"{seconds:.1f} | - | - | - | {max((f.peak_rss_mb for f in lib.files), default=0):.0f} | "
                     f"{sum(loops.values())} | {shares(loops)} |")
        for f in lib.files:
            for e in f.errors:
                notes.append(f"- {lib.name} {os.path.basename(f.path)}: {e}")
            if f.ratio is not None and f.ratio > FILE_RATIO_TARGET:
                notes.append(f"- {lib.name} {os.path.basename(f.path)}: {f.ratio:.1f}x its bare compile "
                             f"({f.seconds:.1f} s vs {f.bare_seconds:.2f} s), over the {FILE_RATIO_TARGET:g}x target")
    targets = []
    over = [f for lib in libraries for f in lib.files if f.ratio is not None and f.ratio > FILE_RATIO_TARGET]
    targets.append(f"- no file over {FILE_RATIO_TARGET:g}x its bare compile: "
                   f"{'met' if not over else f'NOT met ({len(over)} files)'}")
    unfinished = [f for lib in libraries for f in lib.files if not f.finished]
    targets.append(f"- every library finishes: {'met' if not unfinished else f'NOT met ({len(unfinished)} files)'}")
    for lib in libraries:
        loops = lib.loops()
        if lib.name.lower() in ("cjson", "zlib") and sum(loops.values()):
            share = loops.get("unknown", 0) / sum(loops.values())
            targets.append(f"- unknown loops on {lib.name} <= {100 * UNKNOWN_TARGET:.0f} %: {100 * share:.0f} % "
                           f"({'met' if share <= UNKNOWN_TARGET else 'NOT met'})")
    return "\n".join(lines + ["", "Targets:"] + targets + (["", "Errors and files over target:"] + notes if notes else []))


def byte_compile() -> None:
    """ccls's modules compiled to bytecode first, as an installed package has them (pip compiles
    them at install): with PYTHONDONTWRITEBYTECODE set and no __pycache__, every run would compile
    ccls's own source again (~0.2 s) and count it against the file."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ccls")], stdout=subprocess.DEVNULL,
                   check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("libraries", nargs="+", metavar="NAME=PATH[,PATH...]")
    parser.add_argument("--flags", action="append", default=[], metavar="NAME=FLAGS",
                        help="compile flags for one library, e.g. zlib=-DHAVE_UNISTD_H")
    parser.add_argument("--recursive", action="store_true", help="walk folders below their top level")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per file before it counts as unfinished")
    parser.add_argument("--out", default=str(HERE / "results"), help="folder for the results files")
    args = parser.parse_args(argv)
    flags = {}
    for item in args.flags:
        name, _, text = item.partition("=")
        flags[name] = text.split()
    byte_compile()
    specs = []
    for item in args.libraries:
        name, sep, paths = item.partition("=")
        if not sep:
            name, paths = Path(item).stem, item
        specs.append((name, files_of(paths, args.recursive)))
    libraries = [run_library(name, paths, flags.get(name, []), args.timeout,
                             lambda line: print(line, file=sys.stderr, flush=True))
                 for name, paths in specs]
    text = report(libraries)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    header = f"# bench/realcode {stamp} on {os.uname().nodename} ({os.cpu_count()} CPUs), load {os.getloadavg()[0]:.1f}\n\n"
    (out / "latest.txt").write_text(header + text + "\n")
    (out / "latest.json").write_text(json.dumps(
        {"date": stamp, "libraries": [{"name": lib.name, "files": [dict(asdict(f), ratio=f.ratio) for f in lib.files]}
                                      for lib in libraries]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
