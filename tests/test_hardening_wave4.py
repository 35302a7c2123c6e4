"""Issue 28, the closing pass: this wave's surfaces pushed the way the earlier items were.

Generated valid scenario files (tests/wave4_files.py: ``[elastic]`` ``step_overhead`` and
``quorum``, ``[checkpoint]`` priced by size and bandwidth, blocking or async, repairs, the
memory tier, interruptions measured on another job size, a price) are read and every policy
of the strategy packages is simulated; each run must

* partition its wall time exactly (kept steps + lost + saves + snapshots + restarts + waits
  + pauses, to 1e-9), stop at its wall limit (no failure simulated past it), keep progress
  in [0, 1] and report GPU-hours and cost equal to gpus_paid * wall / 3600 and that times
  the price, with gpus_paid counted from the file (groups x GPUs per group + the spares'
  nodes);
* be the same run twice on one seed, field for field;

and the reader must give the checkpoint times size / (bandwidth x efficiency) computed here
from the bytes the generator wrote, the per-GPU rate of ``measured_on_gpus`` at any
``--set cluster.gpus``, and the same runs bit for bit for ``step_overhead``/``quorum`` of 0
as without them, and for an async save whose drain is 0 as for the blocking save.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
from pathlib import Path

import numpy as np

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core.cli import main
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import Scenario, simulate
from spare_core.sim._reference import reference_simulate
from spare_core.strategies.registry import make_policy, registered_policy
from tests.test_strategies_reference import COUNTS, TIMES
from tests.wave4_files import (capacity_files, cause_files, straggler_tables, to_toml, valid_files, write_capacity_log,
                               write_cause_log, write_straggler_trace)

PARTS = ("lost_time", "save_time", "memory_save_time", "restart_time", "wait_time", "pause_time")
#: 60 derandomized examples per property in the suite; SPARE_FUZZ_PROFILE=long (with
#: SPARE_FUZZ_EXAMPLES, as the fuzz suite) runs more, randomly
_LONG = os.environ.get("SPARE_FUZZ_PROFILE") == "long"
PROPERTY = settings(max_examples=int(os.environ.get("SPARE_FUZZ_EXAMPLES", "2000")) if _LONG else 60,
                    deadline=None, derandomize=not _LONG, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def runs(sf, seed=3, timeline=False):
    """Every (policy name, r, policy, result) a file compares, on one seed."""
    kw = sf.policy_kwargs()
    out = []
    for name in sf.policies:
        entry = registered_policy(name)
        for r in (sf.redundancies if entry.uses_redundancy else (None,)):
            pol = make_policy(name, r, **kw.get(name, {}))
            out.append((name, r, pol, simulate(sf.scenario, pol, seed=seed, timeline=timeline)))
    return out


def fields(res) -> dict:
    """A run's every column, NaN made comparable (``nan != nan``)."""
    return {k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in res.to_dict().items()}


# -- 1. generated files through the reader and simulate --------------------------------------

def _check_accounting(res, limit, case_id):
    """The time parts partition the wall time, nothing past the wall limit, progress and the
    failure counts consistent."""
    useful = res.availability * res.wall_time
    assert math.isclose(useful + sum(getattr(res, k) for k in PARTS), res.wall_time,
                        rel_tol=1e-9, abs_tol=1e-9), case_id
    assert all(getattr(res, k) >= -1e-9 * max(1.0, res.wall_time) for k in PARTS), case_id
    assert res.wall_time <= limit, case_id
    if res.failures_seen:
        assert res.timeline.failure_time.max() <= limit, case_id
    assert 0.0 <= res.progress <= 1.0 and (res.progress == 1.0) == res.finished, case_id
    assert res.failures_seen == res.failures_masked + res.failures_restart, case_id


@PROPERTY
@given(valid_files())
def test_property_generated_files_partition_the_wall_time_and_stop_at_the_limit(case):
    data, facts = case
    sf = parse_scenario(data)
    sc = sf.scenario
    limit = sc.max_wall_factor * sc.t0
    spares = (data.get("repair") or {}).get("spares", 0)
    gpus_paid = facts["gpus"] + spares * data["cluster"]["gpus_per_node"]
    price = data["costs"].get("gpu_hour")
    for name, r, pol, res in runs(sf, timeline=True):
        case_id = (name, r)
        _check_accounting(res, limit, case_id)
        # the bill from the file's own numbers, not the run's
        assert res.gpus_paid == gpus_paid, case_id
        assert res.gpu_hours == gpus_paid * res.wall_time / 3600.0, case_id
        if price is None:
            assert math.isnan(res.cost), case_id
        else:
            assert res.cost == res.gpu_hours * price, case_id
        if res.finished:
            assert res.time_to_train == res.wall_time and res.ratio == res.wall_time / res.t0, case_id


