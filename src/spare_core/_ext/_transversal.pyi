"""Stub of the compiled maximum-transversal kernel (src/_ext/graph/_transversal.pyx: Pothen-Fan with
lookahead and fairness, FIFO push-relabel, either from the left or from the right side); use spare_core.graph.matching.hopcroft_karp(method=...)."""
import numpy as np
from numpy.typing import NDArray

#: the kernel's enums (methods, start strategies) by name
CONSTANTS: dict[str, int]

class Solution:
    """A maximum matching as the kernel returns it (read by name)."""
    @property
    def match_left(self) -> NDArray[np.int64]: ...
    @property
    def right_load(self) -> NDArray[np.int64]: ...
    @property
    def size(self) -> int: ...
    @property
    def phases(self) -> int: ...
    @property
    def work(self) -> int: ...
    @property
    def from_right(self) -> bool: ...
    @property
    def method(self) -> int: ...
    @property
    def fingerprint(self) -> int | None:
        """``solve_csr``: the fingerprint of the caller's index arrays; ``solve``: None."""

def solve(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int32] | NDArray[np.int64],
    n_right: int,
    method: int,
    start: int,
    side: int = ...,
    ratio: float = ...,
    pf_max_edges: int = ...,
) -> Solution:
    """A maximum matching (``fingerprint`` None); ``side`` SIDE_LEFT / SIDE_RIGHT /
    SIDE_PROBE, ``method`` METHOD_AUTO chooses after the probe (see the kernel's docstring)."""
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
) -> Solution | None:
    """``solve`` on the caller's own CSR arrays in one call (validating copy, fingerprint of
    the caller's arrays, solve, read-only results): ``solve``'s Solution with the fingerprint, or
    None when the arrays are not plain contiguous native int32/int64 ndarrays of the right
    length (nothing read). ValueError for a malformed graph, with ``_hk.csr_checked``'s
    messages."""
    ...
