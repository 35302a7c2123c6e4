"""Fabric topologies: the recipe for adding one (a tiny dragonfly defined here runs through
the kernel's fast path unchanged), the rail-optimised fabric's spine claim, the top-of-rack
fabric's contention, and FabricModel's topology option."""
from dataclasses import dataclass

import numpy as np
import pytest

from spare_core.pacing import (BaselinePacer, ComputeModel, FabricModel, LinkIncidence, NoPacing, PacingScenario,
                               RailOptimisedFabric, SpreadPacer, TopOfRackFabric, simulate_iterations)
from spare_core.pacing.fabrics import NO_LINK
from spare_core.pacing.simulate import stream


# ---- the recipe "adding a fabric" (docs/pacing.md) --------------------------------------
@dataclass(frozen=True)
class Dragonfly:
    """A tiny dragonfly: `groups` groups of `routers` routers, `nodes_per_router` nodes on
    each router with all their NICs (so every rail shares the routers' links: one plane).
    The routers of a group are fully connected by local links; every pair of groups is
    joined by `global_links` global links, link k leaving group a from router
    (k + b) % routers and entering group b at router (k + a) % routers. Minimal routing:
    a flow between groups takes global link k = its ECMP choice, with a local hop to that
    link's router first and from its far router last when needed; a flow inside a group
    takes the one local link. A link's buffer domain is the router holding its queue."""

    groups: int = 3
    routers: int = 2
    nodes_per_router: int = 1
    global_links: int = 2

    def _names(self):
        names = []
        for grp in range(self.groups):
            for a in range(self.routers):
                names += [("local", grp, a, b) for b in range(self.routers) if b != a]
            for other in range(self.groups):
                if other != grp:
                    names += [("global", grp, other, k) for k in range(self.global_links)]
        return {name: i for i, name in enumerate(names)}

    def _router(self, node):
        r = node // self.nodes_per_router
        return r // self.routers, r % self.routers

    def path(self, src, dst, k):
        """Named links of the flow src -> dst on ECMP choice k (the specification)."""
        (ga, ra), (gb, rb) = self._router(src), self._router(dst)
        if ga == gb:
            return [] if ra == rb else [("local", ga, ra, rb)]
        out = []
        gate_a, gate_b = (k + gb) % self.routers, (k + ga) % self.routers
        if ra != gate_a:
            out.append(("local", ga, ra, gate_a))
        out.append(("global", ga, gb, k))
        if gate_b != rb:
            out.append(("local", gb, gate_b, rb))
        return out

    def domain(self, name):
        """Router whose egress queue the link uses."""
        kind, grp, x, y = name
        return grp * self.routers + (x if kind == "local" else (y + grp) % self.routers)

    def incidence(self, src, dst, *, n_nodes, gpus_per_node):
        if n_nodes > self.groups * self.routers * self.nodes_per_router:
            raise ValueError(f"a {self!r} holds at most {self.groups * self.routers * self.nodes_per_router} nodes")
        ids = self._names()
        n_paths = self.global_links
        flow_src, hops, table = [], [], []
        for s, d in zip(np.asarray(src).tolist(), np.asarray(dst).tolist()):
            paths = [self.path(s, d, k) for k in range(n_paths)]
            if not any(paths):
                continue                       # both ends on one router: its crossbar
            row = []
            for h in range(3):
                # hop h of every path: inter-group paths are (local?, global, local?);
                # an intra-group flow has its one local link at hop 0 on every path
                cand = []
                for k, path in enumerate(paths):
                    kind = [n for n in path if n[0] == "global"]
                    if not kind:               # intra-group
                        cand.append(ids[path[0]] if h == 0 else NO_LINK)
                        continue
                    g_at = path.index(kind[0])
                    slot = {0: path[:g_at], 1: [kind[0]], 2: path[g_at + 1:]}[h]
                    cand.append(ids[slot[0]] if slot else NO_LINK)
                if all(c == NO_LINK for c in cand):
                    row.append(NO_LINK)
                else:
                    row.append(len(table))
                    table += cand
            flow_src.append(s)
            hops.append(row)
        domain = np.zeros(len(ids), dtype=np.intp)
        for name, i in ids.items():
            domain[i] = self.domain(name)
        return LinkIncidence(flow_src=np.array(flow_src, dtype=np.intp),
                             hops=np.array(hops, dtype=np.intp).reshape(-1, 3),
                             path_links=np.array(table, dtype=np.intp), n_paths=n_paths, plane_links=len(ids),
                             rail_plane=np.zeros(gpus_per_node, dtype=np.intp), link_domain=domain,
                             n_domains=self.groups * self.routers)


