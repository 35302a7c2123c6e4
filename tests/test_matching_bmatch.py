"""b-matchings (right capacities other than 1) from scratch: the _bmatch kernel (a greedy pass,
then PF+ with native capacities) against scipy on the slot-expanded graph, networkx's maximum
flow and Hopcroft-Karp, each result's König certificate checked independently."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core import _native
from spare_core.graph.matching import hopcroft_karp

from bench import families
from tests.matching_race import CAP_REF, race

B_METHODS = ("auto", "pothen_fan", "hopcroft_karp")


def expand(g, cap):
    """Right vertex j becomes cap[j] columns (the graph scipy needs for a b-matching)."""
    coo = sp.coo_array(g)
    start = np.concatenate([[0], np.cumsum(cap)]).astype(np.int64)
    reps = np.asarray(cap, dtype=np.int64)[coo.col]
    rows = np.repeat(coo.row, reps)
    offs = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    cols = np.repeat(start[coo.col], reps) + offs
    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(g.shape[0], int(start[-1])))


def scipy_b_size(g, cap) -> int:
    ge = expand(g, cap)
    if ge.shape[0] == 0 or ge.shape[1] == 0:
        return 0
    return int(np.count_nonzero(maximum_bipartite_matching(ge, perm_type="column") >= 0))


def networkx_b_size(g, cap) -> int:
    """Maximum flow source -> left (1) -> right (1 per edge) -> sink (capacity)."""
    coo = sp.coo_array(g)
    h = nx.DiGraph()
    h.add_node("s")
    h.add_node("t")
    for i in range(g.shape[0]):
        h.add_edge("s", ("L", i), capacity=1)
    for j in range(g.shape[1]):
        h.add_edge(("R", j), "t", capacity=int(cap[j]))
    for i, j in zip(coo.row.tolist(), coo.col.tolist()):
        h.add_edge(("L", i), ("R", j), capacity=1)
    return int(nx.maximum_flow_value(h, "s", "t"))


def check(m, g, cap) -> None:
    """Pairs are edges, loads within capacity and reported right, and the vertex cover has
    the matching's capacity-weighted size (König: the matching is maximum)."""
    g = sp.csr_array(g)
    cap = np.asarray(cap, dtype=np.int64)
    ml = m.match_left
    rows = np.flatnonzero(ml >= 0)
    for i in rows:
        assert ml[i] in g.indices[g.indptr[i]:g.indptr[i + 1]]
    load = np.bincount(ml[rows], minlength=g.shape[1])
    assert np.array_equal(load, m.right_load) and np.all(load <= cap)
    assert np.array_equal(m.capacity, cap)
    left, right = m.vertex_cover()
    coo = g.tocoo()
    assert np.all(left[coo.row] | right[coo.col])
    assert int(left.sum()) + int(cap[right].sum()) == m.size == rows.size


@st.composite
def b_graphs(draw):
    n_left = draw(st.integers(0, 12))
    n_right = draw(st.integers(0, 12))
    k = draw(st.integers(0, 45)) if n_left and n_right else 0
    rows = draw(st.lists(st.integers(0, max(n_left - 1, 0)), min_size=k, max_size=k))
    cols = draw(st.lists(st.integers(0, max(n_right - 1, 0)), min_size=k, max_size=k))
    cap = draw(st.lists(st.integers(0, 3), min_size=n_right, max_size=n_right))
    g = sp.csr_array((np.ones(k), (rows, cols)), shape=(n_left, n_right))
    idx = draw(st.sampled_from([np.int32, np.int64]))
    g.indices = g.indices.astype(idx)
    g.indptr = g.indptr.astype(idx)
    return g, np.array(cap, dtype=draw(st.sampled_from([np.int32, np.int64])))


@settings(max_examples=300, deadline=None)
@given(b_graphs(), st.sampled_from(B_METHODS))
def test_b_matching_differential(gc, method):
    g, cap = gc
    m = hopcroft_karp(g, capacity=cap, method=method)
    assert m.size == scipy_b_size(g, cap)
    check(m, g, cap)


