"""PTX reader: PTX assembly text → `FunctionIR` per `.entry`/`.func`. Pure: text in, data out.

PTX has no ScalarEvolution, so this module does its own small analyses:
- control flow: blocks split at branch-target labels and after branches; dominators
  (Cooper–Harvey–Kennedy); natural loops from back edges (target dominates source);
- values: PTX registers are not SSA, so reaching definitions pick the definitions a use sees,
  and a small symbolic evaluator turns them into polynomials over parameters (`n`), special
  registers (`%tid.x`), loop indices (`@<header>`), bounded ranges (`n & 3`) and opaque values;
- trip counts: the compare that decides each loop's exit, as a linear function of the loop
  index, solved for the first failing iteration (counted, unrolled and grid-stride loops);
- memory access patterns from the same address polynomials (coalesced over threads, strides).
Anything not recognised degrades to "unknown" with an assumption string, never an exception.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Collection, Iterator, Mapping, Sequence

from ccls.model import AnalysisError, BasicBlock, FunctionIR, Instruction, Loop, MemoryAccess, TripCount
from ccls.polynomial import Polynomial

# ------------------------------------------------------------------------------------------------
# Lexing: comments out, then a token stream of statements, labels, braces and line directives.
# ------------------------------------------------------------------------------------------------

_MAX_STATEMENT_CHARS = 200_000  # a runaway "statement" is malformed input, not PTX


def _strip_comments(text: str) -> str:
    """Blank out // and /* */ comments (keeping newlines, so line numbers survive); strings kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = text.find('"', i + 1)
            nl = text.find("\n", i + 1)
            if j < 0 or (0 <= nl < j):  # unterminated string: stop at the line end
                j = (nl - 1) if nl >= 0 else n - 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            j = i
            while j < n and text[j] not in '"/':
                j += 1
            if j == i:  # a lone '/'
                j += 1
            out.append(text[i:j])
            i = j
    return "".join(out)


@dataclass(frozen=True)
class _Token:
    kind: str  # "stmt" | "header" | "label" | "open" | "close" | "line" | "bad"
    text: str
    line: int  # 1-based PTX line where the token starts


_LINE_DIRECTIVE = re.compile(r"\.(loc|file|version|target|address_size)\b")
_SECTION = re.compile(r"\.section\b")
_LABEL = re.compile(r"([A-Za-z_$%][\w$]*)[ \t]*:(?!:)")
_HEADER = re.compile(r"(?:\.(?:visible|extern|weak|common)\s+)*\.(?:entry|func)\b")


def _tokenize(text: str) -> list[_Token]:
    text = _strip_comments(text)
    tokens: list[_Token] = []
    pos, n, line = 0, len(text), 1
    while pos < n:
        c = text[pos]
        if c == "\n":
            line += 1
            pos += 1
        elif c.isspace() or c == ";":
            pos += 1
        elif c in "{}":
            tokens.append(_Token("open" if c == "{" else "close", c, line))
            pos += 1
        elif _LINE_DIRECTIVE.match(text, pos):
            end = text.find("\n", pos)
            end = n if end < 0 else end
            tokens.append(_Token("line", text[pos:end].strip(), line))
            pos = end
        elif _SECTION.match(text, pos):
            pos, line = _skip_section(text, pos, line)
        elif (m := _LABEL.match(text, pos)) is not None:
            tokens.append(_Token("label", m.group(1), line))
            pos = m.end()
        else:
            start_line = line
            pos, line, token = _statement(text, pos, line)
            tokens.append(_Token(token[0], token[1], start_line))
    return tokens


def _skip_section(text: str, pos: int, line: int) -> tuple[int, int]:
    """Skip `.section name { ... }` (debug sections), or just the directive's line."""
    n = len(text)
    end = text.find("\n", pos)
    end = n if end < 0 else end
    brace = re.compile(r"\.section[^\n{]*\s*\{").match(text, pos)
    if brace is None:  # no block follows: the directive is one line
        return end, line
    j = brace.end() - 1
    depth = 0
    while j < n:
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    line += text.count("\n", pos, j + 1)
    return min(j + 1, n), line


def _statement(text: str, pos: int, line: int) -> tuple[int, int, tuple[str, str]]:
    """Read one statement up to ';' (or a function header up to its body's '{')."""
    n = len(text)
    start = pos
    header = _HEADER.match(text, pos) is not None
    depth = 0  # braces and parentheses inside the statement: `{%r1, %r2}`, `= {1, 2}`, `(param0)`
    while pos < n:
        c = text[pos]
        if c == "\n":
            line += 1
        elif c == ";" and depth <= 0:
            return pos + 1, line, ("header" if header else "stmt", text[start:pos].strip())
        elif c in "({[":
            if c == "{" and header and depth == 0:
                return pos + 1, line, ("header", text[start:pos].strip() + " {")
            depth += 1
        elif c in ")]}":
            if depth == 0:  # closes an enclosing block: this statement lacks its ';'
                if pos == start:  # a stray ')' or ']': consume it
                    return pos + 1, line, ("bad", c)
                return pos, line, ("bad", text[start:pos].strip())
            depth -= 1
        pos += 1
        if pos - start > _MAX_STATEMENT_CHARS:
            break
    return pos, line, ("bad", text[start:pos].strip()[:200])


# ------------------------------------------------------------------------------------------------
# Module structure: target, .file table, function headers and bodies.
# ------------------------------------------------------------------------------------------------

@dataclass
class _RawFunction:
    kind: str  # "entry" | "func"
    name: str
    params: list[str]  # PTX parameter names, in order
    header_line: int
    end_line: int
    body: list[_Token]


_PARAM_DECL = re.compile(r"\.(?:param|reg)\b[^,()]*?([A-Za-z_$%][\w$]*)\s*(?:\[[^\]]*\])?\s*$")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside (), [], {}."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    tail = "".join(cur).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def _parse_header(text: str) -> tuple[str, str, list[str]] | None:
    """`.visible .entry name(.param .u32 a, ...)` → ("entry", name, [param names])."""
    m = re.search(r"\.(entry|func)\b", text)
    if m is None:
        return None
    rest = text[m.end():].strip()
    if rest.startswith("("):  # .func (.param .b32 retval) name(...)
        close = _matching_paren(rest, 0)
        if close < 0:
            return None
        rest = rest[close + 1:].strip()
    nm = re.match(r"([A-Za-z_$%][\w$]*)", rest)
    if nm is None:
        return None
    name = nm.group(1)
    rest = rest[nm.end():].strip()
    params: list[str] = []
    if rest.startswith("("):
        close = _matching_paren(rest, 0)
        if close < 0:
            return None
        for decl in _split_top(rest[1:close]):
            if not decl:
                continue
            pm = _PARAM_DECL.search(decl)
            params.append(pm.group(1) if pm else decl.split()[-1])
    return m.group(1), name, params


