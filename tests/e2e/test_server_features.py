"""Features end to end, over stdio against real clang, for a Neovim-0.10-like and a current
VS-Code-like client: hints, resolve, hover, diagnostics, code lens, commands, settings."""
from __future__ import annotations

import asyncio
import re

import pytest
from lsprotocol import types

from ccls import source_map
from tests.e2e.conftest import (CLIENTS, hints, hover, open_doc, running_server, stats, vscode_capabilities,
                                wait_published)

GRADE = r"[A-F][+-]?"
LABEL = re.compile(rf"^{GRADE} · [\d.]+[kMGT]? CU · [\d.]+ [fpnµm]?J$")
GPU_LABEL = re.compile(rf"^{GRADE} · [\d.]+[kMGT]? CU/thread · [\d.]+ [fpnµm]?J$")  # PTX is costed per thread

# Non-ASCII before the signatures (in comments on the same line) makes UTF-8, UTF-16 and
# code-point columns differ, so a wrong conversion puts the hint in the wrong place.
SOURCE = """#include <stddef.h>
/* 𝄞 clé */ long checksum_mod(const long *a, long n, long m) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += a[i] % m;
    return s;
}

/* é */ long checksum_add(const long *a, long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += a[i];
    return s;
}

double sum_cols(const double *m, long n) {
    double s = 0;
    for (long j = 0; j < n; j++)
        for (long i = 0; i < n; i++)
            s += m[i * n + j];
    return s;
}
"""
NAMES = ["checksum_mod", "checksum_add", "sum_cols"]


def expected_hint_positions(text: str, encoding: str) -> dict[str, tuple[int, int]]:
    """Where each function's hint belongs (just after its parameter list), in `encoding` units."""
    data = text.encode()
    out = {}
    for fn in source_map.functions_in(source_map.parse(data, "c"), data, "c"):
        row, byte_col = fn.signature_end
        line = data.split(b"\n")[row][:byte_col]
        if encoding == "utf-8":
            col = len(line)
        elif encoding == "utf-16":
            col = len(line.decode().encode("utf-16-le")) // 2
        else:
            col = len(line.decode())
        out[fn.name] = (row, col)
    return out


def name_position(text: str, name: str) -> tuple[int, int]:
    for row, line in enumerate(text.splitlines()):
        if f" {name}(" in line:
            return row, len(line[:line.index(name)].encode("utf-16-le")) // 2 + 1
    raise AssertionError(name)


@pytest.mark.parametrize("client_name", sorted(CLIENTS))
async def test_hints_hover_diagnostics(client_name, workspace, cache_dir):
    path = workspace / "kernels.c"
    path.write_text(SOURCE)
    async with running_server(workspace, cache_dir, CLIENTS[client_name]()) as client:
        uri = open_doc(client, path)
        published = await wait_published(client, uri, 1)

        # The division in checksum_mod's loop, at its own line, with the configured severity.
        division = [d for d in published.diagnostics if d.code == "division-in-loop"]
        assert [d.range.start.line for d in division] == [4]
        assert division[0].severity == types.DiagnosticSeverity.Warning and division[0].source == "ccls"
        assert not [d for d in published.diagnostics if d.code == "compile-error"]

        got = await hints(client, uri)
        positions = expected_hint_positions(SOURCE, "utf-16")
        assert sorted((h.position.line, h.position.character) for h in got) == sorted(positions.values())
        assert all(LABEL.match(h.label) for h in got), [h.label for h in got]
        # No emoji in labels, and the tooltip comes from inlayHint/resolve (both clients resolve tooltips).
        assert all(h.tooltip is None for h in got)
        resolved = await client.inlay_hint_resolve_async(got[0])
        assert "CU" in resolved.tooltip.value and "| profile |" in resolved.tooltip.value

        row, col = name_position(SOURCE, "checksum_mod")
        shown = await hover(client, uri, row, col)
        text = shown.contents.value
        assert "checksum_mod" in text and "DEFAULT (active)" in text
        for unit in ("CU", "J", "CO2", "$"):
            assert unit in text
        assert "HPC" in text and "Loops" in text
        in_body = await hover(client, uri, 2, 4)  # anywhere in a function's body: that function
        assert in_body is not None and "checksum_mod" in in_body.contents.value
        assert await hover(client, uri, 7, 0) is None  # between functions

        # Push diagnostics only: no pull-diagnostic provider to make clients show duplicates.
        capabilities = client.init_result.capabilities
        assert capabilities.diagnostic_provider is None
        assert capabilities.inlay_hint_provider.resolve_provider is True
        assert client.hint_refreshes >= 1  # both clients declare refresh support


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
async def test_position_encodings(encoding, workspace, cache_dir):
    path = workspace / "kernels.c"
    path.write_text(SOURCE)
    offered = {"utf-8": ["utf-16", "utf-8"], "utf-16": ["utf-16"], "utf-32": ["utf-32", "utf-16"]}[encoding]
    async with running_server(workspace, cache_dir, vscode_capabilities(offered)) as client:
        # utf-8 is taken whenever offered, even when the client lists it second.
        assert (await stats(client))["positionEncoding"] == encoding
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        got = await hints(client, uri)
        assert sorted((h.position.line, h.position.character) for h in got) == \
            sorted(expected_hint_positions(SOURCE, encoding).values())


