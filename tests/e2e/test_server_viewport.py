"""End to end (a real `ccls --stdio`): what the editor sees first. `ccls.hints.show` picks which
functions get a hint without changing hover or diagnostics; on a large file opened cold, the
functions on screen (the client's inlayHint range) are counted first, and a scroll re-orders
what is left."""
from __future__ import annotations

import asyncio
import shutil

from lsprotocol import types

from tests.e2e.conftest import (REPO, hints, hover, open_doc, running_server, stats, vscode_capabilities,
                                wait_published)

KERNELS = REPO / "examples" / "kernels.c"


async def _hint_lines_after(client, uri: str, published: int) -> list[int]:
    await wait_published(client, uri, after=published)  # a settings change re-publishes
    return sorted(h.position.line for h in await hints(client, uri))


async def test_changing_hints_show_changes_which_functions_get_hints(workspace, cache_dir):
    path = workspace / "kernels.c"
    shutil.copy(KERNELS, path)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        first = await wait_published(client, uri, 1)
        every = sorted(h.position.line for h in await hints(client, uri))
        assert len(every) == 7  # the e2e default is "all": a hint on each of kernels.c's functions
        finding_rows = {d.range.start.line for d in first.diagnostics}

        def show(mode: str) -> None:  # VS Code: the server pulls the section on a change
            client.set_configuration({"hints": {"show": mode}}, section="ccls")
            client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

        published = len(client.published)
        show("costly")
        costly = await _hint_lines_after(client, uri, published)
        assert 0 < len(costly) < len(every) and set(costly) <= set(every)

        published = len(client.published)
        show("findings")
        with_findings = await _hint_lines_after(client, uri, published)
        assert 0 < len(with_findings) < len(every)
        # A function with a finding has a diagnostic inside it, below its hint's row.
        placed = [(row, next((r for r in every if r > row), 1 << 30)) for row in every]
        assert with_findings == [row for row, end in placed if any(row <= d < end for d in finding_rows)]

        published = len(client.published)
        show("none")
        assert await _hint_lines_after(client, uri, published) == []

        # Hover and diagnostics do not depend on the mode.
        after = client.published[-1]
        assert [d.message for d in after.diagnostics] == [d.message for d in first.diagnostics]
        assert (await hover(client, uri, every[0], 8)) is not None
        assert (await stats(client))["compiles"] == 1  # re-filtered, not re-analysed

        published = len(client.published)
        show("all")
        assert await _hint_lines_after(client, uri, published) == every


# -- viewport first ------------------------------------------------------------------------------

FUNCTIONS = 300
BODIES = (
    "    double s = {k}.0;\n    for (long j = 0; j < n; j++)\n        s += a[j] * {k}.5;\n    return s;",
    "    double s = 0.0;\n    for (long j = 0; j < n; j += {k})\n        s += a[j] / (a[j] + {k}.0);\n    return s;",
    "    double s = 1.0;\n    for (long i = 0; i < n; i++)\n        for (long j = 0; j < {k}; j++)\n"
    "            s += a[i] * a[j];\n    return s;",
)


def generated_c(functions: int = FUNCTIONS) -> tuple[str, list[int]]:
    """A large C file of small numeric functions, and the row of each one's signature (its hint)."""
    lines, rows = ["#include <stddef.h>", ""], []
    for i in range(functions):
        rows.append(len(lines))
        lines.append(f"double k{i}(const double *a, long n) {{")
        lines.extend(BODIES[i % len(BODIES)].format(k=i % 7 + 2).split("\n"))
        lines += ["}", ""]
    return "\n".join(lines), rows


async def _range_hints(client, uri: str, first: int, last: int) -> list[types.InlayHint]:
    result = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=first, character=0), end=types.Position(line=last, character=0))))
    return list(result or [])


async def _until_hints_on(client, uri: str, first: int, last: int, expected: int, timeout_s: float = 120.0) -> None:
    """Ask for the range's hints (as an editor showing those rows does) until all are there."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        if len(await _range_hints(client, uri, first, last)) >= expected:
            return
        assert asyncio.get_running_loop().time() < deadline, f"no hints for rows {first}-{last} in {timeout_s} s"
        await asyncio.sleep(0.05)


async def _counted(client, uri: str, row: int) -> bool:
    """Whether the function at `row` has been analysed: hover (which never moves the screen)."""
    return await hover(client, uri, row, 8) is not None


async def _pending(client, uri: str) -> int:
    return (await stats(client))["documents"][uri]["pendingFunctions"]


async def _until_done(client, uri: str, timeout_s: float = 300.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while (await stats(client))["documents"].get(uri, {}).get("pendingFunctions", 1):
        assert asyncio.get_running_loop().time() < deadline, "the cold pass did not finish"
        await asyncio.sleep(0.2)


async def test_the_screens_functions_get_hints_before_the_rest_of_a_large_file(workspace, cache_dir):
    text, rows = generated_c()
    path = workspace / "large.c"
    path.write_text(text)
    screen = [r for r in rows if r <= 60]
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        await _until_hints_on(client, uri, 0, 60, len(screen))
        # The screen is done; the end of the file is not (a cold pass takes many batches).
        assert await _pending(client, uri) > FUNCTIONS // 2
        assert not await _counted(client, uri, rows[-1])
        assert not await _counted(client, uri, rows[FUNCTIONS // 2])
        assert await _counted(client, uri, screen[-1])
        await _until_done(client, uri)
        every = await _range_hints(client, uri, 0, len(text.split("\n")))
        assert sorted(h.position.line for h in every) == rows
        # The rest of the file came with work-done progress: begun, reported, ended.
        reports = [values for values in client.progress_reports.values()
                   if values and "analysing large.c" in getattr(values[0], "title", "")]
        assert len(reports) == 1 and type(reports[0][-1]).__name__ == "WorkDoneProgressEnd"
        assert any(type(v).__name__ == "WorkDoneProgressReport" for v in reports[0])
        assert (await stats(client))["documents"][uri]["compiles"] > 2  # batches, not one whole-file compile


async def test_scrolling_during_the_cold_pass_gets_the_new_screens_hints_first(workspace, cache_dir):
    text, rows = generated_c()
    path = workspace / "large.c"
    path.write_text(text)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, path)
        await _until_hints_on(client, uri, 0, 60, len([r for r in rows if r <= 60]))
        # Scroll to two thirds down the file while the rest is being counted.
        first, last = rows[2 * FUNCTIONS // 3], rows[2 * FUNCTIONS // 3] + 60
        await _until_hints_on(client, uri, first, last, len([r for r in rows if first <= r <= last]))
        # The new screen came before the functions between it and the old one, and before the end.
        assert await _pending(client, uri) > FUNCTIONS // 3
        assert not await _counted(client, uri, rows[FUNCTIONS // 3])
        assert not await _counted(client, uri, rows[-1])
        await _until_done(client, uri)
        assert len(await _range_hints(client, uri, 0, len(text.split("\n")))) == FUNCTIONS
