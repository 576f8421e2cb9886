"""LLVM IR → FunctionIR: classify each instruction, attach source lines and memory access
patterns, and build loops with trip counts from LLVM's own analyses.

Inputs are texts: the module (with value names, e.g. after ``opt -passes=instnamer``), opt's
``print<loops>,print<scalar-evolution>`` output, and optionally verbose assembly for machine
instruction counts. llvmlite parses and validates the module once and prints it back; the
functions are read from that text (`ccls.readers.llvm_text`). Nothing here touches files or
processes.
"""
from __future__ import annotations

import bisect
import math
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Sequence

import llvmlite.binding as llvm

from ccls.early_exit import early_exit_trip
from ccls.model import BasicBlock, FunctionIR, Instruction, Loop, MemoryAccess, TripCount
from ccls.polynomial import LOG2_PREFIX, Polynomial
from ccls.readers import alias_checks, data_walks, llvm_text
from ccls.readers.block_frequency import block_frequencies
from ccls.readers.llvm_text import IRFunction, IRInstruction, Operand
from ccls.readers.scev import UNKNOWN as UNKNOWN_SCEV
from ccls.readers.scev import (GLOBAL_BASE, BudgetExhausted, FunctionAnalyses, NotPolynomial, ReadingBudget,
                               ScevContext, ValueMemo, ValueTable, spoken, to_polynomial)
from ccls.taxonomy import with_vector
from ccls.unknown_nests import share_unknown_nests

if TYPE_CHECKING:
    from ccls.source_map import LoopBound  # tree-sitter only where the source is parsed


_SIMPLE_OPCODES = {
    "add": "int_add", "sub": "int_add",
    "and": "int_logic", "or": "int_logic", "xor": "int_logic",
    "shl": "int_shift", "lshr": "int_shift", "ashr": "int_shift",
    "icmp": "int_cmp", "mul": "int_mul",
    "udiv": "int_div", "sdiv": "int_div", "urem": "int_div", "srem": "int_div",
    "fadd": "fp_add", "fsub": "fp_add", "fneg": "fp_add", "fcmp": "fp_add",
    "fmul": "fp_mul", "fdiv": "fp_div", "frem": "fp_div",
    "zext": "convert", "sext": "convert", "trunc": "convert", "fptosi": "convert",
    "fptoui": "convert", "sitofp": "convert", "uitofp": "convert", "fpext": "convert",
    "fptrunc": "convert", "ptrtoint": "convert", "inttoptr": "convert",
    "select": "select", "getelementptr": "address", "load": "load", "store": "store",
    "br": "branch", "switch": "branch", "indirectbr": "branch", "ret": "return",
    "atomicrmw": "atomic", "cmpxchg": "atomic", "fence": "fence",
    "extractelement": "vector_shuffle", "insertelement": "vector_shuffle",
    "shufflevector": "vector_shuffle", "alloca": "other", "va_arg": "other",
    "extractvalue": "other", "insertvalue": "other", "landingpad": "other",
    "invoke": "call", "callbr": "call",
}
# No machine instruction of their own: SSA bookkeeping, casts that are free, markers.
_FREE_OPCODES = {"phi", "bitcast", "freeze", "unreachable", "addrspacecast"}
_FREE_INTRINSICS = ("llvm.dbg.", "llvm.lifetime.", "llvm.assume", "llvm.experimental.noalias",
                    "llvm.invariant.", "llvm.pseudoprobe", "llvm.annotation", "llvm.var.annotation",
                    "llvm.prefetch", "llvm.sideeffect")
_TRANSCENDENTAL = {"exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "pow", "powi",
                   "atan", "atan2", "asin", "acos", "sinh", "cosh", "tanh", "cbrt", "expm1", "log1p", "erf"}
_INTRINSIC_CLASS = {
    "fma": "fp_fma", "fmuladd": "fp_fma", "sqrt": "fp_sqrt", "fabs": "fp_add", "copysign": "fp_add",
    "minnum": "fp_add", "maxnum": "fp_add", "minimum": "fp_add", "maximum": "fp_add",
    "floor": "convert", "ceil": "convert", "trunc": "convert", "round": "convert", "rint": "convert",
    "nearbyint": "convert", "lround": "convert", "llround": "convert",
    "smax": "int_cmp", "smin": "int_cmp", "umax": "int_cmp", "umin": "int_cmp", "abs": "int_cmp",
    "ctpop": "int_logic", "ctlz": "int_logic", "cttz": "int_logic", "bswap": "int_logic",
    "bitreverse": "int_logic", "fshl": "int_shift", "fshr": "int_shift",
    "sadd.with.overflow": "int_add", "uadd.with.overflow": "int_add", "ssub.with.overflow": "int_add",
    "usub.with.overflow": "int_add", "smul.with.overflow": "int_mul", "umul.with.overflow": "int_mul",
    "memcpy": "call", "memmove": "call", "memset": "call",
}
_VECTOR = re.compile(r"<(\d+) x (i\d+|float|double|half|bfloat|ptr)>")
_SCALAR_BITS = {"float": 32, "double": 64, "half": 16, "bfloat": 16, "ptr": 64, "x86_fp80": 80, "fp128": 128}
_DILOCATION = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)(?:[^\n]*?inlinedAt: !(\d+))?", re.M)
_DISUBPROGRAM = re.compile(r"^!(\d+) = (?:distinct )?!DISubprogram\((?P<body>.*)\)$", re.M)
_DEFINE_DBG = re.compile(r"^define [^\n]*?@(\"[^\"]+\"|[-\w.$]+)\([^\n]*!dbg !(\d+)", re.M)
_FUNCTION_LABEL = re.compile(r"^(\"[^\"]+\"|[A-Za-z_$][-\w.$]*):")
_DEFINE = re.compile(r"^define [^\n]*?@(\"[^\"]+\"|[-\w.$]+)\(", re.M)
_ASM_BLOCK = re.compile(r"^(?:\.LBB\d+_\d+:|# %bb\.\d+:)\s*(?:# %(?P<name>\S+))?")


@dataclass(frozen=True)
class ModuleText:
    ir: str  # module text with named values
    analyses: dict[str, FunctionAnalyses]
    assembly: str | None = None  # verbose assembly of the same module, or None


def _type_bits(type_text: str) -> tuple[int | None, int]:
    """(vector width in bits or None, element bits) of an LLVM type string."""
    if m := _VECTOR.search(type_text):
        lanes, elem = int(m.group(1)), m.group(2)
        elem_bits = _SCALAR_BITS.get(elem) or int(elem[1:])
        return lanes * elem_bits, elem_bits
    t = type_text.strip()
    if t in _SCALAR_BITS:
        return None, _SCALAR_BITS[t]
    if re.fullmatch(r"i\d+", t):
        return None, int(t[1:])
    return None, 64


def _callee_name(instr_text: str) -> str | None:
    m = re.search(r"(?:call|invoke)\b[^@%]*?(?:@(\"[^\"]+\"|[-\w.$]+)|%[-\w.$\"]+)\(", instr_text)
    if not m or m.group(1) is None:
        return None
    return m.group(1).strip('"')


def classify(opcode: str, text: str, type_text: str) -> tuple[str | None, str | None]:
    """(class or None if free, callee) for one instruction."""
    if opcode in _FREE_OPCODES:
        return None, None
    if opcode in ("call", "invoke", "callbr"):
        callee = _callee_name(text)
        if callee is None:
            return "call_indirect", None
        if callee.startswith(_FREE_INTRINSICS):
            return None, None
        if callee.startswith("llvm."):
            stem = callee[5:]
            for key, cls in _INTRINSIC_CLASS.items():
                if stem == key or stem.startswith(key + "."):
                    return cls, (key if cls == "call" else None)
            base = stem.split(".")[0]
            if base in _TRANSCENDENTAL:
                return "fp_transcendental", None
            if base.startswith("vector"):
                return "vector_shuffle", None
            return "other", None
        base = callee.rstrip("f") if callee.rstrip("f") in _TRANSCENDENTAL else callee
        if base in _TRANSCENDENTAL:
            return "fp_transcendental", None
        if callee in ("sqrt", "sqrtf"):
            return "fp_sqrt", None
        return "call", callee
    return _SIMPLE_OPCODES.get(opcode, "other"), None


@dataclass
class _MachineBlock:
    number: str  # "5" for .LBB0_5 / # %bb.5
    ir_name: str | None  # the IR block it starts, when the assembly names one
    loop: str | None  # number of its innermost loop's header block (its own, for a header)
    code: list[str]


_LOOP_TAG = re.compile(r"#\s+(?:in Loop: Header=BB\d+_(?P<inside>\d+)|=>\s*This (?:Inner )?Loop Header)")
_BLOCK_NUMBER = re.compile(r"^(?:\.LBB\d+_(\d+)|# %bb\.(\d+)):")
# LLVM's division bypass (x86): `or a, b; shr $32; je/jne` picks a 32-bit divide when both
# operands fit in 32 bits; the block with the 64-bit divide is the other way.
_BYPASS_CHECK = re.compile(r"^shrq\s+\$32, %\w+$")
_DIV64 = re.compile(r"^i?divq\b")
DIVIDE_BYPASS_SLOW = "<64-bit divide of the bypass>"


