"""An elastic job on a log of capacity events that adds nodes follows the fleet: it drops groups
at the removals and grows back to its size from the idle nodes, each live size stepping at its
``elastic.step_times`` entry. Checked against a hand-computed course, the step-by-step
reference (its own walk of the log, row by row) and, for logs without additions, the run of
before."""
import math

import numpy as np
import pytest

from spare_core.events.trace import Trace, read_trace
from spare_core.events.trace_model import FleetCapacity, TraceReplay
from spare_core.sim import Scenario, simulate
from spare_core.sim._reference import _Fleet, _FleetMembers, reference_simulate
from spare_core.strategies.elastic import ElasticDP
from test_capacity_trace import _log, _read


def test_the_course_by_hand(tmp_path):
    """4 groups (one node each) on a fleet of 4: removals at 100 and 160 s, additions at 226 and
    286 s. Steps of 10 s at 4 live groups, 12 s at 3 and 15 s at 2; no pause, no save."""
    rows = [(100, 0, "preempt"), (160, 1, "preempt"), (226, 5, "add"), (286, 6, "add")]
    tr = _read(_log(tmp_path, rows), n_units=8, end=400.0)
    table = {3: 12.0, 2: 15.0}
    step = {4: 10.0, **table}
    # by hand: a drop at a step's end loses nothing (ties favour the step); a join applies from
    # the step after the one in flight: 226 falls in the 2-group step 220-235, 286 in the
    # 3-group step 283-295
    course = [(4, 0.0, 100.0), (3, 100.0, 160.0), (2, 160.0, 235.0), (3, 235.0, 295.0)]
    done = sum((b - a) / step[size] for size, a, b in course)
    assert done == 10 + 5 + 5 + 5
    n_steps = 30
    want = 295.0 + (n_steps - done) * step[4]  # the rest at the full size
    course.append((4, 295.0, want))
    assert sum((b - a) / step[size] for size, a, b in course) == n_steps
    cap = FleetCapacity(tr.changes, 4, 4, tr.end)
    t, g, j = cap.membership(4)
    assert t.tolist() == [100.0, 160.0, 226.0, 286.0]
    assert g.tolist() == [3, 2, 2, 3] and j.tolist() == [0, 0, 1, 1]
    sc = Scenario(4, n_steps=n_steps, t_compute=9.0, t_allreduce=1.0, restart_time=10.0, checkpoint_time=1.0,
                  jitter=0.0, failure_model=TraceReplay(tr, after="stop"), name="course")
    pol = ElasticDP(reconfigure=0.0, interval=math.inf, step_times=table)
    res = simulate(sc, pol, seed=0)
    assert res.finished and res.wall_time == want
    assert (res.failures_seen, res.rejoins, res.restarts, res.pause_time) == (2, 2, 0, 0.0)
    # with a 7-s pause at every change: each drop's pause starts at its instant (the step in
    # flight is redone after it), each join's extends the step in flight
    pol = ElasticDP(reconfigure=7.0, interval=math.inf, step_times=table)
    res = simulate(sc, pol, seed=0)
    assert res.pause_time == 4 * 7.0 and res.rejoins == 2
    assert res.wall_time == reference_simulate(sc, pol, seed=0)["wall"]


def test_membership_swaps_bulk_and_groups_of_two_nodes():
    # a fleet of 6 for a job of 4: three removals at 10 s leave 3 (two swaps, one drop), an
    # addition at 20 s fills the job again, a removal at 30 s drops one for good
    ch = (np.array([0.0] * 6 + [10.0] * 3 + [20.0, 30.0]), np.array([1] * 6 + [-1] * 3 + [1, -1]))
    t, g, j = FleetCapacity(ch, 0, 4, 40.0).membership(4)
    assert t.tolist() == [10.0] * 5 + [20.0, 30.0]
    assert j.tolist() == [0, 1, 0, 1, 0, 1, 0] and g.tolist() == [3, 3, 3, 3, 3, 3, 3]
    # two nodes a group: 8 nodes, 4 groups; one removal breaks a group (its other node idles);
    # a second one breaks another, whose survivor and the idle node make a group again: a swap
    # of the short job, its join first; the addition at 9 s fills no whole group
    ch = (np.array([5.0, 6.0, 9.0]), np.array([-1, -1, 1]))
    cap = FleetCapacity(ch, 8, 8, 20.0)
    assert cap.live_groups(4, 2).tolist() == [3, 3, 3]
    t, g, j = cap.membership(4, 2)
    assert t.tolist() == [5.0, 6.0, 6.0] and j.tolist() == [0, 1, 0] and g.tolist() == [3, 3, 3]


