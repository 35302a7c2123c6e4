"""Fault-tolerance policies: what a failure does to a training run.

The protocol
------------
A policy is an object (subclass :class:`Policy`) that :func:`spare_core.sim.simulate` asks:

* ``name`` and ``redundancy`` (labels for results);
* ``check(scenario)``: raise ValueError if the policy cannot run on the scenario (e.g.
  ``r > N``); called before any simulation work;
* ``initial_depth(scenario)``: stack layers computed per step right after a (re)start;
* ``failure_seconds(scenario)``: fixed seconds a masked failure adds to the step it hits
  (communicator shrink, controller decision);
* ``checkpoint_interval(scenario) -> IntervalChoice``: compute seconds between checkpoints;
* ``handler(scenario) -> FailureHandler``: a fresh per-run state machine.

The registry
------------
:data:`POLICY_REGISTRY` maps a short name (``"spare"``) to a :class:`RegisteredPolicy`:
the factory that builds the policy at a redundancy r, the label results carry and whether
it uses r. :func:`make_policy`, :func:`spare_core.sim.sweep`, the optima and the CLI all
read it; :func:`register_policy` adds a user's policy under a name of its own. Wherever a
name is accepted, a :class:`Policy` object (one fixed policy) or a factory of r (a callable
``f(r) -> Policy``, e.g. a Policy subclass) is accepted too (:func:`policy_at`).

A :class:`FailureHandler` sees the failed groups in order. Subclasses implement
``on_failure(group) -> Outcome``; built-in handlers override the batch method
``on_failures(groups) -> Outcomes`` to avoid a Python call per failure. Both stop at the
first failure that forces a global restart. ``restart()`` brings every group back. A
handler whose answers depend only on how many failures it is given, not on which groups
failed (checkpoint-only), sets ``needs_groups = False``: it then receives placeholders
(-1) and the failure stream skips drawing the victims.

Time is charged by the simulator, not the policy: a step at depth S costs
``S * t_compute + t_allreduce`` (times the step's jitter multiplier); a masked failure
adds ``failure_seconds`` plus ``patch_layers * t_compute`` (if ``scenario.charge_patch``)
to the step in progress and switches later steps to the new depth.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357 (CKPT-only, Rep+CKPT and
   SPARe+CKPT baselines).
"""
from __future__ import annotations

import copy
import functools
import hashlib
import inspect
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from .._native import load
from .._plugins import load_entry_points
from .._results import fields_dict
from .._validate import as_float, as_int, as_int_array, check_choice
from ..checkpoint import best_closed_form, daly_interval, young_interval
from .scenario import Scenario

__all__ = [
    "Policy",
    "FailureHandler",
    "Outcome",
    "Outcomes",
    "MASKED",
    "RESTART",
    "RESTART_MEMORY",
    "REJOINED",
    "DROPPED",
    "IntervalChoice",
    "CheckpointOnly",
    "ReplicationCheckpoint",
    "SpareCheckpoint",
    "RACK_AWARE",
    "INTERVAL_RULES",
    "POLICY_NAMES",
    "POLICY_REGISTRY",
    "DEFAULT_POLICIES",
    "SPARE_LAYOUTS",
    "ENTRY_POINT_GROUP",
    "RegisteredPolicy",
    "register_policy",
    "registered_policy",
    "policy_names",
    "policy_entry",
    "load_plugins",
    "make_policy",
    "policy_at",
    "uses_redundancy",
    "is_policy",
    "PolicyFactory",
]

INTERVAL_RULES = ("auto", "young", "daly")


@dataclass(frozen=True)
class Outcome:
    """What one failure did: ``restart`` (global restart from the checkpoint) or masked with
    ``depth`` stack layers per step from now on and ``patch_layers`` extra layers this step."""

    restart: bool
    depth: float = 1.0
    patch_layers: float = 0.0
    #: elastic policies: the failure drops its group (the activity in progress is redone)
    drop: bool = False
    #: steps credited per step from now on (None: unchanged; elastic training that shrinks
    #: its batch credits live / N)
    worth: float | None = None


#: event kinds of :attr:`Outcomes.restart` (the ``_timeline`` kernel's ``F_*``)
MASKED, RESTART, RESTART_MEMORY, REJOINED, DROPPED = 0, 1, 2, 3, 4


@dataclass
class Outcomes:
    """Batch form of :class:`Outcome`: arrays of one length (the events processed).

    ``restart`` is int8, the event's kind: 0 masked, 1 restart (only as the last entry), 3 a
    group rejoined, 4 a group dropped (elastic); the run loop turns a restart into 2 (restore
    from the in-memory tier) when a snapshot copy survived. ``depth`` and ``patch_layers``
    are float64; ``worth`` (float64 or None) the steps credited per step after each event.
    """

    restart: np.ndarray
    depth: np.ndarray
    patch_layers: np.ndarray
    worth: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.restart.shape[0])


@dataclass(frozen=True)
class IntervalChoice:
    """A checkpoint interval (compute seconds between the end of one save and the next) and
    the rule that produced it, in words."""

    seconds: float
    rule: str

    def __repr__(self) -> str:
        return f"IntervalChoice({self.seconds:.1f} s: {self.rule})"

    def to_dict(self) -> dict:
        """``{"seconds": ..., "rule": ...}`` (seconds None if not finite)."""
        return fields_dict(self)


