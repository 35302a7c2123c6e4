"""Stub of the compiled failure event engine kernel (src/_ext/events/_calendar.pyx)."""
from typing import Callable

import numpy as np

#: the kernel's enums (status codes, kinds, modes, slots) by name
CONSTANTS: dict[str, int]

class EventCore:
    n: int
    n_slots: int
    n_timers: int
    now: float
    n_alive: int
    renewals: bool
    system: bool
    repair_mode: int
    n_events: int
    n_failures: int
    n_repairs: int
    n_unit_failures: int
    n_system: int
    n_system_missed: int
    n_trace: int
    n_trace_missed: int
    n_trace_skipped: int
    n_timer: int
    peak_down: int
    last_t: float
    last_kind: int
    last_unit: int
    last_seq: int
    trace_pos: int
    trace_len: int
    queued_count: int
    track: bool
    def __init__(self, n: int, n_timers: int, bucket_width: float, n_buckets: int, start: float, track: bool) -> None: ...
    def configure(self, renewals: bool, repair_mode: int, repair_value: float, system: bool) -> None: ...
    def set_buffer(self, which: str, arr: np.ndarray) -> None: ...
    def set_trace(self, times: np.ndarray, units: np.ndarray) -> None: ...
    def start_units(self) -> None: ...
    def start_system(self) -> None: ...
    def set_timer(self, j: int, first: float, period: float) -> None: ...
    def cancel_timer(self, j: int) -> None: ...
    def timer_pending(self, j: int) -> bool: ...
    def run(self, until: float, stop_mask: int, max_events: int) -> int: ...
    def peek(self) -> tuple[float, int]: ...
    def restart(self, t: float) -> None: ...
    def alive_array(self) -> np.ndarray: ...
    def is_alive(self, u: int) -> bool: ...

class RenewalTotals:
    """What ``run_renewals`` returns (read by name)."""
    @property
    def n_failures(self) -> int: ...
    @property
    def n_repairs(self) -> int: ...
    @property
    def n_events(self) -> int: ...
    @property
    def peak_down(self) -> int: ...
    @property
    def now(self) -> float: ...

def run_renewals(
    n: int,
    life_sampler: Callable[[int], np.ndarray],
    repair_mode: int,
    repair_value: float,
    repair_sampler: Callable[[int], np.ndarray] | None,
    horizon: float,
    bucket_width: float,
    n_buckets: int,
    batch: int,
) -> RenewalTotals: ...
