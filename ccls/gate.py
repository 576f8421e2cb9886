"""The CI cost gate: compare two analyses function by function and say why a cost grew.

Pure: documents in (the `ccls.analysis/1` JSON of `analyze --format json`, or the leaner
`ccls.baseline/1` this module makes of it), a `Comparison` and strings out. `ccls check` and
`ccls diff` (cli.py) do the reading and writing.

Functions are matched by (file, symbol), then (file, name), then across files by a symbol (or,
failing that, a name) that is unique among the functions still unmatched on both sides: a
function moved from a.c to b.c keeps its history. A match whose chosen metric grew beyond the
tolerance, or whose grade fell, is a regression; its causes are read off what changed in its
report (findings, Big-O, loop nesting and trip counts, executed instruction classes).
"""
from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

ANALYSIS_SCHEMA = "ccls.analysis/1"
BASELINE_SCHEMA = "ccls.baseline/1"
DIFF_SCHEMA = "ccls.diff/1"
GATE_METRICS = ("CU", "EU", "CO2", "USD", "score")
DEFAULT_MAX_INCREASE = 0.05  # a fraction: 5 %
# The settings a baseline records: a difference makes costs incomparable or shifted.
SETTING_KEYS = ("arch", "profile", "region", "scoring", "normalization", "table_version")
_METRIC_UNITS = {"CU": "", "EU": "J", "CO2": "kg", "USD": "$", "score": ""}
# Instruction classes worth naming in a cause, by the base class of their key (ccls.taxonomy).
_NAMED_CLASSES = (
    (("int_div",), "integer divisions"),
    (("fp_div",), "floating-point divisions"),
    (("fp_sqrt",), "square roots"),
    (("fp_transcendental",), "libm calls (exp, log, sin…)"),
    (("call", "call_indirect"), "calls"),
    (("atomic",), "atomic operations"),
)
_MISS_TIERS = ("L2", "L3", "DRAM", "stream")


class GateError(Exception):
    """A document that is not an analysis or a baseline; the message says what is wrong."""


# -- documents ----------------------------------------------------------------------------------

def baseline_from_analysis(document: Mapping[str, Any], root: str | None = None) -> dict:
    """The lean, versioned baseline of an analysis document: what the comparison reads and no
    more, files relative to `root` (where they lie under it), in a stable order, no date (an
    unchanged tree writes the same bytes)."""
    schema = document.get("schema") if isinstance(document, Mapping) else None
    if schema not in (ANALYSIS_SCHEMA, BASELINE_SCHEMA):
        raise GateError(f"not a ccls analysis or baseline (schema {schema!r}; expected {ANALYSIS_SCHEMA} "
                        f"or {BASELINE_SCHEMA})")
    entries = document.get("functions")
    if not isinstance(entries, list) or not all(isinstance(f, Mapping) and isinstance(f.get("name"), str)
                                                and isinstance(f.get("file"), str) for f in entries):
        raise GateError(f"{schema}: 'functions' must be a list of objects, each with a 'name' and a 'file'")
    if schema == BASELINE_SCHEMA:
        settings = document.get("settings") if isinstance(document.get("settings"), Mapping) else {}
        return {**document, "settings": settings, "functions": [_lean_function(f, root) for f in entries]}
    functions = [_lean_function(f, root) for f in entries]
    functions.sort(key=lambda f: (f["file"], f["line"] or 0, f["symbol"]))
    return {
        "schema": BASELINE_SCHEMA,
        "settings": {key: document.get(key) for key in SETTING_KEYS},
        "functions": functions,
        "errors": [{"file": _relative(e.get("file", ""), root), "line": e.get("line"), "message": e.get("message")}
                   for e in document.get("errors") or [] if isinstance(e, Mapping)],
    }


def _lean_function(f: Mapping[str, Any], root: str | None) -> dict:
    return {
        "name": f.get("name"), "symbol": f.get("symbol") or f.get("name"), "file": _relative(f.get("file", ""), root),
        "line": f.get("line"), "metrics": _numbers(f.get("metrics")), "score": f.get("score"),
        "grade": f.get("grade"), "big_o": f.get("big_o"), "cost_expression": f.get("cost_expression"),
        "instructions": f.get("instructions"), "counts": _numbers(f.get("counts")),
        "loops": [{"line": l.get("line"), "depth": l.get("depth"), "trip_count": l.get("trip_count"),
                   "kind": l.get("kind")} for l in _objects(f.get("loops"))],
        "findings": [{"kind": x.get("kind"), "line": x.get("line")} for x in _objects(f.get("findings"))],
    }


