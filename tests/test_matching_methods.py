"""hopcroft_karp(method=...): every method against scipy and networkx on every family of
bench/families.py (small instances), certificates on every result, the `auto` rules pinned."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core.graph.matching import METHODS, hopcroft_karp

from bench import families

UNIT_METHODS = [m for m in METHODS if m != "auto"]


def scipy_size(g) -> int:
    if g.shape[0] == 0 or g.shape[1] == 0:
        return 0
    return int(np.count_nonzero(maximum_bipartite_matching(sp.csr_array(g), perm_type="column") >= 0))


def networkx_size(g) -> int:
    coo = sp.coo_array(g)
    h = nx.Graph()
    left = [("L", i) for i in range(g.shape[0])]
    h.add_nodes_from(left)
    h.add_nodes_from(("R", j) for j in range(g.shape[1]))
    h.add_edges_from((("L", int(i)), ("R", int(j))) for i, j in zip(coo.row, coo.col))
    return len(nx.bipartite.hopcroft_karp_matching(h, top_nodes=left)) // 2


def check(m, g, cap=None) -> None:
    """A valid matching of g (pairs are edges, loads within capacity) and König's cover of
    the same weight: a proof of maximality independent of the method."""
    g = sp.csr_array(g)
    cap = np.ones(g.shape[1], dtype=np.int64) if cap is None else np.asarray(cap)
    ml = m.match_left
    rows = np.flatnonzero(ml >= 0)
    for i in rows:
        assert ml[i] in g.indices[g.indptr[i]:g.indptr[i + 1]]
    load = np.bincount(ml[rows], minlength=g.shape[1])
    assert np.array_equal(load, m.right_load) and np.all(load <= cap)
    left, right = m.vertex_cover()
    coo = g.tocoo()
    assert np.all(left[coo.row] | right[coo.col])
    assert int(left.sum()) + int(cap[right].sum()) == m.size == rows.size


@pytest.mark.parametrize("name", sorted(families.FAMILIES))
@pytest.mark.parametrize("nnz", [300, 3000])
def test_every_method_on_every_family(name, nnz):
    g, cap = families.make(name, nnz, seed=3)
    ref = scipy_size(g if cap is None else _expand(g, cap))
    for method in METHODS:
        if cap is not None and method == "push_relabel":
            with pytest.raises(ValueError, match="capacities other than 1"):
                hopcroft_karp(g, capacity=cap, method=method)
            continue
        m = hopcroft_karp(g, capacity=cap, method=method)
        assert m.size == ref, method
        check(m, g, cap)
    if cap is None and nnz <= 300:
        assert networkx_size(g) == ref


def _expand(g, cap):
    coo = sp.coo_array(g)
    start = np.concatenate([[0], np.cumsum(cap)])
    rows, cols = [], []
    for i, j in zip(coo.row, coo.col):
        for s in range(start[j], start[j + 1]):
            rows.append(i)
            cols.append(s)
    return sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(g.shape[0], int(start[-1])))


@st.composite
def graphs(draw):
    n_left = draw(st.integers(0, 14))
    n_right = draw(st.integers(0, 14))
    k = draw(st.integers(0, 50)) if n_left and n_right else 0
    rows = draw(st.lists(st.integers(0, max(n_left - 1, 0)), min_size=k, max_size=k))
    cols = draw(st.lists(st.integers(0, max(n_right - 1, 0)), min_size=k, max_size=k))
    idx = draw(st.sampled_from([np.int32, np.int64]))
    g = sp.csr_array((np.ones(k), (rows, cols)), shape=(n_left, n_right))
    g.indices = g.indices.astype(idx)
    g.indptr = g.indptr.astype(idx)
    return g


@settings(max_examples=300, deadline=None)
@given(graphs(), st.sampled_from(UNIT_METHODS + ["auto"]))
def test_methods_differential(g, method):
    m = hopcroft_karp(g, method=method)
    assert m.size == scipy_size(g)
    check(m, g)


@settings(max_examples=100, deadline=None)
@given(graphs())
def test_unit_capacity_array_accepted(g):
    ones = np.ones(g.shape[1], dtype=np.int64)
    for method in ("pothen_fan", "push_relabel"):
        assert hopcroft_karp(g, capacity=ones, method=method).size == scipy_size(g)


def test_long_chain_and_callers_arrays_unchanged():
    g, _ = families.chain(20_000, np.random.default_rng(5))
    before = (g.indptr.copy(), g.indices.copy())
    ref = scipy_size(g)
    assert ref == g.shape[0]
    for method in METHODS:
        m = hopcroft_karp(g, method=method)
        assert m.size == ref
        check(m, g)
    assert np.array_equal(g.indptr, before[0]) and np.array_equal(g.indices, before[1])


def test_bad_method_refused_before_the_graph_is_read():
    with pytest.raises(ValueError, match="method must be one of"):
        hopcroft_karp("not a graph", method="dfs")
    g = sp.csr_array(np.eye(3))
    with pytest.raises(ValueError, match="warm_start needs method"):
        hopcroft_karp(g, warm_start=[-1, -1, -1], method="pothen_fan")
    with pytest.raises(ValueError, match="capacities other than 1"):
        hopcroft_karp(g, capacity=[2, 1, 1], method="push_relabel")


def test_modified_graph_refused_by_every_method():
    g = sp.csr_array(np.eye(4))
    for method in UNIT_METHODS:
        m = hopcroft_karp(g, method=method)
        g.indices[0] = 1
        with pytest.raises(ValueError, match="modified"):
            m.vertex_cover()
        g.indices[0] = 0


# -- the auto rules: one family per rule; a changed rule changes a method here ------------------

@pytest.mark.parametrize("name, nnz, expected, side", [
    ("uniform5", 1_000, "pothen_fan", "left"),
    ("sparse", 10_000, "pothen_fan", "left"),
    ("uniform5", 100_000, "push_relabel", "left"),
    ("chain", 100_000, "push_relabel", "left"),
    ("planted", 40_000, "push_relabel", "left"),
    # fewer right than left vertices with an edge: PF+ from the right at every size
    ("rect", 1_000, "pothen_fan", "right"),
    ("rect", 100_000, "pothen_fan", "right"),
    ("zipf", 100_000, "pothen_fan", "right"),
    ("hard", 100_000, "pothen_fan", "right"),
    # the greedy pass leaves no edge to a free right vertex: already maximum, no search
    ("blocks", 528, "greedy", "right"),
    ("blocks", 100_000, "greedy", "right"),
])
def test_auto_rule_per_family(name, nnz, expected, side):
    """``side``: where auto's search (and the named PF+ / push-relabel) search from; a
    greedy shortcut searched nowhere and reports "left"."""
    g, _ = families.make(name, nnz)
    m = hopcroft_karp(g)
    assert (m.method, m.searched_from) == (expected, side if expected != "greedy" else "left")
    assert m.size == scipy_size(g)
    check(m, g)
    for method in UNIT_METHODS:
        named = hopcroft_karp(g, method=method)
        assert named.method == method
        # the named search methods take their side from the same probe; Hopcroft-Karp from the left
        assert named.searched_from == (side if method != "hopcroft_karp" else "left")


@pytest.mark.parametrize("name", sorted(set(families.FAMILIES) - {"blocks", "redundancy"}))
def test_greedy_shortcut_only_where_the_greedy_is_maximum(name):
    """On every other family the greedy pass leaves a free left and a free right vertex with
    an edge, so auto must search (a wrong shortcut would return a smaller matching than
    scipy's, which check() and the size comparison catch as well)."""
    g, _ = families.make(name, 3_000)
    m = hopcroft_karp(g)
    assert m.method != "greedy"
    assert m.size == scipy_size(g)
    check(m, g)


def test_greedy_shortcut_on_either_side_and_not_when_greedy_is_short():
    # every left vertex matched by the greedy (left i -> right i, plus extra edges): done
    n = 50
    rows = np.concatenate([np.arange(n), np.arange(n)])
    cols = np.concatenate([np.arange(n), (np.arange(n) + 7) % (n + 10)])
    g = sp.csr_array((np.ones(2 * n), (rows, cols)), shape=(n, n + 10))
    m = hopcroft_karp(g)
    assert (m.method, m.size, m.phases) == ("greedy", n, 0)
    check(m, g)
    # every right vertex with an edge matched (more left than right): done
    m = hopcroft_karp(sp.csr_array(g.T))
    assert (m.method, m.size) == ("greedy", n)
    check(m, sp.csr_array(g.T))
    # left 0 -- {0, 1}, left 1 -- {0}: the greedy takes (0, 0) and is stuck; right 1 is free
    # and has an edge, left 1 is free and has one: the search must run and find size 2
    g = sp.csr_array(np.array([[1, 1], [1, 0]]))
    m = hopcroft_karp(g)
    assert m.method == "pothen_fan" and m.size == 2
    check(m, g)
    # isolated vertices do not stop the shortcut; named methods never report it
    g = sp.csr_array((np.ones(3), ([0, 1, 2], [1, 2, 3])), shape=(5, 6))
    assert hopcroft_karp(g).method == "greedy"
    for method in UNIT_METHODS:
        assert hopcroft_karp(g, method=method).method == method


def test_side_probe_boundary():
    """The probe compares the right and left vertices that have an edge (isolated vertices do
    not count): 95 right of 100 left is the boundary."""
    def graph(n_left, n_right, n_isolated_right=0):
        # left i -- right i mod (n_right - 1), and left 0 -- right n_right - 1 as well: the
        # greedy pass gives left 0 right 0 and leaves right n_right - 1 free (and left
        # vertices free), so the greedy shortcut does not apply and the probe decides
        rows = np.append(np.arange(n_left), 0)
        cols = np.append(np.arange(n_left) % (n_right - 1), n_right - 1)
        return sp.csr_array((np.ones(n_left + 1), (rows, cols)), shape=(n_left, n_right + n_isolated_right))
    assert hopcroft_karp(graph(100, 94)).searched_from == "right"
    assert hopcroft_karp(graph(100, 95)).searched_from == "left"
    assert hopcroft_karp(graph(100, 94, 50)).searched_from == "right"     # isolated right vertices ignored
    assert hopcroft_karp(graph(100, 100)).searched_from == "left"
    m = hopcroft_karp(graph(100, 60))
    assert m.size == 60 and m.method == "pothen_fan"
    check(m, graph(100, 60))


def test_auto_rule_for_b_matchings_and_warm_starts():
    """Capacities other than 1 from scratch: _bmatch's greedy, then PF+ with capacities
    (the redundancy family: the greedy leaves a few types free); with a warm start,
    Hopcroft-Karp. tests/test_matching_bmatch.py pins the greedy shortcut's two tests."""
    for nnz in (300, 3_000, 30_000):
        g, cap = families.make("redundancy", nnz)
        m = hopcroft_karp(g, capacity=cap)
        assert m.method == "pothen_fan" and m.size == scipy_size(_expand(g, cap)), nnz
        warm = hopcroft_karp(g, capacity=cap, warm_start=m)
        assert warm.method == "hopcroft_karp" and warm.size == m.size
        # 20 groups per type (family a's r = 20): the greedy alone places every type
        g, cap = families.redundancy(nnz, np.random.default_rng(nnz), r=20)
        m = hopcroft_karp(g, capacity=cap)
        assert m.method == "greedy" and m.size == g.shape[0] == scipy_size(_expand(g, cap)), nnz
    g, _ = families.make("uniform5", 100_000)
    cold = hopcroft_karp(g)
    warm = hopcroft_karp(g, warm_start=cold)
    assert cold.method == "push_relabel" and warm.method == "hopcroft_karp" and warm.size == cold.size


def test_csr_matrix_subclass_and_strided_indices_give_the_same_certified_matching():
    """The wrapper's fast path (exact csr_array / csr_matrix with contiguous native arrays)
    and its general path agree, and both keep the modified-graph check."""
    g, _ = families.make("rect", 3_000)

    class MyCsr(sp.csr_array):
        pass

    strided = sp.csr_array(g)
    strided.indices = np.repeat(g.indices, 2)[::2]          # same values, not contiguous
    ref = scipy_size(g)
    for h in (g, sp.csr_matrix(g), MyCsr(g), strided):
        m = hopcroft_karp(h)
        assert m.size == ref and m.method == "pothen_fan" and m.searched_from == "right"
        check(m, g)
    h = sp.csr_matrix(g)
    m = hopcroft_karp(h)
    h.indices[0] = (h.indices[0] + 1) % h.shape[1]
    with pytest.raises(ValueError, match="modified"):
        m.vertex_cover()
