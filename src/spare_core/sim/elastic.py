"""Deprecated path of :mod:`spare_core.strategies.elastic` (kept for one release), with a
DeprecationWarning."""
from spare_core._deprecation import warn_moved
from spare_core.strategies.elastic import *  # noqa: F401,F403
from spare_core.strategies.elastic import __all__  # noqa: F401

warn_moved("spare_core.sim.elastic", "spare_core.strategies.elastic")
