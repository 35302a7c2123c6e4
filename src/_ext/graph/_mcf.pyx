# cython: language_level=3
"""Min-cost flow kernels: successive shortest paths with node potentials (primal-dual).

Only typed memoryviews and scalars arrive here; ``spare_core.graph.flow`` validates every
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
* Unit paths (maximum flow whose source slots carry one unit each, as RECTLR's shard
  types; Jonker & Volgenant 1987): after the greedy start the source's excess moves to
  the heads of its tight slots and each waiting unit gets its own Dijkstra, stopped at
  the first deficit, so a search scans the unit's neighbourhood only instead of the
  ball around every pending unit (docs/flow.md has the measured effect).
* Cost scaling (Goldberg & Tarjan 1990; Goldberg 1997): costs times n + 1, eps divided
  by alpha per refine; each refine saturates the slots of negative reduced cost and
  moves the excess by partial augment-relabel (an admissible path of up to ``max_path``
  slots grown from an active node, then pushed at once; LEMON's default, Kovacs 2015),
  with global price updates (a Dijkstra on eps-rounded reduced costs backwards from the
  deficits at each refine and every 4n relabels); exact integer potentials are then
  recovered by label correcting.
* Maximum flow (for ``max_flow_min_cost`` with negative arcs or cost scaling, where the
  flow value must be fixed before the costs are optimised, and for feasibility
  checks): Dinic's blocking flows.

Buffers: O(n) node scratch (``Work``) and 2 slots per non-loop arc (``Graph``), allocated
once per call; the whole search runs without the GIL.
"""
from libc.stdlib cimport calloc, free
from libc.stdint cimport uint64_t
from _types cimport intp_t, int32_t, int64_t
from _mcf cimport Graph, Work, NodeState, FLOW_OK, FLOW_STUCK, M_SSP, M_COST_SCALING, M_MAX_FLOW
from _heap cimport heap_sift_up, heap_push, heap_pop

import numpy as np

cdef int64_t INF64 = 0x3FFFFFFFFFFFFFFF

# The enums of _mcf.pxd for Python callers (spare_core.graph.flow reads them from here).
CONSTANTS = {
    "FLOW_OK": FLOW_OK, "FLOW_STUCK": FLOW_STUCK,
    "M_SSP": M_SSP, "M_COST_SCALING": M_COST_SCALING, "M_MAX_FLOW": M_MAX_FLOW,
}


# ---------------------------------------------------------------------------- graph
cdef intp_t build_graph(intp_t n, intp_t m, const int64_t* tail, const int64_t* head,
                        const int64_t* cap, const int64_t* cost, bint saturate_negative,
                        Graph* g, int32_t* fpos, int32_t* fill, int64_t* excess,
                        int64_t* flow) noexcept nogil:
    """Fill the CSR residual graph (g's arrays sized by the caller: first n+1, slots 2m).

    IN tail/head/cap/cost [m]; OUT fpos [m] (forward slot of each arc, -1 for loops),
    flow [m] (set for self-loops only); IN-OUT excess [n] (negative arcs saturated when
    ``saturate_negative``). Returns the number of slots used, or ``-1 - i`` if arc ``i`` has
    a node id outside ``[0, n)`` (then nothing but ``g.first`` was written).
    """
    cdef intp_t i, v, p, q
    cdef int64_t u, h, c
    for v in range(n + 1):
        g.first[v] = 0
    for i in range(m):
        u = tail[i]
        h = head[i]
        # the wrapper checked the ids, but never trust them here: one unsigned compare each
        # (a negative id is a huge unsigned one) before anything is written through them
        if <uint64_t>u >= <uint64_t>n or <uint64_t>h >= <uint64_t>n:
            return -1 - i
        if u != h:
            g.first[u + 1] += 1
            g.first[h + 1] += 1
    for v in range(n):
        g.first[v + 1] += g.first[v]
        fill[v] = <int32_t>g.first[v]
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
        fpos[i] = <int32_t>p
    g.n = n
    g.slots = g.first[n]
    return g.slots


# ---------------------------------------------------------------------------- SSP
# Everything the search reads about a neighbour sits in one 48-byte record, so relaxing a
# slot costs one cache miss instead of one per array (measured: the reassign family at
# 1e6 arcs is memory-latency bound).
# Stamps are int32 and marks hold 2 * stamp + 1; renumber before that could overflow.
cdef int32_t STAMP_LIMIT = 1 << 29


# The heap of a search is the shared indexed heap (_heap.pxd) keyed by NodeState.dist,
# with the positions in NodeState.hpos: key and position of a node share its record.
cdef inline void ns_up(int32_t* heap, NodeState* ns, intp_t i) noexcept nogil:
    heap_sift_up(heap, i, <const char*>&ns[0].dist, sizeof(NodeState), <char*>&ns[0].hpos,
                 sizeof(NodeState))


cdef inline int32_t ns_pop(int32_t* heap, NodeState* ns, intp_t* size) noexcept nogil:
    # hpos of a popped node is never read (ns.mark tells whether a node is in the heap)
    return heap_pop(heap, size, <const char*>&ns[0].dist, sizeof(NodeState), <char*>&ns[0].hpos,
                    sizeof(NodeState), -1)


cdef inline void ns_relax(int32_t* heap, NodeState* ns, intp_t* hsize, int32_t v,
                          int64_t nd, int32_t via, int32_t seen) noexcept nogil:
    """Dijkstra relaxation: label v with key nd (reached by slot via) if that improves it."""
    if ns[v].mark != seen:
        ns[v].mark = seen
        ns[v].dist = nd
        ns[v].pred = via
        heap_push(heap, hsize, v, <const char*>&ns[0].dist, sizeof(NodeState),
                  <char*>&ns[0].hpos, sizeof(NodeState))
    elif nd < ns[v].dist:
        ns[v].dist = nd
        ns[v].pred = via
        ns_up(heap, ns, ns[v].hpos)


cdef inline intp_t push_path(int64_t* rc, const int32_t* rev, const int32_t* parc,
                             intp_t top, int64_t* delta) noexcept nogil:
    """Push min(delta, bottleneck) along slots parc[0:top] (delta is IN-OUT); return the
    index of the first slot saturated, or top if none was."""
    cdef intp_t k, p, cut = top
    cdef int64_t d = delta[0]
    for k in range(top):
        if rc[parc[k]] < d:
            d = rc[parc[k]]
    for k in range(top):
        p = parc[k]
        rc[p] -= d
        rc[rev[p]] += d
        if rc[p] == 0 and cut == top:
            cut = k
    delta[0] = d
    return cut