@PROPERTY
@given(valid_files(fleet=True))
def test_property_fleet_files_partition_the_wall_time_and_stop_at_the_limit(case):
    """The later keys of the wave (failure classes with detection, repair laws and
    probabilities, lemons, warm standbys, retirement, the restart rule) through the reader and
    every policy: the same accounting as above, detection inside the restart time, the
    forced restarts among the restarts, standbys billed like spares."""
    data, facts = case
    sf = parse_scenario(data)
    sc = sf.scenario
    limit = sc.max_wall_factor * sc.t0
    rp, fleet = data["repair"], data.get("fleet", {})
    gpus_paid = facts["gpus"] + (rp.get("spares", 0) + fleet.get("standbys", 0)) * data["cluster"]["gpus_per_node"]
    classes = data["failures"].get("classes")
    for name, r, pol, res in runs(sf, timeline=True):
        case_id = (name, r)
        _check_accounting(res, limit, case_id)
        assert 0 <= res.class_restarts <= res.restarts, case_id
        assert res.detect_time >= 0.0, case_id
        if classes is None:
            assert res.class_restarts == 0 and res.detect_time == 0.0, case_id
        assert res.gpus_paid == gpus_paid, case_id
        # a retired node is not paid for after it left ([fleet] retire_after; docs/model.md, Cost)
        held = gpus_paid * res.wall_time / 3600.0
        assert 0.0 <= res.retired_gpu_hours <= held, case_id
        if fleet.get("retire_after", 0) == 0 or rp.get("spares") is None:  # 0: no retirement
            assert res.retired_gpu_hours == 0.0, case_id
        assert res.gpu_hours == (held - res.retired_gpu_hours if res.retired_gpu_hours else held), case_id
        _check_cost_per_token(res, data, case_id)


def _check_cost_per_token(res, data, case_id):
    """The bill's tokens and its cost per million tokens from the file's numbers (harden5):
    tokens = steps x job.tokens_per_step with a price (0 without either), the cost per Mtoken
    the run's cost over its tokens in millions exactly, NaN unfinished or without tokens or price."""
    price = data["costs"].get("gpu_hour")
    tps = data["job"].get("tokens_per_step")
    if tps is not None and price is not None:
        assert res.tokens == data["job"]["steps"] * tps, case_id
    else:
        assert res.tokens == 0.0, case_id
    assert res.gpu_hour_price == (price or 0.0) and res.on_demand_gpu_hour_price == (price or 0.0), case_id
    for name, p in (("cost_per_mtoken", res.gpu_hour_price), ("on_demand_cost_per_mtoken", res.on_demand_gpu_hour_price),
                    ("spot_cost_per_mtoken", res.spot_gpu_hour_price)):
        got = getattr(res, name)
        if res.finished and res.tokens > 0 and p > 0:
            assert got == res.gpu_hours * p / (res.tokens / 1e6), (case_id, name)
        else:
            assert math.isnan(got), (case_id, name)
    if res.finished and res.tokens > 0 and price is not None:
        assert res.cost_per_mtoken == res.cost / (res.tokens / 1e6), case_id


@PROPERTY
@given(valid_files(fleet=True), st.integers(0, 2**32 - 1))
def test_property_fleet_files_same_seed_same_runs(case, seed):
    data, _ = case
    first = [fields(res) for *_, res in runs(parse_scenario(data), seed=seed)]
    again = [fields(res) for *_, res in runs(parse_scenario(data), seed=seed)]
    assert first == again


@PROPERTY
@given(valid_files(), st.integers(0, 2**32 - 1))
def test_property_same_file_and_seed_give_the_same_runs(case, seed):
    data, _ = case
    first = [fields(res) for *_, res in runs(parse_scenario(data), seed=seed)]
    again = [fields(res) for *_, res in runs(parse_scenario(data), seed=seed)]
    assert first == again


@PROPERTY
@given(valid_files())
def test_property_derived_checkpoint_times_are_size_over_bandwidth_times_efficiency(case):
    data, facts = case
    sf = parse_scenario(data)
    sc = sf.scenario
    io = facts.get("io")
    restart = data["costs"]["restart"]
    if io is None:
        assert sc.checkpoint_time == data["costs"]["checkpoint_save"] and sc.checkpoint_drain == 0.0
        assert sc.restart_time == restart
        return
    write = io["size"] / (io["write_bw"] * io["eff"])
    load = io["size"] / (io["read_bw"] * io["eff"])
    assert math.isclose(sf.checkpoint_io.write_seconds, write, rel_tol=1e-15)
    assert math.isclose(sc.restart_time, restart + load, rel_tol=1e-15)
    if "host_copy" in io:
        assert sc.checkpoint_time == io["host_copy"]
        assert math.isclose(sc.checkpoint_drain, write, rel_tol=1e-15)
    else:
        assert math.isclose(sc.checkpoint_time, write, rel_tol=1e-15) and sc.checkpoint_drain == 0.0


@PROPERTY
@given(valid_files())
def test_property_an_async_save_whose_drain_is_zero_is_the_blocking_save(case):
    """The async file with its drain set to 0 runs bit for bit as the same job written with
    ``costs.checkpoint_save = host_copy`` and the load folded into ``costs.restart``."""
    data, facts = case
    io = facts.get("io")
    if io is None or "host_copy" not in io:
        return
    sf = parse_scenario(data)
    blocking = {**data, "checkpoint": {k: v for k, v in data["checkpoint"].items()
                                       if k not in ("size", "write_bandwidth", "read_bandwidth", "efficiency",
                                                    "mode", "host_copy")},
                "costs": {**data["costs"], "checkpoint_save": io["host_copy"],
                          "restart": sf.scenario.restart_time}}
    if not blocking["checkpoint"]:
        del blocking["checkpoint"]
    sb = parse_scenario(blocking)
    zero = sf.scenario.replace(checkpoint_drain=0.0)
    assert zero == sb.scenario.replace(memory=zero.memory)  # the memory tier's auto interval may read the save
    for (_, _, pol, res), (_, _, _, ref) in zip(runs(dataclasses.replace(sf, scenario=zero)), runs(sb)):
        assert fields(res) == fields(ref), pol


