"""Repairs as a fleet sees them (docs/model.md section 3.3, *Repair laws*): repair and swap
times drawn from laws, a manual stage after an escalated automatic repair, repairs that do not
fix the node and wrong diagnoses.

Checked against independent computations: the drawn durations against the compound law's
mean and variance in closed form; the nodes in repair the compiled pool holds at each failure
against M/G/inf (Poisson with mean lambda * E[repair]); a wrong diagnosis against its two
takes; the fast path against the step-by-step reference (hypothesis); a zero-variance law
against the constant bit for bit; files without the new keys exactly as before.
"""
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from spare_core.distributions import Deterministic, Exponential, LogNormal, Weibull
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import CheckpointOnly, ElasticDP, ReplicationCheckpoint, Repairs, SpareCheckpoint, simulate
from spare_core.sim.recovery import RepairBook, RepairDraws

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_strategies_reference import _node, assert_same  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
POLICIES = [CheckpointOnly(interval=120.0), SpareCheckpoint(3, interval=200.0), ReplicationCheckpoint(2, interval=200.0),
            ElasticDP(reconfigure=15.0, batch="keep", microbatches=2, interval=300.0)]


def _numbers(r):
    d = r.to_dict()
    d.pop("elapsed", None)
    return d


# -- the drawn durations: the compound law in closed form ----------------------------------------


def _compound_moments(rp):
    """Mean and variance of a node's whole repair: G rounds (geometric, success 1 - fail_fix),
    each X = time + B * manual (B Bernoulli(escalate))."""
    mt, vt = rp.time.mean, rp.time.var
    mm, vm = (rp.manual_time.mean, rp.manual_time.var) if rp.escalate else (0.0, 0.0)
    p, f = rp.escalate, rp.fail_fix
    ex = mt + p * mm
    vx = vt + p * vm + p * (1 - p) * mm * mm
    q = 1.0 - f
    return ex / q, vx / q + (f / (q * q)) * ex * ex


@pytest.mark.parametrize("rp", [
    Repairs(time=Exponential(7200.0)),
    Repairs(time=LogNormal.from_mu_sigma(math.log(7200.0), 1.0), escalate=0.8, manual_time=Exponential(172800.0)),
    Repairs(time=Weibull.from_mean(3600.0, 0.7), fail_fix=0.3),
    Repairs(time=LogNormal(600.0, 0.5), escalate=0.25, manual_time=Deterministic(5000.0), fail_fix=0.6),
], ids=["exp", "two-stage", "fail-fix", "all"])
def test_drawn_repairs_have_the_compound_mean_and_variance(rp):
    d = RepairDraws(rp, seed=11)
    n = 200 * RepairDraws.CHUNK
    d.cover(0, n)
    x = d.rep[:n]
    mean, var = _compound_moments(rp)
    assert rp.mean_time == pytest.approx(mean, rel=1e-12)  # the property's closed form
    # the sample mean within 5 standard errors, the sample variance within 10 % (heavy tails)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n)
    assert x.var() == pytest.approx(var, rel=0.1)


def test_fail_fix_rounds_are_geometric_and_a_constant_law_draws_nothing_random():
    c, f = 100.0, 0.4
    d = RepairDraws(Repairs(time=c, fail_fix=f, swap=Deterministic(7.0)), seed=3)
    d.cover(0, 50 * RepairDraws.CHUNK)
    rounds = d.rep / c
    assert np.array_equal(rounds, np.round(rounds)) and rounds.min() == 1.0  # whole rounds of the constant
    k = np.arange(1, 6)
    freq = np.array([(rounds == i).mean() for i in k])
    assert np.allclose(freq, (1 - f) * f ** (k - 1), atol=5 * math.sqrt(0.25 / rounds.size))
    assert (d.swap == 7.0).all() and not d.mis.any()


