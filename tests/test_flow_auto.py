"""The rules of ``method="auto"`` pinned per network family: ``FlowResult.method`` records
the algorithm that ran, and these tests fail if a rule changes which one a family gets.
The shape test behind the assignment rule (``_mcf.assignment_shape``) is checked against a
plain numpy statement of the same definition."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spare_core._native import load
from spare_core.graph.flow import check_flow_certificate, max_flow_min_cost, min_cost_flow

from bench import families
from bench.peers import certified, solve_ours_result
from bench.workloads import make_generic, make_reassign

_mcf = load("_mcf")


def _solve(inst, method="auto"):
    r = solve_ours_result(inst, method)
    assert certified(inst, r)
    return r


def _as_supply(inst):
    """The s-t instance as a supply problem routing its maximum flow value."""
    value = max_flow_min_cost(*inst.network(), inst.source, inst.sink).value
    supply = np.zeros(inst.n, np.int64)
    supply[inst.source], supply[inst.sink] = value, -value
    return type(inst)(inst.n, inst.tail, inst.head, inst.capacity, inst.cost, supply=supply)


def _back_arc(inst):
    """``inst`` plus one arc from the last slot back into the first shard: no longer layered."""
    return type(inst)(inst.n, np.append(inst.tail, inst.n - 1), np.append(inst.head, 2),
                      np.append(inst.capacity, 1), np.append(inst.cost, 0),
                      supply=inst.supply, source=inst.source, sink=inst.sink)


# family -> the method auto must pick (and why, in the docs/flow.md table of rules)
AUTO = {
    # unit source arcs, costs in [0, 64]: SSP with the unit-path stage
    "rectlr reassign, s-t": (lambda: make_reassign(3000, seed=2), "ssp_unit_paths"),
    # layered (source -> shard -> slot -> sink, penalty 1000): unit paths whatever the costs
    "user reassign costs < 16, s-t": (lambda: families.user_reassign(3000, max_transfer=15), "ssp_unit_paths"),
    "user reassign costs <= 200, s-t": (lambda: families.user_reassign(3000, max_transfer=200), "ssp_unit_paths"),
    "user reassign costs <= 1e4, s-t": (lambda: families.user_reassign(3000, max_transfer=10_000),
                                        "ssp_unit_paths"),
    "user reassign costs <= 200, supplies": (
        lambda: families.user_reassign(3000, max_transfer=200, formulation="supply"), "ssp_unit_paths"),
    "user reassign costs <= 1e4, supplies": (
        lambda: families.user_reassign(3000, max_transfer=10_000, formulation="supply"), "ssp_unit_paths"),
    # not layered and a cost above 64: the simplex
    "user reassign + back arc, s-t": (lambda: _back_arc(families.user_reassign(3000, max_transfer=200)),
                                      "network_simplex"),
    "user reassign + back arc, supplies": (
        lambda: _back_arc(families.user_reassign(3000, max_transfer=200, formulation="supply")),
        "network_simplex"),
    # RECTLR's network as supplies: slot -> group -> sink is three layers deep, so not layered
    "rectlr reassign, supplies": (lambda: _as_supply(make_reassign(3000, seed=2)), "network_simplex"),
    # NETGEN-like: many supplies, any cost range
    "generic costs <= 1e4": (lambda: make_generic(3000, seed=2), "network_simplex"),
    "generic costs <= 10": (lambda: make_generic(3000, seed=2, max_cost=10), "network_simplex"),
    # generic shapes the defaults were not tuned on: 5 % terminals and degree 16; a grid
    "netgen-wide": (lambda: families.netgen_wide(3000, seed=2), "network_simplex"),
    "grid": (lambda: families.grid(3000, seed=2), "network_simplex"),
}


@pytest.mark.parametrize("family", sorted(AUTO))
def test_auto_choice_per_family(family):
    make, expected = AUTO[family]
    inst = make()
    r = _solve(inst)
    assert r.method == expected
    assert r.to_dict()["method"] == expected
    # and the choice is at least as good as the reference method's answer
    assert r.cost == _solve(inst, "network_simplex").cost


def test_back_arc_with_small_costs_keeps_unit_paths():
    """Unit source arcs and costs <= 64 take the unit-path stage on any shape (RECTLR's rule)."""
    inst = _back_arc(families.user_reassign(2000, max_transfer=15))
    inst.cost[inst.cost == 1000] = 64
    assert _solve(inst).method == "ssp_unit_paths"
    inst.cost[inst.cost == 64] = 65
    assert _solve(inst).method == "network_simplex"


def test_supply_cases_off_the_fast_path():
    inst = families.user_reassign(2000, max_transfer=200, formulation="supply")
    k = int(inst.supply[0])
    for units, expected in ((k // 2, "ssp_unit_paths"),     # part of the shards: still one pair
                            (k + 3, "network_simplex")):    # more than the source arcs carry
        supply = inst.supply.copy()
        supply[0], supply[1] = units, -units
        r = min_cost_flow(*inst.network(), supply)
        assert r.method == expected
        assert check_flow_certificate(*inst.network(), r, supply=supply)
    # a second demand node: not a single pair
    supply = inst.supply.copy()
    supply[1] += 1
    supply[2 + k] -= 1        # the first slot node also demands a unit
    assert min_cost_flow(*inst.network(), supply).method == "network_simplex"
    # a negative cost anywhere: the simplex (the unit-path stage needs costs >= 0)
    cost = inst.cost.copy()
    cost[-1] = -1
    assert min_cost_flow(*inst.network()[:4], cost, inst.supply).method == "network_simplex"


@pytest.mark.parametrize("method", ["ssp", "cost_scaling", "network_simplex"])
def test_forced_method_is_recorded(method):
    st_inst = families.user_reassign(1500, max_transfer=200)
    sup_inst = families.user_reassign(1500, max_transfer=200, formulation="supply")
    # SSP on a maximum flow with unit source arcs always runs the unit-path stage
    assert _solve(st_inst, method).method == ("ssp_unit_paths" if method == "ssp" else method)
    assert _solve(sup_inst, method).method == method
    generic = make_generic(1500, seed=4)
    assert _solve(generic, method).method == method


def test_hand_built_result_has_no_method():
    r = min_cost_flow(3, [0, 1], [1, 2], [1, 1], [1, 1], [1, 1, -2])   # two supplies: the simplex
    assert r.method == "network_simplex" and "method='network_simplex'" in repr(r)
    assert type(r)(flow=r.flow, cost=r.cost, value=r.value, potential=r.potential, status=r.status).method is None


# ------------------------------------------------------------------ the shape test itself
def layered_reference(n, tail, head, cap, s, t) -> bool:
    """The definition, vectorised: L = heads of the arcs out of s (at least one, all of
    capacity <= 1); arcs into L only from s; arcs out of L avoid L and s; every other arc
    goes into t and does not leave it."""
    from_s = tail == s
    if not from_s.any() or cap[from_s].max() > 1:
        return False
    in_l = np.zeros(n, bool)
    in_l[head[from_s]] = True
    if in_l[s] or in_l[t]:
        return False
    lt, lh = in_l[tail], in_l[head]
    ok = from_s | (lt & ~lh & (head != s)) | (~lt & (head == t) & (tail != t))
    return bool(ok.all()) and not bool((lh & ~from_s).any())


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 9), st.data())
def test_assignment_shape_matches_reference(n, data):
    m = data.draw(st.integers(0, 14))
    ids = st.integers(0, n - 1)
    tail = np.array(data.draw(st.lists(ids, min_size=m, max_size=m)), np.int64)
    head = np.array(data.draw(st.lists(ids, min_size=m, max_size=m)), np.int64)
    cap = np.array(data.draw(st.lists(st.integers(0, 2), min_size=m, max_size=m)), np.int64)
    s = data.draw(ids)
    t = data.draw(ids.filter(lambda v: v != s))
    assert _mcf.assignment_shape(n, tail, head, cap, s, t) == layered_reference(n, tail, head, cap, s, t)


def test_assignment_shape_on_the_families_and_bad_input():
    a = families.user_reassign(2000, max_transfer=200)
    net = (a.n, a.tail, a.head, a.capacity)
    assert _mcf.assignment_shape(*net, 0, 1) and layered_reference(*net, 0, 1)
    assert not _mcf.assignment_shape(*net, 1, 0)
    b = _back_arc(a)
    assert not _mcf.assignment_shape(b.n, b.tail, b.head, b.capacity, 0, 1)
    r = make_reassign(2000, seed=1)
    assert not _mcf.assignment_shape(r.n, r.tail, r.head, r.capacity, 0, 1)
    # ids or terminals out of range, mismatched lengths: False, never a read out of bounds
    assert not _mcf.assignment_shape(a.n - 1, *net[1:], 0, 1)
    assert not _mcf.assignment_shape(a.n, a.tail, a.head[:-1], a.capacity, 0, 1)
    assert not _mcf.assignment_shape(a.n, *net[1:], -1, 1)
    assert not _mcf.assignment_shape(a.n, *net[1:], 0, a.n)
    assert not _mcf.assignment_shape(0, a.tail[:0], a.head[:0], a.capacity[:0], 0, 1)
