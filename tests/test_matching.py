"""spare_core.graph.matching against scipy and networkx, with König certificates checked independently."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core.graph.matching import IncrementalMatching, Matching, hopcroft_karp


# -- oracles and checkers (independent of the kernel) ---------------------------------------

def edge_set(graph) -> set[tuple[int, int]]:
    coo = sp.coo_array(graph)
    return set(zip(coo.row.tolist(), coo.col.tolist()))


def scipy_size(n_left, n_right, edges, capacity=None) -> int:
    """Maximum (b-)matching size from scipy, capacities by expanding each right vertex into slots."""
    if capacity is None:
        capacity = np.ones(n_right, dtype=np.int64)
    capacity = np.asarray(capacity, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(capacity)])
    rows, cols = [], []
    for i, j in edges:
        for s in range(start[j], start[j + 1]):
            rows.append(i)
            cols.append(s)
    n_slots = int(start[-1])
    if n_left == 0 or n_slots == 0:
        return 0
    g = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n_left, n_slots))
    return int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))


def networkx_size(n_left, n_right, edges) -> int:
    g = nx.Graph()
    left = [("L", i) for i in range(n_left)]
    g.add_nodes_from(left)
    g.add_nodes_from(("R", j) for j in range(n_right))
    g.add_edges_from((("L", i), ("R", j)) for i, j in edges)
    return len(nx.bipartite.hopcroft_karp_matching(g, top_nodes=left)) // 2


def check_valid(m: Matching, edges, capacity) -> None:
    """Every matched pair is an edge; loads agree with match_left and respect capacities."""
    ml = m.match_left
    assert ml.shape == (m.n_left,)
    for i in np.flatnonzero(ml >= 0):
        assert (int(i), int(ml[i])) in edges
    load = np.bincount(ml[ml >= 0], minlength=m.n_right)
    assert np.array_equal(load, m.right_load)
    assert np.all(load <= np.asarray(capacity))
    assert m.size == int(np.count_nonzero(ml >= 0))


def check_certificate(m: Matching, edges, capacity) -> None:
    """The König cover covers every edge and its capacity-weighted size equals the matching size."""
    left, right = m.vertex_cover()
    assert left.dtype == bool and right.dtype == bool
    for i, j in edges:
        assert left[i] or right[j], (i, j)
    assert int(left.sum()) + int(np.asarray(capacity)[right].sum()) == m.size


# -- graph strategies ----------------------------------------------------------------------

FORMATS = ("csr", "csc", "coo", "lil", "dok")


@st.composite
def graphs(draw, max_side=12):
    n_left = draw(st.integers(0, max_side))
    n_right = draw(st.integers(0, max_side))
    n_edges = draw(st.integers(0, 3 * max_side)) if n_left and n_right else 0
    rows = draw(st.lists(st.integers(0, max(n_left - 1, 0)), min_size=n_edges, max_size=n_edges))
    cols = draw(st.lists(st.integers(0, max(n_right - 1, 0)), min_size=n_edges, max_size=n_edges))
    idx = draw(st.sampled_from([np.int32, np.int64]))
    fmt = draw(st.sampled_from(FORMATS))
    array = draw(st.booleans())
    data = np.ones(n_edges)
    g = sp.coo_array((data, (np.array(rows, dtype=idx), np.array(cols, dtype=idx))), shape=(n_left, n_right))
    if not array:
        g = sp.coo_matrix(g)
    g = g.asformat(fmt)
    if fmt in ("csr", "csc"):
        g.indices = g.indices.astype(idx)
        g.indptr = g.indptr.astype(idx)
    return g, n_left, n_right, set(zip(rows, cols))


@given(graphs())
def test_size_matches_scipy_and_networkx(case):
    g, n_left, n_right, edges = case
    m = hopcroft_karp(g)
    assert m.size == scipy_size(n_left, n_right, edges) == networkx_size(n_left, n_right, edges)
    check_valid(m, edges, np.ones(n_right, dtype=np.int64))
    check_certificate(m, edges, np.ones(n_right, dtype=np.int64))


@given(graphs(), st.data())
def test_capacities_equal_expanded_graph(case, data):
    g, n_left, n_right, edges = case
    cap = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n_right, max_size=n_right)), dtype=np.int64)
    m = hopcroft_karp(g, capacity=cap)
    assert m.size == scipy_size(n_left, n_right, edges, cap)
    check_valid(m, edges, cap)
    check_certificate(m, edges, cap)


@given(graphs(), st.data())
def test_warm_start_after_removing_right_vertices_or_edges(case, data):
    g, n_left, n_right, edges = case
    cap = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n_right, max_size=n_right)), dtype=np.int64)
    before = hopcroft_karp(g, capacity=cap)
    gone_right = set(data.draw(st.lists(st.integers(0, max(n_right - 1, 0)), max_size=3))) if n_right else set()
    gone_edges = set(data.draw(st.lists(st.sampled_from(sorted(edges)), max_size=4))) if edges else set()
    kept = {(i, j) for i, j in edges if j not in gone_right and (i, j) not in gone_edges}
    rows = np.array([i for i, _ in sorted(kept)], dtype=np.int64)
    cols = np.array([j for _, j in sorted(kept)], dtype=np.int64)
    g2 = sp.csr_array((np.ones(len(kept)), (rows, cols)), shape=(n_left, n_right))
    warm = data.draw(st.sampled_from(["matching", "array"]))
    after = hopcroft_karp(g2, capacity=cap, warm_start=before if warm == "matching" else before.match_left.tolist())
    assert after.size == scipy_size(n_left, n_right, kept, cap)
    check_valid(after, kept, cap)
    check_certificate(after, kept, cap)
    still_valid = sum(1 for i, j in zip(*before.pairs()) if (int(i), int(j)) in kept)
    assert after.warm_kept == still_valid


def test_warm_start_keeps_valid_pairs_after_a_group_fails():
    n, r = 3000, 3
    g = spare_graph(n, r)
    full = hopcroft_karp(g, capacity=np.full(n, 2))
    # the group holding type 0 fails: drop its column
    failed = int(full.match_left[0])
    coo = g.tocoo()
    keep = coo.col != failed
    g2 = sp.csr_array((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=g.shape)
    cap = np.full(n, 2)
    m = hopcroft_karp(g2, capacity=cap, warm_start=full)
    assert m.size == n
    assert m.warm_kept == n - int(full.right_load[failed]) and full.right_load[failed] > 0
    assert m.right_load[failed] == 0


def spare_graph(n: int, r: int, offsets=None) -> sp.csr_array:
    """Shard type i held by groups i, i+1, ..., i+r-1 (mod n): the SPARe cyclic stacking."""
    rows = np.repeat(np.arange(n), r)
    cols = (rows + np.tile(np.arange(r) if offsets is None else np.asarray(offsets), n)) % n
    return sp.csr_array((np.ones(n * r), (rows, cols)), shape=(n, n))


# -- conventions ---------------------------------------------------------------------------

def test_explicit_zeros_are_edges():
    g = sp.csr_array((np.array([0.0, 0.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    assert g.nnz == 2
    m = hopcroft_karp(g)
    assert m.size == 2
    assert m.size == int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))
    g.eliminate_zeros()
    assert hopcroft_karp(g).size == 0


def test_duplicates_and_int64_indices():
    rows = np.array([0, 0, 0, 1], dtype=np.int64)
    cols = np.array([1, 1, 1, 1], dtype=np.int64)
    g = sp.coo_array((np.ones(4), (rows, cols)), shape=(2, 3))
    assert hopcroft_karp(g).size == 1
    assert hopcroft_karp(g, capacity=[0, 2, 0]).size == 2
    csr = sp.csr_array(g)
    csr.indices = csr.indices.astype(np.int64)
    csr.indptr = csr.indptr.astype(np.int64)
    assert hopcroft_karp(csr).size == 1


def test_repr_and_result_are_read_only():
    m = hopcroft_karp(sp.csr_array(np.eye(3)), capacity=[1, 2, 1])
    assert "size=3" in repr(m) and "b-matching" in repr(m)
    with pytest.raises(ValueError):
        m.match_left[0] = 2
    im = IncrementalMatching(sp.csr_array(np.eye(3)))
    assert "size=3" in repr(im)
    with pytest.raises(ValueError):
        im.match_left[0] = 1


def test_callers_arrays_unchanged():
    g = spare_graph(50, 3)
    snapshot = (g.data.copy(), g.indices.copy(), g.indptr.copy())
    cap = np.full(50, 1, dtype=np.int64)
    warm = hopcroft_karp(g).match_left.copy()
    warm_copy = warm.copy()
    hopcroft_karp(g, capacity=cap, warm_start=warm)
    im = IncrementalMatching(g, capacity=cap)
    im.disable_right(3)
    im.set_capacity(4, 3)
    im.augment()
    assert np.array_equal(cap, np.ones(50))
    assert np.array_equal(warm, warm_copy)
    for a, b in zip(snapshot, (g.data, g.indices, g.indptr)):
        assert np.array_equal(a, b)


@given(graphs(), st.data())
def test_every_kernel_strategy_is_maximum(case, data):
    """Karp-Sipser start and dead-vertex pruning are optimisations: each combination is exact."""
    from spare_core.graph._validate import csr_graph as _graph_csr
    from spare_core.graph.matching import _kern

    g, n_left, n_right, edges = case
    cap = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n_right, max_size=n_right)), dtype=np.int64)
    expected = scipy_size(n_left, n_right, edges, cap)
    indptr, indices, _, _ = _graph_csr(g)
    for start in (0, 1, 2, 3):
        # budget 0: prune after every phase; -1: the default rules (early prune, ski rental)
        for prune, budget in ((False, -1), (True, 0), (True, -1)):
            k = _kern.HKKernel(indptr, indices, cap.copy(), False)
            k.prune_budget = budget
            assert k.solve(start, prune) == expected
            m = Matching(k.match_left, k.load, cap, indptr, indices)
            check_valid(m, edges, cap)
            check_certificate(m, edges, cap)
            ml, load = k.result()
            assert np.array_equal(ml, k.match_left) and np.array_equal(load, k.load)


def test_cold_solve_prunes_first_only_without_right_slack():
    """The prune before the first phase runs iff free left vertices >= free right slots."""
    from spare_core.graph._validate import csr_graph as _graph_csr
    from spare_core.graph.matching import _kern

    # 40 left vertices all joined to right 0 and 1 only (plus one private right each for
    # the first 5): greedy leaves 33 free left vertices and no free slot on 0/1
    rows = np.concatenate([np.repeat(np.arange(40), 2), np.arange(5)])
    cols = np.concatenate([np.tile([0, 1], 40), 2 + np.arange(5)])
    g = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(40, 7))
    indptr, indices, _, n_right = _graph_csr(g)
    tight = _kern.HKKernel(indptr, indices, np.ones(n_right, np.int64), False)
    assert tight.solve(1, True) == 7
    assert tight.prunes >= 1
    # the same graph with slack on the right (capacity 40 on right 0): no early prune needed
    cap = np.ones(n_right, np.int64)
    cap[0] = 40
    slack = _kern.HKKernel(indptr, indices, cap, False)
    assert slack.solve(1, True) == 40
    assert slack.prunes == 0


def test_kernel_checks_its_arrays():
    """HKKernel is reachable from Python: arrays of the wrong dtype or layout raise TypeError."""
    from spare_core.graph._validate import csr_graph as _graph_csr
    from spare_core.graph.matching import _kern

    g = sp.csr_array(np.array([[1, 1], [1, 0]]))
    indptr, indices, _, n_right = _graph_csr(g)
    cap = np.ones(n_right, np.int64)
    for bad in (indptr.astype(np.int32), indptr.astype(np.float64)):
        with pytest.raises(TypeError):
            _kern.HKKernel(bad, indices, cap, False)
    with pytest.raises(TypeError):
        _kern.HKKernel(indptr, np.repeat(indices, 2)[::2], cap, False)    # not contiguous
    with pytest.raises(ValueError):
        _kern.HKKernel(indptr, indices, None, True, n_right)               # unit capacity: one-shot only
    assert _kern.HKKernel(indptr, indices, None, False, n_right).solve(1, True) == 2


def test_level_reset_while_a_prune_verdict_is_in_force():
    """The int32 level reset (forced by starting just below its threshold) may fall between a
    prune and the phases that rely on it: with a prune after every phase and the reset placed
    at each of the level steps of a solve, every solve stays maximum and certified."""
    from spare_core.graph._validate import csr_graph as _graph_csr
    from spare_core.graph.matching import _kern

    rng = np.random.default_rng(11)
    n = 1500
    rows = np.repeat(np.arange(n), 2)
    cols = rng.integers(0, n, 2 * n)
    keep = (rng.random(n) >= 0.2)[cols]           # tight right side: prunes matter
    g = sp.csr_array((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(n, n))
    edges = set(zip(rows[keep].tolist(), cols[keep].tolist()))
    expected = int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))
    indptr, indices, _, n_right = _graph_csr(g)
    cap = np.ones(n_right, np.int64)
    free = _kern.HKKernel(indptr, indices, cap.copy(), False)
    free.prune_budget = 0
    free.solve(0, True)
    climb = free.level_top             # levels one solve uses: each step gets the reset once
    assert climb >= 4
    for m in range(climb):
        k = _kern.HKKernel(indptr, indices, cap.copy(), False)
        k.prune_budget = 0
        k.level_top = 2**31 - 1 - n - 4 - m
        assert k.solve(0, True) == expected
        assert k.prunes >= 2 and k.level_top < 2**30      # pruned, and the reset happened
        m_ = Matching(k.match_left, k.load, cap, indptr, indices)
        check_valid(m_, edges, cap)
        check_certificate(m_, edges, cap)
