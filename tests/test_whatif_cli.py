"""``spare whatif`` end to end: the report, the JSON document's keys, the heatmap, the synthetic
path, and bad input as one line with exit status 2."""
import json

import pytest

from spare_core.stragglers import synthetic_trace, write_trace


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("whatif")
    path = d / "job.parquet"
    write_trace(path, synthetic_trace(dp=4, pp=2, microbatches=4, steps=4, slow={5: 1.7}, seed=0), shuffle=1)
    (d / "meta-job.yaml").write_text("trial_name: job\nrun_id: 0\ndp_size: 4\ndsp_size: 1\npp_size: 2\n"
                                    "tp_size: 2\nvpp_size: 1\nworld_size: 16\n")
    return path


def test_the_report_names_the_planted_worker_and_writes_json_and_plot(spare_here, trace_file, tmp_path):
    out, png = tmp_path / "w.json", tmp_path / "w.png"
    done = spare_here("whatif", trace_file, "--meta", trace_file.parent / "meta-job.yaml", "--json", out,
                      "--plot", png)
    assert done.returncode == 0, done.stderr
    assert "slowdown S = " in done.stdout and "16 GPUs" in done.stdout
    assert "worker     5 " in done.stdout and "evicting rank 5" in done.stdout
    doc = json.loads(out.read_text())
    for key in ("slowdown", "by_dp_rank", "by_stage", "by_optype", "by_worker", "per_step", "provenance"):
        assert key in doc
    assert max(doc["by_worker"], key=doc["by_worker"].get) == "5"
    assert doc["command"] == "spare whatif" and doc["sizes"]["tp"] == 2
    assert png.stat().st_size > 1000


def test_json_to_stdout(spare_here, trace_file):
    done = spare_here("whatif", trace_file, "--json", "-", "--ideal", "median")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ideal_rule"] == "median"
    assert "slowdown S" in done.stderr


def test_the_synthetic_path(spare_here, tmp_path):
    path = tmp_path / "s.csv"
    done = spare_here("whatif", "--synth", path, "--dp", "2", "--pp", "3", "--last-stage", "1.5", "--n-steps", "3")
    assert done.returncode == 0, done.stderr
    assert "synthetic trace written" in done.stdout and "stage imbalance" in done.stdout
    again = spare_here("whatif", path, "--steps", "1-2")
    assert again.returncode == 0 and "2 steps" in again.stdout


@pytest.mark.parametrize("argv, message", [
    ([], "give a TRACE to analyse, or --synth FILE"),
    (["TRACE", "--dp", "2"], "give both --dp and --pp"),
    (["TRACE", "--meta", "META", "--dp", "2"], "--meta and --dp both give the sizes"),
    (["TRACE", "--dp", "5", "--pp", "2"], "need 10 workers"),
    (["TRACE", "--dp", "3", "--pp", "2"], "column 'dp_rank': 3 is outside 0..2 (dp = 3)"),
    (["TRACE", "--steps", "100-200"], "--steps: none of the trace's steps"),
    (["missing.parquet"], "cannot read trace 'missing.parquet'"),
])
def test_bad_input_is_one_line_and_status_2(spare_here, trace_file, argv, message):
    argv = [str(trace_file) if a == "TRACE" else str(trace_file.parent / "meta-job.yaml") if a == "META" else a
            for a in argv]
    done = spare_here("whatif", *argv)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_bad_trace_names_row_and_column(spare_here, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("dp_rank,stage,rank,step,optype,start_ts,duration,seq_id\n0,0,0,0,forward-compute,0.0,-1,0\n")
    done = spare_here("whatif", bad)
    assert done.returncode == 2
    assert "row 1 (line 2), column 'duration': negative duration -1" in done.stderr


def test_the_timeline_of_the_slowest_step(spare_here, trace_file, tmp_path):
    out = tmp_path / "tl.json"
    done = spare_here("whatif", trace_file, "--timeline", out)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {0, 1, 2, 3, 1000, 1001, 1002, 1003}
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in spans)
    assert {e["name"] for e in spans} >= {"forward-compute", "backward-compute", "optimizer"}
    recorded = max(e["ts"] + e["dur"] for e in spans if e["pid"] < 1000)
    ideal = max(e["ts"] + e["dur"] for e in spans if e["pid"] >= 1000)
    assert recorded / ideal == pytest.approx(doc["otherData"]["slowdown"])


def test_timeline_refuses_a_step_outside_the_trace():
    from spare_core.stragglers import WhatIf

    w = WhatIf(synthetic_trace(dp=2, pp=2, microbatches=2, steps=2))
    with pytest.raises(ValueError, match="step must be a position in 0..1"):
        w.timeline(2)


def test_the_example_runs():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(root / "examples" / "straggler_whatif.py")], capture_output=True,
                         text=True, timeout=300, env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert "evict rank 37" in run.stdout
