"""Pacing controllers: the policy that decides, iteration by iteration, how long early
ranks may be held at the gate before the collective.

The mechanism (what a hold does) lives in the simulator: with hold bound ``h > 0`` a
rank that arrives at ``a`` enters the collective at ``min(a + h, last arrival +
release latency)``, never before it arrives and never more than ``h`` after. The
controller only chooses ``h`` for the next iteration from what it observed at the
previous barrier, which is all a real coordination layer between the framework and the
collective library can see [2]_.

Writing your own controller
---------------------------
Any object with these two methods satisfies :class:`PacingController`::

    def reset(self) -> None: ...                       # called once before a run
    def hold(self, last: BarrierObservation | None) -> float: ...

``hold`` is called before every iteration with the previous iteration's observation
(``None`` before the first) and returns the hold bound in seconds (``0`` = do not pace;
finite, ``>= 0``). Such a controller runs through a Python loop (one kernel call per
iteration).

Running in the kernel
---------------------
The kernel knows a few decision rules, its *kernel forms*: :class:`NoHold`,
:class:`SpreadHysteresis` and :class:`BaselineHysteresis`. A controller whose ``hold``
is exactly one of them (the same comparisons in the same order) declares it::

    def kernel_form(self) -> NoHold | SpreadHysteresis | BaselineHysteresis | None: ...

and the simulator runs it inside the kernel, without calling ``hold``, with identical
results (the tests compare both paths, ``use_kernel_controller=False`` forcing the
Python one). Returning None (or having no ``kernel_form``) keeps the Python path. The
built-in controllers declare their forms; a subclass that overrides ``hold`` or
``reset`` loses its parent's form (it returns None) unless it declares its own.

References
----------
.. [2] When Scaling Fails: Network and Fabric Effects on Distributed GPU Training
   Performance, arXiv:2603.04424.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._validate import as_float, as_int

__all__ = ["BarrierObservation", "PacingController", "NoPacing", "SpreadPacer", "BaselinePacer",
           "NoHold", "SpreadHysteresis", "BaselineHysteresis", "KERNEL_FORMS"]


@dataclass(frozen=True)
class BarrierObservation:
    """What a controller sees after one iteration.

    Attributes
    ----------
    iteration : int
        Index of the iteration just finished.
    spread : float
        Arrival spread ``(max - min) / mean`` of the ranks' arrival times.
    iteration_time : float
        Its duration, s.
    arrival_max : float
        Arrival of the slowest rank (from the iteration start), s.
    hold : float
        The hold bound that was applied (0 if not paced).
    """

    iteration: int
    spread: float
    iteration_time: float
    arrival_max: float
    hold: float


@runtime_checkable
class PacingController(Protocol):
    """Protocol of a pacing policy (see the module docstring)."""

    def reset(self) -> None:  # pragma: no cover - protocol
        ...

    def hold(self, last: BarrierObservation | None) -> float:  # pragma: no cover - protocol
        ...


@dataclass(frozen=True)
class NoHold:
    """Kernel form: never hold a rank (the kernel's ``MODE_NONE``)."""


@dataclass(frozen=True)
class SpreadHysteresis:
    """Kernel form: hysteresis on the arrival spread (the kernel's ``MODE_SPREAD``).

    Starts off. The hold of an iteration is ``hold_max`` while on, else 0. After an
    iteration with arrival spread ``s`` (``(max - min) / mean`` of the arrivals):
    off -> on when ``s > threshold_on`` (calm count reset); while on, ``s <
    threshold_off`` adds a calm iteration and ``patience`` of them in a row switch it
    off, any other ``s`` resets the count.

    Parameters
    ----------
    threshold_on, threshold_off : float
        Finite thresholds (any sign: a negative ``threshold_off`` never switches off).
    patience : int
        Calm iterations in a row to switch off (>= 1).
    hold_max : float
        Hold while on, s (finite, >= 0).
    """

    threshold_on: float
    threshold_off: float
    patience: int
    hold_max: float

    def __post_init__(self):
        as_float(self.threshold_on, "threshold_on")
        as_float(self.threshold_off, "threshold_off")
        as_int(self.patience, "patience", min_value=1, max_value=_MAX_PATIENCE)
        as_float(self.hold_max, "hold_max", min_value=0.0)


@dataclass(frozen=True)
class BaselineHysteresis:
    """Kernel form: hysteresis on the collective phase against a clipped running baseline
    with multiplicative back-off of the patience (the kernel's ``MODE_BASELINE``); the
    rule of :class:`BaselinePacer`, whose docstring states it step by step.

    Parameters
    ----------
    threshold_on, threshold_off : float
        Finite thresholds of the relative excess ``x = d / B - 1``.
    patience : int
        Initial calm iterations to switch off (>= 1).
    hold_max : float
        Hold while on, s (finite, >= 0).
    smoothing : float
        Weight of a new phase in the baseline, in (0, 1].
    max_patience : int
        Cap of the backed-off patience (>= patience).
    """

    threshold_on: float
    threshold_off: float
    patience: int
    hold_max: float
    smoothing: float
    max_patience: int

    def __post_init__(self):
        as_float(self.threshold_on, "threshold_on")
        as_float(self.threshold_off, "threshold_off")
        patience = as_int(self.patience, "patience", min_value=1, max_value=_MAX_PATIENCE)
        as_float(self.hold_max, "hold_max", min_value=0.0)
        as_float(self.smoothing, "smoothing", min_value=0.0, max_value=1.0, strict_min=True)
        as_int(self.max_patience, "max_patience", min_value=patience, max_value=_MAX_PATIENCE)


KERNEL_FORMS = (NoHold, SpreadHysteresis, BaselineHysteresis)
"""The decision rules the kernel runs (what ``kernel_form()`` may return)."""


def _keeps_methods(ctrl, cls) -> bool:
    # a subclass that redefines the decision no longer matches its parent's kernel form
    return type(ctrl).hold is cls.hold and type(ctrl).reset is cls.reset


# patience beyond 2**53 is refused: the kernel keeps it in a float64 state slot and doubles it
_MAX_PATIENCE = 2**53


def _set_hysteresis(ctrl, threshold_on, threshold_off, patience, hold_max, *, on_strict):
    ctrl.threshold_on = as_float(threshold_on, "threshold_on", min_value=0.0, strict_min=on_strict)
    ctrl.threshold_off = as_float(threshold_off, "threshold_off", min_value=0.0)
    if ctrl.threshold_off > ctrl.threshold_on:
        raise ValueError(
            f"threshold_off must be <= threshold_on, got {ctrl.threshold_off} > {ctrl.threshold_on}")
    # at most 2**53: the kernel keeps the patience in a float64 state slot and doubles it
    ctrl.patience = as_int(patience, "patience", min_value=1, max_value=_MAX_PATIENCE)
    ctrl.hold_max = as_float(hold_max, "hold_max", min_value=0.0)


class NoPacing:
    """The baseline: never hold a rank.

    Examples
    --------
    >>> NoPacing().hold(None)
    0.0
    """

    def reset(self) -> None:
        pass

    def hold(self, last: BarrierObservation | None) -> float:
        return 0.0

    def kernel_form(self) -> NoHold | None:
        """:class:`NoHold` (None for a subclass that redefines ``hold`` or ``reset``)."""
        return NoHold() if _keeps_methods(self, NoPacing) else None

    def __repr__(self) -> str:
        return "NoPacing()"


class SpreadPacer:
    """Arrival-spread pacer with hysteresis, after the coordination layer of [2]_.

    Off at start. When the observed arrival spread exceeds ``threshold_on`` it switches
    on and holds early ranks for at most ``hold_max`` s at every barrier; it switches
    off again only after ``patience`` consecutive iterations with a spread below
    ``threshold_off``, so a single calm iteration does not make it flap.

    Parameters
    ----------
    threshold_on : float
        Spread ``(max - min) / mean`` above which pacing starts (>= 0). Default 0.2:
        the slowest rank 20 % of an iteration behind the fastest, which i.i.d. 5 %
        jitter alone rarely produces below a few hundred ranks, an outlier or an
        episode always does.
    threshold_off : float
        Spread below which an iteration counts as calm (``0 <= off <= on``). Default 0.1.
    patience : int
        Calm iterations in a row before switching off (>= 1). Default 10.
    hold_max : float
        Bound on any rank's hold, s (>= 0). Default 0.5 s, one nominal compute time of
        the default scenario: a rank later than that is a fault for the failure
        detector, not a straggler to wait for.

    Examples
    --------
    >>> p = SpreadPacer(threshold_on=0.2, threshold_off=0.1, patience=2, hold_max=0.3)
    >>> p.reset(); p.hold(None)
    0.0
    >>> p.hold(BarrierObservation(0, 0.5, 1.0, 0.9, 0.0))
    0.3
    """

    def __init__(self, threshold_on: float = 0.2, threshold_off: float = 0.1,
                 patience: int = 10, hold_max: float = 0.5):
        _set_hysteresis(self, threshold_on, threshold_off, patience, hold_max, on_strict=False)
        self.reset()

    def reset(self) -> None:
        self._on = False
        self._calm = 0

    def hold(self, last: BarrierObservation | None) -> float:
        # the SpreadHysteresis form: the same comparisons, in the same order, as the kernel
        if last is not None:
            if not self._on:
                if last.spread > self.threshold_on:
                    self._on, self._calm = True, 0
            elif last.spread < self.threshold_off:
                self._calm += 1
                if self._calm >= self.patience:
                    self._on, self._calm = False, 0
            else:
                self._calm = 0
        return self.hold_max if self._on else 0.0

    def kernel_form(self) -> SpreadHysteresis | None:
        """:class:`SpreadHysteresis` with this pacer's parameters (None for a subclass
        that redefines ``hold`` or ``reset``)."""
        if not _keeps_methods(self, SpreadPacer):
            return None
        return SpreadHysteresis(self.threshold_on, self.threshold_off, self.patience, self.hold_max)

    def __repr__(self) -> str:
        return (f"SpreadPacer(threshold_on={self.threshold_on}, threshold_off={self.threshold_off}, "
                f"patience={self.patience}, hold_max={self.hold_max})")


class BaselinePacer:
    """Pacer that engages when the collective phase runs above its own running baseline,
    and disengages when iterations are stable again.

    :class:`SpreadPacer` compares the arrival spread with an absolute threshold; with a
    few percent of persistent 1.5x GPUs the spread of any job of more than a few dozen
    ranks exceeds every sensible absolute threshold, so it never switches off, even where
    holding ranks buys nothing. What pacing can remove is only the part of the barrier
    that *depends on uneven arrival*: the collective phase
    ``d = iteration_time - arrival_max`` (timestamps a coordination layer between the
    framework and the collective library has [2]_). Compute stragglers move
    ``arrival_max``, not ``d``; parked bytes that overflow a switch buffer inflate ``d``.
    This controller tracks a running baseline ``B`` of ``d`` and watches the relative
    excess ``x = d / B - 1``:

    - off -> on when ``x > threshold_on``;
    - on -> off after ``patience`` consecutive iterations with ``x < threshold_off``;
    - if it has to switch on again within ``patience`` iterations of switching off
      (the instability came straight back), the patience doubles (up to
      ``max_patience``), and returns to its initial value after a stay off longer than
      the current patience: multiplicative back-off, as in TCP's retransmission timer,
      so probing costs a vanishing share of iterations where pacing is always needed;
    - ``B <- B + smoothing * (min(d, B * (1 + threshold_on)) - B)`` every iteration:
      a clipped exponential average, so an inflated iteration barely moves the
      baseline while a lasting change of the clean collective (a new contention level)
      is followed within a few tens of iterations. ``B`` starts at the first ``d``.

    Parameters
    ----------
    threshold_on : float
        Relative excess of the collective phase that switches pacing on (> 0). Default
        0.1. The clean phase of the default scenario is 0.06-0.13 s from 32 nodes on and
        moves by tens of percent with the ECMP contention of each iteration; an incast
        adds at least one ``rto`` (67 ms). So the signal detects any fabric-dependent
        excess, not only the part pacing removes: contention swings switch the pacer on
        too, which costs only the release latency, and the back-off below keeps the
        probing cheap. Where the phase is constant (a job inside one leaf, a
        topology-ordered ring) it never engages.
    threshold_off : float
        Relative excess below which an iteration counts as calm (``0 <= off <=
        on``). Default 0.05.
    patience : int
        Initial calm iterations in a row before switching off (>= 1). Default 10.
    hold_max : float
        Bound on any rank's hold, s (>= 0). Default 0.5 s (as :class:`SpreadPacer`).
    smoothing : float
        Weight of a new observation in the baseline, in (0, 1]. Default 0.1.
    max_patience : int
        Cap of the backed-off patience (>= patience). Default 1000.

    Notes
    -----
    Runs inside the kernel (:class:`BaselineHysteresis`); its Python ``hold`` is the
    same rule, O(1) per iteration.

    Examples
    --------
    >>> p = BaselinePacer(patience=1)
    >>> p.reset(); p.hold(None)
    0.0
    >>> p.hold(BarrierObservation(0, 0.5, 1.0, 0.6, 0.0))   # baseline d = 0.4 s
    0.0
    >>> p.hold(BarrierObservation(1, 0.5, 1.1, 0.6, 0.0))   # d = 0.5 s: 25 % above
    0.5
    """

    def __init__(self, threshold_on: float = 0.1, threshold_off: float = 0.05, patience: int = 10,
                 hold_max: float = 0.5, smoothing: float = 0.1, max_patience: int = 1000):
        # a zero on-threshold would engage on rounding noise of a constant phase
        _set_hysteresis(self, threshold_on, threshold_off, patience, hold_max, on_strict=True)
        self.smoothing = as_float(smoothing, "smoothing", min_value=0.0, max_value=1.0, strict_min=True)
        self.max_patience = as_int(max_patience, "max_patience", min_value=self.patience, max_value=_MAX_PATIENCE)
        self.reset()

    def reset(self) -> None:
        self._on = False
        self._calm = 0
        self._patience = self.patience
        self._since_off = None      # iterations since the last switch-off (None: not probing)
        self._baseline = None

    @property
    def baseline(self) -> float | None:
        """Current baseline of the collective phase, s (None before any observation)."""
        return self._baseline

    @property
    def current_patience(self) -> int:
        """Calm iterations currently needed to switch off (after back-off)."""
        return self._patience

    def hold(self, last: BarrierObservation | None) -> float:
        if last is not None:
            d = last.iteration_time - last.arrival_max
            if self._baseline is None or self._baseline <= 0.0:
                self._baseline = d
            x = d / self._baseline - 1.0 if self._baseline > 0.0 else 0.0
            self._baseline += self.smoothing * (min(d, self._baseline * (1.0 + self.threshold_on))
                                                - self._baseline)
            if not self._on:
                if self._since_off is not None:
                    self._since_off += 1
                if x > self.threshold_on:
                    if self._since_off is not None and self._since_off <= self._patience:
                        self._patience = min(2 * self._patience, self.max_patience)
                    self._on, self._calm = True, 0
                elif self._since_off is not None and self._since_off > self._patience:
                    self._patience, self._since_off = self.patience, None
            elif x < self.threshold_off:
                self._calm += 1
                if self._calm >= self._patience:
                    self._on, self._calm, self._since_off = False, 0, 0
            else:
                self._calm = 0
        return self.hold_max if self._on else 0.0

    def kernel_form(self) -> BaselineHysteresis | None:
        """:class:`BaselineHysteresis` with this pacer's parameters (None for a subclass
        that redefines ``hold`` or ``reset``)."""
        if not _keeps_methods(self, BaselinePacer):
            return None
        return BaselineHysteresis(self.threshold_on, self.threshold_off, self.patience, self.hold_max,
                                  self.smoothing, self.max_patience)

    def __repr__(self) -> str:
        return (f"BaselinePacer(threshold_on={self.threshold_on}, threshold_off={self.threshold_off}, "
                f"patience={self.patience}, hold_max={self.hold_max}, smoothing={self.smoothing}, "
                f"max_patience={self.max_patience})")
