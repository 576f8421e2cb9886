"""Normalisation, composite score and grade (paper eqs. 4-8); pure.

Orientation: every metric is a cost, so a function scores 100·Σ_m w_m·(1 − norm_m): higher is
more efficient, 100 = best in every weighted metric. The weights form a simplex (eq. 6), so
the score stays within [0, 100].
"""
from __future__ import annotations

import math
from typing import Sequence

from ccls.model import Metrics
from ccls.tables import METRICS, GradeScale, Profile, ReferenceRanges

EPSILON = 1e-9  # eq. (4): keeps a degenerate cohort (max = min) from dividing by zero


def normalize(values: Sequence[float]) -> list[float]:
    """Eq. (4): (x − min) / (max − min + ε) within the cohort; all 0 when every value is equal."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    return [(v - lo) / (hi - lo + EPSILON) for v in values]


def composite_scores(metrics: Sequence[Metrics], profile: Profile) -> list[float]:
    """Eqs. (5)-(8) over a cohort: 100·Σ_m w_m·(1 − norm_m(x)).

    Each metric is first expressed in units of the cohort's largest magnitude. Min-max scaling is
    unit-free except for ε, and ε = 1e-9 in raw units (kg CO2 ~ 1e-13, USD ~ 1e-14 per function)
    would swamp the spread and silently drop those metrics from the score."""
    if not metrics:
        return []
    columns = [[m.as_dict()[name] for m in metrics] for name in METRICS]
    norms = []
    for column in columns:
        scale = max(abs(v) for v in column) or 1.0
        norms.append(normalize([v / scale for v in column]))
    return [100.0 * math.fsum(w * (1.0 - norm[i]) for w, norm in zip(profile.weights, norms))
            for i in range(len(metrics))]


def absolute_position(value: float, low: float, high: float) -> float:
    """Where ``value`` sits between ``low`` and ``high`` on a log10 scale, clipped to [0, 1]."""
    if value <= low:
        return 0.0
    if value >= high:
        return 1.0
    return (math.log10(value) - math.log10(low)) / (math.log10(high) - math.log10(low))


def absolute_score(metrics: Metrics, profile: Profile, reference: ReferenceRanges) -> float:
    """A lone function's score: eq. (5) with norm_m = its log-scale position in the fixed
    reference range instead of the cohort min-max, so it does not depend on neighbours."""
    values = metrics.as_dict()
    return 100.0 * math.fsum(w * (1.0 - absolute_position(values[m], reference.low[m], reference.high[m]))
                             for w, m in zip(profile.weights, METRICS))


def grade_for(score: float, scale: GradeScale) -> tuple[str, str]:
    """(grade, rating) of the first band, highest first, whose minimum the score reaches."""
    if math.isnan(score):
        raise ValueError("score is NaN; cannot grade it")
    for minimum, grade, rating in scale.bands:
        if score >= minimum:
            return grade, rating
    _, grade, rating = scale.bands[-1]
    return grade, rating
