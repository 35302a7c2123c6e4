"""Benchmarks of ``spare_core.pacing.simulate_iterations`` and its peer-comparison ratios.

Peer: the same model written the way a numpy user would (``numpy_peer`` below):
vectorised over ranks *and* a chunk of iterations, link loads of any fabric's link
incidence via ``np.bincount`` and ``np.maximum.at``, the controller's hysteresis as a
scalar loop over the spreads (which pacing does not change). The training simulators a
user might otherwise pick (the SPARe paper's DES, ASTRA-sim, SimAI) have no per-rank
jitter or pacing and are not installable as libraries, so there is no like-for-like
third-party peer. Both sides get the same noise from the same seed; the ratio script
checks they agree before timing.

Usage::

    python -m pytest bench/bench_pacing.py --benchmark-only    # pytest-benchmark groups
    python bench/bench_pacing.py [--repeats 5] [--quick]       # ours vs peer, same run, ratios
"""
from __future__ import annotations

import argparse
import statistics
import time
import timeit

import numpy as np

import spare_core.pacing.simulate as sim
from spare_core.pacing import (FabricModel, NoPacing, PacingScenario, SpreadPacer, TopOfRackFabric,
                               simulate_iterations)

WORKLOADS = {"64 nodes x 10,000 it": (64, 10_000), "100k ranks x 1,000 it": (12_500, 1_000)}
QUICK = {"64 nodes x 1,000 it": (64, 1_000), "100k ranks x 20 it": (12_500, 20)}
# the same workloads on a top-of-rack fabric (every rail on one plane: the kernel's shared pass)
TOR = FabricModel(topology=TopOfRackFabric())


