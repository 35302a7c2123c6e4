"""Run a sweep's (scenario, seed) tasks with a progress bar and a clean stop on Ctrl-C.

:func:`spare_core.sim.sweep` runs a whole grid and returns when it is done. The commands
need more: a progress bar on a long grid, and the runs finished so far when the user
presses Ctrl-C. So they split the grid into the tasks ``sweep`` itself would run (one per
scenario and seed: the runs of a seed share its failures) and call ``sweep`` on each; a
seed's runs do not depend on the other seeds, so the assembled result is the one a single
``sweep`` call gives, bit for bit.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from ..sim import RunResult, Scenario, SweepResult, summarise, sweep
from ..sweeps.execute import map_unordered

__all__ = ["GridRun", "run_grid", "progress_bar"]


@dataclass
class GridRun:
    """The outcome of :func:`run_grid`.

    Attributes
    ----------
    result : SweepResult
        Runs and per-cell summaries; after an interruption, only the cells and seeds that
        finished (each summary counts its seeds).
    interrupted : bool
        True when Ctrl-C stopped the grid.
    elapsed : float
        Wall seconds.
    tasks_done, tasks_total : int
        (scenario, seed) tasks finished and planned.
    task_seconds : list of dict
        Per finished task: scenario name, seed and wall seconds.
    processes : int
        Worker processes used.
    """

    result: SweepResult
    interrupted: bool
    elapsed: float
    tasks_done: int
    tasks_total: int
    processes: int
    task_seconds: list[dict[str, Any]] = field(default_factory=list)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, desc: str) -> Any:
    """A tqdm bar on stderr when stderr is a terminal (shown after 2 s), else a silent one.

    tqdm is optional (the ``cli`` extra): without it there is no bar.
    """
    if not sys.stderr.isatty():
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit="task", file=sys.stderr, delay=2.0, leave=False,
                dynamic_ncols=True)


def _task(job: tuple[int, Scenario, int, tuple[str, ...], tuple[int, ...], dict[str, Any] | None]
          ) -> tuple[int, int, list[RunResult], float]:
    index, scenario, seed, policies, redundancies, kwargs = job
    t = time.perf_counter()
    res = sweep(scenario, policies, redundancies, [seed], processes=1, policy_kwargs=kwargs)
    return index, seed, list(res.runs), time.perf_counter() - t


def _results(jobs: list[Any], processes: int) -> Iterator[tuple[int, int, list[RunResult], float]]:
    if processes == 1 or len(jobs) == 1:
        for job in jobs:
            yield _task(job)
        return
    # a worker that dies raises BrokenProcessPool here (multiprocessing.Pool waited for ever)
    yield from map_unordered(_task, jobs, processes)


def run_grid(scenarios: Sequence[Scenario], policies: Sequence[str], redundancies: Sequence[int],
             seeds: Sequence[int], *, processes: int = 0, policy_kwargs: dict[str, dict[str, Any]] | None = None,
             desc: str = "runs") -> GridRun:
    """Every policy at every r on every scenario and seed, as :func:`spare_core.sim.sweep`.

    Parameters
    ----------
    scenarios : sequence of Scenario
    policies, redundancies, seeds, policy_kwargs
        As :func:`spare_core.sim.sweep` (checked by it: the first task fails fast on a bad one).
    processes : int, default 0
        Worker processes; 0: one per CPU, at most one per task.
    desc : str
        Label of the progress bar.

    Returns
    -------
    GridRun
        Complete, or with ``interrupted=True`` and the tasks finished before Ctrl-C.
    """
    scenarios = list(scenarios)
    seeds = list(seeds)
    pol = tuple(policies)
    rs = tuple(redundancies)
    jobs = [(i, sc, s, pol, rs, policy_kwargs) for i, sc in enumerate(scenarios) for s in seeds]
    # the biggest scenarios first, so the pool's last tasks are short (as sweep does)
    jobs.sort(key=lambda j: -j[1].n_groups)
    # never more workers than tasks (a file's compare.processes = 10**9 must not fork 10**9 times)
    procs = min(processes or os.cpu_count() or 1, len(jobs))
    done: dict[tuple[int, int], list[RunResult]] = {}
    timings: list[dict[str, Any]] = []
    interrupted = False
    bar = progress_bar(len(jobs), desc)
    t0 = time.perf_counter()
    try:
        for index, seed, runs, seconds in _results(jobs, procs):
            done[(index, seed)] = runs
            timings.append({"scenario": scenarios[index].name, "seed": seed, "seconds": seconds})
            bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    elapsed = time.perf_counter() - t0
    all_runs: list[RunResult] = []
    summaries = []
    for i, sc in enumerate(scenarios):
        per_seed = [done[(i, s)] for s in seeds if (i, s) in done]
        if not per_seed:
            continue
        for j in range(len(per_seed[0])):
            cell = [runs[j] for runs in per_seed]
            all_runs.extend(cell)
            summaries.append(summarise(cell, sc.n_groups))
    return GridRun(SweepResult(all_runs, summaries), interrupted, elapsed, len(done), len(jobs), procs, timings)
