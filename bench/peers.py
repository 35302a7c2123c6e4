"""What the benchmarks run on the workloads of ``bench/workloads.py``: our entry points as a
caller uses them, and every peer, each defined once.

- matching: ``scipy_size`` (scipy's ``maximum_bipartite_matching``);
- flow: ``solve_ours`` / ``solve_ours_result`` (from the caller's arrays, either formulation),
  ``certified``, ``solve_ortools`` (OR-Tools ``SimpleMinCostFlow``), ``solve_networkx``;
- event engine: ``ours`` (``simulate_renewals``) against ``numpy_loop`` (vectorised, no event
  queue), ``simpy_loop`` (one SimPy process per unit) and ``heapq_loop``;
- RECTLR: ``RebuildController`` (scipy matching + OR-Tools flow rebuilt on every failure);
- pacing: ``numpy_peer`` (the model vectorised in numpy);
- simulator: ``simpy_simulate`` (the run model as SimPy processes);
- trace replay: ``NoRewind`` (a process that cannot rewind: one failure at a time) and
  ``PythonReplay`` (a plain Python loop with the same semantics).
"""
from __future__ import annotations

import warnings

import heapq
import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

import spare_core.pacing.simulate as sim
from spare_core.events import simulate_renewals

# the retired event engine is timed as the peer of the sources the simulations read, until it is removed
warnings.filterwarnings("ignore", message=r"spare_core\.events\..* is retired", category=DeprecationWarning)
from spare_core.graph.flow import check_flow_certificate, max_flow_min_cost, min_cost_flow
from spare_core.pacing import SpreadPacer

from bench.workloads import LIFE, Instance


# ============================================================================ matching
def scipy_size(g) -> int:
    if g.shape[0] == 0 or g.shape[1] == 0:
        return 0
    return int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))


# ============================================================================ flow
def solve_ours_result(inst: Instance, method: str = "auto"):
    """Our solver from the caller's arrays, in the instance's formulation (s-t or supplies);
    returns the FlowResult."""
    if inst.source is not None:
        return max_flow_min_cost(*inst.network(), inst.source, inst.sink, method=method)
    return min_cost_flow(*inst.network(), inst.supply, method=method)


def solve_ours(inst: Instance, method: str = "auto"):
    """Our solver from the caller's arrays; returns (flows, cost)."""
    r = solve_ours_result(inst, method)
    return r.flow, r.cost


def certified(inst: Instance, result) -> bool:
    """``check_flow_certificate`` of ``result`` in the instance's formulation."""
    if inst.source is not None:
        return check_flow_certificate(*inst.network(), result, source=inst.source, sink=inst.sink)
    return check_flow_certificate(*inst.network(), result, supply=inst.supply)


def solve_ortools(inst: Instance):
    """OR-Tools SimpleMinCostFlow with its vectorised numpy API; returns (flows, cost)."""
    from ortools.graph.python import min_cost_flow as ortools_mcf

    smcf = ortools_mcf.SimpleMinCostFlow()
    arcs = smcf.add_arcs_with_capacity_and_unit_cost(inst.tail, inst.head, inst.capacity, inst.cost)
    if inst.source is not None:
        # SolveMaxFlowWithMinCost maximises the flow from the supplies to the demands.
        bound = int(inst.capacity[inst.tail == inst.source].sum())
        smcf.set_node_supply(inst.source, bound)
        smcf.set_node_supply(inst.sink, -bound)
        status = smcf.solve_max_flow_with_min_cost()
    else:
        smcf.set_nodes_supplies(np.arange(inst.n), inst.supply)
        status = smcf.solve()
    if status != smcf.OPTIMAL:
        raise RuntimeError(f"OR-Tools status {status}")
    return smcf.flows(arcs), smcf.optimal_cost()


def solve_networkx(inst: Instance):
    """networkx: build a DiGraph from the arrays, then network_simplex / max_flow_min_cost."""
    import networkx as nx

    g = nx.MultiDiGraph() if inst.source is None else nx.DiGraph()
    g.add_nodes_from(range(inst.n))
    extra = inst.n
    for u, v, c, w in zip(inst.tail.tolist(), inst.head.tolist(), inst.capacity.tolist(), inst.cost.tolist()):
        if inst.source is not None and g.has_edge(u, v):
            # max_flow_min_cost needs a DiGraph: a parallel arc goes through a node of its own
            # (same capacity, same cost, so the same optimum)
            g.add_edge(u, extra, capacity=c, weight=w)
            g.add_edge(extra, v, capacity=c, weight=0)
            extra += 1
        else:
            g.add_edge(u, v, capacity=c, weight=w)
    if inst.source is not None:
        flow = nx.max_flow_min_cost(g, inst.source, inst.sink)
        return flow, nx.cost_of_flow(g, flow)
    for v, b in enumerate(inst.supply.tolist()):
        if b:
            g.nodes[v]["demand"] = -b
    cost, flow = nx.network_simplex(g)
    return flow, cost


