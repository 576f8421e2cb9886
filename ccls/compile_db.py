"""Compile flags for a source file, found the way clangd finds them, and treated as untrusted.

A repository's compile_commands.json / compile_flags.txt is attacker-controlled input: it must
not make us load a plugin, run another program, or write files. So flags pass an allowlist
(include paths, macros, language standard, -f/-m/-W/-O, -x); everything else is removed, and
removals that were a safety matter (plugins, response files, other executables, file writers)
are reported in `CompileFlags.dropped`. The compiler a database names is only reported as
usable when it matches the user's --query-driver style globs; it is never run to query it.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import stat
import threading
from dataclasses import dataclass
from typing import Sequence

from ccls.frontends import suffix_language


@dataclass(frozen=True)
class CompileFlags:
    flags: tuple[str, ...]  # sanitised; relative paths made absolute; no input file, no output flags
    directory: str  # working directory of the database entry (or the file's directory)
    compiler: str | None  # the entry's compiler, only if allowlisted by query_driver globs
    origin: str  # where the flags came from, for the user ("compile_commands.json at /x/build", ...)
    dropped: tuple[str, ...] = ()  # removed for safety: tell the user
    ignored: tuple[str, ...] = ()  # removed as routine or inapplicable (-c, -o x.o, -g, the input file)


_DATABASE = "compile_commands.json"
_FLAGS_FILE = "compile_flags.txt"
_MAX_DATABASE_BYTES = 512 * 1024 * 1024  # Chromium's database is ~200 MB; beyond this, refuse
_MAX_FLAGS_FILE_BYTES = 1024 * 1024

# Build launchers wrap the compiler: `ccache /usr/bin/clang ...` names clang as argv[1].
_LAUNCHERS = frozenset({"ccache", "sccache", "distcc", "icecc", "buildcache"})

# What `-x` and `-std=` say about the language (clang's and gcc's spellings).
_X_LANGUAGE = {"c": "c", "c-header": "c", "c++": "cpp", "c++-header": "cpp", "cuda": "cuda"}
_STD_LANGUAGE = re.compile(r"-std=(?:(?P<cpp>(?:c|gnu)\+\+)|(?:c|gnu|iso9899:))")
_CXX_DRIVER = re.compile(r"(?:clang|g|c)\+\+(?:-[\d.]+)?(?:\.exe)?$")

# Flags whose value is the next argument (when not joined). Consuming the value matters: it must
# not be read as a flag or an input file of its own.
_SEPARATE_VALUE = frozenset({
    "-I", "-D", "-U", "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-x", "-o",
    "-MF", "-MT", "-MQ", "-MJ", "-Xclang", "-mllvm", "-Xcompiler", "-Xlinker", "-Xassembler",
    "-Xpreprocessor", "-Xptxas", "-Xnvlink", "-Xarchive", "-Xopenmp-target", "-target", "-arch",
    "-B", "-load", "-ccbin", "--compiler-bindir", "--config", "-wrapper", "-isysroot", "--sysroot",
    "-gcc-toolchain", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-L", "-l", "-T", "-u", "-z",
    "-gencode", "--generate-code", "--gpu-architecture", "--gpu-code", "-code", "--std", "-include-pch",
    "-dependency-file", "-main-file-name", "--output-file", "-aux-info", "-dumpdir", "-dumpbase",
    "--default-stream", "-fplugin",
})

# Path-valued flags kept in the output; relative values are resolved against the entry directory.
_PATH_FLAGS = ("-isystem", "-iquote", "-idirafter", "-include", "-imacros")

# -f flags removed for safety: they load code or write files at a path of the database's choosing.
_DANGEROUS_F_PREFIXES = (
    "-fplugin", "-fpass-plugin", "-fcrash-diagnostics-dir", "-fmodules-cache-path", "-ftime-trace",
    "-fsave-optimization-record", "-foptimization-record-file", "-fdump-", "-fstack-usage",
    "-fcallgraph-info", "-fuse-ld",
)
# -f flags removed as inapplicable: instrumentation inflates counts (sanitizers, coverage,
# profiling), colour/format flags garble the diagnostics we parse, modules/PCH come from
# another compiler's build.
_IGNORED_F_PREFIXES = (
    "-fsanitize", "-fno-sanitize", "-fprofile", "-fcs-profile", "-fcoverage", "-ftest-coverage",
    "-finstrument-function", "-fxray", "-fcolor-diagnostics", "-fno-color-diagnostics",
    "-fdiagnostics-color", "-fdiagnostics-format", "-fansi-escape-codes", "-fmessage-length",
    "-fmodules", "-fcxx-modules", "-fimplicit-module", "-fmodule-", "-fpch-", "-fsyntax-only",
    "-fintegrated-as", "-fno-integrated-as", "-fembed-bitcode", "-fdebug-", "-fno-debug-",
    "-forward-unknown-to-host", "-forward-slash-prefix-opts",  # nvcc options, not -f flags
)
# Exact-name flags removed for safety.
_DANGEROUS_EXACT = frozenset({"-load", "-ccbin", "--compiler-bindir", "-wrapper", "--config", "-B",
                              "-save-temps", "-fplugin"})
_DANGEROUS_PREFIXES = ("-B", "--driver-mode", "-ccc-", "--config=", "-specs", "--specs", "-save-temps",
                       "-ccbin=", "--compiler-bindir=", "--ld-path", "-Wp,")
# -Xclang values that load code into the compiler.
_DANGEROUS_CC1 = ("-load", "-plugin", "-add-plugin", "-plugin-arg", "-load-pass-plugin", "-fplugin",
                  "-fpass-plugin")
# Values of host/linker pass-through flags that would be dangerous if passed on.
_PASSTHROUGH = ("-Xcompiler", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-Xptxas", "-Xnvlink",
                "-Xarchive", "-Xopenmp-target", "-Wl,", "-Wa,")

# nvcc options that change what compiles (not just how it is reported); kept for .cu entries.
_NVCC_KEEP = frozenset({"--expt-relaxed-constexpr", "-expt-relaxed-constexpr", "--expt-extended-lambda",
                        "-expt-extended-lambda", "--extended-lambda", "-extended-lambda", "--use_fast_math",
                        "-use_fast_math", "-rdc=true", "--relocatable-device-code=true"})
_KEEP_EXACT = frozenset({"-nostdinc", "-nostdinc++", "-nostdlibinc", "-pthread", "-ansi", "-pedantic", "-w"})


@dataclass(frozen=True)
class _Sanitised:
    flags: tuple[str, ...]
    dropped: tuple[str, ...]
    ignored: tuple[str, ...]


def anchored(args: Sequence[str], directory: str) -> tuple[str, ...]:
    """`args` with relative include paths made absolute against `directory`, as clang reads
    them against its working directory (`--flags=-Iinc` on the command line means ./inc)."""
    out: list[str] = []
    pending: str | None = None
    for arg in args:
        if pending is not None:
            out.append(_absolute(arg, directory))
            pending = None
        elif arg == "-I" or arg in _PATH_FLAGS:
            out.append(arg)
            pending = arg
        elif arg.startswith("-I") and len(arg) > 2:
            out.append("-I" + _absolute(arg[2:], directory))
        else:
            flag = next((f for f in _PATH_FLAGS if arg.startswith(f) and len(arg) > len(f)
                         and not arg.startswith("-include-pch")), None)
            out.append(flag + _absolute(arg[len(flag):], directory) if flag else arg)
    return tuple(out)


def _absolute(value: str, directory: str) -> str:
    if not value or os.path.isabs(value) or value.startswith("="):  # "=dir" is sysroot-relative
        return value
    return os.path.normpath(os.path.join(directory, value))


def _dangerous_value(value: str) -> bool:
    """A pass-through value (-Xcompiler X, -Wl,a,b) that would load code or pick executables."""
    for part in value.split(","):
        part = part.strip()
        if part.startswith("@") or part.startswith(_DANGEROUS_F_PREFIXES) or part in _DANGEROUS_EXACT \
                or part.startswith(_DANGEROUS_PREFIXES) or part.startswith(_DANGEROUS_CC1):
            return True
    return False


def sanitise(args: Sequence[str], directory: str) -> _Sanitised:
    """Split compiler arguments (without argv[0]) into kept, dropped-for-safety and ignored."""
    kept: list[str] = []
    dropped: list[str] = []
    ignored: list[str] = []
    args = list(args)
    i = 0
    after_load = False  # the -Xclang after `-Xclang -load` (or -plugin) carries the plugin path or name
    while i < len(args):
        arg = args[i]
        value: str | None = None
        if arg in _SEPARATE_VALUE and i + 1 < len(args):
            value = args[i + 1]
            i += 2
        else:
            i += 1
        shown = arg if value is None else f"{arg} {value}"

        if arg.startswith("@"):
            dropped.append(arg)  # response file: never read it
        elif arg == "-Xclang":
            if value is not None and (after_load or value.startswith(_DANGEROUS_CC1) or value.startswith("@")):
                dropped.append(shown)
                after_load = not after_load and (value in ("-load", "-plugin", "-add-plugin")
                                                 or value.startswith("-plugin-arg"))
            else:
                ignored.append(shown)  # cc1 options bypass the driver; not worth the risk
                after_load = False
        elif arg in ("-mllvm",):
            ignored.append(shown)
        elif arg.startswith(_PASSTHROUGH) or arg.startswith(tuple(p + "=" for p in _PASSTHROUGH)):
            payload = value if value is not None else arg.split("=", 1)[-1] if "=" in arg else arg[4:]
            (dropped if _dangerous_value(payload) else ignored).append(shown)
        elif arg in _DANGEROUS_EXACT or arg.startswith(_DANGEROUS_PREFIXES) \
                or arg.startswith(_DANGEROUS_F_PREFIXES):
            dropped.append(shown)
        elif arg in ("-I", "-D", "-U") and value is not None:
            kept.append(arg + (_absolute(value, directory) if arg == "-I" else value))
        elif arg.startswith("-I") and len(arg) > 2:
            kept.append("-I" + _absolute(arg[2:], directory))
        elif arg.startswith(("-D", "-U")) and len(arg) > 2:
            kept.append(arg)
        elif arg in _PATH_FLAGS and value is not None:
            kept.extend((arg, _absolute(value, directory)))
        elif arg.startswith(_PATH_FLAGS) and not arg.startswith("-include-pch"):
            flag = next(f for f in _PATH_FLAGS if arg.startswith(f))
            kept.extend((flag, _absolute(arg[len(flag):], directory)))
        elif arg.startswith("-std=") or arg.startswith("--std="):
            kept.append("-std=" + arg.split("=", 1)[1])
        elif arg == "--std" and value is not None:
            kept.append("-std=" + value)
        elif arg == "-x" and value is not None:
            kept.extend((arg, value))
        elif arg.startswith("-x") and len(arg) > 2:
            kept.extend(("-x", arg[2:]))
        elif arg.startswith("-f"):
            (ignored if arg.startswith(_IGNORED_F_PREFIXES) else kept).append(arg)
        elif arg.startswith("-m") or arg.startswith("-O") or arg in _KEEP_EXACT or arg in _NVCC_KEEP:
            kept.append(arg)
        elif arg.startswith("-W"):
            # -Werror would turn warnings our clang emits (and the project's compiler did not) into errors.
            (ignored if arg.startswith("-Werror") else kept).append(arg)
        else:
            ignored.append(shown)  # -c, -o x, -M*, -g, -target, the input file, unknown flags
    return _Sanitised(tuple(kept), tuple(dropped), tuple(ignored))


# --- compile_commands.json ----------------------------------------------------------------------

@dataclass(frozen=True)
class _Entry:
    file: str  # absolute, normalised
    directory: str
    argv: tuple[str, ...]


class _Database:
    def __init__(self, entries: list[_Entry], skipped: int):
        self.entries = tuple(entries)
        self.skipped = skipped  # malformed entries left out
        self.by_file: dict[str, _Entry] = {}
        for entry in entries:
            self.by_file.setdefault(entry.file, entry)  # first entry wins, as in clangd
        self._by_real_file: dict[str, _Entry] | None = None
        # directory -> (its parts, first entries, first entries by stem), built once; "first
        # entries" maps None and each file language to its first (database index, entry) there.
        self._by_directory: dict[str, tuple[list[str], dict, dict[str, dict]]] | None = None
        # path -> the entries nearest to it (see `nearest`): one scan serves a header's language
        # and its flags, for each open and each listed file.
        self._nearest: dict[str, dict[str | None, _Entry]] = {}
        self._lock = threading.Lock()

    def nearest(self, path: str) -> dict[str | None, _Entry]:
        """Among the entries that score best on everything but language — nearest in the
        directory tree, then in the same directory, then of the same stem (foo.h -> foo.cpp) —
        the first in database order (key None) and the first of each file language."""
        found = self._nearest.get(path)
        if found is not None:
            return found
        with self._lock:
            if self._by_directory is None:
                groups: dict[str, tuple[list[str], dict, dict[str, dict]]] = {}
                for index, e in enumerate(self.entries):
                    folder = os.path.dirname(e.file)
                    parts_of, firsts, by_stem = groups.setdefault(folder, (folder.split(os.sep), {}, {}))
                    stem_firsts = by_stem.setdefault(os.path.splitext(os.path.basename(e.file))[0], {})
                    for table in (firsts, stem_firsts):
                        for key in (None, _language_of(e.file)):
                            table.setdefault(key, (index, e))
                self._by_directory = groups
        directory = os.path.dirname(path)
        parts = directory.split(os.sep)
        stem = os.path.splitext(os.path.basename(path))[0]
        best: list[tuple[dict, dict[str, dict]]] = []
        best_score = None
        for folder, (folder_parts, firsts, by_stem) in self._by_directory.items():
            depth = 0
            for mine, theirs in zip(parts, folder_parts):
                if mine != theirs:
                    break
                depth += 1
            score = (max(depth, 2), folder == directory)  # as os.path.commonpath counts "/" (two parts)
            if best_score is None or score > best_score:
                best, best_score = [(firsts, by_stem)], score
            elif score == best_score:
                best.append((firsts, by_stem))
        same_stem = [by_stem[stem] for _, by_stem in best if stem in by_stem]
        found: dict[str | None, _Entry] = {}
        chosen: dict[str | None, int] = {}
        for table in same_stem or [firsts for firsts, _ in best]:
            for key, (index, entry) in table.items():
                if key not in chosen or index < chosen[key]:
                    chosen[key], found[key] = index, entry
        self._nearest[path] = found
        return found

    def lookup(self, path: str) -> _Entry | None:
        """The entry for a normalised absolute path, also through symlinks on either side."""
        entry = self.by_file.get(path)
        if entry is not None:
            return entry
        with self._lock:  # built once, on the first miss: realpath costs a stat per component
            if self._by_real_file is None:
                self._by_real_file = {}
                for e in self.entries:
                    self._by_real_file.setdefault(os.path.realpath(e.file), e)
        return self._by_real_file.get(os.path.realpath(path))


_cache: dict[str, tuple[tuple[int, int], _Database | str]] = {}
_cache_lock = threading.Lock()


def _regular_file_size(path: str) -> int | None:
    """Size of a regular file, or None (absent, a directory, a FIFO that would block a read...)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _parse_database(json_path: str) -> _Database | str:
    """The database, or a message saying why it is unusable."""
    size = _regular_file_size(json_path)
    if size is None:
        return "cannot be read"
    if size > _MAX_DATABASE_BYTES:
        return f"is too large ({size} bytes)"
    try:
        with open(json_path, "rb") as f:
            raw = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"is invalid: {exc}"
    if not isinstance(raw, list):
        return "is invalid: the top level is not a list"
    base = os.path.dirname(json_path)
    entries: list[_Entry] = []
    skipped = 0
    for item in raw:
        entry = _parse_entry(item, base)
        if entry is None:
            skipped += 1
        else:
            entries.append(entry)
    return _Database(entries, skipped)


