# Hopcroft-Karp (b-)matching kernel: the types other Cython code may cimport.
#
# Only types live here (cimporting them creates no runtime import). The kernel functions
# (hk_link, hk_unlink, hk_free_left, hk_greedy, hk_revive, hk_augment in _hk.pyx) are
# not exported: setup.py names the module spare_core._ext._hk, under which Cython does
# not find this file as the module's own .pxd, so a cdef-function C-API cannot be shared.
# Python callers use spare_core.matching; Cython callers can cimport HKState and drive the
# kernel through spare_core._ext._hk.HKKernel.
#
# Graph: CSR biadjacency, rows = left vertices, columns = right vertices. A one-shot solve
# reads the caller's own arrays (validated, never written): no private copy.
#   indptr  int64[n_left + 1]      IN   row offsets (indptr[0] == 0, non-decreasing)
#   indices int32 or int64[nnz]    IN   right vertex of each edge, in [0, n_right); idx64 says
#                                       which (the kernel functions are fused over both)
#   edge_off uint8[nnz] or NULL    IN   1 = edge currently disabled (IncrementalMatching only)
#   cptr int32[n_right + 1], cidx int32[nnz]   the transpose (left vertex of each edge, by
#                                       right vertex), built on first need (hk_build_csc) by
#                                       the prune and the Karp-Sipser start
#
# Matching state (IN-OUT for every kernel that augments), 12 bytes per vertex so that a
# search touches one record per vertex and a 600k-vertex graph's records stay small (the
# peak memory of a solve is about twice the input graph):
#   L[i].match   right vertex of each left vertex, -1 = unmatched
#   R[j].spare   capacity in force (clamped to n_left) minus partners now; 0 = saturated or
#                disabled. The capacity itself is the caller's (IncrementalMatching keeps it).
#   R[j].aux     unit mode (capacity in force <= 1): the partner, -1 = none.
#                several-slot mode (capacity >= 2): <= -2, and -3 - aux is the head of its
#                partner list (-1: empty), doubly linked through P so that a partner
#                leaves in O(1)
#   P LinkV[n_left], cur int32[n_right]   several-slot mode only (NULL until a capacity of
#                2 or more appears: a unit-capacity graph never pays their 12 bytes per
#                vertex): the partner-list links, and each right vertex's DFS cursor (the
#                next partner to try this phase, -1 = none left)
#   status     uint8[n_left]   MATCHED, PENDING (free, to be searched), DEAD (free, proven
#                              to have no augmenting path; revived when capacity grows)
#   free_l     int32[n_left + 1]  the PENDING left vertices in free_l[:n_pending], the DEAD
#                              ones in free_l[n_left + 1 - n_dead:] (each free vertex is in
#                              exactly one, so the two never meet). The gap between them has
#                              (matched count + 1) entries: the searches' scratch (below).
#
# Scratch (allocated once, reused by every phase; validity by epoch levels, so a phase costs
# the work of its search, never O(graph)):
#   L[i].lev, R[j].lev   base + BFS layer of the phase whose BFS started at level ``base``;
#                        anything below base is "not reached this phase" (and a DFS marks a
#                        dead end by writing base - 1). Each phase's base lies above every
#                        level the previous phase wrote, so nothing is ever cleared (a full
#                        reset only when the levels approach INT32_MAX). The last prune
#                        marks the vertices that can still reach spare capacity with its own
#                        level pb (above all earlier ones); while pb > 0 a search enters only
#                        levels in [pb, base), so everything else stays out without a flag
#                        array or a pass over the records, and resetting pb to 0 lets it back.
#   L[i].it (current arc, offset in row i); R[j].aux in several-slot mode (above);
#   the BFS queue is free_l itself: its roots are the pending block and the matched vertices
#   it reaches (at most the matched count) go into the gap; the DFS stack of left vertices
#   (root + matched vertices; the right vertex between two stack entries is read back from
#   the current arc) and the prune's queue (the right vertices it reaches through a matched
#   edge, one per partner) also live in the gap, after the pending block.
#   The minimum-competition greedy start keeps its per-right counters in R[j].lev.
from _types cimport intp_t, int32_t, int64_t, uint8_t

cdef enum:                    # status[i] of a left vertex
    MATCHED = 0
    PENDING = 1
    DEAD = 2

cdef enum:                    # cold-start strategies of HKKernel.solve(start=...)
    START_GREEDY = 0          # greedy in vertex order (also the warm-start repair)
    START_DEGREE_ORDER = 1    # greedy in increasing degree order; fewest competitors when tight
    START_KARP_SIPSER = 2     # Karp-Sipser degree rules
    START_MIN_COMPETITION = 3 # as START_DEGREE_ORDER with the fewest-competitors choice always

cdef struct LeftV:            # per left vertex; numpy twin LEFT_DTYPE in _hk.pyx
    int32_t match            # right vertex, -1 = unmatched
    int32_t it               # current arc of the phase's DFS (offset from indptr[i])
    int32_t lev              # base + BFS layer; < base: not reached / used this phase

cdef struct RightV:           # per right vertex; numpy twin RIGHT_DTYPE
    int32_t spare            # capacity in force (clamped) minus partners; 0 = none free
    int32_t lev              # base + BFS layer; < base: not reached / dead end this phase
    int32_t aux              # unit mode: the partner or -1; several-slot mode: -2 - cursor

cdef struct LinkV:            # partner-list links of a matched left vertex (several-slot mode)
    int32_t nxt
    int32_t prv

cdef struct HKState:
    intp_t n_left
    intp_t n_right
    const int64_t* indptr
    const void* indices     # int32_t* or int64_t* (idx64)
    bint idx64
    uint8_t* edge_off
    LeftV* L
    RightV* R
    LinkV* P                # NULL until some capacity is >= 2
    int32_t* cur
    uint8_t* status
    int32_t* free_l         # pending at the front, dead at the back, search scratch between
    intp_t n_pending
    intp_t n_dead
    # transpose, allocated on first need by hk_build_csc (PyMem_RawMalloc, so that
    # tracemalloc counts it)
    const int32_t* cptr     # int32[n_right + 1] (built only when nnz <= INT32_MAX)
    const int32_t* cidx     # int32[nnz]: left vertex of each edge, by right vertex
    int32_t pb              # level the last prune marked its live set with; 0 = no prune in force
    bint can_prune          # allow hk_augment to prune (ski-rental rule)
    int64_t prunes
    int64_t prune_budget    # -1: |E| + |V|, then prune_cost; otherwise this (tests force pruning with 0)
    int64_t prune_cost      # work of the last hk_prune (edges + its O(V) passes)
    int32_t base            # level of the roots in the current phase
    int32_t top             # highest level any phase wrote so far
    int64_t size
    int64_t work        # edges and column entries scanned since the counter was reset
    int64_t phases
