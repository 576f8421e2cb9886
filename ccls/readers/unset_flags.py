"""Flags a program never sets: the bytes of a file's static zero-filled globals (`static char
Bitlist[64];` of a generated state machine, `static int done;`) that no store of the module
makes nonzero. Only the module can write a static global whose address goes nowhere but into
its own loads and stores, so where every store into a byte puts 0 there, or a copy of a byte
that is itself never set, the byte holds 0 for the whole run, and a branch that tests it
always goes the same way (a state machine's chart that is never activated: `if
(Bitlist[active_X]) { … }` is skipped on every call). LLVM leaves such arrays alone (globalopt
folds a scalar never stored to, not an array's elements nor copies between them), and its
branch heuristics give the test an even chance.

A global whose address is used any other way (passed to a call, stored, compared, indexed and
then used otherwise) may be written anywhere: none of its bytes is known. Pure: the module's
IR text in, the bytes out; then a function's definitions in, the branches decided out.
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Mapping

from ccls.readers.llvm.text import VALUE_NAME

MAX_BYTES = 1 << 16  # a larger global is a buffer, not flags

_STATIC_ZERO = re.compile(rf"^@(?P<name>{VALUE_NAME}) = (?:internal|private) (?:unnamed_addr )?(?:local_unnamed_addr )?"
                          r"global (?:\[(?P<count>\d+) x i(?P<bits>\d+)\] zeroinitializer|i(?P<scalar>\d+) 0)(?:,|$)")
_GLOBAL_USE = re.compile(rf"@({VALUE_NAME})")
_DEFINE = re.compile(r"^define ")
_LOCAL_DEF = re.compile(rf"^\s*%(?P<name>{VALUE_NAME}) = (?P<rest>.*)$")
# A constant address into a global: `@g`, `getelementptr inbounds (i8, ptr @g, i64 10)`,
# `getelementptr inbounds ([64 x i16], ptr @g, i64 0, i64 3)`.
_ADDRESS = (rf"(?:@(?P<plain>{VALUE_NAME})|getelementptr (?:inbounds )?(?:nuw )?\((?:i(?P<ebits>\d+)|\[(?P<acount>\d+) x "
            rf"i(?P<abits>\d+)\]), ptr @(?P<based>{VALUE_NAME}), i64 (?P<first>-?\d+)(?:, i64 (?P<second>-?\d+))?\))")
_LOAD = re.compile(rf"^load i(?P<bits>\d+), ptr {_ADDRESS}(?:, align \d+)?(?:, !|$)")
_STORE = re.compile(rf"^\s*store i(?P<bits>\d+) (?P<value>-?\d+|true|false|%{VALUE_NAME}), ptr {_ADDRESS}"
                    r"(?:, align \d+)?(?:, !|$)")
_ANY_LOAD = re.compile(rf"^load [^,]+, ptr {_ADDRESS}(?:, align \d+)?(?:, !|$)")  # a read, whatever its type
_VARIABLE_GEP = re.compile(rf"^getelementptr (?:inbounds )?(?:nuw )?(?:i\d+|\[\d+ x i\d+\]), ptr @(?P<based>{VALUE_NAME}), "
                           rf"(?:i64 0, )?i64 %{VALUE_NAME}(?:, !|$)")
_STORE_TO_LOCAL = re.compile(rf"^\s*store i\d+ (?P<value>-?\d+|%{VALUE_NAME}), ptr %(?P<address>{VALUE_NAME})"
                             r"(?:, align \d+)?(?:, !|$)")
_LOAD_FROM_LOCAL = re.compile(rf"^\s*%{VALUE_NAME} = load [^,]+, ptr %(?P<address>{VALUE_NAME})(?:, align \d+)?(?:, !|$)")
_MEMSET = re.compile(rf"^\s*(?:tail )?call void @llvm\.memset\.[\w.]+\(ptr [^@%]*{_ADDRESS}, i8 (?P<fill>-?\d+),")
_CAST = re.compile(rf"^(?:zext|sext|trunc|freeze) (?:nneg )?i\d+ %(?P<of>{VALUE_NAME})(?: to i\d+)?(?:, !|$)")
_PHI_VALUES = re.compile(rf"\[\s*(-?\d+|true|false|%{VALUE_NAME}),\s*%{VALUE_NAME}\s*\]")
_SELECT = re.compile(rf"^select i1 (?P<cond>%{VALUE_NAME}|true|false), i(?P<bits>\d+) (?P<a>-?\d+|true|false|%{VALUE_NAME}), "
                     rf"i\d+ (?P<b>-?\d+|true|false|%{VALUE_NAME})(?:, !|$)")


def _bare(name: str) -> str:
    return name.lstrip("%@").strip('"')


def _offset(m: re.Match) -> tuple[str, int]:
    """(the global, the byte offset) of a matched constant address."""
    if m["plain"]:
        return _bare(m["plain"]), 0
    if m["ebits"]:
        return _bare(m["based"]), int(m["first"]) * int(m["ebits"]) // 8
    size = int(m["abits"]) // 8
    return _bare(m["based"]), int(m["first"]) * int(m["acount"]) * size + int(m["second"] or 0) * size


def _sources(value: str, definitions: Mapping[str, str], depth: int = 0) -> list[tuple[str, int, int]] | None:
    """Where a stored value comes from: [(global, byte offset, bytes)] of the loads it copies
    (through casts, phis and selects), a constant 0 adding nothing; None where it may be
    anything else (a nonzero constant, arithmetic, a call)."""
    if value in ("0", "false"):
        return []
    if not value.startswith("%") or depth > 8:
        return None
    text = definitions.get(_bare(value))
    if text is None:
        return None
    if (m := _LOAD.match(text)) is not None:
        return [(*_offset(m), max(1, int(m["bits"]) // 8))]
    if (m := _CAST.match(text)) is not None:
        return _sources(f"%{m['of']}", definitions, depth + 1)
    if text.startswith("phi "):
        values = _PHI_VALUES.findall(text)
    elif (m := _SELECT.match(text)) is not None:
        values = [m["a"], m["b"]]
    else:
        return None
    out: list[tuple[str, int, int]] = []
    for v in values:
        found = _sources(v, definitions, depth + 1)
        if found is None:
            return None
        out.extend(found)
    return out


def never_set_bytes(ir_text: str) -> dict[str, frozenset[int]]:
    """Each static zero-filled integer global (or array of integers) of the module whose
    address goes only into its own loads and stores (and zero fills) → the byte offsets no
    store ever makes nonzero; globals with none left out."""
    sizes: dict[str, int] = {}
    for line in ir_text.splitlines():
        if (m := _STATIC_ZERO.match(line)) is not None:
            size = int(m["count"]) * int(m["bits"]) // 8 if m["count"] else max(1, int(m["scalar"]) // 8)
            if 0 < size <= MAX_BYTES:
                sizes[_bare(m["name"])] = size
    if not sizes:
        return {}
    escaped: set[str] = set()
    maybe_set: dict[str, set[int]] = {g: set() for g in sizes}
    copies: list[tuple[tuple[str, int], tuple[str, int]]] = []  # (from byte, to byte)
    in_function, definitions, variable = False, {}, {}  # variable: a value → the global it indexes

    def write(target: str, offset: int, width: int, value: str) -> None:
        sources = _sources(value, definitions)
        if sources is None or any(g not in sizes or g in escaped for g, _, _ in sources):
            maybe_set[target].update(range(offset, offset + width))
            return
        for source, at, size in sources:
            for i in range(width):  # a narrower copy's upper bytes are its zero or sign extension
                copies.append(((source, at + min(i, size - 1)), (target, offset + i)))

    for line in ir_text.splitlines():
        if _DEFINE.match(line):
            in_function, definitions, variable = True, {}, {}
            continue
        if line.startswith("}"):
            in_function = False
            continue
        used = {_bare(g) for g in _GLOBAL_USE.findall(line)} & sizes.keys()
        named = _LOCAL_DEF.match(line) if in_function else None
        if named is not None:
            definitions[_bare(named["name"])] = named["rest"]
        if not in_function:
            escaped |= {g for g in used if not _STATIC_ZERO.match(line)}  # an initializer holding its address
            continue
        for address, target in list(variable.items()):
            if f"%{address}" in line and re.search(rf"%{re.escape(address)}(?![-\w.$])", line) \
                    and not (named and _bare(named["name"]) == address):
                if (s := _STORE_TO_LOCAL.match(line)) is not None and _bare(s["address"]) == address:
                    if _sources(s["value"], definitions) != []:
                        maybe_set[target].update(range(sizes[target]))  # anything, anywhere in it
                elif not ((l := _LOAD_FROM_LOCAL.match(line)) is not None and _bare(l["address"]) == address):
                    escaped.add(target)
        if not used:
            continue
        if named is not None and _ANY_LOAD.match(named["rest"]) is not None:
            continue
        if named is not None and (m := _VARIABLE_GEP.match(named["rest"])) is not None:
            if named["name"].startswith('"'):
                escaped.add(_bare(m["based"]))  # a quoted name: its uses are not followed
            variable[_bare(named["name"])] = _bare(m["based"])
            continue
        if (m := _STORE.match(line)) is not None and not re.search(r"@", m["value"]):
            target, offset = _offset(m)
            write(target, offset, max(1, int(m["bits"]) // 8), m["value"])
            continue
        if (m := _MEMSET.match(line)) is not None:
            if int(m["fill"]) != 0:
                maybe_set[_offset(m)[0]].update(range(sizes[_offset(m)[0]]))
            continue
        escaped |= used
    changed = True
    while changed:  # a copy of a byte that may be set may be set
        changed = False
        for (source, at), (target, offset) in copies:
            if (at in maybe_set[source] or source in escaped) and offset not in maybe_set[target]:
                maybe_set[target].add(offset)
                changed = True
    out = {g: frozenset(set(range(size)) - maybe_set[g]) for g, size in sizes.items() if g not in escaped}
    return {g: zeros for g, zeros in out.items() if zeros}


def _rhs(instr) -> str:
    """An instruction's text after its `%name = `."""
    return instr.text.split(" = ", 1)[1] if instr.name and " = " in instr.text else instr.text


