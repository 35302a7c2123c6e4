"""Single-bit flips in a stored part: how many read back changed values with no error.

``python -m bench.store_bitflips [FLIPS] [SEED]``: sweeps a small spec into a temporary
store, then for each of FLIPS (default 300) random bit positions of its one part flips that
bit, reads the store back (``ResultStore.read``, what reports and resumption use) and counts
the outcomes: an error or the part skipped (detected), the same table (harmless: the bit was
in padding or unused metadata), or a table with changed values and no error (silent).
"""
from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path


def main(flips: int = 300, seed: int = 0) -> dict:
    import numpy as np

    from spare_core.sim import Scenario
    from spare_core.sweeps import ResultStore, SweepSpec, run_sweep

    d = Path(tempfile.mkdtemp())
    spec = SweepSpec([Scenario.paper_600k(32, n_steps=40)], ("ckpt", "spare"), [2, 3], seeds=4)
    run_sweep(spec, d / "s", batch_runs=10_000)
    store = ResultStore(d / "s")
    (part,) = store.parts()
    good = part.read_bytes()
    ref = store.read()
    rng = np.random.default_rng(seed)
    counts = {"detected": 0, "same": 0, "silent": 0}
    for bit in rng.integers(0, 8 * len(good), flips):
        b = bytearray(good)
        b[bit // 8] ^= 1 << (bit % 8)
        part.write_bytes(bytes(b))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = ResultStore(d / "s").read()
        except Exception:
            counts["detected"] += 1
            continue
        if t.num_rows < ref.num_rows:
            counts["detected"] += 1  # the part was skipped
        else:
            try:
                same = t.equals(ref)
            except Exception:  # e.g. a column name no longer UTF-8: read "fine", yet broken
                same = False
            counts["same" if same else "silent"] += 1
    part.write_bytes(good)
    counts["part_bytes"] = len(good)
    return counts


if __name__ == "__main__":
    a = [int(x) for x in sys.argv[1:3]]
    print(main(*a))
