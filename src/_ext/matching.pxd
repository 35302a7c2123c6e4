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
# Matching state (IN-OUT for every kernel that augments):
#   cap        int64[n_right]  capacity in force (0 = right vertex disabled)
#   load       int64[n_right]  left vertices currently matched to each right vertex (<= cap)
#   match_left int64[n_left]   right vertex of each left vertex, -1 = unmatched
#   head       int32[n_right]  first partner of each right vertex, -1 = none;
#   nxt, prv   int32[n_left]   doubly linked partner lists (so a partner leaves in O(1))
#   status     uint8[n_left]   MATCHED, PENDING (free, to be searched), DEAD (free, proven
#                              to have no augmenting path; revived when capacity grows)
#   pending, dead int32[n_left] the PENDING / DEAD left vertices (each free vertex is in exactly one)
#
# Scratch (allocated once, reused by every phase; validity by epoch stamps, so a phase costs
# the work of its search, never O(graph)):
#   stamp_l, dist_l int32[n_left], it_l int64[n_left], queue, stack_l int32[n_left + 1]
#   stamp_r, layer_r, cur_r int32[n_right], stack_r int32[n_left + 1]
from _types cimport intp_t, int32_t, int64_t, uint8_t

cdef enum:
    MATCHED = 0
    PENDING = 1
    DEAD = 2

cdef struct HKState:
    intp_t n_left
    intp_t n_right
    const int64_t* indptr
    const int32_t* indices
    uint8_t* edge_off
    int64_t* cap
    int64_t* load
    int64_t* match_left
    int32_t* head
    int32_t* nxt
    int32_t* prv
    uint8_t* status
    int32_t* pending
    intp_t n_pending
    int32_t* dead
    intp_t n_dead
    int32_t* stamp_l
    int32_t* dist_l
    int64_t* it_l
    int32_t* queue
    int32_t* stack_l
    int32_t* stamp_r
    int32_t* layer_r
    int32_t* cur_r
    int32_t* stack_r
    # transpose and pruning scratch, allocated on first need by hk_build_csc (malloc'd)
    const int64_t* cptr     # int64[n_right + 1]
    const int32_t* cidx     # int32[nnz]: left vertex of each edge, by right vertex
    uint8_t* live_l         # while live_on: 0 = proven never on an augmenting path (hk_prune)
    uint8_t* live_r
    int32_t* queue_r
    bint live_on
    bint can_prune          # allow hk_augment to prune (ski-rental rule)
    int64_t prunes
    int64_t prune_budget    # -1: |E| + |V|; otherwise this (tests force pruning with 0)
    int32_t epoch
    int64_t size
    int64_t work        # edges + partner-list entries scanned since the counter was reset
    int64_t phases
