"""Regressions of issue 28 ("Hardening the strategies"), the items about what the commands
read and write: each item's failure reproduced as a test, and for a class of bug a property
test (hypothesis) that would have found it."""
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# a job small enough that a whole command takes well under a second
TINY = """
name = "tiny"
[cluster]
gpus = 64
gpus_per_node = 8
tp = 8
pp = 1
[job]
step_time = "5 s"
allreduce_time = "0.5 s"
steps = 2000
[failures]
model = "system"
mtbf = "2 h"
[costs]
restart = "10 min"
checkpoint_save = "30 s"
[compare]
policies = ["ckpt", "spare"]
r_max = 2
seeds = 1
"""


def _cli(capsys, argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    cap = capsys.readouterr()
    return code, [ln for ln in cap.err.splitlines() if ln.strip()]


def _tiny(tmp_path, name="job.toml"):
    f = tmp_path / name
    f.write_text(TINY)
    return f


# -- item 12: an output never replaces an input --------------------------------------------------

@pytest.mark.parametrize("command", ["run", "advise"])
@pytest.mark.parametrize("flag", ["--json", "--csv"])
def test_an_output_naming_the_scenario_file_is_refused_and_the_file_kept(tmp_path, capsys, command, flag):
    f = _tiny(tmp_path)
    code, lines = _cli(capsys, [command, f, flag, f])
    assert code == 2 and len(lines) == 1, lines
    assert "is a file this command reads: an output never replaces an input" in lines[0]
    assert f.read_text() == TINY


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_an_output_reaching_the_scenario_file_through_a_link_is_refused(tmp_path, capsys, link):
    f = _tiny(tmp_path)
    other = tmp_path / "out.json"
    (os.symlink if link == "symlink" else os.link)(f, other)
    code, lines = _cli(capsys, ["run", f, "--json", other])
    assert code == 2 and "an output never replaces an input" in lines[-1]
    assert f.read_text() == TINY


def test_an_output_naming_the_failure_log_or_the_hostfile_is_refused(tmp_path, capsys):
    for name in ("trace_job.toml", "trace_job_failures.csv", "trace_job_hosts.txt"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    log = (tmp_path / "trace_job_failures.csv").read_bytes()
    for target in ("trace_job_failures.csv", "trace_job_hosts.txt"):
        code, lines = _cli(capsys, ["run", tmp_path / "trace_job.toml", "--seeds", "1", "--json", tmp_path / target])
        assert code == 2 and "an output never replaces an input" in lines[-1], lines
    assert (tmp_path / "trace_job_failures.csv").read_bytes() == log


def test_map_refuses_an_output_checked_before_the_file_is_read(tmp_path, capsys):
    # spare map checks its outputs first: the input read afterwards is refused instead
    f = _tiny(tmp_path)
    code, lines = _cli(capsys, ["map", f, "--x", "job.steps", "--x-values", "1000", "2000",
                                "--y", "costs.restart", "--y-values", "600", "1200", "--csv", f])
    assert code == 2 and "it is this command's output --csv" in lines[-1], lines
    assert f.read_text() == TINY


def test_sweep_refuses_its_spec_and_its_store_manifest_as_json(tmp_path, capsys):
    _tiny(tmp_path)
    spec = tmp_path / "s.toml"
    text = 'seeds = 1\npolicies = ["ckpt"]\nredundancies = [1]\n[[scenarios]]\nfile = "job.toml"\n'
    spec.write_text(text)
    store = tmp_path / "store"
    code, lines = _cli(capsys, ["sweep", spec, "--store", store, "--json", spec])
    assert code == 2 and "an output never replaces an input" in lines[-1], lines
    assert spec.read_text() == text
    assert _cli(capsys, ["sweep", spec, "--store", store])[0] == 0
    manifest = (store / "store.json").read_bytes()
    code, lines = _cli(capsys, ["sweep", "--report", "--store", store, "--json", store / "store.json"])
    assert code != 0 and "an output never replaces an input" in lines[-1], lines
    assert (store / "store.json").read_bytes() == manifest


def test_whatif_refuses_its_trace_as_an_output(tmp_path, capsys):
    trace = tmp_path / "ops.csv"
    assert _cli(capsys, ["whatif", "--synth", trace, "--dp", "2", "--pp", "2", "--n-steps", "4"])[0] == 0
    before = trace.read_bytes()
    code, lines = _cli(capsys, ["whatif", trace, "--json", trace])
    assert code == 2 and "an output never replaces an input" in lines[-1], lines
    assert trace.read_bytes() == before


def test_outside_a_command_the_library_may_rewrite_a_file_it_read(tmp_path):
    # the guard belongs to a command: a program reading and rewriting its own file is not refused
    from spare_core._files import read_input
    from spare_core._writer import write_atomic
    f = tmp_path / "a.txt"
    f.write_text("old")
    read_input(f, "test file", 100)
    write_atomic(f, b"new")
    assert f.read_text() == "new"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(["run", "advise"]), flag=st.sampled_from(["--json", "--csv", "--parquet"]),
       how=st.sampled_from(["same", "relative", "symlink", "symlink-chain", "hardlink"]))
def test_property_no_output_path_reaching_an_input_is_ever_written(tmp_path_factory, capsys, command, flag, how):
    d = tmp_path_factory.mktemp("io")
    f = _tiny(d)
    target = {"same": f, "relative": d / "." / "job.toml"}.get(how, d / "out")
    if how == "symlink":
        os.symlink(f, target)
    elif how == "symlink-chain":
        os.symlink(f, d / "mid")
        os.symlink(d / "mid", target)
    elif how == "hardlink":
        os.link(f, target)
    code, lines = _cli(capsys, [command, f, flag, target])
    assert code == 2 and f.read_text() == TINY, lines


# -- items 3 and 4: [repair] on a failure model that cannot give it is refused up front ------------

REPAIR = '\n[repair]\nswap = "5 min"\nspares = 2\ntime = "1 d"\n'
DOMAINS = '\n[[failures.domains]]\nname = "rack"\nnodes = 2\nmtbf = "1 d"\n'


def _repair_file(tmp_path, model, policies, domains=False):
    text = TINY.replace('model = "system"', f'model = "{model}"').replace(
        'policies = ["ckpt", "spare"]', f"policies = {policies!r}".replace("'", '"'))
    text = text.replace('mtbf = "2 h"\n', 'mtbf = "2 h"\n' + (DOMAINS if domains else ""), 1) + REPAIR
    f = tmp_path / f"{model}{'_domains' if domains else ''}.toml"
    f.write_text(text)
    return f


@pytest.mark.parametrize("model, domains, says", [
    ("system", False, "[repair] with failures.model = 'system' cannot run"),
    ("per-unit", False, "[repair] with failures.model = 'per-unit' cannot run"),
    ("node", True, "[repair] with [[failures.domains]] cannot run"),
])
@pytest.mark.parametrize("policy", ["spare", "rep", "elastic"])
def test_repair_on_a_model_without_own_clocks_is_refused_by_every_command_before_any_run(
        tmp_path, capsys, model, domains, says, policy):
    f = _repair_file(tmp_path, model, ["ckpt", policy], domains)
    for argv in (["run", f], ["advise", f],
                 ["map", f, "--x", "job.steps", "--x-values", "1000", "2000", "--y", "costs.restart",
                  "--y-values", "600", "1200"]):
        code, lines = _cli(capsys, argv)
        assert code == 2 and len(lines) == 1 and says in lines[0], (argv, lines)
        assert "runs in" not in lines[0]
    # a sweep over the file with that policy: refused when the spec is read, nothing stored
    only_ckpt = _repair_file(tmp_path, model, ["ckpt"], domains)
    spec = tmp_path / "s.toml"
    spec.write_text(f'seeds = 1\npolicies = ["{policy}"]\nredundancies = [2]\n[[scenarios]]\n'
                    f'file = "{only_ckpt.name}"\n')
    code, lines = _cli(capsys, ["sweep", spec, "--store", tmp_path / "store"])
    assert code == 2 and says in lines[-1], lines
    assert not (tmp_path / "store").exists() or not list((tmp_path / "store").glob("*.parquet"))


def test_repair_with_checkpoint_only_still_runs_on_every_model(tmp_path, capsys):
    for model, domains in (("system", False), ("per-unit", False), ("node", True)):
        f = _repair_file(tmp_path, model, ["ckpt"], domains)
        code, lines = _cli(capsys, ["run", f])
        assert code == 0, lines


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["system", "per-unit", "node"]), domains=st.booleans(), repair=st.booleans(),
       policy=st.sampled_from(["ckpt", "spare", "rep", "elastic"]))
