"""Logs of capacity events (``read_trace(event_column=...)``): removals are failures, additions
bring capacity back, and a restart waits until the fleet holds the job's nodes again."""
import numpy as np
import pytest

from spare_core.events.trace import Trace, TraceFormatError, read_trace
from spare_core.events.trace_model import FleetCapacity, TraceReplay
from spare_core.sim import Scenario, simulate
from spare_core.strategies import make_policy


def _log(tmp_path, rows, name="cap.csv"):
    p = tmp_path / name
    p.write_text("time,node,event\n" + "".join(f"{t},{u},{e}\n" for t, u, e in rows))
    return p


def _read(p, **kw):
    return read_trace(p, unit_column="node", units="ids", event_column="event", remove_values="preempt",
                      add_values=["add"], **kw)


def test_reader_splits_removals_and_additions(tmp_path):
    rows = [(5, 1, "preempt"), (5, 2, "preempt"), (9, 7, "add"), (20, 3, "preempt"), (40, 8, "add")]
    tr = _read(_log(tmp_path, rows))
    assert tr.times.tolist() == [5.0, 5.0, 20.0] and tr.units.tolist() == [1, 2, 3]
    assert tr.changes[0].tolist() == [r[0] for r in rows]
    assert tr.changes[1].tolist() == [-1 if r[2] == "preempt" else 1 for r in rows]
    assert tr.end == 40.0  # the last addition is still observed


def test_reader_refuses_other_values_naming_them(tmp_path):
    p = _log(tmp_path, [(5, 1, "preempt"), (6, 1, "reboot"), (7, 2, "reboot"), (9, 7, "add")])
    with pytest.raises(TraceFormatError, match=r"'reboot' x2"):
        _read(p)
    # where leaves them out
    tr = read_trace(p, unit_column="node", units="ids", event_column="event", remove_values="preempt",
                    add_values="add", where={"event": ["preempt", "add"]})
    assert tr.times.tolist() == [5.0]
    with pytest.raises(ValueError, match="share"):
        read_trace(p, event_column="event", remove_values="add", add_values="add")
    with pytest.raises(ValueError, match="remove_values"):
        read_trace(p, event_column="event")


def _timeline_short(rows, start, need, end):
    """Step by step: the seconds of [0, end] with fewer than ``need`` nodes."""
    t = sorted({r[0] for r in rows})
    cap, short = start, 0.0
    for i, ti in enumerate(t):
        cap += sum(-1 if r[2] == "preempt" else 1 for r in rows if r[0] == ti)
        nxt = t[i + 1] if i + 1 < len(t) else end
        if cap < need:
            short += nxt - ti
    return short


def _reference_waits(rows, start, need, rt, end):
    """Checkpoint-only under the log, walked instant by instant: each removal instant after the
    resume (from time 0 on before the first restart) is one restart (a bulk event is one),
    resuming once the fleet holds ``need`` nodes at or after ``t + rt``. Returns (restarts,
    total wait)."""
    inst = sorted({r[0] for r in rows})

    def cap_at(x):
        return start + sum(-1 if r[2] == "preempt" else 1 for r in rows if r[0] <= x)

    resume, restarts, wait = 0.0, 0, 0.0
    for ti in inst:
        if (ti <= resume if restarts else ti < resume) or not any(r[0] == ti and r[2] == "preempt" for r in rows):
            continue
        restarts += 1
        t0 = ti + rt
        ok = t0 if cap_at(t0) >= need else next((u for u in inst if u > t0 and cap_at(u) >= need), end)
        wait += ok - t0
        resume = max(t0, ok)
    return restarts, wait


def _random_rows(rng, n_nodes, spares):
    """Removals name the job's node (rank slot) they hit; additions bring a node back while some
    are out, so the fleet never drops below zero nor grows past its start."""
    rows, out, t = [], 0, 0.0
    for _ in range(40):
        t += float(rng.integers(1, 400))
        for _ in range(int(rng.integers(1, 4))):  # bulk: up to 3 rows at one instant
            if out and rng.random() < 0.45:
                rows.append((t, int(rng.integers(n_nodes)), "add"))
                out -= 1
            elif out < n_nodes + spares:
                rows.append((t, int(rng.integers(n_nodes)), "preempt"))
                out += 1
    return rows


