"""``spare map`` and :mod:`spare_core.sim.strategy_map`: which strategy wins where.

Small maps on a tiny job: a case with an obvious winner is found everywhere and stops adding
seeds at the minimum, identical strategies are a tie, one seed is never sure, every value of a
cell is the run ``simulate`` gives on that seed, the searches find a minimum, the work stays
within the bound the budget reads, bad input is refused before any run, and the outputs are
written (strict JSON, CSV with provenance, a PNG).
"""
from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from spare_core.scenario_file import load_scenario_file
from spare_core.sim import CheckpointOnly, simulate
from spare_core.strategies import POLICY_REGISTRY, RegisteredPolicy
from spare_core.sim.strategy_map import MapSettings, Strategy, _compass, evaluate_cell

TINY = """
name = "tiny-map"

[cluster]
gpus = 32
gpus_per_node = 4
gpus_per_group = 8

[job]
step_time = "10 s"
steps = 200

[failures]
mtbf = "2 h"

[costs]
restart = "5 min"
checkpoint_save = "10 s"
{price}

[repair]
swap = "1 min"
time = "1 h"

{memory}

[compare]
policies = ["ckpt", "rep"]
r_max = 3
seeds = 8
processes = 1
"""
MEMORY = '[checkpoint]\nmemory_save = "1 s"\nmemory_restore = "30 s"\n'


@pytest.fixture
def tiny(tmp_path):
    def write(price=True, memory=True):
        p = tmp_path / "tiny.toml"
        p.write_text(TINY.format(price="gpu_hour = 2.0" if price else "", memory=MEMORY if memory else ""))
        return p

    return write


AXES = ["--x", "failures.mtbf", "--x-range", "1 h", "4 h", "3", "--x-log", "--y", "costs.restart", "--y-values", "60",
        "'5 min'", "600"]


