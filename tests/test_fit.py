"""events.fit: censored ML against scipy, profile-interval certificates, coverage of the
intervals over seeded repeats, durations from traces against a slow reference."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import optimize, stats

from spare_core.distributions import Exponential, LogNormal, Weibull
from spare_core.events.fit import Durations, compare, durations, fit
from spare_core.events.trace import Trace


def scipy_loglik(law, params, x, obs):
    """Independent evaluation of the censored log-likelihood with scipy.stats."""
    if law == "exponential":
        d = stats.expon(scale=params["mean"])
    elif law == "weibull":
        d = stats.weibull_min(params["shape"], scale=params["scale"])
    else:
        d = stats.lognorm(params["sigma"], scale=math.exp(params["mu"]))
    return float(d.logpdf(x[obs]).sum() + d.logsf(x[~obs]).sum())


def censored_sample(dist, n, cut, seed):
    rng = np.random.default_rng(seed)
    x = dist.sample(rng, n)
    return np.minimum(x, cut), x < cut


@settings(max_examples=15)
@given(st.integers(0, 2**32 - 1), st.floats(0.4, 3.0), st.integers(20, 300), st.sampled_from([np.inf, 2.0, 0.7]))
def test_ml_matches_scipy(seed, shape, n, cut_rel):
    """Our maximum is at least as high as scipy's and evaluates to the same log-likelihood."""
    for law, dist in (("weibull", Weibull(shape, 50.0)), ("lognormal", LogNormal(50.0, shape)),
                      ("exponential", Exponential(50.0))):
        x, obs = censored_sample(dist, n, cut_rel * 50.0, seed)
        if obs.sum() < 3 or np.unique(x[obs]).size < 3:
            continue
        f = fit(x, law, observed=obs)
        assert f.loglik == pytest.approx(scipy_loglik(law, f.params, x, obs), rel=1e-9, abs=1e-7)
        data = stats.CensoredData(uncensored=x[obs], right=x[~obs]) if (~obs).any() else x
        if law == "weibull":
            k, _, lam = stats.weibull_min.fit(data, floc=0)
            theirs = scipy_loglik(law, {"shape": k, "scale": lam}, x, obs)
        elif law == "lognormal":
            s, _, sc = stats.lognorm.fit(data, floc=0)
            theirs = scipy_loglik(law, {"mu": math.log(sc), "sigma": s}, x, obs)
        else:
            theirs = scipy_loglik(law, {"mean": x.sum() / obs.sum()}, x, obs)
        assert f.loglik >= theirs - 1e-7 * abs(theirs)


def test_closed_forms():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    obs = np.array([True, True, False, True])
    assert fit(x, "exponential", observed=obs).params["mean"] == 15.0 / 3
    f = fit(x, "lognormal")
    assert f.params["mu"] == pytest.approx(np.log(x).mean(), rel=1e-14)
    assert f.params["sigma"] == pytest.approx(np.log(x).std(), rel=1e-14)
    assert isinstance(f.distribution, LogNormal) and f.distribution.mu == pytest.approx(f.params["mu"], rel=1e-14)


def profile_scipy(law, q, value, x, obs):
    """Profile log-likelihood of quantity q at value, maximised over the other parameter
    by scipy (bounded search on a wide log grid + refinement): an independent oracle."""
    def ll(nu):
        if law == "weibull":
            k = math.exp(nu)
            lam = value if q == "scale" else value / math.gamma(1 + 1 / k)
            p = {"shape": k, "scale": lam}
        else:
            s = math.exp(nu)
            p = {"mu": value, "sigma": s} if q == "mu" else {"mu": math.log(value) - s * s / 2, "sigma": s}
        return scipy_loglik(law, p, x, obs)
    grid = np.linspace(-4, 3, 141)
    best = grid[int(np.argmax([ll(g) for g in grid]))]
    res = optimize.minimize_scalar(lambda v: -ll(v), bounds=(best - 0.05, best + 0.05), method="bounded",
                                   options={"xatol": 1e-10})
    return -res.fun


