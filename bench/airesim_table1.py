"""AIReSim's Table I scenario run by spare_core next to AIReSim's own code (docs/results.md
section 15).

spare_core runs examples/airesim_table1.toml (checkpoint-only, seeds 0..N-1) four ways, for each
working pool size asked for (``repair.spares`` = working pool - job - standbys + spare pool):

* ``file``: the file as written (a 60-s save at the file's "auto" interval), the cost of losing
  the work since the last checkpoint included;
* ``no lost work``: a save of 1e-6 s after every 6-s step, which approximates AIReSim's
  assumption that a failure loses no work (what is left is at most the step under way);
* ``no lost work, compute clock``: the same on AIReSim's failure clock (``failures.clock =
  "compute"``: the servers age only while the job computes; docs/results.md section 21);
* ``no lost work, no lemons``: the same without the bad servers, to count the lemons' share of the
  failures.

Given the path of an AIReSim checkout (``--airesim PATH``; the Python that runs it, with simpy,
``--airesim-python``, by default ``PATH/.venv/bin/python``), it also runs AIReSim's simulator
on the same parameters (``AIRESIM_TABLE1``, Table I of its paper in its units, minutes) in a
subprocess of that Python, and
prints both side by side: means over seeds with their standard errors, and how many standard
errors apart. spare_core does not depend on AIReSim or simpy: without ``--airesim`` only its own
rows are printed.

Usage::

    python -m bench.airesim_table1                                  # spare_core only, ~5 s
    python -m bench.airesim_table1 --airesim /tmp/airesim            # + AIReSim, ~15 s a seed
    python -m bench.airesim_table1 --pools 4112 4160 --seeds 8 --airesim /tmp/airesim

The mapping itself (:func:`mapped_data`: AIReSim's parameters to spare_core's file, key by key)
and the driver of AIReSim's runs (:func:`run_airesim_points`) are shared with
bench/airesim_sweeps.py, which runs AIReSim's sweeps (docs/results.md section 16).
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import tomllib
from pathlib import Path

import numpy as np

from spare_core.scenario_file import parse_scenario
from spare_core.sim import CheckpointOnly, simulate
from spare_core._files import parse_duration

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

# The subprocess's program: one AIReSim run per (point, seed), its summary and its clock's parts
# (minutes) as a JSON line. Our own driver of AIReSim's public API (Params, Simulator.run,
# summary_dict and the StatsCollector's fields), not its code.
_DRIVER = """
import json, sys
from airesim.params import Params
from airesim.simulator import Simulator
points, seeds = json.loads(sys.argv[1])
for label, params in points:
    for seed in seeds:
        st = Simulator(Params(**params), seed=seed).run()
        parts = dict(compute_min=st.total_compute_time, recovery_min=st.total_recovery_time,
                     host_selection_min=st.total_host_selection_time, preemption_min=st.total_wait_time)
        print(json.dumps(dict(st.summary_dict(), **parts, point=label, seed=seed)), flush=True)
"""


def spares_for(pool: int, p: dict = AIRESIM_TABLE1) -> int:
    """spare_core's ``repair.spares`` for AIReSim's working pool ``pool``: every server beyond the
    job and its warm standbys, the spare pool's included."""
    return pool - p["job_size"] - p["warm_standbys"] + p["spare_pool_size"]


#: AIReSim parameters the mapping reads (the rest of its Params must keep their defaults, below).
MAPPED_KEYS = tuple(AIRESIM_TABLE1)

#: AIReSim parameters with no spare_core key: the mapping accepts only these values (its
#: defaults, which Table I and the sweeps keep). Sampling and run control (seed,
#: num_replications, the adaptive runner's keys) are the bench's business and are ignored.
UNMAPPED_DEFAULTS = dict(failure_distribution="exponential", weibull_shape=1.0, diagnosis_probability=1.0,
                         diagnosis_uncertainty=0.0, bad_server_regeneration=False)
_RUN_CONTROL = ("lognormal_sigma", "bad_server_regen_interval", "seed", "num_replications",
                "adaptive_replications", "confidence_level", "relative_accuracy", "max_replications")


