"""spare_core: simulate and optimise fault tolerance for LLM pretraining at 10^4-10^6 GPUs.

Submodules (imported on first use so ``import spare_core`` stays cheap):

- :mod:`spare_core.graph` - maximum (b-)matching with König certificates and incremental repair
  (``graph.matching``), min-cost flow with dual-potential certificates (``graph.flow``)
- :mod:`spare_core.strategies` - the fault-tolerance strategies, one package each
  (``checkpoint_only``, ``replication``, ``spare``: layouts, RECTLR, closed forms and domain
  endurance; ``elastic``), the protocol they follow and the one registry of them
- :mod:`spare_core.topology` - failure domains (racks, switches, power)
- :mod:`spare_core.events`, :mod:`spare_core.sim` - failure event engine and time-to-train simulation
- :mod:`spare_core.pacing` - stragglers, fabric contention and the pacing controller
- :mod:`spare_core.stragglers` - what-if analysis of a job's own operation trace: which worker or stage to blame
- :mod:`spare_core.checkpoint`, :mod:`spare_core.distributions` - checkpoint-interval rules, lifetime laws
- :mod:`spare_core.scenario_file`, :mod:`spare_core.sweeps` - TOML scenario files (``spare run``),
  sweep specifications, executors and the durable result store (``spare sweep``)

The layers and how data flows through them: ``docs/architecture.md``; the model: ``docs/model.md``.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
.. [2] When Scaling Fails: Network and Fabric Effects on Distributed GPU Training Performance,
   arXiv:2603.04424.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = {"graph", "strategies", "events", "sim", "pacing", "checkpoint", "topology", "sweeps",
               "distributions", "scenario_file", "stragglers"}


# old paths of moved modules, reachable for one release (they warn when imported): spare_core.graph's
# and spare_core.strategies.spare's
_DEPRECATED = {"matching", "flow", "layout", "rectlr", "analytic", "domain_endurance"}


def __getattr__(name):
    if name in _SUBMODULES or name in _DEPRECATED:
        return importlib.import_module(f"spare_core.{name}")
    raise AttributeError(f"module 'spare_core' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
