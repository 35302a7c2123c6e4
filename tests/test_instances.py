"""A capacity log read instance by instance (``failures.trace.removals = "instance"``,
``failures.trace.boot``): the walk against an oracle that ranks the usable instances from
scratch at every row, closed forms of idle removals and boots, the run against the step-by-step
reference, the file's keys and their refusals."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_core.events.instances import walk_instances
from spare_core.events.trace_model import TraceReplay
from spare_core.scenario_file import load_scenario_file as load_scenario
from spare_core.sim import Scenario, simulate
from spare_core.sim._reference import reference_simulate
from spare_core.strategies import make_policy
from spare_core.strategies.elastic import ElasticDP
from test_capacity_growback import assert_fleet_same
from test_capacity_trace import _log, _read


def _oracle(rows, start, need, end, boot, removals):
    """The job holds the ``need`` instances usable the longest; one entering takes the lowest
    node no instance of the job holds. Ranked from scratch after every event."""
    first = {}
    for _, d, u in rows:
        first.setdefault(u, d)
    named = sorted(u for u, d in first.items() if d < 0)
    usable = {u: (-math.inf, r) for r, u in enumerate(named)}
    for k in range(start - len(named)):
        usable[("anon", k)] = (-math.inf, len(named) + k)
    booting, slot = {}, {}
    changes, fails, idle, unbooted = [], [], 0, 0

    def settle():
        held = sorted(usable, key=usable.get)[:need]
        for u in [u for u in slot if u not in held]:
            del slot[u]
        for u in held:
            if u not in slot:
                slot[u] = min(set(range(need)) - set(slot.values()))

    def readies(t):
        for u, key in sorted(booting.items(), key=lambda kv: kv[1]):
            if key[0] <= t:
                del booting[u]
                usable[u] = key
                changes.append((key[0], 1, False))
                settle()

    settle()
    k = -1
    for i, (t, d, u) in enumerate(rows):
        readies(t)
        if d < 0:
            k += 1
            if u in booting:
                del booting[u]
                unbooted += 1
                continue
            held = u in slot
            hit = held or removals == "job"
            changes.append((t, -1, hit))
            if hit:
                fails.append((k, slot[u] if held and removals == "instance" else -1))
            elif removals == "instance":
                idle += 1
            del usable[u]
            settle()
        elif t == 0.0 or boot == 0.0:
            usable[u] = (t, i)
            changes.append((t, 1, False))
            settle()
        else:
            booting[u] = (t + boot, i)
    readies(end)
    return changes, fails, idle, unbooted


@st.composite
def _fleet_logs(draw):
    """A fleet starting with ``start`` instances (ids 0..start-1), some of them never named,
    losing and gaining instances (new ids, or ones removed before), bulk rows, removals of
    instances just added (booting, with a boot)."""
    start = draw(st.integers(0, 8))
    need = draw(st.integers(1, 8))
    present, gone, nxt = list(range(start)), [], start
    rows, t = [], 0.0
    for _ in range(draw(st.integers(1, 30))):
        t += draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 10.0]))
        if present and draw(st.booleans()):
            u = present.pop(draw(st.integers(0, len(present) - 1)))
            rows.append((t, -1, u))
            gone.append(u)
        else:
            if gone and draw(st.booleans()):
                u = gone.pop(draw(st.integers(0, len(gone) - 1)))
            else:
                u, nxt = nxt, nxt + 1
            rows.append((t, 1, u))
            present.append(u)
    boot = draw(st.sampled_from([0.0, 0.5, 2.0, 7.0]))
    end = t + draw(st.sampled_from([0.0, 1.0, 20.0]))
    return rows, start, need, end, boot, draw(st.sampled_from(["instance", "job"]))


@settings(max_examples=400, deadline=None)
@given(_fleet_logs())
def test_the_walk_holds_the_instances_usable_the_longest(case):
    rows, start, need, end, boot, removals = case
    ch = tuple(np.array(a) for a in zip(*rows))
    v = walk_instances((ch[0].astype(float), ch[1].astype(np.int8), ch[2].astype(np.int64)), start, need, end,
                       boot=boot, removals=removals)
    changes, fails, idle, unbooted = _oracle(rows, start, need, end, boot, removals)
    assert list(zip(v.changes[0].tolist(), v.changes[1].tolist(), v.hits.tolist())) == changes
    assert list(zip(v.rows.tolist(), v.nodes.tolist())) == fails
    assert (v.idle, v.unbooted) == (idle, unbooted)
    assert np.all(np.diff(v.changes[0]) >= 0) and start + np.cumsum(v.changes[1]).min(initial=0) >= 0


def test_read_as_counts_the_walk_is_the_log():
    """Without a boot, ``removals = "job"`` gives back the log's own changes and every row."""
    rng = np.random.default_rng(3)
    t = np.sort(rng.integers(1, 100, 40)).astype(float)
    d, u, present, nxt = [], [], list(range(6)), 6
    for _ in t:
        if present and rng.random() < 0.5:
            d.append(-1)
            u.append(present.pop(int(rng.integers(len(present)))))
        else:
            d.append(1)
            u.append(nxt)
            present.append(nxt)
            nxt += 1
    d, u = np.array(d, dtype=np.int8), np.array(u)
    v = walk_instances((t, d, u), 6, 4, 200.0, removals="job")
    assert v.changes[0].tolist() == t.tolist() and v.changes[1].tolist() == d.tolist()
    assert v.rows.tolist() == list(range(int((d < 0).sum()))) and v.hits.tolist() == (d < 0).tolist()


