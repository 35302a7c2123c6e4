# cython: language_level=3
"""Maximum transversal (maximum cardinality bipartite matching, unit capacities) by
depth-first and push-relabel search: the alternatives to Hopcroft-Karp that
:func:`spare_core.graph.matching.hopcroft_karp` offers as ``method="pothen_fan"`` and
``method="push_relabel"``.

``solve`` takes a graph :mod:`spare_core.graph.matching` has validated (indptr int64, indices int32
or int64 in range, a private copy); ``solve_csr`` takes the caller's own CSR arrays and
validates and copies them itself (``_csr_check.pxd``) before the same solve runs on the copy.

Both algorithms follow Duff, Kaya and Uçar, "Design, implementation, and analysis of
maximum transversal algorithms", ACM TOMS 38(2), 2011, and Kaya, Langguth, Manne and
Uçar, "Push-relabel based algorithms for the maximum transversal problem", Computers &
Operations Research 40(5), 2013:

- **PF+** (Pothen and Fan 1990, with lookahead and fairness): a phase runs one DFS from each
  free left vertex over alternating paths, right vertices marked visited for the whole
  phase (so the paths of a phase are vertex-disjoint and a phase costs O(|E|)). Before
  descending, a left vertex looks for a free right neighbour through a *lookahead* pointer
  that only moves forward (a right vertex once matched stays matched), so all lookahead
  scans together cost O(|E|). *Fairness*: odd phases scan adjacency lists forwards, even
  phases backwards, so the searches do not always try the same first neighbours. Phases
  repeat until one finds no augmenting path. O(|V| |E|) worst case.
- **Push-relabel** (Goldberg and Tarjan, for matching Cherkassky, Goldberg, Martin, Setubal
  and Stolfi 1998): right vertices carry labels psi (a lower bound on twice... the
  alternating distance to a free right vertex); an active (free) left vertex u takes its
  lowest-labelled neighbour j ("double push": j's partner, if any, becomes active) and j is
  relabelled to the second-lowest label of u's neighbours + 2. FIFO order; a global relabel
  (a BFS from the free right vertices over the transpose, exact distances) at the start and
  after every n_left + n_right pushes... left vertices whose label is infinite are dropped
  (no augmenting path reaches them now, nor later). O(sqrt(V) |E|) with global relabels
  in practice, O(|V| |E|) bound.

Both start from a cheap greedy pass in left-vertex order (PF+'s first phase is exactly that,
by its lookahead; METHOD_AUTO runs it first and stops there when it is already maximum, or
repairs it by a few breadth-first passes when it left only a handful of right vertices free),
or from a Karp-Sipser start (degree-1 vertices matched first, on both
sides, Karp and Sipser 1981), which needs the transpose.
"""
from _types cimport intp_t, int8_t, int32_t, int64_t, uint8_t, uint64_t, idx_t
from _prefetch cimport prefetch_read
from _csc cimport build_csc, csc_count, csc_fill
from _csr_check cimport ptr_t, csr_check_copy, CHECK_OK, plain_index_array, csr_header_error, csr_check_message

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawCalloc, PyMem_RawFree
cimport cython

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef enum:
    START_NONE = 0          # PF+: its first phase is the greedy; push-relabel: no start
    START_GREEDY = 1        # first free neighbour, left vertices in order
    START_KARP_SIPSER = 2   # degree-1 rule on both sides, then min-degree-free greedy
    AHEAD = 8

cdef enum:
    METHOD_AUTO = 0         # PF+ when the probe finds one side clearly smaller or below pf_max_edges, else push-relabel
    METHOD_POTHEN_FAN = 1   # PF+: Pothen-Fan with lookahead and fairness
    METHOD_PUSH_RELABEL = 2  # FIFO push-relabel with global relabels
    METHOD_GREEDY = 3       # (reported by METHOD_AUTO only) the greedy pass was already maximum
    METHOD_GREEDY_REPAIR = 4  # (METHOD_AUTO only) the greedy pass, repaired by _pull_repair

cdef enum:
    SIDE_LEFT = 0           # search from the left vertices (the graph as given)
    SIDE_RIGHT = 1          # search from the right vertices (the transposed graph)
    SIDE_PROBE = 2          # from the right when clearly fewer right vertices have an edge

CONSTANTS = {"START_NONE": START_NONE, "START_GREEDY": START_GREEDY,
             "START_KARP_SIPSER": START_KARP_SIPSER,
             "METHOD_AUTO": METHOD_AUTO, "METHOD_POTHEN_FAN": METHOD_POTHEN_FAN, "METHOD_PUSH_RELABEL": METHOD_PUSH_RELABEL,
             "METHOD_GREEDY": METHOD_GREEDY, "METHOD_GREEDY_REPAIR": METHOD_GREEDY_REPAIR,
             "SIDE_LEFT": SIDE_LEFT, "SIDE_RIGHT": SIDE_RIGHT, "SIDE_PROBE": SIDE_PROBE}


