"""The summary → SARIF 2.1.0 (OASIS), for code-scanning services: one rule per finding kind and
one for files that could not be analysed; each result located in its file and carrying the
function's metrics in `properties`. Pure."""
from __future__ import annotations

import hashlib
import json
from urllib.parse import quote

from ccls.render import per, report_to_json
from ccls.reports.summary import FunctionEntry, Summary, summary_json

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
ANALYSIS_ERROR = "analysis-error"

# Rule id → (name, short description, full description, help as markdown, level).
RULES: dict[str, tuple[str, str, str, str, str]] = {
    "division-in-loop": (
        "DivisionInLoop",
        "Division inside a loop",
        "An integer or floating-point division (or remainder) runs on every iteration of a loop. "
        "A divide costs tens of cycles where an add or multiply costs one, so it often dominates the loop.",
        "A division inside a loop is one of the costliest arithmetic instructions the loop can run: "
        "integer divides take roughly 20–90 cycles and floating-point divides 10–25, against 1–4 for a "
        "multiply.\n\n**How to fix**\n\n- Divisor invariant in the loop: compute its reciprocal once "
        "before the loop and multiply (floating point), or use a precomputed magic-number multiply "
        "(integers).\n- Divisor a power of two: use a shift or a mask (for unsigned values).\n- Running "
        "remainder (`i % n` with `i` counting up): keep a counter that wraps instead.\n\nThe result's "
        "`share_of_cu` property is the part of the function's cost the division accounts for.",
        "warning",
    ),
    "miss-heavy-loop": (
        "MissHeavyLoop",
        "Loop whose memory accesses miss the cache",
        "A loop walks a working set larger than the L2 cache with a pattern the hardware cannot "
        "stream (a large stride, an index array, or a pointer chase), so its loads wait on L3 or DRAM.",
        "The loop's accesses reach a working set larger than the L2 cache in an order the "
        "prefetcher cannot follow, so most of its loads are served by L3 or DRAM (tens to hundreds of "
        "cycles each).\n\n**How to fix**\n\n- Strided (column-major) walks: interchange the loops so "
        "the innermost index is contiguous, or tile the nest so a block fits in cache.\n- Indirect "
        "accesses (`a[idx[i]]`): sort or bucket the indices, or gather the data into a contiguous "
        "buffer first.\n- Pointer chasing: store the nodes contiguously (an array of nodes, "
        "structure of arrays) or prefetch ahead.\n\nThe result's message gives the pattern and the "
        "working set; `share_of_cu` is the part of the function's cost its misses account for.",
        "warning",
    ),
    ANALYSIS_ERROR: (
        "AnalysisError",
        "File could not be analysed",
        "ccls could not compile, parse or read this file, so none of its functions are costed.",
        "The file could not be analysed: the message is the compiler's or reader's own. Common causes "
        "are a missing include path or macro (give a `compile_commands.json`, or `--flags`), a syntax "
        "error, an unsupported language feature, or a compile that ran past `--timeout`. The file's "
        "functions are missing from every total of this run.",
        "error",
    ),
}


def _rule(rule_id: str) -> dict:
    name, short, full, help_markdown, level = RULES[rule_id]
    return {
        "id": rule_id, "name": name,
        "shortDescription": {"text": short}, "fullDescription": {"text": full},
        "help": {"text": help_markdown.replace("**", "").replace("`", ""), "markdown": help_markdown},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["performance", "cost"] if rule_id != ANALYSIS_ERROR else ["tool"]},
    }


def _uri(path: str) -> dict:
    """An artifact location: relative to %SRCROOT%, or a file URI for a file outside the root."""
    if path.startswith("/"):
        return {"uri": "file://" + quote(path)}
    return {"uri": quote(path), "uriBaseId": SRCROOT}


def _location(path: str, line: int | None, entry: FunctionEntry | None = None) -> dict:
    physical: dict = {"artifactLocation": _uri(path)}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": line}
    location: dict = {"physicalLocation": physical}
    if entry is not None:
        fn = entry.report.counted
        location["logicalLocations"] = [{"name": fn.display_name, "fullyQualifiedName": fn.display_name,
                                         "decoratedName": fn.name, "kind": "function"}]
    return location


