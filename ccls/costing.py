"""Counts x cost table -> raw metric totals (paper eq. 2); pure.

CU_total = Σ_k n_k·CU_k and EU_total = Σ_k n_k·EU_k (eq. 2); CO2 = EU x CI / 3.6e6 and
USD = EU x price / 3.6e6 (paper §3: joules -> kWh), plus core-seconds x the cloud core-hour
price when the region has one.

Deviation from eq. 2, for CPU code lowered to machine code: a per-class sum prices every
instruction at its reciprocal throughput and so cannot see dependency chains or port pressure.
There, the compute part of CU is llvm-mca's simulated cycles of each machine block × its
executions (all loads hitting L1), and what L1 hits cannot cost is added on top: the extra
cycles of loads/stores estimated to miss (tier cost − L1 cost) and branch mispredictions. The
per-class rows are scaled so that they still sum to CU.

In a loop whose misses do not wait for each other (a prefetched stream, independent or strided
misses; not a pointer chase) the core computes while they are in flight, so the loop costs
max(compute, memory), not their sum (how the ECM model describes AMD Zen cores, after Hofmann et
al. 2020 as recalled, not re-read; our dot, divide, sqrt, stride and gather kernels behave so,
while integer-heavy loops on the Zen 4 guest behave closer to the sum). `hidden_by_overlap`
picks, per loop, the smaller side at the evaluation point; it is taken off CU, and off the rows
it belongs to (the memory rows' stalls, or the compute part of every row).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Mapping, Sequence

from ccls.model import Metrics, MemoryOverlap
from ccls.polynomial import Polynomial
from ccls.tables import CostTable, Region
from ccls.taxonomy import overlaps_compute, split, with_vector

JOULES_PER_KWH = 3.6e6
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class ClassBreakdown:
    cls: str
    count: float
    cu: float  # count x CU_k
    energy_joules: float  # count x EU_k
    known: bool  # False: the table has no cost for this class; it contributed 0
    rate: float = 0.0  # CU per execution, as costed (cu_rates): per-line costs and shares use it


@dataclass(frozen=True)
class Hidden:
    """Cycles one loop's overlap hides: its memory stalls (the loop is compute-bound) or its
    compute (it is memory-bound)."""

    loop: str
    cycles: Polynomial
    memory: bool  # True: the memory side is hidden (compute-bound)
    amount: float  # `cycles` at the evaluation point


def hidden_by_overlap(overlaps: Sequence[MemoryOverlap], table: CostTable,
                      evaluate: Callable[[Polynomial], float]) -> list[Hidden]:
    """Per loop with overlapped misses, the smaller of its compute cycles and their stall cycles,
    compared at the evaluation point (`evaluate`), as a polynomial: the cost expression stays
    one polynomial, true at that point and wherever the same side stays the larger."""
    out = []
    for overlap in overlaps:
        transfer = Polynomial()
        for cls, count in overlap.misses.items():
            transfer = transfer + count * _decimal(stall_cu(cls, table))
        compute, stalls = evaluate(overlap.cycles), evaluate(transfer)
        compute_bound = compute >= stalls
        out.append(Hidden(overlap.loop, transfer if compute_bound else overlap.cycles, compute_bound,
                          stalls if compute_bound else compute))
    return out


def _decimal(value: float) -> Fraction:
    """A table figure as its shortest decimal (0.33 -> 33/100), not its binary float."""
    return Fraction(repr(value))


def cost_counts(counts: Mapping[str, float], table: CostTable, region: Region,
                machine_cycles: float | None = None, hidden: Sequence[Hidden] = ()
                ) -> tuple[Metrics, list[ClassBreakdown]]:
    """Raw totals of one function and its per-class breakdown (largest CU first).
    Classes the table cannot cost are listed with known=False and add nothing. With
    `machine_cycles` (llvm-mca), CU = those cycles + stall cycles − what overlap hides
    (`hidden`, from `hidden_by_overlap`; see the module docstring)."""
    rates = cu_rates(counts, table, machine_cycles, hidden)
    rows: list[ClassBreakdown] = []
    for cls, count in counts.items():
        n = float(count)
        if math.isnan(n) or n < 0:
            raise ValueError(f"executed count for {cls!r} must be a non-negative number, got {count!r}")
        cost = table.lookup(cls)
        if cost is None:
            rows.append(ClassBreakdown(cls, n, 0.0, 0.0, False))
        else:
            rows.append(ClassBreakdown(cls, n, n * rates[cls], n * cost.energy_joules, True, rates[cls]))
    rows.sort(key=lambda r: (-r.cu, -r.energy_joules, r.cls))
    cu = math.fsum(r.cu for r in rows)
    energy_joules = math.fsum(r.energy_joules for r in rows)
    energy_kwh = energy_joules / JOULES_PER_KWH
    co2_kg = energy_kwh * region.carbon_kg_per_kwh
    usd = energy_kwh * region.price_usd_per_kwh
    if region.cloud_usd_per_core_hour is not None:
        core_hours = cu / table.clock_hz / SECONDS_PER_HOUR  # CU are core cycles
        usd += core_hours * region.cloud_usd_per_core_hour
    return Metrics(cu=cu, energy_joules=energy_joules, co2_kg=co2_kg, usd=usd), rows


def stall_cu(cls: str, table: CostTable) -> float:
    """Cycles one execution of `cls` costs beyond what a machine-code simulation with all-L1
    hits already counts: a miss's extra latency/bandwidth, a misprediction's whole penalty."""
    base, qualifier, width = split(cls)
    cost = table.lookup(cls)
    if cost is None or qualifier is None:
        return 0.0
    if base in ("load", "store") and qualifier != "L1":
        hit = table.lookup(with_vector(f"{base}.L1", width))
        return max(0.0, cost.cu - (hit.cu if hit is not None else 0.0))
    if base == "branch" and qualifier == "mispredict":
        return cost.cu
    return 0.0


def cu_rates(counts: Mapping[str, float], table: CostTable, machine_cycles: float | None = None,
             hidden: Sequence[Hidden] = ()) -> dict[str, float]:
    """CU per execution of each class: the table's CU; or, with llvm-mca's cycles, each class's
    compute part (CU − stall) scaled so that the compute parts sum to those cycles less the
    compute that overlap hides, plus its stall (an overlapped memory class's stall less its
    share of the stalls overlap hides). Classes the table cannot cost get 0. Totals, per-line
    costs and finding shares all use these."""
    table_cu = {cls: (cost.cu if (cost := table.lookup(cls)) is not None else 0.0) for cls in counts}
    if machine_cycles is None:
        return table_cu
    stalls = {cls: stall_cu(cls, table) for cls in counts}
    compute = math.fsum(float(n) * (table_cu[cls] - stalls[cls]) for cls, n in counts.items())
    hidden_compute = math.fsum(h.amount for h in hidden if not h.memory)
    scale = max(0.0, machine_cycles - hidden_compute) / compute if compute > 0 else 0.0
    overlapped = {cls for cls in counts if overlaps_compute(cls)}
    stalled = math.fsum(float(counts[cls]) * stalls[cls] for cls in overlapped)
    hidden_memory = math.fsum(h.amount for h in hidden if h.memory)
    kept = max(0.0, 1.0 - hidden_memory / stalled) if stalled > 0 else 1.0
    return {cls: (table_cu[cls] - stalls[cls]) * scale + stalls[cls] * (kept if cls in overlapped else 1.0)
            for cls in counts}


def cu_expression(counts: Mapping[str, Polynomial], table: CostTable,
                  machine_cycles: Polynomial | None = None, hidden: Sequence[Hidden] = ()) -> Polynomial:
    """Σ count_k x CU_k as a polynomial in the function's symbols (unknown classes add 0), or,
    with llvm-mca's cycles, those cycles + Σ count_k x stall_k − what overlap hides.
    CU values enter as their shortest decimal (0.33 -> 33/100), not their binary float."""
    total = machine_cycles if machine_cycles is not None else Polynomial()
    for h in hidden:
        total = total - h.cycles
    for cls, count in counts.items():
        cost = table.lookup(cls)
        per = (stall_cu(cls, table) if machine_cycles is not None else cost.cu) if cost is not None else 0.0
        if per:
            total = total + count * _decimal(per)
    return total
