"""Lemons from a fitted frailty law ([fleet] lemons = "frailty"): the fitted gamma frailty's
per-slot multipliers are the fleet's lemons, which lemon_fix and retire_after redraw
(docs/model.md, *Lemons from a fitted frailty*)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from spare_core.distributions import Exponential
from spare_core.events.nodes import NodeFailureLog, NodeRenewals
from spare_core.scenario_file import ScenarioFileError, load_scenario_file
from spare_core.sim import CheckpointOnly, Repairs, Scenario, SpareCheckpoint, simulate

sys.path.insert(0, str(Path(__file__).parent))
from test_strategies_reference import assert_same  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE = EXAMPLES / "trace_job_frailty.toml"


def _numbers(r):
    return {k: v for k, v in r.__dict__.items() if isinstance(v, (int, float, bool))}


def _log(log, end):
    while log.horizon < end:
        log.extend()
    t, g = np.asarray(log.times), np.asarray(log.groups)
    return t[t < end], g[t < end]


def _gaps(t, g):
    """Per slot, the time from each failure to the slot's next one, with the failure it starts at."""
    o = np.lexsort((t, g))
    ts, gs = t[o], g[o]
    same = gs[1:] == gs[:-1]
    return (ts[1:] - ts[:-1])[same], o[:-1][same]


def _lomax_cdf(v):
    """A fresh multiplier's lifetime, in units of the law's mean: E / Z with E ~ Exp(1) and
    Z ~ Gamma(1/v, v), P(E / Z > x) = E[exp(-x Z)] = (1 + v x)^(-1/v) (the gamma's Laplace
    transform)."""
    return lambda x: 1.0 - (1.0 + v * np.asarray(x)) ** (-1.0 / v)


def _file(tmp_path, fleet: str = "", repair: str = "") -> Path:
    """The example with its [fleet] and [repair] tables replaced (the log next to it)."""
    text = EXAMPLE.read_text()
    head = text.split("\n[repair]")[0]
    for name in ("trace_job_failures.csv", "trace_job_hosts.txt"):
        head = head.replace(f'"{name}"', f'"{EXAMPLES / name}"')
    path = tmp_path / "job.toml"
    path.write_text(head + (f"\n[repair]\n{repair}\n" if repair else "") + (f"\n[fleet]\n{fleet}\n" if fleet else ""))
    return path


# -- the log: counts, gaps and the long-run rate against closed forms -----------------------------


def test_the_fitted_files_per_slot_counts_are_its_negative_binomial(tmp_path):
    """The key alone changes nothing: each slot keeps its Gamma(1/v, v) multiplier, so over a
    window of L mean lifetimes a slot's count is negative binomial, mean L and variance
    L + v L^2 (a Poisson count mixed over the gamma). The fitted file's model on 8,000 slots:
    the sample mean within its CI, the sample variance within its CI (its standard error from
    the sample's fourth central moment)."""
    sf = load_scenario_file(_file(tmp_path, 'lemons = "frailty"'))
    fm = sf.scenario.failures
    assert fm.frailty_lemons and fm.frailty == sf.fit.params["frailty"] > 0
    # the file's model with one node a group, so the log's groups are its nodes
    n = 8000
    one = fm.replace(gpus_per_group=fm.gpus_per_node)
    lam, v = 20.0, fm.frailty
    _, g = _log(one.log(n, 7), lam * one.law(n).mean)
    counts = np.bincount(g, minlength=n)
    var = lam + v * lam ** 2
    assert abs(counts.mean() - lam) < 3.5 * math.sqrt(var / n)
    s2 = counts.var(ddof=1)
    m4 = ((counts - counts.mean()) ** 4).mean()
    assert abs(s2 - var) < 3.5 * math.sqrt((m4 - s2 ** 2) / n)
    assert s2 > lam + 5 * math.sqrt(2 * lam ** 2 / n)  # not the Poisson count of identical nodes