@cython.final
@cython.freelist(4)
cdef class Solution:
    """What :func:`solve` and :func:`solve_csr` return, read by name.

    Attributes
    ----------
    match_left : ndarray of int64, read-only
        Right partner of each left vertex, -1 if unmatched.
    right_load : ndarray of int64, read-only
        1 for each matched right vertex, else 0.
    size, phases, work : int
        Matched pairs; phases of the search (PF+: depth-first phases, push-relabel: global
        relabels, greedy repair: breadth-first phases); edges scanned.
    from_right : bool
        The search ran on the transposed graph (from the right vertices), or was a greedy repair
        (which searches from the free right vertices).
    method : int
        The method that ran: one of the ``METHOD_*`` constants (``METHOD_AUTO`` resolved).
    fingerprint : int or None
        :func:`solve_csr`: the fingerprint of the caller's index arrays as read; :func:`solve`:
        None.
    """
    # a cdef class, not a tuple: built in C (a freelist allocation and eight stores), read by
    # attribute in the wrapper; cheaper to build than a NamedTuple (a Python-level __new__)
    cdef readonly object match_left, right_load, fingerprint
    cdef readonly int64_t size, phases, work
    cdef readonly bint from_right
    cdef readonly int method

    def __repr__(self):
        return (f"Solution(size={self.size}, phases={self.phases}, work={self.work}, "
                f"from_right={self.from_right}, method={self.method})")


cdef struct TState:
    intp_t n_left, n_right
    const int64_t* indptr
    int32_t* ml          # right partner of each left vertex, -1 free
    int32_t* mr          # left partner of each right vertex, -1 free
    int64_t size
    int64_t phases       # PF+ phases / push-relabel global relabels
    int64_t work         # edges scanned
    int32_t* cptr        # transpose (right -> left), built on demand
    int32_t* cidx


# -- transpose ---------------------------------------------------------------------------

cdef int _build_csc(TState* s, const idx_t* ix) noexcept nogil:
    """The transpose (_csc.pxd's build_csc, shared with _hk). 0, or -1 (out of memory or
    more than INT32_MAX edges)."""
    return build_csc(s.n_left, s.n_right, s.indptr, ix, &s.cptr, &s.cidx)


# -- starts ------------------------------------------------------------------------------

cdef void _greedy(TState* s, const idx_t* ix) noexcept nogil:
    # the state's fields in locals: the extensions build with -fno-strict-aliasing, so
    # every store into mr/ml would otherwise reload them (and size, work) from the struct
    # (5-10 % of a solve on 1e3-1e4 edges, measured in one process against the struct form)
    cdef intp_t u, nl = s.n_left
    cdef int64_t e, end, size = 0, work = 0
    cdef int32_t j
    cdef int32_t* ml = s.ml
    cdef int32_t* mr = s.mr
    cdef const int64_t* indptr = s.indptr
    for u in range(nl):
        if ml[u] >= 0:
            continue
        end = indptr[u + 1]
        work += end - indptr[u]
        for e in range(indptr[u], end):
            j = <int32_t>ix[e]
            if mr[j] < 0:
                mr[j] = <int32_t>u
                ml[u] = j
                size += 1
                break
    s.size += size
    s.work += work


cdef int _count_right(TState* s, const idx_t* ix, intp_t* busy_r) noexcept nogil:
    """The transpose's first pass (column counts into ``s.cptr``, see _csc.pxd) and from it
    the number of right vertices with at least one edge. It serves the greedy shortcut (the
    count equals the matching's size exactly when no edge leads to a free right vertex), the
    side probe, and, when the search needs the transpose (from the right, push-relabel),
    :func:`csc_fill` finishes it without a second count. Before, the probe built the whole
    transpose to count (5-9 us of a 15-20 us solve on 1e3 edges, where PF+ from the left
    then did not use it). 0, or -1 (out of memory)."""
    cdef intp_t j, n = 0
    if csc_count(s.n_left, s.n_right, s.indptr, ix, &s.cptr) != 0:
        return -1
    for j in range(s.n_right):
        n += s.cptr[j + 1] > 0
    s.work += s.indptr[s.n_left]
    busy_r[0] = n
    return 0


cdef enum:
    # _pull_repair runs when at most one in REPAIR_FEW right vertices with an edge is left
    # free by the greedy pass (blocks at 1e6 edges: 1 of 41,646; every other family of
    # bench/families.py: 3-21 %), and gives up after REPAIR_PASSES passes over the edges
    # (each about a third of the transpose's cost), so that a miss costs at most about
    # one transpose more than the search it falls back to
    REPAIR_FEW = 1000
    REPAIR_PASSES = 4
    # METHOD_AUTO skips its greedy pass on graphs of at least pf_max_edges edges with fewer
    # than GREEDY_DENSE edges per left vertex whose right side the probe finds clearly
    # smaller (see _run); dense rows keep it (blocks: 22 per left vertex)
    GREEDY_DENSE = 8


