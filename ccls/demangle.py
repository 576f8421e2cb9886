"""Display names for mangled C++/CUDA symbols: what `llvm-cxxfilt` prints, without the parameter
list where the name alone is unique in its module (overloads keep theirs, so no two functions
share a name). The one place ccls runs llvm-cxxfilt."""
from __future__ import annotations

import re
from typing import Iterable

from ccls import toolchain

_TIMEOUT_S = 10.0
_MEMORY_MB = 512

# Qualifiers c++filt prints after a member function's parameter list.
_TRAILING_QUALIFIERS = re.compile(r"(?:\s+(?:const|volatile|noexcept)|\s*&&?)$")
# `operator` and the symbol that names it; `operator int`, `operator new` etc. follow as words.
_OPERATOR = re.compile(r"\boperator(?:\(\)|\[\]|[<>=!+\-*/%^&|~,]+)?")


def demangled_names(mangled: Iterable[str]) -> dict[str, str]:
    """Display names of the `_Z…` symbols among `mangled`, by llvm-cxxfilt. Empty when the tool is
    missing, fails, times out or answers with another number of lines: callers then keep their
    own names (the symbol, or the PTX reader's simple demangling)."""
    wanted = sorted({name for name in mangled if name.startswith("_Z")})
    tool = toolchain.find_tool("llvm-cxxfilt")
    if not wanted or tool is None:
        return {}
    try:
        result = toolchain.run_tool([tool], input="\n".join(wanted) + "\n", timeout_s=_TIMEOUT_S,
                                    memory_mb=_MEMORY_MB)
    except (toolchain.ToolLimit, toolchain.ToolMissing, OSError):
        return {}
    lines = result.stdout.splitlines()
    if result.returncode != 0 or len(lines) != len(wanted):
        return {}
    printed = {name: full for name, full in zip(wanted, lines) if full != name}
    return unique_names(printed)


def unique_names(printed: dict[str, str]) -> dict[str, str]:
    """Each symbol's name without its parameter list, except where two symbols would then share
    a name (overloads): those keep the parameter list c++filt printed (`fmt::format(int)`)."""
    short = {symbol: without_parameters(full) for symbol, full in printed.items()}
    seen: dict[str, int] = {}
    for name in short.values():
        seen[name] = seen.get(name, 0) + 1
    return {symbol: name if seen[name] == 1 else name + parameter_list(printed[symbol])
            for symbol, name in short.items()}


def parameter_list(signature: str) -> str:
    """`void ns::f<int>(int, char) const` → `(int, char) const`; "" for a name that has none."""
    bare = _without_qualifiers(signature)
    if not bare.endswith(")"):
        return ""
    return signature[_opening_parenthesis(bare, len(bare) - 1):]


def without_parameters(signature: str) -> str:
    """`void ns::f<int>(int, char)` → `ns::f<int>`: the name as c++filt prints it, without its
    parameter list, its qualifiers (`const`) or the return type demangled template functions
    carry. A local scope's parameters go too: `f(int)::$_0::operator()(long) const` (a lambda
    in f) → `f::$_0::operator()`. `(anonymous namespace)` and a conversion operator's type
    (`operator int (*)(int)`) are part of the name."""
    text = _without_qualifiers(signature.strip())
    if text.endswith(")"):
        text = text[:_opening_parenthesis(text, len(text) - 1)]
    name, depth, start, index, in_operator = "", 0, 0, 0, False
    while index < len(text):
        operator = _OPERATOR.match(text, index) if depth == 0 and not in_operator else None
        if operator and (index == 0 or not (text[index - 1].isalnum() or text[index - 1] in "_$")):
            name += operator.group()
            index, in_operator = operator.end(), True  # spaces after it are the operator's type
            continue
        char = text[index]
        if char == "(" and depth == 0 and name and not name.endswith(("::", " ")):
            close = _closing_parenthesis(text, index)
            if text.startswith("::", close + 1):
                index = close + 1  # the enclosing function's parameters: skip them, keep the scope
                continue
        if char in "<({":
            depth += 1
        elif char in ">)}":
            depth -= 1
        elif char == " " and depth == 0 and not in_operator:
            start = len(name) + 1  # what came before is a return type
        name += char
        index += 1
    return name[start:]


def _without_qualifiers(text: str) -> str:
    while True:
        shorter = _TRAILING_QUALIFIERS.sub("", text)
        if shorter == text:
            return text
        text = shorter


def _closing_parenthesis(text: str, opening: int) -> int:
    depth = 0
    for index in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return len(text)


def _opening_parenthesis(text: str, closing: int) -> int:
    depth = 0
    for index in range(closing, -1, -1):
        depth += {")": 1, "(": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return 0