@pytest.mark.parametrize("law, dist, qs", [
    ("weibull", Weibull(0.7, 100.0), ("scale", "mean")),
    ("lognormal", LogNormal(100.0, 1.2), ("mu", "mean")),
])
def test_interval_bounds_are_likelihood_certificates(law, dist, qs):
    """At each bound the profile log-likelihood (recomputed by scipy) is max - chi2_1(0.95)/2."""
    x, obs = censored_sample(dist, 80, 150.0, 11)
    f = fit(x, law, observed=obs)
    target = f.loglik - 0.5 * stats.chi2.ppf(0.95, 1)
    for q in qs:
        lo, hi = f.interval(q)
        assert 0 < lo < (f.mean if q == "mean" else f.params[q]) < hi < np.inf
        for b in (lo, hi):
            assert profile_scipy(law, q, b, x, obs) == pytest.approx(target, abs=1e-6)


def test_exponential_interval_matches_the_closed_form_root():
    x, obs = censored_sample(Exponential(10.0), 40, 12.0, 5)
    f = fit(x, "exponential", observed=obs)
    d, s = obs.sum(), x.sum()
    g = lambda th: -d * math.log(th) - s / th - (f.loglik - 0.5 * stats.chi2.ppf(0.9, 1))  # noqa: E731
    lo, hi = f.interval("mean", 0.9)
    assert lo == pytest.approx(optimize.brentq(g, 1e-3, s / d), rel=1e-10)
    assert hi == pytest.approx(optimize.brentq(g, s / d, 1e6), rel=1e-10)


@pytest.mark.parametrize("law, dist, q, truth, reps", [
    ("exponential", Exponential(30.0), "mean", 30.0, 300),
    ("weibull", Weibull(0.78, 30.0), "shape", 0.78, 200),
    ("weibull", Weibull(0.78, 30.0), "mean", Weibull(0.78, 30.0).mean, 120),
    ("lognormal", LogNormal(30.0, 1.5), "mean", 30.0, 100),
])
def test_intervals_cover_at_the_stated_level(law, dist, q, truth, reps):
    """Seeded repeats with censoring: the 90 % intervals contain the truth in ~90 % of them
    (binomial 3-sigma band), and the point estimates are centred on it."""
    hits, est = 0, []
    for rep in range(reps):
        x, obs = censored_sample(dist, 60, 2.5 * dist.mean, 1000 + rep)
        f = fit(x, law, observed=obs, confidence=0.9)
        lo, hi = f.interval(q)
        hits += lo <= truth <= hi
        est.append(f.mean if q == "mean" else f.params[q])
    sd = math.sqrt(0.9 * 0.1 / reps)
    assert abs(hits / reps - 0.9) <= 3 * sd, hits / reps
    assert abs(np.median(est) / truth - 1) < 0.1


def renewal_trace(law, n_units, end, seed):
    """Each unit a renewal process of `law` from time 0 (failed unit replaced at once)."""
    rng = np.random.default_rng(seed)
    times, units = [], []
    for u in range(n_units):
        t = 0.0
        while True:
            t += float(law.sample(rng, 1)[0])
            if t >= end:
                break
            times.append(t)
            units.append(u)
    order = np.argsort(times, kind="stable")
    return Trace(np.asarray(times)[order], np.asarray(units)[order], n_units=n_units, end=end)


def test_fit_recovers_a_node_law_from_a_censored_log():
    """A 60-day log of 512 nodes with Weibull(0.7) lifetimes (mean 40 days): most nodes
    never fail, their censored windows carry most of the information."""
    day = 86400.0
    law = Weibull.from_mean(40 * day, 0.7)
    tr = renewal_trace(law, 512, 60 * day, 3)
    f = fit(tr, "weibull")
    assert f.n_censored == 512 and f.n_failures == tr.n_events
    for q, truth in (("shape", 0.7), ("scale", law.scale), ("mean", law.mean)):
        lo, hi = f.interval(q)
        assert lo < truth < hi, (q, lo, truth, hi)
    # dropping the censored windows would be badly biased: the mean would come out < 60 days
    naive = fit(durations(tr).times[durations(tr).observed], "weibull")
    assert naive.mean < 30 * day < f.interval("mean")[0]


