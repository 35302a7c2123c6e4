"""Stub of the dependency replay of a job's steps (src/_ext/stragglers/_whatif_replay.pyx)."""
from typing import Literal, overload

import numpy as np
from numpy.typing import NDArray

CONSTANTS: dict[str, int]

@overload
def replay(
    dep_ptr: NDArray[np.int64], dep_idx: NDArray[np.int32], node_ptr: NDArray[np.int64], node_ops: NDArray[np.int32],
    node_sync: NDArray[np.uint8], rec: NDArray[np.float64], inst: NDArray[np.int64], keep: NDArray[np.uint8],
    ideal: NDArray[np.float64], times: Literal[False] = ...,
) -> NDArray[np.float64]: ...
@overload
def replay(
    dep_ptr: NDArray[np.int64], dep_idx: NDArray[np.int32], node_ptr: NDArray[np.int64], node_ops: NDArray[np.int32],
    node_sync: NDArray[np.uint8], rec: NDArray[np.float64], inst: NDArray[np.int64], keep: NDArray[np.uint8],
    ideal: NDArray[np.float64], times: Literal[True],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]: ...
def effective(
    dep_ptr: NDArray[np.int64], dep_idx: NDArray[np.int32], node_ptr: NDArray[np.int64], node_ops: NDArray[np.int32],
    node_sync: NDArray[np.uint8], start: NDArray[np.float64], end: NDArray[np.float64],
) -> NDArray[np.float64]: ...
