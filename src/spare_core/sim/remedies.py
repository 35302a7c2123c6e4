"""Straggler remedies as variants of a scenario: evict, rebalance, pacing (tolerate is the plain run).

A scenario whose ``step_time_model`` is a :class:`spare_core.stragglers.MeasuredStragglers`
(a file's ``[stragglers]``) runs with step times S times the nominal. A remedy is the same
scenario with what the remedy leaves of S, plus what it costs (:func:`remedy_plan`):

* ``"evict"``: the worst worker's node swapped for a hot spare of ``[repair]`` before training
  resumes: a one-time pause of ``repair.swap`` at the start (in the run's ``pause_time``), S
  without that worker, and the slow node in repair: with a finite pool, the pool's first spare
  is taken until the node is back after ``repair.time`` (:attr:`Repairs.taken_until`: the
  failure ``spares`` uses later waits for it, as for any repair), the
  GPUs paid the file's pool's as before. Needs a spare.
* ``"rebalance"``: the pipeline partition rebalanced: a one-time pause of
  ``stragglers.rebalance_cost`` (a restart on the new partition: by default ``costs.restart``),
  the stage imbalance's share of the loss removed.
* ``"pacing"``: no pause; the pacing model's gain on the communication part of the loss only
  (none when the loss is in computations).

A pause is paid at the start, before the failure clock starts (training resumes after it), so
the runs of every remedy meet the same failures on a seed (common random numbers) and the run
loop is unchanged: :func:`with_pause` adds it to the run's wall time, time-to-train and
``pause_time``.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Sequence

from .._files import duration_text
from ..stragglers.steptime import REMEDIES
from .executor import execute
from .results import TIME_PARTS
from .scenario import Scenario
from .study import Study

__all__ = ["REMEDIES", "RemedyPlan", "remedy_plan", "with_pause", "weigh_remedies", "has_stragglers",
           "describe_remedies"]


def has_stragglers(scenario: Scenario) -> bool:
    """Whether the scenario's step times follow a measured straggler model (``[stragglers]``)."""
    return callable(getattr(scenario.step_time_model, "remedied", None))


