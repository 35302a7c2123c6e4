"""``spare advise FILE.toml``: the recommendation a team acts on.

Runs the file's grid (policies x r x seeds), then reports:

- the policy and r with the least mean TTT/T0, its checkpoint interval and the rule;
- the expected ETTR (effective training time ratio: useful time / wall time, the
  simulator's availability) and time-to-train, each with a 95 % confidence interval over
  seeds;
- the runner-up (the best other policy) and by how much it is slower, with a 95 %
  interval of the paired difference (the two see the same failures on each seed, so the
  difference is measured more tightly than either value);
- how the answer moves when the failure rate is 50 % lower or higher (the whole grid run
  again at each rate).
"""
from __future__ import annotations

import sys
from typing import Any

from . import EXIT_INTERRUPTED
from .filejob import add_file_arguments, check_job_budget, describe_job, load_job, run_job
from .outputs import provenance, run_rows, write_outputs
from .report import fmt_duration, mean_ci
from .run import best_rows, write_plots

HELP = "recommend a policy, r and checkpoint interval for a scenario file, with confidence intervals and sensitivity"

#: failure-rate multipliers of the sensitivity check
RATE_FACTORS = (0.5, 1.5)


def add_arguments(parser: Any) -> None:
    """Options of ``spare advise``."""
    add_file_arguments(parser)
    parser.add_argument("--no-sensitivity", action="store_true",
                        help="skip the failure rate ±50 %% runs (they cost two more grids)")


def _advice(res: Any, sf: Any) -> dict[str, Any] | None:
    """The best cell, its interval, ETTR and TTT with CIs, and the runner-up (the ranking is
    :meth:`ResultSet.ranking`: with a policy without redundancy compared, the others are
    ranked at r >= 2, where they are an alternative to it)."""
    ranked = res.ranking()
    if not ranked:
        return None
    best = ranked[0]
    runs = res.cell_runs(best)
    t0 = sf.scenario.t0
    every, rule = res.cell_interval(best)
    out: dict[str, Any] = {
        "policy": best.policy,
        "redundancy": best.redundancy,
        "uses_redundancy": res.redundant.get(best.policy, True),
        "checkpoint_interval": every,
        "interval_rule": rule,
        "ratio": mean_ci([r.ratio for r in runs]),
        "ettr": mean_ci([r.availability for r in runs]),
        "ttt_days": mean_ci([r.ratio * t0 / 86400 for r in runs]),
        "seeds": len(runs),
        "runner_up": None,
    }
    if len(ranked) > 1:
        second = ranked[1]
        other = {r.seed: r for r in res.cell_runs(second)}
        diffs = [100 * (other[r.seed].ratio / r.ratio - 1) for r in runs if r.seed in other]
        out["runner_up"] = {"policy": second.policy, "redundancy": second.redundancy,
                            "uses_redundancy": res.redundant.get(second.policy, True),
                            "ratio": second.ratio_mean, "slower_percent": mean_ci(diffs)}
    return out


