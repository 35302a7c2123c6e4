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

import csv
import datetime as _dt
import io
import math
import os
import re

import numpy as np

from .._files import MAX_LOG_BYTES, MAX_LOG_ROWS, InputFileError, read_input
from .._validate import as_int, check_choice

__all__ = ["Trace", "TraceFormatError", "read_trace", "TIME_FORMATS", "UNIT_KINDS", "TIME_UNITS", "FOLDS", "DSTS"]

#: accepted values of ``read_trace(time_format=...)``
TIME_FORMATS = ("auto", "seconds", "epoch", "iso")
#: accepted values of ``read_trace(units=...)``
UNIT_KINDS = ("auto", "ids", "names")
#: accepted values of ``read_trace(fold=...)`` (a local time of the repeated hour) and ``dst=``
#: (a local time of the skipped hour)
FOLDS = ("earlier", "later", "infer")
DSTS = ("before", "after")
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

    Attributes
    ----------
    times, units, n_units, end, unit_names, reasons, start, source
        As above (``unit_names`` and ``reasons`` as tuples or None).

    Examples
    --------
    >>> tr = Trace([10.0, 10.0, 250.0], [3, 1, 3], n_units=8, end=3600.0)
    >>> tr
    Trace(3 events, 8 units, 2 failed, end=3600 s)
    >>> tr.failures_per_unit().tolist()
    [0, 1, 0, 2, 0, 0, 0, 0]
    """

    __slots__ = ("times", "units", "n_units", "end", "unit_names", "reasons", "start", "source")

    def __init__(self, times, units, *, n_units=None, end=None, unit_names=None, reasons=None,
                 start=None, source=None):
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
        t.setflags(write=False)
        u.setflags(write=False)
        for name, value in (("times", t), ("units", u), ("n_units", n), ("end", e), ("unit_names", unit_names),
                            ("reasons", reasons), ("start", start), ("source", source)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Trace is immutable (cannot set {name!r})")

    def __reduce__(self):
        # pickled to worker processes with the scenarios replaying it: rebuilt (and checked)
        # through the constructor, since the default slot restore would call __setattr__
        return _rebuild, (self.times, self.units, self.n_units, self.end, self.unit_names, self.reasons, self.start,
                          self.source)

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

    def __eq__(self, other):
        if not isinstance(other, Trace):
            return NotImplemented
        return (np.array_equal(self.times, other.times) and np.array_equal(self.units, other.units)
                and (self.n_units, self.end, self.unit_names, self.reasons, self.start, self.source)
                == (other.n_units, other.end, other.unit_names, other.reasons, other.start, other.source))

    __hash__ = None

    def __repr__(self):
        failed = int(np.count_nonzero(self.failures_per_unit()))
        extra = "" if self.start is None else f", start={self.start.isoformat()}"
        return (f"Trace({self.n_events} events, {self.n_units} units, {failed} failed, "
                f"end={self.end:g} s{extra})")


# ---------------------------------------------------------------------------------------
# reading


def _rebuild(times, units, n_units, end, unit_names, reasons, start, source) -> Trace:
    return Trace(times, units, n_units=n_units, end=end, unit_names=unit_names, reasons=reasons, start=start,
                 source=source)


def read_trace(path, *, time_column="time", unit_column="unit", reason_column=None,
               time_format="auto", time_unit="s", tz=None, units="auto", unit_map=None,
               n_units=None, start=None, end=None, sort=False, header="auto", delimiter=",",
               fold=None, dst=None):
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
    time_format : {"auto", "seconds", "epoch", "iso"}, keyword-only
        ``"seconds"``: numbers, already relative to the trace's origin (they must be
        >= 0). ``"epoch"``: numbers, Unix time. ``"iso"``: ISO 8601 datetimes, with or
        without a UTC offset (``Z`` accepted). ``"auto"`` (default): numbers are
        ``"seconds"``, text is ``"iso"`` (an epoch column is never guessed). A Parquet
        timestamp column is always absolute.
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
        For absolute times: the instant of time 0 (a datetime, an ISO string or epoch
        seconds), e.g. the job's start; no failure may precede it. Default: the first
        failure (which then sits at time 0).
    end : datetime.datetime or str or float, optional, keyword-only
        End of the observation window: for absolute times an instant like ``start``, for
        ``"seconds"`` traces a number of seconds. Default: the last failure.
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

    Returns
    -------
    Trace

    Raises
    ------
    TraceFormatError
        A :class:`ValueError` naming the file, line (or Parquet row) and rule: missing
        column, short row, empty or unparseable time, negative time (``"seconds"``) or
        time before ``start``, times going backwards (``sort=False``), mixed time formats
        or time zones, an ambiguous or nonexistent local time (without ``fold``/``dst``),
        unit id not an integer / negative / beyond int64, host missing from ``unit_map``,
        no failure rows at all.
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
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"trace path must be a str or os.PathLike, got {type(path).__name__}")
    spath = os.fspath(path)
    opts = _options(time_column, unit_column, reason_column, time_format, time_unit, tz, units,
                    unit_map, n_units, sort, header, delimiter, fold, dst)
    if spath.lower().endswith((".parquet", ".pq")):
        cols = _read_parquet(spath, opts)
        where = "row"
    else:
        cols = _read_csv(spath, opts)
        where = "line"
    return _assemble(spath, where, cols, opts, start, end)


def _options(time_column, unit_column, reason_column, time_format, time_unit, tz, units, unit_map,
             n_units, sort, header, delimiter, fold=None, dst=None) -> dict:
    """Validate every option before the file is opened."""
    for name, col in (("time_column", time_column), ("unit_column", unit_column), ("reason_column", reason_column)):
        if col is None and name == "reason_column":
            continue
        if isinstance(col, bool) or not isinstance(col, (str, int, np.integer)):
            raise TypeError(f"{name} must be a column name (str) or a 0-based position (int), got {col!r}")
        if not isinstance(col, str) and col < 0:
            raise ValueError(f"{name} must be a position >= 0, got {col}")
    check_choice(time_format, "time_format", TIME_FORMATS)
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
    return dict(time=time_column, unit=unit_column, reason=reason_column, time_format=time_format,
                scale=TIME_UNITS[time_unit], tz=tzinfo, units=units, map=mapping, map_names=map_names,
                n_units=n_units, sort=bool(sort), header=header, delimiter=delimiter,
                local=(tzinfo, fold, dst))


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
    named = any(isinstance(c, str) for c in cols.values())
    out = {k: [] for k in cols}
    lines = []
    idx = None
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
                        continue
                    idx = {k: c for k, c in cols.items() if c is not None}
                    if opts["header"] == "auto" and all(c < len(row) and _looks_like_name(row[c]) for c in idx.values()):
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
                lines.append(ln)
        except csv.Error as exc:
            raise TraceFormatError(path, reader.line_num, f"not valid CSV ({exc})") from None
        except UnicodeDecodeError as exc:
            raise TraceFormatError(path, None, f"not UTF-8 text ({exc.reason}); is it a Parquet file "
                                               f"without a .parquet suffix?") from None
    if not lines:
        raise TraceFormatError(path, None, "no failure rows (the file is empty or has only a header/comments)")
    return {"time": out["time"], "unit": out["unit"], "reason": out["reason"] if cols["reason"] is not None else None,
            "lines": np.asarray(lines, dtype=np.int64)}


def _read_log(path):
    """The log's bytes (:func:`spare_core._files.read_input`: a regular file, at most
    :data:`~spare_core._files.MAX_LOG_BYTES`)."""
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
                raise TraceFormatError(path, ln, f"missing {k} column {c!r}; the header has {hdr}")
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
    table = _bounded_parquet_table(path, data, pf, sorted(set(wanted.values())))
    if table.num_rows == 0:
        raise TraceFormatError(path, None, "no failure rows (the table is empty)")
    out = {"lines": np.arange(1, table.num_rows + 1, dtype=np.int64), "reason": None}
    for k, name in wanted.items():
        col = table.column(name).combine_chunks()
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


def _assemble(path, where, cols, opts, start, end):
    lines = cols["lines"]

    def err(i, rule):
        return TraceFormatError(path, None if i is None else int(lines[i]), rule, where=where)

    times, absolute = _parse_times(cols["time"], opts, err)
    if absolute:  # int64 microseconds since the epoch
        # default origin: the earliest failure (the first one once sorted)
        origin = int(times.min()) if start is None else _instant_us(start, "start", opts["local"], path)
        if times.size and origin > times.min():
            i = int(np.argmin(times))
            raise err(i, f"failure at {_fmt_us(int(times[i]))} precedes start {_fmt_us(origin)}")
        rel = (times - origin) / 1e6
        start_dt = _EPOCH + _dt.timedelta(microseconds=origin)
        end_s = None if end is None else (_instant_us(end, "end", opts["local"], path) - origin) / 1e6
    else:
        if start is not None:
            raise TypeError("start is only for absolute times (epoch or ISO); 'seconds' traces start at 0")
        rel, start_dt = times, None
        end_s = None if end is None else _seconds(end, "end", path)
        bad = np.flatnonzero(rel < 0)
        if bad.size:
            raise err(int(bad[0]), f"time {rel[bad[0]]:g} is negative; 'seconds' times count from the "
                                   "trace's origin (use time_format='epoch' for Unix times)")
    order = None
    back = np.flatnonzero(np.diff(rel) < 0)
    if back.size:
        if not opts["sort"]:
            i = int(back[0])
            raise err(i + 1, f"time goes backwards ({rel[i + 1]:g} s after {rel[i]:g} s on {where} "
                             f"{int(lines[i])}); the log must be sorted by time, or pass sort=True")
        order = np.argsort(rel, kind="stable")
        rel = rel[order]
    units, names, n_units = _parse_units(cols["unit"], opts, err)
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
    last = float(rel[-1])
    if end_s is not None and end_s < last:
        raise TraceFormatError(path, None, f"end ({end_s:g} s after the origin) is before the last failure ({last:g} s)")
    return Trace(rel, units, n_units=n_units, end=end_s, unit_names=names, reasons=reasons,
                 start=start_dt, source=path)


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
        if fmt == "iso":
            raise err(None, "time_format='iso' but the time column is numeric")
        fmt = "seconds" if fmt == "auto" else fmt
        vals = arr.astype(np.float64)
        _check_finite(vals, err)
        return _numeric(vals, fmt, opts["scale"], err)
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


def _instant_us(value, name, local, path) -> int:
    try:
        if isinstance(value, str):
            p = _parse_iso(value, local) if value.strip() else None
            if p is None:
                raise ValueError(f"{name} must be an ISO 8601 datetime, got {value!r}")
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
    """``(int64 ids, names by id or None, n_units)``."""
    mapping = opts["map"]
    if isinstance(col, tuple):  # Parquet numeric column
        arr = col[1]
        if mapping is not None or opts["units"] == "names":
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
            return ids, None, int(ids.max()) + 1
    kind = opts["units"]
    if mapping is not None:
        kind = "names"
    elif kind == "auto":
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
        return ids, None, int(ids.max()) + 1
    names = [c.strip() for c in col]
    if mapping is not None:
        ids = np.empty(len(names), dtype=np.int64)
        for i, s in enumerate(names):
            v = mapping.get(s)
            if v is None:
                raise err(i, f"host {s!r} is not in unit_map ({len(mapping)} hosts)")
            ids[i] = v
        return ids, opts["map_names"], max(mapping.values()) + 1
    seen: dict[str, int] = {}
    ids = np.empty(len(names), dtype=np.int64)
    for i, s in enumerate(names):
        if not s:
            raise err(i, "empty unit cell")
        ids[i] = seen.setdefault(s, len(seen))
    return ids, tuple(seen), len(seen)
