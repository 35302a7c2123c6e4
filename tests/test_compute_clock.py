"""``failures.clock = "compute"``: the nodes' failure clocks count the job's computing time, so a
restart's stopped time shifts the rest of the log and no failure falls inside a restart. A
closed form on a deterministic lifetime, the log's own count of failures in the job's exposure,
the compiled restart loop against the batch loop, every policy against the reference, the
file's key and its refusals."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core._seeding import run_seed
from spare_core.distributions import Deterministic
from spare_core.events.nodes import NodeRenewals
from spare_core.scenario_file import parse_scenario
from spare_core.sim import CheckpointOnly, MemoryTier, Repairs, Scenario, simulate
from spare_core.strategies import make_policy
from spare_core.sim._reference import reference_simulate
from test_strategies_reference import COUNTS, TIMES, cases


def _det(clock, life, rt, **kw):
    """One group of one node failing every ``life`` seconds of its clock (new at the start)."""
    fm = NodeRenewals(lifetime=Deterministic(life), gpus_per_node=8, gpus_per_group=8, initial="new", clock=clock)
    base = dict(n_steps=2000, t_compute=1.0, t_allreduce=0.0, failure_model=fm, restart_time=rt,
                checkpoint_time=0.5, jitter=0.0, max_wall_factor=5.0)
    base.update(kw)
    return Scenario(1, **base)


@pytest.mark.parametrize("rt", [30.0, 150.0])
def test_a_deterministic_node_fails_every_lifetime_of_compute(rt):
    """Lifetime 100 s: on the compute clock the k-th failure is at k * 100 + (k - 1) * rt (each
    restart's stopped time shifts the rest); on the wall clock at multiples of 100 s, those
    inside a restart (rt = 150 s: every other one) renewed unseen."""
    pol = CheckpointOnly(interval=20.0)
    comp = simulate(_det("compute", 100.0, rt), pol, seed=0, timeline=True)
    ft = comp.timeline.failure_time
    k = np.arange(1, ft.shape[0] + 1)
    assert ft.shape[0] >= 10
    assert np.allclose(ft, 100.0 * k + (k - 1) * rt, rtol=0, atol=1e-6)
    wall = simulate(_det("wall", 100.0, rt), pol, seed=0, timeline=True)
    wt = wall.timeline.failure_time
    step = 100.0 * (math.floor(rt / 100.0) + 1)  # the first multiple of 100 s after the resume
    assert np.allclose(wt, 100.0 + step * np.arange(wt.shape[0]), rtol=0, atol=1e-6)
    # the compiled restart loop (no timeline) is the batch loop's run
    for clock, tl in (("compute", comp), ("wall", wall)):
        fast = simulate(_det(clock, 100.0, rt), pol, seed=0)
        assert fast.to_dict() == tl.to_dict()


@pytest.mark.parametrize("seed", range(6))
def test_one_group_sees_every_row_of_its_exposure(seed):
    """One group of two nodes at a Weibull law: on the compute clock the run sees exactly the
    log's failures with times in (0, wall time - time down], the time down being the run's
    restart, detection and wait seconds (counted from the log itself, drawn alone)."""
    sc = Scenario(1, n_steps=3000, t_compute=1.0, t_allreduce=0.0, failure_model="node", system_mtbf=400.0,
                  weibull_shape=0.7, gpus_per_group=16, restart_time=45.0, checkpoint_time=2.0, jitter=0.1,
                  max_wall_factor=20.0)
    sc = sc.replace(failure_model=sc.failures.replace(clock="compute"))
    res = simulate(sc, CheckpointOnly(interval=60.0), seed=seed)
    assert res.finished and res.failures_seen == res.restarts > 3
    exposure = res.wall_time - (res.restart_time + res.wait_time + res.detect_time)
    log = sc.failures.log(1, run_seed(seed, "failures"))
    while log.horizon <= exposure:
        log.extend()
    times = np.asarray(log.times)
    assert res.failures_seen == int(np.count_nonzero(times <= exposure + 1e-6))
    # on the wall clock the failures inside the restarts are not the job's: fewer seen
    wall = simulate(sc.replace(failure_model=sc.failures.replace(clock="wall")), CheckpointOnly(interval=60.0),
                    seed=seed)
    assert wall.failures_seen <= int(np.count_nonzero(times <= wall.wall_time))


def assert_close(sc, pol, seed):
    """The run against the reference: every count equal, every time within 1e-9 (each reads
    the log through its own shift, ``e + off`` against ``start + (e - x)``, which differ by a
    rounding)."""
    fast = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    assert fast.finished == ref["finished"]
    for k in COUNTS:
        assert getattr(fast, k) == ref[k], k
    for k in TIMES:
        assert math.isclose(getattr(fast, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), k
    if fast.finished:
        assert math.isclose(fast.time_to_train, ref["wall"], rel_tol=1e-12)
        assert math.isclose(fast.availability, ref["useful"] / ref["wall"], rel_tol=1e-9)
    return fast, ref


def _compute_cases():
    """The reference's generated cases on node logs, on the compute clock."""
    def on_compute(case):
        sc, pol, seed = case
        return sc.replace(failure_model=sc.failures.replace(clock="compute")), pol, seed
    return cases().filter(lambda c: isinstance(c[0].failures, NodeRenewals)).map(on_compute)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_compute_cases())
