"""sweep: the sweep machinery (spare_core.sweeps) against its own baselines, in one run.

``python -m bench.ratios sweep [--quick] [--repeats 3]``, every figure a median over
alternating repeats in this one process (specs: ``bench/workloads.py``):

1. *Scaling*: wall time of :func:`~spare_core.sweeps.run_sweep` on CPU-bound runs (paper
   preset, 2,000 steps, ~20 ms a run) with 1 and 2 local worker processes; the speed-up.
2. *Dask*: the same sweep on a 2-worker ``LocalCluster`` (started once, outside the timing)
   against 2 local processes: the extra wall time per run, and the cluster's start-up.
3. *Per-task overhead* at the default batch size on 10^4 cheap runs (50 steps, ~1-2 ms a run),
   in-process: the sweep's wall time against the seconds its tasks spent simulating
   (:attr:`Progress.compute_seconds`), in the same run; the difference is the
   batching, the Parquet parts with their fsyncs, the store's open and key scan.

Wall time is what a sweep's user waits for, so it is what is timed; the machine is shared,
so read the ratios, and run it when the machine is otherwise idle.
"""
from __future__ import annotations

import logging
import shutil
import statistics
import tempfile
import time

from spare_core.sweeps import ResultStore, run_sweep

from bench.workloads import cheap_spec, cpu_spec


def _burn(_=None) -> float:
    t = time.perf_counter()
    x = 0
    for i in range(3_000_000):
        x += i
    return time.perf_counter() - t


def machine_parallelism() -> float:
    """Control: a pure-Python loop twice in a row vs in 2 processes at once. Near 2 on an
    idle 2-core machine; what the sweep's 1 -> 2 worker speed-up can be read against."""
    import multiprocessing

    t = time.perf_counter()
    _burn()
    _burn()
    seq = time.perf_counter() - t
    with multiprocessing.get_context("fork").Pool(2) as pool:
        t = time.perf_counter()
        pool.map(_burn, [0, 1])
        par = time.perf_counter() - t
    return seq / par


def _timed_sweep(spec, **kw):
    d = tempfile.mkdtemp(prefix="bench_sweep_")
    try:
        t = time.perf_counter()
        done = run_sweep(spec, d, **kw)
        wall = time.perf_counter() - t
        assert done.computed == len(spec)
        return wall
    finally:
        shutil.rmtree(d)


def add_arguments(p):
    p.add_argument("--repeats", type=int, default=3)


def run(args) -> int:
    reps = 1 if args.quick else args.repeats
    spec = cpu_spec(2 if args.quick else 8)
    n = len(spec)
    batch = max(1, n // 16)  # 16 tasks: both workers stay busy to the end

    print(f"1. scaling: {n} CPU-bound runs ({spec.scenarios[0].n_steps} steps), {batch} runs per task")
    t1, t2 = [], []
    for _ in range(reps):
        t1.append(_timed_sweep(spec, workers=1, batch_runs=batch))
        t2.append(_timed_sweep(spec, workers=2, batch_runs=batch))
    m1, m2 = statistics.median(t1), statistics.median(t2)
    print(f"   1 local worker : {m1:7.2f} s  {n / m1:7.1f} runs/s")
    print(f"   2 local workers: {m2:7.2f} s  {n / m2:7.1f} runs/s   speed-up {m1 / m2:.2f}x")
    print(f"   control: the machine gives 2 busy processes {machine_parallelism():.2f}x one (2.0 when idle)")

    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("2. dask: not installed (pip install 'spare_core[sweep]')")
    else:
        t = time.perf_counter()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        client = Client(cluster)
        start = time.perf_counter() - t
        try:
            td, tl = [], []
            for _ in range(reps):
                td.append(_timed_sweep(spec, executor="dask", scheduler=client, batch_runs=batch))
                tl.append(_timed_sweep(spec, workers=2, batch_runs=batch))
            md, ml = statistics.median(td), statistics.median(tl)
            print(f"2. dask LocalCluster, 2 workers: {md:7.2f} s vs local 2 workers {ml:7.2f} s: "
                  f"{1e3 * (md - ml) / n:+.2f} ms per run ({100 * (md / ml - 1):+.1f} %); cluster start {start:.1f} s")
        finally:
            client.close()
            cluster.close()

    cheap = cheap_spec(8 if args.quick else 200)
    cheap.groups()
    ResultStore.warm_up()  # pyarrow's one-off import (it pulls pandas in: ~0.3-1 s), not a per-task cost
    over, walls = [], []
    for _ in range(reps):
        d = tempfile.mkdtemp(prefix="bench_sweep_")
        try:
            done = run_sweep(cheap, d, workers=1)
        finally:
            shutil.rmtree(d)
        over.append(done.seconds / done.compute_seconds - 1)
        walls.append((done.seconds, done.batches))
    wall, batches = walls[over.index(statistics.median(over))]
    print(f"3. per-task overhead, {len(cheap)} cheap runs, default batches ({batches} tasks), 1 worker: "
          f"{wall:.2f} s wall, overhead (wall - simulation) / simulation = {100 * statistics.median(over):.1f} %")
    return 0
