"""The HTML report in a real headless browser (Debian's chromium): the page's script runs without
an error, the functions table has its rows and sorts, a screenshot shows something."""
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ccls.reports.html import READY_ATTRIBUTE
from tests.test_reports import KERNELS_C

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((found for found in map(shutil.which, BROWSERS) if found), None)
pytestmark = [
    pytest.mark.skipif(BROWSER is None, reason="no headless browser installed (chromium: `apt-get install chromium`, "
                                               "as .ci/setup does): the HTML report is not checked in a browser"),
    pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 is not installed"),
]


TEXT_PY = """\
def pairs(items):
    total = 0
    for a in items:
        for b in items:
            total += a * b
    return total


def first(items):
    return items[0]
"""


def browser(*args: str, profile: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """Headless chromium with a throwaway profile; stderr carries the page's console (--enable-logging)."""
    command = [BROWSER, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
               "--disable-extensions", "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(1, "--no-sandbox")  # chromium refuses to run as root with its sandbox
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def png_pixels(path: Path) -> tuple[int, int, bytes]:
    """(width, height, the decompressed scanlines) of a PNG, read with zlib alone."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, width, height, idat = 8, 0, 0, b""
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    return width, height, zlib.decompress(idat)


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    root = tmp_path_factory.mktemp("html-report")
    (root / "src").mkdir()
    (root / "src" / "kernels.c").write_text(KERNELS_C)
    (root / "src" / "text.py").write_text(TEXT_PY)
    done = subprocess.run([sys.executable, "-m", "ccls", "analyze", "src", "--format", "html"], cwd=root,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "CCLS_CACHE_DIR": str(root / "count-cache")})  # never the user's
    assert done.returncode == 0, done.stderr
    page = root / "report.html"
    page.write_text(done.stdout, encoding="utf-8")
    return page


def _rows(dom: str) -> list[list[str]]:
    table = dom[dom.index('id="functions-table"'):]
    table = table[:table.index("</table>")]
    return [re.findall(r'data-v="([^"]*)"', row) for row in re.findall(r"<tr data-index=\"\d+\"[^>]*>(.*?)</tr>", table, re.S)]


def test_the_page_runs_and_sorts_in_chromium(report_page, tmp_path):
    # `#sort=score-asc`: the page's script sorts the table on load, as clicking "score" does.
    done = browser("--dump-dom", report_page.as_uri() + "#sort=score-asc", profile=tmp_path / "profile")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "Uncaught" not in done.stderr, [line for line in done.stderr.splitlines() if "Uncaught" in line]
    assert f'{READY_ATTRIBUTE}="1"' in dom  # the script's last statement ran
    rows = _rows(dom)
    assert len(rows) == 5  # checksum_mod, sum_cols, add3, pairs, first
    scores = [float(cells[8]) for cells in rows]  # the score column's sort keys
    assert scores == sorted(scores) and scores[0] < scores[-1]
    assert re.search(r'data-key="score"[^>]*aria-sort="ascending"', dom)
    assert dom.count('class="cost-curve"') == 3 and 'class="sensitivity"' in dom


def test_the_page_unsorted_keeps_cost_order_and_a_screenshot_shows_it(report_page, tmp_path):
    done = browser("--dump-dom", report_page.as_uri(), profile=tmp_path / "profile")
    assert done.returncode == 0 and f'{READY_ATTRIBUTE}="1"' in done.stdout
    cus = [float(cells[3]) for cells in _rows(done.stdout)]
    assert cus == sorted(cus, reverse=True)  # rows come costliest first
    shot = tmp_path / "report.png"
    done = browser(f"--screenshot={shot}", "--window-size=1280,1600", "--hide-scrollbars", report_page.as_uri(),
                   profile=tmp_path / "profile-shot")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Uncaught" not in done.stderr
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1280, 1600)
    # A blank page compresses to a handful of byte values; the report's text, grade badges and
    # bars give many.
    assert len(set(pixels)) > 64
