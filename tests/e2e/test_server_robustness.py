"""The server under abuse: broken code, a compile that hangs, edit bursts, undecodable bytes,
files vanishing, files it does not handle — and it never writes into the workspace."""
from __future__ import annotations

import asyncio
import hashlib
import os
import random
import shutil
import time
from pathlib import Path

from lsprotocol import types

from ccls import source_map
from tests.e2e.conftest import (change, hints, hover, neovim_capabilities, open_doc, running_server, stats,
                                vscode_capabilities, wait_published)
from tests.e2e.test_server_incremental import generated_c


def tree_digest(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            out[str(path.relative_to(root))] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return out


def utf16_hint_positions(text: str) -> list[tuple[int, int]]:
    """Expected hint positions (after each parameter list) in UTF-16 units, from tree-sitter."""
    data = text.encode("utf-8", "surrogatepass")
    lines = data.split(b"\n")
    out = []
    for fn in source_map.functions_in(source_map.parse(data, "c"), data, "c"):
        row, col = fn.signature_end
        prefix = lines[row][:col].decode("utf-8", "surrogatepass")
        out.append((row, len(prefix.encode("utf-16-le", "surrogatepass")) // 2))
    return sorted(out)


async def test_compile_error_is_one_diagnostic_with_the_compilers_words(workspace, cache_dir):
    path = workspace / "broken.c"
    path.write_text("int ok(int n) { return n + 1; }\n\nint bad(int n) { return n +; }\n")
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        published = await wait_published(client, uri, 1)
        errors = [d for d in published.diagnostics if d.code == "compile-error"]
        assert len(errors) == 1
        assert errors[0].range.start.line == 2 and errors[0].severity == types.DiagnosticSeverity.Error
        assert "error: expected expression" in errors[0].message
        # Fixing it clears the error and brings hints.
        change(client, uri, 2, (2, 27), (2, 28), "1;")
        fixed = await wait_published(client, uri, 2)
        assert not [d for d in fixed.diagnostics if d.code == "compile-error"]
        assert len(await hints(client, uri)) == 2


async def test_a_hanging_compile_times_out_and_the_server_stays_responsive(workspace, cache_dir):
    fast = workspace / "fast.c"
    fast.write_text(generated_c(3))
    slow = workspace / "slow.cpp"
    slow.write_text("constexpr long spin(long n) { long s = 0; for (long i = 0; i < n; i++) s += i % 7; return s; }\n"
                    "static_assert(spin(2000000000L) > 0, \"slow on purpose\");\n"
                    "int main() { return 0; }\n")
    options = {"compile": {"timeoutSeconds": 3, "extraFlags": ["-fconstexpr-steps=2147483647"]},
               "workspace": {"backgroundAnalysis": False}}
    async with running_server(workspace, cache_dir, vscode_capabilities(), initialization_options=options) as client:
        fast_uri = open_doc(client, fast)
        await wait_published(client, fast_uri, 1)
        slow_uri = open_doc(client, slow, language_id="cpp")
        await asyncio.sleep(0.5)  # the slow compile is running now
        for _ in range(5):
            started = time.monotonic()
            shown = await hover(client, fast_uri, 3, 6)
            assert time.monotonic() - started < 0.5
            assert shown is not None and "f0" in shown.contents.value
        published = await wait_published(client, slow_uri, 1, timeout_s=60)
        errors = [d for d in published.diagnostics if d.code == "compile-error"]
        assert len(errors) == 1 and "timed out after 3 s" in errors[0].message
        assert (await stats(client))["compiles"] == 2


async def test_a_burst_of_200_edits_ends_with_hints_for_the_final_text(workspace, cache_dir, tmp_path):
    text = generated_c(10)
    path = workspace / "burst.c"
    path.write_text(text)
    before = tree_digest(workspace)
    rng = random.Random(3)
    async with running_server(workspace, cache_dir, neovim_capabilities()) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        version = 1
        for step in range(200):
            version += 1
            lines = text.split("\n")
            candidates = [i for i, line in enumerate(lines) if "s ^= k;" in line]
            row = rng.choice(candidates)
            col = lines[row].index("s ^= k;") + len("s ^= k;")  # after the loop: always valid C
            new = rng.choice([" s += 2;", " s *= 3;", " s -= 1;"])
            if step % 50 == 49:  # now and then a new function appears
                row, col, new = len(lines) - 1, 0, f"long extra{step}(long x) {{ return x * {step}; }}\n"
            change(client, uri, version, (row, col), (row, col), new)
            lines[row] = lines[row][:col] + new + lines[row][col:]
            text = "\n".join(lines)
            if step % 20 == 0:
                await asyncio.sleep(0.01)  # a typist's pauses, shorter than the debounce
        await wait_published(client, uri, version)
        got = await hints(client, uri)
        assert sorted((h.position.line, h.position.character) for h in got) == utf16_hint_positions(text)
        final_labels = sorted((h.position.line, h.label) for h in got)
        info = await stats(client)
        assert info["analyses"] + info["superseded"] < 60  # coalesced, no backlog of 200
        assert info["documents"][uri]["version"] == version
    assert tree_digest(workspace) == before  # nothing written next to the user's files

    # The same final text analysed from scratch gives the same hints.
    fresh_path = tmp_path / "fresh" / "burst.c"
    fresh_path.parent.mkdir()
    fresh_path.write_text(text)
    async with running_server(fresh_path.parent, tmp_path / "fresh-cache", neovim_capabilities()) as client:
        uri = open_doc(client, fresh_path)
        await wait_published(client, uri, 1)
        assert sorted((h.position.line, h.label) for h in await hints(client, uri)) == final_labels


async def test_undecodable_bytes_on_disk_and_in_the_buffer(workspace, cache_dir):
    raw = b"/* caf\xe9 \xff */ long twice(long n) { return 2 * n; }\n/* ok */ long inc(long n) { return n + 1; }\n"
    (workspace / "latin1.c").write_bytes(raw)
    (workspace / "other.c").write_bytes(b"/* \xfe\xff */ int seven(void) { return 7; }\n")
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        # An editor shows undecodable bytes somehow; here as lone surrogates (surrogateescape).
        text = raw.decode("utf-8", "surrogateescape")
        uri = open_doc(client, workspace / "latin1.c", text=text)
        await wait_published(client, uri, 1)
        got = await hints(client, uri)
        assert sorted((h.position.line, h.position.character) for h in got) == utf16_hint_positions(text)
        row0 = text.split("\n")[0]
        assert got[0].position.character == row0.index(") {") + 1
        for _ in range(200):  # the background pass reads other.c from disk
            workspace_stats = (await stats(client))["workspace"]
            if workspace_stats["files"] >= 1 and not workspace_stats["running"]:
                break
            await asyncio.sleep(0.05)
        assert workspace_stats["functions"] >= 1


async def test_file_deleted_while_being_analysed(workspace, cache_dir):
    sub = workspace / "sub"
    sub.mkdir()
    path = sub / "gone.c"
    path.write_text(generated_c(4))
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        shutil.rmtree(sub)  # the buffer is what counts; its directory no longer exists
        published = await wait_published(client, uri, 1)
        assert not [d for d in published.diagnostics if d.code == "compile-error"]
        assert len(await hints(client, uri)) == 4
        change(client, uri, 2, (3, 0), (3, 0), "\n")
        await wait_published(client, uri, 2)
        assert (await stats(client))["documents"][uri]["compiles"] == 0


async def test_unknown_file_types_are_ignored_quietly(workspace, cache_dir):
    notes = workspace / "notes.txt"
    notes.write_text("int f(void) { return 0; }\n")
    rust = workspace / "main.rs"
    rust.write_text("fn main() {}\n")
    known = workspace / "k.c"
    known.write_text("int f(void) { return 0; }\n")
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        unknown = [open_doc(client, notes, language_id="plaintext"), open_doc(client, rust, language_id="rust")]
        change(client, unknown[0], 2, (0, 0), (0, 0), "x")
        known_uri = open_doc(client, known)
        await wait_published(client, known_uri, 1)
        await asyncio.sleep(0.3)
        assert not [p for p in client.published if p.uri in unknown]
        for uri in unknown:
            assert await hints(client, uri) == []
            assert await hover(client, uri, 0, 5) is None
        assert not client.messages
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=unknown[0])))
        assert (await stats(client))["compiles"] == 1


async def test_a_single_header_implementation_file_puts_no_hint_outside_its_own_text(workspace, cache_dir):
    # impl.c defines nothing itself: its functions are lib.h's (the CLI reports them there).
    (workspace / "lib.h").write_text("long lib_sum(const long *a, long n);\n#ifdef LIB_IMPLEMENTATION\n"
                                     "long lib_sum(const long *a, long n) { long s = 0;\n"
                                     " for (long i = 0; i < n; i++) s += a[i];\n return s; }\n#endif\n")
    path = workspace / "impl.c"
    path.write_text('#define LIB_IMPLEMENTATION\n#include "lib.h"\n')
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        published = await wait_published(client, uri, 1)
        assert all(d.range.start.line < 2 for d in published.diagnostics)
        assert all(h.position.line < 2 for h in await hints(client, uri))