def test_property_the_up_front_repair_check_refuses_exactly_the_runs_that_would_fail(
        tmp_path_factory, model, domains, repair, policy):
    # the check and the run loop agree: a refused (scenario, policy) is one whose run stops at
    # its first step, an accepted one runs
    from spare_core.scenario_file import load_scenario_file
    from spare_core.sim import policy_at, simulate
    from spare_core.sim.study import check_repairs

    d = tmp_path_factory.mktemp("rp")
    f = _repair_file(d, model, ["ckpt"], domains)
    sf = load_scenario_file(f, [] if repair else [("job.steps", 2000)])
    sc = sf.scenario if repair else sf.scenario.replace(repair=None)
    pol = policy_at(policy, None if policy == "ckpt" else 2)
    try:
        check_repairs(pol, sc)
        refused = None
    except ValueError as exc:
        refused = str(exc)
    try:
        simulate(sc.replace(n_steps=200), pol, seed=0)
        failed = None
    except ValueError as exc:
        failed = str(exc)
    assert (refused is None) == (failed is None), (refused, failed)


# -- item 6: a sweep over a file uses the file's policy options, as spare run does ----------------

POLICY_TABLES = ('\n[repair]\nswap = "5 min"\nspares = 4\ntime = "1 d"\n'
                 '[elastic]\nmicrobatches = {mb}\nreconfigure = "{rc} s"\n')


