"""Recorded failure logs: the :class:`Trace` value and :func:`read_trace` (CSV or Parquet).

A failure log, as a cluster's monitoring exports it, is one row per failure: a timestamp
(seconds from the job's start, Unix epoch seconds, or an ISO 8601 datetime), the host or
unit that failed, and often a reason ("GPU", "HBM3", "network switch", ...). This module
turns such a file into a :class:`Trace`: sorted float64 times in seconds from the trace's
origin, int64 unit ids, and what is needed to map them back (host names, reasons, the
absolute start).

Every malformed input raises one :class:`TraceFormatError` (a :class:`ValueError`) naming
the file, the line (CSV; for Parquet the data row) and the rule broken, before any
simulation runs.

References
----------
.. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783 (2024),
   section 3.3.4: 419 unexpected interruptions in 54 days on 16,384 GPUs, by cause.
.. [2] A. Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
   Clusters", HPCA 2025 (failure logs of Meta's research clusters).
"""
from __future__ import annotations

import contextlib
import contextvars
import csv
import dataclasses
import datetime as _dt
import io
import json
import math
import os
import re

import numpy as np

from .._files import MAX_LOG_BYTES, MAX_LOG_ROWS, InputFileError, read_input
from .._results import fields_dict
from .._validate import as_int, check_choice

__all__ = ["Trace", "TraceFormatError", "DomainSummary", "read_trace", "TIME_FORMATS", "UNIT_KINDS", "TIME_UNITS",
           "FOLDS", "DSTS", "NUMBERINGS", "STRFTIME_DIRECTIVES"]

#: accepted values of ``read_trace(time_format=...)``
TIME_FORMATS = ("auto", "seconds", "epoch", "iso")
#: accepted values of ``read_trace(units=...)``
UNIT_KINDS = ("auto", "ids", "names")
#: accepted values of ``read_trace(fold=...)`` (a local time of the repeated hour) and ``dst=``
#: (a local time of the skipped hour)
FOLDS = ("earlier", "later", "infer")
DSTS = ("before", "after")
#: how a trace's unit ids were given (:attr:`Trace.numbering`)
NUMBERINGS = ("ids", "unit_map", "appearance", "host_pattern")
#: values of an event or reason column that are capacity events, not failures (compared
#: case-insensitively, blanks stripped): a node added to or removed from the pool, joining or
#: leaving the job, coming up or going down. Without ``where``, :func:`read_trace` refuses a log
#: holding any of them (:data:`EVENT_COLUMNS` and ``reason_column``), naming them and their counts.
CAPACITY_EVENTS = ("add", "added", "remove", "removed", "join", "joined", "leave", "left", "up", "down")
#: header names (case-insensitive) of the columns :func:`read_trace` looks in for capacity
#: events when no ``where`` says which rows are failures, besides ``reason_column``
EVENT_COLUMNS = ("event", "event_type", "reason", "type", "kind", "action")
#: seconds per unit of a numeric time column (``read_trace(time_unit=...)``)
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_US = _dt.timedelta(microseconds=1)
# an integer id as a float export writes it (pandas: an integer column with a missing value)
_ID_RE = re.compile(r"\s*[+-]?\d+(\.0*)?\s*\Z")
_INT64_MAX = np.iinfo(np.int64).max


class TraceFormatError(ValueError):
    """A failure log that cannot be read: ``path``, ``line`` (or data row) and ``rule``.

    ``line`` is None for errors about the whole file (empty file, missing column).
    """

    def __init__(self, path, line, rule, *, where="line"):
        self.path, self.line, self.rule = path, line, rule
        loc = f"trace {path!r}" + ("" if line is None else f", {where} {line}")
        super().__init__(f"{loc}: {rule}")


