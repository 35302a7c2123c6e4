"""The correlated-domains failure model against a slow heapq reference, statistics and the simulator."""
import heapq
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core._seeding import EpochStream, as_seed_sequence
from spare_core.distributions import Deterministic, Exponential, Weibull
from spare_core.events import FailureModel, FailureProcess, GroupLifetimes, SystemRenewals
from spare_core.events.domains import STREAM, DomainFailures
from spare_core.strategies.spare.layout import StackedLayout
from spare_core.topology import FailureDomains


def run_process(model, n, seed, plan):
    """Drive the process: per epoch take ``chunks`` then restart ``delay`` after now."""
    proc = model.process(n, seed)
    epochs, starts = [], [0.0]
    for chunks, delay in plan:
        t_all, g_all = [], []
        for c in chunks:
            t, g = proc.take(c, with_units=bool(c % 2))
            t_all += t
            g_all += g
            if len(t) < c:
                break
        epochs.append((t_all, g_all))
        starts.append(proc.now + delay)
        proc.restart(starts[-1])
    return epochs, starts


def reference(model, n, seed, starts, counts):
    """Heapq merge of the base model's failures (drained per epoch, shifted to the epoch start)
    and the domain clocks of each epoch (drawn from the documented stream)."""
    root = as_seed_sequence(seed)
    base = model.base.process(n, root)
    clocks = EpochStream(root, STREAM)
    fd = model.domains(n)
    out = []
    for k, (s, count) in enumerate(zip(starts, counts)):
        if k:
            t0 = max(s, base.now)
            base.restart(t0)
        else:
            t0 = 0.0
        bt, bg = base.take(10 * n, True)
        heap = [(s + (t - t0), 0, i, g) for i, (t, g) in enumerate(zip(bt, bg))]
        rng = clocks.at(k)
        d0 = 0
        for level, law in enumerate(model.lifetimes):
            rel = law.sample(rng, fd.n_domains[level])
            for d, x in enumerate(rel.tolist()):
                heap.append((s + x, 1, d0 + d, (level, d)))
            d0 += fd.n_domains[level]
        heapq.heapify(heap)
        alive = [True] * n
        times, groups = [], []
        while heap and len(times) < count:
            t, is_dom, _, what = heapq.heappop(heap)
            if not is_dom:
                if alive[what]:
                    alive[what] = False
                    times.append(t)
                    groups.append(what)
            else:
                level, d = what
                for g in range(n):
                    if fd.labels[level][g] == d and alive[g]:
                        alive[g] = False
                        times.append(t)
                        groups.append(g)
        out.append((times[:count], groups[:count]))
    return out


MODELS = [
    DomainFailures(GroupLifetimes(system_mtbf=50.0), [Exponential(400.0)], groups_per_domain=[4]),
    DomainFailures(SystemRenewals(system_mtbf=30.0), [Exponential(2000.0), Weibull(0.7, 300.0)],
                   groups_per_domain=[12, 3], names=["power", "rack"]),
    DomainFailures(GroupLifetimes(lifetime=Weibull(0.78, 900.0)), [Exponential(500.0)],
                   labels=[[0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 3, 3, 3, 4, 4, 4, 4]]),
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(MODELS))), st.integers(0, 2**32 - 1),
       st.lists(st.tuples(st.lists(st.integers(0, 9), min_size=1, max_size=6), st.floats(0.0, 50.0)),
                min_size=1, max_size=5))
def test_process_matches_heapq_reference(which, seed, plan):
    model = MODELS[which]
    n = 20 if model.labels is not None else 24
    epochs, starts = run_process(model, n, seed, plan)
    ref = reference(model, n, seed, starts[:-1], [len(t) for t, _ in epochs])
    for (t, g), (rt, rg) in zip(epochs, ref):
        assert g == rg
        assert np.allclose(t, rt, rtol=1e-12, atol=1e-9)
        assert all(a <= b for a, b in zip(t, t[1:]))  # time order, ties allowed
        assert len(set(g)) == len(g)  # no group twice in an epoch


def test_process_follows_the_protocol_and_drains():
    model = MODELS[1]
    proc = model.process(24, seed=5, start=10.0)
    assert isinstance(proc, FailureProcess)
    assert proc.epoch_start == 10.0 and proc.n_alive == 24 and proc.n_units == 24
    t, g = proc.take(100)
    assert len(t) == 24 and sorted(g) == list(range(24)) and proc.n_alive == 0
    assert proc.take(3) == ([], []) and proc.take_units() == []
    with pytest.raises(ValueError, match="time must be >= now"):
        proc.restart(proc.now - 1.0)
    proc.restart(proc.now + 1.0)
    assert proc.epoch == 1 and proc.n_alive == 24


def test_without_domain_failures_the_base_failures_are_unchanged():
    # common random numbers: a domain that never fails in the horizon leaves the base's failures
    base = GroupLifetimes(system_mtbf=60.0)
    model = DomainFailures(base, [Deterministic(1e15)], groups_per_domain=[5])
    for seed in range(3):
        p, q = model.process(30, seed), base.process(30, seed)
        for _ in range(3):
            a, b = p.take(12), q.take(12)
            assert a == b
            p.restart(p.now + 7.0)
            q.restart(q.now + 7.0)


