# Software prefetch hints shared by the kernels (_hk, _calendar). A hint never faults,
# whatever the address, and compiles to nothing on compilers without __builtin_prefetch.
# Used to issue the cache misses of a loop over random vertices or buckets a few
# iterations ahead, so that they overlap instead of queueing.
#   prefetch_read(p)       data about to be read, keep in all cache levels
#   prefetch_write(p)      data about to be written, keep in all cache levels
#   prefetch_write_once(p) data about to be written once (low temporal locality)
cdef extern from *:
    """
    #ifndef SPARE_PREFETCH_DEFINED
    #define SPARE_PREFETCH_DEFINED
    #if defined(__GNUC__) || defined(__clang__)
    #define SPARE_PREFETCH_R(p) __builtin_prefetch((p), 0, 3)
    #define SPARE_PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
    #define SPARE_PREFETCH_W_ONCE(p) __builtin_prefetch((p), 1, 1)
    #else
    #define SPARE_PREFETCH_R(p) ((void)(p))
    #define SPARE_PREFETCH_W(p) ((void)(p))
    #define SPARE_PREFETCH_W_ONCE(p) ((void)(p))
    #endif
    #endif
    """
    void prefetch_read "SPARE_PREFETCH_R"(const void* p) noexcept nogil
    void prefetch_write "SPARE_PREFETCH_W"(const void* p) noexcept nogil
    void prefetch_write_once "SPARE_PREFETCH_W_ONCE"(const void* p) noexcept nogil