@settings(max_examples=100, deadline=None)
@given(b_graphs(), st.integers(4, 2**62))
def test_b_matching_against_networkx_with_large_capacities(gc, big):
    """Capacities beyond n_left (clamped inside the kernel) and a max-flow oracle."""
    g, cap = gc
    cap = cap.astype(np.int64)
    if cap.size:
        cap[::3] = big
    ref = networkx_b_size(g, cap)
    for method in B_METHODS:
        m = hopcroft_karp(g, capacity=cap, method=method)
        assert m.size == ref, method
        check(m, g, cap)


@pytest.mark.parametrize("name", ["redundancy", "hard", "rect", "zipf", "blocks", "chain"])
@pytest.mark.parametrize("s", [2, 3])
def test_every_method_on_families_with_capacities(name, s):
    """Catalogue graphs (unit families given capacities 0 ... s) at a few thousand edges."""
    g, cap = families.make(name, 3_000, seed=4)
    if cap is None:
        cap = np.random.default_rng(9).integers(0, s + 1, g.shape[1])
    ref = scipy_b_size(g, cap)
    sizes = set()
    for method in B_METHODS:
        m = hopcroft_karp(g, capacity=cap, method=method)
        sizes.add(m.size)
        check(m, g, cap)
    assert sizes == {ref}


def test_tight_b_matching_family_e():
    """Family (e) of bench/tables/matching.py: cyclic stacks r = 20, S = 2, groups failed
    until capacity barely suffices (long augmenting paths through saturated groups)."""
    from spare_core.graph.matching import IncrementalMatching

    n, r = 300, 20
    rows = np.repeat(np.arange(n), r)
    g = sp.csr_array((np.ones(n * r), (rows, (rows + np.tile(np.arange(r), n)) % n)), shape=(n, n))
    im = IncrementalMatching(g, capacity=np.full(n, 2))
    failed = []
    for j in np.random.default_rng(2).permutation(n).tolist():
        im.disable_right(j)
        if im.augment() < n:
            break
        failed.append(j)
    cap = np.full(n, 2)
    cap[failed] = 0
    for extra in (0, 1):          # the tight case, and one more failure (not all types fit)
        if extra:
            cap[np.flatnonzero(cap)[0]] = 0
        ref = scipy_b_size(g, cap)
        for method in B_METHODS:
            m = hopcroft_karp(g, capacity=cap, method=method)
            assert m.size == ref
            check(m, g, cap)


def test_greedy_shortcut_fires_only_when_a_side_is_covered():
    """auto returns the greedy matching ('greedy') when (a) every left vertex with an edge
    to a right vertex of capacity > 0 is matched or (b) no edge reaches spare capacity;
    else PF+ runs. pothen_fan forced reports itself either way."""
    # (a) left 2 has only a capacity-0 neighbour: it cannot be matched, the rest are
    g = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1]]))
    cap = np.array([2, 1, 0])
    m = hopcroft_karp(g, capacity=cap)
    assert m.method == "greedy" and m.size == 2
    check(m, g, cap)
    # (b) three left vertices, one right vertex of capacity 2: the third stays free
    g = sp.csr_array(np.ones((3, 1)))
    m = hopcroft_karp(g, capacity=[2])
    assert m.method == "greedy" and m.size == 2
    check(m, g, [2])
    assert hopcroft_karp(g, capacity=[2], method="pothen_fan").method == "pothen_fan"
    # neither: left 0 takes right 0 first, left 1 needs it (augmenting path via right 1)
    g = sp.csr_array(np.array([[1, 1], [1, 0]]))
    m = hopcroft_karp(g, capacity=[1, 2])
    assert m.method == "pothen_fan" and m.size == 2 and m.match_left.tolist() == [1, 0]
    check(m, g, [1, 2])


def test_path_through_a_saturated_right_vertex_with_several_partners():
    """The flip replaces a partner in the middle of a right vertex's partner list."""
    # right 0 (capacity 3) takes left 0, 1, 2 greedily; left 3 only reaches right 0; left 1
    # can move to right 1 (capacity 2)
    dense = np.zeros((4, 2))
    dense[:3, 0] = 1
    dense[1, 1] = 1
    dense[3, 0] = 1
    g = sp.csr_array(dense)
    for method in ("auto", "pothen_fan"):
        m = hopcroft_karp(g, capacity=[3, 2], method=method)
        assert m.size == 4 and m.match_left.tolist() == [0, 1, 0, 0]
        check(m, g, [3, 2])


