"""sim: time-to-train simulation against the step-by-step reference and a SimPy peer.

Table (``python -m bench.ratios sim [--quick]``): on the same runs in one process, the median
CPU time of :func:`spare_core.sim.simulate`, of the straightforward step-by-step simulator
(:mod:`spare_core.sim._reference`: live failure stream, one policy call per failure, a Python
loop over steps) and of the same model as a SimPy discrete-event simulation
(``bench/peers.py``'s ``simpy_simulate``, the DES a user would pick), with the ratios; the
per-epoch cost of a checkpoint-only run (restart + first failure: the epoch cache asking for
times only, against a live :class:`~spare_core.events.FailureStream`); then the whole ``spare
compare`` sweep's wall and CPU time (target: under 60 s wall on 2 cores). The machine is
shared: read ratios and CPU seconds, not absolute wall times.

Failure models (``python -m bench.ratios sim --failure-models [--quick]``): the ``spare compare``
sweep (600k GPUs, N = 200 / 600 / 1000, r = 1..20, 5 seeds, one process) under each failure
model, median CPU seconds of interleaved repeats and the ratio to the paper's per-group model
(target for node renewals: <= 1.5x), then the Llama-3-rate 16k-GPU job under each model.
"""
from __future__ import annotations

import os
import resource
import statistics
import time

from spare_core.sim import CheckpointOnly, ReplicationCheckpoint, Scenario, SpareCheckpoint, simulate, sweep
from spare_core.sim._reference import reference_simulate

from bench.peers import simpy_simulate
from bench.timing import cpu_median
from bench.workloads import COMPARE_SWEEP, COMPARE_SWEEP_QUICK, TURNOVER_EPOCHS, epoch_turnover, sim_runs


def failure_models(quick: bool) -> int:
    """The sweep's cost and the Llama-3 job's TTT/T0 under each failure model (module docstring)."""
    models = ("per-unit", "node", "system")
    (groups, seeds, rmax), repeats = (COMPARE_SWEEP_QUICK, 1) if quick else (COMPARE_SWEEP, 3)
    cpu = {m: [] for m in models}
    seen = {}
    for _ in range(repeats):  # interleaved: a load change hits every model alike
        for m in models:
            scen = [Scenario.paper_600k(n, failure_model=m) for n in groups]
            t = time.process_time()
            res = sweep(scen, ("ckpt", "rep", "spare"), range(1, rmax + 1), range(seeds), processes=1)
            cpu[m].append(time.process_time() - t)
            seen[m] = sum(r.failures_seen for r in res.runs)
    base = statistics.median(cpu["per-unit"])
    print(f"compare sweep N={groups}, r=1..{rmax}, {seeds} seeds, one process; median CPU s of {repeats}")
    print(f"{'failure model':<14} {'CPU (s)':>8} {'vs per-unit':>12} {'failures':>10} {'us/failure':>11}")
    for m in models:
        c = statistics.median(cpu[m])
        print(f"{m:<14} {c:8.2f} {c / base:11.2f}x {seen[m]:10d} {c / seen[m] * 1e6:11.2f}")
    print()
    ll_seeds = range(2 if quick else 5)
    steps = 50_000 if quick else 200_000
    pols = [("CKPT-only", CheckpointOnly()), ("SPARe r=2", SpareCheckpoint(2)), ("SPARe r=3", SpareCheckpoint(3)),
            ("Rep r=2", ReplicationCheckpoint(2))]
    print(f"Llama-3 rate, 16,384 GPUs (128 groups of 128), {steps} steps, seeds {list(ll_seeds)}: "
          "TTT/T0 mean, availability, restarts per run")
    print(f"{'failure model':<22}" + "".join(f"{n:>26}" for n, _ in pols))
    from spare_core.events import NodeRenewals

    variants = [("per-unit", "per-unit"), ("system", "system"), ("node (stationary)", "node"),
                ("node (new nodes)", NodeRenewals(initial="new"))]
    for label, fm in variants:
        s = Scenario.llama3_16k(failure_model=fm, n_steps=steps)
        row = []
        for _, pol in pols:
            rs = [simulate(s, pol, seed=k) for k in ll_seeds]
            row.append(f"{statistics.mean(r.ratio for r in rs):.2f}, {statistics.mean(r.availability for r in rs):.2f}, "
                       f"{statistics.mean(r.restarts for r in rs):.0f}")
        print(f"{label:<22}" + "".join(f"{c:>26}" for c in row))
    return 0


