"""Synthetic traces from the straggler model, in the schema of a recorded job.

A Megatron-LM step (1F1B, or the interleaved schedule with ``vpp`` chunks per stage) is laid
out per stage in program order, given durations from a small straggler model and replayed by
the same compiled kernel as the analysis (with every communication waiting for its peers), so
the trace's start times, and the recorded durations of communications (which include the
wait), are what a profiler would have written. The model (seconds; one named random stream
per source, from one ``numpy.random.SeedSequence``):

* a forward computation takes ``t_forward`` × the stage's factor (``last_stage`` on the last
  stage: the imbalanced partition of a loss layer) × the worker's factor (``slow``: planted
  slow GPUs, by rank) × a per-(step, DP rank, microbatch) sequence-length factor (lognormal,
  log-sd ``seq_spread``) × jitter (mean-one lognormal, log-sd ``jitter``, per op, as the
  pacing model's ``ComputeModel.jitter``, docs/pacing.md §1); a backward takes twice that;
* communications take fixed times × jitter; with probability ``contention`` a step's fabric is
  contended and every DP collective and pipeline transfer takes ``contention_factor`` times as long.
"""
from __future__ import annotations

import io
import os
from typing import Any, Mapping

import numpy as np

from .. import _native
from .._writer import write_atomic
from . import _schema as sc
from ._graph import build_template
from ._trace import MAX_TRACE_ROWS, JobSizes, Trace

__all__ = ["synthetic_trace", "trace_columns", "write_trace", "schedule"]

#: communication and optimizer times of the model, seconds
_FIXED = {sc.FSEND: 0.002, sc.FRECV: 0.002, sc.BSEND: 0.002, sc.BRECV: 0.002, sc.AG: 0.02, sc.RS: 0.04,
          sc.SEP: 0.004, sc.LN: 0.001, sc.EMB: 0.005, sc.CLIP: 0.002, sc.OPT: 0.03, sc.GC: 0.0}
_CONTENDED = (sc.FSEND, sc.FRECV, sc.BSEND, sc.BRECV, sc.AG, sc.RS)


