"""Pieces of the terminal reports the commands share: durations in readable units,
confidence intervals as text (computed by :mod:`spare_core._stats`), TTT/T0 of a cell (a cell's runs and interval are the
result set's: :meth:`spare_core.sim.ResultSet.cell_runs`, :meth:`~spare_core.sim.ResultSet.cell_interval`)."""
from __future__ import annotations

import math
from typing import Any


__all__ = ["fmt_duration", "fmt_ci", "fmt_ratio"]


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


def fmt_ci(ci: tuple[float, float, float], fmt: str = "{:.3f}") -> str:
    """``[low, high]``, or ``[no CI: one seed]`` when the interval is undefined."""
    _, lo, hi = ci
    if math.isnan(lo) or math.isnan(hi):
        return "[no CI: one seed]"
    return f"[{fmt.format(lo)}, {fmt.format(hi)}]"


def fmt_ratio(s: Any) -> str:
    """TTT/T0 of a summary as ``mean ± std [min-max]`` (``never finished`` for None)."""
    if s is None:
        return "never finished"
    return f"{s.ratio_mean:6.3f} ± {s.ratio_std:5.3f} [{s.ratio_min:.3f}-{s.ratio_max:.3f}]"