def add_arguments(p):
    p.add_argument("--failure-models", action="store_true",
                   help="the compare sweep and the Llama-3 job under each failure model instead")


def run(args) -> int:
    quick = args.quick
    if args.failure_models:
        return failure_models(quick)
    repeats = 3 if quick else 5
    try:
        import simpy  # noqa: F401
    except ImportError:  # pragma: no cover - the bench extra installs it
        have_simpy = False
    else:
        have_simpy = True
    print("median CPU seconds (process time) per run, same process, same runs")
    print(f"{'workload':<28} {'ours (s)':>9} {'reference (s)':>14} {'ratio':>7} {'SimPy (s)':>10} {'ratio':>7}  check")
    for name, s, pol in sim_runs(quick):
        ours = cpu_median(lambda: simulate(s, pol, seed=0), repeats)
        ref = cpu_median(lambda: reference_simulate(s, pol, seed=0), max(1, repeats - 2))
        a, b = simulate(s, pol, seed=0), reference_simulate(s, pol, seed=0)
        ok = (a.failures_seen, a.restarts, a.checkpoints) == (b["failures_seen"], b["restarts"], b["checkpoints"])
        if have_simpy:
            des = cpu_median(lambda: simpy_simulate(s, pol, seed=0), max(1, repeats - 2))
            c = simpy_simulate(s, pol, seed=0)
            ok = ok and (c["failures_seen"], c["restarts"], c["checkpoints"]) == (b["failures_seen"], b["restarts"], b["checkpoints"])
            peer = f"{des:10.4f} {des / ours:6.1f}x"
        else:
            peer = f"{'-':>10} {'-':>7}"
        print(f"{name:<28} {ours:9.4f} {ref:14.4f} {ref / ours:6.1f}x {peer}  {'same run' if ok else 'MISMATCH'}")
    # the per-epoch cost a checkpoint-only run pays: restart + first failure
    # ~40 ms each and noisy on a shared machine: more repeats than the runs above
    turn = {h: cpu_median(epoch_turnover(h), 3 * repeats) for h in ("cache-times-only", "cache-with-units", "live-stream")}
    print(f"{'epoch turnover x' + str(TURNOVER_EPOCHS):<28} {turn['cache-times-only']:9.4f} {turn['live-stream']:14.4f} "
          f"{turn['live-stream'] / turn['cache-times-only']:6.1f}x  (cache with units {turn['cache-with-units']:.4f} s; "
          f"reference column: live stream)")
    # a slice of the compare sweep: ours (shared epochs, batch decisions, kernel) against the
    # reference simulating the same runs one by one
    sub = Scenario.paper_600k(600, n_steps=2000 if quick else 10_000)
    pols = [CheckpointOnly()] + [cls(r) for r in (3, 6, 12) for cls in (ReplicationCheckpoint, SpareCheckpoint)]
    ours = cpu_median(lambda: sweep(sub, ("ckpt", "rep", "spare"), (3, 6, 12), (0,)), 1)
    ref = cpu_median(lambda: [reference_simulate(sub, p, seed=0) for p in pols], 1)
    print(f"{'sweep slice N=600, 7 runs':<28} {ours:9.4f} {ref:14.4f} {ref / ours:6.1f}x")
    groups, seeds, rmax = COMPARE_SWEEP_QUICK if quick else COMPARE_SWEEP
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
