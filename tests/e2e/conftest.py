"""Shared fixtures for end-to-end language-server tests: a real `ccls --stdio` subprocess driven
by pytest-lsp's client, with editor-like capability sets, a temporary workspace and a
temporary count cache (never the user's)."""
from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from ccls.lsp.params import plain_json
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from lsprotocol.converters import get_converter

REPO = Path(__file__).resolve().parents[2]
SERVER_COMMAND = [sys.executable, "-m", "ccls", "--stdio", "--log-level", "INFO"]
ANALYSIS_TIMEOUT_S = 120.0


def neovim_capabilities() -> types.ClientCapabilities:
    """Neovim 0.10 as recorded by pytest-lsp: inlay hints with resolve, refresh support,
    workspace/configuration, utf-16 positions."""
    return client_capabilities("neovim@v0.10.0")


def vscode_capabilities(encodings: list[str] | None = None) -> types.ClientCapabilities:
    """A current VS Code (1.9x): VS Code 1.65's recorded set plus what it has gained since —
    inlay hints with resolve support and refresh, position encodings (utf-16 only), pull
    diagnostics (which ccls must not register), work-done progress."""
    caps = client_capabilities("visual-studio-code@v1.65.2")
    raw = get_converter().unstructure(caps)
    raw.setdefault("general", {})["positionEncodings"] = encodings or ["utf-16"]
    raw["textDocument"]["inlayHint"] = {"dynamicRegistration": True, "resolveSupport": {
        "properties": ["tooltip", "textEdits", "label.tooltip", "label.location", "label.command"]}}
    raw["textDocument"]["diagnostic"] = {"dynamicRegistration": True, "relatedDocumentSupport": False}
    raw["workspace"]["inlayHint"] = {"refreshSupport": True}
    raw["workspace"]["diagnostics"] = {"refreshSupport": True}
    raw["window"] = {**raw.get("window", {}), "workDoneProgress": True}
    return get_converter().structure(raw, types.ClientCapabilities)


CLIENTS = {"neovim-0.10": neovim_capabilities, "vscode": vscode_capabilities}


def _make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=get_converter)
    client.published = []  # every publishDiagnostics, in arrival order
    client.hint_refreshes = 0
    client.lens_refreshes = 0
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(client_: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client_.diagnostics[params.uri] = params.diagnostics
        client_.published.append(params)

    def hint_refresh(client_: LanguageClient, params: Any) -> None:
        client_.hint_refreshes += 1

    def lens_refresh(client_: LanguageClient, params: Any) -> None:
        client_.lens_refreshes += 1

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.WORKSPACE_INLAY_HINT_REFRESH] = hint_refresh
    features[types.WORKSPACE_CODE_LENS_REFRESH] = lens_refresh
    register_lsp_features(client, features)
    return client


@contextlib.asynccontextmanager
async def running_server(workspace: Path, cache_dir: Path, capabilities: types.ClientCapabilities,
                         initialization_options: dict | None = None, configuration: dict | None = None,
                         extra_env: dict | None = None) -> AsyncIterator[LanguageClient]:
    env = {**os.environ, "CCLS_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(REPO), **(extra_env or {})}
    config = ClientServerConfig(server_command=SERVER_COMMAND, client_factory=_make_client, server_env=env)
    client = await config.start()
    if configuration is not None:
        client.set_configuration(configuration, section="ccls")
    try:
        client.init_result = await client.initialize_session(types.InitializeParams(
            capabilities=capabilities,
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            # These tests check every function's hint: hints.show's default (costly) shows a few.
            initialization_options={"hints.show": "all", **(initialization_options or {})},
        ))
        yield client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 20)
        await client.stop()


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1,
             language_id: str = "c") -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id=language_id, version=version,
        text=path.read_text(encoding="utf-8", errors="surrogateescape") if text is None else text)))
    return uri


async def wait_published(client: LanguageClient, uri: str, version: int | None = None,
                         timeout_s: float = ANALYSIS_TIMEOUT_S, after: int = 0) -> types.PublishDiagnosticsParams:
    """The first publishDiagnostics for `uri` (at `version`, if given) after the first `after`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for params in client.published[after:]:
            if params.uri == uri and (version is None or params.version == version):
                return params
        await asyncio.sleep(0.02)
    raise AssertionError(f"no diagnostics for {uri} version {version} within {timeout_s} s; "
                         f"got {[(p.uri, p.version) for p in client.published]}")


async def stats(client: LanguageClient) -> dict:
    result = await client.protocol.send_request_async("ccls/stats", {})
    return plain_json(result)


async def hints(client: LanguageClient, uri: str, lines: int = 100000) -> list[types.InlayHint]:
    result = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=lines, character=0))))
    return list(result or [])


async def hover(client: LanguageClient, uri: str, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))


def change(client: LanguageClient, uri: str, version: int, start: tuple[int, int], end: tuple[int, int],
           text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=start[0], character=start[1]),
                              end=types.Position(line=end[0], character=end[1])), text=text)]))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"
