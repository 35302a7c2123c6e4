"""examples/airesim_table1.toml: AIReSim's Table I mapped key by key (docs/results.md section 15).

The derived quantities of the loaded file are checked against AIReSim's parameters
(bench.airesim_table1.AIRESIM_TABLE1, in AIReSim's units) by formulas written out here; the
example and the bench run end to end; the no-lost-work variant's time is AIReSim's sum (the job,
a restart per failure) plus what is left of the lost work; and with the job's clock never
stopped the lemons' extra failures match the closed form of AIReSim's bad servers.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from bench.airesim_table1 import AIRESIM_TABLE1 as A
from bench.airesim_table1 import main as bench_main
from bench.airesim_table1 import spares_for, variants
from spare_core.distributions import Exponential
from spare_core.scenario_file import load_scenario_file
from spare_core.sim import CheckpointOnly, simulate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "airesim_table1.toml"
MIN = 60.0


@pytest.fixture(scope="module")
def sf():
    return load_scenario_file(EXAMPLE)


def test_the_job_and_its_clock(sf):
    sc = sf.scenario
    assert sf.nodes == sc.n_groups == A["job_size"]           # one server = one node = one group
    assert sc.t0 == pytest.approx(A["job_length"] * MIN, rel=1e-12) and sc.jitter == 0
    assert sc.restart_time == A["recovery_time"] * MIN
    assert sc.failure_model == "node" and sc.failures.shape == 1.0   # exponential lifetimes


def test_the_rates_normal_and_bad_servers(sf):
    f, n = sf.scenario.failures, sf.scenario.n_groups
    k = round(A["systematic_failure_fraction"] * n)
    m = 1 + A["systematic_failure_rate_multiplier"]            # random + systematic, per bad server
    assert f.lemon_share == A["systematic_failure_fraction"] and f.lemon_rate == m
    # the file's rate is the fleet's average: 1 / system_mtbf = rate0 (n - k + m k) on n nodes
    normal_rate = 1 / (f.system_mtbf * (n - k + m * k))        # per second per normal node
    assert normal_rate == pytest.approx(A["random_failure_rate"] / MIN, rel=1e-12)
    # a bad server's repair fixes it unless the stage it went through silently fails
    p = A["prob_auto_to_manual"]
    fixed = (1 - p) * (1 - A["auto_repair_fail_prob"]) + p * (1 - A["manual_repair_fail_prob"])
    assert f.lemon_fix == pytest.approx(fixed, abs=1e-15)


def test_the_repairs_standbys_and_pool(sf):
    rp = sf.scenario.repair
    assert rp.time == Exponential(A["auto_repair_time"] * MIN)
    assert rp.manual_time == Exponential(A["manual_repair_time"] * MIN) and rp.escalate == A["prob_auto_to_manual"]
    assert rp.mean_time == pytest.approx((A["auto_repair_time"] + A["prob_auto_to_manual"] * A["manual_repair_time"]) * MIN)
    assert rp.fail_fix == 0 and rp.misdiagnose == 0 and rp.swap == 0 and rp.retire_after == 0
    assert rp.standbys == A["warm_standbys"] and rp.standby_swap == 0
    assert rp.host_select == A["host_selection_time"] * MIN
    # every server beyond the job and its standbys: the working pool's idle ones and the spare pool
    assert rp.spares == A["working_pool_size"] - A["job_size"] - A["warm_standbys"] + A["spare_pool_size"] == 248
    assert spares_for(4112) == 200
    # ~69 servers in repair at a time (Little's law) against 248: the pool never runs dry
    assert rp.mean_time / sf.scenario.system_mtbf < 0.5 * rp.spares


def test_the_example_runs_and_the_bench_without_airesim(sf, capsys):
    sc = sf.scenario.replace(n_steps=20_000)
    r = simulate(sc, CheckpointOnly(), seed=0)
    assert r.finished and r.failures_seen > 0
    assert dataclasses.asdict(r) == dataclasses.asdict(simulate(sc, CheckpointOnly(), seed=0))
    doc = bench_main(["--seeds", "2", "--pools", "4160"])
    out = capsys.readouterr().out
    assert "AIReSim not run" in out and doc["airesim"] is None
    rows = doc["spare_core"][4160]
    assert len(rows) == 4 and all(v["finished"] and len(v["hours"]) == 2 for v in rows.values())


def test_no_lost_work_is_airesims_sum(sf):
    """With a 1e-6-s save after every step the wall time is AIReSim's: the job, one restart per
    failure (the pool never makes one wait), and only the step under way at each failure lost."""
    sc = sf.scenario.replace(n_steps=200_000)
    _, (name, nl, pol), *_ = variants(sc)
    for seed in range(3):
        r = simulate(nl, pol, seed=seed)
        assert r.wait_time == 0 and r.restart_time == pytest.approx(r.failures_seen * sc.restart_time)
        assert 0 < r.lost_time <= r.failures_seen * sc.t_compute * (1 + 1e-9)
        assert r.time_to_train == pytest.approx(sc.t0 + r.restart_time + r.lost_time + r.save_time, rel=1e-9)


@pytest.mark.parametrize("clock", ["wall", "compute"])
def test_the_lemons_extra_failures_match_airesims_bad_servers_when_the_clock_never_stops(sf, clock):
    """AIReSim's bad server fails at m times the random rate, on the job's compute clock, until a
    repair fixes it (probability p per failure): (m - 1) / (p m) extra failures per bad server
    (less the part still due at the job's end). With no restart and no lost work spare_core's
    wall clock is the compute clock too, so its lemons must add the same; on the compute clock
    (failures.clock) they must with the file's 20-min restarts as well."""
    sc = sf.scenario
    f, n = sc.failures, sc.n_groups
    k, m, p = round(f.lemon_share * n), f.lemon_rate, f.lemon_fix
    lam0 = A["random_failure_rate"] / MIN
    t0 = sc.t0
    expect = lam0 * n * t0 + k * (m - 1) / (p * m) * (1 - math.exp(-p * m * lam0 * t0))
    if clock == "wall":
        nl = sc.replace(restart_time=0.0, checkpoint_time=1e-6)
    else:
        assert sc.restart_time == 1200.0
        nl = sc.replace(checkpoint_time=1e-6, failure_model=f.replace(clock="compute"))
    counts = np.array([simulate(nl, CheckpointOnly(1e-6), seed=s).failures_seen for s in range(10)], float)
    se = counts.std(ddof=1) / math.sqrt(counts.size)
    assert abs(counts.mean() - expect) < 4 * se, (counts.mean(), expect, se)
    # and the lemons' share is not lost in the noise: without them the count is lam0 n t0
    assert expect - lam0 * n * t0 > 8 * se


def test_the_failures_inside_restarts_are_counted_by_a_walk_of_the_runs_log(sf):
    """bench.airesim_restart_failures: the walk of the run's own log (a stop at the first failure
    at or after each resume, costs.restart long) finds the run's failures and restart time (it
    raises otherwise), and the failures inside the stops are the Poisson count at the log's rate
    then: within 4 standard deviations of it, over a 20-day job, on two seeds."""
    from bench.airesim_restart_failures import restart_failures

    sc = sf.scenario.replace(n_steps=288_000)  # 20 days of compute
    for seed in (0, 1):
        row = restart_failures(sc, CheckpointOnly(), seed)
        assert row["seen"] > 500 and row["lemon_seen"] > 0 and row["fixed_in_restart"] <= row["lemon_in_restart"]
        mu = row["expected_in_restart"]
        assert abs(row["in_restart"] - mu) < 4 * math.sqrt(mu), row
    # the lemons on AIReSim's whole fleet, placed: 654 of its 4,360 servers; the walk reads nodes
    from bench.airesim_restart_failures import placed

    pl = placed(sc, "any")
    assert pl.failures.place_pool == 264 and round(pl.failures.lemon_share * 4360) == 654
    row = restart_failures(pl, CheckpointOnly(1e-6), 0)
    assert row["seen"] > 500 and 0 < row["fixed_in_restart"] <= row["lemon_in_restart"]
    assert math.isnan(row["expected_in_restart"])
    # a run that waits for a spare is refused (its stops are longer than the restart)
    short = sc.replace(repair=dataclasses.replace(sc.repair, spares=0, standbys=0, host_select=0.0))
    with pytest.raises(ValueError, match="assumes every restart lasts costs.restart"):
        restart_failures(short, CheckpointOnly(), 0)
