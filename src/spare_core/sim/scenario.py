"""The training scenario: cluster, step costs, failure process, restart and checkpoint costs."""
from __future__ import annotations

import math

import numpy as np

from .._validate import as_float, as_int, check_choice
from ..distributions import as_distribution

__all__ = ["Scenario", "FAILURE_MODELS", "paper_allreduce_time"]

FAILURE_MODELS = ("per-unit", "system")

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
    system_mtbf : float
        Mean time between failures of the whole system, seconds, > 0.
    weibull_shape : float, default 0.78
        Shape of the Weibull lifetimes built from ``system_mtbf``, > 0.
    failure_model : {"per-unit", "system"}, default "per-unit"
        "per-unit": every group has its own Weibull lifetime with mean ``N * system_mtbf``,
        redrawn at each restart (failures burst after a restart). "system": one renewal
        process with mean ``system_mtbf`` whose failures hit a uniformly random alive group.
        See :meth:`spare_core.events.FailureStream.with_system_mtbf`.
    lifetime : Distribution, optional
        Overrides the Weibull law: the per-group lifetime ("per-unit") or the time between
        system failures ("system"). ``system_mtbf`` is then ignored by the failure stream.
    restart_time : float, default 3600
        Seconds of a global restart (reload from the checkpoint and resume), >= 0. No
        failure occurs during a restart: the stream restarts when the restart ends.
    checkpoint_time : float, default 60
        Seconds to save a checkpoint, > 0.
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
        step. DESIGN.md: charging the real patch work adds 4-15 % to time-to-train.
    max_wall_factor : float, default 20
        The simulation stops (result marked unfinished) once wall time exceeds
        ``max_wall_factor * T0``, > 1. Regimes that never finish (checkpoint-only at 5-min
        MTBF) need a horizon.
    gpus_per_group : int, optional
        M, GPUs per group (informational).
    name : str, optional
        Label used in reports.

    Attributes
    ----------
    t0 : float
        Failure-free time-to-train ``n_steps * (t_compute + t_allreduce)``: no redundancy,
        no checkpoints, nominal (jitter-free) steps. TTT/T0 is reported against it.

    Raises
    ------
    TypeError, ValueError
        On any bad parameter (non-positive times, steps < 1, unknown failure model, ...).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357, simulation setup (DESIGN.md section 3).
    """

    __slots__ = (
        "n_groups", "n_steps", "t_compute", "t_allreduce", "system_mtbf", "weibull_shape",
        "failure_model", "lifetime", "restart_time", "checkpoint_time", "jitter",
        "step_time_model", "shrink_time", "controller_time", "charge_patch", "max_wall_factor",
        "gpus_per_group", "name",
    )

    def __init__(
        self,
        n_groups,
        *,
        n_steps,
        t_compute,
        t_allreduce,
        system_mtbf,
        weibull_shape=0.78,
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
        name="custom",
    ):
        self.n_groups = as_int(n_groups, "n_groups", min_value=1)
        self.n_steps = as_int(n_steps, "n_steps", min_value=1)
        self.t_compute = as_float(t_compute, "t_compute", min_value=0.0, strict_min=True)
        self.t_allreduce = as_float(t_allreduce, "t_allreduce", min_value=0.0)
        self.system_mtbf = as_float(system_mtbf, "system_mtbf", min_value=0.0, strict_min=True)
        self.weibull_shape = as_float(weibull_shape, "weibull_shape", min_value=0.0, strict_min=True)
        self.failure_model = check_choice(failure_model, "failure_model", FAILURE_MODELS)
        self.lifetime = None if lifetime is None else as_distribution(lifetime, "lifetime")
        self.restart_time = as_float(restart_time, "restart_time", min_value=0.0)
        self.checkpoint_time = as_float(checkpoint_time, "checkpoint_time", min_value=0.0, strict_min=True)
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
            raise TypeError(f"charge_patch must be a bool, got {type(charge_patch).__name__}")
        self.charge_patch = bool(charge_patch)
        self.max_wall_factor = as_float(max_wall_factor, "max_wall_factor", min_value=1.0, strict_min=True)
        self.gpus_per_group = None if gpus_per_group is None else as_int(gpus_per_group, "gpus_per_group", min_value=1)
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        self.name = name

    # -- derived -------------------------------------------------------------------------
    @property
    def t0(self) -> float:
        """Failure-free time-to-train: ``n_steps * (t_compute + t_allreduce)`` seconds."""
        return self.n_steps * (self.t_compute + self.t_allreduce)

    @property
    def step_time(self) -> float:
        """Nominal failure-free step time at stack depth 1, seconds."""
        return self.t_compute + self.t_allreduce

    @property
    def failure_description(self) -> str:
        """The failure model in words, as reported in results."""
        if self.lifetime is not None:
            law = repr(self.lifetime)
        elif self.failure_model == "per-unit":
            law = (
                f"Weibull(shape={self.weibull_shape:g}) per group, mean N x {self.system_mtbf:g} s "
                "(system MTBF at the long-run rate)"
            )
        else:
            law = f"Weibull(shape={self.weibull_shape:g}) between system failures, mean {self.system_mtbf:g} s"
        return f"{self.failure_model}: {law}"

    def failure_stream(self, seed):
        """The :class:`spare_core.events.FailureStream` of this scenario under ``seed``."""
        from ..events import FailureStream

        if self.lifetime is not None:
            return FailureStream(self.n_groups, self.lifetime, model=self.failure_model, seed=seed)
        return FailureStream.with_system_mtbf(
            self.n_groups, self.system_mtbf, self.weibull_shape, model=self.failure_model, seed=seed
        )

    def replace(self, **changes) -> "Scenario":
        """A copy with some parameters changed (validated again)."""
        kw = {k: getattr(self, k) for k in self.__slots__}
        kw.update(changes)
        n = kw.pop("n_groups")
        return Scenario(n, **kw)

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
        """The SPARe paper's simulation setup (DESIGN.md section 3).

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
        kw.update(overrides)
        return cls(n, **kw)

    @classmethod
    def llama3_16k(cls, **overrides) -> "Scenario":
        """A Llama-3-405B-like job: 16,384 H100 GPUs, one failure every ~3.1 h (DESIGN.md §5).

        From public data: 419 unexpected interruptions in 54 days on 16,384 GPUs (0.173
        failures per GPU-year, a system MTBF of 54 * 24 / 419 = 3.09 h). Assumptions, not
        data: 128 data-parallel groups of 128 GPUs (TP 8 x PP 16), 200,000 steps of 5.5 s
        compute plus 0.5 s all-reduce (about 14 days failure-free), restart 30 min,
        checkpoint save 60 s, Weibull shape 0.78 as in the SPARe preset. Override any of
        them by keyword.

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
            failure_model="per-unit",
            restart_time=1800.0,
            checkpoint_time=60.0,
            jitter=0.05,
            gpus_per_group=_LLAMA3_GPUS // 128,
            name="llama3-16k",
        )
        kw.update(overrides)
        n = kw.pop("n_groups", 128)
        return cls(n, **kw)
