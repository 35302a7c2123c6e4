"""Capacity traces replayed beside the papers that published them (docs/results.md section 18).

* Bamboo's p3 trace (examples/bamboo_p3.toml, its data copied from github.com/uclasystem/bamboo):
  the trace's own counts (the paper's 167 preemptions in 79 events over 11.4 h, up to 6 at once),
  then, for the three jobs of Bamboo's simulator that the trace's fleet fits (GPT-2, BERT,
  ResNet: their stage counts, step-time tables, batch and rendezvous timeouts,
  ``BAMBOO_MODELS``), spare_core's elastic and checkpoint-only throughput over the replay, in
  samples per second (the elastic job both ways after a fatal restart: ``elastic.resume`` "whole"
  and "any"), beside the fleet's bound (every whole pipeline the fleet can fill, at its
  tabled step, no reconfiguration cost). Given ``--bamboo PATH`` (a checkout of the Bamboo
  repository) it also runs Bamboo's own simulator on the same trace in a subprocess and prints
  its throughput over the same window; spare_core does not depend on it.
* One node failing every hour (the failure rate Oobleck's evaluation is described with;
  examples/oobleck_hourly.toml, a log written by ``hourly_log``): spare_core's elastic throughput
  beside the closed form ``sum over sizes of time_at_size / step(size)``.

Throughput over a window is the most steps a run completes by its end (the largest ``n_steps``
whose run finishes by then, found by bisection: a run of fewer steps is a prefix of a longer
one), times the samples of a step, over the window.

Usage::

    python -m bench.capacity_traces                         # spare_core only, a few seconds
    python -m bench.capacity_traces --bamboo /tmp/bamboo    # + Bamboo's simulator on the trace
    python -m bench.capacity_traces --speed                 # + the replay speed (a 200,000-row log)
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from spare_core.scenario_file import load_scenario_file
from spare_core.sim import simulate
from spare_core.strategies import make_policy

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BAMBOO = EXAMPLES / "bamboo_p3.toml"
OOBLECK = EXAMPLES / "oobleck_hourly.toml"

#: the fleet when the replay starts (5 min into the trace): a job starts whole, so it has at most
#: this many instances' worth of pipelines
START_FLEET = 24

#: the jobs of Bamboo's simulator (project_pactum/simulation/simulator.py: ``num_stages_target``,
#: ``samples_per_step``, the step table by number of pipelines at that stage count, in ms, and
#: ``local_rendezvous_timeout_delta``) that its table covers on this trace's fleet (up to 32
#: instances: at most 2 pipelines of 12 or 4 of 8; the 6-stage jobs would need a fifth pipeline)
BAMBOO_MODELS = {
    "GPT-2": dict(stages=12, samples=32, steps_ms={2: 1085, 1: 1200}, rendezvous_s=20),
    "BERT": dict(stages=12, samples=264, steps_ms={2: 2390, 1: 4310}, rendezvous_s=20),
    "ResNet": dict(stages=8, samples=384, steps_ms={4: 1600, 3: 2400, 2: 3200, 1: 6100}, rendezvous_s=10),
}


def trace_facts(sf) -> dict:
    """The trace's counts as its paper states them: removals, distinct instants, the largest
    bulk, the span; and the fleet's least, largest and mean size, and its time below N nodes."""
    model = sf.scenario.failures
    tr = model.trace
    t, d = tr.changes[0], tr.changes[1]
    rem = t[d < 0]
    inst, counts = np.unique(rem, return_counts=True)
    cap = model.capacity_timeline(sf.scenario.n_groups)
    bounds = np.append(cap.instants, cap.end)
    dt = np.diff(bounds)
    return dict(removals=int(rem.size), instants=int(inst.size), largest_bulk=int(counts.max()),
                additions=int((d > 0).sum()), span_h=float(cap.end / 3600.0), least=int(cap.nodes.min()),
                most=int(cap.nodes.max()), mean=float(np.sum(cap.nodes * dt) / cap.end),
                below={n: float(np.sum(dt[cap.nodes < n]) / cap.end) for n in (12, 15, 16, 24)})


