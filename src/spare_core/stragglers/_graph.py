"""The dependency graph of one step of a pipeline-parallel job (Megatron-LM's schedules).

Built once per trace from the template (the first step's DP rank 0, every stage), with the
operations ordered as that replica recorded them; every (step, DP rank) shares it. The rules:

* **compute stream**: a stage's forward and backward computations run one after the other in
  their recorded order (1F1B, or the interleaved schedule with ``vpp`` chunks per stage);
* **pipeline send/recv**: a send waits for the computation whose output it sends; a recv is
  posted after the computation before its consumer on the compute stream, and its consumer
  waits for it; each of the four p2p types also runs in order on its own stream. A forward
  send of chunk ``g``'s microbatch ``k`` pairs with the forward recv of chunk ``g + 1``'s
  microbatch ``k`` (on stage ``(g + 1) mod pp``), a backward send of chunk ``g`` with the
  backward recv of chunk ``g - 1``: the pair is one communication (both must have started).
  Recorded sends/recvs that are not launched (the first chunk's forward recv, the last's
  forward send, …) are kept as no-ops of their own;
* **data parallel**: the parameter all-gathers and gradient reduce-scatters of a stage run in
  order on one stream; a chunk's first forward waits for its last all-gather; each is a
  collective of every DP rank (it starts when the last DP rank reaches it). With
  ``separate-grads-all-reduce`` in the trace the reduce-scatters overlap the backward pass
  (a chunk's first one after its last backward), else they run after the tail below;
* **step tail**, per stage: last computation → ``gc`` → layernorm grads all-reduce → embedding
  grads all-reduce (first and last stage together) → [reduce-scatters] → separate grads
  all-reduce → gradient clipping (an all-reduce of every stage and DP rank) → optimizer.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from . import _schema as sc
from ._trace import Trace, TraceError

__all__ = ["Template", "build_template"]

_EPS = 5e-5  # s: clock skew tolerated when telling a not-launched p2p record from a real one


@dataclass(frozen=True)
class Template:
    """The graph the replay kernel walks (see ``src/_ext/stragglers/_whatif_replay.pyx``).

    Attributes
    ----------
    dep_ptr, dep_idx : int64 (n + 1), int32 (E)
        CSR of each template op's deps.
    node_ptr, node_ops : int64 (n_nodes + 1), int32 (n)
        Nodes (an op, or a communication group) in a topological order.
    node_sync : uint8 (n_nodes)
        1 = a collective of every DP rank.
    """

    dep_ptr: np.ndarray
    dep_idx: np.ndarray
    node_ptr: np.ndarray
    node_ops: np.ndarray
    node_sync: np.ndarray

    @property
    def n(self) -> int:
        return int(self.dep_ptr.size - 1)


def _name(trace: Trace, j: int) -> str:
    return f"{sc.OPTYPES[trace.op_type[j]]} #{trace.op_seq[j]} on stage {trace.op_stage[j]}"


def build_template(trace: Trace) -> Template:
    """The step's dependency graph for ``trace`` (module docstring: the rules).

    Raises
    ------
    TraceError
        Send/recv records that do not fit the schedule (a count that matches neither the
        computations that need one nor every computation, a send without its recv), or a
        cycle (operations recorded in an order no schedule produces).
    """
    n = trace.op_stage.size
    P, V = trace.sizes.pp, trace.sizes.vpp
    G = P * V
    ts = trace.start[0, 0]
    te = trace.end[0, 0]
    stage, typ, seq = trace.op_stage, trace.op_type, trace.op_seq
    by: dict[tuple[int, int], list[int]] = {}
    for j in np.lexsort((seq, typ, stage)):
        by.setdefault((int(stage[j]), int(typ[j])), []).append(int(j))
    deps: list[list[int]] = [[] for _ in range(n)]
    groups: list[tuple[list[int], int]] = []
    grouped = np.zeros(n, dtype=bool)

    def chain(ops, first_after=()):
        last = list(first_after)
        for o in ops:
            deps[o].extend(last)
            last = [o]

    def gmc_of(j):
        if trace.op_gmc[j] >= 0:
            return int(trace.op_gmc[j])
        if trace.op_mc[j] >= 0:
            return int(trace.op_mc[j]) * P + int(stage[j])
        return int(stage[j])

    recv_at: dict[tuple[int, int, int], int] = {}
    sends: list[tuple[int, tuple[int, int, int]]] = []
    sep_present = bool((typ == sc.SEP).any())
    for p in range(P):
        comp = by.get((p, sc.FWD), []) + by.get((p, sc.BWD), [])
        comp.sort(key=lambda j: (ts[j], seq[j], typ[j]))
        chain(comp)
        pred = {c: (comp[i - 1] if i else None) for i, c in enumerate(comp)}
        for direction, send_t, recv_t in ((sc.FWD, sc.FSEND, sc.FRECV), (sc.BWD, sc.BSEND, sc.BRECV)):
            C = by.get((p, direction), [])
            if not C:
                continue
            g = [gmc_of(c) for c in C]
            mb: list[int] = []
            seen: dict[int, int] = {}
            for x in g:
                mb.append(seen.get(x, 0))
                seen[x] = mb[-1] + 1
            last_start = max(ts[c] for c in C)
            first_end = min(te[c] for c in C)
            for kind, t in (("send", send_t), ("recv", recv_t)):
                R = by.get((p, t), [])
                chain(R)  # the p2p type's own stream
                if direction == sc.FWD:
                    need = [x < G - 1 for x in g] if kind == "send" else [x > 0 for x in g]
                else:
                    need = [x > 0 for x in g] if kind == "send" else [x < G - 1 for x in g]
                if kind == "recv":
                    valid = [r for r in R if ts[r] <= last_start + _EPS]
                else:
                    valid = [r for r in R if te[r] >= first_end - _EPS]
                for r in R:
                    if r not in valid:
                        groups.append(([r], 0))
                        grouped[r] = True
                k_need = sum(need)
                if len(valid) == k_need:
                    pairs = list(zip(valid, [i for i in range(len(C)) if need[i]]))
                elif len(valid) == len(C):
                    pairs = list(zip(valid, range(len(C))))
                elif kind == "recv" and len(valid) + 1 == len(C):
                    pairs = list(zip(valid, range(1, len(C))))
                else:
                    raise TraceError(
                        f"{trace.source}: stage {p} records {len(valid)} {sc.OPTYPES[t]} per step, but {len(C)} "
                        f"{sc.OPTYPES[direction]}s of which {k_need} need one (pp {P}, vpp {V})")
                for r, i in pairs:
                    c = C[i]
                    if kind == "send":
                        deps[r].append(c)
                    else:
                        deps[c].append(r)
                        if pred[c] is not None:
                            deps[r].append(pred[c])
                    if not need[i]:
                        groups.append(([r], 0))
                        grouped[r] = True
                    elif kind == "recv":
                        recv_at[(direction, g[i], mb[i])] = r
                    else:
                        target = g[i] + 1 if direction == sc.FWD else g[i] - 1
                        sends.append((r, (direction, target, mb[i])))
        # data parallel
        ag, rs = by.get((p, sc.AG), []), by.get((p, sc.RS), [])
        chain(sorted(ag + rs, key=lambda j: (ts[j], seq[j])))
        fwd = by.get((p, sc.FWD), [])
        done: set[int] = set()
        for a in reversed(ag):
            mc = max(int(trace.op_mc[a]), 0)
            if mc in done:
                continue
            done.add(mc)
            cand = [c for c in fwd if gmc_of(c) // P == mc] or fwd[:1]
            if cand:
                deps[min(cand, key=lambda c: ts[c])].append(a)
        if sep_present:
            bwd = by.get((p, sc.BWD), [])
            done = set()
            for r in rs:
                mc = max(int(trace.op_mc[r]), 0)
                if mc in done:
                    continue
                done.add(mc)
                cand = [c for c in bwd if gmc_of(c) // P == mc] or bwd
                if cand:
                    deps[r].append(max(cand, key=lambda c: te[c]))
        last = [max(comp, key=lambda c: te[c])] if comp else []
        gcs = by.get((p, sc.GC), [])
        chain(gcs, last)
        if gcs:
            last = [gcs[-1]]
        tail = by.get((p, sc.LN), []) + by.get((p, sc.EMB), [])
        if not sep_present:
            tail += rs
        tail += by.get((p, sc.SEP), []) + by.get((p, sc.CLIP), []) + by.get((p, sc.OPT), [])
        chain(tail, last + ([rs[-1]] if sep_present and rs else []))
    # p2p pairs
    for s, key in sends:
        r = recv_at.pop(key, None)
        if r is None:
            raise TraceError(f"{trace.source}: {_name(trace, s)} has no matching {sc.OPTYPES[typ[s] + 1]} "
                             f"of chunk {key[1]} microbatch {key[2]}")
        groups.append(([s, r], 0))
        grouped[s] = grouped[r] = True
    if recv_at:
        r = next(iter(recv_at.values()))
        raise TraceError(f"{trace.source}: {_name(trace, r)} has no matching send")
    # collectives
    for t in (sc.AG, sc.RS, sc.SEP):
        for j in np.flatnonzero(typ == t):
            groups.append(([int(j)], 1))
            grouped[j] = True
    for t, members, sync in ((sc.EMB, sorted({0, P - 1}), 0), (sc.CLIP, list(range(P)), 1)):
        lists = [by.get((p, t), []) for p in members]
        lists = [x for x in lists if x]
        if not lists:
            continue
        if len({len(x) for x in lists}) != 1:
            raise TraceError(f"{trace.source}: stages record different numbers of {sc.OPTYPES[t]} per step "
                             f"({', '.join(str(len(x)) for x in lists)})")
        for k in range(len(lists[0])):
            groups.append(([x[k] for x in lists], sync))
            for x in lists:
                grouped[x[k]] = True
        if t == sc.EMB:  # an embedding all-reduce on a middle stage: its own op
            for p in range(1, P - 1):
                for j in by.get((p, t), []):
                    groups.append(([j], 0))
                    grouped[j] = True
    for j in np.flatnonzero(~grouped):
        groups.append(([int(j)], 0))
    return _order(trace, deps, groups)


def _order(trace: Trace, deps: list[list[int]], groups: list[tuple[list[int], int]]) -> Template:
    n = len(deps)
    node_of = np.empty(n, dtype=np.int64)
    for k, (members, _) in enumerate(groups):
        node_of[members] = k
    K = len(groups)
    succ: list[set[int]] = [set() for _ in range(K)]
    indeg = np.zeros(K, dtype=np.int64)
    for j in range(n):
        for u in set(deps[j]):
            a, b = int(node_of[u]), int(node_of[j])
            if a == b:
                raise TraceError(f"{trace.source}: {_name(trace, j)} waits for {_name(trace, u)} of its own communication")
            if b not in succ[a]:
                succ[a].add(b)
                indeg[b] += 1
    ts = trace.start[0, 0]
    key = [min(ts[m] for m in members) for members, _ in groups]
    heap = [(key[k], k) for k in range(K) if indeg[k] == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        _, k = heapq.heappop(heap)
        order.append(k)
        for b in succ[k]:
            indeg[b] -= 1
            if indeg[b] == 0:
                heapq.heappush(heap, (key[b], b))
    if len(order) != K:
        stuck = [k for k in range(K) if indeg[k] > 0][:3]
        names = "; ".join(_name(trace, groups[k][0][0]) for k in stuck)
        raise TraceError(f"{trace.source}: the operations' dependencies form a cycle (through {names}): "
                         "the recorded order fits no pipeline schedule")
    dep_ptr = np.zeros(n + 1, dtype=np.int64)
    dep_ptr[1:] = np.cumsum([len(set(x)) for x in deps])
    dep_idx = np.fromiter((u for x in deps for u in sorted(set(x))), dtype=np.int32, count=int(dep_ptr[-1]))
    node_ptr = np.zeros(K + 1, dtype=np.int64)
    node_ptr[1:] = np.cumsum([len(groups[k][0]) for k in order])
    node_ops = np.fromiter((m for k in order for m in groups[k][0]), dtype=np.int32, count=n)
    node_sync = np.array([groups[k][1] for k in order], dtype=np.uint8)
    return Template(dep_ptr, dep_idx, node_ptr, node_ops, node_sync)
