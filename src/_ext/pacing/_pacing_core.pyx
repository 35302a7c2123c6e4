# cython: language_level=3
"""Iteration kernel of the straggler / fabric / pacing model (``spare_core.pacing``).

One call advances the simulation by a chunk of ``c`` synchronous data-parallel
iterations over ``p = n_nodes * g`` ranks. The kernel is a deterministic function of its
inputs: every random quantity (per-rank jitter normals, ECMP path choices, episode
schedule, persistent speeds, ring order) is drawn by the Python layer from seeded
``numpy.random.Generator`` streams and passed in, so a pure-numpy reference can replay
exactly the same iterations. The kernel holds no policy and knows no topology:

- the pacing decision is one of the exported modes: ``MODE_NONE`` (never hold),
  ``MODE_SPREAD`` (hysteresis on the arrival spread, thresholds given by the caller),
  ``MODE_BASELINE`` (hysteresis on the collective phase against a clipped running
  baseline) or ``MODE_HOLDS`` (an explicit per-iteration hold chosen by a Python
  controller);
- the fabric is a :class:`LinkTable`: which links each inter-node ring flow of each rail
  crosses on each of its ``n_paths`` ECMP paths, which buffer domain (switch) each link's
  egress queue belongs to, and which rails share links (``spare_core.pacing.fabrics``
  builds it from a topology).

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
5. on rail j every flow f takes ECMP path ``picks[k, j, f]`` and loads each link of
   that path with its source's burst; each link counts its flows (contention ``K``,
   over all rails whose flows cross it) and the fluid incast backlog ``sum P - max P``;
   a backlog over the link's headroom (``buffer`` when ``busy[k, domain]``: competing
   traffic holds the shared buffer of the link's domain; ``buffer_idle`` otherwise) is
   dropped and costs ``rto * ceil(overflow / (headroom + window)) + overflow / nic_bw``:
   synchronized senders time out and resend together, so recovery repeats (incast
   collapse) (``incast_penalty``). Rail j's contention ``K_j`` and penalty ``D_j`` are
   the maxima over the links its own flows crossed;
6. rail time ``A_j + max(Bw_j * K_j, floor_j) + D_j``; iteration time
   ``T0 + t_intra + max_j rail time``.

Links live in planes: rail j's flows cross only links of plane ``rail_plane[j]``. A
plane used by one rail (a rail-optimised fabric: every rail its own switches) is counted
and cleared in one sequential scan after that rail's flows are loaded; a plane shared by
several rails (a top-of-rack leaf carries every rail of its nodes) is loaded with all of
them, scanned once for each link's penalty, then each rail takes its maxima over the
links its flows crossed (a second pass over those flows).

Buffers: O(n_nodes) node entries and parked bytes, O(F) parked bytes per flow, one
plane's ``(count, bytes, largest burst)`` link triples, allocated once per call. The
whole iteration loop runs in one ``nogil`` block and cannot fail: ``LinkTable`` checks
every index of the fabric once when it is built (and keeps private copies), and the
``def`` wrapper checks every other shape and index before the loop, so no input makes the
kernel read or write out of bounds.
"""
import numpy as np

from libc.math cimport exp, ceil, INFINITY, isfinite
from libc.stdint cimport uint32_t, uint8_t, int8_t
from _types cimport intp_t, float64_t, int64_t


# ---- exported constants (the wrapper reads these; never copy the numbers) ----
cdef enum:
    C_MODE_NONE = 0         # never hold
    C_MODE_SPREAD = 1       # arrival-spread hysteresis (theta_on, theta_off, patience, hold_max)
    C_MODE_HOLDS = 2        # holds[k] given per iteration (a Python controller)
    C_MODE_BASELINE = 3     # collective-phase baseline hysteresis (+ smoothing, max_patience)
    C_NO_LINK = -1          # LinkTable: a hop a flow does not make / a path without that hop

MODE_NONE = C_MODE_NONE
MODE_SPREAD = C_MODE_SPREAD
MODE_HOLDS = C_MODE_HOLDS
MODE_BASELINE = C_MODE_BASELINE
MODES = (MODE_NONE, MODE_SPREAD, MODE_HOLDS, MODE_BASELINE)
NO_LINK = C_NO_LINK
# every enum of this kernel under the name all kernels use
CONSTANTS = {"MODE_NONE": MODE_NONE, "MODE_SPREAD": MODE_SPREAD, "MODE_HOLDS": MODE_HOLDS,
             "MODE_BASELINE": MODE_BASELINE, "NO_LINK": NO_LINK}


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


