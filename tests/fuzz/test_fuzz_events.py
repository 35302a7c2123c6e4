"""Fuzz: distributions, the event engine (Engine, simulate_renewals) and FailureStream.

Custom laws that misbehave (short or long batches, NaN, inf, negative or zero times,
strings, exceptions, a negative or NaN mean), extreme parameters of the built-in laws and
of the engine (bucket widths, max_events, starts, traces), all in forked children: each
must end in a correct answer or one clean error, never a crash, a hang or garbage times.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fuzz_arrays import FLOAT_EDGES, disguise
from fuzz_isolate import run_isolated
from fuzz_profile import fuzz
from spare_core.distributions import Deterministic, Distribution, Exponential, LogNormal, Weibull
from spare_core.events import Engine, FailureStream, simulate_renewals

# the retired event engine (spare_core.events._engine) is fuzzed until it is removed
pytestmark = pytest.mark.filterwarnings("ignore:spare_core.events.* is retired:DeprecationWarning")

MISBEHAVIOURS = ["short", "long", "empty", "nan", "inf", "negative", "zero", "string", "raise", "2d", "list",
                 "ok"]


class Misbehaving(Distribution):
    """A user's law: exponential times, except in the way ``how`` says, from draw ``after`` on."""

    def __init__(self, how, after=0, mean=10.0):
        self.how, self.after, self._m, self.calls = how, after, mean, 0

    @property
    def mean(self):
        return self._m

    @property
    def var(self):
        return 100.0

    def cdf(self, x):
        return 1.0 - np.exp(-np.asarray(x) / 10.0)

    def _params(self):
        return (self.how, self.after)

    def _draw(self, rng, size):
        self.calls += 1
        n = size if isinstance(size, int) else int(np.prod(size))
        out = rng.exponential(10.0, n)
        if self.calls <= self.after or self.how == "ok":
            return out.reshape(size)
        h = self.how
        if h == "short":
            return out[: max(n - 1 - n // 2, 0)]
        if h == "long":
            return np.concatenate([out, out])
        if h == "empty":
            return np.empty(0)
        if h == "nan":
            out[n // 2] = np.nan
        elif h == "inf":
            out[-1] = np.inf
        elif h == "negative":
            out[0] = -1.0
        elif h == "zero":
            out[:] = 0.0
        elif h == "string":
            return "10.0"
        elif h == "raise":
            raise RuntimeError("user law failed")
        elif h == "2d":
            return out.reshape(1, -1)
        elif h == "list":
            return out.tolist()
        return out


def _engine_run(n, life, repair, system, events, bucket_width):
    eng = Engine(n, seed=1, bucket_width=bucket_width)
    if life is not None:
        eng.add_renewals(life, repair)
    if system is not None:
        eng.add_system_failures(system)
    times = []
    for _ in range(events):
        ev = eng.step()
        if ev is None:
            break
        times.append(ev.time)
    return times


def _times_are_sane(times):
    return all(math.isfinite(t) and t >= 0 for t in times) and times == sorted(times)


@fuzz(1.5)
@given(st.integers(1, 40), st.sampled_from(MISBEHAVIOURS), st.integers(0, 2), st.sampled_from(["life", "system",
                                                                                                   "repair"]))
def test_misbehaving_custom_laws_in_the_engine(n, how, after, where):
    law = Misbehaving(how, after)
    life = law if where in ("life", "repair") else None
    if where == "repair":
        life, repair = Exponential(5.0), law
    else:
        repair = Exponential(1.0) if where == "life" else None
    system = law if where == "system" else None
    out = run_isolated(_engine_run, n, life, repair, system, 300, None, case=f"Engine {where}={how}")
    # a user's exception is the user's: it may pass through unchanged
    if out.error_type is RuntimeError and "user law failed" in out.message:
        return
    out.check_clean(f"Engine {where}={how}")
    if out.ok:
        assert _times_are_sane(out.value), out.value[:10]
        # a list of the right length is an array_like like any other; a zero is raised to
        # the smallest positive float (documented)
        assert how in ("ok", "zero", "list") or after > 0, f"a {how} batch was accepted"


@fuzz(1.0)
@given(st.integers(1, 50), st.sampled_from(MISBEHAVIOURS), st.integers(0, 2))
def test_misbehaving_custom_laws_in_simulate_renewals(n, how, after):
    out = run_isolated(lambda: simulate_renewals(n, Misbehaving(how, after), Exponential(1.0), 200.0, seed=3),
                       case=f"simulate_renewals {how}")
    if out.error_type is RuntimeError and "user law failed" in out.message:
        return
    out.check_clean(f"simulate_renewals {how}")
    if out.ok:
        assert how in ("ok", "zero", "list") or after > 0, f"a {how} batch was accepted"


@fuzz(1.0)
@given(st.sampled_from(MISBEHAVIOURS), st.integers(0, 1), st.sampled_from(["per-unit", "system"]))
def test_misbehaving_custom_laws_in_the_failure_stream(how, after, model):
    def go():
        fs = FailureStream(16, Misbehaving(how, after), model=model, seed=5)
        out = [fs.next_failure() for _ in range(40)]
        return [(float(t), int(u)) for t, u in out if t is not None] if out and isinstance(out[0], tuple) else \
            [repr(x) for x in out]
    out = run_isolated(go, case=f"FailureStream {model} {how}")
    if out.error_type is RuntimeError and "user law failed" in out.message:
        return
    out.check_clean(f"FailureStream {how}")


@given(st.sampled_from([-1.0, 0.0, math.nan, math.inf, -math.inf, "x", None]))
@fuzz(0.2)
def test_custom_law_with_a_bad_mean_is_refused(mean):
    out = run_isolated(lambda: simulate_renewals(4, Misbehaving("ok", 0, mean), 1.0, 10.0, seed=0),
                       case=f"mean={mean!r}")
    out.check_clean("custom mean")
    assert not out.ok


@fuzz(2.0)
@given(st.sampled_from(["weibull", "weibull_mean", "exponential", "lognormal", "lognormal_mu", "deterministic"]),
       st.sampled_from(FLOAT_EDGES + [0.001, 0.006, 0.01, 30.0, 700.0, 1e154, 1e200]),
       st.sampled_from(FLOAT_EDGES + [0.001, 0.006, 30.0, 1e154]))
def test_built_in_laws_at_extreme_parameters(kind, a, b):
    def go():
        d = {"weibull": lambda: Weibull(a, b), "weibull_mean": lambda: Weibull.from_mean(b, a),
             "exponential": lambda: Exponential(a), "lognormal": lambda: LogNormal(b, a),
             "lognormal_mu": lambda: LogNormal.from_mu_sigma(b, a), "deterministic": lambda: Deterministic(a)}[kind]()
        m, v, r = d.mean, d.var, repr(d)
        x = d.sample(np.random.default_rng(0), 1000)
        return m, v, bool(np.isfinite(x).all() and (x > 0).all())
    out = run_isolated(go, case=f"{kind}({a}, {b})")
    out.check_clean(f"{kind}({a}, {b})")
    if out.ok:
        m, v, finite = out.value
        assert math.isfinite(m) and m > 0 and math.isfinite(v) and v >= 0
        assert finite, "a sample held a non-finite or non-positive time"


@fuzz(1.0)
@given(st.sampled_from(FLOAT_EDGES + [1e-300, 1e-200, 1e300, 2.0]),
       st.sampled_from([0, 1, 2**62, 2**63 - 1, 2**63, 2**64, -1, 1.5, None]),
       st.sampled_from(FLOAT_EDGES + [None]))
def test_engine_parameters_at_the_edges(width, max_events, until):
    if isinstance(until, float) and until > 1e4 and not (isinstance(max_events, int) and max_events < 10**5):
        until = 100.0   # a run to the end of float time is a legitimate, endless request

    def go():
        eng = Engine(8, seed=0, bucket_width=width)
        eng.add_renewals(Exponential(10.0), Exponential(1.0))
        ev = eng.run(until=until if until is not None else 100.0, max_events=max_events)
        return eng.stats.events if hasattr(eng.stats, "events") else 0, eng.now
    out = run_isolated(go, case=f"Engine(bucket_width={width}).run(until={until}, max_events={max_events})")
    out.check_clean("Engine edges")
    if out.ok:
        events, now = out.value
        assert math.isfinite(now)
        if isinstance(max_events, int) and max_events > 1000 and until in (100.0, None, 1.0):
            # a tiny or huge bucket width "affects speed only": events still happen
            assert events > 0


@fuzz(1.0)
@given(st.integers(1, 10), st.data())
def test_engine_traces_in_any_disguise(n, data):
    k = data.draw(st.integers(0, 12))
    times = np.array(data.draw(st.lists(st.sampled_from(FLOAT_EDGES + [0.5, 2.0, 3.0]), min_size=k, max_size=k)))
    units = np.array(data.draw(st.lists(st.integers(-2, n + 1), min_size=k, max_size=k)), dtype=np.int64)
    t = data.draw(disguise(times))
    u = data.draw(disguise(units))

    def go():
        eng = Engine(n, seed=0)
        eng.add_trace(t, u)
        evs = []
        while (ev := eng.step()) is not None and len(evs) < 100:
            evs.append(ev.time)
        return evs
    out = run_isolated(go, case="Engine.add_trace")
    out.check_clean("Engine.add_trace")
    if out.ok:
        assert _times_are_sane(out.value)