def _policy_file(d, mb=16, rc=600, off="sidon", steps=2000):
    text = TINY.replace('model = "system"', 'model = "node"').replace(
        'policies = ["ckpt", "spare"]', 'policies = ["ckpt", "elastic", "spare"]').replace(
        "steps = 2000", f"steps = {steps}") + POLICY_TABLES.format(mb=mb, rc=rc)
    if off is not None:
        text += f'[policy.spare]\noffsets = "{off}"\n'
    f = d / "el.toml"
    f.write_text(text)
    return f


def _spec_over(d, extra=""):
    spec = d / "s.toml"
    spec.write_text('seeds = 1\npolicies = ["ckpt", "elastic", "spare"]\nredundancies = [2]\n[[scenarios]]\n'
                    'file = "el.toml"\n' + extra)
    return spec


def _policies(study):
    return {(r.policy.name, r.policy.to_dict()["params"].get("redundancy")): r.policy.to_dict()
            for g in study.groups() for r in g.runs}


def _file_policies(f, sets=()):
    from spare_core.commands.filejob import file_study
    from spare_core.scenario_file import load_scenario_file
    sf = load_scenario_file(f, list(sets))
    return sf, {k: v for k, v in _policies(file_study(sf)).items() if k[1] in (None, 2)}


def test_a_sweep_over_a_file_builds_the_policies_spare_run_builds(tmp_path):
    from spare_core.sweeps import load_spec
    f = _policy_file(tmp_path)
    spec = load_spec(_spec_over(tmp_path))
    sf, want = _file_policies(f)
    got = _policies(spec)
    assert got == want
    elastic = next(v for k, v in got.items() if k[0] == "Elastic DP")["params"]
    assert (elastic["microbatches"], elastic["reconfigure"]) == (16, 600.0)
    assert spec.scenarios[0].to_dict() == sf.scenario.to_dict()


def test_a_sweeps_set_of_a_policy_option_is_used(tmp_path):
    from spare_core.sweeps import load_spec
    _policy_file(tmp_path, off=None)
    spec = load_spec(_spec_over(tmp_path, 'set = {"elastic.microbatches" = 8, "policy.spare.offsets" = "sidon"}\n'))
    got = {k[0]: v["params"] for k, v in _policies(spec).items()}
    assert got["Elastic DP"]["microbatches"] == 8 and got["SPARe+CKPT"]["offsets"] == "sidon"


