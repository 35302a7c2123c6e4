"""Asynchronous checkpoint saves (``Scenario.checkpoint_drain``): a save blocks for its host
copy, drains in the background and is the persistent checkpoint only once drained (issue 32
item 2). Exact checks against hand computations; the kernel against the step-by-step reference
is in tests/test_strategies_reference.py and tests/test_sim_reference.py."""
import math

import pytest

from spare_core.sim import CheckpointOnly, Scenario, simulate
from spare_core.sim._reference import reference_simulate

NEVER = 1e15


def _sc(**kw):
    base = dict(n_steps=100, t_compute=9.0, t_allreduce=1.0, system_mtbf=NEVER, jitter=0.0, checkpoint_time=2.0,
                restart_time=30.0)
    base.update(kw)
    return Scenario(4, **base)


def test_without_failures_an_async_save_costs_only_its_blocking_part():
    # a save after every 5th step (interval 50 s), drains of 20 s: each drain ends before the next save
    r = simulate(_sc(checkpoint_drain=20.0), CheckpointOnly(interval=50.0), seed=1)
    saves = 19  # after steps 5, 10, ..., 95 (none after the last step)
    assert r.checkpoints == saves
    assert r.save_time == pytest.approx(saves * 2.0, rel=1e-12)
    assert r.wall_time == pytest.approx(100 * 10.0 + saves * 2.0, rel=1e-12)
    blocking = simulate(_sc(), CheckpointOnly(interval=50.0), seed=1)
    assert r.wall_time == blocking.wall_time and r.checkpoints == blocking.checkpoints


def test_a_save_due_during_a_drain_waits_for_it():
    # drains of 70 s against saves due every 52 s of wall time: each save waits 70 - 52 = 18 s
    r = simulate(_sc(checkpoint_drain=70.0), CheckpointOnly(interval=50.0), seed=1)
    ref = reference_simulate(_sc(checkpoint_drain=70.0), CheckpointOnly(interval=50.0), seed=1)
    assert r.save_time == pytest.approx(ref["save_time"], rel=1e-12)
    # the first save blocks 2 s; every later one waits for the previous drain (70 s after its end)
    # and blocks 2 s: the saves' wall share is 2 + 18 * (70 - 50) / ... computed by walking it
    t, t_last, drain_end, save = 0.0, 0.0, -math.inf, 0.0
    for step in range(100):
        t += 10.0
        if step == 99:
            break
        if t - t_last >= 50.0:
            start = max(t, drain_end)
            save += start - t + 2.0
            t = start + 2.0
            t_last, drain_end = t, t + 70.0
    assert r.save_time == pytest.approx(save, rel=1e-12)
    assert r.wall_time == pytest.approx(t, rel=1e-12)


def test_a_restart_during_the_drain_falls_back_to_the_previous_save():
    # a drain longer than the whole run: no save ever becomes the persistent checkpoint, so
    # every restart goes back to the start
    sc = Scenario(4, n_steps=400, t_compute=9.0, t_allreduce=1.0, system_mtbf=900.0, jitter=0.0, checkpoint_time=2.0,
                  restart_time=30.0, failure_model="system", max_wall_factor=5.0)
    never_drains = simulate(sc.replace(checkpoint_drain=1e9), CheckpointOnly(interval=50.0), seed=4)
    blocking = simulate(sc, CheckpointOnly(interval=50.0), seed=4)
    assert never_drains.restarts > 0
    assert never_drains.checkpoints == 0  # no save ever drained
    assert blocking.checkpoints > 0
    assert never_drains.lost_time > blocking.lost_time
    # the time still partitions the wall time
    parts = (never_drains.lost_time + never_drains.save_time + never_drains.restart_time + never_drains.wait_time
             + never_drains.pause_time + never_drains.memory_save_time)
    useful = never_drains.availability * never_drains.wall_time
    assert parts + useful == pytest.approx(never_drains.wall_time, rel=1e-9)


def test_drain_zero_is_the_blocking_save_bit_for_bit():
    sc = Scenario(16, n_steps=3000, t_compute=9.0, t_allreduce=1.0, system_mtbf=2000.0)
    a = simulate(sc, CheckpointOnly(interval=300.0), seed=5)
    b = simulate(sc.replace(checkpoint_drain=0.0), CheckpointOnly(interval=300.0), seed=5)
    assert a.to_dict() == b.to_dict()
    assert "checkpoint_drain" not in sc.to_dict()
    assert sc.replace(checkpoint_drain=5.0).to_dict()["checkpoint_drain"] == 5.0


@pytest.mark.parametrize("bad", [-1.0, math.nan, "soon"])
def test_a_bad_drain_is_refused(bad):
    with pytest.raises((ValueError, TypeError), match="checkpoint_drain"):
        _sc(checkpoint_drain=bad)
