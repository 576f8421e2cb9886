"""A compiler's first error as one message: its `file:line: error:` line first (the line a table
shows), the source excerpt and notes under it, then the chain of includes that led there. Shared
by the C-family and CUDA front ends (clang and nvcc formats). Pure: text in, text out."""
from __future__ import annotations

import os
import re
from typing import NamedTuple

# clang: `file.c:12:5: error: ...`, `fatal error: ...`; nvcc: `file.cu(12): error: ...`,
# `catastrophic error: ...`.
_DIAGNOSTIC = re.compile(r"^(?P<file>[^\n(:]+?)(?:\((?P<nvline>\d+)\)|:(?P<line>\d+):(?:\d+:)?) ?:? "
                         r"(?P<kind>(?:catastrophic |fatal )?error|warning|note|remark): (?P<msg>.*)$")
_INCLUDED_FROM = re.compile(r"^In file included from (?P<file>[^\n]+?):(?P<line>\d+)[:,]$")
_MAX_LINES = 16
_MAX_CHARS = 2000


class FirstError(NamedTuple):
    line: int | None  # in the main file: the error's line, or the #include that leads to it
    message: str


def first_error(stderr: str, main_name: str, tool: str = "the compiler") -> FirstError:
    """The first error in `stderr`, for a main file whose name (as the compiler printed it) ends
    in `main_name`. Without a recognisable error line, the whole output, cut to a readable size."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for index, text in enumerate(lines):
        found = _DIAGNOSTIC.match(text)
        if found is None or "error" not in found["kind"]:
            continue
        chain = _include_chain(lines, index)
        detail = _detail(lines, index + 1)
        message = "\n".join([text, *detail, *(f"  included from {f}:{n}" for f, n in chain)])
        return FirstError(_line_in_main(found, chain, main_name), _cut(message))
    whole = "\n".join(lines)
    return FirstError(None, _cut(f"{tool} failed: {whole}" if whole else f"{tool} failed without a message"))


def _include_chain(lines: list[str], index: int) -> list[tuple[str, int]]:
    """`In file included from a.c:2:` lines just above the error, innermost first."""
    chain = []
    at = index - 1
    while at >= 0 and (found := _INCLUDED_FROM.match(lines[at])):
        chain.append((found["file"], int(found["line"])))
        at -= 1
    return chain


def _detail(lines: list[str], start: int) -> list[str]:
    """The excerpt (`  167 | ...`, carets) and notes that belong to the diagnostic, up to the next
    diagnostic, include chain, or summary (`1 error generated`)."""
    detail = []
    for text in lines[start:]:
        found = _DIAGNOSTIC.match(text)
        if _INCLUDED_FROM.match(text) or re.match(r"^\d+ errors? (generated|detected)", text):
            break
        if found is not None and found["kind"] != "note":
            break
        detail.append(text)
    return detail


def _line_in_main(found: re.Match, chain: list[tuple[str, int]], main_name: str) -> int | None:
    if _is_main(found["file"], main_name):
        return int(found["nvline"] or found["line"])
    for file, line in reversed(chain):  # outermost include: the line of the user's #include
        if _is_main(file, main_name):
            return line
    return None


def _is_main(file: str, main_name: str) -> bool:
    return os.path.basename(file.strip()) == os.path.basename(main_name)


def _cut(message: str) -> str:
    lines = message.splitlines()
    if len(lines) > _MAX_LINES:
        lines = [*lines[:_MAX_LINES], f"… {len(lines) - _MAX_LINES} more lines"]
    text = "\n".join(lines)
    return text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS] + " …"