class FailureHandler:
    """Per-run state of a policy; see the module docstring for the protocol."""

    #: failures to pull from the engine per batch at the start of an epoch (a hint)
    batch_hint = 16
    #: True if every failure is a global restart (no group is ever out while the job runs)
    every_failure_restarts = False
    #: False if the handler never reads the group ids, only how many failures it is given:
    #: the simulator may then pass placeholders (-1) and skip drawing which group failed
    needs_groups = True

    def on_failure(self, group: int) -> Outcome:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_failures(self, groups: np.ndarray) -> Outcomes:
        """Process ``groups`` in order, stopping after the first restart."""
        n = groups.shape[0]
        restart = np.zeros(n, dtype=np.int8)
        depth = np.zeros(n, dtype=np.float64)
        patch = np.zeros(n, dtype=np.float64)
        for i in range(n):
            o = self.on_failure(int(groups[i]))
            if not isinstance(o, Outcome):
                raise TypeError(f"on_failure must return an Outcome, got {type(o).__name__}")
            depth[i] = o.depth
            patch[i] = o.patch_layers
            if o.restart:
                restart[i] = 1
                return Outcomes(restart[: i + 1], depth[: i + 1], patch[: i + 1])
        return Outcomes(restart, depth, patch)

    def restart(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def on_rejoin(self, group: int) -> Outcome:
        """A failed group is back (its node replaced, its state caught up): the depth (and
        worth) from the next step. Only called when the scenario has repairs
        (:class:`spare_core.sim.Repairs`); a handler that cannot take a group back raises."""
        raise NotImplementedError(f"{type(self).__name__} cannot take a failed group back before a restart "
                                  "(it has no on_rejoin): run it without [repair]")

    def on_events(self, groups: np.ndarray, rejoin: np.ndarray) -> Outcomes:
        """Failures (``rejoin == 0``) and rejoins (``rejoin == 1``) in order, stopping after
        the first restart: runs of failures go to :meth:`on_failures`, each rejoin to
        :meth:`on_rejoin` (kind 3 in the answer)."""
        n = groups.shape[0]
        where = np.flatnonzero(rejoin)
        if where.shape[0] == 0:
            return self.on_failures(groups)
        kind = np.zeros(n, dtype=np.int8)
        depth = np.empty(n)
        patch = np.zeros(n)
        worth, n_worth = None, 0  # filled only for a handler that gives worths
        i = 0
        for e in where.tolist() + [n]:
            if e > i:
                o = self.on_failures(groups[i:e])
                m = len(o)
                kind[i : i + m] = o.restart
                depth[i : i + m] = o.depth
                patch[i : i + m] = o.patch_layers
                if o.worth is not None:
                    worth = np.empty(n) if worth is None else worth
                    worth[i : i + m] = o.worth
                    n_worth += m
                if m < e - i or (m and o.restart[m - 1] in (RESTART, RESTART_MEMORY)):
                    n = i + m
                    break
            if e < n:
                o = self.on_rejoin(int(groups[e]))
                if not isinstance(o, Outcome):
                    raise TypeError(f"on_rejoin must return an Outcome, got {type(o).__name__}")
                kind[e] = REJOINED
                depth[e] = o.depth
                if o.worth is not None:
                    worth = np.empty(n) if worth is None else worth
                    worth[e] = o.worth
                    n_worth += 1
            i = e + 1
        if worth is not None and n_worth != n:
            raise TypeError("a handler gives worths for all its events or for none")
        return Outcomes(kind[:n], depth[:n], patch[:n], None if worth is None else worth[:n])


def _interval_arg(interval):
    if isinstance(interval, str):
        return check_choice(interval, "interval", INTERVAL_RULES)
    return as_float(interval, "interval", min_value=0.0, allow_inf=True)


class Policy:
    """Base class of fault-tolerance policies (protocol in the module docstring).

    Parameters
    ----------
    interval : float or {"auto", "young", "daly"}, default "auto"
        Compute seconds between checkpoints (0: after every step; inf: never), or a rule:
        "young"/"daly" Young's and Daly's intervals with the policy's mean time between
        restarts T_f as the MTBF; "auto" the one of Young's, Daly's and the availability-optimal
        period T_c* - T_s (where T_c* <= T_f, its model's range) with the least expected time
        under exponential restarts every T_f
        (:func:`spare_core.checkpoint.best_closed_form`), never "after every step"; the
        candidates and why one won are in :attr:`IntervalChoice.rule`.
    """

    name = "policy"
    redundancy = 1
    #: whether a restart of this policy is a wipe-out of its redundancy (for the counters)
    restart_is_wipeout = True

    def __init__(self, interval: str | float = "auto") -> None:
        self.interval = _interval_arg(interval)

    # -- protocol ------------------------------------------------------------------------
    def check(self, scenario: Scenario) -> None:
        """Raise ValueError if this policy cannot run on ``scenario``."""

    def initial_depth(self, scenario: Scenario) -> float:
        """Stack layers per step right after a (re)start."""
        return 1.0

    def failure_seconds(self, scenario: Scenario) -> float:
        """Fixed seconds a masked failure adds to its step."""
        return 0.0

    def endurable_failures(self, scenario: Scenario) -> float:
        """Closed-form mean failures per epoch (including the one that forces the restart)."""
        return 1.0

    def time_between_restarts(self, scenario: Scenario) -> float:
        """T_f for the checkpoint rules: ``endurable_failures * system_mtbf``."""
        return self.endurable_failures(scenario) * scenario.system_mtbf

    def checkpoint_interval(self, scenario: Scenario) -> IntervalChoice:
        """The compute seconds between checkpoints for ``scenario`` and the rule used."""
        if not isinstance(self.interval, str):
            return IntervalChoice(self.interval, "fixed by the caller")
        tf = self.time_between_restarts(scenario)
        ts = scenario.checkpoint_time
        if self.interval == "young":
            return IntervalChoice(young_interval(ts, tf), f"Young with T_f = {tf:.0f} s")
        if self.interval == "daly":
            return IntervalChoice(daly_interval(ts, tf), f"Daly with T_f = {tf:.0f} s")
        # "auto": the closed form with the least expected time, never "after every step"
        pick = best_closed_form(ts, scenario.restart_time, tf)
        return IntervalChoice(pick.seconds, f"auto: {pick.reason}")

    def handler(self, scenario: Scenario) -> FailureHandler:  # pragma: no cover - abstract
        raise NotImplementedError

    def with_interval(self, interval) -> "Policy":
        """A copy of this policy with another checkpoint ``interval`` (seconds or a rule)."""
        out = copy.copy(self)
        out.interval = _interval_arg(interval)
        return out

    def to_dict(self) -> dict:
        """What identifies this policy: its class, label and parameters (JSON values).

        A sweep hashes it into the run key (:mod:`spare_core.sweeps`), so two policies with
        the same dict must behave the same. Subclasses whose parameters are not JSON values
        (numbers, strings, booleans, None, lists) override this.

        Raises
        ------
        TypeError
            A parameter is not a JSON value.
        """
        params = {}
        for k, v in sorted(vars(self).items()):
            if k == "name":  # an instance label (a registry entry's): already the dict's label
                continue
            params[k] = _json_value(v, f"{type(self).__name__}.{k}")
        return {"class": f"{type(self).__module__}.{type(self).__qualname__}", "label": str(self.name), "params": params}

    def _check_r(self, scenario: Scenario) -> None:
        if self.redundancy > scenario.n_groups:
            raise ValueError(
                f"redundancy r must be <= n_groups ({scenario.n_groups}), got {self.redundancy}"
            )

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted((k, repr(v)) for k, v in vars(self).items()))))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


