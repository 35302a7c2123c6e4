"""AIReSim's MTBF, warm-standby and spare-pool sweeps, run by its own code next to spare_core
(docs/results.md section 16).

The sweeps are the ones AIReSim's repository defines (karthikp-ubc/airesim, MIT; values in its
units, minutes and failures per minute per server):

* ``mtbf``: ``random_failure_rate`` at 0.005, 0.01 and 0.02 a day per server
  (examples/generate_paper_figures.py's ``SENSITIVITY_PARAMS``), on Table I's base at its own
  scale (examples/paper_table1_sweep.py's ``BASE``; the figure script scales the cluster down
  to 64 servers for a laptop, and says the paper's scale is this one);
* ``standbys``: ``warm_standbys`` at 4, 8, 16 and 32 (examples/paper_table1_sweep.py), Table I's
  base, working pool 4160;
* ``stress_spares``, ``stress_standbys``, ``stress_mtbf``: examples/stress_scenario.py's sweeps
  of ``spare_pool_size`` (10, 25, 50, 100) and ``warm_standbys`` (4, 8, 16, 32) in its 2x regime
  (a 7-day job, working pool 4128, spare pool 50, twice Table I's random rate), and its two
  regimes' rates (2x and 5x) with Table I's 1x beside them.

Every point's AIReSim parameters are mapped onto a spare_core scenario by
``bench.airesim_table1.mapped_data`` (the mapping of examples/airesim_table1.toml, one function)
and run checkpoint-only with a 1e-6-s save after every 6-s step, which approximates AIReSim's
assumption that a failure loses no work (section 15). spare_core runs each point three times:
with its default restart rule (``fleet.restart_when = "one"``: a restart resumes once the failed
node's replacement is in place); with ``"job+standbys"`` (it resumes only once every warm standby
is ready again too, the closer of its two rules to AIReSim's full host selection, which waits
for job + standbys servers); and with the first rule and the lemons' repairs made rarer
(``fleet.lemon_fix`` from :func:`clock_fix`) so that its lemons, fixed on its wall clock, add as
many failures as AIReSim's bad servers on its compute clock (:func:`lemon_extra`).

Given ``--airesim PATH`` (a checkout of AIReSim) and a Python with simpy (``--airesim-python``,
default ``PATH/.venv/bin/python``), AIReSim's own simulator runs every point in a subprocess;
spare_core does not depend on AIReSim or simpy.

Each row: both simulators' mean total time ± standard error over seeds, AIReSim minus spare_core
in hours and in standard errors of the difference, and both totals' parts, which add up to them
exactly: AIReSim's compute, a recovery per failure, its host selections, its preemption waits
and its stalls for repairs (the rest); spare_core's compute, a restart per failure, its waits
for a replacement and the step under way lost at each failure. A point's "ordinary" failures,
``n * lambda0 * T0``, are the same in both (memoryless lifetimes seen over the same compute
time); what the lemons add is a failure count's remainder over it.

Usage::

    python -m bench.airesim_sweeps                      # spare_core only, ~1 min
    python -m bench.airesim_sweeps --airesim /tmp/aire2 --airesim-python /tmp/aire-venv/bin/python \\
        --seeds 8 --stress-seeds 20 --json /tmp/airesim_sweeps.json   # + AIReSim, ~30 min (docs/results.md §16)
    python -m bench.airesim_sweeps --reuse-airesim /tmp/airesim_sweeps.json  # spare_core again, the same AIReSim runs
    python -m bench.airesim_sweeps --sweeps stress_spares --seeds 2 --spare-seeds 4   # one sweep
"""
from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path


from bench.airesim_table1 import AIRESIM_TABLE1, DAY_MIN, mapped_data, mean_se, run_airesim_points
from spare_core.scenario_file import parse_scenario
from spare_core.sim import CheckpointOnly, simulate

#: examples/stress_scenario.py's ``_STRESS_BASE`` with its ``STRESS_2X`` rate (Table I's other
#: parameters, which it repeats).
STRESS_2X = dict(AIRESIM_TABLE1, working_pool_size=4128, spare_pool_size=50, job_length=7 * DAY_MIN,
                 random_failure_rate=2 * AIRESIM_TABLE1["random_failure_rate"])


