"""IncrementalMatching driven by a hypothesis state machine, compared with a fresh solve after each step."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from spare_core.graph.matching import IncrementalMatching, hopcroft_karp

from test_matching import check_certificate, check_valid, scipy_size, spare_graph


class IncrementalModel(RuleBasedStateMachine):
    """Mirror of the graph (enabled rights, enabled edges, capacities) kept in plain Python."""

    @initialize(
        n_left=st.integers(1, 10),
        n_right=st.integers(1, 8),
        data=st.data(),
    )
    def build(self, n_left, n_right, data):
        pairs = data.draw(st.lists(st.tuples(st.integers(0, n_left - 1), st.integers(0, n_right - 1)),
                                   max_size=30))
        caps = data.draw(st.lists(st.integers(0, 3), min_size=n_right, max_size=n_right))
        rows = np.array([p[0] for p in pairs], dtype=np.int64)
        cols = np.array([p[1] for p in pairs], dtype=np.int64)
        g = sp.coo_array((np.ones(len(pairs)), (rows, cols)), shape=(n_left, n_right))
        self.im = IncrementalMatching(g, capacity=caps)
        # prune after every phase half of the time, so the pruned path meets every change
        self.im._k.prune_budget = data.draw(st.sampled_from([0, -1]))
        self.n_left, self.n_right = n_left, n_right
        self.edges = sorted(set(pairs))
        self.edge_on = {e: True for e in self.edges}
        self.user_cap = list(caps)
        self.right_on = [True] * n_right
        self.maximal = True          # after construction and after augment()

    def eff_cap(self):
        return np.array([c if on else 0 for c, on in zip(self.user_cap, self.right_on)], dtype=np.int64)

    def live_edges(self):
        return {e for e, on in self.edge_on.items() if on}

    @rule(j=st.integers(0, 7))
    def disable_right(self, j):
        j %= self.n_right
        self.im.disable_right(j)
        self.right_on[j] = False
        self.maximal = False

    @rule(j=st.integers(0, 7))
    def enable_right(self, j):
        j %= self.n_right
        self.im.enable_right(j)
        self.right_on[j] = True
        self.maximal = False

    @rule(j=st.integers(0, 7), c=st.integers(0, 4))
    def set_capacity(self, j, c):
        j %= self.n_right
        self.im.set_capacity(j, c)
        self.user_cap[j] = c
        self.maximal = False

    @rule(data=st.data())
    def set_capacities(self, data):
        caps = data.draw(st.one_of(st.integers(0, 3),
                                   st.lists(st.integers(0, 3), min_size=self.n_right, max_size=self.n_right)))
        self.im.set_capacities(caps)
        self.user_cap = [caps] * self.n_right if isinstance(caps, int) else list(caps)
        self.maximal = False

    @precondition(lambda self: self.edges)
    @rule(data=st.data(), on=st.booleans())
    def toggle_edge(self, data, on):
        e = data.draw(st.sampled_from(self.edges))
        (self.im.enable_edge if on else self.im.disable_edge)(*e)
        self.edge_on[e] = on
        self.maximal = False

    @rule()
    def augment(self):
        size = self.im.augment()
        assert size == self.im.size
        self.maximal = True

    @invariant()
    def consistent(self):
        m = self.im.matching
        cap = self.eff_cap()
        live = self.live_edges()
        check_valid(m, live, cap)
        assert np.array_equal(m.capacity, cap)
        assert np.array_equal(self.im.match_left, m.match_left)
        assert np.array_equal(self.im.right_load, m.right_load)
        assert np.array_equal(self.im.unmatched_left(), np.flatnonzero(m.match_left < 0))
        if self.maximal:
            assert m.size == scipy_size(self.n_left, self.n_right, live, cap)
            check_certificate(m, live, cap)
            fresh = hopcroft_karp(sp.csr_array(
                (np.ones(len(live)), ([i for i, _ in live], [j for _, j in live])),
                shape=(self.n_left, self.n_right)), capacity=cap)
            assert fresh.size == m.size


TestIncremental = IncrementalModel.TestCase
TestIncremental.settings = settings(settings.default, stateful_step_count=25)


def test_repair_touches_only_the_failed_group():
    """After one group fails, augment() scans a tiny part of the graph (work counter, not time)."""
    n, r = 20000, 3
    g = spare_graph(n, r)
    im = IncrementalMatching(g, capacity=np.full(n, 2))
    assert im.size == n
    rng = np.random.default_rng(3)
    for j in rng.choice(n, 20, replace=False):
        before = im.work
        im.disable_right(int(j))
        assert im.augment() == n
        assert im.work - before < 200, im.work - before      # nnz = 60000
    assert im.unmatched_left().size == 0


def test_failures_until_wipe_out_match_fresh_solves():
    """A SPARe-like failure sequence at S = 1 then S raised: sizes equal a fresh solve every step."""
    n, r = 60, 3
    g = spare_graph(n, r)
    im = IncrementalMatching(g)
    rng = np.random.default_rng(11)
    alive = np.ones(n, dtype=bool)
    for j in rng.permutation(n)[:25]:
        im.disable_right(int(j))
        alive[j] = False
        for s in (1, 2, 3):
            im.set_capacities(s)
            size = im.augment()
            cap = np.where(alive, s, 0)
            assert size == hopcroft_karp(g, capacity=cap).size
            if size == n:
                break
        im.set_capacities(1)
        im.augment()


def test_unmatched_left_and_bulk_capacity():
    g = spare_graph(10, 2)
    im = IncrementalMatching(g)
    for j in (0, 1):
        im.disable_right(j)
    im.augment()
    # 8 groups of one slot for 10 types; type 0 is held by groups 0, 1 only: never covered
    free = im.unmatched_left()
    assert len(free) == 2 and 0 in free.tolist()
    im.set_capacities(np.full(10, 2))
    assert im.augment() == 9
    im.enable_right(1)
    assert im.augment() == 10 and im.unmatched_left().size == 0


def test_live_views_and_capacities_beyond_n_left():
    """match_left/right_load are int32 live views; capacity shows what was set, even above
    n_left (the kernel works with min(capacity, n_left), which allows the same matchings)."""
    g = spare_graph(8, 2)
    im = IncrementalMatching(g, capacity=np.full(8, 1))
    assert im.match_left.dtype == np.int32 and im.right_load.dtype == np.int32
    assert im.capacity.dtype == np.int64
    view = im.match_left
    im.set_capacity(3, 10**12)
    im.disable_right(4)
    assert im.capacity[3] == 10**12 and im.capacity[4] == 0
    im.augment()
    assert np.array_equal(view, im.matching.match_left)      # the view follows the state
    assert im.matching.capacity[3] == 10**12 and im.matching.match_left.dtype == np.int64
    im.enable_right(4)
    assert im.capacity[4] == 1
    im.set_capacities(np.full(8, 2**40))
    assert im.augment() == 8 and np.all(im.capacity == 2**40)
    left, right = im.matching.vertex_cover()
    assert int(left.sum() + im.capacity[right].sum()) == im.size
    with pytest.raises(ValueError):
        view[0] = 1


def test_bfs_levels_wrap_around_int32():
    """Phases stack their BFS levels above the previous ones; near INT32_MAX they are all
    cleared (O(V), once in ~2**31 / depth phases). Force that reset and check the repairs."""
    n, r = 300, 3
    g = spare_graph(n, r)
    im = IncrementalMatching(g, capacity=np.full(n, 1))
    im._k.level_top = 2**31 - 1 - n - 10      # the next phase or two must reset
    with pytest.raises(ValueError):
        im._k.level_top = 0
    alive = np.ones(n, dtype=bool)
    for j in np.random.default_rng(5).permutation(n)[:40].tolist():
        im.disable_right(j)
        alive[j] = False
        assert im.augment() == hopcroft_karp(g, capacity=alive.astype(np.int64)).size
    assert im._k.level_top < 2**30
    left, right = im.matching.vertex_cover()
    assert int(left.sum() + im.capacity[right].sum()) == im.size
