"""Event engine vs a slow pure-Python heapq reference; determinism; CRN; boundaries; bad input."""
import heapq
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from spare_core.distributions import Deterministic, Exponential, LogNormal, Weibull
from spare_core.events import KINDS, Engine, Event, simulate_renewals
from spare_core._seeding import as_seed_sequence, epoch_stream, stream_rng

# the retired event engine (spare_core.events._engine) is tested until it is removed
pytestmark = pytest.mark.filterwarnings("ignore:spare_core.events.* is retired:DeprecationWarning")

FAILURE, REPAIR, SYSTEM, TRACE, TIMER = range(5)


class _Draws:
    """Lazily refilled stream of pre-sampled numbers (same batch layout as the engine)."""

    def __init__(self, sample, first, batch):
        self.sample, self.batch = sample, batch
        self.buf, self.pos = list(sample(first)), 0

    def take(self):
        if self.pos == len(self.buf):
            self.buf, self.pos = list(self.sample(self.batch)), 0
        self.pos += 1
        return float(self.buf[self.pos - 1])


class RefEngine:
    """The engine's documented semantics, written the obvious way: one heapq of
    (time, seq, kind, slot) with lazy deletion, no calendar, no FIFO, no buffers-in-C."""

    def __init__(self, n, seed, *, life=None, repair=None, system=None, trace=None, timers=(), batch=64):
        self.n, self.root, self.batch = n, as_seed_sequence(seed), batch
        self.life, self.repair, self.system = life, repair, system
        self.trace = trace
        self.now, self.seq, self.epoch = 0.0, 0, 0
        self.heap, self.live = [], {}
        self.alive = [True] * n
        self.alive_list, self.alive_pos = list(range(n)), list(range(n))
        self.timers = {}
        self.c = dict(events=0, failures=0, repairs=0, unit_failures=0, system_failures=0, system_missed=0,
                      trace_failures=0, trace_missed=0, trace_skipped=0, timers=0, peak_down=0)
        self._streams()
        if life is not None:
            for u in range(n):
                self._push(self.now + self.d_life.take(), FAILURE, u)
        if system is not None:
            self._push(self.now + self.d_sys.take(), SYSTEM, "sys")
        self.tpos = 0
        if trace is not None and len(trace[0]):
            self._push(float(trace[0][0]), TRACE, "trace")
        for period in timers:
            self.add_timer(period)

    def _streams(self):
        k, b = self.epoch, self.batch
        if self.life is not None:
            r = stream_rng(self.root, "unit-lifetimes", k)
            self.d_life = _Draws(lambda m, r=r: self.life.sample(r, m), self.n, b)
        if self.repair is not None:
            r = stream_rng(self.root, "unit-repairs", k)
            self.d_rep = _Draws(lambda m, r=r: self.repair.sample(r, m), b, b)
        if self.system is not None:
            r1 = epoch_stream(self.root, "system-interarrivals").at(k)
            r2 = epoch_stream(self.root, "system-victim-uniforms").at(k)
            self.d_sys = _Draws(lambda m, r=r1: self.system.sample(r, m), b, b)
            self.d_vic = _Draws(lambda m, r=r2: r.random(m), b, b)

    def _push(self, t, kind, slot, seq=None):
        if seq is None:
            seq, self.seq = self.seq, self.seq + 1
        self.live[slot] = seq
        heapq.heappush(self.heap, (t, seq, kind, slot))

    def _head(self):
        while self.heap and self.live.get(self.heap[0][3]) != self.heap[0][1]:
            heapq.heappop(self.heap)
        return self.heap[0] if self.heap else None

    def peek(self):
        h = self._head()
        return math.inf if h is None else h[0]

    def add_timer(self, period, first=None, oneshot=False):
        j = min(set(range(64)) - set(self.timers))
        self.timers[j] = 0.0 if oneshot else period
        self._push(self.now + period if first is None else first, TIMER, ("timer", j))
        return j

    def cancel_timer(self, j):
        del self.timers[j]
        self.live.pop(("timer", j), None)

    def _kill(self, u, t):
        self.live.pop(u, None)
        self.alive[u] = False
        last = self.alive_list.pop()
        if last != u:
            pos = self.alive_pos[u]
            self.alive_list[pos], self.alive_pos[last] = last, pos
        self.c["failures"] += 1
        self.c["peak_down"] = max(self.c["peak_down"], self.n - len(self.alive_list))
        if self.repair is not None:
            r = self.repair.value if isinstance(self.repair, Deterministic) else self.d_rep.take()
            self._push(t + r, REPAIR, u)

    def _process(self):
        t, seq, kind, slot = heapq.heappop(self.heap)
        del self.live[slot]
        self.now = t
        unit = slot
        if kind == FAILURE:
            self.c["unit_failures"] += 1
            self._kill(slot, t)
        elif kind == REPAIR:
            self.alive[slot] = True
            self.alive_pos[slot] = len(self.alive_list)
            self.alive_list.append(slot)
            self.c["repairs"] += 1
            if self.life is not None:
                self._push(t + self.d_life.take(), FAILURE, slot)
        elif kind == SYSTEM:
            self.c["system_failures"] += 1
            x = self.d_vic.take()
            if self.alive_list:
                unit = self.alive_list[min(int(x * len(self.alive_list)), len(self.alive_list) - 1)]
                self._kill(unit, t)
            else:
                unit = -1
                self.c["system_missed"] += 1
            self._push(t + self.d_sys.take(), SYSTEM, "sys")
        elif kind == TRACE:
            self.c["trace_failures"] += 1
            unit = int(self.trace[1][self.tpos])
            self.tpos += 1
            if self.alive[unit]:
                self._kill(unit, t)
            else:
                self.c["trace_missed"] += 1
            if self.tpos < len(self.trace[0]):
                self._push(float(self.trace[0][self.tpos]), TRACE, "trace")
        else:
            self.c["timers"] += 1
            unit = slot[1]
            if self.timers[unit] > 0:
                self._push(t + self.timers[unit], TIMER, slot)
        self.c["events"] += 1
        return Event(t, KINDS[kind], unit, seq)

    def run(self, until=math.inf, stop=(), max_events=None):
        done = 0
        while max_events is None or done < max_events:
            h = self._head()
            if h is None or h[0] >= until:
                if until < math.inf:
                    self.now = until
                return None
            ev = self._process()
            done += 1
            if ev.kind in stop:
                return ev
        return None

    def step(self):
        return None if self._head() is None else self._process()

    def restart(self, t):
        self.epoch += 1
        self._streams()
        kept = [(max(h[0], t), h[1], h[2], h[3]) for h in self.heap
                if h[2] == TIMER and self.live.get(h[3]) == h[1]]
        self.heap, self.live = [], {}
        for h in kept:
            self._push(*h[:1], h[2], h[3], seq=h[1])
        self.alive = [True] * self.n
        self.alive_list, self.alive_pos = list(range(self.n)), list(range(self.n))
        self.now = t
        if self.life is not None:
            for u in range(self.n):
                self._push(t + self.d_life.take(), FAILURE, u)
        if self.system is not None:
            self._push(t + self.d_sys.take(), SYSTEM, "sys")
        if self.trace is not None:
            while self.tpos < len(self.trace[0]) and self.trace[0][self.tpos] < t:
                self.tpos += 1
                self.c["trace_skipped"] += 1
            if self.tpos < len(self.trace[0]):
                self._push(float(self.trace[0][self.tpos]), TRACE, "trace")


