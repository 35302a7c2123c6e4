"""What executing a study gives: every run, a summary per cell, the best cell per policy.

A :class:`ResultSet` is what the terminal tables, the JSON/CSV/Parquet files, the plots and
the reports of the ``spare`` commands are rendered from; :func:`spare_core.sim.sweep` returns
one too (:data:`SweepResult` is its former name).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from typing import Mapping

from .._results import columns, fields_dict, to_jsonable
from .._stats import mean_ci
from .run import RunResult

__all__ = ["ResultSet", "SweepResult", "Summary", "summarise", "mean_ci", "ettr", "RATIO_BOUNDS", "FRACTION_BOUNDS",
           "MEAN_COLUMNS", "SAME_COLUMNS", "cell_mean", "judged_cells", "TIME_PARTS", "KEPT_STEPS", "time_breakdown"]

#: what TTT/T0 can be: a run takes at least its failure-free time (up to the step-time noise,
#: which :func:`mean_ci` allows for by never cutting below the least value seen)
RATIO_BOUNDS = (1.0, math.inf)
#: what ETTR and availability can be: fractions of the wall time
FRACTION_BOUNDS = (0.0, 1.0)


#: the parts of a run's wall time other than its kept steps: (run column, what it is), in the
#: order a breakdown shows them (docs/model.md: the parts partition the wall time)
TIME_PARTS = (("save_time", "saving checkpoints"), ("memory_save_time", "in-memory snapshots"),
              ("restart_time", "restarting"), ("wait_time", "waiting for spare nodes"),
              ("pause_time", "paused for membership changes"), ("lost_time", "work rolled back"))
#: the rest of the wall time: steps computed and kept (redundant stack layers included)
KEPT_STEPS = "kept training steps (redundant copies included)"


def time_breakdown(runs) -> dict[str, float]:
    """Mean seconds of each part of the wall time over ``runs`` (RunResults or their dicts):
    :data:`TIME_PARTS` by column name, :data:`KEPT_STEPS` (the rest of the wall time) and
    ``"wall"``.

    Examples
    --------
    >>> b = time_breakdown([{"wall_time": 100.0, "save_time": 5.0, "memory_save_time": 0.0, "restart_time": 10.0,
    ...                      "wait_time": 0.0, "pause_time": 0.0, "lost_time": 5.0}])
    >>> b[KEPT_STEPS], b["wall"]
    (80.0, 100.0)
    """
    runs = list(runs)
    if not runs:
        raise ValueError("runs must not be empty")

    def get(x, k):
        v = x[k] if isinstance(x, Mapping) else getattr(x, k)
        return 0.0 if v is None else float(v)

    n = len(runs)
    out = {k: math.fsum(get(x, k) for x in runs) / n for k, _ in TIME_PARTS}
    wall = math.fsum(get(x, "wall_time") for x in runs) / n
    out[KEPT_STEPS] = wall - math.fsum(out.values())
    out["wall"] = wall
    return out


def ettr(run: RunResult) -> float:
    """Effective training time ratio of a run: ``T0 / time-to-train`` (failure-free time over
    wall time), NaN for a run that did not finish (its ETTR is only bounded above, by
    1 / horizon): :attr:`RunResult.ettr`.

    Not :attr:`RunResult.availability`, which counts every kept step as useful, the redundant
    stack layers of Rep+CKPT and SPARe+CKPT included; ETTR charges them.
    """
    return RunResult.ettr.fget(run)


#: the run columns a cell's :class:`Summary` holds the mean over seeds of (declared on
#: :class:`RunResult`: cell ``"mean"`` or ``"nanmean"``), in declaration order
MEAN_COLUMNS = tuple(c.name for c in columns(RunResult) if c.cell in ("mean", "nanmean"))
#: the run columns that are one value per cell (cell ``"same"``: the first seed's)
SAME_COLUMNS = tuple(c.name for c in columns(RunResult) if c.cell == "same")


def cell_mean(values, how: str = "mean") -> float:
    """The mean over a cell's seeds of one column (``how``: its declared cell role).

    ``"mean"``: the mean (inf if a value is inf, NaN if one is NaN); ``"nanmean"``: the mean
    of the values that are not NaN (NaN if none is). One rule for :func:`summarise` and the
    store's report (:func:`spare_core.sweeps.summarise_store`).
    """
    xs = np.asarray(values, dtype=np.float64)
    if how == "nanmean":
        return float(np.nanmean(xs)) if np.isfinite(xs).any() else math.nan
    if how != "mean":
        raise ValueError(f"how must be 'mean' or 'nanmean', got {how!r}")
    return float(np.mean(xs))


def judged_cells(cells, *, uses_redundancy: bool, plain_compared: bool, redundancy=lambda c: c.redundancy) -> list:
    """The cells a policy is judged on (its best r, the ranking): with a policy without
    redundancy compared (``plain_compared``), a policy that uses r is judged at r >= 2 — at
    r = 1 it is that policy under another name (every failure a restart) — unless r = 1 is
    all it ran. The one owner of this rule: :meth:`ResultSet.best_per_policy` and
    :func:`spare_core.sweeps.best_redundancy` both ask it.

    Parameters
    ----------
    cells : sequence
        One policy's cells (summaries, or rows of a store's summary).
    uses_redundancy : bool
        Whether that policy uses r.
    plain_compared : bool
        Whether a policy without redundancy is among those compared.
    redundancy : callable
        A cell's r (default: its ``redundancy`` attribute).
    """
    cells = list(cells)
    if plain_compared and uses_redundancy and any(redundancy(c) > 1 for c in cells):
        return [c for c in cells if redundancy(c) > 1]
    return cells


@dataclass(frozen=True)
class Summary:
    """Statistics over seeds of one (scenario, policy, r, interval setting) cell.

    ``ratio_*`` summarise TTT/T0 (``inf`` when any seed did not finish within the horizon);
    ``finished`` counts seeds that finished; ``interval_setting`` is the study's interval
    axis value ("" for the policy's own). ``means`` holds the mean over seeds of every run
    column declared to be averaged (:data:`MEAN_COLUMNS`: availability, overhead, ETTR,
    failures, times, GPU-hours, cost, ...), each also an attribute (``summary.availability``)
    and a key of :meth:`to_dict`; ``ettr`` is NaN when a seed did not finish.
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
    interval_setting: str = ""
    means: Mapping[str, float] = field(default_factory=dict, repr=False)

    def __getattr__(self, name: str) -> float:
        # the means as attributes; only called when no field or method has the name
        means = self.__dict__.get("means")
        if means is not None and not name.startswith("_") and name in means:
            return means[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        interval = f", interval {self.interval_setting}" if self.interval_setting else ""
        m = self.means
        return (f"Summary({self.policy} r={self.redundancy}, {self.scenario} (N={self.n_groups}){interval}, "
                f"{self.finished}/{self.seeds} seeds finished, TTT/T0={self.ratio_mean:.3f} ± {self.ratio_std:.3f}, "
                f"availability={m.get('availability', math.nan):.3f}, ettr={m.get('ettr', math.nan):.3f}, "
                f"{len(m)} means)")

    def to_dict(self) -> dict:
        """The fields, each mean under its column's name, as a JSON-friendly dict (``inf``
        and ``nan`` become None)."""
        out = fields_dict(self, exclude=("means",))
        out.update(to_jsonable(dict(self.means), "Summary.means"))
        return out


def summarise(runs: list[RunResult], n_groups: int, interval_setting: str = "") -> Summary:
    """The :class:`Summary` of one cell's runs (one per seed, in seed order)."""
    runs = list(runs)
    if not runs:
        raise ValueError("runs must not be empty")
    ratios = np.array([r.ratio for r in runs])
    fin = int(sum(r.finished for r in runs))
    all_fin = fin == len(runs)
    how = {c.name: c.cell for c in columns(RunResult)}
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
        interval_setting=interval_setting,
        means={name: cell_mean([getattr(r, name) for r in runs], how[name]) for name in MEAN_COLUMNS},
    )


@dataclass
class ResultSet:
    """Every run of an executed study, grouped into cells.

    Attributes
    ----------
    runs : list of RunResult
        Cell by cell (in the study's order: scenario, interval, policy, r), seeds in order.
    summaries : list of Summary
        One per cell; after an interruption, only the cells with a finished seed (each
        summary counts its seeds).
    redundant : dict
        Policy label -> whether that policy uses a redundancy r (from the registry).
    sources : dict
        Policy label -> the registry name it was built from (None for a Policy object or a
        factory).
    interrupted : bool
        Ctrl-C stopped the execution (``on_interrupt="return"``): the set holds the groups
        finished before it.
    elapsed : float
        Wall seconds of the execution.
    workers : int
        Processes (or Dask workers) that ran it.
    groups_done, groups_total : int
        (scenario, seed) groups finished (or found in the store) and planned.
    task_seconds : list of dict
        Per group computed: scenario name, seed and wall seconds.
    progress : object
        The executor's last :class:`~spare_core.sim.executor.Progress`.
    """

    runs: list
    summaries: list
    redundant: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)
    interrupted: bool = False
    elapsed: float = 0.0
    workers: int = 1
    groups_done: int = 0
    groups_total: int = 0
    task_seconds: list = field(default_factory=list)
    progress: object = None

    def __post_init__(self) -> None:
        if sum(s.seeds for s in self.summaries) != len(self.runs):
            raise ValueError(f"runs must be the summaries' runs, cell by cell: {len(self.runs)} runs for "
                             f"{sum(s.seeds for s in self.summaries)} seeds in the summaries")

    def extend(self, other: "ResultSet") -> "ResultSet":
        """Add another execution's runs and cells to this set (what an adaptive search that
        executes a study per step keeps: one set of every run it made); returns ``self``.

        The cells are appended in ``other``'s order, the policies' registry facts merged, the
        elapsed seconds, groups and task timings added; ``interrupted`` if either was.
        """
        if not isinstance(other, ResultSet):
            raise TypeError(f"other must be a ResultSet, got {type(other).__name__}")
        self.runs.extend(other.runs)
        self.summaries.extend(other.summaries)
        self.redundant.update(other.redundant)
        self.sources.update(other.sources)
        self.interrupted = self.interrupted or other.interrupted
        self.elapsed += other.elapsed
        self.workers = max(self.workers, other.workers)
        self.groups_done += other.groups_done
        self.groups_total += other.groups_total
        self.task_seconds.extend(other.task_seconds)
        self.progress = other.progress if other.progress is not None else self.progress
        return self

    # -- lookups ------------------------------------------------------------------------
    def cell(self, n_groups: int, policy: str, r: int) -> Summary:
        """The summary of one (N, policy label, r) cell (the first, with several intervals)."""
        for s in self.summaries:
            if s.n_groups == n_groups and s.policy == policy and s.redundancy == r:
                return s
        raise KeyError((n_groups, policy, r))

    def cell_runs(self, summary: Summary) -> list:
        """The runs behind one of :attr:`summaries` (one per seed, in seed order: the runs are
        held cell by cell, ``summary.seeds`` of them each)."""
        start = 0
        for s in self.summaries:
            if s is summary:
                return self.runs[start:start + s.seeds]
            start += s.seeds
        raise KeyError(f"not a summary of this result set: {summary!r}")

    def cell_interval(self, summary: Summary) -> tuple[float, str]:
        """The checkpoint interval (compute seconds between saves) of a cell and its rule
        (every seed of a cell uses the same: it depends on the scenario and the policy)."""
        runs = self.cell_runs(summary)
        if not runs:
            return math.nan, "-"
        return float(runs[0].checkpoint_interval), str(runs[0].interval_rule)

    def best(self, n_groups: int, policy: str) -> Summary | None:
        """The cell of ``policy`` at N with the least mean TTT/T0 over seeds (None if no r
        finished on every seed)."""
        cells = [s for s in self.summaries if s.n_groups == n_groups and s.policy == policy]
        done = [s for s in cells if math.isfinite(s.ratio_mean)]
        if not done:
            return None
        return min(done, key=lambda s: (s.ratio_mean, s.redundancy))

    def _candidates(self, label: str, scenario: str | None) -> list:
        cells = [s for s in self.summaries if s.policy == label and (scenario is None or s.scenario == scenario)]
        plain = any(not self.redundant.get(s.policy, True) for s in self.summaries)
        return judged_cells(cells, uses_redundancy=self.redundant.get(label, True), plain_compared=plain)

    def best_per_policy(self, scenario: str | None = None) -> list[tuple[Summary, bool]]:
        """Per policy label (in the study's order): its best cell and whether it finished on
        every seed (else the cell that got furthest). With a policy without redundancy in the
        set, the others are judged at r >= 2."""
        out = []
        for label in dict.fromkeys(s.policy for s in self.summaries):
            cells = self._candidates(label, scenario)
            done = [s for s in cells if math.isfinite(s.ratio_mean)]
            if done:
                out.append((min(done, key=lambda s: (s.ratio_mean, s.redundancy)), True))
            else:
                out.append((max(cells, key=lambda s: s.progress), False))
        return out

    def ranking(self, scenario: str | None = None, objective: str = "time") -> list[Summary]:
        """Each policy's best finished cell, best first (:meth:`best_per_policy`): by mean
        TTT/T0 (``objective="time"``) or by mean cost (``"cost"``: GPU-hours paid, spares
        included, times the price; :meth:`cell_cost`)."""
        done = [s for s, finished in self.best_per_policy(scenario) if finished]
        if objective == "cost":
            return sorted(done, key=lambda s: (self.cell_cost(s), s.ratio_mean))
        if objective != "time":
            raise ValueError(f"objective must be 'time' or 'cost', got {objective!r}")
        return sorted(done, key=lambda s: s.ratio_mean)

    def cell_cost(self, cell: Summary) -> float:
        """Mean cost of a cell's runs (NaN when a run has no price or did not finish)."""
        runs = self.cell_runs(cell)
        return float(np.mean([r.cost if r.finished else math.nan for r in runs])) if runs else math.nan

    # -- renderings ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Every field as JSON-friendly values (runs and summaries through their own
        ``to_dict``; ``inf`` becomes None)."""
        return fields_dict(self)

    def to_frame(self):
        """The runs as a pandas DataFrame, one row per run, with their ETTR (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("ResultSet.to_frame needs pandas: pip install pandas") from None
        return pd.DataFrame([r.to_dict() for r in self.runs])

    def __repr__(self) -> str:
        tail = ", interrupted" if self.interrupted else ""
        return f"ResultSet({len(self.runs)} runs, {len(self.summaries)} cells{tail})"


#: the former name of :class:`ResultSet` (what :func:`spare_core.sim.sweep` returned)
SweepResult = ResultSet
