"""The workspace: the background pass with $/progress (and its cancellation), and external
changes seen by the watcher — headers, compile flags, the project file."""
from __future__ import annotations

import asyncio
import time

from lsprotocol import types

from tests.e2e.conftest import hover, open_doc, running_server, stats, vscode_capabilities, wait_published
from tests.e2e.test_server_incremental import generated_c


async def _until(predicate, timeout_s: float = 90.0, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_background_pass_reports_progress_and_feeds_cohort_scoring(workspace, cache_dir):
    for i in range(4):
        (workspace / f"lib{i}.c").write_text(generated_c(2 + i))
    (workspace / "sub").mkdir()
    (workspace / "sub" / "deep.c").write_text(generated_c(1))
    (workspace / ".git").mkdir()
    (workspace / ".git" / "ignored.c").write_text(generated_c(1))
    main = workspace / "main.c"
    main.write_text(generated_c(3))
    async with running_server(workspace, cache_dir, vscode_capabilities(),
                              initialization_options={"scoring": "cohort"}) as client:
        uri = open_doc(client, main)
        await wait_published(client, uri, 1)

        async def finished():
            info = (await stats(client))["workspace"]
            return info if info["filesAnalysed"] >= 5 and not info["running"] else None
        info = await _until(finished, what="the workspace pass")
        assert info["files"] == 5 and info["functions"] == 2 + 3 + 4 + 5 + 1  # main.c is open: not in the pass
        begins = [token for token, values in client.progress_reports.items()
                  if values and isinstance(values[0], types.WorkDoneProgressBegin)]
        assert begins
        values = client.progress_reports[begins[0]]
        assert values[0].cancellable is True and isinstance(values[-1], types.WorkDoneProgressEnd)
        assert "files analysed" in values[-1].message
        # The finished pass re-costs open documents against the whole workspace (cohort).
        async def whole_workspace_cohort():
            return (await stats(client))["cohortSize"] == 3 + 15
        await _until(whole_workspace_cohort, what="a workspace-wide cohort")


async def test_cancelling_the_background_pass(workspace, cache_dir):
    for i in range(40):
        (workspace / f"many{i}.c").write_text(generated_c(3, bound=100 + i))
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        async def began():
            for token, values in client.progress_reports.items():
                if values and isinstance(values[0], types.WorkDoneProgressBegin):
                    return token
            return None
        token = await _until(began, what="progress begin")
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))

        async def ended():
            values = client.progress_reports[token]
            return values[-1] if isinstance(values[-1], types.WorkDoneProgressEnd) else None
        end = await _until(ended, what="progress end")
        assert end.message == "cancelled"
        info = (await stats(client))["workspace"]
        assert info["cancelled"] is True and info["filesAnalysed"] < 40


async def test_external_changes_invalidate_what_they_affect(workspace, cache_dir):
    (workspace / "scale.h").write_text("#define SCALE 2\n")
    (workspace / "unrelated.h").write_text("#define OTHER 1\n")
    main = workspace / "main.c"
    main.write_text('#include "scale.h"\nlong f(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * SCALE; '
                    'return s; }\nlong g(long n) { return n + 1; }\n')
    options = {"workspace": {"backgroundAnalysis": False}}
    async with running_server(workspace, cache_dir, vscode_capabilities(), initialization_options=options) as client:
        uri = open_doc(client, main)
        await wait_published(client, uri, 1)
        assert (await stats(client))["compiles"] == 1

        # A header the file does not include: re-checked, nothing recompiled.
        published = len(client.published)
        (workspace / "unrelated.h").write_text("#define OTHER 2\n")
        await wait_published(client, uri, 1, after=published)
        assert (await stats(client))["compiles"] == 1

        # The included header: its contents are part of every function's key.
        published = len(client.published)
        (workspace / "scale.h").write_text("#define SCALE 3\n")
        await wait_published(client, uri, 1, after=published)
        assert (await stats(client))["compiles"] == 2

        # New compile flags (a compile_flags.txt appears): recompiled with them.
        published = len(client.published)
        (workspace / "compile_flags.txt").write_text("-DEXTRA=1\n")
        await wait_published(client, uri, 1, after=published)
        assert (await stats(client))["compiles"] == 3

        # The project file changes the profile: re-costed, not recompiled.
        published = len(client.published)
        (workspace / "ccls-cost.toml").write_text('profile = "MOBILE"\n')
        await wait_published(client, uri, 1, after=published)
        info = await stats(client)
        assert info["settings"]["profile"] == "MOBILE" and info["compiles"] == 3
        assert "MOBILE (active)" in (await hover(client, uri, 1, 6)).contents.value
