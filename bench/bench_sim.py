"""Time-to-train simulation benchmarks: pytest-benchmark suite and a ratio script.

pytest-benchmark (``python -m pytest bench/bench_sim.py``), grouped like SimPy's suite:
micro (the compiled timeline kernel on a batch of failures), behaviour (one run of each
policy on the paper preset, ours and the step-by-step pure-Python reference on the same
workload), whole (the ``spare compare`` sweep).

Ratio script (``python bench/bench_sim.py [--quick]``): on the same runs in one process,
the median CPU time of :func:`spare_core.sim.simulate` and of the straightforward step-by-step
simulator (:mod:`spare_core.sim._reference`: live failure stream, one policy call per
failure, a Python loop over steps), and their ratio; then the whole ``spare compare``
sweep's wall and CPU time (target: under 60 s wall on 2 cores). The machine is shared:
read ratios and CPU seconds, not absolute wall times.
"""
from __future__ import annotations

import math
import os
import resource
import statistics
import sys
import time

import numpy as np

from spare_core.sim import CheckpointOnly, ReplicationCheckpoint, Scenario, SpareCheckpoint, simulate, sweep
from spare_core.sim._reference import reference_simulate


def _workloads(quick: bool):
    steps = 1000 if quick else 10_000
    s = Scenario.paper_600k(600, n_steps=steps, max_wall_factor=5.0)
    return [
        ("CKPT-only N=600 (to 5 T0)", s, CheckpointOnly()),
        ("Rep+CKPT r=3 N=600", s, ReplicationCheckpoint(3)),
        ("SPARe+CKPT r=6 N=600", s, SpareCheckpoint(6)),
    ]


# -- pytest-benchmark ---------------------------------------------------------------------
try:
    import pytest
except ImportError:  # pragma: no cover - script use without pytest
    pytest = None

if pytest is not None:

    @pytest.mark.benchmark(group="sim-micro")
    def test_kernel_advance_batch(benchmark):
        from spare_core._native import load

        k = load("sim_timeline")
        S = k.SLOTS
        rng = np.random.default_rng(0)
        n = 1000
        ftime = np.cumsum(rng.exponential(300.0, n))
        kind = np.zeros(n, dtype=np.int8)
        depth = np.minimum(1 + np.arange(n) // 200, 5).astype(float)
        patch = np.full(n, 0.5)
        par = np.zeros(S["N_PARAMS"])
        par[[S["P_T_COMP"], S["P_T_AR"], S["P_SAVE"], S["P_RESTART"], S["P_INTERVAL"], S["P_N_STEPS"],
             S["P_INIT_DEPTH"], S["P_MAX_WALL"], S["P_FAIL_SECONDS"], S["P_PATCH_SECONDS"], S["P_PATCH_LAYERS"]]] = [
            64.0, 6.0, 60.0, 3600.0, 3000.0, 1e9, 1.0, math.inf, 0.2, 64.0, 1.0]
        mult = rng.uniform(0.95, 1.05, 1 << 16)

        def go():
            return k.advance(k.new_state(1.0), par, ftime, 0.0, kind, depth, patch, 0, math.inf, mult)

        status, j = benchmark(go)
        assert j == n

    @pytest.mark.parametrize("i", range(3))
    @pytest.mark.benchmark(group="sim-run")
    def test_simulate(benchmark, i):
        name, s, pol = _workloads(True)[i]
        benchmark.extra_info["workload"] = name
        benchmark(simulate, s, pol, seed=0)

    @pytest.mark.parametrize("i", range(3))
    @pytest.mark.benchmark(group="sim-run")
    def test_reference(benchmark, i):
        name, s, pol = _workloads(True)[i]
        benchmark.extra_info["workload"] = name + " (reference)"
        benchmark.pedantic(reference_simulate, args=(s, pol), kwargs={"seed": 0}, rounds=3, iterations=1)

    @pytest.mark.benchmark(group="sim-whole")
    def test_compare_sweep_small(benchmark):
        scen = [Scenario.paper_600k(n, n_steps=2000) for n in (200, 600)]
        benchmark.pedantic(sweep, args=(scen, ("ckpt", "rep", "spare"), range(1, 11), range(2)), rounds=1, iterations=1)


# -- ratio script ------------------------------------------------------------------------
def _median_time(fn, repeats):
    """Median CPU seconds of ``fn()`` (process time: robust to other jobs on a shared machine)."""
    ts = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return statistics.median(ts)


def main(argv) -> int:
    quick = "--quick" in argv
    repeats = 3 if quick else 5
    print("median CPU seconds (process time) per run, same process, same runs")
    print(f"{'workload':<28} {'ours (s)':>9} {'reference (s)':>14} {'ratio':>7}  check")
    for name, s, pol in _workloads(quick):
        ours = _median_time(lambda: simulate(s, pol, seed=0), repeats)
        ref = _median_time(lambda: reference_simulate(s, pol, seed=0), max(1, repeats - 2))
        a, b = simulate(s, pol, seed=0), reference_simulate(s, pol, seed=0)
        ok = a.failures_seen == b["failures_seen"] and a.finished == b["finished"]
        print(f"{name:<28} {ours:9.4f} {ref:14.4f} {ref / ours:6.1f}x  {'same run' if ok else 'MISMATCH'}")
    # a slice of the compare sweep: ours (shared epochs, batch decisions, kernel) against the
    # reference simulating the same runs one by one
    sub = Scenario.paper_600k(600, n_steps=2000 if quick else 10_000)
    pols = [CheckpointOnly()] + [cls(r) for r in (3, 6, 12) for cls in (ReplicationCheckpoint, SpareCheckpoint)]
    ours = _median_time(lambda: sweep(sub, ("ckpt", "rep", "spare"), (3, 6, 12), (0,)), 1)
    ref = _median_time(lambda: [reference_simulate(sub, p, seed=0) for p in pols], 1)
    print(f"{'sweep slice N=600, 7 runs':<28} {ours:9.4f} {ref:14.4f} {ref / ours:6.1f}x")
    if quick:
        groups, seeds, rmax = [200, 600], 2, 10
    else:
        groups, seeds, rmax = [200, 600, 1000], 5, 20
    scen = [Scenario.paper_600k(n) for n in groups]
    procs = min(2, os.cpu_count() or 1)
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s0 = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    res = sweep(scen, ("ckpt", "rep", "spare"), range(1, rmax + 1), range(seeds), processes=procs)
    wall = time.perf_counter() - t
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (c1.ru_utime - c0.ru_utime) + (s1.ru_utime - s0.ru_utime)
    load = os.getloadavg()[0]
    print(f"\ncompare sweep: N={groups}, r=1..{rmax}, {seeds} seeds: {len(res.runs)} runs, "
          f"wall {wall:.1f} s on {procs} processes, CPU {cpu:.1f} s (load average {load:.1f}; "
          f"wall on an idle 2-core machine ~ CPU/2 = {cpu / 2:.1f} s; target < 60 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
