"""The one-call path of hopcroft_karp (``_transversal.solve_csr``: validating copy, fingerprint,
solve and result in one C call) and the greedy pass's repair from a few free right vertices
(``method == "greedy_repair"``): same checks, same messages, same fingerprint and maximum
matchings with their certificates as the general path."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core.graph import matching
from spare_core.graph.matching import hopcroft_karp

from bench import families
from tests.test_matching_methods import check, scipy_size

INDEX_TYPES = [(p, x) for p in (np.int32, np.int64) for x in (np.int32, np.int64)]


def _one_call(indptr, indices, n_left, n_right, method="auto"):
    return matching._tkern.solve_csr(indptr, indices, n_left, n_right, *matching._T_ONE_CALL[method],
                                     matching._SIDE_PROBE, matching._RIGHT_SIDE_RATIO, matching._PF_MAX_EDGES)


@pytest.mark.parametrize("ptr_t, idx_t", INDEX_TYPES)
@pytest.mark.parametrize("name, nnz", [("uniform5", 1_000), ("blocks", 10_000), ("rect", 3_000)])
def test_fingerprint_and_answer_are_those_of_the_two_step_path(name, nnz, ptr_t, idx_t):
    """vertex_cover() re-checks the caller's arrays with _hk.csr_checked: the fingerprint the
    one call takes must be that one, on every combination of index types."""
    g, _ = families.make(name, nnz)
    ip, ix = g.indptr.astype(ptr_t), g.indices.astype(idx_t)
    got = _one_call(ip, ix, *g.shape)
    _, _, fp = matching._kern.csr_checked(ip, ix, g.shape[1], True)
    assert got.fingerprint == fp
    p64, x32, _ = matching._kern.csr_checked(ip, ix, g.shape[1], True)
    ref = matching._tkern.solve(p64, x32, g.shape[1], *matching._T_ONE_CALL["auto"], matching._SIDE_PROBE,
                                matching._RIGHT_SIDE_RATIO, matching._PF_MAX_EDGES)
    assert ref.fingerprint is None
    assert np.array_equal(got.match_left, ref.match_left) and np.array_equal(got.right_load, ref.right_load)
    fields = ("size", "phases", "work", "from_right", "method")
    assert [getattr(got, f) for f in fields] == [getattr(ref, f) for f in fields]
    assert not got.match_left.flags.writeable and not got.right_load.flags.writeable


def test_extra_stored_indices_are_neither_checked_nor_hashed():
    # scipy's convention: only indices[:indptr[-1]] are the graph
    ip = np.array([0, 1, 2], dtype=np.int32)
    ix = np.array([0, 1, -5, 99], dtype=np.int32)
    got = _one_call(ip, ix, 2, 2)
    assert got.size == 2 and got.fingerprint == matching._kern.csr_checked(ip, ix, 2, True)[2]


def _message(fn):
    try:
        fn()
    except ValueError as err:
        return str(err)
    return None


#: the malformed 3 x 3 graphs of the message tests
MALFORMED = ["start", "decreasing", "short", "negative", "large", "huge"]


def _malformed(edit, ptr_t, idx_t):
    """A 3 x 3 CSR graph (indptr, indices) broken in one way."""
    ip = np.array([0, 2, 3, 5], dtype=ptr_t)
    ix = np.array([0, 1, 1, 0, 2], dtype=idx_t)
    if edit == "start":
        ip[0] = 1
    elif edit == "decreasing":
        ip[2] = 1
    elif edit == "short":
        ix = ix[:4]
    elif edit == "negative":
        ix[3] = -7
    elif edit == "large":
        ix[2] = 3
    elif idx_t is np.int64:     # "huge": above 2**31, whose int32 truncation is in range
        ix[4] = 2**32 + 1
    else:
        ix[4] = np.iinfo(np.int32).max
    return ip, ix


@pytest.mark.parametrize("ptr_t, idx_t", INDEX_TYPES)
@pytest.mark.parametrize("edit", MALFORMED)
def test_malformed_graphs_get_the_checks_messages(edit, ptr_t, idx_t):
    ip, ix = _malformed(edit, ptr_t, idx_t)
    want = _message(lambda: matching._kern.csr_checked(ip, ix, 3, True))
    assert want is not None
    assert _message(lambda: _one_call(ip, ix, 3, 3)) == want
    g = sp.csr_array((3, 3))
    g.indptr, g.indices, g.data = ip, ix, np.ones(ix.shape[0])
    assert _message(lambda: hopcroft_karp(g)) == want


def test_not_plain_arrays_are_left_to_the_general_path():
    ip = np.array([0, 1, 2], dtype=np.int64)
    ix = np.array([1, 0], dtype=np.int32)
    assert _one_call(ip, ix[::-1].copy()[::-1], 2, 2) is None          # not contiguous
    assert _one_call(ip, ix.astype(np.uint32), 2, 2) is None           # unsigned
    assert _one_call(ip, ix.astype(">i4"), 2, 2) is None               # byte-swapped
    assert _one_call(ip[:2], ix, 2, 2) is None                         # indptr length
    assert _one_call(ip, ix, 2, 2**31) is None                         # too many vertices
    g = sp.csr_array((np.ones(2), ix.astype(">i4"), ip), shape=(2, 2))
    assert hopcroft_karp(g).size == 2


def test_results_are_read_only_and_capacity_cannot_be_made_writeable():
    g, _ = families.make("uniform5", 1_000)
    m = hopcroft_karp(g)
    for arr in (m.match_left, m.right_load, m.capacity):
        assert not arr.flags.writeable
    with pytest.raises(ValueError):
        m.capacity.flags.writeable = True
    assert np.array_equal(m.capacity, np.ones(g.shape[1]))
    assert hopcroft_karp(sp.csr_array((2, 5))).capacity.shape == (5,)


# -- the repair of a greedy pass that left a few right vertices free -----------------------------

def _padded(rows, cols, n_left, n_right, pad=2_000):
    """A gadget plus ``pad`` isolated edges (left n_left + k -- right n_right + k): the greedy
    matches the padding, so the gadget's free right vertices are a tiny fraction of all."""
    k = np.arange(pad)
    r = np.concatenate([np.asarray(rows, dtype=np.int64), n_left + k])
    c = np.concatenate([np.asarray(cols, dtype=np.int64), n_right + k])
    return sp.csr_array((np.ones(r.size), (r, c)), shape=(n_left + pad, n_right + pad))