def test_a_sweep_grid_over_elastic_options_gives_a_cell_per_value_on_shared_failures(tmp_path):
    from spare_core.sweeps import load_spec, run_batch
    _policy_file(tmp_path, steps=20000)
    spec = load_spec(_spec_over(tmp_path, 'grid = {"elastic.microbatches" = [4, 16]}\n'))
    groups = spec.groups()
    assert len(groups) == 2 and len({r.scenario_key for g in groups for r in g.runs}) == 2
    assert groups[0].key == groups[1].key  # one scenario's failures (common random numbers)
    walls = {}
    for g in groups:
        cols = run_batch([g])
        for i, run in enumerate(g.runs):
            walls[(g.scenario.name, run.policy.name)] = cols["wall_time"][i]
    names = sorted({n for n, _ in walls})
    assert walls[(names[0], "CKPT-only")] == walls[(names[1], "CKPT-only")]
    assert walls[(names[0], "Elastic DP")] != walls[(names[1], "Elastic DP")]


def test_spare_sweep_and_spare_run_give_the_same_runs_for_one_file_and_seed(tmp_path, capsys):
    import json
    from spare_core.sim import simulate
    from spare_core.sweeps import load_spec
    f = _policy_file(tmp_path)
    out = tmp_path / "run.json"
    assert _cli(capsys, ["run", f, "--r-max", "2", "--json", out])[0] == 0
    ran = {(r["policy"], r["redundancy"]): r for r in json.loads(out.read_text())["runs"]}
    spec = load_spec(_spec_over(tmp_path))
    for g in spec.groups():
        for run in g.runs:
            fresh = simulate(g.scenario, run.policy, seed=0)  # the sweep's run on spare run's seed
            want = ran[(run.policy.name, run.policy.redundancy)]
            assert (fresh.wall_time, fresh.failures_seen, fresh.restarts) == \
                (want["wall_time"], want["failures_seen"], want["restarts"])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mb=st.integers(1, 64), rc=st.integers(1, 3600), off=st.sampled_from(["sidon", None]),
       how=st.sampled_from(["file", "set", "grid"]))
def test_property_a_sweep_over_a_file_uses_the_options_spare_run_uses(tmp_path_factory, mb, rc, off, how):
    from spare_core.sweeps import load_spec
    d = tmp_path_factory.mktemp("sw")
    if how == "file":
        f, extra, sets = _policy_file(d, mb, rc, off), "", []
    else:
        f = _policy_file(d, off=None)
        pairs = {"elastic.microbatches": mb, "elastic.reconfigure": f"{rc} s"}
        if off is not None:
            pairs["policy.spare.offsets"] = off
        body = ", ".join(f'"{k}" = {v!r}'.replace("'", '"') for k, v in pairs.items())
        extra = f"set = {{{body}}}\n" if how == "set" else \
            "grid = {" + ", ".join(f'"{k}" = [{v!r}]'.replace("'", '"') for k, v in pairs.items()) + "}\n"
        sets = list(pairs.items())
    assert _policies(load_spec(_spec_over(d, extra))) == _file_policies(f, sets)[1]


# -- items 10 and 14: times in the log's own time_format ----------------------------------------

def _log(d, fmt, instants):
    f = d / "log.csv"
    f.write_text("time|host\n" + "".join(f"{t.strftime(fmt)}|h{i}\n" for i, t in enumerate(instants)))
    return f


def _read(f, fmt, **kw):
    from spare_core.events.trace import read_trace
    return read_trace(f, time_column="time", unit_column="host", time_format=fmt, delimiter="|", **kw)


@pytest.mark.parametrize("fmt", ["%Y-%d-%m %H:%M", "%m%Y%d %H:%M", "%d/%m/%Y %H:%M"])
def test_window_keys_written_in_the_logs_format_are_read_in_it(tmp_path, fmt):
    import datetime as dt
    utc = dt.timezone.utc
    days = [dt.datetime(2025, 1, 3, 5, tzinfo=utc), dt.datetime(2025, 2, 10, 1, tzinfo=utc),
            dt.datetime(2025, 3, 2, 4, tzinfo=utc), dt.datetime(2025, 3, 20, 4, tzinfo=utc)]
    f = _log(tmp_path, fmt, days)
    start, end = dt.datetime(2025, 3, 1, tzinfo=utc), dt.datetime(2025, 3, 31, tzinfo=utc)
    tr = _read(f, fmt, start=start.strftime(fmt), end=end.strftime(fmt))
    assert tr.start == start  # 1 March, not 3 January as ISO 8601 read "2025-01-03 00:00"
    assert tr.times.tolist() == [(t - start).total_seconds() for t in days[2:]]
    # an ISO string or a TOML datetime is still an ISO instant
    assert _read(f, fmt, start="2025-03-01T00:00:00Z").start == start
    assert _read(f, fmt, start=start).start == start


