"""Node renewals against an independent slow reference (a heapq renewal superposition)."""
from __future__ import annotations

import heapq
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from spare_core.distributions import Exponential, LogNormal, Weibull
from spare_core.events import FailureModel, NodeEpochs, NodeFailureLog, NodeRenewalProcess, NodeRenewals
from spare_core.sim import CheckpointOnly, Scenario, SpareCheckpoint, simulate

LAWS = [Weibull(0.78, 50.0), Exponential(40.0), LogNormal(60.0, 1.2), Weibull(2.0, 30.0)]


class ScriptedLog(NodeFailureLog):
    """The fast log, its lifetimes taken from per-node scripts instead of the generator."""

    def __init__(self, first, scripts, n_groups, npg, chunk):
        super().__init__(Exponential(1.0), n_groups, npg, 0, chunk_seconds=chunk)
        self._next = np.array(first, dtype=float)
        self._scripts = [iter(s) for s in scripts]

    def draw_lifetimes(self, nodes):
        return np.array([next(self._scripts[i]) for i in nodes.tolist()], dtype=float)


def heap_log(first, scripts, npg, horizon):
    """Reference: every node failure before ``horizon`` by a heapq event loop, (time, node) order."""
    heap = [(t, i) for i, t in enumerate(first)]
    heapq.heapify(heap)
    its = [iter(s) for s in scripts]
    out = []
    while heap and heap[0][0] < horizon:
        t, i = heapq.heappop(heap)
        out.append((t, i // npg))
        heapq.heappush(heap, (t + next(its[i]), i))
    return out


def job_view(log, n_groups, history):
    """Reference: what a run sees. ``history`` is a list of (start, failures taken)."""
    seen = []
    for start, m in history:
        dead = set()
        epoch = []
        for t, g in log:
            if t <= start or g in dead:
                continue
            dead.add(g)
            epoch.append((t, g))
            if len(epoch) == m or len(dead) == n_groups:
                break
        seen.append(epoch)
    return seen


@st.composite
def cases(draw):
    n_groups = draw(st.integers(1, 6))
    npg = draw(st.integers(1, 3))
    law = draw(st.sampled_from(LAWS))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    n = n_groups * npg
    first = law.sample_residual(rng, n)
    scripts = [law.sample(rng, 400) for _ in range(n)]
    chunk = draw(st.sampled_from([7.0, 33.0, 250.0]))
    epochs = draw(st.lists(st.tuples(st.integers(1, 8), st.floats(0.0, 80.0)), min_size=1, max_size=6))
    return n_groups, npg, first, scripts, chunk, epochs


@settings(max_examples=60, deadline=None)
@given(cases())
def test_log_and_epochs_equal_a_heapq_superposition(case):
    n_groups, npg, first, scripts, chunk, epochs = case
    fast = ScriptedLog(first, scripts, n_groups, npg, chunk)
    proc = NodeRenewalProcess(NodeEpochs(fast))
    history, got = [], []
    start = 0.0
    for m, gap in epochs:
        times, units = proc.take(m)
        history.append((start, m))
        got.append(list(zip(times, units)))
        start = (times[-1] if times else start) + gap
        proc.restart(start)
    horizon = fast.horizon
    ref_log = heap_log(first, scripts, npg, horizon)
    # the log: same failures, same order, same groups, up to the drawn horizon
    assert list(zip(fast.times, fast.groups)) == ref_log
    want = job_view(ref_log, n_groups, history)
    for (s, _), mine, ref in zip(history, got, want):
        assert [g for _, g in mine] == [g for _, g in ref]
        assert [t for t, _ in mine] == [s + (t - s) for t, _ in ref]


def test_shared_source_gives_each_run_what_a_fresh_one_would():
    m = NodeRenewals(system_mtbf=20.0, nodes_per_group=2)
    shared = m.epoch_source(8, np.random.SeedSequence(4))
    hist_a = [(0, 0.0), (1, 55.5), (2, 170.25)]
    hist_b = [(0, 0.0), (1, 31.0), (2, 90.0), (3, 400.0)]
    out = {}
    for name, hist in (("a", hist_a), ("b", hist_b), ("a2", hist_a)):
        out[name] = [tuple(map(np.ndarray.tolist, shared.get(k, 5, 8, start=s))) for k, s in hist]
    for name, hist in (("a", hist_a), ("b", hist_b)):
        fresh = m.epoch_source(8, np.random.SeedSequence(4))
        assert out[name] == [tuple(map(np.ndarray.tolist, fresh.get(k, 5, 8, start=s))) for k, s in hist]
    assert out["a2"] == out["a"]
    t, u = shared.get(0, 100, start=0.0)
    assert t.shape == (8,) and sorted(u.tolist()) == list(range(8))  # every group out once
    assert shared.next_time(0, 8, start=0.0) == math.inf
    with pytest.raises(TypeError, match="start must be given"):
        shared.get(1, 1, start=None)


def test_a_single_node_renews_with_its_law():
    law = Weibull(0.78, 100.0)
    log = NodeFailureLog(law, 1, 1, np.random.SeedSequence(5), initial="new", chunk_seconds=5e4)
    while len(log.times) < 3000:
        log.extend()
    gaps = np.diff(np.r_[0.0, log.times])
    assert stats.kstest(gaps, lambda x: law.cdf(x)).pvalue > 1e-3


@pytest.mark.parametrize("initial, stationary", [("stationary", True), ("new", False)])
def test_stationary_ages_fail_at_the_long_run_rate_from_the_start(initial, stationary):
    # 20k nodes with Weibull(0.6) lifetimes of mean 1000: in [0, 50] a stationary cluster
    # expects 20k * 50 / 1000 = 1000 failures; brand-new nodes (infant mortality) far more
    law = Weibull.from_mean(1000.0, 0.6)
    log = NodeFailureLog(law, 20_000, 1, np.random.SeedSequence(1), initial=initial, chunk_seconds=50.0)
    log.extend()
    count = len(log.times)
    if stationary:
        assert abs(count - 1000) < 5 * math.sqrt(1000)
    else:
        assert count > 1500


def test_node_model_values_and_errors():
    m = NodeRenewals(system_mtbf=300.0, gpus_per_group=1000)
    assert m.nodes_in_group() == 125 and m.mtbf(600) == 300.0
    assert m.law(600) == Weibull.from_mean(600 * 125 * 300.0, 0.78)
    back = FailureModel.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back == m and type(back) is NodeRenewals
    assert NodeRenewals(lifetime=Exponential(8000.0), nodes_per_group=2).mtbf(4) == 1000.0
    with pytest.raises(ValueError, match="gpus_per_group must be a multiple of gpus_per_node \\(8\\), got 100"):
        NodeRenewals(system_mtbf=1.0, gpus_per_group=100)
    with pytest.raises(ValueError, match="nodes_per_group x gpus_per_node must equal gpus_per_group"):
        NodeRenewals(system_mtbf=1.0, gpus_per_group=64, nodes_per_group=4)
    with pytest.raises(ValueError, match="needs nodes_per_group or gpus_per_group"):
        NodeRenewals(system_mtbf=1.0).check(4)
    with pytest.raises(ValueError, match="initial must be one of"):
        NodeRenewals(system_mtbf=1.0, nodes_per_group=1, initial="old")
    with pytest.raises(ValueError, match="lifetime and system_mtbf disagree"):
        NodeRenewals(lifetime=Exponential(8000.0), system_mtbf=5.0, nodes_per_group=2).check(4)


def test_scenario_maps_nodes_by_its_gpus_per_group():
    s = Scenario.llama3_16k(failure_model="node")
    assert s.failures.gpus_per_group == 128 and s.failures.nodes_in_group() == 16
    assert s.system_mtbf == pytest.approx(54 * 24 * 3600 / 419)
    assert "16 nodes of 8 GPUs per group" in s.failure_description
    assert Scenario.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    t = s.replace(gpus_per_group=256, n_groups=64)
    assert t.failures.nodes_in_group() == 32 and t.system_mtbf == s.system_mtbf
    with pytest.raises(ValueError, match="gpus_per_group is given twice and disagrees"):
        Scenario.llama3_16k(failure_model=NodeRenewals(gpus_per_group=64))
    r = simulate(s.replace(n_steps=20_000), SpareCheckpoint(4), seed=0, timeline=True)
    tl = r.timeline
    # within an epoch no group fails twice
    for a, b in zip(np.r_[0, np.cumsum(tl.epoch_failures)[:-1]], np.cumsum(tl.epoch_failures)):
        g = tl.failure_group[a:b]
        assert len(set(g.tolist())) == g.shape[0]


def test_node_failures_do_not_burst_after_restarts_like_the_papers_model():
    """Checkpoint-only restarts at every failure: under the paper's model each restart brings
    fresh hardware (a burst), under node renewals the rate stays the system MTBF."""
    base = Scenario.llama3_16k(n_steps=60_000)
    per_hour = {}
    for fm in ("per-unit", "node"):
        runs = [simulate(base.replace(failure_model=fm), CheckpointOnly(), seed=s) for s in range(6)]
        up = sum(r.wall_time - r.restart_time for r in runs)  # failures hit the job outside restarts
        per_hour[fm] = sum(r.failures_seen for r in runs) / up * 3600
    # ~230 node failures: 5 sigma is about 33 %
    assert per_hour["node"] == pytest.approx(3600 / base.system_mtbf, rel=0.33)
    assert per_hour["per-unit"] > 2 * per_hour["node"]


def test_correlated_domains_on_node_renewals_run_in_the_simulator():
    """DomainFailures merges its domain clocks with a node-renewal base through the base's
    peek(): the simulator and the step-by-step reference see the same run."""
    from spare_core.events import DomainFailures
    from spare_core.sim._reference import reference_simulate

    base = Scenario.llama3_16k(n_steps=20_000)
    fm = DomainFailures(base.failures, (Exponential(20 * 24 * 3600.0),), groups_per_domain=(8,))
    s = base.replace(failure_model=fm)
    for pol in (CheckpointOnly(), SpareCheckpoint(3)):
        fast = simulate(s, pol, seed=1)
        ref = reference_simulate(s, pol, seed=1)
        assert (fast.failures_seen, fast.restarts, fast.checkpoints) == (
            ref["failures_seen"], ref["restarts"], ref["checkpoints"])
        assert fast.finished and fast.time_to_train == ref["wall"]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), history=st.lists(st.tuples(st.integers(1, 12), st.floats(0.0, 500.0)),
                                                    min_size=1, max_size=6))
def test_generic_run_source_equals_the_shared_node_source(seed, history):
    """Two implementations of the EpochSource contract on one node model: RunFailures (drives a
    live process along the run's restarts) and NodeEpochs (filters the shared log)."""
    from spare_core.events import RunFailures

    m = NodeRenewals(system_mtbf=40.0, nodes_per_group=3)
    fast = m.epoch_source(6, np.random.SeedSequence(seed))
    generic = RunFailures(m, 6, np.random.SeedSequence(seed))
    start = 0.0
    for k, (need, gap) in enumerate(history):
        a_t, a_u = fast.get(k, need, start=start)
        b_t, b_u = generic.get(k, need, start=start)
        n = min(need, b_t.shape[0])
        assert a_t[:n].tolist() == b_t[:n].tolist() and a_u[:n].tolist() == b_u[:n].tolist()
        nt = generic.next_time(k, n, start=start)
        assert fast.next_time(k, n, start=start) == nt
        # as in the simulator, a run restarts only after the failures it was handed
        start += (nt if math.isfinite(nt) else float(b_t[n - 1])) + gap
    with pytest.raises(ValueError, match="a run reads its epochs in order"):
        generic.get(len(history) + 3, 1, start=start + 1.0)
