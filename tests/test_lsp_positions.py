"""Positions: columns in UTF-8, UTF-16 and UTF-32, lone surrogates, and each line ending (CR,
LF, CRLF) on the protocol's lines."""
from __future__ import annotations

from ccls.lsp.positions import UTF8, UTF16, UTF32, LineIndex


def test_columns_in_each_encoding():
    # "é" is 2 UTF-8 bytes / 1 UTF-16 unit; "𝄞" is 4 bytes / 2 units / 1 code point.
    index = LineIndex("int x; // é𝄞\nint f(int é𝄞y) {}\n")
    line = index.line(1)
    byte_col = len(line[:line.index("y")].encode("utf-8"))
    assert index.byte_col_to_character(1, byte_col, UTF8) == byte_col
    assert index.byte_col_to_character(1, byte_col, UTF16) == line.index("y") + 1
    assert index.byte_col_to_character(1, byte_col, UTF32) == line.index("y")
    for encoding in (UTF8, UTF16, UTF32):
        character = index.byte_col_to_character(1, byte_col, encoding)
        assert index.character_to_byte_col(1, character, encoding) == byte_col
    assert index.byte_col_to_character(0, 3, UTF16) == 3  # ASCII fast path
    assert index.lsp_to_offset(99, 0, UTF16)[0] == len(index.text.encode())  # clamped to the end


def test_lone_surrogates_do_not_break_conversion():
    index = LineIndex("a\udcff\ud800b")
    assert index.character_to_byte_col(0, 3, UTF16) == 7
    assert index.byte_col_to_character(0, 7, UTF16) == 3


def test_lone_cr_lf_and_crlf_each_end_a_line():
    index = LineIndex("a\rbé\r\nc\nd")
    assert index.lines == ["a", "bé", "c", "d"]
    assert index.byte_starts() == [0, 2, 7, 9]
    assert index.lsp_to_offset(1, 9, UTF16) == (5, 1, 3)  # clamped before the "\r\n"
    assert index.lsp_to_offset(2, 1, UTF16) == (8, 2, 1)
    assert index.end_point() == (3, 1)
