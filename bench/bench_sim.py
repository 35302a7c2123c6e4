"""Time-to-train simulation benchmarks: pytest-benchmark suite and a ratio script.

pytest-benchmark (``python -m pytest bench/bench_sim.py``), grouped like SimPy's suite:
micro (the compiled timeline kernel on a batch of failures), behaviour (one run of each
policy on the paper preset, ours and the step-by-step pure-Python reference on the same
workload), whole (the ``spare compare`` sweep).

Failure models (``python bench/bench_sim.py --failure-models [--quick]``): the ``spare compare``
sweep (600k GPUs, N = 200 / 600 / 1000, r = 1..20, 5 seeds, one process) under each failure
model, median CPU seconds of interleaved repeats and the ratio to the paper's per-group model
(target for node renewals: <= 1.5x), then the Llama-3-rate 16k-GPU job under each model.

Ratio script (``python bench/bench_sim.py [--quick]``): on the same runs in one process,
the median CPU time of :func:`spare_core.sim.simulate`, of the straightforward step-by-step
simulator (:mod:`spare_core.sim._reference`: live failure stream, one policy call per
failure, a Python loop over steps) and of the same model as a SimPy discrete-event simulation
(:func:`simpy_simulate`, the DES a user would pick), with the ratios; the per-epoch cost of a
checkpoint-only run (restart + first failure: the epoch cache asking for times only, against a
live :class:`~spare_core.events.FailureStream`); then the whole ``spare compare``
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


# -- the DES peer: the same run model written as SimPy processes ---------------------------
def simpy_simulate(scenario, policy, *, seed) -> dict:
    """The run model as a SimPy discrete-event simulation (a peer a user would pick).

    A trainer process walks steps and saves with ``env.timeout``; a failure process sleeps
    until the stream's next failure, asks the policy, and interrupts the trainer (extend the
    activity, or restart). Same failure stream, multipliers and policy as
    :func:`spare_core.sim.simulate`, so the runs coincide (up to exact time ties).
    """
    import simpy

    from spare_core._seeding import run_seed
    from spare_core.sim.run import StepMultipliers

    stream = scenario.failure_stream(seed)
    handler = policy.handler(scenario)
    mults = StepMultipliers(scenario, run_seed(seed, "step-multipliers"))
    interval = policy.checkpoint_interval(scenario).seconds
    init_depth = float(policy.initial_depth(scenario))
    fsec = float(policy.failure_seconds(scenario))
    patch_cost = scenario.t_compute if scenario.charge_patch else 0.0
    max_wall = scenario.max_wall_factor * scenario.t0
    env = simpy.Environment()
    st = dict(depth=init_depth, committed=0, done=0, ckpt=0, seen=0, restarts=0, wall=math.inf,
              buf=mults.chunk(), bi=0, last=0.0, resumed=env.event())

    def activity(end, is_step):
        """Wait until ``end``, extended by masked failures; True if a restart came."""
        added = 0.0
        while True:
            try:
                yield env.timeout(end - env.now)
                return False, added
            except simpy.Interrupt as irq:
                o = irq.cause
                if o.restart:
                    return True, added
                end += fsec + patch_cost * o.patch_layers
                if is_step and scenario.charge_patch:
                    added += o.patch_layers
                st["depth"] = o.depth

    def restart():
        st["done"] = 0
        yield env.timeout(scenario.restart_time)
        stream.restart(env.now)
        handler.restart()
        st["depth"], st["last"] = init_depth, env.now
        ev, st["resumed"] = st["resumed"], env.event()
        ev.succeed()

    def trainer():
        while env.now <= max_wall:
            if st["bi"] == st["buf"].shape[0]:
                st["buf"], st["bi"] = mults.chunk(), 0
            dur = float(st["buf"][st["bi"]]) * (st["depth"] * scenario.t_compute + scenario.t_allreduce)
            st["bi"] += 1
            lost, _ = yield from activity(env.now + dur, True)
            if lost:
                yield from restart()
                continue
            if env.now > max_wall:
                return
            st["done"] += 1
            if st["committed"] + st["done"] >= scenario.n_steps:
                st["committed"] += st["done"]
                st["wall"] = env.now
                return
            if env.now - st["last"] >= interval:
                lost, _ = yield from activity(env.now + scenario.checkpoint_time, False)
                if lost:
                    yield from restart()
                    continue
                if env.now > max_wall:
                    return
                st["committed"] += st["done"]
                st["done"], st["last"] = 0, env.now
                st["ckpt"] += 1

    def failures(train):
        while True:
            t = stream.peek()
            if t == math.inf:
                yield st["resumed"]
                continue
            yield env.timeout(t - env.now)
            if not train.is_alive:
                return
            _, g = stream.next_failure()
            st["seen"] += 1
            o = handler.on_failure(g)
            if o.restart:
                st["restarts"] += 1
            train.interrupt(o)
            if o.restart:
                yield st["resumed"]

    train = env.process(trainer())
    env.process(failures(train))
    env.run(until=train)
    return dict(finished=math.isfinite(st["wall"]), wall=st["wall"], failures_seen=st["seen"],
                restarts=st["restarts"], checkpoints=st["ckpt"], committed=st["committed"])


# -- epoch turnover: what a checkpoint-only run pays per restart ---------------------------
_TURNOVER_EPOCHS = 1000


def _epoch_turnover(how):
    """A function running ``_TURNOVER_EPOCHS`` epochs of one failure each on the paper's N=600
    failure stream: through the epoch cache asking for times only (checkpoint-only runs),
    through the cache with units, or on a live stream (``restart`` + ``next_failure``, as the
    step-by-step reference does)."""
    s = Scenario.paper_600k(600)

    def cache(times_only):
        src = s.epoch_failures(0)
        for k in range(_TURNOVER_EPOCHS):
            src.times(k, 1, 1) if times_only else src.get(k, 1, 1)

    def live():
        st = s.failure_stream(0)
        for _ in range(_TURNOVER_EPOCHS):
            t, _u = st.next_failure()
            st.restart(t)

    return {"cache-times-only": lambda: cache(True), "cache-with-units": lambda: cache(False), "live-stream": live}[how]


# -- pytest-benchmark ---------------------------------------------------------------------
try:
    import pytest
except ImportError:  # pragma: no cover - script use without pytest
    pytest = None

if pytest is not None:

    @pytest.mark.benchmark(group="sim-micro")
    def test_kernel_advance_batch(benchmark):
        from spare_core._native import load

        k = load("_timeline")
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

    @pytest.mark.parametrize("how", ["cache-times-only", "cache-with-units", "live-stream"])
    @pytest.mark.benchmark(group="sim-micro")
    def test_epoch_turnover(benchmark, how):
        benchmark.extra_info["workload"] = f"{_TURNOVER_EPOCHS} restarts + first failure, N=600 ({how})"
        benchmark(_epoch_turnover(how))

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

    @pytest.mark.parametrize("i", range(3))
    @pytest.mark.benchmark(group="sim-run")
    def test_simpy_peer(benchmark, i):
        pytest.importorskip("simpy")
        name, s, pol = _workloads(True)[i]
        benchmark.extra_info["workload"] = name + " (SimPy)"
        benchmark.pedantic(simpy_simulate, args=(s, pol), kwargs={"seed": 0}, rounds=3, iterations=1)

    @pytest.mark.parametrize("model", ["per-unit", "node", "system"])
    @pytest.mark.benchmark(group="sim-whole")
    def test_compare_sweep_small(benchmark, model):
        scen = [Scenario.paper_600k(n, n_steps=2000, failure_model=model) for n in (200, 600)]
        benchmark.extra_info["workload"] = f"compare sweep slice, {model} failures"
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


def failure_models(quick: bool) -> int:
    """The sweep's cost and the Llama-3 job's TTT/T0 under each failure model (module docstring)."""
    models = ("per-unit", "node", "system")
    groups, seeds, rmax, repeats = ([200, 600], 2, 10, 1) if quick else ([200, 600, 1000], 5, 20, 3)
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


def main(argv) -> int:
    quick = "--quick" in argv
    if "--failure-models" in argv:
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
    for name, s, pol in _workloads(quick):
        ours = _median_time(lambda: simulate(s, pol, seed=0), repeats)
        ref = _median_time(lambda: reference_simulate(s, pol, seed=0), max(1, repeats - 2))
        a, b = simulate(s, pol, seed=0), reference_simulate(s, pol, seed=0)
        ok = (a.failures_seen, a.restarts, a.checkpoints) == (b["failures_seen"], b["restarts"], b["checkpoints"])
        if have_simpy:
            des = _median_time(lambda: simpy_simulate(s, pol, seed=0), max(1, repeats - 2))
            c = simpy_simulate(s, pol, seed=0)
            ok = ok and (c["failures_seen"], c["restarts"], c["checkpoints"]) == (b["failures_seen"], b["restarts"], b["checkpoints"])
            peer = f"{des:10.4f} {des / ours:6.1f}x"
        else:
            peer = f"{'-':>10} {'-':>7}"
        print(f"{name:<28} {ours:9.4f} {ref:14.4f} {ref / ours:6.1f}x {peer}  {'same run' if ok else 'MISMATCH'}")
    # the per-epoch cost a checkpoint-only run pays: restart + first failure
    # ~40 ms each and noisy on a shared machine: more repeats than the runs above
    turn = {h: _median_time(_epoch_turnover(h), 3 * repeats) for h in ("cache-times-only", "cache-with-units", "live-stream")}
    print(f"{'epoch turnover x' + str(_TURNOVER_EPOCHS):<28} {turn['cache-times-only']:9.4f} {turn['live-stream']:14.4f} "
          f"{turn['live-stream'] / turn['cache-times-only']:6.1f}x  (cache with units {turn['cache-with-units']:.4f} s; "
          f"reference column: live stream)")
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
