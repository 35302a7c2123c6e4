"""In-memory sweeps over scenarios, policies, redundancies and seeds (:func:`sweep`, the
Python entry point onto a :class:`~spare_core.sim.study.Study` and the one executor), and the
unit of work every execution is made of: all runs of one scenario on one seed, sharing that
seed's failures (:func:`run_group`).

Durable, resumable and distributed executions (a store on disk, Dask) are
:mod:`spare_core.sweeps`; they run the same executor.
"""
from __future__ import annotations

from dataclasses import replace

from .._validate import as_int
from ..strategies import DEFAULT_POLICIES, uses_redundancy
from .results import ResultSet, Summary, SweepResult, summarise
from .run import simulate
from .scenario import Scenario

__all__ = ["sweep", "SweepResult", "ResultSet", "Summary", "summarise", "run_group"]



def _checkpoint_only_equivalent(policy) -> bool:
    """Whether ``policy`` says its runs are checkpoint-only's (the protocol's hook; a policy
    object without it promises no such thing and is always simulated)."""
    hook = getattr(policy, "checkpoint_only_equivalent", None)
    return bool(hook()) if callable(hook) else False


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
    every failure of the built-in policies is a global restart (they say so through
    ``Policy.checkpoint_only_equivalent``), so those with the same interval rule are one run,
    simulated once and relabelled (tests/test_sim_sweep.py checks the equivalence).
    """
    source = scenario.epoch_failures(seed)
    out = [None] * len(policies)
    r1 = {}
    order = sorted(range(len(policies)), key=lambda i: -policies[i].redundancy)
    for i in order:
        policy = policies[i]
        if _checkpoint_only_equivalent(policy):
            memo = r1.get(policy.interval)
            if memo is None:
                memo = r1[policy.interval] = simulate(scenario, policy, seed=seed, failures=source)
            out[i] = replace(memo, policy=policy.name, wipeouts=memo.restarts if policy.restart_is_wipeout else 0)
        else:
            out[i] = simulate(scenario, policy, seed=seed, failures=source)
    return out


def sweep(
    scenarios,
    policies=DEFAULT_POLICIES,
    redundancies=range(1, 21),
    seeds=range(5),
    *,
    processes=1,
    policy_kwargs=None,
) -> ResultSet:
    """Simulate every policy at every redundancy on every scenario and seed.

    Parameters
    ----------
    scenarios : Scenario or sequence of Scenario
    policies : sequence, default :data:`~spare_core.strategies.DEFAULT_POLICIES`
        Each a :data:`~spare_core.strategies.POLICY_REGISTRY` name, a Policy object (run
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
    ResultSet

    Raises
    ------
    TypeError, ValueError
        Bad scenarios, unknown policy names, r < 1, negative seeds, processes < 0, an empty
        grid, a policy with no r <= N or that cannot run on a scenario, two policies with
        one label (all checked before any simulation).

    Notes
    -----
    A :class:`~spare_core.sim.study.Study` with ``streams="seed"`` (each run equals
    :func:`simulate` with that seed, bit for bit) run by
    :func:`spare_core.sim.executor.execute`. Runs on one (scenario, seed) share the seed's
    failures (common random numbers, whatever the policy: built in or not), drawn once per
    epoch (:func:`run_group`). Results do not depend on ``processes``.

    Examples
    --------
    >>> from spare_core.strategies import SpareCheckpoint
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
    procs = as_int(processes, "processes", min_value=0)
    unknown = set(policy_kwargs or {}) - {p for p in policies if isinstance(p, str)}
    if unknown:
        raise ValueError(f"policy_kwargs names policies not in the sweep: {sorted(unknown)}")
    from .executor import execute  # the executor runs run_group: imported when called
    from .study import Study

    study = Study(scenarios, policies, rs, seeds=seed_list, policy_options=policy_kwargs, name="sweep",
                  streams="seed")
    return execute(study, workers=procs)
