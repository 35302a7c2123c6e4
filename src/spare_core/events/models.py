"""Failure models: what fails, at what rate, and what a restart renews.

A :class:`FailureModel` is a small frozen value (law, rate, structure) that a scenario
carries and that serialises exactly (:meth:`FailureModel.to_dict` /
:meth:`FailureModel.from_dict`). For ``n_groups`` data-parallel groups and a seed it builds
a :class:`FailureProcess`: the stateful source of group failures that the simulator and the
epoch cache (:class:`spare_core.events.EpochFailures`) consume, one epoch (the time between
two global restarts) after another.

Adding a model
--------------
Subclass :class:`FailureModel` as a frozen dataclass in its own module under
``spare_core/events/``, give the class a ``kind=`` keyword (the name it registers under,
used by :meth:`FailureModel.from_dict` and by ``Scenario(failure_model=<kind>)``), and
implement :meth:`~FailureModel.mtbf`, :meth:`~FailureModel.process` and
:meth:`~FailureModel.describe` (optionally :meth:`~FailureModel.epoch_source`, for speed). Set :attr:`~FailureModel.renews_all_at_restart` to False if an
epoch's failures depend on when it starts (ages that survive a restart, recorded times).
Nothing in the simulator changes: it only calls these methods. To be named in a scenario
file (``[failures] model = "<kind>"``), list the keys the model reads in ``file_keys`` and
parse them in the classmethod :meth:`~FailureModel.from_file` (reader, table, cluster) ->
:class:`~spare_core.events.files.FileFailures`; the file refuses every other key for it.

The process contract (:class:`FailureProcess`) in short:

- failures come out in time order (ties allowed: a failure that downs several groups at one
  instant is several consecutive failures with the same time);
- each failure names the group it takes out of the job; a group is out until the next
  :meth:`~FailureProcess.restart`, so a process never names a group twice in one epoch (what
  the hardware does meanwhile, e.g. a node failing in a group that is already out, is the
  model's business and documented there);
- ``restart(t)`` starts the next epoch at ``t`` with every group back: the model says which
  clocks it renews (all of them, only the replaced units, none);
- fewer failures than asked means the epoch has no more (every group is out, or a recorded
  trace ended and the model stops).

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357 (per-group lifetimes redrawn at every restart;
   system MTBF 5 min, Weibull shape 0.78).
.. [2] B. Schroeder and G. A. Gibson, "A large-scale study of failures in high-performance
   computing systems", IEEE TDSC 7(4), 2010.
"""
from __future__ import annotations

import dataclasses
import math
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from .._registry import Registry
from .._validate import as_float
from ..distributions import Distribution, Weibull, as_distribution, distribution_from_dict

__all__ = [
    "FailureModel", "FailureProcess", "LifetimeLawModel", "GroupLifetimes", "SystemRenewals", "DEFAULT_WEIBULL_SHAPE",
    "failure_model_kinds", "load_failure_model_plugins", "FAILURE_MODEL_ENTRY_POINTS", "FAILURE_MODELS",
    "ScaledFailures",
]

#: Weibull shape used when a model is given a rate without a shape (the SPARe paper's 0.78)
DEFAULT_WEIBULL_SHAPE = 0.78

# relative tolerance when a lifetime and a rate are both given: they must describe one rate
_RATE_RTOL = 1e-9

#: the entry-point group through which an installed package adds failure models
FAILURE_MODEL_ENTRY_POINTS = "spare_core.failure_models"
#: the built-in kinds, each the entry point of its module (in the order listings show them)
_BUILTINS = {"per-unit": "spare_core.events.models:GroupLifetimes", "system": "spare_core.events.models:SystemRenewals",
             "node": "spare_core.events.nodes:NodeRenewals", "trace": "spare_core.events.trace_model:TraceReplay",
             "domains": "spare_core.events.domains:DomainFailures", "scaled": "spare_core.events.models:ScaledFailures"}


def _admit(registry: Registry, name: str, obj) -> None:
    """The door every failure-model entry point goes through, built-in or installed: the class
    is registered under its ``kind`` when it is defined; its entry point must name it."""
    if not (isinstance(obj, type) and issubclass(obj, FailureModel)):
        raise TypeError(f"must name a FailureModel subclass, got {type(obj).__name__}")
    if registry.raw().get(name) is not obj:
        raise ValueError(f"the entry point's name must be the class's kind ({obj.kind!r})")


