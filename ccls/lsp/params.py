"""What clients send, as plain values: JSON objects pygls hands over as namedtuples, the
`ccls` settings section, a position in a command's arguments, a file URI as a path."""
from __future__ import annotations

import os
from typing import Any

from pygls.uris import to_fs_path

from ccls.lsp.settings import unwrap_section


def plain_json(value: Any) -> Any:
    """pygls hands unknown JSON objects over as namedtuples; turn them back into dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain_json(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value


def settings_section(raw: Any) -> dict:
    """The `ccls` section of settings a client sent (or the settings themselves), as a dict."""
    section = unwrap_section(plain_json(raw))
    return dict(section) if section else {}


def position_args(position: Any) -> tuple[int, int]:
    """A command argument `{line, character}` (or `[line, character]`) as (line, character)."""
    position = plain_json(position)
    if isinstance(position, dict):
        return int(position.get("line", 0)), int(position.get("character", 0))
    if isinstance(position, (list, tuple)) and len(position) == 2:
        return int(position[0]), int(position[1])
    raise ValueError("expected a position {line, character}")


def uri_to_path(uri: str) -> str | None:
    """The absolute path of a file URI; None for a URI that names no file."""
    try:
        path = to_fs_path(uri)
    except Exception:
        return None
    return os.path.abspath(path) if path else None
