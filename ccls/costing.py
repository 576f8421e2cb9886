"""Counts x cost table -> raw metric totals (paper eq. 2); pure.

CU_total = Σ_k n_k·CU_k and EU_total = Σ_k n_k·EU_k (eq. 2); CO2 = EU x CI / 3.6e6 and
USD = EU x price / 3.6e6 (paper §3: joules -> kWh), plus core-seconds x the cloud core-hour
price when the region has one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from ccls.model import Metrics
from ccls.polynomial import Polynomial
from ccls.tables import CostTable, Region

JOULES_PER_KWH = 3.6e6
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class ClassBreakdown:
    cls: str
    count: float
    cu: float  # count x CU_k
    energy_joules: float  # count x EU_k
    known: bool  # False: the table has no cost for this class; it contributed 0


def cost_counts(counts: Mapping[str, float], table: CostTable, region: Region) -> tuple[Metrics, list[ClassBreakdown]]:
    """Raw totals of one function and its per-class breakdown (largest CU first).
    Classes the table cannot cost are listed with known=False and add nothing."""
    rows: list[ClassBreakdown] = []
    for cls, count in counts.items():
        n = float(count)
        if math.isnan(n) or n < 0:
            raise ValueError(f"executed count for {cls!r} must be a non-negative number, got {count!r}")
        cost = table.lookup(cls)
        if cost is None:
            rows.append(ClassBreakdown(cls, n, 0.0, 0.0, False))
        else:
            rows.append(ClassBreakdown(cls, n, n * cost.cu, n * cost.energy_joules, True))
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


def cu_expression(counts: Mapping[str, Polynomial], table: CostTable) -> Polynomial:
    """Σ count_k x CU_k as a polynomial in the function's symbols (unknown classes add 0).
    CU values enter as their shortest decimal (0.33 -> 33/100), not their binary float."""
    total = Polynomial()
    for cls, count in counts.items():
        cost = table.lookup(cls)
        if cost is not None and cost.cu:
            total = total + count * Fraction(repr(cost.cu))
    return total