#: kind -> FailureModel subclass: the built-ins, those defined in the process and those of
#: installed plugins (the one registry door, :class:`spare_core._registry.Registry`)
FAILURE_MODELS = Registry("failure model", FAILURE_MODEL_ENTRY_POINTS, _BUILTINS, _admit)


@runtime_checkable
class FailureProcess(Protocol):
    """The failures of one seeded run, epoch by epoch (what :meth:`FailureModel.process` builds).

    Attributes
    ----------
    n_units : int
        Number of groups the failures are mapped to (ids ``0 .. n_units - 1``).
    epoch : int
        Restarts so far.
    epoch_start : float
        Time the current epoch started.
    now : float
        Time of the last failure handed out or of the last restart.
    n_alive : int
        Groups not yet out in the current epoch.
    """

    n_units: int
    epoch: int

    @property
    def epoch_start(self) -> float: ...

    @property
    def now(self) -> float: ...

    @property
    def n_alive(self) -> int: ...

    def restart(self, time: float) -> None:
        """Start the next epoch at ``time`` (>= :attr:`now`) with every group back."""

    def take(self, k: int, with_units: bool = True) -> tuple[list, list | None]:
        """Hand out up to ``k`` (an int >= 0) next failures of the epoch: ``(times, groups)``.

        Fewer than ``k`` means the epoch has no more. With ``with_units=False`` a process may
        return ``None`` for the groups and owe them (:meth:`take_units`); a process that has
        the groups anyway may return them.
        """

    def take_units(self) -> list:
        """Groups of the failures handed out without them, in order (``[]`` if none owed)."""

    # optional: ``peek() -> float``, the next failure's time without consuming it (``inf`` if
    # none); a model that merges its own failures with a base process uses it so as not to run
    # the base ahead of a restart (FailureStream and NodeRenewalProcess have it)
    # optional: ``restart_from_zero()``, the next epoch on a clock set back to 0, so that its
    # times come out relative to its start; the epoch cache needs it to be fast (without it,
    # or on NotImplementedError, it rebuilds the process and restarts it k times at 0)


