"""Time-to-train simulation of CKPT-only, Rep+CKPT and SPARe+CKPT under failures.

Public API
----------
- :func:`simulate` ``(scenario, policy, *, seed) -> RunResult``
- :class:`Scenario` with the presets :meth:`Scenario.paper_600k` and :meth:`Scenario.llama3_16k`
- policies :class:`CheckpointOnly`, :class:`ReplicationCheckpoint`, :class:`SpareCheckpoint`,
  :class:`ElasticDP`; what a cluster recovers with besides them: :class:`Repairs` (hot
  spares, repairs, rejoins), :class:`MemoryTier` (in-memory checkpoints), :class:`Pricing`
  behind one protocol (:class:`Policy`, :class:`FailureHandler`), the registry
  :data:`POLICY_REGISTRY` with :func:`make_policy` and :func:`register_policy`: all of them
  live in :mod:`spare_core.strategies` and are re-exported here
- a :class:`Study` (scenarios x policies x redundancies x intervals x seeds;
  :mod:`spare_core.sim.study`) run by the one executor :func:`execute` (this process, local
  processes or Dask, optionally into a result store; :mod:`spare_core.sim.executor`) into a
  :class:`ResultSet` (runs, cells, best per policy; :mod:`spare_core.sim.results`)
- :func:`sweep` over policies, redundancies and seeds (a study on the executor;
  :mod:`spare_core.sim.grid`), :func:`optimal_redundancy` and :func:`optimal_interval`
  (closed forms next to the simulated argmin; :mod:`spare_core.sim.optimum`). Durable,
  resumable, distributed sweeps: :mod:`spare_core.sweeps`.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

from .. import strategies
from ..strategies import *  # noqa: F401,F403
from . import executor, grid, optimum, recovery, results, run, scenario, study
from .executor import *  # noqa: F401,F403
from .grid import *  # noqa: F401,F403
from .optimum import *  # noqa: F401,F403
from .recovery import *  # noqa: F401,F403
from .run import *  # noqa: F401,F403
from .results import *  # noqa: F401,F403
from .scenario import *  # noqa: F401,F403
from .study import *  # noqa: F401,F403

__all__ = (strategies.__all__ + run.__all__ + scenario.__all__ + grid.__all__ + optimum.__all__ + study.__all__
           + results.__all__ + executor.__all__ + recovery.__all__)
__all__ = list(dict.fromkeys(__all__))
