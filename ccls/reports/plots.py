"""Inline SVG charts for the HTML report: a function's cost against its input size, and the
profile-sensitivity chart of the paper's Fig. 9. Pure: numbers in, SVG text out."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Callable, Mapping, Sequence

from ccls.polynomial import LOG2_PREFIX, Polynomial
from ccls.render import si
from ccls.table_types import Profile

# How far the cost-vs-n curve reaches either side of the evaluation point, as a factor of it.
CURVE_SPAN = 100.0
CURVE_POINTS = 41
SENSITIVITY_LINES = 12  # functions drawn in the profile-sensitivity chart (the largest swings)
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#393b79", "#637939")


def base_symbol(symbol: str) -> str:
    """``log2(n)`` → ``n``: the parameter a halving loop's trip count depends on."""
    if symbol.startswith(LOG2_PREFIX) and symbol.endswith(")"):
        return symbol[len(LOG2_PREFIX):-1]
    return symbol


@dataclass(frozen=True)
class CostCurve:
    parameters: tuple[str, ...]  # the sizes that vary (each scaled by the same factor)
    factors: tuple[float, ...]  # × the evaluation point
    values: tuple[dict[str, float], ...]  # each factor's parameter values
    cu: tuple[float, ...]  # the cost expression there (0 where its formula falls below zero)


def cost_curve(poly: Polynomial, value_of: Callable[[str], float], span: float = CURVE_SPAN,
               points: int = CURVE_POINTS) -> CostCurve | None:
    """The cost expression with every size it depends on scaled together from 1/span to span times
    its value at the evaluation point (`value_of`); None for a constant cost."""
    parameters = tuple(sorted({base_symbol(s) for s in poly.symbols}))
    if not parameters:
        return None
    at = {p: max(value_of(p), 1e-12) for p in parameters}
    factors, values, cu = [], [], []
    for k in range(points):
        factor = span ** (2.0 * k / (points - 1) - 1.0)
        scaled = {p: v * factor for p, v in at.items()}
        symbols = {s: (math.log2(max(2.0, scaled[base_symbol(s)])) if s != base_symbol(s) else scaled[s])
                   for s in poly.symbols}
        factors.append(factor)
        values.append(scaled)
        cu.append(max(0.0, poly.evaluate(symbols)))
    return CostCurve(parameters, tuple(factors), tuple(values), tuple(cu))


