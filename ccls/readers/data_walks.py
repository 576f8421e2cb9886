"""Loops that end on data, named after what they walk: a string to its NUL (`strlen(s)`), a
linked list to its null link (`len(head)`), and counts read from memory (`a->count`).

ScalarEvolution cannot count these (their exit tests a loaded value), yet most loops of real C
libraries are of this kind. Their count is exact in a size the program holds in its data, so it
is kept symbolic in that size, named as the source names what is walked: from the IR's value
names (clang keeps a parameter's name, a struct member's name on the address it computes, a
local's name on the phis mem2reg makes of it). What cannot be named stays unknown.

Pure: IR values (`ccls.readers.llvm.text.IRInstruction`, `Operand`) and ScalarEvolution's text in, names and counts out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from ccls.polynomial import Polynomial
from ccls.readers.scev import add_recurrence
from ccls.readers.llvm.text import VALUE_NAME

STRLEN = "strlen("  # symbol prefixes of sizes named by data (`strlen(s)`, `len(head)`)
LIST_LEN = "len("

BRANCH = re.compile(rf"^br i1 %(?P<cond>{VALUE_NAME}), label %(?P<true>{VALUE_NAME}), label %(?P<false>{VALUE_NAME})")
_ZERO_TEST = re.compile(rf"= icmp (?P<predicate>eq|ne) (?P<type>i\d+|ptr) %(?P<value>{VALUE_NAME}), (?:0|null)\b")
_SWITCH_ZERO = re.compile(rf"\bi\d+ 0, label %(?P<target>{VALUE_NAME})")
_SWITCH_ON = re.compile(rf"^switch i\d+ %(?P<value>{VALUE_NAME}), label %(?P<default>{VALUE_NAME})")
_INCOMING = re.compile(rf"\[ (?P<value>[^,\[\]]+), %(?P<block>{VALUE_NAME}) \]")
# {start,+,step}<flags><%loop>: an address that moves by a constant each iteration of `loop`
_START = re.compile(rf"^(?:%(?P<bare>{VALUE_NAME})|\((?P<offset>-?\d+) \+ %(?P<based>{VALUE_NAME})\))$")
_CASTS = ("zext", "sext", "trunc", "freeze")
# Names clang gives computed addresses and LLVM's passes give values: none names a member.
GENERIC = re.compile(r"^(?:i|arrayidx|arraydecay|add\.ptr|incdec\.ptr|scevgep|uglygep|call|tmp|idx|ptr|"
                      r"retval|this|vla|agg\.tmp|ref\.tmp|coerce|x|cond)\d*$")
# clang's member name; LLVM's uniquing digits and the inliner's `.i` suffixes dropped
_MEMBER = re.compile(r"^(?P<name>[A-Za-z_]\w*?)\d*(?:\.i\d*)*$")
_LOCAL_PHI = re.compile(r"^(?P<name>[A-Za-z_]\w*?)(?:\.addr)?(?:\.\d+)+(?:\.i\d*)*$")  # mem2reg: `p.addr.017`
_NAMING_DEPTH = 4


@dataclass(frozen=True)
class DataWalk:
    """A loop that walks data to its end: its header's executions per entry, in the named size."""

    iterations: Polynomial
    symbol: str  # `strlen(s)`, `len(head)`
    what: str  # for the assumption: "walks the string at s to its NUL"
    exit_block: str  # the block whose exit edge ends the walk
    exit_target: str
    at_most: bool = False  # counted from a start taken as 0: an upper bound, not the count


def _unquote(name: str) -> str:
    return name[1:-1] if name.startswith('"') else name


