"""``spare sweep``: run a sweep specification (TOML) into a durable, resumable result store,
and report what a store holds.

``spare sweep SPEC.toml --store DIR`` runs the spec's runs that DIR does not hold yet
(interrupt it any time; the same command resumes) and prints the best redundancy per
scenario and policy; ``spare sweep --report --store DIR`` prints the report of the store
alone (also while a sweep writes it). Errors in the spec or the store end the command with
one line and exit status 2 before any simulation; Ctrl-C stops it with exit status 130,
every finished batch stored.
"""
from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading

from .budget import check_budget, check_counts
from . import EXIT_INTERRUPTED, UsageError, finite_float, positive_int, process_count
from .outputs import check_output_path, shown_path
from .progress import progress_bar

HELP = "run a sweep spec (TOML) into a resumable Parquet store (--executor local|dask), or --report a store"


def add_arguments(parser) -> None:
    """Options of ``spare sweep``."""
    parser.add_argument("spec", nargs="?", metavar="SPEC.toml", help="the sweep specification (omit with --report)")
    parser.add_argument("--store", required=True, metavar="DIR", help="result store directory (created if missing)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local processes (default) or a Dask cluster")
    parser.add_argument("--scheduler", metavar="ADDR", default=None,
                        help="Dask scheduler address (default: a LocalCluster started for the sweep)")
    parser.add_argument("--workers", type=process_count, default=1,
                        help="worker processes, local or in the LocalCluster (default 1; 0: one per CPU)")
    parser.add_argument("--batch-runs", type=positive_int, default=None, metavar="N",
                        help="runs per task (default: sized from the sweep and the workers)")
    parser.add_argument("--task-seconds", type=finite_float, default=2.0, metavar="S",
                        help="seconds of work per task when --batch-runs is not given (default 2; "
                             "longer on a large cluster, see docs/sweeps.md)")
    parser.add_argument("--force", action="store_true", help="run even when the expected work is beyond the budget (docs/cli.md, Budget)")
    parser.add_argument("--report", action="store_true", help="only report the store; run nothing")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the report (cells and best r) as JSON")


def _num(v, fmt="{:.3f}"):
    return "inf" if v is None or (isinstance(v, float) and math.isinf(v)) else ("nan" if v != v else fmt.format(v))