LIVES = [Weibull(0.78, 20.0), Exponential(15.0), LogNormal(10.0, 1.0), Weibull(2.0, 30.0)]
REPAIRS = [None, Deterministic(3.0), LogNormal(4.0, 0.8), Exponential(2.0)]
SYSTEMS = [None, Weibull(0.78, 5.0), Exponential(8.0)]


def build(n, seed, li, ri, si, trace, timers, batch=64, untracked=False):
    life = None if li is None else LIVES[li]
    repair, system = REPAIRS[ri], SYSTEMS[si]
    # nothing that can cancel a queued event: the kernel runs its pipelined, untracked queue
    untracked = untracked and system is None and trace is None and not timers
    eng = Engine(n, seed=seed, batch=batch, max_timers=0 if untracked else 16)
    if life is not None:
        eng.add_renewals(life, repair)
    elif repair is not None:
        eng.set_repair(repair)
    if system is not None:
        eng.add_system_failures(system)
    if trace is not None:
        eng.add_trace(*trace)
    for p in timers:
        eng.add_timer(p)
    ref = RefEngine(n, seed, life=life, repair=repair, system=system, trace=trace, timers=timers, batch=batch)
    return eng, ref


def assert_same(eng, ref):
    assert eng.now == ref.now
    assert list(eng.alive) == ref.alive
    assert eng.stats._asdict() == ref.c
    assert eng.peek() == ref.peek()