def durations_reference(tr, level, origin):
    """Slow reference: walk each unit's (or the system's) failures in order."""
    out = []
    if level == "system":
        inst = sorted(set(tr.times.tolist()))
        prev = 0.0 if origin == "start" else (inst[0] if inst else None)
        for t in inst:
            if prev is not None and (origin == "start" or t != inst[0]):
                out.append((t - prev, True))
            prev = t
        if prev is not None:
            out.append((tr.end - prev, False))
    else:
        for u in range(tr.n_units):
            ts = sorted(t for t, v in zip(tr.times.tolist(), tr.units.tolist()) if v == u)
            prev = 0.0 if origin == "start" else None
            for t in ts:
                if prev is not None:
                    out.append((t - prev, True))
                prev = t
            if prev is not None:
                out.append((tr.end - prev, False))
    return sorted(o for o in out if o[0] > 0), sum(1 for o in out if o[0] <= 0)


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 4)), max_size=25), st.integers(0, 5),
       st.sampled_from(["unit", "system"]), st.sampled_from(["start", "first-failure"]))
def test_durations_against_slow_reference(events, extra_units, level, origin):
    events = sorted(events)
    times = [float(t) for t, _ in events]
    units = [u for _, u in events]
    n = (max(units) + 1 if units else 1) + extra_units
    tr = Trace(times, units, n_units=n, end=25.0)
    d = durations(tr, level=level, origin=origin)
    ref, n_zero = durations_reference(tr, level, origin)
    assert sorted(zip(d.times.tolist(), d.observed.tolist())) == ref
    assert d.n_zero == n_zero and np.all(d.times > 0)


def test_compare_ranks_by_aic():
    rng = np.random.default_rng(0)
    c = compare(Exponential(5.0).sample(rng, 4000))
    assert c.exponential_vs_weibull_p > 0.01 and c.delta_aic[0] == 0.0
    assert abs(sum(c.weights) - 1) < 1e-12 and list(c.delta_aic) == sorted(c.delta_aic)
    assert {f.law for f in c.fits} == {"exponential", "weibull", "lognormal"}
    assert c.best.law in ("exponential", "weibull") and "(exponential) vs weibull: p =" in repr(c)
    c = compare(LogNormal(5.0, 2.0).sample(rng, 4000), laws=("weibull", "lognormal"))
    assert c.best.law == "lognormal" and c.exponential_vs_weibull_p is None
    f = c.best
    assert f.aic == pytest.approx(4 - 2 * f.loglik) and f.bic == pytest.approx(2 * math.log(4000) - 2 * f.loglik)


def test_bad_input():
    for call, exc, msg in [
        (lambda: fit([1.0, 2.0], "gamma"), ValueError, "law must be one of"),
        (lambda: fit([1.0, 0.0], "exponential"), ValueError, "durations must be finite and > 0, got 0.0 at index 1"),
        (lambda: fit([1.0, np.nan]), ValueError, "finite and > 0"),
        (lambda: fit([[1.0]]), ValueError, "1-dimensional"),
        (lambda: fit(["a"]), TypeError, "array of durations"),
        (lambda: fit([1.0, 2.0], observed=[True, False]), ValueError, "at least 2 observed failure"),
        (lambda: fit([1.0, 2.0], observed=[1, 0]), ValueError, "observed must be a bool array"),
        (lambda: fit([3.0, 3.0, 3.0]), ValueError, "at least 2 distinct failure durations"),
        (lambda: fit([1.0], "exponential", observed=[False]), ValueError, "at least 1 observed failure"),
        (lambda: fit([1.0, 2.0], confidence=1.0), ValueError, "confidence must be <="),
        (lambda: fit(Trace([1.0, 2.0], [0, 0]), observed=[True]), ValueError, "observed is given by the trace"),
        (lambda: durations([1.0]), TypeError, "trace must be a Trace"),
        (lambda: durations(Trace([1.0], [0]), level="rack"), ValueError, "level must be one of"),
        (lambda: compare([1.0, 2.0, 3.0], laws=("weibull", "weibull")), ValueError, "distinct"),
        (lambda: fit([1.0, 2.0, 4.0]).interval("rate"), ValueError, "quantity must be one of"),
    ]:
        with pytest.raises(exc, match=msg):
            call()
    assert isinstance(durations(Trace([1.0], [0])), Durations)
