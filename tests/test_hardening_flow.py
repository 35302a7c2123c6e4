"""Regressions of issue 16 in spare_core.graph.flow: the self-loop overflow guard and the
certificate of infeasible results, status strings and non-results."""
import dataclasses

import numpy as np
import pytest

from spare_core.graph.flow import FlowResult, check_flow_certificate, min_cost_flow


def test_negative_self_loop_whose_cost_overflows_int64_is_refused():
    # saturating the loop costs -2**43 * 2**40 = -9.7e24: beyond int64
    with pytest.raises(ValueError, match="negative-cost self-loops at their full capacity"):
        min_cost_flow(1, [0], [0], [2**40], [-(2**43)], [0])


def test_negative_self_loop_within_range_is_saturated_exactly():
    r = min_cost_flow(1, [0], [0], [2**20], [-(2**20)], [0])
    assert r.cost == -(2**40) and r.flow.tolist() == [2**20]


def test_certificate_refuses_a_result_that_is_not_a_flow_result():
    with pytest.raises(TypeError, match="result must be a FlowResult, got NoneType"):
        check_flow_certificate(2, [0], [1], [1], [1], None, supply=[1, -1])


def test_certificate_rejects_an_unknown_status_string():
    net = (2, [0], [1], [1], [1])
    r = min_cost_flow(*net, [1, -1])
    fake = dataclasses.replace(r, status="optimal-ish")
    chk = check_flow_certificate(*net, fake, supply=[1, -1])
    assert not chk and "status" in chk.violations[0]


def test_certificate_rejects_an_infeasible_result_from_the_dearer_source():
    # sources 0 and 1 (1 unit each) can reach sink 2 (demand 2) only through one unit of
    # capacity in total: from 0 at cost 1 or from 1 at cost 5. The cheap answer sends from 0.
    n, tail, head, cap, cost = 4, [0, 1, 3], [3, 3, 2], [1, 1, 1], [1, 5, 0]
    sup = [1, 1, -2, 0]
    good = min_cost_flow(n, tail, head, cap, cost, sup)
    assert good.status == "infeasible" and good.cost == 1
    assert check_flow_certificate(n, tail, head, cap, cost, good, supply=sup)
    # the same delivered amount from the dear source, with potentials that satisfy every
    # arc's slackness: only the choice of sources is wrong
    flow = np.array([0, 1, 1])
    pot = np.array([4, 0, 5, 5])
    fake = FlowResult(flow=flow, cost=5, value=1, potential=pot, status="infeasible", shortfall=1)
    chk = check_flow_certificate(n, tail, head, cap, cost, fake, supply=sup)
    assert not chk, "a non-optimal infeasible result was certified"
    assert len(chk.violations) == 1     # everything else about it holds
    assert any("cheaper choice of sources" in v for v in chk.violations)


def test_certificate_of_max_flow_requires_status_optimal():
    from spare_core.graph.flow import max_flow_min_cost
    net = (2, [0], [1], [3], [1])
    r = max_flow_min_cost(*net, 0, 1)
    assert check_flow_certificate(*net, r, source=0, sink=1)
    chk = check_flow_certificate(*net, dataclasses.replace(r, status="infeasible"), source=0, sink=1)
    assert not chk


def test_the_flow_kernel_refuses_node_ids_it_was_not_given_room_for():
    # behind the wrapper's scan: the kernel itself, called with ids the wrapper would refuse,
    # raises instead of writing the residual graph through them
    from spare_core._native import load

    k = load("_mcf")
    one = np.ones(2, dtype=np.int64)
    tail = np.array([0, 1], dtype=np.int64)
    supply = np.array([1, 0, -1], dtype=np.int64)
    for head in ([1, 3], [1, -1], [1, 2**62]):
        with pytest.raises(ValueError, match="arc 1 has a node id outside"):
            k.solve(3, tail, np.array(head, dtype=np.int64), one, one, supply)
    with pytest.raises(ValueError, match="one length"):
        k.solve(3, tail, np.array([1], dtype=np.int64), one, one, supply)
    with pytest.raises(ValueError, match="supply must have n entries"):
        k.solve(3, tail, np.array([1, 2], dtype=np.int64), one, one, supply[:2].copy())
    with pytest.raises(ValueError, match="source and sink"):
        k.solve(3, tail, np.array([1, 2], dtype=np.int64), one, one, supply, source=0, sink=3)
    assert k.solve(3, tail, np.array([1, 2], dtype=np.int64), one, one, supply).value == 1