def test_adjacent_names_are_read_as_strptime_reads_them(tmp_path):
    import datetime as dt
    fmt = "%A%B%Y%d"
    t = dt.datetime(2025, 8, 4, tzinfo=dt.timezone.utc)  # a Monday in August: "MondayAugust202504"
    tr = _read(_log(tmp_path, fmt, [t]), fmt)
    assert tr.start == dt.datetime.strptime(t.strftime(fmt), fmt).replace(tzinfo=dt.timezone.utc)


_DIRECTIVES = {  # directive -> the field groups it takes (a pattern takes one directive per group)
    "%Y": "year", "%y": "year", "%m": "month", "%b": "month", "%B": "month", "%d": "day", "%H": "hour",
    "%M": "minute", "%S": "second", "%a": "weekday", "%A": "weekday", "%f": "fraction",
}


@st.composite
def _patterns(draw):
    groups = {}
    for d, g in _DIRECTIVES.items():
        groups.setdefault(g, []).append(d)
    take = ["year", "month", "day"] + draw(st.lists(st.sampled_from(["hour", "minute", "second", "weekday",
                                                                     "fraction"]), unique=True))
    chosen = [draw(st.sampled_from(groups[g])) for g in take]
    if draw(st.booleans()):
        chosen = [c for c in chosen if c != "%H"] + (["%I", "%p"] if "%H" in chosen else [])
    order = draw(st.permutations(chosen))
    seps = [draw(st.sampled_from(["", "", " ", "-", ":", "/", "T", "."])) for _ in order]
    return "".join(s + d for s, d in zip(seps, order)).strip() or "%Y%m%d"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=_patterns(), when=st.datetimes(min_value=__import__("datetime").datetime(1970, 1, 2),
                                          max_value=__import__("datetime").datetime(2099, 12, 30)))
def test_property_the_time_format_parser_agrees_with_strptime(tmp_path_factory, fmt, when):
    import datetime as dt
    from hypothesis import assume
    text = when.strftime(fmt)
    try:
        want = dt.datetime.strptime(text, fmt)
    except ValueError:
        assume(False)  # strptime itself cannot read it back: nothing to compare with
    f = tmp_path_factory.mktemp("fmt") / "log.csv"
    f.write_text(f"time|host\n{text}|h0\n")
    tr = _read(f, fmt)
    assert tr.start == want.replace(tzinfo=dt.timezone.utc), (fmt, text)


# -- item 13: every command's work bounded and refused up front, the demo included ----------------

