"""A sift-down whose children LLVM carries round the loop: `l = 2*i + 1; r = l + 1;` computed
at the end of one iteration from the index it chose, for the next (sglib's, and any heap's
`do { i = m; l = 2*i+1; … if (a[m] < a[l]) m = l; … } while (m != i)` once rotated).

The index phi's next value merges itself with phis that each hold 2·index + c; the loop leaves
when the merge keeps the index. So each iteration that goes round at least doubles the index
plus one: a heap's depth, log₂ of the bound the children are compared with.

Pure: the loop's instructions in, the phis that make up the index's growth out.
"""
from __future__ import annotations

import re
from typing import Mapping

from ccls.readers.llvm.text import VALUE_NAME

_PHI_INCOMING = re.compile(rf"\[\s*(%?{VALUE_NAME}),\s*%({VALUE_NAME})\s*\]")
_DOUBLED = re.compile(rf"^%{VALUE_NAME} = (?:shl(?: nuw)?(?: nsw)? i\d+ %(?P<shl>{VALUE_NAME}), 1|"
                      rf"mul(?: nuw)?(?: nsw)? i\d+ %(?P<mul>{VALUE_NAME}), 2)$")
_PLUS = re.compile(rf"^%{VALUE_NAME} = (?:or disjoint|add(?: nuw)?(?: nsw)?) i\d+ %(?P<of>{VALUE_NAME}), (?P<c>\d+)$")
_EQUAL = re.compile(rf"= icmp (?:eq|ne) i\d+ %(?P<a>{VALUE_NAME}), %(?P<b>{VALUE_NAME})$")
_COMPARE = re.compile(rf"= icmp \w+ i\d+ %(?P<a>{VALUE_NAME}), %(?P<b>{VALUE_NAME})$")
_CAST = re.compile(rf"= (?:sext|zext)(?: nneg)? i\d+ %(?P<of>{VALUE_NAME}) to i\d+$")
_MOST_ADDED = 16  # a child is the index doubled plus a small constant (1 and 2 for a binary heap)


def _bare(name: str) -> str:
    return name.lstrip("%").strip('"')


def _text(value: str, definitions: Mapping) -> str:
    instr = definitions.get(_bare(value))
    return instr.text.split(", !")[0] if instr is not None else ""


def _doubled_plus(value: str, of: str, definitions: Mapping) -> bool:
    """Whether `value` is 2·`of` + c (1 ≤ c ≤ 16), or, `of` a constant, that constant number."""
    if value.isdigit() and of.isdigit():
        return 1 <= int(value) - 2 * int(of) <= _MOST_ADDED
    plus = _PLUS.match(_text(value, definitions))
    doubled = _DOUBLED.match(_text(plus["of"], definitions)) if plus and 1 <= int(plus["c"]) <= _MOST_ADDED else None
    return doubled is not None and _bare(doubled["shl"] or doubled["mul"]) == _bare(of)


def _split(phi_text: str, inside: set[str]) -> tuple[str, str] | None:
    """(start, step) of a header phi with one value from outside the loop and one from inside."""
    pairs = [(_bare(value), _bare(block)) for value, block in _PHI_INCOMING.findall(phi_text)]
    start = [value for value, block in pairs if block not in inside]
    step = [value for value, block in pairs if block in inside]
    return (start[0], step[0]) if len(start) == 1 and len(step) == 1 else None


def _merged_from(value: str, allowed: set[str], definitions: Mapping, depth: int = 0) -> set[str] | None:
    """The values of `allowed` that `value` merges (through phis and selects), or None where it
    merges anything else."""
    if value in allowed:
        return {value}
    instr = definitions.get(value)
    if instr is None or depth > 4 or instr.opcode not in ("phi", "select"):
        return None
    arms = ([_bare(v) for v, _ in _PHI_INCOMING.findall(instr.text)] if instr.opcode == "phi"
            else [op.name for op in instr.operands[1:3]])
    found: set[str] = set()
    for arm in arms:
        if (sub := _merged_from(arm, allowed, definitions, depth + 1)) is None:
            return None
        found |= sub
    return found


def child_growth(index: str, header_phis: Mapping[str, str], inside: set[str], loop_instrs: list[tuple[str, str]],
                 definitions: Mapping) -> set[str] | None:
    """The values that stand for the index's growth (its children's phis, their next values and
    casts of them, to find the bound they are compared with), where `index`, a header phi
    (`header_phis`: name → text), goes round as a merge of itself and phis holding 2·index + c,
    and the loop leaves when that merge equals it (`loop_instrs`: its instructions' (name, text
    without metadata)); else None."""
    split = _split(header_phis[index], inside)
    if split is None:
        return None
    start, step = split
    children = {}
    for name, text in header_phis.items():
        other = _split(text, inside) if name != index else None
        if other is not None and _doubled_plus(other[0], start, definitions) and _doubled_plus(other[1], step,
                                                                                             definitions):
            children[name] = other[1]
    merged = _merged_from(step, {index, *children}, definitions) if children else None
    if not merged or not merged & children.keys():
        return None
    if not any((m := _EQUAL.search(text)) and {_bare(m["a"]), _bare(m["b"])} == {index, step}
               for _, text in loop_instrs):
        return None  # it must leave when it keeps the index: else a round might not go down a level
    grown = {step, *children, *children.values()}
    return grown | {name for name, text in loop_instrs if (m := _CAST.search(text)) and _bare(m["of"]) in grown}


def compared_with(grown: set[str], loop_instrs: list[tuple[str, str]]) -> set[str]:
    """What the loop compares the growing values with (`icmp … %child, %n`): the bounds."""
    out = set()
    for _, text in loop_instrs:
        m = _COMPARE.search(text)
        if m and (m["a"] in grown) != (m["b"] in grown):
            out.add(m["b"] if m["a"] in grown else m["a"])
    return out
