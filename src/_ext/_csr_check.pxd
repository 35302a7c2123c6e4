# The validating pass over a caller's CSR biadjacency: range checks, the private copy the
# kernels read (int64 indptr, int32 indices) and the fingerprint of the caller's arrays, in
# one read of each entry. Only `cdef inline` code lives here: cimporting this file compiles it
# into the kernel, fused over the caller's index types, no runtime import.
#
# The fingerprint is the one `_hk.csr_checked` computes (a sum mod 2**64 of one term per
# position and value: splitmix64's finaliser for the indptr entries, the position-keyed
# product (lo32(v) ^ kx_e) * (ky_e | 1) for the indices; its docstring has the argument why one
# edit or one swap always changes it). Both must agree: a Matching solved through
# `_transversal.solve_csr` is re-checked by `Matching.vertex_cover` through `_hk.csr_checked`
# (tests/test_matching_fixed_cost.py compares the two on every index type).
from _types cimport intp_t, int32_t, uint32_t, int64_t, uint64_t, idx_t

ctypedef fused ptr_t:        # the caller's indptr: int32 or int64, independently of idx_t
    int32_t
    int64_t

cdef enum:
    CHECK_OK = 0
    CHECK_DECREASING = 1      # indptr not non-decreasing
    CHECK_CHANGED = 2         # indptr's last entry changed while it was read (a writer thread)
    CHECK_RANGE = 3           # an index outside [0, n_minor): the caller re-scans to name it
    CHECK_LONG_ROW = 4        # a row longer than INT32_MAX (kernels keep in-row offsets as int32)

cdef inline uint64_t check_mix64(uint64_t z) noexcept nogil:
    """splitmix64's finaliser (Steele, Lea and Flood, OOPSLA 2014)."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline int csr_check_copy(const ptr_t* ip, intp_t n_major, const idx_t* ix, int64_t nnz, intp_t n_minor,
                               int64_t* op, int32_t* ox, uint64_t* fingerprint) noexcept nogil:
    """Check ``ip[1..n_major]`` (non-decreasing, ending at ``nnz`` = ``ip[n_major]`` as read by
    the caller, no row longer than INT32_MAX) and ``ix[0..nnz)`` (in ``[0, n_minor)``, with
    ``n_minor <= 2**31 - 2``), writing ``op`` (int64, ``op[0] = 0``) and ``ox`` (int32) and
    the fingerprint. Returns a CHECK_ code; on CHECK_RANGE the caller names the value.

    Every entry is read once into a local that is checked, hashed and copied, so a writer
    thread cannot make the copy differ from what was checked. The index loop is branch-free
    and, for int64 indices, checks the range as ``OR of all v < 2**31`` (one 64-bit OR) and
    the int32 maximum of the truncated values, both plain SSE2: a signed 64-bit compare
    needs SSE4.2, which a generic build does not assume, and the loop did not vectorise
    (int64 1M edges: 1.9 ms against numpy's 0.6 ms for the bare copy)."""
    cdef intp_t k
    cdef int64_t e, pc, pv = 0, longest = 0
    cdef int bad = 0
    cdef uint64_t h = 0
    cdef uint32_t kx, ky, acc32 = 0
    cdef uint64_t acc64 = 0
    cdef int32_t v32, hi32 = 0
    cdef idx_t vx
    op[0] = 0
    for k in range(n_major):
        pc = ip[k + 1]
        bad |= pc < pv
        longest = pc - pv if pc - pv > longest else longest
        h += check_mix64(<uint64_t>pc ^ (<uint64_t>k * 0x9E3779B97F4A7C15ULL))
        op[k + 1] = pc
        pv = pc
    if bad:
        return CHECK_DECREASING
    if pv != nnz:
        return CHECK_CHANGED
    if longest > 2147483647:
        return CHECK_LONG_ROW
    kx = <uint32_t>(<uint64_t>(n_major + 1) * 0x9E3779B9U)
    ky = <uint32_t>(<uint64_t>(n_major + 1) * 0x85EBCA6BU)
    for e in range(nnz):
        vx = ix[e]
        if idx_t is int32_t:
            acc32 |= <uint32_t>vx
        else:
            acc64 |= <uint64_t>vx
        v32 = <int32_t>vx
        hi32 = v32 if v32 > hi32 else hi32
        ox[e] = v32
        h += <uint64_t>(<uint32_t>vx ^ kx) * <uint64_t>(ky | 1)
        kx += 0x9E3779B9U   # the keys of _hk.csr_checked
        ky += 0x85EBCA6BU
    # a negative value sets bit 31 (int32) or bit 63 (int64); an int64 value >= 2**31 sets a
    # bit from 31 up; every value left is in [0, 2**31), so its int32 truncation is itself
    if nnz > 0 and ((acc32 >> 31) != 0 or (acc64 >> 31) != 0 or hi32 >= n_minor):
        return CHECK_RANGE
    fingerprint[0] = h
    return CHECK_OK