@pytest.mark.parametrize("rt", [30.0, 0.0])
@pytest.mark.parametrize("seed", range(6))
def test_checkpoint_only_waits_while_capacity_is_short(tmp_path, seed, rt):
    rng = np.random.default_rng(seed)
    n, spares = 8, int(rng.integers(0, 3))
    rows = _random_rows(rng, n, spares)
    if not any(r[2] == "preempt" for r in rows):
        pytest.skip("no removal")
    end = rows[-1][0] + 100.0
    tr = _read(_log(tmp_path, rows), n_units=n, end=end)
    cap = FleetCapacity(tr.changes, n + spares, n, tr.end)
    assert cap.short() == pytest.approx(_timeline_short(rows, n + spares, n, end), abs=1e-9)
    model = TraceReplay(tr, after="stop", capacity=n + spares)
    # the job outlives the log (steps of 1 s, far more than the log's span); saves every step
    sc = Scenario(n, n_steps=int(end) * 4, t_compute=1.0, t_allreduce=0.0, restart_time=rt, checkpoint_time=1.0,
                  failure_model=model, name="cap")
    res = simulate(sc, make_policy("ckpt"), seed=0)
    restarts, wait = _reference_waits(rows, n + spares, n, rt, end)
    assert res.restarts == restarts
    assert res.wait_time == pytest.approx(wait, abs=1e-6)


@pytest.mark.parametrize("rt", [10.0, 0.0])
@pytest.mark.parametrize("capacity", [10, 20])
def test_bulk_rows_are_one_restart(tmp_path, rt, capacity):
    rows = [(100, u, "preempt") for u in range(5)] + [(300, 9, "add")] * 5
    tr = _read(_log(tmp_path, rows), n_units=10)
    assert tr.n_events == 5 and np.unique(tr.times).size == 1
    sc = Scenario(10, n_steps=2000, t_compute=1.0, t_allreduce=0.0, restart_time=rt, checkpoint_time=1.0,
                  failure_model=TraceReplay(tr, after="stop", capacity=capacity), name="bulk")
    res = simulate(sc, make_policy("ckpt"), seed=0, timeline=True)
    assert res.restarts == 1 and res.failures_seen == 1  # also with no restart cost nor wait
    assert res.wait_time == pytest.approx(300.0 - 100.0 - rt if capacity == 10 else 0.0)


def test_a_log_without_event_column_runs_bit_for_bit():
    tr = Trace([50.0, 50.0, 400.0], [1, 2, 3], n_units=8, end=600.0)
    sc = Scenario(8, n_steps=1000, t_compute=1.0, t_allreduce=0.1, restart_time=20.0, checkpoint_time=2.0,
                  failure_model=TraceReplay(tr, after="stop"), name="plain")
    assert TraceReplay(tr, after="stop").capacity_timeline(8) is None
    a = simulate(sc, make_policy("ckpt"), seed=3).to_dict()
    b = simulate(sc, make_policy("ckpt"), seed=3).to_dict()
    assert {k: repr(v) for k, v in a.items()} == {k: repr(v) for k, v in b.items()}
    assert "capacity" not in TraceReplay(tr, after="stop").to_dict()


def test_capacity_refusals(tmp_path):
    tr = _read(_log(tmp_path, [(5, 1, "preempt"), (6, 2, "preempt")]), n_units=4)
    with pytest.raises(ValueError, match="after='stop'"):
        TraceReplay(tr, after="loop")
    with pytest.raises(ValueError, match="more nodes than the fleet"):
        TraceReplay(tr, after="stop", capacity=1).capacity_timeline(1)
    plain = Trace([1.0], [0], n_units=2)
    with pytest.raises(ValueError, match="event_column"):
        TraceReplay(plain, after="stop", capacity=4)


# -- elastic training with a step-time table ----------------------------------------------------
from spare_core.strategies.elastic.policy import ElasticDP  # noqa: E402


def _elastic_reference(n, n_steps, full, table, drops):
    """Walk the steps: a step at L live groups takes the table's next size down (``full`` at n);
    a drop inside a step loses it, and the live groups redo it at their own step time."""
    sizes = sorted(table)

    def step(live):
        return full if live >= n else table[max(s for s in sizes if s <= live)]

    t, done, live, down = 0.0, 0, n, set()
    ev = sorted(drops)
    k = 0
    while done < n_steps:
        while k < len(ev) and ev[k][0] <= t:
            if ev[k][1] not in down:
                down.add(ev[k][1])
                live -= 1
            k += 1
        end = t + step(live)
        if k < len(ev) and ev[k][0] < end:
            t = ev[k][0]  # the step in flight is lost
            continue
        t, done = end, done + 1
    return t


