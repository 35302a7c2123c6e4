"""pytest-benchmark suite of ``spare_core.pacing.simulate_iterations`` with its numpy peer.

The peer (``bench/peers.py``'s ``numpy_peer``) is the same model written the way a numpy user
would: vectorised over ranks *and* a chunk of iterations, link loads of any fabric's link
incidence via ``np.bincount`` and ``np.maximum.at``, the controller's hysteresis as a scalar
loop over the spreads (which pacing does not change). The training simulators a user might
otherwise pick (the SPARe paper's DES, ASTRA-sim, SimAI) have no per-rank jitter or pacing and
are not installable as libraries, so there is no like-for-like third-party peer.

Usage::

    python -m pytest bench/bench_pacing.py --benchmark-only    # pytest-benchmark groups
    python -m bench.ratios pacing [--repeats 5] [--quick]      # ours vs peer, same run, ratios
"""
from __future__ import annotations

from spare_core.pacing import NoPacing, PacingScenario, SpreadPacer, simulate_iterations

from bench.peers import numpy_peer
from bench.workloads import top_of_rack


# ---------------------------------------------------------------- pytest-benchmark groups
def _bench(benchmark, n, it, ctrl, rounds):
    sc = PacingScenario(n_nodes=n)
    benchmark.pedantic(simulate_iterations, args=(sc, it), kwargs=dict(controller=ctrl, seed=1),
                       rounds=rounds, iterations=1)


def test_whole_64_nodes_10k_iterations_no_pacing(benchmark):
    benchmark.group = "pacing: 64 nodes x 10k iterations"
    _bench(benchmark, 64, 10_000, NoPacing(), 5)


def test_whole_64_nodes_10k_iterations_pacing(benchmark):
    benchmark.group = "pacing: 64 nodes x 10k iterations"
    _bench(benchmark, 64, 10_000, SpreadPacer(), 5)


def test_peer_numpy_64_nodes_10k_iterations(benchmark):
    benchmark.group = "pacing: 64 nodes x 10k iterations"
    benchmark.pedantic(numpy_peer, args=(PacingScenario(n_nodes=64), 10_000, 1, NoPacing()), rounds=3,
                       iterations=1)


def test_whole_64_nodes_10k_iterations_top_of_rack(benchmark):
    benchmark.group = "pacing: 64 nodes x 10k iterations"
    benchmark.pedantic(simulate_iterations, args=(PacingScenario(n_nodes=64, fabric=top_of_rack()), 10_000),
                       kwargs=dict(controller=NoPacing(), seed=1), rounds=5, iterations=1)


def test_whole_100k_ranks_1k_iterations(benchmark):
    benchmark.group = "pacing: 100k ranks x 1k iterations"
    _bench(benchmark, 12_500, 1_000, SpreadPacer(), 2)


def test_targeted_custom_controller_path_64_nodes_1k(benchmark):
    # the Python protocol path: one kernel call per iteration
    benchmark.group = "pacing: controller paths, 64 nodes x 1k iterations"
    sc = PacingScenario(n_nodes=64)
    benchmark.pedantic(simulate_iterations, args=(sc, 1_000),
                       kwargs=dict(controller=SpreadPacer(), seed=1, use_kernel_controller=False),
                       rounds=3, iterations=1)