def test_every_policy_on_the_compute_clock_equals_the_reference(case):
    assert_close(*case)


@pytest.mark.parametrize("name", ["ckpt", "spare", "elastic"])
def test_fixed_cases_with_repairs_and_memory_equal_the_reference(name):
    sc = Scenario(12, n_steps=120, t_compute=10.0, t_allreduce=1.0, failure_model="node", system_mtbf=150.0,
                  weibull_shape=0.8, gpus_per_group=16, restart_time=40.0, checkpoint_time=6.0, jitter=0.1,
                  max_wall_factor=40.0, repair=Repairs(swap=20.0, spares=2, time=900.0, rejoin=15.0),
                  memory=MemoryTier(save=1.5, every=45.0, restore=8.0, copies=1))
    sc = sc.replace(failure_model=sc.failures.replace(clock="compute"))
    pol = make_policy(name, **{"spare": {"r": 3}, "elastic": {"min_groups": 11, "reconfigure": 15.0}}.get(name, {}),
                      interval=200.0)
    restarts = 0
    for seed in range(4):
        fast, _ = assert_close(sc, pol, seed)
        restarts += fast.restarts
    assert restarts > 0


def test_without_downtime_the_clocks_agree():
    """A restart of no cost, no detection, no wait: the job is never down and both clocks give
    the same run."""
    sc = Scenario(6, n_steps=400, t_compute=2.0, t_allreduce=0.5, failure_model="node", system_mtbf=100.0,
                  weibull_shape=0.9, gpus_per_group=8, restart_time=0.0, checkpoint_time=1.0, jitter=0.1)
    comp = sc.replace(failure_model=sc.failures.replace(clock="compute"))
    for pol in (CheckpointOnly(interval=30.0), make_policy("spare", r=2, interval=30.0)):
        a, b = simulate(sc, pol, seed=3).to_dict(), simulate(comp, pol, seed=3).to_dict()
        assert a.pop("failure_model") != b.pop("failure_model") and a == b  # only the words differ


_FILE = """
[cluster]
gpus = 64
gpus_per_node = 8
gpus_per_group = 8

[job]
step_time = "10 s"
steps = 500

[failures]
model = "node"
mtbf = "2 h"
{extra}

[costs]
restart = "10 min"
checkpoint_save = "30 s"
"""


def test_the_file_key_runs_and_refuses(tmp_path):
    import tomllib

    sf = parse_scenario(tomllib.loads(_FILE.format(extra='clock = "compute"')), base_dir=tmp_path)
    assert sf.scenario.failures.clock == "compute" and sf.scenario.failures.to_dict()["clock"] == "compute"
    assert "clocks stopped while the job is down" in sf.scenario.failures.describe(8)
    plain = parse_scenario(tomllib.loads(_FILE.format(extra="")), base_dir=tmp_path)
    assert "clock" not in plain.scenario.failures.to_dict()  # a stored run's key as before
    a = simulate(sf.scenario, CheckpointOnly(interval=600.0), seed=0)
    b = simulate(plain.scenario, CheckpointOnly(interval=600.0), seed=0)
    assert a.failures_seen >= b.failures_seen
    with pytest.raises(ValueError, match="failures.clock"):
        parse_scenario(tomllib.loads(_FILE.format(extra='clock = "cpu"')), base_dir=tmp_path)
    with pytest.raises(ValueError, match="failures.clock = 'compute' does not go with fleet.place"):
        NodeRenewals(system_mtbf=100.0, gpus_per_group=8, clock="compute", place="any", place_pool=2)
    with pytest.raises(ValueError, match="failures.clock"):
        parse_scenario(tomllib.loads(_FILE.format(extra='clock = "compute"').replace('model = "node"',
                                                                                    'model = "system"')),
                       base_dir=tmp_path)