# ============================================================================ event engine
def ours(n, repair, horizon, seed):
    r = simulate_renewals(n, LIFE, repair, horizon, seed=seed)
    return r.events, r.peak_down


def numpy_loop(n, repair, horizon, seed):
    rng = np.random.default_rng(seed)
    life = LIFE
    start = np.zeros(n)
    fails, reps = [], []
    while start.size:
        f = start + life.sample(rng, start.size)
        r = f + repair.sample(rng, f.size)
        fails.append(f[f < horizon])
        reps.append(r[r < horizon])
        start = r[r < horizon]
    f = np.concatenate(fails)
    r = np.concatenate(reps)
    t = np.concatenate([f, r])
    step = np.concatenate([np.ones(f.size, np.int64), -np.ones(r.size, np.int64)])
    order = np.argsort(t, kind="stable")
    down = np.cumsum(step[order])
    return t.size, int(down.max()) if down.size else 0


def simpy_loop(n, repair, horizon, seed):
    import simpy

    rng = np.random.default_rng(seed)
    life = LIFE
    env = simpy.Environment()
    state = {"events": 0, "down": 0, "peak": 0}
    per = 8  # draws pre-sampled per unit and batch

    def unit():
        lives = life.sample(rng, per).tolist()
        reps = repair.sample(rng, per).tolist()
        i = 0
        while True:
            if i == per:
                lives = life.sample(rng, per).tolist()
                reps = repair.sample(rng, per).tolist()
                i = 0
            yield env.timeout(lives[i])
            state["events"] += 1
            state["down"] += 1
            if state["down"] > state["peak"]:
                state["peak"] = state["down"]
            yield env.timeout(reps[i])
            state["events"] += 1
            state["down"] -= 1
            i += 1

    for _ in range(n):
        env.process(unit())
    env.run(until=horizon)
    return state["events"], state["peak"]


def heapq_loop(n, repair, horizon, seed):
    rng = np.random.default_rng(seed)
    life = LIFE
    heap = [(t, u, 0) for u, t in enumerate(life.sample(rng, n).tolist())]
    heapq.heapify(heap)
    lives, reps, li, ri = [], [], 0, 0
    events = down = peak = 0
    while heap and heap[0][0] < horizon:
        t, u, kind = heapq.heappop(heap)
        events += 1
        if kind == 0:
            down += 1
            peak = max(peak, down)
            if ri == len(reps):
                reps, ri = repair.sample(rng, 4096).tolist(), 0
            heapq.heappush(heap, (t + reps[ri], u, 1))
            ri += 1
        else:
            down -= 1
            if li == len(lives):
                lives, li = life.sample(rng, 4096).tolist(), 0
            heapq.heappush(heap, (t + lives[li], u, 0))
            li += 1
    return events, peak


# ============================================================================ RECTLR
class RebuildController:
    """RECTLR rebuilt from scratch on every failure (the peer); tracks only S, stacks, alive."""

    def __init__(self, layout, phase2="ortools"):
        from ortools.graph.python import min_cost_flow

        self._mcf = min_cost_flow
        self.phase2 = phase2  # "ortools" or "spare_core" (spare_core.graph.flow.min_cost_flow)
        self.place = np.asarray(layout.placement)
        self.n, self.r = self.place.shape
        self.restart()

    def restart(self):
        self.stacks = self.place.copy()
        self.alive = np.ones(self.n, dtype=bool)
        self.S = 1

    def _complete_at(self, s, groups):
        """Phase 1 at s: maximum matching on the slot-expanded graph (scipy)."""
        n, r = self.n, self.r
        if groups.size * s < n:
            return False
        types = self.stacks[groups].ravel()  # all r holdings of each alive group
        slot_of_group = np.arange(groups.size)
        rows = np.repeat(types, s)
        cols = (np.repeat(slot_of_group, r * s) * s + np.tile(np.arange(s), groups.size * r))
        g = sp.csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, groups.size * s))
        return int((maximum_bipartite_matching(g, perm_type="column") >= 0).sum()) == n

    def _least_reordering(self, s, groups):
        """Phase 2 at s: min-cost flow (OR-Tools); returns the contributing group per type."""
        n, r = self.n, self.r
        m = groups.size
        depth = np.tile(np.arange(r), m)
        types = self.stacks[groups].ravel()
        gidx = np.repeat(np.arange(m), r)
        cost = np.maximum(0, depth - s + 1)
        src, sink = n + m, n + m + 1
        tails = np.concatenate([np.full(n, src), types, n + np.arange(m)])
        heads = np.concatenate([np.arange(n), n + gidx, np.full(m, sink)])
        caps = np.concatenate([np.ones(n + types.size, dtype=np.int64), np.full(m, s)])
        costs = np.concatenate([np.zeros(n, dtype=np.int64), cost, np.zeros(m, dtype=np.int64)])
        supplies = np.zeros(n + m + 2, dtype=np.int64)
        supplies[src], supplies[sink] = n, -n
        if self.phase2 == "spare_core":
            from spare_core.graph.flow import min_cost_flow

            res = min_cost_flow(n + m + 2, tails, heads, caps, costs, supplies)
            flows, total = res.flow[n : n + types.size], int(res.cost)
        else:
            f = self._mcf.SimpleMinCostFlow()
            f.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
            f.set_nodes_supplies(np.arange(n + m + 2), supplies)
            if f.solve() != f.OPTIMAL:
                raise RuntimeError("peer: min-cost flow not optimal")
            flows, total = f.flows(np.arange(n, n + types.size)), int(f.optimal_cost())
        used = np.flatnonzero(flows > 0)
        owner = np.empty(n, dtype=np.int64)
        owner[types[used]] = groups[gidx[used]]
        return owner, total

    def fail(self, g):
        """Returns (kind, S after)."""
        self.alive[g] = False
        groups = np.flatnonzero(self.alive)
        held = np.zeros(self.n, dtype=bool)
        held[self.place[groups].ravel()] = True
        if not held.all():
            return "wipeout", self.S
        covered = np.zeros(self.n, dtype=bool)
        covered[self.stacks[groups, : self.S].ravel()] = True
        if covered.all():
            return "fixed", self.S
        s = self.S
        while not self._complete_at(s, groups):
            s += 1
        owner, _ = self._least_reordering(s, groups)
        self.S = s
        for h in np.unique(owner):
            mine = set(np.flatnonzero(owner == h).tolist())
            row = self.stacks[h]
            for d in range(s, self.r):
                if row[d] in mine:
                    p = s - 1
                    while row[p] in mine:
                        p -= 1
                    row[p], row[d] = row[d], row[p]
        return "reordered", s