def _always_zero(value: str, definitions: Mapping, unset: Mapping[str, frozenset[int]], depth: int = 0) -> bool:
    """Whether `value` is a load of bytes that are never set (or a cast of one)."""
    instr = definitions.get(_bare(value))
    if instr is None or depth > 8:
        return False
    text = _rhs(instr)
    if (m := _LOAD.match(text)) is not None:
        g, offset = _offset(m)
        return g in unset and set(range(offset, offset + max(1, int(m["bits"]) // 8))) <= unset[g]
    if (m := _CAST.match(text)) is not None:
        return _always_zero(m["of"], definitions, unset, depth + 1)
    return False


_ICMP = re.compile(rf"^icmp (?P<predicate>\w+) i\d+ (?P<a>-?\d+|%{VALUE_NAME}), (?P<b>-?\d+|%{VALUE_NAME})(?:, !|$)")
_LOGIC = re.compile(rf"^(?P<op>and|or|xor) i1 (?P<a>true|false|%{VALUE_NAME}), (?P<b>true|false|%{VALUE_NAME})(?:, !|$)")
_TRUNC_BIT = re.compile(rf"^trunc (?:nuw )?(?:nsw )?i\d+ %(?P<of>{VALUE_NAME}) to i1(?:, !|$)")
_COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b,
            "ult": lambda a, b: a < b, "ule": lambda a, b: a <= b, "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
            "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b}


def _integer(value: str, definitions: Mapping, unset: Mapping[str, frozenset[int]]) -> int | None:
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return 0 if _always_zero(value, definitions, unset) else None


def truth(value: str, definitions: Mapping, unset: Mapping[str, frozenset[int]], depth: int = 0) -> bool | None:
    """The value of an i1 that follows from never-set bytes being zero (comparisons of them with
    constants, and `and`, `or`, `xor`, `select` of those), or None where it does not."""
    if value in ("true", "false"):
        return value == "true"
    instr = definitions.get(_bare(value))
    if instr is None or depth > 12:
        return None
    text = _rhs(instr)
    if (m := _ICMP.match(text)) is not None and m["predicate"] in _COMPARE:
        a, b = (_integer(m[side], definitions, unset) for side in ("a", "b"))
        return None if a is None or b is None else _COMPARE[m["predicate"]](a, b)
    if (m := _TRUNC_BIT.match(text)) is not None:
        return False if _always_zero(m["of"], definitions, unset) else None
    if (m := _SELECT.match(text)) is not None and m["bits"] == "1":
        cond = truth(m["cond"], definitions, unset, depth + 1)
        a, b = (truth(m[side], definitions, unset, depth + 1) for side in ("a", "b"))
        return (a if cond else b) if cond is not None else a if a is not None and a == b else None
    if (m := _LOGIC.match(text)) is not None:
        a, b = (truth(m[side], definitions, unset, depth + 1) for side in ("a", "b"))
        if m["op"] == "and":
            return False if False in (a, b) else True if a is True and b is True else None
        if m["op"] == "or":
            return True if True in (a, b) else False if a is False and b is False else None
        return None if a is None or b is None else a != b
    return None


_BRANCH = re.compile(rf"^br i1 %(?P<cond>{VALUE_NAME}), label %(?P<true>{VALUE_NAME}), label %(?P<false>{VALUE_NAME})")
_SWITCH = re.compile(rf"^switch i\d+ %(?P<value>{VALUE_NAME}), label %(?P<default>{VALUE_NAME}) \[(?P<cases>[^\]]*)\]")
_CASE = re.compile(rf"i\d+ (?P<k>-?\d+), label %(?P<target>{VALUE_NAME})")


def decided_branches(terminators: Mapping, definitions: Mapping, unset: Mapping[str, frozenset[int]]
                     ) -> dict[tuple[str, str], Fraction]:
    """(block, target) → 1 or 0 for each branch (or switch) whose condition never-set bytes
    decide: the side they take runs whenever the branch does, the other never."""
    out: dict[tuple[str, str], Fraction] = {}
    if not unset:
        return out
    for block, term in terminators.items():
        text = term.text
        if (m := _BRANCH.match(text)) is not None and m["true"] != m["false"]:
            known = truth(m["cond"], definitions, unset)
            if known is not None:
                taken, other = (m["true"], m["false"]) if known else (m["false"], m["true"])
                out[(block, _bare(taken))], out[(block, _bare(other))] = Fraction(1), Fraction(0)
        elif (m := _SWITCH.match(text)) is not None and _always_zero(m["value"], definitions, unset):
            cases = [(int(c["k"]), _bare(c["target"])) for c in _CASE.finditer(m["cases"])]
            taken = next((target for k, target in cases if k == 0), _bare(m["default"]))
            for target in {_bare(m["default"]), *(t for _, t in cases)}:
                out[(block, target)] = Fraction(1 if target == taken else 0)
    return out
