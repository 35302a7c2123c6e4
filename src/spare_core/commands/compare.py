"""``spare compare``: CKPT-only, Rep+CKPT and SPARe+CKPT on the SPARe paper's 600k-GPU preset.

For each N, every policy is simulated at r = 1..R on several seeds (common random numbers:
the policies see the same failures), the best r per policy is the one with the least mean
TTT/T0, and the table reports it with its spread over seeds, the availability, the
overhead (stack layers per step) and the reduction in TTT against the best Rep+CKPT.
"""
from __future__ import annotations

import json
import math
import os
import time

from . import positive_int
from ..sim import Scenario, closed_form_redundancy, sweep

HELP = "compare CKPT-only, Rep+CKPT and SPARe+CKPT on the SPARe paper's 600k-GPU preset"

_LABELS = {"ckpt": "CKPT-only", "rep": "Rep+CKPT", "rep-disjoint": "Rep+CKPT", "spare": "SPARe+CKPT"}


def add_arguments(parser) -> None:
    """Options of ``spare compare``."""
    parser.add_argument("--groups", type=positive_int, nargs="+", default=[200, 600, 1000], metavar="N",
                        help="numbers of data-parallel groups (default: 200 600 1000)")
    parser.add_argument("--r-max", type=positive_int, default=20, help="largest redundancy tried (default 20)")
    parser.add_argument("--seeds", type=positive_int, default=5, help="seeds per cell, 0..S-1 (default 5)")
    parser.add_argument("--processes", type=int, default=0,
                        help="worker processes (default 0: one per CPU)")
    parser.add_argument("--failure-model", choices=("per-unit", "system"), default="per-unit",
                        help="per-group Weibull lifetimes (default) or one system renewal process")
    parser.add_argument("--rep-variant", choices=("cyclic", "disjoint"), default="cyclic",
                        help="Rep+CKPT on SPARe's cyclic stacks (default) or N/r disjoint replica sets")
    parser.add_argument("--horizon", type=float, default=20.0,
                        help="stop a run at this many T0 and report it unfinished (default 20)")
    parser.add_argument("--steps", type=positive_int, default=None, help="training steps (default: the preset's 10,000)")
    parser.add_argument("--layout", choices=("consecutive", "sidon"), default="consecutive",
                        help="SPARe's stack offsets: the paper's consecutive cyclic stacks (default) or Sidon-type")
    parser.add_argument("--no-patch-cost", action="store_true",
                        help="do not charge SPARe's patch work (extra layers) on failure steps")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the results as JSON")


def _fmt_ratio(s) -> str:
    if s is None:
        return "never finished"
    return f"{s.ratio_mean:6.3f} ± {s.ratio_std:5.3f} [{s.ratio_min:.3f}-{s.ratio_max:.3f}]"


