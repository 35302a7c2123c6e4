"""Retiring nodes ([fleet] retire_after): a node failing k times leaves the fleet, so it never
comes back to the spare pool, which shrinks (docs/model.md, *Retiring nodes*)."""
from __future__ import annotations

import heapq
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core.distributions import Exponential, LogNormal, Weibull
from spare_core.events.nodes import NodeFailureLog, NodeRenewals
from spare_core.scenario_file import ScenarioFileError, parse_scenario
from spare_core.sim import CheckpointOnly, Repairs, Scenario, simulate
from spare_core.sim.recovery import RepairBook

sys.path.insert(0, str(Path(__file__).parent))
from test_repair_laws import POLICIES, _numbers, law_cases  # noqa: E402
from test_strategies_reference import assert_same  # noqa: E402

BASE = {"cluster": {"gpus": 64, "gpus_per_node": 8, "gpus_per_group": 8},
        "job": {"step_time": "10 s", "steps": 3000}, "failures": {"model": "node", "mtbf": "2 h"}}


@pytest.mark.parametrize("k, law, seed", [(1, Exponential(100.0), 0), (3, Weibull.from_mean(100.0, 0.5), 1),
                                          (5, Weibull.from_mean(100.0, 1.5), 2)])
def test_the_log_marks_each_slots_kth_failure_as_a_direct_count(k, law, seed):
    n = 60  # one node per group: the log's group is the node
    log = NodeFailureLog(law, n, 1, seed, chunk_seconds=40.0, retire_after=k, lemons=(0.2, 4.0))
    while len(log.times) < 5000:
        log.extend()
    count = [0] * n
    want = []
    for g in log.groups:
        count[g] += 1
        want.append(count[g] % k == 0)
    flags = log.retire_flags()
    assert flags.shape[0] == len(log.times) and flags.tolist() == [int(w) for w in want]
    plain = NodeFailureLog(law, n, 1, seed, chunk_seconds=40.0, lemons=(0.2, 4.0))
    while len(plain.times) < 5000:
        plain.extend()
    assert plain.times[:5000] == log.times[:5000] and plain.retire is None  # flags only: the same log


def _pool_reference(t, flags, spares, time, never):
    """The pool as a set of return times, the node back first taken: a retired node's is ``never``."""
    pool = [-math.inf] * spares
    out = []
    for f, r in zip(t, flags):
        free = heapq.heappushpop(pool, never if r else f + time)
        out.append(max(free, f))
    return np.array(out), pool


@pytest.mark.parametrize("spares", [1, 2, 5])
def test_a_retired_node_never_comes_back_and_the_pool_shrinks(spares):
    rng = np.random.default_rng(spares)
    n = 400
    t = np.cumsum(rng.exponential(30.0, n))
    flags = (rng.random(n) < 0.05).astype(np.int8)
    rp = Repairs(spares=spares, time=200.0, swap=0.0, retire_after=3)
    book = RepairBook(rp, n, seed=0)
    book.never_after(1e9)
    book.merge(t, np.arange(n, dtype=np.int64), 0.0, math.inf, 3 * n, flags)
    want, pool = _pool_reference(t, flags, spares, 200.0, 2e9)
    assert np.array_equal(book.back, want)
    retired_taken = int(flags.sum())
    assert int((book.pool == 2e9).sum()) == min(spares, retired_taken) == sum(p == 2e9 for p in pool)
    if retired_taken >= spares:
        # every spare gone: a failure after the last one waits for its own node's repair, as
        # with no pool (spares = 0), and for ever if its node retires too
        last = np.flatnonzero(flags)[spares - 1]
        after = slice(last + 1, None)
        assert np.array_equal(book.back[after], np.where(flags[after] == 1, 2e9, t[after] + 200.0))


@pytest.mark.parametrize("pol", POLICIES, ids=lambda p: p.name + getattr(p, "batch", ""))
@pytest.mark.parametrize("spares", [None, 0, 1, 3])
@pytest.mark.parametrize("k", [1, 3])
def test_retiring_runs_equal_the_reference(pol, spares, k):
    fm = NodeRenewals(gpus_per_node=8, retire_after=k)
    for extra in ({}, dict(time=LogNormal(300.0, 1.0), misdiagnose=0.3, standbys=1, host_select=50.0)):
        rp = Repairs(**{**dict(swap=20.0, spares=spares, time=300.0, rejoin=15.0, retire_after=k), **extra})
        sc = Scenario(6, n_steps=120, t_compute=10.0, t_allreduce=1.0, failure_model=fm, system_mtbf=150.0,
                      weibull_shape=0.8, gpus_per_group=16, restart_time=40.0, checkpoint_time=6.0, jitter=0.1,
                      max_wall_factor=40.0, repair=rp)
        for seed in range(3):
            assert_same(sc, pol, seed)


