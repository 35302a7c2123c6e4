# cython: language_level=3
"""Iteration kernel of the straggler / fabric / pacing model (``spare_core.pacing``).

One call advances the simulation by a chunk of ``c`` synchronous data-parallel
iterations over ``p = n_nodes * g`` ranks. The kernel is a deterministic function of its
inputs: every random quantity (per-rank jitter normals, ECMP spine choices, episode
schedule, persistent speeds, ring order) is drawn by the Python layer from seeded
``numpy.random.Generator`` streams and passed in, so a pure-numpy reference can replay
exactly the same iterations. The kernel holds no policy: the pacing decision is either
"none" (mode 0), the built-in hysteresis rule whose thresholds are given by the caller
(mode 1), the collective-phase baseline rule (mode 3), or an explicit per-iteration
hold chosen by a Python controller (mode 2).

Per iteration k (all times relative to the iteration start, when every rank left the
previous all-reduce together):

1. arrival ``a_r = base_r * episode_r(k) * exp(sigma * z[k, r] - sigma^2 / 2)``;
2. entry ``e_r = a_r`` without pacing; with a hold bound ``h > 0`` the rank waits at the
   gate until the controller's release (last arrival + ``ctrl_latency``) or until it
   has waited ``h``: ``e_r = min(a_r + h, max_s a_s + ctrl_latency)`` (so
   ``a_r <= e_r <= a_r + h``);
3. node entry ``E_n = max_{r in n} e_r`` (the NVLink phase needs every local rank);
   collective start ``T0 = max_n E_n``. As ``e_r`` is nondecreasing in ``a_r``, one
   pass over ranks suffices: ``E_n`` is the gate applied to the node's latest arrival;
4. each node parks ``P_n = min(nic_bw * (T0 - E_n), window)`` bytes per rail flow
   (the eager window it pushed before its ring peer was ready), released at ``T0``;
5. per rail plane, every cross-leaf ring flow takes the spine ``picks[k, rail, f]``;
   for each uplink (src leaf, spine) and downlink (spine, dst leaf) the kernel counts
   flows (contention ``K``) and the fluid incast backlog ``sum P - max P``; a backlog
   over the link's headroom (``buffer`` when ``busy[k, leaf]``: competing traffic holds
   the leaf's shared buffer; ``buffer_idle`` otherwise) is dropped and costs
   ``rto * ceil(overflow / (headroom + window)) + overflow / nic_bw``: synchronized senders time out and resend together, so
   recovery repeats (incast collapse) (``incast_penalty``);
6. rail time ``A_j + max(Bw_j * K_j, floor_j) + D_j``; iteration time
   ``T0 + t_intra + max_j rail time``.

Buffers: O(n_nodes) node entries and parked bytes, O(n_leaves *
n_spines) link triples (about 2F: ``L U`` ~ ``n_nodes / oversubscription``), allocated once by the
wrapper. The whole iteration loop runs in one ``nogil`` block and cannot fail: the
``def`` wrapper checks every shape and index range first (it is reachable from Python),
so no input makes the kernel read or write out of bounds.
"""
import numpy as np

from libc.math cimport exp, ceil, INFINITY
from libc.stdint cimport uint32_t, uint8_t, int8_t
from _types cimport intp_t, float64_t, int64_t


cdef inline float64_t incast_penalty(float64_t queue, float64_t buffer, float64_t window,
                                     float64_t rto, float64_t bandwidth) noexcept nogil:
    # Fluid incast cost of one shared link whose peak backlog is `queue` bytes. Zero when
    # the switch buffer absorbs it. Otherwise the overflow is dropped; the senders time
    # out together and resend together, so recovery repeats (TCP/RDMA incast collapse):
    # each round costs one timeout and gets at most a buffer plus a window through.
    cdef float64_t over = queue - buffer
    cdef float64_t per_round = buffer + window
    if over <= 0.0:
        return 0.0
    if per_round <= 0.0:    # unreachable: a backlog needs parked bytes, i.e. window > 0
        return rto + over / bandwidth
    return rto * ceil(over / per_round) + over / bandwidth


