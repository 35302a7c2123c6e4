# The validating pass over a caller's CSR biadjacency: range checks, the private copy the
# kernels read (int64 indptr, int32 indices) and the fingerprint of the caller's arrays, in
# one read of each entry. Only `cdef inline` code lives here: cimporting this file compiles it
# into the kernel, fused over the caller's index types, no runtime import.
#
# The fingerprint (a sum mod 2**64 of one term per position and value: splitmix64's finaliser
# for the indptr entries, the position-keyed product (lo32(v) ^ kx_e) * (ky_e | 1) for the
# indices; `_hk.csr_checked`'s docstring has the argument why one edit or one swap always
# changes it) is computed here only: `_hk.csr_checked`, `_transversal.solve_csr` and
# `_bmatch.solve_csr` all run this pass, so a Matching solved in one call and re-checked by
# `Matching.vertex_cover` through `_hk.csr_checked` sees the same fingerprint
# (tests/test_matching_fixed_cost.py still compares them on every index type).
from _types cimport intp_t, int32_t, uint32_t, int64_t, uint64_t, idx_t
cimport numpy as cnp

cdef extern from *:
    """
    /* The validating pass's index loop in C, compiled twice (AVX2 and the generic SSE2
       build) and picked at load time by the CPU (GCC/clang target_clones): the loop is
       vectorised either way, AVX2 handles twice the lanes. */
    #ifndef SPARE_CSR_CHECK_DEFINED
    #define SPARE_CSR_CHECK_DEFINED
    #include <stdint.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
        && !defined(__SANITIZE_ADDRESS__)
    #define SPARE_CLONES __attribute__((target_clones("avx2", "default")))
    #else
    #define SPARE_CLONES
    #endif
    SPARE_CLONES static uint64_t spare_check_idx32(const int32_t* ix, int64_t nnz, int32_t* ox, uint32_t kx,
                                                   uint32_t ky, uint64_t* acc, int32_t* hi) {
        uint64_t h = 0; uint32_t a = 0; int32_t m = 0;
        for (int64_t e = 0; e < nnz; e++) {
            int32_t v = ix[e];
            a |= (uint32_t)v;
            m = v > m ? v : m;
            ox[e] = v;
            h += (uint64_t)((uint32_t)v ^ kx) * (uint64_t)(ky | 1u);
            kx += 0x9E3779B9u; ky += 0x85EBCA6Bu;
        }
        *acc = a; *hi = m;
        return h;
    }
    SPARE_CLONES static uint64_t spare_check_idx64(const int64_t* ix, int64_t nnz, int32_t* ox, uint32_t kx,
                                                   uint32_t ky, uint64_t* acc, int32_t* hi) {
        uint64_t h = 0, a = 0; int32_t m = 0;
        for (int64_t e = 0; e < nnz; e++) {
            int64_t v = ix[e];
            int32_t v32 = (int32_t)v;
            a |= (uint64_t)v;
            m = v32 > m ? v32 : m;
            ox[e] = v32;
            h += (uint64_t)((uint32_t)v ^ kx) * (uint64_t)(ky | 1u);
            kx += 0x9E3779B9u; ky += 0x85EBCA6Bu;
        }
        *acc = a; *hi = m;
        return h;
    }
    #endif
    """
    uint64_t spare_check_idx32(const int32_t* ix, int64_t nnz, int32_t* ox, uint32_t kx, uint32_t ky,
                               uint64_t* acc, int32_t* hi) noexcept nogil
    uint64_t spare_check_idx64(const int64_t* ix, int64_t nnz, int32_t* ox, uint32_t kx, uint32_t ky,
                               uint64_t* acc, int32_t* hi) noexcept nogil

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
    thread cannot make the copy differ from what was checked. The index loop (the C
    functions above) is branch-free and checks the range as the OR of all values (a
    negative one, or an int64 one of 2**31 or more, sets a bit from 31 up) and the int32
    maximum of the truncated values: plain SSE2 operations, so it vectorises in a generic
    build (a signed 64-bit compare needs SSE4.2; the former int64 loop of _hk.csr_checked
    did not vectorise: 1.9 ms on 1M edges against numpy's 0.6 ms for the bare copy), and twice as
    wide in the AVX2 clone (blocks 1e5, one-call solve: 0.88x the SSE2 build's time)."""
    cdef intp_t k
    cdef int64_t e, pc, pv = 0, longest = 0
    cdef int bad = 0
    cdef uint64_t h = 0
    cdef uint32_t kx, ky
    cdef uint64_t acc64 = 0
    cdef int32_t hi32 = 0
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
    # per-position keys of the indices' terms (32-bit golden ratio and murmur3's second
    # finaliser constant: any odd constants with well-spread bits do)
    kx = <uint32_t>(<uint64_t>(n_major + 1) * 0x9E3779B9U)
    ky = <uint32_t>(<uint64_t>(n_major + 1) * 0x85EBCA6BU)
    if idx_t is int32_t:
        h += spare_check_idx32(ix, nnz, ox, kx, ky, &acc64, &hi32)
    else:
        h += spare_check_idx64(ix, nnz, ox, kx, ky, &acc64, &hi32)
    # a negative value sets bit 31 (int32) or bit 63 (int64); an int64 value >= 2**31 sets a
    # bit from 31 up; every value left is in [0, 2**31), so its int32 truncation is itself
    if nnz > 0 and ((acc64 >> 31) != 0 or hi32 >= n_minor):
        return CHECK_RANGE
    fingerprint[0] = h
    return CHECK_OK


cdef inline bint plain_index_array(object a) noexcept:
    """A base-class ndarray, 1-d, C-contiguous, native-order signed int32 or int64: what the
    one-call paths read raw (anything else goes to the caller's general path, unread)."""
    if not cnp.PyArray_CheckExact(a):
        return False
    cdef cnp.ndarray arr = <cnp.ndarray>a
    cdef int t = cnp.PyArray_TYPE(arr)
    return (cnp.PyArray_NDIM(arr) == 1 and cnp.PyArray_IS_C_CONTIGUOUS(arr) and cnp.PyArray_ISNOTSWAPPED(arr)
            and (t == cnp.NPY_INT32 or t == cnp.NPY_INT64 or
                 ((t == cnp.NPY_LONG or t == cnp.NPY_LONGLONG or t == cnp.NPY_INT)
                  and (cnp.PyArray_ITEMSIZE(arr) == 4 or cnp.PyArray_ITEMSIZE(arr) == 8))))


cdef inline object csr_header_error(int64_t first, int64_t nnz, intp_t n_idx):
    """The checks before the pass, on indptr's first and last entries as the caller read them
    (once: ``nnz`` sizes the copy and bounds the pass): the message of the first that fails,
    or None."""
    if first != 0:
        return f"graph indptr must start at 0, got {first}"
    if nnz > n_idx:
        return f"graph indptr ends at {nnz} but only {n_idx} indices are stored"
    return None


cdef inline str csr_check_message(int rc, const idx_t* ix, int64_t nnz, intp_t n_minor, int64_t last):
    """The message for ``csr_check_copy``'s code ``rc`` (not CHECK_OK); ``last`` is the final
    indptr entry the pass read (its copy's last entry). CHECK_RANGE reads the indices a
    second time to name the smallest or largest value (only on this error path)."""
    cdef int64_t e, lo, hi
    if rc == CHECK_DECREASING:
        return "graph indptr must be non-decreasing"
    if rc == CHECK_LONG_ROW:
        return "graph has a row with more than 2147483647 stored entries"
    if rc == CHECK_RANGE:
        lo = hi = ix[0]
        for e in range(nnz):
            lo = ix[e] if ix[e] < lo else lo
            hi = ix[e] if ix[e] > hi else hi
        if lo < 0:
            return f"graph column index must be non-negative, got {lo}"
        if hi >= n_minor:
            return f"graph column index must be < {n_minor}, got {hi}"
        # the values changed between the two reads
        return "graph indices changed while they were read (another thread writing into them?)"
    return (f"graph indptr changed while it was read: it ended at {nnz}, then at {last} "
            "(another thread writing into it?)")
