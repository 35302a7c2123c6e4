"""``elastic.resume = "any"``: an elastic job that fell below its fewest groups on a log of
capacity events resumes after the restart as soon as the fleet fills them, on every whole group
it fills then, and grows back on the later additions. Checked against courses computed by hand,
the step-by-step reference (its own walk of the log) on random fleets, and, without the key or
with ``resume = "whole"``, the run of before field for field."""
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from spare_core.events.trace import read_trace
from spare_core.events.trace_model import FleetCapacity, TraceReplay
from spare_core.sim import Scenario, simulate
from spare_core.sim._reference import reference_simulate
from spare_core.strategies.elastic import ElasticDP

TABLE = {3: 12.0, 2: 15.0}
STEP = {4: 10.0, **TABLE}


def _trace(tmp_path, rows, end=1000.0):
    p = tmp_path / "cap.csv"
    p.write_text("time,node,event\n" + "".join(f"{t},{u},{e}\n" for t, u, e in rows))
    return read_trace(p, unit_column="node", units="ids", event_column="event", remove_values="preempt",
                      add_values=["add"], n_units=8, end=end)


def _scenario(tr, n_steps=30, capacity=None):
    return Scenario(4, n_steps=n_steps, t_compute=9.0, t_allreduce=1.0, restart_time=10.0, checkpoint_time=1.0,
                    jitter=0.0, failure_model=TraceReplay(tr, after="stop", capacity=capacity), name="resume")


def _policy(**kw):
    return ElasticDP(reconfigure=0.0, interval=math.inf, min_groups=2, step_times=TABLE, **kw)


def _steps(course):
    """Steps of a course of (live groups, from, to): each stretch a whole number of steps."""
    out = 0
    for size, a, b in course:
        k = (b - a) / STEP[size]
        assert k == int(k), (size, a, b)
        out += int(k)
    return out


def _finish(course, n_steps):
    """The course's end plus the steps that remain at the full size."""
    return course[-1][2] + (n_steps - _steps(course)) * STEP[4]


def test_the_course_by_hand_with_a_wait(tmp_path):
    """4 groups of one node on a fleet of 4, at least 2 live (min_groups; the table's smallest
    size is 2 too). A removal at 100 s, two at 150 s (one live group: a restart), additions at
    200, 300 and 400 s. No checkpoint: the restart loses every step. Restart 10 s."""
    rows = [(100, 0, "preempt"), (150, 1, "preempt"), (150, 2, "preempt"), (200, 5, "add"), (300, 6, "add"),
            (400, 7, "add")]
    tr = _trace(tmp_path, rows)
    sc = _scenario(tr)
    # whole: the fleet holds 4 again at 400 s, the restart ending at 160 s waits 240 s, then all
    # 30 steps at 4 groups
    whole = simulate(sc, _policy(), seed=0)
    assert whole.wall_time == 400.0 + 30 * STEP[4] and whole.wait_time == 400.0 - 160.0
    assert (whole.restarts, whole.failures_seen, whole.rejoins) == (1, 3, 0)
    # any: the fleet fills 2 groups at 200 s (wait 40 s); a join applies from the step after the
    # one in flight: 300 s falls in the 2-group step 290-305, 400 s in the 3-group step 389-401
    course = [(2, 200.0, 305.0), (3, 305.0, 401.0)]
    want = _finish(course, 30)
    anyr = simulate(sc, _policy(resume="any"), seed=0)
    assert anyr.finished and anyr.wall_time == want == 551.0
    assert anyr.wait_time == 200.0 - 160.0
    assert (anyr.restarts, anyr.failures_seen, anyr.rejoins) == (1, 3, 2)
    for pol, res in ((_policy(), whole), (_policy(resume="any"), anyr)):
        ref = reference_simulate(sc, pol, seed=0)
        assert (ref["wall"], ref["wait_time"], ref["rejoins"]) == (res.wall_time, res.wait_time, res.rejoins)


def test_the_course_by_hand_without_a_wait(tmp_path):
    """An addition at 155 s, inside the restart: at its end (160 s) the fleet fills 2 groups, so
    the job resumes then on 2, without waiting; the join of 155 s is not a change of the job."""
    rows = [(100, 0, "preempt"), (150, 1, "preempt"), (150, 2, "preempt"), (155, 5, "add"), (300, 6, "add"),
            (400, 7, "add")]
    tr = _trace(tmp_path, rows)
    cap = FleetCapacity(tr.changes, 4, 4, tr.end)
    assert cap.groups_at(160.0, 4) == 2 and cap.groups_at(154.0, 4) == 1 and cap.groups_at(99.0, 4) == 4
    sc = _scenario(tr)
    # 2-group steps from 160 s: 300 s falls in 295-310; 3-group steps from 310: 400 s in 394-406
    course = [(2, 160.0, 310.0), (3, 310.0, 406.0)]
    res = simulate(sc, _policy(resume="any"), seed=0)
    assert res.wall_time == _finish(course, 30) and res.wait_time == 0.0
    assert (res.restarts, res.rejoins) == (1, 2)
    assert reference_simulate(sc, _policy(resume="any"), seed=0)["wall"] == res.wall_time


