"""The strategy protocol: what :func:`spare_core.sim.simulate` asks a policy and its handler.

A policy is an object (subclass :class:`Policy`) that the simulator asks:

* ``name`` and ``redundancy`` (labels for results);
* ``check(scenario)``: raise ValueError if the policy cannot run on the scenario (e.g.
  ``r > N``); called before any simulation work;
* ``initial_depth(scenario)``: stack layers computed per step right after a (re)start;
* ``failure_seconds(scenario)``: fixed seconds a masked failure adds to the step it hits
  (communicator shrink, controller decision);
* ``checkpoint_interval(scenario) -> IntervalChoice``: compute seconds between checkpoints;
* ``handler(scenario) -> FailureHandler``: a fresh per-run state machine;

and, with defaults a policy overrides only when they apply (the hooks that used to be
looked up by name or by ``getattr`` elsewhere):

* ``drop_seconds(scenario)`` / ``rejoin_seconds(scenario)``: seconds every group pauses when
  a group drops out of the job or rejoins it (elastic training; 0 by default);
* ``checkpoint_only_equivalent()``: True when every failure is a global restart under the
  checkpoint-only interval rule, so that its runs equal checkpoint-only's on the same seed
  (the built-ins at r = 1: a sweep simulates them once and relabels);
* ``endurable_failures(scenario)`` / ``time_between_restarts(scenario)``: the closed forms the
  interval rules read.

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

``scenario`` is any object with the attributes of :class:`spare_core.sim.Scenario` (this
layer sits below the simulator and does not import it).

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357 (CKPT-only, Rep+CKPT and
   SPARe+CKPT baselines).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._results import fields_dict
from .._validate import as_float, check_choice
from ..checkpoint import best_closed_form, daly_interval, young_interval

__all__ = ["Policy", "FailureHandler", "Outcome", "Outcomes", "MASKED", "RESTART", "RESTART_MEMORY", "REJOINED",
           "DROPPED", "IntervalChoice", "INTERVAL_RULES", "is_policy"]

#: the checkpoint-interval rules a policy's ``interval`` may name instead of seconds
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
    #: True if every failure is a restart answered the same way (restart at the first failure
    #: of a batch, depth 1, no patch) and :meth:`restart` does nothing: the simulator may then
    #: skip the handler and walk the epochs in its compiled restart loop
    constant_restarts = False

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
    #: the class name :meth:`to_dict` carries (None: the class's module and qualified name). The
    #: built-ins keep the names they had when stores were first written, so that moving their
    #: code does not change the keys of stored runs
    identity: str | None = None

    def __init__(self, interval: str | float = "auto") -> None:
        self.interval = _interval_arg(interval)

    # -- protocol ------------------------------------------------------------------------
    def check(self, scenario: Any) -> None:
        """Raise ValueError if this policy cannot run on ``scenario``."""

    def initial_depth(self, scenario: Any) -> float:
        """Stack layers per step right after a (re)start."""
        return 1.0

    def failure_seconds(self, scenario: Any) -> float:
        """Fixed seconds a masked failure adds to its step."""
        return 0.0

    def endurable_failures(self, scenario: Any) -> float:
        """Closed-form mean failures per epoch (including the one that forces the restart)."""
        return 1.0

    def time_between_restarts(self, scenario: Any) -> float:
        """T_f for the checkpoint rules: ``endurable_failures * system_mtbf``.

        With failure classes a share ``f`` of the failures restarts whatever the policy (a
        class no strategy masks): restarts then come at the rate ``(f + (1 - f) / E) /
        system_mtbf``, ``E`` the endurable failures (the policy's own restarts among the
        others, which the thinning leaves as frequent per failure), so ``T_f = system_mtbf /
        (f + (1 - f) / E)``; ``E`` for checkpoint-only is 1, and ``T_f`` the MTBF."""
        e = self.endurable_failures(scenario)
        classes = getattr(scenario, "failure_classes", None)
        f = 0.0 if classes is None else classes.forced_share
        if f > 0.0:
            return scenario.system_mtbf / (f + (1.0 - f) / e)
        return e * scenario.system_mtbf

    def checkpoint_interval(self, scenario: Any) -> IntervalChoice:
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

    def handler(self, scenario: Any) -> FailureHandler:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- optional hooks (defaults: a policy without them) --------------------------------------
    def drop_seconds(self, scenario: Any) -> float:
        """Seconds every group pauses when a group drops out of the job (elastic training)."""
        return 0.0

    def rejoin_seconds(self, scenario: Any) -> float:
        """Seconds every group pauses when a group rejoins the job (elastic training)."""
        return 0.0

    def step_seconds(self, scenario: Any) -> float:
        """Seconds every step takes beyond the scenario's step, failures or not (elastic
        training's per-step quorum and cross-group all-reduce)."""
        return 0.0

    def checkpoint_only_equivalent(self) -> bool:
        """Whether every failure is a global restart under the checkpoint-only interval rule.

        Such a policy's runs equal checkpoint-only's on the same seed and interval setting,
        so a sweep simulates them once and relabels the copies. False unless a policy says
        so: a user's policy promises no such thing and is always simulated.
        """
        return False

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
        return {"class": self.identity or f"{type(self).__module__}.{type(self).__qualname__}",
                "label": str(self.name), "params": params}

    def _check_r(self, scenario: Any) -> None:
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


def is_policy(obj) -> bool:
    """Whether ``obj`` is a policy object (follows the protocol; not a class)."""
    needed = ("check", "initial_depth", "failure_seconds", "checkpoint_interval", "handler")
    return not isinstance(obj, type) and all(callable(getattr(obj, m, None)) for m in needed)


