"""Issue 28's leftovers: refusals from counts before anything is built, errors that name their
file, huge integers on the command line (docs/reliability.md, the rows of this wave)."""
import csv
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spare_core.stragglers import JobSizes, TraceError, analyse, read_trace, synthetic_trace, trace_columns


def _write_csv(path, cols):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(cols))
        n = len(next(iter(cols.values())))
        for i in range(n):
            w.writerow([cols[k][i] for k in cols])


@pytest.fixture(scope="module")
def p2p_cols():
    t = synthetic_trace(dp=1, pp=3, microbatches=2, steps=1)
    return {k: v.copy() for k, v in trace_columns(t).items()}


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_broken_send_recv_pairing_names_the_file(tmp_path_factory, p2p_cols, data):
    """Every dependency-graph error of a trace read from a file names that file (it said
    ``trace:`` before, whichever file it was), whichever p2p row is dropped or re-keyed."""
    cols = {k: v.copy() for k, v in p2p_cols.items()}
    p2p = np.flatnonzero(np.isin(cols["optype"], ["forward-send", "forward-recv", "backward-send", "backward-recv"]))
    i = int(data.draw(st.sampled_from(list(p2p))))
    if data.draw(st.booleans()):
        keep = np.ones(len(cols["optype"]), bool)
        keep[i] = False
        cols = {k: v[keep] for k, v in cols.items()}
    else:
        cols["seq_id"][i] += data.draw(st.integers(1, 5))
    path = tmp_path_factory.mktemp("t") / "job_trace.csv"
    _write_csv(path, cols)
    try:
        analyse(read_trace(path, JobSizes(dp=1, pp=3)))
    except TraceError as exc:
        assert "job_trace.csv" in str(exc), str(exc)
        assert "\n" not in str(exc)


def test_a_send_without_its_recv_names_the_file(tmp_path, p2p_cols):
    cols = {k: v.copy() for k, v in p2p_cols.items()}
    keep = cols["optype"] != "forward-recv"
    _write_csv(tmp_path / "norecv.csv", {k: v[keep] for k, v in cols.items()})
    with pytest.raises(TraceError, match=r"norecv\.csv: stage \d records 0 forward-recv"):
        analyse(read_trace(tmp_path / "norecv.csv", JobSizes(dp=1, pp=3)))


# -- item 4: every command's numeric flags at extreme values ------------------------------------

from pathlib import Path  # noqa: E402

import spare_core.commands.budget as budget_mod  # noqa: E402
from spare_core.cli import main  # noqa: E402

EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "llama3_16k.toml")


class _WouldRun(BaseException):
    """Raised where the checks have all passed and the command would start its runs (a
    BaseException, so that the command line's catch-all does not turn it into exit status 1)."""


def _sentinel(monkeypatch):
    real = budget_mod.estimate

    def estimate(*a, **kw):
        est = real(*a, **kw)
        if not est.over():
            raise _WouldRun
        return est

    def passed(*a, **kw):
        raise _WouldRun

    monkeypatch.setattr(budget_mod, "estimate", estimate)
    real_demo, real_pacing = budget_mod.check_matching_demo, budget_mod.check_pacing_work
    import spare_core.commands.demo as demo_mod
    import spare_core.commands.pacing as pacing_mod

    monkeypatch.setattr(demo_mod, "check_matching_demo", lambda *a, **kw: (real_demo(*a, **kw), passed())[0])
    monkeypatch.setattr(pacing_mod, "check_pacing_work", lambda *a, **kw: (real_pacing(*a, **kw), passed())[0])
    import spare_core.commands.fit as fit_mod

    real_fit = budget_mod.check_fit_command
    monkeypatch.setattr(fit_mod, "check_fit_command", lambda *a, **kw: (real_fit(*a, **kw), passed())[0])


_MAP = ["map", EXAMPLE, "--x", "failures.mtbf", "--x-values", "1h", "2h", "--y", "costs.restart", "--y-values",
        "10min", "20min"]