def test_repair_finds_a_path_of_length_three():
    # left 0 -- {0, 1}, left 1 -- {0}: the greedy takes (0, 0) and leaves right 1 and left 1
    # free; right 1 - left 0 - right 0 - left 1 is the augmenting path
    g = _padded([0, 0, 1], [0, 1, 0], 2, 2)
    m = hopcroft_karp(g)
    assert (m.method, m.searched_from, m.size, m.phases) == ("greedy_repair", "right", 2002, 1)
    check(m, g)


def test_repair_proves_maximum_when_the_layers_stop_growing():
    # left 0 -- {0, 1}, left 1 -- {2}, left 2 -- {2}: right 1 stays free, and no alternating
    # path from it reaches the free left 2
    g = _padded([0, 0, 1, 2], [0, 1, 2, 2], 3, 3)
    m = hopcroft_karp(g)
    assert (m.method, m.size) == ("greedy_repair", 2002)
    assert m.size == scipy_size(g)
    check(m, g)


def test_repair_gives_up_on_long_paths_and_the_search_finishes():
    # a staircase: left i -- {i, i + 1} (i < 10), left 10 -- {0}; the greedy leaves right 10
    # free and the only augmenting path has 21 edges, more layers than the repair's passes
    k = 10
    rows = [i for i in range(k) for _ in range(2)] + [k]
    cols = [c for i in range(k) for c in (i, i + 1)] + [0]
    g = _padded(rows, cols, k + 1, k + 1)
    m = hopcroft_karp(g)
    assert m.method not in ("greedy", "greedy_repair")
    assert m.size == scipy_size(g) == 2000 + k + 1
    check(m, g)


def test_repair_is_gated_to_a_few_free_right_vertices():
    # the same gadget as above with little padding: too many free right vertices for it
    g = _padded([0, 0, 1], [0, 1, 0], 2, 2, pad=100)
    assert hopcroft_karp(g).method != "greedy_repair"


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 14), density=st.floats(0.1, 0.6))
def test_repair_against_scipy_on_random_gadgets(seed, n, density):
    """Random small gadgets, padded, rows and columns shuffled: whatever auto runs, the size is
    scipy's and the certificate holds; the repair's own result is checked the same way."""
    rng = np.random.default_rng(seed)
    a = rng.random((n + 1, n)) < density
    rows, cols = np.nonzero(a)
    g = _padded(rows, cols, n + 1, n)
    pr, pc = rng.permutation(g.shape[0]), rng.permutation(g.shape[1])
    g = sp.csr_array(g[pr][:, pc])
    m = hopcroft_karp(g)
    assert m.size == int(np.count_nonzero(maximum_bipartite_matching(g, perm_type="column") >= 0))
    check(m, g)


