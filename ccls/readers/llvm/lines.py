"""Source lines from the module's debug information: each instruction's line, each function's
subprogram, and the reader's notes said in the source's terms (a loop by its line).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field


_DILOCATION = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)(?:[^\n]*?inlinedAt: !(\d+))?", re.M)
_DISUBPROGRAM = re.compile(r"^!(\d+) = (?:distinct )?!DISubprogram\((?P<body>.*)\)$", re.M)
_DEFINE_DBG = re.compile(r"^define [^\n]*?@(\"[^\"]+\"|[-\w.$]+)\([^\n]*!dbg !(\d+)", re.M)


_DIFILE = re.compile(r'^!(\d+) = (?:distinct )?!DIFile\(filename: "([^"]*)"(?:, directory: "([^"]*)")?', re.M)


def _subprogram_info(ir: str) -> dict[str, tuple[str, int | None, str | None]]:
    """DISubprogram id → (name, line, file path: as the compiler named it, joined to its
    directory)."""
    files = {m.group(1): os.path.normpath(os.path.join(m.group(3) or "", m.group(2))) for m in _DIFILE.finditer(ir)}
    info = {}
    for m in _DISUBPROGRAM.finditer(ir):
        body = m["body"]
        name = re.search(r'name: "([^"]*)"', body)
        line = re.search(r"\bline: (\d+)", body)
        file_id = re.search(r"\bfile: !(\d+)", body)
        info[m.group(1)] = (name.group(1) if name else "", int(line.group(1)) if line else None,
                            files.get(file_id.group(1)) if file_id else None)
    return info


def _source_lines(ir: str) -> dict[str, int]:
    """Debug location id → the line in the analysed function: code inlined from elsewhere (a
    header's `operator[]`) counts at the call site it was inlined into, outermost first."""
    own: dict[str, tuple[int, str | None]] = {m.group(1): (int(m.group(2)), m.group(3))
                                               for m in _DILOCATION.finditer(ir)}
    lines: dict[str, int] = {}
    for location in own:
        line, inlined_at, seen = *own[location], {location}
        while inlined_at is not None and inlined_at in own and inlined_at not in seen:
            seen.add(inlined_at)
            line, inlined_at = own[inlined_at]
        lines[location] = line
    return lines


_SCOPED_LOCATION = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\([^\n]*?scope: !(\d+)[^\n]*?inlinedAt: !\d+", re.M)


def _inlined_from(ir: str, subprograms: dict[str, tuple[str, int | None, str | None]]) -> dict[str, str]:
    """Debug location id → the name of the function its code was inlined from (its scope's
    subprogram, from `_subprogram_info`), for code inlined into another function."""
    return {m.group(1): subprograms[m.group(2)][0] for m in _SCOPED_LOCATION.finditer(ir)
            if m.group(2) in subprograms and subprograms[m.group(2)][0]}


_IR_NAME = re.compile(r'(loop )?%("[^"]+"|[-\w.$]+)')


@dataclass
class _Speech:
    """The reader's notes in the source's terms: a loop by its line, a value by the line it is
    read or computed at, an argument by its name. A name without a line (IR without debug
    information: the user's own .ll) stays as it is."""

    loop_lines: dict[str, int]  # header → line
    value_lines: dict[str, int]
    loaded: set[str]
    parameters: set[str]
    loop_origins: dict[str, str] = field(default_factory=dict)  # header → the function it was inlined from

    def text(self, note: str) -> str:
        return _IR_NAME.sub(self._say, note)

    def _say(self, m: re.Match) -> str:
        loop, name, trail = m.group(1) or "", m.group(2).strip('"'), ""
        while name.endswith(".") and not self._known(name):  # a sentence's full stop
            name, trail = name[:-1], trail + "."
        if name in self.loop_lines:
            origin = f" (in {self.loop_origins[name]}, inlined)" if name in self.loop_origins else ""
            return f"{'loop' if loop else 'the loop'} at line {self.loop_lines[name]}{origin}{trail}"
        if name in self.parameters:
            return f"{loop}{name}{trail}"
        if name in self.value_lines:
            how = "read" if name in self.loaded else "computed"
            return f"{loop}the value {how} at line {self.value_lines[name]}{trail}"
        return m.group(0)

    def _known(self, name: str) -> bool:
        return name in self.loop_lines or name in self.parameters or name in self.value_lines


def _value_lines(body: list, dbg_ids: list[str | None], dilocation_lines: dict[str, int]) -> dict[str, int]:
    """The source line of each named value: its own, else its block's first (a phi has none)."""
    blocks = _first_lines(body, dbg_ids, dilocation_lines)
    out: dict[str, int] = {}
    for block, instr, line in _instruction_lines(body, dbg_ids, dilocation_lines):
        if instr.name and (line or block in blocks):
            out[instr.name] = line or blocks[block]
    return out


def _first_lines(body: list, dbg_ids: list[str | None], dilocation_lines: dict[str, int]) -> dict[str, int]:
    """The first source line of each block."""
    out: dict[str, int] = {}
    for name, _, line in _instruction_lines(body, dbg_ids, dilocation_lines):
        if name not in out and line:
            out[name] = line
    return out


def _instruction_lines(body: list, dbg_ids: list[str | None], dilocation_lines: dict[str, int]):
    """(block, instruction, source line or None) in order (instructions are numbered as
    `dbg_ids` lists them)."""
    position = -1
    for block, instrs in body:
        for instr in instrs:
            position += 1
            dbg_id = dbg_ids[position] if position < len(dbg_ids) else None
            yield block, instr, dilocation_lines.get(dbg_id) if dbg_id else None
