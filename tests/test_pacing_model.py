"""Analytic collective cost, the jitter-free limit of the simulator, and bad input."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from spare_core.pacing import (CollectiveModel, ComputeModel, FabricModel, NoPacing, PacingScenario,
                               SpreadPacer, collective_time, simulate_iterations)


def test_ring_formula_by_hand():
    # one GPU per node: the flat ring is the textbook 2(p-1)a + 2(p-1)/p n b + (p-1)/p n g
    f = FabricModel(gpus_per_node=1, nic_bandwidth=2e9, net_latency=1e-5)
    c = CollectiveModel(algorithm="ring", message_bytes=3e9, reduce_bandwidth=5e11)
    p = 6
    want = 2 * (p - 1) * 1e-5 + 2 * (p - 1) / p * 3e9 / 2e9 + (p - 1) / p * 3e9 / 5e11
    assert collective_time(p, f, c) == pytest.approx(want, rel=1e-12)
    # contention divides the NIC bandwidth; locality adds latency and a derate
    want_c = 2 * (p - 1) * 3e-5 + 2 * (p - 1) / p * 3e9 * 1.5 * 4 / 2e9 + (p - 1) / p * 3e9 / 5e11
    assert collective_time(p, f, c, contention=4, extra_latency=2e-5, derate=1.5) == pytest.approx(want_c)


def test_hierarchical_formula_by_hand():
    f = FabricModel(gpus_per_node=4, nic_bandwidth=1e10, net_latency=2e-6, nvlink_bandwidth=1e11,
                    nvlink_latency=1e-6)
    c = CollectiveModel(message_bytes=4e8, reduce_bandwidth=1e12)
    n, g, m = 5, 4, 4e8
    intra = 2 * ((g - 1) * 1e-6 + (g - 1) / g * m / 1e11) + (g - 1) / g * m / 1e12
    inter = 2 * (n - 1) * 2e-6 + 2 * (n - 1) / n * (m / g) / 1e10 + (n - 1) / n * (m / g) / 1e12
    assert collective_time(n, f, c) == pytest.approx(intra + inter, rel=1e-12)
    # a single node is the intra-node part alone, for either algorithm
    ring = CollectiveModel(algorithm="ring", message_bytes=4e8, reduce_bandwidth=1e12)
    assert collective_time(1, f, c) == pytest.approx(intra, rel=1e-12)
    assert collective_time(1, f, ring) == pytest.approx(intra, rel=1e-12)


def test_hierarchical_pays_fewer_latency_steps_than_flat_ring_at_scale():
    f = FabricModel(net_latency=1e-4)
    small = CollectiveModel(message_bytes=1e6)
    assert collective_time(512, f, small) < collective_time(512, f, CollectiveModel(algorithm="ring", message_bytes=1e6))


@given(st.integers(1, 80), st.integers(1, 8), st.sampled_from(["hierarchical", "ring"]),
       st.integers(1, 20), st.sampled_from([1.0, 2.0, 4.0]))
def test_without_jitter_and_contention_iteration_time_is_analytic(n, g, alg, npl, o):
    # identical ranks arrive together (nothing parks, no incast) and a topology-ordered
    # ring crosses each leaf boundary once (no link is shared): every iteration must be
    # t_compute + the alpha-beta-gamma cost exactly
    sc = PacingScenario(n_nodes=n, compute=ComputeModel.ideal(0.3),
                        fabric=FabricModel.uncontended(gpus_per_node=g, nodes_per_leaf=npl, oversubscription=o),
                        collective=CollectiveModel(algorithm=alg))
    for ctrl in (NoPacing(), SpreadPacer()):
        r = simulate_iterations(sc, 5, controller=ctrl, seed=0)
        np.testing.assert_allclose(r.time, 0.3 + collective_time(n, sc.fabric, sc.collective), rtol=1e-12)
        assert (r.incast == 0).all() and (r.contention == 1).all() and (r.spread == 0).all()
        assert not r.paced.any()       # zero spread never crosses the threshold


def test_random_ring_order_creates_contention_topology_order_does_not():
    comp = ComputeModel.ideal()
    for order, expect_shared in (("random", True), ("topology", False)):
        sc = PacingScenario(n_nodes=128, compute=comp, fabric=FabricModel(ring_order=order))
        r = simulate_iterations(sc, 20, seed=3)
        assert (r.contention > 1).any() == expect_shared


def test_oversubscription_raises_contention():
    comp = ComputeModel.ideal()
    k = [simulate_iterations(PacingScenario(n_nodes=128, compute=comp, fabric=FabricModel(oversubscription=o)),
                             200, seed=4).contention.mean() for o in (1.0, 2.0, 4.0)]
    assert k[0] < k[1] < k[2]


def test_scenario_properties():
    sc = PacingScenario(n_nodes=64)
    assert sc.n_ranks == 512
    assert sc.release_latency == pytest.approx(1e-3 + 6 * 5e-6)
    assert PacingScenario(n_nodes=1).release_latency == pytest.approx(1e-3)
    assert sc.nominal_step == pytest.approx(0.5 + collective_time(64))
    assert FabricModel(nodes_per_leaf=16, oversubscription=3.0).n_spines == 5
    assert FabricModel(nodes_per_leaf=2, oversubscription=8.0).n_spines == 1


@pytest.mark.parametrize("make, exc, match", [
    (lambda: ComputeModel(t_compute=-1.0), ValueError, "t_compute must be > 0"),
    (lambda: ComputeModel(t_compute=0.0), ValueError, "t_compute must be > 0"),
    (lambda: ComputeModel(jitter=-0.1), ValueError, "jitter must be >= 0"),
    (lambda: ComputeModel(slow_fraction=1.5), ValueError, "slow_fraction must be <= 1"),
    (lambda: ComputeModel(slow_factor=0.5), ValueError, "slow_factor must be >= 1"),
    (lambda: ComputeModel(episode_median=-5), ValueError, "episode_median must be > 0"),
    (lambda: ComputeModel(t_compute=float("nan")), ValueError, "t_compute must be finite"),
    (lambda: ComputeModel(t_compute="1"), TypeError, "t_compute must be a real number"),
    (lambda: FabricModel(oversubscription=0.5), ValueError, "oversubscription must be >= 1"),
    (lambda: FabricModel(gpus_per_node=0), ValueError, "gpus_per_node must be >= 1"),
    (lambda: FabricModel(nodes_per_leaf=0), ValueError, "nodes_per_leaf must be >= 1"),
    (lambda: FabricModel(ring_order="zigzag"), ValueError, "ring_order must be one of"),
    (lambda: FabricModel(nic_bandwidth=0), ValueError, "nic_bandwidth must be > 0"),
    (lambda: FabricModel(net_latency=-1e-6), ValueError, "net_latency must be >= 0"),
    (lambda: FabricModel(rto=-1.0), ValueError, "rto must be >= 0"),
    (lambda: FabricModel(buffer_idle=-1.0), ValueError, "buffer_idle must be >= 0"),
    (lambda: FabricModel(buffer=4e6, buffer_idle=1e6), ValueError, "buffer_idle must be >= buffer"),
    (lambda: FabricModel(background_duty=1.5), ValueError, "background_duty must be <= 1"),
    (lambda: FabricModel(background_duty=-0.1), ValueError, "background_duty must be >= 0"),
    (lambda: FabricModel(background_duty="often"), TypeError, "background_duty must be a real number"),
    (lambda: FabricModel(background_run=0.5), ValueError, "background_run must be >= 1"),
    (lambda: FabricModel(background_duty=0.8, background_run=2.0), ValueError, "background_run must be >= duty / \\(1 - duty\\) = 4"),
    (lambda: FabricModel(locality_probs=(0.5, 0.4)), ValueError, "locality_probs must be non-empty and sum to 1"),
    (lambda: FabricModel(locality_probs=(1.0,), locality_latency=(0.0, 1.0), locality_derate=(1.0,)),
     ValueError, "locality_latency must have length 1"),
    (lambda: FabricModel(locality_probs=(1.0,), locality_latency=(0.0,), locality_derate=(0.5,)),
     ValueError, "locality_derate must be >= 1"),
    (lambda: CollectiveModel(algorithm="tree"), ValueError, "algorithm must be one of"),
    (lambda: CollectiveModel(message_bytes=-1), ValueError, "message_bytes must be >= 0"),
    (lambda: PacingScenario(n_nodes=0), ValueError, "n_nodes must be >= 1"),
    (lambda: PacingScenario(n_nodes=2.5), TypeError, "n_nodes must be an integer"),
    (lambda: PacingScenario(n_nodes=4, fabric="fat"), TypeError, "fabric must be a FabricModel"),
    (lambda: PacingScenario(n_nodes=4, release_overhead=-1), ValueError, "release_overhead must be >= 0"),
    (lambda: SpreadPacer(threshold_on=-0.1), ValueError, "threshold_on must be >= 0"),
    (lambda: SpreadPacer(threshold_off=-0.1), ValueError, "threshold_off must be >= 0"),
    (lambda: SpreadPacer(threshold_on=0.1, threshold_off=0.2), ValueError, "threshold_off must be <="),
    (lambda: SpreadPacer(hold_max=-1.0), ValueError, "hold_max must be >= 0"),
    (lambda: SpreadPacer(patience=0), ValueError, "patience must be >= 1"),
    (lambda: collective_time(0), ValueError, "n_nodes must be >= 1"),
    (lambda: collective_time(4, contention=0.5), ValueError, "contention must be >= 1"),
    (lambda: collective_time(4, derate=0.9), ValueError, "derate must be >= 1"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=2), 0, seed=1), ValueError, "n_iterations must be >= 1"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=2), 5, seed=None), TypeError, "seed must be"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=2), 5, seed=-3), ValueError, "seed must be >= 0"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=2), 5, seed=np.random.default_rng(1)), TypeError,
     "seed must be an int"),
    (lambda: simulate_iterations("64 nodes", 5, seed=1), TypeError, "scenario must be a PacingScenario"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=2), 5, seed=1, controller=object()), TypeError,
     "controller must have"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=2), 5, seed=1, record_ranks=1), TypeError,
     "record_ranks must be a bool"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=2), 5, seed=1, use_kernel_controller="no"), TypeError,
     "use_kernel_controller must be a bool"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=4096), 1000, seed=1, record_ranks=True), ValueError,
     "record_ranks needs"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=64, compute=ComputeModel(episode_rate=50.0)), 10, seed=1),
     ValueError, "episodes must stay tractable"),
    (lambda: simulate_iterations(PacingScenario(n_nodes=1, compute=ComputeModel(episode_max=1e9)), 10, seed=1),
     ValueError, "episodes must stay tractable"),
])
def test_bad_input_is_rejected_with_a_clear_message(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_episodes_slow_ranks_down_for_their_duration():
    # a huge episode rate with long episodes: nearly every rank is throttled by the factor
    comp = ComputeModel(t_compute=1.0, jitter=0.0, speed_spread=0.0, slow_fraction=0.0,
                        episode_rate=0.01, episode_median=1e4, episode_sigma=0.0, episode_max=1e4,
                        episode_factor=1.7)
    sc = PacingScenario(n_nodes=2, compute=comp, fabric=FabricModel.uncontended())
    r = simulate_iterations(sc, 20, seed=1)
    np.testing.assert_allclose(r.arrival_max, 1.7, rtol=1e-12)


def test_persistent_outliers_set_the_pace():
    comp = ComputeModel(t_compute=1.0, jitter=0.0, speed_spread=0.0, slow_fraction=1.0, slow_factor=1.5,
                        episode_rate=0.0)
    r = simulate_iterations(PacingScenario(n_nodes=3, compute=comp), 4, seed=2)
    np.testing.assert_allclose(r.arrival_max, 1.5, rtol=1e-12)
    assert math.isclose(float(r.spread.max()), 0.0, abs_tol=1e-12)


def test_background_runs_keep_the_duty_and_set_the_mean_busy_run():
    from spare_core.pacing.simulate import draw_busy

    duty, run, c, leaves = 0.1, 25.0, 20_000, 40
    rng = np.random.default_rng(7)
    busy, _ = draw_busy(rng, c, leaves, duty, run)
    assert busy.mean() == pytest.approx(duty, rel=0.1)
    # mean length of the maximal busy runs, over all leaves
    edges = np.diff(np.vstack([np.zeros((1, leaves), np.int8), busy.astype(np.int8), np.zeros((1, leaves), np.int8)]), axis=0)
    starts, ends = np.nonzero(edges.T == 1), np.nonzero(edges.T == -1)
    lengths = ends[1] - starts[1]
    assert lengths.mean() == pytest.approx(run, rel=0.1)
    # i.i.d. (run=None): the old draws exactly, and its mean run is 1 / (1 - duty)
    u = np.random.default_rng(3).random((c, leaves))
    iid, _ = draw_busy(np.random.default_rng(3), c, leaves, duty)
    assert np.array_equal(iid, (u < duty).astype(np.uint8))


@pytest.mark.parametrize("run", [None, 5.0])
def test_background_chain_continues_across_chunks(run):
    from spare_core.pacing.simulate import draw_busy

    whole, _ = draw_busy(np.random.default_rng(11), 300, 6, 0.2, run)
    rng = np.random.default_rng(11)
    a, state = draw_busy(rng, 120, 6, 0.2, run)
    b, _ = draw_busy(rng, 180, 6, 0.2, run, state)
    assert np.array_equal(whole, np.vstack([a, b]))


def test_background_runs_leave_the_iid_simulation_unchanged_and_change_the_correlated_one():
    sc = PacingScenario(n_nodes=64)
    base = simulate_iterations(sc, 300, seed=1).time
    same = simulate_iterations(PacingScenario(n_nodes=64, fabric=FabricModel(background_run=None)), 300, seed=1).time
    runs = simulate_iterations(PacingScenario(n_nodes=64, fabric=FabricModel(background_run=50.0)), 300, seed=1).time
    assert np.array_equal(base, same) and not np.array_equal(base, runs)
