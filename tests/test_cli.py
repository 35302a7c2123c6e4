"""The ``spare`` command end to end: every command, outputs with provenance, every bad-input
case (exit 2, one line, no traceback, no file), Ctrl-C (exit 130, finished runs written).

What needs a real process runs in one (``python -m spare_core``: the entry point, exit codes
as the shell sees them, no traceback on stderr, worker pools, Ctrl-C); the rest goes through
:func:`spare_core.cli.main` in this process, which is what that entry point calls, so each
case costs its work rather than an interpreter start."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spare_core.strategies import policy_names, registered_policy

from spare_core import __version__
from spare_core.sim import Scenario, sweep

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# fast settings for every example: short jobs, few seeds, small r, no worker pool
FAST = ["--steps", "400", "--seeds", "2", "--r-max", "3", "--processes", "1"]


def spare(*argv, timeout=120, **kw):
    """``spare ARGV`` in a new process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SPARE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "spare_core", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=kw.get("cwd"))


def test_version_and_errors_in_a_real_process(tmp_path):
    p = spare("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"spare {__version__} (spare_core)"
    # a bad scenario file: main's status 2 is the process's, one line, no traceback (argparse's own
    # errors exit through SystemExit(2), the same in and out of a process)
    (tmp_path / "typo.toml").write_text((EXAMPLES / "llama3_16k.toml").read_text().replace("gpus = 16_384",
                                                                                            "gpu = 16_384"))
    p = spare("run", tmp_path / "typo.toml")
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "cluster.gpu" in p.stderr and "Traceback" not in p.stderr


def test_no_command_prints_help_and_exits_2(spare_here):
    p = spare_here()
    assert p.returncode == 2 and "compare" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("argv, words", [
    (["pacing", "--nodes", "4", "4"], ["--nodes", "distinct", "4 4"]),
    (["compare", "--json", ""], ["--json", "file path", "''"]),
    (["compare", "--json", "/no/such/dir/out.json"], ["--json", "/no/such/dir", "does not exist"]),
    (["compare", "--csv", "{tmp}"], ["--csv", "not a directory"]),
    (["compare", "--groups", "200", "200"], ["--groups", "distinct"]),
    (["compare", "--groups", "0"], ["--groups", ">= 1", "0"]),
    (["compare", "--horizon", "1"], ["--horizon", "> 1", "1"]),
    (["compare", "--plot", "{tmp}/afile"], ["--plot", "is a file"]),
    (["compare", "--bogus"], ["unrecognized arguments", "--bogus"]),
    (["demo", "--types", "x"], ["--types", "integer", "'x'"]),
    (["demo", "--types", "3", "--redundancy", "5"], ["--redundancy", "<= --types (3)", "5"]),
    (["demo", "--every", "0"], ["--every", ">= 1"]),
    (["pacing", "--json", "/no/such/dir/out.json"], ["--json", "does not exist"]),
    (["run", "{tmp}/missing.toml"], ["cannot read scenario file", "missing.toml"]),
    (["run", "{tmp}/bad.toml"], ["bad.toml", "not valid TOML"]),
    (["run", "{tmp}/typo.toml"], ["cluster.gpu", "unknown", "16384"]),
    (["run", str(EXAMPLES / "llama3_16k.toml"), "--set", "failures.mtbf=-2h"], ["failures.mtbf", "duration > 0", "'-2h'"]),
    (["run", str(EXAMPLES / "llama3_16k.toml"), "--set", "job.steps=0"], ["job.steps", ">= 1", "0"]),
    (["run", str(EXAMPLES / "llama3_16k.toml"), "--set", "costs.restart=soon"], ["costs.restart", "'soon'"]),
    (["run", str(EXAMPLES / "llama3_16k.toml"), "--seeds", "0"], ["--seeds", ">= 1"]),
    (["run", str(EXAMPLES / "llama3_16k.toml"), "--horizon", "0.5"], ["--horizon", "> 1"]),
    (["run", str(EXAMPLES / "trace_job.toml"), "--set", "failures.after=never"], ["failures.after", "'never'"]),
    (["run", str(EXAMPLES / "trace_job.toml"), "--set", "failures.mtbf=2h"], ["failures.mtbf", "model = 'trace'"]),
    (["advise", str(EXAMPLES / "llama3_16k.toml"), "--json", "/no/such/dir/a.json"], ["--json", "does not exist"]),
    (["advise", str(EXAMPLES / "llama3_16k.toml"), "--policies", "magic"], ["--policies", "unknown policy", "magic", "registered"]),
])
def test_bad_input_one_line_exit_2_nothing_written(spare_here, tmp_path, argv, words):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "bad.toml").write_text("[cluster\n")
    (tmp_path / "typo.toml").write_text((EXAMPLES / "llama3_16k.toml").read_text().replace("gpus = 16_384", "gpu = 16_384"))
    before = sorted(os.listdir(tmp_path))
    p = spare_here(*[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr and lines[0].startswith("spare"), p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert p.stdout == ""
    assert sorted(os.listdir(tmp_path)) == before


def test_compare_outputs_carry_provenance_and_match_sweep(tmp_path):
    j, c, q = tmp_path / "c.json", tmp_path / "c.csv", tmp_path / "c.parquet"
    p = spare("compare", "--groups", "40", "60", "--r-max", "3", "--seeds", "2", "--steps", "150",
              "--processes", "2", "--json", j, "--csv", c, "--parquet", q)
    assert p.returncode == 0, p.stderr
    assert "ckpt every" in p.stdout and "checkpoint rule:" in p.stdout
    doc = json.loads(j.read_text())
    prov = doc["provenance"]
    assert prov["version"] == __version__ and prov["seeds"] == [0, 1] and not prov["interrupted"]
    assert [s["n_groups"] for s in prov["scenario"]["scenarios"]] == [40, 60]
    assert prov["timings"]["elapsed_seconds"] > 0 and len(prov["timings"]["tasks"]) == 4
    # the grid run seed by seed is the single sweep call, bit for bit
    scs = [Scenario.paper_600k(n, n_steps=150, max_wall_factor=20.0) for n in (40, 60)]
    ref = sweep(scs, ("ckpt", "rep", "spare"), range(1, 4), range(2))
    # strict JSON: a null says why under "null_reasons" (docs/cli.md, Outputs); the rest is to_dict's
    assert [{k: v for k, v in c.items() if k != "null_reasons"} for c in doc["cells"]] == \
        json.loads(json.dumps([s.to_dict() for s in ref.summaries]))
    assert all(c["null_reasons"]["ratio_mean"] for c in doc["cells"] if c["ratio_mean"] is None)
    rows = list(csv.DictReader(line for line in c.read_text().splitlines() if not line.startswith("#")))
    assert len(rows) == len(ref.runs) == len(doc["runs"])
    head = [line for line in c.read_text().splitlines() if line.startswith("# provenance: ")]
    assert json.loads(head[0][len("# provenance: "):])["version"] == __version__
    pq = pytest.importorskip("pyarrow.parquet")
    t = pq.read_table(q)
    assert t.num_rows == len(rows) and json.loads(t.schema.metadata[b"spare_core"])["seeds"] == [0, 1]


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_every_example_runs(spare_here, example, tmp_path):
    out = tmp_path / "run.json"
    p = spare_here("run", EXAMPLES / example, *FAST, "--json", out)
    assert p.returncode == 0, p.stderr
    assert "best r" in p.stdout and "ckpt every" in p.stdout and "rule" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["provenance"]["scenario"]["path"].endswith(example)
    assert set(doc["best"]) <= {registered_policy(n).label for n in policy_names()} and doc["best"]


def test_advise_recommends_with_cis_runner_up_and_sensitivity(spare_here, tmp_path):
    out = tmp_path / "a.json"
    p = spare_here("advise", EXAMPLES / "rsc1_2000_nodes.toml", "--steps", "3000", "--seeds", "3", "--r-max", "3",
                   "--processes", "1", "--json", out)
    assert p.returncode == 0, p.stderr
    assert "recommendation:" in p.stdout and "95 % CI" in p.stdout and "runner-up:" in p.stdout
    assert "failure rate x0.5" in p.stdout and "failure rate x1.5" in p.stdout
    adv = json.loads(out.read_text())["advice"]
    m, lo, hi = adv["ratio"]
    assert lo <= m <= hi and adv["checkpoint_interval"] >= 0 and adv["interval_rule"]


def test_flags_override_file_values(spare_here, tmp_path):
    out = tmp_path / "o.json"
    p = spare_here("run", EXAMPLES / "llama3_16k.toml", *FAST, "--policies", "spare", "--set",
                   "failures.period='27 d'", "--json", out)
    assert p.returncode == 0, p.stderr
    sc = json.loads(out.read_text())["provenance"]["scenario"]
    assert sc["policies"] == ["spare"] and sc["seeds"] == [0, 1] and sc["scenario"]["n_steps"] == 400
    assert sc["scenario"]["failure_model"]["system_mtbf"] == pytest.approx(27 * 86400 / 419)


def test_plots_written(spare_here, tmp_path):
    pytest.importorskip("matplotlib")
    d = tmp_path / "plots"
    p = spare_here("run", EXAMPLES / "rsc1_2000_nodes.toml", *FAST, "--plot", d)
    assert p.returncode == 0, p.stderr
    for name in ("ttt_vs_r.png", "ettr_vs_interval.png", "timeline.png"):
        assert (d / name).stat().st_size > 10_000
    p = spare_here("pacing", "--nodes", "4", "8", "--iterations", "50", "--replicas", "1", "--plot", d)
    assert p.returncode == 0, p.stderr
    assert (d / "pacing.png").exists()


def test_pacing_json_carries_provenance(spare_here, tmp_path):
    out = tmp_path / "p.json"
    argv = ["pacing", "--nodes", "4", "8", "--iterations", "40", "--replicas", "1", "--seed", "3",
            "--oversubscription", "3", "--json", str(out)]
    p = spare_here(*argv)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    prov = doc["provenance"]
    assert prov["version"] == __version__ and prov["command"] == "spare pacing" and prov["argv"] == argv
    assert prov["seeds"] == [3] and prov["timings"]["elapsed_seconds"] > 0 and not prov["interrupted"]
    sc = prov["scenario"]
    assert sc["node_counts"] == [4, 8] and sc["n_iterations"] == 40 and sc["replicas"] == 1
    assert sc["pacing_scenario"]["fabric"]["oversubscription"] == 3.0
    assert len(doc["rows"]) == 4 and {r["n_nodes"] for r in doc["rows"]} == {4, 8}


def test_demo_and_pacing_still_run(spare_here):
    assert spare_here("demo", "--types", "60", "--redundancy", "3").returncode == 0
    p = spare_here("pacing", "--nodes", "4", "8", "--iterations", "50", "--replicas", "1")
    assert p.returncode == 0 and "pacing" in p.stdout.lower()


def test_ctrl_c_exits_130_and_writes_finished_runs(tmp_path):
    out = tmp_path / "partial.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    # many short (N, seed) tasks: some finish before the interrupt, far too many to all finish
    # before it however fast the machine (beyond the work budget in total: --force)
    proc = subprocess.Popen([sys.executable, "-m", "spare_core", "compare", "--groups", "30", "40", "--r-max", "4",
                             "--seeds", "100000", "--steps", "200", "--processes", "2", "--force", "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    time.sleep(6.0)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # never leave the command running past its test
        raise
    assert proc.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0] and "Traceback" not in stderr
    doc = json.loads(out.read_text())
    assert doc["provenance"]["interrupted"] is True
    assert 0 < len(doc["runs"]) < 2 * 100_000 * 9
