"""``[checkpoint]`` priced by size and bandwidth (issue 32 item 2): the derived save, drain and
load times against hand computations, the bad combinations refused, and files without the keys
unchanged bit for bit."""
import pytest

from spare_core._files import parse_bytes
from spare_core.scenario_file import ScenarioFileError, load_scenario_file
from spare_core.sim import CheckpointOnly, simulate

BASE = """
[cluster]
gpus = 1024
gpus_per_group = 64
[job]
step_time = "10 s"
steps = 400
[failures]
model = "system"
mtbf = "2 h"
[costs]
restart = "5 min"
{costs}
[checkpoint]
{checkpoint}
"""


def _load(tmp_path, checkpoint="", costs="", overrides=()):
    p = tmp_path / "f.toml"
    p.write_text(BASE.format(checkpoint=checkpoint, costs=costs))
    return load_scenario_file(p, list(overrides))


BLOOM = 'size = "2.3 TB"\nwrite_bandwidth = "250 GB/s"\nread_bandwidth = "700 GB/s"\n'


def test_bytes_in_decimal_and_binary_units():
    assert parse_bytes("2.3 TB") == 2.3e12
    assert parse_bytes("1 GiB") == 2.0**30
    assert parse_bytes("250 GB/s", per_second=True) == 250e9
    assert parse_bytes("1.5e3 MB") == 1.5e9
    for bad in ("2.3", "2.3 TQ", "TB", "-1 TB"):
        with pytest.raises(ValueError):
            parse_bytes(bad)
    with pytest.raises(ValueError, match="ends in /s"):
        parse_bytes("250 GB", per_second=True)


def test_a_blocking_save_is_size_over_the_reached_bandwidth(tmp_path):
    sf = _load(tmp_path, BLOOM + "efficiency = 0.16\n")
    io = sf.checkpoint_io
    # 2.3e12 / (250e9 * 0.16) = 57.5 s; load 2.3e12 / (700e9 * 0.16) = 20.54 s
    assert sf.scenario.checkpoint_time == pytest.approx(57.5, rel=1e-12)
    assert io.load_seconds == pytest.approx(2.3e12 / (700e9 * 0.16), rel=1e-12)
    # every restart from the persistent checkpoint pays the load on top of costs.restart
    assert sf.scenario.restart_time == pytest.approx(300.0 + io.load_seconds, rel=1e-12)
    assert sf.scenario.checkpoint_drain == 0.0


def test_an_async_save_blocks_for_its_host_copy_and_drains_the_write(tmp_path):
    sf = _load(tmp_path, BLOOM + 'efficiency = 0.5\nmode = "async"\nhost_copy = "5 s"\n')
    assert sf.scenario.checkpoint_time == 5.0
    assert sf.scenario.checkpoint_drain == pytest.approx(2.3e12 / 125e9, rel=1e-12)


def test_the_derived_times_are_the_ones_simulated(tmp_path):
    # the same scenario given by its seconds: the runs agree bit for bit
    sized = _load(tmp_path, BLOOM)
    by_time = _load(tmp_path, "", costs=f"checkpoint_save = {2.3e12 / 250e9!r}\n",
                    overrides=[f"costs.restart={300.0 + 2.3e12 / 700e9!r}"])
    assert sized.scenario.checkpoint_time == by_time.scenario.checkpoint_time
    assert sized.scenario.restart_time == by_time.scenario.restart_time
    pol = CheckpointOnly(interval=600.0)
    a, b = simulate(sized.scenario, pol, seed=3), simulate(by_time.scenario, pol, seed=3)
    assert a.wall_time == b.wall_time and a.restarts == b.restarts and a.save_time == b.save_time


def test_files_without_the_keys_are_unchanged(tmp_path):
    plain = _load(tmp_path, "", costs='checkpoint_save = "60 s"\n')
    assert plain.checkpoint_io is None
    assert plain.scenario.checkpoint_time == 60.0 and plain.scenario.restart_time == 300.0
    assert plain.scenario.checkpoint_drain == 0.0