class FailureModel:
    """Base of the failure models: a frozen value that builds a :class:`FailureProcess`.

    Subclasses are frozen dataclasses registered by their ``kind`` (see the module docstring
    for the recipe). Equal values build processes that give identical failures on one seed.

    Attributes
    ----------
    kind : str
        Registered name (``"per-unit"``, ``"system"``, ...).
    renews_all_at_restart : bool
        True when a restart renews every failure clock, so that the failures of epoch k,
        relative to its start, do not depend on when the epoch starts: an epoch cache then
        shares them among all runs on one seed. False when they do (node ages that survive a
        restart, recorded times): each run follows its own restart history.
    """

    kind: ClassVar[str] = ""
    renews_all_at_restart: ClassVar[bool] = True

    def __init_subclass__(cls, kind: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if kind is not None:
            if not isinstance(kind, str) or not kind:
                raise TypeError(f"failure model kind must be a non-empty str, got {kind!r}")
            known = FAILURE_MODELS.raw()
            if kind in known and known[kind].__qualname__ != cls.__qualname__:
                raise ValueError(f"failure model kind {kind!r} is already registered by {known[kind].__name__}")
            cls.kind = kind
            FAILURE_MODELS.add(kind, cls, replace=True)

    # -- the contract ------------------------------------------------------------------------
    def mtbf(self, n_groups: int) -> float:
        """Long-run mean time between failures of a job of ``n_groups`` groups, seconds.

        The one rate the scenario's checkpoint rules read (the system MTBF).
        """
        raise NotImplementedError

    def process(self, n_groups: int, seed, *, start: float = 0.0) -> FailureProcess:
        """The failures of a job of ``n_groups`` groups under ``seed`` (a SeedSequence or an
        int), epoch 0 starting at ``start``."""
        raise NotImplementedError

    def describe(self, n_groups: int) -> str:
        """The model in words, as reported in results."""
        raise NotImplementedError

    def epoch_source(self, n_groups: int, seed):
        """The :class:`spare_core.events.EpochSource` the simulator reads, shareable by the
        runs on one ``seed``: :class:`~spare_core.events.EpochFailures` (epochs shared) when a
        restart renews every clock, else :class:`~spare_core.events.RunFailures` (each run
        follows its own restarts). A model may return a faster source of its own."""
        from .epochs import EpochFailures, RunFailures

        return (EpochFailures if self.renews_all_at_restart else RunFailures)(self, n_groups, seed)

    def check(self, n_groups: int) -> None:
        """Raise ValueError if the model cannot drive a job of ``n_groups`` groups."""
        self.mtbf(n_groups)

    # -- a scenario file's [failures] table --------------------------------------------------
    #: keys this kind reads from a scenario file's ``[failures]`` table (besides ``model``)
    file_keys: ClassVar[tuple[str, ...]] = ()
    #: keys of other kinds this kind refuses with its own reason (key -> rule), instead of the
    #: scenario file's generic "only goes with model = ..."
    file_refused: ClassVar[dict[str, str]] = {}
    #: True for a kind that comes on top of the file's model (failure domains): its keys
    #: select it, ``model = "<kind>"`` does not, and :meth:`from_file` gets ``below=``
    file_layer: ClassVar[bool] = False

    @classmethod
    def from_file(cls, reader, table, cluster):
        """The model a scenario file's ``[failures]`` table describes (``model = "<kind>"``).

        A kind that defines it can be named in a file; it reads only its :attr:`file_keys`
        (the scenario file has already refused every other key).

        Parameters
        ----------
        reader : spare_core._files.Reader
            The file's value checks (``reader.duration("failures.my_key", table["my_key"])``):
            every error names the file and the key.
        table : dict
            The ``[failures]`` table without ``model`` (and without a layer's keys).
        cluster : spare_core.events.files.FileCluster
            The job: GPUs, nodes, GPUs per node and per group, the file's directory.

        Returns
        -------
        spare_core.events.files.FileFailures
            The model and the rate in words (``note``, the report's rate line).
        """
        raise NotImplementedError(f"failure model {cls.kind!r} cannot be read from a scenario file")

    @classmethod
    def reads_files(cls) -> bool:
        """Whether a scenario file can name this kind in ``failures.model`` (it defines :meth:`from_file`)."""
        return not cls.file_layer and cls.from_file.__func__ is not FailureModel.from_file.__func__

    # -- values ------------------------------------------------------------------------------
    @classmethod
    def by_kind(cls, kind) -> type:
        """The registered model class of ``kind`` (installed plugins loaded first)."""
        if not isinstance(kind, str) or kind not in FAILURE_MODELS:
            raise ValueError(f"failure_model must be one of {failure_model_kinds()}, got {kind!r}")
        return FAILURE_MODELS[kind]

    def to_dict(self) -> dict:
        """``{"kind": ..., <fields>}`` with JSON-friendly values; :meth:`from_dict` inverts it
        exactly (distributions become their own dicts)."""
        out = {"kind": self.kind}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = v.to_dict() if isinstance(v, Distribution) else v
        return out

    @classmethod
    def from_dict(cls, data) -> "FailureModel":
        """The model described by ``data`` (see :meth:`to_dict`).

        Raises
        ------
        TypeError, ValueError
            Not a dict, unknown kind, unknown key, or a bad value (the message names the key).
        """
        if not isinstance(data, dict):
            raise TypeError(f"failure_model must be a dict with a 'kind', got {type(data).__name__} {data!r}")
        if "kind" not in data:
            raise ValueError(f"failure_model lacks the key 'kind' (one of {failure_model_kinds()})")
        sub = cls.by_kind(data["kind"])
        return sub._from_fields({k: v for k, v in data.items() if k != "kind"})

    @classmethod
    def _from_fields(cls, fields: dict) -> "FailureModel":
        names = [f.name for f in dataclasses.fields(cls)]
        for k in fields:
            if k not in names:
                raise ValueError(f"failure_model has unknown key {k!r} (a {cls.kind} model takes {names})")
        kw = {}
        for k, v in fields.items():
            kw[k] = distribution_from_dict(v, f"failure_model.{k}") if isinstance(v, dict) else v
        return cls(**kw)

    def replace(self, **changes) -> "FailureModel":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def scaled(self, factor: float) -> "FailureModel":
        """The model with its failures ``factor`` times as frequent (``spare advise``'s
        sensitivity to the failure rate).

        The default compresses the model's time axis (:class:`ScaledFailures`: every failure
        time divided by ``factor``, the same groups in the same order), which holds for any
        model; a model overrides it when a parameter says it better (the built-in rate models
        divide their MTBF, a replay its log's time axis, domains every level's rate).

        Parameters
        ----------
        factor : float
            Multiplier of the failure rate, finite and > 0.
        """
        return ScaledFailures(self, rate_factor(factor))


def faster_law(law: Distribution, f: float) -> Distribution:
    """``law`` on a time axis divided by ``f`` (mean / f, shape kept)."""
    from ..distributions import Deterministic, Exponential, LogNormal

    if isinstance(law, Weibull):
        return Weibull(law.shape, law.scale / f)
    if isinstance(law, Exponential):
        return Exponential(law.mean / f)
    if isinstance(law, LogNormal):
        return LogNormal(law.mean / f, law.sigma)
    if isinstance(law, Deterministic):
        return Deterministic(law.value / f)
    raise TypeError(f"cannot scale a {type(law).__name__} lifetime (give the model a scaled() of its own)")


def rate_factor(factor) -> float:
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
    return float(factor)


# -- models with one lifetime law and a rate ---------------------------------------------------
def _check_rate_fields(obj) -> None:
    """Validate ``system_mtbf`` / ``shape`` / ``lifetime`` of a rate-law model in place."""
    set_ = object.__setattr__
    if obj.system_mtbf is not None:
        set_(obj, "system_mtbf", as_float(obj.system_mtbf, "system_mtbf", min_value=0.0, strict_min=True))
    if obj.shape is not None:
        set_(obj, "shape", as_float(obj.shape, "weibull_shape", min_value=0.0, strict_min=True))
    if obj.lifetime is not None:
        set_(obj, "lifetime", as_distribution(obj.lifetime, "lifetime"))
        if obj.shape is not None:
            raise ValueError(
                f"weibull_shape applies only to a law built from system_mtbf; with lifetime={obj.lifetime!r} "
                f"give the shape in the lifetime, got weibull_shape={obj.shape:g}"
            )



def _no_rate(obj):
    return ValueError(
        f"a {obj.kind!r} failure model needs a rate: system_mtbf (seconds) or lifetime (a distribution); "
        "a scenario fills it from its own system_mtbf"
    )


class LifetimeLawModel(FailureModel):
    """Base of the models whose failures come from one lifetime law over some entities
    (groups, nodes, the whole system): the law is given directly (``lifetime``) or as a
    Weibull whose entities together fail once per ``system_mtbf`` in the long run.

    A subclass is a frozen dataclass with the fields ``system_mtbf``, ``shape`` and
    ``lifetime`` (any others after them), calls ``super().__post_init__()`` if it defines its
    own, and says how many entities share the rate (:meth:`entities`).
    """

    #: a rate model reads one published rate form and a Weibull shape, or a law fitted to a log
    file_keys: ClassVar[tuple[str, ...]] = ("law", "weibull_shape", "period", "measured_on_gpus", "per_node_day",
                                            "per_1000_node_days", "per_gpu_year", "interruptions", "mtbf",
                                            "node_mtbf", "trace", "fit_law", "fit_check")

    def __post_init__(self):
        _check_rate_fields(self)

    def scaled(self, factor: float) -> "FailureModel":
        """The system MTBF divided by ``factor`` (a given lifetime law: its time axis, so its
        mean divided and its shape kept)."""
        f = rate_factor(factor)
        if self.lifetime is None:
            return self.replace(system_mtbf=self.system_mtbf / f)
        return self.replace(lifetime=faster_law(self.lifetime, f))

    @classmethod
    def from_file(cls, reader, table, cluster):
        """The kind at the table's rate (the scenario fills ``system_mtbf`` and ``shape``):
        :func:`spare_core.events.files.rate_model_from_file`."""
        from .files import rate_model_from_file  # files reads the rates and the logs, which import this module

        return rate_model_from_file(cls.kind, reader, table, cluster)

    def entities(self, n_groups: int) -> int:
        """How many renewal clocks share the system rate in a job of ``n_groups`` groups."""
        raise NotImplementedError

    def law(self, n_groups: int) -> Distribution:
        """The lifetime law of one entity for a job of ``n_groups`` groups.

        With ``system_mtbf``: ``Weibull.from_mean(entities * system_mtbf, shape)``, so that the
        entities renewed on failure fail at the long-run rate ``1 / system_mtbf``.

        Raises
        ------
        ValueError
            Both ``lifetime`` and ``system_mtbf`` given and they disagree.
        """
        e = self.entities(n_groups)
        if self.lifetime is None:
            if self.system_mtbf is None:
                raise _no_rate(self)
            shape = DEFAULT_WEIBULL_SHAPE if self.shape is None else self.shape
            return Weibull.from_mean(e * self.system_mtbf, shape)
        if self.system_mtbf is not None:
            implied = self.lifetime.mean / e
            if not math.isclose(implied, self.system_mtbf, rel_tol=_RATE_RTOL):
                raise ValueError(
                    f"lifetime and system_mtbf disagree: lifetime={self.lifetime!r} over {e} "
                    f"{self._entity_name()} gives a system MTBF of {implied:g} s, system_mtbf={self.system_mtbf:g} s; "
                    "give one of them (the rate is read from the failures simulated)"
                )
        return self.lifetime

    def _entity_name(self) -> str:
        return "entities"

    def mtbf(self, n_groups: int) -> float:
        if self.lifetime is None:
            if self.system_mtbf is None:
                raise _no_rate(self)
            return self.system_mtbf
        return self.law(n_groups).mean / self.entities(n_groups)

    def _law_words(self, per: str) -> str:
        if self.lifetime is not None:
            return repr(self.lifetime)
        shape = DEFAULT_WEIBULL_SHAPE if self.shape is None else self.shape
        return f"Weibull(shape={shape:g}) {per}, mean {self._mean_words()} (system MTBF at the long-run rate)"

    def _mean_words(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class GroupLifetimes(LifetimeLawModel, kind="per-unit"):
    """The SPARe paper's model: every group has a lifetime, and all are redrawn at each restart.

    Parameters
    ----------
    system_mtbf : float, optional
        Long-run system MTBF, seconds, > 0: each group's lifetime is
        ``Weibull.from_mean(N * system_mtbf, shape)``.
    shape : float, optional
        Weibull shape with ``system_mtbf`` (default 0.78, the paper's).
    lifetime : Distribution, optional
        The per-group lifetime law instead (its mean is ``N * system MTBF``). Given with
        ``system_mtbf``, the two must agree.

    Notes
    -----
    *When it fits.* It reproduces the paper: a global restart replaces the whole job's
    hardware, so every clock starts fresh. With Weibull shape < 1 that makes failures
    burst right after each restart (the first failure among N fresh groups comes after
    ``system_mtbf * N**(1 - 1/shape)`` on average, 0.14x the MTBF for N = 1000), so it is
    pessimistic for a cluster that replaces only the failed node.

    *Restart.* Every group's lifetime is redrawn from the restart time; the failures of
    epoch k relative to its start are the same whenever it starts (common random numbers).
    Built on :class:`spare_core.events.FailureStream` (``model="per-unit"``).

    Examples
    --------
    >>> m = GroupLifetimes(system_mtbf=300.0, shape=0.78)
    >>> m.mtbf(600), round(m.law(600).mean)
    (300.0, 180000)
    >>> GroupLifetimes.from_dict(m.to_dict()) == m
    True
    """

    system_mtbf: float | None = None
    shape: float | None = None
    lifetime: Distribution | None = None

    def entities(self, n_groups):
        return n_groups

    def _entity_name(self):
        return "groups"

    def _mean_words(self):
        return f"N x {self.system_mtbf:g} s"

    def process(self, n_groups, seed, *, start=0.0):
        from ._stream import FailureStream

        return FailureStream(n_groups, self.law(n_groups), model="per-unit", seed=seed, start=start)

    def describe(self, n_groups):
        return f"per-unit: {self._law_words('per group')}"


@dataclasses.dataclass(frozen=True)
class SystemRenewals(LifetimeLawModel, kind="system"):
    """One renewal process for the whole system; each failure hits a uniformly random live group.

    Parameters
    ----------
    system_mtbf : float, optional
        Mean time between failures, seconds, > 0 (Weibull inter-failure times).
    shape : float, optional
        Weibull shape with ``system_mtbf`` (default 0.78).
    lifetime : Distribution, optional
        The law of the time between failures instead (its mean is the system MTBF).

    Notes
    -----
    *When it fits.* A measured system-level interruption rate with no structure: the gap
    between failures does not shrink or grow as groups drop out of the job, and a restart
    renews the process (its next failure is one fresh inter-failure time after the restart).
    Built on :class:`spare_core.events.FailureStream` (``model="system"``).

    Examples
    --------
    >>> SystemRenewals(system_mtbf=300.0).describe(600)
    'system: Weibull(shape=0.78) between system failures, mean 300 s'
    """

    system_mtbf: float | None = None
    shape: float | None = None
    lifetime: Distribution | None = None

    def entities(self, n_groups):
        return 1

    def _entity_name(self):
        return "system"

    def process(self, n_groups, seed, *, start=0.0):
        from ._stream import FailureStream

        return FailureStream(n_groups, self.law(n_groups), model="system", seed=seed, start=start)

    def describe(self, n_groups):
        if self.lifetime is not None:
            return f"system: {self.lifetime!r}"
        shape = DEFAULT_WEIBULL_SHAPE if self.shape is None else self.shape
        return f"system: Weibull(shape={shape:g}) between system failures, mean {self.system_mtbf:g} s"


# -- any model, its failures more or less frequent ----------------------------------------------
@dataclasses.dataclass(frozen=True)
class ScaledFailures(FailureModel, kind="scaled"):
    """Another model's failures ``factor`` times as frequent: its time axis divided by
    ``factor`` (what :meth:`FailureModel.scaled` gives a model without a rate of its own).

    Parameters
    ----------
    base : FailureModel or dict
    factor : float
        Rate multiplier, > 0.
    """

    base: FailureModel
    factor: float

    def __post_init__(self):
        base = self.base
        if isinstance(base, dict):
            base = FailureModel.from_dict(base)
        if not isinstance(base, FailureModel):
            raise TypeError(f"base must be a FailureModel, got {type(base).__name__}")
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "factor", rate_factor(self.factor))

    @property
    def renews_all_at_restart(self) -> bool:  # type: ignore[override]
        return self.base.renews_all_at_restart

    def mtbf(self, n_groups: int) -> float:
        return self.base.mtbf(n_groups) / self.factor

    def check(self, n_groups: int) -> None:
        self.base.check(n_groups)

    def describe(self, n_groups: int) -> str:
        return f"{self.base.describe(n_groups)}, failures x{self.factor:g} as frequent"

    def process(self, n_groups: int, seed, *, start: float = 0.0) -> "ScaledProcess":
        return ScaledProcess(self.base.process(n_groups, seed, start=start * self.factor), self.factor)

    def scaled(self, factor: float) -> "FailureModel":
        return ScaledFailures(self.base, self.factor * rate_factor(factor))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "base": self.base.to_dict(), "factor": self.factor}

    @classmethod
    def _from_fields(cls, fields: dict) -> "ScaledFailures":
        return cls(**fields)  # __post_init__ reads the base's dict


