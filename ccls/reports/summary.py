"""The hierarchical model every report shows (seed §3 batch mode): per function, per file, per
folder, and a repository summary (totals, grade distribution, costliest functions, findings by
kind). Built from the engine's reports; pure (paths are only compared as strings)."""
from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ccls.model import AnalysisError, Finding, Metrics
from ccls.options import AnalysisOptions
from ccls.render import per
from ccls.report_types import FunctionReport, ReportSettings
from ccls.table_types import Profile

COSTLIEST = 10  # functions named in a summary's "costliest" list
ROOT = "."  # the folder every path is relative to, as reports name it
_ZERO = Metrics(0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class ReportContext:
    """What a report needs besides the functions: the settings they were costed under, the folder
    paths are shown relative to, and where the numbers were evaluated."""

    settings: ReportSettings
    arch: str
    table_version: str
    root: str  # absolute folder; files under it are named relative to it
    tool_version: str = ""
    source: str = ""  # what was analysed, as the user named it (folders or a repository URL)
    revision: str = ""  # the commit analysed, when the source is a git repository
    grade_order: tuple[str, ...] = ()  # best first, as the grade table lists them
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    options: AnalysisOptions = field(default_factory=AnalysisOptions)  # parameter values of the numbers


@dataclass(frozen=True)
class Totals:
    """Sums over a set of functions. Each function counts once: a CPU or Python function for one
    call, a GPU function for one thread (its figures are per thread), so the two are kept apart."""

    functions: int
    per_call: Metrics  # Σ over functions costed per call
    per_thread: Metrics  # Σ over GPU functions, one thread each
    thread_functions: int  # how many of `functions` are costed per thread
    grades: dict[str, int]  # grade → functions, best grade first
    findings: dict[str, int]  # finding kind → findings
    errors: int


@dataclass(frozen=True)
class FunctionEntry:
    report: FunctionReport
    path: str  # the file relative to the root (posix), or absolute when outside it
    index: int  # position in `Summary.functions`


@dataclass(frozen=True)
class Node:
    """A file or a folder: its path relative to the root and the totals of what it holds (a
    folder holds its subfolders' functions too)."""

    path: str
    kind: str  # "file" | "folder"
    functions: tuple[int, ...]  # indexes into `Summary.functions`
    totals: Totals


@dataclass(frozen=True)
class FindingEntry:
    function: int  # index into `Summary.functions`
    finding: Finding


@dataclass(frozen=True)
class Summary:
    context: ReportContext
    functions: tuple[FunctionEntry, ...]
    files: tuple[Node, ...]  # in path order
    folders: tuple[Node, ...]  # in path order; "." is the root
    repository: Totals
    costliest: tuple[int, ...]  # function indexes, highest CU first
    findings: dict[str, tuple[FindingEntry, ...]]  # kind → findings, largest share of CU first
    errors: tuple[AnalysisError, ...]  # files relative to the report's root


def relative_path(path: str, root: str) -> str:
    """`path` relative to `root` in posix form, or `path` itself when it lies outside `root`."""
    norm_path, norm_root = posixpath.normpath(path.replace("\\", "/")), posixpath.normpath(root.replace("\\", "/"))
    if norm_path == norm_root:
        return posixpath.basename(norm_path) or norm_path
    prefix = norm_root.rstrip("/") + "/"
    return norm_path[len(prefix):] if norm_path.startswith(prefix) else norm_path


def folders_of(path: str) -> list[str]:
    """The folders a relative path lies in, the root first: ``a/b/c.c`` → ``., a, a/b``. An
    absolute path (a file outside the root) lies in its own folder only."""
    parent = posixpath.dirname(path)
    if posixpath.isabs(path):
        return [parent]
    chain = [ROOT]
    parts = parent.split("/") if parent else []
    for k in range(len(parts)):
        chain.append("/".join(parts[:k + 1]))
    return chain


def _add(a: Metrics, b: Metrics) -> Metrics:
    return Metrics(a.cu + b.cu, a.energy_joules + b.energy_joules, a.co2_kg + b.co2_kg, a.usd + b.usd)


def _ordered_counts(counts: dict[str, int], order: Sequence[str]) -> dict[str, int]:
    known = [g for g in order if g in counts]
    return {g: counts[g] for g in known + sorted(g for g in counts if g not in order)}


def totals(reports: Sequence[FunctionReport], errors: int, grade_order: Sequence[str] = ()) -> Totals:
    per_call, per_thread, threads = _ZERO, _ZERO, 0
    grades: dict[str, int] = {}
    findings: dict[str, int] = {}
    for r in reports:
        if per(r) == "thread":
            per_thread, threads = _add(per_thread, r.metrics), threads + 1
        else:
            per_call = _add(per_call, r.metrics)
        grades[r.grade] = grades.get(r.grade, 0) + 1
        for f in r.findings:
            findings[f.kind] = findings.get(f.kind, 0) + 1
    return Totals(len(reports), per_call, per_thread, threads, _ordered_counts(grades, grade_order),
                  dict(sorted(findings.items())), errors)


def summarize(reports: Sequence[FunctionReport], errors: Sequence[AnalysisError], context: ReportContext) -> Summary:
    """The hierarchy of `reports` (and of the files that failed) under `context.root`."""
    functions = tuple(FunctionEntry(r, relative_path(r.counted.file, context.root), k) for k, r in enumerate(reports))
    error_entries = tuple(AnalysisError(relative_path(e.file, context.root), e.line, e.message) for e in errors)
    by_file: dict[str, list[int]] = {}
    for entry in functions:
        by_file.setdefault(entry.path, []).append(entry.index)
    errors_by_file: dict[str, int] = {}
    for e in error_entries:
        by_file.setdefault(e.file, [])
        errors_by_file[e.file] = errors_by_file.get(e.file, 0) + 1
    by_folder: dict[str, list[int]] = {}
    errors_by_folder: dict[str, int] = {}
    for path, indexes in by_file.items():
        for folder in folders_of(path):
            by_folder.setdefault(folder, []).extend(indexes)
            errors_by_folder[folder] = errors_by_folder.get(folder, 0) + errors_by_file.get(path, 0)

    def node(path: str, kind: str, indexes: list[int], error_count: int) -> Node:
        ordered = tuple(sorted(indexes))
        return Node(path, kind, ordered, totals([reports[k] for k in ordered], error_count, context.grade_order))

    files = tuple(node(p, "file", by_file[p], errors_by_file.get(p, 0)) for p in sorted(by_file))
    folders = tuple(node(p, "folder", by_folder[p], errors_by_folder[p]) for p in sorted(by_folder, key=_folder_key))
    costliest = tuple(sorted(range(len(reports)), key=lambda k: (-_finite(reports[k].metrics.cu), k))[:COSTLIEST])
    findings: dict[str, list[FindingEntry]] = {}
    for entry in functions:
        for f in entry.report.findings:
            findings.setdefault(f.kind, []).append(FindingEntry(entry.index, f))
    for entries in findings.values():
        entries.sort(key=lambda e: (-(e.finding.share_of_cu or 0.0), e.function))
    return Summary(context, functions, files, folders, totals(reports, len(errors), context.grade_order), costliest,
                   {kind: tuple(findings[kind]) for kind in sorted(findings)}, error_entries)


def _folder_key(path: str) -> tuple[int, str]:
    return (0, "") if path == ROOT else (1, path)


def _finite(value: float) -> float:
    return value if math.isfinite(value) else -1.0


def evaluation_point(entry: FunctionEntry, context: ReportContext) -> dict[str, float]:
    """The value of every symbol of the function's cost expression where its numbers were evaluated."""
    at = context.options.for_function(entry.report.counted.inferred_sizes)
    return {s: at.parameter_value(s) for s in entry.report.cost_expression.symbols}


def report_root(folders: Sequence[str], cwd: str) -> str:
    """The folder reports name files relative to: the working directory when every analysed
    folder lies in it (where a code-scanning service expects paths to start), else the deepest
    folder they share. `folders` are absolute (a file's own folder for a file)."""
    cwd = posixpath.normpath(cwd)
    folders = [posixpath.normpath(posixpath.join(cwd, f)) for f in folders] or [cwd]
    if all(f == cwd or f.startswith(cwd.rstrip("/") + "/") for f in folders):
        return cwd
    return posixpath.commonpath(folders)


def totals_json(t: Totals) -> dict:
    return {"functions": t.functions, "per_call": t.per_call.as_dict(), "per_thread": t.per_thread.as_dict(),
            "thread_functions": t.thread_functions, "grades": t.grades, "findings": t.findings, "errors": t.errors}


def summary_json(summary: Summary) -> dict:
    """The hierarchy as JSON-compatible data (the JSON report's `summary`, SARIF's run properties):
    paths relative to `root`, folders holding their subfolders."""
    context = summary.context

    def function(k: int) -> dict:
        entry = summary.functions[k]
        return {"function": entry.report.counted.display_name, "file": entry.path, "line": entry.report.counted.line,
                "per": per(entry.report), "metrics": entry.report.metrics.as_dict()}

    return {
        "root": context.root, "source": context.source, "revision": context.revision or None,
        "repository": totals_json(summary.repository),
        "folders": [{"path": n.path, **totals_json(n.totals)} for n in summary.folders],
        "files": [{"path": n.path, **totals_json(n.totals)} for n in summary.files],
        "costliest": [function(k) for k in summary.costliest],
        "findings_by_kind": {kind: [{"function": summary.functions[e.function].report.counted.display_name,
                                     "file": summary.functions[e.function].path, "line": e.finding.line,
                                     "share_of_cu": e.finding.share_of_cu} for e in entries]
                             for kind, entries in summary.findings.items()},
    }

