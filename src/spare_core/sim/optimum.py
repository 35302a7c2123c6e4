"""The optimal redundancy r* and checkpoint interval: closed forms next to the simulated argmin."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._results import fields_dict
from .._validate import as_int
from .grid import sweep
from ..strategies import policy_at, uses_redundancy
from .run import simulate
from .scenario import Scenario

__all__ = ["optimal_redundancy", "closed_form_redundancy", "RedundancyChoice", "optimal_interval", "IntervalOptimum"]

# gamma / ln 2: the paper's r* = floor(log2 N + 0.833) comes from mu ~ N/2
_EULER_OVER_LN2 = np.euler_gamma / math.log(2.0)


def closed_form_redundancy(n_groups) -> int:
    """The paper's closed-form optimal redundancy ``floor(log2 N + 0.833)``.

    0.833 = gamma / ln 2 (gamma the Euler-Mascheroni constant), from mu ~ N/2.

    Parameters
    ----------
    n_groups : int
        N >= 1.

    Returns
    -------
    int
        r*, at least 1 and at most N.

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (optimal redundancy).

    Examples
    --------
    >>> closed_form_redundancy(200), closed_form_redundancy(600), closed_form_redundancy(1000)
    (8, 10, 10)
    """
    n = as_int(n_groups, "n_groups", min_value=1)
    return int(min(n, max(1, math.floor(math.log2(n) + _EULER_OVER_LN2))))


@dataclass(frozen=True)
class RedundancyChoice:
    """Closed-form and simulated optimal redundancy for one scenario and policy.

    Attributes
    ----------
    closed_form : int
        floor(log2 N + 0.833).
    simulated : int or None
        argmin over the tried r of the mean simulated TTT/T0 (None if no r finished).
    ratio_by_r : dict
        r -> (mean, std) of TTT/T0 over seeds (``inf`` if unfinished).
    """

    closed_form: int
    simulated: int | None
    ratio_by_r: dict

    def __repr__(self) -> str:
        best = self.ratio_by_r.get(self.simulated, (math.nan, math.nan))[0] if self.simulated else math.nan
        return f"RedundancyChoice(closed_form={self.closed_form}, simulated={self.simulated}, TTT/T0 at simulated={best:.3f})"

    def to_dict(self) -> dict:
        """A JSON-serialisable dict; ``ratio_by_r`` maps r to ``[mean, std]`` (None where a seed did
        not finish; JSON writes the keys r as strings)."""
        return fields_dict(self)


def optimal_redundancy(scenario, *, policy="spare", redundancies=range(1, 21), seeds=range(5), processes=1) -> RedundancyChoice:
    """The optimal redundancy r*: closed form and numeric argmin of simulated TTT.

    Parameters
    ----------
    scenario : Scenario
    policy : str or callable, default "spare"
        A registered name of a policy with redundancy ("spare", "rep", "rep-disjoint", or
        one added by :func:`~spare_core.strategies.register_policy`) or a factory of r.
    redundancies : iterable of int, default 1..20
    seeds : iterable of int, default 0..4
    processes : int, default 1

    Returns
    -------
    RedundancyChoice

    Raises
    ------
    TypeError, ValueError
        As :func:`sweep`; also a policy without redundancy ("ckpt", a Policy object).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (r* ~ log2 N + 0.833 and J(r) = S-bar / A*).
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if not uses_redundancy(policy):
        raise ValueError(f"policy must vary with r to optimise r; {policy!r} has no redundancy")
    res = sweep(scenario, (policy,), redundancies, seeds, processes=processes)
    label = res.summaries[0].policy
    best = res.best(scenario.n_groups, label)
    return RedundancyChoice(
        closed_form=closed_form_redundancy(scenario.n_groups),
        simulated=None if best is None else best.redundancy,
        ratio_by_r={s.redundancy: (s.ratio_mean, s.ratio_std) for s in res.summaries},
    )