cdef int _pull_repair(TState* s, const idx_t* ix, intp_t busy_r) noexcept nogil:
    """Augment the greedy matching from its few free right vertices without a transpose.

    Breadth-first phases from the free right vertices that have an edge (``s.cptr`` holds the
    column counts), one layer per pass over the CSR: a pass "pulls" every unreached left
    vertex u with an edge to a right vertex of the current layer (other than u's partner),
    records that right vertex as u's parent, and puts u's partner in the next layer. A free
    left vertex reached ends an augmenting path, followed back by the parents; the paths of a
    phase are flipped when their right vertices are disjoint from those already flipped (the
    others wait for the next phase). A phase whose layer grows no further proves that no
    augmenting path exists (Berge), and all busy right vertices matched proves it too
    (König: the right side is a cover). Returns 1 when the matching is maximum, 0 when the
    pass budget ran out first (the caller then searches as before, from this matching), -1
    when out of memory."""
    cdef intp_t nl = s.n_left, nr = s.n_right, u, j, n_end, k, passes = 0, grown
    cdef int32_t jj, v, w, mu
    cdef int8_t layer
    cdef int64_t e, end, work = 0
    cdef const int64_t* indptr = s.indptr
    cdef int32_t* ml = s.ml
    cdef int32_t* mr = s.mr
    # layers fit a byte (at most REPAIR_PASSES of them): a quarter of the cache an int32 takes
    cdef int8_t* lvl = <int8_t*>PyMem_RawMalloc((nr + 1) * sizeof(int8_t))
    cdef int32_t* par = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    cdef int32_t* ends = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    cdef int rc = 0
    cdef bint ok, exhausted = False
    if lvl == NULL or par == NULL or ends == NULL:
        PyMem_RawFree(lvl)
        PyMem_RawFree(par)
        PyMem_RawFree(ends)
        return -1
    while True:
        if s.size >= busy_r:
            rc = 1      # every right vertex with an edge is matched
            break
        s.phases += 1
        for j in range(nr):
            lvl[j] = 0 if mr[j] < 0 and s.cptr[j + 1] > 0 else -1
        for u in range(nl):
            par[u] = -1
        layer = 0
        n_end = 0
        grown = 0
        while True:
            if passes == REPAIR_PASSES:
                exhausted = True
                break
            passes += 1
            grown = 0
            for u in range(nl):
                if par[u] >= 0:
                    continue
                # locals: the byte-sized level writes may alias anything, so the compiler
                # would reload these from memory on every edge
                mu = ml[u]
                end = indptr[u + 1]
                for e in range(indptr[u], end):
                    jj = <int32_t>ix[e]
                    if lvl[jj] == layer and jj != mu:
                        par[u] = jj
                        if mu < 0:
                            ends[n_end] = <int32_t>u
                            n_end += 1
                        elif lvl[mu] < 0:
                            lvl[mu] = layer + 1
                            grown += 1
                        break
            work += indptr[nl]
            if n_end > 0 or grown == 0:
                break
            layer += 1
        if n_end == 0:
            # no free left vertex reached: the layers stopped growing (no augmenting path:
            # maximum), or the passes ran out first
            rc = 0 if exhausted else 1
            break
        # flip the paths whose right vertices are still untouched (lvl = -2 marks flipped)
        for k in range(n_end):
            w = ends[k]
            ok = True
            v = w
            while True:
                jj = par[v]
                if lvl[jj] == -2:
                    ok = False
                    break
                if mr[jj] < 0:
                    break
                v = mr[jj]
            if not ok:
                continue
            v = w
            while True:
                jj = par[v]
                u = mr[jj]
                lvl[jj] = -2
                mr[jj] = v
                ml[v] = jj
                if u < 0:
                    break
                v = <int32_t>u
            s.size += 1
    s.work += work
    PyMem_RawFree(lvl)
    PyMem_RawFree(par)
    PyMem_RawFree(ends)
    return rc


cdef int _karp_sipser(TState* s, const idx_t* ix) noexcept nogil:
    """Karp-Sipser: repeatedly match a degree-1 vertex (either side) to its only live
    neighbour; when none is left, match the lowest-numbered live left vertex to a live
    neighbour (that choice is the heuristic part). Degrees count live (unmatched)
    neighbours; matching a pair decrements its neighbours' degrees. Needs the transpose.
    Returns -1 on allocation failure."""
    cdef intp_t nl = s.n_left, nr = s.n_right
    cdef int64_t* dl = <int64_t*>PyMem_RawMalloc((nl + 1) * sizeof(int64_t))
    cdef int32_t* dr = <int32_t*>PyMem_RawMalloc((nr + 1) * sizeof(int32_t))
    # one queue for both sides: entry v >= 0 is left v, entry -1 - j is right j
    cdef int64_t* q = <int64_t*>PyMem_RawMalloc((nl + nr + 1) * sizeof(int64_t))
    cdef intp_t qh = 0, qt = 0, next_u = 0, u, j, w
    cdef int64_t e, v
    cdef const int32_t* cptr = s.cptr
    cdef const int32_t* cidx = s.cidx
    if dl == NULL or dr == NULL or q == NULL:
        PyMem_RawFree(dl)
        PyMem_RawFree(dr)
        PyMem_RawFree(q)
        return -1
    for u in range(nl):
        dl[u] = s.indptr[u + 1] - s.indptr[u]
        if dl[u] == 1:
            q[qt] = u
            qt += 1
    for j in range(nr):
        dr[j] = cptr[j + 1] - cptr[j]
        if dr[j] == 1:
            q[qt] = -1 - j
            qt += 1
    s.work += 2 * s.indptr[nl]
    while True:
        u = -1
        j = -1
        while qh < qt and u < 0:
            v = q[qh]
            qh += 1
            if v >= 0:
                if s.ml[v] < 0 and dl[v] > 0:
                    for e in range(s.indptr[v], s.indptr[v + 1]):
                        if s.mr[ix[e]] < 0:
                            u = v
                            j = ix[e]
                            break
                    s.work += s.indptr[v + 1] - s.indptr[v]
            else:
                w = -1 - v
                if s.mr[w] < 0 and dr[w] > 0:
                    for e in range(cptr[w], cptr[w + 1]):
                        if s.ml[cidx[e]] < 0:
                            u = cidx[e]
                            j = w
                            break
                    s.work += cptr[w + 1] - cptr[w]
        if u < 0:
            # no degree-1 vertex: the next live left vertex takes a live neighbour
            while next_u < nl and (s.ml[next_u] >= 0 or dl[next_u] <= 0):
                next_u += 1
            if next_u >= nl:
                break
            u = next_u
            for e in range(s.indptr[u], s.indptr[u + 1]):
                if s.mr[ix[e]] < 0:
                    j = ix[e]
                    break
            s.work += s.indptr[u + 1] - s.indptr[u]
            if j < 0:
                dl[u] = 0
                continue
        s.ml[u] = <int32_t>j
        s.mr[j] = <int32_t>u
        s.size += 1
        # u and j leave the graph: their live neighbours lose one degree
        for e in range(s.indptr[u], s.indptr[u + 1]):
            w = ix[e]
            if s.mr[w] < 0:
                dr[w] -= 1
                if dr[w] == 1:
                    q[qt] = -1 - w
                    qt += 1
        for e in range(cptr[j], cptr[j + 1]):
            w = cidx[e]
            if s.ml[w] < 0:
                dl[w] -= 1
                if dl[w] == 1:
                    q[qt] = w
                    qt += 1
        s.work += (s.indptr[u + 1] - s.indptr[u]) + (cptr[j + 1] - cptr[j])
        if qt > nl + nr - 1:
            # compact the consumed head (each vertex enters at most once per degree drop to 1,
            # which happens at most once per vertex; the guard keeps the buffer bounded)
            for v in range(qh, qt):
                q[v - qh] = q[v]
            qt -= qh
            qh = 0
    PyMem_RawFree(dl)
    PyMem_RawFree(dr)
    PyMem_RawFree(q)
    return 0


