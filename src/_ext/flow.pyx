# cython: language_level=3
"""Min-cost flow kernels: successive shortest paths with node potentials (primal-dual).

Only typed memoryviews and scalars arrive here; ``spare_core.flow`` validates every
argument first (index ranges, capacities >= 0, supplies balanced, int64 overflow bounds),
so the kernels hold no policy and trust their inputs.

Algorithm (Ahuja, Magnanti & Orlin 1993, "Network Flows", ch. 9.7 and 9.8)
--------------------------------------------------------------------------
* Negative-cost arcs are saturated up front (flow = capacity); their imbalance is added
  to the nodes' excesses and the residual graph then has only non-negative costs, so the
  zero potential is dual feasible. Capacities are finite, so no cycle is unbounded: a
  negative cycle ends up saturated unless un-saturating one of its arcs is cheaper.
* Self-loops never enter the residual graph: flow = capacity if cost < 0 else 0, which
  satisfies complementary slackness for any potential.
* Each phase runs one Dijkstra search on reduced costs ``c + pi[u] - pi[v] >= 0`` from all
  nodes with positive excess and stops at the first node with a deficit (distance D).
  Settled nodes get ``pi[v] += dist[v] - D``, which keeps every reduced cost >= 0 and makes
  the found path tight. The phase then augments along that path and along every further
  path of zero reduced cost it can find by a depth-first search with current-arc
  pointers (the admissible subgraph), which is what makes the greedy cheapest-slot
  placement of an assignment-like network one phase instead of one search per unit.
* Maximum flow (for ``max_flow_min_cost`` with negative arcs, where the flow value must
  be fixed before the costs are optimised): Dinic's blocking flows.

Buffers: O(n) node scratch (``Work``) and 2 slots per non-loop arc (``Graph``), allocated
once per call; the whole search runs without the GIL.
"""
from libc.stdlib cimport calloc, free
from _types cimport intp_t, int32_t, int64_t
from flow cimport Graph, Work, FLOW_OK, FLOW_STUCK

import numpy as np

cdef int64_t INF64 = 0x3FFFFFFFFFFFFFFF


# ---------------------------------------------------------------------------- heap
cdef inline void heap_up(int32_t* heap, intp_t* hpos, const int64_t* key, intp_t i) noexcept nogil:
    cdef int32_t v = heap[i]
    cdef int64_t k = key[v]
    cdef intp_t parent
    while i > 0:
        parent = (i - 1) >> 1
        if key[heap[parent]] <= k:
            break
        heap[i] = heap[parent]
        hpos[heap[i]] = i
        i = parent
    heap[i] = v
    hpos[v] = i


cdef inline int32_t heap_pop(int32_t* heap, intp_t* hpos, const int64_t* key, intp_t* size) noexcept nogil:
    cdef int32_t top = heap[0]
    cdef int32_t v
    cdef int64_t k
    cdef intp_t i = 0, c, n
    size[0] -= 1
    n = size[0]
    if n == 0:
        return top
    v = heap[n]
    k = key[v]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and key[heap[c + 1]] < key[heap[c]]:
            c += 1
        if key[heap[c]] >= k:
            break
        heap[i] = heap[c]
        hpos[heap[i]] = i
        i = c
    heap[i] = v
    hpos[v] = i
    return top


