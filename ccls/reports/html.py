"""The summary → one self-contained HTML page (inline CSS, JS and SVG; nothing fetched): the
repository summary, a sortable table of functions, folders and files, the profile-sensitivity
chart of the paper's Fig. 9, and per function its metrics with their bands, its class breakdown
and its cost against n. Pure."""
from __future__ import annotations

import math
from html import escape

from ccls.render import band_percent, per, profile_flips_json, si, usd
from ccls.reports.plots import PALETTE, cost_curve, cost_curve_svg, profile_order, sensitivity_svg
from ccls.reports.summary import FunctionEntry, Summary, Totals
from ccls.taxonomy import BASE_CLASSES, split

DETAIL_LIMIT = 1000  # functions given a detail section (the costliest); the table lists them all
BREAKDOWN_ROWS = 20
READY_ATTRIBUTE = "data-ccls-ready"  # set on <html> when the page's script ran to its end

_CSS = """
:root { --fg: #1d2430; --muted: #5b6675; --line: #d8dde5; --bg: #fff; --head: #f3f5f8; --accent: #1f5fbf; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg);
       margin: 0 auto; padding: 16px 24px 48px; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 16px 0 6px; }
.meta, .note { color: var(--muted); } code { font: 12px/1.3 ui-monospace, SFMono-Regular, Menlo, monospace; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 140px; }
.card .v { font-size: 20px; font-weight: 600; } .card .k { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--head); position: sticky; top: 0; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \\25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \\25BC"; }
tr:hover td { background: #f8fafc; }
.grade { display: inline-block; min-width: 2.4em; text-align: center; border-radius: 4px; padding: 0 4px; color: #fff;
         font-weight: 600; }
.g-A { background: #1a7f37; } .g-B { background: #6a8f00; } .g-C { background: #b07800; } .g-D { background: #c4501b; }
.g-E, .g-F { background: #b42318; } .g-other { background: #5b6675; }
.dist { display: flex; height: 22px; border-radius: 4px; overflow: hidden; margin: 4px 0 2px; max-width: 720px; }
.dist span { color: #fff; font-size: 11px; line-height: 22px; text-align: center; overflow: hidden; }
.bar { background: var(--accent); height: 10px; border-radius: 2px; }
.kind { font-family: ui-monospace, monospace; font-size: 12px; background: #fff4e5; border-radius: 3px; padding: 0 4px; }
details.fn { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 4px 12px; }
details.fn[open] { background: #fcfdff; } details.fn summary { cursor: pointer; font-weight: 600; }
.cols { display: flex; flex-wrap: wrap; gap: 24px; } .cols > div { flex: 1 1 480px; min-width: 0; }
svg { max-width: 100%; height: auto; font: 11px system-ui, sans-serif; }
svg .grid { stroke: #e6e9ef; } svg .frame { fill: none; stroke: #9aa4b2; }
svg .series { fill: none; stroke-width: 2; } svg .band { stroke: #d62728; stroke-width: 2; }
svg .crossing { stroke: #000; stroke-width: 1.5; } svg .tick { fill: #5b6675; } svg .label { fill: #1d2430; }
.scroll { overflow-x: auto; } td.bigo { min-width: 7em; max-width: 240px; overflow-wrap: anywhere; }
td.where { max-width: 240px; overflow-wrap: anywhere; }
td.kinds { min-width: 10em; font-size: 12px; }
.hidden { display: none; } #filter { padding: 4px 8px; width: 320px; max-width: 100%; margin: 4px 0; }
.legend span { display: inline-block; margin-right: 14px; } .legend i { display: inline-block; width: 14px; height: 3px;
               vertical-align: middle; margin-right: 4px; }
"""