def test_a_size_override_replaces_the_files_save_time(tmp_path):
    sf = _load(tmp_path, "", costs='checkpoint_save = "60 s"\n',
               overrides=['checkpoint.size="2.3 TB"', 'checkpoint.write_bandwidth="250 GB/s"',
                          'checkpoint.read_bandwidth="700 GB/s"'])
    assert sf.scenario.checkpoint_time == pytest.approx(9.2, rel=1e-12)


@pytest.mark.parametrize("checkpoint, costs, match", [
    (BLOOM, 'checkpoint_save = "60 s"', "must not both be given"),
    ('write_bandwidth = "250 GB/s"', "", "need checkpoint.size"),
    ('size = "2.3 TB"\nwrite_bandwidth = "250 GB/s"', "", "needs checkpoint.read_bandwidth"),
    ('size = "2.3 TB"\nread_bandwidth = "250 GB/s"', "", "needs checkpoint.write_bandwidth"),
    (BLOOM + 'mode = "async"', "", "needs checkpoint.host_copy"),
    ('size = 0\nwrite_bandwidth = "250 GB/s"\nread_bandwidth = "1 GB/s"', "", "checkpoint.size"),
    (BLOOM + 'mode = "later"', "", "checkpoint.mode"),
    (BLOOM + "efficiency = 0", "", "checkpoint.efficiency"),
    (BLOOM + "efficiency = 1.5", "", "checkpoint.efficiency"),
    ('size = "2.3 TB/s"\nwrite_bandwidth = "250 GB/s"\nread_bandwidth = "1 GB/s"', "", "checkpoint.size"),
    ('size = "2.3 TB"\nwrite_bandwidth = "250 GB"\nread_bandwidth = "1 GB/s"', "", "checkpoint.write_bandwidth"),
    ('size = "1e30 B"\nwrite_bandwidth = "1 B/s"\nread_bandwidth = "1 GB/s"', "", "take .* s to write"),
])
def test_bad_combinations_are_refused(tmp_path, checkpoint, costs, match):
    with pytest.raises(ScenarioFileError, match=match):
        _load(tmp_path, checkpoint, costs=costs)


def test_the_description_prints_the_derived_times(tmp_path):
    from spare_core.commands.filejob import describe_job
    sf = _load(tmp_path, BLOOM + 'mode = "async"\nhost_copy = "5 s"\n')
    text = "\n".join(describe_job(sf))
    assert "write 9.2 s at 250 GB/s" in text and "load 3.29 s at 700 GB/s" in text
    assert "drains" in text


def test_memory_copies_priced_by_the_network(tmp_path):
    # a node's share of one replica's 2.3 TB: 2.3e12 * 8 / 64 = 287.5 GB; two copies at 50 GB/s
    text = BASE.format(checkpoint=BLOOM + 'memory_bandwidth = "50 GB/s"\nmemory_copies = 2\n', costs="")
    p = tmp_path / "f.toml"
    p.write_text(text.replace("gpus_per_group = 64", "gpus_per_group = 64\ngpus_per_node = 8")
                 .replace('model = "system"', 'model = "node"'))
    mem = load_scenario_file(p).scenario.memory
    assert mem.save == pytest.approx(2.3e12 * 8 / 64 * 2 / 50e9, rel=1e-12)
    # a restore restarts every rank and reads one node's state from a peer (not the storage load)
    assert mem.restore == pytest.approx(300.0 + 2.3e12 * 8 / 64 / 50e9, rel=1e-12)
    # node_state given: it replaces the share of the size
    p.write_text(text.replace("[checkpoint]", '[checkpoint]\nnode_state = "10 GB"')
                 .replace('model = "system"', 'model = "node"'))
    mem = load_scenario_file(p).scenario.memory
    assert mem.save == pytest.approx(10e9 * 2 / 50e9, rel=1e-12)


