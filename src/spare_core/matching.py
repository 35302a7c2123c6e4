"""Deprecated path of :mod:`spare_core.graph.matching` (kept for one release).

``import spare_core.matching`` still works and re-exports the public names, with a
DeprecationWarning; import from :mod:`spare_core.graph.matching` (or :mod:`spare_core.graph`).
"""
from spare_core._deprecation import warn_moved
from spare_core.graph.matching import METHODS, IncrementalMatching, Matching, hopcroft_karp

__all__ = ["Matching", "hopcroft_karp", "IncrementalMatching"]

warn_moved("spare_core.matching", "spare_core.graph.matching")
