"""events: event-engine throughput vs SimPy, a numpy sort-based loop and a heapq loop (same run).

The first table times the retired general engine (``Engine`` / ``simulate_renewals``, kept one
release); the second, the headline, times the failure source the simulations read.

Workload (issue 5): ``n`` units, each alternating Weibull(shape 0.78) lifetimes and repairs
(fixed, or log-normal), from time 0 to a horizon; every implementation samples its own
random times (sampling included) and returns the same counts (failures, repairs, events,
peak units down). Each timing is the median of repeats of the process's CPU time
(``time.process_time``: every implementation is single-threaded, and CPU time is less
distorted than wall time when other jobs share the cores); read the ratios (computed
within one run) rather than the absolute rates.

Peers
-----
- ``simpy``: one SimPy process per unit (``timeout(lifetime)``, ``timeout(repair)``),
  drawing from numpy batches pre-sampled per unit (so SimPy pays no per-draw numpy call).
- ``numpy``: the vectorised way without an event queue: draw the next lifetime of every
  still-active unit at once, per round, until all cycles pass the horizon; then sort all
  failure/repair times once to get the peak number of units down.
- ``heapq``: a plain ``heapq`` event loop over (time, unit) with batch-sampled lifetimes.

Usage::

    python -m bench.ratios events            # 60k and 600k units (about 10 minutes: SimPy is slow)
    python -m bench.ratios events --quick    # small sizes, seconds
    python -m bench.ratios events --reps 7   # repeats per timing (median)

The workload is ``bench/workloads.py`` (event engine); the peers are ``bench/peers.py``.

The second table times the failure source the simulations read (``NodeFailureLog``, the node
model's log: per-node renewals, the failed node replaced at once and the others keeping their
age; repairs and the spare pool are the run loop's, in the ``_timeline`` kernel) on the same
lifetimes without repair downtime, against a numpy round loop and a heapq loop: the rate that
``spare run`` and ``spare map`` get.
"""
from __future__ import annotations

import statistics
import time

from bench.peers import heapq_loop, numpy_loop, ours, renewals_heapq, renewals_numpy, renewals_ours, simpy_loop
from bench.workloads import FIXED, LOGN, MEAN_LIFE, SHAPE


def timed(fn, reps, *args):
    times, out = [], None
    for k in range(reps):
        t0 = time.process_time()
        out = fn(*args, k)
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def add_arguments(p):
    p.add_argument("--reps", type=int, default=None, help="repeats per timing (median)")


def run(args) -> int:
    if args.quick:
        plan = [(2_000, 10, args.reps or 3), (20_000, 10, args.reps or 3)]
    else:  # (units, failures per unit in the long run, repeats)
        plan = [(60_000, 20, args.reps or 5), (600_000, 10, args.reps or 3)]
    cycles_peer = 1
    print(f"per-unit Weibull(shape={SHAPE}, mean={MEAN_LIFE:g}) lifetimes + repairs; median of repeats; "
          "rates in million events/s; ratio = ours / peer (same run, same workload)")
    hdr = f"{'units':>8} {'repair':>14} {'horizon':>8} {'events':>10} {'impl':>7} {'Mev/s':>7} {'ratio':>7} {'peak':>6}"
    print(hdr)
    print("-" * len(hdr))
    for n, cycles_long, reps in plan:
        for repair in (FIXED, LOGN):
            # long horizon: about `cycles_long` failures per unit (ours vs numpy);
            # short horizon: about one per unit, where the slow peers finish in seconds.
            for cycles, peers in ((cycles_long, ("numpy",)), (cycles_peer, ("numpy", "heapq", "simpy"))):
                horizon = cycles * (MEAN_LIFE + repair.mean)
                t_ours, (ev, peak) = timed(ours, reps, n, repair, horizon)
                rate = ev / t_ours / 1e6
                print(f"{n:>8} {repair!r:>14.14} {horizon:>8.0f} {ev:>10} {'ours':>7} {rate:>7.2f} {'':>7} {peak:>6}")
                for peer in peers:
                    fn = {"numpy": numpy_loop, "simpy": simpy_loop, "heapq": heapq_loop}[peer]
                    if peer == "simpy":
                        try:
                            import simpy  # noqa: F401
                        except ImportError:
                            print(f"{'':>8} {'':>14} {'':>8} {'':>10} {peer:>7} (not installed: pip install simpy)")
                            continue
                    prep = 1 if peer in ("simpy", "heapq") else reps
                    t_peer, (pev, ppeak) = timed(fn, prep, n, repair, horizon)
                    prate = pev / t_peer / 1e6
                    print(f"{'':>8} {'':>14} {'':>8} {pev:>10} {peer:>7} {prate:>7.2f} {rate / prate:>7.1f} {ppeak:>6}")
    _sources(args)
    return 0


def _sources(args) -> None:
    """The simulations' own source (node renewals) against the peers, same run."""
    plan = [(20_000, 10, args.reps or 3)] if args.quick else [(60_000, 20, args.reps or 5), (600_000, 10, args.reps or 3)]
    print()
    print(f"the simulations' source: per-node renewals (failed node replaced, Weibull shape {SHAPE}), failures "
          "up to the horizon; million failures/s; ratio = ours / peer")
    hdr = f"{'nodes':>8} {'horizon':>10} {'failures':>10} {'impl':>7} {'Mf/s':>7} {'ratio':>7}"
    print(hdr)
    print("-" * len(hdr))
    for n, cycles, reps in plan:
        horizon = cycles * MEAN_LIFE
        t_ours, count = timed(renewals_ours, reps, n, horizon)
        rate = count / t_ours / 1e6
        print(f"{n:>8} {horizon:>10.0f} {count:>10} {'ours':>7} {rate:>7.2f} {'':>7}")
        for name, fn, r in (("numpy", renewals_numpy, reps), ("heapq", renewals_heapq, 1)):
            t_peer, pcount = timed(fn, r, n, horizon)
            prate = pcount / t_peer / 1e6
            print(f"{'':>8} {'':>10} {pcount:>10} {name:>7} {prate:>7.2f} {rate / prate:>7.1f}")
