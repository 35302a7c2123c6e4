"""Checkpoint intervals: Young, Daly (higher order) and the availability-optimal period.

All times are in seconds. Each function validates its arguments (positive, finite times)
before computing anything.

The availability-optimal period [3]_ maximises the fraction of wall time spent on useful
work when a restart happens on average every ``T_f`` seconds:

    A(T) = (1 - T_s / T) * T_f / (T_f + T_r + T / 2),

where ``T_s`` is the save time, ``T_r`` the restart time and ``T/2`` the expected work lost
per restart (a restart falls on average half-way through a period). Setting
``dA/dT = 0`` gives ``T**2 - 2 T_s T - 2 T_s (T_f + T_r) = 0``, hence

    T_c* = T_s + sqrt(T_s**2 + 2 T_s (T_f + T_r)).

The model assumes at most one restart per period. When ``T_c* > T_f`` a typical period is
interrupted before it ends, ``T/2`` is no longer the expected loss, and the number is
meaningless; :func:`availability_optimal` detects that and says so instead of pretending.

Young's, Daly's and the availability-optimal intervals are three approximations of one
optimum. :func:`best_closed_form` compares them on one exact model, the expected wall time per
unit of work when restarts are exponential with mean ``T_f`` (:func:`expected_segment_time`),
and picks the least; it is what a policy's ``interval = "auto"`` uses. In that model the
restart time multiplies the expected time without moving the optimum, while ``T_c*`` grows
with ``T_r``: where ``T_r`` is not small against ``T_f``, ``T_c*`` is too long.

References
----------
.. [1] J. W. Young, "A first order approximation to the optimum checkpoint interval",
   Communications of the ACM 17(9), 1974.
.. [2] J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
   dumps", Future Generation Computer Systems 22(3), 2006.
.. [3] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357 (checkpoint period of SPARe+CKPT).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ._results import fields_dict
from ._validate import as_float

__all__ = [
    "young_interval",
    "daly_interval",
    "availability",
    "availability_optimal",
    "CheckpointPeriod",
    "expected_segment_time",
    "time_per_work",
    "best_closed_form",
    "ClosedFormPick",
]


def _pos(value, name: str) -> float:
    return as_float(value, name, min_value=0.0, strict_min=True)


def young_interval(save_time, mtbf) -> float:
    """Young's first-order optimal checkpoint interval ``sqrt(2 * save_time * mtbf)``.

    Parameters
    ----------
    save_time : float
        Time to write one checkpoint (delta), seconds, > 0.
    mtbf : float
        Mean time between failures that force a rollback (M), seconds, > 0.

    Returns
    -------
    float
        The compute time between checkpoints, seconds.

    Raises
    ------
    TypeError, ValueError
        Non-numeric, non-finite or non-positive arguments.

    Notes
    -----
    First order in ``save_time / mtbf``; accurate only when the save is much shorter than the
    MTBF. See [1]_ in the module docstring.

    Examples
    --------
    >>> round(young_interval(60.0, 3600.0), 3)
    657.267
    """
    d = _pos(save_time, "save_time")
    m = _pos(mtbf, "mtbf")
    return math.sqrt(2.0 * d * m)


def daly_interval(save_time, mtbf) -> float:
    """Daly's higher-order optimal checkpoint interval.

    ``tau = sqrt(2 d M) * [1 + sqrt(d / 2M) / 3 + (d / 2M) / 9] - d`` for ``d < 2M``,
    and ``tau = M`` otherwise (checkpointing more often than once per MTBF cannot pay off
    when a save costs more than two MTBFs).

    Parameters, return value and errors as in :func:`young_interval` (``d = save_time``,
    ``M = mtbf``).

    Notes
    -----
    Derived for exponential failures with restart, see [2]_ in the module docstring.

    Examples
    --------
    >>> round(daly_interval(60.0, 3600.0), 3)
    617.876
    >>> daly_interval(100.0, 40.0)
    40.0
    """
    d = _pos(save_time, "save_time")
    m = _pos(mtbf, "mtbf")
    if d >= 2.0 * m:
        return m
    x = d / (2.0 * m)
    return math.sqrt(2.0 * d * m) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - d


def availability(period, save_time, restart_time, time_between_restarts) -> float:
    """First-order availability ``(1 - T_s/T) * T_f / (T_f + T_r + T/2)`` of a checkpoint period.

    Parameters
    ----------
    period : float
        Checkpoint period T (work plus save), seconds, must exceed ``save_time``.
    save_time, restart_time, time_between_restarts : float
        T_s, T_r and T_f, seconds; ``save_time`` and ``time_between_restarts`` > 0,
        ``restart_time`` >= 0.

    Returns
    -------
    float
        The modelled fraction of wall time spent on useful work, in (0, 1).

    Raises
    ------
    TypeError, ValueError
        Bad arguments, or ``period <= save_time``.

    Notes
    -----
    The expression from the SPARe paper [3]_ (module docstring); it assumes at most one
    restart per period.

    Examples
    --------
    >>> round(availability(600.0, 60.0, 3600.0, 36000.0), 4)
    0.812
    """
    ts = _pos(save_time, "save_time")
    t = as_float(period, "period")
    if not t > ts:
        raise ValueError(f"period must exceed save_time ({ts}), got {t}")
    tr = as_float(restart_time, "restart_time", min_value=0.0)
    tf = _pos(time_between_restarts, "time_between_restarts")
    return (1.0 - ts / t) * tf / (tf + tr + t / 2.0)


@dataclass(frozen=True)
class CheckpointPeriod:
    """The availability-optimal checkpoint period and whether it means anything.

    Attributes
    ----------
    period : float
        T_c* in seconds (always computed, even when not meaningful).
    availability : float or None
        The modelled availability A(T_c*); None when the period is meaningless.
    meaningful : bool
        False when ``period`` exceeds the mean time between restarts.
    reason : str
        Why the period is (not) meaningful, in words.
    save_time, restart_time, time_between_restarts : float
        The inputs T_s, T_r, T_f.
    """

    period: float
    availability: float | None
    meaningful: bool
    reason: str
    save_time: float
    restart_time: float
    time_between_restarts: float

    def __repr__(self) -> str:
        if self.meaningful:
            return (
                f"CheckpointPeriod(period={self.period:.1f} s, availability={self.availability:.4f}, "
                f"T_f={self.time_between_restarts:.1f} s)"
            )
        return f"CheckpointPeriod(meaningless: {self.reason})"

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict."""
        return fields_dict(self)


