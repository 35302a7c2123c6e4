"""The strategies beyond the SPARe paper (docs/model.md section 3.3: repairs and hot spares,
the in-memory checkpoint tier, elastic data parallelism) in the fast simulator against the
step-by-step reference (spare_core.sim._reference), which reads the failures one at a time
from a live process or the node failure log, keeps the spare pool as a heap of free times,
writes the elastic membership rule out and walks every step, save, snapshot and pause.

Every count, the progress, the time-to-train and the availability must agree exactly (both
build wall times one way, docs/reliability.md, *Determinism*); the time totals to 1e-9
relative, because the kernel books a pause when it starts and takes back what a failure or the
wall limit cuts off, while the reference books what elapsed (the same sum, rounded in another
order)."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core.distributions import Exponential
from spare_core.events import DomainFailures, GroupLifetimes
from spare_core.sim import (CheckpointOnly, ElasticDP, MemoryTier, ReplicationCheckpoint, Repairs, Scenario,
                            SpareCheckpoint, simulate)
from spare_core.sim._reference import reference_holders, reference_simulate
from spare_core.sim.recovery import copy_holders

COUNTS = ("failures_seen", "restarts", "checkpoints", "steps_executed", "rejoins", "memory_snapshots",
          "memory_restores")
TIMES = ("lost_time", "save_time", "memory_save_time", "restart_time", "wait_time", "pause_time")


def assert_same(sc, pol, seed):
    fast = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    assert fast.finished == ref["finished"]
    for k in COUNTS:
        assert getattr(fast, k) == ref[k], k
    assert fast.progress == ref["committed"] / sc.n_steps
    assert fast.failures_masked == ref["failures_seen"] - ref["restarts"]
    for k in TIMES:
        # stopped at the wall limit, both cut the activity in progress there
        assert math.isclose(getattr(fast, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), k
    if fast.finished:
        assert fast.time_to_train == ref["wall"]
        assert fast.availability == ref["useful"] / ref["wall"]
        assert fast.overhead == ref["layers_useful"] / ref["committed"]
    return fast, ref


def _policy(draw, n):
    kind = draw(st.sampled_from(["ckpt", "spare", "rep", "rep-disjoint", "elastic"]))
    interval = draw(st.sampled_from(["auto", 0.0, 40.0, 150.0, math.inf]))
    r = draw(st.integers(1, n))
    if kind == "ckpt":
        return CheckpointOnly(interval=interval)
    if kind == "spare":
        return SpareCheckpoint(r, interval=interval)
    if kind == "elastic":
        return ElasticDP(reconfigure=draw(st.sampled_from([0.0, 4.0, 25.0])), batch=draw(st.sampled_from(["keep", "shrink"])),
                         min_groups=draw(st.integers(1, n)), microbatches=draw(st.integers(1, 3)), interval=interval,
                         step_overhead=draw(st.sampled_from([0.0, 0.7, "4 %"])), quorum=draw(st.sampled_from([0.0, 0.2])))
    return ReplicationCheckpoint(r, variant="disjoint" if kind == "rep-disjoint" else "cyclic", interval=interval)


@st.composite
def cases(draw):
    n = draw(st.integers(1, 9))
    pol = _policy(draw, n)
    mtbf = draw(st.floats(25.0, 400.0))
    model = draw(st.sampled_from(["node", "node", "system", "per-unit", "domains"]))
    if model == "domains":
        if draw(st.booleans()):
            where = dict(groups_per_domain=[draw(st.integers(1, n))])
        else:  # any labels, not only contiguous racks
            where = dict(labels=[draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))])
        fm = DomainFailures(GroupLifetimes(system_mtbf=mtbf), [Exponential(draw(st.floats(150.0, 3000.0)))], **where)
        rate = dict(failure_model=fm)
    else:
        rate = dict(failure_model=model, system_mtbf=mtbf, weibull_shape=draw(st.floats(0.6, 1.6)))
    repair = None
    # repairs need node clocks unless every failure restarts (docs/model.md section 3.3)
    if (model == "node" or isinstance(pol, CheckpointOnly)) and draw(st.booleans()):
        repair = Repairs(swap=draw(st.sampled_from([0.0, 5.0, 30.0])), spares=draw(st.sampled_from([None, 0, 1, 2, 3])),
                         time=draw(st.sampled_from([0.0, 60.0, 400.0])), rejoin=draw(st.sampled_from([0.0, 10.0, 40.0])))
    memory = None
    if draw(st.booleans()):
        memory = MemoryTier(save=draw(st.floats(0.5, 3.0)), every=draw(st.sampled_from([10.0, 30.0, 100.0])),
                            restore=draw(st.floats(0.0, 20.0)), copies=draw(st.integers(1, 3)))
    sc = Scenario(
        n,
        n_steps=draw(st.integers(1, 60)),
        t_compute=draw(st.floats(1.0, 20.0)),
        t_allreduce=draw(st.floats(0.0, 3.0)),
        gpus_per_group=draw(st.sampled_from([8, 16])),  # 1 or 2 nodes per group for "node"
        **rate,
        restart_time=draw(st.sampled_from([0.0, 7.5, 60.0])),
        checkpoint_time=draw(st.floats(0.5, 20.0)),
        # asynchronous saves: drains shorter and longer than the interval between saves
        checkpoint_drain=draw(st.sampled_from([0.0, 0.0, 3.0, 25.0, 200.0])),
        jitter=draw(st.sampled_from([0.0, 0.05, 0.3])),
        shrink_time=draw(st.floats(0.0, 2.0)),
        controller_time=draw(st.floats(0.0, 2.0)),
        charge_patch=draw(st.booleans()),
        max_wall_factor=draw(st.floats(1.5, 30.0)),
        repair=repair,
        memory=memory,
    )
    return sc, pol, draw(st.integers(0, 2**31))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_strategies_equal_reference(case):
    assert_same(*case)


def _node(n, **kw):
    base = dict(n_steps=120, t_compute=10.0, t_allreduce=1.0, failure_model="node", system_mtbf=150.0,
                weibull_shape=0.8, gpus_per_group=16, restart_time=40.0, checkpoint_time=6.0, jitter=0.1,
                max_wall_factor=40.0)
    base.update(kw)
    return Scenario(n, **base)


@pytest.mark.parametrize("pol", [CheckpointOnly(interval=120.0), SpareCheckpoint(3, interval=200.0),
                                 ReplicationCheckpoint(2, interval=200.0),
                                 ElasticDP(reconfigure=15.0, batch="keep", microbatches=2, interval=300.0),
                                 ElasticDP(reconfigure=15.0, batch="shrink", min_groups=5, interval=300.0)],
                         ids=lambda p: p.name + getattr(p, "batch", ""))
def test_fixed_cases_exercise_every_mechanism(pol):
    """Longer runs than the hypothesis cases, with each mechanism at work (the counts show it)."""
    sc = _node(12, repair=Repairs(swap=20.0, spares=2, time=900.0, rejoin=15.0),
               memory=MemoryTier(save=1.5, every=45.0, restore=8.0, copies=1))
    totals = dict(restarts=0, rejoins=0, memory_restores=0, wait=0.0, pause=0.0)
    for seed in range(4):
        fast, _ = assert_same(sc, pol, seed)
        totals["restarts"] += fast.restarts
        totals["rejoins"] += fast.rejoins
        totals["memory_restores"] += fast.memory_restores
        totals["wait"] += fast.wait_time
        totals["pause"] += fast.pause_time
    assert totals["restarts"] > 0 or totals["rejoins"] > 0
    if isinstance(pol, CheckpointOnly):
        assert totals["memory_restores"] > 0 and totals["wait"] > 0
    else:
        assert totals["rejoins"] > 0
    if isinstance(pol, ElasticDP):
        assert totals["pause"] > 0


def test_shrink_credits_the_worth_of_a_steps_start():
    """Elastic "shrink": a rejoin during a step applies from the next step, so the step in
    flight counts the live groups of its start (the kernel credited the new worth once)."""
    sc = _node(6, n_steps=40, system_mtbf=60.0, repair=Repairs(swap=5.0, time=0.0, rejoin=3.0))
    pol = ElasticDP(reconfigure=2.0, batch="shrink", interval=math.inf)
    rejoins = 0
    for seed in range(3):
        fast, _ = assert_same(sc, pol, seed)
        rejoins += fast.rejoins
    assert rejoins > 0


def test_domain_event_split_by_a_batch_is_seen_whole():
    """A domain event taking the last live groups of an epoch: every group of it is a failure
    of the job (the epoch cache once closed the epoch at the first of them)."""
    fm = DomainFailures(GroupLifetimes(system_mtbf=232.6, shape=1.0), [Exponential(257.9)], groups_per_domain=[3])
    sc = Scenario(4, n_steps=56, t_compute=5.0, t_allreduce=1.0, failure_model=fm, restart_time=70.0,
                  checkpoint_time=4.0, max_wall_factor=30.0)
    for seed in range(6):
        assert_same(sc, SpareCheckpoint(4), seed)


def test_a_memory_restore_leaves_later_runs_alone():
    """A checkpoint-only run restored from memory must not change the next run without a
    memory tier (the run loop once rewrote the handler's shared answer)."""
    sc = _node(4, n_steps=50, system_mtbf=100.0)
    before = simulate(sc, CheckpointOnly(interval=50.0), seed=1)
    with_mem = simulate(sc.replace(memory=MemoryTier(save=1.0, every=20.0, restore=5.0)), CheckpointOnly(interval=50.0),
                        seed=1)
    after = simulate(sc, CheckpointOnly(interval=50.0), seed=1)
    assert with_mem.memory_restores > 0
    assert after.memory_restores == 0
    assert after.to_dict() == before.to_dict()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 24), st.integers(1, 5), st.data())
def test_copy_holders_follow_the_written_rule(n, copies, data):
    """copy_holders against the placement docs/model.md states, written out group by group
    (contiguous racks and arbitrary labels)."""
    labels = data.draw(st.one_of(st.none(), st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    got = copy_holders(n, copies, None if labels is None else np.array(labels))
    assert got.tolist() == reference_holders(n, copies, labels)
