"""Reading LLVM's own loop and ScalarEvolution analyses, as printed by
``opt -passes='print<loops>,print<scalar-evolution>'``, into loops, trip counts and address
recurrences. Pure text in, data out.

SCEV expressions become Polynomials: function arguments stay symbolic (``n``), an add
recurrence ``{a,+,b}<%L>`` becomes ``a + b·@L`` (``@L`` = L's 0-based iteration index), and a
few non-polynomial forms are replaced by their expectation, each noted as an assumption.
"""
from __future__ import annotations

import functools
import operator
import re
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from ccls.polynomial import Polynomial

_LOOP_INFO = re.compile(r"^Loop info for function '(?P<fn>.+)':$")
_LOOP_LINE = re.compile(r"^(?P<indent>\s*)(?:Parallel )?Loop at depth (?P<depth>\d+) containing: (?P<blocks>.*)$")
_COUNTS_FOR = re.compile(r"^Determining loop execution counts for: @(?P<fn>.+)$")
_CLASSIFY_FOR = re.compile(r"^Classifying expressions for: @(?P<fn>.+)$")
_BTC = re.compile(r"^Loop %(?P<loop>.+?): backedge-taken count is (?P<expr>.+)$")
_SYMBOLIC_MAX_BTC = re.compile(r"^Loop %(?P<loop>.+?): symbolic max backedge-taken count is (?P<expr>.+)$")
_MAX_BTC = re.compile(r"^Loop %(?P<loop>.+?): constant max backedge-taken count is (?:i\d+ )?(?P<n>-?\d+)$")
_VALUE = re.compile(r"^  (?P<name>%[-\w.$\"]+) = ")
_OR_CONSTANT = re.compile(r"= or (?:disjoint )?i\d+ (?P<operand>%[-\w.$\"]+), (?P<constant>\d+)$")
_VALUE_SCEV = re.compile(r"^  -->  (?P<expr>.+?)(?:\s+U: .*)?$")
_EXITS = re.compile(r"\tExits: (?P<expr>[^\t]+)")
_UNSIGNED_RANGE = re.compile(r"\sU: \[(?P<lo>-?\d+),(?P<hi>-?\d+)\)")
_SIGNED_RANGE = re.compile(r"\sS: \[(?P<lo>-?\d+),(?P<hi>-?\d+)\)")
SMALL_RANGE = 64  # an opaque value known to lie in fewer values than this is taken as its midpoint
_BLOCK = re.compile(r"%(\"[^\"]+\"|[-\w.$]+)(<[^,]*>)*")
_PHI = re.compile(r"= phi [^\[]*(.*)$")
_PHI_VALUE = re.compile(r"\[\s*([^,\]]+),")
_PHI_BLOCK = re.compile(r"\[\s*[^,\]]+,\s*%(\"[^\"]+\"|[-\w.$]+)\s*\]")
_BPI_FOR = re.compile(r"^Printing analysis 'Branch Probability Analysis' for function '(?P<fn>.+)':$")
_EDGE = re.compile(r"^  edge %(?P<src>\"[^\"]+\"|[-\w.$]+) -> %(?P<dst>\"[^\"]+\"|[-\w.$]+) probability is "
                   r"0x(?P<num>[0-9a-f]+) / 0x(?P<den>[0-9a-f]+)")

UNKNOWN = "***COULDNOTCOMPUTE***"
GLOBAL_BASE = "&"  # symbol prefix of a global's address in address polynomials (`&a`)


@dataclass
class LoopRecord:
    header: str
    depth: int
    blocks: list[str]
    parent: str | None
    backedge_taken: str | None = None  # SCEV text, None when not printed
    constant_max_backedge_taken: int | None = None
    symbolic_max_backedge_taken: str | None = None  # an upper bound (early exits), SCEV text


@dataclass
class FunctionAnalyses:
    loops: dict[str, LoopRecord] = field(default_factory=dict)
    value_scevs: dict[str, str] = field(default_factory=dict)  # "%name" → SCEV text
    phi_incoming: dict[str, list[str]] = field(default_factory=dict)  # "%phi" → incoming values
    phi_blocks: dict[str, list[str]] = field(default_factory=dict)  # "%phi" → the blocks they come from
    # "%x" → (operand, constant) for `%x = or %operand, constant`, which ScalarEvolution leaves
    # opaque (a vectorised loop's end index: its trip count with the low bit set).
    low_bits_set: dict[str, tuple[str, int]] = field(default_factory=dict)
    # "%x" → [lo, hi) for values ScalarEvolution cannot express but bounds to a few values (a
    # vector loop's remainder chosen by a select: `select %c, 4, %n.mod.vf` lies in [0, 8)).
    small_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    # "%x" → the largest value ScalarEvolution's unsigned range allows it (`lshr i8 %s, 4`: 15),
    # where that range does not wrap.
    value_maxima: dict[str, int] = field(default_factory=dict)
    # "%x" → its value when its loop exits, as ScalarEvolution prints it (`Exits: (4 * (%len /u 4))`),
    # where it computes one: what a phi after that loop receives from it.
    exit_values: dict[str, str] = field(default_factory=dict)
    # (from block, to block) → LLVM's static branch probability (BranchProbabilityInfo: the
    # loop, pointer, call, comparison and __builtin_expect heuristics), where it printed one.
    edge_probabilities: dict[tuple[str, str], Fraction] = field(default_factory=dict)


def _range(pattern: re.Pattern, printed: str) -> tuple[int, int] | None:
    """A printed value's [lo, hi) under `pattern` (its unsigned or signed range)."""
    bounds = pattern.search(printed)
    return (int(bounds["lo"]), int(bounds["hi"])) if bounds is not None else None


def _range_maximum(unsigned: tuple[int, int] | None, signed: tuple[int, int] | None) -> int | None:
    """The largest value a printed value's ranges allow, where one does not wrap: its unsigned
    range `U: [0,16)`, or its signed range `S: [-3,16)` (a size is never below zero)."""
    tops = []
    if unsigned is not None and 0 <= unsigned[0] < unsigned[1]:
        tops.append(unsigned[1] - 1)
    if signed is not None and signed[0] < signed[1]:
        tops.append(signed[1] - 1)
    return min(tops) if tops else None


