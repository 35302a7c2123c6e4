"""AIReSim's Table I scenario run by spare_core next to AIReSim's own code (docs/results.md
section 15).

spare_core runs examples/airesim_table1.toml (checkpoint-only, seeds 0..N-1) three ways, for each
working pool size asked for (``repair.spares`` = working pool - job - standbys + spare pool):

* ``file``: the file as written (a 60-s save at the file's "auto" interval), the cost of losing
  the work since the last checkpoint included;
* ``no lost work``: a save of 1e-6 s after every 6-s step, which approximates AIReSim's
  assumption that a failure loses no work (what is left is at most the step under way);
* ``no lost work, no lemons``: the same without the bad servers, to count the lemons' share of the
  failures.

Given the path of an AIReSim checkout (``--airesim PATH``, its virtual environment in
``PATH/.venv``), it also runs AIReSim's simulator on the same parameters (``AIRESIM_TABLE1``,
Table I of its paper in its units, minutes) in a subprocess of that environment's Python, and
prints both side by side: means over seeds with their standard errors, and how many standard
errors apart. spare_core does not depend on AIReSim or simpy: without ``--airesim`` only its own
rows are printed.

Usage::

    python -m bench.airesim_table1                                  # spare_core only, ~5 s
    python -m bench.airesim_table1 --airesim /tmp/airesim            # + AIReSim, ~15 s a seed
    python -m bench.airesim_table1 --pools 4112 4160 --seeds 8 --airesim /tmp/airesim
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import subprocess
from pathlib import Path

import numpy as np

from spare_core.scenario_file import load_scenario_file
from spare_core.sim import CheckpointOnly, simulate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "airesim_table1.toml"

DAY_MIN = 24 * 60

#: AIReSim's Table I base (examples/paper_table1_sweep.py's ``BASE`` in its repository), in its
#: own units: minutes, failures per minute per server. The parameter values only, for the
#: subprocess and for tests/test_airesim_mapping.py's check of the mapping.
AIRESIM_TABLE1 = dict(
    random_failure_rate=0.01 / DAY_MIN,
    systematic_failure_rate_multiplier=5.0,
    systematic_failure_fraction=0.15,
    recovery_time=20.0,
    warm_standbys=16,
    host_selection_time=3.0,
    preemption_wait_time=20.0,
    prob_auto_to_manual=0.80,
    auto_repair_fail_prob=0.40,
    manual_repair_fail_prob=0.20,
    auto_repair_time=120.0,
    manual_repair_time=2 * DAY_MIN,
    job_size=4096,
    job_length=256 * DAY_MIN,
    working_pool_size=4160,
    spare_pool_size=200,
)

# The subprocess's program: one AIReSim run per (pool, seed), its summary as a JSON line. Our
# own driver of AIReSim's public API (Params, Simulator.run, summary_dict), not its code.
_DRIVER = """
import json, sys
from airesim.params import Params
from airesim.simulator import Simulator
base, pools, seeds = json.loads(sys.argv[1])
for pool in pools:
    for seed in seeds:
        st = Simulator(Params(**dict(base, working_pool_size=pool)), seed=seed).run()
        print(json.dumps(dict(st.summary_dict(), pool=pool, seed=seed)), flush=True)
"""


def spares_for(pool: int, p: dict = AIRESIM_TABLE1) -> int:
    """spare_core's ``repair.spares`` for AIReSim's working pool ``pool``: every server beyond the
    job and its warm standbys, the spare pool's included."""
    return pool - p["job_size"] - p["warm_standbys"] + p["spare_pool_size"]


def variants(sc):
    """(name, scenario, policy) of the three spare_core runs (module docstring)."""
    nl = sc.replace(checkpoint_time=1e-6)
    f = sc.failures
    normal_mtbf = f.system_mtbf * (1 + (f.lemon_rate - 1) * round(f.lemon_share * sc.n_groups) / sc.n_groups)
    plain = nl.replace(failure_model=f.replace(lemon_share=0.0, lemon_rate=1.0, lemon_fix=0.0,
                                               system_mtbf=normal_mtbf))
    return [("file (60-s save, auto interval)", sc, CheckpointOnly()),
            ("no lost work (1e-6-s save every step)", nl, CheckpointOnly(1e-6)),
            ("no lost work, no lemons", plain, CheckpointOnly(1e-6))]


def mean_se(x) -> tuple[float, float]:
    """Mean and standard error of the mean over seeds."""
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")


