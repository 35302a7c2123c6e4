"""Stub of the per-epoch scan of a trace replay (src/_ext/events/_trace_scan.pyx)."""
import numpy as np
from numpy.typing import NDArray

def scan(
    prev: NDArray[np.int64], offset: int, pos: int, limit: int, p0: int, need: int
) -> tuple[NDArray[np.int64], int]: ...
