"""Rectlr.events_arrays: failures and rejoins in one kernel call are the per-event calls
(fail / rejoin) bit for bit, on every layout family and both Phase-1 variants; a sequence that
does not match the groups' states is refused whole, before any event is applied."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.strategies.spare import REJOINED, Rectlr, StackedLayout, sidon_offsets
from spare_core.strategies.spare.rectlr import KINDS


def _layout(n, r, family):
    return StackedLayout(n, r, offsets=sidon_offsets(n, r, seed=0) if family == "sidon" else None)


@st.composite
def runs(draw):
    n = draw(st.integers(3, 40))
    r = draw(st.integers(1, min(5, n)))
    family = draw(st.sampled_from(["consecutive", "sidon"]))
    phase1 = draw(st.sampled_from(["kernel", "matching"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    alive = np.ones(n, dtype=bool)
    groups, back = [], []
    for _ in range(draw(st.integers(0, 3 * n))):
        down = np.flatnonzero(~alive)
        if down.size and rng.random() < 0.4:
            g = int(rng.choice(down))
            back.append(1)
        else:
            g = int(rng.choice(np.flatnonzero(alive))) if alive.any() else int(rng.choice(down))
            back.append(0 if alive[g] else 1)
        alive[g] = not alive[g]
        groups.append(g)
    return n, r, family, phase1, groups, back


@settings(max_examples=150, deadline=None)
@given(runs())
def test_one_call_is_the_per_event_calls(case):
    n, r, family, phase1, groups, back = case
    batch, single = Rectlr(_layout(n, r, family), phase1=phase1), Rectlr(_layout(n, r, family), phase1=phase1)
    d, flags = batch.events_arrays(groups, back)
    expect = []
    for g, b in zip(groups, back):
        if b:
            s_old = single.stack_depth
            expect.append((g, REJOINED, single.rejoin(g), s_old, 0, 0, 0))
        else:
            x = single.fail(g)
            expect.append((g, KINDS.index(x.kind), x.stack_depth, x.previous_stack_depth, x.moves, x.cost,
                           x.patch_layers))
            if x.kind == "wipeout":
                break
    got = list(zip(*(a.tolist() for a in d)))
    assert got == expect
    assert flags.tolist() == [bool(b) for b in back[: len(expect)]]
    assert batch.stack_depth == single.stack_depth and repr(batch) == repr(single)


def test_a_sequence_against_the_states_is_refused_before_any_event():
    ctl = Rectlr(StackedLayout(8, 3))
    with pytest.raises(ValueError, match=r"event 2 \(group 1\) is a failure of a dead group"):
        ctl.events_arrays([1, 4, 1], [0, 0, 0])
    assert ctl.stack_depth == 1 and "failed=0" in repr(ctl)  # nothing applied
    with pytest.raises(ValueError, match=r"event 0 \(group 3\) is a rejoin of an alive group"):
        ctl.events_arrays([3], [1])
    with pytest.raises(ValueError, match="back must be one flag per group"):
        ctl.events_arrays([1, 2], [0])
    with pytest.raises(ValueError, match=r"back must hold 0 \(a failure\) or 1 \(a rejoin\)"):
        ctl.events_arrays([1], [2])


def test_the_kernel_refuses_a_bad_sequence_itself():
    """A direct caller of the kernel that skipped the checks gets an error, never a corrupt state."""
    ctl = Rectlr(StackedLayout(6, 2))
    core = ctl._core
    r = 2
    pg, pt, px = np.empty(r, np.int32), np.empty(r, np.int32), np.empty(r, np.uint8)
    out = np.empty((2, 7), np.int64)
    with pytest.raises(ValueError, match="does not match the group's state"):
        core.events(np.array([1, 1], np.int32), np.array([0, 0], np.uint8), pg, pt, px, out)
    with pytest.raises(ValueError, match="does not match the group's state"):
        core.events(np.array([9], np.int32), np.array([0], np.uint8), pg, pt, px, out)
    with pytest.raises(ValueError, match="out rows for each"):
        core.events(np.array([2, 3], np.int32), np.array([0, 0], np.uint8), pg, pt, px, out[:1])
