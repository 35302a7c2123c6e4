"""Fleet logs as they are: heterogeneous nodes (lemons), a drifting rate, repeated reports.

The statistics of spare_core.events.fit (the gamma-frailty and per-period node rates, the
stationary-age likelihood) against scipy and independent evaluations; the node log's per-node
multipliers and rate schedule against theory and against the plain log; the re-simulation
check (spare_core.events.fit_check) on a seeded log shaped like a real fleet's; the scenario
file's ``law = "fit"`` refusing a law that does not reproduce its log.
"""
from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

from spare_core.distributions import Exponential, LogNormal, Weibull
from spare_core.events import NodeFailureLog, NodeRenewals
from spare_core.events.fit import durations, fit, fit_node_rates, merge_repeats
from spare_core.events.fit_check import check_fit, rank_checks, simulate_log
from spare_core.events.rates import RateSchedule, calendar_periods
from spare_core.events.trace import Trace
from spare_core.scenario_file import ScenarioFileError, load_scenario_file
from spare_core.sim import SpareCheckpoint, simulate

from bench.fleet_fit_table import START, fleet_log  # the seeded fleet-shaped log the docs' table runs on

DAY = 86400.0
YEAR = 365.25 * DAY


# -- the node log: per-node multipliers and a changing rate -----------------------------------------
def _counts(log, end):
    while log.horizon < end:
        log.extend()
    t = np.asarray(log.times)
    return np.bincount(np.asarray(log.groups)[t < end], minlength=log.n_groups), t[t < end]


def test_frailty_counts_are_negative_binomial_and_stay_with_the_slot():
    """Exponential nodes with Gamma(1/v, v) multipliers: per-node counts have mean L and
    variance L + v L^2, and a node's counts in two halves of the window are correlated (its
    multiplier survives replacements), which they are not without frailty."""
    n, end, v = 20000, 100.0, 2.0
    law = Exponential(50.0)  # 2 failures per node over the window
    counts, times = _counts(NodeFailureLog(law, n, 1, 3, chunk_seconds=37.0, frailty=v), end)
    lam = end / law.mean
    var_theory = lam + v * lam ** 2
    assert abs(counts.mean() - lam) < 4 * math.sqrt(var_theory / n)
    assert abs(counts.var() / var_theory - 1) < 0.1
    # the negative binomial's zero class: (1 + v L)^(-1/v)
    p0 = (1 + v * lam) ** (-1 / v)
    assert abs((counts == 0).mean() - p0) < 4 * math.sqrt(p0 * (1 - p0) / n)
    # the slot keeps its multiplier: counts in the halves are correlated (cov = v L1 L2)
    log = NodeFailureLog(law, n, 1, 4, chunk_seconds=37.0, frailty=v)
    _, t = _counts(log, end)
    g = np.asarray(log.groups)[: t.shape[0]]
    a = np.bincount(g[t < end / 2], minlength=n)
    b = np.bincount(g[t >= end / 2], minlength=n)
    assert np.cov(a, b)[0, 1] == pytest.approx(v * (lam / 2) ** 2, rel=0.15)
    plain = NodeFailureLog(law, n, 1, 4, chunk_seconds=37.0)
    _, t = _counts(plain, end)
    g = np.asarray(plain.groups)[: t.shape[0]]
    a = np.bincount(g[t < end / 2], minlength=n)
    b = np.bincount(g[t >= end / 2], minlength=n)
    assert abs(np.corrcoef(a, b)[0, 1]) < 4 / math.sqrt(n)


@pytest.mark.parametrize("law", [Weibull(0.7, 40.0), Exponential(30.0), LogNormal(30.0, 1.0)])
def test_schedule_is_a_time_change_of_the_plain_log(law):
    """With a rate schedule, the log is the plain log (same seed, same draws) read in the
    schedule's operational time: wall time = inverse(cumulative level)."""
    sched = RateSchedule([20.0, 55.0, 70.0], [0.5, 3.0, 0.0, 1.5])
    end = 120.0
    op_end = float(sched.cumulative(end))
    timed = NodeFailureLog(law, 40, 1, 9, chunk_seconds=end, schedule=sched)
    plain = NodeFailureLog(law, 40, 1, 9, chunk_seconds=op_end)
    while timed.horizon < end:
        timed.extend()
    while plain.horizon < op_end:
        plain.extend()
    want = sorted(zip(plain.groups, sched.inverse(np.asarray(plain.times)).tolist()))
    got = sorted(zip(timed.groups, timed.times))
    assert len(got) == len(want) > 50
    assert [g for g, _ in got] == [g for g, _ in want]
    np.testing.assert_allclose([t for _, t in got], [t for _, t in want], rtol=1e-12, atol=1e-9)
    # nothing fails while the level is 0
    t = np.asarray(timed.times)
    assert not np.any((t > 55.0) & (t < 70.0))
    assert np.all(np.diff(t) >= 0)


