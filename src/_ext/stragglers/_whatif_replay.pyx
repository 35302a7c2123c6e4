# cython: language_level=3
"""The dependency replay of one training job's steps (``spare_core.stragglers``).

A step of a pipeline-parallel job is one *template* graph of ``n`` operations (every operation
of one data-parallel replica: all pipeline stages, one DP rank), repeated for each of the ``D``
data-parallel ranks and each of the ``S`` steps. The template is given as

* ``dep_ptr``/``dep_idx``: a CSR list of the operations each operation waits for (its
  in-replica dependencies): the deps of op ``j`` are ``dep_idx[dep_ptr[j]:dep_ptr[j+1]]``;
* ``node_ptr``/``node_ops``: the operations grouped into *nodes* listed in a topological order.
  A node is one operation (a computation) or a communication group (a send/recv pair, the
  embedding all-reduce of the first and last stage, the gradient-clipping all-reduce of all
  stages): every member starts when its own deps are done, and every member ends at
  ``max(member starts) + its own duration``;
* ``node_sync``: 1 when the node is also a data-parallel collective (the all-gather and
  reduce-scatter of the distributed optimizer, the clipping all-reduce): the group start is
  then the maximum over every replica replayed.

A replay reads a duration per (step, replica, op): ``rec[s, inst[i], j]`` where ``keep[i, j]``
is set, else ``ideal[j]``; the steps are independent (each starts at 0) and a step's makespan
is the latest end of any operation. Replicas that no kept operation touches behave alike, so a
what-if that keeps one DP rank or one worker recorded replays two replicas (that rank and one
representative of the others), not ``D``.

``effective`` turns recorded start and end times into the durations a replay uses: for every
node, ``end - max(start of the group)`` (a communication's recorded duration includes the
wait for its slowest peer; a computation's is its own), clipped at 0.

Both entry points check every index they are given (CSR pointers, op and node indices, the
topological order, replica rows) in one pass before the loop and return a status: they never
read outside a buffer whatever the input. The loops run without the GIL.

References
----------
Lin, J. et al. "Understanding Stragglers in Large Model Training Using What-if Analysis",
OSDI 2025 (the method: replay with recorded and with ideal durations).
"""
from libc.stdlib cimport malloc, free
from _types cimport int32_t, int64_t, uint8_t, float64_t

import numpy as np

cdef enum Status:
    OK = 0
    BAD_DEP_PTR = 1
    BAD_DEP_INDEX = 2
    BAD_NODE_PTR = 3
    BAD_NODE_OP = 4
    NOT_TOPOLOGICAL = 5
    BAD_INSTANCE = 6
    NO_MEMORY = 7

CONSTANTS = {
    "OK": OK, "BAD_DEP_PTR": BAD_DEP_PTR, "BAD_DEP_INDEX": BAD_DEP_INDEX, "BAD_NODE_PTR": BAD_NODE_PTR,
    "BAD_NODE_OP": BAD_NODE_OP, "NOT_TOPOLOGICAL": NOT_TOPOLOGICAL, "BAD_INSTANCE": BAD_INSTANCE,
    "NO_MEMORY": NO_MEMORY,
}

_MESSAGES = {
    BAD_DEP_PTR: "dep_ptr must start at 0, never decrease and end at len(dep_idx)",
    BAD_DEP_INDEX: "dep_idx holds an op index outside [0, n)",
    BAD_NODE_PTR: "node_ptr must start at 0, never decrease and end at n (every op in one node)",
    BAD_NODE_OP: "node_ops must hold every op index in [0, n) exactly once",
    NOT_TOPOLOGICAL: "the nodes are not in a topological order (an op waits for an op of the same or a later node)",
    BAD_INSTANCE: "inst holds a replica row outside [0, D)",
    NO_MEMORY: "out of memory for the replay's scratch",
}


