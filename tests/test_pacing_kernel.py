"""The pacing kernel against an independent numpy re-implementation of the model, on the
built-in fabrics and on random link incidences; chunking invariance; the kernel's link
table and wrapper input checks; its exported constants."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import spare_core.pacing.simulate as sim
from spare_core._native import load
from spare_core.pacing import (BaselinePacer, CollectiveModel, ComputeModel, FabricModel, LinkIncidence,
                               NoPacing, PacingScenario, RailOptimisedFabric, SpreadPacer, TopOfRackFabric,
                               simulate_iterations)
from spare_core.pacing.fabrics import NO_LINK

kernel = load("_pacing_core")


def _links(inc, j, f, s):
    """Global link ids rail j's flow f crosses on path s, decoded from the documented
    contract (not from the library's helpers)."""
    plane = int(inc.rail_plane[j])
    out = []
    for seg in (inc.hops[j] if inc.hops.ndim == 3 else inc.hops)[f]:
        if seg == -1:
            continue
        lnk = seg + s if inc.path_links is None else inc.path_links[seg + s]
        if lnk != -1:
            out.append(plane * inc.plane_links + int(lnk))
    return out


def reference(inc, inp, z, picks, busy, it0, holds):
    """Straight numpy transcription of docs/pacing.md, one iteration at a time.

    Independent of the kernel's data layout: episodes are looked up by interval; every
    link's flows, bytes and largest burst are accumulated over all rails with np.add.at /
    np.maximum.at, and each rail takes its maxima over the links its flows crossed.
    """
    base, g = inp["base"], inp["g"]
    p = base.size
    n_nodes = p // g
    rank, start, end, factor = inp["ep_rank"], inp["ep_start"], inp["ep_end"], inp["ep_factor"]
    n_links = inc.link_domain.size
    out = {k: [] for k in ("time", "arrival_max", "spread", "held", "incast", "contention")}
    for k in range(z.shape[0]):
        it = it0 + k
        mult = np.ones(p)
        # merged episodes: active ones with start <= it < merged end; the merge rule in the
        # kernel (longer end, larger factor) equals "max factor over the active chain"
        for r in range(p):
            mult[r] = _episode_factor(rank, start, end, factor, r, it)
        a = base * mult * np.exp(inp["sigma"] * z[k].astype(np.float64) - 0.5 * inp["sigma"] ** 2)
        h = holds[k]
        e = np.minimum(a + h, a.max() + inp["ctrl_latency"]) if h > 0 else a.copy()
        node_e = e.reshape(n_nodes, g).max(axis=1)
        t0 = node_e.max()
        parked = np.minimum(inp["nic_bw"] * (t0 - node_e), inp["window"])
        cnt, vol, big = np.zeros(n_links), np.zeros(n_links), np.zeros(n_links)
        crossed = [[] for _ in range(g)]
        for j in range(g):
            for f in range(inc.flow_src.size):
                ls = _links(inc, j, f, int(picks[k, j, f]))
                crossed[j] += ls
                pk = parked[inc.flow_src[f]]
                np.add.at(cnt, ls, 1.0)
                np.add.at(vol, ls, pk)
                np.maximum.at(big, ls, pk)
        # headroom of each link: the contended share where competing traffic holds its
        # domain's shared buffer, the idle dynamic-threshold share elsewhere
        room = np.where(busy[k].astype(bool)[inc.link_domain], inp["buffer"], inp["buffer_idle"])
        over = vol - big - room
        pen = np.zeros(n_links)
        for i in np.flatnonzero(over > 0):
            pen[i] = inp["rto"] * math.ceil(over[i] / (room[i] + inp["window"])) + over[i] / inp["nic_bw"]
        tinter, kmax, dmax = 0.0, 1.0, 0.0
        for j in range(g):
            kk = max([1.0] + [cnt[i] for i in crossed[j]])
            pj = max([0.0] + [pen[i] for i in crossed[j]])
            kmax, dmax = max(kmax, kk), max(dmax, pj)
            rail = inp["rail_a"][j] + max(inp["rail_bw"][j] * kk, inp["rail_floor"][j]) + pj
            tinter = max(tinter, rail)
        out["time"].append(t0 + inp["t_intra"] + tinter)
        out["arrival_max"].append(a.max())
        out["spread"].append((a.max() - a.min()) / a.mean())
        out["held"].append((e - a).max())
        out["incast"].append(dmax)
        out["contention"].append(kmax)
    return {k: np.array(v) for k, v in out.items()}


def _episode_factor(rank, start, end, factor, r, it):
    # replay the episodes of rank r in start order with the merge rule
    until, fac = -(1 << 62), 1.0
    for i in np.flatnonzero(rank == r):
        if start[i] > it:
            break
        if until > start[i]:    # still active when this one starts: merge
            fac, until = max(fac, factor[i]), max(until, end[i])
        else:
            fac, until = factor[i], end[i]
    return fac if until > it else 1.0


def _fresh(base):
    """IN-OUT state of a simulation that starts at the kernel's first call."""
    p = base.size
    return dict(ep_until=np.zeros(p, np.int64), ep_fac=np.ones(p), eff=base.copy(),
                active=np.empty(p, np.intp), state=np.zeros(4, np.int64),
                bstate=np.array([np.nan, 1.0, -1.0]))


def _inputs(scenario, n_iter, seed):
    root = np.random.SeedSequence(seed)
    m = sim.KernelModel.build(scenario, sim.Realisation.draw(scenario, n_iter, root))
    f = scenario.fabric
    inp = dict(base=m.base, g=f.gpus_per_node, sigma=scenario.compute.jitter, links=m.links,
               rail_a=m.terms.latency, rail_bw=m.terms.bandwidth, rail_floor=m.terms.floor,
               t_intra=m.terms.t_intra, nic_bw=f.nic_bandwidth, window=f.window, buffer=f.buffer,
               buffer_idle=f.buffer_idle, rto=f.rto, ctrl_latency=scenario.release_latency,
               ep_rank=m.episodes[0], ep_start=m.episodes[1], ep_end=m.episodes[2], ep_factor=m.episodes[3])
    return m.incidence, inp


def _noise(inc, inp, n_iter, seed):
    rng = np.random.default_rng(seed)
    links = inp["links"]
    z = rng.standard_normal((n_iter, inp["base"].size), dtype=np.float32)
    picks = rng.integers(0, links.n_paths, size=(n_iter, inp["g"], links.n_flows), dtype=np.uint32)
    busy = (rng.random((n_iter, links.n_domains)) < 0.5).astype(np.uint8)
    return z, picks, busy


def _holds_call(inp, z, picks, busy, h, it0=3, record=True):
    return kernel.simulate_chunk(z=z, picks=picks, busy=busy, it0=it0, mode=kernel.MODE_HOLDS, holds=h,
                                 theta_on=0.0, theta_off=0.0, patience=1, hold_max=0.0, record=record,
                                 **_fresh(inp["base"]), **inp)


topologies = st.one_of(
    st.none(),
    st.builds(RailOptimisedFabric, st.integers(1, 6), st.sampled_from([1.0, 1.5, 3.0])),
    st.builds(TopOfRackFabric, st.integers(1, 4), st.sampled_from([1.0, 2.0, 8.0])))

scenarios = st.builds(
    lambda n, g, npl, o, topo, order, alg, jit, slow, ep, buf_mib, win_mib, idle_mib: PacingScenario(
        n_nodes=n,
        compute=ComputeModel(t_compute=0.2, jitter=jit, slow_fraction=slow, episode_rate=ep,
                             episode_median=2.0, episode_max=20.0),
        fabric=FabricModel(gpus_per_node=g, ring_order=order, buffer=buf_mib * 2**20, window=win_mib * 2**20,
                           buffer_idle=(buf_mib + idle_mib) * 2**20,
                           **(dict(nodes_per_leaf=npl, oversubscription=o) if topo is None else dict(topology=topo))),
        collective=CollectiveModel(algorithm=alg, message_bytes=1e8)),
    st.integers(1, 24), st.integers(1, 4), st.integers(1, 6), st.sampled_from([1.0, 1.5, 3.0]), topologies,
    st.sampled_from(["random", "topology"]), st.sampled_from(["hierarchical", "ring"]),
    st.sampled_from([0.0, 0.05, 0.3]), st.sampled_from([0.0, 0.2]), st.sampled_from([0.0, 0.05]),
    st.sampled_from([0.0, 1.0, 4.0]), st.sampled_from([0.0, 0.01, 4.0]), st.sampled_from([0.0, 3.0, 30.0]))


@given(scenarios, st.integers(0, 2**31), st.integers(1, 12),
       st.lists(st.sampled_from([0.0, 1e-4, 0.01, 0.05, 10.0]), min_size=12, max_size=12))
def test_kernel_matches_numpy_reference(scenario, seed, n_iter, holds):
    inc, inp = _inputs(scenario, n_iter, seed)
    z, picks, busy = _noise(inc, inp, n_iter, seed)
    h = np.array(holds[:n_iter])
    got = _holds_call(inp, z, picks, busy, h)
    # the pointer must skip episodes that ended before it0 the same way: start from 0
    want = reference(inc, inp, z, picks, busy, 3, h)
    for key, val in want.items():
        np.testing.assert_allclose(got[key], val, rtol=1e-12, atol=1e-12, err_msg=key)
    np.testing.assert_array_equal(got["hold"], h)
    np.testing.assert_array_equal(got["paced"], h > 0)


@st.composite
def random_incidences(draw):
    """Any valid incidence: planes shared or not, identity or table paths, absent hops."""
    n, g = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_planes = draw(st.integers(1, g))
    rail_plane = np.concatenate([np.arange(n_planes), rng.integers(0, n_planes, g - n_planes)])
    rng.shuffle(rail_plane)
    n_paths = draw(st.integers(1, 4))
    identity = draw(st.booleans())
    plane_links = draw(st.integers(n_paths if identity else 1, 10))
    n_flows, n_hops = draw(st.integers(0, 2 * n)), draw(st.integers(1, 3))
    if identity:
        path_links, top = None, plane_links - n_paths
    else:
        path_links = rng.integers(-1, plane_links, draw(st.integers(n_paths, 16)))
        top = path_links.size - n_paths
    shape = (g, n_flows, n_hops) if draw(st.booleans()) else (n_flows, n_hops)   # per rail or shared
    hops = np.where(rng.random(shape) < 0.2, -1, rng.integers(0, top + 1, shape))
    n_domains = draw(st.integers(1, 4))
    return n, g, LinkIncidence(flow_src=rng.integers(0, n, n_flows), hops=hops, path_links=path_links,
                               n_paths=n_paths, plane_links=plane_links, rail_plane=rail_plane,
                               link_domain=rng.integers(0, n_domains, n_planes * plane_links),
                               n_domains=n_domains)


@given(random_incidences(), st.integers(0, 2**31), st.integers(1, 6))
def test_kernel_matches_reference_on_any_link_incidence(case, seed, n_iter):
    n, g, inc = case
    sc = PacingScenario(n_nodes=n, compute=ComputeModel(t_compute=0.2, jitter=0.3),
                        fabric=FabricModel(gpus_per_node=g, buffer=2**20, window=2**20, buffer_idle=2**21),
                        collective=CollectiveModel(message_bytes=1e8))
    _, inp = _inputs(sc, n_iter, seed)
    inp["links"] = kernel.LinkTable(n_nodes=n, gpus_per_node=g, **inc.kernel_fields())
    z, picks, busy = _noise(inc, inp, n_iter, seed)
    h = np.array([0.0, 1e-3, 0.0, 10.0, 0.0, 0.0])[:n_iter]
    got = _holds_call(inp, z, picks, busy, h)
    want = reference(inc, inp, z, picks, busy, 3, h)
    for key, val in want.items():
        np.testing.assert_allclose(got[key], val, rtol=1e-12, atol=1e-12, err_msg=key)


def _old_leaf_spine_links(src, dst, n, npl, u):
    """The fabric as it was hard-wired before the Fabric protocol (kernel arithmetic):
    cross-leaf ring flows in ring order, uplink leaf*U + spine, downlink L*U + leaf*U + spine."""
    leaf_s, leaf_d = src // npl, dst // npl
    cross = leaf_s != leaf_d
    L = -(-n // npl)
    return src[cross], leaf_s[cross], leaf_d[cross], L


@given(st.integers(1, 60), st.integers(1, 8), st.integers(1, 20), st.sampled_from([1.0, 2.0, 3.0, 7.5]),
       st.integers(0, 2**31))
def test_rail_optimised_incidence_is_the_old_hard_wired_fabric(n, g, npl, o, seed):
    order = np.random.default_rng(seed).permutation(n)
    src, dst = (order, np.roll(order, -1)) if n > 1 else (np.zeros(0, int), np.zeros(0, int))
    fab = RailOptimisedFabric(npl, o)
    inc = fab.incidence(src, dst, n_nodes=n, gpus_per_node=g)
    u = max(1, int(round(npl / o)))
    fsrc, ls, ld, L = _old_leaf_spine_links(src, dst, n, npl, u)
    assert fab.n_spines == u == inc.n_paths == FabricModel(nodes_per_leaf=npl, oversubscription=o).n_spines
    assert inc.n_domains == L and inc.plane_links == 2 * L * u
    assert inc.rail_plane.tolist() == list(range(g))      # every rail its own plane
    np.testing.assert_array_equal(inc.flow_src, fsrc)
    for f in range(fsrc.size):
        for s in range(u):
            up, down = inc.links_of(0, f, s)
            assert (up, down) == (ls[f] * u + s, L * u + ld[f] * u + s)
            # buffer domain: the source leaf's uplink queue, the spine's queue toward the
            # destination leaf (same in every plane)
            for j in range(g):
                assert inc.link_domain[j * inc.plane_links + up] == ls[f]
                assert inc.link_domain[j * inc.plane_links + down] == ld[f]


def test_top_of_rack_counts_every_rail_on_a_shared_uplink():
    # one node per leaf, one uplink: each leaf's single uplink carries its node's ring flow
    # on every rail, so contention is exactly g in every iteration; rail-optimised leaves of
    # one node carry one flow each
    comp = ComputeModel.ideal()
    tor = PacingScenario(n_nodes=6, compute=comp,
                         fabric=FabricModel(gpus_per_node=4, topology=TopOfRackFabric(1, oversubscription=4.0)))
    rail = PacingScenario(n_nodes=6, compute=comp, fabric=FabricModel(gpus_per_node=4, nodes_per_leaf=1,
                                                                       oversubscription=1.0))
    a, b = simulate_iterations(tor, 20, seed=1), simulate_iterations(rail, 20, seed=1)
    assert (a.contention == 4).all() and (b.contention == 1).all()
    assert (a.time > b.time).all()


def test_results_do_not_depend_on_chunking(monkeypatch):
    sc = PacingScenario(n_nodes=40, compute=ComputeModel(episode_rate=1e-3, episode_median=5.0))
    tor = PacingScenario(n_nodes=12, fabric=FabricModel(topology=TopOfRackFabric(), background_run=5.0))
    ctrls = (SpreadPacer(), BaselinePacer(threshold_on=0.05, threshold_off=0.04, patience=2, smoothing=0.3))
    whole = [simulate_iterations(s, 300, controller=c, seed=5) for s in (sc, tor) for c in ctrls]
    # 7-iteration chunks at 40 nodes, 23-iteration ones at 12
    monkeypatch.setattr(sim, "CHUNK_CELLS", 7 * sc.n_ranks)
    parts = [simulate_iterations(s, 300, controller=c, seed=5) for s in (sc, tor) for c in ctrls]
    for w, q in zip(whole, parts):
        for key in ("time", "spread", "hold", "incast", "contention", "paced"):
            np.testing.assert_array_equal(getattr(w, key), getattr(q, key))
    assert 0 < whole[1].paced.mean() < 1      # the baseline pacer's state crossed chunk boundaries


def test_same_seed_same_result_and_different_seed_differs():
    sc = PacingScenario(n_nodes=20)
    a = simulate_iterations(sc, 50, seed=1)
    b = simulate_iterations(sc, 50, seed=1)
    c = simulate_iterations(sc, 50, seed=2)
    np.testing.assert_array_equal(a.time, b.time)
    assert not np.array_equal(a.time, c.time)


def _good_call(**override):
    sc = PacingScenario(n_nodes=8, fabric=FabricModel(nodes_per_leaf=2))
    _, inp = _inputs(sc, 4, 0)
    p, F = sc.n_ranks, inp["links"].n_flows
    args = dict(z=np.zeros((4, p), np.float32), picks=np.zeros((4, 8, F), np.uint32),
                busy=np.zeros((4, inp["links"].n_domains), np.uint8), it0=0, mode=kernel.MODE_NONE,
                holds=np.zeros(0), theta_on=0.0, theta_off=0.0, patience=1, hold_max=0.0,
                **_fresh(inp["base"]), **inp)
    args.update(override)
    return args


@pytest.mark.parametrize("override, match", [
    (lambda a: {"picks": a["picks"] + 99}, "picks must lie in"),
    (lambda a: {"picks": a["picks"][:, :3]}, "picks must have shape"),
    (lambda a: {"z": a["z"][:, :5]}, "z must have shape"),
    (lambda a: {"busy": a["busy"][:, :1]}, "busy must have shape"),
    (lambda a: {"ep_rank": np.zeros(a["ep_start"].size + 1, np.intp)}, "ep_rank has length"),
    (lambda a: {"ep_until": a["ep_until"][:3]}, "ep_until, ep_fac, eff and active"),
    (lambda a: {"eff": a["eff"][:3]}, "ep_until, ep_fac, eff and active"),
    (lambda a: {"state": np.zeros(3, np.int64)}, "state length 4"),
    (lambda a: {"state": np.array([0, 0, 0, 65], np.int64)}, "active episodes"),
    (lambda a: {"state": np.array([0, 0, 0, 2], np.int64), "active": np.full(64, 99, np.intp)},
     "active ranks must lie in"),
    (lambda a: {"rail_a": a["rail_a"][:1]}, "rail_a must have length"),
    (lambda a: {"mode": kernel.MODE_HOLDS}, "MODE_HOLDS needs one hold"),
    (lambda a: {"mode": 7}, "mode must be one of"),
    (lambda a: {"patience": 0}, "patience must be >= 1"),
    (lambda a: {"hold_max": float("nan")}, "hold_max must be finite"),
    (lambda a: {"mode": kernel.MODE_BASELINE, "patience": 4, "max_patience": 2}, "max_patience must be >="),
    (lambda a: {"nic_bw": 0.0}, "nic_bw must be > 0"),
    (lambda a: {"bstate": np.zeros(2)}, "bstate must have length 3"),
    (lambda a: {"g": 3}, "multiple of g"),
    (lambda a: {"base": a["base"][:32], "eff": a["eff"][:32]}, "links was built for 8 nodes"),
    (lambda a: {"state": np.array([99, 0, 0, 0], np.int64)}, "episode pointer"),
])
def test_kernel_wrapper_rejects_inconsistent_input(override, match):
    args = _good_call()
    args.update({k: np.ascontiguousarray(v) if isinstance(v, np.ndarray) else v
                 for k, v in override(args).items()})
    with pytest.raises(ValueError, match=match):
        kernel.simulate_chunk(**args)


def test_options_are_checked_before_the_arrays():
    # a bad mode is reported even when every array is inconsistent too (no O(p) work first)
    args = _good_call(mode=9, z=np.zeros((4, 3), np.float32), busy=np.zeros((4, 1), np.uint8))
    with pytest.raises(ValueError, match="mode must be one of"):
        kernel.simulate_chunk(**args)


def _table(**override):
    kw = dict(n_nodes=4, gpus_per_node=2, flow_src=np.array([0, 3]), hops=np.array([[0, 4], [2, -1]]),
              path_links=None, n_paths=2, plane_links=6, rail_plane=np.array([0, 1]),
              link_domain=np.zeros(12, np.intp), n_domains=1)
    kw.update(override)
    return kw


@pytest.mark.parametrize("override, exc, match", [
    ({"flow_src": np.array([0, 4])}, ValueError, "flow_src must lie in"),
    ({"flow_src": np.array([0])}, ValueError, "hops must have one row per flow"),
    ({"hops": np.array([[0, 5], [2, -1]])}, ValueError, "hops must be -1 \\(no hop\\) or lie in"),
    ({"hops": np.array([[0, -2], [2, -1]])}, ValueError, "hops must be -1"),
    ({"hops": np.zeros((2, 0), np.intp)}, ValueError, "hops must have at least one column"),
    ({"hops": np.array([0, 4])}, ValueError, "hops must be a 2-d or 3-d integer array"),
    ({"hops": np.zeros((3, 2, 2), np.intp)}, ValueError, "3-d hops must have one slice per rail"),
    ({"hops": np.array([[[0, 4], [2, -1]], [[0, 4], [2, 5]]])}, ValueError, "hops must be -1"),
    ({"hops": np.array([[0.0, 4.0], [2.0, -1.0]])}, TypeError, "hops must hold integers"),
    ({"path_links": np.array([0, 1, 6])}, ValueError, "path_links must lie in \\[-1, 6\\)"),
    ({"path_links": np.array([0, 1, 2])}, ValueError, "hops must be -1 \\(no hop\\) or lie in \\[0, len"),
    ({"rail_plane": np.array([1, 1])}, ValueError, "rail_plane must use every plane"),
    ({"rail_plane": np.array([0])}, ValueError, "rail_plane must have length gpus_per_node=2"),
    ({"rail_plane": np.array([0, -1])}, ValueError, "rail_plane must lie in"),
    ({"link_domain": np.zeros(6, np.intp)}, ValueError, "link_domain must have n_planes \\* plane_links"),
    ({"link_domain": np.ones(12, np.intp)}, ValueError, "link_domain must lie in \\[0, 1\\)"),
    ({"n_paths": 0}, ValueError, "n_paths must be >= 1"),
    ({"n_paths": 2.0}, TypeError, "n_paths must be an integer"),
    ({"n_domains": 0}, ValueError, "n_domains must be >= 1"),
    ({"plane_links": -1}, ValueError, "plane_links must be >= 0"),
])
def test_link_table_rejects_bad_incidence(override, exc, match):
    kernel.LinkTable(**_table())        # the base case is valid
    with pytest.raises(exc, match=match):
        kernel.LinkTable(**_table(**override))


def test_link_table_keeps_private_copies():
    kw = _table()
    snapshot = {k: np.copy(v) for k, v in kw.items() if isinstance(v, np.ndarray)}
    t = kernel.LinkTable(**kw)
    for k, v in snapshot.items():                  # the caller's arrays are untouched ...
        np.testing.assert_array_equal(kw[k], v)
    kw["hops"][:] = 10**9                          # ... and later changes do not reach the table
    assert t.n_flows == 2 and t.rails_per_plane.tolist() == [1, 1] and "planes=2" in repr(t)


def test_kernel_does_not_modify_static_inputs():
    args = _good_call(z=np.random.default_rng(0).standard_normal((4, 64), dtype=np.float32))
    copies = {k: np.copy(v) for k, v in args.items() if isinstance(v, np.ndarray)
              and k not in ("ep_until", "ep_fac", "eff", "active", "state", "bstate")}
    kernel.simulate_chunk(**args)
    for k, v in copies.items():
        np.testing.assert_array_equal(args[k], v, err_msg=k)


def test_kernel_exports_its_constants():
    modes = (kernel.MODE_NONE, kernel.MODE_SPREAD, kernel.MODE_HOLDS, kernel.MODE_BASELINE)
    assert kernel.MODES == modes and len(set(modes)) == 4 and all(isinstance(m, int) for m in modes)
    assert NO_LINK == kernel.NO_LINK


def test_no_pacing_fast_path_matches_mode_holds_with_zero_holds():
    sc = PacingScenario(n_nodes=33)
    a = simulate_iterations(sc, 120, controller=NoPacing(), seed=9)
    b = simulate_iterations(sc, 120, controller=NoPacing(), seed=9, use_kernel_controller=False)
    for key in ("time", "spread", "hold", "held", "incast", "contention", "paced"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))


@pytest.mark.parametrize("topology", [None, TopOfRackFabric(nodes_per_leaf=2, oversubscription=4.0)])
def test_reference_agreement_covers_incast_and_contention(topology):
    # a fixed case where shared links overflow: the differential tests above must not
    # only ever compare zeros (for both a plane per rail and one plane shared by all rails)
    fab = (dict(nodes_per_leaf=3, oversubscription=3.0) if topology is None else dict(topology=topology))
    sc = PacingScenario(
        n_nodes=20, compute=ComputeModel(t_compute=0.2, jitter=0.3),
        fabric=FabricModel(gpus_per_node=2, buffer=2**20, buffer_idle=2**24, **fab),
        collective=CollectiveModel(message_bytes=1e8))
    inc, inp = _inputs(sc, 6, 1)
    rng = np.random.default_rng(1)
    z = rng.standard_normal((6, sc.n_ranks), dtype=np.float32)
    picks = rng.integers(0, inp["links"].n_paths, (6, 2, inp["links"].n_flows), dtype=np.uint32)
    holds = np.array([0.0, 0.0, 0.01, 0.0, 10.0, 0.0])
    busy = np.ones((6, inp["links"].n_domains), np.uint8)
    busy[5] = 0         # the idle shared buffer absorbs what the contended share cannot
    want = reference(inc, inp, z, picks, busy, 0, holds)
    got = _holds_call(inp, z, picks, busy, holds, it0=0, record=False)
    assert (want["incast"][[0, 1, 3]] > 0).all() and (want["contention"] > 1).all()
    assert want["incast"][5] < want["incast"][[0, 1, 3]].min()
    assert want["incast"][4] == 0.0       # a long enough hold removes the incast
    for key, val in want.items():
        np.testing.assert_allclose(got[key], val, rtol=1e-12, atol=1e-12, err_msg=key)
