"""pytest-benchmark suite for spare_core.graph.matching, each group with its scipy peer.

``python -m pytest bench/bench_matching.py`` (needs the bench extra). Groups follow the
micro / targeted layout of bench/conftest.py; compare the rows within a group, and use
``python -m bench.ratios matching`` for the ratio table at full size.
"""
import numpy as np
import pytest

from spare_core.graph.matching import IncrementalMatching, hopcroft_karp

from bench.peers import scipy_size
from bench.workloads import SEED, cyclic_graph, expand_slots, hard_graph, redundancy_graph, tight_case, uniform_graph

pytest.importorskip("pytest_benchmark")


# -- micro: one group failure on a SPARe graph (family d, reduced size) --------------------------

@pytest.fixture(scope="module")
def spare_state():
    n = 100_000
    g = cyclic_graph(n, 3)
    im = IncrementalMatching(g, capacity=np.full(n, 2))
    return n, g, im


@pytest.mark.benchmark(group="micro: one group fails, N=1e5 r=3 S=2")
def test_incremental_repair(benchmark, spare_state):
    n, _, im = spare_state
    groups = iter(np.random.default_rng([SEED, 10]).integers(0, n, 10**6).tolist())

    def fail_and_repair():
        j = next(groups)
        im.disable_right(j)
        size = im.augment()
        im.enable_right(j)     # undo (its re-augment is cheap: nothing is pending)
        return size

    assert benchmark(fail_and_repair) == n


@pytest.mark.benchmark(group="micro: one group fails, N=1e5 r=3 S=2")
def test_incremental_repair_peer_scipy_fresh(benchmark, spare_state):
    n, g, _ = spare_state
    cap = np.full(n, 2, dtype=np.int64)
    cap[7] = 0
    ge = expand_slots(g, cap)
    assert benchmark.pedantic(scipy_size, args=(ge,), rounds=3) == n


# -- targeted: hard, uniform, redundancy-shaped and tight graphs -------------------------------

CASES = {
    "b hard 1e5": lambda rng: (hard_graph(100_000, rng), None),
    "c uniform 1e5": lambda rng: (uniform_graph(100_000, rng), None),
    "a redundancy 5e4 r=5": lambda rng: redundancy_graph(50_000, 5, rng),
    "e tight N=1000 r=20": lambda rng: tight_case(1000, 20, 2, rng)[:2],
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    g, cap = CASES[request.param](np.random.default_rng([SEED, 11]))
    ge = g if cap is None else expand_slots(g, cap)
    return request.param, g, cap, ge


def test_solve(benchmark, case):
    name, g, cap, ge = case
    benchmark.group = f"targeted: {name}"
    size = benchmark(lambda: hopcroft_karp(g, capacity=cap).size)
    assert size == scipy_size(ge)


def test_solve_peer_scipy(benchmark, case):
    name, g, cap, ge = case
    benchmark.group = f"targeted: {name}"
    benchmark.pedantic(scipy_size, args=(ge,), rounds=3)
