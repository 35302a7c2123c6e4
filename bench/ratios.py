"""The ratio tables: our median time next to the peer's, measured in the same run.

Each suite (``bench/tables/<suite>.py``) times spare_core and its peer (scipy, OR-Tools,
networkx, SimPy, a numpy loop, a rebuild-per-failure controller, the step-by-step reference)
on the same workload (``bench/workloads.py``) in the same run and prints medians and ratios;
the machine is shared and noisy, so read ratios, not absolute times.

Usage (from the repository root)::

    python -m bench.ratios                       # every suite, full sizes (tens of minutes)
    python -m bench.ratios --quick               # every suite, small sizes: a smoke run
    python -m bench.ratios matching flow         # some suites
    python -m bench.ratios --quick flow --family generic --sizes 1000,10000
    python -m bench.ratios matching b d --catalogue all --methods auto
    python -m bench.ratios SUITE --help          # a suite's own options
    python -m bench.ratios --list                # the suites

Options after a suite's name belong to that suite (up to the next suite's name); ``--quick``
before the first suite applies to all. One suite runs in this process; several run one after
the other, each in a fresh process (as separate scripts did), so no table inherits another's
heap, imports or threads.
"""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

SUITES = ("matching", "flow", "events", "rectlr", "pacing", "sim", "sweep", "traces", "map", "whatif")


def _module(name):
    return importlib.import_module(f"bench.tables.{name}")


def suite_parser(name) -> argparse.ArgumentParser:
    """The options of one suite: ``--quick`` and the suite's own (``add_arguments``)."""
    mod = _module(name)
    p = argparse.ArgumentParser(prog=f"python -m bench.ratios {name}", description=mod.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes (seconds), a smoke run")
    mod.add_arguments(p)
    return p


def split(argv):
    """(options before the first suite, [(suite, its arguments), ...])."""
    head, segments = [], []
    for a in argv:
        if a in SUITES:
            segments.append((a, []))
        elif segments:
            segments[-1][1].append(a)
        else:
            head.append(a)
    return head, segments


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    head, segments = split(argv)
    ap = argparse.ArgumentParser(prog="python -m bench.ratios", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes for every suite named (or all)")
    ap.add_argument("--list", action="store_true", help="list the suites and exit")
    args = ap.parse_args(head)
    if args.list:
        for name in SUITES:
            print(f"{name:<9} {_module(name).__doc__.splitlines()[0].removeprefix(name + ': ')}")
        return 0
    segments = segments or [(name, []) for name in SUITES]
    quick = ["--quick"] if args.quick else []
    # parse every suite's arguments before running anything: a typo fails at once
    parsed = [(name, rest, suite_parser(name).parse_args(quick + rest)) for name, rest in segments]
    if len(parsed) == 1:
        name, _, ns = parsed[0]
        return _module(name).run(ns)
    status = 0
    for name, rest, _ in parsed:
        print(f"\n=== {name} ===", flush=True)
        status |= subprocess.call([sys.executable, "-m", "bench.ratios", name, *quick, *rest])
    return status


if __name__ == "__main__":
    raise SystemExit(main())
