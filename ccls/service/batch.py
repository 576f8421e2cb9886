"""Counting many files as one program, for `ccls analyze`: cached and spread over processes.

The files are one program: a function's sizes may come from call sites in any of them
(`ccls.sizes`). So, in three steps:

1. each file's call sites, from the count cache (keyed by the file's text and everything its
   compile depends on) or by compiling it, in worker processes;
2. the sizes, inferred once over every file's call sites, in the parent;
3. each file's counts at the sizes its functions receive, from the cache (the key holds those
   values) or counted in the workers — from the compile of step 1 when there was one.

An unchanged re-run costs the hashing and the look-ups. Results come back in the order of the
files, and are the same for any number of processes (`engine.count_sources` is the reference).
"""
from __future__ import annotations

import logging
import os
import signal
import threading
from concurrent.futures import Executor, Future, as_completed
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from ccls.cache import CountCache, cache_key, text_digest
from ccls.collection import collect_less_often
from ccls.engine import CountedFile, ReadFile, count_read, read_source
from ccls.frontends import FrontendResult, SourceFile
from ccls.model import AnalysisError, CallSite, CountedFunction, FieldStore
from ccls.options import AnalysisOptions
from ccls.readers.call_sites import ModuleCalls
from ccls.service.counts import Analyzer, Snapshot, language_for
from ccls.service.tables import TableStore
from ccls.sizes import InferredSize, infer_sizes
from ccls.table_types import Tables

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

log = logging.getLogger(__name__)

FileSizes = dict[str, dict[str, InferredSize]]  # symbol -> parameter -> size, for one file's functions


@dataclass
class _Entry:
    source: SourceFile
    context: str | None  # None: not cacheable (not a language ccls knows)
    calls: ModuleCalls | None = None
    calls_known: bool = False
    read: ReadFile | None = None


class Progress:
    """What a view is told while a batch runs (a progress bar; nothing by default)."""

    def file_done(self) -> None: ...

    def compiled(self, done: int, total: int) -> None: ...


@dataclass
class Program:
    """Each file's cache context, before anything is read or compiled (`prepare_program`);
    `count_program` goes on from here."""
    sources: Sequence[SourceFile]
    options: AnalysisOptions
    entries: list[_Entry]


def prepare_program(sources: Sequence[SourceFile], options: AnalysisOptions, tables: Tables,
                    cache: CountCache | None) -> Program:
    """Each file's context key (its text, flags, compiler, headers, tables, options, the counting
    code); None for every file without a cache: nothing is keyed."""
    analyzer = Analyzer(cache or CountCache(None), TableStore(tables=tables))
    # Without a cache nothing is keyed: no context (and no tool versions, no engine digest) to compute.
    entries = [_Entry(source, _context(analyzer, source, options) if cache is not None else None)
               for source in sources]
    return Program(sources, options, entries)


def file_keys(program: Program) -> list[str] | None:
    """Every file's context key, where every file has one. They fix the whole program's counts:
    a file's call sites are those of its context's compile (cached under it), the sizes are
    inferred from every file's call sites, and a file's counts follow from its context and sizes."""
    if not program.entries or any(entry.context is None for entry in program.entries):
        return None
    return [entry.context for entry in program.entries]


def counts_keys(program: Program) -> list[str] | None:
    """Every file's counts key (its context and the sizes its functions receive), once
    `count_program` has every file's call sites; else None."""
    if file_keys(program) is None or not all(entry.calls_known for entry in program.entries):
        return None
    sizes = infer_sizes([entry.calls for entry in program.entries if entry.calls is not None])
    return [_counts_key(entry, _file_sizes(sizes, entry.source.path)) for entry in program.entries]


def report_key(keys: Sequence[str], *parts: Any) -> str:
    """The key of a whole printed report of a program whose files have the context `keys`
    (`file_keys`): with `parts` (what else the report depends on: settings, format, table
    version, paths), and the source of every module that costs, scores and prints it
    (`digest.report_digest`)."""
    from ccls.service.digest import report_digest

    return cache_key("batch-report/1", report_digest(), list(keys), parts)


