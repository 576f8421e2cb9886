"""Loops the data decides, named after what decides them, where nothing counts them.

Three shapes of real C code run a number of rounds that no analysis of the code can know:

- a quantity consumed to zero in amounts decided at run time (`while (len) { n = len < have ?
  len : have; …; len -= n; }`, buffered reads and writes, a stored block copied as room
  allows): `chunks(len)`, the number of pieces `len` is taken in;
- a state machine (`for (;;) switch (state->mode)`): `steps(state->mode)`, the number of
  states it passes through before one leaves;
- a loop that repeats a call until the call says it is done (`do err = deflate(…); while (err
  == Z_OK);`): `calls(deflate)`.

Each count is a symbol the user can set (`--param 'chunks(len)=N'`); unset, it is the default
trip count (as an unknown count is), and it stays a guess: it joins nests of unknown loops
(`ccls.unknown_nests`) as an unknown loop does. Naming it says what the count is of, which an
unknown count does not; it never claims a number nobody gave.
"""
from __future__ import annotations

import re

from ccls.readers import data_walks
from ccls.readers.llvm.physical_bounds import _PHI_PAIR, _ZERO_COMPARE, spelled, uncast
from ccls.readers.llvm.reading import _Reading


_SUB = re.compile(r"= sub(?: nuw| nsw)* i\d+ %(?P<a>\"[^\"]+\"|[-\w.$]+), (?P<b>%(?:\"[^\"]+\"|[-\w.$]+)|-?\d+)(?:,|$)")
_CALL_TEST = re.compile(r"= icmp (?:eq|ne) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), -?\d+(?:,|$)")
_CALLEE = re.compile(r"@(?P<name>[-\w.$]+)\(")
_JOINED = re.compile(r"= (?:(?P<op>and|or) i1 (?P<a>%[-\w.$\"]+), (?P<b>%[-\w.$\"]+)"
                     r"|(?P<sel>select) i1 (?P<c>%[-\w.$\"]+), i1 (?:(?P<d>%[-\w.$\"]+), i1 (?P<k>false)"
                     r"|(?P<k2>true), i1 (?P<e>%[-\w.$\"]+)))(?:,|$)")


def named_rounds(record, terminators: dict, reading: _Reading, parameters: set[str]) -> tuple[str, str] | None:
    """(the symbol, why) for a loop of one of the three shapes; None otherwise."""
    return (_consumed_to_zero(record, terminators, reading, parameters)
            or _state_machine(record, terminators, reading, parameters)
            or _until_a_call_says_done(record, terminators, reading))


def _exit_tests(record, terminators: dict, reading: _Reading):
    """(the test, whether its being true leaves, the successor that stays, the branch's block) for each two-way
    branch of the loop with one side outside it; a branch on `a && b` that stays when true (or
    on `a || b` that leaves when true) gives each of its tests, as C's `while (left && !eol)`."""
    inside = set(record.blocks)
    for block in record.blocks:
        term = terminators.get(block)
        branch = data_walks.BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
        if branch is None:
            continue
        true, false = branch["true"].strip('"'), branch["false"].strip('"')
        if (true in inside) == (false in inside):
            continue
        stays = true if true in inside else false
        for test in _conjuncts(branch["cond"].strip('"'), "and" if true in inside else "or", reading):
            yield test, true not in inside, stays, block


def _conjuncts(name: str, joined_by: str, reading: _Reading, depth: int = 0) -> list:
    """The comparisons `name` joins by `and` (or `or`), itself if it is one."""
    instr = reading.definitions.get(name)
    if instr is None or depth > 3:
        return []
    if instr.opcode == "icmp":
        return [instr]
    m = _JOINED.search(instr.text.split(", !")[0])
    # `select a, b, false` is `a && b`; `select a, true, b` is `a || b`
    if m is None or m["op"] not in (None, joined_by) or m["sel"] and not (
            m["k"] if joined_by == "and" else m["k2"]):
        return []
    parts = [m["a"], m["b"]] if m["op"] else [m["c"], m["d"] or m["e"]]
    return [t for part in parts if part for t in _conjuncts(part.lstrip("%").strip('"'), joined_by, reading,
                                                                 depth + 1)]


