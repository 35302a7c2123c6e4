# cython: language_level=3
"""Iteration kernel of the straggler / fabric / pacing model (``spare_core.pacing``).

One call advances the simulation by a chunk of ``c`` synchronous data-parallel
iterations over ``p = n_nodes * g`` ranks. The kernel is a deterministic function of its
inputs: every random quantity (per-rank jitter normals, ECMP spine choices, episode
schedule, persistent speeds, ring order) is drawn by the Python layer from seeded
``numpy.random.Generator`` streams and passed in, so a pure-numpy reference can replay
exactly the same iterations. The kernel holds no policy: the pacing decision is either
"none" (mode 0), the built-in hysteresis rule whose thresholds are given by the caller
(mode 1), or an explicit per-iteration hold chosen by a Python controller (mode 2).

Per iteration k (all times relative to the iteration start, when every rank left the
previous all-reduce together):

1. arrival ``a_r = base_r * episode_r(k) * exp(sigma * z[k, r] - sigma^2 / 2)``;
2. entry ``e_r = a_r`` without pacing; with a hold bound ``h > 0`` the rank waits at the
   gate until the controller's release (last arrival + ``ctrl_latency``) or until it
   has waited ``h``: ``e_r = min(a_r + h, max_s a_s + ctrl_latency)`` (so
   ``a_r <= e_r <= a_r + h``);
3. node entry ``E_n = max_{r in n} e_r`` (the NVLink phase needs every local rank);
   collective start ``T0 = max_n E_n``;
4. each node parks ``P_n = min(nic_bw * (T0 - E_n), window)`` bytes per rail flow
   (the eager window it pushed before its ring peer was ready), released at ``T0``;
5. per rail plane, every cross-leaf ring flow takes the spine ``picks[k, rail, f]``;
   for each uplink (src leaf, spine) and downlink (spine, dst leaf) the kernel counts
   flows (contention ``K``) and the fluid incast backlog ``sum P - max P``; a backlog
   over ``buffer`` costs ``rto + overflow / nic_bw`` (``incast_penalty``);
6. rail time ``A_j + max(Bw_j * K_j, floor_j) + D_j``; iteration time
   ``T0 + t_intra + max_j rail time``.

Buffers: O(p) arrivals, O(n_nodes) node entries and parked bytes, O(n_leaves *
n_spines) link counters, all allocated once per call by the wrapper. The whole
iteration loop runs in one ``nogil`` block; the only error (a spine index out of range)
is returned as a code and raised after the loop.
"""
import numpy as np

from libc.math cimport exp, INFINITY
from libc.stdint cimport uint32_t, int8_t
from _types cimport intp_t, float64_t, int64_t

# Error codes of the nogil kernel (also listed in pacing.pxd, which Cython does not pick
# up as this module's own .pxd under the package name setup.py gives it).
cdef enum:
    PACING_OK = 0
    PACING_BAD_SPINE = 1      # an ECMP spine index outside [0, n_spines)


cdef inline float64_t incast_penalty(float64_t queue, float64_t buffer, float64_t rto,
                                     float64_t bandwidth) noexcept nogil:
    # Fluid incast cost of one shared link whose peak backlog is `queue` bytes: zero when
    # the switch buffer absorbs it; otherwise the loss-recovery stall plus the time to
    # resend the overflow at line rate.
    cdef float64_t over = queue - buffer
    if over <= 0.0:
        return 0.0
    return rto + over / bandwidth


