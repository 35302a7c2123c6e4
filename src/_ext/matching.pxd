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
# search touches one cache line per vertex (LeftV, RightV below):
#   R[j].cap, R[j].load   capacity in force (0 = disabled), partners now (<= cap)
#   L[i].match            right vertex of each left vertex, -1 = unmatched
#   R[j].head, L[i].nxt/prv  doubly linked partner lists (so a partner leaves in O(1))
#   status     uint8[n_left]   MATCHED, PENDING (free, to be searched), DEAD (free, proven
#                              to have no augmenting path; revived when capacity grows)
#   pending, dead int32[n_left] the PENDING / DEAD left vertices (each free vertex is in exactly one)
#
# Scratch (allocated once, reused by every phase; validity by epoch stamps, so a phase costs
# the work of its search, never O(graph)):
#   L[i].stamp/dist/it, R[j].stamp/layer/cur; queue int32[n_left], stack_l (the same
#   memory as queue: the DFS runs after the BFS is done with it), stack_r int32[n_left + 1]
from _types cimport intp_t, int32_t, int64_t, uint8_t

cdef enum:
    MATCHED = 0
    PENDING = 1
    DEAD = 2

cdef struct LeftV:            # per left vertex; numpy twin LEFT_DTYPE in matching.pyx
    int64_t match            # right vertex, -1 = unmatched
    int64_t it               # current arc of the phase's DFS (edge offset)
    int32_t stamp            # epoch of the last BFS that reached it
    int32_t dist             # BFS layer in that epoch, -1 = dead end / used this phase
    int32_t nxt              # partner list of its right vertex (doubly linked)
    int32_t prv

cdef struct RightV:           # per right vertex; numpy twin RIGHT_DTYPE
    int64_t load             # partners now (<= cap)
    int64_t cap              # capacity in force (0 = disabled)
    int32_t stamp            # epoch of the last BFS that reached it
    int32_t layer            # its BFS layer then, -1 = dead end this phase
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
    int32_t* pending
    intp_t n_pending
    int32_t* dead
    intp_t n_dead
    int32_t* queue
    int32_t* stack_l
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
    int64_t prune_budget    # -1: |E| + |V|, then prune_cost; otherwise this (tests force pruning with 0)
    int64_t prune_cost      # work of the last hk_prune (edges + its O(n_right + pending) passes)
    int32_t epoch
    int64_t size
    int64_t work        # edges + partner-list entries scanned since the counter was reset
    int64_t phases