@PROPERTY
@given(valid_files(policies=("elastic",)))
def test_property_step_overhead_and_quorum_of_zero_are_their_absence(case):
    data, _ = case
    el = dict(data.get("elastic", {}))
    zero = {**el, "step_overhead": "0 %" if el.get("step_overhead") == "0 %" else 0, "quorum": 0}
    absent = {k: v for k, v in el.items() if k not in ("step_overhead", "quorum")}
    a = parse_scenario({**data, "elastic": zero})
    b = parse_scenario({k: v for k, v in data.items() if k != "elastic"} | ({"elastic": absent} if absent else {}))
    assert [fields(r) for *_, r in runs(a)] == [fields(r) for *_, r in runs(b)]


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.floats(1.0, 20.0), st.sampled_from([0.0, 0.1, 0.3]), st.integers(20, 300),
       st.sampled_from([0, 0.25, "0.4 s", "5 %", "250 %"]), st.sampled_from([0, 0.2, "1 s"]))
def test_property_failure_free_elastic_steps_take_step_plus_overhead_plus_quorum(step, ar, steps, over, quorum):
    """Without failures, jitter or saves, an elastic run takes steps x (step + overhead +
    quorum): the share is of the failure-free step, compute plus all-reduce."""
    data = {"cluster": {"gpus": 4, "gpus_per_node": 1, "gpus_per_group": 1},
            "job": {"step_time": step, "allreduce_time": ar * step, "steps": steps, "jitter": 0.0},
            "failures": {"model": "system", "mtbf": "1e11 s"}, "costs": {"checkpoint_save": 1.0},
            "compare": {"policies": ["elastic"], "interval": "1e11 s"},
            "elastic": {"step_overhead": over, "quorum": quorum}}
    sf = parse_scenario(data)
    (_, _, _, res), = runs(sf)
    assert res.failures_seen == 0 and res.finished and res.checkpoints == 0
    o = float(str(over).rstrip("% s")) if isinstance(over, str) else float(over)
    o = o / 100.0 * step if str(over).endswith("%") else o
    q = float(str(quorum).rstrip(" s"))
    assert math.isclose(res.time_to_train, steps * (step + o + q), rel_tol=1e-12)
    assert math.isclose(res.t0, steps * step, rel_tol=1e-12)  # T0 stays the plain job's


@PROPERTY
@given(valid_files(), st.sampled_from([0.5, 2.0, 3.0, 16.0]))
def test_property_measured_on_gpus_keeps_the_per_gpu_rate_when_the_job_is_resized(case, factor):
    data, facts = case
    if "per_gpu_rate" not in facts:
        return
    # a resized job may have fewer groups than elastic.min_groups (refused, rightly): not the point here
    data = {k: v for k, v in data.items() if k != "elastic"}
    sf = parse_scenario(data)
    unit = data["cluster"]["gpus_per_group"]
    gpus = max(2 * unit, int(facts["gpus"] * factor) // unit * unit)
    resized = sf.with_overrides([f"cluster.gpus={gpus}"])
    assert math.isclose(sf.scenario.system_mtbf, 1.0 / (facts["per_gpu_rate"] * facts["gpus"]), rel_tol=1e-12)
    assert math.isclose(resized.scenario.system_mtbf, 1.0 / (facts["per_gpu_rate"] * gpus), rel_tol=1e-12)
    # without measured_on_gpus the count is of the file's own job, and stays so when resized
    own = {k: v for k, v in data["failures"].items() if k != "measured_on_gpus"}
    own["period"] = data["failures"]["period"] * data["failures"]["measured_on_gpus"] / facts["gpus"]
    sf_own = parse_scenario({**data, "failures": own})
    assert math.isclose(sf_own.with_overrides([f"cluster.gpus={gpus}"]).scenario.system_mtbf,
                        resized.scenario.system_mtbf, rel_tol=1e-12)


# -- 2. findings of the fuzz suite (tests/fuzz/test_fuzz_wave4.py), each a regression ---------

_BASE = {"cluster": {"gpus": 4, "gpus_per_node": 1, "gpus_per_group": 1}, "job": {"step_time": 1.0, "steps": 20},
         "failures": {"mtbf": "1 h"}}


@pytest.mark.parametrize("ck, names", [
    # bandwidth x efficiency underflowed to 0: a ZeroDivisionError (exit 1) before
    ({"size": "1 GB", "write_bandwidth": 5e-324, "read_bandwidth": "1 GB/s", "efficiency": 0.5},
     ("checkpoint.write_bandwidth", "checkpoint.efficiency")),
    ({"size": "1 GB", "write_bandwidth": "1 GB/s", "read_bandwidth": "1 GB/s", "efficiency": 5e-324},
     ("checkpoint.write_bandwidth", "checkpoint.efficiency")),
    # a load time of inf: refused by Scenario as a restart time the file does not have
    ({"size": "1 GB", "write_bandwidth": "1 GB/s", "read_bandwidth": 5e-324}, ("checkpoint.read_bandwidth",)),
    ({"size": "1 GB", "write_bandwidth": "1 GB/s", "read_bandwidth": 1e-6}, ("checkpoint.read_bandwidth",)),
])
def test_checkpoint_bandwidths_whose_time_is_beyond_any_run_are_refused_naming_them(ck, names):
    with pytest.raises(ScenarioFileError) as exc:
        parse_scenario({**_BASE, "checkpoint": ck})
    msg = str(exc.value)
    assert "checkpoint.size" in msg and all(n in msg for n in names), msg
    assert "\n" not in msg


# -- 3. faults injected: the failure log changed, deleted or damaged during a command --------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def trace_job(tmp_path):
    """examples/trace_job.toml and its log and hostfile in a directory of their own, short."""
    for name in ("trace_job.toml", "trace_job_failures.csv", "trace_job_hosts.txt"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    toml = tmp_path / "trace_job.toml"
    toml.write_text(toml.read_text().replace("steps = 250_000", "steps = 2000").replace("seeds = 3", "seeds = 1"))
    return toml


def _half_log(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]))


