"""What count cache keys hold of the tools: each compiler's `--version` line, remembered in this
process and in the count cache's directory by the binary's identity (resolved path, mtime, size,
inode), so an unchanged re-run of `ccls analyze` (or a server start) runs no `--version`, and a
binary replaced on disk is asked again; the other tools' identity itself. Versions not remembered
run side by side, and a caller can start them early (`ask_versions`) and collect them when the
key is made."""
from __future__ import annotations

from typing import Callable, Sequence

from ccls import toolchain
from ccls.cache import CountCache, cache_key

# The compilers, which builds reach through wrappers (ccache, distcc, a compile database's
# driver): only their `--version` says what compiles. ccls runs LLVM's other tools itself, so
# the binary's identity says which one ran, and a first run need not start them to ask.
VERSION_KEYED = ("clang", "nvcc")


def ask_versions(cache: CountCache, tools: Sequence[str]) -> Callable[[], list[str]]:
    """Start `--version` of each compiler (`VERSION_KEYED`) that neither this process nor
    `cache`'s directory knows, without waiting; the function returned gives every tool's version
    (in the order of `tools`; for the other tools, their binary's identity) and stores the new
    ones in the cache."""
    asked: dict[str, tuple | None] = {}
    for tool in tools:
        if tool not in VERSION_KEYED or tool in asked or toolchain.known_version(tool) is not None:
            continue
        identity = toolchain.tool_identity(tool)
        stored = cache.get_json(_key(identity)) if identity is not None else None
        if isinstance(stored, str):
            toolchain.remember_version(tool, identity, stored)  # the front ends ask too
        else:
            asked[tool] = identity
    toolchain.start_versions(list(asked))

    def collect() -> list[str]:
        versions = [toolchain.tool_version(tool) if tool in VERSION_KEYED else _identity_text(tool) for tool in tools]
        found = dict(zip(tools, versions))
        cache.put_json_many([(_key(identity), found[tool]) for tool, identity in asked.items()
                             if identity is not None and found[tool]])
        return versions
    return collect


def tool_versions(cache: CountCache, tools: Sequence[str]) -> list[str]:
    """Each tool's `--version` identifying line (`ask_versions`, collected at once)."""
    return ask_versions(cache, tools)()


def _identity_text(tool: str) -> str:
    """The binary's resolved path, mtime, size and inode: a new install is a new key."""
    identity = toolchain.tool_identity(tool)
    return " ".join(map(str, identity)) if identity is not None else ""


def _key(identity: tuple) -> str:
    return cache_key("tool-version/1", *identity)