cdef inline intp_t _hop_link(const intp_t* hop, const intp_t[::1] path_links, bint identity,
                             intp_t h, uint32_t s) noexcept nogil:
    # plane-local link of hop h on path s, or C_NO_LINK
    cdef intp_t seg = hop[h]
    if seg < 0:
        return C_NO_LINK
    if identity:
        return seg + s
    return path_links[seg + s]


cdef inline void _close_rail(float64_t kk, float64_t pen, float64_t a, float64_t bw, float64_t floor,
                             float64_t* kmax_all, float64_t* tinter, float64_t* dmax) noexcept nogil:
    # rail j's collective time once its contention kk and incast penalty pen are known:
    # fixed part + bandwidth part at kk (never below the NVLink floor) + penalty; the
    # iteration keeps the maxima over rails
    cdef float64_t rail
    if kk > kmax_all[0]:
        kmax_all[0] = kk
    kk = bw * kk
    if kk < floor:
        kk = floor
    rail = a + kk + pen
    if rail > tinter[0]:
        tinter[0] = rail
    if pen > dmax[0]:
        dmax[0] = pen


cdef void _load_rail(float64_t[::1] links, const intp_t[:, ::1] hops, intp_t first_row,
                     const intp_t[::1] path_links, bint identity,
                     const float64_t[::1] flow_pk, const uint32_t* row) noexcept nogil:
    # every flow of one rail (its hops in rows first_row .. first_row + F - 1) loads the
    # links of the path ECMP picked for it
    cdef intp_t n_flows = flow_pk.shape[0]
    cdef intp_t n_hops = hops.shape[1]
    cdef intp_t f, h, seg, lnk
    cdef float64_t pk
    cdef const intp_t* hop
    if n_flows == 0:
        return
    hop = &hops[first_row, 0]
    if identity and n_hops == 2:
        # every built-in fabric: up to a spine and down to a leaf, consecutive candidates
        for f in range(n_flows):
            pk = flow_pk[f]
            if hop[0] >= 0:
                _load_link(&links[3 * (hop[0] + row[f])], pk)
            if hop[1] >= 0:
                _load_link(&links[3 * (hop[1] + row[f])], pk)
            hop += 2
    elif identity:
        for f in range(n_flows):
            pk = flow_pk[f]
            for h in range(n_hops):
                seg = hop[h]
                if seg >= 0:
                    _load_link(&links[3 * (seg + row[f])], pk)
            hop += n_hops
    else:
        for f in range(n_flows):
            pk = flow_pk[f]
            for h in range(n_hops):
                seg = hop[h]
                if seg >= 0:
                    lnk = path_links[seg + row[f]]
                    if lnk >= 0:
                        _load_link(&links[3 * lnk], pk)
            hop += n_hops


