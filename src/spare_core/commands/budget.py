"""The work budget: a study whose expected work is beyond :data:`spare_core._limits.BUDGET` is
refused before any run, with the estimate in the message, unless ``--force`` is given.

The estimate reads the scenarios alone (docs/cli.md, "Budget"): a run simulates at most up to
its wall limit ``horizon x T0``; at the failure model's long-run rate (its system MTBF, which
the Weibull shape keeps) it meets ``horizon x T0 / MTBF`` failures and walks at most
``horizon x steps`` steps; a node-renewal log holds every node failure up to the wall limit,
about 64 bytes each, once per seed in each worker. A law fitted to a failure log
(``failures.law = "fit"``; ``fit_law = "best"`` fits every law) and its re-check count too,
converted to failures of a run by their measured time (:func:`fit_cost`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import _limits
from . import UsageError

__all__ = ["Estimate", "estimate", "check_budget", "fit_cost", "file_fit_cost", "check_fit_command",
           "FIT_FAILURES_PER_ROW", "CHECK_FAILURES_PER_ROW", "check_runs", "check_matching_demo", "check_pacing_work", "check_grid", "check_counts", "LOG_BYTES_PER_FAILURE",
           "MATCHING_BYTES_PER_SLOT"]

#: bytes a node failure log keeps per failure (a float and a group id in two Python lists)
LOG_BYTES_PER_FAILURE = 64
#: bytes per slot edge of ``spare demo``'s slot-expanded graph while scipy solves it (row, column
#: and value arrays, their repeats and the CSR copy; measured about 50)
MATCHING_BYTES_PER_SLOT = 64

# What fitting a law to a log costs, in failures of a simulated run (the budget's unit: a run's
# failure took about 14 us, simulate() on 64 groups, 11,815 failures in 0.16 s of CPU). Measured
# on the shared 2-core machine (2026-12-04, CPU time, logs of 2,000-16,000 nodes and
# 2,046-64,148 rows, spare_core.events.fit and fit_check):
#: one law's fit, per row and node of the log: the Weibull takes 0.3-1.8 us per (row + node)
#: (34 us once, its optimiser wandering), the log-normal 3.7-83 us; 6 failures of a run is the
#: worst measured, ~83 us, so a fit is never counted below what it took
FIT_FAILURES_PER_ROW = 6.0
#: one replicate of a fit's re-check (check_fit simulates the log's window on its nodes), per
#: row and node: 0.13-0.20 us measured, about 1/70 of a run's failure
CHECK_FAILURES_PER_ROW = 0.015


@dataclass(frozen=True)
class Estimate:
    """The work of a study, estimated before any run.

    Attributes
    ----------
    runs : int
    failures_per_run, steps_per_run : float
        The largest over the study's scenarios.
    failures, steps : float
        Summed over every run.
    log_bytes : float
        The largest node-failure log of one seed (0 without node renewals).
    fit_failures : float
        A law fitted to a failure log and its re-check, in failures of a run
        (:func:`fit_cost`); counted in ``failures`` too.
    """

    runs: int
    failures_per_run: float
    steps_per_run: float
    failures: float
    steps: float
    log_bytes: float
    fit_failures: float = 0.0

    def over(self) -> list[str]:
        """The budget lines this estimate exceeds, in words."""
        b = _limits.BUDGET
        out = []
        for key, words in (("failures_per_run", "failures per run"), ("steps_per_run", "steps per run"),
                           ("failures", "failures over all runs"), ("steps", "steps over all runs"),
                           ("log_bytes", "bytes of a node failure log")):
            v = getattr(self, key)
            if not v <= b[key]:
                if key == "failures" and self.fit_failures:
                    words += f", {_g(self.fit_failures)} of them the log's fit and its re-check"
                out.append(f"{_g(v)} {words} (budget {_g(b[key])})")
        return out


def _g(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else "inf"


def _scenario(sc: Any) -> tuple[float, float, float]:
    """Failures and steps of one run of ``sc`` up to its wall limit, and its node log's bytes."""
    wall = sc.max_wall_factor * sc.t0
    try:
        mtbf = float(sc.system_mtbf)
    except (ArithmeticError, ValueError):
        mtbf = 0.0
    failures = wall / mtbf if mtbf > 0 else math.inf
    steps = sc.max_wall_factor * sc.n_steps
    log = failures * LOG_BYTES_PER_FAILURE if getattr(sc.failures, "kind", "") == "node" or \
        getattr(getattr(sc.failures, "base", None), "kind", "") == "node" else 0.0
    return failures, steps, log