def _parse_entry(item: object, base: str) -> _Entry | None:
    if not isinstance(item, dict):
        return None
    directory, file = item.get("directory"), item.get("file")
    if not isinstance(directory, str) or not isinstance(file, str):
        return None
    directory = _absolute(directory, base)
    arguments = item.get("arguments")
    if isinstance(arguments, list) and arguments and all(isinstance(a, str) for a in arguments):
        argv = tuple(arguments)
    elif isinstance(item.get("command"), str):
        try:
            argv = tuple(shlex.split(item["command"]))
        except ValueError:  # unbalanced quotes
            return None
        if not argv:
            return None
    else:
        return None
    return _Entry(os.path.normpath(os.path.join(directory, file)), directory, argv)


def _load_database(json_path: str) -> _Database | str:
    try:
        st = os.stat(json_path)
        key = (st.st_mtime_ns, st.st_size)
    except OSError:
        return "cannot be read"
    with _cache_lock:
        hit = _cache.get(json_path)
        if hit is not None and hit[0] == key:
            return hit[1]
    parsed = _parse_database(json_path)
    with _cache_lock:
        _cache[json_path] = (key, parsed)
    return parsed


def _language_of(path: str) -> str | None:
    """A database file's language by its suffix; "header" for headers (neutral when borrowing)."""
    language = suffix_language(path)
    if language is None:
        return None
    return "header" if path.endswith(language.includes) else language.name