def test_a_fleet_never_holding_the_fewest_resumes_whole_at_the_log_end(tmp_path):
    """One node comes back, never two: the restart waits until the log's end (600 s), where the
    fleet is taken as whole again (the log says nothing after it), as with resume = "whole"."""
    rows = [(100, 0, "preempt"), (150, 1, "preempt"), (150, 2, "preempt"), (150, 3, "preempt"), (200, 5, "add"),
            (250, 5, "preempt"), (300, 6, "add")]
    tr = _trace(tmp_path, rows, end=600.0)
    assert FleetCapacity(tr.changes, 4, 4, tr.end).nodes.tolist() == [3, 0, 1, 0, 1]
    sc = _scenario(tr)
    a, w = simulate(sc, _policy(resume="any"), seed=0), simulate(sc, _policy(), seed=0)
    assert a.wall_time == w.wall_time == 600.0 + 30 * STEP[4] and a.wait_time == 600.0 - 160.0
    assert reference_simulate(sc, _policy(resume="any"), seed=0)["wall"] == a.wall_time


def test_shrink_batches_resume_at_the_live_share(tmp_path):
    """With batch = "shrink" a step at L of 4 groups counts L / 4 of a step: resumed on 2 groups
    at 200 s, the 10-s steps count half until the join of 300 s, 3/4 from the step after the
    one it falls in."""
    rows = [(100, 0, "preempt"), (150, 1, "preempt"), (150, 2, "preempt"), (200, 5, "add"), (300, 6, "add"),
            (400, 7, "add")]
    sc = _scenario(_trace(tmp_path, rows), n_steps=20)
    pol = ElasticDP(reconfigure=0.0, interval=math.inf, min_groups=2, batch="shrink", resume="any")
    # the join at 300 s ties a step's end: the step 300-310 has started, at 2 groups. 200-310 s:
    # 11 steps of 1/2; 310-410 s: 10 steps of 3/4; then 20 - 5.5 - 7.5 = 7 steps of 1
    assert 11 / 2 + 10 * 3 / 4 + 7 == 20
    res = simulate(sc, pol, seed=0)
    assert res.wall_time == 410.0 + 7 * 10.0
    assert reference_simulate(sc, pol, seed=0)["wall"] == res.wall_time


def _random_log(rng, fleet):
    rows, t = [], 0.0
    for _ in range(int(rng.integers(6, 30))):
        t += float(rng.integers(1, 150)) + 0.25
        for _ in range(int(rng.integers(1, 4))):
            if fleet and rng.random() < 0.55:
                rows.append((t, int(rng.integers(50)), "preempt"))
                fleet -= 1
            else:
                rows.append((t, int(rng.integers(50)), "add"))
                fleet += 1
    rows.append((t + 1.0, 0, "add"))
    return rows


def _case(tmp_path, seed):
    """A random fleet and job (both batch modes, tables, groups of two nodes, checkpoints or
    none): the scenario and the policy's options."""
    rng = np.random.default_rng(7000 + seed)
    npg = int(rng.integers(1, 3))
    n = int(rng.integers(2, 7))
    spare = int(rng.integers(0, 3))
    rows = _random_log(rng, n * npg + spare)
    p = tmp_path / f"cap{seed}.csv"
    p.write_text("time,node,event\n" + "".join(f"{t},{u},{e}\n" for t, u, e in rows))
    tr = read_trace(p, unit_column="node", units="ids", event_column="event", remove_values="preempt",
                    add_values=["add"], n_units=50, end=rows[-1][0] + 10.0)
    kw = dict(reconfigure=float(rng.choice([0.0, 2.0, 5.5])), min_groups=int(rng.integers(1, n)),
              interval=float(rng.choice([20.0, 60.0, math.inf])))
    if rng.random() < 0.3:
        kw["batch"] = "shrink"
    elif n > 2 and rng.random() < 0.6:
        sizes = sorted(rng.choice(np.arange(1, n), size=min(2, n - 1), replace=False).tolist())
        kw["step_times"] = {int(s): 3.0 + 0.5 * (n - int(s)) for s in sizes}
    sc = Scenario(n, n_steps=int(rng.integers(20, 300)), t_compute=2.0, t_allreduce=0.5,
                  restart_time=float(rng.choice([0.0, 15.0])), checkpoint_time=1.5, jitter=float(rng.choice([0.0, 0.1])),
                  gpus_per_group=8 * npg, failure_model=TraceReplay(tr, after="stop", nodes_per_group=npg,
                                                                   capacity=n * npg + spare), name="fleet")
    return sc, kw