# -- PF+ -----------------------------------------------------------------------------------

cdef int _pothen_fan(TState* s, const idx_t* ix) noexcept nogil:
    """PF+ from the current matching. Returns -1 on allocation failure."""
    cdef intp_t nl = s.n_left, nr = s.n_right
    cdef int32_t* vis = <int32_t*>PyMem_RawCalloc(nr + 1, sizeof(int32_t))   # phase stamp
    cdef int64_t* look = <int64_t*>PyMem_RawMalloc((nl + 1) * sizeof(int64_t))
    cdef int64_t* it = <int64_t*>PyMem_RawMalloc((nl + 1) * sizeof(int64_t))
    cdef int32_t* stack = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    cdef int32_t* free = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    cdef intp_t n_free = 0, k, kept, top
    cdef int32_t phase = 0, u, v, j, jn, jo, w
    cdef int64_t e, end, work = 0, aug
    cdef bint fwd, found
    cdef const int64_t* indptr = s.indptr
    cdef int32_t* ml = s.ml
    cdef int32_t* mr = s.mr
    if vis == NULL or look == NULL or it == NULL or stack == NULL or free == NULL:
        PyMem_RawFree(vis)
        PyMem_RawFree(look)
        PyMem_RawFree(it)
        PyMem_RawFree(stack)
        PyMem_RawFree(free)
        return -1
    for k in range(nl):
        look[k] = indptr[k]
        if ml[k] < 0 and indptr[k + 1] > indptr[k]:
            free[n_free] = <int32_t>k
            n_free += 1
    while n_free > 0:
        phase += 1
        fwd = phase & 1
        aug = 0
        kept = 0
        for k in range(n_free):
            if k + AHEAD < n_free:
                prefetch_read(&ml[free[k + AHEAD]])
                prefetch_read(&look[free[k + AHEAD]])
            u = free[k]
            top = 0
            stack[0] = u
            it[u] = indptr[u] if fwd else indptr[u + 1] - 1
            found = False
            jn = -1
            while top >= 0:
                v = stack[top]
                # lookahead: a free neighbour ends the path here
                end = indptr[v + 1]
                e = look[v]
                while e < end:
                    j = <int32_t>ix[e]
                    e += 1
                    if mr[j] < 0:
                        jn = j
                        break
                work += e - look[v]
                look[v] = e
                if jn >= 0:
                    found = True
                    break
                # descend along the next unvisited neighbour (its partner is the next left)
                w = -1
                if fwd:
                    e = it[v]
                    while e < end:
                        j = <int32_t>ix[e]
                        e += 1
                        if vis[j] != phase:
                            vis[j] = phase
                            w = mr[j]
                            break
                    work += e - it[v]
                    it[v] = e
                else:
                    e = it[v]
                    while e >= indptr[v]:
                        j = <int32_t>ix[e]
                        e -= 1
                        if vis[j] != phase:
                            vis[j] = phase
                            w = mr[j]
                            break
                    work += it[v] - e
                    it[v] = e
                if w >= 0:
                    top += 1
                    stack[top] = w
                    it[w] = indptr[w] if fwd else indptr[w + 1] - 1
                else:
                    top -= 1
            if found:
                # flip the path: stack[top] takes jn, each lower level takes the old partner
                # of the level above
                while top >= 0:
                    v = stack[top]
                    jo = ml[v]
                    ml[v] = jn
                    mr[jn] = v
                    jn = jo
                    top -= 1
                aug += 1
            else:
                free[kept] = u
                kept += 1
        s.size += aug
        n_free = kept
        if aug == 0:
            break
    s.phases = phase
    s.work += work
    PyMem_RawFree(vis)
    PyMem_RawFree(look)
    PyMem_RawFree(it)
    PyMem_RawFree(stack)
    PyMem_RawFree(free)
    return 0