def _machine_code(assembly: str) -> dict[str, dict[str, list[str]]]:
    """Instructions per IR block per function, from verbose assembly. A machine block without
    an IR name (split, tail-duplicated or made by code generation) is counted with the nearest
    named block of the same innermost loop, before it in the layout or else after it; the
    64-bit divide of a division bypass goes under DIVIDE_BYPASS_SLOW."""
    result: dict[str, dict[str, list[str]]] = {}
    functions: list[tuple[str, list[_MachineBlock]]] = []
    blocks: list[_MachineBlock] | None = None
    for line in assembly.splitlines():
        if not line:
            continue
        if (label := _FUNCTION_LABEL.match(line)) and not line.startswith(".L"):
            blocks = [_MachineBlock("entry", "entry", None, [])]
            functions.append((label.group(1).strip('"'), blocks))
            continue
        if blocks is None:
            continue
        if m := _ASM_BLOCK.match(line):
            number = _BLOCK_NUMBER.match(line)
            blocks.append(_MachineBlock(next(g for g in number.groups() if g), m.group("name"), None, []))
            _tag_loop(blocks[-1], line)
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            _tag_loop(blocks[-1], stripped)
            continue
        if not stripped or stripped[0] == "." or stripped.endswith(":"):
            continue
        blocks[-1].code.append(stripped.split("#")[0].rstrip())
    for name, fn_blocks in functions:
        fn_blocks = [b for b in fn_blocks if b.code or b.ir_name]
        owners = _owners(fn_blocks, _bypass_slow_paths(fn_blocks))
        grouped = result.setdefault(name, {})
        for block, owner in zip(fn_blocks, owners):
            if block.code:
                grouped.setdefault(owner, []).extend(block.code)
    return result


def _tag_loop(block: _MachineBlock, comment: str) -> None:
    if block.loop is None and (m := _LOOP_TAG.search(comment)):
        block.loop = m.group("inside") or block.number


def _bypass_slow_paths(blocks: list[_MachineBlock]) -> set[int]:
    """Indices of the blocks holding the 64-bit divide of LLVM's division bypass."""
    index = {b.number: i for i, b in enumerate(blocks)}
    slow = set()
    for i, block in enumerate(blocks[:-1]):
        if len(block.code) < 2 or not _BYPASS_CHECK.match(block.code[-2]):
            continue
        jump, _, target = block.code[-1].partition("\t")
        taken = index.get(target.strip().rsplit("_", 1)[-1]) if target.strip().startswith(".LBB") else None
        if taken is None or jump not in ("je", "jne"):
            continue
        # je: the upper halves are zero → jump to the 32-bit divide; jne: jump to the 64-bit one.
        candidate = i + 1 if jump == "je" else taken
        if any(_DIV64.match(code) for code in blocks[candidate].code):
            slow.add(candidate)
    return slow


def _owners(blocks: list[_MachineBlock], slow: set[int]) -> list[str]:
    """The IR block each machine block counts with: its own name; else the nearest named block
    of its loop (the one before it, else the one after); else the named block before it."""
    named_by_loop: dict = defaultdict(list)  # loop -> indices of named blocks, ascending
    for j, b in enumerate(blocks):
        if b.ir_name:
            named_by_loop[b.loop].append(j)
    owners = []
    last_named = None
    for i, block in enumerate(blocks):
        if block.ir_name:
            last_named = block.ir_name
        if i in slow:
            owners.append(DIVIDE_BYPASS_SLOW)
            continue
        if block.ir_name:
            owners.append(block.ir_name)
            continue
        same_loop = named_by_loop.get(block.loop, [])
        if same_loop:
            at = bisect.bisect_left(same_loop, i)
            owners.append(blocks[same_loop[at - 1] if at > 0 else same_loop[0]].ir_name)
        else:  # no named block in its loop: the one before it in the layout, as codegen left it
            owners.append(last_named)
    return owners


def _machine_per_ir_block(machine: dict[str, list[str]] | None, ir_blocks: set[str],
                          assumptions: list[str]) -> dict[str, list[str]] | None:
    """Attribute machine blocks that code generation created to the IR block they came from:
    ``X.split…`` halves belong to X; ``call.sqrt…`` is the libm errno path that codegen splits
    off a sqrt (taken only for negative or NaN inputs), assumed cold."""
    if machine is None:
        return None
    out: dict[str, list[str]] = {}
    for name, code in machine.items():
        base = name
        while base not in ir_blocks and base.endswith(".split"):
            base = base[: -len(".split")]
        if base in ir_blocks:
            out.setdefault(base, []).extend(code)
        elif name.startswith("call.sqrt"):
            note = "sqrt's errno path (negative or NaN input) assumed not taken"
            if note not in assumptions:
                assumptions.append(note)
        elif name == DIVIDE_BYPASS_SLOW:
            assumptions.append("64-bit divisions: operands assumed to fit in 32 bits, so LLVM's division "
                               "bypass takes its 32-bit divide (64-bit values would cost more)")
    return out


_DIFILE = re.compile(r'^!(\d+) = (?:distinct )?!DIFile\(filename: "([^"]*)"(?:, directory: "([^"]*)")?', re.M)


def _subprogram_info(ir: str) -> dict[str, tuple[str, int | None, str | None]]:
    """DISubprogram id → (name, line, file path: as the compiler named it, joined to its
    directory)."""
    files = {m.group(1): os.path.normpath(os.path.join(m.group(3) or "", m.group(2))) for m in _DIFILE.finditer(ir)}
    info = {}
    for m in _DISUBPROGRAM.finditer(ir):
        body = m["body"]
        name = re.search(r'name: "([^"]*)"', body)
        line = re.search(r"\bline: (\d+)", body)
        file_id = re.search(r"\bfile: !(\d+)", body)
        info[m.group(1)] = (name.group(1) if name else "", int(line.group(1)) if line else None,
                            files.get(file_id.group(1)) if file_id else None)
    return info


@dataclass
class _Defined:
    """One function of the module to read, with what the module-wide passes found for it."""

    fn: IRFunction
    subprogram: tuple[str, int | None]
    machine: dict[str, list[str]] | None  # machine instructions per IR block
    notes: list[str]  # assumptions made while attributing machine code
    # IR block → the block that runs just before it in the same loop iteration (`_contexts`)
    context: dict[str, str] = field(default_factory=dict)
    header: str | None = None  # the header that defines it, where the analysed file defines none


@dataclass
class ParsedModule:
    """The module parsed once, with each function's machine code already grouped per IR block,
    so callers can start work on the machine code (llvm-mca) while the functions are read."""

    module: ModuleText
    functions: list[_Defined]
    dilocation_lines: dict[str, int]
    global_bytes: dict[str, int] = field(default_factory=dict)  # each global array's size in bytes
    allocators: frozenset[str] = frozenset()  # functions LLVM knows allocate memory (malloc, calloc…)

    def machine_blocks(self) -> set[tuple[str, ...]]:
        """The distinct machine code of every block, as BasicBlock.machine_code will hold it, and
        of each block with its context before it (BasicBlock.machine_context + machine_code)."""
        out = set()
        for d in self.functions:
            for name, code in (d.machine or {}).items():
                if code:
                    out.add(tuple(code))
                    if d.context.get(name) in d.machine:
                        out.add(tuple(d.machine[d.context[name]]) + tuple(code))
        return out


def _source_lines(ir: str) -> dict[str, int]:
    """Debug location id → the line in the analysed function: code inlined from elsewhere (a
    header's `operator[]`) counts at the call site it was inlined into, outermost first."""
    own: dict[str, tuple[int, str | None]] = {m.group(1): (int(m.group(2)), m.group(3))
                                               for m in _DILOCATION.finditer(ir)}
    lines: dict[str, int] = {}
    for location in own:
        line, inlined_at, seen = *own[location], {location}
        while inlined_at is not None and inlined_at in own and inlined_at not in seen:
            seen.add(inlined_at)
            line, inlined_at = own[inlined_at]
        lines[location] = line
    return lines


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


# Linkages of functions a header defines inline: emitted wherever they are used, not the file's own.
_EMITTED_WHERE_USED = {"linkonce", "linkonce_odr", "weak_odr", "available_externally"}


