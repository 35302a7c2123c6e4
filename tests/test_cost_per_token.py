"""Cost per token: a run's cost over the tokens its job trains (``job.steps`` x
``job.tokens_per_step``), per million, at the price the run pays and, with
``costs.spot_gpu_hour``, at both prices; absent (None) without the tokens per step, the price or
a finished run. Checked by hand from the file's numbers, in the JSON and the CSV of
``spare run`` and in ``spare advise``'s estimates; the file's other numbers unchanged."""
from __future__ import annotations

import csv
import json
import math

import pytest

from spare_core.cli import main
from spare_core.scenario_file import parse_scenario
from spare_core.sim import simulate
from spare_core.commands.filejob import file_policy

GPUS, GPN, SPARES, STEPS, TPS, PRICE, SPOT = 64, 4, 2, 300, 2_097_152, 2.5, 0.8

FILE = f"""
name = "tokens"
[cluster]
gpus = {GPUS}
gpus_per_node = {GPN}
gpus_per_group = 8
[job]
step_time = "10 s"
steps = {STEPS}
tokens_per_step = {TPS}
[failures]
mtbf = "40 min"
[costs]
restart = "3 min"
checkpoint_save = "20 s"
gpu_hour = {PRICE}
spot_gpu_hour = {SPOT}
[repair]
swap = "1 min"
time = "2 h"
spares = {SPARES}
[compare]
policies = ["ckpt", "spare"]
r_max = 2
seeds = 3
processes = 1
"""


def _run(tmp_path, text: str, tag: str, *extra: str) -> tuple[dict, list[dict]]:
    f = tmp_path / f"{tag}.toml"
    f.write_text(text)
    out, table = tmp_path / f"{tag}.json", tmp_path / f"{tag}.csv"
    assert main(["run", str(f), "--json", str(out), "--csv", str(table), *extra]) == 0
    rows = list(csv.DictReader(line for line in table.read_text().splitlines() if not line.startswith("#")))
    return json.loads(out.read_text()), rows


def _by_hand(wall: float, price: float) -> float:
    """The file's GPUs (the job's and the spares') for the wall time at ``price``, per million tokens."""
    return (GPUS + SPARES * GPN) * wall / 3600 * price / (STEPS * TPS / 1e6)


def test_the_cost_per_token_is_the_cost_over_the_tokens_trained(tmp_path):
    doc, rows = _run(tmp_path, FILE, "t")
    finished = [r for r in doc["runs"] if r["finished"]]
    assert finished
    for r, row in zip(doc["runs"], rows):
        assert r["tokens"] == STEPS * TPS
        if not r["finished"]:
            assert r["cost_per_mtoken"] is None and row["cost_per_mtoken"] == ""
            continue
        # no capacity log: the run pays on demand, and the spot figure is what spot nodes would cost
        assert r["cost_per_mtoken"] == pytest.approx(_by_hand(r["wall_time"], PRICE), rel=1e-12)
        assert r["on_demand_cost_per_mtoken"] == r["cost_per_mtoken"]
        assert r["spot_cost_per_mtoken"] == pytest.approx(_by_hand(r["wall_time"], SPOT), rel=1e-12)
        assert r["cost_per_mtoken"] == pytest.approx(r["cost"] / (r["tokens"] / 1e6), rel=1e-12)
        assert float(row["cost_per_mtoken"]) == pytest.approx(r["cost_per_mtoken"], rel=1e-12)
        assert float(row["spot_cost_per_mtoken"]) == pytest.approx(r["spot_cost_per_mtoken"], rel=1e-12)


def test_without_tokens_per_step_or_a_spot_price_the_fields_are_absent(tmp_path):
    doc, rows = _run(tmp_path, FILE.replace(f"tokens_per_step = {TPS}\n", ""), "n")
    for r, row in zip(doc["runs"], rows):
        assert r["tokens"] == 0.0
        assert r["cost_per_mtoken"] is None and r["spot_cost_per_mtoken"] is None
        assert r["on_demand_cost_per_mtoken"] is None
        assert row["cost_per_mtoken"] == "" and row["spot_cost_per_mtoken"] == ""
    doc, _ = _run(tmp_path, FILE.replace(f"spot_gpu_hour = {SPOT}\n", ""), "s")
    done = [r for r in doc["runs"] if r["finished"]]
    assert done and all(r["spot_cost_per_mtoken"] is None and r["cost_per_mtoken"] is not None for r in done)


