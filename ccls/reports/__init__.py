"""Repository reports: the hierarchical summary (per function, file, folder, repository) and its
SARIF 2.1.0, HTML and Markdown forms. Formatters return strings; only the CLI writes.

The formatters load on first use (`FORMATTERS`, `html_report`, …): `ccls analyze --format json`
needs only the summary, and the HTML report and its plots are a good part of a cold run's imports."""
from __future__ import annotations

from typing import Any

from ccls.reports.summary import ReportContext, Summary, summarize

__all__ = ["FORMATTERS", "ReportContext", "Summary", "summarize", "html_report", "markdown_report", "sarif_report"]


def __getattr__(name: str) -> Any:
    if name in ("FORMATTERS", "html_report", "markdown_report", "sarif_report"):
        from ccls.reports.html import html_report
        from ccls.reports.markdown import markdown_report
        from ccls.reports.sarif import sarif_report

        formatters = {"sarif": sarif_report, "html": html_report, "markdown": markdown_report}
        return formatters if name == "FORMATTERS" else formatters[name.removesuffix("_report")]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
