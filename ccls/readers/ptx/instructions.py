"""One PTX instruction: parse its text (guard, opcode and modifiers, operands, destination
registers) and classify it into a `ccls.taxonomy` class with its state space and bytes moved."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ccls.readers.ptx.syntax import split_top


FLOAT_TYPES = frozenset({"f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32", "e4m3", "e5m2",
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
class Instr:
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
REGISTER = re.compile(r"%[A-Za-z_$][\w$]*(?:\.[xyz])?")


def parse_instr(text: str, ptx_line: int, src_line: int | None, asm_regs: set[str]) -> Instr | None:
    m = _INSTR.match(text)
    if m is None:
        return None
    opcode = m.group(3)
    parts = opcode.split(".")
    operands = [o for o in split_top(" ".join(m.group(4).split()))]
    instr = Instr(opcode, parts[0], parts[1:], m.group(2), m.group(1) == "!", operands,
                   " ".join(text.split()), ptx_line, src_line)
    if operands and parts[0] not in _NO_DEST and not opcode.startswith(("wmma.store", "tensormap")):
        instr.dests = _registers(operands[0], asm_regs)
    return instr


def _registers(operand: str, asm_regs: set[str]) -> list[str]:
    """Register names in an operand: `%r1`, `{%f1, %f2}`, `%p|%q`, or inline-asm names."""
    found = [r for r in REGISTER.findall(operand) if not is_special(r)]
    found += [w for w in re.findall(r"[A-Za-z_$][\w$]*", operand) if w in asm_regs]
    return found


_SPECIAL = re.compile(r"%(tid|ntid|laneid|warpid|nwarpid|ctaid|nctaid|smid|nsmid|gridid|lanemask_\w+|clock|"
                      r"clock64|globaltimer\w*|envreg\d+|pm\d+\w*|dynamic_smem_size|total_smem_size|"
                      r"aggr_smem_size|cluster\w*|is_explicit_cluster|nclusterid|current_graph_exec|"
                      r"reserved_smem_\w+)(\.[xyz])?\Z")


def is_special(reg: str) -> bool:
    return _SPECIAL.match(reg) is not None


def operand_types(mods: Sequence[str]) -> list[str]:
    return [m for m in mods if m in FLOAT_TYPES or m in _INT_TYPES]


def _precision(base: str, ftype: str) -> str:
    if ftype.endswith("x2"):
        return f"{base}.{ftype[:-2]}@v{_TYPE_BITS[ftype]}"
    return f"{base}.{ftype}"


def state_space(mods: Sequence[str]) -> str:
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
    return len(split_top(operand.strip()[1:-1])) if operand.strip().startswith("{") else 1


def classify(ins: Instr) -> tuple[str, str | None, int]:
    """→ (class key, memory space or None, bytes moved per thread for memory ops)."""
    base, mods = ins.base, ins.mods
    types = operand_types(mods)
    last = types[-1] if types else None
    is_float = last in FLOAT_TYPES
    if base in ("ld", "ldu", "st", "atom", "red"):
        space = state_space(mods)
        bits = _TYPE_BITS.get(last or "b32", 32) * _vector_lanes(mods)
        if base in ("atom", "red"):
            return f"atomic.{space}", space, max(1, bits // 8)
        kind = "load" if base in ("ld", "ldu") else "store"
        width = bits if _vector_lanes(mods) > 1 else None
        return f"{kind}.{space}" + (f"@v{width}" if width else ""), space, max(1, bits // 8)
    if base in ("wmma", "ldmatrix", "stmatrix", "mma", "wgmma"):
        return _classify_matrix(ins)
    if base in ("cp",) and "async" in mods and "global" in [m.split("::")[0] for m in mods]:
        size = int_literal(ins.operands[2]) if len(ins.operands) > 2 else None
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
        return ("call_indirect" if callee(ins) is None else "call"), None, 0
    if base in ("ret", "exit"):
        return "return", None, 0
    if base in ("setp", "set"):
        cmp_type = types[-1] if types else None
        if cmp_type in FLOAT_TYPES:
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
    if base in _INT_ARITH and last not in FLOAT_TYPES:
        return _INT_ARITH[base], None, 0
    return "other", None, 0


def _classify_matrix(ins: Instr) -> tuple[str, str | None, int]:
    base, mods = ins.base, ins.mods
    if base == "wmma" and mods and mods[0] in ("load", "store"):
        space = state_space(mods)
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
    types = operand_types(mods)
    # Input precision: mma.sync …dtype.atype.btype.ctype; wgmma …dtype.atype.btype; wmma.mma lists
    # only D/C types (f16 inputs) unless the inputs are something else (.bf16, .tf32, .s8 …).
    if base == "wmma":
        in_type = types[1] if len(types) == 4 else ("f16" if len(types) == 2 else (types[0] if types else None))
    else:
        in_type = types[1] if len(types) >= 3 else (types[0] if types else None)
    if in_type and in_type.startswith(("e4m3", "e5m2")):
        in_type = "f8"
    return ("mma." + in_type.replace("x2", "")) if in_type else "mma", None, 0


def callee(ins: Instr) -> str | None:
    for op in ins.operands:
        if op.startswith("("):
            continue
        return None if op.startswith("%") else op
    return None


def int_literal(text: str) -> int | None:
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
