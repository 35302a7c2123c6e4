"""Pacing simulator vs its numpy peer: medians and ratios from one run (``bench/ratios.py``).

Workloads of issue 6: 64 nodes x 10,000 iterations and 100k ranks (12,500 nodes) x 1,000
iterations, unpaced and with SpreadPacer, on the default rail-optimised fabric, plus the
BaselinePacer (the sweep's default) on the first workload, plus the first workload on a
top-of-rack fabric (all rails on one plane of links: the kernel's shared-plane pass). All
controllers run inside the kernel. The peer is the same model in vectorised numpy
(``bench_pacing.numpy_peer``); both get the same noise from the same seed and their
iteration times are checked to agree before anything is timed. The machine is shared:
read the ratios (computed within one run), not the absolute times.

Usage::

    python bench/ratios_pacing.py            # full sizes (a few minutes)
    python bench/ratios_pacing.py --quick    # 64 nodes x 1,000 and 100k ranks x 20 (seconds)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pacing import QUICK, TOR, WORKLOADS, ratios, time_medians  # noqa: E402

from spare_core.pacing import BaselinePacer, PacingScenario, simulate_iterations  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, a smoke run (seconds)")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats per cell (median; 2 with --quick)")
    ap.add_argument("--peer-iterations", type=int, default=200,
                    help="cap on the peer's iterations at 100k ranks (its time is scaled linearly)")
    args = ap.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    work = QUICK if args.quick else WORKLOADS
    rows = ratios(repeats, args.peer_iterations, work)
    first = dict([next(iter(work.items()))])
    rows += [(name + " ToR", ctrl, *t) for name, ctrl, *t in ratios(repeats, args.peer_iterations, first, TOR)]
    print(f"{'workload':<28} {'controller':<13} {'ours cpu':>9} {'peer cpu':>9} {'ratio':>6} "
          f"{'ours wall':>9} {'peer wall':>9} {'ratio':>6}")
    for name, ctrl, w_o, w_p, c_o, c_p in rows:
        print(f"{name:<28} {ctrl:<13} {c_o:>9.3f} {c_p:>9.3f} {c_p / c_o:>6.2f} {w_o:>9.3f} {w_p:>9.3f} "
              f"{w_p / w_o:>6.2f}")
    # the peer replays the controller on the spreads alone, which pacing does not change;
    # BaselinePacer's decisions depend on the iteration times, so the peer has no
    # vectorised form of it: compare it with the in-kernel SpreadPacer instead
    name, (n, it) = next(iter(work.items()))
    sc = PacingScenario(n_nodes=n)
    w, c = time_medians(lambda: simulate_iterations(sc, it, controller=BaselinePacer(), seed=1), repeats)
    kern = next(r for r in rows if r[0] == name and r[1] == "SpreadPacer")
    print(f"{name:<28} {'BaselinePacer':<13} {c:>9.3f} {'':>9} {'':>6} {w:>9.3f}   ({c / kern[4]:.2f}x "
          "SpreadPacer's CPU time)")
    print("seconds, medians of repeats in one run; ratio = peer / ours (> 1: we are faster); CPU = process "
          "time; the peer's 100k-rank times are measured on --peer-iterations iterations and scaled")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
