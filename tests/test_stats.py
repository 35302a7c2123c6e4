"""The one confidence-interval module: its intervals against scipy.stats computed independently."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from spare_core._stats import mean_ci, paired_ratio_ci, t_quantile

positive = st.floats(min_value=0.05, max_value=50.0, allow_nan=False)


@given(st.lists(st.floats(min_value=-1e3, max_value=1e3), min_size=2, max_size=30),
       st.sampled_from([0.5, 0.9, 0.95, 0.99]))
@settings(max_examples=200, deadline=None)
def test_mean_ci_is_scipy_t_interval_without_bounds(xs, level):
    xs = np.asarray(xs)
    m, lo, hi = mean_ci(xs, level)
    assert m == pytest.approx(xs.mean(), abs=1e-12)
    if xs.std(ddof=1) == 0:
        assert lo == hi == pytest.approx(m)
        return
    want = stats.t.interval(level, xs.size - 1, loc=xs.mean(), scale=stats.sem(xs))
    assert (lo, hi) == pytest.approx(want, rel=1e-9, abs=1e-9)


@given(st.lists(st.tuples(positive, positive), min_size=2, max_size=20))
@settings(max_examples=200, deadline=None)
def test_paired_ratio_ci_is_the_t_interval_of_the_log_ratios(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    d, lo, hi = paired_ratio_ci(a, b)
    logs = np.log(a / b)
    assert d == pytest.approx(math.expm1(logs.mean()), rel=1e-9, abs=1e-12)
    if logs.std(ddof=1) < 1e-12:
        return
    # scipy's paired t test on the logs gives the same interval
    res = stats.ttest_rel(np.log(a), np.log(b))
    ci = res.confidence_interval(0.95)
    assert (lo, hi) == pytest.approx((math.expm1(ci.low), math.expm1(ci.high)), rel=1e-7, abs=1e-9)
    # swapping the two strategies mirrors the interval: (1 + d)(1 + d') = 1
    d2, lo2, hi2 = paired_ratio_ci(b, a)
    assert (1 + d) * (1 + d2) == pytest.approx(1.0)
    if 1 + lo > 1e-3:  # below that, 1 + expm1(x) has lost the digits to compare
        assert (1 + lo) * (1 + hi2) == pytest.approx(1.0, rel=1e-6)


def test_paired_ratio_ci_edges():
    d, lo, hi = paired_ratio_ci([1.2], [1.0])
    assert d == pytest.approx(0.2) and math.isnan(lo) and math.isnan(hi)
    with pytest.raises(ValueError, match="paired"):
        paired_ratio_ci([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="positive"):
        paired_ratio_ci([1.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="level"):
        t_quantile(1.0, 3)


def test_the_map_margin_is_the_one_paired_interval():
    from spare_core.sim import Scenario
    from spare_core.sim.strategy_map import MapSettings, Strategy, evaluate_cell

    sc = Scenario(8, n_steps=200, t_compute=10.0, t_allreduce=1.0, system_mtbf=60.0, restart_time=30.0,
                  checkpoint_time=5.0)
    cell = evaluate_cell(sc, [Strategy("ckpt"), Strategy("spare")], MapSettings(seeds=4, min_seeds=4,
                                                                                redundancies=(2, 3)))
    w, ru = cell.pick(cell.winner), cell.pick(cell.runner_up)
    by = dict(zip(w.seeds, w.values))
    got = paired_ratio_ci([v for s, v in zip(ru.seeds, ru.values) if s in by], [by[s] for s in ru.seeds if s in by])
    assert (cell.margin, cell.margin_low, cell.margin_high) == pytest.approx(got)
    assert cell.margin > 0
