import math

import numpy as np
import pytest
from scipy.special import comb

from spare_core.strategies.spare.analytic import (
    endurable_failures,
    endurable_failures_consecutive,
    endurable_failures_mc,
    overhead_lower_bound,
    overhead_mc,
    stack_depth_bound,
)
from spare_core.strategies.spare.layout import StackedLayout


def cyclic_counts_without_run(n, r):
    """counts[k] = number of k-subsets of Z_n with no r cyclically consecutive elements (exact DP)."""
    counts = [0] * (n + 1)
    # a = length of the chosen run at positions 0..a-1 with position a not chosen; the rest is a
    # linear string of length n - a - 1 whose trailing run b must keep a + b < r
    for a in range(min(r - 1, n - 1) + 1):
        f = {(0, 0): 1}  # (ones, current run) -> number of strings
        for _ in range(n - a - 1):
            g = {}
            for (ones, run), c in f.items():
                g[(ones, 0)] = g.get((ones, 0), 0) + c
                if run + 1 < r:
                    g[(ones + 1, run + 1)] = g.get((ones + 1, run + 1), 0) + c
            f = g
        for (ones, run), c in f.items():
            if a + run < r:
                counts[ones + a] += c
    return counts


def exact_endured_by_dp(n, r):
    """E[failures endured before the wipe-out] for consecutive stacks, random failure order."""
    counts = cyclic_counts_without_run(n, r)
    return float(sum(counts[k] / comb(n, k, exact=True) for k in range(1, n + 1)))


@pytest.mark.parametrize("n,r", [(1, 1), (2, 2), (5, 1), (9, 2), (30, 3), (31, 5), (40, 40), (60, 7)])
def test_exact_consecutive_formula_equals_dp(n, r):
    assert endurable_failures_consecutive(n, r) == pytest.approx(exact_endured_by_dp(n, r), rel=1e-12)


def test_exact_oracle_small_cases_by_enumeration():
    import itertools

    for n, r in [(5, 2), (7, 3), (8, 2), (6, 6)]:
        for k in range(n + 1):
            brute = sum(
                1
                for sub in itertools.combinations(range(n), k)
                if not any(all((s + i) % n in sub for i in range(r)) for s in range(n))
            )
            assert brute == cyclic_counts_without_run(n, r)[k]


def test_closed_forms():
    for n, r in [(200, 2), (1000, 10), (600, 20)]:
        mu = endurable_failures(n, r)
        assert mu == pytest.approx(math.gamma(1 / r) / r * n ** (1 - 1 / r))
    assert endurable_failures(50, 1) == pytest.approx(1.0)
    assert [stack_depth_bound(4, k) for k in range(4)] == [1, 2, 2, 4]
    # bound: mean of ceil(N / (N - k)) over k < floor(mu), computed independently
    n, r = 1000, 5
    m = int(endurable_failures(n, r))
    assert overhead_lower_bound(n, r) == pytest.approx(np.mean([math.ceil(n / (n - k)) for k in range(m)]))
    with pytest.raises(ValueError, match="redundancy must be <= n_groups"):
        endurable_failures(3, 4)
    with pytest.raises(ValueError, match="n_failed must be <= 9"):
        stack_depth_bound(10, 10)
    with pytest.raises(TypeError, match="n_groups must be an integer"):
        overhead_lower_bound(10.5, 2)


@pytest.mark.parametrize("n,r", [(40, 2), (40, 3)])
def test_mc_endured_failures_contains_exact_value(n, r):
    exact = endurable_failures_consecutive(n, r)
    est = endurable_failures_mc(StackedLayout(n, r), 400, seed=11, confidence=0.999)
    assert exact in est, (exact, est)
    assert est.n_samples == 400 and est.low < est.mean < est.high


def test_mc_reproducible_and_closed_form_bias_small_for_sidon():
    lay = StackedLayout.sidon(200, 4, seed=0)
    a = endurable_failures_mc(lay, 150, seed=3)
    b = endurable_failures_mc(lay, 150, seed=3)
    assert np.array_equal(a.samples, b.samples)
    # the closed form assumes independent type losses, which Sidon offsets nearly give
    assert abs(a.mean / endurable_failures(200, 4) - 1) < 0.15


def test_overhead_mc_against_bound():
    est = overhead_mc(StackedLayout(100, 4), 40, seed=2)
    same = endurable_failures_mc(StackedLayout(100, 4), 40, seed=2)
    assert np.array_equal(est.endured.samples, same.samples)
    assert np.all(est.stack_depth.samples >= est.bound.samples - 1e-12)
    assert 0.0 <= est.phase0_fraction.mean <= 1.0
    assert est.patch_layers.mean > 0
    assert "OverheadEstimate" in repr(est) and "ci=" in repr(est.stack_depth)


def test_mc_bad_input():
    lay = StackedLayout(10, 2)
    with pytest.raises(TypeError, match="seed must be given"):
        endurable_failures_mc(lay, 10, seed=None)
    with pytest.raises(ValueError, match="n_trials must be >= 2"):
        overhead_mc(lay, 1, seed=0)
    with pytest.raises(ValueError, match="confidence must be < 1"):
        endurable_failures_mc(lay, 10, seed=0, confidence=1.0)
    with pytest.raises(TypeError, match="layout must be a StackedLayout"):
        endurable_failures_mc((10, 2), 10, seed=0)