def _limited(argv, tmp_path, gib=2, seconds=120):
    """``spare ARGV`` in a child process that may not use more than ``gib`` GiB of address space:
    a command that grows before it refuses dies of a MemoryError (status 1), not status 2."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    return subprocess.run([sys.executable, "-m", "spare_core", *map(str, argv)], capture_output=True, text=True,
                          timeout=seconds, preexec_fn=limit, env=env, cwd=tmp_path)


MAX = 2**31 - 1


@pytest.mark.parametrize("argv, says", [
    (["demo", "--types", MAX], "the matching graph would take about"),
    (["demo", "--types", 10**6, "--redundancy", 8], "the matching graph would take about"),
    (["demo", "--types", 5 * 10**6, "--force"], "the matching graph would take about"),
    (["pacing", "--nodes", MAX], "the largest job has"),
    (["pacing", "--iterations", MAX], "the expected work is beyond the budget"),
    (["whatif", "--synth", "s.csv", "--dp", MAX], "the synthetic trace would hold at least"),
    (["whatif", "--synth", "s.csv", "--dp", 64, "--pp", 64, "--n-steps", MAX], "the synthetic trace would hold"),
    (["compare", "--seeds", 2**24], "the expected work is beyond the budget"),
    (["run", "job.toml", "--seeds", 2**24], "the expected work is beyond the budget"),
])
def test_huge_counts_are_refused_up_front_in_one_line(tmp_path, argv, says):
    _tiny(tmp_path)
    p = _limited(argv, tmp_path)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1 and says in lines[0], p.stderr[-500:]
    assert not (tmp_path / "s.csv").exists()


def test_the_demo_budget_lets_the_default_and_force_through():
    from spare_core.commands import UsageError
    from spare_core.commands.budget import check_matching_demo
    work, memory = check_matching_demo(1000, 4)
    assert 0 < work < 1e9 and memory < 1e7
    big = 200_000  # within memory, beyond the work budget
    with pytest.raises(UsageError, match="--force runs it anyway"):
        check_matching_demo(big, 8)
    assert check_matching_demo(big, 8, force=True)[0] > 5e11


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, MAX), r=st.integers(1, 64))
def test_property_the_demo_refuses_exactly_what_is_beyond_its_budget(n, r):
    # the memory bound is the graph the demo builds: n r^2 slot edges at 64 bytes
    from spare_core._limits import BUDGET
    from spare_core.commands import UsageError
    from spare_core.commands.budget import check_matching_demo
    r = min(r, n)
    try:
        check_matching_demo(n, r, force=True)
        refused = False
    except UsageError:
        refused = True
    assert refused == (n * r * r * 64 > BUDGET["matching_bytes"])


# -- item 15: the smaller ones -----------------------------------------------------------------

def test_a_disk_filling_up_mid_sweep_exits_1_with_the_runs_stored_kept(tmp_path, capsys, monkeypatch):
    import builtins
    import errno
    from spare_core.sweeps import ResultStore
    from spare_core.sweeps import store as store_module

    _tiny(tmp_path)
    spec = tmp_path / "s.toml"
    spec.write_text('seeds = 3\npolicies = ["ckpt"]\nredundancies = [1]\n[[scenarios]]\nfile = "job.toml"\n')
    parts = [0]

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    def opener(path, mode="r", *a, **kw):
        fh = builtins.open(path, mode, *a, **kw)
        if ".part-" in str(path) and "w" in mode:
            parts[0] += 1
            if parts[0] > 1:  # the first part fits, the disk is full from the second on
                return Full(fh)
        return fh

    monkeypatch.setattr(store_module, "open", opener, raising=False)
    code, lines = _cli(capsys, ["sweep", spec, "--store", tmp_path / "st", "--batch-runs", "1",
                                "--workers", "1", "--executor", "local"])
    assert code == 1, lines
    assert "is full" in lines[-1] or "No space left on device" in lines[-1], lines
    assert "runs are stored" in lines[-1]
    assert len(ResultStore(tmp_path / "st").keys()) == 1


@pytest.mark.parametrize("text, says", [
    ("x", "'x' is not an integer"), ("-1", "-1 is negative"), ("1,,2", "an empty item"),
    ("99999999", "99999999 is above 10**7"),
])
def test_spares_errors_say_what_is_wrong(capsys, tmp_path, text, says):
    code, lines = _cli(capsys, ["advise", _tiny(tmp_path), "--spares", text])
    assert code == 2 and len(lines) == 1 and says in lines[0] and "_counts" not in lines[0], lines


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="0123456789,- x", max_size=12))
def test_property_spares_reads_every_list_or_says_which_item_is_wrong(text):
    import argparse
    from spare_core.commands.advise import _counts
    try:
        out = _counts(text)
    except argparse.ArgumentTypeError as exc:
        assert "spare-pool sizes" in str(exc) and ("empty item" in str(exc) or "is not an integer" in str(exc)
                                                   or "is negative" in str(exc) or "above" in str(exc))
    else:
        assert out and all(0 <= n <= 10**7 for n in out)
        assert out == list(dict.fromkeys(int(x) for x in text.split(",")))


def _copies_file(d, n_groups, per_domain, copies):
    text = TINY.replace("gpus = 64", f"gpus = {8 * n_groups}").replace('model = "system"', 'model = "node"')
    if per_domain:
        text = text.replace('mtbf = "2 h"\n', f'mtbf = "2 h"\n{DOMAINS.replace("nodes = 2", f"nodes = {per_domain}")}', 1)
    text += f'\n[checkpoint]\nmemory_save = "3 s"\nmemory_restore = "1 min"\nmemory_copies = {copies}\n'
    f = d / "cp.toml"
    f.write_text(text)
    return f


def test_more_copies_than_other_domains_are_refused_in_one_line(tmp_path):
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    with pytest.raises(ScenarioFileError, match="memory_copies must be at most 1: the copies go to groups in other "
                                                "failure domains.* 2 domains"):
        load_scenario_file(_copies_file(tmp_path, 8, 4, 2))
    with pytest.raises(ScenarioFileError, match="memory_copies must be at most 7"):
        load_scenario_file(_copies_file(tmp_path, 8, 0, 8))
    assert load_scenario_file(_copies_file(tmp_path, 8, 4, 1)).scenario.memory.copies == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 24), per=st.integers(0, 8), copies=st.integers(1, 30))
def test_property_accepted_copies_never_share_a_group_or_its_domain(tmp_path_factory, n, per, copies):
    import numpy as np
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    from spare_core.sim.recovery import copy_holders
    from hypothesis import assume
    assume(per == 0 or n % per == 0 and n // per >= 1)
    try:
        sf = load_scenario_file(_copies_file(tmp_path_factory.mktemp("cp"), n, per, copies))
    except ScenarioFileError as exc:
        assert "memory_copies must be at most" in str(exc)
        n_dom = n // per if per else 1
        assert copies >= (n_dom if n_dom > 1 else n)
        return
    sc = sf.scenario
    dom = sc.failures.domains(n).labels[0] if per and n // per > 1 else None
    holders = copy_holders(n, copies, dom)
    g = np.arange(n)[:, None]
    assert not np.any(holders == g)  # never the group itself
    if dom is not None:
        assert not np.any(np.asarray(dom)[holders] == np.asarray(dom)[g])  # never its own domain


def test_fit_periods_auto_gives_a_log_of_exactly_two_years_its_years():
    import datetime as dt
    from spare_core.events.rates import calendar_periods
    day = 86400.0
    assert calendar_periods(730 * day).labels[0] == "days 0-365.2"
    assert calendar_periods(729.9 * day).labels[0].startswith("days 0-91")  # quarters below
    start = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    assert calendar_periods(730 * day, start=start).labels == ("2025", "2026")


_AUTO = [("year", 730), ("quarter", 180), ("month", 56), ("week", 14), ("day", 2)]  # docs/cli.md


@settings(max_examples=200, deadline=None)
@given(days=st.floats(0.01, 5000, allow_nan=False))
def test_property_fit_periods_auto_follows_the_documented_thresholds(days):
    from spare_core.events.rates import calendar_periods
    want = next((k for k, d in _AUTO if days >= d), None)
    got = calendar_periods(days * 86400.0)
    if want is None:
        assert got.labels == ("the whole window",)
    else:
        assert got.labels == calendar_periods(days * 86400.0, want).labels


def _fit_job(d, log_rows, trace_extra="", failures_extra=""):
    (d / "log.csv").write_text("time,node\n" + "".join(f"{t:.1f},{u}\n" for t, u in log_rows))
    text = TINY.replace('model = "system"\nmtbf = "2 h"',
                        'model = "node"\nlaw = "fit"\nfit_law = "exponential"\n' + failures_extra +
                        '[failures.trace]\npath = "log.csv"\ntime_column = "time"\nunit_column = "node"\n'
                        'time_format = "seconds"\nend = 34560000.0\n' + trace_extra)
    f = d / "fit.toml"
    f.write_text(text)
    return f


def _poisson_log(seed, rise, nodes=64, days=400.0, per_node_day=0.01):
    """Node failures at a constant rate, ``rise`` times higher over the second half."""
    import numpy as np
    rng = np.random.default_rng(seed)
    rows, half = [], days / 2
    for rate, lo, hi in ((per_node_day, 0.0, half), (per_node_day * rise, half, days)):
        n = rng.poisson(rate * nodes * (hi - lo))
        rows += [(t * 86400.0, f"n{u}" if isinstance(u, str) else int(u))
                 for t, u in zip(rng.uniform(lo, hi, n), rng.integers(0, nodes, n))]
    return sorted(rows)


def test_law_fit_refuses_a_law_whose_per_period_counts_are_not_reproduced(tmp_path):
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    f = _fit_job(tmp_path, _poisson_log(1, 10.0), "n_units = 64\n")
    with pytest.raises(ScenarioFileError) as exc:
        load_scenario_file(f)
    msg = str(exc.value)
    assert "\n" not in msg and "but not their course: per-period counts" in msg
    assert "fit_rate = 'periods'" in msg and "fit_check = 'count'" in msg
    # the two documented ways on: a rate per period, or the count alone, said in the file
    sf = load_scenario_file(f, [("failures.fit_check", "count")])
    assert "per-period counts NOT reproduced" in sf.rate_note
    sf = load_scenario_file(f, [("failures.fit_rate", "periods")])
    assert "per-period counts reproduced" in sf.rate_note


def test_law_fit_still_takes_a_steady_log(tmp_path):
    from spare_core.scenario_file import load_scenario_file
    sf = load_scenario_file(_fit_job(tmp_path, _poisson_log(2, 1.0), "n_units = 64\n"))
    assert "per-period counts reproduced" in sf.rate_note


def test_law_fit_on_host_names_needs_the_fleet_size(tmp_path):
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    rows = [(t, f"host{u}") for t, u in _poisson_log(3, 1.0)]
    with pytest.raises(ScenarioFileError, match="needs the size of the fleet: the log names only the .* hosts that "
                                                "failed; give failures.trace.n_units"):
        load_scenario_file(_fit_job(tmp_path, rows))
    sf = load_scenario_file(_fit_job(tmp_path, rows, "n_units = 64\n"))
    assert sf.trace.n_units == 64


def test_fit_check_only_goes_with_law_fit(tmp_path):
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    with pytest.raises(ScenarioFileError, match="failures.fit_check only goes with law = 'fit'"):
        load_scenario_file(_tiny(tmp_path), [("failures.fit_check", "count")])


# -- item 2: a fit and its re-check count in the work budget, before they run -------------------

def test_a_fit_beyond_the_budget_is_refused_before_it_runs_and_force_runs_it(tmp_path, capsys, monkeypatch):
    from spare_core import _limits
    from spare_core.events import files as files_module
    f = _fit_job(tmp_path, _poisson_log(4, 1.0), "n_units = 64\n")
    monkeypatch.setattr(files_module, "_FITS", {})  # nothing fitted yet in this process
    monkeypatch.setitem(_limits.BUDGET, "failures", 1e4)  # the log's ~260 failures x 201 x 4 laws is beyond
    calls = []
    real = files_module._fit_one
    monkeypatch.setattr(files_module, "_fit_one", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    code, lines = _cli(capsys, ["run", f, "--set", "failures.fit_law='best'"])
    assert code == 2 and len(lines) == 1 and "beyond the work budget" in lines[0] and "--force" in lines[0], lines
    assert calls == []  # refused before any law was fitted
    monkeypatch.setitem(_limits.BUDGET, "failures", 1e6)  # one law fits within, four do not
    code, lines = _cli(capsys, ["run", f, "--set", "failures.fit_law='best'", "--force", "--set",
                                "failures.fit_check='count'"])
    assert code == 0 and calls, lines


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.floats(1e2, 1e7), law=st.sampled_from(["exponential", "weibull", "best"]))
def test_property_a_fit_is_refused_exactly_when_its_estimate_is_beyond_the_budget(tmp_path_factory, budget, law):
    from spare_core import _limits
    from spare_core.events import files as files_module
    from spare_core.events.fit import NODE_LAWS
    from spare_core.events.trace import read_trace
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    d = tmp_path_factory.mktemp("fb")
    f = _fit_job(d, _poisson_log(5, 1.0, days=100.0), "n_units = 64\n")
    trace = read_trace(d / "log.csv", time_column="time", unit_column="node", time_format="seconds",
                       end=34560000.0, n_units=64)
    want = files_module.fit_work(trace, NODE_LAWS if law == "best" else (law,)) > budget
    before, saved = _limits.BUDGET["failures"], dict(files_module._FITS)
    files_module._FITS.clear()
    _limits.BUDGET["failures"] = budget
    try:
        load_scenario_file(f, [("failures.fit_law", law), ("failures.fit_check", "count")])
        refused = False
    except ScenarioFileError as exc:
        assert "beyond the work budget" in str(exc), str(exc)
        refused = True
    finally:
        _limits.BUDGET["failures"] = before
        files_module._FITS.clear()
        files_module._FITS.update(saved)
    assert refused == want
