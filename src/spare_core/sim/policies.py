"""Deprecated path of :mod:`spare_core.strategies` (kept for one release).

``import spare_core.sim.policies`` still works and re-exports the protocol, the registry and
the built-in policies, with a DeprecationWarning; import from :mod:`spare_core.strategies`
(the names stay available from :mod:`spare_core.sim` too).
"""
from spare_core._deprecation import warn_moved
from spare_core.strategies import *  # noqa: F401,F403
from spare_core.strategies import __all__  # noqa: F401

warn_moved("spare_core.sim.policies", "spare_core.strategies")
