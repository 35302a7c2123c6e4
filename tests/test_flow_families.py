"""Every family of bench/ratios_flow.py on small instances: each method (and ``auto``)
against networkx and, when installed, OR-Tools, with the certificate checked on every
result. The benchmark's families are the ones its table reports; these are their
correctness counterpart."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spare_core.flow import check_flow_certificate, max_flow_min_cost, min_cost_flow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_flow import solve_networkx, solve_ortools  # noqa: E402
from ratios_flow import FAMILIES  # noqa: E402

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
        if inst.source is not None:
            r = max_flow_min_cost(*inst.network(), inst.source, inst.sink, method=method)
            assert check_flow_certificate(*inst.network(), r, source=inst.source, sink=inst.sink)
        else:
            r = min_cost_flow(*inst.network(), inst.supply, method=method)
            assert check_flow_certificate(*inst.network(), r, supply=inst.supply)
        assert (r.cost, r.status) == (ref, "optimal"), method