def test_first_failure_share_matches_the_rates():
    # exponential base (system renewals) and exponential domains: the first failure is a domain
    # failure with probability (D / b) / (1 / a + D / b)
    a, b, d = 100.0, 1500.0, 5
    model = DomainFailures(SystemRenewals(lifetime=Exponential(a)), [Exponential(b)], groups_per_domain=[4])
    n_runs = 3000
    hits = 0
    for seed in range(n_runs):
        t, g = model.process(20, seed).take(2)
        hits += len(t) == 2 and t[0] == t[1]  # a domain of 4 groups fails at one instant
    p = (d / b) / (1 / a + d / b)
    assert abs(hits / n_runs - p) < 4 * math.sqrt(p * (1 - p) / n_runs)
    assert math.isclose(model.mtbf(20), 1 / (1 / a + d / b))


def test_nested_power_domain_downs_its_racks():
    model = DomainFailures(GroupLifetimes(system_mtbf=1e9), [Deterministic(10.0), Deterministic(5.0)],
                           groups_per_domain=[6, 3], names=["power", "rack"])
    t, g = model.process(12, seed=0).take(20)
    # racks fail first (t = 5: every rack downs its 3 groups), the power clocks at t = 10 find nothing
    assert g == list(range(12)) and t == [5.0] * 12


def test_values_round_trip_and_describe():
    for m in MODELS:
        d = m.to_dict()
        assert FailureModel.from_dict(d) == m and DomainFailures.from_dict(d).to_dict() == d
    m = MODELS[1]
    assert m.kind == "domains" and m.renews_all_at_restart
    assert m.domains(24) == FailureDomains.contiguous(24, [12, 3], names=("power", "rack"))
    assert "2 power domains" in m.describe(24) and "8 rack domains" in m.describe(24)
    assert math.isclose(m.mtbf(24), 1 / (1 / 30 + 2 / 2000 + 8 / Weibull(0.7, 300.0).mean))


@pytest.mark.parametrize(
    "kw,exc,match",
    [
        (dict(base="per-unit", lifetimes=[1.0], groups_per_domain=[2]), TypeError, "base must be a FailureModel"),
        (dict(lifetimes=[1.0]), ValueError, "exactly one of groups_per_domain"),
        (dict(lifetimes=[1.0], groups_per_domain=[2], labels=[[0, 1]]), ValueError, "exactly one of"),
        (dict(lifetimes=[], groups_per_domain=[]), ValueError, "one law per level, got none"),
        (dict(lifetimes=Exponential(1.0), groups_per_domain=[2]), TypeError, "lifetimes must be a sequence"),
        (dict(lifetimes=[1.0, 2.0], groups_per_domain=[2]), ValueError, "one entry per level"),
        (dict(lifetimes=[1.0, 2.0], groups_per_domain=[4, 3]), ValueError, "groups_per_domain must be nested"),
        (dict(lifetimes=[-1.0], groups_per_domain=[2]), ValueError, "lifetimes\\[0\\] must be > 0"),
        (dict(lifetimes=["x"], groups_per_domain=[2]), TypeError, "lifetimes\\[0\\] must be a distribution"),
        (dict(lifetimes=[1.0], groups_per_domain=[0]), ValueError, "groups_per_domain\\[0\\] must be >= 1"),
        (dict(lifetimes=[1.0], labels=[[0, 0, 1], [0, 1, 2]]), ValueError, "one row per level"),
        (dict(lifetimes=[1.0], groups_per_domain=[2], names=["a", "b"]), ValueError, "names must be 1 non-empty"),
    ],
)
def test_bad_models(kw, exc, match):
    kw.setdefault("base", GroupLifetimes(system_mtbf=10.0))
    with pytest.raises(exc, match=match):
        DomainFailures(**kw)


def test_labels_must_match_the_job():
    m = MODELS[2]
    with pytest.raises(ValueError, match="labels give a domain for 20 groups, the job has n_groups=24"):
        m.check(24)
    with pytest.raises(ValueError, match="unknown key 'rate'"):
        FailureModel.from_dict({**m.to_dict(), "rate": 1.0})


def test_scenario_and_simulate_with_rack_aware_stacks():
    from spare_core.sim import Scenario, SpareCheckpoint, simulate

    model = DomainFailures(GroupLifetimes(system_mtbf=300.0), [Exponential(20 * 3000.0)], groups_per_domain=[10])
    sc = Scenario(60, n_steps=300, t_compute=64.0, t_allreduce=2.0, failure_model=model)
    assert sc.failure_model == "domains" and math.isclose(sc.system_mtbf, model.mtbf(60))
    assert Scenario.from_dict(sc.to_dict()).failures == model
    lay = StackedLayout.rack_aware(model.domains(60), 3)
    a = simulate(sc, SpareCheckpoint(3, layout=lay), seed=4)
    b = simulate(sc, SpareCheckpoint(3, layout=lay), seed=4)
    assert a.time_to_train == b.time_to_train and a.finished
    with pytest.raises(ValueError, match="layout must have n_groups = 60, got 30"):
        simulate(sc, SpareCheckpoint(3, layout=StackedLayout(30, 3)), seed=0)
    with pytest.raises(ValueError, match="layout must have redundancy r = 4, got 3"):
        SpareCheckpoint(4, layout=lay)
    with pytest.raises(ValueError, match="give offsets or layout, not both"):
        SpareCheckpoint(3, offsets="sidon", layout=lay)
