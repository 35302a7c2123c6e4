# cython: language_level=3
"""Primal network simplex for min-cost flow (bounded arcs, strongly feasible trees).

Only typed memoryviews and scalars arrive here; ``spare_core.graph.flow`` validates every
argument first (index ranges, capacities >= 0, supplies balanced, int64 overflow bounds).

Algorithm (Ahuja, Magnanti & Orlin 1993, "Network Flows", ch. 11; Cunningham 1976;
Kiraly & Kovacs 2012, "Efficient implementations of minimum-cost flow algorithms")
--------------------------------------------------------------------------------------
* Basis: a spanning tree on the n nodes plus an artificial root (node n). Every node u
  gets an artificial arc ``u -> root`` (supply >= 0, flow = supply) or ``root -> u``
  (supply < 0, flow = -supply) of cost ``M = (n + 1) * max|cost| + 1`` and unbounded
  capacity. Any residual cycle that trades two artificial units for a real path costs
  at most ``-2M + (n - 1) max|cost| < 0``, so an optimal basis keeps flow on an
  artificial arc only if the supplies are infeasible (the big-M method).
* Non-tree arcs sit at flow 0 (LOWER) or at capacity (UPPER); the tree is stored as
  ``parent``/``pred`` (arc to the parent) / ``pred_dir`` plus the preorder ``thread``,
  its reverse, subtree sizes ``succ_num`` and the last node of every subtree
  ``last_succ``, so a pivot costs time in the size of the re-hung subtree and the
  depth of the cycle, never O(n).
* Potentials: ``pi[head] = pi[tail] + cost`` on tree arcs, i.e. the API's reduced cost
  ``cost + pi[tail] - pi[head]`` is zero on the tree; they are returned relative to
  the root. An arc enters when it violates complementary slackness; the pivot shifts
  the potentials of the re-hung subtree (or of the rest of the tree) only.
* Start (crash basis): nodes that reach a demand are hung on a shortest path to the
  nearest one (a Dijkstra backwards from the demands over arcs of cost >= 0; a supply
  node only over arcs wider than every supply), and the supplies flow down this tree;
  bottom-up, a subtree whose arc to its parent would saturate is hung on the root by
  its artificial arc instead. The tree is strongly feasible, its potentials exact; it
  saves the ~n degenerate pivots that would otherwise grow it from the star one node at
  a time, and the pivots that would move the supplies off their artificial arcs.
* Potential update: the re-hung subtree shifts, or the rest of the tree when the
  subtree holds more than half the nodes. Either set is one or two runs of the preorder
  with known ends, walked from both ends at once (two or four independent pointer
  chases whose cache misses overlap).
* Renumbering: once the shifts since the last renumbering have touched
  ``renumber_factor * (n + m)`` nodes, the nodes are renumbered in the current preorder
  (``renumber_preorder``, O(n + m)). A pivot moves the re-hung subtree as a few
  contiguous runs of the preorder, so the walks along ``thread`` stay mostly on
  consecutive ids, which the hardware prefetches; without it the shift is a chain of
  cache misses (docs/flow.md: half the 1e6-arc time).
* Pricing: block search (Grigoriadis 1986) with a candidate list (``list_head``; LEMON's
  "altering candidate list" idea): scan arcs cyclically in blocks of about sqrt(m);
  the most violating of the new block and of the ``list_head`` best arcs kept from
  earlier blocks (re-priced each time) enters. An arc joins the list only if it beats
  the list's worst, so the scan costs what the plain block search costs; the entering
  arcs are better, which saves pivots and potential shifts (docs/flow.md).
* Leaving arc (Cunningham's strongly feasible trees): every tree arc can carry a
  positive amount of flow towards the root. The initial tree is strongly feasible
  (artificial arcs point to the root or carry the demand), and choosing the *last*
  blocking arc met when the pivot cycle is traversed in its orientation from the apex
  keeps it so; then every degenerate pivot strictly changes the sum of potentials in
  one direction (Cunningham 1976; AMO ch. 11), so no basis repeats and cycling is
  impossible. ``max_pivots`` bounds the run anyway
  (status NS_PIVOT_LIMIT), and ``check_tree`` re-verifies the tree invariants and
  strong feasibility after every pivot (tests, O(n) per pivot).

Buffers: one malloc'd block of 3 int64, 2 int32 and 1 int8 arrays over the m + n arcs,
1 int64, 10 int32 and 1 int8 arrays over the n + 1 nodes and the start's arcs-by-head
index (about 37 m + 86 n bytes), the candidate list (12 bytes per entry) and the
renumbering scratch (20 n bytes); the whole solve runs without the GIL.
"""
from libc.math cimport sqrt
from libc.stdlib cimport malloc, free
from _types cimport intp_t, int32_t, int64_t
from _heap cimport heap_sift_up, heap_push, heap_pop

import numpy as np

# Arc states: the sign makes ``state * reduced_cost < 0`` the entering test.
cdef enum:
    ST_UPPER = -1
    ST_TREE = 0
    ST_LOWER = 1
    DIR_UP = 1          # pred arc goes node -> parent
    DIR_DOWN = -1       # pred arc goes parent -> node

cdef enum:
    NS_OK = 0
    NS_INFEASIBLE = 1   # flow left on an artificial arc: supplies cannot all be routed
    NS_PIVOT_LIMIT = 2  # max_pivots reached (never observed; a guard, not a policy)
    NS_BAD_TREE = 3     # check_tree found a broken invariant (a bug)

# Initial bases of solve(start=...).
cdef enum:
    START_STAR = 0             # the star of artificial arcs only
    START_SHORTEST_PATHS = 1   # zero-supply nodes hung on shortest paths to the demands
    START_CRASH = 2            # supply nodes too, their supply routed down the tree

