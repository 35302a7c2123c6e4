"""The one executor: runs a :class:`~spare_core.sim.study.Study` in this process, in local
processes or on a Dask cluster, into a :class:`~spare_core.sim.results.ResultSet`, and (given a
result store) stores each batch as it finishes, resumably.

The unit of work is a *group*, all runs of one scenario on one seed (they share the seed's
failures, :func:`spare_core.sim.run_group`); groups are packed into *batches*, one task
each, sized from the measured seconds per run so that a task lasts about ``target_seconds``
and its fixed cost (pickling, scheduling, one Parquet part and its fsync; docs/sweeps.md has
the measured figures) stays small against it. A few tasks per worker are in flight at a
time, so a study of 10^6 runs holds a few batches in flight, not all of them. Workers return a
batch's runs to the driver, which stores them (one part per batch) and keeps them for the
result set.

With a store, a resumed execution skips every group whose runs are all stored (their runs
are read back into the result set); a group with some runs missing (the study grew) is run
whole again, and only its missing runs are written, so a stored run always holds what an
uninterrupted execution of the current study computes. Every run's numbers depend on its
group alone, so nothing here (executor, workers, batch sizes, finishing order,
interruptions) changes them.
"""
from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
import signal
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

from .._results import columns
from .._validate import as_float, as_int, check_choice
from .grid import run_group
from .results import ResultSet, summarise
from .run import RunResult
from .study import Study

__all__ = ["execute", "Progress", "EXECUTORS", "run_groups", "store_columns", "map_unordered", "STORE_COLUMNS"]

EXECUTORS = ("local", "dask")

_META = ("key", "group_key", "scenario_key", "scenario_json", "policy_source", "policy_json", "interval_setting", "seed")
# a stored run's columns: RunResult's declared columns but its seed (the study's seed is _META's)
_RESULT = tuple(c.name for c in columns(RunResult) if c.name != "seed")
# what a RunResult is built from when read back (the derived columns are its properties)
_FIELDS = tuple(c.name for c in columns(RunResult) if c.name != "seed" and not c.derived)
#: the columns of a stored run: what identifies it, then the columns of its RunResult
#: (:func:`spare_core._results.columns`; the derived ones, GPU-hours, cost, ETTR, included)
STORE_COLUMNS = _META + _RESULT
# the first batches, before any run has been timed; and the most runs in one batch
_FIRST_BATCH, _MAX_BATCH = 32, 20_000
# tasks in flight per worker: one running, one queued so a worker never waits for the driver
_IN_FLIGHT = 2


