"""Epoch-indexed failures of a scenario's failure stream, materialised once and replayed.

:class:`spare_core.events.FailureStream` draws the failures of its k-th epoch from a child
random stream indexed by k, relative to the epoch's start (common random numbers). So the
k-th epoch of every run on one seed holds the same failures, shifted to the run's own
restart time. :class:`EpochFailures` pulls each epoch's failures from one driving stream,
stores them as times relative to the epoch start, and hands them to any number of runs as
read-only arrays: a sweep over policies and redundancies on one seed pays for each epoch's
draws once, and the simulation loop slices arrays instead of making a Python call per
failure. Runs that need only the failure times (checkpoint-only: every failure is a
restart, whichever unit it hits) ask for times alone, and the stream then never draws the
victims of an epoch that ends before anyone needs them.
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
    One driving stream moves forward through the epochs (restarting at its own current
    time; the failures are stored relative to each epoch's start, which the stream's
    common-random-numbers layout makes independent of when the restart happens, up to the
    rounding of ``(start + t) - start``). A request for more failures of an epoch the driver
    has already left rebuilds a driver from the seed and replays the restarts up to that
    epoch: correct, but slow, so callers that share one instance should visit deep prefixes
    first (the sweep orders runs by decreasing r).

    *Times only.* :meth:`times` pulls failures without their units (the stream draws a
    chunk's victims only when asked, or before the next chunk: the same numbers in the same
    order either way), so an epoch may hold more times than units. :meth:`get` completes
    the units from the driver while it is still in that epoch; once it has left, a separate
    side stream positioned at the epoch redraws them, leaving the driver — and with it every
    time the cache will hold — exactly as if the units had been drawn all along.
    """

    __slots__ = ("_scenario", "_seed", "_driver", "_pulled", "_synced", "_times", "_units", "_done", "_side",
                 "_side_pulled", "rebuilds", "_gives_units")

    def __init__(self, scenario, seed):
        self._scenario = scenario
        self._seed = seed
        self._driver = scenario.failure_stream(seed)
        self._pulled = 0  # failures the driver has handed out in its current epoch
        self._synced = 0  # ... of which the units were taken
        self._times: list[np.ndarray] = [_EMPTY_T]
        self._units: list[np.ndarray] = [_EMPTY_U]
        self._done: list[bool] = [False]
        self._side = None  # stream that redraws units of epochs the driver has left
        self._side_pulled = 0
        self.rebuilds = 0
        # whether the process returns units even when asked for times only (then none are owed)
        self._gives_units = False

    def _goto(self, k: int) -> None:
        d = self._driver
        if d.epoch > k:
            self.rebuilds += 1
            d = self._driver = self._scenario.failure_stream(self._seed)
            self._pulled = self._synced = 0
        while d.epoch < k:
            d.restart(d.now)
            self._pulled = self._synced = 0
            if d.epoch >= len(self._times):
                self._times.append(_EMPTY_T)
                self._units.append(_EMPTY_U)
                self._done.append(False)

    def _cached(self, k: int, need: int, want: int) -> bool:
        """Whether the cached times of epoch ``k`` answer a request (see :meth:`get`)."""
        if k >= len(self._times):
            return False
        have = self._times[k].shape[0]
        return have >= want or self._done[k] or (have >= need and self._driver.epoch > k)

    def times(self, k: int, need: int, want: int = 0) -> np.ndarray:
        """The relative times of :meth:`get`, without drawing units the epoch has not needed."""
        if want < need:
            want = need
        if not self._cached(k, need, want):
            self._pull(k, want, False)
        return self._times[k]

    def get(self, k: int, need: int, want: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """At least ``need`` failures of epoch ``k`` (all of them if the epoch has fewer).

        ``want`` (>= ``need``) is a wish: it is fetched when that is cheap (the driver is at or
        before epoch ``k``), but an epoch the driver has left is only rebuilt for ``need``.
        Returns read-only ``(relative_times, units)`` of equal length; the arrays may hold
        more than asked.
        """
        want = max(want, need)
        if not self._cached(k, need, want):
            self._pull(k, want, True)
        elif self._units[k].shape[0] < self._times[k].shape[0]:
            self._complete_units(k)
        return self._times[k], self._units[k]

    def _pull(self, k: int, want: int, with_units: bool) -> None:
        """Move the driver to epoch ``k`` and pull it up to ``want`` failures."""
        self._goto(k)
        d = self._driver
        t_old, u_old = self._times[k], self._units[k]
        have = t_old.shape[0]
        start = d.epoch_start
        with_units = with_units or self._gives_units
        if have > self._pulled:  # a rebuilt driver replays the cached prefix
            _, u_re = d.take(have - self._pulled, with_units)
            if u_re is not None and not with_units:  # the process hands its units out anyway
                self._gives_units = with_units = True
            self._pulled = have
            if with_units:
                self._synced = have
                if u_old.shape[0] < have:  # pulled was 0: u_re is the whole prefix
                    u_old = np.array(u_re, dtype=np.int64)
        if with_units and self._synced < self._pulled:
            u_old = self._merge_units(u_old, d.take_units())
        t_new, u_new = d.take(want - have, with_units)
        if u_new is not None and not with_units:  # the process hands its units out anyway
            self._gives_units = with_units = True
            if self._synced < have:
                u_old = self._merge_units(u_old, d.take_units())
        got = len(t_new)
        done = got < want - have or d.n_alive == 0
        self._pulled = have + got
        if got:
            # the same IEEE subtraction either way; a list comprehension is cheaper for the
            # one or two failures of a typical checkpoint-only pull
            t_arr = np.array([t - start for t in t_new]) if got <= 8 else np.array(t_new) - start
            if have:
                t_arr = np.concatenate((t_old, t_arr))
            t_arr.flags.writeable = False
            self._times[k] = t_arr
        if with_units:
            self._synced = self._pulled
            if got:
                u_old = np.concatenate((u_old, u_new)) if u_old.shape[0] else np.array(u_new, dtype=np.int64)
            self._set_units(k, u_old)
        self._done[k] = done

    def _merge_units(self, cached: np.ndarray, owed: list) -> np.ndarray:
        """Cached units of the driver's epoch extended by the driver's owed units, which
        cover its failures ``[synced, pulled)``."""
        self._synced = self._pulled
        skip = cached.shape[0] - (self._pulled - len(owed))
        if skip >= len(owed):
            return cached
        extra = np.array(owed[skip:], dtype=np.int64)
        return np.concatenate((cached, extra)) if cached.shape[0] else extra

    def _complete_units(self, k: int) -> None:
        """Units for every cached time of epoch ``k``, the driver left where it is."""
        have = self._times[k].shape[0]
        d = self._driver
        if d.epoch == k and self._pulled == have:
            self._set_units(k, self._merge_units(self._units[k], d.take_units()))
            return
        side = self._side
        if side is None or side.epoch > k:
            side = self._side = self._scenario.failure_stream(self._seed)
            self._side_pulled = 0
        while side.epoch < k:
            side.restart(side.now)
            self._side_pulled = 0
        # units do not depend on when the epoch started, so the side stream's times are
        # unused; what it consumed of epoch k before ([0, side_pulled)) is already cached
        cached, pulled = self._units[k], self._side_pulled
        _, units = side.take(have - pulled, True)
        self._side_pulled = have
        extra = np.array(units[cached.shape[0] - pulled :], dtype=np.int64)
        self._set_units(k, np.concatenate((cached, extra)) if cached.shape[0] else extra)

    def _set_units(self, k: int, units: np.ndarray) -> None:
        units.flags.writeable = False
        self._units[k] = units

    def next_time(self, k: int, i: int) -> float:
        """Relative time of failure ``i`` of epoch ``k`` (``inf`` if the epoch has fewer)."""
        t = self.times(k, i + 1)
        return float(t[i]) if i < t.shape[0] else math.inf

    @property
    def epochs_materialised(self) -> int:
        return len(self._times)