class Trace:
    """A recorded failure log: which unit failed when.

    Immutable: the arrays are read-only private copies, attributes cannot be reassigned.

    Parameters
    ----------
    times : array_like of float
        Failure times in seconds from the trace's origin: finite, >= 0, non-decreasing
        (simultaneous failures, e.g. every node behind a switch, share a time).
    units : array_like of int
        The unit (node/host) id of each failure, >= 0, same length as ``times``.
    n_units : int, optional
        Units in the cluster, including those that never failed (they matter for rates and
        for fitting with censoring). Default: ``max(units) + 1`` (1 for an empty trace).
    end : float, optional
        End of the observation window in seconds, >= the last time. Default: the last
        failure time. A trace says nothing about what happens after ``end``.
    unit_names : sequence of str, optional
        Name (host) of each unit id, length ``n_units``.
    reasons : sequence of str, optional
        Reason of each failure, same length as ``times``.
    start : datetime.datetime, optional
        The absolute instant of time 0 (timezone-aware), when the log had absolute times.
    source : str, optional
        Where the trace was read from.
    dropped_before, dropped_after : int, optional
        Rows of the file outside the window ``[start, end]`` that :func:`read_trace` left
        out (default 0): a longer log cut to the job's window says what it cut.
    filtered : str, optional
        What :func:`read_trace`'s ``where`` kept and dropped, in words (None: no filter).
    numbering : {"ids", "unit_map", "appearance", "host_pattern"}, optional
        How the unit ids were given: ids of the log itself (default), a host -> id map,
        host names numbered in order of first appearance (the ids then say nothing about
        where a host sits in the job: see :meth:`TraceReplay.concentration
        <spare_core.events.trace_model.TraceReplay.concentration>`), or positions decoded
        from the host names (``host_pattern``).
    levels : sequence of (str, sequence of str), optional
        The physical hierarchy of the units, coarsest first (e.g. cabinet, cage, slot,
        node): each level's name and the labels of its values. Unit ids are then positions
        in mixed radix: the unit of digits ``(d_0, ..., d_L-1)`` is
        ``sum(d_k * prod(radix_j for j > k))`` with ``radix_k = len(labels_k)``, so the
        domain of a unit at level ``k`` is ``unit // prod(radix_j for j > k)``. The product of
        the radices must equal ``n_units``.

    changes : (array_like of float, array_like of int[, array_like of int]), optional
        A log of capacity events (:func:`read_trace`'s ``event_column``): the time of every
        row kept, removals and additions alike (non-decreasing, within ``[0, end]``), and its
        change of capacity, -1 for a removal (whose rows are ``times``/``units``, in the same
        order) and +1 for an addition; optionally third, the unit (instance) of every row, the
        removals' equal to ``units`` (what tells which instance an addition brings:
        :mod:`spare_core.events.instances`). None (default): a log of failures only.

    Attributes
    ----------
    times, units, n_units, end, unit_names, reasons, start, source, dropped_before, dropped_after, numbering, levels, changes
        As above (``unit_names`` and ``reasons`` as tuples or None, ``levels`` as a tuple
        of ``(name, labels)`` tuples or None).

    Examples
    --------
    >>> tr = Trace([10.0, 10.0, 250.0], [3, 1, 3], n_units=8, end=3600.0)
    >>> tr
    Trace(3 events, 8 units, 2 failed, end=3600 s)
    >>> tr.failures_per_unit().tolist()
    [0, 1, 0, 2, 0, 0, 0, 0]
    """

    __slots__ = ("times", "units", "n_units", "end", "unit_names", "reasons", "start", "source",
                 "dropped_before", "dropped_after", "numbering", "levels", "filtered", "changes")

    def __init__(self, times, units, *, n_units=None, end=None, unit_names=None, reasons=None,
                 start=None, source=None, dropped_before=0, dropped_after=0, numbering="ids", levels=None,
                 filtered=None, changes=None):
        t = np.array(times, dtype=np.float64, copy=True).reshape(-1) if np.ndim(times) else None
        if t is None:
            raise ValueError(f"times must be 1-dimensional, got {times!r}")
        if t.size and not np.all(np.isfinite(t)):
            i = int(np.argmin(np.isfinite(t)))
            raise ValueError(f"times must be finite, got {t[i]} at index {i}")
        if t.size and t.min() < 0:
            i = int(np.argmin(t))
            raise ValueError(f"times must be >= 0 (seconds from the trace's origin), got {t[i]} at index {i}")
        if t.size > 1 and np.any(np.diff(t) < 0):
            i = int(np.argmax(np.diff(t) < 0))
            raise ValueError(f"times must be non-decreasing, got {t[i]} at index {i} before {t[i + 1]}")
        u_in = np.asarray(units)
        if u_in.size == 0:
            u_in = u_in.astype(np.int64)
        if u_in.dtype == np.bool_ or not np.issubdtype(u_in.dtype, np.integer):
            raise TypeError(f"units must hold integers, got dtype {u_in.dtype}")
        if u_in.ndim != 1 or u_in.shape[0] != t.shape[0]:
            raise ValueError(f"units must be 1-dimensional with one id per time ({t.shape[0]}), got shape {u_in.shape}")
        if u_in.size and u_in.min() < 0:
            raise ValueError(f"units must be >= 0, got {u_in.min()}")
        if u_in.size and u_in.max() > _INT64_MAX:
            raise ValueError(f"units must fit in int64, got {u_in.max()}")
        u = np.array(u_in, dtype=np.int64, copy=True)
        lo_units = int(u.max()) + 1 if u.size else 1
        n = lo_units if n_units is None else as_int(n_units, "n_units", min_value=1)
        if n < lo_units:
            raise ValueError(f"n_units must be > every unit id, got {n} with unit id {lo_units - 1}")
        last = float(t[-1]) if t.size else 0.0
        if end is None:
            e = last
        else:
            if isinstance(end, (bool, np.bool_)) or not isinstance(end, (int, float, np.integer, np.floating)):
                raise TypeError(f"end must be a number of seconds, got {type(end).__name__} {end!r}")
            e = float(end)
            if not math.isfinite(e) or e < last:
                raise ValueError(f"end must be finite and >= the last failure time {last}, got {e}")
        if unit_names is not None:
            unit_names = tuple(unit_names)
            if len(unit_names) != n or not all(isinstance(s, str) for s in unit_names):
                raise ValueError(f"unit_names must be {n} strings (one per unit), got {len(unit_names)} items")
        if reasons is not None:
            reasons = tuple(reasons)
            if len(reasons) != t.shape[0] or not all(isinstance(s, str) for s in reasons):
                raise ValueError(f"reasons must be {t.shape[0]} strings (one per failure), got {len(reasons)} items")
        if start is not None and not (isinstance(start, _dt.datetime) and start.utcoffset() is not None):
            raise TypeError(f"start must be a timezone-aware datetime or None, got {start!r}")
        if source is not None and not isinstance(source, str):
            raise TypeError(f"source must be a str or None, got {type(source).__name__}")
        dropped_before = as_int(dropped_before, "dropped_before", min_value=0)
        dropped_after = as_int(dropped_after, "dropped_after", min_value=0)
        check_choice(numbering, "numbering", NUMBERINGS)
        levels = _check_levels(levels, n)
        if (levels is None) != (numbering != "host_pattern"):
            raise ValueError("levels go with numbering='host_pattern' (positions decoded from host names), "
                             f"got numbering={numbering!r} with levels={'None' if levels is None else 'given'}")
        if filtered is not None and not isinstance(filtered, str):
            raise TypeError(f"filtered must be a text (what read_trace's where kept) or None, got {filtered!r}")
        if changes is not None:
            changes = _check_changes(changes, t, e, u)
        t.setflags(write=False)
        u.setflags(write=False)
        for name, value in (("times", t), ("units", u), ("n_units", n), ("end", e), ("unit_names", unit_names),
                            ("reasons", reasons), ("start", start), ("source", source),
                            ("dropped_before", dropped_before), ("dropped_after", dropped_after),
                            ("numbering", numbering), ("levels", levels), ("filtered", filtered),
                            ("changes", changes)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Trace is immutable (cannot set {name!r})")

    def __reduce__(self):
        # pickled to worker processes with the scenarios replaying it: rebuilt (and checked)
        # through the constructor, since the default slot restore would call __setattr__
        return _rebuild, tuple(getattr(self, k) for k in self.__slots__)

    def replace(self, **changes) -> "Trace":
        """A copy with some attributes changed (checked again), e.g. the time axis scaled:
        ``tr.replace(times=tr.times / 2, end=tr.end / 2)``."""
        unknown = sorted(set(changes) - set(self.__slots__))
        if unknown:
            raise TypeError(f"Trace has no attribute {unknown[0]!r} (attributes: {list(self.__slots__)})")
        kw = {k: getattr(self, k) for k in self.__slots__}
        kw.update(changes)
        return _rebuild(*(kw[k] for k in self.__slots__))

    def __delattr__(self, name):
        raise AttributeError(f"Trace is immutable (cannot delete {name!r})")

    @property
    def n_events(self) -> int:
        """Number of failures in the trace."""
        return int(self.times.shape[0])

    def __len__(self) -> int:
        return self.n_events

    def failures_per_unit(self) -> np.ndarray:
        """Failures of each unit id, an int64 array of length :attr:`n_units`."""
        return np.bincount(self.units, minlength=self.n_units).astype(np.int64)

    @property
    def n_dropped(self) -> int:
        """Rows of the file outside ``[start, end]`` (:attr:`dropped_before` + :attr:`dropped_after`)."""
        return self.dropped_before + self.dropped_after

    # -- the physical hierarchy (``levels``, from ``read_trace(host_pattern=...)``) ----------
    def _level(self, level) -> int:
        if self.levels is None:
            raise ValueError("the trace has no levels (read it with host_pattern to decode racks from host names)")
        names = [name for name, _ in self.levels]
        if isinstance(level, str):
            if level not in names:
                raise ValueError(f"level must be one of {names}, got {level!r}")
            return names.index(level)
        k = as_int(level, "level", min_value=-len(names), max_value=len(names) - 1)
        return k % len(names)

    def domain_size(self, level) -> int:
        """Units in one domain of ``level`` (a level name or index): the product of the finer radices."""
        k = self._level(level)
        return math.prod(len(labels) for _, labels in self.levels[k + 1:])

    def domains(self, level) -> np.ndarray:
        """The domain of every unit at ``level`` (name or index), an int64 array of length
        :attr:`n_units`: ``unit // domain_size(level)`` (domains are contiguous unit ranges)."""
        return np.arange(self.n_units, dtype=np.int64) // self.domain_size(level)

    def domain_names(self, level) -> tuple:
        """The name of each domain of ``level``: its labels from the coarsest level down,
        joined by ``"/"`` (``"13-3"`` for a cabinet, ``"13-3/1"`` for a cage in it)."""
        k = self._level(level)
        names = [""]
        for _, labels in self.levels[:k + 1]:
            names = [f"{p}/{q}" if p else q for p in names for q in labels]
        return tuple(names)

    def failures_per_domain(self, level) -> np.ndarray:
        """Failures of each domain of ``level`` (int64, one per domain)."""
        size = self.domain_size(level)
        return np.bincount(self.units // size, minlength=self.n_units // size).astype(np.int64)

    def domain_summary(self, level=0) -> "DomainSummary":
        """How the failures fall on the domains of ``level`` (default the coarsest): see
        :class:`DomainSummary`."""
        k = self._level(level)
        counts = self.failures_per_domain(k)
        size = self.domain_size(k)
        dom = self.units // size
        # instants where two or more distinct units of one domain failed together (a switch,
        # a power fault): distinct (time, domain, unit) triples, then those sharing (time, domain)
        order = np.lexsort((self.units, dom, self.times))
        t, d, u = self.times[order], dom[order], self.units[order]
        new_unit = np.ones(t.size, dtype=bool)
        new_unit[1:] = (t[1:] != t[:-1]) | (d[1:] != d[:-1]) | (u[1:] != u[:-1])
        t, d = t[new_unit], d[new_unit]
        same = (t[1:] == t[:-1]) & (d[1:] == d[:-1])
        starts = same & np.concatenate(([True], ~same[:-1])) if same.size else same
        shared = int(np.count_nonzero(starts))
        n_dom = counts.size
        mean = counts.mean()
        dispersion = float(counts.var(ddof=1) / mean) if n_dom > 1 and mean > 0 else float("nan")
        if n_dom > 1:
            from scipy.stats import chisquare

            p = float(chisquare(counts).pvalue)
        else:
            p = float("nan")
        top = max(1, math.ceil(n_dom / 10))
        busiest = int(np.argmax(counts))
        return DomainSummary(level=self.levels[k][0], domains=n_dom, failures=int(counts.sum()),
                             busiest=self.domain_names(k)[busiest], busiest_failures=int(counts[busiest]),
                             top_decile_share=float(np.sort(counts)[::-1][:top].sum() / max(1, counts.sum())),
                             dispersion=dispersion, p_uniform=p, shared_instants=shared)

    def __eq__(self, other):
        if not isinstance(other, Trace):
            return NotImplemented
        rest = [k for k in self.__slots__ if k not in ("times", "units", "changes")]
        a, b = self.changes, other.changes
        same_changes = (a is None and b is None) or (a is not None and b is not None and len(a) == len(b)
                                                     and all(np.array_equal(x, y) for x, y in zip(a, b)))
        return (np.array_equal(self.times, other.times) and np.array_equal(self.units, other.units)
                and same_changes and all(getattr(self, k) == getattr(other, k) for k in rest))

    __hash__ = None

    def __repr__(self):
        failed = int(np.count_nonzero(self.failures_per_unit()))
        extra = "" if self.start is None else f", start={self.start.isoformat()}"
        if self.n_dropped:
            extra += f", {self.n_dropped} rows outside the window dropped"
        return (f"Trace({self.n_events} events, {self.n_units} units, {failed} failed, "
                f"end={self.end:g} s{extra})")


@dataclasses.dataclass(frozen=True)
class DomainSummary:
    """How a log's failures fall on the domains of one level (:meth:`Trace.domain_summary`).

    Attributes
    ----------
    level : str
        The level (a named group of ``host_pattern``).
    domains, failures : int
        Domains of the level (positions in the hierarchy, failing or not) and failures.
    busiest, busiest_failures : str, int
        The domain with the most failures and its count.
    top_decile_share : float
        Share of the failures on the busiest 10 % of the domains (0.1 if they fell evenly).
    dispersion : float
        Index of dispersion of the per-domain counts (variance / mean): about 1 when
        failures fall on domains independently at one rate (Poisson), above 1 when some
        domains fail more (lemon nodes, a bad rack); NaN with one domain.
    p_uniform : float
        p-value of Pearson's chi-squared test that every domain fails at the same rate
        (:func:`scipy.stats.chisquare`; every domain has the same number of positions).
    shared_instants : int
        Failure instants at which two or more distinct units of one domain failed
        together (a switch, a power fault: what rack-aware stacks guard against).
    """

    level: str
    domains: int
    failures: int
    busiest: str
    busiest_failures: int
    top_decile_share: float
    dispersion: float
    p_uniform: float
    shared_instants: int

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict (NaN as None)."""
        return fields_dict(self)

    def __str__(self) -> str:
        return (f"{self.failures:,} failures on {self.domains:,} {self.level} domains: the busiest ({self.busiest}) "
                f"{self.busiest_failures:,}, the busiest 10 % {100 * self.top_decile_share:.0f} %, dispersion "
                f"{self.dispersion:.3g} (1 if they fell at random; chi-squared p = {self.p_uniform:.2g}); "
                f"{self.shared_instants:,} instants with 2+ nodes of one {self.level} failing together")


# ---------------------------------------------------------------------------------------
# reading


def _rebuild(times, units, n_units, end, unit_names, reasons, start, source, dropped_before=0, dropped_after=0,
             numbering="ids", levels=None, filtered=None, changes=None) -> Trace:
    return Trace(times, units, n_units=n_units, end=end, unit_names=unit_names, reasons=reasons, start=start,
                 source=source, dropped_before=dropped_before, dropped_after=dropped_after, numbering=numbering,
                 levels=levels, filtered=filtered, changes=changes)


def _check_changes(changes, times, end, units):
    """``Trace.changes`` checked: read-only (times float64, deltas int8[, units int64]) whose
    removals are the failure rows ``times`` (and ``units``) in order."""
    if not isinstance(changes, (tuple, list)) or len(changes) not in (2, 3):
        raise TypeError(f"changes must be a pair (times, deltas) or a triple (times, deltas, units), got {changes!r}")
    ct = np.array(changes[0], dtype=np.float64, copy=True).reshape(-1)
    cd_in = np.asarray(changes[1])
    if cd_in.ndim != 1 or cd_in.shape[0] != ct.shape[0]:
        raise ValueError(f"changes: one delta per time ({ct.shape[0]}), got shape {cd_in.shape}")
    if cd_in.size and not np.all((cd_in == -1) | (cd_in == 1)):
        raise ValueError("changes: every delta is -1 (a removal) or +1 (an addition)")
    cd = cd_in.astype(np.int8)
    if ct.size and not (np.all(np.isfinite(ct)) and ct.min() >= 0 and ct.max() <= end and np.all(np.diff(ct) >= 0)):
        raise ValueError(f"changes: times must be finite, non-decreasing and within [0, end={end:g}]")
    if not np.array_equal(ct[cd < 0], times):
        raise ValueError("changes: the removals (delta -1) must be the failure rows (times), in order")
    ct.setflags(write=False)
    cd.setflags(write=False)
    if len(changes) == 2:
        return (ct, cd)
    cu_in = np.asarray(changes[2])
    if cu_in.shape != ct.shape or (cu_in.size and (cu_in.dtype == np.bool_ or not np.issubdtype(cu_in.dtype, np.integer)
                                                   or cu_in.min() < 0)):
        raise ValueError(f"changes: one unit id (an integer >= 0) per time ({ct.shape[0]}), got {cu_in.dtype} "
                         f"of shape {cu_in.shape}")
    cu = np.array(cu_in, dtype=np.int64, copy=True)
    if not np.array_equal(cu[cd < 0], units):
        raise ValueError("changes: the units of the removals (delta -1) must be the failure rows' units, in order")
    cu.setflags(write=False)
    return (ct, cd, cu)


def _check_levels(levels, n_units):
    """``levels`` as a tuple of ``(name, labels)`` tuples (or None), the radices multiplying to ``n_units``."""
    if levels is None:
        return None
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
        raise TypeError(f"levels must be a sequence of (name, labels) pairs, got {type(levels).__name__}")
    out = []
    for item in levels:
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str)):
            raise TypeError(f"levels must hold (name, labels) pairs, got {item!r}")
        name, labels = item
        labels = tuple(labels)
        if not labels or not all(isinstance(x, str) for x in labels):
            raise ValueError(f"level {name!r} must have at least one label, all str")
        out.append((name, labels))
    if not out:
        raise ValueError("levels must hold at least one level")
    names = [name for name, _ in out]
    if len(set(names)) != len(names):
        raise ValueError(f"levels must have distinct names, got {names}")
    size = math.prod(len(labels) for _, labels in out)
    if size != n_units:
        raise ValueError(f"levels give {size} positions ({' x '.join(str(len(lb)) for _, lb in out)}) but "
                         f"n_units={n_units}: the positions are the units")
    return tuple(out)


def read_trace(path, *, time_column="time", unit_column="unit", reason_column=None,
               time_format="auto", time_unit="s", tz=None, units="auto", unit_map=None,
               n_units=None, start=None, end=None, sort=False, header="auto", delimiter=",",
               fold=None, dst=None, host_pattern=None, where=None, event_column=None, remove_values=None,
               add_values=None):
    """Read a failure log (CSV or Parquet) into a :class:`Trace`.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.parquet`` / ``.pq`` file (needs pyarrow: ``pip install spare_core[parquet]``) or
        any other file as CSV (``#`` comment lines and blank lines are skipped).
    time_column, unit_column : str or int, keyword-only
        The columns of the failure time and of the failed unit, by header name (CSV: the
        first row must then be a header) or by 0-based position. Default ``"time"`` and
        ``"unit"``.
    reason_column : str or int, optional, keyword-only
        A column kept as :attr:`Trace.reasons` (text, e.g. the failure cause).
    time_format : {"auto", "seconds", "epoch", "iso"} or str, keyword-only
        ``"seconds"``: numbers, already relative to the trace's origin (they must be
        >= 0). ``"epoch"``: numbers, Unix time. ``"iso"``: ISO 8601 datetimes, with or
        without a UTC offset (``Z`` accepted). ``"auto"`` (default): numbers are
        ``"seconds"``, text is ``"iso"`` (an epoch column is never guessed). A Parquet
        timestamp column is always absolute. Any other text holding a ``%`` is a
        strftime pattern (``"%m/%d/%Y %H:%M"`` for US dates with minutes,
        ``"%d.%m.%Y %H:%M:%S"``, ``"%a %b %d %H:%M:%S %Y"``): the directives of
        :data:`STRFTIME_DIRECTIVES` (C-locale month and day names, a year required,
        ``%I`` with ``%p``), whitespace matching any run of blanks, as
        :meth:`datetime.datetime.strptime` reads them, parsed for the whole column at
        once (a regular expression over the column, then numpy) rather than row by row;
        only in a ``tz`` with summer time is each wall time then placed row by row (the
        zone's rules, ``fold`` and ``dst``).
    time_unit : {"ns", "us", "ms", "s", "min", "h", "d"}, keyword-only
        Unit of a numeric time column (default seconds).
    tz : datetime.tzinfo or str, optional, keyword-only
        Time zone of datetimes written without an offset (an IANA name such as
        ``"Europe/Paris"``, or a tzinfo). Default UTC. A file mixing datetimes with and
        without an offset is refused. A local time that the zone makes ambiguous (the hour
        repeated when the clocks go back) or that does not exist in it (the hour skipped
        when they go forward) is refused naming its line, unless ``fold`` or ``dst``
        resolves it.
    units : {"auto", "ids", "names"}, keyword-only
        ``"ids"``: the unit column holds integer ids >= 0 that fit in int64 (used as they
        are; an integral float such as ``7.0``, as pandas writes an integer column with a
        missing value, is the id 7). ``"names"``: it holds host names, mapped to ids by
        ``unit_map`` or, without a map, in order of first appearance. ``"auto"`` (default):
        ids if every cell is an integer (or an integral float, ``7.0``), else names.
        Ignored (names) when ``unit_map`` is given.
    unit_map : mapping of str to int, or sequence of str, optional, keyword-only
        Host name -> unit id (several hosts may share an id, e.g. the nodes of one
        data-parallel group), or a sequence of names whose positions are the ids. A host
        missing from the map is an error.
    n_units : int, optional, keyword-only
        Units in the cluster (default: from the map, or the largest id + 1, or the number
        of distinct names).
    start : datetime.datetime or str or float, optional, keyword-only
        Start of the window of the log to keep, which becomes time 0 (e.g. the job's
        start): for absolute times an instant (a datetime, an ISO string, a string in the
        ``time_format`` pattern, or epoch seconds), for ``"seconds"`` traces a number of
        seconds on the log's axis. Rows before it are dropped and counted
        (:attr:`Trace.dropped_before`). Default: the first failure (absolute times, which
        then sits at time 0) or 0 (``"seconds"``).
    end : datetime.datetime or str or float, optional, keyword-only
        End of the window (of the observation: the log says nothing after it), given like
        ``start``. Rows after it are dropped and counted (:attr:`Trace.dropped_after`).
        Default: the last failure. Every row is still read and checked (a malformed row
        outside the window is an error too), and hosts are numbered over the whole log.
    sort : bool, keyword-only
        Times going backwards are an error naming the line (default), so a shuffled or
        concatenated log is never replayed in file order by accident; ``sort=True`` sorts
        by time instead (stable: simultaneous failures keep their file order).
    header : {"auto", True, False}, keyword-only
        CSV only. ``"auto"``: a header row is required when a column is given by name;
        with positions, the first row is a header only if every selected cell looks like
        a name (starts with a letter or ``_``), so a malformed first *data* row (times
        start with a digit or sign) is reported, never skipped as a header.
    delimiter : str, keyword-only
        CSV field delimiter (default ``","``).
    fold : {None, "earlier", "later", "infer"}, keyword-only
        A local time of the repeated hour (autumn): ``"earlier"`` is its first occurrence
        (the summer-time offset), ``"later"`` the second, ``"infer"`` the first unless that
        would go back before the previous row (a log in time order that crosses the change:
        02:50 then 02:10 is the second 02:10). Default None: refused.
    dst : {None, "before", "after"}, keyword-only
        A local time in the skipped hour (spring), read with the UTC offset in force
        ``"before"`` the change (a clock not yet moved forward: 02:30 in Paris is then 03:30
        summer time) or ``"after"`` it (01:30 winter time). Default None: refused.
    host_pattern : str, optional, keyword-only
        A regular expression (Python :mod:`re`) that every host name must match whole, whose
        named groups, in the order they appear, are the levels of the machine's hierarchy
        from the coarsest to the node: for Cray names such as ``c21-5c0s7n2`` (cabinet
        column 21, row 5, cage 0, slot 7, node 2)
        ``r"c(?P<cabinet>\\d+-\\d+)c(?P<cage>\\d+)s(?P<slot>\\d+)n(?P<node>\\d+)"``. A level
        whose values are all digits spans the integers from its smallest to its largest value
        (a slot no failure names keeps its place); other levels take their distinct values in
        natural order (digits compared as numbers: ``"2-1"`` before ``"10-0"``). The units are
        then the positions of this hierarchy in mixed radix (``n_units`` = the product of the
        levels' sizes, hosts that never failed included), so consecutive units are
        neighbours and a level's domains (a cabinet: everything sharing its labels down to
        that level) are ranges of units (:attr:`Trace.levels`, :meth:`Trace.domains`). Two
        hosts on one position, a host that does not match, or more than 4,194,304 positions
        are errors. Not with ``unit_map`` or ``units="ids"``.
    where : mapping of column to value or list of values, optional, keyword-only
        Which rows are failures: only rows whose every named column (a header name or a
        0-based position) holds one of its values, compared as text with surrounding blanks
        removed (``{"event": ["DBE", "OTB"]}``: double-bit errors and GPUs off the bus). The
        rows left out are counted, blank cells apart from other values, in
        :attr:`Trace.filtered` (which a replay's and a fit's description repeat), so a log
        whose event column is mostly empty says so. Applied before the window
        (``start``/``end``), which counts only rows kept. Default: every row is a failure.
    event_column : str or int, optional, keyword-only
        A log of capacity events (a preemption trace): the column (header name or 0-based
        position) whose value says what each row is, compared as text with surrounding blanks
        removed. A row whose value is in ``remove_values`` takes its unit out (to the job, a
        failure of that unit: those rows are the trace's ``times``/``units``); one in
        ``add_values`` brings a node back (capacity returns). Every row (after ``where``)
        must hold one of them: other values are refused, named with their counts. Both are
        kept in :attr:`Trace.changes` (time, -1 or +1, the row's unit). Not read as capacity events: the
        refusal of :data:`CAPACITY_EVENTS` does not apply.
    remove_values, add_values : str or list of str, keyword-only
        With ``event_column`` (required then; ``add_values`` may be an empty list): the
        values of a removal and of an addition, disjoint.

    Returns
    -------
    Trace

    Raises
    ------
    TraceFormatError
        A :class:`ValueError` naming the file, line (or Parquet row) and rule: missing
        column, short row, empty or unparseable time (a time that does not match the
        ``time_format`` pattern, or a month, day, hour... out of range), negative time
        (``"seconds"``), times going backwards (``sort=False``), mixed time formats or time
        zones, an ambiguous or nonexistent local time (without ``fold``/``dst``), unit id
        not an integer / negative / beyond int64, host missing from ``unit_map`` or not
        matching ``host_pattern``, no failure rows at all or none between ``start`` and
        ``end``.
    ImportError
        A Parquet file without pyarrow installed.

    Notes
    -----
    Absolute times are converted to integer microseconds since the Unix epoch before the
    origin is subtracted, so relative times carry no rounding from the epoch's size.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = p.write_text("timestamp,host,reason\\n"
    ...                  "2024-05-01T00:30:00Z,node-b,GPU\\n"
    ...                  "2024-05-01T03:00:00+02:00,node-a,HBM3\\n")
    >>> tr = read_trace(p, time_column="timestamp", unit_column="host", reason_column="reason",
    ...                 start="2024-05-01T00:00:00Z")
    >>> tr.times.tolist(), tr.units.tolist(), tr.unit_names, tr.reasons
    ([1800.0, 3600.0], [0, 1], ('node-b', 'node-a'), ('GPU', 'HBM3'))

    US dates with minutes and Cray host names (cabinet 0-1, cage 2, slot 7, node 3):

    >>> _ = p.write_text("date,host\\n3/1/2024 6:05 PM,c0-1c2s7n3\\n3/2/2024 9:30 AM,c1-0c0s0n0\\n")
    >>> tr = read_trace(p, time_column="date", unit_column="host", time_format="%m/%d/%Y %I:%M %p",
    ...                 host_pattern=r"c(?P<cabinet>\\d+-\\d+)c(?P<cage>\\d)s(?P<slot>\\d)n(?P<node>\\d)")
    >>> tr.times.tolist(), tr.n_units, [(name, len(labels)) for name, labels in tr.levels]
    ([0.0, 55500.0], 192, [('cabinet', 2), ('cage', 3), ('slot', 8), ('node', 4)])
    >>> tr.units.tolist(), tr.domains("cabinet")[tr.units].tolist()
    ([95, 96], [0, 1])
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"trace path must be a str or os.PathLike, got {type(path).__name__}")
    spath = os.fspath(path)
    opts = _options(time_column, unit_column, reason_column, time_format, time_unit, tz, units,
                    unit_map, n_units, sort, header, delimiter, fold, dst, host_pattern)
    opts["where"] = _where_spec(where)
    opts["event"] = _event_spec(event_column, remove_values, add_values)
    if spath.lower().endswith((".parquet", ".pq")):
        cols = _read_parquet(spath, opts)
        at = "row"
    else:
        cols = _read_csv(spath, opts)
        at = "line"
    if opts["where"] is None and opts["event"] is None:
        _refuse_capacity_events(spath, cols, reason_column)
    filtered = _apply_where(spath, cols, opts["where"])
    kinds = _event_kinds(spath, cols, opts["event"])
    tr = _assemble(spath, at, cols, opts, start, end, kinds)
    return tr if filtered is None else tr.replace(filtered=filtered)


def _refuse_capacity_events(path, cols, reason_column) -> None:
    """Refuse a log whose event or reason column holds :data:`CAPACITY_EVENTS` (no ``where``
    chose the failure rows): read as failures, a node joining the pool would count as one."""
    checked = []
    if isinstance(cols.get("reason"), list):
        checked.append((reason_column, cols["reason"]))
    checked += [(k[1], v) for k, v in cols.items() if isinstance(k, tuple) and k[0] == "event"]
    for name, cells in checked:
        found: dict = {}
        other: dict = {}
        for c in cells:
            v = str(c).strip()
            if v.lower() in CAPACITY_EVENTS:
                found[v] = found.get(v, 0) + 1
            elif v:
                other[v] = other.get(v, 0) + 1
        if not found:
            continue
        n = sum(found.values())
        counts = ", ".join(f"{k!r} x{v:,}" for k, v in sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
        keep = sorted(other, key=lambda k: (-other[k], k))[:5]
        hint = (f"; e.g. where = {{{name} = [{', '.join(json.dumps(k) for k in keep)}]}} keeps its other values"
                if keep else "")
        raise TraceFormatError(path, None, f"column {name!r} holds capacity events, not failures: {counts} "
                                           f"({n:,} of {len(cells):,} rows; the values {list(CAPACITY_EVENTS)} are "
                                           "read as capacity events, in any case); say which rows are failures with "
                                           f"where (failures.trace.where in a scenario file){hint}, or replay them as capacity events "
                                           "with event_column, remove_values and add_values")


def _event_columns(hdr, idx) -> dict:
    """Header names of :data:`EVENT_COLUMNS` not already read, with their positions."""
    used = set(idx.values())
    return {h: j for j, h in enumerate(hdr) if h.lower() in EVENT_COLUMNS and j not in used}


def _event_spec(event_column, remove_values, add_values):
    """``event_column`` and its values checked: (column, removal values, addition values) or None."""
    if event_column is None:
        if remove_values is not None or add_values is not None:
            raise ValueError("remove_values and add_values go with event_column (the column they are values of)")
        return None
    if isinstance(event_column, str) and event_column.strip().isdigit():
        event_column = int(event_column)
    if isinstance(event_column, bool) or not isinstance(event_column, (str, int)) or \
            (isinstance(event_column, int) and event_column < 0):
        raise TypeError(f"event_column must be a header name or a 0-based position, got {event_column!r}")
    sets = []
    for name, vals, need in (("remove_values", remove_values, True), ("add_values", add_values, False)):
        if vals is None:
            if need:
                raise ValueError("event_column needs remove_values: the values of a row that removes a node")
            vals = []
        items = vals if isinstance(vals, (list, tuple)) else [vals]
        if (need and not items) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in items):
            raise TypeError(f"{name} must be a value or a list of values (text or integers), got {vals!r}")
        sets.append({str(v).strip() for v in items})
    both = sorted(sets[0] & sets[1])
    if both:
        raise ValueError(f"remove_values and add_values share {both}: a row is one or the other")
    return (event_column, sets[0], sets[1])


def _event_kinds(path, cols, spec):
    """Each row's change of capacity (int8: -1 removal, +1 addition) by ``event_column``, or
    None without it; a value that is neither is refused with the counts of such values."""
    if spec is None:
        return None
    col, rem, add = spec
    cells = [c.strip() for c in cols.pop(("kind", col))]
    kinds = np.array([-1 if c in rem else 1 if c in add else 0 for c in cells], dtype=np.int8)
    bad = np.flatnonzero(kinds == 0)
    if bad.size:
        counts: dict = {}
        for i in bad:
            counts[cells[i]] = counts.get(cells[i], 0) + 1
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        words = ", ".join(f"{k!r} x{v:,}" for k, v in top) + (f", {len(counts) - 8} more" if len(counts) > 8 else "")
        raise TraceFormatError(path, int(cols["lines"][bad[0]]), f"event column {col!r} holds {bad.size:,} rows that "
                               f"are neither removals {sorted(rem)} nor additions {sorted(add)}: {words}; name them "
                               "in remove_values or add_values, or leave them out with where")
    if not np.any(kinds < 0):
        raise TraceFormatError(path, None, f"no removal rows: event column {col!r} holds no value of "
                                           f"remove_values {sorted(rem)}")
    return kinds


def _where_spec(where) -> dict | None:
    """``where`` checked: column (name or position) -> the set of its values (text, stripped)."""
    if where is None:
        return None
    if not isinstance(where, dict) or not where:
        raise TypeError(f"where must be a non-empty table of column = value or [values], got {where!r}")
    out = {}
    for col, vals in where.items():
        if isinstance(col, str) and col.strip().isdigit():
            col = int(col)  # a TOML key is text: "3" names the fourth column
        if isinstance(col, bool) or not isinstance(col, (str, int)):
            raise TypeError(f"where: a column is a header name or a 0-based position, got {col!r}")
        items = vals if isinstance(vals, (list, tuple)) else [vals]
        if not items or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in items):
            raise TypeError(f"where.{col}: give a value or a list of values (text or numbers), got {vals!r}")
        out[col] = {str(v).strip() for v in items}
    return out


def _apply_where(path, cols, spec) -> str | None:
    """Keep only the rows ``spec`` names (``cols`` filtered in place); what was kept, in words."""
    if spec is None:
        return None
    n = int(cols["lines"].shape[0])
    keep = np.ones(n, dtype=bool)
    blanks, others = {}, {}
    for col, allowed in spec.items():
        cells = [c.strip() for c in cols[("where", col)]]
        ok = np.fromiter((c in allowed for c in cells), dtype=bool, count=n)
        blank = np.fromiter((not c for c in cells), dtype=bool, count=n)
        blanks[col] = int((blank & ~ok).sum())
        vals: dict = {}
        for c, good in zip(cells, ok):
            if not good and c:
                vals[c] = vals.get(c, 0) + 1
        others[col] = vals
        keep &= ok
    kept = int(keep.sum())
    if kept == 0:
        raise TraceFormatError(path, None, f"no failure rows: where {_where_words(spec)} keeps none of the {n:,} rows"
                                           f" ({_dropped_where(blanks, others)})")
    for k in list(cols):
        v = cols[k]
        if v is None:
            continue
        if isinstance(v, tuple):  # ("num" | "us", array)
            cols[k] = (v[0], v[1][keep])
        elif isinstance(v, np.ndarray):
            cols[k] = v[keep]
        else:
            cols[k] = [x for x, good in zip(v, keep) if good]
    return (f"{kept:,} of {n:,} rows are failures by where {_where_words(spec)}; "
            f"{n - kept:,} left out ({_dropped_where(blanks, others)})")


def _where_words(spec) -> str:
    return ", ".join(f"{c} in {sorted(v)}" for c, v in spec.items())


def _dropped_where(blanks, others) -> str:
    parts = []
    for col in blanks:
        top = sorted(others[col].items(), key=lambda kv: -kv[1])[:5]
        more = f", {len(others[col]) - 5} more values" if len(others[col]) > 5 else ""
        parts.append(f"{col}: {blanks[col]:,} blank, {sum(others[col].values()):,} other values"
                     + (f" ({', '.join(f'{k!r} x{v:,}' for k, v in top)}{more})" if top else ""))
    return "; ".join(parts)


def _options(time_column, unit_column, reason_column, time_format, time_unit, tz, units, unit_map,
             n_units, sort, header, delimiter, fold=None, dst=None, host_pattern=None) -> dict:
    """Validate every option before the file is opened."""
    for name, col in (("time_column", time_column), ("unit_column", unit_column), ("reason_column", reason_column)):
        if col is None and name == "reason_column":
            continue
        if isinstance(col, bool) or not isinstance(col, (str, int, np.integer)):
            raise TypeError(f"{name} must be a column name (str) or a 0-based position (int), got {col!r}")
        if not isinstance(col, str) and col < 0:
            raise ValueError(f"{name} must be a position >= 0, got {col}")
    strftime = None
    if isinstance(time_format, str) and "%" in time_format:
        strftime = _compile_strftime(time_format)
    elif not isinstance(time_format, str) or time_format not in TIME_FORMATS:
        raise ValueError(f"time_format must be one of {list(TIME_FORMATS)} or a strftime pattern (text with %, "
                         f"e.g. '%m/%d/%Y %H:%M'), got {time_format!r}")
    check_choice(time_unit, "time_unit", tuple(TIME_UNITS))
    check_choice(units, "units", UNIT_KINDS)
    if header not in ("auto", True, False):
        raise ValueError(f"header must be 'auto', True or False, got {header!r}")
    if header is False and any(isinstance(c, str) for c in (time_column, unit_column, reason_column)):
        raise ValueError("header=False needs columns given by position (int), not by name")
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter must be a single character, got {delimiter!r}")
    if not isinstance(sort, (bool, np.bool_)):
        raise TypeError(f"sort must be a bool, got {sort!r}")
    if fold is not None:
        check_choice(fold, "fold", FOLDS)
    if dst is not None:
        check_choice(dst, "dst", DSTS)
    tzinfo = _as_tz(tz)
    mapping, map_names = _as_unit_map(unit_map)
    if n_units is not None:
        n_units = as_int(n_units, "n_units", min_value=1)
    host_re = None
    if host_pattern is not None:
        host_re = _compile_host_pattern(host_pattern)
        for name, value, bad in (("unit_map", unit_map, unit_map is not None), ("units", units, units == "ids"),
                                 ("n_units", n_units, n_units is not None)):
            if bad:
                raise ValueError(f"host_pattern does not go with {name}={value!r}: the pattern numbers the hosts "
                                 "itself (its positions are the units)")
    return dict(time=time_column, unit=unit_column, reason=reason_column, time_format=time_format,
                strftime=strftime, scale=TIME_UNITS[time_unit], tz=tzinfo, units=units, map=mapping,
                map_names=map_names, n_units=n_units, sort=bool(sort), header=header, delimiter=delimiter,
                local=(tzinfo, fold, dst), host_re=host_re)


def _as_tz(tz):
    if tz is None:
        return _dt.timezone.utc
    if isinstance(tz, _dt.tzinfo):
        return tz
    if isinstance(tz, str):
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"tz must be an IANA time zone name, got {tz!r}") from None
    raise TypeError(f"tz must be a datetime.tzinfo, an IANA name or None, got {type(tz).__name__}")


def _as_unit_map(unit_map):
    """``(name -> id dict, names-by-id tuple or None)``; names-by-id only for a 1-to-1 map onto 0..n-1."""
    if unit_map is None:
        return None, None
    if isinstance(unit_map, dict) or hasattr(unit_map, "items"):
        mapping = {}
        for k, v in unit_map.items():
            if not isinstance(k, str):
                raise TypeError(f"unit_map keys must be host names (str), got {k!r}")
            mapping[k.strip()] = as_int(v, f"unit_map[{k!r}]", min_value=0, max_value=_INT64_MAX)
        if not mapping:
            raise ValueError("unit_map must not be empty")
        ids = sorted(mapping.values())
        names = None
        if ids == list(range(len(ids))):
            inv = {v: k for k, v in mapping.items()}
            names = tuple(inv[i] for i in range(len(ids)))
        return mapping, names
    if isinstance(unit_map, (str, bytes)):
        raise TypeError("unit_map must be a mapping or a sequence of host names, not a single string")
    names = tuple(unit_map)
    if not names or not all(isinstance(s, str) for s in names):
        raise TypeError("unit_map as a sequence must hold host names (str), at least one")
    names = tuple(s.strip() for s in names)
    if len(set(names)) != len(names):
        dup = next(s for s in names if names.count(s) > 1)
        raise ValueError(f"unit_map lists host {dup!r} twice")
    return {s: i for i, s in enumerate(names)}, names


def _looks_like_name(cell: str) -> bool:
    c = cell.strip()
    return bool(c) and (c[0].isalpha() or c[0] == "_")


def _read_csv(path, opts):
    """Cells of the selected columns as lists of str, with their 1-based line numbers."""
    cols = {"time": opts["time"], "unit": opts["unit"], "reason": opts["reason"]}
    for col in opts.get("where") or ():
        cols[("where", col)] = col  # a filter's column, read as text
    if opts.get("event") is not None:
        cols[("kind", opts["event"][0])] = opts["event"][0]  # the event column, read as text
    named = any(isinstance(c, str) for c in cols.values())
    out = {k: [] for k in cols}
    lines = []
    idx = None
    sniff = opts.get("where") is None and opts.get("event") is None  # without where, the event columns are checked (_refuse_capacity_events)
    events: dict = {}
    # decoded as it is read, as from the file (a decoded copy of the whole log would double it)
    with io.TextIOWrapper(io.BytesIO(_read_log(path)), encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=opts["delimiter"], strict=True)
        try:
            for row in reader:
                if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
                    continue
                ln = reader.line_num
                if idx is None:
                    hdr = [c.strip() for c in row]
                    if named or opts["header"] is True:
                        idx = _header_index(path, ln, hdr, cols)
                        events = _event_columns(hdr, idx) if sniff else {}
                        continue
                    idx = {k: c for k, c in cols.items() if c is not None}
                    if opts["header"] == "auto" and all(c < len(row) and _looks_like_name(row[c]) for c in idx.values()):
                        events = _event_columns(hdr, idx) if sniff else {}
                        continue  # a header row of names over positional columns
                need = max(idx.values()) + 1
                if len(row) < need:
                    raise TraceFormatError(path, ln, f"row has {len(row)} column(s), needs {need} "
                                                     f"(columns {_describe(cols)}): {row!r}")
                if len(lines) >= MAX_LOG_ROWS:
                    raise TraceFormatError(path, ln, f"more than {MAX_LOG_ROWS:,} failure rows, the most a log may "
                                                     "hold (docs/cli.md, 'Input files')")
                for k, c in idx.items():
                    out[k].append(row[c])
                for h, c in events.items():
                    out.setdefault(("event", h), []).append(row[c] if c < len(row) else "")
                lines.append(ln)
        except csv.Error as exc:
            raise TraceFormatError(path, reader.line_num, f"not valid CSV ({exc})") from None
        except UnicodeDecodeError as exc:
            raise TraceFormatError(path, None, f"not UTF-8 text ({exc.reason}); is it a Parquet file "
                                               f"without a .parquet suffix?") from None
    if not lines:
        raise TraceFormatError(path, None, "no failure rows (the file is empty or has only a header/comments)")
    got = {"time": out["time"], "unit": out["unit"], "reason": out["reason"] if cols["reason"] is not None else None,
           "lines": np.asarray(lines, dtype=np.int64)}
    got.update({k: v for k, v in out.items() if isinstance(k, tuple)})
    return got


#: ``(path, bytes)`` of a log its caller has already read (:func:`read_log_bytes`), else None
_GIVEN: contextvars.ContextVar[tuple[str, bytes] | None] = contextvars.ContextVar("spare_core_log_bytes",
                                                                                    default=None)


@contextlib.contextmanager
def read_log_bytes(path, data: bytes):
    """Within the block, :func:`read_trace` of ``path`` parses ``data`` instead of opening the
    file: a caller that read the log to hash it (the scenario file's provenance) parses the very
    bytes it hashed, and a file replaced or deleted in between is not read a second time."""
    token = _GIVEN.set((os.fspath(path), data))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def _read_log(path):
    """The log's bytes (:func:`spare_core._files.read_input`: a regular file, at most
    :data:`~spare_core._files.MAX_LOG_BYTES`), or those given by :func:`read_log_bytes`."""
    given = _GIVEN.get()
    if given is not None and given[0] == os.fspath(path):
        return given[1]
    try:
        return read_input(path, "failure log", MAX_LOG_BYTES)
    except InputFileError as exc:
        raise TraceFormatError(path, None, exc.reason) from None


def _describe(cols):
    return ", ".join(f"{k}={c!r}" for k, c in cols.items() if c is not None)


def _header_index(path, ln, hdr, cols):
    idx = {}
    for k, c in cols.items():
        if c is None:
            continue
        if isinstance(c, str):
            if c not in hdr:
                what = k if isinstance(k, str) else {"where": "where", "kind": "event"}[k[0]]
                raise TraceFormatError(path, ln, f"missing {what} column {c!r}; the header has {hdr}")
            idx[k] = hdr.index(c)
        else:
            if c >= len(hdr):
                raise TraceFormatError(path, ln, f"{k} column position {c} is beyond the header's {len(hdr)} columns")
            idx[k] = c
    return idx


def _read_parquet(path, opts):
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            f"reading the Parquet trace {path!r} needs pyarrow: pip install 'spare_core[parquet]' "
            "(or save the log as CSV)"
        ) from None
    data = _read_log(path)
    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        schema = pf.schema_arrow
    except (OSError, pa.ArrowException) as exc:
        raise TraceFormatError(path, None, f"not a readable Parquet file ({_one_line(exc)})") from None
    names = list(schema.names)
    twice = sorted({n for n in names if names.count(n) > 1})
    wanted = {}
    for k in ("time", "unit", "reason"):
        c = opts[k]
        if c is None:
            continue
        if isinstance(c, str):
            if c not in names:
                raise TraceFormatError(path, None, f"missing {k} column {c!r}; the file has {names}")
            wanted[k] = c
        else:
            if c >= len(names):
                raise TraceFormatError(path, None, f"{k} column position {c} is beyond the file's {len(names)} columns")
            wanted[k] = names[c]
        if wanted[k] in twice:
            raise TraceFormatError(path, None, f"{k} column {wanted[k]!r} appears more than once in the file "
                                               f"(columns {names})")
    for col in opts.get("where") or ():
        if isinstance(col, str) and col not in names:
            raise TraceFormatError(path, None, f"missing where column {col!r}; the file has {names}")
        if not isinstance(col, str) and col >= len(names):
            raise TraceFormatError(path, None, f"where column position {col} is beyond the file's {len(names)} columns")
        wanted[("where", col)] = col if isinstance(col, str) else names[col]
    if opts.get("event") is not None:
        col = opts["event"][0]
        if isinstance(col, str) and col not in names:
            raise TraceFormatError(path, None, f"missing event column {col!r}; the file has {names}")
        if not isinstance(col, str) and col >= len(names):
            raise TraceFormatError(path, None, f"event column position {col} is beyond the file's {len(names)} columns")
        wanted[("kind", col)] = col if isinstance(col, str) else names[col]
    if opts.get("where") is None and opts.get("event") is None:  # the event columns are checked (_refuse_capacity_events)
        used = set(wanted.values())
        for n in names:
            if n.lower() in EVENT_COLUMNS and n not in used and n not in twice:
                wanted[("event", n)] = n
    table = _bounded_parquet_table(path, data, pf, sorted(set(wanted.values())))
    if table.num_rows == 0:
        raise TraceFormatError(path, None, "no failure rows (the table is empty)")
    out = {"lines": np.arange(1, table.num_rows + 1, dtype=np.int64), "reason": None}
    for k, name in wanted.items():
        col = table.column(name).combine_chunks()
        if isinstance(k, tuple):  # a filter's column: its cells as text, a null a blank
            out[k] = ["" if x is None else str(x) for x in col.to_pylist()]
            continue
        if col.null_count:
            row = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False))) + 1
            raise TraceFormatError(path, row, f"empty {k} cell (null) in column {name!r}", where="row")
        typ = col.type
        if k == "time" and pa.types.is_timestamp(typ):
            if typ.tz is None and not isinstance(opts["tz"], _dt.timezone):
                # wall-clock times in a zone with clock changes: placed row by row, with the
                # same rules for the repeated and the skipped hour as a CSV's (fold, dst)
                naive = col.cast(pa.timestamp("us"), safe=False).cast(pa.int64()).to_numpy()
                out[k] = ("us", _localize_us(naive, opts["local"], lambda i, words: TraceFormatError(
                    path, i + 1, words, where="row")))
                continue
            if typ.tz is None:  # wall-clock times at a fixed offset
                col = pc.assume_timezone(col, timezone=_tz_name(opts["tz"], path))
            out[k] = ("us", col.cast(pa.timestamp("us", tz="UTC"), safe=False).cast(pa.int64()).to_numpy())
        elif k == "time" and pa.types.is_date(typ):
            raise TraceFormatError(path, None, f"time column {name!r} holds dates, not instants ({typ})")
        elif pa.types.is_integer(typ) or pa.types.is_floating(typ):
            out[k] = ("num", col.to_numpy(zero_copy_only=False))
        else:
            try:
                out[k] = [str(x) for x in col.to_pylist()]
            except (OverflowError, ValueError, pa.ArrowException) as exc:  # e.g. a timestamp past year 9999
                raise TraceFormatError(path, None, f"{k} column {name!r} ({typ}) holds a value that cannot be read "
                                                   f"as text ({_one_line(exc)})") from None
    return out