# Sorting, filtering, opening a function's details; `#sort=COLUMN-asc|desc` in the address sorts on
# load. The last statement marks the page so a test can tell the script ran without an error.
_SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("functions-table");
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function key(row, col, type) {
    var cell = row.cells[col], raw = cell.getAttribute("data-v");
    if (type === "num") { var x = parseFloat(raw); return isNaN(x) ? -Infinity : x; }
    return (raw === null ? cell.textContent : raw).toLowerCase();
  }
  function sortBy(col, dir) {
    var type = heads[col].getAttribute("data-type");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, col, type), y = key(b, col, type);
      var c = x < y ? -1 : (x > y ? 1 : 0);
      if (dir === "desc") { c = -c; }
      return c || (+a.getAttribute("data-index") - +b.getAttribute("data-index"));
    });
    rows.forEach(function (row) { body.appendChild(row); });
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    heads[col].setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
  }
  function column(name) {
    for (var i = 0; i < heads.length; i++) { if (heads[i].getAttribute("data-key") === name) { return i; } }
    return -1;
  }
  Array.prototype.forEach.call(heads, function (head, col) {
    head.tabIndex = 0;
    function toggle() {
      var now = head.getAttribute("aria-sort");
      var dir = now === "descending" ? "asc" : (now === "ascending" ? "desc" :
                (head.getAttribute("data-type") === "num" ? "desc" : "asc"));
      sortBy(col, dir);
    }
    head.addEventListener("click", toggle);
    head.addEventListener("keydown", function (e) { if (e.key === "Enter") { toggle(); } });
  });
  var filter = document.getElementById("filter");
  filter.addEventListener("input", function () {
    var words = filter.value.toLowerCase().split(/\\s+/).filter(Boolean);
    Array.prototype.forEach.call(body.rows, function (row) {
      var text = row.textContent.toLowerCase();
      row.classList.toggle("hidden", !words.every(function (w) { return text.indexOf(w) >= 0; }));
    });
  });
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  var wanted = /^#sort=([\\w-]+?)-(asc|desc)$/.exec(location.hash);
  if (wanted && column(wanted[1]) >= 0) { sortBy(column(wanted[1]), wanted[2]); } else { openTarget(); }
  document.documentElement.setAttribute("%s", "1");
})();
""" % READY_ATTRIBUTE


def grade_css(grade: str) -> str:
    letter = grade[:1].upper()
    return f"g-{letter}" if letter in "ABCDEF" and letter else "g-other"


def _grade(grade: str) -> str:
    return f'<span class="grade {grade_css(grade)}">{escape(grade)}</span>'


def _num(value: float, text: str) -> str:
    v = f"{value:.6g}" if math.isfinite(value) else ""
    return f'<td class="n" data-v="{v}">{escape(text)}</td>'


def _class_text(cls: str) -> str:
    base, qualifier, width = split(cls)
    return base + (f".{qualifier}" if qualifier else "") + (f" ×{width}b" if width else "")


def _totals_cards(t: Totals, files: int) -> str:
    cards = [("functions", str(t.functions)), ("files", str(files))]
    if t.functions - t.thread_functions:
        cards += [("CU, one call of each", si(t.per_call.cu)), ("energy, one call of each", si(t.per_call.energy_joules, "J")),
                  ("CO2e, one call of each", si(t.per_call.co2_kg * 1000, "g")), ("cost, one call of each", usd(t.per_call.usd))]
    if t.thread_functions:
        cards.append((f"CU, one thread of each of {t.thread_functions} GPU functions", si(t.per_thread.cu)))
    cards += [("findings", str(sum(t.findings.values()))), ("files not analysed", str(t.errors))]
    return '<div class="cards">' + "".join(f'<div class="card"><div class="v">{escape(v)}</div><div class="k">'
                                            f'{escape(k)}</div></div>' for k, v in cards) + "</div>"


def _distribution(t: Totals) -> str:
    if not t.functions:
        return ""
    spans = "".join(f'<span class="{grade_css(g)}" style="width:{100 * n / t.functions:.2f}%" title="{escape(g)}: {n}">'
                    f'{escape(g)} {n}</span>' for g, n in t.grades.items())
    return f'<h3>Grades</h3><div class="dist">{spans}</div>'


def _findings_by_kind(summary: Summary) -> str:
    if not summary.findings:
        return '<p class="note">No findings.</p>'
    rows = []
    for kind, entries in summary.findings.items():
        names = ", ".join(f'<a href="#fn-{e.function}">{escape(summary.functions[e.function].report.counted.display_name)}</a>'
                          for e in entries[:8]) + (f" and {len(entries) - 8} more" if len(entries) > 8 else "")
        rows.append(f'<tr><td><span class="kind">{escape(kind)}</span></td><td class="n">{len(entries)}</td><td>{names}</td></tr>')
    return ('<h3>Findings by kind</h3><table><thead><tr><th>kind</th><th class="n">findings</th><th>largest first</th>'
            '</tr></thead><tbody>' + "".join(rows) + "</tbody></table>")


def _where(entry: FunctionEntry) -> str:
    line = entry.report.counted.line
    return f"{entry.path}:{line}" if line else entry.path


def _band_cell(entry: FunctionEntry) -> str:
    r = entry.report
    if r.metrics_band is None:
        return '<td class="n" data-v=""></td>'
    low, high = r.metrics_band.low.cu, r.metrics_band.high.cu
    width = high / low if low > 0 else math.inf
    return _num(width, band_percent(r.metrics.cu, low, high))


def _functions_table(summary: Summary, detailed: frozenset[int]) -> str:
    heads = [("name", "text", "function"), ("file", "text", "location"), ("per", "text", "per"), ("cu", "num", "CU"),
             ("band", "num", "±CU"), ("eu", "num", "EU"), ("co2", "num", "CO2e"), ("usd", "num", "$"),
             ("score", "num", "score"), ("grade", "num", "grade"), ("bigo", "num", "Big-O"),
             ("findings", "num", "findings")]
    numeric, sorted_by = ' class="n"', ' aria-sort="descending"'  # the rows come in CU order
    head = "".join(f'<th data-key="{k}" data-type="{t}"{numeric if t == "num" and k not in ("bigo", "findings") else ""}'
                   f'{sorted_by if k == "cu" else ""}>{escape(label)}</th>' for k, t, label in heads)
    rows = []
    order = sorted(range(len(summary.functions)), key=lambda k: (-_finite(summary.functions[k].report.metrics.cu), k))
    for k in order:
        entry = summary.functions[k]
        r = entry.report
        m = r.metrics
        kinds = ", ".join(sorted({f.kind for f in r.findings}))
        name = escape(r.counted.display_name)
        link = f'<a href="#fn-{k}">{name}</a>' if k in detailed else name
        rows.append(
            f'<tr data-index="{k}"><td data-v="{escape(r.counted.display_name.lower())}">{link}</td>'
            f'<td class="where" data-v="{escape(entry.path.lower())}:{(r.counted.line or 0):09d}"><code>{escape(_where(entry))}</code></td>'
            f'<td data-v="{per(r)}">{per(r)}</td>{_num(m.cu, si(m.cu))}{_band_cell(entry)}{_num(m.energy_joules, si(m.energy_joules, "J"))}'
            f'{_num(m.co2_kg, si(m.co2_kg * 1000, "g"))}{_num(m.usd, usd(m.usd))}{_num(r.score, f"{r.score:.0f}")}'
            f'<td class="n" data-v="{r.score:.6g}">{_grade(r.grade)}</td>'
            f'<td class="bigo" data-v="{r.cost_expression.degree()}">{escape(r.big_o)}</td>'
            f'<td class="kinds" data-v="{len(r.findings)}">{escape(kinds)}</td></tr>')
    return (f'<input id="filter" type="search" placeholder="filter: a name, a file, a grade…" aria-label="filter functions">'
            f'<div class="scroll"><table id="functions-table" class="sortable"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _finite(value: float) -> float:
    return value if math.isfinite(value) else -1.0


def _detailed(summary: Summary) -> frozenset[int]:
    """The functions given a detail section: all of them, or the DETAIL_LIMIT costliest."""
    order = sorted(range(len(summary.functions)), key=lambda k: (-_finite(summary.functions[k].report.metrics.cu), k))
    return frozenset(order[:DETAIL_LIMIT])


def _hierarchy(summary: Summary) -> str:
    rows = []
    nodes = sorted(summary.folders + summary.files, key=lambda n: (n.path != ".", n.path.split("/")))
    for n in nodes:
        t = n.totals
        depth = 0 if n.path == "." else n.path.count("/") + (1 if n.kind == "file" else 1)
        label = f"{n.path}/" if n.kind == "folder" and n.path != "." else n.path
        grades = " ".join(f"{g} {c}" for g, c in t.grades.items())
        rows.append(f'<tr class="{n.kind}"><td style="padding-left:{8 + 16 * depth}px">'
                    f'{"<b>" if n.kind == "folder" else "<code>"}{escape(label)}{"</b>" if n.kind == "folder" else "</code>"}'
                    f'</td><td class="n">{t.functions}</td>{_call_cells(t)}'
                    f'<td class="n">{_gpu_cell(t)}</td><td>{escape(grades)}</td>'
                    f'<td class="n">{sum(t.findings.values()) or ""}</td><td class="n">{t.errors or ""}</td></tr>')
    return ('<table id="hierarchy-table"><thead><tr><th>folder / file</th><th class="n">functions</th>'
            '<th class="n">CU</th><th class="n">EU</th><th class="n">CO2e</th><th class="n">$</th>'
            '<th class="n">GPU functions</th><th>grades</th><th class="n">findings</th><th class="n">errors</th></tr>'
            '</thead><tbody>' + "".join(rows) + '</tbody></table><p class="note">Sums of one call of each CPU and '
            'Python function (GPU functions, costed per thread, are counted apart). A folder holds its subfolders.</p>')


def _call_cells(t: Totals) -> str:
    """CU, EU, CO2 and $ of one call of each CPU/Python function; empty where there are none."""
    if t.functions == t.thread_functions:
        return '<td class="n"></td>' * 4
    m = t.per_call
    return (_num(m.cu, si(m.cu)) + _num(m.energy_joules, si(m.energy_joules, "J"))
            + _num(m.co2_kg, si(m.co2_kg * 1000, "g")) + _num(m.usd, usd(m.usd)))


def _gpu_cell(t: Totals) -> str:
    if not t.thread_functions:
        return ""
    return f"{t.thread_functions} ({escape(si(t.per_thread.cu))} CU per thread)"


def _sensitivity(summary: Summary) -> str:
    reports = [e.report for e in summary.functions]
    context = summary.context
    if len(reports) < 2 or not reports[0].scores_by_profile:
        return '<p class="note">Fewer than two functions: nothing to rank.</p>'
    names = [r.counted.display_name for r in reports]
    scores = [{p: s for p, (s, _) in r.scores_by_profile.items()} for r in reports]
    flips = profile_flips_json(reports, context.settings.profile, dict(context.profiles) or None)
    first_index: dict[str, int] = {}
    for k, name in enumerate(names):
        first_index.setdefault(name, k)
    swapped = [first_index[e[side]] for f in flips for e in f["examples"] for side in ("preferred_by_from", "preferred_by_to")]
    svg, drawn = sensitivity_svg(names, scores, context.profiles, context.settings.profile, prefer=swapped)
    order = profile_order(context.profiles, list(scores[0]))
    legend = "".join(f'<span><i style="background:{PALETTE[c % len(PALETTE)]}"></i>{escape(names[k])}</span>'
                     for c, k in enumerate(drawn))
    rows = []
    for f in flips:
        if f.get("flips") is None:
            rows.append(f'<tr><td>{escape(f["to"])}</td><td class="n">–</td><td class="n">{f["pairs"]}</td>'
                        f'<td>{escape(f.get("note", ""))}</td></tr>')
            continue
        examples = "; ".join(f'{escape(e["preferred_by_from"])} ≻ {escape(e["preferred_by_to"])} (t = {e["t"]:.2f})'
                             for e in f["examples"][:3])
        rows.append(f'<tr><td>{escape(f["to"])}</td><td class="n">{f["flips"]}</td><td class="n">{f["pairs"]}</td>'
                    f'<td>{examples}</td></tr>')
    weights = ", ".join(f"{p} ({', '.join(f'{w:g}' for w in context.profiles[p].weights)})"
                        for p in order if p in context.profiles)
    note = (f'<p class="note">Each line is one function\'s composite score under each profile; the {len(drawn)} '
            f'functions drawn are those that swap order between the active profile and another (largest swings '
            f'first), then those whose score moves most between profiles. Between two neighbouring '
            f'profiles the weights move in a straight line and the score, linear in the weights (eq. 5), '
            f'follows it exactly; circles mark where two drawn functions swap order. Weights (CU, EU, CO2, $): '
            f'{escape(weights)}.</p>')
    table = ('<table><thead><tr><th>from ' + escape(context.settings.profile) + ' to</th><th class="n">pairs ordered '
             'differently</th><th class="n">pairs</th><th>largest swings (t: where on the way they cross)</th></tr>'
             '</thead><tbody>' + "".join(rows) + '</tbody></table>')
    return f'{svg}<div class="legend">{legend}</div>{note}{table}'


def _metrics_table(entry: FunctionEntry) -> str:
    r = entry.report
    m = r.metrics.as_dict()
    band = r.metrics_band.as_dict() if r.metrics_band is not None else None
    text = {"CU": lambda v: si(v), "EU": lambda v: si(v, "J"), "CO2": lambda v: si(v * 1000, "g"), "USD": usd}
    rows = []
    for metric, value in m.items():
        if band is not None:
            low, high = band[metric]
            band_text = f"{text[metric](low)} … {text[metric](high)}"
            spread = band_percent(value, low, high)
        else:
            band_text, spread = "", ""
        rows.append(f'<tr><td>{metric}</td><td class="n">{escape(text[metric](value))}</td><td class="n">'
                    f'{escape(band_text)}</td><td class="n">{escape(spread)}</td></tr>')
    inclusive = ""
    if r.inclusive_metrics is not None:
        inclusive = (f'<p>Including analysed callees: {escape(si(r.inclusive_metrics.cu))} CU · '
                     f'{escape(si(r.inclusive_metrics.energy_joules, "J"))}'
                     + (f'; not included (unknown): {escape(", ".join(r.unknown_callees))}' if r.unknown_callees else "")
                     + "</p>")
    return ('<table class="metrics"><thead><tr><th>metric</th><th class="n">value</th><th class="n">band</th>'
            '<th class="n">±</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>" + inclusive)


def _breakdown_table(entry: FunctionEntry) -> str:
    r = entry.report
    total = sum(b.cu for b in r.breakdown if b.known) or 0.0
    parts = sorted(r.breakdown, key=lambda b: (-b.cu, b.cls))
    rows = []
    for b in parts[:BREAKDOWN_ROWS]:
        share = b.cu / total if total > 0 and b.known else 0.0
        base = split(b.cls)[0]
        rows.append(f'<tr><td><code title="{escape(BASE_CLASSES.get(base, ""))}">{escape(_class_text(b.cls))}</code></td>'
                    f'<td class="n">{escape(si(b.count))}</td>'
                    f'<td class="n">{escape(si(b.cu)) if b.known else "unknown"}</td>'
                    f'<td class="n">{escape(si(b.energy_joules, "J")) if b.known else "unknown"}</td>'
                    f'<td style="min-width:120px"><div class="bar" style="width:{100 * share:.1f}%"></div></td>'
                    f'<td class="n">{share:.0%}</td></tr>')
    more = (f'<p class="note">{len(parts) - BREAKDOWN_ROWS} more classes, together '
            f'{escape(si(sum(b.cu for b in parts[BREAKDOWN_ROWS:])))} CU.</p>') if len(parts) > BREAKDOWN_ROWS else ""
    per_text = " per thread" if per(r) == "thread" else ""
    return (f'<table class="breakdown"><thead><tr><th>class</th><th class="n">executed{per_text}</th><th class="n">CU</th>'
            f'<th class="n">energy</th><th>share of CU</th><th class="n"></th></tr></thead><tbody>{"".join(rows)}'
            f'</tbody></table>{more}')


def _detail(entry: FunctionEntry, summary: Summary) -> str:
    r = entry.report
    fn = r.counted
    at = summary.context.options.for_function(fn.inferred_sizes)
    curve = cost_curve(r.cost_expression, at.parameter_value)
    band = (r.metrics_band.low.cu, r.metrics_band.high.cu) if r.metrics_band is not None else None
    per_text = " per thread" if per(r) == "thread" else ""
    if curve is None:
        plot = f'<p class="note">Constant cost: {escape(si(r.metrics.cu))} CU{per_text} whatever the input size.</p>'
    else:
        plot = (cost_curve_svg(curve, r.metrics.cu, band, fn.display_name)
                + '<p class="note">The cost expression from 1/100 to 100 times the evaluation point '
                  '(red: the reported figure and its band).</p>')
    findings = "".join(f'<li><span class="kind">{escape(f.kind)}</span> line {f.line or "?"}: {escape(f.message)}. '
                       f'<i>Fix:</i> {escape(f.recommendation)}</li>' for f in r.findings)
    assumptions = "".join(f"<li>{escape(a)}</li>" for a in r.assumptions)
    return (
        f'<details class="fn" id="fn-{entry.index}"><summary>{_grade(r.grade)} {escape(fn.display_name)} '
        f'<span class="meta">— <code>{escape(_where(entry))}</code> · {escape(si(r.metrics.cu))} CU{per_text} · '
        f'{escape(r.big_o)}</span></summary>'
        f'<p>Score {r.score:.1f} ({escape(r.rating)}), graded by {escape(r.graded_by)}. Cost expression: '
        f'<code>{escape(r.cost_expression.format())}</code> CU{per_text}.</p>'
        f'<div class="cols"><div><h3>Metrics and their bands</h3>{_metrics_table(entry)}'
        f'<h3>Cost against input size</h3>{plot}</div>'
        f'<div><h3>Class breakdown</h3>{_breakdown_table(entry)}</div></div>'
        + (f"<h3>Findings</h3><ul>{findings}</ul>" if findings else "")
        + (f"<h3>Assumptions</h3><ul>{assumptions}</ul>" if assumptions else "")
        + "</details>")


def html_report(summary: Summary) -> str:
    context = summary.context
    settings = context.settings
    scoring = settings.scoring + (f" ({settings.normalization})" if settings.scoring == "cohort" else "")
    source = context.source or context.root
    title = f"ccls cost report — {source}"
    detailed = _detailed(summary)
    details = "".join(_detail(e, summary) for e in sorted(summary.functions, key=lambda e: e.index) if e.index in detailed)
    costliest = "".join(f'<li><a href="#fn-{k}">{escape(summary.functions[k].report.counted.display_name)}</a> '
                        f'<code>{escape(_where(summary.functions[k]))}</code>: {escape(si(summary.functions[k].report.metrics.cu))} '
                        f'CU{" per thread" if per(summary.functions[k].report) == "thread" else ""}</li>'
                        for k in summary.costliest)
    errors = "".join(f'<li><code>{escape(e.file)}{f":{e.line}" if e.line else ""}</code>: '
                     f'{escape((e.message.splitlines() or [""])[0])}</li>' for e in summary.errors)
    more = (f'<p class="note">Details for the {len(detailed)} costliest of {len(summary.functions)} functions.</p>'
            if len(detailed) < len(summary.functions) else "")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)}</title><style>{_CSS}</style></head><body>'
        f'<header><h1>ccls cost report</h1><p class="meta">{escape(source)}'
        + (f' at <code>{escape(context.revision[:12])}</code>' if context.revision else "")
        + f' · profile {escape(settings.profile)} · region {escape(settings.region)} · arch {escape(context.arch)} · '
          f'scoring {escape(scoring)} · tables {escape(context.table_version)}'
        + (f' · ccls {escape(context.tool_version)}' if context.tool_version else "") + '</p></header>'
        f'<section id="summary"><h2>Summary</h2>{_totals_cards(summary.repository, len(summary.files))}'
        f'{_distribution(summary.repository)}'
        + (f'<h3>Costliest functions</h3><ol>{costliest}</ol>' if costliest else "")
        + f'{_findings_by_kind(summary)}</section>'
        f'<section id="functions"><h2>Functions</h2>{_functions_table(summary, detailed)}</section>'
        f'<section id="hierarchy"><h2>Folders and files</h2>{_hierarchy(summary)}</section>'
        f'<section id="sensitivity"><h2>Profile sensitivity (the paper\'s Fig. 9)</h2>{_sensitivity(summary)}</section>'
        + (f'<section id="errors"><h2>Files not analysed</h2><ul>{errors}</ul></section>' if errors else "")
        + f'<section id="details"><h2>Functions in detail</h2>{more}{details}</section>'
        f'<footer class="note"><p>CU ≈ core cycles; figures are for one call (GPU code: one thread), at the '
        f'parameter values the assumptions name. Generated by ccls; this file fetches nothing.</p></footer>'
        f'<script>{_SCRIPT}</script></body></html>')
