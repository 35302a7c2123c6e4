# Shared type vocabulary for every spare_core kernel (after scikit-learn's
# utils/_typedefs.pxd). Each ctypedef matches one numpy dtype; tests/test_types.py
# checks the sizes so a platform mismatch fails loudly instead of corrupting memory.
#
# Only ctypedefs (and one fused type) live here: cimporting this file creates no runtime import.
from libc.stdint cimport int8_t, uint8_t, int32_t, uint32_t, int64_t, uint64_t

ctypedef Py_ssize_t intp_t       # numpy.intp: sizes, offsets, loop counters
ctypedef double float64_t        # numpy.float64: times, rates
ctypedef int32_t index32_t       # numpy.int32 graph indices
ctypedef int64_t index64_t       # numpy.int64 graph indices, costs, capacities

ctypedef fused idx_t:            # graph indices as the caller stored them: int32 or int64
    int32_t
    int64_t
