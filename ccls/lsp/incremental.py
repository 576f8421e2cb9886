"""Per-function incremental analysis of one document: the expensive path behind the server.

`DocumentModel` keeps an open document's text and its tree-sitter tree in step with LSP
changes (tree.edit + incremental reparse). `Analyzer.analyse` runs on a worker thread: it keys
each function by (its text, the text of the same-file functions it calls — inlining at -O2
pulls their bodies in —, the file's context without function bodies, the contents of the
headers it includes, compile flags, compiler version, counting tables and options), serves
what the count cache has, and compiles only the rest through a reduced translation unit
(`ccls.lsp.reduce`), falling back to the whole file when the reduced unit does not compile.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ccls.cache import CountCache, cache_key, text_digest
from ccls.lsp import reduce
from ccls.lsp.positions import LineIndex, has_lone_cr, lone_cr_as_lf, to_bytes
from ccls.lsp.program_sizes import DocumentSizes
from ccls.model import AnalysisError, CountedFunction
from ccls.options import AnalysisOptions

log = logging.getLogger(__name__)

REDUCIBLE = frozenset({"c", "cpp", "cuda"})
_COMPILER_FOR = {"c": "clang", "cpp": "clang", "cuda": "nvcc", "llvm-ir": "opt", "ptx": "ptxas"}
_MAX_INCLUDE_FILES = 2000
_MAX_REMEMBERED_KEYS = 50_000
_FILE_UNIT = "<file>"


@functools.lru_cache(maxsize=1)
def engine_digest() -> str:
    """Digest of the code that produces counts (front ends, readers, counting) and of the
    cache's serialisation: a changed analysis never reuses counts cached by an older one."""
    import ccls
    from ccls import serialize
    root = os.path.dirname(os.path.abspath(ccls.__file__))
    parts = [ccls.__version__, str(serialize.SCHEMA)]
    for folder in ("frontends", "readers", "."):
        directory = os.path.join(root, folder)
        names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
        for name in names:
            if folder == "." and name not in _COUNTING_MODULES:
                continue
            if name.endswith(".py"):
                with open(os.path.join(directory, name), "rb") as handle:
                    parts.append(text_digest(handle.read()))
    return cache_key("engine/1", parts)


_COUNTING_MODULES = frozenset({"counting.py", "machine_code.py", "taxonomy.py", "model.py", "polynomial.py",
                               "compile_db.py", "source_map.py", "toolchain.py", "early_exit.py", "targets.py",
                               "options.py", "sizes.py", "engine.py"})


def language_for(path: str) -> str | None:
    """The front end's language for a path, or None for files ccls ignores."""
    from ccls.frontends import frontend_for
    try:
        found = frontend_for(path)
    except Exception:  # a front end that fails to import must not take the server down
        log.exception("front-end registry failed for %s", path)
        return None
    return found[0] if found else None


def _source_map():
    try:
        from ccls import source_map
        return source_map
    except ImportError:
        return None


def parse_functions(data: bytes, language: str, old_tree: Any = None) -> tuple[Any, tuple | None]:
    """(tree, functions) for languages tree-sitter knows, (None, None) for the others."""
    source_map = _source_map()
    if source_map is None:
        return None, None
    try:
        tree = source_map.parse(data, language, old_tree)
    except (ValueError, KeyError, LookupError):
        return None, None  # no grammar for this language: whole-file mode
    if tree is None:
        return None, None
    return tree, tuple(source_map.functions_in(tree, data, language))


@dataclass(frozen=True)
class Snapshot:
    """One version of a document, as handed to a worker thread (immutable)."""

    uri: str
    path: str
    language: str
    version: int
    text: str
    data: bytes
    functions: tuple | None  # SourceFunction per function; None: whole-file mode (PTX, IR)
    graph: dict[int, set[int]] | None = None  # reduce.callees of the functions (None in whole-file mode)


