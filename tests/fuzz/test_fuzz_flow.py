"""Fuzz: spare_core.graph.flow (min_cost_flow, max_flow_min_cost, check_flow_certificate).

Random networks with int64-edge costs and capacities, self-loops and parallel arcs: every
answer must pass the independent certificate check with exact Python-int arithmetic (or the
call must refuse the instance with one clean error); results tampered with by hand must be
rejected by the certificate, never accepted. Cases run in forked children.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, strategies as st

from fuzz_arrays import INT64_EDGES, disguise, snapshot, unchanged
from fuzz_isolate import run_isolated
from fuzz_profile import fuzz
from spare_core.graph.flow import FlowResult, check_flow_certificate, max_flow_min_cost, min_cost_flow

METHODS = ["auto", "ssp", "cost_scaling", "network_simplex"]
BIG = [2**20, 2**31, 2**40, 2**55, 2**61, 2**62, 2**63 - 1]


@st.composite
def networks(draw):
    n = draw(st.integers(1, 7))
    m = draw(st.integers(0, 14))
    node = st.integers(0, n - 1)
    tail = np.array(draw(st.lists(node, min_size=m, max_size=m)), dtype=np.int64)
    head = np.array(draw(st.lists(node, min_size=m, max_size=m)), dtype=np.int64)
    if m and draw(st.booleans()):                     # some self-loops
        k = draw(st.integers(1, m))
        head[:k] = tail[:k]
    mag = draw(st.sampled_from([3, 100] + BIG))
    cap = np.array(draw(st.lists(st.integers(0, min(mag, 2**63 - 1)), min_size=m, max_size=m)), dtype=np.int64)
    cost = np.array(draw(st.lists(st.integers(-min(mag, 2**62), min(mag, 2**62)), min_size=m, max_size=m)),
                    dtype=np.int64)
    sup = np.array(draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)), dtype=np.int64)
    sup[-1] -= sup.sum()
    return n, tail, head, cap, cost, sup


def _mcf(net, method):
    n, tail, head, cap, cost, sup = net
    r = min_cost_flow(n, tail, head, cap, cost, sup, method=method)
    chk = check_flow_certificate(n, tail, head, cap, cost, r, supply=sup)
    return r.status, r.cost, bool(chk), chk.violations


@fuzz(1.5)
@given(networks(), st.sampled_from(METHODS))
def test_min_cost_flow_answers_pass_the_certificate_or_are_refused(net, method):
    snap = snapshot(*net[1:])
    out = run_isolated(_mcf, net, method, case=f"min_cost_flow(method={method})")
    out.check_clean("min_cost_flow")
    if out.ok:
        status, cost, ok, why = out.value
        assert ok, why
        # the exact cost fits int64: no wrap-around was reported as a result
        assert -(2**63) <= cost < 2**63
    assert unchanged(snap)


def _maxflow(net, s, t, method):
    n, tail, head, cap, cost, _ = net
    r = max_flow_min_cost(n, tail, head, cap, cost, s, t, method=method)
    chk = check_flow_certificate(n, tail, head, cap, cost, r, source=s, sink=t)
    return bool(chk), chk.violations


@fuzz(1.0)
@given(networks(), st.data(), st.sampled_from(METHODS))
def test_max_flow_answers_pass_the_certificate_or_are_refused(net, data, method):
    n = net[0]
    s = data.draw(st.one_of(st.integers(0, n - 1), st.sampled_from([-1, n, 2**63 - 1, 1.0, None])))
    t = data.draw(st.integers(0, n - 1))
    out = run_isolated(_maxflow, net, s, t, method, case="max_flow_min_cost")
    out.check_clean("max_flow_min_cost")
    if out.ok:
        ok, why = out.value
        assert ok, why


@fuzz(1.0)
@given(networks(), st.data())
def test_disguised_arrays_are_converted_or_refused(net, data):
    n, tail, head, cap, cost, sup = net
    args = [data.draw(disguise(a)) for a in (tail, head, cap, cost, sup)]
    snap = snapshot(*args)
    out = run_isolated(lambda: min_cost_flow(n, *args).cost, case="min_cost_flow(disguised)")
    out.check_clean("min_cost_flow(disguised)")
    assert unchanged(snap)


def _tampered(net, field, value):
    n, tail, head, cap, cost, sup = net
    r = min_cost_flow(n, tail, head, cap, cost, sup)
    fake = dataclasses.replace(r, **{field: value(r)})
    return bool(check_flow_certificate(n, tail, head, cap, cost, fake, supply=sup)), r


TAMPER = {
    "status": lambda r: "optimal!" if r.status == "optimal" else "optimal",
    "cost": lambda r: r.cost + 1,
    "value": lambda r: r.value + 1,
    "shortfall": lambda r: r.shortfall + 1,
    "flow": lambda r: np.where(np.arange(r.flow.size) == 0, r.flow + 1, r.flow),
}


@fuzz(1.0)
@given(networks(), st.sampled_from(sorted(TAMPER)))
def test_tampered_results_are_never_certified(net, field):
    out = run_isolated(_tampered, net, field, TAMPER[field], case=f"tampered {field}")
    out.check_clean("tampered result")
    if out.ok:
        certified, r = out.value
        if field == "flow" and r.flow.size == 0:
            return
        n, tail, head, cap, cost, sup = net
        if field == "flow" and tail[0] == head[0] and cost[0] == 0 and r.flow[0] + 1 <= cap[0]:
            return  # one more unit around a free self-loop is another optimal flow, rightly certified
        assert not certified, f"a result with a wrong {field} was certified"


def test_certificate_refuses_what_is_not_a_result():
    for bad in (None, 3, "optimal", {"flow": []}):
        out = run_isolated(lambda: check_flow_certificate(2, [0], [1], [1], [1], bad, supply=[1, -1]),
                           case=f"result={bad!r}")
        out.check_clean("check_flow_certificate")
        assert not out.ok and out.error_type is TypeError


def test_int64_edges_in_every_argument():
    for v in INT64_EDGES:
        for pos in range(5):
            args = [np.array([0]), np.array([1]), np.array([1]), np.array([1]), np.array([1, -1])]
            args[pos] = np.array([v]) if pos < 4 else np.array([v, -v])
            out = run_isolated(lambda: min_cost_flow(2, *args).cost, case=f"arg {pos} = {v}")
            out.check_clean("min_cost_flow int64 edge")
