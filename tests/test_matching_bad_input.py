"""Bad input to spare_core.graph.matching raises TypeError/ValueError naming the problem, never crashes."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from spare_core.graph.matching import IncrementalMatching, hopcroft_karp


def good():
    return sp.csr_array(np.array([[1, 1, 0], [0, 1, 1]]))


@pytest.mark.parametrize("graph", [np.eye(3), [[1, 0], [0, 1]], None, "graph"])
def test_graph_must_be_sparse(graph):
    with pytest.raises(TypeError, match="scipy.sparse"):
        hopcroft_karp(graph)
    with pytest.raises(TypeError, match="scipy.sparse"):
        IncrementalMatching(graph)


def csr_raw(indices, indptr, shape):
    g = good().copy()
    g._shape = shape
    g.indices = np.asarray(indices)
    g.indptr = np.asarray(indptr)
    g.data = np.ones(len(g.indices))
    return g


@pytest.mark.parametrize(
    "indices, indptr, shape, msg",
    [
        ([0, 5], [0, 1, 2], (2, 3), "column index must be < 3"),
        ([0, -1], [0, 1, 2], (2, 3), "must be non-negative"),
        ([0, 1], [0, 2, 1], (2, 3), "non-decreasing"),
        ([0, 1], [1, 1, 2], (2, 3), "start at 0"),
        ([0, 1], [0, 1, 5], (2, 3), "only 2 indices"),
        ([0, 1], [0, 1], (2, 3), "indptr must have length 3"),
        (np.array([0.0, 1.0]), [0, 1, 2], (2, 3), "must hold integers"),
    ],
)
def test_malformed_csr(indices, indptr, shape, msg):
    g = csr_raw(indices, indptr, shape)
    with pytest.raises((TypeError, ValueError), match=msg):
        hopcroft_karp(g)
    with pytest.raises((TypeError, ValueError), match=msg):
        IncrementalMatching(g)


def test_malformed_csc_and_coo():
    csc = sp.csc_array(good())
    csc.indices = np.array([0, 7, 1, 1], dtype=np.int32)
    with pytest.raises(ValueError, match="row index must be < 2"):
        hopcroft_karp(csc)
    coo = sp.coo_array(good())
    coo.col = coo.col.copy()
    coo.col[0] = -3
    with pytest.raises(ValueError, match="non-negative"):
        hopcroft_karp(coo)


@pytest.mark.parametrize(
    "capacity, exc, msg",
    [
        ([1, 1], ValueError, "length 3"),
        ([1, -1, 1], ValueError, ">= 0"),
        (np.array([1, -1, 1], dtype=np.int32), ValueError, ">= 0"),     # the C fast path
        (np.array([1, 1, -5], dtype=np.int64), ValueError, ">= 0, got -5"),
        (np.array([1, 1, 1, 1], dtype=np.int64)[::2], ValueError, "length 3"),
        (np.array([1, 1, 1, 1, 1, 1], dtype=np.int64)[::2], None, None),  # strided: the generic path
        ([1.0, 1.0, 1.0], TypeError, "integers"),
        ([True, False, True], TypeError, "integers"),
        ([[1, 1, 1]], ValueError, "1-dimensional"),
        (["a", "b", "c"], TypeError, "integers"),
    ],
)
def test_bad_capacity(capacity, exc, msg):
    if exc is None:
        assert hopcroft_karp(good(), capacity=capacity).size >= 0
        return
    with pytest.raises(exc, match=msg):
        hopcroft_karp(good(), capacity=capacity)
    with pytest.raises(exc, match=msg):
        IncrementalMatching(good(), capacity=capacity)


@pytest.mark.parametrize(
    "warm, exc, msg",
    [
        ([0], ValueError, "length 2"),
        ([0, 3], ValueError, "<= 2"),
        ([-2, 0], ValueError, ">= -1"),
        ([0.0, 1.0], TypeError, "integers"),
    ],
)
def test_bad_warm_start(warm, exc, msg):
    with pytest.raises(exc, match=msg):
        hopcroft_karp(good(), warm_start=warm)


def test_warm_start_from_another_graph_shape():
    other = hopcroft_karp(sp.csr_array(np.eye(4)))
    with pytest.raises(ValueError, match="warm_start is a matching of a"):
        hopcroft_karp(good(), warm_start=other)
    with pytest.raises(TypeError, match="warm_start"):
        hopcroft_karp(good(), warm_start=IncrementalMatching(good()))


def test_warm_start_pointing_at_non_edges_is_dropped_not_trusted():
    # left 0 is not adjacent to right 2: that pair is stale and must not be kept
    m = hopcroft_karp(good(), warm_start=[2, 2])
    assert m.warm_kept == 1 and m.size == 2
    assert m.match_left[0] in (0, 1)


def test_incremental_bad_indices():
    im = IncrementalMatching(good())
    for bad, exc in ((3, ValueError), (-1, ValueError), (1.0, TypeError), (True, TypeError), ("0", TypeError)):
        with pytest.raises(exc):
            im.disable_right(bad)
        with pytest.raises(exc):
            im.enable_right(bad)
        with pytest.raises(exc):
            im.set_capacity(bad, 1)
    with pytest.raises(ValueError, match=">= 0"):
        im.set_capacity(0, -1)
    with pytest.raises(TypeError):
        im.set_capacity(0, 1.5)
    with pytest.raises(ValueError, match="length 3"):
        im.set_capacities([1, 1])
    with pytest.raises(ValueError, match=">= 0"):
        im.set_capacities(-2)
    with pytest.raises(ValueError, match="not an edge"):
        im.disable_edge(0, 2)
    with pytest.raises(ValueError, match="i must be <= 1"):
        im.disable_edge(2, 0)
    assert im.augment() == 2  # the failed calls changed nothing


def test_empty_sides():
    for shape in ((0, 0), (0, 4), (4, 0)):
        g = sp.csr_array(shape)
        m = hopcroft_karp(g)
        assert m.size == 0 and m.match_left.shape == (shape[0],)
        im = IncrementalMatching(g)
        assert im.augment() == 0
        if shape[1] == 0:
            with pytest.raises(ValueError, match="no right vertices"):
                im.disable_right(0)


@pytest.mark.parametrize("ptr_t", [np.int32, np.int64])
@pytest.mark.parametrize("capacity", [None, []])
def test_a_negative_end_of_indptr_over_no_indices_is_a_decreasing_indptr(ptr_t, capacity):
    # the validating pass once took the address of indices[0] for any nonzero end, so an
    # empty indices array with indptr = [0, -5] was an out-of-bounds access (caught by the
    # bounds-checked debug build of .ci/run)
    g = sp.csr_array((1, 0))
    g.indptr = np.array([0, np.iinfo(ptr_t).min], ptr_t)
    with pytest.raises(ValueError, match="graph indptr must be non-decreasing"):
        hopcroft_karp(g, capacity=capacity)
