"""Failure classes of ``recovery = "domain"`` (issue 32 item 1): a failure that takes every group
of its domain at once (``spare_core.sim.classes.DomainEpochs``).

* Each event's groups are its domain's groups that are up, counted directly from the layout
  (contiguous domains of ``groups`` groups, the last one partial) and the run's own timeline:
  the failure's group first, then the others in increasing order; without ``[repair]`` a group
  an event took never fails again in the epoch.
* The share counts events: the domain events among the events a run meets are a binomial draw
  of the class's share (a two-sided test over seeds).
* The detection is counted once per event, the class's restarts once per unmasked event, and
  with ``[repair]`` every group an event takes takes a spare.
* A domain of one group is a swap class, bit for bit (the wrapped source changes nothing else);
  a class without ``groups`` keeps its dict as before.
* The reference simulator walks the same rules (hypothesis cases with domain classes).
* Reader errors name the key; the Llama 3 example's switch class runs end to end.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from spare_core.distributions import Exponential
from spare_core.events.domains import DomainFailures
from spare_core.events.models import GroupLifetimes
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import CheckpointOnly, ElasticDP, MemoryTier, Repairs, Scenario, SpareCheckpoint, simulate
from spare_core.sim._reference import reference_simulate
from spare_core.sim.classes import FailureClass, FailureClasses
from test_failure_classes import POLICIES, _classes, _node, _same_run, check_reference
from test_strategies_reference import COUNTS, TIMES, cases

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def _events(tl, dom_class):
    """The run's events from its timeline: (first index, end index) of each run of failures at one
    time and of one class (a domain event's copies; any other failure alone)."""
    t, c = tl.failure_time, tl.failure_class
    out, i = [], 0
    while i < t.shape[0]:
        j = i + 1
        if c[i] == dom_class:
            while j < t.shape[0] and t[j] == t[i] and c[j] == dom_class:
                j += 1
        out.append((i, j))
        i = j
    return out


@pytest.mark.parametrize("n, groups", [(7, 3), (8, 2), (5, 5), (6, 4)])
def test_each_event_takes_the_domains_groups_that_are_up(n, groups):
    cl = _classes(("hw", 0.5, "swap"), ("switch", 0.5, "domain", {"groups": groups}))
    sc = _node(n, n_steps=400, failure_classes=cl)
    met = 0
    for seed in range(12):
        tl = simulate(sc, ElasticDP(reconfigure=5.0), seed=seed, timeline=True).timeline
        down = set()
        for e, (i, j) in enumerate(_events(tl, 1)):
            g = int(tl.failure_group[i])
            if tl.failure_class[i] == 1:
                lo = (g // groups) * groups
                # the layout's direct count: the domain's groups (the last domain partial) still up
                want = [g] + [h for h in range(lo, min(lo + groups, n)) if h != g and h not in down]
                assert tl.failure_group[i:j].tolist() == want
                met += 1
            else:
                assert j == i + 1
            assert not down & set(tl.failure_group[i:j].tolist())  # no group fails twice in an epoch
            down |= set(tl.failure_group[i:j].tolist())
            if tl.failure_restart[j - 1]:
                down = set()
    assert met > 20


def test_the_share_counts_events():
    p = 0.3
    cl = _classes(("hw", 1.0 - p, "swap"), ("switch", p, "domain", {"groups": 3}))
    sc = _node(9, n_steps=400, failure_classes=cl)
    k = total = 0
    for seed in range(40):
        tl = simulate(sc, ElasticDP(reconfigure=5.0), seed=seed, timeline=True).timeline
        ev = _events(tl, 1)
        total += len(ev)
        k += sum(1 for i, _ in ev if tl.failure_class[i] == 1)
    assert total > 400
    # each event's class is the draw of its own failure: Bernoulli(p), whatever came before
    assert stats.binomtest(k, total, p).pvalue > 1e-3, (k, total)


def test_detection_once_per_event_and_restarts_once_per_unmasked_event():
    cl = _classes(("hw", 0.6, "swap", {"detect": 2.0}), ("switch", 0.4, "domain", {"groups": 2, "detect": 30.0}))
    unmasked = _classes(("hw", 0.6, "swap", {"detect": 2.0}),
                        ("switch", 0.4, "domain", {"groups": 2, "detect": 30.0, "masked": False}))
    for classes in (cl, unmasked):
        for pol in (ElasticDP(reconfigure=5.0), SpareCheckpoint(3), CheckpointOnly()):
            for seed in range(4):
                r = simulate(_node(6, failure_classes=classes), pol, seed=seed, timeline=True)
                tl = r.timeline
                ev = _events(tl, 1)
                dom = [(i, j) for i, j in ev if tl.failure_class[i] == 1]
                hw = [(i, j) for i, j in ev if tl.failure_class[i] == 0]
                assert r.detect_time == pytest.approx(30.0 * len(dom) + 2.0 * len(hw), rel=1e-12)
                if classes is unmasked:
                    # the event restarts at its first group: the rest of it is never reached
                    assert all(j == i + 1 and tl.failure_restart[i] for i, j in dom)
                    assert r.class_restarts == len(dom)
                else:
                    assert r.class_restarts == 0


def test_every_group_an_event_takes_takes_a_spare():
    cl = _classes(("hw", 0.5, "swap"), ("switch", 0.5, "domain", {"groups": 3}))
    sc = _node(9, n_steps=400, failure_classes=cl, repair=Repairs(swap=5.0, spares=None, time=300.0, rejoin=5.0))
    seen = 0
    for seed in range(6):
        r = simulate(sc, ElasticDP(reconfigure=5.0), seed=seed, timeline=True)
        # every failure the run met took a spare (a domain event's copies each one)
        assert r.spares_taken == r.timeline.failure_time.shape[0] == r.failures_seen
        seen += sum(1 for i, j in _events(r.timeline, 1) if j - i > 1)
    assert seen > 5  # events of several groups were met


@pytest.mark.parametrize("pol", POLICIES, ids=lambda p: type(p).__name__)
@pytest.mark.parametrize("extra", [{}, {"memory": MemoryTier(save=1.0, every=40.0, restore=5.0)},
                                   {"repair": Repairs(swap=10.0, spares=1, time=500.0, rejoin=5.0)}],
                         ids=["plain", "memory", "repair"])
def test_a_domain_of_one_group_is_a_swap_class(pol, extra):
    sc = _node(**extra)
    swap = _classes(("hw", 0.6, "swap", {"detect": 3.0}), ("one", 0.4, "swap", {"detect": Exponential(9.0)}))
    dom = _classes(("hw", 0.6, "swap", {"detect": 3.0}), ("one", 0.4, "domain", {"groups": 1, "detect": Exponential(9.0)}))
    for seed in range(3):
        a = simulate(sc.replace(failure_classes=swap), pol, seed=seed, timeline=True)
        b = simulate(sc.replace(failure_classes=dom), pol, seed=seed, timeline=True)
        _same_run(a, b, skip=("failure_model",))
        for f in ("failure_time", "failure_group", "failure_restart", "depth_after", "epoch_start", "epoch_end",
                  "failure_class"):
            assert np.array_equal(getattr(a.timeline, f), getattr(b.timeline, f)), f


def test_a_class_without_groups_keeps_its_dict():
    c = FailureClass("hw", 1.0, "swap")
    assert "groups" not in c.to_dict()
    d = FailureClass("sw", 1.0, "domain", groups=4)
    assert d.to_dict()["groups"] == 4 and d.masked
    assert FailureClasses.from_dict([d.to_dict()]).classes[0] == d
    with pytest.raises(ValueError, match="needs groups"):
        FailureClass("sw", 1.0, "domain")
    with pytest.raises(ValueError, match="only goes with"):
        FailureClass("sw", 1.0, "swap", groups=2)
    with pytest.raises(ValueError, match="needs groups"):
        FailureClass("sw", 1.0, "domain", groups=0)


# -- the reference walks the same rules ------------------------------------------------------------
@st.composite
def domain_cases(draw):
    sc, pol, seed = draw(cases())
    assume(not isinstance(sc.failures, DomainFailures))  # refused with domain classes (below)
    p = draw(st.floats(0.1, 0.9))
    dom = {"groups": draw(st.integers(1, max(1, sc.n_groups))), "masked": draw(st.sampled_from([True, True, False])),
           "detect": draw(st.sampled_from([0.0, 4.0, Exponential(10.0)]))}
    other = draw(st.sampled_from(["swap", "restart"]))
    spec = [("a", 1.0 - p, other, {"detect": draw(st.sampled_from([0.0, 2.5]))}), ("d", p, "domain", dom)]
    return sc.replace(failure_classes=_classes(*spec)), pol, seed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(domain_cases())
def test_domain_classes_equal_reference(case):
    sc, pol, seed = case
    fast = check_reference(sc, pol, seed)
    # and the batch loop (with the timeline) agrees with the compiled restart loop
    _same_run(fast, simulate(sc, pol, seed=seed, timeline=True), skip=())


# -- the file's keys ---------------------------------------------------------------------------------
def _file(classes, **tables):
    return {"cluster": {"gpus": 128, "gpus_per_node": 8, "gpus_per_group": 16},
            "job": {"step_time": "10 s", "steps": 100},
            "failures": {"mtbf": "1 h", "classes": classes}, **tables}


def test_the_file_reads_a_domain_class():
    sf = parse_scenario(_file([{"name": "gpu", "share": 0.7, "recovery": "swap"},
                               {"name": "switch", "share": 0.3, "recovery": "domain", "nodes": 4,
                                "detect": "1 min", "masked": False}]))
    c = sf.scenario.failure_classes.classes[1]
    # 4 nodes of 8 GPUs behind the switch, 2 nodes per group: 2 groups per domain
    assert (c.recovery, c.groups, c.detect, c.masked) == ("domain", 2, 60.0, False)
    # a domain inside one group takes that group
    sf = parse_scenario(_file([{"name": "tor", "share": 1.0, "recovery": "domain", "nodes": 1}]))
    assert sf.scenario.failure_classes.classes[0].groups == 1


@pytest.mark.parametrize("bad, words", [
    ({"name": "s", "share": 1.0, "recovery": "domain"}, "failures.classes[0] needs nodes"),
    ({"name": "s", "share": 1.0, "recovery": "domain", "nodes": 3}, "failures.classes[0].nodes must be a multiple or a divisor"),
    ({"name": "s", "share": 1.0, "recovery": "domain", "nodes": 99}, "failures.classes[0].nodes must be"),
    ({"name": "s", "share": 1.0, "recovery": "swap", "nodes": 4}, "failures.classes[0].nodes only goes with"),
    ({"name": "s", "share": 1.0, "recovery": "domain", "nodes": "4"}, "failures.classes[0].nodes"),
])
def test_bad_domain_classes_are_refused_naming_the_key(bad, words):
    with pytest.raises(ScenarioFileError, match=__import__("re").escape(words)):
        parse_scenario(_file([bad]))


def test_a_domain_class_refuses_retirement():
    with pytest.raises(ScenarioFileError, match=r"fleet\.retire_after cannot go with"):
        parse_scenario(_file([{"name": "s", "share": 1.0, "recovery": "domain", "nodes": 4}],
                             fleet={"retire_after": 3}, repair={"swap": "1 min", "time": "1 h"}))


def test_a_domain_class_refuses_retirement_in_the_api():
    """The Scenario refuses it when it is built, as the file does (not only once a run starts)."""
    cl = _classes(("hw", 0.5, "swap"), ("switch", 0.5, "domain", {"groups": 2}))
    sc = _node(4, n_steps=40, failure_classes=cl)
    with pytest.raises(ValueError, match=r"retire_after cannot go with a failure class"):
        sc.replace(repair=Repairs(swap=5.0, spares=4, time=300.0, retire_after=2))
    # without the domain class the same pool is a valid scenario
    sc.replace(failure_classes=_classes(("hw", 1.0, "swap")), repair=Repairs(swap=5.0, spares=4, time=300.0,
                                                                          retire_after=2))


def test_the_llama3_example_has_a_switch_domain(spare_here, tmp_path):
    ex = ROOT / "examples" / "llama3_16k_classes.toml"
    sc = load_scenario_file(ex).scenario
    net = next(c for c in sc.failure_classes.classes if c.name == "network")
    assert net.recovery == "domain" and net.groups == 2 and net.masked  # 32 nodes, 16 per group
    assert round(419 * net.share) == 35
    out = tmp_path / "run.json"
    p = spare_here("run", ex, "--steps", "3000", "--seeds", "2", "--r-max", "3", "--processes", "1", "--json", out)
    assert p.returncode == 0, p.stderr
    assert "network 8.35 % domain of 2 groups" in p.stdout


def test_domain_classes_with_domain_levels_refused():
    """A DomainFailures model and a domain class would both take groups per event: refused in
    the API as in the file (hypothesis found the two disagreeing on a memory restore)."""
    fm = DomainFailures(GroupLifetimes(system_mtbf=25.0), [Exponential(150.0)], groups_per_domain=[2])
    sc = Scenario(4, n_steps=10, t_compute=1.0, t_allreduce=0.0, failure_model=fm, restart_time=0.0,
                  checkpoint_time=1.0)
    assert isinstance(sc.failures, DomainFailures)
    with pytest.raises(ValueError, match="DomainFailures"):
        sc.replace(failure_classes=_classes(("a", 0.5, "swap", {}), ("d", 0.5, "domain", {"groups": 2})))


@pytest.mark.parametrize("repair", [None, Repairs(swap=1.0, spares=3, time=50.0)])
def test_checkpoint_only_domain_event_takes_the_copies_and_spares(repair):
    """Checkpoint-only with a memory tier (and a pool): a domain event takes the copy holders
    and a spare per group, which the one-failure-per-epoch restart loop cannot see; such runs
    take the batch loop and agree with the reference (hypothesis found the restart loop
    counting memory restores from copies the event had taken)."""
    sc = _node(2, n_steps=40, t_compute=1.0, t_allreduce=2.0, system_mtbf=25.0, restart_time=0.0,
               checkpoint_time=1.0, memory=MemoryTier(save=1.0, every=10.0, restore=0.0), repair=repair)
    sc = sc.replace(failure_classes=_classes(("a", 0.5, "swap", {}), ("d", 0.5, "domain", {"groups": 2})))
    for seed in range(12):
        run = check_reference(sc, CheckpointOnly(), seed)
        _same_run(run, simulate(sc, CheckpointOnly(), seed=seed, timeline=True), skip=())
