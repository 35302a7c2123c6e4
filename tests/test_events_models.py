"""Failure models: values, round trips, the rate as one source of truth, the process contract."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.distributions import Deterministic, Exponential, LogNormal, Weibull, distribution_from_dict
from spare_core.events import (
    FailureModel,
    FailureProcess,
    FailureStream,
    GroupLifetimes,
    SystemRenewals,
    failure_model_kinds,
)
from spare_core.sim import CheckpointOnly, Scenario, SpareCheckpoint, simulate

pos = st.floats(1e-3, 1e9, allow_nan=False, allow_infinity=False)
laws = st.one_of(
    st.builds(Weibull, st.floats(0.2, 5.0), pos),
    st.builds(Exponential, pos),
    st.builds(LogNormal, pos, st.floats(0.05, 3.0)),
    st.builds(Deterministic, pos),
)


@given(laws)
def test_distribution_dict_round_trip_is_exact(d):
    back = distribution_from_dict(json.loads(json.dumps(d.to_dict())))
    assert back == d and type(back) is type(d) and back._params() == d._params()


@pytest.mark.parametrize(
    "data, match",
    [
        ([1.0], "must be a dict"),
        ({"kind": "gamma", "mean": 1.0}, "kind must be one of"),
        ({"kind": "exponential", "mean": 1.0, "rate": 2.0}, "unknown key 'rate'"),
        ({"kind": "weibull", "shape": 1.0}, "lacks key 'scale'"),
        ({"kind": "exponential", "mean": -1.0}, "must be > 0"),
    ],
)
def test_distribution_from_dict_rejects_bad_data(data, match):
    with pytest.raises((TypeError, ValueError), match=match):
        distribution_from_dict(data)


models = st.one_of(
    st.builds(GroupLifetimes, system_mtbf=pos, shape=st.none() | st.floats(0.2, 5.0)),
    st.builds(GroupLifetimes, lifetime=laws),
    st.builds(SystemRenewals, system_mtbf=pos, shape=st.none() | st.floats(0.2, 5.0)),
    st.builds(SystemRenewals, lifetime=laws),
)


@given(models)
def test_failure_model_dict_round_trip_is_exact_and_models_are_frozen(m):
    d = m.to_dict()
    back = FailureModel.from_dict(json.loads(json.dumps(d)))
    assert back == m and type(back) is type(m) and back.to_dict() == d
    assert hash(back) == hash(m) and m.kind in repr(m) or type(m).__name__ in repr(m)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.system_mtbf = 1.0


def test_registered_kinds_and_bad_values():
    assert {"per-unit", "system"} <= set(failure_model_kinds())
    with pytest.raises(ValueError, match="failure_model must be one of"):
        FailureModel.from_dict({"kind": "poisson"})
    with pytest.raises(ValueError, match="unknown key 'mtbf'"):
        FailureModel.from_dict({"kind": "system", "mtbf": 3.0})
    with pytest.raises(ValueError, match="lacks the key 'kind'"):
        FailureModel.from_dict({"system_mtbf": 3.0})
    with pytest.raises(ValueError, match="needs a rate"):
        GroupLifetimes().mtbf(4)  # a model may leave its rate to the scenario, not to the run
    with pytest.raises(ValueError, match="system_mtbf must be > 0.0, got -1.0"):
        SystemRenewals(system_mtbf=-1.0)
    with pytest.raises(TypeError, match="system_mtbf must be a real number"):
        SystemRenewals(system_mtbf="300")
    with pytest.raises(ValueError, match="weibull_shape applies only"):
        GroupLifetimes(lifetime=Exponential(5.0), shape=0.7)
    with pytest.raises(TypeError, match="lifetime must be a distribution"):
        SystemRenewals(lifetime="weibull")


def test_rate_reads_the_law_and_a_mismatch_is_an_error():
    # per group: the system MTBF is the group mean over N; the system model's is its mean
    assert GroupLifetimes(lifetime=Exponential(3600.0)).mtbf(4) == 900.0
    assert SystemRenewals(lifetime=Exponential(3600.0)).mtbf(4) == 3600.0
    assert GroupLifetimes(lifetime=Exponential(3600.0), system_mtbf=900.0).mtbf(4) == 900.0
    with pytest.raises(ValueError, match="lifetime and system_mtbf disagree"):
        GroupLifetimes(lifetime=Exponential(3600.0), system_mtbf=1e6).check(4)
    law = GroupLifetimes(system_mtbf=300.0, shape=0.78).law(600)
    assert law == Weibull.from_mean(600 * 300.0, 0.78)


@pytest.mark.parametrize("model", ["per-unit", "system"])
def test_built_in_models_build_the_stream_the_simulator_always_used(model):
    # the same draws as FailureStream.with_system_mtbf: the paper preset's numbers are unchanged
    m = FailureModel.by_kind(model)(system_mtbf=300.0, shape=0.78)
    a = m.process(50, np.random.SeedSequence(3))
    b = FailureStream.with_system_mtbf(50, 300.0, 0.78, model=model, seed=np.random.SeedSequence(3))
    assert isinstance(a, FailureProcess)
    ta, ua = a.take(20)
    tb, ub = b.next_failures(20)
    assert ta == tb.tolist() and ua == ub.tolist()
    a.restart(a.now + 5.0)
    assert a.epoch == 1 and a.n_alive == 50 and a.epoch_start == a.now


def test_process_take_owes_units_and_rejects_bad_k():
    p = GroupLifetimes(system_mtbf=10.0).process(30, 4)
    ref = GroupLifetimes(system_mtbf=10.0).process(30, 4)
    t, u = p.take(5, False)
    assert u is None and len(t) == 5
    assert p.take_units() == ref.take(5)[1] and p.take_units() == []
    with pytest.raises(ValueError, match="k must be >= 0"):
        p.take(-1)
    with pytest.raises(ValueError, match="restart time must be >= now"):
        p.restart(p.now - 1.0)


# -- the scenario carries one failure model ------------------------------------------------------
def _base(**kw):
    base = dict(n_steps=50, t_compute=10.0, t_allreduce=1.0, restart_time=30.0, checkpoint_time=5.0)
    base.update(kw)
    return Scenario(8, **base)


def test_scenario_lifetime_and_rate_once():
    # issue 12: a lifetime and a contradicting rate used to be simulated from one and
    # checkpointed from the other
    with pytest.raises(ValueError, match="lifetime and system_mtbf disagree.*system_mtbf=1e\\+06"):
        _base(lifetime=Exponential(3600.0), system_mtbf=1e6)
    s = _base(lifetime=Exponential(3600.0))
    assert s.system_mtbf == 450.0 and s.weibull_shape is None
    # the checkpoint rule reads the rate of the failures simulated
    assert "T_f = 450 s" in CheckpointOnly().checkpoint_interval(s).rule
    with pytest.raises(ValueError, match="needs a rate"):
        _base()
    with pytest.raises(ValueError, match="disagrees.*system_mtbf=100"):
        _base(failure_model=SystemRenewals(system_mtbf=300.0), system_mtbf=100.0)
    # a model without its rate takes the scenario's
    s = _base(failure_model=SystemRenewals(), system_mtbf=100.0, weibull_shape=1.5)
    assert s.failures == SystemRenewals(system_mtbf=100.0, shape=1.5) and s.failure_model == "system"
    with pytest.raises(TypeError, match="failure_model must be a name"):
        _base(failure_model=3, system_mtbf=1.0)


def test_presets_give_the_rate_once():
    # the preset's default is node renewals: a lifetime is per node (2,048 nodes of 8 GPUs)
    ll = Scenario.llama3_16k(lifetime=Exponential(2048 * 3600.0))
    assert ll.system_mtbf == pytest.approx(3600.0) and ll.lifetime == Exponential(2048 * 3600.0)
    ll = Scenario.llama3_16k(failure_model="per-unit", lifetime=Exponential(128 * 3600.0))
    assert ll.system_mtbf == pytest.approx(3600.0)
    p = Scenario.paper_600k(200, failure_model=SystemRenewals(system_mtbf=60.0))
    assert p.system_mtbf == 60.0
    p = Scenario.paper_600k(200, failure_model=SystemRenewals())
    assert p.failures == SystemRenewals(system_mtbf=300.0, shape=0.78)


def test_scenario_replace_keeps_or_swaps_the_model():
    s = Scenario.paper_600k(200)
    t = s.replace(failure_model="system")
    assert t.failures == SystemRenewals(system_mtbf=300.0, shape=0.78)
    assert s.replace(system_mtbf=60.0).system_mtbf == 60.0
    assert s.replace(n_groups=400).failures == s.failures and s.replace(n_groups=400).system_mtbf == 300.0


scenarios = st.builds(
    lambda n, steps, tc, fm, life, mtbf, jit, name: Scenario(
        n, n_steps=steps, t_compute=tc, t_allreduce=0.5, failure_model=fm,
        **({"lifetime": life} if life is not None else {"system_mtbf": mtbf}), jitter=jit, name=name),
    st.integers(1, 2000), st.integers(1, 10**6), pos, st.sampled_from(["per-unit", "system"]),
    st.none() | laws, pos, st.floats(0.0, 0.99), st.text(max_size=8),
)


@settings(max_examples=60)
@given(scenarios)
def test_scenario_dict_round_trip_is_exact(s):
    d = s.to_dict()
    text = json.dumps(d, sort_keys=True)
    back = Scenario.from_dict(json.loads(text))
    assert back == s and json.dumps(back.to_dict(), sort_keys=True) == text


def test_scenario_from_dict_errors_name_key_rule_value():
    d = Scenario.paper_600k(200).to_dict()
    with pytest.raises(ValueError, match="unknown key 'mtbf'"):
        Scenario.from_dict({**d, "mtbf": 3.0})
    with pytest.raises(TypeError, match="t_compute must be a real number, got str '64'"):
        Scenario.from_dict({**d, "t_compute": "64"})
    with pytest.raises(ValueError, match="checkpoint_time must be > 0.0, got -1.0"):
        Scenario.from_dict({**d, "checkpoint_time": -1.0})
    with pytest.raises(ValueError, match="failure_model has unknown key 'rate'"):
        Scenario.from_dict({**d, "failure_model": {"kind": "system", "rate": 1.0}})
    with pytest.raises(ValueError, match="lacks the key 'n_groups'"):
        Scenario.from_dict({k: v for k, v in d.items() if k != "n_groups"})
    with pytest.raises(TypeError, match="scenario must be a dict"):
        Scenario.from_dict([("n_groups", 3)])


def test_scenario_with_a_step_time_model_needs_it_given_back():
    class NoDict:
        def sample_multipliers(self, n, rng):
            return np.ones(n)

    s = _base(system_mtbf=100.0, step_time_model=NoDict())
    with pytest.raises(TypeError, match="step_time_model NoDict has no to_dict"):
        s.to_dict()
    d = _base(system_mtbf=100.0).to_dict()
    assert Scenario.from_dict(d, step_time_model=NoDict()).step_time_model is not None


def test_a_model_added_in_its_own_module_runs_without_touching_the_simulator():
    """The recipe of spare_core.events.models: a frozen dataclass registered by kind."""

    class Clockwork:
        """Group g fails at start + (g + 1) * gap in every epoch (a replayed schedule)."""

        def __init__(self, n, gap, start):
            self.n_units, self.gap, self.epoch = n, gap, 0
            self.epoch_start = self.now = start
            self._i = 0

        @property
        def n_alive(self):
            return self.n_units - self._i

        def restart(self, time):
            self.epoch += 1
            self.epoch_start = self.now = float(time)
            self._i = 0

        def take(self, k, with_units=True):
            stop = min(self.n_units, self._i + k)
            units = list(range(self._i, stop))
            times = [self.epoch_start + (u + 1) * self.gap for u in units]
            self._i = stop
            if times:
                self.now = times[-1]
            return times, units

        def take_units(self):
            return []

    @dataclasses.dataclass(frozen=True)
    class Schedule(FailureModel, kind="test-schedule"):
        gap: float = 100.0

        def mtbf(self, n_groups):
            return self.gap

        def process(self, n_groups, seed, *, start=0.0):
            return Clockwork(n_groups, self.gap, start)

        def describe(self, n_groups):
            return f"test-schedule: every {self.gap:g} s"

    s = _base(failure_model=Schedule(gap=25.0), n_steps=40, max_wall_factor=50.0)
    assert Scenario.from_dict(s.to_dict()) == s
    r = simulate(s, CheckpointOnly(interval=math.inf), seed=0, timeline=True)
    assert r.failure_model == "test-schedule: every 25 s"
    # checkpoint-only restarts at each failure: the first failure of every epoch is group 0
    assert r.failures_seen > 0 and set(r.timeline.failure_group.tolist()) == {0}
    rs = simulate(s, SpareCheckpoint(3), seed=0, timeline=True)
    # three groups die at 25 s, 50 s, 75 s after each start; the third wipes out r = 3
    assert rs.timeline.failure_group[:3].tolist() == [0, 1, 2]
    assert np.allclose(np.diff(rs.timeline.failure_time[:3]), 25.0)


def test_cluster_defaults_to_node_renewals():
    s = Scenario.cluster(4096, gpus_per_group=256, n_steps=10, t_compute=1.0, t_allreduce=0.1,
                         system_mtbf=600.0, gpus_per_node=4)
    assert s.n_groups == 16 and s.failure_model == "node" and s.failures.nodes_in_group() == 64
    assert Scenario.cluster(4096, gpus_per_group=256, n_steps=10, t_compute=1.0, t_allreduce=0.1,
                            system_mtbf=600.0, failure_model="system").failure_model == "system"
    with pytest.raises(ValueError, match="n_gpus must be a multiple of gpus_per_group \\(256\\), got 1000"):
        Scenario.cluster(1000, gpus_per_group=256, n_steps=10, t_compute=1.0, t_allreduce=0.1, system_mtbf=1.0)
    with pytest.raises(ValueError, match="gpus_per_group must be a multiple of gpus_per_node \\(8\\), got 100"):
        Scenario.cluster(1000, gpus_per_group=100, n_steps=10, t_compute=1.0, t_allreduce=0.1, system_mtbf=1.0)
