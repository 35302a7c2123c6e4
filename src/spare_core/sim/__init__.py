"""Time-to-train simulation of CKPT-only, Rep+CKPT and SPARe+CKPT under failures.

Public API
----------
- :func:`simulate` ``(scenario, policy, *, seed) -> RunResult``
- :class:`Scenario` with the presets :meth:`Scenario.paper_600k` and :meth:`Scenario.llama3_16k`
- policies :class:`CheckpointOnly`, :class:`ReplicationCheckpoint`, :class:`SpareCheckpoint`
  behind one protocol (:class:`Policy`, :class:`FailureHandler`; see
  :mod:`spare_core.sim.policies`), the registry :data:`POLICY_REGISTRY` with
  :func:`make_policy` and :func:`register_policy`
- :func:`sweep` over policies, redundancies and seeds in memory (optionally in processes;
  :mod:`spare_core.sim.grid`), :func:`optimal_redundancy` and :func:`optimal_interval`
  (closed forms next to the simulated argmin; :mod:`spare_core.sim.optimum`). Durable,
  resumable, distributed sweeps: :mod:`spare_core.sweeps`.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

from . import grid, optimum, policies, run, scenario
from .grid import *  # noqa: F401,F403
from .optimum import *  # noqa: F401,F403
from .policies import *  # noqa: F401,F403
from .run import *  # noqa: F401,F403
from .scenario import *  # noqa: F401,F403

__all__ = policies.__all__ + run.__all__ + scenario.__all__ + grid.__all__ + optimum.__all__
