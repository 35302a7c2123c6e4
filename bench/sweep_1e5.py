"""A 10^5-run sweep on this machine: wall time, runs per second, store size.

Cheap runs on purpose (so the figure is about the sweep machinery at scale, not the
simulator): the paper preset's costs on small clusters (N = 16..64 groups) with 50 training
steps, at four system MTBFs, CKPT-only / Rep+CKPT / SPARe+CKPT at r = 2..5: 24 scenarios x
9 runs x 463 seeds = 100,008 runs. Usage::

    python -m bench.sweep_1e5 [--workers 2] [--store DIR] [--seeds 463]

Without --store it uses a temporary directory and removes it afterwards.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import time

from spare_core.sweeps import ResultStore, best_redundancy, run_sweep, summarise_store

from bench.workloads import sweep_1e5_spec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=463)
    ap.add_argument("--store", default=None)
    args = ap.parse_args(argv)
    s = sweep_1e5_spec(args.seeds)
    d = args.store or tempfile.mkdtemp(prefix="sweep_1e5_")
    try:
        t = time.perf_counter()
        last = [t]

        def progress(p):
            if time.perf_counter() - last[0] > 10:
                last[0] = time.perf_counter()
                print(f"  {p.stored_before + p.computed}/{p.total} runs, {p.runs_per_second:.0f} runs/s", flush=True)

        done = run_sweep(s, d, workers=args.workers, on_batch=progress)
        wall = time.perf_counter() - t
        store = ResultStore(d)
        size = store.size_bytes()
        t = time.perf_counter()
        summ = summarise_store(store)
        best = best_redundancy(summ)
        t_sum = time.perf_counter() - t
        print(f"{s!r}")
        print(f"{done.computed} runs in {wall:.1f} s wall with {args.workers} local workers: "
              f"{done.computed / wall:.0f} runs/s; {done.batches} batches")
        print(f"store: {len(store.parts())} parts, {size / 1e6:.2f} MB ({size / max(1, done.computed + done.stored_before):.0f} B a run)")
        print(f"summarise_store + best r over the store: {t_sum:.1f} s ({summ.num_rows} cells, {best.num_rows} best rows)")
    finally:
        if args.store is None:
            shutil.rmtree(d)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
