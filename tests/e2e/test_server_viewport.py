"""End to end (a real `ccls --stdio`): what the editor sees first. `ccls.hints.show` picks which
functions get a hint without changing hover or diagnostics."""
from __future__ import annotations

import shutil
from pathlib import Path

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
