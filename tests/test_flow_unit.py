"""spare_core.graph.flow: the unit-path stage of max_flow_min_cost (one Dijkstra per unit waiting
at the head of a capacity-1 source arc, Jonker-Volgenant style), checked against
networkx, against the plain primal-dual SSP of the same kernel and by certificates."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from spare_core.graph.flow import FlowResult, _kernel, check_flow_certificate, max_flow_min_cost

from test_flow import certified, networks, nx_split_digraph, reassign_instance

nx = pytest.importorskip("networkx")


def kernel_max_flow(n, tail, head, cap, cost, s, t, unit_paths):
    """The kernel's SSP maximum flow with the unit-path stage on or off, as a FlowResult."""
    bound = int(cap[(tail == s) & (tail != head)].sum())
    sol = _kernel.solve(n, tail, head, cap, cost, np.zeros(n, np.int64), s, t, bound,
                        method=_kernel.CONSTANTS["M_SSP"], unit_paths=unit_paths)
    assert sol.leftover == 0
    flow = sol.flow
    res = FlowResult(flow=flow, cost=int(flow @ cost) if flow.size else 0, value=sol.value,
                     potential=sol.potential, status="optimal")
    return res, sol.stats


@st.composite
def unit_source_networks(draw):
    """Small networks (non-negative costs) whose source arcs have capacity 0 or 1; many
    units then cannot all reach the sink, so some must be sent back to the source."""
    n, tail, head, cap, cost = draw(networks(max_nodes=9, max_arcs=30, max_cap=4, cost_range=(0, 9)))
    assume(n >= 2)
    s = draw(st.integers(0, n - 1))
    t = draw(st.integers(0, n - 1).filter(lambda v: v != s))
    cap = np.where(tail == s, np.minimum(cap, 1), cap)
    # Extra unit arcs out of the source so that the stage has several units to route.
    extra = draw(st.lists(st.integers(0, n - 1), max_size=6))
    tail = np.concatenate([tail, np.full(len(extra), s)]).astype(np.int64)
    head = np.concatenate([head, extra]).astype(np.int64)
    cap = np.concatenate([cap, np.ones(len(extra), np.int64)])
    cost = np.concatenate([cost, np.array(draw(st.lists(st.integers(0, 9), min_size=len(extra),
                                                         max_size=len(extra))), np.int64)])
    return (n, tail, head, cap, cost), s, t


@given(case=unit_source_networks())
def test_unit_paths_match_networkx_and_plain_ssp(case):
    net, s, t = case
    g = nx_split_digraph(*net)
    value = nx.maximum_flow_value(g, s, t)
    best = nx.cost_of_flow(g, nx.max_flow_min_cost(g, s, t))
    unit, _ = kernel_max_flow(*net, s, t, unit_paths=True)
    plain, _ = kernel_max_flow(*net, s, t, unit_paths=False)
    public = max_flow_min_cost(*net, s, t)
    for res in (unit, plain, public):
        certified(net, res, source=s, sink=t)
        assert (res.value, res.cost) == (value, best)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("s", [1, 2, 3])
def test_unit_paths_on_reassign_networks_with_uncoverable_types(seed, s):
    # Many failures and small top-S: some types have no alive holder with room, so their
    # units must go back to the source and the flow is not the full N.
    rng = np.random.default_rng(seed)
    inst = reassign_instance(rng, 30, 4, n_failed=14, s=s)
    unit, stats = kernel_max_flow(*inst, 0, 1, unit_paths=True)
    plain, _ = kernel_max_flow(*inst, 0, 1, unit_paths=False)
    certified(inst, unit, source=0, sink=1)
    g = nx_split_digraph(*inst)
    assert unit.value == nx.maximum_flow_value(g, 0, 1) == plain.value
    assert unit.cost == nx.cost_of_flow(g, nx.max_flow_min_cost(g, 0, 1)) == plain.cost
    assert stats["paths"] >= unit.value


@pytest.mark.parametrize("seed", range(2))
def test_unit_paths_agree_with_plain_ssp_and_cost_scaling_on_larger_reassign(seed):
    rng = np.random.default_rng(seed)
    inst = reassign_instance(rng, 400, 8, n_failed=120, s=2)
    unit, stats = kernel_max_flow(*inst, 0, 1, unit_paths=True)
    plain, _ = kernel_max_flow(*inst, 0, 1, unit_paths=False)
    scaled = max_flow_min_cost(*inst, 0, 1, method="cost_scaling")
    certified(inst, unit, source=0, sink=1)
    assert (unit.value, unit.cost) == (plain.value, plain.cost) == (scaled.value, scaled.cost)
    # The stage really ran: it searched once per unit the greedy start left over.
    assert stats["phases"] > 0


def test_public_api_picks_unit_paths_only_for_unit_source_arcs():
    # Same network with the source arc doubled: both routes give the same optimum.
    n, tail, head, cost = 4, np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3]), np.array([0, 1, 0, 0])
    for cap in (np.array([1, 1, 1, 1]), np.array([2, 2, 1, 1])):
        r = max_flow_min_cost(n, tail, head, cap, cost, 0, 3)
        check = check_flow_certificate(n, tail, head, cap, cost, r, source=0, sink=3)
        assert check.ok and (r.value, r.cost) == (2, 1)
