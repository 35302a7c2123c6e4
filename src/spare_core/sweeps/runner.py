"""Run a sweep specification into a result store: the one executor
(:func:`spare_core.sim.execute`) with a :class:`~spare_core.sweeps.store.ResultStore`.

:func:`execute` is the executor itself, taking a store as a path too; :func:`run_sweep` is
the store-only form the ``spare sweep`` command uses (it keeps no runs in memory and
returns what it did). The batching, the process pool, the Dask path and the resumption
rules are the executor's (:mod:`spare_core.sim.executor`); a resumed sweep skips every
group whose runs are all stored, and a group with some runs missing (the spec grew) is run
whole again, only its missing runs written.
"""
from __future__ import annotations

from ..sim.executor import EXECUTORS, Progress, map_unordered, run_groups, store_columns
from ..sim.executor import execute as _execute
from ..sim.study import Study
from .store import ResultStore

__all__ = ["execute", "run_sweep", "run_batch", "map_unordered", "EXECUTORS"]


def execute(study, *, store=None, **options):
    """:func:`spare_core.sim.execute` with ``store`` also given as a directory path.

    Parameters
    ----------
    study : Study
    store : ResultStore, str or os.PathLike, optional
    **options
        As :func:`spare_core.sim.execute` (executor, workers, scheduler, batch_runs,
        target_seconds, on_progress, on_interrupt, collect).

    Returns
    -------
    ResultSet
    """
    if store is not None and not isinstance(store, ResultStore):
        store = ResultStore(store)
    return _execute(study, store=store, **options)


def run_batch(groups) -> dict:
    """Simulate whole groups; return their rows as store columns (name -> list)."""
    by_id = {(g.scenario_index, g.seed): g for g in groups}
    return store_columns([(by_id[gid], runs) for gid, runs, _ in run_groups(groups)])


def run_sweep(spec, store, *, executor="local", workers=1, scheduler=None, batch_runs=None,
              target_seconds=2.0, on_batch=None) -> Progress:
    """Run every run of ``spec`` that ``store`` does not hold yet, and store it.

    Parameters
    ----------
    spec : SweepSpec
        (or any :class:`~spare_core.sim.Study` with ``streams="key"``).
    store : ResultStore, str or os.PathLike
        The result store (a directory; created if missing).
    executor, workers, scheduler, batch_runs, target_seconds
        As :func:`spare_core.sim.execute`.
    on_batch : callable, optional
        Called as ``on_batch(progress)`` after each stored batch, in the driver.

    Returns
    -------
    Progress
        What it did (:class:`spare_core.sim.executor.Progress`).

    Raises
    ------
    TypeError, ValueError
        Bad arguments. :class:`~spare_core.sweeps.store.StoreError`: the store is not
        writable, full or in use (all before any simulation).
    KeyboardInterrupt
        Re-raised after the workers are stopped; every batch finished before it is stored.

    Notes
    -----
    Every run's numbers depend on its group alone (the scenario, the seed, and the spec's
    policies on it), so the store's content does not depend on the executor, ``workers``,
    ``batch_runs``, the order batches finish in, or on interruptions and resumptions.
    """
    if not isinstance(spec, Study):
        raise TypeError(f"spec must be a SweepSpec, got {type(spec).__name__}")
    res = execute(spec, store=store, executor=executor, workers=workers, scheduler=scheduler, batch_runs=batch_runs,
                  target_seconds=target_seconds, on_progress=on_batch, collect=False)
    return res.progress
