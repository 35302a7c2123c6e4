"""Stub of the compiled b-matching kernel (src/_ext/_bmatch.pyx: a greedy pass, then
Pothen-Fan phases with native right capacities); use
spare_core.matching.hopcroft_karp(capacity=...)."""
import numpy as np
from numpy.typing import NDArray

#: the kernel's enums (methods) by name
CONSTANTS: dict[str, int]

def solve(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int32] | NDArray[np.int64],
    n_right: int,
    capacity: NDArray[np.int32] | NDArray[np.int64],
    method: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], int, int, int] | None:
    """``(match_left, right_load, capacity copy, size, phases, method)`` of a maximum
    b-matching, or None when every capacity is 1 (nothing solved); ``capacity`` is checked
    >= 0 here (ValueError) and copied; ``method`` METHOD_AUTO (greedy, returned as
    METHOD_GREEDY when already maximum, else PF+ from it) or METHOD_POTHEN_FAN."""
    ...
