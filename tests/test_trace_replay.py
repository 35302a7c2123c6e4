"""TraceReplay: exact replay order against a slow one-event-at-a-time reference, the three
choices past the end, mapping to groups, rate, serialisation and bad input."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from spare_core.distributions import Weibull
from spare_core.events.models import FailureModel
from spare_core.events.trace import Trace
from spare_core.events.trace_model import TraceReplay


class SlowReplay:
    """Reference: walk the log one row at a time (copies of it when looping)."""

    def __init__(self, tr, after, n_groups, per, start):
        self.t, self.g = tr.times.tolist(), [u // per for u in tr.units.tolist()]
        self.after, self.period, self.n_groups, self.start = after, tr.end, n_groups, start
        self.pos, self.dead, self.now = 0, set(), start

    def event(self, i):
        c, j = divmod(i, len(self.t))
        if self.after != "loop" and c:
            return None
        return self.start + c * self.period + self.t[j], self.g[j]

    def take(self, k):
        times, groups = [], []
        while len(times) < k and len(self.dead) < self.n_groups:
            if self.after == "loop" and set(self.g) <= self.dead:
                break
            ev = self.event(self.pos)
            if ev is None:
                break
            self.pos += 1
            if ev[1] not in self.dead:
                self.dead.add(ev[1])
                times.append(ev[0])
                groups.append(ev[1])
        if times:
            self.now = times[-1]
        return times, groups

    def restart(self, time):
        self.dead, self.now = set(), time
        while (ev := self.event(self.pos)) is not None and ev[0] < time:
            self.pos += 1


@given(
    rows=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 11)), min_size=1, max_size=40),
    extra_end=st.integers(0, 10),
    per=st.sampled_from([1, 2, 3]),
    extra_groups=st.integers(0, 3),
    after=st.sampled_from(["stop", "loop"]),
    start=st.sampled_from([0.0, 7.5]),
    ops=st.lists(st.one_of(st.tuples(st.just("take"), st.integers(0, 9)),
                           st.tuples(st.just("restart"), st.integers(0, 40))), max_size=25),
)
def test_replay_order_matches_slow_reference(rows, extra_end, per, extra_groups, after, start, ops):
    rows = sorted(rows, key=lambda r: r[0])  # stable: ties keep their order
    times = [float(t) for t, _ in rows]
    tr = Trace(times, [u for _, u in rows], end=max(times) + extra_end + (1 if after == "loop" else 0))
    n_groups = -(-tr.n_units // per) + extra_groups
    proc = TraceReplay(tr, after=after, nodes_per_group=per).process(n_groups, seed=0, start=start)
    drive_both(proc, SlowReplay(tr, after, n_groups, per, start), ops, n_groups)


def drive_both(proc, ref, ops, n_groups):
    """Apply ``ops`` (("take", k) or ("restart", half-seconds after now)) to a process and to
    its slow reference; they must agree at every step."""
    for op, arg in ops:
        if op == "take":
            assert proc.take(arg) == ref.take(arg)
        else:
            t = proc.now + arg * 0.5
            proc.restart(t)
            ref.restart(t)
        assert proc.n_alive == n_groups - len(ref.dead) and proc.now == ref.now


def test_long_log_windows_and_loop_copies():
    """A 20,000-row log through windows of many sizes equals the reference."""
    rng = np.random.default_rng(4)
    t = np.sort(rng.integers(0, 5000, 20_000)).astype(float)
    tr = Trace(t, rng.integers(0, 600, t.size), end=5000.0)
    for after in ("stop", "loop"):
        proc = TraceReplay(tr, after=after).process(600, seed=0)
        ref = SlowReplay(tr, after, 600, 1, 0.0)
        for i, k in enumerate([1, 7, 300, 5000, 3, 600, 64]):
            assert proc.take(k) == ref.take(k)
            r = proc.now + 1234.5 * i
            proc.restart(r)
            ref.restart(r)


def test_after_fit_continues_with_the_fitted_law():
    rng = np.random.default_rng(1)
    gaps = Weibull(0.7, 100.0).sample(rng, 400)
    tr = Trace(np.cumsum(gaps), rng.integers(0, 1000, 400), n_units=1000, end=float(np.sum(gaps)) + 50.0)
    model = TraceReplay(tr, after="fit")
    fitted = model.fitted()
    assert fitted.law == "weibull" and fitted.n_censored == 1
    assert fitted.interval("shape")[0] < 0.7 < fitted.interval("shape")[1]
    proc = model.process(1000, seed=3)
    times, groups = proc.take(1000)
    assert len(times) == 1000 and len(set(groups)) == 1000 and times == sorted(times)
    n_log = sum(1 for x in times if x <= tr.end)
    assert n_log == len(set(tr.units.tolist()))  # the log's distinct groups, then the continuation
    after = np.diff(np.array([tr.end] + times[n_log:]))
    assert after.min() > 0 and np.median(after) == pytest.approx(fitted.distribution.scale * math.log(2) ** (1 / fitted.params["shape"]), rel=0.2)
    # same seed, same continuation; another seed, another one
    again = model.process(1000, seed=3).take(1000)
    assert again == (times, groups) and model.process(1000, seed=4).take(1000) != (times, groups)


def test_stop_means_no_failures_past_the_end():
    tr = Trace([1.0, 2.0], [0, 1], end=10.0)
    proc = TraceReplay(tr, after="stop").process(4, seed=0)
    assert proc.take(5) == ([1.0, 2.0], [0, 1])
    assert proc.take(5) == ([], [])
    proc.restart(11.0)
    assert proc.take(5) == ([], []) and proc.n_alive == 4


def test_rate_and_values():
    tr = Trace([10.0, 10.0, 40.0], [0, 5, 2], n_units=8, end=90.0)
    m = TraceReplay(tr, after="loop", nodes_per_group=2)
    assert m.mtbf(4) == 45.0  # 2 distinct instants in 90 s
    assert m.groups(4).tolist() == [0, 2, 1]
    d = m.to_dict()
    assert d["kind"] == "trace" and FailureModel.from_dict(d) == m
    assert m.renews_all_at_restart is False
    assert "3 recorded failures over 90 s" in m.describe(4) and "looped every 90 s" in m.describe(4)


def test_a_log_that_cannot_be_fitted_still_describes_itself_when_not_fitting():
    # equal gaps: no law can be fitted, which only after="fit" needs
    tr = Trace([10.0, 20.0, 30.0], [0, 1, 2], n_units=4, end=40.0)
    for after, words in (("loop", "looped every 40 s"), ("stop", "no failures past its end")):
        assert words in TraceReplay(tr, after=after).describe(4)
    with pytest.raises(ValueError):
        TraceReplay(tr, after="fit")


def test_from_dict_reads_a_path(tmp_path):
    p = tmp_path / "log.csv"
    p.write_text("when,host\n2024-01-01T00:00:10Z,a\n2024-01-01T00:01:00Z,b\n")
    m = FailureModel.from_dict({"kind": "trace", "after": "stop",
                                "trace": {"path": str(p), "time_column": "when", "unit_column": "host"}})
    assert m.trace.times.tolist() == [0.0, 50.0] and m.trace.unit_names == ("a", "b")


def test_bad_input():
    tr = Trace([1.0, 2.0], [0, 7])
    for call, exc, msg in [
        (lambda: TraceReplay(tr), TypeError, "after"),
        (lambda: TraceReplay(tr, after="repeat"), ValueError, "after must be one of"),
        (lambda: TraceReplay([1.0], after="stop"), TypeError, "trace must be a Trace"),
        (lambda: TraceReplay(Trace([], []), after="stop"), ValueError, "at least one failure"),
        (lambda: TraceReplay(Trace([0.0], [0]), after="loop"), ValueError, "end > 0"),
        (lambda: TraceReplay(tr, after="stop", nodes_per_group=0), ValueError, "nodes_per_group must be >= 1"),
        (lambda: TraceReplay(tr, after="stop", law="gamma"), ValueError, "law must be one of"),
        (lambda: TraceReplay(tr, after="stop").process(4, seed=0), ValueError,
         r"the trace's 8 units map to 8 groups \(1 unit per group\) but the job has n_groups=4"),
        (lambda: TraceReplay(Trace([1.0], [0]), after="fit"), ValueError, "at least 2 observed failure"),
        (lambda: TraceReplay(tr, after="stop").process(8, seed=0).restart(-1.0), ValueError, "time must be >="),
        (lambda: FailureModel.from_dict({"kind": "trace", "after": "stop", "trace": {"times": [1.0]}}),
         ValueError, "failure_model.trace must be"),
    ]:
        with pytest.raises(exc, match=msg):
            call()