class DocumentModel:
    """An open document's text and syntax tree, updated incrementally on the event loop."""

    def __init__(self, uri: str, path: str, language: str, text: str, version: int):
        self.uri, self.path, self.language = uri, path, language
        self.version = version
        self._set_text(text)
        self._tree: Any = None
        self._functions: tuple | None = None
        self._graph: dict[int, set[int]] | None = None
        self._parsed = False

    def _set_text(self, text: str) -> None:
        self.text = text
        self.data = to_bytes(text)
        self._index: LineIndex | None = None
        # What tree-sitter and the compilers see: rows that are LSP lines (see positions).
        self._analysed = lone_cr_as_lf(self.data)

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def replace_all(self, text: str, version: int) -> None:
        self._set_text(text)
        self.version = version
        self._tree, self._functions, self._graph, self._parsed = None, None, None, False

    def apply_change(self, start: tuple[int, int] | None, end: tuple[int, int] | None, new_text: str,
                     encoding: str) -> None:
        """One LSP content change: range in the negotiated encoding, or None for the whole text."""
        if start is None or end is None:
            self.replace_all(new_text, self.version)
            return
        index = self.index
        start_byte, start_row, start_col = index.lsp_to_offset(start[0], start[1], encoding)
        end_byte, end_row, end_col = index.lsp_to_offset(end[0], end[1], encoding)
        if end_byte < start_byte:
            start_byte, end_byte, start_row, end_row, start_col, end_col = \
                end_byte, start_byte, end_row, start_row, end_col, start_col
        inserted = to_bytes(new_text)
        data = self.data[:start_byte] + inserted + self.data[end_byte:]
        new_rows = inserted.count(b"\n")
        new_end_col = (start_col + len(inserted)) if new_rows == 0 else len(inserted) - inserted.rfind(b"\n") - 1
        if self._analysed is not self.data or has_lone_cr(data):
            self._tree = None  # rows of an incremental edit would be tree-sitter's, not LSP lines
        if self._tree is not None:
            self._tree.edit(start_byte=start_byte, old_end_byte=end_byte, new_end_byte=start_byte + len(inserted),
                            start_point=(start_row, start_col), old_end_point=(end_row, end_col),
                            new_end_point=(start_row + new_rows, new_end_col))
        self._set_text(data.decode("utf-8", "surrogatepass"))
        self._functions, self._graph, self._parsed = None, None, False

    def functions(self) -> tuple | None:
        if not self._parsed:
            self._tree, self._functions = parse_functions(self._analysed, self.language, self._tree)
            self._parsed = True
        return self._functions

    def call_graph(self) -> dict[int, set[int]] | None:
        """Which functions each function names (`reduce.callees`), None in whole-file mode."""
        functions = self.functions()
        if self._graph is None and functions is not None:
            self._graph = reduce.callees(self._analysed, functions)
        return self._graph

    def snapshot(self) -> Snapshot:
        data = self._analysed
        text = self.text if data is self.data else data.decode("utf-8", "surrogatepass")
        return Snapshot(self.uri, self.path, self.language, self.version, text, data, self.functions(),
                        self.call_graph())


@dataclass(frozen=True)
class Unit:
    """One source function's counted functions, placed at its lines in this version."""

    key: str  # the function's text hash; "<file>:<symbol>" in whole-file mode
    identity: tuple  # (cache key, first line): equal identities have equal reports
    counted: tuple[CountedFunction, ...]


@dataclass
class Outcome:
    """What one analysis produced for one document version."""

    snapshot: Snapshot
    units: list[Unit]
    errors: list[AnalysisError]
    compiles: int = 0  # count_source calls
    compiled_functions: list[str] = field(default_factory=list)  # functions whose bodies were compiled
    cached_functions: int = 0
    reduced: bool = False
    fallback: str | None = None  # why the reduced unit was abandoned
    duration_s: float = 0.0


class Cancelled(Exception):
    """The document changed while this analysis was queued or between compiles."""