class Names:
    """The source's name of a value, where the IR keeps one: a parameter (`s`), a global
    (`table`), a member read through a named pointer (`a->count`, `*p` at offset 0), a local
    carried by a phi (`p`)."""

    def __init__(self, definitions: dict, parameters: set[str]):
        self.definitions, self.parameters = definitions, parameters

    def value(self, name: str, depth: int = 0) -> str | None:
        if name in self.parameters:
            return name
        instr = self.definitions.get(name)
        if instr is None or depth > _NAMING_DEPTH:
            return None
        if instr.opcode == "load":
            return self.loaded_from(instr.operands[0], depth)
        if instr.opcode == "phi":
            m = _LOCAL_PHI.match(name)
            if m and not GENERIC.match(m["name"]):
                return m["name"]
            return self.one_read(instr, depth)
        if instr.opcode == "getelementptr":  # an array member: `a->name` is its first element's address
            return self.member(instr, depth)
        if instr.opcode == "alloca":  # a local variable (a struct on the stack)
            m = _MEMBER.match(name)
            return m["name"] if m and not GENERIC.match(m["name"]) else None
        return None

    def loaded_from(self, address, depth: int = 0) -> str | None:
        """The name of the value read from `address`: `*p`, a global, `a->member`."""
        if address.name in self.parameters:
            return f"*{address.name}"
        if _is_global(address):
            return address.name
        instr = self.definitions.get(address.name)
        if instr is not None and instr.opcode == "getelementptr":
            return self.member(instr, depth)
        if instr is not None and instr.opcode == "phi" and (same := self.one_member(address.name, depth, set())):
            return same
        if instr is not None and instr.opcode in ("load", "phi"):
            inner = self.value(address.name, depth + 1)
            return f"*{inner}" if inner and _simple(inner) else f"*({inner})" if inner else None
        return None

    def one_read(self, phi, depth: int) -> str | None:
        """`s->gzhead` for a phi whose incoming values are all reads of that one address (LLVM
        reads a member again where a store or a call may have changed it, and merges the reads)."""
        reads = [self.definitions.get(value) for value, _ in _incoming(phi)]
        if not reads or any(r is None or r.opcode != "load" for r in reads) \
                or len({r.operands[0].name for r in reads}) != 1:
            return None
        return self.loaded_from(reads[0].operands[0], depth + 1)

    def one_member(self, name: str, depth: int, seen: set[str]) -> str | None:
        """`a->member` when the address `name` merges copies of one member's address (a phi of
        the same `getelementptr`, which LLVM's sinking and PRE leave), else None."""
        instr = self.definitions.get(name)
        if instr is None or name in seen or len(seen) > 16:
            return None
        seen.add(name)
        if instr.opcode == "getelementptr":
            return self.member(instr, depth)
        if instr.opcode != "phi":
            return None
        named = {self.one_member(value, depth, seen) for value, _ in _incoming(instr) if value not in seen}
        return named.pop() if len(named) == 1 and None not in named else None

    def member(self, gep, depth: int) -> str | None:
        """`base->member` for a constant offset from a named pointer, the address clang named
        after the member (`%count = getelementptr … %a, i64 8`)."""
        m = _MEMBER.match(gep.name or "")
        if m is None or GENERIC.match(m["name"]) or any(op.name for op in gep.operands[1:]):
            return None
        base = gep.operands[0]
        owner = base.name if _is_global(base) else self.value(base.name, depth + 1)
        if owner is None:
            return None
        if _is_global(base) or getattr(self.definitions.get(base.name), "opcode", "") == "alloca":
            return f"{owner}.{m['name']}"
        return f"{owner}->{m['name']}" if _simple(owner) else f"({owner})->{m['name']}"  # (*s)->avail_in


def _simple(name: str) -> bool:
    return re.fullmatch(r"(?:[A-Za-z_]\w*|\(\*[A-Za-z_]\w*\))(?:->\w+|\.\w+)*", name) is not None


def _is_global(value) -> bool:
    return value.is_global_variable


def named_loads(record, definitions: dict, block_of: dict[str, str], parameters: set[str],
                substituted: dict[str, Polynomial]) -> dict[str, str]:
    """Values of integer type read from memory before the loop that its count (or the bound of
    its count) uses, with their names (`a->count`): `%len` → `input_buffer->length`."""
    texts = (record.backedge_taken or "") + " " + (record.symbolic_max_backedge_taken or "")
    names = Names(definitions, parameters)
    inside = set(record.blocks)
    out: dict[str, str] = {}
    for value in dict.fromkeys(_unquote(v) for v in re.findall(rf"%({VALUE_NAME})", texts)):
        instr = definitions.get(value)
        if value in substituted or instr is None or instr.opcode != "load" or not instr.type_text.startswith("i"):
            continue
        if block_of.get(value) in inside:
            continue
        named = names.value(value)
        if named is not None:
            out[value] = named
    return out


