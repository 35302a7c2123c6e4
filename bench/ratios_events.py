"""Event-engine throughput vs SimPy, a numpy sort-based loop and a heapq loop (same run).

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

    python bench/ratios_events.py            # 60k and 600k units (about 10 minutes: SimPy is slow)
    python bench/ratios_events.py --quick    # small sizes, seconds
"""
from __future__ import annotations

import argparse
import heapq
import statistics
import time

import numpy as np

from spare_core.distributions import Deterministic, LogNormal, Weibull
from spare_core.events import simulate_renewals

SHAPE = 0.78
MEAN_LIFE = 1000.0
FIXED = Deterministic(10.0)
LOGN = LogNormal(10.0, 1.0)


def ours(n, repair, horizon, seed):
    r = simulate_renewals(n, Weibull.from_mean(MEAN_LIFE, SHAPE), repair, horizon, seed=seed)
    return r.events, r.peak_down


def numpy_loop(n, repair, horizon, seed):
    rng = np.random.default_rng(seed)
    life = Weibull.from_mean(MEAN_LIFE, SHAPE)
    start = np.zeros(n)
    fails, reps = [], []
    while start.size:
        f = start + life.sample(rng, start.size)
        r = f + repair.sample(rng, f.size)
        fails.append(f[f < horizon])
        reps.append(r[r < horizon])
        start = r[r < horizon]
    f = np.concatenate(fails)
    r = np.concatenate(reps)
    t = np.concatenate([f, r])
    step = np.concatenate([np.ones(f.size, np.int64), -np.ones(r.size, np.int64)])
    order = np.argsort(t, kind="stable")
    down = np.cumsum(step[order])
    return t.size, int(down.max()) if down.size else 0


def simpy_loop(n, repair, horizon, seed):
    import simpy

    rng = np.random.default_rng(seed)
    life = Weibull.from_mean(MEAN_LIFE, SHAPE)
    env = simpy.Environment()
    state = {"events": 0, "down": 0, "peak": 0}
    per = 8  # draws pre-sampled per unit and batch

    def unit():
        lives = life.sample(rng, per).tolist()
        reps = repair.sample(rng, per).tolist()
        i = 0
        while True:
            if i == per:
                lives = life.sample(rng, per).tolist()
                reps = repair.sample(rng, per).tolist()
                i = 0
            yield env.timeout(lives[i])
            state["events"] += 1
            state["down"] += 1
            if state["down"] > state["peak"]:
                state["peak"] = state["down"]
            yield env.timeout(reps[i])
            state["events"] += 1
            state["down"] -= 1
            i += 1

    for _ in range(n):
        env.process(unit())
    env.run(until=horizon)
    return state["events"], state["peak"]


def heapq_loop(n, repair, horizon, seed):
    rng = np.random.default_rng(seed)
    life = Weibull.from_mean(MEAN_LIFE, SHAPE)
    heap = [(t, u, 0) for u, t in enumerate(life.sample(rng, n).tolist())]
    heapq.heapify(heap)
    lives, reps, li, ri = [], [], 0, 0
    events = down = peak = 0
    while heap and heap[0][0] < horizon:
        t, u, kind = heapq.heappop(heap)
        events += 1
        if kind == 0:
            down += 1
            peak = max(peak, down)
            if ri == len(reps):
                reps, ri = repair.sample(rng, 4096).tolist(), 0
            heapq.heappush(heap, (t + reps[ri], u, 1))
            ri += 1
        else:
            down -= 1
            if li == len(lives):
                lives, li = life.sample(rng, 4096).tolist(), 0
            heapq.heappush(heap, (t + lives[li], u, 0))
            li += 1
    return events, peak


def timed(fn, reps, *args):
    times, out = [], None
    for k in range(reps):
        t0 = time.process_time()
        out = fn(*args, k)
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    ap.add_argument("--reps", type=int, default=None, help="repeats per timing (median)")
    args = ap.parse_args(argv)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
