"""Counts x cost table -> raw metric totals (paper eq. 2, grounded as below); pure.

CU_total = Σ_k n_k·CU_k (eq. 2), and T = CU / clock_hz the seconds the function holds a core
(an SM for GPU code). The other three metrics are four different things, not multiples of EU:

- EU is the energy roofline (Choi, Bedard, Fowler, Vuduc, "A roofline model of energy", IPDPS
  2013): E = W·ε_op + Q·ε_mem + π₀·T. The per-class energies of the cost table are the first two
  terms (operations; loads and stores at their tier, L1 … DRAM), times the machine's
  dynamic_energy_factor (1 at the central value); π₀ is energy_parts.json's constant power per
  core. A memory-bound and a compute-bound loop of equal time thus differ in energy.
- CO2 follows the Green Software Foundation's SCI (ISO/IEC 21031:2024): operational E × I (the
  region's intensity, J -> kWh) plus embodied M = TE × (T / EL) × (1 / cores), the machine's
  manufacturing carbon shared by the time the function holds one of its cores.
- USD = E × the electricity price + T × a core-hour price (the region's cloud instance, else an
  owned server's write-off, regions.json `instance_default`).

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
from ccls.table_types import CostTable, Region, Span
from ccls.taxonomy import overlaps_compute, split, with_vector

JOULES_PER_KWH = 3.6e6
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_YEAR = 365.25 * 24 * 3600.0
MEMORY_BASES = frozenset({"load", "store"})  # data movement (Q·ε_mem); every other class is an operation


@dataclass(frozen=True)
class MetricParts:
    """Each metric's parts (they sum to the metric): what the hover and JSON `metric_parts` show."""

    seconds: float  # T = CU / clock_hz: time held on one core (or SM)
    compute_joules: float  # dynamic energy of operations, W·ε_op
    memory_joules: float  # dynamic energy of loads and stores at their tier, Q·ε_mem
    static_joules: float  # constant power while the function runs, π₀·T
    operational_kg: float  # E × I
    embodied_kg: float  # M: the hardware's manufacturing carbon, shared by time held
    energy_usd: float  # E × electricity price
    instance_usd: float  # T × core-hour price

    def metrics(self, cu: float) -> Metrics:
        return Metrics(cu=cu, energy_joules=self.compute_joules + self.memory_joules + self.static_joules,
                       co2_kg=self.operational_kg + self.embodied_kg, usd=self.energy_usd + self.instance_usd)

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {"CU": {"seconds": self.seconds},
                "EU": {"dynamic_compute": self.compute_joules, "dynamic_memory": self.memory_joules,
                       "static": self.static_joules},
                "CO2": {"operational": self.operational_kg, "embodied": self.embodied_kg},
                "USD": {"energy": self.energy_usd, "instance": self.instance_usd}}


@dataclass(frozen=True)
class MetricsBand:
    """[low, high] of every metric: the tables' stated ranges and the function's assumptions."""

    low: Metrics
    high: Metrics

    def as_dict(self) -> dict[str, list[float]]:
        lo, hi = self.low.as_dict(), self.high.as_dict()
        return {m: [lo[m], hi[m]] for m in lo}


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
    return metric_parts(rows, cu, table, region).metrics(cu), rows


def dynamic_joules(rows: Sequence[ClassBreakdown]) -> tuple[float, float]:
    """(operations, data movement): the table's per-class energies split by class base."""
    memory = math.fsum(r.energy_joules for r in rows if split(r.cls)[0] in MEMORY_BASES)
    compute = math.fsum(r.energy_joules for r in rows if split(r.cls)[0] not in MEMORY_BASES)
    return compute, memory


def metric_parts(rows: Sequence[ClassBreakdown], cu: float, table: CostTable, region: Region,
                 end: str = "value", dynamic_scale: float = 1.0) -> MetricParts:
    """The parts of EU, CO2 and USD for a function of `cu` cycles whose per-class rows are `rows`.
    `end` picks each constant's central value or the end of its stated range ("low", "high")
    that makes every metric smallest or largest; `dynamic_scale` scales the dynamic energy
    (what the function's assumptions move along with its CU)."""
    compute, memory = dynamic_joules(rows)
    machine = table.energy
    factor = _pick(machine.dynamic_energy_factor, end) if machine is not None else 1.0
    compute, memory = compute * factor * dynamic_scale, memory * factor * dynamic_scale
    seconds = cu / table.clock_hz  # CU are core (or SM) cycles
    static = seconds * _pick(machine.constant_power_w, end) if machine is not None else 0.0
    energy_kwh = (compute + memory + static) / JOULES_PER_KWH
    operational = energy_kwh * region.carbon_kg_per_kwh * _pick(region.carbon_factor, end)
    embodied = 0.0
    if machine is not None:
        lifetime = _pick(machine.lifetime_years, _opposite(end)) * SECONDS_PER_YEAR
        embodied = _pick(machine.embodied_kg, end) * seconds / (lifetime * machine.cores)
    energy_usd = energy_kwh * region.price_usd_per_kwh * _pick(region.price_factor, end)
    instance = region.instance_usd_per_core_hour
    instance_usd = seconds / SECONDS_PER_HOUR * _pick(instance, end) if instance is not None else 0.0
    return MetricParts(seconds, compute, memory, static, operational, embodied, energy_usd, instance_usd)


def _pick(span: Span, end: str) -> float:
    return span.value if end == "value" else span.low if end == "low" else span.high


def _opposite(end: str) -> str:
    return {"low": "high", "high": "low"}.get(end, end)


def metrics_band(rows: Sequence[ClassBreakdown], cu: float, cu_low: float, cu_high: float, table: CostTable,
                 region: Region) -> MetricsBand:
    """Every metric's [low, high]: CU between `cu_low` and `cu_high` (the function's assumptions:
    trip counts it could not know) widened by the table's CU range (energy_parts.json
    `cu_factor`); the dynamic energy moves with the assumptions' CU, and every constant goes to
    the end of its stated range. An interval, not a confidence level: every end at once."""
    machine = table.energy
    cu_factor = machine.cu_factor if machine is not None else Span.exact(1.0)
    ends = []
    for end, assumed in (("low", cu_low), ("high", cu_high)):
        scale = assumed / cu if cu > 0 else 1.0
        cycles = assumed * _pick(cu_factor, end)
        ends.append(metric_parts(rows, cycles, table, region, end, scale).metrics(cycles))
    return MetricsBand(low=ends[0], high=ends[1])


def stall_cu(cls: str, table: CostTable) -> float:
    """Cycles one execution of `cls` costs beyond what a machine-code simulation with all-L1
    hits already counts: a miss's extra latency/bandwidth, a misprediction's whole penalty, a
    C library math function's body (the simulated block holds only the call to it)."""
    base, qualifier, width = split(cls)
    cost = table.lookup(cls)
    if cost is None:
        return 0.0
    if base == "fp_transcendental":
        call = table.lookup("call")
        return max(0.0, cost.cu - (call.cu if call is not None else 0.0))
    if qualifier is None:
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