@dataclass(frozen=True)
class Progress:
    """What :func:`execute` has done so far (passed to ``on_progress`` after each batch).

    Attributes
    ----------
    total : int
        Runs in the study.
    stored_before : int
        Runs of the study already in the store when the execution started (skipped).
    computed : int
        Runs simulated by this call (and stored, with a store).
    batches, parts : int
        Tasks run and Parquet parts written by this call.
    seconds : float
        Wall time of this call so far.
    compute_seconds : float
        Wall seconds the workers spent simulating (summed over tasks): ``compute_seconds /
        (seconds x workers)`` is the execution's efficiency, the rest its overhead.
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


def run_groups(groups) -> list:
    """Simulate whole groups: ``[((scenario index, seed), [RunResult in the group's run
    order], seconds)]``. Runs anywhere: in the driver, a local worker process or a Dask
    worker (what it returns names each group, so the groups are not sent back).

    Groups of one key (the same scenario, but for its name, on the same seed: the same
    failures) with runs of one policy (the same ``policy_json``) are simulated once in a
    batch and relabelled with each group's scenario name: a grid over ``elastic.*`` keys makes
    one group per value, and checkpoint-only, which does not read them, would otherwise be
    simulated once per value for the same result (the store keys are unchanged; the planner
    keeps such groups in one batch).
    """
    out = []
    shared: dict = {}  # (group key, policy json) -> the RunResult simulated for it
    for g in groups:
        t = time.perf_counter()
        runs = [None] * len(g.runs)
        fresh = [i for i, r in enumerate(g.runs)
                 if g.key is None or r.policy_json is None or (g.key, r.policy_json) not in shared]
        for i, res in zip(fresh, run_group(g.scenario, g.stream_seed, [g.runs[i].policy for i in fresh])):
            runs[i] = res
            if g.key is not None and g.runs[i].policy_json is not None:
                shared.setdefault((g.key, g.runs[i].policy_json), res)
        for i, r in enumerate(g.runs):
            if runs[i] is None:
                runs[i] = replace(shared[(g.key, r.policy_json)], scenario=g.scenario.name)
        out.append(((g.scenario_index, g.seed), runs, time.perf_counter() - t))
    return out


class _Planner:
    """Packs whole groups into batches of about ``target_seconds`` of measured work (or of
    ``batch_runs`` runs), smaller near the end so the workers finish together."""

    def __init__(self, groups, workers, batch_runs, target_seconds):
        # the groups of one key next to each other, in the order of their first (unchanged when
        # every key is distinct), so that run_groups can share their runs within a batch
        same: dict = {}
        for g in groups:
            same.setdefault(g.key if g.key is not None else id(g), []).append(g)
        self._queue = deque(g for gs in same.values() for g in gs)
        self._left = sum(len(g.runs) for g in groups)
        self._workers = workers
        self._fixed = batch_runs
        self._target = target_seconds
        self._runs = 0
        self._seconds = 0.0

    def record(self, batch_result) -> None:
        """Count a finished batch (what :func:`run_groups` returned) into the time per run."""
        self._runs += sum(len(runs) for _, runs, _ in batch_result)
        self._seconds += sum(s for _, _, s in batch_result)

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
        while self._queue and (n < size or not batch or
                               (batch[-1].key is not None and self._queue[0].key == batch[-1].key)):
            g = self._queue.popleft()
            batch.append(g)
            n += len(g.runs)
        self._left -= n
        return batch


def _batch_key(batch) -> str:
    return hashlib.sha256("\n".join(g.key or f"{g.scenario_index}:{g.seed}" for g in batch).encode()).hexdigest()[:24]


def _ignore_sigint():
    # Ctrl-C goes to the whole foreground process group: the driver handles it and ends
    # the workers; a worker dying of it first would only break the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def store_columns(done, keep=None) -> dict:
    """Runs as store columns (name -> list): ``done`` is ``[(group, its RunResults)]``; only
    the runs whose key is in ``keep`` (all with None)."""
    cols = {c: [] for c in STORE_COLUMNS}
    for g, runs in done:
        for run, res in zip(g.runs, runs):
            if keep is not None and run.key not in keep:
                continue
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


def stored_run(row) -> RunResult:
    """The RunResult of one stored row (a dict of the store's columns; its seed the study's)."""
    return RunResult(**{f: row[f] for f in _FIELDS}, seed=row["seed"], timeline=None)


# -- sinks: where the finished batches go ----------------------------------------------------
class _MemorySink:
    """Nothing stored: every group is run, its runs only kept."""

    def open(self, total: int) -> None:
        pass

    def close(self) -> None:
        pass

    def stored(self, groups, collect: bool):
        """``(keys stored, key -> RunResult read back)``: None, nothing."""
        return None, {}

    def take(self, batch) -> tuple[int, int]:
        """``(runs computed, parts written)`` for a finished batch ``[(group, runs)]``."""
        return sum(len(g.runs) for g, _ in batch), 0


class _StoreSink:
    """A :class:`~spare_core.sweeps.ResultStore`: each batch's runs it does not hold stored as
    one part; the groups it holds whole are read back instead of run."""

    def __init__(self, store):
        self._store = store
        self._keys: set = set()

    def open(self, total: int) -> None:
        self._store.open_for_writing(total)

    def close(self) -> None:
        self._store.close()

    def stored(self, groups, collect: bool):
        if not collect:
            self._keys = self._store.keys()
            return self._keys, {}
        # one read: the keys and the runs read back come from the same checked parts
        table = self._store.read(list(STORE_COLUMNS))
        self._keys = set(table.column("key").to_pylist())
        wanted = {r.key for g in groups for r in g.runs if all(x.key in self._keys for x in g.runs)}
        back = {row["key"]: stored_run(row) for row in table.to_pylist() if row["key"] in wanted} if wanted else {}
        return self._keys, back

    def take(self, batch) -> tuple[int, int]:
        cols = store_columns(batch, {r.key for g, _ in batch for r in g.runs} - self._keys)
        if not cols["key"]:
            return 0, 0
        from .. import __version__

        cols["spare_core_version"] = [__version__] * len(cols["key"])  # provenance
        self._store.write(cols)
        self._keys.update(cols["key"])
        return len(cols["key"]), 1


# -- plan: which groups, what is stored already ----------------------------------------------
@dataclass
class _Plan:
    """The study's groups, those to run, and the runs the store holds already."""

    groups: list
    todo: list
    stored_before: int
    found: dict = field(default_factory=dict)  # (scenario index, seed) -> runs read back (collect)
    found_ids: set = field(default_factory=set)  # groups the store holds whole

    @property
    def total(self) -> int:
        return sum(len(g.runs) for g in self.groups)


