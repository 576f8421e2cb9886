"""Engine results → LSP protocol objects. Pure functions named `lsp_*` (no I/O, no server)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from lsprotocol import types

from ccls.lsp.positions import LineIndex
from ccls.model import AnalysisError

SOURCE = "ccls"
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@dataclass(frozen=True)
class Placed:
    """One source function as the editor sees it now, with its reports (most costly first)."""

    key: str  # the function's text hash (or "<file>:<name>" in whole-file mode)
    start_row: int  # 0-based rows of the whole definition
    end_row: int
    name_row: int
    name_col: int  # UTF-8 byte column
    hint_row: int  # where the inlay hint goes: after the parameter list
    hint_col: int
    reports: tuple  # FunctionReport, most costly first


def lsp_position(index: LineIndex, row: int, byte_col: int, encoding: str) -> types.Position:
    return types.Position(line=row, character=index.byte_col_to_character(row, byte_col, encoding))


def lsp_line_range(index: LineIndex, row: int, encoding: str) -> types.Range:
    """The visible text of a line (first non-blank character to its end)."""
    line = index.line(row)
    stripped = len(line) - len(line.lstrip())
    start_byte = len(line[:stripped].encode("utf-8", "surrogatepass"))
    end_byte = len(line.encode("utf-8", "surrogatepass"))
    if end_byte == start_byte:
        start_byte = 0
    return types.Range(start=lsp_position(index, row, start_byte, encoding),
                       end=lsp_position(index, row, end_byte, encoding))


def lsp_inlay_hint(index: LineIndex, placed: Placed, label: str, encoding: str, data: Any,
                   tooltip: str | None) -> types.InlayHint:
    return types.InlayHint(
        position=lsp_position(index, placed.hint_row, placed.hint_col, encoding),
        label=label,
        padding_left=True,
        tooltip=types.MarkupContent(kind=types.MarkupKind.Markdown, value=tooltip) if tooltip else None,
        data=data,
    )


def lsp_hover(index: LineIndex, placed: Placed, markdown: str, encoding: str) -> types.Hover:
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
        range=types.Range(start=lsp_position(index, placed.name_row, placed.name_col, encoding),
                          end=lsp_position(index, placed.hint_row, placed.hint_col, encoding)),
    )


def lsp_code_lens(index: LineIndex, placed: Placed, title: str, uri: str, encoding: str) -> types.CodeLens:
    position = lsp_position(index, placed.name_row, placed.name_col, encoding)
    return types.CodeLens(
        range=types.Range(start=position, end=position),
        command=types.Command(title=title, command="ccls.explainFunction",
                              arguments=[uri, {"line": position.line, "character": position.character}]),
    )


def lsp_finding_diagnostic(index: LineIndex, line: int | None, kind: str, message: str, recommendation: str,
                           severity: str, fallback_row: int, encoding: str) -> types.Diagnostic:
    row = line - 1 if line else fallback_row
    text = f"{message}. {recommendation}" if recommendation else message
    return types.Diagnostic(range=lsp_line_range(index, row, encoding), message=text,
                            severity=_SEVERITY.get(severity, types.DiagnosticSeverity.Information),
                            code=kind, source=SOURCE)


def lsp_error_diagnostic(index: LineIndex, error: AnalysisError, encoding: str) -> types.Diagnostic:
    row = error.line - 1 if error.line and error.line - 1 < len(index.lines) else 0
    return types.Diagnostic(range=lsp_line_range(index, row, encoding), message=error.message,
                            severity=types.DiagnosticSeverity.Error, code="compile-error", source=SOURCE)


def lsp_diagnostics(index: LineIndex, placed: Sequence[Placed], errors: Sequence[AnalysisError],
                    severity_for: Any, min_share: float, encoding: str) -> list[types.Diagnostic]:
    """Compile errors plus every finding above `min_share` whose severity is not "off"."""
    out = [lsp_error_diagnostic(index, e, encoding) for e in errors]
    seen: set[tuple[int | None, str, str]] = set()
    for item in placed:
        for report in item.reports:
            for finding in report.findings:
                severity = severity_for(finding.kind)
                if severity == "off":
                    continue
                if finding.share_of_cu is not None and finding.share_of_cu < min_share:
                    continue
                identity = (finding.line, finding.kind, finding.message)
                if identity in seen:  # template instantiations repeat the same finding
                    continue
                seen.add(identity)
                out.append(lsp_finding_diagnostic(index, finding.line, finding.kind, finding.message,
                                                  finding.recommendation, severity, item.name_row, encoding))
    return out
