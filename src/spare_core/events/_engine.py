"""Engine: the general failure event engine (renewals, repairs, system source, trace, timers),
retired.

The simulations read their failures from the epoch sources (:class:`~spare_core.events.EpochFailures`,
:class:`~spare_core.events.RunFailures`, :class:`~spare_core.events.NodeEpochs` over a
:class:`~spare_core.events.NodeFailureLog`), and those are what the benchmarks time; this
engine (the ``_calendar`` kernel) was a second engine beside them that no simulation used.
:class:`Engine`, :func:`simulate_renewals` and :func:`load_trace_csv` warn (DeprecationWarning)
for one release and are then removed: a failure process is a
:class:`~spare_core.events.FailureModel` (``.process(seed)``), a log is
:func:`~spare_core.events.read_trace`.
"""
from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np

from .._native import load
from .._deprecation import warn_retired
from .._results import fields_dict
from .._validate import as_float, as_float_array, as_int, as_int_array, check_choice
from ..distributions import Deterministic, as_distribution
from .._seeding import as_seed_sequence, epoch_stream, stream_rng
from .trace import read_trace

__all__ = ["Engine", "Event", "EngineStats", "RenewalCounts", "simulate_renewals", "load_trace_csv", "KINDS"]

_K = load("_calendar")
#: what a caller of the retired engine is pointed to
_INSTEAD = ("the simulations' failure sources are the epoch sources (FailureModel.process, NodeFailureLog); "
            "see spare_core.events._engine")

#: event kinds, indexed by the kernel's EV_* codes
KINDS = ("failure", "repair", "system-failure", "trace-failure", "timer")
_KIND_BIT = {k: 1 << i for i, k in enumerate(KINDS)}
_ALL = (1 << len(KINDS)) - 1

# kernel status codes and repair modes, as the kernel defines them
_C = _K.CONSTANTS
_ST_STOP, _ST_UNTIL, _ST_EMPTY, _ST_MAX = _C["ST_STOP"], _C["ST_UNTIL"], _C["ST_EMPTY"], _C["ST_MAX"]
_ST_NEED_LIFE, _ST_NEED_REPAIR = _C["ST_NEED_LIFE"], _C["ST_NEED_REPAIR"]
_ST_NEED_SYS, _ST_NEED_VICTIM = _C["ST_NEED_SYS"], _C["ST_NEED_VICTIM"]
_ST_STALL = _C["ST_STALL"]
_REPAIR_NONE, _REPAIR_FIXED, _REPAIR_SAMPLED = _C["REPAIR_NONE"], _C["REPAIR_FIXED"], _C["REPAIR_SAMPLED"]

# slot ids are packed in SLOT_BITS bits of the queue keys (n units, the system source,
# the trace and up to 1024 timers)
_MAX_UNITS = 2 ** _C["SLOT_BITS"] - 2 - 1024
_BIG = 1 << 62


class Event(NamedTuple):
    """One processed event.

    Attributes
    ----------
    time : float
        When it happened.
    kind : str
        One of :data:`KINDS`: ``"failure"`` (per-unit renewal failure), ``"repair"``,
        ``"system-failure"``, ``"trace-failure"``, ``"timer"``.
    unit : int
        The unit that failed or was repaired; for a system or trace failure that hit no
        alive unit, -1 (system: every unit down) or the unit that was already down
        (trace); for a timer, the timer id.
    seq : int
        Scheduling sequence number (ties in time are processed in increasing ``seq``).
    """

    time: float
    kind: str
    unit: int
    seq: int

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict."""
        return fields_dict(self)


class EngineStats(NamedTuple):
    """Counters of an :class:`Engine` (cumulative over epochs).

    ``failures`` counts units killed by any source (``unit_failures`` + the system and
    trace failures that hit an alive unit); ``events`` counts every processed event.
    """

    events: int
    failures: int
    repairs: int
    unit_failures: int
    system_failures: int
    system_missed: int
    trace_failures: int
    trace_missed: int
    trace_skipped: int
    timers: int
    peak_down: int

    def to_dict(self) -> dict:
        """The counters as a JSON-serialisable dict."""
        return fields_dict(self)


class RenewalCounts(NamedTuple):
    """Result of :func:`simulate_renewals`.

    Attributes
    ----------
    failures, repairs : int
        Failures and completed repairs with time < horizon.
    events : int
        ``failures + repairs`` (events processed).
    peak_down : int
        Largest number of units down at once.
    n_units : int
    horizon : float
    """

    failures: int
    repairs: int
    events: int
    peak_down: int
    n_units: int
    horizon: float

    def __repr__(self):
        return (
            f"RenewalCounts(failures={self.failures}, repairs={self.repairs}, events={self.events}, "
            f"peak_down={self.peak_down}, n_units={self.n_units}, horizon={self.horizon:g})"
        )

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict."""
        return fields_dict(self)