@dataclass(frozen=True)
class RemedyPlan:
    """A remedy applied to a scenario.

    Attributes
    ----------
    remedy : str or None
        None: tolerate (the scenario as it is).
    scenario : Scenario
        With the remedy's step times (and, for evict, the pool one spare smaller).
    pause : float
        Seconds of the one-time pause at the start.
    slowdown : float
        The mean step multiplier after the remedy.
    note : str
        What the remedy models here, in words.
    wall_limit : float
        The run's wall limit in seconds, the pause included (the unremedied scenario's
        ``max_wall_factor * T0``); ``scenario`` simulates up to ``wall_limit - pause`` where
        its horizon allows it (``with_pause`` then adds the pause).
    """

    remedy: str | None
    scenario: Scenario
    pause: float
    slowdown: float
    note: str
    wall_limit: float = math.inf

    def __repr__(self) -> str:
        return (f"RemedyPlan({self.remedy or 'tolerate'}: S {self.slowdown:.4f}, pause {self.pause:g} s, "
                f"scenario {self.scenario.name!r})")

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON values (the scenario by its name; ``remedy`` None: tolerate)."""
        return {"remedy": self.remedy, "scenario": self.scenario.name, "pause": self.pause, "slowdown": self.slowdown,
                "note": self.note, "wall_limit": self.wall_limit}


def remedy_plan(scenario: Scenario, remedy: str | None) -> RemedyPlan:
    """The scenario with ``remedy`` (None: tolerate) applied, and what it costs (module docstring).

    Raises
    ------
    ValueError
        A remedy on a scenario without measured stragglers, an unknown remedy, or ``"evict"``
        without a spare to swap in (no ``repair``, or a pool of 0).
    """
    stm = scenario.step_time_model
    if remedy is None:
        s = float(stm.mean_multiplier()) if has_stragglers(scenario) else 1.0
        return RemedyPlan(None, scenario, 0.0, s, "tolerate: every step at the measured slowdown")
    if remedy not in REMEDIES:
        raise ValueError(f"remedy must be one of {list(REMEDIES)}, got {remedy!r}")
    if not has_stragglers(scenario):
        raise ValueError(f"remedy {remedy!r} needs measured stragglers in the scenario ([stragglers] in a file)")
    model = stm.remedied(remedy)
    changes: dict[str, Any] = {"step_time_model": model, "name": f"{scenario.name} +{remedy}"}
    pause = 0.0
    if remedy == "evict":
        rp = scenario.repair
        if rp is None or rp.spares == 0:
            raise ValueError("remedy 'evict' swaps the slow node for a hot spare: it needs repairs with a spare "
                             "([repair] with repair.spares >= 1, or unlimited)")
        # with laws (repair.time or swap drawn) the one eviction before the start takes their means
        pause = rp.mean_swap
        pool = "an unlimited pool" if rp.spares is None else "the node back in the pool at once"
        if rp.spares is not None and rp.mean_time > 0:
            # the slow node left when the swap began, a pause before the failure clock starts
            changes["repair"] = dataclasses.replace(rp, taken_until=rp.mean_time - pause)
            pool = (f"one of the {rp.spares} spares taken until the node is back from its "
                    f"{'mean ' if rp.drawn else ''}{duration_text(rp.mean_time)} repair")
    elif remedy == "rebalance":
        pause = float(stm.rebalance_cost)
    note = stm.remedy_note(remedy)
    if remedy == "evict":
        note += f"; a {duration_text(pause)} swap, {pool}"
    limit = scenario.max_wall_factor * scenario.t0
    remedied = scenario.replace(**changes)
    if pause > 0:
        # the pause comes first, so the simulated part must stop at limit - pause for the run to
        # stop at the limit (it ran to the whole limit and then had the pause added past it)
        factor = (limit - pause) / remedied.t0
        if factor > 1.0:
            remedied = remedied.replace(max_wall_factor=factor)
    return RemedyPlan(remedy, remedied, pause, float(model.mean_multiplier()), note, limit)


def with_pause(run: Any, plan: RemedyPlan) -> Any:
    """``run`` with the plan's one-time pause at the start (a new RunResult; ``run`` itself
    without a pause), stopped at the plan's wall limit.

    The plan's scenario simulates up to ``wall_limit - pause``, so the pause then ends the run
    at the limit exactly. Where that horizon would be at most T0 (a pause of nearly the whole
    limit: the run cannot finish), the simulated part is cut to what is left after the pause and
    its parts scaled by the same factor, so that they still partition the wall time exactly
    (the split within the cut part is then proportional, not simulated).
    """
    if plan.pause == 0:
        return run
    p = plan.pause
    left = plan.wall_limit - p
    if run.wall_time > left:  # only past a horizon of T0 (the plan could not shorten it)
        keep = max(left, 0.0) / run.wall_time if run.wall_time > 0 else 0.0
        parts = {k: getattr(run, k) * keep for k, _ in TIME_PARTS}
        pause = min(p, plan.wall_limit)
        parts["pause_time"] += pause
        return dataclasses.replace(run, finished=False, time_to_train=math.inf, ratio=math.inf,
                                   wall_time=plan.wall_limit, availability=run.availability * keep * run.wall_time
                                   / plan.wall_limit if plan.wall_limit > 0 else 0.0,
                                   progress=run.progress * keep, **parts)
    wall = run.wall_time + p
    ttt = run.time_to_train + p if run.finished else math.inf
    return dataclasses.replace(run, wall_time=wall, time_to_train=ttt, ratio=ttt / run.t0 if run.finished else math.inf,
                               availability=run.availability * run.wall_time / wall if wall > 0 else 0.0,
                               pause_time=run.pause_time + p)


def _geo_saving(values: Sequence[float], base: Sequence[float]) -> float:
    """``1 - geometric mean of value / base`` over paired seeds: what a remedy saves."""
    xs = [math.log(a / b) for a, b in zip(values, base) if a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)]
    return 0.0 - math.expm1(math.fsum(xs) / len(xs)) if xs else math.nan


def weigh_remedies(scenario: Scenario, policy: Any, seeds: Sequence[int], remedies: Sequence[str], *,
                   check: Any = None) -> dict[str, Any]:
    """Run ``policy`` on ``scenario`` tolerating its stragglers and with each remedy, on the
    same ``seeds`` (the same failures), in this process; time and cost of each.

    ``check``, if given, is called with the :class:`~spare_core.sim.Study` before it runs (a
    command's work budget).

    Returns
    -------
    dict
        ``"remedies"``: one entry per option (``"tolerate"`` first) with its plan
        (:meth:`RemedyPlan.to_dict`: ``pause`` in seconds, ``slowdown``, ``note``), mean TTT/T0,
        time-to-train (s), GPU-hours and cost (NaN without a price), ``pause_time``, the runs
        finished, and ``saves_time`` / ``saves_cost`` (1 minus the geometric mean over seeds of
        its value over tolerating's: the share it saves); ``"best"``: the remedy that saves the
        most time (None if none saves); ``"worker"``: the rank to evict (or None).
    """
    plans = [remedy_plan(scenario, None)] + [remedy_plan(scenario, r) for r in remedies]
    study = Study([p.scenario for p in plans], [policy], seeds=list(seeds), streams="seed", name="remedies")
    if check is not None:
        check(study)
    res = execute(study, workers=1)
    cells = {c.scenario: c for c in res.summaries}
    rows = []
    base_t: list[float] = []
    base_c: list[float] = []
    for plan in plans:
        runs = sorted((with_pause(r, plan) for r in res.cell_runs(cells[plan.scenario.name])), key=lambda r: r.seed)
        walls = [r.wall_time for r in runs]
        costs = [r.cost for r in runs]
        if plan.remedy is None:
            base_t, base_c = walls, costs
        n = len(runs)
        rows.append({**plan.to_dict(), "remedy": plan.remedy or "tolerate", "ratio": math.fsum(r.wall_time / r.t0 for r in runs) / n,
                     "time_to_train": math.fsum(walls) / n, "gpu_hours": math.fsum(r.gpu_hours for r in runs) / n,
                     "cost": math.fsum(costs) / n, "pause_time": math.fsum(r.pause_time for r in runs) / n,
                     "finished": sum(bool(r.finished) for r in runs), "seeds": n,
                     "saves_time": _geo_saving(walls, base_t), "saves_cost": _geo_saving(costs, base_c)})
    rows[0]["saves_time"] = rows[0]["saves_cost"] = 0.0
    gain = [r for r in rows[1:] if math.isfinite(r["saves_time"]) and r["saves_time"] > 0]
    best = max(gain, key=lambda r: r["saves_time"])["remedy"] if gain else None
    return {"policy": getattr(policy, "name", str(policy)), "redundancy": int(getattr(policy, "redundancy", 1)),
            "seeds": list(seeds), "slowdown": rows[0]["slowdown"], "worker": scenario.step_time_model.worker,
            "source": scenario.step_time_model.source, "remedies": rows, "best": best, "n_runs": len(res.runs)}


def describe_remedies(scenario: Scenario, remedies: Sequence[str]) -> dict[str, Any] | None:
    """The measured stragglers and what each remedy models, before any run (None without
    ``[stragglers]``): ``slowdown``, ``worker`` (the rank to evict), ``source``, and per remedy
    its plan (:meth:`RemedyPlan.to_dict`: S after it, its pause, the GPUs it adds, in words)."""
    if not has_stragglers(scenario):
        return None
    stm = scenario.step_time_model
    return {"slowdown": float(stm.mean_multiplier()), "worker": stm.worker, "source": stm.source,
            "model": stm.to_dict(), "remedies": {r: remedy_plan(scenario, r).to_dict() for r in remedies}}
