"""The count stage of the service: one snapshot of a file in, counted functions out, served
from the persistent count cache where possible.

`Analyzer.analyse` keys each function by (its text, the text of the same-file functions it
calls — inlining at -O2 pulls their bodies in —, the file's context without function bodies,
the contents of the headers it includes, compile flags, compiler version, counting tables and
options, the sizes its callers pass, the engine digest), serves what the count cache has, and
compiles only the rest through a reduced translation unit (`ccls.service.units`), falling back
to the whole file when the reduced unit does not compile. Thread-safe; no editor types.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ccls.cache import CountCache, cache_key, text_digest
from ccls.engine import CountedFile, count_source
from ccls.frontends import SourceFile, language_named
from ccls.frontends import language_for as registry_language
from ccls.model import AnalysisError, CountedFunction
from ccls.options import AnalysisOptions
from ccls.service import units
from ccls.service.digest import engine_digest
from ccls.service.program_sizes import DocumentSizes
from ccls.service.tables import TableStore
from ccls.service.versions import ask_versions, tool_versions

log = logging.getLogger(__name__)

_MAX_INCLUDE_FILES = 2000
_MAX_REMEMBERED_KEYS = 50_000
_FILE_UNIT = "<file>"


def language_for(path: str) -> str | None:
    """The front end's language for a path, or None for files ccls ignores."""
    try:
        found = registry_language(path)
    except Exception:  # a front end that fails to import must not take the server down
        log.exception("front-end registry failed for %s", path)
        return None
    return found.name if found else None


def parse_functions(data: bytes, language: str, old_tree: Any = None) -> tuple[Any, tuple | None]:
    """(tree, functions) for languages tree-sitter knows, (None, None) for the others."""
    from ccls import source_map  # tree-sitter: the editor's per-function mode only

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
    graph: dict[int, set[int]] | None = None  # units.callees of the functions (None in whole-file mode)


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
    # Functions (indices) neither cached nor counted: left for a later call (`batch`).
    pending: list[int] = field(default_factory=list)


class Cancelled(Exception):
    """The document changed while this analysis was queued or between compiles."""