def declared_language(args: Sequence[str], compiler: str | None = None) -> str | None:
    """The language a command line names ("c", "cpp", "cuda"): its last `-x`, else its `-std=`,
    else a C++ driver's name (clang++, g++, c++ compile .c files as C++); None if it says nothing."""
    for i in range(len(args) - 1, -1, -1):
        arg = args[i]
        value = args[i + 1] if arg == "-x" and i + 1 < len(args) else arg[2:] if arg.startswith("-x") else None
        if value in _X_LANGUAGE:
            return _X_LANGUAGE[value]
    for arg in reversed(args):
        found = _STD_LANGUAGE.match(arg)
        if found:
            return "cpp" if found["cpp"] else "c"
    if compiler and _CXX_DRIVER.search(os.path.basename(compiler)):
        return "cpp"
    return None


def _entry_language(entry: _Entry) -> str | None:
    """What an entry compiles its file as: what its command line says, else its file's suffix."""
    index = 1 if len(entry.argv) > 1 and os.path.basename(entry.argv[0]) in _LAUNCHERS else 0
    declared = declared_language(entry.argv[index + 1:], entry.argv[index])
    by_suffix = _language_of(entry.file)
    if by_suffix == "cuda" and declared in ("cpp", None):  # CUDA is C++: nvcc's -std=c++17 names the dialect
        return by_suffix
    return declared or by_suffix


