# cython: language_level=3
"""Hopcroft-Karp maximum (b-)matching kernel with incremental repair.

No policy and no validation here: :mod:`spare_core.graph.matching` checks and coerces every
argument (index ranges, dtypes, capacities) before anything reaches this module. The
buffer layout and invariants are documented in ``_hk.pxd``.

Algorithm (Hopcroft & Karp 1973, generalised to right capacities without expanding the
graph): each phase runs a BFS from the PENDING free left vertices over alternating paths
(left -> right along a non-matching edge, saturated right -> each of its partners), stopping
at the first layer that holds a right vertex with spare capacity, then a DFS with
current-arc pointers finds a maximal set of vertex-disjoint shortest augmenting paths. A
phase costs O(|E| + |V|) in the worst case, but only the work of its search because every
scratch entry is validated by an epoch level instead of being reset. If a BFS exhausts its
reachable set without meeting spare capacity, none of its sources has an augmenting path
and none will while capacities only shrink (Hopcroft-Karp's "no augmenting path from u
w.r.t. M implies none w.r.t. M xor P"): they are parked as DEAD and not searched again
until capacity grows (:c:func:`hk_revive`).

Memory: 12 bytes per vertex of records, 5 more per left vertex (status, free list; the
searches' queues and stacks live in the free list's unused middle) and, when pruning, the
transpose (4 bytes per edge and per right vertex); b-matching adds partner lists. The
graph is the caller's (int32 or int64 indices: every function reading it is fused over
both), so a one-shot solve adds no copy of it.
"""
from libc.stdint cimport INT32_MAX
from _types cimport intp_t, int32_t, uint32_t, int64_t, uint8_t, uint64_t, idx_t
from _hk cimport (
    HKState, LeftV, RightV, LinkV, MATCHED, PENDING, DEAD, START_GREEDY, START_DEGREE_ORDER,
    START_KARP_SIPSER, START_MIN_COMPETITION,
)
from libc.string cimport memmove
from _prefetch cimport prefetch_read, prefetch_write
from _csc cimport build_csc
from _csr_check cimport ptr_t, csr_check_copy, CHECK_OK, csr_header_error, csr_check_message

# the raw allocator: callable without the GIL, and traced by tracemalloc, so the
# benchmark's peak-memory figure includes the kernel's scratch
from cpython.mem cimport PyMem_RawMalloc, PyMem_RawCalloc, PyMem_RawFree


cdef enum:
    AHEAD = 8       # iterations: enough to cover a memory latency, little enough to stay cached

import numpy as np

# The enums of _hk.pxd for Python callers (spare_core.graph.matching reads them from here).
CONSTANTS = {
    "MATCHED": MATCHED, "PENDING": PENDING, "DEAD": DEAD,
    "START_GREEDY": START_GREEDY, "START_DEGREE_ORDER": START_DEGREE_ORDER,
    "START_KARP_SIPSER": START_KARP_SIPSER, "START_MIN_COMPETITION": START_MIN_COMPETITION,
}
cimport numpy as cnp

cnp.import_array()

# numpy twins of LeftV / RightV (_hk.pxd)
LEFT_DTYPE = np.dtype([("match", np.int32), ("it", np.int32), ("lev", np.int32)], align=True)
RIGHT_DTYPE = np.dtype([("spare", np.int32), ("lev", np.int32), ("aux", np.int32)], align=True)
LINK_DTYPE = np.dtype([("nxt", np.int32), ("prv", np.int32)], align=True)
assert (LEFT_DTYPE.itemsize == sizeof(LeftV) and RIGHT_DTYPE.itemsize == sizeof(RightV)
        and LINK_DTYPE.itemsize == sizeof(LinkV))


cdef inline int32_t _new_base(HKState* s) noexcept nogil:
    """The root level of a new phase: above every level written so far.

    A phase writes levels base .. base + (deepest layer) <= base + n_left, so the levels
    are cleared (O(V), once in about 2**31 / (layers per phase) phases) only when the next
    phase could overflow int32. The prune's partition survives the clearing (live -> 1,
    the rest -> 0, prune level 1).
    """
    cdef intp_t i
    cdef bint keep = s.pb > 0
    if <int64_t>s.top + s.n_left + 4 >= INT32_MAX:
        for i in range(s.n_left):
            s.L[i].lev = 1 if keep and s.L[i].lev >= s.pb else 0
        for i in range(s.n_right):
            s.R[i].lev = 1 if keep and s.R[i].lev >= s.pb else 0
        s.pb = 1 if keep else 0
        s.top = s.pb
    s.base = s.top + 1
    s.top = s.base
    return s.base


cdef inline void hk_link(HKState* s, int32_t v, int32_t j) noexcept nogil:
    """Match free left ``v`` to right ``j`` (caller checked spare capacity)."""
    cdef int32_t h
    s.L[v].match = j
    s.R[j].spare -= 1
    if s.R[j].aux >= -1:        # unit mode: v is its one partner
        s.R[j].aux = v
    else:                       # several-slot mode: v joins the front of j's partner list
        h = -3 - s.R[j].aux
        s.P[v].nxt = h
        s.P[v].prv = -1
        if h != -1:
            s.P[h].prv = v
        s.R[j].aux = -3 - v


cdef inline void hk_unlink(HKState* s, int32_t v) noexcept nogil:
    """Unmatch left ``v`` from its right vertex (status left to the caller)."""
    cdef int32_t j = s.L[v].match, p, n
    s.L[v].match = -1
    s.R[j].spare += 1
    if s.R[j].aux >= 0:         # unit mode: v was its one partner
        s.R[j].aux = -1
    elif s.R[j].aux <= -2:      # several-slot mode: out of the list in O(1)
        p = s.P[v].prv
        n = s.P[v].nxt
        if p != -1:
            s.P[p].nxt = n
        else:
            s.R[j].aux = -3 - n
        if n != -1:
            s.P[n].prv = p


cdef inline void hk_match_free(HKState* s, int32_t u, int32_t j) noexcept nogil:
    """A start's pair: free left ``u`` (still in the pending list) takes right ``j`` (spare
    capacity checked by the caller)."""
    hk_link(s, u, j)
    s.status[u] = MATCHED
    s.size += 1


cdef void hk_free_left(HKState* s, int32_t v) noexcept nogil:
    """Unmatch left ``v`` and queue it for the next augment (its right lost it)."""
    hk_unlink(s, v)
    s.status[v] = PENDING
    s.free_l[s.n_pending] = v      # v was matched: n_pending + n_dead < n_left, no overlap
    s.n_pending += 1
    s.size -= 1


cdef void hk_shed(HKState* s, int32_t j, int64_t n) noexcept nogil:
    """Unmatch ``n`` partners of right ``j`` (it has at least n) and queue them, most
    recently matched first. O(n)."""
    while n > 0:
        if s.R[j].aux >= 0:
            hk_free_left(s, s.R[j].aux)
        elif s.R[j].aux <= -3:                  # several-slot mode, list not empty
            hk_free_left(s, -3 - s.R[j].aux)
        else:
            return
        n -= 1


cdef void hk_greedy(HKState* s, const idx_t* ix) noexcept nogil:
    """Match each PENDING left vertex to its first neighbour with spare capacity (O(|E|)).

    The scan tests a one-byte "full" flag per right vertex instead of the records: the
    flags of 600k right vertices fit in L2, the records do not, and the test of each
    neighbour was a cache miss (perf: 68 % of greedy time on that compare). Skipped if the
    n_right bytes cannot be allocated (the start is only an optimisation).
    """
    cdef intp_t k, kept = 0, j0
    cdef int64_t e, end
    cdef int32_t u, j
    cdef const int64_t* indptr = s.indptr
    cdef const uint8_t* off = s.edge_off
    cdef uint8_t* full = <uint8_t*>PyMem_RawMalloc(s.n_right + 1)
    if full == NULL:
        return
    for j0 in range(s.n_right):
        full[j0] = s.R[j0].spare <= 0
    cdef intp_t n = s.n_pending
    cdef int32_t u2
    for k in range(n):
        if k + 2 * AHEAD < n:
            u2 = s.free_l[k + 2 * AHEAD]
            prefetch_read(&indptr[u2])
            prefetch_write(&s.L[u2])
        if k + AHEAD < n:
            u2 = s.free_l[k + AHEAD]     # its first neighbour is the usual choice
            if indptr[u2] < indptr[u2 + 1]:
                prefetch_write(&s.R[ix[indptr[u2]]])
        u = s.free_l[k]
        e = indptr[u]
        end = indptr[u + 1]
        while e < end:
            if not full[ix[e]] and (off == NULL or not off[e]):
                break
            e += 1
        s.work += e - indptr[u]
        if e < end:
            j = <int32_t>ix[e]
            hk_match_free(s, u, j)
            full[j] = s.R[j].spare <= 0
        else:
            s.free_l[kept] = u
            kept += 1
    s.n_pending = kept
    PyMem_RawFree(full)