def test_the_log_parsed_is_the_log_hashed_even_if_replaced_between(trace_job, monkeypatch):
    """The reader hashed the log (the provenance's sha256), then opened the file again to parse
    it: a log replaced in between was parsed while the provenance named the other one."""
    from spare_core.events import files

    log = trace_job.parent / "trace_job_failures.csv"
    whole = load_scenario_file(trace_job)
    files._READ.clear()
    real = files.read_input

    def read_then_replace(path, *a, **k):
        data = real(path, *a, **k)
        if Path(path).name == log.name:
            _half_log(log)  # another writer, right after the read
        return data

    monkeypatch.setattr(files, "read_input", read_then_replace)
    sf = load_scenario_file(trace_job)
    assert sf.trace_read["sha256"] == whole.trace_read["sha256"]
    assert sf.trace.n_events == whole.trace.n_events
    assert np.array_equal(sf.trace.times, whole.trace.times) and np.array_equal(sf.trace.units, whole.trace.units)


def test_overrides_run_on_the_log_read_whatever_happens_to_the_file(trace_job):
    """``with_overrides`` (a map's cell, an advice's variant, a sweep's point) read the log
    again: an edited log changed the failures of the later cells silently, a deleted one
    stopped the command midway. Now the log read is kept, and a change of its read options
    that needs the file again refuses a file whose content changed."""
    log = trace_job.parent / "trace_job_failures.csv"
    sf = load_scenario_file(trace_job)
    fresh = simulate(sf.with_overrides([("job.steps", 2500)]).scenario, make_policy("spare", 2), seed=1)
    _half_log(log)
    edited = sf.with_overrides([("job.steps", 2500)])
    assert edited.trace is sf.trace and edited.trace_read == sf.trace_read
    assert fields(simulate(edited.scenario, make_policy("spare", 2), seed=1)) == fields(fresh)
    with pytest.raises(ScenarioFileError, match=r"failures\.trace changed since the scenario was read"):
        sf.with_overrides([("failures.trace.end", "2025-03-30T00:00:00Z")])
    log.unlink()
    assert sf.with_overrides([("job.steps", 2500)]).trace is sf.trace
    # a file loaded afresh reads the disk as it is: the deleted log is named
    with pytest.raises(ScenarioFileError, match=r"failures\.trace must name a readable file"):
        load_scenario_file(trace_job)


def test_spare_map_finishes_on_the_log_it_read_when_the_file_is_deleted(trace_job, monkeypatch, capsys):
    """``spare map`` resolves each cell from the table read (``with_overrides``): with the log
    deleted after the file was loaded, every cell used to stop with "failures.trace must name a
    readable file" (exit 2 after the first load); now the cells run on the log read, and give
    the map of a run whose log was never touched."""
    from spare_core.commands import map as map_cmd

    argv = ["map", str(trace_job), "--x", "job.steps", "--x-values", "2000", "2500", "--y", "costs.restart",
            "--y-values", "10 min", "20 min", "--seeds", "1", "--processes", "1", "--strategies", "ckpt", "spare"]
    assert main([*argv, "--json", str(trace_job.parent / "untouched.json")]) == 0
    real = map_cmd.load_scenario_file

    def load_then_delete(*a, **k):
        sf = real(*a, **k)
        (trace_job.parent / "trace_job_failures.csv").unlink(missing_ok=True)
        return sf

    monkeypatch.setattr(map_cmd, "load_scenario_file", load_then_delete)
    code = main([*argv, "--json", str(trace_job.parent / "deleted.json")])
    assert code == 0, capsys.readouterr().err
    cells = [[{k: v for k, v in c.items() if k != "seconds"}  # the time each cell took
              for c in json.loads((trace_job.parent / f"{n}.json").read_text())["cells"]]
             for n in ("untouched", "deleted")]
    assert cells[0] == cells[1]


@pytest.mark.parametrize("command, flag", [("run", "--json"), ("run", "--csv"), ("fit", "--json"), ("fit", "--csv"),
                                           ("advise", "--json")])
def test_a_full_disk_while_writing_an_output_leaves_it_and_the_inputs_as_they_were(trace_job, monkeypatch, capsys,
                                                                                  command, flag):
    """The disk fills while ``spare`` writes an output: one line naming the error, exit 1 (the
    environment, not the input), the previous output intact, no temporary file left, the
    scenario file and its log untouched."""
    import errno

    from spare_core import _writer

    d = trace_job.parent
    target = d / f"out{flag.replace('--', '.')}"
    target.write_bytes(b"previous output\n")
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    real = _writer.os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def fileno(self):
            return self.fh.fileno()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        flush = lambda self: None  # noqa: E731

    monkeypatch.setattr(_writer.os, "fdopen", lambda fd, *a, **k: Full(real(fd, *a, **k)))
    argv = [command, str(trace_job), flag, str(target)]
    argv += ["--replicates", "20", "--laws", "weibull"] if command == "fit" else ["--processes", "1"]
    code = main(argv)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 1 and len(lines) == 1 and "No space left on device" in lines[0], lines
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


