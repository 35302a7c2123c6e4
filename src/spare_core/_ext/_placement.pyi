"""Stub of the node log's placement loop (src/_ext/events/_placement.pyx)."""
import numpy as np
from numpy.typing import NDArray

def place_chunk(
    next_t: NDArray[np.float64], occ: NDArray[np.int64], count: NDArray[np.int64], scale: NDArray[np.float64],
    idle: NDArray[np.int64], key: NDArray[np.int64], seq: NDArray[np.int64], state: NDArray[np.int64],
    draws: NDArray[np.float64], end: float, fewest: int, slots_heap: NDArray[np.int64],
    out_t: NDArray[np.float64], out_slot: NDArray[np.int64], out_node: NDArray[np.int64],
    lemon: NDArray[np.int8], fix_u: NDArray[np.float64], fix: float, normal_scale: float,
    fixed_op: NDArray[np.float64], retire_after: int, out_ret: NDArray[np.int8], redraw: int,
    redraw_scale: NDArray[np.float64],
) -> tuple[int, int]: ...