# The enums above for Python callers (spare_core.graph.flow reads them from here).
CONSTANTS = {
    "NS_OK": NS_OK, "NS_INFEASIBLE": NS_INFEASIBLE, "NS_PIVOT_LIMIT": NS_PIVOT_LIMIT,
    "NS_BAD_TREE": NS_BAD_TREE, "START_STAR": START_STAR, "START_SHORTEST_PATHS": START_SHORTEST_PATHS,
    "START_CRASH": START_CRASH,
}

cdef int64_t INF_CAP = 0x3FFFFFFFFFFFFFFF
cdef int64_t PI_DRIFT = 1 << 60


cdef struct Tree:
    intp_t n_all                # nodes including the root (n + 1)
    intp_t m_all                # arcs including the artificial ones (m + n)
    intp_t m_real               # input arcs (0 .. m-1); artificial arcs follow
    int32_t root
    int32_t* src                # [m_all] arc tails
    int32_t* dst                # [m_all] arc heads
    int64_t* cap                # [m_all] capacities (INF_CAP for artificial arcs)
    int64_t* cst                # [m_all] costs
    int64_t* flow               # [m_all] IN-OUT flow
    signed char* state          # [m_all] ST_UPPER / ST_TREE / ST_LOWER (0 also: ignored loop)
    int64_t* pi                 # [n_all] potentials
    int32_t* parent             # [n_all] parent in the tree, -1 at the root
    int32_t* pred               # [n_all] tree arc to the parent
    signed char* pred_dir       # [n_all] DIR_UP / DIR_DOWN
    int32_t* thread             # [n_all] preorder successor (cyclic through the root)
    int32_t* rev_thread         # [n_all] preorder predecessor
    int32_t* succ_num           # [n_all] subtree size
    int32_t* last_succ          # [n_all] last node of the subtree in preorder
    int32_t* path               # [n_all] scratch: the re-hung path
    int32_t* before             # [n_all] scratch: old rev_thread of the path nodes
    int32_t* after              # [n_all] scratch: old thread after each path subtree
    int32_t* last               # [n_all] scratch: old last_succ of the path nodes


cdef inline int64_t residual_to_parent(Tree* t, int32_t v) noexcept nogil:
    """Flow that can still move from v to its parent along the tree arc."""
    cdef int32_t e = t.pred[v]
    if t.pred_dir[v] == DIR_UP:
        return t.cap[e] - t.flow[e]
    return t.flow[e]


cdef inline int64_t residual_from_parent(Tree* t, int32_t v) noexcept nogil:
    """Flow that can still move from the parent of v down to v along the tree arc."""
    cdef int32_t e = t.pred[v]
    if t.pred_dir[v] == DIR_UP:
        return t.flow[e]
    return t.cap[e] - t.flow[e]


cdef intp_t find_entering(Tree* t, intp_t* next_arc, intp_t block, intp_t* scanned) noexcept nogil:
    """Block search: the most violating arc of the first block holding one, or -1.

    Only the real arcs are priced: an artificial arc that left the tree (at flow 0) may
    stay out. If the supplies are feasible, a zero-artificial flow is still feasible
    without it and cheaper than any other, so the optimum is unchanged; and artificial
    flow 0 at the end still proves feasibility."""
    cdef const int32_t* src = t.src
    cdef const int32_t* dst = t.dst
    cdef const int64_t* cst = t.cst
    cdef const signed char* state = t.state
    cdef const int64_t* pi = t.pi
    cdef intp_t m = t.m_real
    cdef intp_t e = next_arc[0], best = -1, cnt = block, k
    cdef int64_t c, best_c = 0
    for k in range(m):
        c = state[e] * (cst[e] + pi[src[e]] - pi[dst[e]])
        if c < best_c:
            best_c = c
            best = e
        e += 1
        if e == m:
            e = 0
        cnt -= 1
        if cnt == 0:
            if best >= 0:
                break
            cnt = block
    scanned[0] += k + 1
    next_arc[0] = e
    return best


cdef intp_t find_entering_list(Tree* t, intp_t* next_arc, intp_t block, intp_t* scanned,
                               int32_t* cand, int64_t* val, intp_t* ncand, intp_t head) noexcept nogil:
    """Block search that remembers: the most violating of one new block and of the
    ``head`` best arcs met in earlier blocks (re-priced, dropped once they no longer
    violate). An arc joins the list only if it beats the list's worst, so the scan loop
    stays the plain block loop apart from a rare insertion."""
    cdef const int32_t* src = t.src
    cdef const int32_t* dst = t.dst
    cdef const int64_t* cst = t.cst
    cdef const signed char* state = t.state
    cdef const int64_t* pi = t.pi
    cdef intp_t m = t.m_real
    cdef intp_t e = next_arc[0], cnt = block, k, i, nc = 0, worst = 0, best
    cdef int64_t c, cutoff = 0
    cdef int32_t x
    for i in range(ncand[0]):
        x = cand[i]
        c = state[x] * (cst[x] + pi[src[x]] - pi[dst[x]])
        if c < 0:
            cand[nc] = x
            val[nc] = c
            nc += 1
    scanned[0] += ncand[0]
    if nc == head:
        for i in range(1, nc):
            if val[i] > val[worst]:
                worst = i
        cutoff = val[worst]
    for k in range(m):
        c = state[e] * (cst[e] + pi[src[e]] - pi[dst[e]])
        if c < cutoff:
            if nc < head:
                cand[nc] = <int32_t>e
                val[nc] = c
                nc += 1
                if nc == head:
                    worst = 0
                    for i in range(1, nc):
                        if val[i] > val[worst]:
                            worst = i
                    cutoff = val[worst]
            else:
                cand[worst] = <int32_t>e
                val[worst] = c
                worst = 0
                for i in range(1, nc):
                    if val[i] > val[worst]:
                        worst = i
                cutoff = val[worst]
        e += 1
        if e == m:
            e = 0
        cnt -= 1
        if cnt == 0:
            if nc > 0:
                break
            cnt = block
    scanned[0] += k + 1
    next_arc[0] = e
    if nc == 0:
        ncand[0] = 0
        return -1
    best = 0
    for i in range(1, nc):
        if val[i] < val[best]:
            best = i
    x = cand[best]
    nc -= 1
    cand[best] = cand[nc]
    val[best] = val[nc]
    ncand[0] = nc
    return x