cdef int _check(const int64_t[::1] dep_ptr, const int32_t[::1] dep_idx, const int64_t[::1] node_ptr,
                const int32_t[::1] node_ops, int32_t* pos) noexcept nogil:
    """Check the template; fill ``pos[j]`` = node of op ``j``. Returns a Status.

    dep_ptr  IN  len n + 1       node_ptr IN  len n_nodes + 1
    dep_idx  IN  len E           node_ops IN  len n
    pos      OUT len n (scratch owned by the caller)
    """
    cdef Py_ssize_t n = dep_ptr.shape[0] - 1
    cdef Py_ssize_t n_nodes = node_ptr.shape[0] - 1
    cdef Py_ssize_t j, k, e
    cdef int32_t u
    if n < 0 or dep_ptr[0] != 0 or dep_ptr[n] != dep_idx.shape[0]:
        return BAD_DEP_PTR
    for j in range(n):
        if dep_ptr[j + 1] < dep_ptr[j]:
            return BAD_DEP_PTR
    if n_nodes < 0 or node_ptr[0] != 0 or node_ptr[n_nodes] != n or node_ops.shape[0] != n:
        return BAD_NODE_PTR
    for k in range(n_nodes):
        if node_ptr[k + 1] < node_ptr[k]:
            return BAD_NODE_PTR
    for j in range(n):
        pos[j] = -1
    for k in range(n_nodes):
        for e in range(node_ptr[k], node_ptr[k + 1]):
            u = node_ops[e]
            if u < 0 or u >= n or pos[u] != -1:
                return BAD_NODE_OP
            pos[u] = <int32_t>k
    for e in range(dep_idx.shape[0]):
        if dep_idx[e] < 0 or dep_idx[e] >= n:
            return BAD_DEP_INDEX
    for j in range(n):
        for e in range(dep_ptr[j], dep_ptr[j + 1]):
            if pos[dep_idx[e]] >= pos[j]:
                return NOT_TOPOLOGICAL
    return OK


cdef int _replay(const int64_t[::1] dep_ptr, const int32_t[::1] dep_idx, const int64_t[::1] node_ptr,
                 const int32_t[::1] node_ops, const uint8_t[::1] node_sync, const float64_t[:, :, ::1] rec,
                 const int64_t[::1] inst, const uint8_t[:, ::1] keep, const float64_t[::1] ideal,
                 float64_t[::1] makespan, float64_t[:, :, ::1] start_out, float64_t[:, :, ::1] end_out,
                 bint want_times) noexcept nogil:
    """The replay loop (see the module docstring). Returns a Status.

    rec        IN   S x D x n recorded (effective) durations
    inst       IN   I replica rows of rec, each in [0, D)
    keep       IN   I x n: 1 = the recorded duration, 0 = ideal[j]
    ideal      IN   n ideal durations
    makespan   OUT  S: latest end of any op of the step
    start_out, end_out  OUT  S x I x n (written only with want_times)
    Scratch: start, end (I * n doubles), gstart (I doubles), pos (n int32).
    """
    cdef Py_ssize_t n = dep_ptr.shape[0] - 1
    cdef Py_ssize_t n_nodes = node_ptr.shape[0] - 1
    cdef Py_ssize_t S = rec.shape[0], D = rec.shape[1], I = inst.shape[0]
    cdef Py_ssize_t s, k, i, m, e, j, base
    cdef double t, g, mk, d
    cdef int status
    cdef int32_t* pos = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef double* end = <double*>malloc((I * n + 1) * sizeof(double))
    cdef double* start = <double*>malloc((I * n + 1) * sizeof(double))
    cdef double* gstart = <double*>malloc((I + 1) * sizeof(double))
    if pos == NULL or end == NULL or start == NULL or gstart == NULL:
        free(pos); free(end); free(start); free(gstart)
        return NO_MEMORY
    status = _check(dep_ptr, dep_idx, node_ptr, node_ops, pos)
    if status == OK:
        for i in range(I):
            if inst[i] < 0 or inst[i] >= D:
                status = BAD_INSTANCE
                break
    if status != OK:
        free(pos); free(end); free(start); free(gstart)
        return status
    for s in range(S):
        mk = 0.0
        for k in range(n_nodes):
            for i in range(I):
                base = i * n
                g = 0.0
                for m in range(node_ptr[k], node_ptr[k + 1]):
                    j = node_ops[m]
                    t = 0.0
                    for e in range(dep_ptr[j], dep_ptr[j + 1]):
                        if end[base + dep_idx[e]] > t:
                            t = end[base + dep_idx[e]]
                    start[base + j] = t
                    if t > g:
                        g = t
                gstart[i] = g
            if node_sync[k]:
                g = 0.0
                for i in range(I):
                    if gstart[i] > g:
                        g = gstart[i]
                for i in range(I):
                    gstart[i] = g
            for i in range(I):
                base = i * n
                for m in range(node_ptr[k], node_ptr[k + 1]):
                    j = node_ops[m]
                    if keep[i, j]:
                        d = rec[s, inst[i], j]
                    else:
                        d = ideal[j]
                    t = gstart[i] + d
                    end[base + j] = t
                    if t > mk:
                        mk = t
        makespan[s] = mk
        if want_times:
            for i in range(I):
                base = i * n
                for j in range(n):
                    start_out[s, i, j] = start[base + j]
                    end_out[s, i, j] = end[base + j]
    free(pos); free(end); free(start); free(gstart)
    return OK