def availability_optimal(save_time, restart_time, time_between_restarts) -> CheckpointPeriod:
    """Availability-optimal checkpoint period ``T_c* = T_s + sqrt(T_s^2 + 2 T_s (T_f + T_r))``.

    Parameters
    ----------
    save_time : float
        T_s, time to write one checkpoint, seconds, > 0.
    restart_time : float
        T_r, time of a global restart (reload and resume), seconds, >= 0.
    time_between_restarts : float
        T_f, the mean time between restarts (for SPARe: endurable failures times the system
        MTBF; for checkpoint-only: the system MTBF), seconds, > 0.

    Returns
    -------
    CheckpointPeriod
        ``period`` and ``availability``; ``meaningful`` is False (and ``availability`` None)
        when ``period > time_between_restarts``: the derivation assumes a period usually ends
        before the next restart, so a longer period is an artefact, not an optimum.

    Raises
    ------
    TypeError, ValueError
        Non-numeric, non-finite or out-of-range arguments.

    Notes
    -----
    Maximises the availability of :func:`availability` (SPARe paper [3]_, module docstring).
    O(1).

    Examples
    --------
    The paper's checkpoint-only regime, 60 s saves, 60 min restarts, a failure every 5 min:

    >>> availability_optimal(60.0, 3600.0, 300.0).meaningful
    False
    >>> p = availability_optimal(60.0, 3600.0, 20 * 300.0)
    >>> p.meaningful, round(p.period, 1)
    (True, 1135.0)
    """
    ts = _pos(save_time, "save_time")
    tr = as_float(restart_time, "restart_time", min_value=0.0)
    tf = _pos(time_between_restarts, "time_between_restarts")
    period = ts + math.sqrt(ts * ts + 2.0 * ts * (tf + tr))
    if period > tf:
        return CheckpointPeriod(
            period=period,
            availability=None,
            meaningful=False,
            reason=(
                f"the closed-form period {period:.1f} s exceeds the mean time between restarts "
                f"{tf:.1f} s, so most periods never complete; the formula does not apply"
            ),
            save_time=ts,
            restart_time=tr,
            time_between_restarts=tf,
        )
    return CheckpointPeriod(
        period=period,
        availability=(1.0 - ts / period) * tf / (tf + tr + period / 2.0),
        meaningful=True,
        reason=f"period {period:.1f} s is shorter than the mean time between restarts {tf:.1f} s",
        save_time=ts,
        restart_time=tr,
        time_between_restarts=tf,
    )


