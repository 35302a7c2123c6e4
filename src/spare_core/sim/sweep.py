"""Sweeps over scenarios, policies, redundancies and seeds; the optimal redundancy r*."""
from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from .._validate import as_int, check_choice
from ._source import EpochFailures
from .run import POLICY_NAMES, RunResult, _seed_children, make_policy, simulate
from .scenario import Scenario

__all__ = ["sweep", "SweepResult", "Summary", "summarise", "optimal_redundancy", "closed_form_redundancy", "RedundancyChoice",
           "optimal_interval", "IntervalOptimum"]

# gamma / ln 2: the paper's r* = floor(log2 N + 0.833) comes from mu ~ N/2
_EULER_OVER_LN2 = np.euler_gamma / math.log(2.0)


@dataclass(frozen=True)
class Summary:
    """Statistics over seeds of one (scenario, policy, r) cell of a sweep.

    ``ratio_*`` summarise TTT/T0 (``inf`` when any seed did not finish within the horizon);
    the other fields are means over seeds. ``finished`` counts seeds that finished.
    """

    scenario: str
    n_groups: int
    policy: str
    redundancy: int
    seeds: int
    finished: int
    ratio_mean: float
    ratio_std: float
    ratio_min: float
    ratio_max: float
    availability: float
    overhead: float
    failures_masked: float
    wipeouts: float
    restarts: float
    progress: float

    def to_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in vars(self).items()}


def _summarise(runs: list[RunResult], n_groups: int) -> Summary:
    ratios = np.array([r.ratio for r in runs])
    fin = int(sum(r.finished for r in runs))
    all_fin = fin == len(runs)
    return Summary(
        scenario=runs[0].scenario,
        n_groups=n_groups,
        policy=runs[0].policy,
        redundancy=runs[0].redundancy,
        seeds=len(runs),
        finished=fin,
        ratio_mean=float(ratios.mean()) if all_fin else math.inf,
        ratio_std=float(ratios.std(ddof=1)) if all_fin and len(runs) > 1 else (0.0 if all_fin else math.inf),
        ratio_min=float(ratios.min()),
        ratio_max=float(ratios.max()),
        availability=float(np.mean([r.availability for r in runs])),
        overhead=float(np.nanmean([r.overhead for r in runs])) if any(np.isfinite(r.overhead) for r in runs) else math.nan,
        failures_masked=float(np.mean([r.failures_masked for r in runs])),
        wipeouts=float(np.mean([r.wipeouts for r in runs])),
        restarts=float(np.mean([r.restarts for r in runs])),
        progress=float(np.mean([r.progress for r in runs])),
    )


def summarise(runs: list[RunResult], n_groups: int) -> Summary:
    """The :class:`Summary` of one cell's runs (one per seed, in seed order), as :func:`sweep`
    reports it; for callers that run a sweep's cells piecewise (the ``spare`` commands)."""
    if not runs:
        raise ValueError("runs must not be empty")
    return _summarise(list(runs), n_groups)


