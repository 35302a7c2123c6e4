"""``spare fit FILE.toml`` (docs/cli.md, "spare fit") and a log's fit in the job's work budget.

The command's outputs are the library function's rows (:func:`spare_core.commands.fit.fit_table`),
every format carries every declared column, bad input is one line and exit status 2 with nothing
written, and the same seed gives the same rows. The budget: a fit's measured cost grows with the
log's rows and replicates, and a job whose runs fit the budget but not its runs plus its fit is
refused with both in the line.
"""
from __future__ import annotations

import csv
import json
import math
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from spare_core.cli import main
from spare_core.commands.fit import FIT_COLUMNS, LAWS, FitRow, fit_table, read_log

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "trace_job.toml"
DOCS = ROOT / "docs" / "cli.md"

JOB = """
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
{failures}
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
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    cap = capsys.readouterr()
    return code, cap.out, [ln for ln in cap.err.splitlines() if ln.strip()]


def _log(d: Path, rows: int, nodes: int = 64, days: float = 400.0, seed: int = 0, name: str = "log.csv") -> Path:
    """A constant-rate log of ``rows`` failures on ``nodes`` integer-numbered nodes."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, days * 86400.0, rows))
    u = rng.integers(0, nodes, rows)
    p = d / name
    p.write_text("time,node\n" + "".join(f"{a:.1f},{b}\n" for a, b in zip(t, u)))
    return p


def _file(d: Path, failures: str, name: str = "job.toml") -> Path:
    f = d / name
    f.write_text(JOB.format(failures=failures))
    return f


def _trace_table(log: str = "log.csv", extra: str = "") -> str:
    return (f'[failures.trace]\npath = "{log}"\ntime_column = "time"\nunit_column = "node"\n'
            f'time_format = "seconds"\nend = 34560000.0\nn_units = 64\n{extra}')


def _fit_job(d: Path, rows: int, fit_law: str = "exponential") -> Path:
    _log(d, rows)
    return _file(d, f'model = "node"\nlaw = "fit"\nfit_law = "{fit_law}"\nfit_check = "count"\n' + _trace_table())


# -- the outputs are the library's rows ---------------------------------------------------------

LAWS3 = ["weibull-new", "lognormal", "frailty-periods"]


def _csv_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("#")]
    r = csv.DictReader(lines)
    return list(r.fieldnames or []), list(r)


