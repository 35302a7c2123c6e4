"""Failure rates as published, converted for you: per node-day, per GPU-year, counts over a
period, MTBF of a unit or of a whole cluster.

Published failure figures come in different shapes: Meta's research clusters report
failures per 1,000 node-days, the Llama 3 report counts interruptions over a 54-day job on
16,384 GPUs, simulators want the mean time between failures (MTBF) of the whole job.
:class:`FailureRate` holds one rate and converts between all of them, so nobody multiplies
by 86,400 or by GPUs per node by hand.

The rate is the long-run failure intensity of *one unit* (a GPU or a node), as for a
cluster where every failed unit is replaced: ``n`` such units fail ``n`` times as often,
so the system MTBF of ``n`` units is ``1 / (n * rate)`` whatever the lifetime law (for a
superposition of renewal processes in the long run; right after a restart a Weibull with
shape < 1 fails faster).

Arithmetic is exact: the rate is kept as a :class:`fractions.Fraction` of the number it
was built from, conversions multiply by integers (seconds per day, GPUs per node, units),
and only the final result is rounded to a float, so ``FailureRate.from_node_days(x)
.per_node_day() == x`` for every float ``x``.

References
----------
.. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783 (2024):
   419 unexpected interruptions in 54 days of pre-training on 16,384 H100 GPUs.
.. [2] A. Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
   Clusters", HPCA 2025: 6.50 and 2.34 failures per 1,000 node-days (8-GPU nodes) on two
   clusters; projected mean time to failure 1.8 h at 16,384 GPUs, 0.23 h at 131,072.
.. [3] D. R. Cox and P. A. W. Lewis, *The Statistical Analysis of Series of Events*,
   Methuen 1966, ch. 2-3 (non-stationary Poisson processes; the time change by the
   cumulative intensity that :class:`RateSchedule` implements).

A rate that drifts (a fleet whose failures go 62 -> 2,611 -> 844 a year) is a
:class:`RateSchedule`: relative levels that change at given times, applied to a lifetime
law by a time change of its cumulative hazard; :func:`calendar_periods` cuts a log's
window into the calendar years (quarters, months, ...) its per-period counts are taken in.
"""
from __future__ import annotations

import datetime as _dt
import math
import numbers
from fractions import Fraction

import numpy as np

from .._validate import as_float, as_float_array, as_int, check_choice

__all__ = ["FailureRate", "SECONDS", "UNITS", "RateSchedule", "Periods", "PERIODS", "calendar_periods"]

#: seconds in each time unit a rate or period can be expressed in (a year is the Julian
#: year, 365.25 days; 365-day years change figures by 0.07 %)
SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "year": 31557600}
#: what one unit of the rate is
UNITS = ("gpu", "node")


def _exact(value, name, *, positive=True) -> Fraction:
    """A finite real (> 0) as an exact Fraction (a float's binary value, exactly)."""
    if isinstance(value, Fraction):
        out = value
        if positive and not out > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    else:
        f = as_float(value, name, min_value=0.0, strict_min=positive)
        out = Fraction(value) if isinstance(value, numbers.Integral) else Fraction(f)
    if positive and out <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return out


def _period_seconds(period, per, name) -> Fraction:
    if isinstance(period, _dt.timedelta):
        if per is not None:
            raise ValueError(f"{name} is a timedelta; do not also give per={per!r}")
        us = period // _dt.timedelta(microseconds=1)
        if us <= 0:
            raise ValueError(f"{name} must be > 0, got {period}")
        return Fraction(us, 1_000_000)
    per = "second" if per is None else check_choice(per, "per", tuple(SECONDS))
    return _exact(period, name) * SECONDS[per]