def _matching_paren(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


@dataclass
class _Module:
    target: str | None
    files: dict[int, str]
    functions: list[_RawFunction]
    errors: list[tuple[int, str]]  # (PTX line, message) outside any function


def _parse_module(tokens: list[_Token]) -> _Module:
    module = _Module(None, {}, [], [])
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if tok.kind == "line":
            _module_directive(tok, module)
            i += 1
        elif tok.kind == "header" and tok.text.endswith("{"):
            parsed = _parse_header(tok.text[:-1])
            body, j, closed = _collect_body(tokens, i + 1)
            end_line = tokens[j - 1].line if closed and j > 0 else (tokens[-1].line if tokens else tok.line)
            if parsed is None:
                module.errors.append((tok.line, f"cannot read function header: {tok.text[:120]}"))
            elif not closed:
                module.errors.append((tok.line, f"function {parsed[1]}: body has no closing '}}'"))
            else:
                module.functions.append(_RawFunction(parsed[0], parsed[1], parsed[2], tok.line, end_line, body))
            i = j
        elif tok.kind in ("stmt", "header"):
            i += 1  # declarations: .global/.const/.shared variables, .extern .func prototypes
        elif tok.kind == "bad":
            module.errors.append((tok.line, f"statement without ';': {tok.text[:120]}"))
            i += 1
        elif tok.kind in ("open", "close"):
            module.errors.append((tok.line, f"unexpected '{tok.text}' outside a function"))
            i += 1
        else:
            i += 1  # a stray label at module level carries no code
    for tok in tokens:  # nvcc puts .file directives after the code
        if tok.kind == "line" and tok.text.startswith(".file"):
            _module_directive(tok, module)
    return module


def _module_directive(tok: _Token, module: _Module) -> None:
    if tok.text.startswith(".target"):
        parts = tok.text[len(".target"):].replace(",", " ").split()
        if parts:
            module.target = parts[0]
    elif tok.text.startswith(".file"):
        m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"(?:\s*,?\s*"([^"]*)")?', tok.text)
        if m:
            path = os.path.join(m.group(2), m.group(3)) if m.group(3) else m.group(2)
            module.files[int(m.group(1))] = path


def _collect_body(tokens: list[_Token], start: int) -> tuple[list[_Token], int, bool]:
    """Tokens up to the '}' matching an already consumed '{' → (body, next index, closed?)."""
    depth = 1
    j = start
    while j < len(tokens):
        tok = tokens[j]
        if tok.kind == "open":
            depth += 1
        elif tok.kind == "close":
            depth -= 1
            if depth == 0:
                return tokens[start:j], j + 1, True
        elif tok.kind == "header" and tok.text.endswith("{") and depth == 1:
            return tokens[start:j], j, False  # the next function starts: this one was not closed
        j += 1
    return tokens[start:], j, False


# ------------------------------------------------------------------------------------------------
# Instructions: parse, classify.
# ------------------------------------------------------------------------------------------------

_FLOAT_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32", "e4m3", "e5m2",
                          "e4m3x2", "e5m2x2"})
_INT_TYPES = frozenset({f"{k}{b}" for k in "sub" for b in (8, 16, 32, 64)} | {"b128", "pred"})
_TYPE_BITS = {"f16": 16, "f16x2": 32, "bf16": 16, "bf16x2": 32, "f32": 32, "f64": 64, "tf32": 32,
              "e4m3": 8, "e5m2": 8, "e4m3x2": 16, "e5m2x2": 16, "b128": 128, "pred": 1}
_TYPE_BITS.update({f"{k}{b}": b for k in "sub" for b in (8, 16, 32, 64)})
_SPACES = ("global", "shared", "local", "const", "param", "tex")
_NO_DEST = frozenset({"st", "red", "bar", "barrier", "membar", "fence", "bra", "brx", "ret", "exit", "trap",
                      "call", "prefetch", "prefetchu", "cp", "stmatrix", "sust", "sured", "nanosleep",
                      "pmevent", "brkpt", "wgmma", "mbarrier", "griddepcontrol", "setmaxnreg"})
_INT_ARITH = {"add": "int_add", "sub": "int_add", "addc": "int_add", "subc": "int_add", "abs": "int_add",
              "neg": "int_add", "min": "int_add", "max": "int_add", "sad": "int_add",
              "mul": "int_mul", "mad": "int_mul", "madc": "int_mul", "mul24": "int_mul", "mad24": "int_mul",
              "dp4a": "int_mul", "dp2a": "int_mul", "div": "int_div", "rem": "int_div"}
_FP_ARITH = {"add": "fp_add", "sub": "fp_add", "abs": "fp_add", "neg": "fp_add", "min": "fp_add",
             "max": "fp_add", "copysign": "fp_add", "testp": "fp_add", "mul": "fp_mul", "fma": "fp_fma",
             "mad": "fp_fma", "div": "fp_div"}
_LOGIC = frozenset({"and", "or", "xor", "not", "cnot", "lop3", "bfe", "bfi", "brev", "popc", "clz", "bfind",
                    "fns", "prmt", "bmsk", "szext"})
_SFU = frozenset({"rsqrt", "sin", "cos", "lg2", "ex2", "tanh"})


@dataclass
class _Instr:
    opcode: str
    base: str
    mods: list[str]
    guard: str | None
    guard_negated: bool
    operands: list[str]
    text: str
    ptx_line: int
    src_line: int | None
    dests: list[str] = field(default_factory=list)
    block: int = -1


_INSTR = re.compile(r"(?:@(!?)(%?[A-Za-z_$][\w$.]*)\s+)?([A-Za-z_][\w.:]*)\s*(.*)\Z", re.S)
_REG = re.compile(r"%[A-Za-z_$][\w$]*(?:\.[xyz])?")


def _parse_instr(text: str, ptx_line: int, src_line: int | None, asm_regs: set[str]) -> _Instr | None:
    m = _INSTR.match(text)
    if m is None:
        return None
    opcode = m.group(3)
    parts = opcode.split(".")
    operands = [o for o in _split_top(" ".join(m.group(4).split()))]
    instr = _Instr(opcode, parts[0], parts[1:], m.group(2), m.group(1) == "!", operands,
                   " ".join(text.split()), ptx_line, src_line)
    if operands and parts[0] not in _NO_DEST and not opcode.startswith(("wmma.store", "tensormap")):
        instr.dests = _registers(operands[0], asm_regs)
    return instr


def _registers(operand: str, asm_regs: set[str]) -> list[str]:
    """Register names in an operand: `%r1`, `{%f1, %f2}`, `%p|%q`, or inline-asm names."""
    found = [r for r in _REG.findall(operand) if not _is_special(r)]
    found += [w for w in re.findall(r"[A-Za-z_$][\w$]*", operand) if w in asm_regs]
    return found


_SPECIAL = re.compile(r"%(tid|ntid|laneid|warpid|nwarpid|ctaid|nctaid|smid|nsmid|gridid|lanemask_\w+|clock|"
                      r"clock64|globaltimer\w*|envreg\d+|pm\d+\w*|dynamic_smem_size|total_smem_size|"
                      r"aggr_smem_size|cluster\w*|is_explicit_cluster|nclusterid|current_graph_exec|"
                      r"reserved_smem_\w+)(\.[xyz])?\Z")


def _is_special(reg: str) -> bool:
    return _SPECIAL.match(reg) is not None


def _types(mods: Sequence[str]) -> list[str]:
    return [m for m in mods if m in _FLOAT_TYPES or m in _INT_TYPES]


def _precision(base: str, ftype: str) -> str:
    if ftype.endswith("x2"):
        return f"{base}.{ftype[:-2]}@v{_TYPE_BITS[ftype]}"
    return f"{base}.{ftype}"


def _space(mods: Sequence[str]) -> str:
    for m in mods:
        head = m.split("::")[0]
        if head in _SPACES:
            return head
    return "generic"


def _vector_lanes(mods: Sequence[str]) -> int:
    for m in mods:
        if m in ("v2", "v4", "v8"):
            return int(m[1:])
    return 1


def _brace_count(operand: str) -> int:
    return len(_split_top(operand.strip()[1:-1])) if operand.strip().startswith("{") else 1


