"""The simulator's failure stream against a heapq reference, under any interleaving of its
operations (hypothesis state machine; the engine has the same kind of test).

The reference keeps one heapq of ``(time, unit)`` per epoch and pops it; its failures come
from an *epoch oracle*:

- per-unit lifetimes without a cumulative hazard: the epoch's lifetimes drawn independently
  from the named stream and pushed into the heap (fully independent of the stream's code);
- system renewals: inter-failure times drawn independently from the named stream and summed
  one by one (times compared to 1e-9 relative, the chunked sums round differently), victims
  from a plain instance put at the epoch and driven through ``next_failure`` only;
- per-unit Weibull/exponential (order statistics): the same plain instance (their law is
  checked against sorting all lifetimes in tests/test_events_stream.py).

Whatever mixture of ``peek``, ``next_failure``, ``next_failures``, ``take`` with or without
units, ``take_units``, ``failures_until``, ``alive`` and ``restart`` the machine runs, the
stream must hand out the reference's failures in the reference's order and agree on
``now``, ``n_alive``, ``failures`` and the alive flags.
"""
from __future__ import annotations

import heapq
import math

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from spare_core._seeding import epoch_stream, stream_rng
from spare_core.distributions import Distribution, Exponential, Weibull
from spare_core.events import FailureStream


class _Uniform(Distribution):
    """A law without a cumulative hazard (the draw-and-sort path)."""

    __slots__ = ()
    kind = "uniform-machine"

    @property
    def mean(self):
        return 5.0

    def _draw(self, rng, size):
        return rng.uniform(0.0, 10.0, size)

    def _params(self):
        return ()


CASES = [("per-unit", _Uniform()), ("per-unit", Weibull(0.78, 40.0)), ("per-unit", Exponential(30.0)),
         ("system", Weibull(0.78, 3.0)), ("system", Exponential(2.0))]


class RefStream:
    """One heapq per epoch, filled from the epoch oracle."""

    def __init__(self, n, law, model, seed):
        self.n, self.law, self.model, self.seed = n, law, model, seed
        self.root = np.random.SeedSequence(seed)
        self.epoch, self.now, self.failures = 0, 0.0, 0
        self.owed = []
        self._begin(0.0)

    def _begin(self, start):
        self.start = self.now = start
        self.alive = [True] * self.n
        n, k = self.n, self.epoch
        if self.model == "per-unit" and isinstance(self.law, _Uniform):
            life = self.law.sample(stream_rng(self.root, "per-unit-lifetimes", k), n)
            self.heap = [(start + float(life[u]), u) for u in range(n)]
            heapq.heapify(self.heap)
            return
        # a plain instance (epoch k at ``start``, nothing else done to it, then next_failure
        # only) gives the order and the victims; times checked independently below
        plain = FailureStream(n, self.law, model=self.model, seed=self.seed, start=start)
        for _ in range(k):
            plain.restart(start)
        out = []
        while True:
            t, u = plain.next_failure()
            if u < 0:
                break
            out.append((t, u))
        if self.model == "system":
            gaps = self.law.sample(epoch_stream(self.root, "system-interarrivals").at(k), n)
            t = start
            for i, g in enumerate(gaps.tolist()):
                t += g
                assert math.isclose(out[i][0], t, rel_tol=1e-9)
        self.heap = [(t, i, u) for i, (t, u) in enumerate(out)]  # already in order
        heapq.heapify(self.heap)

    def peek(self):
        return self.heap[0][0] if self.heap else math.inf

    def pop(self):
        if not self.heap:
            return (math.inf, -1)
        item = heapq.heappop(self.heap)
        t, u = item[0], item[-1]
        self.alive[u] = False
        self.now, self.failures = t, self.failures + 1
        return (t, u)

    def restart(self, t):
        self.epoch += 1
        self.owed = []
        self._begin(t)


class StreamVsHeapq(RuleBasedStateMachine):
    @initialize(case=st.sampled_from(range(len(CASES))), n=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
    def setup(self, case, n, seed):
        model, law = CASES[case]
        self.s = FailureStream(n, law, model=model, seed=seed)
        self.ref = RefStream(n, law, model, seed)

    @rule()
    def peek(self):
        assert self.s.peek() == self.ref.peek()

    @rule()
    def next_failure(self):
        assert self.s.next_failure() == self.ref.pop()
        self.ref.owed = []  # next_failure settles the units owed by take(..., False)

    @rule(k=st.integers(0, 40))
    def next_failures(self, k):
        t, u = self.s.next_failures(k)
        ref = [self.ref.pop() for _ in range(k)]
        ref = [x for x in ref if x[1] >= 0]
        assert t.tolist() == [x[0] for x in ref] and u.tolist() == [x[1] for x in ref]
        self.ref.owed = []

    @rule(k=st.integers(0, 40), with_units=st.booleans())
    def take(self, k, with_units):
        times, units = self.s.take(k, with_units)
        ref = [x for x in (self.ref.pop() for _ in range(k)) if x[1] >= 0]
        assert times == [x[0] for x in ref]
        if with_units:
            assert units == [x[1] for x in ref]
            self.ref.owed = []
        else:
            assert units is None
            self.ref.owed += [x[1] for x in ref]

    @rule()
    def take_units(self):
        assert self.s.take_units() == self.ref.owed
        self.ref.owed = []

    @rule(dt=st.floats(0.0, 40.0))
    def failures_until(self, dt):
        until = self.s.now + dt
        got = self.s.failures_until(until)
        ref = []
        while self.ref.peek() <= until:
            ref.append(self.ref.pop())
        assert got == ref
        if got:  # consuming a failure settles the owed units
            self.ref.owed = []

    @rule(dt=st.floats(0.0, 30.0))
    def restart(self, dt):
        t = self.s.now + dt
        self.s.restart(t)
        self.ref.restart(t)

    @invariant()
    def same_state(self):
        if not hasattr(self, "s"):
            return
        s, ref = self.s, self.ref
        assert (s.epoch, s.now, s.n_alive, s.failures, s.epoch_start) == (
            ref.epoch, ref.now, sum(ref.alive), ref.failures, ref.start)


TestStreamVsHeapq = StreamVsHeapq.TestCase
TestStreamVsHeapq.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


def test_alive_flags_follow_the_reference():
    s = FailureStream(30, Weibull(0.78, 40.0), seed=5)
    ref = RefStream(30, Weibull(0.78, 40.0), "per-unit", 5)
    s.take(7, False)
    for _ in range(7):
        ref.pop()
    assert s.alive.tolist() == ref.alive  # reading alive settles the owed units
    s.restart(s.now + 1.0)
    ref.restart(ref.now + 1.0)
    assert s.alive.all() and s.n_alive == 30