class FailureRate:
    """Failure intensity of one unit (GPU or node), convertible to every published form.

    Build one with a classmethod (:meth:`from_node_days`, :meth:`from_gpu_years`,
    :meth:`from_rate`, :meth:`from_count`, :meth:`from_mtbf`); read it back with
    :meth:`per` and its shortcuts (:meth:`per_node_day`, :meth:`per_gpu_year`), :meth:`unit_mtbf`, :meth:`system_mtbf`,
    :meth:`expected_failures`, or turn it into a lifetime law with :meth:`lifetime`.

    Parameters
    ----------
    rate : float or fractions.Fraction
        Failures per unit per second, > 0 (the classmethods are friendlier).
    unit : {"gpu", "node"}
        What one unit is.
    gpus_per_node : int, optional
        Needed to convert between GPUs and nodes (a node failure downs all its GPUs, so
        the per-GPU rate of a node rate ``r`` is ``r / gpus_per_node``: the GPU count, not
        the failure count, is multiplied).

    Raises
    ------
    ValueError
        Non-positive or non-finite rate, unknown unit, ``gpus_per_node < 1``; a GPU <-> node
        conversion without ``gpus_per_node``.

    Examples
    --------
    Meta's RSC-1 cluster: 6.50 failures per 1,000 node-days on 8-GPU nodes. The mean time
    between failures of a 16,384-GPU job, in hours (the HPCA'25 paper projects 1.8 h):

    >>> rsc1 = FailureRate.from_node_days(6.50, 1000, gpus_per_node=8)
    >>> round(rsc1.system_mtbf(16_384, unit="gpu") / 3600, 2)
    1.8
    >>> round(rsc1.system_mtbf(131_072, unit="gpu") / 3600, 3)
    0.225

    Llama 3 405B: 419 unexpected interruptions in 54 days on 16,384 GPUs, about one every
    3.1 hours, 0.173 per GPU-year:

    >>> llama3 = FailureRate.from_count(419, 54, per="day", units=16_384, unit="gpu")
    >>> round(llama3.system_mtbf(16_384) / 3600, 2), round(llama3.per_gpu_year(), 3)
    (3.09, 0.173)

    Round trips are exact:

    >>> rsc1.per_node_day() == 0.0065, llama3.expected_failures(54, units=16_384, per="day") == 419
    (True, True)
    """

    __slots__ = ("_rate", "unit", "gpus_per_node")

    def __init__(self, rate, unit="gpu", *, gpus_per_node=None):
        r = _exact(rate, "rate")
        check_choice(unit, "unit", UNITS)
        g = None if gpus_per_node is None else as_int(gpus_per_node, "gpus_per_node", min_value=1)
        object.__setattr__(self, "_rate", r)
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "gpus_per_node", g)

    def __setattr__(self, name, value):
        raise AttributeError(f"FailureRate is immutable (cannot set {name!r})")

    def __reduce__(self):
        # pickle and copy.deepcopy rebuild it through the constructor (the default slot
        # restore would call __setattr__: a loaded scenario file could not be pickled)
        return _rebuild_rate, (self._rate, self.unit, self.gpus_per_node)

    # -- constructors --------------------------------------------------------------------
    @classmethod
    def from_rate(cls, failures, *, per, unit, gpus_per_node=None) -> "FailureRate":
        """``failures`` per ``unit`` per ``per`` (e.g. 0.0065 per node per day).

        Parameters
        ----------
        failures : float
            Failures per unit per period, > 0.
        per : {"second", "minute", "hour", "day", "week", "year"}
        unit : {"gpu", "node"}
        gpus_per_node : int, optional
        """
        check_choice(per, "per", tuple(SECONDS))
        return cls(_exact(failures, "failures") / SECONDS[per], unit, gpus_per_node=gpus_per_node)

    @classmethod
    def from_node_days(cls, failures, node_days=1, *, gpus_per_node=None) -> "FailureRate":
        """``failures`` per ``node_days`` node-days (Meta's "6.50 per 1,000 node-days" is
        ``from_node_days(6.50, 1000)``)."""
        return cls.from_rate(_exact(failures, "failures") / _exact(node_days, "node_days"), per="day",
                             unit="node", gpus_per_node=gpus_per_node)

    @classmethod
    def from_gpu_years(cls, failures, gpu_years=1, *, gpus_per_node=None) -> "FailureRate":
        """``failures`` per ``gpu_years`` GPU-years (Julian years)."""
        return cls.from_rate(_exact(failures, "failures") / _exact(gpu_years, "gpu_years"), per="year",
                             unit="gpu", gpus_per_node=gpus_per_node)

    @classmethod
    def from_count(cls, failures, period, *, units, unit="gpu", per=None, gpus_per_node=None) -> "FailureRate":
        """``failures`` observed over ``period`` on ``units`` units (all present throughout).

        Parameters
        ----------
        failures : int or float
            Number of failures (or interruptions), > 0.
        period : float or datetime.timedelta
            Length of the observation, > 0; a number is in ``per`` units (default seconds).
        units : int
            Units observed (e.g. 16,384 GPUs), >= 1.
        unit : {"gpu", "node"}
        per : {"second", "minute", "hour", "day", "week", "year"}, optional
        gpus_per_node : int, optional

        Notes
        -----
        The maximum-likelihood rate of a Poisson count; it says nothing about the lifetime
        law's shape (fit a trace with :mod:`spare_core.events.fit` for that).
        """
        n = as_int(units, "units", min_value=1)
        f = _exact(failures, "failures")
        return cls(f / (_period_seconds(period, per, "period") * n), unit, gpus_per_node=gpus_per_node)

    @classmethod
    def from_mtbf(cls, mtbf, *, units=1, unit="gpu", per=None, gpus_per_node=None) -> "FailureRate":
        """From a mean time between failures: of one unit (``units=1``), or of a system of
        ``units`` units (e.g. a 5-minute system MTBF at 600,000 GPUs).

        Parameters
        ----------
        mtbf : float or datetime.timedelta
            > 0; a number is in ``per`` units (default seconds).
        units : int
            How many units share that MTBF (default 1).
        unit, per, gpus_per_node
            As in :meth:`from_count`.
        """
        n = as_int(units, "units", min_value=1)
        return cls(1 / (_period_seconds(mtbf, per, "mtbf") * n), unit, gpus_per_node=gpus_per_node)

    # -- conversions ---------------------------------------------------------------------
    def _per(self, unit) -> Fraction:
        """Exact failures per ``unit`` per second."""
        check_choice(unit, "unit", UNITS)
        if unit == self.unit:
            return self._rate
        if self.gpus_per_node is None:
            raise ValueError(f"converting a per-{self.unit} rate to per-{unit} needs gpus_per_node")
        # a node failure counts once per node, so per GPU it is shared by gpus_per_node GPUs
        return self._rate * self.gpus_per_node if unit == "node" else self._rate / self.gpus_per_node

    def rate(self, unit=None) -> float:
        """Failures per unit per second (``unit`` defaults to the rate's own)."""
        return float(self._per(self.unit if unit is None else unit))

    def per(self, per, *, unit=None) -> float:
        """Failures per ``unit`` (default the rate's own) per ``per`` (inverse of :meth:`from_rate`)."""
        check_choice(per, "per", tuple(SECONDS))
        return float(self._per(self.unit if unit is None else unit) * SECONDS[per])

    def per_node_day(self) -> float:
        """Failures per node per day (inverse of :meth:`from_node_days` with 1 node-day)."""
        return self.per("day", unit="node")

    def per_gpu_year(self) -> float:
        """Failures per GPU per (Julian) year (inverse of :meth:`from_gpu_years`)."""
        return self.per("year", unit="gpu")

    def unit_mtbf(self, unit=None, *, per="second") -> float:
        """Mean time between failures of one ``unit`` (default the rate's own), in ``per``."""
        check_choice(per, "per", tuple(SECONDS))
        return float(1 / (self._per(self.unit if unit is None else unit) * SECONDS[per]))

    def system_mtbf(self, units, *, unit=None, per="second") -> float:
        """Mean time between failures of a cluster of ``units`` units, in ``per``.

        Parameters
        ----------
        units : int
            Cluster size in ``unit`` (GPUs or nodes), >= 1.
        unit : {"gpu", "node"}, optional
            Default: the rate's own unit.
        per : str
            Time unit of the result (default seconds).
        """
        n = as_int(units, "units", min_value=1)
        check_choice(per, "per", tuple(SECONDS))
        return float(1 / (self._per(self.unit if unit is None else unit) * n * SECONDS[per]))

    def expected_failures(self, period, *, units, unit=None, per=None) -> float:
        """Expected failures of ``units`` units over ``period`` (a number in ``per``, default
        seconds, or a timedelta)."""
        n = as_int(units, "units", min_value=1)
        return float(self._per(self.unit if unit is None else unit) * n * _period_seconds(period, per, "period"))

    def lifetime(self, *, unit=None, shape=None):
        """The lifetime law of one unit with this rate's mean: Exponential, or Weibull with
        the given ``shape`` (mean kept, ``scale = mtbf / Gamma(1 + 1/shape)``)."""
        from ..distributions import Exponential, Weibull

        m = self.unit_mtbf(unit)
        return Exponential(m) if shape is None else Weibull.from_mean(m, shape)

    def system_interarrival(self, units, *, unit=None, shape=None):
        """The time between failures of ``units`` units as one renewal process: Exponential
        (exact for exponential units), or Weibull with ``shape`` and the system MTBF."""
        from ..distributions import Exponential, Weibull

        m = self.system_mtbf(units, unit=unit)
        return Exponential(m) if shape is None else Weibull.from_mean(m, shape)

    # -- value semantics -----------------------------------------------------------------
    def to_dict(self) -> dict:
        """``{"rate": "p/q", "unit": ..., "gpus_per_node": ...}``: the rate in failures per
        unit-second as an exact fraction string, so :meth:`from_dict` round-trips exactly."""
        return {"rate": str(self._rate), "unit": self.unit, "gpus_per_node": self.gpus_per_node}

    @classmethod
    def from_dict(cls, d) -> "FailureRate":
        """Inverse of :meth:`to_dict` (unknown keys are an error)."""
        if not isinstance(d, dict):
            raise TypeError(f"failure rate must be a dict, got {type(d).__name__}")
        extra = set(d) - {"rate", "unit", "gpus_per_node"}
        if extra:
            raise ValueError(f"failure rate has unknown key(s) {sorted(extra)}")
        if "rate" not in d:
            raise ValueError("failure rate needs key 'rate' (failures per unit-second)")
        rate = d["rate"]
        if isinstance(rate, str):
            try:
                rate = Fraction(rate)
            except (ValueError, ZeroDivisionError):
                raise ValueError(f"failure rate 'rate' must be a number or a fraction 'p/q', got {rate!r}") from None
        return cls(rate, d.get("unit", "gpu"), gpus_per_node=d.get("gpus_per_node"))

    def __eq__(self, other):
        if not isinstance(other, FailureRate):
            return NotImplemented
        return (self._rate, self.unit, self.gpus_per_node) == (other._rate, other.unit, other.gpus_per_node)

    def __hash__(self):
        return hash((self._rate, self.unit, self.gpus_per_node))

    def __repr__(self):
        day = float(self._rate * SECONDS["day"])
        g = "" if self.gpus_per_node is None else f", gpus_per_node={self.gpus_per_node}"
        mtbf_h = float(1 / (self._rate * SECONDS["hour"]))
        return (f"FailureRate({day:.6g} per {self.unit}-day, {self.unit} MTBF {mtbf_h:.6g} h{g})")