@dataclass(frozen=True)
class Sweep:
    """One of AIReSim's one-way sweeps: ``param`` over ``values`` from ``base`` (its units)."""

    name: str
    param: str
    values: tuple
    base: dict
    source: str
    stress: bool = False          # a 7-day job: cheap, run with --stress-seeds

    def points(self) -> list[tuple[str, dict]]:
        """(label, AIReSim parameters) of each value."""
        return [(f"{self.param}={v:.6g}", dict(self.base, **{self.param: v})) for v in self.values]


_R = AIRESIM_TABLE1["random_failure_rate"]
SWEEPS = (
    Sweep("mtbf", "random_failure_rate", (0.5 * _R, _R, 2 * _R), AIRESIM_TABLE1,
          "examples/generate_paper_figures.py SENSITIVITY_PARAMS, at Table I's scale"),
    Sweep("standbys", "warm_standbys", (4, 8, 16, 32), AIRESIM_TABLE1, "examples/paper_table1_sweep.py"),
    Sweep("stress_spares", "spare_pool_size", (10, 25, 50, 100), STRESS_2X,
          "examples/stress_scenario.py, 2x regime", stress=True),
    Sweep("stress_standbys", "warm_standbys", (4, 8, 16, 32), STRESS_2X,
          "examples/stress_scenario.py, 2x regime", stress=True),
    Sweep("stress_mtbf", "random_failure_rate", (_R, 2 * _R, 5 * _R), STRESS_2X,
          "examples/stress_scenario.py's 2x and 5x regimes (and 1x)", stress=True),
)

RULES = ("one", "job+standbys")
#: spare_core's runs of a point: the two restart rules, and the first with its lemons' repairs
#: made rarer so they add AIReSim's count on spare_core's wall clock (:func:`clock_fix`).
VARIANTS = RULES + ("clock",)


def point_key(p: dict) -> str:
    """One string per distinct parameter set, so a point shared by two sweeps runs once."""
    return json.dumps(p, sort_keys=True)


def spare_core_scenario(p: dict, variant: str = "one"):
    """The mapped scenario of AIReSim's ``p`` with no lost work (a 1e-6-s save; the run saves
    after every step): the restart rule ``variant``, or for ``"clock"`` the rule ``"one"`` with
    ``fleet.lemon_fix`` from :func:`clock_fix`."""
    data = mapped_data(p)
    data["costs"] = dict(data["costs"], checkpoint_save=1e-6)
    data["fleet"] = dict(data["fleet"], restart_when="one" if variant == "clock" else variant)
    if variant == "clock" and "lemon_fix" in data["fleet"]:
        data["fleet"]["lemon_fix"] = clock_fix(p)
    return parse_scenario(data, source="airesim-mapped").scenario


def run_spare_core_point(p: dict, seeds, variant: str = "one") -> dict:
    """spare_core's runs of one point: per seed, the total and its parts in hours, and counts."""
    sc = spare_core_scenario(p, variant)
    rs = [simulate(sc, CheckpointOnly(1e-6), seed=k) for k in seeds]
    h = 3600.0
    return dict(hours=[r.time_to_train / h for r in rs], failures=[r.failures_seen for r in rs],
                compute_h=[(r.time_to_train - r.restart_time - r.wait_time - r.lost_time - r.save_time) / h for r in rs],
                restart_h=[r.restart_time / h for r in rs], wait_h=[r.wait_time / h for r in rs],
                lost_h=[(r.lost_time + r.save_time) / h for r in rs], finished=all(r.finished for r in rs))


def airesim_parts(row: dict) -> dict:
    """One AIReSim run's total in hours and its parts; the stalls for repairs are the rest."""
    parts = {k: row[f"{k}_min"] / 60 for k in ("compute", "recovery", "host_selection", "preemption")}
    parts["stall"] = row["total_training_time_hrs"] - sum(parts.values())
    return dict(parts, hours=row["total_training_time_hrs"], failures=row["total_failures"],
                systematic=row["systematic_failures"])


def ordinary_failures(p: dict) -> float:
    """The failures of ``job_size`` servers at the random rate over the job's compute time."""
    return p["job_size"] * p["random_failure_rate"] * p["job_length"]


