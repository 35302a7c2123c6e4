"""pacing: the pacing simulator vs its numpy peer, medians and ratios from one run.

Workloads of issue 6: 64 nodes x 10,000 iterations and 100k ranks (12,500 nodes) x 1,000
iterations, unpaced and with SpreadPacer, on the default rail-optimised fabric, plus the
BaselinePacer (the sweep's default) on the first workload, plus the first workload on a
top-of-rack fabric (all rails on one plane of links: the kernel's shared-plane pass). All
controllers run inside the kernel. The peer is the same model in vectorised numpy
(``bench/peers.py``'s ``numpy_peer``); both get the same noise from the same seed and their
iteration times are checked to agree before anything is timed. The machine is shared:
read the ratios (computed within one run), not the absolute times.

Usage::

    python -m bench.ratios pacing            # full sizes (a few minutes)
    python -m bench.ratios pacing --quick    # 64 nodes x 1,000 and 100k ranks x 20 (seconds)
    python -m bench.ratios pacing --repeats 3 --peer-iterations 200
"""
from __future__ import annotations

import numpy as np

from spare_core.pacing import BaselinePacer, NoPacing, PacingScenario, SpreadPacer, simulate_iterations

from bench.peers import numpy_peer
from bench.timing import time_medians
from bench.workloads import PACING, PACING_QUICK, top_of_rack


def ratios(repeats=5, peer_iterations=None, workloads=PACING, fabric=None):
    """Median wall and CPU time of ours and of the peer on each workload, in one run."""
    rows = []
    for name, (n, it) in workloads.items():
        sc = PacingScenario(n_nodes=n) if fabric is None else PacingScenario(n_nodes=n, fabric=fabric)
        for ctrl in (NoPacing(), SpreadPacer()):
            # the peer is slow at 100k ranks: time it on a prefix, scale linearly
            it_peer = it if peer_iterations is None or n < 1000 else min(it, peer_iterations)
            ours = simulate_iterations(sc, it_peer, controller=ctrl, seed=1).time
            np.testing.assert_allclose(numpy_peer(sc, it_peer, 1, ctrl), ours, rtol=1e-9)
            w_ours, c_ours = time_medians(lambda: simulate_iterations(sc, it, controller=ctrl, seed=1), repeats)
            w_peer, c_peer = (t * it / it_peer for t in time_medians(lambda: numpy_peer(sc, it_peer, 1, ctrl), repeats))
            rows.append((name, type(ctrl).__name__, w_ours, w_peer, c_ours, c_peer))
    return rows


def add_arguments(p):
    p.add_argument("--repeats", type=int, default=5, help="timed repeats per cell (median; 2 with --quick)")
    p.add_argument("--peer-iterations", type=int, default=200,
                   help="cap on the peer's iterations at 100k ranks (its time is scaled linearly)")


def run(args) -> int:
    repeats = 2 if args.quick else args.repeats
    work = PACING_QUICK if args.quick else PACING
    rows = ratios(repeats, args.peer_iterations, work)
    first = dict([next(iter(work.items()))])
    rows += [(name + " ToR", ctrl, *t) for name, ctrl, *t in ratios(repeats, args.peer_iterations, first, top_of_rack())]
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