def _brute_force_contention(fab, order, g, picks):
    """Contention per iteration from the named paths: flows counted per link over all rails;
    each rail's ring is held back by the busiest link it crosses."""
    src, dst = order, np.roll(order, -1)
    kept = [(s, d) for s, d in zip(src.tolist(), dst.tolist()) if any(fab.path(s, d, k)
                                                                      for k in range(fab.global_links))]
    out = []
    for k in range(picks.shape[0]):
        load, crossed = {}, [[] for _ in range(g)]
        for j in range(g):
            for f, (s, d) in enumerate(kept):
                for name in fab.path(s, d, int(picks[k, j, f])):
                    load[name] = load.get(name, 0) + 1
                    crossed[j].append(name)
        out.append(max(max([1] + [load[n] for n in crossed[j]]) for j in range(g)))
    return np.array(out, dtype=float)


def test_a_dragonfly_defined_outside_the_library_runs_through_the_fast_path():
    fab = Dragonfly(groups=3, routers=2, nodes_per_router=2, global_links=2)
    n, g, seed = 12, 2, 7
    sc = PacingScenario(n_nodes=n, compute=ComputeModel(t_compute=0.2, jitter=0.2),
                        fabric=FabricModel(gpus_per_node=g, topology=fab, ring_order="random"))
    # the encoding is the specification: every flow, path and hop
    order = np.random.default_rng(0).permutation(n)
    inc = fab.incidence(order, np.roll(order, -1), n_nodes=n, gpus_per_node=g)
    kept = [(s, d) for s, d in zip(order.tolist(), np.roll(order, -1).tolist())
            if any(fab.path(s, d, k) for k in range(2))]
    ids = fab._names()
    for f, (s, d) in enumerate(kept):
        for k in range(2):
            assert inc.links_of(0, f, k) == [ids[x] for x in fab.path(s, d, k)]
    # fast path (kernel forms) == Python path, for every kind of controller
    for ctrl in (NoPacing(), SpreadPacer(), BaselinePacer(threshold_on=0.05, threshold_off=0.02, patience=2)):
        fast = simulate_iterations(sc, 200, controller=ctrl, seed=seed)
        slow = simulate_iterations(sc, 200, controller=ctrl, seed=seed, use_kernel_controller=False)
        for key in ("time", "hold", "incast", "contention"):
            np.testing.assert_array_equal(getattr(fast, key), getattr(slow, key), err_msg=key)
    # and the contention the kernel reports is the brute-force count on the named paths,
    # with the simulator's own ECMP draws (one path per iteration, rail and flow)
    ideal = PacingScenario(n_nodes=n, compute=ComputeModel.ideal(0.2), fabric=sc.fabric)
    r = simulate_iterations(ideal, 30, seed=seed)
    root = np.random.SeedSequence(seed)
    ring = stream(root, "ring").permutation(n)      # the ring order's own stream
    f_count = fab.incidence(ring, np.roll(ring, -1), n_nodes=n, gpus_per_node=g).n_flows
    picks = stream(root, "ecmp").integers(0, 2, size=(30, g, f_count), dtype=np.uint32)
    want = _brute_force_contention(fab, ring, g, picks)
    np.testing.assert_array_equal(r.contention, want)
    assert (want > 1).any()


def test_a_dragonfly_larger_than_its_routers_is_refused():
    sc = PacingScenario(n_nodes=20, fabric=FabricModel(topology=Dragonfly()))
    with pytest.raises(ValueError, match="holds at most 6 nodes"):
        simulate_iterations(sc, 5, seed=0)


