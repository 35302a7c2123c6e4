"""Epoch sources: the failures of a run's epochs, as the simulator consumes them.

An *epoch source* (:class:`EpochSource`) answers "the first failures of epoch k, which
started at ``start``", as arrays of times relative to ``start`` and the groups hit. A
failure model builds one per seed (:meth:`spare_core.events.FailureModel.epoch_source`) and
several runs on that seed may share it (a sweep over policies and redundancies does).

:class:`EpochFailures` serves the models that renew every failure clock at a restart
(``renews_all_at_restart``): their processes draw the failures of the k-th epoch from a
child random stream indexed by k, relative to the epoch's start (common random numbers), so
the k-th epoch of every run on one seed holds the same failures, shifted to the run's own
restart time. It pulls each epoch's failures from one driving stream restarted at time 0
for every epoch, so the times it stores are relative to the epoch start by construction
(a run adds its own start once: a failure of epoch k is at ``start + offset`` whichever runs
used the cache before), and hands them to any number of runs as read-only arrays: a sweep
over policies and redundancies on one seed pays for each epoch's draws once, and the
simulation loop slices arrays instead of making a Python call per failure. Runs that need
only the failure times (checkpoint-only: every failure is a restart, whichever unit it
hits) ask for times alone, and the stream then never draws the victims of an epoch that
ends before anyone needs them.
"""
from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["EpochSource", "EpochFailures", "RunFailures"]

_EMPTY_T = np.zeros(0)
_MIN_CHUNK = 64  # failures a chunked RunFailures reads at once (a SPARe epoch is a few tens)
_EMPTY_U = np.zeros(0, dtype=np.int64)
_EMPTY_T.flags.writeable = False
_EMPTY_U.flags.writeable = False


def _draw_times(t, asked: int, after: float, model, shift: float = 0.0) -> np.ndarray:
    """The times a process's ``take`` handed out, as a new float64 array (minus ``shift``),
    checked once where they enter the library, whichever model drew them (a user's
    :class:`FailureModel` included): 1-d, at most ``asked`` of them, finite, non-decreasing
    and not before ``after`` (the previous failure of the epoch, or its start). A NaN time
    used to end the run as if no failure came (0 failures seen), a negative one could make
    it loop; now each is a ValueError naming the model."""
    if type(t) is list and len(t) <= min(asked, 16):  # the usual few floats: checked without numpy calls
        prev = after
        for x in t:
            if type(x) is not float:
                break
            x -= shift
            if not prev <= x < math.inf:  # NaN fails it too
                break
            prev = x
        else:
            a = np.array(t, dtype=np.float64)
            if shift:
                a -= shift
            return a
    try:
        a = np.array(t, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{type(model).__name__}: the process's take() must return float times, "
                        f"got {type(t).__name__}") from None
    if a.ndim != 1 or a.shape[0] > asked:
        raise ValueError(f"{type(model).__name__}: the process's take({asked}) must return at most {asked} "
                         f"times in a 1-d sequence, got shape {a.shape}")
    if shift:
        a -= shift
    if a.shape[0] and not (a[0] >= after and a[-1] < math.inf and (a.shape[0] == 1 or (a[1:] >= a[:-1]).all())):
        raise ValueError(f"{type(model).__name__}: the process's failure times must be finite, non-decreasing "
                         f"and not before the epoch's start or previous failure ({after + shift!r}), got "
                         f"{(a[:8] + shift).tolist()}{' ...' if a.shape[0] > 8 else ''}")
    return a


def _draw_units(u, n: int, n_groups: int, model) -> np.ndarray:
    """The groups a process handed out for ``n`` failures, as a new int64 array, checked:
    integers in ``[0, n_groups)``, one per failure."""
    if type(u) is list and len(u) == n <= 16 and all(type(x) is int and 0 <= x < n_groups for x in u):
        return np.array(u, dtype=np.int64)  # the usual few ints: checked without numpy calls
    a = np.array(u)
    if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and a.size == 0) or a.shape != (n,):
        raise ValueError(f"{type(model).__name__}: the process must return integer groups, one per failure "
                         f"({n}), got dtype {a.dtype} and shape {a.shape}")
    a = a.astype(np.int64, copy=False)
    if n and not a.view(np.uint64).max() < n_groups:  # one pass: a negative id is huge as unsigned
        raise ValueError(f"{type(model).__name__}: the process returned a group outside [0, {n_groups}): "
                         f"{a.min()} .. {a.max()}")
    return a


