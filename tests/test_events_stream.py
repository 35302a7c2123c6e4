"""FailureStream: order, exhaustion, restarts, common random numbers, MTBF helper, bad input."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spare_core.distributions import Deterministic, Distribution, Exponential, LogNormal, Weibull
from spare_core.events import FailureStream
from spare_core._seeding import EpochStream, child_rng

LIFETIMES = [Weibull(0.78, 50.0), Exponential(10.0), LogNormal(20.0, 1.5), Deterministic(7.0)]


def drain(s):
    out = []
    while True:
        t, u = s.next_failure()
        if u < 0:
            assert t == math.inf
            return out
        out.append((t, u))


class _Uniform(Distribution):
    """A lifetime law without a cumulative hazard: exercises the draw-and-sort path."""

    __slots__ = ()
    kind = "uniform-test"

    @property
    def mean(self):
        return 5.0

    def _draw(self, rng, size):
        return rng.uniform(0.0, 10.0, size)

    def _params(self):
        return ()


@given(
    n=st.integers(1, 300),
    li=st.integers(0, 1),
    seed=st.integers(0, 2**32),
    start=st.floats(0, 1e6),
)
def test_per_unit_without_hazard_is_the_sorted_lifetimes(n, li, seed, start):
    life = [Deterministic(7.0), _Uniform()][li]
    s = FailureStream(n, life, seed=seed, start=start)
    got = drain(s)
    # oracle: the epoch-0 lifetimes, fully sorted by (time, unit) in one go
    draws = start + life.sample(child_rng(np.random.SeedSequence(seed), "per-unit-lifetimes", 0), n)
    order = sorted(range(n), key=lambda u: (draws[u], u))
    assert got == [(draws[u], u) for u in order]
    assert s.n_alive == 0 and not s.alive.any() and s.failures == n
    assert s.peek() == math.inf and s.next_failure() == (math.inf, -1)


@given(
    n=st.integers(1, 300),
    li=st.integers(0, 2),
    seed=st.integers(0, 2**32),
    start=st.floats(0, 1e6),
    batch=st.integers(1, 70),
)
def test_per_unit_by_hazard_hits_every_unit_once_in_time_order(n, li, seed, start, batch):
    life = LIFETIMES[li]
    got = drain(FailureStream(n, life, seed=seed, start=start))
    assert sorted(u for _, u in got) == list(range(n))
    times = np.array([t for t, _ in got])
    assert np.all(np.diff(times) >= 0) and np.all(times >= start) and np.all(np.isfinite(times))
    # consuming in batches of any size gives the same sequence (chunking is internal)
    s = FailureStream(n, life, seed=seed, start=start)
    t, u = [], []
    while s.n_alive:
        bt, bu = s.next_failures(batch)
        t.extend(bt.tolist())
        u.extend(bu.tolist())
    assert list(zip(t, u)) == got


@pytest.mark.parametrize("life", LIFETIMES[:3], ids=lambda d: d.kind)
def test_per_unit_order_statistics_match_sorting_all_lifetimes(life):
    """Renyi sampling vs the definition: the j-th failure time of n fresh units has the law of
    the j-th smallest of n independent lifetimes; the j-th victim is uniform over the units."""
    from scipy import stats

    n, reps, js = 50, 600, (0, 4, 24, 49)
    ours = {j: [] for j in js}
    first_victim = np.zeros(n, dtype=np.int64)
    for seed in range(reps):
        got = drain(FailureStream(n, life, seed=seed))
        for j in js:
            ours[j].append(got[j][0])
        first_victim[got[0][1]] += 1
    ref = np.sort(life.sample(np.random.default_rng(12345), (reps, n)), axis=1)
    for j in js:
        assert stats.ks_2samp(ours[j], ref[:, j]).pvalue > 1e-3, j
    # the smallest of n: P(T_(1) > t) = (1 - F(t))**n exactly
    cdf_min = lambda t: 1.0 - (1.0 - life.cdf(t)) ** n  # noqa: E731
    assert stats.kstest(ours[0], cdf_min).pvalue > 1e-3
    assert stats.chisquare(first_victim).pvalue > 1e-3


def test_per_unit_restart_cost_does_not_grow_with_the_number_of_units():
    # O(1) restarts: a million units and a thousand epochs of a few failures each draw only
    # the consumed failures (drawing every lifetime would be 10^9 draws: minutes, not a second).
    s = FailureStream.with_system_mtbf(10**6, 300.0, 0.78, seed=3)
    for _ in range(1000):
        t = [s.next_failure()[0] for _ in range(3)]
        s.restart(t[-1])
    assert s.epoch == 1000 and s.failures == 3000


@given(n=st.integers(1, 300), seed=st.integers(0, 2**32))
def test_system_model_is_a_renewal_process_hitting_a_permutation(n, seed):
    life = Weibull(0.78, 5.0)
    s = FailureStream(n, life, model="system", seed=seed)
    got = drain(s)
    assert len(got) == n
    times = np.array([t for t, _ in got])
    units = [u for _, u in got]
    assert sorted(units) == list(range(n))  # every alive unit hit exactly once
    assert np.all(np.diff(times) > 0)
    # the gaps are the epoch's inter-arrival draws (drawn in chunks of doubling size)
    rng = EpochStream(np.random.SeedSequence(seed), "system-interarrivals").at(0)
    gaps, chunk = [], 32
    while len(gaps) < n:
        gaps.extend(life.sample(rng, min(chunk, n - len(gaps))))
        chunk *= 2
    np.testing.assert_allclose(np.diff(np.concatenate([[0.0], times])), gaps, rtol=1e-9, atol=1e-9)


def test_peek_does_not_consume_and_alive_is_a_live_read_only_view():
    s = FailureStream(5, Exponential(1.0), seed=3)
    alive = s.alive
    t = s.peek()
    assert s.peek() == t and s.n_alive == 5 and s.now == 0.0
    t2, u = s.next_failure()
    assert t2 == t and s.now == t and not alive[u] and alive.sum() == 4
    with pytest.raises(ValueError):
        alive[0] = False


def test_restart_revives_everyone_and_redraws_clocks():
    s = FailureStream(50, Weibull(0.78, 100.0), seed=11)
    first = [s.next_failure() for _ in range(10)]
    s.restart(first[-1][0] + 60.0)
    assert s.n_alive == 50 and s.alive.all() and s.epoch == 1 and s.now == first[-1][0] + 60.0
    nxt = s.next_failure()
    assert nxt[0] > s.epoch_start
    # epoch 1 uses its own stream: its relative times differ from epoch 0's
    assert nxt[0] - s.epoch_start != first[0][0]


@pytest.mark.parametrize("model", ["per-unit", "system"])
def test_common_random_numbers_across_restart_times(model):
    a = FailureStream(40, Weibull(0.7, 30.0), model=model, seed=2024)
    b = FailureStream(40, Weibull(0.7, 30.0), model=model, seed=2024)
    ea0 = [a.next_failure() for _ in range(3)]
    eb0 = [b.next_failure() for _ in range(12)]
    assert ea0 == eb0[:3]  # same epoch-0 failures
    a.restart(ea0[-1][0] + 1.0)
    b.restart(eb0[-1][0] + 500.0)  # different restart time and failure count
    ra = [(t - a.epoch_start, u) for t, u in (a.next_failure() for _ in range(20))]
    rb = [(t - b.epoch_start, u) for t, u in (b.next_failure() for _ in range(20))]
    assert [u for _, u in ra] == [u for _, u in rb]
    np.testing.assert_allclose([t for t, _ in ra], [t for t, _ in rb], rtol=1e-9)


def test_determinism_and_seed_sensitivity():
    mk = lambda seed: drain(FailureStream(100, Weibull(0.78, 10.0), seed=seed))  # noqa: E731
    assert mk(5) == mk(5)
    assert mk(5) != mk(6)
    ss = np.random.SeedSequence(5)
    assert drain(FailureStream(100, Weibull(0.78, 10.0), seed=ss)) == mk(5)


def test_deterministic_ties_break_by_unit_index():
    s = FailureStream(100, Deterministic(3.0), seed=0)
    got = drain(s)
    assert got == [(3.0, u) for u in range(100)]


def test_failures_until():
    s = FailureStream(30, Exponential(10.0), seed=4)
    ref = drain(FailureStream(30, Exponential(10.0), seed=4))
    got = s.failures_until(ref[9][0])
    assert got == ref[:10]
    assert s.failures_until(math.inf) == ref[10:]


def test_with_system_mtbf_per_unit_and_system():
    per = FailureStream.with_system_mtbf(600, 300.0, 0.78, seed=1)
    assert per.lifetime.mean == pytest.approx(600 * 300.0) and per.model == "per-unit"
    sysm = FailureStream.with_system_mtbf(600, 300.0, 0.78, model="system", seed=1)
    assert sysm.lifetime.mean == pytest.approx(300.0) and sysm.lifetime.shape == 0.78
    gaps = np.diff([0.0] + [t for t, _ in drain(sysm)])
    assert gaps.mean() == pytest.approx(300.0, rel=0.15)


def test_per_unit_first_failure_matches_min_of_weibulls_and_bursts_after_restart():
    # E[min of n Weibull(k, lam)] = lam * n**(-1/k) * Gamma(1 + 1/k) = mtbf * n**(1 - 1/k)
    n, mtbf, k = 200, 300.0, 0.78
    s = FailureStream.with_system_mtbf(n, mtbf, k, seed=9)
    firsts, early, late = [], [], []
    for _ in range(400):
        t0 = s.now
        times = [s.next_failure()[0] for _ in range(100)]
        firsts.append(times[0] - t0)
        early.append((times[9] - t0) / 10)
        late.append((times[99] - times[89]) / 10)
        s.restart(times[-1])
    expected = mtbf * n ** (1 - 1 / k)
    assert np.mean(firsts) == pytest.approx(expected, rel=0.15)
    assert np.mean(early) < np.mean(late)  # shape < 1: failures thin out as units die


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda: FailureStream(0, 1.0, seed=1), ValueError, "n_units must be >= 1"),
        (lambda: FailureStream(2.5, 1.0, seed=1), TypeError, "n_units must be an integer"),
        (lambda: FailureStream(3, -1.0, seed=1), ValueError, "lifetime must be > 0"),
        (lambda: FailureStream(3, "weibull", seed=1), TypeError, "lifetime must be a distribution"),
        (lambda: FailureStream(3, 1.0, model="global", seed=1), ValueError, "model must be one of"),
        (lambda: FailureStream(3, 1.0, seed=None), TypeError, "seed must be given"),
        (lambda: FailureStream(3, 1.0, seed=-1), ValueError, "seed must be >= 0"),
        (lambda: FailureStream(3, 1.0, seed=np.random.default_rng(0)), TypeError, "not a Generator"),
        (lambda: FailureStream(3, 1.0, seed=1, start=math.nan), ValueError, "start must be finite"),
        (lambda: FailureStream.with_system_mtbf(3, 0.0, 0.78, seed=1), ValueError, "system_mtbf must be > 0"),
        (lambda: FailureStream.with_system_mtbf(3, 5.0, 0.0, seed=1), ValueError, "weibull shape must be > 0"),
        (lambda: FailureStream.with_system_mtbf(3, 5.0, 1.0, model="x", seed=1), ValueError, "model must be"),
    ],
)
def test_bad_input(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_restart_cannot_go_back_in_time():
    s = FailureStream(3, 5.0, seed=1)
    s.next_failure()
    with pytest.raises(ValueError, match="restart time must be >= now"):
        s.restart(1.0)
    with pytest.raises(ValueError, match="restart time must be finite"):
        s.restart(math.inf)


def test_repr():
    r = repr(FailureStream(3, Exponential(2.0), model="system", seed=1))
    assert "n_units=3" in r and "model='system'" in r and "Exponential(mean=2)" in r


@pytest.mark.parametrize("model", ["per-unit", "system"])
def test_next_failures_batch_equals_single_calls(model):
    a = FailureStream(300, Weibull(0.78, 10.0), model=model, seed=12)
    b = FailureStream(300, Weibull(0.78, 10.0), model=model, seed=12)
    for k in (0, 1, 5, 100, 1000):
        t, u = a.next_failures(k)
        ref = [b.next_failure() for _ in range(k)]
        ref = [x for x in ref if x[1] >= 0]
        assert list(zip(t.tolist(), u.tolist())) == ref
        assert a.n_alive == b.n_alive and a.now == b.now and a.failures == b.failures
        assert np.array_equal(a.alive, b.alive)
    with pytest.raises(ValueError, match="k must be >= 0"):
        a.next_failures(-1)


@pytest.mark.parametrize("model", ["per-unit", "system"])
def test_victim_order_is_a_uniform_permutation(model):
    # the j-th victim is uniform over units: j < 32 come from the first chunk's rejection
    # draws (32 of 100 units), later ones from the pool of the remaining units
    from scipy import stats

    n, reps, js = 100, 1500, (0, 31, 60, 99)
    counts = np.zeros((len(js), n), dtype=np.int64)
    for seed in range(reps):
        units = [u for _, u in drain(FailureStream(n, Exponential(1.0), model=model, seed=seed))]
        for row, j in enumerate(js):
            counts[row, units[j]] += 1
    for row in counts:
        assert stats.chisquare(row).pvalue > 1e-3


# -- victims drawn lazily: consumers that need only the times ---------------------------------
_LAZY_CASES = [
    ("per-unit", Weibull(0.78, 50.0)),
    ("per-unit", LogNormal(20.0, 1.5)),
    ("per-unit", Deterministic(7.0)),  # no hazard: units come with the sorted lifetimes
    ("system", Weibull(0.78, 5.0)),
]

_ops = st.lists(
    st.one_of(
        st.tuples(st.just("times"), st.integers(0, 70)),
        st.tuples(st.just("units"), st.integers(0, 70)),
        st.tuples(st.sampled_from(["owed", "next", "peek", "alive"]), st.just(0)),
        st.tuples(st.just("restart"), st.integers(0, 5)),
    ),
    max_size=40,
)


@given(case=st.sampled_from(_LAZY_CASES), n=st.integers(1, 80), seed=st.integers(0, 2**32), ops=_ops)
def test_times_only_consumption_draws_the_same_numbers(case, n, seed, ops):
    """A stream consumed for its times only in places (its units owed, drawn later or never)
    gives exactly the times, units and state of a stream consumed with units throughout."""
    model, life = case
    lazy = FailureStream(n, life, model=model, seed=seed)
    full = FailureStream(n, life, model=model, seed=seed)
    owed = []  # units the lazy stream has consumed without handing out
    for op, m in ops:
        if op == "times":
            times, none = lazy.take(m, False)
            t, u = full.next_failures(m)
            assert none is None and times == t.tolist()
            owed += u.tolist()
        elif op == "units":
            times, units = lazy.take(m, True)
            t, u = full.next_failures(m)
            assert (times, units) == (t.tolist(), u.tolist())
            owed = []  # applied to the alive flags on the way
        elif op == "owed":
            assert lazy.take_units() == owed
            owed = []
        elif op == "next":
            assert lazy.next_failure() == full.next_failure()
            owed = []
        elif op == "peek":
            assert lazy.peek() == full.peek()
        elif op == "alive":
            assert np.array_equal(lazy.alive, full.alive)
            owed = []
        else:
            lazy.restart(lazy.now + m)
            full.restart(full.now + m)
            owed = []
        assert (lazy.n_alive, lazy.now, lazy.failures, lazy.epoch) == (full.n_alive, full.now, full.failures, full.epoch)
    assert np.array_equal(lazy.alive, full.alive)
    assert drain(lazy) == drain(full)


def test_times_only_consumption_never_draws_the_victims_of_an_abandoned_chunk():
    # the chunk's victims are drawn only when asked for (or before the next chunk)
    s = FailureStream(600, Weibull(0.78, 1e5), seed=4)
    for _ in range(50):
        (t,), _ = s.take(1, False)
        assert s._units is None  # pending: nobody asked
        s.restart(t + 1.0)
    assert s.alive.all() and s.n_alive == 600
    s.take(40, False)  # crosses into the second chunk: the first chunk's victims are drawn
    assert len(s._owed) == 32 and s._units is None
    assert len(s.take_units()) == 40 and s.n_alive == 560 == int(s.alive.sum())


def test_a_held_alive_view_sees_batch_consumption():
    s = FailureStream(50, Weibull(0.78, 10.0), seed=8)
    alive = s.alive
    _, u = s.next_failures(40)
    assert not alive[u].any() and int(alive.sum()) == 10


def test_epoch_stream_is_philox_at_counter_block_k():
    """EpochStream.at(k) is Philox with the stream's key and counter (0, 0, k, 0), an empty
    buffer and no half-used 32-bit word, whatever was drawn from it before (the generator
    object is reused)."""
    es = EpochStream(np.random.SeedSequence(77), "x")
    for k in (3, 0, 2**40, 3, 1):
        g = es.at(k)
        got = (g.standard_exponential(3), g.bit_generator.random_raw(2), g.integers(0, 9, 4))
        g.integers(0, 2**31, dtype=np.int32)       # leaves a half-used 32-bit word behind
        bg = np.random.Philox(key=es._key, counter=np.array([0, 0, k, 0], dtype=np.uint64))
        ref = np.random.Generator(bg)
        want = (ref.standard_exponential(3), ref.bit_generator.random_raw(2), ref.integers(0, 9, 4))
        assert all(np.array_equal(a, b) for a, b in zip(got, want)), k
