"""Per-operation energy model shared by the derive scripts (all values modelled).

Grounding: M. Horowitz, "Computing's energy problem (and what we can do about it)",
ISSCC 2014, keynote table for a 45 nm process at 0.9 V:
  32-bit int add 0.1 pJ, 32-bit int mult 3.1 pJ, 32-bit FP add 0.9 pJ, 32-bit FP mult 3.7 pJ,
  8 KB SRAM 64-bit read 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ, DRAM 64-bit access 1.3-2.6 nJ,
  and ~70 pJ per instruction for fetch/decode/rename/schedule/register file/retire
  ("instruction overhead") on an out-of-order core.

Choices (documented in every generated table):
- Values are kept at 45 nm, unscaled. Process scaling to 4-5 nm would lower dynamic energy
  several-fold, while whole-socket power (static, uncore, clock) that these numbers exclude
  is of the same order or larger on a loaded server core; the 45 nm dynamic figures are a
  documented middle ground, good for ranking, not for metering.
- 64-bit widths are extrapolated from the 32-bit entries: adders scale linearly with width,
  multipliers quadratically with the mantissa/operand width.
- Iterative (non-pipelined) divide/sqrt: each busy cycle costs half a multiplier of the
  operand width (carry-save adder array + quotient selection), times the latency in cycles.
"""
from __future__ import annotations

HOROWITZ = ("M. Horowitz, 'Computing's energy problem (and what we can do about it)', "
            "ISSCC 2014, 45 nm / 0.9 V energy table")

INSTRUCTION_OVERHEAD_PJ = 70.0  # fetch/decode/schedule/RF/retire per CPU instruction

INT_ADD_PJ = {32: 0.1, 64: 0.2}
INT_MUL_PJ = {32: 3.1, 64: 3.1 * 4}  # quadratic in operand width
FP_ADD_PJ = {16: 0.4, 32: 0.9, 64: 0.9 * 53 / 24}  # linear in mantissa width (24 -> 53 bits)
FP_MUL_PJ = {16: 1.1, 32: 3.7, 64: 3.7 * (53 / 24) ** 2}  # quadratic in mantissa width

SRAM_8KB_PJ = 10.0
SRAM_32KB_PJ = 20.0
SRAM_1MB_PJ = 100.0
# Horowitz's SRAM entries roughly double per 4x capacity (8 KB -> 32 KB -> 1 MB: x2, x5 over 32x);
# a 32-36 MB last-level cache extrapolates to ~5x the 1 MB figure (modelled).
SRAM_32MB_PJ = 500.0
DRAM_RANDOM_PJ = 2000.0  # one activation-dominated random access, middle of 1.3-2.6 nJ
DRAM_STREAM_LINE_PJ = 1300.0  # one 64-byte line on an open row: low end of the range

# A representative vector lane operation (between FP add and FP mult, 64-bit) used to turn
# "the same instruction on W bits" into an energy multiplier: (overhead + lanes * op) / (overhead + op).
VECTOR_LANE_OP_PJ = 10.0


def vector_energy_multiplier(width_bits: int) -> float:
    lanes = width_bits / 64
    return (INSTRUCTION_OVERHEAD_PJ + lanes * VECTOR_LANE_OP_PJ) / (INSTRUCTION_OVERHEAD_PJ + VECTOR_LANE_OP_PJ)


def iterative_unit_pj(latency_cycles: float, mult_pj: float) -> float:
    """Divide/sqrt: half a multiplier of the operand width per busy cycle."""
    return latency_cycles * mult_pj / 2