@pytest.mark.parametrize("seed", range(24))
def test_any_equals_the_reference_on_random_fleets(tmp_path, seed):
    """The compiled run equals the reference's, and resume = "whole" the run without the key
    field for field."""
    sc, kw = _case(tmp_path, seed)
    pol = ElasticDP(resume="any", **kw)
    fast = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    assert fast.finished == ref["finished"]
    assert (fast.failures_seen, fast.rejoins, fast.restarts, fast.checkpoints, fast.steps_executed) == (
        ref["failures_seen"], ref["rejoins"], ref["restarts"], ref["checkpoints"], ref["steps_executed"])
    assert fast.wait_time == pytest.approx(ref["wait_time"], abs=1e-9)
    assert fast.pause_time == pytest.approx(ref["pause_time"], abs=1e-9)
    if fast.finished:
        assert fast.time_to_train == ref["wall"]
    a = simulate(sc, ElasticDP(**kw), seed=seed).to_dict()
    b = simulate(sc, ElasticDP(resume="whole", **kw), seed=seed).to_dict()
    assert {k: repr(v) for k, v in a.items()} == {k: repr(v) for k, v in b.items()}


def test_the_random_fleets_resume_short(tmp_path):
    """The random cases above exercise the new resume: in several, a restart resumes before the
    fleet holds the whole job again (less wait than with resume = "whole")."""
    earlier = 0
    for seed in range(24):
        sc, kw = _case(tmp_path, seed)
        a, w = simulate(sc, ElasticDP(resume="any", **kw), seed=seed), simulate(sc, ElasticDP(**kw), seed=seed)
        assert a.wait_time <= w.wait_time or a.restarts != w.restarts
        earlier += a.wait_time < w.wait_time
    assert earlier >= 3


def test_bad_values_and_runs_without_a_growing_log(tmp_path):
    with pytest.raises(ValueError, match="elastic.resume"):
        ElasticDP(resume="some")
    rows = [(100, 0, "preempt"), (150, 1, "preempt")]
    sc = _scenario(_trace(tmp_path, rows))
    with pytest.raises(ValueError, match='elastic.resume = "any" needs a log of capacity events that adds'):
        simulate(sc, _policy(resume="any"), seed=0)
    plain = Scenario(4, n_steps=30, t_compute=9.0, t_allreduce=1.0, system_mtbf=200.0, restart_time=10.0, name="plain")
    with pytest.raises(ValueError, match="elastic.resume"):
        simulate(plain, _policy(resume="any"), seed=0)
    # "whole" is the run without the key, wherever it runs
    a, b = simulate(plain, _policy(), seed=3).to_dict(), simulate(plain, _policy(resume="whole"), seed=3).to_dict()
    assert {k: repr(v) for k, v in a.items()} == {k: repr(v) for k, v in b.items()}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(1, 40), st.booleans()), min_size=2, max_size=25),
       n=st.integers(2, 5), spare=st.integers(0, 2), least=st.integers(1, 4), restart=st.sampled_from([0.0, 5.0, 10.0]),
       interval=st.sampled_from([7.0, math.inf]), reconf=st.sampled_from([0.0, 3.0]))
def test_ties_with_the_reference(tmp_path, rows, n, spare, least, restart, interval, reconf):
    """Rows at whole multiples of 5 s and whole-second costs: resumes fall exactly on rows (a
    restart ending at an instant, a join at a step's end); the kernel equals the reference."""
    fleet, log = n + spare, []
    for k, (dt, remove) in enumerate(rows):
        t = 5.0 * sum(r[0] for r in rows[: k + 1])
        if remove and fleet:
            log.append((t, k, "preempt"))
            fleet -= 1
        else:
            log.append((t, k, "add"))
            fleet += 1
    if not any(r[2] == "add" for r in log):
        log.append((log[-1][0] + 5.0, 99, "add"))
    if not any(r[2] == "preempt" for r in log):
        log.append((log[-1][0] + 5.0, 98, "preempt"))
    p = tmp_path / "ties.csv"
    p.write_text("time,node,event\n" + "".join(f"{t},{u},{e}\n" for t, u, e in log))
    tr = read_trace(p, unit_column="node", units="ids", event_column="event", remove_values="preempt",
                    add_values=["add"], n_units=100, end=log[-1][0] + 5.0)
    sc = Scenario(n, n_steps=60, t_compute=4.0, t_allreduce=1.0, restart_time=restart, checkpoint_time=1.0, jitter=0.0,
                  failure_model=TraceReplay(tr, after="stop", capacity=n + spare), name="ties")
    pol = ElasticDP(reconfigure=reconf, min_groups=min(least, n), interval=interval, resume="any")
    fast = simulate(sc, pol, seed=0)
    ref = reference_simulate(sc, pol, seed=0)
    assert (fast.finished, fast.failures_seen, fast.rejoins, fast.restarts, fast.steps_executed) == (
        ref["finished"], ref["failures_seen"], ref["rejoins"], ref["restarts"], ref["steps_executed"])
    assert fast.wait_time == ref["wait_time"] and fast.pause_time == ref["pause_time"]
    if fast.finished:
        assert fast.time_to_train == ref["wall"]
