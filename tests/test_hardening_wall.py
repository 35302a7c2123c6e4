"""Issue 28, hardening the strategies: the wall limit, the time accounting and the memory tier.

* A run stops at its wall limit whatever the failure model, in every activity of the
  timeline: a step that masked failures keep extending, a pause that drops keep restarting,
  a restart or its wait. No failure past the limit is simulated and the time totals end
  there.
* The time totals partition the wall time exactly, for every policy: useful (kept steps),
  lost, saves, snapshots, restarts, waits and pauses. A rejoin's pause inside a step or a
  save is pause time, not the step's.
* Elastic ``batch = "shrink"``: the last step covers only what remains (progress exactly 1).
* A restore from the in-memory tier needs a copy held by a group that has kept it: a group
  replaced since the snapshot lost the copies it held with its host memory.
* A trace replay with ``costs.restart = 0`` restarts at the failure's very time.
"""
import math
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core.events import TraceReplay
from spare_core.events.trace import Trace
from spare_core.sim import CheckpointOnly, ElasticDP, MemoryTier, Repairs, Scenario, SpareCheckpoint, simulate
from spare_core.sim._reference import reference_simulate
from tests.test_strategies_reference import assert_same, cases

PARTS = ("lost_time", "save_time", "memory_save_time", "restart_time", "wait_time", "pause_time")


def parts_sum(r) -> float:
    """The run's time parts: the kept steps' time (availability x wall) and the rest."""
    return r.availability * r.wall_time + sum(getattr(r, k) for k in PARTS)


def _trace(times, units, n_units, end=10_000.0):
    return TraceReplay(Trace(np.asarray(times, dtype=float), np.asarray(units), n_units=n_units, end=end),
                       after="stop")


# -- 1. the wall limit -----------------------------------------------------------------------

def test_elastic_pause_restarted_by_drops_stops_at_the_wall_limit():
    """A 600-s reconfiguration and a failure every ~30 s: every drop restarts the pause, which
    never ends; the run used to loop for ever (memory growing with the failures drawn)."""
    sc = Scenario(8, n_steps=200, t_compute=10.0, t_allreduce=1.0, failure_model="node", system_mtbf=30.0,
                  weibull_shape=1.0, gpus_per_group=8, restart_time=60.0, checkpoint_time=5.0, max_wall_factor=2.0,
                  repair=Repairs(swap=0.0, time=10.0, rejoin=0.0))
    limit = sc.max_wall_factor * sc.t0
    t = time.perf_counter()
    r = simulate(sc, ElasticDP(reconfigure=600.0, interval=100.0), seed=1, timeline=True)
    assert time.perf_counter() - t < 10.0
    assert not r.finished and r.wall_time == limit
    assert r.failures_seen > 0 and r.timeline.failure_time.max() <= limit
    assert r.pause_time <= limit
    assert parts_sum(r) == pytest.approx(limit, rel=1e-9)
    assert_same(sc, ElasticDP(reconfigure=600.0, interval=100.0), 1)


def test_masked_failures_extending_a_step_stop_at_the_wall_limit():
    """SPARe with repairs, failures faster than a step can absorb them (each adds shrink and
    controller seconds): the step never ends, and failures were simulated far past the limit."""
    sc = Scenario(12, n_steps=300, t_compute=10.0, t_allreduce=1.0, failure_model="node", system_mtbf=5.0,
                  weibull_shape=1.0, gpus_per_group=8, restart_time=60.0, checkpoint_time=5.0, max_wall_factor=2.0,
                  shrink_time=3.0, controller_time=3.0, repair=Repairs(swap=0.0, time=10.0, rejoin=0.0))
    limit = sc.max_wall_factor * sc.t0
    r = simulate(sc, SpareCheckpoint(3, interval=100.0), seed=1, timeline=True)
    assert not r.finished and r.wall_time == limit
    assert r.timeline.failure_time.max() <= limit
    assert parts_sum(r) == pytest.approx(limit, rel=1e-9)
    assert_same(sc, SpareCheckpoint(3, interval=100.0), 1)