def data_walk(record, definitions: dict, block_of: dict[str, str], block_instructions: dict[str, list],
              parameters: set[str], value_scevs: dict[str, str], terminators: dict) -> DataWalk | None:
    """The walk that ends this loop, if one of its exits tests a loaded value: against 0 (a
    string's NUL) where the load's address moves by a constant each iteration from a named
    start, or against null where the pointer tested is the next link read from the last one."""
    inside = set(record.blocks)
    names = Names(definitions, parameters)
    header_phis = [i for i in block_instructions.get(record.header, ()) if i.opcode == "phi"]
    for block in record.blocks:
        term = terminators.get(block)
        if term is None:
            continue
        for value, target in _zero_exits(term, inside, definitions):
            walk = _string_walk(value, record, definitions, block_of, names, value_scevs) \
                or _list_walk(value, record, definitions, block_of, header_phis, names) \
                or _walk_through_memory(value, record, definitions, block_of, names, block_instructions) \
                or _walk_by_index_in_memory(value, record, definitions, block_of, names, block_instructions)
            if walk is not None:
                iterations, symbol, what = walk
                return DataWalk(iterations, symbol, what, block, target)
    for block in record.blocks:
        term = terminators.get(block)
        branch = BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
        if branch is None:
            continue
        outside = [_unquote(t) for t in (branch["true"], branch["false"]) if _unquote(t) not in inside]
        test = definitions.get(_unquote(branch["cond"]))
        if len(outside) == 1 and test is not None and test.opcode == "icmp" \
                and (walk := _counted_to_loaded(test, record, definitions, block_of, names, value_scevs,
                                                terminators, block_instructions)
                     or _counter_to_fixed_bound(test, record, definitions, block_of, names, value_scevs,
                                                block_instructions)
                     or _counter_in_memory(test, block, record, definitions, block_of, names, value_scevs,
                                           block_instructions)):
            iterations, symbol, what, *at_most = walk
            return DataWalk(iterations, symbol, what, block, outside[0], bool(at_most and at_most[0]))
    return None


def _from_zero(first: Polynomial, limit: Polynomial, what: str) -> tuple[Polynomial, str, bool]:
    """From a named start to a named bound (`s->have` up to `s->ncode`), the start is taken as 0
    (both default to the same size, their difference to nothing): at most the bound."""
    if first.symbols and limit.symbols:
        constant = Polynomial.constant(dict(first.terms).get((), 0))
        return constant, f"{what}; its start `{first.format()}` taken as {constant.format()}: at most that many", True
    return first, what, False




def _counter_to_fixed_bound(test, record, definitions: dict, block_of: dict[str, str], names: Names,
                            value_scevs: dict[str, str], block_instructions: dict[str, list]):
    """`while (s->have < 19) s->lens[order[s->have++]] = 0` once LLVM keeps the member in a
    register: a counter `{start,+,step}` of this loop from a named value read before it, tested
    against a fixed bound (ScalarEvolution leaves it uncounted where the narrow counter might wrap)."""
    operands = [op.name or op.text.split()[-1] for op in test.operands[:2]]
    if len(operands) != 2:
        return None
    for counter, bound in (operands, operands[::-1]):
        recurrence = add_recurrence(_unwrapped(value_scevs.get(_unquote(counter), "")))
        if recurrence is None or recurrence.step < 0 or not recurrence.flat_start or recurrence.loop != record.header:
            continue
        start_text = recurrence.start
        start = _START.match(start_text)
        if re.fullmatch(r"-?\d+", start_text):
            first = Polynomial.constant(int(start_text))
        elif start is not None and (named := names.value(_unquote(start["bare"] or start["based"]))) is not None:
            first = Polynomial.symbol(named) + int(start["offset"] or 0)
        else:
            continue
        limit = _fixed_bound(bound, record, definitions, block_of, names, block_instructions)
        step = recurrence.step
        if limit is None or step <= 0 or not (limit.symbols or first.symbols):
            continue
        symbol = sorted(limit.symbols or first.symbols)[0]
        first, what, at_most = _from_zero(first, limit, f"counts from {first.format()} to {limit.format()}")
        iterations = (limit - first) * Fraction(1, step) + 1
        return iterations, symbol, what, at_most
    return None


_ADD_CONSTANT = re.compile(rf"^= add (?:nuw |nsw )*i\d+ %(?P<value>{VALUE_NAME}), (?P<constant>-?\d+)")


def _plus_constant(name: str, definitions: dict) -> tuple[str, int]:
    """(value, c) for `value + c` (an `add` of a constant), else (name, 0)."""
    instr = definitions.get(_uncast(name, definitions))
    if instr is not None and instr.opcode == "add":
        m = _ADD_CONSTANT.search(instr.text[instr.text.find("= add"):] if "= add" in instr.text else "")
        if m:
            return _uncast(_unquote(m["value"]), definitions), int(m["constant"])
    return _uncast(name, definitions), 0


