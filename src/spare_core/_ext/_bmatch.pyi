"""Stub of the compiled b-matching kernel (src/_ext/graph/_bmatch.pyx: a greedy pass, then
Pothen-Fan phases with native right capacities); use
spare_core.graph.matching.hopcroft_karp(capacity=...)."""
import numpy as np
from numpy.typing import NDArray

#: the kernel's enums (methods) by name
CONSTANTS: dict[str, int]

class Solution:
    """A maximum b-matching as the kernel returns it (read by name)."""
    @property
    def match_left(self) -> NDArray[np.int64]: ...
    @property
    def right_load(self) -> NDArray[np.int64]: ...
    @property
    def capacity(self) -> NDArray[np.int64]: ...
    @property
    def size(self) -> int: ...
    @property
    def phases(self) -> int: ...
    @property
    def method(self) -> int: ...
    @property
    def fingerprint(self) -> int | None:
        """``solve_csr``: the fingerprint of the caller's index arrays; ``solve``: None."""

def solve(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int32] | NDArray[np.int64],
    n_right: int,
    capacity: NDArray[np.int32] | NDArray[np.int64],
    method: int,
) -> Solution | None:
    """A maximum b-matching (``fingerprint`` None; ``capacity`` the checked int64 copy), or None when every capacity is 1 (nothing solved); ``capacity`` is checked
    >= 0 here (ValueError) and copied; ``method`` METHOD_AUTO (greedy, returned as
    METHOD_GREEDY when already maximum, else PF+ from it) or METHOD_POTHEN_FAN."""
    ...

def solve_csr(
    indptr: NDArray[np.int32] | NDArray[np.int64],
    indices: NDArray[np.int32] | NDArray[np.int64],
    n_left: int,
    n_right: int,
    capacity: NDArray[np.int32] | NDArray[np.int64],
    method: int,
) -> Solution | int | None:
    """``solve`` on the caller's own CSR arrays and capacities in one call (capacity check and
    copy, validating copy and fingerprint of the graph, solve, read-only results):
    ``solve``'s Solution with the fingerprint; 1 when every capacity is 1 (only the capacities
    read); None when the arrays are not plain contiguous native int32/int64 ndarrays of the
    right lengths (nothing read). ValueError for a malformed graph with ``_hk.csr_checked``'s
    messages, then for a negative capacity."""
    ...
