"""``simulate(scenario, policy, *, seed) -> RunResult``: one training run under failures."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._native import load
from .._results import column, columns, columns_doc, derived, fields_dict
from ..events import EpochSource
from ..events.nodes import NodeEpochs
from .._seeding import run_seed
from .._validate import as_float
from ..strategies import REJOINED, RESTART, RESTART_MEMORY, IntervalChoice, Outcomes, policy_names
from .classes import DomainEpochs, LogClassDraws
from .scenario import Scenario

__all__ = ["simulate", "RunResult", "Timeline"]

# multipliers are drawn in chunks of this many step attempts (a run of 10,000 steps with
# rework needs a few chunks; drawing them costs ~0.1 ms each)
_MULT_CHUNK = 16_384
_MAX_BATCH = 256


@dataclass
class Timeline:
    """What happened in a run, for plots and checks.

    Attributes
    ----------
    failure_time, failure_group : ndarray
        Every failure the run saw (float64 seconds, int64 group), in order.
    failure_restart : ndarray of bool
        Whether the failure forced a global restart.
    depth_after : ndarray of float64
        Stack depth after each failure (the policy's initial depth after a restart).
    epoch_start, epoch_end : ndarray of float64
        Wall-time bounds of each epoch (between restarts; the last ends with the run).
    epoch_failures : ndarray of int64
        Failures seen in each epoch (including the one ending it).
    failure_class : ndarray of int8, optional
        With failure classes (``Scenario.failure_classes``): each failure's class, an index
        into ``failure_classes.classes``; None without classes.
    """

    failure_time: np.ndarray
    failure_group: np.ndarray
    failure_restart: np.ndarray
    depth_after: np.ndarray
    epoch_start: np.ndarray
    epoch_end: np.ndarray
    epoch_failures: np.ndarray
    failure_class: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"Timeline({self.failure_time.shape[0]} failures, {self.epoch_start.shape[0]} epochs)"

    def to_dict(self) -> dict:
        """The arrays as JSON lists (``failure_class`` None without failure classes)."""
        return fields_dict(self)


@dataclass
class RunResult:
    """Outcome of :func:`simulate`.

    Every field and derived figure is a declared column (:func:`spare_core._results.column`,
    :func:`~spare_core._results.derived`: kind, unit, doc, how a cell of seeds summarises it,
    the value of a run stored before it existed). The JSON, CSV and Parquet outputs, the
    result store's schema, :class:`~spare_core.sim.results.Summary`'s means and the store's
    report all derive from :func:`spare_core._results.columns` ``(RunResult)``: adding a
    column is one declaration here and the kernel that fills it. The ``timeline`` (with
    ``timeline=True``: every failure and epoch) is not a column.
    """

    policy: str = column("the policy's label (\"SPARe+CKPT\", ...)", cell="key")
    redundancy: int = column("the policy's redundancy r (1 for CKPT-only)", cell="key")
    scenario: str = column("the scenario's name", cell="key")
    failure_model: str = column("the failure model in words", cell="same")
    seed: object = column("the run's seed (a SeedSequence's entropy as text)", cell="seed", kind="seed")
    finished: bool = column("the run completed every step before the horizon max_wall_factor * T0", cell="count")
    time_to_train: float = column("wall seconds to complete every step (inf if unfinished)", unit="s")
    t0: float = column("failure-free time-to-train (Scenario.t0)", unit="s")
    ratio: float = column("time_to_train / t0 (inf if unfinished)", cell="ratio")
    wall_time: float = column("simulated wall time at the end (the finish or the horizon)", unit="s")
    progress: float = column("fraction of the steps completed and kept")
    availability: float = column("useful time / wall time; useful: the steps kept (not rolled back), without saves, "
                                 "restarts and lost work")
    overhead: float = column("mean stack layers computed per kept step (1 for CKPT-only, r for Rep+CKPT, S-bar plus "
                             "patch layers for SPARe; NaN with no kept step)", cell="nanmean")
    failures_seen: int = column("failures during the run")
    failures_masked: int = column("failures absorbed by redundancy")
    failures_restart: int = column("failures that forced a global restart")
    wipeouts: int = column("wipe-outs of redundancy (0 for CKPT-only, whose restarts are not wipe-outs)")
    restarts: int = column("global restarts")
    checkpoints: int = column("checkpoints saved")
    epochs: int = column("epochs (restarts + 1)")
    checkpoint_interval: float = column("compute seconds between checkpoints", unit="s")
    interval_rule: str = column("how the checkpoint interval was chosen", cell="same")
    lost_time: float = column("wall seconds lost: work rolled back or cut by a failure, and the work not saved when a run "
                                 "stops at its wall limit", unit="s")
    save_time: float = column("wall seconds spent saving checkpoints", unit="s")
    restart_time: float = column("wall seconds spent restarting", unit="s")
    steps_executed: int = column("steps computed, those rolled back included")
    rejoins: int = column("groups back in the job after a swap (scenarios with repairs)", older=0, default=0)
    memory_snapshots: int = column("in-memory snapshots taken (scenarios with a memory tier)", older=0, default=0)
    memory_restores: int = column("restarts restored from the in-memory tier", older=0, default=0)
    memory_save_time: float = column("wall seconds spent taking in-memory snapshots", unit="s", older=0.0,
                                     default=0.0)
    wait_time: float = column("wall seconds restarts waited, past their restart time, for replacement nodes",
                              unit="s", older=0.0, default=0.0)
    pause_time: float = column("wall seconds all groups paused for membership changes (elastic training)",
                               unit="s", older=0.0, default=0.0)
    gpus_paid: int = column("GPUs paid for while the job runs: n_groups * gpus_per_group plus the spare pool's (0 "
                            "when the scenario has no gpus_per_group)", unit="GPU", older=0, default=0)
    gpu_hour_price: float = column("the scenario's price of a GPU-hour (0: none given)", unit="price/GPU-h",
                                   older=0.0, default=0.0)
    detect_time: float = column("wall seconds from faults to their detection (failure classes' detect), counted in "
                                "restart_time for a restart and in the stalled activity for a masked failure: a memo, "
                                "not a part of the wall time's partition", unit="s", older=0.0, default=0.0)
    class_restarts: int = column("restarts forced by a failure class no strategy masks (recovery = \"restart\", or "
                                 "masked = false; 0 without [[failures.classes]])", older=0, default=0)
    spares_taken: int = column("failures that took a replacement from the spare pool (scenarios with repairs)",
                               older=0, default=0)
    retired_gpu_hours: float = column("GPU-hours no longer held once nodes retire ([fleet] retire_after): each "
                                      "retired node's GPUs from when it left to the end of the run (0 without "
                                      "retirement); gpu_hours is net of them", unit="GPU-h", older=0.0, default=0.0)
    tokens: float = column("tokens the job trains: its steps * job.tokens_per_step (0: unknown, or no price)",
                           unit="tokens", older=0.0, default=0.0)
    on_demand_gpu_hour_price: float = column("costs.gpu_hour, the on-demand price, whichever the run pays (0: none "
                                             "given)", unit="price/GPU-h", older=0.0, default=0.0)
    spot_gpu_hour_price: float = column("costs.spot_gpu_hour, the spot price, whichever the run pays (0: none given)",
                                        unit="price/GPU-h", older=0.0, default=0.0)
    timeline: Timeline | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        ttt = f"TTT/T0={self.ratio:.3f}" if self.finished else f"unfinished at {self.wall_time / self.t0:.1f} T0 ({100 * self.progress:.1f} % done)"
        return (
            f"RunResult({self.policy} r={self.redundancy}, {self.scenario}, {ttt}, "
            f"availability={self.availability:.3f}, overhead={self.overhead:.2f}, "
            f"failures={self.failures_seen} (masked {self.failures_masked}, restart {self.failures_restart}), "
            f"checkpoints={self.checkpoints})"
        )

    @derived("GPU-hours paid for: gpus_paid * wall_time / 3600 less retired_gpu_hours (NaN when the GPUs are "
             "unknown)", unit="GPU-h")
    def gpu_hours(self) -> float:
        """GPU-hours paid for (``gpus_paid * wall_time / 3600``, less the GPU-hours of retired
        nodes after they left; NaN when the GPUs are unknown)."""
        if not self.gpus_paid > 0:
            return math.nan
        held = self.gpus_paid * self.wall_time / 3600.0
        # without retirement the expression of before, bit for bit
        return held - self.retired_gpu_hours if self.retired_gpu_hours else held

    @derived("gpu_hours * gpu_hour_price (NaN without a price or GPUs)", unit="price")
    def cost(self) -> float:
        """``gpu_hours * gpu_hour_price`` (NaN without a price or GPUs)."""
        return self.gpu_hours * self.gpu_hour_price if self.gpu_hour_price > 0 else math.nan

    @derived("effective training time ratio T0 / time-to-train (NaN if unfinished; not availability, which counts "
             "redundant stack layers as useful)")
    def ettr(self) -> float:
        """``t0 / time_to_train``: failure-free time over wall time, NaN for a run that did not
        finish (its ETTR is only bounded above, by 1 / horizon)."""
        return self.t0 / self.time_to_train if self.finished and self.time_to_train > 0 else math.nan

    def _per_mtoken(self, price: float) -> float:
        """GPU-hours times ``price`` per million tokens trained; NaN unless the run finished (an
        unfinished run did not train the job's tokens) and the tokens and the price are known."""
        if not (self.finished and self.tokens > 0 and price > 0 and self.gpus_paid > 0):
            return math.nan
        return self.gpu_hours * price / (self.tokens / 1e6)

    @derived("cost per million tokens trained: cost / (tokens / 1e6) at the price the run pays (NaN unfinished, "
             "without a price or without job.tokens_per_step)", unit="price/Mtoken")
    def cost_per_mtoken(self) -> float:
        """``cost / (tokens / 1e6)`` (NaN unfinished, without a price or tokens per step)."""
        return self._per_mtoken(self.gpu_hour_price)

    @derived("gpu_hours * costs.gpu_hour per million tokens: the cost per Mtoken on demand (NaN as cost_per_mtoken)",
             unit="price/Mtoken")
    def on_demand_cost_per_mtoken(self) -> float:
        """The cost per million tokens at the on-demand price."""
        return self._per_mtoken(self.on_demand_gpu_hour_price)

    @derived("gpu_hours * costs.spot_gpu_hour per million tokens: the cost per Mtoken on spot nodes (NaN without "
             "a spot price, and as cost_per_mtoken)", unit="price/Mtoken")
    def spot_cost_per_mtoken(self) -> float:
        """The cost per million tokens at the spot price."""
        return self._per_mtoken(self.spot_gpu_hour_price)

    def to_dict(self) -> dict:
        """Every column (the derived ones included) as a JSON-friendly dict (``inf`` and NaN
        become None); the timeline is left out (:meth:`Timeline.to_dict` exports it)."""
        return fields_dict(self, [c.name for c in columns(RunResult)])


if RunResult.__doc__:  # None under python -OO
    RunResult.__doc__ += columns_doc(RunResult)


class StepMultipliers:
    """Per-attempt step-duration multipliers, drawn in chunks from one seeded stream.

    Shared by :func:`simulate` and the step-by-step reference simulator so that both draw the
    same multiplier for the same step attempt.

    Parameters
    ----------
    scenario : Scenario
        Its ``step_time_model`` (if any) or its ``jitter``.
    seed_seq : numpy.random.SeedSequence
        The run's ``"step-multipliers"`` stream (``spare_core._seeding.run_seed``).
    """

    def __init__(self, scenario: Scenario, seed_seq):
        self._rng = np.random.default_rng(seed_seq)
        self._model = scenario.step_time_model
        self._jitter = scenario.jitter

    def chunk(self) -> np.ndarray:
        if self._model is not None:
            m = np.ascontiguousarray(self._model.sample_multipliers(_MULT_CHUNK, self._rng), dtype=np.float64)
            if m.shape != (_MULT_CHUNK,) or not np.all(np.isfinite(m)) or not np.all(m > 0):
                raise ValueError(
                    f"step_time_model.sample_multipliers must return {_MULT_CHUNK} positive finite values"
                )
            return m
        if self._jitter == 0.0:
            return np.ones(_MULT_CHUNK)
        return self._rng.uniform(1.0 - self._jitter, 1.0 + self._jitter, _MULT_CHUNK)


def _check_policy(policy):
    needed = ("check", "initial_depth", "failure_seconds", "checkpoint_interval", "handler")
    if isinstance(policy, str):
        raise TypeError(
            f"policy must be a Policy object, got the string {policy!r}; "
            f"use make_policy(name, r) with name in {list(policy_names())}"
        )
    missing = [m for m in needed if not callable(getattr(policy, m, None))]
    if missing:
        raise TypeError(f"policy must implement the Policy protocol; {type(policy).__name__} lacks {missing}")


def simulate(scenario, policy, *, seed, timeline=False, failures=None) -> RunResult:
    """Simulate one training run of ``scenario`` under ``policy``.

    Parameters
    ----------
    scenario : Scenario
        The job, its costs and its failure process.
    policy : Policy
        :class:`CheckpointOnly`, :class:`ReplicationCheckpoint`, :class:`SpareCheckpoint`, or
        any object following the protocol of :mod:`spare_core.strategies`.
    seed : int or numpy.random.SeedSequence, keyword-only
        Root of all randomness. Two policies run on the same seed see the same failures
        within their k-th epoch (common random numbers, :class:`spare_core.events.FailureStream`).
    timeline : bool, default False
        Record every failure and epoch (:class:`Timeline`).
    failures : spare_core.events.EpochSource, optional
        The seed's failures, shared by several runs on the same scenario and seed (what
        :func:`sweep` passes): ``scenario.epoch_failures(seed)``, built for the same failure
        model and ``seed``.

    Returns
    -------
    RunResult

    Raises
    ------
    TypeError
        ``scenario`` is not a Scenario, ``policy`` does not follow the protocol, bad seed.
    ValueError
        The policy cannot run on the scenario (e.g. ``r > N``), bad seed value.

    Notes
    -----
    *Model.* A step at stack depth S takes ``m * (S * t_compute + t_allreduce)``, ``m`` the
    step's multiplier (``U(1 - jitter, 1 + jitter)``, or ``scenario.step_time_model``). A
    checkpoint is saved (``checkpoint_time``) after the first step ending at least the
    policy's interval after the previous save or restart. A masked failure extends the
    step (or save) in progress by ``policy.failure_seconds`` plus the patch work and
    switches later steps to the new depth; a restart loses the work since the last
    checkpoint and resumes after ``restart_time`` with every group back (the failure
    stream restarts then: no failures during a restart). Training ends with the last step
    (no final save), which covers only what remains of the job. The run stops at the wall
    limit ``max_wall_factor * t0`` in whatever activity is under way (no failure past it is
    simulated; the work not saved by then is lost), and the time totals (the kept steps'
    time, lost, saves, snapshots, restarts, waits, pauses) partition the wall time
    (docs/model.md section 2).

    *Speed.* Python loops over batches of failures only: the engine's failures are pulled in
    batches, the policy decides a batch at once, and the compiled kernel
    ``spare_core._ext._timeline`` walks the steps, saves and restarts between them in C
    with the GIL released. Step multipliers are exact per attempt (no CLT approximation).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (the time-to-train model and its baselines).

    Examples
    --------
    >>> from spare_core.sim import SpareCheckpoint
    >>> s = Scenario.paper_600k(200, n_steps=200)
    >>> r = simulate(s, SpareCheckpoint(6), seed=1)
    >>> r.finished, r.policy
    (True, 'SPARe+CKPT')
    """
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    scenario.check_runnable()  # a loop that could not end in practice is refused up front
    _check_policy(policy)
    if failures is not None and not isinstance(failures, EpochSource):
        raise TypeError(f"failures must be an EpochSource (scenario.epoch_failures(seed)), got {type(failures).__name__}")
    if not isinstance(timeline, (bool, np.bool_)):
        raise TypeError(f"timeline must be a bool, got {type(timeline).__name__}")
    policy.check(scenario)
    mult_seed = run_seed(seed, "step-multipliers")  # validates the seed before any work
    plan = _RunPlan.pack(scenario, policy)
    plan.seed = seed  # drawn repair durations: run_seed(seed, "repairs") (RepairDraws)
    source = failures if failures is not None else scenario.epoch_failures(seed)
    if not type(source).__module__.startswith("spare_core."):
        source = _CheckedSource(source, scenario.n_groups)  # a user's source: answers checked
    every = False  # the source hands out every failure of the log
    if scenario.repair is not None and (not getattr(plan.handler, "every_failure_restarts", False)
                                        or scenario.repair.retire_after):
        # a repaired group fails again: the run reads every failure of the log, in or out
        # of the job, and its own loop drops those of groups that are out (and retirement
        # counts every failure of a slot, so its flags are the unfiltered rows')
        try:
            source, every = source.unfiltered(), True
        except AttributeError:
            raise ValueError(f"[repair]: the failure source of model {scenario.failure_model!r} cannot hand out the "
                             "failures of groups out of the job (failures.model = \"node\" and \"trace\" can)") from None
    mults = StepMultipliers(scenario, mult_seed)
    h = plan.handler
    draws = None
    if scenario.failure_classes is not None:
        # each failure's class and detection: a thinning of the same failures (their own stream)
        draws = scenario.failure_classes.draws(run_seed(seed, "failures"))
        if scenario.failure_classes.by_value:
            # a replayed log's rows carry their class (their cause column's value), not a draw
            rows = getattr(source, "rows", None)
            if rows is None:
                raise TypeError(f"failure classes with values read a replayed log's rows: the failure source "
                                f"{type(source).__name__} hands out none (failures.model = \"trace\")")
            draws = LogClassDraws(draws, _log_row_classes(scenario), rows)
    domains = draws is not None and scenario.failure_classes.has_domains
    plan.compute = getattr(scenario.failures, "clock", "wall") == "compute"
    plan.clock = None
    if not timeline and type(source) is NodeEpochs and getattr(h, "constant_restarts", False) \
            and not {"on_failures", "on_events", "restart"} & set(getattr(h, "__dict__", ())) and not domains:
        # (not with a domain class: the restart loop sees an epoch's first failure only, while the
        # event's other groups take their spares and may hold the failed group's memory copies)
        loop = _restart_epochs(plan, source, mults, draws)
    else:
        source = _clocked(plan, source)
        if domains:
            # recovery = "domain": each such failure takes its domain's groups (one event)
            source = draws = DomainEpochs(source, draws, scenario.n_groups, every)
        loop = _run_batches(plan, source, mults, bool(timeline), draws)
    return _assemble(scenario, policy, seed, plan, loop)


class _RunPlan:
    """What a run needs before its first failure: the kernel's parameter vector, the policy's
    interval, depth and handler (parameter packing, the first third of :func:`simulate`)."""

    __slots__ = ("kern", "params", "interval", "init_depth", "handler", "holders", "repair", "n_groups", "seed",
                 "capacity", "members", "resume_least", "compute", "clock")

    @classmethod
    def pack(cls, scenario: Scenario, policy) -> "_RunPlan":
        self = cls()
        interval = policy.checkpoint_interval(scenario)
        if not isinstance(interval, IntervalChoice):
            raise TypeError(f"policy.checkpoint_interval must return an IntervalChoice, got {type(interval).__name__}")
        as_float(interval.seconds, "checkpoint interval", min_value=0.0, allow_inf=True)
        init_depth = as_float(policy.initial_depth(scenario), "policy initial depth", min_value=1.0)
        fsec = as_float(policy.failure_seconds(scenario), "policy failure seconds", min_value=0.0)
        patch_cost = scenario.t_compute if scenario.charge_patch else 0.0

        kern = load("_timeline")
        K = kern.SLOTS
        params = np.zeros(K["N_PARAMS"])
        params[K["P_T_COMP"]] = scenario.t_compute
        # what a policy adds to every step (elastic's per-step overhead and quorum) runs with the
        # all-reduce: once per step, whatever the stack depth
        params[K["P_T_AR"]] = scenario.t_allreduce + _pause(policy, "step_seconds", scenario)
        params[K["P_SAVE"]] = scenario.checkpoint_time
        params[K["P_RESTART"]] = scenario.restart_time
        params[K["P_INTERVAL"]] = interval.seconds
        params[K["P_N_STEPS"]] = scenario.n_steps
        params[K["P_INIT_DEPTH"]] = init_depth
        params[K["P_MAX_WALL"]] = scenario.max_wall_factor * scenario.t0
        params[K["P_FAIL_SECONDS"]] = fsec
        params[K["P_PATCH_SECONDS"]] = patch_cost
        params[K["P_PATCH_LAYERS"]] = 1.0 if scenario.charge_patch else 0.0
        mem = scenario.memory
        params[K["P_MEM_EVERY"]] = math.inf if mem is None else mem.every
        params[K["P_MEM_SAVE"]] = 0.0 if mem is None else mem.save
        params[K["P_MEM_RESTORE"]] = 0.0 if mem is None else mem.restore
        params[K["P_DROP_PAUSE"]] = _pause(policy, "drop_seconds", scenario)
        params[K["P_REJOIN_PAUSE"]] = _pause(policy, "rejoin_seconds", scenario)
        params[K["P_DRAIN"]] = scenario.checkpoint_drain

        handler = policy.handler(scenario)
        if not callable(getattr(handler, "on_failures", None)) or not callable(getattr(handler, "restart", None)):
            raise TypeError(f"policy.handler must return a FailureHandler, got {type(handler).__name__}")
        self.kern, self.params, self.interval, self.init_depth, self.handler = kern, params, interval, init_depth, handler
        self.n_groups = scenario.n_groups
        self.seed = None  # set by simulate (the repairs' draws need it)
        self.holders = None if mem is None else _holders(scenario)
        self.repair = scenario.repair
        if self.repair is not None and not getattr(handler, "every_failure_restarts", False) \
                and scenario.failures.renews_all_at_restart:
            raise ValueError(
                f"[repair] with policy {getattr(policy, 'name', type(policy).__name__)!r} needs a failure model in "
                f"which a repaired group fails again on its own clock; failure model {scenario.failure_model!r} "
                "renews every group only at a global restart: use failures.model = \"node\" (node renewals)")
        cap = getattr(scenario.failures, "capacity_timeline", None)
        self.capacity = None if cap is None else cap(scenario.n_groups)
        if self.capacity is not None:
            # the log decides when nodes come back; a restart then resumes after costs.restart
            # (a memory restore or a detection delay would need their own delays here)
            for what, on in (("[repair]", self.repair is not None), ("an in-memory checkpoint tier", mem is not None),
                             ("failure classes", scenario.failure_classes is not None)):
                if on:
                    raise ValueError(f"a log of capacity events (failures.trace.event_column) does not go with {what}: "
                                     "the log decides when nodes come back")
        self.members = None
        if self.capacity is not None and self.capacity.grows and getattr(policy, "grows_on_capacity", False):
            # an elastic job on a log that adds nodes follows the fleet: it drops groups at the
            # removals and grows back from the idle nodes (FleetCapacity.membership); a log
            # without additions keeps the replay of its removals, as before
            npg = getattr(scenario.failures, "nodes_per_group", None) or 1
            self.members = _MembershipSource(*self.capacity.membership(scenario.n_groups, npg))
        # elastic.resume = "any": a restart of a job following the fleet resumes on the whole
        # groups the fleet fills once they are at least its fewest (None: once it is whole)
        self.resume_least = None
        if getattr(policy, "resume", "whole") == "any":
            if self.members is None:
                raise ValueError("elastic.resume = \"any\" needs a log of capacity events that adds nodes "
                                 "(failures.trace.event_column with additions): the job then follows the fleet "
                                 "and resumes on the groups it fills")
            self.resume_least = (policy.least_groups(), npg)
        # elastic.rendezvous = "per_instant": a join at the instant of an earlier change of the
        # membership pauses no more (the kernel's F_QUIET_JOIN)
        if getattr(policy, "rendezvous", "per_change") == "per_instant":
            if self.members is None:
                raise ValueError("elastic.rendezvous = \"per_instant\" needs a log of capacity events that adds "
                                 "nodes (failures.trace.event_column with additions): its instants' membership "
                                 "changes are what it prices")
            self.members.quiet_joins()
        return self


def _holders(scenario) -> np.ndarray:
    """The groups holding each group's in-memory snapshot copies (in other failure domains
    when the failure model has domains)."""
    from .recovery import copy_holders

    dom = None
    domains = getattr(scenario.failures, "domains", None)
    if callable(domains):
        try:
            dom = domains(scenario.n_groups).labels[0]
        except (TypeError, ValueError, AttributeError):
            dom = None
    return copy_holders(scenario.n_groups, scenario.memory.copies, dom)


def _pause(policy, method: str, scenario) -> float:
    """A policy's optional pause or per-step cost (``drop_seconds``/``rejoin_seconds``/
    ``step_seconds``; 0 s when it has none)."""
    f = getattr(policy, method, None)
    return 0.0 if f is None else as_float(f(scenario), f"policy {method}", min_value=0.0)


class _MembershipSource:
    """The membership changes of an elastic job following a fleet (:meth:`FleetCapacity.membership
    <spare_core.events.trace_model.FleetCapacity.membership>`) as an epoch source: epoch ``k``
    starting at ``start`` holds the changes after ``start`` (from time 0 on in the first
    epoch), as offsets from it; :attr:`rejoin` flags the joins of the last epoch asked for."""

    def __init__(self, times, groups, rejoin):
        self._t, self._g, self._r = times, groups, rejoin
        self._q = None  # the joins that pause no more, when some do not
        self.quiet = None
        self._key = None

    def quiet_joins(self) -> None:
        """Mark the joins at the instant of an earlier change (their instant's reconfiguration
        is paid); :attr:`quiet` then holds, for the last epoch asked for, True at those joins."""
        same = np.zeros(self._t.shape[0], dtype=bool)
        same[1:] = self._t[1:] == self._t[:-1]
        self._q = same & (self._r != 0)
        self._key = None

    def _epoch(self, k, start):
        if self._key != (k, start):
            i = int(np.searchsorted(self._t, start, side="left" if k == 0 else "right"))
            self._rel = self._t[i:] - start
            self._groups, self.rejoin = self._g[i:], self._r[i:]
            self.quiet = None if self._q is None else self._q[i:]
            self._key = (k, start)

    def get(self, k, need, want=0, *, start):
        self._epoch(k, start)
        return self._rel, self._groups

    def times(self, k, need, want=0, *, start):
        self._epoch(k, start)
        return self._rel

    def next_time(self, k, i, *, start):
        self._epoch(k, start)
        return float(self._rel[i]) if i < self._rel.shape[0] else math.inf


def _clocked(plan: _RunPlan, source):
    """The batch loop's source: on the job's compute clock (``plan.compute``) the log read
    through :class:`_ComputeClock`, which the loop tells each restart (``plan.clock``)."""
    plan.clock = _ComputeClock(source) if plan.compute else None
    return source if plan.clock is None else plan.clock


class _ComputeClock:
    """An epoch source whose failure times are the job's computing time (``failures.clock =
    "compute"``): epoch ``k``, starting at wall time ``start`` after the job was down ``off_k``
    seconds in all, reads the log's rows after ``x = start - off_k`` (a row within a rounding
    of ``x``, the restart's own failure, counting as at it: the capacity logs' tolerance), each
    at ``start`` plus its time less ``x``, so a row at log time ``e`` comes at wall time
    ``e + off_k`` and none falls inside a restart. The run tells it each restart
    (:meth:`restarted`); ``restart_epochs`` does the same arithmetic in C."""

    def __init__(self, source):
        self._src, self._off = source, [0.0]
        self._last = None  # (the inner times array, its length, the shift, the shifted array)
        for name in ("epoch_consumed", "rows", "log"):  # what some sources offer, passed on
            if hasattr(source, name):
                setattr(self, name, getattr(source, name))

    def restarted(self, epoch: int, failed: float, resume: float) -> None:
        """Epoch ``epoch`` ended with a restart: the job was down from ``failed`` to ``resume``."""
        self._off.append(self._off[epoch] + (resume - failed))

    def _start(self, k, start):
        """The inner source's start (the rows after it) and what turns its times into times
        after ``x``."""
        off = self._off[k]
        if off == 0.0:
            return start, 0.0
        x = start - off
        xs = x + 1e-9 * (abs(x) if abs(x) > 1.0 else 1.0)
        return xs, xs - x

    def _shift(self, t, d):
        if d == 0.0:
            return t
        last = self._last
        if last is None or last[0] is not t or last[1] != t.shape[0] or last[2] != d:
            last = self._last = (t, t.shape[0], d, t + d)
        return last[3]

    def get(self, k, need, want=0, *, start):
        xs, d = self._start(k, start)
        t, u = self._src.get(k, need, want, start=xs)
        return self._shift(t, d), u

    def times(self, k, need, want=0, *, start):
        xs, d = self._start(k, start)
        return self._shift(self._src.times(k, need, want, start=xs), d)

    def next_time(self, k, i, *, start):
        xs, d = self._start(k, start)
        return self._src.next_time(k, i, start=xs) + d

    def retire(self, k, lo, hi, *, start):
        return self._src.retire(k, lo, hi, start=self._start(k, start)[0])


class _CheckedSource:
    """A user's :class:`EpochSource` whose answers are checked before the compiled kernel
    reads them: 1-d finite times >= 0 in increasing order, integer groups in range and as
    many as times, a real ``next_time`` (a negative time made the kernel loop for ever; a
    list or a 2-d array was an AttributeError or a Cython buffer message)."""

    def __init__(self, source, n_groups: int):
        self._src, self._n, self._name = source, n_groups, type(source).__name__
        consumed = getattr(source, "epoch_consumed", None)
        if consumed is not None:  # a source that reads ahead still hears where each epoch ended
            self.epoch_consumed = consumed

    def _times(self, rel, method: str) -> np.ndarray:
        try:
            t = np.ascontiguousarray(rel, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{self._name}.{method} must return float times, got {type(rel).__name__}") from None
        if t.ndim != 1:
            raise ValueError(f"{self._name}.{method} must return a 1-d array of times, got shape {t.shape}")
        if t.size and not (t[0] >= 0.0 and np.all(t[1:] >= t[:-1]) and t[-1] < math.inf):
            raise ValueError(f"{self._name}.{method} must return finite times >= 0 in increasing order, "
                             f"got {t[:8].tolist()}{' ...' if t.size > 8 else ''}")
        return t

    def times(self, k, need, want=0, *, start):
        return self._times(self._src.times(k, need, want, start=start), "times")

    def get(self, k, need, want=0, *, start):
        got = self._src.get(k, need, want, start=start)
        if not (isinstance(got, tuple) and len(got) == 2):
            raise TypeError(f"{self._name}.get must return (times, groups), got {type(got).__name__}")
        t = self._times(got[0], "get")
        g = np.asarray(got[1])
        if g.dtype.kind not in "iu" or g.shape != t.shape:
            raise ValueError(f"{self._name}.get must return integer groups, one per time ({t.shape[0]}), "
                             f"got dtype {g.dtype} and shape {g.shape}")
        if g.size and not (g.min() >= 0 and g.max() < self._n):
            raise ValueError(f"{self._name}.get returned a group outside [0, {self._n}): {g.min()} .. {g.max()}")
        return t, np.ascontiguousarray(g, dtype=np.int64)

    def next_time(self, k, i, *, start):
        v = self._src.next_time(k, i, start=start)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not v >= 0.0:
            raise ValueError(f"{self._name}.next_time must return a time >= 0 (inf: no more failures), got {v!r}")
        return float(v)


_ROW_CLASSES: dict = {}  # (id(trace), id(classes)) -> (trace, classes, the class of each row)


def _log_row_classes(scenario: Scenario) -> np.ndarray:
    """The class of each row of the scenario's replayed log (its cause column's values mapped
    by the classes' ``values``), computed once per log and classes (runs of a sweep share it)."""
    tr = getattr(scenario.failures, "trace", None)
    if tr is None or getattr(tr, "reasons", None) is None:
        raise ValueError("failure classes with values need a replayed failure log with a cause column "
                         "(failures.model = \"trace\" and failures.trace.reason_column)")
    cl = scenario.failure_classes
    key = (id(tr), id(cl))
    hit = _ROW_CLASSES.get(key)
    if hit is None or hit[0] is not tr or hit[1] is not cl:
        if len(_ROW_CLASSES) >= 16:
            _ROW_CLASSES.clear()
        hit = _ROW_CLASSES[key] = (tr, cl, cl.row_classes(tr.reasons))
    return hit[2]


class _LoopOutcome:
    """What the batch loop leaves: the kernel state, the last status, the counters and the
    per-epoch / per-failure records."""

    __slots__ = ("state", "status", "seen", "masked", "restarts", "rejoins", "ep_start", "ep_end", "ep_fail", "tl",
                 "class_restarts", "spares", "retired")

    def __init__(self, **kw):
        self.class_restarts = self.spares = 0
        self.retired = None  # [fleet] retire_after: when each retired node left (RepairBook.retired)
        for k, v in kw.items():
            setattr(self, k, v)


def _run_batches(plan: _RunPlan, source, mults: StepMultipliers, timeline: bool, draws=None) -> _LoopOutcome:
    """The batch loop: failures pulled from ``source`` in batches, the handler decides a batch
    at once, the compiled kernel walks the steps, saves and restarts between them.

    With repairs (``plan.repair``) the source hands out every failure of the log and the
    compiled ``merge_repairs`` turns a batch into the job's events: failures of groups in the
    job and the rejoins of swapped groups, with the spare pool's timing. With an in-memory
    tier (``plan.holders``) a restart restores from memory when every group without the last
    snapshot keeps a copy on a group that has it (:func:`_restore_kind`).

    With failure classes (``draws``, :class:`spare_core.sim.classes.ClassDraws`) each failure
    carries its detection time to the kernel (``fdetect``), and a batch stops at its first
    failure of a class no strategy masks: the handler is asked about the failures before it
    only, and that failure is a restart whatever the handler would say. A job-wide one
    (``recovery = "restart"``) takes no spare and no group out: it is not merged into the
    repair book, and it does not cost its group its snapshot copies.

    With an elastic job following a fleet (``plan.members``, a log of capacity events that
    adds nodes) the source is the fleet's drops and joins (:class:`_MembershipSource`), handed
    to the handler's ``on_events`` a batch at a time; a restart waits for the fleet as any
    restart on the log does."""
    kern, params, handler, init_depth = plan.kern, plan.params, plan.handler, plan.init_depth
    # domain classes: the source's events and their classes (an event's detection charged once)
    dom = draws if isinstance(draws, DomainEpochs) else None
    K = kern.SLOTS
    mult = mults.chunk()
    state = kern.new_state(init_depth, 0.0)
    MIDX, ACT_END, T_MEM = K["ST_MULT_IDX"], K["ST_ACT_END"], K["ST_T_MEM"]
    NEED_FAILURES = K["NEED_FAILURES"]
    DONE, RESTARTED, NEED_MULT, TIMEOUT = K["DONE"], K["RESTARTED"], K["NEED_MULT"], K["TIMEOUT"]
    BAD_OUTCOME = K["BAD_OUTCOME"]
    advance = kern.advance
    max_wall = float(params[K["P_MAX_WALL"]])
    holders = plan.holders
    book = None
    if plan.repair is not None:
        from .recovery import RepairBook

        book = RepairBook(plan.repair, plan.n_groups, plan.seed)
    # with a memory tier: the time since which each group is up without a break (-inf: all
    # epoch; inf: down), which says who still holds the last snapshot and its copies
    up_since = np.full(plan.n_groups, -math.inf) if holders is not None else None

    seen = masked = restarts = rejoins = seen_before = 0  # seen_before: failures of earlier epochs
    class_restarts = 0
    tl_t, tl_g, tl_r, tl_d, tl_c = [], [], [], [], []
    fdet = tl_cls = None
    wide = False
    ep_start, ep_end, ep_fail = [0.0], [], []
    hint = max(1, int(getattr(handler, "batch_hint", 16)))
    batch = hint
    # a handler that never reads the group ids gets placeholders, and the stream then draws
    # no victims for epochs nobody else needs (the times, and every later draw, are unchanged)
    blind = not timeline and not getattr(handler, "needs_groups", True) and book is None and holders is None
    if blind:
        placeholder = np.full(max(hint, _MAX_BATCH), -1, dtype=np.int64)
        placeholder.flags.writeable = False
    epoch, start, pos = 0, 0.0, 0  # epoch index, its start time, failures consumed in it
    # a source that reads ahead of the run (RunFailures over a trace) learns where each epoch ended
    report_consumed = getattr(source, "epoch_consumed", None)
    retire = None
    if book is not None and (plan.repair.retire_after or getattr(getattr(source, "log", None), "_ret", None) is not None):
        _check_retire(plan.repair, getattr(source, "log", None))
        retire = source.retire
        book.never_after(max_wall)
    status = None
    members = plan.members
    if members is not None:
        # the fleet's changes replace the replay of its removals (whose reader hears nothing)
        source, blind, report_consumed = members, False, None
    while True:
        ready = None
        if blind:
            rel = source.times(epoch, pos + 1, pos + batch, start=start)
            stop = min(pos + batch, rel.shape[0])
            fgroup = placeholder[: stop - pos]
        else:
            rel, units = source.get(epoch, pos + 1, pos + batch, start=start)
            stop = min(pos + batch, rel.shape[0])
            fgroup = units[pos:stop]
        forced = -1  # the batch's first failure no strategy masks (failure classes), its index
        if draws is not None:
            cls_all, det_all = draws.at(epoch, stop)
            hit = np.flatnonzero(draws.forced(cls_all[pos:stop]))
            if hit.size:
                forced = pos + int(hit[0])
                wide = draws.job_wide(int(cls_all[forced]))
        closing = False  # the batch closes with the forced restart
        if members is not None:
            # an elastic job following the fleet: its drops and joins, decided at once
            joins = members.rejoin[pos:stop]
            out = _check_outcomes(handler.on_events(fgroup, joins), fgroup.shape[0])
            n = out.restart.shape[0]
            if members.quiet is not None:
                quiet = members.quiet[pos : pos + n] & (out.restart == REJOINED)
                if quiet.any():  # a new Outcomes: a handler's answer stays as it is
                    out = Outcomes(np.where(quiet, K["F_QUIET_JOIN"], out.restart).astype(np.int8), out.depth,
                                   out.patch_layers, out.worth)
            frel, is_rejoin = rel[pos : pos + n], joins[:n]
            least = plan.resume_least
            ready = plan.capacity.ready(start + frel, plan.params[K["P_RESTART"]],
                                        None if least is None else least[0] * least[1])
        elif book is None:
            if forced < 0:
                out = _check_outcomes(handler.on_failures(fgroup), fgroup.shape[0])
            else:
                k = forced - pos
                out = _check_outcomes(handler.on_failures(fgroup[:k]), k) if k else _NO_OUTCOMES
                if out.restart.shape[0] == k and not (k and out.restart[k - 1] in (RESTART, RESTART_MEMORY)):
                    out, closing = _with_restart(out, init_depth), True
            n = out.restart.shape[0]
            frel = rel[pos : pos + n]
            is_rejoin = None
            if plan.capacity is not None:
                # a restart resumes once the fleet holds the job's nodes again (the log's capacity)
                ready = plan.capacity.ready(start + frel, plan.params[K["P_RESTART"]])
            if draws is not None:
                fdet = det_all[pos : pos + n]
                if dom is not None:
                    fdet = dom.once(np.arange(pos, pos + n), np.ones(n, dtype=bool), fdet)
                if timeline:
                    tl_cls = cls_all[pos : pos + n]
        else:
            hi = stop
            if forced >= 0 and wide:
                # a job-wide fault is not a node's: the book merges the failures before it only
                hi, raw_next = forced, start + float(rel[forced])
            else:
                if forced >= 0:
                    hi = forced + 1
                raw_next = start + source.next_time(epoch, hi, start=start)
            max_out = max(batch, 1) + 1
            # [fleet] retire_after: which of the batch's failures retire their node
            ret = retire(epoch, pos, hi, start=start) if retire is not None else None
            frel, fgroup, is_rejoin, ready, pool_old, raw_idx, used = book.merge(
                rel[pos:hi], fgroup[: hi - pos], start, raw_next, max_out, ret)
            # the book's own events of the batch: a job-wide fault appended below is not one
            # (it took nothing from the pool, so a restart's undo and the spare count skip it)
            merged = frel.shape[0]
            e = -1  # the forced failure's event
            if forced >= 0:
                if wide:
                    if used == hi - pos and frel.shape[0] < max_out:  # every event before it is merged
                        e = frel.shape[0]
                        frel = np.append(frel, rel[forced])
                        fgroup = np.append(fgroup, units[forced])
                        is_rejoin = np.append(is_rejoin, np.int8(0))
                        ready = np.append(ready, book.ready())  # the replacements already under way
                        pool_old = np.append(pool_old, 0.0)
                        raw_idx = np.append(raw_idx, forced - pos)
                else:
                    at = np.flatnonzero((is_rejoin == 0) & (raw_idx == forced - pos))
                    if at.size:  # merged (not a failure of a group already out): the batch ends there
                        e = int(at[0])
                        frel, fgroup, is_rejoin, ready = frel[: e + 1], fgroup[: e + 1], is_rejoin[: e + 1], ready[: e + 1]
                        pool_old, raw_idx = pool_old[: e + 1], raw_idx[: e + 1]
                        merged = e + 1
            on_events = getattr(handler, "on_events", None)
            if on_events is None:
                raise TypeError(f"{type(handler).__name__} has no on_events(groups, rejoin): it cannot run with [repair]")
            if e < 0:
                out = _check_outcomes(on_events(fgroup, is_rejoin), fgroup.shape[0])
            else:
                out = _check_outcomes(on_events(fgroup[:e], is_rejoin[:e]), e) if e else _NO_OUTCOMES
                if out.restart.shape[0] == e and not (e and out.restart[e - 1] in (RESTART, RESTART_MEMORY)):
                    out, closing = _with_restart(out, init_depth), True
            n = out.restart.shape[0]
            frel, ready = frel[:n], ready[:n]
            if draws is not None:
                ev = pos + np.maximum(raw_idx[:n], 0)
                # a rejoin reads no row of the draws: past a finite log's last failure (a replay's
                # domain events hold no row ahead) its index is beyond them
                fail = is_rejoin[:n] == 0
                fdet = np.zeros(n)
                fdet[fail] = det_all[ev[fail]]
                if dom is not None:  # the first copy the book merges: copies of groups out are dropped
                    fdet = dom.once(ev, fail, fdet)
                if timeline:
                    tl_cls = np.full(n, -1, dtype=np.int8)
                    tl_cls[fail] = cls_all[ev[fail]]
        last_restart = n > 0 and out.restart[n - 1] in (RESTART, RESTART_MEMORY)
        j, walked = 0, False
        if last_restart:
            t_next = math.inf  # the batch ends with a restart: nothing after it matters
            if holders is not None and out.restart[n - 1] == RESTART:
                # which copies survive depends on the last snapshot before the restart: walk
                # the batch up to the restart's failure first (the snapshot time is the kernel's)
                tr = start + float(frel[n - 1])
                status, j, mult = _advance_all(advance, state, params, _head(frel, n - 1), start, _head(out, n - 1),
                                               _head(ready, n - 1), j, tr, mult, mults, MIDX, NEED_MULT, BAD_OUTCOME,
                                               _head(fdet, n - 1))
                walked = status != NEED_FAILURES  # done or out of time before the restart
                if not walked:
                    after = pos + n if book is None else pos + int(raw_idx[n - 1]) + 1
                    now = up_since.copy()
                    # a job-wide fault takes no node: its group keeps its host memory
                    m_up = n - 1 if closing and wide else n
                    _mark_up(now, fgroup[:m_up], None if is_rejoin is None else is_rejoin[:m_up],
                             frel[:m_up] + start)
                    out = _restore_kind(out, n, holders, now, float(state[T_MEM]), source, epoch, start, after, frel)
        elif book is None:  # a plain replay, or a fleet's membership changes
            t_next = start + source.next_time(epoch, pos + n, start=start)
        else:
            nxt = start + rel[pos + used] if pos + used < hi else raw_next
            t_next = min(nxt, book.next_rejoin(start))
        if not walked:
            status, j, mult = _advance_all(advance, state, params, frel, start, out, ready, j, t_next, mult, mults,
                                           MIDX, NEED_MULT, BAD_OUTCOME, fdet)
        n_restart = 1 if status == RESTARTED else 0  # a restart is always the last consumed
        if dom is not None and j:
            if book is None:
                dom.commit(np.arange(pos, pos + j), np.ones(j, dtype=bool))
            else:
                dom.commit(pos + np.maximum(raw_idx[:j], 0), is_rejoin[:j] == 0)
        if closing and n_restart:
            class_restarts += 1
        n_rejoin = 0 if is_rejoin is None else int(is_rejoin[:j].sum())
        n_fail = j - n_rejoin
        seen += n_fail
        restarts += n_restart
        rejoins += n_rejoin
        masked += n_fail - n_restart
        if book is None:
            pos += j
        elif status == RESTARTED:
            pos += int(raw_idx[j - 1]) + 1
        else:
            pos += used
        if up_since is not None and j:
            _mark_up(up_since, fgroup[:j], None if is_rejoin is None else is_rejoin[:j], frel[:j] + start)
        if timeline:
            keep = slice(None) if is_rejoin is None else (is_rejoin[:j] == 0)
            tl_t.append((frel[:j] + start)[keep])
            tl_g.append(np.array(fgroup[:j])[keep])
            kinds = out.restart[:j]
            tl_r.append(((kinds == RESTART) | (kinds == RESTART_MEMORY))[keep])
            d = out.depth[:j].copy()
            if n_restart:
                d[j - 1] = init_depth
            tl_d.append(d[keep])
            if draws is not None:
                tl_c.append(tl_cls[:j][keep])
        if status == RESTARTED:
            resume = float(state[ACT_END])
            ep_end.append(start + float(frel[j - 1]))
            if plan.clock is not None:
                plan.clock.restarted(epoch, ep_end[-1], resume)
            ep_fail.append(seen - seen_before)
            seen_before = seen
            ep_start.append(resume)
            if report_consumed is not None:
                report_consumed(epoch, pos)
            epoch, start, pos = epoch + 1, resume, 0
            handler.restart()
            if plan.resume_least is not None:
                # the job resumes on the groups the fleet fills then (the membership stream's
                # state at the resume, whose changes up to it the next epoch skips); past the
                # log's end the fleet is taken as whole, as a restart that waits until then
                least, npg = plan.resume_least
                live = n_g = plan.n_groups
                if resume < plan.capacity.end:
                    live = max(least, plan.capacity.groups_at(resume, n_g, npg))
                state[K["ST_DEPTH"]], state[K["ST_WORTH"]] = handler.resume_at(live)
            if book is not None:
                book.restart(is_rejoin[:merged], pool_old[:merged], min(j, merged))
            if up_since is not None:
                # every group is back, holding the state it resumed from (the clock of the next
                # snapshot starts at the resume)
                up_since[:] = -math.inf
            batch = hint
            if resume > max_wall:
                # the restart ends past the wall limit: the kernel stops there (TIMEOUT) whatever
                # the next epoch holds, so the source is never asked for it (a node log would be
                # drawn up to that start, chunk by chunk, for ever); the kernel, given no
                # failure, cuts the restart at the limit
                status, j, mult = _advance_all(advance, state, params, _NO_EVENTS, start, _NO_OUTCOMES, None, 0,
                                               math.inf, mult, mults, MIDX, NEED_MULT, BAD_OUTCOME, None)
                is_rejoin = None  # the batch was consumed up to its restart
                break
            continue
        if status == DONE or status == TIMEOUT:
            break
        batch = min(2 * batch, _MAX_BATCH)
    ep_fail.append(seen - seen_before)
    spares = 0
    if book is not None:
        spares = book.taken()
        if status in (DONE, TIMEOUT) and is_rejoin is not None:
            # the failures of the last batch that the run did not reach took their spares in the merge
            spares -= int((is_rejoin[j:merged] == 0).sum())
    return _LoopOutcome(state=state, status=status, seen=seen, masked=masked, restarts=restarts, rejoins=rejoins,
                        ep_start=ep_start, ep_end=ep_end, ep_fail=ep_fail,
                        tl=(tl_t, tl_g, tl_r, tl_d, tl_c if draws is not None else None) if timeline else None,
                        class_restarts=class_restarts, spares=spares,
                        retired=None if retire is None else book.retired())


# epochs a call of the compiled restart loop records before it hands them back
_EPOCH_RECORDS = 4096
# epochs whose first failure's class the compiled restart loop is given at once
_CLASS_CHUNK = 1024
_NO_REPAIRS = np.zeros(0)
_NO_HOLDERS = np.zeros((0, 0), dtype=np.int64)


def _check_retire(repair, log) -> None:
    """The log marks retirements ([fleet] retire_after) and the pool must agree: a retired node
    is never back, which only the set-of-return-times pool (``Repairs.drawn``) handles."""
    if log is None or not hasattr(log, "retire_after"):
        raise ValueError("Repairs.retire_after needs a node failure log (failures.model = 'node') that marks the "
                         "retirements (NodeRenewals.retire_after)")
    if repair.retire_after != log.retire_after:
        raise ValueError(f"the failure model retires a node after {log.retire_after} failures but "
                         f"Repairs.retire_after is {repair.retire_after}: give both the same ([fleet] retire_after)")


def _restart_epochs(plan: _RunPlan, source: NodeEpochs, mults: StepMultipliers, draws=None) -> _LoopOutcome:
    """The batch loop of a run whose every failure restarts (a handler with
    ``constant_restarts``) on a node failure log, in the compiled ``restart_epochs``: one
    epoch is one failure and one restart, walked in C with the spare pool's rule and the
    memory tier's restore decision; Python only draws multipliers and extends the log. The
    same results as :func:`_run_batches`, bit for bit (tests/test_restart_epochs.py).

    With failure classes (``draws``) the kernel reads the class flags and detection of each
    epoch's failure from arrays drawn up to :data:`_CLASS_CHUNK` epochs at a time
    (:meth:`spare_core.sim.classes.ClassDraws.first`). On the job's compute clock
    (``plan.compute``, ``failures.clock``) the kernel shifts the log as :class:`_ComputeClock` does."""
    kern, params = plan.kern, plan.params
    K = kern.CONSTANTS
    NEED_MULT, NEED_LOG, FULL, BAD_LOG = K["NEED_MULT"], K["NEED_LOG"], K["RECORDS_FULL"], K["BAD_LOG"]
    NREC, MIDX = K["E_NREC"], K["ST_MULT_IDX"]
    NEED_CLASSES = K["NEED_CLASSES"]
    state = kern.new_state(plan.init_depth, 0.0)
    io = np.zeros(K["N_EPOCH_IO"])
    io[K["E_CLOCK"]] = 1.0 if plan.compute else 0.0
    if plan.repair is not None:
        from .recovery import RepairBook

        book = RepairBook(plan.repair, plan.n_groups, plan.seed)
        rs, pool = book.rs, book.pool
    else:
        book = None
        rs, pool = _NO_REPAIRS, _NO_REPAIRS
    holders = _NO_HOLDERS if plan.holders is None else np.ascontiguousarray(plan.holders, dtype=np.int64)
    rec_end, rec_start = np.empty(_EPOCH_RECORDS), np.empty(_EPOCH_RECORDS)
    ep_start, ep_end = [0.0], []
    log = source.log
    mult = mults.chunk()
    flags = det = None
    chunk = 64  # then doubled up to _CLASS_CHUNK: a run with few restarts draws few classes
    if draws is not None:
        flags, det = draws.first(0, chunk)
    while True:
        log_t, log_g = log.arrays()
        # drawn repairs: two takes at most per epoch recorded in this call
        extra = () if book is None else book.draw_args(2 * _EPOCH_RECORDS)
        log_r = log.retire_flags() if book is not None else None  # [fleet] retire_after
        if book is not None and (log_r is not None or plan.repair.retire_after):
            _check_retire(plan.repair, log)
            book.never_after(float(params[K["P_MAX_WALL"]]))
        status = kern.restart_epochs(state, params, io, log_t, log_g, log.horizon, rs, pool, holders, mult,
                                     rec_end, rec_start, flags, det, *extra, log_r=log_r,
                                     take_ret=None if book is None else book.take_ret())
        n = int(io[NREC])
        if n:
            ep_end.extend(rec_end[:n].tolist())
            ep_start.extend(rec_start[:n].tolist())
            io[NREC] = 0
        if status == NEED_MULT:
            mult = mults.chunk()
            state[MIDX] = 0.0
        elif status == NEED_LOG:
            log.extend()
        elif status == NEED_CLASSES:
            base = int(io[K["E_EPOCH"]])
            chunk = min(2 * chunk, _CLASS_CHUNK)
            flags, det = draws.first(base, chunk)
            io[K["E_CLS_BASE"]] = base
        elif status == BAD_LOG:
            raise ValueError(f"the failure log names a group outside [0, {plan.n_groups})")
        elif status != FULL:
            break
    n = len(ep_end)
    # a failure found, its spare taken, that the run ended before
    pending = 1 if int(io[K["E_PHASE"]]) in (K["PH_WALK"], K["PH_EVENT"]) and io[K["E_TOOK"]] else 0
    return _LoopOutcome(state=state, status=status, seen=n, masked=0, restarts=n, rejoins=0, ep_start=ep_start,
                        ep_end=ep_end, ep_fail=[1] * n + [0], tl=None, class_restarts=int(io[K["E_NFORCED"]]),
                        spares=0 if plan.repair is None else book.taken() - pending,
                        retired=None if book is None or not plan.repair.retire_after else book.retired())


_NO_EVENTS = np.zeros(0)
_NO_OUTCOMES = Outcomes(np.zeros(0, dtype=np.int8), np.zeros(0), np.zeros(0), None)


def _with_restart(out: Outcomes, init_depth: float) -> Outcomes:
    """``out`` (the handler's answers, none a restart) followed by a forced restart."""
    return Outcomes(np.append(out.restart, np.int8(RESTART)), np.append(out.depth, init_depth),
                    np.append(out.patch_layers, 0.0), None if out.worth is None else np.append(out.worth, 1.0))


def _head(a, n):
    """The first ``n`` events of a batch (arrays or :class:`Outcomes`; None stays None)."""
    if a is None:
        return None
    if isinstance(a, Outcomes):
        return Outcomes(a.restart[:n], a.depth[:n], a.patch_layers[:n], None if a.worth is None else a.worth[:n])
    return a[:n]


def _advance_all(advance, state, params, frel, start, out, ready, j, t_next, mult, mults, MIDX, NEED_MULT,
                 BAD_OUTCOME, detect=None):
    """The kernel's ``advance`` through a batch, drawing step multipliers as it needs them;
    returns ``(status, next index, multipliers)``."""
    while True:
        status, j = advance(state, params, frel, start, out.restart, out.depth, out.patch_layers, j, t_next, mult,
                            out.worth, ready, detect)
        if status != NEED_MULT:
            if status == BAD_OUTCOME:
                _bad_outcome(out, j)
            return status, j, mult
        mult = mults.chunk()
        state[MIDX] = 0.0


def _mark_up(up_since: np.ndarray, groups: np.ndarray, rejoin, times: np.ndarray) -> None:
    """``up_since`` after the consumed events: a failure takes its group down (inf), a rejoin
    brings it back at its time; the last event of a group decides."""
    if rejoin is None:
        up_since[groups] = math.inf
        return
    g = groups[::-1]
    u, idx = np.unique(g, return_index=True)
    up_since[u] = np.where(rejoin[::-1][idx] == 0, math.inf, times[::-1][idx])


def _restore_kind(out, n, holders, up_since, snapshot, source, epoch, start, after, frel) -> Outcomes:
    """``out`` with the batch's closing restart turned into a restore from the in-memory tier
    when every group without the last snapshot keeps a copy on a group that has it (a new
    :class:`Outcomes`: a handler may hand out one shared, constant answer, which must stay as it is).

    A group has the snapshot (its own and the copies it holds for others) when it has been up
    without a break since the snapshot ended at ``snapshot``: a group down then, or failing
    since (replaced, its host memory with it), holds nothing until the next snapshot.
    ``up_since`` covers the batch's events up to the restart; the failures at the restart's very
    time are added here (a domain event takes its groups at once)."""
    now = up_since
    t = frel[n - 1]
    i = after
    while True:  # the failures at the same instant, however far the batch reached
        rel, units = source.get(epoch, i + 1, i + 8, start=start)
        if rel.shape[0] <= i or rel[i] != t:
            break
        now[units[i]] = math.inf
        i += 1
    gone = ~(now < snapshot)
    g = np.flatnonzero(gone)
    if g.size == 0 or not gone[holders[g]].all(axis=1).any():
        kinds = out.restart.copy()
        kinds[n - 1] = RESTART_MEMORY
        return Outcomes(kinds, out.depth, out.patch_layers, out.worth)
    return out


def _retired_gpu_hours(scenario: Scenario, retired, wall: float) -> float:
    """The GPU-hours the fleet no longer holds once nodes retire: each node retired before the
    run's end, its GPUs from then to the end. 0 without retirement or GPUs, and with an unlimited
    pool (it is not paid for: a retired node's replacement comes from it, the fleet paid for
    keeps its size)."""
    if retired is None or scenario.gpus_per_group is None or scenario.repair is None \
            or scenario.repair.spares is None:
        return 0.0
    t = retired[retired < wall]
    return scenario.repair.gpus_per_node * float(np.sum(wall - t)) / 3600.0 if t.size else 0.0


def _prices(scenario: Scenario) -> dict:
    """The run's tokens and both prices (:class:`~spare_core.sim.recovery.Pricing`; 0 where not
    given), for its cost per token."""
    pr = scenario.pricing
    if pr is None:
        return {}
    tps = pr.tokens_per_step
    return {"tokens": 0.0 if tps is None else scenario.n_steps * tps, "on_demand_gpu_hour_price": pr.gpu_hour,
            "spot_gpu_hour_price": 0.0 if pr.spot_gpu_hour is None else pr.spot_gpu_hour}


def _assemble(scenario: Scenario, policy, seed, plan: _RunPlan, loop: _LoopOutcome) -> RunResult:
    """The :class:`RunResult` (and :class:`Timeline`) of a finished batch loop."""
    K = plan.kern.SLOTS
    state, params = loop.state, plan.params
    finished = loop.status == K["DONE"]
    wall = float(state[K["ST_FINISH"]]) if finished else float(params[K["P_MAX_WALL"]])
    ep_end = loop.ep_end + [wall]
    committed = float(state[K["ST_COMMITTED"]])
    useful = float(state[K["ST_USEFUL"]])
    t0 = scenario.t0
    tl = None
    if loop.tl is not None:
        tl_t, tl_g, tl_r, tl_d, tl_c = loop.tl
        tl = Timeline(
            failure_time=np.concatenate(tl_t) if tl_t else np.zeros(0),
            failure_group=np.concatenate(tl_g) if tl_g else np.zeros(0, dtype=np.int64),
            failure_restart=np.concatenate(tl_r) if tl_r else np.zeros(0, dtype=bool),
            depth_after=np.concatenate(tl_d) if tl_d else np.zeros(0),
            epoch_start=np.array(loop.ep_start),
            epoch_end=np.array(ep_end),
            epoch_failures=np.array(loop.ep_fail, dtype=np.int64),
            failure_class=None if tl_c is None else (np.concatenate(tl_c) if tl_c else np.zeros(0, dtype=np.int8)),
        )
    wipe = bool(getattr(policy, "restart_is_wipeout", True))
    gpus = 0
    if scenario.gpus_per_group is not None:
        gpus = scenario.n_groups * scenario.gpus_per_group + (0 if scenario.repair is None else scenario.repair.spare_gpus)
    restarts = loop.restarts
    return RunResult(
        policy=str(getattr(policy, "name", type(policy).__name__)),
        redundancy=int(getattr(policy, "redundancy", 1)),
        scenario=scenario.name,
        failure_model=scenario.failure_description,
        seed=seed if not isinstance(seed, np.random.SeedSequence) else repr(seed.entropy),
        finished=finished,
        time_to_train=wall if finished else math.inf,
        t0=t0,
        ratio=wall / t0 if finished else math.inf,
        wall_time=wall,
        progress=committed / scenario.n_steps,
        availability=useful / wall if wall > 0 else 0.0,
        overhead=float(state[K["ST_LAYERS_USEFUL"]]) / committed if committed > 0 else float("nan"),
        failures_seen=loop.seen,
        failures_masked=loop.masked,
        failures_restart=restarts,
        wipeouts=restarts if wipe else 0,
        restarts=restarts,
        checkpoints=int(state[K["ST_N_CKPT"]]),
        epochs=len(loop.ep_start),
        checkpoint_interval=plan.interval.seconds,
        interval_rule=plan.interval.rule,
        lost_time=float(state[K["ST_LOST"]]),
        save_time=float(state[K["ST_SAVE_TOTAL"]]),
        restart_time=float(state[K["ST_RESTART_TOTAL"]]),
        steps_executed=int(state[K["ST_STEPS_EXEC"]]),
        rejoins=loop.rejoins,
        memory_snapshots=int(state[K["ST_N_MEM"]]),
        memory_restores=int(state[K["ST_N_MEM_RESTORE"]]),
        memory_save_time=float(state[K["ST_MEM_TOTAL"]]),
        wait_time=float(state[K["ST_WAIT_TOTAL"]]),
        pause_time=float(state[K["ST_PAUSE_TOTAL"]]),
        gpus_paid=gpus,
        # a fleet that follows a preemption log is spot capacity: its price, when given
        gpu_hour_price=0.0 if scenario.pricing is None else scenario.pricing.price(plan.capacity is not None),
        detect_time=float(state[K["ST_DETECT_TOTAL"]]),
        class_restarts=loop.class_restarts,
        spares_taken=loop.spares,
        retired_gpu_hours=_retired_gpu_hours(scenario, loop.retired, wall),
        **_prices(scenario),
        timeline=tl,
    )


def _check_outcomes(out, n_given: int) -> Outcomes:
    """Every handler's batch answer (a built-in's too: its ``on_failures`` may be replaced
    on the instance) must be well-formed before the kernel reads it: :class:`Outcomes` of
    numeric numpy arrays of one length, every failure up to the first restart answered (an
    empty answer to a non-empty batch would make the run loop for ever). The values (finite
    depths >= 1, finite patch layers >= 0, a restart only as the last entry) are checked by
    the ``_timeline`` kernel as it reads each answer (status ``BAD_OUTCOME``, reported by
    :func:`_bad_outcome`): free there, where numpy reductions on every small batch cost
    about a tenth of ``spare compare``."""
    if type(out) is not Outcomes and not isinstance(out, Outcomes):
        raise TypeError(f"on_failures must return Outcomes, got {type(out).__name__}")
    r, d, p = out.restart, out.depth, out.patch_layers
    if not (type(r) is np.ndarray and type(d) is np.ndarray and type(p) is np.ndarray
            and r.dtype == np.int8 and d.dtype == np.float64 and p.dtype == np.float64):
        out = _outcome_arrays(out)
        r, d, p = out.restart, out.depth, out.patch_layers
    n = r.shape[0]
    if r.ndim != 1 or d.shape != (n,) or p.shape != (n,):
        for name in ("restart", "depth", "patch_layers"):
            if getattr(out, name).shape != (n,):
                raise ValueError(f"outcomes.{name} must be an array of length {n}, "
                                 f"got shape {getattr(out, name).shape}")
    if n > n_given or (n < n_given and (n == 0 or r[n - 1] == 0)):
        raise ValueError(
            f"on_failures must process every failure up to the first restart: got {n} of {n_given}"
        )
    if not (r.flags.c_contiguous and d.flags.c_contiguous and p.flags.c_contiguous):
        out = Outcomes(np.ascontiguousarray(r), np.ascontiguousarray(d), np.ascontiguousarray(p), _worth(out.worth))
    return out


def _bad_outcome(out: Outcomes, j: int):
    """The ValueError of answer ``j`` of a batch, which the kernel refused (``BAD_OUTCOME``)."""
    d, p = out.depth[j : j + 1], out.patch_layers[j : j + 1]
    if (d >= 1.0).all() and (d < math.inf).all() and (p >= 0.0).all() and (p < math.inf).all():
        raise ValueError("outcomes may hold a restart only as the last entry, got one at "
                         f"{j} of {len(out)}")
    _bad_values(d, p)


def _outcome_arrays(out) -> Outcomes:
    """``out`` with int8 restarts and float64 depths and patches (numeric numpy arrays of
    another dtype are converted; anything else is a TypeError naming the field)."""
    for name in ("restart", "depth", "patch_layers"):  # before len(): lists have no shape
        a = getattr(out, name)
        if not isinstance(a, np.ndarray) or a.dtype.kind not in "iuf":
            raise TypeError(f"outcomes.{name} must be a numeric numpy array, got "
                            f"{type(a).__name__}{' of ' + str(a.dtype) if isinstance(a, np.ndarray) else ''}")
    if out.restart.dtype != np.int8:
        raise TypeError(f"outcomes.restart must be int8, got {out.restart.dtype}")
    if out.restart.ndim != 1:
        raise ValueError(f"outcomes.restart must be a 1-d array, got shape {out.restart.shape}")
    return Outcomes(out.restart, np.asarray(out.depth, dtype=np.float64),
                    np.asarray(out.patch_layers, dtype=np.float64), _worth(out.worth))


def _worth(worth):
    """A handler's step worths as the kernel reads them (None stays None)."""
    return None if worth is None else np.ascontiguousarray(worth, dtype=np.float64)


def _bad_values(depth: np.ndarray, patch: np.ndarray):
    """The ValueError of an answer with a depth outside [1, inf) or a patch outside [0, inf)."""
    bad_d = depth[~((depth >= 1.0) & (depth < math.inf))]
    bad_p = patch[~((patch >= 0.0) & (patch < math.inf))]
    what = (f"depths {bad_d[:4].tolist()}" if bad_d.size else "") + \
        (" and " if bad_d.size and bad_p.size else "") + (f"patch_layers {bad_p[:4].tolist()}" if bad_p.size else "")
    raise ValueError(f"outcomes need finite depths >= 1 and finite patch_layers >= 0, got {what}")