# -- 4. [stragglers] in a scenario file -------------------------------------------------------

@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(straggler_tables(), st.floats(1.0, 10.0), st.integers(20, 200), st.sampled_from(["ckpt", "spare", "elastic"]))
def test_property_failure_free_runs_take_the_stragglers_slowdown(tmp_path_factory, table, step, steps, policy):
    """Without failures, saves or jitter, a run takes S x T0 (``slowdown = S``), or between the
    least and the largest per-step slowdown of the trace times T0 (each step one of them, drawn
    with replacement), computed here from the trace's own analysis; T0 stays the plain job's."""
    d = tmp_path_factory.mktemp("strag")
    write_straggler_trace(d / "ops.csv")
    data = {"cluster": {"gpus": 4, "gpus_per_node": 1, "gpus_per_group": 1},
            "job": {"step_time": step, "allreduce_time": 0.1 * step, "steps": steps, "jitter": 0.0},
            "failures": {"model": "system", "mtbf": "1e11 s"}, "costs": {"checkpoint_save": 1.0},
            "compare": {"policies": [policy], "interval": "1e11 s", "r_max": 1}, "stragglers": table}
    sf = parse_scenario(data, base_dir=d)
    (_, _, _, res), = runs(sf)
    assert res.failures_seen == 0 and res.finished and res.checkpoints == 0
    assert math.isclose(res.t0, steps * step, rel_tol=1e-12)
    if "slowdown" in table:
        assert math.isclose(res.time_to_train, table["slowdown"] * res.t0, rel_tol=1e-12)
    else:
        from spare_core.stragglers import analyse

        ideal = table.get("ideal", "mean")
        per_step = np.asarray(list(analyse(str(d / "ops.csv"), ideal=ideal).per_step.values()), dtype=float)
        assert per_step.min() * res.t0 * (1 - 1e-12) <= res.time_to_train <= per_step.max() * res.t0 * (1 + 1e-12)


def test_a_straggler_trace_is_parsed_from_the_bytes_hashed_and_kept_by_overrides(tmp_path, monkeypatch):
    """As for the failure log: ``stragglers.trace`` was hashed, then opened again to parse, and
    opened again by every ``with_overrides``: a trace deleted during ``spare map`` stopped it,
    an edited one changed the later cells' step times silently."""
    from spare_core.stragglers import steptime

    write_straggler_trace(tmp_path / "ops.csv")
    data = {"cluster": {"gpus": 4, "gpus_per_node": 1, "gpus_per_group": 1},
            "job": {"step_time": 2.0, "steps": 50, "jitter": 0.0}, "failures": {"mtbf": "1e11 s"},
            "compare": {"policies": ["ckpt"], "interval": "1e11 s"}, "stragglers": {"trace": "ops.csv"}}
    (tmp_path / "job.toml").write_text(to_toml(data))
    sf = load_scenario_file(tmp_path / "job.toml")
    base = fields(runs(sf)[0][3])
    assert str((tmp_path / "ops.csv").resolve()) in sf.inputs
    write_straggler_trace(tmp_path / "ops.csv", slow=4.0, seed=5)  # edited after the read
    assert fields(runs(sf.with_overrides([("job.steps", 50)]))[0][3]) == base
    with pytest.raises(ScenarioFileError, match=r"stragglers\.trace changed since the scenario was read"):
        sf.with_overrides([("stragglers.ideal", "median")])  # needs the file again: it is not the one read
    (tmp_path / "ops.csv").unlink()
    assert fields(runs(sf.with_overrides([("job.steps", 50)]))[0][3]) == base
    # read once: a trace replaced between the hash and the parse is not parsed
    write_straggler_trace(tmp_path / "ops.csv")
    steptime._READ.clear()
    from spare_core import _files

    real = _files.read_input

    def read_then_replace(path, *a, **k):
        out = real(path, *a, **k)
        if Path(path).name == "ops.csv":
            write_straggler_trace(tmp_path / "ops.csv", slow=4.0, seed=5)
        return out

    monkeypatch.setattr(_files, "read_input", read_then_replace)
    again = load_scenario_file(tmp_path / "job.toml")
    assert fields(runs(again)[0][3]) == base


# -- 5. a sweep grid over elastic.* simulates checkpoint-only once per seed -------------------