def _counter_in_memory(test, block: str, record, definitions: dict, block_of: dict[str, str], names: Names,
                       value_scevs: dict[str, str], block_instructions: dict[str, list]):
    """`while (s->have < 19) s->have++;`, `while (s->insert) { …; s->insert--; }`: the counter is a
    member (or a variable whose address is taken) kept in memory, moved by a constant by the one
    store to it in the loop, in the block that tests it; the bound a constant or a named value that
    does not change in the loop. Counted from the member's value when the loop starts."""
    inside = set(record.blocks)
    operands = [op.name or op.text.split()[-1] for op in test.operands[:2]]
    predicate = re.search(r"= icmp (\w+)", test.text)
    if len(operands) != 2 or predicate is None:
        return None
    for counted, bound in (operands, operands[::-1]):
        value, seen_ahead = _plus_constant(counted, definitions)
        loaded = definitions.get(value)
        if loaded is None or loaded.opcode != "load" or block_of.get(loaded.name) not in inside:
            continue
        home = loaded.operands[0].name
        if not home or block_of.get(home) in inside or not loaded.type_text.startswith("i"):
            continue
        stores = [i for b in record.blocks for i in block_instructions.get(b, ())
                  if i.opcode == "store" and len(i.operands) == 2 and i.operands[1].name == home]
        if len(stores) != 1 or block_of.get(stores[0].operands[0].name) is None:
            continue
        stored, step = _plus_constant(stores[0].operands[0].name, definitions)
        store_block = next(b for b in record.blocks if any(i is stores[0] for i in block_instructions.get(b, ())))
        # Read again after this iteration's store (later in its block, or past the header that
        # stores it, as a do-while's latch does), the test sees this iteration's step.
        order = [i for i in block_instructions.get(store_block, ())]
        after_step = block_of.get(loaded.name) == store_block and order.index(loaded) > order.index(stores[0]) \
            if loaded in order else store_block == record.header
        if step == 0 or not _read_from(stored, home, record, definitions, block_of) \
                or not (store_block == block or store_block == record.header) or (seen_ahead and seen_ahead != step):
            continue
        seen_ahead = seen_ahead or (step if after_step else 0)
        named = names.loaded_from(loaded.operands[0], 0)
        first = _stored_on_entry(home, record, block_instructions)
        if named is None and first is None:
            continue
        limit = _fixed_bound(bound, record, definitions, block_of, names, block_instructions)
        if limit is None:
            continue
        at_most = False
        if first is not None:  # `for (volatile size_t i = 0; i < 128; i++)`: set just before the loop
            start = Polynomial.constant(first)
            named = named or "a counter"
            what = f"steps {named} (kept in memory, set to {first} on entry) by {step} until it reaches {limit.format()}"
        else:
            start = Polynomial.symbol(named)
            what = f"steps `{named}` (kept in memory) by {step} until it reaches {limit.format()}"
            if step > 0:
                start, what, at_most = _from_zero(start, limit, what)
        distance = (limit - start) if step > 0 else (start - limit)
        # The test sees the counter after this iteration's step (`s->have + 1 < 19`) or before it.
        iterations = distance * Fraction(1, abs(step)) + (0 if seen_ahead else 1)
        symbol = sorted(limit.symbols)[0] if at_most else named
        return iterations, symbol, what, at_most
    return None


def _stored_on_entry(home: str, record, block_instructions: dict[str, list]) -> int | None:
    """The constant the one block entering the loop last stores at `home` (a counter set just
    before its loop, as a `volatile` one is kept in memory), if it does."""
    inside = set(record.blocks)
    entering = [b for b, instrs in block_instructions.items() if b not in inside and instrs
                and any(op.name == record.header and op.type_text == "label" for op in instrs[-1].operands)]
    if len(entering) != 1:
        return None
    for instr in reversed(block_instructions[entering[0]]):
        if instr.opcode == "store" and len(instr.operands) == 2 and instr.operands[1].name == home:
            value = instr.operands[0]
            text = value.text.split()[-1] if not value.name else ""
            return int(text) if re.fullmatch(r"-?\d+", text) else None
        if instr.opcode == "call" and "lifetime" not in instr.text:
            return None  # a call may store there too
    return None


def _read_from(value: str, home: str, record, definitions: dict, block_of: dict[str, str]) -> bool:
    """Whether `value` is what `home` holds: a load of it, or the header's phi of such loads
    (LLVM keeps the value read at the end of one iteration for the next). What the phi takes
    on entry is whatever LLVM knew `home` to hold there (a load before the loop, or the value
    just stored to it, `s->heap_len = 0` forwarded as 0): GVN forwards only a value equal to
    the memory's, so it is the member's value when the loop starts, whatever its form."""
    instr = definitions.get(value)
    if instr is not None and instr.opcode == "phi" and block_of.get(value) == record.header:
        inside = set(record.blocks)
        reads = [definitions.get(v) for v, block in _incoming(instr) if block in inside]
        if not reads:
            return False
    else:
        reads = [instr]
    return all(r is not None and r.opcode == "load" and r.operands[0].name == home for r in reads)


