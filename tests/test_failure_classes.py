"""Failure classes (``[[failures.classes]]``, ``spare_core.sim.classes``; issue 32 item 1).

* Detection d shifts checkpoint-only's exponential ETTR closed form from restart u to u + d
  (a constant d, and a law of mean d: the closed form is linear in the restart).
* Job-wide (``restart``) classes take no spare: the spares taken are the swap class's
  failures, one for one, and the mean number of nodes in repair is M/G/inf's at the swap
  class's rate (Little's law); a file of restart classes only never waits for a spare.
* A share split is a thinning: the counts per class follow the shares (a chi-square test over
  seeds), one swap class of share 1 (or several masked swap classes without detection) is the
  model without classes bit for bit, and so is checkpoint-only under any split without
  detection and repairs (every failure restarts anyway).
* SPARe restarts at least on every job-wide failure it meets; the handler is never asked
  about them.
* The reference simulator walks the same rules: a hypothesis test on the strategies'
  generated cases with classes added.
* Reader errors name the key; the example of Llama 3's breakdown runs.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from spare_core.distributions import Exponential, LogNormal, Weibull
from spare_core.scenario_file import ScenarioFileError, parse_scenario
from spare_core.sim import (CheckpointOnly, ElasticDP, MemoryTier, ReplicationCheckpoint, Repairs, Scenario,
                            SpareCheckpoint, simulate)
from spare_core.sim.classes import FailureClass, FailureClasses
from spare_core.sim._reference import reference_simulate
from test_strategies_reference import COUNTS, TIMES, cases

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
NEW = ("detect_time", "class_restarts", "spares_taken", "failure_model")


def _classes(*spec):
    return FailureClasses(tuple(FailureClass(*s[:3], **(s[3] if len(s) > 3 else {})) for s in spec))


def _same_run(a, b, skip=NEW):
    """Every column of two runs equal (NaN equal to NaN), the new ones left out."""
    da, db = a.to_dict(), b.to_dict()
    for k in da:
        if k in skip:
            continue
        assert da[k] == db[k] or (da[k] != da[k] and db[k] != db[k]), (k, da[k], db[k])


def _node(n=6, **kw):
    base = dict(n_steps=300, t_compute=10.0, t_allreduce=1.0, failure_model="node", system_mtbf=300.0,
                weibull_shape=0.8, gpus_per_group=8, restart_time=40.0, checkpoint_time=5.0, jitter=0.05)
    base.update(kw)
    return Scenario(n, **base)


POLICIES = [CheckpointOnly(), SpareCheckpoint(3), ReplicationCheckpoint(2), ElasticDP(reconfigure=5.0)]


# -- detection shifts the restart of the closed form ----------------------------------------------
def _segment_time(lam, u, length):
    return (1.0 / lam + u) * math.expm1(lam * length)


@pytest.mark.parametrize("detect", [120.0, Exponential(120.0)], ids=["constant", "exponential law"])
def test_detection_shifts_the_closed_forms_restart(detect):
    mtbf, t, m, c, u, K, runs = 1000.0, 10.0, 10, 20.0, 50.0, 30, 800
    tau, lam, d = m * t, 1.0 / mtbf, 120.0
    sc = Scenario(1, n_steps=K * m, t_compute=t, t_allreduce=0.0, failure_model="system", system_mtbf=mtbf,
                  weibull_shape=1.0, restart_time=u, checkpoint_time=c, jitter=0.0, max_wall_factor=1000.0,
                  failure_classes=_classes(("any", 1.0, "restart", {"detect": detect})))
    runs_ = [simulate(sc, CheckpointOnly(interval=tau - t / 2), seed=s) for s in range(runs)]
    ttt = np.array([r.time_to_train for r in runs_])
    exact = (K - 1) * _segment_time(lam, u + d, tau + c) + _segment_time(lam, u + d, tau)
    se = ttt.std(ddof=1) / math.sqrt(runs)
    assert abs(ttt.mean() - exact) < 4.0 * se, (ttt.mean(), exact, se)
    # and not the closed form without the detection: the shift is many standard errors
    assert abs(ttt.mean() - ((K - 1) * _segment_time(lam, u, tau + c) + _segment_time(lam, u, tau))) > 8 * se
    # the detection is counted in the restart time, once per restart
    for r in runs_[:50]:
        assert r.restart_time == pytest.approx(r.restarts * u + r.detect_time, rel=1e-12)
        if isinstance(detect, float):
            assert r.detect_time == pytest.approx(r.restarts * d, rel=1e-12)


def test_constant_detection_is_a_longer_restart():
    # the same failures (the seed's), the restart u + d instead of u then d: equal to rounding
    sc = _node(restart_time=40.0)
    a = simulate(sc.replace(failure_classes=_classes(("x", 1.0, "restart", {"detect": 25.0}))), CheckpointOnly(),
                 seed=4)
    b = simulate(sc.replace(restart_time=65.0), CheckpointOnly(), seed=4)
    assert a.restarts == b.restarts > 0 and a.checkpoints == b.checkpoints
    assert a.time_to_train == pytest.approx(b.time_to_train, rel=1e-12)


def test_masked_detection_stalls_the_step():
    # SPARe masks a swap failure after its detection: d seconds more per masked failure (and a
    # longer run meets the later failures too, which only add time while nothing restarts)
    sc = _node(n=8, system_mtbf=400.0, jitter=0.0, restart_time=0.0, checkpoint_time=1.0, n_steps=200)
    pol = SpareCheckpoint(4, interval=math.inf)
    d = 3.0
    stalled = sc.replace(failure_classes=_classes(("hw", 1.0, "swap", {"detect": d})))
    seen = 0
    for seed in range(20):
        base, r = simulate(sc, pol, seed=seed), simulate(stalled, pol, seed=seed)
        assert r.detect_time == pytest.approx(d * r.failures_seen)
        if base.restarts or r.restarts or not base.failures_masked:
            continue
        seen += 1
        assert r.failures_seen >= base.failures_seen
        assert r.time_to_train >= base.time_to_train + d * base.failures_masked - 1e-9 * base.time_to_train
    assert seen >= 3


# -- the spare pool sees the swap class only -------------------------------------------------------
def test_restart_classes_take_no_spare_and_the_pool_is_mginf_at_the_swap_rate():
    s, R = 0.4, 3000.0
    n, mtbf = 8, 200.0  # exponential nodes: the failures form a Poisson process of rate 1 / system MTBF
    cl = _classes(("hw", 1.0 - s, "swap"), ("sw", s, "restart"))
    sc = _node(n=n, system_mtbf=mtbf, weibull_shape=1.0, restart_time=20.0, n_steps=600,
               repair=Repairs(swap=0.0, spares=None, time=R, rejoin=0.0), failure_classes=cl)
    swaps = wides = 0
    exposed = 0.0
    for seed in range(80):
        r = simulate(sc, CheckpointOnly(), seed=seed, timeline=True)
        hw = r.timeline.failure_class == 0
        # a spare for every swap failure the run met, none for a job-wide one
        assert r.spares_taken == int(hw.sum()) and r.class_restarts == int((~hw).sum())
        swaps += int(hw.sum())
        wides += int((~hw).sum())
        # no failure is seen during a restart: the job is exposed the rest of its wall time
        exposed += r.wall_time - r.restart_time - r.wait_time
    # the queue of nodes in repair is M/G/inf fed by the swap class alone: its arrivals are a
    # Poisson process of rate (1 - s) / MTBF per exposed second, so by Little's law the mean
    # number in repair is (1 - s) R / MTBF (not R / MTBF, as if every failure took a node)
    lam_swap = (1.0 - s) / mtbf
    assert abs(swaps - lam_swap * exposed) < 4.0 * math.sqrt(lam_swap * exposed)
    assert abs(wides - s / mtbf * exposed) < 4.0 * math.sqrt(s / mtbf * exposed)
    in_repair = swaps * R / exposed
    assert in_repair == pytest.approx(lam_swap * R, rel=4.0 / math.sqrt(lam_swap * exposed))
    assert abs(in_repair - R / mtbf) > 0.3 * R / mtbf


def test_restart_classes_only_never_wait_for_a_spare():
    sc = _node(repair=Repairs(swap=600.0, spares=0, time=1e6, rejoin=0.0),
               failure_classes=_classes(("sw", 0.7, "restart"), ("net", 0.3, "restart", {"detect": 5.0})))
    for pol in POLICIES:
        r = simulate(sc, pol, seed=2)
        assert r.spares_taken == 0 and r.wait_time == 0.0 and r.rejoins == 0
        assert r.restarts == r.class_restarts == r.failures_seen > 0


# -- a share split is a thinning -------------------------------------------------------------------
def test_counts_per_class_follow_the_shares():
    shares = (0.5, 0.3, 0.2)
    cl = _classes(*[(f"c{i}", p, "swap") for i, p in enumerate(shares)])
    sc = _node(n=10, system_mtbf=100.0, n_steps=400, failure_classes=cl)
    counts = np.zeros(3)
    for seed in range(40):
        r = simulate(sc, SpareCheckpoint(4), seed=seed, timeline=True)
        counts += np.bincount(r.timeline.failure_class, minlength=3)
    total = counts.sum()
    assert total > 2000
    p = stats.chisquare(counts, total * np.array(shares)).pvalue
    assert p > 1e-3, (counts, p)


@pytest.mark.parametrize("pol", POLICIES, ids=lambda p: p.name)
@pytest.mark.parametrize("extra", [{}, {"memory": MemoryTier(save=1.0, every=40.0, restore=5.0)},
                                   {"repair": Repairs(swap=10.0, spares=1, time=500.0, rejoin=5.0)}],
                         ids=["plain", "memory", "repair"])
def test_one_swap_class_is_the_model_without_classes(pol, extra):
    sc = _node(**extra)
    for classes in (_classes(("all", 1.0, "swap")), _classes(("a", 0.25, "swap"), ("b", 0.75, "swap"))):
        for seed in range(3):
            base = simulate(sc, pol, seed=seed, timeline=True)
            got = simulate(sc.replace(failure_classes=classes), pol, seed=seed, timeline=True)
            _same_run(base, got)
            assert got.detect_time == 0.0 and got.class_restarts == 0 and got.spares_taken == base.spares_taken
            for f in ("failure_time", "failure_group", "failure_restart", "depth_after", "epoch_start", "epoch_end"):
                assert np.array_equal(getattr(base.timeline, f), getattr(got.timeline, f)), f
            assert base.timeline.to_dict()["failure_class"] is None and base.timeline.failure_class is None
            assert got.timeline.to_dict()["failure_class"] == got.timeline.failure_class.tolist()
            # and without the timeline (checkpoint-only then takes the compiled restart loop without classes)
            _same_run(simulate(sc, pol, seed=seed), simulate(sc.replace(failure_classes=classes), pol, seed=seed))


@pytest.mark.parametrize("model", ["node", "system", "per-unit"])
def test_checkpoint_only_is_unchanged_by_a_split(model):
    sc = _node(failure_model=model)
    cl = _classes(("hw", 0.6, "swap"), ("sw", 0.3, "restart"), ("odd", 0.1, "swap", {"masked": False}))
    for seed in range(5):
        base = simulate(sc, CheckpointOnly(), seed=seed)
        got = simulate(sc.replace(failure_classes=cl), CheckpointOnly(), seed=seed)
        _same_run(base, got)
        assert 0 < got.class_restarts <= got.restarts == base.restarts


class _Spy:
    """A policy that records the groups its handler is asked about."""

    def __init__(self, pol):
        self._p, self.asked = pol, []

    def __getattr__(self, k):
        return getattr(self._p, k)

    def handler(self, scenario):
        h, spy = self._p.handler(scenario), self

        class Handler:
            def __getattr__(self, k):
                return getattr(h, k)

            def on_failures(self, groups):
                spy.asked.append(len(groups))
                return h.on_failures(groups)

        return Handler()


def test_spare_restarts_on_every_job_wide_failure():
    s = 0.2
    cl = _classes(("hw", 1.0 - s, "swap"), ("sw", s, "restart"))
    sc = _node(n=12, system_mtbf=150.0, n_steps=500, failure_classes=cl)
    for seed in range(10):
        pol = _Spy(SpareCheckpoint(5))
        r = simulate(sc, pol, seed=seed, timeline=True)
        tl = r.timeline
        job_wide = tl.failure_class == 1
        assert r.class_restarts == int(job_wide.sum()) and r.restarts >= int(job_wide.sum())
        # every job-wide failure restarted the run; the handler heard of at least every swap one
        assert tl.failure_restart[job_wide].all()
        assert sum(pol.asked) >= int((~job_wide).sum())
    # every failure job-wide: the handler is never asked, every failure restarts
    only = sc.replace(failure_classes=_classes(("sw", 1.0, "restart")))
    pol = _Spy(SpareCheckpoint(5))
    r = simulate(only, pol, seed=0)
    assert pol.asked == [] and r.restarts == r.failures_seen == r.class_restarts > 0
    # against the model without classes, the split costs SPARe restarts it could not mask
    plain = [simulate(sc.replace(failure_classes=None), SpareCheckpoint(5), seed=k).restarts for k in range(10)]
    split = [simulate(sc, SpareCheckpoint(5), seed=k).restarts for k in range(10)]
    assert sum(split) > sum(plain)


def test_job_wide_restart_keeps_host_memory():
    # every failure is job-wide: no node is lost, so every restart restores from memory once a
    # snapshot exists (it always does: the restart's resume is one)
    sc = _node(memory=MemoryTier(save=1.0, every=30.0, restore=5.0),
               failure_classes=_classes(("sw", 1.0, "restart")))
    r = simulate(sc, CheckpointOnly(), seed=3)
    assert r.restarts > 0 and r.memory_restores == r.restarts
    # the same failures as node failures: without copies elsewhere a lost node's snapshot is gone
    hw = simulate(sc.replace(failure_classes=_classes(("hw", 1.0, "swap"))), CheckpointOnly(), seed=3)
    assert hw.memory_restores <= hw.restarts


# -- the reference walks the same rules ------------------------------------------------------------
@st.composite
def class_cases(draw):
    sc, pol, seed = draw(cases())
    k = draw(st.integers(1, 3))
    raw = [draw(st.floats(0.05, 1.0)) for _ in range(k)]
    shares = [x / math.fsum(raw) for x in raw]
    shares[-1] = 1.0 - math.fsum(shares[:-1])
    spec = []
    for i, p in enumerate(shares):
        rec = draw(st.sampled_from(["swap", "swap", "restart"]))
        kw = {"detect": draw(st.sampled_from([0.0, 0.0, 2.5, 40.0, Exponential(10.0), Weibull.from_mean(20.0, 0.7)]))}
        if rec == "swap":
            kw["masked"] = draw(st.sampled_from([True, True, False]))
        spec.append((f"c{i}", max(p, 0.0), rec, kw))
    return sc.replace(failure_classes=_classes(*spec)), pol, seed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(class_cases())
def test_classes_equal_reference(case):
    check_reference(*case)


def check_reference(sc, pol, seed):
    """The compiled run of ``(sc, pol, seed)`` against the step-by-step reference: every count,
    the committed progress, every time (to 1e-9) and the time to train exactly; returns the run."""
    fast = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    assert fast.finished == ref["finished"]
    for k in COUNTS + ("class_restarts",):
        assert getattr(fast, k) == ref[k], k
    assert fast.progress == ref["committed"] / sc.n_steps
    for k in TIMES + ("detect_time",):
        assert math.isclose(getattr(fast, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), k
    if fast.finished:
        assert fast.time_to_train == ref["wall"]
    return fast


# -- the file's keys ---------------------------------------------------------------------------------
def _file(classes, **failures):
    return {"cluster": {"gpus": 64, "gpus_per_node": 8, "gpus_per_group": 8},
            "job": {"step_time": "10 s", "steps": 100},
            "failures": {"mtbf": "1 h", **failures, "classes": classes}}


GOOD = [{"name": "gpu", "share": 0.7, "recovery": "swap", "detect": "10 s"},
        {"name": "sw", "share": 0.3, "recovery": "restart", "detect": {"law": "exponential", "mean": "5 min"}}]


def test_the_file_reads_classes():
    sf = parse_scenario(_file(GOOD))
    cl = sf.scenario.failure_classes
    assert cl.names == ("gpu", "sw") and cl.classes[0].detect == 10.0 and cl.classes[0].masked
    assert cl.classes[1].detect == Exponential(300.0) and not cl.classes[1].masked and cl.restart_share == 0.3
    assert "classes: gpu 70 % swap" in sf.scenario.failure_description
    assert Scenario.from_dict(sf.scenario.to_dict()) == sf.scenario
    # without the key, the scenario's dict is the one of before (no failure_classes entry)
    plain = _file(GOOD)
    del plain["failures"]["classes"]
    assert "failure_classes" not in parse_scenario(plain).scenario.to_dict()


@pytest.mark.parametrize("bad,words", [
    ([dict(GOOD[0], share=0.5), GOOD[1]], ["failures.classes", "add up to 1", "0.8"]),
    ([dict(GOOD[0], recovery="reboot"), GOOD[1]], ["failures.classes[0].recovery", "'reboot'"]),
    ([dict(GOOD[0], recovery="domain"), GOOD[1]], ["failures.classes[0]", "needs nodes"]),
    ([GOOD[0], dict(GOOD[1], masked=True)], ["failures.classes[1].masked", "restart"]),
    ([GOOD[0], dict(GOOD[1], masked="no")], ["failures.classes[1].masked", "true or false"]),
    ([dict(GOOD[0], detect="-3 s"), GOOD[1]], ["failures.classes[0].detect", "duration"]),
    ([dict(GOOD[0], detect="soon"), GOOD[1]], ["failures.classes[0].detect", "'soon'"]),
    ([GOOD[0], dict(GOOD[1], detect={"law": "gamma", "mean": 3})], ["failures.classes[1].detect.law", "'gamma'"]),
    ([GOOD[0], dict(GOOD[1], detect={"law": "weibull", "mean": "1 min"})], ["failures.classes[1].detect", "shape"]),
    ([GOOD[0], dict(GOOD[1], detect={"law": "exponential", "mean": "1 min", "sigma": 2})],
     ["failures.classes[1].detect.sigma", "unknown"]),
    ([dict(GOOD[0], mtbf="3 h"), GOOD[1]], ["failures.classes[0].mtbf", "share"]),
    ([dict(GOOD[0], colour="red"), GOOD[1]], ["failures.classes[0].colour", "unknown"]),
    ([dict(GOOD[0], share=1.5), GOOD[1]], ["failures.classes[0].share", "<= 1"]),
    ([{"name": "x", "share": 1.0}], ["failures.classes[0]", "needs recovery"]),
    ([GOOD[0], dict(GOOD[1], name="gpu")], ["failures.classes", "distinct"]),
    ("x", ["failures.classes", "one table per class"]),
])
def test_bad_classes_are_refused_naming_the_key(bad, words):
    with pytest.raises(ScenarioFileError) as e:
        parse_scenario(_file(bad))
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_classes_with_domains_are_refused():
    with pytest.raises(ScenarioFileError, match="failures.classes cannot go with"):
        parse_scenario(_file(GOOD, domains=[{"name": "rack", "nodes": 2, "mtbf": "30 d"}]))


def test_the_api_refuses_bad_classes():
    with pytest.raises(ValueError, match="add up to 1"):
        _classes(("a", 0.5, "swap"))
    with pytest.raises(ValueError, match="masked = true cannot go"):
        _classes(("a", 1.0, "restart", {"masked": True}))
    with pytest.raises(ValueError, match="needs groups"):
        _classes(("a", 1.0, "domain"))
    with pytest.raises(ValueError, match="detect must be finite"):
        _classes(("a", 1.0, "swap", {"detect": math.nan}))
    with pytest.raises(TypeError, match="detect must be seconds"):
        _classes(("a", 1.0, "swap", {"detect": "5 s"}))


# -- the example -------------------------------------------------------------------------------------
def test_the_llama3_example_runs(spare_here, tmp_path):
    ex = ROOT / "examples" / "llama3_16k_classes.toml"
    import tomllib

    doc = tomllib.loads(ex.read_text())
    cl = doc["failures"]["classes"]
    # the shares are Table 5's counts over 419: swap 321 (GPU, HBM3, host, maintenance, SDC), restart 63
    # (software, NCCL hangs, dependencies), domain 35 (network switches and cables)
    assert math.fsum(c["share"] for c in cl) == pytest.approx(1.0, abs=1e-12)
    assert round(419 * math.fsum(c["share"] for c in cl if c["recovery"] == "swap")) == 321
    assert round(419 * math.fsum(c["share"] for c in cl if c["recovery"] == "restart")) == 63
    assert round(419 * next(c["share"] for c in cl if c["name"] == "network")) == 35
    assert round(419 * next(c["share"] for c in cl if c["name"] == "hbm3")) == 72
    out = tmp_path / "run.json"
    p = spare_here("run", ex, "--steps", "2000", "--seeds", "2", "--r-max", "3", "--processes", "1", "--json", out)
    assert p.returncode == 0, p.stderr
    assert "classes: gpu 45.3 % swap" in p.stdout
    import json

    runs = json.loads(out.read_text())["runs"]
    spare = [r for r in runs if r["policy"].startswith("SPARe")]
    assert spare and all(r["restarts"] >= r["class_restarts"] for r in spare)
    assert any(r["class_restarts"] > 0 for r in runs) and all(r["detect_time"] > 0 for r in runs if r["failures_seen"])


# -- the checkpoint rules see the restarts no strategy masks ----------------------------------------
def test_time_between_restarts_counts_the_forced_share():
    sc = _node(n=12)
    f = 0.3
    split = sc.replace(failure_classes=_classes(("hw", 0.7, "swap"), ("odd", 0.1, "swap", {"masked": False}),
                                                ("sw", 0.2, "restart")))
    for pol in (SpareCheckpoint(4), ReplicationCheckpoint(3)):
        e = pol.endurable_failures(sc)
        assert e > 1
        assert pol.time_between_restarts(sc) == e * sc.system_mtbf  # unchanged without classes
        # restarts at rate f / MTBF (forced) plus (1 - f) / (E MTBF) (the policy's own)
        assert pol.time_between_restarts(split) == pytest.approx(sc.system_mtbf / (f + (1 - f) / e), rel=1e-12)
        assert pol.checkpoint_interval(split).seconds < pol.checkpoint_interval(sc).seconds
    assert CheckpointOnly().time_between_restarts(split) == pytest.approx(sc.system_mtbf, rel=1e-12)
    # masked classes only: nothing changes
    masked = sc.replace(failure_classes=_classes(("a", 0.5, "swap"), ("b", 0.5, "swap", {"detect": 9.0})))
    assert SpareCheckpoint(4).time_between_restarts(masked) == SpareCheckpoint(4).time_between_restarts(sc)


# -- the kernel reads detection as data ---------------------------------------------------------------
def test_the_kernel_takes_detection_per_event():
    from spare_core._native import load

    k = load("_timeline")
    K = k.SLOTS
    par = np.zeros(K["N_PARAMS"])
    par[K["P_T_COMP"]], par[K["P_SAVE"]], par[K["P_RESTART"]], par[K["P_INTERVAL"]] = 10.0, 1.0, 7.0, math.inf
    par[K["P_N_STEPS"]], par[K["P_INIT_DEPTH"]], par[K["P_MAX_WALL"]] = 5, 1.0, 1e6
    par[K["P_MEM_EVERY"]] = math.inf
    mult = np.ones(64)
    frel = np.array([15.0])
    kind = np.array([K["F_RESTART"]], dtype=np.int8)
    one, zero = np.ones(1), np.zeros(1)

    def run(det):
        st = k.new_state(1.0, 0.0)
        status, j = k.advance(st, par, frel, 0.0, kind, one, zero, 0, math.inf, mult, None, None, det)
        return status, j, st

    s0, j0, st0 = run(None)
    s1, j1, st1 = run(np.zeros(1))
    assert (s0, j0) == (s1, j1) == (K["RESTARTED"], 1) and np.array_equal(st0, st1)
    s2, _, st2 = run(np.array([4.0]))
    # the restart starts 4 s after the fault: resume at (15 + 4) + 7, restart time 11, detection 4
    assert st2[K["ST_ACT_END"]] == 26.0 and st2[K["ST_RESTART_TOTAL"]] == 11.0 and st2[K["ST_DETECT_TOTAL"]] == 4.0
    for bad in (np.array([-1.0]), np.array([math.nan]), np.array([math.inf])):
        assert run(bad)[0] == K["BAD_OUTCOME"]
    with pytest.raises(ValueError, match="one length"):
        run(np.zeros(2))


# -- spare advise: what each class costs --------------------------------------------------------------
def test_class_variants_drop_one_class_at_its_rate():
    from spare_core.commands.advise import spares_check
    from spare_core.commands.variants import class_variants

    cl = _classes(("hw", 0.5, "swap"), ("sw", 0.3, "restart", {"detect": 60.0}), ("net", 0.2, "restart"))
    sc = _node(failure_classes=cl, repair=Repairs(swap=10.0, spares=4, time=3600.0))
    vs = class_variants(sc)
    assert [v.value for v in vs] == ["hw", "sw", "net"]
    for v, c in zip(vs, cl.classes):
        got = v.scenario
        # the other classes' failures only: the rate times 1 - share, their shares in proportion
        assert got.system_mtbf == pytest.approx(sc.system_mtbf / (1.0 - c.share), rel=1e-12)
        rest = [o for o in cl.classes if o.name != c.name]
        assert got.failure_classes.names == tuple(o.name for o in rest)
        for o, n in zip(rest, got.failure_classes.classes):
            assert n.share == pytest.approx(o.share / (1.0 - c.share), rel=1e-12)
            assert (n.recovery, n.detect, n.masked) == (o.recovery, o.detect, o.masked)
    assert class_variants(_node()) == [] and class_variants(_node(failure_classes=_classes(("a", 1.0, "swap")))) == []
    # Little's law on the pool counts the swap class only
    check = spares_check(sc)
    assert check["in_repair"] == pytest.approx(3600.0 * 0.5 / sc.system_mtbf, rel=1e-12)
    assert spares_check(sc.replace(failure_classes=None))["in_repair"] == pytest.approx(3600.0 / sc.system_mtbf)


def test_advise_reports_the_time_each_class_costs(spare_here, tmp_path):
    ex = ROOT / "examples" / "llama3_16k_classes.toml"
    out = tmp_path / "advise.json"
    p = spare_here("advise", ex, "--steps", "1500", "--seeds", "2", "--r-max", "2", "--processes", "1",
                   "--no-sensitivity", "--json", out)
    assert p.returncode == 0, p.stderr
    assert "failure classes by the time they cost" in p.stdout
    import json

    costs = json.loads(out.read_text())["advice"]["class_costs"]
    assert {c["value"] for c in costs} == {"gpu", "hbm3", "host", "host-maintenance", "sdc", "software", "nccl-hang",
                                           "network", "dependency"}
    assert [c["time_percent"][0] for c in costs] == sorted(c["time_percent"][0] for c in costs)


@pytest.mark.parametrize("detect, want", [
    ({"law": "lognormal", "median": "2 min", "sigma": 1}, LogNormal.from_mu_sigma(math.log(120.0), 1.0)),
    ({"law": "weibull", "shape": 0.7, "scale": "5 min"}, Weibull(0.7, 300.0)),
    ({"law": "constant", "value": "45 s"}, 45.0),
])
def test_detect_reads_every_law_repair_time_reads(detect, want):
    """``detect`` takes its laws through the one reader of laws of durations (``repair.time``'s):
    a log-normal by its median, a Weibull by its scale, a constant as its duration."""
    sf = parse_scenario(_file([GOOD[0], dict(GOOD[1], detect=detect)]))
    assert sf.scenario.failure_classes.classes[1].detect == want
