"""Endurance of SPARe layouts under whole-domain failures: exact counts vs brute force and RECTLR."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.strategies.spare.analytic import endurable_failures_consecutive
from spare_core.strategies.spare.domain_endurance import (
    domain_endurance_mc,
    domain_exposure,
    endurable_domain_failures,
    expected_types_lost,
    holder_domains,
    wipeout_probabilities,
)
from spare_core.strategies.spare.layout import StackedLayout
from spare_core.topology import FailureDomains


def wiped_brute(placement, labels, down_domains):
    """Some type has no holder outside the failed domains (a loop over groups)."""
    n = placement.shape[0]
    alive_holder = np.zeros(n, dtype=bool)
    for g in range(n):
        if labels[g] not in down_domains:
            alive_holder[placement[g]] = True
    return not alive_holder.all()


def brute_probabilities(layout, fd, level=-1):
    labels = fd.labels[level]
    n_dom = labels.max() + 1
    out = []
    for k in range(n_dom + 1):
        subsets = list(itertools.combinations(range(n_dom), k))
        out.append(sum(wiped_brute(layout.placement, labels, set(s)) for s in subsets) / len(subsets))
    return np.array(out)


def layouts_for(fd, r):
    n = fd.n_groups
    yield StackedLayout(n, r)
    yield StackedLayout.sidon(n, r, max_iter=30)
    yield StackedLayout.rack_aware(fd, r)
    yield StackedLayout.rack_aware(fd, r, offsets="sidon", max_iter=30)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 24), st.integers(1, 9), st.data())
def test_wipeout_probabilities_match_brute_force(n, n_dom, data):
    labels = np.sort(np.array(data.draw(st.lists(st.integers(0, n_dom - 1), min_size=n, max_size=n))))
    fd = FailureDomains(labels)
    r = data.draw(st.integers(1, min(n, 5)))
    for lay in layouts_for(fd, r):
        p = wipeout_probabilities(lay, fd)
        assert np.allclose(p, brute_probabilities(lay, fd), rtol=0, atol=1e-12)
        assert p[0] == 0.0 and p[-1] == 1.0 and np.all(np.diff(p) >= 0)
        # the mean number of lost types bounds the wipe-out probability (union bound)
        for k in range(fd.n_domains[0] + 1):
            assert p[k] <= expected_types_lost(lay, fd, k) + 1e-12
        # exposure: a single domain wipes out exactly when p[1] > 0
        ex = domain_exposure(lay, fd)
        assert math.isclose(p[1], ex.wiping_domains / fd.n_domains[0])


def test_expected_types_lost_brute_force():
    fd = FailureDomains.contiguous(10, 2)
    lay = StackedLayout.sidon(10, 3)
    for k in range(6):
        lost = []
        for s in itertools.combinations(range(5), k):
            hd = holder_domains(lay, fd)
            lost.append(sum(set(row) <= set(s) for row in hd.tolist()))
        assert math.isclose(expected_types_lost(lay, fd, k), np.mean(lost))


@pytest.mark.parametrize("n_dom,size,r", [(6, 2, 2), (10, 3, 3), (12, 4, 4), (15, 2, 5)])
def test_rack_aware_consecutive_is_the_consecutive_formula_on_domains(n_dom, size, r):
    # equal domains: the copysets are the D cyclic windows of r domains, so whole-domain
    # failures in random order behave like group failures on a D-group consecutive layout
    fd = FailureDomains.contiguous(n_dom * size, size)
    lay = StackedLayout.rack_aware(fd, r)
    assert math.isclose(endurable_domain_failures(lay, fd), endurable_failures_consecutive(n_dom, r), rel_tol=1e-12)
    # the group-order consecutive layout is wiped out by the first domain failure when r <= size
    if r <= size:
        assert endurable_domain_failures(StackedLayout(n_dom * size, r), fd) == 0.0


def test_mc_agrees_with_exact_for_domain_failures():
    fd = FailureDomains.contiguous(40, 4)  # 10 racks of 4
    for lay in (StackedLayout.rack_aware(fd, 3), StackedLayout.sidon(40, 3), StackedLayout.rack_aware(fd, 3, offsets="sidon")):
        est = domain_endurance_mc(lay, fd, 400, seed=7, domain_share=1.0, confidence=0.999)
        assert endurable_domain_failures(lay, fd) in est.events
        assert est.wiped_by_domain.mean == 1.0
        assert np.all(est.groups.samples == 4 * est.events.samples)


def test_mc_group_failures_only_is_the_paper_model():
    fd = FailureDomains.contiguous(40, 4)
    lay = StackedLayout.rack_aware(fd, 3)  # a renamed consecutive layout: same group-level law
    est = domain_endurance_mc(lay, fd, 400, seed=3, domain_share=0.0, confidence=0.999)
    assert endurable_failures_consecutive(40, 3) in est.events
    assert est.wiped_by_domain.mean == 0.0 and np.array_equal(est.events.samples, est.groups.samples)


def test_mc_mixed_is_reproducible_and_counts_groups():
    fd = FailureDomains.contiguous(60, [20, 5], names=("power", "rack"))
    lay = StackedLayout.rack_aware(fd, 3)
    a = domain_endurance_mc(lay, fd, 30, seed=11, level="rack", domain_share=0.3)
    b = domain_endurance_mc(lay, fd, 30, seed=11, level="rack", domain_share=0.3)
    assert np.array_equal(a.events.samples, b.events.samples)
    assert np.all(a.groups.samples >= a.events.samples)
    assert 0.0 < a.wiped_by_domain.mean < 1.0 or a.wiped_by_domain.n_samples == 30
    assert "DomainEnduranceEstimate" in repr(a)


def test_exposure_counts():
    fd = FailureDomains.contiguous(12, 4)
    ex = domain_exposure(StackedLayout(12, 3), fd)
    # consecutive in group order: types 2, 3 in rack 0 (holders 0-2, 1-3) ... 2 per rack
    assert ex.types_lost_by_domain.tolist() == [2, 2, 2] and ex.max_holders_in_domain == 3
    assert domain_exposure(StackedLayout.rack_aware(fd, 3), fd).types_lost_by_domain.tolist() == [0, 0, 0]


def test_bad_arguments():
    fd = FailureDomains.contiguous(12, 4)
    lay = StackedLayout(12, 3)
    with pytest.raises(TypeError, match="layout must be a StackedLayout"):
        domain_exposure("x", fd)
    with pytest.raises(TypeError, match="domains must be a FailureDomains"):
        domain_exposure(lay, [0] * 12)
    with pytest.raises(ValueError, match="domains must cover the layout's groups: 12 groups in domains, 10"):
        domain_exposure(StackedLayout(10, 3), fd)
    with pytest.raises(ValueError, match="n_down must be <= 3"):
        expected_types_lost(lay, fd, 4)
    with pytest.raises(ValueError, match="domain_share must be <= 1.0"):
        domain_endurance_mc(lay, fd, 5, seed=0, domain_share=1.5)
    with pytest.raises(TypeError, match="seed must be given"):
        domain_endurance_mc(lay, fd, 5, seed=None)
    with pytest.raises(ValueError, match="at most 24 domains"):
        wipeout_probabilities(StackedLayout(50, 2), FailureDomains(np.arange(50)))
    with pytest.raises(ValueError, match="exactly r holders"):
        holder_domains(StackedLayout.from_placement([[0, 1], [0, 2], [1, 2], [3, 0]]), FailureDomains([0, 0, 1, 1]))