@pytest.mark.parametrize("seed", range(5))
def test_elastic_step_times_sum_the_table(seed):
    rng = np.random.default_rng(seed)
    n, t_comp, t_ar = 8, 1.0, 0.5
    sizes = sorted(rng.choice(np.arange(1, n), size=3, replace=False).tolist())
    # slower with fewer groups, in half seconds (drops fall on tenths: never at a step's end)
    secs = np.cumsum(rng.integers(1, 4, size=3))[::-1] * 0.5 + (t_comp + t_ar)
    table = {int(s): float(v) for s, v in zip(sizes, secs)}
    k = int(rng.integers(1, n - sizes[0] + 1))  # never below the smallest tabled size
    times = np.sort(rng.integers(1, 300, size=k) + 0.3)
    groups = rng.choice(n, size=k, replace=False)
    tr = Trace(times, groups, n_units=n, end=float(times[-1]))
    sc = Scenario(n, n_steps=200, t_compute=t_comp, t_allreduce=t_ar, restart_time=10.0, checkpoint_time=1.0,
                  jitter=0.0, failure_model=TraceReplay(tr, after="stop"), name="table")
    pol = ElasticDP(reconfigure=0.0, interval=float("inf"), step_times={str(s): v for s, v in table.items()})
    res = simulate(sc, pol, seed=0)
    assert res.restarts == 0 and res.failures_seen == k
    want = _elastic_reference(n, 200, t_comp + t_ar, table, list(zip(times.tolist(), groups.tolist())))
    assert res.wall_time == pytest.approx(want, rel=1e-12)


def test_elastic_step_times_below_the_table_restarts_and_refusals():
    tr = Trace([5.3, 6.3], [0, 1], n_units=4, end=7.0)
    sc = Scenario(4, n_steps=50, t_compute=1.0, t_allreduce=0.0, restart_time=10.0, checkpoint_time=1.0,
                  jitter=0.0, failure_model=TraceReplay(tr, after="stop"), name="low")
    res = simulate(sc, ElasticDP(reconfigure=0.0, interval=float("inf"), step_times={3: 2.0}), seed=0)
    assert res.restarts == 1  # 2 live groups: below the table's smallest size
    with pytest.raises(ValueError, match="shorter than the full-size step"):
        simulate(sc, ElasticDP(step_times={2: 0.5}), seed=0)
    with pytest.raises(ValueError, match="live sizes are 1 .. 3"):
        simulate(sc, ElasticDP(step_times={4: 2.0}), seed=0)
    with pytest.raises(ValueError, match="batch = 'keep'"):
        ElasticDP(batch="shrink", step_times={2: 2.0})
    with pytest.raises(ValueError, match="a key is a number"):
        ElasticDP(step_times={"x": 2.0})
    # without the table, the policy's dict (a run's key) is what it was
    assert "step_times" not in ElasticDP().to_dict()["params"]


# -- prices -----------------------------------------------------------------------------------
def test_spot_price_on_a_preemption_log_on_demand_elsewhere(tmp_path):
    from spare_core.sim.recovery import Pricing

    rows = [(100, 1, "preempt"), (300, 9, "add")]
    tr = _read(_log(tmp_path, rows), n_units=10)
    price = Pricing(3.0, spot_gpu_hour=1.0)
    kw = dict(n_steps=2000, t_compute=1.0, t_allreduce=0.0, restart_time=10.0, checkpoint_time=1.0, jitter=0.0,
              gpus_per_group=8, pricing=price)
    spot = simulate(Scenario(10, failure_model=TraceReplay(tr, after="stop"), name="spot", **kw),
                    make_policy("ckpt"), seed=0)
    plain = Trace(tr.times, tr.units, n_units=10, end=tr.end)
    od = simulate(Scenario(10, failure_model=TraceReplay(plain, after="stop"), name="od", **kw),
                  make_policy("ckpt"), seed=0)
    assert spot.gpu_hour_price == 1.0 and od.gpu_hour_price == 3.0
    assert spot.cost == pytest.approx(spot.gpus_paid * spot.wall_time / 3600.0 * 1.0)
    assert od.cost == pytest.approx(od.gpus_paid * od.wall_time / 3600.0 * 3.0)
    assert spot.wait_time == pytest.approx(300.0 - 110.0) and od.wait_time == 0.0
    assert "spot_gpu_hour" not in Pricing(3.0).to_dict()
    with pytest.raises(ValueError, match="costs.spot_gpu_hour"):
        Pricing(3.0, spot_gpu_hour=0.0)


