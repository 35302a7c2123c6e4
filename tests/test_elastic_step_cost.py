"""Elastic training's per-step cost (``elastic.step_overhead``, ``elastic.quorum``): every step,
failures or not, takes that much longer (issue 32 item 3)."""
import math

import pytest

from spare_core.scenario_file import ScenarioFileError, parse_scenario
from spare_core.sim import ElasticDP, Scenario, simulate

NEVER = 1e15  # a system MTBF no run of these sizes meets


def _quiet(**kw):
    return Scenario(8, n_steps=500, t_compute=9.0, t_allreduce=1.0, system_mtbf=NEVER, jitter=0.0, **kw)


@pytest.mark.parametrize("over,quorum,per_step", [(0.0, 0.0, 0.0), (0.5, 0.0, 0.5), ("5 %", 0.0, 0.5),
                                                  ("2 %", "0.3 s", 0.5), (0.0, 0.25, 0.25)])
def test_a_failure_free_run_pays_the_cost_on_every_step(over, quorum, per_step):
    sc = _quiet()
    r = simulate(sc, ElasticDP(step_overhead=over, quorum=quorum, interval=math.inf), seed=3)
    # no failure, no save: the wall time is the steps, each step + its overhead
    assert r.failures_seen == 0
    assert r.wall_time == pytest.approx(sc.n_steps * (sc.t_compute + sc.t_allreduce + per_step), rel=1e-12)
    assert r.ratio == pytest.approx(1.0 + per_step / 10.0, rel=1e-12)


def test_without_the_keys_a_run_is_unchanged_bit_for_bit():
    sc = Scenario(16, n_steps=3000, t_compute=9.0, t_allreduce=1.0, system_mtbf=2000.0)
    a = simulate(sc, ElasticDP(interval=300.0), seed=5)
    b = simulate(sc, ElasticDP(interval=300.0, step_overhead=0.0, quorum=0.0), seed=5)
    assert a.wall_time == b.wall_time and a.time_to_train == b.time_to_train and a.lost_time == b.lost_time


def test_the_overhead_costs_time_under_failures_too():
    sc = Scenario(16, n_steps=3000, t_compute=9.0, t_allreduce=1.0, system_mtbf=2000.0)
    base = simulate(sc, ElasticDP(interval=300.0), seed=5)
    slow = simulate(sc, ElasticDP(interval=300.0, step_overhead="10 %"), seed=5)
    assert slow.wall_time > base.wall_time


@pytest.mark.parametrize("bad", ["-1 %", "2000 %", "fast", -1.0, "x %", [1]])
def test_bad_values_are_refused(bad):
    with pytest.raises(ValueError, match="step_overhead"):
        ElasticDP(step_overhead=bad)


def test_the_file_keys_reach_the_run():
    data = {"cluster": {"gpus": 64, "gpus_per_node": 8, "gpus_per_group": 8},
            "job": {"step_time": "10 s", "allreduce_time": "1 s", "steps": 200},
            "failures": {"model": "system", "mtbf": "100000 d"},
            "compare": {"policies": ["elastic"]},
            "elastic": {"step_overhead": "5 %", "quorum": "0.1 s"}}
    sf = parse_scenario(data)
    assert sf.policy_options["elastic"]["step_overhead"] == "5 %"
    with pytest.raises(ScenarioFileError, match="step_overhead"):
        parse_scenario({**data, "elastic": {"step_overhead": "lots"}})
