"""LLVM IR → FunctionIR: classify each instruction, attach source lines and memory access
patterns, and build loops with trip counts from LLVM's own analyses.

Inputs are texts: the module (with value names, e.g. after ``opt -passes=instnamer``), opt's
``print<loops>,print<scalar-evolution>`` output, and optionally verbose assembly for machine
instruction counts. llvmlite parses and validates the module once and prints it back; the
functions are read from that text (`ccls.readers.llvm.text`). Nothing here touches files or
processes.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Sequence

import llvmlite.binding as llvm

from ccls.model import BasicBlock, FunctionIR, Instruction, Loop, TripCount
from ccls.polynomial import Polynomial
from ccls.readers import data_walks
from ccls.readers.dominance import immediate_dominators
from ccls.readers.global_constants import stored_maxima
from ccls.readers.recursion import recursive_cycles
from ccls.readers.unset_flags import never_set_bytes
from ccls.readers.llvm import guarded_sizes, physical_bounds
from ccls.readers.llvm.lines import (_DEFINE_DBG, _Speech, _inlined_from, _source_lines, _subprogram_info,
                                     _value_lines)
from ccls.readers.llvm.machine import _contexts, _machine_code, _machine_per_ir_block, _traces
from ccls.readers.llvm.memory import (DataConditions, _branches_on_loaded_data, _bulk_bytes, _memory_access,
                                      _weigh_data_branches, global_sizes,
                                      program_filled_data, program_filled_globals,
                                      local_array_sizes)
from ccls.readers.llvm.memory_chains import memory_chains
from ccls.readers.llvm.named_bounds import _data_named_loads, _field_symbols, _named_loads
from ccls.readers.llvm.opcodes import _BULK, _divisor_kind, _type_bits, classify
from ccls.readers.llvm.reading import _Reading, _ancestors, _inside, _stopped_note, _successors
from ccls.readers.llvm.text import TWIN_SUFFIX, IRFunction, original_name, read_module
from ccls.readers.llvm.trips import (_checked_overlaps, _fallback_for_increment, _fallback_for_overlap, _halving_trip,
                                     _independent_entries, _merged_counters, _trip_count)
from ccls.readers.llvm.vector_bodies import count_from_scalar_copies
from ccls.readers.scev import BudgetExhausted, FunctionAnalyses, MEMORY_ACCESS_STEPS, ReadingBudget, ValueMemo, spoken
from ccls.taxonomy import with_vector
from ccls.unknown_nests import share_unknown_nests

if TYPE_CHECKING:
    from ccls.source_map import LoopBound  # tree-sitter only where the source is parsed


_DEFINE = re.compile(r"^define [^\n]*?@(\"[^\"]+\"|[-\w.$]+)\(", re.M)


@dataclass(frozen=True)
class ModuleText:
    ir: str  # module text with named values
    analyses: dict[str, FunctionAnalyses]
    assembly: str | None = None  # verbose assembly of the same module, or None


@dataclass
class _Defined:
    """One function of the module to read, with what the module-wide passes found for it."""

    fn: IRFunction
    subprogram: tuple[str, int | None]
    machine: dict[str, list[str]] | None  # machine instructions per IR block
    notes: list[str]  # assumptions made while attributing machine code
    # IR block → the blocks that run before it in the same loop iteration, in order (`_contexts`)
    context: dict[str, tuple[str, ...]] = field(default_factory=dict)
    header: str | None = None  # the header that defines it, where the analysed file defines none
    traces: dict[str, tuple[str, ...]] = field(default_factory=dict)  # innermost loop → its body's code (`_traces`)


@dataclass
class ParsedModule:
    """The module parsed once, with each function's machine code already grouped per IR block,
    so callers can start work on the machine code (llvm-mca) while the functions are read."""

    module: ModuleText
    functions: list[_Defined]
    dilocation_lines: dict[str, int]
    inlined_from: dict[str, str]  # debug location → the function its code was inlined from
    global_bytes: dict[str, int] = field(default_factory=dict)  # each global array's size in bytes
    allocators: frozenset[str] = frozenset()  # functions LLVM knows allocate memory (malloc, calloc…)
    global_maxima: dict[str, int] = field(default_factory=dict)  # `global_constants.stored_maxima`
    program_filled: frozenset[str] = frozenset()  # `memory.program_filled_globals`
    recursive: dict[str, frozenset[str]] = field(default_factory=dict)  # `recursion.recursive_cycles`
    unset_bytes: dict[str, frozenset[int]] = field(default_factory=dict)  # `unset_flags.never_set_bytes`

    def machine_blocks(self) -> set[tuple[str, ...]]:
        """The distinct machine code of every block, as BasicBlock.machine_code will hold it, and
        of each block with its context before it (BasicBlock.machine_context + machine_code)."""
        out = set()
        for d in self.functions:
            for name, code in (d.machine or {}).items():
                if code:
                    out.add(tuple(code))
                    if (before := _context_code(d.machine, d.context.get(name, ()))):
                        out.add(before + tuple(code))
            out.update(d.traces.values())
        return out


# The registers a block reads are set close before it: a longer context only costs llvm-mca time.
MAX_CONTEXT_LINES = 24


def _context_code(machine: dict[str, list[str]], blocks: tuple[str, ...]) -> tuple[str, ...]:
    """The machine code of a block's context: its blocks' code in order (the last
    MAX_CONTEXT_LINES lines of it), none if one of them has none."""
    if not blocks or any(b not in machine for b in blocks):
        return ()
    # From the last block back, as far as the lines kept reach: a block deep in a long loop body
    # has many blocks before it, and joining all their code to keep 24 lines was quadratic.
    kept: list[str] = []
    for b in reversed(blocks):
        kept[:0] = machine[b]
        if len(kept) >= MAX_CONTEXT_LINES:
            break
    return tuple(kept[-MAX_CONTEXT_LINES:])


class IRNotReadable(Exception):
    """IR that llvmlite's LLVM rejects, with its parser's words, the line and the function
    (`.line`, `.function`) they point at. The front ends report it as the file's error."""

    def __init__(self, message: str, line: int | None = None, function: str | None = None):
        super().__init__(message)
        self.line, self.function = line, function