def _json_value(v, what):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, (tuple, list)):
        return [_json_value(x, what) for x in v]
    raise TypeError(
        f"{what} must be a JSON value (number, string, bool, None or a list of them) for the policy's "
        f"to_dict, got {type(v).__name__}; override to_dict() on the policy class"
    )


def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# -- checkpoint-only -----------------------------------------------------------------------
class _RestartEveryFailure(FailureHandler):
    batch_hint = 1
    every_failure_restarts = True  # no group is ever out: repairs need no failures of groups out
    needs_groups = False  # every failure restarts, whichever group it hits
    # the simulator only reads outcomes, so one constant answer serves every failure
    _ONE = Outcomes(_ro(np.ones(1, dtype=np.int8)), _ro(np.ones(1)), _ro(np.zeros(1)))
    _NONE = Outcomes(_ro(np.zeros(0, dtype=np.int8)), _ro(np.zeros(0)), _ro(np.zeros(0)))

    def on_failures(self, groups):
        return self._ONE if groups.shape[0] else self._NONE

    def on_failure(self, group):
        return Outcome(True)

    def restart(self):
        pass


class CheckpointOnly(Policy):
    """No redundancy: every failure is a global restart and a rollback to the last checkpoint.

    Parameters
    ----------
    interval : float or {"auto", "young", "daly"}, default "auto"
        See :class:`Policy`; T_f is the system MTBF.

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (the CKPT-only baseline).

    Examples
    --------
    >>> CheckpointOnly(600.0).checkpoint_interval(Scenario.paper_600k(200))
    IntervalChoice(600.0 s: fixed by the caller)
    """

    name = "CKPT-only"
    restart_is_wipeout = False

    def handler(self, scenario):
        return _RestartEveryFailure()


# -- replication -----------------------------------------------------------------------------
class _CyclicHandler(FailureHandler):
    def __init__(self, n, r):
        self._k = load("_timeline")
        self._dead = np.zeros(n, dtype=np.int8)
        self._r = r
        # about half the failures an epoch endures (mu ~ N^(1 - 1/r)); 1 when each failure wipes out
        self.batch_hint = 1 if r == 1 else int(min(64, max(2, 0.5 * n ** (1.0 - 1.0 / r))))

    def on_failures(self, groups):
        i = self._k.cyclic_first_wipe(self._dead, groups, self._r)
        n = groups.shape[0] if i < 0 else i + 1
        restart = np.zeros(n, dtype=np.int8)
        if i >= 0:
            restart[i] = 1
        return Outcomes(restart, np.full(n, float(self._r)), np.zeros(n))

    def on_failure(self, group):
        o = self.on_failures(np.array([group], dtype=np.int64))
        return Outcome(bool(o.restart[0]), float(self._r))

    def restart(self):
        self._dead[:] = 0

    def on_rejoin(self, group):
        self._dead[group] = 0
        return Outcome(False, float(self._r))


