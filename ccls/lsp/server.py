"""`ccls --stdio`: the pygls language server. Handlers are thin: they call the `Session`."""
from __future__ import annotations

import ctypes
import logging
import sys
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from ccls import __version__
from ccls.lsp.params import plain_json
from ccls.lsp.session import Session

log = logging.getLogger(__name__)

COMMANDS = ("ccls.setProfile", "ccls.setRegion", "ccls.explainFunction", "ccls.showIR")


class CclsProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        # Tree-sitter columns are UTF-8 bytes: take utf-8 whenever the client offers it, in any
        # order; otherwise pygls picks the client's first supported encoding (utf-16 by default).
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            offered = list(general.position_encodings)
            if types.PositionEncodingKind.Utf8 in offered:
                offered.remove(types.PositionEncodingKind.Utf8)
                general.position_encodings = [types.PositionEncodingKind.Utf8, *offered]
        return (yield from super().lsp_initialize(params))


def _one_malloc_arena() -> None:
    """glibc gives each thread that allocates its own malloc arena and keeps what was freed in
    each: after LLVM's code generator has run on worker threads (a workspace pass) the server
    holds tens of MB it no longer uses. One arena (set before the worker threads start) keeps
    the heap compact; the threads mostly hold the GIL anyway, so they rarely contend."""
    try:
        ctypes.CDLL("libc.so.6").mallopt(-8, 1)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass  # not glibc


class CclsServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ccls", __version__, protocol_cls=CclsProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.session = Session(self)

    def shutdown(self) -> None:
        """The process is ending (after `exit`, or stdin closed: the client is gone): the
        session's worker processes and compilers go with it."""
        self.session.shutdown()
        super().shutdown()


_one_malloc_arena()
server = CclsServer()


@server.feature(types.INITIALIZE)
def initialize(ls: CclsServer, params: types.InitializeParams) -> None:
    ls.session.initialize(params, ls.workspace.position_encoding)


@server.feature(types.INITIALIZED)
async def initialized(ls: CclsServer, params: types.InitializedParams) -> None:
    ls.session.bind_loop()
    ls.session.warm_up()
    await ls.session.pull_configuration()
    ls.session.start_workspace()


@server.feature(types.SHUTDOWN)
def shutdown(ls: CclsServer, params: Any) -> None:
    ls.session.shutdown()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: CclsServer, params: types.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    ls.session.open(doc.uri, doc.text, doc.version)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: CclsServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.session.change(params.text_document.uri, params.text_document.version, list(params.content_changes))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CclsServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.session.close(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: CclsServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.session.saved(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=True))
def inlay_hint(ls: CclsServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    return ls.session.inlay_hints(params.text_document.uri, params.range)


@server.feature(types.INLAY_HINT_RESOLVE)
def inlay_hint_resolve(ls: CclsServer, hint: types.InlayHint) -> types.InlayHint:
    return ls.session.resolve_hint(hint)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: CclsServer, params: types.HoverParams) -> types.Hover | None:
    return ls.session.hover(params.text_document.uri, params.position)


@server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
def code_lens(ls: CclsServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    return ls.session.code_lenses(params.text_document.uri)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: CclsServer, params: types.DidChangeConfigurationParams) -> None:
    await ls.session.configuration_changed(plain_json(params.settings))


@server.command("ccls.setProfile")
def set_profile(ls: CclsServer, *args: Any) -> str:
    return _invalid_params_on_value_error(ls.session.set_layer_value, "profile", plain_json(args[0]) if args else None)


@server.command("ccls.setRegion")
def set_region(ls: CclsServer, *args: Any) -> str:
    return _invalid_params_on_value_error(ls.session.set_layer_value, "region", plain_json(args[0]) if args else None)


@server.command("ccls.explainFunction")
def explain_function(ls: CclsServer, *args: Any) -> str:
    item = ls.session.function_at(*_uri_position(args))
    return ls.session.explain(item) if item is not None else ""


@server.command("ccls.showIR")
def show_ir(ls: CclsServer, *args: Any) -> str:
    item = ls.session.function_at(*_uri_position(args))
    if item is None:
        return ""
    return "\n\n".join(r.counted.ir_text for r in item.reports if r.counted.ir_text)


@server.feature("ccls/stats")
def stats(ls: CclsServer, params: Any) -> dict:
    return ls.session.stats_json()


def _uri_position(args: tuple) -> tuple[str, Any]:
    if len(args) < 2 or not isinstance(args[0], str):
        raise JsonRpcInvalidParams("expected arguments [uri, {line, character}]")
    return args[0], args[1]


def _invalid_params_on_value_error(fn: Any, *args: Any) -> Any:
    """A bad argument from the client is its error (InvalidParams), not an internal one."""
    try:
        return fn(*args)
    except ValueError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


def run_stdio(log_file: str | None, log_level: str) -> None:
    """Serve LSP over stdin/stdout; logs go to `log_file` (or stderr), never to stdout."""
    handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8") if log_file \
        else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, str(log_level).upper(), logging.INFO))
    logging.getLogger("pygls").setLevel(max(root.level, logging.WARNING))
    server.start_io()


def main(args: Any) -> None:
    run_stdio(getattr(args, "log_file", None), getattr(args, "log_level", "INFO") or "INFO")