# LLVM 20 removed the x86_mmx type (MMX intrinsics' operands); its bitcode reader upgrades it to
# <1 x i64>, the same 64 bits. clang-19 still prints x86_mmx; llvmlite's LLVM no longer parses it.
_MMX_TYPE = re.compile(r'"(?:[^"\\]|\\.)*"|\bx86_mmx\b')
_PARSE_ERROR = re.compile(r"<string>:(?P<line>\d+):(?P<column>\d+): error: (?P<message>[^\n]*)")


def readable_ir(ir: str) -> str:
    """`ir` as llvmlite's newer LLVM reads it: types LLVM has since removed are written as LLVM's
    own upgrade writes them (x86_mmx as <1 x i64>); quoted strings are left alone."""
    if "x86_mmx" not in ir:
        return ir
    return _MMX_TYPE.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "<1 x i64>", ir)


def _parse_assembly(ir: str):
    """llvmlite's module for `ir` (upgraded by `readable_ir`), or IRNotReadable."""
    try:
        return llvm.parse_assembly(readable_ir(ir))
    except RuntimeError as problem:
        found = _PARSE_ERROR.search(str(problem))
        if found is None:
            raise IRNotReadable(f"LLVM IR not readable by llvmlite (LLVM {_llvm_version()}): {problem}") from None
        line = int(found["line"])
        lines = ir.splitlines()
        function = None
        for text in reversed(lines[:line]):
            if text.startswith("}"):
                break
            if m := _DEFINE.match(text):
                function = m.group(1).strip('"')
                break
        where = f"IR line {line}" + (f", in function {function}" if function else "")
        code = lines[line - 1].strip() if line <= len(lines) else ""
        raise IRNotReadable(f"LLVM IR not readable by llvmlite (LLVM {_llvm_version()}): {found['message']} "
                            f"({where}: `{code[:200]}`)", line, function) from None


def _llvm_version() -> str:
    return ".".join(str(part) for part in llvm.llvm_version_info)


_INT_BITS = re.compile(r"i(\d+)")
# Linkages of functions a header defines inline: emitted wherever they are used, not the file's own.
_EMITTED_WHERE_USED = {"linkonce", "linkonce_odr", "weak_odr", "available_externally"}


def parsed_ir(ir: str) -> tuple[Any, str]:
    """(llvmlite's module for `ir`, LLVM's print of it): one parse for the code generator and
    the reader (`parse_module(..., printed=)`). Raises IRNotReadable."""
    parsed = _parse_assembly(ir)
    return parsed, str(parsed)