def test_the_walk_refuses_a_log_its_instances_contradict():
    with pytest.raises(ValueError, match="row 1 .* removes instance 4, which is not in the fleet"):
        walk_instances((np.array([1.0, 2.0]), np.array([-1, -1], dtype=np.int8), np.array([4, 4])), 3, 2, 5.0)
    with pytest.raises(ValueError, match="adds instance 0, which is in the fleet already"):
        walk_instances((np.array([1.0, 2.0]), np.array([1, 1], dtype=np.int8), np.array([0, 0])), 3, 2, 5.0)
    with pytest.raises(ValueError, match="removes 2 instances before adding them .* more than its 1 nodes"):
        walk_instances((np.array([1.0, 2.0]), np.array([-1, -1], dtype=np.int8), np.array([1, 0])), 1, 1, 5.0)


def _idle_log(tmp_path, n, extra, cycles):
    """A fleet of ``n + extra``: the job's ``n`` (ids 0..n-1, named by a removal at the end) and
    ``extra`` idle instances preempted and replaced every 100 s."""
    rows, nxt = [], n
    idle = list(range(nxt, nxt + extra))
    rows += [(0, u, "add") for u in range(n)] + [(0, u, "add") for u in idle]
    nxt += extra
    for c in range(cycles):
        t = 100 * (c + 1)
        u = idle.pop(0)
        rows += [(t, u, "preempt"), (t + 1, nxt, "add")]
        idle.append(nxt)
        nxt += 1
    rows.append((100 * cycles + 50, 0, "preempt"))
    return _read(_log(tmp_path, rows), n_units=nxt)


@pytest.mark.parametrize("policy", ["ckpt", "elastic"])
def test_idle_preemptions_cost_the_job_nothing(tmp_path, policy):
    """Only idle instances are preempted until the job's last step: read by instance the run is
    the failure-free one; read as counts every preemption is a failure."""
    n, cycles = 4, 20
    tr = _idle_log(tmp_path, n, 2, cycles)
    kw = dict(n_steps=1000, t_compute=1.0, t_allreduce=0.0, restart_time=10.0, checkpoint_time=1.0, name="idle")
    pol = make_policy(policy, interval=60.0) if policy == "ckpt" else ElasticDP(reconfigure=5.0, min_groups=1,
                                                                                  interval=60.0)
    inst = simulate(Scenario(n, failure_model=TraceReplay(tr, after="stop", capacity=0, removals="instance"), **kw),
                    pol, seed=0)
    free = simulate(Scenario(n, system_mtbf=1e15, **kw), pol, seed=0)  # no failure within the run
    counts = simulate(Scenario(n, failure_model=TraceReplay(tr, after="stop", capacity=0), **kw), pol, seed=0)
    assert inst.failures_seen == 0 and inst.wall_time == free.wall_time
    assert counts.failures_seen >= 9  # 100 s apart in a ~1,000-s job


