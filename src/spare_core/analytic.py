"""Deprecated path of :mod:`spare_core.strategies.spare.analytic` (kept for one release).

``import spare_core.analytic`` still works and re-exports the public names, with a DeprecationWarning;
import from :mod:`spare_core.strategies.spare.analytic` (or :mod:`spare_core.strategies.spare`).
"""
from spare_core._deprecation import warn_moved
from spare_core.strategies.spare.analytic import *  # noqa: F401,F403
from spare_core.strategies.spare.analytic import __all__  # noqa: F401

warn_moved("spare_core.analytic", "spare_core.strategies.spare.analytic")