cdef inline int32_t next_stamp(NodeState* ns, intp_t n, int32_t stamp) noexcept nogil:
    """The stamp of the next search; every record is renumbered first when the marks
    (2 * stamp + 1) could overflow int32."""
    cdef intp_t i
    if stamp >= STAMP_LIMIT:
        for i in range(n):
            ns[i].mark = 0
            ns[i].dead = 0
            ns[i].curst = 0
        stamp = 1
    return stamp + 1


cdef inline void scan_out(Graph* g, int32_t* heap, NodeState* ns, intp_t* hsize, int32_t u,
                          int32_t seen) noexcept nogil:
    """Relax every residual slot out of the just-settled node u (settled mark: seen + 1)."""
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef int32_t* to = g.to
    cdef int64_t du = ns[u].dist
    cdef int64_t pu = ns[u].pi
    cdef int32_t done = seen + 1
    cdef int32_t v
    cdef intp_t p
    for p in range(g.first[u], g.first[u + 1]):
        if rc[p] <= 0:
            continue
        v = to[p]
        if ns[v].mark == done:
            continue
        ns_relax(heap, ns, hsize, v, du + cst[p] + pu - ns[v].pi, <int32_t>p, seen)


cdef inline void lower_to_radius(NodeState* ns, const int32_t* settled, intp_t nset,
                                 int64_t big_d) noexcept nogil:
    """pi[v] += dist[v] - D for the settled nodes closer than D: reduced costs stay >= 0
    and every tree path to a node at distance D becomes tight (AMO 1993, lemma 9.11)."""
    cdef intp_t k
    cdef int32_t v
    for k in range(nset):
        v = settled[k]
        if ns[v].dist < big_d:
            ns[v].pi += ns[v].dist - big_d


cdef inline int32_t tree_path_start(Graph* g, NodeState* ns, int32_t t, int64_t* delta) noexcept nogil:
    """First node of the search-tree path ending at t; delta (IN-OUT) is lowered to the
    path's bottleneck."""
    cdef int32_t v = t
    cdef intp_t p
    while ns[v].pred >= 0:
        p = ns[v].pred
        if g.rc[p] < delta[0]:
            delta[0] = g.rc[p]
        v = g.to[g.rev[p]]
    return v


cdef inline void tree_path_push(Graph* g, NodeState* ns, int32_t t, int64_t delta) noexcept nogil:
    """Push delta units along the search-tree path ending at t."""
    cdef int32_t v = t
    cdef intp_t p
    while ns[v].pred >= 0:
        p = ns[v].pred
        g.rc[p] -= delta
        g.rc[g.rev[p]] += delta
        v = g.to[g.rev[p]]


cdef void admissible_augment(Graph* g, int64_t* excess, NodeState* ns, Work* w,
                             int32_t stamp, intp_t nsrc, bint local, bint flat) noexcept nogil:
    """Push flow from every excess node along residual paths of zero reduced cost.

    Depth-first with current-slot pointers and dead-node marks valid for this phase;
    slots skipped because their head was on the path are only an efficiency loss (the
    next Dijkstra phase finds what was missed). Reduced costs stay >= 0 throughout.
    ``flat``: every potential is 0 (the greedy start of a call). ``local``: enter only nodes the phase's Dijkstra settled (the ball holding every
    admissible path), so a phase costs what its search cost instead of re-walking the
    whole tight subgraph.
    """
    cdef int32_t* path_ = w.path
    cdef int32_t* parc_ = w.parc
    cdef int32_t* srcs_ = w.srcs
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int32_t* rev = g.rev
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef int32_t settled = 2 * stamp + 1
    cdef intp_t i, k, top, cut, p, end
    cdef int32_t s, u, v
    cdef int64_t delta, pu
    cdef bint found
    for i in range(nsrc):
        s = srcs_[i]
        if excess[s] <= 0 or ns[s].dead == stamp:
            continue
        top = 0
        path_[0] = s
        ns[s].onpath = 1
        while top >= 0 and excess[s] > 0:
            u = path_[top]
            if top > 0 and excess[u] < 0:
                delta = excess[s]
                if -excess[u] < delta:
                    delta = -excess[u]
                cut = push_path(rc, rev, parc_, top, &delta)
                excess[s] -= delta
                excess[u] += delta
                w.paths += 1
                while top > cut:
                    ns[path_[top]].onpath = 0
                    top -= 1
                continue
            if ns[u].curst != stamp:
                ns[u].curst = stamp
                ns[u].cur = <int32_t>first[u]
            p = ns[u].cur
            end = first[u + 1]
            pu = ns[u].pi
            found = False
            while p < end:
                # With all potentials zero (flat) a slot is tight iff its cost is 0,
                # which rejects costly slots without loading the head's record.
                if rc[p] > 0 and (not flat or cst[p] == 0):
                    v = to[p]
                    if (ns[v].dead != stamp and not ns[v].onpath and cst[p] + pu - ns[v].pi == 0
                            and (not local or ns[v].mark == settled)):
                        found = True
                        break
                p += 1
            ns[u].cur = <int32_t>p
            if found:
                parc_[top] = <int32_t>p
                top += 1
                path_[top] = v
                ns[v].onpath = 1
            else:
                ns[u].dead = stamp
                ns[u].onpath = 0
                top -= 1
                if top >= 0:
                    ns[path_[top]].cur += 1
        while top >= 0:
            ns[path_[top]].onpath = 0
            top -= 1