def test_schedule_counts_follow_the_levels():
    sched = RateSchedule([10.0, 20.0], [0.2, 3.0, 1.0])
    n = 5000
    log = NodeFailureLog(Exponential(10.0), n, 1, 1, chunk_seconds=7.0, schedule=sched)
    _, t = _counts(log, 30.0)
    counts = np.histogram(t, [0, 10, 20, 30])[0]
    expect = n * np.array([0.2, 3.0, 1.0]) * 10.0 / 10.0
    assert np.all(np.abs(counts - expect) < 4 * np.sqrt(expect))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 50.0), min_size=0, max_size=5), st.data())
def test_rate_schedule_cumulative_and_inverse(gaps, data):
    times = np.cumsum(gaps)
    levels = data.draw(st.lists(st.sampled_from([0.0, 0.3, 1.0, 7.5]), min_size=len(gaps) + 1,
                                max_size=len(gaps) + 1))
    if levels[-1] == 0 and not any(levels):
        levels[-1] = 1.0
    s = RateSchedule(times, levels)
    t = np.array(data.draw(st.lists(st.floats(0.0, 300.0), min_size=1, max_size=20)))
    h = s.cumulative(t)
    # the cumulative level against a direct integration of the steps
    ref = [integrate.quad(lambda x: float(s.level_at(x)), 0, x, points=list(times[times < x]) or None,
                          limit=200)[0] for x in t]
    np.testing.assert_allclose(h, ref, rtol=1e-7, atol=1e-7)
    # the inverse is the first time reaching h: L(inverse(h)) = h, and no earlier time reaches it
    back = s.inverse(h)
    ok = np.isfinite(back)
    np.testing.assert_allclose(s.cumulative(back[ok]), h[ok], rtol=1e-9, atol=1e-9)
    assert np.all(back[ok] <= t[ok] + 1e-9 * np.maximum(1, t[ok]))


def test_node_renewals_fields_round_trip_and_drive_a_run():
    m = NodeRenewals(system_mtbf=300.0, shape=1.0, gpus_per_node=8, gpus_per_group=16, frailty=2.0,
                     rate_times=(3600.0,), rate_levels=(0.5, 2.0))
    assert m.mtbf(8) == 600.0  # the rate in force at the job's start
    back = NodeRenewals.from_dict(m.to_dict())
    assert back == m and isinstance(back.rate_times, tuple)
    assert "variance 2" in m.describe(8) and "x0.5 at the start" in m.describe(8)
    from spare_core.sim import Scenario

    sc = Scenario(8, n_steps=200, t_compute=10.0, t_allreduce=1.0, failure_model=m, restart_time=60.0,
                  checkpoint_time=5.0)
    res = simulate(sc, SpareCheckpoint(2), seed=1)
    assert res.failures_seen > 0
    assert res == simulate(sc, SpareCheckpoint(2), seed=1)
    for kw, msg in [({"frailty": -1.0}, "frailty must be >= 0"), ({"frailty": 1e4}, "frailty must be <="),
                    ({"rate_times": (1.0,), "rate_levels": (1.0,)}, "one more than rate times"),
                    ({"rate_times": (), "rate_levels": (0.0,)}, r"rate_levels\[0\]"),
                    ({"rate_times": "1"}, "rate_times must be a sequence")]:
        with pytest.raises((ValueError, TypeError), match=msg):
            NodeRenewals(system_mtbf=300.0, gpus_per_group=16, **kw)


# -- the statistics ---------------------------------------------------------------------------------
def _nb_counts_fit(counts):
    """Independent ML of a negative binomial's dispersion v on counts (mean = the sample mean)."""
    mean = counts.mean()

    def nll(lv):
        v = math.exp(lv)
        return -stats.nbinom.logpmf(counts, 1 / v, 1 / (1 + v * mean)).sum()
    res = optimize.minimize_scalar(nll, bounds=(-12, 6), method="bounded", options={"xatol": 1e-10})
    return math.exp(res.x), -res.fun