def parse_module(module: ModuleText, main_file: str | None = None) -> ParsedModule:
    """Parse the module; with `main_file`, keep only functions whose debug info places them in
    that file (not inline functions from headers). Raises IRNotReadable."""
    # LLVM prints what it parsed in one layout, the one the text reader reads; its metadata ids
    # (and so the !dbg of each instruction) are those of this text, not always of the input's.
    text = str(_parse_assembly(module.ir))
    subprograms = _subprogram_info(text)
    fn_subprogram = {m.group(1).strip('"'): m.group(2) for m in _DEFINE_DBG.finditer(text)}
    machine = _machine_code(module.assembly) if module.assembly else {}
    kept, from_headers = [], []
    for fn in llvm_text.read_module(text).functions:
        if fn.is_declaration:
            continue
        name, line, defined_in = subprograms.get(fn_subprogram.get(fn.name, ""), ("", None, None))
        notes: list[str] = []
        own = not main_file or (defined_in is not None and os.path.basename(defined_in) == main_file)
        if not own and (defined_in is None or fn.linkage in _EMITTED_WHERE_USED):
            continue  # compiler-generated (no debug info of its own), or a header's inline function
        grouped = _machine_per_ir_block(machine.get(fn.name), {name for name, _ in fn.blocks}, notes)
        contexts = _contexts(fn.predecessors, module.analyses.get(fn.name)) if grouped else {}
        (kept if own else from_headers).append(_Defined(fn, (name, line), grouped, notes, contexts,
                                                        None if own else defined_in))
    # A file that defines nothing itself but a single-header library's implementation
    # (`#define STB_IMAGE_IMPLEMENTATION` then `#include "stb_image.h"`): its functions are the
    # header's, brought into existence by the file.
    kept = kept or from_headers
    return ParsedModule(module, kept, _source_lines(text), global_sizes(text), _allocators(text))


_ATTRIBUTE_GROUP = re.compile(r"^attributes #(\d+) = \{(.*)\}$", re.M)
_FUNCTION_HEAD = re.compile(r"^(?:declare|define) [^\n]*?@(\"[^\"]+\"|[-\w.$]+)\(([^\n]*)$", re.M)
_ALLOCKIND = re.compile(r'allockind\("([^"]*)"\)')


def _contexts(predecessors: dict[str, list[str]], analyses: FunctionAnalyses | None) -> dict[str, str]:
    """Block → the one block that runs before it in the same iteration of its innermost loop (its
    only predecessor there, not a loop header's back edge). llvm-mca repeats a block alone as if
    it were a loop body, so a register the block before defines looks carried from the block's
    own previous run: `if (a[i] > b[i]) { s = a[i] - …; }` becomes a chain through `s` that no
    iteration waits for. Simulated after that block, the chain starts afresh each time."""
    if analyses is None:
        return {}
    innermost: dict[str, str] = {}
    for header, record in sorted(analyses.loops.items(), key=lambda item: item[1].depth):
        innermost.update(dict.fromkeys(record.blocks, header))
    out = {}
    for block, preds in predecessors.items():
        loop = innermost.get(block)
        inside = [p for p in preds if innermost.get(p) == loop]
        if loop is not None and block != loop and len(inside) == 1 and inside[0] != block:
            out[block] = inside[0]
    return out


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
    fn, machine, context, subprogram = defined.fn, defined.machine, defined.context, defined.subprogram
    file = defined.header or request.file
    assumptions = list(defined.notes) + ([f"defined by {os.path.basename(defined.header)}, whose implementation "
                                          f"{os.path.basename(request.file)} includes"] if defined.header else [])
    language, arch, default_trip_count = request.language, request.arch, request.default_trip_count
    early_exit, loop_bounds, dilocation_lines = request.early_exit, request.loop_bounds, parsed.dilocation_lines
    analyses = parsed.module.analyses.get(fn.name, FunctionAnalyses())
    reading = _Reading(ValueMemo(), budget, parsed.global_bytes)
    arguments = [(name, type_text) for name, type_text in fn.arguments if name]
    parameters = [name for name, _ in arguments]
    block_loop = {}
    for loop in sorted(analyses.loops.values(), key=lambda l: l.depth):
        for name in loop.blocks:
            block_loop[name] = loop.header  # deeper loops overwrite: innermost wins
    ancestors = {h: _ancestors(h, analyses) for h in analyses.loops}
    blocks: list[BasicBlock] = []
    lines_seen: list[int] = []
    body = fn.blocks
    dbg_ids = [i.dbg for _, instrs in body for i in instrs]
    load_pointers = {i.name: i.operands[0].name for _, instrs in body for i in instrs
                     if i.opcode == "load" and i.name}
    loaded = set(load_pointers)
    bases = {name for name, type_text in arguments if type_text == "ptr"} | loaded  # what arrays start at
    loop_defined = {i.name: block_loop.get(bb) for bb, instrs in body for i in instrs if i.name}
    symbols_by_loop: dict[str | None, set[str]] = {}  # parameters + loads invariant in that loop
    definitions = {i.name: i for _, instrs in body for i in instrs if i.name}
    reading.definitions, reading.allocators = definitions, parsed.allocators
    substituted = _named_loads(analyses, set(parameters), body, definitions, dbg_ids, dilocation_lines,
                               loop_bounds, assumptions)
    reading.block_of = {i.name: bb for bb, instrs in body for i in instrs if i.name}
    reading.instructions = dict(body)
    reading.parameters = parameters
    reading.data_symbols = _data_named_loads(analyses, definitions, reading.block_of, set(parameters), substituted,
                                             assumptions) | {s for v in substituted.values() for s in v.symbols}
    terminators = {name: instrs[-1] for name, instrs in body if instrs}
    never_vectorised = _checked_overlaps(analyses, parameters, body, definitions, terminators, substituted,
                                         reading, assumptions)
    position = -1
    for bb_name, instrs in body:
        loop_id = block_loop.get(bb_name)
        code = tuple(machine.get(bb_name, ())) if machine is not None else None
        block = BasicBlock(bb_name, loop_id, machine_instructions=len(code) if code is not None else None,
                           machine_code=code or (), machine_context=tuple(machine.get(context.get(bb_name), ()))
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
            width, elem_bits = _type_bits(type_text if opcode not in ("icmp", "fcmp") else instr.operands[0].type_text)
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
                                        analyses, symbols_by_loop[loop_id], loaded, load_pointers, bases, substituted,
                                        reading)
            bulk = _bulk_bytes(instr, callee, analyses, symbols_by_loop.get(loop_id, set(parameters)),
                               ancestors.get(loop_id, set()) | ({loop_id} if loop_id else set()), substituted,
                               reading) if callee in _BULK else None
            data_dependent = opcode == "br" and _branches_on_loaded_data(instr, loop_id, block_loop, analyses,
                                                                          definitions, loop_defined, loaded, budget)
            block.instructions.append(Instruction(with_vector(cls, width), line, opcode, callee, access, divisor,
                                                  data_dependent, bulk))
        blocks.append(block)
    entries = _weigh_data_branches(blocks, body, terminators, block_loop, analyses, definitions, loop_defined, loaded,
                                   budget)
    loops = {}
    defined_in = {i.name: name for name, instrs in body for i in instrs if i.name}  # value -> its block
    stopped: list[int | None] = []  # lines of the loops left unread once the budget ran out
    for header, record in analyses.loops.items():
        header_line = next((i.line for b in blocks if b.name == header for i in b.instructions if i.line), None)
        try:
            budget.spend()
            trip = (_halving_trip(record, body, definitions, analyses, set(parameters), assumptions)
                    or _trip_count(record, analyses, set(parameters), ancestors[header], default_trip_count,
                                   early_exit, assumptions, substituted, terminators, reading))
        except BudgetExhausted:
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
            assumptions.append(f"loop %{header}: the vectorizer's copy for overlapping arrays, entered only when a "
                               f"run-time alias check finds an overlap: taken as not run (the arrays assumed apart)")
        try:
            independent = _independent_entries(record, analyses, body, definitions, defined_in, budget)
        except (BudgetExhausted, RecursionError):  # over budget, or a chain of values too long to follow
            independent = False  # the cautious answer: entries not overlapped
        loops[header] = Loop(header, record.parent, record.depth, trip, header_line, independent,
                             entries.get(header, Fraction(1)))
    assumptions.extend(share_unknown_nests(loops, default_trip_count))
    if budget.exhausted:
        assumptions.append(_stopped_note(budget, stopped, default_trip_count))
    speech = _Speech({header: loop.line for header, loop in loops.items() if loop.line},
                     _value_lines(body, dbg_ids, dilocation_lines), loaded, set(parameters))
    assumptions[:] = [speech.text(note) for note in assumptions]
    name, line = subprogram
    return FunctionIR(
        name=fn.name, display_name=name or fn.name, file=file,
        line=line or (min(lines_seen) if lines_seen else None),
        end_line=max(lines_seen) if lines_seen else line, language=language, arch=arch,
        parameters=parameters, blocks=blocks, loops=loops, assumptions=assumptions, ir_text=fn.text,
        stopped_on_time=budget.over_time, field_symbols=_field_symbols(substituted, definitions, set(parameters)),
    )


_FIELD_ADDRESS = re.compile(r"= getelementptr (?:inbounds )?i8, ptr %(?P<base>\"[^\"]+\"|[-\w.$]+), i64 (?P<offset>\d+)(?:,|$)")