# -- push-relabel --------------------------------------------------------------------------

cdef int64_t _global_relabel(TState* s, const idx_t* ix, int32_t* psi, int32_t* queue,
                             int32_t inf) noexcept nogil:
    """Exact labels: psi[j] = alternating distance from right j to a free right vertex
    (even: 0, 2, 4, ...), ``inf`` if none. BFS over the transpose from the free right
    vertices: right j at distance d reaches each left neighbour u (not j's partner) at
    d + 1 and u's partner at d + 2. Returns the edges scanned."""
    cdef intp_t nr = s.n_right, qh = 0, qt = 0, j
    cdef int64_t e, work = 0
    cdef int32_t u, j2, d
    for j in range(nr):
        if s.mr[j] < 0:
            psi[j] = 0
            queue[qt] = <int32_t>j
            qt += 1
        else:
            psi[j] = inf
    while qh < qt:
        j = queue[qh]
        qh += 1
        d = psi[j] + 2
        for e in range(s.cptr[j], s.cptr[j + 1]):
            u = s.cidx[e]
            j2 = s.ml[u]
            if j2 >= 0 and psi[j2] == inf:
                psi[j2] = d
                queue[qt] = j2
                qt += 1
        work += s.cptr[j + 1] - s.cptr[j]
    return work


cdef int _push_relabel(TState* s, const idx_t* ix) noexcept nogil:
    """FIFO push-relabel with double pushes and global relabels. Returns -1 on allocation
    failure."""
    cdef intp_t nl = s.n_left, nr = s.n_right, k
    cdef int32_t inf = <int32_t>(2 * (nr if nr < nl else nl) + 2)
    cdef int32_t* psi = <int32_t*>PyMem_RawMalloc((nr + 1) * sizeof(int32_t))
    cdef int32_t* bfsq = <int32_t*>PyMem_RawMalloc((nr + 1) * sizeof(int32_t))
    # FIFO ring of active left vertices: each left vertex is in it at most once
    cdef intp_t cap = nl + 1
    cdef int32_t* ring = <int32_t*>PyMem_RawMalloc(cap * sizeof(int32_t))
    cdef intp_t head = 0, n_act = 0
    cdef int64_t pushes = 0, limit = nl + nr, work = 0, e, end, b1e
    cdef int32_t u, j, w, m1, m2, p, b1
    cdef const int64_t* indptr = s.indptr
    cdef int32_t* ml = s.ml
    cdef int32_t* mr = s.mr
    if psi == NULL or bfsq == NULL or ring == NULL:
        PyMem_RawFree(psi)
        PyMem_RawFree(bfsq)
        PyMem_RawFree(ring)
        return -1
    work += _global_relabel(s, ix, psi, bfsq, inf)
    s.phases = 1
    for k in range(nl):
        if ml[k] < 0 and indptr[k + 1] > indptr[k]:
            ring[n_act] = <int32_t>k
            n_act += 1
    while n_act > 0:
        u = ring[head]
        head += 1
        if head == cap:
            head = 0
        n_act -= 1
        # the two lowest labels among u's neighbours
        m1 = inf
        m2 = inf
        b1 = -1
        end = indptr[u + 1]
        for e in range(indptr[u], end):
            j = <int32_t>ix[e]
            p = psi[j]
            if p < m2:
                if p < m1:
                    m2 = m1
                    m1 = p
                    b1 = j
                    if p == 0:
                        # a free right vertex (label 0 means free or, stale, lowest): take it
                        # unless it is taken, then keep scanning for the second label
                        if mr[j] < 0:
                            m2 = 0
                            break
                else:
                    m2 = p
        work += end - indptr[u]
        if m1 >= inf:
            continue    # no augmenting path from u now or later: u stays free
        j = b1
        w = mr[j]
        mr[j] = u
        ml[u] = j
        psi[j] = m2 + 2 if m2 < inf - 2 else inf
        if w >= 0:
            ml[w] = -1
            k = head + n_act
            if k >= cap:
                k -= cap
            ring[k] = w
            n_act += 1
        else:
            s.size += 1
        pushes += 1
        if pushes >= limit:
            pushes = 0
            work += _global_relabel(s, ix, psi, bfsq, inf)
            s.phases += 1
    s.work += work
    PyMem_RawFree(psi)
    PyMem_RawFree(bfsq)
    PyMem_RawFree(ring)
    return 0


# -- entry point ---------------------------------------------------------------------------

cdef int _search(TState* s, const idx_t* ix, int method, int start) noexcept nogil:
    """The start and the search of ``method`` on the graph in ``s`` (transpose built on
    demand). Returns -1 on allocation failure."""
    cdef int rc = 0
    if (method == METHOD_PUSH_RELABEL or start == START_KARP_SIPSER) and s.cptr == NULL:
        rc = _build_csc(s, ix)
    if rc == 0:
        if start == START_KARP_SIPSER:
            rc = _karp_sipser(s, ix)
        elif start == START_GREEDY:
            _greedy(s, ix)
    if rc == 0:
        rc = _pothen_fan(s, ix) if method == METHOD_POTHEN_FAN else _push_relabel(s, ix)
    return rc