def build_language(path: str) -> str | None:
    """The language the build gives `path`, found where `flags_for` finds its flags: the
    database entry for it, else the entry its flags would be borrowed from, else what a
    `compile_flags.txt` says. None when the build says nothing (or names only a header)."""
    path = os.path.normpath(os.path.abspath(path))
    for directory in _ancestors(os.path.dirname(path), None):
        for json_path in (os.path.join(directory, _DATABASE), os.path.join(directory, "build", _DATABASE)):
            if not os.path.lexists(json_path):
                continue
            db = _load_database(json_path)
            if isinstance(db, str) or not db.entries:
                continue
            entry = db.lookup(path) or _borrow(db, path, None)
            language = _entry_language(entry)
            return None if language == "header" else language
        flags_path = os.path.join(directory, _FLAGS_FILE)
        if os.path.lexists(flags_path):
            lines = _flags_file(flags_path)
            if isinstance(lines, str):
                continue
            return declared_language(sanitise(lines, directory).flags)
    return None


def _borrow(db: _Database, path: str, language: str | None) -> _Entry | None:
    """Simplified clangd interpolation: the entry nearest in the directory tree, preferring one
    with the same stem (foo.h -> foo.cpp), then one of the same language."""
    nearest = db.nearest(path)
    return nearest.get(language) or nearest.get(None)


