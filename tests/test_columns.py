"""A run's columns are declared once (field metadata on :class:`RunResult`): every output
format carries every declared column, derived from the declaration itself, so a column
added there is covered here without editing this file; stores written before a column
existed still read; the store's report judges redundancy as the result set does."""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import pickle
import shutil
import warnings
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from spare_core._results import CELL_ROLES, columns  # noqa: E402
from spare_core.cli import main  # noqa: E402
from spare_core.commands.outputs import RUN_COLUMNS  # noqa: E402
from spare_core.sim import RunResult, Scenario, Study, execute, sweep  # noqa: E402
from spare_core.sim.executor import STORE_COLUMNS  # noqa: E402
from spare_core.sim.results import MEAN_COLUMNS, SAME_COLUMNS, judged_cells  # noqa: E402
from spare_core.sweeps import ResultStore, SweepSpec, best_redundancy, run_sweep, summarise_store  # noqa: E402
from spare_core.sweeps.aggregate import report_columns, unfinished_combinations  # noqa: E402

COLUMNS = columns(RunResult)
NAMES = [c.name for c in COLUMNS]
DOCS = Path(__file__).resolve().parents[1] / "docs"

#: the run columns of the first stores (store format 1): every other column must declare the
#: value its runs held before it (``older=``), or be derived, so that those stores still read
FIRST_STORE_COLUMNS = (
    "policy", "redundancy", "scenario", "failure_model", "seed", "finished", "time_to_train", "t0", "ratio",
    "wall_time", "progress", "availability", "overhead", "failures_seen", "failures_masked", "failures_restart",
    "wipeouts", "restarts", "checkpoints", "epochs", "checkpoint_interval", "interval_rule", "lost_time",
    "save_time", "restart_time", "steps_executed")

SCENARIO_FILE = """\
name = "columns"

[cluster]
gpus = 512
gpus_per_node = 8
gpus_per_group = 32

[job]
step_time = "6 s"
allreduce_time = "0.5 s"
steps = 400

[failures]
mtbf = "15 min"

[costs]
restart = "5 min"
checkpoint_save = "30 s"
gpu_hour = 2.5

[compare]
policies = ["ckpt", "spare"]
r_max = 3
seeds = 2
"""


def _same(a, b) -> bool:
    """One value in two formats: equal, or both missing / NaN / infinite alike (JSON null)."""
    def norm(v):
        if v is None or v == "":
            return None
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v
    a, b = norm(a), norm(b)
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and float(a) == float(b)
    return a == b


# -- the declaration ----------------------------------------------------------------------------------
def test_every_column_is_declared_whole():
    assert len(set(NAMES)) == len(NAMES)
    fields = {f.name for f in dataclasses.fields(RunResult)} - {"timeline"}
    assert {c.name for c in COLUMNS if not c.derived} == fields, "every field of RunResult is a declared column"
    for c in COLUMNS:
        assert c.kind in ("text", "int", "float", "bool", "seed"), c
        assert c.cell in CELL_ROLES, c
        assert c.doc and c.doc == c.doc.strip(), c
        assert c.name in (RunResult.__doc__ or c.name), "the docstring lists the columns from the declaration"
    assert {"gpu_hours", "cost", "ettr"} <= {c.name for c in COLUMNS if c.derived}


def test_a_column_added_since_the_first_stores_declares_their_value():
    later = [c.name for c in COLUMNS if c.name not in FIRST_STORE_COLUMNS and not c.derived]
    missing = [n for n in later if next(c for c in COLUMNS if c.name == n).required]
    assert missing == [], f"declare older= (what a run stored before it holds) for {missing}"
    assert [c.name for c in COLUMNS if c.required] == list(FIRST_STORE_COLUMNS)


# -- every output format ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("outputs")
    f = d / "columns.toml"
    f.write_text(SCENARIO_FILE)
    j, c, p = d / "out.json", d / "out.csv", d / "out.parquet"
    assert main(["run", str(f), "--json", str(j), "--csv", str(c), "--parquet", str(p)]) == 0
    doc = json.loads(j.read_text())
    rows = list(csv.DictReader(io.StringIO("".join(x for x in c.read_text().splitlines(True) if not x.startswith("#")))))
    return doc, rows, pq.read_table(p)


