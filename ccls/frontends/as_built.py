"""Functions local to a unit, optimised as the build optimises them and reported on their own.

clang -O2 decides by its own rules whether a static function is inlined (one caller: nearly
always, whatever its size), so a caller's code as built, and its executed instructions, include
the static callees it inlined. ccls also reports every function by itself, so before
optimisation each static function that something references gets a twin: the twin keeps the
local linkage and takes every reference, so the optimiser inlines it, specialises it or keeps
it exactly as in the build, and has debug info of its own, so that its code inlined into a
caller keeps its source lines. The original, made external, nobody calls: it is optimised whole
and reported under its own name. Inline and template functions (linkonce/weak) are inlined by
the same rules whether or not they are external, so they are only made external."""
from __future__ import annotations

import re

from ccls.readers.llvm.text import TWIN_SUFFIX

_KEPT_LINKAGE = re.compile(r"^define (?:linkonce_odr|linkonce|weak_odr|available_externally) ", re.M)
_LOCAL_DEFINE = re.compile(r'^define (?P<linkage>internal|private) [^\n]*?@(?P<name>"[^"]+"|[-\w.$]+)\(', re.M)
_REFERENCE = re.compile(r'@("[^"]+"|[-\w.$]+)')
_BODY_END = re.compile(r"^}\n?", re.M)
_DEBUG_RECORD = re.compile(r"^\s*(?:#dbg_\w+\(|(?:tail )?call void @llvm\.dbg\.)[^\n]*\n", re.M)
_COMDAT = re.compile(r" comdat(?:\(\$[^)]*\))?")
_METADATA_NODE = re.compile(r"^!(\d+) = ([^\n]*)$", re.M)


def twin_of(name: str) -> str:
    """A function's name, written as IR writes it (`@` excluded), for its as-built twin."""
    return f'"{name[1:-1]}{TWIN_SUFFIX}"' if name.startswith('"') else name + TWIN_SUFFIX


def with_twins(ir: str) -> str:
    """`ir` (clang's, before optimisation) with every referenced static function twinned as
    the module docstring says, and every function emitted where used made external."""
    bodies = {m["name"]: (m.start(), _body_end(ir, m.end())) for m in _LOCAL_DEFINE.finditer(ir)}
    referenced = _referenced_elsewhere(ir, bodies)
    if not referenced:
        return _external(ir)

    def renamed(text: str, keep: str | None = None) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            return m.group(0) if name == keep or name not in referenced else "@" + twin_of(name)
        return _REFERENCE.sub(one, text)

    out, cursor, twins = [], 0, []
    for name, (start, end) in sorted(bodies.items(), key=lambda item: item[1][0]):
        if name not in referenced:
            continue
        out.append(renamed(ir[cursor:start]))
        out.append(renamed(ir[start:end], keep=name))
        twins.append(renamed(ir[start:end]))
        cursor = end
    out.append(renamed(ir[cursor:]))
    text = _external("".join(out))
    metadata_at = _first_metadata(text)
    copies = _DebugCopies(text[metadata_at:])
    twin_text = "".join(copies.own(_COMDAT.sub("", twin)) for twin in twins)
    return text[:metadata_at] + twin_text + "\n" + text[metadata_at:] + copies.added()


_LOCAL_LINKAGE = re.compile(r"^define (?:internal|private) ", re.M)


def _external(ir: str) -> str:
    return _KEPT_LINKAGE.sub("define ", _LOCAL_LINKAGE.sub("define ", ir))


def _body_end(ir: str, after: int) -> int:
    found = _BODY_END.search(ir, after)
    return len(ir) if found is None else found.end()


def _referenced_elsewhere(ir: str, bodies: dict[str, tuple[int, int]]) -> set[str]:
    """Static functions named anywhere but their own definition (calls, address taken)."""
    spans = sorted((start, end, name) for name, (start, end) in bodies.items())
    referenced: set[str] = set()
    span_at = 0
    for m in _REFERENCE.finditer(ir):
        name = m.group(1)
        if name not in bodies or name in referenced:
            continue
        while span_at < len(spans) and spans[span_at][1] <= m.start():
            span_at += 1
        inside = spans[span_at][2] if span_at < len(spans) and spans[span_at][0] <= m.start() else None
        if inside != name:
            referenced.add(name)
    return referenced


def _first_metadata(text: str) -> int:
    """Where the module's trailing attributes and metadata begin (twins go before them)."""
    found = re.search(r"^(?:attributes #|!)", text, re.M)
    return len(text) if found is None else found.start()


class _DebugCopies:
    """Debug info of a twin's own: a DISubprogram belongs to one function, so each twin gets a
    copy of its original's, and copies of the locations, scopes and loop nodes that lead to it
    (inlined into a caller, the twin's code keeps its own source lines, as any inlined code
    does). Metadata reached from the twin that does not lead to the subprogram is shared."""

    def __init__(self, metadata: str):
        self._nodes = {m.group(1): m.group(2) for m in _METADATA_NODE.finditer(metadata)}
        self._next = max((int(k) for k in self._nodes), default=-1) + 1
        self._lines: list[str] = []

    def own(self, twin: str) -> str:
        # Debug records name variables of the original's scope (ccls compiles with line
        # tables only, which has none; a twin needs none either).
        twin = _DEBUG_RECORD.sub("", twin)
        subprogram = _SUBPROGRAM.search(twin[:twin.find("\n")])
        if subprogram is None or subprogram.group(1) not in self._nodes:
            return twin  # no debug info of its own to copy
        copied: dict[str, str] = {subprogram.group(1): self._new(self._nodes[subprogram.group(1)])}

        def copy(node: str) -> str:
            if node not in copied:
                copied[node] = node  # a cycle back here (a loop node's self-reference) stays
                text = self._nodes.get(node, "")
                if text.startswith(_SCOPED) or _is_loop(text, node):
                    inner = _NODE_REF.sub(lambda m: "!" + (m.group(1) if m.group(1) == node else copy(m.group(1))), text)
                    if inner != text or _is_loop(text, node):
                        new = self._new("")
                        self._lines[-1] = f"!{new} = " + _NODE_REF.sub(
                            lambda m: f"!{new}" if m.group(1) == node else m.group(0), inner)
                        copied[node] = new
            return copied[node]
        return _ATTACHED.sub(lambda m: f"{m.group(1)} !{copy(m.group(2))}", twin)

    def _new(self, text: str) -> str:
        node = str(self._next)
        self._next += 1
        self._lines.append(f"!{node} = {text}")
        return node

    def added(self) -> str:
        return "".join(line + "\n" for line in self._lines)


_SUBPROGRAM = re.compile(r" !dbg !(\d+) \{$")
_ATTACHED = re.compile(r"(!dbg|!llvm\.loop) !(\d+)")
_NODE_REF = re.compile(r"!(\d+)")
_SCOPED = ("!DILocation(", "distinct !DILexicalBlock", "!DILexicalBlock")


def _is_loop(text: str, node: str) -> bool:
    return text.startswith(f"distinct !{{!{node},")
