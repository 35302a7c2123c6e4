"""Scenario files with correlated failure domains (``[[failures.domains]]``): the levels become a
DomainFailures on top of the single failures, with rates that add up to the interruptions the
file states, the node-to-group mapping, the errors, the rate sensitivity and a run."""
from __future__ import annotations

import math

import pytest

from spare_core.distributions import Exponential
from spare_core.events import FailureModel
from spare_core.events.domains import DomainFailures
from spare_core.scenario_file import ScenarioFileError, parse_duration, parse_scenario
from spare_core.sim import make_policy, simulate

DAY = 86400.0


def _file(failures, *, gpus=16_384, gpg=128, steps=2000):
    return {"cluster": {"gpus": gpus, "gpus_per_node": 8, "gpus_per_group": gpg},
            "job": {"step_time": "6 s", "steps": steps}, "failures": failures,
            "compare": {"seeds": 1, "r_max": 2}}


def _llama(domains, **kw):
    return _file({"model": "node", "interruptions": 384, "period": "54 d", "domains": domains}, **kw)


def test_switch_per_group_adds_its_interruptions_to_the_single_ones():
    # 16 nodes per switch = one 128-GPU group per switch: 384 single + 35 switch interruptions
    # in 54 days are 419 interruptions, one per 54 d / 419 (Llama 3's published rate)
    sf = parse_scenario(_llama([{"name": "switch", "nodes": 16, "interruptions": 35, "period": "54 d"}]))
    fm = sf.scenario.failures
    assert isinstance(fm, DomainFailures)
    assert fm.groups_per_domain == (1,) and fm.names == ("switch",)
    assert fm.lifetimes[0].mean == pytest.approx(54 * DAY * 128 / 35, rel=1e-15)
    assert sf.scenario.system_mtbf == pytest.approx(54 * DAY / 419, rel=1e-12)
    assert "128 switch domains of 16 nodes" in sf.rate_note


def test_domains_holding_groups_and_domains_inside_a_group():
    # groups of 16 nodes; a PDU of 64 nodes holds 4 groups; a rack of 8 nodes is half a group,
    # so a group goes down at either of its 2 racks' failures: one clock at twice the rate
    sf = parse_scenario(_llama([{"name": "pdu", "nodes": 64, "mtbf": "2 y"},
                                {"name": "rack", "nodes": 8, "mtbf": "300 d"}]))
    fm = sf.scenario.failures
    assert fm.groups_per_domain == (4, 1)
    assert fm.lifetimes == (Exponential(2 * 365.25 * DAY), Exponential(150 * DAY))
    single = 54 * DAY / 384
    rate = 1 / single + (2048 / 64) / (2 * 365.25 * DAY) + (2048 / 8) / (300 * DAY)
    assert sf.scenario.system_mtbf == pytest.approx(1 / rate, rel=1e-12)
    # the file's model is the one a user would build by hand, and survives to_dict/from_dict
    by_hand = DomainFailures(fm.base, [Exponential(2 * 365.25 * DAY), Exponential(150 * DAY)],
                             groups_per_domain=[4, 1], names=["pdu", "rack"])
    assert fm == by_hand
    assert FailureModel.from_dict(sf.to_dict()["scenario"]["failure_model"]) == fm


@pytest.mark.parametrize("model", ["node", "per-unit", "system"])
def test_every_rate_model_takes_domains(model):
    sf = parse_scenario(_file({"model": model, "mtbf": "4 h", "domains": {"nodes": 32, "mtbf": "100 d"}}))
    fm = sf.scenario.failures
    assert fm.base.kind == model and fm.base.system_mtbf == pytest.approx(4 * 3600)
    assert fm.names == ("level0",) and fm.groups_per_domain == (2,)
    assert sf.scenario.system_mtbf == pytest.approx(1 / (1 / (4 * 3600) + 64 / (100 * DAY)), rel=1e-12)


def test_at_rate_scales_single_failures_and_every_level():
    sf = parse_scenario(_llama([{"nodes": 64, "mtbf": "2 y"}, {"nodes": 8, "mtbf": "300 d"}]))
    for f in (0.5, 1.5, 2.0):
        sc = sf.at_rate(f)
        assert sc.system_mtbf == pytest.approx(sf.scenario.system_mtbf / f, rel=1e-12)
        assert sc.failures.groups_per_domain == sf.scenario.failures.groups_per_domain


@pytest.mark.parametrize("domains, match", [
    ([{"nodes": 24, "mtbf": "100 d"}], "multiple or a divisor"),                    # straddles groups of 16
    ([{"nodes": 16, "mtbf": "100 d"}, {"nodes": 64, "mtbf": "9 d"}], "must divide the coarser"),
    ([{"nodes": 16}], "exactly one rate form"),
    ([{"nodes": 16, "mtbf": "1 d", "interruptions": 3, "period": "9 d"}], "exactly one rate form"),
    ([{"nodes": 16, "interruptions": 3}], "needs failures.domains\\[0\\].period"),
    ([{"nodes": 16, "mtbf": "1 d", "period": "9 d"}], "only goes with interruptions"),
    ([{"mtbf": "1 d"}], "needs nodes"),
    ([{"nodes": 16, "mtbf": "1 d", "racks": 2}], "is unknown"),
    ([{"nodes": 4096, "mtbf": "1 d"}], "nodes must be an integer >= 1 and <= 2048"),
    ([{"nodes": 16, "mtbf": "-1 d"}], "mtbf must be a duration"),
    ([], "one table per level"),
    ("rack", "one table per level"),
])
def test_bad_domains_name_the_key(domains, match):
    with pytest.raises(ScenarioFileError, match=match):
        parse_scenario(_llama(domains))