def _cell(v) -> str:
    """A value as the CSV writes it: NaN / inf empty, the rest as str()."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    return str(v)


def test_every_output_is_the_library_functions_rows_with_every_column(tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    j, c, q = tmp_path / "f.json", tmp_path / "f.csv", tmp_path / "f.parquet"
    code, out, err = _cli(capsys, ["fit", EXAMPLE, "--laws", *LAWS3, "--replicates", "30", "--seed", "4",
                                   "--merge", "none", "1h", "--json", j, "--csv", c, "--parquet", q])
    assert code == 0, err
    trace = read_log(str(EXAMPLE))[0]
    want = fit_table(trace, LAWS3, replicates=30, seed=4, merges=[None, 3600.0])
    assert len(want.rows) == 6
    # JSON: every column of the declaration, the library's values (NaN -> null with its reason)
    doc = json.loads(j.read_text())
    assert [col["name"] for col in doc["columns"]] == list(FIT_COLUMNS)
    assert [list(r) for r in doc["rows"]] == [list(FIT_COLUMNS) + (["null_reasons"] if "null_reasons" in r else [])
                                              for r in doc["rows"]]
    for got, row in zip(doc["rows"], want.rows):
        for k in FIT_COLUMNS:
            v = getattr(row, k)
            if isinstance(v, float) and not math.isfinite(v):
                assert got[k] is None and k in got["null_reasons"], (k, got)
            else:
                assert got[k] == v, (k, got[k], v)
    assert doc["provenance"]["seeds"] == [4] and doc["provenance"]["scenario"]["log"]["rows"] == trace.n_events
    # CSV: the same columns, the same values as text
    header, rows = _csv_rows(c)
    assert header == list(FIT_COLUMNS)
    assert rows == [{k: _cell(getattr(r, k)) for k in FIT_COLUMNS} for r in want.rows]
    # Parquet: the same columns and values (null for NaN), the provenance in the metadata
    t = pq.read_table(q)
    assert t.schema.names == list(FIT_COLUMNS)
    assert t.to_pylist() == [{k: (None if isinstance(getattr(r, k), float) and not math.isfinite(getattr(r, k))
                                  else getattr(r, k)) for k in FIT_COLUMNS} for r in want.rows]
    assert json.loads(t.schema.metadata[b"spare_core"])["command"] == "spare fit"
    # the text: one table per merge window, each law's row with the library's numbers
    assert out.count("| **the log** |") == 2 and "repeated reports merged within 1 h" in out
    for r in want.rows:
        assert f"| {r.description} | " in out and f"{r.simulated_median:,.0f} ({r.simulated_low:,}-{r.simulated_high:,})" in out


def test_the_rows_are_check_fit_on_the_fits():
    from spare_core.events.fit import fit, fit_node_rates
    from spare_core.events.fit_check import check_fit
    from spare_core.events.rates import calendar_periods

    trace = read_log(str(EXAMPLE))[0]
    t = fit_table(trace, ["weibull-new-new", "frailty"], replicates=40, seed=2)
    per = calendar_periods(trace.end, "auto", start=trace.start)
    c1 = check_fit(fit(trace, "weibull"), trace, initial="new", periods=per, replicates=40, seed=2)
    c2 = check_fit(fit_node_rates(trace), trace, initial="stationary", periods=per, replicates=40, seed=2)
    for row, c in zip(t.rows, (c1, c2)):
        assert (row.simulated_median, (row.simulated_low, row.simulated_high), row.reproduced, row.periods_p) == \
            (c.median, c.interval, c.ok, c.periods_p)
        assert row.log_failures == trace.n_events == c.count and row.log_failing_nodes == c.failing_nodes
    assert t.rows[0].shape == fit(trace, "weibull").params["shape"] and math.isnan(t.rows[0].frailty)


def test_the_same_seed_gives_the_same_rows_and_another_seed_others(tmp_path, capsys):
    outs = []
    for seed in ("7", "7", "8"):
        p = tmp_path / f"s{len(outs)}.csv"
        code, _, err = _cli(capsys, ["fit", EXAMPLE, "--seed", seed, "--replicates", "20", "--csv", p])
        assert code == 0, err
        outs.append(_csv_rows(p)[1])
    assert outs[0] == outs[1]
    assert outs[0] != outs[2]
    assert {r["seed"] for r in outs[2]} == {"8"}


def test_the_file_keys_are_the_defaults_and_flags_win(tmp_path, capsys):
    _log(tmp_path, 300)
    f = _file(tmp_path, 'model = "node"\nfit_merge = "1 d"\nfit_periods = "quarter"\n' + _trace_table())
    j = tmp_path / "a.json"
    code, _, err = _cli(capsys, ["fit", f, "--laws", "exponential", "--replicates", "20", "--json", j])
    assert code == 0, err
    row = json.loads(j.read_text())["rows"][0]
    # a log of seconds: quarters of the nominal length from time 0 (400 days: four and a part)
    assert row["merge"] == "1 d" and row["periods"].startswith("days 0-91.31/") and row["periods"].count("/") == 4
    code, _, err = _cli(capsys, ["fit", f, "--laws", "exponential", "--replicates", "20", "--merge", "none",
                                 "--periods", "year", "--json", j])
    assert code == 0, err
    row = json.loads(j.read_text())["rows"][0]
    assert row["merge"] == "none" and row["merged_reports"] == 0 and row["periods"].count("/") == 1


# -- bad input: one line, status 2, nothing written ----------------------------------------------

def _bad_cases(d: Path) -> list[tuple[list, str]]:
    _log(d, 200)
    no_trace = _file(d, 'model = "system"\nmtbf = "2 h"', "no_trace.toml")
    missing_log = _file(d, 'model = "node"\n' + _trace_table("nope.csv"), "missing_log.toml")
    (d / "bad.csv").write_text("time,node\n1.0,0\nabc,1\n")
    bad_log = _file(d, 'model = "node"\n' + _trace_table("bad.csv"), "bad_log.toml")
    (d / "hosts.csv").write_text("time,node\n10.0,hostA\n20.0,hostB\n")
    hosts = _file(d, 'model = "node"\n[failures.trace]\npath = "hosts.csv"\ntime_column = "time"\n'
                  'unit_column = "node"\ntime_format = "seconds"\nend = 100.0\n', "hosts.toml")
    (d / "empty.csv").write_text("time,node\n")
    empty = _file(d, 'model = "node"\n[failures.trace]\npath = "empty.csv"\ntime_column = "time"\n'
                  'unit_column = "node"\ntime_format = "seconds"\nend = 100.0\nn_units = 4\n', "empty.toml")
    good = _file(d, 'model = "node"\n' + _trace_table(), "good.toml")
    (d / "broken.toml").write_text("[failures\n")
    return [
        (["fit", d / "none.toml"], "cannot read scenario file"),
        (["fit", d / "broken.toml"], "not valid TOML"),
        (["fit", no_trace], "needs a failure log: a [failures.trace] table"),
        (["fit", missing_log], "failures.trace must name a readable file"),
        (["fit", bad_log], "line 3"),
        (["fit", hosts], "needs the size of the fleet"),
        (["fit", empty], "no failure rows"),
        (["fit", good, "--laws", "gamma"], "invalid choice: 'gamma'"),
        (["fit", good, "--laws", "weibull", "weibull"], "--laws values must be distinct"),
        (["fit", good, "--merge", "soon"], "must be 'none' or a duration"),
        (["fit", good, "--merge", "-1"], "must be 'none' or a duration > 0"),
        (["fit", good, "--merge", "1h", "1h"], "--merge values must be distinct"),
        (["fit", good, "--periods", "fortnight"], "--periods must be one of"),
        (["fit", good, "--periods", "1"], "into more than 100,000 periods"),
        (["fit", good, "--periods", "10 min", "--replicates", "100000", "--force"], "bytes of counts"),
        (["fit", good, "--replicates", "5"], "must be >= 20"),
        (["fit", good, "--replicates", "1000000"], "must be <= 100000"),
        (["fit", good, "--seed", "-1"], "--seed"),
        (["fit", good, "--json", d / "nodir" / "x.json"], "does not exist"),
        (["fit", good, "--json", good], "--json"),
    ]


def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, capsys):
    for argv, words in _bad_cases(tmp_path):
        out = tmp_path / "out.json"
        extra = [] if "--json" in argv else ["--json", out]
        before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
        code, stdout, err = _cli(capsys, [*argv, *extra])
        assert code == 2, (argv, err)
        assert len(err) == 1 and words in err[0] and err[0].startswith("spare fit"), (argv, err)
        assert "Traceback" not in stdout and not out.exists(), argv
        # no input replaced, nothing new written
        assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before, argv


# -- the work budget: spare fit, and a job's fit -------------------------------------------------

def test_spare_fit_is_refused_beyond_the_budget_before_anything_is_fitted(tmp_path, capsys, monkeypatch):
    from spare_core import _limits
    from spare_core.commands import budget, fit as fit_module

    _log(tmp_path, 400)
    f = _file(tmp_path, 'model = "node"\n' + _trace_table())
    trace = read_log(str(f))[0]
    work = budget.fit_cost(trace.n_events, trace.n_units, 2, 50)
    assert work == pytest.approx(2 * (400 + 64) * (6.0 + 0.015 * 50))
    calls = []
    monkeypatch.setattr(fit_module, "fit_table", lambda *a, **k: calls.append(a) or pytest.fail("fitted"))
    monkeypatch.setitem(_limits.BUDGET, "failures", work * 0.99)
    j = tmp_path / "f.json"
    code, _, err = _cli(capsys, ["fit", f, "--laws", "weibull", "frailty", "--replicates", "50", "--json", j])
    assert code == 2 and len(err) == 1 and "beyond the budget" in err[0] and "--force" in err[0], err
    assert f"{work:.3g}" in err[0] and not j.exists() and calls == []
    monkeypatch.undo()
    monkeypatch.setitem(_limits.BUDGET, "failures", work * 0.99)
    code, _, err = _cli(capsys, ["fit", f, "--laws", "weibull", "frailty", "--replicates", "50", "--force",
                                 "--json", j])
    assert code == 0 and j.exists(), err
    monkeypatch.setitem(_limits.BUDGET, "failures", work * 1.01)  # just within: runs without --force
    code, _, err = _cli(capsys, ["fit", f, "--laws", "weibull", "frailty", "--replicates", "50"])
    assert code == 0, err


def test_the_fit_cost_grows_with_rows_and_replicates():
    from spare_core.commands.budget import fit_cost
    assert fit_cost(10_000, 64, 1, 200) > fit_cost(1_000, 64, 1, 200) > fit_cost(100, 64, 1, 200)
    assert fit_cost(1_000, 64, 1, 2_000) > fit_cost(1_000, 64, 1, 200)
    assert fit_cost(1_000, 64, 4, 200) == pytest.approx(4 * fit_cost(1_000, 64, 1, 200))


def test_a_jobs_fit_is_counted_in_its_estimate_and_grows_with_the_logs_rows(tmp_path):
    from spare_core.commands.budget import file_fit_cost, fit_cost
    from spare_core.commands.filejob import file_study
    from spare_core.commands.budget import check_budget
    from spare_core.events.fit import NODE_LAWS
    from spare_core.scenario_file import load_scenario_file

    sizes, costs = (200, 800, 3200), []
    for n in sizes:
        d = tmp_path / f"r{n}"
        d.mkdir()
        sf = load_scenario_file(_fit_job(d, n))
        costs.append(file_fit_cost(sf))
        assert costs[-1] == pytest.approx(fit_cost(sf.trace.n_events, 64, 1, 200))
        est = check_budget(file_study(sf), False, sf.path, costs[-1])
        assert est.fit_failures == costs[-1] and est.failures >= costs[-1]
    assert costs[0] < costs[1] < costs[2]
    # fit_law = "best" fits (and re-checks) every law the node model takes
    d = tmp_path / "best"
    d.mkdir()
    best = load_scenario_file(_fit_job(d, 800, "best"))
    assert file_fit_cost(best) == pytest.approx(len(NODE_LAWS) * costs[1])
    # a file without a fit costs nothing more
    plain = load_scenario_file(_file(tmp_path, 'model = "system"\nmtbf = "2 h"', "plain.toml"))
    assert file_fit_cost(plain) == 0.0


def test_a_job_within_the_budget_but_not_with_its_fit_is_refused_with_both_in_the_line(tmp_path, capsys,
                                                                                        monkeypatch):
    from spare_core import _limits
    from spare_core.commands.budget import estimate, file_fit_cost
    from spare_core.commands.filejob import file_study
    from spare_core.scenario_file import load_scenario_file

    f = _fit_job(tmp_path, 3000)
    sf = load_scenario_file(f)
    study = file_study(sf)
    counts = [0]
    for g in study.groups():
        counts[g.scenario_index] += len(g.runs)
    runs_only = estimate(study.scenarios, counts).failures
    fit = file_fit_cost(sf)
    assert fit > 0
    # a budget between the runs alone and the runs with the fit: refused for the fit, and only with it
    monkeypatch.setitem(_limits.BUDGET, "failures", runs_only + fit / 2)
    j = tmp_path / "run.json"
    code, _, err = _cli(capsys, ["run", f, "--processes", "1", "--json", j])
    assert code == 2 and len(err) == 1, err
    assert "failures over all runs" in err[0] and "of them the log's fit and its re-check" in err[0], err
    assert f"{fit:.3g}" in err[0] and not j.exists()
    code, _, err = _cli(capsys, ["run", f, "--processes", "1", "--force"])
    assert code == 0, err
    monkeypatch.setitem(_limits.BUDGET, "failures", runs_only + fit * 2)
    code, _, err = _cli(capsys, ["run", f, "--processes", "1"])
    assert code == 0, err


# -- the docs -------------------------------------------------------------------------------------

def test_the_docs_column_table_is_the_declaration():
    from spare_core._results import columns
    text = DOCS.read_text()
    block = text.split("<!-- fit columns: from FitRow's declaration -->", 1)[1].split("<!-- end fit columns -->")[0]
    got = [tuple(x.strip().strip("`") for x in ln.strip("|").split("|")) for ln in block.splitlines()
           if ln.startswith("| `")]
    want = [(c.name, c.unit or "-", c.doc) for c in columns(FitRow)]
    assert got == want, "docs/cli.md's fit columns; its rows are:\n" + "\n".join(
        f"| `{n}` | {u} | {d} |" for n, u, d in want)


def test_the_docs_laws_table_is_the_commands_laws():
    text = DOCS.read_text().split("### spare fit", 1)[1].split("### spare demo", 1)[0]
    named = re.findall(r"^\| `([a-z-]+)`(?:, `([a-z-]+)`)?(?:, `([a-z-]+)`)? \|", text, flags=re.M)
    keys = [k for row in named for k in row if k and not k.startswith("-")]
    assert set(keys) & set(LAWS) == set(LAWS)


def test_the_documented_examples_run(tmp_path, capsys, monkeypatch):
    text = DOCS.read_text().split("### spare fit", 1)[1].split("### spare demo", 1)[0]
    block = text.split("```", 2)[1]
    examples = [ln for ln in block.splitlines() if ln.startswith("spare fit ")]
    assert len(examples) >= 2
    monkeypatch.chdir(tmp_path)  # outputs the examples name land here
    for ln in examples:
        argv = [str(EXAMPLE) if a == "examples/trace_job.toml" else a for a in shlex.split(ln)[1:]]
        code, out, err = _cli(capsys, argv)
        assert code == 0, (ln, err)
        assert "| **the log** |" in out
    assert (tmp_path / "fits.csv").exists()


def test_the_bench_script_is_the_commands_table(tmp_path, capsys):
    from bench.fleet_fit_table import main as bench_main

    log = _log(tmp_path, 300, days=800.0)
    bench_main(["--log", str(log), "--time-column", "time", "--unit-column", "node", "--n-units", "64",
                "--end", str(800 * 86400.0), "--replicates", "20"])
    out = capsys.readouterr().out
    from spare_core.commands.fit import table_lines
    from spare_core.events.trace import read_trace
    tr = read_trace(log, time_column="time", unit_column="node", n_units=64, end=800 * 86400.0)
    want = table_lines(fit_table(tr, replicates=20, periods="year"))
    strip = re.compile(r"\| [0-9.]+ \|$")  # the seconds column differs run to run
    assert [strip.sub("|", ln) for ln in want] == [strip.sub("|", ln) for ln in out.splitlines() if ln.startswith("|")]


def test_a_law_the_scenario_file_refuses_is_shown_not_refused(tmp_path, capsys):
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file

    # the rate rises tenfold over the log's second half: one constant rate misses the periods
    rng = np.random.default_rng(1)
    t = np.sort(np.concatenate((rng.uniform(0, 200 * 86400.0, 130), rng.uniform(200 * 86400.0, 400 * 86400.0, 1300))))
    (tmp_path / "log.csv").write_text("time,node\n" + "".join(f"{a:.1f},{b}\n" for a, b in
                                                            zip(t, rng.integers(0, 64, t.size))))
    f = _file(tmp_path, 'model = "node"\nlaw = "fit"\nfit_law = "exponential"\nfit_periods = "quarter"\n'
              + _trace_table())
    with pytest.raises(ScenarioFileError, match="not their course"):
        load_scenario_file(f)
    j = tmp_path / "f.json"
    code, out, err = _cli(capsys, ["fit", f, "--laws", "exponential", "exponential-periods", "--replicates", "40",
                                   "--json", j])
    assert code == 0, err
    rows = json.loads(j.read_text())["rows"]
    assert rows[0]["periods_p"] < 0.05 < rows[1]["periods_p"]  # the constant rate misses the course, per period not


def test_an_output_naming_the_log_is_refused_and_the_log_kept(tmp_path, capsys):
    log = _log(tmp_path, 200)
    f = _file(tmp_path, 'model = "node"\n' + _trace_table())
    before = log.read_bytes()
    for flag in ("--json", "--csv"):
        code, _, err = _cli(capsys, ["fit", f, "--laws", "exponential", "--replicates", "20", flag, log])
        assert code == 2 and len(err) == 1 and "an output never replaces an input" in err[0], err
    assert log.read_bytes() == before


def test_json_to_stdout_is_the_document_alone(tmp_path, capsys):
    code, out, err = _cli(capsys, ["fit", EXAMPLE, "--laws", "exponential", "--replicates", "20", "--json", "-"])
    assert code == 0, err
    doc = json.loads(out)
    assert [list(r)[:len(FIT_COLUMNS)] for r in doc["rows"]] == [list(FIT_COLUMNS)]


def test_titans_release_read_by_a_scenario_file_gives_the_bench_scripts_table(tmp_path, capsys):
    """docs/cli.md's titan.toml on a file of gc_full.csv's format: the same rows as the bench
    script's own reader (bench.fleet_fit_table.titan_log)."""
    import datetime as dt

    from bench.fleet_fit_table import TITAN_NODES, titan_log

    rng = np.random.default_rng(3)
    t0 = dt.datetime(2014, 1, 23, 6)
    lines = ["SN,location,insert,remove,duration,out,event"]
    for i in range(600):  # not in time order; a third of the rows are GPUs pulled without a failure
        loc = f"c{rng.integers(0, 25)}-{rng.integers(0, 8)}c{rng.integers(0, 3)}s{rng.integers(0, 8)}n{rng.integers(0, 4)}"
        t = t0 + dt.timedelta(seconds=float(rng.uniform(0, 3.2 * 365.25 * 86400)))
        lines.append(f"{i},{loc},2014-01-01 00:00:00,{t:%Y-%m-%d %H:%M:%S},1,TRUE,{['', 'DBE', 'OTB'][i % 3]}")
    (tmp_path / "gc_full.csv").write_text("\n".join(lines) + "\n")
    text = DOCS.read_text().split("### spare fit", 1)[1].split("```toml", 1)[1].split("```", 1)[0]
    (tmp_path / "titan.toml").write_text(text)
    j = tmp_path / "t.json"
    code, out, err = _cli(capsys, ["fit", tmp_path / "titan.toml", "--periods", "year", "--replicates", "20",
                                   "--merge", "none", "1h", "--json", j])
    assert code == 0, err
    tr = titan_log(tmp_path / "gc_full.csv")
    assert tr.n_units == TITAN_NODES and tr.n_events == 400
    want = fit_table(tr, replicates=20, periods="year", merges=[None, 3600.0])
    rows = json.loads(j.read_text())["rows"]
    assert len(rows) == len(want.rows) == 20
    # the two readers number the nodes differently (by first appearance, by sorted name): a fit's
    # optimiser sums in another order, so its floats agree to rounding, the rest exactly
    for got, row in zip(rows, want.rows):
        for k in FIT_COLUMNS:
            v = getattr(row, k)
            if isinstance(v, float) and math.isfinite(v):
                assert got[k] == pytest.approx(v, rel=1e-5), (k, got[k], v)
            else:
                assert got[k] == (None if isinstance(v, float) else v), (k, got[k], v)


