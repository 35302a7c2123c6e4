"""Lifetime / repair distributions: parameters recovered from samples, bad input."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from spare_core.distributions import (
    Deterministic,
    Exponential,
    LogNormal,
    Weibull,
    as_distribution,
)

N = 200_000


@pytest.mark.parametrize("shape", [0.5, 0.78, 1.0, 2.5])
def test_weibull_mean_and_shape_recovered_from_samples(shape):
    w = Weibull.from_mean(300.0, shape)
    x = w.sample(np.random.default_rng(12345), N)
    assert x.dtype == np.float64 and x.shape == (N,)
    assert np.all(x > 0) and np.all(np.isfinite(x))
    # mean within 5 standard errors
    se = math.sqrt(w.var / N)
    assert abs(x.mean() - 300.0) < 5 * se
    # maximum-likelihood fit of shape and scale (location fixed at 0)
    k, _, lam = stats.weibull_min.fit(x[:50_000], floc=0.0)
    assert k == pytest.approx(shape, rel=0.02)
    assert lam == pytest.approx(w.scale, rel=0.03)
    # and the whole law: Kolmogorov-Smirnov against the analytic cdf
    assert stats.kstest(x[:20_000], w.cdf).pvalue > 1e-3


def test_weibull_from_mean_matches_gamma_formula():
    w = Weibull.from_mean(5.0, 0.78)
    assert w.scale == pytest.approx(5.0 / math.gamma(1 + 1 / 0.78))
    assert w.mean == pytest.approx(5.0)
    assert Weibull(1.0, 7.0).mean == pytest.approx(7.0)


def test_weibull_cdf_agrees_with_scipy():
    w = Weibull(0.78, 123.0)
    xs = np.array([-1.0, 0.0, 1.0, 50.0, 123.0, 1000.0])
    np.testing.assert_allclose(w.cdf(xs), stats.weibull_min(0.78, scale=123.0).cdf(xs), rtol=1e-12, atol=1e-15)


def test_exponential_and_lognormal_moments():
    rng = np.random.default_rng(7)
    e = Exponential(60.0)
    x = e.sample(rng, N)
    assert abs(x.mean() - 60.0) < 5 * math.sqrt(e.var / N)
    assert stats.kstest(x[:20_000], e.cdf).pvalue > 1e-3

    ln = LogNormal(600.0, 0.8)
    y = ln.sample(rng, N)
    assert abs(y.mean() - 600.0) < 5 * math.sqrt(ln.var / N)
    assert np.log(y).std() == pytest.approx(0.8, rel=0.01)
    assert np.log(y).mean() == pytest.approx(ln.mu, abs=0.01)
    assert stats.kstest(y[:20_000], ln.cdf).pvalue > 1e-3
    np.testing.assert_allclose(
        ln.cdf([10.0, 600.0]), stats.lognorm(0.8, scale=math.exp(ln.mu)).cdf([10.0, 600.0]), rtol=1e-12
    )


def test_lognormal_from_mu_sigma_round_trip():
    d = LogNormal.from_mu_sigma(2.0, 0.5)
    assert d.mu == pytest.approx(2.0)
    assert d.mean == pytest.approx(math.exp(2.0 + 0.125))


def test_deterministic_consumes_no_randomness():
    rng = np.random.default_rng(3)
    before = rng.bit_generator.state
    np.testing.assert_array_equal(Deterministic(60).sample(rng, (2, 3)), np.full((2, 3), 60.0))
    assert rng.bit_generator.state == before
    assert Deterministic(60).var == 0.0 and Deterministic(60).mean == 60.0


def test_sampling_is_reproducible_and_does_not_use_global_state():
    w = Weibull(0.78, 10.0)
    a = w.sample(np.random.default_rng(99), 1000)
    np.random.seed(0)
    b = w.sample(np.random.default_rng(99), 1000)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(w.sample(99, 10), w.sample(np.random.SeedSequence(99), 10))


@given(shape=st.floats(0.05, 10.0), scale=st.floats(1e-3, 1e6))
def test_samples_always_positive_and_finite(shape, scale):
    x = Weibull(shape, scale).sample(np.random.default_rng(0), 256)
    assert np.all(x > 0) and np.all(np.isfinite(x))


def test_reprs_and_equality():
    assert "shape=0.78" in repr(Weibull(0.78, 2.0))
    assert repr(Exponential(60.0)) == "Exponential(mean=60)"
    assert repr(LogNormal(600, 1)) == "LogNormal(mean=600, sigma=1)"
    assert repr(Deterministic(5)) == "Deterministic(value=5)"
    assert Weibull(1, 2) == Weibull(1.0, 2.0) and Weibull(1, 2) != Exponential(2)
    assert len({Weibull(1, 2), Weibull(1, 2)}) == 1


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Weibull(0, 1), "weibull shape must be > 0"),
        (lambda: Weibull(-0.5, 1), "weibull shape must be > 0"),
        (lambda: Weibull(1, 0), "weibull scale must be > 0"),
        (lambda: Weibull(float("nan"), 1), "weibull shape must be finite"),
        (lambda: Weibull.from_mean(-1, 0.78), "weibull mean must be > 0"),
        (lambda: Weibull.from_mean(1, 0), "weibull shape must be > 0"),
        (lambda: Exponential(0), "exponential mean must be > 0"),
        (lambda: Exponential(float("inf")), "exponential mean must be finite"),
        (lambda: LogNormal(-1, 1), "lognormal mean must be > 0"),
        (lambda: LogNormal(1, 0), "lognormal sigma must be > 0"),
        (lambda: Deterministic(0), "deterministic value must be > 0"),
        (lambda: Deterministic(-3), "deterministic value must be > 0"),
        (lambda: as_distribution(-2.0, "repair"), "repair must be > 0"),
        (lambda: Weibull(1, 1).sample(np.random.default_rng(0), -1), "size must be >= 0"),
    ],
)
def test_bad_input_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Weibull("1", 1), "weibull shape must be a real number"),
        (lambda: Exponential(True), "exponential mean must be a real number"),
        (lambda: as_distribution("weibull", "lifetime"), "lifetime must be a distribution"),
        (lambda: Weibull(1, 1).sample(np.random.default_rng(0), 2.5), "size must be an integer"),
        (lambda: Weibull(1, 1).sample(None, 2), "seed must be given"),
    ],
)
def test_bad_input_type_error(make, match):
    with pytest.raises(TypeError, match=match):
        make()


def test_as_distribution():
    assert as_distribution(60, "repair") == Deterministic(60.0)
    w = Weibull(1, 2)
    assert as_distribution(w, "lifetime") is w


@pytest.mark.parametrize(
    "dist, ref",
    [
        (Weibull(0.78, 50.0), stats.weibull_min(0.78, scale=50.0)),
        (Exponential(10.0), stats.expon(scale=10.0)),
        (LogNormal(20.0, 1.5), stats.lognorm(1.5, scale=math.exp(LogNormal(20.0, 1.5).mu))),
    ],
    ids=["weibull", "exponential", "lognormal"],
)
def test_cumulative_hazard_and_its_inverse_against_scipy(dist, ref):
    x = np.geomspace(1e-6, 1e4, 200) * dist.mean
    h = dist.cumulative_hazard(x)
    # scipy's logsf is the independent oracle: H = -log S
    np.testing.assert_allclose(h, -ref.logsf(x), rtol=1e-9, atol=1e-300)
    # the inverse recovers x over 10 decades of time (both tails of the hazard)
    ok = h > 1e-280
    np.testing.assert_allclose(dist.inverse_cumulative_hazard(h[ok]), x[ok], rtol=1e-8)
    assert dist.cumulative_hazard(0.0) == 0.0


def test_deterministic_has_no_hazard():
    with pytest.raises(NotImplementedError):
        Deterministic(1.0).inverse_cumulative_hazard(1.0)


@pytest.mark.parametrize(
    "dist, ref",
    [
        (Weibull(0.78, 50.0), stats.weibull_min(0.78, scale=50.0)),
        (Weibull(2.5, 10.0), stats.weibull_min(2.5, scale=10.0)),
        (Exponential(10.0), stats.expon(scale=10.0)),
        (LogNormal(20.0, 1.5), stats.lognorm(1.5, scale=math.exp(LogNormal(20.0, 1.5).mu))),
        (Deterministic(7.0), None),
    ],
    ids=["weibull-0.78", "weibull-2.5", "exponential", "lognormal", "deterministic"],
)
def test_residual_lifetime_has_the_stationary_law(dist, ref):
    """sample_residual draws the forward-recurrence time, density S(t) / mean; the oracle
    integrates scipy's survival function numerically (an independent route)."""
    from scipy import integrate

    x = dist.sample_residual(np.random.default_rng(3), 4000)
    assert np.all(x > 0) and np.all(np.isfinite(x))
    if ref is None:
        cdf = lambda t: np.clip(np.asarray(t) / dist.value, 0.0, 1.0)  # noqa: E731 - U(0, value)
    else:
        # the residual cdf on a fine grid by piecewise quadrature of S, then interpolated
        grid = np.r_[0.0, np.geomspace(1e-6 * dist.mean, 60 * dist.mean, 250)]
        pieces = [integrate.quad(ref.sf, a, b)[0] for a, b in zip(grid[:-1], grid[1:])]
        values = np.r_[0.0, np.cumsum(pieces)] / ref.mean()
        cdf = lambda t: np.interp(t, grid, values, right=1.0)  # noqa: E731
    assert stats.kstest(x, cdf).pvalue > 1e-3
    # the residual of a memoryless law is the law itself; of a deterministic one, U(0, value)
    assert dist.sample_residual(np.random.default_rng(1), (2, 3)).shape == (2, 3)
