"""spare_core.graph.flow: the network simplex kernel (strongly feasible trees, block pricing).

The kernel is run with ``check=True``, which re-verifies after every pivot that the
thread / subtree-size / last-successor structure describes the parent tree, that tree
arcs have reduced cost 0 and that the tree is strongly feasible (every node can push
flow to the root); answers are certified and compared with SSP and networkx."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spare_core.graph.flow import (
    _SIMPLEX,
    _SSP,
    FlowResult,
    _method_code,
    _simplex,
    max_flow_min_cost,
    min_cost_flow,
)

from test_flow import certified, networks, supplies

nx = pytest.importorskip("networkx")

_C = _simplex.CONSTANTS
OK, INFEASIBLE, PIVOT_LIMIT = _C["NS_OK"], _C["NS_INFEASIBLE"], _C["NS_PIVOT_LIMIT"]
STAR, SHORTEST_PATHS, CRASH = _C["START_STAR"], _C["START_SHORTEST_PATHS"], _C["START_CRASH"]


def simplex(n, tail, head, cap, cost, supply, **kw):
    sol = _simplex.solve(n, tail, head, cap, cost, np.asarray(supply, np.int64), **kw)
    assert sol.cost == (int(sol.flow @ cost) if sol.flow.size else 0)
    res = FlowResult(flow=sol.flow, cost=sol.cost,
                     value=int(np.asarray(supply)[np.asarray(supply) > 0].sum()), potential=sol.potential,
                     status="optimal")
    return res, sol.status, sol.stats


@st.composite
def degenerate_networks(draw):
    """Zero or one costs, capacities 0..2, many parallel arcs: most pivots are degenerate."""
    n, tail, head, cap, cost = draw(networks(max_nodes=9, max_arcs=40, max_cap=2, cost_range=(0, 1)))
    return n, tail, head, cap, cost


@pytest.mark.parametrize("start", [STAR, SHORTEST_PATHS, CRASH])
@given(data=st.data(), net=st.one_of(networks(), degenerate_networks()))
def test_tree_stays_strongly_feasible_and_answer_is_certified(start, data, net):
    # STAR: the star of artificial arcs; SHORTEST_PATHS: zero-supply nodes hung on shortest paths
    # to the demands. check=True also verifies the initial tree.
    n, tail, head, cap, cost = net
    supply = data.draw(supplies(n, max_abs=4))
    res, status, stats = simplex(*net, supply, check=True, start=start)
    ssp = min_cost_flow(*net, supply, method="ssp")
    assert status in (OK, INFEASIBLE), f"status {status}: tree invariant broken"
    assert (status == OK) == ssp.optimal
    if status == OK:
        certified(net, res, supply=supply)
        assert res.cost == ssp.cost
    assert stats["pivots"] >= stats["degenerate"] >= 0


@pytest.mark.parametrize("start", [STAR, SHORTEST_PATHS, CRASH])
@pytest.mark.parametrize("k", [12, 40])
def test_zero_cost_assignment_is_fully_degenerate_yet_terminates(k, start):
    # Complete bipartite k x k, unit capacities, all costs 0 except a few: nearly every
    # pivot has delta = 0. Without strongly feasible trees such pivots may cycle; here the
    # pivot count stays far below the cap (a hang would instead return PIVOT_LIMIT).
    rng = np.random.default_rng(k)
    left, right = np.arange(k), k + np.arange(k)
    tail = np.repeat(left, k)
    head = np.tile(right, k)
    cost = np.where(rng.random(k * k) < 0.05, 1, 0).astype(np.int64)
    cap = np.ones(k * k, np.int64)
    supply = np.concatenate([np.ones(k, np.int64), -np.ones(k, np.int64)])
    net = (2 * k, tail, head, cap, cost)
    limit = 20 * (2 * k + k * k)
    res, status, stats = simplex(*net, supply, max_pivots=limit, check=k <= 12, start=start)
    assert status == OK and stats["pivots"] < limit
    certified(net, res, supply=supply)
    assert res.cost == 0  # a perfect matching avoiding the few cost-1 arcs exists w.h.p.


@pytest.mark.parametrize("start", [STAR, SHORTEST_PATHS, CRASH])
def test_zero_cost_layers_with_parallel_arcs(start):
    # Layered network, every arc cost 0 and capacity 1, doubled: the optimum is any
    # feasible flow, so every pivot with delta = 0 is a tie the rule must break safely.
    layers, width = 6, 8
    tail, head = [], []
    for layer in range(layers - 1):
        for a in range(width):
            for b in range(width):
                tail += [layer * width + a] * 2
                head += [(layer + 1) * width + b] * 2
    tail, head = np.array(tail), np.array(head)
    n = layers * width
    supply = np.zeros(n, np.int64)
    supply[:width] = 3
    supply[-width:] = -3
    net = (n, tail, head, np.ones(tail.size, np.int64), np.zeros(tail.size, np.int64))
    res, status, stats = simplex(*net, supply, max_pivots=50 * (n + tail.size), check=True, start=start)
    assert status == OK and (start == SHORTEST_PATHS or stats["degenerate"] > 0)
    certified(net, res, supply=supply)


def test_pivot_limit_is_reported_not_hung():
    net = (4, np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3]), np.ones(4, np.int64), np.array([1, 2, 1, 1]))
    _, status, stats = simplex(*net, [2, 0, 0, -2], max_pivots=1, start=STAR)
    assert status == PIVOT_LIMIT and stats["pivots"] == 1
    res, status, _ = simplex(*net, [2, 0, 0, -2])
    assert status == OK and res.cost == 5


@pytest.mark.parametrize("block", [1, 3, 1000])
def test_block_size_changes_the_path_not_the_optimum(block):
    rng = np.random.default_rng(block)
    n, m = 60, 400
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    cap, cost = rng.integers(0, 20, m), rng.integers(-30, 100, m)
    supply = np.zeros(n, np.int64)
    for a, b in rng.integers(0, n, (30, 2)):
        supply[a] += 3
        supply[b] -= 3
    net = (n, tail, head, cap, cost)
    res, status, _ = simplex(*net, supply, block=block)
    ref = min_cost_flow(*net, supply, method="ssp")
    if ref.optimal:
        assert status == OK and res.cost == ref.cost
        certified(net, res, supply=supply)
    else:
        assert status == INFEASIBLE


@pytest.mark.parametrize("list_head", [0, 1, 16])
@pytest.mark.parametrize("renumber_factor", [0.0, 1e-9])
@given(data=st.data(), net=st.one_of(networks(), degenerate_networks()))
def test_candidate_list_and_renumbering_keep_the_tree_and_the_optimum(list_head, renumber_factor, data, net):
    # list_head 0: plain block search; 1 and 16: the candidate list. renumber_factor 1e-9
    # renumbers the nodes in preorder after every pivot that moved a potential, so
    # check=True verifies the permuted tree each time and the potentials must come back
    # in the caller's node order to certify the flow.
    n, tail, head, cap, cost = net
    supply = data.draw(supplies(n, max_abs=4))
    res, status, stats = simplex(*net, supply, check=True, list_head=list_head, renumber_factor=renumber_factor,
                                 block=data.draw(st.sampled_from([0, 1, 3])))
    ssp = min_cost_flow(*net, supply, method="ssp")
    assert status in (OK, INFEASIBLE), f"status {status}: tree invariant broken"
    assert (status == OK) == ssp.optimal
    if status == OK:
        certified(net, res, supply=supply)
        assert res.cost == ssp.cost
    if renumber_factor == 0:
        assert stats["renumbered"] == 0


@pytest.mark.parametrize("list_head", [0, 16])
def test_renumbering_on_a_larger_network_matches_the_plain_run(list_head):
    # Enough pivots for the default rule to renumber several times; the optimum, the flow's
    # certificate and the potentials' meaning must not depend on the numbering.
    rng = np.random.default_rng(7)
    n, m = 400, 4000
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    cap, cost = rng.integers(1, 40, m), rng.integers(0, 1000, m)
    supply = np.zeros(n, np.int64)
    for a, b in rng.integers(0, n, (80, 2)):
        supply[a] += 5
        supply[b] -= 5
    net = (n, tail, head, cap, cost)
    plain, s0, st0 = simplex(*net, supply, list_head=list_head, renumber_factor=0.0)
    renum, s1, st1 = simplex(*net, supply, list_head=list_head, renumber_factor=0.05)
    assert st1["renumbered"] >= 2 and st0["renumbered"] == 0
    assert s0 == s1
    assert st0["pivots"] == st1["pivots"]       # same pivots: only the ids changed
    if s0 == OK:
        assert renum.cost == plain.cost
        certified(net, renum, supply=supply)
        np.testing.assert_array_equal(renum.flow, plain.flow)
        np.testing.assert_array_equal(renum.potential, plain.potential)


def test_infeasible_supplies_fall_back_to_the_most_deliverable():
    # 0 can send 2 of its 5 units; node 3 is isolated with demand 1 (as test_flow's case).
    net = (4, np.array([0, 1]), np.array([1, 2]), np.array([2, 9]), np.array([1, 1]))
    supply = [5, 0, -3, -2]
    r = min_cost_flow(*net, supply, method="network_simplex")
    assert r.status == "infeasible" and r.value == 2 and r.shortfall == 3
    certified(net, r, supply=supply)


def test_auto_picks_ssp_for_unit_source_max_flows_and_the_simplex_otherwise():
    assert _method_code("auto", 10, 30, 64, unit_max_flow=True) == _SSP
    assert _method_code("auto", 10, 30, 65, unit_max_flow=True) == _SIMPLEX
    assert _method_code("auto", 10, 30, 64) == _SIMPLEX
    assert _method_code("network_simplex", 10, 30, 64, unit_max_flow=True) == _SIMPLEX
    # Too many ids for the simplex's int32 numbering: auto falls back, explicit refuses.
    assert _method_code("auto", 2**30, 2**30, 10**4) == _SSP
    with pytest.raises(ValueError, match="method='network_simplex' needs arcs"):
        _method_code("network_simplex", 2**30, 2**30, 10)
    # Max flow with wide source arcs goes to the simplex and agrees with SSP.
    rng = np.random.default_rng(5)
    n, m = 30, 150
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    cap, cost = rng.integers(1, 9, m), rng.integers(-5, 40, m)
    net = (n, tail, head, cap, cost)
    auto = max_flow_min_cost(*net, 0, 1)
    ssp = max_flow_min_cost(*net, 0, 1, method="ssp")
    certified(net, auto, source=0, sink=1)
    assert (auto.value, auto.cost) == (ssp.value, ssp.cost)


def test_shortest_path_start_saves_the_degenerate_growth_pivots():
    # One source, one sink, a path of cheap arcs through every node plus random costly
    # arcs: the start tree already holds the cheapest route, so one pivot routes the flow.
    rng = np.random.default_rng(3)
    n = 50
    tail = np.concatenate([np.arange(n - 1), rng.integers(0, n, 200)])
    head = np.concatenate([np.arange(1, n), rng.integers(0, n, 200)])
    cost = np.concatenate([np.ones(n - 1, np.int64), rng.integers(n, 3 * n, 200)])
    cap = np.full(tail.size, 10, np.int64)
    supply = np.zeros(n, np.int64)
    supply[0], supply[-1] = 4, -4
    net = (n, tail, head, cap, cost)
    star, status0, stats0 = simplex(*net, supply, start=0, check=True)
    tree, status1, stats1 = simplex(*net, supply, start=1, check=True)
    assert status0 == status1 == OK and star.cost == tree.cost == 4 * (n - 1)
    certified(net, tree, supply=supply)
    assert stats1["pivots"] == 1 < stats0["pivots"]


def _path_network(path_cap):
    """Node 0 (supply 4) to node n-1 (demand 4) along a path of unit-cost arcs of
    capacity ``path_cap``, plus random arcs of cost >= n (never on a shortest path)."""
    rng = np.random.default_rng(3)
    n = 50
    tail = np.concatenate([np.arange(n - 1), rng.integers(0, n, 200)])
    head = np.concatenate([np.arange(1, n), rng.integers(0, n, 200)])
    cost = np.concatenate([np.ones(n - 1, np.int64), rng.integers(n, 3 * n, 200)])
    cap = np.concatenate([np.full(n - 1, path_cap, np.int64), np.full(200, 10, np.int64)])
    supply = np.zeros(n, np.int64)
    supply[0], supply[-1] = 4, -4
    return (n, tail, head, cap, cost), supply


def test_crash_start_routes_the_supply_down_the_start_tree():
    # The supply fits the cheapest path (capacity 10 > 4): the crash basis already carries
    # it there, so the start is optimal and no pivot is needed (the shortest-path start
    # needs one, the star many).
    net, supply = _path_network(10)
    crash, status, stats = simplex(*net, supply, start=CRASH, check=True)
    assert status == OK and crash.cost == 4 * (net[0] - 1) and stats["pivots"] == 0
    certified(net, crash, supply=supply)


def test_crash_start_leaves_supply_on_the_root_when_an_arc_would_saturate():
    # Capacity 4 = the supply: routing it would saturate the path (not strongly feasible),
    # so the source keeps its artificial arc (the crash only uses arcs wider than every
    # supply for supply nodes) and pivots route it; the answer is the same optimum.
    net, supply = _path_network(4)
    crash, status, stats = simplex(*net, supply, start=CRASH, check=True)
    tree, status1, _ = simplex(*net, supply, start=SHORTEST_PATHS, check=True)
    assert status == status1 == OK and crash.cost == tree.cost == 4 * (net[0] - 1)
    assert stats["pivots"] >= 1
    certified(net, crash, supply=supply)


@given(data=st.data(), net=networks(max_nodes=12, max_arcs=40, max_cap=30))
def test_crash_start_cuts_subtrees_whose_arc_would_saturate(data, net):
    # Several sources with large supplies on capacitated networks: the bottom-up routing
    # cuts subtrees off often; check=True verifies the crash tree (flows, strong
    # feasibility, reduced costs 0 on tree arcs) before any pivot.
    n, tail, head, cap, cost = net
    supply = data.draw(supplies(n, max_abs=12))
    res, status, _ = simplex(*net, supply, check=True, start=CRASH)
    ref, status1, _ = simplex(*net, supply, check=True, start=STAR)
    assert status in (OK, INFEASIBLE) and status == status1
    if status == OK:
        assert res.cost == ref.cost
        certified(net, res, supply=supply)