class ScaledProcess:
    """A :class:`FailureProcess` on another one's clock divided by ``factor``."""

    def __init__(self, base, factor: float) -> None:
        self._base, self._f = base, factor
        self.n_units = base.n_units
        if callable(getattr(base, "peek", None)):
            self.peek = lambda: base.peek() / factor
        if callable(getattr(base, "restart_from_zero", None)):
            self.restart_from_zero = base.restart_from_zero

    @property
    def epoch(self) -> int:
        return self._base.epoch

    @property
    def epoch_start(self) -> float:
        return self._base.epoch_start / self._f

    @property
    def now(self) -> float:
        return self._base.now / self._f

    @property
    def n_alive(self) -> int:
        return self._base.n_alive

    def restart(self, time: float) -> None:
        # time * f can fall an ulp below the base's clock: never before it
        self._base.restart(max(float(time) * self._f, self._base.now))

    def take(self, k: int, with_units: bool = True):
        times, units = self._base.take(k, with_units)
        return np.asarray(times, dtype=np.float64) / self._f, units

    def take_units(self) -> list:
        return self._base.take_units()


def failure_model_kinds() -> list[str]:
    """Names of the registered failure models: the built-ins, those defined in this process,
    and those installed packages declare (:func:`load_failure_model_plugins`)."""
    return list(FAILURE_MODELS)


def load_failure_model_plugins() -> list[str]:
    """Admit the built-in failure models and those installed packages declare under the
    ``spare_core.failure_models`` entry-point group (once per process).

    An entry point ``my-kind = "my_pkg.models:MyModel"`` names the FailureModel subclass of
    that kind; loading it defines (and so registers) the class, after which a scenario file can
    name it in ``failures.model`` when it has ``file_keys`` and ``from_file``. A plugin that
    fails to load is skipped with a warning: an installed package never breaks the command line.

    Returns
    -------
    list of str
        The kinds admitted by this call.
    """
    return FAILURE_MODELS.load()