def _fixed_bound(bound: str, record, definitions: dict, block_of: dict[str, str], names: Names,
                 block_instructions: dict[str, list]) -> Polynomial | None:
    """A loop bound that does not change in the loop: a constant, a named value from before the
    loop, or a named value read again each iteration from an address the loop never stores to."""
    inside = set(record.blocks)
    if re.fullmatch(r"-?\d+", bound):
        return Polynomial.constant(int(bound))
    bound = _uncast(bound, definitions)
    instr = definitions.get(bound)
    if block_of.get(bound) in inside:
        if instr is None or instr.opcode != "load" or block_of.get(instr.operands[0].name) in inside:
            return None
        address = instr.operands[0].name
        if any(i.opcode == "store" and len(i.operands) == 2 and i.operands[1].name == address
               for b in record.blocks for i in block_instructions.get(b, ())):
            return None
    named = names.value(bound)
    return Polynomial.symbol(named) if named is not None else None



_CAST_WRAPPED = re.compile(r"^\((?:zext|sext|trunc) i\d+ (?P<inner>.+) to i\d+\)$")
# `n`, `c + n`, or `c + (zext n)` (`x < WD - 14` with an 8-bit WD): the value read, widened, plus a constant
_LOADED_PLUS = re.compile(rf"^(?:%(?P<bare>{VALUE_NAME})|\((?P<offset>-?\d+) \+ (?:%(?P<based>{VALUE_NAME})"
                          rf"|\((?:zext|sext) i\d+ %(?P<widened>{VALUE_NAME}) to i\d+\))\)(?:<\w+>)*)$")


def _unwrapped(scev: str) -> str:
    while m := _CAST_WRAPPED.match(scev):
        scev = m["inner"]
    return scev


def _counted_to_loaded(test, record, definitions: dict, block_of: dict[str, str], names: Names,
                       value_scevs: dict[str, str], terminators: dict | None = None,
                       block_instructions: dict | None = None):
    """`for (i = 0; i < a->count; i++)` where the bound is read again each iteration (a store
    through a `char *` may change it, as far as LLVM knows): a counter `{start,+,step}` of this
    loop compared with a value read inside the loop from an address that does not move, named
    (`a->count`, `*len`), plus a constant."""
    operands = [op.name for op in test.operands[:2]]
    if len(operands) != 2 or not all(operands):
        return None
    for counter, bound in (operands, operands[::-1]):
        recurrence = add_recurrence(_unwrapped(value_scevs.get(counter, "")))
        if recurrence is None or recurrence.constant_start is None or recurrence.step < 0 \
                or recurrence.loop != record.header:
            continue
        limit = _LOADED_PLUS.match(_unwrapped(value_scevs.get(bound, "")))
        if limit is None:
            continue
        loaded = definitions.get(_unquote(limit["bare"] or limit["based"] or limit["widened"]))
        if loaded is not None and loaded.opcode == "phi":
            loaded = _reloaded(loaded, record, definitions, block_of, terminators or {}, block_instructions or {})
        if loaded is None or loaded.opcode != "load" or block_of.get(loaded.name) not in set(record.blocks):
            continue
        address = loaded.operands[0].name
        if address in definitions and block_of.get(address) in set(record.blocks) \
                and definitions[address].opcode != "getelementptr":
            continue
        gep = definitions.get(address)
        if gep is not None and gep.opcode == "getelementptr" and (
                block_of.get(gep.operands[0].name) in set(record.blocks) or any(op.name for op in gep.operands[1:])):
            continue  # an address that moves with the loop
        named = names.value(loaded.name)
        step = recurrence.step
        if named is None or step <= 0:
            continue
        symbol = named
        offset = int(limit["offset"] or 0)
        iterations = (Polynomial.symbol(symbol) + offset - recurrence.constant_start) * Fraction(1, step) + 1
        return iterations, symbol, f"counts up to `{named}`, read from memory at each iteration"
    return None


