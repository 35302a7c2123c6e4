"""spare_core.graph.flow: certificates on every result, differential tests against networkx and
OR-Tools, RECTLR-shaped reassignment networks, bad input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from spare_core._native import load
from spare_core.graph.flow import FlowResult, check_flow_certificate, max_flow_min_cost, min_cost_flow

nx = pytest.importorskip("networkx")


# ------------------------------------------------------------------------------ helpers
@st.composite
def networks(draw, max_nodes=8, max_arcs=24, max_cap=6, cost_range=(-6, 12)):
    """Small networks with parallel arcs, self-loops, zero capacities, isolated nodes."""
    n = draw(st.integers(1, max_nodes))
    m = draw(st.integers(0, max_arcs))
    node = st.integers(0, n - 1)
    tail = draw(st.lists(node, min_size=m, max_size=m))
    head = draw(st.lists(node, min_size=m, max_size=m))
    cap = draw(st.lists(st.integers(0, max_cap), min_size=m, max_size=m))
    cost = draw(st.lists(st.integers(*cost_range), min_size=m, max_size=m))
    return n, np.array(tail, np.int64), np.array(head, np.int64), np.array(cap, np.int64), np.array(cost, np.int64)


@st.composite
def supplies(draw, n, max_abs=6):
    """Balanced supplies: random values with the last node (or a random one) absorbing the sum."""
    raw = draw(st.lists(st.integers(-max_abs, max_abs), min_size=n, max_size=n))
    sup = np.array(raw, np.int64)
    sup[draw(st.integers(0, n - 1))] -= sup.sum()
    return sup


def certified(net, result, **kw):
    check = check_flow_certificate(*net, result, **kw)
    assert check.ok, check.violations
    return check


def loop_cost(tail, head, cap, cost):
    """Cost that self-loops add under the documented rule (saturated iff cost < 0)."""
    loops = tail == head
    return int(np.sum(np.minimum(cost[loops], 0) * cap[loops]))


def nx_multigraph(n, tail, head, cap, cost, supply=None):
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    for a, (u, v) in enumerate(zip(tail.tolist(), head.tolist())):
        if u != v:
            g.add_edge(u, v, key=a, capacity=int(cap[a]), weight=int(cost[a]))
    if supply is not None:
        for v in range(n):
            g.nodes[v]["demand"] = -int(supply[v])
    return g


def nx_split_digraph(n, tail, head, cap, cost):
    """A simple DiGraph equivalent to the multigraph: arc a becomes u -> ('a', a) -> v."""
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for a, (u, v) in enumerate(zip(tail.tolist(), head.tolist())):
        if u != v:
            g.add_edge(u, ("a", a), capacity=int(cap[a]), weight=int(cost[a]))
            g.add_edge(("a", a), v, capacity=int(cap[a]), weight=0)
    return g


# ------------------------------------------------------------------------------ examples
def test_small_example_by_hand():
    # 0 -> 1 -> 2 costs 2, the direct arc costs 4: two units go round, one direct.
    net = (3, [0, 1, 0], [1, 2, 2], [2, 2, 5], [1, 1, 4])
    r = min_cost_flow(*net, [3, 0, -3])
    assert r.flow.tolist() == [2, 2, 1]
    assert r.cost == 2 * 2 + 4 and r.value == 3 and r.status == "optimal"
    certified(net, r, supply=[3, 0, -3])
    assert "optimal" in repr(r) and "cost=8" in repr(r)


def test_negative_cycle_is_saturated():
    # Cycle 0 -> 1 -> 2 -> 0 of cost -3 with capacity 2; nothing to route.
    net = (3, [0, 1, 2], [1, 2, 0], [2, 2, 2], [-1, -1, -1])
    r = min_cost_flow(*net, [0, 0, 0])
    assert r.flow.tolist() == [2, 2, 2] and r.cost == -6
    certified(net, r, supply=[0, 0, 0])


def test_negative_arc_left_unsaturated_when_cheaper():
    # Arc 0 -> 1 costs -1 but sending it on forces 1 -> 2 at cost 5 (1 has no other exit).
    net = (3, [0, 1], [1, 2], [1, 1], [-1, 5])
    r = min_cost_flow(*net, [0, 0, 0])
    assert r.flow.tolist() == [0, 0] and r.cost == 0
    certified(net, r, supply=[0, 0, 0])
    r = min_cost_flow(3, [0, 1, 2], [1, 2, 0], [1, 1, 1], [-1, 5, -10], [0, 0, 0])
    assert r.flow.tolist() == [1, 1, 1] and r.cost == -6


def test_self_loops_follow_the_documented_rule():
    net = (2, [0, 0, 1, 0], [0, 0, 1, 1], [3, 4, 5, 1], [-2, 1, 0, 1])
    r = min_cost_flow(*net, [1, -1])
    assert r.flow.tolist() == [3, 0, 0, 1] and r.cost == -6 + 1
    certified(net, r, supply=[1, -1])


def test_infeasible_reports_shortfall_and_routes_the_most():
    # Node 0 can send only 2 of its 5 units; node 3 is isolated with demand 1.
    net = (4, [0, 1], [1, 2], [2, 9], [1, 1])
    supply = [5, 0, -3, -2]
    r = min_cost_flow(*net, supply)
    assert r.status == "infeasible" and not r.optimal
    assert r.value == 2 and r.shortfall == 3 and r.flow.tolist() == [2, 2]
    certified(net, r, supply=supply)
    assert "shortfall=3" in repr(r)


def test_empty_and_isolated():
    r = min_cost_flow(0, [], [], [], [], [])
    assert r.flow.shape == (0,) and r.cost == 0 and r.optimal
    r = min_cost_flow(5, [], [], [], [], [0] * 5)
    assert r.optimal and r.potential.shape == (5,)
    r = max_flow_min_cost(3, [], [], [], [], 0, 2)
    assert r.value == 0 and r.cost == 0


def test_max_flow_min_cost_prefers_cheap_paths_and_is_maximal():
    # Two parallel routes of capacity 1 plus a costly extra route: all three are needed.
    net = (4, [0, 0, 1, 2, 0], [1, 2, 3, 3, 3], [1, 1, 1, 1, 1], [1, 5, 1, 0, 9])
    r = max_flow_min_cost(*net, 0, 3)
    assert r.value == 3 and r.cost == 2 + 5 + 9
    certified(net, r, source=0, sink=3)


def test_max_flow_with_negative_interior_arcs_keeps_source_flow():
    # Saturating the negative arc 1 -> 2 creates an imbalance that must not absorb the
    # source's flow: the maximum flow is 1 and goes 0 -> 1 -> 3, the dead end 2 stays empty.
    net = (4, [0, 1, 1], [1, 2, 3], [1, 1, 1], [0, -4, 0])
    r = max_flow_min_cost(*net, 0, 3)
    assert r.value == 1 and r.flow.tolist() == [1, 0, 1]
    certified(net, r, source=0, sink=3)


def test_inputs_are_not_modified_and_any_int_dtype_works():
    tail = np.array([0, 1, 0], np.int32)
    head = np.array([1, 2, 2], np.uint16)
    cap = np.array([2, 2, 5], np.int64)
    cost = np.array([1, 1, 4], np.int8)
    supply = np.array([3, 0, -3], np.int16)
    copies = [a.copy() for a in (tail, head, cap, cost, supply)]
    r = min_cost_flow(3, tail, head, cap, cost, supply)
    assert r.cost == 8
    for a, b in zip((tail, head, cap, cost, supply), copies):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert r.flow.dtype == np.int64 and r.potential.dtype == np.int64
    # int64 arrays are read in place (no copy), and still never written.
    arrays = [np.array(a, np.int64) for a in ([0, 1, 0], [1, 2, 2], [2, 2, 5], [-1, 1, 4])]
    before = [a.copy() for a in arrays]
    for method in METHODS:
        r = max_flow_min_cost(3, *arrays, 0, 2, method=method)
        assert r.value == 7 and not np.shares_memory(r.flow, arrays[2])
        for a, b in zip(arrays, before):
            assert np.array_equal(a, b)


def test_certificate_checker_catches_broken_results():
    net = (3, [0, 1, 0], [1, 2, 2], [2, 2, 5], [1, 1, 4])
    good = min_cost_flow(*net, [3, 0, -3])
    fields = dict(flow=good.flow, cost=good.cost, value=good.value, potential=good.potential,
                  status=good.status, shortfall=0)
    over = FlowResult(**{**fields, "flow": np.array([3, 3, 0]), "cost": 6})
    assert any("capacity" in v for v in check_flow_certificate(*net, over, supply=[3, 0, -3]).violations)
    # Feasible but not optimal: all three units on the direct arc.
    direct = FlowResult(**{**fields, "flow": np.array([0, 0, 3]), "cost": 12})
    check = check_flow_certificate(*net, direct, supply=[3, 0, -3])
    assert not check.ok and any("optimality" in v for v in check.violations)
    lie = FlowResult(**{**fields, "cost": good.cost - 1})
    assert any("cost" in v for v in check_flow_certificate(*net, lie, supply=[3, 0, -3]).violations)
    unbalanced = FlowResult(**{**fields, "flow": np.array([2, 1, 1]), "cost": 7})
    assert any("conservation" in v for v in check_flow_certificate(*net, unbalanced, supply=[3, 0, -3]).violations)
    # A max flow that stops early is caught by the residual path check.
    mnet = (3, [0, 1], [1, 2], [1, 1], [0, 0])
    short = FlowResult(flow=np.array([0, 0]), cost=0, value=0, potential=np.zeros(3, np.int64), status="optimal")
    assert any("maximality" in v for v in check_flow_certificate(*mnet, short, source=0, sink=2).violations)
    assert "ok=False" in repr(check)


# ------------------------------------------------------------------------------ differential
METHODS = ["ssp", "cost_scaling", "network_simplex"]


@pytest.mark.parametrize("method", METHODS)
@given(data=st.data(), net=networks())
def test_min_cost_flow_matches_network_simplex(method, data, net):
    n, tail, head, cap, cost = net
    supply = data.draw(supplies(n))
    r = min_cost_flow(n, tail, head, cap, cost, supply, method=method)
    certified(net, r, supply=supply)
    try:
        nx_cost, _ = nx.network_simplex(nx_multigraph(n, tail, head, cap, cost, supply))
    except nx.NetworkXUnfeasible:
        assert r.status == "infeasible" and r.shortfall > 0
        return
    assert r.status == "optimal"
    assert r.cost == nx_cost + loop_cost(tail, head, cap, cost)


@pytest.mark.parametrize("max_path", [1, 2, 8])
@given(data=st.data(), net=networks())
def test_cost_scaling_path_length_changes_the_work_not_the_optimum(max_path, data, net):
    # The kernel's partial augment-relabel with paths of 1 (plain push-relabel), 2 and 8
    # slots, with global updates after every relabel or almost never: same optimal cost
    # as SSP on every feasible supply, exact potentials that certify the flow.
    n, tail, head, cap, cost = net
    supply = data.draw(supplies(n))
    ssp = min_cost_flow(n, tail, head, cap, cost, supply, method="ssp")
    assume(ssp.status == "optimal")
    kernel = load("_mcf")
    sol = kernel.solve(n, tail, head, cap, cost, np.asarray(supply, np.int64),
                       method=kernel.CONSTANTS["M_COST_SCALING"], max_path=max_path,
                       update_every=data.draw(st.sampled_from([0, 1, 10**9])))
    r = FlowResult(flow=sol.flow, cost=int(sol.flow @ cost), value=ssp.value, potential=sol.potential,
                   status="optimal")
    certified(net, r, supply=supply)
    assert r.cost == ssp.cost


@pytest.mark.parametrize("method", METHODS)
@given(data=st.data(), net=networks())
def test_max_flow_min_cost_matches_networkx(method, data, net):
    n, tail, head, cap, cost = net
    assume(n >= 2)
    s = data.draw(st.integers(0, n - 1))
    t = data.draw(st.integers(0, n - 1).filter(lambda v: v != s))
    r = max_flow_min_cost(n, tail, head, cap, cost, s, t, method=method)
    certified(net, r, source=s, sink=t)
    g = nx_split_digraph(n, tail, head, cap, cost)
    value = nx.maximum_flow_value(g, s, t)
    assert r.value == value
    if value == 0 and not (cost < 0).any():
        assert r.cost == 0
    # networkx routes only the s-t flow; our flow may also saturate negative cycles, so
    # compare with the circulation-aware oracle: fixed value, all arcs free.
    g2 = nx_multigraph(n, tail, head, cap, cost, np.zeros(n, np.int64))
    g2.nodes[s]["demand"] = -value
    g2.nodes[t]["demand"] = value
    nx_cost, _ = nx.network_simplex(g2)
    assert r.cost == nx_cost + loop_cost(tail, head, cap, cost)
    if not (cost < 0).any():
        assert r.cost == nx.cost_of_flow(g, nx.max_flow_min_cost(g, s, t))


@pytest.mark.parametrize("method", METHODS)
@given(data=st.data(), net=networks(max_nodes=10, max_arcs=30, max_cap=20, cost_range=(-20, 50)))
def test_min_cost_flow_matches_ortools(method, data, net):
    pywrapgraph = pytest.importorskip("ortools.graph.python.min_cost_flow")
    n, tail, head, cap, cost = net
    supply = data.draw(supplies(n, max_abs=15))
    r = min_cost_flow(n, tail, head, cap, cost, supply, method=method)
    certified(net, r, supply=supply)
    smcf = pywrapgraph.SimpleMinCostFlow()
    proper = tail != head
    if proper.any():
        smcf.add_arcs_with_capacity_and_unit_cost(tail[proper], head[proper], cap[proper], cost[proper])
    for v in range(n):
        smcf.set_node_supply(v, int(supply[v]))
    status = smcf.solve()
    if status == smcf.OPTIMAL:
        assert r.status == "optimal"
        assert r.cost == smcf.optimal_cost() + loop_cost(tail, head, cap, cost)
    else:
        assert status == smcf.INFEASIBLE and r.status == "infeasible"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(3))
def test_larger_random_networks_match_network_simplex(seed, method):
    rng = np.random.default_rng(seed)
    n, m = 120, 700
    tail = rng.integers(0, n, m)
    head = rng.integers(0, n, m)
    cap = rng.integers(0, 30, m)
    cost = rng.integers(-10, 100, m)
    supply = np.zeros(n, np.int64)
    for _ in range(40):
        a, b = rng.integers(0, n, 2)
        k = int(rng.integers(1, 10))
        supply[a] += k
        supply[b] -= k
    r = min_cost_flow(n, tail, head, cap, cost, supply, method=method)
    certified((n, tail, head, cap, cost), r, supply=supply)
    try:
        nx_cost, _ = nx.network_simplex(nx_multigraph(n, tail, head, cap, cost, supply))
    except nx.NetworkXUnfeasible:
        assert r.status == "infeasible"
    else:
        assert r.optimal and r.cost == nx_cost + loop_cost(tail, head, cap, cost)


# ------------------------------------------------------------------------------ RECTLR shape
def reassign_instance(rng, n_groups, r, n_failed, s):
    """source -> type (cap 1) -> (alive holder, depth) -> holder (cap s) -> sink.

    Group g holds types g, g+1, ..., g+r-1 (mod n_groups) at depths 0..r-1; moving a type
    from depth d into the top s costs d - s + 1 (0 if already there)."""
    alive = np.ones(n_groups, bool)
    alive[rng.choice(n_groups, n_failed, replace=False)] = False
    src, snk = 0, 1
    type_node = 2 + np.arange(n_groups)
    group_node = 2 + n_groups + np.arange(n_groups)
    tail, head, cap, cost = [], [], [], []
    slot = 2 + 2 * n_groups
    for ty in range(n_groups):
        tail.append(src); head.append(type_node[ty]); cap.append(1); cost.append(0)
    for g in np.flatnonzero(alive):
        for d in range(r):
            ty = (g + d) % n_groups
            tail += [type_node[ty], slot]; head += [slot, group_node[g]]
            cap += [1, 1]; cost += [max(0, d - s + 1), 0]
            slot += 1
        tail.append(group_node[g]); head.append(snk); cap.append(s); cost.append(0)
    arrays = (np.array(tail), np.array(head), np.array(cap), np.array(cost))
    return slot, *arrays


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(2))
def test_reassign_networks_cover_every_type_at_least_displacement(seed, method):
    rng = np.random.default_rng(seed)
    n_groups, r = 40, 5
    inst = reassign_instance(rng, n_groups, r, n_failed=12, s=2)
    res = max_flow_min_cost(*inst, 0, 1, method=method)
    certified(inst, res, source=0, sink=1)
    g = nx_split_digraph(*inst)
    assert res.value == nx.maximum_flow_value(g, 0, 1)
    assert res.cost == nx.cost_of_flow(g, nx.max_flow_min_cost(g, 0, 1))


# ------------------------------------------------------------------------------ bad input
GOOD = dict(n_nodes=3, tail=[0, 1], head=[1, 2], capacity=[1, 1], cost=[1, 1], supply=[1, 0, -1])


@pytest.mark.parametrize(
    "change, exc, words",
    [
        (dict(head=[1]), ValueError, "head must have length 2"),
        (dict(tail=[0, 3]), ValueError, "tail holds node id 3, out of range"),
        (dict(tail=[0, -1]), ValueError, "tail must be >= 0"),
        (dict(capacity=[1, -1]), ValueError, "capacity must be >= 0"),
        (dict(cost=[1.0, 2.0]), TypeError, "cost must hold integers"),
        (dict(cost=[1, float("nan")]), TypeError, "cost must hold integers"),
        (dict(cost=[True, False]), TypeError, "cost must hold integers"),
        (dict(cost=["a", "b"]), TypeError, "cost must hold integers"),
        (dict(tail=[[0, 1]]), ValueError, "1-dimensional"),
        (dict(n_nodes=2.5), TypeError, "n_nodes must be an integer"),
        (dict(n_nodes=-1, supply=[]), ValueError, "n_nodes must be >= 0"),
        (dict(cost=[2**62, 1]), ValueError, "potentials fit in int64"),
        (dict(cost=[-1, -1], capacity=[2**62, 2**62]), ValueError, "2\\*\\*61"),
        (dict(cost=[2**40, 2**40], capacity=[2**40, 2**40], supply=[2**40, 0, -(2**40)]),
         ValueError, "total cost fits in int64"),
    ],
)
def test_bad_network_is_refused(change, exc, words):
    with pytest.raises(exc, match=words):
        min_cost_flow(**{**GOOD, **change})


NET = [GOOD[k] for k in ("n_nodes", "tail", "head", "capacity", "cost")]


def test_bad_supply_and_terminals_are_refused():
    with pytest.raises(ValueError, match="supplies must sum to zero, got 1"):
        min_cost_flow(*NET, [1, 0, 0])
    with pytest.raises(ValueError, match="supply must have length 3"):
        min_cost_flow(*NET, [1, -1])
    with pytest.raises(TypeError, match="supply must hold integers"):
        min_cost_flow(*NET, [0.5, 0, -0.5])
    with pytest.raises(ValueError, match="source and sink must differ"):
        max_flow_min_cost(*NET, 1, 1)
    with pytest.raises(ValueError, match="sink must be <= 2"):
        max_flow_min_cost(*NET, 0, 3)
    with pytest.raises(TypeError, match="source must be an integer"):
        max_flow_min_cost(*NET, 0.0, 2)
    with pytest.raises(ValueError, match="at least 2 nodes"):
        max_flow_min_cost(1, [], [], [], [], 0, 0)
    with pytest.raises(ValueError, match="either supply"):
        check_flow_certificate(*NET, min_cost_flow(*NET, [1, 0, -1]))


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(tail=[0, -1]), "tail must be >= 0, got -1"),
        (dict(head=[-5, 2]), "head must be >= 0, got -5"),
        (dict(capacity=[1, -1]), "capacity must be >= 0, got -1"),
        (dict(head=[1, 3]), "head holds node id 3, out of range"),
        (dict(head=[1]), "head must have length 2"),
        (dict(supply=[1, 0]), "supply must have length 3"),
        (dict(supply=[2**62, 0, -(2**62)]), "supply values must be at most 2\\*\\*61"),
        (dict(n_nodes=4, supply=[2**61, 2**61, -(2**61), -(2**61)]), "positive supply must be at most 2\\*\\*61 in total"),
        (dict(cost=[-1, -1], capacity=[2**61, 2**61]), "capacity of negative-cost arcs must be at most"),
    ],
)
def test_plain_int64_arrays_take_the_fast_path_with_the_same_rules(change, words):
    # Contiguous int64 arrays skip the conversion; the one-pass kernel scan must still
    # enforce every rule with the same message.
    args = {k: (np.array(v, np.int64) if isinstance(v, list) else v) for k, v in {**GOOD, **change}.items()}
    with pytest.raises(ValueError, match=words):
        min_cost_flow(**args)


def test_max_flow_terminal_capacity_bounds_and_unit_detection():
    net = (3, [0, 0, 1], [1, 1, 2], [2**61, 2**61, 1], [0, 0, 0])
    with pytest.raises(ValueError, match="capacity out of source must be at most 2\\*\\*61"):
        max_flow_min_cost(*net, 0, 2)
    net = (3, [0, 1, 1], [1, 2, 2], [1, 2**61, 2**61], [0, 0, 0])
    with pytest.raises(ValueError, match="capacity into sink must be at most 2\\*\\*61"):
        max_flow_min_cost(*net, 0, 2)
    # Self-loops at the source are ignored, as in the flow itself.
    net = (3, [0, 0, 1], [0, 1, 2], [2**62, 1, 1], [0, 0, 0])
    assert max_flow_min_cost(*net, 0, 2).value == 1


# ----------------------------------------------------------------------------- option order
def _broken_network(m):
    """m arcs, every array wrong: node ids out of range, negative capacities, length mismatch."""
    tail = np.full(m, 5, dtype=np.int64)
    return tail, -tail, -tail, np.zeros(m + 1, dtype=np.int64)


@pytest.mark.parametrize("method", ["simplex", "SSP", None, 3])
def test_an_unknown_method_is_refused_before_the_arrays_are_scanned(method):
    # With the check after the scans, the tail / length errors would be raised instead.
    tail, head, cap, cost = _broken_network(10**5)
    with pytest.raises(ValueError, match=r"method must be one of \['auto', 'cost_scaling', 'network_simplex', 'ssp'\]"):
        min_cost_flow(3, tail, head, cap, cost, [0, 0, 0], method=method)
    with pytest.raises(ValueError, match="method must be one of"):
        max_flow_min_cost(3, tail, head, cap, cost, 0, 2, method=method)


def test_with_a_valid_method_the_array_errors_still_come():
    tail, head, cap, cost = _broken_network(10)
    with pytest.raises(ValueError, match="head must have length 10"):
        min_cost_flow(3, tail, head[:9], cap, cost[:10], [0, 0, 0], method="ssp")
    with pytest.raises(ValueError, match="cost must have length 10"):
        max_flow_min_cost(3, tail, head, cap, cost, 0, 2, method="network_simplex")