def _scalar(text: str):
    """A flat YAML scalar as AIReSim's config files write them: a bool, an int, a float or a word."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip("'\"")


def read_airesim_config(path: str | Path) -> dict:
    """AIReSim's parameters from one of its flat ``key: value  # comment`` config files (its
    repository's config.yaml), in its units (minutes, failures per minute per server).

    Only the flat form AIReSim writes is read (no nesting, no lists): a line that is not blank, a
    comment or ``key: value`` is an error naming the line. Returns the keys as written; unknown
    keys are rejected by :func:`mapped_data`, not here.
    """
    out = {}
    for no, line in enumerate(Path(path).read_text().splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        key, sep, value = body.partition(":")
        if not sep or not key.strip().isidentifier() or not value.strip():
            raise ValueError(f"{path}:{no}: not a flat 'key: value' line: {line!r}")
        out[key.strip()] = _scalar(value.strip())
    return out


def mapped_data(p: dict, template: str | Path = EXAMPLE) -> dict:
    """The spare_core scenario file (its tables, as :func:`spare_core.scenario_file.parse_scenario`
    reads them) for AIReSim's parameters ``p`` (its units), mapped key by key as
    examples/airesim_table1.toml's comments explain: that file is this function's output for
    ``AIRESIM_TABLE1`` (tests/test_airesim_sweeps.py). Keys AIReSim has no parameter for (the
    step, the save's cost, the policies) are the template file's.

    Raises
    ------
    ValueError
        Naming the AIReSim parameter, for one that is missing, unknown, or set to a value
        spare_core cannot map (a non-exponential failure law, imperfect diagnosis, regeneration),
        or a ``job_length`` that is not a whole number of the template's steps.
    """
    unknown = sorted(set(p) - set(MAPPED_KEYS) - set(UNMAPPED_DEFAULTS) - set(_RUN_CONTROL))
    if unknown:
        raise ValueError(f"AIReSim parameters with no mapping: {unknown}")
    missing = [k for k in MAPPED_KEYS if k not in p]
    if missing:
        raise ValueError(f"AIReSim parameters missing: {missing}")
    for k, v in UNMAPPED_DEFAULTS.items():
        if k in p and p[k] != v:
            raise ValueError(f"AIReSim {k} = {p[k]!r}: spare_core maps only {v!r} (no equivalent key)")
    with open(template, "rb") as fh:
        data = tomllib.load(fh)
    cl, jb = data["cluster"], data["job"]
    n = int(p["job_size"])
    gpn = cl["gpus_per_node"]
    step = parse_duration(jb["step_time"])
    steps = p["job_length"] * 60 / step
    if abs(steps - round(steps)) > 1e-9 * steps:
        raise ValueError(f"AIReSim job_length = {p['job_length']} min is not a whole number of {step:g}-s steps")
    k = round(p["systematic_failure_fraction"] * n)                # the lemon slots spare_core draws
    m = 1 + p["systematic_failure_rate_multiplier"]                 # a bad server: random + systematic
    c = 1 + (m - 1) * k / n                                         # the fleet's rate over a normal node's
    q = p["prob_auto_to_manual"]
    # a bad server's repair fixes it unless the stage it went through silently fails; rounded to
    # 12 places so the sum's last bit (0.7600000000000001) does not stand for a different value
    fix = round((1 - q) * (1 - p["auto_repair_fail_prob"]) + q * (1 - p["manual_repair_fail_prob"]), 12)
    data["cluster"] = dict(cl, gpus=n * gpn, tp=gpn, pp=1)          # one server = one node = one group
    data["job"] = dict(jb, steps=int(round(steps)))
    data["failures"] = dict(data["failures"], node_mtbf=60 / p["random_failure_rate"] / c, weibull_shape=1.0)
    data["fleet"] = dict(data["fleet"], lemon_share=p["systematic_failure_fraction"], lemon_rate=m,
                         lemon_fix=fix, standbys=int(p["warm_standbys"]), host_select=60.0 * p["host_selection_time"])
    if k == 0:                                                      # no bad server in the job: no lemon keys
        for key in ("lemon_share", "lemon_rate", "lemon_fix"):
            data["fleet"].pop(key)
    data["repair"] = dict(data["repair"], time={"law": "exponential", "mean": 60.0 * p["auto_repair_time"]},
                          escalate=q, manual_time={"law": "exponential", "mean": 60.0 * p["manual_repair_time"]},
                          spares=spares_for(p["working_pool_size"], p))
    data["costs"] = dict(data["costs"], restart=60.0 * p["recovery_time"])
    return data


def mapped_scenario(p: dict, template: str | Path = EXAMPLE):
    """:func:`mapped_data` loaded: spare_core's Scenario for AIReSim's parameters ``p``."""
    return parse_scenario(mapped_data(p, template), source="airesim-mapped").scenario


def variants(sc):
    """(name, scenario, policy) of the spare_core runs (module docstring)."""
    nl = sc.replace(checkpoint_time=1e-6)
    f = sc.failures
    normal_mtbf = f.system_mtbf * (1 + (f.lemon_rate - 1) * round(f.lemon_share * sc.n_groups) / sc.n_groups)
    plain = nl.replace(failure_model=f.replace(lemon_share=0.0, lemon_rate=1.0, lemon_fix=0.0,
                                               system_mtbf=normal_mtbf))
    # AIReSim's failure clock: the nodes age only while the job computes (failures.clock)
    compute = nl.replace(failure_model=f.replace(clock="compute"))
    return [("file (60-s save, auto interval)", sc, CheckpointOnly()),
            ("no lost work (1e-6-s save every step)", nl, CheckpointOnly(1e-6)),
            ("no lost work, compute clock", compute, CheckpointOnly(1e-6)),
            ("no lost work, no lemons", plain, CheckpointOnly(1e-6))]


def mean_se(x) -> tuple[float, float]:
    """Mean and standard error of the mean over seeds."""
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")


def run_spare_core(pool: int, seeds: range) -> dict:
    """spare_core's rows for one working pool size: per variant, per-seed hours and counts."""
    sc = mapped_scenario(dict(AIRESIM_TABLE1, working_pool_size=pool))
    out = {}
    for name, s, pol in variants(sc):
        rs = [simulate(s, pol, seed=k) for k in seeds]
        out[name] = dict(hours=[r.time_to_train / 3600 for r in rs], failures=[r.failures_seen for r in rs],
                         lost_h=[r.lost_time / 3600 for r in rs], restart_h=[r.restart_time / 3600 for r in rs],
                         save_h=[r.save_time / 3600 for r in rs], wait_h=[r.wait_time / 3600 for r in rs],
                         finished=all(r.finished for r in rs))
    return out


def airesim_python(path: Path, python: Path | None = None) -> Path:
    """The Python that runs AIReSim: ``python`` if given (a virtual environment with simpy, kept
    outside the checkout), else the checkout's own ``.venv``."""
    py = python if python is not None else path / ".venv" / "bin" / "python"
    if not Path(py).exists():
        raise SystemExit(f"--airesim {path}: no {py} (give --airesim-python, a Python with simpy and numpy)")
    return Path(py)


def run_airesim_points(path: Path, points: list[tuple[str, dict]], seeds, python: Path | None = None) -> list[dict]:
    """AIReSim's own runs of ``points`` ((label, AIReSim parameters) pairs) in a subprocess of
    its environment's Python, from the checkout ``path``: one summary dict per (point, seed)."""
    p = subprocess.run([str(airesim_python(path, python)), "-c", _DRIVER, json.dumps([points, list(seeds)])],
                       cwd=path, env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin"},
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"AIReSim failed:\n{p.stderr}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def run_airesim(path: Path, pools: list[int], seeds: range, python: Path | None = None) -> list[dict]:
    """AIReSim's Table I runs: one summary dict per (working pool, seed), ``pool`` added."""
    rows = run_airesim_points(path, [(str(pool), dict(AIRESIM_TABLE1, working_pool_size=pool)) for pool in pools],
                              seeds, python)
    return [dict(r, pool=int(r["point"])) for r in rows]


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
    ap.add_argument("--airesim-python", type=Path, default=None,
                    help="the Python that runs AIReSim (default: PATH/.venv/bin/python)")
    ap.add_argument("--json", type=Path, default=None, help="write every number printed")
    a = ap.parse_args(argv)
    seeds = range(a.seeds)
    doc = {"seeds": a.seeds, "pools": a.pools, "spare_core": {}, "airesim": None}
    for pool in a.pools:
        doc["spare_core"][pool] = run_spare_core(pool, seeds)
    if a.airesim is None:
        print("AIReSim not run (give --airesim PATH of a checkout with its .venv to run it too)")
    else:
        doc["airesim"] = run_airesim(a.airesim, a.pools, seeds, a.airesim_python)
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
