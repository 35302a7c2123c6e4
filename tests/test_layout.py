import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spare_core.strategies.spare._difference_sets import bose_set, sidon_windows, singer_set
from spare_core.strategies.spare.layout import StackedLayout, difference_multiplicity, sidon_offsets


def shared_holders_brute(placement):
    """Largest number of groups two distinct types are both held by (pairs enumerated)."""
    n = placement.shape[0]
    sets = [set(np.flatnonzero((placement == t).any(axis=1))) for t in range(n)]
    return max((len(sets[a] & sets[b]) for a in range(n) for b in range(a + 1, n)), default=0)


def test_consecutive_rows_are_cyclic_rotations():
    lay = StackedLayout(7, 3)
    assert lay.kind == "consecutive" and lay.is_cyclic
    for g in range(7):
        assert lay.placement[g].tolist() == [g % 7, (g + 1) % 7, (g + 2) % 7]
    # every depth is a permutation of the types; every type has r holders
    for d in range(3):
        assert sorted(lay.placement[:, d].tolist()) == list(range(7))
    indptr, group, column = lay.holders()
    assert np.all(np.diff(indptr) == 3)
    for t in range(7):
        for g, j in zip(group[indptr[t] : indptr[t + 1]], column[indptr[t] : indptr[t + 1]]):
            assert lay.placement[g, j] == t


def test_placement_is_read_only_and_offsets_copied():
    off = np.array([0, 2, 5])
    lay = StackedLayout(9, 3, off)
    off[0] = 7
    assert lay.offsets.tolist() == [0, 2, 5]
    with pytest.raises(ValueError):
        lay.placement[0, 0] = 3


@given(st.integers(2, 30), st.data())
def test_shared_holders_matches_brute_force(n, data):
    r = data.draw(st.integers(1, n))
    off = data.draw(st.permutations(range(n)))[:r]
    lay = StackedLayout(n, r, off)
    assert lay.max_shared_holders == shared_holders_brute(lay.placement)
    custom = StackedLayout.from_placement(lay.placement[::-1])
    assert custom.kind == "custom" and not custom.is_cyclic
    assert custom.max_shared_holders == lay.max_shared_holders


@pytest.mark.parametrize("n,r", [(30, 5), (200, 10), (200, 13), (600, 14), (600, 20), (1000, 20)])
def test_sidon_offsets_are_sidon_where_found(n, r):
    off = sidon_offsets(n, r, seed=0)
    assert off.size == r and off[0] == 0 and np.unique(off).size == r
    assert difference_multiplicity(off, n) == 1
    lay = StackedLayout.sidon(n, r, seed=0)
    assert lay.max_shared_holders == 1
    if n <= 200:
        assert shared_holders_brute(lay.placement) == 1


def test_sidon_offsets_reproducible_and_best_effort_when_impossible():
    assert np.array_equal(sidon_offsets(100, 6, seed=3), sidon_offsets(100, 6, seed=3))
    # r (r - 1) > N - 1: no Sidon set exists; the result is still a valid offset set
    off = sidon_offsets(20, 8, seed=0, max_iter=50)
    assert np.unique(off).size == 8 and difference_multiplicity(off, 20) >= 2


def test_consecutive_multiplicity_is_r_minus_one():
    assert difference_multiplicity(np.arange(6), 50) == 5
    assert StackedLayout(50, 6).max_shared_holders == 5
    assert StackedLayout(5, 1).max_shared_holders == 0


@pytest.mark.parametrize(
    "args,exc,match",
    [
        ((5, 0), ValueError, "redundancy must be >= 1"),
        ((5, 6), ValueError, "redundancy must be <= n_groups"),
        ((0, 1), ValueError, "n_groups must be >= 1"),
        ((5.0, 2), TypeError, "n_groups must be an integer"),
        ((5, True), TypeError, "redundancy must be an integer"),
        ((5, 2, [0, 0]), ValueError, "offsets must be distinct"),
        ((5, 2, [0, 5]), ValueError, "offsets must be <= 4"),
        ((5, 2, [0, 1, 2]), ValueError, "offsets must have length 2"),
        ((5, 2, [0.0, 1.0]), TypeError, "offsets must hold integers"),
    ],
)
def test_bad_layout_arguments(args, exc, match):
    with pytest.raises(exc, match=match):
        StackedLayout(*args)


@pytest.mark.parametrize(
    "placement,exc,match",
    [
        ([[0, 1], [1, 1], [2, 0]], ValueError, "distinct shard types; group 1"),
        ([[0, 1], [1, 0], [0, 1]], ValueError, "type 2 is held by none"),
        ([[0, 3], [1, 2], [2, 0]], ValueError, r"shard types in \[0, 3\)"),
        ([[0, 1, 2, 0]], ValueError, "redundancy must be <= n_groups"),
        ([0, 1, 2], ValueError, "2-dimensional"),
        ([[0.5, 1], [1, 0]], TypeError, "must hold integers"),
    ],
)
def test_bad_custom_placement(placement, exc, match):
    with pytest.raises(exc, match=match):
        StackedLayout.from_placement(placement)


def test_custom_placement_copied_and_equality():
    p = np.array([[0, 1], [1, 2], [2, 0]], dtype=np.int32)
    lay = StackedLayout.from_placement(p)
    p[0, 0] = 2
    assert lay.placement[0].tolist() == [0, 1]
    assert lay == StackedLayout(3, 2)
    assert "custom" in repr(lay)


def _difference_counts_brute(base, m):
    counts = np.zeros(m, dtype=np.int64)
    for a in base.tolist():
        for b in base.tolist():
            if a != b:
                counts[(a - b) % m] += 1
    return counts


@pytest.mark.parametrize("q", [2, 3, 5, 7, 11, 13, 17])
def test_singer_sets_are_perfect_difference_sets(q):
    base, m = singer_set(q)
    assert m == q * q + q + 1 and base.size == q + 1 and np.unique(base).size == q + 1
    counts = _difference_counts_brute(base, m)
    assert counts[0] == 0 and np.all(counts[1:] == 1)  # every nonzero residue exactly once


@pytest.mark.parametrize("q", [3, 5, 7, 11, 13])
def test_bose_sets_are_sidon(q):
    base, m = bose_set(q)
    assert m == q * q - 1 and base.size == q
    counts = _difference_counts_brute(base, m)
    # q(q-1) differences, all distinct; the multiples of q+1 are never differences (Bose)
    assert counts.max() == 1 and counts.sum() == q * (q - 1)
    assert np.all(counts[:: q + 1] == 0)


@given(n=st.integers(13, 400), r=st.integers(3, 12))
def test_sidon_windows_are_sidon_mod_n(n, r):
    w = sidon_windows(n, r, limit=8)
    assert w.shape[1] == r and w.shape[0] <= 8
    for row in w:
        assert row[0] == 0 and np.all(np.diff(row) > 0) and row[-1] < n
        assert difference_multiplicity(row, n) == 1


def test_sidon_offsets_seed_picks_among_constructed_windows():
    picks = {tuple(sidon_offsets(600, 20, seed=s)) for s in range(6)}
    assert len(picks) > 1  # the seed matters
    assert all(difference_multiplicity(np.array(p), 600) == 1 for p in picks)
    with pytest.raises(ValueError, match="q must be prime"):
        singer_set(9)
