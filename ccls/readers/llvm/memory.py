"""How a function's code touches memory: each access's pattern (unit, strided, indirect,
pointer chase) with its strides and region, the bytes a bulk move moves, the globals' sizes, and
the branches that decide on loaded data (with the share of iterations each side then runs).
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Callable, Mapping, Sequence

from ccls.model import BasicBlock, MemoryAccess
from ccls.polynomial import Polynomial
from ccls.readers.alias_checks import is_vectorizer_check
from ccls.readers.block_frequency import block_frequencies, one_case_switches, two_armed_branches
from ccls.readers.call_sites import balanced_prefix, split_arguments
from ccls.readers.counter_branches import counter_branch_probabilities
from ccls.readers.data_walks import BRANCH
from ccls.readers.global_constants import SCALAR_BYTES
from ccls.readers.refill_counters import countdown_branch_probabilities, refill_branch_probabilities
from ccls.readers.unset_flags import decided_branches
from ccls.readers.llvm.reading import (_Reading, _ancestors_innermost_first, _inside, _named_sizes, _scev_context,
                                       _successors)
from ccls.readers.llvm.opcodes import classify
from ccls.readers.llvm.text import IRFunction, IRInstruction
from ccls.readers.scev import (BudgetExhausted, FunctionAnalyses, GLOBAL_BASE, NotPolynomial, ReadingBudget,
                               to_polynomial)


class DataConditions:
    """Whether a branch's condition is computed, within its loop, from a value loaded there:
    asked of each branch twice (its misprediction, its sides' shares), walked once. Past the
    reading budget: False (not known to follow the data)."""

    def __init__(self, analyses: FunctionAnalyses, definitions: dict, loop_defined: dict[str, str | None],
                 loaded: set[str], budget: ReadingBudget, program_filled: frozenset[str] = frozenset(),
                 unset_bytes: Mapping[str, frozenset[int]] | None = None):
        self.analyses, self.definitions, self.loaded, self.budget = analyses, definitions, loaded, budget
        self.program_filled = program_filled
        self.unset_bytes = unset_bytes or {}  # `unset_flags.never_set_bytes`
        self.loop_defined = loop_defined
        self._known: dict[tuple[str, str], bool] = {}

    def loaded_in_loop(self, condition: str, loop_id: str) -> bool:
        key = (condition, loop_id)
        if key not in self._known:
            self._known[key] = _computed_from(
                condition, self.definitions, lambda name, _: name in self.loaded,
                inside=lambda name: _inside(self.loop_defined.get(name), loop_id, self.analyses),
                through_phis=False, budget=self.budget)
        return self._known[key]

    def reads_only_program_filled(self, condition: str, loop_id: str) -> bool:
        """Whether every value loaded in the loop that `condition` is computed from is read
        from a global array the program fills itself (`program_filled_globals`)."""
        pending, seen, loads = [condition], set(), []
        while pending:
            name = pending.pop()
            if not name or name in seen or not _inside(self.loop_defined.get(name), loop_id, self.analyses):
                continue
            seen.add(name)
            definition = self.definitions.get(name)
            if name in self.loaded:
                loads.append(definition)
            elif definition is not None and definition.opcode != "phi":
                pending.extend(op.name for op in definition.operands)
        # An element at a constant index (`a[1]`) is addressed by a constant expression,
        # `getelementptr (…, ptr @a, …)`, which names no instruction: read through it too.
        return bool(loads) and all(_address_global(load.operands[0], self.definitions) in self.program_filled
                                   for load in loads)


def _weigh_data_branches(blocks: list[BasicBlock], body: list, terminators: dict, block_loop: dict[str, str],
                         conditions: DataConditions, assumptions: list[str], default_count: int = 100
                         ) -> dict[str, Fraction]:
    """Sets each block's share of its loop's iterations where a branch on loaded data decides
    whether it runs (`readers.block_frequency`, with LLVM's static branch probabilities); each
    loop's entries per iteration of its parent, the same way. A function without loops runs
    one path through its blocks per call: its branches on what it reads or is told by a call
    take their shares (a state machine's `if`s and `switch`es on its state exclude each other;
    summing every block would run them all); those on its parameters stay sizes (`n > 0`). A
    counter kept in memory, counted down each pass and refilled at zero, refills on one pass in
    its period, in loops or not (`countdown_branch_probabilities`)."""
    analyses = conditions.analyses
    if not analyses.loops:
        data = {name for name, terminator in terminators.items()
                if terminator.opcode in ("br", "switch") and len(terminator.operands) >= 3
                and _read_or_returned(terminator.operands[0].name, conditions.definitions, conditions.loaded)}
    else:
        # A conditional branch or switch in a loop whose condition is computed from a value
        # loaded in that loop: the share of iterations on each side follows the data (outside
        # loops, what is loaded is sizes and state more than data).
        data = {name for name, terminator in terminators.items()
                if block_loop.get(name) is not None and terminator.opcode in ("br", "switch")
                and len(terminator.operands) >= 3
                and not is_vectorizer_check(terminator.operands[0].name, conditions.definitions)
                and conditions.loaded_in_loop(terminator.operands[0].name, block_loop[name])}
    counted = _counter_branches(analyses, terminators, conditions.definitions)
    header_phis = {name: {i.name for i in instrs if i.opcode == "phi"} for name, instrs in body if name in analyses.loops}
    counted |= refill_branch_probabilities({h: r.blocks for h, r in analyses.loops.items()}, header_phis, terminators,
                                           conditions.definitions)
    countdowns, countdown_notes = countdown_branch_probabilities(body, terminators, conditions.definitions,
                                                                 conditions.loop_defined, default_count)
    decided = {edge[0] for edge in counted}
    counted |= {edge: p for edge, p in countdowns.items() if edge[0] not in decided}
    assumptions.extend(countdown_notes)
    # A branch on flags the program never sets goes one way, whatever LLVM's heuristics guess.
    unset = decided_branches(terminators, conditions.definitions, conditions.unset_bytes)
    counted |= unset
    if unset:
        assumptions.append(_unset_note(sorted({edge[0] for edge in unset}), blocks))
    successors = {b: _successors(t) for b, t in terminators.items()}
    loops = {h: (r.blocks, r.parent) for h, r in analyses.loops.items()}
    # A branch on anything else that picks one of two arms (both doing work, meeting again)
    # runs one of them, not both: its sides at the static estimate too.
    counted_sources = {edge[0] for edge in counted}
    undecided = [name for name, t in terminators.items() if t.opcode == "br" and len(t.operands) == 3
                 and name not in data and name not in counted_sources]
    lines = {block.name: frozenset(i.line for i in block.instructions if i.line) for block in blocks}
    known = {h: r.backedge_taken if r.backedge_taken and "COULDNOTCOMPUTE" not in r.backedge_taken else None
             for h, r in analyses.loops.items()}
    armed = two_armed_branches(undecided, successors, loops, lines, known)
    # A switch runs one of its cases each time it is reached, whatever it decides on (a format
    # chosen once, a parameter): where each case does its own work, at the static estimate too.
    idle = {name for name, instrs in body if name not in loops and not any(
        i.opcode in ("call", "invoke", "store") and "@llvm.lifetime" not in i.text for i in instrs)}
    switches = one_case_switches([name for name, t in terminators.items() if t.opcode == "switch" and name not in data],
                                 successors, loops, {b for b, t in terminators.items() if t.opcode == "unreachable"},
                                 idle)
    armed |= switches.keys()
    if not data and not counted and not armed:
        return {}
    probabilities = {edge: p for edge, p in analyses.edge_probabilities.items() if edge[0] in data | armed}
    for block, empty in switches.items():
        probabilities |= _without(block, empty, probabilities)
    shares, entries = block_frequencies([name for name, _ in body], successors, loops, probabilities | counted)
    for block in blocks:
        block.frequency = shares.get(block.name, block.frequency)
    if any(share < 1 for share in (*shares.values(), *entries.values())):
        assumptions.append("one path per call: each branch's sides counted at LLVM's static estimate of how often "
                           "each is taken (BranchProbabilityInfo)" if not analyses.loops else
                           "branches on data loaded in their loop: the blocks and loops behind them counted at LLVM's "
                           "static estimate of how often each side is taken (BranchProbabilityInfo), not on every "
                           "iteration")
    return entries


def _unset_note(branches: list[str], blocks: list[BasicBlock]) -> str:
    """The assumption for branches decided by never-set flags, by their source lines."""
    lines = sorted({i.line for b in blocks if b.name in branches for i in b.instructions[-1:] if i.line})
    where = f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else "some branches"
    return (f"branches at {where} test bytes of a static zero-filled global that no store of this file makes "
            f"nonzero (only zeros and copies of such bytes are stored there): always zero, so each goes one way")


def _without(block: str, empty: set[str], probabilities: dict[tuple[str, str], Fraction]
             ) -> dict[tuple[str, str], Fraction]:
    """`block`'s edge probabilities with its empty cases' shares given to the others, pro rata."""
    edges = {edge: p for edge, p in probabilities.items() if edge[0] == block}
    working = sum((p for edge, p in edges.items() if edge[1] not in empty), Fraction(0))
    if not empty or working <= 0:
        return {}
    return {edge: (Fraction(0) if edge[1] in empty else p / working) for edge, p in edges.items()}


def _counter_branches(analyses: FunctionAnalyses, terminators: dict, definitions: dict) -> dict[tuple[str, str], Fraction]:
    """The exact shares of branches on an innermost loop's counter, where its count is a
    constant (`readers.counter_branches`)."""
    parents = {record.parent for record in analyses.loops.values()}
    out: dict[tuple[str, str], Fraction] = {}
    for header, record in analyses.loops.items():
        count = re.sub(r"^i\d+ ", "", record.backedge_taken or "")  # ScalarEvolution types a constant: `i64 63`
        if header in parents or not count.isdigit():
            continue
        branches = {}
        for block in record.blocks:
            branch = BRANCH.match(terminators[block].text) if block in terminators else None
            test = definitions.get(branch["cond"].strip('"')) if branch else None
            if test is not None and test.opcode == "icmp":
                branches[block] = (test.text, branch["true"].strip('"'), branch["false"].strip('"'))
        if branches:
            out |= counter_branch_probabilities(header, record.blocks, int(count) + 1, branches,
                                                {b: _successors(terminators[b]) for b in record.blocks if b in terminators},
                                                analyses.value_scevs)
    return out


def _branches_on_loaded_data(instr, loop_id: str | None, block_loop: dict[str, str], conditions: DataConditions) -> bool:
    """A conditional branch inside a loop, both of whose targets stay in that loop, deciding on a
    value loaded in the loop (``if (a[i] > t)``): its direction follows the data, so the
    predictor may miss. Loop exits are excluded: they go one way until the last iteration."""
    operands = instr.operands
    if loop_id is None or len(operands) != 3 or conditions.budget.exhausted:
        return False
    targets = [op.name for op in operands[1:]]
    if not all(_inside(block_loop.get(t), loop_id, conditions.analyses) for t in targets) \
            or is_vectorizer_check(operands[0].name, conditions.definitions):
        return False
    return conditions.loaded_in_loop(operands[0].name, loop_id)


def program_filled_data(instr, loop_id: str, conditions: DataConditions) -> bool:
    """A branch on loaded data (`_branches_on_loaded_data`) whose data all come from arrays the
    program fills itself: see `program_filled_globals`."""
    return conditions.reads_only_program_filled(instr.operands[0].name, loop_id)


def _read_or_returned(condition: str, definitions: dict, loaded: set[str]) -> bool:
    """Whether `condition` is computed from a value loaded or returned by a call (in a function
    without loops, so its definitions form no cycle)."""
    return _computed_from(condition, definitions, lambda name, definition: name in loaded or (
        definition is not None and definition.opcode in ("call", "invoke")))


def _computed_from(condition: str, definitions: dict, source: Callable[[str, object], bool],
                   inside: Callable[[str], bool] = lambda name: True, through_phis: bool = True,
                   budget: ReadingBudget | None = None) -> bool:
    """Whether some value `condition` is computed from (those `inside` only; past phis or not)
    is a `source`. Past the budget: False."""
    pending, seen = [condition], set()
    while pending:
        if budget is not None:
            try:
                budget.spend()
            except BudgetExhausted:
                return False
        name = pending.pop()
        if not name or name in seen or not inside(name):
            continue
        seen.add(name)
        definition = definitions.get(name)
        if source(name, definition):
            return True
        if definition is not None and (through_phis or definition.opcode != "phi"):
            pending.extend(op.name for op in definition.operands)
    return False


def _bulk_bytes(instr: IRInstruction, callee: str, analyses: FunctionAnalyses, symbols: set[str], enclosing: set[str],
                substituted: dict[str, Polynomial], reading: _Reading) -> Polynomial | None:
    """The bytes a memcpy/memmove/memset intrinsic moves: its length operand, a constant or
    a value ScalarEvolution expresses in the function's sizes."""
    if len(instr.operands) < 3:
        return None
    length = instr.operands[2]
    if not length.name:
        words = length.text.split()
        return Polynomial.constant(int(words[-1])) if words and re.fullmatch(r"\d+", words[-1]) else None
    text = analyses.value_scevs.get(length.name)
    if text is None:
        return _named_sizes(Polynomial.symbol(length.name), reading) if length.name in symbols else None
    try:
        return _named_sizes(to_polynomial(text, _scev_context(analyses, symbols, enclosing, substituted, reading)),
                            reading)
    except (NotPolynomial, BudgetExhausted):
        return None


def _memory_access(pointer: str, element_bytes: int, loop_id: str | None, ancestors: dict[str, set[str]],
                   analyses: FunctionAnalyses, parameters: set[str], loaded: set[str],
                   load_pointers: dict[str, str], bases: set[str], substituted: dict[str, Polynomial],
                   reading: _Reading) -> MemoryAccess:
    """How an access's address moves with its loops; "unknown" once the budget is spent."""
    if loop_id is None:
        return MemoryAccess("invariant", element_bytes)
    scev = analyses.value_scevs.get(pointer)
    if scev is None:
        # Pointer arguments and globals have no SCEV line of their own: loop-invariant.
        return MemoryAccess("invariant" if pointer in parameters or not pointer else "unknown", element_bytes)
    if reading.budget.exhausted:
        return MemoryAccess("unknown", element_bytes)
    # Global arrays as bases only where the address names one: the other addresses share the
    # trip counts' memo (a decoder's phi web is resolved once, not once per mode).
    ctx = _scev_context(analyses, set(parameters), ancestors[loop_id] | {loop_id}, substituted, reading,
                        addresses="@" in scev)
    try:
        address = to_polynomial(scev, ctx)
    except BudgetExhausted:
        return MemoryAccess("unknown", element_bytes)
    except NotPolynomial:
        unknowns = set(re.findall(r"%([-\w.$]+)", scev)) | {pointer}
        # p = p->next, unrolled or not: the address comes, through loads, from a phi that carries
        # a loaded value around the loop. (A pointer picked per iteration from a table,
        # `tbl[idx[i]][i]`, is loaded too, but no iteration waits for the one before: a gather.)
        inside = set(analyses.loops[loop_id].blocks) if loop_id in analyses.loops else set()
        seen: set[str] = set()
        # Within a global array (a tree's child table, `next[node]`), either reaches no more
        # than the array; a narrow index, no more than its type's range.
        # Down a tree of a known size (`tree_descents`), the nodes it can occupy.
        # A local array (`int link[512];`, an alloca) bounds it the same way.
        spans = [s for s in (_narrow_index_span(scev), _global_array_bytes(scev, reading.global_bytes),
                             _local_array_bytes(scev, reading.local_bytes), reading.tree_bytes.get(loop_id)) if s]
        span = min(spans) if spans else None
        loaded_data = loaded - parameters  # once: the generator below would take the difference per name
        if any(_chased(name, inside, analyses, loaded_data, load_pointers, seen) for name in unknowns):
            return MemoryAccess("pointer-chase", element_bytes, span_bytes=span)
        # a[idx[i]]: the address depends on a loaded value.
        if unknowns & loaded_data:
            return MemoryAccess("indirect", element_bytes, span_bytes=span)
        # An address ScalarEvolution cannot follow still stays inside the one array it names.
        return MemoryAccess("unknown", element_bytes, span_bytes=span)
    stride = _stride(address, loop_id)
    if stride.is_zero:
        return MemoryAccess("invariant", element_bytes, stride)
    value = stride.constant_value()
    # Within a cache line the stream is dense (unrolled copies fill the gaps); beyond, strided.
    pattern = "unit" if value is not None and abs(value) <= 64 else "strided"
    strides = tuple((loop, _stride(address, loop)) for loop in [loop_id, *_ancestors_innermost_first(loop_id, analyses)])
    stream, offset = _stream_and_offset(address, bases)
    # Inside one global array, the address can reach no more than the array, whatever the
    # strides evaluate to (a stride in an unknown size is evaluated at a default).
    return MemoryAccess(pattern, element_bytes, stride, loop_strides=strides, region=stream.format(), offset=offset,
                        span_bytes=_global_array_bytes(scev, reading.global_bytes) if "@" in scev else None)


def _stream_and_offset(address: Polynomial, bases: set[str]) -> tuple[Polynomial, Polynomial]:
    """Split an address into what moves with the loops plus the array it starts at (``in``), and
    a loop-invariant byte offset: ``in[(i+1)*n + j]`` and ``in[(i-1)*n + j]`` are one stream,
    two rows apart."""
    moving = Polynomial(tuple((m, c) for m, c in address.terms
                              if any(symbol.startswith("@") for symbol, _ in m)
                              or (c == 1 and len(m) == 1 and m[0][1] == 1
                                  and (m[0][0] in bases or m[0][0].startswith(GLOBAL_BASE)))))
    return moving, address - moving


_NARROW_INDEX = re.compile(r"(?:\((\d+) \* )?\(zext i(8|16) %[-\w.$\"]+ to i\d+\)")


_GLOBAL = re.compile(r'^@("[^"]+"|[-\w.$]+) = (?:[\w()]+ )*?(?:global|constant) ((?:\[[^=]*?\])|[^\s,]+) ', re.M)
_ARRAY = re.compile(r"^\[(\d+) x (.+)\]$")


# A writable global defined here with no contents of its own (`int a[N];`, `char state;`: zero
# at load).
_ZERO_FILLED = re.compile(r'^@("[^"]+"|[-\w.$]+) = (?:[\w()]+ )*?global (?:(?:\[[^=\n]*?\]|%[-\w.$]+|\w+) zeroinitializer\b|(?:i\d+|float|double) (?:0|0\.0+e\+00)(?=,|$))', re.M)


def program_filled_globals(ir: str, functions: Sequence[IRFunction]) -> frozenset[str]:
    """The module's writable globals that start empty (zero-filled at load: arrays, and scalars
    such as a state machine's flags): whatever a branch reads there, the program's own code
    stored (constants, ramps, periodic patterns, sums of them), where data behind a pointer
    argument or in a table written into the source may be any input. A predictor learns the regular directions such values take at a
    comparison: counting charges their branches no mispredictions (the best end of the range
    in `counting.MISPREDICT_RATE`; 0% measured on TSVC's kernels, whose arrays are these).
    An array the module hands to a routine that reads input into memory (`fread(buf, …)`),
    copies anything but another such array into (`memcpy(buf, src, n)`, a table written into
    the source included), or stores a call's result into (`buf[i] = rand()`, a decoder's
    output) holds input: not one of these."""
    zero_filled = {m.group(1).strip('"') for m in _ZERO_FILLED.finditer(ir)}
    scalars = {m.group(1).strip('"') for m in _INITIALISED_SCALAR.finditer(ir)}
    if not zero_filled and not scalars:
        return frozenset()
    # Each function's instructions by name, made once for both walks below.
    bodies = [(fn, {i.name: i for _, instrs in fn.blocks for i in instrs if i.name}) for fn in functions]
    zero_filled |= _stepped_counters(scalars, bodies)
    filled = zero_filled - _stored_from_calls(bodies)
    changed = True
    while changed:  # a copy of a copy of input is input
        changed = False
        for m in _INPUT_CALL.finditer(ir) if filled else ():
            arguments = split_arguments(balanced_prefix(m.group("args")))
            if m.group("callee").startswith(_COPIES) and len(arguments) >= 2:
                sources = {name.strip('"') for name in _GLOBAL_NAME.findall(arguments[1])}
                if sources and sources <= filled:
                    continue  # one of the program's arrays copied into another
                arguments = arguments[:1]  # the destination
            taken = {name.strip('"') for argument in arguments for name in _GLOBAL_NAME.findall(argument)} & filled
            if taken:
                filled -= taken
                changed = True
    return frozenset(filled)


# An integer scalar defined here with a constant of its own (`volatile int P1_is_marked = 3;`).
_INITIALISED_SCALAR = re.compile(r'^@("[^"]+"|[-\w.$]+) = (?:[\w()]+ )*?global i\d+ -?\d+(?=,|$)', re.M)
_STEP = re.compile(r"^(?:add|sub)(?: nuw| nsw)* i\d+ %(?P<of>\"[^\"]+\"|[-\w.$]+), -?\d+$")


def _stepped_counters(scalars: set[str], bodies: Sequence[tuple[IRFunction, dict]]) -> set[str]:
    """Integer scalars the source starts at a constant that the program only ever sets to a
    constant or steps by one (`P1_is_marked = 3; … P1_is_marked -= 3;`, a Petri net's marking,
    a state number): counts the program keeps itself, as regular as what it stores into a
    zero-filled global, never mixed the way a pseudo-random seed is (`seed = seed * a + c`).
    A scalar whose address is used otherwise (passed, stored, indexed) may hold anything."""
    scalars = set(scalars)
    stored: set[str] = set()  # one nothing writes is the source's setting, as a table written there is
    for fn, definitions in bodies if scalars else ():
        for _, instrs in fn.blocks:
            for instr in instrs:
                used = {name.strip('"') for name in _GLOBAL_NAME.findall(instr.text.split(", !")[0])} & scalars
                if not used:
                    continue
                if instr.opcode == "load" and instr.operands and instr.operands[0].is_global_variable:
                    continue
                if instr.opcode == "store" and len(instr.operands) == 2 and instr.operands[1].is_global_variable \
                        and instr.operands[1].name not in {o.name for o in instr.operands[:1]} \
                        and _stepped(instr.operands[0], instr.operands[1].name, definitions):
                    stored.add(instr.operands[1].name)
                    continue
                scalars -= used
    return scalars & stored


def _stepped(value, scalar: str, definitions: dict) -> bool:
    """Whether a value stored into `scalar` is a constant or the scalar's own value plus or
    minus a constant."""
    if not value.name:
        return bool(re.fullmatch(r"i\d+ -?\d+", value.text.strip()))
    step = definitions.get(value.name)
    m = _STEP.match(step.text.split(" = ", 1)[1].split(", !")[0]) if step is not None and " = " in step.text else None
    if m is None:
        return False
    read = definitions.get(m["of"].strip('"'))
    return read is not None and read.opcode == "load" and read.operands[0].is_global_variable \
        and read.operands[0].name == scalar


def _global_base(pointer, definitions: dict) -> str | None:
    """The global an address points into, through the address arithmetic on it."""
    for _ in range(16):
        if pointer.is_global_variable:
            return pointer.name
        definition = definitions.get(pointer.name)
        if definition is None or definition.opcode not in ("getelementptr", "bitcast", "addrspacecast"):
            return None
        pointer = definition.operands[0]
    return None


def _stored_from_calls(bodies: Sequence[tuple[IRFunction, dict]]) -> set[str]:
    """Globals some store fills with a value computed from a call's result: `buf[i] = rand() %
    26`, `out[n++] = decode(…)`."""
    out: set[str] = set()
    for fn, definitions in bodies:
        for _, instrs in fn.blocks:
            for instr in instrs:
                if instr.opcode == "store" and len(instr.operands) >= 2 \
                        and (base := _address_global(instr.operands[1], definitions)) is not None \
                        and _from_a_call(instr.operands[0].name, definitions):
                    out.add(base)
    return out


def _address_global(pointer, definitions: dict) -> str | None:
    """`_global_base`, and the global of a constant address `getelementptr (…, ptr @g, …)`."""
    if not pointer.name and "getelementptr" in pointer.text:
        named = _GLOBAL_NAME.findall(pointer.text)
        return named[0].strip('"') if len(named) == 1 else None
    return _global_base(pointer, definitions)


def _from_a_call(value: str, definitions: dict) -> bool:
    """Whether `value` is computed, through arithmetic and merges, from what a call returns.
    C's math functions and LLVM's intrinsics compute from their arguments alone (`a[i] =
    sinf(b[i])` is the program's own data when b is): followed through, as `classify` tells
    them from calls."""
    pending, seen = [value], set()
    while pending and len(seen) < 64:
        name = pending.pop()
        definition = definitions.get(name)
        if name in seen or definition is None:
            continue
        seen.add(name)
        if definition.opcode in ("call", "invoke") and \
                classify(definition.opcode, definition.text, "")[0] in ("call", "call_indirect"):
            return True
        if definition.opcode not in ("load", "alloca"):  # a loaded value is other memory's
            pending.extend(op.name for op in definition.operands if op.name)
    return False


# Calls that put input (a file's, a socket's, a string's, another buffer's bytes) into memory
# they are given: libc's readers, and the memory copies (`llvm.memcpy.*` as LLVM spells them).
_INPUT_CALL = re.compile(r"\bcall\b[^\n]*?@(?P<callee>fread|fread_unlocked|read|pread|pread64|readv|fgets|fgets_unlocked|gets|"
                         r"getline|getdelim|recv|recvfrom|recvmsg|scanf|fscanf|sscanf|__isoc99_scanf|"
                         r"__isoc99_fscanf|__isoc99_sscanf|memcpy|memmove|strcpy|strncpy|"
                         r"llvm\.memcpy\.[\w.]+|llvm\.memmove\.[\w.]+)\((?P<args>[^\n]*)")
_COPIES = ("memcpy", "memmove", "strcpy", "strncpy", "llvm.memcpy", "llvm.memmove")
_GLOBAL_NAME = re.compile(r'@("[^"]+"|[-\w.$]+)')


def global_sizes(ir: str) -> dict[str, int]:
    """Bytes of each global whose type is a scalar or a (nested) array of scalars."""
    out = {}
    for m in _GLOBAL.finditer(ir):
        size = _type_bytes(m.group(2).strip())
        if size:
            out[m.group(1).strip('"')] = size
    return out


def _type_bytes(type_text: str) -> int | None:
    m = _ARRAY.match(type_text)
    if m:
        inner = _type_bytes(m.group(2).strip())
        return int(m.group(1)) * inner if inner else None
    return SCALAR_BYTES.get(type_text)


def _global_array_bytes(scev: str, global_bytes: dict[str, int]) -> int | None:
    """The size of the one global array an address points into, if it names one."""
    names = {n.strip('"') for n in re.findall(r'@("[^"]+"|[-\w.$]+)', scev)}
    return global_bytes.get(names.pop()) if len(names) == 1 else None


def _local_array_bytes(scev: str, local_bytes: dict[str, int]) -> int | None:
    """The size of the one local array (an alloca of an array type) an address points into, if it
    names one and no global."""
    if "@" in scev:
        return None
    names = {n.strip('"') for n in re.findall(r'%("[^"]+"|[-\w.$]+)', scev)} & local_bytes.keys()
    return local_bytes[names.pop()] if len(names) == 1 else None


def local_array_sizes(body) -> dict[str, int]:
    """Bytes of each fixed-size local array a function allocates (`%link = alloca [512 x i32]`)."""
    out = {}
    for _, instrs in body:
        for instr in instrs:
            if instr.opcode == "alloca" and instr.name and (m := _ALLOCA.match(instr.text)) \
                    and (size := _type_bytes(m.group(1).strip())):
                out[instr.name] = size
    return out


_ALLOCA = re.compile(r"^%(?:\"[^\"]+\"|[-\w.$]+) = alloca (\[[^=,]*\])(?:,|$)")


def _narrow_index_span(scev: str) -> int | None:
    """``hist[byte]``: an index zero-extended from 8 or 16 bits reaches at most 2^bits slots."""
    m = _NARROW_INDEX.search(scev)
    if m is None:
        return None
    return int(m.group(1) or 1) << int(m.group(2))


def _chased(name: str, inside: set[str], analyses: FunctionAnalyses, loaded: set[str],
            load_pointers: dict[str, str], seen: set[str]) -> bool:
    """Whether `name` comes, through loads and address arithmetic, from a phi carried around the
    loop (one of its edges enters from outside `inside`, the loop's blocks) whose value from
    inside is loaded: each iteration's address waits for the previous iteration's load."""
    if name in seen or len(seen) > 64:
        return False
    seen.add(name)
    incoming = analyses.phi_incoming.get(name)
    if incoming is not None:
        values = [v.lstrip("%").strip('"') for v in incoming]
        if set(analyses.phi_blocks.get(name, ())) - inside:  # a header phi: carried around the loop
            return any(v in loaded for v in values)
        return any(_chased(v, inside, analyses, loaded, load_pointers, seen) for v in values)  # a merge
    if name in loaded:
        return _chased(load_pointers.get(name, ""), inside, analyses, loaded, load_pointers, seen)
    return any(_chased(other, inside, analyses, loaded, load_pointers, seen)
               for other in re.findall(r"%([-\w.$]+)", analyses.value_scevs.get(name, "")) if other != name)


def _stride(address: Polynomial, loop_id: str) -> Polynomial:
    """How far the address moves per iteration of `loop_id`."""
    index = "@" + loop_id
    return address.substitute(index, Polynomial.symbol(index) + 1) - address