def _plan(groups, sink, collect: bool) -> _Plan:
    stored, back = sink.stored(groups, collect)
    if stored is None:
        return _Plan(groups, list(groups), 0)
    todo = [g for g in groups if any(r.key not in stored for r in g.runs)]
    whole = [g for g in groups if all(r.key in stored for r in g.runs)]
    found = {(g.scenario_index, g.seed): [back[r.key] for r in g.runs] for g in whole} if collect else {}
    return _Plan(groups, todo, sum(1 for g in groups for r in g.runs if r.key in stored), found,
                 {(g.scenario_index, g.seed) for g in whole})


class _Collector:
    """What the finished batches gave: the runs (``collect``), the groups done, per-group
    timings and the counters of :class:`Progress`; each batch goes to the sink first."""

    def __init__(self, plan: _Plan, sink, collect: bool, on_progress, t0: float):
        self._by_id = {(g.scenario_index, g.seed): g for g in plan.groups}
        self._sink, self._collect, self._on_progress, self._t0 = sink, collect, on_progress, t0
        self._total, self._before = plan.total, plan.stored_before
        self.done = dict(plan.found)
        self.done_ids = set(plan.found_ids)
        self.timings: list = []
        self._computed = self._batches = self._parts = 0
        self._compute = 0.0

    def add(self, batch_result) -> None:
        batch = [(self._by_id[gid], runs, s) for gid, runs, s in batch_result]
        self._compute += sum(s for _, _, s in batch)
        self._batches += 1
        computed, parts = self._sink.take([(g, runs) for g, runs, _ in batch])
        self._computed += computed
        self._parts += parts
        for g, runs, s in batch:
            self.done_ids.add((g.scenario_index, g.seed))
            if self._collect:
                self.done[(g.scenario_index, g.seed)] = runs
            self.timings.append({"scenario": g.scenario.name, "seed": g.seed, "seconds": s})
        if self._on_progress is not None:
            self._on_progress(self.progress())

    def progress(self) -> Progress:
        return Progress(self._total, self._before, self._computed, self._batches, self._parts,
                        time.perf_counter() - self._t0, self._compute)


