"""RECTLR against independent oracles (brute force, scipy's assignment solver) and invariants."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from spare_core.strategies.spare.analytic import stack_depth_bound
from spare_core.strategies.spare.layout import StackedLayout
from spare_core.strategies.spare.rectlr import KINDS, DecisionArrays, Rectlr

BIG = 10**6


# ---------------------------------------------------------------------------- oracles
def climb(stacks, g, t, s):
    """Positions type t must climb in group g's stack to enter its top s."""
    d = int(np.flatnonzero(stacks[g] == t)[0])
    return max(0, d - s + 1)


def brute_force(stacks, alive, s_min):
    """(S*, least cost) by enumerating every type -> alive holder map; (None, None) = wipe-out."""
    n, r = stacks.shape
    holders = [[g for g in range(n) if alive[g] and t in stacks[g]] for t in range(n)]
    if any(not h for h in holders):
        return None, None
    for s in range(s_min, r + 1):
        best = None
        for choice in itertools.product(*holders):
            if np.bincount(choice, minlength=n).max() > s:
                continue
            cost = sum(climb(stacks, g, t, s) for t, g in enumerate(choice))
            best = cost if best is None else min(best, cost)
        if best is not None:
            return s, best
    raise AssertionError("every type has a holder, so S = r must be feasible")


def assignment_oracle(stacks, alive, s_min):
    """Same answer from scipy's Hungarian solver on the slot-expanded type x (group, slot) matrix."""
    n, r = stacks.shape
    groups = np.flatnonzero(alive)
    for s in range(s_min, r + 1):
        if groups.size * s < n:
            continue
        cost = np.full((n, groups.size * s), BIG)
        for i, g in enumerate(groups):
            for d, t in enumerate(stacks[g]):
                cost[t, i * s : (i + 1) * s] = max(0, d - s + 1)
        rows, cols = linear_sum_assignment(cost)
        total = int(cost[rows, cols].sum())
        if total < BIG:
            return s, total
    return None, None


def n_search_states(stacks, alive):
    n = stacks.shape[0]
    return np.prod([max(1, sum(1 for g in range(n) if alive[g] and t in stacks[g])) for t in range(n)], dtype=float)


# ---------------------------------------------------------------------------- strategies
@st.composite
def layouts(draw, max_n=12):
    n = draw(st.integers(1, max_n))
    r = draw(st.integers(1, n))
    kind = draw(st.sampled_from(["consecutive", "offsets", "custom"]))
    if kind == "consecutive":
        return StackedLayout(n, r)
    if kind == "offsets":
        return StackedLayout(n, r, draw(st.permutations(range(n)))[:r])
    rows = [draw(st.permutations(range(n)))[:r] for _ in range(n)]
    # every type must be held: give each missing type a slot in a row not holding it
    place = np.array(rows, dtype=np.int64).reshape(n, r)
    for t in range(n):
        if not (place == t).any():
            place[t, draw(st.integers(0, r - 1))] = t
    srt = np.sort(place, axis=1)
    if (srt[:, 1:] == srt[:, :-1]).any() or len(np.unique(place)) < n:
        return StackedLayout(n, r)  # rare repair collision: fall back to a valid layout
    return StackedLayout.from_placement(place)


def snapshot(ctl):
    return (ctl.alive.copy(), ctl.stack_depth, ctl.stacks.copy(), ctl.assignment.copy(), ctl.n_failed, ctl.wiped_out)


def assert_same_state(a, b):
    for x, y in zip(a, b):
        assert np.array_equal(x, y)


def check_invariants(ctl):
    """A complete step: every type once, from an alive group holding it within its top S."""
    n = ctl.layout.n_groups
    s, stacks, assign, alive = ctl.stack_depth, ctl.stacks, ctl.assignment, ctl.alive
    assert assign.shape == (n,) and np.all(assign >= 0)
    assert np.all(alive[assign])
    for t in range(n):
        assert t in stacks[assign[t], :s]
    # each group's stack is a permutation of its placement row
    assert np.array_equal(np.sort(stacks, axis=1), np.sort(ctl.layout.placement, axis=1))
    assert s >= stack_depth_bound(n, ctl.n_failed)


