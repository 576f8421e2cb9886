"""A function's report: its counts costed and scored (`FunctionReport`), and the settings a
report is made under (`ReportSettings`). Types only: the engine makes them, rendering and the
report formats read them, and neither needs the other to name them."""
from __future__ import annotations

from dataclasses import dataclass, field

from ccls.costing import ClassBreakdown, MetricParts, MetricsBand
from ccls.model import CountedFunction, Finding, Metrics
from ccls.polynomial import Polynomial
from ccls.scoring import DEFAULT_NORMALIZATION


@dataclass(frozen=True)
class ReportSettings:
    profile: str = "DEFAULT"
    region: str = "WORLD"
    scoring: str = "absolute"  # or "cohort": min–max within the functions reported together
    normalization: str = DEFAULT_NORMALIZATION  # cohort scoring's: "log-minmax" or "minmax" (paper eq. 4)


@dataclass
class FunctionReport:
    counted: CountedFunction
    counts: dict[str, float]
    instructions: float | None
    metrics: Metrics
    breakdown: list[ClassBreakdown]
    cost_expression: Polynomial
    big_o: str
    score: float
    grade: str
    rating: str
    scores_by_profile: dict[str, tuple[float, str]]
    findings: list[Finding]
    assumptions: list[str]
    hottest_lines: list[tuple[int, float]]
    inclusive_metrics: Metrics | None = None  # plus analysed callees × calls; None if no calls
    unknown_callees: list[str] = field(default_factory=list)
    graded_by: str = ""  # which scoring mode graded it, in words (cohort and how, or absolute)
    metric_parts: MetricParts | None = None  # EU dynamic/static, CO2 operational/embodied, $ energy/instance
    metrics_band: MetricsBand | None = None  # [low, high] per metric: stated ranges and assumptions
    within_uncertainty_of: list[str] = field(default_factory=list)  # reported functions whose CU bands overlap
