"""The fast simulator (epoch cache + compiled kernel + batch policies) against the slow
step-by-step reference (live failure stream, one failure at a time, Python loop): the same
numbers bit for bit (both build wall times one way, docs/reliability.md, *Determinism*)."""
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.distributions import Exponential, LogNormal, Weibull
from spare_core.sim import CheckpointOnly, ReplicationCheckpoint, Scenario, SpareCheckpoint, simulate
from spare_core.sim._reference import reference_simulate

lifetimes = st.sampled_from([None, Exponential(900.0), Weibull(0.7, 500.0), LogNormal(800.0, 1.0)])


@st.composite
def cases(draw):
    n = draw(st.integers(1, 12))
    r = draw(st.integers(1, n))
    kind = draw(st.sampled_from(["ckpt", "rep", "rep-disjoint", "spare"]))
    interval = draw(st.sampled_from(["auto", 0.0, 25.0, 120.0, math.inf]))
    if kind == "ckpt":
        pol = CheckpointOnly(interval=interval)
    elif kind == "spare":
        pol = SpareCheckpoint(r, interval=interval)
    else:
        pol = ReplicationCheckpoint(r, variant="disjoint" if kind == "rep-disjoint" else "cyclic", interval=interval)
    life = draw(lifetimes)
    # the rate is given once: a lifetime law, or a system MTBF and a Weibull shape
    rate = dict(lifetime=life) if life is not None else dict(
        system_mtbf=draw(st.floats(20.0, 400.0)), weibull_shape=draw(st.floats(0.5, 2.0)))
    sc = Scenario(
        n,
        n_steps=draw(st.integers(1, 80)),
        t_compute=draw(st.floats(1.0, 20.0)),
        t_allreduce=draw(st.floats(0.0, 3.0)),
        failure_model=draw(st.sampled_from(["per-unit", "system", "node"])),
        gpus_per_group=draw(st.sampled_from([8, 16, 24])),  # 1 to 3 nodes per group for "node"
        **rate,
        restart_time=draw(st.floats(0.0, 100.0)),
        checkpoint_time=draw(st.floats(0.5, 20.0)),
        checkpoint_drain=draw(st.sampled_from([0.0, 0.0, 4.0, 60.0])),  # asynchronous saves too
        jitter=draw(st.sampled_from([0.0, 0.05, 0.3])),
        shrink_time=draw(st.floats(0.0, 2.0)),
        controller_time=draw(st.floats(0.0, 2.0)),
        charge_patch=draw(st.booleans()),
        max_wall_factor=draw(st.floats(1.5, 30.0)),
    )
    return sc, pol, draw(st.integers(0, 2**31))


@settings(max_examples=80)
@given(cases())
def test_fast_equals_reference(case):
    sc, pol, seed = case
    fast = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    assert fast.finished == ref["finished"]
    assert fast.failures_seen == ref["failures_seen"]
    assert fast.restarts == ref["restarts"]
    assert fast.checkpoints == ref["checkpoints"]
    assert fast.steps_executed == ref["steps_executed"]
    assert round(fast.progress * sc.n_steps) == ref["committed"]
    if fast.finished:
        assert fast.time_to_train == ref["wall"]
        assert fast.availability == ref["useful"] / ref["wall"]
        assert fast.overhead == ref["layers_useful"] / ref["committed"]


def test_paper_preset_equals_reference():
    sc = Scenario.paper_600k(200, n_steps=400)
    for pol in (SpareCheckpoint(6), ReplicationCheckpoint(3), CheckpointOnly(interval=0.0)):
        fast = simulate(sc, pol, seed=3)
        ref = reference_simulate(sc, pol, seed=3)
        assert (fast.failures_seen, fast.restarts, fast.checkpoints) == (
            ref["failures_seen"], ref["restarts"], ref["checkpoints"])
        if fast.finished:
            assert fast.time_to_train == ref["wall"]
