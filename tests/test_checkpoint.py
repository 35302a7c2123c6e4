"""Checkpoint-interval formulas against independent oracles (numeric optimisation, Monte-Carlo)."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from spare_core.checkpoint import (
    availability,
    availability_optimal,
    daly_interval,
    expected_segment_time,
    young_interval,
)

times = st.floats(min_value=1.0, max_value=1e5)


@given(ts=times, tr=st.floats(min_value=0.0, max_value=1e5), tf=times)
def test_closed_form_period_is_the_numeric_argmax(ts, tr, tf):
    got = availability_optimal(ts, tr, tf)
    res = minimize_scalar(
        lambda t: -availability(t, ts, tr, tf),
        bounds=(ts * (1 + 1e-9), 1e3 * (ts + tf + tr)),
        method="bounded",
        options={"xatol": 1e-10 * (ts + tf + tr)},
    )
    # the numeric optimum can only be as good as the closed form, never better
    assert availability(got.period, ts, tr, tf) >= -res.fun - 1e-9
    assert got.period == pytest.approx(res.x, rel=1e-3)
    assert got.meaningful == (got.period <= tf)
    if got.meaningful:
        assert got.availability == pytest.approx(availability(got.period, ts, tr, tf))
    else:
        assert got.availability is None
        assert "exceeds the mean time between restarts" in got.reason


def test_paper_checkpoint_only_regime_is_flagged():
    # docs/model.md 5: T_s = 60 s, T_r = 60 min, failure every 5 min -> T_c* ~ 12 min > 5 min
    p = availability_optimal(60.0, 3600.0, 300.0)
    assert not p.meaningful
    assert 11 * 60 < p.period < 13 * 60
    assert "meaningless" in repr(p)
    ok = availability_optimal(60.0, 3600.0, 100 * 300.0)
    assert ok.meaningful and "availability=" in repr(ok)


@given(d=times, m=times)
def test_young_and_daly(d, m):
    y = young_interval(d, m)
    assert y == pytest.approx(math.sqrt(2 * d * m))
    dl = daly_interval(d, m)
    if d >= 2 * m:
        assert dl == m
    else:
        # Daly's correction: positive, and within the first-order terms of Young's value
        assert dl > 0
        x = d / (2 * m)
        assert dl == pytest.approx(y * (1 + math.sqrt(x) / 3 + x / 9) - d)


def test_daly_close_to_young_when_save_is_short():
    assert daly_interval(1.0, 1e6) == pytest.approx(young_interval(1.0, 1e6), rel=2e-3)


def test_expected_segment_time_against_monte_carlo():
    rng = np.random.default_rng(12345)
    lam, work, ts, tr = 1 / 500.0, 300.0, 60.0, 200.0
    seg = work + ts
    n = 40_000
    total = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    while not done.all():
        idx = np.flatnonzero(~done)
        f = rng.exponential(1 / lam, size=idx.size)
        ok = f >= seg
        total[idx[ok]] += seg
        total[idx[~ok]] += f[~ok] + tr
        done[idx[ok]] = True
    want = expected_segment_time(work, ts, tr, lam)
    se = total.std() / math.sqrt(n)
    assert abs(total.mean() - want) < 4 * se


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: young_interval(0.0, 10.0), "save_time must be > 0"),
        (lambda: young_interval(1.0, -5.0), "mtbf must be > 0"),
        (lambda: daly_interval(float("nan"), 10.0), "save_time must be finite"),
        (lambda: availability_optimal(60.0, -1.0, 300.0), "restart_time must be >= 0"),
        (lambda: availability_optimal(60.0, 1.0, 0.0), "time_between_restarts must be > 0"),
        (lambda: availability(50.0, 60.0, 1.0, 300.0), "period must exceed save_time"),
        (lambda: expected_segment_time(1.0, 1.0, 1.0, 0.0), "failure_rate must be > 0"),
    ],
)
def test_bad_input_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_input_type_errors():
    with pytest.raises(TypeError, match="save_time must be a real number"):
        young_interval("60", 10.0)
    with pytest.raises(TypeError, match="mtbf must be a real number"):
        daly_interval(1.0, True)