cdef inline void shift_run(Tree* t, int32_t first, int32_t last, intp_t count, int64_t sigma) noexcept nogil:
    """Add ``sigma`` to the potentials of the ``count`` nodes from ``first`` to ``last``
    along ``thread``, walking inwards from both ends."""
    cdef intp_t i
    cdef int32_t a = first, b = last
    cdef int32_t* thread = t.thread
    cdef int32_t* rev_thread = t.rev_thread
    cdef int64_t* pi = t.pi
    for i in range(count >> 1):
        pi[a] += sigma
        pi[b] += sigma
        a = thread[a]
        b = rev_thread[b]
    if count & 1:
        pi[a] += sigma


cdef inline void shift_between(Tree* t, int32_t a, int32_t b, int64_t sigma) noexcept nogil:
    """Add ``sigma`` to the potentials of the preorder run ``a .. b`` (ends included,
    length unknown), walked inwards from both ends until they meet."""
    cdef int32_t x
    while True:
        t.pi[a] += sigma
        if a == b:
            return
        t.pi[b] += sigma
        x = t.thread[a]
        if x == b:
            return
        a = x
        b = t.rev_thread[b]


cdef inline void shift_two(Tree* t, int32_t a1, int32_t b1, int32_t a2, int32_t b2, int64_t sigma) noexcept nogil:
    """``shift_between`` on two disjoint non-empty runs at once: four independent
    pointer chases whose cache misses overlap."""
    cdef int32_t* thread = t.thread
    cdef int32_t* rev_thread = t.rev_thread
    cdef int64_t* pi = t.pi
    cdef int32_t x
    cdef bint done1 = False, done2 = False
    while not done1 and not done2:
        pi[a1] += sigma
        if a1 == b1:
            done1 = True
        else:
            pi[b1] += sigma
            x = thread[a1]
            if x == b1:
                done1 = True
            else:
                a1 = x
                b1 = rev_thread[b1]
        pi[a2] += sigma
        if a2 == b2:
            done2 = True
        else:
            pi[b2] += sigma
            x = thread[a2]
            if x == b2:
                done2 = True
            else:
                a2 = x
                b2 = rev_thread[b2]
    if not done1:
        # a1 .. b1 not shifted yet
        shift_between(t, a1, b1, sigma)
    elif not done2:
        shift_between(t, a2, b2, sigma)