cdef void hk_greedy_mindeg(HKState* s, const idx_t* ix, const int32_t* cptr) noexcept nogil:
    """Greedy start that gives each PENDING left vertex its free neighbour with the fewest
    competitors: free left vertices not yet processed that are also joined to it (O(|E|)).

    A right vertex many free left vertices could take is left for them; one only this
    vertex can take is taken now. The counts are kept exact: a processed left vertex stops
    competing for all its neighbours. ``cptr``: the transpose's offsets when every left
    vertex is PENDING and no edge is disabled (the counts are then the column degrees),
    else NULL (one counting pass). The counters live in the right records' level field,
    next to the spare count the choice also reads (reset to 0, "not reached", afterwards).
    """
    cdef intp_t k, kept = 0, j0
    cdef int64_t e, b, end
    cdef int32_t u, j, best, bd, d
    cdef const int64_t* indptr = s.indptr
    cdef const uint8_t* off = s.edge_off
    # R[j].lev: competitors of right vertex j; INT32_MAX once it is full (never chosen)
    cdef RightV* R = s.R
    if cptr != NULL:
        for j0 in range(s.n_right):
            R[j0].lev = <int32_t>(cptr[j0 + 1] - cptr[j0])
    else:
        for j0 in range(s.n_right):
            R[j0].lev = 0
        for k in range(s.n_pending):
            u = s.free_l[k]
            s.work += indptr[u + 1] - indptr[u]
            for e in range(indptr[u], indptr[u + 1]):
                if off == NULL or not off[e]:
                    R[ix[e]].lev += 1
    for j0 in range(s.n_right):
        if R[j0].spare <= 0:
            R[j0].lev = INT32_MAX
    cdef intp_t n = s.n_pending
    cdef int32_t u2
    for k in range(n):
        if k + 2 * AHEAD < n:
            u2 = s.free_l[k + 2 * AHEAD]
            prefetch_read(&indptr[u2])
            prefetch_write(&s.L[u2])
        if k + AHEAD < n:
            u2 = s.free_l[k + AHEAD]
            for e in range(indptr[u2], indptr[u2 + 1]):
                prefetch_write(&R[ix[e]])
        u = s.free_l[k]
        b = indptr[u]
        end = indptr[u + 1]
        s.work += end - b
        best = -1
        bd = INT32_MAX
        for e in range(b, end):
            j = <int32_t>ix[e]
            d = R[j].lev
            if d < bd and (off == NULL or not off[e]):
                bd = d
                best = j
        for e in range(b, end):
            j = <int32_t>ix[e]
            if R[j].lev != INT32_MAX and (off == NULL or not off[e]):
                R[j].lev -= 1
        if best >= 0:
            hk_match_free(s, u, best)
            if R[best].spare <= 0:
                R[best].lev = INT32_MAX
        else:
            s.free_l[kept] = u
            kept += 1
    s.n_pending = kept
    for j0 in range(s.n_right):
        R[j0].lev = 0


cdef void hk_degree_order(HKState* s) noexcept nogil:
    """Sort the PENDING list by increasing degree (counting sort, O(n_left + max degree)).

    Degree-1 vertices first: their only choice is safe, so the greedy start makes fewer
    choices that Hopcroft-Karp must undo. Isolated vertices go straight to DEAD (no
    augmenting path can ever start there), so no later pass over the pending list sees
    them ((c) at 1e6 edges: 19 % of the left side). Skipped if its scratch cannot be
    allocated.
    """
    cdef intp_t k, n = s.n_pending
    cdef int64_t d, maxd = 0, acc = 0, c
    cdef int32_t u
    for k in range(n):
        u = s.free_l[k]
        d = s.indptr[u + 1] - s.indptr[u]
        if d > maxd:
            maxd = d
    cdef int64_t* cnt = <int64_t*>PyMem_RawCalloc(maxd + 2, sizeof(int64_t))
    cdef int32_t* tmp = <int32_t*>PyMem_RawMalloc((n + 1) * sizeof(int32_t))
    if cnt == NULL or tmp == NULL:
        PyMem_RawFree(cnt)
        PyMem_RawFree(tmp)
        return
    for k in range(n):
        u = s.free_l[k]
        cnt[s.indptr[u + 1] - s.indptr[u]] += 1
    cdef int64_t n_isolated = cnt[0]
    for d in range(1, maxd + 2):        # bucket order 1, 2, ..., maxd, then 0
        c = cnt[d % (maxd + 1)]
        cnt[d % (maxd + 1)] = acc
        acc += c
    for k in range(n):
        u = s.free_l[k]
        d = s.indptr[u + 1] - s.indptr[u]
        tmp[cnt[d]] = u
        cnt[d] += 1
    memmove(s.free_l, tmp, n * sizeof(int32_t))
    PyMem_RawFree(cnt)
    PyMem_RawFree(tmp)
    _park_pending(s, n - n_isolated)


cdef bint _slots_at_most(HKState* s, int64_t bound) noexcept nogil:
    """Whether the free right capacity (sum of spare) is at most ``bound``.

    Stops as soon as it exceeds the bound: with slack on the right that is after a few
    records, not a pass over all of them.
    """
    cdef int64_t tot = 0
    cdef intp_t j
    for j in range(s.n_right):
        tot += s.R[j].spare
        if tot > bound:
            return False
    return True


cdef void hk_revive(HKState* s) noexcept nogil:
    """Capacity grew somewhere: every DEAD left vertex may have a path again."""
    cdef intp_t k
    cdef int32_t* dead = s.free_l + s.n_left + 1 - s.n_dead
    for k in range(s.n_dead):
        s.status[dead[k]] = PENDING
    # the two blocks may overlap when almost every left vertex is free
    memmove(s.free_l + s.n_pending, dead, s.n_dead * sizeof(int32_t))
    s.n_pending += s.n_dead
    s.n_dead = 0


cdef void _park_pending(HKState* s, intp_t first) noexcept nogil:
    """Move free_l[first:n_pending] (PENDING, proven to have no augmenting path) to DEAD."""
    cdef intp_t k, m = s.n_pending - first
    for k in range(first, s.n_pending):
        s.status[s.free_l[k]] = DEAD
    # dead block grows downwards from n_left + 1; memmove: the blocks may overlap
    memmove(s.free_l + s.n_left + 1 - s.n_dead - m, s.free_l + first, m * sizeof(int32_t))
    s.n_dead += m
    s.n_pending = first


cdef int32_t _bfs(HKState* s, const idx_t* ix) noexcept nogil:
    """Layer the alternating graph from the PENDING vertices; return the free layer or INF."""
    cdef intp_t qh = 0, qt = 0, k
    cdef int32_t u, v, j, w, d, a, limit = INT32_MAX
    cdef int64_t e, end, work = 0
    cdef int32_t mv
    # locals, not s->field: the compiler cannot prove the stores below leave *s unchanged
    cdef LeftV* L = s.L
    cdef RightV* R = s.R
    cdef const int64_t* indptr = s.indptr
    cdef const LinkV* P = s.P
    # the queue is the free list: the roots are its pending block already, and the matched
    # vertices the search reaches (at most the matched count) fill the gap before the dead block
    cdef int32_t* queue = s.free_l
    cdef const uint8_t* off = s.edge_off
    cdef int32_t base = _new_base(s), pb = s.pb
    # a vertex can be entered iff pb <= level < base: not reached this phase, and not below
    # the last prune's level (proven unable to reach spare capacity); one unsigned compare
    cdef uint32_t span = <uint32_t>(base - pb)
    for k in range(s.n_pending):
        u = queue[k]
        L[u].lev = base
        L[u].it = 0
    qt = s.n_pending
    cdef int32_t vv
    cdef int64_t ee
    while qh < qt:
        # the queue is known a few entries ahead: fetch their rows, then their neighbours
        if qh + 2 * AHEAD < qt:
            prefetch_read(&indptr[queue[qh + 2 * AHEAD]])
        if qh + AHEAD < qt:
            vv = queue[qh + AHEAD]
            for ee in range(indptr[vv], indptr[vv + 1]):
                prefetch_write(&R[ix[ee]])
        v = queue[qh]
        qh += 1
        d = L[v].lev - base
        if d > limit:
            break
        mv = L[v].match
        e = indptr[v]
        end = indptr[v + 1]
        work += end - e
        while e < end:
            j = <int32_t>ix[e]
            e += 1
            if <uint32_t>(R[j].lev - pb) >= span or mv == j:
                continue
            if off != NULL and off[e - 1]:
                continue
            R[j].lev = base + d
            if R[j].spare > 0:
                limit = d
            elif d < limit:
                # its partners: the one in the record (unit mode), else its list
                a = R[j].aux
                w = a
                if a <= -2:
                    w = -3 - a
                    s.cur[j] = w                 # the DFS cursor starts at the list's head
                while w != -1:
                    work += 1
                    if <uint32_t>(L[w].lev - pb) < span:
                        L[w].lev = base + d + 1
                        L[w].it = 0
                        queue[qt] = w
                        qt += 1
                    w = P[w].nxt if a <= -2 else -1
    if qt > 0:
        s.top = L[queue[qt - 1]].lev      # the deepest layer is the last one queued
    s.work += work
    return limit


