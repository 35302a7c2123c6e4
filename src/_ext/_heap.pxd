# Indexed binary min-heap of node ids, shared by the kernels that run Dijkstra
# (_mcf, _netsimplex, _rectlr_core). Only `cdef inline` functions live here: cimporting
# this file compiles them into the kernel, no runtime import and no call overhead.
#
# The heap holds int32 node ids in items[0:size], ordered by an int64 key per node. Where
# the keys and the heap positions are stored is the caller's choice, given as a base
# address and a byte stride:
#   key of v          *(const int64_t*)(key + v * key_stride)
#   position of v     *(int32_t*)(pos + v * pos_stride)      (index of v in items)
# so the same code serves separate arrays (stride = 8 and 4 bytes) and one record per node
# holding both fields (stride = sizeof(record), which keeps a relaxation to one cache line).
# Callers pass the strides as compile-time constants (sizeof), so after inlining the C
# compiler reduces the address arithmetic to plain indexing.
#
# Buffers: items [capacity >= number of nodes pushed]; key, pos: one entry per node id.
# Sentinels are the caller's: heap_pop writes ``popped`` into the removed node's position.
# Ties are broken by the heap's shape (no sequence counter): callers must not depend on
# the order of equal keys.
from _types cimport intp_t, int32_t, int64_t


cdef inline int64_t heap_key(const char* key, intp_t key_stride, int32_t v) noexcept nogil:
    return (<const int64_t*>(key + v * key_stride))[0]


cdef inline int32_t heap_pos(const char* pos, intp_t pos_stride, int32_t v) noexcept nogil:
    return (<const int32_t*>(pos + v * pos_stride))[0]


cdef inline void heap_set_pos(char* pos, intp_t pos_stride, int32_t v, intp_t i) noexcept nogil:
    (<int32_t*>(pos + v * pos_stride))[0] = <int32_t>i


cdef inline void heap_sift_up(int32_t* items, intp_t i, const char* key, intp_t key_stride,
                              char* pos, intp_t pos_stride) noexcept nogil:
    """Restore the order after the key of items[i] decreased (or it was just appended)."""
    cdef int32_t v = items[i], u
    cdef int64_t k = heap_key(key, key_stride, v)
    cdef intp_t parent
    while i > 0:
        parent = (i - 1) >> 1
        u = items[parent]
        if heap_key(key, key_stride, u) <= k:
            break
        items[i] = u
        heap_set_pos(pos, pos_stride, u, i)
        i = parent
    items[i] = v
    heap_set_pos(pos, pos_stride, v, i)


cdef inline void heap_push(int32_t* items, intp_t* size, int32_t v, const char* key,
                           intp_t key_stride, char* pos, intp_t pos_stride) noexcept nogil:
    """Insert v (not in the heap; its key already set)."""
    items[size[0]] = v
    size[0] += 1
    heap_sift_up(items, size[0] - 1, key, key_stride, pos, pos_stride)


cdef inline int32_t heap_pop(int32_t* items, intp_t* size, const char* key, intp_t key_stride,
                             char* pos, intp_t pos_stride, int32_t popped) noexcept nogil:
    """Remove and return the node of least key (size >= 1); its position becomes ``popped``."""
    cdef int32_t top = items[0], v, u
    cdef int64_t k
    cdef intp_t i = 0, c, n
    heap_set_pos(pos, pos_stride, top, popped)
    size[0] -= 1
    n = size[0]
    if n == 0:
        return top
    v = items[n]
    k = heap_key(key, key_stride, v)
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and heap_key(key, key_stride, items[c + 1]) < heap_key(key, key_stride, items[c]):
            c += 1
        u = items[c]
        if heap_key(key, key_stride, u) >= k:
            break
        items[i] = u
        heap_set_pos(pos, pos_stride, u, i)
        i = c
    items[i] = v
    heap_set_pos(pos, pos_stride, v, i)
    return top