def _calendar_rate(n, life, repair) -> float:
    """Long-run rate of calendar events of ``n`` renewing units (fixed repairs use the FIFO)."""
    if life is None:
        return 0.0
    cycle = life.mean + (repair.mean if repair is not None else 0.0)
    per_cycle = 2.0 if repair is not None and not isinstance(repair, Deterministic) else 1.0
    return per_cycle * n / cycle


def _bucket_width(rate: float) -> float:
    """Calendar bucket width: about two calendar events per bucket width."""
    return 2.0 / rate if rate > 0 and math.isfinite(rate) else 1.0


def _n_buckets(n_slots: int) -> int:
    """Calendar buckets: about 2.5 queued entries per bucket (blocks hold 7 inline)."""
    return max(16, int(n_slots / 2.5))


def _check_stall(st, now):
    if st == _ST_STALL:
        raise RuntimeError(
            f"simulated time stopped advancing at t={now!r}: event delays are below the "
            "floating-point resolution of the clock (use a time unit closer to the delays)"
        )


def simulate_renewals(n_units, lifetime, repair, horizon, *, seed, batch=1 << 16) -> RenewalCounts:
    """Simulate ``n_units`` independent alternating renewal processes (fail, repair, fail, ...).
    Retired (module docstring): warns, and is removed in the next release.

    Every unit starts alive at time 0 with a fresh lifetime; when it fails it is down for a
    repair time, then alive again with a freshly drawn lifetime. Events with time
    ``< horizon`` are processed. The whole event loop runs in Cython without the GIL;
    lifetimes and repair times are sampled in numpy batches.

    Parameters
    ----------
    n_units : int
        Number of units, >= 1.
    lifetime : Distribution
        Lifetime law (Weibull, Exponential, LogNormal, Deterministic, or a positive number).
    repair : Distribution or float or None
        Repair-time law; a number or :class:`~spare_core.distributions.Deterministic` uses
        a FIFO instead of the priority queue (fixed delays complete in scheduling order).
        ``None``: failed units stay down.
    horizon : float
        End of the simulated interval, > 0.
    seed : int or numpy.random.SeedSequence, keyword-only
        Lifetimes come from the named stream ``("unit-lifetimes", 0)``, repair times from
        ``("unit-repairs", 0)`` (the layout of :class:`Engine`'s epoch 0).
    batch : int, optional, keyword-only
        Largest number of random times drawn per numpy call (after the first ``n_units``
        lifetimes, refills grow 1024, 2048, ... up to ``batch``). The built-in
        distributions draw sequentially, so the batch layout never changes the results.

    Returns
    -------
    RenewalCounts
        failures, repairs, events processed and the peak number of units down.

    Raises
    ------
    ValueError, TypeError
        On bad arguments (checked before any work).
    RuntimeError
        If simulated time stops advancing (delays below the clock's float resolution).

    Notes
    -----
    Identical, event for event, to ``Engine(n_units, seed=seed)`` with
    ``add_renewals(lifetime, repair)`` run to ``horizon`` (tested). Cost: O(1) amortised
    per event (calendar queue, Brown 1988; FIFO for fixed repairs) plus the sampling.

    References
    ----------
    .. [1] R. Brown, "Calendar queues: a fast O(1) priority queue implementation for the
       simulation event set problem", CACM 31(10), 1988.
    .. [2] SPARe, arXiv:2603.00357 (per-group Weibull failures, shape 0.78).

    Examples
    --------
    >>> from spare_core.distributions import Weibull
    >>> r = simulate_renewals(1000, Weibull(0.78, 100.0), 5.0, 1000.0, seed=0)
    >>> r.events == r.failures + r.repairs and r.failures >= r.repairs
    True
    """
    warn_retired("spare_core.events.simulate_renewals", _INSTEAD)
    n = as_int(n_units, "n_units", min_value=1, max_value=_MAX_UNITS)
    life = as_distribution(lifetime, "lifetime")
    rep = None if repair is None else as_distribution(repair, "repair")
    horizon = as_float(horizon, "horizon", min_value=0.0, strict_min=True)
    root = as_seed_sequence(seed)
    batch = as_int(batch, "batch", min_value=1)
    rl = stream_rng(root, "unit-lifetimes", 0)
    mode, value, rsampler = _REPAIR_NONE, 0.0, None
    if isinstance(rep, Deterministic):
        mode, value = _REPAIR_FIXED, rep.value
    elif rep is not None:
        rr = stream_rng(root, "unit-repairs", 0)
        mode, rsampler = _REPAIR_SAMPLED, (lambda k: rep.sample(rr, k))
    run = _K.run_renewals(
        n, lambda k: life.sample(rl, k), mode, value, rsampler, horizon,
        _bucket_width(_calendar_rate(n, life, rep)), _n_buckets(n), batch,
    )
    return RenewalCounts(run.n_failures, run.n_repairs, run.n_events, run.peak_down, n, horizon)


