"""Closed forms for the strategies of docs/model.md section 3.3, against the simulator.

* Checkpoint-only under exponential failures: the expected time of a job of K segments of
  tau work, each followed by a blocking save c (the last one not), restart u, no failure
  during a restart, is ``(K - 1) W(tau + c) + W(tau)`` with ``W(L) = (1/lam + u)(e^{lam L} - 1)``
  (each segment must run L seconds without a failure; failures are memoryless and the
  clock starts afresh after each restart), so ETTR = T0 / TTT tends to
  ``tau / ((1/lam + u)(e^{lam (tau + c)} - 1))``.
* Repairs that never make the job wait and never bring a group back before a restart give
  today's numbers bit for bit.
* The spare pool is an M/G/infinity queue of nodes in repair: a failure waits with
  probability P(Poisson(lam D) >= s), and waits ``E[max(0, D - Gamma(s, lam))]`` on average.
* The snapshot holders never put a group and all its copies in one failure domain.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from spare_core.sim import (CheckpointOnly, ElasticDP, MemoryTier, ReplicationCheckpoint, Repairs, Scenario,
                            SpareCheckpoint, simulate)
from spare_core.sim.recovery import RepairBook, copy_holders

# -- ETTR of checkpoint-only under exponential failures ---------------------------------------


def _segment_time(lam, u, length):
    """Expected wall time to run ``length`` seconds without a failure (restart u after each)."""
    return (1.0 / lam + u) * math.expm1(lam * length)


@pytest.mark.parametrize("model,groups,runs", [("system", 1, 1500), ("node", 4, 600)])
def test_ettr_checkpoint_only_exponential(model, groups, runs):
    mtbf, t, m, c, u, K = 1000.0, 10.0, 10, 20.0, 50.0, 40
    tau, lam = m * t, 1.0 / mtbf
    # a save follows the first step ending >= interval after the last save or restart: with
    # interval = tau - t/2 that is the m-th step, whatever the rounding of the step ends
    # (interval = tau exactly saves one step late when (r + m t) - r rounds below m t)
    sc = Scenario(groups, n_steps=K * m, t_compute=t, t_allreduce=0.0, failure_model=model, system_mtbf=mtbf,
                  weibull_shape=1.0, gpus_per_group=8, restart_time=u, checkpoint_time=c, jitter=0.0,
                  max_wall_factor=1000.0)
    ttt = np.array([simulate(sc, CheckpointOnly(interval=tau - t / 2), seed=s).time_to_train for s in range(runs)])
    exact = (K - 1) * _segment_time(lam, u, tau + c) + _segment_time(lam, u, tau)
    se = ttt.std(ddof=1) / math.sqrt(runs)
    assert abs(ttt.mean() - exact) < 4.0 * se
    # the job's last segment has no save: its ETTR lies above the long-job limit, by about
    # (W(tau + c) - W(tau)) / (K W(tau + c)) (0.3 % here)
    limit = tau / _segment_time(lam, u, tau + c)
    assert sc.t0 / exact > limit
    assert sc.t0 / exact == pytest.approx(limit, rel=0.01)


def test_ettr_formula_on_a_long_job():
    """The issue's formula itself, on a job long enough that the missing last save is lost in
    the confidence interval."""
    mtbf, t, m, c, u, K = 200.0, 10.0, 15, 30.0, 60.0, 400
    tau, lam = m * t, 1.0 / mtbf
    sc = Scenario(1, n_steps=K * m, t_compute=t, t_allreduce=0.0, failure_model="system", system_mtbf=mtbf,
                  weibull_shape=1.0, restart_time=u, checkpoint_time=c, jitter=0.0, max_wall_factor=1000.0)
    runs = 60
    ttt = np.array([simulate(sc, CheckpointOnly(interval=tau - t / 2), seed=s).time_to_train for s in range(runs)])
    ettr = sc.t0 / ttt.mean()
    half = 4.0 * ttt.std(ddof=1) / math.sqrt(runs) * sc.t0 / ttt.mean() ** 2  # delta method
    assert abs(ettr - tau / ((1.0 / lam + u) * math.expm1(lam * (tau + c)))) < half


# -- repairs that change nothing ------------------------------------------------------------------

_PRICE_FIELDS = ("gpus_paid", "gpu_hours", "cost")


def _numbers(res):
    d = res.to_dict()
    for k in _PRICE_FIELDS:  # a finite pool is paid for: only the price differs
        d.pop(k)
    d.pop("spares_taken")  # the pool's count of its own use, 0 without repairs
    return d


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["system", "per-unit", "node"]), n=st.integers(1, 8), seed=st.integers(0, 2**31),
       memory=st.booleans(), data=st.data())
def test_checkpoint_only_repairs_that_are_ready_in_time_change_nothing(model, n, seed, memory, data):
    """Checkpoint-only: a replacement in place by the restart's end changes nothing, bit for
    bit. That holds for an unlimited pool with swap <= the restart's duration (any repair
    time), and for any pool with repair time 0 (a spare is free at once). Repairs() is the
    first case at swap 0."""
    u = data.draw(st.sampled_from([0.0, 12.5, 60.0]))
    mem = MemoryTier(save=1.0, every=30.0, restore=data.draw(st.sampled_from([0.0, 5.0]))) if memory else None
    shortest = min(u, mem.restore) if mem is not None else u  # a restore from memory is the shorter restart
    sc = Scenario(n, n_steps=60, t_compute=7.0, t_allreduce=1.0, failure_model=model, system_mtbf=90.0,
                  weibull_shape=0.9, gpus_per_group=8, restart_time=u, checkpoint_time=4.0, jitter=0.1,
                  max_wall_factor=30.0, memory=mem)
    pol = CheckpointOnly(interval=data.draw(st.sampled_from([0.0, 50.0, "auto"])))
    base = simulate(sc, pol, seed=seed)
    swap = data.draw(st.floats(0.0, shortest))
    for rep in (Repairs(), Repairs(swap=swap, time=data.draw(st.floats(0.0, 1e5)), rejoin=data.draw(st.floats(0.0, 100.0))),
                Repairs(swap=swap, spares=data.draw(st.integers(0, 4)), time=0.0)):
        assert _numbers(simulate(sc.replace(repair=rep), pol, seed=seed)) == _numbers(base)
    free = simulate(sc.replace(repair=Repairs()), pol, seed=seed).to_dict()
    assert free.pop("spares_taken") == free["failures_seen"]  # the pool's count: every failure took a node
    assert free == {k: v for k, v in base.to_dict().items() if k != "spares_taken"}


@pytest.mark.parametrize("pol", [SpareCheckpoint(3), ReplicationCheckpoint(2),
                                 ReplicationCheckpoint(2, variant="disjoint"),
                                 ElasticDP(reconfigure=10.0, batch="shrink", min_groups=5), ElasticDP(reconfigure=10.0)],
                         ids=lambda p: p.name + getattr(p, "batch", ""))
def test_groups_that_never_rejoin_change_nothing(pol):
    """SPARe, Rep and elastic read every failure of the node log with repairs and drop those
    of groups out themselves; with a rejoin beyond the horizon (a group is back only at a
    restart, as without [repair]) and replacements in place by the restart's end, the run is
    today's, bit for bit."""
    sc = Scenario(10, n_steps=150, t_compute=10.0, t_allreduce=1.0, failure_model="node", system_mtbf=100.0,
                  weibull_shape=0.8, gpus_per_group=16, restart_time=40.0, checkpoint_time=5.0, jitter=0.1,
                  max_wall_factor=50.0, memory=MemoryTier(save=1.0, every=40.0, restore=8.0))
    never = 1e15  # past any wall time of the run
    for seed in range(3):
        base = _numbers(simulate(sc, pol, seed=seed))
        for rep in (Repairs(rejoin=never), Repairs(swap=8.0, time=1e6, rejoin=never),
                    Repairs(swap=8.0, spares=3, time=0.0, rejoin=never)):
            assert _numbers(simulate(sc.replace(repair=rep), pol, seed=seed)) == base