def test_blocks_at_a_million_edges_is_repaired_not_transposed():
    """The case the repair is for (docs/matching.md): one right vertex left free of 41,646."""
    g, _ = families.make("blocks", 1_000_000)
    m = hopcroft_karp(g)
    assert (m.method, m.searched_from) == ("greedy_repair", "right")
    assert m.size == scipy_size(g)


# -- the one-call path for b-matchings (_bmatch.solve_csr) --------------------------------------

def _b_one_call(indptr, indices, n_left, n_right, cap, method="auto"):
    return matching._bkern.solve_csr(indptr, indices, n_left, n_right, cap, matching._B_METHOD[method])


@pytest.mark.parametrize("ptr_t, idx_t", INDEX_TYPES)
@pytest.mark.parametrize("cap_t", [np.int32, np.int64])
@pytest.mark.parametrize("name, nnz", [("redundancy", 1_000), ("redundancy", 10_000), ("hard", 3_000)])
def test_b_one_call_fingerprint_and_answer_are_those_of_the_two_step_path(name, nnz, ptr_t, idx_t, cap_t):
    g, cap = families.make(name, nnz)
    if cap is None:
        cap = np.random.default_rng(3).integers(0, 3, g.shape[1])
    cap = cap.astype(cap_t)
    ip, ix = g.indptr.astype(ptr_t), g.indices.astype(idx_t)
    for method in ("auto", "pothen_fan"):
        got = _b_one_call(ip, ix, *g.shape, cap, method)
        p64, x32, fp = matching._kern.csr_checked(ip, ix, g.shape[1], True)
        assert got.fingerprint == fp
        ref = matching._bkern.solve(p64, x32, g.shape[1], cap, matching._B_METHOD[method])
        arrays = ("match_left", "right_load", "capacity")
        assert ref.fingerprint is None
        assert all(np.array_equal(getattr(got, a), getattr(ref, a)) for a in arrays)
        assert (got.size, got.phases, got.method) == (ref.size, ref.phases, ref.method)
        assert not any(getattr(got, a).flags.writeable for a in arrays)
        assert got.capacity.dtype == np.int64 and not np.shares_memory(got.capacity, cap)


@pytest.mark.parametrize("ptr_t, idx_t", INDEX_TYPES)
@pytest.mark.parametrize("edit", MALFORMED)
def test_b_one_call_malformed_graphs_get_the_checks_messages_before_the_capacities(edit, ptr_t, idx_t):
    """Same messages as _hk.csr_checked; a graph error wins over a capacity error, as in the
    general path (which validates the graph first)."""
    ip, ix = _malformed(edit, ptr_t, idx_t)
    want = _message(lambda: matching._kern.csr_checked(ip, ix, 3, True))
    assert want is not None
    g = sp.csr_array((3, 3))
    g.indptr, g.indices, g.data = ip, ix, np.ones(ix.shape[0])
    for cap in (np.array([2, 1, 0]), np.array([2, -1, 0], dtype=np.int32)):
        assert _message(lambda: _b_one_call(ip, ix, 3, 3, cap)) == want
        for method in ("auto", "pothen_fan"):
            assert _message(lambda: hopcroft_karp(g, capacity=cap, method=method)) == want
            with pytest.raises(ValueError, match="graph"):    # the general path: the same order
                hopcroft_karp(g, capacity=cap.tolist(), method=method)


def test_b_one_call_capacity_errors_and_the_unit_and_general_handoffs():
    g = sp.csr_array(np.eye(3))
    ip, ix = g.indptr, g.indices
    with pytest.raises(ValueError, match=r"^capacity must be >= 0, got -4$"):
        _b_one_call(ip, ix, 3, 3, np.array([2, -4, -1]))
    # every capacity 1: only the capacities are read (1), the unit path takes the graph
    assert _b_one_call(ip, ix, 3, 3, np.ones(3, dtype=np.int32)) == 1
    assert _b_one_call(np.array([5, 0, 0, 0]), ix, 3, 3, np.ones(3)) is None     # float capacities
    assert _b_one_call(np.array([5, 0, 0, 0]), ix, 3, 3, np.ones(3, dtype=np.int64)) == 1
    cap = np.array([2, 1, 1])
    assert _b_one_call(ip, ix, 3, 3, cap[::-1].copy()[::-1]) is None              # not contiguous
    assert _b_one_call(ip, ix, 3, 3, cap.astype(">i8")) is None                    # byte-swapped
    assert _b_one_call(ip, ix, 3, 3, cap[:2]) is None                              # length
    assert _b_one_call(ip, ix.astype(np.uint32), 3, 3, cap) is None
    assert _b_one_call(ip, ix, 3, 2**31, cap) is None
    with pytest.raises(ValueError, match="method"):
        matching._bkern.solve_csr(ip, ix, 3, 3, cap, 7)
    m = hopcroft_karp(g, capacity=np.ones(3, dtype=np.int64))
    assert m.method == hopcroft_karp(g).method and m.capacity.strides == (0,)
    for c in (cap, cap.astype(">i8"), cap.tolist()):
        m = hopcroft_karp(g, capacity=c)
        assert (m.size, m.method, m.capacity.tolist()) == (3, "greedy", [2, 1, 1])


