"""The Parquet result store, resumption, the executors (local processes, Dask) and the
aggregation read from the store."""
import json
import math
import shutil

import numpy as np
import pytest
from scipy import stats

pa = pytest.importorskip("pyarrow")

from spare_core.sim import Scenario  # noqa: E402
from spare_core.sweeps import (  # noqa: E402
    ResultStore,
    StoreError,
    SweepSpec,
    best_redundancy,
    run_sweep,
    summarise_store,
)


def spec(**kw):
    args = dict(scenarios=[Scenario.paper_600k(30, n_steps=100), Scenario.paper_600k(12, n_steps=100, failure_model="system")],
                policies=("ckpt", "rep", "spare"), redundancies=[1, 2, 3], seeds=range(4))
    args.update(kw)
    return SweepSpec(**args)


class _Bits:
    """A stored table compared bit for bit (``repr`` of every value: NaN equals NaN, as its
    bits do, where ``Table.equals`` says it differs)."""

    def __init__(self, table):
        self.table = table

    def __getattr__(self, name):
        return getattr(self.table, name)

    def equals(self, other) -> bool:
        return repr(self.table.to_pylist()) == repr(other.table.to_pylist())


def content(path):
    """The stored table, rows in key order: what must be equal bit for bit."""
    return _Bits(ResultStore(path).read().sort_by("key"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("ref")
    done = run_sweep(spec(), d, workers=1)
    assert done.computed == done.total == 2 * 4 * 7 and done.stored_before == 0
    return d


def test_workers_and_batch_sizes_do_not_change_a_bit(reference, tmp_path):
    ref = content(reference)
    for i, (workers, batch) in enumerate(((2, 7), (2, None), (1, 1))):
        d = tmp_path / str(i)
        run_sweep(spec(), d, workers=workers, batch_runs=batch)
        assert content(d).equals(ref)
    assert len(set(ref.column("key").to_pylist())) == ref.num_rows == 56


def test_a_local_pool_never_starts_more_workers_than_groups(reference, tmp_path, monkeypatch):
    from spare_core.sim import executor as execute

    asked = []
    real = execute.ProcessPoolExecutor

    def spy(*args, max_workers=None, **kw):
        asked.append(max_workers)
        return real(*args, max_workers=max_workers, **kw)

    monkeypatch.setattr(execute, "ProcessPoolExecutor", spy)
    run_sweep(spec(), tmp_path, workers=10**6)  # 8 (scenario, seed) groups
    assert asked == [8]
    assert content(tmp_path).equals(content(reference))


def test_dask_local_cluster_gives_the_same_bits(reference, tmp_path):
    pytest.importorskip("distributed")
    done = run_sweep(spec(), tmp_path, executor="dask", workers=2, batch_runs=10)
    assert done.computed == 56 and done.batches == 4  # 8 groups of 7 runs, two per batch
    assert content(tmp_path).equals(content(reference))


def test_interrupted_and_resumed_equals_uninterrupted(reference, tmp_path):
    calls = []

    def stop(progress):
        calls.append(progress)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec(), tmp_path, workers=1, batch_runs=10, on_batch=stop)
    store = ResultStore(tmp_path)
    assert len(store.parts()) == 2 and len(store.keys()) == calls[-1].computed
    again = run_sweep(spec(), tmp_path, workers=2, batch_runs=5)
    assert again.stored_before == calls[-1].computed and again.computed == 56 - calls[-1].computed
    assert content(tmp_path).equals(content(reference))
    assert store.read().num_rows == 56 and store.duplicates == 0
    assert run_sweep(spec(), tmp_path).computed == 0  # nothing left


def test_a_grown_spec_runs_only_the_new_runs_with_the_grown_spec_numbers(reference, tmp_path):
    shutil.copytree(reference, tmp_path / "s")
    grown = spec(redundancies=[1, 2, 3, 4])
    done = run_sweep(grown, tmp_path / "s", workers=1)
    assert done.stored_before == 56 and done.computed == 2 * 4 * 2
    run_sweep(grown, tmp_path / "fresh", workers=1)
    got, want = content(tmp_path / "s"), content(tmp_path / "fresh")
    assert got.column("key").equals(want.column("key"))
    # the old runs were computed in smaller groups: the same numbers, bit for bit
    for c in ("failures_seen", "restarts", "checkpoints", "finished", "wall_time"):
        assert got.column(c).equals(want.column(c))


def test_summary_statistics_and_best_r(reference):
    table = ResultStore(reference).read()
    summ = summarise_store(reference, confidence=0.9, quantiles=(0.25, 0.5))
    assert summ.num_rows == 2 * 7 and sum(summ.column("runs").to_pylist()) == 56
    rows = table.to_pylist()
    for cell in summ.to_pylist():
        mine = [r for r in rows if r["scenario_key"] == cell["scenario_key"] and r["policy"] == cell["policy"]
                and r["redundancy"] == cell["redundancy"]]
        x = np.array([r["ratio"] for r in mine])
        assert cell["runs"] == len(mine) == 4 and cell["finished"] == sum(r["finished"] for r in mine)
        if cell["finished"] == 4:
            lo, hi = stats.t.interval(0.9, 3, loc=x.mean(), scale=stats.sem(x))
            assert cell["ratio_mean"] == pytest.approx(x.mean(), rel=1e-12)
            assert (cell["ratio_ci_low"], cell["ratio_ci_high"]) == pytest.approx((lo, hi), rel=1e-9)
            assert cell["ratio_q25"] == pytest.approx(np.quantile(x, 0.25), rel=1e-12)
        else:
            assert math.isinf(cell["ratio_mean"])
        assert cell["availability_mean"] == pytest.approx(np.mean([r["availability"] for r in mine]), rel=1e-12)
    best = best_redundancy(summ).to_pylist()
    for b in best:
        same = [c for c in summ.to_pylist() if c["scenario_key"] == b["scenario_key"] and c["policy"] == b["policy"]]
        assert b["ratio_mean"] == min(c["ratio_mean"] for c in same)
        assert b["runner_up_r"] != b["redundancy"]


def test_store_refuses_what_it_cannot_use_before_any_work(tmp_path, monkeypatch):
    f = tmp_path / "file"
    f.write_text("x")
    for bad, match in ((f, "is not a directory"), (f / "sub", "cannot be created")):
        with pytest.raises(StoreError, match=match):
            run_sweep(spec(), bad)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="not a sweep store"):
        run_sweep(spec(), other)
    held = ResultStore(tmp_path / "held")
    held.open_for_writing()
    try:
        with pytest.raises(StoreError, match="in use by another sweep"):
            run_sweep(spec(), tmp_path / "held")
    finally:
        held.close()
    import spare_core.sweeps.store as store_mod

    monkeypatch.setattr(store_mod.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(1 << 30, 1 << 30, 1 << 20))
    with pytest.raises(StoreError, match=r"has 1\.0 MB free, the sweep needs about"):
        run_sweep(spec(), tmp_path / "full")
    assert not list((tmp_path / "full" / "runs").glob("part-*"))


