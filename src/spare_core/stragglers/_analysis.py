"""What-if analysis of a job's trace: replays with recorded, ideal and mixed durations.

(a) every operation at its recorded duration (launch delays removed: an operation starts when
what it waits for is done), (b) every operation at its ideal duration, (c) ideal except one
class kept as recorded. The slowdown is ``S = mean_s (a) / mean_s (b)``; a class's slowdown
``S_c = mean (c) / mean (b)`` is what it alone costs; *fixing* it (only that class at ideal,
the rest as recorded) says what it buys.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .. import _native
from . import _schema as sc
from ._graph import Template, build_template
from ._trace import JobSizes, Trace, read_trace

__all__ = ["IDEALS", "WhatIf", "WhatIfResult", "Fix", "analyse", "MeasuredSlowdown", "measured_slowdown",
           "ideal_durations"]

#: the rules for an operation's ideal duration (docs/stragglers.md, "The ideal")
IDEALS = ("mean", "median", "stage", "position")
#: the share of workers (rounded up) whose removal measures the individual workers' part
WORKER_SHARE = 0.03


def ideal_durations(rec: np.ndarray, op_type: np.ndarray, op_stage: np.ndarray, rule: str = "mean") -> np.ndarray:
    """The ideal duration of each template op (n,), from the effective durations ``rec`` (S, D, n).

    ``"mean"`` (the paper's): a computation (forward, backward, optimizer, gc) at the mean of its
    type over every stage, DP rank, step and microbatch, a communication at the median of its
    type. ``"median"``: the median of its type for every op. ``"stage"``: the median of its type
    *on its stage* (stage imbalance is then not a straggler). ``"position"``: the median of the
    same op (stage, type, ``seq_id``: the microbatch's position) over DP ranks and steps (only
    what differs among DP peers and steps is a straggler).

    Examples
    --------
    >>> import numpy as np
    >>> rec = np.array([[[1.0, 3.0]], [[1.0, 1.0]]])         # two steps, one replica, two forwards
    >>> ideal_durations(rec, np.array([0, 0]), np.array([0, 1]))
    array([1.5, 1.5])
    >>> ideal_durations(rec, np.array([0, 0]), np.array([0, 1]), "stage")
    array([1., 2.])
    """
    if rule not in IDEALS:
        raise ValueError(f"ideal must be one of {', '.join(IDEALS)}, got {rule!r}")
    out = np.empty(op_type.size, dtype=np.float64)
    if rule == "position":
        return np.median(rec.reshape(-1, op_type.size), axis=0) if rec.size else np.zeros(op_type.size)
    keys = op_type * (int(op_stage.max()) + 1) + op_stage if rule == "stage" else op_type
    for k in np.unique(keys):
        cols = np.flatnonzero(keys == k)
        vals = rec[:, :, cols]
        t = int(op_type[cols[0]])
        if rule == "mean" and t in sc.COMPUTE:
            out[cols] = float(vals.mean())
        else:
            out[cols] = float(np.median(vals))
    return out


class WhatIf:
    """The replays of one trace (the compiled kernel ``_whatif_replay`` under it).

    Parameters
    ----------
    trace : Trace
    ideal : {"mean", "median", "stage", "position"}
        The ideal-duration rule (:func:`ideal_durations`).

    Examples
    --------
    >>> from spare_core.stragglers import synthetic_trace
    >>> w = WhatIf(synthetic_trace(dp=2, pp=2, steps=2, slow={1: 2.0}, jitter=0.0, seed=0))
    >>> bool(w.recorded().mean() > w.ideal_steps().mean())
    True
    """

    def __init__(self, trace: Trace, ideal: str = "mean") -> None:
        if ideal not in IDEALS:
            raise ValueError(f"ideal must be one of {', '.join(IDEALS)}, got {ideal!r}")
        self.trace = trace
        self.rule = ideal
        self._k = _native.load("_whatif_replay")
        self.template: Template = build_template(trace)
        t = self.template
        self.rec = self._k.effective(t.dep_ptr, t.dep_idx, t.node_ptr, t.node_ops, t.node_sync, trace.start,
                                     trace.end)
        self.ideal = ideal_durations(self.rec, trace.op_type, trace.op_stage, ideal)
        self._cache: dict[str, np.ndarray] = {}
        P = trace.sizes.pp
        self._stage_mask = [(trace.op_stage == p).astype(np.uint8) for p in range(P)]

    @property
    def n_steps(self) -> int:
        return int(self.rec.shape[0])

    def run(self, inst: np.ndarray, keep: np.ndarray, *, times: bool = False, steps: slice | None = None):
        """The kernel's replay of replicas ``inst`` with ``keep`` (I, n): step makespans (S,)
        (of the ``steps`` slice only, when given; with ``times``, also start and end (S, I, n))."""
        t = self.template
        rec = self.rec if steps is None else np.ascontiguousarray(self.rec[steps])
        return self._k.replay(t.dep_ptr, t.dep_idx, t.node_ptr, t.node_ops, t.node_sync, rec,
                              np.ascontiguousarray(inst, dtype=np.int64),
                              np.ascontiguousarray(keep, dtype=np.uint8), self.ideal, times)

    def recorded(self) -> np.ndarray:
        """(a): every op at its recorded duration, launch delays removed; seconds per step."""
        if "a" not in self._cache:
            D = self.rec.shape[1]
            self._cache["a"] = self.run(np.arange(D), np.ones((D, self.template.n), dtype=np.uint8))
        return self._cache["a"]

    def ideal_steps(self) -> np.ndarray:
        """(b): every op at its ideal duration; seconds per step (the same every step)."""
        if "b" not in self._cache:
            self._cache["b"] = self.run(np.zeros(1), np.zeros((1, self.template.n), dtype=np.uint8))
        return self._cache["b"]

    def trace_steps(self) -> np.ndarray:
        """Each step's recorded time: last end minus first start over every op of the step."""
        tr = self.trace
        return tr.end.reshape(tr.end.shape[0], -1).max(axis=1) - tr.start.reshape(tr.start.shape[0], -1).min(axis=1)

    def _mask(self, dp_ranks, stages, optypes, workers) -> np.ndarray:
        tr = self.trace
        D, P = tr.sizes.dp, tr.sizes.pp
        ops = np.ones(self.template.n, dtype=bool)
        if stages is not None:
            st = _ints(stages, "stages", P)
            ops &= np.isin(tr.op_stage, st)
        if optypes is not None:
            codes = []
            for o in optypes:
                if o not in sc.CODE:
                    raise ValueError(f"unknown operation type {o!r} (known: {', '.join(sc.OPTYPES)})")
                codes.append(sc.CODE[o])
            ops &= np.isin(tr.op_type, codes)
        rows = np.ones(D, dtype=bool)
        if dp_ranks is not None:
            rows[:] = False
            rows[_ints(dp_ranks, "dp_ranks", D)] = True
        mask = rows[:, None] & ops[None, :]
        if workers is not None:
            where = {int(r): (d, p) for (d, p), r in np.ndenumerate(tr.ranks)}
            wm = np.zeros((D, self.template.n), dtype=bool)
            for r in workers:
                if int(r) not in where:
                    raise ValueError(f"no worker of rank {r} in the trace")
                d, p = where[int(r)]
                wm[d] |= tr.op_stage == p
            mask &= wm
        return mask

    def _replay_mask(self, keep: np.ndarray) -> np.ndarray:
        touched = keep.any(axis=1)
        if touched.all() or not touched.any():
            inst = np.arange(keep.shape[0]) if touched.any() else np.zeros(1, dtype=np.int64)
        else:  # untouched replicas all run at ideal: one stands for them all
            inst = np.r_[np.flatnonzero(touched), np.flatnonzero(~touched)[:1]]
        return self.run(inst, keep[inst])

    def keep(self, *, dp_ranks: Iterable[int] | None = None, stages: Iterable[int] | None = None,
             optypes: Iterable[str] | None = None, workers: Iterable[int] | None = None) -> np.ndarray:
        """(c): the ops of a class as recorded, every other op at ideal; seconds per step.

        The class is the intersection of the filters given: DP ranks, stages, op types (as in
        the trace), workers (the trace's ``rank`` labels; their union). None = no filter.
        """
        return self._replay_mask(self._mask(dp_ranks, stages, optypes, workers))

    def fix(self, *, dp_ranks: Iterable[int] | None = None, stages: Iterable[int] | None = None,
            optypes: Iterable[str] | None = None, workers: Iterable[int] | None = None) -> np.ndarray:
        """The ops of a class at ideal, every other op as recorded: what fixing the class leaves."""
        return self._replay_mask(~self._mask(dp_ranks, stages, optypes, workers))

    def timeline(self, step: int, *, ideal: bool = False, dp_ranks: Sequence[int] | None = None) -> dict[str, Any]:
        """One step's replayed timeline as Chrome trace events (Perfetto, chrome://tracing).

        ``step`` is the step's position (0 = the first step of the trace); ``ideal`` replays (b)
        instead of (a). One process per DP rank (``dp_ranks``: default all), one thread per stage;
        times in microseconds from the step's start.
        """
        tr = self.trace
        D = tr.sizes.dp
        if not 0 <= step < self.n_steps:
            raise ValueError(f"step must be a position in 0..{self.n_steps - 1}, got {step}")
        ranks = list(range(D)) if dp_ranks is None else _ints(dp_ranks, "dp_ranks", D)
        inst = np.arange(D)
        keep = np.zeros((D, self.template.n), dtype=np.uint8) if ideal else np.ones((D, self.template.n), np.uint8)
        _, start, end = self.run(inst, keep, times=True, steps=slice(step, step + 1))
        events: list[dict[str, Any]] = []
        what = "ideal" if ideal else "recorded"
        for d in ranks:
            events.append({"name": "process_name", "ph": "M", "pid": d, "args": {"name": f"dp {d} ({what})"}})
            for p in range(tr.sizes.pp):
                events.append({"name": "thread_name", "ph": "M", "pid": d, "tid": p,
                               "args": {"name": f"stage {p} (rank {int(tr.ranks[d, p])})"}})
            for j in range(self.template.n):
                events.append({"name": sc.OPTYPES[int(tr.op_type[j])], "ph": "X", "pid": d, "tid": int(tr.op_stage[j]),
                               "ts": float(start[0, d, j] * 1e6), "dur": float((end[0, d, j] - start[0, d, j]) * 1e6),
                               "args": {"seq_id": int(tr.op_seq[j])}})
        return {"traceEvents": events, "displayTimeUnit": "ms",
                "otherData": {"step": int(tr.steps[step]), "replay": what, "ideal_rule": self.rule}}

    def keep_worker(self, d: int, p: int) -> np.ndarray:
        """(c) for the worker (DP rank ``d``, stage ``p``): two replicas replayed."""
        D = self.rec.shape[1]
        inst = np.array([d, (d + 1) % D] if D > 1 else [d], dtype=np.int64)
        keep = np.zeros((inst.size, self.template.n), dtype=np.uint8)
        keep[0] = self._stage_mask[p]
        return self.run(inst, keep)


def _ints(values, name, size) -> list[int]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < size:
            raise ValueError(f"{name} must hold integers in 0..{size - 1}, got {v!r}")
        out.append(int(v))
    return out


@dataclass(frozen=True)
class Fix:
    """What one class costs and what fixing it buys.

    Attributes
    ----------
    kind : str
        ``"worker"``, ``"stage"``, ``"dp_rank"`` or ``"optype"``.
    label : str
        The class as in the trace (a rank, a stage, a DP rank, an op type).
    slowdown : float
        ``S_c``: the job's slowdown with only this class as recorded.
    fixed_step : float
        Mean step time with this class at ideal and the rest as recorded (seconds).
    saves : float
        ``1 - fixed_step / recorded step``: the share of step time fixing it saves.
    """

    kind: str
    label: str
    slowdown: float
    fixed_step: float
    saves: float

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "slowdown": self.slowdown, "fixed_step": self.fixed_step,
                "saves": self.saves}