def test_b_one_call_result_is_checked_against_later_edits():
    """The Matching keeps the caller's arrays and the one call's fingerprint: an edit after the
    solve is refused by vertex_cover, as on the unit-capacity path."""
    g, cap = families.make("redundancy", 1_000)
    m = hopcroft_karp(g, capacity=cap)
    assert m._fp is not None and np.shares_memory(m._indices, g.indices)
    m.vertex_cover()
    g.indices[[0, 1]] = g.indices[[1, 0]]
    with pytest.raises(ValueError, match="modified"):
        m.vertex_cover()


_EDGES = [-(2**63), -(2**31) - 1, -(2**31), -1, 2**31 - 1, 2**31, 2**32 + 1, 2**63 - 1]


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nl=st.integers(0, 6), nr=st.integers(0, 6),
       edit=st.sampled_from(["none", "ptr", "idx", "short", "long"]), pos=st.integers(0, 40),
       value=st.sampled_from(_EDGES + [0, 1, 3, 6, 7]), ptr_t=st.sampled_from([np.int32, np.int64]),
       idx_t=st.sampled_from([np.int32, np.int64]), cap_t=st.sampled_from([np.int32, np.int64]),
       neg=st.booleans(), method=st.sampled_from(["auto", "pothen_fan"]))
def test_b_one_call_agrees_with_the_general_path_on_edited_graphs(seed, nl, nr, edit, pos, value, ptr_t, idx_t,
                                                                   cap_t, neg, method):
    """Random small graphs with one entry of indptr or indices edited (int32/int64 edge values
    included), or a list too short or long: the one call (plain arrays) and the general path
    (the capacities as a list) raise the same message or return the same matching."""
    rng = np.random.default_rng(seed)
    g = sp.csr_array(rng.random((nl, nr)) < 0.5) if nl and nr else sp.csr_array((nl, nr))
    ip, ix = g.indptr.astype(np.int64), g.indices.astype(np.int64)
    if edit == "ptr":
        ip[pos % ip.size] = value
    elif edit == "idx" and ix.size:
        ix[pos % ix.size] = value
    elif edit == "short" and ix.size:
        ix = ix[:-1]
    elif edit == "long":
        ix = np.append(ix, value)
    if np.iinfo(ptr_t).min <= ip.min() and ip.max() <= np.iinfo(ptr_t).max:
        ip = ip.astype(ptr_t)
    if ix.size == 0 or (np.iinfo(idx_t).min <= ix.min() and ix.max() <= np.iinfo(idx_t).max):
        ix = ix.astype(idx_t)
    g.indptr, g.indices = ip, ix
    cap = rng.integers(0, 4, nr).astype(cap_t)
    if neg and nr:
        cap[pos % nr] = -1 - pos
    before = (ip.copy(), ix.copy(), cap.copy())
    one = _message(lambda: hopcroft_karp(g, capacity=cap, method=method))
    gen = _message(lambda: hopcroft_karp(g, capacity=cap.tolist(), method=method))
    if one is not None and "capacity" in one and gen is not None and "capacity" in gen:
        pass    # both refuse the capacity: the general path's list message words it its own way
    else:
        assert one == gen
    if one is None:
        a = hopcroft_karp(g, capacity=cap, method=method)
        b = hopcroft_karp(g, capacity=cap.tolist(), method=method)
        assert np.array_equal(a.match_left, b.match_left) and (a.size, a.method) == (b.size, b.method)
        check_b = a.vertex_cover()
        assert int(check_b[0].sum()) + int(a.capacity[check_b[1]].sum()) == a.size
    assert all(np.array_equal(x, y) for x, y in zip((g.indptr, g.indices, cap), before))