_ADD_RECURRENCE = re.compile(r"^\{(?P<body>.+)\}(?:<[a-z]+>)*<%(?P<loop>[^>]+)>$")


def split_add_recurrence(text: str) -> tuple[str, str, str] | None:
    """(start, step, loop) of an add recurrence `{start,+,step}<flags><%loop>` as ScalarEvolution
    prints it, whose parts may hold commas and braces of their own (`{0,+,1,+,2}` steps by
    `{1,+,2}`); the loop's header unquoted. None for any other expression."""
    m = _ADD_RECURRENCE.match(text)
    if m is None:
        return None
    body, depth = m["body"], 0
    for index, char in enumerate(body):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(char, 0)
        if depth == 0 and body.startswith(",+,", index):
            return body[:index], body[index + 3:], _strip_quotes(m["loop"])
    return None


class AddRecurrence(NamedTuple):
    """`{start,+,step}<%loop>`: the value `start` takes on entry to `loop`, plus `step` each iteration."""
    start: str  # as printed: a constant, a value, an expression (a recurrence of an outer loop too)
    step: int
    loop: str  # the loop's header block, unquoted

    @property
    def constant_start(self) -> int | None:
        return int(self.start) if re.fullmatch(r"-?\d+", self.start) else None

    @property
    def flat_start(self) -> bool:
        """Whether the start is a constant, a value or an expression of those, not a recurrence."""
        return "{" not in self.start and "}" not in self.start


def add_recurrence(text: str) -> AddRecurrence | None:
    """The add recurrence with a constant step that a value's ScalarEvolution text is, or None."""
    parts = split_add_recurrence(text)
    if parts is None or not re.fullmatch(r"-?\d+", parts[1]):
        return None
    return AddRecurrence(parts[0].strip(), int(parts[1]), parts[2])


def _strip_quotes(name: str) -> str:
    return name[1:-1] if name.startswith('"') else name


def parse_opt_output(text: str) -> dict[str, FunctionAnalyses]:
    """Split opt's analysis printout into per-function loop nests, trip counts and SCEVs."""
    result: dict[str, FunctionAnalyses] = {}
    current: FunctionAnalyses | None = None
    stack: list[LoopRecord] = []
    pending_value: str | None = None
    mode = ""
    for raw in text.splitlines():
        # A section's header starts at the line's first column; the lines within it (values,
        # their SCEVs, edges), most of the text, are indented: only a header is tried as one.
        if raw[:1] != " ":
            if m := _LOOP_INFO.match(raw):
                current = result.setdefault(m["fn"], FunctionAnalyses())
                stack, mode = [], "loops"
                continue
            if m := _CLASSIFY_FOR.match(raw):
                current = result.setdefault(m["fn"], FunctionAnalyses())
                mode, pending_value = "values", None
                continue
            if m := _COUNTS_FOR.match(raw):
                current = result.setdefault(m["fn"], FunctionAnalyses())
                mode = "counts"
                continue
            if m := _BPI_FOR.match(raw):
                current = result.setdefault(m["fn"], FunctionAnalyses())
                mode = "branches"
                continue
        if current is None:
            continue
        if mode == "branches":
            if m := _EDGE.match(raw):
                key = (_strip_quotes(m["src"]), _strip_quotes(m["dst"]))  # a switch's cases may share a target
                current.edge_probabilities[key] = current.edge_probabilities.get(key, Fraction(0)) + \
                    Fraction(int(m["num"], 16), int(m["den"], 16))
        elif mode == "loops" and (m := _LOOP_LINE.match(raw)):
            depth = int(m["depth"])
            blocks, header = [], None
            for bm in _BLOCK.finditer(m["blocks"]):
                name = _strip_quotes(bm.group(1))
                blocks.append(name)
                if bm.group(0).find("<header>") >= 0:
                    header = name
            header = header or (blocks[0] if blocks else "")
            while stack and stack[-1].depth >= depth:
                stack.pop()
            record = LoopRecord(header, depth, blocks, stack[-1].header if stack else None)
            current.loops[header] = record
            stack.append(record)
        elif mode == "values":
            if m := _VALUE.match(raw):
                pending_value = _strip_quotes(m["name"][1:])
                phi = _PHI.search(raw)
                if phi:
                    current.phi_incoming[pending_value] = _PHI_VALUE.findall(phi.group(1))
                    current.phi_blocks[pending_value] = [_strip_quotes(b) for b in _PHI_BLOCK.findall(phi.group(1))]
                elif low := _OR_CONSTANT.search(raw):
                    current.low_bits_set[pending_value] = (_strip_quotes(low["operand"][1:]), int(low["constant"]))
            elif pending_value and (m := _VALUE_SCEV.match(raw)):
                expr = m["expr"].split("\t")[0].strip()
                current.value_scevs[pending_value] = expr
                if (exits := _EXITS.search(raw)) and UNKNOWN not in exits["expr"] and "<<" not in exits["expr"]:
                    current.exit_values[pending_value] = exits["expr"].strip()
                unsigned = _range(_UNSIGNED_RANGE, raw)
                if (most := _range_maximum(unsigned, _range(_SIGNED_RANGE, raw))) is not None:
                    current.value_maxima[pending_value] = most
                if unsigned and _strip_quotes(expr[1:]) == pending_value and expr.startswith("%") \
                        and 0 <= unsigned[0] < unsigned[1] <= unsigned[0] + SMALL_RANGE:
                    current.small_ranges[pending_value] = unsigned
                pending_value = None
        elif mode == "counts":
            if m := _BTC.match(raw):
                loop = current.loops.get(_strip_quotes(m["loop"]))
                if loop is not None:
                    loop.backedge_taken = m["expr"].strip()
            elif m := _SYMBOLIC_MAX_BTC.match(raw):
                loop = current.loops.get(_strip_quotes(m["loop"]))
                if loop is not None:
                    loop.symbolic_max_backedge_taken = m["expr"].strip()
            elif m := _MAX_BTC.match(raw):
                loop = current.loops.get(_strip_quotes(m["loop"]))
                if loop is not None and int(m["n"]) >= 0:
                    loop.constant_max_backedge_taken = int(m["n"])
    return result


