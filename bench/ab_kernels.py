"""A/B timing of the compiled kernels: two builds of spare_core, same workloads, same run.

For changes that must not slow anything (e.g. moving shared Cython code into a ``.pxd``):
each build runs in its own process (the extension modules of both cannot share one), the
processes alternate A, B, A, B, ..., and every workload is timed several times per process.
The table gives per build the median CPU time (``time.process_time``: what the process
consumed, so other jobs on a shared machine matter less) over all its timings, and B / A.

Usage::

    python -m bench.ab_kernels A_SRC B_SRC [--rounds 3] [--repeats 5]

where ``A_SRC`` and ``B_SRC`` are ``src`` directories holding a built ``spare_core`` (e.g. a
checkout of main with its kernels built in place, and this tree's ``src``); run it from the
repository root (the workloads are this tree's ``bench/workloads.py``). Workloads: the
flow kernels (SSP with unit paths, SSP, cost scaling, network simplex), a RECTLR failure
sequence, Hopcroft-Karp solves, renewal simulations and whole training runs (``simulate``
on the paper's preset and a Llama-3-like job), at sizes where one call takes tens to
hundreds of milliseconds.
"""
from __future__ import annotations

import warnings

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _workloads():
    """name -> zero-argument callable (instances built once, outside the timing)."""
    # the retired event engine is still A/B-timed until it is removed
    warnings.filterwarnings("ignore", message=r"spare_core\.events\..* is retired", category=DeprecationWarning)
    import numpy as np

    from spare_core.distributions import Deterministic, LogNormal, Weibull
    from spare_core.events import simulate_renewals
    from spare_core.strategies.spare.layout import StackedLayout
    from spare_core.graph.matching import hopcroft_karp
    from spare_core.strategies.spare.rectlr import Rectlr

    from bench.peers import solve_ours
    from bench.workloads import SEED, failure_order, make_generic, make_reassign, redundancy_graph, uniform_graph

    re5, re6 = make_reassign(10**5, seed=1), make_reassign(10**6, seed=1)
    ge4, ge5 = make_generic(10**4, seed=1), make_generic(10**5, seed=1)
    ctl = Rectlr(StackedLayout(10_000, 14))
    order = failure_order(10_000)
    g_uni = uniform_graph(100_000, np.random.default_rng([SEED, 11]))
    g_red, cap_red = redundancy_graph(50_000, 5, np.random.default_rng([SEED, 11]))
    life = Weibull(0.78, 100.0)

    def rectlr_sequence():
        ctl.restart()
        return ctl.fail_many_arrays(order)

    from spare_core.sim import Scenario, make_policy, simulate

    paper = Scenario.paper_600k(600, n_steps=2000)
    llama = Scenario.llama3_16k(n_steps=50_000)

    def runs(scenario, policies):
        return lambda: [simulate(scenario, p, seed=s) for p in policies for s in range(3)]

    out = {
        "flow reassign 1e5 (ssp, unit paths)": lambda: solve_ours(re5),
        "flow reassign 1e6 (ssp, unit paths)": lambda: solve_ours(re6),
        "flow generic 1e4 ssp": lambda: solve_ours(ge4, "ssp"),
        "flow generic 1e4 cost_scaling": lambda: solve_ours(ge4, "cost_scaling"),
        "flow generic 1e5 network_simplex": lambda: solve_ours(ge5, "network_simplex"),
        "rectlr sequence N=1e4 r=14": rectlr_sequence,
        "matching uniform 1e5": lambda: hopcroft_karp(g_uni),
        "matching redundancy 5e4 r=5": lambda: hopcroft_karp(g_red, capacity=cap_red),
        "events renewals 6e4 fixed repair": lambda: simulate_renewals(
            60_000, life, Deterministic(10.0), 500.0, seed=0),
        "events renewals 6e4 lognormal repair": lambda: simulate_renewals(
            60_000, life, LogNormal(10.0, 1.0), 500.0, seed=0),
        # whole runs through the _timeline kernel (the paper's policies: what must not slow)
        "simulate paper N=600 ckpt/rep/spare": runs(paper, [make_policy("ckpt"), make_policy("rep", 6),
                                                            make_policy("spare", 8)]),
        "simulate llama3 16k ckpt/spare": runs(llama, [make_policy("ckpt"), make_policy("spare", 4)]),
    }
    out.update(_feature_workloads(llama, runs, make_policy))
    return out


