"""Stub of the compiled min-cost flow kernel (src/_ext/graph/_mcf.pyx); use spare_core.graph.flow."""
import numpy as np
from numpy.typing import NDArray

#: the kernel's enums (status codes, method codes) by name
CONSTANTS: dict[str, int]

class Solution:
    flow: NDArray[np.int64]
    potential: NDArray[np.int64]
    value: int
    leftover: int
    stats: dict[str, int]

class NetworkScan:
    tail_min: int
    tail_max: int
    head_min: int
    head_max: int
    cap_min: int
    cost_min: int
    cost_max: int
    neg_cap_approx: float
    neg_cap: int
    out_approx: float
    out_cap: int
    in_approx: float
    in_cap: int
    out_max: int

class SupplyScan:
    supply_min: int
    supply_max: int
    positive_approx: float
    positive: int
    negative_approx: float
    negative: int
    nonzero: int
    pos_node: int
    neg_node: int

def solve(
    n: int,
    tail: NDArray[np.int64],
    head: NDArray[np.int64],
    cap: NDArray[np.int64],
    cost: NDArray[np.int64],
    supply: NDArray[np.int64],
    source: int = ...,
    sink: int = ...,
    open_bound: int = ...,
    method: int = ...,
    alpha: int = ...,
    exact: bool = ...,
    unit_paths: bool = ...,
    max_path: int = ...,
    update_every: int = ...,
) -> Solution: ...

def scan_network(
    tail: NDArray[np.int64],
    head: NDArray[np.int64],
    cap: NDArray[np.int64],
    cost: NDArray[np.int64],
    source: int = ...,
    sink: int = ...,
) -> NetworkScan: ...

def scan_supply(supply: NDArray[np.int64]) -> SupplyScan: ...

def assignment_shape(
    n: int,
    tail: NDArray[np.int64],
    head: NDArray[np.int64],
    cap: NDArray[np.int64],
    source: int,
    sink: int,
) -> bool: ...
