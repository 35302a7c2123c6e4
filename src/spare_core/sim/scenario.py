"""The training scenario: cluster, step costs, failure process, restart and checkpoint costs."""
from __future__ import annotations

import math

import numpy as np

from .._seeding import run_seed
from .._validate import as_float, as_int
from ..events.models import FailureModel, failure_model_kinds
from ..strategies.spare.layout import MAX_GROUPS

__all__ = ["Scenario", "FAILURE_MODELS", "paper_allreduce_time"]

#: the built-in failure models by name (any registered kind is accepted, see
#: :func:`spare_core.events.failure_model_kinds`)
FAILURE_MODELS = ("per-unit", "system")

# keywords that describe the failure rate; they go into the failure model
_RATE_KEYS = {"system_mtbf": "system_mtbf", "weibull_shape": "shape", "lifetime": "lifetime"}

_PAPER_GPUS = 600_000
_LLAMA3_GPUS = 16_384


def paper_allreduce_time(n_groups) -> float:
    """All-reduce time of the SPARe paper's preset as a function of the number of groups N.

    The paper gives 2-10 s "growing with N" for N in {200, ..., 1000} without a formula. We
    take the line through its two end points, ``2 + 0.01 * (N - 200)`` seconds (2 s at
    N = 200, 6 s at N = 600, 10 s at N = 1000): a ring all-reduce's latency term
    ``2 (p - 1) alpha`` grows linearly with the number of participants. Floored at 1 s so
    that small N outside the paper's range stay positive.

    Parameters
    ----------
    n_groups : int
        N, >= 1.

    Returns
    -------
    float
        Seconds per all-reduce.

    Examples
    --------
    >>> paper_allreduce_time(200), paper_allreduce_time(600), paper_allreduce_time(1000)
    (2.0, 6.0, 10.0)
    """
    n = as_int(n_groups, "n_groups", min_value=1)
    return max(1.0, 2.0 + 0.01 * (n - 200))


def _failure_model(failure_model, *, system_mtbf, weibull_shape, lifetime, gpus_per_group) -> FailureModel:
    """The scenario's failure model from its keywords (see :class:`Scenario`)."""
    model = _rate_model(failure_model, system_mtbf=system_mtbf, weibull_shape=weibull_shape, lifetime=lifetime)
    # a model that maps nodes to groups takes the scenario's GPUs per group unless it has its own
    have = getattr(model, "gpus_per_group", 0)
    if gpus_per_group is not None and have is None and getattr(model, "nodes_per_group", None) is None:
        model = model.replace(gpus_per_group=gpus_per_group)
    elif gpus_per_group is not None and have and have != gpus_per_group:
        raise ValueError(
            f"gpus_per_group is given twice and disagrees: {gpus_per_group} but the failure model has {have}"
        )
    return model


def _rate_model(failure_model, *, system_mtbf, weibull_shape, lifetime) -> FailureModel:
    if system_mtbf is not None:
        system_mtbf = as_float(system_mtbf, "system_mtbf", min_value=0.0, strict_min=True)
    if weibull_shape is not None:
        weibull_shape = as_float(weibull_shape, "weibull_shape", min_value=0.0, strict_min=True)
    given = {"system_mtbf": system_mtbf, "shape": weibull_shape, "lifetime": lifetime}
    given = {k: v for k, v in given.items() if v is not None}
    if isinstance(failure_model, FailureModel):
        fill = {}
        for k, v in given.items():
            if not hasattr(failure_model, k):
                raise ValueError(
                    f"failure model {failure_model.kind!r} has no field {k!r}; give its rate in the model, "
                    f"got {'weibull_shape' if k == 'shape' else k}={v!r}"
                )
            have = getattr(failure_model, k)
            if have is None:
                fill[k] = v
            elif have != v:
                raise ValueError(
                    f"the rate is given twice and disagrees: {'weibull_shape' if k == 'shape' else k}={v!r} "
                    f"but the failure model has {k}={have!r}"
                )
        return failure_model.replace(**fill) if fill else failure_model
    if not isinstance(failure_model, str):
        raise TypeError(
            f"failure_model must be a name {failure_model_kinds()} or a FailureModel, "
            f"got {type(failure_model).__name__} {failure_model!r}"
        )
    return FailureModel.by_kind(failure_model)(**given)