cdef int pivot(Tree* t, int32_t e_in, intp_t* counters) noexcept nogil:
    """Push flow round the cycle of ``e_in`` and exchange it with the leaving arc.

    ``counters`` (IN-OUT statistics): degenerate pivots, cycle length, nodes whose
    potential moved, ancestor steps of the subtree-size and last-successor updates."""
    cdef int32_t first, second, u, v, join, u_out = -1, u_in, v_in, w, x, tail_node
    cdef int32_t p_out, k, i, size_s
    cdef signed char side = 0     # side of the leaving arc: 1 first, 2 second
    cdef int64_t delta, r, sigma, rc
    cdef signed char st = t.state[e_in]

    if st == ST_LOWER:
        first, second = t.src[e_in], t.dst[e_in]
    else:
        first, second = t.dst[e_in], t.src[e_in]
    # Apex of the cycle: the deeper node (smaller subtree) climbs first.
    u, v = first, second
    while u != v:
        counters[1] += 1
        if t.succ_num[u] < t.succ_num[v]:
            u = t.parent[u]
        else:
            v = t.parent[v]
    join = u
    # Cycle orientation: join -> ... -> first -> e_in -> second -> ... -> join. The last
    # blocking arc in that order wins: on the first side (walked upwards, i.e. against
    # the orientation) the first minimum, on the second side the last one.
    delta = t.cap[e_in]
    u = first
    while u != join:
        r = residual_from_parent(t, u)
        if r < delta:
            delta = r
            u_out = u
            side = 1
        u = t.parent[u]
    u = second
    while u != join:
        r = residual_to_parent(t, u)
        if r <= delta:
            delta = r
            u_out = u
            side = 2
        u = t.parent[u]

    if delta > 0:
        t.flow[e_in] += st * delta
        u = first
        while u != join:
            t.flow[t.pred[u]] -= t.pred_dir[u] * delta
            u = t.parent[u]
        u = second
        while u != join:
            t.flow[t.pred[u]] += t.pred_dir[u] * delta
            u = t.parent[u]
    else:
        counters[0] += 1

    if side == 0:
        # The entering arc itself blocks: it just moves to its other bound.
        t.state[e_in] = -st
        return 0

    if side == 1:
        u_in, v_in = first, second
    else:
        u_in, v_in = second, first
    rc = t.cst[e_in] + t.pi[t.src[e_in]] - t.pi[t.dst[e_in]]
    sigma = -rc if u_in == t.src[e_in] else rc
    p_out = t.parent[u_out]
    x = t.pred[u_out]
    t.state[x] = ST_LOWER if t.flow[x] == 0 else ST_UPPER
    t.state[e_in] = ST_TREE

    # The path u_in = w_0, w_1, ..., w_k = u_out is reversed; remember the old thread
    # around every subtree on it before anything is relinked.
    k = 0
    w = u_in
    while True:
        t.path[k] = w
        t.before[k] = t.rev_thread[w]
        t.last[k] = t.last_succ[w]
        t.after[k] = t.thread[t.last_succ[w]]
        if w == u_out:
            break
        w = t.parent[w]
        k += 1
    size_s = t.succ_num[u_out]

    # New preorder of the moved subtree: subtree(w_0), then for every i >= 1 the part of
    # old subtree(w_i) before subtree(w_{i-1}) and the part after it.
    tail_node = t.last[0]
    for i in range(1, k + 1):
        w = t.path[i]
        t.thread[tail_node] = w
        t.rev_thread[w] = tail_node
        tail_node = t.before[i - 1]
        if t.last[i] != t.last[i - 1]:
            x = t.after[i - 1]
            t.thread[tail_node] = x
            t.rev_thread[x] = tail_node
            tail_node = t.last[i]
    # Cut it out of the old order, then splice it in right after v_in.
    x = t.before[k]
    w = t.after[k]
    t.thread[x] = w
    t.rev_thread[w] = x
    w = t.thread[v_in]
    t.thread[v_in] = u_in
    t.rev_thread[u_in] = v_in
    t.thread[tail_node] = w
    t.rev_thread[w] = tail_node

    # last_succ: ancestors that ended with the moved subtree now end before it; those
    # ending at v_in now end with it. Every node on the path ends where the block ends.
    w = t.last[k]
    x = p_out
    while x >= 0 and t.last_succ[x] == w:
        counters[3] += 1
        t.last_succ[x] = t.before[k]
        x = t.parent[x]
    x = v_in
    while x >= 0 and t.last_succ[x] == v_in:
        counters[3] += 1
        t.last_succ[x] = tail_node
        x = t.parent[x]
    for i in range(k + 1):
        t.last_succ[t.path[i]] = tail_node

    # Subtree sizes: along the old and the new branch up to the apex.
    x = p_out
    while x != join:
        counters[3] += 1
        t.succ_num[x] -= size_s
        x = t.parent[x]
    x = v_in
    while x != join:
        counters[3] += 1
        t.succ_num[x] += size_s
        x = t.parent[x]
    for i in range(k, 0, -1):
        t.succ_num[t.path[i]] = size_s - t.succ_num[t.path[i - 1]]
    t.succ_num[u_in] = size_s

    # Parents and tree arcs: reversed along the path (old values read before overwritten).
    for i in range(k, 0, -1):
        w = t.path[i]
        x = t.path[i - 1]
        t.parent[w] = x
        t.pred[w] = t.pred[x]
        t.pred_dir[w] = -t.pred_dir[x]
    t.parent[u_in] = v_in
    t.pred[u_in] = e_in
    t.pred_dir[u_in] = DIR_UP if t.src[e_in] == u_in else DIR_DOWN

    # Potentials: the moved subtree shifts so that e_in has reduced cost 0 or, when it
    # holds most of the nodes, everything else shifts the other way (only differences
    # of potentials matter; the root's own value is never used). Either set is one run
    # of the cyclic preorder; it is walked from both ends at once, two independent
    # pointer chases whose cache misses overlap (this loop was half the time of the
    # 1e6-arc NETGEN-like solve, latency-bound on ``thread``).
    if sigma != 0:
        if 2 * size_s <= t.n_all:
            counters[2] += size_s
            if k > 0:
                # u_in's old subtree, then the rest of the re-hung path's subtrees.
                shift_two(t, u_in, t.last[0], t.path[1], tail_node, sigma)
            else:
                shift_run(t, u_in, tail_node, size_s, sigma)
        else:
            counters[2] += t.n_all - size_s
            # Split at the root: the nodes after the moved subtree up to the root, and
            # from the root round to v_in (the node before it).
            x = t.thread[tail_node]
            if x == t.root:
                shift_run(t, x, v_in, t.n_all - size_s, -sigma)
            else:
                shift_two(t, x, t.rev_thread[t.root], t.root, v_in, -sigma)
            # The root drifts by -sigma per such pivot: re-anchor it long before int64
            # could overflow (tree paths alone stay below 2**61, see flow.py's bounds).
            if t.pi[t.root] > PI_DRIFT or t.pi[t.root] < -PI_DRIFT:
                sigma = t.pi[t.root]
                for i in range(t.n_all):
                    t.pi[i] -= sigma
    return 0


cdef void build_preorder(Tree* t, intp_t n, int32_t* in_first, int32_t* child, int32_t* order,
                         int32_t* stack) noexcept nogil:
    """``thread``, ``rev_thread``, ``succ_num`` and ``last_succ`` from ``parent`` alone.

    ``in_first`` [n + 2], ``child`` [n], ``order`` [n + 1], ``stack`` [n + 1]: scratch
    (children lists by counting sort, then a preorder by an explicit stack); ``order``
    holds the preorder on return."""
    cdef intp_t i, k, hsize = 0
    cdef int32_t v, w, root = t.root
    for i in range(n + 2):
        in_first[i] = 0
    for i in range(n):
        in_first[t.parent[i] + 1] += 1
    for i in range(n + 1):
        in_first[i + 1] += in_first[i]
    for i in range(n):
        v = t.parent[i]
        child[in_first[v]] = <int32_t>i
        in_first[v] += 1
    for i in range(n + 1, 0, -1):
        in_first[i] = in_first[i - 1]
    in_first[0] = 0
    stack[hsize] = root
    hsize += 1
    k = 0
    while hsize > 0:
        hsize -= 1
        v = stack[hsize]
        order[k] = v
        k += 1
        for i in range(in_first[v], in_first[v + 1]):
            stack[hsize] = child[i]
            hsize += 1
    for i in range(n + 1):
        t.succ_num[i] = 1
    for k in range(n, 0, -1):
        v = order[k]
        t.succ_num[t.parent[v]] += t.succ_num[v]
    for k in range(n + 1):
        v = order[k]
        w = order[k + 1] if k < n else root
        t.thread[v] = w
        t.rev_thread[w] = v
        t.last_succ[v] = order[k + t.succ_num[v] - 1]