cdef int _effective(const int64_t[::1] dep_ptr, const int32_t[::1] dep_idx, const int64_t[::1] node_ptr,
                    const int32_t[::1] node_ops, const uint8_t[::1] node_sync, const float64_t[:, :, ::1] start,
                    const float64_t[:, :, ::1] end, float64_t[:, :, ::1] out) noexcept nogil:
    """out[s, r, j] = max(0, end[s, r, j] - max start of j's node (over r too when synced)).

    start, end  IN   S x D x n recorded times     out  OUT  S x D x n
    """
    cdef Py_ssize_t n = dep_ptr.shape[0] - 1
    cdef Py_ssize_t n_nodes = node_ptr.shape[0] - 1
    cdef Py_ssize_t S = start.shape[0], D = start.shape[1]
    cdef Py_ssize_t s, k, r, m, j
    cdef double g, gg, t
    cdef int status
    cdef int32_t* pos = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef double* gstart = <double*>malloc((D + 1) * sizeof(double))
    if pos == NULL or gstart == NULL:
        free(pos); free(gstart)
        return NO_MEMORY
    status = _check(dep_ptr, dep_idx, node_ptr, node_ops, pos)
    free(pos)
    if status != OK:
        free(gstart)
        return status
    for s in range(S):
        for k in range(n_nodes):
            gg = -1e308
            for r in range(D):
                g = -1e308
                for m in range(node_ptr[k], node_ptr[k + 1]):
                    j = node_ops[m]
                    if start[s, r, j] > g:
                        g = start[s, r, j]
                gstart[r] = g
                if g > gg:
                    gg = g
            for r in range(D):
                g = gg if node_sync[k] else gstart[r]
                for m in range(node_ptr[k], node_ptr[k + 1]):
                    j = node_ops[m]
                    t = end[s, r, j] - g
                    out[s, r, j] = t if t > 0.0 else 0.0
    free(gstart)
    return OK


def _shapes(dep_ptr, dep_idx, node_ptr, node_ops, node_sync):
    n = dep_ptr.shape[0] - 1
    if n < 0:
        raise ValueError("dep_ptr must hold n + 1 >= 1 entries")
    if node_ops.shape[0] != n:
        raise ValueError(f"node_ops must hold n = {n} entries, got {node_ops.shape[0]}")
    if node_sync.shape[0] != node_ptr.shape[0] - 1:
        raise ValueError(f"node_sync must hold one entry per node ({node_ptr.shape[0] - 1}), "
                         f"got {node_sync.shape[0]}")
    return n