class NotPolynomial(Exception):
    """The SCEV expression depends on something we cannot express (a loaded value…)."""


class BudgetExhausted(Exception):
    """A function's reading used up its budget of steps or time (`ReadingBudget`)."""


# Per function: far more than the phi web of a decoder's state machine takes once its values are
# memoised (zlib's inflate(), 422 blocks: ~60,000 steps), small enough that no function holds a
# worker for long. The clock is the safety net for what steps do not measure (a loaded machine).
DEFAULT_BUDGET_STEPS = 300_000  # ~2-4 s of one core; real libraries' functions take < 60k but a few
# The steps bound a reading on any machine alike; the clock only guards against a step that is
# not counted (a machine under load would otherwise cut readings short at random).
DEFAULT_BUDGET_SECONDS = 20.0
# Of those, what reading the memory accesses' addresses may spend, after the trip counts: many
# per loop, each dearer than a count (a step there is ~15 µs against ~7 µs), and only refining
# a cost the counts already give.
MEMORY_ACCESS_STEPS = 40_000


@dataclass
class ReadingBudget:
    """Steps (SCEV expression nodes read, IR values walked) and seconds one function's analysis
    may take, its clock started by the first step (reading its instructions, linear, is not
    counted). Once spent, every later `spend` raises BudgetExhausted too: the reader reports
    what it knows and assumes the rest."""

    max_steps: int = DEFAULT_BUDGET_STEPS
    max_seconds: float = DEFAULT_BUDGET_SECONDS
    steps: int = 0
    exhausted: bool = False
    over_time: bool = False  # spent by the clock (load-dependent), not by its steps
    started: float | None = None

    def spend(self, steps: int = 1) -> None:
        if self.started is None:
            self.started = time.monotonic()
        self.steps += steps
        if not self.exhausted:
            # The clock is read once per 1024 steps: a step is a few microseconds.
            over_time = (self.steps & 1023) < steps and self.elapsed_seconds() > self.max_seconds
            self.exhausted = self.steps > self.max_steps or over_time
            self.over_time = over_time and self.steps <= self.max_steps
        if self.exhausted:
            raise BudgetExhausted(f"analysis stopped after {self.elapsed_seconds() * 1000:.0f} ms")

    def elapsed_seconds(self) -> float:
        return time.monotonic() - self.started if self.started is not None else 0.0

    def share(self, most_steps: int) -> ReadingBudget:
        """A budget for one part of the reading: at most `most_steps` of what is left of this one
        (steps and seconds), so that part cannot spend what the rest needs."""
        left_seconds = self.max_seconds - self.elapsed_seconds()
        part = ReadingBudget(max_steps=max(0, min(most_steps, self.max_steps - self.steps)),
                             max_seconds=max(0.0, left_seconds))
        part.exhausted = self.exhausted
        return part

    def absorb(self, part: ReadingBudget) -> None:
        """Count what a `share` spent as spent here."""
        self.steps += part.steps
        if self.started is None:
            self.started = part.started


@dataclass
class ValueTable:
    """The values of one function already resolved under one set of parameters and enclosing
    loops, and the strongly connected components of its phi web found so far."""

    # name → (Polynomial | NotPolynomial, its own notes, the values its reading used)
    values: dict[str, tuple] = field(default_factory=dict)
    finished: set[str] = field(default_factory=set)  # phis whose component has been resolved
    # name → how it was resolved in the function's other tables (`Resolution`), shared by them
    resolutions: dict[str, list[Resolution]] | None = None


# What a value's reading may look up, and the answers it got (`Resolution.reads`):
_SUBSTITUTED, _PARAMETER, _CARRIED, _RESOLVED, _LEAF, _LOOP, _GLOBALS, _MAX_CONSTANT = range(8)
_MISSING = object()
RESOLUTIONS_KEPT = 4  # per value: its readings under different answers that are kept to be replayed


@dataclass(frozen=True)
class Resolution:
    """How one value was resolved in one table, to be replayed in another where every look-up
    its reading made gets the same answer: the reading would then be the same, step for step.
    A table per (parameters, enclosing loops, named values) resolves a phi web again in each,
    and most of its values read nothing that differs between them.

    `reads`: what the reading looked up, in order, and the answer: (_SUBSTITUTED, name, value),
    (_PARAMETER, name), (_CARRIED, name) (a phi of the cycle, or one being resolved),
    (_RESOLVED, name, value) (an entry of the table), (_LEAF, name) (a value with nothing to be
    resolved through: its entry depends on the function alone), (_LOOP, loop, encloses),
    (_GLOBALS, global_bases), (_MAX_CONSTANT, max_takes_constant)."""

    reads: tuple
    substituted_twins: tuple[int, ...]  # which substituted values read were the same object
    constants: tuple  # the function's analyses it read (the same dicts)
    steps: int
    read_phi_merge: bool
    entry: tuple  # (value, notes, used), as ValueTable.values keeps it
    stack_depth: int  # where it was read: deeper, a reading may run out of stack where it did not


def _context_constants(ctx: ScevContext) -> tuple:
    return ctx.value_scevs, ctx.phi_incoming, ctx.exit_values, ctx.low_bits_set, ctx.small_ranges


def _twins(values: list) -> tuple[int, ...]:
    """For each value, the first position holding the same object (`max` tells operands apart by
    identity)."""
    return tuple(next(i for i, other in enumerate(values) if other is value) for value in values)


def _stack_depth() -> int:
    depth, frame = 0, sys._getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _same_value(a, b) -> bool:
    if isinstance(a, NotPolynomial) or isinstance(b, NotPolynomial):
        return isinstance(a, NotPolynomial) and isinstance(b, NotPolynomial) and str(a) == str(b)
    return a == b


