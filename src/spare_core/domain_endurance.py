"""Deprecated path of :mod:`spare_core.strategies.spare.domain_endurance` (kept for one release).

``import spare_core.domain_endurance`` still works and re-exports the public names, with a DeprecationWarning;
import from :mod:`spare_core.strategies.spare.domain_endurance` (or :mod:`spare_core.strategies.spare`).
"""
from spare_core._deprecation import warn_moved
from spare_core.strategies.spare.domain_endurance import *  # noqa: F401,F403
from spare_core.strategies.spare.domain_endurance import __all__  # noqa: F401

warn_moved("spare_core.domain_endurance", "spare_core.strategies.spare.domain_endurance")
