"""Regressions of issue 16 in spare_core.graph.matching: hand-built and edited matchings, the
graph fingerprint, threads."""
import threading

import numpy as np
import pytest
import scipy.sparse as sp

from spare_core.graph.matching import IncrementalMatching, Matching, hopcroft_karp


def _graph():
    return sp.csr_array(np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1]]))


def test_hand_built_matching_with_out_of_range_partner_is_refused():
    g = _graph()
    with pytest.raises(ValueError, match="match_left must be < n_right"):
        Matching([0, 7, -1], [1, 0, 0], [1, 1, 1], g.indptr, g.indices)
    with pytest.raises(ValueError, match="match_left must be >= -1"):
        Matching([0, -5, -1], [1, 0, 0], [1, 1, 1], g.indptr, g.indices)


def test_hand_built_matching_with_malformed_graph_is_refused():
    g = _graph()
    with pytest.raises(ValueError, match="column index must be < 3"):
        Matching([-1, -1, -1], [0, 0, 0], [1, 1, 1], g.indptr, np.array([0, 1, 0, 1, 9]))
    with pytest.raises(ValueError, match="indptr must have length"):
        Matching([-1, -1, -1], [0, 0, 0], [1, 1, 1], g.indptr[:-1], g.indices)
    with pytest.raises(ValueError, match="non-decreasing"):
        Matching([-1, -1, -1], [0, 0, 0], [1, 1, 1], np.array([0, 3, 1, 5]), g.indices)
    with pytest.raises(ValueError, match="right_load must count"):
        Matching([0, -1, -1], [0, 0, 0], [1, 1, 1], g.indptr, g.indices)


def test_hand_built_matching_keeps_private_copies_of_the_graph():
    g = _graph()
    ptr, idx = g.indptr.copy(), g.indices.copy()
    m = Matching([0, -1, 1], [1, 1, 0], [1, 1, 1], ptr, idx)
    idx[:] = 99                      # the caller's arrays change; the matching's do not
    left, right = m.vertex_cover()
    assert left.shape == (3,) and right.shape == (3,)


def test_edited_match_left_used_as_warm_start_is_refused():
    g = _graph()
    m = hopcroft_karp(g)
    m.match_left.flags.writeable = True
    m.match_left[0] = 10**6
    with pytest.raises(ValueError, match="warm_start.match_left must lie in"):
        hopcroft_karp(g, warm_start=m)


def test_edited_match_left_in_vertex_cover_is_refused():
    g = _graph()
    m = hopcroft_karp(g)
    m.match_left.flags.writeable = True
    m.match_left[1] = -(2**40)
    with pytest.raises(ValueError, match="match_left must lie in"):
        m.vertex_cover()


def test_fingerprint_sees_a_weighted_sum_collision():
    g = sp.csr_array(np.ones((2, 8)))          # indices 0..7 twice; entry e has weight 2e + 3
    assert threading.active_count() == 1       # else the solve keeps private copies (see below)
    m = hopcroft_karp(g)
    g.indices[0] += 5                          # +5 * 3
    g.indices[6] -= 1                          # -1 * 15: the old fingerprint did not move
    with pytest.raises(ValueError, match="modified after the matching was computed"):
        m.vertex_cover()


def test_solve_with_other_threads_running_reads_private_copies():
    g = sp.csr_array(np.eye(50))
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        m = hopcroft_karp(g)
    finally:
        stop.set()
        t.join()
    assert m.size == 50
    g.indices[:] = 0                 # the matching did not keep the caller's arrays
    left, right = m.vertex_cover()
    assert int(left.sum() + right.sum()) == 50


def test_incremental_matching_snapshot_still_certifies():
    im = IncrementalMatching(_graph())
    im.disable_edge(0, 0)
    im.augment()
    snap = im.matching
    left, right = snap.vertex_cover()
    assert int(left.sum() + snap.capacity[right].sum()) == snap.size
