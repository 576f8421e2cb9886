"""The data that flows through ccls, front end to view. Plain dataclasses, no behaviour.

Every reader (LLVM IR, PTX, CPython bytecode) produces `FunctionIR`: basic blocks holding
classified instructions, the loops that contain them, and each loop's trip count. Everything
after that (executed counts, memory tiers, costs, scores, findings) is shared.

Instruction classes are strings ``base[.qualifier][@vWIDTH]`` (see `ccls.taxonomy`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from ccls.polynomial import Polynomial, is_named_round

TripKind = Literal["constant", "symbolic", "data", "bounded", "expected", "unknown"]
AccessPattern = Literal["invariant", "unit", "strided", "indirect", "pointer-chase", "unknown"]


@dataclass(frozen=True)
class TripCount:
    """Executions of a loop's header per entry into the loop (= backedge-taken count + 1).

    ``iterations`` may contain parameter symbols and outer loops' index symbols (``@<loop id>``).
    kind: constant/symbolic = exact (from ScalarEvolution or ``range(n)``); bounded = only a
    maximum was known and is used; expected = the mean of a data-dependent early exit
    (`ccls.early_exit`); unknown = ``iterations`` is the configured default; data = exact in a
    size the program keeps in its data and that is named after it (`strlen(s)`, `len(head)`,
    `a->count`: a string walked to its NUL, a list to its null link, a count read from memory).
    """

    kind: TripKind
    iterations: Polynomial
    source_text: str = ""  # what the analysis printed, e.g. "(-1 + (zext i32 %n to i64))"
    # bounded only: a worst case (a type's range, an array's length) taken as the count because
    # it is below the default, not a count the loop was seen to run: a guess, as unknown is.
    worst_case: bool = False

    @property
    def is_assumed(self) -> bool:
        return self.kind in ("bounded", "expected", "unknown")

    @property
    def is_named_guess(self) -> bool:
        """A count only the data decides, named after what decides it (`chunks(len)`): it stands
        at the default trip count unless set, so it is as much a guess as an unknown count."""
        return self.kind == "data" and len(self.iterations.symbols) == 1 and \
            is_named_round(next(iter(self.iterations.symbols)))


@dataclass(frozen=True)
class MemoryAccess:
    """What a reader could tell about one load/store's address stream inside its loop."""

    pattern: AccessPattern
    element_bytes: int
    stride_bytes: Polynomial | None = None  # per iteration of the innermost enclosing loop
    space: str = "generic"  # PTX state space: global/shared/local/const/param; CPU: generic
    # Address movement per iteration of each enclosing loop, innermost first; with trip counts
    # this bounds the bytes the access can reach (its span), however often it runs.
    loop_strides: tuple[tuple[str, Polynomial], ...] = ()
    span_bytes: int | None = None  # a bound: the index type's (a[byte] reaches 256 slots), the global array's size
    # The address stream: the array plus what moves with the loops. Unrolled copies, a[i] and
    # a[i+1], a stencil's rows in[(i-1)*n + j] and in[(i+1)*n + j] share it; `offset` (bytes,
    # loop-invariant, possibly in parameters) tells them apart.
    region: str = ""
    offset: Polynomial | None = None


@dataclass(frozen=True)
class Instruction:
    cls: str  # instruction class, e.g. "int_div", "fp_add@v256", "load", "fp_fma.f32"
    line: int | None = None  # source line (1-based) from debug info, None if unknown
    opcode: str = ""  # the reader's own opcode text, for the IR/PTX view and tooltips
    callee: str | None = None  # for calls: the called function's name (None = indirect)
    access: MemoryAccess | None = None  # for loads/stores/atomics
    divisor: str | None = None  # for divisions: "constant", "power-of-two", "loop-invariant", "variant"
    data_dependent: bool = False  # a branch inside a loop whose condition comes from loaded data
    # memcpy/memmove/memset: the bytes one call moves (constant or in the function's sizes);
    # None for anything else, or a size the reader cannot express.
    bulk_bytes: Polynomial | None = None
    # A data-dependent branch whose data all come from arrays the program fills itself
    # (`readers.llvm.memory.program_filled_globals`): charged no mispredictions.
    program_data: bool = False


@dataclass
class BasicBlock:
    name: str
    loop: str | None  # id of the innermost loop containing this block, None outside loops
    instructions: list[Instruction] = field(default_factory=list)
    machine_instructions: int | None = None  # target instructions lowered from this block
    machine_code: tuple[str, ...] = ()  # those instructions' assembly text, for llvm-mca
    machine_context: tuple[str, ...] = ()  # the code that runs just before it in its loop's iteration
    machine_cycles: float | None = None  # llvm-mca: core cycles per execution of this block
    machine_throughput: float | None = None  # llvm-mca: the same, resources only (no dependencies)
    machine_divides: tuple[int, int] = (0, 0)  # integer divide instructions (32-bit, 64-bit) in that code
    # Its runs per iteration of its loop (per call outside loops): the share of them whose path
    # passes it, from the compiler's static branch probabilities (`readers.block_frequency`).
    frequency: Fraction = Fraction(1)


