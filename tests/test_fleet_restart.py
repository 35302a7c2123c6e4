"""The restart rule ([fleet] restart_when): "one" resumes once the job's replacements are in
place (the rule before the key); "job+standbys" also waits for every warm standby to be ready
again (docs/model.md, *Warm standbys*)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core.distributions import Exponential, LogNormal
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import CheckpointOnly, Repairs, SpareCheckpoint, simulate

sys.path.insert(0, str(Path(__file__).parent))
from test_repair_laws import law_cases  # noqa: E402
from test_strategies_reference import _node, assert_same  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BASE = {"cluster": {"gpus": 64, "gpus_per_node": 8, "gpus_per_group": 8},
        "job": {"step_time": "10 s", "steps": 3000}, "failures": {"model": "node", "mtbf": "2 h"}}


def _numbers(r):
    d = r.to_dict()
    d.pop("elapsed", None)
    return d


@pytest.mark.parametrize("hs, rt, sw", [(100.0, 40.0, 5.0), (300.0, 40.0, 0.0), (60.0, 10.0, 20.0)])
def test_a_restart_waiting_for_its_standby_waits_host_select_less_the_restart(hs, rt, sw):
    """Checkpoint-only, an unlimited pool, one standby: with "job+standbys" every restart waits
    for its standby's refill (ready ``f + host_select``), so every failure finds the standby
    ready and each restart waits ``max(host_select, standby_swap) - restart``
    exactly; with "one" the standby is
    in place at ``f + standby_swap`` (before the restart ends) when it is ready."""
    rp = dict(spares=None, time=500.0, swap=0.0, standbys=1, standby_swap=sw, host_select=hs)
    pol = CheckpointOnly(interval=120.0)
    for seed in range(3):
        sc = _node(6, n_steps=300, restart_time=rt, repair=Repairs(restart_when="job+standbys", **rp))
        r = simulate(sc, pol, seed=seed)
        assert r.restarts > 3
        assert r.wait_time == pytest.approx(r.restarts * max(0.0, max(hs, sw) - rt), rel=1e-9)
        one = simulate(sc.replace(repair=Repairs(**rp)), pol, seed=seed)
        assert one.wait_time <= one.restarts * max(0.0, max(hs, sw) - rt) + 1e-9
        assert_same(sc, pol, seed)


def test_one_is_the_rule_before_the_key_bit_for_bit():
    rp = Repairs(spares=2, time=LogNormal(900.0, 1.0), swap=20.0, standbys=2, standby_swap=3.0, host_select=50.0,
                 rejoin=15.0)
    same = Repairs(**{**rp.to_dict(), "restart_when": "one"})
    assert same == rp and "restart_when" not in rp.to_dict()
    for pol in (CheckpointOnly(interval=120.0), SpareCheckpoint(3, interval=200.0)):
        for seed in range(3):
            assert _numbers(simulate(_node(12, repair=rp), pol, seed=seed)) == \
                _numbers(simulate(_node(12, repair=same), pol, seed=seed))


def test_waiting_for_the_standbys_is_never_sooner_with_an_unlimited_pool():
    """With an unlimited pool a restart's resume under "job+standbys" is the later of the one
    rule's and the refills, on the same first failure; over a run the job meets other failures,
    so compare the mean over seeds, the more waiting rule slower."""
    rp = dict(spares=None, time=500.0, swap=10.0, standbys=2, standby_swap=5.0, host_select=200.0)
    pol = CheckpointOnly(interval=120.0)
    a = b = 0.0
    for seed in range(8):
        a += simulate(_node(8, repair=Repairs(**rp)), pol, seed=seed).time_to_train
        b += simulate(_node(8, repair=Repairs(restart_when="job+standbys", **rp)), pol, seed=seed).time_to_train
    assert b > a


@st.composite
def rule_cases(draw):
    sc, pol, seed = draw(law_cases())
    rp = sc.repair
    w = draw(st.sampled_from([1, 2, 3]))
    rp = Repairs(**{**rp.to_dict(), "standbys": w, "restart_when": "job+standbys",
                    "host_select": draw(st.sampled_from([0.0, 50.0, 400.0])),
                    "standby_swap": draw(st.sampled_from([0.0, 3.0]))})
    return sc.replace(repair=rp), pol, seed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule_cases())
def test_job_plus_standbys_equals_the_reference(case):
    """The reference waits at a restart for the latest of its groups' replacements and every
    standby's ready time; the fast path raises the epoch's latest ready time at each refill."""
    assert_same(*case)


def _file(fleet, repair=None):
    return parse_scenario({**BASE, "repair": {"time": "2 h", "spares": 2} if repair is None else repair,
                           "fleet": fleet}, source="r.toml")


def test_the_key_reads_and_its_errors_name_it():
    sf = _file({"standbys": 2, "host_select": "30 min", "restart_when": "job+standbys"})
    assert sf.scenario.repair.restart_when == "job+standbys"
    assert _file({"standbys": 2, "restart_when": "one"}).scenario.repair == _file({"standbys": 2}).scenario.repair
    for fleet, words in [({"standbys": 1, "restart_when": "all"}, "fleet.restart_when must be one of"),
                         ({"restart_when": "job+standbys"}, "'job+standbys' needs fleet.standbys >= 1"),
                         ({"standbys": 1, "restart_when": 1}, "fleet.restart_when")]:
        with pytest.raises(ScenarioFileError) as e:
            _file(fleet)
        assert words in str(e.value) and str(e.value).startswith("r.toml: ")
    with pytest.raises(ScenarioFileError) as e:
        parse_scenario({**BASE, "fleet": {"standbys": 1, "restart_when": "one"}}, source="r.toml")
    assert "needs [repair]" in str(e.value)
    with pytest.raises(ValueError) as e:
        Repairs(restart_when="job+standbys")
    assert "needs fleet.standbys >= 1" in str(e.value)
    with pytest.raises(ValueError) as e:
        Repairs(standbys=1, restart_when="both")
    assert "fleet.restart_when must be one of ['one', 'job+standbys']" in str(e.value)