def parse_module(module: ModuleText, main_file: str | None = None, printed: str | None = None) -> ParsedModule:
    """Parse the module; with `main_file`, keep only functions whose debug info places them in
    that file (not inline functions from headers). `printed`: `parsed_ir`'s print of
    `module.ir`, where the caller parsed it already. Raises IRNotReadable."""
    # LLVM prints what it parsed in one layout, the one the text reader reads; its metadata ids
    # (and so the !dbg of each instruction) are those of this text, not always of the input's.
    text = printed if printed is not None else str(_parse_assembly(module.ir))
    subprograms = _subprogram_info(text)
    fn_subprogram = {m.group(1).strip('"'): m.group(2) for m in _DEFINE_DBG.finditer(text)}
    machine = _machine_code(module.assembly) if module.assembly else {}
    kept, from_headers = [], []
    functions = read_module(text).functions
    specialised = _specialised_twins(functions)
    for fn in functions:
        if fn.is_declaration or original_name(fn.name) != fn.name:
            continue  # a copy for some callers (a twin, a specialisation): its original is reported
        notes: list[str] = []
        if fn.name in specialised:
            dropped = [name for name, _ in fn.arguments if name not in {n for n, _ in specialised[fn.name].arguments}]
            notes.append(f"the build runs only a copy specialised to what its callers pass ({', '.join(dropped)} "
                         f"fixed or unused at every call): that copy is read")
            fn = specialised[fn.name]
        name, line, defined_in = subprograms.get(fn_subprogram.get(fn.name, ""), ("", None, None))
        own = not main_file or (defined_in is not None and os.path.basename(defined_in) == main_file)
        if not own and (defined_in is None or fn.linkage in _EMITTED_WHERE_USED):
            continue  # compiler-generated (no debug info of its own), or a header's inline function
        grouped = _machine_per_ir_block(machine.get(fn.name), {name for name, _ in fn.blocks}, notes)
        analyses = module.analyses.get(fn.name)
        contexts = _contexts(fn.predecessors, analyses) if grouped else {}
        traces = _traces([name for name, _ in fn.blocks], grouped, analyses) if grouped else {}
        (kept if own else from_headers).append(_Defined(fn, (name, line), grouped, notes, contexts,
                                                        None if own else defined_in, traces))
    # A file that defines nothing itself but a single-header library's implementation
    # (`#define STB_IMAGE_IMPLEMENTATION` then `#include "stb_image.h"`): its functions are the
    # header's, brought into existence by the file.
    kept = kept or from_headers
    return ParsedModule(module, kept, _source_lines(text), _inlined_from(text, subprograms), global_sizes(text),
                        _allocators(text), stored_maxima(text), program_filled_globals(text, functions),
                        recursive_cycles(functions), never_set_bytes(text))


def _specialised_twins(functions: list[IRFunction]) -> dict[str, IRFunction]:
    """Static functions the build runs only as a copy specialised to what their callers pass:
    the one as-built twin (`frontends.as_built`) left standing, with fewer parameters than the
    original (`f.ccls.as.built()` of `static void f(const Params *p, …)` called once with
    constants: IPSCCP put the constants in its body, dead-argument elimination dropped them).
    Every call in the program runs that code, never the general original: it is what is read,
    under the original's name. original name → its twin."""
    by_original: dict[str, list[IRFunction]] = {}
    for fn in functions:
        if not fn.is_declaration and TWIN_SUFFIX in fn.name:
            by_original.setdefault(original_name(fn.name), []).append(fn)
    originals = {fn.name: fn for fn in functions if not fn.is_declaration}
    return {name: twins[0] for name, twins in by_original.items()
            if len(twins) == 1 and name in originals and len(twins[0].arguments) < len(originals[name].arguments)}


_ATTRIBUTE_GROUP = re.compile(r"^attributes #(\d+) = \{(.*)\}$", re.M)
_FUNCTION_HEAD = re.compile(r"^(?:declare|define) [^\n]*?@(\"[^\"]+\"|[-\w.$]+)\(([^\n]*)$", re.M)
_ALLOCKIND = re.compile(r'allockind\("([^"]*)"\)')


def _allocators(ir: str) -> frozenset[str]:
    """Functions whose attributes say they allocate: `allockind("alloc…")` or `("realloc…")`,
    which LLVM's InferFunctionAttrs puts on the C library's allocators (malloc, calloc, realloc,
    strdup, aligned_alloc…)."""
    allocating = {m.group(1) for m in _ATTRIBUTE_GROUP.finditer(ir)
                  if (kind := _ALLOCKIND.search(m.group(2))) and {"alloc", "realloc"} & set(kind.group(1).split(","))}
    if not allocating:
        return frozenset()
    return frozenset(m.group(1).strip('"') for m in _FUNCTION_HEAD.finditer(ir)
                     if set(re.findall(r"#(\d+)", m.group(2).rsplit(")", 1)[-1])) & allocating)


