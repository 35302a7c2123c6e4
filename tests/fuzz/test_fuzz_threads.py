"""Fuzz: another Python thread rewrites a graph's arrays while a solver runs.

docs/reliability.md ("Threads and the GIL") promises that while other Python threads run,
``hopcroft_karp`` and ``min_cost_flow`` solve private copies of the caller's index arrays, so
a thread writing into them mid-solve cannot send a kernel out of bounds. What a test can
show, and these do, for every call made during the race:

- no crash and no hang (each case runs in a forked child with a time limit, and the kernels
  run under AddressSanitizer in ``.ci/sanitize``);
- either one clean error (ValueError/TypeError: the copy held a value out of range), or an
  answer that is exact for one consistent state of the arrays. The writer stores whole
  arrays from a few fixed states (two valid graphs, and garbage), one array after another,
  so the copy a solve takes is one of the mixtures of those states; for small arrays
  (a store holds the GIL throughout) the answer must be optimal for one of the valid
  mixtures. Large arrays can also tear element by element (numpy copies them without the
  GIL), so there only the first promise and a well-formed answer are checked.
"""
from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import scipy.sparse as sp
from hypothesis import given, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from fuzz_isolate import CLEAN_ERRORS, run_isolated
from fuzz_profile import PROFILE, fuzz
from spare_core.graph.flow import check_flow_certificate, min_cost_flow
from spare_core.graph.matching import hopcroft_karp

#: seconds one case races the writer against the solver (longer in the long profile)
RACE_SECONDS = 0.15 if PROFILE == "fast" else 1.0
#: arrays up to this many entries are stored by numpy with the GIL held (no element tearing)
ATOMIC_ENTRIES = 256


def _race(write_states, call, seconds):
    """Run ``call()`` repeatedly while a thread stores states from ``write_states`` (a
    list of callables) in a loop; the outcomes of the calls: ``("ok", value)`` or
    ``("error", type, message)``."""
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            write_states[i % len(write_states)]()
            i += 1

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    outcomes = []
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end or not outcomes:
            try:
                outcomes.append(("ok", call()))
            except CLEAN_ERRORS as exc:
                outcomes.append(("error", type(exc), str(exc)))
    finally:
        stop.set()
        t.join()
    return outcomes


def _bipartite(rng, n, nnz):
    rows = rng.integers(0, n, nnz)
    cols = rng.integers(0, n, nnz)
    return sp.csr_array((np.ones(nnz), (rows, cols)), shape=(n, n))


@fuzz(0.125)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([6, 20, 3000]),
       method=st.sampled_from(["auto", "hopcroft_karp", "pothen_fan", "push_relabel"]), garbage=st.sampled_from(["none", "index", "indptr"]))