def _one_line(exc):
    """An exception's text on one line (pyarrow's messages hold newlines)."""
    return " ".join(str(exc).split())


def _bounded_parquet_table(path, data, pf, columns):
    """The selected columns, refused before they are decoded when they would exceed the log's
    limits: :data:`~spare_core._files.MAX_LOG_ROWS` rows, and
    :data:`~spare_core._files.MAX_LOG_BYTES` once decompressed, text cells counted at their full
    length (a dictionary-encoded column is read as a dictionary first, so one long string
    repeated on every row is measured, not expanded)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    md = pf.metadata
    if md.num_rows > MAX_LOG_ROWS:
        raise TraceFormatError(path, None, f"{md.num_rows:,} rows, more than the {MAX_LOG_ROWS:,} a log may hold "
                                           "(docs/cli.md, 'Input files')")
    limit = f"the {MAX_LOG_BYTES / 2**20:g} MiB limit of a failure log (docs/cli.md, 'Input files')"
    total = 0
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            cc = rg.column(c)
            if cc.path_in_schema.split(".")[0] in columns:
                total += max(int(cc.total_uncompressed_size), 0)
    if total > MAX_LOG_BYTES:
        raise TraceFormatError(path, None, f"the selected columns hold {total:,} bytes decompressed, over {limit}")
    def is_text(typ):
        return pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ) \
            or pa.types.is_large_binary(typ)

    text = [c for c in columns if is_text(pf.schema_arrow.field(c).type)]
    try:
        table = pq.ParquetFile(pa.BufferReader(data), read_dictionary=text or None).read(columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise TraceFormatError(path, None, f"not a readable Parquet file ({_one_line(exc)})") from None
    if table.num_rows > MAX_LOG_ROWS:
        raise TraceFormatError(path, None, f"{table.num_rows:,} rows, more than the {MAX_LOG_ROWS:,} a log may hold "
                                           "(docs/cli.md, 'Input files')")
    cols = {}
    for name in table.column_names:
        col = table.column(name).combine_chunks()
        if pa.types.is_dictionary(col.type) and is_text(col.type.value_type):
            lengths = pc.binary_length(col.dictionary).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            idx = col.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            size = int(lengths[idx].sum()) if idx.size and lengths.size else 0
            if size > MAX_LOG_BYTES:
                raise TraceFormatError(path, None, f"column {name!r} holds {size:,} bytes of text, over {limit}")
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        cols[name] = col
    return pa.table(cols)


def _tz_name(tz, path):
    if tz is _dt.timezone.utc:
        return "UTC"
    key = getattr(tz, "key", None)
    if key is None:
        raise TraceFormatError(path, None, "naive Parquet timestamps need tz as an IANA name (e.g. 'Europe/Paris')")
    return key


# ---------------------------------------------------------------------------------------
# column parsing


def _assemble(path, where, cols, opts, start, end, kinds=None):
    lines = cols["lines"]

    def err(i, rule):
        return TraceFormatError(path, None if i is None else int(lines[i]), rule, where=where)

    times, absolute = _parse_times(cols["time"], opts, err)
    if absolute:  # int64 microseconds since the epoch
        # default origin: the earliest failure (the first one once sorted)
        origin = int(times.min()) if start is None else _instant_us(start, "start", opts, path)
        end_us = None if end is None else _instant_us(end, "end", opts, path)
        if end_us is not None and end_us < origin:
            raise TraceFormatError(path, None, f"end {_fmt_us(end_us)} is before start {_fmt_us(origin)}")
        rel = (times - origin) / 1e6
        start_dt = _EPOCH + _dt.timedelta(microseconds=origin)
        end_s = None if end_us is None else (end_us - origin) / 1e6
    else:
        bad = np.flatnonzero(times < 0)
        if bad.size:
            raise err(int(bad[0]), f"time {times[bad[0]]:g} is negative; 'seconds' times count from the "
                                   "trace's origin (use time_format='epoch' for Unix times)")
        # a window of a 'seconds' log: start and end on the log's own axis, start becoming 0
        origin = 0.0 if start is None else _seconds(start, "start", path)
        end_log = None if end is None else _seconds(end, "end", path)
        if end_log is not None and end_log < origin:
            raise TraceFormatError(path, None, f"end ({end_log:g} s) is before start ({origin:g} s)")
        rel = times - origin if origin else times
        start_dt = None
        end_s = None if end_log is None else end_log - origin
    order = None
    back = np.flatnonzero(np.diff(rel) < 0)
    if back.size:
        if not opts["sort"]:
            i = int(back[0])
            raise err(i + 1, f"time goes backwards ({rel[i + 1]:g} s after {rel[i]:g} s on {where} "
                             f"{int(lines[i])}); the log must be sorted by time, or pass sort=True")
        order = np.argsort(rel, kind="stable")
        rel = rel[order]
        if kinds is not None:
            kinds = kinds[order]
    units, names, n_units, numbering, levels = _parse_units(cols["unit"], opts, err)
    reasons = None if cols["reason"] is None else tuple(_as_str(x) for x in _cells(cols["reason"]))
    if order is not None:
        units = units[order]
        reasons = None if reasons is None else tuple(reasons[i] for i in order)
    if opts["n_units"] is not None:
        if opts["n_units"] < n_units:
            raise TraceFormatError(path, None, f"n_units={opts['n_units']} but the trace has unit id {n_units - 1}")
        if names is not None:  # units that never failed have no name in the log
            if opts["n_units"] > MAX_LOG_ROWS:  # one name each: bounded like a hostfile's hosts
                raise TraceFormatError(path, None, f"n_units={opts['n_units']} with host names: at most "
                                                   f"{MAX_LOG_ROWS:,} named units (docs/cli.md, 'Input files')")
            names = names + ("",) * (opts["n_units"] - len(names))
        n_units = opts["n_units"]
    # the window [start, end]: rows outside are dropped and counted (hosts were numbered over
    # the whole log: a node failing only outside the window is still a node of the cluster)
    before = int(np.searchsorted(rel, 0.0, side="left"))
    after_at = rel.shape[0] if end_s is None else int(np.searchsorted(rel, end_s, side="right"))
    n_after = rel.shape[0] - after_at
    if after_at <= before:
        raise TraceFormatError(path, None, f"no failure rows between start and end ({before:,} before start, "
                                           f"{n_after:,} after end)")
    if before or n_after:
        rel, units = rel[before:after_at], units[before:after_at]
        reasons = None if reasons is None else reasons[before:after_at]
        kinds = None if kinds is None else kinds[before:after_at]
    changes = None
    if kinds is not None:
        # a capacity log: every row is a change, the removals alone are failures to the job
        rem = kinds < 0
        if not rem.any():
            raise TraceFormatError(path, None, "no removal rows between start and end")
        changes = (rel, kinds, units)  # the units too: which instance an addition brings
        if end_s is None:
            end_s = float(rel[-1])  # an addition after the last removal is still observed
        rel, units = rel[rem], units[rem]
        reasons = None if reasons is None else tuple(r for r, k in zip(reasons, rem) if k)
    return Trace(rel, units, n_units=n_units, end=end_s, unit_names=names, reasons=reasons,
                 start=start_dt, source=path, dropped_before=before, dropped_after=n_after, numbering=numbering,
                 levels=levels, changes=changes)


def _cells(col):
    if isinstance(col, tuple):
        return col[1].tolist()
    return col


def _as_str(x):
    return x.strip() if isinstance(x, str) else str(x)


def _parse_times(col, opts, err):
    """``(values, absolute)``: float64 seconds (relative) or int64 epoch microseconds."""
    fmt = opts["time_format"]
    if isinstance(col, tuple):  # Parquet typed column
        kind, arr = col
        if kind == "us":
            return arr.astype(np.int64), True
        if fmt == "iso" or opts["strftime"] is not None:
            raise err(None, f"time_format={fmt!r} but the time column is numeric")
        fmt = "seconds" if fmt == "auto" else fmt
        vals = arr.astype(np.float64)
        _check_finite(vals, err)
        return _numeric(vals, fmt, opts["scale"], err)
    if opts["strftime"] is not None:
        return _parse_strftime_column(col, opts["strftime"], opts["local"], err), True
    first = col[0].strip()
    if fmt == "auto":
        fmt = "seconds" if _is_number(first) else "iso"
    if fmt in ("seconds", "epoch"):
        try:
            vals = np.asarray(col, dtype=np.float64)
        except ValueError:
            vals = None
        if vals is None:
            for i, c in enumerate(col):
                if not _is_number(c):
                    what = "empty" if not c.strip() else repr(c)
                    raise err(i, f"time {what} is not a number (time_format={fmt!r}"
                                 + (", detected from the first row" if opts["time_format"] == "auto" else "") + ")")
        _check_finite(vals, err)
        return _numeric(vals, fmt, opts["scale"], err)
    return _parse_iso_column(col, opts["local"], err), True


def _check_finite(vals, err):
    bad = np.flatnonzero(~np.isfinite(vals))
    if bad.size:
        raise err(int(bad[0]), f"time {vals[bad[0]]} is not finite")


def _numeric(vals, fmt, scale, err):
    if fmt == "seconds":
        return vals * scale, False
    us = vals * (scale * 1e6)
    if np.any(np.abs(us) > 9.2e18):
        i = int(np.argmax(np.abs(us) > 9.2e18))
        raise err(i, f"epoch time {vals[i]:g} is out of range")
    return np.rint(us).astype(np.int64), True


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _parse_iso(s: str, local, prev=None):
    """``(datetime, had_offset)`` or None; a naive datetime is placed in ``local`` =
    ``(tz, fold, dst)`` (:func:`_localize`, whose ValueError it lets through)."""
    s = s.strip()
    if s[-1:] in ("Z", "z"):
        s = s[:-1] + "+00:00"
    try:
        d = _dt.datetime.fromisoformat(s)
    except ValueError:
        return None
    if d.utcoffset() is None:
        return _localize(d, *local, prev=prev), False
    return d, True


def _localize(d: _dt.datetime, tz, fold, dst, prev=None) -> _dt.datetime:
    """The naive wall-clock ``d`` as an instant of zone ``tz``. A wall time the zone shows
    twice (the hour repeated when the clocks go back) needs ``fold`` ("earlier": the first
    occurrence), one it skips (the clocks go forward) needs ``dst`` ("before": read with
    the offset in force before the change); else a ValueError in words. (Python alone would
    silently take the first occurrence, so a log crossing the autumn change either went
    backwards by an hour or, sorted, was shifted by one.) ``fold = "infer"`` takes the first
    occurrence unless it is before ``prev``, the previous row's instant."""
    if isinstance(tz, _dt.timezone):  # a fixed offset (UTC by default): every wall time is one instant
        return d.replace(tzinfo=tz)
    a = d.replace(tzinfo=tz, fold=0)
    b = d.replace(tzinfo=tz, fold=1)
    oa, ob = a.utcoffset(), b.utcoffset()
    if oa == ob:
        return a
    name = getattr(tz, "key", None) or str(tz)
    if a.astimezone(_dt.timezone.utc).astimezone(tz).replace(tzinfo=None) == d:  # shown twice
        if fold is None:
            raise ValueError(f"local time {d.isoformat()} is ambiguous in {name} (the hour repeated when the "
                             f"clocks go back: offsets {_fmt_offset(oa)} and {_fmt_offset(ob)}); set "
                             "fold = \"earlier\" or \"later\"")
        if fold == "infer":  # the log runs forward: the first occurrence unless it would go back
            return a if prev is None or a >= prev else b
        return a if fold == "earlier" else b
    if dst is None:
        raise ValueError(f"local time {d.isoformat()} does not exist in {name} (the hour skipped when the "
                         f"clocks go forward); set dst = \"before\" (offset {_fmt_offset(oa)}) or \"after\" "
                         f"(offset {_fmt_offset(ob)})")
    return a if dst == "before" else b