scenario = st.fixed_dictionaries(
    dict(
        n=st.integers(1, 12),
        seed=st.integers(0, 2**20),
        li=st.one_of(st.none(), st.integers(0, len(LIVES) - 1)),
        ri=st.integers(0, len(REPAIRS) - 1),
        si=st.integers(0, len(SYSTEMS) - 1),
        trace=st.booleans(),
        timers=st.lists(st.sampled_from([7.0, 25.0, 60.0]), max_size=2),
        untracked=st.booleans(),
    )
)


def _trace_for(n, seed, on):
    if not on:
        return None
    rng = np.random.default_rng(seed)
    m = int(rng.integers(0, 30))
    times = np.sort(np.round(rng.uniform(0, 200, m), 1))  # rounded: simultaneous entries happen
    return times, rng.integers(0, n, m)


class EngineVsHeapq(RuleBasedStateMachine):
    @initialize(sc=scenario)
    def setup(self, sc):
        trace = _trace_for(sc["n"], sc["seed"], sc["trace"])
        self.eng, self.ref = build(
            sc["n"], sc["seed"], sc["li"], sc["ri"], sc["si"], trace, sc["timers"], untracked=sc["untracked"])
        self.max_timers = self.eng._max_timers

    @rule()
    def step(self):
        assert self.eng.step() == self.ref.step()

    @rule(dt=st.floats(0, 50), stop=st.lists(st.sampled_from(KINDS), max_size=3, unique=True),
          cap=st.one_of(st.none(), st.integers(0, 40)))
    def run(self, dt, stop, cap):
        until = self.eng.now + dt
        assert self.eng.run(until, stop_on=stop, max_events=cap) == self.ref.run(until, tuple(stop), cap)

    @rule(dt=st.floats(0, 30))
    def restart(self, dt):
        t = self.eng.now + dt
        self.eng.restart(t)
        self.ref.restart(t)

    @precondition(lambda self: len(self.ref.timers) < min(4, self.max_timers))
    @rule(period=st.sampled_from([1.5, 10.0, 33.0]), oneshot=st.booleans())
    def timer(self, period, oneshot):
        j = self.eng.schedule(period) if oneshot else self.eng.add_timer(period)
        assert j == self.ref.add_timer(period, oneshot=oneshot)

    @precondition(lambda self: len(self.ref.timers) > 0)
    @rule(data=st.data())
    def cancel(self, data):
        j = data.draw(st.sampled_from(sorted(self.ref.timers)))
        self.eng.cancel_timer(j)
        self.ref.cancel_timer(j)

    @invariant()
    def same_state(self):
        if hasattr(self, "eng"):
            assert_same(self.eng, self.ref)


TestEngineVsHeapq = EngineVsHeapq.TestCase
TestEngineVsHeapq.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)


@given(sc=scenario, until=st.floats(1, 400))
def test_run_until_matches_reference_event_by_event(sc, until):
    trace = _trace_for(sc["n"], sc["seed"], sc["trace"])
    eng, ref = build(sc["n"], sc["seed"], sc["li"], sc["ri"], sc["si"], trace, sc["timers"], untracked=sc["untracked"])
    got, want = [], []
    while (ev := eng.run(until, stop_on=KINDS)) is not None:
        got.append(ev)
    while (ev := ref.run(until, KINDS)) is not None:
        want.append(ev)
    assert got == want
    assert_same(eng, ref)


@given(
    n=st.integers(1, 40), seed=st.integers(0, 2**20), li=st.integers(0, len(LIVES) - 1),
    ri=st.integers(0, len(REPAIRS) - 1), horizon=st.floats(1, 300),
)
def test_simulate_renewals_matches_reference_and_engine(n, seed, li, ri, horizon):
    life, repair = LIVES[li], REPAIRS[ri]
    got = simulate_renewals(n, life, repair, horizon, seed=seed, batch=64)
    ref = RefEngine(n, seed, life=life, repair=repair, batch=64)
    ref.run(horizon)
    assert (got.failures, got.repairs, got.events, got.peak_down) == (
        ref.c["failures"], ref.c["repairs"], ref.c["events"], ref.c["peak_down"])
    eng = Engine(n, seed=seed, batch=64)
    eng.add_renewals(life, repair)
    eng.run(horizon)
    s = eng.stats
    assert (s.failures, s.repairs, s.events, s.peak_down) == got[:4]