async def test_commands_and_settings_recost_without_recompiling(workspace, cache_dir):
    path = workspace / "kernels.c"
    path.write_text(SOURCE)
    caps = vscode_capabilities()
    async with running_server(workspace, cache_dir, caps,
                              configuration={"hints": {"format": "{grade} {score}"}}) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        # workspace/configuration was pulled at start-up: the format applies.
        assert all(re.fullmatch(rf"{GRADE} \d+", h.label) for h in await hints(client, uri))
        before = await stats(client)

        refreshes = client.hint_refreshes
        published = len(client.published)
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="ccls.setProfile", arguments=["hpc"]))
        assert result == "HPC"
        await wait_published(client, uri, after=published)
        row, col = name_position(SOURCE, "sum_cols")
        assert "HPC (active)" in (await hover(client, uri, row, col)).contents.value
        assert client.hint_refreshes > refreshes

        published = len(client.published)
        assert await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="ccls.setRegion", arguments=["FR"])) == "FR"
        await wait_published(client, uri, after=published)
        with pytest.raises(Exception, match="unknown region"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="ccls.setRegion", arguments=["atlantis"]))

        after = await stats(client)
        assert after["compiles"] == before["compiles"]  # costs changed, counts did not
        assert after["settings"] == {"profile": "HPC", "region": "FR", "scoring": "absolute"}

        explained = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="ccls.explainFunction", arguments=[uri, {"line": row + 2, "character": 4}]))
        assert explained.startswith("### sum_cols")
        ir = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="ccls.showIR", arguments=[uri, {"line": row, "character": col}]))
        assert "define" in ir and "sum_cols" in ir

        # Code lens is off by default; a pushed configuration change turns it on.
        lens_params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        assert not await client.text_document_code_lens_async(lens_params)
        client.set_configuration({"hints": {"format": "{grade} {score}"}, "codeLens": {"enabled": True}},
                                 section="ccls")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        for _ in range(200):
            lenses = await client.text_document_code_lens_async(lens_params)
            if lenses:
                break
            await asyncio.sleep(0.05)
        assert len(lenses) == 3
        assert all(lens.command.command == "ccls.explainFunction" for lens in lenses)
        assert all(re.fullmatch(rf"{GRADE} \d+", lens.command.title) for lens in lenses)
        assert (await stats(client))["compiles"] == before["compiles"]