def _fmt_offset(off: _dt.timedelta) -> str:
    m = int(off.total_seconds()) // 60
    return f"{'+' if m >= 0 else '-'}{abs(m) // 60:02d}:{abs(m) % 60:02d}"


def _localize_us(naive_us: np.ndarray, local, fail) -> np.ndarray:
    """Naive wall-clock microseconds (a Parquet timestamp without a zone) as epoch
    microseconds in ``local`` = ``(tz, fold, dst)``; ``fail(i, words)`` raises for row ``i``."""
    out = np.empty(naive_us.shape[0], dtype=np.int64)
    naive_epoch = _EPOCH.replace(tzinfo=None)
    prev = None
    for i, v in enumerate(naive_us.tolist()):
        try:
            prev = _localize(naive_epoch + _dt.timedelta(microseconds=v), *local, prev=prev)
            out[i] = (prev - _EPOCH) // _US
        except (ValueError, OverflowError) as exc:
            raise fail(i, str(exc)) from None
    return out


def _parse_iso_column(col, local, err):
    out = np.empty(len(col), dtype=np.int64)
    offset_line = None  # index of the first row that had / lacked an offset
    had0 = prev = None
    for i, c in enumerate(col):
        try:
            p = _parse_iso(c, local, prev) if c.strip() else None
        except ValueError as exc:  # an ambiguous or nonexistent local time
            raise err(i, str(exc)) from None
        if p is None:
            what = "empty" if not c.strip() else repr(c)
            raise err(i, f"time {what} is not an ISO 8601 datetime (nor a number: "
                         "the first row decides, see time_format)")
        d, had = p
        prev = d
        if had0 is None:
            had0, offset_line = had, i
        elif had != had0:
            raise err(i, "mixes datetimes with and without a UTC offset (first row "
                         f"{'with' if had0 else 'without'}); give every time an offset")
        out[i] = (d - _EPOCH) // _US
    return out


