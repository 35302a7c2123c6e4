# Nothing here is meant for other kernels yet: the time-to-train kernel is driven from
# Python (spare_core.sim). Declared so the layout rule "one .pxd per kernel" holds.
from _types cimport intp_t, int8_t, int64_t

cdef intp_t _cyclic_first_wipe(int8_t* dead, intp_t n, const int64_t* units, intp_t m, intp_t r) noexcept nogil
