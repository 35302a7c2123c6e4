"""spare_core.rectlr against a rebuild-per-failure RECTLR (scipy matching + OR-Tools flow).

Same failure sequences, same run. Three measurements (issue 4):

1. latency: per-failure ``Rectlr.fail()`` along random failure orders to the wipe-out at
   N = 1000, r = 10 (target: median <= 20 us), against the peer replaying the same orders
   (medians and means over all decisions and over the reordering ones);
2. throughput: whole sequences to the wipe-out at N = 10,000, r = 14 with ``fail_many``
   (target: >= 50,000 failures/s), both Phase-1 back ends ("kernel", "matching"), and the
   peer on a prefix of the same sequences (it is far too slow for whole ones);
3. memory: tracemalloc peak of building and running a controller, in bytes per N r.

The peers ("rebuild") are the straightforward controller: on each failure it recomputes the
top-S coverage with numpy (Phase 0); otherwise for S = S_old, S_old + 1, ... it builds the
slot-expanded type x (group, slot) graph and runs scipy's maximum_bipartite_matching
(Phase 1), then builds the reassignment network (source -> type -> holder group -> sink,
cost = positions climbed, capacity S* per group) and solves it with OR-Tools
SimpleMinCostFlow (Phase 2; a second peer uses spare_core.graph.flow.min_cost_flow instead, the
rebuild-per-failure use of our own flow kernel), and reorders stacks with the same swap rule. Its S* must equal
ours on every failure (S* depends only on which groups are alive and S before), which is
checked.

Usage: ``python bench/ratios_rectlr.py [--quick]``. Read medians and ratios; the machine is
shared.
"""
from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core.layout import StackedLayout
from spare_core.rectlr import Rectlr

SEED = 4004


class RebuildController:
    """RECTLR rebuilt from scratch on every failure (the peer); tracks only S, stacks, alive."""

    def __init__(self, layout, phase2="ortools"):
        from ortools.graph.python import min_cost_flow

        self._mcf = min_cost_flow
        self.phase2 = phase2  # "ortools" or "spare_core" (spare_core.graph.flow.min_cost_flow)
        self.place = np.asarray(layout.placement)
        self.n, self.r = self.place.shape
        self.restart()

    def restart(self):
        self.stacks = self.place.copy()
        self.alive = np.ones(self.n, dtype=bool)
        self.S = 1

    def _complete_at(self, s, groups):
        """Phase 1 at s: maximum matching on the slot-expanded graph (scipy)."""
        n, r = self.n, self.r
        if groups.size * s < n:
            return False
        types = self.stacks[groups].ravel()  # all r holdings of each alive group
        slot_of_group = np.arange(groups.size)
        rows = np.repeat(types, s)
        cols = (np.repeat(slot_of_group, r * s) * s + np.tile(np.arange(s), groups.size * r))
        g = sp.csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, groups.size * s))
        return int((maximum_bipartite_matching(g, perm_type="column") >= 0).sum()) == n

    def _least_reordering(self, s, groups):
        """Phase 2 at s: min-cost flow (OR-Tools); returns the contributing group per type."""
        n, r = self.n, self.r
        m = groups.size
        depth = np.tile(np.arange(r), m)
        types = self.stacks[groups].ravel()
        gidx = np.repeat(np.arange(m), r)
        cost = np.maximum(0, depth - s + 1)
        src, sink = n + m, n + m + 1
        tails = np.concatenate([np.full(n, src), types, n + np.arange(m)])
        heads = np.concatenate([np.arange(n), n + gidx, np.full(m, sink)])
        caps = np.concatenate([np.ones(n + types.size, dtype=np.int64), np.full(m, s)])
        costs = np.concatenate([np.zeros(n, dtype=np.int64), cost, np.zeros(m, dtype=np.int64)])
        supplies = np.zeros(n + m + 2, dtype=np.int64)
        supplies[src], supplies[sink] = n, -n
        if self.phase2 == "spare_core":
            from spare_core.graph.flow import min_cost_flow

            res = min_cost_flow(n + m + 2, tails, heads, caps, costs, supplies)
            flows, total = res.flow[n : n + types.size], int(res.cost)
        else:
            f = self._mcf.SimpleMinCostFlow()
            f.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
            f.set_nodes_supplies(np.arange(n + m + 2), supplies)
            if f.solve() != f.OPTIMAL:
                raise RuntimeError("peer: min-cost flow not optimal")
            flows, total = f.flows(np.arange(n, n + types.size)), int(f.optimal_cost())
        used = np.flatnonzero(flows > 0)
        owner = np.empty(n, dtype=np.int64)
        owner[types[used]] = groups[gidx[used]]
        return owner, total

    def fail(self, g):
        """Returns (kind, S after)."""
        self.alive[g] = False
        groups = np.flatnonzero(self.alive)
        held = np.zeros(self.n, dtype=bool)
        held[self.place[groups].ravel()] = True
        if not held.all():
            return "wipeout", self.S
        covered = np.zeros(self.n, dtype=bool)
        covered[self.stacks[groups, : self.S].ravel()] = True
        if covered.all():
            return "fixed", self.S
        s = self.S
        while not self._complete_at(s, groups):
            s += 1
        owner, _ = self._least_reordering(s, groups)
        self.S = s
        for h in np.unique(owner):
            mine = set(np.flatnonzero(owner == h).tolist())
            row = self.stacks[h]
            for d in range(s, self.r):
                if row[d] in mine:
                    p = s - 1
                    while row[p] in mine:
                        p -= 1
                    row[p], row[d] = row[d], row[p]
        return "reordered", s