class _DisjointHandler(_CyclicHandler):
    def __init__(self, n, r):
        super().__init__(n, r)
        n_sets = n // r
        # N // r replica sets; the N mod r leftover groups join the first sets (size r + 1)
        self._set_of = np.arange(n, dtype=np.int64) % n_sets
        self._size = np.bincount(self._set_of, minlength=n_sets).astype(np.int64)
        self._count = np.zeros(n_sets, dtype=np.int64)

    def on_failures(self, groups):
        i = self._k.set_first_wipe(self._count, self._set_of, self._size, groups)
        n = groups.shape[0] if i < 0 else i + 1
        restart = np.zeros(n, dtype=np.int8)
        if i >= 0:
            restart[i] = 1
        return Outcomes(restart, np.full(n, float(self._r)), np.zeros(n))

    def restart(self):
        self._count[:] = 0

    def on_rejoin(self, group):
        self._count[self._set_of[group]] -= 1
        return Outcome(False, float(self._r))


#: the label of Rep+CKPT with disjoint replica sets (distinct from the cyclic variant's)
DISJOINT_LABEL = "Rep+CKPT (disjoint)"


class ReplicationCheckpoint(Policy):
    """Traditional r-way replication plus checkpoints: every step computes r layers.

    Parameters
    ----------
    r : int
        Redundancy, 1 <= r <= N.
    variant : {"cyclic", "disjoint"}, default "cyclic"
        "cyclic": the SPARe paper's cyclic stacks with all r layers computed every step; a
        wipe-out exactly when r cyclically consecutive groups are dead (exactly when SPARe
        wipes out), so the comparison isolates adaptive reordering. "disjoint": N // r
        replica sets of r consecutive groups (the N mod r leftover groups join the first
        sets); a wipe-out when a whole set is dead.
    interval : float or {"auto", "young", "daly"}, default "auto"
        See :class:`Policy`.

    Notes
    -----
    A masked failure costs the communicator shrink (``scenario.shrink_time``) and no
    controller time. Closed-form endurable failures: the SPARe paper's
    mu = Gamma(1 + 1/r) N^(1 - 1/r) for "cyclic"; for "disjoint" the same independent-loss
    approximation with N/r sets instead of N windows, mu * r^(1/r).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (the Rep+CKPT baseline).
    """

    name = "Rep+CKPT"

    def __init__(self, r: int, variant: str = "cyclic", interval: str | float = "auto") -> None:
        super().__init__(interval)
        self.redundancy = as_int(r, "r", min_value=1)
        self.variant = check_choice(variant, "variant", ("cyclic", "disjoint"))
        if self.variant == "disjoint":
            # an instance label only for the variant: the cyclic policy's parameters (and the
            # store keys hashed from them) stay as they were
            self.name = DISJOINT_LABEL

    def check(self, scenario):
        self._check_r(scenario)

    def initial_depth(self, scenario):
        return float(self.redundancy)

    def failure_seconds(self, scenario):
        return scenario.shrink_time

    def endurable_failures(self, scenario):
        from ..analytic import endurable_failures

        mu = float(endurable_failures(scenario.n_groups, self.redundancy))
        if self.variant == "disjoint":
            mu *= self.redundancy ** (1.0 / self.redundancy)
        return mu

    def handler(self, scenario):
        cls = _CyclicHandler if self.variant == "cyclic" else _DisjointHandler
        return cls(scenario.n_groups, self.redundancy)


@functools.lru_cache(maxsize=256)
def _sidon(n: int, r: int) -> tuple:
    # the local search takes seconds at r = 20; a sweep asks for the same (N, r) per seed
    from ..layout import sidon_offsets

    return tuple(int(o) for o in sidon_offsets(n, r, seed=0))


#: ``SpareCheckpoint(layout=...)``: stacks placed across the scenario's failure domains
RACK_AWARE = "rack-aware"
#: SPARe's stack placements by name: offsets consecutive/Sidon-type, or along failure domains
SPARE_LAYOUTS = ("consecutive", "sidon", RACK_AWARE, f"{RACK_AWARE}-sidon")


def _rack_aware(failures, n: int, r: int, offsets):
    """The rack-aware stacks of ``failures.domains(n)``; cached when the model is hashable."""
    try:
        hash(failures)
    except TypeError:
        return _rack_aware_layout(failures, n, r, offsets)
    return _rack_aware_cached(failures, n, r, offsets)


def _rack_aware_layout(failures, n, r, offsets):
    from ..layout import StackedLayout

    return StackedLayout.rack_aware(failures.domains(n), r, offsets="sidon" if offsets == "sidon" else "consecutive")


# a sweep builds one handler per run: the placement is the same for every seed
_rack_aware_cached = functools.lru_cache(maxsize=64)(_rack_aware_layout)


# -- SPARe -----------------------------------------------------------------------------------
class _RectlrHandler(FailureHandler):
    def __init__(self, n, r, offsets, layout=None):
        from ..layout import StackedLayout
        from ..rectlr import KINDS, Rectlr

        self._wipeout = KINDS.index("wipeout")

        self.batch_hint = 1 if r == 1 else int(min(32, max(2, 0.5 * n ** (1.0 - 1.0 / r))))
        self._ctl = Rectlr(StackedLayout(n, r, offsets=offsets) if layout is None else layout)

    def on_failures(self, groups):
        d = self._ctl.fail_many_arrays(groups)  # stops at a wipe-out
        restart = (d.kind == self._wipeout).astype(np.int8)
        return Outcomes(restart, d.stack_depth.astype(np.float64), d.patch_layers.astype(np.float64))

    def on_failure(self, group):
        o = self.on_failures(np.array([group], dtype=np.int64))
        return Outcome(bool(o.restart[0]), float(o.depth[0]), float(o.patch_layers[0]))

    def restart(self):
        self._ctl.restart()

    def on_rejoin(self, group):
        return Outcome(False, float(self._ctl.rejoin(group)))


