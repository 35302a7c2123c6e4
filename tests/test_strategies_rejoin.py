"""Rectlr.rejoin (a repaired group back in the job) against a brute-force least stack depth.

Feasibility is monotone in the set of groups down (fewer groups never need a deeper stack),
so after any interleaving of failures and rejoins the controller's S must be the least S at
which the groups still down can be masked: the least S for which a b-matching gives every
shard type to a live holder with at most S types per group. The oracle decides it by scipy's
maximum bipartite matching on S copies of each live group, for every S from 1 to r; a
wipe-out must happen exactly when none exists.
"""
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core.strategies.spare.layout import StackedLayout, sidon_offsets
from spare_core.strategies.spare.rectlr import Rectlr


def least_depth(placement: np.ndarray, alive: np.ndarray):
    """Least S in 1..r at which every type has a live holder, at most S types per group (None:
    no S, a wipe-out)."""
    n, r = placement.shape
    live = np.flatnonzero(alive)
    for s in range(1, r + 1):
        rows, cols = [], []
        for j, g in enumerate(live):
            for t in placement[g]:
                for c in range(s):
                    rows.append(int(t))
                    cols.append(j * s + c)
        if not rows:
            continue
        graph = sp.csr_array((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n, max(1, live.size * s)))
        if (maximum_bipartite_matching(graph, perm_type="column") >= 0).sum() == n:
            return s
    return None


def check_assignment(ctl: Rectlr):
    """Every type goes to a live group that holds it within its current top S, at most S per group."""
    s, stacks, assign, alive = ctl.stack_depth, ctl.stacks, ctl.assignment, ctl.alive
    assert (assign >= 0).all()
    assert alive[assign].all()
    for t, g in enumerate(assign):
        assert t in stacks[g, :s]
    assert np.bincount(assign, minlength=alive.shape[0]).max() <= s


@st.composite
def layouts(draw):
    n = draw(st.integers(2, 9))
    r = draw(st.integers(1, min(n, 4)))
    kind = draw(st.sampled_from(["consecutive", "offsets", "custom"]))
    if kind == "consecutive":
        return StackedLayout(n, r)
    if kind == "offsets":
        return StackedLayout(n, r, offsets=sidon_offsets(n, r, seed=draw(st.integers(0, 5))))
    # any placement: r distinct types per group, every type held (depth 0 need not cover them)
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    while True:
        placement = np.array([rng.choice(n, r, replace=False) for _ in range(n)])
        if np.unique(placement).shape[0] == n:
            return StackedLayout.from_placement(placement)


@settings(max_examples=150, deadline=None)
@given(layouts(), st.lists(st.integers(0, 1000), min_size=1, max_size=30), st.sampled_from(["kernel", "matching"]))
def test_depth_is_least_after_failures_and_rejoins(layout, moves, phase1):
    ctl = Rectlr(layout, phase1=phase1)
    placement = layout.placement
    n = layout.n_groups
    assert ctl.stack_depth == least_depth(placement, np.ones(n, dtype=bool))
    rejoins = 0
    for m in moves:
        alive = ctl.alive.copy()
        down = np.flatnonzero(~alive)
        if down.size and (m % 3 == 0 or down.size == n - 1):
            g = int(down[m % down.size])
            s = ctl.rejoin(g)
            rejoins += 1
            alive[g] = True
            assert s == ctl.stack_depth == least_depth(placement, alive)
        else:
            up = np.flatnonzero(alive)
            g = int(up[m % up.size])
            d = ctl.fail(g)
            alive[g] = False
            want = least_depth(placement, alive)
            if want is None:
                assert d.kind == "wipeout"
                ctl.restart()
                assert ctl.stack_depth == least_depth(placement, np.ones(n, dtype=bool))
                continue
            assert d.kind != "wipeout" and d.stack_depth == ctl.stack_depth == want
        assert np.array_equal(ctl.alive, alive)
        check_assignment(ctl)


def test_rejoin_lowers_the_depth_to_what_the_groups_still_down_need():
    ctl = Rectlr(StackedLayout(8, 3))
    for g in (0, 2, 4, 6):  # every other group down: each live group carries two types
        ctl.fail(g)
    assert ctl.stack_depth == 2
    ctl.rejoin(2)
    alive = ctl.alive.copy()
    assert ctl.stack_depth == least_depth(ctl.layout.placement, alive) == 2
    for g in (0, 4, 6):
        ctl.rejoin(g)
    assert ctl.stack_depth == 1 and ctl.alive.all()