# -- loop: the batches run here, in local processes or on Dask -------------------------------
def _loop(todo, add, *, executor, workers, scheduler, batch_runs, target_seconds) -> int:
    """Run the groups ``todo`` in batches, each finished batch to ``add``; return the
    workers that ran them (a Dask cluster's own count)."""
    if not todo:
        return workers
    if executor == "dask":
        client, close = _dask_client(workers, scheduler)
        try:
            workers = max(1, len(client.scheduler_info().get("workers", {})))
            _run_dask(_Planner(todo, workers, batch_runs, target_seconds), add, client)
        finally:
            close()
        return workers
    planner = _Planner(todo, workers, batch_runs, target_seconds)
    batches = iter(planner.next, None)
    for result in (map(run_groups, batches) if workers == 1 else map_unordered(run_groups, batches, workers)):
        planner.record(result)
        add(result)
    return workers


def _check(study, executor, workers, scheduler, batch_runs, target_seconds, on_progress, on_interrupt, store):
    """The arguments of :func:`execute`, checked: ``(workers, batch_runs, target_seconds)``."""
    if not isinstance(study, Study):
        raise TypeError(f"study must be a Study, got {type(study).__name__}")
    check_choice(executor, "executor", EXECUTORS)
    workers = as_int(workers, "workers", min_value=0) or (os.cpu_count() or 1)
    if scheduler is not None and executor != "dask":
        raise ValueError("scheduler is for executor='dask'")
    if batch_runs is not None:
        batch_runs = as_int(batch_runs, "batch_runs", min_value=1)
    target_seconds = as_float(target_seconds, "target_seconds", min_value=0.0, strict_min=True)
    if on_progress is not None and not callable(on_progress):
        raise TypeError(f"on_progress must be callable, got {type(on_progress).__name__}")
    check_choice(on_interrupt, "on_interrupt", ("raise", "return"))
    if store is not None:
        if study.streams != "key":
            raise ValueError("a stored study needs streams='key' (a stored run's numbers must depend on what it "
                             "simulates alone)")
        if not all(callable(getattr(store, m, None)) for m in ("open_for_writing", "keys", "write", "read", "close")):
            raise TypeError(f"store must be a ResultStore (spare_core.sweeps.ResultStore), got {type(store).__name__}")
    return workers, batch_runs, target_seconds


def execute(study: Study, *, executor: str = "local", workers: int = 1, scheduler: Any = None, store: Any = None,
            batch_runs: int | None = None, target_seconds: float = 2.0, on_progress: Any = None,
            on_interrupt: str = "raise", collect: bool = True) -> ResultSet:
    """Run every run of ``study`` (that ``store`` does not hold yet) into a result set.

    Parameters
    ----------
    study : Study
    executor : {"local", "dask"}, default "local"
        "local": this process (``workers=1``) or a pool of ``workers`` processes. "dask": a
        Dask distributed cluster, ``scheduler``'s or a ``LocalCluster`` of ``workers``
        single-threaded processes started for it.
    workers : int, default 1
        Local processes, or the LocalCluster's workers (``0``: one per CPU); never more
        than there are groups to run.
    scheduler : str or distributed.Client, optional
        With "dask": the address of a running scheduler (``"tcp://host:8786"``) or a Client.
    store : ResultStore, optional
        Where each batch is stored as it finishes (:class:`spare_core.sweeps.ResultStore`;
        the study's streams must be ``"key"``); runs already there are not run again.
    batch_runs : int, optional
        Runs per task (whole groups are packed until a batch holds at least this many).
        Default: sized from the measured time per run to last ``target_seconds``.
    target_seconds : float, default 2.0
        Wall seconds of work per task when ``batch_runs`` is not given: also the work a
        killed worker or driver loses at most per task.
    on_progress : callable, optional
        Called as ``on_progress(progress)`` (a :class:`Progress`) after each batch, in the
        driver.
    on_interrupt : {"raise", "return"}, default "raise"
        On Ctrl-C (KeyboardInterrupt) the workers are stopped, and then it is re-raised, or
        the result set of the groups finished so far is returned with ``interrupted=True``.
    collect : bool, default True
        Keep the runs for the result set (False: a store-only execution of a huge study
        returns a result set without runs; its :attr:`ResultSet.progress` says what was done).

    Returns
    -------
    ResultSet

    Raises
    ------
    TypeError, ValueError
        Bad arguments (before any simulation). The store's own errors
        (:class:`~spare_core.sweeps.StoreError`: not writable, full, in use) before any
        simulation too.

    Notes
    -----
    Three parts: the plan (the groups, those the store holds whole, read back), the loop
    (the batches, here, in local processes or on Dask) and the sink (memory, or the store:
    one part per batch), each finished batch counted by one collector.
    """
    workers, batch_runs, target_seconds = _check(study, executor, workers, scheduler, batch_runs, target_seconds,
                                                 on_progress, on_interrupt, store)
    t0 = time.perf_counter()
    groups = study.groups()
    sink = _MemorySink() if store is None else _StoreSink(store)
    sink.open(sum(len(g.runs) for g in groups))
    interrupted = False
    try:
        plan = _plan(groups, sink, collect)
        if scheduler is None:  # a batch is a whole group: more workers than groups would idle
            workers = max(1, min(workers, len(plan.todo)))
        got = _Collector(plan, sink, collect, on_progress, t0)
        try:
            workers = _loop(plan.todo, got.add, executor=executor, workers=workers, scheduler=scheduler,
                            batch_runs=batch_runs, target_seconds=target_seconds)
        except KeyboardInterrupt:
            if on_interrupt == "raise":
                raise
            interrupted = True
        last = got.progress()
    finally:
        sink.close()
    return _assemble(study, groups, got.done, interrupted=interrupted, elapsed=time.perf_counter() - t0,
                     workers=workers, timings=got.timings, progress=last, groups_done=len(got.done_ids))