cdef int _init_state(TState* s, intp_t nl, intp_t nr, const int64_t* indptr) noexcept nogil:
    cdef intp_t k
    s.n_left = nl
    s.n_right = nr
    s.indptr = indptr
    s.size = 0
    s.phases = 0
    s.work = 0
    s.cptr = NULL
    s.cidx = NULL
    s.ml = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    s.mr = <int32_t*>PyMem_RawMalloc((nr + 1) * sizeof(int32_t))
    if s.ml == NULL or s.mr == NULL:
        PyMem_RawFree(s.ml)
        PyMem_RawFree(s.mr)
        s.ml = s.mr = NULL
        return -1
    for k in range(nl):
        s.ml[k] = -1
    for k in range(nr):
        s.mr[k] = -1
    return 0


cdef void _free_state(TState* s) noexcept nogil:
    PyMem_RawFree(s.ml)
    PyMem_RawFree(s.mr)
    PyMem_RawFree(s.cptr)
    PyMem_RawFree(s.cidx)
    s.ml = s.mr = s.cptr = s.cidx = NULL


cdef Solution _run(intp_t nl, const int64_t* indptr, const idx_t* ix, intp_t n_right, int method, int start,
                 int side, double ratio, int64_t pf_max_edges):
    """The solve of ``solve`` on raw arrays (``ix`` may be NULL when there is no edge);
    the result arrays are read-only (they become a Matching's as they are)."""
    cdef TState s, t
    cdef intp_t k, busy_l = 0, busy_r = 0
    cdef int rc = 0
    cdef bint transposed = side == SIDE_RIGHT, done = False, greedy_kept = False, left_smaller = False
    cdef bint counted = False, skip_greedy = False
    cdef int64_t* tptr = NULL
    cdef int64_t nnz = indptr[nl]
    cdef cnp.npy_intp dim
    cdef cnp.ndarray out_l, out_load
    cdef int64_t* ol
    cdef int64_t* od
    if _init_state(&s, nl, n_right, indptr) != 0:
        raise MemoryError("matching: cannot allocate the per-vertex state")
    t.ml = t.mr = t.cptr = t.cidx = NULL
    with nogil:
        if method == METHOD_AUTO and nnz > 0:
            # the greedy-first shortcut: a greedy pass on the CSR before any transpose is
            # built. When it matches every left vertex that has an edge, or leaves no edge
            # to a free right vertex (every right vertex with an edge is matched), one side
            # of the graph is covered by matched vertices, so no matching is larger (König)
            # and no search is needed. Otherwise the rules below choose the search, which
            # starts from this matching.
            if side == SIDE_PROBE and nnz >= pf_max_edges and nnz < GREEDY_DENSE * nl:
                # ... except on a large graph with sparse rows whose right side is clearly
                # smaller (rect, zipf, hard): there the greedy pass from the larger side
                # leaves 3-21 % of the right vertices free, so it is never maximum, and the
                # right-side search it would start does not recover its cost (auto was 1.3x
                # the named right-side PF+ on zipf at 1e5 edges). The probe's counts come
                # first; dense rows (blocks: 22 per left vertex, whose greedy pass is maximum
                # or nearly) keep the greedy pass
                for k in range(nl):
                    busy_l += s.indptr[k + 1] > s.indptr[k]
                rc = _count_right(&s, ix, &busy_r)
                counted = True
                skip_greedy = rc != 0 or busy_r < ratio * busy_l
        if method == METHOD_AUTO and nnz > 0 and not skip_greedy:
            _greedy(&s, ix)
            if counted:
                # (size <= busy_r <= n_right: every right vertex matched is the second test)
                done = s.size == busy_l or s.size == busy_r
            else:
                for k in range(nl):
                    busy_l += s.indptr[k + 1] > s.indptr[k]
                if s.size == busy_l or s.size == n_right:
                    done = True     # (every left or every right vertex matched: no edge scan)
                else:
                    rc = _count_right(&s, ix, &busy_r)
                    done = rc == 0 and busy_r == s.size
            if done:
                transposed = False
                method = METHOD_GREEDY
            elif rc == 0 and (busy_r - s.size) * REPAIR_FEW <= busy_r:
                # a handful of right vertices left free: augment from them without the
                # transpose a right-side search would need (blocks at 1e6 edges: 1 free)
                rc = _pull_repair(&s, ix, busy_r)
                done = rc == 1
                rc = -1 if rc < 0 else 0
                if done:
                    transposed = False
                    method = METHOD_GREEDY_REPAIR
            else:
                # kept as the search's start (from either side: a matching is symmetric);
                # it is what push-relabel's greedy start computes anyway, and PF+'s first
                # phase would find most of it again
                greedy_kept = True
        if done or rc != 0:
            pass
        elif side != SIDE_LEFT and nnz > 0:
            # the probe: vertices with at least one edge on each side; searches from the side
            # with fewer of them succeed more often and fail in smaller alternating trees, so
            # search from the right when it is clearly smaller. The column counts are the
            # transpose's first pass: they are kept for the transpose when a search needs it
            if s.cptr == NULL:
                rc = _count_right(&s, ix, &busy_r)
                if side == SIDE_PROBE:
                    for k in range(nl):
                        busy_l += s.indptr[k + 1] > s.indptr[k]
            if side == SIDE_PROBE:
                transposed = busy_r < ratio * busy_l
                # the mirror case: clearly fewer left vertices with an edge (a slot-expanded
                # b-matching: about two slots per type). Most right vertices stay free, so a
                # search from the left ends at once, while push-relabel would build the
                # transpose and relabel from every free right vertex
                left_smaller = busy_l < ratio * busy_r
        if done or rc != 0:
            pass
        elif method == METHOD_AUTO:
            method = (METHOD_POTHEN_FAN if transposed or left_smaller or nnz < pf_max_edges
                      else METHOD_PUSH_RELABEL)
            # each method's own start (as spare_core.graph.matching passes them when named); the
            # shortcut's greedy matching is push-relabel's greedy start already (a second
            # greedy pass over it found nothing and cost a pass over the rows)
            start = START_NONE if method == METHOD_POTHEN_FAN or greedy_kept else START_GREEDY
        if done or rc != 0:
            pass
        elif transposed and nnz > 0:
            # the transposed graph: left = our right vertices; its CSR is our transpose
            # (the left-side state is not needed: freed first, so the peak holds one state;
            # the shortcut's greedy matching is handed over instead, as the search's start)
            if not greedy_kept:
                PyMem_RawFree(s.ml)
                PyMem_RawFree(s.mr)
                s.ml = s.mr = NULL
            rc = csc_fill(s.n_left, s.n_right, s.indptr, ix, s.cptr, &s.cidx)
            if rc == 0:
                tptr = <int64_t*>PyMem_RawMalloc((n_right + 1) * sizeof(int64_t))
            if rc == 0 and tptr != NULL:
                for k in range(n_right + 1):
                    tptr[k] = s.cptr[k]
                PyMem_RawFree(s.cptr)
                s.cptr = NULL
            if rc != 0 or tptr == NULL:
                rc = -1
            elif greedy_kept:
                t.n_left, t.n_right, t.indptr = n_right, nl, tptr
                t.ml, t.mr, t.size, t.phases, t.work = s.mr, s.ml, s.size, 0, s.work
                t.cptr = t.cidx = NULL
                s.ml = s.mr = NULL
            else:
                rc = _init_state(&t, n_right, nl, tptr)
            if rc == 0:
                rc = _search(&t, <const int32_t*>s.cidx, method, start)
        else:
            transposed = False
            if s.cptr != NULL:
                if method == METHOD_PUSH_RELABEL:
                    # its global relabels run on the transpose: finish the one counted
                    rc = csc_fill(s.n_left, s.n_right, s.indptr, ix, s.cptr, &s.cidx)
                else:
                    PyMem_RawFree(s.cptr)      # the probe's counts, not needed by PF+
                    s.cptr = NULL
            if rc == 0:
                rc = _search(&s, ix, method, start)
        PyMem_RawFree(s.cptr)
        PyMem_RawFree(s.cidx)
        s.cptr = s.cidx = NULL
    if rc != 0:
        _free_state(&s)
        _free_state(&t)
        PyMem_RawFree(tptr)
        raise MemoryError("matching: cannot allocate the search's scratch")
    if transposed:
        # our left vertex k is the transposed graph's right vertex k
        _free_state(&s)
        s.ml, s.mr, s.size, s.phases, s.work = t.mr, t.ml, t.size, t.phases, t.work
        t.ml = t.mr = NULL
        _free_state(&t)
        PyMem_RawFree(tptr)
    # (PyArray_EMPTY rather than np.empty: a third of a microsecond each, on a 10 us solve)
    dim = nl
    out_l = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_INT64, 0)
    dim = n_right
    out_load = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_INT64, 0)
    ol = <int64_t*>cnp.PyArray_DATA(out_l)
    od = <int64_t*>cnp.PyArray_DATA(out_load)
    for k in range(nl):
        ol[k] = s.ml[k]
    for k in range(n_right):
        od[k] = s.mr[k] >= 0
    _free_state(&s)
    cnp.PyArray_CLEARFLAGS(out_l, cnp.NPY_ARRAY_WRITEABLE)
    cnp.PyArray_CLEARFLAGS(out_load, cnp.NPY_ARRAY_WRITEABLE)
    cdef Solution out = Solution.__new__(Solution)
    out.match_left, out.right_load, out.fingerprint = out_l, out_load, None
    out.size, out.phases, out.work = s.size, s.phases, s.work
    out.from_right = transposed or method == METHOD_GREEDY_REPAIR
    out.method = method
    return out


