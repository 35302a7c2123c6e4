"""Runs in worker processes: what a scenario carries survives pickling (a replayed log
included), and a worker that dies is an error, never a wait for ever."""
from __future__ import annotations

import datetime as dt
import os
import pickle
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import pytest

from spare_core.events.trace import Trace
from spare_core.scenario_file import load_scenario_file
from spare_core.sim import Study, execute
from spare_core.sim.executor import map_unordered

TRACE_JOB = Path(__file__).resolve().parents[1] / "examples" / "trace_job.toml"


def test_a_trace_pickles_to_an_equal_read_only_trace():
    tr = Trace([1.0, 2.0, 2.0, 7.5], [0, 3, 1, 3], n_units=5, end=9.0, unit_names=("a", "b", "c", "d", "e"),
               reasons=("gpu", "nic", "nic", "gpu"), start=dt.datetime(2025, 3, 3, tzinfo=dt.timezone.utc),
               source="log.csv")
    back = pickle.loads(pickle.dumps(tr))
    for name in Trace.__slots__:
        a, b = getattr(tr, name), getattr(back, name)
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, name
    assert not back.times.flags.writeable and not back.units.flags.writeable
    with pytest.raises(AttributeError, match="immutable"):
        back.end = 1.0


def test_a_replayed_log_runs_in_worker_processes_as_in_one():
    sf = load_scenario_file(TRACE_JOB, ["job.steps=20000"])
    assert pickle.loads(pickle.dumps(sf.scenario)).failures == sf.scenario.failures
    study = Study([sf.scenario], ("ckpt", "spare"), (2,), seeds=(0, 1), streams="seed")
    one = execute(study, workers=1)
    two = execute(study, workers=2)
    assert two.workers == 2
    key = lambda r: (r.policy, r.redundancy, r.seed)  # noqa: E731
    assert list(map(key, one.runs)) == list(map(key, two.runs))
    assert {key(r): r.ratio for r in one.runs} == {key(r): r.ratio for r in two.runs}


_EXAMPLES = TRACE_JOB.parent


@pytest.mark.parametrize("name, sets", [
    ("preemption_job.toml", []),                       # a capacity log (removals and additions)
    ("bamboo_p3.toml", ["job.steps=3000"]),            # Bamboo's spot trace, with a step-time table
    ("trace_job_classes.toml", ["job.steps=20000"]),   # a log's cause column read as failure classes
    ("fleet_placement.toml", ["job.steps=20000"]),     # a placement with lemons
])
def test_capacity_cause_and_placement_files_run_in_workers_as_in_one(name, sets):
    """What these logs carry (a capacity timeline, each row's class, a placement's node log)
    survives pickling into worker processes: 1 and 2 workers give the same runs, every number."""
    sf = load_scenario_file(_EXAMPLES / name, sets)
    study = Study([sf.scenario], sf.policies, (2,), seeds=(0, 1), streams="seed")
    one = execute(study, workers=1)
    two = execute(study, workers=2)
    assert two.workers == 2
    key = lambda r: (r.policy, r.redundancy, r.seed)  # noqa: E731
    assert sorted(map(key, one.runs)) == sorted(map(key, two.runs))
    fields = ("ratio", "wall_time", "failures_seen", "restarts", "finished")
    a = {key(r): tuple(getattr(r, f) for f in fields) for r in one.runs}
    b = {key(r): tuple(getattr(r, f) for f in fields) for r in two.runs}
    assert a == b and any(v[2] > 0 for v in a.values())


def _square_or_die(x):
    if x == 3:
        os._exit(7)  # a worker killed mid-task (out of memory, a signal, a crash in C)
    return x * x


def _square_or_raise(x):
    if x == 3:
        raise ValueError("task 3 failed")
    return x * x


def test_a_dead_worker_is_an_error_not_a_hang():
    with pytest.raises(BrokenProcessPool):
        list(map_unordered(_square_or_die, range(6), 2))


def test_a_failing_task_reraises_and_the_others_come_back():
    assert sorted(map_unordered(_square_or_raise, [0, 1, 2, 4], 2)) == [0, 1, 4, 16]
    with pytest.raises(ValueError, match="task 3 failed"):
        list(map_unordered(_square_or_raise, range(6), 2))
