"""Every family of bench/tables/flow.py on small instances: each method (and ``auto``)
against networkx and, when installed, OR-Tools, with the certificate checked on every
result. The benchmark's families are the ones its table reports; these are their
correctness counterpart."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bench.peers import certified, solve_networkx, solve_ortools, solve_ours_result
from bench.workloads import FLOW_FAMILIES as FAMILIES

METHODS = ("auto", "ssp", "cost_scaling", "network_simplex")


def _has_ortools() -> bool:
    try:
        import ortools.graph.python.min_cost_flow  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arcs=st.integers(100, 900), seed=st.integers(0, 10**6))
def test_family_every_method_against_peers(family, arcs, seed):
    inst = FAMILIES[family][0](arcs, seed)
    ref = solve_networkx(inst)[1]
    if _has_ortools():
        assert solve_ortools(inst)[1] == ref
    for method in METHODS:
        r = solve_ours_result(inst, method)
        assert certified(inst, r)
        assert (r.cost, r.status) == (ref, "optimal"), method