def test_frailty_fit_is_the_negative_binomial_ml_and_covers_the_truth():
    tr = fleet_log(n=4000, frailty=1.5, seed=2)
    f = fit_node_rates(tr)
    counts = tr.failures_per_unit()
    v, _ = _nb_counts_fit(counts)
    assert f.params["frailty"] == pytest.approx(v, rel=1e-5)
    lo, hi = f.interval("frailty")
    assert lo < 1.5 < hi and f.frailty_p < 1e-10
    # the interval's bounds are likelihood certificates: the profile (the counts' likelihood,
    # recomputed by scipy, at the mean's ML) is the maximum minus chi2_1(0.95) / 2 there
    crit = 0.5 * stats.chi2.ppf(0.95, 1)
    best = stats.nbinom.logpmf(counts, 1 / v, 1 / (1 + v * counts.mean())).sum()
    for b in (lo, hi):
        at = stats.nbinom.logpmf(counts, 1 / b, 1 / (1 + b * counts.mean())).sum()
        assert at == pytest.approx(best - crit, abs=1e-6)
    # the node MTBF: the window over the failures per node, its interval around it
    assert f.mean == pytest.approx(tr.end * tr.n_units / tr.n_events, rel=1e-12)
    lo, hi = f.interval("mean")
    assert lo < f.mean < hi


def test_frailty_and_mean_intervals_cover_at_the_stated_level():
    """Seeded repeats: the 90 % profile intervals contain the true variance and node MTBF in
    ~90 % of them (binomial 3-sigma band)."""
    reps, hits_v, hits_m = 150, 0, 0
    law = Exponential(100 * DAY)
    for rep in range(reps):
        tr = simulate_log(law, 600, 200 * DAY, seed=100 + rep, frailty=1.0)
        f = fit_node_rates(tr, confidence=0.9)
        lo, hi = f.interval("frailty")
        hits_v += lo <= 1.0 <= hi
        lo, hi = f.interval("mean")
        hits_m += lo <= law.mean <= hi
    band = 3 * math.sqrt(0.9 * 0.1 / reps)
    assert abs(hits_v / reps - 0.9) <= band, hits_v
    assert abs(hits_m / reps - 0.9) <= band, hits_m


def test_homogeneous_nodes_give_no_frailty_and_the_exponential_likelihood():
    tr = simulate_log(Exponential(30 * DAY), 2000, 200 * DAY, seed=5)
    f = fit_node_rates(tr)
    assert f.params["frailty"] < 0.1 and f.frailty_p > 0.01
    e = fit_node_rates(tr, frailty=False)
    ref = fit(tr, "exponential")  # no two failures of a node at one instant: the same data
    assert durations(tr).n_zero == 0
    assert e.loglik == pytest.approx(ref.loglik, rel=1e-12) and e.mean == pytest.approx(ref.mean, rel=1e-12)
    assert e.interval("mean") == pytest.approx(ref.interval("mean"), rel=1e-7)


def test_period_rates_are_the_counts_over_the_exposure():
    tr = fleet_log(n=3000, frailty=0.0, seed=3)
    f = fit_node_rates(tr, frailty=False, periods="year")
    assert f.periods.labels == ("2014", "2015", "2016", "2017", "2018", "2019")
    assert f.period_counts.sum() == tr.n_events
    np.testing.assert_allclose(f.period_rates, f.period_counts / (3000 * f.periods.lengths), rtol=1e-12)
    assert f.constant_rate_p < 1e-10 and f.n_params == 6
    # a constant log: the per-period rates are not needed
    flat = simulate_log(Exponential(4 * YEAR), 3000, 5.5 * YEAR, seed=3, start=START)
    assert fit_node_rates(flat, frailty=False, periods="year").constant_rate_p > 0.01
    # the job's schedule: levels relative to the rate where the job starts
    s = f.schedule(at=2.0 * YEAR)
    assert s.level_at(0.0) == 1.0 and s.times.shape[0] == 3
    assert f.schedule(at=f.end).times.shape[0] == 0


