"""Runs that need only failure times (checkpoint-only) and the units the stream then does
not draw: the shared epoch cache must hand every later run exactly what it would have got."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spare_core.sim import CheckpointOnly, ReplicationCheckpoint, Scenario, SpareCheckpoint, simulate
from spare_core._seeding import run_seed
from spare_core.events import EpochFailures
from spare_core.strategies import FailureHandler, Outcomes, Policy

SCENARIOS = [
    Scenario.paper_600k(40, n_steps=300, max_wall_factor=4.0),
    Scenario.paper_600k(25, n_steps=300, failure_model="system", max_wall_factor=4.0),
]


def _exact(r):
    d = r.to_dict()
    d.pop("policy"), d.pop("redundancy"), d.pop("wipeouts")
    return d


@given(
    si=st.integers(0, 1),
    seed=st.integers(0, 2**32),
    calls=st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(1, 40), st.integers(0, 40)), max_size=30),
)
def test_cache_times_only_calls_leave_the_driver_as_full_calls_would(si, seed, calls):
    """Mixed times()/get() on one cache vs get() only on another, same calls: the times are
    bit-identical (the driver pulls and restarts exactly alike) and so are the units."""
    sc = SCENARIOS[si]
    lazy = EpochFailures(sc.failures, sc.n_groups, np.random.SeedSequence(seed))
    full = EpochFailures(sc.failures, sc.n_groups, np.random.SeedSequence(seed))
    for times_only, k, need, extra in calls:
        want = need + extra
        t_ref, u_ref = full.get(k, need, want)
        if times_only:
            t = lazy.times(k, need, want)
        else:
            t, u = lazy.get(k, need, want)
            assert np.array_equal(u, u_ref) and u.shape == t.shape
        assert t.tobytes() == t_ref.tobytes()
        assert not t.flags.writeable
    assert lazy.rebuilds == full.rebuilds
    for k in range(lazy.epochs_materialised):  # units completed afterwards: side stream or driver
        t, u = lazy.get(k, 1)
        t_ref, u_ref = full.get(k, 1)
        assert t.tobytes() == t_ref.tobytes() and np.array_equal(u, u_ref)


@pytest.mark.parametrize("sc", SCENARIOS, ids=["per-unit", "system"])
def test_cache_rebuild_replays_a_times_only_prefix_with_units(sc):
    seed = np.random.SeedSequence(11)
    lazy, full = EpochFailures(sc.failures, sc.n_groups, seed), EpochFailures(sc.failures, sc.n_groups, seed)
    for c in (lazy, full):
        c.times(0, 6, 6) if c is lazy else c.get(0, 6, 6)
        c.times(2, 3, 3) if c is lazy else c.get(2, 3, 3)
    assert lazy._units[0].shape[0] == 0
    (t, u), (t_ref, u_ref) = lazy.get(0, 15), full.get(0, 15)  # the driver left epoch 0: rebuilt
    assert lazy.rebuilds == full.rebuilds == 1
    assert t.tobytes() == t_ref.tobytes() and np.array_equal(u, u_ref) and t.shape == (15,)
    assert len(set(u.tolist())) == 15


@pytest.mark.parametrize("sc", SCENARIOS, ids=["per-unit", "system"])
def test_checkpoint_only_draws_no_victims_and_later_runs_get_their_own_result(sc):
    fail_seed = run_seed(7, "failures")
    lazy = EpochFailures(sc.failures, sc.n_groups, fail_seed)
    ckpt = simulate(sc, CheckpointOnly(), seed=7, failures=lazy)
    assert ckpt.epochs > 20
    # checkpoint-only never asked which group failed: no epoch holds units
    assert all(lazy._units[k].shape[0] == 0 for k in range(lazy.epochs_materialised))
    # Rep r = 1 restarts at every failure too, but reads the groups: same pulls, with units
    full = EpochFailures(sc.failures, sc.n_groups, fail_seed)
    rep1 = simulate(sc, ReplicationCheckpoint(1), seed=7, failures=full)
    assert _exact(rep1) == _exact(ckpt)
    assert all(full._units[k].shape == full._times[k].shape for k in range(full.epochs_materialised))
    # a SPARe run after either gets bit-identical results (its units completed lazily)
    for pol in (SpareCheckpoint(4), ReplicationCheckpoint(3, variant="disjoint")):
        a = simulate(sc, pol, seed=7, failures=lazy, timeline=True)
        b = simulate(sc, pol, seed=7, failures=full, timeline=True)
        assert a.to_dict() == b.to_dict()
        assert np.array_equal(a.timeline.failure_group, b.timeline.failure_group)
        assert a.timeline.failure_time.tobytes() == b.timeline.failure_time.tobytes()
        # and its stand-alone result: counts exact, times up to the rounding of relative
        # epoch times (see test_sim_sweep)
        alone = simulate(sc, pol, seed=7, timeline=True)
        assert (a.failures_seen, a.restarts, a.checkpoints, a.steps_executed) == (
            alone.failures_seen, alone.restarts, alone.checkpoints, alone.steps_executed)
        assert np.array_equal(a.timeline.failure_group, alone.timeline.failure_group)
        np.testing.assert_allclose(a.timeline.failure_time, alone.timeline.failure_time, rtol=1e-12)


def test_checkpoint_only_with_a_timeline_reads_the_groups_and_changes_nothing():
    sc = SCENARIOS[0]
    blind = simulate(sc, CheckpointOnly(), seed=3)
    seen = simulate(sc, CheckpointOnly(), seed=3, timeline=True)
    assert blind.to_dict() == seen.to_dict()
    g = seen.timeline.failure_group
    assert g.shape[0] == seen.failures_seen and g.min() >= 0 and g.max() < sc.n_groups


class _CountingHandler(FailureHandler):
    """Restarts at every third failure; records the groups it was given."""

    def __init__(self, needs_groups):
        self.needs_groups = needs_groups
        self.given = []
        self.count = 0

    def on_failures(self, groups):
        self.given.extend(groups.tolist())
        n = groups.shape[0]
        upto = min(n, 3 - self.count % 3)
        self.count += upto
        restart = np.zeros(upto, dtype=np.int8)
        restart[-1] = 1 if self.count % 3 == 0 else 0
        return Outcomes(restart, np.ones(upto), np.zeros(upto))

    def restart(self):
        pass


class _Counting(Policy):
    def __init__(self, needs_groups):
        super().__init__(interval=0.0)
        self.needs_groups = needs_groups
        self.last = None

    def handler(self, scenario):
        self.last = _CountingHandler(self.needs_groups)
        return self.last


def test_a_handler_that_needs_no_groups_gets_placeholders_and_the_same_run():
    sc = SCENARIOS[0]
    blind, full = _Counting(False), _Counting(True)
    a = simulate(sc, blind, seed=5)
    b = simulate(sc, full, seed=5)
    assert _exact(a) == _exact(b) and a.restarts > 5
    assert set(blind.last.given) == {-1}
    assert min(full.last.given) >= 0 and len(full.last.given) == len(blind.last.given)
