"""``spare run FILE.toml``: compare the file's policies on its cluster and job.

Every policy runs at every r of the file on every seed (common random numbers: the
policies see the same failures); for each policy the table gives the best r (least mean
TTT/T0), TTT/T0 with its spread and a 95 % confidence interval over seeds, availability,
overhead, wipe-outs, the checkpoint interval and the rule that chose it.
"""
from __future__ import annotations

import math
import sys
from typing import Any

from . import EXIT_INTERRUPTED
from .filejob import (add_file_arguments, check_job_budget, describe_job, interval_scan, job_studies, load_job, run_job,
                      timeline_run)
from .outputs import provenance, run_record, run_rows, write_outputs
from .._stats import mean_ci
from .text import fmt_ci, fmt_duration, fmt_ratio
from ..sim.results import RATIO_BOUNDS

HELP = "compare the policies of a scenario file (FILE.toml): best r and checkpoint interval per policy"


def add_arguments(parser: Any) -> None:
    """Options of ``spare run``."""
    add_file_arguments(parser)


def best_rows(res: Any) -> list[dict[str, Any]]:
    """Per policy: its best cell (or its furthest-progressing one if none finished), with the
    interval, its rule and a 95 % CI of TTT/T0 over seeds (:meth:`ResultSet.best_per_policy`:
    with a policy without redundancy compared, the others are judged at r >= 2)."""
    rows = []
    for cell, finished in res.best_per_policy():
        every, rule = res.cell_interval(cell)
        m, lo, hi = mean_ci([r.ratio for r in res.cell_runs(cell)], bounds=RATIO_BOUNDS)
        rows.append({"policy": cell.policy, "finished": finished, "summary": cell, "interval": every, "rule": rule,
                     "ratio_ci": (lo, hi)})
    return rows


def run(args: Any) -> int:
    """Run the file's grid, print the table, write the outputs; return the exit status."""
    sf = load_job(args)
    studies = job_studies(sf)
    check_job_budget(sf, args, studies, scan=bool(args.plot))
    res = run_job(sf, studies[1.0], desc="spare run")
    rows = best_rows(res) if res.summaries else []
    prov = provenance("spare run", getattr(args, "argv", None), scenario=sf.to_dict(), seeds=sf.seeds,
                      timings={"elapsed_seconds": res.elapsed, "processes": res.workers,
                               "tasks": res.task_seconds}, interrupted=res.interrupted)
    doc = {
        "command": "spare run",
        "provenance": prov,
        "best": {r["policy"]: {**r["summary"].to_dict(), "finished_all_seeds": r["finished"],
                               "checkpoint_interval": r["interval"], "interval_rule": r["rule"],
                               "ratio_ci95": list(r["ratio_ci"])} for r in rows},
        "cells": [s.to_dict() for s in res.summaries],
        "runs": [run_record(r) for r in res.runs],
    }
    table = run_rows(res.runs, {sf.scenario.name: sf.scenario.n_groups})
    if res.interrupted:
        written = write_outputs(args, doc, table, prov)
        where = f"; wrote {', '.join(written)}" if written else ""
        print(f"spare run: interrupted after {res.groups_done}/{res.groups_total} seeds, {len(res.runs)} runs "
              f"finished{where}", file=sys.stderr)
        return EXIT_INTERRUPTED
    for line in describe_job(sf):
        print(line)
    print("TTT/T0: mean ± std [min-max] over seeds at the best r; CI: 95 % Student-t interval of the mean, cut at "
          "TTT/T0 >= 1; avail: time in kept steps / wall time (redundant layers count as kept; ETTR = 1 / (TTT/T0)); "
          "ckpt every: compute time between checkpoints")
    print()
    header = (f"{'policy':<11} {'best r':>6} {'TTT/T0':<34} {'95 % CI':<15} {'avail':>6} {'overhead':>8} "
              f"{'wipe-outs':>9} {'ckpt every':>10}  rule")
    print(header)
    print("-" * len(header))
    for r in rows:
        s = r["summary"]
        rshow = str(s.redundancy) if res.redundant.get(s.policy, True) else "-"
        if r["finished"]:
            ttt, ci = fmt_ratio(s), fmt_ci((s.ratio_mean, *r["ratio_ci"]))
        else:
            ttt, ci, rshow = f"> {sf.scenario.max_wall_factor:g} ({100 * s.progress:.1f} % done at r={s.redundancy})", "-", "-"
        print(f"{s.policy:<11} {rshow:>6} {ttt:<34} {ci:<15} {s.availability:6.3f} {s.overhead:8.2f} "
              f"{s.wipeouts:9.1f} {fmt_duration(r['interval']):>10}  {r['rule']}")
    print()
    print(f"{len(res.runs)} runs in {res.elapsed:.1f} s on {res.workers} process(es)")
    for path in write_outputs(args, doc, table, prov):
        print(f"wrote {path}")
    if args.plot:
        write_plots(args.plot, sf, res, rows)
    return 0


def write_plots(directory: str, sf: Any, res: Any, rows: list[dict[str, Any]], scan: Any = None,
                chosen: tuple[float, str] | None = None) -> None:
    """TTT/T0 and availability vs r; for the best policy at its best r, ETTR vs the checkpoint
    interval (``scan``, or an interval scan run here; ``chosen``: the advice's interval and
    why, when it moved off the rule's, so that the plot marks what the text says) and a
    failure timeline of one run."""
    from .plots import plot_interval, plot_timeline, plot_vs_r

    for path in plot_vs_r(res, [sf.scenario], directory, title=f"{sf.name}: {sf.gpus:,} GPUs"):
        print(f"wrote {path}")
    done = [r for r in rows if r["finished"]]
    if not done:
        print("no policy finished on every seed: no interval or timeline plot")
        return
    top = min(done, key=lambda r: r["summary"].ratio_mean)["summary"]
    if scan is None or (scan.label, scan.redundancy) != (top.policy, top.redundancy):
        scan, chosen = interval_scan(sf, res.sources[top.policy], top.redundancy), None
    if not scan.result.interrupted:
        pick, why = chosen if chosen is not None else (None, None)
        path = plot_interval(scan, directory=directory, horizon=sf.scenario.max_wall_factor, chosen=pick,
                             chosen_rule=why)
        print(f"wrote {path}")
    # the timeline of a redundancy policy shows masked failures and the stack depth; CKPT-only's
    # (every failure a restart) only when nothing else ran
    redundant = [s for s in res.summaries if s.redundancy > 1 and math.isfinite(s.ratio_mean)]
    shown = min(redundant, key=lambda s: s.ratio_mean) if redundant and top.redundancy == 1 else top
    print(f"wrote {plot_timeline(timeline_run(sf, res.sources[shown.policy], shown.redundancy), directory=directory)}")