def read_functions(parsed: ParsedModule, file: str, language: str, arch: str,
                   default_trip_count: int, loop_bounds: Sequence[LoopBound] = (), *,
                   early_exit: str = "expected", budget_steps: int | None = None,
                   budget_seconds: float | None = None) -> list[FunctionIR]:
    """Every function of the module; `loop_bounds` (from the source, if any) name loop bounds
    that the IR reads from memory; `early_exit` is the policy for data-dependent exits. Each
    function's loop and memory analysis gets its own budget (`ReadingBudget`; defaults when
    None): past it, the function is reported with what is known and says what it assumed."""
    def budget() -> ReadingBudget:
        chosen = ReadingBudget()
        if budget_steps is not None:
            chosen.max_steps = budget_steps
        if budget_seconds is not None:
            chosen.max_seconds = budget_seconds
        return chosen

    request = _Request(file, language, arch, default_trip_count, early_exit, loop_bounds)
    return [_read_function(d, parsed, request, budget()) for d in parsed.functions]


@dataclass(frozen=True)
class _Request:
    """What every function of a module is read with (`read_functions`' arguments)."""

    file: str
    language: str
    arch: str
    default_trip_count: int
    early_exit: str  # the policy for data-dependent exits
    loop_bounds: Sequence[LoopBound]  # from the source, if any


def _read_function(defined: _Defined, parsed: ParsedModule, request: _Request, budget: ReadingBudget) -> FunctionIR:
    return _FunctionReader(defined, parsed, request, budget).read()