@dataclass(frozen=True)
class IntervalOptimum:
    """Closed-form checkpoint intervals and the simulated best one, for one policy.

    Attributes
    ----------
    closed_form : IntervalChoice
        The policy's ``"auto"`` rule (availability-optimal T_c* minus the save time, or
        every step where T_c* is meaningless).
    young, daly : float
        Young's and Daly's intervals (compute seconds) with the policy's T_f.
    simulated : float or None
        The tried interval with the least mean simulated TTT/T0 (None if none finished).
    ratio_by_interval : dict
        interval seconds -> (mean, std) of TTT/T0 over seeds (``inf`` if unfinished).
    """

    closed_form: object
    young: float
    daly: float
    simulated: float | None
    ratio_by_interval: dict

    def __repr__(self) -> str:
        best = self.ratio_by_interval.get(self.simulated, (math.nan, math.nan))[0] if self.simulated is not None else math.nan
        return (f"IntervalOptimum(closed_form={self.closed_form.seconds:.0f} s, young={self.young:.0f} s, "
                f"daly={self.daly:.0f} s, simulated={self.simulated if self.simulated is None else round(self.simulated)} s, "
                f"TTT/T0 at simulated={best:.3f})")

    def to_dict(self) -> dict:
        """A JSON-serialisable dict: ``closed_form`` as :meth:`IntervalChoice.to_dict`,
        ``ratio_by_interval`` maps seconds to ``[mean, std]`` (None where a seed did not finish)."""
        return fields_dict(self)


def optimal_interval(scenario, policy="spare", r=None, *, factors=(0.25, 0.5, 1.0, 2.0, 4.0),
                     seeds=range(5), **policy_kwargs) -> IntervalOptimum:
    """The checkpoint interval: closed forms next to the simulated argmin over candidates.

    The candidates are ``factors`` times the policy's closed-form interval (the
    availability-optimal T_c* minus the save time; Young's interval where T_c* is
    meaningless and the rule checkpoints after every step), plus Young's and Daly's
    intervals themselves. Every candidate runs on the same seeds, and the runs of one seed
    share its failures (common random numbers), so differences between candidates are not
    failure-sampling noise.

    Parameters
    ----------
    scenario : Scenario
    policy : str, Policy or callable, default "spare"
        A registered name, a Policy object (its interval is replaced by each candidate) or
        a factory of r.
    r : int, optional
        Redundancy (required by names and factories of policies with redundancy).
    factors : sequence of float, default (0.25, 0.5, 1, 2, 4)
        Multiples (> 0) of the closed-form interval to simulate.
    seeds : iterable of int, default 0..4
    **policy_kwargs
        Passed to the policy (e.g. ``offsets="sidon"``); not ``interval``.

    Returns
    -------
    IntervalOptimum

    Raises
    ------
    TypeError, ValueError
        Bad scenario, policy, r, factors or seeds, or an ``interval`` keyword.

    References
    ----------
    .. [1] J. W. Young, "A first order approximation to the optimum checkpoint interval",
       CACM 17(9), 1974; J. T. Daly, "A higher order estimate of the optimum checkpoint
       interval for restart dumps", FGCS 22(3), 2006.
    .. [2] SPARe, arXiv:2603.00357 (availability-optimal period with T_f = mu x MTBF).

    Examples
    --------
    >>> from spare_core.sim import Scenario
    >>> sc = Scenario.paper_600k(200, n_steps=300)
    >>> opt = optimal_interval(sc, "spare", 6, factors=(0.5, 1.0), seeds=range(2))
    >>> opt.simulated in opt.ratio_by_interval
    True
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if "interval" in policy_kwargs:
        raise ValueError("optimal_interval chooses the interval; do not pass interval")
    fac = [float(f) for f in factors]
    if not fac or not all(math.isfinite(f) and f > 0 for f in fac):
        raise ValueError(f"factors must be a non-empty sequence of finite numbers > 0, got {list(factors)}")
    seeds = [as_int(s, "seed", min_value=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must not be empty")
    if r is None and not isinstance(policy, str) and uses_redundancy(policy):
        raise ValueError("a policy factory needs a redundancy r")
    base = policy_at(policy, r, interval="auto", **policy_kwargs)
    base.check(scenario)
    auto = base.checkpoint_interval(scenario)
    young = policy_at(base, interval="young").checkpoint_interval(scenario).seconds
    daly = policy_at(base, interval="daly").checkpoint_interval(scenario).seconds
    unit = auto.seconds if auto.seconds > 0 else young
    candidates = sorted({f * unit for f in fac} | {young, daly})
    runs = {c: [] for c in candidates}
    for seed in seeds:
        source = scenario.epoch_failures(seed)
        for c in candidates:
            runs[c].append(simulate(scenario, policy_at(base, interval=c), seed=seed, failures=source))
    table = {}
    for c, rs in runs.items():
        ratios = np.array([x.ratio if x.finished else math.inf for x in rs])
        table[c] = (float(ratios.mean()), float(ratios.std(ddof=1)) if ratios.size > 1 and np.isfinite(ratios).all() else math.nan)
    done = [c for c in candidates if math.isfinite(table[c][0])]
    best = min(done, key=lambda c: (table[c][0], c)) if done else None
    return IntervalOptimum(auto, young, daly, best, table)