def run(args: Any) -> int:
    """Run the grid (and the sensitivity grids), print the advice, write the outputs."""
    sf = load_job(args)
    check_job_budget(sf, args, () if args.no_sensitivity else tuple(RATE_FACTORS))
    grids = {1.0: run_job(sf, desc="spare advise")}
    if not args.no_sensitivity and not grids[1.0].interrupted:
        for f in RATE_FACTORS:
            sc = sf.at_rate(f)
            grids[f] = run_job(sf, sc, desc=f"failure rate x{f:g}")
            if grids[f].interrupted:
                break
    main = grids[1.0]
    interrupted = any(g.interrupted for g in grids.values())
    advice = _advice(main, sf) if main.summaries else None
    sens = {}
    for f, g in grids.items():
        if f == 1.0 or g.interrupted or not g.summaries:
            continue
        sc = sf.at_rate(f)
        ranked = g.ranking()
        sens[f] = None if not ranked else {
            "policy": ranked[0].policy, "redundancy": ranked[0].redundancy,
            "uses_redundancy": g.redundant.get(ranked[0].policy, True),
            "ratio": ranked[0].ratio_mean, "checkpoint_interval": g.cell_interval(ranked[0])[0],
            "system_mtbf": sc.system_mtbf,
        }
    prov = provenance("spare advise", getattr(args, "argv", None), scenario=sf.to_dict(), seeds=sf.seeds,
                      timings={"elapsed_seconds": sum(g.elapsed for g in grids.values()),
                               "processes": main.workers, "tasks": main.task_seconds},
                      interrupted=interrupted)
    doc = {
        "command": "spare advise",
        "provenance": prov,
        "advice": advice,
        "sensitivity": {f"rate_x{f:g}": v for f, v in sens.items()},
        "cells": [s.to_dict() for s in main.summaries],
        "runs": [r.to_dict() for r in main.runs],
    }
    table = run_rows(main.runs, {sf.scenario.name: sf.scenario.n_groups})
    if interrupted:
        written = write_outputs(args, doc, table, prov)
        where = f"; wrote {', '.join(written)}" if written else ""
        print(f"spare advise: interrupted, {len(main.runs)} runs of the main grid finished{where}",
              file=sys.stderr)
        return EXIT_INTERRUPTED

    for line in describe_job(sf):
        print(line)
    print()
    if advice is None:
        print(f"no policy finishes on every seed within {sf.scenario.max_wall_factor:g} T0: nothing to recommend; "
              "raise compare.horizon, try larger r or another policy")
    else:
        a = advice
        r_txt = f" at r = {a['redundancy']}" if a["uses_redundancy"] else ""
        print(f"recommendation: {a['policy']}{r_txt}, checkpoint every {fmt_duration(a['checkpoint_interval'])} "
              f"of compute ({a['interval_rule']})")
        m, lo, hi = a["ttt_days"]
        print(f"  expected time-to-train {m:.2f} d [{lo:.2f}, {hi:.2f}] (95 % CI over {a['seeds']} seeds), "
              f"TTT/T0 {a['ratio'][0]:.3f} [{a['ratio'][1]:.3f}, {a['ratio'][2]:.3f}]; failure-free "
              f"{fmt_duration(sf.scenario.t0)}")
        m, lo, hi = a["ettr"]
        print(f"  expected ETTR (useful / wall time) {m:.3f} [{lo:.3f}, {hi:.3f}]")
        ru = a["runner_up"]
        if ru is None:
            print("  runner-up: none (one policy compared, or no other finished on every seed)")
        else:
            m, lo, hi = ru["slower_percent"]
            rr = f" r = {ru['redundancy']}" if ru["uses_redundancy"] else ""
            sure = "the gap is clear of 0" if lo > 0 else "the gap is within the seed noise: run more seeds"
            print(f"  runner-up: {ru['policy']}{rr}, TTT {m:+.1f} % [{lo:+.1f}, {hi:+.1f}] (paired over seeds; {sure})")
        for f, v in sens.items():
            tag = f"failure rate x{f:g} (system MTBF {fmt_duration(sf.scenario.system_mtbf / f)})"
            if v is None:
                print(f"  {tag}: no policy finishes on every seed")
                continue
            same = v["policy"] == a["policy"] and v["redundancy"] == a["redundancy"]
            rr = f" r = {v['redundancy']}" if v["uses_redundancy"] else ""
            verdict = "same choice" if same else "the choice changes"
            print(f"  {tag}: {v['policy']}{rr}, TTT/T0 {v['ratio']:.3f}, checkpoint every "
                  f"{fmt_duration(v['checkpoint_interval'])} — {verdict}")
        if not sens and not args.no_sensitivity:
            print("  sensitivity: not run")
    elapsed = sum(g.elapsed for g in grids.values())
    n_runs = sum(len(g.runs) for g in grids.values())
    print()
    print(f"{n_runs} runs in {elapsed:.1f} s on {main.workers} process(es)")
    for path in write_outputs(args, doc, table, prov):
        print(f"wrote {path}")
    if args.plot:
        write_plots(args.plot, sf, main, best_rows(main))
    return 0
