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
- ``RunFailures`` over the same process (the epoch source ``simulate`` reads), driven with
  the simulator's calls (``get(k, pos + 1, pos + batch)`` with the handler's batch doubling
  from 16, ``next_time`` after a batch without restart, the restart reported with
  ``epoch_consumed``), chunked (the process rewinds) and one failure at a time (the reader
  before chunks: a process that cannot rewind);
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

from spare_core.events import Engine, RunFailures
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


class NoRewind:
    """The same model behind a process without ``rewind``: RunFailures pulls one failure
    at a time (the reader simulate() used before chunks)."""

    renews_all_at_restart = False

    def __init__(self, model):
        self.model = model

    def process(self, n_groups, seed, *, start=0.0):
        return _Plain(self.model.process(n_groups, seed, start=start))


class _Plain:
    def __init__(self, proc):
        self._p = proc

    def take(self, k, with_units=True):
        return self._p.take(k, with_units)

    def restart(self, time):
        self._p.restart(time)


def drive_source(src, epoch_failures, hint=16, max_batch=1024):
    """The simulator's calls on an epoch source (sim/run.py's batch loop, the kernel replaced
    by "restart at failure `epoch_failures`, at its time")."""
    epoch, start, pos, batch, seen = 0, 0.0, 0, hint, 0
    while True:
        rel, _ = src.get(epoch, pos + 1, pos + batch, start=start)
        n = min(pos + batch, rel.shape[0]) - pos
        if n <= 0:
            return seen
        restart_at = epoch_failures - pos  # 1-based index in this batch of the restarting failure
        if restart_at > n:
            src.next_time(epoch, pos + n, start=start)
            pos += n
            seen += n
            batch = min(2 * batch, max_batch)
            continue
        pos += restart_at
        seen += restart_at
        src.epoch_consumed(epoch, pos)
        epoch, start, pos, batch = epoch + 1, start + float(rel[pos - 1]), 0, hint


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
    src_rows = []
    for epoch in (20, 64, N_GROUPS):
        fast = timed(lambda: drive_source(RunFailures(model, N_GROUPS, 0), epoch), repeats)
        slow = timed(lambda: drive_source(RunFailures(NoRewind(model), N_GROUPS, 0), epoch), repeats)
        src_rows.append((f"RunFailures, epochs of {epoch} failures", fast, slow))
    for name, ours, ref in rows:
        print(f"  {name:<40} {N_ROWS / ours / 1e6:6.2f} M rows/s   python loop {N_ROWS / ref / 1e6:5.2f} M rows/s"
              f"   ratio {ref / ours:4.1f}x")

    for name, fast, slow in src_rows:
        print(f"  {name:<40} {N_ROWS / fast / 1e6:6.2f} M rows/s   one at a time {N_ROWS / slow / 1e6:5.2f} M rows/s"
              f"   ratio {slow / fast:4.1f}x")

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
    # chunked and one-at-a-time sources hand out the same failures
    a, b = RunFailures(model, N_GROUPS, 0), RunFailures(NoRewind(model), N_GROUPS, 0)
    assert drive_source(a, 20, max_batch=64) == drive_source(b, 20, max_batch=64)
    return 0


# -- pytest-benchmark ----------------------------------------------------------------------
def test_trace_replay_epochs_of_20(benchmark):
    tr = make_log(200_000)
    model = TraceReplay(tr, after="stop", nodes_per_group=NODES_PER_GROUP)
    benchmark(lambda: drive(model.process(N_GROUPS, seed=0), 20))


def test_trace_replay_python_loop_epochs_of_20(benchmark):
    tr = make_log(200_000)
    benchmark(lambda: drive(PythonReplay(tr, NODES_PER_GROUP, N_GROUPS), 20))


def test_run_failures_chunked_epochs_of_20(benchmark):
    tr = make_log(200_000)
    model = TraceReplay(tr, after="stop", nodes_per_group=NODES_PER_GROUP)
    benchmark(lambda: drive_source(RunFailures(model, N_GROUPS, 0), 20))


def test_run_failures_one_at_a_time_epochs_of_20(benchmark):
    tr = make_log(200_000)
    model = TraceReplay(tr, after="stop", nodes_per_group=NODES_PER_GROUP)
    benchmark(lambda: drive_source(RunFailures(NoRewind(model), N_GROUPS, 0), 20))


if __name__ == "__main__":
    sys.exit(main())
