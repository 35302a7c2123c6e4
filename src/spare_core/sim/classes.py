"""Failure classes: what an interruption needs, and how long it takes to notice it.

A file's failure process is split into classes (``[[failures.classes]]``) by *thinning*: every
failure the run's failure source hands out gets a class from a seeded draw of its own
(stream ``"failure-classes"`` under the run's failure seed, one counter block per epoch), so
the failures' times and groups are those of the file without classes, bit for bit, and the
class of the i-th failure of epoch k is the same for every policy run on the seed.

A class says how the job recovers (``recovery``) and how long the fault goes unnoticed
(``detect``):

* ``"swap"``: today's failure. A node fails, is replaced (through ``[repair]`` when given),
  and SPARe, replication and elastic training may mask it (``masked = true``, the default);
  ``masked = false`` makes every strategy restart on it, the node still replaced.
* ``"restart"``: a job-wide fault (a software bug, a transient network error). Every rank
  restarts; no node is replaced, no spare is taken, no group goes out, and no strategy can
  mask it (``masked`` must be false). The job restarts from the in-memory tier when it has
  one (host memory survives a software fault, so the snapshot is still everywhere), else
  from the persistent checkpoint.
* ``"domain"``: many nodes at once (a switch, a rack): the failure takes every group of its
  domain that is in the job, at the same instant (``groups`` contiguous groups per domain; group
  ``g`` is in domain ``g // groups``), as a ``[[failures.domains]]`` event does
  (:class:`spare_core.events.DomainFailures`): one event of several consecutive failures with
  equal times, the drawn failure's group first, then the domain's other groups in increasing
  order. The class's share counts events (one switch failure is one interruption). Each group it
  takes is out as a swapped group is (replaced through ``[repair]`` when given, else back at the
  next restart); SPARe, replication and elastic may mask the event (``masked = true``, the
  default) when their redundancy covers every group it takes; ``masked = false`` restarts every
  strategy at the event's first group. Its ``detect`` is counted once per event.

``detect`` is lost whatever the strategy: a restart costs ``detect + restart``, a masked
failure stalls the step by ``detect`` before it is masked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._seeding import epoch_stream, stream_rng
from ..distributions import Distribution, Exponential, LogNormal, Weibull

__all__ = ["FailureClass", "FailureClasses", "ClassDraws", "DomainEpochs", "LogClassDraws", "RECOVERIES"]

#: the recoveries a class may name
RECOVERIES = ("restart", "swap", "domain")
#: shares must add up to 1 within this
SHARE_TOLERANCE = 1e-9
_MIN_DRAWS = 16  # rows drawn for an epoch past its first failure
_MIN_FIRST = 64  # epochs' first failures drawn at once at least (then twice as many as so far)


def _detect_law(detect) -> Distribution | float:
    if isinstance(detect, Distribution):
        if not isinstance(detect, (Exponential, Weibull, LogNormal)):
            raise ValueError(f"detect: a law must be exponential, weibull or lognormal, got {detect!r}")
        return detect
    if isinstance(detect, bool) or not isinstance(detect, (int, float, np.integer, np.floating)):
        raise TypeError(f"detect must be seconds or an Exponential, Weibull or LogNormal law, got "
                        f"{type(detect).__name__} {detect!r}")
    d = float(detect)
    if not (d >= 0.0 and math.isfinite(d)):
        raise ValueError(f"detect must be finite seconds >= 0, got {detect!r}")
    return d


@dataclass(frozen=True)
class FailureClass:
    """One class of interruptions.

    Parameters
    ----------
    name : str
        Named in messages and outputs.
    share : float
        Fraction of the failure rate, in [0, 1].
    recovery : {"restart", "swap", "domain"}
        What the job does (module docstring).
    detect : float or Distribution, default 0
        Seconds from the fault to its detection, or a law of them (Exponential, Weibull,
        LogNormal), drawn per failure.
    masked : bool, optional
        Whether SPARe, replication and elastic training may mask it: default True for
        ``"swap"`` and ``"domain"``; must be False for ``"restart"`` (it hits every rank).
    groups : int, optional
        ``"domain"`` only, and required there: the groups of one domain (contiguous: group
        ``g`` is in domain ``g // groups``; a scenario file gives the domain's ``nodes``).
    values : tuple of str, optional
        With a replayed failure log (``TraceReplay`` whose trace has ``reasons``): the log's
        cause values that are this class's failures, compared as text with blanks stripped;
        ``("*",)``: every value no other class lists. A replayed row's class is then its
        value's, not a draw (:class:`LogClassDraws`); the share is only read for failures that
        are not the log's rows (``after = "fit"``'s continuation) and by the closed forms.
    """

    name: str
    share: float
    recovery: str
    detect: object = 0.0
    masked: bool | None = None
    groups: int | None = None
    values: tuple | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"a failure class's name must be a non-empty str, got {self.name!r}")
        if isinstance(self.share, bool) or not isinstance(self.share, (int, float, np.integer, np.floating)) \
                or not 0.0 <= float(self.share) <= 1.0:
            raise ValueError(f"class {self.name!r}: share must be a number in [0, 1], got {self.share!r}")
        object.__setattr__(self, "share", float(self.share))
        if self.recovery not in RECOVERIES:
            raise ValueError(f"class {self.name!r}: recovery must be one of {list(RECOVERIES)}, got {self.recovery!r}")
        if self.recovery == "domain":
            g = self.groups
            if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1:
                raise ValueError(f"class {self.name!r}: recovery = \"domain\" needs groups, the groups of one domain "
                                 f"(an int >= 1), got {g!r}")
            object.__setattr__(self, "groups", int(g))
        elif self.groups is not None:
            raise ValueError(f"class {self.name!r}: groups only goes with recovery = \"domain\", got "
                             f"recovery = {self.recovery!r}")
        if self.masked is not None and not isinstance(self.masked, (bool, np.bool_)):
            raise TypeError(f"class {self.name!r}: masked must be a bool, got {self.masked!r}")
        masked = (self.recovery != "restart") if self.masked is None else bool(self.masked)
        if masked and self.recovery == "restart":
            raise ValueError(f"class {self.name!r}: masked = true cannot go with recovery = \"restart\": a job-wide "
                             "fault hits every rank, no redundancy masks it")
        object.__setattr__(self, "masked", masked)
        if self.values is not None:
            v = self.values
            if isinstance(v, str) or not all(isinstance(x, str) for x in v) or not len(v):
                raise TypeError(f"class {self.name!r}: values must be a non-empty list of str (a log's cause values, "
                                f"or [\"*\"]), got {v!r}")
            v = tuple(x.strip() for x in v)
            if "*" in v and len(v) > 1:
                raise ValueError(f"class {self.name!r}: values = [\"*\"] (every value no other class lists) goes "
                                 f"alone, got {list(v)}")
            object.__setattr__(self, "values", v)
        try:
            object.__setattr__(self, "detect", _detect_law(self.detect))
        except (TypeError, ValueError) as e:
            raise type(e)(f"class {self.name!r}: {e}") from None

    @property
    def job_wide(self) -> bool:
        """A fault of the whole job: no node is replaced."""
        return self.recovery == "restart"

    @property
    def domain(self) -> bool:
        """A fault of a whole domain: every group of it in the job at once."""
        return self.recovery == "domain"

    def to_dict(self) -> dict:
        d = self.detect
        out = {"name": self.name, "share": self.share, "recovery": self.recovery,
               "detect": d if isinstance(d, float) else d.to_dict(), "masked": self.masked}
        if self.groups is not None:  # absent for the other classes: their dicts as before
            out["groups"] = self.groups
        if self.values is not None:
            out["values"] = list(self.values)
        return out


@dataclass(frozen=True)
class FailureClasses:
    """The classes of a failure process: shares of its rate that add up to 1.

    Parameters
    ----------
    classes : tuple of FailureClass
        At least one, names distinct, shares summing to 1 within ``1e-9``.
    """

    classes: tuple

    def __post_init__(self):
        cl = tuple(self.classes)
        if not cl:
            raise ValueError("failure classes: give at least one class")
        for c in cl:
            if not isinstance(c, FailureClass):
                raise TypeError(f"failure classes must be FailureClass objects, got {type(c).__name__}")
        names = [c.name for c in cl]
        if len(set(names)) != len(names):
            raise ValueError(f"failure classes: names must be distinct, got {names}")
        total = math.fsum(c.share for c in cl)
        if abs(total - 1.0) > SHARE_TOLERANCE:
            raise ValueError(f"failure classes: the shares must add up to 1 (within {SHARE_TOLERANCE:g}), got "
                             f"{total!r} ({', '.join(f'{c.name} {c.share:g}' for c in cl)})")
        if len(cl) > 127:
            raise ValueError(f"failure classes: at most 127 classes, got {len(cl)}")
        listed = [c for c in cl if c.values is not None]
        if listed and len(listed) != len(cl):
            raise ValueError(f"failure classes: give values to every class or to none (a log's rows map to classes by "
                             f"value), missing on {[c.name for c in cl if c.values is None]}")
        seen = {}
        for c in listed:
            for v in c.values:
                if v in seen:
                    raise ValueError(f"failure classes: value {v!r} is listed by {seen[v]!r} and {c.name!r}")
                seen[v] = c.name
        object.__setattr__(self, "classes", cl)

    @classmethod
    def from_dict(cls, data) -> "FailureClasses":
        """The classes written by :meth:`to_dict` (a list of class dicts)."""
        from ..distributions import distribution_from_dict

        if not isinstance(data, (list, tuple)):
            raise TypeError(f"failure classes must be a list of class dicts, got {type(data).__name__}")
        out = []
        for d in data:
            d = dict(d)
            det = d.get("detect", 0.0)
            if isinstance(det, dict):
                d["detect"] = distribution_from_dict(det)
            out.append(FailureClass(**d))
        return cls(tuple(out))

    def to_dict(self) -> list:
        return [c.to_dict() for c in self.classes]

    def __len__(self) -> int:
        return len(self.classes)

    @property
    def names(self) -> tuple:
        return tuple(c.name for c in self.classes)

    @property
    def restart_share(self) -> float:
        """The share of the job-wide (``"restart"``) classes."""
        return math.fsum(c.share for c in self.classes if c.job_wide)

    @property
    def by_value(self) -> bool:
        """Whether the classes map a failure log's cause values (``values``)."""
        return self.classes[0].values is not None

    def row_classes(self, reasons) -> np.ndarray:
        """The class (int8 index) of each row of a log whose cause column holds ``reasons``
        (one str per row, compared with blanks stripped). A value no class lists goes to the
        class of ``values = ["*"]``; without one it is an error naming the values and their
        row counts. Vectorised (one ``numpy.unique`` over the rows)."""
        if not self.by_value:
            raise ValueError("failure classes: no class lists values, so no log row maps to one")
        r = np.char.strip(np.asarray(reasons, dtype=str)) if len(reasons) else np.zeros(0, dtype=str)
        uniq, inv = np.unique(r, return_inverse=True)
        table = {v: i for i, c in enumerate(self.classes) for v in c.values if v != "*"}
        star = next((i for i, c in enumerate(self.classes) if c.values == ("*",)), -1)
        of = np.array([table.get(str(u), star) for u in uniq], dtype=np.int64)
        if (of < 0).any():
            counts = np.bincount(inv, minlength=uniq.shape[0])
            miss = [(str(u), int(n)) for u, n, o in zip(uniq, counts, of) if o < 0]
            words = ", ".join(f"{v!r} ({n:,} row{'s' if n != 1 else ''})" for v, n in miss[:12])
            raise ValueError(f"failure classes: the log's cause values {words}{' ...' if len(miss) > 12 else ''} are "
                             f"listed by no class (add them to a class's values, or give a class values = [\"*\"])")
        return of[inv].astype(np.int8).reshape(-1)

    def log_shares(self, reasons) -> tuple:
        """Each class's share of a log's rows (its rows over all rows; ``row_classes``)."""
        cls = self.row_classes(reasons)
        if cls.shape[0] == 0:
            raise ValueError("failure classes: the log has no rows to count the classes' shares on")
        n = np.bincount(cls, minlength=len(self.classes))
        return tuple(float(x) / cls.shape[0] for x in n)

    @property
    def has_domains(self) -> bool:
        """Whether a class takes a whole domain (``recovery = "domain"``)."""
        return any(c.domain for c in self.classes)

    def spares_per_failure(self, n_groups: int) -> float:
        """Groups a failure takes out, on average over the classes (a job-wide one 0, a swap
        1, a domain one its domain's groups, at most ``n_groups``), all of them in the job:
        the spare pool's load per failure with ``[repair]``."""
        return math.fsum(c.share * (0 if c.job_wide else (min(c.groups, n_groups) if c.domain else 1))
                         for c in self.classes)

    @property
    def forced_share(self) -> float:
        """The share of the classes no strategy masks (job-wide ones and unmasked swaps)."""
        return math.fsum(c.share for c in self.classes if not c.masked)

    def draws(self, failures_seed: np.random.SeedSequence) -> "ClassDraws":
        """The per-failure classes and detection times of a run whose failures come from
        ``failures_seed`` (``run_seed(seed, "failures")``)."""
        return ClassDraws(self, failures_seed)

    def describe(self) -> str:
        parts = []
        for c in self.classes:
            d = c.detect
            det = "" if d == 0.0 else (f", detect {d:g} s" if isinstance(d, float) else f", detect {d!r}")
            dom = f" of {c.groups} groups" if c.domain else ""
            parts.append(f"{c.name} {100 * c.share:.3g} % {c.recovery}{dom}{'' if c.masked or c.job_wide else ' unmasked'}"
                         f"{det}")
        return "; ".join(parts)


