"""A count of interruptions keeps its per-GPU (per-domain) rate when the job is resized: a
file's count without ``measured_on_gpus`` was seen on the file's own job (issue 29 item 1)."""
from pathlib import Path

import pytest

from spare_core.scenario_file import ScenarioFileError, apply_overrides, load_scenario_file

EX = Path(__file__).resolve().parents[1] / "examples"

BASE = """
[cluster]
gpus = 16384
gpus_per_group = 128
[job]
step_time = "10 s"
steps = 1000
[failures]
model = "node"
interruptions = 419
period = "54 d"
"""


def _file(tmp_path, text):
    p = tmp_path / "f.toml"
    p.write_text(text)
    return p


def test_resizing_keeps_the_per_gpu_rate(tmp_path):
    p = _file(tmp_path, BASE)
    small = load_scenario_file(p)
    big = load_scenario_file(p, ["cluster.gpus=131072"])
    # 8x the GPUs at the same per-GPU rate: the system MTBF falls 8x
    assert big.scenario.system_mtbf == pytest.approx(small.scenario.system_mtbf / 8, rel=1e-12)
    assert "on 16384 GPUs, scaled to 131072 GPUs" in big.rate_note
    # the same with nodes given instead of gpus
    via_nodes = load_scenario_file(p, ["cluster.nodes=16384"])
    assert via_nodes.scenario.system_mtbf == pytest.approx(big.scenario.system_mtbf, rel=1e-12)


def test_an_explicit_size_and_a_new_count_are_left_alone(tmp_path):
    p = _file(tmp_path, BASE.replace('period = "54 d"', 'period = "54 d"\nmeasured_on_gpus = 4096'))
    a = load_scenario_file(p, ["cluster.gpus=131072"])
    assert "on 4096 GPUs" in a.rate_note
    # a count changed together with the size is the resized job's own count
    b = load_scenario_file(_file(tmp_path, BASE), ["cluster.gpus=131072", "failures.interruptions=100"])
    assert "on 131072 GPUs" in b.rate_note
    data = {"cluster": {"gpus": 16384}, "failures": {"interruptions": 419, "period": "54 d"}}
    assert "measured_on_gpus" not in apply_overrides(data, ["job.steps=5"])["failures"]  # size unchanged
    assert "measured_on_gpus" not in data["failures"]  # the caller's table is not modified


def test_a_domain_levels_count_keeps_one_domains_rate(tmp_path):
    text = BASE + """
[[failures.domains]]
name = "switch"
nodes = 32
interruptions = 35
period = "54 d"
"""
    p = _file(tmp_path, text)
    small, big = load_scenario_file(p), load_scenario_file(p, ["cluster.gpus=131072"])
    assert "each failing once per" in small.rate_note
    one = lambda sf: sf.rate_note.split("each failing once per ")[1].split(" d")[0]  # noqa: E731
    assert one(small) == one(big)  # 64 switches then 512, each at 54 d x 64 / 35
    assert float(one(small)) == pytest.approx(54 * 64 / 35, rel=1e-2)


def test_domain_measured_on_gpus_is_checked(tmp_path):
    text = BASE + '\n[[failures.domains]]\nname = "s"\nnodes = 32\nmtbf = "2 y"\nmeasured_on_gpus = 16384\n'
    with pytest.raises(ScenarioFileError, match="measured_on_gpus.*only goes with interruptions"):
        load_scenario_file(_file(tmp_path, text))
    bad = BASE + '\n[[failures.domains]]\nname = "s"\nnodes = 32\ninterruptions = 3\nperiod = "5 d"\nmeasured_on_gpus = 0\n'
    with pytest.raises(ScenarioFileError, match="measured_on_gpus"):
        load_scenario_file(_file(tmp_path, bad))


@pytest.mark.parametrize("name", ["llama3_16k.toml", "llama3_16k_strategies.toml", "llama3_16k_switches.toml",
                                  "llama3_16k_stragglers.toml"])
def test_every_example_count_states_its_size(name):
    text = (EX / name).read_text()
    assert text.count("interruptions =") == text.count("measured_on_gpus =")
    sf = load_scenario_file(EX / name, ["cluster.gpus=131072"])
    assert "on 16384 GPUs, scaled to 131072 GPUs" in sf.rate_note