cdef bint _dfs(HKState* s, const idx_t* ix, int32_t root, int32_t limit) noexcept nogil:
    """Find one shortest augmenting path from ``root`` in the layered graph and flip it.

    The stack of left vertices lives in the free list's gap after the pending block (the
    root and at most every vertex matched when the phase began: it fits); the right vertex
    taken from stack entry i is the one its current arc points at (L[v].it is left on that
    edge when descending).
    """
    cdef intp_t top = 0, i
    cdef int32_t v, j, w, d, a, base = s.base
    cdef int64_t e, e0, end, row
    cdef bint descended
    cdef LeftV* L = s.L
    cdef RightV* R = s.R
    cdef const LinkV* P = s.P
    cdef int32_t* stack = s.free_l + s.n_pending
    stack[0] = root
    while top >= 0:
        v = stack[top]
        d = <int32_t>top
        row = s.indptr[v]
        e = row + L[v].it
        e0 = e
        end = s.indptr[v + 1]
        descended = False
        while e < end:
            j = <int32_t>ix[e]
            if R[j].lev != base + d or (s.edge_off != NULL and s.edge_off[e]):
                e += 1
                continue
            if R[j].spare > 0:
                # a free right vertex lies on layer `limit` only; flip the path on the stack
                L[v].it = <int32_t>(e + 1 - row)
                s.work += e + 1 - e0
                i = top
                while i >= 0:
                    w = stack[i]
                    if i < top:
                        j = <int32_t>ix[s.indptr[w] + L[w].it]
                    if L[w].match != -1:
                        hk_unlink(s, w)
                    hk_link(s, w, j)
                    L[w].lev = base - 1      # vertex-disjoint paths within a phase
                    i -= 1
                s.status[root] = MATCHED
                s.size += 1
                return True
            if d >= limit:
                e += 1
                continue
            # the next partner of j on layer d + 1 not tried yet this phase
            w = -1
            a = R[j].aux
            if a >= 0:
                s.work += 1
                if L[a].lev == base + d + 1:
                    w = a            # tried once: if it dead-ends its level drops below base
            elif a <= -2:
                w = s.cur[j]                  # the next partner to try
                while w != -1 and L[w].lev != base + d + 1:
                    s.work += 1
                    w = P[w].nxt
                if w != -1:
                    s.cur[j] = P[w].nxt       # w is tried at most once per phase
            if w == -1:
                R[j].lev = base - 1        # every partner is a dead end: so is j, for this phase
                e += 1
                continue
            L[v].it = <int32_t>(e - row)  # come back to j: it may have other live partners
            s.work += e + 1 - e0
            top += 1
            stack[top] = w
            descended = True
            break
        if not descended:
            s.work += end - e0
            L[v].it = <int32_t>(end - row)
            L[v].lev = base - 1
            top -= 1
    return False


cdef int64_t hk_augment(HKState* s, const idx_t* ix) noexcept nogil:
    """Run Hopcroft-Karp phases from the PENDING vertices until none can be matched.

    On return ``n_pending == 0``: every free left vertex is DEAD (no augmenting path exists,
    so the matching is maximum). Returns the number of augmentations.

    Pruning (hk_prune) costs at most about one pass over the graph, so it is bought like a
    ski rental: only once the phases since the last prune have scanned as much as a prune
    costs, i.e. |E| + |V| for the first one in a call (transpose and all), then the measured
    cost of the previous prune (its reverse search covers only what can still reach spare
    capacity, which shrinks as the matching grows). Its total cost is then at most the
    search work it follows, and it can only save work: the worst case stays Hopcroft-Karp's
    O(sqrt(V) E) and small repairs never pay for it. Its verdict is dropped on return
    (capacities may grow before the next call): one store, the prune level goes back to 0.
    """
    cdef int64_t gained = 0, since = s.work
    cdef int64_t budget = s.indptr[s.n_left] + s.n_left + s.n_right
    cdef int32_t limit, u
    cdef intp_t k, kept, n
    cdef int64_t e
    cdef bint searched = False
    if s.pb > 0:
        budget = s.prune_cost          # a prune just ran (solve's cold start)
    if s.prune_budget >= 0:
        budget = s.prune_budget          # tests force pruning with 0
    while s.n_pending > 0:
        if s.can_prune and searched and s.work - since >= budget and hk_build_csc(s, ix) == 0:
            hk_prune(s, ix)
            if s.prune_budget < 0:
                budget = s.prune_cost
            since = s.work
            searched = False
            continue
        searched = True
        limit = _bfs(s, ix)
        s.phases += 1
        if limit == INT32_MAX:
            _park_pending(s, 0)
            break
        n = s.n_pending
        for k in range(n):
            if k + 2 * AHEAD < n:
                u = s.free_l[k + 2 * AHEAD]
                prefetch_read(&s.indptr[u])
                prefetch_write(&s.L[u])
            if k + AHEAD < n:
                u = s.free_l[k + AHEAD]
                for e in range(s.indptr[u], s.indptr[u + 1]):
                    prefetch_read(&s.R[ix[e]])
            u = s.free_l[k]
            if s.status[u] == PENDING and s.L[u].lev == s.base:
                if _dfs(s, ix, u, limit):
                    gained += 1
        kept = 0
        for k in range(s.n_pending):
            u = s.free_l[k]
            if s.status[u] == PENDING:
                s.free_l[kept] = u
                kept += 1
        s.n_pending = kept
    s.pb = 0        # the prune's verdict holds while capacities only shrink: drop it (O(1))
    return gained


cdef inline void _ks_match(HKState* s, const idx_t* ix, const int32_t* cptr, const int32_t* cidx,
                           int64_t* deg_l, int64_t* deg_r, uint8_t* inq_r, int32_t* lq, intp_t* nlq,
                           int32_t* rq, intp_t* nrq, int32_t u, int32_t j) noexcept nogil:
    """Match u -> j and keep the residual degrees of the Karp-Sipser reduction exact."""
    cdef int64_t e
    cdef int32_t j2, w
    hk_match_free(s, u, j)
    for e in range(s.indptr[u], s.indptr[u + 1]):
        j2 = <int32_t>ix[e]
        deg_r[j2] -= 1
        if 0 < deg_r[j2] <= s.R[j2].spare and not inq_r[j2]:
            inq_r[j2] = 1
            rq[nrq[0]] = j2
            nrq[0] += 1
    s.work += s.indptr[u + 1] - s.indptr[u]
    if s.R[j].spare == 0:
        s.work += cptr[j + 1] - cptr[j]
        for e in range(cptr[j], cptr[j + 1]):
            w = cidx[e]
            if s.L[w].match < 0:
                deg_l[w] -= 1
                if deg_l[w] == 1:
                    lq[nlq[0]] = w
                    nlq[0] += 1


