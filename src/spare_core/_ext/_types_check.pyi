"""Stub of the test hooks for the shared .pxd files (src/_ext/_types_check.pyx)."""
import numpy as np
from numpy.typing import NDArray

def ctype_sizes() -> dict[str, int]: ...
def heap_run(
    keys: NDArray[np.int64], lower: NDArray[np.int64], records: bool
) -> tuple[NDArray[np.int32], NDArray[np.int64], bool]: ...