def test_a_sweep_over_elastic_keys_shares_the_runs_that_do_not_read_them(tmp_path, monkeypatch):
    """Three values of ``elastic.step_overhead`` x three of ``elastic.quorum`` (9 grid points)
    on 2 seeds: checkpoint-only and SPARe, which do not read them, were simulated once per
    point (18 times each); now once per seed, and every run, shared or not, equals field for
    field (the scenario's name is the point's) a fresh ``simulate`` on its group's streams,
    with 1 worker or 2 (batches of 3 runs: the groups of one key stay in one batch)."""
    from spare_core.sim import executor, grid
    from spare_core.sweeps import load_spec
    from tests.test_hardening_issue28_inputs import _policy_file, _spec_over

    _policy_file(tmp_path)
    spec_path = _spec_over(tmp_path, 'grid = {"elastic.step_overhead" = [0, "5 %", 0.5], '
                                     '"elastic.quorum" = [0, 0.2, "1 s"]}\n')
    spec_path.write_text(spec_path.read_text().replace("seeds = 1", "seeds = 2"))
    spec = load_spec(spec_path)
    groups = spec.groups()
    assert len(groups) == 9 * 2 and len({g.key for g in groups}) == 2
    calls = []
    real = grid.simulate

    def counting(sc, pol, **kw):
        calls.append(pol.name)
        return real(sc, pol, **kw)

    monkeypatch.setattr(grid, "simulate", counting)
    one = executor.execute(spec, workers=1)
    assert calls.count("CKPT-only") == 2 and calls.count("SPARe+CKPT") == 2 and calls.count("Elastic DP") == 18
    monkeypatch.setattr(grid, "simulate", real)
    two = executor.execute(spec, workers=2, batch_runs=3)
    by_run = [{(r.scenario, r.policy, r.seed): fields(r) for r in res.runs} for res in (one, two)]
    assert by_run[0] == by_run[1] and len(by_run[0]) == 9 * 2 * 3
    for g in groups:
        for run in g.runs:
            fresh = real(g.scenario, run.policy, seed=g.stream_seed)
            assert by_run[0][(g.scenario.name, run.policy.name, fresh.seed)] == fields(fresh)


def test_a_replay_without_unit_gpus_warns_once(trace_job):
    """The replay's failures line said "warning: warning: the log's units are taken as whole
    8-GPU nodes" (noticed by the where-count property above)."""
    note = load_scenario_file(trace_job).rate_note
    assert note.count("warning:") == note.count("; warning: ") and "warning: warning" not in note
    assert "warning: the log's units are taken as whole 8-GPU nodes" in note


@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sets(st.sampled_from(["GPU", "GPU HBM3 memory", "GPU NVLink", "host", "network NIC",
                                "network leaf switch"]), min_size=1), st.sampled_from([None, 1, 2, 4, 8]))
def test_property_where_keeps_the_rows_of_its_values_and_unit_gpus_the_units_per_group(
        tmp_path_factory, causes, unit_gpus):
    """``failures.trace.where = {cause = [...]}`` keeps exactly the log's rows whose cause is
    listed (counted here with the csv module) and ``unit_gpus`` puts gpus_per_group / unit_gpus
    log units in each group (or refuses what cannot be fitted, naming failures.trace)."""
    import csv

    d = tmp_path_factory.mktemp("where")
    for name in ("trace_job.toml", "trace_job_failures.csv", "trace_job_hosts.txt"):
        shutil.copy(EXAMPLES / name, d / name)
    with open(d / "trace_job_failures.csv", newline="") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    want = sum(r["cause"].strip() in causes for r in rows)
    sets = [("failures.trace.where", {"cause": sorted(causes)})]
    if unit_gpus is not None:
        sets.append(("failures.trace.unit_gpus", unit_gpus))
    try:
        sf = load_scenario_file(d / "trace_job.toml", sets)
    except ScenarioFileError as exc:  # too few failures left to fit the law past the log's end
        assert "failures.trace" in str(exc) and want < 10, (want, str(exc))
        return
    assert sf.trace.n_events == want
    per_group = sf.gpus_per_group // (unit_gpus or sf.gpus_per_node)
    assert sf.scenario.failures.nodes_per_group == per_group


@settings(max_examples=int(os.environ.get("SPARE_FUZZ_EXAMPLES", "60")) // 10 if _LONG else 6, deadline=None,
          derandomize=not _LONG, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=st.one_of(valid_files(), valid_files(fleet=True)))
def test_property_spare_run_gives_the_same_runs_on_one_worker_or_two(tmp_path_factory, capsys, case):
    """``spare run --processes 1`` and ``--processes 2`` on a generated file with this wave's
    keys (the fleet's too: domain classes, placement, tokens): the same runs, cells and best
    choices, every field (the timings apart)."""
    data, _ = case
    data = {**data, "compare": {**data["compare"], "seeds": 2}}
    d = tmp_path_factory.mktemp("workers")
    (d / "job.toml").write_text(to_toml(data))
    out = []
    for n in (1, 2):
        code = main(["run", str(d / "job.toml"), "--processes", str(n), "--json", str(d / f"{n}.json")])
        said = capsys.readouterr()
        assert code == 0, said.err
        assert f"on {n} process(es)" in said.out  # one group per seed: two workers really ran
        got = json.loads((d / f"{n}.json").read_text())
        out.append({k: got[k] for k in ("runs", "cells", "best")})
    assert out[0] == out[1]


