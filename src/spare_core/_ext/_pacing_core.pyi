"""Stub of the compiled pacing kernel (src/_ext/_pacing_core.pyx). Private: use spare_core.pacing."""
import numpy as np
from numpy.typing import NDArray

def simulate_chunk(
    base: NDArray[np.float64], g: int, sigma: float,
    z: NDArray[np.float32], picks: NDArray[np.uint32], busy: NDArray[np.uint8],
    flow_src: NDArray[np.intp], flow_src_leaf: NDArray[np.intp], flow_dst_leaf: NDArray[np.intp],
    n_leaves: int, n_spines: int,
    rail_a: NDArray[np.float64], rail_bw: NDArray[np.float64], rail_floor: NDArray[np.float64],
    t_intra: float, nic_bw: float, window: float, buffer: float, buffer_idle: float, rto: float, ctrl_latency: float,
    ep_rank: NDArray[np.intp], ep_start: NDArray[np.int64], ep_end: NDArray[np.int64],
    ep_factor: NDArray[np.float64], it0: int, mode: int, holds: NDArray[np.float64],
    theta_on: float, theta_off: float, patience: int, hold_max: float,
    ep_until: NDArray[np.int64], ep_fac: NDArray[np.float64], eff: NDArray[np.float64],
    active: NDArray[np.intp], state: NDArray[np.int64], bstate: NDArray[np.float64],
    smoothing: float = ..., max_patience: int = ..., record: bool = ...,
) -> dict[str, NDArray]: ...
