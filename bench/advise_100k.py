"""``spare advise`` on a 100k-GPU file comparing checkpoint-only with and without an in-memory
tier, Rep, SPARe and elastic DP, with hot spares: the issue's target is <= 60 s on 2 cores.

Usage::

    python -m bench.advise_100k [--repeats 3]

Runs ``spare advise examples/cluster_100k_strategies.toml`` (two processes) ``repeats`` times in
fresh interpreters and prints each wall time, the median and the runs it made.
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "examples" / "cluster_100k_strategies.toml"
TARGET = 60.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ns = ap.parse_args(argv)
    times = []
    runs = ""
    for _ in range(ns.repeats):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "spare_core", "advise", str(FILE), "--processes", "2"],
                             capture_output=True, text=True, check=True).stdout
        times.append(time.perf_counter() - t)
        m = re.search(r"^(\d+ runs .*)$", out, re.M)
        runs = m.group(1) if m else "?"
    med = statistics.median(times)
    print(f"spare advise {FILE.name}: " + ", ".join(f"{x:.1f} s" for x in times) + f"; median {med:.1f} s "
          f"(target <= {TARGET:g} s: {'met' if med <= TARGET else 'NOT met'})")
    print(f"  {runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
