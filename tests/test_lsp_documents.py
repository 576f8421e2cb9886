"""Open documents: edits applied in any position encoding, parsed incrementally to the same
functions as a fresh parse, and lone-CR buffers read on the protocol's lines."""
from __future__ import annotations

import random

from ccls import source_map
from ccls.lsp.documents import DocumentModel
from ccls.lsp.positions import UTF8, UTF16


C_TEXT = """#include <math.h>
/* é — ünïcode comment */
static double sq(double x) { return x * x; }
double norm(const double *v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += sq(v[i]);
    return sqrt(s);
}
int main(void) { double v[3] = {1, 2, 3}; return (int) norm(v, 3); }
"""


def _utf16_position(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    line = before.count("\n")
    column_text = before[before.rfind("\n") + 1:]
    return line, len(column_text.encode("utf-16-le")) // 2


def test_incremental_edits_match_a_fresh_parse():
    rng = random.Random(7)
    text = C_TEXT
    model = DocumentModel("file:///t.c", "/t.c", "c", text, 1)
    assert [f.name for f in model.functions()] == ["sq", "norm", "main"]
    alphabet = ["x", " ", "\n", "é", "𝄞", "{", "}", ";", "int y = 1;", ""]
    for step in range(150):
        start = rng.randrange(len(text) + 1)
        end = min(len(text), start + rng.randrange(4))
        new = rng.choice(alphabet)
        model.apply_change(_utf16_position(text, start), _utf16_position(text, end), new, UTF16)
        text = text[:start] + new + text[end:]
        assert model.text == text
        if step % 10 == 0:
            incremental = model.functions()
            fresh = source_map.functions_in(source_map.parse(text.encode(), "c"), text.encode(), "c")
            assert [(f.name, f.start_byte, f.end_byte, f.text_hash) for f in incremental] == \
                [(f.name, f.start_byte, f.end_byte, f.text_hash) for f in fresh]


def test_utf8_positions_apply_to_bytes():
    model = DocumentModel("file:///t.c", "/t.c", "c", "// é\nint f(void) { return 0; }\n", 1)
    model.functions()
    model.apply_change((0, 3), (0, 5), "e", UTF8)  # replace the two bytes of "é"
    assert model.text.startswith("// e\n")
    assert [f.name for f in model.functions()] == ["f"]


def test_lone_cr_documents_parse_on_lsp_lines():
    model = DocumentModel("file:///w/a.c", "/w/a.c", "c",
                          "int f(int a)\r{\r  return a / 3;\r}\rint g(void) { return 1; }\r", 1)
    assert [(f.name, f.start_line, f.end_line, f.name_start) for f in model.functions()] == \
        [("f", 1, 4, (0, 4)), ("g", 5, 5, (4, 4))]
    model.apply_change((4, 5), (4, 5), "x", UTF16)
    assert model.text.endswith("}\rint gx(void) { return 1; }\r")  # the buffer keeps its "\r"s
    assert [(f.name, f.start_line, f.name_start) for f in model.functions()] == [("f", 1, (0, 4)), ("gx", 5, (4, 4))]
    snapshot = model.snapshot()  # what is compiled: the same lines, each ended by "\n"
    assert snapshot.text == "int f(int a)\n{\n  return a / 3;\n}\nint gx(void) { return 1; }\n"
    assert len(snapshot.data) == len(model.data)
