import numpy as np
from numpy.typing import NDArray

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
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, dict[str, int]]: ...

def scan_network(
    tail: NDArray[np.int64],
    head: NDArray[np.int64],
    cap: NDArray[np.int64],
    cost: NDArray[np.int64],
    source: int = ...,
    sink: int = ...,
) -> tuple[int, int, int, int, int, int, int, float, int, float, int, float, int, int]: ...

def scan_supply(supply: NDArray[np.int64]) -> tuple[int, int, float, float, int, int]: ...
