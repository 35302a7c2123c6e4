"""Type stub of the compiled time-to-train kernel (src/_ext/sim/_timeline.pyx)."""
import numpy as np
import numpy.typing as npt

#: the kernel's enums (status codes, kinds, modes, slots) by name
CONSTANTS: dict[str, int]

SLOTS: dict[str, int]
#: the registers and statuses of restart_epochs
EPOCH_SLOTS: dict[str, int]

def new_state(initial_depth: float, start_time: float = ...) -> npt.NDArray[np.float64]: ...
def advance(
    state: npt.NDArray[np.float64],
    params: npt.NDArray[np.float64],
    frel: npt.NDArray[np.float64],
    t_offset: float,
    fkind: npt.NDArray[np.int8],
    fdepth: npt.NDArray[np.float64],
    fpatch: npt.NDArray[np.float64],
    start: int,
    t_next: float,
    mult: npt.NDArray[np.float64],
) -> tuple[int, int]: ...
def restart_epochs(
    state: npt.NDArray[np.float64],
    params: npt.NDArray[np.float64],
    io: npt.NDArray[np.float64],
    log_t: npt.NDArray[np.float64],
    log_g: npt.NDArray[np.int64],
    horizon: float,
    rs: npt.NDArray[np.float64],
    pool: npt.NDArray[np.float64],
    holders: npt.NDArray[np.int64],
    mult: npt.NDArray[np.float64],
    rec_end: npt.NDArray[np.float64],
    rec_start: npt.NDArray[np.float64],
    draw_rep: npt.NDArray[np.float64] | None = ...,
    draw_swap: npt.NDArray[np.float64] | None = ...,
    draw_mis: npt.NDArray[np.int8] | None = ...,
    take_slot: npt.NDArray[np.int64] | None = ...,
    take_old: npt.NDArray[np.float64] | None = ...,
    standby: npt.NDArray[np.float64] | None = ...,
    standby_slot: npt.NDArray[np.int64] | None = ...,
    standby_old: npt.NDArray[np.float64] | None = ...,
) -> int: ...
