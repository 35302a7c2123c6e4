"""pytest-benchmark suite of trace replay: a failure log through the failure layer.

``python -m pytest bench/bench_traces.py``, on a 200,000-row log (``bench/workloads.py``'s
``make_log``); ``python -m bench.ratios traces`` prints the rows/s table at 1e6 rows.
"""
from __future__ import annotations

from spare_core.events import RunFailures
from spare_core.events.trace_model import TraceReplay

from bench.peers import NoRewind, PythonReplay
from bench.workloads import N_GROUPS, NODES_PER_GROUP, drive, drive_source, make_log


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
