"""Reports → strings: inlay hint labels, hover markdown, the CLI table and JSON. Pure."""
from __future__ import annotations

import json
import math
from typing import Callable, Sequence

from ccls.model import AnalysisError, LoopSummary
from ccls.polynomial import Polynomial
from ccls.report_types import FunctionReport, ReportSettings
from ccls.scoring import profile_flips, weights_at
from ccls.table_types import GPU_THREAD_FAMILY, reference_family
from ccls.taxonomy import split

JSON_SCHEMA = "ccls.analysis/1"
DEFAULT_HINT_TEMPLATE = "{grade} · {cu} CU · {energy}"
_PREFIXES = [(1e-15, "f"), (1e-12, "p"), (1e-9, "n"), (1e-6, "µ"), (1e-3, "m"), (1.0, ""), (1e3, "k"), (1e6, "M"),
             (1e9, "G"), (1e12, "T"), (1e15, "P")]


def si(value: float, unit: str = "", digits: int = 3) -> str:
    """``12400`` → ``12.4k``; ``3.1e-6, "J"`` → ``3.1 µJ``."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}{' ' + unit if unit else ''}"
    scale, prefix = _PREFIXES[0]
    for candidate, p in _PREFIXES:
        if abs(value) >= candidate:
            scale, prefix = candidate, p
    number = f"{value / scale:.{digits}g}"
    return f"{number} {prefix}{unit}" if unit else f"{number}{prefix}"


def usd(value: float) -> str:
    return f"${value:.3g}" if value >= 0.01 else f"${value:.2e}"


def per(r: FunctionReport) -> str:
    """What one report's figures are for: "thread" for GPU code (PTX is costed per thread), else "call"."""
    return "thread" if reference_family(r.counted.arch) == GPU_THREAD_FAMILY else "call"


def hint_label(r: FunctionReport, template: str = DEFAULT_HINT_TEMPLATE) -> str:
    """The template filled in. `{per}` is "/thread" for GPU code and "" otherwise; a GPU function's
    label says "per thread" even when the template does not use `{per}` ("{cu} CU" → "{cu} CU/thread",
    else " per thread" at the end), so per-thread figures never pass for whole-call ones."""
    per_thread = per(r) == "thread"
    fields = {
        "grade": r.grade, "score": f"{r.score:.0f}", "rating": r.rating, "cu": si(r.metrics.cu),
        "energy": si(r.metrics.energy_joules, "J"), "co2": si(r.metrics.co2_kg * 1000, "g") + " CO2",
        "usd": usd(r.metrics.usd), "big_o": r.big_o, "per": "/thread" if per_thread else "",
    }

    def marked(t: str) -> str:
        if not per_thread or "{per}" in t:
            return t
        return t.replace("{cu} CU", "{cu} CU{per}", 1) if "{cu} CU" in t else t + " per thread"
    try:
        return marked(template).format(**fields)
    except (KeyError, IndexError, ValueError):
        return marked(DEFAULT_HINT_TEMPLATE).format(**fields)


# ccls.hints.show: which functions get an inlay hint (hover and diagnostics are never filtered).
HINT_SHOW_MODES = ("all", "costly", "findings", "none")
DEFAULT_HINT_SHOW = "costly"
# "costly": a function with at least this share of its file's CU, or graded at or below this
# grade. Chosen from real files under absolute scoring (the server's default), one hint per function:
# zlib deflate.c 3 of 28 functions (deflate_slow 66 %, deflate_fast 17 %, fill_window 13 %),
# inflate.c 1 of 22 (inflate, 99.9 %), trees.c 1 of 21 (gen_bitlen, 84 %, C), examples/kernels.c
# 3 of 7; 20 % would drop deflate_fast and fill_window, C+ would add trees.c's cheap C+ helpers.
COSTLY_SHARE = 0.10
COSTLY_GRADE = "C"


def hint_filter(reports: Sequence[FunctionReport], mode: str, grades: Sequence[str] = (),
                share: float = COSTLY_SHARE, worst_grade: str = COSTLY_GRADE) -> Callable[[FunctionReport], bool]:
    """Whether a function (its most costly report) gets a hint under `mode`. `reports`: one per
    function of the file, for its total CU; `grades`: the grade scale's names, best first (a
    grade not on it is never costly by grade)."""
    if mode == "none":
        return lambda r: False
    if mode == "findings":
        return lambda r: bool(r.findings)
    if mode != "costly":
        return lambda r: True
    total_cu = math.fsum(r.metrics.cu for r in reports if math.isfinite(r.metrics.cu))
    rank = {grade: i for i, grade in enumerate(grades)}
    limit = rank.get(worst_grade)

    def costly(r: FunctionReport) -> bool:
        if total_cu > 0 and r.metrics.cu >= share * total_cu:
            return True
        return limit is not None and rank.get(r.grade, -1) >= limit
    return costly


