"""Time-to-train under correlated domain failures: consecutive vs Sidon vs rack-aware stacks.

The SPARe paper's 600k-GPU preset (``Scenario.paper_600k(N)``: per-group Weibull(0.78)
lifetimes, 5-min system MTBF, 60-min restart, 60-s saves, 10,000 steps) with failure domains
added on top (:class:`spare_core.events.domains.DomainFailures`): D equal domains of
contiguous groups (a pod / power or cooling domain spanning several groups), each failing at a
constant rate chosen so that domain failures are a share ``--share`` of all failure events
(default 0.084: the switch/cable share of Llama 3's unexpected interruptions). Every layout is
run on the same seeds (common random numbers: the same failures), SPARe+CKPT with the
availability-optimal "auto" checkpoint interval; the base model without domains is the
reference row.

Printed: mean TTT/T0 over the seeds with the spread (min-max), mean wipe-outs (global
restarts caused by lost shard types), failures seen, and the ratio to the consecutive layout
on the same seeds (mean of per-seed ratios).

Usage::

    python -m bench.domain_ttt_table                       # ~10 min on one core
    python -m bench.domain_ttt_table --n 200 --seeds 2     # quick look
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from spare_core.distributions import Exponential
from spare_core.events.domains import DomainFailures
from spare_core.sim import Scenario, SpareCheckpoint, simulate

from bench.domain_endurance_table import LAYOUTS, build as layout_for  # one layout table for both



def run(ns, n_domains, share, rs, seeds):
    print("| N | D (groups each) | r | layout | TTT/T0 mean [min, max] | vs consecutive | wipe-outs | failures seen | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        base_sc = Scenario.paper_600k(n)
        base_rate = 1.0 / base_sc.system_mtbf
        size = n // n_domains
        # D domains together fail at share / (1 - share) times the base rate
        domain_mean = n_domains / (base_rate * share / (1.0 - share))
        model = DomainFailures(base_sc.failures, [Exponential(domain_mean)], groups_per_domain=[size], names=["domain"])
        sc = base_sc.replace(failure_model=model)
        fd = model.domains(n)
        for r in rs:
            ref = None
            rows = [("no domains (base only)", base_sc, None)] + [(k, sc, layout_for(k, fd, r)) for k in LAYOUTS]
            for name, scen, lay in rows:
                t0 = time.perf_counter()
                res = [simulate(scen, SpareCheckpoint(r, layout=lay), seed=s) for s in seeds]
                ratio = np.array([x.ratio for x in res])
                if name == "consecutive":
                    ref = ratio
                rel = "" if ref is None or name == "consecutive" else f"{np.mean(ratio / ref):.3f}"
                print(f"| {n} | {n_domains} ({size}) | {r} | {name} | {ratio.mean():.3f} [{ratio.min():.3f}, {ratio.max():.3f}] | "
                      f"{rel} | {np.mean([x.wipeouts for x in res]):.1f} | {np.mean([x.failures_seen for x in res]):.0f} | "
                      f"{time.perf_counter() - t0:.1f} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[200, 600, 1000])
    ap.add_argument("--domains", type=int, default=20, help="number of equal domains D")
    ap.add_argument("--share", type=float, default=35 / 419, help="domain failures / all failure events")
    ap.add_argument("--r", type=int, nargs="+", default=[4, 10])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"# seeds=0..{args.seeds - 1} share={args.share:.4f} D={args.domains} python={sys.version.split()[0]}")
    run(args.n, args.domains, args.share, args.r, list(range(args.seeds)))


if __name__ == "__main__":
    main()
