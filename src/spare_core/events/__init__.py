"""Failure event engine: failure streams, renewal processes, timers and restarts.

Public API
----------
- :class:`FailureStream` - per-unit or system-level failures consumed one at a time, with
  restarts and common random numbers (what :mod:`spare_core.sim` uses).
- Distributions are in :mod:`spare_core.distributions`.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

from ..distributions import Deterministic, Exponential, LogNormal, Weibull
from ._stream import MODELS, FailureStream

__all__ = ["FailureStream", "MODELS", "Weibull", "Exponential", "LogNormal", "Deterministic"]