def _classify(ins: _Instr) -> tuple[str, str | None, int]:
    """→ (class key, memory space or None, bytes moved per thread for memory ops)."""
    base, mods = ins.base, ins.mods
    types = _types(mods)
    last = types[-1] if types else None
    is_float = last in _FLOAT_TYPES
    if base in ("ld", "ldu", "st", "atom", "red"):
        space = _space(mods)
        bits = _TYPE_BITS.get(last or "b32", 32) * _vector_lanes(mods)
        if base in ("atom", "red"):
            return f"atomic.{space}", space, max(1, bits // 8)
        kind = "load" if base in ("ld", "ldu") else "store"
        width = bits if _vector_lanes(mods) > 1 else None
        return f"{kind}.{space}" + (f"@v{width}" if width else ""), space, max(1, bits // 8)
    if base in ("wmma", "ldmatrix", "stmatrix", "mma", "wgmma"):
        return _classify_matrix(ins)
    if base in ("cp",) and "async" in mods and "global" in [m.split("::")[0] for m in mods]:
        size = _int_literal(ins.operands[2]) if len(ins.operands) > 2 else None
        bits = size * 8 if size in (8, 16) else None
        return "load.global" + (f"@v{bits}" if bits else ""), "global", size or 4
    if base in ("tex", "tld4", "suld"):
        return "load.global", "global", max(1, _TYPE_BITS.get(last or "b32", 32) // 8)
    if base == "sust":
        return "store.global", "global", max(1, _TYPE_BITS.get(last or "b32", 32) // 8)
    if base in ("bar", "barrier") or (base == "mbarrier"):
        return "barrier", None, 0
    if base in ("membar", "fence"):
        return "fence", None, 0
    if base in ("bra", "brx"):
        return "branch", None, 0
    if base == "call":
        return ("call_indirect" if _callee(ins) is None else "call"), None, 0
    if base in ("ret", "exit"):
        return "return", None, 0
    if base in ("setp", "set"):
        cmp_type = types[-1] if types else None
        if cmp_type in _FLOAT_TYPES:
            return _precision("fp_add", cmp_type), None, 0
        return "int_cmp", None, 0
    if base in ("selp", "slct"):
        return "select", None, 0
    if base == "cvt":
        return "convert", None, 0
    if base == "cvta":
        return "address", None, 0
    if base in ("shl", "shr", "shf"):
        return "int_shift", None, 0
    if base in _LOGIC:
        return "int_logic", None, 0
    if base in _SFU:
        return "sfu", None, 0
    if base == "sqrt":
        if "approx" in mods:
            return "sfu", None, 0
        return _precision("fp_sqrt", last or "f32"), None, 0
    if base == "rcp":
        if "approx" in mods:
            return "sfu", None, 0
        return _precision("fp_div", last or "f32"), None, 0  # IEEE reciprocal: a division
    if is_float and base in _FP_ARITH:
        return _precision(_FP_ARITH[base], last), None, 0
    if base in _INT_ARITH and last not in _FLOAT_TYPES:
        return _INT_ARITH[base], None, 0
    return "other", None, 0


def _classify_matrix(ins: _Instr) -> tuple[str, str | None, int]:
    base, mods = ins.base, ins.mods
    if base == "wmma" and mods and mods[0] in ("load", "store"):
        space = _space(mods)
        operand = ins.operands[0] if mods[0] == "load" else (ins.operands[1] if len(ins.operands) > 1 else "")
        bits = 32 * _brace_count(operand) if operand else 32
        kind = "load" if mods[0] == "load" else "store"
        return f"{kind}.{space}@v{bits}", space, bits // 8
    if base in ("ldmatrix", "stmatrix"):
        count = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), 1)
        kind = "load" if base == "ldmatrix" else "store"
        return f"{kind}.shared" + (f"@v{32 * count}" if count > 1 else ""), "shared", 4 * count
    if base == "wgmma" and not any(m.startswith("mma") for m in mods):
        return "fence", None, 0  # wgmma.fence / commit_group / wait_group
    types = _types(mods)
    # Input precision: mma.sync …dtype.atype.btype.ctype; wgmma …dtype.atype.btype; wmma.mma lists
    # only D/C types (f16 inputs) unless the inputs are something else (.bf16, .tf32, .s8 …).
    if base == "wmma":
        in_type = types[1] if len(types) == 4 else ("f16" if len(types) == 2 else (types[0] if types else None))
    else:
        in_type = types[1] if len(types) >= 3 else (types[0] if types else None)
    if in_type and in_type.startswith(("e4m3", "e5m2")):
        in_type = "f8"
    return ("mma." + in_type.replace("x2", "")) if in_type else "mma", None, 0


def _callee(ins: _Instr) -> str | None:
    for op in ins.operands:
        if op.startswith("("):
            continue
        return None if op.startswith("%") else op
    return None


def _int_literal(text: str) -> int | None:
    t = text.strip()
    m = re.fullmatch(r"(-?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*|0[bB][01]+)[uU]?", t)
    if m is None:
        return None
    digits = m.group(2)
    if digits[:2] in ("0x", "0X"):
        value = int(digits, 16)
    elif digits[:2] in ("0b", "0B"):
        value = int(digits, 2)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)
    else:
        value = int(digits)
    return -value if m.group(1) else value


# ------------------------------------------------------------------------------------------------
# Control flow: blocks, successors, dominators, natural loops.
# ------------------------------------------------------------------------------------------------

@dataclass
class _Block:
    name: str
    instrs: list[int]  # indices into the function's instruction list
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


@dataclass
class _LoopInfo:
    header: int
    body: set[int]
    latches: list[int]
    parent: int | None = None  # header block of the enclosing loop
    depth: int = 1


def _dominators(blocks: list[_Block]) -> list[int | None]:
    """Immediate dominator per block (entry → itself, unreachable → None). Cooper, Harvey and
    Kennedy, "A Simple, Fast Dominance Algorithm" (2001)."""
    order: list[int] = []
    seen = [False] * len(blocks)
    stack: list[tuple[int, Iterator[int]]] = [(0, iter(blocks[0].succs))] if blocks else []
    if blocks:
        seen[0] = True
    while stack:  # iterative DFS for the post-order
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            order.append(node)
            stack.pop()
        elif not seen[nxt]:
            seen[nxt] = True
            stack.append((nxt, iter(blocks[nxt].succs)))
    rpo = order[::-1]
    po_num = {b: i for i, b in enumerate(order)}
    idom: list[int | None] = [None] * len(blocks)
    if not blocks:
        return idom
    idom[0] = 0
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = None
            for p in blocks[b].preds:
                if idom[p] is None:
                    continue
                if new is None:
                    new = p
                    continue
                a, c = p, new
                while a != c:
                    while po_num[a] < po_num[c]:
                        a = idom[a]  # type: ignore[assignment]
                    while po_num[c] < po_num[a]:
                        c = idom[c]  # type: ignore[assignment]
                new = a
            if new is not None and idom[b] != new:
                idom[b] = new
                changed = True
    return idom


def _retreating_edges(blocks: list[_Block]) -> set[tuple[int, int]]:
    """Edges to a block still on the depth-first search stack."""
    found: set[tuple[int, int]] = set()
    if not blocks:
        return found
    state = [0] * len(blocks)  # 0 new, 1 on stack, 2 done
    stack: list[tuple[int, Iterator[int]]] = [(0, iter(blocks[0].succs))]
    state[0] = 1
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            state[node] = 2
            stack.pop()
        elif state[nxt] == 1:
            found.add((node, nxt))
        elif state[nxt] == 0:
            state[nxt] = 1
            stack.append((nxt, iter(blocks[nxt].succs)))
    return found


def _dominates(idom: list[int | None], a: int, b: int) -> bool:
    if idom[b] is None or idom[a] is None:
        return False
    while True:
        if b == a:
            return True
        parent = idom[b]
        if parent is None or parent == b:
            return False
        b = parent


def _natural_loops(blocks: list[_Block], idom: list[int | None]) -> tuple[dict[int, _LoopInfo], list[tuple[int, int]]]:
    """Loops by header block, and the retreating edges that are not back edges (irreducible)."""
    retreating = _retreating_edges(blocks)
    loops: dict[int, _LoopInfo] = {}
    irreducible: list[tuple[int, int]] = []
    for u, block in enumerate(blocks):
        if idom[u] is None:
            continue
        for h in block.succs:
            if _dominates(idom, h, u):
                info = loops.setdefault(h, _LoopInfo(h, {h}, []))
                info.latches.append(u)
                work = [u]
                while work:
                    x = work.pop()
                    if x not in info.body:
                        info.body.add(x)
                        work.extend(p for p in blocks[x].preds if idom[p] is not None)
            elif (u, h) in retreating:
                irreducible.append((u, h))
    for h, info in loops.items():
        containing = [o for o in loops.values() if o.header != h and h in o.body and info.body <= o.body]
        if containing:
            info.parent = min(containing, key=lambda o: len(o.body)).header
    for info in loops.values():
        depth, p = 1, info.parent
        while p is not None:
            depth += 1
            p = loops[p].parent
        info.depth = depth
    return loops, irreducible


# ------------------------------------------------------------------------------------------------
# Symbolic values of registers.
# ------------------------------------------------------------------------------------------------

_CUDA_NAMES = {"tid": "threadIdx", "ntid": "blockDim", "ctaid": "blockIdx", "nctaid": "gridDim"}
# Value ranges of special registers used to bound trip counts (PTX ISA, "Special Registers").
_SPECIAL_RANGES = {"%tid.x": (0, 1023), "%tid.y": (0, 1023), "%tid.z": (0, 63), "%laneid": (0, 31)}
_GRID_SIZES = re.compile(r"%n(tid|ctaid)\.[xyz]\Z")


def _p(value: int | Fraction) -> Polynomial:
    return Polynomial.constant(value)


def _coefficients(poly: Polynomial, symbol: str) -> dict[int, Polynomial] | None:
    """poly as Σ_k c_k · symbol^k → {k: c_k}."""
    out: dict[int, dict] = {}
    for mono, coef in poly.terms:
        powers = dict(mono)
        k = powers.pop(symbol, 0)
        rest = tuple(sorted(powers.items()))
        out.setdefault(k, {})[rest] = out.get(k, {}).get(rest, Fraction(0)) + coef
    return {k: Polynomial(tuple(sorted((m, c) for m, c in d.items() if c))) for k, d in out.items()}


def _linear(poly: Polynomial, symbol: str) -> tuple[Polynomial, Polynomial] | None:
    coeffs = _coefficients(poly, symbol)
    if coeffs is None or any(k > 1 for k in coeffs):
        return None
    return coeffs.get(0, Polynomial()), coeffs.get(1, Polynomial())


@dataclass
class _Range:
    low: Fraction
    high: Fraction
    text: str  # how a person reads it: "(n & 3)"
    home: int  # block where it was computed


class _Analysis:
    """Per-function analyses over the instruction list: reaching definitions, values, loops."""

    _MAX_DEPTH = 60

    def __init__(self, instrs: list[_Instr], blocks: list[_Block], idom: list[int | None],
                 loops: dict[int, _LoopInfo], param_symbols: Mapping[str, str]):
        self.instrs, self.blocks, self.idom, self.loops = instrs, blocks, idom, loops
        self.position = {i: k for block in blocks for k, i in enumerate(block.instrs)}
        self.param_symbols = param_symbols  # PTX param name → symbol (source parameter name)
        self.loop_of_symbol = {f"@{blocks[h].name}": h for h in loops}
        self.defs: list[tuple[int, str]] = []
        self.defs_at: dict[int, list[int]] = {}
        self.defs_of: dict[str, list[int]] = {}
        for i, ins in enumerate(instrs):
            for reg in ins.dests:
                d = len(self.defs)
                self.defs.append((i, reg))
                self.defs_at.setdefault(i, []).append(d)
                self.defs_of.setdefault(reg, []).append(d)
        self.rd_in = self._reaching_definitions()
        self.memo: dict[int, Polynomial] = {}
        self.iv: dict[int, tuple[int, Polynomial, Polynomial]] = {}  # def → (loop header, init, step)
        self.ranges: dict[str, _Range] = {}
        self.opaque_home: dict[str, int] = {}
        self.depth = 0

    # -- reaching definitions ---------------------------------------------------------------------
    def _reaching_definitions(self) -> list[int]:
        nblocks = len(self.blocks)
        gen, kill = [0] * nblocks, [0] * nblocks
        for b, block in enumerate(self.blocks):
            last: dict[str, int] = {}
            for i in block.instrs:
                for d in self.defs_at.get(i, ()):
                    last[self.defs[d][1]] = d
            for reg, d in last.items():
                gen[b] |= 1 << d
                for other in self.defs_of[reg]:
                    if other != d:
                        kill[b] |= 1 << other
        rd_in, rd_out = [0] * nblocks, gen[:]
        changed = True
        while changed:
            changed = False
            for b in range(nblocks):
                new_in = 0
                for p in self.blocks[b].preds:
                    new_in |= rd_out[p]
                new_out = gen[b] | (new_in & ~kill[b])
                if new_in != rd_in[b] or new_out != rd_out[b]:
                    rd_in[b], rd_out[b] = new_in, new_out
                    changed = True
        return rd_in

    def reaching(self, reg: str, at: int) -> list[int]:
        """Definitions of `reg` that reach the point just before instruction `at`."""
        block = self.blocks[self.instrs[at].block]
        for i in reversed(block.instrs[:self.position[at]]):
            for d in self.defs_at.get(i, ()):
                if self.defs[d][1] == reg:
                    return [d]
        live = self.rd_in[self.instrs[at].block]
        return [d for d in self.defs_of.get(reg, ()) if live >> d & 1]

    # -- loops ---------------------------------------------------------------------------------------
    def loops_containing(self, block: int) -> list[int]:
        return [h for h, info in self.loops.items() if block in info.body]

    def innermost_loop(self, block: int) -> int | None:
        inside = self.loops_containing(block)
        return min(inside, key=lambda h: len(self.loops[h].body)) if inside else None

    def invariant_in(self, poly: Polynomial, header: int) -> bool:
        body = self.loops[header].body
        for s in poly.symbols:
            if s in self.loop_of_symbol and self.loop_of_symbol[s] in body:
                return False
            home = self.opaque_home.get(s, self.ranges[s].home if s in self.ranges else None)
            if home is not None and home in body:
                return False
        return True

    # -- values ----------------------------------------------------------------------------------
    def opaque(self, key: str, home: int) -> Polynomial:
        name = f"?{key}"
        self.opaque_home[name] = home
        return Polynomial.symbol(name)

    def value(self, operand: str, at: int) -> Polynomial:
        """Value of an operand just before instruction `at`."""
        operand = operand.strip()
        lit = _int_literal(operand)
        if lit is not None:
            return _p(lit)
        if _is_special(operand):
            return Polynomial.symbol(operand)
        if not operand.startswith("%") and re.fullmatch(r"[A-Za-z_$][\w$]*", operand) and operand not in self.defs_of:
            return Polynomial.symbol("&" + operand)  # address of a variable (shared array, global)
        block = self.instrs[at].block
        defs = self.reaching(operand, at)
        if not defs:
            return self.opaque(f"{operand}@{at}", block)
        if self.depth > self._MAX_DEPTH:
            return self.opaque(f"{operand}@{at}", block)
        self.depth += 1
        try:
            values = [self.of_def(d) for d in defs]
        finally:
            self.depth -= 1
        if len(defs) > 1:
            merged = self._merge_at_header(defs, at)
            if merged is not None:
                return self._in_scope(merged, at, operand)
        if all(v == values[0] for v in values):
            return self._in_scope(values[0], at, operand)
        return self.opaque(f"{operand}@{at}", block)

    def _merge_at_header(self, defs: list[int], at: int) -> Polynomial | None:
        """Before the increment of an induction variable of loop L: init + @L·step."""
        ivs = [d for d in defs if d in self.iv]
        if len(ivs) != 1:
            return None
        header, init, step = self.iv[ivs[0]]
        body = self.loops[header].body
        if self.instrs[at].block not in body:
            return None
        if any(self.instrs[self.defs[d][0]].block in body for d in defs if d != ivs[0]):
            return None
        return init + Polynomial.symbol(f"@{self.blocks[header].name}") * step

    def _in_scope(self, value: Polynomial, at: int, operand: str) -> Polynomial:
        """Loop indices of loops that do not contain `at` mean nothing there (a final value)."""
        block = self.instrs[at].block
        for s in value.symbols:
            h = self.loop_of_symbol.get(s)
            if h is not None and block not in self.loops[h].body:
                return self.opaque(f"{operand}@{at}", block)
        return value

    def of_def(self, d: int) -> Polynomial:
        if d in self.memo:
            return self.memo[d]
        i, reg = self.defs[d]
        self.memo[d] = self.opaque(f"{reg}#{i}", self.instrs[i].block)  # cycle guard
        value = self._induction(d)
        if value is None:
            value = self._evaluate(d)
        self.memo[d] = value
        return value

    def _induction(self, d: int) -> Polynomial | None:
        """`add r, r, step` inside loop L where r has no other definition in L → init + (@L+1)·step."""
        i, reg = self.defs[d]
        ins = self.instrs[i]
        if ins.base not in ("add", "sub") or len(ins.operands) != 3 or ins.guard is not None:
            return None
        if "cc" in ins.mods or any(t in _FLOAT_TYPES for t in _types(ins.mods)):
            return None
        header = self.innermost_loop(ins.block)
        if header is None:
            return None
        body = self.loops[header].body
        if [x for x in self.defs_of[reg] if self.instrs[self.defs[x][0]].block in body] != [d]:
            return None
        a, b = ins.operands[1].strip(), ins.operands[2].strip()
        if a == reg:
            other = b
        elif b == reg and ins.base == "add":
            other = a
        else:
            return None
        incoming = self.reaching(reg, i)
        if d not in incoming or len(incoming) < 2:
            return None
        self.depth += 1
        try:
            step = self.value(other, i)
            inits = [self.of_def(x) for x in incoming if x != d]
        finally:
            self.depth -= 1
        if ins.base == "sub":
            step = -step
        if not inits or any(v != inits[0] for v in inits) or not self.invariant_in(step, header):
            return None
        init = inits[0]
        for s in init.symbols:  # an init computed in an earlier sibling loop is its final value
            h = self.loop_of_symbol.get(s)
            if h is not None and header not in self.loops[h].body:
                return None
        self.iv[d] = (header, init, step)
        index = Polynomial.symbol(f"@{self.blocks[header].name}")
        return init + (index + 1) * step

    def _evaluate(self, d: int) -> Polynomial:
        i, reg = self.defs[d]
        ins = self.instrs[i]
        block = ins.block
        unknown = self.opaque(f"{reg}#{i}", block)
        ops = ins.operands
        types = _types(ins.mods)
        if any(t in _FLOAT_TYPES for t in types) and ins.base not in ("ld",):
            return unknown
        if len(ins.dests) != 1 or ins.guard is not None:
            return unknown  # predicated definitions merge with older values
        base = ins.base

        def v(k: int) -> Polynomial:
            return self.value(ops[k], i) if k < len(ops) else unknown

        if base in ("mov", "cvta") and len(ops) == 2 and not ops[1].startswith("{"):
            return v(1)
        if base == "cvt" and len(ops) == 2 and not any(t in _FLOAT_TYPES for t in types):
            return v(1)
        if base == "ld" and _space(ins.mods) == "param" and len(ops) == 2:
            m = re.fullmatch(r"\[\s*([A-Za-z_$][\w$]*)\s*(?:\+\s*0\s*)?\]", ops[1])
            if m and m.group(1) in self.param_symbols and not any(t in _FLOAT_TYPES for t in types):
                return Polynomial.symbol(self.param_symbols[m.group(1)])
            return unknown
        if base in ("add", "sub", "mul", "mad", "shl", "neg", "and", "or", "xor", "shr", "div", "rem", "not"):
            return self._arith(ins, i, reg, unknown)
        return unknown

    def _arith(self, ins: _Instr, i: int, reg: str, unknown: Polynomial) -> Polynomial:
        base, mods, ops = ins.base, ins.mods, ins.operands
        vals = [self.value(o, i) for o in ops[1:]]
        consts = [x.constant_value() for x in vals]
        if base == "add" and len(vals) == 2 and "cc" not in mods:
            return vals[0] + vals[1]
        if base == "sub" and len(vals) == 2 and "cc" not in mods:
            return vals[0] - vals[1]
        if base == "neg" and len(vals) == 1:
            return -vals[0]
        if base == "mul" and len(vals) == 2 and ("lo" in mods or "wide" in mods):
            return vals[0] * vals[1]
        if base == "mad" and len(vals) == 3 and ("lo" in mods or "wide" in mods) and "cc" not in mods:
            return vals[0] * vals[1] + vals[2]
        if base == "shl" and len(vals) == 2 and consts[1] is not None and 0 <= consts[1] < 64:
            return vals[0] * (2 ** int(consts[1]))
        if all(c is not None and c.denominator == 1 for c in consts):
            return self._fold(base, [int(c) for c in consts], unknown)  # type: ignore[arg-type]
        if base == "and" and len(vals) == 2:
            for x, mask in ((vals[0], consts[1]), (vals[1], consts[0])):
                if mask is not None and mask.denominator == 1:
                    return self._masked(x, int(mask), reg, i, unknown)
        divisor = consts[1] if len(consts) == 2 else None
        if divisor is not None and divisor.denominator == 1 and divisor > 0:
            # x >> k, x / c, x % c by constants (non-negative x assumed): x/c minus a fraction in
            # [0, (c-1)/c], and a remainder in [0, c-1] — bounded values the trip counts can use.
            c = 2 ** int(divisor) if base == "shr" and divisor < 64 else (int(divisor) if base in ("div", "rem") else 0)
            name, block = f"~{reg}#{i}", self.instrs[i].block
            if c > 1 and base in ("shr", "div"):
                frac = self._range(name, 0, Fraction(c - 1, c), f"frac({self.plain(vals[0])}/{c})", block)
                return vals[0] * Fraction(1, c) - frac
            if c > 1 and base == "rem":
                return self._range(name, 0, c - 1, f"({self.plain(vals[0])} % {c})", block)
        return unknown

    @staticmethod
    def _fold(base: str, c: list[int], unknown: Polynomial) -> Polynomial:
        try:
            if base == "and" and len(c) == 2:
                return _p(c[0] & c[1])
            if base == "or" and len(c) == 2:
                return _p(c[0] | c[1])
            if base == "xor" and len(c) == 2:
                return _p(c[0] ^ c[1])
            if base == "shr" and len(c) == 2 and 0 <= c[1] < 64:
                return _p(c[0] >> c[1])
            if base == "div" and len(c) == 2 and c[1]:
                return _p(int(c[0] / c[1]) if abs(c[0]) < 2 ** 52 else c[0] // c[1])
            if base == "rem" and len(c) == 2 and c[1]:
                return _p(int(math.fmod(c[0], c[1])))
            if base == "not" and len(c) == 1:
                return _p(~c[0])
        except (OverflowError, ValueError):
            pass
        return unknown

    def _masked(self, x: Polynomial, mask: int, reg: str, i: int, unknown: Polynomial) -> Polynomial:
        """`x & (2^k-1)` is a value in [0, 2^k-1]; `x & ~(2^k-1)` is x minus such a value
        (the remainder and the main count of a loop unrolled k times)."""
        block = self.instrs[i].block
        for width in (32, 64):
            full = (1 << width) - 1
            m = mask & full
            low = m + 1
            if m and low & m == 0:  # mask = 2^k - 1
                return self._range(f"~{reg}#{i}", 0, m, f"({self.plain(x)} & {m})", block)
            for top in (full, full >> 1):  # ~(2^k-1), with or without the sign bit
                rest = top & ~m
                if m & ~top == 0 and (rest + 1) & rest == 0 and rest:
                    return x - self._range(f"~{reg}#{i}", 0, rest, f"({self.plain(x)} & {rest})", block)
        return unknown

    def readable(self, poly: Polynomial) -> Polynomial:
        """Ranged symbols replaced by their text, special registers by CUDA names, for messages."""
        for s in poly.symbols:
            if s in self.ranges:
                poly = poly.substitute(s, Polynomial.symbol(self.ranges[s].text))
            elif _is_special(s):
                poly = poly.substitute(s, Polynomial.symbol(_cuda_name(s)))
        return poly

    def plain(self, poly: Polynomial) -> str:
        text = self.readable(poly).format()
        return text if re.fullmatch(r"[\w@$%.]+", text) else f"({text})"

    def _range(self, name: str, low: int | Fraction, high: int | Fraction, text: str, home: int) -> Polynomial:
        self.ranges[name] = _Range(Fraction(low), Fraction(high), text, home)
        return Polynomial.symbol(name)




# ------------------------------------------------------------------------------------------------
# Trip counts.
# ------------------------------------------------------------------------------------------------

_NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le",
           "lo": "hs", "hs": "lo", "ls": "hi", "hi": "ls"}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@dataclass
class _Trip:
    count: TripCount
    note: str | None  # assumption text, when the count is not exact


class _Unknown(Exception):
    """Why a trip count could not be derived, and the loop test it was derived from."""

    def __init__(self, reason: str, source: str = ""):
        super().__init__(reason)
        self.reason, self.source = reason, source


def _trip_count(an: _Analysis, header: int, default: int, where: str) -> _Trip:
    try:
        return _derive_trip(an, header, where)
    except _Unknown as why:
        return _Trip(TripCount("unknown", _p(default), why.source),
                     f"{where}: trip count unknown ({why.reason}); assumed {default} iterations")


def _derive_trip(an: _Analysis, header: int, where: str) -> _Trip:
    info = an.loops[header]
    if len(info.latches) != 1:
        raise _Unknown("several back edges")
    latch = info.latches[0]
    idom = an.idom
    exiting = [b for b in sorted(info.body, reverse=True)
               if any(s not in info.body for s in an.blocks[b].succs)]
    if not exiting:
        raise _Unknown("no exit")
    candidates = [b for b in exiting if _dominates(idom, b, latch)]
    if not candidates:
        raise _Unknown("the exit test does not run on every iteration")
    last_error: _Unknown | None = None
    for exit_block in candidates:
        try:
            trip = _trip_from_exit(an, header, exit_block, where)
        except _Unknown as why:
            last_error = why
            continue
        if len(exiting) > 1:
            more = f"{where}: loop has {len(exiting) - 1} other exit(s); counted as if it ran to its bound"
            kind = "bounded" if trip.count.kind in ("constant", "symbolic") else trip.count.kind
            trip = _Trip(TripCount(kind, trip.count.iterations, trip.count.source_text),
                         f"{trip.note}; {more}" if trip.note else more)
        return trip
    assert last_error is not None
    raise last_error


def _trip_from_exit(an: _Analysis, header: int, exit_block: int, where: str) -> _Trip:
    block = an.blocks[exit_block]
    term = an.instrs[block.instrs[-1]] if block.instrs else None
    if term is None or term.base != "bra" or term.guard is None or not term.operands:
        raise _Unknown("the loop exit is not a conditional branch")
    body = an.loops[header].body
    taken = [s for s in block.succs if an.blocks[s].name == term.operands[0].strip()]
    stays_when_taken = bool(taken) and taken[0] in body
    continue_if_true = stays_when_taken != term.guard_negated
    pred = term.guard
    defs = an.reaching(pred, block.instrs[-1])
    if len(defs) != 1:
        raise _Unknown(f"predicate {pred} has {len(defs)} reaching definitions")
    setp_index, _ = an.defs[defs[0]]
    setp = an.instrs[setp_index]
    if setp.base != "setp" or len(setp.operands) != 3 or not setp.mods:
        raise _Unknown(f"exit predicate is computed by {setp.opcode}", setp.text)
    if any(t in _FLOAT_TYPES for t in _types(setp.mods)):
        raise _Unknown("floating-point loop test", setp.text)
    cmp = setp.mods[0]
    if cmp not in _NEGATE:
        raise _Unknown(f"unsupported compare {cmp}", setp.text)
    if "|" in setp.operands[0] and setp.operands[0].split("|")[1].strip() == pred:
        cmp = _NEGATE[cmp]  # the complement predicate of `setp %p|%q`
    if not continue_if_true:
        cmp = _NEGATE[cmp]
    cmp = _UNSIGNED.get(cmp, cmp)
    index = f"@{an.blocks[header].name}"
    a = an.value(setp.operands[1], setp_index)
    b = an.value(setp.operands[2], setp_index)
    split = _linear(a - b, index)
    if split is None or not an.invariant_in(split[0], header):
        simulated = _simulate(an, header, setp_index, cmp)
        if simulated is not None:
            return _finish_trip(an, header, _p(simulated), setp, where, "")
        if split is None:
            raise _Unknown("test is not linear in the iteration", setp.text)
        raise _Unknown("bound changes inside the loop", setp.text)
    c0, c1 = split
    step = c1.constant_value()
    if step is None:
        return _grid_stride(an, header, c0, c1, cmp, setp, where)
    if step == 0:
        raise _Unknown("no induction variable in the test", setp.text)
    count = _count(cmp, -c0 * (Fraction(1) / step), step)
    if count is None:
        raise _Unknown(f"compare {cmp} never reaches its bound with step {step}", setp.text)
    return _finish_trip(an, header, count + 1, setp, where, "")


_RECURRENCES = {"shr": lambda x, c: x >> c, "shl": lambda x, c: x << c, "mul": lambda x, c: x * c,
                "div": lambda x, c: int(x / c), "add": lambda x, c: x + c, "sub": lambda x, c: x - c}
_COMPARE = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
            "ge": lambda x, y: x >= y, "ne": lambda x, y: x != y, "eq": lambda x, y: x == y}
