"""The one table of ranges: every quantity a scenario file, a ``--set`` override, a flag or a
sweep spec can set, and the range it must lie in.

Infrastructure: the file reader (:class:`spare_core._files.Reader`), the CLI's argparse types
(``spare_core.commands``), sweep specs and :class:`spare_core.sim.Study` all read their bounds
here, so that ``--steps``, ``--set job.steps=...``, ``job.steps`` in a file and a spec's
``n_steps`` meet the same rule and the same message. A range bounds one value; the work a whole
scenario asks for is bounded by the budget (:data:`BUDGET`, checked by the commands before any
run, docs/cli.md).
"""
from __future__ import annotations

import contextlib
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Range", "RANGES", "KEYS", "MAX_COUNT", "MAX_SEED", "MAX_SEEDS", "MAX_PROCESSES", "MIN_SECONDS",
           "MAX_SECONDS", "BUDGET", "range_of", "check", "forcing", "forced"]

#: the largest count (nodes, groups, steps, r, ...): the kernels index with C ``int``
MAX_COUNT = 2**31 - 1
#: the largest seed: seeds are stored as signed 64-bit integers (a store's Parquet parts)
MAX_SEED = 2**63 - 1
#: the most seeds per cell: a grid keeps one task per (scenario, seed) in memory
MAX_SEEDS = 2**24
#: the most worker processes a command starts (each a forked copy of the process)
MAX_PROCESSES = 1024
#: durations: at least a microsecond (a step of 5e-324 s is T0 = 0) ...
MIN_SECONDS = 1e-6
#: ... and at most 10**12 s (31,700 years): products with group and node counts stay finite
MAX_SECONDS = 1e12


@dataclass(frozen=True)
class Range:
    """A closed (or left-open) interval of ints or finite floats.

    Attributes
    ----------
    kind : {"int", "float"}
    low, high : int or float
    low_open : bool
        ``low`` itself is excluded.
    high_open : bool
        ``high`` itself is excluded.
    unit : str
        ``"s"`` for a duration (named in the rule).
    """

    kind: str
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    unit: str = ""

    def contains(self, x: Any) -> bool:
        """Whether the number ``x`` lies in the range (a float must be finite)."""
        if isinstance(x, float) and not math.isfinite(x):
            return False
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        return bool(above and below)

    def rule(self) -> str:
        """The range in words: ``"an integer >= 1 and <= 2147483647"``, ``"a duration >= 1e-06 s ..."``."""
        what = {"int": "an integer", "float": "a finite number"}[self.kind]
        if self.unit == "s":
            what = "a duration (seconds, or a string such as '90 s', '30 min', '3.1 h', '54 d')"
        u = f" {self.unit}" if self.unit else ""
        lo = f"{'>' if self.low_open else '>='} {_num(self.low)}{u}"
        hi = f"{'<' if self.high_open else '<='} {_num(self.high)}{u}"
        return f"must be {what} {lo} and {hi}"


def _num(x: float) -> str:
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e16):
        return str(int(x))
    return f"{x:g}"


#: the ranges, by quantity
RANGES: dict[str, Range] = {
    "count": Range("int", 1, MAX_COUNT),
    "seed": Range("int", 0, MAX_SEED),
    "seeds": Range("int", 1, MAX_SEEDS),
    "processes": Range("int", 0, MAX_PROCESSES),
    # a run stops unfinished at this many T0; more than 10**6 is never an answer
    "horizon": Range("float", 1.0, 1e6, low_open=True),
    # the Weibull shape: the published ones are 0.3-1.5. Below ~0.012 the law's variance
    # overflows float64 (Gamma(1 + 2/k)); below 0.05 a renewed node fails again within a chunk
    # of the node log millions of times in a row (at 0.02 about 2e9: no run ends), at 0.05 about
    # 3e4 (drawn in blocks)
    "shape": Range("float", 0.05, 100.0),
    "duration": Range("float", MIN_SECONDS, MAX_SECONDS, unit="s"),
    "duration0": Range("float", 0.0, MAX_SECONDS, unit="s"),
    # failures per node-day, per 1,000 node-days, per GPU-year
    "rate": Range("float", 1e-12, 1e9),
    # tokens of a job or a step, tokens per second
    "tokens": Range("float", 0.0, 1e24, low_open=True),
    "jitter": Range("float", 0.0, 1.0, high_open=True),
    "task_seconds": Range("float", 0.0, 86_400.0, low_open=True),
    # a measured straggler slowdown (step time over its ideal): a job 100 times slower than its
    # ideal is not a straggler but a broken job
    "slowdown": Range("float", 0.0, 100.0, low_open=True),
    # a share of a loss (M_S, the part in communications)
    "share": Range("float", 0.0, 1.0),
    # a worker's rank label in a trace
    "rank": Range("int", 0, MAX_COUNT),
}

