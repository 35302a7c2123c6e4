"""``spare map`` over the fleet's keys: ``fleet.standbys`` and ``fleet.retire_after`` as axes (0
standbys drop the standby swap and the "job+standbys" rule; 0 retire_after is no retirement),
each cell the file with those values; every pick carries its cost, whichever the objective, and
the cell the strategy cheapest at the choices made (the winner in cost beside the winner in
time)."""
from __future__ import annotations

import json
import math

import pytest

from spare_core.cli import main

from test_advise_fleet_levers import FLEET, _fleet_table

T0 = 400 * 10.0  # the file's 400 steps of 10 s, failure-free


def _map(tmp_path, text: str, tag: str, x: tuple, y: tuple, *extra: str) -> dict:
    f = tmp_path / f"{tag}.toml"
    f.write_text(text)
    out = tmp_path / f"{tag}.json"
    assert main(["map", str(f), "--strategies", "ckpt", "spare", "--seeds", "2", "--processes", "1",
                 "--x", *x, "--y", *y, "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


def _cells(doc: dict) -> dict:
    return {(c["x"], c["y"]): c for c in doc["cells"]}


MTBF = ("failures.node_mtbf", "--y-values", "'6 h'", "'12 h'")


@pytest.fixture(scope="module")
def standbys_map(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleetmap")
    # no retirement: every GPU held all the run long (a retired node's are not: docs/model.md, Cost)
    return d, _map(d, _fleet_table(retire=0), "sb", ("fleet.standbys", "--x-values", "0", "1", "3"), MTBF)


def test_a_cell_without_standbys_is_the_file_without_them(standbys_map):
    d, doc = standbys_map
    # the file written with no standby (its swap and its restart rule left out, as the reader asks)
    other = _map(d, _fleet_table(standbys=0, retire=0), "sb0", ("fleet.standbys", "--x-values", "0"), MTBF)
    mine, theirs = _cells(doc), _cells(other)
    for y in ("6 h", "12 h"):
        a, b = mine[(0, y)], theirs[(0, y)]
        assert a["winner"] == b["winner"]
        for p, q in zip(a["picks"], b["picks"]):
            assert (p["values"], p["ratios"], p["costs"], p["interval"]) == (q["values"], q["ratios"], q["costs"],
                                                                              q["interval"])


def test_each_pick_pays_for_its_standbys_and_the_cheapest_is_the_least_mean_cost(standbys_map):
    _, doc = standbys_map
    assert doc["objective"] == "time"
    for c in doc["cells"]:
        n = c["x"]
        for p in c["picks"]:
            # the job's 64 GPUs, 3 spares and n standbys of 4 GPUs, paid all the wall time at 2 per GPU-hour
            want = [(64 + 4 * (3 + n)) * r * T0 / 3600 * 2.0 for r in p["ratios"]]
            assert p["costs"] == pytest.approx(want, rel=1e-9)
            assert p["cost_mean"] == pytest.approx(math.fsum(p["costs"]) / len(p["costs"]), rel=1e-12)
        if all(all(p["finished"]) for p in c["picks"]):
            assert c["cheapest"] == min(c["picks"], key=lambda p: math.fsum(p["costs"]))["strategy"]


def test_a_map_over_retirement_reads_0_as_none(tmp_path):
    x = ("fleet.retire_after", "--x-values", "0", "2")
    doc = _map(tmp_path, FLEET, "rt", x, MTBF)
    off = _map(tmp_path, _fleet_table(retire=0), "rt0", ("fleet.standbys", "--x-values", "2"), MTBF)
    mine, theirs = _cells(doc), _cells(off)
    for y in ("6 h", "12 h"):
        for p, q in zip(mine[(0, y)]["picks"], theirs[(2, y)]["picks"]):
            assert (p["values"], p["costs"]) == (q["values"], q["costs"])


def test_the_documented_fleet_examples_run(tmp_path, capsys, monkeypatch):
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "cli.md").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln.startswith(("spare map examples/airesim_lemons.toml",
                                                               "spare advise examples/airesim_lemons.toml"))]
    assert len(lines) == 2
    monkeypatch.chdir(root)
    for ln in lines:
        argv = shlex.split(ln)[1:] + ["--processes", "1", "--json", str(tmp_path / "out.json")]
        assert main(argv) == 0, capsys.readouterr().err
        doc = json.loads((tmp_path / "out.json").read_text())
        if argv[0] == "map":
            assert [c["x"] for c in doc["cells"][:4]] == [0, 1, 2, 4] and all(c["cheapest"] for c in doc["cells"])
        else:
            assert [v["value"] for v in doc["standbys"]] == [0, 1, 2]
            assert [v["value"] for v in doc["retirement"]] == [0, 3]
    assert "cheapest (each strategy's choice by time" in capsys.readouterr().out