def _objects(value: Any) -> list[Mapping]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _numbers(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _relative(path: str, root: str | None) -> str:
    """`path` relative to `root` when it lies under it; else as given (already relative, or elsewhere)."""
    if not root or not path or not os.path.isabs(path):
        return path
    relative = os.path.relpath(path, root)
    return path if relative.startswith("..") else relative


def baseline_json(baseline: Mapping[str, Any]) -> str:
    return json.dumps(baseline, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


# -- comparison ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class FunctionChange:
    """One function's fate between two analyses."""

    status: str  # "regressed", "improved", "unchanged", "new", "removed"
    name: str
    symbol: str
    file: str
    line: int | None
    old: float | None  # the gate's metric
    new: float | None
    old_grade: str | None
    new_grade: str | None
    moved_from: str | None = None  # the file it was in, when it moved
    causes: tuple[str, ...] = ()

    @property
    def relative_change(self) -> float | None:
        """(new − old) / old; inf when it grew from nothing; None where one side is missing."""
        if self.old is None or self.new is None:
            return None
        if self.old == 0:
            return 0.0 if self.new == 0 else math.copysign(math.inf, self.new)
        return (self.new - self.old) / abs(self.old)


@dataclass(frozen=True)
class Comparison:
    metric: str
    max_increase: float  # fraction
    changes: tuple[FunctionChange, ...]
    notes: tuple[str, ...]  # settings that differ between the two analyses

    def by_status(self, status: str) -> list[FunctionChange]:
        return [c for c in self.changes if c.status == status]

    @property
    def regressions(self) -> list[FunctionChange]:
        return self.by_status("regressed")

    @property
    def failed(self) -> bool:
        return bool(self.regressions)


def compare(old_document: Mapping[str, Any], new_document: Mapping[str, Any], metric: str = "CU",
            max_increase: float = DEFAULT_MAX_INCREASE, grade_order: Sequence[str] | None = None,
            root: str | None = None) -> Comparison:
    """Compare two analyses (either schema). `grade_order`: grades best first (the tables' scale);
    without it grades are not compared. `max_increase` is a fraction (0.05 = 5 %); for `score`,
    higher is better and a fall beyond it is the regression."""
    if metric not in GATE_METRICS:
        raise GateError(f"unknown metric {metric!r}; choose one of: {', '.join(GATE_METRICS)}")
    if not (math.isfinite(max_increase) and max_increase >= 0):
        raise GateError(f"the tolerance must be a non-negative number, got {max_increase!r}")
    old = baseline_from_analysis(old_document, root)
    new = baseline_from_analysis(new_document, root)
    rank = {grade: i for i, grade in enumerate(grade_order or ())}
    changes = []
    pairs, removed, added = match_functions(old["functions"], new["functions"])
    for before, after in pairs:
        changes.append(_judge(before, after, metric, max_increase, rank))
    for before in removed:
        changes.append(_alone("removed", before, metric))
    for after in added:
        changes.append(_alone("new", after, metric))
    order = {"regressed": 0, "improved": 1, "new": 2, "removed": 3, "unchanged": 4}
    changes.sort(key=lambda c: (order[c.status], c.file, c.line or 0, c.symbol))
    return Comparison(metric, max_increase, tuple(changes), tuple(_setting_notes(old["settings"], new["settings"])))


def match_functions(old: Sequence[Mapping], new: Sequence[Mapping]) -> tuple[list[tuple[Mapping, Mapping]],
                                                                                list[Mapping], list[Mapping]]:
    """(matched pairs, removed, new): by (file, symbol), (file, name), then a symbol or a name
    unique among the unmatched on both sides (a move)."""
    left, right = list(old), list(new)
    pairs: list[tuple[Mapping, Mapping]] = []
    for key in (lambda f: (f["file"], f["symbol"]), lambda f: (f["file"], f["name"]),
                lambda f: f["symbol"], lambda f: f["name"]):
        left_keys, right_keys = Counter(map(key, left)), Counter(map(key, right))
        by_key = {key(f): f for f in right if right_keys[key(f)] == 1}
        taken = set()
        still = []
        for f in left:
            k = key(f)
            if left_keys[k] == 1 and k in by_key:
                pairs.append((f, by_key[k]))
                taken.add(id(by_key[k]))
            else:
                still.append(f)
        left, right = still, [f for f in right if id(f) not in taken]
    return pairs, left, right


def _metric(f: Mapping, metric: str) -> float | None:
    value = f.get("score") if metric == "score" else (f.get("metrics") or {}).get(metric)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _alone(status: str, f: Mapping, metric: str) -> FunctionChange:
    value = _metric(f, metric)
    return FunctionChange(status, f["name"], f["symbol"], f["file"], f.get("line"),
                          value if status == "removed" else None, value if status == "new" else None,
                          f.get("grade") if status == "removed" else None, f.get("grade") if status == "new" else None)


def _judge(old: Mapping, new: Mapping, metric: str, max_increase: float, rank: Mapping[str, int]) -> FunctionChange:
    before, after = _metric(old, metric), _metric(new, metric)
    worse = better = False
    if before is not None and after is not None:
        if metric == "score":  # higher is better
            worse, better = after < before * (1 - max_increase), after > before * (1 + max_increase)
        else:
            worse, better = after > before * (1 + max_increase), after < before * (1 - max_increase)
    old_grade, new_grade = old.get("grade"), new.get("grade")
    grade_fell = old_grade in rank and new_grade in rank and rank[new_grade] > rank[old_grade]
    grade_rose = old_grade in rank and new_grade in rank and rank[new_grade] < rank[old_grade]
    status = "regressed" if worse or grade_fell else "improved" if better or grade_rose else "unchanged"
    causes: list[str] = []
    if status != "unchanged":
        causes = explain(old, new, worse=status == "regressed")
        if grade_fell and not worse:
            causes.insert(0, f"grade {old_grade} → {new_grade} (its {metric} change is within the tolerance)")
    moved = old["file"] if old["file"] != new["file"] else None
    return FunctionChange(status, new["name"], new["symbol"], new["file"], new.get("line"), before, after,
                          old_grade, new_grade, moved, tuple(causes))


# -- causes -------------------------------------------------------------------------------------

def explain(old: Mapping, new: Mapping, worse: bool = True) -> list[str]:
    """What changed in a function's report, in words, most telling first: the changes that make it
    costlier (`worse`) or cheaper."""
    causes: list[str] = []
    causes += _new_findings(old, new, worse)
    if old.get("big_o") != new.get("big_o") and old.get("big_o") and new.get("big_o"):
        causes.append(f"complexity {old['big_o']} → {new['big_o']}")
    old_depth, new_depth = _depth(old), _depth(new)
    if (new_depth > old_depth) if worse else (new_depth < old_depth):
        deepest = max((l for l in new.get("loops") or [] if l.get("depth") == new_depth),
                      key=lambda l: l.get("line") or 0, default=None)
        where = f" (line {deepest['line']})" if deepest and deepest.get("line") and new_depth > old_depth else ""
        causes.append(f"loops nested {_deep(old_depth)} → {_deep(new_depth)}{where}")
    old_loops, new_loops = len(old.get("loops") or []), len(new.get("loops") or [])
    if ((new_loops > old_loops) if worse else (new_loops < old_loops)) and new_depth == old_depth:
        causes.append(f"loops {old_loops} → {new_loops}")
    causes += _trip_counts(old, new)
    causes += _class_changes(old.get("counts") or {}, new.get("counts") or {}, worse)
    before, after = old.get("instructions"), new.get("instructions")
    if isinstance(before, (int, float)) and isinstance(after, (int, float)) and (after > before if worse
                                                                                 else after < before):
        causes.append(f"instructions per call {_number(before)} → {_number(after)}{_percent(before, after)}")
    if not causes:
        if old.get("cost_expression") != new.get("cost_expression"):
            causes.append(f"cost {old.get('cost_expression')} → {new.get('cost_expression')}")
        else:
            causes.append("no change in the function's own counts: costed with other tables or settings, "
                          "or at other sizes")
    return causes


def _new_findings(old: Mapping, new: Mapping, worse: bool) -> list[str]:
    words = {"division-in-loop": "a new division in a loop", "miss-heavy-loop": "a new miss-heavy loop"}
    gone = {"division-in-loop": "no division in a loop any more", "miss-heavy-loop": "no miss-heavy loop any more"}
    before = Counter(f.get("kind") for f in old.get("findings") or [])
    after = Counter(f.get("kind") for f in new.get("findings") or [])
    old_lines = {(f.get("kind"), f.get("line")) for f in old.get("findings") or []}
    out = []
    for kind in sorted(set(before) | set(after)):
        extra = after[kind] - before[kind]
        if extra > 0 and worse:
            fresh = [f.get("line") for f in new.get("findings") or []
                     if f.get("kind") == kind and (kind, f.get("line")) not in old_lines][:extra]
            lines = ", ".join(str(line) for line in fresh if line)
            text = words.get(kind, f"a new {kind} finding")
            out.append(text + (f" (line {lines})" if lines else "") + (f" ×{extra}" if extra > 1 else ""))
        elif extra < 0 and after[kind] == 0 and not worse:
            out.append(gone.get(kind, f"no {kind} finding any more"))
    return out


def _depth(f: Mapping) -> int:
    return max((l.get("depth") or 0 for l in f.get("loops") or []), default=0)


def _deep(depth: int) -> str:
    return "no loop" if depth == 0 else f"{depth} deep"


def _trip_counts(old: Mapping, new: Mapping) -> list[str]:
    """Loops on the same line whose trip count changed (lines holding several loops are skipped:
    which one is which cannot be told)."""
    before, after = _loops_by_line(old), _loops_by_line(new)
    out = []
    for line in sorted(set(before) & set(after)):
        if before[line] != after[line] and after[line]:
            out.append(f"loop at line {line} runs {after[line]} times (was {before[line]})")
    return out[:3]


def _loops_by_line(f: Mapping) -> dict[int, str]:
    lines = Counter(l.get("line") for l in f.get("loops") or [])
    return {l["line"]: l.get("trip_count") for l in f.get("loops") or [] if l.get("line") and lines[l["line"]] == 1}


def _class_changes(old: Mapping[str, float], new: Mapping[str, float], worse: bool) -> list[str]:
    out = []
    pairs = [(words, _sum_classes(old, bases), _sum_classes(new, bases)) for bases, words in _NAMED_CLASSES]
    pairs.append(("loads missing the L1", _misses(old), _misses(new)))
    for words, before, after in pairs:
        grew, shrank = after > before * 1.001 + 1e-9, before > after * 1.001 + 1e-9
        if grew if worse else shrank:
            out.append(f"{words} per call {_number(before)} → {_number(after)}")
    return out


def _base(cls: str) -> str:
    return cls.split("@", 1)[0].split(".", 1)[0]


def _sum_classes(counts: Mapping[str, float], bases: Iterable[str]) -> float:
    wanted = set(bases)
    return sum(v for k, v in counts.items() if _base(k) in wanted and isinstance(v, (int, float)))


def _misses(counts: Mapping[str, float]) -> float:
    return sum(v for k, v in counts.items() if _base(k) == "load" and isinstance(v, (int, float))
               and any(part in _MISS_TIERS for part in k.split("@", 1)[0].split(".")[1:]))


def _number(value: float) -> str:
    """1234567 → 1.23M; small counts as they are."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    if abs(value) < 1e-3:
        return f"{value:.3g}"
    return f"{value:.4g}"


def _percent(before: float, after: float) -> str:
    if before == 0:
        return ""
    ratio = (after - before) / abs(before)
    return f" (×{_number(ratio + 1)})" if ratio >= 9 else f" ({ratio * 100:+.0f}%)"


def _setting_notes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    notes = []
    for key in SETTING_KEYS:
        if old.get(key) is not None and new.get(key) is not None and old.get(key) != new.get(key):
            why = " (costs are not comparable; refresh the baseline)" if key == "arch" else ""
            notes.append(f"{key} differs: baseline {old[key]}, now {new[key]}{why}")
    return notes


# -- rendering (strings) ------------------------------------------------------------------------

def metric_text(value: float | None, metric: str) -> str:
    if value is None:
        return "–"
    if metric == "score":
        return f"{value:.1f}"
    if metric == "USD":
        return f"${_number(value)}"
    unit = _METRIC_UNITS[metric]  # CU has none: "CU 12k → 15k"
    return f"{_number(value)} {unit}".strip()


def change_text(c: FunctionChange) -> str:
    ratio = c.relative_change
    if ratio is None:
        return ""
    if math.isinf(ratio):
        return "from 0"
    if ratio >= 9:  # +900 %: a factor reads better
        return f"×{_number(ratio + 1)}"
    return f"{ratio * 100:+.1f}%"


def _where(c: FunctionChange) -> str:
    return f"{c.file}:{c.line}" if c.line else c.file


def _grades(c: FunctionChange) -> str:
    if c.old_grade and c.new_grade and c.old_grade != c.new_grade:
        return f"{c.old_grade} → {c.new_grade}"
    return c.new_grade or c.old_grade or ""


def _moved(c: FunctionChange) -> str:
    return f"moved from {c.moved_from} to {c.file}" if c.moved_from else ""


def summary_line(comparison: Comparison) -> str:
    counts = {s: len(comparison.by_status(s)) for s in ("regressed", "improved", "unchanged", "new", "removed")}
    moved = sum(1 for c in comparison.changes if c.moved_from)
    tolerance = f"{comparison.max_increase * 100:g}%"
    text = (f"{counts['regressed']} regressed, {counts['improved']} improved, {counts['unchanged']} unchanged, "
            f"{counts['new']} new, {counts['removed']} removed")
    return text + (f", {moved} moved" if moved else "") + f" ({comparison.metric}, tolerance {tolerance})"


def comparison_table(comparison: Comparison, show_unchanged: bool = False) -> str:
    """Plain text for a terminal or a CI log: regressions with their causes first."""
    lines = []
    for note in comparison.notes:
        lines.append(f"note: {note}")
    metric = comparison.metric
    for c in comparison.changes:
        if c.status == "unchanged" and not (show_unchanged or c.moved_from):
            continue
        if c.status in ("regressed", "improved"):
            head = (f"{c.status.upper() if c.status == 'regressed' else c.status} {c.name} ({_where(c)}): "
                    f"{metric} {metric_text(c.old, metric)} → {metric_text(c.new, metric)} ({change_text(c)})")
            if c.old_grade != c.new_grade and c.old_grade and c.new_grade:
                head += f", grade {c.old_grade} → {c.new_grade}"
        elif c.status == "unchanged":
            head = f"unchanged {c.name} ({_where(c)}): {metric} {metric_text(c.new, metric)}"
        else:
            value = c.new if c.status == "new" else c.old
            head = f"{c.status} {c.name} ({_where(c)}): {metric} {metric_text(value, metric)}, grade {_grades(c)}"
        lines.append(head)
        if c.moved_from:
            lines.append(f"    {_moved(c)}")
        for cause in c.causes:
            lines.append(f"    - {cause}")
    lines.append(summary_line(comparison))
    return "\n".join(lines)


def comparison_json(comparison: Comparison) -> str:
    doc = {
        "schema": DIFF_SCHEMA, "metric": comparison.metric, "max_increase": comparison.max_increase,
        "failed": comparison.failed, "notes": list(comparison.notes),
        "summary": {s: len(comparison.by_status(s)) for s in ("regressed", "improved", "unchanged", "new", "removed")}
        | {"moved": sum(1 for c in comparison.changes if c.moved_from)},
        "functions": [{**{k: v for k, v in asdict(c).items() if k != "causes"}, "causes": list(c.causes),
                       "relative_change": _finite(c.relative_change)} for c in comparison.changes],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _finite(value: float | None) -> float | str | None:
    if value is None or math.isfinite(value):
        return None if value is None else round(value, 6)
    return "inf" if value > 0 else "-inf"


def comparison_markdown(comparison: Comparison) -> str:
    """A pull-request comment: the regressions as a table, the rest summarised."""
    metric = comparison.metric
    mark = "❌" if comparison.failed else "✅"
    lines = [f"### {mark} ccls cost gate", "", summary_line(comparison), ""]
    lines += [f"> {note}" for note in comparison.notes] + ([""] if comparison.notes else [])
    shown = [c for c in comparison.changes if c.status in ("regressed", "improved") or c.moved_from]
    if shown:
        lines += [f"| | function | location | {metric} | change | grade | why |", "|---|---|---|---:|---:|---|---|"]
        for c in shown:
            icon = {"regressed": "🔺", "improved": "🔻"}.get(c.status, "↪")
            why = "; ".join(([_moved(c)] if c.moved_from else []) + list(c.causes))
            lines.append(f"| {icon} | `{_cell(c.name)}` | {_cell(_where(c))} | {metric_text(c.old, metric)} → "
                         f"{metric_text(c.new, metric)} | {change_text(c)} | {_grades(c)} | {_cell(why)} |")
        lines.append("")
    for status in ("new", "removed"):
        items = comparison.by_status(status)
        if items:
            names = ", ".join(f"`{_cell(c.name)}` ({_cell(_where(c))})" for c in items[:50])
            more = f" and {len(items) - 50} more" if len(items) > 50 else ""
            lines.append(f"**{status}:** {names}{more}")
    return "\n".join(lines).rstrip() + "\n"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def parse_tolerance(text: str) -> float:
    """`5%`, `5` (percent) or `2.5%` → a fraction; ValueError otherwise."""
    number = text.strip().removesuffix("%").strip()
    value = float(number)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(text)
    return value / 100