cdef inline void _load_link(float64_t* link, float64_t pk) noexcept nogil:
    # one more flow with a `pk`-byte burst on a [count, bytes, largest burst] triple
    link[0] += 1.0
    link[1] += pk
    if pk > link[2]:
        link[2] = pk


cdef void _run(
    # ---- static model (IN) ----
    const float64_t[::1] base,          # [p] nominal compute per rank (s), > 0
    intp_t g,                           # ranks per node
    float64_t sigma,                    # log-sd of per-iteration jitter, >= 0
    const float[:, ::1] z,              # [c, p] standard normals
    const uint32_t[:, :, ::1] picks,    # [c, g, F] ECMP spine per cross-leaf flow
    const uint8_t[:, ::1] busy,         # [c, L] leaf's shared buffer held by competing traffic
    const intp_t[::1] flow_src,         # [F] source node of each cross-leaf ring flow
    const intp_t[::1] flow_src_leaf,    # [F] its leaf
    const intp_t[::1] flow_dst_leaf,    # [F] the destination node's leaf
    intp_t n_spines,
    const float64_t[::1] rail_a,        # [g] latency + reduction part of each rail (s)
    const float64_t[::1] rail_bw,       # [g] bandwidth part at contention 1 (s)
    const float64_t[::1] rail_floor,    # [g] NVLink floor of the bandwidth part (s)
    float64_t t_intra,                  # intra-node phases of the collective (s)
    float64_t nic_bw, float64_t window, float64_t buffer, float64_t buffer_idle, float64_t rto,
    float64_t ctrl_latency,
    const intp_t[::1] ep_rank,          # [E] episodes sorted by start iteration
    const int64_t[::1] ep_start,
    const int64_t[::1] ep_end,
    const float64_t[::1] ep_factor,
    int64_t it0,                        # global index of the chunk's first iteration
    # ---- controller (IN) ----
    int mode, const float64_t[::1] holds,
    float64_t theta_on, float64_t theta_off, int64_t patience, float64_t hold_max,
    float64_t smoothing, int64_t max_patience,
    # ---- state (IN-OUT) ----
    int64_t[::1] ep_until,              # [p] episode active while iteration < ep_until
    float64_t[::1] ep_fac,              # [p] its slowdown factor
    float64_t[::1] eff,                 # [p] base times the active episode's factor
    intp_t[::1] active,                 # [p] ranks in an episode: active[:state[3]]
    int64_t[::1] state,                 # [4] episode pointer, pacing on, calm count, n active
    float64_t[::1] bstate,              # [3] mode 3: baseline (NaN: none), patience, since off (-1: none)
    # ---- scratch ----
    float64_t[::1] node_ent,            # [n_nodes]
    float64_t[::1] parked,              # [n_nodes]
    float64_t[::1] flow_pk,             # [F] bytes parked by each flow's source
    float64_t[::1] links,               # [3 * 2 * L * U] zero on entry and on exit
    # ---- outputs (OUT) ----
    float64_t[::1] out_time, float64_t[::1] out_amax, float64_t[::1] out_spread,
    float64_t[::1] out_hold, float64_t[::1] out_held, float64_t[::1] out_incast,
    float64_t[::1] out_k, int8_t[::1] out_paced,
    bint record, float64_t[:, ::1] rec_arr, float64_t[:, ::1] rec_ent,
) noexcept nogil:
    cdef intp_t c = z.shape[0]
    cdef intp_t p = base.shape[0]
    cdef intp_t n_nodes = p // g
    cdef intp_t n_flows = flow_src.shape[0]
    cdef intp_t n_ep = ep_rank.shape[0]
    cdef intp_t n_up = links.shape[0] // 6      # uplinks first, then downlinks
    cdef intp_t n_links3 = links.shape[0]
    cdef intp_t k, r, n, j, f, u, d, lo, lnk, i, leaf
    cdef const uint32_t* row
    cdef int64_t it
    cdef float64_t shift = -0.5 * sigma * sigma
    cdef float64_t a, e, m, amax, amin, asum, gate, h, held, t0, pk
    cdef float64_t kmax_all, rail, tinter, dmax, pen, kk, room, x, cap

    for k in range(c):
        it = it0 + k
        # Episodes touch only the few throttled ranks: `eff` carries base x factor, so
        # the per-rank pass reads one array. Expire first, then start; overlapping
        # episodes merge (longer end, larger factor): a rank is not throttled twice.
        i = 0
        while i < state[3]:
            r = active[i]
            if ep_until[r] <= it:
                eff[r] = base[r]
                state[3] -= 1
                active[i] = active[state[3]]
            else:
                i += 1
        while state[0] < n_ep and ep_start[state[0]] <= it:
            r = ep_rank[state[0]]
            if ep_until[r] > it:
                if ep_factor[state[0]] > ep_fac[r]:
                    ep_fac[r] = ep_factor[state[0]]
                if ep_end[state[0]] > ep_until[r]:
                    ep_until[r] = ep_end[state[0]]
                eff[r] = base[r] * ep_fac[r]
            else:
                ep_fac[r] = ep_factor[state[0]]
                ep_until[r] = ep_end[state[0]]
                # (an episode already over is skipped; the capacity test only guards
                # against an inconsistent state passed in by hand)
                if ep_until[r] > it and state[3] < p:
                    active[state[3]] = r
                    state[3] += 1
                    eff[r] = base[r] * ep_fac[r]
            state[0] += 1

        if mode == 0:
            h = 0.0
        elif mode == 1 or mode == 3:
            h = hold_max if state[1] else 0.0
        else:
            h = holds[k]

        # one pass over ranks: arrivals, their sum and extremes, and each node's latest
        amax = -INFINITY
        amin = INFINITY
        asum = 0.0
        for n in range(n_nodes):
            m = -INFINITY
            lo = n * g
            for r in range(lo, lo + g):
                a = eff[r] * exp(sigma * z[k, r] + shift)
                asum += a
                if a > m:
                    m = a
                if a < amin:
                    amin = a
                if record:
                    rec_arr[k, r] = a
            node_ent[n] = m
            if m > amax:
                amax = m

        # The gate admits rank r at min(a_r + h, gate), nondecreasing in a_r (and so is
        # its floating-point rounding), so a node's entry is the gate applied to its
        # latest arrival, and the longest hold is served by the earliest rank.
        gate = amax + ctrl_latency
        held = 0.0
        t0 = amax
        if h > 0.0:
            held = gate - amin
            if h < held:
                held = h
            t0 = -INFINITY
            for n in range(n_nodes):
                e = node_ent[n] + h
                if gate < e:
                    e = gate
                node_ent[n] = e
                if e > t0:
                    t0 = e
        if record:
            for r in range(p):
                a = rec_arr[k, r]
                e = a
                if h > 0.0:
                    e = a + h
                    if gate < e:
                        e = gate
                rec_ent[k, r] = e
        for n in range(n_nodes):
            pk = nic_bw * (t0 - node_ent[n])
            parked[n] = pk if pk < window else window

        for f in range(n_flows):
            flow_pk[f] = parked[flow_src[f]]
        tinter = 0.0
        kmax_all = 1.0
        dmax = 0.0
        for j in range(g):
            row = &picks[k, j, 0] if n_flows > 0 else NULL
            for f in range(n_flows):
                pk = flow_pk[f]
                # uplink (src leaf, spine), then downlink (spine, dst leaf)
                _load_link(&links[3 * (flow_src_leaf[f] * n_spines + row[f])], pk)
                _load_link(&links[3 * (n_up + flow_dst_leaf[f] * n_spines + row[f])], pk)
            # one sequential pass over all 2 L U links (about F of them: no cheaper to
            # track the touched ones) reads contention and incast and re-zeroes them
            kk = 1.0
            pen = 0.0
            for lnk in range(0, n_links3, 3):
                if links[lnk] == 0.0:
                    continue
                if links[lnk] > kk:
                    kk = links[lnk]
                if links[lnk] > 1.0:
                    # the link's leaf: uplinks are (leaf, spine), downlinks (spine, leaf)
                    leaf = lnk // 3
                    if leaf >= n_up:
                        leaf -= n_up
                    leaf = leaf // n_spines
                    room = buffer if busy[k, leaf] else buffer_idle
                    e = incast_penalty(links[lnk + 1] - links[lnk + 2], room, window, rto, nic_bw)
                    if e > pen:
                        pen = e
                links[lnk] = 0.0
                links[lnk + 1] = 0.0
                links[lnk + 2] = 0.0
            if kk > kmax_all:
                kmax_all = kk
            kk = rail_bw[j] * kk
            if kk < rail_floor[j]:
                kk = rail_floor[j]
            rail = rail_a[j] + kk + pen
            if rail > tinter:
                tinter = rail
            if pen > dmax:
                dmax = pen

        out_time[k] = t0 + t_intra + tinter
        out_amax[k] = amax
        out_spread[k] = (amax - amin) / (asum / p)
        out_hold[k] = h
        out_held[k] = held
        out_incast[k] = dmax
        out_k[k] = kmax_all
        out_paced[k] = h > 0.0

        if mode == 1:
            # hysteresis: switch on above theta_on; switch off only after `patience`
            # consecutive iterations below theta_off
            if not state[1]:
                if out_spread[k] > theta_on:
                    state[1] = 1
                    state[2] = 0
            elif out_spread[k] < theta_off:
                state[2] += 1
                if state[2] >= patience:
                    state[1] = 0
                    state[2] = 0
            else:
                state[2] = 0
        elif mode == 3:
            # BaselinePacer (controllers.py): the same operations in the same order, so
            # both paths take identical decisions. The signal is the collective phase
            # relative to a clipped running baseline; switching on again soon after
            # switching off doubles the patience (back-off), a long calm stay resets it.
            e = out_time[k] - amax
            if bstate[0] != bstate[0] or bstate[0] <= 0.0:
                bstate[0] = e
            x = e / bstate[0] - 1.0 if bstate[0] > 0.0 else 0.0
            cap = bstate[0] * (1.0 + theta_on)
            bstate[0] += smoothing * ((e if e < cap else cap) - bstate[0])
            if not state[1]:
                if bstate[2] >= 0.0:
                    bstate[2] += 1.0
                if x > theta_on:
                    if bstate[2] >= 0.0 and bstate[2] <= bstate[1]:
                        bstate[1] = 2.0 * bstate[1]
                        if bstate[1] > max_patience:
                            bstate[1] = <float64_t>max_patience
                    state[1] = 1
                    state[2] = 0
                elif bstate[2] >= 0.0 and bstate[2] > bstate[1]:
                    bstate[1] = <float64_t>patience
                    bstate[2] = -1.0
            elif x < theta_off:
                state[2] += 1
                if state[2] >= bstate[1]:
                    state[1] = 0
                    state[2] = 0
                    bstate[2] = 0.0
            else:
                state[2] = 0