def test_a_restart_and_its_wait_are_cut_at_the_wall_limit():
    """One failure at 15 s, a 100-s restart that waits for a 500-s repair: the run ends at the
    limit (44 s), 29 s into the restart, with no wait booked and 10 s of step lost (the first
    step ends at 10 s, the second is cut by the failure at 15 s) plus the kept nothing."""
    sc = Scenario(1, n_steps=2, t_compute=10.0, t_allreduce=0.0, failure_model=_trace([15.0], [0], 1),
                  restart_time=100.0, checkpoint_time=1.0, jitter=0.0, max_wall_factor=2.2,
                  repair=Repairs(swap=0.0, spares=0, time=500.0, rejoin=0.0))
    r = simulate(sc, CheckpointOnly(interval=math.inf), seed=0)
    limit = 2.2 * 20.0
    assert not r.finished and r.wall_time == limit
    assert r.restart_time == pytest.approx(limit - 15.0) and r.wait_time == 0.0
    assert r.lost_time == pytest.approx(15.0)
    assert parts_sum(r) == pytest.approx(limit, rel=1e-12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_no_failure_past_the_wall_limit_and_times_partition_the_wall(case):
    """Every policy (checkpoint-only, replication, SPARe, elastic), with and without [repair],
    the memory tier and the elastic options: the failures simulated are those up to the wall
    limit, the time parts sum to the wall time, the kept steps take at most the time spent
    in steps, and a finished run has exactly its steps."""
    sc, pol, seed = case
    r = simulate(sc, pol, seed=seed, timeline=True)
    limit = sc.max_wall_factor * sc.t0
    assert r.wall_time <= limit
    if r.failures_seen:
        assert r.timeline.failure_time.max() <= limit
    for k in PARTS:
        assert getattr(r, k) >= -1e-9 * max(1.0, r.wall_time), k
    assert parts_sum(r) == pytest.approx(r.wall_time, rel=1e-9, abs=1e-9)
    # share of the wall time spent in steps: what is not a save, snapshot, restart, wait or pause
    in_steps = r.wall_time - (r.save_time + r.memory_save_time + r.restart_time + r.wait_time + r.pause_time)
    assert r.availability * r.wall_time <= in_steps * (1 + 1e-9) + 1e-9
    assert (r.progress == 1.0) == r.finished


# -- 7. a rejoin's pause is pause time -------------------------------------------------------

def test_a_rejoin_pause_inside_a_step_is_not_step_time():
    """Two groups, group 0 fails at 5 s and rejoins at 110 s; reconfiguration 100 s; 10-s
    steps (20 s at one group, batch "keep"). Step 1 is lost at 5 s (5 s lost), the pause
    runs to 105 s, the redone step starts at 105 s and the rejoin at 110 s pauses it 100 s:
    it ends at 225 s having computed 20 s; four 10-s steps follow (end 265 s). Useful
    20 + 40 = 60 s, pause 200 s, lost 5 s: 265 s (the pause used to count in the step too:
    useful 160 s, 365 s in a 265-s run)."""
    sc = Scenario(2, n_steps=5, t_compute=10.0, t_allreduce=0.0, failure_model=_trace([5.0], [0], 2),
                  restart_time=50.0, checkpoint_time=1.0, jitter=0.0, max_wall_factor=100.0,
                  repair=Repairs(swap=0.0, time=0.0, rejoin=105.0))
    pol = ElasticDP(reconfigure=100.0, interval=math.inf)
    r = simulate(sc, pol, seed=0)
    assert r.finished and r.rejoins == 1
    assert r.wall_time == pytest.approx(265.0)
    assert r.availability * r.wall_time == pytest.approx(60.0)
    assert r.pause_time == pytest.approx(200.0) and r.lost_time == pytest.approx(5.0)
    assert parts_sum(r) == pytest.approx(r.wall_time, rel=1e-12)
    assert_same(sc, pol, 0)


def test_a_failure_during_a_rejoin_pause_cuts_it():
    """As above, but group 1 fails at 150 s, inside the rejoin's pause (110-210 s) of the redone
    step: the pause elapsed 40 s of it, the step 5 s of its own (105-110 s), both lost as the
    step is dropped; nothing is counted twice."""
    sc = Scenario(2, n_steps=5, t_compute=10.0, t_allreduce=0.0, failure_model=_trace([5.0, 150.0], [0, 1], 2),
                  restart_time=50.0, checkpoint_time=1.0, jitter=0.0, max_wall_factor=100.0,
                  repair=Repairs(swap=0.0, time=0.0, rejoin=105.0))
    pol = ElasticDP(reconfigure=100.0, interval=math.inf)
    r = simulate(sc, pol, seed=0)
    assert r.finished
    assert r.lost_time == pytest.approx(5.0 + 5.0)
    assert parts_sum(r) == pytest.approx(r.wall_time, rel=1e-12)
    assert_same(sc, pol, 0)


# -- 8. elastic "shrink": the last step covers what remains ----------------------------------

def test_shrink_finishes_at_exactly_its_steps():
    """Three groups, one lost at 5 s: each step then covers 2/3 of a step's samples; 3 steps
    need 4.5 of them, so the fifth step covers only the 1/3 that remains (progress was
    10/9). The step takes its usual time (every live group computes its share)."""
    sc = Scenario(3, n_steps=3, t_compute=10.0, t_allreduce=0.0, failure_model=_trace([5.0], [0], 3),
                  restart_time=50.0, checkpoint_time=1.0, jitter=0.0, max_wall_factor=100.0)
    pol = ElasticDP(reconfigure=1.0, batch="shrink", interval=math.inf)
    r = simulate(sc, pol, seed=0)
    assert r.finished and r.progress == 1.0
    assert r.steps_executed == 5
    assert r.wall_time == pytest.approx(6.0 + 5 * 10.0)
    ref = reference_simulate(sc, pol, seed=0)
    assert ref["committed"] == 3.0


# -- 9. in-memory copies on replaced nodes are gone ------------------------------------------

def _memory_case(times, units):
    # three groups, SPARe r = 2 on consecutive stacks (two groups down: a wipe-out), two copies
    # of each snapshot (group g's on g + 1 and g + 2), a snapshot at 20-21 s, no persistent save
    sc = Scenario(3, n_steps=6, t_compute=10.0, t_allreduce=0.0, failure_model=_trace(times, units, 3),
                  restart_time=50.0, checkpoint_time=1.0, jitter=0.0, max_wall_factor=50.0,
                  repair=Repairs(swap=0.0, time=0.0, rejoin=3.0),
                  memory=MemoryTier(save=1.0, every=15.0, restore=2.0, copies=2))
    return sc, SpareCheckpoint(2, interval=math.inf)


def test_a_copy_on_a_node_replaced_since_the_snapshot_is_gone():
    """Group 1 fails at 22 s (after the snapshot) and is back on a new node at 25 s; groups 0
    and 2 fail at 30 s and 32 s: a wipe-out. Group 0's copies were on 1 (replaced: gone) and 2
    (down), so the restart falls back to the persistent checkpoint; without group 1's
    failure the copy on 1 survives and the restart restores from memory."""
    sc, pol = _memory_case([22.0, 30.0, 32.0], [1, 0, 2])
    r = simulate(sc, pol, seed=0)
    assert r.restarts >= 1 and r.memory_snapshots >= 1
    assert r.memory_restores == 0
    assert_same(sc, pol, 0)
    control, pol = _memory_case([30.0, 32.0], [0, 2])
    c = simulate(control, pol, seed=0)
    assert c.restarts >= 1 and c.memory_restores == 1
    assert_same(control, pol, 0)


# -- 5. trace replay, restart = 0 ------------------------------------------------------------

def test_trace_replay_restarts_at_the_failures_very_time():
    """Checkpoint-only, ``restart_time = 0``: the run resumes at the second failure as it sees
    it, ``179.54 + (467.09 - 179.54)``, one ulp below the log's 467.09; the replay refused that
    restart as a step back in time (ValueError)."""
    t1, t2 = 179.54, 467.09
    assert t1 + (t2 - t1) < t2  # the rounding this test is about
    sc = Scenario(2, n_steps=80, t_compute=10.0, t_allreduce=0.0, failure_model=_trace([t1, t2, 700.0], [0, 1, 0], 2),
                  restart_time=0.0, checkpoint_time=1.0, jitter=0.0, max_wall_factor=20.0)
    r = simulate(sc, CheckpointOnly(interval=50.0), seed=0, timeline=True)
    assert r.finished and r.restarts == 3
    assert r.timeline.epoch_start[2] == t1 + (t2 - t1)
    assert_same(sc, CheckpointOnly(interval=50.0), 0)


def test_a_trace_still_refuses_a_real_step_back():
    """The restart check compares on the run's own value, no tolerance: a time before the
    last failure is still an error."""
    p = _trace([10.0, 20.0], [0, 1], 2).process(2, 0)
    p.take(2, True)
    with pytest.raises(ValueError, match="time must be >="):
        p.restart(19.0)


def test_domains_over_a_trace_restart_at_the_failures_very_time():
    """The same restart through correlated domains over the replayed log: the domain process
    and its base compare on the run's value too."""
    from spare_core.distributions import Exponential
    from spare_core.events import DomainFailures

    t1, t2 = 179.54, 467.09
    fm = DomainFailures(_trace([t1, t2, 700.0], [0, 1, 0], 2), [Exponential(1e9)], groups_per_domain=[1])
    sc = Scenario(2, n_steps=80, t_compute=10.0, t_allreduce=0.0, failure_model=fm, restart_time=0.0,
                  checkpoint_time=1.0, jitter=0.0, max_wall_factor=20.0)
    r = simulate(sc, CheckpointOnly(interval=50.0), seed=0)
    assert r.finished and r.restarts == 3
    assert_same(sc, CheckpointOnly(interval=50.0), 0)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31), st.integers(10, 40), st.integers(1, 4), st.sampled_from(["ckpt", "spare"]))
