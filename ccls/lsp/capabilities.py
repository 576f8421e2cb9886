"""What the client said it can do at `initialize` (its `ClientCapabilities`), as the few
yes/no questions the session asks before using a request or notification."""
from __future__ import annotations

from typing import Any

from lsprotocol import types


class ClientFeatures:
    """The client's capabilities the session depends on (all False before `initialize`)."""

    def __init__(self, capabilities: types.ClientCapabilities | None = None):
        self.capabilities = capabilities

    def _cap(self, *path: str) -> Any:
        node: Any = self.capabilities
        for name in path:
            node = getattr(node, name, None) if node is not None else None
        return node

    @property
    def configuration(self) -> bool:
        """`workspace/configuration` (pull-model settings)."""
        return bool(self._cap("workspace", "configuration"))

    @property
    def hint_refresh(self) -> bool:
        return bool(self._cap("workspace", "inlay_hint", "refresh_support"))

    @property
    def lens_refresh(self) -> bool:
        return bool(self._cap("workspace", "code_lens", "refresh_support"))

    @property
    def progress(self) -> bool:
        """`window/workDoneProgress`."""
        return bool(self._cap("window", "work_done_progress"))

    @property
    def inlay_hints(self) -> bool:
        """Whether the client asks for inlay hints at all (so tells which rows it shows)."""
        return self._cap("text_document", "inlay_hint") is not None

    @property
    def resolves_tooltips(self) -> bool:
        """`inlayHint/resolve` for tooltips: tooltips computed on demand, not with each hint."""
        props = self._cap("text_document", "inlay_hint", "resolve_support", "properties") or ()
        return "tooltip" in props