@dataclass(frozen=True)
class MemoryChain:
    """One address a loop's iterations store to and load back: each link is a round trip (the
    load, the operations between it and the store, by class; the store, in the named block),
    and the links follow each other, iteration after iteration (ccls.readers.llvm.memory_chains)."""

    links: tuple[tuple[str, tuple[str, ...]], ...]  # (the store's block, the operations' classes)
    floating_point: bool  # the value is forwarded in a vector register, not a general one
    line: int | None = None  # the store's source line


@dataclass
class Loop:
    id: str  # header block name; unique within the function
    parent: str | None
    depth: int  # 1 = outermost
    trip_count: TripCount
    line: int | None = None
    # Each entry starts its loop-carried values afresh (none flows from one entry to the next
    # through the enclosing loop), so an out-of-order core can overlap consecutive entries.
    independent_entries: bool = False
    # Its entries per iteration of its parent loop (per call, outermost), where a branch on data
    # decides whether it runs (`readers.block_frequency`); else 1.
    entry_frequency: Fraction = Fraction(1)
    # Values its iterations hand on through memory, not registers (one chain per address).
    memory_chains: tuple[MemoryChain, ...] = ()


@dataclass
class FunctionIR:
    name: str  # symbol name as the reader saw it (mangled for C++)
    display_name: str  # what a person calls it: demangled / qualified name
    file: str
    line: int | None
    end_line: int | None
    language: str  # "c", "cpp", "cuda", "python", "llvm-ir", "ptx"
    arch: str  # cost table id the instructions refer to: "x86_64", "nvptx-sm80", "cpython-3.11"…
    parameters: list[str] = field(default_factory=list)
    blocks: list[BasicBlock] = field(default_factory=list)
    loops: dict[str, Loop] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    ir_text: str = ""  # the function's IR/PTX/bytecode listing, for "show IR"
    compile_flags: tuple[str, ...] = ()  # the flags that shaped its code (C, C++, CUDA host)
    # Its reading ran out of wall-clock time (ReadingBudget): what it says depends on the
    # machine's load at that moment, so it is never kept in the persistent count cache.
    stopped_on_time: bool = False
    # Sizes it reads through a pointer parameter: symbol → (parameter, byte offset, bits),
    # `depth_multiplier` → ("params", 14, 16); a caller may pass a global whose contents are known,
    # or a local it stores them in. Read through pointers loaded on the way (`*(int *)args->arg`),
    # a fourth item gives those loads' byte offsets, outermost first: ("args", 0, 32, (32,)).
    field_symbols: dict[str, tuple] = field(default_factory=dict)
    # Sizes whose values are bounded (an 8-bit integer, a range ScalarEvolution proves): the
    # most each can be and why, which a size's default value never exceeds.
    value_ceilings: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Sizes read from an integer global: symbol → (global, bits), for the values the program's
    # writes give it (`ccls.sizes.sizes_of_globals`).
    global_symbols: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Each innermost loop's body as one piece of machine code (its blocks in layout order), for
    # llvm-mca; then its cycles per run of that piece: how far the blocks overlap in the core.
    machine_traces: dict[str, tuple[str, ...]] = field(default_factory=dict)
    trace_cycles: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    kind: str  # "division-in-loop" | "miss-heavy-loop"
    line: int | None
    message: str
    recommendation: str
    share_of_cu: float | None = None  # fraction of the function's CU this finding accounts for


@dataclass(frozen=True)
class AnalysisError:
    """A file that could not be analysed, with the tool's own words."""

    file: str
    line: int | None
    message: str


@dataclass(frozen=True)
class Metrics:
    """Raw totals of eq. (2): compute units (≈cycles), joules, kg CO2e, US dollars."""

    cu: float
    energy_joules: float
    co2_kg: float
    usd: float

    def as_dict(self) -> dict[str, float]:
        return {"CU": self.cu, "EU": self.energy_joules, "CO2": self.co2_kg, "USD": self.usd}


@dataclass(frozen=True)
class LoopSummary:
    id: str
    depth: int
    line: int | None
    trip_count: TripCount


@dataclass(frozen=True)
class FindingSite:
    """A finding located by the counting stage; costing later turns it into a `Finding`
    (its share of the function's CU needs the cost table)."""

    kind: str  # "division-in-loop" | "miss-heavy-loop"
    line: int | None
    loop: str
    classes: dict[str, Polynomial]  # executed counts of the offending instructions, by class
    message: str
    cause: str  # the divisor's kind or the access pattern: what `ccls.advice` words the fix for