#: the quantity of every key a file, an override, a flag or a spec can set (file keys dotted;
#: ``failures.domains.mtbf`` stands for every ``[[failures.domains]]`` level's; flags with
#: their dashes; a sweep spec's scenario keys as ``scenario.<keyword of Scenario>``)
KEYS: dict[str, str] = {
    **{f"cluster.{k}": "count" for k in ("gpus", "nodes", "gpus_per_node", "gpus_per_group", "tp", "pp")},
    "job.step_time": "duration", "job.allreduce_time": "duration0", "job.steps": "count",
    "job.tokens": "tokens", "job.tokens_per_step": "tokens", "job.tokens_per_second": "tokens", "job.jitter": "jitter",
    "failures.weibull_shape": "shape",
    "failures.per_node_day": "rate", "failures.per_1000_node_days": "rate", "failures.per_gpu_year": "rate",
    "failures.interruptions": "count", "failures.period": "duration", "failures.measured_on_gpus": "count",
    "failures.mtbf": "duration", "failures.node_mtbf": "duration", "failures.nodes_per_group": "count",
    "failures.trace.unit_gpus": "count", "failures.trace.boot": "duration0",
    "failures.domains.nodes": "count", "failures.domains.mtbf": "duration",
    "failures.domains.interruptions": "count", "failures.domains.period": "duration",
    "failures.domains.measured_on_gpus": "count",
    "costs.restart": "duration0", "costs.checkpoint_save": "duration", "costs.shrink": "duration0",
    "costs.controller": "duration0",
    "repair.swap": "duration0", "repair.time": "duration0", "repair.rejoin": "duration0",
    "checkpoint.memory_save": "duration", "checkpoint.memory_every": "duration",
    "checkpoint.memory_restore": "duration0", "elastic.reconfigure": "duration0",
    "compare.r_max": "count", "compare.redundancies": "count", "compare.seeds": "seeds",
    "compare.interval": "duration", "compare.horizon": "horizon", "compare.processes": "processes",
    "policy.interval": "duration",
    "stragglers.slowdown": "slowdown", "stragglers.evict_slowdown": "slowdown", "stragglers.stage_share": "share",
    "stragglers.comm_share": "share", "stragglers.worker": "rank", "stragglers.rebalance_cost": "duration0",
    **{f"stragglers.{k}": "count" for k in ("dp", "pp", "tp", "cp", "vpp")},
    # flags
    "--steps": "count", "--r-max": "count", "--seeds": "seeds", "--horizon": "horizon", "--processes": "processes",
    "--groups": "count", "--workers": "processes", "--batch-runs": "count", "--task-seconds": "task_seconds",
    "--seed": "seed", "--nodes": "count", "--iterations": "count", "--replicas": "count",
    "--nodes-per-leaf": "count", "--redundancy": "count", "--every": "count",
    # sweep specs: the seeds, r, and a scenario's keywords
    "seeds": "seeds", "seed": "seed", "redundancies": "count",
    "scenario.n_groups": "count", "scenario.n_steps": "count", "scenario.t_compute": "duration",
    "scenario.t_allreduce": "duration0", "scenario.system_mtbf": "duration", "scenario.weibull_shape": "shape",
    "scenario.restart_time": "duration0", "scenario.checkpoint_time": "duration",
    "scenario.checkpoint_drain": "duration0", "scenario.shrink_time": "duration0",
    "scenario.controller_time": "duration0", "scenario.max_wall_factor": "horizon", "scenario.jitter": "jitter",
    "scenario.gpus_per_group": "count",
}

_INDEX = re.compile(r"\[\d+\]")


def range_of(key: str) -> Range | None:
    """The range of ``key`` (a file key, a flag, a spec key), or None for a key without one.

    An indexed level (``failures.domains[1].mtbf``) and a policy's table
    (``policy.spare.interval``) read the range of their kind of key.

    Examples
    --------
    >>> range_of("job.steps").high, range_of("--processes").high
    (2147483647, 1024)
    >>> range_of("failures.domains[1].mtbf") is RANGES["duration"]
    True
    """
    k = _INDEX.sub("", key)
    if k.startswith("policy.") and k.endswith(".interval"):
        k = "policy.interval"
    q = KEYS.get(k)
    return None if q is None else RANGES[q]


def check(key: str, value: Any) -> Any:
    """``value`` if it lies in ``key``'s range, else ValueError ``"<key> <rule>, got <value>"``.

    Examples
    --------
    >>> check("compare.processes", 4)
    4
    >>> check("compare.processes", 10**9)
    Traceback (most recent call last):
    ...
    ValueError: compare.processes must be an integer >= 0 and <= 1024, got 1000000000
    """
    r = range_of(key)
    if r is not None and not r.contains(value):
        raise ValueError(f"{key} {r.rule()}, got {value!r}")
    return value


#: the work a command may start without ``--force`` (docs/cli.md, "Budget"): failures expected
#: before the wall limit and steps walked, per run and over the whole grid, and the memory of
#: the failure logs a seed's runs share
BUDGET: dict[str, float] = {
    "failures_per_run": 2e6,
    "steps_per_run": 2e9,
    "failures": 5e8,
    "steps": 5e11,
    "log_bytes": 4e9,
    # what a study holds before its first run, counted before it is built: scenarios built and
    # checked (a preset's about 25 us, a scenario file's 0.5 ms), and scenario-seed pairs (the
    # executor's groups, about 850 bytes each: 10**6 took 850 MB and 11 s, measured)
    "scenarios": 1e5,
    "pairs": 2e6,
    # spare demo: the matching's slot-expanded graph (N r S entries, S <= r) walked once per
    # failure up to the expected wipe-out, and the bytes of that graph
    "matching_work": 5e11,
    "matching_bytes": 4e9,
    # spare pacing: ranks x iterations x replicas x 2 (unpaced and paced) over the node counts,
    # and the bytes of the largest job's per-rank state
    "pacing_work": 1e11,
    "pacing_bytes": 4e9,
}


# whether the running command was given --force: work the budget refuses that is met below the
# commands (a law fitted and re-checked while the scenario file is read) asks here
_forced: list[bool] = [False]


@contextlib.contextmanager
def forcing(flag: bool) -> Any:
    """Within the block, :func:`forced` is ``flag`` (the ``spare`` command's ``--force``)."""
    before = _forced[0]
    _forced[0] = bool(flag)
    try:
        yield
    finally:
        _forced[0] = before


def forced() -> bool:
    """Whether work beyond :data:`BUDGET` was asked for anyway (``--force``; False outside a command)."""
    return _forced[0]