def test_an_obvious_winner_is_found_everywhere_and_stops_at_the_least_seeds(tiny, spare_here, tmp_path):
    # failures are rare (T0 = 33 min, MTBF >= 1 h): two-way replication computes every step twice
    out = tmp_path / "m.json"
    p = spare_here("map", tiny(), *AXES, "--strategies", "ckpt", "rep", "--json", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert len(doc["cells"]) == 9
    for c in doc["cells"]:
        assert c["winner"] == "ckpt" and c["runner_up"] == "rep" and c["status"] == "clear"
        assert 0 < c["margin_low"] <= c["margin"] <= c["margin_high"]
        # the margin: the geometric mean of the runner-up's values over the winner's, seed by seed
        w, r = ({s: v for s, v in zip(p["seeds"], p["values"])} for p in c["picks"])
        assert c["margin"] == pytest.approx(math.expm1(np.mean([math.log(r[s] / w[s]) for s in w])), rel=1e-12)
        assert 3 <= c["seeds"] < doc["settings"]["seeds"]  # clear before the seed cap: no more were run
    assert min(c["seeds"] for c in doc["cells"]) == doc["settings"]["min_seeds"] == 3
    assert doc["won"] == {"ckpt": 9, "rep": 0}
    assert "ckpt 9" in p.stdout and "9 cells" in p.stdout


def test_identical_strategies_are_a_tie_and_one_seed_is_never_sure(tiny, monkeypatch):
    twin = RegisteredPolicy("ckpt-twin", lambda r, interval="auto": CheckpointOnly(interval), label="CKPT twin",
                            uses_redundancy=False, options=("interval",))
    monkeypatch.setitem(POLICY_REGISTRY, "ckpt-twin", twin)
    sc = load_scenario_file(tiny(), ["failures.mtbf='20 min'"]).scenario
    cell = evaluate_cell(sc, [Strategy("ckpt"), Strategy("ckpt-twin")], MapSettings(seeds=8))
    assert cell.status == "tie" and cell.seeds == 3 and cell.margin == 0.0
    one = evaluate_cell(sc, [Strategy("ckpt"), Strategy("rep")], MapSettings(seeds=1, redundancies=(2,)))
    assert one.status == "unsure" and one.seeds == 1 and math.isnan(one.margin_low)


def test_a_cells_values_are_the_runs_simulate_gives_and_the_work_stays_within_its_bound(tiny):
    sf = load_scenario_file(tiny(), ["failures.mtbf='15 min'", "costs.restart='20 min'"])
    strategies = [Strategy("ckpt"), Strategy("ckpt", memory=True), Strategy("rep")]
    settings = MapSettings(seeds=6, redundancies=sf.redundancies, tie=0.0)
    cell = evaluate_cell(sf.scenario, strategies, settings)
    assert 0 < cell.runs <= settings.max_runs(strategies)
    for st, pick in zip(strategies, cell.picks):
        sc = sf.scenario if st.memory else sf.scenario.replace(memory=None)
        sc = sc.replace(max_wall_factor=cell.horizon)
        pol = st.policy_at(pick.redundancy, pick.interval)
        for seed, value in zip(pick.seeds, pick.values):
            run = simulate(sc, pol, seed=seed)
            assert value == run.wall_time / run.t0
    # the runner-up's interval is searched (its margin is the map's number), even if it could not win
    assert "behind" not in cell.pick(cell.runner_up).interval_note
    # the winner has the least mean over the seeds every contender ran
    most = max(len(p.seeds) for p in cell.picks)
    assert cell.winner == min((p for p in cell.picks if len(p.seeds) == most), key=lambda p: p.mean).strategy


@settings(max_examples=40)
@given(hs.lists(hs.integers(-1000, 1000), min_size=1, max_size=25, unique=True), hs.data())
def test_compass_search_finds_the_minimum_of_a_unimodal_sequence(values, data):
    # strictly decreasing to the least value, then strictly increasing: one minimum
    v = sorted(values)
    left = data.draw(hs.lists(hs.booleans(), min_size=len(v) - 1, max_size=len(v) - 1))
    seq = sorted((x for x, b in zip(v[1:], left) if b), reverse=True) + [v[0]] + [x for x, b in zip(v[1:], left) if not b]
    f = np.array(seq, dtype=float) + 2000.0
    start = data.draw(hs.integers(0, len(f) - 1))
    step = data.draw(hs.integers(1, max(1, len(f) // 2)))
    calls = []
    best = _compass(len(f), start, step, lambda i: calls.append(i) or f[i], 0.0, len(f))
    assert f[best] == f.min()
    assert len(calls) == len(set(calls)) <= len(f)
    # a budget of evaluations is kept
    calls.clear()
    _compass(len(f), start, step, lambda i: calls.append(i) or f[i], 0.0, 3)
    assert len(calls) <= 3


@pytest.mark.parametrize("extra, words", [
    (["--strategies", "ckpt", "magic"], ["--strategies", "magic"]),
    (["--strategies", "ckpt", "ckpt+memory", "NOMEMORY"], ["ckpt+memory", "[checkpoint]"]),
    (["--objective", "cost", "NOPRICE"], ["--objective cost", "costs.gpu_hour"]),
    (["--steps", "200000000"], ["budget", "--force"]),
])
def test_bad_input_is_refused_before_any_run(tiny, spare_here, tmp_path, extra, words):
    path = tiny(price="NOPRICE" not in extra, memory="NOMEMORY" not in extra)
    extra = [e for e in extra if e not in ("NOPRICE", "NOMEMORY")]
    p = spare_here("map", path, *AXES, *extra, "--json", tmp_path / "no.json")
    assert p.returncode == 2, p.stderr
    line = p.stderr.strip()
    assert len(line.splitlines()) == 1 and all(w in line for w in words), line
    assert not (tmp_path / "no.json").exists()


@pytest.mark.parametrize("axes, words", [
    (["--x", "failures.mtbf", "--x-values", "60", "--x-range", "1", "2", "2", "--y", "costs.restart", "--y-values",
      "1", "2"], ["--x-values", "--x-range"]),
    (["--x", "costs.restart", "--x-values", "1", "2", "--y", "costs.restart", "--y-values", "3", "4"],
     ["different keys"]),
    (["--x", "failures.mtbf", "--x-values", "60", "120", "--x-log", "--y", "costs.restart", "--y-values", "1", "2"],
     ["--x-log"]),
    (["--x", "cluster.gpus", "--x-values", "32", "36", "--y", "costs.restart", "--y-values", "1", "2"],
     ["cluster.gpus", "cell"]),
    (["--x", "failures.mtbf", "--x-range", "2 h", "1 h", "3", "--y", "costs.restart", "--y-values", "1", "2"],
     ["--x-range", "below"]),
])
def test_bad_axes_are_refused(tiny, spare_here, axes, words):
    p = spare_here("map", tiny(), *axes)
    assert p.returncode == 2, p.stderr
    assert all(w in p.stderr for w in words), p.stderr


def test_outputs_carry_every_cell_and_the_provenance(tiny, spare_here, tmp_path):
    js, cs, plots = tmp_path / "m.json", tmp_path / "m.csv", tmp_path / "plots"
    p = spare_here("map", tiny(), "--x", "failures.mtbf", "--x-values", "'20 min'", "'2 h'", "--y", "repair.swap",
                   "--y-range", "0", "10 min", "2", "--strategies", "ckpt", "ckpt+memory", "--seeds", "4",
                   "--objective", "cost", "--json", js, "--csv", cs, "--plot", plots)
    assert p.returncode == 0, p.stderr
    doc = json.loads(js.read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    assert doc["objective"] == "cost" and doc["x"]["key"] == "failures.mtbf" and doc["y"]["labels"] == ["every step",
                                                                                                         "10.0 min"]
    assert doc["provenance"]["command"] == "spare map" and len(doc["cells"]) == 4
    text = cs.read_text()
    assert text.startswith("# provenance: {")
    rows = list(csv.DictReader(io.StringIO("".join(l for l in text.splitlines(True) if not l.startswith("#")))))
    assert len(rows) == 4 and {"failures.mtbf", "repair.swap", "winner", "margin", "ckpt+memory.mean"} <= set(rows[0])
    for row, cell in zip(rows, doc["cells"]):
        assert row["winner"] == cell["winner"]
        assert float(row[f"{cell['winner']}.mean"]) == pytest.approx(min(p["mean"] for p in cell["picks"]
                                                                         if len(p["seeds"]) == cell["seeds"]))
    png = plots / "map.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("example", ["llama3_16k_strategies.toml", "rsc1_strategies.toml",
                                     "paper_600k_strategies.toml"])
def test_the_strategy_examples_map(spare_here, example, tmp_path):
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / example
    out = tmp_path / "m.json"
    p = spare_here("map", path, "--x", "failures.mtbf", "--x-values", "'30 min'", "--y", "repair.swap", "--y-values",
                   "'5 min'", "--steps", "300", "--seeds", "2", "--processes", "1", "--json", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    # the file has [checkpoint]: every policy of compare.policies, without and with the tier
    assert [s["name"] for s in doc["strategies"]] == ["ckpt", "rep", "spare", "elastic", "ckpt+memory", "rep+memory",
                                                      "spare+memory", "elastic+memory"]
    assert doc["cells"][0]["winner"] in [s["name"] for s in doc["strategies"]]


def test_the_documented_maps_run(spare_here, tmp_path):
    """Every ``spare map`` line of docs/strategies.md, shrunk to 2 x 2 cells, short jobs and 2 seeds."""
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "strategies.md").read_text()
    s_line = next(line for line in text.splitlines() if line.startswith('S="'))
    lines = [line.replace("$S", s_line[3:-1]) for line in text.splitlines() if line.startswith("spare map ")]
    assert len(lines) >= 4
    for k, line in enumerate(lines):
        argv = shlex.split(line)[1:]
        out = []
        i = 0
        while i < len(argv):
            a = argv[i]
            if a in ("--x-range", "--y-range"):
                out += [a, argv[i + 1], argv[i + 2], "2"]
                i += 4
            elif a in ("--x-values", "--y-values"):
                out += [a, argv[i + 1], argv[i + 2]]
                i += 1
                while i < len(argv) and not argv[i].startswith("--"):
                    i += 1
            elif a == "--plot":
                out += [a, str(tmp_path / f"map{k}.png")]
                i += 2
            else:
                out.append(root / a if a.startswith("examples/") else a)
                i += 1
        p = spare_here(*out, "--steps", "200", "--seeds", "2", "--processes", "1")
        assert p.returncode == 0, (line, p.stderr)
        assert (tmp_path / f"map{k}.png").stat().st_size > 0


def test_a_cell_that_fails_keeps_the_finished_cells(tiny, tmp_path, monkeypatch, capsys):
    # the third cell fails at run time (as a policy that breaks on one value would): the map
    # stops, exits 1 naming that cell, and its --json and --csv hold every cell finished before
    from spare_core import cli
    from spare_core.commands import map as map_cmd

    real = map_cmd.evaluate_cell
    calls = []

    def flaky(scenario, strategies, settings):
        calls.append(scenario.system_mtbf)
        if len(calls) == 3:
            raise RuntimeError("a policy broke on this cell")
        return real(scenario, strategies, settings)

    monkeypatch.setattr(map_cmd, "evaluate_cell", flaky)
    out, table = tmp_path / "m.json", tmp_path / "m.csv"
    code = cli.main(["map", str(tiny()), *AXES, "--strategies", "ckpt", "rep", "--seeds", "3", "--json", str(out),
                     "--csv", str(table)])
    assert code == 1
    err = capsys.readouterr().err
    assert "failed: RuntimeError: a policy broke on this cell" in err and "kept the 2 finished cells" in err
    doc = json.loads(out.read_text())
    assert len(doc["cells"]) == 2 and doc["provenance"]["interrupted"] is True
    assert doc["failed"]["error"] == "RuntimeError: a policy broke on this cell"
    assert "Traceback" in doc["failed"]["traceback"]
    # the failed cell is not among the kept ones
    assert (doc["failed"]["i"], doc["failed"]["j"]) not in {(c["i"], c["j"]) for c in doc["cells"]}
    rows = [r for r in csv.reader(io.StringIO(table.read_text())) if r and not r[0].startswith("#")]
    assert len(rows) == 1 + 2


def test_every_map_format_carries_every_declared_column(tiny, spare_here, tmp_path):
    # the JSON cells, the CSV and the Parquet rows all hold every column MapCell and StrategyPick
    # declare, with the same values
    pa = pytest.importorskip("pyarrow.parquet")
    from spare_core._results import columns
    from spare_core.sim.strategy_map import MapCell, StrategyPick

    js, cs, pq = tmp_path / "m.json", tmp_path / "m.csv", tmp_path / "m.parquet"
    p = spare_here("map", tiny(), "--x", "failures.mtbf", "--x-values", "'1 h'", "'3 h'", "--y", "costs.restart",
                   "--y-values", "60", "--strategies", "ckpt", "rep", "--seeds", "3", "--json", js, "--csv", cs,
                   "--parquet", pq)
    assert p.returncode == 0, p.stderr
    doc = json.loads(js.read_text())
    cell_cols = [c.name for c in columns(MapCell)]
    pick_cols = [c.name for c in columns(StrategyPick)]
    for c in doc["cells"]:
        assert set(cell_cols) <= set(c) and all(set(pick_cols) <= set(pk) for pk in c["picks"])
    want = ["failures.mtbf", "costs.restart", *cell_cols,
            *(f"{n}.{k}" for n in ("ckpt", "rep") for k in pick_cols if k != "strategy")]
    rows = list(csv.DictReader(io.StringIO("".join(l for l in cs.read_text().splitlines(True) if not l.startswith("#")))))
    table = pa.read_table(pq).to_pylist()
    assert list(rows[0]) == want and list(table[0]) == want
    for c, row, prow in zip(doc["cells"], rows, table):
        for k in cell_cols:
            v = c[k]
            assert prow[k] == (pytest.approx(v) if isinstance(v, float) else v)
            assert row[k] == ("" if v is None else str(v))
        for pk in c["picks"]:
            assert prow[f"{pk['strategy']}.n_seeds"] == len(pk["seeds"])
            assert prow[f"{pk['strategy']}.mean"] == pytest.approx(pk["mean"])


def test_the_rival_is_the_best_strategy_of_another_family():
    # ckpt+memory is ckpt's family: the cell names the best strategy of another family and its
    # margin is the paired interval against the winner over their common seeds
    from spare_core._stats import paired_ratio_ci
    from spare_core.sim import MemoryTier, Scenario
    from spare_core.sim.strategy_map import split_name

    sc = Scenario(8, n_steps=200, t_compute=10.0, t_allreduce=1.0, system_mtbf=60.0, restart_time=30.0,
                  checkpoint_time=5.0, memory=MemoryTier(save=1.0, restore=5.0, every=30.0))
    sts = [Strategy("ckpt"), Strategy("ckpt", memory=True), Strategy("spare"), Strategy("spare", memory=True)]
    cell = evaluate_cell(sc, sts, MapSettings(seeds=4, min_seeds=4, redundancies=(2, 3)))
    fam = split_name(cell.winner)[0]
    assert cell.rival is not None and split_name(cell.rival)[0] != fam
    w = cell.pick(cell.winner)
    by = dict(zip(w.seeds, w.values))
    others = [p for p in cell.picks if split_name(p.strategy)[0] != fam]
    margins = {p.strategy: paired_ratio_ci([v for s, v in zip(p.seeds, p.values) if s in by],
                                           [by[s] for s in p.seeds if s in by]) for p in others}
    best = min(margins, key=lambda k: margins[k][0])
    assert cell.rival == best
    assert (cell.rival_margin, cell.rival_margin_low, cell.rival_margin_high) == pytest.approx(margins[best])
    lo, hi = cell.rival_margin_low, cell.rival_margin_high
    assert cell.rival_status == ("tie" if hi < 0.01 else "clear" if lo > 0 else "unsure")


def test_a_cell_of_one_family_has_no_rival():
    from spare_core.sim import MemoryTier, Scenario

    sc = Scenario(8, n_steps=100, t_compute=10.0, t_allreduce=1.0, system_mtbf=600.0, restart_time=30.0,
                  checkpoint_time=5.0, memory=MemoryTier(save=1.0, restore=5.0, every=30.0))
    cell = evaluate_cell(sc, [Strategy("ckpt"), Strategy("ckpt", memory=True)], MapSettings(seeds=3))
    assert cell.rival is None and cell.rival_status == "none" and math.isnan(cell.rival_margin)
    assert cell.runner_up is not None


def test_a_strategy_keeps_its_colour_whatever_the_order():
    pytest.importorskip("matplotlib")
    from spare_core.commands.plots import strategy_colour

    names = ["ckpt", "ckpt+memory", "rep", "spare", "elastic", "spare+memory", "spare+evict"]
    colours = {n: strategy_colour(n) for n in names}
    assert {n: strategy_colour(n) for n in reversed(names)} == colours
    # one family, one hue: the tier darkens it, a remedy keeps it; families differ
    assert colours["spare+evict"] == colours["spare"]
    assert all(abs(a * (1 - 0.45) - b) < 1e-12 for a, b in zip(colours["spare"], colours["spare+memory"]))
    assert len({colours[n] for n in ("ckpt", "rep", "spare", "elastic")}) == 4
    # a policy's label (the other plots) takes its registry name's colour
    assert strategy_colour("SPARe+CKPT") == colours["spare"]


def test_the_files_own_point_is_placed_on_the_axes():
    from spare_core.commands.map import build_axis, file_point

    xa = build_axis("x", "failures.mtbf", None, ["1 h", "4 h", "3"], True)  # 1 h, 2 h, 4 h
    ya = build_axis("y", "repair.swap", ["60", "'5 min'", "600"], None, False)
    p = file_point({"failures": {"mtbf": "2 h"}, "repair": {"swap": "5 min"}}, xa, ya)
    assert p["i"] == pytest.approx(1.0) and p["j"] == pytest.approx(1.0)
    p = file_point({"failures": {"mtbf": "1.5 h"}}, xa, ya)  # between 1 h and 2 h, on the log scale
    assert p["i"] == pytest.approx(math.log(1.5) / math.log(2)) and p["j"] is None and p["y"] is None
    assert file_point({"failures": {"mtbf": "8 h"}}, xa, ya)["i"] is None  # off the axis


def test_axes_of_sizes_and_bandwidths():
    from spare_core.commands.map import UsageError, build_axis, file_point

    xa = build_axis("x", "checkpoint.write_bandwidth", None, ["50 GB/s", "200 GB/s", "3"], True)
    assert xa.numbers == (5e10, 1e11, 2e11) and xa.labels == ("50 GB/s", "100 GB/s", "200 GB/s")
    ya = build_axis("y", "checkpoint.size", ['"1 TB"', '"2.3 TB"'], None, False)
    assert ya.numbers == (1e12, 2.3e12) and ya.labels == ("1 TB", "2.3 TB")
    # the file's own point, read in its unit and placed on the log axis between two cells
    fp = file_point({"checkpoint": {"write_bandwidth": "70.7107 GB/s", "size": "2.3 TB"}}, xa, ya)
    assert fp["x_label"] == "70.7 GB/s" and fp["i"] == pytest.approx(0.5, abs=1e-4) and fp["j"] == 1.0
    with pytest.raises(UsageError, match="same kind of unit"):
        build_axis("x", "checkpoint.write_bandwidth", None, ["50 GB/s", "1 TB", "3"], False)
    with pytest.raises(UsageError, match="bandwidths"):
        build_axis("x", "checkpoint.write_bandwidth", None, ["50 GQ/s", "1 TB/s", "3"], False)