def test_hopcroft_karp_while_another_thread_rewrites_the_graph(seed, n, method, garbage):
    def go():
        rng = np.random.default_rng(seed)
        a = _bipartite(rng, n, 3 * n)
        b = _bipartite(rng, n, 3 * n)
        nnz = min(a.nnz, b.nnz)         # both states must fit the shared arrays
        ptrs = [np.minimum(a.indptr, nnz).astype(a.indptr.dtype), np.minimum(b.indptr, nnz).astype(a.indptr.dtype)]
        idxs = [a.indices[:nnz].copy(), b.indices[:nnz].copy()]
        g = sp.csr_array((np.ones(nnz), idxs[0].copy(), ptrs[0].copy()), shape=(n, n))
        bad_idx = idxs[0].copy()
        bad_idx[len(bad_idx) // 2] = n + 2**20       # a column out of range
        bad_ptr = ptrs[0].copy()
        bad_ptr[n // 2] = nnz + 7                    # decreasing, and past the end

        def store(arr, value):
            return lambda: arr.__setitem__(slice(None), value)
        states = [store(g.indptr, p) for p in ptrs] + [store(g.indices, i) for i in idxs]
        if garbage == "index":
            states.append(store(g.indices, bad_idx))
        elif garbage == "indptr":
            states.append(store(g.indptr, bad_ptr))

        def call():
            m = hopcroft_karp(g, method=method)
            return m.size, np.array(m.match_left)
        outcomes = _race(states, call, RACE_SECONDS)
        # the graphs a solve may have seen: every mixture of the valid states
        sizes = {}
        for (pi, p), (ii, i) in itertools.product(enumerate(ptrs), enumerate(idxs)):
            h = sp.csr_array((np.ones(nnz), i, p), shape=(n, n))
            sizes[(pi, ii)] = (h, int(np.count_nonzero(maximum_bipartite_matching(h, perm_type="column") >= 0)))
        report = {"ok": 0, "error": 0}
        for out in outcomes:
            report[out[0]] += 1
            if out[0] == "error":
                # a torn store of a large indptr (half one graph, half the other) may be
                # decreasing: a clean error is then right even without garbage
                assert garbage != "none" or nnz > ATOMIC_ENTRIES, f"a clean error with only valid states stored: {out[2]}"
                continue
            size, ml = out[1]
            matched = ml[ml >= 0]
            assert ml.shape == (n,) and np.all(ml >= -1) and np.all(ml < n), "match_left out of range"
            assert len(np.unique(matched)) == len(matched) == size, "not a matching"
            if nnz <= ATOMIC_ENTRIES and garbage == "none":
                fits = [key for key, (h, best) in sizes.items() if best == size and
                        all(h[[u], :].toarray()[0, v] for u, v in enumerate(ml) if v >= 0)]
                assert fits, f"size {size} is optimal for no state the arrays held ({sizes})"
        return report
    out = run_isolated(go, case=f"hopcroft_karp race n={n} method={method} garbage={garbage}", timeout=120)
    assert out.ok, f"{out.error_type.__name__}: {out.message}"
    assert out.value["ok"] + out.value["error"] > 0


@fuzz(0.125)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([4, 12, 2000]), garbage=st.booleans())
def test_min_cost_flow_while_another_thread_rewrites_the_arcs(seed, n, garbage):
    def go():
        rng = np.random.default_rng(seed)
        m = 3 * n
        tails = [rng.integers(0, n, m) for _ in range(2)]
        heads = [rng.integers(0, n, m) for _ in range(2)]
        cap = rng.integers(0, 5, m)
        cost = rng.integers(-3, 10, m)
        supply = np.zeros(n, dtype=np.int64)
        supply[0], supply[-1] = 3, -3
        tail, head = tails[0].copy(), heads[0].copy()

        def store(arr, value):
            return lambda: arr.__setitem__(slice(None), value)
        states = [store(tail, t) for t in tails] + [store(head, h) for h in heads]
        if garbage:
            bad = heads[0].copy()
            bad[m // 2] = n + 2**40                  # a node id far out of range
            states.append(store(head, bad))

        outcomes = _race(states, lambda: min_cost_flow(n, tail, head, cap, cost, supply), RACE_SECONDS)
        report = {"ok": 0, "error": 0}
        for out in outcomes:
            report[out[0]] += 1
            if out[0] == "error":
                # above ATOMIC_ENTRIES numpy copies without the GIL (memcpy may store an entry
                # byte by byte): bytes of two valid node ids can make one out of range, and
                # refusing it is right even without garbage
                torn = m > ATOMIC_ENTRIES and "out of range" in str(out[2])
                assert garbage or torn, f"a clean error with only valid states stored: {out[2]}"
                continue
            r = out[1]
            assert r.flow.shape == (m,)
            if m <= ATOMIC_ENTRIES and not garbage:
                assert any(check_flow_certificate(n, t, h, cap, cost, r, supply=supply)
                           for t, h in itertools.product(tails, heads)), "certified for no state the arcs held"
        return report
    out = run_isolated(go, case=f"min_cost_flow race n={n} garbage={garbage}", timeout=120)
    assert out.ok, f"{out.error_type.__name__}: {out.message}"
    assert out.value["ok"] + out.value["error"] > 0