COMMANDS = {
    "compare": (["compare"], ["--groups", "--r-max", "--seeds", "--steps", "--processes", "--horizon"]),
    "pacing": (["pacing", "--nodes", "4"], ["--nodes", "--iterations", "--replicas", "--seed", "--nodes-per-leaf",
                                            "--oversubscription", "--background-duty", "--background-run"]),
    "demo": (["demo"], ["--types", "--redundancy", "--every", "--seed"]),
    "run": (["run", EXAMPLE], ["--steps", "--seeds", "--r-max", "--horizon", "--processes"]),
    "advise": (["advise", EXAMPLE, "--no-sensitivity"], ["--steps", "--seeds", "--r-max", "--horizon"]),
    "map": (_MAP, ["--steps", "--seeds", "--r-max", "--horizon", "--processes", "--tie"]),
    "fit": (["fit", str(Path(EXAMPLE).with_name("trace_job.toml"))], ["--replicates", "--seed"]),
}
EXTREMES = ["0", "-1", "1", str(2**31 - 1), str(2**31), str(2**63 - 1), str(2**63), str(2**64), "nan", "inf",
            "-inf", "1e400", "1e-320"]


_CASES = [(name, flag, value) for name, (_, flags) in sorted(COMMANDS.items()) for flag in flags for value in EXTREMES]


@pytest.mark.parametrize("name, flag, value", _CASES)
def test_extreme_numbers_on_every_flag_exit_0_or_2_with_one_line(monkeypatch, capsys, name, flag, value):
    """A flag's value the parser accepts but the model cannot run is a usage error (exit 2, one
    line) or a budget refusal, never exit status 1 (``spare compare --groups 2147483647`` was
    ``error: ValueError: n_groups must be <= 2147483646``, status 1). Every (command, numeric
    flag, extreme value): the grid is small enough to walk whole."""
    base, _ = COMMANDS[name]
    argv = [*base, flag, value]
    with monkeypatch.context() as m:
        _sentinel(m)
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        except _WouldRun:
            code = "would run"
    err = capsys.readouterr().err
    assert code in (0, 2, "would run"), (argv, code, err)
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert lines and "Traceback" not in err, (argv, err)


def test_compare_groups_at_the_count_limit_is_a_usage_error(capsys):
    try:
        code = main(["compare", "--groups", str(2**31 - 1)])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "--groups" in err and "2147483647" in err, err


# -- item 1: spare sweep refuses from the spec's counts ------------------------------------------

import tracemalloc  # noqa: E402

from spare_core import _limits  # noqa: E402
from spare_core.sim import Scenario  # noqa: E402


def _spec(tmp_path, seeds, grid):
    lines = [f"seeds = {seeds}", 'policies = ["ckpt"]', "redundancies = [1]", "[scenario]", 'preset = "paper_600k"',
             "n_groups = 40"]
    if grid:
        lines.append("grid = {" + ", ".join(f"{k} = [{', '.join(map(str, v))}]" for k, v in grid.items()) + "}")
    else:
        lines.append("n_steps = 50")
    p = tmp_path / "spec.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