def _consumed_to_zero(record, terminators: dict, reading: _Reading, parameters: set[str]) -> tuple[str, str] | None:
    """A header phi that leaves the loop on reaching zero, and round the back edge is only ever
    itself or itself less an amount computed at run time: it is consumed in pieces."""
    inside = set(record.blocks)
    memory = None  # the loop's loads and stores, indexed once when first asked for
    phis = None  # the header's phis: (the phi, its start values, its values round the back edge)
    for test, true_leaves, _, _ in _exit_tests(record, terminators, reading):
        zero = _ZERO_COMPARE.search(test.text.split(", !")[0])
        if zero is None or (zero["predicate"] == "eq") != true_leaves:
            continue
        tested = uncast(zero["value"].strip('"'), reading)
        if phis is None:
            phis = []
            for phi in (i for i in reading.instructions.get(record.header, ()) if i.opcode == "phi"):
                pairs = [(v.lstrip("%").strip('"'), b.strip('"')) for v, b in _PHI_PAIR.findall(phi.text)]
                phis.append((phi, [v for v, b in pairs if b not in inside], {v for v, b in pairs if b in inside}))
        for phi, starts, back in phis:
            if len(starts) != 1 or tested not in back and tested != phi.name:
                continue
            # a count kept in memory too (`state->length -= copy`): read again in the loop from where
            # it is stored, the read is the phi's value
            memory = memory or _Memory(inside, reading)
            home = memory.home(back, reading)
            same = {phi.name} | set(memory.loads.get(home.name, ()) if home is not None else ())
            takes: set[str] = set()
            if not all(_less_pieces(v, same, inside, reading, takes, 0) for v in back) or not takes \
                    or home is not None and _handed_on(home.name, inside, reading):
                continue
            start = data_walks.Names(reading.definitions, parameters).loaded_from(home) if home is not None else None
            start = start or spelled(_before_peeled_pieces(starts[0], reading), reading, parameters)
            if start is None or re.fullmatch(r"-?\d+", start):
                continue
            return (f"chunks({start})",
                    f"`{start}` is consumed to zero in pieces the loop decides at run time (each round takes some "
                    f"of it, or none, and it leaves when nothing is left): it runs once per piece, a count "
                    f"the data decides")
    return None


def _before_peeled_pieces(value: str, reading: _Reading) -> str:
    """The quantity before pieces taken from it ahead of the loop (a first round LLVM peeled
    off: `len - n` on entry is still `len` consumed)."""
    for _ in range(3):
        m = _SUB.search(reading.definitions[value].text.split(", !")[0]) if value in reading.definitions else None
        if m is None or not m["b"].startswith("%"):
            break
        value = m["a"].strip('"')
    return value


class _Memory:
    """A loop's stores (by the value stored) and loads (by address), read once."""

    def __init__(self, inside: set[str], reading: _Reading):
        self.stores: dict[str, list] = {}  # value stored → the address operands it is stored to
        self.loads: dict[str, list[str]] = {}  # address → the loads from it
        for block in inside:
            for i in reading.instructions.get(block, ()):
                if i.opcode == "store" and len(i.operands) == 2 and i.operands[0].name:
                    self.stores.setdefault(i.operands[0].name, []).append(i.operands[1])
                elif i.opcode == "load" and i.operands and i.operands[0].name:
                    self.loads.setdefault(i.operands[0].name, []).append(i.name)
        self.inside = inside

    def home(self, back: set[str], reading: _Reading):
        """The one address (an operand) the loop stores the phi's next value to, if it does (a
        member the count lives in), outside the loop's own computed addresses; None otherwise."""
        if len(back) != 1:
            return None
        homes = {op.name: op for op in self.stores.get(next(iter(back)), ())}
        home = next(iter(homes.values())) if len(homes) == 1 else None
        return home if home is not None and home.name and reading.block_of.get(home.name) not in self.inside \
            else None


def _handed_on(home: str, inside: set[str], reading: _Reading) -> bool:
    """Whether a call in the loop is handed the count's address, or the pointer it is a member
    of (it could refill the count: then it is no quantity consumed)."""
    base = reading.definitions.get(home)
    bases = {home} | ({base.operands[0].name} if base is not None and base.opcode == "getelementptr" else set())
    return any(i.opcode == "call" and not i.text.split("@", 1)[-1].startswith("llvm.")
               and any(op.name in bases for op in i.operands)
               for b in inside for i in reading.instructions.get(b, ()))


def _less_pieces(value: str, phi: set[str], inside: set[str], reading: _Reading, takes: set[str], depth: int) -> bool:
    """Whether `value`, round the back edge, is the phi itself (`phi`: its value, and reads of it
    where it is kept in memory) or that less a run-time amount (through the loop's merges of such
    values); the amounts go in `takes`."""
    value = uncast(value, reading)
    if value in phi:
        return True
    instr = reading.definitions.get(value)
    if instr is None or depth > 4 or reading.block_of.get(value) not in inside:
        return False
    if instr.opcode == "phi":
        arms = [v.lstrip("%").strip('"') for v, _ in _PHI_PAIR.findall(instr.text)]
        return bool(arms) and all(_less_pieces(v, phi, inside, reading, takes, depth + 1) for v in arms)
    m = _SUB.search(instr.text.split(", !")[0])
    if m is None or uncast(m["a"].strip('"'), reading) not in phi or not m["b"].startswith("%"):
        return False  # a constant step is ScalarEvolution's to count
    takes.add(m["b"])
    return True


def _goes_round(block: str, header: str, terminators: dict) -> bool:
    """Whether `block` is the header, or goes straight to it (a latch of its own)."""
    term = terminators.get(block)
    return block == header or term is not None and term.opcode == "br" and \
        term.text.split(", !")[0].strip() == f"br label %{header}"


