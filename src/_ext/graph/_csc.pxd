# The transpose of a CSR biadjacency (right -> left adjacency), shared by the matching
# kernels (_hk's pruning and Karp-Sipser start, _transversal's push-relabel relabels and its
# right-side search). Only a `cdef inline` function lives here: cimporting this file
# compiles it into each kernel, fused over the kernel's index type, no runtime import.
#
#   indptr int64[n_left + 1], ix int32 or int64[indptr[n_left]]   IN   the CSR graph
#   cptr int32[n_right + 1], cidx int32[nnz]                      OUT  allocated here with
#        PyMem_RawMalloc (the caller frees them): cidx[cptr[j]:cptr[j + 1]] are the left
#        neighbours of right j in increasing order (stored duplicates kept)
#
# int32 offsets keep the transpose's cache footprint half of int64's; a graph with more than
# INT32_MAX edges is refused (return -1, as for a failed allocation). The kernels read private,
# validated copies of the graph, but an index outside [0, n_right) is skipped here anyway (one
# unsigned compare per edge, in both passes alike): whatever the arrays hold, no write lands
# outside the two buffers.
from libc.stdint cimport INT32_MAX
from _types cimport intp_t, int32_t, int64_t, uint64_t, idx_t
from _prefetch cimport prefetch_write

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawCalloc, PyMem_RawFree

cdef enum:
    CSC_AHEAD = 8     # edges: enough to cover a memory latency, little enough to stay cached



cdef inline int build_csc(intp_t n_left, intp_t n_right, const int64_t* indptr, const idx_t* ix,
                          int32_t** cptr_out, int32_t** cidx_out) noexcept nogil:
    """Allocate and fill the transpose; 0, or -1 (out of memory or more than INT32_MAX
    edges). O(|E| + |V|): a counting pass and a scatter pass, their random writes
    prefetched a few edges ahead (each is a cache miss on a large graph)."""
    cdef int32_t* cptr = NULL
    if csc_count(n_left, n_right, indptr, ix, &cptr) != 0:
        return -1
    if csc_fill(n_left, n_right, indptr, ix, cptr, cidx_out) != 0:
        PyMem_RawFree(cptr)
        return -1
    cptr_out[0] = cptr
    return 0


cdef inline int csc_count(intp_t n_left, intp_t n_right, const int64_t* indptr, const idx_t* ix,
                          int32_t** cptr_out) noexcept nogil:
    """The transpose's first pass on its own: ``cptr[j + 1]`` = the number of stored entries
    in column j (``cptr[0] = 0``), allocated here; 0, or -1 (out of memory or more than
    INT32_MAX edges). A caller that needs the column counts before it knows whether it
    needs the transpose (the side probe of _transversal) counts once and hands ``cptr`` to
    :func:`csc_fill` or frees it."""
    cdef int64_t nnz = indptr[n_left], e
    cdef intp_t j
    if nnz > INT32_MAX or nnz < 0:
        return -1
    cdef int32_t* cptr = <int32_t*>PyMem_RawCalloc(n_right + 1, sizeof(int32_t))
    if cptr == NULL:
        return -1
    for e in range(nnz):
        if e + 4 * CSC_AHEAD < nnz and <uint64_t>ix[e + 4 * CSC_AHEAD] < <uint64_t>n_right:
            prefetch_write(&cptr[ix[e + 4 * CSC_AHEAD] + 1])
        j = <intp_t>ix[e]
        if <uint64_t>j < <uint64_t>n_right:
            cptr[j + 1] += 1
    cptr_out[0] = cptr
    return 0


cdef inline int csc_fill(intp_t n_left, intp_t n_right, const int64_t* indptr, const idx_t* ix,
                         int32_t* cptr, int32_t** cidx_out) noexcept nogil:
    """The transpose's second pass: ``cptr`` holds :func:`csc_count`'s counts and becomes the
    column offsets; ``cidx`` is allocated and filled. 0, or -1 (out of memory)."""
    cdef int64_t nnz = indptr[n_left], e
    cdef intp_t u, j
    cdef int32_t* cidx = <int32_t*>PyMem_RawMalloc((nnz if nnz > 0 else 1) * sizeof(int32_t))
    if cidx == NULL:
        return -1
    for j in range(n_right):
        cptr[j + 1] += cptr[j]
    # edges in CSR order: cptr[j] is the write position of column j, shifted back by one
    # column afterwards
    for u in range(n_left):
        for e in range(indptr[u], indptr[u + 1]):
            if e + 4 * CSC_AHEAD < nnz and <uint64_t>ix[e + 4 * CSC_AHEAD] < <uint64_t>n_right:
                prefetch_write(&cptr[ix[e + 4 * CSC_AHEAD]])
            if e + 2 * CSC_AHEAD < nnz and <uint64_t>ix[e + 2 * CSC_AHEAD] < <uint64_t>n_right:
                prefetch_write(&cidx[cptr[ix[e + 2 * CSC_AHEAD]]])
            j = <intp_t>ix[e]
            if <uint64_t>j < <uint64_t>n_right:
                cidx[cptr[j]] = <int32_t>u
                cptr[j] += 1
    for j in range(n_right, 0, -1):
        cptr[j] = cptr[j - 1]
    cptr[0] = 0
    cidx_out[0] = cidx
    return 0
