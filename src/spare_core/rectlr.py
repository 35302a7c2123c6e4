"""Deprecated path of :mod:`spare_core.strategies.spare.rectlr` (kept for one release).

``import spare_core.rectlr`` still works and re-exports the public names, with a DeprecationWarning;
import from :mod:`spare_core.strategies.spare.rectlr` (or :mod:`spare_core.strategies.spare`).
"""
from spare_core._deprecation import warn_moved
from spare_core.strategies.spare.rectlr import *  # noqa: F401,F403
from spare_core.strategies.spare.rectlr import __all__  # noqa: F401

warn_moved("spare_core.rectlr", "spare_core.strategies.spare.rectlr")