cdef int unit_path_run(Graph* g, int64_t* excess, Work* w, int32_t src,
                       int32_t* stamp_io) noexcept nogil:
    """Assignment-style shortest augmenting paths (Jonker & Volgenant 1987) for a
    maximum flow whose source arcs carry a few units each (RECTLR's shard types).

    The source's excess is first pushed along its tight residual slots, so each unit
    waits at its own head node (a shard type). Each unit then gets its own Dijkstra on
    reduced costs, stopped at the first deficit popped (distance D; for RECTLR: the
    cheapest free group slot), potentials of the scanned nodes with dist < D are raised
    by dist - D, and the unit moves along the tight path found. The search only touches
    the neighbourhood of that unit instead of the whole ball around all pending units.
    A unit that reaches no deficit can never reach one later (an augmenting path avoids
    its whole reachable set), so it is returned to ``src`` along a shortest path; the
    caller's primal-dual loop then routes whatever excess ``src`` still holds.
    Once the push has saturated every residual slot out of ``src`` (the usual case), a
    search that reaches ``src`` (back along a unit's source arc) settles it without
    scanning its slots, which would relax nothing: on a 1e6-arc network with 50k shard
    types and costs up to 1e4 that scan of 50k dead slots was most of the time (docs/flow.md).
    ``src_open`` counts the live slots and is recounted after every path that could
    have changed them (one ending at ``src``, or any path while ``src`` is open).
    IN-OUT excess [n], w.nodes[].pi (dual feasible on entry and exit), g.rc, stamp.
    Returns FLOW_OK, or FLOW_STUCK if a waiting unit cannot even return to ``src``
    (not possible when every unit came from it; a guard).
    """
    cdef NodeState* ns = w.nodes
    cdef int32_t* heap_ = w.heap
    cdef int32_t* settled_ = w.settled
    cdef int32_t* units = w.srcs
    cdef intp_t n = g.n
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int32_t* rev = g.rev
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef intp_t i, nq = 0, hsize, nset, p
    cdef int32_t u, v, t, target, stamp = stamp_io[0], seen, done
    cdef int64_t d, pu, delta
    cdef intp_t src_open = 0
    pu = ns[src].pi
    for p in range(first[src], first[src + 1]):
        if excess[src] <= 0:
            break
        if rc[p] > 0 and cst[p] + pu - ns[to[p]].pi == 0:
            v = to[p]
            d = rc[p] if rc[p] < excess[src] else excess[src]
            rc[p] -= d
            rc[rev[p]] += d
            excess[src] -= d
            excess[v] += d
            if excess[v] > 0 and excess[v] - d <= 0:
                units[nq] = v
                nq += 1
    for p in range(first[src], first[src + 1]):
        if rc[p] > 0:
            src_open += 1
    for i in range(nq):
        t = units[i]
        while excess[t] > 0:
            stamp = next_stamp(ns, n, stamp)
            seen = 2 * stamp
            done = seen + 1
            w.phases += 1
            ns[t].dist = 0
            ns[t].pred = -1
            ns[t].mark = seen
            heap_[0] = t
            ns[t].hpos = 0
            hsize = 1
            target = -1
            nset = 0
            while hsize > 0:
                u = ns_pop(heap_, ns, &hsize)
                ns[u].mark = done
                settled_[nset] = u
                nset += 1
                if excess[u] < 0:
                    target = u
                    break
                if u != src or src_open > 0:
                    scan_out(g, heap_, ns, &hsize, u, seen)
            if target < 0:
                # Every node reachable from t is settled; send the unit home.
                if ns[src].mark != done:
                    stamp_io[0] = stamp
                    return FLOW_STUCK
                target = src
            w.pops += nset
            # Settled nodes beyond D (only when the whole reachable set was scanned)
            # keep their potential, like the unscanned ones: all of them are >= D away.
            lower_to_radius(ns, settled_, nset, ns[target].dist)
            delta = excess[t]
            if excess[target] < 0 and -excess[target] < delta:
                delta = -excess[target]
            tree_path_start(g, ns, target, &delta)
            tree_path_push(g, ns, target, delta)
            excess[t] -= delta
            excess[target] += delta
            w.paths += 1
            if src_open > 0 or target == src:
                src_open = 0
                for p in range(first[src], first[src + 1]):
                    if rc[p] > 0:
                        src_open += 1
    stamp_io[0] = stamp
    return FLOW_OK


cdef int ssp_run(Graph* g, int64_t* excess, int64_t* pi, Work* w, intp_t unit_src) noexcept nogil:
    """Route every positive excess to the deficits at least cost (primal-dual SSP).

    IN-OUT excess [n] (0 everywhere on FLOW_OK), pi [n] (dual feasible on entry: every
    residual slot has c + pi[u] - pi[v] >= 0; still so on exit), g.rc.
    ``unit_src >= 0``: after the greedy start, route the units waiting at that node
    one shortest path at a time (:func:`unit_path_run`) before the primal-dual phases.
    Returns FLOW_OK, or FLOW_STUCK when the remaining excess reaches no deficit.
    """
    cdef NodeState* ns = w.nodes
    cdef int32_t* heap_ = w.heap
    cdef int32_t* settled_ = w.settled
    cdef int32_t* srcs_ = w.srcs
    cdef intp_t n = g.n
    cdef intp_t i, k, nsrc = 0, hsize, nset
    cdef int32_t u, v, t, s, stamp, seen, done
    cdef int64_t big_d, delta
    cdef int status = FLOW_OK
    cdef bint flat = True
    for i in range(n):
        ns[i].pi = pi[i]
        if pi[i] != 0:
            flat = False
        ns[i].mark = 0
        ns[i].dead = 0
        ns[i].onpath = 0
        ns[i].curst = 0
        if excess[i] > 0:
            srcs_[nsrc] = <int32_t>i
            nsrc += 1
    # Greedy start: route along paths of zero reduced cost anywhere in the graph (for an
    # assignment network: every unit to a cheapest free slot), before any search.
    stamp = 1
    admissible_augment(g, excess, ns, w, stamp, nsrc, False, flat)
    if unit_src >= 0:
        status = unit_path_run(g, excess, w, <int32_t>unit_src, &stamp)
        if status != FLOW_OK:
            for i in range(n):
                pi[i] = ns[i].pi
            return status
        nsrc = 0
        for i in range(n):
            if excess[i] > 0:
                srcs_[nsrc] = <int32_t>i
                nsrc += 1
    while True:
        k = 0
        for i in range(nsrc):
            if excess[srcs_[i]] > 0:
                srcs_[k] = srcs_[i]
                k += 1
        nsrc = k
        if nsrc == 0:
            break
        stamp = next_stamp(ns, n, stamp)
        seen = 2 * stamp
        done = seen + 1
        w.phases += 1
        # Every source starts at distance 0, so the array is already a valid heap.
        hsize = 0
        for i in range(nsrc):
            v = srcs_[i]
            ns[v].dist = 0
            ns[v].pred = -1
            ns[v].mark = seen
            heap_[hsize] = v
            ns[v].hpos = <int32_t>hsize
            hsize += 1
        # Settle the whole ball of radius D (the distance of the nearest deficit): every
        # path of zero reduced cost after the update below lies inside it, so the
        # admissible search may stay inside the settled nodes and loses nothing.
        t = -1
        nset = 0
        big_d = 0
        while hsize > 0:
            if t >= 0 and ns[heap_[0]].dist > big_d:
                break
            u = ns_pop(heap_, ns, &hsize)
            ns[u].mark = done
            settled_[nset] = u
            nset += 1
            if excess[u] < 0:
                if t < 0:
                    t = u
                    big_d = ns[u].dist
                continue
            scan_out(g, heap_, ns, &hsize, u, seen)
        if t < 0:
            status = FLOW_STUCK
            break
        w.pops += nset
        lower_to_radius(ns, settled_, nset, big_d)
        delta = -excess[t]
        s = tree_path_start(g, ns, t, &delta)
        if excess[s] < delta:
            delta = excess[s]
        tree_path_push(g, ns, t, delta)
        excess[s] -= delta
        excess[t] += delta
        w.paths += 1
        admissible_augment(g, excess, ns, w, stamp, nsrc, True, False)
    for i in range(n):
        pi[i] = ns[i].pi
    return status