def _compiler(argv: Sequence[str], directory: str) -> tuple[str | None, int]:
    """(absolute compiler path as named, index of the first argument after it)."""
    index = 0
    if len(argv) > 1 and os.path.basename(argv[0]) in _LAUNCHERS:
        index = 1
    name = argv[index]
    if os.sep in name:
        return os.path.normpath(os.path.join(directory, name)), index + 1
    return shutil.which(name), index + 1  # a PATH lookup only; nothing is run


def _allowed(compiler: str | None, query_driver: Sequence[str]) -> str | None:
    if compiler is None or not query_driver:
        return None
    if not (os.path.isfile(compiler) and os.access(compiler, os.X_OK)):
        return None
    names = {compiler, os.path.realpath(compiler)}
    if any(fnmatch.fnmatchcase(n, glob) for n in names for glob in query_driver):
        return compiler
    return None


def _flags_file(path: str) -> tuple[str, ...] | str:
    size = _regular_file_size(path)
    if size is None:
        return "cannot be read"
    if size > _MAX_FLAGS_FILE_BYTES:
        return f"is too large ({size} bytes)"
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def _ancestors(directory: str, stop_at: str | None):
    stop = os.path.normpath(os.path.abspath(stop_at)) if stop_at else None
    if stop is not None and os.path.commonpath([stop, directory]) != stop:
        stop = None  # the file is outside the workspace: search up to the root
    while True:
        yield directory
        parent = os.path.dirname(directory)
        if directory == stop or parent == directory:
            return
        directory = parent