def test_a_sweep_spec_resolves_every_point_on_the_log_its_first_point_read(trace_job, monkeypatch):
    """A spec's scenario file was loaded from disk again for every grid point, its log with
    it: a log edited while the spec loaded gave its points different failures. Now the file
    is read once and the points after the first run on the log the first read."""
    from spare_core.events import files
    from spare_core.sweeps import load_spec

    d = trace_job.parent
    (d / "s.toml").write_text('seeds = 1\npolicies = ["ckpt"]\n[[scenarios]]\nfile = "trace_job.toml"\n'
                              'grid = {"job.steps" = [2000, 2500, 3000]}\n')
    whole = load_scenario_file(trace_job).trace
    files._READ.clear()
    real = files.read_input

    def read_then_edit(path, *a, **k):
        data = real(path, *a, **k)
        if Path(path).name == "trace_job_failures.csv":
            _half_log(d / "trace_job_failures.csv")  # edited right after the first point read it
        return data

    monkeypatch.setattr(files, "read_input", read_then_edit)
    spec = load_spec(d / "s.toml")
    traces = [sc.failures.trace for sc in spec.scenarios]
    assert len(traces) == 3 and all(t.n_events == whole.n_events for t in traces)
    assert all(np.array_equal(t.times, whole.times) for t in traces)


def test_overrides_keep_the_hostfile_read(trace_job):
    """The hostfile (``failures.trace.unit_map``) was read again by every ``with_overrides``
    too: deleted during ``spare map``, it stopped the cells; now the hosts read are kept, and a
    changed hostfile that must be read again is refused naming the key."""
    hosts = trace_job.parent / "trace_job_hosts.txt"
    sf = load_scenario_file(trace_job)
    assert str(hosts.resolve()) in sf.inputs
    hosts.unlink()
    again = sf.with_overrides([("job.steps", 2500)])
    assert again.trace is sf.trace and again.scenario.n_steps == 2500
    hosts.write_text("node-000\n")  # another hostfile: the cells keep the hosts read
    ended = sf.with_overrides([("failures.trace.end", "2025-03-30T00:00:00Z")])
    assert ended.trace.n_units == sf.trace.n_units == 64
    from spare_core.events import files

    files._HOSTS.clear()  # the hosts forgotten: the file must be read again, and it changed
    with pytest.raises(ScenarioFileError, match=r"failures\.trace\.unit_map changed since the scenario was read"):
        sf.with_overrides([("job.steps", 2500)])


def test_a_symlink_loop_as_a_log_hostfile_or_trace_is_refused_in_words_while_pinned(trace_job):
    """The pins name files by their real path: ``Path.resolve`` raised RuntimeError on a
    symlink loop before the reader could refuse it (found by tests/fuzz/test_fuzz_logs.py's
    special files on this change, before it was committed)."""
    d = trace_job.parent
    (d / "loop.txt").symlink_to(d / "loop.txt")
    sf = load_scenario_file(trace_job)
    for key in ("failures.trace.unit_map", "failures.trace.path"):
        with pytest.raises(ScenarioFileError, match=key.replace(".path", "").replace(".", r"\.")):
            sf.with_overrides([(key, "loop.txt")])


@pytest.mark.parametrize("command", ["run", "advise"])
def test_a_slowdown_whose_remedy_leaves_no_step_time_is_refused_naming_it(tmp_path, capsys, command):
    """``stragglers.slowdown = 5e-324`` was accepted (> 0), then the rebalance remedy's
    1 + (S - 1) x (1 - stage_share) rounded to 0 and ``spare advise`` stopped with a ValueError
    (exit 1) after its first runs (tests/fuzz/test_fuzz_wave4.py). Now the file is refused."""
    data = {**_BASE, "compare": {"policies": ["ckpt"], "seeds": 1}, "stragglers": {"slowdown": 5e-324}}
    (tmp_path / "job.toml").write_text(to_toml(data))
    code = main([command, str(tmp_path / "job.toml"), "--processes", "1"])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "stragglers.slowdown" in lines[0], lines
    # a slowdown below 1 that the remedies leave positive is still read
    ok = {**data, "stragglers": {"slowdown": 0.5}}
    assert parse_scenario(ok).scenario.step_time_model.remedy_slowdown("rebalance") == 0.5


# -- this session's keys (harden5): domain classes, placement, retire_after = 0, tokens, capacity logs --

def _domain_file(**fleet):
    data = {"cluster": {"gpus": 8, "gpus_per_node": 1, "gpus_per_group": 1},
            "job": {"step_time": 2.0, "steps": 200},
            "failures": {"model": "node", "mtbf": "60 s",
                         "classes": [{"name": "hw", "share": 0.6, "recovery": "swap"},
                                     {"name": "sw", "share": 0.4, "recovery": "domain", "nodes": 2}]},
            "repair": {"spares": 1, "time": 30.0}, "costs": {"checkpoint_save": 1.0, "restart": 5.0},
            "compare": {"policies": ["ckpt", "spare"], "r_max": 2, "seeds": 1}}
    if fleet:
        data["fleet"] = fleet
    return data


def test_retire_after_zero_goes_with_a_domain_class_as_its_absence():
    """Regression (harden5): ``fleet.retire_after = 0`` means no retirement, yet the reader
    refused it beside a ``recovery = "domain"`` class as if a node retired."""
    zero, absent = parse_scenario(_domain_file(retire_after=0)), parse_scenario(_domain_file())
    assert [fields(r) for *_, r in runs(zero)] == [fields(r) for *_, r in runs(absent)]
    with pytest.raises(ScenarioFileError, match="fleet.retire_after"):
        parse_scenario(_domain_file(retire_after=1))


#: this session's keys at their values that change nothing (docs/cli.md): no retirement, the slot
#: placement, the declared lemons
_NEUTRAL_FLEET = {"retire_after": 0, "place": "slot", "lemons": "declared"}