def _class_label(cls: str) -> str:
    base, qualifier, width = split(cls)
    text = base + (f".{qualifier}" if qualifier else "") + (f" ×{width}b" if width else "")
    return f"`{text}`"


def hover_markdown(r: FunctionReport, settings: ReportSettings | None = None) -> str:
    fn = r.counted
    m = r.metrics
    profile = settings.profile if settings else "DEFAULT"
    per_thread = per(r) == "thread"
    out = [f"### {fn.display_name} — {r.grade} ({r.score:.0f}/100, {r.rating})", ""]
    out.append(("Per thread: " if per_thread else "")
               + f"**{si(m.cu)} CU** · **{si(m.energy_joules, 'J')}** · {si(m.co2_kg * 1000, 'g')} CO2e · "
               f"{usd(m.usd)}" + (f" · {si(r.instructions)} instructions" if r.instructions is not None else ""))
    out += _parts_and_bands(r)
    if r.within_uncertainty_of:
        out += ["", f"Within uncertainty of {', '.join(r.within_uncertainty_of)}: their CU bands overlap this "
                    "one's, so it is not ranked against them."]
    if r.inclusive_metrics is not None:
        out += ["", f"Including analysed callees{' (per thread)' if per_thread else ''}: "
                    f"{si(r.inclusive_metrics.cu)} CU · {si(r.inclusive_metrics.energy_joules, 'J')}"
                + (f"; not included (unknown): {', '.join(r.unknown_callees)}" if r.unknown_callees else "")]
    out += ["", f"Cost expression: `{r.cost_expression.format()}` CU{' per thread' if per_thread else ''} — {r.big_o}",
            ""]
    if r.graded_by:
        out += [f"Graded by {r.graded_by}.", ""]
    out += ["| profile | score | grade |", "|---|---:|:---:|"]
    for name, (score, grade) in r.scores_by_profile.items():
        mark = " (active)" if name == profile else ""
        out.append(f"| {name}{mark} | {score:.0f} | {grade} |")
    out += ["", f"| class | executed{' per thread' if per_thread else ''} | CU | energy |", "|---|---:|---:|---:|"]
    for b in sorted(r.breakdown, key=lambda b: -b.cu)[:14]:
        cu = si(b.cu) if b.known else "unknown"
        out.append(f"| {_class_label(b.cls)} | {si(b.count)} | {cu} | {si(b.energy_joules, 'J') if b.known else 'unknown'} |")
    if fn.loops:
        out += ["", "**Loops**"]
        for loop in sorted(fn.loops, key=lambda l: (l.line or 0, l.depth)):
            kind = {"constant": "known", "symbolic": "symbolic", "data": "named by the data it walks", "bounded": "assumed: an upper bound",
                    "expected": "assumed: the mean of a data-dependent exit", "unknown": "assumed"}[loop.trip_count.kind]
            out.append(f"- line {loop.line or '?'}, depth {loop.depth}: {trip_count_text(loop, fn.loops)} "
                       f"iterations ({kind})")
    if r.hottest_lines:
        out += ["", "**Hottest lines**: " + ", ".join(f"{line} ({si(cu)} CU)" for line, cu in r.hottest_lines)]
    if r.findings:
        out += ["", "**Findings**"]
        for f in r.findings:
            out.append(f"- line {f.line or '?'} — {f.message}. *Fix:* {f.recommendation}")
    if r.assumptions:
        out += ["", "**Assumptions**"] + [f"- {a}" for a in r.assumptions]
    return "\n".join(out)


def band_percent(value: float, low: float, high: float) -> str:
    """``-30/+50%``: a band's ends relative to its value."""
    if value <= 0 or not math.isfinite(value):
        return "?"
    return f"-{100 * (1 - low / value):.0f}/+{100 * (high / value - 1):.0f}%"