# ============================================================================ pacing
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


# ============================================================================ simulator
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


# ============================================================================ trace replay
class NoRewind:
    """The same model behind a process without ``rewind``: RunFailures pulls one failure
    at a time (the reader simulate() used before chunks)."""

    renews_all_at_restart = False

    def __init__(self, model):
        self.model = model

    def process(self, n_groups, seed, *, start=0.0):
        return _Plain(self.model.process(n_groups, seed, start=start))


class _Plain:
    def __init__(self, proc):
        self._p = proc

    def take(self, k, with_units=True):
        return self._p.take(k, with_units)

    def restart(self, time):
        self._p.restart(time)


class PythonReplay:
    """Plain Python loop with the same semantics (stop at the end)."""

    def __init__(self, tr, per, n_groups):
        self.t, self.g = tr.times.tolist(), (tr.units // per).tolist()
        self.pos, self.dead, self.now = 0, bytearray(n_groups), 0.0

    def take(self, k):
        t, g, dead = self.t, self.g, self.dead
        times, groups = [], []
        while len(times) < k and self.pos < len(t):
            x = g[self.pos]
            if not dead[x]:
                dead[x] = 1
                times.append(t[self.pos])
                groups.append(x)
            self.pos += 1
        if times:
            self.now = times[-1]
        return times, groups

    def restart(self, at):
        self.dead = bytearray(len(self.dead))
        self.now = at


# -- the simulations' own failure source: per-node renewals (the failed node replaced at once,
# the others keep their age), the node model's log (spare_core.events.nodes.NodeFailureLog)
def renewals_ours(n, horizon, seed):
    """Failures of ``n`` new nodes up to ``horizon`` from the log the simulator reads."""
    from spare_core.events.nodes import NodeFailureLog

    log = NodeFailureLog(LIFE, n, 1, seed, initial="new", chunk_seconds=horizon / 16)
    while log.horizon < horizon:
        log.extend()
    return int(np.searchsorted(np.asarray(log.times), horizon))


def renewals_numpy(n, horizon, seed):
    """The vectorised way: every node's next lifetime at once, per round, until all pass the
    horizon; then the failures in time order with their nodes (what the simulator reads)."""
    rng = np.random.default_rng(seed)
    t = LIFE.sample(rng, n)
    node = np.arange(n)
    times, nodes = [], []
    while t.size:
        keep = t < horizon
        t, node = t[keep], node[keep]
        times.append(t)
        nodes.append(node)
        t = t + LIFE.sample(rng, t.size)
    times, nodes = np.concatenate(times), np.concatenate(nodes)
    order = np.argsort(times, kind="stable")
    times, nodes = times[order], nodes[order]
    return int(times.size)


def renewals_heapq(n, horizon, seed):
    """A plain heapq event loop over (time, node), lifetimes drawn in batches."""
    rng = np.random.default_rng(seed)
    heap = [(t, u) for u, t in enumerate(LIFE.sample(rng, n).tolist())]
    heapq.heapify(heap)
    lives, li, count = [], 0, 0
    while heap and heap[0][0] < horizon:
        t, u = heap[0]
        count += 1
        if li == len(lives):
            lives, li = LIFE.sample(rng, 4096).tolist(), 0
        heapq.heapreplace(heap, (t + lives[li], u))
        li += 1
    return count