def replay(const int64_t[::1] dep_ptr, const int32_t[::1] dep_idx, const int64_t[::1] node_ptr,
           const int32_t[::1] node_ops, const uint8_t[::1] node_sync, const float64_t[:, :, ::1] rec,
           const int64_t[::1] inst, const uint8_t[:, ::1] keep, const float64_t[::1] ideal, bint times=False):
    """Replay the template over every step with the durations chosen by ``keep``.

    Parameters
    ----------
    dep_ptr, dep_idx : int64 (n + 1), int32 (E)
        CSR of each op's deps (in-replica).
    node_ptr, node_ops : int64 (n_nodes + 1), int32 (n)
        The nodes in a topological order and their member ops.
    node_sync : uint8 (n_nodes)
        1: the node's start is the maximum over all replayed replicas.
    rec : float64 (S, D, n)
        Recorded effective durations (:func:`effective`).
    inst : int64 (I)
        Rows of ``rec`` replayed (replicas), each in [0, D).
    keep : uint8 (I, n)
        1: replica ``i`` runs op ``j`` at ``rec[s, inst[i], j]``; 0: at ``ideal[j]``.
    ideal : float64 (n)
        Ideal duration of each op.
    times : bool
        Also return the replayed start and end times.

    Returns
    -------
    makespan : float64 (S)
        Each step's replayed time (its first ops start at 0).
    start, end : float64 (S, I, n)
        Only with ``times=True``.

    Raises
    ------
    ValueError
        A shape that does not fit, or a template or replica index the kernel's checking pass
        refuses (out of range, not a topological order).

    Notes
    -----
    O(S * I * (n + E)) time; scratch O(I * n), allocated once per call; the loop runs without
    the GIL.

    Examples
    --------
    >>> import numpy as np
    >>> ptr = np.array([0, 0, 1], dtype=np.int64); idx = np.array([0], dtype=np.int32)  # op 1 after op 0
    >>> nodes = np.array([0, 1, 2], dtype=np.int64); ops = np.array([0, 1], dtype=np.int32)
    >>> rec = np.array([[[1.0, 2.0]]]); keep = np.ones((1, 2), dtype=np.uint8)
    >>> replay(ptr, idx, nodes, ops, np.zeros(2, np.uint8), rec, np.zeros(1, np.int64), keep, np.ones(2))
    array([3.])
    """
    n = _shapes(dep_ptr, dep_idx, node_ptr, node_ops, node_sync)
    S, D = rec.shape[0], rec.shape[1]
    I = inst.shape[0]
    if rec.shape[2] != n:
        raise ValueError(f"rec must have n = {n} ops on its last axis, got {rec.shape[2]}")
    if keep.shape[0] != I or keep.shape[1] != n:
        raise ValueError(f"keep must have shape ({I}, {n}), got ({keep.shape[0]}, {keep.shape[1]})")
    if ideal.shape[0] != n:
        raise ValueError(f"ideal must hold n = {n} durations, got {ideal.shape[0]}")
    if I < 1:
        raise ValueError("inst must name at least one replica")
    makespan = np.zeros(S, dtype=np.float64)
    shape = (S, I, n) if times else (0, 0, 0)
    start = np.zeros(shape, dtype=np.float64)
    end = np.zeros(shape, dtype=np.float64)
    cdef float64_t[::1] mk = makespan
    cdef float64_t[:, :, ::1] st = start
    cdef float64_t[:, :, ::1] en = end
    cdef int status
    with nogil:
        status = _replay(dep_ptr, dep_idx, node_ptr, node_ops, node_sync, rec, inst, keep, ideal, mk, st, en,
                         times)
    if status != OK:
        raise ValueError(_MESSAGES[status])
    if times:
        return makespan, start, end
    return makespan


def effective(const int64_t[::1] dep_ptr, const int32_t[::1] dep_idx, const int64_t[::1] node_ptr,
              const int32_t[::1] node_ops, const uint8_t[::1] node_sync, const float64_t[:, :, ::1] start,
              const float64_t[:, :, ::1] end):
    """The durations a replay uses, from recorded start and end times (S, D, n each).

    Returns ``out`` (S, D, n): ``end - max(start over the op's node)``, the maximum also over
    the D replicas for a synced node, clipped at 0. A computation (a node of one op) gets its
    recorded duration; a communication its transfer time after the last peer arrived.

    Raises
    ------
    ValueError
        Shapes that differ, or a template the checking pass refuses.

    Examples
    --------
    >>> import numpy as np
    >>> ptr = np.zeros(3, dtype=np.int64); idx = np.zeros(0, dtype=np.int32)
    >>> nodes = np.array([0, 2], dtype=np.int64); ops = np.array([0, 1], dtype=np.int32)  # a send/recv pair
    >>> st = np.array([[[0.0, 0.5]]]); en = np.array([[[1.0, 1.0]]])
    >>> effective(ptr, idx, nodes, ops, np.zeros(1, np.uint8), st, en)
    array([[[0.5, 0.5]]])
    """
    n = _shapes(dep_ptr, dep_idx, node_ptr, node_ops, node_sync)
    if start.shape[0] != end.shape[0] or start.shape[1] != end.shape[1] or start.shape[2] != end.shape[2]:
        raise ValueError("start and end must have the same shape")
    if start.shape[2] != n:
        raise ValueError(f"start must have n = {n} ops on its last axis, got {start.shape[2]}")
    out = np.zeros((start.shape[0], start.shape[1], n), dtype=np.float64)
    cdef float64_t[:, :, ::1] o = out
    cdef int status
    with nogil:
        status = _effective(dep_ptr, dep_idx, node_ptr, node_ops, node_sync, start, end, o)
    if status != OK:
        raise ValueError(_MESSAGES[status])
    return out