def estimate(scenarios: Any, runs_per_scenario: Any, fit_failures: float = 0.0) -> Estimate:
    """The estimate of runs of ``scenarios`` (``runs_per_scenario``: one count per scenario),
    plus ``fit_failures`` (a law's fit and re-check, :func:`fit_cost`) in the failures."""
    fpr = spr = fl = st = lb = 0.0
    runs = 0
    for sc, n in zip(scenarios, runs_per_scenario):
        f, s, b = _scenario(sc)
        fpr, spr, lb = max(fpr, f), max(spr, s), max(lb, b)
        fl += f * n
        st += s * n
        runs += n
    fit = float(fit_failures)
    return Estimate(runs=runs, failures_per_run=fpr, steps_per_run=spr, failures=fl + fit, steps=st, log_bytes=lb,
                    fit_failures=fit)


def fit_cost(rows: int, units: int, laws: int, replicates: int) -> float:
    """Fitting ``laws`` laws to a log of ``rows`` failures on ``units`` nodes and re-checking each
    over ``replicates`` simulated windows, in failures of a run: per law
    ``(rows + units) x (FIT_FAILURES_PER_ROW + CHECK_FAILURES_PER_ROW x replicates)`` (measured,
    see the constants; 200 replicates: 9 per row and node)."""
    per = float(max(int(rows), 1)) + float(max(int(units), 0))
    return float(laws) * per * (FIT_FAILURES_PER_ROW + CHECK_FAILURES_PER_ROW * float(replicates))


def file_fit_cost(sf: Any) -> float:
    """The fit a scenario file made while it was read (``failures.law = "fit"``, or a replay's
    ``after = "fit"``), in failures of a run (:func:`fit_cost`); 0 without one. ``fit_law =
    "best"`` fits every law its model takes (with ``fit_rate = "periods"``: the two with a rate
    per period) and re-checks each."""
    from ..events.fit import LAWS, NODE_LAWS
    from ..events.fit_check import DEFAULT_REPLICATES

    trace = getattr(sf, "trace", None)
    if getattr(sf, "fit", None) is None or trace is None:
        return 0.0
    fl = (getattr(sf, "data", None) or {}).get("failures", {})
    if fl.get("fit_law", "weibull") != "best":
        laws = 1
    elif fl.get("fit_rate") == "periods":
        laws = 2
    elif fl.get("model", "node") == "node":
        laws = len(NODE_LAWS)
    elif fl.get("model") == "trace":
        laws = len(LAWS)
    else:
        laws = 2  # the per-unit and system models take the exponential and the Weibull
    return fit_cost(trace.n_events, trace.n_units or 0, laws, DEFAULT_REPLICATES)


#: bytes a fit's re-check keeps per replicate and period (the int64 counts, their float64
#: sorted copy and the per-replicate distances: 8 + 8 + 8)
FIT_CHECK_BYTES_PER_CELL = 24
#: the most a re-check's per-period arrays may take; refused even with --force (it would not fit:
#: ``--periods 1`` on a year's log is 3e7 periods a replicate)
FIT_CHECK_BYTES = 4e9