def run_spare_core(pool: int, seeds: range) -> dict:
    """spare_core's rows for one working pool size: per variant, per-seed hours and counts."""
    sc = load_scenario_file(EXAMPLE).scenario
    sc = sc.replace(repair=dataclasses.replace(sc.repair, spares=spares_for(pool)))
    out = {}
    for name, s, pol in variants(sc):
        rs = [simulate(s, pol, seed=k) for k in seeds]
        out[name] = dict(hours=[r.time_to_train / 3600 for r in rs], failures=[r.failures_seen for r in rs],
                         lost_h=[r.lost_time / 3600 for r in rs], restart_h=[r.restart_time / 3600 for r in rs],
                         save_h=[r.save_time / 3600 for r in rs], wait_h=[r.wait_time / 3600 for r in rs],
                         finished=all(r.finished for r in rs))
    return out


def run_airesim(path: Path, pools: list[int], seeds: range) -> list[dict]:
    """AIReSim's own runs in its virtual environment's Python: one summary dict per (pool, seed)."""
    py = path / ".venv" / "bin" / "python"
    if not py.exists():
        raise SystemExit(f"--airesim {path}: no {py} (an AIReSim checkout with its .venv, simpy installed)")
    p = subprocess.run([str(py), "-c", _DRIVER, json.dumps([AIRESIM_TABLE1, pools, list(seeds)])],
                       cwd=path, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"AIReSim failed:\n{p.stderr}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def airesim_decomposition(row: dict, p: dict = AIRESIM_TABLE1) -> dict:
    """AIReSim's total time in hours as its parts: the job's length (no work lost), a recovery per
    failure, a host selection's time per selection and a preemption wait per spare-pool server
    pulled (the run's stalls for repairs, none in Table I, are what is left)."""
    parts = dict(compute=p["job_length"], recovery=row["total_failures"] * p["recovery_time"],
                 host_selection=row["host_selection_count"] * p["host_selection_time"],
                 preemption=row["preemption_count"] * p["preemption_wait_time"])
    return {k: v / 60 for k, v in parts.items()}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--pools", type=int, nargs="+", default=[4112, 4160], help="AIReSim's working_pool_size")
    ap.add_argument("--airesim", type=Path, default=None, help="path of an AIReSim checkout (with .venv)")
    ap.add_argument("--json", type=Path, default=None, help="write every number printed")
    a = ap.parse_args(argv)
    seeds = range(a.seeds)
    doc = {"seeds": a.seeds, "pools": a.pools, "spare_core": {}, "airesim": None}
    for pool in a.pools:
        doc["spare_core"][pool] = run_spare_core(pool, seeds)
    if a.airesim is None:
        print("AIReSim not run (give --airesim PATH of a checkout with its .venv to run it too)")
    else:
        doc["airesim"] = run_airesim(a.airesim, a.pools, seeds)
    print(f"seeds 0..{a.seeds - 1}; mean ± standard error; hours")
    print("| working pool | simulator, run | total time h | failures | lost work h | AIReSim − this, in SEs |")
    print("|---|---|---|---|---|---|")
    for pool in a.pools:
        ai = [r for r in doc["airesim"] or [] if r["pool"] == pool]
        if ai:
            ah = mean_se([r["total_training_time_hrs"] for r in ai])
            af = mean_se([r["total_failures"] for r in ai])
            sy = mean_se([r["systematic_failures"] for r in ai])
            dec = {k: mean_se([airesim_decomposition(r)[k] for r in ai]) for k in ("recovery", "host_selection", "preemption")}
            print(f"| {pool} | AIReSim | {ah[0]:,.1f} ± {ah[1]:.1f} | {af[0]:,.0f} ± {af[1]:.0f} "
                  f"({sy[0]:.0f} systematic) | 0 (assumed) | |")
            print(f"| {pool} | AIReSim's parts | recovery {dec['recovery'][0]:,.1f}, host selection "
                  f"{dec['host_selection'][0]:.1f}, preemption {dec['preemption'][0]:.1f} | | | |")
        for name, v in doc["spare_core"][pool].items():
            h, f, lost = mean_se(v["hours"]), mean_se(v["failures"]), mean_se(v["lost_h"])
            z = f"{(ah[0] - h[0]) / math.hypot(ah[1], h[1]):+.1f}" if ai else ""
            print(f"| {pool} | spare_core, {name} | {h[0]:,.1f} ± {h[1]:.1f} | {f[0]:,.0f} ± {f[1]:.0f} "
                  f"| {lost[0]:.1f} | {z} |")
    if a.json:
        a.json.write_text(json.dumps(doc, indent=1))
    return doc


if __name__ == "__main__":
    main()