def lemon_extra(p: dict, restarts_fix: bool, q: float | None = None) -> float:
    """The failures the bad servers add over the job's compute time ``T0``, in closed form.

    A bad server fails ``m`` times as often as a good one (``lambda0``) until a repair fixes it
    (probability ``q`` per failure), so ``L`` bad servers decay at ``a = q m lambda0`` each and add
    ``(m - 1) lambda0 L`` failures per unit of compute time.

    * AIReSim (``restarts_fix=False``): its servers fail only while the job computes, so on the
      compute clock ``dL/dt = -a L`` and the extra count is ``k (m - 1)/(q m) (1 - e^{-a T0})``
      (k: the job's bad servers at the start, ``job_size`` times the fleet's bad share).
    * spare_core (``restarts_fix=True``): a node's clock runs on through a restart, and a lemon
      failing during one is repaired (fixed with probability q) though the job does not see it.
      Per unit of compute time a restart of ``R`` follows each of the ``Lambda = lambda0 (n + (m - 1) L)``
      failures, so ``dL/dt = -a L (beta + c L)`` with ``beta = 1 + lambda0 n R`` and
      ``c = (m - 1) lambda0 R``; then ``L(t) = beta L0 e^{-a beta t} / (beta + c L0 (1 - e^{-a beta t}))``
      and ``integral L dt = ln((beta + c L0) / (beta + c L(T0))) / (a c)``, k = round(share n)
      lemon slots. Waits for a node (a dry pool) fix more lemons unseen still; this leaves them out.

    ``q`` replaces the fix probability AIReSim's repair stages give (:func:`clock_fix`).
    """
    n = p["job_size"]
    lam0 = p["random_failure_rate"]
    m = 1 + p["systematic_failure_rate_multiplier"]
    qa = p["prob_auto_to_manual"]
    if q is None:
        q = (1 - qa) * (1 - p["auto_repair_fail_prob"]) + qa * (1 - p["manual_repair_fail_prob"])
    t0, a = p["job_length"], q * m * lam0
    if not restarts_fix:
        pool = p["working_pool_size"] + p["spare_pool_size"]
        k = n * int(pool * p["systematic_failure_fraction"]) / pool
        return k * (m - 1) / (q * m) * -math.expm1(-a * t0)
    k = round(p["systematic_failure_fraction"] * n)
    r = p["recovery_time"]
    beta, c = 1 + lam0 * n * r, (m - 1) * lam0 * r
    e = math.exp(-a * beta * t0)
    lt = beta * k * e / (beta + c * k * (1 - e))
    return (m - 1) * lam0 * math.log((beta + c * k) / (beta + c * lt)) / (a * c)


def clock_fix(p: dict) -> float:
    """The ``fleet.lemon_fix`` with which spare_core's lemons, fixed on its wall clock (restarts
    included), add as many failures as AIReSim's bad servers on its compute clock: the root of
    ``lemon_extra(p, True, q) = lemon_extra(p, False)`` by bisection (the count falls as q rises).
    A derived value, not a fit to AIReSim's runs; it moves only the lemons' count, so what is left
    of a difference is the rest (host selections, preemptions, the pool's rules)."""
    target = lemon_extra(p, False)
    lo, hi = 1e-9, 1.0
    if lemon_extra(p, True, hi) >= target:
        return hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if lemon_extra(p, True, mid) > target else (lo, mid)
    return 0.5 * (lo + hi)


def z(a: tuple, b: tuple) -> float:
    """(a - b) in standard errors of the difference, from two (mean, se) pairs."""
    s = math.hypot(a[1], b[1])
    return (a[0] - b[0]) / s if s > 0 else float("nan")


def summarise(sweep: Sweep, ours: dict, theirs: dict | None) -> list[dict]:
    """One row per point: both simulators' means ± SE, their difference, and the parts."""
    rows = []
    for label, p in sweep.points():
        k = point_key(p)
        row = dict(point=label, ordinary=ordinary_failures(p))
        for rule in [v for v in VARIANTS if v in ours[k]]:
            v = ours[k][rule]
            row[rule] = {m: mean_se(v[m]) for m in ("hours", "failures", "compute_h", "restart_h", "wait_h", "lost_h")}
            row[rule]["finished"] = v["finished"]
        row["lemons_expected"] = dict(airesim=lemon_extra(p, False), spare_core=lemon_extra(p, True))
        if theirs is not None:
            parts = [airesim_parts(r) for r in theirs[k]]
            row["airesim"] = {m: mean_se([q[m] for q in parts]) for m in parts[0]}
            for rule in [v for v in VARIANTS if v in ours[k]]:
                row[rule]["diff_h"] = row["airesim"]["hours"][0] - row[rule]["hours"][0]
                row[rule]["diff_se"] = z(row["airesim"]["hours"], row[rule]["hours"])
        rows.append(row)
    return rows