_SIMULATION_LIMIT = 1 << 16


def _simulate(an: _Analysis, header: int, setp_index: int, cmp: str) -> int | None:
    """Constant start, constant bound, `r = r op c` each iteration (`s >>= 1` tree reductions):
    run the recurrence and count. Returns the trip count or None."""
    setp = an.instrs[setp_index]
    flipped = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "ne": "ne", "eq": "eq"}
    for k in (1, 2):
        operand, other = setp.operands[k].strip(), setp.operands[3 - k].strip()
        bound = an.value(other, setp_index).constant_value()
        if bound is None or bound.denominator != 1:
            continue
        test = _COMPARE[cmp if k == 1 else flipped[cmp]]
        found = _tested_recurrence(an, header, operand, setp_index)
        if found is None:
            continue
        x, step, post = found
        try:
            for trip in range(1, _SIMULATION_LIMIT):
                if not test(step(x) if post else x, int(bound)):
                    return trip
                x = step(x)
                if abs(x) > 1 << 64:
                    return None
        except (ValueError, ZeroDivisionError, OverflowError):
            return None
        return None
    return None


def _tested_recurrence(an: _Analysis, header: int, operand: str, at: int):
    """The loop test reads `operand`; if it is a register carried around the loop as
    r ← r op c (directly, or through `x = r op c; mov r, x`) from a constant start, return
    (start, the update as a function, whether the test sees the updated value)."""
    body = an.loops[header].body
    defs = an.reaching(operand, at)
    # the test reads `x = r op c` computed this iteration
    if len(defs) == 1 and an.instrs[an.defs[defs[0]][0]].block in body:
        upd_index = an.defs[defs[0]][0]
        update = _update(an, upd_index)
        if update is not None and update[0] != operand:
            carried = _carried(an, header, update[0], operand)
            if carried is not None:
                return carried, update[1], True
    carried_start = _carried(an, header, operand, None)
    if carried_start is None:
        return None
    inside = [d for d in defs if an.instrs[an.defs[d][0]].block in body]
    if len(inside) != 1:
        return None
    own = _update(an, an.defs[inside[0]][0])
    step = own[1] if own is not None and own[0] == operand else _through_move(an, inside[0], operand)
    if step is None:
        return None
    return carried_start, step, len(defs) == 1


