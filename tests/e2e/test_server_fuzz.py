"""The server under 1,200 random edits of a real library-like C file (issue 17 §4): garbage
inserted, lines deleted, braces unbalanced, undecodable bytes, huge lines, sent in bursts without
waiting for analyses. Then the text is restored: the server must be alive and its hints must be
those of a fresh server analysing the same text. Seeded, so a failure replays."""
from __future__ import annotations

import random
from pathlib import Path

from lsprotocol import types

from tests.e2e.conftest import hints, hover, neovim_capabilities, open_doc, running_server, wait_published

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "textkit.c"
EDITS = 1200
BURST = 40  # edits sent back to back before the client asks the server something
SEED = 17

GARBAGE = ["}", "{", "{{{", "}}}", "(", ")", ";", "/*", "*/", "//", "\"", "'", "#define X(", "#include <nonexistent.h>\n",
           "int", "while (", "for (;;", "return", "->", "\\", "\n", "\t", "\x00", "\ufffd", "é", "日本", "🙂",
           "\udcff\udcfe", "\udc80", "template<", "__attribute__((", "#if 0\n", "#endif\n", "goto x;", "x:"]


def utf16_length(line: str) -> int:
    return len(line.encode("utf-16-le", "surrogatepass")) // 2


def utf16_to_index(line: str, units: int) -> int:
    """The index into `line` of a UTF-16 offset (LSP positions count UTF-16 units)."""
    count = 0
    for index, ch in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def apply(text: str, start: tuple[int, int], end: tuple[int, int], new: str) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def index(position: tuple[int, int]) -> int:
        row = min(position[0], len(lines) - 1)
        return offsets[row] + utf16_to_index(lines[row], position[1])
    return text[:index(start)] + new + text[index(end):]


def random_edit(rng: random.Random, text: str) -> tuple[tuple[int, int], tuple[int, int], str]:
    """A range (UTF-16 positions) and the text replacing it."""
    lines = text.split("\n")
    row = rng.randrange(len(lines))
    col = rng.randint(0, utf16_length(lines[row]))
    kind = rng.random()
    if kind < 0.40:  # garbage inserted
        return (row, col), (row, col), "".join(rng.choice(GARBAGE) for _ in range(rng.randint(1, 4)))
    if kind < 0.60 and len(lines) > 3:  # lines deleted
        last = min(len(lines) - 1, row + rng.randint(1, 3))
        return (row, 0), (last, 0), ""
    if kind < 0.75:  # a brace removed or doubled
        braces = [(r, c) for r, line in enumerate(lines) for c, ch in enumerate(line) if ch in "{}"]
        if braces:
            r, c = rng.choice(braces)
            units = utf16_length(lines[r][:c])
            return (r, units), (r, units + 1), rng.choice(["", "{}", "}}", "{{"])
    if kind < 0.85:  # undecodable bytes, as an editor passes them (lone surrogates)
        return (row, col), (row, col), bytes(rng.randrange(0x80, 0x100) for _ in range(rng.randint(1, 6))).decode(
            "utf-8", "surrogateescape")
    if kind < 0.90:  # a huge line
        return (row, col), (row, col), "x" * rng.randint(5_000, 60_000) + ("\n" if rng.random() < 0.5 else "")
    # a span replaced by a piece of the file from elsewhere (copy and paste)
    other = rng.randrange(len(lines))
    return (row, col), (row, col), lines[other] + "\n"


def hint_view(found: list[types.InlayHint]) -> list[tuple[int, int, str]]:
    return sorted((h.position.line, h.position.character,
                   h.label if isinstance(h.label, str) else "".join(part.value for part in h.label)) for h in found)


async def test_a_thousand_random_edits_then_the_original_text_gives_a_fresh_analysiss_hints(workspace, tmp_path):
    original = FIXTURE.read_text()
    path = workspace / "textkit.c"
    path.write_text(original)
    rng = random.Random(SEED)
    async with running_server(workspace, tmp_path / "cache-fuzzed", neovim_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        text, version = original, 1
        for burst in range(EDITS // BURST):
            changes = []
            for _ in range(BURST):
                start, end, new = random_edit(rng, text)
                text = apply(text, start, end, new)
                changes.append(types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=new))
            version += 1
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=changes))
            if burst % 5 == 4:  # the server still answers, whatever state its buffer is in
                line = rng.randrange(len(text.split("\n")))
                await hover(client, uri, line, 0)
        # the original text again, as one whole-document change
        version += 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=original)]))
        restored = await wait_published(client, uri, version)
        assert not [d for d in restored.diagnostics if d.code == "compile-error"]
        after_fuzz = hint_view(await hints(client, uri))
        shown = await hover(client, uri, 26, 8)  # inside tk_length's body
        assert shown is not None and "tk_length" in shown.contents.value
    async with running_server(workspace, tmp_path / "cache-fresh", neovim_capabilities()) as fresh:
        fresh_uri = open_doc(fresh, path)
        await wait_published(fresh, fresh_uri, 1)
        assert after_fuzz == hint_view(await hints(fresh, fresh_uri))
    assert len(after_fuzz) == original.count("\n{\n") and after_fuzz
