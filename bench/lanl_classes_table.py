"""A public failure log with root causes replayed, its causes mapped to failure classes.

The log: Los Alamos National Laboratory's failure data of 22 HPC systems, 1996-2005 (B.
Schroeder and G. Gibson, "A large-scale study of failures in high-performance computing
systems", DSN 2006; release LA-UR-05-7318, a copy in
https://github.com/Derek-Jones/ESEUR-code-data as ``reliability/LA-UR-05-7318-failure-data-1996-2005.csv.xz``;
not stored in this repository). One row per failure: the system, the node (``nodenumz``), the
time the problem started (``Prob Started``, ``%m/%d/%Y %H:%M``) and its root cause as the one of
the columns ``Facilities``, ``Hardware``, ``Human Error``, ``Network``, ``Undetermined``,
``Software`` that holds text. This script writes one system's rows as a log with a cause column
(time, node, cause), and replays it on a job of every node of the system (``--group`` nodes per
data-parallel group, ``--days`` failure-free; a failed node swapped in 10 min, ``[repair]``), the
log looped past its end and ``--seeds`` windows of it:

- without classes: every failure a node's, replaced, which redundancy may mask;
- with classes by cause (``[[failures.classes]]`` with ``values`` on the log's cause column):
  ``Hardware`` a swap (detected in 30 s), ``Software``, ``Facilities``, ``Human Error`` and
  ``Undetermined`` a job-wide restart (no redundancy masks it; detected in 30 s, 2 min for
  undetermined), ``Network`` a domain of ``--switch`` nodes (masked when the stacks cover it).

For each policy the TTT/T0 mean and 95 % t-interval over the windows, with and without classes,
and the class restarts. The class mapping is this script's assumption, not the paper's.

Usage::

    python -m bench.lanl_classes_table --log LA-UR-05-7318-failure-data-1996-2005.csv[.xz] --system 20
"""
from __future__ import annotations

import argparse
import collections
import csv
import lzma
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

from spare_core.scenario_file import parse_scenario
from spare_core.sim import make_policy, simulate

CAUSES = ("Facilities", "Hardware", "Human Error", "Network", "Undetermined", "Software")


def write_log(src: Path, dst: Path, system: str) -> tuple[int, int, collections.Counter]:
    """System ``system``'s rows as ``time,node,cause``: its nodes and the causes' counts."""
    opener = lzma.open if src.suffix == ".xz" else open
    with opener(src, "rt", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["System"].strip() == system]
    if not rows:
        raise SystemExit(f"no row of system {system} in {src}")
    out, count = [], collections.Counter()
    for r in rows:
        cause = [c for c in CAUSES if r[c].strip()]
        cause = cause[0] if len(cause) == 1 else "Undetermined"  # none or several: not one cause
        count[cause] += 1
        out.append((r["Prob Started"].strip(), int(r["nodenumz"]), cause))
    with open(dst, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("time", "node", "cause"))
        w.writerows(out)
    return len(rows), int(rows[0]["nodes"]), count


def scenario(log: Path, nodes: int, args, classes: bool):
    g = args.group
    d = {"name": f"lanl-{args.system}",
         "cluster": {"nodes": nodes - nodes % g, "gpus_per_node": 4, "gpus_per_group": 4 * g},
         "job": {"step_time": "10 s", "steps": int(args.days * 8640)},
         "costs": {"restart": "20 min", "checkpoint_save": "60 s"},
         "compare": {"horizon": 50},
         # a failed node is swapped for a spare in 10 min and back once repaired (a day)
         "repair": {"swap": "10 min", "time": "1 d", "rejoin": "2 min"},
         "failures": {"model": "trace", "after": "loop", "windows": args.seeds,
                      "trace": {"path": str(log), "time_column": "time", "unit_column": "node",
                                "reason_column": "cause", "time_format": "%m/%d/%Y %H:%M", "sort": True,
                                "n_units": nodes}}}
    if classes:
        d["failures"]["classes"] = [
            {"name": "hardware", "recovery": "swap", "values": ["Hardware"], "detect": "30 s"},
            {"name": "software", "recovery": "restart", "values": ["Software", "Facilities", "Human Error"],
             "detect": "30 s"},
            {"name": "undetermined", "recovery": "restart", "values": ["Undetermined"], "detect": "2 min"},
            {"name": "network", "recovery": "domain", "nodes": args.switch, "values": ["Network"], "detect": "2 min"},
        ]
    return parse_scenario(d).scenario


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--system", default="20")
    ap.add_argument("--group", type=int, default=8, help="nodes per data-parallel group")
    ap.add_argument("--switch", type=int, default=16, help="nodes behind a network domain")
    ap.add_argument("--days", type=float, default=14.0)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--r", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.csv"
        n, nodes, count = write_log(args.log, log, args.system)
        print(f"LANL system {args.system}: {n} failures on {nodes} nodes; causes "
              + ", ".join(f"{c} {k}" for c, k in count.most_common()))
        plain, split = scenario(log, nodes, args, False), scenario(log, nodes, args, True)
        print(f"job: {split.n_groups} groups of {args.group} nodes, {args.days:g} d failure-free; "
              f"classes: {split.failure_classes.describe()}")
        print(f"{'policy':<12} {'TTT/T0 no classes':>26} {'TTT/T0 classes':>26} {'class restarts':>15}")
        for name in ("ckpt", "spare", "elastic"):
            pol = make_policy(name, args.r) if name == "spare" else make_policy(name)
            cells = []
            forced = []
            for sc in (plain, split):
                runs = [simulate(sc, pol, seed=s) for s in range(args.seeds)]
                x = np.array([r.time_to_train / sc.t0 if r.finished else math.nan for r in runs])
                h = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
                cells.append(f"{x.mean():.3f} [{x.mean() - h:.3f}, {x.mean() + h:.3f}]")
                forced.append(np.mean([r.class_restarts for r in runs]))
            print(f"{name:<12} {cells[0]:>26} {cells[1]:>26} {forced[1]:>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
