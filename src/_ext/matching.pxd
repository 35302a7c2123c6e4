# Hopcroft-Karp (b-)matching kernel: the types other Cython code may cimport.
#
# Only types live here (cimporting them creates no runtime import). The kernel functions
# (hk_link, hk_unlink, hk_free_left, hk_greedy, hk_revive, hk_augment in matching.pyx) are
# not exported: setup.py names the module spare_core._ext.matching, under which Cython does
# not find this file as the module's own .pxd, so a cdef-function C-API cannot be shared.
# Python callers use spare_core.matching; Cython callers can cimport HKState and drive the
# kernel through spare_core._ext.matching.HKKernel.
#
# Graph: CSR biadjacency, rows = left vertices, columns = right vertices.
#   indptr  int64[n_left + 1]   IN   row offsets (indptr[0] == 0, non-decreasing)
#   indices int32[nnz]          IN   right vertex of each edge, in [0, n_right)
#   edge_off uint8[nnz] or NULL IN   1 = edge currently disabled (IncrementalMatching only)
#
# Matching state (IN-OUT for every kernel that augments), packed per vertex so that a
# search touches one cache line per vertex (LeftV, RightV below, 20 bytes each: int32 fields
# halve the cache footprint of 32-byte int64 records, which is what a search over 600k
# vertices is bound by):
#   R[j].cap, R[j].load   capacity in force (0 = disabled) clamped to n_left (a right vertex
#                         can never take more), partners now (<= cap)
#   L[i].match            right vertex of each left vertex, -1 = unmatched
#   R[j].head, L[i].nxt/prv  doubly linked partner lists (so a partner leaves in O(1))
#   status     uint8[n_left]   MATCHED, PENDING (free, to be searched), DEAD (free, proven
#                              to have no augmenting path; revived when capacity grows)
#   free_l     int32[n_left]   the PENDING left vertices in free_l[:n_pending], the DEAD ones
#                              in free_l[n_left - n_dead:] (each free vertex is in exactly one,
#                              so the two never meet)
#
# Scratch (allocated once, reused by every phase; validity by epoch levels, so a phase costs
# the work of its search, never O(graph)):
#   L[i].lev, R[j].lev   base + BFS layer of the phase whose BFS started at level ``base``;
#                        anything below base is "not reached this phase" (and a DFS marks a
#                        dead end by writing base - 1). Each phase's base lies above every
#                        level the previous phase wrote, so nothing is ever cleared (a full
#                        reset only when the levels approach INT32_MAX).
#   L[i].it (current arc, offset in row i), R[j].cur (current partner);
#   queue int32[max(n_left, n_right)]: the BFS queue, the DFS stack of left vertices (the DFS
#   runs after the BFS is done with it; the right vertex between two stack entries is read
#   back from the current arc) and the prune's queue of right vertices.
from _types cimport intp_t, int32_t, int64_t, uint8_t

cdef enum:
    MATCHED = 0
    PENDING = 1
    DEAD = 2

cdef struct LeftV:            # per left vertex; numpy twin LEFT_DTYPE in matching.pyx
    int32_t match            # right vertex, -1 = unmatched
    int32_t it               # current arc of the phase's DFS (offset from indptr[i])
    int32_t lev              # base + BFS layer; < base: not reached / used this phase
    int32_t nxt              # partner list of its right vertex (doubly linked)
    int32_t prv

cdef struct RightV:           # per right vertex; numpy twin RIGHT_DTYPE
    int32_t load             # partners now (<= cap)
    int32_t cap              # capacity in force (0 = disabled), at most n_left
    int32_t lev              # base + BFS layer; < base: not reached / dead end this phase
    int32_t cur              # current partner of the phase's DFS
    int32_t head             # first partner, -1 = none

cdef struct HKState:
    intp_t n_left
    intp_t n_right
    const int64_t* indptr
    const int32_t* indices
    uint8_t* edge_off
    LeftV* L
    RightV* R
    uint8_t* status
    int32_t* free_l         # pending at the front, dead at the back
    intp_t n_pending
    intp_t n_dead
    int32_t* queue          # also the DFS stack and the prune's queue
    # transpose and pruning scratch, allocated on first need by hk_build_csc (PyMem_RawMalloc,
    # so that tracemalloc counts it)
    const int32_t* cptr     # int32[n_right + 1] (built only when nnz <= INT32_MAX)
    const int32_t* cidx     # int32[nnz]: left vertex of each edge, by right vertex
    uint8_t* live_l         # while live_on: 0 = proven never on an augmenting path (hk_prune)
    uint8_t* live_r
    int32_t* fr             # right vertices with spare capacity at the last prune (before the
                            # first prune, hk_greedy_mindeg borrows it for its counters)
    intp_t n_fr
    bint fr_valid           # fr is a superset of them (capacities unchanged since, within one hk_augment)
    bint live_on
    bint can_prune          # allow hk_augment to prune (ski-rental rule)
    int64_t prunes
    int64_t prune_budget    # -1: |E| + |V|, then prune_cost; otherwise this (tests force pruning with 0)
    int64_t prune_cost      # work of the last hk_prune (edges + its O(n_right + pending) passes)
    int32_t base            # level of the roots in the current phase
    int32_t top             # highest level any phase wrote so far
    int64_t size
    int64_t work        # edges + partner-list entries scanned since the counter was reset
    int64_t phases
