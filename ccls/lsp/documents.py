"""Open documents on the event loop: text and tree-sitter tree kept in step with LSP changes
(tree.edit + incremental reparse), handed to the service as immutable `Snapshot`s, and where a
function of an IR/PTX listing is defined (for placing its hints)."""
from __future__ import annotations

from typing import Any, Sequence

from ccls.frontends import language_named
from ccls.lsp.positions import LineIndex, has_lone_cr, lone_cr_as_lf, to_bytes
from ccls.model import CountedFunction
from ccls.service import units
from ccls.service.counts import Snapshot, parse_functions


class DocumentModel:
    """An open document's text and syntax tree, updated incrementally on the event loop."""

    def __init__(self, uri: str, path: str, language: str, text: str, version: int):
        self.uri, self.path, self.language = uri, path, language
        self.version = version
        self._set_text(text)
        self._tree: Any = None
        self._functions: tuple | None = None
        self._graph: dict[int, set[int]] | None = None
        self._parsed = False

    def _set_text(self, text: str) -> None:
        self.text = text
        self.data = to_bytes(text)
        self._index: LineIndex | None = None
        # What tree-sitter and the compilers see: rows that are LSP lines (see positions).
        self._analysed = lone_cr_as_lf(self.data)

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index

    def replace_all(self, text: str, version: int) -> None:
        self._set_text(text)
        self.version = version
        self._tree, self._functions, self._graph, self._parsed = None, None, None, False

    def apply_change(self, start: tuple[int, int] | None, end: tuple[int, int] | None, new_text: str,
                     encoding: str) -> None:
        """One LSP content change: range in the negotiated encoding, or None for the whole text."""
        if start is None or end is None:
            self.replace_all(new_text, self.version)
            return
        index = self.index
        start_byte, start_row, start_col = index.lsp_to_offset(start[0], start[1], encoding)
        end_byte, end_row, end_col = index.lsp_to_offset(end[0], end[1], encoding)
        if end_byte < start_byte:
            start_byte, end_byte, start_row, end_row, start_col, end_col = \
                end_byte, start_byte, end_row, start_row, end_col, start_col
        inserted = to_bytes(new_text)
        data = self.data[:start_byte] + inserted + self.data[end_byte:]
        new_rows = inserted.count(b"\n")
        new_end_col = (start_col + len(inserted)) if new_rows == 0 else len(inserted) - inserted.rfind(b"\n") - 1
        if self._analysed is not self.data or has_lone_cr(data):
            self._tree = None  # rows of an incremental edit would be tree-sitter's, not LSP lines
        if self._tree is not None:
            self._tree.edit(start_byte=start_byte, old_end_byte=end_byte, new_end_byte=start_byte + len(inserted),
                            start_point=(start_row, start_col), old_end_point=(end_row, end_col),
                            new_end_point=(start_row + new_rows, new_end_col))
        self._set_text(data.decode("utf-8", "surrogatepass"))
        self._functions, self._graph, self._parsed = None, None, False

    def functions(self) -> tuple | None:
        if not self._parsed:
            self._tree, self._functions = parse_functions(self._analysed, self.language, self._tree)
            self._parsed = True
        return self._functions

    def call_graph(self) -> dict[int, set[int]] | None:
        """Which functions each function names (`units.callees`), None in whole-file mode."""
        functions = self.functions()
        if self._graph is None and functions is not None:
            self._graph = units.callees(self._analysed, functions)
        return self._graph

    def snapshot(self) -> Snapshot:
        data = self._analysed
        text = self.text if data is self.data else data.decode("utf-8", "surrogatepass")
        return Snapshot(self.uri, self.path, self.language, self.version, text, data, self.functions(),
                        self.call_graph())



def definition_rows(lines: Sequence[str], language: str, cf: CountedFunction) -> tuple[int, int] | None:
    """0-based (first, last) rows of a function defined in an IR/PTX listing (its record's listing rules)."""
    return language_named(language).definition_rows(lines, cf.name, cf.line)