class SpareCheckpoint(Policy):
    """SPARe stacked redundancy driven by the RECTLR controller, plus checkpoints.

    Each step computes the top S layers of every surviving group's stack (S starts at 1);
    on a failure RECTLR repairs the assignment (:class:`spare_core.rectlr.Rectlr`), the
    failure step pays ``shrink_time + controller_time`` plus the patch plan's extra layers
    (``patch_layers * t_compute`` when ``scenario.charge_patch``), and a wipe-out is a
    global restart.

    Parameters
    ----------
    r : int
        Redundancy (stack height), 1 <= r <= N.
    interval : float or {"auto", "young", "daly"}, default "auto"
        See :class:`Policy`; T_f = mu(N, r) x system MTBF.
    offsets : None, "sidon" or array-like of int, optional
        Stack offsets for :class:`spare_core.layout.StackedLayout`: None (default) the
        consecutive 0..r-1, the paper's cyclic stacks; "sidon" the Sidon-type offsets of
        :func:`spare_core.layout.sidon_offsets` for the scenario's N (seed 0: any two shard
        types share at most one holder where N allows); or explicit offsets (length r).
    layout : StackedLayout or "rack-aware", optional
        A whole layout instead of offsets (e.g. ``StackedLayout.rack_aware(domains, r)``); its
        redundancy must be r and its n_groups the scenario's. ``"rack-aware"``: that layout
        built for each scenario from its failure model's domains (a model with a
        ``domains(n_groups)`` method, :class:`spare_core.events.DomainFailures`), with
        ``offsets`` None (consecutive) or "sidon" along the interleaved cycle; a scenario
        whose failures have no domains is refused by :meth:`check`.

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357.
    """

    name = "SPARe+CKPT"

    def __init__(self, r: int, interval: str | float = "auto", offsets: object = None, layout: object = None) -> None:
        super().__init__(interval)
        self.redundancy = as_int(r, "r", min_value=1)
        if isinstance(layout, str):
            if layout != RACK_AWARE:
                raise ValueError(f"layout must be a StackedLayout or {RACK_AWARE!r}, got {layout!r}")
            if offsets is not None and not (isinstance(offsets, str) and offsets == "sidon"):
                raise ValueError(f"layout={RACK_AWARE!r} takes offsets None or 'sidon', got {offsets!r}")
            self.layout = layout
        elif layout is not None:  # an attribute only when given: repr/eq/hash of offset policies unchanged
            from ..layout import StackedLayout

            if not isinstance(layout, StackedLayout):
                raise TypeError(f"layout must be a StackedLayout, got {type(layout).__name__}")
            if offsets is not None:
                raise ValueError("give offsets or layout, not both")
            if layout.redundancy != self.redundancy:
                raise ValueError(f"layout must have redundancy r = {self.redundancy}, got {layout.redundancy}")
            self.layout = layout
        if offsets is None or (isinstance(offsets, str) and offsets == "sidon"):
            self.offsets = offsets
        elif isinstance(offsets, str):
            raise ValueError(f"offsets must be None, 'sidon' or a sequence of ints, got {offsets!r}")
        else:
            off = as_int_array(offsets, "offsets", min_value=0)
            if off.shape[0] != self.redundancy:
                raise ValueError(f"offsets must have length r = {self.redundancy}, got {off.shape[0]}")
            self.offsets = tuple(off.tolist())

    def check(self, scenario):
        self._check_r(scenario)
        layout = getattr(self, "layout", None)
        if isinstance(layout, str):
            if not callable(getattr(scenario.failures, "domains", None)):
                raise ValueError(f"layout={RACK_AWARE!r} needs failure domains in the scenario (a failure model "
                                 f"with domains, e.g. DomainFailures), got failure model {scenario.failure_model!r}")
            _rack_aware(scenario.failures, scenario.n_groups, self.redundancy, self.offsets)
        elif layout is not None and layout.n_groups != scenario.n_groups:
            raise ValueError(f"layout must have n_groups = {scenario.n_groups}, got {layout.n_groups}")
        if isinstance(self.offsets, tuple) and max(self.offsets) >= scenario.n_groups:
            raise ValueError(f"offsets must be < n_groups ({scenario.n_groups}), got {max(self.offsets)}")

    def _offsets(self, scenario):
        if self.offsets == "sidon":
            return _sidon(scenario.n_groups, self.redundancy)
        return self.offsets

    def failure_seconds(self, scenario):
        return scenario.shrink_time + scenario.controller_time

    def to_dict(self) -> dict:
        """As :meth:`Policy.to_dict`; a given ``layout`` enters as its size and the SHA-256 of
        its placement (layouts are equal exactly when their placements are)."""
        layout = getattr(self, "layout", None)
        if layout is None or isinstance(layout, str):
            return super().to_dict()
        plain = copy.copy(self)
        del plain.layout
        out = Policy.to_dict(plain)
        placement = np.ascontiguousarray(layout.placement, dtype="<i8")
        out["params"]["layout"] = {"n_groups": int(placement.shape[0]), "redundancy": int(placement.shape[1]),
                                   "placement_sha256": hashlib.sha256(placement.tobytes()).hexdigest()}
        return out

    def endurable_failures(self, scenario):
        from ..analytic import endurable_failures

        return float(endurable_failures(scenario.n_groups, self.redundancy))

    def handler(self, scenario):
        layout = getattr(self, "layout", None)
        if isinstance(layout, str):
            return _RectlrHandler(scenario.n_groups, self.redundancy, None,
                                  _rack_aware(scenario.failures, scenario.n_groups, self.redundancy, self.offsets))
        return _RectlrHandler(scenario.n_groups, self.redundancy, self._offsets(scenario), layout)