def _field_symbols(substituted: dict[str, Polynomial], definitions: dict, parameters: set[str]) -> dict[str, tuple[str, int, int]]:
    """The sizes named after a load through a pointer parameter at a constant offset
    (`params->depth`), with where they are read: symbol → (parameter, byte offset, bits)."""
    out: dict[str, tuple[str, int, int]] = {}
    for value, size in substituted.items():
        load = definitions.get(value)
        if load is None or load.opcode != "load" or len(size.symbols) != 1 or size != Polynomial.symbol(next(iter(size.symbols))):
            continue
        bits = re.fullmatch(r"i(\d+)", load.type_text)
        pointer = load.operands[0].name
        if bits is None:
            continue
        if pointer in parameters:
            out[next(iter(size.symbols))] = (pointer, 0, int(bits[1]))
        elif (gep := definitions.get(pointer)) is not None and (m := _FIELD_ADDRESS.search(gep.text)) \
                and m["base"].strip('"') in parameters:
            out[next(iter(size.symbols))] = (m["base"].strip('"'), int(m["offset"]), int(bits[1]))
    return out


def _weigh_data_branches(blocks: list[BasicBlock], body: list, terminators: dict, block_loop: dict[str, str],
                         analyses: FunctionAnalyses, definitions: dict, loop_defined: dict[str, str | None],
                         loaded: set[str], budget: ReadingBudget) -> dict[str, Fraction]:
    """Sets each block's share of its loop's iterations where a branch on loaded data decides
    whether it runs (`readers.block_frequency`, with LLVM's static branch probabilities); each
    loop's entries per iteration of its parent, the same way."""
    data = {name for name, terminator in terminators.items()
            if _decides_on_loaded_data(terminator, block_loop.get(name), analyses, definitions, loop_defined, loaded,
                                       budget)}
    if not data:
        return {}
    shares, entries = block_frequencies([name for name, _ in body], {b: _successors(t) for b, t in terminators.items()},
                                        {h: (r.blocks, r.parent) for h, r in analyses.loops.items()},
                                        {edge: p for edge, p in analyses.edge_probabilities.items() if edge[0] in data})
    for block in blocks:
        block.frequency = shares.get(block.name, block.frequency)
    return entries


@dataclass
class _Reading:
    """What the analyses of one function share: resolved SCEV values and the budget."""

    memo: ValueMemo
    budget: ReadingBudget
    global_bytes: dict[str, int] = field(default_factory=dict)  # each global array's size (`global_sizes`)
    definitions: dict = field(default_factory=dict)  # value name → its instruction
    allocators: frozenset[str] = frozenset()  # `ParsedModule.allocators`
    block_of: dict[str, str] = field(default_factory=dict)  # value name → its block
    instructions: dict[str, list] = field(default_factory=dict)  # block → its instructions
    parameters: list[str] = field(default_factory=list)  # the function's arguments
    data_symbols: set[str] = field(default_factory=set)  # sizes named after data (`a->count`, `strlen(s)`)


_IR_NAME = re.compile(r'(loop )?%("[^"]+"|[-\w.$]+)')


@dataclass
class _Speech:
    """The reader's notes in the source's terms: a loop by its line, a value by the line it is
    read or computed at, an argument by its name. A name without a line (IR without debug
    information: the user's own .ll) stays as it is."""

    loop_lines: dict[str, int]  # header → line
    value_lines: dict[str, int]
    loaded: set[str]
    parameters: set[str]

    def text(self, note: str) -> str:
        return _IR_NAME.sub(self._say, note)

    def _say(self, m: re.Match) -> str:
        loop, name, trail = m.group(1) or "", m.group(2).strip('"'), ""
        while name.endswith(".") and not self._known(name):  # a sentence's full stop
            name, trail = name[:-1], trail + "."
        if name in self.loop_lines:
            return f"{'loop' if loop else 'the loop'} at line {self.loop_lines[name]}{trail}"
        if name in self.parameters:
            return f"{loop}{name}{trail}"
        if name in self.value_lines:
            how = "read" if name in self.loaded else "computed"
            return f"{loop}the value {how} at line {self.value_lines[name]}{trail}"
        return m.group(0)

    def _known(self, name: str) -> bool:
        return name in self.loop_lines or name in self.parameters or name in self.value_lines


def _value_lines(body: list, dbg_ids: list[str | None], dilocation_lines: dict[str, int]) -> dict[str, int]:
    """The source line of each named value: its own, else its block's first (a phi has none)."""
    blocks = _first_lines(body, dbg_ids, dilocation_lines)
    out: dict[str, int] = {}
    for block, instr, line in _instruction_lines(body, dbg_ids, dilocation_lines):
        if instr.name and (line or block in blocks):
            out[instr.name] = line or blocks[block]
    return out


def _stopped_note(budget: ReadingBudget, stopped_lines: list[int | None], default_trip_count: int) -> str:
    """The assumption of a function whose reading ran out of budget."""
    where = ("the loops at " + ", ".join(f"line {line}" if line else "an unknown line"
                                         for line in sorted(stopped_lines, key=lambda l: l or 0))
             if stopped_lines else "none of its loops")
    return (f"analysis stopped after {budget.elapsed_seconds() * 1000:.0f} ms ({budget.steps} steps, over its "
            f"budget): loop trip counts in {where} assumed {default_trip_count}; memory accesses and branches "
            "read after that taken as unknown")


def _branches_on_loaded_data(instr, loop_id: str | None, block_loop: dict[str, str], analyses: FunctionAnalyses,
                             definitions: dict, loop_defined: dict[str, str | None], loaded: set[str],
                             budget: ReadingBudget) -> bool:
    """A conditional branch inside a loop, both of whose targets stay in that loop, deciding on a
    value loaded in the loop (``if (a[i] > t)``): its direction follows the data, so the
    predictor may miss. Loop exits are excluded: they go one way until the last iteration.
    Past the budget: False (not known to follow the data)."""
    operands = instr.operands
    if loop_id is None or len(operands) != 3 or budget.exhausted:
        return False
    targets = [op.name for op in operands[1:]]
    if not all(_inside(block_loop.get(t), loop_id, analyses) for t in targets):
        return False
    return _loaded_in_loop(operands[0].name, loop_id, analyses, definitions, loop_defined, loaded, budget)


def _decides_on_loaded_data(terminator, loop_id: str | None, analyses: FunctionAnalyses, definitions: dict,
                            loop_defined: dict[str, str | None], loaded: set[str], budget: ReadingBudget) -> bool:
    """A conditional branch or switch in a loop whose condition is computed from a value loaded
    in that loop: the share of iterations on each side follows the data."""
    if loop_id is None or terminator.opcode not in ("br", "switch") or len(terminator.operands) < 3:
        return False  # outside loops, what is loaded is sizes and state more than data
    return _loaded_in_loop(terminator.operands[0].name, loop_id, analyses, definitions, loop_defined, loaded, budget)


def _loaded_in_loop(condition: str, loop_id: str, analyses: FunctionAnalyses, definitions: dict,
                    loop_defined: dict[str, str | None], loaded: set[str], budget: ReadingBudget) -> bool:
    """Whether `condition` is computed, within the loop, from a value loaded there. Past the
    budget: False (not known to follow the data)."""
    pending, seen = [condition], set()
    while pending:  # the condition and what it is computed from, within the loop
        try:
            budget.spend()
        except BudgetExhausted:
            return False
        name = pending.pop()
        if not name or name in seen or not _inside(loop_defined.get(name), loop_id, analyses):
            continue
        seen.add(name)
        if name in loaded:
            return True
        definition = definitions.get(name)
        if definition is not None and definition.opcode != "phi":
            pending.extend(op.name for op in definition.operands)
    return False


def _inside(defined_loop: str | None, loop_id: str | None, analyses: FunctionAnalyses) -> bool:
    """Whether a value defined in `defined_loop` may change across iterations of `loop_id`."""
    while defined_loop is not None:
        if defined_loop == loop_id:
            return True
        defined_loop = analyses.loops[defined_loop].parent if defined_loop in analyses.loops else None
    return False


def _divisor_kind(operand: Operand, loop_id: str | None, loop_defined: dict[str, str | None]) -> str:
    text = operand.text
    lanes = re.findall(r"(?:i\d+|float|double|half) (-?[\d.e+]+|0x[0-9A-Fa-f]+)", text)
    if not operand.name and (lanes or re.fullmatch(r"(?:i\d+|float|double|half|<.*>) .*", text)):
        values = [v for v in lanes if re.fullmatch(r"-?\d+", v)]
        if values and all(int(v) > 0 and int(v) & (int(v) - 1) == 0 for v in values):
            return "power-of-two"
        return "constant"
    if loop_id is None or loop_defined.get(operand.name) is None:
        return "loop-invariant"
    return "variant"


def _ancestors(header: str, analyses: FunctionAnalyses) -> set[str]:
    out, parent = set(), analyses.loops[header].parent
    while parent:
        out.add(parent)
        parent = analyses.loops[parent].parent
    return out


