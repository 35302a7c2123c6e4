"""Stragglers from a job's trace: write a synthetic trace with a planted slow GPU, read it back
as a user's trace would be read, and ask who is to blame and what evicting it would buy.

    PYTHONPATH=src python examples/straggler_whatif.py

With your own job: ``read_trace("job.parquet", read_meta("meta-job.yaml"))`` (docs/stragglers.md).
"""
from __future__ import annotations

import os
import tempfile

from spare_core.stragglers import analyse, measured_slowdown, read_trace, synthetic_trace, write_trace


def main() -> None:
    # a 16 x 4 job (64 workers), rank 37 (stage 2, DP rank 5) 40 % slow, 5 % jitter
    trace = synthetic_trace(dp=16, pp=4, microbatches=8, steps=6, slow={37: 1.4}, seed=0)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "job.csv")
        write_trace(path, trace, shuffle=0)  # rows in any order, as a profiler's merge writes them
        job = read_trace(path)  # sizes inferred: dp 16, pp 4
    result = analyse(job)
    print(result.report())
    m = measured_slowdown(job)
    print(f"\nfor a step-time model: S = {m.slowdown:.3f}, evict rank {m.worst_worker}: "
          f"{100 * m.evict_saves:.1f} % of step time saved")


if __name__ == "__main__":
    main()
