"""Adversarial array generators shared by the fuzz tests: every dtype, byte order, stride,
read-only flag, emptiness and extreme value a user can hand to a public function."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", ">i4", ">i8", "<i8"]
ODD_DTYPES = ["float64", "float32", ">f8", "bool", "complex128", "object", "U3"]
INT64_EDGES = [0, 1, -1, 2**31 - 1, 2**31, -(2**31), 2**62, 2**63 - 1, -(2**63)]
FLOAT_EDGES = [0.0, -0.0, 1e-310, 5e-324, 1e308, -1e308, np.inf, -np.inf, np.nan, 1.0, -1.0]


@st.composite
def disguise(draw, arr: np.ndarray, *, allow_odd=True):
    """``arr`` re-dressed: another dtype (possibly lossy), big-endian, non-contiguous,
    read-only, a list, or a 2-d array."""
    how = draw(st.sampled_from(["same", "dtype", "strided", "readonly", "list", "2d", "odd"]
                               if allow_odd else ["same", "dtype", "strided", "readonly", "list"]))
    a = np.asarray(arr)
    if how == "dtype":
        dt = draw(st.sampled_from(INT_DTYPES))
        with np.errstate(all="ignore"):
            return a.astype(dt)
    if how == "strided":
        big = np.zeros(2 * a.size, dtype=a.dtype)
        big[::2] = a
        return big[::2]
    if how == "readonly":
        b = a.copy()
        b.flags.writeable = False
        return b
    if how == "list":
        return a.tolist()
    if how == "2d":
        return a.reshape(1, -1)
    if how == "odd":
        dt = draw(st.sampled_from(ODD_DTYPES))
        try:
            return a.astype(dt)
        except (TypeError, ValueError):
            return a
    return a


def snapshot(*arrays):
    """Copies of the ndarrays among ``arrays`` (to check later that nothing was modified)."""
    return [(a, a.copy()) for a in arrays if isinstance(a, np.ndarray)]


def unchanged(snap) -> bool:
    return all(np.array_equal(a, b, equal_nan=a.dtype.kind == "f") and a.shape == b.shape for a, b in snap)
