"""Rack-aware StackedLayout placements and the FailureDomains map they read."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.strategies.spare.layout import StackedLayout, difference_multiplicity, sidon_offsets
from spare_core.topology import FailureDomains


def holder_domain_counts(placement, labels):
    """counts[t, d]: holders of type t in domain d, by a loop over the placement."""
    n = placement.shape[0]
    counts = np.zeros((n, labels.max() + 1), dtype=int)
    for g in range(n):
        for t in placement[g]:
            counts[t, labels[g]] += 1
    return counts


@st.composite
def nested_domains(draw, max_groups=60):
    """1-3 nested levels: each finer domain splits one coarser domain (random sizes)."""
    n = draw(st.integers(1, max_groups))
    n_levels = draw(st.integers(1, 3))
    coarse = np.sort(np.array(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))))
    levels = [coarse]
    for _ in range(n_levels - 1):
        split = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
        levels.append(levels[-1] * 4 + split)  # nested by construction, finer domains not contiguous
    perm = np.array(draw(st.permutations(range(n))))  # groups in any physical order
    return FailureDomains(np.stack(levels)[:, perm])


@settings(max_examples=150, deadline=None)
@given(nested_domains(), st.data())
def test_rack_aware_invariants(fd, data):
    n = fd.n_groups
    r = data.draw(st.integers(1, n))
    kind = data.draw(st.sampled_from(["consecutive", "sidon"]))
    lay = StackedLayout.rack_aware(fd, r, offsets=kind, seed=data.draw(st.integers(0, 3)), max_iter=50)
    p = lay.placement
    assert lay.kind == "rack-aware" and lay.is_cyclic and lay.domains is fd
    # the RECTLR invariant: every depth is a permutation of the types; rows distinct
    for d in range(r):
        assert np.array_equal(np.sort(p[:, d]), np.arange(n))
    assert all(len(set(row)) == r for row in p.tolist())
    # cyclic along group_order
    order = lay.group_order
    assert np.array_equal(np.sort(order), np.arange(n))
    assert np.array_equal(p[order], (np.arange(n)[:, None] + lay.offsets[None, :]) % n)
    # the chosen level: the coarsest where every domain has <= floor(N / r) groups
    feasible = [fd.sizes(i).max() * r <= n for i in range(fd.n_levels)]
    if any(feasible):
        assert lay.domain_level == feasible.index(True)
        for i in range(lay.domain_level, fd.n_levels):  # that level and every finer one
            assert holder_domain_counts(p, fd.labels[i]).max() == 1
    else:
        assert lay.domain_level == fd.n_levels - 1
        cmax = fd.sizes(-1).max()
        m = -(-r // (n // cmax))
        worst = holder_domain_counts(p, fd.labels[-1]).max()
        assert math.ceil(cmax * r / n) <= worst <= m  # the necessary bound, the promised bound
    sizes = fd.sizes(lay.domain_level)
    b = n // sizes.max()
    if kind == "sidon" and r <= b and np.all(sizes == sizes.max()) and n % b == 0:
        assert np.unique(lay.offsets % b).size == r  # equal domains: distinct classes mod b
    else:
        assert lay.offsets.max() <= min(-(-r // b) * b - 1, n - 1)  # the span m b - 1
    assert lay.max_shared_holders == difference_multiplicity(lay.offsets, n)


def distinct_domains_possible_brute(labels, r):
    """Is there a placement (columns permutations, rows distinct) with distinct holder domains?

    Column 0 is fixed to the identity (types are relabelled freely); the other r - 1
    columns range over all permutations.
    """
    n = labels.size
    perms = list(itertools.permutations(range(n)))
    ident = tuple(range(n))
    for cols in itertools.product(perms, repeat=r - 1):
        p = np.array([ident, *cols]).T
        if any(len(set(row)) < r for row in p.tolist()):
            continue
        if holder_domain_counts(p, labels).max() == 1:
            return True
    return False


@pytest.mark.parametrize("n,r", [(4, 2), (5, 2), (6, 2), (4, 3), (5, 3)])
def test_distinct_domains_exist_iff_every_domain_fits(n, r):
    # every way to split n groups into domains (as sorted size profiles)
    def partitions(m, largest):
        if m == 0:
            yield []
        for k in range(min(m, largest), 0, -1):
            for rest in partitions(m - k, k):
                yield [k, *rest]

    for sizes in partitions(n, n):
        labels = np.repeat(np.arange(len(sizes)), sizes)
        fits = max(sizes) <= n // r
        assert distinct_domains_possible_brute(labels, r) == fits, sizes
        lay = StackedLayout.rack_aware(labels, r)
        assert (holder_domain_counts(lay.placement, labels).max() == 1) == fits, sizes


def test_rack_aware_equal_racks_is_round_robin():
    fd = FailureDomains.contiguous(24, 6)  # 4 racks of 6 groups
    lay = StackedLayout.rack_aware(fd, 4)
    # position p of the cycle is in rack p mod 4: every r = 4 consecutive positions cover all racks
    assert np.array_equal(fd.labels[0][lay.group_order], np.arange(24) % 4)
    assert holder_domain_counts(lay.placement, fd.labels[0]).max() == 1
    # the plain consecutive layout puts most types' holders in a single rack
    assert holder_domain_counts(StackedLayout(24, 4).placement, fd.labels[0]).max() == 4


def test_nested_levels_use_the_coarsest_feasible_and_spread_the_rest():
    fd = FailureDomains.contiguous(1000, [200, 20], names=("power", "rack"))
    lay = StackedLayout.rack_aware(fd, 5)  # 5 power domains of 200 = N / r: distinct power domains
    assert lay.domain_level == 0
    assert holder_domain_counts(lay.placement, fd.labels[0]).max() == 1
    lay = StackedLayout.rack_aware(fd, 10)  # power infeasible; racks distinct, power spread
    assert lay.domain_level == 1
    assert holder_domain_counts(lay.placement, fd.labels[1]).max() == 1
    assert holder_domain_counts(lay.placement, fd.labels[0]).max() == 2  # = ceil(200 * 10 / 1000)
    assert holder_domain_counts(StackedLayout(1000, 10).placement, fd.labels[0]).max() == 10


@pytest.mark.parametrize("n,size,r", [(1000, 8, 10), (600, 6, 8), (1000, 20, 6), (1000, 50, 10), (600, 30, 14)])
def test_rack_aware_sidon_on_equal_racks_is_sidon(n, size, r):
    fd = FailureDomains.contiguous(n, size)
    lay = StackedLayout.rack_aware(fd, r, offsets="sidon")
    assert np.unique(lay.offsets % (n // size)).size == r
    assert lay.max_shared_holders == 1
    assert holder_domain_counts(lay.placement, fd.labels[0]).max() == 1


def test_rack_aware_sidon_in_a_span_on_unequal_racks():
    labels = np.repeat(np.arange(9), [12] * 8 + [4])  # 100 groups: 8 racks of 12, one of 4
    lay = StackedLayout.rack_aware(labels, 5, offsets="sidon")
    assert lay.offsets.max() <= 100 // 12 - 1  # span b - 1 = 7: 5 marks need length >= 11
    assert holder_domain_counts(lay.placement, labels).max() == 1
    assert lay.max_shared_holders == 2  # best effort: a Sidon set does not fit in the span


def test_sidon_offsets_max_span():
    off = sidon_offsets(1000, 6, seed=0, max_span=40)
    assert off.max() <= 40 and difference_multiplicity(off, 1000) == 1
    # the default is the unrestricted search: same draws as max_span = N - 1
    for n, r in [(200, 14), (60, 9), (1000, 10)]:
        assert np.array_equal(sidon_offsets(n, r, seed=2, max_iter=30), sidon_offsets(n, r, seed=2, max_iter=30, max_span=n - 1))
    # impossible in the span: best effort, still inside it
    off = sidon_offsets(1000, 10, seed=0, max_iter=100, max_span=30)
    assert off.max() <= 30 and np.unique(off).size == 10 and difference_multiplicity(off, 1000) >= 2
    with pytest.raises(ValueError, match="max_span must be >= 9"):
        sidon_offsets(100, 10, max_span=8)
    # distinct classes modulo b: from the windows, and from the search when no window fits
    for n, r, b, it in [(1000, 10, 20, 1000), (200, 14, 20, 200)]:
        off = sidon_offsets(n, r, seed=1, distinct_mod=b, max_iter=it)
        assert np.unique(off % b).size == r
    assert difference_multiplicity(sidon_offsets(1000, 10, seed=1, distinct_mod=20), 1000) == 1
    with pytest.raises(ValueError, match="distinct_mod must divide n_groups=100, got 30"):
        sidon_offsets(100, 5, distinct_mod=30)
    with pytest.raises(ValueError, match="distinct_mod must be >= 5"):
        sidon_offsets(100, 5, distinct_mod=4)


def test_default_layouts_unchanged_by_rack_awareness():
    lay = StackedLayout(7, 3)
    assert np.array_equal(lay.group_order, np.arange(7)) and lay.domains is None and lay.domain_level is None
    assert StackedLayout.from_placement(lay.placement).group_order is None


def test_failure_domains_values():
    fd = FailureDomains([[7, 7, 3, 3], [5, 6, 1, 1]], names=("power", "rack"))
    assert fd.labels.tolist() == [[1, 1, 0, 0], [1, 2, 0, 0]]
    assert fd.n_domains == (2, 3) and fd.sizes("rack").tolist() == [2, 1, 1]
    indptr, groups = fd.members("power")
    assert indptr.tolist() == [0, 2, 4] and groups.tolist() == [2, 3, 0, 1]
    assert fd == FailureDomains([[1, 1, 0, 0], [1, 2, 0, 0]], names=("power", "rack"))
    with pytest.raises(ValueError):
        fd.labels[0, 0] = 3
    assert FailureDomains.contiguous(5, 2).labels.tolist() == [[0, 0, 1, 1, 2]]


@pytest.mark.parametrize(
    "args,kw,exc,match",
    [
        (([[0, 0, 1], [0, 1, 1]],), {}, ValueError, "domains must be nested: level1 domain 1 spans level0 domains"),
        (([0, -1],), {}, ValueError, "levels must be >= 0"),
        (([0.5, 1],), {}, TypeError, "levels must hold integers"),
        (([],), {}, ValueError, "at least one level and one group"),
        (([[[0]]],), {}, ValueError, "levels must be 2-dimensional"),
        (([0, 1],), {"names": ("a", "b")}, ValueError, "names must be 1 non-empty strings"),
        (([[0, 1], [0, 1]],), {"names": ("a", "a")}, ValueError, "names must be distinct"),
    ],
)
def test_bad_failure_domains(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        FailureDomains(*args, **kw)


def test_bad_rack_aware_arguments():
    fd = FailureDomains.contiguous(6, 2)
    with pytest.raises(ValueError, match="redundancy must be <= n_groups"):
        StackedLayout.rack_aware(fd, 7)
    with pytest.raises(ValueError, match="offsets must be one of"):
        StackedLayout.rack_aware(fd, 2, offsets="random")
    with pytest.raises(ValueError, match="groups_per_domain must be nested"):
        FailureDomains.contiguous(6, [4, 3])
    with pytest.raises(ValueError, match="level must be one of"):
        fd.sizes("rack")
    with pytest.raises(ValueError, match="level must be <= 0"):
        fd.sizes(1)