@runtime_checkable
class EpochSource(Protocol):
    """What the simulator reads: the failures of epoch ``k`` of a run, relative to its start.

    ``start`` is the wall time at which the run's epoch ``k`` started (0 for epoch 0; the end
    of the previous restart otherwise). Sources of models that renew every clock at a
    restart ignore it; the others use it (node ages and recorded times live in wall time).
    The returned arrays are read-only and may hold more than asked; fewer than ``need``
    means the epoch has no more failures.
    """

    def times(self, k: int, need: int, want: int = 0, *, start: float) -> np.ndarray:
        """At least ``need`` relative failure times of epoch ``k`` (``want`` is a wish)."""

    def get(self, k: int, need: int, want: int = 0, *, start: float) -> tuple[np.ndarray, np.ndarray]:
        """``(relative_times, groups)`` of equal length, at least ``need`` of them."""

    def next_time(self, k: int, i: int, *, start: float) -> float:
        """Relative time of failure ``i`` of epoch ``k`` (``inf`` if it has fewer)."""


class EpochFailures:
    """Failures of epoch k, relative to the epoch start, for a failure model and a seed.

    For models whose restarts renew every clock (``renews_all_at_restart``); the ``start``
    arguments of the :class:`EpochSource` methods are ignored.

    Parameters
    ----------
    model : FailureModel
        Builds the driving process (:meth:`FailureModel.process`).
    n_groups : int
        Groups of the job.
    seed : numpy.random.SeedSequence
        The failure process's seed.

    Notes
    -----
    One driving stream moves forward through the epochs, each started on a clock set back
    to 0 (the process's ``restart_from_zero``), so the cached times are the offsets the
    process draws, never ``(start + t) - start``: a cell of a sweep holds the same numbers,
    bit for bit, as a fresh run on its seed, whatever other runs read the cache first and
    how far. A process without ``restart_from_zero`` (a user's model) is rebuilt and restarted
    k times at 0 to reach epoch k: exact, but O(k) restarts per epoch. A request for more
    failures of an epoch the driver has already left rebuilds a driver from the seed and
    replays the restarts up to that epoch: correct, but slow, so callers that share one
    instance should visit deep prefixes first (the sweep orders runs by decreasing r).

    *Times only.* :meth:`times` pulls failures without their units (the stream draws a
    chunk's victims only when asked, or before the next chunk: the same numbers in the same
    order either way), so an epoch may hold more times than units. :meth:`get` completes
    the units from the driver while it is still in that epoch; once it has left, a separate
    side stream positioned at the epoch redraws them, leaving the driver — and with it every
    time the cache will hold — exactly as if the units had been drawn all along.
    """

    __slots__ = ("_model", "_n", "_seed", "_driver", "_pulled", "_synced", "_times", "_units", "_done", "_side",
                 "_side_pulled", "rebuilds", "_gives_units", "_from_zero")

    def __init__(self, model, n_groups, seed):
        self._model = model
        self._n = n_groups
        self._seed = seed
        self._driver = model.process(n_groups, seed)
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
        self._from_zero = callable(getattr(self._driver, "restart_from_zero", None))

    def _next_epoch(self, proc):
        """``proc`` (or a rebuilt process) in its next epoch, on a clock set back to 0."""
        if self._from_zero:
            try:
                proc.restart_from_zero()
                return proc
            except NotImplementedError:  # e.g. a domain model over a user's base model
                self._from_zero = False
        fresh = self._model.process(self._n, self._seed)
        for _ in range(proc.epoch + 1):
            fresh.restart(0.0)  # the clock never left 0, so each restart is allowed
        return fresh

    def _counted(self, e0, new):
        """``new``, the process after a restart in epoch ``e0``, whose ``epoch`` must count it
        (a user's process whose epoch stayed put made this loop for ever)."""
        e1 = new.epoch
        if not (type(e1) is int or isinstance(e1, (int, np.integer))) or isinstance(e1, bool) or e1 != e0 + 1:
            raise ValueError(f"{type(self._model).__name__}: the process's epoch must count its restarts "
                             f"(epoch {e0!r} became {e1!r} after a restart)")
        return new

    def _goto(self, k: int) -> None:
        d = self._driver
        if d.epoch > k:
            self.rebuilds += 1
            d = self._driver = self._model.process(self._n, self._seed)
            self._pulled = self._synced = 0
        while d.epoch < k:
            e0 = d.epoch
            d = self._driver = self._counted(e0, self._next_epoch(d))
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

    def times(self, k: int, need: int, want: int = 0, *, start=None) -> np.ndarray:
        """The relative times of :meth:`get`, without drawing units the epoch has not needed."""
        if want < need:
            want = need
        if not self._cached(k, need, want):
            self._pull(k, want, False)
        return self._times[k]

    def get(self, k: int, need: int, want: int = 0, *, start=None) -> tuple[np.ndarray, np.ndarray]:
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
        with_units = with_units or self._gives_units
        if have > self._pulled:  # a rebuilt driver replays the cached prefix
            _, u_re = d.take(have - self._pulled, with_units)
            if u_re is not None:
                u_re = _draw_units(u_re, have - self._pulled, self._n, self._model)
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
        t_new = _draw_times(t_new, want - have, float(t_old[-1]) if have else 0.0, self._model)
        if u_new is not None:
            u_new = _draw_units(u_new, t_new.shape[0], self._n, self._model)
        if u_new is not None and not with_units:  # the process hands its units out anyway
            self._gives_units = with_units = True
            if self._synced < have:
                u_old = self._merge_units(u_old, d.take_units())
        got = len(t_new)
        done = got < want - have or d.n_alive == 0
        self._pulled = have + got
        if got:
            t_arr = t_new  # a new array; the epoch started at 0: these are the offsets
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
        extra = _draw_units(owed[skip:], len(owed) - skip, self._n, self._model)
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
            side = self._side = self._model.process(self._n, self._seed)
            self._side_pulled = 0
        while side.epoch < k:
            e0 = side.epoch
            side = self._side = self._counted(e0, self._next_epoch(side))
            self._side_pulled = 0
        # units do not depend on when the epoch started, so the side stream's times are
        # unused; what it consumed of epoch k before ([0, side_pulled)) is already cached
        cached, pulled = self._units[k], self._side_pulled
        _, units = side.take(have - pulled, True)
        self._side_pulled = have
        extra = _draw_units(units[cached.shape[0] - pulled :], have - cached.shape[0], self._n, self._model)
        self._set_units(k, np.concatenate((cached, extra)) if cached.shape[0] else extra)

    def _set_units(self, k: int, units: np.ndarray) -> None:
        units.flags.writeable = False
        self._units[k] = units

    def next_time(self, k: int, i: int, *, start=None) -> float:
        """Relative time of failure ``i`` of epoch ``k`` (``inf`` if the epoch has fewer)."""
        t = self.times(k, i + 1)
        return float(t[i]) if i < t.shape[0] else math.inf

    @property
    def epochs_materialised(self) -> int:
        return len(self._times)


