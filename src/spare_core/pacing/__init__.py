"""Stragglers, fabric contention and the pacing controller (DESIGN.md section 4, [2]_).

- :mod:`.model` - compute, fabric and collective parameters; analytic all-reduce cost;
- :mod:`.controllers` - the pacing protocol, :class:`NoPacing`, :class:`SpreadPacer`,
  :class:`BaselinePacer`;
- :mod:`.simulate` - :func:`simulate_iterations` (Cython kernel ``spare_core._ext._pacing_core``);
- :mod:`.sweep` - node-count sweep with and without pacing, scaling efficiency;
- :mod:`.steptime` - :class:`StragglerStepTime`, the hook into time-to-train.

References
----------
.. [2] When Scaling Fails: Network and Fabric Effects on Distributed GPU Training
   Performance, arXiv:2603.04424.
"""
from .controllers import BarrierObservation, BaselinePacer, NoPacing, PacingController, SpreadPacer
from .model import CollectiveModel, ComputeModel, FabricModel, PacingScenario, collective_time
from .simulate import IterationResult, IterationStats, Realisation, simulate_iterations
from .steptime import StragglerStepTime
from .sweep import DEFAULT_NODE_COUNTS, SweepResult, SweepRow, node_sweep, scaling_efficiency

__all__ = [
    "BarrierObservation", "BaselinePacer", "NoPacing", "PacingController", "SpreadPacer",
    "CollectiveModel", "ComputeModel", "FabricModel", "PacingScenario", "collective_time",
    "IterationResult", "IterationStats", "Realisation", "simulate_iterations",
    "StragglerStepTime", "DEFAULT_NODE_COUNTS", "SweepResult", "SweepRow", "node_sweep",
    "scaling_efficiency",
]
