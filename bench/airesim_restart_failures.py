"""How many node failures fall in restarts on examples/airesim_table1.toml (docs/results.md
section 15, *Failures during restarts*).

spare_core's node log runs on the wall clock: a node failing while the job restarts is
replaced (and a lemon's repair may fix it) without costing the job, where AIReSim's failure
clock runs only while the job computes. This script counts those failures on the file's
checkpoint-only runs: for one seed it runs the job, rebuilds the run's node log (the same
seed's ``failures`` stream), and walks the log as the job saw it: the first failure at or after
each resume stops the job, which resumes ``costs.restart`` later (the file's pool never makes a
failure wait: a run with a wait is refused, the walk would not be exact). It checks that the
walk finds the run's own count of failures and restart time, then counts the log's failures
inside the stops, the lemons' among them, and the lemon fixes they brought, next to what a
Poisson count at the log's own rate would give (each stop's length times the rate of the nodes
as they are then: ``n`` normal-node rates plus ``m - 1`` per lemon not yet fixed).

With ``--place`` it also runs the no-lost-work job with the lemons on AIReSim's fleet
(``[fleet] place``): the 4,360 servers of the job, its standbys and its pools, ``round(0.15 x
4360) = 654`` of them bad (AIReSim's count), a bad server's fix staying with the server, and a
failed server's slot taking the idle server waiting longest (``any``) or the one with the
fewest failures; the node MTBF scaled so that a normal server still fails 0.01 times a day.

Usage::

    python -m bench.airesim_restart_failures --seeds 8 [--place]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from spare_core._seeding import run_seed
from spare_core.scenario_file import load_scenario_file
from spare_core.sim import simulate

from bench.airesim_table1 import mean_se, variants

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "airesim_table1.toml"


def restart_failures(sc, policy, seed: int) -> dict:
    """The failures of one checkpoint-only run's log, seen and inside its restarts.

    Returns a dict: ``seen`` (the job's failures, = the run's ``failures_seen``), ``in_restart``
    (the log's failures inside the stops), ``expected_in_restart`` (the Poisson count at the
    log's rate then), ``lemon_seen``, ``lemon_in_restart`` and ``fixed_in_restart`` (lemon
    failures whose repair fixed the lemon), and the run's ``wall_h``.
    """
    r = simulate(sc, policy, seed=seed)
    if r.wait_time != 0 or not r.finished:
        raise ValueError(f"seed {seed}: the run waited {r.wait_time:g} s for a spare (or did not finish): the walk "
                         "below assumes every restart lasts costs.restart exactly")
    fm = sc.failures
    if fm.nodes_in_group() != 1:
        raise ValueError("the walk reads the log's groups as nodes: one node a group")
    log = fm.log(sc.n_groups, run_seed(seed, "failures"))
    while log.horizon < r.wall_time:
        log.extend()
    t = np.asarray(log.times)
    slot = np.asarray(log.groups)
    keep = t < r.wall_time
    t, slot = t[keep], slot[keep]
    R = sc.restart_time
    seen, stop_end = [], []
    resume = 0.0
    while True:
        j = int(np.searchsorted(t, resume, side="left"))
        if j >= t.shape[0]:
            break
        seen.append(j)
        resume = float(t[j]) + R
        stop_end.append(resume)
    seen = np.asarray(seen)
    if seen.shape[0] != r.failures_seen or not math.isclose(seen.shape[0] * R, r.restart_time, rel_tol=1e-9):
        raise AssertionError(f"seed {seed}: the walk found {seen.shape[0]} stops, the run {r.failures_seen}")
    ends = np.searchsorted(t, np.asarray(stop_end), side="left")
    inside = np.zeros(t.shape[0], dtype=bool)
    for j, e in zip(seen.tolist(), ends.tolist()):  # one slice a stop (about 11,000 stops)
        inside[j + 1 : e] = True
    who = slot if log.nodes is None else log.failed_nodes()[keep]  # with a placement, the node
    lemon_now = np.zeros(t.shape[0], dtype=bool)
    fixed_now = np.zeros(t.shape[0], dtype=bool)
    alive_lemons = np.zeros(seen.shape[0])
    if log.lemon is not None:
        fixed_at = log.fixed_at if log.fixed_at is not None else np.full(log.lemon.shape[0], math.inf)
        lemon0 = log.lemon | np.isfinite(fixed_at)  # a node fixed since was a lemon at the start
        lemon_now = lemon0[who] & (t <= fixed_at[who])
        fixed_now = lemon0[who] & (t == fixed_at[who])
        fix_times = np.sort(fixed_at[lemon0])
        alive_lemons = lemon0.sum() - np.searchsorted(fix_times, t[seen], side="right")
    # the rate then, in failures per second: normal nodes at lambda0 = 1 / (c x the law's mean);
    # with a placement the lemons in the job are not known in closed form: no expectation
    n = sc.n_groups
    m = fm.lemon_rate
    k = int(round(fm.lemon_share * n))
    c = 1.0 - k / n + m * k / n
    lam0 = 1.0 / (c * fm.law(sc.n_groups).mean)
    expected = float(np.sum(lam0 * R * (n + (m - 1.0) * alive_lemons))) if log.nodes is None else math.nan
    return dict(seen=int(seen.shape[0]), in_restart=int(inside.sum()), expected_in_restart=expected,
                lemon_seen=int(lemon_now[seen].sum()), lemon_in_restart=int((lemon_now & inside).sum()),
                fixed_in_restart=int((fixed_now & inside).sum()), wall_h=r.wall_time / 3600)


def placed(sc, rule: str):
    """The no-lost-work job on AIReSim's whole fleet with a placement (module docstring)."""
    from bench.airesim_table1 import AIRESIM_TABLE1 as A

    nl = variants(sc)[1][1]
    fm = nl.failures
    idle = nl.repair.spares + nl.repair.standbys
    total = nl.n_groups + idle
    assert total == A["working_pool_size"] + A["spare_pool_size"]
    n, m = nl.n_groups, fm.lemon_rate
    c_slot = 1.0 - round(fm.lemon_share * n) / n + m * round(fm.lemon_share * n) / n
    k = round(fm.lemon_share * total)
    c_fleet = 1.0 - k / total + m * k / total
    # the same normal-node rate: the law's mean times c_slot / c_fleet
    fm = fm.replace(system_mtbf=fm.system_mtbf * c_slot / c_fleet, place=rule, place_pool=idle)
    return nl.replace(failure_model=fm)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--place", action="store_true", help="also the job on AIReSim's fleet with a placement")
    args = ap.parse_args(argv)
    sc = load_scenario_file(EXAMPLE).scenario
    out = {}
    runs = [(name, s, pol) for name, s, pol in variants(sc)[:2]]  # the two runs with lemons
    if args.place:
        pol = variants(sc)[1][2]
        runs += [(f"no lost work, the fleet's 4,360 servers, place = {r!r}", placed(sc, r), pol)
                 for r in ("any", "fewest_failures")]
    for name, s, pol in runs:
        rows = [restart_failures(s, pol, seed) for seed in range(args.seeds)]
        out[name] = {key: mean_se([row[key] for row in rows]) for key in rows[0]}
        print(f"{name}, {args.seeds} seeds (mean ± standard error):")
        for key, (mu, se) in out[name].items():
            print(f"  {key:>20}: {mu:,.1f} ± {se:,.1f}")
    return out


if __name__ == "__main__":
    main()