@pytest.mark.parametrize("rt, boot", [(10.0, 45.0), (30.0, 45.0), (60.0, 45.0), (10.0, 0.0)])
def test_a_boot_is_waited_out_by_a_restart(tmp_path, rt, boot):
    """A fleet of exactly the job: instance 1 preempted at 200 s, its replacement added at once.
    The checkpoint-only restart waits for the replacement's boot: max(0, boot - restart)."""
    rows = [(0, u, "add") for u in range(4)] + [(200, 1, "preempt"), (200, 9, "add")]
    tr = _read(_log(tmp_path, rows), n_units=10, end=2000.0)
    sc = Scenario(4, n_steps=1000, t_compute=1.0, t_allreduce=0.0, restart_time=rt, checkpoint_time=1.0,
                  failure_model=TraceReplay(tr, after="stop", capacity=0, boot=boot), name="boot")
    res = simulate(sc, make_policy("ckpt"), seed=0)
    assert res.restarts == 1 and res.wait_time == pytest.approx(max(0.0, boot - rt), abs=1e-9)
    assert res.wall_time == reference_simulate(sc, make_policy("ckpt"), seed=0)["wall"]


def test_a_removal_while_it_boots_never_counts(tmp_path):
    """An instance added and preempted within its boot: neither row reaches the job (read as
    counts it is a failure)."""
    rows = [(0, u, "add") for u in range(3)] + [(100, 7, "add"), (120, 7, "preempt")]
    tr = _read(_log(tmp_path, rows), n_units=8, end=500.0)
    m = TraceReplay(tr, after="stop", capacity=0, boot=45.0)
    v = m.view(3)
    assert v.rows.size == 0 and v.unbooted == 1 and v.changes[0].tolist() == [0.0, 0.0, 0.0]
    sc = Scenario(3, n_steps=300, t_compute=1.0, t_allreduce=0.0, restart_time=5.0, checkpoint_time=1.0,
                  failure_model=m, name="boot")
    assert simulate(sc, make_policy("ckpt"), seed=0).failures_seen == 0


def _random_fleet(rng, n, extra):
    """A consistent instance log: the starting ``n + extra`` (ids 0..), preempted and added."""
    present, gone, nxt = list(range(n + extra)), [], n + extra
    rows, t = [], 0.0
    for _ in range(int(rng.integers(5, 30))):
        t += float(rng.integers(1, 90)) + 0.25
        for _ in range(int(rng.integers(1, 4))):
            if present and rng.random() < 0.5:
                u = present.pop(int(rng.integers(len(present))))
                rows.append((t, u, "preempt"))
                gone.append(u)
            else:
                if gone and rng.random() < 0.3:
                    u = gone.pop(int(rng.integers(len(gone))))
                else:
                    u, nxt = nxt, nxt + 1
                rows.append((t, u, "add"))
                present.append(u)
    if not any(r[2] == "preempt" for r in rows):
        rows.append((t + 1.0, present[0], "preempt"))
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_fast_equals_reference_read_by_instance(tmp_path, seed):
    rng = np.random.default_rng(500 + seed)
    npg = int(rng.integers(1, 3))
    n = int(rng.integers(2, 6))
    extra = int(rng.integers(0, 4))
    rows = _random_fleet(rng, n * npg, extra)
    tr = _read(_log(tmp_path, rows), n_units=200, end=rows[-1][0] + 10.0)
    boot = float(rng.choice([0.0, 4.0, 30.0]))
    removals = str(rng.choice(["instance", "job"]))
    if removals == "job" and boot == 0.0:
        boot = 4.0
    model = TraceReplay(tr, after="stop", nodes_per_group=npg, capacity=n * npg + extra, removals=removals,
                        boot=boot, placement=str(rng.choice(["log", "spread"])))
    sc = Scenario(n, n_steps=int(rng.integers(20, 200)), t_compute=2.0, t_allreduce=0.5,
                  restart_time=float(rng.choice([0.0, 15.0])), checkpoint_time=1.5,
                  jitter=float(rng.choice([0.0, 0.1])), gpus_per_group=8 * npg, failure_model=model, name="inst")
    for pol in (make_policy("ckpt"), ElasticDP(reconfigure=float(rng.choice([0.0, 3.0])), min_groups=1,
                                               interval=60.0)):
        assert_fleet_same(sc, pol, seed)


