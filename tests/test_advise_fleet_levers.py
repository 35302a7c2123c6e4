"""``spare advise`` weighs the fleet's levers: warm standbys (``fleet.standbys``) and retirement
(``fleet.retire_after``) beside the spare pool, each value on the file's seeds at the
recommended policy, r and interval. Each sweep's runs are those of a direct ``spare run`` of the
file with that value (the varied file written out, the interval fixed): the same numbers, bit
for bit; a huge list is refused before any run."""
from __future__ import annotations

import json
import math

import pytest

from spare_core.cli import main
from spare_core.commands.advise import RETIRE_GRID, STANDBYS_GRID
from spare_core._stats import paired_ratio_ci

FLEET = """
name = "tiny-fleet"
[cluster]
gpus = 64
gpus_per_node = 4
gpus_per_group = 8
[job]
step_time = "10 s"
steps = 400
[failures]
model = "node"
node_mtbf = "8 h"
[costs]
restart = "3 min"
checkpoint_save = "20 s"
gpu_hour = 2.0
[repair]
swap = "5 min"
time = "2 h"
spares = 3
[fleet]
lemon_share = 0.25
lemon_rate = 4.0
retire_after = 2
standbys = 2
standby_swap = "30 s"
restart_when = "job+standbys"
[compare]
policies = ["ckpt", "spare"]
r_max = 2
seeds = 3
processes = 1
"""


def _fleet_table(standbys: int | None = None, retire: int | None = None) -> str:
    """The file's [fleet] table with one value changed (0 standbys: no swap time, the default
    restart rule, as the reader requires; 0 retire_after: the key left out)."""
    body = FLEET.split("[fleet]\n")[1].split("[compare]")[0]
    lines = body.strip().splitlines()
    out = []
    for line in lines:
        key = line.split("=")[0].strip()
        if key == "standbys" and standbys is not None:
            line = f"standbys = {standbys}"
        if key in ("standby_swap", "restart_when") and standbys == 0:
            continue
        if key == "retire_after" and retire is not None:
            if retire == 0:
                continue
            line = f"retire_after = {retire}"
        out.append(line)
    return FLEET.replace(body, "\n".join(out) + "\n")