def _variant(name: str, spec: dict, tmp: Path, instances: bool = False) -> Path:
    """examples/bamboo_p3.toml with one of ``BAMBOO_MODELS`` as its job (the trace's path made
    absolute): the most pipelines the fleet can fill, their stage count, step table and
    rendezvous; with ``instances``, the log read instance by instance with Bamboo's 45-s
    instance creation (``failures.trace.removals = "instance"``, ``boot``)."""
    text = BAMBOO.read_text()
    n = min(max(spec["steps_ms"]), START_FLEET // spec["stages"])
    full, rest = spec["steps_ms"][n], {k: v for k, v in spec["steps_ms"].items() if k < n}
    table = "{" + ", ".join(f'{k} = "{v} ms"' for k, v in sorted(rest.items())) + "}"
    repl = {'gpus = 24': f'gpus = {n * spec["stages"]}',
            'gpus_per_group = 12 ': f'gpus_per_group = {spec["stages"]} ',
            'step_time = "1085 ms"': f'step_time = "{full} ms"',
            'reconfigure = "20 s"': f'reconfigure = "{spec["rendezvous_s"]} s"',
            'step_times = {1 = "1200 ms"}': f'step_times = {table}',
            'path = "bamboo_p3_trace.csv"': f'path = "{(EXAMPLES / "bamboo_p3_trace.csv").as_posix()}"',
            'name = "bamboo-p3-gpt2"': f'name = "bamboo-p3-{name.lower()}"'}
    if instances:
        repl['unit_gpus = 1 '] = 'removals = "instance"\nboot = "45 s"\nunit_gpus = 1 '
    for a, b in repl.items():
        assert a in text, a
        text = text.replace(a, b)
    out = tmp / f"bamboo_{name}.toml"
    out.write_text(text)
    return out


def steps_by(scenario, policy, window: float, seed: int = 0) -> int:
    """The most steps a run completes within ``window`` seconds (bisection on ``n_steps``)."""
    def done(k):
        r = simulate(scenario.replace(n_steps=k), policy, seed=seed)
        return r.finished and r.time_to_train <= window

    step = scenario.t_compute + scenario.t_allreduce
    lo, hi = 0, int(window / step) + 1  # hi: more than a failure-free run could do
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if done(mid) else (lo, mid)
    return lo


def fleet_bound(cap, n: int, stages: int, steps_s: dict, window: float) -> float:
    """Steps within ``window`` if the job always ran on every whole pipeline the fleet fills, at
    its tabled step, with no cost to change (the closed form of a free reconfiguration)."""
    bounds = np.minimum(np.append(cap.instants, cap.end), window)
    dt = np.diff(bounds)
    g = np.minimum(n, cap.nodes // stages)
    per = np.array([0.0 if k == 0 else 1.0 / steps_s[int(k)] for k in g])
    tail = max(0.0, window - cap.end) * (0.0 if g[-1] == 0 else 1.0 / steps_s[int(g[-1])])
    return float(np.sum(dt * per) + tail)


def job_hits(cap, n: int, stages: int) -> float:
    """The share of removals that would hit a running instance if a removal took one of the
    fleet's instances at random: each row at an instant where the job runs on ``used`` of the
    fleet's ``C`` instances hits it with probability ``min(1, used / C)`` (spare_core's replay
    has every removal hit the job)."""
    g_after = np.minimum(n, cap.nodes // stages)
    g_before = np.concatenate(([n], g_after[:-1]))
    c_before = np.concatenate(([cap.start], cap.nodes[:-1]))
    used = g_before * stages
    p = np.where(c_before > 0, np.minimum(1.0, used / np.maximum(c_before, 1)), 0.0)
    return float(np.sum(cap.removed * p) / cap.removed.sum())


_BAMBOO_RUN = r"""
import importlib.util, json, sys
path, trace, model, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
spec = importlib.util.spec_from_file_location("bamboo_sim", path + "/project_pactum/simulation/simulator.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
import logging
logging.disable(logging.CRITICAL)
with open(trace) as f:
    s = m.Simulator(seed=0, start_hour=0, model=model, spot_instance_trace=f)
    r = s.simulate(duration=43_200_000)
xs, ys = s.performance_xs, s.performance_ys
area = 0.0
for i in range(0, len(xs) - 1, 2):  # (start, end) of each step in hours, its samples/s twice
    a, b = max(xs[i] * 3600.0, t0), min(xs[i + 1] * 3600.0, t1)
    if b > a:
        area += (b - a) * ys[i]
print(json.dumps(dict(average=r.average_performance, window=area / (t1 - t0), steps=r.num_steps_complete,
                      fatal=r.num_fatal_failures, preemptions=r.num_preemptions, instances=r.average_instances)))
"""


def bamboo_sim(path: str, model: str, t0: float, t1: float) -> dict:
    """Bamboo's own simulator on its p3 trace (a subprocess: its code is not imported here), its
    throughput over its run and over ``[t0, t1]`` of the trace's clock."""
    out = subprocess.run([sys.executable, "-c", _BAMBOO_RUN, path, str(EXAMPLES / "bamboo_p3_trace.csv"), model,
                          str(t0), str(t1)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bamboo_rows(bamboo: str | None = None, instances: bool = False, rendezvous: str | None = None) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in BAMBOO_MODELS.items():
            sf = load_scenario_file(_variant(name, spec, Path(tmp), instances))
            sc, kw = sf.scenario, sf.policy_kwargs()
            cap = sc.failures.capacity_timeline(sc.n_groups)
            window = cap.end  # the replay's clock: 0 is the trace's 300 s
            steps_s = {k: v / 1000.0 for k, v in spec["steps_ms"].items()}
            row = dict(model=name, pipelines=sc.n_groups, stages=spec["stages"], window_h=window / 3600.0,
                       hits=job_hits(cap, sc.n_groups, spec["stages"]))
            # the file (a 30-s save at the "auto" interval), and no lost work (a 1e-6-s save after
            # every step: Bamboo's simulator never rolls back, so it saves nothing and loses nothing)
            free = sc.replace(checkpoint_time=1e-6)
            # elastic_any: the elastic job resuming after a restart on the whole pipelines the fleet
            # fills (elastic.resume = "any") rather than once it holds the whole job
            el = {} if rendezvous is None else {"rendezvous": rendezvous}
            for col, pol, extra in (("elastic", "elastic", el), ("elastic_any", "elastic", {"resume": "any", **el}),
                                    ("ckpt", "ckpt", {})):
                opts = {**kw.get(pol, {}), **extra}
                p = make_policy(pol, **opts)
                row[col] = steps_by(sc, p, window) * spec["samples"] / window
                p0 = make_policy(pol, **{**opts, "interval": 0.0})
                k0 = steps_by(free, p0, window)
                row[col + "_free"] = k0 * spec["samples"] / window
                r0 = simulate(free.replace(n_steps=max(k0, 1)), p0, seed=0)
                row[col + "_stats"] = dict(restarts=r0.restarts, drops=r0.failures_seen, joins=r0.rejoins,
                                           pause_h=r0.pause_time / 3600.0, wait_h=r0.wait_time / 3600.0,
                                           lost_h=r0.lost_time / 3600.0, end_h=r0.time_to_train / 3600.0)
            row["bound"] = fleet_bound(cap, sc.n_groups, spec["stages"], steps_s, window) * spec["samples"] / window
            # the bound's part after the elastic run (no lost work) last completes a step: where
            # its restart waits for the whole job while the fleet still holds whole pipelines
            end = row["elastic_stats"]["end_h"] * 3600.0
            row["bound_after"] = (fleet_bound(cap, sc.n_groups, spec["stages"], steps_s, window)
                                  - fleet_bound(cap, sc.n_groups, spec["stages"], steps_s, end)) * spec["samples"] / window
            row["full"] = spec["samples"] / steps_s[sc.n_groups]
            if bamboo:
                row["bamboo"] = bamboo_sim(bamboo, name, 300.0, 300.0 + window)
            rows.append(row)
    return rows


def hourly_log(path: Path, hours: int) -> None:
    """The one-node-an-hour log (examples/oobleck_hourly_log.csv): one removal at each whole
    hour from 1 h to ``hours`` h (nodes 0, 1, ... in turn), none back."""
    rows = ["time,node,event"] + [f"{h * 3600},node{h - 1},remove" for h in range(1, hours + 1)]
    path.write_text("\n".join(rows) + "\n")


def hourly_closed_form(n: int, k: int, t_comp: float, t_ar: float, pause: float, hours: int, n_steps: int) -> float:
    """The time-to-train of an elastic job (``batch = "keep"``, ``k`` micro-batches a group, no
    checkpoint, no jitter) losing one group at each whole hour: hour ``h`` runs ``n - h`` groups,
    a step of ``ceil(n k / L) / k * t_comp + t_ar``, after the drop's pause; the step in flight at
    each drop is lost. Hour by hour, the steps that fit, until ``n_steps``."""
    done, t = 0, 0.0
    for h in range(hours + 1):
        live = n - h
        step = math.ceil(n * k / live) / k * t_comp + t_ar
        start = 0.0 if h == 0 else h * 3600.0 + pause
        fit = math.inf if h == hours else math.floor((3600.0 * (h + 1) - start) / step)
        if done + fit >= n_steps:
            return start + (n_steps - done) * step
        done += fit
        t = start
    raise AssertionError(t)


def oobleck_row() -> dict:
    """examples/oobleck_hourly.toml's elastic run beside :func:`hourly_closed_form`."""
    sf = load_scenario_file(OOBLECK)
    sc, kw = sf.scenario, sf.policy_kwargs()
    pol = make_policy("elastic", **kw["elastic"])
    r = simulate(sc, pol, seed=0)
    hours = int(sc.failures.trace.n_events)
    want = hourly_closed_form(sc.n_groups, pol.microbatches, sc.t_compute, sc.t_allreduce, pol.reconfigure, hours,
                              sc.n_steps)
    return dict(ttt_h=r.time_to_train / 3600.0, closed_h=want / 3600.0, t0_h=sc.t0 / 3600.0,
                throughput=sc.n_steps / r.time_to_train, drops=r.failures_seen, restarts=r.restarts)


def speed(n_rows: int = 200_000, seed: int = 0) -> list[dict]:
    """The grow-back's replay speed: a fleet wandering at random between 200 and 320 nodes (a
    removal or an addition each row, turned back at the bounds) for an elastic job of 256 groups,
    with and without a step-time table; rows consumed a second."""
    import time

    from spare_core.events.trace import Trace
    from spare_core.events.trace_model import TraceReplay
    from spare_core.sim import Scenario
    from spare_core.strategies.elastic import ElasticDP

    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(30.0, n_rows))
    u = rng.random(n_rows)
    d = np.empty(n_rows, dtype=np.int8)
    fleet = 300
    for i in range(n_rows):  # the log's set-up, not the replay
        x = -1 if u[i] < 0.5 else 1
        if not 200 <= fleet + x <= 320:
            x = -x
        d[i], fleet = x, fleet + x
    rem = d < 0
    tr = Trace(t[rem], np.arange(int(rem.sum())) % 256, n_units=256, end=float(t[-1]), changes=(t, d))
    sc = Scenario(256, n_steps=int(t[-1] / 10.0), t_compute=9.0, t_allreduce=1.0, restart_time=60.0,
                  checkpoint_time=10.0, failure_model=TraceReplay(tr, after="stop", capacity=300), name="speed")
    out = []
    for label, pol in (("no table", ElasticDP(reconfigure=5.0)),
                       ("table", ElasticDP(reconfigure=5.0, step_times={200: 12.0, 230: 11.0}))):
        t0 = time.perf_counter()
        r = simulate(sc, pol, seed=0)
        dt = time.perf_counter() - t0
        out.append(dict(run=label, seconds=dt, rows_per_s=n_rows / dt, drops=r.failures_seen, joins=r.rejoins))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bamboo", help="a checkout of github.com/uclasystem/bamboo: run its simulator on the trace too")
    ap.add_argument("--speed", action="store_true", help="also time the grow-back on a 200,000-row log")
    ap.add_argument("--instances", action="store_true", help="read the trace instance by instance (an idle "
                    "instance's preemption costs nothing, a 45-s boot before an addition serves)")
    ap.add_argument("--rendezvous", choices=["per_change", "per_instant"],
                    help="the elastic job's elastic.rendezvous (per_instant: a swap pauses once)")
    args = ap.parse_args(argv)
    facts = trace_facts(load_scenario_file(BAMBOO))
    print("Bamboo p3 trace (from 5 min):", json.dumps(facts))
    for r in bamboo_rows(args.bamboo, args.instances, args.rendezvous):
        line = (f"{r['model']:7s} {r['pipelines']}x{r['stages']}: elastic {r['elastic']:.2f} (no lost work "
                f"{r['elastic_free']:.2f}: {json.dumps(r['elastic_stats'])}), elastic resuming on any whole "
                f"pipelines {r['elastic_any']:.2f} (no lost work {r['elastic_any_free']:.2f}: "
                f"{json.dumps(r['elastic_any_stats'])}), ckpt {r['ckpt']:.2f} (no lost work "
                f"{r['ckpt_free']:.2f}: {json.dumps(r['ckpt_stats'])}), "
                f"fleet bound {r['bound']:.2f} (of which after the elastic run's last step {r['bound_after']:.2f}), full size {r['full']:.2f} samples/s; removals hitting a running "
                f"instance at random {100 * r['hits']:.1f} %")
        if "bamboo" in r:
            b = r["bamboo"]
            line += (f"; Bamboo's simulator {b['window']:.2f} over the same window ({b['average']:.2f} over its "
                     f"run, {b['fatal']} fatal failures)")
        print(line)
    o = oobleck_row()
    print(f"one node an hour (examples/oobleck_hourly.toml): elastic TTT {o['ttt_h']:.4f} h, closed form "
          f"{o['closed_h']:.4f} h (T0 {o['t0_h']:.3f} h), {o['throughput']:.4f} steps/s, {o['drops']} drops, "
          f"{o['restarts']} restarts")
    if args.speed:
        for row in speed():
            print(f"speed, {row['run']}: {row['seconds']:.2f} s, {row['rows_per_s']:,.0f} rows/s "
                  f"({row['drops']} drops, {row['joins']} joins)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