# ---------------------------------------------------------------------------- Dinic
cdef int64_t dinic_run(Graph* g, int64_t* rcap, intp_t s, intp_t t, Work* w) noexcept nogil:
    """Maximum s-t flow value on residual capacities ``rcap`` (IN-OUT, [slots]).

    Dinic's algorithm: BFS levels, then blocking flow by depth-first search with
    current-slot pointers; a dead node gets level -1. The caller guarantees the total
    capacity out of s fits in int64.
    """
    cdef intp_t* cur_ = w.cur
    cdef int32_t* path_ = w.path
    cdef int32_t* parc_ = w.parc
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
            cur_[i] = first[i]
        top = 0
        path_[0] = <int32_t>s
        while top >= 0:
            u = path_[top]
            if u == t:
                delta = INF64
                cut = push_path(rcap, rev, parc_, top, &delta)
                total += delta
                top = cut
                continue
            p = cur_[u]
            end = first[u + 1]
            found = False
            while p < end:
                if rcap[p] > 0 and level[to[p]] == level[u] + 1:
                    found = True
                    break
                p += 1
            cur_[u] = p
            if found:
                parc_[top] = <int32_t>p
                top += 1
                path_[top] = to[p]
            else:
                level[u] = -1
                top -= 1
                if top >= 0:
                    cur_[path_[top]] += 1


# ---------------------------------------------------------------------------- cost scaling
cdef void global_update(Graph* g, const int64_t* excess, int64_t* price, int64_t scale,
                        int64_t eps, Work* w) noexcept nogil:
    """Goldberg's global price update: lower every price by eps times its rank.

    The rank of v is the least sum over a residual path from v to a deficit of
    floor((reduced cost + eps) / eps) >= 0 (Dijkstra backwards from the deficits, stopped
    once every active node is ranked; the rest get the last rank popped). Lowering
    price[v] by eps * rank keeps the pseudoflow eps-optimal and gives every ranked node
    an admissible path to a deficit, which saves most single-node relabels.
    """
    cdef intp_t n = g.n
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int32_t* rev = g.rev
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef NodeState* ns = w.nodes
    cdef int32_t* heap_ = w.heap
    cdef intp_t i, q, p, hsize = 0, active = 0
    cdef int32_t x, y, seen, done
    cdef int64_t ry, last = 0, py
    if w.phases >= STAMP_LIMIT:
        for i in range(n):
            ns[i].mark = 0
        w.phases = 0
    w.phases += 1
    seen = <int32_t>(2 * w.phases)
    done = seen + 1
    for i in range(n):
        if excess[i] > 0:
            active += 1
        elif excess[i] < 0:
            ns[i].dist = 0
            ns[i].mark = seen
            heap_[hsize] = <int32_t>i
            ns[i].hpos = <int32_t>hsize
            hsize += 1
    while hsize > 0 and active > 0:
        y = ns_pop(heap_, ns, &hsize)
        ns[y].mark = done
        ry = ns[y].dist
        last = ry
        if excess[y] > 0:
            active -= 1
        py = price[y]
        for q in range(first[y], first[y + 1]):
            p = rev[q]
            if rc[p] <= 0:
                continue
            x = to[q]
            if ns[x].mark == done:
                continue
            ns_relax(heap_, ns, &hsize, x, ry + (cst[p] * scale + price[x] - py + eps) // eps,
                     <int32_t>p, seen)
    for i in range(n):
        if ns[i].mark == done:
            price[i] -= eps * ns[i].dist
        else:
            price[i] -= eps * last


