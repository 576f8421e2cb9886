"""Where reported functions are in a document's current text: placed by text hash (memoised
per version), and the innermost one at a position."""
from __future__ import annotations

from ccls.lsp.convert import Placed
from ccls.lsp.documents import DocumentModel
from ccls.lsp.placement import DocResult, innermost_at, placed
from ccls.lsp.positions import UTF16


def _placed(key: str, start_row: int, end_row: int, hint: tuple[int, int]) -> Placed:
    return Placed(key, start_row, end_row, start_row, 0, hint[0], hint[1], ())


def test_functions_are_placed_by_text_hash_and_follow_edits():
    model = DocumentModel("file:///t.c", "/t.c", "c", "int f(int a) {\n  return a;\n}\nint g(void) { return 1; }\n", 1)
    _, g = model.functions()
    result = DocResult(1, None, {g.text_hash: ("report of g",)}, False, [])
    first = placed(model, result)
    assert [(p.key, p.start_row, p.end_row, p.reports) for p in first] == [(g.text_hash, 3, 3, ("report of g",))]
    assert placed(model, result) is first  # the same text: the memo
    model.apply_change((0, 0), (0, 0), "\n", UTF16)
    model.version = 2
    assert [p.start_row for p in placed(model, result)] == [4]  # moved with its text, its report kept


def test_the_innermost_function_at_a_position_wins():
    outer, inner = _placed("outer", 0, 20, (0, 15)), _placed("inner", 5, 8, (5, 12))
    assert innermost_at([outer, inner], 6, 0, signature_only=False) is inner
    assert innermost_at([outer, inner], 12, 0, signature_only=False) is outer
    assert innermost_at([outer, inner], 30, 0, signature_only=False) is None


def test_signature_only_ends_at_the_parameter_list():
    fn = _placed("f", 3, 9, (3, 14))
    assert innermost_at([fn], 3, 14, signature_only=True) is fn
    assert innermost_at([fn], 3, 15, signature_only=True) is None
    assert innermost_at([fn], 4, 0, signature_only=True) is None
