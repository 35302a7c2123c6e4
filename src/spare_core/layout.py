"""Deprecated path of :mod:`spare_core.strategies.spare.layout` (kept for one release).

``import spare_core.layout`` still works and re-exports the public names, with a DeprecationWarning;
import from :mod:`spare_core.strategies.spare.layout` (or :mod:`spare_core.strategies.spare`).
"""
from spare_core._deprecation import warn_moved
from spare_core.strategies.spare.layout import *  # noqa: F401,F403
from spare_core.strategies.spare.layout import __all__  # noqa: F401

warn_moved("spare_core.layout", "spare_core.strategies.spare.layout")