_HALVING = re.compile(r"^%(?P<name>[-\w.$]+) = (?:lshr|ashr|udiv|sdiv)(?: exact)? i\d+ %(?P<phi>[-\w.$]+), (?P<k>\d+)$")
_GROWING = re.compile(r"^%(?P<name>[-\w.$]+) = (?:shl|mul)(?: nuw)?(?: nsw)? i\d+ %(?P<phi>[-\w.$]+), (?P<k>\d+)$")
_COMPARE = re.compile(r"= icmp \w+ i\d+ %?(?P<a>[-\w.$]+), %?(?P<b>[-\w.$]+)$")


def _halving_trip(record, body: list, definitions: dict, analyses: FunctionAnalyses, parameters: set[str],
                  assumptions: list[str]) -> TripCount | None:
    """Logarithmic loops ScalarEvolution has no closed form for: ``while (x > 1) x >>= k`` or
    ``x /= c`` runs about log_c(x₀) times (its start linear in one parameter), and
    ``for (i = 1; i < n; i *= c)`` about log_c(n) (its bound linear in one parameter). The
    result is symbolic in ``log2(param)``, scaled by 1 / log2(c)."""
    if record.backedge_taken and UNKNOWN_SCEV not in record.backedge_taken:
        return None
    header = next((instrs for name, instrs in body if name == record.header), None)
    if header is None:
        return None
    inside = set(record.blocks)
    for instr in header:
        if instr.opcode != "phi":
            continue
        pairs = _PHI_INCOMING.findall(instr.text)
        step = [v for v, block in pairs if block in inside]
        start = [v for v, block in pairs if block not in inside]
        if len(step) != 1 or len(start) != 1:
            continue
        step_text = definitions[step[0]].text.split(", !")[0] if step[0] in definitions else ""  # without metadata
        shrinking, growing = _HALVING.match(step_text), _GROWING.match(step_text)
        m = shrinking or growing
        if not m or m["phi"] != instr.name or int(m["k"]) < 1:
            continue
        k = int(m["k"])
        bits = k if ("shr" in step_text or "shl" in step_text) else math.log2(k) if k >= 2 else 0.0
        if bits <= 0:
            continue
        if shrinking:
            symbol = _log2_symbol(start[0], analyses, parameters)
            how = f"divided by {2 ** k if 'shr' in step_text else k} each iteration"
        else:
            symbol = _growth_bound(instr.name, step[0], record, body, analyses, parameters)
            how = f"multiplied by {2 ** k if 'shl' in step_text else k} each iteration until it reaches the bound"
        if symbol is None:
            continue
        iterations = Polynomial.symbol(symbol) * Fraction(1 / bits).limit_denominator(1000)
        assumptions.append(f"loop %{record.header}: %{instr.name} is {how}; trip count taken as {iterations}")
        return TripCount("bounded", iterations, record.backedge_taken or "")
    return None


def _growth_bound(phi: str, step: str, record, body: list, analyses: FunctionAnalyses,
                  parameters: set[str]) -> str | None:
    """``log2(n)`` for the bound a growing index is compared with in its loop (`i < n`)."""
    inside = set(record.blocks)
    for name, instrs in body:
        if name not in inside:
            continue
        for instr in instrs:
            m = _COMPARE.search(instr.text.split(", !")[0]) if instr.opcode == "icmp" else None
            if m and {m["a"], m["b"]} & {phi, step}:
                other = m["b"] if m["a"] in (phi, step) else m["a"]
                symbol = _log2_symbol(other, analyses, parameters)
                if symbol is not None:
                    return symbol
    return None


_PHI_INCOMING = re.compile(r"\[\s*%?([-\w.$]+),\s*%([-\w.$]+)\s*\]")


def _independent_entries(record, analyses: FunctionAnalyses, body: list, definitions: dict,
                         defined_in: dict[str, str], budget: ReadingBudget) -> bool:
    """Whether no value this loop carries starts from what an enclosing loop carried out of the
    loop's previous entry (``p = c[0]`` per point: independent; ``h`` hashed on across rows:
    not). Top-level loops say no: their entries are calls, which this function cannot see."""
    if record.parent is None:
        return False
    inside = set(record.blocks)
    outer = set(analyses.loops[record.parent].blocks)
    headers = {r.header: r for r in analyses.loops.values() if r.header != record.header}

    def reaches_inside(name: str, seen: set[str]) -> bool:
        """Whether `name` is computed (within the enclosing loop) from a value of this loop."""
        if not name or name in seen or defined_in.get(name) not in outer:
            return False
        budget.spend()
        seen.add(name)
        if defined_in[name] in inside:
            return True
        definition = definitions.get(name)
        return definition is not None and any(reaches_inside(op.name, seen) for op in definition.operands)

    def carried_from_before(name: str, seen: set[str]) -> bool:
        """Whether a start value depends on an enclosing loop's phi fed by this loop."""
        if not name or name in seen or defined_in.get(name) not in outer:
            return False
        budget.spend()
        seen.add(name)
        definition = definitions.get(name)
        if definition is None:
            return False
        block = defined_in[name]
        if definition.opcode == "phi" and block in headers:
            loop_blocks = set(headers[block].blocks)
            back = [v for v, b in _PHI_INCOMING.findall(definition.text) if b in loop_blocks]
            if any(reaches_inside(v, set()) for v in back):
                return True
        return any(carried_from_before(op.name, seen) for op in definition.operands)

    header = next((instrs for name, instrs in body if name == record.header), [])
    for phi in (i for i in header if i.opcode == "phi"):
        starts = [v for v, b in _PHI_INCOMING.findall(phi.text) if b not in inside]
        if any(carried_from_before(v, set()) for v in starts):
            return False
    return True


def _log2_symbol(start: str, analyses: FunctionAnalyses, parameters: set[str]) -> str | None:
    """``log2(n)`` when the start value is n (+ constants or outer-loop indices, which are
    dropped: they shift log₂ little when n dominates)."""
    if start in parameters:
        return f"{LOG2_PREFIX}{start})"
    scev = analyses.value_scevs.get(start)
    if scev is None:
        return None
    named = set(re.findall(r"%([-\w.$]+)", scev))
    params = named & parameters
    if len(params) != 1:
        return None
    return f"{LOG2_PREFIX}{params.pop()})"


def _first_lines(body: list, dbg_ids: list[str | None], dilocation_lines: dict[str, int]) -> dict[str, int]:
    """The first source line of each block."""
    out: dict[str, int] = {}
    for name, _, line in _instruction_lines(body, dbg_ids, dilocation_lines):
        if name not in out and line:
            out[name] = line
    return out


def _instruction_lines(body: list, dbg_ids: list[str | None], dilocation_lines: dict[str, int]):
    """(block, instruction, source line or None) in order (instructions are numbered as
    `dbg_ids` lists them)."""
    position = -1
    for block, instrs in body:
        for instr in instrs:
            position += 1
            dbg_id = dbg_ids[position] if position < len(dbg_ids) else None
            yield block, instr, dilocation_lines.get(dbg_id) if dbg_id else None


def _named_loads(analyses: FunctionAnalyses, parameters: set[str], body: list, definitions: dict,
                 dbg_ids: list[str | None], dilocation_lines: dict[str, int], loop_bounds: Sequence[LoopBound],
                 assumptions: list[str]) -> dict[str, Polynomial]:
    """Loop bounds the IR reads from memory before the loop (`this->n`, `m->rows`, a global
    `N`, a vector's size): a value that alone decides a loop's trip count is read as a symbol
    named after what the loop's condition compares with in the source (`i < n` -> `n`); a
    range-for's begin and end pointers as 0 and its container's `size()` elements. The loop is
    matched by its first line and its depth; no name, no symbol (the trip count stays unknown)."""
    if not loop_bounds or not analyses.loops:
        return {}
    first_lines = _first_lines(body, dbg_ids, dilocation_lines)
    fixed = {i.name: bb for bb, instrs in body for i in instrs
             if i.name and (i.opcode == "load" and _fixed_address(i.operands[0], parameters, definitions)
                            or _element_count(i, parameters, definitions))}
    names: dict[str, Polynomial] = {}
    for record in sorted(analyses.loops.values(), key=lambda r: r.depth):
        # Read before this loop (an outer loop may read it again per iteration: `cols` per row).
        invariant = {v for v, bb in fixed.items() if bb not in record.blocks}
        used = {v for v in re.findall(r"%([-\w.$]+)", record.backedge_taken or "") if v in invariant}
        line = first_lines.get(record.header)
        if not used or line is None or used <= set(names):
            continue
        spelled = [b for b in loop_bounds if b.start_line <= line <= b.end_line and b.depth == record.depth]
        bound = spelled[-1].bound if spelled else None
        if not bound or bound in parameters or Polynomial.symbol(bound) in names.values():
            continue
        where = f"as the source names it at line {spelled[-1].start_line}"
        if len(used) == 1 and definitions[next(iter(used))].type_text != "ptr":  # a pointer is no count
            (value,) = used
            names[value] = Polynomial.symbol(bound)
            assumptions.append(f"loop bound %{value} is read from memory before the loops: kept symbolic as "
                               f"`{bound}`, {where}")
        elif bound.endswith(".size()") and (pair := _begin_end(record.backedge_taken or "", used, definitions)):
            begin, end, element = pair
            names[begin], names[end] = Polynomial(), Polynomial.symbol(bound) * element
            assumptions.append(f"loop over %{begin} … %{end} (a container's begin and end, read before the loop): "
                               f"kept symbolic as `{bound}` elements of {element} bytes, {where}")
    return names