def _instant_us(value, name, opts, path) -> int:
    local, spec = opts["local"], opts["strftime"]
    try:
        if isinstance(value, str):
            if spec is not None and spec.cell.fullmatch(value):
                # the log's own pattern first: with "%Y-%d-%m", "2025-01-03 00:00" is 1 March,
                # which ISO 8601 would read as 3 January
                def fail(i, rule):
                    return ValueError(f"{name}: {rule}")
                return int(_parse_strftime_column([value], spec, local, fail)[0])
            p = _parse_iso(value, local) if value.strip() else None
            if p is None:
                raise ValueError(f"{name} must be an ISO 8601 datetime"
                                 + ("" if spec is None else f" or a time in time_format {spec.pattern!r}")
                                 + f", got {value!r}")
            value = p[0]
        if isinstance(value, _dt.datetime):
            if value.utcoffset() is None:
                value = _localize(value, *local)
            return (value - _EPOCH) // _US
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(name) else f"{name}: {msg}") from None
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        if not math.isfinite(float(value)):
            raise ValueError(f"{name} must be finite, got {value}")
        us = int(round(float(value) * 1e6))
        try:  # an instant a datetime can hold (years 1-9999), as every later use needs
            _EPOCH + _dt.timedelta(microseconds=us)
        except OverflowError:
            raise ValueError(f"{name} must be epoch seconds within the years 1-9999, got {value!r}") from None
        return us
    raise TypeError(f"{name} must be a datetime, an ISO 8601 string or epoch seconds, got {type(value).__name__}")