cdef void hk_karp_sipser(HKState* s, const idx_t* ix, int64_t* deg_l, int64_t* deg_r, uint8_t* inq_r,
                         int32_t* lq, int32_t* rq) noexcept nogil:
    """Initial matching by the Karp-Sipser degree rules, generalised to right capacities.

    Safe rules (some maximum b-matching contains the pairs they make): a free left vertex
    with one residual neighbour takes it; a right vertex whose residual degree is at most its
    spare capacity takes all its free neighbours. When neither applies, the next free left
    vertex takes its first neighbour with spare capacity (a plain greedy step) and the rules
    resume. On sparse random graphs (mean degree below e) the safe rules alone leave almost
    nothing for Hopcroft-Karp. O(|E|): a row is scanned when its vertex is matched, a column
    when its right vertex fills up. Needs the transpose (s.cptr, s.cidx); scratch
    deg_l[n_left], deg_r[n_right], inq_r[n_right] (zeroed), lq[n_left], rq[|E| + n_right].
    """
    cdef intp_t nlq = 0, nrq = 0, next_u = 0, k
    cdef int64_t e
    cdef int32_t u, j, w
    cdef const int32_t* cptr = s.cptr
    cdef const int32_t* cidx = s.cidx
    for j in range(s.n_right):
        deg_r[j] = 0
    for u in range(s.n_left):
        deg_l[u] = 0
        if s.L[u].match >= 0:
            continue
        for e in range(s.indptr[u], s.indptr[u + 1]):
            j = <int32_t>ix[e]
            deg_r[j] += 1
            if s.R[j].spare > 0:
                deg_l[u] += 1
        if deg_l[u] == 1:
            lq[nlq] = u
            nlq += 1
    s.work += s.indptr[s.n_left]
    for j in range(s.n_right):
        if 0 < deg_r[j] <= s.R[j].spare:
            inq_r[j] = 1
            rq[nrq] = j
            nrq += 1
    while True:
        if nlq > 0:
            nlq -= 1
            u = lq[nlq]
            if s.L[u].match >= 0 or deg_l[u] != 1:
                continue
            for e in range(s.indptr[u], s.indptr[u + 1]):
                j = <int32_t>ix[e]
                if s.R[j].spare > 0:
                    _ks_match(s, ix, cptr, cidx, deg_l, deg_r, inq_r, lq, &nlq, rq, &nrq, u, j)
                    break
        elif nrq > 0:
            nrq -= 1
            j = rq[nrq]
            inq_r[j] = 0
            if not (0 < deg_r[j] <= s.R[j].spare):
                continue
            for e in range(cptr[j], cptr[j + 1]):
                w = cidx[e]
                if s.L[w].match < 0:
                    _ks_match(s, ix, cptr, cidx, deg_l, deg_r, inq_r, lq, &nlq, rq, &nrq, w, j)
        else:
            while next_u < s.n_left and (s.L[next_u].match >= 0 or deg_l[next_u] <= 0):
                next_u += 1
            if next_u == s.n_left:
                break
            u = <int32_t>next_u
            for e in range(s.indptr[u], s.indptr[u + 1]):
                j = <int32_t>ix[e]
                if s.R[j].spare > 0:
                    _ks_match(s, ix, cptr, cidx, deg_l, deg_r, inq_r, lq, &nlq, rq, &nrq, u, j)
                    break
            else:
                deg_l[u] = 0
    k = 0
    for e in range(s.n_pending):
        if s.status[s.free_l[e]] == PENDING:
            s.free_l[k] = s.free_l[e]
            k += 1
    s.n_pending = k


cdef int hk_build_csc(HKState* s, const idx_t* ix) noexcept nogil:
    """Allocate and fill the transpose (right -> left adjacency), once (_csc.pxd's
    build_csc). Returns 0, or -1 if memory ran out or the graph has more than INT32_MAX
    edges (int32 offsets: half the cache footprint). O(|E| + |V|), 4|E| + 4 n_right bytes.
    """
    cdef int32_t* cptr = NULL
    cdef int32_t* cidx = NULL
    if s.cptr != NULL:
        return 0
    if build_csc(s.n_left, s.n_right, s.indptr, ix, &cptr, &cidx) != 0:
        return -1
    s.cptr = cptr
    s.cidx = cidx
    return 0


cdef void hk_free_csc(HKState* s) noexcept nogil:
    PyMem_RawFree(<void*>s.cptr)
    PyMem_RawFree(<void*>s.cidx)
    s.cptr = NULL
    s.cidx = NULL


cdef inline intp_t _prune_column(HKState* s, const idx_t* ix, int32_t j, int32_t* queue, intp_t qt) noexcept nogil:
    """hk_prune's step from live right ``j``: its left neighbours (not matched to it) are
    live, and the right vertex each is matched to becomes live and is queued. Returns the new
    queue length."""
    cdef int64_t e
    cdef int32_t w, j2, pb = s.pb
    cdef LeftV* L = s.L
    s.work += s.cptr[j + 1] - s.cptr[j]
    for e in range(s.cptr[j], s.cptr[j + 1]):
        w = s.cidx[e]
        if L[w].lev == pb or L[w].match == j or (s.edge_off != NULL and s.edge_off[_edge_of(s, ix, w, j)]):
            continue
        L[w].lev = pb
        j2 = L[w].match
        if j2 >= 0 and s.R[j2].lev != pb:
            s.R[j2].lev = pb
            queue[qt] = j2
            qt += 1
    return qt


cdef void hk_prune(HKState* s, const idx_t* ix) noexcept nogil:
    """Mark the vertices that can still reach spare capacity by an alternating path.

    Reverse BFS (on the transpose, see hk_build_csc) from every right vertex with spare
    capacity: a left neighbour ``w`` (not matched to it) is live, and so is the right vertex
    ``w`` is matched to. Whatever is not reached can never lie on an augmenting path, now or
    after any augmentation (augmenting paths stay inside the live set, so nothing outside it
    changes), until capacity grows. The live set is marked with a new level ``pb`` above every
    level written so far (no pass over the records): the phases enter only vertices at pb or
    above (hk_augment resets pb to 0 on return), and PENDING left vertices outside it become
    DEAD at once. This removes the Hungarian forests
    of unmatchable left vertices that textbook Hopcroft-Karp searches again in every phase.
    O(|E| + |V|). The queue holds the right vertices reached through a matched edge, each
    through a different partner: at most the matched count, so it fits in the free list's gap.
    """
    cdef intp_t qh, qt, k, kept = 0
    cdef int32_t j, w
    cdef const int32_t* cptr = s.cptr
    cdef const int32_t* cidx = s.cidx
    cdef int32_t* queue = s.free_l + s.n_pending
    cdef LeftV* L = s.L
    cdef RightV* R = s.R
    cdef int64_t w0 = s.work, n_pending0 = s.n_pending
    s.pb = _new_base(s)         # above every level written so far: nothing is marked yet
    cdef int32_t pb = s.pb
    cdef int32_t jj
    cdef int64_t ee
    # right vertices without edges are free for ever and reach nothing: never seeds. The
    # seeds' columns are scanned as the pass meets them (the left records of a seed a few
    # records ahead are fetched first); the right vertices they lead to queue up for afterwards.
    qt = 0
    for j in range(s.n_right):
        jj = j + 2 * AHEAD
        if jj < s.n_right and R[jj].spare > 0:
            for ee in range(cptr[jj], cptr[jj + 1]):
                prefetch_read(&L[cidx[ee]])
        jj = j + AHEAD       # then the records of the right vertices those are matched to
        if jj < s.n_right and R[jj].spare > 0:
            for ee in range(cptr[jj], cptr[jj + 1]):
                if L[cidx[ee]].match >= 0:
                    prefetch_read(&R[L[cidx[ee]].match])
        if R[j].spare <= 0 or cptr[j + 1] == cptr[j] or R[j].lev == pb:
            continue
        R[j].lev = pb
        qt = _prune_column(s, ix, j, queue, qt)
    qh = 0
    while qh < qt:
        # the queue is known a few entries ahead: fetch their column offsets, the columns,
        # the left records there, then the right records those are matched to (each stage
        # reads what the previous one fetched)
        if qh + 4 * AHEAD < qt:
            prefetch_read(&cptr[queue[qh + 4 * AHEAD]])
        if qh + 3 * AHEAD < qt:
            prefetch_read(&cidx[cptr[queue[qh + 3 * AHEAD]]])
        if qh + 2 * AHEAD < qt:
            jj = queue[qh + 2 * AHEAD]
            for ee in range(cptr[jj], cptr[jj + 1]):
                prefetch_read(&L[cidx[ee]])
        if qh + AHEAD < qt:
            jj = queue[qh + AHEAD]
            for ee in range(cptr[jj], cptr[jj + 1]):
                if L[cidx[ee]].match >= 0:
                    prefetch_read(&R[L[cidx[ee]].match])
        j = queue[qh]
        qh += 1
        qt = _prune_column(s, ix, j, queue, qt)
    s.work += s.n_right // 5        # the seeds' pass over the records
    # partition the pending block: live ones stay in front (in order), the rest go DEAD
    for k in range(s.n_pending):
        w = s.free_l[k]
        if L[w].lev == pb:
            s.free_l[k] = s.free_l[kept]
            s.free_l[kept] = w
            kept += 1
    _park_pending(s, kept)
    s.prunes += 1
    # what the next prune will cost at most: the same reverse search (the live region only
    # shrinks while capacities do), the passes over the records and the one over the pending list
    s.prune_cost = s.work - w0 + n_pending0


