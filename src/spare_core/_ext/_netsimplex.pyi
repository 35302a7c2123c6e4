import numpy as np
from numpy.typing import NDArray

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
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, int, dict[str, int]]: ...