def test_calendar_survives_wide_time_scales_and_bucket_widths():
    # bucket width far too small / too large: the year-skip and the direct search kick in
    life = Weibull(0.3, 50.0)  # very heavy tail: gaps span many orders of magnitude
    for width in (1e-6, 1e-13, 1e6):  # 1e-13: bucket numbers beyond 2**52 (integer path)
        eng = Engine(30, seed=4, bucket_width=width, batch=64)
        eng.add_renewals(life, LogNormal(2.0, 2.0))
        ref = RefEngine(30, 4, life=life, repair=LogNormal(2.0, 2.0), batch=64)
        assert eng.run(5000.0, stop_on=KINDS) == ref.run(5000.0, KINDS)
        for _ in range(300):
            assert eng.step() == ref.step()
        assert_same(eng, ref)


def test_simultaneous_events_fifo_by_sequence():
    eng = Engine(5, seed=0)
    eng.add_renewals(Deterministic(10.0), Deterministic(10.0))
    t0 = eng.add_timer(10.0)
    evs = [eng.step() for _ in range(7)]
    # all five units fail at t=10 in unit order (scheduled first), then the timer
    assert [(e.time, e.kind, e.unit) for e in evs[:6]] == [(10.0, "failure", u) for u in range(5)] + [
        (10.0, "timer", t0)]
    assert (evs[6].time, evs[6].kind, evs[6].unit) == (20.0, "repair", 0)
    assert [e.seq for e in evs[:6]] == sorted(e.seq for e in evs[:6])


def test_run_until_boundary_semantics():
    eng = Engine(1, seed=0)
    tid = eng.add_timer(10.0)
    assert eng.run(until=10.0, stop_on="timer") is None  # event at exactly `until` stays pending
    assert eng.now == 10.0 and eng.peek() == 10.0 and eng.stats.timers == 0
    ev = eng.run(until=10.000001, stop_on="timer")
    assert ev == Event(10.0, "timer", tid, ev.seq) and eng.now == 10.0
    assert eng.run(until=30.0) is None and eng.now == 30.0 and eng.stats.timers == 2  # 20 fired, 30 pending
    assert eng.run(until=30.0) is None and eng.now == 30.0  # empty interval: nothing happens
    with pytest.raises(ValueError, match="until must be >= now"):
        eng.run(until=29.0)


def test_run_resumable_partitions_time():
    mk = lambda: Engine(20, seed=8)  # noqa: E731
    a, b = mk(), mk()
    for e in (a, b):
        e.add_renewals(Weibull(0.78, 30.0), LogNormal(5.0, 1.0))
    a.run(until=500.0)
    for until in np.linspace(0, 500, 37)[1:]:
        b.run(until=float(until))
    assert a.stats == b.stats and a.now == b.now and list(a.alive) == list(b.alive)


def test_determinism_and_common_random_numbers():
    def failures(seed, restart_at):
        eng = Engine(50, seed=seed)
        eng.add_renewals(Weibull(0.7, 100.0))  # no repair: units stay down until restart
        out = []
        for r in restart_at:
            while (ev := eng.run(until=r, stop_on="failure")) is not None:
                out.append((eng.epoch, ev.time - (0 if eng.epoch == 0 else last), ev.unit))
            eng.restart(r)
            last = r
        return out

    a = failures(3, [40.0, 100.0, 300.0])
    assert a == failures(3, [40.0, 100.0, 300.0])
    assert a != failures(4, [40.0, 100.0, 300.0])
    # a policy restarting at other times sees, within each epoch, the same failures
    b = failures(3, [55.0, 200.0, 260.0])
    for k in (0, 1, 2):
        ea = [x for x in a if x[0] == k]
        eb = [x for x in b if x[0] == k]
        m = min(len(ea), len(eb))
        assert m > 0
        assert [u for _, _, u in ea[:m]] == [u for _, _, u in eb[:m]]
        np.testing.assert_allclose([t for _, t, _ in ea[:m]], [t for _, t, _ in eb[:m]], rtol=1e-9)