# -- the spare pool against its queueing limit ---------------------------------------------------


def _pool_waits(lam, repair_time, spares, n, seed, swap=0.0):
    """Each failure's wait for its replacement (in place - failure - swap), from RepairBook,
    under Poisson failures of rate ``lam``, each on a group of its own (none is dropped)."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(1.0 / lam, n))
    g = np.arange(n, dtype=np.int64)
    book = RepairBook(Repairs(swap=swap, spares=spares, time=repair_time), n)
    waits, i, batch = [], 0, 8192
    while i < n:
        j = min(n, i + batch)
        nxt = t[j] if j < n else math.inf
        rel, _, rejoin, ready, _, _, used = book.merge(t[i:j], g[i:j], 0.0, nxt, 3 * (j - i) + 1)
        fail = rejoin == 0
        # in-place times grow with the failures (the FIFO pool hands spares out in order), so
        # the running maximum the book reports is each failure's own in-place time
        waits.append(ready[fail] - rel[fail] - swap)
        i += used
    return t, np.concatenate(waits)


@pytest.mark.parametrize("spares", [0, 1, 3, 6])
def test_spare_pool_waits_match_the_queueing_limit(spares):
    lam, D, n = 1.0, 3.0, 300_000
    t, w = _pool_waits(lam, D, spares, n, seed=spares)
    w = w[t > 20 * D]  # stationary: the first failures find the whole pool free
    assert (w >= 0).all()
    p_wait = stats.poisson.sf(spares - 1, lam * D) if spares else 1.0
    # wait = max(0, D - (time since the s-th earlier failure)), which is Gamma(s, lam) (PASTA)
    mean_wait = D * (stats.gamma.cdf(D, spares, scale=1 / lam) if spares else 1.0) \
        - spares / lam * stats.gamma.cdf(D, spares + 1, scale=1 / lam)
    # batch means: waits of neighbouring failures are correlated
    waited = np.array([b.mean() for b in np.array_split(w > 0, 60)])
    means = np.array([b.mean() for b in np.array_split(w, 60)])
    for sample, exact in ((waited, p_wait), (means, mean_wait)):
        se = sample.std(ddof=1) / math.sqrt(sample.shape[0])
        assert abs(sample.mean() - exact) <= 4.0 * se + 1e-12


def test_swap_adds_to_every_replacement():
    t, w0 = _pool_waits(2.0, 1.5, 2, 20_000, seed=5)
    _, w1 = _pool_waits(2.0, 1.5, 2, 20_000, seed=5, swap=0.25)
    # the swap starts when the spare is free: the same waits, each replacement 0.25 s later
    assert np.allclose(w0, w1, rtol=0.0, atol=1e-9)
    assert w0.max() > 0


# -- snapshot holders against failure domains ----------------------------------------------------


def _restores(holders, down):
    """The in-memory tier's rule: every group down has a copy on a group that is up."""
    return all(any(h not in down for h in holders[g]) for g in down)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 30), st.integers(1, 4), st.data())