class Analyzer:
    """Thread-safe: keys, cache look-ups and compiles for document snapshots."""

    def __init__(self, cache: CountCache, count: Callable[[Any, AnalysisOptions, Any], Any],
                 tables_version: Callable[[], str]):
        self.cache = cache
        # Precompiled preambles live next to the count cache (never in the source tree).
        self.preamble_dir = os.path.join(cache.directory, "preambles") if cache.path else None
        self._count = count  # (SourceFile, options, sizes_for) -> CountedFile: the engine
        self._tables_version = tables_version
        self._header_digests: dict[str, tuple[tuple[int, int], str, tuple]] = {}
        self._function_keys: dict[tuple, str] = {}  # (context, text hash, deps) -> key
        self._lock = threading.Lock()
        self.compiles = 0
        self.functions_compiled = 0

    # -- keys --------------------------------------------------------------------------------

    def context_key(self, snapshot: Snapshot, options: AnalysisOptions) -> str:
        """Everything a function's counts depend on besides its own text and its callees."""
        from ccls import compile_db, toolchain

        counting_options = options.counting_fields()
        tool = _COMPILER_FOR.get(snapshot.language)
        compiler = toolchain.tool_version(tool) if tool else f"python {sys.version}"
        flags: tuple[str, ...] = ()
        include_dirs: list[str] = [os.path.dirname(snapshot.path)]
        if snapshot.language in REDUCIBLE:
            # Looked up exactly as the front end looks them up, so the key names the flags used.
            found = compile_db.flags_for(snapshot.path, language=snapshot.language,
                                         override=options.flags_override, extra=options.extra_flags,
                                         query_driver=options.query_driver)
            flags = found.flags
            include_dirs += _include_dirs(found.flags)
        functions = snapshot.functions or ()
        context = reduce.context_text(snapshot.data, functions) if snapshot.functions is not None else b""
        headers = self.header_digest(snapshot.data, include_dirs) if snapshot.language in REDUCIBLE else ""
        return cache_key("ctx/1", engine_digest(), snapshot.language, compiler, flags, counting_options,
                         self._tables_version(), text_digest(context), headers)

    def header_digest(self, data: bytes, include_dirs: Sequence[str]) -> str:
        """Digest of the contents of every header reachable from the text through include
        directories other than the compiler's own (those are covered by its version)."""
        seen: dict[str, str] = {}
        pending = [(name, quoted, include_dirs[0]) for name, quoted in reduce.include_lines(data)]
        missing: list[str] = []
        while pending and len(seen) < _MAX_INCLUDE_FILES:
            name, quoted, base = pending.pop()
            path = _resolve(name, quoted, base, include_dirs)
            if path is None:
                missing.append(name)
                continue
            if path in seen:
                continue
            digest, nested = self._digest_file(path)
            seen[path] = digest
            pending.extend((n, q, os.path.dirname(path)) for n, q in nested)
        return cache_key(sorted(seen.items()), sorted(set(missing)))

    def _digest_file(self, path: str) -> tuple[str, tuple]:
        try:
            st = os.stat(path)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            return "missing", ()
        with self._lock:
            hit = self._header_digests.get(path)
            if hit is not None and hit[0] == stamp:
                return hit[1], hit[2]
        try:
            with open(path, "rb") as handle:
                data = handle.read(16 * 1024 * 1024)
        except OSError:
            return "unreadable", ()
        digest, nested = text_digest(data), tuple(reduce.include_lines(data))
        with self._lock:
            self._header_digests[path] = (stamp, digest, nested)
        return digest, nested

    def forget_header(self, path: str) -> None:
        with self._lock:
            self._header_digests.pop(path, None)

    def unit_keys(self, snapshot: Snapshot, options: AnalysisOptions, sizes: DocumentSizes | None = None) -> list[str]:
        """One cache key per function (whole-file mode: one key for the file). A function's
        key holds the sizes its callers pass (`sizes`), which its counts are evaluated at."""
        context = self.context_key(snapshot, options)
        sizes = sizes or {}
        if snapshot.functions is None:
            return [cache_key("file/1", context, text_digest(snapshot.data), size_values(sizes))]
        functions, graph = snapshot.functions, snapshot.graph
        keys = []
        for i, fn in enumerate(functions):
            deps = tuple(sorted(functions[j].text_hash for j in reduce.closure(graph, [i]) if j != i))
            # An edit changes one function's key: the others are looked up, not re-digested.
            parts = (context, fn.text_hash, deps, size_values({fn.qualified_name: sizes.get(fn.qualified_name, {})}))
            key = self._function_keys.get(parts)
            if key is None:
                if len(self._function_keys) > _MAX_REMEMBERED_KEYS:
                    self._function_keys.clear()
                key = self._function_keys[parts] = cache_key("fn/1", context, fn.text_hash, list(deps), parts[3])
            keys.append(key)
        return keys

    # -- analysis ----------------------------------------------------------------------------

    def analyse(self, snapshot: Snapshot, options: AnalysisOptions,
                cancelled: Callable[[], bool] = lambda: False, remember: bool = True,
                previous: Outcome | None = None, sizes: DocumentSizes | None = None) -> Outcome:
        """Counts for every function of the snapshot. `remember=False` (the background pass)
        keeps its entries out of the cache's memory layer, and compiles each file whole: a
        precompiled preamble only pays off for a buffer compiled again and again. Units of
        `previous` (the document's last outcome) whose key and first line are unchanged are
        taken over as they are. `sizes`: what the workspace's call sites pass each function
        of the document (by name), see `ccls.sizes`."""
        started = time.monotonic()
        sizes = sizes or {}
        keys = self.unit_keys(snapshot, options, sizes)
        if remember:
            options = dataclasses.replace(options, preamble_dir=self.preamble_dir, warm_tools=True)
        if snapshot.functions is None:
            outcome = self._analyse_file(snapshot, options, keys[0], remember, sizes)
        else:
            reusable = {unit.identity: unit for unit in previous.units} \
                if previous is not None and previous.snapshot.path == snapshot.path else {}
            outcome = self._analyse_functions(snapshot, options, keys, snapshot.graph, cancelled, remember, reusable,
                                              sizes)
        outcome.duration_s = time.monotonic() - started
        return outcome

    def _compile(self, snapshot: Snapshot, text: str, options: AnalysisOptions, sizes: DocumentSizes) -> Any:
        from ccls.frontends import SourceFile
        with self._lock:
            self.compiles += 1

        def sizes_for(fn: Any) -> dict:
            return sizes.get(fn.display_name) or sizes.get(fn.name) or {}
        try:
            return self._count(SourceFile(snapshot.path, _compilable(text)), options, sizes_for)
        except Exception as exc:  # a front-end bug must become a diagnostic, not a dead worker
            log.exception("analysis of %s failed", snapshot.path)
            return _Failed([AnalysisError(snapshot.path, None, f"internal error while analysing: {exc}")])

    def _analyse_file(self, snapshot: Snapshot, options: AnalysisOptions, key: str, remember: bool,
                      sizes: DocumentSizes) -> Outcome:
        cached = self.cache.get(key, remember)
        if cached is not None:
            counted = [with_size_notes(reduce.shift_lines(cf, 0, snapshot.path), sizes) for cf in cached]
            return Outcome(snapshot, _file_units(key, counted), [], cached_functions=len(counted))
        result = self._compile(snapshot, snapshot.text, options, sizes)
        counted = list(result.functions)
        if not result.errors:
            self.cache.put(key, counted, remember)
        with self._lock:
            self.functions_compiled += len(counted)
        return Outcome(snapshot, _file_units(key, counted), list(result.errors), compiles=1,
                       compiled_functions=[cf.display_name for cf in counted])

    def _analyse_functions(self, snapshot: Snapshot, options: AnalysisOptions, keys: list[str],
                           graph: dict[int, set[int]], cancelled: Callable[[], bool], remember: bool,
                           reusable: dict[tuple, Unit], sizes: DocumentSizes) -> Outcome:
        functions = snapshot.functions
        found: dict[int, list[CountedFunction]] = {}
        reused: dict[int, Unit] = {}
        for i, key in enumerate(keys):
            unit = reusable.get((key, functions[i].start_line))
            if unit is not None:
                reused[i] = unit
                continue
            hit = self.cache.get(key, remember)
            if hit is not None:
                found[i] = hit
        missing = [i for i in range(len(functions)) if i not in found and i not in reused]
        outcome = Outcome(snapshot, [], [], cached_functions=len(found) + len(reused))
        if missing:
            if cancelled():
                raise Cancelled()
            self._fill(snapshot, options, keys, graph, missing, found, outcome, cancelled, remember, sizes)
        for i, fn in enumerate(functions):
            if i in reused:
                outcome.units.append(reused[i])  # equal keys: equal text hashes
                continue
            placed = tuple(with_size_notes(reduce.shift_lines(cf, fn.start_line - 1, snapshot.path), sizes)
                           for cf in found.get(i, []))
            if placed:
                outcome.units.append(Unit(fn.text_hash, (keys[i], fn.start_line), placed))
        return outcome

    def _fill(self, snapshot: Snapshot, options: AnalysisOptions, keys: list[str], graph: dict[int, set[int]],
              missing: list[int],
              found: dict[int, list[CountedFunction]], outcome: Outcome, cancelled: Callable[[], bool],
              remember: bool, sizes: DocumentSizes) -> None:
        functions = snapshot.functions
        keep = reduce.units_to_compile(snapshot.data, functions, missing, snapshot.language, graph)
        result = None
        if snapshot.language in REDUCIBLE and len(keep) < len(functions):
            declare = reduce.referenced(snapshot.data, functions, keep, graph)
            reduced = reduce.reduced_text(snapshot.data, functions, keep, snapshot.language, declare)
            result = self._compile(snapshot, reduced.decode("utf-8", "surrogatepass"), options, sizes)
            outcome.compiles += 1
            outcome.reduced = True
            if result.errors and "timed out" not in result.errors[0].message:
                outcome.fallback = "the reduced unit did not compile: " + result.errors[0].message.splitlines()[0]
                log.info("%s: %s; compiling the whole file", snapshot.path, outcome.fallback)
                result = None
                if cancelled():
                    raise Cancelled()
        if result is None:
            keep = set(range(len(functions)))
            result = self._compile(snapshot, snapshot.text, options, sizes)
            outcome.compiles += 1
            outcome.reduced = False
        outcome.errors.extend(result.errors)
        outcome.compiled_functions = [functions[i].qualified_name for i in sorted(keep)]
        with self._lock:
            self.functions_compiled += len(keep)
        if result.errors and not result.functions:
            return  # nothing learned; cached functions still show
        placed = reduce.assign(result.functions, functions)
        store = []
        # Only the functions that were missing are stored: a kept caller or callee compiled as
        # context may be inlined differently here than in its own unit, and has a valid entry.
        for i in missing:
            # Relative to the function's first line, so a function that moved still hits.
            found[i] = [reduce.shift_lines(cf, -(functions[i].start_line - 1)) for cf in placed.get(i, [])]
            if not result.errors:
                store.append((keys[i], found[i]))
        self.cache.put_many(store, remember)