def check_decision(ctl, d, before, g):
    """Kind, S, moves, patch plan of one decision, against the state just before it."""
    alive0, s0, stacks0, assign0 = before[0], before[1], before[2], before[3]
    alive1 = alive0.copy()
    alive1[g] = False
    assert d.failed_group == g and d.previous_stack_depth == s0
    contributed = np.flatnonzero(assign0 == g)
    assert sorted(d.patch.shard_type.tolist()) == contributed.tolist()
    if d.kind == "wipeout":
        assert ctl.wiped_out and d.stack_depth == s0 and d.moves == 0
        return
    covered_before = {t for h in np.flatnonzero(alive1) for t in stacks0[h, :s0]}
    assign1 = ctl.assignment
    for h, t, extra in zip(d.patch.group, d.patch.shard_type, d.patch.extra):
        assert alive1[h]
        if extra:
            assert t not in covered_before and assign1[t] == h
        else:
            assert t in stacks0[h, :s0]
    extra_groups = d.patch.group[d.patch.extra]
    assert d.patch_layers == (np.bincount(extra_groups).max() if extra_groups.size else 0)
    moved = (stacks0 != ctl.stacks).any(axis=1)
    if d.kind == "fixed":
        assert d.stack_depth == s0 and d.moves == 0 and d.cost == 0 and not moved.any()
        assert not d.patch.extra.any()
        assert set(contributed.tolist()) <= covered_before
    else:
        assert d.kind == "reordered"
        assert not set(contributed.tolist()) <= covered_before
        # a move is one swap: each moved stack differs from the old one in exactly 2 places per move
        n_diff = int((stacks0 != ctl.stacks).sum())
        assert n_diff == 2 * d.moves
        # the reported cost is the climb of the shards now contributed from below the old top S*
        cost = sum(climb(stacks0, assign1[t], t, d.stack_depth) for t in range(len(assign1)))
        assert cost == d.cost


# ---------------------------------------------------------------------------- tests
@given(layouts(), st.data())
def test_sequences_against_oracles(layout, data):
    n, r = layout.n_groups, layout.redundancy
    ctl = Rectlr(layout)
    check_invariants(ctl)
    # initial state: the least S at which the initial stacks can be completed (1 for cyclic)
    assert ctl.stack_depth == assignment_oracle(layout.placement, np.ones(n, dtype=bool), 1)[0]
    order = data.draw(st.permutations(range(n)))
    for g in order:
        before = snapshot(ctl)
        alive1 = before[0].copy()
        alive1[g] = False
        d = ctl.fail(g)
        check_decision(ctl, d, before, g)
        if n_search_states(before[2], alive1) <= 3000:
            expected = brute_force(before[2], alive1, before[1])
        else:
            expected = assignment_oracle(before[2], alive1, before[1])
        if d.kind == "wipeout":
            assert expected == (None, None)
            lost = [t for t in range(n) if not (layout.placement[alive1] == t).any()]
            assert lost  # some type lost all its holders
            break
        assert (d.stack_depth, d.cost) == expected
        check_invariants(ctl)
    else:
        raise AssertionError("failing every group must end in a wipe-out")


@given(st.integers(2, 40), st.data())
@settings(max_examples=40)
def test_cyclic_wipeout_exactly_at_r_consecutive_dead(n, data):
    r = data.draw(st.integers(1, n))
    ctl = Rectlr(StackedLayout(n, r))
    dead = np.zeros(n, dtype=bool)
    for g in data.draw(st.permutations(range(n))):
        dead[g] = True
        runs = np.array([dead[(np.arange(s, s + r)) % n].all() for s in range(n)])
        d = ctl.fail(g)
        assert (d.kind == "wipeout") == runs.any()
        if runs.any():
            break
        check_invariants(ctl)


@given(layouts(max_n=30), st.data())
@settings(max_examples=30)
def test_larger_sequences_against_assignment_oracle(layout, data):
    ctl = Rectlr(layout)
    for g in data.draw(st.permutations(range(layout.n_groups))):
        stacks, s0, alive1 = ctl.stacks, ctl.stack_depth, ctl.alive.copy()
        alive1[g] = False
        d = ctl.fail(g)
        if d.kind == "wipeout":
            assert assignment_oracle(stacks, alive1, s0) == (None, None)
            break
        if d.kind == "reordered":
            assert (d.stack_depth, d.cost) == assignment_oracle(stacks, alive1, s0)
    assert ctl.wiped_out  # failing every group always ends in a wipe-out


@given(layouts(max_n=20), st.data())
@settings(max_examples=30)
def test_restart_equals_fresh(layout, data):
    ctl = Rectlr(layout)
    fresh = snapshot(Rectlr(layout))
    k = data.draw(st.integers(0, layout.n_groups))
    ctl.fail_many(data.draw(st.permutations(range(layout.n_groups)))[:k])
    ctl.restart()
    assert_same_state(snapshot(ctl), fresh)
    assert ctl.n_failed == 0 and not ctl.wiped_out