class ValueMemo:
    """Per function, a ValueTable for each (parameters, enclosing loops) its contexts use: a phi
    merging two values that each depend on the previous merge (a chain of if/else) is then
    resolved once, not 2^depth times."""

    def __init__(self) -> None:
        self._tables: dict[tuple[frozenset, frozenset, bool, frozenset], ValueTable] = {}
        self._resolutions: dict[str, list[Resolution]] = {}

    def table(self, parameters: set[str], enclosing_loops: set[str], global_bases: bool = False,
              also_named: frozenset = frozenset()) -> ValueTable:
        """`also_named`: (value, symbol) pairs substituted beyond the function's own sizes (run-time
        values named after their variables): values resolved under them are kept apart."""
        key = (frozenset(parameters), frozenset(enclosing_loops), global_bases, also_named)
        if key not in self._tables:
            self._tables[key] = ValueTable(resolutions=self._resolutions)
        return self._tables[key]


@dataclass
class ScevContext:
    parameters: set[str]  # function argument names, without '%'
    value_scevs: dict[str, str]
    phi_incoming: dict[str, list[str]]
    enclosing_loops: set[str]  # loops whose index symbols may appear (ancestors of the loop)
    assumptions: list[str] = field(default_factory=list)
    low_bits_set: dict[str, tuple[str, int]] = field(default_factory=dict)
    small_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    # values read as a polynomial: a symbol named from the source (`%i` -> `n`), or a container's
    # begin/end pointers as 0 and its byte size (`%end` -> 8·`v.size()`)
    substituted: dict[str, Polynomial] = field(default_factory=dict)
    # share one (ValueMemo.table) between the contexts of a function with the same parameters
    # and enclosing loops
    memo: ValueTable = field(default_factory=ValueTable)
    budget: ReadingBudget | None = None
    # Addresses: a global's address (`@a`) is a symbol of its own (GLOBAL_BASE + name), the base
    # of the array it holds. Counts never take it (a trip count in an address is meaningless).
    global_bases: bool = False
    # max(c, s) of a trip count: take the constant (`for (i = s; i < c; i++)` counts max(c, s) − s;
    # the symbolic operand is the start, and taking it would cancel the count to nothing)
    max_takes_constant: bool = False
    exit_values: dict[str, str] = field(default_factory=dict)  # FunctionAnalyses.exit_values
    phi_blocks: dict[str, list[str]] = field(default_factory=dict)  # FunctionAnalyses.phi_blocks
    read_phi_merge: bool = False  # a phi was read as the values flowing into it (a remainder loop's start)
    _blocked: frozenset[str] = frozenset()  # the phis of the cycle being resolved
    _resolving: set[str] = field(default_factory=set)
    # each value being resolved: [its own notes, the values its reading used (both ordered sets),
    # what its reading looked up (`Resolution.reads`; None once it resolved another value)]
    _frames: list[list] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Record an assumption once: for the value being resolved (its memo entry gives it to
        whatever uses it), or, at the top, for the expression being read."""
        if self._frames:
            self._frames[-1][0][text] = None
        elif text not in self.assumptions:
            self.assumptions.append(text)

    def used(self, name: str) -> None:
        """The expression being read uses the memoised value `name`, and so its notes: kept as a
        link while a value is resolved (a chain of merges would copy each merge's notes into
        every later one), given to the top-level expression's notes once, in order."""
        if self._frames:
            self._frames[-1][1][name] = None
            return
        seen, notes, order = set(), dict.fromkeys(self.assumptions), []
        stack = [(name, False)]
        while stack:  # depth first: a value's notes after those of the values it read
            current, done = stack.pop()
            if done:
                order.append(current)
                continue
            if current in seen or current not in self.memo.values:
                continue
            seen.add(current)
            stack.append((current, True))
            stack.extend((dep, False) for dep in reversed(self.memo.values[current][2]))
        for current in order:
            for text in self.memo.values[current][1]:
                if text not in notes:
                    notes[text] = None
                    self.assumptions.append(text)

    def spend(self, steps: int = 1) -> None:
        if self.budget is not None:
            self.budget.spend(steps)

    def looked_up(self, read: tuple) -> None:
        """The value being resolved looked `read` up (`Resolution.reads`)."""
        if self._frames and (reads := self._frames[-1][2]) is not None:
            reads.append(read)

    def not_replayable(self) -> None:
        """The value being resolved resolved another as it was read: its reading is not replayed."""
        if self._frames:
            self._frames[-1][2] = None


_TOKEN = re.compile(
    r"\s*(\*\*\*COULDNOTCOMPUTE\*\*\*|\{|\}|\(|\)|,\+,|<%(?:\"[^\"]+\"|[-\w.$]+)>|<\w+>|"
    r"/u|umin_seq|smax|umax|smin|umin|zext|sext|trunc|ptrtoint|to|\+|\*|"
    r"i\d+|ptr|-?\d+|%(?:\"[^\"]+\"|[-\w.$]+)|@[-\w.$]+|\S)"
)


_OPERATORS = ("+", "*", "/u", "smax", "umax", "smin", "umin", "umin_seq")
# The parser's tests on single tokens, compiled once (`re.fullmatch` looks its pattern up each call).
_INTEGER = re.compile(r"-?\d+")
_FLAG = re.compile(r"<\w+>")
_INTEGER_TYPE = re.compile(r"i\d+")
_CONSTANT_INCOMING = re.compile(r"-?\d+|poison|undef|zeroinitializer")
_NAMED_VALUE = re.compile(r"%(\"[^\"]+\"|[-\w.$]+)")
_INTEGER_TYPES = ("i1", "i8", "i16", "i32", "i64", "i128")
# What `_Parser.expression` reads a token as (`_token_kind`).
(_READS_VALUE, _READS_OPEN, _READS_RECURRENCE, _READS_UNKNOWN, _READS_NUMBER, _READS_TYPED_NUMBER, _READS_GLOBAL,
 _READS_OTHER) = range(8)


def _token_kind(tokens: list[str], at: int) -> tuple[int, object]:
    """What an expression starting at `tokens[at]` is, and what it takes from its text: a
    value's or a global's name, or a number (`i64 8` is one too)."""
    tok = tokens[at]
    first = tok[0]
    if first == "%":
        return _READS_VALUE, _strip_quotes(tok[1:])
    if first == "(":
        return _READS_OPEN, None
    if first == "{":
        return _READS_RECURRENCE, None
    if tok == UNKNOWN:
        return _READS_UNKNOWN, None
    if _INTEGER.fullmatch(tok):
        return _READS_NUMBER, Fraction(int(tok))
    if tok in _INTEGER_TYPES and at + 1 < len(tokens) and _INTEGER.fullmatch(tokens[at + 1]):
        return _READS_TYPED_NUMBER, Fraction(int(tokens[at + 1]))
    if first == "@":
        return _READS_GLOBAL, _strip_quotes(tok[1:])
    return _READS_OTHER, None