def test_trace_replays_with_instant_restarts_run(log_seed, k, n, kind):
    """Logs with times in hundredths of a second (as logs record them) and instant restarts:
    every epoch starts at a failure's time as the run computes it, often an ulp off the log's;
    the run must end and agree with the reference."""
    rng = np.random.default_rng(log_seed)
    times = np.unique(rng.uniform(0.0, 2_000.0, k).round(2))
    units = rng.integers(0, n, times.shape[0])
    sc = Scenario(n, n_steps=40, t_compute=7.3, t_allreduce=0.37, failure_model=_trace(times, units, n),
                  restart_time=0.0, checkpoint_time=3.1, jitter=0.0, max_wall_factor=20.0)
    pol = CheckpointOnly(interval=50.0) if kind == "ckpt" else SpareCheckpoint(min(2, n), interval=50.0)
    assert_same(sc, pol, 0)


def _replaced_holder_case(log_seed, n, copies, rejoin, every):
    # a replayed log (seeded), SPARe r = 2 with repairs and a memory tier: groups fail, come
    # back on new nodes and fail again around the snapshots
    rng = np.random.default_rng(log_seed)
    k = int(rng.integers(10, 40))
    times = np.unique(rng.uniform(0.0, 400.0, k).round(1))
    units = rng.integers(0, n, times.shape[0])
    sc = Scenario(n, n_steps=40, t_compute=5.0, t_allreduce=0.5, failure_model=_trace(times, units, n),
                  restart_time=40.0, checkpoint_time=2.0, jitter=0.0, max_wall_factor=20.0,
                  repair=Repairs(swap=0.0, time=0.0, rejoin=rejoin),
                  memory=MemoryTier(save=1.0, every=every, restore=3.0, copies=copies))
    return sc, SpareCheckpoint(2, interval=math.inf)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31), st.integers(3, 6), st.integers(1, 2), st.sampled_from([2.0, 10.0, 30.0]),
       st.sampled_from([10.0, 25.0, 60.0]))
def test_memory_restores_agree_with_the_reference_when_holders_are_replaced(log_seed, n, copies, rejoin, every):
    """Random logs where groups fail, rejoin on new nodes and fail again between snapshots:
    the restore decision (who still holds the last snapshot) agrees with the reference's,
    which states the rule group by group."""
    assert_same(*_replaced_holder_case(log_seed, n, copies, rejoin, every), 0)