def run(args) -> int:
    """Run the sweep, print the table, optionally write JSON; return the exit status."""
    if args.horizon <= 1 or not math.isfinite(args.horizon):
        raise SystemExit(f"spare compare: error: --horizon must be a finite number > 1, got {args.horizon}")
    if args.processes < 0:
        raise SystemExit(f"spare compare: error: --processes must be >= 0, got {args.processes}")
    over = dict(failure_model=args.failure_model, max_wall_factor=args.horizon,
                charge_patch=not args.no_patch_cost)
    if args.steps is not None:
        over["n_steps"] = args.steps
    scenarios = [Scenario.paper_600k(n, **over) for n in args.groups]
    rep = "rep" if args.rep_variant == "cyclic" else "rep-disjoint"
    policies = ("ckpt", rep, "spare")
    procs = args.processes or min(os.cpu_count() or 1, len(scenarios) * args.seeds)
    t = time.perf_counter()
    kw = {"spare": {"offsets": "sidon"}} if args.layout == "sidon" else None
    res = sweep(scenarios, policies, range(1, args.r_max + 1), range(args.seeds), processes=procs, policy_kwargs=kw)
    elapsed = time.perf_counter() - t

    sc0 = scenarios[0]
    print(f"spare compare: SPARe paper preset (600k GPUs), {sc0.n_steps} steps, {sc0.t_compute:g} s per stack layer, "
          f"restart {sc0.restart_time:g} s, save {sc0.checkpoint_time:g} s, jitter ±{100 * sc0.jitter:g} %")
    print(f"failure model: {sc0.failure_description}; Rep+CKPT variant: {args.rep_variant}; SPARe layout: {args.layout}; "
          f"patch work {'charged' if sc0.charge_patch else 'not charged'}; "
          f"r = 1..{args.r_max}, seeds 0..{args.seeds - 1}, horizon {args.horizon:g} T0")
    print(f"TTT/T0: mean ± std [min-max] over seeds at the best r (least mean TTT); checkpoint interval: availability-optimal "
          f"T_c*, or every step where T_c* is meaningless")
    print()
    header = f"{'N':>5}  {'policy':<11} {'best r':>6} {'TTT/T0':<34} {'avail':>6} {'overhead':>8} {'masked':>8} {'wipe-outs':>9}  vs Rep+CKPT"
    print(header)
    print("-" * len(header))
    best_json = {}
    for sc in scenarios:
        n = sc.n_groups
        rep_best = res.best(n, "Rep+CKPT")
        best_json[str(n)] = {}
        for name in policies:
            label = _LABELS[name]
            b = res.best(n, label)
            if b is None:
                cells = [s for s in res.summaries if s.n_groups == n and s.policy == label]
                top = max(cells, key=lambda s: s.progress)
                line = (f"{n:>5}  {label:<11} {'-':>6} {'> %g (%.1f %% done at r=%d)' % (args.horizon, 100 * top.progress, top.redundancy):<34} "
                        f"{top.availability:6.3f} {top.overhead:8.2f} {top.failures_masked:8.0f} {top.wipeouts:9.1f}  -")
                best_json[str(n)][label] = None
            else:
                if rep_best is not None and label != "Rep+CKPT":
                    red = f"{-100 * (1 - b.ratio_mean / rep_best.ratio_mean):+.1f} % TTT"
                else:
                    red = "-"
                rshow = str(b.redundancy) if name != "ckpt" else "-"
                line = (f"{n:>5}  {label:<11} {rshow:>6} {_fmt_ratio(b):<34} {b.availability:6.3f} {b.overhead:8.2f} "
                        f"{b.failures_masked:8.0f} {b.wipeouts:9.1f}  {red}")
                best_json[str(n)][label] = b.to_dict()
            print(line)
        print(f"{'':>5}  closed-form r* = floor(log2 N + 0.833) = {closed_form_redundancy(n)}")
    print()
    print(f"{len(res.runs)} runs in {elapsed:.1f} s on {procs} process(es)")
    if args.json:
        doc = {
            "command": "spare compare",
            "preset": "paper_600k",
            "failure_model": sc0.failure_description,
            "rep_variant": args.rep_variant,
            "spare_layout": args.layout,
            "charge_patch": sc0.charge_patch,
            "horizon_t0": args.horizon,
            "n_steps": sc0.n_steps,
            "seeds": list(range(args.seeds)),
            "redundancies": list(range(1, args.r_max + 1)),
            "cells": [s.to_dict() for s in res.summaries],
            "best": best_json,
            "runs": [
                {k: v for k, v in r.to_dict().items() if k in (
                    "policy", "redundancy", "scenario", "seed", "finished", "ratio", "availability", "overhead",
                    "failures_seen", "failures_masked", "wipeouts", "restarts", "checkpoints", "progress",
                    "checkpoint_interval")}
                for r in res.runs
            ],
            "elapsed_seconds": elapsed,
        }
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
        print(f"wrote {args.json}")
    return 0
