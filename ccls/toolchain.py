"""External tools (clang, opt, llc, llvm-mca, nvcc): finding them and running them safely.

This is the only module that starts subprocesses. Every run has a wall-clock timeout that kills
the tool's whole process group, a per-process memory cap, closed (or fed) stdin, no shell, and
output decoded leniently, so a hostile or broken input cannot hang or exhaust the server.
"""
from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence


class ToolMissing(Exception):
    """A required external tool is not installed (or its CCLS_* override is wrong)."""

    def __init__(self, tool: str, install_hint: str):
        super().__init__(f"{tool} not found: {install_hint}")
        self.tool = tool
        self.install_hint = install_hint


class ToolLimit(Exception):
    """A tool stopped by one of the limits ccls runs it under (wall-clock time or memory)."""


class ToolTimeout(ToolLimit):
    """A tool ran past its wall-clock limit and was killed together with its children."""

    def __init__(self, argv: Sequence[str], timeout_s: float):
        super().__init__(f"{os.path.basename(argv[0]) if argv else '?'} timed out after {timeout_s:g} s "
                         f"(killed): {' '.join(argv)}")
        self.argv = list(argv)
        self.timeout_s = timeout_s


class ToolOutOfMemory(ToolLimit):
    """A tool failed to allocate under its memory cap (compile.memoryMB): LLVM aborts with
    "out of memory" then, a crash that is only the cap being reached."""

    def __init__(self, argv: Sequence[str], memory_mb: int):
        tool = os.path.basename(argv[0]) if argv else "?"
        super().__init__(f"{tool} ran out of memory under ccls's cap of {memory_mb} MB and was stopped; raise "
                         f"the cap (--compile-memory-mb, setting compile.memoryMB) or analyse a smaller file")
        self.argv = list(argv)
        self.memory_mb = memory_mb


# What LLVM tools, clang and nvcc print when an allocation fails (RLIMIT_AS reached).
# Anchored to the start of a line: a source excerpt in a diagnostic may quote such words.
_OUT_OF_MEMORY = re.compile(r"^(?:LLVM ERROR: out of memory|Allocation failed|terminate called after throwing an "
                            r"instance of 'std::bad_alloc'|.*catastrophic error: out of memory|"
                            r".*error while loading shared libraries: .*failed to map segment)", re.M)


@dataclass(frozen=True)
class ToolResult:
    returncode: int  # negative: killed by that signal (e.g. -9), as in subprocess
    stdout: str
    stderr: str


# Logical name -> executables tried in order on PATH. The LLVM tools are pinned to 19 first because
# the IR readers are written against LLVM 19's textual IR; an unversioned tool is a fallback.
_CANDIDATES: dict[str, tuple[str, ...]] = {
    "clang": ("clang-19", "clang"),
    "clang++": ("clang++-19", "clang++"),
    "opt": ("opt-19", "opt"),
    "llc": ("llc-19", "llc"),
    "llvm-mca": ("llvm-mca-19", "llvm-mca"),
    "llvm-cxxfilt": ("llvm-cxxfilt-19", "llvm-cxxfilt"),
    "nvcc": ("nvcc",),
}

_DEBIAN_PACKAGE: dict[str, str] = {
    "clang": "clang-19", "clang++": "clang-19", "opt": "llvm-19", "llc": "llvm-19",
    "llvm-mca": "llvm-19", "llvm-cxxfilt": "llvm-19",
}


def env_var_for(name: str) -> str:
    """The override variable for a logical tool name: clang -> CCLS_CLANG, clang++ -> CCLS_CLANGXX."""
    return "CCLS_" + re.sub(r"[^A-Z0-9]", "_", name.upper().replace("++", "XX"))


def _cuda_fallbacks() -> list[str]:
    dirs = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    return [os.path.join(d, "bin", "nvcc") for d in dirs if d]


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