def _random_log(rng, n_nodes, spare):
    """A fleet of ``n_nodes + spare`` losing and regaining nodes, bulk rows included; never
    below zero."""
    rows, fleet, t = [], n_nodes + spare, 0.0
    for _ in range(int(rng.integers(4, 30))):
        t += float(rng.integers(1, 120)) + 0.25
        for _ in range(int(rng.integers(1, 4))):
            if fleet and rng.random() < 0.55:
                rows.append((t, int(rng.integers(50)), "preempt"))
                fleet -= 1
            else:
                rows.append((t, int(rng.integers(50)), "add"))
                fleet += 1
    if not any(r[2] == "add" for r in rows):
        rows.append((t + 1.0, 0, "add"))
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_membership_equals_the_reference_walk(tmp_path, seed):
    rng = np.random.default_rng(seed)
    npg = int(rng.integers(1, 3))
    n = int(rng.integers(2, 6))
    spare = int(rng.integers(0, 3))
    rows = _random_log(rng, n * npg, spare)
    tr = _read(_log(tmp_path, rows), n_units=50, end=rows[-1][0] + 10.0)
    cap = FleetCapacity(tr.changes, n * npg + spare, n * npg, tr.end)
    t, g, j = cap.membership(n, npg)
    walk = _FleetMembers(_Fleet(tr.changes, n * npg + spare, n * npg, tr.end), n, npg).events
    assert list(zip(t.tolist(), g.tolist(), j.tolist())) == walk
    # every group's changes alternate from in: out, in, out, ...
    for grp in range(n):
        k = j[g == grp].tolist()
        assert k == [i % 2 for i in range(len(k))]
    live = n + np.cumsum(np.where(j == 1, 1, -1))
    last = np.r_[t[1:] != t[:-1], True]  # after each instant the job holds what the fleet fills
    want = cap.live_groups(n, npg)[np.searchsorted(cap.instants, t[last])]
    assert (live[last] == want).all()


@pytest.mark.parametrize("resume", [None, "any"])
@pytest.mark.parametrize("seed", range(16))
def test_fast_equals_reference_on_random_fleets(tmp_path, seed, resume):
    """Both resumes after a restart (elastic.resume): once the fleet holds the whole job, or on
    the groups it fills once they are the fewest the job runs on."""
    rng = np.random.default_rng(100 + seed)
    npg = int(rng.integers(1, 3))
    n = int(rng.integers(2, 7))
    spare = int(rng.integers(0, 3))
    rows = _random_log(rng, n * npg, spare)
    end = rows[-1][0] + 10.0
    tr = _read(_log(tmp_path, rows), n_units=50, end=end)
    kw = {}
    if n > 2 and rng.random() < 0.6:
        sizes = sorted(rng.choice(np.arange(1, n), size=min(2, n - 1), replace=False).tolist())
        kw["step_times"] = {int(s): 3.0 + 0.5 * (n - int(s)) for s in sizes}
    if resume is not None:
        kw["resume"] = resume
    pol = ElasticDP(reconfigure=float(rng.choice([0.0, 2.0, 5.5])), min_groups=int(rng.integers(1, n)),
                    interval=float(rng.choice([20.0, 60.0, math.inf])), **kw)
    sc = Scenario(n, n_steps=int(rng.integers(20, 200)), t_compute=2.0, t_allreduce=0.5,
                  restart_time=float(rng.choice([0.0, 15.0])), checkpoint_time=1.5, jitter=float(rng.choice([0.0, 0.1])),
                  gpus_per_group=8 * npg, failure_model=TraceReplay(tr, after="stop", nodes_per_group=npg,
                                                                   capacity=n * npg + spare), name="fleet")
    assert_fleet_same(sc, pol, seed)


def assert_fleet_same(sc, pol, seed):
    """A run on a fleet's log against the step-by-step reference: the counts equal, the waits
    and pauses within 1e-9 s, the time to train equal."""
    fast = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    assert fast.finished == ref["finished"]
    assert (fast.failures_seen, fast.rejoins, fast.restarts, fast.checkpoints, fast.steps_executed) == (
        ref["failures_seen"], ref["rejoins"], ref["restarts"], ref["checkpoints"], ref["steps_executed"])
    assert fast.wait_time == pytest.approx(ref["wait_time"], abs=1e-9)
    assert fast.pause_time == pytest.approx(ref["pause_time"], abs=1e-9)
    if fast.finished:
        assert fast.time_to_train == ref["wall"]
    return fast


