"""bench/airesim_sweeps.py and the mapping it shares with bench/airesim_table1.py, without AIReSim.

A fixture written from AIReSim's published defaults (tests/data/airesim_config.yaml, its flat
config form) is read by the bench's parser; the mapped scenario's every parameter is checked
against the fixture's values by formulas written out here; Table I's mapping is the example
file exactly; values the mapping cannot carry are refused by name; and the bench's spare_core
side runs one small sweep point, whose totals split exactly into compute, restarts, waits and
lost steps, and whose failure count over the compute time is the Poisson count of the mapped
rate.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bench.airesim_sweeps import (RULES, STRESS_2X, SWEEPS, clock_fix, lemon_extra, main, ordinary_failures, point_key,
                                  run_spare_core_point, spare_core_scenario, z)
from bench.airesim_table1 import (AIRESIM_TABLE1, DAY_MIN, EXAMPLE, mapped_data, mapped_scenario,
                                  read_airesim_config)
from spare_core.distributions import Exponential
from spare_core.scenario_file import load_scenario_file

FIXTURE = Path(__file__).parent / "data" / "airesim_config.yaml"
MIN = 60.0


@pytest.fixture(scope="module")
def cfg():
    return read_airesim_config(FIXTURE)


def test_the_parser_reads_the_published_defaults(cfg):
    assert cfg["job_size"] == 4096 and isinstance(cfg["job_size"], int)
    assert cfg["random_failure_rate"] == 6.944444e-06 and cfg["prob_auto_to_manual"] == 0.8
    assert cfg["bad_server_regeneration"] is False and cfg["adaptive_replications"] is True
    assert cfg["failure_distribution"] == "exponential"
    # the bench's Table I is the published defaults (its rate exact, the file's rounded to 7 digits)
    for k, v in AIRESIM_TABLE1.items():
        assert cfg[k] == pytest.approx(v, rel=1e-7), k


def test_the_parser_refuses_what_is_not_flat(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("job_size: 4096\npools:\n  - 1\n")
    with pytest.raises(ValueError, match=r"c.yaml:2"):
        read_airesim_config(bad)


def test_the_mapped_file_carries_the_configs_values(cfg):
    sc = mapped_scenario(cfg)
    n = cfg["job_size"]
    assert sc.n_groups == n and sc.gpus_per_group == 8 and sc.jitter == 0
    assert sc.t0 == pytest.approx(cfg["job_length"] * MIN, rel=1e-12)
    assert sc.restart_time == cfg["recovery_time"] * MIN
    f = sc.failures
    k = round(cfg["systematic_failure_fraction"] * n)
    m = 1 + cfg["systematic_failure_rate_multiplier"]
    assert f.shape == 1.0 and f.lemon_share == cfg["systematic_failure_fraction"] and f.lemon_rate == m
    # the file's rate is the fleet's average; a normal node's is the config's random rate
    assert 1 / (f.system_mtbf * (n - k + m * k)) == pytest.approx(cfg["random_failure_rate"] / MIN, rel=1e-12)
    q = cfg["prob_auto_to_manual"]
    assert f.lemon_fix == pytest.approx(q * (1 - cfg["manual_repair_fail_prob"])
                                        + (1 - q) * (1 - cfg["auto_repair_fail_prob"]), abs=1e-12)
    rp = sc.repair
    assert rp.time == Exponential(cfg["auto_repair_time"] * MIN) and rp.escalate == q
    assert rp.manual_time == Exponential(cfg["manual_repair_time"] * MIN)
    assert rp.standbys == cfg["warm_standbys"] and rp.host_select == cfg["host_selection_time"] * MIN
    assert rp.spares == cfg["working_pool_size"] + cfg["spare_pool_size"] - n - cfg["warm_standbys"]
    assert rp.swap == 0 and rp.standby_swap == 0 and rp.fail_fix == 0 and rp.misdiagnose == 0


def test_table_one_maps_onto_the_example_file_exactly():
    a, b = load_scenario_file(EXAMPLE).scenario, mapped_scenario(AIRESIM_TABLE1)
    assert [s for s in type(a).__slots__ if getattr(a, s) != getattr(b, s)] == []


@pytest.mark.parametrize("change, match", [
    (dict(diagnosis_probability=0.9), "diagnosis_probability"),
    (dict(failure_distribution="weibull"), "failure_distribution"),
    (dict(bad_server_regeneration=True), "bad_server_regeneration"),
    (dict(job_length=100.05), "job_length"),
    (dict(scheduling="fewest"), "no mapping"),
])
def test_what_the_mapping_cannot_carry_is_refused_by_name(cfg, change, match):
    with pytest.raises(ValueError, match=match):
        mapped_data(dict(cfg, **change))
    p = dict(cfg)
    del p["spare_pool_size"]
    with pytest.raises(ValueError, match="spare_pool_size"):
        mapped_data(p)


def test_no_bad_servers_maps_to_no_lemons(cfg):
    sc = mapped_scenario(dict(cfg, systematic_failure_fraction=0.0))
    assert sc.failures.lemon_share == 0
    assert 1 / (sc.failures.system_mtbf * sc.n_groups) == pytest.approx(cfg["random_failure_rate"] / MIN, rel=1e-12)


def test_the_sweeps_are_the_repositorys():
    by = {s.name: s for s in SWEEPS}
    r = AIRESIM_TABLE1["random_failure_rate"]
    assert [v * DAY_MIN for v in by["mtbf"].values] == pytest.approx([0.005, 0.01, 0.02])
    assert by["standbys"].values == by["stress_standbys"].values == (4, 8, 16, 32)
    assert by["stress_spares"].values == (10, 25, 50, 100)
    assert STRESS_2X["working_pool_size"] == 4128 and STRESS_2X["job_length"] == 7 * DAY_MIN
    assert STRESS_2X["random_failure_rate"] == 2 * r and STRESS_2X["spare_pool_size"] == 50
    # a point shared by two sweeps (Table I's base, the stress base) runs once
    keys = [point_key(p) for s in SWEEPS for _, p in s.points()]
    assert len(keys) - len(set(keys)) == 3


@pytest.mark.parametrize("rule", RULES)
def test_a_stress_point_splits_into_its_parts(rule):
    """The tightest pool of the spare-pool sweep: failures wait for a node, and the total is the
    compute, a restart per failure, the waits and the steps lost, exactly."""
    p = dict(STRESS_2X, spare_pool_size=10)
    sc = spare_core_scenario(p, rule)
    assert sc.checkpoint_time == 1e-6 and sc.repair.restart_when == rule and sc.repair.spares == 26
    v = run_spare_core_point(p, range(3), rule)
    assert v["finished"]
    for k in range(3):
        assert v["compute_h"][k] == pytest.approx(p["job_length"] / 60, rel=1e-9)
        assert v["restart_h"][k] == pytest.approx(v["failures"][k] * p["recovery_time"] / 60)
        assert 0 < v["lost_h"][k] <= v["failures"][k] * 6 / 3600 * (1 + 1e-9) + 1e-3
        assert v["wait_h"][k] > 0          # 26 spares against ~75 nodes in repair
        assert v["hours"][k] == pytest.approx(v["compute_h"][k] + v["restart_h"][k] + v["wait_h"][k] + v["lost_h"][k])


def test_without_bad_servers_the_count_is_the_mapped_rates_poisson():
    """Memoryless lifetimes: over the compute time T0 the job sees Poisson(n lambda0 T0)
    failures, however long it waits between (a one-day job, no bad servers, a tight pool)."""
    p = dict(STRESS_2X, job_length=DAY_MIN, systematic_failure_fraction=0.0, spare_pool_size=0)
    mu = ordinary_failures(p)
    assert mu == pytest.approx(4096 * 0.02)
    x = np.array(run_spare_core_point(p, range(60))["failures"], float)
    se = math.sqrt(mu / x.size)
    assert abs(x.mean() - mu) < 4 * se, (x.mean(), mu)


def test_the_difference_in_standard_errors():
    assert z((10.0, 3.0), (6.0, 4.0)) == pytest.approx(0.8)
    assert math.isnan(z((1.0, 0.0), (1.0, 0.0)))


def test_the_bench_without_airesim(capsys):
    doc = main(["--sweeps", "stress_spares", "--spare-seeds", "2"])
    out = capsys.readouterr().out
    assert "AIReSim not run" in out and doc["airesim"] is None
    rows = doc["sweeps"]["stress_spares"]
    assert [r["point"] for r in rows] == [f"spare_pool_size={v}" for v in (10, 25, 50, 100)]
    # a bigger pool never makes spare_core's job wait longer (same seeds, same failures until a wait)
    waits = [r["one"]["wait_h"][0] for r in rows]
    assert waits[0] > waits[-1] >= 0
    assert out.count("| spare_pool_size=") == 8          # both restart rules


@pytest.mark.parametrize("mult", [2, 5])
def test_the_lemons_seen_match_the_closed_form_with_restarts_fixing_them(mult):
    """spare_core's lemons are fixed on the wall clock, in failures during restarts the job does
    not see too: the count over the ordinary failures (of the compute time, the lost steps'
    recomputation included) is ``lemon_extra(p, True)``, well below AIReSim's compute-clock
    count ``lemon_extra(p, False)`` (a pool no failure waits for)."""
    p = dict(STRESS_2X, random_failure_rate=mult * AIRESIM_TABLE1["random_failure_rate"], spare_pool_size=2000)
    v = run_spare_core_point(p, range(40))
    assert max(v["wait_h"]) == 0
    lam = p["job_size"] * p["random_failure_rate"] * 60          # ordinary failures per hour of compute
    x = np.array(v["failures"], float) - lam * (p["job_length"] / 60 + np.array(v["lost_h"]))
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert abs(x.mean() - lemon_extra(p, True)) < 4 * se, (x.mean(), lemon_extra(p, True), se)
    assert lemon_extra(p, False) - lemon_extra(p, True) > 10 * se


def test_clock_fix_gives_spare_core_airesims_lemon_count():
    """With lemon_fix from clock_fix the closed forms agree by construction, and spare_core's
    runs then see AIReSim's compute-clock count (a pool no failure waits for)."""
    p = dict(STRESS_2X, spare_pool_size=2000)
    q = clock_fix(p)
    assert 0 < q < 0.76 and lemon_extra(p, True, q) == pytest.approx(lemon_extra(p, False), rel=1e-9)
    assert spare_core_scenario(p, "clock").failures.lemon_fix == q
    assert spare_core_scenario(p, "one").failures.lemon_fix == pytest.approx(0.76)
    v = run_spare_core_point(p, range(40), "clock")
    lam = p["job_size"] * p["random_failure_rate"] * 60
    x = np.array(v["failures"], float) - lam * (p["job_length"] / 60 + np.array(v["lost_h"]))
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert abs(x.mean() - lemon_extra(p, False)) < 4 * se, (x.mean(), lemon_extra(p, False), se)