# (-8 + (-1 * (ptrtoint ptr %begin to i64)) + (ptrtoint ptr %end to i64)) /u 8: a range-for's count
_BEGIN_END = re.compile(r"\(-(?P<e>\d+) \+ \(-1 \* \(ptrtoint ptr %(?P<begin>[-\w.$]+) to i64\)\) \+ "
                        r"\(ptrtoint ptr %(?P<end>[-\w.$]+) to i64\)\) /u (?P<e2>\d+)")


def _begin_end(scev: str, used: set[str], definitions: dict) -> tuple[str, str, int] | None:
    """(begin, end, element bytes) when a trip count walks from one pointer read before the loop
    to another read from 8 bytes further in the same object (std::vector's _M_start, _M_finish)."""
    m = _BEGIN_END.search(scev)
    if m is None or m["e"] != m["e2"] or {m["begin"], m["end"]} != used:
        return None
    begin, end = definitions.get(m["begin"]), definitions.get(m["end"])
    if begin is None or end is None:
        return None
    base = begin.operands[0].name
    gep = definitions.get(end.operands[0].name)
    if gep is None or gep.opcode != "getelementptr" or gep.operands[0].name != base \
            or not re.search(r", i64 8$", gep.text.split(", !")[0]):
        return None
    return m["begin"], m["end"], int(m["e"])


def _element_count(instr: IRInstruction, parameters: set[str], definitions: dict) -> bool:
    """`(end - begin) >> 3` of two pointers read from fixed addresses: a container's size in
    elements (std::vector's `size()`: `_M_finish - _M_start`), which ScalarEvolution keeps opaque."""
    if instr.opcode not in ("ashr", "lshr", "sdiv", "udiv") or " exact " not in instr.text:
        return False
    difference = definitions.get(instr.operands[0].name)
    if difference is None or difference.opcode != "sub":
        return False
    for operand in difference.operands:
        cast = definitions.get(operand.name)
        load = definitions.get(cast.operands[0].name) if cast is not None and cast.opcode == "ptrtoint" else None
        if load is None or load.opcode != "load" or not _fixed_address(load.operands[0], parameters, definitions):
            return False
    return True


def _fixed_address(pointer: Operand, parameters: set[str], definitions: dict) -> bool:
    """A pointer argument, a global, or a constant offset from a pointer argument: memory a
    function reads its sizes from (a field of `this`, a global `N`)."""
    if pointer.name in parameters or pointer.is_global_variable:
        return True
    gep = definitions.get(pointer.name)
    return (gep is not None and gep.opcode == "getelementptr" and gep.operands[0].name in parameters
            and all(not op.name for op in gep.operands[1:]))


def _scev_context(analyses: FunctionAnalyses, parameters: set[str], enclosing: set[str],
                  substituted: dict[str, Polynomial], reading: _Reading, addresses: bool = False) -> ScevContext:
    """A converter for one loop's SCEV text with everything the function's analyses know, and
    the values already resolved in the function under the same parameters and loops.
    `addresses`: for an access's address, where a global array's address is its base."""
    return ScevContext(parameters, analyses.value_scevs, analyses.phi_incoming, enclosing,
                       low_bits_set=analyses.low_bits_set, small_ranges=analyses.small_ranges,
                       substituted=substituted, memo=reading.memo.table(parameters, enclosing, addresses),
                       budget=reading.budget, global_bases=addresses)


def _trip_count(record, analyses: FunctionAnalyses, parameters: set[str], enclosing: set[str],
                default_trip_count: int, early_exit: str, assumptions: list[str],
                substituted: dict[str, Polynomial], terminators: dict, reading: _Reading) -> TripCount:
    """`terminators`: each block's last instruction, to tell early exits from error paths.
    Raises BudgetExhausted when the function's budget runs out."""
    text = record.backedge_taken or ""
    ctx = _scev_context(analyses, parameters, enclosing, substituted, reading)
    if text:
        try:
            iterations = to_polynomial(text, ctx) + 1
            if (few := iterations.constant_value()) is not None and few <= 1 and "max" in text and "%" in text:
                # max(c, s) − s read as s − s: the constant was the bound (`for (i = n1 - 1; i < 32000;
                # …)`). Not for a remainder loop, whose start is where the main loop ended.
                again = replace(ctx, max_takes_constant=True, assumptions=[], memo=ValueTable())
                counted = to_polynomial(text, again) + 1
                if not again.read_phi_merge:
                    ctx, iterations = again, counted
            for note in dict.fromkeys(ctx.assumptions):
                assumptions.append(f"loop %{record.header}: {note}")
            if (most := _at_most_at_zero_sizes(iterations, record.header, assumptions)) is not None:
                return TripCount("bounded", most, text)
            kind = "constant" if iterations.constant_value() is not None else \
                "data" if iterations.symbols & reading.data_symbols else "symbolic"
            return TripCount(kind, iterations, text)
        except NotPolynomial as why:
            reason = str(why)
    else:
        reason = "ScalarEvolution cannot predict it"
    # An exit that depends on data (a search, a break): ScalarEvolution still knows how often
    # the loop can run at most; the policy takes that bound or the mean exit, and says so.
    bound_text = record.symbolic_max_backedge_taken or ""
    if bound_text and UNKNOWN_SCEV not in bound_text:
        ctx.assumptions.clear()
        try:
            bound = to_polynomial(bound_text, ctx) + 1
        except NotPolynomial:
            bound = None
        if bound is not None and (most := _at_most_at_zero_sizes(bound, record.header, assumptions)) is not None:
            bound = most
        limit = bound.constant_value() if bound is not None else None
        if bound is not None and (limit is None or 0 < limit < 1 << 20):
            if failing := _leaves_early_only_to_fail(record, terminators, reading):
                assumptions.append(f"loop %{record.header}: its other exits {failing}: taken as not taken, so it "
                                   f"runs to its bound {spoken(bound)}")
                return TripCount("bounded", bound, bound_text)
            trip, how = early_exit_trip(bound, early_exit, bound_text, spoken)
            assumptions.append(f"loop %{record.header}: trip count depends on data ({reason}); {how}")
            return trip
    most = record.constant_max_backedge_taken
    if most is not None and most < 1 << 20:
        bound = most + 1
        if not _range_of_run_time_values(bound_text):
            assumptions.append(f"loop %{record.header}: trip count unknown ({reason}); using its maximum {bound}")
            return TripCount("bounded", Polynomial.constant(bound), text)
        if bound <= default_trip_count:  # a worst case below what a loop without one is assumed to run
            assumptions.append(f"loop %{record.header}: trip count unknown ({reason}); at most {bound} (what the "
                               f"types of the values it depends on allow), taken as {bound}")
            return TripCount("bounded", Polynomial.constant(bound), text)
        # e.g. 16383 for `len / 4` of a loaded unsigned short that is really at most 15: a type's
        # maximum, larger than any default, says nothing of how often the loop runs
        reason += f"; its maximum {bound} is only the range of a run-time value's type, not a count"
    if (walked := _walk_trip(record, parameters, analyses, early_exit, assumptions, terminators, reading)) is not None:
        return walked
    if (merged := _merged_counter_trip(record, analyses, terminators, reading)) is not None:
        assumptions.append(f"loop %{record.header}: its counter is stepped on each path through the body (the "
                           f"copies merge before the exit test): {spoken(merged)} iterations")
        return TripCount("constant", merged, text)
    if (most := _run_time_step_trip(record, analyses, terminators, reading, ctx)) is not None:
        assumptions.append(f"loop %{record.header}: its counter steps by a value the loop does not change, known "
                           f"only at run time: at most {spoken(most)} iterations (a step of 1), taken as that")
        return TripCount("bounded", most, text)
    assumptions.append(f"loop %{record.header}: trip count unknown ({reason}); assuming {default_trip_count}")
    return TripCount("unknown", Polynomial.constant(default_trip_count), text)


def _data_named_loads(analyses: FunctionAnalyses, definitions: dict, block_of: dict[str, str], parameters: set[str],
                      substituted: dict[str, Polynomial], assumptions: list[str]) -> set[str]:
    """Counts read from memory before their loop that the source did not name in the loop's
    header (`while (i < a->count)`, a bound of a search): named from the IR (`a->count`) and
    kept symbolic in `substituted`. The names given."""
    given: set[str] = set()
    for record in sorted(analyses.loops.values(), key=lambda r: r.depth):
        for value, name in data_walks.named_loads(record, definitions, block_of, parameters, substituted).items():
            substituted[value] = Polynomial.symbol(name)
            given.add(name)
            assumptions.append(f"loop %{record.header}: its bound reads `{name}` from memory before the loop: "
                               f"kept symbolic as `{name}`")
    return given


