"""Reading PTX per function: the package's parts put together into one `FunctionIR` per
`.entry`/`.func` (blocks, loops and their trip counts, instruction classes, memory accesses),
and the errors found on the way. Counts are per thread. Anything not recognised degrades to
"unknown" with an assumption string, never an exception.
"""
from __future__ import annotations

import os
import re
from typing import Collection, Mapping, Sequence

from ccls.model import AnalysisError, BasicBlock, FunctionIR, Instruction, Loop
from ccls.readers.ptx.cfg import LoopInfo, UndefinedLabel, build_blocks, dominators, natural_loops
from ccls.readers.ptx.instructions import Instr, callee, classify, parse_instr
from ccls.readers.ptx.launch import Launch, per_thread_note, same_configuration
from ccls.readers.ptx.memory import memory_access
from ccls.readers.ptx.syntax import RawFunction, parse_module, tokenize
from ccls.readers.ptx.trips import trip_count
from ccls.readers.ptx.values import Analysis

_PARAM_INDEX = re.compile(r"_param_(\d+)\Z")


def arch_for_target(target: str | None) -> tuple[str, str | None]:
    """`.target sm_86` → ("nvptx-sm80", None); unknown targets map to the nearest table with a note."""
    m = re.match(r"sm_(\d+)", target or "")
    if m is None:
        return "nvptx-sm80", f"PTX .target {target or '(none)'} not recognised; costed as sm_80"
    sm = int(m.group(1))
    if 80 <= sm <= 89:
        return "nvptx-sm80", None
    if sm == 90:
        return "nvptx-sm90", None
    if sm > 90:
        return "nvptx-sm90", f"PTX .target {target}: no cost table for it; costed as sm_90"
    return "nvptx-sm80", f"PTX .target {target}: no cost table for it; costed as sm_80"


def demangle_simple(name: str) -> str:
    """Best-effort Itanium demangling of the function name only: `_Z5saxpyifPKfPf` → `saxpy`,
    `_ZN2ns6kernelEv` → `ns::kernel`. Anything else is returned unchanged."""
    m = re.match(r"_Z(\d+)", name)
    if m:
        length = int(m.group(1))
        start = m.end()
        if 0 < length <= len(name) - start:
            return name[start:start + length]
        return name
    if name.startswith("_ZN"):
        parts, pos = [], 3
        while pos < len(name) and name[pos] in "rVKRO":  # cv/ref qualifiers of a member function
            pos += 1
        while pos < len(name):
            m = re.match(r"(\d+)", name[pos:])
            if m is None:
                break
            length = int(m.group(1))
            pos += m.end()
            if length <= 0 or pos + length > len(name):
                return name
            parts.append(name[pos:pos + length])
            pos += length
        if parts and name[pos:pos + 1] == "E":
            return "::".join(parts)
    return name


def read_ptx(text: str, file: str, language: str = "ptx", default_trip_count: int = 100, *,
             loc_files: Collection[str] | None = None,
             parameter_names: Mapping[str, Sequence[str]] | None = None,
             display_names: Mapping[str, str] | None = None,
             launches: Mapping[str, Sequence[Launch]] | None = None,
             early_exit: str = "expected") -> tuple[list[FunctionIR], list[AnalysisError]]:
    """Read PTX text into one `FunctionIR` per function defined in it.

    Source lines: with `loc_files` (paths named by `.file` that are the analysed source), lines
    come from `.loc` directives (inlined code counts at its call site); without, instructions
    carry their own PTX line numbers (the PTX file is what is analysed).
    `parameter_names` maps a function's PTX name to its source parameter names (index order);
    `display_names` maps PTX names to demangled names; `launches` maps kernels' PTX names to
    their launches in the source (sizes for stride loops, and the whole-launch multiplier);
    `early_exit` is the policy for loops that may leave early (`ccls.early_exit`).
    Counts are per thread. Never raises on malformed input.
    """
    tokens = tokenize(text)
    module = parse_module(tokens)
    errors = [AnalysisError(file, line if loc_files is None else None, msg) for line, msg in module.errors]
    arch, arch_note = arch_for_target(module.target)
    wanted = {os.path.normpath(p) for p in loc_files} if loc_files is not None else None
    source_ids = ({k for k, path in module.files.items() if os.path.normpath(path) in wanted}
                  if wanted is not None else set())
    lines = text.splitlines()
    functions: list[FunctionIR] = []
    for raw in module.functions:
        reader = _FunctionReader(raw, file, language, arch, default_trip_count, early_exit,
                                 wanted is not None, source_ids,
                                 (parameter_names or {}).get(raw.name), (display_names or {}).get(raw.name),
                                 (launches or {}).get(raw.name, ()))
        fn, fn_errors = reader.read()
        errors.extend(fn_errors)
        if fn is None:
            continue
        if arch_note:
            fn.assumptions.insert(0, arch_note)
        fn.ir_text = "\n".join(lines[raw.header_line - 1:raw.end_line])
        functions.append(fn)
    return functions, errors