def count_program(sources: Sequence[SourceFile], options: AnalysisOptions, tables: Tables,
                  cache: CountCache | None = None, jobs: int = 1, progress: Progress | None = None,
                  executor: str | None = None, program: Program | None = None) -> list[CountedFile]:
    """Count `sources` as one program, one `CountedFile` per source in their order. The per-file
    work runs on `jobs` processes, or on the Dask cluster `executor` names (`ccls.service.executors`;
    raises its `ExecutorError` when that cannot be used); the results do not depend on where.
    `program`: `prepare_program`'s result for the same sources, options and cache, if made."""
    progress = progress or Progress()
    if program is None or program.sources is not sources or program.options is not options:
        program = prepare_program(sources, options, tables, cache)
    entries = program.entries
    if cache is not None:
        for entry in entries:
            if entry.context is not None:
                found = cache.get_json(_calls_key(entry))
                if found is not None:
                    entry.calls, entry.calls_known = _calls_from_json(found), True
    results: list[CountedFile | None] = [None] * len(entries)
    if executor is None:  # no more worker processes than files; one file is done here, not in a pool
        jobs = min(jobs, len(entries))
    with _executor(jobs, tables, executor) as pool:
        to_read = [i for i, entry in enumerate(entries) if not entry.calls_known]
        stored_calls = []
        for done, (i, read) in enumerate(_run(pool, _read, [(entries[i].source, options) for i in to_read], to_read)):
            entry = entries[i]
            entry.read, entry.calls, entry.calls_known = read, read.result.calls, True
            if entry.context is not None and not read.result.errors:
                stored_calls.append((_calls_key(entry), _calls_to_json(entry.calls)))
            progress.compiled(done + 1, len(to_read))
        if cache is not None:
            cache.put_json_many(stored_calls)
        sizes = infer_sizes([entry.calls for entry in entries if entry.calls is not None])
        file_sizes = [_file_sizes(sizes, entry.source.path) for entry in entries]
        keys: list[str | None] = [None] * len(entries)
        for i, entry in enumerate(entries):
            if entry.context is None or cache is None:
                continue
            keys[i] = _counts_key(entry, file_sizes[i])
            hit = cache.get(keys[i], remember=False)
            if hit is not None:
                path = entry.source.path
                results[i] = CountedFile(path, _language(path),
                                         [_with_size_notes(cf, file_sizes[i]) for cf in hit])
                progress.file_done()
        todo = [i for i in range(len(entries)) if results[i] is None]
        jobs_args = [(entries[i].read, options, file_sizes[i]) if entries[i].read is not None
                     else (entries[i].source, options, file_sizes[i]) for i in todo]
        stored = []
        for i, counted in _run(pool, _count, jobs_args, todo):
            results[i] = counted
            entries[i].read = None  # the compile is no longer needed
            if keys[i] is not None and not counted.errors:
                stored.append((keys[i], counted.functions))
            progress.file_done()
        if cache is not None:
            cache.put_many(stored, remember=False)
    return [result for result in results if result is not None]


# -- keys --------------------------------------------------------------------------------------

def _language(path: str) -> str:
    return language_for(path) or ""


def _context(analyzer: Analyzer, source: SourceFile, options: AnalysisOptions) -> str | None:
    """What a file's compile depends on besides its text (flags, compiler, headers, tables,
    options, engine digest), as the language server keys a file compiled whole."""
    language = language_for(source.path)
    if language is None or not source.text:  # unknown kinds and bitcode (read from disk) are not cached
        return None
    data = source.text.encode("utf-8", "surrogateescape")
    snapshot = Snapshot(source.path, source.path, language, 0, source.text, data, None)
    return cache_key("batch-file/1", analyzer.context_key(snapshot, options), source.path, text_digest(data))


def _calls_key(entry: _Entry) -> str:
    return cache_key("batch-calls/2", entry.context)


def _counts_key(entry: _Entry, sizes: FileSizes) -> str:
    values = sorted((symbol, sorted((name, size.value) for name, size in params.items()))
                    for symbol, params in sizes.items() if params)
    return cache_key("batch-counts/1", entry.context, values)


def _file_sizes(sizes: dict, path: str) -> FileSizes:
    return {symbol: params for (file, symbol), params in sizes.items() if file == path}


def _with_size_notes(cf: CountedFunction, sizes: FileSizes) -> CountedFunction:
    """A cached function's size notes as today's call sites say them: its key fixed the values,
    not where they come from (a line above a call may have moved)."""
    if not cf.inferred_sizes:
        return cf
    found = sizes.get(cf.name, {})
    notes = [found[name].describe(name) for name in cf.inferred_sizes if name in found]
    return replace(cf, size_notes=notes) if len(notes) == len(cf.inferred_sizes) else cf


def _calls_to_json(calls: ModuleCalls | None) -> Any:
    if calls is None:
        return None
    return {"file": calls.file, "parameters": {k: list(v) for k, v in calls.parameters.items()},
            "sites": [[s.caller, s.callee, s.line, list(s.args)] for s in calls.sites],
            "internal": sorted(calls.internal),
            "field_stores": [[f.struct, f.offset, f.writer, f.line, f.value] for f in calls.field_stores]}


