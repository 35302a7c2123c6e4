"""traces: trace replay throughput, a 1e6-row failure log through the failure layer.

``python -m bench.ratios traces [--quick]`` (the workload: ``bench/workloads.py``; the
references: ``bench/peers.py``).

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

Then reading the same number of rows from CSV (``read_trace``), rows per second: times as
seconds, ISO 8601, and US dates with minutes through a strftime pattern (the whole column at
once) against ``datetime.strptime`` row by row (what a hand-written reader does); Cray host
names numbered by appearance and decoded by ``host_pattern``. And the cost of a window: a
replay process built at window 0 (the log as it is) and at another window (the log rotated).
"""
from __future__ import annotations

import warnings

import numpy as np

import datetime as dt
import tempfile
from pathlib import Path

from spare_core.events import Engine, RunFailures

# the retired event engine is timed as the peer of the sources the simulations read, until it is removed
warnings.filterwarnings("ignore", message=r"spare_core\.events\..* is retired", category=DeprecationWarning)
from spare_core.events.trace import read_trace
from spare_core.events.trace_model import TraceReplay

from bench.peers import NoRewind, PythonReplay
from bench.timing import wall_median
from bench.workloads import N_GROUPS, N_NODES, N_ROWS, NODES_PER_GROUP, drive, drive_source, make_log


def add_arguments(p):
    p.add_argument("--repeats", type=int, default=5, help="timed repeats per cell (median; 2 with --quick)")


def run(args) -> int:
    """The table; --quick: a 200,000-row log (the pytest-benchmark suite's), 2 repeats."""
    repeats = 2 if args.quick else args.repeats
    n_rows = 200_000 if args.quick else N_ROWS
    tr = make_log(n_rows)
    model = TraceReplay(tr, after="stop", nodes_per_group=NODES_PER_GROUP)
    print(f"log: {tr.n_events:,} rows, {N_NODES} nodes -> {N_GROUPS} groups, "
          f"{np.unique(tr.times).size:,} distinct instants; rows/s (median of {repeats})")
    rows = []
    for epoch in (20, 64, N_GROUPS):
        ours = wall_median(lambda: drive(model.process(N_GROUPS, seed=0), epoch), repeats)
        ref = wall_median(lambda: drive(PythonReplay(tr, NODES_PER_GROUP, N_GROUPS), epoch), repeats)
        rows.append((f"TraceReplay, epochs of {epoch} failures", ours, ref))
    src_rows = []
    for epoch in (20, 64, N_GROUPS):
        fast = wall_median(lambda: drive_source(RunFailures(model, N_GROUPS, 0), epoch), repeats)
        slow = wall_median(lambda: drive_source(RunFailures(NoRewind(model), N_GROUPS, 0), epoch), repeats)
        src_rows.append((f"RunFailures, epochs of {epoch} failures", fast, slow))
    for name, ours, ref in rows:
        print(f"  {name:<40} {n_rows / ours / 1e6:6.2f} M rows/s   python loop {n_rows / ref / 1e6:5.2f} M rows/s"
              f"   ratio {ref / ours:4.1f}x")

    for name, fast, slow in src_rows:
        print(f"  {name:<40} {n_rows / fast / 1e6:6.2f} M rows/s   one at a time {n_rows / slow / 1e6:5.2f} M rows/s"
              f"   ratio {slow / fast:4.1f}x")

    def engine():
        eng = Engine(N_GROUPS, seed=0)
        eng.add_trace(tr.times, tr.units // NODES_PER_GROUP)
        eng.set_repair(30.0)
        eng.run()

    t_eng = wall_median(engine, repeats)
    print(f"  {'Engine.add_trace + run() (Cython)':<40} {n_rows / t_eng / 1e6:6.2f} M rows/s")
    # the outputs agree (same failures handed out, in order)
    a, b = model.process(N_GROUPS, seed=0), PythonReplay(tr, NODES_PER_GROUP, N_GROUPS)
    for _ in range(200):
        assert a.take(20) == b.take(20)
        a.restart(a.now)
        b.restart(b.now)
    # chunked and one-at-a-time sources hand out the same failures
    a, b = RunFailures(model, N_GROUPS, 0), RunFailures(NoRewind(model), N_GROUPS, 0)
    assert drive_source(a, 20, max_batch=64) == drive_source(b, 20, max_batch=64)
    reading(tr, repeats)
    return 0


CRAY = r"c(?P<cabinet>\d+-\d+)c(?P<cage>\d+)s(?P<slot>\d+)n(?P<node>\d+)"


def reading(tr, repeats):
    """Rows/s of read_trace on the log written as CSV in three time forms, and the cost of a window."""
    n = tr.n_events
    t0 = dt.datetime(2014, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    stamps = [dt.datetime.fromtimestamp(t0 + t, dt.timezone.utc) for t in tr.times.tolist()]
    # Titan's layout: 25 x 8 cabinets, 3 cages, 8 slots, 4 nodes; node u at position 9 u mod 19,200
    pos = (9 * tr.units) % 19_200
    col, rest = np.divmod(pos, 768)
    row, rest = np.divmod(rest, 96)
    cage, rest = np.divmod(rest, 32)
    slot, node = np.divmod(rest, 4)
    hosts = [f"c{a}-{b}c{c}s{d}n{e}" for a, b, c, d, e in zip(col.tolist(), row.tolist(), cage.tolist(),
                                                               slot.tolist(), node.tolist())]
    us = "%m/%d/%Y %H:%M"
    forms = {"seconds": [f"{t:.3f}" for t in tr.times.tolist()],
             "ISO 8601": [d.strftime("%Y-%m-%dT%H:%M:%SZ") for d in stamps],
             f"strftime {us!r}": [d.strftime(us) for d in stamps]}
    with tempfile.TemporaryDirectory() as tmp:
        print(f"reading {n:,} CSV rows (median of {repeats}), rows/s:")
        paths = {}
        for name, cells in forms.items():
            paths[name] = Path(tmp) / f"{len(paths)}.csv"
            paths[name].write_text("time,host\n" + "".join(f"{c},{h}\n" for c, h in zip(cells, hosts)))
        for name, path in paths.items():
            kw = {"time_format": us} if name.startswith("strftime") else {}
            sec = wall_median(lambda: read_trace(path, unit_column="host", **kw), repeats)
            print(f"  read_trace, times as {name:<28} {n / sec / 1e6:6.2f} M rows/s")
        path = paths[f"strftime {us!r}"]
        sec = wall_median(lambda: read_trace(path, unit_column="host", time_format=us, host_pattern=CRAY), repeats)
        print(f"  {'the same, hosts decoded by host_pattern':<50} {n / sec / 1e6:6.2f} M rows/s")
        cells = forms[f"strftime {us!r}"]
        sec = wall_median(lambda: [dt.datetime.strptime(c, us) for c in cells], repeats)
        print(f"  {'datetime.strptime row by row (times only)':<50} {n / sec / 1e6:6.2f} M rows/s")
    for k in (1, 8):
        model = TraceReplay(tr, after="loop", nodes_per_group=NODES_PER_GROUP, windows=k)
        seed = next(s for s in range(k) if model.window(s) == k - 1)  # window 0 for k = 1, else a rotated one
        sec = wall_median(lambda: model.process(N_GROUPS, seed=seed), repeats)
        print(f"  process at window {k - 1} of {k}: {sec * 1e3:7.1f} ms to build ({n:,} rows)")