def _check_inputs(base, g, z, picks, busy, flow_src, flow_src_leaf, flow_dst_leaf, n_leaves,
                  n_spines, rail_a, rail_bw, rail_floor, ep_rank, ep_start, ep_end, ep_factor,
                  mode, holds, ep_until, ep_fac, eff, active, state, bstate):
    # every index the nogil loop dereferences, checked once, vectorised
    p = base.shape[0]
    if g < 1 or p == 0 or p % g:
        raise ValueError(f"len(base) must be a positive multiple of g={g}, got {p}")
    c = z.shape[0]
    if z.shape[1] != p:
        raise ValueError(f"z must have shape (c, {p}), got {tuple(z.shape)[:2]}")
    n_flows = flow_src.shape[0]
    if tuple(picks.shape)[:3] != (c, g, n_flows):
        raise ValueError(f"picks must have shape ({c}, {g}, {n_flows}), got {tuple(picks.shape)[:3]}")
    if n_leaves < 1 or n_spines < 1:
        raise ValueError(f"n_leaves and n_spines must be >= 1, got {n_leaves}, {n_spines}")
    if tuple(busy.shape)[:2] != (c, n_leaves):
        raise ValueError(f"busy must have shape ({c}, {n_leaves}), got {tuple(busy.shape)[:2]}")
    for name, arr, hi in (("flow_src", flow_src, p // g), ("flow_src_leaf", flow_src_leaf, n_leaves),
                          ("flow_dst_leaf", flow_dst_leaf, n_leaves), ("picks", picks, n_spines),
                          ("ep_rank", ep_rank, p)):
        a = np.asarray(arr)
        if name != "picks" and a.shape[0] != (n_flows if name.startswith("flow") else ep_start.shape[0]):
            raise ValueError(f"{name} has length {a.shape[0]}, inconsistent with the other arrays")
        if a.size and (a.min() < 0 or a.max() >= hi):
            raise ValueError(f"{name} must lie in [0, {hi}), got range [{a.min()}, {a.max()}]")
    for name, arr in (("rail_a", rail_a), ("rail_bw", rail_bw), ("rail_floor", rail_floor)):
        if arr.shape[0] != g:
            raise ValueError(f"{name} must have length g={g}, got {arr.shape[0]}")
    if not (ep_end.shape[0] == ep_factor.shape[0] == ep_start.shape[0]):
        raise ValueError("ep_start, ep_end and ep_factor must have equal lengths")
    if (ep_until.shape[0] != p or ep_fac.shape[0] != p or eff.shape[0] != p or active.shape[0] != p
            or state.shape[0] != 4):
        raise ValueError(f"ep_until, ep_fac, eff and active must have length {p} and state length 4")
    if not 0 <= state[0] <= ep_start.shape[0]:
        raise ValueError(f"state[0] (episode pointer) must be in [0, {ep_start.shape[0]}], got {state[0]}")
    if not 0 <= state[3] <= p:
        raise ValueError(f"state[3] (active episodes) must be in [0, {p}], got {state[3]}")
    act = np.asarray(active)[:state[3]]
    if act.size and (act.min() < 0 or act.max() >= p):
        raise ValueError(f"active ranks must lie in [0, {p})")
    if mode not in (0, 1, 2, 3):
        raise ValueError(f"mode must be 0, 1, 2 or 3, got {mode}")
    if bstate.shape[0] != 3:
        raise ValueError(f"bstate must have length 3, got {bstate.shape[0]}")
    if mode == 2 and holds.shape[0] < c:
        raise ValueError(f"mode 2 needs one hold per iteration ({c}), got {holds.shape[0]}")


def simulate_chunk(
    const float64_t[::1] base, intp_t g, float64_t sigma,
    const float[:, ::1] z, const uint32_t[:, :, ::1] picks, const uint8_t[:, ::1] busy,
    const intp_t[::1] flow_src, const intp_t[::1] flow_src_leaf,
    const intp_t[::1] flow_dst_leaf, intp_t n_leaves, intp_t n_spines,
    const float64_t[::1] rail_a, const float64_t[::1] rail_bw,
    const float64_t[::1] rail_floor, float64_t t_intra,
    float64_t nic_bw, float64_t window, float64_t buffer, float64_t buffer_idle, float64_t rto,
    float64_t ctrl_latency,
    const intp_t[::1] ep_rank, const int64_t[::1] ep_start,
    const int64_t[::1] ep_end, const float64_t[::1] ep_factor,
    int64_t it0, int mode, const float64_t[::1] holds,
    float64_t theta_on, float64_t theta_off, int64_t patience, float64_t hold_max,
    int64_t[::1] ep_until, float64_t[::1] ep_fac, float64_t[::1] eff, intp_t[::1] active,
    int64_t[::1] state, float64_t[::1] bstate, float64_t smoothing=0.0, int64_t max_patience=0,
    bint record=False,
):
    """Advance ``z.shape[0]`` iterations; return a dict of per-iteration arrays.

    Private: ``spare_core.pacing`` validates every argument (shapes, ranges, sorted
    episodes, spine indices < ``n_spines``, ``g`` dividing ``p``) before calling.
    ``ep_until``, ``ep_fac``, ``eff``, ``active``, ``state`` and ``bstate`` are updated
    in place (IN-OUT) so that consecutive chunks continue one simulation; start a
    simulation with ``ep_until = 0``, ``ep_fac = 1``, ``eff = base``, ``state = 0``,
    ``bstate = (nan, patience, -1)``. Modes: 0 no pacing, 1 spread hysteresis, 2 the
    given ``holds``, 3 the baseline pacer (``smoothing``, ``max_patience``).
    """
    cdef intp_t c = z.shape[0]
    cdef intp_t p = base.shape[0]
    cdef intp_t n_nodes = p // g
    cdef intp_t n_flows = flow_src.shape[0]
    _check_inputs(base, g, z, picks, busy, flow_src, flow_src_leaf, flow_dst_leaf, n_leaves,
                  n_spines, rail_a, rail_bw, rail_floor, ep_rank, ep_start, ep_end, ep_factor,
                  mode, holds, ep_until, ep_fac, eff, active, state, bstate)
    node_ent = np.empty(n_nodes, dtype=np.float64)
    parked = np.empty(n_nodes, dtype=np.float64)
    flow_pk = np.empty(n_flows, dtype=np.float64)
    links = np.zeros(6 * n_leaves * n_spines, dtype=np.float64)
    out = {name: np.empty(c, dtype=np.float64) for name in
           ("time", "arrival_max", "spread", "hold", "held", "incast", "contention")}
    paced = np.empty(c, dtype=np.int8)
    if record:
        rec_arr = np.empty((c, p), dtype=np.float64)
        rec_ent = np.empty((c, p), dtype=np.float64)
    else:
        rec_arr = np.empty((0, 0), dtype=np.float64)
        rec_ent = np.empty((0, 0), dtype=np.float64)
    cdef float64_t[::1] v_ent = node_ent, v_park = parked
    cdef float64_t[::1] v_fpk = flow_pk, v_links = links
    cdef float64_t[::1] o_t = out["time"], o_a = out["arrival_max"], o_s = out["spread"]
    cdef float64_t[::1] o_h = out["hold"], o_held = out["held"], o_i = out["incast"]
    cdef float64_t[::1] o_k = out["contention"]
    cdef int8_t[::1] o_p = paced
    cdef float64_t[:, ::1] v_ra = rec_arr, v_re = rec_ent
    with nogil:
        _run(base, g, sigma, z, picks, busy, flow_src, flow_src_leaf, flow_dst_leaf,
                    n_spines, rail_a, rail_bw, rail_floor, t_intra, nic_bw, window,
                    buffer, buffer_idle, rto, ctrl_latency, ep_rank, ep_start, ep_end, ep_factor, it0,
                    mode, holds, theta_on, theta_off, patience, hold_max, smoothing, max_patience,
                    ep_until, ep_fac, eff, active, state, bstate, v_ent, v_park,
                    v_fpk, v_links,
                    o_t, o_a, o_s, o_h, o_held, o_i, o_k, o_p, record, v_ra, v_re)
    out["paced"] = paced.astype(bool)
    if record:
        out["arrivals"] = rec_arr
        out["entries"] = rec_ent
    return out