def _seconds(value, name, path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} of a 'seconds' trace must be a number of seconds, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {v}")
    return v


def _fmt_us(us: int) -> str:
    return (_EPOCH + _dt.timedelta(microseconds=us)).isoformat()


def _parse_units(col, opts, err):
    """``(int64 ids, names by id or None, n_units, numbering, levels)`` (:attr:`Trace.numbering`,
    :attr:`Trace.levels`)."""
    mapping = opts["map"]
    if isinstance(col, tuple):  # Parquet numeric column
        arr = col[1]
        if mapping is not None or opts["units"] == "names" or opts["host_re"] is not None:
            col = [str(x) for x in arr.tolist()]
        elif not np.issubdtype(arr.dtype, np.integer) and not (
                arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.floor(arr))
                and np.all(np.abs(arr) <= 2.0 ** 53)):
            raise err(None, f"unit ids must be integers, the unit column is {arr.dtype}"
                      + ("" if arr.dtype.kind != "f" else " with values that are not integers"))
        else:  # integers, or floats that are all integers (a float export of an integer column)
            ids = arr.astype(np.int64)
            neg = np.flatnonzero(ids < 0)
            if neg.size:
                raise err(int(neg[0]), f"unit id {ids[neg[0]]} is negative")
            return ids, None, int(ids.max()) + 1, "ids", None
    kind = opts["units"]
    if mapping is not None:
        kind = "names"
    elif kind == "auto" and opts["host_re"] is None:
        # integers, some written as integral floats (``7.0``: how pandas exports an integer
        # column with a missing value) are ids, never names numbered by appearance
        kind = "ids" if all(_ID_RE.match(c) for c in col) else "names"
    if kind == "ids":
        ids = np.empty(len(col), dtype=np.int64)
        for i, c in enumerate(col):
            if not _ID_RE.match(c):
                raise err(i, f"unit {c!r} is not an integer id (units='ids'; use units='names' for host names)")
            v = int(c.split(".")[0])
            if v < 0:
                raise err(i, f"unit id {v} is negative")
            if v > _INT64_MAX:
                raise err(i, f"unit id {c.strip()} ({len(c.strip().lstrip('+'))} digits) does not fit in int64; "
                             "read the column as names with units='names'")
            ids[i] = v
        return ids, None, int(ids.max()) + 1, "ids", None
    names = [c.strip() for c in col]
    if mapping is not None:
        ids = np.empty(len(names), dtype=np.int64)
        for i, s in enumerate(names):
            v = mapping.get(s)
            if v is None:
                raise err(i, f"host {s!r} is not in unit_map ({len(mapping)} hosts)")
            ids[i] = v
        return ids, opts["map_names"], max(mapping.values()) + 1, "unit_map", None
    seen: dict[str, int] = {}
    ids = np.empty(len(names), dtype=np.int64)
    for i, s in enumerate(names):
        if not s:
            raise err(i, "empty unit cell")
        ids[i] = seen.setdefault(s, len(seen))
    if opts["host_re"] is None:
        return ids, tuple(seen), len(seen), "appearance", None
    # positions decoded from the names: the regex runs once per distinct host
    hosts = list(seen)

    def fail(j, rule):  # host j (in order of first appearance): its first row
        return err(None if j is None else int(np.argmax(ids == j)), rule)

    pos, size, levels = _host_positions(hosts, opts["host_re"], fail)
    by_pos = [""] * size
    for h, q in zip(hosts, pos.tolist()):
        by_pos[q] = h
    return pos[ids], tuple(by_pos), size, "host_pattern", levels


