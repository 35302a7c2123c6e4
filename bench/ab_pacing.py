"""Before/after timing of the pacing simulator: two source trees, same workloads, one run.

Each repeat runs every workload once in a fresh subprocess per tree, alternating the trees
(A, B, A, B, ...) so that load on a shared machine hits both alike; the table gives the
median process (CPU) time of each and their ratio (with ``--inner k``, each subprocess
times k calls and reports the fastest, which filters load spikes). A tree is a directory with ``src/``
holding an importable, built ``spare_core`` (a worktree of an older commit with its
extensions built in place).

Usage::

    python -m bench.ab_pacing OLD_TREE NEW_TREE [--repeats 5] [--quick] [--skip-large] [--inner 1]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from bench.workloads import PACING, PACING_AB_QUICK

CONTROLLERS = ("NoPacing", "SpreadPacer", "BaselinePacer")

_CHILD = """
import json, sys, time
from spare_core.pacing import PacingScenario, simulate_iterations
import spare_core.pacing as P
n, it, ctrl, inner = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
sc = PacingScenario(n_nodes=n)
simulate_iterations(sc, 5, controller=getattr(P, ctrl)(), seed=1)      # imports, first-call costs
best = float("inf")
for _ in range(inner):
    t = time.process_time()
    r = simulate_iterations(sc, it, controller=getattr(P, ctrl)(), seed=1)
    best = min(best, time.process_time() - t)
print(json.dumps({"cpu": best, "mean": float(r.time.mean())}))
"""


def _run(tree, n, it, ctrl, inner):
    env = dict(os.environ, PYTHONPATH=os.path.join(tree, "src"))
    out = subprocess.run([sys.executable, "-c", _CHILD, str(n), str(it), ctrl, str(inner)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller workloads (seconds)")
    ap.add_argument("--skip-large", action="store_true", help="only the 64-node workload")
    ap.add_argument("--inner", type=int, default=1,
                    help="timed calls per subprocess, the fastest kept (filters load spikes; default 1)")
    args = ap.parse_args(argv)
    work = [(name, n, it) for name, (n, it) in (PACING_AB_QUICK if args.quick else PACING).items()]
    if args.skip_large:
        work = work[:1]
    times = {}
    for _ in range(args.repeats):
        for name, n, it in work:
            # the 100k-rank cells skip BaselinePacer (the ratio script times it at 64 nodes)
            for ctrl in CONTROLLERS if n < 1000 else CONTROLLERS[:2]:
                for tree in (args.old, args.new):
                    res = _run(tree, n, it, ctrl, args.inner)
                    times.setdefault((name, ctrl, tree), []).append(res["cpu"])
                    means = times.setdefault((name, ctrl, "mean"), set())
                    means.add(res["mean"])
    print(f"{'workload':<24} {'controller':<14} {'old cpu':>8} {'new cpu':>8} {'new/old':>8}  same result")
    for name, n, it in work:
        for ctrl in CONTROLLERS if n < 1000 else CONTROLLERS[:2]:
            old = statistics.median(times[name, ctrl, args.old])
            new = statistics.median(times[name, ctrl, args.new])
            same = len(times[name, ctrl, "mean"]) == 1
            print(f"{name:<24} {ctrl:<14} {old:>8.3f} {new:>8.3f} {new / old:>8.3f}  {same}")
    print(f"medians of {args.repeats} alternating runs (each the fastest of {args.inner} calls), process CPU seconds; 'same result': the mean "
          "iteration time is identical in every run of both trees")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