@st.composite
def retire_cases(draw):
    sc, pol, seed = draw(law_cases())
    k = draw(st.integers(1, 4))
    return (sc.replace(failure_model=sc.failures.replace(retire_after=k),
                       repair=Repairs(**{**sc.repair.to_dict(), "retire_after": k})), pol, seed)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(retire_cases())
def test_retiring_with_drawn_repairs_equals_the_reference(case):
    assert_same(*case)


def test_an_unlimited_pool_is_not_changed_by_retiring_and_a_small_one_is():
    """With an unlimited pool a spare is always free, so whether the failed node comes back
    changes nothing: the run is the one without retirement, bit for bit (its constants drawn)."""
    kw = dict(n_steps=200, t_compute=10.0, t_allreduce=1.0, system_mtbf=150.0, weibull_shape=0.8, gpus_per_group=16,
              restart_time=40.0, checkpoint_time=6.0, jitter=0.1, max_wall_factor=40.0)
    for pol in POLICIES[:2]:
        plain = Scenario(8, failure_model=NodeRenewals(gpus_per_node=8), **kw,
                         repair=Repairs(swap=20.0, time=300.0, rejoin=15.0))
        ret = Scenario(8, failure_model=NodeRenewals(gpus_per_node=8, retire_after=2), **kw,
                       repair=Repairs(swap=20.0, time=300.0, rejoin=15.0, retire_after=2))
        for seed in range(3):
            a, b = _numbers(simulate(ret, pol, seed=seed)), _numbers(simulate(plain, pol, seed=seed))
            assert "retires after 2 failures" in a.pop("failure_model")
            assert a == {k: v for k, v in b.items() if k != "failure_model"}
        small = ret.replace(repair=Repairs(swap=20.0, spares=2, time=300.0, rejoin=15.0, retire_after=2))
        base = plain.replace(repair=Repairs(swap=20.0, spares=2, time=300.0, rejoin=15.0))
        slower = [simulate(small, pol, seed=s).wall_time >= simulate(base, pol, seed=s).wall_time for s in range(3)]
        assert any(slower)


def test_the_pool_and_the_log_must_agree():
    kw = dict(n_steps=50, t_compute=10.0, t_allreduce=1.0, system_mtbf=150.0, gpus_per_group=16)
    for fm, rp in [(NodeRenewals(gpus_per_node=8, retire_after=2), Repairs(spares=2, time=100.0)),
                   (NodeRenewals(gpus_per_node=8), Repairs(spares=2, time=100.0, retire_after=2)),
                   (NodeRenewals(gpus_per_node=8, retire_after=3), Repairs(spares=2, time=100.0, retire_after=2))]:
        with pytest.raises(ValueError) as e:
            simulate(Scenario(4, failure_model=fm, repair=rp, **kw), CheckpointOnly(interval=100.0), seed=0)
        assert "retire" in str(e.value)


def _file(fleet, repair=True, failures=None):
    data = {**BASE, "fleet": fleet}
    if repair:
        data["repair"] = {"time": "2 h", "spares": 4}
    if failures is not None:
        data["failures"] = failures
    return parse_scenario(data, source="r.toml")


def test_the_key_sets_the_log_and_the_pool_and_its_errors_name_it():
    sf = _file({"retire_after": 3})
    assert sf.scenario.failures.retire_after == 3 and sf.scenario.repair.retire_after == 3
    assert sf.scenario.repair.drawn and Repairs(**sf.scenario.repair.to_dict()) == sf.scenario.repair
    assert NodeRenewals.from_dict(sf.scenario.failures.to_dict()) == sf.scenario.failures
    assert "retire_after" not in _file({"standbys": 1}).scenario.repair.to_dict()
    assert "retire_after" not in _file({"standbys": 1}).scenario.failures.to_dict()
    r = simulate(sf.scenario, CheckpointOnly(interval=600.0), seed=0)
    assert r.failures_seen > 0
    # 0: no node retires, the file read as without the key (spare advise --retire-after 0, a map's axis)
    assert _file({"retire_after": 0}).scenario == _file({}).scenario
    for fleet, kw, words in [({"retire_after": -1}, {}, "fleet.retire_after must be an integer >= 0"),
                             ({"retire_after": "often"}, {}, "fleet.retire_after must be an integer"),
                             ({"retire_after": 2}, {"repair": False}, "fleet.retire_after needs [repair]"),
                             ({"retire_after": 2}, {"failures": {"model": "per-unit", "mtbf": "2 h"}},
                              "fleet.retire_after needs failures.model = 'node'")]:
        with pytest.raises(ScenarioFileError) as e:
            _file(fleet, **kw)
        assert words in str(e.value) and str(e.value).startswith("r.toml: ")


