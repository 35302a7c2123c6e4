"""The assignment fast path of method="auto": the user-written reassignment network of
bench/families.py (source -> shard -> slot -> sink, penalty arcs shard -> sink) in both
formulations, against networkx and every forced method, certificates checked."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spare_core.graph.flow import check_flow_certificate, max_flow_min_cost, min_cost_flow

from bench import families

METHODS = ("auto", "ssp", "cost_scaling", "network_simplex")


def networkx_cost(inst, value=None) -> int:
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(inst.n))
    for u, v, c, w in zip(inst.tail.tolist(), inst.head.tolist(), inst.capacity.tolist(), inst.cost.tolist()):
        g.add_edge(u, v, capacity=c, weight=w)
    s, t = (inst.source, inst.sink) if value is None else (int(np.argmax(inst.supply)), int(np.argmin(inst.supply)))
    b = value if value is not None else int(inst.capacity[inst.tail == s].sum())
    g.nodes[s]["demand"] = -b
    g.nodes[t]["demand"] = b
    return int(nx.network_simplex(g)[0])


@settings(max_examples=40, deadline=None)
@given(st.integers(200, 1500), st.sampled_from([3, 200]), st.integers(0, 10**6), st.sampled_from(["st", "supply"]))
def test_user_reassign_every_method(arcs, max_transfer, seed, form):
    inst = families.user_reassign(arcs, seed=seed, max_transfer=max_transfer, formulation=form)
    net = inst.network()
    ref = networkx_cost(inst, None if form == "st" else int(inst.supply.max()))
    for method in METHODS:
        if form == "st":
            r = max_flow_min_cost(*net, inst.source, inst.sink, method=method)
            assert check_flow_certificate(*net, r, source=inst.source, sink=inst.sink)
        else:
            r = min_cost_flow(*net, inst.supply, method=method)
            assert r.status == "optimal"
            assert check_flow_certificate(*net, r, supply=inst.supply)
        assert r.cost == ref, method


@settings(max_examples=40, deadline=None)
@given(st.integers(200, 800), st.integers(0, 10**6), st.data())
def test_partial_supply_and_infeasible_supply(arcs, seed, data):
    """A supply below the source's arc count is routed at least cost; one above what the
    network can take reports the shortfall (the general path)."""
    inst = families.user_reassign(arcs, seed=seed, max_transfer=50, formulation="supply")
    k = int(inst.supply[0])
    k2 = data.draw(st.integers(1, k + 3))
    supply = inst.supply.copy()
    supply[0], supply[1] = k2, -k2
    net = inst.network()
    r = min_cost_flow(*net, supply)
    ref = min_cost_flow(*net, supply, method="network_simplex")
    assert (r.cost, r.status, r.shortfall) == (ref.cost, ref.status, ref.shortfall)
    assert check_flow_certificate(*net, r, supply=supply)


def test_layer_detection_rejects_other_shapes():
    from bench.workloads import make_generic

    inst = make_generic(2000, seed=3)
    r = min_cost_flow(*inst.network(), inst.supply)
    assert r.cost == min_cost_flow(*inst.network(), inst.supply, method="ssp").cost
    # an arc back into the shard layer breaks the shape: still optimal through the general path
    a = families.user_reassign(600, seed=1, max_transfer=200)
    tail = np.append(a.tail, a.n - 1)
    head = np.append(a.head, 2)
    cap, cost = np.append(a.capacity, 1), np.append(a.cost, 0)
    r = max_flow_min_cost(a.n, tail, head, cap, cost, 0, 1)
    ref = max_flow_min_cost(a.n, tail, head, cap, cost, 0, 1, method="network_simplex")
    assert (r.value, r.cost) == (ref.value, ref.cost)
