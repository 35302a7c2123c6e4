"""Run a sweep specification into a result store: in this process, in local processes, or on
a Dask cluster; resumable, with the same numbers bit for bit whichever runs it.

The unit of work is a *group*, all runs of one scenario on one seed (they share the seed's
failures, :func:`spare_core.sim.run_group`); groups are packed into *batches*, one task
each, so that a task's fixed cost (pickling, scheduling, one Parquet part) stays small
against its simulations. Workers return a batch's rows to the driver, which writes them as
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
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass

from .._validate import as_int, check_choice
from ..sim import RunResult
from ..sim.grid import run_group
from .spec import SweepSpec
from .store import ResultStore

__all__ = ["run_sweep", "run_batch", "SweepProgress", "EXECUTORS"]

EXECUTORS = ("local", "dask")

_META = ("key", "group_key", "scenario_key", "scenario_json", "policy_source", "policy_json", "interval_setting", "seed")
_RESULT = tuple(f.name for f in dataclasses.fields(RunResult) if f.name not in ("timeline", "seed"))
#: the columns of a stored run: what identifies it, then the fields of its RunResult
COLUMNS = _META + _RESULT
# batch size bounds in runs: above ~2000 a killed batch loses too much; the per-batch
# overhead (a task, a Parquet part: ~5-20 ms) needs ~50+ runs of a few ms to stay < 5 %
_MIN_BATCH, _MAX_BATCH = 64, 2000


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
    """

    total: int
    stored_before: int
    computed: int
    batches: int
    parts: int
    seconds: float

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


def _keep(cols: dict, keys: set) -> dict:
    idx = [i for i, k in enumerate(cols["key"]) if k not in keys]
    if len(idx) == len(cols["key"]):
        return cols
    return {c: [v[i] for i in idx] for c, v in cols.items()}


def _batches(groups, batch_runs):
    out, cur, n = [], [], 0
    for g in groups:
        cur.append(g)
        n += len(g.runs)
        if n >= batch_runs:
            out.append(cur)
            cur, n = [], 0
    if cur:
        out.append(cur)
    return out


def _batch_key(batch) -> str:
    return hashlib.sha256("\n".join(g.key for g in batch).encode()).hexdigest()[:24]


def _ignore_sigint():
    # Ctrl-C goes to the whole foreground process group: the driver handles it and ends
    # the workers; a worker dying of it first would only break the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_sweep(spec, store, *, executor="local", workers=1, scheduler=None, batch_runs=None,
              on_batch=None) -> SweepProgress:
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
        Default: the runs to do / (8 x workers), within [64, 2000].
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
        n_todo = sum(len(g.runs) for g in todo)
        size = batch_runs or min(_MAX_BATCH, max(_MIN_BATCH, math.ceil(n_todo / (8 * workers))))
        batches = _batches(todo, size)
        state = {"computed": 0, "batches": 0, "parts": 0}

        def progress():
            return SweepProgress(total, before, state["computed"], state["batches"], state["parts"],
                                 time.perf_counter() - t0)

        def done(cols):
            cols = _keep(cols, stored)
            state["batches"] += 1
            if cols["key"]:
                store.write(cols)
                stored.update(cols["key"])
                state["parts"] += 1
                state["computed"] += len(cols["key"])
            if on_batch is not None:
                on_batch(progress())

        if not batches:
            pass
        elif executor == "dask":
            _run_dask(batches, done, workers, scheduler)
        elif workers == 1 or len(batches) == 1:
            for b in batches:
                done(run_batch(b))
        else:
            _run_pool(batches, done, workers)
        return progress()
    finally:
        store.close()


def _run_pool(batches, done, workers):
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    before = set(multiprocessing.active_children())
    ex = ProcessPoolExecutor(max_workers=min(workers, len(batches)), mp_context=ctx, initializer=_ignore_sigint)
    ok = False
    try:
        pending = {ex.submit(run_batch, b) for b in batches}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                done(f.result())
        ok = True
    finally:
        if ok:
            ex.shutdown(wait=True)
        else:  # interrupted or failed: stop now, not after the running batches
            ex.shutdown(wait=False, cancel_futures=True)
            for proc in set(multiprocessing.active_children()) - before:
                proc.terminate()


def _run_dask(batches, done, workers, scheduler):
    try:
        import logging

        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - the sweep extra is installed by the tests
        raise ImportError("executor='dask' needs dask.distributed: pip install 'spare_core[sweep]'") from None
    cluster = client = None
    own = False
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        client, own = Client(cluster), True
    elif isinstance(scheduler, str):
        client, own = Client(scheduler), True
    elif isinstance(scheduler, Client):
        client = scheduler
    else:
        raise TypeError(f"scheduler must be an address or a distributed.Client, got {type(scheduler).__name__}")
    futures = []
    try:
        # a worker lost mid-task is not the task's fault: the scheduler reruns it elsewhere
        # (its allowed-failures); retries cover an exception inside the task itself
        futures = [client.submit(run_batch, b, key=f"spare-batch-{_batch_key(b)}", retries=2) for b in batches]
        for fut in as_completed(futures):
            done(fut.result())
            fut.release()
    finally:
        if futures:
            client.cancel([f for f in futures if not f.done()])
        if own:
            client.close()
        if cluster is not None:
            cluster.close()