cdef void shortest_path_start(Tree* t, const int64_t* supply, intp_t n, int64_t big_m,
                              int32_t* in_first, int32_t* in_arc, bint route) noexcept nogil:
    """Hang nodes that can reach a demand on their shortest path to the nearest one.

    ``route`` false (START_SHORTEST_PATHS): every zero-supply node u that reaches a
    demand replaces its artificial arc by the first arc u -> w of a shortest path (costs
    >= 0, capacity > 0) from u to the nearest demand node, at flow 0, with ``pi[u] = M -
    dist(u)``; demand nodes keep their artificial arcs (pi = M), supply nodes and
    unreachable nodes too (pi = -M). Tree arcs at flow 0 point towards the root with
    positive capacity, so the tree stays strongly feasible; it is a valid basis for any
    costs (negative arcs are simply not used here). Without it, the first ~n pivots are
    degenerate ones that grow this same tree one node at a time.

    ``route`` true (START_CRASH): supply nodes are hung too (over arcs wider than every
    node's supply only, so a route is rarely cut at its first arc), and their supply flows
    down the tree to the demands (a crash basis: the flow of the tree whose non-tree arcs
    all sit at 0). Bottom-up, a node whose subtree would send its tree arc to capacity
    or beyond is cut off and hung on the root by its artificial arc instead (which
    carries the subtree's excess), so every real tree arc keeps ``flow < cap`` and the
    tree is strongly feasible; a demand node's artificial arc points towards the root
    when the flow routed into it covers its demand (it carries the surplus, or 0).
    Potentials are then set top-down so every tree arc has reduced cost 0. Most of the
    supply starts on a cheap route, instead of being moved off the artificial arcs by
    pivots that each re-hang part of the tree.

    ``in_first`` [n + 2], ``in_arc`` [m]: scratch for the arcs by head, then the children
    lists; ``path``, ``before``, ``after``, ``last`` are used as heap, positions, preorder
    and children.
    """
    cdef intp_t m = t.m_real, i, k, hsize = 0
    cdef int32_t u, v, w, a, p, root = t.root
    cdef int64_t d
    cdef int32_t* heap = t.path
    cdef int32_t* pos = t.before
    cdef int64_t* dist = t.pi
    cdef int64_t* excess = t.pi
    cdef int32_t* order = t.before
    cdef int64_t min_cap = 1
    if route:
        # Only arcs that can carry a whole source's supply: a thinner arc on a route
        # would cut the route off anyway.
        for i in range(n):
            if supply[i] >= min_cap:
                min_cap = supply[i] + 1
    # Arcs by head (counting sort), only those usable on a shortest path.
    for i in range(n + 2):
        in_first[i] = 0
    for i in range(m):
        if t.cap[i] > 0 and t.cst[i] >= 0 and t.src[i] != t.dst[i] and (
                supply[t.src[i]] == 0 or (route and supply[t.src[i]] > 0 and t.cap[i] >= min_cap)):
            in_first[t.dst[i] + 1] += 1
    for i in range(n):
        in_first[i + 1] += in_first[i]
    for i in range(m):
        if t.cap[i] > 0 and t.cst[i] >= 0 and t.src[i] != t.dst[i] and (
                supply[t.src[i]] == 0 or (route and supply[t.src[i]] > 0 and t.cap[i] >= min_cap)):
            v = t.dst[i]
            in_arc[in_first[v]] = <int32_t>i
            in_first[v] += 1
    for i in range(n, 0, -1):
        in_first[i] = in_first[i - 1]
    in_first[0] = 0
    # Multi-source Dijkstra backwards from the demand nodes.
    for i in range(n):
        pos[i] = -1
        dist[i] = INF_CAP
        if supply[i] < 0:
            dist[i] = 0
            heap[hsize] = <int32_t>i
            pos[i] = <int32_t>hsize
            hsize += 1
    while hsize > 0:
        # popped nodes get position -2, so they are never pushed again
        w = heap_pop(heap, &hsize, <const char*>dist, sizeof(int64_t), <char*>pos, sizeof(int32_t), -2)
        for k in range(in_first[w], in_first[w + 1]):
            a = in_arc[k]
            u = t.src[a]
            d = dist[w] + t.cst[a]
            if d < dist[u]:
                dist[u] = d
                t.parent[u] = w
                t.pred[u] = a
                if pos[u] == -1:
                    heap_push(heap, &hsize, u, <const char*>dist, sizeof(int64_t), <char*>pos, sizeof(int32_t))
                else:
                    heap_sift_up(heap, pos[u], <const char*>dist, sizeof(int64_t), <char*>pos, sizeof(int32_t))
    if not route:
        for i in range(n):
            if supply[i] < 0:
                dist[i] = big_m
            elif supply[i] == 0 and dist[i] < INF_CAP:
                t.state[t.m_real + i] = ST_LOWER
                t.flow[t.m_real + i] = 0
                t.pred_dir[i] = DIR_UP
                t.state[t.pred[i]] = ST_TREE
                dist[i] = big_m - dist[i]
            else:
                dist[i] = -big_m
        build_preorder(t, n, in_first, t.last, order, t.path)
        return
    # Crash: hang every reached node, then route the supplies bottom-up.
    for i in range(n):
        if supply[i] >= 0 and dist[i] < INF_CAP:
            t.state[t.m_real + i] = ST_LOWER
            t.flow[t.m_real + i] = 0
            t.pred_dir[i] = DIR_UP
            t.state[t.pred[i]] = ST_TREE
    build_preorder(t, n, in_first, t.last, order, t.path)
    for i in range(n):
        excess[i] = supply[i]
    for k in range(n, 0, -1):
        v = order[k]
        p = t.parent[v]
        if p != root:
            a = t.pred[v]
            if excess[v] < t.cap[a]:
                t.flow[a] = excess[v]
                excess[p] += excess[v]
                continue
            # Cut off: the arc would saturate; the subtree's excess goes to the root.
            t.state[a] = ST_LOWER
            t.flow[a] = 0
            t.parent[v] = root
            t.pred[v] = <int32_t>(t.m_real + v)
            t.state[t.m_real + v] = ST_TREE
        a = <int32_t>(t.m_real + v)
        if excess[v] >= 0:
            t.src[a], t.dst[a] = v, root
            t.flow[a] = excess[v]
            t.pred_dir[v] = DIR_UP
        else:
            t.src[a], t.dst[a] = root, v
            t.flow[a] = -excess[v]
            t.pred_dir[v] = DIR_DOWN
    # Non-tree artificial arcs sit at 0 whatever their direction; the tree changed shape.
    build_preorder(t, n, in_first, t.last, order, t.path)
    t.pi[root] = 0
    for k in range(1, n + 1):
        v = order[k]
        a = t.pred[v]
        if t.pred_dir[v] == DIR_UP:
            t.pi[v] = t.pi[t.parent[v]] - t.cst[a]
        else:
            t.pi[v] = t.pi[t.parent[v]] + t.cst[a]