def numpy_peer(scenario, n_iterations, seed, controller):
    """Iteration times of the model in plain numpy (same streams, same results)."""
    root = np.random.SeedSequence(seed)
    real = sim.Realisation.draw(scenario, n_iterations, root)
    model = sim.KernelModel.build(scenario, real)
    inc = model.incidence
    f = scenario.fabric
    g, n, p = f.gpus_per_node, scenario.n_nodes, scenario.n_ranks
    P, F, D, PL = inc.n_paths, inc.n_flows, inc.n_domains, inc.plane_links
    n_planes = inc.n_planes
    own_plane = np.bincount(inc.rail_plane, minlength=n_planes).max() == 1
    # each rail's hops (g, F, H): a 2-d table serves every rail
    hops = np.broadcast_to(inc.hops, (g,) + inc.hops.shape[-2:]) if inc.hops.ndim == 2 else inc.hops
    H = hops.shape[2]
    simple = inc.path_links is None and bool((hops >= 0).all())
    sigma = scenario.compute.jitter
    rng_j, rng_e, rng_b = sim.stream(root, "jitter"), sim.stream(root, "ecmp"), sim.stream(root, "background")
    ep_rank, ep_start, ep_end, ep_fac = model.episodes
    chunk = max(1, min(n_iterations, sim.CHUNK_CELLS // max(p, g * F, 1)))
    pacer = controller if isinstance(controller, SpreadPacer) else None
    on, calm = False, 0
    times = []
    n_links = n_planes * PL
    for it0 in range(0, n_iterations, chunk):
        c = min(chunk, n_iterations - it0)
        z = rng_j.standard_normal((c, p), dtype=np.float32)
        picks = rng_e.integers(0, P, size=(c, g, F), dtype=np.uint32)
        busy = rng_b.random((c, D)) < f.background_duty
        mult = np.ones((c, p))
        live = (ep_start < it0 + c) & (ep_end > it0)   # all factors are equal: max == merge
        for r, s, e, fac in zip(ep_rank[live], ep_start[live], ep_end[live], ep_fac[live]):
            mult[max(s - it0, 0):min(e - it0, c), r] = fac
        a = model.base * mult * np.exp(sigma * z.astype(np.float64) - 0.5 * sigma**2)
        amax = a.max(axis=1)
        spread = (amax - a.min(axis=1)) / a.mean(axis=1)
        hold = np.zeros(c)
        if pacer is not None:
            for k in range(c):       # decisions depend on spreads only, not on the holds
                hold[k] = pacer.hold_max if on else 0.0
                if not on:
                    if spread[k] > pacer.threshold_on:
                        on, calm = True, 0
                elif spread[k] < pacer.threshold_off:
                    calm += 1
                    if calm >= pacer.patience:
                        on, calm = False, 0
                else:
                    calm = 0
        paced = hold > 0
        e = np.where(paced[:, None],
                     np.minimum(a + hold[:, None], amax[:, None] + scenario.release_latency), a)
        node_e = e.reshape(c, n, g).max(axis=2)
        t0 = node_e.max(axis=1)
        parked = np.minimum(f.nic_bandwidth * (t0[:, None] - node_e), f.window)
        if F:
            offset = (np.arange(c)[:, None] * n_links + inc.rail_plane * PL)[:, :, None]     # (c, g, 1)
            pk = np.broadcast_to(parked[:, None, inc.flow_src], (c, g, F))
            if simple:
                # every built-in fabric: consecutive candidates, every hop present (the
                # cheapest numpy form: one (c, g, F) index array per hop)
                idx = np.stack([offset + hops[:, :, h] + picks for h in range(H)])      # (H, c, g, F)
                ok = None
                flat, wf = idx.ravel(), np.concatenate([pk.ravel()] * H)
            else:
                # link of every (hop, iteration, rail, flow); -1 where there is none
                seg = np.moveaxis(hops, 2, 0)[:, None]                                # (H, 1, g, F)
                cand = seg + picks[None]
                if inc.path_links is not None:
                    cand = np.where(seg >= 0, inc.path_links[np.maximum(cand, 0)], -1)
                ok = (seg >= 0) & (cand >= 0)
                idx = np.where(ok, cand + offset[None], -1)
                sel = idx.ravel() >= 0
                flat, wf = idx.ravel()[sel], np.broadcast_to(pk, idx.shape).ravel()[sel]
            size = c * n_links
            cnt = np.bincount(flat, minlength=size)
            vol = np.bincount(flat, weights=wf, minlength=size)
            big = np.zeros(size)
            np.maximum.at(big, flat, wf)
            # headroom per link from its buffer domain's busy flag
            room = np.where(busy[:, inc.link_domain], f.buffer, f.buffer_idle).ravel()
            over = np.where(cnt > 1, vol - big - room, 0.0)
            pen = np.where(over > 0, f.rto * np.ceil(over / (room + f.window)) + over / f.nic_bandwidth, 0.0)
            if own_plane:
                # a rail alone on its plane: its maxima are over the whole plane
                kk = cnt.reshape(c, n_planes, PL).max(axis=2)[:, inc.rail_plane]
                pen = pen.reshape(c, n_planes, PL).max(axis=2)[:, inc.rail_plane]
            else:
                # rails sharing a plane: maxima over the links each rail's flows crossed
                at = idx if ok is None else np.where(ok, idx, 0)
                kk = (cnt[at] if ok is None else np.where(ok, cnt[at], 0.0)).max(axis=(0, 3))
                pen = (pen[at] if ok is None else np.where(ok, pen[at], 0.0)).max(axis=(0, 3))
            kk = np.maximum(kk, 1.0)
        else:
            pen = np.zeros((c, g))
            kk = np.ones((c, g))
        t = model.terms
        rail = t.latency + np.maximum(t.bandwidth * kk, t.floor) + pen
        times.append(t0 + t.t_intra + rail.max(axis=1))
    return np.concatenate(times)


def time_medians(fn, repeats):
    """Median wall and median CPU (process) time of ``repeats`` calls."""
    cpu = []

    def timed():
        t = time.process_time()
        fn()
        cpu.append(time.process_time() - t)

    wall = statistics.median(timeit.repeat(timed, number=1, repeat=repeats))
    return wall, statistics.median(cpu)


def ratios(repeats=5, peer_iterations=None, workloads=WORKLOADS, fabric=None):
    """Median wall and CPU time of ours and of the peer on each workload, in one run."""
    rows = []
    for name, (n, it) in workloads.items():
        sc = PacingScenario(n_nodes=n) if fabric is None else PacingScenario(n_nodes=n, fabric=fabric)
        for ctrl in (NoPacing(), SpreadPacer()):
            # the peer is slow at 100k ranks: time it on a prefix, scale linearly
            it_peer = it if peer_iterations is None or n < 1000 else min(it, peer_iterations)
            ours = simulate_iterations(sc, it_peer, controller=ctrl, seed=1).time
            np.testing.assert_allclose(numpy_peer(sc, it_peer, 1, ctrl), ours, rtol=1e-9)
            w_ours, c_ours = time_medians(lambda: simulate_iterations(sc, it, controller=ctrl, seed=1), repeats)
            w_peer, c_peer = (t * it / it_peer for t in time_medians(lambda: numpy_peer(sc, it_peer, 1, ctrl), repeats))
            rows.append((name, type(ctrl).__name__, w_ours, w_peer, c_ours, c_peer))
    return rows


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
    benchmark.pedantic(simulate_iterations, args=(PacingScenario(n_nodes=64, fabric=TOR), 10_000),
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


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats per cell (median)")
    ap.add_argument("--peer-iterations", type=int, default=200,
                    help="cap on the peer's iterations at 100k ranks (time scaled linearly; default 200)")
    ap.add_argument("--quick", action="store_true", help="small sizes, a smoke run (seconds)")
    args = ap.parse_args()
    rows = ratios(2 if args.quick else args.repeats, args.peer_iterations, QUICK if args.quick else WORKLOADS)
    print(f"{'workload':<24} {'controller':<12} {'ours wall':>9} {'peer wall':>9} {'ratio':>6} "
          f"{'ours cpu':>9} {'peer cpu':>9} {'ratio':>6}")
    for name, ctrl, w_o, w_p, c_o, c_p in rows:
        print(f"{name:<24} {ctrl:<12} {w_o:>9.3f} {w_p:>9.3f} {w_p / w_o:>6.1f} {c_o:>9.3f} {c_p:>9.3f} "
              f"{c_p / c_o:>6.1f}")
    print("seconds, medians of repeats in one run; ratio = peer / ours; the peer's times at 100k ranks "
          "are measured on --peer-iterations iterations and scaled")