def test_a_log_without_additions_runs_as_before(tmp_path):
    """No addition row: the replay of the removals, as before this change, field for field
    (the same run as the plain failure log of its removals when the job never restarts)."""
    rows = [(40.5, 1, "preempt"), (90.5, 2, "preempt"), (90.5, 3, "preempt"), (300.5, 0, "preempt")]
    tr = _read(_log(tmp_path, rows), n_units=8, end=500.0)
    plain = Trace(tr.times, tr.units, n_units=8, end=tr.end)
    kw = dict(n_steps=400, t_compute=1.0, t_allreduce=0.1, restart_time=20.0, checkpoint_time=2.0)
    pol = ElasticDP(reconfigure=3.0)
    sc = Scenario(8, failure_model=TraceReplay(tr, after="stop"), name="x", **kw)
    assert not FleetCapacity(tr.changes, 8, 8, tr.end).grows
    a = simulate(sc, pol, seed=1).to_dict()
    b = simulate(Scenario(8, failure_model=TraceReplay(plain, after="stop"), name="x", **kw), pol, seed=1).to_dict()
    a.pop("failure_model"), b.pop("failure_model")
    assert {k: repr(v) for k, v in a.items()} == {k: repr(v) for k, v in b.items()}
    assert a["failures_seen"] == 4 and a["rejoins"] == 0


def test_checkpoint_only_ignores_the_growth_and_the_timeline_records_drops(tmp_path):
    rows = [(0, u, "add") for u in range(6)] + [(50.5, 1, "preempt"), (70.5, 2, "preempt"), (120.5, 9, "add")]
    tr = _read(_log(tmp_path, rows), n_units=10, end=200.0)
    sc = Scenario(4, n_steps=300, t_compute=1.0, t_allreduce=0.0, restart_time=5.0, checkpoint_time=1.0, jitter=0.0,
                  failure_model=TraceReplay(tr, after="stop", capacity=0), name="x")
    from spare_core.strategies import make_policy

    ck = simulate(sc, make_policy("ckpt"), seed=0)
    assert ck.restarts == 2 and ck.rejoins == 0  # every removal hits the job
    el = simulate(sc, ElasticDP(reconfigure=1.0), seed=0, timeline=True)
    # a fleet of 6 for 4 nodes: both removals are swaps (a drop and a join each)
    assert (el.failures_seen, el.rejoins, el.restarts) == (2, 2, 0)
    assert el.timeline.failure_time.tolist() == [50.5, 70.5] and el.timeline.failure_group.tolist() == [3, 3]


def test_a_swap_of_a_short_job_never_takes_it_below_its_size():
    """Two groups of 12 nodes on 20: the job runs short (one group, 8 idle nodes). A removal
    there is a swap whose join comes first (an idle node replaces the lost one), so with
    ``min_groups = 1`` it is never a restart; at the full size the drop comes first."""
    ch = (np.array([5.0, 10.0, 20.0, 30.0] + [40.0] * 5), np.array([-1, -1, -1, -1] + [1] * 5))
    cap = FleetCapacity(ch, 24, 24, 60.0)
    t, g, j = cap.membership(2, 12)
    # 5 s: 23 nodes, a drop (full size, no idle node); 10 s: 22, a swap of the short job (the
    # join first); 20 s, 30 s: likewise; 40 s: 25 nodes, group 1 back
    assert t.tolist() == [5.0, 10.0, 10.0, 20.0, 20.0, 30.0, 30.0, 40.0]
    assert j.tolist() == [0, 1, 0, 1, 0, 1, 0, 1] and g.tolist() == [1] * 8
    live = 2 + np.cumsum(np.where(j == 1, 1, -1))
    assert live.min() == 1
    walk = _FleetMembers(_Fleet(ch, 24, 24, 60.0), 2, 12).events
    assert list(zip(t.tolist(), g.tolist(), j.tolist())) == walk
    tr = Trace(np.array([5.0, 10.0, 20.0, 30.0]), np.array([0, 1, 2, 3]), n_units=24, end=60.0,
               changes=ch)
    sc = Scenario(2, n_steps=100, t_compute=1.0, t_allreduce=0.0, restart_time=5.0, checkpoint_time=1.0, jitter=0.0,
                  gpus_per_group=96, failure_model=TraceReplay(tr, after="stop", nodes_per_group=12), name="swap")
    res = simulate(sc, ElasticDP(reconfigure=1.0, step_times={1: 2.0}), seed=0)
    assert (res.restarts, res.failures_seen, res.rejoins) == (0, 4, 4)


def test_the_preemption_example_grows_back():
    """examples/preemption_job.toml: the elastic job follows its fleet of 20 spot instances, so
    its drops are matched by joins (one group short at the end at most) and it never waits."""
    from pathlib import Path

    from spare_core.scenario_file import load_scenario_file
    from spare_core.strategies import make_policy

    sf = load_scenario_file(Path(__file__).resolve().parents[1] / "examples" / "preemption_job.toml")
    pol = make_policy("elastic", **sf.policy_kwargs()["elastic"])
    r = simulate(sf.scenario, pol, seed=0)
    assert r.finished and r.rejoins > 0
    cap = sf.scenario.failures.capacity_timeline(sf.scenario.n_groups)
    g = cap.live_groups(sf.scenario.n_groups)
    # every change the fleet makes before the run ends, and no more: drops and joins of the log
    before = cap.instants <= r.time_to_train
    t, _, j = cap.membership(sf.scenario.n_groups)
    inside = t <= r.time_to_train
    assert g[before].min() >= pol.step_times[0][0]  # never below the table while it runs: no restart
    assert r.restarts == 0 and r.wait_time == 0.0
    assert (r.failures_seen, r.rejoins) == (int((j[inside] == 0).sum()), int((j[inside] == 1).sum()))


