"""Run a sweep specification into a result store: in this process, in local processes, or on
a Dask cluster; resumable, with the same numbers bit for bit whichever runs it.

The unit of work is a *group*, all runs of one scenario on one seed (they share the seed's
failures, :func:`spare_core.sim.run_group`); groups are packed into *batches*, one task
each, sized from the measured seconds per run so that a task lasts about
``target_seconds`` and its fixed cost (pickling, scheduling, one Parquet part and its
fsync; docs/sweeps.md has the measured figures) stays small against it. A few tasks per worker are in flight at a time,
so a sweep of 10^6 runs holds a few batches in memory, not all of them. Workers return a batch's rows to the driver, which writes them as
one part of the :class:`~spare_core.sweeps.store.ResultStore` as soon as the batch is done.
A resumed sweep skips every group whose runs are all stored; a group with some runs missing
(the spec grew) is run whole again, and only its missing runs are written, so a stored run
always holds what an uninterrupted sweep of the current spec computes.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import multiprocessing
import os
import signal
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass

from .. import __version__
from .._validate import as_float, as_int, check_choice
from ..sim import RunResult
from ..sim.grid import run_group
from .spec import SweepSpec
from .store import ResultStore

__all__ = ["run_sweep", "run_batch", "map_unordered", "SweepProgress", "EXECUTORS"]

EXECUTORS = ("local", "dask")

_META = ("key", "group_key", "scenario_key", "scenario_json", "policy_source", "policy_json", "interval_setting", "seed")
_RESULT = tuple(f.name for f in dataclasses.fields(RunResult) if f.name not in ("timeline", "seed"))
#: the columns of a stored run: what identifies it, then the fields of its RunResult
COLUMNS = _META + _RESULT
# the first batches, before any run has been timed; and the most runs in one batch
_FIRST_BATCH, _MAX_BATCH = 32, 20_000
# tasks in flight per worker: one running, one queued so a worker never waits for the driver
_IN_FLIGHT = 2


@dataclass(frozen=True)
class SweepProgress:
    """What :func:`run_sweep` did.

    Attributes
    ----------
    total : int
        Runs in the spec.
    stored_before : int
        Runs of the spec already in the store when the sweep started (skipped).
    computed : int
        Runs simulated and stored by this call.
    batches, parts : int
        Tasks run and Parquet parts written by this call.
    seconds : float
        Wall time of this call.
    compute_seconds : float
        Wall seconds the workers spent simulating (summed over tasks): ``compute_seconds /
        (seconds x workers)`` is the sweep's efficiency, the rest its overhead.
    """

    total: int
    stored_before: int
    computed: int
    batches: int
    parts: int
    seconds: float
    compute_seconds: float = 0.0

    @property
    def runs_per_second(self) -> float:
        return self.computed / self.seconds if self.seconds > 0 else math.nan


def run_batch(groups) -> dict:
    """Simulate whole groups; return their rows as columns (name -> list). Runs anywhere:
    in the driver, a local worker process or a Dask worker."""
    cols = {c: [] for c in COLUMNS}
    for g in groups:
        results = run_group(g.scenario, g.stream_seed, [r.policy for r in g.runs])
        for run, res in zip(g.runs, results):
            cols["key"].append(run.key)
            cols["group_key"].append(g.key)
            cols["scenario_key"].append(run.scenario_key)
            cols["scenario_json"].append(g.scenario_json)
            cols["policy_source"].append(run.policy_source)
            cols["policy_json"].append(run.policy_json)
            cols["interval_setting"].append(run.interval_setting)
            cols["seed"].append(run.seed)
            for f in _RESULT:
                cols[f].append(getattr(res, f))
    return cols


def _timed_batch(groups):
    t = time.perf_counter()
    cols = run_batch(groups)
    return cols, time.perf_counter() - t


def _keep(cols: dict, keys: set) -> dict:
    idx = [i for i, k in enumerate(cols["key"]) if k not in keys]
    if len(idx) == len(cols["key"]):
        return cols
    return {c: [v[i] for i in idx] for c, v in cols.items()}


class _Planner:
    """Packs whole groups into batches of about ``target_seconds`` of measured work (or of
    ``batch_runs`` runs), smaller near the end so the workers finish together."""

    def __init__(self, groups, workers, batch_runs, target_seconds):
        self._queue = deque(groups)
        self._left = sum(len(g.runs) for g in groups)
        self._workers = workers
        self._fixed = batch_runs
        self._target = target_seconds
        self._runs = 0
        self._seconds = 0.0

    def record(self, runs: int, seconds: float) -> None:
        self._runs += runs
        self._seconds += seconds

    def next(self):
        if not self._queue:
            return None
        if self._fixed:
            size = self._fixed
        elif self._runs == 0 or self._seconds <= 0:
            size = _FIRST_BATCH
        else:
            per_run = self._seconds / self._runs
            size = min(_MAX_BATCH, self._target / per_run)
            if self._workers > 1:  # near the end, smaller batches keep every worker busy
                size = min(size, math.ceil(self._left / (_IN_FLIGHT * self._workers)))
        batch, n = [], 0
        while self._queue and (n < size or not batch):
            g = self._queue.popleft()
            batch.append(g)
            n += len(g.runs)
        self._left -= n
        return batch


def _batch_key(batch) -> str:
    return hashlib.sha256("\n".join(g.key for g in batch).encode()).hexdigest()[:24]


def _ignore_sigint():
    # Ctrl-C goes to the whole foreground process group: the driver handles it and ends
    # the workers; a worker dying of it first would only break the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_sweep(spec, store, *, executor="local", workers=1, scheduler=None, batch_runs=None,
              target_seconds=2.0, on_batch=None) -> SweepProgress:
    """Run every run of ``spec`` that ``store`` does not hold yet, and store it.

    Parameters
    ----------
    spec : SweepSpec
    store : ResultStore, str or os.PathLike
        The result store (a directory; created if missing).
    executor : {"local", "dask"}, default "local"
        "local": this process (``workers=1``) or a pool of ``workers`` processes. "dask": a
        Dask distributed cluster, ``scheduler``'s or a ``LocalCluster`` of ``workers``
        single-threaded processes started for the sweep.
    workers : int, default 1
        Local processes, or the LocalCluster's workers (``0``: one per CPU).
    scheduler : str or distributed.Client, optional
        With "dask": the address of a running scheduler (``"tcp://host:8786"``) or a Client.
    batch_runs : int, optional
        Runs per task (whole groups are packed until a batch holds at least this many).
        Default: sized from the measured time per run to last ``target_seconds``.
    target_seconds : float, default 2.0
        Wall seconds of work per task when ``batch_runs`` is not given: also the work a
        killed worker or driver loses at most per task.
    on_batch : callable, optional
        Called as ``on_batch(progress)`` (a :class:`SweepProgress` so far) after each stored
        batch, in the driver.

    Returns
    -------
    SweepProgress

    Raises
    ------
    TypeError, ValueError
        Bad arguments. :class:`~spare_core.sweeps.store.StoreError`: the store is not
        writable, full or in use (all before any simulation).
    KeyboardInterrupt
        Re-raised after the workers are stopped; every batch finished before it is stored.

    Notes
    -----
    Every run's numbers depend on its group alone (:class:`~spare_core.sweeps.spec.Group`:
    the scenario, the seed, and the spec's policies on it), so the store's content does not
    depend on the executor, ``workers``, ``batch_runs``, the order batches finish in, or on
    interruptions and resumptions.
    """
    if not isinstance(spec, SweepSpec):
        raise TypeError(f"spec must be a SweepSpec, got {type(spec).__name__}")
    check_choice(executor, "executor", EXECUTORS)
    workers = as_int(workers, "workers", min_value=0) or (os.cpu_count() or 1)
    if scheduler is not None and executor != "dask":
        raise ValueError("scheduler is for executor='dask'")
    if batch_runs is not None:
        batch_runs = as_int(batch_runs, "batch_runs", min_value=1)
    target_seconds = as_float(target_seconds, "target_seconds", min_value=0.0, strict_min=True)
    if on_batch is not None and not callable(on_batch):
        raise TypeError(f"on_batch must be callable, got {type(on_batch).__name__}")
    if not isinstance(store, ResultStore):
        store = ResultStore(store)
    t0 = time.perf_counter()
    groups = spec.groups()
    total = sum(len(g.runs) for g in groups)
    store.open_for_writing(total)
    try:
        stored = store.keys()
        before = sum(1 for g in groups for r in g.runs if r.key in stored)
        todo = [g for g in groups if any(r.key not in stored for r in g.runs)]
        if scheduler is None:  # a batch is a whole group: more workers than groups would idle
            workers = max(1, min(workers, len(todo)))
        state = {"computed": 0, "batches": 0, "parts": 0, "compute": 0.0}
        if executor == "dask" and todo:
            client, close = _dask_client(workers, scheduler)
            workers = max(1, len(client.scheduler_info().get("workers", {})))
        plan = _Planner(todo, workers, batch_runs, target_seconds)

        def progress():
            return SweepProgress(total, before, state["computed"], state["batches"], state["parts"],
                                 time.perf_counter() - t0, state["compute"])

        def done(result):
            cols, seconds = result
            plan.record(len(cols["key"]), seconds)
            state["compute"] += seconds
            cols = _keep(cols, stored)
            state["batches"] += 1
            if cols["key"]:
                cols["spare_core_version"] = [__version__] * len(cols["key"])  # provenance
                store.write(cols)
                stored.update(cols["key"])
                state["parts"] += 1
                state["computed"] += len(cols["key"])
            if on_batch is not None:
                on_batch(progress())

        if not todo:
            pass
        elif executor == "dask":
            try:
                _run_dask(plan, done, client)
            finally:
                close()
        elif workers == 1:
            while (batch := plan.next()) is not None:
                done(_timed_batch(batch))
        else:
            _run_pool(plan, done, workers)
        return progress()
    finally:
        store.close()


def _run_pool(plan, done, workers):
    for result in map_unordered(_timed_batch, iter(plan.next, None), workers):
        done(result)


def map_unordered(fn, tasks, workers: int, *, in_flight: int = _IN_FLIGHT):
    """``fn(task)`` for every task, in ``workers`` local processes, yielded as each finishes.

    Tasks are drawn from the iterable only as workers free up (``in_flight`` per worker),
    so a long stream is never all in memory. The workers ignore Ctrl-C (the driver gets it).
    A task that raises re-raises here; a worker that dies (killed, out of memory, a task
    its process cannot unpickle) raises ``BrokenProcessPool`` instead of waiting for ever.
    When the consumer stops early (an exception, Ctrl-C, a ``break``), the workers are
    terminated at once: their half-done tasks are dropped.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled by name).
    tasks : iterable
        Its arguments, one per call (each pickled to a worker).
    workers : int
        Processes, >= 1.
    in_flight : int, default 2
        Tasks handed out per worker at a time: one running, one queued.
    """
    tasks = iter(tasks)
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    before = set(multiprocessing.active_children())
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_ignore_sigint)
    ok = False
    try:
        pending = set()
        while True:
            while len(pending) < in_flight * workers and (task := next(tasks, _END)) is not _END:
                pending.add(ex.submit(fn, task))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                yield f.result()
        ok = True
    finally:
        if ok:
            ex.shutdown(wait=True)
        else:  # interrupted or failed: stop now, not after the running tasks
            ex.shutdown(wait=False, cancel_futures=True)
            for proc in set(multiprocessing.active_children()) - before:
                proc.terminate()


_END = object()


def _dask_client(workers, scheduler):
    """``(client, close)`` for the Dask executor: the given Client, one on the given address,
    or one on a LocalCluster of ``workers`` single-threaded processes started here."""
    try:
        import logging

        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the sweep extra is installed by the tests
        raise ImportError("executor='dask' needs dask.distributed: pip install 'spare_core[sweep]'") from None
    if isinstance(scheduler, Client):
        return scheduler, lambda: None
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address or a distributed.Client, got {type(scheduler).__name__}")
    if scheduler is not None:
        client = Client(scheduler)
        return client, client.close
    # ":0": the scheduler's HTTP server (health, metrics) on a free port, so a sweep never
    # collides with a dashboard the user already runs on 8787
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    client = Client(cluster)

    def close():
        client.close()
        cluster.close()

    return client, close


def _run_dask(plan, done, client):
    from distributed import as_completed

    n_workers = max(1, len(client.scheduler_info().get("workers", {})))

    def submit():
        batch = plan.next()
        if batch is None:
            return None
        # a worker lost mid-task is not the task's fault: the scheduler reruns it elsewhere
        # (its allowed-failures); retries cover an exception inside the task itself
        return client.submit(_timed_batch, batch, key=f"spare-batch-{_batch_key(batch)}", retries=2)

    futures = [f for f in (submit() for _ in range(_IN_FLIGHT * n_workers)) if f is not None]
    queue = as_completed(futures)
    try:
        for fut in queue:
            result = fut.result()
            fut.release()
            done(result)
            nxt = submit()
            if nxt is not None:
                queue.add(nxt)
                futures.append(nxt)
    finally:
        client.cancel([f for f in futures if not f.done()])
