"""A handler's compiled batch of failures and rejoins (``on_events`` of SPARe's and Rep+CKPT's
handlers: one kernel call) answers exactly as the protocol's generic loop does (runs of
failures to ``on_failures``, one ``on_rejoin`` per rejoin), on random event sequences."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.sim import Scenario
from spare_core.strategies import FailureHandler, make_policy


@st.composite
def cases(draw):
    n = draw(st.integers(4, 40))
    name = draw(st.sampled_from(["spare", "rep", "rep-disjoint"]))
    r = draw(st.integers(1, min(5, n // 2)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    alive = np.ones(n, dtype=bool)
    groups, back = [], []
    for _ in range(draw(st.integers(1, 3 * n))):
        down = np.flatnonzero(~alive)
        if down.size and (rng.random() < 0.45 or not alive.any()):
            g, b = int(rng.choice(down)), 1
        else:
            g, b = int(rng.choice(np.flatnonzero(alive))), 0
        alive[g] = not alive[g]
        groups.append(g)
        back.append(b)
    return n, name, r, np.array(groups, dtype=np.int64), np.array(back, dtype=np.int8)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_the_compiled_batch_is_the_generic_loop(case):
    n, name, r, groups, back = case
    sc = Scenario.paper_600k(n, n_steps=10)
    policy = make_policy(name, r)
    fast, slow = policy.handler(sc), policy.handler(sc)
    assert type(fast).on_events is not FailureHandler.on_events  # the handler has its own batch
    got = fast.on_events(groups, back)
    want = FailureHandler.on_events(slow, groups, back)
    for field in ("restart", "depth", "patch_layers"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert got.worth is None and want.worth is None
    # and the state after it: the next failure of an alive group is answered alike
    if len(got) == groups.shape[0] and not (got.restart == 1).any():
        alive = np.ones(n, dtype=bool)
        for g, b in zip(groups.tolist(), back.tolist()):
            alive[g] = bool(b)
        if alive.any():
            nxt = np.array([np.flatnonzero(alive)[0]], dtype=np.int64)
            a, b = fast.on_failures(nxt), slow.on_failures(nxt)
            assert np.array_equal(a.restart, b.restart) and np.array_equal(a.depth, b.depth)