# A budget step is about one expression node read; scanning this many tokens costs about as much.
_TOKENS_PER_STEP = 8


class _Tokens:
    """One SCEV text's tokens, read once however often the text is converted (a phi's incoming
    values are read again under each set of parameters, enclosing loops and named values), and
    the parser's scans over them, kept by the position they start from."""

    __slots__ = ("tokens", "count", "kinds", "names", "operand_ends", "cast_tos")

    def __init__(self, text: str):
        tokens = [t for t in _TOKEN.findall(text) if t]
        self.count = len(tokens)
        self.tokens = (*tokens, None)  # None past the last token: what `_Parser._peek` reads there
        self.kinds = tuple(_token_kind(tokens, at) for at in range(len(tokens)))
        self.names = tuple(_strip_quotes(t[1:]) for t in tokens if t.startswith("%"))  # the values it reads
        self.operand_ends: dict[int, int] = {}  # `_Parser._skip_operand`'s
        self.cast_tos: dict[int, int] = {}  # `_Parser._cast_to`'s, -1 where the cast is malformed

    def operand_end(self, start: int) -> int:
        """Where the operand from `start` ends: at its group's next operator or end."""
        if (end := self.operand_ends.get(start)) is None:
            depth, end, tokens = 0, start, self.tokens
            while (tok := tokens[end]) is not None:
                if depth == 0 and (tok == ")" or tok in _OPERATORS):
                    break
                if tok in ("(", "{"):
                    depth += 1
                elif tok in (")", "}"):
                    depth -= 1
                end += 1
            self.operand_ends[start] = end
        return end

    def cast_to(self, start: int) -> int:
        """The position of the `to` of the cast whose operand starts at `start`, or -1."""
        if (found := self.cast_tos.get(start)) is None:
            found, depth = -1, 0
            for at in range(start, self.count):
                tok = self.tokens[at]
                if tok in ("(", "{"):
                    depth += 1
                elif tok in (")", "}"):
                    depth -= 1
                elif tok == "to" and depth == 0:
                    found = at
                    break
                if depth < 0:
                    break
            self.cast_tos[start] = found
        return found


@functools.lru_cache(maxsize=1 << 16)
def _tokenised(text: str) -> _Tokens:
    return _Tokens(text)


