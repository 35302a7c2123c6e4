"""Stragglers in the strategy engine (issue 30, "Into the strategy engine"): a scenario file's
``[stragglers]`` drives the step times, and ``spare advise`` / ``spare map`` weigh the remedies
(evict, rebalance, pacing) against tolerating them on the same failures."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from spare_core.cli import main
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import Scenario, make_policy, simulate
from spare_core.sim.recovery import Repairs
from spare_core.sim.remedies import remedy_plan, weigh_remedies, with_pause
from spare_core.sim.strategy_map import MapSettings, Strategy, evaluate_cell
from spare_core.stragglers import synthetic_trace, write_trace
from spare_core.stragglers import steptime
from spare_core.stragglers.steptime import MeasuredStragglers

# rank 5 of a dp 4 x pp 4 job: stage 1, DP rank 1 (rank = stage * dp + dp_rank), not the last stage
SLOW = 5
FILE = """
name = "straggly"

[cluster]
gpus = 64
gpus_per_node = 8
gpus_per_group = 8

[job]
step_time = "2 s"
steps = 1500
jitter = 0.0

[failures]
mtbf = "40 min"

[costs]
restart = "2 min"
checkpoint_save = "5 s"
gpu_hour = 2.0

[repair]
swap = "1 min"
spares = 8
time = "1 h"

[compare]
policies = ["ckpt", "spare"]
seeds = 2
r_max = 2
processes = 1

