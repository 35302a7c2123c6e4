"""Stub of the compiled maximum-transversal kernel (src/_ext/_transversal.pyx: Pothen-Fan with
lookahead and fairness, FIFO push-relabel, either from the left or from the right side); use spare_core.graph.matching.hopcroft_karp(method=...)."""
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
    side: int = ...,
    ratio: float = ...,
    pf_max_edges: int = ...,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, int, int, bool, int]:
    """``(match_left, right_load, size, phases, work, searched_from_right, method)`` of a
    maximum matching; ``side`` SIDE_LEFT / SIDE_RIGHT / SIDE_PROBE, ``method`` METHOD_AUTO
    chooses after the probe (see the kernel's docstring)."""
    ...

def solve_csr(
    indptr: NDArray[np.int32] | NDArray[np.int64],
    indices: NDArray[np.int32] | NDArray[np.int64],
    n_left: int,
    n_right: int,
    method: int,
    start: int,
    side: int = ...,
    ratio: float = ...,
    pf_max_edges: int = ...,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, int, int, bool, int, int] | None:
    """``solve`` on the caller's own CSR arrays in one call (validating copy, fingerprint of
    the caller's arrays, solve, read-only results): ``solve``'s tuple plus the fingerprint, or
    None when the arrays are not plain contiguous native int32/int64 ndarrays of the right
    length (nothing read). ValueError for a malformed graph, with ``_hk.csr_checked``'s
    messages."""
    ...