# -- the registry -----------------------------------------------------------------------------
#: a callable building the policy at redundancy r
PolicyFactory = Callable[[int], Policy]

#: the policies a comparison runs when none are named (scenario files, sweep specs, sweep())
DEFAULT_POLICIES = ("ckpt", "rep", "spare")

#: the entry-point group through which an installed package adds policies
ENTRY_POINT_GROUP = "spare_core.policies"


def _factory_options(factory) -> tuple[str, ...] | None:
    """The keyword options a factory takes besides r (None: it takes any keyword)."""
    try:
        params = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):  # a builtin or C callable: trust it
        return None
    kind = inspect.Parameter
    if any(p.kind is kind.VAR_KEYWORD for p in params):
        return None
    if params and params[0].kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD):
        params = params[1:]  # r
    return tuple(p.name for p in params if p.kind in (kind.POSITIONAL_OR_KEYWORD, kind.KEYWORD_ONLY))


@dataclass(frozen=True)
class RegisteredPolicy:
    """One entry of :data:`POLICY_REGISTRY`: a policy as the files, specs and commands know it.

    Attributes
    ----------
    name : str
        Short name used in code, scenario files, sweep specs and the CLI (``"spare"``).
    factory : callable
        ``factory(r, **options) -> Policy``; ``r`` is None when ``uses_redundancy`` is False.
    label : str
        The label its results carry (``Policy.name``, e.g. ``"SPARe+CKPT"``); two entries
        never share one, so their cells can be told apart when they run side by side.
    uses_redundancy : bool
        False for a policy without redundancy (checkpoint-only): a sweep runs it once, at
        r = 1, and the redundancy policies' r = 1 cells are the same policy in all but name
        (:meth:`ResultSet.ranking` then ranks them at r >= 2).
    options : tuple of str or None
        The options the policy takes (a ``[policy.NAME]`` table of a scenario file, a sweep
        spec's ``policy_options``, ``make_policy`` keywords); None: whatever the factory
        accepts. The values are checked by the policy itself when it is built.
    compare_keys : mapping
        Keys of a scenario file's ``[compare]`` table this policy reads as a shorthand for
        its options: key -> ``f(value) -> dict of options`` (SPARe's ``compare.layout``).
    description : str
        One line for listings (``spare run --help``).
    """

    name: str
    factory: Callable
    label: str
    uses_redundancy: bool = True
    options: tuple[str, ...] | None = None
    compare_keys: Mapping[str, Callable] = field(default_factory=dict)
    description: str = ""

    def check_options(self, options: Mapping, where: str = "") -> dict:
        """``options`` as a dict after checking their names against :attr:`options`.

        Raises
        ------
        ValueError
            An option this policy does not take (the message lists those it does).
        """
        if not isinstance(options, Mapping):
            raise TypeError(f"{where}options of policy {self.name!r} must be a table/dict, got {type(options).__name__}")
        allowed = self.options if self.options is not None else _factory_options(self.factory)
        if allowed is not None:
            unknown = sorted(set(options) - set(allowed))
            if unknown:
                raise ValueError(f"{where}policy {self.name!r} has no option {unknown[0]!r} "
                                 f"(its options: {list(allowed)})")
        return dict(options)

    def build(self, r=None, **options) -> Policy:
        """The policy at redundancy ``r`` (ignored without redundancy) with ``options``,
        carrying this entry's label."""
        self.check_options(options)
        if not self.uses_redundancy:
            out = self.factory(None, **options)
        elif r is None:
            raise ValueError(f"policy {self.name!r} needs a redundancy r")
        else:
            out = self.factory(r, **options)
        if not is_policy(out):
            raise TypeError(f"policy {self.name!r}: the factory must return a Policy, got {type(out).__name__}")
        if getattr(out, "name", None) != self.label:
            # the registry's label is what results carry: two entries building one class
            # (a variant, a plugin's preset) stay apart in every table
            out = copy.copy(out)
            out.name = self.label
        return out


#: name -> :class:`RegisteredPolicy`; extend with :func:`register_policy` or an entry point
#: (read through :func:`policy_names` / :func:`registered_policy`, which load the plugins)
POLICY_REGISTRY: dict[str, RegisteredPolicy] = {}