cdef void renumber_preorder(Tree* t, int32_t* newid, int32_t* where, intp_t n_orig,
                            int64_t* tmp64, int32_t* tmp32) noexcept nogil:
    """Renumber the nodes in the current preorder (the root keeps its id).

    A pivot moves the re-hung subtree as a few contiguous runs of the preorder, so after
    this a potential shift walks ``thread`` through mostly consecutive ids: sequential
    memory the hardware prefetcher fetches ahead, instead of a chain of cache misses.
    Every node array is permuted, every arc's ends mapped; arc ids do not change.
    ``where`` [n_orig]: the current id of every input node, updated."""
    cdef intp_t n_all = t.n_all, k, e
    cdef int32_t v, root = t.root, x
    cdef signed char* dir8 = <signed char*>tmp64
    v = t.thread[root]
    k = 0
    while v != root:
        newid[v] = <int32_t>k
        k += 1
        v = t.thread[v]
    newid[root] = root
    for k in range(n_all):
        tmp64[newid[k]] = t.pi[k]
    for k in range(n_all):
        t.pi[k] = tmp64[k]
    for k in range(n_all):
        x = t.parent[k]
        tmp32[newid[k]] = newid[x] if x >= 0 else -1
    for k in range(n_all):
        t.parent[k] = tmp32[k]
    for k in range(n_all):
        tmp32[newid[k]] = newid[t.thread[k]]
    for k in range(n_all):
        t.thread[k] = tmp32[k]
    for k in range(n_all):
        tmp32[newid[k]] = newid[t.rev_thread[k]]
    for k in range(n_all):
        t.rev_thread[k] = tmp32[k]
    for k in range(n_all):
        tmp32[newid[k]] = newid[t.last_succ[k]]
    for k in range(n_all):
        t.last_succ[k] = tmp32[k]
    for k in range(n_all):
        tmp32[newid[k]] = t.pred[k]
    for k in range(n_all):
        t.pred[k] = tmp32[k]
    for k in range(n_all):
        tmp32[newid[k]] = t.succ_num[k]
    for k in range(n_all):
        t.succ_num[k] = tmp32[k]
    for k in range(n_all):
        dir8[newid[k]] = t.pred_dir[k]
    for k in range(n_all):
        t.pred_dir[k] = dir8[k]
    for e in range(t.m_all):
        t.src[e] = newid[t.src[e]]
        t.dst[e] = newid[t.dst[e]]
    for k in range(n_orig):
        where[k] = newid[where[k]]


cdef int check_tree(Tree* t, int32_t* seen) noexcept nogil:
    """0 if parent/thread/sizes/potentials are consistent and the tree strongly feasible."""
    cdef intp_t i, cnt
    cdef int32_t v, p, e, last
    for i in range(t.n_all):
        seen[i] = 0
    v = t.root
    cnt = 0
    # Preorder: every node once, each parent before its children.
    while True:
        if seen[v]:
            return 1
        seen[v] = 1
        cnt += 1
        if v != t.root and not seen[t.parent[v]]:
            return 2
        v = t.thread[v]
        if t.rev_thread[v] < 0 or t.thread[t.rev_thread[v]] != v:
            return 3
        if v == t.root:
            break
    if cnt != t.n_all:
        return 4
    for i in range(t.n_all):
        seen[i] = 0
    for i in range(t.n_all):
        v = <int32_t>i
        if v == t.root:
            continue
        e = t.pred[v]
        p = t.parent[v]
        if t.state[e] != ST_TREE:
            return 5
        if t.pred_dir[v] == DIR_UP and not (t.src[e] == v and t.dst[e] == p):
            return 6
        if t.pred_dir[v] == DIR_DOWN and not (t.src[e] == p and t.dst[e] == v):
            return 6
        if t.cst[e] + t.pi[t.src[e]] - t.pi[t.dst[e]] != 0:
            return 7
        if residual_to_parent(t, v) <= 0:
            return 8    # not strongly feasible
        if t.flow[e] < 0 or t.flow[e] > t.cap[e]:
            return 9
    # Subtree sizes and last successors, from the preorder.
    for i in range(t.n_all):
        v = <int32_t>i
        last = v
        cnt = 1
        while cnt < t.succ_num[v]:
            last = t.thread[last]
            cnt += 1
        if t.last_succ[v] != last:
            return 10
        p = t.thread[last]
        if p != t.root and p != v:
            # The node after the subtree must not descend from v.
            while p >= 0 and p != v:
                p = t.parent[p]
            if p == v:
                return 11
    return 0


