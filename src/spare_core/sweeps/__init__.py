"""Durable, resumable, distributed sweeps.

A :class:`SweepSpec` (Python, or a TOML file read by :func:`load_spec`) lists scenarios x
policies x redundancies x intervals x seeds; every run has a stable key and random streams
derived from it. :func:`run_sweep` runs what a :class:`ResultStore` (a Parquet dataset)
does not hold yet, in this process, local processes or on Dask, and stores each batch as it
finishes; :func:`summarise_store` and :func:`best_redundancy` read the store, during or after a
sweep. ``spare sweep FILE.toml --store DIR`` is the command line. Needs the ``sweep``
extra (pyarrow; dask[distributed] for the Dask executor).

See docs/sweeps.md for the design, the measured speed and how a spec runs on a cluster.
"""
from __future__ import annotations

from .aggregate import best_redundancy, summarise_store
from .runner import EXECUTORS, execute, run_batch, run_sweep
from .spec import Group, Run, SweepSpec, load_spec
from .store import ResultStore, StoreError, StoreWarning, StoreWriteError

__all__ = ["SweepSpec", "load_spec", "Run", "Group", "execute", "run_sweep", "run_batch", "EXECUTORS",
           "ResultStore", "StoreError", "StoreWriteError", "StoreWarning", "summarise_store", "best_redundancy"]