def test_stationary_likelihood_against_numerical_integration():
    """Each node's first interval is a residual lifetime: density S(x)/mean, survival the
    integral of S from x over the mean; evaluated here with scipy's quad."""
    law = Weibull.from_mean(40 * DAY, 0.6)
    log = NodeFailureLog(law, 400, 1, 5, chunk_seconds=200 * DAY)
    _, _ = _counts(log, 200 * DAY)
    t, u = np.asarray(log.times), np.asarray(log.groups)
    tr = Trace(t[t < 200 * DAY], u[t < 200 * DAY], n_units=400, end=200 * DAY)
    d = durations(tr, origin="stationary")
    x, o, r = d.times / DAY, d.observed, d.residual
    assert r.sum() == 400 - d.n_zero  # one first interval per node
    for name in ("weibull", "lognormal"):
        f = fit(tr, name, origin="stationary")
        if name == "weibull":
            dist = stats.weibull_min(f.params["shape"], scale=f.params["scale"] / DAY)
        else:
            dist = stats.lognorm(f.params["sigma"], scale=math.exp(f.params["mu"]) / DAY)
        mu = dist.mean()
        ll = dist.logpdf(x[o & ~r]).sum() + dist.logsf(x[~o & ~r]).sum() + (dist.logsf(x[o & r]) - math.log(mu)).sum()
        for xx in np.unique(x[~o & r]):
            tail = integrate.quad(lambda s: dist.sf(xx * (1 + s)), 0, np.inf, limit=400)[0] * xx
            ll += np.count_nonzero(x[~o & r] == xx) * math.log(tail / mu)
        ll -= o.sum() * math.log(DAY)  # densities per second
        assert f.loglik == pytest.approx(ll, rel=1e-9)


def test_stationary_fit_recovers_a_cluster_in_service_and_the_new_fit_does_not():
    law = Weibull.from_mean(40 * DAY, 0.6)
    log = NodeFailureLog(law, 2000, 1, 5, chunk_seconds=200 * DAY)
    _, _ = _counts(log, 200 * DAY)
    t, u = np.asarray(log.times), np.asarray(log.groups)
    tr = Trace(t[t < 200 * DAY], u[t < 200 * DAY], n_units=2000, end=200 * DAY)
    f = fit(tr, "weibull", origin="stationary")
    assert f.origin == "stationary"
    for q, truth in (("shape", 0.6), ("mean", law.mean)):
        lo, hi = f.interval(q)
        assert lo < truth < hi
    lo, _ = fit(tr, "weibull").interval("mean")  # every node taken as new: the mean comes out too long
    assert lo > 1.1 * law.mean


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3)), max_size=25), st.integers(0, 6))
def test_merge_repeats_against_a_slow_reference(events, within):
    events = sorted(events)
    tr = Trace([float(t) for t, _ in events], [u for _, u in events], n_units=5, end=40.0)
    merged, dropped = merge_repeats(tr, within)
    last, keep = {}, []
    for t, u in events:  # a report within `within` of the node's previous report (kept or not) is dropped
        if u not in last or t - last[u] > within:
            keep.append((float(t), u))
        last[u] = t
    assert list(zip(merged.times.tolist(), merged.units.tolist())) == keep
    assert dropped == len(events) - len(keep) and merged.end == 40.0


# -- the check ---------------------------------------------------------------------------------------
def test_check_statistics_against_brute_force():
    tr = fleet_log(n=800, frailty=1.0, seed=6)
    c = check_fit(fit_node_rates(tr), tr, replicates=40)
    x, o = c.period_simulated.astype(float), c.period_counts.astype(float)
    r = x.shape[0]
    crps = sum(np.abs(x[:, p] - o[p]).mean() - 0.5 * np.abs(x[:, p, None] - x[None, :, p]).mean()
               for p in range(x.shape[1]))
    assert c.score == pytest.approx(crps, rel=1e-12)
    own = [sum(np.abs(np.delete(x[:, p], i) - x[i, p]).sum() / (r - 1)
               - 0.5 * np.abs(x[:, p, None] - x[None, :, p]).mean() for p in range(x.shape[1])) for i in range(r)]
    assert c.periods_p == pytest.approx((1 + sum(s >= crps - 1e-9 * crps for s in own)) / (r + 1))
    lo, hi = c.interval  # simulated values with at most 2.5 % of the runs outside on each side
    assert lo in c.simulated and hi in c.simulated
    assert np.mean(c.simulated < lo) <= 0.025 and np.mean(c.simulated > hi) <= 0.025
    assert np.mean(c.simulated <= lo) >= 0.025 and np.mean(c.simulated >= hi) >= 0.025
    assert c.count == tr.n_events and c.failing_nodes == np.unique(tr.units).size
    assert c.period_simulated.sum(axis=1).tolist() == c.simulated.tolist()