class _FunctionReader:
    """Reads one function: its values indexed once (here), then the sizes named from memory and
    the vectorizer's checks (`_name_sizes`), each block's instructions (`_blocks`), the branches
    on loaded data, and each loop's trip count (`_loops`), in that order: each reads what the
    one before found. `read` puts them together."""

    def __init__(self, defined: _Defined, parsed: ParsedModule, request: _Request, budget: ReadingBudget):
        fn = defined.fn
        self.defined, self.parsed, self.request, self.budget = defined, parsed, request, budget
        self.assumptions = list(defined.notes) + (
            [f"defined by {os.path.basename(defined.header)}, whose implementation "
             f"{os.path.basename(request.file)} includes"] if defined.header else [])
        self.analyses = analyses = parsed.module.analyses.get(fn.name, FunctionAnalyses())
        self.reading = _Reading(ValueMemo(), budget, parsed.global_bytes, local_array_sizes(fn.blocks),
                                recursion=parsed.recursive.get(original_name(fn.name), frozenset()))
        arguments = [(name, type_text) for name, type_text in fn.arguments if name]
        self.parameters = [name for name, _ in arguments]
        self.block_loop: dict[str, str] = {}  # block → the header of the innermost loop it is in
        for loop in sorted(analyses.loops.values(), key=lambda l: l.depth):
            for name in loop.blocks:
                self.block_loop[name] = loop.header  # deeper loops overwrite: innermost wins
        self.ancestors = {h: _ancestors(h, analyses) for h in analyses.loops}  # header → the loops around it
        self.body = body = fn.blocks
        self.dbg_ids = [i.dbg for _, instrs in body for i in instrs]  # each instruction's `!dbg`, in order
        self.load_pointers = {i.name: i.operands[0].name for _, instrs in body for i in instrs
                              if i.opcode == "load" and i.name}  # loaded value → the pointer it is loaded from
        self.loaded = set(self.load_pointers)
        self.bases = {name for name, type_text in arguments if type_text == "ptr"} | self.loaded  # what arrays start at
        self.loop_defined = {i.name: self.block_loop.get(bb) for bb, instrs in body for i in instrs if i.name}
        self.definitions = {i.name: i for _, instrs in body for i in instrs if i.name}
        self.terminators = {name: instrs[-1] for name, instrs in body if instrs}
        self.substituted: dict[str, Polynomial] = {}  # values named as sizes (`_name_sizes`)
        self.never_vectorised: dict[str, str] = {}  # headers of copies a run-time check never runs
        self.conditions = DataConditions(analyses, self.definitions, self.loop_defined, self.loaded, budget,
                                         parsed.program_filled, parsed.unset_bytes)

    def read(self) -> FunctionIR:
        request, budget, assumptions = self.request, self.budget, self.assumptions
        self._name_sizes()
        # Each loop's trip count first: what every cost is multiplied by. The memory accesses'
        # address streams, many per loop and dearer to read, get a share of what is left.
        trips = self._trips()
        for step in self.reading.unit_steps:  # addresses move at the step the count was taken at
            self.substituted[step] = Polynomial.constant(1)
        memory_budget = budget.share(MEMORY_ACCESS_STEPS)
        blocks, lines_seen = self._blocks(memory_budget)
        budget.absorb(memory_budget)
        entries = _weigh_data_branches(blocks, self.body, self.terminators, self.block_loop, self.conditions,
                                       assumptions, request.default_trip_count)
        loops, stopped = self._loops(blocks, entries, trips)
        assumptions.extend(share_unknown_nests(loops, request.default_trip_count))
        if budget.exhausted:
            assumptions.append(_stopped_note(budget, stopped, request.default_trip_count))
        elif memory_budget.exhausted:
            assumptions.append(f"memory accesses: reading their addresses stopped after {memory_budget.steps} "
                               f"steps (their share of the function's budget); the accesses left unread taken as "
                               f"of unknown pattern")
        parameters = set(self.parameters)
        speech = _Speech({header: loop.line for header, loop in loops.items() if loop.line},
                         _value_lines(self.body, self.dbg_ids, self.parsed.dilocation_lines), self.loaded, parameters,
                         self._loop_origins(loops))
        assumptions[:] = [speech.text(note) for note in assumptions]
        fn, (name, line) = self.defined.fn, self.defined.subprogram
        return FunctionIR(
            name=original_name(fn.name), display_name=name or original_name(fn.name), file=self.defined.header or request.file,
            line=line or (min(lines_seen) if lines_seen else None),
            end_line=max(lines_seen) if lines_seen else line, language=request.language, arch=request.arch,
            parameters=self.parameters, blocks=blocks, loops=loops, assumptions=assumptions, ir_text=fn.text,
            stopped_on_time=budget.over_time or memory_budget.over_time,
            field_symbols=_field_symbols(self.substituted, self.definitions, parameters),
            value_ceilings=self._value_ceilings(loops), global_symbols=self._global_symbols(loops),
            machine_traces=dict(self.defined.traces),
        )

    def _loop_origins(self, loops: dict[str, Loop]) -> dict[str, str]:
        """Each loop inlined from another function (a static helper, a header's template) →
        that function's name: its line is the call's, in this function."""
        inlined_from, own = self.parsed.inlined_from, self.defined.subprogram[0]
        if not inlined_from:
            return {}
        first_dbg = {}
        for block, instrs in self.body:
            if block in loops:
                first_dbg[block] = next((i.dbg for i in instrs if i.dbg), None)
        return {header: origin for header, dbg in first_dbg.items()
                if dbg and (origin := inlined_from.get(dbg)) and origin != own}

    def _value_ceilings(self, loops: dict[str, Loop]) -> dict[str, tuple[int, str]]:
        """The most each size can be, and why, where every value it names is bounded: an 8- or
        16-bit integer (a global `unsigned char w` read in `y < w`: 255), or a value whose range
        ScalarEvolution proves (`r = s >> 4` of a byte: 15) — a bound, not a count."""
        symbols = {s for loop in loops.values() for s in loop.trip_count.iterations.symbols}
        if not symbols:
            return {}
        maxima, stored = self.analyses.value_maxima, self.parsed.global_maxima
        bounds: dict[str, tuple[float, str]] = {}

        def named(symbol: str | None, value: str, type_text: str) -> None:
            if symbol not in symbols:
                return
            bits = _INT_BITS.fullmatch(type_text)
            most, why = (1 << int(bits.group(1))) - 1 if bits else math.inf, "its type holds no more"
            if maxima.get(value, math.inf) < most:
                most, why = maxima[value], "LLVM's value range for it (ScalarEvolution) ends there"
            if bits and (counted := physical_bounds.counter_ceiling(value, self.analyses, self.reading)) \
                    and counted[0] < most:
                most, why = counted
            load = self.definitions.get(value)
            if load is not None and load.opcode == "load" and load.operands and load.operands[0].is_global_variable \
                    and stored.get(load.operands[0].name, math.inf) < most:
                most, why = stored[load.operands[0].name], ("the most any store in this file gives it (a static "
                                                            "global only this file writes, always with constants)")
            if most >= bounds.get(symbol, (-1, ""))[0]:
                bounds[symbol] = (most, why)
        for name, type_text in self.defined.fn.arguments:
            named(name, name, type_text)
        for value, size in self.substituted.items():
            if value in self.definitions and len(size.symbols) == 1 and size == Polynomial.symbol(*size.symbols):
                named(next(iter(size.symbols)), value, self.definitions[value].type_text)
        counted = self.reading.counted_values  # the values a count was read in: those alone bound it
        for symbol, values in counted.items():
            for value in sorted(values & self.definitions.keys()):  # sorted: a tie's reason never depends on hashing
                named(symbol, value, self.definitions[value].type_text)
        names, parameters = data_walks.Names(self.definitions, set(self.parameters)), set(self.parameters)
        for instr in self.definitions.values():
            if not _INT_BITS.fullmatch(instr.type_text):
                continue  # a pointer or a float is no count's value
            if instr.opcode == "load":
                symbol = names.value(instr.name)
            elif instr.opcode in ("phi", "select"):
                symbol = physical_bounds.variable_of(instr.name, self.reading, parameters)
            else:
                continue
            if symbol not in counted:
                named(symbol, instr.name, instr.type_text)
        return {symbol: (int(most), why) for symbol, (most, why) in sorted(bounds.items()) if most < 1 << 16}

    def _global_symbols(self, loops: dict[str, Loop]) -> dict[str, tuple[str, int]]:
        """The sizes its loops count that are an integer global as loaded (`y < WD`): symbol →
        (global, bits), for the values every write of the program gives it (`ccls.sizes`)."""
        symbols = {s for loop in loops.values() for s in loop.trip_count.iterations.symbols}
        pairs = [(next(iter(size.symbols)), value) for value, size in self.substituted.items()
                 if len(size.symbols) == 1 and size == Polynomial.symbol(*size.symbols)]
        pairs += [(symbol, value) for symbol, values in self.reading.counted_values.items() for value in values]
        names = data_walks.Names(self.definitions, set(self.parameters))  # a bound re-read each iteration
        pairs += [(names.value(instr.name), instr.name) for instr in self.definitions.values() if instr.opcode == "load"]
        out: dict[str, tuple[str, int]] = {}
        for symbol, value in pairs:
            load = self.definitions.get(value)
            bits = _INT_BITS.fullmatch(load.type_text) if load is not None else None
            if symbol in symbols and bits and load.opcode == "load" and load.operands \
                    and load.operands[0].is_global_variable:
                found = (load.operands[0].name, int(bits.group(1)))
                if out.setdefault(symbol, found) != found:
                    out[symbol] = ("", 0)  # two globals under one name: neither
        return {symbol: found for symbol, found in out.items() if found[0]}

    def _name_sizes(self) -> None:
        """Sizes the IR reads from memory, named (from the source's loop bounds, from the data,
        merged counters), and the loops a run-time check never lets run."""
        analyses, reading, body, definitions = self.analyses, self.reading, self.body, self.definitions
        parameters, assumptions = self.parameters, self.assumptions
        reading.definitions, reading.allocators = definitions, self.parsed.allocators
        substituted = self.substituted = _named_loads(analyses, set(parameters), body, definitions, self.dbg_ids,
                                                      self.parsed.dilocation_lines, self.request.loop_bounds,
                                                      assumptions)
        reading.block_of = {i.name: bb for bb, instrs in body for i in instrs if i.name}
        reading.instructions = dict(body)
        reading.parameters = parameters
        reading.data_symbols = _data_named_loads(analyses, definitions, reading.block_of, set(parameters), substituted,
                                                 assumptions) | {s for v in substituted.values() for s in v.symbols}
        substituted.update(_merged_counters(analyses, self.terminators, reading))
        self.never_vectorised = _checked_overlaps(analyses, parameters, body, definitions, self.terminators,
                                                  substituted, reading, assumptions)

    def _blocks(self, budget: ReadingBudget) -> tuple[list[BasicBlock], list[int]]:
        """Each block with its classified instructions (source line, divisor, memory access, bulk
        bytes, whether a branch is on loaded data) and machine code; the source lines seen.
        `budget`: what reading the addresses may spend."""
        main, self.reading.budget = self.reading.budget, budget
        try:
            return self._read_blocks()
        finally:
            self.reading.budget = main

    def _read_blocks(self) -> tuple[list[BasicBlock], list[int]]:
        analyses, reading, substituted = self.analyses, self.reading, self.substituted
        parameters, loaded, loop_defined, block_loop = self.parameters, self.loaded, self.loop_defined, self.block_loop
        ancestors, dbg_ids, dilocation_lines = self.ancestors, self.dbg_ids, self.parsed.dilocation_lines
        load_pointers, bases = self.load_pointers, self.bases
        machine, context = self.defined.machine, self.defined.context
        symbols_by_loop: dict[str | None, set[str]] = {}  # parameters + loads invariant in that loop
        blocks: list[BasicBlock] = []
        lines_seen: list[int] = []
        position = -1
        for bb_name, instrs in self.body:
            loop_id = block_loop.get(bb_name)
            code = tuple(machine.get(bb_name, ())) if machine is not None else None
            block = BasicBlock(bb_name, loop_id, machine_instructions=len(code) if code is not None else None,
                               machine_code=code or (), machine_context=_context_code(machine, context.get(bb_name, ()))
                               if machine is not None else ())
            for instr in instrs:
                position += 1
                text = instr.text
                opcode = instr.opcode
                type_text = instr.type_text
                if opcode == "store":
                    type_text = instr.operands[0].type_text
                cls, callee = classify(opcode, text, type_text)
                if cls is None:
                    continue
                dbg_id = dbg_ids[position] if position < len(dbg_ids) else None
                line = dilocation_lines.get(dbg_id) if dbg_id else None
                if line:
                    lines_seen.append(line)
                width, elem_bits = _type_bits(type_text if opcode not in ("icmp", "fcmp")
                                              else instr.operands[0].type_text)
                divisor = None
                if opcode in ("udiv", "sdiv", "urem", "srem", "fdiv", "frem"):
                    divisor = _divisor_kind(instr.operands[1], loop_id, loop_defined)
                    if opcode in ("udiv", "sdiv", "urem", "srem") and divisor in ("constant", "power-of-two"):
                        # The backend lowers a constant divisor to multiply-high and shifts (or a
                        # mask/shift for powers of two): cost it as what actually runs.
                        cls = "int_shift" if divisor == "power-of-two" else "int_mul"
                access = None
                if opcode in ("load", "store", "atomicrmw", "cmpxchg"):
                    pointer = instr.operands[0 if opcode in ("load", "atomicrmw", "cmpxchg") else 1]
                    if loop_id not in symbols_by_loop:
                        symbols_by_loop[loop_id] = set(parameters) | {
                            name for name in loaded if not _inside(loop_defined.get(name), loop_id, analyses)}
                    access = _memory_access(pointer.name, max(1, (width or elem_bits) // 8), loop_id, ancestors,
                                            analyses, symbols_by_loop[loop_id], loaded, load_pointers, bases,
                                            substituted, reading)
                bulk = _bulk_bytes(instr, callee, analyses, symbols_by_loop.get(loop_id, set(parameters)),
                                   ancestors.get(loop_id, set()) | ({loop_id} if loop_id else set()), substituted,
                                   reading) if callee in _BULK else None
                data_dependent = opcode == "br" and _branches_on_loaded_data(instr, loop_id, block_loop,
                                                                              self.conditions)
                program_data = data_dependent and program_filled_data(instr, loop_id, self.conditions)
                block.instructions.append(Instruction(with_vector(cls, width), line, opcode, callee, access, divisor,
                                                      data_dependent, bulk, program_data))
            blocks.append(block)
        return blocks, lines_seen

    def _trips(self) -> dict[str, TripCount | None]:
        """Each loop's trip count; None for the loops left unread once the budget ran out."""
        analyses, budget, body, definitions = self.analyses, self.budget, self.body, self.definitions
        parameters, assumptions, terminators = self.parameters, self.assumptions, self.terminators
        default_trip_count, early_exit = self.request.default_trip_count, self.request.early_exit
        ancestors, substituted, reading = self.ancestors, self.substituted, self.reading
        trips: dict[str, TripCount | None] = {}
        for header, record in analyses.loops.items():
            try:
                budget.spend()
                trips[header] = (_halving_trip(record, body, definitions, analyses, set(parameters), assumptions, reading)
                                 or _trip_count(record, analyses, set(parameters), ancestors[header],
                                                default_trip_count, early_exit, assumptions, substituted, terminators,
                                                reading))
            except BudgetExhausted:
                trips[header] = None
        self._cap_guarded(trips)
        # once every loop is read: a vector body of unknown count takes its scalar copy's
        count_from_scalar_copies(trips, analyses, terminators, reading, set(self.never_vectorised), assumptions)
        return trips

    def _cap_guarded(self, trips: dict[str, TripCount | None]) -> None:
        """Counts in sizes that the branches into their loop bound (`if (size <= 32)`): taken at
        those bounds where that is less (`guarded_sizes`), as a worst case."""
        symbol_of = {p: p for p in self.parameters}
        symbol_of.update({value: variable for variable, values in self.reading.counted_values.items()
                          for value in values})
        symbol_of.update({value: next(iter(size.symbols)) for value, size in self.substituted.items()
                          if len(size.symbols) == 1 and size == Polynomial.symbol(*size.symbols)})
        dominators: dict[str, str] | None = None
        for header, trip in trips.items():
            if trip is None or trip.kind == "unknown" or trip.is_named_guess or not trip.iterations.symbols:
                continue
            if dominators is None:
                dominators = immediate_dominators(
                    self.body[0][0], lambda block: _successors(self.terminators[block]) if block in self.terminators else ())
            caps = guarded_sizes.guard_caps(header, self.terminators, self.definitions, symbol_of, dominators)
            if caps and (found := guarded_sizes.capped_count(trip.iterations, caps)) is not None:
                most, why = found
                self.assumptions.append(f"loop %{header}: {why}: at most {spoken(most)} iterations, not "
                                        f"{spoken(trip.iterations)}")
                trips[header] = TripCount("bounded", most, trip.source_text, worst_case=True)

    def _loops(self, blocks: list[BasicBlock], entries: dict[str, Fraction],
               trips: dict[str, TripCount | None]) -> tuple[dict[str, Loop], list[int | None]]:
        """Each loop with its trip count, line, whether its entries are independent and its share
        of entries; the lines of the loops left unread once the budget ran out."""
        analyses, budget, body, definitions = self.analyses, self.budget, self.body, self.definitions
        assumptions, terminators = self.assumptions, self.terminators
        default_trip_count, never_vectorised = self.request.default_trip_count, self.never_vectorised
        loops = {}
        defined_in = {i.name: name for name, instrs in body for i in instrs if i.name}  # value -> its block
        stopped: list[int | None] = []  # lines of the loops left unread once the budget ran out
        lines = self.parsed.dilocation_lines
        try:
            chains = memory_chains(body, self.block_loop, lambda instr: lines.get(instr.dbg) if instr.dbg else None)
        except RecursionError:  # a chain of values too long to follow: none claimed
            chains = {}
        for header, record in analyses.loops.items():
            header_line = next((i.line for b in blocks if b.name == header for i in b.instructions if i.line), None)
            trip = trips.get(header)
            if trip is None:
                trip = TripCount("unknown", Polynomial.constant(default_trip_count), record.backedge_taken or "")
                stopped.append(header_line)
            if never_vectorised.get(header) == "stride":
                trip = TripCount("expected", Polynomial.constant(0), trip.source_text)
                assumptions.append(f"loop at line {header_line or '?'}: the vectorised copy, made for a symbolic "
                                   f"stride of 1 (a matrix row of one element), taken as not run; the scalar copy "
                                   f"runs the whole range")
            elif header in never_vectorised:
                trip = TripCount("expected", Polynomial.constant(0), trip.source_text)
                assumptions.append(f"loop at line {header_line or '?'}: the vectorised copy, which a run-time alias "
                                   f"check skips for every iteration of the loops around it (its arrays always "
                                   f"overlap): not run; the scalar copy runs the whole range")
            elif _fallback_for_overlap(header, record, terminators):
                trip = TripCount("expected", Polynomial.constant(0), trip.source_text)
                assumptions.append(f"loop %{header}: the vectorizer's copy for overlapping arrays, entered only "
                                   f"when a run-time alias check finds an overlap: taken as not run (the arrays "
                                   f"assumed apart)")
            elif _fallback_for_increment(header, record, terminators, definitions):
                trip = TripCount("expected", Polynomial.constant(0), trip.source_text)
                assumptions.append(f"loop at line {header_line or '?'}: the scalar copy for an increment other "
                                   f"than 1 (`a[i * inc]`, the vector copy made for 1), taken as not run: an "
                                   f"increment that bounds no loop is 1 in the usual call")
            try:
                independent = _independent_entries(record, analyses, body, definitions, defined_in, budget)
            except (BudgetExhausted, RecursionError):  # over budget, or a chain of values too long to follow
                independent = False  # the cautious answer: entries not overlapped
            loops[header] = Loop(header, record.parent, record.depth, trip, header_line, independent,
                                 entries.get(header, Fraction(1)), chains.get(header, ()))
        return loops, stopped