@dataclass
class Axis:
    low: float
    high: float
    log: bool

    def position(self, value: float) -> float:
        """0..1 along the axis."""
        if self.log:
            value = math.log10(max(value, self.low))
            low, high = math.log10(self.low), math.log10(self.high)
        else:
            low, high = self.low, self.high
        return 0.5 if high == low else (value - low) / (high - low)

    def ticks(self) -> list[float]:
        if self.log:
            first, last = math.floor(math.log10(self.low)), math.ceil(math.log10(self.high))
            step = max(1, (last - first) // 6)
            return [10.0 ** e for e in range(first, last + 1, step) if self.low <= 10.0 ** e <= self.high * (1 + 1e-9)]
        span = self.high - self.low
        if span <= 0:
            return [self.low]
        raw = span / 5
        magnitude = 10 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
        first = math.ceil(self.low / step) * step
        return [first + k * step for k in range(int((self.high - first) / step + 1e-9) + 1)]


def axis_for(values: Sequence[float], log: bool) -> Axis:
    finite = [v for v in values if math.isfinite(v) and (v > 0 or not log)]
    if not finite:
        return Axis(1.0, 10.0, log)
    low, high = min(finite), max(finite)
    if log:
        if high <= low:
            low, high = low / 2, high * 2
        return Axis(low, high, True)
    if high <= low:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.05
    return Axis(low - pad, high + pad, False)


@dataclass
class Chart:
    """A small SVG line chart: series of points, optional markers, vertical labelled lines."""

    width: int = 520
    height: int = 300
    left: int = 64
    right: int = 16
    top: int = 16
    bottom: int = 48
    parts: list[str] = field(default_factory=list)

    def x(self, axis: Axis, value: float) -> float:
        return self.left + axis.position(value) * (self.width - self.left - self.right)

    def y(self, axis: Axis, value: float) -> float:
        return self.height - self.bottom - axis.position(value) * (self.height - self.top - self.bottom)

    def frame(self, x_axis: Axis, y_axis: Axis, x_label: str, y_label: str,
              x_tick_text: Callable[[float], str] = si, y_tick_text: Callable[[float], str] = si,
              x_ticks: Sequence[float] | None = None) -> None:
        bottom, right = self.height - self.bottom, self.width - self.right
        for value in y_axis.ticks():
            y = self.y(y_axis, value)
            self.parts.append(f'<line class="grid" x1="{self.left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}"/>'
                              f'<text class="tick" x="{self.left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                              f'{escape(y_tick_text(value))}</text>')
        for value in (x_axis.ticks() if x_ticks is None else x_ticks):
            x = self.x(x_axis, value)
            self.parts.append(f'<line class="grid" x1="{x:.1f}" y1="{self.top}" x2="{x:.1f}" y2="{bottom}"/>'
                              f'<text class="tick" x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">'
                              f'{escape(x_tick_text(value))}</text>')
        self.parts.append(f'<rect class="frame" x="{self.left}" y="{self.top}" width="{right - self.left}" '
                          f'height="{bottom - self.top}"/>')
        self.parts.append(f'<text class="label" x="{(self.left + right) / 2:.1f}" y="{self.height - 8}" '
                          f'text-anchor="middle">{escape(x_label)}</text>')
        self.parts.append(f'<text class="label" transform="translate(14 {(self.top + bottom) / 2:.1f}) rotate(-90)" '
                          f'text-anchor="middle">{escape(y_label)}</text>')

    def line(self, x_axis: Axis, y_axis: Axis, points: Sequence[tuple[float, float]], color: str, title: str,
             css: str = "series") -> None:
        coords = " ".join(f"{self.x(x_axis, a):.1f},{self.y(y_axis, b):.1f}" for a, b in points)
        if coords:
            self.parts.append(f'<polyline class="{css}" points="{coords}" stroke="{color}">'
                              f'<title>{escape(title)}</title></polyline>')

    def marker(self, x: float, y: float, color: str, title: str, radius: float = 3.5, css: str = "marker") -> None:
        self.parts.append(f'<circle class="{css}" cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{color}">'
                          f'<title>{escape(title)}</title></circle>')

    def svg(self, label: str, css: str) -> str:
        return (f'<svg class="{css}" role="img" aria-label="{escape(label)}" viewBox="0 0 {self.width} {self.height}" '
                f'width="{self.width}" height="{self.height}" xmlns="http://www.w3.org/2000/svg">'
                + "".join(self.parts) + "</svg>")


def cost_curve_svg(curve: CostCurve, cu_at_point: float, band: tuple[float, float] | None, name: str) -> str:
    """CU against the size(s) on log–log axes, the evaluation point marked with its uncertainty band."""
    single = len(curve.parameters) == 1
    xs = [v[curve.parameters[0]] for v in curve.values] if single else list(curve.factors)
    points = [(x, y) for x, y in zip(xs, curve.cu) if y > 0]
    at_x = (xs[len(xs) // 2])
    y_values = [y for _, y in points] + [cu_at_point] + (list(band) if band else [])
    x_axis, y_axis = axis_for(xs, True), axis_for(y_values, True)
    chart = Chart()
    x_label = curve.parameters[0] if single else f"{', '.join(curve.parameters)} (× their value at the evaluation point)"
    chart.frame(x_axis, y_axis, x_label, "CU")
    chart.line(x_axis, y_axis, points, PALETTE[0], f"{name}: CU as the sizes vary")
    if band and band[1] > band[0] > 0:
        x = chart.x(x_axis, at_x)
        y_low, y_high = chart.y(y_axis, band[0]), chart.y(y_axis, band[1])
        chart.parts.append(f'<line class="band" x1="{x:.1f}" y1="{y_low:.1f}" x2="{x:.1f}" y2="{y_high:.1f}">'
                           f'<title>band {escape(si(band[0]))} … {escape(si(band[1]))} CU</title></line>'
                           f'<line class="band" x1="{x - 5:.1f}" y1="{y_low:.1f}" x2="{x + 5:.1f}" y2="{y_low:.1f}"/>'
                           f'<line class="band" x1="{x - 5:.1f}" y1="{y_high:.1f}" x2="{x + 5:.1f}" y2="{y_high:.1f}"/>')
    if cu_at_point > 0:
        where = ", ".join(f"{p} = {si(v)}" for p, v in curve.values[len(curve.values) // 2].items())
        chart.marker(chart.x(x_axis, at_x), chart.y(y_axis, cu_at_point), PALETTE[1],
                     f"evaluation point: {where}: {si(cu_at_point)} CU", css="marker at-point")
    return chart.svg(f"CU of {name} against {x_label}", "cost-curve")


@dataclass(frozen=True)
class Crossing:
    first: str
    second: str
    x: float  # position on the profile axis (profile index + fraction)
    score: float


def profile_order(profiles: Mapping[str, Profile], names: Sequence[str]) -> list[str]:
    """Profiles by their CU weight, smallest first (the x axis of Fig. 9), then by name."""
    return sorted(names, key=lambda n: (profiles[n].weights[0] if n in profiles else math.inf, n))


def crossings(series: Sequence[tuple[str, Sequence[float]]]) -> list[Crossing]:
    """Where two drawn functions swap order between neighbouring profiles. Weights move in a
    straight line between two profiles and a score is linear in the weights (eq. 5), so each
    segment is exact and the crossing sits where the difference changes sign."""
    out = []
    for i in range(len(series)):
        for j in range(i + 1, len(series)):
            (name_a, a), (name_b, b) = series[i], series[j]
            for k in range(len(a) - 1):
                d1, d2 = a[k] - b[k], a[k + 1] - b[k + 1]
                if d1 * d2 < 0:
                    t = d1 / (d1 - d2)
                    out.append(Crossing(name_a, name_b, k + t, a[k] + t * (a[k + 1] - a[k])))
    return out


def sensitivity_svg(names: Sequence[str], scores: Sequence[Mapping[str, float]],
                    profiles: Mapping[str, Profile], active: str, prefer: Sequence[int] = ()) -> tuple[str, list[int]]:
    """Fig. 9: each function's composite score under each profile, profiles ordered by CU weight
    along x, with the crossings marked. Returns the SVG and the indexes of the functions drawn
    (`prefer` first, in order, then the largest swings between profiles; SENSITIVITY_LINES in all)."""
    if not scores:
        return "", []
    order = profile_order(profiles, list(scores[0]))
    swing = [max(s[p] for p in order) - min(s[p] for p in order) for s in scores]
    chosen = list(dict.fromkeys([k for k in prefer if 0 <= k < len(scores)]
                                + sorted(range(len(scores)), key=lambda k: (-swing[k], k))))
    drawn = sorted(chosen[:SENSITIVITY_LINES])
    series = [(names[k], [scores[k][p] for p in order]) for k in drawn]
    x_axis = Axis(-0.15, len(order) - 0.85, False)
    y_axis = axis_for([v for _, values in series for v in values], False)
    y_axis = Axis(max(0.0, y_axis.low), min(100.0, y_axis.high), False) if y_axis.high > y_axis.low else y_axis
    chart = Chart(width=720, height=380, bottom=64)

    def profile_label(position: float) -> str:
        name = order[int(round(position))]
        return f"{name}{' (active)' if name == active else ''}"
    chart.frame(x_axis, y_axis, "profiles, by their CU weight (straight lines between them: weights in between)",
                "composite score", x_tick_text=profile_label, y_tick_text=lambda v: f"{v:g}",
                x_ticks=list(range(len(order))))
    for k, name in enumerate(order):
        weight = profiles[name].weights[0] if name in profiles else math.nan
        chart.parts.append(f'<text class="tick weight" x="{chart.x(x_axis, k):.1f}" y="{chart.height - chart.bottom + 30}" '
                           f'text-anchor="middle">w_CU {weight:.2f}</text>')
    for color_index, (name, values) in enumerate(series):
        color = PALETTE[color_index % len(PALETTE)]
        chart.line(x_axis, y_axis, list(zip(range(len(order)), values)), color, name)
        for k, value in enumerate(values):
            chart.marker(chart.x(x_axis, k), chart.y(y_axis, value), color, f"{name}: {value:.1f} under {order[k]}",
                         radius=2.5)
    for c in crossings(series):
        chart.marker(chart.x(x_axis, c.x), chart.y(y_axis, c.score), "none",
                     f"{c.first} and {c.second} swap order here (score {c.score:.1f})", radius=5, css="crossing")
    return chart.svg("composite score of each function under each profile", "sensitivity"), drawn