def test_restart_bursts_with_weibull_shape_below_one():
    eng = Engine(200, seed=5)
    eng.add_renewals(Weibull(0.6, 1000.0))
    firsts = []
    for k in range(30):
        t0 = eng.now
        evs = [eng.run(stop_on="failure") for _ in range(20)]
        firsts.append((evs[4].time - t0, evs[19].time - evs[14].time))
        eng.restart(eng.now + 1.0)
    early, late = np.mean(firsts, axis=0)
    assert early < late


def test_system_source_hits_alive_units_uniformly():
    eng = Engine(4, seed=2)
    eng.add_system_failures(Exponential(1.0))
    eng.set_repair(Deterministic(0.5))
    eng.run(until=20000.0)
    s = eng.stats
    hits = np.zeros(4)
    eng2 = Engine(4, seed=2)
    eng2.add_system_failures(Exponential(1.0))
    eng2.set_repair(Deterministic(0.5))
    while (ev := eng2.run(until=2000.0, stop_on="system-failure")) is not None:
        if ev.unit >= 0:
            hits[ev.unit] += 1
    assert s.system_failures > 15000 and s.failures + s.system_missed == s.system_failures
    assert np.all(np.abs(hits / hits.sum() - 0.25) < 0.03)


def test_trace_replay_from_csv(tmp_path):
    p = tmp_path / "trace.csv"
    p.write_text("time,unit\n1.5,2\n1.5,0\n# comment\n4.0,2\n9.0,1\n")
    eng = Engine(3, seed=0)
    eng.add_trace_csv(p)
    eng.set_repair(3.0)
    evs = []
    while (ev := eng.step()) is not None:
        evs.append((ev.time, ev.kind, ev.unit))
    assert evs == [
        (1.5, "trace-failure", 2), (1.5, "trace-failure", 0), (4.0, "trace-failure", 2),
        (4.5, "repair", 2), (4.5, "repair", 0), (9.0, "trace-failure", 1), (12.0, "repair", 1),
    ]
    assert eng.stats.trace_missed == 1  # unit 2 was still down at t=4


def test_restart_moves_due_timers_and_skips_old_trace():
    eng = Engine(2, seed=0)
    eng.add_trace([5.0, 50.0], [0, 1])
    tid = eng.add_timer(10.0)
    eng.restart(35.0)
    ev = eng.step()
    assert (ev.time, ev.kind, ev.unit) == (35.0, "timer", tid)
    assert eng.stats.trace_skipped == 1
    assert eng.step()[:3] == (45.0, "timer", tid)
    assert eng.step()[:3] == (50.0, "trace-failure", 1)


def test_schedule_and_timer_management():
    eng = Engine(1, seed=0, max_timers=2)
    a = eng.schedule(0.0)
    b = eng.schedule(5.0)
    with pytest.raises(ValueError, match="too many pending timers"):
        eng.schedule(1.0)
    assert eng.step()[:3] == (0.0, "timer", a)
    c = eng.schedule(2.0)  # a's id is reclaimed once it fired
    assert c == a
    eng.cancel_timer(b)
    assert eng.step()[:3] == (2.0, "timer", c)
    assert eng.step() is None and eng.peek() == math.inf
    eng2 = Engine(1, seed=0)
    t = eng2.add_timer(10.0)
    eng2.run(until=3.0)
    eng2.reset_timer(t)
    assert eng2.peek() == 13.0


def test_stall_is_detected_not_hung():
    eng = Engine(2, seed=0, start=1e17)
    eng.add_renewals(Deterministic(1.0), Deterministic(1.0))  # 1.0 is below the ulp of 1e17
    with pytest.raises(RuntimeError, match="stopped advancing"):
        eng.run(until=2e17)