def check_fit_command(trace: Any, laws: int, replicates: int, force: bool, what: str, periods: int = 1) -> float:
    """``spare fit``'s work (:func:`fit_cost` of ``laws`` fits, each re-checked ``replicates``
    times), before anything is fitted: :class:`UsageError` beyond the budget's failures over all
    runs unless ``force``, and beyond :data:`FIT_CHECK_BYTES` for the per-period counts of one
    check (``replicates x periods`` cells) even then. Returns the work."""
    memory = float(replicates) * float(periods) * FIT_CHECK_BYTES_PER_CELL
    if memory > FIT_CHECK_BYTES:
        raise UsageError(f"{what + ': ' if what else ''}a re-check of {replicates} replicates over {periods:,} periods "
                         f"would keep about {_g(memory)} bytes of counts (budget {_g(FIT_CHECK_BYTES)}); take longer "
                         "--periods or fewer --replicates")
    work = fit_cost(trace.n_events, trace.n_units or 0, laws, replicates)
    budget = _limits.BUDGET["failures"]
    if work > budget and not force:
        raise UsageError(f"{what + ': ' if what else ''}the expected work is beyond the budget: {laws} fits of the "
                         f"log's {trace.n_events:,} failures on {trace.n_units:,} nodes, each re-simulated {replicates} "
                         f"times, about {_g(work)} failures of a run (budget {_g(budget)}; fewer --replicates or "
                         "--laws, or --force runs it anyway)")
    return work


def check_budget(study: Any, force: bool, what: str, fit_failures: float = 0.0) -> Estimate:
    """Raise :class:`UsageError` if ``study`` is beyond the budget and ``force`` is false.

    Each scenario must still be runnable at all (``Scenario.check_runnable``), ``--force`` or not.
    ``fit_failures``: a law's fit and re-check counted with the runs (:func:`file_fit_cost`).
    """
    scs = list(study.scenarios)
    counts = [0] * len(scs)
    for g in study.groups():
        counts[g.scenario_index] += len(g.runs)
    return check_runs(scs, counts, force, what, fit_failures)


def check_runs(scenarios: Any, runs_per_scenario: Any, force: bool, what: str, fit_failures: float = 0.0) -> Estimate:
    """:func:`check_budget` for work given as runs per scenario (the most a command will run
    of each: ``spare map`` bounds its searches so): :class:`UsageError` beyond the budget
    unless ``force``, and for a scenario that cannot be simulated at all."""
    scs = list(scenarios)
    est = estimate(scs, list(runs_per_scenario), fit_failures)
    over = est.over()
    if over and not force:
        raise UsageError(f"{what + ': ' if what else ''}the expected work is beyond the budget: {'; '.join(over)} "
                         f"({est.runs} runs; --force runs it anyway)")
    for sc in scs:
        try:
            sc.check_runnable()
        except ValueError as exc:
            raise UsageError(f"{what + ': ' if what else ''}scenario {sc.name!r} cannot be simulated: {exc}") from None
    return est


def check_matching_demo(n: int, r: int, force: bool = False) -> tuple[float, float]:
    """``spare demo``'s work and memory, before anything is allocated: :class:`UsageError`
    beyond the budget (``matching_work``, ``matching_bytes``) unless ``force``; the memory is
    refused even then (it would not fit, as 2**31 types would not: 16.9 GB in 53 s, then a
    MemoryError).

    The demo walks the slot-expanded graph (N r S slot edges, S <= r) once per failure, about
    ``Gamma(1 + 1/r) N**(1 - 1/r)`` failures to the wipe-out (the closed form it prints).
    Returns ``(work, bytes)``.
    """
    slots = float(n) * r * r
    failures = min(float(n), math.gamma(1 + 1 / r) * float(n) ** (1 - 1 / r))
    work, memory = failures * slots, slots * MATCHING_BYTES_PER_SLOT
    b = _limits.BUDGET
    if memory > b["matching_bytes"]:
        raise UsageError(f"--types {n} --redundancy {r}: the matching graph would take about {_g(memory)} bytes "
                         f"(N r^2 = {_g(slots)} slot edges, {MATCHING_BYTES_PER_SLOT} bytes each; budget "
                         f"{_g(b['matching_bytes'])}); take fewer types or a lower redundancy")
    if work > b["matching_work"] and not force:
        raise UsageError(f"--types {n} --redundancy {r}: the expected work is beyond the budget: {_g(work)} slot "
                         f"edges walked over about {_g(failures)} failures (budget {_g(b['matching_work'])}; "
                         "--force runs it anyway)")
    return work, memory