def test_fail_many_equals_fail_one_by_one_and_stops_at_wipeout():
    lay = StackedLayout.sidon(60, 4, seed=1)
    order = np.random.default_rng(5).permutation(60).astype(np.int32)
    kept = order.copy()
    a, b = Rectlr(lay), Rectlr(lay)
    many = a.fail_many(order)
    assert np.array_equal(order, kept)  # the caller's array is not modified
    ones = []
    for g in order:
        ones.append(b.fail(g))
        if ones[-1].kind == "wipeout":
            break
    assert [repr(x) for x in many] == [repr(x) for x in ones]
    assert many[-1].kind == "wipeout" and a.n_failed == len(many) < 60
    assert_same_state(snapshot(a), snapshot(b))


@pytest.mark.parametrize("phase1", ["kernel", "matching"])
@pytest.mark.parametrize("chunks", [1, 3, 7])
def test_fail_many_arrays_equals_fail_many(phase1, chunks):
    lay = StackedLayout(40, 3)
    order = np.random.default_rng(11).permutation(40)
    a, b = Rectlr(lay, phase1=phase1), Rectlr(lay, phase1=phase1)
    cols = []
    for part in np.array_split(order, chunks):  # state carries over between calls
        if a.wiped_out:
            break
        cols.append(a.fail_many_arrays(part))
    got = DecisionArrays(*(np.concatenate(c) for c in zip(*cols)))
    want = DecisionArrays.from_decisions(b.fail_many(order))
    for field in DecisionArrays._fields:
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert KINDS[got.kind[-1]] == "wipeout" and a.n_failed == b.n_failed == got.groups.size
    assert_same_state(snapshot(a), snapshot(b))
    assert a.fail_many_arrays([]).groups.size == 0  # nothing to fail: no error, no change
    with pytest.raises(RuntimeError, match="wiped out"):
        a.fail_many_arrays([int(np.flatnonzero(a.alive)[0])])


def test_first_failure_raises_s_to_two_without_moves():
    ctl = Rectlr(StackedLayout(10, 3))
    d = ctl.fail(4)
    assert (d.kind, d.stack_depth, d.moves, d.patch_layers) == ("reordered", 2, 0, 1)
    # type 4 now comes from group 3, which holds it at depth 1
    assert d.patch.group.tolist() == [3] and d.patch.shard_type.tolist() == [4]
    assert ctl.assignment[4] == 3
    assert "reordered" in repr(d) and "4->3+" in repr(d.patch)


def test_reordering_moves_a_shard_up():
    # r = 3, consecutive: after groups 1 and 2 die at S = 2, type 2 is only on group 0 at depth 2
    ctl = Rectlr(StackedLayout(8, 3))
    ctl.fail(1)
    d = ctl.fail(2)
    assert d.kind == "reordered" and d.stack_depth == 2 and d.moves >= 1 and d.cost >= 1
    assert ctl.assignment[2] == 0 and 2 in ctl.stacks[0, :2]
    check_invariants(ctl)


def test_read_only_state():
    ctl = Rectlr(StackedLayout(5, 2))
    with pytest.raises(ValueError):
        ctl.alive[0] = False
    ctl.stacks[0, 0] = 4  # a copy: the controller is unaffected
    ctl.assignment[0] = 3
    assert ctl.stacks[0, 0] == 0 and ctl.assignment[0] == 0


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "method,arg,exc,match",
    [
        ("fail", 5, ValueError, "group must be <= 4"),
        ("fail", -1, ValueError, "group must be >= 0"),
        ("fail", 1.0, TypeError, "group must be an integer"),
        ("fail", True, TypeError, "group must be an integer"),
        ("fail", "1", TypeError, "group must be an integer"),
        ("fail", 2, ValueError, "group 2 has already failed"),
        ("fail_many", [0, 0], ValueError, "distinct"),
        ("fail_many", [0, 2], ValueError, "group 2 has already failed"),
        ("fail_many", [0, 7], ValueError, "groups must be <= 4"),
        ("fail_many", [0.0], TypeError, "groups must hold integers"),
        ("fail_many", [[0, 1]], ValueError, "1-dimensional"),
    ],
)
def test_bad_failures_leave_state_unchanged(method, arg, exc, match):
    ctl = Rectlr(StackedLayout(5, 3))
    ctl.fail(2)
    before = snapshot(ctl)
    with pytest.raises(exc, match=match):
        getattr(ctl, method)(arg)
    assert_same_state(snapshot(ctl), before)