def solve(indptr, indices, intp_t n_right, int method, int start, int side=SIDE_LEFT, double ratio=0.0,
          int64_t pf_max_edges=0):
    """Maximum transversal of the CSR graph (``indptr`` int64, ``indices`` int32 or int64,
    validated by the caller: a private copy, never written by anyone during the solve).
    ``method`` METHOD_POTHEN_FAN or METHOD_PUSH_RELABEL; ``start`` one of CONSTANTS; ``side``
    SIDE_LEFT (search from the left vertices), SIDE_RIGHT (from the right: the same search on
    the transposed graph) or SIDE_PROBE (from the right when fewer right than ``ratio`` times
    the left vertices have an edge). ``method`` METHOD_AUTO: a greedy pass first, returned
    as it is (method METHOD_GREEDY) when it matched every left or every right vertex that
    has an edge; else, starting from it, PF+ if the search runs from the right or the graph
    has fewer than ``pf_max_edges`` edges or clearly fewer left than right vertices have an
    edge (fewer than ``ratio`` times: the mirror of the right-side rule), else push-relabel
    (``start`` is ignored). Returns a :class:`Solution` (``fingerprint`` None)."""
    if indices.dtype.itemsize == 8:
        return _run_views[int64_t](indptr, indices, n_right, method, start, side, ratio, pf_max_edges)
    return _run_views[int32_t](indptr, indices, n_right, method, start, side, ratio, pf_max_edges)


