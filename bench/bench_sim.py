"""pytest-benchmark suite of the time-to-train simulation, grouped like SimPy's suite.

``python -m pytest bench/bench_sim.py``: micro (the compiled timeline kernel on a batch of
failures, the epoch turnover), run (one run of each policy on the paper preset, ours, the
step-by-step pure-Python reference and the SimPy peer of ``bench/peers.py`` on the same
workload), whole (a slice of the ``spare compare`` sweep). ``python -m bench.ratios sim``
prints the ratios (and ``--failure-models`` the failure-model table).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from spare_core.sim import Scenario, simulate, sweep
from spare_core.sim._reference import reference_simulate

from bench.peers import simpy_simulate
from bench.workloads import TURNOVER_EPOCHS, epoch_turnover, sim_runs


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
    benchmark.extra_info["workload"] = f"{TURNOVER_EPOCHS} restarts + first failure, N=600 ({how})"
    benchmark(epoch_turnover(how))


@pytest.mark.parametrize("i", range(3))
@pytest.mark.benchmark(group="sim-run")
def test_simulate(benchmark, i):
    name, s, pol = sim_runs(True)[i]
    benchmark.extra_info["workload"] = name
    benchmark(simulate, s, pol, seed=0)


@pytest.mark.parametrize("i", range(3))
@pytest.mark.benchmark(group="sim-run")
def test_reference(benchmark, i):
    name, s, pol = sim_runs(True)[i]
    benchmark.extra_info["workload"] = name + " (reference)"
    benchmark.pedantic(reference_simulate, args=(s, pol), kwargs={"seed": 0}, rounds=3, iterations=1)


@pytest.mark.parametrize("i", range(3))
@pytest.mark.benchmark(group="sim-run")
def test_simpy_peer(benchmark, i):
    pytest.importorskip("simpy")
    name, s, pol = sim_runs(True)[i]
    benchmark.extra_info["workload"] = name + " (SimPy)"
    benchmark.pedantic(simpy_simulate, args=(s, pol), kwargs={"seed": 0}, rounds=3, iterations=1)


@pytest.mark.parametrize("model", ["per-unit", "node", "system"])
@pytest.mark.benchmark(group="sim-whole")
def test_compare_sweep_small(benchmark, model):
    scen = [Scenario.paper_600k(n, n_steps=2000, failure_model=model) for n in (200, 600)]
    benchmark.extra_info["workload"] = f"compare sweep slice, {model} failures"
    benchmark.pedantic(sweep, args=(scen, ("ckpt", "rep", "spare"), range(1, 11), range(2)), rounds=1, iterations=1)
