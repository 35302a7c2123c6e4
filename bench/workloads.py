"""Every workload of the benchmarks, defined once: the inputs each table and suite times.

The ratio tables (``python -m bench.ratios``), the pytest-benchmark suites (``bench_*.py``),
the A/B scripts (``ab_*.py``) and the tests that reuse a benchmark instance all build their
inputs here, from seeded generators; what runs on them (ours and the peers) is in
``bench/peers.py``. The matching graph-family catalogue (``FAMILIES``, ``make``, ``sizes``) is
``bench/families.py``.

Sections: matching (SPARe-shaped graphs, families a-e of ``python -m bench.ratios matching``),
flow (RECTLR's reassignment network, NETGEN-like, the user-written reassignment network,
wide NETGEN, grids; ``FLOW_FAMILIES``), event engine, RECTLR failure orders, pacing,
simulator runs, sweep specs and trace replay.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from spare_core.distributions import Deterministic, LogNormal, Weibull
from spare_core.graph.flow import max_flow_min_cost
from spare_core.graph.matching import IncrementalMatching

# ============================================================================ matching
SEED = 20260          # families a-e of the matching table and the matching pytest suite


def redundancy_graph(n: int, r: int, rng, removed: float = 0.05):
    """(a): type i joined to r distinct random groups; returns graph, capacity (S = 2, removed = 0)."""
    cols = np.argsort(rng.random((n, n)), axis=1)[:, :r] if n <= 2000 else distinct_random(n, r, rng)
    rows = np.repeat(np.arange(n), r)
    g = sp.csr_array((np.ones(n * r), (rows, cols.ravel())), shape=(n, n))
    cap = np.full(n, 2, dtype=np.int64)
    cap[rng.random(n) < removed] = 0
    return g, cap


def distinct_random(n, r, rng):
    """n rows of r distinct random columns in [0, n) (rows with a repeat redrawn, up to 50 times)."""
    cols = rng.integers(0, n, (n, r))
    for _ in range(50):  # redraw rows with a repeated group (rare for r << n)
        s = np.sort(cols, axis=1)
        bad = np.flatnonzero(np.any(s[:, 1:] == s[:, :-1], axis=1))
        if bad.size == 0:
            break
        cols[bad] = rng.integers(0, n, (bad.size, r))
    return cols


def hard_graph(n: int, rng, r: int = 2, removed: float = 0.1):
    """(b): n left, n right, r random right vertices each, a fraction of right vertices removed."""
    rows = np.repeat(np.arange(n), r)
    cols = rng.integers(0, n, n * r)
    keep = (rng.random(n) >= removed)[cols]
    return sp.csr_array((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(n, n))


def uniform_graph(nnz: int, rng):
    """(c): nnz uniform random entries in a 0.6 nnz x 0.6 nnz biadjacency (duplicates kept)."""
    n = max(int(0.6 * nnz), 1)
    return sp.csr_array((np.ones(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))


def cyclic_graph(n: int, r: int):
    """SPARe stacks: type i is held by groups i, i+1, ..., i+r-1 (mod n)."""
    rows = np.repeat(np.arange(n), r)
    cols = (rows + np.tile(np.arange(r), n)) % n
    return sp.csr_array((np.ones(n * r), (rows, cols)), shape=(n, n))


def tight_case(n: int, r: int, s: int, rng):
    """(e): fail random groups while capacity s still covers every type; return the last such state."""
    g = cyclic_graph(n, r)
    im = IncrementalMatching(g, capacity=np.full(n, s))
    order = rng.permutation(n)
    failed = []
    for j in order:
        im.disable_right(int(j))
        if im.augment() < n:
            break
        failed.append(int(j))
    cap = np.full(n, s, dtype=np.int64)
    cap[failed] = 0
    return g, cap, len(failed)


def expand_slots(g, cap):
    """The slot-expanded graph scipy needs for a b-matching: right j becomes cap[j] columns."""
    coo = g.tocoo()
    start = np.concatenate([[0], np.cumsum(cap)])
    reps = cap[coo.col]
    rows = np.repeat(coo.row, reps)
    offs = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    cols = np.repeat(start[coo.col], reps) + offs
    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(g.shape[0], int(start[-1])))


# ============================================================================ flow
# Every timed call starts from the caller's numpy arrays and ends with the per-arc flows.
# reassign: the network RECTLR's third phase solves after failures [SPARe, arXiv 2603.00357]:
# source -> shard type (cap 1) -> (surviving holder group, stack depth), cost = displacement
# into the top S (0 if already there) -> group (cap S) -> sink, at the least S that covers
# every type. generic: NETGEN-like (Klingman, Napier & Stutz 1974) random sparse networks: a
# few sources and sinks joined by a high-capacity skeleton so the supplies are feasible, plus
# random arcs with mixed capacities and costs.


@dataclass
class Instance:
    """A benchmark network; ``source``/``sink`` set for max-flow instances, else ``supply``."""

    n: int
    tail: np.ndarray
    head: np.ndarray
    capacity: np.ndarray
    cost: np.ndarray
    supply: np.ndarray | None = None
    source: int | None = None
    sink: int | None = None

    @property
    def arcs(self) -> int:
        return int(self.tail.shape[0])

    def network(self):
        return self.n, self.tail, self.head, self.capacity, self.cost


def _reassign_network(alive, n_groups, r, s):
    """Arrays of the reassignment network for the alive groups at top-S size ``s``."""
    holders = np.flatnonzero(alive)
    h = holders.size
    depth = np.tile(np.arange(r), h)
    group = np.repeat(holders, r)
    shard = (group + depth) % n_groups
    src, snk = 0, 1
    type_node = 2 + np.arange(n_groups)
    slot_node = 2 + n_groups + np.arange(h * r)
    group_node = 2 + n_groups + h * r + np.arange(h)
    group_index = np.repeat(np.arange(h), r)
    n = 2 + n_groups + h * r + h
    tail = np.concatenate([np.full(n_groups, src), type_node[shard], slot_node, group_node])
    head = np.concatenate([type_node, slot_node, group_node[group_index], np.full(h, snk)])
    cap = np.concatenate([np.ones(n_groups + 2 * h * r, np.int64), np.full(h, s)])
    cost = np.concatenate([
        np.zeros(n_groups, np.int64), np.maximum(depth - s + 1, 0), np.zeros(h * r + h, np.int64)
    ])
    return Instance(n, tail.astype(np.int64), head.astype(np.int64), cap, cost, source=src, sink=snk)


def make_reassign(arcs: int, seed: int = 0, r: int = 16, failed_fraction: float = 0.3) -> Instance:
    """RECTLR phase-2 network with about ``arcs`` arcs (N groups, ``r`` cyclic stacks).

    A ``failed_fraction`` of the N groups has failed (uniformly at random); S is the
    least top-stack size >= ceil(N / (N - k)) at which every type can be covered (found
    with our own solver, which the tests check against networkx)."""
    per_group = 1 + (1 - failed_fraction) * (2 * r + 1)
    n_groups = max(r + 1, int(round(arcs / per_group)))
    rng = np.random.default_rng(seed)
    k = int(failed_fraction * n_groups)
    alive = np.ones(n_groups, bool)
    alive[rng.choice(n_groups, k, replace=False)] = False
    s = math.ceil(n_groups / (n_groups - k))
    while s < r:
        inst = _reassign_network(alive, n_groups, r, s)
        if max_flow_min_cost(inst.n, inst.tail, inst.head, inst.capacity, inst.cost, 0, 1).value == n_groups:
            return inst
        s += 1
    return _reassign_network(alive, n_groups, r, r)


def make_generic(arcs: int, seed: int = 0, degree: int = 8, max_cost: int = 10_000,
                 terminals: float = 0.01) -> Instance:
    """NETGEN-like network: n = arcs / degree nodes, a ``terminals`` fraction (1 %) of
    sources and as many sinks.

    Supplies (about 20 units per node in total) are spread over the sources; a skeleton
    of high-capacity chains through random transshipment nodes links every source to a
    random sink so the instance is feasible; the remaining arcs are random with costs in
    [1, max_cost], 30 % of them with capacities in [1, 100], the rest uncapacitated
    (capacity = total supply)."""
    rng = np.random.default_rng(seed)
    n = max(20, arcs // degree)
    n_src = max(1, int(n * terminals))
    n_snk = max(1, int(n * terminals))
    nodes = rng.permutation(n)
    sources, sinks, middle = nodes[:n_src], nodes[n_src:n_src + n_snk], nodes[n_src + n_snk:]
    total = 20 * n
    supply = np.zeros(n, np.int64)
    np.add.at(supply, sources, rng.multinomial(total - n_src, np.full(n_src, 1 / n_src)) + 1)
    np.add.at(supply, sinks, -(rng.multinomial(total - n_snk, np.full(n_snk, 1 / n_snk)) + 1))
    # Skeleton: every source and every sink on a chain of 8 random middle nodes, with a
    # cross link from every chain to the next, capacity = total supply (feasible by design).
    chain_len = 8
    chains = max(n_src, n_snk)
    ends_s = np.resize(sources, chains)
    ends_t = np.resize(sinks, chains)
    mids = rng.choice(middle, (chains, chain_len))
    path = np.column_stack([ends_s, mids, ends_t])
    sk_tail = np.concatenate([path[:, :-1].ravel(), path[:, -2]])
    sk_head = np.concatenate([path[:, 1:].ravel(), np.roll(path[:, -1], 1)])
    n_rand = max(0, arcs - sk_tail.size)
    r_tail = rng.integers(0, n, n_rand)
    r_head = rng.integers(0, n, n_rand)
    r_cap = np.where(rng.random(n_rand) < 0.3, rng.integers(1, 101, n_rand), total)
    tail = np.concatenate([sk_tail, r_tail]).astype(np.int64)
    head = np.concatenate([sk_head, r_head]).astype(np.int64)
    cap = np.concatenate([np.full(sk_tail.size, total), r_cap]).astype(np.int64)
    cost = rng.integers(1, max_cost + 1, tail.size).astype(np.int64)
    return Instance(n, tail, head, cap, cost, supply=supply)


# -- flow: the reassignment network the way a user writes it (issue 15) ---------------------------

def user_reassign(arcs: int, seed: int = 0, max_transfer: int = 3, slots: int = 4,
                  candidates: int = 4, formulation: str = "st"):
    """Shard reassignment as another simulator writes it, about ``arcs`` arcs.

    Nodes: source 0, sink 1, one node per missing shard, one per stack slot. Arcs: source ->
    shard (capacity 1); shard -> every slot of ``candidates`` random groups (``slots`` slots
    each; capacity 1, cost 4 * |slot position - the shard's old position| + a random transfer
    cost in [0, max_transfer]); shard -> sink ("leave unplaced", capacity 1, cost 1000); slot
    -> sink (capacity 1, cost 0). Groups: half as many as shards, so most shards find a slot.

    Returns an Instance: ``formulation="st"`` for max_flow_min_cost (source, sink),
    ``"supply"`` for min_cost_flow (the source supplies every shard's unit, the sink takes it:
    always feasible through the penalty arcs).
    """
    rng = np.random.default_rng([seed, arcs, max_transfer])
    per_shard = 2 + candidates * slots + slots // 2
    n_shards = max(arcs // per_shard, 2)
    n_groups = max(n_shards // 2, candidates)
    shard = 2 + np.arange(n_shards)
    slot0 = 2 + n_shards
    n = slot0 + n_groups * slots
    grp = np.argsort(rng.random((n_shards, n_groups)), axis=1)[:, :candidates] if n_groups <= 64 else \
        rng.integers(0, n_groups, (n_shards, candidates))
    pos = np.tile(np.arange(slots), candidates)
    t_sl = np.repeat(shard, candidates * slots)
    h_sl = slot0 + (np.repeat(grp, slots, axis=1) * slots + pos).ravel()
    old = rng.integers(0, slots, n_shards)
    c_sl = 4 * np.abs(np.tile(pos, n_shards) - np.repeat(old, candidates * slots)) \
        + rng.integers(0, max_transfer + 1, t_sl.size)
    slots_all = slot0 + np.arange(n_groups * slots)
    tail = np.concatenate([np.zeros(n_shards, np.int64), t_sl, shard, slots_all])
    head = np.concatenate([shard, h_sl, np.ones(n_shards, np.int64), np.ones(slots_all.size, np.int64)])
    cap = np.ones(tail.size, np.int64)
    cost = np.concatenate([np.zeros(n_shards, np.int64), c_sl, np.full(n_shards, 1000, np.int64),
                           np.zeros(slots_all.size, np.int64)]).astype(np.int64)
    if formulation == "st":
        return Instance(n, tail.astype(np.int64), head.astype(np.int64), cap, cost, source=0, sink=1)
    supply = np.zeros(n, np.int64)
    supply[0], supply[1] = n_shards, -n_shards
    return Instance(n, tail.astype(np.int64), head.astype(np.int64), cap, cost, supply=supply)


# -- flow: generic networks of other shapes than make_generic -------------------------
# Measured, not tuned on: the network simplex's defaults were chosen on make_generic only.

def netgen_wide(arcs: int, seed: int = 0):
    """NETGEN-like with other parameters than ``make_generic``: 5 % sources and
    5 % sinks, average out-degree 16, costs in [1, 100] (same skeleton construction, so
    feasible by design)."""
    return make_generic(arcs, seed=seed, degree=16, max_cost=100, terminals=0.05)


def grid(arcs: int, seed: int = 0):
    """GRIDGEN/GOTO-like: a square grid with arcs both ways between neighbours
    (uncapacitated, cost in [1, 1000]) plus a quarter of the arcs as random shortcuts
    (capacity in [1, 100], cost in [1, 1000]); 2 % of the nodes are sources and 2 % sinks,
    about 10 units of supply per node in total. The uncapacitated grid keeps every
    instance feasible; paths are long (about the grid's side), unlike NETGEN's."""
    rng = np.random.default_rng([seed, arcs, 17])
    side = max(3, int(round(np.sqrt(0.75 * arcs / 4))))
    n = side * side
    idx = np.arange(n).reshape(side, side)
    right = (idx[:, :-1].ravel(), idx[:, 1:].ravel())
    down = (idx[:-1, :].ravel(), idx[1:, :].ravel())
    g_tail = np.concatenate([right[0], right[1], down[0], down[1]])
    g_head = np.concatenate([right[1], right[0], down[1], down[0]])
    n_extra = max(0, arcs - g_tail.size)
    e_tail = rng.integers(0, n, n_extra)
    e_head = rng.integers(0, n, n_extra)
    total = 10 * n
    tail = np.concatenate([g_tail, e_tail]).astype(np.int64)
    head = np.concatenate([g_head, e_head]).astype(np.int64)
    cap = np.concatenate([np.full(g_tail.size, total), rng.integers(1, 101, n_extra)]).astype(np.int64)
    cost = rng.integers(1, 1001, tail.size).astype(np.int64)
    k = max(1, n // 50)
    nodes = rng.permutation(n)
    supply = np.zeros(n, np.int64)
    supply[nodes[:k]] = rng.multinomial(total - k, np.full(k, 1 / k)) + 1
    supply[nodes[k:2 * k]] = -(rng.multinomial(total - k, np.full(k, 1 / k)) + 1)
    return Instance(n, tail, head, cap, cost, supply=supply)


def _user(formulation, max_transfer):
    return lambda arcs, seed: user_reassign(arcs, seed=seed, max_transfer=max_transfer, formulation=formulation)


# The flow table's families: name -> (make(arcs, seed), largest size networkx is run at:
# minutes per call beyond).
FLOW_FAMILIES = {
    "reassign": (make_reassign, 10**5),
    **{f"user-{f}-{c}": (_user("st" if f == "st" else "supply", c), 10**4)
       for f in ("st", "sup") for c in (15, 200, 10_000)},
    "generic": (make_generic, 10**4),
    # generic shapes the simplex's defaults were not chosen on
    "netgen-wide": (netgen_wide, 10**4),
    "grid": (grid, 10**4),
}


# ============================================================================ event engine
# ``n`` units, each alternating Weibull(shape 0.78) lifetimes and repairs (fixed, or
# log-normal), from time 0 to a horizon.
SHAPE = 0.78
MEAN_LIFE = 1000.0
LIFE = Weibull.from_mean(MEAN_LIFE, SHAPE)
FIXED = Deterministic(10.0)
LOGN = LogNormal(10.0, 1.0)
# whole simulations of the pytest-benchmark suite (5 cycles)
EVENTS_CASES = [(60_000, Deterministic(10.0)), (60_000, LogNormal(10.0, 1.0)), (600_000, Deterministic(10.0))]
EVENTS_IDS = ["60k-fixed", "60k-lognormal", "600k-fixed"]


# ============================================================================ RECTLR
RECTLR_SEED = 4004        # the ratio table's failure orders
RECTLR_BENCH_SEED = 4005  # the pytest-benchmark suite's (and the A/B script's) order


def failure_orders(n, k, seed):
    """k random orders of the n groups (one generator, drawn in turn)."""
    rng = np.random.default_rng(seed)
    return [rng.permutation(n) for _ in range(k)]


def failure_order(n, seed=RECTLR_BENCH_SEED):
    """One random order of the n groups: ``failure_orders(n, 1, seed)[0]``."""
    return failure_orders(n, 1, seed)[0]


# ============================================================================ pacing
# 64 nodes x 10,000 iterations and 100k ranks (12,500 nodes) x 1,000 iterations (issue 6).
PACING = {"64 nodes x 10,000 it": (64, 10_000), "100k ranks x 1,000 it": (12_500, 1_000)}
PACING_QUICK = {"64 nodes x 1,000 it": (64, 1_000), "100k ranks x 20 it": (12_500, 20)}
# the A/B script's quick sizes (each cell a fresh subprocess per tree)
PACING_AB_QUICK = {"64 nodes x 2,000 it": (64, 2_000), "100k ranks x 100 it": (12_500, 100)}


def top_of_rack():
    """The pacing fabric with every rail on one plane of links (the kernel's shared-plane pass)."""
    from spare_core.pacing import FabricModel, TopOfRackFabric

    return FabricModel(topology=TopOfRackFabric())


# ============================================================================ simulator
def sim_runs(quick: bool):
    """(name, scenario, policy): one run of each policy on the paper preset."""
    from spare_core.sim import CheckpointOnly, ReplicationCheckpoint, Scenario, SpareCheckpoint

    steps = 1000 if quick else 10_000
    s = Scenario.paper_600k(600, n_steps=steps, max_wall_factor=5.0)
    return [
        ("CKPT-only N=600 (to 5 T0)", s, CheckpointOnly()),
        ("Rep+CKPT r=3 N=600", s, ReplicationCheckpoint(3)),
        ("SPARe+CKPT r=6 N=600", s, SpareCheckpoint(6)),
    ]


# the ``spare compare`` sweep: (groups N, seeds, r = 1..rmax), 600k GPUs
COMPARE_SWEEP = ([200, 600, 1000], 5, 20)
COMPARE_SWEEP_QUICK = ([200, 600], 2, 10)

TURNOVER_EPOCHS = 1000


def epoch_turnover(how):
    """A function running ``TURNOVER_EPOCHS`` epochs of one failure each on the paper's N=600
    failure stream: through the epoch cache asking for times only (checkpoint-only runs),
    through the cache with units, or on a live stream (``restart`` + ``next_failure``, as the
    step-by-step reference does)."""
    from spare_core.sim import Scenario

    s = Scenario.paper_600k(600)

    def cache(times_only):
        src = s.epoch_failures(0)
        for k in range(TURNOVER_EPOCHS):
            src.times(k, 1, 1) if times_only else src.get(k, 1, 1)

    def live():
        st = s.failure_stream(0)
        for _ in range(TURNOVER_EPOCHS):
            t, _u = st.next_failure()
            st.restart(t)

    return {"cache-times-only": lambda: cache(True), "cache-with-units": lambda: cache(False), "live-stream": live}[how]


# ============================================================================ sweeps
def cpu_spec(seeds=8):
    """CPU-bound runs: paper preset, 2,000 steps, ~20 ms a run."""
    from spare_core.sim import Scenario
    from spare_core.sweeps import SweepSpec

    sc = [Scenario.paper_600k(n, n_steps=2000, name=f"N{n}") for n in (100, 200)]
    return SweepSpec(sc, ("ckpt", "rep", "spare"), [2, 4, 6], seeds=seeds, name="cpu-bound")


def cheap_spec(seeds=40):
    """Cheap runs: 50 steps, ~1-2 ms a run."""
    from spare_core.sim import Scenario
    from spare_core.sweeps import SweepSpec

    sc = [Scenario.paper_600k(n, n_steps=50, system_mtbf=m, name=f"N{n}-M{m:g}") for n in (16, 32, 64)
          for m in (300.0, 1200.0)]
    return SweepSpec(sc, ("ckpt", "rep", "spare"), [2, 3, 4, 5], seeds=seeds, name="cheap")


def sweep_1e5_spec(seeds):
    """The 10^5-run sweep: 24 scenarios x 9 runs x 463 seeds = 100,008 runs at the default."""
    from spare_core.sim import Scenario
    from spare_core.sweeps import SweepSpec

    sc = [Scenario.paper_600k(n, n_steps=50, system_mtbf=m, name=f"N{n}-M{m:g}")
          for n in (16, 24, 32, 40, 48, 64) for m in (300.0, 600.0, 1200.0, 2400.0)]
    return SweepSpec(sc, ("ckpt", "rep", "spare"), [2, 3, 4, 5], seeds=seeds, name="1e5")


# ============================================================================ trace replay
# 1,000,000 failure rows of 2,048 nodes (a 16,384-GPU job, 8 GPUs per node), exponential
# gaps, one row in 20 a 4-node switch event (the rows share a time).
N_ROWS = 1_000_000
N_NODES = 2048
NODES_PER_GROUP = 8
N_GROUPS = N_NODES // NODES_PER_GROUP


def make_log(n_rows=N_ROWS, seed=0):
    """The failure log: ``n_rows`` rows of ``N_NODES`` nodes (a ``Trace``)."""
    from spare_core.events.trace import Trace

    rng = np.random.default_rng(seed)
    n_events = n_rows // 1  # rows; switch events add 3 extra rows each
    gaps = rng.exponential(600.0, n_events)
    t = np.cumsum(gaps)
    u = rng.integers(0, N_NODES, n_events)
    switch = np.flatnonzero(rng.random(n_events) < 0.05)
    # a switch event downs 4 consecutive nodes at one instant: overwrite the next 3 rows
    for j in range(1, 4):
        k = switch[switch + j < n_events] + j
        t[k] = t[k - j]
        u[k] = (u[k - j] // 4) * 4 + j
    t = np.maximum.accumulate(t)
    return Trace(t, u, n_units=N_NODES, end=float(t[-1]))


def drive(proc, epoch_failures, chunk=32):
    """The simulator's pattern: take failures until `epoch_failures`, restart at the last."""
    handed = 0
    while True:
        got = 0
        while got < epoch_failures:
            ts, gs = proc.take(min(chunk, epoch_failures - got))
            if not ts:
                return handed
            got += len(ts)
        handed += got
        proc.restart(proc.now)


def drive_source(src, epoch_failures, hint=16, max_batch=1024):
    """The simulator's calls on an epoch source (sim/run.py's batch loop, the kernel replaced
    by "restart at failure `epoch_failures`, at its time")."""
    epoch, start, pos, batch, seen = 0, 0.0, 0, hint, 0
    while True:
        rel, _ = src.get(epoch, pos + 1, pos + batch, start=start)
        n = min(pos + batch, rel.shape[0]) - pos
        if n <= 0:
            return seen
        restart_at = epoch_failures - pos  # 1-based index in this batch of the restarting failure
        if restart_at > n:
            src.next_time(epoch, pos + n, start=start)
            pos += n
            seen += n
            batch = min(2 * batch, max_batch)
            continue
        pos += restart_at
        seen += restart_at
        src.epoch_consumed(epoch, pos)
        epoch, start, pos, batch = epoch + 1, start + float(rel[pos - 1]), 0, hint
