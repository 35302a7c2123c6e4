"""Lemon nodes ([fleet] lemon_share, lemon_rate): a share of the node slots failing a rate
multiple as often, the file's rate kept as the fleet's average (docs/model.md, *Lemon nodes*)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from spare_core.distributions import Exponential, Weibull
from spare_core.events.nodes import NodeFailureLog, NodeRenewals
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import CheckpointOnly, Repairs, Scenario, SpareCheckpoint, simulate

sys.path.insert(0, str(Path(__file__).parent))
from test_strategies_reference import assert_same  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BASE = {"cluster": {"gpus": 64, "gpus_per_node": 8, "gpus_per_group": 8},
        "job": {"step_time": "10 s", "steps": 3000}, "failures": {"model": "node", "mtbf": "2 h"}}


def _numbers(r):
    return {k: v for k, v in r.__dict__.items() if isinstance(v, (int, float, bool))}


def _log_until(log, n_failures):
    while len(log.times) < n_failures:
        log.extend()
    return np.array(log.times), np.array(log.groups)


@pytest.mark.parametrize("share, m, seed", [(0.15, 4.0, 0), (0.15, 4.0, 1), (0.3, 2.5, 2), (0.05, 10.0, 3)])
def test_lemons_share_of_failures_and_the_fleet_rate_are_the_closed_forms(share, m, seed):
    """Exponential lifetimes: node i fails as a Poisson process of its rate, so given the total,
    the lemons' failures are binomial with p = m k / (n c) (c = 1 - k/n + m k/n), and the total
    in [0, T) is Poisson(n T / mean): the fleet's rate is the law's. 99.9 % intervals."""
    n, mean = 400, 1000.0  # one node per group: the log's group is the node
    log = NodeFailureLog(Exponential(mean), n, 1, seed, initial="stationary", chunk_seconds=50.0,
                         lemons=(share, m))
    k = round(share * n)
    assert int(log.lemon.sum()) == k
    c = 1.0 - k / n + m * k / n
    T = 120.0 * mean
    while log.horizon < T:
        log.extend()
    t, g = np.array(log.times), np.array(log.groups)
    g = g[t < T]
    total, lem = g.shape[0], int(log.lemon[g].sum())
    p = m * k / (n * c)
    lo, hi = stats.binom.ppf([0.0005, 0.9995], total, p)
    assert lo <= lem <= hi, (lem, total * p)
    lo, hi = stats.poisson.ppf([0.0005, 0.9995], n * T / mean)
    assert lo <= total <= hi
    # per slot: a lemon's count against a normal node's, the rate multiple m
    per = np.bincount(g, minlength=n)
    ratio = per[log.lemon].mean() / per[~log.lemon].mean()
    assert abs(ratio / m - 1) < 0.1


def test_a_weibull_fleet_keeps_the_files_mean_rate_over_seeds():
    """A stationary start makes each slot's expected count in [0, T) exactly T / its mean
    lifetime, so the fleet's expected count is n T / mean whatever the lemons: the mean over
    seeds within its 99.9 % interval (from the seeds' own spread)."""
    n, mean, T = 100, 500.0, 20000.0
    law = Weibull.from_mean(mean, 0.7)
    counts = []
    for seed in range(30):
        log = NodeFailureLog(law, n, 1, seed, initial="stationary", chunk_seconds=200.0, lemons=(0.15, 5.0))
        while log.horizon < T:
            log.extend()
        counts.append(int(np.searchsorted(log.times, T)))
    counts = np.array(counts, dtype=float)
    half = stats.t.ppf(0.9995, counts.shape[0] - 1) * counts.std(ddof=1) / math.sqrt(counts.shape[0])
    assert abs(counts.mean() - n * T / mean) <= half


def test_lemon_slots_come_from_their_own_stream():
    """The lifetimes' stream draws the same with lemons: lemon_rate = 1 is the plain log bit for
    bit (every multiplier c = 1), and the lemon slots depend on the seed alone."""
    law = Weibull.from_mean(1000.0, 0.8)
    plain = NodeFailureLog(law, 50, 2, 7, chunk_seconds=300.0)
    ones = NodeFailureLog(law, 50, 2, 7, chunk_seconds=300.0, lemons=(0.2, 1.0))
    a, b = _log_until(plain, 3000), _log_until(ones, 3000)
    assert np.array_equal(a[0][:3000], b[0][:3000]) and np.array_equal(a[1][:3000], b[1][:3000])
    again = NodeFailureLog(law, 50, 2, 7, chunk_seconds=300.0, lemons=(0.2, 3.0))
    assert np.array_equal(again.lemon, NodeFailureLog(law, 50, 2, 7, chunk_seconds=1.0, lemons=(0.2, 3.0)).lemon)
    assert not np.array_equal(again.lemon, NodeFailureLog(law, 50, 2, 8, chunk_seconds=1.0, lemons=(0.2, 3.0)).lemon)


def _file(fleet=None, repair=None):
    data = dict(BASE)
    if fleet is not None:
        data["fleet"] = fleet
    if repair is not None:
        data["repair"] = repair
    return parse_scenario(data, source="r.toml")


def test_a_file_without_lemons_runs_as_before_and_rate_one_is_no_lemon():
    plain, zero, ones = _file(), _file({"lemon_share": 0}), _file({"lemon_share": 0.25, "lemon_rate": 1})
    assert plain.scenario.failures.to_dict() == zero.scenario.failures.to_dict()
    assert "lemon_share" not in plain.scenario.failures.to_dict()
    lem = _file({"lemon_share": 0.25, "lemon_rate": 6})
    assert lem.scenario.failures.lemon_share == 0.25 and lem.scenario.failures.lemon_rate == 6.0
    assert lem.scenario.system_mtbf == plain.scenario.system_mtbf  # the rate is the fleet's
    for pol in (CheckpointOnly(interval=600.0), SpareCheckpoint(2, interval=600.0)):
        base = _numbers(simulate(plain.scenario, pol, seed=3))
        assert base == _numbers(simulate(zero.scenario, pol, seed=3))
        assert base == _numbers(simulate(ones.scenario, pol, seed=3))
        assert base != _numbers(simulate(lem.scenario, pol, seed=3))


@pytest.mark.parametrize("pol", [CheckpointOnly(interval=120.0), SpareCheckpoint(3, interval=200.0)],
                         ids=lambda p: p.name)
@pytest.mark.parametrize("repair", [None, Repairs(swap=20.0, spares=2, time=900.0, rejoin=15.0)],
                         ids=["no-repair", "repair"])
@pytest.mark.parametrize("fix", [0.0, 0.4])
def test_lemons_in_the_compiled_run_equal_the_reference(pol, repair, fix):
    fm = NodeRenewals(gpus_per_node=8, lemon_share=0.25, lemon_rate=5.0, lemon_fix=fix)
    sc = Scenario(12, n_steps=120, t_compute=10.0, t_allreduce=1.0, failure_model=fm, system_mtbf=150.0,
                  weibull_shape=0.8, gpus_per_group=16, restart_time=40.0, checkpoint_time=6.0, jitter=0.1,
                  max_wall_factor=40.0, repair=repair)
    for seed in range(4):
        fast, _ = assert_same(sc, pol, seed)
        assert fast.failures_seen > 0


@pytest.mark.parametrize("data, words", [
    ({"fleet": {"lemon_share": 1.0}}, "fleet.lemon_share must be a finite number >= 0 and < 1"),
    ({"fleet": {"lemon_share": -0.1}}, "fleet.lemon_share must be a finite number >= 0"),
    ({"fleet": {"lemon_share": "many"}}, "fleet.lemon_share must be a number"),
    ({"fleet": {"lemon_share": 0.1, "lemon_rate": 0.5}}, "fleet.lemon_rate must be a finite number >= 1"),
    ({"fleet": {"lemon_rate": 3}}, "fleet.lemon_rate needs fleet.lemon_share"),
    ({"fleet": {"lemon_share": 0.1}, "failures": {"model": "per-unit", "mtbf": "2 h"}},
     "fleet.lemon_share needs failures.model = 'node'"),
    ({"fleet": {"lemon_share": 0.1, "standbys": 1}}, "fleet.standbys needs [repair]"),
])
def test_bad_lemon_keys_are_refused_naming_the_key(data, words):
    with pytest.raises(ScenarioFileError) as e:
        parse_scenario({**BASE, **data}, source="r.toml")
    assert words in str(e.value) and str(e.value).startswith("r.toml: ")


@pytest.mark.parametrize("kw, words", [
    (dict(lemon_share=1.0), "fleet.lemon_share must be a share in [0, 1)"),
    (dict(lemon_share=0.1, lemon_rate=0.9), "fleet.lemon_rate must be"),
    (dict(lemon_share=0.1, lemon_rate=3.0, frailty=0.5), "two laws of the nodes' rate multipliers"),
])
def test_the_model_refuses_bad_lemons(kw, words):
    with pytest.raises(ValueError) as e:
        NodeRenewals(system_mtbf=100.0, gpus_per_group=8, **kw)
    assert words in str(e.value)


def test_the_model_round_trips_and_says_what_it_holds():
    fm = NodeRenewals(system_mtbf=100.0, gpus_per_group=8, lemon_share=0.15, lemon_rate=4.0)
    assert NodeRenewals.from_dict(fm.to_dict()) == fm
    assert "lemons: 0.15 of the slots failing x4" in fm.describe(10)


def test_the_lemon_example_runs_end_to_end():
    sf = load_scenario_file(EXAMPLES / "airesim_lemons.toml")
    fm = sf.scenario.failures
    assert (fm.lemon_share, fm.lemon_rate, fm.lemon_fix, fm.retire_after) == (0.15, 4.0, 0.5, 3)
    rp = sf.scenario.repair
    assert (rp.standbys, rp.restart_when, rp.retire_after) == (2, "job+standbys", 3)
    sc = sf.scenario.replace(n_steps=2000)
    for pol in (CheckpointOnly(), SpareCheckpoint(3)):
        r = simulate(sc, pol, seed=0)
        assert r.finished and r.failures_seen > 0 and _numbers(r) == _numbers(simulate(sc, pol, seed=0))


# -- lemon_fix: a repair that fixes a lemon -------------------------------------------------------


@pytest.mark.parametrize("p, m, seed", [(0.3, 4.0, 0), (0.1, 3.0, 1), (1.0, 5.0, 2)])
def test_lemons_are_fixed_after_a_geometric_number_of_failures(p, m, seed):
    """Exponential lifetimes: a lemon fails at rate m l0 (l0 = 1 / (c mean)) and each failure's
    repair fixes it with probability p, so it stays a lemon past t with probability
    exp(-p m l0 t) (a thinned Poisson process): the lemons left at t are Binomial(k, that); and
    over a horizon where all are fixed each lemon slot fails a Geometric(p) number of times as a
    lemon (mean k / p in all, variance k (1 - p) / p^2)."""
    n, mean = 300, 1000.0
    log = NodeFailureLog(Exponential(mean), n, 1, seed, initial="stationary", chunk_seconds=50.0,
                         lemons=(0.2, m, p))
    lemons0 = log.lemon.copy()
    k = int(lemons0.sum())
    c = 1.0 - k / n + m * k / n
    rate = m / (c * mean)
    T = 400.0 * mean
    while log.horizon < T:
        log.extend()
    assert not log.lemon.any() and np.isfinite(log.fixed_at[lemons0]).all() and np.isinf(log.fixed_at[~lemons0]).all()
    for t in (0.3 / (p * rate), 1.0 / (p * rate), 2.0 / (p * rate)):
        left = int((log.fixed_at[lemons0] > t).sum())
        lo, hi = stats.binom.ppf([0.0005, 0.9995], k, math.exp(-p * rate * t))
        assert lo <= left <= hi, (t, left, k * math.exp(-p * rate * t))
    times, groups = np.array(log.times), np.array(log.groups)
    as_lemon = lemons0[groups] & (times <= log.fixed_at[groups])
    total = int(as_lemon.sum())
    sd = math.sqrt(k * (1 - p)) / p
    assert abs(total - k / p) <= 3.3 * sd + 1e-9, (total, k / p)


def test_lemon_fix_zero_is_the_lemons_without_it_bit_for_bit():
    law = Weibull.from_mean(1000.0, 0.6)
    a = NodeFailureLog(law, 40, 2, 5, chunk_seconds=300.0, lemons=(0.2, 4.0))
    b = NodeFailureLog(law, 40, 2, 5, chunk_seconds=300.0, lemons=(0.2, 4.0, 0.0))
    ta, ga = _log_until(a, 4000)
    tb, gb = _log_until(b, 4000)
    assert np.array_equal(ta[:4000], tb[:4000]) and np.array_equal(ga[:4000], gb[:4000])
    fixed = NodeFailureLog(law, 40, 2, 5, chunk_seconds=300.0, lemons=(0.2, 4.0, 0.5))
    tf, _ = _log_until(fixed, 4000)
    assert not np.array_equal(ta[:4000], tf[:4000])
    # the same seed, the same log (fixes drawn from the lemons' stream, one pass at a time)
    again = NodeFailureLog(law, 40, 2, 5, chunk_seconds=300.0, lemons=(0.2, 4.0, 0.5))
    assert np.array_equal(_log_until(again, 4000)[0][:4000], tf[:4000])


def test_lemon_fix_reads_runs_and_is_checked():
    sf = _file({"lemon_share": 0.25, "lemon_rate": 4, "lemon_fix": 0.5})
    fm = sf.scenario.failures
    assert fm.lemons() == (0.25, 4.0, 0.5) and NodeRenewals.from_dict(fm.to_dict()) == fm
    assert "lemon_fix" not in _file({"lemon_share": 0.25}).scenario.failures.to_dict()
    assert "fixes one with probability 0.5" in sf.rate_note
    for pol in (CheckpointOnly(interval=600.0), SpareCheckpoint(2, interval=600.0)):
        r = simulate(sf.scenario, pol, seed=1)
        assert r.finished and _numbers(r) == _numbers(simulate(sf.scenario, pol, seed=1))
    for fleet, words in [({"lemon_fix": 0.5}, "fleet.lemon_fix needs fleet.lemon_share"),
                         ({"lemon_share": 0.1, "lemon_fix": 1.5}, "fleet.lemon_fix must be a finite number >= 0 and <= 1")]:
        with pytest.raises(ScenarioFileError) as e:
            _file(fleet)
        assert words in str(e.value)
    with pytest.raises(ValueError) as e:
        NodeRenewals(system_mtbf=100.0, gpus_per_group=8, lemon_fix=0.3)
    assert "fleet.lemon_fix needs fleet.lemon_share" in str(e.value)