cdef inline int64_t _edge_of(HKState* s, const idx_t* ix, int32_t w, int32_t j) noexcept nogil:
    """Position of an enabled copy of edge (w, j) in the CSR, else of any copy (O(deg w))."""
    cdef int64_t e, hit = -1
    for e in range(s.indptr[w], s.indptr[w + 1]):
        if ix[e] == j:
            if not s.edge_off[e]:
                return e
            hit = e
    return hit


cdef int64_t _seed(HKState* s, const idx_t* ix, const int64_t* warm) noexcept nogil:
    """Adopt warm[u] (in [-1, n_right)) for each PENDING u where it is an enabled edge with
    spare capacity, in left order; return the pairs kept."""
    cdef intp_t u, kept_p = 0
    cdef int64_t e, end, kept = 0
    cdef int32_t j
    for u in range(s.n_left):
        if s.status[u] != PENDING or warm[u] < 0:
            continue
        j = <int32_t>warm[u]
        if s.R[j].spare <= 0:
            continue
        e = s.indptr[u]
        end = s.indptr[u + 1]
        while e < end:
            if ix[e] == j and (s.edge_off == NULL or not s.edge_off[e]):
                break
            e += 1
        if e < end:
            hk_match_free(s, <int32_t>u, j)
            kept += 1
    for u in range(s.n_pending):
        if s.status[s.free_l[u]] == PENDING:
            s.free_l[kept_p] = s.free_l[u]
            kept_p += 1
    s.n_pending = kept_p
    return kept


cdef int64_t _toggle_edge(HKState* s, const idx_t* ix, uint8_t* off_arr, int64_t* n_off, intp_t i,
                          intp_t j, bint on, bint* changed) noexcept nogil:
    """Set every stored copy of edge (i, j) on or off; return how many copies exist."""
    cdef int64_t e, found = 0
    for e in range(s.indptr[i], s.indptr[i + 1]):
        if ix[e] == j:
            found += 1
            if off_arr[e] == on:
                changed[0] = True
                off_arr[e] = not on
                n_off[0] += -1 if on else 1
    return found


# one entry point per kernel function: the fused specialisation for the graph's index type
cdef inline int64_t _augment(HKState* s) noexcept nogil:
    if s.idx64:
        return hk_augment(s, <const int64_t*>s.indices)
    return hk_augment(s, <const int32_t*>s.indices)


cdef inline int _build_csc(HKState* s) noexcept nogil:
    if s.idx64:
        return hk_build_csc(s, <const int64_t*>s.indices)
    return hk_build_csc(s, <const int32_t*>s.indices)


cdef inline void _prune(HKState* s) noexcept nogil:
    if s.idx64:
        hk_prune(s, <const int64_t*>s.indices)
    else:
        hk_prune(s, <const int32_t*>s.indices)


cdef inline void _greedy(HKState* s) noexcept nogil:
    if s.idx64:
        hk_greedy(s, <const int64_t*>s.indices)
    else:
        hk_greedy(s, <const int32_t*>s.indices)


cdef inline void _greedy_mindeg(HKState* s, const int32_t* cptr) noexcept nogil:
    if s.idx64:
        hk_greedy_mindeg(s, <const int64_t*>s.indices, cptr)
    else:
        hk_greedy_mindeg(s, <const int32_t*>s.indices, cptr)


