"""A file loaded many times (``spare map``'s cells, ``spare advise``'s variants, a sweep's grid)
reads its log once and fits its law once per distinct input: the memo of spare_core.events.files
is keyed by content, so a changed log or other fit options are read and fitted again, and a
load from the memo is the same scenario as a fresh one."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import spare_core.events.files as files
import spare_core.events.trace as trace_mod
from spare_core.cli import main
from spare_core.scenario_file import load_scenario_file

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """The trace example copied to ``tmp_path`` (a replay of its log with a Weibull law fitted to
    its gaps past the log's end, ``after = "fit"``), the memos empty, and counters of the log
    reads and fits."""
    for name in ("trace_job.toml", "trace_job_failures.csv", "trace_job_hosts.txt"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    monkeypatch.setattr(files, "_READ", {})
    monkeypatch.setattr(files, "_FITS", {})
    calls = {"read": 0, "fit": 0}
    read, fit_one = files.read_trace, files._fit_one

    def counting_read(*a, **k):
        calls["read"] += 1
        return read(*a, **k)

    def counting_fit(*a, **k):
        calls["fit"] += 1
        return fit_one(*a, **k)

    monkeypatch.setattr(files, "read_trace", counting_read)
    monkeypatch.setattr(files, "_fit_one", counting_fit)
    return tmp_path, calls


FIT: list[str] = []


def test_a_log_is_read_and_fitted_once_per_distinct_input(counted):
    where, calls = counted
    path = where / "trace_job.toml"
    first = load_scenario_file(path, FIT)
    assert calls == {"read": 1, "fit": 1}
    again = [load_scenario_file(path, FIT + [f"costs.restart={r}"]) for r in (60, 120, 600)]
    assert calls == {"read": 1, "fit": 1}  # other costs: the same log, the same fit
    assert all(sf.scenario.failures == first.scenario.failures for sf in again)
    assert all(sf.fit is first.fit for sf in again)
    load_scenario_file(path, FIT + ["failures.fit_law='exponential'"])
    assert calls == {"read": 1, "fit": 2}  # another law: fitted
    # the log changed on disk: read and fitted again
    log = where / "trace_job_failures.csv"
    log.write_text(log.read_text() + log.read_text().splitlines()[-1].replace("2024", "2024") + "\n")
    changed = load_scenario_file(path, FIT)
    assert calls["read"] == 2 and calls["fit"] == 3
    assert changed.trace_read["sha256"] != first.trace_read["sha256"]


def test_a_memo_hit_is_the_fresh_result(counted, monkeypatch):
    where, calls = counted
    path = where / "trace_job.toml"
    memo = load_scenario_file(path, FIT)
    load_scenario_file(path, FIT)
    monkeypatch.setattr(files, "_READ", {})
    monkeypatch.setattr(files, "_FITS", {})
    fresh = load_scenario_file(path, FIT)
    assert fresh.scenario.failures == memo.scenario.failures
    assert fresh.rate_note == memo.rate_note and fresh.to_dict() == memo.to_dict()


def test_a_map_over_costs_fits_once(counted, capsys):
    where, calls = counted
    path = where / "trace_job.toml"
    code = main(["map", str(path), "--x",
                 "costs.restart", "--x-values", "'1 min'", "'10 min'", "--y", "costs.checkpoint_save", "--y-values",
                 "'30 s'", "'2 min'", "--steps", "200", "--seeds", "2", "--processes", "1"])
    assert code == 0, capsys.readouterr().err
    assert calls == {"read": 1, "fit": 1}


def test_the_memo_is_bounded():
    memo = {}
    for i in range(files.MEMO_ENTRIES + 5):
        files._remember(memo, i, i)
    assert list(memo) == list(range(5, files.MEMO_ENTRIES + 5))
    assert trace_mod.Trace  # the memo holds Trace objects, immutable (tests/test_trace_read.py)


def test_flags_reach_the_file_as_values_and_one_study_serves_budget_and_run(counted, monkeypatch, capsys):
    """``spare run FILE --steps N --seeds K``: the flags are values (no ``KEY=VALUE`` text is
    parsed as TOML besides ``--set``'s), and the one Study is what the budget checks and what runs."""
    import spare_core._files as _files
    import spare_core.commands.filejob as filejob

    where, _ = counted
    texts, studies = [], []
    loads = _files.tomllib.loads

    def spy_loads(text, *a, **k):
        texts.append(text)
        return loads(text, *a, **k)

    monkeypatch.setattr(_files.tomllib, "loads", spy_loads)
    real_study = filejob.Study

    def counting_study(*a, **k):
        studies.append(real_study(*a, **k))
        return studies[-1]

    monkeypatch.setattr(filejob, "Study", counting_study)
    checked, ran = [], []
    real_check, real_run = filejob.check_budget, filejob.run_study
    monkeypatch.setattr(filejob, "check_budget", lambda st, *a, **k: (checked.append(st), real_check(st, *a, **k))[1])
    monkeypatch.setattr(filejob, "run_study", lambda st, *a, **k: (ran.append(st), real_run(st, *a, **k))[1])
    code = main(["run", str(where / "trace_job.toml"), "--steps", "300", "--seeds", "2", "--r-max", "2",
                 "--processes", "1", "--set", "costs.restart='5 min'"])
    assert code == 0, capsys.readouterr().err
    assert [t for t in texts if t.startswith("v = ")] == ["v = '5 min'"]  # --set's text only
    assert len(studies) == 1 and checked == studies and ran == studies
    assert studies[0].scenarios[0].n_steps == 300 and list(studies[0].seeds) == [0, 1]
