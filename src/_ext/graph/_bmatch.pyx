# cython: language_level=3
"""Maximum b-matching (right vertex ``j`` takes up to ``capacity[j]`` left vertices) by a
greedy pass and Pothen-Fan depth-first phases with native capacities: the one-shot path of
:func:`spare_core.graph.matching.hopcroft_karp` for capacities other than 1 (``method="auto"`` or
``"pothen_fan"``). Warm starts and :class:`~spare_core.graph.matching.IncrementalMatching` stay
with the Hopcroft-Karp kernel (``_hk``).

``solve`` takes a graph :mod:`spare_core.graph.matching` has validated (indptr int64, indices int32
or int64 in range, a private copy); ``solve_csr`` takes the caller's own CSR arrays and
validates and copies them itself (``_csr_check.pxd``) before the same solve runs on the copy.
Both check and copy the capacities (>= 0) in the pass that sets up the right vertices.

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
   maximum). The partners of a right vertex form a singly linked list through the
   left vertices (its head in the right vertex's record, next to its spare count, so
   that the greedy pays one cache miss per right vertex it tries); flipping a path
   replaces, in each right vertex on it, the partner that moved on by the left vertex
   above it.
"""
from _types cimport intp_t, int32_t, int64_t, uint64_t, idx_t
from _prefetch cimport prefetch_write
from _csr_check cimport ptr_t, csr_check_copy, CHECK_OK, plain_index_array, csr_header_error, csr_check_message

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawCalloc, PyMem_RawFree
cimport cython

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    /* The O(V) passes around the search, in C so that they vectorise (no struct fields through
       Cython's pointers, no type test inside the loop): the capacities' check and copy with
       the right records (spare = min(capacity, n_left), head = -1; the records are
       (spare, head) int32 pairs), and the loads read back from them; with an AVX2 clone
       (GCC target_clones on x86-64 Linux) for the 64-bit compares. */
    #include <stdint.h>
    #ifndef SPARE_CLONES   /* as in _csr_check.pxd: AVX2 has the 64-bit compares SSE2 lacks */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
        && !defined(__SANITIZE_ADDRESS__)
    #define SPARE_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define SPARE_CLONES
    #endif
    #endif
    #define SPARE_B_CAPS(NAME, T)                                                                 \
    SPARE_CLONES static int64_t NAME(const T* restrict cin, int64_t n, int64_t nl, int64_t* restrict cap,      \
                        int32_t* restrict rec, int* not_one) {                                    \
        int64_t lo = 0; int no = 0;                                                               \
        for (int64_t k = 0; k < n; k++) {                                                         \
            int64_t c = cin[k];                                                                   \
            lo = c < lo ? c : lo;                                                                 \
            no |= c != 1;                                                                         \
            cap[k] = c;                                                                           \
            rec[2 * k] = (int32_t)(c < nl ? c : nl);                                              \
            rec[2 * k + 1] = -1;                                                                  \
        }                                                                                         \
        *not_one = no;                                                                            \
        return lo;                                                                                \
    }
    SPARE_B_CAPS(spare_b_caps32, int32_t)
    SPARE_B_CAPS(spare_b_caps64, int64_t)
    SPARE_CLONES static void spare_b_loads(const int64_t* restrict cap, const int32_t* restrict rec, int64_t n,
                              int64_t nl, int64_t* restrict load) {
        for (int64_t k = 0; k < n; k++) {
            int64_t c = cap[k];
            load[k] = (c < nl ? c : nl) - rec[2 * k];
        }
    }
    """
    int64_t spare_b_caps32(const int32_t* cin, int64_t n, int64_t nl, int64_t* cap, int32_t* rec,
                           int* not_one) noexcept nogil
    int64_t spare_b_caps64(const int64_t* cin, int64_t n, int64_t nl, int64_t* cap, int32_t* rec,
                           int* not_one) noexcept nogil
    void spare_b_loads(const int64_t* cap, const int32_t* rec, int64_t n, int64_t nl, int64_t* load) noexcept nogil


cdef enum:
    METHOD_AUTO = 0         # greedy; stop there when it is maximum, else PF+ from it
    METHOD_POTHEN_FAN = 1   # greedy start, then PF+ phases until none augments
    METHOD_GREEDY = 3       # (reported by METHOD_AUTO only) the greedy pass was maximum
    AHEAD = 8               # prefetch distance (vertices) in the greedy pass

CONSTANTS = {"METHOD_AUTO": METHOD_AUTO, "METHOD_POTHEN_FAN": METHOD_POTHEN_FAN, "METHOD_GREEDY": METHOD_GREEDY}


@cython.final
@cython.freelist(4)
cdef class Solution:
    """What :func:`solve` and :func:`solve_csr` return, read by name.

    Attributes
    ----------
    match_left : ndarray of int64, read-only
        Right partner of each left vertex, -1 if unmatched.
    right_load : ndarray of int64, read-only
        Left vertices matched to each right vertex.
    capacity : ndarray of int64, read-only
        The validated copy of the capacities the solve used.
    size, phases : int
        Matched left vertices; PF+ phases (0 when the greedy pass was already maximum).
    method : int
        ``METHOD_GREEDY`` or ``METHOD_POTHEN_FAN``: what ran.
    fingerprint : int or None
        :func:`solve_csr`: the fingerprint of the caller's index arrays as read; :func:`solve`:
        None.
    """
    # a cdef class rather than a tuple read by position (see _transversal.Solution)
    cdef readonly object match_left, right_load, capacity, fingerprint
    cdef readonly int64_t size, phases
    cdef readonly int method

    def __repr__(self):
        return f"Solution(size={self.size}, phases={self.phases}, method={self.method})"


cdef struct RightB:         # per right vertex: one record, so the greedy's test and update are one cache miss
    # (read as int32 pairs by the C passes above: keep the two fields in this order)
    int32_t spare            # usable capacity (capacity clamped to n_left) minus partners
    int32_t head             # first partner (-1 none); the rest linked through BState.nxt


cdef struct BState:
    intp_t n_left, n_right
    const int64_t* indptr
    const int64_t* cap   # the caller's capacities (validated int64 >= 0 copy)
    int64_t* ml          # right partner of each left vertex, -1 free (the result array itself)
    RightB* R
    int32_t* nxt         # next partner of the same right vertex (-1 = last)
    int32_t* free_l      # the free left vertices that have an edge to a right vertex of capacity > 0
    intp_t n_free
    int64_t size
    int64_t phases


cdef void _greedy(BState* s, const idx_t* ix) noexcept nogil:
    """Greedy start; fills ``free_l`` with the left vertices it left free that have a
    neighbour of capacity > 0 (the others can never be matched)."""
    cdef intp_t u, nl = s.n_left
    cdef int64_t e, b, end
    cdef int32_t j
    cdef const int64_t* indptr = s.indptr
    cdef RightB* R = s.R
    cdef int32_t* nxt = s.nxt
    cdef int64_t* ml = s.ml
    cdef bint live
    for u in range(nl):
        if u + AHEAD < nl and indptr[u + AHEAD] < indptr[u + AHEAD + 1]:
            prefetch_write(&R[ix[indptr[u + AHEAD]]])
        b = indptr[u]
        end = indptr[u + 1]
        ml[u] = -1
        for e in range(b, end):
            j = <int32_t>ix[e]
            if R[j].spare > 0:
                R[j].spare -= 1
                nxt[u] = R[j].head
                R[j].head = <int32_t>u
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
    cdef const RightB* R = s.R
    for e in range(nnz):
        if R[ix[e]].spare > 0:
            return False
    return True


cdef int _pothen_fan(BState* s, const idx_t* ix) noexcept nogil:
    """PF+ with capacities from the greedy matching in ``s``. Returns -1 on allocation
    failure. The scratch is calloc'ed or touched only as deep as the searches go, so a
    large graph with few free vertices pays for the pages its searches visit, not O(V)."""
    cdef intp_t nl = s.n_left, nr = s.n_right, k, top, kept, n_free = s.n_free
    cdef const int64_t* indptr = s.indptr
    cdef int64_t e, end, b
    cdef int64_t* ml = s.ml
    cdef RightB* R = s.R
    cdef int32_t* nxt = s.nxt
    cdef int32_t* free_l = s.free_l
    cdef int32_t* vis = <int32_t*>PyMem_RawCalloc(nr + 1, sizeof(int32_t))   # phase stamp
    cdef int32_t* look = <int32_t*>PyMem_RawCalloc(nl + 1, sizeof(int32_t))  # lookahead, offset in the row
    # the DFS stack, one level per left vertex on the path: the left vertex, the saturated
    # right vertex it is expanding (-1: none), where that one's partner list was left (the
    # partner before the one last tried, -1: the head, -2: none tried yet), the edge cursor
    cdef int32_t* sl = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    cdef int32_t* sj = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    cdef int32_t* sp = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    cdef int64_t* se = <int64_t*>PyMem_RawMalloc((nl + 1) * sizeof(int64_t))
    cdef int32_t phase = 0, u, v, w, j, jn, p, nw, nv
    cdef int64_t aug
    cdef bint fwd, found
    if vis == NULL or look == NULL or sl == NULL or sj == NULL or sp == NULL or se == NULL:
        PyMem_RawFree(vis)
        PyMem_RawFree(look)
        PyMem_RawFree(sl)
        PyMem_RawFree(sj)
        PyMem_RawFree(sp)
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
                    # expanding saturated j: its next partner moves down a level (the one
                    # last tried is still in sl[top + 1])
                    if sp[top] == -2:
                        p = -1
                        w = R[j].head
                    else:
                        p = sl[top + 1]
                        w = nxt[p]
                    if w >= 0:
                        sp[top] = p
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
                        if R[jn].spare > 0:
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
                    sp[top] = -2
                else:
                    top -= 1
            if found:
                # flip: sl[top] joins jn's partners; each lower level's left vertex takes the
                # list position of the partner that moved on (sl[k + 1], after sp[k] in
                # sj[k]'s list), inheriting its successor
                w = sl[top]
                nw = nxt[w]
                nxt[w] = R[jn].head
                R[jn].head = w
                R[jn].spare -= 1
                ml[w] = jn
                while top > 0:
                    top -= 1
                    v = sl[top]
                    j = sj[top]
                    if sp[top] < 0:
                        R[j].head = v
                    else:
                        nxt[sp[top]] = v
                    nv = nxt[v]      # (v's old successor, if v was matched: used one level down)
                    nxt[v] = nw
                    nw = nv
                    ml[v] = j
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
    PyMem_RawFree(sp)
    PyMem_RawFree(se)
    return 0


cdef int _solve(BState* s, const idx_t* ix, int* method) noexcept nogil:
    """The greedy, the maximality test, then PF+ when needed; ``method`` in: METHOD_AUTO or
    METHOD_POTHEN_FAN, out: what ran. Returns -1 on allocation failure."""
    cdef bint done
    _greedy(s, ix)
    # maximum already (the module docstring, step 1): a PF+ phase would find nothing
    done = s.n_free == 0 or _right_saturated(s, ix)
    if done and method[0] == METHOD_AUTO:
        method[0] = METHOD_GREEDY
    elif not done:
        method[0] = METHOD_POTHEN_FAN
        return _pothen_fan(s, ix)
    return 0


cdef inline bint _native_vector(object a, intp_t n):
    """A C-contiguous 1-D int32/int64 ndarray of length n (what the kernel reads raw)."""
    return (isinstance(a, cnp.ndarray) and cnp.PyArray_NDIM(<cnp.ndarray>a) == 1
            and cnp.PyArray_DIM(<cnp.ndarray>a, 0) == n and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_TYPE(<cnp.ndarray>a) in (cnp.NPY_INT32, cnp.NPY_INT64))


cdef RightB* _right_records(object capacity, intp_t n_right, intp_t nl, int64_t* cap, int64_t* lo_out,
                            bint* unit_out) noexcept:
    """The capacities' check, private int64 copy ``cap`` and the right records in one pass
    (with the GIL: ``capacity`` is the caller's contiguous int32/int64 array of length
    ``n_right``): the smallest value (or 0) in ``lo_out``, whether every one is 1 in
    ``unit_out``. NULL on allocation failure."""
    cdef bint cap64 = cnp.PyArray_ITEMSIZE(<cnp.ndarray>capacity) == 8
    cdef const void* cin = cnp.PyArray_DATA(<cnp.ndarray>capacity)
    cdef RightB* R = <RightB*>PyMem_RawMalloc((n_right + 1) * sizeof(RightB))
    cdef int64_t lo
    cdef int not_one = 0
    if R == NULL:
        return NULL
    if cap64:
        lo = spare_b_caps64(<const int64_t*>cin, n_right, nl, cap, <int32_t*>R, &not_one)
    else:
        lo = spare_b_caps32(<const int32_t*>cin, n_right, nl, cap, <int32_t*>R, &not_one)
    lo_out[0] = lo
    unit_out[0] = not not_one
    return R


cdef Solution _solve_owned(intp_t nl, const int64_t* ip, const void* ix, bint ix64, intp_t n_right, object cap_a,
                         RightB* R, int method):
    """The solve on a validated graph (``ip`` int64, ``ix`` int32 or int64) with the right
    records ``R`` from :func:`_right_records`, which it frees. Returns a :class:`Solution`
    (its three arrays read-only, ``fingerprint`` None)."""
    cdef cnp.npy_intp dims[1]
    try:
        dims[0] = nl
        out_l = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INT64, 0)
        dims[0] = n_right
        out_load = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INT64, 0)
    except MemoryError:
        PyMem_RawFree(R)
        raise
    cdef int64_t* od = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>out_load)
    cdef const int64_t* cap = <const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>cap_a)
    cdef BState s
    cdef int rc = 0
    s.n_left, s.n_right, s.indptr, s.cap = nl, n_right, ip, cap
    s.ml = <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>out_l)
    s.size = s.phases = 0
    s.n_free = 0
    s.R = R
    s.nxt = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    s.free_l = <int32_t*>PyMem_RawMalloc((nl + 1) * sizeof(int32_t))
    with nogil:
        if s.nxt == NULL or s.free_l == NULL:
            rc = -1
        elif ix64:
            rc = _solve(&s, <const int64_t*>ix, &method)
        else:
            rc = _solve(&s, <const int32_t*>ix, &method)
        if rc == 0:
            spare_b_loads(cap, <const int32_t*>s.R, n_right, nl, od)
    PyMem_RawFree(s.R)
    PyMem_RawFree(s.nxt)
    PyMem_RawFree(s.free_l)
    if rc != 0:
        raise MemoryError("b-matching: cannot allocate the search's scratch")
    cnp.PyArray_CLEARFLAGS(<cnp.ndarray>out_l, cnp.NPY_ARRAY_WRITEABLE)
    cnp.PyArray_CLEARFLAGS(<cnp.ndarray>out_load, cnp.NPY_ARRAY_WRITEABLE)
    cnp.PyArray_CLEARFLAGS(<cnp.ndarray>cap_a, cnp.NPY_ARRAY_WRITEABLE)
    cdef Solution out = Solution.__new__(Solution)
    out.match_left, out.right_load, out.capacity, out.fingerprint = out_l, out_load, cap_a, None
    out.size, out.phases, out.method = s.size, s.phases, method
    return out


def solve(indptr, indices, intp_t n_right, capacity, int method):
    """Maximum b-matching of the CSR graph (``indptr`` int64, ``indices`` int32 or int64:
    validated private copies, read as raw arrays) with right capacities ``capacity`` (any
    C-contiguous int32/int64 array of length ``n_right``: checked >= 0 and copied here, so
    the caller needs no separate pass). ``method`` METHOD_AUTO (greedy; returned as it is,
    method METHOD_GREEDY, when it is maximum; else PF+ from it) or METHOD_POTHEN_FAN (the
    same, reported as PF+). Returns a :class:`Solution` (match_left, right_load, the int64
    capacity copy, size, phases, method; the arrays read-only), or None without solving when every
    capacity is 1 (the caller's ordinary-matching kernels are faster there). ValueError
    "capacity must be >= 0, got x" (the smallest value) before any work otherwise."""
    if method != METHOD_AUTO and method != METHOD_POTHEN_FAN:
        raise ValueError(f"method must be METHOD_AUTO or METHOD_POTHEN_FAN, got {method}")
    if not (isinstance(indptr, cnp.ndarray) and cnp.PyArray_TYPE(<cnp.ndarray>indptr) == cnp.NPY_INT64
            and cnp.PyArray_NDIM(<cnp.ndarray>indptr) == 1 and cnp.PyArray_DIM(<cnp.ndarray>indptr, 0) >= 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>indptr)):
        raise TypeError("indptr must be a contiguous int64 array")
    cdef intp_t nl = cnp.PyArray_DIM(<cnp.ndarray>indptr, 0) - 1
    cdef const int64_t* ip = <const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>indptr)
    cdef intp_t nnz_max = cnp.PyArray_DIM(<cnp.ndarray>indices, 0) if isinstance(indices, cnp.ndarray) else -1
    if not _native_vector(indices, nnz_max) or ip[nl] > nnz_max or ip[0] != 0:
        raise TypeError("indices must be a contiguous int32/int64 array holding indptr[-1] entries")
    if not _native_vector(capacity, n_right):
        raise TypeError(f"capacity must be a contiguous int32/int64 array of length {n_right}")
    cdef cnp.npy_intp dims[1]
    dims[0] = n_right
    cap_a = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INT64, 0)
    cdef int64_t lo
    cdef bint unit
    cdef RightB* R = _right_records(capacity, n_right, nl, <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>cap_a), &lo,
                                    &unit)
    if R == NULL:
        raise MemoryError("b-matching: cannot allocate the per-vertex state")
    if lo < 0 or unit:
        PyMem_RawFree(R)
        if lo < 0:
            raise ValueError(f"capacity must be >= 0, got {lo}")
        return None
    return _solve_owned(nl, ip, cnp.PyArray_DATA(<cnp.ndarray>indices),
                        cnp.PyArray_TYPE(<cnp.ndarray>indices) == cnp.NPY_INT64, n_right, cap_a, R, method)


def solve_csr(indptr, indices, intp_t n_left, intp_t n_right, capacity, int method):
    """``solve`` on the caller's own CSR arrays and capacities in one call: the capacities'
    check and copy, the graph's validating copy and fingerprint (one pass,
    ``_csr_check.pxd``, the fingerprint ``_hk.csr_checked`` gives), the solve on the
    copy (freed before returning) and read-only results. Returns ``solve``'s Solution with the
    fingerprint; 1, having read only the capacities, when every capacity is 1 (the caller
    takes its ordinary-matching path); None, before reading anything, when the arrays are
    not plain contiguous native int32/int64 ndarrays with ``len(indptr) == n_left + 1``,
    ``len(capacity) == n_right`` and ``n_left``, ``n_right`` in ``[0, 2**31 - 2]`` (the
    caller's general path). Errors in the general path's order: ValueError with
    ``_hk.csr_checked``'s messages for a malformed graph, then "capacity must be >= 0, got
    x".

    The caller must make sure no other Python thread runs (as for
    ``_transversal.solve_csr``): each graph entry is read once, but the fingerprint is that
    of the caller's arrays as read."""
    if method != METHOD_AUTO and method != METHOD_POTHEN_FAN:
        raise ValueError(f"method must be METHOD_AUTO or METHOD_POTHEN_FAN, got {method}")
    if not (plain_index_array(indptr) and plain_index_array(indices) and plain_index_array(capacity)):
        return None
    if (n_left < 0 or n_right < 0 or n_left > 2147483646 or n_right > 2147483646
            or cnp.PyArray_DIM(<cnp.ndarray>indptr, 0) != n_left + 1
            or cnp.PyArray_DIM(<cnp.ndarray>capacity, 0) != n_right):
        return None
    cdef cnp.npy_intp dims[1]
    dims[0] = n_right
    cap_a = cnp.PyArray_EMPTY(1, dims, cnp.NPY_INT64, 0)
    cdef int64_t lo
    cdef bint unit
    cdef RightB* R = _right_records(capacity, n_right, n_left, <int64_t*>cnp.PyArray_DATA(<cnp.ndarray>cap_a),
                                    &lo, &unit)
    if R == NULL:
        raise MemoryError("b-matching: cannot allocate the per-vertex state")
    if unit and lo >= 0:
        PyMem_RawFree(R)
        return 1
    cdef bint ip8 = cnp.PyArray_ITEMSIZE(<cnp.ndarray>indptr) == 8
    cdef bint ix8 = cnp.PyArray_ITEMSIZE(<cnp.ndarray>indices) == 8
    cdef const void* ip = cnp.PyArray_DATA(<cnp.ndarray>indptr)
    cdef const void* ix = cnp.PyArray_DATA(<cnp.ndarray>indices)
    cdef intp_t n_idx = cnp.PyArray_DIM(<cnp.ndarray>indices, 0)
    if ip8:
        if ix8:
            return _solve_checked[int64_t, int64_t](<const int64_t*>ip, n_left, <const int64_t*>ix, n_idx, n_right,
                                                    cap_a, R, lo, method)
        return _solve_checked[int64_t, int32_t](<const int64_t*>ip, n_left, <const int32_t*>ix, n_idx, n_right,
                                                cap_a, R, lo, method)
    if ix8:
        return _solve_checked[int32_t, int64_t](<const int32_t*>ip, n_left, <const int64_t*>ix, n_idx, n_right,
                                                cap_a, R, lo, method)
    return _solve_checked[int32_t, int32_t](<const int32_t*>ip, n_left, <const int32_t*>ix, n_idx, n_right,
                                            cap_a, R, lo, method)


cdef object _solve_checked(const ptr_t* ip, intp_t n_left, const idx_t* ix, intp_t n_idx, intp_t n_right,
                           object cap_a, RightB* R, int64_t lo, int method):
    """solve_csr after the capacity pass: owns ``R`` (freed on every path)."""
    cdef uint64_t h = 0
    cdef int rc
    cdef int64_t nnz = ip[n_left]    # read once: it sizes the copy and bounds the pass
    cdef int64_t* op = NULL
    cdef int32_t* ox = NULL
    msg = csr_header_error(ip[0], nnz, n_idx)
    if msg is None:
        op = <int64_t*>PyMem_RawMalloc((n_left + 1) * sizeof(int64_t))
        ox = <int32_t*>PyMem_RawMalloc((nnz if nnz > 0 else 1) * sizeof(int32_t))
        if op == NULL or ox == NULL:
            PyMem_RawFree(op)
            PyMem_RawFree(ox)
            PyMem_RawFree(R)
            raise MemoryError("b-matching: cannot allocate the private copy of the graph")
        with nogil:
            rc = csr_check_copy(ip, n_left, ix, nnz, n_right, op, ox, &h)
        if rc != CHECK_OK:
            msg = csr_check_message(rc, ix, nnz, n_right, op[n_left])
    if msg is None and lo < 0:
        msg = f"capacity must be >= 0, got {lo}"
    if msg is not None:
        PyMem_RawFree(op)
        PyMem_RawFree(ox)
        PyMem_RawFree(R)
        raise ValueError(msg)
    cdef Solution out
    try:
        out = _solve_owned(n_left, op, ox, False, n_right, cap_a, R, method)
    finally:
        PyMem_RawFree(op)
        PyMem_RawFree(ox)
    out.fingerprint = int(h)
    return out