def _update(an: _Analysis, index: int):
    """`op x, r, c` with a constant c → (r, λ r: r op c)."""
    ins = an.instrs[index]
    if (ins.base not in _RECURRENCES or ins.guard is not None or len(ins.operands) != 3
            or any(t in _FLOAT_TYPES for t in _types(ins.mods)) or "hi" in ins.mods):
        return None
    c = an.value(ins.operands[2], index).constant_value()
    if c is None or c.denominator != 1:
        return None
    op, c_int = _RECURRENCES[ins.base], int(c)
    return ins.operands[1].strip(), (lambda r: op(r, c_int))


def _through_move(an: _Analysis, d: int, reg: str):
    """`mov reg, x` where x = reg op c earlier in the iteration → the update of reg."""
    index = an.defs[d][0]
    ins = an.instrs[index]
    if ins.base != "mov" or len(ins.operands) != 2 or ins.guard is not None:
        return None
    src_defs = an.reaching(ins.operands[1].strip(), index)
    if len(src_defs) != 1:
        return None
    update = _update(an, an.defs[src_defs[0]][0])
    return update[1] if update is not None and update[0] == reg else None


def _carried(an: _Analysis, header: int, reg: str, via: str | None) -> int | None:
    """Constant value `reg` has when the loop is entered, if its only in-loop definition is its
    update (`reg op= c`, or `mov reg, via`)."""
    body = an.loops[header].body
    inside = [d for d in an.defs_of.get(reg, ()) if an.instrs[an.defs[d][0]].block in body]
    if len(inside) != 1:
        return None
    ins = an.instrs[an.defs[inside[0]][0]]
    if via is not None and not (ins.base == "mov" and len(ins.operands) == 2 and ins.operands[1].strip() == via):
        return None
    entering = [d for d in an.defs_of.get(reg, ()) if an.rd_in[header] >> d & 1 and d != inside[0]]
    values = {an.of_def(d).constant_value() for d in entering}
    if len(values) != 1 or None in values:
        return None
    value = next(iter(values))
    return int(value) if value is not None and value.denominator == 1 else None


