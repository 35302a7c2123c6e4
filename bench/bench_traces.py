"""Trace replay throughput: a 1e6-row failure log through the failure layer.

Run as a script (``PYTHONPATH=src python bench/bench_traces.py``) for the events/s table, or
under pytest-benchmark (``python -m pytest bench/bench_traces.py``).

Workload: 1,000,000 failure rows of 2,048 nodes (a 16,384-GPU job, 8 GPUs per node),
exponential gaps, one row in 20 a 4-node switch event (the rows share a time). Log rows
consumed per second of wall time (medians of repeats, all measured in the same run):

- ``TraceReplay`` (what ``simulate`` consumes, :class:`~spare_core.events.trace_model.TraceProcess`):
  the simulator's pattern, ``take`` then ``restart`` at the last failure (nothing skipped,
  every row scanned), with epochs of E failures (a SPARe wipe-out after ~E failures; E
  large: few restarts);
- the same semantics as a plain Python loop over the rows (the slow reference of the
  tests, a lower bound for a hand-written replay);
- ``Engine.add_trace`` (the Cython calendar engine), one ``run()`` over the whole log with
  a 30 s repair per failure (two engine events per row; a different job: units, not groups,
  and no restarts), as the compiled reference.
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from spare_core.events._engine import Engine
from spare_core.events.trace import Trace
from spare_core.events.trace_model import TraceReplay

N_ROWS = 1_000_000
N_NODES = 2048
NODES_PER_GROUP = 8
N_GROUPS = N_NODES // NODES_PER_GROUP


def make_log(n_rows=N_ROWS, seed=0) -> Trace:
    rng = np.random.default_rng(seed)
    n_events = n_rows // 1  # rows; switch events add 3 extra rows each
    gaps = rng.exponential(600.0, n_events)
    t = np.cumsum(gaps)
    u = rng.integers(0, N_NODES, n_events)
    switch = np.flatnonzero(rng.random(n_events) < 0.05)
    # a switch event downs 4 consecutive nodes at one instant: overwrite the next 3 rows
    for j in range(1, 4):
        k = switch[switch + j < n_events] + j
        t[k] = t[k - j]
        u[k] = (u[k - j] // 4) * 4 + j
    t = np.maximum.accumulate(t)
    return Trace(t, u, n_units=N_NODES, end=float(t[-1]))


def drive(proc, epoch_failures, chunk=32):
    """The simulator's pattern: take failures until `epoch_failures`, restart at the last."""
    handed = 0
    while True:
        got = 0
        while got < epoch_failures:
            ts, gs = proc.take(min(chunk, epoch_failures - got))
            if not ts:
                return handed
            got += len(ts)
        handed += got
        proc.restart(proc.now)


class PythonReplay:
    """Plain Python loop with the same semantics (stop at the end)."""

    def __init__(self, tr, per, n_groups):
        self.t, self.g = tr.times.tolist(), (tr.units // per).tolist()
        self.pos, self.dead, self.now = 0, bytearray(n_groups), 0.0

    def take(self, k):
        t, g, dead = self.t, self.g, self.dead
        times, groups = [], []
        while len(times) < k and self.pos < len(t):
            x = g[self.pos]
            if not dead[x]:
                dead[x] = 1
                times.append(t[self.pos])
                groups.append(x)
            self.pos += 1
        if times:
            self.now = times[-1]
        return times, groups

    def restart(self, at):
        self.dead = bytearray(len(self.dead))
        self.now = at


def timed(fn, repeats):
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main(repeats=5):
    tr = make_log()
    model = TraceReplay(tr, after="stop", nodes_per_group=NODES_PER_GROUP)
    print(f"log: {tr.n_events:,} rows, {N_NODES} nodes -> {N_GROUPS} groups, "
          f"{np.unique(tr.times).size:,} distinct instants; rows/s (median of {repeats})")
    rows = []
    for epoch in (20, 64, N_GROUPS):
        ours = timed(lambda: drive(model.process(N_GROUPS, seed=0), epoch), repeats)
        ref = timed(lambda: drive(PythonReplay(tr, NODES_PER_GROUP, N_GROUPS), epoch), repeats)
        rows.append((f"TraceReplay, epochs of {epoch} failures", ours, ref))
    for name, ours, ref in rows:
        print(f"  {name:<40} {N_ROWS / ours / 1e6:6.2f} M rows/s   python loop {N_ROWS / ref / 1e6:5.2f} M rows/s"
              f"   ratio {ref / ours:4.1f}x")

    def engine():
        eng = Engine(N_GROUPS, seed=0)
        eng.add_trace(tr.times, tr.units // NODES_PER_GROUP)
        eng.set_repair(30.0)
        eng.run()

    t_eng = timed(engine, repeats)
    print(f"  {'Engine.add_trace + run() (Cython)':<40} {N_ROWS / t_eng / 1e6:6.2f} M rows/s")
    # the outputs agree (same failures handed out, in order)
    a, b = model.process(N_GROUPS, seed=0), PythonReplay(tr, NODES_PER_GROUP, N_GROUPS)
    for _ in range(200):
        assert a.take(20) == b.take(20)
        a.restart(a.now)
        b.restart(b.now)
    return 0


# -- pytest-benchmark ----------------------------------------------------------------------
def test_trace_replay_epochs_of_20(benchmark):
    tr = make_log(200_000)
    model = TraceReplay(tr, after="stop", nodes_per_group=NODES_PER_GROUP)
    benchmark(lambda: drive(model.process(N_GROUPS, seed=0), 20))


def test_trace_replay_python_loop_epochs_of_20(benchmark):
    tr = make_log(200_000)
    benchmark(lambda: drive(PythonReplay(tr, NODES_PER_GROUP, N_GROUPS), 20))


if __name__ == "__main__":
    sys.exit(main())