def _sweep(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def test_a_sweep_of_2_24_seeds_is_refused_from_its_counts_in_little_memory(tmp_path, capsys):
    """It built 2**24 groups first: 2.7 GB and a MemoryError after 48 s under a 3 GB limit."""
    spec = _spec(tmp_path, 2**24, None)
    tracemalloc.start()
    try:
        code, err = _sweep(capsys, ["sweep", str(spec), "--store", str(tmp_path / "st")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and "1.68e+07 scenario-seed pairs" in err and "--force" in err, err
    assert peak < 20e6
    assert not (tmp_path / "st").exists()


def test_a_sweep_grid_of_a_million_combinations_is_refused_before_any_scenario_is_built(tmp_path, capsys,
                                                                                           monkeypatch):
    built = []
    real = Scenario.paper_600k.__func__
    monkeypatch.setattr(Scenario, "paper_600k", classmethod(lambda cls, *a, **kw: built.append(1) or real(cls, *a, **kw)))
    grid = {"n_steps": list(range(10, 110)), "system_mtbf": [100.0 + i for i in range(100)],
            "checkpoint_time": [1.0 + i for i in range(100)]}
    code, err = _sweep(capsys, ["sweep", str(_spec(tmp_path, 1, grid)), "--store", str(tmp_path / "st")])
    assert code == 2 and "1e+06 scenarios built before the first run (budget 1e+05)" in err, err
    assert built == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lens=st.lists(st.integers(1, 6), min_size=1, max_size=3), seeds=st.integers(1, 40),
       budget_sc=st.integers(1, 60), budget_pairs=st.integers(1, 600))
def test_property_the_sweep_precheck_refuses_exactly_what_its_counts_exceed(tmp_path_factory, capsys, monkeypatch,
                                                                             lens, seeds, budget_sc, budget_pairs):
    """Counted against an independent product of the grid's lengths; nothing is built when
    refused, and a spec within both counts goes on to the work budget (here: runs)."""
    keys = ["n_steps", "system_mtbf", "checkpoint_time"]
    grid = {k: [(10 if k == "n_steps" else 100.0) + i for i in range(n)] for k, n in zip(keys, lens)}
    n_sc = math.prod(lens)
    tmp = tmp_path_factory.mktemp("s")
    built = []
    real = Scenario.paper_600k.__func__
    with monkeypatch.context() as m:
        m.setitem(_limits.BUDGET, "scenarios", budget_sc)
        m.setitem(_limits.BUDGET, "pairs", budget_pairs)
        m.setattr(Scenario, "paper_600k", classmethod(lambda cls, *a, **kw: built.append(1) or real(cls, *a, **kw)))
        m.setattr(budget_mod, "estimate", lambda *a, **kw: (_ for _ in ()).throw(_WouldRun()))
        try:
            code, err = _sweep(capsys, ["sweep", str(_spec(tmp, seeds, grid)), "--store", str(tmp / "st")])
        except _WouldRun:
            code, err = "would run", ""
    refused = n_sc > budget_sc or n_sc * seeds > budget_pairs
    assert (code == 2) == refused, (code, err, n_sc, seeds)
    if refused:
        assert built == [] and "beyond the budget" in err
    else:
        assert code == "would run" and len(built) == n_sc


# -- item 2: spare map refuses from its counts -----------------------------------------------------

import spare_core.commands.map as map_mod  # noqa: E402


def _count_loads(monkeypatch):
    loads = []
    real = map_mod._load

    def load(*a, **kw):
        loads.append(a[1])
        return real(*a, **kw)

    monkeypatch.setattr(map_mod, "_load", load)
    return loads


def _map(capsys, *extra):
    return _sweep(capsys, ["map", EXAMPLE, "--x", "failures.mtbf", "--y", "costs.restart", *extra])


def test_a_map_of_a_million_cells_is_refused_before_a_cell_is_read(capsys, monkeypatch):
    loads = _count_loads(monkeypatch)
    code, err = _map(capsys, "--x-range", "1h", "10h", "1000", "--y-range", "1min", "60min", "1000")
    assert code == 2 and "1e+06 scenarios built before the first run" in err, err
    assert len(loads) == 2  # the file, then the file with the strategies' policies: no cell


def test_a_map_at_2_31_steps_is_refused_from_its_corners(capsys, monkeypatch):
    """It read all 90,000 cells (a scenario file each, about 45 s) before the budget refused it."""
    loads = _count_loads(monkeypatch)
    code, err = _map(capsys, "--x-range", "1h", "10h", "300", "--y-range", "1min", "60min", "300",
                     "--steps", str(2**31 - 1))
    assert code == 2 and "cheapest corner" in err and "steps per run (budget 2e+09)" in err, err
    assert len(loads) == 2 + 4


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nx=st.integers(2, 4), ny=st.integers(2, 4), budget=st.floats(1e5, 1e10))
def test_property_the_corner_precheck_refuses_only_what_the_whole_grid_check_refuses(capsys, monkeypatch,
                                                                                      nx, ny, budget):
    """Under any budget of steps over all runs: refused from the corners implies refused by the
    check of every cell (the corners' estimate is never above the grid's own)."""
    calls = []
    real = map_mod.check_runs

    def check_runs(scs, runs, force, what):
        calls.append(what)
        return real(scs, runs, force, what)

    with monkeypatch.context() as m:
        m.setitem(_limits.BUDGET, "steps", budget)
        m.setattr(map_mod, "check_runs", check_runs)
        m.setattr(map_mod, "map_unordered", lambda *a, **kw: (_ for _ in ()).throw(_WouldRun()))
        try:
            code, err = _map(capsys, "--x-range", "1h", "10h", str(nx), "--y", "job.steps", "--y-range", "1000",
                             "200000", str(ny))
        except _WouldRun:
            code, err = "would run", ""
    if calls and "cheapest corner" in calls[0]:
        # the corner refused: the grid's own check (run here without the precheck) refuses too
        cells = len(calls)
        assert code == 2 and cells == 1
        with monkeypatch.context() as m:
            m.setitem(_limits.BUDGET, "steps", budget)
            m.setattr(map_mod, "estimate", lambda *a, **kw: type("E", (), {"over": lambda self: []})())
            m.setattr(map_mod, "map_unordered", lambda *a, **kw: (_ for _ in ()).throw(_WouldRun()))
            try:
                code2, _ = _map(capsys, "--x-range", "1h", "10h", str(nx), "--y", "job.steps", "--y-range", "1000",
                                "200000", str(ny))
            except _WouldRun:
                code2 = "would run"
        assert code2 == 2


# -- item 6: a remedy's pause and the wall limit ---------------------------------------------------

from spare_core.sim import make_policy, simulate  # noqa: E402
from spare_core.sim.recovery import Repairs  # noqa: E402
from spare_core.sim.remedies import remedy_plan, with_pause  # noqa: E402
from spare_core.sim.results import TIME_PARTS  # noqa: E402
from spare_core.stragglers.steptime import MeasuredStragglers  # noqa: E402


def _straggling(swap, horizon, mtbf=1e12):
    return Scenario(4, n_steps=500, t_compute=1.8, t_allreduce=0.2, system_mtbf=mtbf, jitter=0.0, gpus_per_group=8,
                    checkpoint_time=5.0, max_wall_factor=horizon, failure_model="system",
                    repair=Repairs(swap=swap, spares=2, time=0.0, gpus_per_node=8),
                    step_time_model=MeasuredStragglers(slowdown=1.3, evict_slowdown=1.05, worker=5))


def _partition(run):
    parts = math.fsum(getattr(run, k) for k, _ in TIME_PARTS)
    return parts + run.availability * run.wall_time


@settings(max_examples=40, deadline=None)
@given(swap=st.floats(1.0, 5000.0), horizon=st.floats(1.01, 3.0), mtbf=st.sampled_from([1e12, 600.0, 150.0]),
       seed=st.integers(0, 3))
def test_property_a_pause_never_takes_a_run_past_its_wall_limit_and_the_parts_still_partition_it(swap, horizon,
                                                                                                   mtbf, seed):
    """with_pause added the pause to a run simulated up to the whole limit: a run cut at the
    limit ended at limit + pause, and a finished one past the limit stayed finished."""
    sc = _straggling(swap, horizon, mtbf)
    plan = remedy_plan(sc, "evict")
    limit = sc.max_wall_factor * sc.t0
    assert plan.wall_limit == limit
    run = with_pause(simulate(plan.scenario, make_policy("ckpt", 1), seed=seed), plan)
    assert run.wall_time <= limit * (1 + 1e-12)
    assert math.isclose(_partition(run), run.wall_time, rel_tol=1e-9, abs_tol=1e-9)
    assert run.pause_time >= min(swap, limit) * (1 - 1e-12)
    if run.finished:
        assert run.time_to_train == run.wall_time <= limit * (1 + 1e-12)
    # independently: the run finishes only if the pause and the failure-free remedied work fit
    if swap + 1.05 * sc.t0 > limit * (1 + 1e-9):
        assert not run.finished


def test_a_pause_longer_than_the_limit_is_the_whole_run():
    sc = _straggling(swap=10 * 3600.0, horizon=1.5)
    plan = remedy_plan(sc, "evict")
    run = with_pause(simulate(plan.scenario, make_policy("ckpt", 1), seed=0), plan)
    limit = 1.5 * sc.t0
    assert not run.finished and run.wall_time == limit and run.pause_time == limit
