"""Benchmarks of spare_core.graph.flow against OR-Tools ``SimpleMinCostFlow`` and networkx.

Two workload families, each built from a seeded generator (``make_reassign``,
``make_generic``) at a target arc count:

* reassign: the network RECTLR's third phase solves after failures [SPARe, arXiv
  2603.00357]: source -> shard type (cap 1) -> (surviving holder group, stack depth),
  cost = displacement into the top S (0 if already there) -> group (cap S) -> sink, at
  the least S that covers every type;
* generic: NETGEN-like (Klingman, Napier & Stutz 1974) random sparse networks: a few
  sources and sinks joined by a high-capacity skeleton so the supplies are feasible,
  plus random arcs with mixed capacities and costs.

Every timed call starts from the caller's numpy arrays and ends with the per-arc flows,
conversion included. Run ``python -m pytest bench/bench_flow.py`` (pytest-benchmark) or
``python bench/ratios_flow.py`` for the peer ratios.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

try:
    from spare_core.graph.flow import check_flow_certificate, max_flow_min_cost, min_cost_flow
except ImportError:  # a build from before spare_core.graph (A/B against an older tree)
    from spare_core.flow import check_flow_certificate, max_flow_min_cost, min_cost_flow


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


# ------------------------------------------------------------------------------ generators
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


# ------------------------------------------------------------------------------ solvers
def solve_ours_result(inst: Instance, method: str = "auto"):
    """Our solver from the caller's arrays, in the instance's formulation (s-t or supplies);
    returns the FlowResult."""
    if inst.source is not None:
        return max_flow_min_cost(*inst.network(), inst.source, inst.sink, method=method)
    return min_cost_flow(*inst.network(), inst.supply, method=method)


def solve_ours(inst: Instance, method: str = "auto"):
    """Our solver from the caller's arrays; returns (flows, cost)."""
    r = solve_ours_result(inst, method)
    return r.flow, r.cost


def certified(inst: Instance, result) -> bool:
    """``check_flow_certificate`` of ``result`` in the instance's formulation."""
    if inst.source is not None:
        return check_flow_certificate(*inst.network(), result, source=inst.source, sink=inst.sink)
    return check_flow_certificate(*inst.network(), result, supply=inst.supply)


def solve_ortools(inst: Instance):
    """OR-Tools SimpleMinCostFlow with its vectorised numpy API; returns (flows, cost)."""
    from ortools.graph.python import min_cost_flow as ortools_mcf

    smcf = ortools_mcf.SimpleMinCostFlow()
    arcs = smcf.add_arcs_with_capacity_and_unit_cost(inst.tail, inst.head, inst.capacity, inst.cost)
    if inst.source is not None:
        # SolveMaxFlowWithMinCost maximises the flow from the supplies to the demands.
        bound = int(inst.capacity[inst.tail == inst.source].sum())
        smcf.set_node_supply(inst.source, bound)
        smcf.set_node_supply(inst.sink, -bound)
        status = smcf.solve_max_flow_with_min_cost()
    else:
        smcf.set_nodes_supplies(np.arange(inst.n), inst.supply)
        status = smcf.solve()
    if status != smcf.OPTIMAL:
        raise RuntimeError(f"OR-Tools status {status}")
    return smcf.flows(arcs), smcf.optimal_cost()


def solve_networkx(inst: Instance):
    """networkx: build a DiGraph from the arrays, then network_simplex / max_flow_min_cost."""
    import networkx as nx

    g = nx.MultiDiGraph() if inst.source is None else nx.DiGraph()
    g.add_nodes_from(range(inst.n))
    extra = inst.n
    for u, v, c, w in zip(inst.tail.tolist(), inst.head.tolist(), inst.capacity.tolist(), inst.cost.tolist()):
        if inst.source is not None and g.has_edge(u, v):
            # max_flow_min_cost needs a DiGraph: a parallel arc goes through a node of its own
            # (same capacity, same cost, so the same optimum)
            g.add_edge(u, extra, capacity=c, weight=w)
            g.add_edge(extra, v, capacity=c, weight=0)
            extra += 1
        else:
            g.add_edge(u, v, capacity=c, weight=w)
    if inst.source is not None:
        flow = nx.max_flow_min_cost(g, inst.source, inst.sink)
        return flow, nx.cost_of_flow(g, flow)
    for v, b in enumerate(inst.supply.tolist()):
        if b:
            g.nodes[v]["demand"] = -b
    cost, flow = nx.network_simplex(g)
    return flow, cost


# ------------------------------------------------------------------------------ pytest-benchmark
try:
    import pytest
except ImportError:  # pragma: no cover - the module is also imported by ratios_flow.py
    pytest = None

if pytest is not None:
    pytest.importorskip("pytest_benchmark")

    _CACHE: dict = {}

    def _instance(family, arcs):
        key = (family, arcs)
        if key not in _CACHE:
            _CACHE[key] = (make_reassign if family == "reassign" else make_generic)(arcs, seed=1)
        return _CACHE[key]

    @pytest.mark.parametrize("arcs", [10**3, 10**4, 10**5])
    @pytest.mark.parametrize("family", ["reassign", "generic"])
    def test_ours(benchmark, family, arcs):
        benchmark.group = f"flow-{family}-{arcs}"
        inst = _instance(family, arcs)
        flow, cost = benchmark(solve_ours, inst)
        if _has("ortools"):
            assert cost == solve_ortools(inst)[1]

    @pytest.mark.parametrize("method", ["network_simplex", "cost_scaling", "ssp"])
    @pytest.mark.parametrize("arcs", [10**3, 10**4, 10**5])
    @pytest.mark.parametrize("family", ["reassign", "generic"])
    def test_ours_by_method(benchmark, family, arcs, method):
        # SSP on the 1e5-arc generic instance takes seconds per round (one phase per
        # distinct distance): that is the measurement behind method="auto", not a bench.
        if (family, arcs, method) == ("generic", 10**5, "ssp"):
            pytest.skip("seconds per round; see ratios_flow.py --methods")
        benchmark.group = f"flow-{family}-{arcs}-methods"
        benchmark(solve_ours, _instance(family, arcs), method)

    @pytest.mark.parametrize("arcs", [10**3, 10**4, 10**5])
    @pytest.mark.parametrize("family", ["reassign", "generic"])
    def test_ortools(benchmark, family, arcs):
        pytest.importorskip("ortools")
        benchmark.group = f"flow-{family}-{arcs}"
        benchmark(solve_ortools, _instance(family, arcs))

    @pytest.mark.parametrize("arcs", [10**3, 10**4])
    @pytest.mark.parametrize("family", ["reassign", "generic"])
    def test_networkx(benchmark, family, arcs):
        pytest.importorskip("networkx")
        benchmark.group = f"flow-{family}-{arcs}"
        benchmark.pedantic(solve_networkx, args=(_instance(family, arcs),), rounds=1, iterations=1)


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True
