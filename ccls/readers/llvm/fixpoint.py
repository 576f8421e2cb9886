"""Loops that run until nothing changes: `while (!stable) { stable = 1; … if (moved) stable = 0; }`.

Each round first sets a flag to "settled", and a round that changes something sets it back;
the loop leaves at the end of the first round that changed nothing. ScalarEvolution sees no
counter, so without this the loop would get the default count. A round changes something or
not on data the program reads, which LLVM's static branch estimate takes as even odds (50 %):
the rounds are then geometric, 1 / (1 − ½) = 2 expected, the one that moves and the one that
finds nothing more to do. Only loops with no loop inside: one whose rounds each sweep a loop
(a bubble sort's `swapped` flag) repeats once per element out of place, not a couple of times.
"""
from __future__ import annotations

import re
from fractions import Fraction

from ccls.readers.llvm.reading import _exit_test, _Reading
from ccls.readers.scev import FunctionAnalyses

# A round changes something as likely as not (BranchProbabilityInfo's even odds for data): 1/(1 − ½).
ROUNDS_EXPECTED = Fraction(2)
_STORE_CONSTANT = re.compile(r"^store (?P<type>i\d+) (?P<value>-?\d+|true|false), ptr @(?P<name>\"[^\"]+\"|[-\w.$]+)")
_LOAD_GLOBAL = re.compile(r"= load (?P<type>i\d+), ptr @(?P<name>\"[^\"]+\"|[-\w.$]+)")
_PHI_VALUE = re.compile(r"\[\s*([^,\]]+),")
_ICMP_CONSTANT = re.compile(r"= icmp (?P<predicate>eq|ne) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), (?P<k>-?\d+|true|false)")


def fixpoint_rounds(record, analyses: FunctionAnalyses, terminators: dict,
                    reading: _Reading) -> tuple[Fraction, str] | None:
    """(expected rounds, why) for a loop whose only exit tests a global flag that its header
    sets, each round, to the value that leaves: a loop run to a fixpoint. None otherwise."""
    if any(loop.parent == record.header for loop in analyses.loops.values()):
        return None  # a sweep inside each round: rounds scale with what it sweeps
    branch, test = _exit_test(record, terminators, reading)
    compared = _ICMP_CONSTANT.search(test.text) if test is not None else None
    if compared is None:
        return None
    flag = _flag_read(compared["value"].strip('"'), reading)
    settled = _header_sets(record.header, flag, reading) if flag is not None else None
    if settled is None:
        return None
    inside = set(record.blocks)
    equal_leaves = branch["true"].strip('"') not in inside if compared["predicate"] == "eq" \
        else branch["false"].strip('"') not in inside
    if (_as_int(settled) == _as_int(compared["k"])) != equal_leaves:
        return None  # the value the header sets does not leave: not "until settled"
    name = flag.strip('"')
    return ROUNDS_EXPECTED, (f"it runs until a round changes nothing: each round sets `{name}` to {settled}, the "
                             f"value that leaves, and a round that changes something sets it back; a round taken to "
                             f"change something as likely as not (LLVM's even odds for data), "
                             f"{float(ROUNDS_EXPECTED):g} rounds expected")


def _flag_read(value: str, reading: _Reading, depth: int = 0) -> str | None:
    """The global `value` reads: a load of it, or a phi of such loads and constants (the value a
    store just before forwards, `phi [ %stable.pre, … ], [ 0, %if.then ]`). None otherwise."""
    instr = reading.definitions.get(value)
    if instr is None or depth > 3:
        return None
    if instr.opcode == "load":
        m = _LOAD_GLOBAL.search(instr.text)
        return m["name"] if m else None
    if instr.opcode != "phi":
        return None
    read = {_flag_read(v[1:].strip('"'), reading, depth + 1) if v.startswith("%") else "constant"
            for v in _PHI_VALUE.findall(instr.text)}
    read.discard("constant")
    return read.pop() if len(read) == 1 and None not in read else None


def _header_sets(header: str, flag: str, reading: _Reading) -> str | None:
    """The constant the header stores into `flag` before anything in it could write or call."""
    for instr in reading.instructions.get(header, ()):
        if instr.opcode == "store":
            m = _STORE_CONSTANT.match(instr.text)
            if m and m["name"] == flag:
                return m["value"]
            if f"@{flag}" in instr.text or not re.search(r"ptr @", instr.text):
                return None  # written with another value, or through a pointer that may be it
        elif instr.opcode in ("call", "invoke"):
            return None
    return None


def _as_int(text: str) -> int:
    return {"true": 1, "false": 0}[text] if text in ("true", "false") else int(text)