def test_checkpoint_only_with_a_timeline_reads_the_retirement_flags():
    # found by tests/test_hardening_wave4.py's fleet files: a run that records its timeline
    # walks the batch loop, which read retirement flags from the filtered epochs and raised
    from spare_core.scenario_file import parse_scenario
    from spare_core.sim import CheckpointOnly, simulate

    d = {"cluster": {"gpus": 8, "gpus_per_node": 1, "gpus_per_group": 1}, "job": {"step_time": 1.0, "steps": 200},
         "failures": {"model": "node", "mtbf": 15.0}, "costs": {"restart": 2.0, "checkpoint_save": 0.5},
         "repair": {"swap": 1.0, "time": 20.0, "spares": 1}, "fleet": {"retire_after": 2}, "compare": {"horizon": 20.0}}
    sc = parse_scenario(d).scenario
    for seed in range(4):
        a = simulate(sc, CheckpointOnly(), seed=seed)
        b = simulate(sc, CheckpointOnly(), seed=seed, timeline=True)
        assert (a.wall_time, a.restarts, a.wait_time, a.spares_taken) == (b.wall_time, b.restarts, b.wait_time,
                                                                          b.spares_taken)
        assert b.timeline.failure_time.shape[0] == b.failures_seen


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(retire_cases())
def test_a_retired_node_is_not_paid_for_after_it_left(case):
    """The fleet's price follows what it holds: each retired node's GPUs, from when it left
    (its take: the failure, or after a wrong diagnosis the second pull) to the end of the run,
    come off the GPU-hours. The times are those the step-by-step reference records at its takes
    (it never undoes one); the compiled run keeps the takes a restart did not undo, past ones
    included when its draw rows are dropped."""
    from spare_core.sim._reference import reference_simulate

    sc, pol, seed = case
    r = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    rp, wall = sc.repair, r.wall_time
    if rp.spares is None:  # an unlimited pool is not paid for: a retired node's replacement comes from it
        assert r.retired_gpu_hours == 0.0
    else:
        want = rp.gpus_per_node * math.fsum(wall - t for t in ref["retired"] if t < wall) / 3600.0
        assert r.retired_gpu_hours == pytest.approx(want, rel=1e-9, abs=1e-9)
    held = r.gpus_paid * wall / 3600.0
    assert r.gpu_hours == (held - r.retired_gpu_hours if r.retired_gpu_hours else held) and r.gpu_hours >= 0


def test_without_retirement_the_gpu_hours_are_the_held_ones_bit_for_bit():
    kw = dict(n_steps=200, t_compute=10.0, t_allreduce=1.0, system_mtbf=150.0, weibull_shape=0.8, gpus_per_group=16,
              restart_time=40.0, checkpoint_time=6.0, jitter=0.1, max_wall_factor=40.0)
    sc = Scenario(8, failure_model=NodeRenewals(gpus_per_node=8), **kw,
                  repair=Repairs(swap=20.0, time=300.0, spares=2, standbys=1))
    for pol in POLICIES:
        for seed in range(3):
            r = simulate(sc, pol, seed=seed)
            assert r.retired_gpu_hours == 0.0 and r.gpu_hours == r.gpus_paid * r.wall_time / 3600.0


def test_many_retirements_over_a_long_run_are_all_counted():
    """A run long enough that the draw rows before the oldest undoable take are dropped (4
    chunks of takes): the retirements of the dropped rows still count."""
    from spare_core.sim._reference import reference_simulate

    sc = Scenario(8, failure_model=NodeRenewals(gpus_per_node=8, retire_after=2), n_steps=20_000, t_compute=10.0,
                  t_allreduce=1.0, system_mtbf=60.0, gpus_per_group=16, restart_time=5.0, checkpoint_time=1.0,
                  max_wall_factor=40.0, repair=Repairs(swap=1.0, time=30.0, spares=100_000, retire_after=2))
    pol = POLICIES[1]
    r = simulate(sc, pol, seed=3)
    ref = reference_simulate(sc, pol, seed=3)
    assert r.spares_taken > 4 * 1024 and len(ref["retired"]) > 1024
    want = 8 * math.fsum(r.wall_time - t for t in ref["retired"] if t < r.wall_time) / 3600.0
    assert r.retired_gpu_hours == pytest.approx(want, rel=1e-9)