def test_the_tokens_change_no_other_number():
    with_t = parse_scenario(_toml(FILE))
    without = parse_scenario(_toml(FILE.replace(f"tokens_per_step = {TPS}\n", "")))
    new = {"tokens", "cost_per_mtoken", "on_demand_cost_per_mtoken", "spot_cost_per_mtoken"}
    for name, r in (("ckpt", 1), ("spare", 2)):
        for seed in range(3):
            a = simulate(with_t.scenario, file_policy(with_t, name, r), seed=seed).to_dict()
            b = simulate(without.scenario, file_policy(without, name, r), seed=seed).to_dict()
            assert {k: v for k, v in a.items() if k not in new} == {k: v for k, v in b.items() if k not in new}
    assert "tokens_per_step" not in without.scenario.pricing.to_dict()
    assert with_t.scenario.pricing.to_dict()["tokens_per_step"] == TPS


def test_advise_gives_the_mean_cost_per_token_with_its_interval(tmp_path, capsys):
    f = tmp_path / "a.toml"
    f.write_text(FILE)
    out = tmp_path / "a.json"
    assert main(["advise", str(f), "--no-sensitivity", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    a = doc["advice"]
    runs = [r for r in doc["runs"] if r["grid"] == "interval scan" and r["policy"] == a["policy"]
            and r["redundancy"] == a["redundancy"]
            and math.isclose(r["checkpoint_interval"], a["checkpoint_interval"], rel_tol=1e-12)]
    assert len(runs) == 3 and all(r["finished"] for r in runs)
    for key, price in (("on_demand_cost_per_mtoken", PRICE), ("spot_cost_per_mtoken", SPOT)):
        want = math.fsum(_by_hand(r["wall_time"], price) for r in runs) / 3
        assert a[key][0] == pytest.approx(want, rel=1e-12)
        assert a[key][1] <= a[key][0] <= a[key][2]
    assert "cost per 1M tokens" in text and "on demand" in text and "on spot nodes" in text


def _toml(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


def test_the_report_states_the_cost_per_token(tmp_path):
    f = tmp_path / "a.toml"
    f.write_text(FILE)
    page = tmp_path / "r.html"
    assert main(["report", str(f), "--no-sensitivity", "--html", str(page)]) == 0
    assert "Cost per million tokens:" in page.read_text() and "on spot nodes" in page.read_text()
    f.write_text(FILE.replace(f"tokens_per_step = {TPS}\n", ""))
    assert main(["report", str(f), "--no-sensitivity", "--html", str(page)]) == 0
    assert "Cost per million tokens" not in page.read_text()


def test_a_run_on_a_capacity_log_pays_spot_and_shows_both_prices(tmp_path, capsys):
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "preemption_job.toml"
    out = tmp_path / "p.json"
    tps = 4_194_304
    assert main(["advise", str(example), "--set", "compare.seeds=2", "--set", f"job.tokens_per_step={tps}",
                 "--no-sensitivity", "--processes", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    price, spot = (doc["provenance"]["scenario"]["scenario"]["pricing"][k] for k in ("gpu_hour", "spot_gpu_hour"))
    done = [r for r in doc["runs"] if r["finished"]]
    assert done
    for r in done:
        mtok = r["tokens"] / 1e6
        assert r["gpu_hour_price"] == spot and r["cost_per_mtoken"] == r["spot_cost_per_mtoken"]
        assert r["spot_cost_per_mtoken"] == pytest.approx(r["gpu_hours"] * spot / mtok, rel=1e-12)
        assert r["on_demand_cost_per_mtoken"] == pytest.approx(r["gpu_hours"] * price / mtok, rel=1e-12)
    assert f"at {spot:g} per GPU-hour, spot" in text and "on demand;" in text and "on spot nodes" in text