def register_policy(name, factory, *, label, uses_redundancy=True, options=None, compare_keys=None,
                    description="", replace=False) -> RegisteredPolicy:
    """Make a policy available by name to :func:`make_policy`, studies, files, specs and the CLI.

    Parameters
    ----------
    name : str
        Short name (letters, digits, ``-`` and ``_``).
    factory : callable
        ``factory(r, **options) -> Policy`` (a Policy subclass taking r first qualifies);
        with ``uses_redundancy=False`` it is called as ``factory(None, **options)``.
    label : str
        The label its results carry; no two entries may share one.
    uses_redundancy : bool, default True
    options : sequence of str, optional
        The options it takes (default: the factory's keyword parameters).
    compare_keys : mapping, optional
        ``[compare]`` keys of a scenario file that are shorthands for its options
        (:class:`RegisteredPolicy`).
    description : str, optional
    replace : bool, default False
        Allow replacing an existing entry (the built-ins included).

    Returns
    -------
    RegisteredPolicy

    Raises
    ------
    TypeError, ValueError
        Bad name, label or factory; the name or the label is taken and ``replace`` is False.

    Examples
    --------
    >>> entry = register_policy("spare-sidon", lambda r, interval="auto": SpareCheckpoint(r, interval, "sidon"),
    ...                         label="SPARe+CKPT (Sidon)")
    >>> make_policy("spare-sidon", 4).offsets, make_policy("spare-sidon", 4).name
    ('sidon', 'SPARe+CKPT (Sidon)')
    >>> del POLICY_REGISTRY["spare-sidon"]
    """
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"policy name must be a non-empty string of letters, digits, '-' and '_', got {name!r}")
    if not isinstance(label, str) or not label:
        raise ValueError(f"policy label must be a non-empty string, got {label!r}")
    if not callable(factory):
        raise TypeError(f"policy factory must be callable, got {type(factory).__name__}")
    if name in POLICY_REGISTRY and not replace:
        raise ValueError(f"policy name {name!r} is already registered (pass replace=True to replace it)")
    twin = [e.name for e in POLICY_REGISTRY.values() if e.label == label and e.name != name]
    if twin:
        raise ValueError(f"policy label {label!r} is already the label of policy {twin[0]!r}: results could not "
                         "be told apart (give the policy another label)")
    if options is not None:
        if isinstance(options, str) or not all(isinstance(o, str) for o in options):
            raise TypeError(f"options must be a sequence of option names, got {options!r}")
        options = tuple(options)
    compare_keys = dict(compare_keys or {})
    if not all(isinstance(k, str) and callable(f) for k, f in compare_keys.items()):
        raise TypeError("compare_keys must map [compare] key names to callables returning options")
    entry = RegisteredPolicy(name, factory, label, bool(uses_redundancy), options, compare_keys, str(description))
    POLICY_REGISTRY[name] = entry
    return entry


def _spare_layout_options(value) -> dict:
    """``compare.layout`` of a scenario file as SpareCheckpoint options."""
    check_choice(value, "compare.layout", SPARE_LAYOUTS)
    out: dict = {}
    if value.startswith(RACK_AWARE):
        out["layout"] = RACK_AWARE
    if value.endswith("sidon"):
        out["offsets"] = "sidon"
    return out


register_policy("ckpt", lambda r, interval="auto": CheckpointOnly(interval), label=CheckpointOnly.name,
                uses_redundancy=False, options=("interval",),
                description="checkpoint-only: every failure a global restart and a rollback")
register_policy("rep", lambda r, interval="auto": ReplicationCheckpoint(r, "cyclic", interval),
                label=ReplicationCheckpoint.name, options=("interval",),
                description="Rep+CKPT: r-way replication on SPARe's cyclic stacks, all r layers every step")
register_policy("rep-disjoint", lambda r, interval="auto": ReplicationCheckpoint(r, "disjoint", interval),
                label=DISJOINT_LABEL, options=("interval",),
                description="Rep+CKPT with N/r disjoint replica sets")
register_policy("spare", SpareCheckpoint, label=SpareCheckpoint.name, options=("interval", "offsets", "layout"),
                compare_keys={"layout": _spare_layout_options},
                description="SPARe+CKPT: stacked redundancy with RECTLR, plus checkpoints")

from .elastic import ElasticDP  # noqa: E402  (it subclasses Policy, defined above)

register_policy("elastic", lambda r, **options: ElasticDP(**options), label=ElasticDP.name, uses_redundancy=False,
                options=("reconfigure", "batch", "min_groups", "microbatches", "interval"),
                description="elastic data parallelism (torchft-style): failed groups drop out, the others go on")

#: the built-in names (the live registry may hold more: :func:`policy_names`)
POLICY_NAMES = tuple(POLICY_REGISTRY)

_plugins_loaded = False


