"""What ``hopcroft_karp(method="auto")`` runs on every family of bench/families.py at every size
the benchmark measures (1e3, 1e4, 1e5 edges and the family's full size), with the König
certificate of each result.

The expected choices are those that make ``auto`` within 1.3x of the best method in the
measured table of docs/matching.md ("auto against the best method"), where the time of every
method is measured by ``python -m bench.ratios matching --catalogue all --methods all``. This
test is deterministic (the families are seeded) and times nothing: a change to the ``auto``
rules, or to a family, shows up here as a changed choice, and the table must then be
measured again.
"""
from __future__ import annotations


import numpy as np
import pytest

from spare_core.graph.matching import hopcroft_karp

from bench import families

PF_LEFT, PF_RIGHT = ("pothen_fan", "left"), ("pothen_fan", "right")
PR_LEFT, GREEDY = ("push_relabel", "left"), ("greedy", "left")

# family -> auto's (method, searched_from) at 1e3, 1e4, 1e5 edges and the full size
EXPECTED = {
    # square, both sides alike: PF+ below 30,000 edges, push-relabel from there
    "uniform5": (PF_LEFT, PF_LEFT, PR_LEFT, PR_LEFT),
    "uniform4": (PF_LEFT, PF_LEFT, PR_LEFT, PR_LEFT),
    "sparse": (PF_LEFT, PF_LEFT, PR_LEFT, PR_LEFT),
    "chain": (PF_LEFT, PF_LEFT, PR_LEFT, PR_LEFT),
    "planted": (PF_LEFT, PF_LEFT, PR_LEFT, PR_LEFT),
    # fewer right than 0.95 x left vertices with an edge: PF+ from the right
    "rect": (PF_RIGHT,) * 4,
    "zipf": (PF_RIGHT,) * 4,
    "hard": (PF_RIGHT,) * 4,
    # fewer left than 0.95 x right vertices with an edge (about 1.8 slots per type): PF+ from
    # the left at every size, never push-relabel (it was 3-4x slower than PF+ there)
    "redundancy_slots": (PF_LEFT,) * 4,
    # the greedy pass is already maximum up to 1e5; at 1e6 it leaves 1 right vertex free
    "blocks": (GREEDY, GREEDY, GREEDY, ("greedy_repair", "right")),
    # b-matching (capacities 0 and 2): the b-matching kernel's greedy, then PF+ with capacities
    "redundancy": (PF_LEFT,) * 4,
}


def test_every_family_is_pinned():
    assert set(EXPECTED) == set(families.FAMILIES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("size", range(4))
def test_auto_choice_per_family_and_size(name, size):
    nnz = families.sizes(families.FAMILIES[name][1])[size]
    g, cap = families.make(name, nnz)
    m = hopcroft_karp(g, capacity=cap)
    assert (m.method, m.searched_from) == EXPECTED[name][size], (name, nnz)
    # König: a cover whose weight is the matching's size proves it maximum (vectorised, so that
    # the 2M-edge graphs stay cheap; tests/test_matching_methods.py compares sizes with scipy)
    left, right = m.vertex_cover()
    coo = g.tocoo()
    assert np.all(left[coo.row] | right[coo.col])
    weight = np.ones(g.shape[1], dtype=np.int64) if cap is None else cap
    assert int(left.sum()) + int(weight[right].sum()) == m.size == int(np.count_nonzero(m.match_left >= 0))