# ---------------------------------------------------------------------------------------
# strftime patterns, parsed a whole column at a time

#: the strftime directives ``time_format`` patterns may use: directive -> (field, what it reads)
STRFTIME_DIRECTIVES = {
    "Y": ("year", "year, 4 digits"),
    "y": ("year2", "year in the century, 2 digits (69-99: 19xx, 00-68: 20xx, as strptime)"),
    "m": ("month", "month 1-12, 1 or 2 digits"),
    "b": ("month_name", "month name, abbreviated (Jan ... Dec)"),
    "h": ("month_name", "as %b"),
    "B": ("month_full", "month name (January ... December)"),
    "d": ("day", "day of the month, 1 or 2 digits"),
    "j": ("yday", "day of the year 1-366, 1 to 3 digits"),
    "H": ("hour", "hour 0-23, 1 or 2 digits"),
    "I": ("hour12", "hour 1-12, 1 or 2 digits (needs %p)"),
    "p": ("ampm", "AM or PM"),
    "M": ("minute", "minute 0-59, 1 or 2 digits"),
    "S": ("second", "second 0-59, 1 or 2 digits"),
    "f": ("fraction", "fraction of a second, 1 to 6 digits"),
    "z": ("offset", "UTC offset +HHMM, +HH:MM or Z"),
    "a": ("weekday", "weekday name, abbreviated (read, not checked against the date)"),
    "A": ("weekday_full", "weekday name (read, not checked against the date)"),
}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _names_re(names) -> str:
    """The names as one alternation, longest first (as strptime's): a name is matched as a
    word of its own, so adjacent names (``%A%B``: "MondayAugust") split where the names end,
    not where a run of letters of some length would."""
    return "(?:" + "|".join(sorted(names, key=len, reverse=True)) + ")"


_STRF_RE = {"year": r"\d{4}", "year2": r"\d{2}", "month": r"\d{1,2}", "month_name": _names_re(m[:3] for m in _MONTHS),
            "month_full": _names_re(_MONTHS), "day": r"\d{1,2}", "yday": r"\d{1,3}", "hour": r"\d{1,2}",
            "hour12": r"\d{1,2}", "ampm": r"[AaPp][Mm]", "minute": r"\d{1,2}", "second": r"\d{1,2}",
            "fraction": r"\d{1,6}", "offset": r"[+-]\d{2}:?\d{2}|[Zz]", "weekday": _names_re(d[:3] for d in _WEEKDAYS),
            "weekday_full": _names_re(_WEEKDAYS)}
# a run of letters in place of each name: a cell that does not match only because of a name
# then says which name it is ("'Foo' is not a month name")
_STRF_LOOSE = {"month_name": r"[A-Za-z]+", "month_full": r"[A-Za-z]+", "weekday": r"[A-Za-z]+",
               "weekday_full": r"[A-Za-z]+"}
_NAME_WORDS = {"month_name": ("month name (Jan ... Dec)", [m[:3] for m in _MONTHS]),
               "month_full": ("month name (January ... December)", _MONTHS),
               "weekday": ("weekday name (Mon ... Sun)", [d[:3] for d in _WEEKDAYS]),
               "weekday_full": ("weekday name (Monday ... Sunday)", _WEEKDAYS)}
# fields that say the same thing: one of each set at most
_STRF_CLASHES = (("year", "year2"), ("month", "month_name", "month_full", "yday"), ("day", "yday"),
                 ("hour", "hour12"), ("weekday", "weekday_full"))


# fields read as numbers; a pattern of only these and names, each two numbers apart by
# something that is not a digit, is read by the fast path of _strftime_fields
_STRF_NUMERIC = ("year", "year2", "month", "day", "yday", "hour", "hour12", "minute", "second")
# names the fast path reads as text (a weekday name is only matched)
_STRF_NAMES = ("month_name", "month_full", "ampm")
# every byte that is not an ASCII digit -> a blank: a column of such times becomes numbers
_NOT_DIGITS = bytes(c if 48 <= c <= 57 else 32 for c in range(256))


@dataclasses.dataclass(frozen=True)
class _Strftime:
    """A compiled ``time_format`` pattern: the fields in order, the regex of one cell, the
    regex of a column joined by newlines (one match per line), the same without groups and with
    groups for the names only, and whether the fast path applies (numbers and names only,
    never two numbers without a separator)."""

    pattern: str
    fields: tuple
    cell: re.Pattern
    column: re.Pattern
    line: re.Pattern
    names: re.Pattern
    fast: bool
    loose: re.Pattern | None = None


def _compile_strftime(fmt: str) -> _Strftime:
    """The pattern ``fmt`` compiled, or a one-line ValueError naming what is wrong."""
    # parts: (None, None) a run of blanks, (regex, None) a literal, (regex, field) a directive
    parts, fields = [], []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%":
            if i + 1 == len(fmt):
                raise ValueError(f"time_format {fmt!r} ends with a lone '%' (write %% for a percent sign)")
            d = fmt[i + 1]
            i += 2
            if d == "%":
                parts.append(("%", None))
                continue
            if d not in STRFTIME_DIRECTIVES:
                raise ValueError(f"time_format {fmt!r}: %{d} is not supported (supported: "
                                 f"{' '.join('%' + k for k in STRFTIME_DIRECTIVES)} %%)")
            field = STRFTIME_DIRECTIVES[d][0]
            if field in fields:
                raise ValueError(f"time_format {fmt!r} reads the {field.replace('_', ' ')} twice")
            fields.append(field)
            parts.append((_STRF_RE[field], field))
        elif c.isspace():
            while i < len(fmt) and fmt[i].isspace():
                i += 1
            parts.append((None, None))  # any run of blanks, as strptime
        else:
            parts.append((re.escape(c), None))
            i += 1
    have = set(fields)
    for clash in _STRF_CLASHES:
        both = [f for f in clash if f in have]
        if len(both) > 1:
            raise ValueError(f"time_format {fmt!r} gives {' and '.join(both)}: they say the same thing, keep one")
    if not have & {"year", "year2"}:
        raise ValueError(f"time_format {fmt!r} has no year (%Y or %y): a time without one cannot be placed "
                         "(strptime would put it in 1900)")
    if "yday" not in have and not (have & {"month", "month_name", "month_full"} and "day" in have):
        raise ValueError(f"time_format {fmt!r} needs a month and a day (%m or %b, and %d) or a day of the year (%j)")
    if ("hour12" in have) != ("ampm" in have):
        raise ValueError(f"time_format {fmt!r}: %I (hour 1-12) and %p (AM/PM) go together")

    def regex(blank, keep):  # the pattern, blanks as ``blank``, capturing the fields ``keep`` says
        return "".join(blank if rx is None else rx if field is None else
                       ("(" if keep(field) else "(?:") + rx + ")" for rx, field in parts)

    # fast: numbers and names only, each two numbers apart by something that is not a digit (a
    # literal without digits, blanks, a name)
    fast = all(f in _STRF_NUMERIC or f in _STRF_NAMES or f.startswith("weekday") for f in fields)
    prev_numeric = False
    for rx, field in parts:
        numeric = field in _STRF_NUMERIC
        if numeric and prev_numeric or field is None and rx is not None and any(c.isdigit() for c in rx):
            fast = False
        prev_numeric = numeric
    flags = re.IGNORECASE | re.MULTILINE
    blank = r"[^\S\n]"  # a blank, never the newline between two rows
    loose = "".join(r"\s+" if rx is None else rx if field is None else "(" + _STRF_LOOSE.get(field, rx) + ")"
                    for rx, field in parts)
    return _Strftime(fmt, tuple(fields), re.compile(r"\s*" + regex(r"\s+", bool) + r"\s*", re.IGNORECASE),
                     *(re.compile(f"^{blank}*" + regex(blank + "+", keep) + f"{blank}*$", flags)
                       for keep in (bool, lambda f: False, lambda f: f in _STRF_NAMES)), fast,
                     re.compile(r"\s*" + loose + r"\s*", re.IGNORECASE))