def load_plugins() -> list[str]:
    """Register the policies installed packages declare under the ``spare_core.policies``
    entry-point group (once per process; later calls do nothing).

    An entry point ``mine = "my_pkg:MyPolicy"`` names a Policy subclass (registered under
    the entry point's name with its ``name`` as label, ``uses_redundancy`` if it sets one,
    and its constructor's keywords as options) or a :class:`RegisteredPolicy` (built with
    :func:`policy_entry`). A plugin that fails to load, or whose name or label is taken,
    is skipped with a warning: an installed package never breaks the command line.

    Returns
    -------
    list of str
        The names registered by this call.
    """
    global _plugins_loaded
    if _plugins_loaded:
        return []
    _plugins_loaded = True

    def register(name, obj):
        if name in POLICY_REGISTRY:
            raise ValueError("the name is taken")
        if isinstance(obj, RegisteredPolicy):
            register_policy(name, obj.factory, label=obj.label, uses_redundancy=obj.uses_redundancy,
                            options=obj.options, compare_keys=obj.compare_keys, description=obj.description)
        elif isinstance(obj, type) and issubclass(obj, Policy):
            register_policy(name, obj, label=obj.name, uses_redundancy=getattr(obj, "uses_redundancy", True),
                            description=(obj.__doc__ or "").strip().split("\n")[0])
        else:
            raise TypeError(f"must name a Policy subclass or a RegisteredPolicy, got {type(obj).__name__}")

    return load_entry_points(ENTRY_POINT_GROUP, "policy", register)


def policy_entry(factory, *, label, uses_redundancy=True, options=None, compare_keys=None,
                 description="") -> RegisteredPolicy:
    """A registry entry for a plugin's entry point, not registered yet (its name is the entry
    point's): ``MY_POLICY = policy_entry(MyPolicy, label="Mine")``."""
    return RegisteredPolicy("", factory, label, bool(uses_redundancy),
                            None if options is None else tuple(options), dict(compare_keys or {}), description)


def policy_names() -> tuple[str, ...]:
    """The names of the live registry: the built-ins, those registered in this process and
    those of installed plugins (:func:`load_plugins`)."""
    load_plugins()
    return tuple(POLICY_REGISTRY)


def registered_policy(name, what="policy") -> RegisteredPolicy:
    """The registry entry of ``name`` (plugins loaded first).

    Raises
    ------
    ValueError
        An unknown name; the message lists the registered ones.
    """
    check_choice(name, what, policy_names())
    return POLICY_REGISTRY[name]


def make_policy(name, r=None, **kwargs) -> Policy:
    """Build a registered policy by name.

    Parameters
    ----------
    name : str
        A name of the live registry (:func:`policy_names`): built in, "ckpt"
        (checkpoint-only), "rep" (Rep+CKPT on cyclic stacks), "rep-disjoint" (Rep+CKPT with
        disjoint replica sets), "spare" (SPARe+CKPT).
    r : int, optional
        Redundancy (ignored by policies without one, required by the others).
    **kwargs
        The policy's options (e.g. ``interval``; :attr:`RegisteredPolicy.options`).

    Returns
    -------
    Policy

    Raises
    ------
    ValueError
        Unknown name, an option the policy does not take, or a missing ``r``.

    Examples
    --------
    >>> make_policy("spare", 8)
    SpareCheckpoint(interval='auto', redundancy=8, offsets=None)
    """
    return registered_policy(name).build(r, **kwargs)


def is_policy(obj) -> bool:
    """Whether ``obj`` is a policy object (follows the protocol; not a class)."""
    needed = ("check", "initial_depth", "failure_seconds", "checkpoint_interval", "handler")
    return not isinstance(obj, type) and all(callable(getattr(obj, m, None)) for m in needed)


def _check_source(policy, what):
    if isinstance(policy, str):
        registered_policy(policy, what)
    elif not (is_policy(policy) or callable(policy)):
        raise TypeError(
            f"{what} must be a registered name ({sorted(policy_names())}), a Policy object or a factory of r, "
            f"got {type(policy).__name__}"
        )


def uses_redundancy(policy, what="policy") -> bool:
    """Whether a sweep should vary r for ``policy`` (a name, a Policy object or a factory).

    A registered name answers from its entry; a Policy object is one fixed policy (False: it
    runs at its own r); any other callable is a factory of r (True).
    """
    _check_source(policy, what)
    if isinstance(policy, str):
        return POLICY_REGISTRY[policy].uses_redundancy
    return not is_policy(policy)


def policy_at(policy, r=None, *, interval=None, what="policy", **kwargs) -> Policy:
    """The policy object for a name, a Policy object or a factory, at redundancy ``r``.

    Parameters
    ----------
    policy : str, Policy or callable
        A registered name (built with ``r`` and ``kwargs``), a Policy object (returned as it
        is; ``r`` and ``kwargs`` must not ask for something else) or a factory
        ``f(r, **kwargs) -> Policy``.
    r : int, optional
    interval : float or str, optional
        Replaces the policy's checkpoint interval (:meth:`Policy.with_interval`), whatever
        ``kwargs`` say: a study's interval axis wins over a policy's own option.
    what : str
        The argument's name for error messages.
    **kwargs
        Options of a named policy or a factory.

    Returns
    -------
    Policy

    Raises
    ------
    TypeError, ValueError
        Unknown name, a factory that does not return a policy, options for a Policy object.
    """
    _check_source(policy, what)
    if isinstance(policy, str):
        out = make_policy(policy, r, **kwargs)
    elif is_policy(policy):
        if kwargs:
            raise ValueError(f"{what}: a Policy object takes no options, got {sorted(kwargs)}")
        out = policy
    else:
        out = policy(r, **kwargs)
        if not is_policy(out):
            raise TypeError(f"{what}: the factory must return a Policy, got {type(out).__name__}")
    if interval is not None:
        if not callable(getattr(out, "with_interval", None)):
            raise TypeError(f"{what}: {type(out).__name__} has no with_interval(), so its interval cannot be swept")
        out = out.with_interval(interval)
    return out