def test_json_csv_and_parquet_carry_every_declared_column(outputs):
    doc, rows, table = outputs
    runs = doc["runs"]
    assert runs and len(runs) == len(rows) == table.num_rows
    assert set(NAMES) <= set(runs[0]), sorted(set(NAMES) - set(runs[0]))
    assert list(rows[0]) == list(RUN_COLUMNS) == table.schema.names
    assert set(NAMES) <= set(RUN_COLUMNS)
    parquet = table.to_pylist()
    for run, row, prow in zip(runs, rows, parquet):
        for c in COLUMNS:
            want = run[c.name]
            got_csv = row[c.name]
            if isinstance(want, bool):
                got_csv = {"True": True, "False": False}[got_csv]
            elif isinstance(want, (int, float)) and got_csv != "":
                got_csv = type(want)(float(got_csv)) if isinstance(want, float) else int(got_csv)
            assert _same(want, got_csv), (c.name, want, got_csv)
            assert _same(want, prow[c.name]), (c.name, want, prow[c.name])
    # the figures that CSV and Parquet used to lack have values here (a price is given)
    assert all(r["gpus_paid"] == 512 and r["gpu_hours"] > 0 and r["cost"] > 0 for r in runs)


def test_summaries_carry_the_mean_of_every_averaged_column(outputs):
    doc, _, _ = outputs
    assert set(MEAN_COLUMNS) == {c.name for c in COLUMNS if c.cell in ("mean", "nanmean")}
    for cell in doc["cells"]:
        assert set(MEAN_COLUMNS) <= set(cell), sorted(set(MEAN_COLUMNS) - set(cell))
        runs = [r for r in doc["runs"] if r["policy"] == cell["policy"] and r["redundancy"] == cell["redundancy"]]
        assert len(runs) == cell["seeds"]
        for name in MEAN_COLUMNS:
            vals = [r[name] for r in runs]
            if None in vals:
                continue
            assert cell[name] == pytest.approx(sum(vals) / len(vals), rel=1e-12, abs=1e-12), name


def test_a_summary_pickles_and_answers_its_means_as_attributes():
    res = sweep(Scenario(8, n_steps=50, t_compute=10.0, t_allreduce=1.0, system_mtbf=400.0, restart_time=30.0,
                         checkpoint_time=5.0), ("spare",), (2,), (0, 1))
    s = res.summaries[0]
    back = pickle.loads(pickle.dumps(s))
    assert repr(back.to_dict()) == repr(s.to_dict())  # (its cost is NaN: no price)
    assert back.availability == s.means["availability"] == s.availability
    with pytest.raises(AttributeError):
        s.no_such_column  # noqa: B018
    assert res.cell_runs(s) == res.runs[:2]
    with pytest.raises(KeyError):
        res.cell_runs(back)  # a summary of another result set (a copy) is not looked up by value


# -- the store ----------------------------------------------------------------------------------------
def _spec(seeds=2, policies=("ckpt", "spare"), mtbf=300.0):
    sc = Scenario(8, n_steps=60, t_compute=10.0, t_allreduce=1.0, system_mtbf=mtbf, restart_time=30.0,
                  checkpoint_time=5.0, name="store")
    return SweepSpec(sc, policies, [1, 2, 3], seeds=seeds)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("store") / "s"
    run_sweep(_spec(), d, batch_runs=10_000)
    return d


def test_the_store_and_its_report_carry_every_declared_column(store):
    t = ResultStore(store).read()
    assert set(NAMES) <= set(t.schema.names) and set(STORE_COLUMNS) <= set(t.schema.names)
    summary = summarise_store(store)
    names = set(summary.schema.names)
    for c in COLUMNS:
        assert set(report_columns()[c.name]) <= names, (c.name, report_columns()[c.name])
    for c in SAME_COLUMNS:
        assert all(isinstance(v, str) and v for v in summary.column(c).to_pylist())
    # the report's means are the result set's: one rule (cell_mean) over the same runs
    res = execute(_spec(), store=ResultStore(store))
    by = {(s.policy, s.redundancy): s for s in res.summaries}
    for row in summary.to_pylist():
        s = by[(row["policy"], row["redundancy"])]
        for name in MEAN_COLUMNS:
            a, b = row[f"{name}_mean"], getattr(s, name)
            assert (a == b) or (a != a and b != b), name


def _rewrite_without(store, tmp_path, drop):
    """A copy of ``store`` whose part lacks the columns ``drop`` (as an older version wrote it)."""
    dst = tmp_path / "old"
    shutil.copytree(store, dst)
    (part,) = ResultStore(dst).parts()
    t = pq.read_table(part)
    pq.write_table(t.drop_columns([c for c in drop if c in t.schema.names]), part, compression="zstd")
    return dst


@pytest.mark.parametrize("era", ["main before the declaration", "the first stores"])
def test_a_store_written_with_an_older_column_set_still_reads(store, tmp_path, era):
    derived = [c.name for c in COLUMNS if c.derived]
    later = [c.name for c in COLUMNS if not c.derived and c.name not in FIRST_STORE_COLUMNS]
    drop = derived if era.startswith("main") else derived + later + ["spare_core_version"]
    dst = _rewrite_without(store, tmp_path, drop)
    ref = ResultStore(store).read().sort_by("key")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # read whole, no part skipped
        back = ResultStore(dst).read().sort_by("key")
        summary = summarise_store(dst)
    for c in NAMES:
        if c == "seed":
            continue
        assert repr(back.column(c).to_pylist()) == repr(ref.column(c).to_pylist()), c
    assert summary.num_rows == summarise_store(store).num_rows
    # a writer resumes it without quarantining anything or running a run again
    assert run_sweep(_spec(), dst).computed == 0


