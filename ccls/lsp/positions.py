"""Position conversion between tree-sitter (UTF-8 byte columns) and LSP position encodings.

LSP positions are (line, character) where "character" counts code units of the negotiated
encoding: "utf-8" bytes, "utf-16" code units (the default) or "utf-32" code points. Tree-sitter
reports UTF-8 byte columns. Lines end at "\\n", "\\r\\n" or a lone "\\r", as LSP says; tree-sitter
counts "\\n" only, so the document model parses (and compiles) its text with every lone "\\r"
made "\\n" (`lone_cr_as_lf`: same bytes, same offsets, and rows that are these lines; C, C++
and Python compilers take a lone "\\r" for a line break too). Documents may contain lone
surrogates (a client's rendering of undecodable bytes); they are encoded with "surrogatepass"
so every string has a byte form and conversions never raise.
"""
from __future__ import annotations

import re

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LONE_CR = re.compile(rb"\r(?!\n)")


def to_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def has_lone_cr(data: bytes) -> bool:
    return b"\r" in data and _LONE_CR.search(data) is not None


def lone_cr_as_lf(data: bytes) -> bytes:
    """The same bytes with each lone "\\r" (a line break for LSP) made "\\n"."""
    return _LONE_CR.sub(b"\n", data) if has_lone_cr(data) else data


def _units(segment: str, encoding: str) -> int:
    if segment.isascii() or encoding == UTF32:
        return len(segment)
    if encoding == UTF8:
        return len(to_bytes(segment))
    return len(segment.encode("utf-16-le", "surrogatepass")) // 2


class LineIndex:
    """Lines of one document version, for converting columns between encodings."""

    def __init__(self, text: str):
        self.text = text
        if "\r" in text:
            self.lines = _LINE_BREAK.split(text)
            self._break_bytes: list[int] | None = [len(m.group()) for m in _LINE_BREAK.finditer(text)]
        else:
            self.lines = text.split("\n")
            self._break_bytes = None  # every break is one "\n"
        self._byte_starts: list[int] | None = None

    def line(self, row: int) -> str:
        return self.lines[row] if 0 <= row < len(self.lines) else ""

    def byte_col_to_character(self, row: int, byte_col: int, encoding: str) -> int:
        line = self.line(row)
        if line.isascii():
            return min(byte_col, len(line))
        raw = to_bytes(line)[:max(0, byte_col)]
        if encoding == UTF8:
            return len(raw)
        # A column inside a multi-byte character rounds down to that character's start.
        prefix = raw.decode("utf-8", "surrogatepass") if _complete(raw) else _trim_decode(raw)
        return _units(prefix, encoding)

    def character_to_byte_col(self, row: int, character: int, encoding: str) -> int:
        line = self.line(row)
        if line.isascii():
            return min(max(0, character), len(line))
        if encoding == UTF8:
            return min(max(0, character), len(to_bytes(line)))
        if encoding == UTF32:
            return len(to_bytes(line[:max(0, character)]))
        units = 0
        for index, char in enumerate(line):
            if units >= character:
                return len(to_bytes(line[:index]))
            units += 2 if ord(char) > 0xFFFF else 1
        return len(to_bytes(line))

    def byte_starts(self) -> list[int]:
        """Byte offset at which each line starts."""
        if self._byte_starts is None:
            starts, offset = [], 0
            breaks = self._break_bytes
            for row, line in enumerate(self.lines):
                starts.append(offset)
                offset += (len(line) if line.isascii() else len(to_bytes(line))) + \
                    (breaks[row] if breaks is not None and row < len(breaks) else 1)
            self._byte_starts = starts
        return self._byte_starts

    def byte_offset(self, row: int, byte_col: int) -> int:
        starts = self.byte_starts()
        if row >= len(starts):
            return starts[-1] + len(to_bytes(self.lines[-1]))
        return starts[max(0, row)] + byte_col

    def lsp_to_offset(self, row: int, character: int, encoding: str) -> tuple[int, int, int]:
        """(byte offset, row, byte column) of an LSP position, clamped into the document."""
        if row >= len(self.lines):
            row = len(self.lines) - 1
            character = 1 << 30
        row = max(0, row)
        col = self.character_to_byte_col(row, character, encoding)
        return self.byte_offset(row, col), row, col

    def end_point(self) -> tuple[int, int]:
        """(row, byte column) of the end of the text."""
        return len(self.lines) - 1, len(to_bytes(self.lines[-1]))


def _complete(raw: bytes) -> bool:
    try:
        raw.decode("utf-8", "surrogatepass")
        return True
    except UnicodeDecodeError:
        return False


def _trim_decode(raw: bytes) -> str:
    for cut in range(1, 4):
        try:
            return raw[:-cut].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            continue
    return raw.decode("utf-8", "replace")