class _FunctionReader:
    def __init__(self, raw: RawFunction, file: str, language: str, arch: str, default_trip_count: int,
                 early_exit: str, use_loc: bool, source_ids: set[int], source_params: Sequence[str] | None,
                 display_name: str | None, launches: Sequence[Launch]):
        self.raw, self.file, self.language, self.arch = raw, file, language, arch
        self.default, self.early_exit = default_trip_count, early_exit
        self.use_loc, self.source_ids = use_loc, source_ids
        self.source_params = list(source_params) if source_params is not None else None
        self.display_name = display_name
        self.errors: list[AnalysisError] = []
        self.assumptions: list[str] = [per_thread_note(raw.kind == "entry", launches)]
        launch = same_configuration(launches)
        self.launch_sizes = launch.special_values() if launch is not None else {}
        self.branch_tables: dict[str, list[str]] = {}  # `ts: .branchtargets L1, L2;` for brx.idx

    def error_line(self, ptx_line: int, src_line: int | None) -> int | None:
        return src_line if self.use_loc else ptx_line

    # -- parameters ------------------------------------------------------------------------------
    def parameters(self) -> tuple[list[str], dict[str, str]]:
        ptx = [p for p in self.raw.params if not p.startswith("func_retval")]
        names: list[str] = []
        for k, p in enumerate(ptx):
            m = _PARAM_INDEX.search(p)
            index = int(m.group(1)) if m else k
            if self.source_params is not None and len(self.source_params) == len(ptx) and index < len(ptx):
                names.append(self.source_params[index])
            elif m:
                names.append(f"param_{index}")
            else:
                names.append(p)
        return names, dict(zip(ptx, names))

    # -- body → instructions -------------------------------------------------------------------
    def instructions(self) -> tuple[list[Instr | str], list[int]]:
        """Instructions and labels (as str) in order, and every source line seen in `.loc`."""
        items: list[Instr | str] = []
        seen_lines: list[int] = []
        asm_regs: set[str] = set()
        for tok in self.raw.body:  # inline asm may declare registers without a '%'
            parts = tok.text.split(None, 2)
            if tok.kind == "stmt" and parts[0] == ".reg" and len(parts) == 3:
                asm_regs.update(re.findall(r"(?<![%\w$<.])([A-Za-z_$][\w$]*)", parts[2]))
        src_line: int | None = None
        for tok in self.raw.body:
            if tok.kind == "line":
                if tok.text.startswith(".loc"):
                    line = self._loc_line(tok.text, src_line)
                    src_line = line
                    if line is not None:
                        seen_lines.append(line)
            elif tok.kind == "label":
                items.append(tok.text)
            elif tok.kind == "stmt":
                if tok.text.startswith(".branchtargets") and items and isinstance(items[-1], str):
                    self.branch_tables[items.pop()] = [t.strip() for t in tok.text.split(None, 1)[-1].split(",")]
                    continue
                if tok.text.startswith("."):
                    continue  # declarations and .pragma
                ins = parse_instr(tok.text, tok.line, src_line if self.use_loc else tok.line, asm_regs)
                if ins is None:
                    self.errors.append(AnalysisError(self.file, self.error_line(tok.line, src_line),
                                                     f"{self.raw.name}: cannot read instruction: {tok.text[:120]}"))
                    continue
                items.append(ins)
            elif tok.kind == "bad":
                self.errors.append(AnalysisError(self.file, self.error_line(tok.line, src_line),
                                                 f"{self.raw.name}: statement without ';': {tok.text[:120]}"))
            elif tok.kind == "header":
                self.errors.append(AnalysisError(self.file, self.error_line(tok.line, src_line),
                                                 f"{self.raw.name}: unexpected function header inside a body"))
        return items, seen_lines

    def _loc_line(self, text: str, previous: int | None) -> int | None:
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)(?:\s+(\d+))?(.*)", text)
        if m is None:
            return previous
        file_id, line = int(m.group(1)), int(m.group(2))
        if file_id in self.source_ids:
            return line or None  # line 0: compiler-generated code without a source line
        inl = re.search(r"inlined_at\s+(\d+)\s+(\d+)", m.group(4))
        if inl and int(inl.group(1)) in self.source_ids:
            return int(inl.group(2)) or None
        return previous  # code from a header inlined without a call-site record: the last source line

    # -- the whole function --------------------------------------------------------------------
    def read(self) -> tuple[FunctionIR | None, list[AnalysisError]]:
        raw = self.raw
        params, param_symbols = self.parameters()
        items, seen_lines = self.instructions()
        try:
            instrs, blocks, notes = build_blocks(items, self.branch_tables)
        except UndefinedLabel as bad:
            self.errors.append(AnalysisError(self.file, self.error_line(bad.branch.ptx_line, bad.branch.src_line),
                                             f"{raw.name}: {bad}"))
            return None, self.errors
        self.assumptions.extend(notes)
        idom = dominators(blocks)
        loops, irreducible = natural_loops(blocks, idom)
        for u, h in irreducible:
            self.assumptions.append(f"branch from {blocks[u].name} back to {blocks[h].name} enters a loop "
                                    f"at more than one place (irreducible); not counted as a loop")
        an = Analysis(instrs, blocks, idom, loops, param_symbols)
        model_loops: dict[str, Loop] = {}
        for h in sorted(loops, key=lambda x: (loops[x].depth, x)):
            info = loops[h]
            line = self.loop_line(an, info)
            where = f"loop at line {line} ({blocks[h].name})" if line else f"loop {blocks[h].name}"
            trip = trip_count(an, h, self.default, where, self.launch_sizes, self.early_exit)
            if trip.note:
                self.assumptions.append(trip.note)
            parent = blocks[info.parent].name if info.parent is not None else None
            model_loops[blocks[h].name] = Loop(blocks[h].name, parent, info.depth, trip.count, line)
        out_blocks: list[BasicBlock] = []
        for b, block in enumerate(blocks):
            inner = an.innermost_loop(b) if idom[b] is not None else None
            out = BasicBlock(block.name, blocks[inner].name if inner is not None else None)
            for i in block.instrs:
                out.instructions.append(self.model_instruction(an, i))
            out_blocks.append(out)
        if self.use_loc:
            line_values = seen_lines + [ins.src_line for ins in instrs if ins.src_line]
            first, last = (min(line_values), max(line_values)) if line_values else (None, None)
        else:
            first, last = raw.header_line, raw.end_line
        display = self.display_name or demangle_simple(raw.name)
        fn = FunctionIR(raw.name, display, self.file, first, last, self.language, self.arch, params,
                        out_blocks, model_loops, self.assumptions)
        return fn, self.errors

    def loop_line(self, an: Analysis, info: LoopInfo) -> int | None:
        """The line of the loop's exit test (the `for`/`while` line), else its first line."""
        for b in info.latches[:1] + [info.header]:
            for i in reversed(an.blocks[b].instrs):
                if an.instrs[i].base == "setp" and an.instrs[i].src_line:
                    return an.instrs[i].src_line
        for i in an.blocks[info.header].instrs:
            if an.instrs[i].src_line:
                return an.instrs[i].src_line
        body_lines = [an.instrs[i].src_line for b in info.body for i in an.blocks[b].instrs if an.instrs[i].src_line]
        return min(body_lines) if body_lines else None  # type: ignore[type-var]

    def model_instruction(self, an: Analysis, i: int) -> Instruction:
        ins = an.instrs[i]
        cls, space, access_bytes = classify(ins)
        access = memory_access(an, i, space, access_bytes) if space is not None else None
        called = callee(ins) if ins.base == "call" else None
        return Instruction(cls, ins.src_line, ins.opcode, called, access)
