# cython: language_level=3
"""Test hooks for the shared ``.pxd`` files (checked by tests/test_types.py): the byte sizes
of the ctypedefs in ``_types.pxd`` and a driver of the indexed heap of ``_heap.pxd``."""
from libc.stdlib cimport malloc, free
from _types cimport intp_t, float64_t, int8_t, uint8_t, int32_t, int64_t, uint64_t
from _heap cimport heap_sift_up, heap_push, heap_pop, heap_pos

import numpy as np


def ctype_sizes():
    """Return ``{name: sizeof(ctype)}`` for the shared type vocabulary."""
    return {
        "intp_t": sizeof(intp_t),
        "float64_t": sizeof(float64_t),
        "int8_t": sizeof(int8_t),
        "uint8_t": sizeof(uint8_t),
        "int32_t": sizeof(int32_t),
        "int64_t": sizeof(int64_t),
        "uint64_t": sizeof(uint64_t),
    }


# A record like the flow kernel's NodeState: key and position share it, at offsets that
# are not 0, so the heap's strided addressing is exercised as the kernels use it.
cdef struct Rec:
    int64_t other
    int64_t key
    int32_t flag
    int32_t pos


def heap_run(const int64_t[::1] keys, const int64_t[::1] lower, bint records):
    """Push nodes 0..n-1 (n = len(keys)) with ``keys``, then lower node i's key to
    ``lower[i]`` where that is smaller (sift up), then pop everything.

    ``records``: keys and positions in one struct per node (stride sizeof(Rec)) instead of
    two arrays. Returns ``(order, popped_keys, consistent)``: the nodes in pop order, their
    keys, and whether every position pointed back at its node after every operation and
    each popped node's position held the sentinel -7.
    """
    cdef intp_t n = keys.shape[0], i, j, size = 0
    cdef int32_t v
    cdef bint ok = True
    cdef int32_t* items = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
    cdef Rec* rec = <Rec*>malloc(max(n, 1) * sizeof(Rec))
    cdef int64_t* key = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef int32_t* pos = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
    cdef const char* kb
    cdef char* pb
    cdef intp_t ks, ps
    order = np.empty(n, dtype=np.int32)
    popped = np.empty(n, dtype=np.int64)
    cdef int32_t[::1] order_v = order
    cdef int64_t[::1] popped_v = popped
    if items == NULL or rec == NULL or key == NULL or pos == NULL:
        free(items); free(rec); free(key); free(pos)
        raise MemoryError("heap_run scratch")
    if records:
        kb, pb, ks, ps = <const char*>&rec[0].key, <char*>&rec[0].pos, sizeof(Rec), sizeof(Rec)
    else:
        kb, pb, ks, ps = <const char*>key, <char*>pos, sizeof(int64_t), sizeof(int32_t)
    for i in range(n):
        rec[i].key = key[i] = keys[i]
        rec[i].other = -1
        rec[i].flag = -1
        heap_push(items, &size, <int32_t>i, kb, ks, pb, ps)
        for j in range(size):
            ok = ok and heap_pos(pb, ps, items[j]) == j
    for i in range(n):
        if lower[i] < keys[i]:
            rec[i].key = key[i] = lower[i]
            heap_sift_up(items, heap_pos(pb, ps, <int32_t>i), kb, ks, pb, ps)
            for j in range(size):
                ok = ok and heap_pos(pb, ps, items[j]) == j
    for i in range(n):
        v = heap_pop(items, &size, kb, ks, pb, ps, -7)
        order_v[i] = v
        popped_v[i] = key[v]
        ok = ok and heap_pos(pb, ps, v) == -7 and size == n - 1 - i
        for j in range(size):
            ok = ok and heap_pos(pb, ps, items[j]) == j
    for i in range(n):
        ok = ok and rec[i].other == -1 and rec[i].flag == -1   # neighbours untouched
    free(items); free(rec); free(key); free(pos)
    return order, popped, bool(ok)
