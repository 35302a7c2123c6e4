# cython: language_level=3
"""Maximum b-matching (right vertex ``j`` takes up to ``capacity[j]`` left vertices) by a
greedy pass and Pothen-Fan depth-first phases with native capacities: the one-shot path of
:func:`spare_core.matching.hopcroft_karp` for capacities other than 1 (``method="auto"`` or
``"pothen_fan"``). Warm starts and :class:`~spare_core.matching.IncrementalMatching` stay
with the Hopcroft-Karp kernel (``_hk``).

No validation here: :mod:`spare_core.matching` checks the graph (indptr int64, indices int32
or int64 in range) and the capacities (int64, >= 0, a private copy) first.

1. **Greedy**: left vertices in order, each takes its first neighbour with spare capacity.
   It is already maximum when (a) every left vertex with an edge to a right vertex of
   capacity > 0 is matched (the matched left vertices plus the capacity-0 right vertices
   are a vertex cover whose capacity-weighted size is the matching's), or (b) no edge
   leads to a right vertex with spare capacity (the saturated right vertices are such a
   cover); König's theorem for b-matchings then says no matching is larger, and nothing
   else runs (method GREEDY).
2. **PF+ with capacities** (Pothen and Fan 1990, with the lookahead and fairness of Duff,
   Kaya and Uçar, ACM TOMS 38(2), 2011), on the graph itself instead of the slot-expanded
   one: a right vertex with spare capacity is free; a saturated one leads on to each of
   its partners. A phase runs one DFS from each free left vertex, right vertices marked
   visited for the whole phase (so each left vertex enters at most one search per phase
   and a phase costs O(|E| + matched)); before descending, a left vertex looks for a
   neighbour with spare capacity through a lookahead pointer that only moves forward
   (capacity, once used up, stays used up). Odd phases scan rows forwards, even phases
   backwards. Phases repeat until one finds no augmenting path: in that phase every
   visit belonged to a failed search, so no augmenting path exists (the matching is
   maximum). The partners of right vertex ``j`` sit in ``slot[off[j] : off[j + 1]]``
   (``off[j + 1] - off[j]`` = its capacity clamped to what it can use), so flipping a path
   rewrites one slot per right vertex on it: the left vertex above takes the slot of the
   partner that moved on.
"""
from _types cimport intp_t, int32_t, int64_t, idx_t
from _prefetch cimport prefetch_read

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawCalloc, PyMem_RawFree

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef enum:
    METHOD_AUTO = 0         # greedy; stop there when it is maximum, else PF+ from it
    METHOD_POTHEN_FAN = 1   # greedy start, then PF+ phases until none augments
    METHOD_GREEDY = 3       # (reported by METHOD_AUTO only) the greedy pass was maximum
    AHEAD = 8               # prefetch distance (vertices) in the greedy pass

CONSTANTS = {"METHOD_AUTO": METHOD_AUTO, "METHOD_POTHEN_FAN": METHOD_POTHEN_FAN, "METHOD_GREEDY": METHOD_GREEDY}


cdef struct BState:
    intp_t n_left, n_right
    const int64_t* indptr
    const int64_t* cap   # the caller's capacities (validated int64 >= 0 copy)
    int64_t* ml          # right partner of each left vertex, -1 free (the result array itself)
    int32_t* spare       # usable capacity minus partners (usable: see _slots)
    int64_t* off         # right j's partners in slot[off[j] : off[j + 1] - spare[j]]
    int32_t* slot
    int32_t* free_l      # the free left vertices that have an edge to a right vertex of capacity > 0
    intp_t n_free
    int64_t size
    int64_t phases


cdef int _slots(BState* s, const idx_t* ix) noexcept nogil:
    """Usable capacities and the partner slots: right j can hold min(cap, n_left) partners;
    when these add up to more than the edges, clamp by the degree as well (a right vertex
    never has more partners than edges), so the slots never take more than one entry per
    edge. Returns -1 on allocation failure."""
    cdef intp_t nl = s.n_left, nr = s.n_right, k
    cdef int64_t nnz = s.indptr[nl], total = 0, c, e
    cdef int32_t* deg = NULL
    for k in range(nr):
        c = s.cap[k]
        total += c if c < nl else nl
    if total > nnz:
        deg = <int32_t*>PyMem_RawCalloc(nr + 1, sizeof(int32_t))
        if deg == NULL:
            return -1
        for e in range(nnz):
            deg[ix[e]] += 1
    total = 0
    for k in range(nr):
        s.off[k] = total
        c = s.cap[k]
        c = c if c < nl else nl
        if deg != NULL and c > deg[k]:
            c = deg[k]
        s.spare[k] = <int32_t>c
        total += c
    s.off[nr] = total
    PyMem_RawFree(deg)
    s.slot = <int32_t*>PyMem_RawMalloc((total + 1) * sizeof(int32_t))
    return 0 if s.slot != NULL else -1


