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
"""
from __future__ import annotations

import datetime as _dt
import math
import numbers
from fractions import Fraction

from .._validate import as_float, as_int, check_choice

__all__ = ["FailureRate", "SECONDS", "UNITS"]

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
