# Declarations of the min-cost flow kernel that other Cython code may cimport.
#
# The residual graph is stored in CSR form: the slots leaving node u are
# first[u] .. first[u+1]-1; every non-loop input arc owns two slots (forward,
# backward) that point at each other through ``rev``. The residual capacity of a
# backward slot equals the flow on its arc, so the flow is read back from the graph.
from _types cimport intp_t, int32_t, int64_t

cdef struct Graph:
    intp_t n            # nodes
    intp_t slots        # residual slots (2 per non-loop arc)
    intp_t* first       # [n+1] CSR offsets
    int32_t* to         # [slots] head of each residual slot
    int32_t* rev        # [slots] slot of the opposite direction
    int64_t* rc         # [slots] residual capacity (IN-OUT)
    int64_t* cst        # [slots] arc cost (forward) or its negation (backward)

# Per-node record of the successive-shortest-path search (fields documented in _mcf.pyx).
cdef struct NodeState:
    int64_t pi
    int64_t dist
    int32_t mark
    int32_t dead
    int32_t hpos
    int32_t pred
    int32_t onpath
    int32_t curst
    int32_t cur

# Scratch of the shortest-path phases, all of length n (path: n + 1), allocated once.
cdef struct Work:
    NodeState* nodes    # SSP node records
    int32_t* heap       # binary heap of nodes keyed by NodeState.dist
    int32_t* settled    # nodes settled in this phase, in order
    intp_t* cur         # current-slot pointers (Dinic, cost scaling)
    char* onpath        # in-queue flags (cost scaling, label correcting)
    int32_t* path       # admissible path nodes
    int32_t* parc       # admissible path slots
    int32_t* srcs       # nodes with positive excess
    int32_t* level      # BFS levels of the max-flow (Dinic) search
    int32_t* queue      # BFS queue
    intp_t phases       # statistics: Dijkstra phases,
    intp_t pops         # nodes settled over all phases,
    intp_t paths        # augmenting paths
    intp_t relabels     # cost-scaling relabel operations

cdef enum:
    FLOW_OK = 0
    FLOW_STUCK = 1      # some excess cannot reach any deficit: supplies infeasible

# Methods of solve(method=...).
cdef enum:
    M_SSP = 0           # successive shortest paths (primal-dual)
    M_COST_SCALING = 1  # Goldberg-Tarjan cost scaling, then exact potentials
    M_MAX_FLOW = 2      # maximum flow only (Dinic), costs ignored

# Only types live here. The kernel functions (ssp_run, dinic_run, build_graph) stay
# module-private: the build names the extension ``spare_core._ext._mcf`` while Cython finds
# this file as ``flow``, so a cimported cdef function would be looked up at run time in a
# module ``_mcf`` that does not exist. _mcf.pyx cimports these types explicitly for the
# same reason (Cython does not pair it with this file automatically).