cdef void _greedy(BState* s, const idx_t* ix) noexcept nogil:
    """Greedy start (each partner goes to the next free slot of its right vertex); fills
    ``free_l`` with the left vertices it left free that have a neighbour of capacity > 0
    (the others can never be matched)."""
    cdef intp_t u, nl = s.n_left
    cdef int64_t e, b, end
    cdef int32_t j
    cdef const int64_t* indptr = s.indptr
    cdef const int64_t* off = s.off
    cdef int32_t* spare = s.spare
    cdef int32_t* slot = s.slot
    cdef int64_t* ml = s.ml
    cdef bint live
    for u in range(nl):
        if u + AHEAD < nl and indptr[u + AHEAD] < indptr[u + AHEAD + 1]:
            prefetch_read(&spare[ix[indptr[u + AHEAD]]])
        b = indptr[u]
        end = indptr[u + 1]
        ml[u] = -1
        for e in range(b, end):
            j = <int32_t>ix[e]
            if spare[j] > 0:
                slot[off[j + 1] - spare[j]] = <int32_t>u
                spare[j] -= 1
                ml[u] = j
                s.size += 1
                break
        if ml[u] < 0 and b < end:
            live = False
            for e in range(b, end):
                if s.cap[ix[e]] > 0:
                    live = True
                    break
            if live:
                s.free_l[s.n_free] = <int32_t>u
                s.n_free += 1


cdef bint _right_saturated(BState* s, const idx_t* ix) noexcept nogil:
    """True when no edge leads to a right vertex with spare capacity (early exit)."""
    cdef int64_t e, nnz = s.indptr[s.n_left]
    cdef const int32_t* spare = s.spare
    for e in range(nnz):
        if spare[ix[e]] > 0:
            return False
    return True


cdef int _pothen_fan(BState* s, const idx_t* ix) noexcept nogil:
    """PF+ with capacities from the greedy matching in ``s``. Returns -1 on allocation
    failure. The scratch is calloc'ed or touched only as deep as the searches go, so a
    large graph with few free vertices pays for the pages its searches visit, not O(V)."""
    cdef intp_t nl = s.n_left, nr = s.n_right, k, top, kept, n_free = s.n_free
    cdef const int64_t* indptr = s.indptr
    cdef const int64_t* off = s.off
    cdef int64_t e, end, t, b
    cdef int64_t* ml = s.ml
    cdef int32_t* spare = s.spare
    cdef int32_t* slot = s.slot
    cdef int32_t* free_l = s.free_l
    cdef int32_t* vis = <int32_t*>PyMem_RawCalloc(nr + 1, sizeof(int32_t))   # phase stamp
    cdef int32_t* look = <int32_t*>PyMem_RawCalloc(nl + 1, sizeof(int32_t))  # lookahead, offset in the row
    cdef int32_t* sl = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))   # DFS stack: left vertex of each level,
    cdef int32_t* sj = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))   # the saturated right vertex it expands (-1 none),
    cdef int64_t* st = <int64_t*>PyMem_RawMalloc((nl + 1) * sizeof(int64_t))   # that one's next slot to try,
    cdef int64_t* se = <int64_t*>PyMem_RawMalloc((nl + 1) * sizeof(int64_t))   # and the left vertex's edge cursor
    cdef int32_t phase = 0, u, v, w, j, jn
    cdef int64_t aug
    cdef bint fwd, found
    if vis == NULL or look == NULL or sl == NULL or sj == NULL or st == NULL or se == NULL:
        PyMem_RawFree(vis)
        PyMem_RawFree(look)
        PyMem_RawFree(sl)
        PyMem_RawFree(sj)
        PyMem_RawFree(st)
        PyMem_RawFree(se)
        return -1
    while n_free > 0:
        phase += 1
        fwd = phase & 1
        aug = 0
        kept = 0
        for k in range(n_free):
            u = free_l[k]
            top = 0
            sl[0] = u
            sj[0] = -1
            se[0] = indptr[u] if fwd else indptr[u + 1] - 1
            found = False
            jn = -1
            while top >= 0:
                v = sl[top]
                j = sj[top]
                if j >= 0:
                    # expanding saturated j: its next partner moves down a level
                    t = st[top]
                    if t < off[j + 1]:
                        st[top] = t + 1
                        w = slot[t]
                        top += 1
                        sl[top] = w
                        sj[top] = -1
                        se[top] = indptr[w] if fwd else indptr[w + 1] - 1
                        continue
                    sj[top] = -1
                else:
                    # first time at this level: the lookahead (a neighbour with spare
                    # capacity ends the path here; capacity never comes back, so the
                    # pointer only moves forward and later visits need not look again)
                    b = indptr[v]
                    end = indptr[v + 1]
                    e = b + look[v]
                    while e < end:
                        jn = <int32_t>ix[e]
                        if spare[jn] > 0:
                            break
                        e += 1
                    look[v] = <int32_t>(e - b)
                    if e < end:
                        found = True
                        break
                    jn = -1
                # descend along the next unvisited neighbour (saturated: the lookahead found none free)
                j = -1
                e = se[top]
                if fwd:
                    end = indptr[v + 1]
                    while e < end:
                        w = <int32_t>ix[e]
                        e += 1
                        if vis[w] != phase:
                            vis[w] = phase
                            j = w
                            break
                else:
                    end = indptr[v]
                    while e >= end:
                        w = <int32_t>ix[e]
                        e -= 1
                        if vis[w] != phase:
                            vis[w] = phase
                            j = w
                            break
                se[top] = e
                if j >= 0:
                    sj[top] = j
                    st[top] = off[j]
                else:
                    top -= 1
            if found:
                # flip: sl[top] takes a new slot of jn; each lower level's left vertex takes the
                # slot of the partner that moved on (the slot before sj's cursor)
                v = sl[top]
                ml[v] = jn
                slot[off[jn + 1] - spare[jn]] = v
                spare[jn] -= 1
                while top > 0:
                    top -= 1
                    v = sl[top]
                    slot[st[top] - 1] = v
                    ml[v] = sj[top]
                aug += 1
            else:
                free_l[kept] = u
                kept += 1
        s.size += aug
        n_free = kept
        if aug == 0:
            break
    s.phases = phase
    PyMem_RawFree(vis)
    PyMem_RawFree(look)
    PyMem_RawFree(sl)
    PyMem_RawFree(sj)
    PyMem_RawFree(st)
    PyMem_RawFree(se)
    return 0