# ---------------------------------------------------------------------------- graph
cdef intp_t build_graph(intp_t n, intp_t m, const int64_t* tail, const int64_t* head,
                        const int64_t* cap, const int64_t* cost, bint saturate_negative,
                        Graph* g, intp_t* fpos, intp_t* fill, int64_t* excess,
                        int64_t* flow) noexcept nogil:
    """Fill the CSR residual graph (g's arrays sized by the caller: first n+1, slots 2m).

    IN tail/head/cap/cost [m]; OUT fpos [m] (forward slot of each arc, -1 for loops),
    flow [m] (set for self-loops only); IN-OUT excess [n] (negative arcs saturated when
    ``saturate_negative``). Returns the number of slots used.
    """
    cdef intp_t i, v, p, q
    cdef int64_t u, h, c
    for v in range(n + 1):
        g.first[v] = 0
    for i in range(m):
        u = tail[i]
        h = head[i]
        if u != h:
            g.first[u + 1] += 1
            g.first[h + 1] += 1
    for v in range(n):
        g.first[v + 1] += g.first[v]
        fill[v] = g.first[v]
    for i in range(m):
        u = tail[i]
        h = head[i]
        c = cost[i]
        if u == h:
            fpos[i] = -1
            flow[i] = cap[i] if (c < 0 and saturate_negative) else 0
            continue
        p = fill[u]
        fill[u] += 1
        q = fill[h]
        fill[h] += 1
        g.to[p] = <int32_t>h
        g.to[q] = <int32_t>u
        g.rev[p] = <int32_t>q
        g.rev[q] = <int32_t>p
        g.cst[p] = c
        g.cst[q] = -c
        if c < 0 and saturate_negative:
            g.rc[p] = 0
            g.rc[q] = cap[i]
            excess[u] -= cap[i]
            excess[h] += cap[i]
        else:
            g.rc[p] = cap[i]
            g.rc[q] = 0
        fpos[i] = p
    g.n = n
    g.slots = g.first[n]
    return g.slots


# ---------------------------------------------------------------------------- SSP
cdef void admissible_augment(Graph* g, int64_t* excess, const int64_t* pi, Work* w,
                             intp_t stamp, intp_t nsrc) noexcept nogil:
    """Push flow from every excess node along residual paths of zero reduced cost.

    Depth-first with current-slot pointers and dead-node marks valid for this phase;
    slots skipped because their head was on the path are only an efficiency loss (the
    next Dijkstra phase finds what was missed). Reduced costs stay >= 0 throughout.
    """
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int32_t* rev = g.rev
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef intp_t i, k, top, cut, p, end
    cdef int32_t s, u, v
    cdef int64_t delta, pu
    cdef bint found
    for i in range(nsrc):
        s = w.srcs[i]
        if excess[s] <= 0 or w.dead[s] == stamp:
            continue
        top = 0
        w.path[0] = s
        w.onpath[s] = 1
        while top >= 0 and excess[s] > 0:
            u = w.path[top]
            if top > 0 and excess[u] < 0:
                delta = excess[s]
                if -excess[u] < delta:
                    delta = -excess[u]
                for k in range(top):
                    if rc[w.parc[k]] < delta:
                        delta = rc[w.parc[k]]
                cut = top
                for k in range(top):
                    p = w.parc[k]
                    rc[p] -= delta
                    rc[rev[p]] += delta
                    if rc[p] == 0 and cut == top:
                        cut = k
                excess[s] -= delta
                excess[u] += delta
                while top > cut:
                    w.onpath[w.path[top]] = 0
                    top -= 1
                continue
            if w.curst[u] != stamp:
                w.curst[u] = stamp
                w.cur[u] = first[u]
            p = w.cur[u]
            end = first[u + 1]
            pu = pi[u]
            found = False
            while p < end:
                if rc[p] > 0:
                    v = to[p]
                    if w.dead[v] != stamp and not w.onpath[v] and cst[p] + pu - pi[v] == 0:
                        found = True
                        break
                p += 1
            w.cur[u] = p
            if found:
                w.parc[top] = <int32_t>p
                top += 1
                w.path[top] = v
                w.onpath[v] = 1
            else:
                w.dead[u] = stamp
                w.onpath[u] = 0
                top -= 1
                if top >= 0:
                    w.cur[w.path[top]] += 1
        while top >= 0:
            w.onpath[w.path[top]] = 0
            top -= 1