async def test_invalid_settings_show_a_message_and_fall_back(workspace, cache_dir):
    path = workspace / "kernels.c"
    path.write_text(SOURCE)
    (workspace / "ccls-cost.toml").write_text('profile = "nope"\n[diagnostics]\ndivisionInLoop = "off"\n')
    caps = vscode_capabilities()
    async with running_server(workspace, cache_dir, caps,
                              initialization_options={"scoring": "sometimes", "diagnostics": {"minShare": 7}}) as client:
        uri = open_doc(client, path)
        published = await wait_published(client, uri, 1)
        warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
        assert any("ccls.scoring" in m for m in warnings)
        assert any("ccls.diagnostics.minShare" in m for m in warnings)
        assert any("unknown profile 'nope'" in m for m in warnings)
        # The valid key from the project file still applies: division findings are off.
        assert not [d for d in published.diagnostics if d.code == "division-in-loop"]
        assert (await stats(client))["settings"]["profile"] == "DEFAULT"


async def test_push_model_configuration_and_hints_off(workspace, cache_dir):
    """A client without workspace/configuration sends settings in didChangeConfiguration."""
    path = workspace / "kernels.c"
    path.write_text(SOURCE)
    caps = vscode_capabilities()
    caps.workspace.configuration = False
    async with running_server(workspace, cache_dir, caps) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        assert len(await hints(client, uri)) == 3
        published = len(client.published)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"ccls": {"hints": {"enabled": False}, "diagnostics": {"divisionInLoop": "error"}}}))
        again = await wait_published(client, uri, after=published)
        assert await hints(client, uri) == []
        assert [d.severity for d in again.diagnostics if d.code == "division-in-loop"] == \
            [types.DiagnosticSeverity.Error]

        # A custom profile: the tables are reloaded with it and the cached counts re-costed.
        compiles = (await stats(client))["compiles"]
        published = len(client.published)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"ccls": {
            "customProfiles": {"green": [0.1, 0.6, 0.2, 0.1]}, "profile": "green"}}))
        await wait_published(client, uri, after=published)
        row, col = name_position(SOURCE, "checksum_mod")
        assert "green (active)" in (await hover(client, uri, row, col)).contents.value
        assert (await stats(client))["compiles"] == compiles


async def test_python_llvm_ir_and_ptx_documents(workspace, cache_dir):
    """Whole-file languages get hints on their definition lines; Python gets one per function."""
    from tests.e2e.conftest import REPO
    files = {name: workspace / name for name in ("python_loops.py", "horner.ll", "saxpy.ptx")}
    for name, path in files.items():
        path.write_text((REPO / "examples" / name).read_text())
    async with running_server(workspace, cache_dir, vscode_capabilities(),
                              initialization_options={"workspace": {"backgroundAnalysis": False}}) as client:
        uris = {name: open_doc(client, path, language_id=name.rsplit(".", 1)[1]) for name, path in files.items()}
        for uri in uris.values():
            published = await wait_published(client, uri, 1)
            assert not [d for d in published.diagnostics if d.code == "compile-error"]

        def rows_of(name: str, needle: str) -> list[int]:
            return [i for i, line in enumerate(files[name].read_text().split("\n")) if line.startswith(needle)]

        python_rows = sorted(h.position.line for h in await hints(client, uris["python_loops.py"]))
        assert python_rows == rows_of("python_loops.py", "def ")
        ir_hints = await hints(client, uris["horner.ll"])
        assert [h.position.line for h in ir_hints] == rows_of("horner.ll", "define ")
        ptx_hints = await hints(client, uris["saxpy.ptx"])
        assert [h.position.line for h in ptx_hints] == rows_of("saxpy.ptx", ".visible .entry")
        assert all(LABEL.match(h.label) for h in ir_hints), [h.label for h in ir_hints]
        assert all(GPU_LABEL.match(h.label) for h in ptx_hints), [h.label for h in ptx_hints]
        shown = await hover(client, uris["horner.ll"], rows_of("horner.ll", "define ")[0], 5)
        assert shown is not None and "horner" in shown.contents.value
        assert "per thread" not in shown.contents.value.lower()
        ptx_shown = await hover(client, uris["saxpy.ptx"], rows_of("saxpy.ptx", ".visible .entry")[0], 16)
        assert ptx_shown is not None and "Per thread: **" in ptx_shown.contents.value
