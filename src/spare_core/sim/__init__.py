"""Time-to-train simulation of CKPT-only, Rep+CKPT and SPARe+CKPT under failures.

Public API
----------
- :func:`simulate` ``(scenario, policy, *, seed) -> RunResult``
- :class:`Scenario` with the presets :meth:`Scenario.paper_600k` and :meth:`Scenario.llama3_16k`
- policies :class:`CheckpointOnly`, :class:`ReplicationCheckpoint`, :class:`SpareCheckpoint`
  behind one protocol (:class:`Policy`, :class:`FailureHandler`; see
  :mod:`spare_core.sim.policies`), and :func:`make_policy` by name
- :func:`sweep` over policies, redundancies and seeds (optionally in processes),
  :func:`optimal_redundancy` and :func:`optimal_interval` (closed forms next to the
  simulated argmin)

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

from . import policies, run, scenario, sweep as _sweep_mod
from .policies import *  # noqa: F401,F403
from .run import *  # noqa: F401,F403
from .scenario import *  # noqa: F401,F403
from .sweep import *  # noqa: F401,F403

__all__ = policies.__all__ + run.__all__ + scenario.__all__ + _sweep_mod.__all__