def _walk_trip(record, parameters: set[str], analyses: FunctionAnalyses, early_exit: str, assumptions: list[str],
               terminators: dict, reading: _Reading) -> TripCount | None:
    """A loop that ends on data it walks (`ccls.readers.data_walks`): its count in the named size
    (`strlen(s) + 1`, kind `data`), or, where it may also leave on other data (a mismatch of two
    strings), the early-exit policy's count with that as its bound."""
    reading.budget.spend()
    walk = data_walks.data_walk(record, reading.definitions, reading.block_of, reading.instructions, parameters,
                                analyses.value_scevs, terminators)
    if walk is None:
        return None
    if (most := _at_most_at_zero_sizes(walk.iterations, record.header, assumptions)) is not None:
        assumptions.append(f"loop %{record.header}: {walk.what}")  # `19 - s->have`: at most 19
        return TripCount("bounded", most, record.backedge_taken or "")
    reading.data_symbols.add(walk.symbol)
    if walk.at_most:
        assumptions.append(f"loop %{record.header}: {walk.what}: {spoken(walk.iterations)} iterations")
        return TripCount("bounded", walk.iterations, record.backedge_taken or "")
    inside = set(record.blocks)
    others = [(block, target) for block in record.blocks if block in terminators
              for target in _successors(terminators[block])
              if target not in inside and (block, target) != (walk.exit_block, walk.exit_target)]
    ordinary = [(b, t) for b, t in others
                if not _never_returns(t, terminators) and not _on_allocation_failure(terminators[b], t, reading)]
    named = f"kept symbolic as `{walk.symbol}` (set it with --param '{walk.symbol}=N')"
    if not ordinary:
        assumptions.append(f"loop %{record.header}: {walk.what}: {spoken(walk.iterations)} iterations, {named}")
        return TripCount("data", walk.iterations, record.backedge_taken or "")
    trip, how = early_exit_trip(walk.iterations, early_exit, record.backedge_taken or "", spoken)
    assumptions.append(f"loop %{record.header}: {walk.what}, or leaves earlier on other data; at most "
                       f"{spoken(walk.iterations)} iterations, {named}; {how}")
    return trip


_COMPARE_CONSTANT = re.compile(r"= icmp (?P<predicate>eq|ne|slt|ult) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), "
                               r"(?P<bound>-?\d+)\s*(?:,|$)")
_STEP_FROM = re.compile(r"^\((?P<step>\d+) \+ %(?P<counter>\"[^\"]+\"|[-\w.$]+)\)(?:<[a-z]+>)*$")


def _exit_test(record, terminators: dict, reading: _Reading) -> tuple[re.Match | None, object | None]:
    """The branch of a loop's only exiting block and the `icmp` it tests, where there is one."""
    inside = set(record.blocks)
    exits = [name for name in record.blocks if name in terminators
             and any(target not in inside for target in _successors(terminators[name]))]
    branch = data_walks.BRANCH.match(terminators[exits[0]].text) if len(exits) == 1 else None
    test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
    return branch, test if test is not None and test.opcode == "icmp" else None


