"""Agreement statistics between predictions and measurements (pure; scipy for the rank tests)."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from scipy import stats as _scipy


@dataclass(frozen=True)
class Agreement:
    n: int
    spearman_rho: float
    kendall_tau: float
    median_abs_rel_err: float  # median |pred - meas| / meas, predictions taken as they are
    best_scale: float  # s = exp(median log(meas / pred)): the one factor that best maps pred to meas
    median_abs_rel_err_scaled: float  # the same error after multiplying predictions by best_scale


def relative_error(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured


def agreement(predicted: Sequence[float], measured: Sequence[float]) -> Agreement:
    """Rank and error agreement over pairs where both values are positive and finite."""
    pairs = [(p, m) for p, m in zip(predicted, measured)
             if p is not None and m is not None and math.isfinite(p) and math.isfinite(m) and p > 0 and m > 0]
    if len(pairs) < 3:
        nan = float("nan")
        return Agreement(len(pairs), nan, nan, nan, nan, nan)
    pred, meas = [p for p, _ in pairs], [m for _, m in pairs]
    rho = float(_scipy.spearmanr(pred, meas).statistic)
    tau = float(_scipy.kendalltau(pred, meas).statistic)
    raw = statistics.median(abs(relative_error(p, m)) for p, m in pairs)
    scale = math.exp(statistics.median(math.log(m / p) for p, m in pairs))
    scaled = statistics.median(abs(relative_error(scale * p, m)) for p, m in pairs)
    return Agreement(len(pairs), rho, tau, raw, scale, scaled)