cdef class Solution:
    """What :func:`solve` found.

    Attributes
    ----------
    flow : int64 array (m,)
        Flow per input arc (a self-loop carries its capacity iff its cost is negative).
    potential : int64 array (n,)
        Tree potentials: reduced cost ``cost + potential[tail] - potential[head]`` >= 0
        where flow < cap and <= 0 where flow > 0 (status NS_OK).
    status : int
        ``CONSTANTS``: NS_OK; NS_INFEASIBLE when flow is left on an artificial arc (the
        supplies cannot all be routed; the flow is then not a valid answer);
        NS_PIVOT_LIMIT; NS_BAD_TREE (``check`` found a broken invariant, a bug).
    cost : int
        ``sum(cost * flow)``.
    stats : dict
        Counters: pivots, big-M pivots (entering reduced cost beyond M/2), degenerate
        pivots, arcs priced, cycle steps, potentials moved, ancestor steps, renumberings.
    """
    cdef readonly object flow, potential, stats
    cdef readonly int status
    cdef readonly int64_t cost

    def __repr__(self):
        return f"Solution(status={self.status}, cost={self.cost}, pivots={self.stats['pivots']})"


def solve(intp_t n, const int64_t[::1] tail, const int64_t[::1] head,
          const int64_t[::1] cap, const int64_t[::1] cost, const int64_t[::1] supply,
          int64_t max_pivots=-1, bint check=False, intp_t block=0, double block_factor=1.0,
          int start=START_CRASH, intp_t list_head=16, double renumber_factor=2.0):
    """Network simplex on validated arrays (see ``spare_core.graph.flow`` for the public API).

    Parameters (IN unless said)
    ---------------------------
    n : nodes; tail, head, cap, cost : the m arcs; supply : [n], sums to zero.
    max_pivots : stop with status NS_PIVOT_LIMIT after this many pivots (-1: 64 (n + m)
        + 10**6).
    check : verify the tree invariants and strong feasibility after the start and after
        every pivot (O(n) each; tests only); status NS_BAD_TREE if one fails.
    block : pricing block size (0: max(block_factor * sqrt(m), 10); LEMON's default
        factor 1 measured within 10 % of 2 and 4 on the 1e5 and 1e6 generic instances).
    start : START_STAR the star of artificial arcs; START_SHORTEST_PATHS also hang every
        zero-supply node on a shortest path to a demand (``shortest_path_start``), which
        saves most of the first degenerate pivots; START_CRASH (default) hangs the supply
        nodes too and routes their supply down that tree where no arc would saturate
        (docs/flow.md has the measured effect).
    list_head : arcs kept on the pricing candidate list (0: plain block search).
    renumber_factor : renumber the nodes in preorder after shifts touching this many
        times n + m nodes (0: never). The defaults (16, 2.0) were measured on the generic
        family at 1e3 to 1e6 arcs (docs/flow.md).

    Returns a :class:`Solution`.
    """
    cdef intp_t m = tail.shape[0]
    cdef intp_t n_all = n + 1, m_all = m + n
    cdef intp_t i, pivots = 0, next_arc = 0, e, scanned = 0, big_pivots = 0
    cdef void* cand_mem = NULL
    cdef int32_t* cand = NULL
    cdef int64_t* cval = NULL
    cdef intp_t ncand = 0
    cdef intp_t relabel_gap = 0, moved_at_relabel = 0, relabels = 0
    cdef char* rl_mem = NULL
    cdef int32_t* newid = NULL
    cdef int32_t* where = NULL
    cdef int32_t* tmp32 = NULL
    cdef int64_t* tmp64 = NULL
    cdef intp_t counters[4]
    cdef int status = NS_OK
    cdef int64_t big_m, c_max = 0, s, total = 0
    cdef int32_t root = <int32_t>n
    cdef Tree t
    cdef char* mem
    # One block for all scratch (a numpy array per buffer cost more than the whole
    # solve on 1e3-arc instances): int64 arc and node arrays first, then int32, then int8.
    cdef size_t bytes64 = sizeof(int64_t) * (3 * m_all + n_all)
    cdef size_t bytes32 = sizeof(int32_t) * (2 * m_all + 10 * n_all + m + n_all + 1)
    mem = <char*>malloc(bytes64 + bytes32 + m_all + n_all + 8)
    if mem == NULL:
        raise MemoryError("network simplex scratch for %d nodes and %d arcs could not be allocated" % (n, m))
    t.cap = <int64_t*>mem
    t.cst = t.cap + m_all
    t.flow = <int64_t*>(t.cst + m_all)
    t.pi = t.flow + m_all
    t.src = <int32_t*>(mem + bytes64)
    t.dst = t.src + m_all
    t.parent = <int32_t*>(t.dst + m_all)
    t.pred = t.parent + n_all
    t.thread = t.pred + n_all
    t.rev_thread = t.thread + n_all
    t.succ_num = t.rev_thread + n_all
    t.last_succ = t.succ_num + n_all
    t.path = t.last_succ + n_all
    t.before = t.path + n_all
    t.after = t.before + n_all
    t.last = t.after + n_all
    cdef int32_t* in_first = t.last + n_all
    cdef int32_t* in_arc = in_first + n_all + 1
    t.state = <signed char*>(mem + bytes64 + bytes32)
    t.pred_dir = t.state + m_all
    t.n_all = n_all
    t.m_all = m_all
    t.m_real = m
    t.root = root
    flow_out = np.empty(m, dtype=np.int64)
    pi_out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] flow_v = flow_out
    cdef int64_t[::1] pi_v = pi_out
    if block <= 0:
        block = max(<intp_t>(block_factor * sqrt(<double>m)), 10)
    if list_head > m:
        list_head = m
    if list_head > 0:
        cand_mem = malloc((sizeof(int32_t) + sizeof(int64_t)) * (list_head + block + 2))
        if cand_mem == NULL:
            free(mem)
            raise MemoryError("network simplex candidate list could not be allocated")
        cval = <int64_t*>cand_mem
        cand = <int32_t*>(cval + list_head + block + 2)
    if renumber_factor > 0:
        rl_mem = <char*>malloc((sizeof(int64_t) + 3 * sizeof(int32_t)) * (n_all + 1))
        if rl_mem == NULL:
            free(mem)
            free(cand_mem)
            raise MemoryError("network simplex renumbering scratch could not be allocated")
        tmp64 = <int64_t*>rl_mem
        newid = <int32_t*>(tmp64 + n_all + 1)
        where = newid + n_all + 1
        tmp32 = where + n_all + 1
        relabel_gap = max(<intp_t>(renumber_factor * (n_all + m_all)), 1)
        for i in range(n):
            where[i] = <int32_t>i
    if max_pivots < 0:
        max_pivots = 64 * (n + m) + 1000000

    counters[0] = counters[1] = counters[2] = counters[3] = 0
    with nogil:
        for i in range(m):
            t.src[i] = <int32_t>tail[i]
            t.dst[i] = <int32_t>head[i]
            t.cap[i] = cap[i]
            t.cst[i] = cost[i]
            t.flow[i] = 0
            if tail[i] == head[i]:
                # A self-loop never enters the basis: saturated iff its cost is negative.
                t.state[i] = 0
                if cost[i] < 0:
                    t.flow[i] = cap[i]
            else:
                t.state[i] = ST_LOWER
                if cost[i] > c_max:
                    c_max = cost[i]
                elif -cost[i] > c_max:
                    c_max = -cost[i]
        big_m = (n + 1) * c_max + 1
        # Initial strongly feasible tree: a star of artificial arcs around the root.
        t.pi[root] = 0
        t.parent[root] = -1
        t.pred[root] = -1
        t.pred_dir[root] = 0
        t.succ_num[root] = <int32_t>n_all
        t.last_succ[root] = <int32_t>(n - 1) if n else root
        t.thread[root] = 0 if n else root
        t.rev_thread[root] = <int32_t>(n - 1) if n else root
        for i in range(n):
            e = m + i
            s = supply[i]
            t.cap[e] = INF_CAP
            t.cst[e] = big_m
            t.state[e] = ST_TREE
            if s >= 0:
                t.src[e] = <int32_t>i
                t.dst[e] = root
                t.flow[e] = s
                t.pred_dir[i] = DIR_UP
                t.pi[i] = -big_m
            else:
                t.src[e] = root
                t.dst[e] = <int32_t>i
                t.flow[e] = -s
                t.pred_dir[i] = DIR_DOWN
                t.pi[i] = big_m
            t.parent[i] = root
            t.pred[i] = <int32_t>e
            t.thread[i] = <int32_t>(i + 1) if i + 1 < n else root
            t.rev_thread[i] = <int32_t>(i - 1) if i > 0 else root
            t.succ_num[i] = 1
            t.last_succ[i] = <int32_t>i
        if (start == START_SHORTEST_PATHS or start == START_CRASH) and n > 0:
            shortest_path_start(&t, &supply[0], n, big_m, in_first, in_arc, start == START_CRASH)
        if check and check_tree(&t, t.path) != 0:
            status = NS_BAD_TREE

        while status == NS_OK:
            if list_head > 0:
                e = find_entering_list(&t, &next_arc, block, &scanned, cand, cval, &ncand, list_head)
            else:
                e = find_entering(&t, &next_arc, block, &scanned)
            if e < 0:
                break
            if pivots >= max_pivots:
                status = NS_PIVOT_LIMIT
                break
            if t.state[e] * (t.cst[e] + t.pi[t.src[e]] - t.pi[t.dst[e]]) < -(big_m >> 1):
                big_pivots += 1
            pivot(&t, <int32_t>e, counters)
            pivots += 1
            if relabel_gap > 0 and counters[2] - moved_at_relabel >= relabel_gap:
                renumber_preorder(&t, newid, where, n, tmp64, tmp32)
                moved_at_relabel = counters[2]
                relabels += 1
            if check and check_tree(&t, t.path) != 0:
                status = NS_BAD_TREE
                break
        if status == NS_OK:
            for i in range(m, m_all):
                if t.flow[i] != 0:
                    status = NS_INFEASIBLE
                    break
        if check and status == NS_OK and check_tree(&t, t.path) != 0:
            status = NS_BAD_TREE
        for i in range(m):
            flow_v[i] = t.flow[i]
            # Cannot overflow: the wrapper bounds sum |cost| * flow by 2**62.
            total += cost[i] * t.flow[i]
        for i in range(n):
            pi_v[i] = t.pi[where[i] if relabel_gap > 0 else i] - t.pi[root]
    free(mem)
    free(cand_mem)
    free(rl_mem)
    stats = {"pivots": pivots, "big_m": big_pivots, "degenerate": counters[0], "scanned": scanned, "cycle": counters[1],
             "moved": counters[2], "climbed": counters[3], "renumbered": relabels}
    cdef Solution res = Solution.__new__(Solution)
    res.flow, res.potential, res.status, res.cost, res.stats = flow_out, pi_out, status, total, stats
    return res