cdef class LinkTable:
    """Validated, immutable link incidence of one job on one fabric (kernel form).

    Built once per simulation by ``spare_core.pacing`` from a
    :class:`spare_core.pacing.fabrics.LinkIncidence`; every array is copied and checked
    here, so :func:`simulate_chunk` can trust it. Links are numbered per plane
    (``0 <= link < plane_links``); rail j's flows cross links of plane ``rail_plane[j]``.

    Parameters (keyword-only)
    -------------------------
    n_nodes, gpus_per_node : int
        Job size the table was built for (checked against each call).
    flow_src : int array (F,)
        Node whose parked bytes each inter-node flow carries, in ``[0, n_nodes)``.
    hops : int array (F, H) or (gpus_per_node, F, H)
        Start, in the path table, of hop h's ``n_paths`` candidates for flow f (on rail
        j: per-rail hops), or ``NO_LINK`` when the flow makes no hop h. A 2-d array is the
        same for every rail (stored once, not copied g times).
    path_links : int array (M,) or None
        Plane-local link of each candidate (``NO_LINK``: that path skips the hop). None
        means the identity table: candidate s of a hop starting at ``seg`` is link
        ``seg + s`` (a hop's links are consecutive, as a leaf's uplinks are).
    n_paths : int
        ECMP paths per flow (>= 1); picks lie in ``[0, n_paths)``.
    plane_links : int
        Links per plane (>= 0).
    rail_plane : int array (gpus_per_node,)
        Plane of each rail, in ``[0, max(rail_plane) + 1)``.
    link_domain : int array (n_planes * plane_links,)
        Buffer domain of each link (plane q's link l at ``q * plane_links + l``), in
        ``[0, n_domains)``: the column of ``busy`` that sets its headroom.
    n_domains : int
        Buffer domains (>= 1).
    """

    cdef readonly intp_t n_nodes, n_rails, n_planes, plane_links, n_paths, n_domains
    cdef readonly intp_t n_flows, n_hops
    cdef readonly bint identity, per_rail_hops
    cdef intp_t[::1] _flow_src
    cdef intp_t[:, ::1] _hops         # [F, H] shared by the rails, or [g * F, H] per rail
    cdef intp_t _hop_stride           # rows between consecutive rails' hops: 0 or F
    cdef intp_t[::1] _path_links
    cdef intp_t[::1] _link_domain
    cdef intp_t[::1] _plane_ptr       # [n_planes + 1] rails of plane q: _plane_rails[ptr[q]:ptr[q+1]]
    cdef intp_t[::1] _plane_rails     # [g]

    def __init__(self, *, n_nodes, gpus_per_node, flow_src, hops, path_links, n_paths, plane_links,
                 rail_plane, link_domain, n_domains):
        # scalars first: nothing O(n) runs on a bad option
        n_nodes = _count(n_nodes, "n_nodes", 1)
        g = _count(gpus_per_node, "gpus_per_node", 1)
        n_paths = _count(n_paths, "n_paths", 1)
        plane_links = _count(plane_links, "plane_links", 0)
        n_domains = _count(n_domains, "n_domains", 1)
        fsrc = _index_array(flow_src, "flow_src", 1)
        hp = _index_array(hops, "hops", (2, 3))
        if hp.ndim == 3 and hp.shape[0] != g:
            raise ValueError(f"3-d hops must have one slice per rail (gpus_per_node={g}), got shape {hp.shape}")
        # (no negative indices anywhere in this module: it is compiled with wraparound off,
        # which applies to Python tuples too)
        n_flows_h, n_hops_h = hp.shape[hp.ndim - 2], hp.shape[hp.ndim - 1]
        if n_hops_h < 1:
            raise ValueError(f"hops must have at least one column (hop), got shape {hp.shape}")
        if n_flows_h != fsrc.shape[0]:
            raise ValueError(f"hops must have one row per flow ({fsrc.shape[0]}), got shape {hp.shape}")
        rp = _index_array(rail_plane, "rail_plane", 1)
        if rp.shape[0] != g:
            raise ValueError(f"rail_plane must have length gpus_per_node={g}, got {rp.shape[0]}")
        _check_range(fsrc, "flow_src", 0, n_nodes)
        _check_range(rp, "rail_plane", 0, g)
        n_planes = int(rp.max()) + 1
        used = np.zeros(n_planes, dtype=bool)
        used[rp] = True
        if not used.all():
            raise ValueError(f"rail_plane must use every plane 0..{n_planes - 1}, got {rp.tolist()}")
        ld = _index_array(link_domain, "link_domain", 1)
        if ld.shape[0] != n_planes * plane_links:
            raise ValueError(f"link_domain must have n_planes * plane_links = {n_planes} * {plane_links} "
                             f"entries, got {ld.shape[0]}")
        _check_range(ld, "link_domain", 0, n_domains)
        if path_links is None:
            self.identity = True
            pl = np.zeros(0, dtype=np.intp)
            # a hop's candidates are links seg .. seg + n_paths - 1
            hi = plane_links - n_paths + 1
        else:
            self.identity = False
            pl = _index_array(path_links, "path_links", 1)
            _check_range(pl, "path_links", C_NO_LINK, plane_links)
            hi = pl.shape[0] - n_paths + 1
        real = hp[hp != C_NO_LINK]
        if real.size and (real.min() < 0 or real.max() >= hi):
            where = "plane_links - n_paths" if path_links is None else "len(path_links) - n_paths"
            raise ValueError(f"hops must be {C_NO_LINK} (no hop) or lie in [0, {where}] = [0, {hi - 1}], "
                             f"got range [{real.min()}, {real.max()}]")
        order = np.argsort(rp, kind="stable")
        self.n_nodes, self.n_rails, self.n_planes = n_nodes, g, n_planes
        self.plane_links, self.n_paths, self.n_domains = plane_links, n_paths, n_domains
        self.n_flows, self.n_hops = n_flows_h, n_hops_h
        self.per_rail_hops = hp.ndim == 3
        self._hop_stride = self.n_flows if self.per_rail_hops else 0
        # memoryviews only from the contiguous intp copies made above (cannot fail)
        self._flow_src = fsrc
        self._hops = hp.reshape(-1, self.n_hops)
        self._path_links = pl
        self._link_domain = ld
        self._plane_ptr = np.concatenate([[0], np.cumsum(np.bincount(rp, minlength=n_planes))]).astype(np.intp)
        self._plane_rails = np.ascontiguousarray(order, dtype=np.intp)

    @property
    def rails_per_plane(self):
        """Number of rails on each plane (a copy)."""
        return np.diff(np.asarray(self._plane_ptr)).copy()

    def __repr__(self):
        return (f"LinkTable(n_nodes={self.n_nodes}, rails={self.n_rails}, planes={self.n_planes}, "
                f"plane_links={self.plane_links}, flows={self.n_flows}, hops={self.n_hops}, "
                f"paths={self.n_paths}, domains={self.n_domains}, identity={bool(self.identity)})")