@pytest.mark.parametrize("checkpoint, match", [
    ('memory_bandwidth = "50 GB/s"\nmemory_save = "5 s"\nmemory_restore = "1 min"', "must not both be given"),
    ('memory_bandwidth = "50 GB/s"', "needs the state a node copies"),
    ('node_state = "10 GB"\nmemory_save = "5 s"\nmemory_restore = "1 min"', "only goes with checkpoint.memory_bandwidth"),
    ('memory_bandwidth = "50 GB"\nnode_state = "10 GB"', "checkpoint.memory_bandwidth"),
])
def test_bad_memory_bandwidth_combinations_are_refused(tmp_path, checkpoint, match):
    with pytest.raises(ScenarioFileError, match=match):
        _load(tmp_path, checkpoint)


def test_saves_and_loads_may_reach_different_fractions(tmp_path):
    # the 504-GPU report's figures: 16 % of 250 GB/s on save, 21.5 % of 700 GB/s on load
    sf = _load(tmp_path, BLOOM + "efficiency = {write = 0.16, read = 0.215}\n")
    assert sf.scenario.checkpoint_time == pytest.approx(2.3e12 / (250e9 * 0.16), rel=1e-12)
    assert sf.scenario.restart_time == pytest.approx(300.0 + 2.3e12 / (700e9 * 0.215), rel=1e-12)
    for bad in ("{write = 0.16}", "{write = 0.16, read = 0.2, load = 0.1}", "{write = 0.16, read = 2}"):
        with pytest.raises(ScenarioFileError, match="checkpoint.efficiency"):
            _load(tmp_path, BLOOM + f"efficiency = {bad}\n")


def test_a_blocking_save_reads_and_ignores_host_copy(tmp_path):
    # so that one override of checkpoint.mode runs a file both ways
    sf = _load(tmp_path, BLOOM + 'host_copy = "5 s"\n')
    assert sf.scenario.checkpoint_time == pytest.approx(9.2, rel=1e-12) and sf.scenario.checkpoint_drain == 0.0
    assert "host_copy unused" in sf.checkpoint_io.words()
    with pytest.raises(ScenarioFileError, match="checkpoint.host_copy"):
        _load(tmp_path, BLOOM + 'host_copy = "-5 s"\n')


def test_advise_varies_the_storage_and_the_save_mode(spare_here, tmp_path):
    import json
    from pathlib import Path

    ex = Path(__file__).resolve().parents[1] / "examples" / "llama3_16k_checkpoint_io.toml"
    small = ["--steps", "20000", "--seeds", "3", "--processes", "1", "--policies", "ckpt"]
    out = tmp_path / "a.json"
    p = spare_here("advise", ex, *small, "--json", out)
    assert p.returncode == 0, p.stderr
    levers = {lv["label"]: lv for lv in json.loads(out.read_text())["advice"]["levers"]}
    for label in ("checkpoint.write_bandwidth x2", "checkpoint.write_bandwidth x0.5", "checkpoint.read_bandwidth x2",
                  "checkpoint.read_bandwidth x0.5", "checkpoint.mode = blocking (its rule's interval)"):
        assert label in levers, sorted(levers)
    # the save's time is derived: it is varied through the bandwidth, not as costs.checkpoint_save
    assert not any(k.startswith("costs.checkpoint_save") for k in levers)
    # the mode switch runs at its own rule's interval: exactly what spare run gives with that mode
    run_out = tmp_path / "r.json"
    p = spare_here("run", ex, *small, "--set", 'checkpoint.mode="blocking"', "--json", run_out)
    assert p.returncode == 0, p.stderr
    ratios = [r["ratio"] for r in json.loads(run_out.read_text())["runs"] if r["policy"] == "CKPT-only"]
    assert levers["checkpoint.mode = blocking (its rule's interval)"]["ratio"] == pytest.approx(
        sum(ratios) / len(ratios), rel=1e-12)
    # a slower write costs time at the recommended interval; the blocking mode more than either
    assert levers["checkpoint.write_bandwidth x0.5"]["time_percent"][0] > 0
    assert levers["checkpoint.mode = blocking (its rule's interval)"]["time_percent"][0] > \
        levers["checkpoint.write_bandwidth x0.5"]["time_percent"][1]
