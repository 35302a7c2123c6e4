# cython: language_level=3
"""Reports the byte sizes of the ctypedefs in ``_types.pxd`` (checked by the tests)."""
from _types cimport intp_t, float64_t, int8_t, uint8_t, int32_t, int64_t, uint64_t


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