[stragglers]
{stragglers}
"""


@pytest.fixture(scope="module")
def slow_trace():
    return synthetic_trace(dp=4, pp=4, steps=4, microbatches=4, slow={SLOW: 1.6}, jitter=0.0, seed=0)


@pytest.fixture
def job(tmp_path, slow_trace):
    write_trace(tmp_path / "job.csv", slow_trace)

    def write(stragglers: str, name: str = "job.toml", text: str = FILE) -> str:
        p = tmp_path / name
        p.write_text(text.format(stragglers=stragglers))
        return str(p)

    return write


def _plain(**kw) -> Scenario:
    base = dict(n_steps=500, t_compute=1.8, t_allreduce=0.2, system_mtbf=1e12, jitter=0.0, gpus_per_group=8,
                checkpoint_time=5.0)
    base.update(kw)
    return Scenario(4, **base)


# -- the step-time model --------------------------------------------------------------------------
def test_a_trace_names_the_planted_worker_and_evicting_it_removes_the_loss(slow_trace):
    m = MeasuredStragglers.from_trace(slow_trace)
    assert m.worker == SLOW and m.slowdown > 1.1
    # evicted to a healthy spare, the job runs at its ideal (the mean rule's ideal includes the
    # slow worker's share, so a little below 1)
    assert abs(m.remedy_slowdown("evict") - 1.0) < 0.05
    assert m.stage_share < 0.2 and m.remedy_slowdown("rebalance") > 0.8 * m.slowdown + 0.2
    assert m.per_step.size == 4 and math.isclose(m.mean_multiplier(), m.slowdown, rel_tol=1e-12)
    # a compute straggler: nothing in communications, and pacing says it cannot help
    assert m.comm_share < 0.05
    if m.comm_share == 0:
        assert m.remedy_slowdown("pacing") == m.slowdown and "cannot help" in m.remedy_note("pacing")


def test_a_last_stage_imbalance_is_rebalanced_not_evicted():
    m = MeasuredStragglers.from_trace(synthetic_trace(dp=4, pp=4, steps=3, last_stage=1.5, jitter=0.0, seed=1))
    assert m.stage_share == 1.0 and m.remedy_slowdown("rebalance") == 1.0
    assert m.remedy_slowdown("evict") > 1.0 + 0.5 * (m.slowdown - 1.0)  # one worker of the stage is not the stage


def test_contention_gives_pacing_something_to_act_on():
    # a contended fabric in some steps: every collective and transfer 4 times as long
    m = MeasuredStragglers.from_trace(synthetic_trace(dp=4, pp=2, steps=8, contention=0.3, contention_factor=4.0,
                                                      jitter=0.0, seed=2), n_nodes=64)
    assert m.slowdown > 1.01 and m.comm_share > 0.9
    assert 1.0 < m.remedy_slowdown("pacing") < m.slowdown and "collective phase" in m.remedy_note("pacing")


def test_step_times_follow_S_exactly_without_failures():
    sc = _plain()
    pol = make_policy("ckpt", 1)
    r0 = simulate(sc, pol, seed=3)
    r1 = simulate(sc.replace(step_time_model=MeasuredStragglers(slowdown=1.2)), pol, seed=3)
    assert r0.failures_seen == r1.failures_seen == 0
    # the compute part (everything but the saves) is S times T0, as the model says
    assert math.isclose(r1.wall_time - r1.save_time, 1.2 * sc.t0, rel_tol=1e-12)
    assert math.isclose(r0.wall_time - r0.save_time, sc.t0, rel_tol=1e-12)


def test_S_of_one_is_the_run_without_stragglers_bit_for_bit():
    sc = _plain(system_mtbf=600.0, jitter=0.05, n_steps=800)
    pol = make_policy("spare", 2)
    r0 = simulate(sc, pol, seed=4)
    r1 = simulate(sc.replace(step_time_model=MeasuredStragglers(slowdown=1.0, jitter=0.05)), pol, seed=4)
    assert r0.failures_seen > 0
    assert (r0.wall_time, r0.failures_seen, r0.lost_time) == (r1.wall_time, r1.failures_seen, r1.lost_time)


def test_a_trace_series_is_resampled_from_the_runs_stream(slow_trace):
    m = MeasuredStragglers.from_trace(slow_trace)
    a = m.sample_multipliers(1000, np.random.default_rng(0))
    assert set(np.unique(a)) <= set(m.per_step) and math.isclose(a.mean(), m.slowdown, rel_tol=0.05)
    assert np.array_equal(a, m.sample_multipliers(1000, np.random.default_rng(0)))


# -- the remedies' costs ----------------------------------------------------------------------------
def test_evict_pauses_for_the_swap_and_takes_a_spare_until_the_repair():
    rp = Repairs(swap=90.0, spares=2, time=7200.0, gpus_per_node=8)
    sc = _plain(repair=rp, step_time_model=MeasuredStragglers(slowdown=1.3, evict_slowdown=1.05, worker=SLOW))
    plan = remedy_plan(sc, "evict")
    assert plan.pause == 90.0 and plan.scenario.repair.taken_until == 7200.0 - 90.0
    assert plan.scenario.repair.spares == 2  # the pool paid is the file's
    pol = make_policy("ckpt", 1)
    raw = simulate(plan.scenario, pol, seed=0)
    run = with_pause(raw, plan)
    assert run.pause_time == raw.pause_time + 90.0 and run.wall_time == raw.wall_time + 90.0
    assert math.isclose(run.wall_time - run.save_time - run.pause_time, 1.05 * sc.t0, rel_tol=1e-12)
    assert run.gpus_paid == 4 * 8 + 2 * 8
    # without the swap's pause and the S it leaves, the plain scenario: the pool's dict is unchanged
    assert "taken_until" not in sc.repair.to_dict()


def test_a_spare_taken_before_the_start_makes_a_later_failure_wait():
    # one spare, taken by the eviction until 10 h: the first failure's restart waits for it
    sc = _plain(system_mtbf=1800.0, n_steps=3000, restart_time=60.0, failure_model="system",
                repair=Repairs(swap=0.0, spares=1, time=36000.0))
    pol = make_policy("ckpt", 1)
    free = simulate(sc, pol, seed=1)
    taken = simulate(sc.replace(repair=Repairs(swap=0.0, spares=1, time=36000.0, taken_until=36000.0)), pol, seed=1)
    assert free.failures_seen > 0 and taken.wait_time > free.wait_time


def test_weigh_remedies_on_the_same_failures_names_the_worker_and_what_it_buys():
    rp = Repairs(swap=60.0, spares=8, time=3600.0)
    stm = MeasuredStragglers(slowdown=1.25, evict_slowdown=1.02, worker=SLOW, stage_share=0.2, rebalance_cost=600.0)
    sc = _plain(system_mtbf=3600.0, n_steps=2000, repair=rp, step_time_model=stm, failure_model="system")
    out = weigh_remedies(sc, make_policy("ckpt", 1), [0, 1], ["evict", "rebalance", "pacing"])
    rows = {r["remedy"]: r for r in out["remedies"]}
    assert out["worker"] == SLOW and out["best"] == "evict"
    assert rows["evict"]["saves_time"] > 0.1 and rows["evict"]["pause_time"] == 60.0
    assert rows["rebalance"]["pause_time"] == 600.0 and rows["pacing"]["saves_time"] == 0.0
    assert all(r["finished"] == 2 for r in rows.values())


def test_a_map_cell_weighs_remedies_as_strategies():
    stm = MeasuredStragglers(slowdown=1.3, evict_slowdown=1.0, worker=SLOW)
    sc = _plain(system_mtbf=1800.0, n_steps=1500, repair=Repairs(swap=30.0, spares=4, time=3600.0),
                step_time_model=stm, failure_model="system")
    cell = evaluate_cell(sc, [Strategy("ckpt"), Strategy.parse("ckpt+evict")], MapSettings(seeds=3, redundancies=(1,)))
    assert cell.winner == "ckpt+evict" and cell.margin > 0.15
    with pytest.raises(ValueError, match="measured stragglers"):
        evaluate_cell(_plain(), [Strategy.parse("ckpt+rebalance")], MapSettings(seeds=1))


# -- files and commands -----------------------------------------------------------------------------
def test_a_trace_is_read_and_analysed_once_per_distinct_input(job, monkeypatch):
    calls = []
    real = MeasuredStragglers.from_trace.__func__

    def counting(cls, trace, **kw):
        calls.append(trace.source)
        return real(cls, trace, **kw)

    monkeypatch.setattr(steptime, "_READ", {})
    monkeypatch.setattr(MeasuredStragglers, "from_trace", classmethod(counting))
    f = job('trace = "job.csv"')
    a = load_scenario_file(f, ["costs.restart='5 min'"])
    b = load_scenario_file(f, ["repair.swap='3 min'"])
    assert len(calls) == 1 and a.scenario.step_time_model.worker == SLOW
    assert b.scenario.step_time_model.per_step is a.scenario.step_time_model.per_step
    load_scenario_file(f, ["stragglers.ideal=stage"])
    assert len(calls) == 2


def test_advise_on_a_trace_says_which_worker_to_evict_and_what_it_buys(job, tmp_path, capsys):
    f = job('trace = "job.csv"\nmeta = "meta.yaml"\nrebalance_cost = "10 min"')
    (tmp_path / "meta.yaml").write_text("dp_size: 4\npp_size: 4\n")
    out = tmp_path / "advise.json"
    assert main(["advise", f, "--no-sensitivity", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"evict rank {SLOW} to a hot spare: buys" in text and "stragglers: S = " in text
    doc = json.loads(out.read_text())["stragglers"]
    assert doc["worker"] == SLOW and doc["evict"]["worker"] == SLOW and doc["evict"]["pays"]
    assert doc["evict"]["buys_seconds"] > 0 and doc["evict"]["buys_cost"] > 0
    assert [r["remedy"] for r in doc["remedies"]] == ["tolerate", "evict", "rebalance", "pacing"]
    assert doc["remedies"][2]["pause"] == 600.0


def test_map_on_a_file_with_stragglers_weighs_the_remedies(job, tmp_path, capsys):
    f = job("slowdown = 1.3\nevict_slowdown = 1.02\nworker = 7\nstage_share = 0.5")
    out = tmp_path / "map.json"
    argv = ["map", f, "--x", "repair.swap", "--x-values", "'1 min'", "'2 h'", "--y", "costs.restart",
            "--y-values", "'2 min'", "--strategies", "ckpt", "ckpt+evict", "ckpt+rebalance", "--json", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "+evict: evict rank 7 to a hot spare" in text
    doc = json.loads(out.read_text())
    cells = {c["x"]: c for c in doc["cells"]}
    assert cells["1 min"]["winner"] == "ckpt+evict"  # a quick swap buys S 1.3 -> 1.02
    assert doc["stragglers"]["worker"] == 7 and set(doc["stragglers"]["remedies"]) == {"evict", "rebalance"}


@pytest.mark.parametrize("stragglers,words", [
    ("slowdown = -1.2", ["stragglers.slowdown", "> 0", "-1.2"]),
    ("slowdown = nan", ["stragglers.slowdown", "finite", "nan"]),
    ("slowdown = 1.2\nstage_share = 1.5", ["stragglers.stage_share", "1.5"]),
    ('trace = "missing.parquet"', ["stragglers.trace", "readable", "missing.parquet"]),
    ('slowdown = 1.2\ntrace = "job.csv"', ["exactly one of slowdown", "trace"]),
    ('slowdown = 1.2\nremedies = ["evict", "magic"]', ["stragglers.remedies", "'magic'"]),
    ('trace = "job.csv"\nworker = 3', ["stragglers.worker", "only goes with stragglers.slowdown"]),
    ('trace = "job.csv"\ndp = 3', ["stragglers.dp", "pp"]),
])
def test_bad_stragglers_are_one_line_before_any_run(job, capsys, stragglers, words):
    f = job(stragglers)
    assert main(["advise", f, "--no-sensitivity"]) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert cap.out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


def test_evict_without_a_spare_is_refused_before_any_run(job, capsys):
    no_repair = FILE.replace('[repair]\nswap = "1 min"\nspares = 8\ntime = "1 h"\n', "")
    with pytest.raises(ScenarioFileError, match=r"stragglers.remedies names 'evict'.*\[repair\]"):
        data = load_scenario_file(job("slowdown = 1.2")).data
        parse_scenario({**data, "repair": {"spares": 0}, "stragglers": {"slowdown": 1.2, "remedies": ["evict"]}})
    f = job('slowdown = 1.2\nremedies = ["evict"]', name="none.toml", text=no_repair)
    assert main(["advise", f]) == 2
    assert "needs a [repair] table" in capsys.readouterr().err
    f = job("slowdown = 1.2", name="none2.toml", text=no_repair)
    assert load_scenario_file(f).remedies == ("rebalance", "pacing")  # evict left out by default
    assert main(["map", f, "--x", "costs.restart", "--x-values", "60", "--y", "job.steps", "--y-values", "100",
                 "--strategies", "ckpt", "ckpt+evict"]) == 2
    assert "hot spare" in capsys.readouterr().err