def test_a_capacity_log_never_short_runs_as_its_removals_alone(tmp_path):
    """With a fleet that always holds the job, the log's additions change nothing: the run
    equals the replay of its removals as a plain failure log, field for field."""
    rng = np.random.default_rng(4)
    rows = _random_rows(rng, 8, 0)
    tr = _read(_log(tmp_path, rows), n_units=8, end=rows[-1][0] + 50.0)
    plain = Trace(tr.times, tr.units, n_units=8, end=tr.end)
    kw = dict(n_steps=5000, t_compute=1.0, t_allreduce=0.1, restart_time=20.0, checkpoint_time=2.0)
    for policy in (make_policy("ckpt"), make_policy("spare", 2)):
        a = simulate(Scenario(8, failure_model=TraceReplay(tr, after="stop", capacity=100), name="x", **kw),
                     policy, seed=1).to_dict()
        b = simulate(Scenario(8, failure_model=TraceReplay(plain, after="stop"), name="x", **kw),
                     policy, seed=1).to_dict()
        a.pop("failure_model"), b.pop("failure_model")
        assert {k: repr(v) for k, v in a.items()} == {k: repr(v) for k, v in b.items()}
        assert a["restarts"] > 0


# -- the example file, end to end ---------------------------------------------------------------
def test_the_preemption_example_runs_end_to_end(capsys):
    from pathlib import Path

    from spare_core.cli import main
    from spare_core.scenario_file import load_scenario_file

    path = Path(__file__).resolve().parents[1] / "examples" / "preemption_job.toml"
    sf = load_scenario_file(path)
    cap = sf.scenario.failures.capacity_timeline(sf.scenario.n_groups)
    assert cap.need == 16 and cap.start == 0 and cap.short() > 0
    kw = sf.policy_kwargs()
    ckpt = simulate(sf.scenario, make_policy("ckpt", **kw.get("ckpt", {})), seed=0)
    el_policy = make_policy("elastic", **kw["elastic"])
    assert el_policy.step_times[0] == [8, 17.0]
    elastic = simulate(sf.scenario, el_policy, seed=0)
    for r in (ckpt, elastic):
        assert r.finished and r.gpu_hour_price == 0.92  # the spot price: the fleet follows the log
    assert ckpt.wait_time > 0 and ckpt.restarts > 0
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "capacity events" in out and "Elastic DP" in out


def test_reader_sorted_and_parquet_agree_with_the_csv(tmp_path):
    rows = [(5, 1, "preempt"), (9, 7, "add"), (5, 2, "preempt"), (20, 3, "preempt"), (40, 8, "add")]
    shuffled = _read(_log(tmp_path, rows), sort=True)
    ordered = _read(_log(tmp_path, sorted(rows, key=lambda r: r[0]), name="sorted.csv"))
    assert shuffled.changes[0].tolist() == ordered.changes[0].tolist()
    assert shuffled.changes[1].tolist() == ordered.changes[1].tolist()
    assert shuffled.units.tolist() == ordered.units.tolist()
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rs = sorted(rows, key=lambda r: r[0])
    p = tmp_path / "cap.parquet"
    pq.write_table(pa.table({"time": [float(r[0]) for r in rs], "node": [r[1] for r in rs],
                             "event": [r[2] for r in rs]}), p)
    tr = _read(p)
    assert tr == ordered.replace(source=tr.source)
    with pytest.raises(TraceFormatError, match="missing event column 'kind'"):
        read_trace(p, unit_column="node", event_column="kind", remove_values="preempt")


def test_a_capacity_log_refuses_repairs_at_the_scenario(tmp_path):
    from spare_core.sim.recovery import Repairs

    tr = _read(_log(tmp_path, [(5, 1, "preempt"), (6, 2, "add")]), n_units=4)
    with pytest.raises(ValueError, match="does not go with repair"):
        Scenario(4, n_steps=10, t_compute=1.0, t_allreduce=0.0, failure_model=TraceReplay(tr, after="stop"),
                 repair=Repairs(spares=1))
    with pytest.raises(ValueError, match="holds 2 nodes at time 0"):
        Scenario(4, n_steps=10, t_compute=1.0, t_allreduce=0.0,
                 failure_model=TraceReplay(tr, after="stop", capacity=2))
