"""Policies are plugins: a policy declares its name, label, whether r applies and its options;
names come from the live registry everywhere (Python, files, flags, specs), and an installed
package adds one through the ``spare_core.policies`` entry point without touching this project."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spare_core.cli import main
from spare_core.sim import (
    POLICY_REGISTRY,
    CheckpointOnly,
    Scenario,
    Study,
    execute,
    make_policy,
    policy_names,
    register_policy,
    registered_policy,
)

ROOT = Path(__file__).resolve().parents[1]

TINY = """
name = "tiny"
[cluster]
gpus = 64
gpus_per_node = 8
gpus_per_group = 8
[job]
step_time = "10 s"
steps = 300
[failures]
model = "system"
mtbf = "20 min"
[costs]
restart = "2 min"
checkpoint_save = "5 s"
[compare]
seeds = 2
r_max = 3
processes = 1
"""


class SlowRestart(CheckpointOnly):
    """Checkpoint-only that pays an extra fixed second per masked failure (never masks, so
    the same numbers as CKPT-only): a policy with an option of its own."""

    name = "Slow restart"

    def __init__(self, r=None, interval="auto", extra=1.0):
        super().__init__(interval)
        if not extra >= 0:
            raise ValueError(f"extra must be >= 0, got {extra!r}")
        self.extra = float(extra)


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.fixture
def registered():
    entry = register_policy("slow", SlowRestart, label=SlowRestart.name, uses_redundancy=False)
    yield entry
    del POLICY_REGISTRY["slow"]


def test_an_entry_declares_its_options_and_the_policy_checks_their_values(registered):
    assert registered.options is None  # from the factory's signature
    assert make_policy("slow", extra=2.0).extra == 2.0
    with pytest.raises(ValueError, match=r"policy 'slow' has no option 'bogus' \(its options: \['interval', 'extra'\]\)"):
        make_policy("slow", bogus=1)
    with pytest.raises(ValueError, match="extra must be >= 0"):
        make_policy("slow", extra=-1.0)
    with pytest.raises(ValueError, match=r"policy 'spare' has no option 'variant' \(its options: \['interval', "
                                         r"'offsets', 'layout'\]\)"):
        make_policy("spare", 2, variant="disjoint")
    assert registered_policy("spare").options == ("interval", "offsets", "layout")


def test_a_registered_name_works_in_a_study_a_file_and_a_flag(registered, tiny, capsys, tmp_path):
    sc = Scenario(8, n_steps=200, t_compute=9.0, t_allreduce=1.0, system_mtbf=900.0, restart_time=60.0,
                  checkpoint_time=5.0, name="s")
    res = execute(Study(sc, ("ckpt", "slow"), [1], seeds=[0, 1], policy_options={"slow": {"extra": 3.0}},
                        streams="seed"))
    ckpt, slow = res.summaries
    assert (ckpt.policy, slow.policy) == ("CKPT-only", "Slow restart")
    assert ckpt.ratio_mean == slow.ratio_mean  # it never masks a failure: the same runs
    out = tmp_path / "run.json"
    assert main(["run", str(tiny), "--policies", "ckpt", "slow", "rep", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Slow restart" in text
    doc = json.loads(out.read_text())
    assert set(doc["best"]) == {"CKPT-only", "Slow restart", "Rep+CKPT"}
    # a policy without redundancy prints no r, whatever its name
    row = next(line for line in text.splitlines() if line.startswith("Slow restart"))
    assert row.split()[2] == "-"
    assert main(["run", str(tiny), "--set", 'compare.policies=["slow"]']) == 0


def test_names_come_from_the_live_registry_in_errors(registered, tiny, capsys):
    assert "slow" in policy_names()
    assert main(["run", str(tiny), "--policies", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown policy 'nope'" in err and "slow" in err


def test_rep_and_rep_disjoint_run_side_by_side(tiny, capsys, tmp_path):
    out = tmp_path / "r.json"
    assert main(["run", str(tiny), "--policies", "rep", "rep-disjoint", "--json", str(out)]) == 0
    assert set(json.loads(out.read_text())["best"]) == {"Rep+CKPT", "Rep+CKPT (disjoint)"}
    # the cyclic policy's identity (and so its store keys) did not change with the new label
    assert make_policy("rep", 2).to_dict()["params"] == {"interval": "auto", "redundancy": 2, "variant": "cyclic"}
    with pytest.raises(ValueError, match="label 'Rep\\+CKPT' is already the label of policy 'rep'"):
        register_policy("rep-again", lambda r, interval="auto": make_policy("rep", r), label="Rep+CKPT")


@pytest.mark.parametrize("interval", ['"1 h"', "3600", '"young"', '"daly"', '"auto"'])
def test_compare_interval_runs_end_to_end(tiny, capsys, interval, tmp_path):
    """Every form of compare.interval runs (it crashed every ``spare run``: the interval was
    passed to the policy twice)."""
    out = tmp_path / "i.json"
    assert main(["run", str(tiny), "--set", f"compare.interval={interval}", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    rules = {r["interval_rule"] for r in doc["runs"]}
    if interval in ('"1 h"', "3600"):
        assert rules == {"fixed by the caller"}
        assert {r["checkpoint_interval"] for r in doc["runs"]} == {3600.0}
    elif interval != '"auto"':
        assert all(rule.lower().startswith(interval.strip('"')) for rule in rules)


def test_an_installed_package_adds_a_policy_through_the_entry_point(tiny, tmp_path):
    """A package on the path with a ``spare_core.policies`` entry point: ``spare run
    --policies mine`` works without editing this project (what ``pip install my-policy`` gives)."""
    site = tmp_path / "site"
    (site / "my_policy-1.0.dist-info").mkdir(parents=True)
    (site / "my_policy.py").write_text(textwrap.dedent('''
        from spare_core.sim import ReplicationCheckpoint

        class TwoCopies(ReplicationCheckpoint):
            """Rep+CKPT fixed at two copies, whatever r the study asks for."""
            name = "Two copies"

            def __init__(self, r=None, interval="auto"):
                super().__init__(2, "cyclic", interval)
    '''))
    (site / "my_policy-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: my-policy\nVersion: 1.0\n")
    (site / "my_policy-1.0.dist-info" / "entry_points.txt").write_text(
        "[spare_core.policies]\nmine = my_policy:TwoCopies\nbroken = my_policy:Missing\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT / "src")]))
    out = tmp_path / "p.json"
    proc = subprocess.run([sys.executable, "-m", "spare_core", "run", str(tiny), "--policies", "ckpt", "mine",
                           "--json", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Two copies" in proc.stdout
    # the broken entry point is skipped with a warning, never a crash
    assert "policy plugin 'broken'" in proc.stderr
    doc = json.loads(out.read_text())
    assert {r["redundancy"] for r in doc["runs"] if r["policy"] == "Two copies"} == {2}
