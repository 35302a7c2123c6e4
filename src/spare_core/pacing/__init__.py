"""Stragglers, fabric contention and the pacing controller (docs/pacing.md, [2]_).

- :mod:`.model` - compute, fabric and collective parameters; analytic all-reduce cost;
- :mod:`.fabrics` - the :class:`Fabric` protocol (link incidence of the ring flows),
  :class:`RailOptimisedFabric` (default) and :class:`TopOfRackFabric`;
- :mod:`.controllers` - the pacing protocol, :class:`NoPacing`, :class:`SpreadPacer`,
  :class:`BaselinePacer`, and the kernel forms a controller may declare;
- :mod:`.simulate` - :func:`simulate_iterations` (Cython kernel ``spare_core._ext._pacing_core``);
- :mod:`.sweep` - node-count sweep with and without pacing, scaling efficiency;
- :mod:`.steptime` - :class:`StragglerStepTime`, the hook into time-to-train.

References
----------
.. [2] When Scaling Fails: Network and Fabric Effects on Distributed GPU Training
   Performance, arXiv:2603.04424.
"""
from .controllers import (BarrierObservation, BaselineHysteresis, BaselinePacer, NoHold, NoPacing,
                          PacingController, SpreadHysteresis, SpreadPacer)
from .fabrics import Fabric, LinkIncidence, RailOptimisedFabric, TopOfRackFabric
from .model import CollectiveModel, ComputeModel, FabricModel, PacingScenario, collective_time
from .simulate import IterationResult, IterationStats, Realisation, simulate_iterations
from .steptime import StragglerStepTime
from .sweep import DEFAULT_NODE_COUNTS, PacingSweepResult, SweepRow, node_sweep, scaling_efficiency

__all__ = [
    "BarrierObservation", "BaselinePacer", "NoPacing", "PacingController", "SpreadPacer",
    "NoHold", "SpreadHysteresis", "BaselineHysteresis",
    "Fabric", "LinkIncidence", "RailOptimisedFabric", "TopOfRackFabric",
    "CollectiveModel", "ComputeModel", "FabricModel", "PacingScenario", "collective_time",
    "IterationResult", "IterationStats", "Realisation", "simulate_iterations",
    "StragglerStepTime", "DEFAULT_NODE_COUNTS", "PacingSweepResult", "SweepRow", "node_sweep",
    "scaling_efficiency",
]
