"""Fuzz: this wave's scenario keys mutated, through ``spare run`` (issue 28, closing pass).

A valid generated file (tests/wave4_files.py: ``[elastic]`` step_overhead and quorum,
``[checkpoint]`` size, bandwidths, efficiency, mode and host_copy, measured_on_gpus, repairs,
the memory tier) has up to three of its keys deleted, misspelt, given a value of another
type or range (text, bool, list, table, NaN, inf, 0, negatives, 1e308, 2**63 - 1, shares and
sizes out of range, a unit of the wrong kind), or a key of this wave added where it does not
go (``host_copy`` without ``mode = "async"``, ``costs.checkpoint_save`` beside a size, ...).
``spare run`` runs it in a forked child; the outcome must be exit 0, or exit 2 with one line
on stderr that names the key (or its table) -- never exit 1 (an unexpected exception), a
traceback, a crash or a hang.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import event, given, strategies as st

from fuzz_isolate import run_isolated
from fuzz_profile import fuzz
from tests.wave4_files import (_toml_value, capacity_files, cause_files, straggler_tables, to_toml, valid_files,
                               write_capacity_log, write_cause_log, write_straggler_trace)

BAD = ["x", "", True, [], [1, 2], {"a": 1}, -1, 0, -0.0, math.nan, math.inf, -math.inf, 1e308, 2**63 - 1,
       5e-324, "5 %", "-5 %", "1e400 %", "nan %", "1 GB/s", "1e30 TB", "0 B", "-3 GB", "1 GiB", "async",
       "blocking", "auto", "1 h", "1e400 s", "inf s", "12 parsecs", 0.5, 2]

#: keys of this wave, added where they may not go
ADDED = [("checkpoint", "host_copy", "1 s"), ("checkpoint", "mode", "async"), ("checkpoint", "mode", "blocking"),
         ("checkpoint", "size", "1 TB"), ("checkpoint", "efficiency", 0.5), ("checkpoint", "read_bandwidth", "1 GB/s"),
         ("costs", "checkpoint_save", "10 s"), ("failures", "measured_on_gpus", 64), ("elastic", "step_overhead", "5 %"),
         ("elastic", "quorum", "1 s"), ("failures", "period", "1 d"), ("failures", "interruptions", 10)]


#: the later keys of the wave (failure classes, repair laws, the fleet), added where they may not go
ADDED_FLEET = [("fleet", "standbys", 2), ("fleet", "restart_when", "job+standbys"), ("fleet", "lemon_fix", 0.5),
               ("fleet", "lemon_share", 0.3), ("fleet", "retire_after", 1), ("fleet", "standby_swap", "1 min"),
               ("repair", "escalate", 0.5), ("repair", "manual_time", {"law": "exponential", "mean": "1 h"}),
               ("repair", "time", {"law": "lognormal", "median": "1 h"}), ("repair", "fail_fix", 1.0),
               ("failures", "classes", [{"name": "a", "share": 0.5, "recovery": "swap"}]),
               ("failures", "classes", [{"name": "a", "share": 1.0, "recovery": "restart", "masked": True}]),
               ("failures", "classes", [{"name": "a", "share": 1.0, "recovery": "domain"}]),
               ("failures", "classes", [{"name": "a", "share": 1.0, "recovery": "swap", "detect": {"law": "x"}}]),
               # this session's keys (harden5), where they may not go or with values out of range
               ("fleet", "place", "fewest_failures"), ("fleet", "place", "anywhere"), ("fleet", "lemons", "frailty"),
               ("fleet", "lemons", "fitted"), ("fleet", "retire_after", 0),
               ("failures", "classes", [{"name": "a", "share": 1.0, "recovery": "domain", "nodes": 3}]),
               ("failures", "classes", [{"name": "a", "share": 1.0, "recovery": "domain", "nodes": 10**9}]),
               ("failures", "classes", [{"name": "a", "share": 1.0, "recovery": "swap", "nodes": 2}]),
               ("failures", "classes", [{"name": "a", "recovery": "swap", "values": ["GPU"]}]),
               ("failures", "classes", [{"name": "a", "recovery": "swap", "values": "*"},
                                        {"name": "b", "recovery": "restart", "values": "*"}]),
               ("job", "tokens_per_step", 4096), ("job", "tokens_per_step", -1), ("job", "tokens_per_step", 1e30),
               ("costs", "spot_gpu_hour", 0.5)]


def _mutate(data: dict, ops, added=ADDED) -> tuple[dict, list[str]]:
    """``data`` with ``ops`` applied; the dotted keys they touched."""
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()}
    touched = []
    for kind, at, value in ops:
        if kind == "add":
            table, key, v = added[at % len(added)]
            data.setdefault(table, {})[key] = v
            touched.append(f"{table}.{key}")
            continue
        paths = [(t, k) for t, v in data.items() if isinstance(v, dict) for k in v]
        if not paths:
            continue
        t, k = paths[at % len(paths)]
        touched.append(f"{t}.{k}")
        if kind == "delete":
            del data[t][k]
        elif kind == "typo":
            data[t][k + "x"] = data[t].pop(k)
            touched.append(f"{t}.{k}x")
        else:
            data[t][k] = value
    return data, touched


def _spare_run(path, out):
    def go():
        from spare_core.cli import main

        err, sink = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(sink):
            code = main(["run", str(path), "--processes", "1", "--json", str(out)])
        return code, err.getvalue()
    return go


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory):
    """One ``spare run`` in the parent first: its lazy imports are then inherited by every
    forked case instead of paid in each (a case costs ~30 ms instead of ~0.5 s)."""
    from spare_core.cli import main

    d = tmp_path_factory.mktemp("warm")
    (d / "job.toml").write_text(to_toml({"cluster": {"gpus": 4, "gpus_per_node": 1, "gpus_per_group": 1},
                                         "job": {"step_time": 1.0, "steps": 20},
                                         "failures": {"mtbf": "50 s"}, "compare": {"seeds": 1, "r_max": 2}}))
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", str(d / "job.toml"), "--processes", "1", "--json", str(d / "out.json")]) == 0


@fuzz(0.75)
@given(valid_files(), st.lists(st.tuples(st.sampled_from(["delete", "typo", "value", "value", "add"]),
                                         st.integers(0, 10**6), st.sampled_from(BAD)), min_size=1, max_size=3))
def test_mutated_files_of_this_wave_exit_0_or_2_naming_the_key(tmp_path_factory, case, ops):
    _check_mutated(tmp_path_factory.mktemp("wave4"), case[0], ops, ADDED)


def _check_mutated(d, data, ops, added):
    """``data`` mutated by ``ops`` through ``spare run`` in a forked child: exit 0, or 2 with
    one line naming a key touched (or its table)."""
    bad, touched = _mutate(data, ops, added)
    path = d / "job.toml"
    path.write_text(to_toml(bad), encoding="utf-8")
    what = f"{ops} -> {touched}"
    out = run_isolated(_spare_run(path, d / "out.json"), case=what)
    assert out.ok, f"{what}: spare run raised {out.error_type.__name__}: {out.message}"
    code, err = out.value
    event(f"exit {code}")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code in (0, 2), f"{what}: exit {code}: {err}"
    if code == 2:
        assert len(lines) == 1, f"{what}: {err}"
        # the message names one of the keys touched, or its table (a deleted key's table says it needs it)
        names = {p for t in touched for p in (t, t.split(".")[0], t.split(".")[1])}
        assert any(n in lines[0] for n in names), f"{what}: names none of {sorted(names)}: {lines[0]}"
    else:
        assert (d / "out.json").stat().st_size > 0


# -- a damaged failure log and this wave's trace keys, through spare run and spare fit ------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _spare(argv):
    def go():
        from spare_core.cli import main

        err, sink = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(sink):
            code = main(argv)
        return code, err.getvalue()
    return go


@fuzz(0.75)
@given(st.lists(st.tuples(st.sampled_from(["insert", "replace", "delete", "cut", "nul", "quote", "digit", "line"]),
                          st.integers(0, 10**6), st.binary(min_size=1, max_size=6)), max_size=4),
       # mostly valid keys (so that most damaged logs reach the replay), sometimes not
       st.sampled_from([None] * 4 + [{"cause": ["GPU", "GPU NVLink"]}] * 2 + [{"cause": "host"}, {"cause": []},
                        {"cause": 3}, {"nonesuch": "GPU"}, {"cause": ["no such value"]}, "cause"]),
       st.sampled_from([None] * 4 + [1, 2, 4, 8] * 2 + [3, 16, 0, -1, "8", 2.5]),
       st.sampled_from(["stop", "loop", "fit"]),
       st.sampled_from([None, 256, 1024, 4096, 100]),
       st.sampled_from(["run", "fit"]))
def test_damaged_logs_with_where_unit_gpus_and_a_resized_job_exit_0_or_2(tmp_path_factory, edits, where, unit_gpus,
                                                                         after, gpus, command):
    d = tmp_path_factory.mktemp("wave4_log")
    for name in ("trace_job.toml", "trace_job_failures.csv", "trace_job_hosts.txt"):
        shutil.copy(EXAMPLES / name, d / name)
    log = bytearray((d / "trace_job_failures.csv").read_bytes())
    for kind, at, blob in edits:
        at %= max(1, len(log))
        if kind == "insert":
            log[at:at] = blob
        elif kind == "replace" and log:
            log[at] = blob[0]
        elif kind == "delete":
            del log[at: at + len(blob)]
        elif kind == "cut":
            log = log[:at]
        elif kind == "nul":
            log[at:at] = b"\x00"
        elif kind == "quote":
            log[at:at] = b'"'
        elif kind == "digit":  # a timestamp's digit changed: a date out of order or impossible
            digits = [i for i, c in enumerate(log) if 48 <= c <= 57]
            if digits:
                log[digits[at % len(digits)]] = 48 + blob[0] % 10
        elif kind == "line":  # a whole row dropped or repeated
            rows = bytes(log).split(b"\n")
            i = at % len(rows)
            rows[i:i + 1] = [] if blob[0] % 2 else [rows[i], rows[i]]
            log = bytearray(b"\n".join(rows))
    (d / "trace_job_failures.csv").write_bytes(bytes(log))
    text = (d / "trace_job.toml").read_text().replace("steps = 250_000", "steps = 2000").replace("seeds = 3", "seeds = 1")
    text = text.replace('after = "fit"', f'after = "{after}"')
    extra = ""
    if where is not None:
        extra += f"where = {_toml_value(where)}\n"
    if unit_gpus is not None:
        extra += f"unit_gpus = {_toml_value(unit_gpus)}\n"
    text = text.replace('unit_map = "trace_job_hosts.txt"', 'unit_map = "trace_job_hosts.txt"\n' + extra)
    (d / "trace_job.toml").write_text(text)
    argv = [command, str(d / "trace_job.toml")]
    argv += ["--processes", "1"] if command == "run" else ["--replicates", "20", "--laws", "weibull", "exponential"]
    if gpus is not None and command == "run":
        argv += ["--set", f"cluster.gpus={gpus}"]
    what = f"{command} edits={edits} where={where} unit_gpus={unit_gpus} after={after} gpus={gpus}"
    out = run_isolated(_spare([*argv, "--json", str(d / "out.json")]), case=what)
    assert out.ok, f"{what}: raised {out.error_type.__name__}: {out.message}"
    code, err = out.value
    event(f"exit {code}")
    assert code in (0, 2), f"{what}: exit {code}: {err}"
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1, f"{what}: {err}"
    else:
        assert json.loads((d / "out.json").read_text())


# -- [stragglers] through spare run and spare advise ------------------------------------------

STRAGGLER_BAD = BAD + ["ops.csv", "missing.csv", "/dev/zero", ["evict"], ["rebalance", "warp"], "mean", "nope",
                       1.0, 100.0, 101.0, 1e-9]


@fuzz(0.75)
@given(valid_files(policies=("ckpt", "spare")), straggler_tables(),
       st.lists(st.tuples(st.sampled_from(["delete", "typo", "value", "value", "none"]), st.integers(0, 10**6),
                          st.sampled_from(STRAGGLER_BAD)), min_size=1, max_size=2),
       st.sampled_from(["run", "advise"]))
def test_straggler_keys_mutated_through_run_and_advise_exit_0_or_2(tmp_path_factory, case, table, ops, command):
    data, _ = case
    d = tmp_path_factory.mktemp("wave4_strag")
    write_straggler_trace(d / "ops.csv")
    data = {**data, "stragglers": dict(table)}
    touched = []
    for kind, at, value in ops:  # mutations of [stragglers] only
        keys = list(data["stragglers"])
        if kind == "none" or not keys:
            continue
        k = keys[at % len(keys)]
        touched.append(f"stragglers.{k}")
        if kind == "delete":
            del data["stragglers"][k]
        elif kind == "typo":
            data["stragglers"][k + "x"] = data["stragglers"].pop(k)
        else:
            data["stragglers"][k] = value
    (d / "job.toml").write_text(to_toml(data), encoding="utf-8")
    what = f"{command} {table} {ops} -> {touched}"
    argv = [command, str(d / "job.toml"), "--processes", "1", "--json", str(d / "out.json")]
    out = run_isolated(_spare(argv), case=what)
    assert out.ok, f"{what}: raised {out.error_type.__name__}: {out.message}"
    code, err = out.value
    event(f"exit {code}")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code in (0, 2), f"{what}: exit {code}: {err}"
    if code == 2:
        assert len(lines) == 1, f"{what}: {err}"
        assert "stragglers" in lines[0] or not touched, f"{what}: {lines[0]}"
    else:
        assert json.loads((d / "out.json").read_text())


@fuzz(0.5)
@given(valid_files(fleet=True), st.lists(st.tuples(st.sampled_from(["delete", "typo", "value", "value", "add"]),
                                                   st.integers(0, 10**6), st.sampled_from(BAD)), min_size=1, max_size=3))
def test_mutated_fleet_files_exit_0_or_2_naming_the_key(tmp_path_factory, case, ops):
    """The same on files with failure classes, repair laws and probabilities and ``[fleet]``."""
    _check_mutated(tmp_path_factory.mktemp("wave4fleet"), case[0], ops, ADDED + ADDED_FLEET)


#: keys of a replayed log's table mutated in place (the ``[failures.trace]`` table is one level down)
TRACE_BAD = [("event_column", "nope"), ("event_column", 7), ("remove_values", []), ("remove_values", ["add"]),
             ("add_values", ["preempt"]), ("add_values", 3), ("capacity", -1), ("capacity", 1.5), ("capacity", 10**9),
             ("capacity", "x"), ("reason_column", "nope"), ("reason_column", None), ("unit_gpus", 0)]
#: a log's rows damaged: what each does to the text
LOG_EDITS = ("unknown_event", "remove_all", "negative_time", "blank_unit", "no_header", "unknown_cause", "nan_time")


def _damage(text: str, edit: str) -> str:
    head, *rows = text.splitlines()
    if edit == "no_header":
        return "\n".join(rows) + "\n"
    if not rows:
        return text
    t, a, b = rows[0].split(",")
    if edit == "unknown_event":
        rows.insert(0, f"{t},reboot,{b}")
    elif edit == "remove_all":
        rows += [f"{float(t) + 1.0},preempt,x-{i}" for i in range(200)]
    elif edit == "negative_time":
        rows[0] = f"-5,{a},{b}"
    elif edit == "nan_time":
        rows[0] = f"nan,{a},{b}"
    elif edit == "blank_unit":
        rows[0] = f"{t},{a}," if head.endswith("instance") else f"{t},,{b}"
    elif edit == "unknown_cause":
        rows.append(f"{float(t) + 1.0},n0,cosmic ray" if not head.endswith("instance") else f"{t},{a},{b}")
    return head + "\n" + "\n".join(rows) + "\n"


@fuzz(0.5)
@given(st.one_of(capacity_files().map(lambda c: (c, "capacity.csv", write_capacity_log)),
                 cause_files().map(lambda c: (c, "causes.csv", write_cause_log))),
       st.lists(st.tuples(st.sampled_from(["delete", "typo", "value", "add", "trace"]), st.integers(0, 10**6),
                          st.sampled_from(BAD)), max_size=2),
       st.lists(st.sampled_from(LOG_EDITS), max_size=2))
def test_mutated_capacity_and_cause_logs_exit_0_or_2_and_change_nothing(tmp_path_factory, case, ops, edits):
    """Capacity logs (removals, additions) and cause logs (classes by ``values``) with their keys
    mutated (those of ``[failures.trace]`` too) and their rows damaged, through ``spare run`` in a
    forked child: exit 0, or 2 with one line naming a key touched or the trace; the file and the
    log are as they were after the run."""
    (data, rows), name, write = case
    d = tmp_path_factory.mktemp("logs")
    write(d / name, rows)
    log = d / name
    for e in edits:
        log.write_text(_damage(log.read_text(), e))
    trace_ops = [(at, v) for kind, at, v in ops if kind == "trace"]
    bad, touched = _mutate(data, [o for o in ops if o[0] != "trace"], ADDED + ADDED_FLEET)
    if trace_ops:
        tr = dict(bad["failures"]["trace"]) if isinstance(bad.get("failures"), dict) and isinstance(
            bad["failures"].get("trace"), dict) else None
        if tr is not None:
            for at, _ in trace_ops:
                k, v = TRACE_BAD[at % len(TRACE_BAD)]
                if v is None:
                    tr.pop(k, None)
                else:
                    tr[k] = v
                touched.append(f"failures.trace.{k}")
            bad["failures"] = {**bad["failures"], "trace": tr}
    path = d / "job.toml"
    try:
        text = to_toml(bad)
    except TypeError:  # a nested table the writer does not inline twice: not the point here
        return
    path.write_text(text, encoding="utf-8")
    before = (path.read_bytes(), log.read_bytes())
    what = f"{ops} {edits} -> {touched}"
    out = run_isolated(_spare_run(path, d / "out.json"), case=what)
    assert out.ok, f"{what}: spare run raised {out.error_type.__name__}: {out.message}"
    code, err = out.value
    event(f"exit {code}")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code in (0, 2), f"{what}: exit {code}: {err}"
    assert (path.read_bytes(), log.read_bytes()) == before, what
    if code == 2:
        assert len(lines) == 1, f"{what}: {err}"
        names = {p for t in touched for p in (t, *t.split("."))} | {"failures.trace", "trace", name}
        if edits:  # a damaged cause log's new values are refused by the classes that do not list them
            names.add("failures.classes")
        assert any(n in lines[0] for n in names), f"{what}: names none of {sorted(names)}: {lines[0]}"
    else:
        assert (d / "out.json").stat().st_size > 0


@fuzz(0.1)
@given(valid_files(fleet=True),
       st.sampled_from([None, "0,1", "0,2,4", "3", "-1", "x", "1,,2", "1e3", "10000000", ""]),
       st.sampled_from([None, "0,2", "0", "1,3", "-2", "two", "1000001"]))
def test_spare_advise_fleet_sweeps_on_fleet_files_exit_0_or_2_naming_the_flag(tmp_path_factory, case, standbys,
                                                                               retire):
    """``spare advise --standbys N,... --retire-after K,...`` (this session's sweeps) on generated
    fleet files (domain classes, placements, lemons): exit 0, or 2 with one line naming the flag
    or a key the sweep needs (``fleet.*``, ``repair``, ``failures.model``, ...); never exit 1."""
    data, _ = case
    d = tmp_path_factory.mktemp("advise")
    (d / "job.toml").write_text(to_toml(data), encoding="utf-8")
    argv = ["advise", str(d / "job.toml"), "--processes", "1", "--no-sensitivity", "--json", str(d / "out.json")]
    if standbys is not None:
        argv += ["--standbys", standbys]
    if retire is not None:
        argv += ["--retire-after", retire]
    what = f"{argv[3:]}"
    out = run_isolated(_spare(argv), case=what)
    if not out.ok and out.error_type is SystemExit:  # argparse refusing a flag's value: its exit 2
        assert out.message == "2", f"{what}: SystemExit({out.message})"
        return
    assert out.ok, f"{what}: raised {out.error_type.__name__}: {out.message}"
    code, err = out.value
    event(f"exit {code}")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code in (0, 2), f"{what}: exit {code}: {err}"
    if code == 2:
        assert any(w in err for w in ("--standbys", "--retire-after", "fleet.", "repair", "failures.")), f"{what}: {err}"
    else:
        assert json.loads((d / "out.json").read_text())


@fuzz(0.1)
@given(valid_files(fleet=True),
       st.sampled_from([("fleet.standbys", ["0", "2"]), ("fleet.retire_after", ["0", "2"]),
                        ("repair.spares", ["1", "3"]), ("fleet.lemon_share", ["0.1", "0.3"]),
                        ("fleet.standbys", ["-1", "1"]), ("fleet.retire_after", ["x", "1"])]),
       st.sampled_from([("costs.restart", ["'10 s'", "'40 s'"]), ("fleet.retire_after", ["0", "3"]),
                        ("fleet.standbys", ["0", "1"])]))
def test_spare_map_fleet_axes_on_fleet_files_exit_0_or_2_naming_a_key(tmp_path_factory, case, x, y):
    """``spare map --x fleet.standbys ...`` (the fleet's axes: standbys, retirement, the pool, the
    lemons) on generated fleet files (domain classes, placements, lemons, retirement): exit 0 with
    a document, or 2 with a message naming the axis or a key; never exit 1."""
    data, _ = case
    if x[0] == y[0]:
        y = ("costs.restart", ["'10 s'", "'40 s'"])
    d = tmp_path_factory.mktemp("map")
    (d / "job.toml").write_text(to_toml(data), encoding="utf-8")
    argv = ["map", str(d / "job.toml"), "--x", x[0], "--x-values", *x[1], "--y", y[0], "--y-values", *y[1],
            "--seeds", "1", "--processes", "1", "--strategies", "ckpt", "spare", "--json", str(d / "map.json")]
    what = f"{argv[2:8]}"
    out = run_isolated(_spare(argv), case=what)
    if not out.ok and out.error_type is SystemExit:
        assert out.message == "2", f"{what}: SystemExit({out.message})"
        return
    assert out.ok, f"{what}: raised {out.error_type.__name__}: {out.message}"
    code, err = out.value
    event(f"exit {code}")
    assert code in (0, 2), f"{what}: exit {code}: {err}"
    if code == 2:
        assert any(w in err for w in ("--x", "--y", "fleet.", "repair", "failures.", "costs.")), f"{what}: {err}"
    else:
        assert json.loads((d / "map.json").read_text())