def _days_from_civil(y, m, d):
    """Days since 1970-01-01 of the proleptic Gregorian dates (y, m, d), vectorised
    (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", days_from_civil)."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _is_leap(y):
    return (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))


_DAYS_IN_MONTH = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


def _strftime_fields(col, spec: _Strftime, err) -> dict:
    """The fields of every cell: field name -> int64 array (numeric fields) or str array (names,
    the fraction, the offset); a cell that does not match is an error naming its row.

    The column is joined by newlines and matched as one text (one regex pass in C). A pattern
    of numbers only then needs no per-row object at all: the text with every non-digit made a
    blank is read by :func:`numpy.fromstring`, k numbers per row (checked against the count of
    lines that matched); other patterns take the captured strings (``re.findall``).
    """
    n = len(col)
    joined = "\n".join(col)
    whole = joined.count("\n") == n - 1  # no cell holds a newline: line i is row i
    if whole and spec.fast and joined.isascii() and spec.line.subn("", joined)[1] == n:
        numbers = [f for f in spec.fields if f in _STRF_NUMERIC]
        names = [f for f in spec.fields if f in _STRF_NAMES]
        vals = np.fromstring(joined.encode("ascii").translate(_NOT_DIGITS), dtype=np.int64, sep=" ")
        if vals.size == n * len(numbers):
            vals = vals.reshape(n, len(numbers))
            out = {f: vals[:, i] for i, f in enumerate(numbers)}
            if names:  # the names alone captured (the numbers never become Python objects)
                text = np.array(spec.names.findall(joined), dtype=str).reshape(n, len(names))
                out.update({f: text[:, i] for i, f in enumerate(names)})
            return out
    found = spec.column.findall(joined) if whole else []
    if len(found) != n:  # some cell does not match (or holds a newline): find the first, row by row
        for i, c in enumerate(col):
            if spec.cell.fullmatch(c) is None:
                what = "empty" if not c.strip() else repr(c.strip())
                m = spec.loose.fullmatch(c) if spec.loose is not None else None
                for field, value in zip(spec.fields, m.groups() if m else ()):
                    if field in _NAME_WORDS and value.lower() not in _NAME_WORDS[field][1]:
                        raise err(i, f"time {what}: {value!r} is not a {_NAME_WORDS[field][0]} "
                                     f"(time_format {spec.pattern!r})")
                raise err(i, f"time {what} does not match time_format {spec.pattern!r}")
        raise err(None, f"the time column does not match time_format {spec.pattern!r}")  # pragma: no cover
    cells = np.array(found, dtype=str).reshape(n, len(spec.fields))
    return {f: cells[:, i].astype(np.int64) if f in _STRF_NUMERIC else cells[:, i] for i, f in enumerate(spec.fields)}


def _parse_strftime_column(col, spec: _Strftime, local, err) -> np.ndarray:
    """Epoch microseconds (int64) of a column of times in the pattern ``spec``; a value out
    of range (month 13, 31 April, hour 24...) is an error naming its row."""
    f = _strftime_fields(col, spec, err)

    def bad(mask, what):
        if np.any(mask):
            i = int(np.argmax(mask))
            raise err(i, f"time {col[i].strip()!r}: {what(i)} (time_format {spec.pattern!r})")

    def names(values, table, what):  # month / AM-PM names: looked up once per distinct value
        uniq, inv = np.unique(values, return_inverse=True)
        idx = np.array([table.get(u.lower(), -1) for u in uniq.tolist()], dtype=np.int64)[inv.reshape(-1)]
        bad(idx < 0, lambda i: f"{str(values[i])!r} is not a {what}")
        return idx

    if "year" in f:
        year = f["year"]
        bad(year < 1, lambda i: "year 0 does not exist")
    else:
        y2 = f["year2"]
        year = np.where(y2 >= 69, 1900 + y2, 2000 + y2)
    if "yday" in f:
        yday = f["yday"]
        bad((yday < 1) | (yday > 365 + _is_leap(year)), lambda i: f"day of the year {yday[i]} is out of range")
        days = _days_from_civil(year, np.ones_like(year), np.ones_like(year)) + yday - 1
    else:
        if "month" in f:
            month = f["month"]
            bad((month < 1) | (month > 12), lambda i: f"month {month[i]} is out of range 1-12")
        elif "month_name" in f:
            month = names(f["month_name"], {m[:3]: k + 1 for k, m in enumerate(_MONTHS)}, "month name")
        else:
            month = names(f["month_full"], {m: k + 1 for k, m in enumerate(_MONTHS)}, "month name")
        day = f["day"]
        dim = _DAYS_IN_MONTH[month - 1] + ((month == 2) & _is_leap(year))
        bad((day < 1) | (day > dim), lambda i: f"day {day[i]} is out of range for month {month[i]} of {year[i]}")
        days = _days_from_civil(year, month, day)
    zero = np.zeros(len(col), dtype=np.int64)
    if "hour12" in f:
        h12 = f["hour12"]
        bad((h12 < 1) | (h12 > 12), lambda i: f"hour {h12[i]} is out of range 1-12 (%I)")
        pm = names(f["ampm"], {"am": 0, "pm": 1}, "AM/PM marker")
        hour = h12 % 12 + 12 * pm
    else:
        hour = f["hour"] if "hour" in f else zero
        bad(hour > 23, lambda i: f"hour {hour[i]} is out of range 0-23")
    minute = f["minute"] if "minute" in f else zero
    bad(minute > 59, lambda i: f"minute {minute[i]} is out of range 0-59")
    second = f["second"] if "second" in f else zero
    bad(second > 59, lambda i: f"second {second[i]} is out of range 0-59")
    us = (((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000
    if "fraction" in f:  # "5" is half a second: right-padded to 6 digits
        frac = f["fraction"]
        us += frac.astype(np.int64) * 10 ** (6 - np.char.str_len(frac).astype(np.int64))
    if "offset" in f:
        off = f["offset"]
        # "+HH:MM", "+HHMM" or "Z" as "+HHMM"; a log has few distinct offsets: read once each
        uniq, inv = np.unique(np.char.replace(np.where(np.char.upper(off) == "Z", "+0000", off), ":", ""),
                              return_inverse=True)
        sign, oh, om = (np.array(v, dtype=np.int64)[inv.reshape(-1)] for v in zip(
            *((-1 if x[0] == "-" else 1, int(x[1:3]), int(x[3:5])) for x in uniq.tolist())))
        bad((oh > 23) | (om > 59), lambda i: f"UTC offset {str(off[i])!r} is out of range")
        return us - sign * (oh * 3600 + om * 60) * 1_000_000
    tz = local[0]
    if isinstance(tz, _dt.timezone):  # a fixed offset (UTC by default): one subtraction
        return us - int(tz.utcoffset(None) // _US)
    # a zone with clock changes: each wall time placed by the zone's rules (fold / dst), row by row
    return _localize_us(us, local, err)


def _compile_host_pattern(pattern):
    """``host_pattern`` compiled, with at least one named group; a one-line error otherwise."""
    if not isinstance(pattern, str):
        raise TypeError(f"host_pattern must be a regular expression (str), got {type(pattern).__name__}")
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"host_pattern {pattern!r} is not a valid regular expression ({exc})") from None
    if not rx.groupindex:
        raise ValueError(f"host_pattern {pattern!r} has no named group: name the levels, e.g. "
                         r"'c(?P<cabinet>\d+-\d+)c(?P<cage>\d+)s(?P<slot>\d+)n(?P<node>\d+)'")
    return rx


def _natural_key(s: str):
    """Sort key comparing runs of digits as numbers (``"2-1"`` before ``"10-0"``)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", s) if p)


def _host_positions(hosts, rx, fail):
    """The position of each distinct host in the hierarchy of ``rx``'s named groups.

    Returns ``(positions int64 by host, n_positions, levels)``; ``fail(j, rule)`` raises for
    host ``j``.
    """
    groups = sorted(rx.groupindex.items(), key=lambda kv: kv[1])
    values = [[] for _ in groups]
    for j, h in enumerate(hosts):
        m = rx.fullmatch(h)
        if m is None:
            raise fail(j, f"host {h!r} does not match host_pattern {rx.pattern!r}")
        for k, (name, gi) in enumerate(groups):
            v = m.group(gi)
            if v is None or v == "":
                raise fail(j, f"host {h!r}: the group {name!r} of host_pattern matched nothing")
            values[k].append(v)
    digits, labels = [], []
    size = 1
    for (name, _), vals in zip(groups, values):
        if all(v.isascii() and v.isdigit() for v in vals):
            ints = np.array([int(v) for v in vals], dtype=object)
            lo, hi = int(ints.min()), int(ints.max())
            radix = hi - lo + 1
            size *= radix
            if size > MAX_LOG_ROWS:
                break
            digits.append(np.array([int(v) - lo for v in vals], dtype=np.int64))
            labels.append((name, tuple(str(x) for x in range(lo, hi + 1))))
        else:
            uniq = sorted(set(vals), key=_natural_key)
            size *= len(uniq)
            if size > MAX_LOG_ROWS:
                break
            index = {v: i for i, v in enumerate(uniq)}
            digits.append(np.array([index[v] for v in vals], dtype=np.int64))
            labels.append((name, tuple(uniq)))
    if size > MAX_LOG_ROWS:
        raise fail(None, f"host_pattern {rx.pattern!r} gives more than {MAX_LOG_ROWS:,} node positions (level "
                         f"{name!r} reaches {size:,}): does a group capture more than a position (a serial number)?")
    pos = np.zeros(len(hosts), dtype=np.int64)
    for d, (_, lab) in zip(digits, labels):
        pos = pos * len(lab) + d
    uniq, first, counts = np.unique(pos, return_index=True, return_counts=True)
    if np.any(counts > 1):
        p = uniq[int(np.argmax(counts > 1))]
        a, b = np.flatnonzero(pos == p)[:2]
        raise fail(int(b), f"hosts {hosts[a]!r} and {hosts[b]!r} fall on one position of host_pattern "
                           f"{rx.pattern!r}: its named groups must tell every node apart")
    return pos, size, tuple(labels)