def to_polynomial(expr: str, ctx: ScevContext) -> Polynomial:
    """Convert a SCEV expression to a Polynomial, raising NotPolynomial if it can't be."""
    tokens = _tokenised(expr)
    ctx.spend(1 + tokens.count // _TOKENS_PER_STEP)  # tokenising is work too: long texts are read often
    parser = _Parser(tokens, ctx)
    try:
        return parser.expression()
    except RecursionError:  # the parser recurses once per nesting level
        ctx.not_replayable()
        raise NotPolynomial("the expression is nested too deeply to read") from None


class _Parser:
    def __init__(self, tokens: _Tokens, ctx: ScevContext):
        self.tokenised, self.tokens, self.pos, self.ctx = tokens, tokens.tokens, 0, ctx

    def _peek(self) -> str | None:
        return self.tokens[self.pos]

    def _next(self) -> str:
        return self.tokens[self._next_at()]

    def _next_at(self) -> int:
        """The position of the next token, moving past it."""
        at = self.pos
        if at >= self.tokenised.count:
            raise NotPolynomial("unexpected end of SCEV expression")
        self.pos = at + 1
        return at

    def _skip_flags(self) -> None:
        while (tok := self._peek()) is not None and _FLAG.fullmatch(tok):
            self.pos += 1

    def expression(self) -> Polynomial:
        self.ctx.spend()
        at = self._next_at()
        kind, payload = self.tokenised.kinds[at]
        if kind == _READS_VALUE:
            return self._value(payload)
        if kind == _READS_OPEN:
            return self._parenthesised()
        if kind == _READS_RECURRENCE:
            return self._add_recurrence()
        if kind == _READS_UNKNOWN:
            raise NotPolynomial("ScalarEvolution could not compute it")
        if kind == _READS_NUMBER:
            return Polynomial.constant(payload)
        if kind == _READS_TYPED_NUMBER:
            self.pos += 1
            return Polynomial.constant(payload)
        if kind == _READS_GLOBAL:
            self.ctx.looked_up((_GLOBALS, self.ctx.global_bases))
            if self.ctx.global_bases:  # an address in a global array: the array is its base
                return Polynomial.symbol(GLOBAL_BASE + payload)
            raise NotPolynomial(f"depends on the address of {self.tokens[at]}")
        raise NotPolynomial(f"unexpected token {self.tokens[at]!r}")

    def _value(self, name: str) -> Polynomial:
        ctx = self.ctx
        if name in ctx.substituted:
            ctx.looked_up((_SUBSTITUTED, name, ctx.substituted[name]))
            return ctx.substituted[name]
        if name in ctx.parameters:
            ctx.looked_up((_PARAMETER, name))
            return Polynomial.symbol(name)
        if name in ctx._blocked or name in ctx._resolving:
            ctx.looked_up((_CARRIED, name))
            raise NotPolynomial(f"%{name} is carried round a loop (it depends on itself)")
        table = ctx.memo
        if self._is_leaf(name):
            ctx.looked_up((_LEAF, name))
        elif name in table.values:
            ctx.looked_up((_RESOLVED, name, table.values[name][0]))
        else:
            ctx.not_replayable()
        if name not in table.values:
            if self._is_phi(name) and name not in table.finished:
                self._resolve_web(name)
            if name not in table.values:  # not a phi (nothing to resolve it through), or a guard
                self._memoise(name, frozenset())
        value = table.values[name][0]
        ctx.used(name)
        if isinstance(value, NotPolynomial):
            raise NotPolynomial(str(value))
        return value

    def _is_leaf(self, name: str) -> bool:
        """Whether `name` has nothing to be resolved through (no incoming values, no operand): its
        entry (its small range, or that it is a run-time value) is the function's alone."""
        return not self.ctx.phi_incoming.get(name) and name not in self.ctx.low_bits_set

    def _is_phi(self, name: str) -> bool:
        """Whether `name` is resolved through other values (a phi's incoming values, or the
        operand of `or x, c`) and is no leaf of this context."""
        ctx = self.ctx
        return (bool(ctx.phi_incoming.get(name)) or name in ctx.low_bits_set) \
            and name not in ctx.parameters and name not in ctx.substituted

    def _through(self, name: str) -> list[str]:
        """The phis whose values `name`'s resolution reads."""
        ctx = self.ctx
        texts = [ctx.value_scevs.get(_strip_quotes(v[1:]), "") for v in ctx.phi_incoming.get(name) or ()
                 if v.startswith("%")]
        if name in ctx.low_bits_set:
            texts.append(ctx.value_scevs.get(ctx.low_bits_set[name][0], ""))
        return [used for text in texts for used in _tokenised(text).names if self._is_phi(used)]

    def _resolve_web(self, start: str) -> None:
        """Resolve `start` and every phi it reads, in order: Tarjan's strongly connected
        components, each finished after those it reads. A component of more than one phi (or
        one reading itself) is a value carried round a loop: within it, each phi takes only the
        incoming values from outside, so every value is resolved once, whatever asked first."""
        table = self.ctx.memo
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        work = [(start, iter(self._through(start)))]
        index[start] = low[start] = 0
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                self.ctx.spend()
                if nxt in table.finished:
                    continue  # in a component resolved by an earlier walk
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(self._through(nxt))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                table.finished.update(members)
                cyclic = len(members) > 1 or node in self._through(node)
                for member in members:
                    self._memoise(member, frozenset(members) if cyclic else frozenset())

    def _memoise(self, name: str, cycle: frozenset[str]) -> None:
        """Resolve one value, the phis of `cycle` (its own) cut off, and keep it with its notes:
        replayed from another table where its reading would be the same (`Resolution`)."""
        ctx = self.ctx
        resolutions = ctx.memo.resolutions if ctx.budget is not None else None
        if resolutions is not None and (earlier := resolutions.get(name)) \
                and (replayed := self._replayed(name, cycle, earlier, _stack_depth())):
            ctx.memo.values[name] = replayed
            return
        blocked, ctx._blocked = ctx._blocked, cycle
        ctx._resolving.add(name)
        ctx._frames.append([{}, {}, [] if resolutions is not None else None])
        merged, ctx.read_phi_merge = ctx.read_phi_merge, False
        steps = ctx.budget.steps if ctx.budget is not None else 0
        try:
            value = self._resolve(name)
        except NotPolynomial as why:
            value = why
        finally:
            ctx._blocked = blocked
            ctx._resolving.discard(name)
            notes, used, reads = ctx._frames.pop()
            read_phi_merge, ctx.read_phi_merge = ctx.read_phi_merge, merged or ctx.read_phi_merge
        entry = ctx.memo.values[name] = (value, tuple(notes), tuple(used))
        if reads is not None and len(kept := resolutions.setdefault(name, [])) < RESOLUTIONS_KEPT:
            substituted = [read[2] for read in reads if read[0] == _SUBSTITUTED]
            kept.append(Resolution(tuple(reads), _twins(substituted), _context_constants(ctx),
                                   ctx.budget.steps - steps, read_phi_merge, entry, _stack_depth()))

    def _replayed(self, name: str, cycle: frozenset[str], resolutions: list[Resolution], depth: int) -> tuple | None:
        """`_replay` in the context `name`'s own reading would have (its cycle cut off)."""
        ctx = self.ctx
        blocked, ctx._blocked = ctx._blocked, cycle
        ctx._resolving.add(name)
        try:
            return self._replay(resolutions, depth)
        finally:
            ctx._blocked = blocked
            ctx._resolving.discard(name)

    def _replay(self, resolutions: list[Resolution], depth: int) -> tuple | None:
        """The entry of the first of `resolutions` whose reading this context would repeat (its
        steps spent, its merge of a phi noted), or None. Only where those steps cannot run out
        the budget: where they would, the reading itself says where it stopped."""
        ctx = self.ctx
        budget = ctx.budget
        here = _context_constants(ctx)
        for resolution in resolutions:
            if depth <= resolution.stack_depth and not budget.exhausted \
                    and budget.steps + resolution.steps <= budget.max_steps and self._same_reads(resolution, here):
                for read in resolution.reads:
                    if read[0] == _LEAF and read[1] not in ctx.memo.values:
                        self._memoise(read[1], frozenset())  # as the reading would have, on its way
                if resolution.steps:
                    budget.spend(resolution.steps)
                ctx.read_phi_merge = ctx.read_phi_merge or resolution.read_phi_merge
                value, notes, used = resolution.entry
                value = Polynomial(value.terms) if isinstance(value, Polynomial) else NotPolynomial(str(value))
                return value, notes, used
        return None

    def _same_reads(self, resolution: Resolution, here: tuple) -> bool:
        """Whether every look-up of `resolution`'s reading gets the same answer here (`here`:
        this context's `_context_constants`)."""
        ctx = self.ctx
        theirs = resolution.constants
        if not all(map(operator.is_, here, theirs)):
            return False
        substituted = []
        for read in resolution.reads:
            kind = read[0]
            if kind == _LOOP:
                if (read[1] in ctx.enclosing_loops) != read[2]:
                    return False
                continue
            if kind == _GLOBALS or kind == _MAX_CONSTANT:
                if (ctx.global_bases if kind == _GLOBALS else ctx.max_takes_constant) != read[1]:
                    return False
                continue
            name = read[1]
            value = ctx.substituted.get(name, _MISSING)
            if kind == _SUBSTITUTED:
                if value is _MISSING or value != read[2]:
                    return False
                substituted.append(value)
                continue
            if value is not _MISSING or (name in ctx.parameters) != (kind == _PARAMETER):
                return False
            if kind == _PARAMETER:
                continue
            if (name in ctx._blocked or name in ctx._resolving) != (kind == _CARRIED):
                return False
            if kind == _RESOLVED and not (name in ctx.memo.values and _same_value(ctx.memo.values[name][0], read[2])):
                return False
        return _twins(substituted) == resolution.substituted_twins

    def _resolve(self, name: str) -> Polynomial:
        """A value that is neither a parameter nor substituted: through its phi's incoming
        values, its low bits, or its small range."""
        ctx = self.ctx
        incoming = ctx.phi_incoming.get(name)
        if incoming:
            # A phi merging a start with computed values (a remainder loop's start after
            # vectorisation or unrolling, possibly after a one-iteration prologue): at run time
            # with large inputs, a computed value is what flows in; take their mean. The start
            # is a constant, or an enclosing loop's index when the loop is triangular (j = i):
            # values that move with the function's sizes are the computed ones.
            candidates = [v for v in incoming if not _CONSTANT_INCOMING.fullmatch(v)]
            # The vectorizer's scalar remainder resumes where the vector loop left off (the value
            # from its `middle.block`), or at the start where the count was too small for the
            # vector loop: either way it runs fewer iterations than one vector step covers, so
            # the value after the vector loop stands for both (their mean would count half the
            # range where the start moves with an enclosing loop: `for (i = j + 1; …)`).
            resumed = [v for v, block in zip(incoming, ctx.phi_blocks.get(name) or ())
                       if block.startswith("middle.block") and not _CONSTANT_INCOMING.fullmatch(v)]
            candidates = resumed if len(resumed) == 1 and len(incoming) == len(ctx.phi_blocks.get(name) or ()) \
                else candidates
            values, exited, bypassed = [], [], set()
            for candidate in candidates:
                value = _strip_quotes(candidate[1:]) if candidate.startswith("%") else ""
                scev = ctx.value_scevs.get(value)
                if scev is None:
                    continue
                try:
                    values.append((value, to_polynomial(scev, ctx)))
                except NotPolynomial:
                    # A value of a loop that ran before (an unrolled loop's prologue): what it
                    # holds when that loop exits, as ScalarEvolution computes it.
                    exit_value = ctx.exit_values.get(value)
                    if exit_value is None:
                        continue
                    try:
                        exited.append((value, to_polynomial(exit_value, ctx)))
                    except NotPolynomial:
                        continue
                    # where that loop starts from: the value that flows in when its guard skips it
                    for start in _NAMED_VALUE.findall(scev.split(",+,")[0]):
                        start = _strip_quotes(start)
                        bypassed.add(start)
                        bypassed.update(_strip_quotes(v[1:]) for v in ctx.phi_incoming.get(start) or ()
                                        if v.startswith("%"))
            # Beside a loop's exit value, the loop's own start flows in where its guard skipped
            # it: the value it would have exited with after no iterations, not another value.
            values = [poly for value, poly in exited + values if value not in bypassed]
            sized = [v for v in values if any(not s.startswith("@") for s in v.symbols)]
            values = sized or values
            # A bare start (`op`) beside that start advanced by a size (`op + 8·n.vec`, where a
            # vector loop left off): with large inputs the advanced one flows in.
            values = [v for v in values if not _advanced_from(v, values)] or values
            if len(values) > 1:
                ctx.note(f"%{name}, merging {len(values)} computed values (branches that join), taken as their mean")
            elif values:
                ctx.note(f"the start of a remainder loop, %{name}, taken as its value after the main loop")
            if values:
                ctx.read_phi_merge = True
                total = Polynomial()
                for value in values:
                    total = total + value
                return total * Fraction(1, len(values))
        if name in ctx.low_bits_set:
            operand, constant = ctx.low_bits_set[name]
            scev = ctx.value_scevs.get(operand)
            if scev is not None and 0 < constant < 64:
                value = to_polynomial(scev, ctx)
                # Setting bits the operand has set half the time adds, on average, half of them.
                ctx.note(f"%{name} = %{operand} | {constant} taken as %{operand} + {constant / 2:g} (its mean)")
                return value + Polynomial.constant(Fraction(constant, 2))
        if name in ctx.small_ranges:
            lo, hi = ctx.small_ranges[name]
            middle = Fraction(lo + hi - 1, 2)
            ctx.note(f"%{name}, a run-time value in [{lo}, {hi}), taken as {float(middle):g} (the middle of its range)")
            return Polynomial.constant(middle)
        raise NotPolynomial(f"depends on %{name}, a run-time value")

    def _add_recurrence(self) -> Polynomial:
        """{a0,+,a1,+,a2…}<%L>: at iteration k of L, Σ_j a_j · C(k, j) (a quadratic bound like
        `j < i * i` is the order-2 recurrence {0,+,1,+,2})."""
        coefficients = [self.expression()]
        while self._peek() == ",+,":
            self._next()
            coefficients.append(self.expression())
        if len(coefficients) < 2 or self._next() != "}":
            raise NotPolynomial("malformed add recurrence")
        self._skip_flags()
        loop_tok = self._next()
        loop = _strip_quotes(loop_tok[2:-1])
        self.ctx.looked_up((_LOOP, loop, loop in self.ctx.enclosing_loops))
        if loop not in self.ctx.enclosing_loops:
            raise NotPolynomial(f"recurrence over loop %{loop} that does not enclose it")
        k = Polynomial.symbol("@" + loop)
        value, binomial = Polynomial(), Polynomial.constant(1)
        for j, coefficient in enumerate(coefficients):
            value = value + coefficient * binomial
            if j + 1 < len(coefficients):
                binomial = binomial * (k - j) * Fraction(1, j + 1)  # C(k, j + 1)
        return value

    def _parenthesised(self) -> Polynomial:
        if self._peek() in ("zext", "sext", "trunc", "ptrtoint"):
            kind = self._next()
            from_type = self._next()
            to_at = self._cast_to()
            narrow = from_type if kind != "trunc" else \
                self.tokens[to_at + 1] if to_at + 1 < self.tokenised.count else ""
            bits = int(narrow[1:]) if _INTEGER_TYPE.fullmatch(narrow) else 64
            if bits < 8:
                # A value reduced modulo 2^bits (unrolling remainders: n mod 4 of a loaded n too):
                # use its mean, whatever the value reduced.
                self.pos = to_at
                inner = Polynomial.constant(Fraction(2**bits - 1, 2))
                self.ctx.note(f"value modulo {2 ** bits} taken as its mean {(2 ** bits - 1) / 2:g}")
            else:
                inner = self.expression()
            if self._next() != "to":
                raise NotPolynomial("malformed cast")
            self._next()  # the type cast to
            self._expect_close()
            return inner
        operands: list[Polynomial | None] = []
        operators: list[str] = []
        failed: NotPolynomial | None = None
        while True:
            start = self.pos
            try:
                operands.append(self.expression())
            except NotPolynomial as why:
                # min(31, x) is at most 31 whatever x is: read on past an operand that is not
                # a polynomial, to its group's next operator
                failed = failed or why
                operands.append(None)
                self.pos = start
                self._skip_operand()
            if self._peek() in (")", None):
                break
            operators.append(self._next())
        self._expect_close()
        op = operators[0] if operators else ""
        if failed is not None:
            constants = [v for v in operands if v is not None and v.constant_value() is not None]
            if op not in ("smin", "umin", "umin_seq") or not constants or any(o != op for o in operators):
                raise failed
            self.ctx.note(f"{op} of a bound taken as its constant operand {min(c.constant_value() for c in constants)} "
                          "(its other operand is known only at run time)")
            return Polynomial.constant(min(c.constant_value() for c in constants))
        if not operators:
            return operands[0]
        if any(o != op for o in operators):
            raise NotPolynomial("mixed operators")
        if op == "+":
            total = Polynomial()
            for value in operands:
                total = total + value
            return total
        if op == "*":
            product = Polynomial.constant(1)
            for value in operands:
                product = product * value
            return product
        if op == "/u":
            divisor = operands[1].constant_value()
            if divisor is None or divisor <= 0:
                raise NotPolynomial("division by a run-time value")
            # E[floor(x / c)] over a uniform remainder is (x - (c - 1)/2) / c.
            return (operands[0] - Fraction(divisor - 1, 2)) * Fraction(1, divisor)
        if op in ("smax", "umax", "smin", "umin", "umin_seq"):
            symbolic = [v for v in operands if v.constant_value() is None]
            if not symbolic:
                values = [v.constant_value() for v in operands]
                return Polynomial.constant(max(values) if "max" in op else min(values))
            constants = [v.constant_value() for v in operands if v.constant_value() is not None]
            if "max" in op and constants:
                self.ctx.looked_up((_MAX_CONSTANT, self.ctx.max_takes_constant))
            if "max" in op and constants and self.ctx.max_takes_constant:
                self.ctx.note(f"{op} of a bound taken as its constant operand {max(constants)} (its other operand "
                              f"is where the loop starts)")
                return Polynomial.constant(max(constants))
            if "max" in op:
                # max(n, i + 1) guards `for (j = i; j < n; ...)`, max(end, p + 8) `while (p < end)`:
                # the bound is the larger once inside the loop. It does not move with an enclosing
                # loop; it is the one that exceeds the others by sizes (`do { p += 16; } while
                # (p < p0 + len - 15)` runs to max(p0 + 16, p0 + len - 15): the second, by len - 31),
                # or else a bare value where the other is the start plus a step.
                fixed = [v for v in symbolic if not any(s.startswith("@") for s in v.symbols)] or symbolic
                larger = [v for v in fixed if all(_grows_past(v, other) for other in fixed if other is not v)]
                bare = [v for v in fixed if len(v.symbols) == 1 and v == Polynomial.symbol(next(iter(v.symbols)))]
                symbolic = larger or bare or fixed
            else:
                # min(64, n - ii): a tile's bound. Once the sizes are large the constant binds
                # (all tiles but the last are full).
                constants = [v.constant_value() for v in operands if v.constant_value() is not None]
                if constants:
                    self.ctx.note(f"{op} of a bound taken as its constant operand {min(constants)} "
                                  "(the smaller once the sizes are large)")
                    return Polynomial.constant(min(constants))
            self.ctx.note(f"{op} of a bound taken as its symbolic operand {spoken(symbolic[0])}")
            return symbolic[0]
        raise NotPolynomial(f"operator {op}")

    def _skip_operand(self) -> None:
        """Move past the rest of the operand being read: to its group's next operator or end."""
        start = self.pos
        self.pos = self.tokenised.operand_end(start)
        self.ctx.spend((self.pos - start) // _TOKENS_PER_STEP)

    def _cast_to(self) -> int:
        """The position of the `to` of the cast being read (past its operand)."""
        at = self.tokenised.cast_to(self.pos)
        if at < 0:
            raise NotPolynomial("malformed cast")
        self.ctx.spend((at - self.pos) // _TOKENS_PER_STEP)  # nested casts scan their operands again
        return at

    def _expect_close(self) -> None:
        if self._next() != ")":
            raise NotPolynomial("unbalanced parentheses")
        self._skip_flags()


def _advanced_from(start: Polynomial, values: list[Polynomial]) -> bool:
    """Whether `start` is one bare symbol that another of `values` adds a size to."""
    if len(start.symbols) != 1 or start != Polynomial.symbol(next(iter(start.symbols))):
        return False
    return any(other is not start and start.symbols < other.symbols
               and any(not s.startswith("@") for s in (other - start).symbols) for other in values)


def _grows_past(a: Polynomial, b: Polynomial) -> bool:
    """Whether a - b is a constant plus sizes with positive coefficients: a exceeds b once the
    sizes are large, whatever they are."""
    difference = a - b
    sized = [coefficient for monomial, coefficient in difference.terms if monomial]
    return bool(sized) and all(coefficient > 0 for coefficient in sized)


def spoken(p: Polynomial) -> str:
    """`p` for a note: a loop's iteration index reads `(iteration of %L)`, an IR name that the
    reader then says in the source's terms (`the loop at line 5`), not a bare block name."""
    for symbol in sorted(p.symbols):
        if symbol.startswith("@"):
            p = p.substitute(symbol, Polynomial.symbol(f"(iteration of %{symbol[1:]})"))
    return p.format()
