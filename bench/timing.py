"""Medians of repeated calls, shared by the ratio tables and the A/B scripts.

The machine is shared: CPU time (``time.process_time``, what the process itself consumed)
is less distorted by other jobs than wall time; the tables say which one they report.
"""
from __future__ import annotations

import statistics
import time
import timeit


def _median(fn, repeats, clock):
    ts = []
    for _ in range(repeats):
        t = clock()
        fn()
        ts.append(clock() - t)
    return statistics.median(ts)


def cpu_median(fn, repeats):
    """Median CPU seconds of ``fn()`` (process time: robust to other jobs on a shared machine)."""
    return _median(fn, repeats, time.process_time)


def wall_median(fn, repeats):
    """Median wall seconds of ``fn()``."""
    return _median(fn, repeats, time.perf_counter)


def time_medians(fn, repeats):
    """Median wall and median CPU (process) time of ``repeats`` calls."""
    cpu = []

    def timed():
        t = time.process_time()
        fn()
        cpu.append(time.process_time() - t)

    wall = statistics.median(timeit.repeat(timed, number=1, repeat=repeats))
    return wall, statistics.median(cpu)