def _count(cmp: str, t: Polynomial, step: Fraction) -> Polynomial | None:
    """Back edges taken while `c0 + c1·k <cmp> 0` holds for k = 0, 1, … (t = −c0/c1)."""
    tc = t.constant_value()
    if cmp in ("lt", "gt") and (step > 0) == (cmp == "lt"):
        return _p(max(0, math.ceil(tc))) if tc is not None else t  # ⌈t⌉ ≈ t for symbols
    if cmp in ("le", "ge") and (step > 0) == (cmp == "le"):
        return _p(max(0, math.floor(tc) + 1)) if tc is not None else t + 1
    if cmp == "ne":
        if tc is not None and (tc < 0 or tc.denominator != 1):
            return None
        return t
    return None


def _grid_stride(an: _Analysis, header: int, c0: Polynomial, c1: Polynomial, cmp: str, setp: _Instr,
                 where: str) -> _Trip:
    """Step = k·blockDim·gridDim (a grid- or block-stride loop): each thread runs about
    bound/step iterations, which a polynomial cannot say; count the whole grid's iterations."""
    if len(c1.terms) != 1:
        raise _Unknown("step is not a constant", setp.text)
    mono, k = c1.terms[0]
    if k <= 0 or not mono or not all(_GRID_SIZES.match(s) for s, _ in mono) or cmp not in ("lt", "le", "ne"):
        raise _Unknown("step is not a constant", setp.text)
    stride = "·".join(_cuda_name(s) + (f"^{p}" if p > 1 else "") for s, p in mono)
    remaining = -c0
    per_grid = Polynomial(tuple((m, c) for m, c in remaining.terms
                                if not any(_is_special(s) for s, _ in m)))
    per_thread = Polynomial(tuple((m, c) for m, c in remaining.terms if dict(m).keys() >= dict(mono).keys()))
    if not per_grid.is_zero:
        total = per_grid * (Fraction(1) / k)
        note = (f"{where}: grid-stride loop (step {stride}): counted as {total.format()} iterations, the work "
                f"of all threads together; each thread runs about 1/({stride}) of them")
        return _finish_trip(an, header, total, setp, where, note, kind="bounded")
    quotient = Polynomial(tuple((tuple((s, p - dict(mono).get(s, 0)) for s, p in m if p - dict(mono).get(s, 0)), c / k)
                                for m, c in per_thread.terms))
    count = _count(cmp, quotient, Fraction(1))
    if count is None:
        raise _Unknown("stride loop never reaches its bound", setp.text)
    note = f"{where}: stride loop (step {stride}) over a bound in the same units; thread offsets ignored"
    return _finish_trip(an, header, count + 1, setp, where, note, kind="bounded")