def size_values(sizes: DocumentSizes) -> tuple:
    """The values (not where they came from) that counts depend on, in a stable order."""
    return tuple(sorted((name, tuple(sorted((p, s.value) for p, s in params.items())))
                        for name, params in sizes.items() if params))


def with_size_notes(cf: CountedFunction, sizes: DocumentSizes) -> CountedFunction:
    """A counted function's size notes as the call sites say today: its key fixed the values,
    but a call site may have moved since it was cached."""
    if not cf.inferred_sizes:
        return cf
    found = sizes.get(cf.display_name) or sizes.get(cf.name) or {}
    notes = [found[name].describe(name) for name in cf.inferred_sizes if name in found]
    return dataclasses.replace(cf, size_notes=notes) if notes != cf.size_notes and len(notes) == len(cf.inferred_sizes) else cf


def definition_rows(lines: Sequence[str], language: str, cf: CountedFunction) -> tuple[int, int] | None:
    """0-based (first, last) rows of a function defined in an IR/PTX listing. An IR function's
    debug lines are those of its C source, so its `define` line is looked up by symbol."""
    symbol = re.escape(cf.name)
    if language == "llvm-ir":
        pattern = re.compile(rf'^define\b.*@(?:{symbol}|"{symbol}")\(')
    else:
        pattern = re.compile(rf"^\s*(?:\.\w+\s+)*\.(?:entry|func)\b.*\b{symbol}\b")
    if language != "llvm-ir" and cf.line and 0 < cf.line <= len(lines) and cf.name in lines[cf.line - 1]:
        first = cf.line - 1
    else:
        first = next((i for i, line in enumerate(lines) if pattern.search(line)), None)
        if first is None:
            return None
    last = next((i for i in range(first + 1, len(lines)) if lines[i].startswith("}")), first)
    return first, last