cdef object _run(const int64_t[::1] indptr, const idx_t[::1] indices, intp_t n_right,
                 const int64_t[::1] cap, int method):
    cdef BState s
    cdef intp_t nl = indptr.shape[0] - 1, k
    cdef const idx_t* ix = &indices[0] if indices.shape[0] else NULL
    cdef int rc = 0
    cdef bint done = False
    cdef cnp.ndarray[cnp.int64_t, ndim=1] out_l = np.empty(nl, dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=1] out_load = np.empty(n_right, dtype=np.int64)
    cdef int64_t* od = <int64_t*>out_load.data
    s.n_left, s.n_right, s.indptr = nl, n_right, &indptr[0]
    s.cap = &cap[0] if n_right else NULL
    s.ml = <int64_t*>out_l.data
    s.size = s.phases = 0
    s.n_free = 0
    s.slot = NULL
    s.spare = <int32_t*>PyMem_RawMalloc((n_right + 1) * sizeof(int32_t))
    s.off = <int64_t*>PyMem_RawMalloc((n_right + 1) * sizeof(int64_t))
    s.free_l = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    with nogil:
        if s.spare == NULL or s.off == NULL or s.free_l == NULL:
            rc = -1
        else:
            rc = _slots(&s, ix)
        if rc == 0:
            _greedy(&s, ix)
            if s.n_free == 0 or _right_saturated(&s, ix):
                # maximum already (the module docstring, step 1): a PF+ phase would find nothing
                done = True
            if done and method == METHOD_AUTO:
                method = METHOD_GREEDY
            elif not done:
                method = METHOD_POTHEN_FAN
                rc = _pothen_fan(&s, ix)
        if rc == 0:
            for k in range(n_right):
                od[k] = s.off[k + 1] - s.off[k] - s.spare[k]
    PyMem_RawFree(s.spare)
    PyMem_RawFree(s.off)
    PyMem_RawFree(s.slot)
    PyMem_RawFree(s.free_l)
    if rc != 0:
        raise MemoryError("b-matching: cannot allocate the search's scratch")
    return out_l, out_load, s.size, s.phases, method


def solve(indptr, indices, intp_t n_right, cap, int method):
    """Maximum b-matching of the CSR graph (``indptr`` int64, ``indices`` int32 or int64,
    validated private copies) with right capacities ``cap`` (int64 >= 0, length
    ``n_right``, validated). ``method`` METHOD_AUTO (greedy; returned as it is, method
    METHOD_GREEDY, when it is maximum; else PF+ from it) or METHOD_POTHEN_FAN (the same,
    reported as PF+). Returns ``(match_left int64, right_load int64, size, phases, method)``."""
    if indices.dtype.itemsize == 8:
        return _run[int64_t](indptr, indices, n_right, cap, method)
    return _run[int32_t](indptr, indices, n_right, cap, method)
