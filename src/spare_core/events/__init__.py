"""Failure event engine: failure streams, renewal processes, timers and restarts.

Public API
----------
- :class:`FailureModel` - a frozen value (law, rate, structure) that builds the failures a
  simulation consumes, behind the :class:`FailureProcess` protocol; the built-in models
  :class:`GroupLifetimes` (the SPARe paper's, ``"per-unit"``), :class:`NodeRenewals`
  (``"node"``: nodes with their own lifetimes, only the failed node replaced) and
  :class:`SystemRenewals` (``"system"``). New models register by kind in their own module
  (see :mod:`spare_core.events.models`).
- :class:`EpochSource` - what the simulator reads: epoch k's failures relative to its start;
  :class:`EpochFailures` (epochs shared by all runs on a seed), :class:`RunFailures` (each run
  follows its own restarts), :class:`NodeEpochs` (one wall-clock node failure log per seed).
- Recorded logs: :class:`Trace` / :func:`read_trace` (CSV or Parquet), replayed by
  :class:`TraceReplay`; :func:`fit` (Weibull / exponential / log-normal with confidence
  intervals) and :class:`FailureRate` (conversions); correlated failure domains
  :class:`DomainFailures`. (``spare_core.events.fit.compare`` compares fitted laws.)
- Scenario files: each kind reads its own ``[failures]`` keys (:attr:`FailureModel.file_keys`,
  :meth:`FailureModel.from_file`, given a :class:`FileCluster`, returning :class:`FileFailures`).
- :class:`FailureStream` - per-unit or system-level failures consumed one at a time, with
  restarts and common random numbers (what :mod:`spare_core.sim` uses).
- :class:`Engine`, :func:`simulate_renewals` - retired (a DeprecationWarning, removed in the
  next release): a second event engine (the ``_calendar`` kernel) that no simulation used; the
  simulations' engine is the epoch sources above, and that is what the benchmarks time.
- Distributions are in :mod:`spare_core.distributions`.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

from ..distributions import Deterministic, Exponential, LogNormal, Weibull
from ._engine import KINDS, Engine, EngineStats, Event, RenewalCounts, load_trace_csv, simulate_renewals
from ._stream import MODELS, FailureStream
from .models import (
    DEFAULT_WEIBULL_SHAPE, FailureModel, FailureProcess, GroupLifetimes, LifetimeLawModel, SystemRenewals, failure_model_kinds,
)
from .epochs import EpochFailures, EpochSource, RunFailures
from .nodes import INITIAL_AGES, NodeEpochs, NodeFailureLog, NodeRenewalProcess, NodeRenewals
from .trace import Trace, TraceFormatError, read_trace
from .fit import Comparison, Durations, LifetimeFit, durations, fit
from .fit_check import FitCheck, check_fit
from .rates import FailureRate
from .trace_model import TraceReplay
from .files import FileCluster, FileFailures
from .domains import DomainFailureProcess, DomainFailures

__all__ = [
    # failure models and what they build
    "FailureModel", "FailureProcess", "LifetimeLawModel", "GroupLifetimes", "SystemRenewals", "NodeRenewals",
    "TraceReplay", "DomainFailures", "failure_model_kinds", "DEFAULT_WEIBULL_SHAPE", "INITIAL_AGES",
    "NodeFailureLog", "NodeEpochs", "NodeRenewalProcess", "DomainFailureProcess",
    # what a model read from a scenario file's [failures] table gets and returns (FailureModel.from_file)
    "FileCluster", "FileFailures",
    # what the simulator reads
    "EpochSource", "EpochFailures", "RunFailures", "FailureStream", "MODELS",
    # recorded logs, fits and rates
    "Trace", "TraceFormatError", "read_trace", "fit", "LifetimeFit", "Durations", "durations", "Comparison",
    "FitCheck", "check_fit",
    "FailureRate",
    # the general event engine
    "Engine", "Event", "EngineStats", "KINDS", "RenewalCounts", "simulate_renewals", "load_trace_csv",
    "Weibull", "Exponential", "LogNormal", "Deterministic",
]