cdef class HKKernel:
    """Owns a (b-)matching on a CSR graph and all scratch; see ``_hk.pxd``.

    Constructed only by :mod:`spare_core.graph.matching` with validated arrays: ``indptr``
    int64[n_left + 1], ``indices`` int32 or int64[nnz] in range (read, never written: a
    one-shot solve passes the caller's own), ``cap`` int64[n_right] >= 0 or None (unit
    capacities, one-shot only, with ``n_right``). The partner lists of several-slot mode
    are allocated when a capacity of 2 or more first appears.
    """
    cdef HKState s
    cdef readonly object indptr, indices, edge_off, user_cap, enabled, cap_in_force
    cdef object _L, _R, _status, _i32, _cap, _P, _cur
    cdef readonly intp_t n_left, n_right
    cdef uint8_t* en
    cdef int64_t* ucap
    cdef int64_t* capf
    cdef const int64_t* cap1          # one-shot capacities (None: all 1)
    cdef uint8_t* off_arr
    cdef int64_t n_off
    cdef bint released
    cdef readonly int64_t start_size     # matching size after solve()'s start, before the phases

    def __cinit__(self, indptr, indices, cap, bint edge_flags=False, intp_t n_right=-1):
        cdef bint unit = cap is None, multi = False
        cdef intp_t nl = indptr.shape[0] - 1, nr = n_right if unit else cap.shape[0], i
        cdef int32_t c
        if unit and (edge_flags or nr < 0):
            raise ValueError("capacity None needs n_right and a one-shot kernel")
        self.n_left = nl
        self.n_right = nr
        self.indptr = indptr
        self.indices = indices if indices.shape[0] else np.zeros(1, np.int32)
        self._cap = cap
        # state an IncrementalMatching needs and a one-shot solve does not
        self.edge_off = np.zeros(max(indices.shape[0], 1), np.uint8) if edge_flags else None
        self.user_cap = cap.copy() if edge_flags else None
        # unclamped int64 capacities in force (0 = disabled): IncrementalMatching.capacity, and
        # what the records' spare counts are relative to
        self.cap_in_force = cap.copy() if edge_flags else None
        self.enabled = np.ones(nr, np.uint8) if edge_flags else None
        # np.empty + one C pass: no zero-fill and no per-field numpy assignment
        self._L = np.empty(nl, LEFT_DTYPE)
        self._R = np.empty(nr, RIGHT_DTYPE)
        self._status = np.empty(nl, np.uint8)
        # free_l: pending in front, dead at the back; the searches' queues and stacks use the
        # gap between (matched count + 1 entries: see _bfs, _dfs, hk_prune)
        self._i32 = np.empty(nl + 1, np.int32)
        self.cap1 = NULL
        if not unit:
            self.cap1 = <const int64_t*>_data(cap, b'i', 8, False)
        cdef LeftV* L = <LeftV*>_data(self._L, b'V', sizeof(LeftV), True)
        cdef RightV* R = <RightV*>_data(self._R, b'V', sizeof(RightV), True)
        cdef uint8_t* st = <uint8_t*>_data(self._status, b'u', 1, True)
        cdef int32_t* blk = <int32_t*>_data(self._i32, b'i', 4, True)
        cdef int itemsize = self.indices.dtype.itemsize
        self.s.idx64 = itemsize == 8
        self.s.indices = _data(self.indices, b'i', itemsize if itemsize in (4, 8) else 4, False)
        with nogil:
            for i in range(nl):
                L[i].match = -1
                L[i].it = 0
                L[i].lev = 0
                st[i] = PENDING
                blk[i] = <int32_t>i
            for i in range(nr):
                c = _clamp(1 if unit else self.cap1[i], nl)
                R[i].spare = c
                R[i].lev = 0
                R[i].aux = -1 if c <= 1 else -2
                multi = multi or c > 1
        self.en = <uint8_t*>_data(self.enabled, b'u', 1, True) if edge_flags else NULL
        self.ucap = <int64_t*>_data(self.user_cap, b'i', 8, True) if edge_flags else NULL
        self.capf = <int64_t*>_data(self.cap_in_force, b'i', 8, True) if edge_flags else NULL
        self.s.L = L
        self.s.R = R
        self.s.status = st
        self.s.free_l = blk
        self.s.n_left = nl
        self.s.n_right = nr
        self.s.indptr = <const int64_t*>_data(self.indptr, b'i', 8, False)
        self.off_arr = <uint8_t*>_data(self.edge_off, b'u', 1, True) if edge_flags else NULL
        self.n_off = 0
        self.s.edge_off = NULL      # set only while some edge is disabled: no per-edge test otherwise
        self.s.n_pending = nl
        self.s.n_dead = 0
        self.s.cptr = NULL
        self.s.cidx = NULL
        self.s.P = NULL
        self.s.cur = NULL
        self.s.pb = 0
        self.s.can_prune = 1
        self.s.prune_budget = -1
        self.s.prunes = 0
        self.s.prune_cost = 0
        self.s.base = 0
        self.s.top = 0
        self.s.size = 0
        self.s.work = 0
        self.s.phases = 0
        self.released = False
        if multi:
            self._need_lists()

    cdef _need_lists(self):
        """Allocate the partner lists of several-slot mode (once): 8 bytes per left and 4 per
        right vertex that unit-capacity graphs never pay."""
        if self.s.P != NULL:
            return
        self._P = np.empty(max(self.n_left, 1), LINK_DTYPE)
        self._cur = np.empty(max(self.n_right, 1), np.int32)
        self.s.P = <LinkV*>_data(self._P, b'V', sizeof(LinkV), True)
        self.s.cur = <int32_t*>_data(self._cur, b'i', 4, True)

    cdef _alive(self):
        if self.released:
            raise RuntimeError("this kernel's state was released by result(release=True)")

    # live strided view into the records, built on access
    @property
    def match_left(self):
        self._alive()
        return self._L["match"]

    @property
    def load(self):
        """Partners of each right vertex (int32, a new array: capacity in force - spare)."""
        self._alive()
        out = np.empty(self.n_right, np.int32)
        cdef int32_t* o = <int32_t*>cnp.PyArray_DATA(out)
        self._loads(o)
        return out

    cdef inline int32_t _load_of(self, intp_t j) noexcept:
        """Partners of right ``j``: its clamped capacity in force minus its spare count."""
        cdef int64_t c = self.capf[j] if self.capf != NULL else (self.cap1[j] if self.cap1 != NULL else 1)
        return _clamp(c, self.n_left) - self.s.R[j].spare

    cdef void _loads(self, int32_t* o) noexcept:
        cdef intp_t j
        for j in range(self.n_right):
            o[j] = self._load_of(j)

    def result(self, bint release=False):
        """Contiguous copies (match_left int64[n_left], load int64[n_right]).

        ``release``: free the kernel's memory as the copies are made (a one-shot solve's
        last step: the result never coexists with the search scratch); the kernel cannot be
        used afterwards.
        """
        self._alive()
        cdef intp_t i, nl = self.n_left, nr = self.n_right
        if release:
            hk_free_csc(&self.s)
            self.s.status = NULL
            self.s.free_l = NULL
            self._status = None
            self._i32 = None
        ml_a = np.empty(nl, np.int64)
        cdef int64_t* ml = <int64_t*>cnp.PyArray_DATA(ml_a)
        cdef LeftV* L = self.s.L
        with nogil:
            for i in range(nl):
                ml[i] = L[i].match
        if release:
            self.s.L = NULL
            self._L = None
        ld_a = np.empty(nr, np.int64)
        cdef int64_t* ld = <int64_t*>cnp.PyArray_DATA(ld_a)
        for i in range(nr):
            ld[i] = self._load_of(i)
        if release:
            self.s.R = NULL
            self._R = None
            self.released = True
        return ml_a, ld_a

    @property
    def size(self):
        return self.s.size

    @property
    def work(self):
        """Edges and column entries scanned since construction (a machine-independent cost)."""
        return self.s.work

    @property
    def phases(self):
        return self.s.phases

    @property
    def n_pending(self):
        return self.s.n_pending

    def seed(self, const int64_t[::1] warm):
        """Adopt ``warm`` (validated range [-1, n_right)): keep pairs that are enabled edges
        with spare capacity, in left order; the rest stay PENDING. Returns pairs kept."""
        self._alive()
        cdef HKState* s = &self.s
        cdef int64_t kept
        cdef intp_t u
        cdef int64_t lo = 0, hi = -1
        if warm.shape[0] != self.n_left:
            raise ValueError(f"warm must have length {self.n_left}, got {warm.shape[0]}")
        if self.n_left == 0:
            return 0
        # never trust the caller's range check: _seed indexes R[warm[u]]
        with nogil:
            for u in range(self.n_left):
                lo = warm[u] if warm[u] < lo else lo
                hi = warm[u] if warm[u] > hi else hi
        if lo < -1 or hi >= self.n_right:
            raise ValueError(f"warm start entries must lie in [-1, {self.n_right}), got {lo if lo < -1 else hi}")
        with nogil:
            if s.idx64:
                kept = _seed(s, <const int64_t*>s.indices, &warm[0])
            else:
                kept = _seed(s, <const int32_t*>s.indices, &warm[0])
        return kept

    def greedy(self):
        self._alive()
        with nogil:
            _greedy(&self.s)

    def solve(self, int start=START_DEGREE_ORDER, bint prune=True):
        """Maximum matching from the current state.

        ``start`` (``CONSTANTS``): START_GREEDY = greedy in vertex order;
        START_DEGREE_ORDER = greedy in increasing degree order (degree-1 vertices first,
        which is where greedy choices are safe), taking the neighbour with the fewest
        competitors (hk_greedy_mindeg) when the right side is tight, else the first free
        one; START_KARP_SIPSER = Karp-Sipser degree rules; START_MIN_COMPETITION = as
        START_DEGREE_ORDER with the fewest-competitors choice always. ``prune``: prune once
        after a start other than START_GREEDY when the right
        side is tight, then let the phases prune by the
        ski-rental rule (see hk_augment). A cold solve scans the whole graph anyway, so the
        first prune (about one pass) keeps the O(sqrt(V) E) bound.
        """
        self._alive()
        cdef HKState* s = &self.s
        cdef intp_t nl = self.n_left, nr = self.n_right
        cdef int64_t[::1] deg_l, deg_r
        cdef uint8_t[::1] inq_r
        cdef int32_t[::1] lq, rq
        s.can_prune = prune
        cdef bint cold = s.n_pending == nl and s.size == 0, early, started = False
        # decided before the degree order sets the isolated left vertices aside: the test
        # compares the two sides' totals, isolated vertices and edgeless slots included
        early = prune and start != START_GREEDY and s.n_pending > 0 and _slots_at_most(s, s.n_pending)
        if (start == START_DEGREE_ORDER or start == START_MIN_COMPETITION) and cold and nl > 1:
            with nogil:
                hk_degree_order(s)
        if start == START_KARP_SIPSER:
            if _build_csc(s) != 0:
                raise MemoryError("no transpose of the graph for Karp-Sipser (out of memory, or more "
                                  "than 2**31 - 1 edges)")
            deg_l = np.zeros(max(nl, 1), np.int64)
            deg_r = np.zeros(max(nr, 1), np.int64)
            inq_r = np.zeros(max(nr, 1), np.uint8)
            lq = np.zeros(max(nl, 1), np.int32)
            rq = np.zeros(s.indptr[nl] + nr + 1, np.int32)
            with nogil:
                if s.idx64:
                    hk_karp_sipser(s, <const int64_t*>s.indices, &deg_l[0], &deg_r[0], &inq_r[0], &lq[0], &rq[0])
                else:
                    hk_karp_sipser(s, <const int32_t*>s.indices, &deg_l[0], &deg_r[0], &inq_r[0], &lq[0], &rq[0])
        with nogil:
            # Prune once before the first phase when the free left vertices are at least as
            # many as the free right slots: augmenting paths then compete for few endpoints,
            # most free left vertices end unmatched, and every textbook phase scans their
            # alternating trees again (measured work: (b) 4.2|E| -> 3.2|E|, (c) 1e6
            # 3.2|E| -> 2.4|E|). With slack on the right (family (a): 1.6 % free left, 95 %
            # spare slots) each search ends nearby and the prune's pass would triple the work.
            # Cold starts only: a warm repair searches from a few vertices. A greedy start
            # changes both sides of the test by its size, so it is decided before it, and the
            # transpose built first gives the minimum-degree start its counts for free.
            early = early and s.n_pending > 0 and _build_csc(s) == 0
            # the minimum-competition choice pays where right vertices are contended (the
            # tight case); with slack the phases repair the few conflicts of a plain greedy
            # for less than its counting (family (a): 4.7 -> 7.1 ms at n = 100k)
            if start == START_MIN_COMPETITION or (start == START_DEGREE_ORDER and early):
                _greedy_mindeg(s, s.cptr if early and cold and s.edge_off == NULL else NULL)
                started = True
            if not started:
                _greedy(s)
        self.start_size = s.size
        with nogil:
            if early and s.n_pending > 0:
                _prune(s)
            _augment(s)
        return s.size

    def augment(self):
        """Restore maximality; return the matching size."""
        self._alive()
        with nogil:
            _augment(&self.s)
        return self.s.size

    cdef void _mode(self, intp_t j, int32_t c) noexcept:
        """Put right ``j`` in the mode of clamped capacity ``c`` (its load already <= c; the
        lists exist if c > 1)."""
        cdef RightV* r = &self.s.R[j]
        cdef HKState* s = &self.s
        if c > 1:
            if r.aux >= -1:               # unit -> several-slot: its partner (if any) is the list
                if r.aux >= 0:
                    s.P[r.aux].nxt = -1
                    s.P[r.aux].prv = -1
                r.aux = -3 - r.aux
        elif r.aux <= -2:                 # several-slot -> unit: at most one partner is left
            r.aux = -3 - r.aux

    def disable_right(self, intp_t j):
        self._alive()
        cdef HKState* s = &self.s
        if not self.en[j]:
            return
        cdef int32_t old = _clamp(self.capf[j], self.n_left)
        self.en[j] = 0
        self.capf[j] = 0
        with nogil:
            hk_shed(s, <int32_t>j, old - s.R[j].spare)
        s.R[j].spare = 0
        s.R[j].aux = -1

    def enable_right(self, intp_t j):
        self._alive()
        if self.en[j]:
            return
        cdef int32_t c = _clamp(self.ucap[j], self.n_left)
        if c > 1:
            self._need_lists()        # may raise: nothing changed yet
        self.en[j] = 1
        self.capf[j] = self.ucap[j]
        self.s.R[j].spare = c           # it has no partners while disabled
        self.s.R[j].aux = -1 if c <= 1 else -2
        if c > 0:
            hk_revive(&self.s)

    def set_capacity(self, intp_t j, int64_t c):
        self._alive()
        cdef HKState* s = &self.s
        cdef int32_t new = _clamp(c, self.n_left), old, load
        if self.en[j] and new > 1:
            self._need_lists()        # may raise: nothing changed yet
        self.ucap[j] = c
        if not self.en[j]:
            return
        old = _clamp(self.capf[j], self.n_left)
        self.capf[j] = c
        load = old - s.R[j].spare
        with nogil:
            if load > new:
                hk_shed(s, <int32_t>j, load - new)
                load = new
        s.R[j].spare = new - load
        self._mode(j, new)
        if new > old:
            hk_revive(s)

    def set_capacities(self, const int64_t[::1] caps):
        """Bulk form of :meth:`set_capacity` (``caps`` validated, length n_right)."""
        self._alive()
        cdef HKState* s = &self.s
        cdef uint8_t* en = self.en
        cdef int64_t* ucap = self.ucap
        cdef int64_t* capf = self.capf
        cdef intp_t j
        cdef int32_t new, old, load
        cdef bint grew = False
        for j in range(s.n_right):
            if en[j] and _clamp(caps[j], s.n_left) > 1:
                self._need_lists()    # may raise: nothing changed yet
                break
        for j in range(s.n_right):
            ucap[j] = caps[j]
            if not en[j]:
                continue
            new = _clamp(caps[j], s.n_left)
            old = _clamp(capf[j], s.n_left)
            capf[j] = caps[j]
            load = old - s.R[j].spare
            if load > new:
                hk_shed(s, <int32_t>j, load - new)
                load = new
            s.R[j].spare = new - load
            self._mode(j, new)
            grew = grew or new > old
        if grew:
            hk_revive(s)

    def set_edge(self, intp_t i, intp_t j, bint on):
        """Enable/disable every stored copy of edge (i, j); return how many copies exist."""
        self._alive()
        cdef HKState* s = &self.s
        cdef int64_t found
        cdef bint changed = False
        if s.idx64:
            found = _toggle_edge(s, <const int64_t*>s.indices, self.off_arr, &self.n_off, i, j, on, &changed)
        else:
            found = _toggle_edge(s, <const int32_t*>s.indices, self.off_arr, &self.n_off, i, j, on, &changed)
        s.edge_off = self.off_arr if self.n_off > 0 else NULL
        if found and changed:
            if not on and s.L[i].match == j:
                hk_free_left(s, <int32_t>i)
                hk_revive(s)      # j now has a spare slot: parked vertices may reach it
            elif on:
                hk_revive(s)
        return found

    def __dealloc__(self):
        hk_free_csc(&self.s)

    @property
    def prunes(self):
        return self.s.prunes

    @property
    def level_top(self):
        """Highest BFS level written so far (tests raise it to force the O(V) level reset)."""
        return self.s.top

    @level_top.setter
    def level_top(self, int32_t t):
        if t < self.s.top:
            raise ValueError(f"level_top may only grow (levels up to {self.s.top} are in use), got {t}")
        self.s.top = t

    @property
    def prune_budget(self):
        """Search work after which hk_augment prunes; -1 = |E| + |V| (tests set 0)."""
        return self.s.prune_budget

    @prune_budget.setter
    def prune_budget(self, int64_t b):
        self.s.prune_budget = b

    def free_left(self):
        """The free left vertices (PENDING then DEAD), as a new int64 array."""
        self._alive()
        cdef intp_t np_ = self.s.n_pending, nd = self.s.n_dead, nl = self.n_left
        out = np.empty(np_ + nd, np.int64)
        out[:np_] = self._i32[:np_]
        out[np_:] = self._i32[nl + 1 - nd:nl + 1]
        return out


