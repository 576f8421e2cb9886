"""The summary → a compact Markdown report for a pull-request comment: one summary line, the
costliest functions, the findings, and the folders and files folded away. Pure."""
from __future__ import annotations

from ccls.render import per, si, usd
from ccls.reports.summary import Summary, Totals

TOP_FUNCTIONS = 10
TOP_FINDINGS = 20
TREE_ROWS = 60  # folder/file rows; beyond, folders only (a PR comment holds at most 65,536 characters)


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|")


def where(path: str, line: int | None) -> str:
    return f"`{cell(path)}:{line}`" if line else f"`{cell(path)}`"


def totals_line(t: Totals, files: int) -> str:
    """One line: how many functions in how many files, their summed cost, grades, findings and errors."""
    parts = [f"**{t.functions} function{'s' if t.functions != 1 else ''}** in {files} file{'s' if files != 1 else ''}"]
    calls = t.functions - t.thread_functions
    if calls:
        parts.append(f"{si(t.per_call.cu)} CU · {si(t.per_call.energy_joules, 'J')} · "
                     f"{si(t.per_call.co2_kg * 1000, 'g')} CO2e · {usd(t.per_call.usd)} for one call each")
    if t.thread_functions:
        parts.append(f"{si(t.per_thread.cu)} CU for one thread of each of {t.thread_functions} GPU function"
                     f"{'s' if t.thread_functions != 1 else ''}")
    if t.grades:
        parts.append("grades " + " ".join(f"{g} {n}" for g, n in t.grades.items()))
    findings = sum(t.findings.values())
    parts.append(f"**{findings} finding{'s' if findings != 1 else ''}**"
                 + (" (" + ", ".join(f"{n} {kind}" for kind, n in t.findings.items()) + ")" if findings else ""))
    parts.append(f"{t.errors} file error{'s' if t.errors != 1 else ''}")
    return " · ".join(parts)


def markdown_report(summary: Summary) -> str:
    context = summary.context
    settings = context.settings
    scoring = settings.scoring + (f" ({settings.normalization})" if settings.scoring == "cohort" else "")
    source = f" of `{cell(context.source)}`" + (f" at `{context.revision[:12]}`" if context.revision else "") \
        if context.source else ""
    out = [f"### ccls cost report{source}", "",
           totals_line(summary.repository, len(summary.files)),
           "", f"<sub>profile {settings.profile} · region {settings.region} · arch {context.arch} · scoring {scoring} · "
               f"tables {context.table_version}</sub>"]
    if summary.costliest:
        shown = summary.costliest[:TOP_FUNCTIONS]
        out += ["", f"**Costliest functions** ({len(shown)} of {len(summary.functions)})", "",
                "| function | where | CU | EU | CO2 | $ | grade | Big-O | findings |",
                "|---|---|--:|--:|--:|--:|:-:|---|---|"]
        for k in shown:
            entry = summary.functions[k]
            r = entry.report
            mark = " /thread" if per(r) == "thread" else ""
            kinds = ", ".join(sorted({f.kind for f in r.findings}))
            out.append(f"| `{cell(r.counted.display_name)}` | {where(entry.path, r.counted.line)} | {si(r.metrics.cu)}{mark} | "
                       f"{si(r.metrics.energy_joules, 'J')} | {si(r.metrics.co2_kg * 1000, 'g')} | {usd(r.metrics.usd)} | "
                       f"{r.grade} | {cell(r.big_o)} | {cell(kinds)} |")
    all_findings = [e for entries in summary.findings.values() for e in entries]
    if all_findings:
        all_findings.sort(key=lambda e: (-(e.finding.share_of_cu or 0.0), e.function))
        out += ["", f"**Findings** ({len(all_findings)})", "", "| kind | where | function | share of CU | what |",
                "|---|---|---|--:|---|"]
        for e in all_findings[:TOP_FINDINGS]:
            entry = summary.functions[e.function]
            share = f"{e.finding.share_of_cu:.0%}" if e.finding.share_of_cu is not None else ""
            out.append(f"| {e.finding.kind} | {where(entry.path, e.finding.line)} | `{cell(entry.report.counted.display_name)}` | "
                       f"{share} | {cell(e.finding.message)} |")
        if len(all_findings) > TOP_FINDINGS:
            out.append(f"\n…and {len(all_findings) - TOP_FINDINGS} more.")
    if summary.errors:
        out += ["", f"**Files not analysed** ({len(summary.errors)})", ""]
        for e in summary.errors[:TOP_FINDINGS]:
            first = e.message.splitlines()[0] if e.message else "could not be analysed"
            out.append(f"- {where(e.file, e.line)}: {cell(first)}")
        if len(summary.errors) > TOP_FINDINGS:
            out.append(f"- …and {len(summary.errors) - TOP_FINDINGS} more.")
    if summary.files:
        out += ["", "<details><summary>Folders and files</summary>", "",
                "| folder / file | functions | CU (one call each) | EU | grades | findings | errors |",
                "|---|--:|--:|--:|---|--:|--:|"]
        nodes = sorted(summary.folders + summary.files, key=lambda n: (n.path != ".", n.path.split("/")))
        left_out = ""
        if len(nodes) > TREE_ROWS:
            nodes = [n for n in nodes if n.kind == "folder"]
            left_out = f"{len(summary.files)} files not listed: their folders' totals include them"
            if len(nodes) > TREE_ROWS:
                left_out = f"{len(summary.files)} files and {len(nodes) - TREE_ROWS} folders not listed (the deepest)"
                nodes = sorted(nodes, key=lambda n: (n.path.count("/") if n.path != "." else -1, n.path))[:TREE_ROWS]
                nodes.sort(key=lambda n: (n.path != ".", n.path.split("/")))
        for n in nodes:
            t = n.totals
            name = f"**{cell(n.path)}/**" if n.kind == "folder" else f"`{cell(n.path)}`"
            calls = t.functions > t.thread_functions
            gpu = f"{'; ' if calls else ''}{si(t.per_thread.cu)} per GPU thread" if t.thread_functions else ""
            out.append(f"| {name} | {t.functions} | {si(t.per_call.cu) if calls else ''}{gpu} | "
                       f"{si(t.per_call.energy_joules, 'J') if calls else ''} | "
                       f"{' '.join(f'{g} {c}' for g, c in t.grades.items())} | {sum(t.findings.values())} | {t.errors} |")
        out += ([f"\n{left_out}."] if left_out else []) + ["", "</details>"]
    return "\n".join(out)