cdef int ssp_run(Graph* g, int64_t* excess, int64_t* pi, Work* w) noexcept nogil:
    """Route every positive excess to the deficits at least cost (primal-dual SSP).

    IN-OUT excess [n] (0 everywhere on FLOW_OK), pi [n] (dual feasible on entry: every
    residual slot has c + pi[u] - pi[v] >= 0; still so on exit), g.rc.
    Returns FLOW_OK, or FLOW_STUCK when the remaining excess reaches no deficit.
    """
    cdef intp_t n = g.n
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int32_t* rev = g.rev
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef int64_t* dist = w.dist
    cdef intp_t i, k, nsrc = 0, hsize, ns, p, end, stamp = 0
    cdef int32_t u, v, t, s
    cdef int64_t du, pu, nd, big_d, delta
    for i in range(n):
        if excess[i] > 0:
            w.srcs[nsrc] = <int32_t>i
            nsrc += 1
    while True:
        k = 0
        for i in range(nsrc):
            if excess[w.srcs[i]] > 0:
                w.srcs[k] = w.srcs[i]
                k += 1
        nsrc = k
        if nsrc == 0:
            return FLOW_OK
        stamp += 1
        # Every source starts at distance 0, so the array is already a valid heap.
        hsize = 0
        for i in range(nsrc):
            v = w.srcs[i]
            dist[v] = 0
            w.pred[v] = -1
            w.seen[v] = stamp
            w.heap[hsize] = v
            w.hpos[v] = hsize
            hsize += 1
        t = -1
        ns = 0
        while hsize > 0:
            u = heap_pop(w.heap, w.hpos, dist, &hsize)
            w.done[u] = stamp
            w.settled[ns] = u
            ns += 1
            if excess[u] < 0:
                t = u
                break
            du = dist[u]
            pu = pi[u]
            end = first[u + 1]
            for p in range(first[u], end):
                if rc[p] <= 0:
                    continue
                v = to[p]
                if w.done[v] == stamp:
                    continue
                nd = du + cst[p] + pu - pi[v]
                if w.seen[v] != stamp:
                    w.seen[v] = stamp
                    dist[v] = nd
                    w.pred[v] = <int32_t>p
                    w.heap[hsize] = v
                    hsize += 1
                    heap_up(w.heap, w.hpos, dist, hsize - 1)
                elif nd < dist[v]:
                    dist[v] = nd
                    w.pred[v] = <int32_t>p
                    heap_up(w.heap, w.hpos, dist, w.hpos[v])
                else:
                    continue
                # Reduced costs are >= 0, so a deficit reached by a tight slot already
                # has the least key left in the heap: stop without popping the rest.
                if excess[v] < 0 and nd == du:
                    t = v
                    break
            if t >= 0:
                break
        if t < 0:
            return FLOW_STUCK
        big_d = dist[t]
        for i in range(ns):
            v = w.settled[i]
            pi[v] += dist[v] - big_d
        delta = -excess[t]
        v = t
        while w.pred[v] >= 0:
            p = w.pred[v]
            if rc[p] < delta:
                delta = rc[p]
            v = to[rev[p]]
        s = v
        if excess[s] < delta:
            delta = excess[s]
        v = t
        while w.pred[v] >= 0:
            p = w.pred[v]
            rc[p] -= delta
            rc[rev[p]] += delta
            v = to[rev[p]]
        excess[s] -= delta
        excess[t] += delta
        admissible_augment(g, excess, pi, w, stamp, nsrc)


# ---------------------------------------------------------------------------- Dinic
cdef int64_t dinic_run(Graph* g, int64_t* rcap, intp_t s, intp_t t, Work* w) noexcept nogil:
    """Maximum s-t flow value on residual capacities ``rcap`` (IN-OUT, [slots]).

    Dinic's algorithm: BFS levels, then blocking flow by depth-first search with
    current-slot pointers; a dead node gets level -1. The caller guarantees the total
    capacity out of s fits in int64.
    """
    cdef intp_t n = g.n
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int32_t* rev = g.rev
    cdef int32_t* level = w.level
    cdef intp_t i, k, qh, qt, top, cut, p, end
    cdef int32_t u, v
    cdef int64_t total = 0, delta
    cdef bint found
    while True:
        for i in range(n):
            level[i] = -1
        level[s] = 0
        w.queue[0] = <int32_t>s
        qh = 0
        qt = 1
        while qh < qt:
            u = w.queue[qh]
            qh += 1
            for p in range(first[u], first[u + 1]):
                if rcap[p] > 0 and level[to[p]] < 0:
                    level[to[p]] = level[u] + 1
                    w.queue[qt] = to[p]
                    qt += 1
        if level[t] < 0:
            return total
        for i in range(n):
            w.cur[i] = first[i]
        top = 0
        w.path[0] = <int32_t>s
        while top >= 0:
            u = w.path[top]
            if u == t:
                delta = INF64
                for k in range(top):
                    if rcap[w.parc[k]] < delta:
                        delta = rcap[w.parc[k]]
                cut = top
                for k in range(top):
                    p = w.parc[k]
                    rcap[p] -= delta
                    rcap[rev[p]] += delta
                    if rcap[p] == 0 and cut == top:
                        cut = k
                total += delta
                top = cut
                continue
            p = w.cur[u]
            end = first[u + 1]
            found = False
            while p < end:
                if rcap[p] > 0 and level[to[p]] == level[u] + 1:
                    found = True
                    break
                p += 1
            w.cur[u] = p
            if found:
                w.parc[top] = <int32_t>p
                top += 1
                w.path[top] = to[p]
            else:
                level[u] = -1
                top -= 1
                if top >= 0:
                    w.cur[w.path[top]] += 1