cdef inline int32_t _clamp(int64_t c, intp_t n_left) noexcept nogil:
    """A capacity as the records hold it: a right vertex never takes more than n_left."""
    return <int32_t>(c if c < n_left else n_left)


cdef void* _data(arr, char kind, int itemsize, bint writable) except? NULL:
    """Data pointer of a C-contiguous ndarray of the given kind and item size, NULL if empty.

    HKKernel can be built from Python, so its arrays are checked (TypeError), but in C:
    typed memoryviews cost about 1 us each, a tenth of a whole solve on 1e3 edges.
    """
    if not cnp.PyArray_Check(arr):
        raise TypeError(f"expected a numpy array, got {type(arr).__name__}")
    cdef cnp.ndarray a = <cnp.ndarray>arr
    cdef bint kind_ok = (cnp.PyArray_ISSIGNED(a) if kind == b'i' else cnp.PyArray_ISUNSIGNED(a) if kind == b'u'
                         else cnp.PyArray_TYPE(a) == cnp.NPY_VOID)
    if (not cnp.PyArray_IS_C_CONTIGUOUS(a) or cnp.PyArray_ITEMSIZE(a) != itemsize or not kind_ok
            or (writable and not cnp.PyArray_ISWRITEABLE(a))):
        raise TypeError(f"expected a contiguous{' writable' if writable else ''} array of kind "
                        f"{chr(kind)!r} and item size {itemsize}, got {arr.dtype} {arr.shape}")
    if cnp.PyArray_SIZE(a) == 0:
        return NULL
    return cnp.PyArray_DATA(a)


def koenig_cover(indptr, indices, edge_off, match_left, cap, load):
    """König certificate of a (b-)matching: (left_in_cover, right_in_cover) as bool arrays.

    ``indptr`` int64, ``indices`` int32 or int64 (validated by the caller), the others as in
    :func:`_koenig`.
    """
    if indices.dtype.itemsize == 8:
        return _koenig[int64_t](indptr, indices, edge_off, match_left, cap, load)
    return _koenig[int32_t](indptr, indices, edge_off, match_left, cap, load)


cdef object _koenig(const int64_t[::1] indptr, const idx_t[::1] indices, edge_off,
                    const int64_t[::1] match_left, const int64_t[::1] cap, const int64_t[::1] load):
    """König certificate of a (b-)matching: (left_in_cover, right_in_cover).

    Z = vertices reachable from free left vertices by alternating paths (left -> right on a
    non-matching enabled edge, right -> each of its partners). The cover is (L \\ Z) + (R & Z);
    it covers every enabled edge, and if the matching is maximum its capacity-weighted size
    equals the matching size. O(|E| + |V|).
    """
    cdef intp_t nl = match_left.shape[0], nr = cap.shape[0]
    cdef intp_t u, qh = 0, qt = 0
    cdef int64_t e, nnz = indices.shape[0], lo = 0, hi = -1, jj
    cdef int32_t j, v, w
    cdef const uint8_t[::1] off
    cdef bint has_off = edge_off is not None, bad = False
    if has_off:
        off = edge_off
    # never trust the wrapper: every length and index this pass dereferences is checked
    if indptr.shape[0] != nl + 1 or load.shape[0] != nr:
        raise ValueError(f"koenig_cover: indptr has {indptr.shape[0]} entries and load {load.shape[0]} "
                         f"for {nl} left and {nr} right vertices")
    if indptr[0] != 0 or indptr[nl] > nnz or (has_off and off.shape[0] < indptr[nl]):
        raise ValueError("koenig_cover: indptr must start at 0 and end within indices (and edge_off)")
    for u in range(nl):
        bad |= indptr[u + 1] < indptr[u]
        lo = match_left[u] if match_left[u] < lo else lo
        hi = match_left[u] if match_left[u] > hi else hi
    if bad or lo < -1 or hi >= nr:
        raise ValueError(f"koenig_cover: indptr must be non-decreasing and match_left in [-1, {nr})")
    lo, hi = 0, -1
    for e in range(indptr[nl]):
        jj = indices[e]
        lo = jj if jj < lo else lo
        hi = jj if jj > hi else hi
    if lo < 0 or hi >= nr:
        raise ValueError(f"koenig_cover: column indices must lie in [0, {nr}), got {lo if lo < 0 else hi}")
    zl_a = np.zeros(nl, np.uint8)
    zr_a = np.zeros(nr, np.uint8)
    pstart_a = np.zeros(nr + 1, np.int64)
    plist_a = np.zeros(max(nl, 1), np.int32)
    queue_a = np.zeros(max(nl, 1), np.int32)
    cdef uint8_t[::1] zl = zl_a, zr = zr_a
    cdef int64_t[::1] pstart = pstart_a
    cdef int32_t[::1] plist = plist_a, queue = queue_a
    with nogil:
        # partners of each right vertex by counting sort of match_left
        for u in range(nl):
            if match_left[u] >= 0:
                pstart[match_left[u] + 1] += 1
        for j in range(nr):
            pstart[j + 1] += pstart[j]
        for u in range(nl):
            if match_left[u] >= 0:
                j = <int32_t>match_left[u]
                plist[pstart[j]] = <int32_t>u
                pstart[j] += 1
        for j in range(nr - 1, -1, -1):
            pstart[j + 1] = pstart[j]
        if nr:
            pstart[0] = 0
        for u in range(nl):
            if match_left[u] < 0:
                zl[u] = 1
                queue[qt] = <int32_t>u
                qt += 1
        while qh < qt:
            v = queue[qh]
            qh += 1
            for e in range(indptr[v], indptr[v + 1]):
                j = <int32_t>indices[e]
                if zr[j] or j == match_left[v] or (has_off and off[e]):
                    continue
                zr[j] = 1
                for w in range(<int32_t>pstart[j], <int32_t>pstart[j + 1]):
                    if not zl[plist[w]]:
                        zl[plist[w]] = 1
                        queue[qt] = plist[w]
                        qt += 1
    return np.logical_not(zl_a.view(np.bool_)), zr_a.view(np.bool_)


