"""Sizes from call sites in the language server: from the document itself (and again after a
call's constant is edited), and from another file of the workspace that is not open."""
from __future__ import annotations

import asyncio
import time

from tests.e2e.conftest import change, hover, open_doc, running_server, vscode_capabilities, wait_published

PROGRAM = """#define N 300
double total(int n, const double *a) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * a[i];
  return s;
}
int main(void) {
  static double a[4096];
  int n = N;
  return (int)total(n, a);
}
"""

LIBRARY = """void scale(int n, double *a) {
  for (int i = 0; i < n; i++) a[i] = a[i] * 3.0 + 1.0;
}
"""

DRIVER = """void scale(int n, double *a);
static double buffer[8192];
void run(void) { scale(5000, buffer); }
"""


async def _hover_text(client, uri: str, line: int) -> str:
    found = await hover(client, uri, line, 8)
    return found.contents.value if found is not None else ""


async def _until_hover_says(client, uri: str, line: int, text: str, timeout_s: float = 90.0) -> str:
    deadline = time.monotonic() + timeout_s
    seen = ""
    while time.monotonic() < deadline:
        seen = await _hover_text(client, uri, line)
        if text in seen:
            return seen
        await asyncio.sleep(0.1)
    raise AssertionError(f"hover never said {text!r}; last: {seen!r}")


async def test_sizes_from_the_document_follow_an_edit(workspace, cache_dir):
    path = workspace / "prog.c"
    path.write_text(PROGRAM)
    async with running_server(workspace, cache_dir, vscode_capabilities(),
                              initialization_options={"backgroundAnalysis": False}) as client:
        uri = open_doc(client, path)
        await wait_published(client, uri, 1)
        shown = await _until_hover_says(client, uri, 1, "n = 300 from the call at prog.c:10")
        assert "n=300" in shown.replace(" ", "")
        change(client, uri, 2, (0, 10), (0, 13), "700")  # #define N 700
        await _until_hover_says(client, uri, 1, "n = 700 from the call at prog.c:10")


async def test_sizes_from_a_file_that_is_not_open(workspace, cache_dir):
    (workspace / "driver.c").write_text(DRIVER)
    library = workspace / "lib.c"
    library.write_text(LIBRARY)
    async with running_server(workspace, cache_dir, vscode_capabilities()) as client:
        uri = open_doc(client, library)
        await wait_published(client, uri, 1)
        await _until_hover_says(client, uri, 0, "n = 5000 from the call at driver.c:3")