def test_the_model_round_trips_and_reads_as_counts_as_before(tmp_path):
    rows = [(0, u, "add") for u in range(5)] + [(50, 4, "preempt"), (60, 0, "preempt"), (70, 8, "add")]
    tr = _read(_log(tmp_path, rows), n_units=9, end=100.0)
    assert len(tr.changes) == 3 and tr.changes[2].tolist() == [0, 1, 2, 3, 4, 4, 0, 8]
    m = TraceReplay(tr, after="stop", capacity=0, removals="instance", boot=5.0)
    back = TraceReplay.from_dict(m.to_dict())
    assert back.to_dict() == m.to_dict() and (back.removals, back.boot) == ("instance", 5.0)
    assert back.view(4).rows.tolist() == m.view(4).rows.tolist()
    counts = TraceReplay(tr, after="stop", capacity=0)
    assert len(counts.trace.changes) == 2 and "removals" not in counts.to_dict()
    assert m.view(4).rows.tolist() == [1] and m.view(4).idle == 1  # instance 4 was idle


_FILE = """
[cluster]
gpus = 8
gpus_per_node = 1
gpus_per_group = 2

[job]
step_time = "1 s"
allreduce_time = 0
steps = 2000

[failures]
model = "trace"
after = "stop"

[failures.trace]
path = "cap.csv"
unit_column = "node"
event_column = "event"
remove_values = "preempt"
add_values = "add"
capacity = 0
unit_gpus = 1
{extra}

[costs]
restart = "20 s"
checkpoint_save = "2 s"
"""


def test_the_file_keys_run_and_refuse(tmp_path):
    rows = [(0, u, "add") for u in range(10)] + [(300, 9, "preempt"), (400, 2, "preempt"), (400, 11, "add"),
                                                 (900, 11, "preempt"), (950, 12, "add")]
    _log(tmp_path, rows)
    p = tmp_path / "s.toml"
    p.write_text(_FILE.format(extra='removals = "instance"\nboot = "45 s"'))
    sf = load_scenario(p)
    assert sf.scenario.failures.removals == "instance" and sf.scenario.failures.boot == 45.0
    assert "read instance by instance: of its removals 1 take a node of the job, 2 an idle instance" in \
        sf.scenario.failures.describe(4)
    res = simulate(sf.scenario, make_policy("ckpt"), seed=0)
    assert res.failures_seen == 1  # instance 2 (8, idle the longest, takes its node); 9 and 11 were idle
    for extra, msg in (('removals = "node"', "failures.trace.removals"), ('boot = "-3 s"', "failures.trace.boot")):
        p.write_text(_FILE.format(extra=extra))
        with pytest.raises(ValueError, match=msg):
            load_scenario(p)
    # without event_column the keys have nothing to read
    p.write_text(_FILE.format(extra='boot = "45 s"').replace('event_column = "event"\nremove_values = "preempt"\n'
                                                             'add_values = "add"\ncapacity = 0\n', "")
                 .replace('unit_column = "node"', 'unit_column = "node"\nwhere = {event = "preempt"}'))
    with pytest.raises(ValueError, match="failures.trace.boot.*goes with event_column"):
        load_scenario(p)
    # an instance removed twice: the file's key is named
    _log(tmp_path, rows + [(990, 11, "preempt")])
    p.write_text(_FILE.format(extra='removals = "instance"'))
    with pytest.raises(ValueError, match="failures.trace.*removes instance 11, which is not in the fleet"):
        load_scenario(p)
