"""Pieces of the terminal reports the commands share: a cell's checkpoint interval and its
rule, durations in readable units, confidence intervals over seeds."""
from __future__ import annotations

import math
from typing import Any, Sequence

__all__ = ["cell_runs", "cell_interval", "fmt_duration", "mean_ci", "fmt_ratio"]


def cell_runs(result: Any, summary: Any) -> list[Any]:
    """The runs behind one summary (same scenario, policy label and r)."""
    return [r for r in result.runs
            if r.scenario == summary.scenario and r.policy == summary.policy and r.redundancy == summary.redundancy]


def cell_interval(result: Any, summary: Any) -> tuple[float, str]:
    """The checkpoint interval (compute seconds between saves) of a cell and its rule.

    Every seed of a cell uses the same interval (it depends on the scenario and the policy
    only); the first run's is returned.
    """
    runs = cell_runs(result, summary)
    if not runs:
        return math.nan, "-"
    return float(runs[0].checkpoint_interval), str(runs[0].interval_rule)


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