cdef int cost_scale_run(Graph* g, int64_t* excess, int64_t* price, int64_t scale,
                        int64_t alpha, intp_t max_path, intp_t update_every, Work* w) noexcept nogil:
    """Goldberg-Tarjan cost scaling with partial augment-relabel (Goldberg 1997; LEMON's
    default, Kovacs 2015).

    Costs are multiplied by ``scale`` = n + 1 on the fly, so an eps = 1 optimal flow is
    optimal for the original integer costs. Each refine divides eps by ``alpha``,
    saturates every residual slot of negative reduced cost, then takes the active nodes
    in FIFO order: from one, an admissible path (``c*scale + price[u] - price[v] < 0``) of
    up to ``max_path`` slots is grown with current-slot pointers (a dead end is relabelled,
    its price lowered to make its cheapest residual slot's reduced cost -eps, and the path
    steps back), then the excess is pushed along the whole path at once, so it crosses
    several slots per visit instead of being queued at every node. Global price updates
    (``global_update``) run at the start of every refine and after every ``update_every``
    relabels. IN-OUT excess [n] (the supply must be feasible: the wrapper checks it by a
    max flow first), price [n], g.rc. Returns FLOW_OK, or FLOW_STUCK if a relabel finds
    no residual slot (a guard only; it signals an internal error).
    """
    cdef intp_t* cur_ = w.cur
    cdef intp_t n = g.n
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int32_t* rev = g.rev
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef int32_t* queue = w.queue
    cdef int32_t* pnode = w.path
    cdef int32_t* parc = w.parc
    cdef char* inq = w.onpath
    cdef intp_t i, p, end, qh, qt, size, plen
    cdef int32_t u, v, start, tip
    cdef int64_t eps = 0, d, pt, best, cand, floor_price = -(INF64 // 2)
    cdef intp_t relabels = 0, next_update
    cdef bint last = False
    for p in range(g.slots):
        d = cst[p] if cst[p] >= 0 else -cst[p]
        if d * scale > eps:
            eps = d * scale
    if eps == 0:
        eps = 1
    while not last:
        eps = eps // alpha
        if eps <= 1:
            eps = 1
            last = True
        for i in range(n):
            pt = price[i]
            for p in range(first[i], first[i + 1]):
                if rc[p] > 0 and cst[p] * scale + pt - price[to[p]] < 0:
                    d = rc[p]
                    rc[p] = 0
                    rc[rev[p]] += d
                    excess[i] -= d
                    excess[to[p]] += d
        global_update(g, excess, price, scale, eps, w)
        next_update = relabels + update_every
        qh = 0
        qt = 0
        size = 0
        for i in range(n):
            cur_[i] = first[i]
            if excess[i] > 0:
                queue[qt] = <int32_t>i
                qt += 1
                size += 1
                inq[i] = 1
            else:
                inq[i] = 0
        if qt == n:
            qt = 0
        while size > 0:
            start = queue[qh]
            if excess[start] <= 0:
                qh += 1
                if qh == n:
                    qh = 0
                size -= 1
                inq[start] = 0
                continue
            # Grow an admissible path from start (admissible slots form an acyclic graph).
            pnode[0] = start
            plen = 0
            tip = start
            while True:
                pt = price[tip]
                end = first[tip + 1]
                p = cur_[tip]
                while p < end:
                    if rc[p] > 0 and cst[p] * scale + pt - price[to[p]] < 0:
                        break
                    p += 1
                if p < end:
                    cur_[tip] = p
                    v = to[p]
                    parc[plen] = <int32_t>p
                    plen += 1
                    pnode[plen] = v
                    if excess[v] < 0 or plen >= max_path:
                        break
                    tip = v
                    continue
                # Dead end: relabel tip. The slot back along the path counts as residual
                # (the push along it has not happened yet), so tip can always step back.
                best = floor_price
                for p in range(first[tip], end):
                    if rc[p] > 0:
                        cand = price[to[p]] - cst[p] * scale
                        if cand > best:
                            best = cand
                if plen > 0:
                    p = rev[parc[plen - 1]]
                    cand = price[to[p]] - cst[p] * scale
                    if cand > best:
                        best = cand
                if best <= floor_price + eps:
                    return FLOW_STUCK
                price[tip] = best - eps
                cur_[tip] = first[tip]
                relabels += 1
                if plen > 0:
                    plen -= 1
                    tip = pnode[plen]
                elif relabels >= next_update:
                    break
            # Push along the path, each node forwarding what it holds (up to the slot).
            for i in range(plen):
                u = pnode[i]
                p = parc[i]
                v = pnode[i + 1]
                d = excess[u] if excess[u] < rc[p] else rc[p]
                if d <= 0:
                    break
                rc[p] -= d
                rc[rev[p]] += d
                excess[u] -= d
                excess[v] += d
                if excess[v] > 0 and not inq[v]:
                    inq[v] = 1
                    queue[qt] = v
                    qt += 1
                    if qt == n:
                        qt = 0
                    size += 1
            if relabels >= next_update:
                global_update(g, excess, price, scale, eps, w)
                next_update = relabels + update_every
                for i in range(n):
                    cur_[i] = first[i]
    w.relabels += relabels
    return FLOW_OK


cdef int exact_potentials(Graph* g, int64_t* pi, intp_t limit, Work* w) noexcept nogil:
    """Integer potentials with c + pi[u] - pi[v] >= 0 on every residual slot.

    Label-correcting (queue-based Bellman-Ford) from the caller's warm start; terminates
    because an optimal flow leaves no negative residual cycle. ``limit`` caps the number
    of label corrections as a guard: FLOW_STUCK means it was hit (an internal error).
    """
    cdef intp_t n = g.n
    cdef intp_t* first = g.first
    cdef int32_t* to = g.to
    cdef int64_t* rc = g.rc
    cdef int64_t* cst = g.cst
    cdef int32_t* queue = w.queue
    cdef char* inq = w.onpath
    cdef intp_t i, p, qh = 0, qt = 0, count = 0, size = 0
    cdef int32_t u, v
    cdef int64_t pu
    for i in range(n):
        queue[i] = <int32_t>i
        inq[i] = 1
    size = n
    while size > 0:
        u = queue[qh]
        qh += 1
        if qh == n:
            qh = 0
        size -= 1
        inq[u] = 0
        pu = pi[u]
        for p in range(first[u], first[u + 1]):
            if rc[p] > 0:
                v = to[p]
                if pu + cst[p] < pi[v]:
                    pi[v] = pu + cst[p]
                    count += 1
                    if count > limit:
                        return FLOW_STUCK
                    if not inq[v]:
                        inq[v] = 1
                        queue[qt] = v
                        qt += 1
                        if qt == n:
                            qt = 0
                        size += 1
    return FLOW_OK


# ---------------------------------------------------------------------------- wrappers
cdef int work_alloc(Work* w, intp_t n) noexcept nogil:
    cdef intp_t m = n + 1
    w.phases = 0
    w.pops = 0
    w.paths = 0
    w.relabels = 0
    w.nodes = <NodeState*>calloc(m, sizeof(NodeState))
    w.heap = <int32_t*>calloc(m, sizeof(int32_t))
    w.settled = <int32_t*>calloc(m, sizeof(int32_t))
    w.cur = <intp_t*>calloc(m, sizeof(intp_t))
    w.onpath = <char*>calloc(m, sizeof(char))
    w.path = <int32_t*>calloc(m + 1, sizeof(int32_t))
    w.parc = <int32_t*>calloc(m, sizeof(int32_t))
    w.srcs = <int32_t*>calloc(m, sizeof(int32_t))
    w.level = <int32_t*>calloc(m, sizeof(int32_t))
    w.queue = <int32_t*>calloc(m, sizeof(int32_t))
    if (w.nodes == NULL
            or w.heap == NULL or w.settled == NULL or w.cur == NULL
            or w.onpath == NULL or w.path == NULL
            or w.parc == NULL or w.srcs == NULL or w.level == NULL or w.queue == NULL):
        return -1
    return 0


cdef void work_free(Work* w) noexcept nogil:
    free(w.nodes); free(w.heap)
    free(w.settled); free(w.cur); free(w.onpath)
    free(w.path); free(w.parc); free(w.srcs); free(w.level); free(w.queue)

cdef class Solution:
    """What :func:`solve` found, in every mode.

    Attributes
    ----------
    flow : int64 array (m,)
        Flow on each input arc.
    potential : int64 array (n,)
        Node potentials (all 0 for ``M_MAX_FLOW``).
    value : int
        Units delivered from the sources to the sinks (a maximum flow: the flow value).
    leftover : int
        Positive supply that reached no deficit (routing ``supply``; 0 when feasible and
        always 0 for a maximum flow).
    stats : dict
        Counters: phases, settled nodes, augmenting paths, relabels.
    """
    cdef readonly object flow, potential, stats
    cdef readonly int64_t value, leftover

    def __repr__(self):
        return (f"Solution(value={self.value}, leftover={self.leftover}, m={self.flow.shape[0]}, "
                f"n={self.potential.shape[0]})")


def solve(intp_t n, const int64_t[::1] tail, const int64_t[::1] head,
          const int64_t[::1] cap, const int64_t[::1] cost, const int64_t[::1] supply,
          intp_t source=-1, intp_t sink=-1, int64_t open_bound=0, int method=0,
          int64_t alpha=16, bint exact=True, bint unit_paths=False, intp_t max_path=8,
          intp_t update_every=0):
    """Min-cost flow on validated arrays (see ``spare_core.graph.flow`` for the public API).

    Modes
    -----
    ``source < 0``: route ``supply`` (sums to zero); ``leftover`` is the positive
    excess that reached no deficit (0 if feasible), ``value`` the supply delivered.
    ``source >= 0``: maximum ``source``-``sink`` flow of least cost; ``supply`` ignored.
    With negative-cost arcs (or ``method=M_COST_SCALING``) the value is fixed first by
    Dinic; otherwise ``source`` starts with ``open_bound`` excess (>= the max-flow value)
    and the search stops when no augmenting path is left. ``value`` is the flow value,
    ``leftover`` 0.
    ``unit_paths`` (maximum flow by SSP only): after the greedy start, push the source's
    excess along its tight slots and give every waiting unit its own Dijkstra stopped at
    the first deficit (``unit_path_run``); meant for a few units per source slot.
    ``method`` (``CONSTANTS``): M_SSP successive shortest paths, M_COST_SCALING cost
    scaling (supply must be feasible; the potentials are then made exact by label
    correction), M_MAX_FLOW maximum flow only (Dinic, with ``source >= 0``; costs
    ignored, the flow and value returned, the potential left at 0).

    ``max_path`` (cost scaling): longest admissible path grown before a push (1: plain
    push-relabel); ``update_every``: relabels between global price updates (0: 4n + 1).
    Measured on the generic, reassign and user families (docs/flow.md).

    Returns a :class:`Solution`.

    Potentials satisfy ``cost[a] + potential[tail[a]] - potential[head[a]] >= 0`` on
    every arc with flow < capacity and ``<= 0`` on every arc with flow > 0.
    """
    cdef intp_t m = tail.shape[0]
    cdef intp_t i, bad
    cdef bint max_mode = source >= 0
    cdef bint has_negative = False
    cdef bint scaling = method == M_COST_SCALING
    cdef int status = FLOW_OK
    cdef int64_t value = 0, leftover = 0, offered = 0, q
    cdef Graph g
    cdef Work w

    first = np.zeros(n + 1, dtype=np.intp)
    to = np.empty(max(2 * m, 1), dtype=np.int32)
    rev = np.empty(max(2 * m, 1), dtype=np.int32)
    rc = np.empty(max(2 * m, 1), dtype=np.int64)
    cst = np.empty(max(2 * m, 1), dtype=np.int64)
    # int32 slot indices (slots < 2**31, see flow.py's arc limit): every byte touched
    # here is a page the kernel zeroes first, a third of the 1e6-arc reassign time.
    fpos = np.empty(max(m, 1), dtype=np.int32)
    fill = np.empty(max(n, 1), dtype=np.int32)
    flow = np.zeros(m, dtype=np.int64)
    excess = np.zeros(max(n, 1), dtype=np.int64)
    pi = np.zeros(max(n, 1), dtype=np.int64)
    rcap = None
    cdef intp_t[::1] first_v = first
    cdef int32_t[::1] to_v = to
    cdef int32_t[::1] rev_v = rev
    cdef int64_t[::1] rc_v = rc
    cdef int64_t[::1] cst_v = cst
    cdef int32_t[::1] fpos_v = fpos
    cdef int32_t[::1] fill_v = fill
    cdef int64_t[::1] flow_v = flow
    cdef int64_t[::1] excess_v = excess
    cdef int64_t[::1] pi_v = pi
    cdef int64_t[::1] rcap_v
    cdef int64_t scale = n + 1

    # lengths and endpoints checked here too, so no read below can leave its array
    if head.shape[0] != m or cap.shape[0] != m or cost.shape[0] != m:
        raise ValueError("tail, head, capacity and cost must have one length")
    if n < 0 or (not max_mode and supply.shape[0] < n):
        raise ValueError("supply must have n entries")
    if max_mode and not (source < n and 0 <= sink < n):
        raise ValueError("source and sink must be in [0, n)")

    if not max_mode:
        for i in range(n):
            excess_v[i] = supply[i]
            if supply[i] > 0:
                offered += supply[i]
    g.first = &first_v[0]
    g.to = &to_v[0]
    g.rev = &rev_v[0]
    g.rc = &rc_v[0]
    g.cst = &cst_v[0]
    for i in range(m):
        if cost[i] < 0 and tail[i] != head[i]:
            has_negative = True
            break
    if max_mode and (has_negative or scaling):
        rcap = np.empty(max(2 * m, 1), dtype=np.int64)
        rcap_v = rcap

    if work_alloc(&w, n) != 0:
        work_free(&w)
        raise MemoryError("min-cost flow scratch for %d nodes could not be allocated" % n)
    try:
        with nogil:
            bad = build_graph(n, m, &tail[0] if m else NULL, &head[0] if m else NULL,
                              &cap[0] if m else NULL, &cost[0] if m else NULL, True,
                              &g, &fpos_v[0], &fill_v[0], &excess_v[0], &flow_v[0] if m else NULL)
        if bad < 0:
            raise ValueError("arc %d has a node id outside [0, %d)" % (-1 - bad, n))
        with nogil:
            if method == M_MAX_FLOW:
                # Capacity on the original arcs is already in g.rc when nothing was
                # saturated, and the caller passes zero costs for this mode.
                value = dinic_run(&g, g.rc, source, sink, &w)
            elif max_mode and (has_negative or scaling):
                # Capacity on the original arcs: forward slot = cap, backward = 0.
                for i in range(m):
                    if fpos_v[i] >= 0:
                        rcap_v[fpos_v[i]] = cap[i]
                        rcap_v[rev_v[fpos_v[i]]] = 0
                value = dinic_run(&g, &rcap_v[0], source, sink, &w)
                excess_v[source] += value
                excess_v[sink] -= value
            elif max_mode:
                excess_v[source] += open_bound
                excess_v[sink] -= open_bound
            if method == M_MAX_FLOW:
                pass
            elif scaling:
                status = cost_scale_run(&g, &excess_v[0], &pi_v[0], scale, alpha,
                                        max_path if max_path <= n else n,
                                        update_every if update_every > 0 else 4 * n + 1, &w)
                if status == FLOW_OK and exact:
                    for i in range(n):
                        # Floor division (C truncates towards zero) as the warm start.
                        q = pi_v[i] // scale
                        if q * scale > pi_v[i]:
                            q -= 1
                        pi_v[i] = q
                    status = exact_potentials(&g, &pi_v[0], 64 * (n + 1) * (g.slots + 1), &w)
            else:
                status = ssp_run(&g, &excess_v[0], &pi_v[0], &w, source if (unit_paths and max_mode and not has_negative) else -1)
            if max_mode and not has_negative and method == M_SSP:
                value = open_bound - excess_v[source]
                status = FLOW_OK
                # Guard: a unit stranded at an interior node would break conservation.
                for i in range(n):
                    if excess_v[i] != 0 and i != source and i != sink:
                        status = FLOW_STUCK
                        break
            if not max_mode and method == M_SSP:
                for i in range(n):
                    if excess_v[i] > 0:
                        leftover += excess_v[i]
            for i in range(m):
                if fpos_v[i] >= 0:
                    flow_v[i] = rc_v[rev_v[fpos_v[i]]]
        stats = {"phases": w.phases, "settled": w.pops, "paths": w.paths, "relabels": w.relabels}
    finally:
        work_free(&w)
    if status != FLOW_OK and (max_mode or scaling):
        raise RuntimeError("internal error: a feasible flow could not be routed (status %d)" % status)
    cdef Solution res = Solution.__new__(Solution)
    res.flow = flow
    res.potential = pi if n else pi[:0].copy()
    res.value = value if max_mode else offered - leftover
    res.leftover = 0 if max_mode else leftover
    res.stats = stats
    return res


# ---------------------------------------------------------------------------- input scans
# One pass over the arrays replaces a dozen numpy reductions in the Python validation,
# which dominated a 1e3-arc call (the wrapper keeps every rule and message).
cdef class NetworkScan:
    """What :func:`scan_network` learned about the arcs (all zero, ``out_max`` -1, for m = 0).

    Attributes
    ----------
    tail_min, tail_max, head_min, head_max, cap_min, cost_min, cost_max : int
        Ranges of the arc arrays.
    neg_cap_approx, neg_cap : float, int
        Total capacity of the non-loop arcs with negative cost.
    out_approx, out_cap : float, int
        Total capacity of the non-loop arcs leaving ``source`` (0 without a source).
    in_approx, in_cap : float, int
        Total capacity of the non-loop arcs entering ``sink`` (0 without a sink).
    out_max : int
        Largest capacity of a non-loop arc leaving ``source`` (-1 if none).

    Each total is given as a float and as an int64 sum that is exact only when the float
    is small (accumulated modulo 2**64, never undefined behaviour): the caller checks the
    float against its bounds before trusting the integer.
    """
    cdef readonly int64_t tail_min, tail_max, head_min, head_max, cap_min, cost_min, cost_max
    cdef readonly double neg_cap_approx, out_approx, in_approx
    cdef readonly int64_t neg_cap, out_cap, in_cap, out_max

    def __repr__(self):
        return (f"NetworkScan(tail=[{self.tail_min}, {self.tail_max}], head=[{self.head_min}, "
                f"{self.head_max}], cap_min={self.cap_min}, cost=[{self.cost_min}, {self.cost_max}], "
                f"neg_cap={self.neg_cap_approx:.6g}, out_cap={self.out_approx:.6g}, "
                f"in_cap={self.in_approx:.6g}, out_max={self.out_max})")


cdef class SupplyScan:
    """What :func:`scan_supply` learned about a supply vector (all zero for n = 0).

    Attributes
    ----------
    supply_min, supply_max : int
    positive_approx, positive : float, int
        Sum of the positive entries.
    negative_approx, negative : float, int
        Sum of the negated negative entries.

    nonzero : int
        Number of non-zero entries.
    pos_node, neg_node : int
        The last node with a positive / negative supply (-1 if none): with ``nonzero == 2``
        the single source and sink, which ``method="auto"`` then tests for the assignment
        shape without another pass.

    The int64 sums are exact only when the floats are small (see :class:`NetworkScan`).
    """
    cdef readonly int64_t supply_min, supply_max, positive, negative, nonzero, pos_node, neg_node
    cdef readonly double positive_approx, negative_approx

    def __repr__(self):
        return (f"SupplyScan(supply=[{self.supply_min}, {self.supply_max}], "
                f"positive={self.positive_approx:.6g}, negative={self.negative_approx:.6g}, "
                f"nonzero={self.nonzero})")


def scan_network(const int64_t[::1] tail, const int64_t[::1] head,
                 const int64_t[::1] cap, const int64_t[::1] cost,
                 int64_t source=-1, int64_t sink=-1):
    """Ranges of the four arc arrays (same length m) and capacity sums, in one pass.

    Returns a :class:`NetworkScan`; ``source`` / ``sink`` -1: no such terminal.
    """
    cdef intp_t m = tail.shape[0], i
    cdef int64_t tmin, tmax, hmin, hmax, cmin, kmin, kmax, u, h, c, out_max = -1
    cdef double neg_f = 0.0, out_f = 0.0, in_f = 0.0
    cdef uint64_t neg_i = 0, out_i = 0, in_i = 0
    cdef NetworkScan res = NetworkScan.__new__(NetworkScan)
    if m == 0:
        res.out_max = -1
        return res
    tmin = tmax = tail[0]
    hmin = hmax = head[0]
    cmin = cap[0]
    kmin = kmax = cost[0]
    with nogil:
        # Separate branch-free min/max loops (the compiler vectorises them); the sums
        # over particular arcs only when they can be non-zero.
        for i in range(m):
            tmin = min(tmin, tail[i])
            tmax = max(tmax, tail[i])
        for i in range(m):
            hmin = min(hmin, head[i])
            hmax = max(hmax, head[i])
        for i in range(m):
            cmin = min(cmin, cap[i])
        for i in range(m):
            kmin = min(kmin, cost[i])
            kmax = max(kmax, cost[i])
        if kmin < 0:
            for i in range(m):
                if cost[i] < 0 and tail[i] != head[i]:
                    neg_f += <double>cap[i]
                    neg_i += <uint64_t>cap[i]
        if source >= 0 or sink >= 0:
            for i in range(m):
                u = tail[i]
                h = head[i]
                if u == h:
                    continue    # a self-loop carries nothing between nodes
                c = cap[i]
                if u == source:
                    out_f += <double>c
                    out_i += <uint64_t>c
                    if c > out_max:
                        out_max = c
                if h == sink:
                    in_f += <double>c
                    in_i += <uint64_t>c
    res.tail_min, res.tail_max, res.head_min, res.head_max = tmin, tmax, hmin, hmax
    res.cap_min, res.cost_min, res.cost_max = cmin, kmin, kmax
    res.neg_cap_approx, res.neg_cap = neg_f, <int64_t>neg_i
    res.out_approx, res.out_cap = out_f, <int64_t>out_i
    res.in_approx, res.in_cap = in_f, <int64_t>in_i
    res.out_max = out_max
    return res


def scan_supply(const int64_t[::1] supply):
    """Range and sums of a supply vector in one pass; returns a :class:`SupplyScan`."""
    cdef intp_t n = supply.shape[0], i
    cdef int64_t lo, hi, v
    cdef double pos_f = 0.0, neg_f = 0.0
    cdef uint64_t pos_i = 0, neg_i = 0
    cdef int64_t nonzero = 0, pos_node = -1, neg_node = -1
    cdef SupplyScan res = SupplyScan.__new__(SupplyScan)
    res.pos_node = res.neg_node = -1
    if n == 0:
        return res
    lo = hi = supply[0]
    with nogil:
        for i in range(n):
            v = supply[i]
            if v < lo:
                lo = v
            if v > hi:
                hi = v
            if v > 0:
                pos_f += <double>v
                pos_i += <uint64_t>v
                nonzero += 1
                pos_node = i
            elif v < 0:
                neg_f -= <double>v
                neg_i -= <uint64_t>v
                nonzero += 1
                neg_node = i
    res.supply_min, res.supply_max = lo, hi
    res.positive_approx, res.positive = pos_f, <int64_t>pos_i
    res.negative_approx, res.negative = neg_f, <int64_t>neg_i
    res.nonzero, res.pos_node, res.neg_node = nonzero, pos_node, neg_node
    return res



def assignment_shape(intp_t n, const int64_t[::1] tail, const int64_t[::1] head,
                     const int64_t[::1] cap, intp_t source, intp_t sink):
    """Is the network ``source`` -> L -> R -> ``sink`` layered with unit source arcs?

    L = heads of the arcs out of ``source`` (at least one, every such arc of capacity
    <= 1); an arc into L comes only from ``source``; an arc out of L goes to a node
    outside L other than ``source``; every other arc goes into ``sink`` and does not leave
    it. This is the shape on which SSP's unit-path stage needs one alternating path per
    unit (Jonker-Volgenant), whatever the costs. Two passes over the arcs and an n-byte
    mark array: microseconds at 1e3 arcs, where the vectorised numpy test it replaces cost
    more than the solve. Any input is safe: an id outside ``[0, n)``, a terminal outside
    it or arrays of different lengths answer False.
    """
    cdef intp_t m = tail.shape[0], i
    cdef int64_t u, v
    cdef bint ok = True, any_source = False
    cdef unsigned char* in_l
    if head.shape[0] != m or cap.shape[0] != m or n <= 0 or not (0 <= source < n) \
            or not (0 <= sink < n) or source == sink:
        return False
    in_l = <unsigned char*>calloc(n, 1)
    if in_l == NULL:
        raise MemoryError("assignment shape check for %d nodes could not be allocated" % n)
    with nogil:
        for i in range(m):
            u = tail[i]
            v = head[i]
            if u < 0 or u >= n or v < 0 or v >= n:
                ok = False
                break
            if u == source:
                if cap[i] > 1:
                    ok = False
                    break
                in_l[v] = 1
                any_source = True
        if ok and any_source and not in_l[source] and not in_l[sink]:
            for i in range(m):
                u = tail[i]
                v = head[i]
                if u == source:
                    continue
                if in_l[v] or v == source:      # into L (not from source), or back to source
                    ok = False
                    break
                if not in_l[u] and (v != sink or u == sink):
                    ok = False                  # outside L: only arcs into the sink
                    break
        else:
            ok = False
    free(in_l)
    return bool(ok)
