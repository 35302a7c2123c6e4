"""Stub of the compiled maximum-transversal kernel (src/_ext/_transversal.pyx: Pothen-Fan with
lookahead and fairness, FIFO push-relabel); use spare_core.matching.hopcroft_karp(method=...)."""
import numpy as np
from numpy.typing import NDArray

#: the kernel's enums (methods, start strategies) by name
CONSTANTS: dict[str, int]

def solve(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int32] | NDArray[np.int64],
    n_right: int,
    method: int,
    start: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, int, int]:
    """``(match_left, right_load, size, phases, work)`` of a maximum matching."""
    ...
