"""Stub of the compiled network simplex kernel (src/_ext/graph/_netsimplex.pyx); use spare_core.graph.flow."""
import numpy as np
from numpy.typing import NDArray

#: the kernel's enums (status codes, start modes) by name
CONSTANTS: dict[str, int]

class Solution:
    flow: NDArray[np.int64]
    potential: NDArray[np.int64]
    status: int
    cost: int
    stats: dict[str, int]

def solve(
    n: int,
    tail: NDArray[np.int64],
    head: NDArray[np.int64],
    cap: NDArray[np.int64],
    cost: NDArray[np.int64],
    supply: NDArray[np.int64],
    max_pivots: int = ...,
    check: bool = ...,
    block: int = ...,
    block_factor: float = ...,
    start: int = ...,
    list_head: int = ...,
    renumber_factor: float = ...,
) -> Solution: ...
