"""``spare advise`` on a file with repairs, a memory tier, elastic training and a price:
the cost objective, the sensitivity to costs and repair times, the spares sweep."""
import csv
import json
import re

from spare_core.cli import main

FILE = """
name = "tiny-advise"
[cluster]
gpus = 128
gpus_per_node = 8
gpus_per_group = 16
[job]
step_time = "10 s"
allreduce_time = "1 s"
steps = 1500
[failures]
model = "node"
mtbf = "40 min"
[costs]
restart = "10 min"
checkpoint_save = "20 s"
gpu_hour = 2.0
[repair]
swap = "5 min"
spares = 2
time = "12 h"
rejoin = "1 min"
[checkpoint]
memory_save = "1 s"
memory_every = "3 min"
memory_restore = "1 min"
[compare]
policies = ["ckpt", "spare", "elastic"]
redundancies = [2, 3]
seeds = 3
processes = 1
"""


def _advise(tmp_path, capsys, *extra):
    f = tmp_path / "a.toml"
    f.write_text(FILE)
    code = main(["advise", str(f), "--json", str(tmp_path / "a.json"), "--csv", str(tmp_path / "a.csv"), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_part_is_printed_and_every_run_written(tmp_path, capsys):
    code, out, _ = _advise(tmp_path, capsys, "--spares", "0,1,4")
    assert code == 0
    for line in ("costs.restart x0.5", "costs.checkpoint_save x2", "repair.swap x2", "repair.time x0.5",
                 "repair.spares = 1", "repair.spares = 4", "without the in-memory tier", "how many hot spares"):
        assert line in out, line
    doc = json.loads((tmp_path / "a.json").read_text())
    assert [s["value"] for s in doc["spares"]] == [0, 1, 4]
    # every policy at its best r on each pool size, with its cost
    pols = {c["policy"] for c in doc["cells"] if c["grid"] == "main"}
    for s in doc["spares"]:
        assert {row["policy"] for row in s["rows"]} == pols
    printed = int(re.search(r"^(\d+) runs \(", out, re.M).group(1))
    with open(tmp_path / "a.csv") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))  # provenance lines
    assert len(rows) == len(doc["runs"]) == printed
    assert {"sensitivity", "spares sweep"} <= {r["grid"] for r in rows}
    assert doc["advice"]["cost"][0] > 0 and doc["advice"]["gpu_hours"][0] > 0


def test_more_spares_cost_more_gpus_per_hour_and_wait_less(tmp_path, capsys):
    _advise(tmp_path, capsys, "--spares", "0,8", "--no-sensitivity")
    doc = json.loads((tmp_path / "a.json").read_text())
    runs = [r for r in doc["runs"] if r["grid"] == "spares sweep"]
    paid = {r["scenario"]: r["gpus_paid"] for r in runs}
    assert sorted(set(paid.values())) == [128, 128 + 64]
    wait = {}
    for r in runs:
        if r["policy"] == "CKPT-only":
            wait.setdefault(r["gpus_paid"], []).append(r["wait_time"])
            if r["gpus_paid"] == 128:
                # no pool: every restart waits for its own node's repair and swap past the restart
                # (1 min from memory, 10 min from the persistent checkpoint)
                mem = r["memory_restores"]
                full = mem * (12 * 3600 + 300 - 60) + (r["restarts"] - mem) * (12 * 3600 + 300 - 600)
                if r["finished"]:
                    assert r["wait_time"] == full
                else:
                    # the wall limit cuts the last restart's wait (and the run's time) short
                    assert full - (12 * 3600 + 300 - 60) <= r["wait_time"] <= full
    # eight spares (about 18 nodes are in repair at this rate: some restarts still wait)
    assert sum(wait[128 + 64]) < 0.5 * sum(wait[128])


def test_the_cost_objective_ranks_by_cost_and_says_so(tmp_path, capsys):
    code, out, _ = _advise(tmp_path, capsys, "--objective", "cost", "--no-sensitivity")
    assert code == 0
    doc = json.loads((tmp_path / "a.json").read_text())
    a = doc["advice"]
    assert a["objective"] == "cost"
    main_cells = [c for c in doc["cells"] if c["grid"] == "main"]
    # the recommended cell has the least mean cost among the policies' best cells
    costs = {}
    for r in doc["runs"]:
        if r["grid"] == "main" and r["finished"]:
            costs.setdefault((r["policy"], r["redundancy"]), []).append(r["cost"])
    best = min((sum(v) / len(v), k) for k, v in costs.items() if len(v) == 3 and
               any(c["policy"] == k[0] and c["redundancy"] == k[1] for c in main_cells))
    assert a["cost"][0] <= best[0] * (1 + 1e-12) or a["policy"] == best[1][0]
    if a["runner_up"] is not None:
        assert "cost" in out.split("runner-up:")[1].splitlines()[0]


def test_the_cost_objective_needs_a_price_and_spares_need_repairs(tmp_path, capsys):
    f = tmp_path / "a.toml"
    f.write_text(FILE.replace("gpu_hour = 2.0\n", ""))
    assert main(["advise", str(f), "--objective", "cost"]) == 2
    assert "costs.gpu_hour" in capsys.readouterr().err
    f.write_text(FILE.split("[repair]")[0] + "[compare]\npolicies = [\"ckpt\"]\nseeds = 2\n")
    assert main(["advise", str(f), "--spares", "1,2"]) == 2
    assert "[repair]" in capsys.readouterr().err