def flags_for(path: str, *, language: str, override: Sequence[str] | None = None, extra: Sequence[str] = (),
              query_driver: Sequence[str] = (), stop_at: str | None = None) -> CompileFlags:
    """Compile flags for `path` ("c", "cpp" or "cuda"). Never raises on a bad database: problems are
    reported in `origin`. `override` replaces the database; `extra` is appended (both sanitised,
    since a workspace settings file is as untrusted as a database)."""
    path = os.path.normpath(os.path.abspath(path))
    file_dir = os.path.dirname(path)
    extra_dir = os.path.normpath(os.path.abspath(stop_at)) if stop_at else file_dir
    extra_s = sanitise(extra, extra_dir)
    if override is not None:
        s = sanitise(override, extra_dir)
        return CompileFlags(s.flags + extra_s.flags, file_dir, None, "settings",
                            s.dropped + extra_s.dropped, s.ignored + extra_s.ignored)

    problems: list[str] = []
    for directory in _ancestors(file_dir, stop_at):
        for json_path in (os.path.join(directory, _DATABASE), os.path.join(directory, "build", _DATABASE)):
            if not os.path.lexists(json_path):
                continue
            where = f"{_DATABASE} at {os.path.dirname(json_path)}"
            db = _load_database(json_path)
            if isinstance(db, str):
                problems.append(f"{where} {db}")
                continue
            if not db.entries:
                problems.append(f"{where} has no usable entries")
                continue
            result = _from_entry(db, path, language, where, query_driver)
            return _finish(result, extra_s, problems)
        flags_path = os.path.join(directory, _FLAGS_FILE)
        if os.path.lexists(flags_path):
            lines = _flags_file(flags_path)
            where = f"{_FLAGS_FILE} at {directory}"
            if isinstance(lines, str):
                problems.append(f"{where} {lines}")
                continue
            s = sanitise(lines, directory)
            return _finish(CompileFlags(s.flags, directory, None, where, s.dropped, s.ignored), extra_s, problems)
    origin = "; ".join(problems) + "; using defaults" if problems else "default"
    return CompileFlags(extra_s.flags, file_dir, None, origin, extra_s.dropped, extra_s.ignored)


def _from_entry(db: _Database, path: str, language: str, where: str, query_driver: Sequence[str]) -> CompileFlags:
    if db.skipped:
        where += f" ({db.skipped} malformed entries skipped)"
    entry = db.lookup(path)
    borrowed = entry is None
    if entry is None:
        entry = _borrow(db, path, language)
        where += f" (flags borrowed from {entry.file})"
    compiler, first = _compiler(entry.argv, entry.directory)
    s = sanitise(entry.argv[first:], entry.directory)
    flags, ignored = list(s.flags), list(s.ignored)
    if borrowed:
        donor = _entry_language(entry)
        if donor not in (language, "header", None):
            # A C file's -std=c11 or -x c would break a C++ compile: drop the language choice.
            flags, dropped_lang = _without_language(flags)
            ignored += dropped_lang
    return CompileFlags(tuple(flags), entry.directory, _allowed(compiler, query_driver), where,
                        s.dropped, tuple(ignored))


def _without_language(flags: list[str]) -> tuple[list[str], list[str]]:
    kept, removed = [], []
    i = 0
    while i < len(flags):
        if flags[i] == "-x" and i + 1 < len(flags):
            removed.append(f"-x {flags[i + 1]}")
            i += 2
            continue
        (removed if flags[i].startswith("-std=") else kept).append(flags[i])
        i += 1
    return kept, removed


def _finish(found: CompileFlags, extra: _Sanitised, problems: list[str]) -> CompileFlags:
    origin = found.origin if not problems else f"{found.origin} ({'; '.join(problems)})"
    return CompileFlags(found.flags + extra.flags, found.directory, found.compiler, origin,
                        found.dropped + extra.dropped, found.ignored + extra.ignored)