def _assemble(study, groups, done, *, interrupted, elapsed, workers, timings, progress, groups_done) -> ResultSet:
    """The result set: cells in the study's order (scenario, then its runs' order), seeds in
    the study's order; ``done`` maps (scenario index, seed) to a group's runs."""
    position = {s: i for i, s in enumerate(study.seeds)}
    by_scenario: dict = {}
    for g in groups:
        if (g.scenario_index, g.seed) in done:
            by_scenario.setdefault(g.scenario_index, []).append(g)
    runs, summaries = [], []
    for si in sorted(by_scenario):
        per_seed = sorted(by_scenario[si], key=lambda g: position[g.seed])
        n = study.scenarios[si].n_groups
        for j, run in enumerate(per_seed[0].runs):
            cell = [done[(g.scenario_index, g.seed)][j] for g in per_seed]
            runs.extend(cell)
            summaries.append(summarise(cell, n, run.interval_setting))
    labels = study.labels()
    return ResultSet(runs, summaries, {k: uses for k, (_, uses) in labels.items()},
                     {k: name for k, (name, _) in labels.items()}, interrupted, elapsed, workers, groups_done,
                     len(groups), timings, progress)


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


def _run_dask(plan, add, client):
    from distributed import as_completed

    n_workers = max(1, len(client.scheduler_info().get("workers", {})))

    def submit():
        batch = plan.next()
        if batch is None:
            return None
        # a worker lost mid-task is not the task's fault: the scheduler reruns it elsewhere
        # (its allowed-failures); retries cover an exception inside the task itself
        return client.submit(run_groups, batch, key=f"spare-batch-{_batch_key(batch)}", retries=2)

    futures = [f for f in (submit() for _ in range(_IN_FLIGHT * n_workers)) if f is not None]
    queue = as_completed(futures)
    try:
        for fut in queue:
            result = fut.result()
            fut.release()
            plan.record(result)
            add(result)
            nxt = submit()
            if nxt is not None:
                queue.add(nxt)
                futures.append(nxt)
    finally:
        client.cancel([f for f in futures if not f.done()])
