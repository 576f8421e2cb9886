"""Baseline cost models computed from ccls's executed counts per IR instruction class.

All three see exactly the same executed IR instruction counts as ccls (the JSON's "counts"), so
they differ from ccls only in how an instruction is priced and in having no machine lowering:
- B1 uniform: every IR instruction costs 1 (the executed IR instruction count).
- B2 memory ×10: loads and stores cost 10, everything else 1.
- B3 gas-like: one flat price per instruction class, modelled on the Ethereum yellow paper's
  Frontier fee tiers (W_verylow 3 for ADD/SUB/LT/AND/SHL/MLOAD, W_low 5 for MUL/DIV/MOD,
  W_mid 8 for JUMP, W_high 10 for JUMPI, CALL 40, RETURN 0), with a store priced 20 as a
  "persistent write" tier. The EVM has no floating point, vectors or memory hierarchy, so FP
  add/compare is priced like ADD, FP mul/div/sqrt like MUL/DIV, FMA as MUL+ADD, and vector width
  and memory tier are ignored: one price per instruction, whatever it touches.
"""
from __future__ import annotations

from typing import Mapping

GAS_PRICE_BY_BASE: dict[str, float] = {
    "int_add": 3, "int_logic": 3, "int_shift": 3, "int_cmp": 3, "select": 3, "address": 3, "convert": 3,
    "vector_shuffle": 3, "other": 3,
    "int_mul": 5, "int_div": 5,
    "fp_add": 3, "fp_mul": 5, "fp_fma": 8, "fp_div": 5, "fp_sqrt": 5, "fp_transcendental": 10,
    "load": 3, "store": 20, "atomic": 20, "fence": 8,
    "branch": 8, "call": 40, "call_indirect": 40, "return": 0,
}
_DEFAULT_GAS = 3.0  # classes absent above (PTX/CPython families never appear in C kernels)

MEMORY_BASES = ("load", "store")


def base_of(cls: str) -> str:
    """``"load.DRAM@v128"`` → ``"load"`` (same grammar as ccls.taxonomy.split)."""
    return cls.partition("@v")[0].partition(".")[0]


def b1_uniform(counts: Mapping[str, float]) -> float:
    return float(sum(counts.values()))


def b2_memory_x10(counts: Mapping[str, float]) -> float:
    return float(sum(n * (10.0 if base_of(c) in MEMORY_BASES else 1.0) for c, n in counts.items()))


def b3_gas(counts: Mapping[str, float]) -> float:
    return float(sum(n * GAS_PRICE_BY_BASE.get(base_of(c), _DEFAULT_GAS) for c, n in counts.items()))


BASELINES = {"B1 uniform": b1_uniform, "B2 mem×10": b2_memory_x10, "B3 gas-like": b3_gas}
