"""Precompiled preambles for C and C++ (clangd's preamble idea, with clang's own PCH).

The *preamble* is a buffer's leading block of `#include`s (with the comments, blank lines and
plain `#define`s among them). Compiled once into a PCH kept in the language server's cache
directory, it spares every later compile of the same buffer — each edit's reduced unit — the
parsing of those headers. The buffer is then compiled with its preamble lines emptied (line
numbers unchanged) and `-include-pch`.

Safety: only a plain preamble is split off (no conditionals, no line continuations, no string
literals, no pragmas, no macros that tell where they are expanded). A PCH is keyed by
the compiler, every flag, the working directory and the preamble's text; clang itself rejects
a PCH whose headers changed on disk since it was built. The caller drops a PCH on any failure
and compiles without it. Nothing is ever written outside the given directory.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass

from ccls.cache import cache_key

MAX_PREAMBLES = 16  # PCHs kept per directory (C++ standard-library preambles weigh 10–50 MB)

_INCLUDE = re.compile(r'#\s*include\s*(?:<[^>\n]+>|"[^"\n]+")\s*$')
_PLAIN_DIRECTIVE = re.compile(r"#\s*(?:define|undef)\b")
# Expand differently in a header than in the main file, or depend on the moment of the build.
_POSITIONAL = re.compile(r"__(?:FILE|FILE_NAME|LINE|COUNTER|INCLUDE_LEVEL|BASE_FILE|TIMESTAMP|DATE|TIME)__")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/")


@dataclass(frozen=True)
class Split:
    header: str  # the preamble's lines, verbatim
    body: str  # the whole buffer with the preamble's lines emptied (same line numbers)


def split(text: str) -> Split | None:
    """The buffer's plain leading include block and the rest, or None when it has none."""
    lines = text.split("\n")
    in_comment = False
    end = 0  # lines [0, end) form the preamble: it ends after its last #include
    for number, line in enumerate(lines):
        if not in_comment and not line.strip():
            continue  # a reduced unit is mostly blank lines
        code, in_comment = _without_comments(line, in_comment)
        code = code.strip()
        if line.rstrip().endswith("\\") or _POSITIONAL.search(line):
            break
        if not code:
            continue
        if _INCLUDE.match(code):
            if in_comment:
                break  # a comment opened on the last include line would be cut in two
            end = number + 1
        elif not (_PLAIN_DIRECTIVE.match(code) and '"' not in code and "'" not in code):
            break
    if end == 0:
        return None
    header = "\n".join(lines[:end]) + "\n"
    return Split(header, "\n" * end + "\n".join(lines[end:]))


def _without_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """The line's code outside /* */ and // comments, and whether a block comment stays open."""
    if in_comment:
        close = line.find("*/")
        if close < 0:
            return "", True
        line = line[close + 2:]
    line = _BLOCK_COMMENT.sub(" ", line)
    opened = line.find("/*")
    if opened >= 0:
        return line[:opened].split("//", 1)[0], True
    return line.split("//", 1)[0], False


class PreambleStore:
    """PCH files in one directory, by key; least recently used ones are removed."""

    _failed: set[str] = set()  # keys whose build failed in this process: not tried again
    _lock = threading.Lock()

    def __init__(self, directory: str):
        self.directory = directory

    @staticmethod
    def key(compiler: str, argv: list[str], cwd: str, header: str) -> str:
        return cache_key("preamble/1", compiler, argv, cwd, header)

    def paths(self, key: str) -> tuple[str, str]:
        """(header, pch) paths for a key."""
        base = os.path.join(self.directory, key)
        return base + ".h", base + ".pch"

    def lookup(self, key: str) -> str | None:
        """The PCH for a key, marked as recently used; None when there is none."""
        header, pch = self.paths(key)
        try:
            os.utime(pch)
        except OSError:
            return None
        return pch if os.path.isfile(header) else None

    def failed(self, key: str) -> bool:
        with self._lock:
            return key in self._failed

    def mark_failed(self, key: str) -> None:
        with self._lock:
            self._failed.add(key)

    def drop(self, key: str) -> None:
        for path in self.paths(key):
            try:
                os.unlink(path)
            except OSError:
                pass

    def prepare(self, key: str, header_text: str) -> tuple[str, str] | None:
        """Write the preamble header (once) and return (header, temporary pch path) to build
        into; None when the directory is unusable."""
        header, pch = self.paths(key)
        try:
            os.makedirs(self.directory, exist_ok=True)
            if not os.path.isfile(header):
                _write_atomically(header, header_text)
        except OSError:
            return None
        return header, f"{pch}.{os.getpid()}.{threading.get_ident()}.tmp"

    def commit(self, key: str, built: str) -> None:
        """Publish a PCH built at `built` (from `prepare`) and evict the oldest ones."""
        try:
            os.replace(built, self.paths(key)[1])
        except OSError:
            self.discard(built)
            return
        self._evict()

    @staticmethod
    def discard(built: str) -> None:
        try:
            os.unlink(built)
        except OSError:
            pass

    def _evict(self) -> None:
        with self._lock:
            try:
                entries = [e for e in os.scandir(self.directory) if e.name.endswith(".pch")]
                entries.sort(key=lambda e: e.stat().st_mtime, reverse=True)
            except OSError:
                return
            for entry in entries[MAX_PREAMBLES:]:
                self.drop(entry.name[:-len(".pch")])


def _write_atomically(path: str, text: str) -> None:
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write(text)
    os.replace(temporary, path)