def _calls_from_json(data: Any) -> ModuleCalls | None:
    if data is None:
        return None
    return ModuleCalls(data["file"], {k: tuple(v) for k, v in data["parameters"].items()},
                       tuple(CallSite(caller, callee, line, _tuples(args)) for caller, callee, line, args in data["sites"]),
                       frozenset(data["internal"]),
                       tuple(FieldStore(struct, offset, writer, line, _tuples(value))
                             for struct, offset, writer, line, value in data["field_stores"]))


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


# -- workers -----------------------------------------------------------------------------------

_WORKER_TABLES: Tables | None = None  # a pool's worker process (or this one): set once, at its start
_TASK = threading.local()  # a Dask worker's thread: set by each task, as one worker may serve several runs


def worker_tables() -> Tables | None:
    """The tables this worker process (or Dask task) counts with."""
    return getattr(_TASK, "tables", None) or _WORKER_TABLES


def _with_tables(tables: Tables, fn: Callable, *args: Any) -> Any:
    """`fn(*args)` on a Dask worker, with the batch's tables (sent to each worker once)."""
    _TASK.tables = tables
    try:
        return fn(*args)
    finally:
        _TASK.tables = None


def _start_worker(tables: Tables, worker: bool = False, setup: Callable[..., None] | None = None,
                  setup_args: tuple = ()) -> None:
    global _WORKER_TABLES
    _WORKER_TABLES = tables
    collect_less_often()  # a spawned worker starts with the defaults
    if worker:  # Ctrl-C stops the parent, which stops the pool: no traceback from every worker
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if setup is not None:
        setup(*setup_args)


def _read(source: SourceFile, options: AnalysisOptions) -> ReadFile:
    try:
        return read_source(source, options)
    except Exception as exc:  # a front-end bug becomes the file's error, not a dead batch
        log.exception("reading %s failed", source.path)
        return ReadFile(source.path, _language(source.path), _failed(source.path, exc))


def _count(what: ReadFile | SourceFile, options: AnalysisOptions, sizes: FileSizes) -> CountedFile:
    read = what if isinstance(what, ReadFile) else _read(what, options)
    try:
        return count_read(read, options, worker_tables(), lambda fn: sizes.get(fn.name, {}))
    except Exception as exc:
        log.exception("counting %s failed", read.path)
        return CountedFile(read.path, read.language, errors=_failed(read.path, exc).errors)


def _failed(path: str, exc: Exception) -> FrontendResult:
    return FrontendResult(errors=[AnalysisError(path, None, f"internal error while analysing: {exc}")])


class _Inline(Executor):
    """One job at a time in this process (`--jobs 1`, or a single file to do)."""

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


def _executor(jobs: int, tables: Tables, where: str | None = None) -> Executor:
    """The one seam between the pipeline and where its per-file work runs."""
    _start_worker(tables)
    if where is not None:
        from ccls.service.executors import open_dask

        return open_dask(where, jobs, _with_tables, tables)
    if jobs <= 1:
        return _Inline()
    # fork: the workers start with the tables and modules already loaded (no threads run here).
    return process_pool(jobs, tables, "fork")


def process_pool(jobs: int, tables: Tables, start_method: str, max_tasks_per_child: int | None = None,
                 setup: Callable[..., None] | None = None, setup_args: tuple = ()) -> ProcessPoolExecutor:
    """`jobs` worker processes that count with `tables` (the batch's, and the language server's
    background work): `start_method` where this platform has it, each worker replaced after
    `max_tasks_per_child` tasks (not with "fork"), `setup(*setup_args)` run in each at its start."""
    import multiprocessing  # with the pool: a run that needs none (one file) does not load it
    from concurrent.futures import ProcessPoolExecutor

    method = start_method if start_method in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method),
                               initializer=_start_worker, initargs=(tables, True, setup, setup_args),
                               max_tasks_per_child=max_tasks_per_child)


def _run(pool: Executor, fn: Callable, args: Sequence[tuple], indices: Sequence[int]) -> Iterable[tuple[int, Any]]:
    """(index, result) of `fn(*args[k])` for each k, as they complete."""
    if isinstance(pool, _Inline):  # one after the other, so progress moves as they finish
        for a, index in zip(args, indices):
            yield index, fn(*a)
        return
    from concurrent.futures.process import BrokenProcessPool

    died = getattr(pool, "worker_died", (BrokenProcessPool,))
    futures = {pool.submit(fn, *a): (index, a[0]) for a, index in zip(args, indices)}
    for future in as_completed(futures):
        index, what = futures[future]
        try:
            yield index, future.result()
        except died as exc:  # a worker was killed (out of memory?): its files fail, with a reason
            path = what.path
            failed = _failed(path, RuntimeError(f"the worker process died ({exc}); try --jobs 1"))
            yield index, ReadFile(path, _language(path), failed) if fn is _read else \
                CountedFile(path, _language(path), errors=failed.errors)


def default_jobs() -> int:
    """Worker processes by default: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
