"""The fault-tolerance strategies, one package each, and the protocol and registry they share.

* :mod:`.protocol` - :class:`Policy`, :class:`FailureHandler`, :class:`Outcome(s) <Outcomes>`,
  :class:`IntervalChoice` and the optional hooks the simulator calls;
* :mod:`.registry` - the one registry of policies by name (built-ins and plugins through the
  same entry points), each with its declared parameters (:class:`Param`);
* :mod:`.checkpoint_only` - CKPT-only; :mod:`.replication` - Rep+CKPT (cyclic or disjoint
  replica sets); :mod:`.spare` - SPARe+CKPT with RECTLR, its layouts, closed forms and
  domain endurance; :mod:`.elastic` - elastic data parallelism.

Each strategy's name appears in its own package only: the simulator, the scenario file, the
sweeps and the commands reach it through the registry and the protocol's hooks.

References
----------
.. [1] SPARe, arXiv:2603.00357 (CKPT-only, Rep+CKPT, SPARe+CKPT).
.. [2] torchft, github.com/pytorch/torchft (elastic data parallelism).
"""
from .._params import Param
from .protocol import (DROPPED, INTERVAL_RULES, MASKED, REJOINED, RESTART, RESTART_MEMORY, FailureHandler,
                       IntervalChoice, Outcome, Outcomes, Policy, is_policy)
from .registry import (DEFAULT_POLICIES, ENTRY_POINT_GROUP, INTERVAL, POLICY_NAMES, POLICY_REGISTRY, PolicyFactory,
                       RegisteredPolicy, load_plugins, make_policy, policy_at, policy_entry, policy_names,
                       register_policy, registered_policy, uses_redundancy)
from .checkpoint_only import CheckpointOnly
from .replication import DISJOINT_LABEL, ReplicationCheckpoint
from .spare import RACK_AWARE, SPARE_LAYOUTS, SpareCheckpoint
from .elastic import BATCH_MODES, ElasticDP

__all__ = ["Policy", "FailureHandler", "Outcome", "Outcomes", "MASKED", "RESTART", "RESTART_MEMORY", "REJOINED",
           "DROPPED", "IntervalChoice", "INTERVAL_RULES", "is_policy", "Param", "INTERVAL",
           "POLICY_REGISTRY", "POLICY_NAMES", "DEFAULT_POLICIES", "ENTRY_POINT_GROUP", "RegisteredPolicy",
           "register_policy", "registered_policy", "policy_names", "policy_entry", "load_plugins", "make_policy",
           "policy_at", "uses_redundancy", "PolicyFactory",
           "CheckpointOnly", "ReplicationCheckpoint", "DISJOINT_LABEL", "SpareCheckpoint", "RACK_AWARE",
           "SPARE_LAYOUTS", "ElasticDP", "BATCH_MODES"]