def csr_from_pairs(const int64_t[::1] row, const int64_t[::1] col, intp_t n_left):
    """CSR (indptr int64, indices int32) of the pairs (row[k], col[k]) by counting sort, O(nnz + n_left).

    IN: ``row`` in [0, n_left) and ``col`` in [0, 2**31), checked by the caller. Order within a
    row follows the input order.
    """
    cdef intp_t m = row.shape[0], k, u
    indptr_a = np.zeros(n_left + 1, np.int64)
    indices_a = np.empty(m, np.int32)
    fill_a = np.empty(n_left, np.int64)
    cdef int64_t[::1] indptr = indptr_a, fill = fill_a
    cdef int32_t[::1] indices = indices_a
    with nogil:
        for k in range(m):
            indptr[row[k] + 1] += 1
        for u in range(n_left):
            indptr[u + 1] += indptr[u]
            fill[u] = indptr[u]
        for k in range(m):
            u = row[k]
            indices[fill[u]] = <int32_t>col[k]
            fill[u] += 1
    return indptr_a, indices_a


def nonneg_copy(arr):
    """``(copy, all_one)``: an int64 copy of a contiguous int32/int64 array after checking it
    is >= 0, and whether every entry is 1 (one C pass; ``np.all(a == 1)`` alone costs ~5 us
    on 1e3 entries); ValueError "capacity must be >= 0, got x" naming the smallest value
    otherwise."""
    if arr.dtype.itemsize == 8:
        return _nonneg_copy[int64_t](arr)
    return _nonneg_copy[int32_t](arr)


cdef object _nonneg_copy(const idx_t[::1] a):
    cdef intp_t n = a.shape[0], i
    out_a = np.empty(n, np.int64)
    cdef int64_t* out = <int64_t*>cnp.PyArray_DATA(out_a)
    cdef int64_t lo = 0, v
    cdef int not_one = 0
    with nogil:
        for i in range(n):
            v = a[i]
            lo = v if v < lo else lo
            not_one |= v != 1
            out[i] = v
    if lo < 0:
        raise ValueError(f"capacity must be >= 0, got {lo}")
    return out_a, not not_one


def csr_checked(indptr, indices, intp_t n_minor, bint copy=True):
    """Validate a compressed-sparse structure; see _csr_checked. ``indptr`` and ``indices``
    are contiguous int32 or int64 arrays.

    Dispatches on the dtypes here: calling a fused ``def`` function matches its signature
    in Python (about 10 us, a tenth of a whole solve on 1e3 edges).
    """
    if indptr.dtype.itemsize == 8:
        if indices.dtype.itemsize == 8:
            ptr, idx, h = _csr_checked[int64_t, int64_t](indptr, indices, n_minor, copy)
        else:
            ptr, idx, h = _csr_checked[int64_t, int32_t](indptr, indices, n_minor, copy)
    elif indices.dtype.itemsize == 8:
        ptr, idx, h = _csr_checked[int32_t, int64_t](indptr, indices, n_minor, copy)
    else:
        ptr, idx, h = _csr_checked[int32_t, int32_t](indptr, indices, n_minor, copy)
    # not copied: the caller's own arrays (indices cut to the stored length)
    return (indptr if ptr is None else ptr), (indices[:indptr[indptr.shape[0] - 1]] if idx is None else idx), h


cdef object _csr_checked(const ptr_t[::1] indptr, const idx_t[::1] indices, intp_t n_minor, bint copy):
    """Validate a compressed-sparse structure in one pass; return (indptr int64, indices,
    fingerprint), or raise ValueError naming the first problem.

    Checks: indptr[0] == 0, non-decreasing, indptr[-1] <= len(indices), every index in
    [0, n_minor), no row longer than 2**31 - 1 entries. Only indices[:indptr[-1]] are read
    (scipy's own convention). ``copy``: private copies (indptr int64, indices int32);
    otherwise None for what the caller's own array can stand for (indptr is still copied to
    int64 if it is int32). The pass, its checks and the fingerprint are
    ``_csr_check.csr_check_copy``'s, the one the one-call paths of ``_transversal`` and
    ``_bmatch`` run (one owner: a result they fingerprint is re-checked here). The
    fingerprint lets a later reader of the caller's arrays check that they were not modified
    in between: a sum mod 2**64 of one term per (position, value). An indptr entry's term is
    a mixing function (splitmix64's finaliser) of both. An index's term is
    ``(lo32(v) ^ kx_e) * (ky_e | 1)`` with per-position 32-bit keys ``kx_e = e * 0x9E3779B9``,
    ``ky_e = e * 0x85EBCA6B`` (mod 2**32): one 32 x 32 -> 64-bit product, which the compiler
    vectorises (the 64-bit mixing per edge was most of this pass's time; 1.6x faster at
    1e4-1e5 edges, docs/matching.md). Every index that passes the range check lies in
    [0, 2**31), so its low 32 bits are all of it, and one changed index changes the sum by
    a nonzero product of two numbers below 2**32: a single edit is always seen. Several
    edits cancel only if the changes d_e of ``lo32(v) ^ kx_e`` satisfy
    ``sum(d_e * (ky_e | 1)) = 0 mod 2**64``; for two of them that needs ``|d_1| >= (ky_2 | 1)
    / gcd``, which the XOR with the keys scatters; the keys are fixed, so this guards against
    accidental edits, not crafted ones.
    """
    cdef intp_t n_major = indptr.shape[0] - 1
    cdef int64_t nnz
    cdef uint64_t h = 0
    cdef int rc
    if n_major < 0:
        raise ValueError("graph indptr must not be empty")
    # read once: the same value sizes the copy, bounds the pass and is checked against the
    # last entry the pass reads (a writer thread changing it meanwhile is caught there)
    nnz = indptr[n_major]
    msg = csr_header_error(indptr[0], nnz, indices.shape[0])
    if msg is not None:
        raise ValueError(msg)
    ptr_a = np.empty(n_major + 1, np.int64)
    # (a negative nnz is a decreasing indptr, which the pass reports)
    idx_a = np.empty(nnz if nnz > 0 else 0, np.int32)
    cdef int64_t* op = <int64_t*>cnp.PyArray_DATA(ptr_a)
    cdef int32_t* ox = <int32_t*>cnp.PyArray_DATA(idx_a)
    cdef const idx_t* ix = &indices[0] if nnz > 0 else NULL   # (a negative nnz: the pass reports it)
    with nogil:
        rc = csr_check_copy(&indptr[0], n_major, ix, nnz, n_minor, op, ox, &h)
    if rc != CHECK_OK:
        raise ValueError(csr_check_message(rc, ix, nnz, n_minor, op[n_major]))
    if not copy:
        # the caller's own arrays stand for the copies (an int32 indptr still as int64)
        idx_a = None
        if ptr_t is int64_t:
            ptr_a = None
    return ptr_a, idx_a, int(h)