@functools.lru_cache(maxsize=None)
def find_tool(name: str) -> str | None:
    """Absolute path of a logical tool ("clang", "opt", "nvcc", ...) or None.

    An environment override (CCLS_CLANG=/opt/llvm/bin/clang) wins and is not second-guessed: if it
    points nowhere the tool counts as missing rather than silently using another compiler.
    Unknown names are looked up on PATH as they are. Cached; call `find_tool.cache_clear()` after
    changing the environment.
    """
    override = os.environ.get(env_var_for(name))
    if override:
        if os.sep in override:
            return os.path.abspath(override) if _executable(override) else None
        return shutil.which(override)
    for candidate in _CANDIDATES.get(name, (name,)):
        found = shutil.which(candidate)
        if found:
            return found
    if name == "nvcc":
        for path in _cuda_fallbacks():
            if _executable(path):
                return path
    return None


def install_hint(name: str) -> str:
    var = env_var_for(name)
    override = os.environ.get(var)
    if override:
        return f"{var}={override} is not an executable; fix or unset {var}"
    if name == "nvcc":
        return ("install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) "
                f"or set {var} to the path of nvcc")
    if name in _DEBIAN_PACKAGE:
        return f"install it with `apt-get install {_DEBIAN_PACKAGE[name]}` (Debian) or set {var} to its path"
    return f"install it or set {var} to its path"


def require_tool(name: str) -> str:
    """Like find_tool, but raises ToolMissing with an install hint."""
    path = find_tool(name)
    if path is None:
        display = _CANDIDATES.get(name, (name,))[0]
        raise ToolMissing(display, install_hint(name))
    return path


_VERSION_TIMEOUT_S = 20.0
_VERSION_MEMORY_MB = 1024


def tool_identity(name: str) -> tuple[str, int, int, int] | None:
    """(resolved path, mtime in ns, size, inode) of a logical tool's binary, or None when it is
    missing: a binary replaced in place (an upgrade) has another identity."""
    path = find_tool(name)
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.path.realpath(path), st.st_mtime_ns, st.st_size, st.st_ino


# Versions by logical name, with the identity of the binary they were read from; `--version`
# runs started ahead of need (`start_versions`), by name with that identity too.
_VERSIONS: dict[str, tuple[tuple | None, str]] = {}
_VERSION_RUNS: dict[str, tuple[tuple | None, "RunningTool"]] = {}
_VERSIONS_LOCK = threading.Lock()


def start_versions(names: Sequence[str]) -> None:
    """Start `<tool> --version` for each tool whose version this process does not know for its
    binary, without waiting: `tool_version` then collects them, so several run side by side
    (each costs ~20 ms of loading LLVM) and beside whatever the caller does meanwhile."""
    for name in names:
        path, identity = find_tool(name), tool_identity(name)
        if path is None:
            continue
        with _VERSIONS_LOCK:
            known = _VERSIONS.get(name)
            if (known is not None and known[0] == identity) or name in _VERSION_RUNS:
                continue
        try:
            running = start_tool([path, "--version"], memory_mb=_VERSION_MEMORY_MB, stdin=False)
        except (ToolMissing, OSError):
            continue
        with _VERSIONS_LOCK:
            earlier = _VERSION_RUNS.get(name)
            if earlier is None:
                _VERSION_RUNS[name] = (identity, running)
        if earlier is not None:  # another thread started one meanwhile
            running.cancel()


def tool_version(name: str) -> str:
    """One identifying line of `<tool> --version` ("Debian clang version 19.1.7 (3~deb12u1)"),
    or "" when the tool is missing or fails. Part of cache keys, so it must be stable per install.
    Remembered in this process for the binary's identity (`tool_identity`): a tool replaced on
    disk is asked again."""
    path = find_tool(name)
    if path is None:
        return ""
    identity = tool_identity(name)
    with _VERSIONS_LOCK:
        known = _VERSIONS.get(name)
        if known is not None and known[0] == identity:
            return known[1]
        started = _VERSION_RUNS.pop(name, None)
    try:
        if started is not None and started[0] != identity:
            started[1].cancel()  # started for a binary that has been replaced since
            started = None
        running = started[1] if started is not None else \
            start_tool([path, "--version"], memory_mb=_VERSION_MEMORY_MB, stdin=False)
        result = running.finish(None, _VERSION_TIMEOUT_S)
    except (ToolTimeout, ToolMissing, OSError):
        version = ""
    else:
        version = _version_line(result)
    with _VERSIONS_LOCK:
        _VERSIONS[name] = (identity, version)
    return version


