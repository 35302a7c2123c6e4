"""A public failure log replayed: where its hosts sit, windows of it, its racks.

The log: the Titan supercomputer's GPU history (G. Ostrouchov et al., "GPU Lifetimes on Titan
Supercomputer: Survival Analysis and Reliability", SC20; data and code at
https://github.com/olcf/TitanGPULife, file ``data/gc_full.csv``; not stored in this
repository). One row per GPU installed in a node slot; a row whose ``event`` is ``DBE``
(double-bit error) or ``OTB`` (off the bus) ended with a failure at ``remove``, in the slot
named by ``location`` (Cray names ``c{column}-{row}c{cage}s{slot}n{node}``: 200 cabinets of
3 cages x 8 slots x 4 nodes, 19,200 positions, one GPU per node). This script writes those rows
as a failure log (time, host, event) and replays a year of it (``--year``) on a job of every
position: 19,200 GPUs, one per node, groups of ``--group`` GPUs (600 groups of 32 by default),
``--days`` of failure-free training in 10-s steps, a 20-min restart and 60-s saves, the log
looped past the year (``after = "loop"``).

Rows printed (CKPT-only and SPARe+CKPT at r = ``--r``, availability-optimal intervals, seeds
0..``--seeds``-1, the same seeds for every row):

- the hosts numbered by first appearance (what the reader did before ``host_pattern``): the
  failures crowd into the first groups (the concentration warning's numbers are printed);
- ``placement = "spread"``: the hosts placed on the job's nodes at random;
- ``host_pattern``: the hosts at their physical positions (cabinet, cage, slot, node);
- the same with ``windows`` = the seeds: every seed replays the year from its own offset;
- the same with rack-aware SPARe stacks (across cabinets, cages).

For each: TTT/T0 mean and 95 % t-interval over the seeds, SPARe's failures seen and wipe-outs
(means over the seeds), and the distinct failure histories the seeds replayed.

Not a ``spare`` command: every row is a scenario file's keys (``failures.placement``,
``failures.trace.host_pattern``, ``failures.windows``, ``policy.spare.layout``) on ``spare run``,
for any log (docs/cli.md, end of "spare fit"; tests/test_fit_command.py runs the five rows so on
a file of this format). What the script adds is Titan's alone: the release's rows turned into a
log and the Cray name pattern.

Usage::

    python -m bench.trace_log_table --log gc_full.csv             # a few seconds
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

from spare_core.events.trace import read_trace
from spare_core.events.trace_model import TraceReplay, TraceWarning
from spare_core.sim import Scenario, make_policy, simulate

CRAY = r"c(?P<cabinet>\d+-\d+)c(?P<cage>\d+)s(?P<slot>\d+)n(?P<node>\d+)"


def write_log(src: Path, dst: Path) -> int:
    """The failure rows of gc_full.csv as ``time,host,event`` (sorted by time)."""
    with open(src, newline="") as f:
        rows = [(r["remove"], r["location"], r["event"]) for r in csv.DictReader(f) if r["event"] in ("DBE", "OTB")]
    rows.sort()
    with open(dst, "w") as f:
        f.write("time,host,event\n")
        f.writelines(f"{t},{h},{e}\n" for t, h, e in rows)
    return len(rows)


def summary(values):
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return f"{v.mean():.3f}"
    half = stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return f"{v.mean():.3f} [{v.mean() - half:.3f}, {v.mean() + half:.3f}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", required=True, type=Path, help="data/gc_full.csv of github.com/olcf/TitanGPULife")
    ap.add_argument("--year", type=int, default=2016)
    ap.add_argument("--group", type=int, default=32, help="GPUs (= nodes) per data-parallel group")
    ap.add_argument("--days", type=float, default=30.0, help="failure-free training time T0, days")
    ap.add_argument("--seeds", type=int, default=24)
    ap.add_argument("--r", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "titan_failures.csv"
        rows = write_log(args.log, log)
        window = {"start": f"{args.year}-01-01T00:00:00Z", "end": f"{args.year + 1}-01-01T00:00:00Z"}
        named = read_trace(log, unit_column="host", reason_column="event", **window)
        racks = read_trace(log, unit_column="host", reason_column="event", host_pattern=CRAY, **window)
    n_groups = racks.n_units // args.group
    print(f"log: {rows:,} failure rows; {args.year}: {named.n_events:,} failures of "
          f"{np.unique(named.units).size:,} hosts ({named.dropped_before:,} rows before, {named.dropped_after:,} after "
          f"dropped); job: {racks.n_units:,} GPUs, {n_groups} groups of {args.group}, T0 = {args.days:g} d")
    print(f"by cabinet: {racks.domain_summary('cabinet')}")
    steps = int(args.days * 86400 / 10)
    variants = [
        ("hosts by first appearance", TraceReplay(named, after="loop", nodes_per_group=args.group), {}),
        ('placement = "spread"', TraceReplay(named, after="loop", nodes_per_group=args.group, placement="spread"), {}),
        ("host_pattern", TraceReplay(racks, after="loop", nodes_per_group=args.group), {}),
        (f"host_pattern, windows = {args.seeds}",
         TraceReplay(racks, after="loop", nodes_per_group=args.group, windows=args.seeds), {}),
        (f"host_pattern, windows = {args.seeds}, rack-aware",
         TraceReplay(racks, after="loop", nodes_per_group=args.group, windows=args.seeds), {"layout": "rack-aware"}),
    ]
    crowded = variants[0][1].concentration(n_groups)
    print(f"warning for the first row: {crowded}")
    print()
    print(f"| replay | groups failing | histories | CKPT TTT/T0 (95 % CI) | SPARe r={args.r} TTT/T0 (95 % CI) "
          "| SPARe failures seen | SPARe wipe-outs | s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, model, opts in variants:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            sc = Scenario(n_groups, n_steps=steps, t_compute=9.0, t_allreduce=1.0, restart_time=1200.0,
                          checkpoint_time=60.0, failure_model=model, name=name)
        touched = np.unique(model.groups(n_groups)).size
        out = {}
        for pol in ("ckpt", "spare"):
            policy = make_policy(pol) if pol == "ckpt" else make_policy("spare", args.r, **opts)
            runs = [simulate(sc, policy, seed=s).to_dict() for s in range(args.seeds)]
            out[pol] = runs
        print(f"| {name} | {touched} | {model.histories(range(args.seeds))} | "
              f"{summary([r['ratio'] for r in out['ckpt']])} | {summary([r['ratio'] for r in out['spare']])} | "
              f"{np.mean([r['failures_seen'] for r in out['spare']]):.0f} | "
              f"{np.mean([r['wipeouts'] for r in out['spare']]):.2f} | {time.perf_counter() - t0:.0f} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
