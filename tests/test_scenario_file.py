"""Scenario files: unit conversions against the published figures, exact equality with the
presets, one clear error per bad key / type / range, overrides."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from spare_core.scenario_file import (
    ScenarioFileError,
    apply_overrides,
    load_scenario_file,
    parse_duration,
    parse_scenario,
)
from spare_core.sim import Scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _base(**over):
    data = {
        "cluster": {"gpus": 1024, "gpus_per_node": 8, "gpus_per_group": 32},
        "job": {"step_time": "10 s", "steps": 1000},
        "failures": {"model": "system", "mtbf": "2 h"},
    }
    for key, value in over.items():
        section, name = key.split("__")
        if value is None:
            data[section].pop(name, None)
        else:
            data.setdefault(section, {})[name] = value
    return data


def test_paper_example_is_the_paper_preset():
    sf = load_scenario_file(EXAMPLES / "paper_600k.toml")
    assert sf.scenario == Scenario.paper_600k(600)
    assert sf.redundancies == tuple(range(1, 21)) and sf.seeds == tuple(range(5))


def test_llama3_rate_conversion():
    # 419 interruptions in 54 days on 16,384 GPUs: one every 54 * 24 / 419 = 3.093 h
    sf = load_scenario_file(EXAMPLES / "llama3_16k.toml")
    assert sf.scenario.system_mtbf == pytest.approx(54 * 86400 / 419, rel=1e-12)
    assert sf.scenario.n_groups == 128 and sf.gpus_per_group == 128 and sf.nodes == 2048


def test_rsc1_rate_conversion_and_tokens():
    # 6.5 failures per 1,000 node-days on 2,000 nodes: 13 a day, one every 6,646 s
    sf = load_scenario_file(EXAMPLES / "rsc1_2000_nodes.toml")
    assert sf.scenario.system_mtbf == pytest.approx(86400 / 13, rel=1e-12)
    assert sf.gpus == 16_000 and sf.scenario.n_groups == 250
    assert sf.scenario.step_time == pytest.approx(8_388_608 / 2.0e6)
    assert sf.scenario.n_steps == math.ceil(2.0e12 / 8_388_608)


@pytest.mark.parametrize("form, value, mtbf", [
    ("per_node_day", 0.01, 86400 / (0.01 * 128)),
    ("per_1000_node_days", 6.5, 1000 * 86400 / (6.5 * 128)),
    ("per_gpu_year", 0.173, 365.25 * 86400 / (0.173 * 1024)),
    ("mtbf", "3 h", 3 * 3600.0),
    ("node_mtbf", "1000 h", 1000 * 3600.0 / 128),
])
def test_every_rate_form(form, value, mtbf):
    over = {"failures__mtbf": None}
    over[f"failures__{form}"] = value
    sf = parse_scenario(_base(**over))
    assert sf.scenario.system_mtbf == pytest.approx(mtbf, rel=1e-12)


def test_interruptions_measured_elsewhere_scale_per_gpu():
    # 100 interruptions in 10 days on 4x the GPUs -> 4x the MTBF on this job
    sf = parse_scenario(_base(failures__mtbf=None, failures__interruptions=100, failures__period="10 d",
                              failures__measured_on_gpus=4096))
    assert sf.scenario.system_mtbf == pytest.approx(10 * 86400 / 100 * 4)


def test_tp_pp_give_the_group():
    sf = parse_scenario(_base(cluster__gpus_per_group=None, cluster__tp=8, cluster__pp=4))
    assert sf.gpus_per_group == 32 and sf.scenario.n_groups == 32


@pytest.mark.parametrize("over, words", [
    ({"cluster__gpus": 1020}, ["cluster.gpus", "multiple of cluster.gpus_per_node", "1020"]),
    ({"cluster__gpus": "many"}, ["cluster.gpus", "integer", "'many'"]),
    ({"cluster__gpus_per_group": 48}, ["cluster.gpus_per_group", "divide", "48"]),
    ({"cluster__gpus_per_group": 1024}, ["cluster.gpus_per_group", "at least 2", "1024"]),
    ({"cluster__gpu": 3}, ["cluster.gpu", "unknown", "3"]),
    ({"job__step_time": "-3 s"}, ["job.step_time", "duration", "'-3 s'"]),
    ({"job__step_time": "10 parsecs"}, ["job.step_time", "duration", "'10 parsecs'"]),
    ({"job__allreduce_time": "20 s"}, ["job.allreduce_time", "shorter than the step", "20 s"]),
    ({"job__jitter": 1.5}, ["job.jitter", "< 1", "1.5"]),
    ({"job__steps": 0}, ["job.steps", ">= 1", "0"]),
    ({"failures__model": "weird"}, ["failures.model", "one of", "'weird'"]),
    ({"failures__per_node_day": 0.1}, ["exactly one rate form", "per_node_day", "mtbf"]),
    ({"failures__mtbf": None}, ["exactly one rate form", "none"]),
    ({"failures__weibull_shape": 0}, ["failures.weibull_shape", "> 0", "0"]),
    ({"failures__period": "3 d"}, ["failures.period", "only goes with failures.interruptions"]),
    ({"costs__restart": "soon"}, ["costs.restart", "duration", "'soon'"]),
    ({"compare__policies": ["spare", "magic"]}, ["compare.policies", "one of", "'magic'"]),
    ({"compare__policies": "spare"}, ["compare.policies", "list", "'spare'"]),
    ({"compare__redundancies": [64, 100]}, ["compare.redundancies", "<= the number of groups (32)"]),
    ({"compare__seeds": 2.5}, ["compare.seeds", "integer", "2.5"]),
    ({"compare__interval": "often"}, ["compare.interval", "'auto', 'young', 'daly'", "'often'"]),
    ({"compare__horizon": 1}, ["compare.horizon", "> 1", "1"]),
    ({"compare__charge_patch": "yes"}, ["compare.charge_patch", "true or false", "'yes'"]),
])
def test_bad_values_name_key_rule_value(over, words):
    with pytest.raises(ScenarioFileError) as info:
        parse_scenario(_base(**over), source="job.toml")
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("job.toml: ")
    for w in words:
        assert w in msg, (w, msg)


def test_unknown_top_level_key_and_missing_table():
    with pytest.raises(ScenarioFileError, match=r"key 'clusters' is unknown"):
        parse_scenario({**_base(), "clusters": {}})
    data = _base()
    del data["job"]
    with pytest.raises(ScenarioFileError, match=r"the table \[job\] is missing"):
        parse_scenario(data)


def test_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[cluster\ngpus = 3\n")
    with pytest.raises(ScenarioFileError, match=r"not valid TOML") as info:
        load_scenario_file(bad)
    assert "\n" not in str(info.value)
    with pytest.raises(ScenarioFileError, match=r"cannot read scenario file"):
        load_scenario_file(tmp_path / "missing.toml")


def test_overrides_win_and_parse_toml_values():
    data = apply_overrides(_base(), ["failures.mtbf=30min", 'compare.policies=["spare"]', "job.steps=50"])
    sf = parse_scenario(data)
    assert sf.scenario.system_mtbf == 1800.0 and sf.policies == ("spare",) and sf.scenario.n_steps == 50
    with pytest.raises(ScenarioFileError, match="KEY=VALUE"):
        apply_overrides({}, ["failures.mtbf"])
    with pytest.raises(ScenarioFileError, match="SECTION.TABLE.NAME"):
        apply_overrides({}, ["a.b.c.d=1"])
    # three parts reach a policy's own table
    assert apply_overrides({"policy": {"spare": {"offsets": "sidon"}}}, ["policy.spare.layout=rack-aware"]) == {
        "policy": {"spare": {"offsets": "sidon", "layout": "rack-aware"}}}


def test_overrides_do_not_touch_the_callers_table():
    data = _base()
    before = json.dumps(data, sort_keys=True)
    apply_overrides(data, ["job.steps=5"])
    assert json.dumps(data, sort_keys=True) == before


@pytest.mark.parametrize("text, seconds", [("90 s", 90.0), ("30 min", 1800.0), ("3.1 h", 11160.0),
                                           ("54 d", 54 * 86400.0), ("1_000 ms", 1.0), ("2 weeks", 14 * 86400.0)])
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


def test_resolved_file_is_json_serialisable():
    sf = load_scenario_file(EXAMPLES / "rsc1_2000_nodes.toml")
    doc = json.loads(json.dumps(sf.to_dict(), allow_nan=False))
    assert doc["cluster"]["groups"] == 250 and doc["file"]["failures"]["per_1000_node_days"] == 6.5