def test_the_key_alone_is_the_fitted_frailty_bit_for_bit(tmp_path):
    """Without lemon_fix and retire_after the key draws nothing more: the same log, the same
    runs, field for field; and a file without the key keeps its model's dict (a stored run's key)."""
    plain = load_scenario_file(_file(tmp_path))
    keyed = load_scenario_file(_file(tmp_path, 'lemons = "frailty"'))
    assert "frailty_lemons" not in plain.scenario.failures.to_dict()
    assert plain.scenario.failures.replace(frailty_lemons=True) == keyed.scenario.failures
    sc_p, sc_k = plain.scenario.replace(n_steps=20_000), keyed.scenario.replace(n_steps=20_000)
    for pol in (CheckpointOnly(interval=600.0), SpareCheckpoint(2, interval=600.0)):
        for seed in (0, 1):
            a, b = simulate(sc_p, pol, seed=seed), simulate(sc_k, pol, seed=seed)
            assert a.failures_seen > 0 and _numbers(a) == _numbers(b)
    law = Exponential(50.0)
    a = NodeFailureLog(law, 30, 2, 3, chunk_seconds=20.0, frailty=0.7)
    b = NodeFailureLog(law, 30, 2, 3, chunk_seconds=20.0, frailty=0.7, frailty_lemons=0.0)
    assert np.array_equal(_log(a, 5000.0)[0], _log(b, 5000.0)[0])


@pytest.mark.parametrize("v, seed", [(0.3, 0), (1.5, 1)])
def test_a_fix_after_every_failure_makes_every_gap_a_fresh_multipliers_lifetime(v, seed):
    """lemon_fix = 1: every repair redraws the slot's multiplier, so a slot's gaps between
    failures are i.i.d. E / Z, survival (1 + v x)^(-1/v) in mean lifetimes (Kolmogorov-Smirnov).
    Each gap is independent of when it starts, so the gaps starting in the window's first half
    that are shorter than half the window (all of which the window shows) are a sample of that
    law conditioned on x < end / 2."""
    n, end = 2000, 400.0
    cut = end / 2
    f = _lomax_cdf(v)
    log = NodeFailureLog(Exponential(1.0), n, 1, seed, chunk_seconds=5.0, frailty=v, frailty_lemons=1.0)
    t, g = _log(log, end)
    gaps, at = _gaps(t, g)
    gaps = gaps[(t[at] < cut) & (gaps < cut)]
    assert gaps.shape[0] > 10_000
    assert stats.kstest(gaps, lambda x: f(x) / f(cut)).pvalue > 1e-3
    # without fixes the slot keeps its multiplier: its gaps are not that law
    same = NodeFailureLog(Exponential(1.0), n, 1, seed, chunk_seconds=5.0, frailty=v)
    t, g = _log(same, end)
    gaps, at = _gaps(t, g)
    gaps = gaps[(t[at] < cut) & (gaps < cut)]
    assert stats.kstest(gaps, lambda x: f(x) / f(cut)).pvalue < 1e-6


@pytest.mark.parametrize("p", [0.3, 0.5, 1.0])
def test_the_fleets_long_run_rate_falls_to_one_minus_v(p):
    """A slot's multiplier is redrawn at rate p rate Z, so it spends time in proportion to
    g(z) / z: the long-run rate is rate / E[1/Z] = rate (1 - v) for v < 1, whatever p (p only
    sets how fast). Counted over [100, 300] mean lifetimes, when a slot not redrawn yet is
    (1 + v p 100)^(-1/v) < 1e-3 of them."""
    n, v = 5000, 0.3
    assert (1 + v * p * 100) ** (-1 / v) < 1e-3
    log = NodeFailureLog(Exponential(1.0), n, 1, 11, chunk_seconds=5.0, frailty=v, frailty_lemons=p)
    t, g = _log(log, 300.0)
    per_slot = np.bincount(g[t >= 100.0], minlength=n) / 200.0
    se = per_slot.std(ddof=1) / math.sqrt(n)
    assert abs(per_slot.mean() - (1 - v)) < 3.5 * se
    # without fixes the fleet keeps the file's rate
    plain = NodeFailureLog(Exponential(1.0), n, 1, 11, chunk_seconds=5.0, frailty=v)
    t, g = _log(plain, 300.0)
    per_slot = np.bincount(g[t >= 100.0], minlength=n) / 200.0
    se = per_slot.std(ddof=1) / math.sqrt(n)
    assert abs(per_slot.mean() - 1.0) < 3.5 * se and abs(per_slot.mean() - (1 - v)) > 10 * se