@dataclass(frozen=True)
class MemoryOverlap:
    """One loop's own blocks: their core cycles (llvm-mca, all loads L1 hits) and their
    accesses to memory that do not wait for each other (streamed lines, independent and strided
    misses). The core computes while they are in flight, so costing counts the larger of the
    two, not their sum."""

    loop: str
    cycles: Polynomial
    misses: dict[str, Polynomial]  # executed count per overlapped memory class (taxonomy.overlaps_compute)


@dataclass(frozen=True)
class AtPoint:
    """A function's numbers at the parameter values it was counted at, where some loops' count
    formulas (exact for large inputs) fall below zero: those loops do not run there, so their
    blocks count 0 while every other block keeps its count. Costing takes these instead of the
    polynomials' values (which would let a negative loop cancel the rest); the polynomials stay
    the cost expression."""

    values: dict[str, float]  # the parameter values these numbers are for
    counts: dict[str, float]
    machine_instructions: float | None
    machine_cycles: float | None
    calls: dict[str, float]


@dataclass(frozen=True)
class CallSite:
    """A direct call and what it passes: per argument an integer expression (`("const", 120)`,
    `("param", "n")`, `("op", "mul", a, b)`, `("choice", (a, b))` for a phi or select), or None
    when the value is not an integer or not known (`ccls.readers.call_sites`)."""

    caller: str  # symbol of the calling function
    callee: str  # symbol of the called function
    line: int | None  # source line of the call (debug info), None without it
    args: tuple = ()
    # A call through one of the caller's parameters is recorded with callee "%name" (LLVM's
    # spelling of a local value; no symbol starts with %). `ccls.sizes` turns each into the
    # calls it makes for every function the dispatcher is handed, naming the dispatcher here.
    through: str = ""


@dataclass(frozen=True)
class FieldStore:
    """An integer written into a field of a struct (`ctx->rounds = nr;`), by the struct's name
    and the field's byte offset, with what is written (an expression of the writer's
    parameters, like a call's argument; None when not known at compile time)."""

    struct: str
    offset: int
    writer: str  # symbol of the function that writes it
    line: int | None
    value: tuple | None  # an expression as `ccls.readers.call_sites` writes them


@dataclass
class CountedFunction:
    """Everything the expensive stage (compile → read → count) learns about one function.
    Costs, scores and grades are derived from it cheaply, for any table, profile or region;
    it is what the count cache stores."""

    name: str
    display_name: str
    file: str
    line: int | None
    end_line: int | None
    language: str
    arch: str
    parameters: list[str]
    static_counts: dict[str, int]
    counts: dict[str, Polynomial]  # estimated executed count per class (memory tiers assigned)
    machine_instructions: Polynomial | None  # estimated retired target instructions (CPU only)
    loops: list[LoopSummary]
    line_counts: dict[int, dict[str, Polynomial]]  # executed counts per source line, per class
    calls: dict[str, Polynomial]  # callee name → executed calls ("" = indirect)
    sites: list[FindingSite]
    assumptions: list[str]
    ir_text: str = ""
    machine_cycles: Polynomial | None = None  # llvm-mca's core cycles for those (CPU; all loads L1 hits)
    compile_flags: tuple[str, ...] = ()
    overlaps: list[MemoryOverlap] = field(default_factory=list)  # loops whose misses overlap compute
    # Parameter values from the program's own call sites (`ccls.sizes`), where the counts were
    # evaluated; values the user gives win over these.
    inferred_sizes: dict[str, float] = field(default_factory=dict)
    size_notes: list[str] = field(default_factory=list)  # where each inferred size came from
    call_sites: tuple[CallSite, ...] = ()  # the calls this function makes, with what they pass
    # The names calls address in order, where they are more than its parameters (Python: then
    # len(p) of each, then the self.<attr> sizes __init__ sets); empty: the parameters.
    size_slots: tuple[str, ...] = ()
    field_stores: tuple[FieldStore, ...] = ()  # the integers it writes into struct fields (`ccls.sizes`)
    stopped_on_time: bool = False  # FunctionIR.stopped_on_time: never kept in the persistent cache
    at_point: AtPoint | None = None  # set where some loops do not run at the counted values
    # Loops of guessed count (unknown, or only a worst case) around its calls and in its own body,
    # for the inclusive cost (`ccls.unknown_nests.across_call`), at the evaluation point. Per callee
    # called inside such loops: (the most of them around one call, the product of their counts
    # there, the calls' lines after the function's first line: they move with it), and those calls. Per callee, the calls whose callee's own guessed
    # loops would continue an open nest of this function (no known loop around: inside such loops,
    # outside any loop). Its own deepest open nest of them (how many, the product of their counts)
    # and the share of its work inside open nests (of its core cycles, else of its instructions).
    guessed_calls: dict[str, tuple[int, float, tuple[int, ...]]] = field(default_factory=dict)
    guessed_call_counts: dict[str, Polynomial] = field(default_factory=dict)
    open_call_counts: dict[str, tuple[Polynomial, Polynomial]] = field(default_factory=dict)
    guessed_nest: tuple[int, float] = (0, 1.0)
    guessed_share: float = 0.0
