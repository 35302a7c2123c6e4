"""Pieces of the terminal reports the commands share: durations in readable units,
confidence intervals over seeds, TTT/T0 of a cell (a cell's runs and interval are the
result set's: :meth:`spare_core.sim.ResultSet.cell_runs`, :meth:`~spare_core.sim.ResultSet.cell_interval`)."""
from __future__ import annotations

import math
from typing import Any, Sequence

__all__ = ["fmt_duration", "mean_ci", "fmt_ratio"]


def fmt_duration(seconds: float) -> str:
    """``95 s``, ``12.5 min``, ``3.10 h``, ``2.4 d`` (``every step`` for 0)."""
    if not math.isfinite(seconds):
        return "-"
    if seconds == 0:
        return "every step"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.2f} h"
    return f"{seconds / 86400:.1f} d"


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and a Student-t confidence interval over seeds (``(m, m, m)`` for one value;
    ``inf`` bounds if any value is infinite)."""
    from scipy import stats

    xs = [float(v) for v in values]
    m = sum(xs) / len(xs)
    if not all(math.isfinite(x) for x in xs):
        return math.inf, math.inf, math.inf
    if len(xs) < 2:
        return m, m, m
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    half = float(stats.t.ppf(0.5 + level / 2, len(xs) - 1)) * sd / math.sqrt(len(xs))
    return m, m - half, m + half


def fmt_ratio(s: Any) -> str:
    """TTT/T0 of a summary as ``mean ± std [min-max]`` (``never finished`` for None)."""
    if s is None:
        return "never finished"
    return f"{s.ratio_mean:6.3f} ± {s.ratio_std:5.3f} [{s.ratio_min:.3f}-{s.ratio_max:.3f}]"
