"""Time-to-train simulation of CKPT-only, Rep+CKPT and SPARe+CKPT under failures.

Public API
----------
- :func:`simulate` ``(scenario, policy, *, seed) -> RunResult``
- :class:`Scenario` with the presets :meth:`Scenario.paper_600k` and :meth:`Scenario.llama3_16k`
- policies :class:`CheckpointOnly`, :class:`ReplicationCheckpoint`, :class:`SpareCheckpoint`
  behind one protocol (:class:`Policy`, :class:`FailureHandler`; see
  :mod:`spare_core.sim.policies`), and :func:`make_policy` by name
- :func:`sweep` over policies, redundancies and seeds (optionally in processes) and
  :func:`optimal_redundancy` (closed form and simulated argmin)

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

from .policies import (
    CheckpointOnly,
    FailureHandler,
    IntervalChoice,
    Outcome,
    Outcomes,
    Policy,
    ReplicationCheckpoint,
    SpareCheckpoint,
)
from .run import POLICY_NAMES, RunResult, Timeline, make_policy, simulate
from .scenario import FAILURE_MODELS, Scenario, paper_allreduce_time
from .sweep import RedundancyChoice, Summary, SweepResult, closed_form_redundancy, optimal_redundancy, sweep

__all__ = [
    "simulate",
    "RunResult",
    "Timeline",
    "Scenario",
    "FAILURE_MODELS",
    "paper_allreduce_time",
    "Policy",
    "FailureHandler",
    "Outcome",
    "Outcomes",
    "IntervalChoice",
    "CheckpointOnly",
    "ReplicationCheckpoint",
    "SpareCheckpoint",
    "make_policy",
    "POLICY_NAMES",
    "sweep",
    "SweepResult",
    "Summary",
    "optimal_redundancy",
    "closed_form_redundancy",
    "RedundancyChoice",
]