@pytest.mark.parametrize("k", [1, 3])
def test_a_retired_nodes_replacement_draws_its_own_multiplier(k):
    """retire_after = k with the key: the flags are still each slot's k-th, 2k-th, ... failure
    (a direct count), and the gap after a flagged failure is a fresh multiplier's lifetime
    (the law above), while without the key the slot keeps its multiplier and that gap is not."""
    n, v, end = 2000, 0.4, 200.0
    law = Exponential(1.0)
    for keyed in (True, False):
        log = NodeFailureLog(law, n, 1, 5, chunk_seconds=5.0, frailty=v, retire_after=k,
                             frailty_lemons=0.0 if keyed else None)
        while log.horizon < end:
            log.extend()
        t, g = np.asarray(log.times), np.asarray(log.groups)
        flags = np.asarray(log.retire_flags())
        # the direct count: a slot's i-th failure (in log order) retires when i % k == 0
        seen = np.zeros(n, dtype=np.int64)
        expect = np.empty(t.shape[0], dtype=np.int8)
        for i, s in enumerate(g.tolist()):
            seen[s] += 1
            expect[i] = seen[s] % k == 0
        assert np.array_equal(flags, expect)
        gaps, at = _gaps(t, g)
        cut, f = end / 2, _lomax_cdf(v)  # the censoring handled as above
        after = gaps[(flags[at] == 1) & (t[at] < cut) & (gaps < cut)]
        p = stats.kstest(after, lambda x: f(x) / f(cut)).pvalue
        if keyed:
            assert p > 1e-3
        else:
            assert p < 1e-6


# -- the runs: compiled against the reference ------------------------------------------------------


@pytest.mark.parametrize("pol", [CheckpointOnly(interval=120.0), SpareCheckpoint(3, interval=200.0)],
                         ids=lambda p: p.name)
@pytest.mark.parametrize("fix, k", [(0.4, 0), (0.0, 2), (0.5, 2)])
@pytest.mark.parametrize("placed", [False, True], ids=["unplaced", "placed"])
def test_frailty_lemons_in_the_compiled_run_equal_the_reference(pol, fix, k, placed):
    """Also on a placed fleet ([fleet] place: a pool of 4 idle nodes and a standby)."""
    fm = NodeRenewals(gpus_per_node=8, frailty=0.8, frailty_lemons=True, lemon_fix=fix, retire_after=k,
                      **({"place": "fewest_failures", "place_pool": 4} if placed else {}))
    rp = Repairs(swap=20.0, spares=3, time=900.0, rejoin=15.0, retire_after=k, standbys=int(placed))
    sc = Scenario(12, n_steps=120, t_compute=10.0, t_allreduce=1.0, failure_model=fm, system_mtbf=150.0,
                  gpus_per_group=16, restart_time=40.0, checkpoint_time=6.0, jitter=0.1,
                  max_wall_factor=40.0, repair=rp)
    for seed in range(3):
        fast, _ = assert_same(sc, pol, seed)
        assert fast.failures_seen > 0


# -- the file ---------------------------------------------------------------------------------------


def test_the_example_with_a_placement_reads_and_runs(tmp_path):
    """fleet.place beside lemons from the frailty: the fitted multipliers belong to the fleet's
    nodes (the job's and the pool's), a fix redraws a node's, a retired node leaves."""
    f = _file(tmp_path, 'lemons = "frailty"\nlemon_fix = 0.5\nretire_after = 3\nplace = "fewest_failures"',
              'time = "4 h"\nswap = "10 min"\nspares = 4')
    sf = load_scenario_file(f)
    fm = sf.scenario.failures
    assert fm.frailty_lemons and (fm.place, fm.place_pool, fm.retire_after) == ("fewest_failures", 4, 3)
    assert "placement: 4 idle nodes" in sf.rate_note
    sc = sf.scenario.replace(n_steps=20_000)
    r = simulate(sc, CheckpointOnly(), seed=0)
    assert r.failures_seen > 0 and _numbers(r) == _numbers(simulate(sc, CheckpointOnly(), seed=0))