def _state_machine(record, terminators: dict, reading: _Reading, parameters: set[str]) -> tuple[str, str] | None:
    """A loop whose header dispatches (`switch`) on a state the loop itself moves on: a header
    phi taking other values round the back edge, or a member read in the loop that the loop
    stores to or hands to a call."""
    term = terminators.get(record.header)
    switch = data_walks._SWITCH_ON.match(term.text) if term is not None and term.opcode == "switch" else None
    if switch is None or term.text.count(" label %") < 4:  # the default and at least three states
        return None
    inside = set(record.blocks)
    state = uncast(switch["value"].strip('"'), reading)
    instr = reading.definitions.get(state)
    if instr is None:
        return None
    names = data_walks.Names(reading.definitions, parameters)
    if instr.opcode == "phi" and reading.block_of.get(state) == record.header:
        pairs = [(v.lstrip("%").strip('"'), b.strip('"')) for v, b in _PHI_PAIR.findall(instr.text)]
        if not any(b in inside and v != state for v, b in pairs):
            return None
        named = None  # by the member it is read from on entry, or in the loop, or stored to
        for chosen in ([v for v, b in pairs if b not in inside], [v for v, _ in pairs]):
            read: set[str | None] = set()
            for v in chosen:
                _reads_of(v, reading, names, read, set())
            if named := (read.pop() if len(read) == 1 else None):
                break
        home = _Memory(inside, reading).home({v for v, b in pairs if b in inside}, reading) if not named else None
        named = named or (names.loaded_from(home) if home is not None else None) or spelled(state, reading,
                                                                                            parameters)
    elif instr.opcode == "load" and reading.block_of.get(state) in inside:
        address = instr.operands[0].name
        if reading.block_of.get(address) in inside or not any(
                i.opcode == "store" and len(i.operands) == 2 and i.operands[1].name == address
                or i.opcode == "call" and not i.text.split("@", 1)[-1].startswith("llvm.")
                for block in inside for i in reading.instructions.get(block, ())):
            return None
        named = names.loaded_from(instr.operands[0])
    else:
        return None
    if not named:
        return None
    return (f"steps({named})",
            f"a state machine: each round dispatches on `{named}`, which the loop moves on, until a state "
            f"leaves; it runs once per state passed through, a count the data decides")


def _reads_of(value: str, reading: _Reading, names, read: set, seen: set[str]) -> None:
    """The members (None for a value of no name) whose reads `value` merges, through phis;
    constants (a state set in the code: `state->mode = TYPEDO`) name nothing."""
    value = uncast(value, reading)
    if value in seen or re.fullmatch(r"-?\d+", value):
        return
    seen.add(value)
    instr = reading.definitions.get(value)
    if instr is not None and instr.opcode == "phi" and len(seen) < 16:
        for v, _ in _PHI_PAIR.findall(instr.text):
            _reads_of(v.lstrip("%").strip('"'), reading, names, read, seen)
    else:
        read.add(names.loaded_from(instr.operands[0]) if instr is not None and instr.opcode == "load" else None)


def _on_a_walk(test, header: str, reading: _Reading) -> bool:
    """Whether a comparison reads a value the loop carries in a header phi (a counter, a
    pointer it walks), or reads memory at such a pointer (`p->next`)."""
    for op in test.operands:
        value = uncast(op.name, reading) if op.name else ""
        instr = reading.definitions.get(value)
        if instr is not None and instr.opcode == "load" and instr.operands and instr.operands[0].name:
            address = reading.definitions.get(instr.operands[0].name)
            if address is not None and address.opcode == "getelementptr" and address.operands:
                address = reading.definitions.get(address.operands[0].name)
            instr = address
        if instr is not None and instr.opcode == "phi" and reading.block_of.get(instr.name) == header:
            return True
    return False


def _until_a_call_says_done(record, terminators: dict, reading: _Reading) -> tuple[str, str] | None:
    """A loop that goes round again only on what a call in it returned (`while (err == Z_OK)`):
    the callee, a named function, says when it is done."""
    inside = set(record.blocks)
    latches = {b for b in record.blocks if terminators.get(b) is not None
               and re.search(rf"label %\"?{re.escape(record.header)}\"?(?:,|\s|$)", terminators[b].text)}
    for test, _, stays, block in _exit_tests(record, terminators, reading):
        # the one way round (not an error's way out, nor one of several paths back)
        if not _goes_round(stays, record.header, terminators) or \
                latches != ({block} if stays == record.header else {stays}):
            continue
        m = _CALL_TEST.search(test.text.split(", !")[0])
        call = reading.definitions.get(uncast(m["value"].strip('"'), reading)) if m else None
        if call is None or call.opcode != "call" or reading.block_of.get(call.name) not in inside:
            continue
        callee = _CALLEE.search(call.text)
        if callee is None or callee["name"].startswith("llvm."):
            continue
        if any(other is not test and _on_a_walk(other, record.header, reading)
               for other, _, _, _ in _exit_tests(record, terminators, reading)):
            return None  # it also ends where a walk of its own does (a list's end): the walk counts it
        name = callee["name"].split(".ccls.")[0]
        return (f"calls({name})",
                f"it goes round again only on what `{name}` returned: it runs once per call until that call "
                f"says it is done, a count the data decides")
    return None