def test_draws_are_a_function_of_the_seed_and_the_take():
    rp = Repairs(time=Exponential(50.0), swap=Exponential(5.0), misdiagnose=0.3)
    a, b = RepairDraws(rp, seed=5), RepairDraws(rp, seed=5)
    a.cover(0, 3000)
    for hi in (10, 1500, 3000):  # asked for in other pieces
        b.cover(0, hi)
    assert np.array_equal(a.rep[:3000], b.rep[:3000]) and np.array_equal(a.swap[:3000], b.swap[:3000])
    assert np.array_equal(a.mis[:3000], b.mis[:3000])
    c = RepairDraws(rp, seed=6)
    c.cover(0, 10)
    assert not np.array_equal(a.rep[:10], c.rep[:10])
    assert abs(a.mis[:3000].mean() - 0.3) < 5 * math.sqrt(0.21 / 3000)


# -- the compiled pool against M/G/inf ------------------------------------------------------------


def _in_repair_at_failures(rp, lam, n, seed):
    """Poisson failures of rate ``lam``, each on a group of its own, fed to the compiled pool one
    at a time; at each failure the pool's nodes still in repair (return time after it)."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(1.0 / lam, n))
    book = RepairBook(rp, n, seed=seed)
    counts = np.empty(n, dtype=np.int64)
    ready = np.empty(n)
    for i in range(n):
        counts[i] = int((book.pool > t[i]).sum())
        nxt = t[i + 1] if i + 1 < n else math.inf
        rel, _, rejoin, rd, _, _, used = book.merge(t[i:i + 1], np.array([i], dtype=np.int64), 0.0, nxt, n + 1)
        assert used == 1
        ready[i] = rd[rejoin == 0][0]
    return t, counts, ready


def test_nodes_in_repair_are_poisson_with_mean_lambda_times_the_mean_repair():
    # two-stage with repeated repairs: E = (E[time] + escalate E[manual]) / (1 - fail_fix)
    rp = Repairs(time=LogNormal.from_mu_sigma(math.log(2.0), 1.0), escalate=0.8, manual_time=Exponential(5.0),
                 fail_fix=0.2, spares=40)
    rho = 6.0
    lam = rho / rp.mean_time
    t, counts, ready = _in_repair_at_failures(rp, lam, 60_000, seed=1)
    assert (ready == t).all()  # a pool far above rho: nobody waits (swap 0), so no failure holds a promised node
    keep = t > 30 * rp.mean_time  # stationary
    c = counts[keep]
    # by PASTA a failure sees the time-stationary count; M/G/inf: Poisson(lambda E[D]) whatever the law
    assert c.mean() == pytest.approx(rho, rel=0.04)
    assert c.var() == pytest.approx(rho, rel=0.12)
    for j in range(0, 14):
        assert abs((c == j).mean() - stats.poisson.pmf(j, rho)) < 0.015, j
    # the probability that a pool of s is empty at a failure: P(Poisson(rho) >= s)
    for s in (3, 6, 9):
        assert abs((c >= s).mean() - stats.poisson.sf(s - 1, rho)) < 0.025, s


def test_a_small_pool_follows_its_rule_and_waits_no_more_than_the_poisson_tail():
    # the compiled rule against its statement: a take gets a never-used spare while there is
    # one, else the first node back among the pool's and the failed node's own
    rho, s, n = 1.0, 3, 40_000
    rp = Repairs(time=Exponential(rho), spares=s)
    rng = np.random.default_rng(4)
    t = np.cumsum(rng.exponential(1.0, n))
    book = RepairBook(rp, n, seed=9)
    ready = np.empty(n)
    for i in range(n):
        pool = book.pool.copy()
        nxt = t[i + 1] if i + 1 < n else math.inf
        book.merge(t[i:i + 1], np.array([i], dtype=np.int64), 0.0, nxt, n + 1)
        ready[i] = book.back[i]  # in place (rejoin 0); the events' ready is the epoch's running maximum
        own = t[i] + book.draws.rep[i - book.draws.base]  # take i is failure i's (no wrong pulls)
        assert ready[i] == (t[i] if i < s else max(t[i], min(pool.min(), own))), i
    # every failed node is in repair for its own draw, whatever the pool: R_k, the nodes in repair
    # when failure k comes, counted from the draws (independently of the pool), is M/G/inf,
    # Poisson(rho) at Poisson arrivals. A failure waits only if its s unpromised spares are all in
    # repair, so only if R_k >= s: path by path, and so P(wait) <= P(R >= s)
    rows = RepairDraws(rp, seed=9)  # the book's rows, drawn apart (the book keeps only recent ones)
    rows.cover(0, n)
    d = rows.rep[:n]
    lags = 100
    assert (t[lags:] - t[:-lags]).min() > d.max()  # older failures' nodes are all back
    r = np.zeros(n, dtype=np.int64)
    for lag in range(1, lags + 1):
        r[lag:] += t[:-lag] + d[:-lag] > t[lag:]
    waited = ready > t
    assert not (waited & (r < s)).any()
    keep = t > 30 * rho
    tail = stats.poisson.sf(s - 1, rho)
    assert abs((r[keep] >= s).mean() - tail) < 5 * math.sqrt(tail * (1 - tail) / keep.sum()) * 3  # correlated
    # waits are rare here: nearly every failure that finds s nodes in repair waits
    assert waited[keep].mean() > 0.8 * (r[keep] >= s).mean()


def test_a_wrong_diagnosis_takes_two_spares_one_after_the_other():
    S, p = 7.0, 0.3
    rp = Repairs(swap=S, time=Exponential(100.0), misdiagnose=p)  # unlimited pool: every take is in place after S
    n = 4000
    t = np.arange(1, n + 1, dtype=float) * 1000.0
    book = RepairBook(rp, n, seed=2)
    rel, _, rejoin, ready, _, _, used = book.merge(t, np.arange(n, dtype=np.int64), 0.0, math.inf, 3 * n)
    f = rejoin == 0
    delay = ready[f] - rel[f]
    assert set(np.unique(delay)) <= {S, 2 * S}  # the faulty node pulled when the healthy one's spare is in place
    takes = int(book.rs[book.kern.REPAIR_SLOTS["R_USED"]])
    assert takes == n + int((delay == 2 * S).sum())  # a wrong pull is one more take of the pool
    assert abs((delay == 2 * S).mean() - p) < 5 * math.sqrt(p * (1 - p) / n)


# -- runs: the fast path, the reference, the constant -----------------------------------------------


@pytest.mark.parametrize("pol", POLICIES, ids=lambda p: p.name)
@pytest.mark.parametrize("spares", [None, 0, 1, 2])
def test_a_zero_variance_law_is_the_constant_bit_for_bit(pol, spares):
    sc = _node(12, repair=Repairs(swap=20.0, spares=spares, time=900.0, rejoin=15.0))
    law = _node(12, repair=Repairs(swap=Deterministic(20.0), spares=spares, time=Deterministic(900.0), rejoin=15.0))
    assert law.repair.drawn and not sc.repair.drawn
    for seed in range(3):
        assert _numbers(simulate(law, pol, seed=seed)) == _numbers(simulate(sc, pol, seed=seed))


@pytest.mark.parametrize("pol", POLICIES, ids=lambda p: p.name)
def test_an_unlimited_pool_with_no_swap_ignores_the_repair_law(pol):
    # the repairs' stream is apart from the failures': with nothing waiting for a repair, a law
    # changes nothing
    base = _node(12, repair=Repairs(spares=None, time=900.0, rejoin=15.0))
    law = _node(12, repair=Repairs(spares=None, time=LogNormal(900.0, 1.5), escalate=0.5,
                                   manual_time=Exponential(3000.0), fail_fix=0.3, rejoin=15.0))
    for seed in range(3):
        assert _numbers(simulate(law, pol, seed=seed)) == _numbers(simulate(base, pol, seed=seed))


@st.composite
def law_cases(draw):
    pol = draw(st.sampled_from(POLICIES + [SpareCheckpoint(2, interval="auto"), CheckpointOnly(interval=40.0)]))
    law = st.sampled_from([0.0, 5.0, 30.0, Exponential(20.0), LogNormal(30.0, 1.0), Deterministic(12.0)])
    rep = draw(st.sampled_from([0.0, 60.0, 400.0, Exponential(300.0), LogNormal(200.0, 1.2), Weibull.from_mean(300.0, 0.7)]))
    esc = draw(st.sampled_from([0.0, 0.0, 0.5, 1.0]))
    rp = Repairs(swap=draw(law), spares=draw(st.sampled_from([None, 0, 1, 2, 3])), time=rep,
                 rejoin=draw(st.sampled_from([0.0, 10.0, 40.0])), escalate=esc,
                 manual_time=Exponential(600.0) if esc else 0.0, fail_fix=draw(st.sampled_from([0.0, 0.0, 0.4])),
                 misdiagnose=draw(st.sampled_from([0.0, 0.0, 0.3])), standbys=(w := draw(st.sampled_from([0, 0, 1, 2]))),
                 standby_swap=draw(st.sampled_from([0.0, 3.0])) if w else 0.0,
                 host_select=draw(st.sampled_from([0.0, 0.0, 50.0])))
    sc = _node(draw(st.integers(3, 12)), n_steps=draw(st.integers(5, 120)), system_mtbf=draw(st.floats(60.0, 400.0)),
               repair=rp, restart_time=draw(st.sampled_from([0.0, 40.0])), max_wall_factor=draw(st.floats(3.0, 40.0)))
    return sc, pol, draw(st.integers(0, 2**31))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law_cases())
def test_drawn_repairs_equal_the_reference(case):
    """The reference takes the same rows in failure order with its heap of free times and its
    heap of rejoins; the fast path merges batches, undoes the takes after a restart and walks
    restart-only runs in the compiled epoch loop."""
    assert_same(*case)


def test_same_seed_same_run_and_the_law_matters_with_a_small_pool():
    rp = Repairs(swap=Exponential(20.0), spares=1, time=LogNormal(900.0, 1.0), escalate=0.5,
                 manual_time=Exponential(2000.0), rejoin=15.0)
    sc = _node(12, repair=rp)
    const = _node(12, repair=Repairs(swap=20.0, spares=1, time=rp.mean_time, rejoin=15.0))
    pol = CheckpointOnly(interval=120.0)
    a, b = simulate(sc, pol, seed=4), simulate(sc, pol, seed=4)
    assert _numbers(a) == _numbers(b)
    assert _numbers(a) != _numbers(simulate(const, pol, seed=4))


# -- the file's keys ----------------------------------------------------------------------------

BASE = {"cluster": {"gpus": 64, "gpus_per_node": 8, "gpus_per_group": 8},
        "job": {"step_time": "10 s", "steps": 50}, "failures": {"model": "node", "mtbf": "2 h"}}


def _file(**repair):
    return parse_scenario({**BASE, "repair": repair}, source="r.toml")


def test_a_file_without_the_new_keys_reads_and_runs_as_before():
    plain = _file(time="1 h", swap="5 min", spares=2, rejoin="1 min")
    zeros = _file(time="1 h", swap="5 min", spares=2, rejoin="1 min", fail_fix=0, misdiagnose=0.0)
    rp = plain.scenario.repair
    assert not rp.drawn and rp == Repairs(swap=300.0, spares=2, time=3600.0, rejoin=60.0, gpus_per_node=8)
    assert rp.to_dict() == {"swap": 300.0, "spares": 2, "time": 3600.0, "rejoin": 60.0, "gpus_per_node": 8}
    assert RepairBook(rp, 8).draws is None
    assert zeros.scenario.repair == rp  # probabilities at 0 are no law: the same scenario
    for pol in (CheckpointOnly(interval=600.0), SpareCheckpoint(2, interval=600.0)):
        assert _numbers(simulate(plain.scenario, pol, seed=1)) == _numbers(simulate(zeros.scenario, pol, seed=1))


def test_the_keys_read_laws_and_probabilities():
    sf = _file(time={"law": "lognormal", "median": "2 h", "sigma": 1}, escalate=0.8,
               manual_time={"law": "exponential", "mean": "2 d"}, fail_fix=0.1, misdiagnose=0.05,
               swap={"law": "constant", "value": "10 min"}, spares=3)
    rp = sf.scenario.repair
    assert rp.time == LogNormal.from_mu_sigma(math.log(7200.0), 1.0) and rp.swap == Deterministic(600.0)
    assert rp.mean_time == pytest.approx((7200.0 * math.exp(0.5) + 0.8 * 172800.0) / 0.9, rel=1e-12)
    assert (rp.escalate, rp.fail_fix, rp.misdiagnose) == (0.8, 0.1, 0.05)
    assert Repairs(**rp.to_dict()) == rp  # a stored scenario reads back


@pytest.mark.parametrize("repair, words", [
    ({"time": {"law": "gamma", "mean": 1}}, "repair.time.law must be one of"),
    ({"time": {"law": "exponential"}}, "an exponential law needs 'mean'"),
    ({"time": {"law": "exponential", "mean": "-1 h"}}, "repair.time.mean must be a duration > 0"),
    ({"time": {"law": "lognormal", "median": "1 h", "sigma": 0}}, "repair.time.sigma must be a finite number > 0"),
    ({"time": {"law": "lognormal", "median": "1 h", "mean": "1 h", "sigma": 1}}, "exactly one of ['median', 'mean']"),
    ({"swap": {"law": "exponential", "mean": "1 h", "sigma": 1}}, "repair.swap.sigma is unknown"),
    ({"escalate": 0.5}, "repair.escalate needs repair.manual_time"),
    ({"manual_time": "1 d"}, "repair.manual_time needs repair.escalate"),
    ({"escalate": 1.5, "manual_time": "1 d"}, "repair.escalate must be a finite number >= 0 and <= 1"),
    ({"escalate": 0.5, "manual_time": 0}, "repair.escalate needs repair.manual_time"),
    ({"fail_fix": 1.0}, "repair.fail_fix must be a finite number >= 0 and < 1"),
    ({"misdiagnose": -0.1}, "repair.misdiagnose must be a finite number >= 0"),
    ({"misdiagnose": "often"}, "repair.misdiagnose must be a number"),
])
def test_bad_laws_and_probabilities_are_refused_naming_the_key(repair, words):
    with pytest.raises(ScenarioFileError) as e:
        _file(**({"time": "1 h"} | repair))
    assert words in str(e.value) and str(e.value).startswith("r.toml: ")


@pytest.mark.parametrize("kw, words", [
    (dict(escalate=1.2, manual_time=5.0), "repair.escalate must be a probability"),
    (dict(fail_fix=1.0), "repair.fail_fix must be a probability in [0, 1)"),
    (dict(time={"kind": "exponential", "mean": -1.0}), "exponential mean"),
])
def test_repairs_refuse_bad_fields(kw, words):
    with pytest.raises(ValueError, match=None) as e:
        Repairs(**kw)
    assert words in str(e.value)


def test_the_example_runs_end_to_end():
    sf = load_scenario_file(EXAMPLES / "airesim_repairs.toml")
    rp = sf.scenario.repair
    assert rp.drawn and rp.escalate == 0.8 and rp.manual_time == Exponential(172800.0)
    # about lambda E[D] nodes in repair (Little's law) for a pool of 8
    assert 6.0 < rp.mean_time / sf.scenario.system_mtbf < 9.0
    sc = sf.scenario.replace(n_steps=2000)
    for pol in (CheckpointOnly(), SpareCheckpoint(3)):
        r = simulate(sc, pol, seed=0)
        assert r.finished and r.failures_seen > 0 and _numbers(r) == _numbers(simulate(sc, pol, seed=0))


def test_advise_counts_the_mean_repair_in_the_pool():
    from spare_core.commands.advise import spares_check

    sf = _file(time={"law": "exponential", "mean": "2 h"}, escalate=0.5, manual_time="10 h", fail_fix=0.5, spares=2)
    c = spares_check(sf.scenario)
    # Little's law with E = (2 h + 0.5 x 10 h) / (1 - 0.5) = 14 h
    assert c["in_repair"] == pytest.approx(14 * 3600 / sf.scenario.system_mtbf) and c["drawn"]


# -- warm standbys ([fleet]) --------------------------------------------------------------------


def _erlang_b(w, a):
    b = 1.0
    for k in range(1, w + 1):
        b = a * b / (k + a * b)
    return b


@pytest.mark.parametrize("w", [1, 2, 4])
def test_no_standby_is_ready_with_the_erlang_loss_probability(w):
    # with an unlimited pool a used standby is refilled host_select after its failure; a failure
    # that finds none ready goes to the pool and leaves the standbys alone: an Erlang loss system
    # (M/G/w/w), so for Poisson failures none is ready with probability B(w, lambda host_select)
    lam, h, n = 1.0, 2.0, 100_000
    rp = Repairs(spares=None, time=Exponential(5.0), swap=1.0, standbys=w, standby_swap=0.5, host_select=h)
    t = np.cumsum(np.random.default_rng(w).exponential(1.0 / lam, n))
    book = RepairBook(rp, n, seed=1)
    book.merge(t, np.arange(n, dtype=np.int64), 0.0, math.inf, 3 * n)
    warm = book.back == t + 0.5  # rejoin 0: back is in place; a standby's swap after the failure
    assert (warm | (book.back == (t + h) + 1.0)).all()  # or host selection and the swap
    lost = ~warm[t > 50]
    b = _erlang_b(w, lam * h)
    assert abs(lost.mean() - b) < 5 * math.sqrt(b * (1 - b) / lost.size) * 2  # neighbours are correlated


def test_standbys_cost_gpus_and_refill_from_the_pool():
    rp = Repairs(spares=3, time=1000.0, standbys=2, host_select=60.0, gpus_per_node=8)
    assert rp.spare_gpus == 5 * 8 and rp.drawn
    assert Repairs(spares=None, standbys=2).spare_gpus == 16  # standbys are paid for, an unlimited pool is not
    # three failures at once: two standbys in place after their swap, the third from the pool; the
    # refills take the pool's next nodes
    book = RepairBook(rp, 3, seed=0)
    book.merge(np.array([10.0, 10.0, 10.0]), np.arange(3, dtype=np.int64), 0.0, math.inf, 9)
    assert list(book.back) == [10.0, 10.0, 10.0 + 60.0]
    assert sorted(book.standby) == [70.0, 70.0]
    assert int(book.rs[book.kern.REPAIR_SLOTS["R_USED"]]) == 3


def test_fleet_keys_and_their_errors():
    sf = parse_scenario({**BASE, "repair": {"time": "1 h", "spares": 2},
                         "fleet": {"standbys": 2, "standby_swap": "30 s", "host_select": "20 min"}}, source="r.toml")
    rp = sf.scenario.repair
    assert (rp.standbys, rp.standby_swap, rp.host_select) == (2, 30.0, 1200.0)
    assert Repairs(**rp.to_dict()) == rp
    for bad, words in [({"fleet": {"standbys": 1}}, "[fleet] needs [repair]"),
                       ({"repair": {}, "fleet": {"standbys": -1}}, "fleet.standbys must be an integer >= 0"),
                       ({"repair": {}, "fleet": {"standby_swap": "1 s"}}, "fleet.standby_swap needs fleet.standbys"),
                       ({"repair": {}, "fleet": {"host_select": "soon"}}, "fleet.host_select must be a duration"),
                       ({"repair": {}, "fleet": {"hosts": 1}}, "key 'fleet.hosts' is unknown")]:
        with pytest.raises(ScenarioFileError) as e:
            parse_scenario({**BASE, **bad}, source="r.toml")
        assert words in str(e.value)


@st.composite
def law_class_cases(draw):
    """Drawn repairs and failure classes together: a job-wide fault takes no take of the pool,
    so the repairs' rows stay addressed by the swap failures alone on both paths."""
    from spare_core.sim.classes import FailureClass, FailureClasses

    sc, pol, seed = draw(law_cases())
    s = draw(st.sampled_from([0.2, 0.5, 0.8]))
    detect = draw(st.sampled_from([0.0, 15.0, Exponential(10.0)]))
    cl = FailureClasses((FailureClass("hw", 1.0 - s, "swap", detect=detect,
                                      masked=draw(st.sampled_from([True, True, False]))),
                         FailureClass("sw", s, "restart", detect=detect)))
    return sc.replace(failure_classes=cl), pol, seed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law_class_cases())
def test_drawn_repairs_with_failure_classes_equal_the_reference(case):
    fast, ref = assert_same(*case)
    assert fast.class_restarts == ref["class_restarts"]
    assert math.isclose(fast.detect_time, ref["detect_time"], rel_tol=1e-9, abs_tol=1e-9)