@dataclass(frozen=True)
class WhatIfResult:
    """The analysis of one trace (:func:`analyse`).

    Attributes
    ----------
    slowdown : float
        ``S = mean (a) / mean (b)``.
    steps : int64 (S,)
        Step labels.
    recorded, ideal, trace : float64 (S,)
        Step times: (a) replayed with recorded durations, (b) ideal, and as recorded in the trace.
    by_dp_rank, by_stage, by_optype, by_worker : dict
        Label (as in the trace) -> the slowdown with only that class as recorded.
    by_worker_steps : float64 (n_workers, S)
        Per step, the slowdown with only that worker as recorded (rows in ``worker_order``).
    workers : list of (rank, dp_rank, stage)
        The rows of ``by_worker_steps``.
    worker_share, stage_share : float or None
        ``M_W``: the share of ``(a) - (b)`` removed by fixing the worst 3 % of workers (at least
        one); ``M_S``: by fixing the last stage. None when the job has no slowdown to explain.
    worst_workers : list of int
        The ranks fixed for ``worker_share``.
    fixes : dict
        ``"worker"``, ``"stage"``, ``"dp_rank"``, ``"optype"`` -> :class:`Fix` of the worst of each.
    sizes : JobSizes
    ideal_rule : str
    n_ops : int
    """

    slowdown: float
    steps: np.ndarray
    recorded: np.ndarray
    ideal: np.ndarray
    trace: np.ndarray
    by_dp_rank: dict[int, float]
    by_stage: dict[int, float]
    by_optype: dict[str, float]
    by_worker: dict[int, float]
    by_worker_steps: np.ndarray
    workers: list[tuple[int, int, int]]
    worker_share: float | None
    stage_share: float | None
    worst_workers: list[int]
    fixes: dict[str, Fix]
    sizes: JobSizes
    ideal_rule: str
    n_ops: int
    source: str = ""

    def __repr__(self) -> str:
        w = self.fixes["worker"]
        return (f"WhatIfResult(slowdown={self.slowdown:.4f}, worst_worker={w.label}, "
                f"worker_share={_pct(self.worker_share)}, stage_share={_pct(self.stage_share)}, "
                f"steps={self.steps.size}, ops={self.n_ops:,})")

    @property
    def per_step(self) -> dict[int, float]:
        """Step label -> that step's slowdown ``(a) / (b)``."""
        return {int(s): float(a / b) for s, a, b in zip(self.steps, self.recorded, self.ideal)}

    @property
    def step_time(self) -> dict[str, float]:
        """Mean step times: ``trace`` (as recorded), ``recorded`` (a), ``ideal`` (b), and the
        replay's error ``trace / recorded - 1`` (the launch delays it removes)."""
        return {"trace": float(self.trace.mean()), "recorded": float(self.recorded.mean()),
                "ideal": float(self.ideal.mean()), "replay_error": float(self.trace.mean() / self.recorded.mean() - 1.0)}

    @property
    def by_worker_per_step(self) -> dict[str, list[float]]:
        """Rank label -> that worker's per-step slowdowns (in ``steps`` order)."""
        return {str(r): [float(x) for x in row] for (r, _, _), row in zip(self.workers, self.by_worker_steps)}

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``spare whatif --json`` (keys documented in docs/stragglers.md)."""
        worst = np.argmax(self.by_worker_steps, axis=0) if self.workers else []
        per_step = {}
        for i, s in enumerate(self.steps):
            w = self.workers[int(worst[i])] if self.workers else None
            per_step[str(int(s))] = {
                "slowdown": float(self.recorded[i] / self.ideal[i]), "recorded": float(self.recorded[i]),
                "ideal": float(self.ideal[i]), "trace": float(self.trace[i]),
                "worst_worker": None if w is None else str(w[0]),
                "worst_worker_slowdown": None if w is None else float(self.by_worker_steps[int(worst[i]), i]),
            }
        return {
            "slowdown": self.slowdown,
            "ideal_rule": self.ideal_rule,
            "sizes": self.sizes.to_dict(),
            "steps": [int(s) for s in self.steps],
            "n_ops": self.n_ops,
            "step_time": self.step_time,
            "recorded": [float(x) for x in self.recorded],
            "ideal": [float(x) for x in self.ideal],
            "trace": [float(x) for x in self.trace],
            "by_dp_rank": {str(k): v for k, v in self.by_dp_rank.items()},
            "by_stage": {str(k): v for k, v in self.by_stage.items()},
            "by_optype": dict(self.by_optype),
            "by_worker": {str(k): v for k, v in self.by_worker.items()},
            "workers": [{"rank": r, "dp_rank": d, "stage": p} for r, d, p in self.workers],
            "by_worker_steps": [[float(x) for x in row] for row in self.by_worker_steps],
            "by_worker_per_step": self.by_worker_per_step,
            "per_step": per_step,
            "worker_share": self.worker_share,
            "stage_share": self.stage_share,
            "worst_workers": [str(r) for r in self.worst_workers],
            "fixes": {k: f.to_dict() for k, f in self.fixes.items()},
            "source": self.source,
        }

    def report(self) -> str:
        """The text ``spare whatif`` prints."""
        z = self.sizes
        a, b, t = self.recorded.mean(), self.ideal.mean(), self.trace.mean()
        lines = [f"trace: {self.source or 'columns'}: {self.n_ops:,} ops, {self.steps.size} steps, "
                 f"dp {z.dp} x pp {z.pp} workers (tp {z.tp}, cp {z.cp}, vpp {z.vpp}: {z.world_size:,} GPUs)",
                 f"step time: {t:.4g} s recorded, {a:.4g} s replayed (launch delays removed; "
                 f"{100 * (t / a - 1):+.2f} %), {b:.4g} s ideal ({self.ideal_rule} rule)",
                 f"slowdown S = {self.slowdown:.4f}: stragglers cost {100 * (1 - b / a):.1f} % of each step",
                 ""]
        lines.append(f"{'worst':<10} {'label':<28} {'alone S_c':>10} {'fixed step':>11} {'saves':>7}")
        for kind in ("worker", "stage", "dp_rank", "optype"):
            f = self.fixes[kind]
            lines.append(f"{kind:<10} {f.label:<28} {f.slowdown:>10.4f} {f.fixed_step:>10.4g}s "
                         f"{100 * f.saves:>6.1f}%")
        lines.append("")
        lines.append(f"explained by the worst {len(self.worst_workers)} worker(s) (M_W): {_pct(self.worker_share)}; "
                     f"by the last stage (M_S): {_pct(self.stage_share)}")
        top = sorted(self.by_optype.items(), key=lambda kv: -kv[1])[:5]
        lines.append("by op type: " + ", ".join(f"{k} {v:.3f}" for k, v in top))
        st = sorted(self.by_stage.items(), key=lambda kv: -kv[1])[:5]
        lines.append("by stage: " + ", ".join(f"{k} {v:.3f}" for k, v in st))
        dp = sorted(self.by_dp_rank.items(), key=lambda kv: -kv[1])[:5]
        lines.append("by dp rank: " + ", ".join(f"{k} {v:.3f}" for k, v in dp))
        wk = sorted(self.workers, key=lambda w: -self.by_worker[w[0]])[:5]
        lines.append("by worker: " + ", ".join(f"rank {r} (dp {d}, pp {p}) {self.by_worker[r]:.3f}" for r, d, p in wk))
        ps = sorted(self.per_step.items(), key=lambda kv: -kv[1])[:3]
        lines.append("slowest steps: " + ", ".join(f"{k} ({v:.3f})" for k, v in ps))
        lines.append(_verdict(self))
        return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def _verdict(r: WhatIfResult) -> str:
    if r.slowdown < 1.03:
        return "verdict: no straggler worth fixing (S < 1.03)"
    ws, ss = r.worker_share or 0.0, r.stage_share or 0.0
    w = r.fixes["worker"]
    parts = []
    if ws >= 0.5:
        parts.append(f"individual worker(s): evicting rank {w.label} saves {100 * w.saves:.1f} % of step time "
                     f"(the worst {len(r.worst_workers)}, {', '.join(map(str, r.worst_workers))}, explain {_pct(ws)})")
    if ss >= 0.5:
        parts.append(f"stage imbalance: the last stage explains {_pct(ss)}; rebalance the pipeline partition")
    worst = np.argmax(r.by_worker_steps, axis=0)
    changes = int(np.count_nonzero(worst[1:] != worst[:-1]))
    rest = 1.0 - max(ws, ss)
    if not parts or (rest >= 0.25 and changes >= (r.steps.size - 1) / 2):
        parts.append(f"{'the rest' if parts else 'no single worker or stage explains half'}: spread over workers "
                     f"and steps (the worst worker changes in {changes} of {max(r.steps.size - 1, 0)} step "
                     "transitions: sequence-length imbalance or contention; see per_step)")
    return "verdict: " + "; ".join(parts)


def analyse(trace: Trace | str, *, sizes: JobSizes | None = None, ideal: str = "mean",
            engine: WhatIf | None = None) -> WhatIfResult:
    """The what-if analysis of a trace: S, its attribution and what fixing each class buys.

    Parameters
    ----------
    trace : Trace or path
        A checked trace, or a file for :func:`read_trace` (with ``sizes``).
    sizes : JobSizes, optional
        For a path: the job's sizes (None: inferred).
    ideal : {"mean", "median", "stage", "position"}
        The ideal-duration rule (:func:`ideal_durations`; the paper's is "mean").
    engine : WhatIf, optional
        Replays already set up for ``trace``.

    Returns
    -------
    WhatIfResult

    Notes
    -----
    Replays: (a), (b), one per stage, op type and fix (full: every DP rank), one per DP rank and
    worker (two replicas each). O((P + T) · S·D·(n + E) + (D + D·P) · S·(n + E)) for S steps, D DP
    ranks, P stages, T op types and n ops (E deps) per replica.

    References
    ----------
    Lin, J. et al. "Understanding Stragglers in Large Model Training Using What-if Analysis",
    OSDI 2025: S (Eq. 1), S_t and S_w (Eqs. 2, 4), M_W (Eq. 5) and M_S (§5.2).

    Examples
    --------
    >>> from spare_core.stragglers import synthetic_trace
    >>> r = analyse(synthetic_trace(dp=2, pp=2, steps=3, slow={2: 1.8}, jitter=0.0, seed=0))
    >>> r.fixes["worker"].label, r.slowdown > 1.3
    ('2', True)
    """
    if ideal not in IDEALS:
        raise ValueError(f"ideal must be one of {', '.join(IDEALS)}, got {ideal!r}")
    if not isinstance(trace, Trace):
        trace = read_trace(trace, sizes)
    w = engine if engine is not None else WhatIf(trace, ideal)
    D, P = trace.sizes.dp, trace.sizes.pp
    a, b = w.recorded(), w.ideal_steps()
    A, B = float(a.mean()), float(b.mean())
    S = A / B

    def ratio(x):
        return float(np.mean(x) / B)

    by_dp = {d: ratio(w.keep(dp_ranks=[d])) for d in range(D)}
    by_stage = {p: ratio(w.keep(stages=[p])) for p in range(P)}
    present = [sc.OPTYPES[t] for t in np.unique(trace.op_type)]
    by_type = {o: ratio(w.keep(optypes=[o])) for o in present}
    workers = [(int(trace.ranks[d, p]), d, p) for d in range(D) for p in range(P)]
    steps_w = np.empty((len(workers), a.size))
    for i, (_, d, p) in enumerate(workers):
        steps_w[i] = w.keep_worker(d, p)
    by_worker = {r: float(steps_w[i].mean() / B) for i, (r, _, _) in enumerate(workers)}
    steps_w /= b[None, :]

    def best(d):
        return max(d.items(), key=lambda kv: (kv[1], -_order_key(kv[0])))

    fixes = {}
    for kind, table, kw in (("worker", by_worker, "workers"), ("stage", by_stage, "stages"),
                            ("dp_rank", by_dp, "dp_ranks"), ("optype", by_type, "optypes")):
        label, val = best(table)
        t = float(w.fix(**{kw: [label]}).mean())
        fixes[kind] = Fix(kind, str(label), val, t, 1.0 - t / A)
    explainable = A - B > 1e-9 * A
    k = max(1, math.ceil(len(workers) * WORKER_SHARE))
    worst = sorted(by_worker, key=lambda r: -by_worker[r])[:k]
    worker_share = stage_share = None
    if explainable:
        worker_share = (A - float(w.fix(workers=worst).mean())) / (A - B)
        stage_share = (A - float(w.fix(stages=[P - 1]).mean())) / (A - B)
    return WhatIfResult(slowdown=S, steps=trace.steps.copy(), recorded=a, ideal=b, trace=w.trace_steps(),
                        by_dp_rank=by_dp, by_stage=by_stage, by_optype=by_type, by_worker=by_worker,
                        by_worker_steps=steps_w, workers=workers, worker_share=worker_share,
                        stage_share=stage_share, worst_workers=worst, fixes=fixes, sizes=trace.sizes,
                        ideal_rule=w.rule, n_ops=trace.n_ops, source=trace.source)


def _order_key(label) -> float:
    try:
        return float(label)
    except (TypeError, ValueError):
        return float(sc.CODE.get(label, 0))


@dataclass(frozen=True)
class MeasuredSlowdown:
    """A job's measured straggler slowdown, in the form a step-time model can take.

    Attributes
    ----------
    slowdown : float
        S: step time as recorded (launch delays removed) over the ideal.
    worst_worker : int
        The trace's rank of the worker that alone costs most.
    worst_worker_slowdown : float
        S with only that worker as recorded.
    evict_saves : float
        The share of step time saved if that worker ran like its peers (evicted to a spare).
    stage_share, worker_share : float or None
        ``M_S`` and ``M_W`` (:class:`WhatIfResult`).
    """

    slowdown: float
    worst_worker: int
    worst_worker_slowdown: float
    evict_saves: float
    stage_share: float | None
    worker_share: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"slowdown": self.slowdown, "worst_worker": self.worst_worker,
                "worst_worker_slowdown": self.worst_worker_slowdown, "evict_saves": self.evict_saves,
                "stage_share": self.stage_share, "worker_share": self.worker_share}


def measured_slowdown(trace: Trace | str, *, sizes: JobSizes | None = None, ideal: str = "mean") -> MeasuredSlowdown:
    """The measured slowdown and the worst worker of a trace (for a step-time model to take).

    Examples
    --------
    >>> from spare_core.stragglers import synthetic_trace
    >>> m = measured_slowdown(synthetic_trace(dp=2, pp=2, steps=2, slow={3: 2.0}, jitter=0.0, seed=1))
    >>> m.worst_worker
    3
    """
    r = analyse(trace, sizes=sizes, ideal=ideal)
    f = r.fixes["worker"]
    return MeasuredSlowdown(slowdown=r.slowdown, worst_worker=int(f.label), worst_worker_slowdown=f.slowdown,
                            evict_saves=f.saves, stage_share=r.stage_share, worker_share=r.worker_share)