def _parts_and_bands(r: FunctionReport) -> list[str]:
    """Hover lines: what each metric is made of, and its band."""
    p, band = r.metric_parts, r.metrics_band
    if p is None or band is None:
        return []
    m, lo, hi = r.metrics, band.low, band.high
    rows = [
        ("CU", si(m.cu), f"{si(p.seconds, 's')} on one {'SM' if per(r) == 'thread' else 'core'}",
         f"{si(lo.cu)} … {si(hi.cu)}", band_percent(m.cu, lo.cu, hi.cu)),
        ("EU", si(m.energy_joules, "J"), f"dynamic {si(p.compute_joules, 'J')} compute + {si(p.memory_joules, 'J')} "
         f"memory · static {si(p.static_joules, 'J')}", f"{si(lo.energy_joules, 'J')} … {si(hi.energy_joules, 'J')}",
         band_percent(m.energy_joules, lo.energy_joules, hi.energy_joules)),
        ("CO2", si(m.co2_kg * 1000, "g"), f"operational {si(p.operational_kg * 1000, 'g')} · embodied "
         f"{si(p.embodied_kg * 1000, 'g')}", f"{si(lo.co2_kg * 1000, 'g')} … {si(hi.co2_kg * 1000, 'g')}",
         band_percent(m.co2_kg, lo.co2_kg, hi.co2_kg)),
        ("$", usd(m.usd), f"energy {usd(p.energy_usd)} · instance {usd(p.instance_usd)}",
         f"{usd(lo.usd)} … {usd(hi.usd)}", band_percent(m.usd, lo.usd, hi.usd)),
    ]
    return ["", "| metric | value | made of | band | ± |", "|---|---:|---|---|---:|",
            *(f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows)]


def report_to_json(r: FunctionReport) -> dict:
    fn = r.counted
    return {
        "name": fn.display_name, "symbol": fn.name, "file": fn.file, "line": fn.line, "end_line": fn.end_line,
        "language": fn.language, "arch": fn.arch, "parameters": fn.parameters,
        "static_counts": dict(sorted(fn.static_counts.items())),
        "counts": {k: round(v, 3) for k, v in sorted(r.counts.items())},
        "instructions": round(r.instructions, 3) if r.instructions is not None else None,
        "metrics": r.metrics.as_dict(), "per": per(r),
        "metric_parts": r.metric_parts.as_dict() if r.metric_parts is not None else None,
        "metrics_band": r.metrics_band.as_dict() if r.metrics_band is not None else None,
        "within_uncertainty_of": r.within_uncertainty_of,
        "inclusive_metrics": r.inclusive_metrics.as_dict() if r.inclusive_metrics else None,
        "unknown_callees": r.unknown_callees,
        "cost_expression": r.cost_expression.format(), "big_o": r.big_o,
        "score": round(r.score, 2), "grade": r.grade, "rating": r.rating, "graded_by": r.graded_by,
        "scores_by_profile": {k: {"score": round(s, 2), "grade": g} for k, (s, g) in r.scores_by_profile.items()},
        "loops": [{"line": l.line, "depth": l.depth, "trip_count": trip_count_text(l, fn.loops),
                   "kind": l.trip_count.kind} for l in fn.loops],
        "hottest_lines": [{"line": line, "CU": cu} for line, cu in r.hottest_lines],
        "findings": [{"kind": f.kind, "line": f.line, "message": f.message, "recommendation": f.recommendation,
                      "share_of_cu": f.share_of_cu} for f in r.findings],
        "assumptions": r.assumptions,
        "compile_flags": list(fn.compile_flags),
    }


