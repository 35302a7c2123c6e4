"""Elastic training's batch answer in numpy (``_vectorised``) against its event-by-event loop,
on batches a run with repairs hands out: a group may fail and rejoin within one batch."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.sim import ElasticDP, Scenario


@st.composite
def batches(draw):
    n = draw(st.integers(1, 10))
    down = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    state = list(down)
    groups, rejoin = [], []
    for _ in range(draw(st.integers(1, 30))):
        g = draw(st.integers(0, n - 1))
        groups.append(g)
        rejoin.append(1 if state[g] else 0)  # alternating from the group's state
        state[g] = not state[g]
    return n, down, np.array(groups, dtype=np.int64), np.array(rejoin, dtype=np.int8), draw(
        st.sampled_from(["keep", "shrink"])), draw(st.integers(1, 4)), draw(st.integers(1, 3))


def _handler(n, down, batch, k, min_groups):
    sc = Scenario(n, n_steps=10, t_compute=1.0, t_allreduce=0.0, system_mtbf=100.0)
    h = ElasticDP(batch=batch, microbatches=k, min_groups=min(min_groups, n)).handler(sc)
    for g, d in enumerate(down):
        if d:
            h.on_failures(np.array([g]))
    return h


@settings(max_examples=300, deadline=None)
@given(batches())
def test_the_numpy_answer_is_the_event_loops(case):
    n, down, groups, rejoin, batch, k, min_groups = case
    if sum(not d for d in down) < min(min_groups, n):
        return  # the groups down already restarted the job: not a state a run is in
    a, b = _handler(n, down, batch, k, min_groups), _handler(n, down, batch, k, min_groups)
    b._vectorised = lambda g, r: None  # the event-by-event loop
    fa, fb = a.on_events(groups, rejoin), b.on_events(groups, rejoin)
    assert len(fa) == len(fb)
    for name in ("restart", "depth", "patch_layers", "worth"):
        assert getattr(fa, name).tolist() == getattr(fb, name).tolist(), name
    assert a._down.tolist() == b._down.tolist() and a._live == b._live
    assert a._vectorised(groups[:0], rejoin[:0]) is None


def test_a_group_failing_and_rejoining_in_one_batch_takes_the_numpy_path():
    h = _handler(4, [False] * 4, "keep", 2, 1)
    assert h._vectorised(np.array([1, 1, 2]), np.array([0, 1, 0], dtype=np.int8)) is not None
    assert h._vectorised(np.array([1, 1]), np.array([0, 0], dtype=np.int8)) is None  # a failure of a group out