class Analyzer:
    """Thread-safe: keys, cache look-ups and compiles for document snapshots."""

    def __init__(self, cache: CountCache, tables: TableStore):
        self.cache = cache
        # Precompiled preambles live next to the count cache (never in the source tree).
        self.preamble_dir = os.path.join(cache.directory, "preambles") if cache.path else None
        self.tables = tables
        self._header_digests: dict[str, tuple[tuple[int, int], str, tuple]] = {}
        self._function_keys: dict[tuple, str] = {}  # (context, text hash, deps) -> key
        self._lock = threading.Lock()
        self.compiles = 0
        self.functions_compiled = 0

    # -- keys --------------------------------------------------------------------------------

    def context_key(self, snapshot: Snapshot, options: AnalysisOptions) -> str:
        """Everything a function's counts depend on besides its own text and its callees."""
        counting_options = options.counting_fields()
        record = language_named(snapshot.language)
        versions = ask_versions(self.cache, record.tools)  # their --version runs while the rest is hashed
        flags: tuple[str, ...] = ()
        include_dirs: list[str] = [os.path.dirname(snapshot.path)]
        if record.reducible:
            from ccls import compile_db  # C family only

            # Looked up exactly as the front end looks them up, so the key names the flags used.
            found = compile_db.flags_for(snapshot.path, language=snapshot.language,
                                         override=options.flags_override, extra=options.extra_flags,
                                         query_driver=options.query_driver)
            flags = found.flags
            include_dirs += _include_dirs(found.flags)
        functions = snapshot.functions or ()
        context = units.context_text(snapshot.data, functions) if snapshot.functions is not None else b""
        headers = self.header_digest(snapshot.data, include_dirs) if record.reducible else ""
        digest = engine_digest()
        compiler = versions() or f"python {sys.version}"
        return cache_key("ctx/1", digest, snapshot.language, compiler, flags, counting_options,
                         self.tables.counting_version(), text_digest(context), headers)

    def tool_version(self, tool: str) -> str:
        """`tool --version`'s identifying line, remembered by the binary's identity (`service.versions`)."""
        return tool_versions(self.cache, (tool,))[0]

    def tool_versions(self, tools: Sequence[str]) -> list[str]:
        return tool_versions(self.cache, tools)

    def header_digest(self, data: bytes, include_dirs: Sequence[str]) -> str:
        """Digest of the contents of every header reachable from the text through include
        directories other than the compiler's own (those are covered by its version)."""
        seen: dict[str, str] = {}
        pending = [(name, quoted, include_dirs[0]) for name, quoted in units.include_lines(data)]
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
        digest, nested = text_digest(data), tuple(units.include_lines(data))
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
        # Whether a static callee has other callers decides whether the build inlines it.
        shared = (units.shared_statics(snapshot.data, functions, graph, snapshot.language)
                  if graph and language_named(snapshot.language).emits_every_function else set())
        keys = []
        for i, fn in enumerate(functions):
            deps = tuple(sorted(functions[j].text_hash + ("/shared" if j in shared else "")
                                for j in units.closure(graph, [i]) if j != i))
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
                previous: Outcome | None = None, sizes: DocumentSizes | None = None,
                order: Sequence[int] | None = None, batch: int | None = None, whole_up_to: int = 0,
                preamble: bool = True, only: Sequence[int] | None = None) -> Outcome:
        """Counts for every function of the snapshot, or with `batch`, for at most that many of
        those not cached, the first in `order` (function indices; the editor's screen first):
        the others are left in `outcome.pending` for a later call. `only`: just these functions
        (indices), cached or counted; the others are not looked at (a worker's share of a file).
        Up to `whole_up_to` uncached functions are counted together all the same (one compile:
        an edit's few).
        `remember=False` (the background pass) keeps its entries out of the cache's memory layer,
        and compiles each file whole: a precompiled preamble only pays off for a buffer compiled
        again and again (`preamble=False`: not this time either, e.g. the first screen of a file
        opened cold, which should not wait for the preamble to be built). Units of
        `previous` (the document's last outcome) whose key and first line are unchanged are
        taken over as they are. `sizes`: what the workspace's call sites pass each function
        of the document (by name), see `ccls.sizes`."""
        started = time.monotonic()
        sizes = sizes or {}
        keys = self.unit_keys(snapshot, options, sizes)
        if remember:
            options = dataclasses.replace(options, preamble_dir=self.preamble_dir if preamble else None,
                                          warm_tools=True)
        if snapshot.functions is None:
            outcome = self._analyse_file(snapshot, options, keys[0], remember, sizes)
        else:
            reusable = {unit.identity: unit for unit in previous.units} \
                if previous is not None and previous.snapshot.path == snapshot.path else {}
            outcome = self._analyse_functions(snapshot, options, keys, snapshot.graph, cancelled, remember, reusable,
                                              sizes, order, batch, whole_up_to, only)
        outcome.duration_s = time.monotonic() - started
        return outcome

    def _compile(self, snapshot: Snapshot, text: str, options: AnalysisOptions,
                 sizes: DocumentSizes) -> CountedFile | _Failed:
        with self._lock:
            self.compiles += 1

        def sizes_for(fn: Any) -> dict:
            return sizes.get(fn.display_name) or sizes.get(fn.name) or {}
        try:
            return count_source(SourceFile(snapshot.path, _compilable(text)), options, self.tables.get(), sizes_for)
        except Exception as exc:  # a front-end bug must become a diagnostic, not a dead worker
            log.exception("analysis of %s failed", snapshot.path)
            return _Failed([AnalysisError(snapshot.path, None, f"internal error while analysing: {exc}")])

    def _analyse_file(self, snapshot: Snapshot, options: AnalysisOptions, key: str, remember: bool,
                      sizes: DocumentSizes) -> Outcome:
        cached = self.cache.get(key, remember)
        if cached is not None:
            counted = [with_size_notes(units.shift_lines(cf, 0, snapshot.path), sizes) for cf in cached]
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
                           reusable: dict[tuple, Unit], sizes: DocumentSizes,
                           order: Sequence[int] | None = None, batch: int | None = None,
                           whole_up_to: int = 0, only: Sequence[int] | None = None) -> Outcome:
        functions = snapshot.functions
        found: dict[int, list[CountedFunction]] = {}
        reused: dict[int, Unit] = {}
        indices = range(len(functions)) if only is None else sorted(set(only))
        for i in indices:
            key = keys[i]
            unit = reusable.get((key, functions[i].start_line))
            if unit is not None:
                reused[i] = unit
                continue
            hit = self.cache.get(key, remember)
            if hit is not None:
                found[i] = hit
        missing = [i for i in indices if i not in found and i not in reused]
        outcome = Outcome(snapshot, [], [], cached_functions=len(found) + len(reused))
        if only is None and batch is not None and len(missing) > max(batch, whole_up_to):
            rank = {index: n for n, index in enumerate(order or ())}
            chosen = set(sorted(missing, key=lambda i: (rank.get(i, len(rank)), i))[:max(1, batch)])
            outcome.pending = [i for i in missing if i not in chosen]
            missing = sorted(chosen)
        if missing:
            if cancelled():
                raise Cancelled()
            self._fill(snapshot, options, keys, graph, missing, found, outcome, cancelled, remember, sizes)
        for i, fn in enumerate(functions):
            if i in reused:
                outcome.units.append(reused[i])  # equal keys: equal text hashes
                continue
            placed = tuple(with_size_notes(units.shift_lines(cf, fn.start_line - 1, snapshot.path), sizes)
                           for cf in found.get(i, []))
            if placed:
                outcome.units.append(Unit(fn.text_hash, (keys[i], fn.start_line), placed))
        return outcome

    def _fill(self, snapshot: Snapshot, options: AnalysisOptions, keys: list[str], graph: dict[int, set[int]],
              missing: list[int],
              found: dict[int, list[CountedFunction]], outcome: Outcome, cancelled: Callable[[], bool],
              remember: bool, sizes: DocumentSizes) -> None:
        functions = snapshot.functions
        keep = units.units_to_compile(snapshot.data, functions, missing, snapshot.language, graph)
        result = None
        if language_named(snapshot.language).reducible and len(keep) < len(functions):
            declare = units.referenced(snapshot.data, functions, keep, graph)
            reduced = units.reduced_text(snapshot.data, functions, keep, snapshot.language, declare)
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
            # The whole file was compiled: what a later batch would have counted is here too.
            missing = sorted(set(missing) | set(outcome.pending))
            outcome.pending = []
        outcome.errors.extend(result.errors)
        outcome.compiled_functions = [functions[i].qualified_name for i in sorted(keep)]
        with self._lock:
            self.functions_compiled += len(keep)
        if result.errors and not result.functions:
            return  # nothing learned; cached functions still show
        placed = units.assign(result.functions, functions)
        store = []
        # Only the functions that were missing are stored: a kept caller or callee compiled as
        # context may be inlined differently here than in its own unit, and has a valid entry.
        for i in missing:
            # Relative to the function's first line, so a function that moved still hits.
            found[i] = [units.shift_lines(cf, -(functions[i].start_line - 1)) for cf in placed.get(i, [])]
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