@dataclass(frozen=True)
class SharedSpineRail:
    """Rail-optimised leaves on ONE spine layer shared by every rail, numbered as the DGX
    SuperPOD is cabled: spine s has a link to and from every rail leaf (group u, rail j).
    All rails share one plane of links; rail j's flows cross rail j's leaf links."""

    nodes_per_leaf: int = 16
    oversubscription: float = 2.0

    def incidence(self, src, dst, *, n_nodes, gpus_per_node):
        g, npl = gpus_per_node, self.nodes_per_leaf
        u = max(1, int(round(npl / self.oversubscription)))
        L = -(-n_nodes // npl)
        up = lambda grp, rail: (grp * g + rail) * u            # noqa: E731 (+ spine s)
        down = lambda grp, rail: L * g * u + (grp * g + rail) * u  # noqa: E731 (+ spine s)
        src, dst = np.asarray(src), np.asarray(dst)
        cross = (src // npl) != (dst // npl)
        hops = np.array([[[up(s // npl, j), down(d // npl, j)] for s, d in zip(src[cross], dst[cross])]
                         for j in range(g)], dtype=np.intp).reshape(g, -1, 2)
        group = (np.arange(L * g * u) // u) // g       # a link's domain: its rail leaf's group
        return LinkIncidence(flow_src=src[cross].astype(np.intp), hops=hops, path_links=None, n_paths=u,
                             plane_links=2 * L * g * u, rail_plane=np.zeros(g, np.intp),
                             link_domain=np.concatenate([group, group]), n_domains=L)


@pytest.mark.parametrize("n_nodes", [40, 96])
def test_sharing_the_spine_layer_changes_nothing_for_rail_aligned_rings(n_nodes):
    # RailOptimisedFabric's docstring: one plane per rail (separate spines) and one spine
    # layer shared by all rails (one plane, counted by the kernel's shared-plane pass)
    # give the same links to every rail-aligned ring, hence the same run, bit for bit
    comp = ComputeModel(episode_rate=1e-3, episode_median=5.0)
    for ctrl in (NoPacing(), BaselinePacer()):
        rail = simulate_iterations(PacingScenario(n_nodes=n_nodes, compute=comp), 300, seed=4, controller=ctrl)
        shared = simulate_iterations(PacingScenario(n_nodes=n_nodes, compute=comp,
                                                    fabric=FabricModel(topology=SharedSpineRail())),
                                     300, seed=4, controller=ctrl)
        assert (rail.incast > 0).any()
        for key in ("time", "hold", "incast", "contention"):
            np.testing.assert_array_equal(getattr(rail, key), getattr(shared, key), err_msg=key)


def test_top_of_rack_versus_rail_optimised_at_equal_switch_ports():
    # a topology-ordered ring: every rail-optimised leaf carries one cross-leaf flow per rail
    # (no shared link), while a 2-node top-of-rack leaf sends all 8 rails' flows up the
    # same 8 uplinks (collisions nearly every iteration)
    comp = ComputeModel.ideal()
    rail = PacingScenario(n_nodes=64, compute=comp, fabric=FabricModel(ring_order="topology"))
    tor = PacingScenario(n_nodes=64, compute=comp, fabric=FabricModel(ring_order="topology",
                                                                       topology=TopOfRackFabric()))
    a, b = simulate_iterations(rail, 200, seed=2), simulate_iterations(tor, 200, seed=2)
    assert (a.contention == 1).all()
    assert (b.contention > 1).mean() > 0.9 and b.time.mean() > a.time.mean()
    assert TopOfRackFabric().uplinks_per_leaf(8) == RailOptimisedFabric().n_spines == 8


@pytest.mark.parametrize("make, exc, match", [
    (lambda: FabricModel(topology="fat tree"), TypeError, "topology must have an incidence"),
    (lambda: FabricModel(topology=TopOfRackFabric(), oversubscription=4.0), ValueError,
     "nodes_per_leaf and oversubscription configure the default topology"),
    (lambda: RailOptimisedFabric(nodes_per_leaf=0), ValueError, "nodes_per_leaf must be >= 1"),
    (lambda: TopOfRackFabric(oversubscription=0.5), ValueError, "oversubscription must be >= 1"),
])
def test_topology_options_are_checked(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_topology_in_use_and_uncontended_keep_the_topology():
    assert FabricModel().topology_in_use == RailOptimisedFabric(16, 2.0)
    assert FabricModel(nodes_per_leaf=4, oversubscription=1.0).topology_in_use == RailOptimisedFabric(4, 1.0)
    tor = TopOfRackFabric(nodes_per_leaf=1, oversubscription=8.0)
    f = FabricModel.uncontended(topology=tor)
    assert f.topology_in_use is tor and f.ring_order == "topology"


def test_a_topology_returning_something_else_is_refused():
    class Broken:
        def incidence(self, src, dst, *, n_nodes, gpus_per_node):
            return {"flow_src": src}

    with pytest.raises(TypeError, match="incidence\\(\\) must return a LinkIncidence"):
        simulate_iterations(PacingScenario(n_nodes=4, fabric=FabricModel(topology=Broken())), 3, seed=0)