def test_capacities_all_one_take_the_unit_path_and_inputs_stay_unchanged():
    g, _ = families.make("hard", 3_000, seed=1)
    ones = np.ones(g.shape[1], dtype=np.int32)
    m = hopcroft_karp(g, capacity=ones)
    assert m.method == hopcroft_karp(g).method != "hopcroft_karp"
    g, cap = families.make("redundancy", 3_000, seed=1)
    before = (g.indptr.copy(), g.indices.copy(), cap.copy())
    m = hopcroft_karp(g, capacity=cap)
    assert np.array_equal(g.indptr, before[0]) and np.array_equal(g.indices, before[1])
    assert np.array_equal(cap, before[2]) and cap.flags.writeable
    assert not m.capacity.flags.writeable and not np.shares_memory(m.capacity, cap)
    # other capacity forms take the validating path, same answer
    for c in (cap.tolist(), cap[::-1][::-1], np.repeat(cap, 2)[::2], cap.astype(np.int16)):
        assert hopcroft_karp(g, capacity=c).size == m.size


def test_bad_capacities_refused():
    g = sp.csr_array(np.eye(3))
    for bad, match in (([1, -2, 1], "capacity must be >= 0, got -2"),
                       (np.array([2, -1, 1], dtype=np.int32), "capacity must be >= 0, got -1"),
                       ([1, 2], "capacity"), ([1.5, 1, 1], "capacity")):
        for method in ("auto", "pothen_fan"):
            with pytest.raises((ValueError, TypeError), match=match):
                hopcroft_karp(g, capacity=bad, method=method)
    with pytest.raises(ValueError, match="capacities other than 1"):
        hopcroft_karp(g, capacity=[2, 1, 1], method="push_relabel")


def test_kernel_refuses_arrays_it_cannot_read_raw():
    bk = _native.load("_bmatch")
    auto = bk.CONSTANTS["METHOD_AUTO"]
    ip, ix, cap = np.array([0, 1], np.int64), np.array([0], np.int32), np.array([2], np.int64)
    assert bk.solve(ip, ix, 1, cap, auto).size == 1
    assert bk.solve(ip, ix, 1, np.array([1]), auto) is None        # all ones: the unit path's
    with pytest.raises(TypeError, match="indptr"):
        bk.solve(ip.astype(np.int32), ix, 1, cap, auto)
    with pytest.raises(TypeError, match="indices"):
        bk.solve(np.array([0, 2], np.int64), ix, 1, cap, auto)      # indptr[-1] past the indices
    with pytest.raises(TypeError, match="indices"):
        bk.solve(ip, ix.astype(np.int16), 1, cap, auto)
    with pytest.raises(TypeError, match="capacity"):
        bk.solve(ip, ix, 1, np.array([2, 2]), auto)
    with pytest.raises(ValueError, match="method"):
        bk.solve(ip, ix, 1, cap, 7)


def test_kernel_gets_private_graph_copies(monkeypatch):
    """The general path hands ``solve`` private copies; the one-call path (plain CSR arrays)
    never calls it and solves on the copy its own validating pass makes, with the same answer."""
    from spare_core.graph import matching

    g, cap = families.make("redundancy", 3_000, seed=2)
    seen = []
    real = matching._bkern.solve

    def spy(indptr, indices, *args):
        seen.append(np.shares_memory(indptr, g.indptr) or np.shares_memory(indices, g.indices))
        return real(indptr, indices, *args)

    monkeypatch.setattr(matching._bkern, "solve", spy)
    one = hopcroft_karp(g, capacity=cap)
    one.vertex_cover()
    assert seen == []
    g.indices = g.indices.astype(np.int16)        # not a native index type: the general path
    gen = hopcroft_karp(g, capacity=cap)
    gen.vertex_cover()
    assert seen == [False]
    assert np.array_equal(one.match_left, gen.match_left) and (one.size, one.phases, one.method) == (
        gen.size, gen.phases, gen.method)


@pytest.mark.parametrize("method", ["auto", "pothen_fan"])
def test_writer_thread_during_b_matching_solves(method):
    """A thread rewriting the indices with out-of-range values during solves: each solve
    refuses the graph or returns the right size (a separate process: a crash fails)."""
    race(f'hopcroft_karp(g, capacity=cap, method="{method}")', ref=CAP_REF)
