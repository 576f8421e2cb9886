"""Repository reports: the hierarchical summary (per function, file, folder, repository) and its
SARIF 2.1.0, HTML and Markdown forms. Formatters return strings; only the CLI writes."""
from __future__ import annotations

from ccls.reports.html import html_report
from ccls.reports.markdown import markdown_report
from ccls.reports.sarif import sarif_report
from ccls.reports.summary import ReportContext, Summary, summarize

FORMATTERS = {"sarif": sarif_report, "html": html_report, "markdown": markdown_report}

__all__ = ["FORMATTERS", "ReportContext", "Summary", "summarize", "html_report", "markdown_report", "sarif_report"]
