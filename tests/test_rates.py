"""FailureRate: the published figures, exact round trips, conversions and validation."""
import datetime as dt
import math

import pytest
from hypothesis import given, strategies as st

from spare_core.distributions import Exponential, Weibull
from spare_core.events.rates import SECONDS, FailureRate

pos = st.floats(min_value=1e-12, max_value=1e12, allow_nan=False, allow_infinity=False)


def test_public_figures():
    # Llama 3 405B: 419 unexpected interruptions in 54 days on 16,384 GPUs
    llama = FailureRate.from_count(419, dt.timedelta(days=54), units=16_384)
    assert llama == FailureRate.from_count(419, 54, per="day", units=16_384)
    assert llama.system_mtbf(16_384, per="hour") == pytest.approx(54 * 24 / 419, rel=1e-15)
    assert round(llama.per_gpu_year(), 3) == 0.173
    assert llama.expected_failures(54, units=16_384, per="day") == 419.0
    # Meta RSC-1 / RSC-2: 6.50 and 2.34 failures per 1,000 node-days, 8 GPUs per node
    rsc1 = FailureRate.from_node_days(6.50, 1000, gpus_per_node=8)
    assert rsc1.per_node_day() == 0.0065
    assert rsc1.system_mtbf(16_384, unit="gpu", per="hour") == pytest.approx(24 / (6.5e-3 * 2048), rel=1e-15)
    assert round(rsc1.system_mtbf(16_384, unit="gpu", per="hour"), 1) == 1.8
    assert round(rsc1.system_mtbf(131_072, unit="gpu", per="hour"), 2) == 0.23  # the paper's projections
    assert rsc1.system_mtbf(2048, unit="node") == rsc1.system_mtbf(16_384, unit="gpu")
    rsc2 = FailureRate.from_node_days(2.34, 1000, gpus_per_node=8)
    assert rsc2.unit_mtbf("node", per="day") == pytest.approx(1000 / 2.34, rel=1e-15)


@given(pos)
def test_exact_round_trips(x):
    assert FailureRate.from_node_days(x).per_node_day() == x
    assert FailureRate.from_gpu_years(x).per_gpu_year() == x
    for per in SECONDS:
        for unit in ("gpu", "node"):
            assert FailureRate.from_rate(x, per=per, unit=unit).per(per) == x
    assert FailureRate.from_mtbf(x).unit_mtbf() == x
    assert FailureRate.from_mtbf(x, units=600_000, per="minute").system_mtbf(600_000, per="minute") == x
    r = FailureRate.from_node_days(x, gpus_per_node=8)
    assert FailureRate.from_dict(r.to_dict()) == r
    assert r.per_node_day() == x  # exact through the gpu conversion too
    assert FailureRate.from_rate(r.per("day", unit="gpu"), per="day", unit="gpu", gpus_per_node=8).per_node_day() \
        == pytest.approx(x, rel=1e-15)


@given(pos, st.integers(1, 10**7), st.integers(1, 16))
def test_conversions_are_consistent(x, n, g):
    r = FailureRate.from_node_days(x, gpus_per_node=g)
    assert r.system_mtbf(n, unit="node") == pytest.approx(r.unit_mtbf("node") / n, rel=1e-14)
    assert r.unit_mtbf("gpu") == pytest.approx(g * r.unit_mtbf("node"), rel=1e-14)
    assert r.system_mtbf(n * g, unit="gpu") == pytest.approx(r.system_mtbf(n, unit="node"), rel=1e-14)
    assert r.expected_failures(1, units=n, unit="node", per="day") == pytest.approx(x * n, rel=1e-14)


def test_laws_keep_the_mean():
    r = FailureRate.from_mtbf(300.0, units=600_000)  # the SPARe paper's 5-minute system MTBF
    assert r.system_interarrival(600_000) == Exponential(300.0)
    w = r.system_interarrival(600_000, shape=0.78)
    assert isinstance(w, Weibull) and w.shape == 0.78 and w.mean == pytest.approx(300.0, rel=1e-14)
    assert r.lifetime().mean == pytest.approx(300.0 * 600_000, rel=1e-14)
    assert r.lifetime(shape=0.78).mean == pytest.approx(300.0 * 600_000, rel=1e-14)


def test_bad_input():
    for bad, exc, msg in [
        (lambda: FailureRate.from_node_days(0), ValueError, "failures must be > 0"),
        (lambda: FailureRate.from_node_days(-1), ValueError, "failures must be > 0"),
        (lambda: FailureRate.from_node_days(math.nan), ValueError, "failures must be finite"),
        (lambda: FailureRate.from_node_days(True), TypeError, "failures must be a real number"),
        (lambda: FailureRate.from_node_days(1, 0), ValueError, "node_days must be > 0"),
        (lambda: FailureRate.from_count(3, 10, units=0), ValueError, "units must be >= 1"),
        (lambda: FailureRate.from_count(3, dt.timedelta(0), units=2), ValueError, "period must be > 0"),
        (lambda: FailureRate.from_count(3, dt.timedelta(1), units=2, per="day"), ValueError, "do not also give per"),
        (lambda: FailureRate.from_rate(1, per="fortnight", unit="gpu"), ValueError, "per must be one of"),
        (lambda: FailureRate.from_rate(1, per="day", unit="rack"), ValueError, "unit must be one of"),
        (lambda: FailureRate.from_node_days(1, gpus_per_node=0), ValueError, "gpus_per_node must be >= 1"),
        (lambda: FailureRate.from_node_days(1).per_gpu_year(), ValueError, "needs gpus_per_node"),
        (lambda: FailureRate.from_mtbf(0), ValueError, "mtbf must be > 0"),
        (lambda: FailureRate.from_dict({"rate": "1/0"}), ValueError, "fraction"),
        (lambda: FailureRate.from_dict({"rate": "-1/2"}), ValueError, "must be > 0"),
        (lambda: FailureRate.from_dict({"rate": 1, "per": "day"}), ValueError, r"unknown key\(s\) \['per'\]"),
    ]:
        with pytest.raises(exc, match=msg):
            bad()
    r = FailureRate.from_node_days(1)
    with pytest.raises(AttributeError, match="immutable"):
        r.unit = "gpu"


def test_repr_and_hash():
    r = FailureRate.from_node_days(6.5, 1000, gpus_per_node=8)
    assert repr(r) == "FailureRate(0.0065 per node-day, node MTBF 3692.31 h, gpus_per_node=8)"
    assert len({r, FailureRate.from_node_days(6.5, 1000, gpus_per_node=8)}) == 1
