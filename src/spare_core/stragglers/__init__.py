"""Stragglers from a job's own trace: what-if analysis of recorded operations.

Read a pipeline-parallel job's per-operation trace (the schema of the OSDI 2025 artifact
ByteDance-Seed/StragglerAnalysis: Parquet or CSV), rebuild each step's dependency graph
(1F1B and interleaved schedules, send/recv pairs, DP collectives, the optimizer after them),
replay it in a compiled kernel with recorded, ideal and mixed durations, and say how much
slower the job is than without stragglers (S), who is to blame (workers, stages, DP ranks, op
types) and what fixing each would buy. Synthetic traces with planted stragglers come from
:func:`synthetic_trace`. Documentation: docs/stragglers.md.

>>> from spare_core.stragglers import analyse, synthetic_trace
>>> r = analyse(synthetic_trace(dp=2, pp=4, steps=3, last_stage=1.5, jitter=0.0, seed=0))
>>> max(r.by_stage, key=r.by_stage.get)
3
"""
from __future__ import annotations

from ._analysis import (IDEALS, Fix, MeasuredSlowdown, WhatIf, WhatIfResult, analyse, ideal_durations,
                        measured_slowdown)
from ._schema import OPTYPES
from ._trace import MAX_TRACE_BYTES, MAX_TRACE_ROWS, JobSizes, Trace, TraceError, read_meta, read_trace
from .steptime import REMEDIES, MeasuredStragglers
from .synth import synthetic_trace, trace_columns, write_trace

__all__ = ["OPTYPES", "IDEALS", "JobSizes", "Trace", "TraceError", "read_trace", "read_meta", "MAX_TRACE_BYTES",
           "MAX_TRACE_ROWS", "WhatIf", "WhatIfResult", "Fix", "analyse", "ideal_durations", "MeasuredSlowdown",
           "measured_slowdown", "synthetic_trace", "trace_columns", "write_trace", "MeasuredStragglers", "REMEDIES"]
