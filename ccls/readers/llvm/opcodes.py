"""Which instruction class an LLVM instruction counts as (`ccls.taxonomy`): by its opcode,
its callee for calls and intrinsics, its type's vector width, and a division by its divisor.
"""
from __future__ import annotations

import re

from ccls.readers.llvm.text import Operand, original_name


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
    return original_name(m.group(1).strip('"'))


def _transcendental(function: str | None) -> str:
    """The class of a C library math call: `fp_transcendental.sinf` names the function (float
    and double versions cost differently), plain `fp_transcendental` where it is not one of
    those (long double, a vector intrinsic)."""
    return f"fp_transcendental.{function}" if function else "fp_transcendental"


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
            base, _, overload = stem.partition(".")
            if base in _TRANSCENDENTAL:
                return _transcendental({"f32": base + "f", "f64": base}.get(overload)), None
            if base.startswith("vector"):
                return "vector_shuffle", None
            return "other", None
        if callee in _TRANSCENDENTAL or (callee.endswith("f") and callee[:-1] in _TRANSCENDENTAL):
            return _transcendental(callee), None
        if callee in ("sqrt", "sqrtf"):
            return "fp_sqrt", None
        return "call", callee
    return _SIMPLE_OPCODES.get(opcode, "other"), None


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


_BULK = ("memcpy", "memmove", "memset")  # the intrinsics' keys (classify names them so)
