"""Epoch-indexed failures of a scenario's failure stream, materialised once and replayed.

:class:`spare_core.events.FailureStream` draws the failures of its k-th epoch from a child
random stream indexed by k, relative to the epoch's start (common random numbers). So the
k-th epoch of every run on one seed holds the same failures, shifted to the run's own
restart time. :class:`EpochFailures` pulls each epoch's failures from one driving stream,
stores them as times relative to the epoch start, and hands them to any number of runs as
read-only arrays: a sweep over policies and redundancies on one seed pays for each epoch's
draws once, and the simulation loop slices arrays instead of making a Python call per
failure.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["EpochFailures"]

_EMPTY_T = np.zeros(0)
_EMPTY_U = np.zeros(0, dtype=np.int64)
_EMPTY_T.flags.writeable = False
_EMPTY_U.flags.writeable = False


class EpochFailures:
    """Failures of epoch k, relative to the epoch start, for a scenario and a seed.

    Parameters
    ----------
    scenario : Scenario
        Provides ``failure_stream(seed)``.
    seed : numpy.random.SeedSequence
        The failure stream's seed.

    Notes
    -----
    One driving stream moves forward through the epochs (``restart`` at its own current
    time; the failures are stored relative to each epoch's start, which the stream's
    common-random-numbers layout makes independent of when the restart happens). A request
    for more failures of an epoch the driver has already left rebuilds a driver from the
    seed and replays the restarts up to that epoch: correct, but slow, so callers that share
    one instance should visit deep prefixes first (the sweep orders runs by decreasing r).
    """

    __slots__ = ("_scenario", "_seed", "_driver", "_pulled", "_times", "_units", "_done", "rebuilds")

    def __init__(self, scenario, seed):
        self._scenario = scenario
        self._seed = seed
        self._driver = scenario.failure_stream(seed)
        self._pulled = 0  # failures the driver has handed out in its current epoch
        self._times: list[np.ndarray] = [_EMPTY_T]
        self._units: list[np.ndarray] = [_EMPTY_U]
        self._done: list[bool] = [False]
        self.rebuilds = 0

    def _goto(self, k: int) -> None:
        d = self._driver
        if d.epoch > k:
            self.rebuilds += 1
            d = self._driver = self._scenario.failure_stream(self._seed)
            self._pulled = 0
        while d.epoch < k:
            d.restart(d.now)
            self._pulled = 0
            if d.epoch >= len(self._times):
                self._times.append(_EMPTY_T)
                self._units.append(_EMPTY_U)
                self._done.append(False)

    def get(self, k: int, need: int, want: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """At least ``need`` failures of epoch ``k`` (all of them if the epoch has fewer).

        ``want`` (>= ``need``) is a wish: it is fetched when that is cheap (the driver is at or
        before epoch ``k``), but an epoch the driver has left is only rebuilt for ``need``.
        Returns read-only ``(relative_times, units)``; the arrays may hold more than asked.
        """
        want = max(want, need)
        if k < len(self._times):
            have = self._times[k].shape[0]
            if have >= want or self._done[k] or (have >= need and self._driver.epoch > k):
                return self._times[k], self._units[k]
        self._goto(k)
        d = self._driver
        have = self._times[k].shape[0]
        start = d.epoch_start
        if have > self._pulled:  # a rebuilt driver replays the cached prefix
            d.next_failures(have - self._pulled)
        t_new, u_new = d.next_failures(want - have)
        done = t_new.shape[0] < want - have or d.n_alive == 0
        self._pulled = have + t_new.shape[0]
        if t_new.shape[0]:
            t_new -= start
            if have:
                t_new = np.concatenate((self._times[k], t_new))
                u_new = np.concatenate((self._units[k], u_new))
        else:
            t_new, u_new = self._times[k].copy(), self._units[k].copy()
        t_arr, u_arr = np.ascontiguousarray(t_new), u_new
        t_arr.flags.writeable = False
        u_arr.flags.writeable = False
        self._times[k], self._units[k], self._done[k] = t_arr, u_arr, done
        return t_arr, u_arr

    def next_time(self, k: int, i: int) -> float:
        """Relative time of failure ``i`` of epoch ``k`` (``inf`` if the epoch has fewer)."""
        t, _ = self.get(k, i + 1)
        return float(t[i]) if i < t.shape[0] else math.inf

    @property
    def epochs_materialised(self) -> int:
        return len(self._times)