def test_the_weibull_of_a_fleet_log_misses_its_count_and_the_fleet_laws_do_not():
    """The issue's failure, on a log shaped like a real fleet's (lemons, a drifting rate,
    repeated reports): a Weibull fitted with every node new has shape well below 1 and a mean
    far beyond the window, and with stationary ages simulates several times fewer failures;
    the frailty law with yearly rates reproduces the count, the years and the failing nodes."""
    tr = fleet_log(n=3000, frailty=1.5, storms=0.08, seed=7)
    w = fit(tr, "weibull")
    assert w.params["shape"] < 0.6 and w.mean > 3 * tr.end
    c = check_fit(w, tr, initial="stationary", replicates=60)
    assert not c.ok and c.ratio > 3
    assert "NOT reproduced" in c.summary()
    flat = check_fit(fit_node_rates(tr, frailty=False), tr, replicates=60)
    assert flat.ok and flat.periods_p < 0.05  # the count, but not the years
    yearly = check_fit(fit_node_rates(tr, periods="year"), tr, replicates=60)
    assert yearly.ok and yearly.periods_p > 0.05
    assert yearly.nodes_interval[0] <= yearly.failing_nodes <= yearly.nodes_interval[1]
    assert rank_checks([c, flat, yearly])[0] == 2
    # merged repeated reports: most of the infant mortality was the repeats
    merged, dropped = merge_repeats(tr, 3600.0)
    assert dropped > 0.05 * tr.n_events
    assert fit(merged, "weibull").params["shape"] > 2 * w.params["shape"]


def test_rank_checks_breaks_ties_within_the_noise_by_aic():
    tr = simulate_log(Exponential(20 * DAY), 500, 100 * DAY, seed=8)
    e, w = fit(tr, "exponential"), fit(tr, "weibull", origin="stationary")
    ce, cw = check_fit(e, tr, replicates=40), check_fit(w, tr, replicates=40)
    assert ce.ok and cw.ok
    # the same log: scores within their noise, so the fewer-parameter exponential (lower AIC
    # unless the Weibull is clearly better) goes first whatever the order given
    first = rank_checks([cw, ce], [w.aic, e.aic])[0]
    assert [w, e][first].aic == min(w.aic, e.aic)


def test_system_level_check():
    tr = simulate_log(Exponential(50 * DAY), 200, 60 * DAY, seed=9)
    f = fit(tr, "exponential", level="system")
    c = check_fit(f, tr, level="system", replicates=50)
    assert c.ok and c.count == np.unique(tr.times).size and c.failing_nodes is None


def test_calendar_periods_follow_the_calendar():
    p = calendar_periods(2 * YEAR, "quarter", start=START)
    assert p.labels[:3] == ("2014Q1", "2014Q2", "2014Q3")
    assert p.edges[1] == (dt.datetime(2014, 4, 1, tzinfo=dt.timezone.utc) - START).total_seconds()
    assert calendar_periods(5 * DAY).labels[0] == "days 0-1"
    assert len(calendar_periods(10 * YEAR)) == 10
    assert calendar_periods(1000.0).labels == ("the whole window",)
    with pytest.raises(ValueError, match="periods must be one of"):
        calendar_periods(YEAR, "decade")
    with pytest.raises(ValueError, match="at most 100,000"):
        calendar_periods(YEAR, 1.0)


# -- the scenario file ---------------------------------------------------------------------------------
def _fleet_file(tmp_path, failures):
    tr = fleet_log(n=1200, frailty=1.5, storms=0.08, seed=11)
    rows = "".join(f"{(START + dt.timedelta(seconds=float(t))).isoformat()},{u}\n"
                   for t, u in zip(tr.times, tr.units))
    (tmp_path / "fleet.csv").write_text("time,unit\n" + rows)
    end = (START + dt.timedelta(seconds=tr.end)).isoformat()
    (tmp_path / "job.toml").write_text(f"""
[cluster]
gpus = 1200
gpus_per_node = 1
gpus_per_group = 8

[job]
step_time = "10 s"
steps = 1000

[costs]
restart = "10 min"
checkpoint_save = "30 s"

[compare]
seeds = 1
r_max = 2
processes = 1

[failures]
model = "node"
law = "fit"
{failures}

[failures.trace]
path = "fleet.csv"
units = "ids"
n_units = 1200
start = "{START.isoformat()}"
end = "{end}"
""")
    return tmp_path / "job.toml", tr