def test_repr_and_alive_snapshot():
    eng = Engine(3, seed=0)
    eng.add_renewals(Exponential(1.0), 1.0)
    assert "n_units=3" in repr(eng) and "Exponential" in repr(eng)
    a = eng.alive
    a[:] = False
    assert eng.alive.all()
    r = simulate_renewals(10, Exponential(1.0), 0.5, 10.0, seed=1)
    assert "failures=" in repr(r) and r.events == r.failures + r.repairs


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda: Engine(0, seed=1), ValueError, "n_units must be >= 1"),
        (lambda: Engine(3, seed=None), TypeError, "seed must be given"),
        (lambda: Engine(3, seed=1, start=-1.0), ValueError, "start must be >= 0"),
        (lambda: Engine(3, seed=1).add_renewals(Weibull(0.7, 1.0), -2.0), ValueError, "repair must be > 0"),
        (lambda: Engine(3, seed=1).add_timer(0.0), ValueError, "period must be > 0"),
        (lambda: Engine(3, seed=1).schedule(-1.0), ValueError, "delay must be >= 0"),
        (lambda: Engine(3, seed=1).add_trace([2.0, 1.0], [0, 1]), ValueError, "non-decreasing"),
        (lambda: Engine(3, seed=1).add_trace([1.0], [3]), ValueError, "trace units must be <= 2"),
        (lambda: Engine(3, seed=1).add_trace([1.0, 2.0], [0]), ValueError, "length 2"),
        (lambda: Engine(3, seed=1).add_trace([math.nan], [0]), ValueError, "finite"),
        (lambda: Engine(3, seed=1).run(stop_on=("crash",)), ValueError, "stop_on kind must be one of"),
        (lambda: Engine(3, seed=1).run(max_events=-1), ValueError, "max_events must be >= 0"),
        (lambda: Engine(3, seed=1).cancel_timer(0), ValueError, "active timer"),
        (lambda: simulate_renewals(0, 1.0, 1.0, 1.0, seed=1), ValueError, "n_units must be >= 1"),
        (lambda: simulate_renewals(3, Weibull(0.7, 1.0), 1.0, 0.0, seed=1), ValueError, "horizon must be > 0"),
        (lambda: simulate_renewals(3, "weibull", 1.0, 1.0, seed=1), TypeError, "lifetime must be a distribution"),
        (lambda: simulate_renewals(3, 1.0, 1.0, math.inf, seed=1), ValueError, "horizon must be finite"),
    ],
)
def test_bad_input(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_unbounded_run_of_perpetual_engine_is_refused():
    eng = Engine(3, seed=1)
    eng.add_renewals(Exponential(1.0), 1.0)
    with pytest.raises(ValueError, match="would never end"):
        eng.run()
    with pytest.raises(RuntimeError, match="before the engine starts"):
        eng.step()
        eng.add_system_failures(1.0)
    # a finite engine may run to exhaustion
    fin = Engine(3, seed=1)
    fin.add_renewals(Exponential(1.0))
    assert fin.run() is None and fin.n_alive == 0 and fin.stats.failures == 3


@pytest.mark.parametrize("life", LIVES + [Deterministic(4.0)])
def test_batch_layout_does_not_change_results(life):
    # the built-in distributions draw sequentially from the stream, so refill sizes are free
    rs = [simulate_renewals(50, life, LogNormal(3.0, 1.0), 400.0, seed=9, batch=b) for b in (1, 37, 4096)]
    assert rs[0] == rs[1] == rs[2]


def test_engine_and_simulator_share_the_system_stream():
    """One table of stream names: the engine's system source and the simulator's system
    renewals draw their inter-failure times from the same stream, epoch by epoch."""
    from spare_core.events import FailureStream

    law = Weibull(0.78, 50.0)
    for epoch_gap in (0.0, 123.0):
        eng = Engine(40, seed=9)
        eng.add_system_failures(law)
        fs = FailureStream(40, law, model="system", seed=9)
        for k in range(3):
            times = []
            while len(times) < 10:
                ev = eng.run(stop_on="system-failure")
                times.append(ev.time)
            ref, _ = fs.next_failures(10)
            assert np.allclose(np.array(times) - eng_start, ref - fs.epoch_start, rtol=0, atol=1e-9) if k else \
                times == ref.tolist()
            t = max(eng.now, fs.now) + epoch_gap
            eng.restart(t)
            fs.restart(t)
            eng_start = t


def test_the_retired_engine_warns_naming_the_callers_line():
    import warnings

    from spare_core.distributions import Exponential
    from spare_core.events import simulate_renewals as sr

    for make in (lambda: Engine(4, seed=0), lambda: sr(4, Exponential(5.0), None, 10.0, seed=0)):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            make()
        assert len(got) == 1 and issubclass(got[0].category, DeprecationWarning)
        assert "is retired" in str(got[0].message) and got[0].filename == __file__
