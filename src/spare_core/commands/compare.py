"""``spare compare``: CKPT-only, Rep+CKPT and SPARe+CKPT on the SPARe paper's 600k-GPU preset.

For each N, every policy is simulated at r = 1..R on several seeds (common random numbers:
the policies see the same failures), the best r per policy is the one with the least mean
TTT/T0, and the table reports it with its spread over seeds, the availability, the
overhead (stack layers per step), the checkpoint interval (and, under each N, the rule that
chose it) and the reduction in TTT against the best Rep+CKPT. ``--json``/``--csv``/``--parquet``
carry provenance; ``--plot DIR`` draws TTT/T0 and availability against r.
"""
from __future__ import annotations

import math
import sys

from . import EXIT_INTERRUPTED, UsageError, distinct, horizon_float, positive_int, process_count, seed_count
from .outputs import add_output_arguments, check_outputs, provenance, run_record, run_rows, write_outputs
from .budget import check_budget, check_grid
from .progress import run_study
from .text import fmt_duration, fmt_ratio
from ..sim import Scenario, Study, closed_form_redundancy, registered_policy

HELP = "compare CKPT-only, Rep+CKPT and SPARe+CKPT on the SPARe paper's 600k-GPU preset"



def add_arguments(parser) -> None:
    """Options of ``spare compare``."""
    parser.add_argument("--groups", type=positive_int, nargs="+", default=[200, 600, 1000], metavar="N",
                        help="numbers of data-parallel groups (default: 200 600 1000)")
    parser.add_argument("--r-max", type=positive_int, default=20, help="largest redundancy tried (default 20)")
    parser.add_argument("--seeds", type=seed_count, default=5, help="seeds per cell, 0..S-1 (default 5)")
    parser.add_argument("--processes", type=process_count, default=0,
                        help="worker processes (default 0: one per CPU)")
    parser.add_argument("--failure-model", choices=("per-unit", "system", "node"), default="per-unit",
                        help="per-group Weibull lifetimes redrawn at restarts (default, the paper's), one system "
                             "renewal process, or node renewals (8-GPU nodes, only the failed node replaced)")
    parser.add_argument("--rep-variant", choices=("cyclic", "disjoint"), default="cyclic",
                        help="Rep+CKPT on SPARe's cyclic stacks (default) or N/r disjoint replica sets")
    parser.add_argument("--horizon", type=horizon_float, default=20.0,
                        help="stop a run at this many T0 and report it unfinished (default 20)")
    parser.add_argument("--steps", type=positive_int, default=None, help="training steps (default: the preset's 10,000)")
    parser.add_argument("--layout", choices=("consecutive", "sidon"), default="consecutive",
                        help="SPARe's stack offsets: the paper's consecutive cyclic stacks (default) or Sidon-type")
    parser.add_argument("--force", action="store_true", help="run even when the expected work is beyond the budget (docs/cli.md, Budget)")
    parser.add_argument("--no-patch-cost", action="store_true",
                        help="do not charge SPARe's patch work (extra layers) on failure steps")
    add_output_arguments(parser)