@PROPERTY
@given(valid_files(fleet=True))
def test_property_neutral_new_fleet_keys_and_tokens_run_as_without_them(case):
    """A generated fleet file run bit for bit as the same file without ``fleet.retire_after = 0``,
    ``fleet.place = "slot"`` and ``fleet.lemons = "declared"``; ``job.tokens_per_step`` changes only
    the tokens and the costs per token."""
    data, _ = case
    fleet = {k: v for k, v in data.get("fleet", {}).items() if _NEUTRAL_FLEET.get(k, object()) != v}
    plain = {k: v for k, v in data.items() if k != "fleet"} | ({"fleet": fleet} if fleet else {})
    plain["job"] = {k: v for k, v in data["job"].items() if k != "tokens_per_step"}
    token_cols = ("tokens", "cost_per_mtoken", "on_demand_cost_per_mtoken", "spot_cost_per_mtoken")
    strip = lambda r: {k: v for k, v in fields(r).items() if k not in token_cols}  # noqa: E731
    got = [strip(r) for *_, r in runs(parse_scenario(data))]
    assert got == [strip(r) for *_, r in runs(parse_scenario(plain))]
    if "tokens_per_step" not in data["job"]:
        assert [fields(r) for *_, r in runs(parse_scenario(data))] == [fields(r) for *_, r in runs(parse_scenario(plain))]


@PROPERTY
@given(capacity_files())
def test_property_capacity_logs_partition_the_wall_time_and_bill_the_spot_price(tmp_path_factory, case):
    """A small log of capacity events (removals, additions an elastic job grows back on, the
    fleet given as a capacity or as additions at time 0) through the reader and every policy:
    the accounting of the node files, the job's GPUs only billed, at the spot price when the
    file gives one (a run on a capacity log pays it), the tokens and costs per token from the
    file's numbers; no more failures than the log's removal rows; the same runs twice."""
    data, rows = case
    d = tmp_path_factory.mktemp("capacity")
    write_capacity_log(d / "capacity.csv", rows)
    sf = parse_scenario(data, base_dir=d)
    sc = sf.scenario
    limit = sc.max_wall_factor * sc.t0
    gpus = data["cluster"]["gpus"]
    price = data["costs"].get("spot_gpu_hour", data["costs"]["gpu_hour"])
    removals = sum(1 for _, e, _ in rows if e in ("preempt", "lost"))
    first = runs(sf, timeline=True)
    for name, r, pol, res in first:
        case_id = (name, r, rows)
        _check_accounting(res, limit, case_id)
        assert res.failures_seen <= removals, case_id
        assert res.gpus_paid == gpus and res.gpu_hours == gpus * res.wall_time / 3600.0, case_id
        assert res.gpu_hour_price == price and res.cost == res.gpu_hours * price, case_id
        assert res.spot_gpu_hour_price == data["costs"].get("spot_gpu_hour", 0.0), case_id
        tps = data["job"].get("tokens_per_step")
        assert res.tokens == (data["job"]["steps"] * tps if tps is not None else 0.0), case_id
        if res.finished and res.tokens > 0:
            assert res.cost_per_mtoken == res.cost / (res.tokens / 1e6), case_id
            assert res.on_demand_cost_per_mtoken == res.gpu_hours * data["costs"]["gpu_hour"] / (res.tokens / 1e6)
        else:
            assert math.isnan(res.cost_per_mtoken), case_id
    assert [fields(r) for *_, r in first] == [fields(r) for *_, r in runs(parse_scenario(data, base_dir=d))]


@settings(PROPERTY, max_examples=int(os.environ.get("SPARE_FUZZ_EXAMPLES", "2000")) if _LONG else 30)
@given(cause_files())
def test_property_classes_of_a_logs_causes_match_the_reference(tmp_path_factory, case):
    """A small failure log with a cause column, its causes split over classes by ``values``
    (a list, one string, ``"*"``) of every recovery (a domain with its ``nodes``), with or without
    ``[repair]``, stopping at the log's end or continued by a fit: each class's share is its rows
    over the log's rows (counted here), every policy partitions its wall time, stops at its
    limit, and matches the step-by-step reference (src/spare_core/sim/_reference.py) count for
    count and second for second."""
    data, rows = case
    d = tmp_path_factory.mktemp("causes")
    write_cause_log(d / "causes.csv", rows)
    sf = parse_scenario(data, base_dir=d)
    sc = sf.scenario
    named = {v: c["name"] for c in data["failures"]["classes"] if c["values"] != "*"
             for v in ([c["values"]] if isinstance(c["values"], str) else c["values"])}
    star = [c["name"] for c in data["failures"]["classes"] if c["values"] == "*"]
    counts = {c["name"]: 0 for c in data["failures"]["classes"]}
    for *_, cause in rows:
        counts[named.get(cause, star[0] if star else None)] += 1
    for c in sc.failure_classes.classes:
        assert math.isclose(c.share, counts[c.name] / len(rows), rel_tol=1e-12), (c.name, counts)
    limit = sc.max_wall_factor * sc.t0
    for name, r, pol, res in runs(sf, timeline=True):
        case_id = (name, r, rows)
        _check_accounting(res, limit, case_id)
        assert 0 <= res.class_restarts <= res.restarts, case_id
        ref = reference_simulate(sc, pol, seed=3)
        for k in COUNTS + ("class_restarts",):
            assert getattr(res, k) == ref[k], (case_id, k)
        for k in TIMES + ("detect_time",):
            assert math.isclose(getattr(res, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), (case_id, k)