def expected_segment_time(work, save_time, restart_time, failure_rate) -> float:
    """Expected wall time to complete ``work`` followed by a save under exponential failures.

    A segment of length ``L = work + save_time`` is retried from its start after every
    failure; each failure costs the time lost plus ``restart_time`` (no failures during a
    restart). For a Poisson failure process of rate ``lambda``:

        E[T] = (1/lambda + T_r) * (exp(lambda * L) - 1).

    Parameters
    ----------
    work : float
        Useful work in the segment, seconds, >= 0.
    save_time : float
        Save time appended to the segment, seconds, >= 0 (0 for the last segment).
    restart_time : float
        T_r, seconds, >= 0.
    failure_rate : float
        lambda, failures per second, > 0.

    Returns
    -------
    float
        Expected wall time, seconds.

    Raises
    ------
    TypeError, ValueError
        Bad arguments.

    Notes
    -----
    The classical expected-waste model for checkpoint/restart (e.g. Daly 2006 [2]_, module
    docstring); the time-to-train of checkpoint-only with exponential lifetimes is a sum of
    such segments, which the tests check the simulator against.

    Examples
    --------
    >>> round(expected_segment_time(100.0, 0.0, 0.0, 1e-9), 3)
    100.0
    """
    w = as_float(work, "work", min_value=0.0)
    ts = as_float(save_time, "save_time", min_value=0.0)
    tr = as_float(restart_time, "restart_time", min_value=0.0)
    lam = _pos(failure_rate, "failure_rate")
    return (1.0 / lam + tr) * math.expm1(lam * (w + ts))


