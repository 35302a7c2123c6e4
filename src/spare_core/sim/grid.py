"""In-memory sweeps over scenarios, policies, redundancies and seeds (:func:`sweep`), and the
one unit of work every sweep is made of: all runs of one scenario on one seed, sharing that
seed's failures (:func:`run_group`).

Durable, resumable and distributed sweeps (a store on disk, Dask) are
:mod:`spare_core.sweeps`; they run the same :func:`run_group`.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from .._results import fields_dict
from .._validate import as_int
from .policies import (
    CheckpointOnly,
    ReplicationCheckpoint,
    SpareCheckpoint,
    policy_at,
    uses_redundancy,
)
from .run import RunResult, simulate
from .scenario import Scenario

__all__ = ["sweep", "SweepResult", "Summary", "summarise", "run_group"]

# at r = 1 every failure of these policies is a global restart with the checkpoint-only
# interval rule, so their r = 1 runs on one seed are one run (relabelled); a user's policy
# promises no such thing and is always simulated
_SAME_AT_R1 = (CheckpointOnly, ReplicationCheckpoint, SpareCheckpoint)


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
        """The fields as a JSON-friendly dict (``inf`` and ``nan`` become None)."""
        return fields_dict(self)


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
        return fields_dict(self)

    def to_frame(self):
        """The runs as a pandas DataFrame, one row per run (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("SweepResult.to_frame needs pandas: pip install pandas") from None
        return pd.DataFrame([r.to_dict() for r in self.runs])

    def __repr__(self) -> str:
        return f"SweepResult({len(self.runs)} runs, {len(self.summaries)} cells)"


def run_group(scenario, seed, policies) -> list:
    """All runs of ``policies`` on one scenario and seed, sharing the seed's failures.

    Parameters
    ----------
    scenario : Scenario
    seed : int or numpy.random.SeedSequence
        As :func:`spare_core.sim.simulate`'s ``seed``.
    policies : sequence of Policy
        Already checked against ``scenario``.

    Returns
    -------
    list of RunResult
        In the order of ``policies``.

    Notes
    -----
    The runs share one cache of the seed's per-epoch failures
    (:meth:`Scenario.epoch_failures`; common random numbers) and are simulated
    by decreasing r, so that the deepest epoch prefixes are drawn first (fewer rebuilds of
    the cache's driver). The cache keeps each epoch's failures as offsets drawn from the
    epoch start, so a run's numbers do not depend on which other runs share it: each equals
    a fresh :func:`simulate` bit for bit (tests/test_hardening_determinism.py). At r = 1
    every failure of the built-in policies is a global restart, so those with the same
    interval rule are one run, simulated once and relabelled (tests/test_sim_sweep.py
    checks the equivalence).
    """
    source = scenario.epoch_failures(seed)
    out = [None] * len(policies)
    r1 = {}
    order = sorted(range(len(policies)), key=lambda i: -policies[i].redundancy)
    for i in order:
        policy = policies[i]
        if policy.redundancy == 1 and type(policy) in _SAME_AT_R1:
            memo = r1.get(policy.interval)
            if memo is None:
                memo = r1[policy.interval] = simulate(scenario, policy, seed=seed, failures=source)
            out[i] = replace(memo, policy=policy.name, wipeouts=memo.restarts if policy.restart_is_wipeout else 0)
        else:
            out[i] = simulate(scenario, policy, seed=seed, failures=source)
    return out


def _task(args):
    scenario, seed, jobs = args
    runs = run_group(scenario, seed, [p for _, p in jobs])
    return [(key, run) for (key, _), run in zip(jobs, runs)]


def expand_policies(scenario, policies, redundancies, *, policy_kwargs=None, interval=None, where=""):
    """The policies of one scenario: ``[(policy index, Policy)]`` for every source at every r.

    Sources that use a redundancy are built at each r of ``redundancies`` that is <= the
    scenario's N; the others once. Every policy is checked against the scenario.

    Raises
    ------
    ValueError
        A source for which no r fits (every r > N), a policy that cannot run on the
        scenario, or two sources with the same label at the same r.
    """
    policy_kwargs = policy_kwargs or {}
    out = []
    seen = {}
    for pi, src in enumerate(policies):
        kw = policy_kwargs.get(src, {}) if isinstance(src, str) else {}
        if uses_redundancy(src):
            rs = [r for r in redundancies if r <= scenario.n_groups]
            if not rs:
                raise ValueError(
                    f"no redundancy in {list(redundancies)} is <= n_groups = {scenario.n_groups} of scenario "
                    f"{scenario.name!r}{where}, so policy {_show(src)} has no run there"
                )
            built = [policy_at(src, r, interval=interval, **kw) for r in rs]
        else:
            built = [policy_at(src, None, interval=interval, **kw)]
        for p in built:
            p.check(scenario)
            cell = (p.name, p.redundancy)
            if cell in seen and seen[cell] != pi:
                raise ValueError(
                    f"policies {_show(policies[seen[cell]])} and {_show(src)} both give label {p.name!r} at r = "
                    f"{p.redundancy}; give one another label (Policy.name) so their cells can be told apart"
                )
            seen[cell] = pi
            out.append((pi, p))
    return out


def _show(src):
    if isinstance(src, str):
        return repr(src)
    return getattr(src, "__qualname__", None) or type(src).__name__


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
    policies : sequence, default ("ckpt", "rep", "spare")
        Each a :data:`~spare_core.sim.policies.POLICY_REGISTRY` name, a Policy object (run
        as it is, at its own r) or a factory of r (``f(r) -> Policy``, e.g.
        :class:`SpareCheckpoint`). A policy without redundancy ("ckpt") runs once (r = 1).
    redundancies : iterable of int, default 1..20
        Values of r; those above a scenario's N are skipped for that scenario (an error if
        none is left for a policy).
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
        Bad scenarios, unknown policy names, r < 1, negative seeds, processes < 0, an empty
        grid, a policy with no r <= N or that cannot run on a scenario, two policies with
        one label (all checked before any simulation).

    Notes
    -----
    Runs on one (scenario, seed) share the seed's failures (common random numbers, whatever
    the policy: built in or not), drawn once per epoch (:func:`run_group`). Results do not
    depend on ``processes``.

    Examples
    --------
    >>> res = sweep(Scenario.paper_600k(200, n_steps=100), ("rep", SpareCheckpoint), [2, 4], [0])
    >>> len(res.runs), res.best(200, "SPARe+CKPT").redundancy in (2, 4)
    (4, True)
    """
    if isinstance(scenarios, Scenario):
        scenarios = [scenarios]
    scenarios = list(scenarios)
    if not scenarios or not all(isinstance(s, Scenario) for s in scenarios):
        raise TypeError("scenarios must be a Scenario or a non-empty sequence of Scenario")
    policies = [policies] if isinstance(policies, str) or callable(policies) else list(policies)
    for p in policies:
        uses_redundancy(p)  # names checked, objects and factories recognised
    rs = sorted({as_int(r, "r", min_value=1) for r in redundancies})
    seed_list = [as_int(s, "seed", min_value=0) for s in seeds]
    for what, grid in (("policies", policies), ("redundancies", rs), ("seeds", seed_list)):
        if not grid:
            raise ValueError(f"{what} must not be empty: the sweep would have no run")
    procs = as_int(processes, "processes", min_value=0) or (os.cpu_count() or 1)
    policy_kwargs = dict(policy_kwargs or {})
    unknown = set(policy_kwargs) - {p for p in policies if isinstance(p, str)}
    if unknown:
        raise ValueError(f"policy_kwargs names policies not in the sweep: {sorted(unknown)}")

    cells = []  # (scenario index, policy index, r) in report order
    tasks = []
    for si, sc in enumerate(scenarios):
        jobs = [((si, pi, p.redundancy), p) for pi, p in expand_policies(sc, policies, rs, policy_kwargs=policy_kwargs)]
        cells.extend(key for key, _ in jobs)
        tasks.extend((sc, seed, jobs) for seed in seed_list)
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