def test_a_damaged_column_name_is_not_taken_for_an_older_part(store, tmp_path):
    dst = tmp_path / "bad"
    shutil.copytree(store, dst)
    (part,) = ResultStore(dst).parts()
    t = pq.read_table(part)
    t = t.rename_columns(["etTr" if n == "ettr" else n for n in t.schema.names])
    pq.write_table(t, part)
    with pytest.warns(UserWarning, match="unknown one, 'etTr'"):
        assert ResultStore(dst).read().num_rows == 0


# -- judging redundancy: one rule for the result set and the store report --------------------------
def test_best_redundancy_does_not_pick_r1_when_a_policy_without_r_is_compared(tmp_path):
    # failures so rare that r = 1 is as fast as any (a tie goes to the smaller r): SPARe at
    # r = 1 is CKPT-only under another name, and main's report picked it
    spec = _spec(seeds=2, mtbf=1e7)
    run_sweep(spec, tmp_path / "s")
    summary = summarise_store(tmp_path / "s")
    raw = {(r["policy"], r["redundancy"]): r["ratio_mean"] for r in summary.to_pylist()}
    assert raw[("SPARe+CKPT", 1)] <= min(raw[("SPARe+CKPT", 2)], raw[("SPARe+CKPT", 3)]), "the check needs r = 1 best"
    best = {r["policy"]: r["redundancy"] for r in best_redundancy(summary).to_pylist()}
    assert best["SPARe+CKPT"] >= 2 and best["CKPT-only"] == 1
    # the result set of the same study judges alike
    res = execute(spec, store=ResultStore(tmp_path / "s"))
    assert {s.policy: s.redundancy for s, _ in res.best_per_policy()} == best
    assert unfinished_combinations(summary) == []
    # without a policy without r, r = 1 is SPARe's own answer
    alone = _spec(seeds=2, policies=("spare",), mtbf=1e7)
    run_sweep(alone, tmp_path / "alone")
    best = {r["policy"]: r["redundancy"] for r in best_redundancy(summarise_store(tmp_path / "alone")).to_pylist()}
    assert best == {"SPARe+CKPT": 1}


def test_judged_cells_keeps_r1_when_it_is_all_a_policy_ran():
    cells = [{"r": 1}]
    assert judged_cells(cells, uses_redundancy=True, plain_compared=True, redundancy=lambda c: c["r"]) == cells
    two = [{"r": 1}, {"r": 2}]
    assert judged_cells(two, uses_redundancy=True, plain_compared=True, redundancy=lambda c: c["r"]) == [{"r": 2}]
    assert judged_cells(two, uses_redundancy=False, plain_compared=True, redundancy=lambda c: c["r"]) == two
    assert judged_cells(two, uses_redundancy=True, plain_compared=False, redundancy=lambda c: c["r"]) == two


# -- the docs -----------------------------------------------------------------------------------------
def _docs_table() -> list[tuple[str, str]]:
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    block = text.split("<!-- run columns: from RunResult's declaration -->", 1)[1].split("<!-- end run columns -->")[0]
    out = []
    for line in block.splitlines():
        if line.startswith("| `"):
            cells = [x.strip() for x in line.strip("|").split("|")]
            out.append((cells[0].strip("`"), cells[1]))
    return out


def _expected_table() -> str:
    return "\n".join(f"| `{c.name}` | {c.unit or '-'} | {c.doc}{' (derived)' if c.derived else ''} |" for c in COLUMNS)


def test_the_docs_list_every_column():
    assert _docs_table() == [(c.name, c.unit or "-") for c in COLUMNS], \
        "docs/cli.md's table of run columns is not the declaration's; its rows are:\n" + _expected_table()


def test_a_study_with_interrupted_cells_keeps_cells_and_runs_aligned():
    study = Study([Scenario(8, n_steps=40, t_compute=10.0, t_allreduce=1.0, system_mtbf=300.0, restart_time=30.0,
                            checkpoint_time=5.0)], ("ckpt", "spare"), redundancies=[2, 3], seeds=[0, 1, 2])
    res = execute(study)
    assert sum(s.seeds for s in res.summaries) == len(res.runs)
    for s in res.summaries:
        runs = res.cell_runs(s)
        assert {(r.policy, r.redundancy) for r in runs} == {(s.policy, s.redundancy)} and len(runs) == s.seeds