def _cuda_name(special: str) -> str:
    m = re.fullmatch(r"%(\w+)\.([xyz])", special)
    if m and m.group(1) in _CUDA_NAMES:
        return f"{_CUDA_NAMES[m.group(1)]}.{m.group(2)}"
    return special


def _finish_trip(an: _Analysis, header: int, trip: Polynomial, setp: _Instr, where: str, note: str,
                 kind: str | None = None) -> _Trip:
    """Bound ranged symbols (n & 3, threadIdx.x) by their extremes, check what symbols remain."""
    shown = an.readable(trip)
    source = f"{setp.text} → {shown.format()}"
    bounded: list[str] = []
    for s in sorted(trip.symbols):
        if s in an.ranges or s in _SPECIAL_RANGES:
            low, high = ((an.ranges[s].low, an.ranges[s].high) if s in an.ranges else _SPECIAL_RANGES[s])
            coeffs = _coefficients(trip, s) or {}
            if any(k > 1 for k in coeffs) or (1 in coeffs and coeffs[1].constant_value() is None):
                raise _Unknown("trip count depends non-linearly on a bounded value", source)
            c = coeffs.get(1, Polynomial()).constant_value() or Fraction(0)
            extreme = high if c > 0 else low
            trip = trip.substitute(s, _p(extreme))
            text = an.ranges[s].text if s in an.ranges else _cuda_name(s)
            bounded.append(f"{text} = {extreme}")
    ancestors = set()
    p = an.loops[header].parent
    while p is not None:
        ancestors.add(f"@{an.blocks[p].name}")
        p = an.loops[p].parent
    for s in trip.symbols:
        if s.startswith("@") and s not in ancestors:
            raise _Unknown("depends on another loop's index", source)
        if s.startswith(("?", "~", "%", "&")):
            raise _Unknown("bound is not a parameter or constant", source)
    value = trip.constant_value()
    if value is not None and value < 1:
        raise _Unknown(f"computed {value} iterations", source)
    if bounded:
        note_b = f"{where}: at most {trip.format()} iterations (exact: {shown.format()}; took {', '.join(bounded)})"
        note = f"{note}; {note_b}" if note else note_b
        kind = "bounded"
    if kind is None:
        kind = "constant" if value is not None else "symbolic"
    return _Trip(TripCount(kind, trip, source), note or None)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# Memory access patterns.
# ------------------------------------------------------------------------------------------------

_ADDRESS = re.compile(r"\[\s*([^\]+]+?)\s*(?:\+\s*(-?\s*(?:0[xX][0-9a-fA-F]+|\d+)))?\s*\]\Z")
_LOADS_WITH_VALUES = ("global", "shared", "local", "const", "generic", "tex")


def _address_operand(ins: _Instr) -> str | None:
    for op in ins.operands:
        if op.strip().startswith("["):
            return op.strip()
    return None


def _derives_from_load(an: _Analysis, operand: str, at: int, seen: set[int], budget: list[int]) -> bool:
    """Does the value in `operand` depend (through arithmetic) on a value loaded from memory?"""
    if not operand.startswith("%") or budget[0] <= 0:
        return False
    for d in an.reaching(operand, at):
        if d in seen:
            continue
        seen.add(d)
        budget[0] -= 1
        i, _ = an.defs[d]
        ins = an.instrs[i]
        if ins.base in ("ld", "ldu", "atom", "tex", "suld") and _space(ins.mods) in _LOADS_WITH_VALUES:
            return True
        for op in ins.operands[1:]:
            for reg in _REG.findall(op):
                if not _is_special(reg) and _derives_from_load(an, reg, i, seen, budget):
                    return True
    return False