class RunFailures:
    """Epoch source for models whose epochs depend on when they start (any such model).

    One process follows the restart history of the run that reads it: epoch ``k + 1`` at
    ``start`` restarts it at ``start``. Runs sharing the instance share epoch 0 (identical
    for all of them); a run that starts over rebuilds the process. When a run restarts
    after fewer failures than another run sharing the epoch read, the process is rebuilt
    through this run's history (the starts and consumed counts of its epochs), so each run
    sees what it would see alone.

    How far ahead it reads depends on the process. A process that can ``rewind`` (and
    ``take_arrays``: ``TraceProcess``, whose epoch's failures are fixed until the next
    restart) is pulled in chunks (``want``, at least 64 failures and double what it holds), and before the next epoch it is rewound to what the run
    reported consumed (:meth:`epoch_consumed`, which the simulator calls at each restart;
    without a report, to the failures asked for with ``need``), so the restart sees exactly
    the history of a reader that pulled those failures one at a time. Any other process is
    pulled only for the failures asked for (``want`` is not fetched), so it never runs past
    a restart the run has not made yet: the simulator asks for failure ``i`` only when it
    will consume every failure before it, and it asks :meth:`next_time` only after a batch
    that ends without a restart (that failure is then the next one it meets). The price is
    one pull per failure: the handler sees batches of one.

    Parameters
    ----------
    model : FailureModel
    n_groups : int
    seed : numpy.random.SeedSequence
    """

    __slots__ = ("_model", "_n", "_seed", "_proc", "_key", "_times", "_units", "_done", "_chunked", "_consumed",
                 "_asked", "_path", "_every", "_all")

    def __init__(self, model, n_groups, seed, *, every=False):
        self._model, self._n, self._seed = model, n_groups, seed
        self._every = every  # processes built with every=True (every failure, also of groups out)
        self._all = None
        self._proc = None
        self._key = None
        self._chunked = False
        self._consumed = None
        self._path = []          # (start, failures used) of each epoch the process has left

    def unfiltered(self) -> "RunFailures":
        """The same failures with those of groups already out handed out too (a run with
        repairs drops them itself), for models whose ``process`` takes ``every=True``
        (``hands_out_every_failure``); raises AttributeError otherwise."""
        if self._every:
            return self
        if not getattr(self._model, "hands_out_every_failure", False):
            raise AttributeError(f"failure model {getattr(self._model, 'kind', type(self._model).__name__)!r} "
                                 "cannot hand out the failures of groups out of the job")
        if self._all is None:
            self._all = RunFailures(self._model, self._n, self._seed, every=True)
        return self._all

    def _new_process(self, start):
        if self._every:
            return self._model.process(self._n, self._seed, start=start, every=True)
        return self._model.process(self._n, self._seed, start=start)

    def _at(self, k: int, start: float) -> None:
        if self._key == (k, start):
            return
        if start is None:
            raise TypeError("start must be given: this failure model's epochs depend on when they start")
        if k == 0:
            self._proc = self._new_process(start)
            self._chunked = callable(getattr(self._proc, "rewind", None)) and callable(
                getattr(self._proc, "take_arrays", None))
            self._path = []
        elif self._key is not None and self._key[0] == k - 1:
            # the restart resumes after what the run consumed (else: asked for)
            used = self._asked if self._consumed is None else self._consumed
            if self._chunked:
                if used <= self._times.shape[0]:  # else the epoch ran out: the process scanned it all
                    self._proc.rewind(used)
            elif used < self._times.shape[0]:
                # another run sharing this epoch (same history so far) read it further than
                # this one: its process is past this run's restart; replay this run's history
                self._replay(used)
            self._path.append((self._key[1], used))
            self._proc.restart(start)
        else:
            raise ValueError(
                f"epoch {k} asked at start {start} right after epoch {None if self._key is None else self._key[0]}: "
                "a run reads its epochs in order"
            )
        self._key = (k, start)
        self._consumed = None
        self._asked = 0
        self._times, self._units, self._done = _EMPTY_T, _EMPTY_U, False

    def _replay(self, used: int) -> None:
        """A fresh process taken through the epochs of ``_path`` and ``used`` failures of the
        current one: the history of a run that read only what it consumed."""
        proc = self._new_process(self._path[0][0] if self._path else self._key[1])
        for j, (_, n) in enumerate(self._path):
            if n:
                proc.take(n, True)
            proc.restart(self._path[j + 1][0] if j + 1 < len(self._path) else self._key[1])
        if used:
            proc.take(used, True)
        self._proc = proc

    def epoch_consumed(self, k: int, n: int) -> None:
        """The run restarts after consuming the first ``n`` failures of epoch ``k`` (what it
        was handed beyond them is discarded at the restart)."""
        if self._key is None or self._key[0] != k:
            raise ValueError(f"epoch_consumed: epoch {k} is not the epoch being read ({None if self._key is None else self._key[0]})")
        if type(n) is not int or not 0 <= n <= self._times.shape[0]:
            raise ValueError(f"epoch_consumed: n must be an int in [0, {self._times.shape[0]}] (failures handed out), got {n!r}")
        self._consumed = n

    def _fill(self, need: int, want: int) -> None:
        have = self._times.shape[0]
        if self._done or have >= (max(need, want) if self._chunked else need):
            return
        if self._chunked:  # reading ahead is free (the process rewinds): a chunk, at least double what is held
            ask = max(need, want, 2 * have, _MIN_CHUNK)
            t, u = self._proc.take_arrays(ask - have)
        else:
            ask = need
            t, u = self._proc.take(ask - have, True)
        start = self._key[1]
        tt = _draw_times(t, ask - have, float(self._times[-1]) if have else 0.0, self._model, shift=start)
        if tt.shape[0] < ask - have:
            self._done = True
        if tt.shape[0]:
            uu = _draw_units(u, tt.shape[0], self._n, self._model)
            if have:
                tt = np.concatenate((self._times, tt))
                uu = np.concatenate((self._units, uu))
            tt.flags.writeable = uu.flags.writeable = False
            self._times, self._units = tt, uu

    def rows(self, k: int) -> np.ndarray:
        """The log rows of the failures handed out in epoch ``k`` so far (a replayed log's
        process only: ``TraceProcess.handed_rows``), for the classes of a log's cause values."""
        if self._key is None or self._key[0] != k:
            raise ValueError(f"rows: epoch {k} is not the epoch being read ({None if self._key is None else self._key[0]})")
        handed = getattr(self._proc, "handed_rows", None)
        if handed is None:
            raise TypeError(f"failure model {getattr(self._model, 'kind', type(self._model).__name__)!r} replays no "
                            "log rows")
        return handed()

    def times(self, k: int, need: int, want: int = 0, *, start) -> np.ndarray:
        return self.get(k, need, want, start=start)[0]

    def get(self, k: int, need: int, want: int = 0, *, start) -> tuple[np.ndarray, np.ndarray]:
        self._at(k, start)
        if need > self._asked:
            self._asked = need
        self._fill(need, want)
        return self._times, self._units

    def next_time(self, k: int, i: int, *, start) -> float:
        t = self.get(k, i + 1, start=start)[0]
        return float(t[i]) if i < t.shape[0] else math.inf
