"""SPARe: stacked redundancy with adaptive reordering, in one package.

* :mod:`.layout` - the cyclic (consecutive, Sidon-type or rack-aware) shard stacks;
* :mod:`.rectlr` - the RECTLR controller on its compiled kernel (``_rectlr_core``):
  Hopcroft-Karp feasibility, the least stack depth, the least-reordering min-cost flow;
* :mod:`.analytic` - the closed forms (endurable failures, overhead) and their Monte-Carlo
  checks; :mod:`.domain_endurance` - endurance under correlated failure domains;
* :mod:`.policy` - SPARe+CKPT as a policy of the simulator, and its registry entry.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from . import analytic, domain_endurance, layout, rectlr
from .layout import MAX_GROUPS, StackedLayout, difference_multiplicity, sidon_offsets
from .policy import ENTRY, RACK_AWARE, SPARE_LAYOUTS, SpareCheckpoint
from .rectlr import KINDS, REJOINED, Decision, DecisionArrays, PatchPlan, Rectlr

__all__ = ["SpareCheckpoint", "RACK_AWARE", "SPARE_LAYOUTS", "ENTRY", "StackedLayout", "sidon_offsets",
           "difference_multiplicity", "MAX_GROUPS", "Rectlr", "Decision", "DecisionArrays", "PatchPlan", "KINDS", "REJOINED",
           "analytic", "domain_endurance", "layout", "rectlr"]
