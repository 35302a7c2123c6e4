"""Stub for the compiled RECTLR kernel (src/_ext/strategies/spare/_rectlr_core.pyx); use spare_core.rectlr.Rectlr."""
import numpy as np
import numpy.typing as npt

#: the kernel's enums (status codes, kinds, modes, slots) by name
CONSTANTS: dict[str, int]

class RectlrCore:
    n: int
    r: int
    S: int
    place_arr: npt.NDArray[np.int32]
    stack_arr: npt.NDArray[np.int32]
    alive_arr: npt.NDArray[np.uint8]
    assign_arr: npt.NDArray[np.int32]
    load_arr: npt.NDArray[np.int32]
    def __init__(
        self,
        place: npt.NDArray[np.integer],
        hptr: npt.NDArray[np.integer],
        hgrp: npt.NDArray[np.integer],
        hcol: npt.NDArray[np.integer],
    ) -> None: ...
    def reset(self) -> None: ...
    def fail(
        self,
        g: int,
        pg: npt.NDArray[np.int32],
        pt: npt.NDArray[np.int32],
        px: npt.NDArray[np.uint8],
        out: npt.NDArray[np.int64],
    ) -> None: ...
    def phase0(
        self,
        g: int,
        pg: npt.NDArray[np.int32],
        pt: npt.NDArray[np.int32],
        px: npt.NDArray[np.uint8],
        out: npt.NDArray[np.int64],
    ) -> None: ...
    def finish(
        self,
        s_star: int,
        pg: npt.NDArray[np.int32],
        pt: npt.NDArray[np.int32],
        px: npt.NDArray[np.uint8],
        out: npt.NDArray[np.int64],
    ) -> None: ...
    def rejoin(
        self,
        g: int,
        pg: npt.NDArray[np.int32],
        pt: npt.NDArray[np.int32],
        px: npt.NDArray[np.uint8],
        out: npt.NDArray[np.int64],
    ) -> int: ...
    def events(
        self,
        groups: npt.NDArray[np.int32],
        back: npt.NDArray[np.uint8],
        pg: npt.NDArray[np.int32],
        pt: npt.NDArray[np.int32],
        px: npt.NDArray[np.uint8],
        out: npt.NDArray[np.int64],
    ) -> int: ...
    def fail_many(
        self,
        groups: npt.NDArray[np.int32],
        pg: npt.NDArray[np.int32],
        pt: npt.NDArray[np.int32],
        px: npt.NDArray[np.uint8],
        out: npt.NDArray[np.int64],
        pptr: npt.NDArray[np.int64],
    ) -> int: ...