#: bytes per rank the pacing model keeps while it walks (arrival, entry and hold vectors, the
#: fabric's incidence); 128 GiB for 2**31 nodes of 8 GPUs was measured, 8 bytes per rank per array
PACING_BYTES_PER_RANK = 64


def check_pacing_work(nodes: Any, gpus_per_node: int, iterations: int, replicas: int, force: bool = False) -> float:
    """``spare pacing``'s work (rank-iterations: each node count's ranks x iterations x replicas,
    unpaced and paced) and its largest job's memory, before any array is allocated:
    :class:`UsageError` beyond the budget (``pacing_work`` unless ``force``; ``pacing_bytes``
    even then). Returns the work."""
    ranks = [float(n) * gpus_per_node for n in nodes]
    work = 2.0 * float(iterations) * float(replicas) * sum(ranks)
    memory = max(ranks) * PACING_BYTES_PER_RANK
    b = _limits.BUDGET
    if memory > b["pacing_bytes"]:
        raise UsageError(f"--nodes {max(int(n) for n in nodes)}: the largest job has {_g(max(ranks))} ranks, about "
                         f"{_g(memory)} bytes (budget {_g(b['pacing_bytes'])}); take fewer nodes")
    if work > b["pacing_work"] and not force:
        raise UsageError(f"the expected work is beyond the budget: {_g(work)} rank-iterations (ranks x --iterations x "
                         f"--replicas x 2; budget {_g(b['pacing_work'])}; --force runs it anyway)")
    return work


def check_counts(scenarios: int, pairs: int, runs: int, force: bool, what: str) -> None:
    """A study refused from its counts alone, before it is built: more scenarios than
    ``BUDGET["scenarios"]`` or scenario-seed pairs than ``BUDGET["pairs"]`` is a
    :class:`UsageError` with the budget's message unless ``force`` (``runs``, the fewest runs
    they ask for, is shown). Exact integers: a count of 10**30 is compared, not overflowed."""
    b = _limits.BUDGET
    over = [f"{_g(float(v))} {words} (budget {_g(b[key])})"
            for key, v, words in (("scenarios", scenarios, "scenarios built before the first run"),
                                  ("pairs", pairs, "scenario-seed pairs, about 850 bytes each before the first run"))
            if v > b[key]]
    if over and not force:
        raise UsageError(f"{what + ': ' if what else ''}the expected work is beyond the budget: {'; '.join(over)} "
                         f"(at least {_g(float(runs))} runs; --force runs it anyway)")


def check_grid(scenarios: Any, policies: Any, redundancies: Any, n_seeds: int, force: bool, what: str,
               n_intervals: int = 1) -> Estimate:
    """:func:`check_runs` for a grid described, not built: each scenario's runs counted from its
    group count (a policy with redundancy at every r <= N, one without once) x seeds x
    intervals. Called before the :class:`~spare_core.sim.Study` is built, whose groups (one per
    scenario and seed, 2**24 seeds allowed) would otherwise take gigabytes before the budget
    could refuse them."""
    from ..strategies import uses_redundancy

    scs = list(scenarios)
    # the groups a Study would keep (one per scenario and seed), before it is built
    check_counts(len(scs), len(scs) * int(n_seeds), len(scs) * int(n_seeds) * len(list(policies)), force, what)
    rs = sorted(set(int(r) for r in redundancies))
    counts = []
    for sc in scs:
        per_seed = sum(sum(1 for r in rs if r <= sc.n_groups) if uses_redundancy(p) else 1 for p in policies)
        counts.append(per_seed * int(n_seeds) * int(n_intervals))
    return check_runs(scs, counts, force, what)