def _preset_rate(kw: dict, overrides: dict) -> None:
    """Drop a preset's rate keywords when the caller gives the rate another way (a lifetime,
    or a failure model carrying its own), so that the rate is given once."""
    fm = overrides.get("failure_model")
    own = "lifetime" in overrides or (
        isinstance(fm, FailureModel)
        and (getattr(fm, "system_mtbf", None) is not None or getattr(fm, "lifetime", None) is not None)
    )
    if own:
        if "system_mtbf" not in overrides:
            kw.pop("system_mtbf", None)
        if "weibull_shape" not in overrides:
            kw.pop("weibull_shape", None)


class Scenario:
    """A training job under failures: what :func:`spare_core.sim.simulate` runs a policy on.

    Parameters
    ----------
    n_groups : int
        N, data-parallel groups (each a full model replica), >= 1.
    n_steps : int
        Training steps to complete, >= 1.
    t_compute : float
        Seconds to compute one stack layer (one data shard) in a step, > 0.
    t_allreduce : float
        Seconds of the gradient all-reduce ending each step, >= 0.
    system_mtbf : float, optional
        Long-run mean time between failures of the whole system, seconds, > 0. Goes into the
        failure model (required unless ``lifetime`` or a model carrying its rate is given).
    weibull_shape : float, optional
        Shape of the Weibull law built from ``system_mtbf``, > 0 (default 0.78).
    failure_model : str or FailureModel, default "per-unit"
        A :class:`spare_core.events.FailureModel` value, or the name of one
        (:func:`spare_core.events.failure_model_kinds`) built from ``system_mtbf``,
        ``weibull_shape`` and ``lifetime``. "per-unit" (:class:`~spare_core.events.GroupLifetimes`,
        the paper's): every group has a lifetime with mean ``N * system_mtbf``, all redrawn
        at each restart (failures burst after a restart). "system"
        (:class:`~spare_core.events.SystemRenewals`): one renewal process with mean
        ``system_mtbf`` whose failures hit a uniformly random alive group. Rate keywords given
        next to a model fill the fields it leaves unset; a rate given twice must agree.
    lifetime : Distribution, optional
        The law itself instead of ``system_mtbf``: the per-group lifetime ("per-unit") or the
        time between system failures ("system"). Given with ``system_mtbf``, the two must
        describe the same rate (ValueError otherwise).
    restart_time : float, default 3600
        Seconds of a global restart (reload from the checkpoint and resume), >= 0. No
        failure occurs during a restart: the stream restarts when the restart ends.
    checkpoint_time : float, default 60
        Seconds a checkpoint save blocks training, > 0 (an asynchronous save: its copy to host
        memory).
    checkpoint_drain : float, default 0
        Seconds an asynchronous save goes on draining to storage after its blocking part,
        >= 0; the save is the persistent checkpoint only once drained (a restart from it
        during the drain falls back to the previous save; a save due before the drain ends
        waits for it). 0: blocking saves. ``spare_core.sim.CheckpointIO`` derives it, the
        blocking time and the restart's load from a size and bandwidths.
    jitter : float, default 0.05
        Half-width of the uniform per-step duration multiplier ``U(1 - jitter, 1 + jitter)``,
        in [0, 1). Ignored when ``step_time_model`` is given.
    step_time_model : object, optional
        Any object with ``sample_multipliers(n_steps, rng) -> float64 array`` of positive
        per-step duration multipliers (e.g. :mod:`spare_core.pacing`'s straggler model).
    shrink_time, controller_time : float, default 0.1
        Seconds charged on a failure step for shrinking the communicator and for the
        controller (RECTLR) decision, >= 0.
    charge_patch : bool, default True
        Charge the patch plan's extra layers (``patch_layers * t_compute``) on a SPARe failure
        step (docs/results.md §3 measures what that changes).
    max_wall_factor : float, default 20
        The simulation stops (result marked unfinished) once wall time exceeds
        ``max_wall_factor * T0``, > 1. Regimes that never finish (checkpoint-only at 5-min
        MTBF) need a horizon.
    gpus_per_group : int, optional
        M, GPUs per group: maps nodes to groups for a node failure model that gives neither
        ``nodes_per_group`` nor ``gpus_per_group`` itself; the job's GPUs for GPU-hours.
    repair : Repairs, optional
        Hot spares, repairs and rejoins (:class:`spare_core.sim.Repairs`). None: a failed
        group is back only at a global restart, and a replacement is always ready then (the
        SPARe paper's model).
    memory : MemoryTier, optional
        An in-memory checkpoint tier beside the persistent one (:class:`spare_core.sim.MemoryTier`).
    pricing : Pricing, optional
        The price of a GPU-hour (:class:`spare_core.sim.Pricing`): runs then report a cost.
    name : str, optional
        Label used in reports.
    failure_classes : FailureClasses, optional
        A split of the failure process into classes by recovery and detection time
        (:class:`spare_core.sim.classes.FailureClasses`, ``[[failures.classes]]``). None:
        every failure is a node failure noticed at once (the model without classes).

    Attributes
    ----------
    failures : FailureModel
        The failure model simulated; the single source of the failure rate.
    system_mtbf : float
        ``failures.mtbf(n_groups)``: the rate the checkpoint rules read.
    failure_model : str
        ``failures.kind``.
    weibull_shape, lifetime
        The model's fields of those names (None when it has none).
    t0 : float
        Failure-free time-to-train ``n_steps * (t_compute + t_allreduce)``: no redundancy,
        no checkpoints, nominal (jitter-free) steps. TTT/T0 is reported against it.

    Raises
    ------
    TypeError, ValueError
        On any bad parameter (non-positive times, steps < 1, unknown failure model, ...).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357, simulation setup.
    """

    __slots__ = (
        "n_groups", "n_steps", "t_compute", "t_allreduce", "failures", "restart_time", "checkpoint_time", "jitter",
        "step_time_model", "shrink_time", "controller_time", "charge_patch", "max_wall_factor",
        "gpus_per_group", "repair", "memory", "pricing", "name", "checkpoint_drain", "failure_classes",
    )

    #: optional parts written to dicts only when given (a scenario without them keeps the
    #: dict, and the result-store keys, it had before they existed)
    _OPTIONAL = ("repair", "memory", "pricing", "failure_classes")

    def __init__(
        self,
        n_groups,
        *,
        n_steps,
        t_compute,
        t_allreduce,
        system_mtbf=None,
        weibull_shape=None,
        failure_model="per-unit",
        lifetime=None,
        restart_time=3600.0,
        checkpoint_time=60.0,
        jitter=0.05,
        step_time_model=None,
        shrink_time=0.1,
        controller_time=0.1,
        charge_patch=True,
        max_wall_factor=20.0,
        gpus_per_group=None,
        repair=None,
        memory=None,
        pricing=None,
        name="custom",
        checkpoint_drain=0.0,
        failure_classes=None,
    ):
        self.n_groups = as_int(n_groups, "n_groups", min_value=1, max_value=MAX_GROUPS)
        self.n_steps = as_int(n_steps, "n_steps", min_value=1)
        self.t_compute = as_float(t_compute, "t_compute", min_value=0.0, strict_min=True)
        self.t_allreduce = as_float(t_allreduce, "t_allreduce", min_value=0.0)
        self.gpus_per_group = None if gpus_per_group is None else as_int(gpus_per_group, "gpus_per_group", min_value=1)
        self.failures = _failure_model(failure_model, system_mtbf=system_mtbf, weibull_shape=weibull_shape,
                                       lifetime=lifetime, gpus_per_group=self.gpus_per_group)
        self.failures.check(self.n_groups)  # a lifetime and a rate that disagree fail here
        self.restart_time = as_float(restart_time, "restart_time", min_value=0.0)
        self.checkpoint_time = as_float(checkpoint_time, "checkpoint_time", min_value=0.0, strict_min=True)
        self.checkpoint_drain = as_float(checkpoint_drain, "checkpoint_drain", min_value=0.0)
        self.jitter = as_float(jitter, "jitter", min_value=0.0)
        if not self.jitter < 1.0:
            raise ValueError(f"jitter must be < 1 (a step cannot take no time), got {self.jitter}")
        if step_time_model is not None and not callable(getattr(step_time_model, "sample_multipliers", None)):
            raise TypeError(
                "step_time_model must have a sample_multipliers(n_steps, rng) method, "
                f"got {type(step_time_model).__name__}"
            )
        self.step_time_model = step_time_model
        self.shrink_time = as_float(shrink_time, "shrink_time", min_value=0.0)
        self.controller_time = as_float(controller_time, "controller_time", min_value=0.0)
        if not isinstance(charge_patch, (bool, np.bool_)):
            raise TypeError(f"charge_patch must be a bool, got {type(charge_patch).__name__} {charge_patch!r}")
        self.charge_patch = bool(charge_patch)
        self.max_wall_factor = as_float(max_wall_factor, "max_wall_factor", min_value=1.0, strict_min=True)
        _check_bounded(self)
        from .recovery import MemoryTier, Pricing, Repairs

        self.repair = _optional(repair, Repairs, "repair")
        self.memory = _optional(memory, MemoryTier, "memory")
        self.pricing = _optional(pricing, Pricing, "pricing")
        from .classes import FailureClasses

        if isinstance(failure_classes, (list, tuple)):
            failure_classes = FailureClasses.from_dict(failure_classes)
        if failure_classes is not None and not isinstance(failure_classes, FailureClasses):
            raise TypeError(f"failure_classes must be a FailureClasses, a list of class dicts or None, got "
                            f"{type(failure_classes).__name__}")
        if failure_classes is not None and failure_classes.has_domains:
            from ..events.domains import DomainFailures

            if isinstance(self.failures, DomainFailures):
                # a level's event and a domain class's event would both take groups, and a level
                # event's groups would each draw a class of their own (the file refuses it too)
                raise ValueError("a failure class of recovery = \"domain\" cannot go with a DomainFailures model "
                                 "([[failures.domains]]): give the domains as levels, or as domain classes")
            if self.repair is not None and self.repair.retire_after:
                # a domain event's other groups are copies of one fault, no failures of their
                # nodes for a retirement to count
                raise ValueError("[fleet] retire_after cannot go with a failure class of recovery = \"domain\" (a "
                                 "domain event's copies are no failures of their nodes to count)")
        self.failure_classes = failure_classes
        cap = getattr(self.failures, "capacity_timeline", None)
        if cap is not None and cap(self.n_groups) is not None:  # also checks the fleet against the job
            # the log decides when nodes come back; a restart then resumes after restart_time
            for what, on in (("repair", repair is not None), ("memory (an in-memory checkpoint tier)", memory is not None),
                             ("failure_classes", failure_classes is not None)):
                if on:
                    raise ValueError(f"a log of capacity events (failures.trace.event_column) does not go with {what}: "
                                     "the log decides when nodes come back")
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__} {name!r}")
        self.name = name

    # -- derived -------------------------------------------------------------------------
    #: Most failures a run may expect before its wall limit (``max_wall_factor * T0 /
    #: system_mtbf``): beyond it a run would take hours of CPU, so it is refused up front.
    MAX_EXPECTED_FAILURES = 1e8

    def check_runnable(self) -> None:
        """Raise ValueError if a simulated run of this scenario could not end in practice.

        The loop of :func:`spare_core.sim.simulate` stops at the wall limit
        ``max_wall_factor * T0``; with ``restart_time=0`` and a tiny MTBF it would get there
        only after ``max_wall_factor * T0 / system_mtbf`` failures. More than
        :attr:`MAX_EXPECTED_FAILURES` is refused before any work (a description of such a
        cluster is still a valid Scenario: only simulating it is refused).
        """
        mtbf = self.system_mtbf
        wall = self.t0 * self.max_wall_factor
        expected = wall / mtbf if mtbf > 0 else math.inf
        if not expected <= self.MAX_EXPECTED_FAILURES:
            raise ValueError(
                f"max_wall_factor * T0 / system_mtbf (failures expected before the wall limit) must be at most "
                f"{self.MAX_EXPECTED_FAILURES:.0e} to simulate, got {expected:.3g} (T0 = {self.t0:.3g} s, "
                f"max_wall_factor = {self.max_wall_factor:g}, system MTBF = {mtbf:.3g} s)")

    @property
    def t0(self) -> float:
        """Failure-free time-to-train: ``n_steps * (t_compute + t_allreduce)`` seconds."""
        return self.n_steps * (self.t_compute + self.t_allreduce)

    @property
    def step_time(self) -> float:
        """Nominal failure-free step time at stack depth 1, seconds."""
        return self.t_compute + self.t_allreduce

    @property
    def system_mtbf(self) -> float:
        """Long-run system MTBF of the failure model simulated (what the checkpoint rules read)."""
        return self.failures.mtbf(self.n_groups)

    @property
    def failure_model(self) -> str:
        """Name of the failure model (``failures.kind``)."""
        return self.failures.kind

    @property
    def weibull_shape(self):
        """The failure model's Weibull shape: its ``shape`` field, or the default 0.78 for a
        law built from ``system_mtbf``; None for a model given a ``lifetime`` or without one."""
        if getattr(self.failures, "lifetime", None) is not None or not hasattr(self.failures, "shape"):
            return None
        from ..events.models import DEFAULT_WEIBULL_SHAPE

        return DEFAULT_WEIBULL_SHAPE if self.failures.shape is None else self.failures.shape

    @property
    def lifetime(self):
        """The failure model's ``lifetime`` field (None when the law comes from the rate)."""
        return getattr(self.failures, "lifetime", None)

    @property
    def failure_description(self) -> str:
        """The failure model in words, as reported in results."""
        words = self.failures.describe(self.n_groups)
        if self.failure_classes is not None:
            words += f"; classes: {self.failure_classes.describe()}"
        return words

    def epoch_failures(self, seed):
        """The failures :func:`spare_core.sim.simulate` reads for a run on ``seed``, shareable by
        every run of this scenario on that seed (``simulate(..., seed=seed, failures=...)``).

        ``seed`` is the run's seed (an int or SeedSequence); the failures come from its
        ``"failures"`` child (:meth:`spare_core.events.FailureModel.epoch_source`).
        """
        return self.failures.epoch_source(self.n_groups, run_seed(seed, "failures"))

    def failure_stream(self, seed):
        """The live failure process of a run on ``seed`` (the run's seed, as for
        :meth:`epoch_failures`; :meth:`spare_core.events.FailureModel.process`)."""
        return self.failures.process(self.n_groups, run_seed(seed, "failures"))

    def replace(self, **changes) -> "Scenario":
        """A copy with some parameters changed (validated again).

        Rate keywords (``system_mtbf``, ``weibull_shape``, ``lifetime``) replace the failure
        model's fields of those names; ``failure_model`` given as a name keeps the rate fields
        of the current model.
        """
        kw = self._params()
        model = kw["failure_model"]
        fm = changes.pop("failure_model", model)
        rate = {_RATE_KEYS[k]: changes.pop(k) for k in list(changes) if k in _RATE_KEYS}
        if isinstance(fm, str):
            fields = {f: getattr(model, f) for f in _RATE_KEYS.values() if hasattr(model, f)}
            fields.update(rate)
            fm = FailureModel.by_kind(fm)(**fields)
        elif rate:
            fm = fm.replace(**rate)
        if "gpus_per_group" in changes and getattr(fm, "gpus_per_group", None) == self.gpus_per_group:
            fm = fm.replace(gpus_per_group=changes["gpus_per_group"])  # it came from this scenario
        kw["failure_model"] = fm
        kw.update(changes)
        n = kw.pop("n_groups")
        return Scenario(n, **kw)

    def _params(self) -> dict:
        """The constructor's keywords of this scenario (the failure model as one value)."""
        kw = {k: getattr(self, k) for k in self.__slots__}
        kw["failure_model"] = kw.pop("failures")
        return kw

    def to_dict(self) -> dict:
        """Every parameter as a JSON-friendly dict; :meth:`from_dict` rebuilds an equal scenario.

        The failure model becomes its own dict (:meth:`spare_core.events.FailureModel.to_dict`).
        Floats are kept as they are (``json`` writes them exactly), so the dict is fit for a
        content hash.

        Raises
        ------
        TypeError
            A ``step_time_model`` without ``to_dict`` (it cannot be written down).
        """
        kw = self._params()
        out = {k: v for k, v in kw.items() if k not in ("failure_model", "step_time_model") + self._OPTIONAL}
        if out["checkpoint_drain"] == 0.0:
            del out["checkpoint_drain"]  # blocking saves: the dict (and store keys) of before
        for k in self._OPTIONAL:
            if kw[k] is not None:
                out[k] = kw[k].to_dict()
        out["failure_model"] = kw["failure_model"].to_dict()
        stm = kw["step_time_model"]
        if stm is not None:
            if not callable(getattr(stm, "to_dict", None)):
                raise TypeError(
                    f"step_time_model {type(stm).__name__} has no to_dict(): this scenario cannot be "
                    "written to a dict (give the model a to_dict/from_dict pair)"
                )
            out["step_time_model"] = {"type": f"{type(stm).__module__}.{type(stm).__qualname__}", **stm.to_dict()}
        else:
            out["step_time_model"] = None
        return out

    @classmethod
    def from_dict(cls, data, *, step_time_model=None) -> "Scenario":
        """The scenario written by :meth:`to_dict`.

        Parameters
        ----------
        data : dict
            Keys as the constructor's keywords (``n_groups`` included); ``failure_model`` a
            failure model's dict or name.
        step_time_model : object, optional
            The step-time model to attach (a dict's ``step_time_model`` entry is only
            checked against it: a step-time model is code, not data).

        Raises
        ------
        TypeError, ValueError
            Not a dict, an unknown or missing key, or a bad value; the message names the key,
            the rule and the value.
        """
        if not isinstance(data, dict):
            raise TypeError(f"scenario must be a dict, got {type(data).__name__}")
        allowed = set(cls.__slots__) - {"failures"} | {"failure_model"}
        for k in data:
            if k not in allowed:
                raise ValueError(f"scenario has unknown key {k!r} (allowed: {sorted(allowed)})")
        if "n_groups" not in data:
            raise ValueError("scenario lacks the key 'n_groups'")
        kw = dict(data)
        fm = kw.get("failure_model", "per-unit")
        if isinstance(fm, dict):
            kw["failure_model"] = FailureModel.from_dict(fm)
        stm = kw.pop("step_time_model", None)
        if stm is not None and step_time_model is None:
            raise ValueError(
                f"scenario key 'step_time_model' holds {stm.get('type', stm) if isinstance(stm, dict) else stm!r}: "
                "pass the object as from_dict(data, step_time_model=...)"
            )
        if step_time_model is not None:
            kw["step_time_model"] = step_time_model
        n = kw.pop("n_groups")
        return cls(n, **kw)

    def __eq__(self, other):
        if not isinstance(other, Scenario):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            object.__setattr__(self, k, v)

    def __repr__(self) -> str:
        return (
            f"Scenario({self.name!r}, N={self.n_groups}, steps={self.n_steps}, "
            f"t_compute={self.t_compute:g} s, t_allreduce={self.t_allreduce:g} s, "
            f"MTBF={self.system_mtbf:g} s, failures={self.failure_model}, "
            f"restart={self.restart_time:g} s, save={self.checkpoint_time:g} s, T0={self.t0 / 3600:.1f} h)"
        )

    # -- presets -------------------------------------------------------------------------
    @classmethod
    def paper_600k(cls, n_groups=600, **overrides) -> "Scenario":
        """The SPARe paper's simulation setup.

        600k H100 GPUs split into ``n_groups`` groups; system MTBF 5 min with Weibull shape
        0.78; global restart 60 min; checkpoint save 60 s; 10,000 steps of 64 s compute per
        stack layer; all-reduce from :func:`paper_allreduce_time` (2-10 s growing with N);
        +-5 % step jitter; shrink 0.1 s; controller 0.1 s. Defaults to per-group Weibull
        lifetimes whose combined long-run rate gives the 5-min MTBF (``failure_model=
        "system"`` for the other model). Any parameter can be overridden by keyword.

        Parameters
        ----------
        n_groups : int, default 600
            N (the paper uses 200, 600 and 1000).
        **overrides
            Any :class:`Scenario` keyword.

        Returns
        -------
        Scenario

        References
        ----------
        .. [1] SPARe, arXiv:2603.00357.

        Examples
        --------
        >>> s = Scenario.paper_600k(1000)
        >>> s.t_allreduce, s.gpus_per_group, round(s.t0 / 3600, 1)
        (10.0, 600, 205.6)
        """
        n = as_int(n_groups, "n_groups", min_value=1)
        kw = dict(
            n_steps=10_000,
            t_compute=64.0,
            t_allreduce=paper_allreduce_time(n),
            system_mtbf=300.0,
            weibull_shape=0.78,
            failure_model="per-unit",
            restart_time=3600.0,
            checkpoint_time=60.0,
            jitter=0.05,
            shrink_time=0.1,
            controller_time=0.1,
            gpus_per_group=max(1, _PAPER_GPUS // n),
            name=f"paper-600k-N{n}",
        )
        _preset_rate(kw, overrides)
        kw.update(overrides)
        return cls(n, **kw)

    @classmethod
    def cluster(cls, n_gpus, *, gpus_per_group, n_steps, t_compute, t_allreduce, gpus_per_node=8,
                failure_model=None, **kwargs) -> "Scenario":
        """A job on a cluster the user describes by its GPUs; failures by node renewals by default.

        Parameters
        ----------
        n_gpus : int
            GPUs of the job, a multiple of ``gpus_per_group``.
        gpus_per_group : int
            GPUs per data-parallel group (one model replica: TP x PP), a multiple of
            ``gpus_per_node``.
        n_steps, t_compute, t_allreduce
            As in :class:`Scenario`.
        gpus_per_node : int, default 8
            GPUs per node (the unit that fails and is replaced).
        failure_model : str or FailureModel, optional
            Default :class:`spare_core.events.NodeRenewals` (only the failed node replaced,
            the others keep their age: how large clusters are run). A name or any other model
            as in :class:`Scenario`.
        **kwargs
            Any other :class:`Scenario` keyword; the rate as ``system_mtbf`` (seconds, e.g. from
            an interruption count over a period) or ``lifetime`` (per node).

        Returns
        -------
        Scenario

        Examples
        --------
        >>> s = Scenario.cluster(16_384, gpus_per_group=128, n_steps=1000, t_compute=5.5,
        ...                      t_allreduce=0.5, system_mtbf=54 * 24 * 3600 / 419)
        >>> s.n_groups, s.failure_model, s.failures.nodes_in_group()
        (128, 'node', 16)
        """
        from ..events import NodeRenewals

        n_gpus = as_int(n_gpus, "n_gpus", min_value=1)
        gpus_per_group = as_int(gpus_per_group, "gpus_per_group", min_value=1)
        gpus_per_node = as_int(gpus_per_node, "gpus_per_node", min_value=1)
        if n_gpus % gpus_per_group:
            raise ValueError(f"n_gpus must be a multiple of gpus_per_group ({gpus_per_group}), got {n_gpus}")
        if failure_model is None or failure_model == "node":
            failure_model = NodeRenewals(gpus_per_node=gpus_per_node)
        return cls(n_gpus // gpus_per_group, n_steps=n_steps, t_compute=t_compute, t_allreduce=t_allreduce,
                   gpus_per_group=gpus_per_group, failure_model=failure_model, **kwargs)

    @classmethod
    def llama3_16k(cls, **overrides) -> "Scenario":
        """A Llama-3-405B-like job: 16,384 H100 GPUs, one failure every ~3.1 h.

        From public data: 419 unexpected interruptions in 54 days on 16,384 GPUs (0.173
        failures per GPU-year, a system MTBF of 54 * 24 / 419 = 3.09 h). Assumptions, not
        data: 128 data-parallel groups of 128 GPUs (TP 8 x PP 16) on nodes of 8 GPUs,
        200,000 steps of 5.5 s compute plus 0.5 s all-reduce (about 14 days failure-free),
        restart 30 min, checkpoint save 60 s, Weibull shape 0.78 as in the SPARe preset.
        Failures by node renewals (:class:`spare_core.events.NodeRenewals`, stationary
        node ages): a cluster that replaces the failed host. Override any of them by keyword
        (``failure_model="per-unit"`` for the paper's model).

        Returns
        -------
        Scenario

        References
        ----------
        .. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783, 2024.

        Examples
        --------
        >>> s = Scenario.llama3_16k()
        >>> round(s.system_mtbf / 3600, 2), s.n_groups
        (3.09, 128)
        """
        kw = dict(
            n_steps=200_000,
            t_compute=5.5,
            t_allreduce=0.5,
            system_mtbf=54 * 24 * 3600.0 / 419,
            weibull_shape=0.78,
            failure_model="node",
            restart_time=1800.0,
            checkpoint_time=60.0,
            jitter=0.05,
            gpus_per_group=_LLAMA3_GPUS // 128,
            name="llama3-16k",
        )
        _preset_rate(kw, overrides)
        kw.update(overrides)
        n = kw.pop("n_groups", 128)
        return cls(n, **kw)


def _optional(value, cls, name):
    """``value`` as a ``cls`` (None stays None; a dict is the class's keywords)."""
    if value is None or isinstance(value, cls):
        return value
    if isinstance(value, dict):
        try:
            return cls(**value)
        except TypeError as e:
            raise ValueError(f"{name}: {e}") from None
    raise TypeError(f"{name} must be a {cls.__name__}, a dict of its fields or None, got {type(value).__name__}")


def _check_bounded(sc) -> None:
    """Refuse a scenario whose run could not end: a non-finite T0 or wall limit (the run loop
    would never reach it)."""
    t0 = sc.t0
    wall = t0 * sc.max_wall_factor
    if not math.isfinite(t0):
        raise ValueError(f"T0 = n_steps * (t_compute + t_allreduce) must be finite, got {sc.n_steps} * "
                         f"({sc.t_compute!r} + {sc.t_allreduce!r}) = {t0!r} s")
    if not math.isfinite(wall):
        raise ValueError(f"the wall limit max_wall_factor * T0 must be finite, got {sc.max_wall_factor!r} * "
                         f"{t0!r} s")