def test_domains_need_whole_node_groups_and_a_rate_model(tmp_path):
    with pytest.raises(ScenarioFileError, match="groups of whole nodes"):
        parse_scenario(_file({"model": "system", "mtbf": "4 h", "domains": [{"nodes": 1, "mtbf": "9 d"}]}, gpg=4))
    log = tmp_path / "log.csv"
    log.write_text("time,unit\n10,1\n20,2\n")
    with pytest.raises(ScenarioFileError, match="does not go with model = 'trace'"):
        parse_scenario(_file({"model": "trace", "after": "stop", "trace": {"path": str(log), "n_units": 2048},
                              "domains": [{"nodes": 16, "mtbf": "9 d"}]}))


def test_years_are_julian():
    assert parse_duration("2 y") == parse_duration("730.5 d") == 2 * 365.25 * DAY
    assert parse_duration("1 year") == parse_duration("1 yr") == 365.25 * DAY


@pytest.mark.parametrize("domains", [
    [],
    [{"nodes": 16, "mtbf": "20 d"}],          # a switch per group
    [{"nodes": 64, "mtbf": "20 d"}],          # a PDU over 4 groups: one interruption each
    [{"nodes": 8, "mtbf": "20 d"}],           # two racks per group: the group's clock at twice the rate
])
def test_simulated_failure_rate_is_the_files(domains):
    # failures seen per wall second over 5 long runs against the file's 1 / system MTBF; the
    # domains add 0.4x to 3.2x the single failures' rate (two racks per group counted as one
    # rack's clock would give 0.62)
    failures = {"model": "node", "mtbf": "6 h", **({"domains": domains} if domains else {})}
    sf = parse_scenario({**_file(failures, steps=100_000), "costs": {"restart": "1 s"}})
    runs = [simulate(sf.scenario, make_policy("ckpt", None), seed=s).to_dict() for s in range(5)]
    rate = sum(r["failures_seen"] for r in runs) / sum(r["wall_time"] for r in runs)
    # the file's rate, counted here: a domain failure is one interruption
    stated = 1 / (6 * 3600) + sum((2048 // d["nodes"]) / (20 * DAY) for d in domains)
    assert rate / stated == pytest.approx(1.0, abs=0.15)
    assert sf.scenario.system_mtbf == pytest.approx(1 / stated, rel=1e-12)
    assert all(math.isfinite(r["ratio"]) for r in runs)


# -- SPARe's stacks across the domains (compare.layout = "rack-aware") -----------------------------
def _racks(layout=None, base_mtbf="10000 h"):
    # 128 groups, racks of 8 groups failing every 4 days each, almost no single failures
    f = _file({"model": "system", "mtbf": base_mtbf, "domains": [{"name": "rack", "nodes": 128, "mtbf": "4 d"}]},
              steps=20_000)
    if layout:
        f["compare"] = {**f["compare"], "layout": layout}
    return parse_scenario(f)


def test_rack_aware_layout_is_the_domains_placement():
    from spare_core.strategies.spare.layout import StackedLayout

    assert _racks("rack-aware-sidon").policy_kwargs()["spare"] == {"layout": "rack-aware", "offsets": "sidon"}
    sf = _racks("rack-aware")
    assert sf.policy_kwargs()["spare"] == {"layout": "rack-aware"}
    sc = sf.scenario
    by_hand = StackedLayout.rack_aware(sc.failures.domains(sc.n_groups), 3)
    for seed in range(3):
        a = simulate(sc, make_policy("spare", 3, layout="rack-aware"), seed=seed).to_dict()
        b = simulate(sc, make_policy("spare", 3, layout=by_hand), seed=seed).to_dict()
        assert {k: v for k, v in a.items() if k != "policy"} == {k: v for k, v in b.items() if k != "policy"}


def test_rack_aware_stacks_survive_rack_failures_that_wipe_consecutive_ones():
    # a rack holds 8 consecutive groups: with consecutive stacks of r = 3 one rack failure
    # takes every holder of some type; across the racks no single rack failure can
    sc = _racks().scenario
    wipe = {lay: sum(simulate(sc, make_policy("spare", 3, **kw), seed=s).to_dict()["wipeouts"] for s in range(4))
            for lay, kw in (("consecutive", {}), ("rack-aware", {"layout": "rack-aware"}))}
    assert wipe["rack-aware"] < wipe["consecutive"] / 2


def test_rack_aware_needs_domains():
    with pytest.raises(ScenarioFileError, match="compare.layout: .*needs failure domains"):
        parse_scenario({**_file({"model": "node", "mtbf": "6 h"}), "compare": {"layout": "rack-aware"}})
    plain = parse_scenario(_file({"model": "node", "mtbf": "6 h"})).scenario
    with pytest.raises(ValueError, match="needs failure domains in the scenario"):
        simulate(plain, make_policy("spare", 3, layout="rack-aware"), seed=0)
    with pytest.raises(ValueError, match="offsets None or 'sidon'"):
        make_policy("spare", 3, layout="rack-aware", offsets=[0, 1, 2])
    with pytest.raises(ValueError, match="layout must be a StackedLayout or 'rack-aware'"):
        make_policy("spare", 3, layout="racks")


def test_every_example_file_loads():
    from pathlib import Path

    from spare_core.scenario_file import load_scenario_file

    files = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))
    assert any(f.name == "llama3_16k_switches.toml" for f in files)
    for f in files:
        sf = load_scenario_file(f)
        assert sf.scenario.n_groups >= 2
    sw = load_scenario_file(files[[f.name for f in files].index("llama3_16k_switches.toml")])
    assert sw.scenario.system_mtbf == pytest.approx(54 * DAY / 419, rel=1e-12)  # 384 + 35 interruptions
