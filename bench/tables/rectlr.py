"""rectlr: spare_core.strategies.spare.rectlr against a rebuild-per-failure RECTLR (scipy matching + OR-Tools flow).

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

Usage: ``python -m bench.ratios rectlr [--quick] [--part latency throughput memory]``. Read
medians and ratios; the machine is shared. The peer is ``bench/peers.py``'s ``RebuildController``.
"""
from __future__ import annotations

import gc
import time
import tracemalloc

import numpy as np

from spare_core.strategies.spare.layout import StackedLayout
from spare_core.strategies.spare.rectlr import Rectlr

from bench.peers import RebuildController
from bench.workloads import RECTLR_SEED as SEED
from bench.workloads import failure_orders as orders


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


def add_arguments(p):
    p.add_argument("--part", nargs="+", choices=["latency", "throughput", "memory"],
                   default=["latency", "throughput", "memory"])


def run(args) -> int:
    if "latency" in args.part:
        latency(200, 6, 3, 2) if args.quick else latency(1000, 10, 20, 5)
    if "throughput" in args.part:
        throughput(1000, 8, 2, 2, 40) if args.quick else throughput(10_000, 14, 3, 3, 60)
    if "memory" in args.part:
        for n, r in [(1000, 8)] if args.quick else [(10_000, 14), (100_000, 14)]:
            memory(n, r)
    return 0