def _merged_counter_trip(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading) -> Polynomial | None:
    """A loop whose counter is stepped on each path through its body (`if (…) goto L; …; L: ;` with
    `i++` copied into both sides) and tested after the copies merge: ScalarEvolution does not see
    the merged value as the counter, and gives up. Its count, where the loop's only exit tests
    that merge against a constant; else None."""
    inside = set(record.blocks)
    branch, test = _exit_test(record, terminators, reading)
    compare = _COMPARE_CONSTANT.search(test.text) if test is not None else None
    if compare is None:
        return None
    merged = compare["value"].strip('"')
    # Each copy is `counter + k`, the counter the header's phi of a constant start and the merge.
    steps = {analyses.value_scevs.get(value.lstrip("%").strip('"')) for value in analyses.phi_incoming.get(merged, [])}
    step = _STEP_FROM.match(steps.pop()) if len(steps) == 1 and None not in steps else None
    counter = step["counter"].strip('"') if step else ""
    starts = [v for v in analyses.phi_incoming.get(counter, []) if v.lstrip("%").strip('"') != merged]
    if step is None or int(step["step"]) <= 0 or reading.block_of.get(counter) != record.header \
            or len(starts) != 1 or not re.fullmatch(r"-?\d+", starts[0]):
        return None
    start, stride, bound = int(starts[0]), int(step["step"]), int(compare["bound"])
    start += stride  # the merged value after the first iteration
    leaves_when_true = branch["true"].strip('"') not in inside
    # After iteration j the counter is start + stride·j; the loop goes on while it has not reached the bound.
    if compare["predicate"] in ("eq", "ne") and leaves_when_true == (compare["predicate"] == "eq") \
            and bound >= start and (bound - start) % stride == 0:
        return Polynomial.constant((bound - start) // stride + 1)
    if compare["predicate"] in ("slt", "ult") and not leaves_when_true:
        return Polynomial.constant(max(0, -(-(bound - start) // stride)) + 1)
    return None


_COMPARE_BOUND = re.compile(r"= icmp (?P<predicate>slt|ult|ne) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), "
                            r"(?P<bound>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+))\s*(?:,|$)")
_ADD_RECURRENCE = re.compile(r"^\{(?P<body>.+)\}(?:<[a-z]+>)*<%(?P<loop>[^>]+)>$")


def _start_and_step(scev: str) -> tuple[str, str, str] | None:
    """(start, step, loop) of an add recurrence `{start,+,step}<flags><%loop>`, whose parts may
    hold commas and braces of their own."""
    m = _ADD_RECURRENCE.match(scev)
    if m is None:
        return None
    body, depth = m["body"], 0
    for index, char in enumerate(body):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(char, 0)
        if depth == 0 and body.startswith(",+,", index):
            return body[:index], body[index + 3:], m["loop"].strip('"')
    return None


def _run_time_step_trip(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading,
                        ctx) -> Polynomial | None:
    """A counter that steps by a value the loop does not change but only the run knows
    (`for (i = lo; i < 32000; i += inc)`): ScalarEvolution cannot count it (the step's sign is
    unknown). Bounded by its count at a step of 1, the smallest that ends the loop, from a start
    taken as 0 where it is not known; None for any other loop."""
    inside = set(record.blocks)
    branch, test = _exit_test(record, terminators, reading)
    compare = _COMPARE_BOUND.search(test.text) if test is not None else None
    if compare is None or branch["true"].strip('"') not in inside:  # goes on while below the bound
        return None
    counter = _start_and_step(analyses.value_scevs.get(compare["value"].strip('"'), ""))
    if counter is None or counter[2] != record.header or re.fullmatch(r"-?\d+", counter[1]):
        return None  # not this loop's counter, or a constant step ScalarEvolution would have counted
    try:
        bound = Polynomial.constant(int(compare["bound"])) if compare["bound"][0] != "%" else \
            to_polynomial(analyses.value_scevs.get(compare["bound"][1:].strip('"'), "") or compare["bound"], ctx)
    except NotPolynomial:
        return None
    try:
        start = to_polynomial(counter[0], ctx)
    except NotPolynomial:  # where it starts is read at run time too: from 0, at most
        start = Polynomial()
    for name in start.symbols:
        start = start.substitute(name, Polynomial())
    most = bound - start
    value = most.constant_value()
    return most if value is None or value > 0 else None


def _at_most_at_zero_sizes(count: Polynomial, header: str, assumptions: list[str]) -> Polynomial | None:
    """A count that only falls as sizes grow, `17 - n` for a loop from n up to 16 (a recursion
    depth limit turned into a loop): it runs at most its value at sizes 0, and not at all once
    they pass it, so it is no function of the sizes' growth. That most, with a note; None for
    any other count (one that grows with a size, or moves with an enclosing loop)."""
    start = dict(count.terms).get((), 0)
    sized = [(monomial, coefficient) for monomial, coefficient in count.terms if monomial]
    if not sized or start <= 0 or any(coefficient > 0 for _, coefficient in sized) \
            or any(symbol.startswith("@") for monomial, _ in sized for symbol, _ in monomial):
        return None
    symbols = sorted({symbol for monomial, _ in sized for symbol, _ in monomial})
    most = Polynomial.constant(start)
    assumptions.append(f"loop %{header}: its count {count} falls as {', '.join(symbols)} grow"
                       f"{'s' if len(symbols) == 1 else ''} (a count up to a constant; none once past it): "
                       f"taken as at most {most}, its value at {' = '.join(symbols)} = 0")
    return most


def _range_of_run_time_values(symbolic_max: str) -> bool:
    """Whether ScalarEvolution's constant maximum of a loop's count is the range of an
    expression in run-time values (its symbolic maximum names one): what their types allow (a
    loaded `unsigned short`: 65535), a worst case, not a count. A constant maximum without such
    an expression comes from the loop's own code."""
    return bool(symbolic_max) and UNKNOWN_SCEV not in symbolic_max and "%" in symbolic_max


_BULK = ("memcpy", "memmove", "memset")  # the intrinsics' keys (classify names them so)


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


def _named_sizes(size: Polynomial, reading: _Reading) -> Polynomial:
    """`size` with each value read from memory named as the source names it (`s->lookahead`,
    not the IR's `%i65`), where the IR keeps a name (`data_walks.Names`)."""
    names = data_walks.Names(reading.definitions, set(reading.parameters))
    for symbol in sorted(size.symbols):
        instr = reading.definitions.get(symbol)
        if instr is not None and instr.opcode == "load" and (named := names.value(symbol)) is not None:
            size = size.substitute(symbol, Polynomial.symbol(named))
            reading.data_symbols.add(named)
    return size


def _checked_overlaps(analyses: FunctionAnalyses, parameters: list[str], body: list, definitions: dict,
                      terminators: dict, substituted: dict[str, Polynomial], reading: _Reading,
                      assumptions: list[str]) -> dict[str, str]:
    """Loops (headers) that a run-time check never lets run, with why: "overlap" (the arrays
    overlap for every index) or "stride" (a symbolic stride is taken as not 1), see
    `ccls.readers.alias_checks`; the scalar copies' start values are set in `substituted` to
    where they start then (the beginning, not the vector loop's end)."""
    if not any(alias_checks.CONFLICT.match(name) or alias_checks.IDENT_CHECK.match(name) for name in definitions):
        return {}
    loops = set(analyses.loops)

    def address(name: str) -> Polynomial | None:
        if name in parameters:
            return Polynomial.symbol(name)
        text = analyses.value_scevs.get(name)
        if text is None:
            return None
        try:
            return to_polynomial(text, _scev_context(analyses, set(parameters), loops, substituted, reading,
                                                     addresses=True))
        except (NotPolynomial, BudgetExhausted):
            return None

    def last_index(loop: str) -> Polynomial | None:
        record = analyses.loops.get(loop)
        if record is None or not record.backedge_taken or UNKNOWN_SCEV in record.backedge_taken:
            return None
        try:
            return to_polynomial(record.backedge_taken, _scev_context(analyses, set(parameters), loops, substituted,
                                                                      reading))
        except (NotPolynomial, BudgetExhausted):
            return None

    phis = {block: [i for i in instrs if i.opcode == "phi"] for block, instrs in body}
    found = alias_checks.always_overlapping(definitions, terminators, phis, address, last_index)
    for phi, value in found.scalar_starts.items():
        start = Polynomial.constant(int(value)) if re.fullmatch(r"-?\d+", value) else address(value.lstrip("%"))
        if start is not None:
            substituted[phi] = start
    entered = {target: block for block, term in terminators.items() if block in found.vector_entries
               for target in _successors(term)}
    return {header: "stride" if (header if header in found.vector_entries else entered[header]) in found.unit_stride
            else "overlap" for header in analyses.loops if header in found.vector_entries or header in entered}


# A branch on the loop vectorizer's run-time alias check (LoopVectorize names the condition):
# true when the arrays overlap, and then only the scalar copy of the loop runs.
_ALIAS_CHECK = re.compile(r"^(?:found\.conflict|conflict\.rdx)")


def _fallback_for_overlap(header: str, record, terminators: dict) -> bool:
    """Whether the loop is entered only on the overlap edge of a run-time alias check (through
    blocks with one way in and one way out): the scalar fallback of a vectorised loop that has
    no remainder to run."""
    inside = set(record.blocks)
    predecessors: dict[str, list[str]] = {}
    for name, term in terminators.items():
        for target in _successors(term):
            predecessors.setdefault(target, []).append(name)
    edges = [(p, header) for p in predecessors.get(header, []) if p not in inside]
    for _ in range(4):  # through a preheader with one way in and out
        forwarded = []
        for source, target in edges:
            term = terminators.get(source)
            if term is not None and term.opcode == "br" and len(_successors(term)) == 1 \
                    and len(predecessors.get(source, [])) == 1:
                forwarded.append((predecessors[source][0], source))
            else:
                forwarded.append((source, target))
        edges = forwarded
    return bool(edges) and all(
        term is not None and term.opcode == "br" and len(term.operands) == 3
        and _ALIAS_CHECK.match(term.operands[0].name or "") and term.operands[2].name == target
        for source, target in edges for term in [terminators.get(source)])


def _successors(terminator: IRInstruction) -> list[str]:
    """The blocks a terminator can go to (its operands of type label)."""
    return [op.name for op in terminator.operands if op.type_text == "label"]


def _leaves_early_only_to_fail(record, terminators: dict, reading: _Reading) -> str | None:
    """All but one of the loop's exit edges are error paths, not early exits: they lead only to
    code that never returns (a block ending in `unreachable` after abort(), exit(), a throw), as
    LLVM's branch-probability heuristics take them, or are taken only when an allocator returned
    null (`if (!(p = malloc(…))) return NULL;`: out of memory). What they are, or None."""
    inside = set(record.blocks)
    exits = [(name, target) for name in record.blocks if name in terminators
             for target in _successors(terminators[name]) if target not in inside]
    kinds, ordinary = set(), 0
    for name, target in exits:
        if _never_returns(target, terminators):
            kinds.add("reach only code that does not return (abort, exit, a throw)")
        elif _on_allocation_failure(terminators[name], target, reading):
            kinds.add("are taken only when an allocation returned null (out of memory)")
        else:
            ordinary += 1
    return " or ".join(sorted(kinds, reverse=True)) if len(exits) > 1 and ordinary == 1 else None


_NULL_TEST = re.compile(r"= icmp (?P<predicate>eq|ne) ptr %(?P<pointer>\"[^\"]+\"|[-\w.$]+), null\b")


def _on_allocation_failure(terminator: IRInstruction, target: str, reading: _Reading) -> bool:
    """Whether the edge to `target` is taken only when a pointer an allocator returned is null."""
    branch = data_walks.BRANCH.match(terminator.text) if terminator.opcode == "br" else None
    test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
    null = _NULL_TEST.search(test.text) if test is not None and test.opcode == "icmp" else None
    if null is None:
        return False
    source = reading.definitions.get(null["pointer"].strip('"'))
    if source is None or source.opcode not in ("call", "invoke") or _callee_name(source.text) not in reading.allocators:
        return False
    taken_on_null = branch["true"] if null["predicate"] == "eq" else branch["false"]
    return target == taken_on_null.strip('"')


def _never_returns(block: str, terminators: dict, steps: int = 4) -> bool:
    """`block` ends in `unreachable`, or falls through unconditionally (a few blocks) to one that does."""
    for _ in range(steps):
        term = terminators.get(block)
        if term is None:
            return False
        if term.opcode == "unreachable":
            return True
        targets = _successors(term)
        if term.opcode != "br" or len(targets) != 1:
            return False
        block = targets[0]
    return False


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
        if any(_chased(name, inside, analyses, loaded - parameters, load_pointers, seen) for name in unknowns):
            return MemoryAccess("pointer-chase", element_bytes)
        sources = unknowns & (loaded - parameters)
        # a[idx[i]]: the address depends on a loaded value; within a global array, within its size.
        if sources:
            spans = [s for s in (_narrow_index_span(scev), _global_array_bytes(scev, reading.global_bytes)) if s]
            return MemoryAccess("indirect", element_bytes, span_bytes=min(spans) if spans else None)
        return MemoryAccess("unknown", element_bytes)
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


def _ancestors_innermost_first(loop_id: str, analyses: FunctionAnalyses) -> list[str]:
    out, parent = [], analyses.loops[loop_id].parent if loop_id in analyses.loops else None
    while parent:
        out.append(parent)
        parent = analyses.loops[parent].parent
    return out


_SCALED_NARROW_INDEX = re.compile(r"\((\d+) \* \(zext i(8|16) %[-\w.$\"]+ to i\d+\)\)")


_GLOBAL = re.compile(r'^@("[^"]+"|[-\w.$]+) = (?:[\w()]+ )*?(?:global|constant) ((?:\[[^=]*?\])|[^\s,]+) ', re.M)
_ARRAY = re.compile(r"^\[(\d+) x (.+)\]$")
_SCALAR_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "i128": 16, "half": 2, "bfloat": 2, "float": 4,
                 "double": 8, "x86_fp80": 16, "fp128": 16, "ptr": 8}


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
    return _SCALAR_BYTES.get(type_text)


def _global_array_bytes(scev: str, global_bytes: dict[str, int]) -> int | None:
    """The size of the one global array an address points into, if it names one."""
    names = {n.strip('"') for n in re.findall(r'@("[^"]+"|[-\w.$]+)', scev)}
    return global_bytes.get(names.pop()) if len(names) == 1 else None


def _narrow_index_span(scev: str) -> int | None:
    """``hist[byte]``: an index zero-extended from 8 or 16 bits reaches at most 2^bits slots."""
    m = _SCALED_NARROW_INDEX.search(scev)
    if m is None:
        return None
    return int(m.group(1)) << int(m.group(2))


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
