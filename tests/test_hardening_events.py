"""Regressions of issue 16 in distributions and the event engine."""
import math

import numpy as np
import pytest

from spare_core.distributions import Distribution, Exponential, LogNormal, Weibull
from spare_core.events import Engine, FailureStream, simulate_renewals

# the retired event engine (spare_core.events._engine) is tested until it is removed
pytestmark = pytest.mark.filterwarnings("ignore:spare_core.events.* is retired:DeprecationWarning")


class Law(Distribution):
    """A user's exponential law that returns ``mangle(times)`` instead of the times."""

    def __init__(self, mangle=None, mean=10.0, fail_on=None):
        self.mangle, self._m, self.fail_on, self.calls = mangle, mean, fail_on, 0

    @property
    def mean(self):
        return self._m

    @property
    def var(self):
        return self._m ** 2

    def cdf(self, x):
        return 1 - np.exp(-np.asarray(x) / 10.0)

    def _params(self):
        return (self._m,)

    def _draw(self, rng, size):
        self.calls += 1
        out = rng.exponential(10.0, size)
        if self.fail_on is not None and self.calls == self.fail_on:
            raise RuntimeError("law failed")
        return self.mangle(out) if self.mangle else out


def test_short_batch_from_a_custom_law_is_refused_before_the_engine_reads_it():
    eng = Engine(64, seed=0)
    eng.add_renewals(Law(lambda t: t[:3]))
    with pytest.raises(ValueError, match=r"Law._draw returned shape \(3,\), but \(64,\) times were asked for"):
        eng.step()


def test_short_batch_in_simulate_renewals_and_system_failures_is_refused():
    with pytest.raises(ValueError, match="returned shape"):
        simulate_renewals(100, Law(lambda t: t[:-1]), 1.0, 50.0, seed=0)
    eng = Engine(8, seed=0)
    eng.add_system_failures(Law(lambda t: t[:0]))
    with pytest.raises(ValueError, match="returned shape"):
        eng.step()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_non_finite_or_negative_time_from_a_custom_law_is_refused(bad):
    def mangle(t):
        t[5] = bad
        return t
    with pytest.raises(ValueError, match="times must be finite and >= 0"):
        Law(mangle).sample(np.random.default_rng(0), 10)


def test_custom_law_with_a_negative_mean_is_refused():
    with pytest.raises(ValueError, match="lifetime mean must be positive and finite, got -5.0"):
        simulate_renewals(4, Law(mean=-5.0), 1.0, 10.0, seed=0)


def test_weibull_with_a_tiny_shape_is_a_clear_error():
    with pytest.raises(ValueError, match="weibull parameters must give a finite mean and variance"):
        Weibull(0.005, 1.0)
    with pytest.raises(ValueError, match="weibull shape must be large enough"):
        Weibull.from_mean(1.0, 0.005)


def test_lognormal_variance_overflow_is_a_clear_error():
    with pytest.raises(ValueError, match="lognormal parameters must give a finite mean and variance"):
        LogNormal(1.0, 30.0)


def test_exponential_with_a_huge_mean_never_samples_inf():
    with pytest.raises(ValueError, match="exponential parameters must give a finite mean and variance"):
        Exponential(1e308)
    x = Exponential(1e150).sample(np.random.default_rng(0), 10_000)
    assert np.isfinite(x).all()


def test_tiny_bucket_width_is_refused_not_silently_eventless():
    with pytest.raises(ValueError, match="bucket_width must be at least"):
        Engine(4, seed=0, bucket_width=1e-310)
    # a tiny but representable width only costs speed: the same events as the default
    runs = []
    for width in (None, 1e-300):
        eng = Engine(4, seed=0, bucket_width=width)
        eng.add_renewals(Exponential(10.0), Exponential(1.0))
        eng.run(until=200.0)
        runs.append((eng.stats, eng.now))
    assert runs[0] == runs[1] and runs[0][0].events > 0


def test_run_accepts_max_events_beyond_int64():
    eng = Engine(4, seed=0)
    eng.add_renewals(Exponential(10.0), Exponential(1.0))
    eng.run(until=50.0, max_events=2**63)
    assert eng.now == 50.0


def test_failure_stream_after_an_exception_in_a_custom_law_draws_the_same_sequence():
    n, k = 5000, 600
    ref = [FailureStream(n, Law(), model="system", seed=4)]
    ref = [ref[0].next_failure() for _ in range(k)]
    fs = FailureStream(n, Law(fail_on=2), model="system", seed=4)
    got = []
    with pytest.raises(RuntimeError, match="law failed"):
        for _ in range(k):
            got.append(fs.next_failure())
    assert 0 < len(got) < k          # the law failed mid-stream, at its second batch
    got += [fs.next_failure() for _ in range(k - len(got))]
    assert got == ref