#: a workload of a newer key -> the same workload without it (timed in the same process: what
#: the key costs); a build that does not have the key skips both
FEATURES = {
    "simulate llama3 16k ckpt/spare, async saves": "simulate llama3 16k ckpt/spare",
    "simulate llama3 16k elastic+repairs, step overhead 3 %": "simulate llama3 16k elastic+repairs",
    "simulate llama3 16k ckpt/spare+repairs, failure classes": "simulate llama3 16k ckpt/spare+repairs",
    "simulate llama3 16k ckpt/spare+repairs, repair laws": "simulate llama3 16k ckpt/spare+repairs",
}


def _feature_workloads(llama, runs, make_policy) -> dict:
    """The workloads of :data:`FEATURES` this build can run (an older build lacks the keys)."""
    from spare_core.sim.recovery import Repairs

    out = {}
    repaired = llama.replace(repair=Repairs(swap=600.0, spares=16, time=86400.0, rejoin=120.0, gpus_per_node=8))
    try:
        out["simulate llama3 16k ckpt/spare, async saves"] = runs(
            llama.replace(checkpoint_drain=120.0), [make_policy("ckpt"), make_policy("spare", 4)])
    except (TypeError, ValueError):
        pass
    pols = [make_policy("ckpt"), make_policy("spare", 4)]
    try:
        from spare_core.distributions import Exponential, LogNormal
        from spare_core.sim.classes import FailureClass, FailureClasses

        classes = FailureClasses((FailureClass("hardware", 0.75, "swap", detect=30.0),
                                  FailureClass("software", 0.25, "restart", detect=Exponential(300.0))))
        out["simulate llama3 16k ckpt/spare+repairs, failure classes"] = runs(
            repaired.replace(failure_classes=classes), pols)
        out["simulate llama3 16k ckpt/spare+repairs, repair laws"] = runs(repaired.replace(repair=Repairs(
            swap=Exponential(600.0), spares=16, time=LogNormal(7200.0, 1.0), escalate=0.8,
            manual_time=Exponential(172800.0), rejoin=120.0, gpus_per_node=8)), pols)
        out["simulate llama3 16k ckpt/spare+repairs"] = runs(repaired, pols)
    except (ImportError, TypeError, ValueError):
        pass
    try:
        out["simulate llama3 16k elastic+repairs, step overhead 3 %"] = runs(
            repaired, [make_policy("elastic", step_overhead="3 %")])
        out["simulate llama3 16k elastic+repairs"] = runs(repaired, [make_policy("elastic")])
    except (TypeError, ValueError):
        pass
    return out


def _child(repeats: int) -> None:
    """Time every workload ``repeats`` times (after one warm-up call); print JSON."""
    out = {}
    for name, fn in _workloads().items():
        fn()
        times = []
        for _ in range(repeats):
            c0 = time.process_time()
            fn()
            times.append(time.process_time() - c0)
        out[name] = times
    print(json.dumps(out))


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        _child(int(argv[1]))
        return 0
    import argparse

    ap = argparse.ArgumentParser(description="A/B timing of two spare_core builds")
    ap.add_argument("a_src")
    ap.add_argument("b_src")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ns = ap.parse_args(argv)
    rounds, repeats = ns.rounds, ns.repeats
    a_src, b_src = str(Path(ns.a_src).resolve()), str(Path(ns.b_src).resolve())
    times = {"A": {}, "B": {}}
    for k in range(rounds):
        for label, src in (("A", a_src), ("B", b_src)):
            # the build's src first (its spare_core), this tree's root for bench.workloads
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, str(ROOT)]))
            res = subprocess.run([sys.executable, "-m", "bench.ab_kernels", "--child", str(repeats)], env=env,
                                 capture_output=True, text=True, check=True, cwd=ROOT)
            for name, ts in json.loads(res.stdout.strip().splitlines()[-1]).items():
                times[label].setdefault(name, []).extend(ts)
            print(f"round {k + 1}/{rounds} {label} done", file=sys.stderr, flush=True)
    print(f"median CPU seconds over {rounds} processes x {repeats} calls; A = {a_src}, B = {b_src}")
    print(f"{'workload':56s} {'A':>10s} {'B':>10s} {'B / A':>7s}")
    for name in times["A"]:
        if name not in times["B"]:
            continue
        a, b = statistics.median(times["A"][name]), statistics.median(times["B"][name])
        print(f"{name:56s} {a:10.4g} {b:10.4g} {b / a:7.3f}")
    for label in ("A", "B"):
        rows = [(f, base) for f, base in FEATURES.items() if f in times[label] and base in times[label]]
        if rows:
            print(f"\n{label}: a newer key against the same runs without it, same process")
            for f, base in rows:
                x, y = statistics.median(times[label][f]), statistics.median(times[label][base])
                print(f"{f:56s} {x:10.4g} {y:10.4g} {x / y:7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
