"""Issue 23, item 3: a run's key depends on what it simulates (never on its neighbours in a
grid or on the spelling of a value), and every seed a keyed study accepts stores."""
import pytest

pa = pytest.importorskip("pyarrow")

from spare_core.sim import Scenario, simulate  # noqa: E402
from spare_core.sim.study import KEY_VERSION  # noqa: E402
from spare_core.sweeps import ResultStore, SweepSpec, run_sweep, summarise_store  # noqa: E402
from spare_core.sweeps.spec import load_spec  # noqa: E402

_HEAD = 'seeds = 2\npolicies = ["ckpt", "spare"]\nredundancies = [2]\n'


def _grid_spec(tmp_path, values):
    p = tmp_path / f"spec{len(values)}.toml"
    p.write_text(_HEAD + f'[[scenarios]]\npreset = "paper_600k"\nn_groups = 16\nn_steps = 40\n'
                 f'grid = {{system_mtbf = {values!r}}}\n')
    return load_spec(p)


def test_key_version_is_2():
    assert KEY_VERSION == 2


def test_a_grown_grid_keeps_the_keys_and_runs_of_its_first_scenario(tmp_path):
    # main: the one-value grid names the scenario "paper-600k-N16", the grown grid
    # "paper-600k-N16 [system_mtbf=300]": other keys, "0 stored already", the scenario twice
    small, grown = _grid_spec(tmp_path, [300.0]), _grid_spec(tmp_path, [300.0, 600.0])
    assert small.scenarios[0].name != grown.scenarios[0].name  # the display name still differs
    assert {r.key for r in small.runs()} < {r.key for r in grown.runs()}
    store = tmp_path / "store"
    run_sweep(small, store)
    done = run_sweep(grown, store)
    assert done.stored_before == len(small) == 4 and done.computed == len(grown) - len(small)
    t = ResultStore(store).read()
    assert t.num_rows == len(grown) == 8
    summary = summarise_store(store)
    assert len(set(summary.column("scenario_key").to_pylist())) == 2
    assert summary.num_rows == 4 and set(summary.column("runs").to_pylist()) == {2}


def test_one_value_spelt_two_ways_is_one_scenario(tmp_path):
    (tmp_path / "s.toml").write_text(
        _HEAD + '[[scenarios]]\nfile = "job.toml"\nset = {"job.steps" = 30}\n'
        'grid = {"failures.mtbf" = ["30 min", 1800]}\n')
    import shutil
    from pathlib import Path

    shutil.copy(Path(__file__).parents[1] / "examples" / "paper_600k.toml", tmp_path / "job.toml")
    with pytest.raises(ValueError, match=r"s\.toml: scenarios .* are the same scenario"):
        load_spec(tmp_path / "s.toml")


def test_a_renamed_scenario_keeps_its_keys_and_numbers():
    a = SweepSpec(Scenario.paper_600k(16, n_steps=40), ("ckpt",), [2], seeds=2)
    b = SweepSpec(Scenario.paper_600k(16, n_steps=40, name="mine"), ("ckpt",), [2], seeds=2)
    assert [r.key for r in a.runs()] == [r.key for r in b.runs()]
    g, h = a.groups()[0], b.groups()[0]
    ra = simulate(g.scenario, g.runs[0].policy, seed=g.stream_seed)
    rb = simulate(h.scenario, h.runs[0].policy, seed=h.stream_seed)
    assert ra.wall_time == rb.wall_time and ra.failures_seen == rb.failures_seen
    with pytest.raises(ValueError, match="same scenario"):
        SweepSpec([Scenario.paper_600k(16, n_steps=40), Scenario.paper_600k(16, n_steps=40, name="mine")],
                  ("ckpt",), [2], seeds=1)


def test_every_seed_a_keyed_study_accepts_stores(tmp_path):
    # main: seed 2**64 - 1 simulated, then writing the int64 column failed (every retry
    # recomputing); seeds now have one range everywhere (spare_core._limits: <= 2**63 - 1),
    # refused up front, and the store's uint64 column holds every seed of that range
    big = 2**63 - 1
    spec = SweepSpec(Scenario.paper_600k(16, n_steps=40), ("ckpt",), [2], seeds=[0, 2**62, big])
    done = run_sweep(spec, tmp_path / "s")
    assert done.computed == 3
    t = ResultStore(tmp_path / "s").read()
    assert sorted(t.column("seed").to_pylist()) == [0, 2**62, big]
    assert t.schema.field("seed").type == pa.uint64()
    again = run_sweep(spec, tmp_path / "s")
    assert again.stored_before == 3 and again.computed == 0
    with pytest.raises(ValueError, match=r"seed must be .*<= 9223372036854775807"):
        SweepSpec(Scenario.paper_600k(16, n_steps=40), ("ckpt",), [2], seeds=[2**64 - 1])
