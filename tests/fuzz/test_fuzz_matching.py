"""Fuzz: spare_core.graph.matching (hopcroft_karp, Matching, IncrementalMatching).

Well-formed graphs in any disguise must give a maximum matching (scipy's
maximum_bipartite_matching is the oracle) and leave the caller's arrays alone; malformed
CSR structures, hand-built or edited Matching objects and bad warm starts must raise one
clean error. Every call runs in a forked child (fuzz_isolate.run_isolated).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from fuzz_arrays import INT64_EDGES, disguise, snapshot, unchanged
from fuzz_isolate import run_isolated
from fuzz_profile import fuzz
from spare_core.graph.matching import METHODS, IncrementalMatching, Matching, hopcroft_karp


@st.composite
def graphs(draw, max_n=12):
    nl = draw(st.integers(0, max_n))
    nr = draw(st.integers(0, max_n))
    k = draw(st.integers(0, 3 * max_n)) if nl and nr else 0
    rows = np.array(draw(st.lists(st.integers(0, nl - 1), min_size=k, max_size=k)) if k else [], dtype=np.int64)
    cols = np.array(draw(st.lists(st.integers(0, nr - 1), min_size=k, max_size=k)) if k else [], dtype=np.int64)
    fmt = draw(st.sampled_from(["csr", "csc", "coo", "lil", "dok"]))
    g = sp.coo_array((np.ones(k), (rows, cols)), shape=(nl, nr)).asformat(fmt)
    return g, nl, nr, rows, cols


def oracle_size(nl, nr, rows, cols):
    if nl == 0 or nr == 0 or rows.size == 0:
        return 0
    g = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(nl, nr))
    g.sum_duplicates()
    return int((maximum_bipartite_matching(g, perm_type="column") >= 0).sum())


def _solve_and_certify(g, warm=None, method="auto"):
    m = hopcroft_karp(g, warm_start=warm, method=method)
    left, right = m.vertex_cover()
    return m.size, int(left.sum() + m.capacity[right].sum()), m.match_left.copy()


@fuzz(1.5)
@given(graphs(), st.sampled_from(sorted(METHODS)))
def test_valid_graphs_in_any_format_are_solved_exactly(gr, method):
    g, nl, nr, rows, cols = gr
    out = run_isolated(_solve_and_certify, g, None, method, case=f"hopcroft_karp({g.format} {nl}x{nr}, {method})")
    out.check_clean("hopcroft_karp")
    assert out.ok
    size, cover, ml = out.value
    assert size == cover == oracle_size(nl, nr, rows, cols)


@st.composite
def malformed_csr(draw):
    """A valid CSR matrix whose index arrays are then replaced by hand (scipy does not
    re-check them): wrong lengths, out-of-range or negative entries, decreasing indptr,
    int64 edge values, odd dtypes, strides, byte order, read-only arrays."""
    nl = draw(st.integers(0, 6))
    nr = draw(st.integers(0, 6))
    g = sp.random_array((nl, nr), density=0.5, format="csr", random_state=draw(st.integers(0, 99))) \
        if nl and nr else sp.csr_array((nl, nr))
    indptr, indices = g.indptr.astype(np.int64), g.indices.astype(np.int64)
    what = draw(st.sampled_from(["ptr_value", "idx_value", "ptr_len", "idx_short", "disguise", "none"]))
    if what == "ptr_value" and indptr.size:
        indptr[draw(st.integers(0, indptr.size - 1))] = draw(st.sampled_from(INT64_EDGES))
    elif what == "idx_value" and indices.size:
        indices[draw(st.integers(0, indices.size - 1))] = draw(st.sampled_from(INT64_EDGES + [nr, -1]))
    elif what == "ptr_len":
        indptr = indptr[: draw(st.integers(0, indptr.size))] if draw(st.booleans()) else np.append(indptr, indptr[-1:])
    elif what == "idx_short" and indices.size:
        indices = indices[:-1]
    g.indptr = draw(disguise(indptr))
    g.indices = draw(disguise(indices))
    return g


def _valid_structure(g):
    try:
        ptr = np.asarray(g.indptr)
        idx = np.asarray(g.indices)
    except Exception:
        return False
    if ptr.dtype.kind not in "iu" or idx.dtype.kind not in "iu" or ptr.ndim != 1 or idx.ndim != 1:
        return False
    nl, nr = g.shape
    # compare neighbours, not np.diff: the difference of int64 edge values wraps around
    if ptr.shape[0] != nl + 1 or ptr[0] != 0 or np.any(ptr[1:] < ptr[:-1]):
        return False
    if int(ptr[-1]) > idx.shape[0]:
        return False
    used = idx[: int(ptr[-1])].astype(np.int64)
    return bool(used.size == 0 or (used.min() >= 0 and used.max() < nr))


@fuzz(1.5)
@given(malformed_csr(), st.sampled_from(sorted(METHODS)))
def test_malformed_csr_raises_one_clean_error_or_is_solved_exactly(g, method):
    snap = snapshot(g.indptr, g.indices)
    out = run_isolated(_solve_and_certify, g, None, method, case=f"hopcroft_karp(malformed csr, {method})")
    out.check_clean("hopcroft_karp(malformed csr)")
    if _valid_structure(g):
        assert out.ok, out.message
        size, cover, _ = out.value
        assert size == cover
    else:
        assert not out.ok, "a malformed CSR structure was accepted"
    assert unchanged(snap)


def _hand_built(ml, load, cap, ptr, idx, warm_graph):
    m = Matching(ml, load, cap, ptr, idx)
    m.vertex_cover()
    if warm_graph is not None:
        hopcroft_karp(warm_graph, warm_start=m)
    return m.size


@fuzz(1.5)
@given(st.integers(0, 5), st.integers(0, 5), st.data())
def test_hand_built_matchings_are_validated(nl, nr, data):
    ints = st.sampled_from(INT64_EDGES + [-2, -1, 0, 1, nr, nr - 1])
    ml = np.array(data.draw(st.lists(ints, min_size=nl, max_size=nl)), dtype=np.int64)
    load = np.array(data.draw(st.lists(st.integers(-1, 3), min_size=nr, max_size=nr)), dtype=np.int64)
    cap = np.array(data.draw(st.lists(ints, min_size=nr, max_size=nr)), dtype=np.int64)
    ptr = np.array(data.draw(st.lists(st.integers(-1, 8), min_size=max(nl + data.draw(st.integers(-1, 1)), 0),
                                      max_size=max(nl + 1, 0) + 1)), dtype=np.int64)
    idx = np.array(data.draw(st.lists(ints, max_size=8)), dtype=np.int64)
    g = sp.csr_array(np.ones((nl, nr))) if data.draw(st.booleans()) else None
    out = run_isolated(_hand_built, ml, load, cap, ptr, idx, g, case="Matching(...) by hand")
    out.check_clean("Matching(...) by hand")


def _edited(g, pos, value, use):
    m = hopcroft_karp(g)
    m.match_left.flags.writeable = True   # what a determined user can do
    m.match_left[pos] = value
    if use == "cover":
        m.vertex_cover()
    else:
        hopcroft_karp(g, warm_start=m)
    return True


@fuzz(1.0)
@given(st.integers(1, 6), st.integers(1, 6), st.data())
def test_edited_result_arrays_never_read_out_of_bounds(nl, nr, data):
    g = sp.csr_array(np.ones((nl, nr)))
    pos = data.draw(st.integers(0, nl - 1))
    value = data.draw(st.sampled_from(INT64_EDGES + [nr, -2, nr + 100]))
    use = data.draw(st.sampled_from(["cover", "warm"]))
    out = run_isolated(_edited, g, pos, value, use, case=f"edited match_left -> {use}")
    out.check_clean("edited match_left")
    if not -1 <= value < nr:
        assert not out.ok


def _incremental(g, ops):
    im = IncrementalMatching(g)
    for op, a, b in ops:
        getattr(im, op)(*((a,) if op in ("disable_right", "enable_right") else (a, b)))
        im.augment()
    left, right = im.matching.vertex_cover()
    return im.size, int(left.sum() + im.capacity[right].sum())


@fuzz(1.0)
@given(graphs(max_n=8), st.lists(st.tuples(
    st.sampled_from(["disable_right", "enable_right", "set_capacity", "disable_edge", "enable_edge"]),
    st.one_of(st.integers(-2, 9), st.sampled_from([2**63 - 1, -(2**63), 1.5, "1", None, np.int8(1)])),
    st.one_of(st.integers(-2, 9), st.sampled_from([2**62 + 1, 2**63, np.uint64(3), 2.0]))), max_size=12))
def test_incremental_operations_with_bad_arguments(gr, ops):
    g = gr[0]
    out = run_isolated(_incremental, g, ops, case="IncrementalMatching ops")
    out.check_clean("IncrementalMatching ops")
    if out.ok:
        size, cover = out.value
        assert size == cover


@pytest.mark.parametrize("cap", [[-1], [2**63 - 1], [1.5], ["1"], [[1]], [True], np.array([1], ">i8")])
def test_capacity_edge_values(cap):
    g = sp.csr_array(np.ones((2, 1)))
    out = run_isolated(lambda: hopcroft_karp(g, capacity=cap).size, case=f"capacity={cap!r}")
    out.check_clean("capacity")
