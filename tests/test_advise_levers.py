"""``spare advise`` names its levers: the recommendation's time breakdown, what each variant does
to the advice as given (at the recommended interval, paired over the same seeds), the one to
change first, and the spare pool against Little's law."""
from __future__ import annotations

import json
import math

import pytest

from spare_core.cli import main
from spare_core.commands.advise import spares_check
from spare_core.scenario_file import parse_scenario
from spare_core.sim.results import KEPT_STEPS, TIME_PARTS

TINY = """
name = "tiny-levers"
[cluster]
gpus = 64
gpus_per_node = 4
gpus_per_group = 8
[job]
step_time = "10 s"
steps = 300
[failures]
mtbf = "30 min"
[costs]
restart = "3 min"
checkpoint_save = "20 s"
gpu_hour = 2.0
[repair]
swap = "1 min"
time = "3 h"
spares = 2
[compare]
policies = ["ckpt", "spare"]
r_max = 3
seeds = 3
processes = 1
"""


@pytest.fixture(scope="module")
def advised(tmp_path_factory):
    d = tmp_path_factory.mktemp("levers")
    f = d / "tiny.toml"
    f.write_text(TINY)
    out = d / "a.json"
    assert main(["advise", str(f), "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_little_law_on_the_pool():
    sf = parse_scenario({"cluster": {"gpus": 64, "gpus_per_node": 4, "gpus_per_group": 8},
                         "job": {"step_time": 1, "steps": 10}, "failures": {"mtbf": "30 min"},
                         "repair": {"swap": "1 min", "time": "3 h", "spares": 2}})
    c = spares_check(sf.scenario)
    assert c["in_repair"] == pytest.approx(3 * 3600 / sf.scenario.system_mtbf)
    # M/G/inf: P(at least 2 of Poisson(6) in repair), computed here by the series
    lam = c["in_repair"]
    assert c["wait_share"] == pytest.approx(1.0 - math.exp(-lam) * (1.0 + lam), rel=1e-12)
    assert c["enough"] is False
    assert spares_check(sf.with_overrides([("repair.spares", 100)]).scenario)["enough"] is True
    # a pool just above the mean still keeps about 40 % of the failures waiting: not enough
    near = spares_check(sf.with_overrides([("repair.spares", 7)]).scenario)
    assert near["pool"] > near["in_repair"] and 0.3 < near["wait_share"] < 0.5 and near["enough"] is False


def test_the_variants_keep_the_recommended_interval(advised):
    a = advised["advice"]
    runs = [x for x in advised["runs"] if x["grid"] in ("sensitivity", "spares sweep") and x["policy"] == a["policy"]
            and x["redundancy"] == a["redundancy"]]
    assert runs and all(math.isclose(x["checkpoint_interval"], a["checkpoint_interval"], rel_tol=1e-9) for x in runs)


def test_the_breakdown_and_the_levers(advised):
    a = advised["advice"]
    b = a["breakdown"]
    assert b[KEPT_STEPS] >= 0 and math.fsum(b[k] for k, _ in TIME_PARTS) + b[KEPT_STEPS] == pytest.approx(b["wall"])
    lv = a["levers"]
    assert lv and [x["time_percent"][0] for x in lv] == sorted(x["time_percent"][0] for x in lv)
    assert len({(x["key"], json.dumps(x["value"])) for x in lv}) == len(lv)
    # fewer spares against about 6 nodes in repair cannot be faster than the file's 2
    zero = next(x for x in lv if x["key"] == "repair.spares" and x["value"] == 0)
    assert zero["time_percent"][0] >= 0
    assert a["spares_check"]["enough"] is False


def test_the_text_names_the_lever_to_change_first(tmp_path, capsys):
    f = tmp_path / "tiny.toml"
    f.write_text(TINY)
    assert main(["advise", str(f), "--no-sensitivity"]) == 0
    out = capsys.readouterr().out
    assert "where the time goes: kept training steps" in out
    assert "change first:" in out and "spare pool: about" in out and "too few" in out