@dataclass
class SweepResult:
    """All runs of a :func:`sweep` and their per-cell summaries.

    Attributes
    ----------
    runs : list of RunResult
    summaries : list of Summary
        One per (scenario, policy, r), in sweep order.
    """

    runs: list
    summaries: list

    def cell(self, n_groups: int, policy: str, r: int) -> Summary:
        """The summary of one (N, policy label, r) cell."""
        for s in self.summaries:
            if s.n_groups == n_groups and s.policy == policy and s.redundancy == r:
                return s
        raise KeyError((n_groups, policy, r))

    def best(self, n_groups: int, policy: str) -> Summary | None:
        """The cell of ``policy`` at N with the least mean TTT/T0 over seeds (None if no r
        finished on every seed)."""
        cells = [s for s in self.summaries if s.n_groups == n_groups and s.policy == policy]
        done = [s for s in cells if math.isfinite(s.ratio_mean)]
        if not done:
            return None
        return min(done, key=lambda s: (s.ratio_mean, s.redundancy))

    def to_dict(self) -> dict:
        """Runs and summaries as JSON-friendly dicts (``inf`` becomes None)."""
        return {"runs": [r.to_dict() for r in self.runs], "summaries": [s.to_dict() for s in self.summaries]}

    def to_frame(self):
        """The runs as a pandas DataFrame, one row per run (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("SweepResult.to_frame needs pandas: pip install pandas") from None
        return pd.DataFrame([r.to_dict() for r in self.runs])

    def __repr__(self) -> str:
        return f"SweepResult({len(self.runs)} runs, {len(self.summaries)} cells)"


def _task(args):
    """All runs of one (scenario, seed), sharing the seed's per-epoch failures.

    Runs are ordered by decreasing r so that the deepest epoch prefixes are drawn first
    (see :class:`EpochFailures`). At r = 1 every failure is a global restart whatever the
    policy, so the built-in policies at r = 1 with the same interval rule are one run:
    it is simulated once and relabelled (tests/test_sim_sweep.py checks the equivalence).
    """
    scenario, seed, jobs = args
    fail_seed, _ = _seed_children(seed)
    source = EpochFailures(scenario, fail_seed)
    out = []
    r1 = {}
    for key, policy in sorted(jobs, key=lambda kp: -kp[1].redundancy):
        if policy.redundancy == 1:
            memo = r1.get(policy.interval)
            if memo is None:
                memo = r1[policy.interval] = simulate(scenario, policy, seed=seed, failures=source)
            run = replace(
                memo,
                policy=policy.name,
                wipeouts=memo.restarts if policy.restart_is_wipeout else 0,
            )
        else:
            run = simulate(scenario, policy, seed=seed, failures=source)
        out.append((key, run))
    return out


def sweep(
    scenarios,
    policies=("ckpt", "rep", "spare"),
    redundancies=range(1, 21),
    seeds=range(5),
    *,
    processes=1,
    policy_kwargs=None,
) -> SweepResult:
    """Simulate every policy at every redundancy on every scenario and seed.

    Parameters
    ----------
    scenarios : Scenario or sequence of Scenario
    policies : sequence of str, default ("ckpt", "rep", "spare")
        Names for :func:`make_policy`. "ckpt" does not depend on r and runs once (r = 1).
    redundancies : iterable of int, default 1..20
        Values of r; those above a scenario's N are skipped for that scenario.
    seeds : iterable of int, default 0..4
    processes : int, default 1
        Worker processes (``0``: one per CPU). Work is split by (scenario, seed).
    policy_kwargs : dict, optional
        Per policy name, keyword arguments for :func:`make_policy` (e.g. the interval).

    Returns
    -------
    SweepResult

    Raises
    ------
    TypeError, ValueError
        Bad scenarios, unknown policy names, r < 1, negative seeds, processes < 0 (all
        checked before any simulation).

    Notes
    -----
    Runs on one (scenario, seed) share the seed's failures (common random numbers), drawn
    once per epoch (:class:`spare_core.sim._source.EpochFailures`). Results do not depend on
    ``processes``.

    Examples
    --------
    >>> res = sweep(Scenario.paper_600k(200, n_steps=100), ("rep", "spare"), [2, 4], [0])
    >>> len(res.runs), res.best(200, "SPARe+CKPT").redundancy in (2, 4)
    (4, True)
    """
    if isinstance(scenarios, Scenario):
        scenarios = [scenarios]
    scenarios = list(scenarios)
    if not scenarios or not all(isinstance(s, Scenario) for s in scenarios):
        raise TypeError("scenarios must be a Scenario or a non-empty sequence of Scenario")
    names = [check_choice(p, "policy", POLICY_NAMES) for p in policies]
    rs = sorted({as_int(r, "r", min_value=1) for r in redundancies})
    seed_list = [as_int(s, "seed", min_value=0) for s in seeds]
    if not rs or not seed_list or not names:
        raise ValueError("policies, redundancies and seeds must not be empty")
    procs = as_int(processes, "processes", min_value=0) or (os.cpu_count() or 1)
    policy_kwargs = dict(policy_kwargs or {})
    unknown = set(policy_kwargs) - set(names)
    if unknown:
        raise ValueError(f"policy_kwargs names policies not in the sweep: {sorted(unknown)}")

    cells = []  # (scenario index, name, r) in report order
    for si, sc in enumerate(scenarios):
        for name in names:
            for r in ([1] if name == "ckpt" else [r for r in rs if r <= sc.n_groups]):
                cells.append((si, name, r))
    tasks = []
    for si, sc in enumerate(scenarios):
        for seed in seed_list:
            jobs = [
                ((si, name, r), make_policy(name, r, **policy_kwargs.get(name, {})))
                for (sj, name, r) in cells
                if sj == si
            ]
            tasks.append((sc, seed, jobs))
    # the biggest scenarios first, so the pool's last tasks are short
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i][0].n_groups)
    if procs == 1 or len(tasks) == 1:
        results = [_task(tasks[i]) for i in order]
    else:
        with ProcessPoolExecutor(max_workers=min(procs, len(tasks))) as ex:
            results = list(ex.map(_task, [tasks[i] for i in order]))
    by_cell: dict = {c: [] for c in cells}
    for i, res in zip(order, results):
        for key, run in res:
            by_cell[key].append((tasks[i][1], run))
    runs, summaries = [], []
    for c in cells:
        cell_runs = [run for _, run in sorted(by_cell[c], key=lambda sr: sr[0])]
        runs.extend(cell_runs)
        summaries.append(_summarise(cell_runs, scenarios[c[0]].n_groups))
    return SweepResult(runs, summaries)


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


def optimal_redundancy(scenario, *, policy="spare", redundancies=range(1, 21), seeds=range(5), processes=1) -> RedundancyChoice:
    """The optimal redundancy r*: closed form and numeric argmin of simulated TTT.

    Parameters
    ----------
    scenario : Scenario
    policy : {"spare", "rep", "rep-disjoint"}, default "spare"
    redundancies : iterable of int, default 1..20
    seeds : iterable of int, default 0..4
    processes : int, default 1

    Returns
    -------
    RedundancyChoice

    Raises
    ------
    TypeError, ValueError
        As :func:`sweep`; also ``policy="ckpt"`` (it has no redundancy).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (r* ~ log2 N + 0.833 and J(r) = S-bar / A*).
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    check_choice(policy, "policy", ("spare", "rep", "rep-disjoint"))
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
    policy : {"ckpt", "rep", "rep-disjoint", "spare"}, default "spare"
    r : int, optional
        Redundancy (required except for "ckpt").
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
    base = make_policy(policy, r, **policy_kwargs)
    base.check(scenario)
    auto = base.checkpoint_interval(scenario)
    young = make_policy(policy, r, interval="young", **policy_kwargs).checkpoint_interval(scenario).seconds
    daly = make_policy(policy, r, interval="daly", **policy_kwargs).checkpoint_interval(scenario).seconds
    unit = auto.seconds if auto.seconds > 0 else young
    candidates = sorted({f * unit for f in fac} | {young, daly})
    runs = {c: [] for c in candidates}
    for seed in seeds:
        source = EpochFailures(scenario, _seed_children(seed)[0])
        for c in candidates:
            runs[c].append(simulate(scenario, make_policy(policy, r, interval=c, **policy_kwargs),
                                    seed=seed, failures=source))
    table = {}
    for c, rs in runs.items():
        ratios = np.array([x.ratio if x.finished else math.inf for x in rs])
        table[c] = (float(ratios.mean()), float(ratios.std(ddof=1)) if ratios.size > 1 and np.isfinite(ratios).all() else math.nan)
    done = [c for c in candidates if math.isfinite(table[c][0])]
    best = min(done, key=lambda c: (table[c][0], c)) if done else None
    return IntervalOptimum(auto, young, daly, best, table)
