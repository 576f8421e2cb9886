"""A real headless Neovim (Debian's 0.7.2 in CI) set up from ccls/editors/nvim/ccls_cost.lua.

Neovim runs tests/e2e/nvim/init.lua, which configures the server the way a user would, opens an
example C file and records diagnostics, hover and code lens to JSON; the tests assert on that.
The server command comes from $CCLS_SERVER (default: this Python's `-m ccls --stdio`).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (Debian/Ubuntu: apt-get install neovim)")

REPO = Path(__file__).resolve().parents[2]
LUA_CONFIG = REPO / "ccls" / "editors" / "nvim" / "ccls_cost.lua"
INIT = Path(__file__).resolve().parent / "nvim" / "init.lua"
EXAMPLE = REPO / "examples" / "kernels.c"  # checksum_mod: `%` by a run-time value in a loop
FUNCTION = "checksum_mod"
LL_EXAMPLE = REPO / "examples" / "horner.ll"
GRADE = r"[A-F][+-]?"  # letter grades A+ … F
RUN_TIMEOUT_S = 420


def _server_command() -> str:
    return os.environ.get("CCLS_SERVER") or json.dumps([sys.executable, "-m", "ccls", "--stdio"])


def _lines(needle: str) -> list[int]:
    return [i for i, line in enumerate(EXAMPLE.read_text().splitlines()) if needle in line]


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("nvim")
    result_file = tmp / "observed.json"
    env = {
        **os.environ,
        "CCLS_SERVER": _server_command(),
        "CCLS_COST_LUA": str(LUA_CONFIG),
        "CCLS_NVIM_EXAMPLE": str(EXAMPLE),
        "CCLS_NVIM_FUNCTION": FUNCTION,
        "CCLS_NVIM_LL": str(LL_EXAMPLE),
        "CCLS_NVIM_PTX": str(tmp / "new_kernel.ptx"),
        "CCLS_NVIM_RESULT": str(result_file),
        # Keep Neovim's state (lsp.log) inside the test's directory.
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        # `python -m ccls` from a checkout that is not pip-installed.
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
    }
    proc = subprocess.run([NVIM, "--headless", "--clean", "-u", str(INIT)], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    log = "\n".join(p.read_text(errors="replace")[-4000:] for p in tmp.rglob("lsp.log"))
    assert result_file.exists(), (f"nvim wrote no result (exit {proc.returncode})\nstderr: {proc.stderr[-3000:]}\n"
                                  f"lsp.log: {log}")
    data = json.loads(result_file.read_text())
    data["_lsp_log"] = log
    print(json.dumps({k: v for k, v in data.items() if k != "_lsp_log"}, indent=1, ensure_ascii=False))
    return data


def test_no_errors_in_the_run(observed: dict) -> None:
    assert observed["errors"] == [], f"{observed['errors']}\nmessages: {observed['messages']}\nlsp.log: {observed['_lsp_log']}"
    assert observed["filetype"] == "c"
    command = _server_command()
    assert observed["cmd"] == (json.loads(command) if command.lstrip().startswith("[") else command.split())


def test_diagnostics_arrive_with_division_in_loop(observed: dict) -> None:
    division = [d for d in observed["diagnostics"] if d["code"] == "division-in-loop"]
    assert division, f"no division-in-loop among {observed['diagnostics']}"
    assert all(d["source"] == "ccls" for d in division)
    # Neovim's line numbers are 0-based; the finding sits on the modulo in checksum_mod.
    modulo_line = _lines("s += a[i] % m;")[0]
    assert any(d["lnum"] == modulo_line for d in division), division
    add_start, add_end = _lines("long checksum_add(")[0], _lines("double sum_rows(")[0]
    assert not any(add_start < d["lnum"] < add_end for d in division), "division reported in checksum_add"


def test_hover_returns_the_breakdown(observed: dict) -> None:
    hover = observed.get("hover")
    assert hover, "no hover result"
    assert hover["kind"] == "markdown"
    text = hover["value"]
    assert FUNCTION in text
    assert re.search(r"\bCU\b", text)
    lens = next(l for l in observed["code_lens"] if l["line"] == observed["function_line"])
    grade = re.match(GRADE, lens["title"]).group(0)
    assert re.search(rf"(^|[^A-Za-z]){re.escape(grade)}([^A-Za-z+-]|$)", text, re.M), f"hover lacks grade {grade}"


def test_code_lens_resolves_per_function(observed: dict) -> None:
    lenses = observed["code_lens"]
    functions = len(re.findall(r"^\w[\w\s\*]*\b\w+\([^;]*\)\s*\{", EXAMPLE.read_text(), re.M))
    assert functions == 7
    assert len(lenses) >= functions, lenses
    for lens in lenses:
        assert re.match(rf"{GRADE} ", lens["title"]), lens
        assert "CU" in lens["title"]
        assert lens["command"] == "ccls.explainFunction"
    assert any(l["line"] == observed["function_line"] for l in lenses)


def test_profile_change_reaches_the_running_server(observed: dict) -> None:
    assert observed.get("profile_switched"), observed.get("hover_after_profile")


def test_filetypes_for_llvm_ir_and_ptx(observed: dict) -> None:
    assert observed["ll_filetype"] == "llvm"  # not Vim's "lifelines"
    assert observed["ptx_filetype"] == "ptx"
    assert observed["ll_attached"] is True


def test_explain_and_show_ir_commands(observed: dict) -> None:
    explain, show_ir = observed.get("explain"), observed.get("show_ir")
    assert explain and explain["filetype"] == "markdown" and FUNCTION in explain["text"], explain
    assert show_ir and show_ir["filetype"] == "llvm", show_ir
    assert re.search(rf"define\b.*@{FUNCTION}\(", show_ir["text"]), show_ir["text"]