def time_per_work(interval, save_time, restart_time, time_between_restarts) -> float:
    """Expected wall time per unit of useful work when checkpointing every ``interval`` of work.

    ``expected_segment_time(interval, save_time, restart_time, 1 / time_between_restarts) /
    interval``: each segment of ``interval`` work plus a save is retried after every restart,
    restarts exponential with mean ``time_between_restarts``. 1 means no loss at all; ``inf``
    where the expectation overflows a float (a segment far longer than ``T_f``).

    Parameters
    ----------
    interval : float
        Work between saves, seconds, > 0.
    save_time, restart_time, time_between_restarts : float
        T_s >= 0, T_r >= 0, T_f > 0, seconds.

    Returns
    -------
    float
        Wall seconds per second of useful work, >= 1.

    Examples
    --------
    >>> round(time_per_work(600.0, 60.0, 0.0, 1e12), 6)
    1.1
    """
    tau = _pos(interval, "interval")
    tf = _pos(time_between_restarts, "time_between_restarts")
    try:
        return expected_segment_time(tau, save_time, restart_time, 1.0 / tf) / tau
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class ClosedFormPick:
    """The closed-form checkpoint interval with the least expected time, and the others.

    Attributes
    ----------
    seconds : float
        The chosen interval: compute seconds between the end of one save and the next.
    name : str
        Which closed form: ``"Young"``, ``"Daly"`` or ``"T_c*"`` (the availability-optimal
        period minus the save).
    candidates : dict
        Name -> ``(seconds, wall time per unit of work)`` (:func:`time_per_work`) of every
        closed form; ``T_c*`` only where it is meaningful.
    excluded : str
        Why ``T_c*`` is not a candidate ("" when it is).
    time_between_restarts : float
        T_f, seconds.
    """

    seconds: float
    name: str
    candidates: dict
    excluded: str
    time_between_restarts: float

    @property
    def reason(self) -> str:
        """One line: the pick, the model it was judged on, and how much longer the others are."""
        best = self.candidates[self.name][1]
        others = [f"{k} {s:.0f} s {_excess(w, best)}" for k, (s, w) in self.candidates.items() if k != self.name]
        if self.excluded:
            others.append(self.excluded)
        return (f"{self.name} with T_f = {self.time_between_restarts:.0f} s, the closed form with the least "
                f"expected time under exponential restarts ({'; '.join(others)})")

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict (and ``reason``)."""
        return {**fields_dict(self), "reason": self.reason}


def _excess(w: float, best: float) -> str:
    """How much longer a candidate's expected time is than the pick's, in words."""
    if not math.isfinite(w):
        return "never completes"
    pct = 100.0 * (w / best - 1.0)
    if pct < 0.01:
        return "+<0.01 %"
    return f"+{pct:.2g} %" if pct < 100 else f"{w / best:.3g}x the time"


def best_closed_form(save_time, restart_time, time_between_restarts) -> ClosedFormPick:
    """Young's, Daly's or the availability-optimal interval: the one with the least expected
    wall time per unit of work (:func:`time_per_work`).

    The three closed forms approximate one optimum under different assumptions; they are
    judged on one exact model (exponential restarts with mean ``T_f``, a restart costing
    ``T_r``, no restart during a restart). The availability-optimal period is a candidate
    only where it is meaningful (:func:`availability_optimal`: ``T_c* <= T_f``); Young's and
    Daly's always exist, so the pick is never "after every step". Ties go to the earlier of
    Daly, Young, ``T_c*``.

    Parameters
    ----------
    save_time : float
        T_s, seconds, > 0.
    restart_time : float
        T_r, seconds, >= 0.
    time_between_restarts : float
        T_f, the mean time between restarts, seconds, > 0.

    Returns
    -------
    ClosedFormPick

    Raises
    ------
    TypeError, ValueError
        Bad arguments.

    Notes
    -----
    Where the restarts are far from exponential (SPARe's wipe-outs, Weibull shapes far from
    1) the judge is itself an approximation; ``spare advise`` checks the pick with a short
    simulated scan (:func:`spare_core.sim.optimal_interval` does the same from Python).

    Examples
    --------
    The paper's checkpoint-only regime, where T_c* exceeds the time between restarts:

    >>> p = best_closed_form(60.0, 3600.0, 300.0)
    >>> p.name, round(p.seconds), "T_c*" in p.candidates
    ('Daly', 152, False)
    """
    ts = _pos(save_time, "save_time")
    tr = as_float(restart_time, "restart_time", min_value=0.0)
    tf = _pos(time_between_restarts, "time_between_restarts")
    forms = {"Daly": daly_interval(ts, tf), "Young": young_interval(ts, tf)}
    opt = availability_optimal(ts, tr, tf)
    excluded = ""
    if opt.meaningful:
        forms["T_c*"] = opt.period - ts
    else:
        excluded = f"T_c* {opt.period:.0f} s exceeds T_f: not applicable"
    cands = {k: (v, time_per_work(v, ts, tr, tf)) for k, v in forms.items()}
    name = min(cands, key=lambda k: (cands[k][1], list(cands).index(k)))
    return ClosedFormPick(seconds=cands[name][0], name=name, candidates=cands, excluded=excluded,
                          time_between_restarts=tf)