# -- the placements table: each row is spare run with a key (docs/cli.md, "spare fit") -------------

REPLAY = """
name = "replay"
[cluster]
gpus = 192
gpus_per_node = 1
gpus_per_group = 8
[job]
step_time = "10 s"
allreduce_time = "1 s"
steps = 86400
[failures]
model = "trace"
after = "loop"
[failures.trace]
path = "gc_full.csv"
time_column = "remove"
unit_column = "location"
where = {{event = ["DBE", "OTB"]}}
sort = true
start = 2016-01-01T00:00:00Z
end = 2017-01-01T00:00:00Z
{pattern}
[costs]
restart = "20 min"
checkpoint_save = "60 s"
[compare]
policies = ["ckpt", "spare"]
redundancies = [2]
seeds = 3
"""


def test_every_row_of_the_placements_table_is_spare_run_with_a_key(tmp_path, capsys):
    """bench/trace_log_table.py's rows, each a scenario file's keys on spare run: the hosts by first
    appearance, placement = "spread", host_pattern, windows, rack-aware stacks."""
    import datetime as dt

    from tests.trace_logs import CRAY_PATTERN, cray_events, cray_host

    times, pos = cray_events(3000, seed=3, shape=(2, 1, 3, 8, 4), years=(1,), lemons=0.05,
                             start=dt.datetime(2016, 1, 1, tzinfo=dt.timezone.utc))
    with open(tmp_path / "gc_full.csv", "w") as f:
        f.write("SN,location,insert,remove,duration,out,event\n")
        for i, (t, p) in enumerate(zip(times.tolist(), pos.tolist())):
            when = dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
            f.write(f"{i},{cray_host(*p)},2013-12-01 00:00:00,{when},1,FALSE,{('DBE', 'OTB', '')[i % 3]}\n")
    named = tmp_path / "named.toml"
    named.write_text(REPLAY.format(pattern=""))
    racks = tmp_path / "racks.toml"
    racks.write_text(REPLAY.format(pattern=f"host_pattern = '{CRAY_PATTERN}'"))
    rows = [(named, []), (named, ["--set", "failures.placement='spread'"]), (racks, []),
            (racks, ["--set", "failures.windows=3"]),
            (racks, ["--set", "failures.windows=3", "--set", "policy.spare.layout='rack-aware'"])]
    models, spare = [], []
    for i, (f, sets) in enumerate(rows):
        j = tmp_path / f"r{i}.json"
        code, out, err = _cli(capsys, ["run", f, "--processes", "1", *sets, "--json", j])
        assert code == 0, (sets, err)
        runs = json.loads(j.read_text())["runs"]
        assert {r["policy"] for r in runs} == {"CKPT-only", "SPARe+CKPT"} and len(runs) == 6
        models.append(runs[0]["failure_model"])
        spare.append(tuple((r["failures_seen"], r["wipeouts"], r["ratio"]) for r in runs if r["policy"] != "CKPT-only"))
    assert "spread over the job's nodes" in models[1] and "spread" not in models[0]
    # each key changes the replay SPARe meets: five different tables' rows
    assert len(set(spare)) == 5, spare