def test_wiped_out_state_refuses_failures_until_restart():
    ctl = Rectlr(StackedLayout(6, 2))
    ctl.fail(0)
    d = ctl.fail(1)
    assert d.kind == "wipeout" and ctl.wiped_out
    assert (ctl.assignment == -1).sum() >= 1
    before = snapshot(ctl)
    with pytest.raises(RuntimeError, match="wiped out; call restart"):
        ctl.fail(3)
    with pytest.raises(RuntimeError, match="wiped out"):
        ctl.fail_many([3])
    assert_same_state(snapshot(ctl), before)
    ctl.restart()
    assert ctl.fail(3).kind == "reordered"


def test_bad_layout_argument():
    with pytest.raises(TypeError, match="layout must be a StackedLayout"):
        Rectlr(np.zeros((3, 2), dtype=int))


@given(layouts(max_n=25), st.data())
@settings(max_examples=30)
def test_matching_phase1_gives_identical_decisions(layout, data):
    """Phase 1 on the IncrementalMatching kernel finds the same S*, so everything matches."""
    a, b = Rectlr(layout), Rectlr(layout, phase1="matching")
    for _ in range(2):  # twice: restart() must re-enable the failed groups in the matching
        order = data.draw(st.permutations(range(layout.n_groups)))
        da, db = a.fail_many(order), b.fail_many(order)
        assert [repr(x) for x in da] == [repr(x) for x in db]
        for x, y in zip(da, db):
            assert np.array_equal(x.patch.group, y.patch.group) and np.array_equal(x.patch.extra, y.patch.extra)
        assert_same_state(snapshot(a), snapshot(b))
        a.restart()
        b.restart()


def test_bad_phase1_choice():
    with pytest.raises(ValueError, match="phase1 must be one of"):
        Rectlr(StackedLayout(4, 2), phase1="scipy")


def test_kernel_refuses_bad_direct_calls():
    """The compiled core checks what it indexes even when called without the Python layer."""
    ctl = Rectlr(StackedLayout(10, 3))
    core = ctl._core
    pg, pt = np.empty(3, np.int32), np.empty(3, np.int32)
    px, out = np.empty(3, np.uint8), np.empty(7, np.int64)
    for g in (-1, 10):
        with pytest.raises(ValueError, match="out of range or dead"):
            core.fail(g, pg, pt, px, out)
    with pytest.raises(ValueError, match="patch buffers"):
        core.fail(3, pg[:1], pt, px, out)
    core.fail(2, pg, pt, px, out)
    with pytest.raises(ValueError, match="group 2 is out of range or dead"):
        core.fail(2, pg, pt, px, out)
    bufs = (np.empty(6, np.int32), np.empty(6, np.int32), np.empty(6, np.uint8), np.empty((2, 7), np.int64))
    with pytest.raises(ValueError, match="buffers must hold"):
        core.fail_many(np.array([4, 5], np.int32), *bufs, np.empty(2, np.int64))


class RectlrMachine(RuleBasedStateMachine):
    """Random interleavings of fail / fail_many / restart, each step checked against the oracle."""

    @initialize(layout=layouts(max_n=10))
    def setup(self, layout):
        self.layout = layout
        self.ctl = Rectlr(layout)
        self.fresh = snapshot(Rectlr(layout))

    def _step(self, g):
        before = snapshot(self.ctl)
        alive1 = before[0].copy()
        alive1[g] = False
        d = self.ctl.fail(g)
        check_decision(self.ctl, d, before, g)
        expected = assignment_oracle(before[2], alive1, before[1])
        assert (d.stack_depth, d.cost) == expected if d.kind != "wipeout" else expected == (None, None)

    @precondition(lambda self: not self.ctl.wiped_out)
    @rule(data=st.data())
    def fail_one(self, data):
        self._step(data.draw(st.sampled_from(np.flatnonzero(self.ctl.alive).tolist())))

    @precondition(lambda self: not self.ctl.wiped_out)
    @rule(data=st.data())
    def fail_several(self, data):
        alive = np.flatnonzero(self.ctl.alive).tolist()
        groups = data.draw(st.permutations(alive))[: data.draw(st.integers(0, 3))]
        n_failed = self.ctl.n_failed
        decisions = self.ctl.fail_many(groups)
        assert len(decisions) == len(groups) or decisions[-1].kind == "wipeout"
        assert self.ctl.n_failed == n_failed + len(decisions)

    @rule()
    def restart(self):
        self.ctl.restart()
        assert_same_state(snapshot(self.ctl), self.fresh)

    @invariant()
    def complete_unless_wiped(self):
        if hasattr(self, "ctl") and not self.ctl.wiped_out:
            check_invariants(self.ctl)


TestRectlrMachine = RectlrMachine.TestCase
TestRectlrMachine.settings = settings(max_examples=25, stateful_step_count=15)