def test_torn_temporary_parts_are_never_read_and_are_cleaned(reference, tmp_path):
    shutil.copytree(reference, tmp_path / "s")
    runs = tmp_path / "s" / "runs"
    (runs / ".part-deadbeef-0000.tmp").write_bytes(b"PAR1 half a part")
    store = ResultStore(tmp_path / "s")
    assert store.read().num_rows == 56
    assert run_sweep(spec(), tmp_path / "s").computed == 0
    assert not list(runs.glob(".part-*"))
    manifest = json.loads((tmp_path / "s" / "store.json").read_text())
    assert manifest["format"] == "spare_core sweep store"


def test_sweep_command_runs_resumes_and_reports(tmp_path, capsys):
    from spare_core.cli import main

    f = tmp_path / "s.toml"
    f.write_text('seeds = 3\npolicies = ["ckpt", "spare"]\nredundancies = [2, 3]\n'
                 '[scenario]\npreset = "paper_600k"\nn_groups = 30\nn_steps = 100\n')
    store = tmp_path / "store"
    assert main(["sweep", str(f), "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "9 runs simulated" in out and "SPARe+CKPT" in out
    assert main(["sweep", str(f), "--store", str(store)]) == 0
    assert "0 runs simulated" in capsys.readouterr().out
    js = tmp_path / "r.json"
    assert main(["sweep", "--report", "--store", str(store), "--json", str(js)]) == 0
    doc = json.loads(js.read_text())
    assert sum(c["runs"] for c in doc["cells"]) == 9 and doc["best"][0]["policy"] == "SPARe+CKPT"
    for argv, msg in ((["sweep", "--store", str(store)], "give SPEC.toml"),
                      (["sweep", str(f), "--report", "--store", str(store)], "--report takes no SPEC"),
                      (["sweep", str(f), "--store", str(store), "--scheduler", "tcp://x:1"], "--scheduler needs"),
                      (["sweep", "--report", "--store", str(tmp_path / "none")], "does not exist")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("spare sweep: error:") and msg in err and "\n" not in err