def _rebuild_rate(rate, unit, gpus_per_node) -> FailureRate:
    return FailureRate(rate, unit, gpus_per_node=gpus_per_node)


# -- rates that change over time ------------------------------------------------------------------
#: period names :func:`calendar_periods` knows ("auto": the longest giving at least two periods)
PERIODS = ("auto", "year", "quarter", "month", "week", "day")
# nominal lengths, for a log without absolute times (and to pick "auto")
_PERIOD_SECONDS = {"year": 31557600.0, "quarter": 31557600.0 / 4, "month": 31557600.0 / 12, "week": 604800.0,
                   "day": 86400.0}
#: the shortest a period of each kind is on the calendar (365 days, a quarter Jan-Mar of 90,
#: February's 28): ``"auto"`` takes a kind once the window holds two of these, so that a log of
#: two years (730 days, as two calendar years without a 29 February are) gets years (docs/cli.md)
_AUTO_MIN_SECONDS = {"year": 365 * 86400.0, "quarter": 90 * 86400.0, "month": 28 * 86400.0, "week": 604800.0,
                     "day": 86400.0}


class Periods:
    """Consecutive periods of a log's window: ``edges`` (seconds from the log's time 0,
    ``edges[0] = 0``, ``edges[-1]`` the window's end) and one label per period.

    Attributes
    ----------
    edges : numpy.ndarray
        ``P + 1`` increasing times (read-only).
    labels : tuple of str
        ``P`` labels ("2016", "2016Q3", "2016-07", or "days 0-365" without absolute times).
    """

    __slots__ = ("edges", "labels")

    def __init__(self, edges, labels):
        e = as_float_array(edges, "edges", min_value=0.0)
        if e.shape[0] < 2 or np.any(np.diff(e) <= 0) or e[0] != 0.0:
            raise ValueError(f"period edges must start at 0 and increase, got {e.tolist()}")
        labels = tuple(labels)
        if len(labels) != e.shape[0] - 1 or not all(isinstance(x, str) for x in labels):
            raise ValueError(f"periods need one label (str) per period: {e.shape[0] - 1}, got {len(labels)}")
        e.setflags(write=False)
        object.__setattr__(self, "edges", e)
        object.__setattr__(self, "labels", labels)

    def __setattr__(self, name, value):
        raise AttributeError(f"Periods is immutable (cannot set {name!r})")

    def __reduce__(self):
        return Periods, (self.edges, self.labels)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def lengths(self) -> np.ndarray:
        """Length of each period, seconds."""
        return np.diff(self.edges)

    def counts(self, times) -> np.ndarray:
        """How many of ``times`` (in ``[0, end]``; a time at ``end`` counts in the last period)
        fall in each period."""
        t = np.asarray(times, dtype=np.float64)
        idx = np.searchsorted(self.edges, t, side="right") - 1
        return np.bincount(np.clip(idx, 0, len(self.labels) - 1), minlength=len(self.labels)).astype(np.int64)

    def __eq__(self, other):
        if not isinstance(other, Periods):
            return NotImplemented
        return np.array_equal(self.edges, other.edges) and self.labels == other.labels

    __hash__ = None

    def __repr__(self):
        return f"Periods({len(self)}: {self.labels[0]} .. {self.labels[-1]})"


