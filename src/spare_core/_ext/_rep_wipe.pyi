"""Stub of spare_core._ext._rep_wipe (src/_ext/strategies/replication/_rep_wipe.pyx)."""
import numpy as np
import numpy.typing as npt

def cyclic_first_wipe(dead: npt.NDArray[np.int8], units: npt.NDArray[np.int64], r: int) -> int: ...
def set_first_wipe(
    dead_count: npt.NDArray[np.int64],
    set_of: npt.NDArray[np.int64],
    set_size: npt.NDArray[np.int64],
    units: npt.NDArray[np.int64],
) -> int: ...
def cyclic_events(
    dead: npt.NDArray[np.int8], units: npt.NDArray[np.int64], back: npt.NDArray[np.uint8], r: int
) -> int: ...
def set_events(
    dead_count: npt.NDArray[np.int64],
    set_of: npt.NDArray[np.int64],
    set_size: npt.NDArray[np.int64],
    units: npt.NDArray[np.int64],
    back: npt.NDArray[np.uint8],
) -> int: ...