def load_trace_csv(path) -> tuple[np.ndarray, np.ndarray]:
    """Read a failure trace: a CSV with columns ``time, unit`` (an optional header row).
    Retired (module docstring): use :func:`spare_core.events.read_trace`.

    The one parser is :func:`spare_core.events.trace.read_trace` (seconds and integer unit
    ids by position; a header row only if its cells are names); malformed rows raise its
    error naming the file, line and rule.

    Returns
    -------
    (times, units) : (float64 array, int64 array)
        Sorted, >= 0; :meth:`Engine.add_trace` checks them against the engine.
    """
    warn_retired("spare_core.events.load_trace_csv", "read the log with spare_core.events.read_trace")
    tr = read_trace(path, time_column=0, unit_column=1, time_format="seconds", units="ids")
    return np.array(tr.times), np.array(tr.units)


class Engine:
    """Discrete-event failure engine: per-unit renewals, a system source, trace replay,
    repairs, timers and restarts, with common random numbers. Retired (module docstring):
    warns, and is removed in the next release.

    State lives in one object with a SimPy-like interface: :attr:`now`, :meth:`peek`,
    :meth:`step` and a resumable :meth:`run`. The event loop itself runs in Cython without
    the GIL and comes back to Python only for the events the caller asks to see
    (``stop_on``), so a policy that reacts to failures is not called for repairs or timers
    it does not care about.

    Parameters
    ----------
    n_units : int
        Number of units (e.g. data-parallel groups), >= 1. All start alive.
    seed : int or numpy.random.SeedSequence, keyword-only
        Root of every random stream (see Notes).
    start : float, optional, keyword-only
        Initial clock, >= 0 (default 0).
    max_timers : int, optional, keyword-only
        Capacity for timers and one-shot scheduled events (default 16).
    batch : int, optional, keyword-only
        Random times drawn per numpy call (default 4096).
    bucket_width : float, optional, keyword-only
        Calendar-queue bucket width; by default 2 / (total event rate estimated from the
        sources' means). Affects speed only, never results.

    Notes
    -----
    *Configuration.* Add sources (:meth:`add_renewals`, :meth:`add_system_failures`,
    :meth:`add_trace`) before the first :meth:`peek`, :meth:`step` or :meth:`run`; timers
    (:meth:`add_timer`, :meth:`schedule`) at any time.

    *Event effects* (applied before an event is returned): a failure kills an alive unit
    and schedules its repair (if a repair law was given; otherwise it stays down until a
    restart); a repair revives the unit and, with per-unit renewals, schedules its next
    failure one fresh lifetime later; a system failure hits a uniformly random alive unit
    (``alive_list[floor(U * n_alive)]``, the list kept by swap-removal) and schedules the
    next system failure; a trace failure kills its unit if alive; a periodic timer
    reschedules itself ``period`` later.

    *Ordering.* Events are processed in increasing time; ties by scheduling sequence number
    (deterministic, FIFO among simultaneous events). :meth:`run` ``(until=T)`` processes the
    events with time ``< T`` and leaves :attr:`now` ``= T``; events at exactly ``T`` stay
    pending (SimPy's convention), so consecutive runs partition time without overlap.

    *Restarts.* :meth:`restart` ``(t)`` begins epoch k+1 at ``t >= now``: every unit is
    alive, pending repairs and per-unit failures are dropped, every unit draws a fresh
    lifetime from ``t`` (Weibull shape < 1: failures burst after a restart), the system
    source renews from ``t``; timers due before ``t`` fire at ``t`` in their original
    order (periodic ones keep their period from there); trace entries before ``t`` are
    skipped (counted in ``stats.trace_skipped``).

    *Common random numbers.* Each source draws from its own named stream of the root
    SeedSequence, indexed by the epoch (names and families in
    ``spare_core._seeding.STREAMS``): ``("unit-lifetimes", k)`` (the first ``n_units``
    draws are the units' initial lifetimes in unit order, then one per repair in event
    order), ``("unit-repairs", k)``, and for the system source epoch k of the streams
    ``"system-interarrivals"`` (the very stream of
    :class:`~spare_core.events.SystemRenewals`: the same seed gives the same inter-failure
    times) and ``"system-victim-uniforms"``. Two engines with the same seed and sources see
    the same failures in every epoch, whatever the restart times of their policies.

    References
    ----------
    .. [1] R. Brown, "Calendar queues", CACM 31(10), 1988.
    .. [2] SimPy's Environment (now / peek / step / run(until)), https://simpy.readthedocs.io
    .. [3] SPARe, arXiv:2603.00357.

    Examples
    --------
    >>> from spare_core.distributions import Weibull
    >>> eng = Engine(8, seed=1)
    >>> eng.add_renewals(Weibull(0.78, 100.0), repair=10.0)
    >>> ckpt = eng.add_timer(60.0)
    >>> ev = eng.run(until=1000.0, stop_on=("failure",))
    >>> ev.kind, eng.now == ev.time, eng.n_alive
    ('failure', True, 7)
    """

    def __init__(self, n_units, *, seed, start=0.0, max_timers=16, batch=4096, bucket_width=None):
        warn_retired("spare_core.events.Engine", _INSTEAD)
        self.n_units = as_int(n_units, "n_units", min_value=1, max_value=_MAX_UNITS)
        self._root = as_seed_sequence(seed)
        self._sys_streams = None
        self._start = as_float(start, "start", min_value=0.0)
        self._max_timers = as_int(max_timers, "max_timers", min_value=0, max_value=1024)
        self._batch = as_int(batch, "batch", min_value=1)
        self._width = None if bucket_width is None else as_float(
            bucket_width, "bucket_width", min_value=0.0, strict_min=True
        )
        if self._width is not None and not math.isfinite(1.0 / self._width):
            # the calendar works with 1 / width: an infinite one would lose every event
            raise ValueError(f"bucket_width must be at least {1.0 / sys.float_info.max:.3g} (its inverse must "
                             f"be finite), got {self._width!r}")
        self._life = self._repair = self._system = None
        self._trace = None
        self._timers: list[tuple[float, float] | None] = [None] * self._max_timers  # (first, period)
        self._free = list(range(self._max_timers))
        self._core = None
        self.epoch = 0

    # -- configuration -------------------------------------------------------------------
    def _configurable(self, what):
        if self._core is not None:
            raise RuntimeError(f"{what} must be added before the engine starts (first peek/step/run)")

    def add_renewals(self, lifetime, repair=None) -> None:
        """Per-unit renewal failures: every unit fails after a lifetime drawn from ``lifetime``.

        Parameters
        ----------
        lifetime : Distribution or float
            Lifetime law (redrawn at every repair and restart).
        repair : Distribution or float or None
            Repair-time law of *every* failure (from any source); ``None``: failed units
            stay down until :meth:`restart`. Fixed repairs use a FIFO (no priority queue).
        """
        self._configurable("renewals")
        if self._life is not None:
            raise ValueError("renewals were already added (one per-unit source per engine)")
        self._life = as_distribution(lifetime, "lifetime")
        if repair is not None:
            self.set_repair(repair)

    def set_repair(self, repair) -> None:
        """Repair-time law applied to every failure (see :meth:`add_renewals`)."""
        self._configurable("repair")
        self._repair = as_distribution(repair, "repair")

    def add_system_failures(self, interarrival) -> None:
        """A system-level renewal process whose failures hit a uniformly random alive unit.

        Parameters
        ----------
        interarrival : Distribution or float
            Law of the time between consecutive system failures.
        """
        self._configurable("system failures")
        if self._system is not None:
            raise ValueError("a system failure source was already added")
        self._system = as_distribution(interarrival, "interarrival")

    def add_trace(self, times, units) -> None:
        """Replay recorded failures: unit ``units[i]`` fails at ``times[i]``.

        Parameters
        ----------
        times : array_like of float
            Non-decreasing, finite, >= the engine's start time.
        units : array_like of int
            Same length, each in ``[0, n_units)``. A failure of a unit that is already down
            has no effect (counted in ``stats.trace_missed``).
        """
        self._configurable("a trace")
        if self._trace is not None:
            raise ValueError("a trace was already added")
        t = as_float_array(times, "trace times", min_value=self._start)
        u = as_int_array(units, "trace units", length=t.shape[0], min_value=0, max_value=self.n_units - 1)
        if t.size > 1 and np.any(np.diff(t) < 0):
            i = int(np.argmax(np.diff(t) < 0))
            raise ValueError(f"trace times must be non-decreasing, got {t[i]} before {t[i + 1]}")
        self._trace = (t, u.astype(np.int32))

    def add_trace_csv(self, path) -> None:
        """:meth:`add_trace` from a CSV of ``time, unit`` rows (see :func:`load_trace_csv`)."""
        self.add_trace(*load_trace_csv(path))

    def add_timer(self, period, *, first=None) -> int:
        """A periodic timer (e.g. checkpoints). Returns its id (the ``unit`` of its events).

        Parameters
        ----------
        period : float
            > 0.
        first : float, optional
            Absolute time of the first firing, >= :attr:`now` (default ``now + period``).
        """
        period = as_float(period, "period", min_value=0.0, strict_min=True)
        now = self.now
        first = now + period if first is None else as_float(first, "first", min_value=now)
        return self._set_timer(None, first, period)

    def schedule(self, delay) -> int:
        """A one-shot timer ``delay`` from now (>= 0; negative delays are rejected)."""
        delay = as_float(delay, "delay", min_value=0.0)
        return self._set_timer(None, self.now + delay, 0.0)

    def reset_timer(self, timer, *, first=None) -> None:
        """Re-phase a timer: next firing at ``first`` (default ``now + period``)."""
        j = self._timer_id(timer)
        period = self._timers[j][1]
        if first is None:
            if period == 0.0:
                raise ValueError("first must be given to reset a one-shot timer")
            first = self.now + period
        else:
            first = as_float(first, "first", min_value=self.now)
        self._set_timer(j, first, period)

    def cancel_timer(self, timer) -> None:
        """Cancel a timer; its id may be reused."""
        j = self._timer_id(timer)
        self._timers[j] = None
        self._free.append(j)
        if self._core is not None:
            self._core.cancel_timer(j)

    def _timer_id(self, timer) -> int:
        j = as_int(timer, "timer", min_value=0, max_value=max(self._max_timers - 1, 0))
        if self._max_timers == 0 or self._timers[j] is None:
            raise ValueError(f"timer must be an active timer id, got {j}")
        return j

    def _set_timer(self, j, first, period) -> int:
        if j is None:
            if not self._free and self._core is not None:
                # one-shot timers that already fired give their ids back
                for i, tm in enumerate(self._timers):
                    if tm is not None and tm[1] == 0.0 and not self._core.timer_pending(i):
                        self._timers[i] = None
                        self._free.append(i)
            if not self._free:
                raise ValueError(f"too many pending timers: max_timers={self._max_timers}")
            j = min(self._free)  # smallest free id: deterministic, easy to mirror
            self._free.remove(j)
        self._timers[j] = (first, period)
        if self._core is not None:
            self._core.set_timer(j, first, period)
        return j

    # -- start ---------------------------------------------------------------------------
    def _rate(self) -> float:
        rate = _calendar_rate(self.n_units, self._life, self._repair)
        if self._system is not None:
            rate += 2.0 / self._system.mean
        if self._trace is not None and self._trace[0].size > 1:
            span = float(self._trace[0][-1] - self._trace[0][0])
            rate += self._trace[0].size / span if span > 0 else 0.0
        for tm in self._timers:
            if tm is not None and tm[1] > 0:
                rate += 1.0 / tm[1]
        return rate

    def _new_epoch_streams(self):
        k = self.epoch
        self._rng_life = stream_rng(self._root, "unit-lifetimes", k)
        self._rng_rep = stream_rng(self._root, "unit-repairs", k)
        if self._system is not None:
            # the same stream as the simulator's system renewals: the same inter-failure times
            if self._sys_streams is None:
                self._sys_streams = (epoch_stream(self._root, "system-interarrivals"),
                                     epoch_stream(self._root, "system-victim-uniforms"))
            self._rng_sys = self._sys_streams[0].at(k)
            self._rng_vic = self._sys_streams[1].at(k)
        core = self._core
        if self._life is not None:
            core.set_buffer("life", self._life.sample(self._rng_life, self.n_units))
        if self._repair is not None and not isinstance(self._repair, Deterministic):
            core.set_buffer("repair", self._repair.sample(self._rng_rep, self._batch))
        if self._system is not None:
            core.set_buffer("system", self._system.sample(self._rng_sys, self._batch))
            core.set_buffer("victim", self._rng_vic.random(self._batch))

    def _ensure_started(self):
        if self._core is not None:
            return self._core
        width = self._width if self._width is not None else _bucket_width(self._rate())
        # lazy removal is only needed when something can cancel a queued event
        track = self._max_timers > 0 or self._system is not None or self._trace is not None
        core = _K.EventCore(
            self.n_units, self._max_timers, width, _n_buckets(self.n_units + self._max_timers + 2), self._start, track
        )
        mode, value = _REPAIR_NONE, 0.0
        if isinstance(self._repair, Deterministic):
            mode, value = _REPAIR_FIXED, self._repair.value
        elif self._repair is not None:
            mode = _REPAIR_SAMPLED
        core.configure(self._life is not None, mode, value, self._system is not None)
        self._core = core
        self._new_epoch_streams()
        if self._life is not None:
            core.start_units()
        if self._system is not None:
            core.start_system()
        if self._trace is not None:
            core.set_trace(*self._trace)
        for j, tm in enumerate(self._timers):
            if tm is not None:
                core.set_timer(j, tm[0], tm[1])
        return core

    # -- state ---------------------------------------------------------------------------
    @property
    def now(self) -> float:
        """Current simulated time."""
        return self._core.now if self._core is not None else self._start

    @property
    def n_alive(self) -> int:
        """Number of alive units."""
        return self._core.n_alive if self._core is not None else self.n_units

    @property
    def n_down(self) -> int:
        """Number of units down."""
        return self.n_units - self.n_alive

    @property
    def alive(self) -> np.ndarray:
        """Snapshot (a fresh bool array) of which units are alive."""
        if self._core is None:
            return np.ones(self.n_units, dtype=bool)
        return self._core.alive_array()

    def is_alive(self, unit) -> bool:
        """Whether ``unit`` is alive."""
        u = as_int(unit, "unit", min_value=0, max_value=self.n_units - 1)
        return True if self._core is None else self._core.is_alive(u)

    @property
    def stats(self) -> EngineStats:
        """Cumulative counters (all zero before the engine starts; reading them does not start it)."""
        c = self._core
        if c is None:
            return EngineStats(*([0] * len(EngineStats._fields)))
        return EngineStats(
            events=c.n_events, failures=c.n_failures, repairs=c.n_repairs, unit_failures=c.n_unit_failures,
            system_failures=c.n_system, system_missed=c.n_system_missed, trace_failures=c.n_trace,
            trace_missed=c.n_trace_missed, trace_skipped=c.n_trace_skipped, timers=c.n_timer,
            peak_down=c.peak_down,
        )

    @property
    def perpetual(self) -> bool:
        """Whether events never run out (renewals with repair, a system source or a periodic timer)."""
        return (
            (self._life is not None and self._repair is not None)
            or self._system is not None
            or any(tm is not None and tm[1] > 0 for tm in self._timers)
        )

    # -- driving -------------------------------------------------------------------------
    def _drive(self, until, mask, max_events):
        core = self._ensure_started()
        target = core.n_events + max_events
        while True:
            st = core.run(until, mask, target - core.n_events)
            if st == _ST_NEED_LIFE:
                core.set_buffer("life", self._life.sample(self._rng_life, self._batch))
            elif st == _ST_NEED_REPAIR:
                core.set_buffer("repair", self._repair.sample(self._rng_rep, self._batch))
            elif st == _ST_NEED_SYS:
                core.set_buffer("system", self._system.sample(self._rng_sys, self._batch))
            elif st == _ST_NEED_VICTIM:
                core.set_buffer("victim", self._rng_vic.random(self._batch))
            else:
                _check_stall(st, core.now)
                return st

    def _last_event(self) -> Event:
        c = self._core
        return Event(c.last_t, KINDS[c.last_kind], c.last_unit, c.last_seq)

    def peek(self) -> float:
        """Time of the next event (``inf`` if none), without processing it."""
        return self._ensure_started().peek()[0]

    def step(self) -> Event | None:
        """Process exactly one event and return it (``None`` if no event is pending)."""
        st = self._drive(math.inf, _ALL, 1)
        return self._last_event() if st == _ST_STOP else None

    def run(self, until=None, *, stop_on=(), max_events=None) -> Event | None:
        """Process events in order until ``until``, a ``stop_on`` event, or ``max_events``.

        Parameters
        ----------
        until : float, optional
            Process events with time ``< until`` and set :attr:`now` to ``until``
            (>= :attr:`now`). ``None``: no time limit (then ``max_events`` or a stopping
            event must end the run, or the engine must run out of events).
        stop_on : iterable of str, optional
            Event kinds (:data:`KINDS`, or ``"any-failure"`` for the three failure kinds)
            after which to return to the caller. Others are processed inside the kernel.
        max_events : int, optional
            Process at most this many events.

        Returns
        -------
        Event or None
            The ``stop_on`` event that ended the run (its effects applied, :attr:`now` =
            its time), or ``None`` if the run reached ``until``, ``max_events`` or the end
            of all events.

        Raises
        ------
        ValueError
            ``until < now``, unknown kind, ``max_events < 0``, or an unbounded run of a
            perpetual engine (``until=None``, no ``max_events``, nothing to stop on).
        """
        now = self.now
        if until is None:
            until = math.inf
        else:
            until = as_float(until, "until", allow_inf=True)
            if until < now:
                raise ValueError(f"until must be >= now ({now}), got {until}")
        mask = 0
        if isinstance(stop_on, str):
            stop_on = (stop_on,)
        for kind in stop_on:
            if kind == "any-failure":
                mask |= _KIND_BIT["failure"] | _KIND_BIT["system-failure"] | _KIND_BIT["trace-failure"]
            else:
                mask |= _KIND_BIT[check_choice(kind, "stop_on kind", KINDS + ("any-failure",))]
        if max_events is None:
            if until == math.inf and mask == 0 and self.perpetual:
                raise ValueError(
                    "run(until=None) with nothing in stop_on and no max_events would never end on a "
                    "perpetual engine (renewals with repair, a system source or a periodic timer); give until"
                )
            max_events = _BIG
        else:
            # more than 2**62 events cannot happen in any run: the cap keeps the kernel's
            # int64 event target from overflowing
            max_events = min(as_int(max_events, "max_events", min_value=0), _BIG)
        st = self._drive(until, mask, max_events)
        return self._last_event() if st == _ST_STOP else None

    def restart(self, time) -> None:
        """Global restart at ``time`` (>= :attr:`now`): every unit alive, fresh clocks, epoch + 1.

        See the class Notes for what happens to repairs, timers and the trace.
        """
        core = self._ensure_started()
        time = as_float(time, "restart time")
        if time < core.now:
            raise ValueError(f"restart time must be >= now ({core.now}), got {time}")
        self.epoch += 1
        self._new_epoch_streams()
        core.restart(time)

    def __repr__(self):
        src = []
        if self._life is not None:
            src.append(f"renewals={self._life!r}")
        if self._repair is not None:
            src.append(f"repair={self._repair!r}")
        if self._system is not None:
            src.append(f"system={self._system!r}")
        if self._trace is not None:
            src.append(f"trace={self._trace[0].size} entries")
        return (
            f"Engine(n_units={self.n_units}, now={self.now:g}, n_alive={self.n_alive}, epoch={self.epoch}"
            + "".join(", " + s for s in src) + ")"
        )
