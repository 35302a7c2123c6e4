"""One harness for the writer-thread races of the matching tests: a subprocess solves a
20k x 20k graph 40 times while a thread rewrites its indices with out-of-range values; every
solve must refuse the graph or return the reference size, and the process must not crash
(an out-of-bounds read kills it, not the test session)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from spare_core.graph import matching

SRC = str(Path(matching.__file__).resolve().parents[2])

SCRIPT = textwrap.dedent("""
    import threading
    import numpy as np, scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching
    from spare_core.graph.matching import hopcroft_karp, _tkern, _T_ONE_CALL, _SIDE_PROBE
    rng = np.random.default_rng(16)
    n, nnz = 20_000, 80_000
    g = sp.csr_array((np.ones(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
    g.indices = g.indices.astype(np.{idx})
    cap = rng.integers(0, 3, n)
    ref = {ref}
    good = g.indices.copy()
    bad = np.full_like(good, np.iinfo(good.dtype).max)     # every value out of range
    bad[::2] = -(2**31)
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            g.indices[:] = bad          # numpy releases the GIL for this copy
            g.indices[:] = good

    t = threading.Thread(target=writer)
    t.start()
    refused = solved = 0
    try:
        for k in range(40):
            try:
                m = {call}
            except ValueError as err:
                assert "graph" in str(err), err
                refused += 1
                continue
            # validation saw no out-of-range value, so it copied the intact graph
            assert m.size == ref, (m.size, ref)
            solved += 1
    finally:
        stop.set()
        t.join()
    print(refused, solved)
""")

#: the reference size of an ordinary matching (scipy)
UNIT_REF = 'int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))'
#: the reference size of the b-matching with capacities ``cap`` (Hopcroft-Karp, before the writer starts)
CAP_REF = 'hopcroft_karp(g, capacity=cap, method="hopcroft_karp").size'


def race(call: str, *, ref: str = UNIT_REF, prelude: str = "", idx: str = "int32") -> None:
    """Run the race with ``call`` (an expression with ``g``, ``cap``, ``n``) as the solve."""
    out = subprocess.run([sys.executable, "-c", prelude + SCRIPT.format(idx=idx, call=call, ref=ref)],
                         capture_output=True, text=True, timeout=300, env={"PYTHONPATH": SRC, "PATH": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    refused, solved = map(int, out.stdout.split())
    assert refused + solved == 40
