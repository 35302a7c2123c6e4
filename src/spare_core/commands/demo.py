"""``spare demo``: SPARe's matching step along a failure sequence, repaired incrementally.

N shard types on cyclic stacks of r groups (group g holds types g, g+1, ..., g+r-1), every
group computing the top S entries of its stack. Groups fail one at a time (seeded); after
each failure the RECTLR matching phases run on an :class:`~spare_core.graph.matching.IncrementalMatching`:
repair at the current S, and if some type is left uncovered, raise S for all groups until
every type is covered (S <= r) or no S works (wipe-out). Each step's maximum matching is
proved by its König vertex cover and timed next to a fresh scipy solve of the same
slot-expanded graph.
"""
from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core.graph.matching import IncrementalMatching

from . import MAX_COUNT, UsageError, bounded, positive_int, seed_int
from .budget import check_matching_demo

HELP = "matching demo: fail SPARe groups one by one and repair the shard assignment incrementally"


def add_arguments(parser) -> None:
    parser.add_argument("--types", type=bounded(int, 2, "an integer", MAX_COUNT), default=1000,
                        help="number of shard types = groups N, >= 2 (default 1000)")
    parser.add_argument("--redundancy", type=positive_int, default=4,
                        help="stack height r: holders per type, 1..N (default 4)")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the failure order (default 0)")
    parser.add_argument("--every", type=positive_int, default=20, help="print every k-th failure (default 20)")
    parser.add_argument("--force", action="store_true",
                        help="run even when the expected work is beyond the budget (docs/cli.md, Budget)")


def _cyclic(n: int, r: int) -> sp.csr_array:
    rows = np.repeat(np.arange(n), r)
    cols = (rows + np.tile(np.arange(r), n)) % n
    return sp.csr_array((np.ones(n * r), (rows, cols)), shape=(n, n))


def _scipy_fresh(graph: sp.csr_array, capacity: np.ndarray) -> int:
    """Size of a maximum b-matching by scipy on the slot-expanded graph (its only way)."""
    coo = graph.tocoo()
    reps = capacity[coo.col]
    start = np.concatenate([[0], np.cumsum(capacity)])
    rows = np.repeat(coo.row, reps)
    offs = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    cols = np.repeat(start[coo.col], reps) + offs
    g = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(graph.shape[0], int(start[-1])))
    if g.shape[1] == 0:
        return 0
    return int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))


def _certified(im: IncrementalMatching, rows: np.ndarray, cols: np.ndarray) -> bool:
    """König: the cover covers every edge and weighs exactly the matching size."""
    m = im.matching
    left, right = m.vertex_cover()
    covers = bool(np.all(left[rows] | right[cols]))
    return covers and int(left.sum()) + int(m.capacity[right].sum()) == m.size


def run(args) -> int:
    n, r, every = args.types, args.redundancy, args.every
    if r > n:
        raise UsageError(f"--redundancy must be <= --types ({n}), got {r}")
    check_matching_demo(n, r, bool(getattr(args, "force", False)))  # before any array is allocated
    rng = np.random.default_rng(args.seed)

    graph = _cyclic(n, r)
    coo = graph.tocoo()
    rows, cols = coo.row, coo.col
    s_depth = 1
    im = IncrementalMatching(graph, capacity=np.full(n, s_depth))
    print(f"SPARe matching demo: N = {n} shard types/groups, r = {r} cyclic holders, S starts at 1")
    print(f"initial maximum matching covers {im.size}/{n} types\n")
    print(f"{'fail':>5} {'group':>6} {'S':>3} {'covered':>8} {'repair us':>10} {'scipy ms':>9} {'König':>6}")

    alive = np.ones(n, dtype=bool)
    repair_s, fresh_s, n_cert = [], [], 0
    wiped_at = None
    for k, g in enumerate(rng.permutation(n).tolist(), start=1):
        t0 = time.perf_counter()
        im.disable_right(g)
        size = im.augment()
        raised = False
        while size < n and s_depth < r:   # RECTLR phase 1: raise S for everyone
            s_depth += 1
            im.set_capacities(s_depth)
            size = im.augment()
            raised = True
        repair_s.append(time.perf_counter() - t0)
        alive[g] = False

        cap = np.where(alive, s_depth, 0).astype(np.int64)
        t0 = time.perf_counter()
        fresh = _scipy_fresh(graph, cap)
        fresh_s.append(time.perf_counter() - t0)
        if fresh != size:
            print(f"error: incremental size {size} != fresh scipy size {fresh}")
            return 1
        ok = _certified(im, rows, cols)
        n_cert += ok
        if not ok:
            print(f"error: König certificate failed after failure {k}")
            return 1
        if size < n:
            wiped_at = k
            print(f"{k:>5} {g:>6} {s_depth:>3} {size:>8} {repair_s[-1] * 1e6:>10.1f} "
                  f"{fresh_s[-1] * 1e3:>9.2f} {'ok':>6}   <- wipe-out: no S <= r covers every type")
            break
        if raised or k % every == 0:
            note = f"   <- S raised to {s_depth}" if raised else ""
            print(f"{k:>5} {g:>6} {s_depth:>3} {size:>8} {repair_s[-1] * 1e6:>10.1f} "
                  f"{fresh_s[-1] * 1e3:>9.2f} {'ok':>6}{note}")

    med_r, med_f = float(np.median(repair_s)), float(np.median(fresh_s))
    mu = math.gamma(1 + 1 / r) * n ** (1 - 1 / r)
    print()
    print(f"failures endured before wipe-out: {(wiped_at or len(repair_s) + 1) - 1} "
          f"(closed form Γ(1+1/r)·N^(1-1/r) ≈ {mu:.0f}, an approximation)")
    print(f"maximum matching proved by König certificates: {n_cert}/{len(repair_s)} steps")
    print(f"median repair {med_r * 1e6:.1f} us vs fresh scipy solve {med_f * 1e3:.2f} ms: "
          f"{med_f / med_r:,.0f}x faster")
    return 0