# ---------------------------------------------------------------------------- wrappers
cdef int work_alloc(Work* w, intp_t n) noexcept nogil:
    cdef intp_t m = n + 1
    w.dist = <int64_t*>calloc(m, sizeof(int64_t))
    w.pred = <int32_t*>calloc(m, sizeof(int32_t))
    w.seen = <intp_t*>calloc(m, sizeof(intp_t))
    w.done = <intp_t*>calloc(m, sizeof(intp_t))
    w.heap = <int32_t*>calloc(m, sizeof(int32_t))
    w.hpos = <intp_t*>calloc(m, sizeof(intp_t))
    w.settled = <int32_t*>calloc(m, sizeof(int32_t))
    w.cur = <intp_t*>calloc(m, sizeof(intp_t))
    w.curst = <intp_t*>calloc(m, sizeof(intp_t))
    w.dead = <intp_t*>calloc(m, sizeof(intp_t))
    w.onpath = <char*>calloc(m, sizeof(char))
    w.path = <int32_t*>calloc(m + 1, sizeof(int32_t))
    w.parc = <int32_t*>calloc(m, sizeof(int32_t))
    w.srcs = <int32_t*>calloc(m, sizeof(int32_t))
    w.level = <int32_t*>calloc(m, sizeof(int32_t))
    w.queue = <int32_t*>calloc(m, sizeof(int32_t))
    if (w.dist == NULL or w.pred == NULL or w.seen == NULL or w.done == NULL
            or w.heap == NULL or w.hpos == NULL or w.settled == NULL or w.cur == NULL
            or w.curst == NULL or w.dead == NULL or w.onpath == NULL or w.path == NULL
            or w.parc == NULL or w.srcs == NULL or w.level == NULL or w.queue == NULL):
        return -1
    return 0


cdef void work_free(Work* w) noexcept nogil:
    free(w.dist); free(w.pred); free(w.seen); free(w.done); free(w.heap); free(w.hpos)
    free(w.settled); free(w.cur); free(w.curst); free(w.dead); free(w.onpath)
    free(w.path); free(w.parc); free(w.srcs); free(w.level); free(w.queue)


