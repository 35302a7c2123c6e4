"""Invariants of runs with repairs, the in-memory tier and elastic training (docs/model.md
section 3.3), and which monotonicity in the spare pool really holds.

"More spares or faster swaps never slow a run on the same failures" does not hold in
general: with failures in wall time (node renewals, a replayed log) a job that stops longer
skips the failures of the stop, and a group back sooner meets failures it would have been
out for. What holds, and is tested here: (1) for a fixed sequence of failures the job sees,
every replacement's in-place time is monotone in spares, swap and repair time (the pool);
(2) checkpoint-only on a model whose restarts renew every clock (each epoch's failures are
fixed relative to its start) is never slowed by more spares, a faster swap or a faster
repair. The counterexamples are below and in docs/model.md section 3.3.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core.events import TraceReplay
from spare_core.events.trace import Trace
from spare_core.sim import (CheckpointOnly, ElasticDP, MemoryTier, Pricing, ReplicationCheckpoint, Repairs, Scenario,
                            SpareCheckpoint, simulate)
from spare_core.sim.recovery import RepairBook
from tests.test_strategies_reference import cases


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_run_invariants(case):
    sc, pol, seed = case
    r = simulate(sc, pol, seed=seed)
    # work never exceeds wall time
    assert 0.0 <= r.availability <= 1.0
    # counters
    assert r.failures_seen == r.failures_masked + r.failures_restart
    assert r.restarts == r.failures_restart and r.epochs == r.restarts + 1
    assert 0 <= r.memory_restores <= r.restarts
    assert r.wipeouts == (r.restarts if isinstance(pol, (SpareCheckpoint, ReplicationCheckpoint)) else 0)
    if isinstance(pol, CheckpointOnly):
        assert r.failures_masked == 0 and r.rejoins == 0
    # a group rejoins once per failure that took it out
    assert r.rejoins <= r.failures_seen
    if sc.repair is None:
        assert r.rejoins == 0 and r.wait_time == 0.0
    if sc.memory is None:
        assert r.memory_snapshots == 0 and r.memory_restores == 0 and r.memory_save_time == 0.0
    if not isinstance(pol, ElasticDP):
        assert r.pause_time == 0.0
    # progress: kept steps are executed steps (a step is worth at most 1)
    assert (r.progress >= 1.0) == r.finished
    assert r.progress * sc.n_steps <= r.steps_executed + 1e-9
    if r.progress > 0:
        assert r.overhead >= 1.0 - 1e-12
    # every restart costs its restart or restore time (the last one less when the wall limit
    # cuts it)
    mem_restore = sc.memory.restore if sc.memory is not None else 0.0
    full = (r.restarts - r.memory_restores) * sc.restart_time + r.memory_restores * mem_restore
    if r.finished:
        assert r.restart_time == pytest.approx(full, rel=1e-9, abs=1e-9)
    else:
        assert r.restart_time <= full * (1 + 1e-9) + 1e-9
    assert r.save_time >= r.checkpoints * sc.checkpoint_time * (1 - 1e-12)
    if sc.memory is not None:
        assert r.memory_save_time >= r.memory_snapshots * sc.memory.save * (1 - 1e-12)
    # the wall time is the sum of its parts, finished or stopped at the wall limit (a rejoin's
    # pause inside a step or a save is pause time only: tests/test_hardening_wall.py)
    parts = (r.availability * r.wall_time + r.lost_time + r.save_time + r.memory_save_time + r.restart_time
             + r.wait_time + r.pause_time)
    assert parts == pytest.approx(r.wall_time, rel=1e-9)


def test_gpu_hours_and_cost():
    sc = Scenario(6, n_steps=40, t_compute=10.0, t_allreduce=1.0, failure_model="node", system_mtbf=200.0,
                  gpus_per_group=16, restart_time=30.0, checkpoint_time=3.0, max_wall_factor=30.0,
                  repair=Repairs(swap=10.0, spares=3, time=500.0, gpus_per_node=8), pricing=Pricing(2.5))
    r = simulate(sc, SpareCheckpoint(2), seed=4)
    assert r.gpus_paid == 6 * 16 + 3 * 8
    assert r.gpu_hours == pytest.approx(r.gpus_paid * r.wall_time / 3600.0)
    assert r.cost == pytest.approx(2.5 * r.gpu_hours)
    unlimited = simulate(sc.replace(repair=Repairs(swap=10.0, time=500.0)), SpareCheckpoint(2), seed=4)
    assert unlimited.gpus_paid == 6 * 16  # an unlimited pool is not priced


# -- monotonicity of the pool ------------------------------------------------------------------


def _in_place(times, groups, n, rep):
    """In-place time of each failure the pool sees, by index in the raw sequence."""
    book = RepairBook(rep, n)
    rel, _, rejoin, ready, _, raw, used = book.merge(np.asarray(times, dtype=float), np.asarray(groups, dtype=np.int64),
                                                     0.0, math.inf, 4 * len(times) + n + 1)
    assert used == len(times)
    # in-place times grow along the failures, so the book's running maximum is each one's own
    return {int(raw[k]): float(ready[k]) for k in range(rel.shape[0]) if rejoin[k] == 0}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0.0, 100.0), min_size=1, max_size=30), st.floats(0.0, 40.0), st.floats(0.0, 10.0),
       st.floats(0.0, 10.0), st.integers(0, 5), st.floats(0.0, 40.0), st.floats(0.0, 10.0))
def test_in_place_times_monotone_on_the_same_failures(raw, time, swap, rejoin, spares, more_time, more_swap):
    """Failures of distinct groups (none is dropped: the job sees the same failures in every
    setting): each replacement is in place no later with more spares, and no earlier with a
    longer swap or repair."""
    t = sorted(raw)
    g = list(range(len(t)))
    base = _in_place(t, g, len(t), Repairs(swap=swap, spares=spares, time=time, rejoin=rejoin))
    assert sorted(base) == g
    for better in (Repairs(swap=swap, spares=spares + 1, time=time, rejoin=rejoin),
                   Repairs(swap=swap, spares=None, time=time, rejoin=rejoin)):
        other = _in_place(t, g, len(t), better)
        assert all(other[k] <= base[k] for k in g)
    for worse in (Repairs(swap=swap + more_swap, spares=spares, time=time, rejoin=rejoin),
                  Repairs(swap=swap, spares=spares, time=time + more_time, rejoin=rejoin)):
        other = _in_place(t, g, len(t), worse)
        assert all(other[k] >= base[k] for k in g)


def test_a_faster_swap_can_delay_a_later_replacement():
    """The smallest counterexample once failures of groups out are dropped: one spare, repair
    6 s, rejoin 2 s; failures at 1 and 5 (group 0) and 6 (group 1). With swap 3, group 0 is
    out until 6 and its failure at 5 is dropped; group 1 gets the pool's node back at 7: in
    place at 10. With swap 0, group 0 is back at 3, fails again at 5 and takes that node; group
    1 waits for the node of the failure at 5: in place at 11."""
    t, g = [1.0, 5.0, 6.0], [0, 0, 1]
    slow = _in_place(t, g, 2, Repairs(swap=3.0, spares=1, time=6.0, rejoin=2.0))
    fast = _in_place(t, g, 2, Repairs(swap=0.0, spares=1, time=6.0, rejoin=2.0))
    assert sorted(slow) == [0, 2] and sorted(fast) == [0, 1, 2]
    assert (slow[2], fast[2]) == (10.0, 11.0)


# -- monotonicity of whole runs --------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["system", "per-unit"]), st.integers(1, 6), st.integers(0, 2**31), st.data())
def test_checkpoint_only_on_renewing_clocks_is_monotone(model, n, seed, data):
    """Each epoch's failures are fixed relative to its start when restarts renew every clock:
    a setting only changes the waits, which obey a max-plus recursion monotone in spares,
    swap and repair time. (Not with an in-memory tier: a restore from memory keeps the
    persistent save's schedule, so a longer wait brings the next save forward and changes
    the epoch; see the next test.)"""
    sc = Scenario(n, n_steps=60, t_compute=6.0, t_allreduce=1.0, failure_model=model, system_mtbf=70.0,
                  weibull_shape=data.draw(st.floats(0.6, 1.5)), restart_time=data.draw(st.sampled_from([5.0, 30.0])),
                  checkpoint_time=3.0, jitter=0.1, max_wall_factor=200.0)
    pol = CheckpointOnly(interval=40.0)
    spares, swap, time = data.draw(st.integers(0, 3)), data.draw(st.floats(0.0, 60.0)), data.draw(st.floats(0.0, 300.0))

    def ttt(**kw):
        rep = dict(swap=swap, spares=spares, time=time)
        rep.update(kw)
        return simulate(sc.replace(repair=Repairs(**rep)), pol, seed=seed).time_to_train

    base = ttt()
    tol = 1e-9 * base
    assert ttt(spares=spares + 1) <= base + tol
    assert ttt(spares=None) <= base + tol
    assert ttt(swap=swap + data.draw(st.floats(0.0, 60.0))) >= base - tol
    assert ttt(time=time + data.draw(st.floats(0.0, 300.0))) >= base - tol


def test_with_a_memory_tier_a_longer_wait_moves_the_next_persistent_save():
    """A restore from memory keeps the persistent save's schedule (docs/model.md 3.3): the
    stop, wait included, counts towards the interval, so a slower swap changes when the
    next save comes, and the run is not monotone in the swap even on renewing clocks."""
    sc = Scenario(2, n_steps=60, t_compute=6.0, t_allreduce=1.0, failure_model="system", system_mtbf=70.0,
                  weibull_shape=0.75, restart_time=5.0, checkpoint_time=3.0, jitter=0.1, max_wall_factor=200.0,
                  memory=MemoryTier(save=0.5, every=20.0, restore=4.0))
    pol = CheckpointOnly(interval=40.0)
    fast = simulate(sc.replace(repair=Repairs(swap=0.0, spares=0)), pol, seed=0)
    slow = simulate(sc.replace(repair=Repairs(swap=6.0, spares=0)), pol, seed=0)
    assert slow.wait_time > 0 and fast.memory_restores > 0
    assert slow.time_to_train < fast.time_to_train


def test_a_slower_swap_can_finish_earlier_on_a_replayed_log():
    """The counterexample of docs/model.md section 3.3: one group, 10 steps of 10 s, restart
    10 s, no saves, failures logged at 5 s and 20 s. Swap 0: restart at 5, resume at 15, the
    failure at 20 hits the job, resume at 30, done at 130. Swap 20: the replacement is in place
    at 25, so the job resumes then and the failure at 20, during the stop, is never seen: done
    at 125. The same with the spare pool: no spare (repair 20 s) finishes before one spare."""
    log = TraceReplay(Trace([5.0, 20.0], [0, 0], n_units=1, end=1000.0), after="stop")
    sc = Scenario(1, n_steps=10, t_compute=10.0, t_allreduce=0.0, failure_model=log, restart_time=10.0,
                  checkpoint_time=1.0, jitter=0.0, max_wall_factor=10.0)

    def run(rep):
        return simulate(sc.replace(repair=rep), CheckpointOnly(interval=math.inf), seed=0)

    fast, slow = run(Repairs(swap=0.0)), run(Repairs(swap=20.0))
    assert (fast.time_to_train, fast.failures_seen) == (130.0, 2)
    assert (slow.time_to_train, slow.failures_seen, slow.wait_time) == (125.0, 1, 10.0)
    one, none = run(Repairs(spares=1, time=20.0)), run(Repairs(spares=0, time=20.0))
    assert one.time_to_train == 130.0 and none.time_to_train == 125.0