def _fingerprint(entry: FunctionEntry, finding) -> str:
    """The same finding across runs: its file, function, kind and line within the function, so an
    edit elsewhere in the file does not make it a new alert."""
    fn = entry.report.counted
    offset = finding.line - fn.line if finding.line is not None and fn.line is not None else None
    key = "\0".join([entry.path, fn.name, finding.kind, str(offset)])
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def function_properties(entry: FunctionEntry) -> dict:
    """A function's metrics for a result's property bag (the JSON report's fields that say what it costs)."""
    data = report_to_json(entry.report)
    keep = ("name", "symbol", "line", "end_line", "language", "arch", "metrics", "metric_parts", "metrics_band",
            "inclusive_metrics", "instructions", "cost_expression", "big_o", "score", "grade", "rating", "graded_by",
            "scores_by_profile")
    return {"function": {key: data[key] for key in keep}, "per": per(entry.report), "file": entry.path}


def sarif_document(summary: Summary) -> dict:
    context = summary.context
    rule_ids = [kind for kind in RULES if kind != ANALYSIS_ERROR]
    rule_ids += sorted(kind for kind in summary.findings if kind not in RULES)  # a kind this module has no text for
    rule_ids.append(ANALYSIS_ERROR)
    index = {rule_id: k for k, rule_id in enumerate(rule_ids)}
    rules = [_rule(r) if r in RULES else {"id": r, "shortDescription": {"text": r}} for r in rule_ids]
    results = []
    for entry in summary.functions:
        for finding in entry.report.findings:
            level = RULES[finding.kind][4] if finding.kind in RULES else "warning"
            results.append({
                "ruleId": finding.kind, "ruleIndex": index[finding.kind], "level": level,
                "message": {"text": f"{entry.report.counted.display_name}: {finding.message}. Fix: {finding.recommendation}."},
                "locations": [_location(entry.path, finding.line or entry.report.counted.line, entry)],
                "partialFingerprints": {"cclsFinding/v1": _fingerprint(entry, finding)},
                "properties": {**function_properties(entry), "share_of_cu": finding.share_of_cu,
                               "recommendation": finding.recommendation},
            })
    for error in summary.errors:
        results.append({
            "ruleId": ANALYSIS_ERROR, "ruleIndex": index[ANALYSIS_ERROR], "level": "error",
            "message": {"text": error.message or "could not be analysed"},
            "locations": [_location(error.file, error.line)],
        })
    run: dict = {
        "tool": {"driver": {"name": "ccls", "fullName": "ccls: cost-aware analysis (CU, energy, CO2, $ per function)",
                            **({"version": context.tool_version} if context.tool_version else {}),
                            "rules": rules}},
        "invocations": [{"executionSuccessful": True}],
        "originalUriBaseIds": {SRCROOT: _root_location(summary)},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"ccls": _run_properties(summary)},
    }
    if context.revision and "://" in context.source:
        run["versionControlProvenance"] = [{"repositoryUri": context.source, "revisionId": context.revision,
                                            "mappedTo": {"uriBaseId": SRCROOT}}]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def _root_location(summary: Summary) -> dict:
    context = summary.context
    if context.revision:  # a temporary clone, gone when the report is read: name the repository
        return {"description": {"text": f"the root of {context.source} at {context.revision}"}}
    return {"uri": "file://" + quote(context.root.rstrip("/") + "/")}


def _run_properties(summary: Summary) -> dict:
    """The settings and the hierarchy: repository totals, folders and files, the costliest functions."""
    settings = summary.context.settings
    return {"profile": settings.profile, "region": settings.region, "arch": summary.context.arch,
            "scoring": settings.scoring, "normalization": settings.normalization,
            "table_version": summary.context.table_version, **summary_json(summary)}


def sarif_report(summary: Summary) -> str:
    return json.dumps(sarif_document(summary), indent=2, ensure_ascii=False)