def solve(intp_t n, const int64_t[::1] tail, const int64_t[::1] head,
          const int64_t[::1] cap, const int64_t[::1] cost, const int64_t[::1] supply,
          intp_t source=-1, intp_t sink=-1, int64_t open_bound=0):
    """Min-cost flow on validated arrays (see ``spare_core.flow`` for the public API).

    Modes
    -----
    ``source < 0``: route ``supply`` (sums to zero). Returns ``(flow, potential,
    leftover)``, leftover the positive excess that reached no deficit (0 if feasible).
    ``source >= 0``: maximum ``source``-``sink`` flow of least cost; ``supply`` ignored.
    With negative-cost arcs the value is fixed first by Dinic; otherwise ``source``
    starts with ``open_bound`` excess (>= the max-flow value) and the search stops when
    no augmenting path is left. Returns ``(flow, potential, value)``.

    Potentials satisfy ``cost[a] + potential[tail[a]] - potential[head[a]] >= 0`` on
    every arc with flow < capacity and ``<= 0`` on every arc with flow > 0.
    """
    cdef intp_t m = tail.shape[0]
    cdef intp_t i
    cdef bint max_mode = source >= 0
    cdef bint has_negative = False
    cdef int status = FLOW_OK
    cdef int64_t value = 0, leftover = 0
    cdef Graph g
    cdef Work w
    cdef int wrc = 0

    first = np.zeros(n + 1, dtype=np.intp)
    to = np.empty(max(2 * m, 1), dtype=np.int32)
    rev = np.empty(max(2 * m, 1), dtype=np.int32)
    rc = np.empty(max(2 * m, 1), dtype=np.int64)
    cst = np.empty(max(2 * m, 1), dtype=np.int64)
    fpos = np.empty(max(m, 1), dtype=np.intp)
    fill = np.empty(max(n, 1), dtype=np.intp)
    flow = np.zeros(m, dtype=np.int64)
    excess = np.zeros(max(n, 1), dtype=np.int64)
    pi = np.zeros(max(n, 1), dtype=np.int64)
    rcap = None
    cdef intp_t[::1] first_v = first
    cdef int32_t[::1] to_v = to
    cdef int32_t[::1] rev_v = rev
    cdef int64_t[::1] rc_v = rc
    cdef int64_t[::1] cst_v = cst
    cdef intp_t[::1] fpos_v = fpos
    cdef intp_t[::1] fill_v = fill
    cdef int64_t[::1] flow_v = flow
    cdef int64_t[::1] excess_v = excess
    cdef int64_t[::1] pi_v = pi
    cdef int64_t[::1] rcap_v

    if not max_mode:
        for i in range(n):
            excess_v[i] = supply[i]
    g.first = &first_v[0]
    g.to = &to_v[0]
    g.rev = &rev_v[0]
    g.rc = &rc_v[0]
    g.cst = &cst_v[0]
    if m > 0:
        for i in range(m):
            if cost[i] < 0 and tail[i] != head[i]:
                has_negative = True
                break
    if max_mode and has_negative:
        rcap = np.empty(max(2 * m, 1), dtype=np.int64)
        rcap_v = rcap

    if work_alloc(&w, n) != 0:
        work_free(&w)
        raise MemoryError("min-cost flow scratch for %d nodes could not be allocated" % n)
    try:
        with nogil:
            build_graph(n, m, &tail[0] if m else NULL, &head[0] if m else NULL,
                        &cap[0] if m else NULL, &cost[0] if m else NULL, True,
                        &g, &fpos_v[0], &fill_v[0], &excess_v[0], &flow_v[0] if m else NULL)
            if max_mode:
                if has_negative:
                    # Capacity on the original arcs: forward slot = cap, backward = 0.
                    for i in range(m):
                        if fpos_v[i] >= 0:
                            rcap_v[fpos_v[i]] = cap[i]
                            rcap_v[rev_v[fpos_v[i]]] = 0
                    value = dinic_run(&g, &rcap_v[0], source, sink, &w)
                    excess_v[source] += value
                    excess_v[sink] -= value
                    status = ssp_run(&g, &excess_v[0], &pi_v[0], &w)
                else:
                    excess_v[source] += open_bound
                    excess_v[sink] -= open_bound
                    status = ssp_run(&g, &excess_v[0], &pi_v[0], &w)
                    value = open_bound - excess_v[source]
                    status = FLOW_OK
            else:
                status = ssp_run(&g, &excess_v[0], &pi_v[0], &w)
                for i in range(n):
                    if excess_v[i] > 0:
                        leftover += excess_v[i]
            for i in range(m):
                if fpos_v[i] >= 0:
                    flow_v[i] = rc_v[rev_v[fpos_v[i]]]
    finally:
        work_free(&w)
    if max_mode and status != FLOW_OK:
        raise RuntimeError("internal error: the maximum flow found by Dinic could not be routed")
    return flow, pi[:n].copy(), (value if max_mode else leftover)