def run(args) -> int:
    """Run the sweep, print the table, write the outputs asked for; return the exit status."""
    if args.horizon <= 1 or not math.isfinite(args.horizon):
        raise UsageError(f"--horizon must be a finite number > 1, got {args.horizon}")
    if args.processes < 0:
        raise UsageError(f"--processes must be >= 0, got {args.processes}")
    distinct(args.groups, "--groups")
    check_outputs(args)
    over = dict(failure_model=args.failure_model, max_wall_factor=args.horizon,
                charge_patch=not args.no_patch_cost)
    if args.steps is not None:
        over["n_steps"] = args.steps
    scenarios = []
    for n in args.groups:
        try:
            scenarios.append(Scenario.paper_600k(n, **over))
        except (TypeError, ValueError) as exc:  # a count the parser takes but the preset cannot (2**31 - 1)
            raise UsageError(f"--groups {n}: {exc}") from None
    rep = "rep" if args.rep_variant == "cyclic" else "rep-disjoint"
    policies = ("ckpt", rep, "spare")
    kw = {"spare": {"offsets": "sidon"}} if args.layout == "sidon" else None
    # an r above every scenario's group count builds no policy: the range stops there
    check_grid(scenarios, policies, range(1, min(args.r_max, max(args.groups)) + 1), args.seeds, args.force, "")
    study = Study(scenarios, policies, range(1, min(args.r_max, max(args.groups)) + 1), seeds=range(args.seeds),
                  policy_options=kw, name="spare compare", streams="seed")
    check_budget(study, args.force, "")
    res = run_study(study, workers=args.processes, desc="spare compare")
    elapsed, procs = res.elapsed, res.workers
    rep_label = registered_policy(rep).label

    sc0 = scenarios[0]
    best_json = {}
    lines = []
    for sc in scenarios:
        n = sc.n_groups
        if not any(s.n_groups == n for s in res.summaries):
            continue
        rep_best = res.best(n, rep_label)
        best_json[str(n)] = {}
        rules = []
        for name in policies:
            entry = registered_policy(name)
            label = entry.label
            b = res.best(n, label)
            if b is None:
                cells = [s for s in res.summaries if s.n_groups == n and s.policy == label]
                top = max(cells, key=lambda s: s.progress)
                every, rule = res.cell_interval(top)
                line = (f"{n:>5}  {label:<11} {'-':>6} {'> %g (%.1f %% done at r=%d)' % (args.horizon, 100 * top.progress, top.redundancy):<34} "
                        f"{top.availability:6.3f} {top.overhead:8.2f} {top.failures_masked:8.0f} {top.wipeouts:9.1f}  "
                        f"{fmt_duration(every):>10}  -")
                best_json[str(n)][label] = None
            else:
                if rep_best is not None and label != rep_label:
                    red = f"{-100 * (1 - b.ratio_mean / rep_best.ratio_mean):+.1f} % TTT"
                else:
                    red = "-"
                rshow = str(b.redundancy) if entry.uses_redundancy else "-"
                every, rule = res.cell_interval(b)
                line = (f"{n:>5}  {label:<11} {rshow:>6} {fmt_ratio(b):<34} {b.availability:6.3f} {b.overhead:8.2f} "
                        f"{b.failures_masked:8.0f} {b.wipeouts:9.1f}  {fmt_duration(every):>10}  {red}")
                best_json[str(n)][label] = b.to_dict()
            rules.append(f"{label}: {rule.split(' (')[0].split(',')[0]}")
            lines.append(line)
        lines.append(f"{'':>5}  checkpoint rule: " + "; ".join(rules))
        lines.append(f"{'':>5}  closed-form r* = floor(log2 N + 0.833) = {closed_form_redundancy(n)}")

    prov = provenance("spare compare", getattr(args, "argv", None),
                      scenario={"preset": "paper_600k", "groups": list(args.groups),
                                "scenarios": [sc.to_dict() for sc in scenarios],
                                "policies": list(policies), "policy_kwargs": kw or {},
                                "redundancies": list(range(1, args.r_max + 1))},
                      seeds=list(range(args.seeds)),
                      timings={"elapsed_seconds": elapsed, "processes": procs, "tasks": res.task_seconds},
                      interrupted=res.interrupted)
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
        "runs": [run_record(r) for r in res.runs],  # every declared column (spare_core._results.columns)
        "elapsed_seconds": elapsed,
        "provenance": prov,
    }
    rows = run_rows(res.runs, {sc.name: sc.n_groups for sc in scenarios})
    if res.interrupted:
        written = write_outputs(args, doc, rows, prov)
        where = f"; wrote {', '.join(written)}" if written else ""
        print(f"spare compare: interrupted after {res.groups_done}/{res.groups_total} (N, seed) tasks, "
              f"{len(res.runs)} runs finished{where}", file=sys.stderr)
        return EXIT_INTERRUPTED

    print(f"spare compare: SPARe paper preset (600k GPUs), {sc0.n_steps} steps, {sc0.t_compute:g} s per stack layer, "
          f"restart {sc0.restart_time:g} s, save {sc0.checkpoint_time:g} s, jitter ±{100 * sc0.jitter:g} %")
    print(f"failure model: {sc0.failure_description}; Rep+CKPT variant: {args.rep_variant}; SPARe layout: {args.layout}; "
          f"patch work {'charged' if sc0.charge_patch else 'not charged'}; "
          f"r = 1..{args.r_max}, seeds 0..{args.seeds - 1}, horizon {args.horizon:g} T0")
    print("TTT/T0: mean ± std [min-max] over seeds at the best r (least mean TTT); ckpt every: compute time "
          "between checkpoints at that r (its rule below each N)")
    print()
    header = (f"{'N':>5}  {'policy':<11} {'best r':>6} {'TTT/T0':<34} {'avail':>6} {'overhead':>8} {'masked':>8} "
              f"{'wipe-outs':>9}  {'ckpt every':>10}  vs Rep+CKPT")
    print(header)
    print("-" * len(header))
    for line in lines:
        print(line)
    print()
    print(f"{len(res.runs)} runs in {elapsed:.1f} s on {procs} process(es)")
    for path in write_outputs(args, doc, rows, prov):
        print(f"wrote {path}")
    if args.plot:
        from .plots import plot_vs_r

        for path in plot_vs_r(res, scenarios, args.plot, title="SPARe paper preset (600k GPUs)"):
            print(f"wrote {path}")
    return 0