def _calendar_edges(kind, start, end):
    """Calendar boundaries strictly inside ``(0, end)`` and the labels of the periods."""
    tz = start.tzinfo
    utc = _dt.timezone.utc
    s_utc = start.astimezone(utc)

    def first_of(d):  # the period containing the local datetime d: its first instant and label
        if kind == "year":
            return _dt.datetime(d.year, 1, 1, tzinfo=tz), f"{d.year}"
        if kind == "quarter":
            q = (d.month - 1) // 3
            return _dt.datetime(d.year, 3 * q + 1, 1, tzinfo=tz), f"{d.year}Q{q + 1}"
        if kind == "month":
            return _dt.datetime(d.year, d.month, 1, tzinfo=tz), f"{d.year}-{d.month:02d}"
        day = _dt.datetime(d.year, d.month, d.day, tzinfo=tz)
        if kind == "day":
            return day, day.strftime("%Y-%m-%d")
        monday = day - _dt.timedelta(days=d.weekday())
        iso = monday.isocalendar()
        return _dt.datetime(monday.year, monday.month, monday.day, tzinfo=tz), f"{iso[0]}-W{iso[1]:02d}"

    def following(b):
        if kind == "year":
            return _dt.datetime(b.year + 1, 1, 1, tzinfo=tz)
        if kind in ("quarter", "month"):
            m = b.month - 1 + (3 if kind == "quarter" else 1)
            return _dt.datetime(b.year + m // 12, m % 12 + 1, 1, tzinfo=tz)
        step = _dt.timedelta(days=1 if kind == "day" else 7)
        nb = b + step  # wall-clock arithmetic in the zone: local midnight to local midnight
        return _dt.datetime(nb.year, nb.month, nb.day, tzinfo=tz)

    b, label = first_of(start.astimezone(tz) if tz is not None else start)
    edges, labels = [], [label]
    while True:
        b = following(b)
        x = (b.astimezone(utc) - s_utc).total_seconds()
        if x >= end:
            break
        edges.append(x)
        labels.append(first_of(b)[1])
    return edges, labels


def calendar_periods(end, spec="auto", *, start=None) -> Periods:
    """The window ``[0, end]`` of a log cut into periods.

    Parameters
    ----------
    end : float
        Length of the window, seconds (> 0).
    spec : str or float
        ``"year"``, ``"quarter"``, ``"month"``, ``"week"`` or ``"day"``: calendar periods when
        ``start`` is given (boundaries at local midnight of the first day of each period in
        ``start``'s time zone; the first and last periods are the parts inside the window),
        otherwise periods of the nominal length (a year of 365.25 days, a quarter and a month
        its fourth and twelfth) from time 0. ``"auto"`` (default): the longest of those of
        which the window holds two at their shortest on the calendar (365 days, 90 days for a
        quarter, 28 for a month: a log of 730 days or more gets years, of 180 days quarters,
        of 56 days months, of 14 days weeks; a window shorter than two days is one period). A number: periods of that many seconds from time 0.
    start : datetime.datetime, optional
        The absolute instant of time 0 (timezone-aware): :attr:`Trace.start`.

    Returns
    -------
    Periods
        The last period ends at ``end`` (it may be shorter than the others).

    Examples
    --------
    >>> import datetime as dt
    >>> p = calendar_periods(3 * 365 * 86400.0, "year",
    ...                      start=dt.datetime(2014, 7, 1, tzinfo=dt.timezone.utc))
    >>> p.labels, (p.edges[1:3] / 86400).tolist()
    (('2014', '2015', '2016', '2017'), [184.0, 549.0])
    >>> calendar_periods(20 * 86400.0).labels[:2]   # "auto": weeks
    ('days 0-7', 'days 7-14')
    """
    end = as_float(end, "end", min_value=0.0, strict_min=True)
    if start is not None and not (isinstance(start, _dt.datetime) and start.utcoffset() is not None):
        raise TypeError(f"start must be a timezone-aware datetime or None, got {start!r}")
    if isinstance(spec, str):
        check_choice(spec, "periods", PERIODS)
        if spec == "auto":
            spec = next((k for k, v in _AUTO_MIN_SECONDS.items() if end >= 2 * v), None)
            if spec is None:
                return Periods([0.0, end], ["the whole window"])
        if start is not None:
            inner, labels = _calendar_edges(spec, start, end)
            return Periods([0.0, *inner, end], labels)
        step = _PERIOD_SECONDS[spec]
    else:
        step = as_float(spec, "periods", min_value=0.0, strict_min=True)
    n = max(1, math.ceil(end / step))
    if n > 100_000:
        raise ValueError(f"periods of {step:g} s cut a window of {end:g} s into {n:,} periods; at most 100,000")
    inner = [k * step for k in range(1, n) if k * step < end]
    edges = [0.0, *inner, end]
    unit, scale = ("d", 86400.0) if step >= 86400.0 else ("s", 1.0)
    labels = [f"{'days' if unit == 'd' else 's'} {a / scale:.4g}-{b / scale:.4g}" for a, b in zip(edges, edges[1:])]
    return Periods(edges, labels)


class RateSchedule:
    """A failure intensity that changes over time: relative levels, constant between given times.

    The level multiplies the hazard of whatever lifetime law it is applied to. Time is
    changed by the cumulative level ``L(t) = integral_0^t level(s) ds``: a process with
    hazard ``level(t) * h(.)`` in wall time is the same process with hazard ``h(.)`` in the
    *operational* time ``L(t)`` ([3]_). So a node's lifetimes are drawn from the law as
    usual, added in operational time, and mapped back with :meth:`inverse` — exact for any
    law, and for an exponential law the non-homogeneous Poisson process of intensity
    ``level(t) / mean``.

    Parameters
    ----------
    times : array_like of float
        Times at which the level changes, seconds from time 0, finite, > 0, increasing
        (may be empty: a constant level).
    levels : array_like of float
        ``len(times) + 1`` levels, finite, >= 0: ``levels[0]`` on ``[0, times[0])``,
        ``levels[j]`` on ``[times[j-1], times[j])``, the last one from ``times[-1]`` on.

    Examples
    --------
    >>> s = RateSchedule([10.0], [1.0, 3.0])
    >>> s.cumulative([5.0, 10.0, 12.0]).tolist(), s.inverse([16.0]).tolist()
    ([5.0, 10.0, 16.0], [12.0])
    """

    __slots__ = ("times", "levels", "_h")

    def __init__(self, times, levels):
        t = as_float_array(times, "rate times", min_value=0.0, strict_min=True)
        lv = as_float_array(levels, "rate levels", min_value=0.0)
        if t.shape[0] and np.any(np.diff(t) <= 0):
            raise ValueError(f"rate times must increase, got {t.tolist()}")
        if lv.shape[0] != t.shape[0] + 1:
            raise ValueError(f"rate levels must be one more than rate times ({t.shape[0] + 1}), got {lv.shape[0]}")
        # cumulative level at each change time
        h = np.cumsum(lv[:-1] * np.diff(np.concatenate(([0.0], t)))) if t.shape[0] else np.zeros(0)
        if not np.all(np.isfinite(h)):
            raise ValueError("rate levels x times overflow float64")
        for a in (t, lv, h):
            a.setflags(write=False)
        object.__setattr__(self, "times", t)
        object.__setattr__(self, "levels", lv)
        object.__setattr__(self, "_h", h)

    def __setattr__(self, name, value):
        raise AttributeError(f"RateSchedule is immutable (cannot set {name!r})")

    def __reduce__(self):
        return RateSchedule, (self.times, self.levels)

    @classmethod
    def from_periods(cls, edges, rates, *, at=0.0) -> "RateSchedule":
        """Per-period rates (``rates[p]`` on ``[edges[p], edges[p+1])``, the last continuing
        after ``edges[-1]``) seen from ``at`` (seconds from the edges' origin): time 0 of the
        schedule is ``at``. Levels are the rates themselves (normalise with :meth:`scaled`)."""
        e = as_float_array(edges, "edges")
        r = as_float_array(rates, "rates", min_value=0.0)
        if r.shape[0] != e.shape[0] - 1 or r.shape[0] < 1:
            raise ValueError(f"rates must be one per period ({e.shape[0] - 1}), got {r.shape[0]}")
        at = as_float(at, "at")
        inner = e[1:-1]
        j = int(np.searchsorted(inner, at, side="right"))  # period holding ``at``
        keep = inner[j:] - at
        return cls(keep, np.concatenate(([r[j]], r[j + 1:])))

    def scaled(self, factor) -> "RateSchedule":
        """The schedule with every level multiplied by ``factor`` (> 0)."""
        f = as_float(factor, "factor", min_value=0.0, strict_min=True)
        return RateSchedule(self.times, self.levels * f)

    def level_at(self, t) -> np.ndarray:
        """The level in force at time(s) ``t``."""
        return self.levels[np.searchsorted(self.times, np.asarray(t, dtype=np.float64), side="right")]

    def cumulative(self, t) -> np.ndarray:
        """``L(t)``, the integral of the level from 0 to ``t`` (>= 0), vectorised."""
        t = np.asarray(t, dtype=np.float64)
        if not self.times.shape[0]:
            return t * self.levels[0]
        j = np.searchsorted(self.times, t, side="right")
        base_t = np.where(j > 0, self.times[np.maximum(j - 1, 0)], 0.0)
        base_h = np.where(j > 0, self._h[np.maximum(j - 1, 0)], 0.0)
        return base_h + self.levels[j] * (t - base_t)

    def inverse(self, h) -> np.ndarray:
        """The first time ``t`` with ``L(t) >= h`` (``inf`` where the level drops to 0 for
        good before reaching ``h``), vectorised; ``h <= 0`` maps to 0."""
        h = np.asarray(h, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            if not self.times.shape[0]:
                out = h / self.levels[0]
            else:
                # the segment j with L(times[j-1]) < h <= L(times[j]): its level is > 0
                j = np.searchsorted(self._h, h, side="left")
                base_t = np.where(j > 0, self.times[np.maximum(j - 1, 0)], 0.0)
                base_h = np.where(j > 0, self._h[np.maximum(j - 1, 0)], 0.0)
                out = base_t + (h - base_h) / self.levels[j]
        out = np.where(h <= 0, 0.0, out)
        return np.where(np.isnan(out), math.inf, out)

    def __eq__(self, other):
        if not isinstance(other, RateSchedule):
            return NotImplemented
        return np.array_equal(self.times, other.times) and np.array_equal(self.levels, other.levels)

    def __hash__(self):
        return hash((self.times.tobytes(), self.levels.tobytes()))

    def __repr__(self):
        return f"RateSchedule({self.times.shape[0] + 1} levels, {self.levels.min():.3g}-{self.levels.max():.3g})"