def test_the_example_reads_runs_and_says_what_it_holds():
    sf = load_scenario_file(EXAMPLE)
    fm = sf.scenario.failures
    assert fm.frailty_lemons and fm.frailty == sf.fit.params["frailty"] > 0
    assert (fm.lemon_fix, fm.retire_after, sf.scenario.repair.retire_after) == (0.5, 3, 3)
    assert NodeRenewals.from_dict(fm.to_dict()) == fm
    assert "lemons: the fitted frailty's multipliers, a repair fixing a node" in sf.rate_note
    assert "until a repair fixes its node (probability 0.5) or its node retires, then redrawn" in fm.describe(16)
    sc = sf.scenario.replace(n_steps=20_000)
    for pol in (CheckpointOnly(), SpareCheckpoint(2)):
        r = simulate(sc, pol, seed=0)
        assert r.finished and r.failures_seen > 0 and _numbers(r) == _numbers(simulate(sc, pol, seed=0))


@pytest.mark.parametrize("fleet, failures, words", [
    ('lemons = "fit"', None, "fleet.lemons must be one of"),
    ('lemons = "frailty"\nlemon_share = 0.1', None, "fleet.lemon_share declares the lemons, and fleet.lemons = "
                                                   "'frailty' takes them from the fitted frailty"),
    ('lemons = "frailty"\nlemon_rate = 3', None, "fleet.lemon_rate declares the lemons"),
    ('lemons = "frailty"\nlemon_fix = 2', None, "fleet.lemon_fix must be a finite number >= 0 and <= 1"),
    ('lemons = "frailty"', 'fit_law = "exponential"', "fleet.lemons 'frailty' needs a fitted gamma frailty"),
    ('lemon_fix = 0.5', None, "fleet.lemon_fix needs fleet.lemon_share"),
    ('lemon_share = 0.1', None, "fleet.lemons = 'frailty' takes the lemons from the fit"),
])
def test_bad_keys_are_refused_naming_the_key(tmp_path, fleet, failures, words):
    path = _file(tmp_path, fleet)
    if failures:
        path.write_text(path.read_text().replace('fit_law = "frailty"', failures))
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(path)
    assert words in str(e.value), str(e.value)


def test_the_key_needs_node_renewals(tmp_path):
    path = tmp_path / "j.toml"
    path.write_text('[cluster]\ngpus = 64\ngpus_per_node = 8\ngpus_per_group = 8\n[job]\nstep_time = "10 s"\n'
                    'steps = 3000\n[failures]\nmodel = "per-unit"\nmtbf = "2 h"\n[fleet]\nlemons = "frailty"\n')
    with pytest.raises(ScenarioFileError, match="fleet.lemons 'frailty' needs failures.model = 'node'"):
        load_scenario_file(path)


@pytest.mark.parametrize("kw, words", [
    (dict(frailty_lemons=True), "fleet.lemons = 'frailty' needs a frailty > 0"),
    (dict(frailty=0.5, frailty_lemons=True, lemon_share=0.1, lemon_rate=2.0), "two laws of the nodes' rate"),
    (dict(frailty=0.5, lemon_fix=0.3), "fleet.lemon_fix needs fleet.lemon_share"),
    (dict(frailty=0.5, frailty_lemons="yes"), "frailty_lemons must be a bool"),
])
def test_the_model_refuses_bad_combinations(kw, words):
    with pytest.raises((ValueError, TypeError)) as e:
        NodeRenewals(system_mtbf=100.0, gpus_per_group=8, **kw)
    assert words in str(e.value)
