"""Run every peer-comparison script in bench/ (``ratios_*.py``) and print their tables.

Each script times spare_core and its peer (scipy, OR-Tools, networkx, SimPy, a numpy loop,
a rebuild-per-failure controller) on the same workload in the same run and prints medians
and ratios; the machine is shared and noisy, so read ratios, not absolute times.

Usage::

    python bench/ratios.py            # full sizes (minutes)
    python bench/ratios.py --quick    # small sizes (seconds), a smoke run
    python bench/ratios.py matching   # only bench/ratios_matching.py
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("-")]
    names = [a for a in argv if not a.startswith("-")]
    scripts = sorted(HERE.glob("ratios_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("ratios_") in names]
    status = 0
    for script in scripts:
        print(f"\n=== {script.stem.removeprefix('ratios_')} ===", flush=True)
        status |= subprocess.call([sys.executable, str(script), *flags])
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
