"""Stub of the compiled pacing kernel (src/_ext/pacing/_pacing_core.pyx). Private: use spare_core.pacing."""
import numpy as np
from numpy.typing import NDArray

MODE_NONE: int
MODE_SPREAD: int
MODE_HOLDS: int
MODE_BASELINE: int
MODES: tuple[int, int, int, int]
#: the kernel's enums by name
CONSTANTS: dict[str, int]
NO_LINK: int

class LinkTable:
    n_nodes: int
    n_rails: int
    n_planes: int
    plane_links: int
    n_paths: int
    n_domains: int
    n_flows: int
    n_hops: int
    identity: bool
    per_rail_hops: bool
    def __init__(
        self, *, n_nodes: int, gpus_per_node: int, flow_src: NDArray[np.integer],
        hops: NDArray[np.integer], path_links: NDArray[np.integer] | None, n_paths: int,
        plane_links: int, rail_plane: NDArray[np.integer], link_domain: NDArray[np.integer],
        n_domains: int,
    ) -> None: ...
    @property
    def rails_per_plane(self) -> NDArray[np.intp]: ...

def simulate_chunk(
    base: NDArray[np.float64], g: int, sigma: float,
    z: NDArray[np.float32], picks: NDArray[np.uint32], busy: NDArray[np.uint8],
    links: LinkTable,
    rail_a: NDArray[np.float64], rail_bw: NDArray[np.float64], rail_floor: NDArray[np.float64],
    t_intra: float, nic_bw: float, window: float, buffer: float, buffer_idle: float, rto: float, ctrl_latency: float,
    ep_rank: NDArray[np.intp], ep_start: NDArray[np.int64], ep_end: NDArray[np.int64],
    ep_factor: NDArray[np.float64], it0: int, mode: int, holds: NDArray[np.float64],
    theta_on: float, theta_off: float, patience: int, hold_max: float,
    ep_until: NDArray[np.int64], ep_fac: NDArray[np.float64], eff: NDArray[np.float64],
    active: NDArray[np.intp], state: NDArray[np.int64], bstate: NDArray[np.float64],
    smoothing: float = ..., max_patience: int = ..., record: bool = ...,
) -> dict[str, NDArray]: ...