def _count(value, name, lo):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}")
    return int(value)


def _index_array(arr, name, ndim):
    # a private C-contiguous intp copy: the caller's array is never kept nor modified
    a = np.asarray(arr)
    dims = ndim if isinstance(ndim, tuple) else (ndim,)
    if a.ndim not in dims:
        want = " or ".join(f"{d}-d" for d in dims)
        raise ValueError(f"{name} must be a {want} integer array, got {a.ndim} dimension(s)")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")
    return np.array(a, dtype=np.intp, order="C", copy=True)


def _check_range(a, name, lo, hi):
    if a.size and (a.min() < lo or a.max() >= hi):
        raise ValueError(f"{name} must lie in [{lo}, {hi}), got range [{a.min()}, {a.max()}]")


cdef void _run(
    # ---- static model (IN) ----
    const float64_t[::1] base,          # [p] nominal compute per rank (s), > 0
    intp_t g,                           # ranks per node
    float64_t sigma,                    # log-sd of per-iteration jitter, >= 0
    const float[:, ::1] z,              # [c, p] standard normals
    const uint32_t[:, :, ::1] picks,    # [c, g, F] ECMP path of each flow, < n_paths
    const uint8_t[:, ::1] busy,         # [c, D] domain's shared buffer held by competing traffic
    # fabric (a LinkTable's arrays)
    const intp_t[::1] flow_src,         # [F] source node of each inter-node flow
    const intp_t[:, ::1] hops,          # [F or g*F, H] start of each hop's candidates, or C_NO_LINK
    intp_t hop_stride,                  # rows from rail j to rail j+1 in hops: 0 (shared) or F
    const intp_t[::1] path_links,       # [M] plane-local link per candidate (unused if identity)
    bint identity,
    const intp_t[::1] link_domain,      # [n_planes * plane_links] buffer domain of each link
    const intp_t[::1] plane_ptr,        # [n_planes + 1]
    const intp_t[::1] plane_rails,      # [g] rails grouped by plane
    intp_t plane_links,
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
    float64_t[::1] bstate,              # [3] baseline mode: baseline (NaN: none), patience, since off (-1: none)
    # ---- scratch ----
    float64_t[::1] node_ent,            # [n_nodes]
    float64_t[::1] parked,              # [n_nodes]
    float64_t[::1] flow_pk,             # [F] bytes parked by each flow's source
    float64_t[::1] links,               # [3 * plane_links] zero on entry and on exit
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
    cdef intp_t n_hops = hops.shape[1]
    cdef intp_t n_planes = plane_ptr.shape[0] - 1
    cdef intp_t n_ep = ep_rank.shape[0]
    cdef intp_t n_links3 = 3 * plane_links
    cdef intp_t k, r, n, j, f, h, lo, lnk, i, q, r0, r1, lbase
    cdef const uint32_t* row
    cdef int64_t it
    cdef float64_t shift = -0.5 * sigma * sigma
    cdef float64_t a, e, m, amax, amin, asum, gate, hold, held, t0, pk
    cdef float64_t kmax_all, tinter, dmax, pen, kk, room, x, cap

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

        if mode == C_MODE_NONE:
            hold = 0.0
        elif mode == C_MODE_SPREAD or mode == C_MODE_BASELINE:
            hold = hold_max if state[1] else 0.0
        else:
            hold = holds[k]

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
        if hold > 0.0:
            held = gate - amin
            if hold < held:
                held = hold
            t0 = -INFINITY
            for n in range(n_nodes):
                e = node_ent[n] + hold
                if gate < e:
                    e = gate
                node_ent[n] = e
                if e > t0:
                    t0 = e
        if record:
            for r in range(p):
                a = rec_arr[k, r]
                e = a
                if hold > 0.0:
                    e = a + hold
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
        for q in range(n_planes):
            r0 = plane_ptr[q]
            r1 = plane_ptr[q + 1]
            lbase = q * plane_links
            for i in range(r0, r1):
                j = plane_rails[i]
                row = &picks[k, j, 0] if n_flows > 0 else NULL
                _load_rail(links, hops, j * hop_stride, path_links, identity, flow_pk, row)
            if r1 - r0 == 1:
                # a plane of its own: one sequential pass over its links reads contention
                # and incast and re-zeroes them (about F links: no cheaper to track the
                # touched ones)
                kk = 1.0
                pen = 0.0
                for lnk in range(0, n_links3, 3):
                    if links[lnk] == 0.0:
                        continue
                    if links[lnk] > kk:
                        kk = links[lnk]
                    if links[lnk] > 1.0:
                        room = buffer if busy[k, link_domain[lbase + lnk // 3]] else buffer_idle
                        e = incast_penalty(links[lnk + 1] - links[lnk + 2], room, window, rto, nic_bw)
                        if e > pen:
                            pen = e
                    links[lnk] = 0.0
                    links[lnk + 1] = 0.0
                    links[lnk + 2] = 0.0
                j = plane_rails[r0]
                _close_rail(kk, pen, rail_a[j], rail_bw[j], rail_floor[j], &kmax_all, &tinter, &dmax)
                continue
            # a plane shared by several rails: each link's penalty once (in its bytes
            # slot), then every rail takes its maxima over the links its flows crossed
            for lnk in range(0, n_links3, 3):
                if links[lnk] > 1.0:
                    room = buffer if busy[k, link_domain[lbase + lnk // 3]] else buffer_idle
                    links[lnk + 1] = incast_penalty(links[lnk + 1] - links[lnk + 2], room, window, rto, nic_bw)
                else:
                    links[lnk + 1] = 0.0
            for i in range(r0, r1):
                j = plane_rails[i]
                kk = 1.0
                pen = 0.0
                if n_flows > 0:
                    row = &picks[k, j, 0]
                    for f in range(n_flows):
                        for h in range(n_hops):
                            lnk = _hop_link(&hops[j * hop_stride + f, 0], path_links, identity, h, row[f])
                            if lnk >= 0:
                                if links[3 * lnk] > kk:
                                    kk = links[3 * lnk]
                                if links[3 * lnk + 1] > pen:
                                    pen = links[3 * lnk + 1]
                _close_rail(kk, pen, rail_a[j], rail_bw[j], rail_floor[j], &kmax_all, &tinter, &dmax)
            for lnk in range(n_links3):
                links[lnk] = 0.0

        out_time[k] = t0 + t_intra + tinter
        out_amax[k] = amax
        out_spread[k] = (amax - amin) / (asum / p)
        out_hold[k] = hold
        out_held[k] = held
        out_incast[k] = dmax
        out_k[k] = kmax_all
        out_paced[k] = hold > 0.0

        if mode == C_MODE_SPREAD:
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
        elif mode == C_MODE_BASELINE:
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


def _check_options(g, mode, patience, hold_max, max_patience, nic_bw):
    # options before any O(n) check: a bad mode fails at once whatever the arrays
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES} (MODE_NONE, MODE_SPREAD, MODE_HOLDS, "
                         f"MODE_BASELINE), got {mode}")
    if g < 1:
        raise ValueError(f"g must be >= 1, got {g}")
    if patience < 1:
        raise ValueError(f"patience must be >= 1, got {patience}")
    if mode == MODE_BASELINE and max_patience < patience:
        raise ValueError(f"max_patience must be >= patience in MODE_BASELINE, got {max_patience} < {patience}")
    if not (isfinite(hold_max) and hold_max >= 0.0):
        raise ValueError(f"hold_max must be finite and >= 0, got {hold_max}")
    if not nic_bw > 0.0:
        raise ValueError(f"nic_bw must be > 0, got {nic_bw}")


def _check_inputs(base, g, z, picks, busy, LinkTable links, rail_a, rail_bw, rail_floor, ep_rank,
                  ep_start, ep_end, ep_factor, mode, holds, ep_until, ep_fac, eff, active, state, bstate):
    # every index the nogil loop dereferences, checked once, vectorised
    p = base.shape[0]
    if p == 0 or p % g:
        raise ValueError(f"len(base) must be a positive multiple of g={g}, got {p}")
    if links.n_rails != g or links.n_nodes != p // g:
        raise ValueError(f"links was built for {links.n_nodes} nodes x {links.n_rails} rails, "
                         f"the call has {p // g} x {g}")
    c = z.shape[0]
    if z.shape[1] != p:
        raise ValueError(f"z must have shape (c, {p}), got {tuple(z.shape)[:2]}")
    n_flows = links.n_flows
    if tuple(picks.shape)[:3] != (c, g, n_flows):
        raise ValueError(f"picks must have shape ({c}, {g}, {n_flows}), got {tuple(picks.shape)[:3]}")
    if tuple(busy.shape)[:2] != (c, links.n_domains):
        raise ValueError(f"busy must have shape ({c}, {links.n_domains}), got {tuple(busy.shape)[:2]}")
    pk = np.asarray(picks)
    if pk.size and pk.max() >= links.n_paths:
        raise ValueError(f"picks must lie in [0, {links.n_paths}), got range [{pk.min()}, {pk.max()}]")
    er = np.asarray(ep_rank)
    if er.shape[0] != ep_start.shape[0]:
        raise ValueError(f"ep_rank has length {er.shape[0]}, inconsistent with the other arrays")
    if er.size and (er.min() < 0 or er.max() >= p):
        raise ValueError(f"ep_rank must lie in [0, {p}), got range [{er.min()}, {er.max()}]")
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
    if bstate.shape[0] != 3:
        raise ValueError(f"bstate must have length 3, got {bstate.shape[0]}")
    if mode == MODE_HOLDS and holds.shape[0] < c:
        raise ValueError(f"MODE_HOLDS needs one hold per iteration ({c}), got {holds.shape[0]}")


def simulate_chunk(
    const float64_t[::1] base, intp_t g, float64_t sigma,
    const float[:, ::1] z, const uint32_t[:, :, ::1] picks, const uint8_t[:, ::1] busy,
    LinkTable links not None,
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

    Private: ``spare_core.pacing`` validates the model and draws the noise; this wrapper
    checks the options first (``mode`` one of ``MODES``, ``patience >= 1``, a finite
    ``hold_max >= 0``), then every shape and index (``picks < links.n_paths``, ``busy``
    one column per buffer domain, ``g`` dividing ``p``, episode ranks, the IN-OUT state)
    before the loop. ``ep_until``, ``ep_fac``, ``eff``, ``active``, ``state`` and
    ``bstate`` are updated in place (IN-OUT) so that consecutive chunks continue one
    simulation; start a simulation with ``ep_until = 0``, ``ep_fac = 1``, ``eff = base``,
    ``state = 0`` (``state[1] = 1`` starts a hysteresis mode switched on), ``bstate =
    (nan, patience, -1)``. ``MODE_HOLDS`` reads ``holds[k]``; ``MODE_BASELINE`` also reads
    ``smoothing`` and ``max_patience``.
    """
    _check_options(g, mode, patience, hold_max, max_patience, nic_bw)
    cdef intp_t c = z.shape[0]
    cdef intp_t p = base.shape[0]
    _check_inputs(base, g, z, picks, busy, links, rail_a, rail_bw, rail_floor, ep_rank, ep_start,
                  ep_end, ep_factor, mode, holds, ep_until, ep_fac, eff, active, state, bstate)
    cdef intp_t n_nodes = p // g
    cdef intp_t n_flows = links.n_flows
    node_ent = np.empty(n_nodes, dtype=np.float64)
    parked = np.empty(n_nodes, dtype=np.float64)
    flow_pk = np.empty(n_flows, dtype=np.float64)
    link_scratch = np.zeros(3 * links.plane_links, dtype=np.float64)
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
    cdef float64_t[::1] v_fpk = flow_pk, v_links = link_scratch
    cdef float64_t[::1] o_t = out["time"], o_a = out["arrival_max"], o_s = out["spread"]
    cdef float64_t[::1] o_h = out["hold"], o_held = out["held"], o_i = out["incast"]
    cdef float64_t[::1] o_k = out["contention"]
    cdef int8_t[::1] o_p = paced
    cdef float64_t[:, ::1] v_ra = rec_arr, v_re = rec_ent
    with nogil:
        _run(base, g, sigma, z, picks, busy,
             links._flow_src, links._hops, links._hop_stride, links._path_links, links.identity,
             links._link_domain,
             links._plane_ptr, links._plane_rails, links.plane_links,
             rail_a, rail_bw, rail_floor, t_intra, nic_bw, window,
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