def analysis_json(reports: Sequence[FunctionReport], errors: Sequence[AnalysisError], settings: ReportSettings,
                  arch: str, table_version: str, profiles: dict | None = None, summary: dict | None = None) -> str:
    """The JSON document; with the tables' `profiles`, `profile_flips` (Fig. 9 as data); with
    `summary` (ccls.reports.summary.summary_json), the hierarchy of files and folders."""
    document = {
        "schema": JSON_SCHEMA, "profile": settings.profile, "region": settings.region, "arch": arch,
        "scoring": settings.scoring, "normalization": settings.normalization, "table_version": table_version,
        "functions": [report_to_json(r) for r in reports],
        "profile_flips": profile_flips_json(reports, settings.profile, profiles),
        "errors": [{"file": e.file, "line": e.line, "message": e.message} for e in errors],
        **({"summary": summary} if summary is not None else {}),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def _band_cell(r: FunctionReport, metric: str) -> str:
    if r.metrics_band is None:
        return ""
    low, high = r.metrics_band.as_dict()[metric]
    return band_percent(r.metrics.as_dict()[metric], low, high)


FLIP_EXAMPLES = 20
FLIP_COHORT_LIMIT = 1500  # pairs grow as n²: above this many functions only the scores are given


def profile_flips_json(reports: Sequence[FunctionReport], profile: str, profiles: dict | None = None) -> list[dict]:
    """The paper's Fig. 9 as data: for the reported cohort, per other profile, the pairs whose
    order differs from `profile`'s, with where they cross on the straight line between the two
    weight vectors, w = (1 − t)·w_from + t·w_to (largest swings first, FLIP_EXAMPLES of them;
    `weights` too when the tables' `profiles` are given)."""
    out = []
    if len(reports) < 2 or profile not in reports[0].scores_by_profile:
        return out
    if len(reports) > FLIP_COHORT_LIMIT:
        return [{"from": profile, "to": other, "pairs": len(reports) * (len(reports) - 1) // 2, "flips": None,
                 "examples": [], "note": f"more than {FLIP_COHORT_LIMIT} functions: not computed"}
                for other in reports[0].scores_by_profile if other != profile]
    first = [r.scores_by_profile[profile][0] for r in reports]
    for other in reports[0].scores_by_profile:
        if other == profile:
            continue
        second = [r.scores_by_profile[other][0] for r in reports]
        flips = profile_flips(first, second)
        flips.sort(key=lambda f: -abs((first[f.better_first] - first[f.better_second])
                                      - (second[f.better_first] - second[f.better_second])))
        pairs = len(reports) * (len(reports) - 1) // 2
        out.append({"from": profile, "to": other, "pairs": pairs, "flips": len(flips), "examples": [
            {"preferred_by_from": reports[f.better_first].counted.display_name,
             "preferred_by_to": reports[f.better_second].counted.display_name, "t": round(f.t, 4),
             **({"weights": [round(w, 4) for w in weights_at(profiles[profile], profiles[other], f.t)]}
                if profiles and profile in profiles and other in profiles else {})}
            for f in flips[:FLIP_EXAMPLES]]})
    return out


def analysis_table(reports: Sequence[FunctionReport], errors: Sequence[AnalysisError], settings: ReportSettings,
                   arch: str) -> str:
    # A "per" column (call / thread) appears when GPU functions, costed per thread, are listed.
    with_per = any(per(r) == "thread" for r in reports)
    headers = ["function", "location", *(["per"] if with_per else []), "CU", "±CU", "EU", "±EU", "CO2", "±CO2", "$",
               "±$", "score", "grade", "Big-O", "top finding"]
    rows = []
    for r in reports:
        fn = r.counted
        top = r.findings[0] if r.findings else None
        rows.append([
            fn.display_name, f"{fn.file}:{fn.line or '?'}", *([per(r)] if with_per else []), si(r.metrics.cu),
            _band_cell(r, "CU"), si(r.metrics.energy_joules, "J"), _band_cell(r, "EU"), si(r.metrics.co2_kg * 1000, "g"),
            _band_cell(r, "CO2"), usd(r.metrics.usd), _band_cell(r, "USD"),
            f"{r.score:.0f}", r.grade, r.big_o, f"{top.kind} @{top.line}" if top else "",
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(headers)]
    scoring = settings.scoring + (f" ({settings.normalization})" if settings.scoring == "cohort" else "")
    lines = [f"profile {settings.profile} · region {settings.region} · arch {arch} · scoring {scoring}", ""]
    lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    if errors:
        lines += ["", "errors:"]
        for e in errors:
            first = e.message.splitlines()[0] if e.message else ""
            lines.append(f"  {e.file}:{e.line or '?'}: {first}")
    return "\n".join(lines)


def trip_count_text(loop: LoopSummary, loops: Sequence[LoopSummary]) -> str:
    """A loop's trip count as a person reads it: an enclosing loop's index (`@for.body`, an IR
    block name) is named by that loop's line."""
    count = loop.trip_count.iterations
    lines = {f"@{other.id}": other.line for other in loops}
    for symbol in sorted(count.symbols):
        if symbol in lines:
            where = f"line {lines[symbol]}" if lines[symbol] else "an enclosing loop"
            count = count.substitute(symbol, Polynomial.symbol(f"(iteration of the loop at {where})"))
    return count.format()