class _StoreWarnings:
    """Print each :class:`~spare_core.sweeps.StoreWarning` (a part skipped or quarantined)
    as one line on stderr, not as Python's two-line warning."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings(record=True)
        self._seen = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        from ..sweeps import StoreWarning

        self._cm.__exit__(*exc)
        for w in self._seen:
            if issubclass(w.category, StoreWarning):
                print(f"spare sweep: {w.message}", file=sys.stderr)
            else:
                import warnings

                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        return False


class _CtrlC:
    """Ctrl-C latched as well as raised: Python drops a KeyboardInterrupt raised while a
    garbage-collection callback runs (Dask's GC diagnostics install one) and prints
    "Exception ignored in ... KeyboardInterrupt" with a traceback, and the sweep then went
    on to the end. The handler only latches when the signal lands inside such a callback;
    the latch raises at the next batch (:meth:`check`), or when the sweep ends."""

    def __init__(self):
        self.hit = False
        self._old = None

    def _handler(self, signum, frame):
        self.hit = True
        if not _in_gc_callback(frame):
            raise KeyboardInterrupt

    def check(self) -> None:
        if self.hit:
            raise KeyboardInterrupt

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        return False


def _in_gc_callback(frame) -> bool:
    """Whether ``frame`` or a caller of it runs one of :data:`gc.callbacks`."""
    import gc

    codes = {getattr(getattr(cb, "__func__", cb), "__code__", None) for cb in gc.callbacks}
    codes.discard(None)
    while frame is not None and codes:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def _dask_scheduler(args):
    """What ``run_sweep`` gets as ``scheduler``: ``--scheduler`` (the user's cluster, as it is)
    or, for ``--executor dask`` without one, a Client of a LocalCluster started here whose
    worker processes ignore Ctrl-C.

    A terminal's Ctrl-C goes to the whole foreground process group, the workers included;
    each then died printing its own tracebacks (about 80 lines for two workers) while the
    driver, which gets the same signal, already stops the sweep and closes the cluster.
    SIGINT is ignored while the cluster starts, which the spawned worker processes inherit
    for good (Python leaves an ignored SIGINT ignored; a blocked one is not inherited, and
    numpy's threads would let a blocked one be discarded anyway), so a Ctrl-C in those few
    seconds is lost: on a terminal the command says so. The workers log only critical errors
    (a heartbeat cut by the shutdown is not one; a failed task still raises in the driver).
    """
    if args.executor != "dask" or args.scheduler:
        yield args.scheduler
        return
    import logging
    import os

    from distributed import Client, LocalCluster

    n = args.workers or (os.cpu_count() or 1)
    if sys.stderr.isatty():
        print(f"spare sweep: starting {n} local Dask workers (Ctrl-C is ignored until they are up)", file=sys.stderr)
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # as the executor starts its own: one thread per worker, the HTTP server on a free port
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)
    finally:
        signal.signal(signal.SIGINT, handler)
    try:
        with Client(cluster) as client:
            yield client
    finally:
        cluster.close()


#: the longest scenario name shown in a column; longer ones head their own rows
NAME_COLUMN = 48


def _report(store, json_path) -> int:
    from ..sweeps import best_redundancy, summarise_store
    from ..sweeps.aggregate import unfinished_combinations

    try:
        with _StoreWarnings():
            summary = summarise_store(store)
    except (OSError, ValueError, TypeError) as e:  # not a store, an unreadable one: one line, exit 2
        raise UsageError(str(e)) from None
    if summary.num_rows == 0:
        print(f"store {store} holds no runs")
        return 0
    best = best_redundancy(summary)
    unfinished = unfinished_combinations(summary)
    runs = sum(summary.column("runs").to_pylist())
    print(f"store {store}: {runs} runs in {summary.num_rows} cells (TTT/T0: mean [95 % CI] over seeds, the CI cut "
          "at TTT/T0 >= 1; avail: time in kept steps / wall time)")
    rows = [(b, True) for b in best.to_pylist()] + [(u, False) for u in unfinished]
    # scenarios in the summary's order; every name in full (grid names differ only at their end)
    order = {k: i for i, k in enumerate(dict.fromkeys(summary.column("scenario_key").to_pylist()))}
    rows.sort(key=lambda x: (order[x[0]["scenario_key"]], x[0]["policy"], x[0]["interval_setting"]))
    names = {x[0]["scenario_key"]: x[0]["scenario"] for x in rows}
    width = max(len("scenario"), *(len(n) for n in names.values()))
    inline = width <= NAME_COLUMN
    lead = f"{'scenario':<{width}} " if inline else "  "
    header = (f"{lead}{'policy':<12} {'interval':>9} {'best r':>6} {'TTT/T0':>8} {'95 % CI':>17} {'seeds':>5} "
              f"{'avail':>6}  runner-up")
    print(header)
    print("-" * len(header))
    last = None
    for b, done in rows:
        if not inline and b["scenario_key"] != last:
            print(names[b["scenario_key"]])
        last = b["scenario_key"]
        lead = f"{b['scenario']:<{width}} " if inline else "  "
        head = f"{lead}{b['policy'][:12]:<12} {b['interval_setting'] or 'policy':>9}"
        if done:
            ru = "-" if b["runner_up_r"] is None else f"r={b['runner_up_r']} ({_num(b['runner_up_ratio'])})"
            ci = f"[{_num(b['ratio_ci_low'])}, {_num(b['ratio_ci_high'])}]"
            print(f"{head} {b['redundancy']:>6} {_num(b['ratio_mean']):>8} {ci:>17} {b['runs']:>5} "
                  f"{_num(b['availability_mean']):>6}  {ru}")
        else:  # shown, marked: no r finished on every seed
            print(f"{head} {'-':>6} {'unfinished':>8} {'-':>17} {b['runs']:>5} {_num(b['availability_mean']):>6}  "
                  f"no r finished on every seed (furthest: r={b['redundancy']}, {b['finished']}/{b['runs']} seeds "
                  f"finished, {100 * b['progress_mean']:.1f} % of the steps)")
    if json_path:
        from .outputs import write_json  # strict JSON (null with its reason), atomic, through symlinks

        write_json(json_path, {"store": str(store), "cells": summary.to_pylist(), "best": best.to_pylist(),
                               "unfinished": unfinished})
        print(f"wrote {shown_path(json_path)}")
    return 0


def run(args) -> int:
    """Run (or only report) the sweep; return the exit status."""
    try:
        from ..sweeps import ResultStore, StoreError, StoreWriteError, load_spec, run_sweep
    except ImportError as e:
        raise UsageError(str(e)) from None
    try:
        check_output_path(args.json, "--json")  # a regular file or nothing yet, before any work
        if args.report:
            if args.spec:
                raise ValueError("--report takes no SPEC.toml")
    except (OSError, ValueError, TypeError) as e:
        raise UsageError(str(e)) from None
    if args.report:
        return _report(args.store, args.json)
    try:
        if not args.spec:
            raise ValueError("give SPEC.toml (or --report)")
        if not (math.isfinite(args.task_seconds) and args.task_seconds > 0):
            raise ValueError(f"--task-seconds must be a finite number > 0, got {args.task_seconds}")
        if args.scheduler and args.executor != "dask":
            raise ValueError("--scheduler needs --executor dask")
        # refused from the spec's counts before its scenarios are built (a grid of 10**6
        # combinations, 2**24 seeds), then from the built study's work
        spec = load_spec(args.spec, precheck=lambda c: check_counts(c.scenarios, c.pairs, c.runs, args.force,
                                                                     str(args.spec)))
    except (OSError, ValueError, TypeError) as e:
        raise UsageError(str(e)) from None
    check_budget(spec, args.force, str(args.spec))
    store = ResultStore(args.store)
    print(f"spare sweep: {spec!r}", flush=True)
    bar = None
    try:
        with _dask_scheduler(args) as scheduler, _StoreWarnings():
            bar = progress_bar(len(spec), "spare sweep (runs)")
            shown = [0]

            def progress(p):
                latch.check()
                n = p.stored_before + p.computed
                bar.update(n - shown[0])
                shown[0] = n

            with _CtrlC() as latch:
                done = run_sweep(spec, store, executor=args.executor, workers=args.workers, scheduler=scheduler,
                                 batch_runs=args.batch_runs, target_seconds=args.task_seconds, on_batch=progress)
                latch.check()
    except KeyboardInterrupt:
        with _StoreWarnings():
            n_stored = len(store.keys())
        print(f"spare sweep: interrupted; {n_stored} runs are stored in {args.store} "
              "(run the same command to resume)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StoreWriteError as e:  # the disk filled up mid-sweep: an environment fault (docs/cli.md: status 1)
        if bar is not None:
            bar.close()
            bar = None
        with _StoreWarnings():
            n_stored = len(store.keys())
        print(f"spare sweep: error: {e}; {n_stored} runs are stored in {args.store} (free some space and run the "
              "same command to resume)", file=sys.stderr)
        return 1
    except StoreError as e:
        raise UsageError(str(e)) from None
    finally:
        if bar is not None:
            bar.close()
    print(f"{done.computed} runs simulated in {done.seconds:.1f} s ({done.runs_per_second:.0f} runs/s, "
          f"{done.batches} batches); {done.stored_before} were stored already; store {args.store}: "
          f"{store.size_bytes() / 1e6:.2f} MB")
    return _report(args.store, args.json)

