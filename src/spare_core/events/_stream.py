"""FailureStream: the failure process a time-to-train simulation consumes, one failure at a time."""
from __future__ import annotations

import math

import numpy as np

from .._validate import as_float, as_int, check_choice
from ..distributions import Distribution, Weibull, as_distribution
from .._seeding import as_seed_sequence, epoch_stream, stream_rng

__all__ = ["FailureStream", "MODELS"]

MODELS = ("per-unit", "system")

# Failures are materialised in chunks whose size doubles, so a simulation that restarts
# after a handful of failures pays for a handful of draws, while one that runs an epoch to
# the end pays O(n) numpy work in O(log n) calls.
_FIRST_CHUNK = 32
_MAX_CHUNK = 1 << 16
_TINY = np.finfo(np.float64).tiny
_TWO64 = 1 << 64


def _has_inverse_hazard(dist) -> bool:
    """Whether ``dist`` overrides :meth:`Distribution.inverse_cumulative_hazard`."""
    return type(dist).inverse_cumulative_hazard is not Distribution.inverse_cumulative_hazard


class FailureStream:
    """Failures of ``n_units`` units (e.g. data-parallel groups), in time order, with restarts.

    Each unit is alive until it fails; it then stays dead until :meth:`restart` brings all
    units back. The simulation asks for one failure at a time (:meth:`next_failure`), or
    looks ahead with :meth:`peek`.

    Parameters
    ----------
    n_units : int
        Number of units, >= 1.
    lifetime : Distribution or float
        ``model="per-unit"``: the lifetime law of every unit. ``model="system"``: the law of
        the time between consecutive failures of the whole system. A positive number means
        :class:`~spare_core.distributions.Deterministic`.
    model : {"per-unit", "system"}, keyword-only
        ``"per-unit"``: every unit draws its own lifetime at the start of each epoch; the
        next failure is the earliest lifetime among alive units (superposition of ``n``
        processes: with Weibull shape < 1 failures burst right after a (re)start and thin
        out as units die). ``"system"``: one renewal process with inter-failure times from
        ``lifetime``; each failure hits a uniformly random alive unit.
    seed : int or numpy.random.SeedSequence, keyword-only
        Root of all randomness. See Notes for the common-random-numbers layout.
    start : float, optional, keyword-only
        Time at which epoch 0 starts (default 0).

    Attributes
    ----------
    n_units, lifetime, model
        As given.
    epoch : int
        Number of restarts so far.

    Raises
    ------
    ValueError, TypeError
        On a bad ``n_units``, ``model``, ``seed`` or ``start``, or a lifetime that is not a
        distribution or positive number.

    Notes
    -----
    *Epochs and restarts.* The stream is divided into epochs separated by
    :meth:`restart`. At a restart every unit is alive again at the restart time and, in
    both models, the failure process is renewed from that time: per-unit, every unit's
    clock is redrawn (fresh lifetimes starting at the restart time); system, the renewal
    process restarts (its next failure is one fresh inter-failure time after the restart).
    The failures left pending in the previous epoch are discarded.

    *Common random numbers.* Randomness comes from named child streams of the root
    SeedSequence indexed by the epoch number ``k``. Per-unit: stream ``("per-unit-order", k)``
    gives, chunk by chunk, the exponential spacings of the epoch's sorted lifetimes and the
    picks of a uniform permutation saying which unit fails j-th (see *Cost*). System:
    inter-failure times from ``("system-interarrivals", k)`` and the order in which the
    process hits units from ``("system-victims", k)`` (a uniformly random permutation,
    drawn lazily: the i-th failure of the epoch hits its i-th entry, a uniformly random
    alive unit). Two
    simulations with the same seed therefore see the same failures, relative to the epoch's
    start, within their k-th epoch, even when they restart at different times.

    *Cost.* Failures are produced in chunks of doubling size (32, 64, ... up to 65,536)
    and each :meth:`next_failure` is a few list look-ups. Per-unit
    lifetimes with a continuous cumulative hazard ``H`` (Weibull, exponential, log-normal)
    are never drawn for all ``n`` units: by Renyi's representation the j-th smallest of
    ``n`` i.i.d. lifetimes has ``H(T_(j)) = sum_{i<=j} E_i / (n - i + 1)`` (``E_i`` i.i.d.
    Exp(1)), and by exchangeability the unit that fails j-th is uniform over the survivors.
    The permutation of victims (both models) is drawn lazily: uniform draws over all units,
    skipping those already taken, while at most half are taken. So a restart draws nothing
    (it only resets the ``n`` alive flags) and an epoch with ``f`` failures draws O(f) numbers
    whatever ``n`` is — a simulation that restarts after a handful of failures of 10^5 units
    does not pay for 10^5 lifetimes or a 10^5-permutation per epoch. A chunk's victims are
    drawn when one of its units is first asked for, or before the next chunk's draws,
    whichever comes first: every number comes out of the generators in the same order as
    if they were drawn with the times, and an epoch that restarts before its units are
    needed never draws them (the simulator's checkpoint-only runs ask for times only;
    :attr:`alive` and the public methods always see the units applied). Other lifetime laws (a :class:`~spare_core.distributions.
    Distribution` without ``inverse_cumulative_hazard``, e.g. ``Deterministic``) draw all
    ``n`` lifetimes from stream ``("per-unit-lifetimes", k)`` at the restart and select
    sorted chunks with ``numpy.partition`` (O(n) per restart; ties broken by unit index).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (per-group failures, global restart after a wipe-out).
    .. [2] B. Schroeder and G. A. Gibson, IEEE TDSC 7(4), 2010 (Weibull time between
       failures with shape < 1).

    Examples
    --------
    >>> s = FailureStream(4, Weibull(0.78, 100.0), seed=1)
    >>> t, unit = s.next_failure()
    >>> bool(s.alive[unit]), s.n_alive
    (False, 3)
    >>> s.restart(t + 10.0); s.n_alive
    4
    """

    __slots__ = (
        "n_units", "lifetime", "model", "epoch", "_root", "_now", "_start", "_alive", "_alive_view",
        "_n_alive", "_times", "_units", "_pos", "_chunk", "_rest_t", "_rest_u", "_victim_rng",
        "_n_hit", "_ia_rng", "_last", "_failures", "_by_hazard", "_hazard", "_taken", "_streams",
        "_vhit", "_synced", "_owed", "_unapplied", "_clean", "_div0",
    )

    def __init__(self, n_units, lifetime, *, model="per-unit", seed, start=0.0):
        self.n_units = as_int(n_units, "n_units", min_value=1)
        self.lifetime = as_distribution(lifetime, "lifetime")
        self.model = check_choice(model, "model", MODELS)
        self._by_hazard = _has_inverse_hazard(self.lifetime)
        self._root = as_seed_sequence(seed)
        if self.model == "system":
            self._streams = (epoch_stream(self._root, "system-interarrivals"), epoch_stream(self._root, "system-victims"))
        elif self._by_hazard:
            self._streams = (epoch_stream(self._root, "per-unit-order"),)
        start = as_float(start, "start")
        self._alive = np.ones(self.n_units, dtype=bool)
        self._alive_view = self._alive.view()
        self._alive_view.flags.writeable = False
        self._clean = True
        # divisors of the first chunk's spacings, the same every epoch
        self._div0 = np.arange(self.n_units, self.n_units - min(_FIRST_CHUNK, self.n_units), -1, dtype=np.float64)
        self._failures = 0
        self.epoch = 0
        self._begin_epoch(start)

    @classmethod
    def with_system_mtbf(cls, n_units, system_mtbf, shape, *, model="per-unit", seed, start=0.0):
        """A Weibull failure stream whose system-wide failure rate is ``1 / system_mtbf``.

        Parameters
        ----------
        n_units : int
            Number of units, >= 1.
        system_mtbf : float
            Mean time between failures of the whole system, > 0.
        shape : float
            Weibull shape, > 0 (0.78 in the SPARe paper).
        model, seed, start
            As in :class:`FailureStream`.

        Returns
        -------
        FailureStream
            ``model="system"``: inter-failure times ``Weibull.from_mean(system_mtbf, shape)``.
            ``model="per-unit"``: every unit's lifetime is
            ``Weibull.from_mean(n_units * system_mtbf, shape)``, i.e. the per-unit mean is
            ``n_units`` times the system MTBF, so ``n_units`` units renewed on failure
            would fail at the long-run rate ``n_units / mean = 1 / system_mtbf``.

        Notes
        -----
        For shape < 1 the per-unit model front-loads failures: right after a (re)start the
        expected time to the first failure among ``n`` fresh units is
        ``scale * n**(-1/shape) * Gamma(1 + 1/shape) = system_mtbf * n**(1 - 1/shape)``,
        well below ``system_mtbf`` (for n = 1000, shape 0.78: about 0.14x), and the gaps
        then widen as units die. The system model keeps the MTBF between consecutive
        failures whatever the number of failed units. Results report which model they used
        (docs/results.md compares them).
        """
        n_units = as_int(n_units, "n_units", min_value=1)
        system_mtbf = as_float(system_mtbf, "system_mtbf", min_value=0.0, strict_min=True)
        shape = as_float(shape, "weibull shape", min_value=0.0, strict_min=True)
        check_choice(model, "model", MODELS)
        mean = system_mtbf * n_units if model == "per-unit" else system_mtbf
        return cls(n_units, Weibull.from_mean(mean, shape), model=model, seed=seed, start=start)

    # -- state ---------------------------------------------------------------------------
    @property
    def now(self) -> float:
        """Time of the last consumed failure or restart."""
        return self._now

    @property
    def epoch_start(self) -> float:
        """Time at which the current epoch started (the last restart)."""
        return self._start

    @property
    def n_alive(self) -> int:
        """Number of alive units."""
        return self._n_alive

    @property
    def alive(self) -> np.ndarray:
        """Read-only boolean view of the units' state (``True`` = alive); updated in place."""
        if self._owed or self._synced < self._pos:
            self.take_units()
        self._mark_dead()
        return self._alive_view

    def _mark_dead(self) -> None:
        # units handed out by take are marked dead only when someone looks
        if self._unapplied:
            self._alive[self._unapplied] = False
            self._clean = False
            self._unapplied = []

    @property
    def failures(self) -> int:
        """Failures consumed so far, over all epochs."""
        return self._failures

    # -- epochs --------------------------------------------------------------------------
    def _begin_epoch(self, start: float) -> None:
        n = self.n_units
        self._start = self._now = start
        self._n_alive = n
        if not self._clean:  # an epoch that marked no unit dead leaves nothing to reset
            self._alive[:] = True
            self._clean = True
        self._times = []
        self._units = []
        self._pos = 0
        self._synced = 0
        self._owed = []
        self._unapplied = []
        self._chunk = _FIRST_CHUNK
        k = self.epoch
        if self.model == "per-unit" and not self._by_hazard:
            life = self.lifetime.sample(stream_rng(self._root, "per-unit-lifetimes", k), n)
            self._rest_t = start + life
            self._rest_u = np.arange(n, dtype=np.int64)
            return
        self._n_hit = 0
        self._last = 0.0  # system model: offset of the last drawn failure from the epoch start
        self._taken = set()  # units already drawn this epoch
        self._ia_rng = self._streams[0].at(k)
        if self.model == "per-unit":
            self._hazard = 0.0
        else:
            self._victim_rng = self._streams[1].at(k)

    def restart(self, time) -> None:
        """Bring every unit back at ``time`` and start a new epoch (see class Notes).

        Parameters
        ----------
        time : float
            Restart time, >= :attr:`now` (the clock never runs backwards).

        Raises
        ------
        ValueError
            If ``time`` is not finite or earlier than :attr:`now`.
        """
        if type(time) is not float or not time < math.inf:  # the epoch cache's calls skip the coercion
            time = as_float(time, "restart time")
        if time < self._now:
            raise ValueError(f"restart time must be >= now ({self._now}), got {time}")
        self.epoch += 1
        self._begin_epoch(time)

    def restart_from_zero(self) -> None:
        """Start the next epoch as :meth:`restart` does, on a clock set back to 0.

        The epoch's failure times then come out relative to its start by construction
        (nothing is added to them and subtracted again), which is how the epoch cache
        (:class:`spare_core.events.EpochFailures`) drives its shared stream: a cached time
        cannot depend on where the stream happened to restart. A stream restarted at ``t``
        hands out ``t + x`` for the failure this one hands out at ``x``, rounded once.
        """
        self.epoch += 1
        self._begin_epoch(0.0)

    def _refill(self) -> bool:
        """Materialise the next sorted chunk of failures; False when the epoch has no more.

        Victims of a chunk are drawn lazily (:meth:`_chunk_units`), but always before the
        next chunk: in the per-unit model the next spacings come from the same generator,
        and in both models the next victims follow these in their stream, so every number
        is drawn in the same order whether or not anyone asked for the units.
        """
        if self._synced < self._pos:  # consumed for their times only: units still owed
            self._owed.extend(self._chunk_units()[self._synced : self._pos])
            self._synced = self._pos
        elif self._units is None:
            self._chunk_units()
        if self.model == "per-unit" and not self._by_hazard:
            rest_t, rest_u = self._rest_t, self._rest_u
            m = rest_t.shape[0]
            if m == 0:
                return False
            k = self._chunk
            if m <= k:
                take = np.ones(m, dtype=bool)
            else:
                # every unit with time <= the k-th smallest, so ties never straddle chunks
                take = rest_t <= np.partition(rest_t, k - 1)[k - 1]
            t, u = rest_t[take], rest_u[take]
            order = np.lexsort((u, t))
            self._times = t[order].tolist()
            self._units = u[order].tolist()
            keep = ~take
            self._rest_t, self._rest_u = rest_t[keep], rest_u[keep]
        else:
            n, hit = self.n_units, self._n_hit
            k = min(self._chunk, n - hit)
            if k <= 0:
                return False
            rng = self._ia_rng
            saved = rng.bit_generator.state
            try:
                if self.model == "per-unit":
                    self._times = self._order_statistics(rng, n, hit, k)
                else:
                    # accumulated relative to the epoch start and shifted once, so that a
                    # failure's time is always ``start + offset`` (see restart_from_zero)
                    times = np.cumsum(self.lifetime.sample(rng, k))
                    times += self._last
                    self._last = float(times[-1])
                    if self._start:
                        times += self._start
                    self._times = times.tolist()
            except BaseException:
                # a law's exception leaves the stream as it was: a retry draws the same numbers
                rng.bit_generator.state = saved
                raise
            self._units = None  # drawn on demand by _chunk_units
            self._vhit = hit
            self._n_hit = hit + k
        self._pos = self._synced = 0
        self._chunk = min(2 * self._chunk, _MAX_CHUNK)
        return True

    def _order_statistics(self, rng, n: int, hit: int, k: int) -> list:
        """Times of failures ``hit .. hit+k-1`` of a per-unit epoch, drawn without the other
        lifetimes (their units are drawn next from the same generator: :meth:`_chunk_units`).

        Renyi: for i.i.d. lifetimes with cumulative hazard ``H``, the sorted lifetimes
        satisfy ``H(T_(j)) = sum_{i <= j} E_i / (n - i + 1)`` with ``E_i`` i.i.d. Exp(1);
        and which unit fails j-th is independent of the times and uniform over the units
        still alive (exchangeability), i.e. the j-th entry of a uniform permutation.
        """
        spacings = rng.standard_exponential(k)
        if hit == 0:
            spacings /= self._div0  # k == min(_FIRST_CHUNK, n) for the first chunk
        else:
            spacings /= np.arange(n - hit, n - hit - k, -1, dtype=np.float64)
        h = spacings.cumsum()
        if self._hazard:  # adding the first chunk's 0.0 would change no bit
            h += self._hazard
        self._hazard = float(h[-1])
        times = self.lifetime.inverse_cumulative_hazard(h)
        np.maximum(times, _TINY, out=times)  # as Distribution.sample
        times += self._start
        return times.tolist()

    def _chunk_units(self) -> list:
        """The current chunk's victims, drawn now if they have not been yet."""
        units = self._units
        if units is None:
            rng = self._ia_rng if self.model == "per-unit" else self._victim_rng
            k = len(self._times)
            units = self._units = self._draw_victims(rng, self.n_units, self._vhit, k)
        return units

    def _draw_victims(self, rng, n: int, hit: int, k: int) -> list:
        """The next ``k`` entries of the epoch's uniform permutation of the units.

        While at most half the units are taken, uniform draws over all units are accepted
        in draw order unless already taken (a uniform ordered sample without replacement,
        O(k) expected work); beyond that, the rest is drawn from the explicit pool.
        """
        taken = self._taken
        rest = n - hit
        if 2 * k > rest:
            pool = np.ones(n, dtype=bool)
            pool[list(taken)] = False
            units = np.flatnonzero(pool)[rng.permutation(rest)[:k]].tolist()
            taken.update(units)
            return units
        # uniform integers in [0, n) from raw 64-bit words, rejecting the top partial block
        # (exact; Generator.integers costs ~15 us of set-up per call at these sizes)
        raw, limit = rng.bit_generator.random_raw, (_TWO64 // n) * n
        units = []
        append, add = units.append, taken.add
        need = k
        while need:
            for w in raw(need + need // 2 + 4).tolist():
                if w >= limit:
                    continue
                c = w % n
                if c not in taken:
                    add(c)
                    append(c)
                    need -= 1
                    if not need:
                        break
        return units

    # -- consuming -----------------------------------------------------------------------
    def peek(self) -> float:
        """Time of the next failure without consuming it (``inf`` if no unit can fail)."""
        if self._pos >= len(self._times) and not self._refill():
            return math.inf
        return self._times[self._pos]

    def next_failure(self) -> tuple[float, int]:
        """Consume the next failure: ``(time, unit)``; the unit is dead until :meth:`restart`.

        Returns
        -------
        (float, int)
            The failure time and the failed unit, or ``(inf, -1)`` when every unit is dead.
        """
        if self._owed or self._synced < self._pos:
            self.take_units()
        pos = self._pos
        if pos >= len(self._times):
            if not self._refill():
                return (math.inf, -1)
            pos = 0
        t = self._times[pos]
        u = self._units[pos] if self._units is not None else self._chunk_units()[pos]
        self._pos = self._synced = pos + 1
        self._alive[u] = False
        self._clean = False
        self._n_alive -= 1
        self._failures += 1
        self._now = t
        return (t, u)

    def next_failures(self, k) -> tuple[np.ndarray, np.ndarray]:
        """Consume up to ``k`` failures at once (fewer if the units run out).

        Returns
        -------
        (times, units) : (float64 array, int64 array)
            The same failures, in the same order, as ``k`` calls of :meth:`next_failure`.
        """
        k = as_int(k, "k", min_value=0)
        times, units = self.take(k, True)
        self._mark_dead()  # the public view is live: a caller may hold it
        return np.array(times, dtype=np.float64), np.array(units, dtype=np.int64)

    def take(self, k: int, with_units: bool = True) -> tuple[list, list | None]:
        """Consume up to ``k`` failures as lists: ``(times, units)``, or ``(times, None)``
        when the caller needs no units (the :class:`~spare_core.events.FailureProcess`
        contract). Units not taken are owed: drawn (in stream order) and applied to the
        alive flags when anyone asks for them (:meth:`take_units`) or when the next chunk
        needs the generator. Fewer than ``k`` failures means every unit is dead."""
        if type(k) is not int or k < 0:
            k = as_int(k, "k", min_value=0)
        if with_units and (self._owed or self._synced < self._pos):
            self.take_units()
        times = []
        units = [] if with_units else None
        got = 0
        while got < k:
            pos = self._pos
            if pos >= len(self._times):
                if not self._refill():
                    break
                pos = 0
            stop = min(pos + k - got, len(self._times))
            times.extend(self._times[pos:stop])
            if with_units:
                units.extend(self._chunk_units()[pos:stop])
                self._synced = stop
            self._pos = stop
            got += stop - pos
        if got:
            if with_units:
                self._unapplied += units
            self._n_alive -= got
            self._failures += got
            self._now = times[-1]
        return times, units

    def take_units(self) -> list:
        """Units of the failures consumed without them (:meth:`take`), in order; from now
        on they count as handed out (marked dead in :attr:`alive`)."""
        owed = self._owed
        if self._synced < self._pos:
            owed.extend(self._chunk_units()[self._synced : self._pos])
            self._synced = self._pos
        if owed:
            self._unapplied += owed
            self._owed = []
        return owed

    def failures_until(self, time) -> list[tuple[float, int]]:
        """Consume and return every failure with ``t <= time`` (in order)."""
        time = as_float(time, "time", allow_inf=True)
        out = []
        while True:
            t = self.peek()
            if t > time or t == math.inf:
                return out
            out.append(self.next_failure())

    def __repr__(self):
        return (
            f"FailureStream(n_units={self.n_units}, lifetime={self.lifetime!r}, model={self.model!r}, "
            f"epoch={self.epoch}, now={self._now:g}, n_alive={self._n_alive})"
        )