def test_law_fit_refuses_a_law_that_does_not_reproduce_its_log(tmp_path):
    path, tr = _fleet_file(tmp_path, 'fit_law = "lognormal"')
    with pytest.raises(ScenarioFileError) as err:
        load_scenario_file(path)
    msg = str(err.value)
    assert "\n" not in msg and "does not reproduce the log" in msg and f"against the {tr.n_events:,} logged" in msg
    assert "fit_merge = '1 h'" in msg  # the repeated reports are pointed at


def test_law_fit_best_picks_a_fleet_law_and_the_job_takes_the_last_years_rate(tmp_path):
    path, tr = _fleet_file(tmp_path, 'fit_law = "best"\nfit_rate = "periods"\nfit_merge = "1 h"')
    sf = load_scenario_file(path)
    assert sf.fit.law in ("frailty", "exponential") and sf.fit.varies and sf.fit.check.ok
    fm = sf.scenario.failures
    assert fm.rate_levels == () and fm.frailty == sf.fit.params.get("frailty", 0.0)
    last = sf.fit.period_rates[-1]
    assert fm.mtbf(sf.scenario.n_groups) == pytest.approx(1 / (last * 1200), rel=1e-9)
    assert "that reproduces the log best" in sf.rate_note and "2019's rate" in sf.rate_note
    assert "per-period counts reproduced" in sf.rate_note
    # the job lives the log's years from its start
    sf = load_scenario_file(path, ["failures.fit_job_start='start'"])
    assert len(sf.scenario.failures.rate_levels) == 6 and sf.scenario.failures.rate_levels[0] == 1.0
    assert sf.fit.to_dict()["check"]["ok"] is True
    with pytest.raises(ScenarioFileError, match="fit_rate 'periods' goes with fit_law"):
        load_scenario_file(path, ["failures.fit_law='weibull'"])
    with pytest.raises(ScenarioFileError, match="fit_job_start only goes with fit_rate = 'periods'"):
        load_scenario_file(path, ["failures.fit_rate='constant'", "failures.fit_job_start='start'"])


def test_the_docs_table_runs_and_reads_titans_release_format(tmp_path, capsys):
    from bench.fleet_fit_table import TITAN_NODES, main, titan_log

    (tmp_path / "gc_full.csv").write_text(
        "SN,location,insert,remove,duration,out,event\n"
        "1,c1-0c0s0n0,2014-01-01 00:00:00,2019-08-01 20:07:33,1,FALSE,\n"      # never failed: not a row of the log
        "2,c1-0c0s0n1,,2014-02-01 10:00:00,,,DBE\n"
        "2,c1-0c0s0n1,2014-01-01 00:00:00,2014-02-01 10:05:00,1,TRUE,DBE\n"
        "3,c2-0c0s1n0,2014-01-01 00:00:00,2015-06-01 00:00:00,1,TRUE,OTB\n")
    tr = titan_log(tmp_path / "gc_full.csv")
    assert tr.n_events == 3 and tr.n_units == TITAN_NODES and tr.reasons == ("DBE", "DBE", "OTB")
    assert tr.times.tolist() == [0.0, 300.0, tr.end] and tr.unit_names[tr.units[2]] == "c2-0c0s1n0"
    assert merge_repeats(tr, 3600.0)[1] == 1
    log = tmp_path / "log.csv"
    small = fleet_log(n=300, frailty=1.0, storms=0.05, seed=1)
    log.write_text("time,unit\n" + "".join(f"{t},{u}\n" for t, u in zip(small.times, small.units)))
    main(["--log", str(log), "--n-units", "300", "--end", str(small.end), "--replicates", "20", "--why"])
    out = capsys.readouterr().out
    assert out.count("| weibull") == 3 and "| frailty, a rate per year" in out and "| 1 h |" in out
