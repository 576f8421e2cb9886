"""Where a document's reported functions are in its current text: the last result published
for a document (`DocResult`), its functions placed as `Placed` records (memoised per text
version), and the innermost one at a position."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ccls.lsp.convert import Placed
from ccls.lsp.documents import DocumentModel, definition_rows
from ccls.model import AnalysisError
from ccls.service.counts import Outcome
from ccls.service.reports import UnitReports


@dataclass
class DocResult:
    """The last analysis published for a document."""

    version: int
    outcome: Outcome
    reports: UnitReports  # unit key -> FunctionReports, most costly first
    file_mode: bool
    errors: list[AnalysisError]
    placed_memo: tuple[Any, list[Placed]] | None = None


def doc_result(outcome: Outcome, reports: UnitReports) -> DocResult:
    return DocResult(outcome.snapshot.version, outcome, reports, outcome.snapshot.functions is None, outcome.errors)


def placed(model: DocumentModel, result: DocResult) -> list[Placed]:
    """The functions of `result` that are in `model`'s current text, where they are; by text
    hash for parsed sources, by definition line for IR/PTX listings (whole-file mode, only
    while the text is the one analysed)."""
    memo_key = (model.version, id(model.data))
    if result.placed_memo is not None and result.placed_memo[0] == memo_key:
        return result.placed_memo[1]
    found: list[Placed] = []
    if result.file_mode:
        if model.version == result.version:
            index = model.index
            for key, reports in result.reports.items():
                rows = definition_rows(index.lines, model.language, reports[0].counted)
                if rows is None:
                    continue
                row, end_row = rows
                col = len(index.line(row).encode("utf-8", "surrogatepass"))
                found.append(Placed(key, row, end_row, row, 0, row, col, reports))
    else:
        for fn in model.functions() or ():
            reports = result.reports.get(fn.text_hash)
            if reports:
                found.append(Placed(fn.text_hash, fn.start_line - 1, fn.end_line - 1, fn.name_start[0],
                                    fn.name_start[1], fn.signature_end[0], fn.signature_end[1], reports))
    result.placed_memo = (memo_key, found)
    return found


def innermost_at(placed: Sequence[Placed], line: int, col: int, signature_only: bool) -> Placed | None:
    """The shortest function containing (line, UTF-8 byte column): anywhere in its definition,
    or with `signature_only` between its first row and the end of its parameter list."""
    best = None
    for item in placed:
        if signature_only:
            inside = (item.start_row, 0) <= (line, col) <= (item.hint_row, item.hint_col)
        else:
            inside = item.start_row <= line <= item.end_row
        if inside and (best is None or best.end_row - best.start_row > item.end_row - item.start_row):
            best = item
    return best
