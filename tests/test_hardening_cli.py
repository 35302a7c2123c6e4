"""Regressions of issue 16 in the ``spare`` command line: every numeric option refuses
overflow, NaN, inf and negative values at parsing, with exit status 2 and one line (the
whole grid of options x bad values is fuzzed in tests/fuzz/test_fuzz_sim.py)."""
from pathlib import Path

import pytest

from spare_core.cli import main
from spare_core.commands import MAX_COUNT, MAX_PROCESSES, MAX_SEED
from spare_core.scenario_file import MAX_SEEDS

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "llama3_16k.toml"


def _run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    return code, [ln for ln in err.splitlines() if ln.strip()]


def test_pacing_iterations_beyond_int64_exit_2_at_parsing(capsys):
    code, lines = _run(capsys, ["pacing", "--nodes", "4", "--iterations", "99999999999999999999"])
    assert code == 2 and len(lines) == 1
    assert f"argument --iterations: must be <= {MAX_COUNT}, got 99999999999999999999" in lines[0]


@pytest.mark.parametrize("argv, says", [
    (["compare", "--seeds", str(MAX_SEEDS + 1)], f"--seeds: must be <= {MAX_SEEDS}"),
    (["compare", "--r-max", "99999999999999999999"], f"--r-max: must be <= {MAX_COUNT}"),
    (["compare", "--groups", "9" * 5000], f"--groups: must be <= {MAX_COUNT}, got 999"),
    (["compare", "--processes", str(MAX_PROCESSES + 1)], f"--processes: must be <= {MAX_PROCESSES}"),
    (["compare", "--processes", "nan"], "--processes: must be an integer, got 'nan'"),
    (["compare", "--horizon", "nan"], "--horizon: must be a finite number, got 'nan'"),
    (["compare", "--horizon", "1e400"], "--horizon: must be a finite number, got '1e400'"),
    (["demo", "--seed", str(MAX_SEED + 1)], f"--seed: must be <= {MAX_SEED}"),
    (["pacing", "--seed", "-1"], "--seed: must be >= 0, got -1"),
    (["pacing", "--oversubscription", "inf"], "--oversubscription: must be a finite number"),
    (["pacing", "--background-duty", "nan"], "--background-duty: must be a finite number"),
    (["sweep", "s.toml", "--store", "d", "--task-seconds=-inf"], "--task-seconds: must be a finite number"),
    (["sweep", "s.toml", "--store", "d", "--workers", "99999"], f"--workers: must be <= {MAX_PROCESSES}"),
])
def test_numeric_options_refuse_overflow_nan_inf_and_negatives_in_one_line(capsys, argv, says):
    code, lines = _run(capsys, argv)
    assert code == 2 and len(lines) == 1, lines
    assert says in lines[0] and len(lines[0]) < 200, lines[0]


def test_file_r_max_far_above_the_group_count_builds_no_huge_range():
    from spare_core.scenario_file import load_scenario_file
    # the largest r_max the one range allows (that of --r-max): still no range of 2**31 numbers
    sf = load_scenario_file(EXAMPLE, [f"compare.r_max={2**31 - 1}"])
    assert max(sf.redundancies) <= sf.scenario.n_groups


def test_file_seeds_above_the_limit_are_refused():
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    with pytest.raises(ScenarioFileError, match=f"compare.seeds must be an integer >= 1 and <= {MAX_SEEDS}"):
        load_scenario_file(EXAMPLE, [f"compare.seeds={10**12}"])
