"""The trace schema of a pipeline-parallel training job (after ByteDance-Seed/StragglerAnalysis).

One row per recorded operation: ``dp_rank``, ``stage`` (pipeline rank), ``rank`` (the worker's
global rank), ``step``, ``optype``, ``start_ts`` and ``duration`` (seconds), ``seq_id`` (the
operation's index among the operations of its type on its worker in its step, in start order),
and for the interleaved schedule ``mc`` (model chunk on the stage) / ``gmc`` (chunk in the
model); ``mb_id`` (microbatch) is read when present but not needed.
"""
from __future__ import annotations

__all__ = ["OPTYPES", "REQUIRED", "OPTIONAL", "COMPUTE", "COMM", "P2P"]

#: every operation type the reader accepts, in the order of their codes
OPTYPES = (
    "forward-compute", "backward-compute",
    "forward-send", "forward-recv", "backward-send", "backward-recv",
    "params-all-gather", "grads-reduce-scatter", "separate-grads-all-reduce",
    "layernorm-grads-all-reduce", "embedding-grads-all-reduce", "optimizer-clip-main-grad",
    "optimizer", "gc",
)
CODE = {name: i for i, name in enumerate(OPTYPES)}
FWD, BWD = CODE["forward-compute"], CODE["backward-compute"]
FSEND, FRECV, BSEND, BRECV = (CODE[n] for n in ("forward-send", "forward-recv", "backward-send", "backward-recv"))
AG, RS, SEP = CODE["params-all-gather"], CODE["grads-reduce-scatter"], CODE["separate-grads-all-reduce"]
LN, EMB, CLIP = CODE["layernorm-grads-all-reduce"], CODE["embedding-grads-all-reduce"], CODE["optimizer-clip-main-grad"]
OPT, GC = CODE["optimizer"], CODE["gc"]
#: point-to-point pipeline operations
P2P = (FSEND, FRECV, BSEND, BRECV)
#: computations (their ideal is the mean under the paper's rule: the total work is kept)
COMPUTE = (FWD, BWD, OPT, GC)
#: communications (their ideal is the median: their recorded times are heavy-tailed)
COMM = tuple(c for c in range(len(OPTYPES)) if c not in COMPUTE)

REQUIRED = ("dp_rank", "stage", "rank", "step", "optype", "start_ts", "duration", "seq_id")
OPTIONAL = ("mc", "gmc", "mb_id")
