"""Deprecated path of :mod:`spare_core.graph.flow` (kept for one release).

``import spare_core.flow`` still works and re-exports the public names, with a
DeprecationWarning; import from :mod:`spare_core.graph.flow` (or :mod:`spare_core.graph`).
"""
from spare_core._deprecation import warn_moved
from spare_core.graph.flow import (CertificateCheck, FlowResult, check_flow_certificate, max_flow_min_cost,
                                   min_cost_flow)

__all__ = ["FlowResult", "CertificateCheck", "min_cost_flow", "max_flow_min_cost", "check_flow_certificate"]

warn_moved("spare_core.flow", "spare_core.graph.flow")