def orders(n, k, seed):
    rng = np.random.default_rng(seed)
    return [rng.permutation(n) for _ in range(k)]


def latency(n, r, n_seq, peer_seqs):
    """Per-decision latency along whole sequences; the peers replay the first peer_seqs."""
    lay = StackedLayout(n, r)
    ours = Rectlr(lay)
    peers = {"rebuild+OR-Tools": RebuildController(lay), "rebuild+spare_core.graph.flow": RebuildController(lay, "spare_core")}
    rows = []  # (kind, ours ns, {peer: ns})
    for si, order in enumerate(orders(n, n_seq, SEED)):
        ours.restart()
        for p in peers.values():
            p.restart()
        for g in order.tolist():
            t0 = time.perf_counter_ns()
            d = ours.fail(g)
            t_ours = time.perf_counter_ns() - t0
            t_peer = {}
            for name, p in peers.items():
                if si >= peer_seqs:
                    break
                t0 = time.perf_counter_ns()
                kind, s = p.fail(g)
                t_peer[name] = time.perf_counter_ns() - t0
                # S* depends only on the alive set and S before: the controllers must agree
                assert kind == "wipeout" if d.kind == "wipeout" else s == d.stack_depth, (name, kind, s, d)
            rows.append((d.kind, t_ours, t_peer))
            if d.kind == "wipeout":
                break
    kinds = np.array([x[0] for x in rows])
    t_o = np.array([x[1] for x in rows], dtype=float) / 1e3
    both = np.array([bool(x[2]) for x in rows])
    counts = {k: int((kinds == k).sum()) for k in ("fixed", "reordered", "wipeout")}
    print(f"latency N={n} r={r}: {len(rows)} decisions over {n_seq} random orders to the wipe-out, {counts}")
    print(f"  ours fail(), all sequences: median {np.median(t_o):9.1f} us  p90 {np.percentile(t_o, 90):9.1f}"
          f"  p99 {np.percentile(t_o, 99):9.1f}  mean {t_o.mean():9.1f}")
    for name in peers:
        t_p = np.array([x[2].get(name, np.nan) for x in rows], dtype=float) / 1e3
        for label, mask in (("all", both), ("reordered", both & (kinds == "reordered"))):
            mo, mp = np.median(t_o[mask]), np.median(t_p[mask])
            print(f"  {label:9s} decisions, first {peer_seqs} orders, vs {name:24s}: ours median {mo:7.1f} us,"
                  f" peer {mp:9.1f} us, ratio {mp / mo:5.0f}x; means {t_o[mask].mean():7.1f} vs"
                  f" {t_p[mask].mean():9.1f} us, ratio {t_p[mask].mean() / t_o[mask].mean():5.0f}x")


def throughput(n, r, n_seq, repeats, peer_prefix):
    lay = StackedLayout(n, r)
    seqs = orders(n, n_seq, SEED + 1)
    res = {}
    for phase1 in ("kernel", "matching"):
        try:
            ctl = Rectlr(lay, phase1=phase1)
        except (ImportError, AttributeError) as exc:  # the matching kernel is another module
            print(f"  phase1={phase1}: unavailable ({exc})")
            continue
        rates = []
        for _ in range(repeats):
            done = 0
            t0 = time.perf_counter()
            for order in seqs:
                ctl.restart()
                done += len(ctl.fail_many(order))
            rates.append(done / (time.perf_counter() - t0))
        res[phase1] = (float(np.median(rates)), done / n_seq)
    ours = Rectlr(lay)
    peer = RebuildController(lay)
    t_ours, t_peer = [], []
    for order in seqs:
        pre = order[:peer_prefix]
        ours.restart()
        peer.restart()
        t0 = time.perf_counter()
        ours.fail_many(pre)
        t_ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for g in pre.tolist():
            peer.fail(g)
        t_peer.append(time.perf_counter() - t0)
    print(f"throughput N={n} r={r}: {res['kernel'][1]:.0f} failures per sequence to the wipe-out, {n_seq} orders")
    for phase1, (rate, _) in res.items():
        print(f"  ours fail_many, phase1={phase1:8s}: {rate:10.0f} failures/s (median of {repeats})")
    po, pp = peer_prefix / np.median(t_ours), peer_prefix / np.median(t_peer)
    print(f"  first {peer_prefix} failures: ours {po:10.0f} failures/s, peer rebuild {pp:8.1f} failures/s,"
          f" ratio {po / pp:.0f}x")


def memory(n, r):
    gc.collect()
    tracemalloc.start()
    lay = StackedLayout(n, r)
    ctl = Rectlr(lay)
    ctl.fail_many(np.random.default_rng(SEED).permutation(n)[: n // 2])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"memory N={n} r={r}: peak {peak / 2**20:.1f} MiB = {peak / (n * r):.0f} bytes per N r"
          f" (fail_many of N/2 groups included)")


def main(argv=None):
    ap = argparse.ArgumentParser(description="RECTLR vs rebuild-per-failure (scipy + OR-Tools)")
    ap.add_argument("--quick", action="store_true", help="small sizes, a smoke run")
    ap.add_argument("--part", nargs="+", choices=["latency", "throughput", "memory"],
                    default=["latency", "throughput", "memory"])
    args = ap.parse_args(argv)
    if "latency" in args.part:
        latency(200, 6, 3, 2) if args.quick else latency(1000, 10, 20, 5)
    if "throughput" in args.part:
        throughput(1000, 8, 2, 2, 40) if args.quick else throughput(10_000, 14, 3, 3, 60)
    if "memory" in args.part:
        for n, r in [(1000, 8)] if args.quick else [(10_000, 14), (100_000, 14)]:
            memory(n, r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