def _reloaded(phi, record, definitions: dict, block_of: dict[str, str], terminators: dict,
              block_instructions: dict):
    """The load inside the loop a phi stands for, where every value it merges is what one
    address holds: GVN keeps the value read before the loop and reads it again only on the paths
    that store through a `char *` (`for (x = 0; x < WD; x++) … frame[i] ^= m;`), merging the two.
    A constant merged in is that value only on an edge that tested it equal (`WD == 0`). None
    where the loop stores to the address itself or the merged values are anything else."""
    loads, seen, stack = [], set(), [phi]
    while stack:
        instr = stack.pop()
        if instr.name in seen:
            continue
        seen.add(instr.name)
        if instr.opcode == "load":
            loads.append(instr)
            continue
        if instr.opcode != "phi":
            return None
        for value, block in _incoming(instr):
            if value in definitions:
                stack.append(definitions[value])
                continue
            tested = _tested_equal(value, block, block_of.get(instr.name), terminators, definitions)
            if tested is None:
                return None
            stack.append(tested)
    addresses = {load.operands[0].name for load in loads}
    inside = set(record.blocks)
    reloads = [load for load in loads if block_of.get(load.name) in inside]
    if len(addresses) != 1 or not reloads or "" in addresses:
        return None
    address = addresses.pop()
    if any(i.opcode == "store" and len(i.operands) == 2 and i.operands[1].name == address
           for b in record.blocks for i in block_instructions.get(b, ())):
        return None
    return reloads[0]


_EQUAL_TEST = re.compile(rf"icmp eq i\d+ %(?P<value>{VALUE_NAME}), (?P<constant>-?\d+)")


def _tested_equal(constant: str, source: str, phi_block: str | None, terminators: dict, definitions: dict):
    """The value that `constant` stands for where the edge from `source` into `phi_block` is
    taken only when that value equals it (`br i1 (icmp eq %x, 0), label %phi_block, …`)."""
    term = terminators.get(source)
    branch = BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
    test = definitions.get(_unquote(branch["cond"])) if branch else None
    m = _EQUAL_TEST.search(test.text) if test is not None and test.opcode == "icmp" else None
    if m is None or m["constant"] != constant or phi_block is None:
        return None
    if _unquote(branch["true"]) != phi_block or _unquote(branch["false"]) == phi_block:
        return None
    return definitions.get(_unquote(m["value"]))


def _zero_exits(term, inside: set[str], definitions: dict):
    """(value tested against zero or null, the outside block that the test sends it to)."""
    if term.opcode == "br" and (branch := BRANCH.match(term.text)):
        test = definitions.get(_unquote(branch["cond"]))
        zero = _ZERO_TEST.search(test.text) if test is not None and test.opcode == "icmp" else None
        if zero is None:
            return
        on_zero = _unquote(branch["true"] if zero["predicate"] == "eq" else branch["false"])
        if on_zero not in inside:
            yield _unquote(zero["value"]), on_zero
    elif term.opcode == "switch" and (switch := _SWITCH_ON.match(term.text)):
        for case in _SWITCH_ZERO.finditer(term.text):
            if _unquote(case["target"]) not in inside:
                yield _unquote(switch["value"]), _unquote(case["target"])


def _uncast(name: str, definitions: dict) -> str:
    for _ in range(3):
        instr = definitions.get(name)
        if instr is None or instr.opcode not in _CASTS or not instr.operands[0].name:
            break
        name = instr.operands[0].name
    return name


def _incoming(phi) -> list[tuple[str, str]]:
    """A phi's (value, block) pairs; a constant's value is its text."""
    return [(_unquote(v[1:]) if v.startswith("%") else v, _unquote(b)) for v, b in _INCOMING.findall(phi.text)]