def _memory_access(an: _Analysis, i: int, space: str, access_bytes: int) -> MemoryAccess:
    ins = an.instrs[i]
    if space == "param":
        return MemoryAccess("invariant", access_bytes, None, space)
    operand = _address_operand(ins)
    m = _ADDRESS.match(operand) if operand else None
    if m is None:
        return MemoryAccess("unknown", access_bytes, None, space)
    base = m.group(1).strip()
    if base.startswith("%") and _derives_from_load(an, base, i, set(), [200]):
        return MemoryAccess("indirect", access_bytes, None, space)
    offset = _int_literal(m.group(2).replace(" ", "")) if m.group(2) else 0
    address = an.value(base, i) + _p(offset or 0)
    header = an.innermost_loop(ins.block)
    stride: Polynomial | None = None
    split = None
    if header is not None:
        split = _linear(address, f"@{an.blocks[header].name}")
        if split is not None and split[1].constant_value() is not None and an.invariant_in(split[0], header):
            stride = split[1]
    tid = _linear(address, "%tid.x")
    if tid is not None and tid[1].constant_value() == access_bytes:
        return MemoryAccess("unit", access_bytes, stride, space)  # consecutive threads, consecutive bytes
    if header is not None:
        if an.invariant_in(address, header):
            return MemoryAccess("invariant", access_bytes, _p(0), space)
        if stride is not None:
            step = stride.constant_value()
            pattern = "unit" if step is not None and abs(step) == access_bytes else "strided"
            return MemoryAccess(pattern, access_bytes, stride, space)  # type: ignore[arg-type]
        return MemoryAccess("unknown", access_bytes, None, space)
    if not any(s.startswith(("?", "~", "%")) for s in address.symbols):
        return MemoryAccess("invariant", access_bytes, None, space)  # same address in every thread
    return MemoryAccess("unknown", access_bytes, None, space)


# ------------------------------------------------------------------------------------------------
# Functions.
# ------------------------------------------------------------------------------------------------

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
             display_names: Mapping[str, str] | None = None) -> tuple[list[FunctionIR], list[AnalysisError]]:
    """Read PTX text into one `FunctionIR` per function defined in it.

    Source lines: with `loc_files` (paths named by `.file` that are the analysed source), lines
    come from `.loc` directives (inlined code counts at its call site); without, instructions
    carry their own PTX line numbers (the PTX file is what is analysed).
    `parameter_names` maps a function's PTX name to its source parameter names (index order);
    `display_names` maps PTX names to demangled names. Never raises on malformed input.
    """
    tokens = _tokenize(text)
    module = _parse_module(tokens)
    errors = [AnalysisError(file, line if loc_files is None else None, msg) for line, msg in module.errors]
    arch, arch_note = arch_for_target(module.target)
    wanted = {os.path.normpath(p) for p in loc_files} if loc_files is not None else None
    source_ids = ({k for k, path in module.files.items() if os.path.normpath(path) in wanted}
                  if wanted is not None else set())
    lines = text.splitlines()
    functions: list[FunctionIR] = []
    for raw in module.functions:
        reader = _FunctionReader(raw, file, language, arch, default_trip_count, wanted is not None, source_ids,
                                 (parameter_names or {}).get(raw.name), (display_names or {}).get(raw.name))
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
    def __init__(self, raw: _RawFunction, file: str, language: str, arch: str, default_trip_count: int,
                 use_loc: bool, source_ids: set[int], source_params: Sequence[str] | None,
                 display_name: str | None):
        self.raw, self.file, self.language, self.arch = raw, file, language, arch
        self.default = default_trip_count
        self.use_loc, self.source_ids = use_loc, source_ids
        self.source_params = list(source_params) if source_params is not None else None
        self.display_name = display_name
        self.errors: list[AnalysisError] = []
        self.assumptions: list[str] = []
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
    def instructions(self) -> tuple[list[_Instr | str], list[int]]:
        """Instructions and labels (as str) in order, and every source line seen in `.loc`."""
        items: list[_Instr | str] = []
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
                ins = _parse_instr(tok.text, tok.line, src_line if self.use_loc else tok.line, asm_regs)
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
        instrs, blocks = self.build_blocks(items)
        if blocks is None:
            return None, self.errors
        idom = _dominators(blocks)
        loops, irreducible = _natural_loops(blocks, idom)
        for u, h in irreducible:
            self.assumptions.append(f"branch from {blocks[u].name} back to {blocks[h].name} enters a loop "
                                    f"at more than one place (irreducible); not counted as a loop")
        an = _Analysis(instrs, blocks, idom, loops, param_symbols)
        model_loops: dict[str, Loop] = {}
        for h in sorted(loops, key=lambda x: (loops[x].depth, x)):
            info = loops[h]
            line = self.loop_line(an, info)
            where = f"loop at line {line} ({blocks[h].name})" if line else f"loop {blocks[h].name}"
            trip = _trip_count(an, h, self.default, where)
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

    def loop_line(self, an: _Analysis, info: _LoopInfo) -> int | None:
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

    def model_instruction(self, an: _Analysis, i: int) -> Instruction:
        ins = an.instrs[i]
        cls, space, access_bytes = _classify(ins)
        access = _memory_access(an, i, space, access_bytes) if space is not None else None
        callee = _callee(ins) if ins.base == "call" else None
        return Instruction(cls, ins.src_line, ins.opcode, callee, access)

    def build_blocks(self, items: list[_Instr | str]) -> tuple[list[_Instr], list[_Block] | None]:
        targets: set[str] = set()
        for item in items:
            if isinstance(item, _Instr) and item.base == "bra" and item.operands:
                targets.add(item.operands[0].strip())
            elif isinstance(item, _Instr) and item.base == "brx" and len(item.operands) > 1:
                targets.update(self.branch_tables.get(item.operands[1].strip(), ()))
        instrs: list[_Instr] = []
        blocks: list[_Block] = []
        labels: dict[str, int] = {}
        current: _Block | None = None
        used_names = {x for x in items if isinstance(x, str)}

        def fresh() -> str:
            k = len(blocks)
            while f"%bb.{k}" in used_names:
                k += 1
            used_names.add(f"%bb.{k}")
            return f"%bb.{k}"

        for item in items:
            if isinstance(item, str):
                if item not in targets:
                    continue  # debug labels ($L__tmp0) do not start blocks
                if current is not None and not current.instrs and current.name.startswith("%bb.") and blocks:
                    used_names.discard(current.name)
                    current.name = item
                else:
                    current = _Block(item, [])
                    blocks.append(current)
                labels[item] = len(blocks) - 1
                continue
            if current is None:
                current = _Block(fresh(), [])
                blocks.append(current)
            item.block = len(blocks) - 1
            current.instrs.append(len(instrs))
            instrs.append(item)
            if item.base in ("bra", "brx", "ret", "exit", "trap"):
                current = None
        if not blocks:
            blocks.append(_Block("%bb.0", []))
        for b, block in enumerate(blocks):
            last = instrs[block.instrs[-1]] if block.instrs else None
            nxt = [b + 1] if b + 1 < len(blocks) else []
            if last is None:
                block.succs = nxt
            elif last.base == "bra":
                target = last.operands[0].strip() if last.operands else ""
                if target not in labels:
                    self.errors.append(AnalysisError(self.file, self.error_line(last.ptx_line, last.src_line),
                                                     f"{self.raw.name}: branch to undefined label {target!r}"))
                    return instrs, None
                block.succs = [labels[target]] + (nxt if last.guard is not None else [])
            elif last.base == "brx":
                names = self.branch_tables.get(last.operands[1].strip(), []) if len(last.operands) > 1 else []
                found = [labels[t] for t in names if t in labels]
                if not found:
                    self.assumptions.append(f"indirect branch {last.text!r}: targets unknown; treated as falling through")
                    found = nxt
                block.succs = found
            elif last.base in ("ret", "exit", "trap"):
                block.succs = nxt if last.guard is not None else []
            else:
                block.succs = nxt
            block.succs = list(dict.fromkeys(block.succs))
        for b, block in enumerate(blocks):
            for s in block.succs:
                blocks[s].preds.append(b)
        return instrs, blocks
