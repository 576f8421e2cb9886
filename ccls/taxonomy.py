"""Instruction classes: the keys shared by readers, counts and cost tables.

A class key is ``base[.qualifier][@vWIDTH]``:
- ``base`` is one of BASE_CLASSES below;
- ``.qualifier`` refines it: memory tier after tier estimation (``load.L1`` … ``load.DRAM``,
  ``load.stream``, ``load.DRAM.strided``),
  PTX precision (``fp_fma.f16``) or state space (``load.global``), a CPython opcode family
  (``py.binary_op``);
- ``@vWIDTH`` marks a vector operation of WIDTH bits (``fp_mul@v256``).

Cost lookup falls back from the most to the least specific key (see `ccls.costing`).
"""
from __future__ import annotations

import functools

BASE_CLASSES: dict[str, str] = {
    "int_add": "integer add/sub",
    "int_logic": "integer and/or/xor/not",
    "int_shift": "integer shift/rotate",
    "int_cmp": "integer compare",
    "int_mul": "integer multiply",
    "int_div": "integer divide/remainder",
    "fp_add": "floating-point add/sub/compare",
    "fp_mul": "floating-point multiply",
    "fp_fma": "fused multiply-add",
    "fp_div": "floating-point divide",
    "fp_sqrt": "square root",
    "fp_transcendental": "exp/log/sin/cos/pow and friends",
    "convert": "int↔fp and width conversions",
    "select": "conditional select / move",
    "address": "address arithmetic (GEP), often folded into addressing modes",
    "load": "memory load (tier qualified after estimation: L1/L2/L3/DRAM)",
    "store": "memory store (tier qualified after estimation)",
    "branch": "conditional or unconditional branch, switch",
    "call": "direct call (callee named)",
    "call_indirect": "indirect call through a pointer",
    "return": "function return",
    "atomic": "atomic read-modify-write / cmpxchg",
    "fence": "memory fence",
    "vector_shuffle": "vector shuffle/insert/extract",
    # PTX-only families
    "mma": "tensor-core matrix multiply-accumulate",
    "sfu": "special-function unit op (rcp/rsqrt/sin/cos/ex2/lg2 approx)",
    "barrier": "block-level barrier / warp sync",
    # CPython
    "py": "CPython bytecode instruction (qualified by opcode family)",
    "other": "anything not classified above",
}

DIVISION_CLASSES = ("int_div", "fp_div")
# The memory tier of lines the hardware prefetcher streams in at bandwidth (``load.stream``).
STREAM_TIER = "stream"
# DRAM lines taken one per load at a regular stride of two lines or more (``load.DRAM.strided``).
STRIDED_TIER = "DRAM.strided"
# Memory tiers whose misses do not wait for each other (streams, independent and strided misses,
# not a pointer chase's): an out-of-order core computes while they are in flight, from L2 and L3 as
# from DRAM (the ECM model of AMD Zen cores: every level's transfers overlap the core's work). A crowded column
# walk's misses are independent too (its classes price a walk with nothing else to do: the pace of
# its misses); an aliased one's load waits for an older store, and stays on top of the compute.
OVERLAPPED_TIERS = (STREAM_TIER, "DRAM", STRIDED_TIER, "L2", "L3", "L2.crowded", "L3.crowded")


def overlaps_compute(cls: str) -> bool:
    """A load or store class whose miss time the core can spend computing."""
    base, qualifier, _ = split(cls)
    return base in ("load", "store") and qualifier in OVERLAPPED_TIERS


@functools.lru_cache(maxsize=4096)  # a few hundred distinct keys, asked for tens of thousands of times
def split(cls: str) -> tuple[str, str | None, int | None]:
    """``"fp_fma.f16@v128"`` → ``("fp_fma", "f16", 128)``."""
    width: int | None = None
    if "@v" in cls:
        cls, _, w = cls.partition("@v")
        width = int(w)
    base, _, qualifier = cls.partition(".")
    return base, (qualifier or None), width


def with_vector(cls: str, width_bits: int | None) -> str:
    return f"{cls}@v{width_bits}" if width_bits else cls