def _string_walk(value: str, record, definitions: dict, block_of: dict[str, str], names: Names,
                 value_scevs: dict[str, str]):
    """`while (*p)`, `for (i = 0; s[i]; i++)`: the value tested is loaded (or carried by a
    header phi from the previous iteration's load, as rotated loops do) from an address
    `{start,+,step}` of this loop."""
    found = _tested_load(value, record, definitions, block_of)
    if found is None:
        return None
    tested, carried = found
    recurrence = add_recurrence(value_scevs.get(tested.operands[0].name, ""))
    if recurrence is None or recurrence.step < 0 or not recurrence.flat_start or recurrence.loop != record.header:
        return None
    start = _START.match(recurrence.start)
    if start is None:
        return None
    base = _unquote(start["bare"] or start["based"])
    offset_bytes = int(start["offset"] or 0)
    step_bytes = recurrence.step
    element_bytes = max(1, _int_bits(tested.type_text) // 8)
    named = names.value(base)
    if named is None or step_bytes <= 0:
        return None
    symbol = f"{STRLEN}{named})"
    # The NUL is element strlen(s) from the start: the test sees it at iteration
    # (strlen·element − offset) / step (+1 when it tests the value carried from the last one);
    # the header has run once more than that.
    first = offset_bytes - carried * step_bytes
    iterations = (Polynomial.symbol(symbol) * element_bytes - first) * Fraction(1, step_bytes) + 1
    return iterations, symbol, f"walks the string at {named} to its terminating zero"


def _tested_load(value: str, record, definitions: dict, block_of: dict[str, str]):
    """(the load inside the loop whose value is tested, 1 if the test sees it one iteration
    later through a header phi else 0), or None."""
    inside = set(record.blocks)
    tested = definitions.get(_uncast(value, definitions))
    carried = 0
    if tested is not None and tested.opcode == "phi" and block_of.get(tested.name) == record.header:
        loads = [definitions.get(_uncast(v, definitions)) for v, block in _incoming(tested) if block in inside]
        if len(loads) != 1 or loads[0] is None:
            return None
        tested, carried = loads[0], 1
    if tested is None or tested.opcode != "load" or block_of.get(tested.name) not in inside \
            or not tested.type_text.startswith("i"):
        return None
    return tested, carried


def _walk_through_memory(value: str, record, definitions: dict, block_of: dict[str, str], names: Names,
                         block_instructions: dict[str, list]):
    """`for (; (*input)[0] != '\\0'; ++*input)`: the string's pointer lives in memory (a `char **`
    argument, a member, a local whose address is taken) and every store to it in the loop moves
    it one element on; the character tested is read through it."""
    found = _tested_load(value, record, definitions, block_of)
    if found is None:
        return None
    tested, _ = found
    inside = set(record.blocks)
    element_bytes = max(1, _int_bits(tested.type_text) // 8)
    pointer = definitions.get(tested.operands[0].name)
    if pointer is not None and pointer.opcode == "getelementptr":  # (*input)[k] with k constant
        base, gep = _constant_offset_gep(pointer.name, definitions)
        pointer = definitions.get(base) if gep is not None else None
    if pointer is None or pointer.opcode != "load" or block_of.get(pointer.name) not in inside:
        return None
    home = pointer.operands[0].name  # where the string's pointer is kept
    if not home or (block_of.get(home) in inside):
        return None
    stores = [i for block in record.blocks for i in block_instructions.get(block, ()) if i.opcode == "store"]
    moves = [i for i in stores if len(i.operands) == 2 and i.operands[1].name == home]
    if not moves or not all(_one_element_on(i.operands[0].name, home, element_bytes, definitions) for i in moves):
        return None
    named = names.loaded_from(pointer.operands[0], 0)
    if named is None:
        return None
    symbol = f"{STRLEN}{named})"
    return Polynomial.symbol(symbol), symbol, f"walks the string at {named} (a pointer kept in memory) to its terminating zero"


_INDEXED = re.compile(rf"= getelementptr (?:inbounds )?(?:nuw )?(?P<type>i\d+), ptr %(?P<base>{VALUE_NAME}), "
                      rf"i\d+ %(?P<index>{VALUE_NAME})$")


def _walk_by_index_in_memory(value: str, record, definitions: dict, block_of: dict[str, str], names: Names,
                             block_instructions: dict[str, list]):
    """`do { val = s->name[s->index++]; … } while (val != 0)`: the string's index lives in memory (a
    member, which a call or a store through a `char *` in the loop might change, so LLVM reads it
    afresh each iteration), and the one store to it in the loop moves it one element on; the
    string's address is read from memory the loop never stores to. The walk runs from that index
    to the terminating zero: `strlen(s->name+s->index)` characters and the zero."""
    found = _tested_load(value, record, definitions, block_of)
    if found is None:
        return None
    tested, carried = found
    inside = set(record.blocks)
    gep = definitions.get(tested.operands[0].name)
    m = _INDEXED.search(gep.text.split(", !")[0]) if gep is not None and gep.opcode == "getelementptr" else None
    if m is None or m["type"] != tested.type_text:
        return None  # not one element of the tested type a step
    index = definitions.get(_uncast(_unquote(m["index"]), definitions))
    if index is None or index.opcode != "load" or block_of.get(index.name) not in inside:
        return None
    home = index.operands[0].name
    if not home or block_of.get(home) in inside:
        return None
    stores = [i for b in record.blocks for i in block_instructions.get(b, ())
              if i.opcode == "store" and len(i.operands) == 2 and i.operands[1].name == home]
    if len(stores) != 1 or _plus_constant(stores[0].operands[0].name, definitions) != (index.name, 1):
        return None
    stored_to = {i.operands[1].name for b in record.blocks for i in block_instructions.get(b, ())
                 if i.opcode == "store" and len(i.operands) == 2}
    if not _read_from_unwritten(_unquote(m["base"]), inside, stored_to, definitions, block_of):
        return None  # an address the loop computes, or reads from memory it writes
    string, start = names.value(_unquote(m["base"])), names.loaded_from(index.operands[0], 0)
    if string is None or start is None or carried:
        return None
    symbol = f"{STRLEN}{string}+{start})"
    return (Polynomial.symbol(symbol) + 1, symbol,
            f"walks the string at {string} from the index `{start}` (kept in memory, moved on one element each "
            f"iteration) to its terminating zero")


def _read_from_unwritten(name: str, inside: set[str], stored_to: set[str], definitions: dict,
                         block_of: dict[str, str], depth: int = 0) -> bool:
    """Whether `name` is the same on every iteration as far as the loop's own stores go: a value
    from before the loop, or read in it (through a few loads, constant offsets and merges of
    such reads) from addresses the loop never stores to (`s->gzhead->name`, re-read after a call)."""
    if block_of.get(name) not in inside:
        return True
    instr = definitions.get(name)
    if instr is None or depth > 6:
        return False
    if instr.opcode == "load":
        address = instr.operands[0].name
        return address not in stored_to and _read_from_unwritten(address, inside, stored_to, definitions, block_of,
                                                                 depth + 1)
    if instr.opcode == "getelementptr" and not any(op.name for op in instr.operands[1:]):
        return _read_from_unwritten(instr.operands[0].name, inside, stored_to, definitions, block_of, depth + 1)
    if instr.opcode == "phi":
        incoming = _incoming(instr)
        return bool(incoming) and all(value in definitions and _read_from_unwritten(value, inside, stored_to,
                                                                                    definitions, block_of, depth + 1)
                                      for value, _ in incoming)
    return False


def _one_element_on(value: str, home: str, element_bytes: int, definitions: dict) -> bool:
    """Whether `value` is the pointer kept at `home` moved on by one element (through a phi of
    such reads, as a merge of paths leaves it)."""
    gep = definitions.get(value)
    if gep is None or gep.opcode != "getelementptr" or any(op.name for op in gep.operands[1:]):
        return False
    if not re.search(rf", i(?:64|32) {element_bytes}(?:$|,|\s)", gep.text.split(", !")[0] + " "):
        return False
    base = definitions.get(gep.operands[0].name)
    reads = [base] if base is not None and base.opcode == "load" else \
        [definitions.get(v) for v, _ in _incoming(base)] if base is not None and base.opcode == "phi" else []
    return bool(reads) and all(r is not None and r.opcode == "load" and r.operands[0].name == home for r in reads)


def _int_bits(type_text: str) -> int:
    m = re.fullmatch(r"i(\d+)", type_text.strip())
    return int(m.group(1)) if m else 8


def _constant_offset_gep(name: str, definitions: dict):
    """(base, gep) for a getelementptr with constant indices, else (name, None)."""
    instr = definitions.get(name)
    if instr is not None and instr.opcode == "getelementptr" and not any(op.name for op in instr.operands[1:]):
        return instr.operands[0].name, instr
    return name, None


def _list_walk(value: str, record, definitions: dict, block_of: dict[str, str], header_phis: list, names: Names):
    """`for (n = head; n; n = n->next)`: a header phi whose value from inside the loop is read
    through itself (`load (phi + constant)`, or that plus a constant), tested against null:
    the phi or the link just read."""
    inside = set(record.blocks)
    for instr in header_phis:
        if instr.opcode != "phi" or instr.type_text != "ptr":
            continue
        pairs = _incoming(instr)
        starts = [v for v, block in pairs if block not in inside]
        nexts = [v for v, block in pairs if block in inside]
        if len(starts) != 1 or len(set(nexts)) != 1:
            continue
        link_name, _ = _constant_offset_gep(nexts[0], definitions)  # `&n->next->field`: a node's inner address
        link = definitions.get(link_name)
        if link is None or link.opcode != "load" or block_of.get(link.name) not in inside:
            continue
        read_from, field_gep = _constant_offset_gep(link.operands[0].name, definitions)
        if read_from != instr.name:
            continue
        if value not in (instr.name, link.name):
            continue
        start = starts[0]
        start_base, start_gep = _constant_offset_gep(start, definitions)
        if start_gep is not None and field_gep is None and (member := names.member(start_gep, 0)) is not None:
            # The phi holds the address of a link (`&array->child`, then each node's `next` at
            # offset 0): the list starts at the node read from it.
            named, extra = member, 1
        else:
            named, extra = names.value(start), 0
        if named is None:
            return None
        symbol = f"{LIST_LEN}{named})"
        # Tested on the link just read: the header runs once per node (plus once for the link
        # address it starts from); tested on the phi, once more, for the null it ends on.
        iterations = Polynomial.symbol(symbol) + extra + (1 if value == instr.name else 0)
        return iterations, symbol, f"walks the linked list at {named} to its null link"
    return None