def _file_units(key: str, counted: list[CountedFunction]) -> list[Unit]:
    return [Unit(f"{_FILE_UNIT}:{cf.name}", (key, cf.name, cf.line), (cf,)) for cf in counted]


def all_counted(outcome: Outcome) -> list[CountedFunction]:
    return [cf for unit in outcome.units for cf in unit.counted]


@dataclass
class _Failed:
    errors: list[AnalysisError]
    functions: list[CountedFunction] = field(default_factory=list)


def _compilable(text: str) -> str:
    """Text the front end can write: lone surrogates it cannot encode become U+FFFD."""
    try:
        text.encode("utf-8", "surrogateescape")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _include_dirs(flags: Sequence[str]) -> list[str]:
    dirs, i = [], 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("-isystem", "-iquote", "-idirafter") and i + 1 < len(flags):
            dirs.append(flags[i + 1])
            i += 2
            continue
        if flag.startswith("-I") and len(flag) > 2:
            dirs.append(flag[2:])
        i += 1
    return dirs


def _resolve(name: str, quoted: bool, base: str, include_dirs: Sequence[str]) -> str | None:
    candidates = ([base] if quoted else []) + list(include_dirs)
    for directory in candidates:
        path = os.path.normpath(os.path.join(directory, name))
        if os.path.isfile(path):
            return path
    return None
