"""pytest-benchmark suite of the sweep machinery (spare_core.sweeps).

``python -m pytest bench/bench_sweep.py``: one group of runs (:func:`~spare_core.sweeps.run_batch`),
writing one Parquet part, listing the stored keys (specs: ``bench/workloads.py``).
``python -m bench.ratios sweep`` times the scaling, Dask and per-task overhead.
"""
from __future__ import annotations

from spare_core.sweeps import ResultStore, run_batch, run_sweep

from bench.workloads import cheap_spec


def test_run_batch_one_group(benchmark):
    g = cheap_spec(1).groups()[0]
    benchmark(run_batch, [g])


def test_write_one_part(benchmark, tmp_path):
    cols = run_batch(cheap_spec(2).groups())
    store = ResultStore(tmp_path)
    store.open_for_writing()
    try:
        benchmark(store.write, cols)
    finally:
        store.close()


def test_stored_keys_100_parts(benchmark, tmp_path):
    run_sweep(cheap_spec(20), tmp_path, batch_runs=10)
    benchmark(ResultStore(tmp_path).keys)