cdef object _run_views(const int64_t[::1] indptr, const idx_t[::1] indices, intp_t n_right, int method, int start,
                       int side, double ratio, int64_t pf_max_edges):
    return _run(indptr.shape[0] - 1, &indptr[0], &indices[0] if indices.shape[0] else NULL, n_right, method,
                start, side, ratio, pf_max_edges)



def solve_csr(indptr, indices, intp_t n_left, intp_t n_right, int method, int start, int side=SIDE_LEFT,
              double ratio=0.0, int64_t pf_max_edges=0):
    """``solve`` on the caller's own CSR arrays in one call: validation, the private copy the
    search reads and the fingerprint of the caller's arrays (one pass, _csr_check.pxd), then
    the solve on the copy, which is freed before returning. Returns ``solve``'s
    :class:`Solution` with the fingerprint, or None, before reading anything, when the arrays are not plain
    contiguous native int32/int64 ndarrays with ``len(indptr) == n_left + 1`` and
    ``n_left``, ``n_right`` in ``[0, 2**31 - 2]`` (the caller then takes its general path).
    Raises ValueError with ``_hk.csr_checked``'s messages for a malformed graph.

    The caller must make sure no other Python thread runs: the pass reads each entry once
    (a writer thread cannot slip an unchecked index into the copy), but the fingerprint it
    returns is the caller's arrays' as read, which a writer may change right after."""
    if not (plain_index_array(indptr) and plain_index_array(indices)):
        return None
    if (n_left < 0 or n_right < 0 or n_left > 2147483646 or n_right > 2147483646
            or cnp.PyArray_DIM(<cnp.ndarray>indptr, 0) != n_left + 1):
        return None
    cdef int ip8 = cnp.PyArray_ITEMSIZE(<cnp.ndarray>indptr) == 8
    cdef int ix8 = cnp.PyArray_ITEMSIZE(<cnp.ndarray>indices) == 8
    cdef const void* ip = cnp.PyArray_DATA(<cnp.ndarray>indptr)
    cdef const void* ix = cnp.PyArray_DATA(<cnp.ndarray>indices)
    cdef intp_t n_idx = cnp.PyArray_DIM(<cnp.ndarray>indices, 0)
    if ip8:
        if ix8:
            return _solve_checked[int64_t, int64_t](<const int64_t*>ip, n_left, <const int64_t*>ix, n_idx, n_right,
                                                    method, start, side, ratio, pf_max_edges)
        return _solve_checked[int64_t, int32_t](<const int64_t*>ip, n_left, <const int32_t*>ix, n_idx, n_right,
                                                method, start, side, ratio, pf_max_edges)
    if ix8:
        return _solve_checked[int32_t, int64_t](<const int32_t*>ip, n_left, <const int64_t*>ix, n_idx, n_right,
                                                method, start, side, ratio, pf_max_edges)
    return _solve_checked[int32_t, int32_t](<const int32_t*>ip, n_left, <const int32_t*>ix, n_idx, n_right,
                                            method, start, side, ratio, pf_max_edges)


cdef object _solve_checked(const ptr_t* ip, intp_t n_left, const idx_t* ix, intp_t n_idx, intp_t n_right,
                           int method, int start, int side, double ratio, int64_t pf_max_edges):
    cdef uint64_t h = 0
    cdef int rc
    cdef int64_t nnz = ip[n_left]
    msg = csr_header_error(ip[0], nnz, n_idx)
    if msg is not None:
        raise ValueError(msg)
    cdef int64_t* op = <int64_t*>PyMem_RawMalloc((n_left + 1) * sizeof(int64_t))
    cdef int32_t* ox = <int32_t*>PyMem_RawMalloc((nnz if nnz > 0 else 1) * sizeof(int32_t))
    if op == NULL or ox == NULL:
        PyMem_RawFree(op)
        PyMem_RawFree(ox)
        raise MemoryError("matching: cannot allocate the private copy of the graph")
    with nogil:
        rc = csr_check_copy(ip, n_left, ix, nnz, n_right, op, ox, &h)
    if rc != CHECK_OK:
        msg = csr_check_message(rc, ix, nnz, n_right, op[n_left])
        PyMem_RawFree(op)
        PyMem_RawFree(ox)
        raise ValueError(msg)
    cdef Solution out
    try:
        out = _run(n_left, op, ox if nnz > 0 else NULL, n_right, method, start, side, ratio, pf_max_edges)
    finally:
        PyMem_RawFree(op)
        PyMem_RawFree(ox)
    out.fingerprint = int(h)
    return out
