"""The matching kernels never read the caller's graph arrays (issue 16, item c): another
thread writing into them during a solve (the GIL is released) can make the validation refuse
the graph, but never send a kernel out of bounds or change the answer it computes."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spare_core.graph import matching
from spare_core.graph.matching import METHODS, hopcroft_karp

from tests.matching_race import race


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("idx", [np.int32, np.int64])
def test_kernels_get_private_copies_even_single_threaded(method, idx, monkeypatch):
    rng = np.random.default_rng(7)
    g = sp.csr_array((np.ones(400), (rng.integers(0, 60, 400), rng.integers(0, 50, 400))), shape=(60, 50))
    g.indices = g.indices.astype(idx)
    g.indptr = g.indptr.astype(idx)
    seen = []

    def spy(real):
        def call(indptr, indices, *args, **kw):
            seen.append((real.__name__, np.shares_memory(indptr, g.indptr) or np.shares_memory(indices, g.indices)))
            return real(indptr, indices, *args, **kw)
        return call

    for name in ("solve", "solve_csr"):
        monkeypatch.setattr(matching._tkern, name, spy(getattr(matching._tkern, name)))
    monkeypatch.setattr(matching._kern, "HKKernel", spy(matching._kern.HKKernel))
    monkeypatch.setattr(matching._kern, "koenig_cover", spy(matching._kern.koenig_cover))
    m = hopcroft_karp(g, method=method)
    m.vertex_cover()
    # the searches and the certificate only ever get private copies; the one entry that is
    # handed the caller's arrays is solve_csr, whose validating pass makes the copy its search
    # reads (test_solve_csr_with_a_writer_thread_never_crashes_or_changes_the_answer)
    if method == "hopcroft_karp":
        assert seen == [("HKKernel", False), ("koenig_cover", False)]
    else:
        assert seen == [("solve_csr", True), ("koenig_cover", False)]


@pytest.mark.parametrize("method", METHODS)
def test_writer_thread_during_solves_never_crashes_or_changes_the_answer(method):
    # a separate process: an out-of-bounds read would kill it, not the test session
    race(f'hopcroft_karp(g, method="{method}")')


@pytest.mark.parametrize("method", ["auto", "pothen_fan", "push_relabel"])
def test_solve_csr_with_a_writer_thread_never_crashes_or_changes_the_answer(method):
    """hopcroft_karp calls the one-call entry only while no other Python thread runs (it
    keeps the caller's arrays), but the entry itself must be safe whatever writes into them:
    its search reads the copy its validating pass wrote. Called directly here, with the
    writer thread running."""
    race(f'_Size(_tkern.solve_csr(g.indptr, g.indices, n, n, *_T_ONE_CALL["{method}"], _SIDE_PROBE, 0.95, 30000).size)',
         prelude="class _Size:\n    def __init__(self, size):\n        self.size = size\n")


