"""RunFailures over a trace reads whole chunks of an epoch ahead of the run and rewinds to
what the run consumed before a restart: the failures it hands out, and every later epoch,
are bit for bit those of the one-failure-at-a-time reader, whatever the restart times
(ties with the failures handed out but not consumed included) and whatever ``after``."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spare_core._native import load
from spare_core._seeding import run_seed
from spare_core.events import RunFailures, Trace, TraceReplay
from spare_core.sim import Scenario, make_policy, simulate

# the model behind a process that cannot rewind: RunFailures then pulls exactly the failures
# asked for (the reader every chunked one must agree with; the bench times the same one)
from bench.peers import NoRewind


def _trace(rows, extra_end):
    t = np.array(sorted(float(a) for a, _ in rows))
    u = np.array([b for _, b in sorted(rows)])
    return Trace(t, u, n_units=12, end=float(t[-1]) + extra_end)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 11)), min_size=3, max_size=40),
    extra_end=st.integers(1, 10),
    per=st.sampled_from([1, 2, 3]),
    after=st.sampled_from(["stop", "loop", "fit"]),
    epochs=st.lists(st.tuples(st.integers(1, 6),                       # failures consumed in the epoch
                              st.lists(st.integers(1, 9), min_size=1, max_size=4),  # batch sizes read
                              st.sampled_from(["same", "next", "later", "delay"]),  # restart time
                              st.integers(0, 7)),
                    min_size=1, max_size=8),
)
def test_chunked_source_matches_one_at_a_time(rows, extra_end, per, after, epochs):
    tr = _trace(rows, extra_end)
    n_groups = 12 // per
    if after == "fit" and np.unique(tr.times).size < 3:
        return  # too few distinct instants to fit a law (the model refuses it)
    try:
        model = TraceReplay(tr, after=after, nodes_per_group=per)
    except ValueError:
        return  # a log the chosen law cannot be fitted to
    seed = np.random.SeedSequence(3)
    fast = RunFailures(model, n_groups, seed)
    slow = RunFailures(NoRewind(model), n_groups, seed)
    start = 0.0
    for k, (consume, batches, when, delay) in enumerate(epochs):
        pos, bi = 0, 0
        while pos < consume:
            batch = batches[bi % len(batches)]
            bi += 1
            t_f, u_f = fast.get(k, pos + 1, pos + batch, start=start)
            t_s, u_s = slow.get(k, pos + 1, start=start)
            assert t_f.shape[0] >= t_s.shape[0]
            m = t_s.shape[0]
            assert t_f[:m].tobytes() == t_s.tobytes() and u_f[:m].tobytes() == u_s.tobytes()
            if pos >= t_f.shape[0]:
                return  # the epoch has no more failures: a run never restarts again
            pos = min(consume, pos + batch, t_f.shape[0])
        t_s, u_s = slow.get(k, pos, start=start)  # the slow reader has now pulled exactly what was consumed
        t_f, u_f = fast.get(k, pos, start=start)
        assert t_f[:pos].tobytes() == t_s[:pos].tobytes() and u_f[:pos].tobytes() == u_s[:pos].tobytes()
        last = start + float(t_f[pos - 1])
        handed = start + t_f[pos:]  # handed out but not consumed: a restart may tie with them
        if when == "same":
            nxt = last
        elif when in ("next", "later") and handed.shape[0]:
            nxt = float(handed[0 if when == "next" else min(delay, handed.shape[0] - 1)])
        else:
            nxt = last + delay * 0.5
        fast.epoch_consumed(k, pos)
        start = nxt
    # one more epoch read whole: the restarts left both at the same row
    k = len(epochs)
    t_f, u_f = fast.get(k, 10**4 if after != "fit" else 40, start=start)
    t_s, u_s = slow.get(k, 10**4 if after != "fit" else 40, start=start)
    assert t_f.tobytes() == t_s.tobytes() and u_f.tobytes() == u_s.tobytes()


def test_without_a_report_the_restart_follows_the_failures_asked_for():
    tr = Trace([1.0, 2.0, 2.0, 5.0, 9.0], [0, 1, 2, 3, 0], n_units=4, end=10.0)
    model = TraceReplay(tr, after="stop")
    seed = np.random.SeedSequence(0)
    fast, slow = RunFailures(model, 4, seed), RunFailures(NoRewind(model), 4, seed)
    assert fast.get(0, 3, 4, start=0.0)[0].shape[0] == 5 - 1  # read ahead: every failure of the epoch
    slow.get(0, 3, start=0.0)
    assert fast.get(1, 5, start=2.0)[0].tolist() == slow.get(1, 5, start=2.0)[0].tolist() == [3.0, 7.0]
    # with a report of 2 consumed, the tie at 2.0 not consumed comes back in the next epoch
    fast = RunFailures(model, 4, seed)
    fast.get(0, 3, 4, start=0.0)
    fast.epoch_consumed(0, 2)
    assert fast.get(1, 5, start=2.0)[0].tolist() == [0.0, 3.0, 7.0]


def test_epoch_consumed_and_rewind_refuse_bad_input():
    tr = Trace([1.0, 2.0, 5.0], [0, 1, 2], n_units=3, end=10.0)
    model = TraceReplay(tr, after="stop")
    src = RunFailures(model, 3, np.random.SeedSequence(0))
    src.get(0, 1, 2, start=0.0)
    with pytest.raises(ValueError, match="n must be an int in \\[0, 3\\]"):
        src.epoch_consumed(0, 4)
    with pytest.raises(ValueError, match="epoch 1 is not the epoch being read"):
        src.epoch_consumed(1, 1)
    p = model.process(3, seed=0)
    p.take(2)
    with pytest.raises(ValueError, match="n"):
        p.rewind(3)
    p.rewind(1)
    with pytest.raises(RuntimeError, match="must restart"):
        p.take(1)
    p.restart(1.0)
    assert p.take(5) == ([2.0, 5.0], [1, 2])


@pytest.mark.parametrize("after", ["stop", "loop", "fit"])
@pytest.mark.parametrize("restart_time", [0.0, 30.0])
def test_simulate_with_chunks_equals_simulate_one_at_a_time(after, restart_time):
    rng = np.random.default_rng(11)
    times = np.sort(rng.integers(0, 400, 120)).astype(float)  # integer times: many ties
    tr = Trace(times, rng.integers(0, 24, 120), n_units=24, end=float(times[-1]) + 5.0)
    model = TraceReplay(tr, after=after)
    sc = Scenario(24, n_steps=300, t_compute=1.0, t_allreduce=0.2, restart_time=restart_time,
                  checkpoint_time=3.0, failure_model=model, name="chunks")
    for policy in (make_policy("ckpt"), make_policy("spare", 2), make_policy("spare", 4), make_policy("rep", 2)):
        for seed in (0, 1):
            slow_src = RunFailures(NoRewind(model), 24, run_seed(seed, "failures"))
            a = simulate(sc, policy, seed=seed, timeline=True)
            b = simulate(sc, policy, seed=seed, failures=slow_src, timeline=True)
            da, db = a.to_dict(), b.to_dict()
            assert {k: repr(v) for k, v in da.items()} == {k: repr(v) for k, v in db.items()}
            for f in ("failure_time", "failure_group", "failure_restart", "depth_after", "epoch_start",
                      "epoch_end", "epoch_failures"):
                assert getattr(a.timeline, f).tobytes() == getattr(b.timeline, f).tobytes(), f
            assert a.restarts > 0


@given(prev=st.lists(st.integers(-3, 40), min_size=0, max_size=40), data=st.data())
def test_scan_kernel_matches_numpy(prev, data):
    prev = np.array(prev, dtype=np.int64)
    n = prev.shape[0]
    offset = data.draw(st.sampled_from([0, n, 3 * n]))
    pos = offset + data.draw(st.integers(0, n))
    limit = data.draw(st.integers(pos, offset + n))
    p0, need = data.draw(st.integers(-5, 45)), data.draw(st.integers(0, 50))
    before = prev.copy()
    rows, nxt = load("_trace_scan").scan(prev, offset, pos, limit, p0, need)
    hits = np.flatnonzero(prev[pos - offset: limit - offset] < p0) + pos
    assert rows.tolist() == hits[:need].tolist()
    assert nxt == (int(hits[need - 1]) + 1 if 0 < need <= hits.shape[0] else (pos if need == 0 else limit))
    assert prev.tobytes() == before.tobytes()


def test_scan_kernel_refuses_rows_outside_the_copy():
    scan = load("_trace_scan").scan
    prev = np.array([-1, 0, 1], dtype=np.int64)
    for args in [(0, -1, 3, 0, 1), (0, 0, 4, 0, 1), (0, 2, 1, 0, 1), (3, 2, 5, 0, 1), (3, 4, 7, 0, 1)]:
        with pytest.raises(ValueError, match="rows \\[pos, limit\\) must lie in the copy"):
            scan(prev, *args)
    with pytest.raises(ValueError, match="need must be >= 0, got -1"):
        scan(prev, 0, 0, 3, 0, -1)
    with pytest.raises(ValueError):
        scan(np.array([1.0, 2.0]), 0, 0, 2, 0, 1)  # not int64
