"""Loops that run only where a branch has bounded their size: `if (size <= 32) insertion_sort(a,
size); else merge_sort(a, size);` — the small case of a hybrid sort, a short-input path.

A loop's count in a size (`size - 1`) is evaluated at the size the program is analysed at (a
call site's 400, the default 1000). Where every path into the loop passes a branch that goes
there only while that size is at most C, the loop runs only for sizes up to C: its count there
is at most its formula at C. That cap replaces a count the guard makes impossible.

Pure: IR values (`ccls.readers.llvm.text.IRInstruction`) in, caps and their reasons out.
"""
from __future__ import annotations

import re
from fractions import Fraction

from ccls.polynomial import Polynomial
from ccls.readers.data_walks import BRANCH, _unquote
from ccls.readers.llvm.reading import _successors

_CASTS = ("zext", "sext", "trunc", "freeze")
_COMPARE = re.compile(r"= icmp (?P<predicate>[a-z]+) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), (?P<constant>-?\d+)\s*(?:,|$)")
# The most `value` can be on the edge that a compare `value <predicate> C` sends to: when the
# compare holds (true edge), or fails (false edge).
_HOLDS = {"slt": -1, "ult": -1, "sle": 0, "ule": 0, "eq": 0}
_FAILS = {"sgt": 0, "ugt": 0, "sge": -1, "uge": -1, "ne": 0}


def guard_caps(header: str, terminators: dict, definitions: dict, symbol_of: dict[str, str],
               dominators: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Symbol → (the most it can be where the loop at `header` runs, why), from the branches
    every path into the loop passes (the edges into the blocks that dominate it, each block
    entered from one predecessor only) that compare a named value (`symbol_of`: an IR value →
    the size it is) with a constant. `dominators`: each block's immediate dominator."""
    predecessors = _predecessors(terminators)
    caps: dict[str, tuple[int, str]] = {}
    block = header
    while block in dominators and dominators[block] != block:
        before = predecessors.get(block, [])
        if len(before) == 1:
            found = _cap_on_edge(terminators.get(before[0]), block, definitions, symbol_of)
            if found is not None:
                symbol, most, why = found
                if most < caps.get(symbol, (most + 1, ""))[0]:
                    caps[symbol] = (most, why)
        block = dominators[block]
    return caps


def _predecessors(terminators: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for block, term in terminators.items():
        for target in dict.fromkeys(_successors(term)):
            out.setdefault(target, []).append(block)
    return out


def _cap_on_edge(term, target: str, definitions: dict, symbol_of: dict[str, str]) -> tuple[str, int, str] | None:
    """(symbol, its most, why) where `term` is a branch on `value <predicate> C` whose edge to
    `target` bounds a named value from above; else None."""
    branch = BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
    if branch is None:
        return None
    true, false = _unquote(branch["true"]), _unquote(branch["false"])
    if true == false:
        return None
    test = definitions.get(_unquote(branch["cond"]))
    compare = _COMPARE.search(test.text.split(", !")[0]) if test is not None and test.opcode == "icmp" else None
    if compare is None:
        return None
    predicate, constant = compare["predicate"], int(compare["constant"])
    table = _HOLDS if target == true else _FAILS
    if predicate not in table:
        return None
    symbol = symbol_of.get(_uncast(_unquote(compare["value"]), definitions))
    if symbol is None:
        return None
    most = constant + table[predicate]
    spelled = {"slt": "<", "ult": "<", "sle": "<=", "ule": "<=", "sgt": ">", "ugt": ">", "sge": ">=",
               "uge": ">=", "eq": "==", "ne": "!="}[predicate]
    side = "holds" if target == true else "fails"
    return symbol, most, f"it runs only where `{symbol} {spelled} {constant}` {side}, so {symbol} <= {most} there"


def _uncast(name: str, definitions: dict) -> str:
    for _ in range(4):
        instr = definitions.get(name)
        if instr is None or instr.opcode not in _CASTS or not instr.operands[0].name:
            return name
        name = instr.operands[0].name
    return name


def capped_count(iterations: Polynomial, caps: dict[str, tuple[int, str]]) -> tuple[Polynomial, str] | None:
    """The count at its guards' caps, where every size it names is capped and the count grows
    with them (it is smaller at the caps than past them): (the capped count, why); else None."""
    symbols = iterations.symbols
    if not symbols or not symbols <= caps.keys():
        return None
    capped = iterations.evaluate({s: caps[s][0] for s in symbols})
    past = iterations.evaluate({s: 2 * caps[s][0] + 1 for s in symbols})
    if capped >= past or capped < 0:
        return None
    return Polynomial.constant(Fraction(capped).limit_denominator(1000)), \
        "; ".join(caps[s][1] for s in sorted(symbols))
