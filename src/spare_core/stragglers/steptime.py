"""A job's measured stragglers as a step-time model of the time-to-train simulation.

:class:`MeasuredStragglers` is what a scenario file's ``[stragglers]`` table becomes: an object
with ``sample_multipliers(n_steps, rng)`` (the scenario's ``step_time_model`` hook, so the
compiled run loop runs unchanged) whose multipliers have mean S, the measured slowdown. It also
says what each remedy leaves of S (:meth:`MeasuredStragglers.remedied`):

* ``"evict"``: the worst worker's node swapped for a hot spare: S without that worker
  (``S · (1 - evict_saves)``; with a trace, each step's replay with that worker at its ideal);
* ``"rebalance"``: the pipeline partition rebalanced: the share ``M_S`` of the loss the stage
  imbalance explains removed, ``1 + (S - 1)(1 - M_S)`` (``M_S`` clipped to [0, 1]: a
  rebalancing keeps the total computation, so it reaches the ideal at best);
* ``"pacing"``: the pacing model's pacer (:class:`spare_core.pacing.BaselinePacer`) acts on
  the collective phase only (compute stragglers move the last arrival, which pacing cannot
  remove: docs/pacing.md §1): ``1 + (S - 1)(1 - c · g)``, ``c`` the share of the loss in
  communications, ``g`` the share of the collective phase's excess the pacer removes in the
  pacing model at the job's node count (:func:`pacing_gain`). With ``c = 0`` pacing buys
  nothing, and :meth:`MeasuredStragglers.remedy_note` says so.

Documentation: docs/stragglers.md §6.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._files import duration_text
from .._validate import as_generator, as_int
from . import _schema as sc
from ._analysis import WhatIf, analyse
from ._trace import Trace

__all__ = ["MeasuredStragglers", "REMEDIES", "pacing_gain", "PACING_NODES_MAX"]

#: the remedies a measured straggler has, besides tolerating it
REMEDIES = ("evict", "rebalance", "pacing")
#: the pacing gain is measured at the job's node count, at most this many nodes (the pacing
#: model's simulated range; past it the gain is taken as at this size)
PACING_NODES_MAX = 256
#: iterations of each pacing-model run behind :func:`pacing_gain`
PACING_ITERATIONS = 400

_GAINS: dict[int, float] = {}


def pacing_gain(n_nodes: int) -> float:
    """The share of the collective phase's excess (over its uncontended time) that the pacing
    model's :class:`~spare_core.pacing.BaselinePacer` removes, at ``min(n_nodes, 256)`` nodes of
    the default :class:`~spare_core.pacing.PacingScenario` (400 iterations, seed 0, paced and
    unpaced on the same draws), clipped to [0, 1]. Computed once per node count in a process.

    ``g = (mean time unpaced - mean time paced) / (mean collective phase unpaced - uncontended
    collective)``: what pacing saves, as a share of what the fabric costs beyond its
    uncontended time (the collective phase is the iteration time after the last arrival).
    """
    n = min(as_int(n_nodes, "n_nodes", min_value=1), PACING_NODES_MAX)
    if n not in _GAINS:
        from ..pacing import BaselinePacer, PacingScenario, simulate_iterations
        from ..pacing.model import collective_time

        pc = PacingScenario(n_nodes=n)
        off = simulate_iterations(pc, PACING_ITERATIONS, seed=0)
        on = simulate_iterations(pc, PACING_ITERATIONS, seed=0, controller=BaselinePacer())
        excess = float(np.mean(off.time - off.arrival_max)) - collective_time(n, pc.fabric, pc.collective)
        saved = float(np.mean(off.time) - np.mean(on.time))
        _GAINS[n] = min(1.0, max(0.0, saved / excess)) if excess > 0 else 0.0
    return _GAINS[n]


def _clip01(x: float | None) -> float:
    return 0.0 if x is None or not math.isfinite(x) else min(1.0, max(0.0, float(x)))


@dataclass(frozen=True)
class MeasuredStragglers:
    """Step-time multipliers of a job with measured stragglers (module docstring).

    Parameters
    ----------
    slowdown : float
        S, > 0: the mean multiplier of a step (1: no stragglers).
    per_step : float64 array or None
        A trace's per-step slowdowns ``(a) / (b)`` (mean S); steps are drawn from them with
        replacement. None: every step is S times the file's jitter draw.
    jitter : float
        Without ``per_step``: each step is ``S · U(1 - jitter, 1 + jitter)`` (the draws of the
        scenario's own jitter, so S = 1 is the run without stragglers, bit for bit).
    worker : int or None
        The rank (as in the trace) of the worst worker: the one to evict.
    evict_slowdown : float
        S with that worker evicted to a spare (S when unknown: evicting buys nothing).
    evict_per_step : float64 array or None
        Per step, with a trace.
    stage_share : float
        ``M_S``, clipped to [0, 1]: the loss the stage imbalance explains.
    comm_share : float
        The share of the loss in communications, [0, 1] (what pacing can act on).
    rebalance_cost : float
        Seconds of the one-time pause a rebalancing takes (a restart on the new partition).
    n_nodes : int
        The job's nodes (the pacing gain's size).
    source : str
        Where S came from (``"slowdown = 1.18"`` or the trace's path).
    remedy : str or None
        The remedy these multipliers already include (None: tolerated).
    """

    slowdown: float
    per_step: np.ndarray | None = field(default=None, repr=False)
    jitter: float = 0.0
    worker: int | None = None
    evict_slowdown: float | None = None
    evict_per_step: np.ndarray | None = field(default=None, repr=False)
    stage_share: float = 0.0
    comm_share: float = 0.0
    rebalance_cost: float = 0.0
    n_nodes: int = 1
    source: str = ""
    remedy: str | None = None

    def __post_init__(self):
        s = self.slowdown
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not (math.isfinite(s) and s > 0):
            raise ValueError(f"slowdown must be a finite number > 0, got {s!r}")
        if self.evict_slowdown is None:
            object.__setattr__(self, "evict_slowdown", float(s))
        e = self.evict_slowdown
        if not (math.isfinite(e) and e > 0):
            raise ValueError(f"evict_slowdown must be a finite number > 0, got {e!r}")
        for k in ("per_step", "evict_per_step"):
            a = getattr(self, k)
            if a is not None:
                if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and not a.flags.writeable):
                    a = np.array(a, dtype=np.float64)  # a private read-only copy (a checked one is shared)
                if a.ndim != 1 or not a.size or not np.all(np.isfinite(a)) or not np.all(a > 0):
                    raise ValueError(f"{k} must be a non-empty 1-d array of finite values > 0")
                a.setflags(write=False)
                object.__setattr__(self, k, a)
        for k in ("stage_share", "comm_share"):
            object.__setattr__(self, k, _clip01(getattr(self, k)))
        if not (0.0 <= self.jitter < 1.0):
            raise ValueError(f"jitter must be in [0, 1), got {self.jitter!r}")
        if not (math.isfinite(self.rebalance_cost) and self.rebalance_cost >= 0):
            raise ValueError(f"rebalance_cost must be a duration >= 0, got {self.rebalance_cost!r}")
        if self.remedy is not None and self.remedy not in REMEDIES:
            raise ValueError(f"remedy must be one of {list(REMEDIES)} or None, got {self.remedy!r}")

    # -- the hook --------------------------------------------------------------------------
    def sample_multipliers(self, n_steps, rng) -> np.ndarray:
        """``n_steps`` multipliers: a trace's per-step slowdowns drawn with replacement, or S
        times the scenario's jitter draws (``U(1 - jitter, 1 + jitter)``, ones without jitter)."""
        n = as_int(n_steps, "n_steps", min_value=0)
        gen = as_generator(rng)
        if self.per_step is not None:
            return self.per_step[gen.integers(0, self.per_step.size, size=n)]
        if self.jitter == 0.0:
            return np.full(n, float(self.slowdown))
        return self.slowdown * gen.uniform(1.0 - self.jitter, 1.0 + self.jitter, n)

    def mean_multiplier(self) -> float:
        """The mean multiplier: S (a trace's per-step mean)."""
        return float(self.per_step.mean()) if self.per_step is not None else float(self.slowdown)

    # -- the remedies ----------------------------------------------------------------------
    def remedy_slowdown(self, remedy: str) -> float:
        """What ``remedy`` leaves of S (module docstring)."""
        s = self.slowdown
        if remedy == "evict":
            return float(self.evict_slowdown)
        if remedy == "rebalance":
            return 1.0 + (s - 1.0) * (1.0 - self.stage_share)
        if remedy == "pacing":
            g = pacing_gain(self.n_nodes) if self.comm_share > 0 and s > 1 else 0.0
            return 1.0 + (s - 1.0) * (1.0 - self.comm_share * g)
        raise ValueError(f"remedy must be one of {list(REMEDIES)}, got {remedy!r}")

    def remedied(self, remedy: str) -> "MeasuredStragglers":
        """The multipliers with ``remedy`` applied (the straggler part it removes gone)."""
        if self.remedy is not None:
            raise ValueError(f"these multipliers already include the remedy {self.remedy!r}")
        new = self.remedy_slowdown(remedy)
        per = None
        if self.per_step is not None:
            if remedy == "evict" and self.evict_per_step is not None:
                per = self.evict_per_step
            else:  # the same part of every step's loss removed
                share = (self.slowdown - new) / (self.slowdown - 1.0) if self.slowdown != 1.0 else 0.0
                per = np.maximum(1.0 + (self.per_step - 1.0) * (1.0 - share), 1e-9)
        return replace(self, slowdown=new, per_step=per, evict_per_step=None, remedy=remedy)

    def remedy_note(self, remedy: str) -> str:
        """What ``remedy`` models here, in words (the advise and map documents carry it)."""
        s, new = self.slowdown, self.remedy_slowdown(remedy)
        if remedy == "evict":
            who = "the worst worker" if self.worker is None else f"rank {self.worker}"
            return f"evict {who} to a hot spare: S {s:.4f} -> {new:.4f}"
        if remedy == "rebalance":
            return (f"rebalance the stages: the stage imbalance's {100 * self.stage_share:.1f} % of the loss removed, "
                    f"S {s:.4f} -> {new:.4f}, after a {duration_text(self.rebalance_cost)} pause")
        if self.comm_share == 0 or s <= 1:
            return (f"pacing cannot help: the loss is in computations (communication share 0), and pacing acts only "
                    f"on the collective phase (docs/pacing.md); S stays {s:.4f}")
        g = pacing_gain(self.n_nodes)
        if g == 0:
            return (f"pacing cannot help at {self.n_nodes} nodes: the pacing model's pacer removes nothing of the "
                    f"collective phase there (inside one leaf it never engages, docs/pacing.md); S stays {s:.4f}")
        return (f"pacing: the pacing model removes {100 * g:.1f} % of the collective phase's excess at "
                f"{min(self.n_nodes, PACING_NODES_MAX)} nodes, on the {100 * self.comm_share:.1f} % of the loss in "
                f"communications: S {s:.4f} -> {new:.4f}")

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_trace(cls, trace: Trace, *, ideal: str = "mean", **kw: Any) -> "MeasuredStragglers":
        """S, its per-step series and what each remedy leaves, from a checked trace (one
        analysis: :func:`spare_core.stragglers.analyse`, plus two replays: the worst worker and
        every communication at their ideal)."""
        w = WhatIf(trace, ideal)
        r = analyse(trace, ideal=ideal, engine=w)
        a, b = r.recorded, r.ideal
        A, B = float(a.mean()), float(b.mean())
        fix = r.fixes["worker"]
        evict = w.fix(workers=[int(fix.label)]) / b
        comm = [sc.OPTYPES[t] for t in np.unique(trace.op_type) if t not in sc.COMPUTE]
        comm_share = 0.0
        if comm and A - B > 1e-9 * A:
            comm_share = (A - float(w.fix(optypes=comm).mean())) / (A - B)
        return cls(slowdown=r.slowdown, per_step=a / b, worker=int(fix.label), evict_slowdown=float(evict.mean()),
                   evict_per_step=evict, stage_share=_clip01(r.stage_share), comm_share=_clip01(comm_share),
                   source=trace.source, **kw)

    def to_dict(self) -> dict[str, Any]:
        """The model as JSON-friendly values (a trace's per-step series as its length and mean)."""
        out = {"slowdown": self.slowdown, "jitter": self.jitter, "worker": self.worker,
               "evict_slowdown": self.evict_slowdown, "stage_share": self.stage_share, "comm_share": self.comm_share,
               "rebalance_cost": self.rebalance_cost, "n_nodes": self.n_nodes, "source": self.source,
               "remedy": self.remedy}
        if self.per_step is not None:
            out["per_step"] = {"steps": int(self.per_step.size), "mean": float(self.per_step.mean()),
                               "sha": _digest(self.per_step)}
        return out

    def __eq__(self, other):
        if not isinstance(other, MeasuredStragglers):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None


def _digest(a: np.ndarray) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


# -- the scenario file's [stragglers] ------------------------------------------------------------
#: the keys of ``[stragglers]`` (docs/cli.md)
STRAGGLER_KEYS = ("slowdown", "trace", "meta", "dp", "pp", "tp", "cp", "vpp", "ideal", "worker", "evict_slowdown",
                  "stage_share", "comm_share", "rebalance_cost", "remedies")
_SCALAR_ONLY = ("worker", "evict_slowdown", "stage_share", "comm_share")
_TRACE_ONLY = ("meta", "dp", "pp", "tp", "cp", "vpp", "ideal")

# A command that loads one file many times (``spare map``'s cells, ``spare advise``'s variants)
# analyses its trace once: the analyses made in this process, by the trace file's path and
# content, the sizes and the ideal rule (a MeasuredStragglers is immutable: sharing it is safe).
_READ: dict = {}
#: analyses kept (the least recently stored go first)
MEMO_ENTRIES = 8


def _remember(key: Any, value: Any) -> None:
    _READ[key] = value
    while len(_READ) > MEMO_ENTRIES:
        del _READ[next(iter(_READ))]


def _measured_trace(rd: Any, st: dict[str, Any], base_dir: Any) -> "MeasuredStragglers":
    """``stragglers.trace`` read (with its sizes: ``meta`` or ``dp``/``pp``/...) and analysed,
    once per distinct input in a process."""
    import hashlib
    from pathlib import Path

    from .._files import InputFileError, read_input
    from ._analysis import IDEALS
    from ..events.files import note_input, pinned_digest, resolved
    from ._trace import MAX_TRACE_BYTES, JobSizes, TraceError, parse_trace, read_meta

    def path_of(key: str) -> Path:
        p = Path(rd.text(f"stragglers.{key}", st[key])).expanduser()
        return p if p.is_absolute() else Path(base_dir) / p

    ideal = rd.choice("stragglers.ideal", st.get("ideal", "mean"), IDEALS)
    dims = {k: rd.integer(f"stragglers.{k}", st[k]) for k in ("dp", "pp", "tp", "cp", "vpp") if k in st}
    sizes = None
    try:
        if "meta" in st:
            if dims:
                raise rd.fail(f"stragglers.{next(iter(dims))} and stragglers.meta", "must not both be given "
                              "(the meta file gives the sizes)", dims)
            sizes = read_meta(path_of("meta"))
        elif dims:
            if "dp" not in dims or "pp" not in dims:
                raise rd.fail("stragglers." + next(iter(dims)), "needs stragglers.dp and stragglers.pp (the trace's "
                              "workers are dp x pp)", dims)
            sizes = JobSizes(**dims)
    except TraceError as exc:
        raise rd.error(f"stragglers.meta: {exc}") from None
    full = path_of("trace")
    rest = (None if sizes is None else repr(sizes.to_dict()), ideal)
    pinned = pinned_digest(full)
    if pinned is not None and (resolved(full), pinned, *rest) in _READ:
        # the trace this scenario was resolved with, not the file as it is now (edited, deleted)
        note_input(full, pinned)
        return _READ[(resolved(full), pinned, *rest)]
    try:
        data = read_input(full, "trace", MAX_TRACE_BYTES)
    except InputFileError as exc:
        raise rd.fail("stragglers.trace", f"must name a readable trace file ({exc.reason}; looked for "
                      f"{str(full)!r})", st["trace"]) from None
    digest = hashlib.sha256(data).hexdigest()
    if pinned is not None and digest != pinned:
        raise rd.fail("stragglers.trace", f"changed since the scenario was read (sha256 {pinned[:12]}... then, "
                      f"{digest[:12]}... now): the runs of one command read one trace", st["trace"])
    key = (str(full.resolve()), digest, *rest)
    got = _READ.get(key)
    if got is None:
        try:  # the bytes hashed, not the file opened again
            got = MeasuredStragglers.from_trace(parse_trace(data, full, sizes), ideal=ideal)
        except (TraceError, ImportError, ValueError) as exc:
            raise rd.error(f"stragglers.trace: {exc}") from None
        _remember(key, got)
    note_input(full, digest)
    return got


def read_stragglers(rd: Any, st: dict[str, Any], *, base_dir: Any, nodes: int, jitter: float, restart: float,
                    repair: Any) -> tuple["MeasuredStragglers", tuple[str, ...]]:
    """A scenario file's ``[stragglers]`` (keys in docs/cli.md): the step-time model and the
    remedies to weigh.

    ``rd`` is the file's :class:`spare_core._files.Reader` (every error one line naming the key);
    ``nodes`` the job's nodes, ``jitter`` the file's ``job.jitter`` (kept around a measured S),
    ``restart`` its ``costs.restart`` (the default ``rebalance_cost``), ``repair`` its
    :class:`~spare_core.sim.Repairs` or None (``"evict"`` needs a spare to swap in).
    """
    # every value given is checked first (a bad one is named whatever else is missing)
    checked = {k: rd.number(f"stragglers.{k}", st[k]) for k in ("slowdown", "evict_slowdown") if k in st}
    checked.update({k: rd.number(f"stragglers.{k}", st[k], strict=False, high=1.0)
                    for k in ("stage_share", "comm_share") if k in st})
    checked.update({k: rd.integer(f"stragglers.{k}", st[k]) for k in ("dp", "pp", "tp", "cp", "vpp") if k in st})
    if "worker" in st:
        checked["worker"] = rd.integer("stragglers.worker", st["worker"], low=0)
    for k in ("trace", "meta"):
        if k in st:
            rd.text(f"stragglers.{k}", st[k])
    if ("slowdown" in st) == ("trace" in st):
        raise rd.error("[stragglers] needs exactly one of slowdown (a measured S) or trace (a job's operation trace)")
    rebalance = rd.duration("stragglers.rebalance_cost", st.get("rebalance_cost", restart), strict=False)
    asked = st.get("remedies")
    if asked is not None:
        if not isinstance(asked, list):
            raise rd.fail("stragglers.remedies", f"must be a list of {list(REMEDIES)}", asked)
        remedies = tuple(dict.fromkeys(rd.choice("stragglers.remedies", x, REMEDIES) for x in asked))
    no_spare = repair is None or repair.spares == 0
    if "slowdown" in st:
        for k in _TRACE_ONLY:
            if k in st:
                raise rd.fail(f"stragglers.{k}", "only goes with stragglers.trace", st[k])
        s = checked["slowdown"]
        model = MeasuredStragglers(
            slowdown=s, jitter=jitter, evict_slowdown=checked.get("evict_slowdown", s), worker=checked.get("worker"),
            stage_share=checked.get("stage_share", 0.0), comm_share=checked.get("comm_share", 0.0),
            rebalance_cost=rebalance, n_nodes=nodes, source=f"slowdown = {s:g}")
        for r in REMEDIES:  # every remedy, listed or not: spare map weighs any a strategy names
            if not model.remedy_slowdown(r) > 0.0:
                # 1 + (S - 1) x (1 - share) rounds to 0 for an S within an ulp of 0 (5e-324)
                raise rd.fail("stragglers.slowdown", f"leaves no step time after the remedy {r!r} (S = "
                              f"{model.remedy_slowdown(r):g}): a slowdown this far below 1 is not a step time over "
                              "its ideal", st["slowdown"])
    else:
        for k in _SCALAR_ONLY:
            if k in st:
                raise rd.fail(f"stragglers.{k}", "only goes with stragglers.slowdown (a trace measures it)", st[k])
        model = replace(_measured_trace(rd, st, base_dir), rebalance_cost=rebalance, n_nodes=nodes)
    if asked is None:
        remedies = tuple(r for r in REMEDIES if not (r == "evict" and no_spare))
    elif "evict" in remedies and no_spare:
        raise rd.fail("stragglers.remedies", "names 'evict', which swaps the slow node for a hot spare: it needs a "
                      "[repair] table with repair.spares >= 1 (or unlimited)", asked)
    return model, remedies
