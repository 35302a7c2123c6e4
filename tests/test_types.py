"""The shared Cython type vocabulary matches numpy's dtypes on this platform."""
import numpy as np

from spare_core._native import load


def test_ctypedefs_match_numpy_dtypes():
    sizes = load("_types_check").ctype_sizes()
    assert sizes["intp_t"] == np.dtype(np.intp).itemsize
    assert sizes["float64_t"] == np.dtype(np.float64).itemsize
    assert sizes["int8_t"] == 1 and sizes["uint8_t"] == 1
    assert sizes["int32_t"] == np.dtype(np.int32).itemsize
    assert sizes["int64_t"] == np.dtype(np.int64).itemsize
    assert sizes["uint64_t"] == np.dtype(np.uint64).itemsize


def test_missing_extension_gives_actionable_error():
    import pytest

    with pytest.raises(ImportError, match="pip install"):
        load("no_such_kernel")
