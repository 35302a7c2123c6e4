"""The strategies beyond the paper (repairs, the memory tier, elastic training, cost) through
every surface a user reaches them by: scenario files, sweep specs, the result store."""
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spare_core.scenario_file import ScenarioFileError, load_scenario_file
from spare_core.sim import MemoryTier, Pricing, Repairs, Scenario, make_policy, simulate
from spare_core.sweeps import ResultStore, SweepSpec, run_sweep

FILE = """
name = "tiny-strategies"
[cluster]
gpus = 256
gpus_per_node = 8
gpus_per_group = 16
[job]
step_time = "10 s"
allreduce_time = "1 s"
steps = 3000
[failures]
model = "node"
mtbf = "1 h"
[costs]
restart = "10 min"
checkpoint_save = "20 s"
gpu_hour = 2.0
[repair]
swap = "5 min"
spares = 2
time = "6 h"
rejoin = "1 min"
[checkpoint]
memory_save = "1 s"
memory_every = "2 min"
memory_restore = "1 min"
[elastic]
reconfigure = "30 s"
[compare]
policies = ["ckpt", "rep", "spare", "elastic"]
redundancies = [2]
seeds = 2
"""


def _file(tmp_path, text=FILE):
    f = tmp_path / "s.toml"
    f.write_text(text)
    return f


def test_a_file_with_every_table_resolves_and_runs(tmp_path):
    sf = load_scenario_file(_file(tmp_path))
    sc = sf.scenario
    assert sc.repair == Repairs(swap=300.0, spares=2, time=6 * 3600.0, rejoin=60.0, gpus_per_node=8)
    assert sc.memory == MemoryTier(save=1.0, every=120.0, restore=60.0, copies=1)
    assert sc.pricing == Pricing(2.0)
    assert sf.policy_options["elastic"] == {"reconfigure": 30.0}
    for name, r in (("ckpt", None), ("rep", 2), ("spare", 2), ("elastic", None)):
        res = simulate(sc, make_policy(name, r, **sf.policy_options.get(name, {})), seed=0)
        assert res.finished
        # GPU-hours: the job's 256 GPUs and the 2 spare nodes' 16, for the wall time
        assert res.gpus_paid == 256 + 16
        assert res.gpu_hours == pytest.approx(272 * res.wall_time / 3600)
        assert res.cost == pytest.approx(2.0 * res.gpu_hours)
        assert res.memory_snapshots > 0
        d = res.to_dict()
        assert d["cost"] == res.cost and d["gpu_hours"] == res.gpu_hours


def test_an_omitted_table_is_the_paper_model_and_no_cost(tmp_path):
    text = FILE.split("[repair]")[0].replace("gpu_hour = 2.0\n", "")
    sc = load_scenario_file(_file(tmp_path, text)).scenario
    assert sc.repair is None and sc.memory is None and sc.pricing is None
    # the scenario's dict (and so a store key) is what it was before these tables existed
    assert not {"repair", "memory", "pricing"} & set(sc.to_dict())
    res = simulate(sc, make_policy("spare", 2), seed=0)
    assert math.isnan(res.cost) and res.to_dict()["cost"] is None and res.rejoins == 0


@pytest.mark.parametrize("key,value,msg", [
    ("repair.spares", "-1", "repair.spares"),
    ("repair.swap", "'soon'", "repair.swap"),
    ("checkpoint.memory_copies", "0", "checkpoint.memory_copies"),
    ("costs.gpu_hour", "0", "costs.gpu_hour"),
    ("elastic.batch", "'grow'", "batch"),
    ("elastic.min_groups", "99", "min_groups"),
])
def test_bad_values_are_one_line_errors_naming_the_key(tmp_path, key, value, msg):
    with pytest.raises(ScenarioFileError, match=msg) as e:
        load_scenario_file(_file(tmp_path), [f"{key}={value}"])
    assert "\n" not in str(e.value)


def test_a_memory_tier_needs_its_save_and_restore(tmp_path):
    text = FILE.replace('memory_restore = "1 min"\n', "")
    with pytest.raises(ScenarioFileError, match="checkpoint.memory_restore"):
        load_scenario_file(_file(tmp_path, text))


def test_repairs_with_a_masking_policy_need_node_clocks():
    sc = Scenario(8, n_steps=100, t_compute=10.0, t_allreduce=1.0, system_mtbf=3000.0, failure_model="per-unit",
                  restart_time=60.0, repair=Repairs(swap=60.0))
    with pytest.raises(ValueError, match="failures.model"):
        simulate(sc, make_policy("spare", 2), seed=0)
    # checkpoint-only has no group out to come back: any failure model
    assert simulate(sc, make_policy("ckpt"), seed=0).finished


def test_a_sweep_spec_takes_the_tables_as_scenario_keys_and_a_grid_of_spares(tmp_path):
    spec = SweepSpec.from_dict({
        "seeds": 1, "policies": ["ckpt", "elastic"], "redundancies": [1],
        "scenarios": [{"file": str(_file(tmp_path)), "grid": {"repair.spares": [0, 4]}},
                      {"n_groups": 8, "n_steps": 200, "t_compute": 5.0, "t_allreduce": 1.0, "system_mtbf": 600.0,
                       "failure_model": "node", "gpus_per_group": 8,
                       "repair": {"swap": 60.0, "spares": 1, "time": 3600.0}, "pricing": {"gpu_hour": 3.0}}],
    })
    spares = sorted(sc.repair.spares for sc in spec.scenarios)
    assert spares == [0, 1, 4]
    done = run_sweep(spec, tmp_path / "store", workers=1)
    assert done.computed == 6
    table = ResultStore(tmp_path / "store").read()
    paid = sorted(set(table.column("gpus_paid").to_pylist()))
    assert paid == [64 + 8, 256, 256 + 32]


def test_a_store_part_written_before_the_new_columns_is_read_with_their_defaults(tmp_path):
    spec = SweepSpec(Scenario(8, n_steps=100, t_compute=5.0, t_allreduce=1.0, system_mtbf=600.0), ("ckpt",), [1],
                     seeds=2)
    run_sweep(spec, tmp_path / "s", workers=1)
    store = ResultStore(tmp_path / "s")
    (part,) = sorted((tmp_path / "s").rglob("part-*.parquet"))
    old = pq.read_table(part)
    added = ["rejoins", "memory_snapshots", "memory_restores", "memory_save_time", "wait_time", "pause_time",
             "gpus_paid", "gpu_hour_price"]
    pq.write_table(old.drop_columns(added), part, write_page_checksum=True)
    table = store.read()
    assert table.num_rows == 2 and table.column("gpus_paid").to_pylist() == [0, 0]
    assert table.column("wait_time").to_pylist() == [0.0, 0.0]
    # and resuming does not recompute those runs
    assert run_sweep(spec, tmp_path / "s", workers=1).computed == 0
    assert isinstance(table, pa.Table)


def test_a_memory_tier_run_leaves_nothing_behind_for_the_next_run():
    # checkpoint-only answers every failure with one shared constant: a restore from memory
    # once rewrote it in place, and every later run in the process restored for free
    sc = Scenario(4, n_steps=300, t_compute=10.0, t_allreduce=1.0, system_mtbf=2000.0, restart_time=600.0)
    before = simulate(sc, make_policy("ckpt"), seed=3)
    mem = simulate(sc.replace(memory=MemoryTier(save=1.0, every=60.0, restore=30.0)), make_policy("ckpt"), seed=3)
    assert mem.memory_restores > 0
    after = simulate(sc, make_policy("ckpt"), seed=3)
    assert after.to_dict() == before.to_dict() and after.memory_restores == 0
