"""spare_core.graph: bipartite matching and min-cost flow, each with its certificate.

The graph library the SPARe controller (RECTLR) stands on, usable on its own:

- :mod:`spare_core.graph.matching` - maximum (b-)matching (:func:`hopcroft_karp`, several
  methods and an ``"auto"`` rule), König vertex-cover certificates (:class:`Matching`),
  incremental repair along failures (:class:`IncrementalMatching`);
- :mod:`spare_core.graph.flow` - min-cost flow (:func:`min_cost_flow`,
  :func:`max_flow_min_cost`) with dual-potential certificates (:class:`FlowResult`) and an
  independent checker (:func:`check_flow_certificate`).

Both validate their input in one place (``spare_core.graph._validate``) before any compiled
kernel (``spare_core._ext._hk``, ``_transversal``, ``_bmatch``, ``_mcf``, ``_netsimplex``) runs.
The names below are importable from this package directly; each submodule is loaded on first
use, so importing the matching does not load the flow kernels.

``spare_core.matching`` and ``spare_core.flow``, the old paths, still work for one release and
emit a DeprecationWarning.
"""
from __future__ import annotations

import importlib

_WHERE = {
    "Matching": "matching", "hopcroft_karp": "matching", "IncrementalMatching": "matching",
    "FlowResult": "flow", "CertificateCheck": "flow", "min_cost_flow": "flow", "max_flow_min_cost": "flow",
    "check_flow_certificate": "flow",
}

__all__ = ["matching", "flow", *_WHERE]


def __getattr__(name):
    if name in ("matching", "flow"):
        return importlib.import_module(f"spare_core.graph.{name}")
    if name in _WHERE:
        return getattr(importlib.import_module(f"spare_core.graph.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'spare_core.graph' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
