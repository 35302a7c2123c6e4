"""The interval scan behind ``spare advise``: it goes on past its edge when the fastest interval
is there, at most SCAN_EXTENSIONS times, pairs the new intervals with the same seeds, says when
the pick is still at the edge, and its budget estimate counts every run it can make."""
from __future__ import annotations

import math

import pytest

from spare_core.commands.filejob import SCAN_EXTENSIONS, SCAN_FACTORS, SCAN_STEP, interval_scan, scan_study_size
from spare_core.scenario_file import parse_scenario


def _file(mtbf: str, save: str, restart: str, steps: int = 400):
    return parse_scenario({
        "cluster": {"gpus": 64, "gpus_per_node": 4, "gpus_per_group": 8},
        "job": {"step_time": "10 s", "steps": steps},
        "failures": {"model": "system", "mtbf": mtbf},
        "costs": {"restart": restart, "checkpoint_save": save},
        "compare": {"policies": ["ckpt"], "seeds": 3, "processes": 1},
    })


def test_an_interior_optimum_is_not_extended():
    # frequent failures, cheap saves: the best interval lies well inside 1/4..4 x Young's
    scan = interval_scan(_file("20 min", "5 s", "1 min"), "ckpt", 1)
    assert scan.extended == 0 and scan.at_edge is None
    have = scan.intervals()
    assert have[0] < scan.fastest() < have[-1]


def test_an_optimum_past_the_longest_interval_is_searched_for():
    # a save costs as much as 6 steps and failures are rare: the longer the better, up to "never"
    sf = _file("3 d", "60 s", "1 min", steps=2000)
    scan = interval_scan(sf, "ckpt", 1)
    base = len(set(SCAN_FACTORS)) + 1
    assert scan.extended >= 1
    have = scan.intervals()
    assert len(have) >= base + len(SCAN_STEP)
    if scan.at_edge is not None:  # still at the edge: only after every extension
        assert scan.extended == SCAN_EXTENSIONS and scan.at_edge == "longest" and scan.fastest() == have[-1]
    else:
        assert have[0] < scan.fastest() < have[-1]
    # every interval ran on the same seeds (the paired comparison needs it)
    seeds = {tuple(r.seed for r in scan.runs(s)) for s in have}
    assert seeds == {tuple(sf.seeds)}
    # the budget's estimate is never below what the scan ran
    assert len(scan_study_size(sf)) >= len(scan.result.runs)


def test_the_advice_warns_when_the_pick_is_at_the_edge(capsys):
    from spare_core.commands.advise import _interval_choice

    sf = _file("3 d", "60 s", "1 min", steps=2000)
    scan = interval_scan(sf, "ckpt", 1)
    advice = {"source": "ckpt", "redundancy": 1, "interval_rule": scan.chosen_rule}
    out = _interval_choice(scan, advice, sf)
    assert out["scan"]["extended"] == scan.extended and out["scan"]["at_edge"] == scan.at_edge
    assert ("edge_warning" in out) == (scan.at_edge is not None)
    if scan.at_edge is not None:
        assert "may lie beyond" in out["edge_warning"]
    assert math.isfinite(out["seconds"]) and out["seconds"] in scan.intervals()