def test_one_domain_failure_never_takes_a_group_and_all_its_copies(n, copies, data):
    contiguous = data.draw(st.booleans())
    if contiguous:
        sizes = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=n))
        labels = np.repeat(np.arange(len(sizes)), sizes)[:n]
        labels = np.concatenate((labels, np.full(n - labels.shape[0], labels[-1])))
    else:
        labels = np.array(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)))
    n_dom = np.unique(labels).shape[0]
    h = copy_holders(n, copies, labels)
    if n_dom == 1:
        return  # no domains: the ring placement (next test)
    if n_dom <= copies:
        # the copies wrap round the domains: the first n_dom - 1 are still in other domains
        for g in range(n):
            assert labels[g] not in {int(labels[x]) for x in h[g][: n_dom - 1]}
        return
    for g in range(n):
        doms = {int(labels[x]) for x in h[g]}
        assert labels[g] not in doms and len(doms) == copies  # c copies in c other domains
    for d in np.unique(labels):  # brute force: every single domain failure restores
        assert _restores(h.tolist(), set(np.flatnonzero(labels == d).tolist()))


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 40), st.integers(1, 4), st.integers(0, 39))
def test_ring_placement_survives_short_runs_of_groups(n, copies, at):
    """Without domains copy i of g is on g + i * max(1, N // (c + 1)): any cyclic run of at most
    that many groups down (what a cyclic wipe-out takes) restores from memory."""
    h = copy_holders(n, copies).tolist()
    step = max(1, n // (copies + 1))
    for length in range(1, min(step, n - 1) + 1):
        down = {(at + i) % n for i in range(length)}
        assert _restores(h, down)
