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


_LOAD_FROM = re.compile(r"= load (?P<type>ptr|i\d+), ptr (?P<at>%(?:\"[^\"]+\"|[-\w.$]+)|@(?:\"[^\"]+\"|[-\w.$]+))")
_NOTHING = ("null", "0", "false")


def until_found_rounds(record, terminators: dict, reading: _Reading, function_blocks: list[str]
                       ) -> tuple[Fraction, str] | None:
    """(expected passes, why) for a search that leaves once a pass finds what it looks for: it
    clears a result kept in memory before the loop (`it->currentelem = NULL`), some pass stores
    one there, and an exit leaves as soon as it is not cleared (`while (… && it->currentelem ==
    NULL)`). Whether a pass finds it depends on data, which LLVM's static branch estimate takes
    as even odds: the passes are geometric, 2 expected, as for a loop run until a round changes
    nothing. None where the loop has no such exit."""
    inside = set(record.blocks)
    before = set(function_blocks[:function_blocks.index(record.header)]) - inside \
        if record.header in function_blocks else set()
    for block in record.blocks:
        branch = _BRANCH.match(terminators[block].text) if block in terminators else None
        test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
        compared = _ICMP_CLEARED.search(test.text.split(", !")[0]) if test is not None and test.opcode == "icmp" \
            else None
        if compared is None:
            continue
        stays = branch["true"] if compared["predicate"] == "eq" else branch["false"]
        leaves = branch["false"] if compared["predicate"] == "eq" else branch["true"]
        if stays.strip('"') not in inside or leaves.strip('"') in inside:
            continue  # not "go on while it is still cleared"
        at = _result_address(compared["value"].strip('"'), inside, reading)
        if at is None or reading.block_of.get(at.lstrip("%").strip('"')) in inside:
            continue  # no one place, or one the loop computes: not one result
        cleared = any(_stores(i, at) in _NOTHING for b in before for i in reading.instructions.get(b, ()))
        found = any(_stores(i, at) not in (None, *_NOTHING) for b in inside for i in reading.instructions.get(b, ()))
        if cleared and found:
            name = at.lstrip("%@").strip('"')
            return ROUNDS_EXPECTED, (f"it searches until a pass finds a result: what it keeps at `{name}` is cleared "
                                     f"before the loop, a pass that finds one stores it there, and the loop leaves "
                                     f"once it is set (or earlier on other data); a pass taken to find it as likely "
                                     f"as not (LLVM's even odds for data), {float(ROUNDS_EXPECTED):g} passes expected")
    return None


_BRANCH = re.compile(r"^br i1 %(?P<cond>\"[^\"]+\"|[-\w.$]+), label %(?P<true>\"[^\"]+\"|[-\w.$]+), "
                     r"label %(?P<false>\"[^\"]+\"|[-\w.$]+)")
_ICMP_CLEARED = re.compile(r"= icmp (?P<predicate>eq|ne) (?:ptr|i\d+) %(?P<value>\"[^\"]+\"|[-\w.$]+), (?:null|0)$")


def _result_address(value: str, inside: set[str], reading: _Reading) -> str | None:
    """The one address the tested value is the contents of: a load from it, or a phi of such
    loads, of values the loop stores there and of cleared constants (LLVM forwards a store)."""
    read = reading.definitions.get(value)
    if read is None:
        return None
    if read.opcode == "load":
        m = _LOAD_FROM.search(read.text.split(", !")[0])
        return m["at"] if m is not None else None
    if read.opcode != "phi":
        return None
    places = set()
    for incoming in _PHI_VALUE.findall(read.text):
        incoming = incoming.strip()
        if incoming in _NOTHING:
            continue
        name = incoming.lstrip("%").strip('"')
        stored = {m["at"].strip() for b in inside for i in reading.instructions.get(b, ())
                  if i.opcode == "store" and (m := _STORED.match(i.text)) is not None
                  and m["value"].strip() == incoming}
        loaded = _result_address(name, inside, reading) if not stored and reading.definitions.get(name) is not None \
            and reading.definitions[name].opcode == "load" else None  # the result read again
        places |= stored | ({loaded} if loaded else set())
        if not stored and loaded is None:
            return None
    return places.pop() if len(places) == 1 else None


_STORED = re.compile(r"^store (?:volatile )?(?:ptr|i\d+) (?P<value>[^,]+), ptr (?P<at>[^,]+)")


def _stores(instr, at: str) -> str | None:
    """The value `instr` stores at the address spelled `at`, or None."""
    if instr.opcode != "store":
        return None
    m = _STORED.match(instr.text)
    return m["value"].strip() if m is not None and m["at"].strip() == at else None