def schedule(pp: int, microbatches: int, vpp: int = 1) -> list[list[tuple[int, int, int]]]:
    """Per stage, the computations in program order as ``(type, gmc, microbatch)``.

    Megatron-LM's 1F1B (``vpp = 1``: ``pp - stage - 1`` warm-up forwards) and interleaved
    schedule (``vpp > 1``, ``microbatches`` a multiple of ``pp``: ``2 (pp - stage - 1) +
    (vpp - 1) pp`` warm-up forwards; virtual microbatch ``k`` is chunk ``(k // pp) mod vpp``).

    Examples
    --------
    >>> [t for t, _, _ in schedule(2, 3)[0]]     # stage 0 of 2: F0, then F1 B0 F2 B1, then B2
    [0, 0, 1, 0, 1, 1]
    """
    if vpp > 1 and microbatches % pp:
        raise ValueError(f"the interleaved schedule needs microbatches ({microbatches}) a multiple of pp ({pp})")
    out = []
    total = microbatches * vpp
    for p in range(pp):
        warm = min(pp - p - 1, microbatches) if vpp == 1 else min(2 * (pp - p - 1) + (vpp - 1) * pp, total)

        def op(k, fwd):
            chunk = (k // pp) % vpp
            if not fwd:
                chunk = vpp - 1 - chunk
            mb = (k // (pp * vpp)) * pp + k % pp if vpp > 1 else k
            return (sc.FWD if fwd else sc.BWD, chunk * pp + p, mb)

        seq = [op(k, True) for k in range(warm)]
        for i in range(total - warm):
            seq += [op(warm + i, True), op(i, False)]
        seq += [op(k, False) for k in range(total - warm, total)]
        out.append(seq)
    return out


def _layout(sizes: JobSizes, microbatches: int, noops: bool = False, overlap: bool = False):
    """Template ops per stage in program order: lists of (type, seq, mc, gmc, mb)."""
    P, V = sizes.pp, sizes.vpp
    G = P * V
    stages = []
    for p, comp in enumerate(schedule(P, microbatches, V)):
        count: dict[int, int] = {}
        ops: list[tuple[int, int, int, int, int]] = []

        def emit(t, mc=-1, gmc=-1, mb=-1):
            ops.append((t, count.get(t, 0), mc, gmc, mb))
            count[t] = count.get(t, 0) + 1

        for c in range(V):
            emit(sc.AG, mc=c)
        last_bwd = {}
        for i, (t, g, mb) in enumerate(comp):
            if t == sc.BWD:
                last_bwd[g // P] = i
        for i, (t, g, mb) in enumerate(comp):
            recv = (t == sc.FWD and g > 0) or (t == sc.BWD and g < G - 1)
            send = (t == sc.FWD and g < G - 1) or (t == sc.BWD and g > 0)
            if recv or (noops and V > 1):
                emit(sc.FRECV if t == sc.FWD else sc.BRECV)
            emit(t, mc=g // P, gmc=g, mb=mb)
            if send or (noops and V > 1):
                emit(sc.FSEND if t == sc.FWD else sc.BSEND)
            if overlap and t == sc.BWD and last_bwd[g // P] == i:  # the chunk's gradients are complete
                emit(sc.RS, mc=g // P)
        emit(sc.GC, mb=0)
        emit(sc.LN)
        if p in (0, P - 1):
            emit(sc.EMB)
        if overlap:
            emit(sc.SEP)
        else:
            for c in reversed(range(V)):
                emit(sc.RS, mc=c)
        emit(sc.CLIP)
        emit(sc.OPT)
        stages.append(ops)
    return stages


def _chunks(sizes: JobSizes) -> int:
    return sizes.pp * sizes.vpp


def _consumer_gmc(stages) -> list[int]:
    """Per template op (in flat order), the chunk of the computation a p2p op belongs to."""
    out = []
    for ops in stages:
        for i, (t, _, _, gmc, _) in enumerate(ops):
            if t in (sc.FRECV, sc.BRECV):
                out.append(ops[i + 1][3])
            elif t in (sc.FSEND, sc.BSEND):
                out.append(ops[i - 1][3])
            else:
                out.append(gmc)
    return out


def synthetic_trace(*, dp: int = 4, pp: int = 4, tp: int = 1, cp: int = 1, vpp: int = 1, microbatches: int = 8,
                    steps: int = 10, t_forward: float = 0.05, slow: Mapping[int, float] | None = None,
                    last_stage: float = 1.0, jitter: float = 0.05, seq_spread: float = 0.0,
                    contention: float = 0.0, contention_factor: float = 3.0, seed: int = 0,
                    record_noops: bool = False, overlap_grads: bool = False) -> Trace:
    """A trace of ``steps`` steps of a ``dp × pp`` job with planted stragglers.

    Parameters
    ----------
    dp, pp, tp, cp, vpp : int
        Sizes (the trace holds one worker per (DP rank, stage); rank labels are the global rank
        of each worker's first GPU, ``(stage · dp + dp_rank) · tp · cp``, as Megatron numbers them).
    microbatches : int
        Per step (a multiple of ``pp`` when ``vpp > 1``).
    steps : int
    t_forward : float
        Seconds of one forward computation of one microbatch on a balanced stage.
    slow : mapping rank -> factor, optional
        Planted slow workers (their computations take ``factor`` times as long).
    last_stage : float
        The last stage's computations take this factor (stage imbalance).
    jitter : float
        Log-sd of the per-op mean-one lognormal jitter.
    seq_spread : float
        Log-sd of a per-(step, DP rank, microbatch) factor (sequence-length imbalance).
    contention, contention_factor : float
        Probability per step that the fabric is contended, and the communication factor then.
    seed : int
    record_noops : bool
        With ``vpp > 1``, record a send and a recv around every computation, the ones a chunk at
        the model's ends does not launch included (as Megatron-LM's interleaved schedule records
        them); they take no time.
    overlap_grads : bool
        Reduce-scatter each chunk's gradients as soon as its last backward is done (overlapped
        with the rest of the backward pass), with a ``separate-grads-all-reduce`` in the step tail
        (Megatron-LM's ``--overlap-grad-reduce``); else all reduce-scatters run in the tail.

    Returns
    -------
    Trace
        Step ``s`` starts where step ``s - 1`` ended.

    Examples
    --------
    >>> tr = synthetic_trace(dp=2, pp=2, microbatches=4, steps=2)
    >>> tr.n_ops, tr.start.shape
    (184, (2, 2, 46))
    """
    sizes = JobSizes(dp=dp, pp=pp, tp=tp, cp=cp, vpp=vpp)
    for name, v, low in (("microbatches", microbatches, 1), ("steps", steps, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    for name, v in (("t_forward", t_forward), ("last_stage", last_stage), ("contention_factor", contention_factor)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    for name, v in (("jitter", jitter), ("seq_spread", seq_spread)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    if not (isinstance(contention, (int, float)) and 0 <= contention <= 1):
        raise ValueError(f"contention must be a probability in [0, 1], got {contention!r}")
    D, P = dp, pp
    # refused before anything is allocated: the trace holds steps x dp x (ops of a step, at
    # least 2 per micro-batch and stage, vpp chunks each), which read_trace caps at
    # MAX_TRACE_ROWS rows (so a larger one could not be read back either)
    least = int(steps) * int(D) * int(P) * int(sizes.vpp) * int(microbatches) * 2
    if least > MAX_TRACE_ROWS:
        raise ValueError(f"the synthetic trace would hold at least {least:,} operation rows (steps x dp x pp x vpp x "
                         f"microbatches x 2), more than the {MAX_TRACE_ROWS:,} a trace may hold")
    ranks = (np.arange(P)[None, :] * D + np.arange(D)[:, None]) * tp * cp
    slow = dict(slow or {})
    factor = np.ones((D, P))
    known = {int(r): (d, p) for (d, p), r in np.ndenumerate(ranks)}
    for r, f in slow.items():
        if int(r) not in known:
            raise ValueError(f"slow: no worker of rank {r} (ranks are (stage * dp + dp_rank) * tp * cp)")
        if not (np.isfinite(f) and f > 0):
            raise ValueError(f"slow: the factor of rank {r} must be a finite number > 0, got {f!r}")
        factor[known[int(r)]] = f
    stages = _layout(sizes, microbatches, bool(record_noops), bool(overlap_grads))
    flat = [(p, *o) for p, ops in enumerate(stages) for o in ops]
    n = len(flat)
    if int(steps) * int(D) * n > MAX_TRACE_ROWS:
        raise ValueError(f"the synthetic trace would hold {int(steps) * int(D) * n:,} operation rows (steps x dp x "
                         f"{n} ops of a step), more than the {MAX_TRACE_ROWS:,} a trace may hold")
    op_stage = np.array([f[0] for f in flat], dtype=np.int64)
    op_type = np.array([f[1] for f in flat], dtype=np.int64)
    op_seq = np.array([f[2] for f in flat], dtype=np.int64)
    op_mc = np.array([f[3] for f in flat], dtype=np.int64)
    op_gmc = np.array([f[4] for f in flat], dtype=np.int64)
    op_mb = np.array([f[5] for f in flat], dtype=np.int64)
    pos = np.array([i for ops in stages for i in range(len(ops))], dtype=np.float64)
    # the graph from the program order (a provisional one-step trace with ordinal times)
    prov = Trace(sizes=sizes, steps=np.zeros(1, dtype=np.int64), op_stage=op_stage, op_type=op_type, op_seq=op_seq,
                 op_mc=op_mc, op_gmc=op_gmc, ranks=ranks, start=pos.reshape(1, 1, n).copy(),
                 end=(pos + 0.5).reshape(1, 1, n).copy())
    tpl = build_template(prov)
    ss = np.random.SeedSequence(seed)
    r_jit, r_seq, r_cont = (np.random.default_rng(s) for s in ss.spawn(3))
    base = np.zeros(n)
    comp = np.isin(op_type, (sc.FWD, sc.BWD))
    base[comp] = t_forward * np.where(op_type[comp] == sc.BWD, 2.0, 1.0) * np.where(op_stage[comp] == P - 1,
                                                                                     last_stage, 1.0)
    for t, v in _FIXED.items():
        base[op_type == t] = v
    if record_noops:  # the p2p records a chunk at the model's ends does not launch: no time
        for i, (t, g) in enumerate(zip(op_type, _consumer_gmc(stages))):
            if (t == sc.FRECV and g == 0) or (t == sc.FSEND and g == _chunks(sizes) - 1) or \
                    (t == sc.BRECV and g == _chunks(sizes) - 1) or (t == sc.BSEND and g == 0):
                base[i] = 0.0
    dur = np.broadcast_to(base, (steps, D, n)).copy()
    dur[:, :, comp] *= factor[:, op_stage[comp]][None, :, :]
    if seq_spread > 0:
        z = r_seq.standard_normal((steps, D, microbatches))
        f = np.exp(seq_spread * z - seq_spread ** 2 / 2)
        dur[:, :, comp] *= f[:, :, op_mb[comp]]
    if jitter > 0:
        dur *= np.exp(jitter * r_jit.standard_normal(dur.shape) - jitter ** 2 / 2)
    if contention > 0:
        hit = r_cont.random(steps) < contention
        cmask = np.isin(op_type, _CONTENDED)
        dur[np.ix_(hit, np.arange(D), np.flatnonzero(cmask))] *= contention_factor
    k = _native.load("_whatif_replay")
    mk, st, en = k.replay(tpl.dep_ptr, tpl.dep_idx, tpl.node_ptr, tpl.node_ops, tpl.node_sync, dur,
                          np.arange(D, dtype=np.int64), np.ones((D, n), dtype=np.uint8), base, True)
    offset = np.concatenate([[0.0], np.cumsum(mk + 0.01)[:-1]])[:, None, None]
    return Trace(sizes=sizes, steps=np.arange(steps, dtype=np.int64), op_stage=op_stage, op_type=op_type,
                 op_seq=op_seq, op_mc=op_mc, op_gmc=op_gmc, ranks=ranks, start=st + offset, end=en + offset,
                 source="synthetic")


def trace_columns(trace: Trace, *, shuffle: int | None = None) -> dict[str, np.ndarray]:
    """The trace as columns of the schema (one row per op), in step/DP rank/op order or shuffled
    with the seed ``shuffle``."""
    S, D, n = trace.start.shape
    s, d, j = (a.ravel() for a in np.meshgrid(np.arange(S), np.arange(D), np.arange(n), indexing="ij"))
    p = trace.op_stage[j]
    cols = {
        "dp_rank": d.astype(np.int32), "stage": p.astype(np.int32), "rank": trace.ranks[d, p].astype(np.int64),
        "step": trace.steps[s].astype(np.int64), "optype": np.asarray(sc.OPTYPES, dtype=object)[trace.op_type[j]],
        "start_ts": trace.start.ravel().copy(), "duration": (trace.end - trace.start).ravel(),
        "seq_id": trace.op_seq[j].astype(np.int32), "mc": trace.op_mc[j].astype(np.int32),
        "gmc": trace.op_gmc[j].astype(np.int32),
        "mb_id": _microbatches(trace)[j],
    }
    if shuffle is not None:
        perm = np.random.default_rng(shuffle).permutation(s.size)
        cols = {k: v[perm] for k, v in cols.items()}
    return cols


def _microbatches(trace: Trace) -> np.ndarray:
    """Per template op, its microbatch: a computation's index among those of its stage, type and
    chunk in ``seq_id`` order (each chunk runs its microbatches in order); -1 for other ops."""
    out = np.full(trace.op_type.size, -1, dtype=np.int64)
    comp = np.flatnonzero(np.isin(trace.op_type, (sc.FWD, sc.BWD)))
    key = np.stack([trace.op_stage[comp], trace.op_type[comp], trace.op_gmc[comp]], axis=1)
    order = comp[np.lexsort((trace.op_seq[comp], key[:, 2], key[:, 1], key[:, 0]))]
    k = np.stack([trace.op_stage[order], trace.op_type[order], trace.op_gmc[order]], axis=1)
    new = np.r_[True, (k[1:] != k[:-1]).any(axis=1)]
    starts = np.flatnonzero(new)
    idx = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
    out[order] = idx
    return out


def write_trace(path: str | os.PathLike[str], trace: Trace | Mapping[str, Any], *, shuffle: int | None = None) -> str:
    """Write a trace (or its columns) as Parquet (``.parquet``/``.pq``, needs pyarrow) or CSV.

    Returns the file written (through :mod:`spare_core._writer`: atomic, regular files only).
    """
    cols = trace_columns(trace, shuffle=shuffle) if isinstance(trace, Trace) else dict(trace)
    p = os.fspath(path)
    if p.endswith((".parquet", ".pq")):
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrays = {k: (pa.array(v.tolist() if v.dtype == object else v).dictionary_encode() if k == "optype"
                      else pa.array(v)) for k, v in cols.items()}
        buf = io.BytesIO()
        pq.write_table(pa.table(arrays), buf)
        return write_atomic(p, buf.getvalue())
    names = list(cols)
    n = len(cols[names[0]])
    out = io.StringIO()
    out.write(",".join(names) + "\n")
    text = [np.char.mod("%.9f", cols[k]) if np.asarray(cols[k]).dtype.kind == "f" else np.asarray(cols[k]).astype(str)
            for k in names]
    for i in range(n):
        out.write(",".join(t[i] for t in text) + "\n")
    return write_atomic(p, out.getvalue().encode())