def known_version(name: str) -> str | None:
    """The version this process remembers for the tool's binary as it is now, or None."""
    identity = tool_identity(name)
    with _VERSIONS_LOCK:
        known = _VERSIONS.get(name)
    return known[1] if known is not None and known[0] == identity else None


def remember_version(name: str, identity: tuple | None, version: str) -> None:
    """Tell this process a tool's version learnt elsewhere (the count cache's directory) for
    the binary of that identity: `tool_version` then runs nothing for it."""
    with _VERSIONS_LOCK:
        _VERSIONS[name] = (identity, version)


def tool_versions(names: Sequence[str]) -> list[str]:
    """`tool_version` of each name; the `--version` runs not remembered yet run side by side."""
    start_versions(names)
    return [tool_version(name) for name in names]


def forget_tool_versions() -> None:
    """Drop the remembered versions (and stop `--version` runs not collected yet)."""
    with _VERSIONS_LOCK:
        runs = [running for _, running in _VERSION_RUNS.values()]
        _VERSIONS.clear()
        _VERSION_RUNS.clear()
    for running in runs:
        running.cancel()


def _version_line(result: ToolResult) -> str:
    lines = [line.strip() for line in (result.stdout or result.stderr).splitlines() if line.strip()]
    # nvcc prints a banner first; its release line is the one that identifies the compiler.
    for line in lines:
        if re.search(r"\b(version|release)\b", line, re.IGNORECASE):
            return line
    return lines[0] if lines else ""


# Memory cap: RLIMIT_AS (address space), which also bounds mmap-based allocation (RLIMIT_DATA
# covers that only on Linux >= 4.7). Some programs reserve huge address ranges and fail under
# RLIMIT_AS; measured on Debian 12: clang-19 needs more than 256 MB for a trivial file and works at
# 512 MB, nvcc 13.0 (-ptx and -cubin) works at 256 MB, so the 4 GB default suits both.
# The limit is set by util-linux's `prlimit CMD` (setrlimit, then exec) rather than
# Popen(preexec_fn=...): preexec_fn is documented as unsafe when other threads exist (the language
# server runs tools from worker threads), and it disables the vfork fast path. Where prlimit is
# missing, a tiny Python trampoline does the same; it costs ~17 ms per launch against ~2 ms for
# prlimit (measured on this project's 2-core CI machine), which is a third of an edit's budget.
_TRAMPOLINE = (
    "import os,resource,sys\n"
    "cap=int(sys.argv[1])\n"
    "try:\n"
    " resource.setrlimit(resource.RLIMIT_AS,(cap,cap))\n"
    "except (ValueError,OSError) as e:\n"
    " sys.stderr.write('ccls: cannot set memory limit: %s\\n'%e)\n"
    "try:\n"
    " os.execv(sys.argv[2],sys.argv[2:])\n"
    "except OSError as e:\n"
    " sys.stderr.write('ccls: cannot run %s: %s\\n'%(sys.argv[2],e.strerror));os._exit(127)\n"
)


@functools.lru_cache(maxsize=None)
def _prlimit() -> str | None:
    return shutil.which("prlimit")


def _capped(executable: str, args: Sequence[str], cap_bytes: int) -> list[str]:
    """The command line that runs `executable args` under an address-space cap."""
    prlimit = _prlimit()
    if prlimit:
        return [prlimit, f"--as={cap_bytes}", "--", executable, *args]
    return [sys.executable, "-I", "-S", "-c", _TRAMPOLINE, str(cap_bytes), executable, *args]


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_tool(argv: Sequence[str], *, input: str | bytes | None = None, timeout_s: float, memory_mb: int,
             cwd: str | None = None, env: Mapping[str, str] | None = None) -> ToolResult:
    """Run one tool to completion and capture its output.

    argv[0] may be a path or a name on PATH. `memory_mb` caps each process of the tool (children
    inherit the limit; it is not a total). `env` adds to (does not replace) the current
    environment. Raises ToolMissing if argv[0] cannot be found and ToolTimeout after killing the
    tool's process group when `timeout_s` passes. Never uses a shell.
    """
    return start_tool(argv, memory_mb=memory_mb, cwd=cwd, env=env, stdin=input is not None).finish(input, timeout_s)


