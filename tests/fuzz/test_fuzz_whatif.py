"""Fuzz: a job's operation trace for ``spare whatif`` (the straggler what-if and its compiled
replay kernel, ``_whatif_replay``).

A valid synthetic trace (a 2 x 2 job, 2 micro-batches, 2 steps) is disguised column by column —
NaN, inf, negative or huge values, ranks and stages out of range, op types unknown or blank,
rows dropped, duplicated or shuffled, a column's type changed — and as bytes (the CSV mutated:
random bytes, cuts, NUL, quotes), then read and analysed. Each case runs in a forked child with
a memory cap and the suite's time limit; the outcome must be one clean error (ValueError or
TypeError) on one line, or an analysis whose numbers hold: a finite slowdown S > 0, finite
per-step times, and attribution shares in [0, 1].
"""
from __future__ import annotations

import math
import os
import resource

import numpy as np
from hypothesis import given, strategies as st

from fuzz_isolate import run_isolated
from fuzz_profile import fuzz

COLUMNS = ("dp_rank", "stage", "rank", "step", "optype", "start_ts", "duration", "seq_id", "mc", "gmc", "mb_id")


def _base_columns():
    from spare_core.stragglers import synthetic_trace
    from spare_core.stragglers.synth import trace_columns

    return trace_columns(synthetic_trace(dp=2, pp=2, microbatches=2, steps=2, slow={1: 1.5}, seed=0))


def _analyse(path):
    def go():
        with open("/proc/self/status") as fh:
            vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + 3 * 2**29, vm + 3 * 2**29))
        from spare_core.stragglers import analyse

        r = analyse(str(path))
        slow = list(r.per_step.values()) + list(r.by_worker.values())
        times = [float(v) for k, v in r.step_time.items() if k != "replay_error"]  # a signed error
        return float(r.slowdown), times, [float(x) for x in slow]
    return go


def _check(out, case):
    out.check_clean(case)
    if not out.ok:
        assert "\n" not in out.message.strip(), f"{case}: a message of several lines: {out.message!r}"
        return
    s, times, slowdowns = out.value
    assert math.isfinite(s) and s > 0, (case, s)
    assert all(math.isfinite(t) and t >= 0 for t in times), (case, times)
    assert all(math.isfinite(x) and x > 0 for x in slowdowns), (case, slowdowns)


DISGUISES = ["nan", "inf", "negative", "huge", "zero", "out_of_range", "blank", "unknown_optype", "drop_rows",
             "duplicate_rows", "shuffle", "float_for_int", "text_for_number"]


@fuzz(0.5)
@given(st.lists(st.tuples(st.sampled_from(COLUMNS), st.sampled_from(DISGUISES), st.integers(0, 119)),
                min_size=1, max_size=3), st.sampled_from(["csv", "parquet"]))
def test_traces_in_any_disguise(tmp_path_factory, changes, fmt):
    from spare_core.stragglers import write_trace

    cols = {k: np.array(v, dtype=object) for k, v in _base_columns().items()}
    n = len(cols["step"])
    for col, how, at in changes:
        at %= n
        c = cols[col]
        if how == "nan":
            c[at] = float("nan")
        elif how == "inf":
            c[at] = float("inf")
        elif how == "negative":
            c[at] = -abs(c[at] if isinstance(c[at], (int, float, np.number)) else 1) - 1
        elif how == "huge":
            c[at] = 2**62
        elif how == "zero":
            c[at] = 0
        elif how == "out_of_range":
            c[at] = 10**6
        elif how == "blank":
            c[at] = ""
        elif how == "unknown_optype":
            cols["optype"][at] = "warp-drive"
        elif how == "drop_rows":
            keep = np.ones(n, dtype=bool)
            keep[at: at + 7] = False
            cols = {k: v[keep] for k, v in cols.items()}
            n = int(keep.sum())
        elif how == "duplicate_rows":
            cols = {k: np.concatenate([v, v[at: at + 5]]) for k, v in cols.items()}
            n = len(cols["step"])
        elif how == "shuffle":
            order = np.random.default_rng(at).permutation(n)
            cols = {k: v[order] for k, v in cols.items()}
        elif how == "float_for_int":
            c[at] = 1.5
        elif how == "text_for_number":
            c[at] = "x1"
    d = tmp_path_factory.mktemp("whatif")
    path = d / f"trace.{fmt}"
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = {}
        for k, v in cols.items():
            try:
                table[k] = pa.array(list(v))
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                table[k] = pa.array([str(x) for x in v])
        pq.write_table(pa.table(table), path)
    else:
        write_trace(path, {k: list(v) for k, v in cols.items()})
    out = run_isolated(_analyse(path), case=f"whatif {fmt} {changes}")
    _check(out, f"whatif {fmt} {changes}")


@fuzz(0.5)
@given(st.lists(st.tuples(st.sampled_from(["insert", "replace", "delete", "cut", "nul", "quote"]),
                          st.integers(0, 10**6), st.binary(min_size=1, max_size=6)), min_size=1, max_size=5))
def test_trace_bytes_mutated(tmp_path_factory, edits):
    from spare_core.stragglers import write_trace

    d = tmp_path_factory.mktemp("whatif_bytes")
    good = d / "good.csv"
    write_trace(good, _base_columns())
    data = bytearray(good.read_bytes())
    for kind, at, blob in edits:
        at %= max(1, len(data))
        if kind == "insert":
            data[at:at] = blob
        elif kind == "replace" and data:
            data[at] = blob[0]
        elif kind == "delete":
            del data[at: at + len(blob)]
        elif kind == "cut":
            data = data[:at]
        elif kind == "nul":
            data[at:at] = b"\x00"
        elif kind == "quote":
            data[at:at] = b'"'
    path = d / "trace.csv"
    path.write_bytes(bytes(data))
    out = run_isolated(_analyse(path), case=f"whatif bytes {edits}")
    _check(out, f"whatif bytes {edits}")