cdef int _run(
    # ---- static model (IN) ----
    const float64_t[::1] base,          # [p] nominal compute per rank (s), > 0
    intp_t g,                           # ranks per node
    float64_t sigma,                    # log-sd of per-iteration jitter, >= 0
    const float[:, ::1] z,              # [c, p] standard normals
    const uint32_t[:, :, ::1] picks,    # [c, g, F] ECMP spine per cross-leaf flow
    const intp_t[::1] flow_src,         # [F] source node of each cross-leaf ring flow
    const intp_t[::1] flow_src_leaf,    # [F] its leaf
    const intp_t[::1] flow_dst_leaf,    # [F] the destination node's leaf
    intp_t n_spines,
    const float64_t[::1] rail_a,        # [g] latency + reduction part of each rail (s)
    const float64_t[::1] rail_bw,       # [g] bandwidth part at contention 1 (s)
    const float64_t[::1] rail_floor,    # [g] NVLink floor of the bandwidth part (s)
    float64_t t_intra,                  # intra-node phases of the collective (s)
    float64_t nic_bw, float64_t window, float64_t buffer, float64_t rto,
    float64_t ctrl_latency,
    const intp_t[::1] ep_rank,          # [E] episodes sorted by start iteration
    const int64_t[::1] ep_start,
    const int64_t[::1] ep_end,
    const float64_t[::1] ep_factor,
    int64_t it0,                        # global index of the chunk's first iteration
    # ---- controller (IN) ----
    int mode, const float64_t[::1] holds,
    float64_t theta_on, float64_t theta_off, int64_t patience, float64_t hold_max,
    # ---- state (IN-OUT) ----
    int64_t[::1] ep_until,              # [p] episode active while iteration < ep_until
    float64_t[::1] ep_fac,              # [p] its slowdown factor
    int64_t[::1] state,                 # [3] episode pointer, pacing on, calm count
    # ---- scratch ----
    float64_t[::1] arr,                 # [p]
    float64_t[::1] node_ent,            # [n_nodes]
    float64_t[::1] parked,              # [n_nodes]
    int64_t[::1] cnt_up, float64_t[::1] vol_up, float64_t[::1] max_up,   # [L*U]
    int64_t[::1] cnt_dn, float64_t[::1] vol_dn, float64_t[::1] max_dn,   # [L*U]
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
    cdef intp_t k, r, n, j, f, s, u, d, lo
    cdef int64_t it
    cdef float64_t shift = -0.5 * sigma * sigma
    cdef float64_t a, e, m, amax, amin, asum, gate, h, held, t0, pk
    cdef float64_t kmax_all, rail, tinter, dmax, pen, kk
    cdef int64_t kmax

    for k in range(c):
        it = it0 + k
        # episodes starting by this iteration; overlapping ones merge (longer end,
        # larger factor) because a rank cannot be throttled twice at once
        while state[0] < n_ep and ep_start[state[0]] <= it:
            r = ep_rank[state[0]]
            if ep_until[r] > it:
                if ep_factor[state[0]] > ep_fac[r]:
                    ep_fac[r] = ep_factor[state[0]]
                if ep_end[state[0]] > ep_until[r]:
                    ep_until[r] = ep_end[state[0]]
            else:
                ep_fac[r] = ep_factor[state[0]]
                ep_until[r] = ep_end[state[0]]
            state[0] += 1

        if mode == 0:
            h = 0.0
        elif mode == 1:
            h = hold_max if state[1] else 0.0
        else:
            h = holds[k]

        amax = -INFINITY
        amin = INFINITY
        asum = 0.0
        for r in range(p):
            m = ep_fac[r] if ep_until[r] > it else 1.0
            a = base[r] * m * exp(sigma * z[k, r] + shift)
            arr[r] = a
            asum += a
            if a > amax:
                amax = a
            if a < amin:
                amin = a

        gate = amax + ctrl_latency
        held = 0.0
        t0 = -INFINITY
        for n in range(n_nodes):
            m = -INFINITY
            lo = n * g
            for r in range(lo, lo + g):
                a = arr[r]
                if h > 0.0:
                    e = a + h
                    if gate < e:
                        e = gate
                else:
                    e = a
                if e - a > held:
                    held = e - a
                if e > m:
                    m = e
                if record:
                    rec_arr[k, r] = a
                    rec_ent[k, r] = e
            node_ent[n] = m
            if m > t0:
                t0 = m
        for n in range(n_nodes):
            pk = nic_bw * (t0 - node_ent[n])
            parked[n] = pk if pk < window else window

        tinter = 0.0
        kmax_all = 1.0
        dmax = 0.0
        for j in range(g):
            kmax = 1
            for f in range(n_flows):
                s = picks[k, j, f]
                if s >= n_spines:
                    return PACING_BAD_SPINE
                pk = parked[flow_src[f]]
                u = flow_src_leaf[f] * n_spines + s
                d = flow_dst_leaf[f] * n_spines + s
                cnt_up[u] += 1
                vol_up[u] += pk
                if pk > max_up[u]:
                    max_up[u] = pk
                cnt_dn[d] += 1
                vol_dn[d] += pk
                if pk > max_dn[d]:
                    max_dn[d] = pk
            pen = 0.0
            # second pass reads each touched link and resets it for the next rail
            for f in range(n_flows):
                u = flow_src_leaf[f] * n_spines + picks[k, j, f]
                d = flow_dst_leaf[f] * n_spines + picks[k, j, f]
                if cnt_up[u] > 0:
                    if cnt_up[u] > kmax:
                        kmax = cnt_up[u]
                    e = incast_penalty(vol_up[u] - max_up[u], buffer, rto, nic_bw)
                    if e > pen:
                        pen = e
                    cnt_up[u] = 0
                    vol_up[u] = 0.0
                    max_up[u] = 0.0
                if cnt_dn[d] > 0:
                    if cnt_dn[d] > kmax:
                        kmax = cnt_dn[d]
                    e = incast_penalty(vol_dn[d] - max_dn[d], buffer, rto, nic_bw)
                    if e > pen:
                        pen = e
                    cnt_dn[d] = 0
                    vol_dn[d] = 0.0
                    max_dn[d] = 0.0
            kk = rail_bw[j] * kmax
            if kk < rail_floor[j]:
                kk = rail_floor[j]
            rail = rail_a[j] + kk + pen
            if rail > tinter:
                tinter = rail
            if kmax > kmax_all:
                kmax_all = kmax
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
    return PACING_OK


def simulate_chunk(
    const float64_t[::1] base, intp_t g, float64_t sigma,
    const float[:, ::1] z, const uint32_t[:, :, ::1] picks,
    const intp_t[::1] flow_src, const intp_t[::1] flow_src_leaf,
    const intp_t[::1] flow_dst_leaf, intp_t n_leaves, intp_t n_spines,
    const float64_t[::1] rail_a, const float64_t[::1] rail_bw,
    const float64_t[::1] rail_floor, float64_t t_intra,
    float64_t nic_bw, float64_t window, float64_t buffer, float64_t rto,
    float64_t ctrl_latency,
    const intp_t[::1] ep_rank, const int64_t[::1] ep_start,
    const int64_t[::1] ep_end, const float64_t[::1] ep_factor,
    int64_t it0, int mode, const float64_t[::1] holds,
    float64_t theta_on, float64_t theta_off, int64_t patience, float64_t hold_max,
    int64_t[::1] ep_until, float64_t[::1] ep_fac, int64_t[::1] state,
    bint record=False,
):
    """Advance ``z.shape[0]`` iterations; return a dict of per-iteration arrays.

    Private: ``spare_core.pacing`` validates every argument (shapes, ranges, sorted
    episodes, spine indices < ``n_spines``, ``g`` dividing ``p``) before calling.
    ``ep_until``, ``ep_fac`` and ``state`` are updated in place (IN-OUT) so that
    consecutive chunks continue one simulation.
    """
    cdef intp_t c = z.shape[0]
    cdef intp_t p = base.shape[0]
    cdef intp_t n_nodes = p // g
    cdef intp_t nl = n_leaves * n_spines
    arr = np.empty(p, dtype=np.float64)
    node_ent = np.empty(n_nodes, dtype=np.float64)
    parked = np.empty(n_nodes, dtype=np.float64)
    cnt_up = np.zeros(nl, dtype=np.int64)
    cnt_dn = np.zeros(nl, dtype=np.int64)
    vol_up = np.zeros(nl, dtype=np.float64)
    vol_dn = np.zeros(nl, dtype=np.float64)
    max_up = np.zeros(nl, dtype=np.float64)
    max_dn = np.zeros(nl, dtype=np.float64)
    out = {name: np.empty(c, dtype=np.float64) for name in
           ("time", "arrival_max", "spread", "hold", "held", "incast", "contention")}
    paced = np.empty(c, dtype=np.int8)
    if record:
        rec_arr = np.empty((c, p), dtype=np.float64)
        rec_ent = np.empty((c, p), dtype=np.float64)
    else:
        rec_arr = np.empty((0, 0), dtype=np.float64)
        rec_ent = np.empty((0, 0), dtype=np.float64)
    cdef float64_t[::1] v_arr = arr, v_ent = node_ent, v_park = parked
    cdef int64_t[::1] v_cu = cnt_up, v_cd = cnt_dn
    cdef float64_t[::1] v_vu = vol_up, v_vd = vol_dn, v_mu = max_up, v_md = max_dn
    cdef float64_t[::1] o_t = out["time"], o_a = out["arrival_max"], o_s = out["spread"]
    cdef float64_t[::1] o_h = out["hold"], o_held = out["held"], o_i = out["incast"]
    cdef float64_t[::1] o_k = out["contention"]
    cdef int8_t[::1] o_p = paced
    cdef float64_t[:, ::1] v_ra = rec_arr, v_re = rec_ent
    cdef int code
    with nogil:
        code = _run(base, g, sigma, z, picks, flow_src, flow_src_leaf, flow_dst_leaf,
                    n_spines, rail_a, rail_bw, rail_floor, t_intra, nic_bw, window,
                    buffer, rto, ctrl_latency, ep_rank, ep_start, ep_end, ep_factor, it0,
                    mode, holds, theta_on, theta_off, patience, hold_max,
                    ep_until, ep_fac, state, v_arr, v_ent, v_park,
                    v_cu, v_vu, v_mu, v_cd, v_vd, v_md,
                    o_t, o_a, o_s, o_h, o_held, o_i, o_k, o_p, record, v_ra, v_re)
    if code == PACING_BAD_SPINE:
        raise ValueError(f"picks must be < n_spines={n_spines}")
    out["paced"] = paced.astype(bool)
    if record:
        out["arrivals"] = rec_arr
        out["entries"] = rec_ent
    return out