class ClassDraws:
    """The class and detection time of each failure of a run, by (epoch, index in the epoch).

    Each failure reads a row of two uniforms: column 0 picks the class (by the cumulative
    shares), column 1 is the detection law's uniform (inverse cumulative hazard). The first
    failure of epoch ``k`` reads row ``k`` of one sequential stream (``"failure-classes-first"``),
    so the first failures of many epochs are drawn at once (the compiled restart loop of
    checkpoint-only, one failure per epoch, gets them as arrays); failure ``i >= 1`` of epoch
    ``k`` reads row ``i - 1`` of the ``"failure-classes"`` stream's counter block ``k``
    (:class:`spare_core._seeding.EpochStream`). Rows do not depend on how many are drawn, so
    the fast path (which reads an epoch in growing batches) and the reference (one failure at a
    time) see the same numbers. Shared by :func:`spare_core.sim.simulate` and the reference
    simulator, as :class:`spare_core.sim.run.StepMultipliers` is.
    """

    __slots__ = ("classes", "_stream", "_first_rng", "_first", "_cum", "_forced", "_wide", "_flags", "_key",
                 "_cls", "_det", "_const", "_laws", "dom_groups", "_u")

    def __init__(self, classes: FailureClasses, failures_seed):
        self.classes = classes
        self._stream = epoch_stream(failures_seed, "failure-classes")
        self._first_rng = stream_rng(failures_seed, "failure-classes-first")
        self._first = np.zeros((0, 2))  # the rows of the epochs' first failures drawn so far
        shares = np.array([c.share for c in classes.classes])
        self._cum = np.cumsum(shares)[:-1]
        self._forced = np.array([not c.masked for c in classes.classes])
        self._wide = np.array([c.job_wide for c in classes.classes])
        # per class: 1 no strategy masks it, 2 job-wide (what the compiled restart loop reads)
        self._flags = (self._forced.astype(np.int8) + 2 * self._wide.astype(np.int8)).astype(np.int8)
        self._key = None
        self._cls = self._det = None
        self._const = np.array([c.detect if isinstance(c.detect, float) else 0.0 for c in classes.classes])
        self._laws = [(i, c.detect) for i, c in enumerate(classes.classes) if not isinstance(c.detect, float)]
        # per class: the groups of its domain (0: not a domain class), read by DomainEpochs
        self.dom_groups = np.array([c.groups if c.domain else 0 for c in classes.classes], dtype=np.int64)

    def _classify(self, u: np.ndarray):
        cls = np.searchsorted(self._cum, u[:, 0], side="right").astype(np.int8)
        return cls, self.detection(cls, u[:, 1])

    def detection(self, cls: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The detection seconds of failures of classes ``cls`` whose detection uniforms are ``u``."""
        det = self._const[cls]
        for i, law in self._laws:
            pick = cls == i
            if pick.any():
                det[pick] = law.inverse_cumulative_hazard(-np.log1p(-u[pick]))
        return det

    def _first_rows(self, k0: int, n: int) -> np.ndarray:
        """Rows ``k0 .. k0 + n - 1`` of the first failures' stream (drawn on, in order)."""
        have = self._first.shape[0]
        if k0 + n > have:
            more = max(k0 + n - have, have, _MIN_FIRST)
            self._first = np.concatenate([self._first, self._first_rng.random((more, 2))])
        return self._first[k0 : k0 + n]

    def at(self, k: int, n: int):
        """Classes (int8 indices into ``classes.classes``) and detection seconds of the first
        ``n`` or more failures of epoch ``k``: two arrays of one length >= n."""
        if self._key == k and self._cls.shape[0] >= n:
            return self._cls, self._det
        k = int(k)
        if n <= 1 and self._key != k:
            u = self._first_rows(k, 1)
        else:
            m = max(_MIN_DRAWS, n, 0 if self._key != k else 2 * self._cls.shape[0])
            u = np.concatenate([self._first_rows(k, 1), self._stream.at(k).random((m - 1, 2))])
        cls, det = self._classify(u)
        self._key, self._cls, self._det, self._u = k, cls, det, u[:, 1]
        return cls, det

    def uniforms(self, k: int) -> np.ndarray:
        """The detection uniforms of the rows :meth:`at` handed out last for epoch ``k``."""
        if self._key != k:
            raise RuntimeError("ClassDraws.uniforms: call at() for the epoch first")
        return self._u

    def first(self, k0: int, n: int):
        """The first failures of epochs ``k0 .. k0 + n - 1``: their flags (1: no strategy masks
        it, 2: job-wide; int8) and detection seconds, as the compiled restart loop reads them."""
        cls, det = self._classify(self._first_rows(int(k0), int(n)))
        return self._flags[cls], det

    def forced(self, cls: np.ndarray) -> np.ndarray:
        """Whether each class index restarts every strategy (not masked)."""
        return self._forced[cls]

    def job_wide(self, c: int) -> bool:
        return bool(self._wide[c])

    def job_wide_mask(self) -> np.ndarray:
        """Per class index: whether it is a job-wide fault (read by DomainEpochs)."""
        return self._wide


class DomainEpochs:
    """A run's failure source with its domain-class failures turned into domain events, and
    the classes of those events: what the batch loop reads in place of the source and of the
    :class:`ClassDraws` when a class has ``recovery = "domain"``.

    Failure ``i`` of the wrapped source's epoch ``k`` gets its class from row ``i`` of the
    draws, as without domain classes. A failure of a domain class becomes one event: a failure
    of its own group, then one of every other group of its domain (increasing order), all at its
    time. Without ``[repair]`` (``every`` false: the source hands out each group's first failure
    of the epoch) a copy of a group already down is dropped, and so is a group's own failure
    after an event took it: each group's first failure of the epoch stays the only one, as an
    epoch source's contract says, except a job-wide fault's own failure, which reaches the job
    from a group out of it (as the repair book lets it with ``[repair]``). With ``[repair]`` (``every``: every failure of the log) nothing
    is dropped here: the repair book drops the failures of groups out of the job, an event's
    copies among them.

    Every copy carries its event's class and detection seconds; :meth:`once` keeps the detection
    on the first copy that reaches the job only. The events of an epoch's first failures do not
    depend on how far the epoch is read (failure ``i``'s copies depend on failures ``0 .. i``),
    so growing batches see one sequence. Vectorised per read (no per-event Python).

    Parameters
    ----------
    source : EpochSource
    draws : ClassDraws
    n_groups : int
        The job's groups (the last domain may be partial).
    every : bool
        Whether ``source`` hands out every failure of the log (a run with ``[repair]``).
    """

    def __init__(self, source, draws: ClassDraws, n_groups: int, every: bool):
        self._src, self._draws = source, draws
        self._n, self._every = int(n_groups), bool(every)
        self._dg = draws.dom_groups
        self._key = None
        self._charged = -1  # the event whose detection the run has charged last (this epoch)
        if hasattr(source, "epoch_consumed"):
            self.epoch_consumed = self._consumed

    def _fill(self, k: int, start, need: int) -> None:
        if self._key != (k, start):
            self._key, self._raw, self._done, self._charged = (k, start), 0, False, -1
            self._set(np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8), np.zeros(0),
                      np.zeros(0, dtype=np.int64))
        while self._rel.shape[0] < need and not self._done:
            # as many more rows as events are missing (an event adds copies, a drop removes one),
            # and a few ahead: the next batch is then mostly read already (a read costs more
            # than its rows)
            want = max(need, self._raw + need - self._rel.shape[0]) + _MIN_DRAWS
            rel, units = self._src.get(k, want, start=start)
            n = rel.shape[0]
            self._done = n < want or n == self._raw
            cls, det = self._draws.at(k, n)
            self._expand(rel[:n], np.asarray(units[:n], dtype=np.int64), cls[:n], det[:n])
            self._raw = n

    def _set(self, rel, units, cls, det, ev) -> None:
        for a in (rel, units, cls, det, ev):
            a.flags.writeable = False
        self._rel, self._units, self._cls, self._det, self._ev = rel, units, cls, det, ev

    def _expand(self, rel, units, cls, det) -> None:
        n = rel.shape[0]
        dg = self._dg[cls]
        dom = dg > 0
        if not dom.any():
            self._set(rel.copy(), units.copy(), cls.copy(), det.copy(), np.arange(n, dtype=np.int64))
            return
        lo = np.where(dom, (units // np.maximum(dg, 1)) * dg, units)
        size = np.where(dom, np.minimum(dg, self._n - lo), 1)
        ev = np.repeat(np.arange(n, dtype=np.int64), size)
        o = np.arange(ev.shape[0]) - np.repeat(np.cumsum(size) - size, size)
        g = units[ev]
        cand = lo[ev] + o - 1  # copy o >= 1: the domain's o-th group other than the failure's own
        members = np.where(o == 0, g, np.where(cand < g, cand, cand + 1))
        if not self._every:
            # each group's first failure of the epoch only: an event takes the groups still up
            _, first = np.unique(members, return_index=True)
            keep = np.zeros(members.shape[0], dtype=bool)
            keep[first] = True
            # but a job-wide fault still reaches the job from a group an event took (as it does
            # from any group out of the job): its own failure, not a copy
            keep |= (o == 0) & self._draws.job_wide_mask()[cls[ev]]
            ev, members = ev[keep], members[keep]
        self._set(rel[ev], members, cls[ev], det[ev], ev)

    # -- the EpochSource methods ---------------------------------------------------------------
    def get(self, k: int, need: int, want: int = 0, *, start):
        self._fill(k, start, max(need, want))
        return self._rel, self._units

    def times(self, k: int, need: int, want: int = 0, *, start):
        return self.get(k, need, want, start=start)[0]

    def next_time(self, k: int, i: int, *, start) -> float:
        self._fill(k, start, i + 1)
        return float(self._rel[i]) if i < self._rel.shape[0] else math.inf

    def _consumed(self, k: int, pos: int) -> None:
        # the wrapped source counts its own failures: an event's copies are one of them
        self._src.epoch_consumed(k, int(self._ev[pos - 1]) + 1 if pos else 0)

    # -- the ClassDraws methods the batch loop reads -------------------------------------------
    def at(self, k: int, n: int):
        """Classes and detection seconds of the events read of epoch ``k`` (after :meth:`get`)."""
        if self._key is None or self._key[0] != k:
            raise RuntimeError("DomainEpochs.at: read the epoch with get() first")
        return self._cls, self._det

    def forced(self, cls: np.ndarray) -> np.ndarray:
        return self._draws.forced(cls)

    def job_wide(self, c: int) -> bool:
        return self._draws.job_wide(c)

    def once(self, idx: np.ndarray, fails: np.ndarray, det: np.ndarray) -> np.ndarray:
        """``det`` (the detection of the events at indices ``idx``, in order) with an event's
        detection kept on its first failure the run meets: 0 on the other copies of an event
        (``fails`` marks the failures among the events; a rejoin's detection is 0 already)."""
        fi = np.flatnonzero(fails)
        if fi.size == 0:
            return det
        e = self._ev[idx[fi]]
        again = np.empty(fi.size, dtype=bool)
        again[0] = e[0] == self._charged
        again[1:] = e[1:] == e[:-1]
        if not again.any():
            return det
        out = np.array(det, dtype=np.float64)
        out[fi[again]] = 0.0
        return out

    def commit(self, idx: np.ndarray, fails: np.ndarray) -> None:
        """The run consumed the events at indices ``idx`` (``fails``: which are failures)."""
        fi = np.flatnonzero(fails)
        if fi.size:
            self._charged = int(self._ev[idx[fi[-1]]])


class LogClassDraws:
    """The classes of a replayed log's failures: a row's class is its cause value's
    (:meth:`FailureClasses.row_classes`), in place of the draw; a failure that is no row of the
    log (``after = "fit"``'s continuation) keeps its drawn class. Detection is drawn as without
    the log (the uniform of row ``i`` of epoch ``k``), by the row's class's law.

    Parameters
    ----------
    draws : ClassDraws
    row_class : ndarray of int8
        The class of each row of the log (``TraceReplay.trace``'s order).
    rows : callable
        ``rows(k)``: the log rows (int64, -1: not a row) of the failures the run's source has
        handed out in epoch ``k`` so far, in order (``RunFailures.rows``,
        ``TraceProcess.handed_rows``).
    """

    __slots__ = ("_draws", "_row_class", "_rows", "_key", "_cls", "_det", "dom_groups")

    def __init__(self, draws: ClassDraws, row_class: np.ndarray, rows):
        self._draws, self._row_class, self._rows = draws, np.asarray(row_class, dtype=np.int8), rows
        self.dom_groups = draws.dom_groups
        self._key = None

    def job_wide_mask(self) -> np.ndarray:
        return self._draws.job_wide_mask()

    def at(self, k: int, n: int):
        cls, det = self._draws.at(k, n)
        rows = self._rows(k)
        m = min(rows.shape[0], cls.shape[0])
        if self._key == (k, m, cls.shape[0]):
            return self._cls, self._det
        r = rows[:m]
        on = r >= 0
        out = cls.copy()
        out[:m][on] = self._row_class[r[on]]
        det = self._draws.detection(out, self._draws.uniforms(k))
        self._key, self._cls, self._det = (k, m, cls.shape[0]), out, det
        return out, det

    def first(self, k0: int, n: int):
        raise NotImplementedError("a replayed log's classes are read by the batch loop")

    def forced(self, cls: np.ndarray) -> np.ndarray:
        return self._draws.forced(cls)

    def job_wide(self, c: int) -> bool:
        return self._draws.job_wide(c)