def start_tool(argv: Sequence[str], *, memory_mb: int, cwd: str | None = None,
               env: Mapping[str, str] | None = None, stdin: bool = True) -> "RunningTool":
    """Start a tool that reads its input from stdin, to be fed later with `finish`: its start-up
    (loading LLVM's shared libraries, ~15 ms for opt) overlaps whatever produces that input.
    Same safety as run_tool; the caller must `finish` or `cancel` it."""
    if not argv:
        raise ValueError("run_tool needs a command")
    executable = argv[0] if os.sep in argv[0] else shutil.which(argv[0])
    if executable is None or not _executable(executable):
        hint = "there is no executable file at that path" if os.sep in argv[0] else install_hint(argv[0])
        raise ToolMissing(argv[0], hint)
    cap_bytes = max(1, int(memory_mb)) * 1024 * 1024
    proc = subprocess.Popen(
        _capped(executable, argv[1:], cap_bytes),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=cwd, env=None if env is None else {**os.environ, **env},
        start_new_session=True,  # own process group: one killpg reaches every child
        close_fds=True,
    )
    return RunningTool(list(argv), proc, memory_mb)


class RunningTool:
    """A started tool waiting for (or reading) its input."""

    def __init__(self, argv: list[str], proc: subprocess.Popen, memory_mb: int):
        self.argv, self._proc, self.memory_mb = argv, proc, memory_mb

    def finish(self, input: str | bytes | None, timeout_s: float) -> ToolResult:
        """Feed `input` (None: just close stdin) and wait at most `timeout_s` for the result."""
        proc = self._proc
        data = input.encode("utf-8") if isinstance(input, str) else input
        try:
            out, err = proc.communicate(data, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.communicate()
            raise ToolTimeout(self.argv, timeout_s) from None
        except BaseException:
            self.cancel()
            raise
        # A tool may leave background children behind (still holding the group); clean them up.
        # The group id stays reserved while any member lives; if none does, killpg finds nothing.
        _kill_group(proc.pid)
        stderr = err.decode("utf-8", errors="replace")
        if proc.returncode != 0 and _OUT_OF_MEMORY.search(stderr):
            raise ToolOutOfMemory(self.argv, self.memory_mb)
        return ToolResult(proc.returncode, out.decode("utf-8", errors="replace"), stderr)

    def finish_lines(self, input: str | bytes | None, timeout_s: float, on_line: Callable[[str], None]) -> ToolResult:
        """`finish`, handing each line of stderr to `on_line` as the tool prints it (a printout
        read while it is being made); the result's stderr is still the whole text."""
        proc = self._proc
        data = input.encode("utf-8") if isinstance(input, str) else input
        deadline = time.monotonic() + timeout_s
        feeder = threading.Thread(target=_feed, args=(proc.stdin, data), name="ccls-tool-stdin", daemon=True)
        feeder.start()
        out, err, partial = [], [], b""
        with selectors.DefaultSelector() as selector:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    selector.register(stream, selectors.EVENT_READ)
            try:
                while selector.get_map():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        _kill_group(proc.pid)
                        proc.wait()
                        raise ToolTimeout(self.argv, timeout_s)
                    for key, _ in selector.select(remaining):
                        chunk = os.read(key.fd, 1 << 16)
                        if not chunk:
                            selector.unregister(key.fileobj)
                        elif key.fileobj is proc.stderr:
                            err.append(chunk)
                            *lines, partial = (partial + chunk).split(b"\n")
                            for line in lines:
                                on_line(line.decode("utf-8", errors="replace"))
                        else:
                            out.append(chunk)
                if partial:
                    on_line(partial.decode("utf-8", errors="replace"))
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid)
                proc.wait()
                raise ToolTimeout(self.argv, timeout_s) from None
            except BaseException:
                _kill_group(proc.pid)
                proc.wait()
                raise
            finally:
                feeder.join()
                for stream in (proc.stdout, proc.stderr):
                    if stream is not None:
                        stream.close()
        _kill_group(proc.pid)  # background children left holding the group
        stderr = b"".join(err).decode("utf-8", errors="replace")
        if proc.returncode != 0 and _OUT_OF_MEMORY.search(stderr):
            raise ToolOutOfMemory(self.argv, self.memory_mb)
        return ToolResult(proc.returncode, b"".join(out).decode("utf-8", errors="replace"), stderr)

    def cancel(self) -> None:
        """Kill it (with its children) and reap it."""
        _kill_group(self._proc.pid)
        self._proc.communicate()

    def kill(self) -> None:
        """Kill it (with its children), for a `finish` waiting on another thread to reap."""
        _kill_group(self._proc.pid)

    def waiting(self) -> bool:
        return self._proc.poll() is None