# -- elastic.rendezvous = "per_instant": the changes of one instant are one reconfiguration --------


def _swaps(tmp_path, n, k, gap=100.0):
    """A fleet of ``n + 1`` for a job of ``n`` (one idle instance) losing a node every ``gap``
    seconds and getting one back ``gap / 2`` later: every removal is a swap at the full size (its
    drop, then the idle node joins), every addition brings the idle one back."""
    rows = []
    for i in range(k):
        rows += [((i + 1) * gap, i, "preempt"), ((i + 1.5) * gap, 100 + i, "add")]
    return _read(_log(tmp_path, rows), n_units=200, end=(k + 2) * gap)


@pytest.mark.parametrize("rendezvous, pauses", [(None, 2), ("per_change", 2), ("per_instant", 1)])
def test_a_swap_pauses_once_per_instant(tmp_path, rendezvous, pauses):
    """``k`` swaps at the full size: two pauses each per change, one per instant; the same
    failures and joins either way, and the reference agrees."""
    n, k, reconf = 4, 6, 7.0
    tr = _swaps(tmp_path, n, k)
    sc = Scenario(n, n_steps=200, t_compute=4.0, t_allreduce=1.0, restart_time=10.0, checkpoint_time=1.0,
                  jitter=0.0, failure_model=TraceReplay(tr, after="stop", capacity=n + 1), name="swaps")
    t, g, j = sc.failures.capacity_timeline(n).membership(n)
    assert j.tolist() == [0, 1] * k and (t[::2] == t[1::2]).all()  # every change a swap: drop then join
    pol = ElasticDP(reconfigure=reconf, interval=math.inf, **({} if rendezvous is None else {"rendezvous": rendezvous}))
    res = simulate(sc, pol, seed=0)
    assert (res.failures_seen, res.rejoins, res.restarts) == (k, k, 0)
    assert res.pause_time == pytest.approx(pauses * k * reconf, abs=1e-9)
    ref = reference_simulate(sc, pol, seed=0)
    assert res.wall_time == ref["wall"] and res.pause_time == pytest.approx(ref["pause_time"], abs=1e-9)
    if rendezvous == "per_change":  # the default, bit for bit
        assert res.wall_time == simulate(sc, ElasticDP(reconfigure=reconf, interval=math.inf), seed=0).wall_time


@pytest.mark.parametrize("seed", range(12))
def test_per_instant_fast_equals_reference_on_random_fleets(tmp_path, seed):
    rng = np.random.default_rng(900 + seed)
    npg = int(rng.integers(1, 3))
    n = int(rng.integers(2, 7))
    rows = _random_log(rng, n * npg, int(rng.integers(0, 3)))
    tr = _read(_log(tmp_path, rows), n_units=50, end=rows[-1][0] + 10.0)
    pol = ElasticDP(reconfigure=float(rng.choice([2.0, 5.5])), min_groups=int(rng.integers(1, n)),
                    interval=float(rng.choice([20.0, 60.0, math.inf])), rendezvous="per_instant",
                    **({"resume": "any"} if rng.random() < 0.5 else {}))
    sc = Scenario(n, n_steps=int(rng.integers(20, 200)), t_compute=2.0, t_allreduce=0.5,
                  restart_time=float(rng.choice([0.0, 15.0])), checkpoint_time=1.5, jitter=float(rng.choice([0.0, 0.1])),
                  gpus_per_group=8 * npg, failure_model=TraceReplay(tr, after="stop", nodes_per_group=npg,
                                                                   capacity=n * npg + 1), name="fleet")
    assert_fleet_same(sc, pol, seed)


def test_per_instant_needs_a_fleet_that_adds_nodes():
    sc = Scenario(4, n_steps=50, t_compute=1.0, t_allreduce=0.0, restart_time=5.0, checkpoint_time=1.0,
                  system_mtbf=100.0, name="no-fleet")
    with pytest.raises(ValueError, match="elastic.rendezvous = \"per_instant\" needs a log of capacity events"):
        simulate(sc, ElasticDP(rendezvous="per_instant"), seed=0)
    with pytest.raises(ValueError, match="elastic.rendezvous"):
        ElasticDP(rendezvous="per_swap")