@pytest.fixture(scope="module")
def advised(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleet")
    f = d / "fleet.toml"
    f.write_text(FLEET)
    out = d / "a.json"
    assert main(["advise", str(f), "--no-sensitivity", "--json", str(out)]) == 0
    return d, json.loads(out.read_text())


def _direct(d, text: str, source: str, r: int, interval: float, tag: str) -> dict:
    """``spare run`` of a varied file, one policy at the recommended interval: its runs at r by seed."""
    f = d / f"{tag}.toml"
    f.write_text(text.replace("[compare]\n", f"[compare]\ninterval = {interval!r}\n"))
    out = d / f"{tag}.json"
    assert main(["run", str(f), "--policies", source, "--r-max", str(r), "--json", str(out)]) == 0
    return {x["seed"]: x for x in json.loads(out.read_text())["runs"] if x["redundancy"] == r}


@pytest.mark.parametrize("grid,key,values,vary", [
    (STANDBYS_GRID, "standbys", [0, 1, 2, 4], lambda v: _fleet_table(standbys=v)),
    (RETIRE_GRID, "retirement", [0, 1, 2, 4], lambda v: _fleet_table(retire=v)),
])
def test_each_value_is_a_direct_run_of_the_varied_file(advised, grid, key, values, vary):
    d, doc = advised
    a = doc["advice"]
    assert [v["value"] for v in doc[key]] == values  # 0, half, the file's, double
    runs = [x for x in doc["runs"] if x["grid"] == grid and x["policy"] == a["policy"]
            and x["redundancy"] == a["redundancy"]]
    for value in values:
        mine = {x["seed"]: x for x in runs if x["scenario"].endswith(
            f"[standbys = {value}]" if key == "standbys" else
            (f"[retire after {value} failure{'s' if value != 1 else ''}]" if value else "[no retirement]"))}
        assert len(mine) == 3
        direct = _direct(d, vary(value), a["source"], a["redundancy"], a["checkpoint_interval"], f"{key}{value}")
        assert set(direct) == set(mine)
        for seed, x in mine.items():
            y = direct[seed]
            for col in ("wall_time", "ratio", "finished", "restarts", "failures_seen", "wait_time", "gpus_paid",
                        "gpu_hours", "cost", "spares_taken", "checkpoint_interval"):
                assert x[col] == y[col], (value, seed, col)


def test_a_standby_is_paid_for_all_the_time(advised):
    _, doc = advised
    by = {}
    for x in doc["runs"]:
        if x["grid"] == STANDBYS_GRID:
            n = int(x["scenario"].rsplit("= ", 1)[1].rstrip("]"))
            # the job's 64 GPUs, the 3 spares and the standbys, 4 GPUs a node, all the run long (less
            # the retired nodes' GPUs after they left: the file retires a node at its 2nd failure)
            assert x["gpus_paid"] == 64 + 4 * (3 + n)
            held = x["gpus_paid"] * x["wall_time"] / 3600 - x["retired_gpu_hours"]
            assert x["cost"] == pytest.approx(held * 2.0, rel=1e-12)
            by.setdefault(n, x)
    assert sorted(by) == [0, 1, 2, 4]


def test_the_levers_name_the_fleet_keys_with_paired_intervals(advised):
    _, doc = advised
    a = doc["advice"]
    lv = {(x["key"], x["value"]): x for x in a["levers"]}
    base = {x["seed"]: x for x in doc["runs"] if x["grid"] == "interval scan" and x["policy"] == a["policy"]
            and x["redundancy"] == a["redundancy"]
            and math.isclose(x["checkpoint_interval"], a["checkpoint_interval"], rel_tol=1e-12)}
    for key, grid, tag in (("fleet.standbys", STANDBYS_GRID, "[standbys = 0]"),
                           ("fleet.retire_after", RETIRE_GRID, "[no retirement]")):
        x = lv[(key, 0)]
        runs = {r["seed"]: r for r in doc["runs"] if r["grid"] == grid and r["scenario"].endswith(tag)
                and r["policy"] == a["policy"] and r["redundancy"] == a["redundancy"]}
        pairs = [(runs[s], base[s]) for s in runs if s in base and runs[s]["finished"] and base[s]["finished"]]
        assert x["seeds"] == len(pairs) >= 2
        # the paired ratio of the means, recomputed from the runs (percent)
        want = [100 * v for v in paired_ratio_ci([p["ratio"] for p, _ in pairs], [b["ratio"] for _, b in pairs])]
        assert x["time_percent"] == pytest.approx(want, rel=1e-12, abs=1e-12)
        want_c = [100 * v for v in paired_ratio_ci([p["cost"] for p, _ in pairs], [b["cost"] for _, b in pairs])]
        assert x["cost_percent"] == pytest.approx(want_c, rel=1e-12, abs=1e-12)


def test_the_text_prints_the_fleet_tables(tmp_path, capsys):
    f = tmp_path / "fleet.toml"
    f.write_text(FLEET)
    assert main(["advise", str(f), "--no-sensitivity", "--standbys", "0,3", "--retire-after", "0,5"]) == 0
    out = capsys.readouterr().out
    assert "how many warm standbys" in out and "when to retire a node" in out
    table = out.split("how many warm standbys")[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in table[2:]] == ["0", "3"]


def test_the_plots_draw_every_fleet_sweep(tmp_path, capsys):
    """``--plot`` draws the spares, standbys and retirement sweeps, one PNG each, with a line per
    policy whose points are the printed table's (read back from the figure's data)."""
    pytest.importorskip("matplotlib")
    from unittest import mock

    from spare_core.commands import plots

    f = tmp_path / "fleet.toml"
    f.write_text(FLEET)
    drawn = {}
    real = plots.plot_sweep

    def spy(directory, sf, sweep, kind):
        drawn[kind] = sweep
        return real(directory, sf, sweep, kind)

    d = tmp_path / "plots"
    with mock.patch("spare_core.commands.advise.plot_sweep", spy):
        assert main(["advise", str(f), "--no-sensitivity", "--standbys", "0,3", "--retire-after", "0,5",
                     "--plot", str(d)]) == 0
    out = capsys.readouterr().out
    for stem, kind in (("spares", "spares"), ("standbys", "standbys"), ("retire_after", "retire")):
        png = d / f"{stem}.png"
        assert f"wrote {png}" in out and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [v["value"] for v in drawn["standbys"]] == [0, 3]
    assert [v["value"] for v in drawn["retire"]] == [0, 5]
    # the standbys table's first row is the sweep's first value, as plotted
    row = out.split("how many warm standbys")[1].split("\n\n")[0].splitlines()[2].split()
    first = {r["policy"]: r for r in drawn["standbys"][0]["rows"]}
    assert row[0] == "0" and float(row[1].rstrip(",")) == pytest.approx(next(iter(first.values()))["ratio"], abs=5e-4)


def test_fleet_flags_need_their_tables_and_a_huge_list_is_refused_up_front(tmp_path, capsys):
    f = tmp_path / "plain.toml"
    f.write_text(FLEET.split("[repair]")[0] + "[compare]\npolicies = [\"ckpt\"]\nseeds = 2\n")
    assert main(["advise", str(f), "--standbys", "1,2"]) == 2
    assert "--standbys needs a [repair]" in capsys.readouterr().err
    assert main(["advise", str(f), "--retire-after", "2"]) == 2
    assert "--retire-after needs failures.model = 'node'" in capsys.readouterr().err
    g = tmp_path / "fleet.toml"
    g.write_text(FLEET)
    huge = ",".join(str(n) for n in range(200_001))
    assert main(["advise", str(g), "--standbys", huge]) == 2
    err = capsys.readouterr()
    assert "standbys sweep (--standbys)" in err.err and "beyond the budget" in err.err
    assert "recommendation" not in err.out  # refused before the grid ran
    with pytest.raises(SystemExit):  # argparse's own error, the item at fault named
        main(["advise", str(g), "--retire-after", "2,x"])
    assert "'x' is not an integer" in capsys.readouterr().err


def test_without_a_fleet_table_no_fleet_sweep_runs(tmp_path):
    f = tmp_path / "nofleet.toml"
    f.write_text(FLEET.split("[fleet]")[0] + "[compare]" + FLEET.split("[compare]")[1])
    out = tmp_path / "a.json"
    assert main(["advise", str(f), "--no-sensitivity", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["standbys"] == [] and doc["retirement"] == []
    assert not any(x["grid"] in (STANDBYS_GRID, RETIRE_GRID) for x in doc["runs"])


def test_change_first_can_name_a_fleet_lever(tmp_path, capsys):
    # no standby, no retirement, a pool short of the nodes in repair: restarts wait, and a
    # standby in front of the pool takes the wait out (the lemons keep [fleet] and its sweeps)
    text = _fleet_table(standbys=0, retire=0).replace("seeds = 3", "seeds = 10").replace("steps = 400", "steps = 1500")
    f = tmp_path / "f.toml"
    f.write_text(text)
    out = tmp_path / "a.json"
    assert main(["advise", str(f), "--no-sensitivity", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    best = json.loads(out.read_text())["advice"]["levers"][0]
    assert best["key"] == "fleet.standbys" and best["value"] > 0 and best["time_percent"][2] < 0
    assert f"change first: {best['label']} (TTT {best['time_percent'][0]:+.1f} %" in printed


_LEMONS_DOMAIN = """
[cluster]
gpus = 8
gpus_per_node = 1
gpus_per_group = 1
[job]
step_time = 2.0
steps = 200
[failures]
model = "node"
mtbf = "80 s"
[[failures.classes]]
name = "hw"
share = 0.7
recovery = "swap"
[[failures.classes]]
name = "switch"
share = 0.3
recovery = "domain"
nodes = 2
[repair]
spares = 1
time = 30.0
[fleet]
lemon_share = 0.25
lemon_rate = 4.0
[costs]
checkpoint_save = 1.0
restart = 5.0
[compare]
policies = ["ckpt", "spare"]
r_max = 2
seeds = 2
"""


def test_no_retirement_sweep_where_the_reader_refuses_retirement(tmp_path, capsys):
    """Regression (harden5, found by tests/fuzz/test_fuzz_wave4): with lemons, ``spare advise``
    swept ``fleet.retire_after`` by default, and ``--retire-after`` was taken, beside a domain class,
    which the node log refuses: a ValueError, exit 1. Now no sweep by default (exit 0, no
    retirement table) and the flag refused up front (exit 2)."""
    f = tmp_path / "job.toml"
    f.write_text(_LEMONS_DOMAIN)
    assert main(["advise", str(f), "--no-sensitivity", "--processes", "1"]) == 0
    out = capsys.readouterr().out
    assert "when to retire a node" not in out
    assert main(["advise", str(f), "--no-sensitivity", "--processes", "1", "--retire-after", "0,2"]) == 2
    err = capsys.readouterr().err
    assert "--retire-after needs" in err and len(err.strip().splitlines()) == 1


def test_a_placement_sweeps_retirement(tmp_path, capsys):
    """A moving placement (``fleet.place = "any"``) retires nodes too (a node at its own k-th
    failure): the default sweep runs beside it, and so does ``--retire-after``."""
    text = _LEMONS_DOMAIN.split("[[failures.classes]]")[0] + "[repair]" + _LEMONS_DOMAIN.split("[repair]")[1]
    text = text.replace("[fleet]\n", "[fleet]\n" + 'place = "any"\n')
    f = tmp_path / "job.toml"
    f.write_text(text)
    assert main(["advise", str(f), "--no-sensitivity", "--processes", "1"]) == 0
    assert "when to retire a node" in capsys.readouterr().out
    assert main(["advise", str(f), "--no-sensitivity", "--processes", "1", "--retire-after", "0,1"]) == 0
    assert "when to retire a node" in capsys.readouterr().out