def _feed(stdin: Any, data: bytes | None) -> None:
    """Write a tool's input and close its stdin (a tool that stops reading only ends the write)."""
    if stdin is None:
        return
    try:
        if data:
            stdin.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            stdin.close()
        except (BrokenPipeError, OSError):
            pass


_SpareKey = tuple[tuple[str, ...], "str | None", int]


class SparePool:
    """Tools started ahead of need and waiting on stdin, for a language server that runs the
    same clang, opt and llvm-mca command lines edit after edit: a started process skips
    ~15-25 ms of loading and initialising LLVM (measured on this project's CI machine).

    `start` hands out the spare for a command line if one waits, else starts the tool now, and
    notes the command line; `replenish` (called when the editor is idle, after results are
    published) starts a spare for each command line noted since. A spare dies by itself when
    this process exits (its stdin closes); at most `limit` wait at once, oldest dropped first.
    """

    def __init__(self, limit: int = 4):
        self._limit = limit
        self._spares: OrderedDict[_SpareKey, RunningTool] = OrderedDict()
        self._wanted: OrderedDict[_SpareKey, None] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, argv: Sequence[str], *, memory_mb: int, cwd: str | None = None) -> RunningTool:
        key = (tuple(argv), cwd, memory_mb)
        with self._lock:
            spare = self._spares.pop(key, None)
            self._wanted[key] = None
            self._wanted.move_to_end(key)
            while len(self._wanted) > self._limit:
                self._wanted.popitem(last=False)
        if spare is not None and spare.waiting():
            return spare
        return start_tool(argv, memory_mb=memory_mb, cwd=cwd)

    def replenish(self) -> int:
        """Start the spares that are wanted and not waiting; returns how many were started."""
        with self._lock:
            wanted = [key for key in self._wanted if key not in self._spares or not self._spares[key].waiting()]
        started = 0
        for argv, cwd, memory_mb in wanted:
            if cwd is not None and not os.path.isdir(cwd):
                continue
            try:
                tool = start_tool(argv, memory_mb=memory_mb, cwd=cwd)
            except (ToolMissing, OSError):
                continue
            started += 1
            with self._lock:
                old = self._spares.pop((argv, cwd, memory_mb), None)
                self._spares[(argv, cwd, memory_mb)] = tool
                dropped = [self._spares.popitem(last=False)[1] for _ in range(len(self._spares) - self._limit)]
            for extra in [old, *dropped]:
                if extra is not None:
                    extra.cancel()
        return started

    def clear(self) -> None:
        with self._lock:
            spares, self._spares = list(self._spares.values()), OrderedDict()
            self._wanted.clear()
        for spare in spares:
            spare.cancel()


SPARES = SparePool(limit=6)  # an edit runs six: clang twice, opt three times (names, SCEV, call sites), llvm-mca


def start_warm(argv: Sequence[str], *, memory_mb: int, cwd: str | None = None, warm: bool) -> RunningTool:
    """start_tool, or with `warm` the pool's spare for the same command line."""
    if warm:
        return SPARES.start(argv, memory_mb=memory_mb, cwd=cwd)
    return start_tool(argv, memory_mb=memory_mb, cwd=cwd)