def account(row: dict, p: dict) -> dict:
    """The difference of the totals computed from its parts: the lemons' closed forms' difference
    of failures times a recovery, plus AIReSim's host selections, preemptions and stalls, less
    spare_core's waits and lost steps (both measured), and what is left of the measured difference,
    in its standard errors."""
    a, o, lem = row["airesim"], row["one"], row["lemons_expected"]
    recovery_h = p["recovery_time"] / 60
    pred = ((lem["airesim"] - lem["spare_core"]) * recovery_h + a["host_selection"][0] + a["preemption"][0]
            + a["stall"][0] - o["wait_h"][0] - o["lost_h"][0])
    return dict(predicted_h=pred, residual_h=o["diff_h"] - pred,
                residual_se=(o["diff_h"] - pred) / math.hypot(a["hours"][1], o["hours"][1]))


def print_sweep(sweep: Sweep, rows: list[dict]) -> None:
    """The sweep's markdown tables (docs/results.md section 16's layout)."""
    print(f"\n### {sweep.name}: {sweep.param} ({sweep.source})\n")
    print("| point | AIReSim h | spare_core h | AIReSim − spare_core | failures AIReSim / spare_core "
          "| lemons' extra, closed form: AIReSim / spare_core | AIReSim's host sel. + preempt. + stalls h "
          "| spare_core's waits + lost h | difference computed | left over |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r, (_, p) in zip(rows, sweep.points()):
        o, a, lem = r["one"], r.get("airesim"), r["lemons_expected"]
        head = (f"| {r['point']} | " + (f"{a['hours'][0]:,.1f} ± {a['hours'][1]:.1f}" if a else "—")
                + f" | {o['hours'][0]:,.1f} ± {o['hours'][1]:.1f} | ")
        tail = (f" | {lem['airesim']:.0f} / {lem['spare_core']:.0f} over {r['ordinary']:,.0f} ordinary | ")
        if a:
            acc = r["account"] = account(r, p)
            print(head + f"{o['diff_h']:+,.1f} h ({o['diff_se']:+.1f} SE) | {a['failures'][0]:,.0f} ± "
                  f"{a['failures'][1]:.0f} / {o['failures'][0]:,.0f} ± {o['failures'][1]:.0f}" + tail
                  + f"{a['host_selection'][0]:.1f} + {a['preemption'][0]:.1f} + {a['stall'][0]:.1f} "
                  f"| {o['wait_h'][0]:.1f} + {o['lost_h'][0]:.1f} | {acc['predicted_h']:+,.1f} h "
                  f"| {acc['residual_h']:+,.1f} h ({acc['residual_se']:+.1f} SE) |")
        else:
            print(head + f"| — / {o['failures'][0]:,.0f} ± {o['failures'][1]:.0f}" + tail
                  + f"| {o['wait_h'][0]:.1f} + {o['lost_h'][0]:.1f} | | |")
    print("\nspare_core's other runs: `fleet.restart_when = \"job+standbys\"`; and the lemons' repairs "
          "made rarer (lemon_fix from clock_fix) so they add AIReSim's count:\n")
    print("| point | \"job+standbys\" h | AIReSim − this | its waits h | lemon_fix | lemons on AIReSim's count h "
          "| AIReSim − this | its failures |")
    print("|---|---|---|---|---|---|---|---|")
    for r, (_, p) in zip(rows, sweep.points()):
        cells = []
        for v in ("job+standbys", "clock"):
            j = r.get(v)
            if j is None:
                cells.append("| — | | " + ("" if v == "clock" else "| "))
                continue
            d = f"{j['diff_h']:+,.1f} h ({j['diff_se']:+.1f} SE)" if "diff_h" in j else ""
            extra = f"{j['wait_h'][0]:.1f}" if v != "clock" else f"{j['failures'][0]:,.0f} ± {j['failures'][1]:.0f}"
            cells.append(f"{j['hours'][0]:,.1f} ± {j['hours'][1]:.1f} | {d} | {extra}")
        print(f"| {r['point']} | {cells[0]} | {clock_fix(p):.3f} | {cells[1]} |")


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweeps", nargs="+", default=[s.name for s in SWEEPS], choices=[s.name for s in SWEEPS])
    ap.add_argument("--seeds", type=int, default=8, help="AIReSim's seeds at Table I's scale (8-30 s a run)")
    ap.add_argument("--stress-seeds", type=int, default=20,
                    help="AIReSim's seeds of the 7-day stress points (1-4 s a run)")
    ap.add_argument("--spare-seeds", type=int, default=32, help="spare_core's seeds at every point")
    ap.add_argument("--airesim", type=Path, default=None, help="path of an AIReSim checkout")
    ap.add_argument("--airesim-python", type=Path, default=None,
                    help="the Python that runs AIReSim (default: PATH/.venv/bin/python)")
    ap.add_argument("--json", type=Path, default=None, help="write every number printed, per seed")
    ap.add_argument("--reuse-airesim", type=Path, default=None,
                    help="take AIReSim's runs from a --json file of an earlier run of the same points and "
                         "seeds (spare_core runs again)")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="print the tables again from a --json file's per-seed numbers (no run)")
    a = ap.parse_args(argv)
    sweeps = [s for s in SWEEPS if s.name in a.sweeps]
    if a.from_json is not None:
        doc = json.loads(a.from_json.read_text())
        return report(doc, [s for s in sweeps if all(point_key(p) in doc["spare_core"] for _, p in s.points())])
    points = {}                                   # key -> (label, params, stress)
    for s in sweeps:
        for label, p in s.points():
            points.setdefault(point_key(p), (label, p, s.stress))
    t = time.perf_counter()
    ours = {k: {v: run_spare_core_point(p, range(a.spare_seeds), v) for v in VARIANTS}
            for k, (_, p, _) in points.items()}
    doc = dict(args={k: str(v) for k, v in vars(a).items()}, spare_core_s=time.perf_counter() - t,
               spare_core=ours, airesim=None, sweeps={})
    theirs = None
    if a.reuse_airesim is not None:
        old = json.loads(a.reuse_airesim.read_text())
        theirs = {k: old["airesim"][k] for k in points}
        doc.update(airesim=theirs, airesim_s=old["airesim_s"], args=dict(doc["args"], seeds=old["args"]["seeds"],
                                                                            stress_seeds=old["args"]["stress_seeds"]))
    elif a.airesim is None:
        print("AIReSim not run (give --airesim PATH of a checkout, and --airesim-python, to run it too)")
    else:
        theirs = {}
        t = time.perf_counter()
        for stress, n in ((False, a.seeds), (True, a.stress_seeds)):
            todo = [(k, p) for k, (_, p, st) in points.items() if st == stress]
            if todo:
                out = run_airesim_points(a.airesim, todo, range(n), a.airesim_python)
                for k, _ in todo:
                    theirs[k] = [r for r in out if r["point"] == k]
        doc["airesim"], doc["airesim_s"] = theirs, time.perf_counter() - t
    report(doc, sweeps)
    if a.json:
        a.json.write_text(json.dumps(doc, indent=1, default=float))
    return doc


def report(doc: dict, sweeps) -> dict:
    """Print every sweep's tables from ``doc``'s per-seed numbers, their rows added to ``doc``."""
    args, ours, theirs = doc["args"], doc["spare_core"], doc["airesim"]
    print(f"spare_core: seeds 0..{int(args['spare_seeds']) - 1}; AIReSim: seeds 0..{int(args['seeds']) - 1} "
          f"(Table I's scale), 0..{int(args['stress_seeds']) - 1} (stress); mean ± standard error; hours")
    doc.setdefault("sweeps", {})
    for s in sweeps:
        rows = summarise(s, ours, theirs)
        print_sweep(s, rows)
        doc["sweeps"][s.name] = rows
    print(f"\nspare_core {doc['spare_core_s']:.0f} s" + (f", AIReSim {doc['airesim_s']:.0f} s" if theirs else ""))
    return doc


if __name__ == "__main__":
    main()
