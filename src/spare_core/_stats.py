"""Confidence intervals over seeds: the one place the library computes one.

Every interval a command prints or writes is a two-sided Student-t interval over independent
seeds (or Monte Carlo trials): :func:`mean_ci` for a mean cut at what the quantity can
physically be, :func:`paired_ratio_ci` for the relative difference of two strategies run on the
same seeds (common random numbers), from the logs of the per-seed ratios. ``spare run``,
``spare advise``, the store's report, ``spare map`` and the closed forms' Monte Carlo checks all
ask these two functions, so an interval means the same thing wherever it appears.

References
----------
.. [1] A. M. Law, *Simulation Modeling and Analysis*, 5th ed., McGraw-Hill, 2015, sections 9.4
   (the t interval over independent replications) and 10.2 (paired comparisons with common
   random numbers).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["t_quantile", "mean_ci", "paired_ratio_ci"]


def t_quantile(level: float, dof: int) -> float:
    """The two-sided ``level`` quantile of Student's t with ``dof`` degrees of freedom.

    Examples
    --------
    >>> round(t_quantile(0.95, 4), 4)
    2.7764
    """
    from scipy.special import stdtrit  # not scipy.stats: it takes seconds to import

    if not (0.0 < level < 1.0):
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if dof < 1:
        raise ValueError(f"dof must be >= 1, got {dof!r}")
    return float(stdtrit(dof, 0.5 + level / 2))


def mean_ci(values, level: float = 0.95, bounds: tuple[float, float] = (-math.inf, math.inf)) -> tuple[float, float, float]:
    """The mean over seeds and its two-sided Student-t confidence interval, cut at ``bounds``.

    Parameters
    ----------
    values : sequence of float
        One value per seed.
    level : float, default 0.95
    bounds : (float, float)
        What the mean can physically be (:data:`spare_core.sim.results.RATIO_BOUNDS`,
        :data:`~spare_core.sim.results.FRACTION_BOUNDS`). The
        interval is cut there: the true mean lies within them, so the cut never loses
        coverage. A lower bound above the least value (TTT/T0 a hair under 1 from step-time
        noise) moves down to it, and an upper bound below the largest value up to it.

    Returns
    -------
    (mean, low, high)
        ``(inf, inf, inf)`` if a value is infinite (a run that did not finish), NaN if one is
        NaN; with one value the interval is NaN (one seed says nothing about the spread).

    Notes
    -----
    Why not a bootstrap: with the 3-10 seeds the commands run, a percentile or BCa bootstrap
    interval covers the mean far less often than it claims (docs/results.md, "Confidence
    intervals": about 70 % at 3 seeds and 80 % at 5 for a nominal 95 %), while the Student-t
    interval keeps close to its level; what it lacked was respect for the bounds.

    References
    ----------
    .. [1] A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their Application*,
       Cambridge University Press, 1997, section 5.4 (small-sample coverage of bootstrap
       intervals).

    Examples
    --------
    >>> m, lo, hi = mean_ci([1.0, 1.05, 3.5], bounds=(1.0, math.inf))
    >>> round(m, 3), lo, round(hi, 3)
    (1.85, 1.0, 5.4)
    """
    xs = np.asarray(values, dtype=np.float64).ravel()
    if xs.size == 0:
        raise ValueError("values must not be empty")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if np.isnan(xs).any():
        return math.nan, math.nan, math.nan
    if np.isinf(xs).any():
        return math.inf, math.inf, math.inf
    m = float(xs.mean())
    if xs.size < 2:
        return m, math.nan, math.nan
    half = t_quantile(level, xs.size - 1) * float(xs.std(ddof=1)) / math.sqrt(xs.size)
    low, high = min(bounds[0], float(xs.min())), max(bounds[1], float(xs.max()))
    return m, max(m - half, low), min(m + half, high)


def paired_ratio_ci(values: Sequence[float], reference: Sequence[float],
                    level: float = 0.95) -> tuple[float, float, float]:
    """The relative difference ``values / reference - 1`` over paired seeds: the geometric mean
    of the per-seed ratios and its Student-t interval, computed on the logs of the ratios.

    Logs, because the ratios are skewed (a restart-bound strategy is 10 % or 150 % slower
    depending on the seed) and the log of a ratio of two positive numbers is symmetric under
    swapping them; the pairing (both on the same seed's failures) removes the variance the two
    share.

    Parameters
    ----------
    values, reference : sequence of float
        One positive value per seed, the same seeds in the same order.
    level : float, default 0.95

    Returns
    -------
    (difference, low, high)
        ``exp(mean log ratio) - 1`` and its interval; NaN bounds with one seed.

    Examples
    --------
    >>> d, lo, hi = paired_ratio_ci([1.1, 1.2, 1.15], [1.0, 1.0, 1.0])
    >>> round(d, 4), lo > 0
    (0.1493, True)
    """
    a = np.asarray(values, dtype=np.float64).ravel()
    b = np.asarray(reference, dtype=np.float64).ravel()
    if a.size != b.size or a.size == 0:
        raise ValueError(f"values and reference must be paired and non-empty, got {a.size} and {b.size}")
    if not (np.all(a > 0) and np.all(b > 0)):
        raise ValueError("paired ratios need positive values")
    m, lo, hi = mean_ci(np.log(a / b), level)
    return math.expm1(m), math.expm1(lo), math.expm1(hi)
