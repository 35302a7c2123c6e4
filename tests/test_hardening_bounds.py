"""Issue 23, item 1: bounded work decided up front, and the value-range tracebacks.

One range per quantity for file, --set, flag and spec alike (spare_core._limits); values the
reader used to accept but the model refused are one-line errors naming the key; a study beyond
the work budget is refused before any run (--force goes on); the wall limit stops a run
whatever its failure model; renewal bursts are drawn in blocks. Each test fails on the code
before this change.
"""
from __future__ import annotations

import numpy as np
import pytest

from spare_core import _limits
from spare_core.cli import main
from spare_core.distributions import Weibull
from spare_core.events.nodes import NodeFailureLog
from spare_core.scenario_file import ScenarioFileError, load_scenario_file
from spare_core.sim import Scenario, make_policy, simulate

BASE = """
[cluster]
gpus = 512
gpus_per_node = 8
gpus_per_group = 64
[job]
step_time = "2 s"
steps = 200
[failures]
node_mtbf = "30 d"
[compare]
seeds = 1
r_max = 2
policies = ["ckpt"]
processes = 1
"""


@pytest.fixture
def base(tmp_path):
    p = tmp_path / "base.toml"
    p.write_text(BASE)
    return p


def _cli(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses a flag's value
        code = exc.code
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    return code, err


# -- one range, one place --------------------------------------------------------------------
def test_set_job_steps_beyond_the_flags_cap_is_refused_like_the_flag(base, capsys):
    code, err = _cli(capsys, ["run", str(base), "--set", "job.steps=1000000000000"])
    assert code == 2 and len(err) == 1, err
    assert "job.steps must be an integer >= 1 and <= 2147483647, got 1000000000000" in err[0]
    code, err = _cli(capsys, ["run", str(base), "--steps", "1000000000000"])
    assert code == 2 and "must be <= 2147483647" in err[0]


def test_set_compare_processes_beyond_1024_is_refused_before_forking(base, capsys):
    code, err = _cli(capsys, ["run", str(base), "--set", "compare.processes=1e9"])
    assert code == 2 and len(err) == 1, err
    assert "compare.processes must be an integer >= 0 and <= 1024, got 1000000000" in err[0]


def test_the_reader_the_flags_and_specs_read_one_table():
    from spare_core.commands import MAX_COUNT, MAX_PROCESSES, MAX_SEED
    from spare_core.scenario_file import MAX_SEEDS
    from spare_core.sim import study
    assert (MAX_COUNT, MAX_SEED, MAX_PROCESSES) == (_limits.MAX_COUNT, _limits.MAX_SEED, _limits.MAX_PROCESSES)
    assert MAX_SEEDS == study.MAX_SEEDS == _limits.MAX_SEEDS
    assert _limits.range_of("job.steps") is _limits.range_of("--steps") is _limits.range_of("scenario.n_steps")
    assert _limits.range_of("compare.processes") is _limits.range_of("--processes")


@pytest.mark.parametrize("override, key", [
    ("failures.per_gpu_year=5e-324", "failures.per_gpu_year"),       # was OverflowError
    ("failures.mtbf=1e308", "failures.mtbf"),                         # was "weibull mean must be finite"
    ("failures.node_mtbf=1e308", "failures.node_mtbf"),
    ("failures.per_node_day=1e-300", "failures.per_node_day"),
    ("failures.weibull_shape=0.0059", "failures.weibull_shape"),      # accepted by the reader, refused by the model
    ("failures.weibull_shape=0.02", "failures.weibull_shape"),        # a run > 60 s (renewal bursts of ~2e9)
    ("job.step_time=5e-324", "job.step_time"),                        # was "T0 = 0 s, TTT/T0 1.000"
    ("costs.restart=1e308", "costs.restart"),
])
def test_values_the_model_refused_are_one_line_errors_naming_the_key(base, capsys, override, key):
    with pytest.raises(ScenarioFileError, match=f"{key} must be"):
        load_scenario_file(base, [override])
    code, err = _cli(capsys, ["run", str(base), "--set", override])
    assert code == 2 and len(err) == 1 and key in err[0], err


def test_a_domain_mtbf_of_1e308_names_its_key(tmp_path):
    p = tmp_path / "d.toml"
    p.write_text(BASE + '\n[[failures.domains]]\nname = "rack"\nnodes = 16\nmtbf = 1e308\n')
    with pytest.raises(ScenarioFileError, match=r"failures.domains\[0\].mtbf must be a duration"):
        load_scenario_file(p)


def test_a_sweep_seed_beyond_int64_is_refused_before_any_run(tmp_path):
    from spare_core.sweeps import load_spec
    p = tmp_path / "spec.toml"
    p.write_text(f"seeds = [0, {2**64 - 1}]\npolicies = [\"ckpt\"]\nredundancies = [1]\n"
                 "[scenario]\npreset = \"paper_600k\"\nn_groups = 6\nn_steps = 20\n")
    with pytest.raises(ValueError, match=f"seed must be an integer >= 0 and <= {2**63 - 1}, got {2**64 - 1}"):
        load_spec(p)


def test_a_sweep_specs_scenario_keys_meet_the_files_ranges(tmp_path):
    from spare_core.sweeps import load_spec
    p = tmp_path / "spec.toml"
    p.write_text("seeds = 1\npolicies = [\"ckpt\"]\nredundancies = [1]\n"
                 "[scenario]\npreset = \"paper_600k\"\nn_groups = 6\nn_steps = 20\nweibull_shape = 0.0059\n")
    with pytest.raises(ValueError, match="weibull_shape must be a finite number >= 0.05"):
        load_spec(p)


# -- the budget ------------------------------------------------------------------------------
def test_work_beyond_the_budget_is_refused_with_the_estimate_and_force_goes_on(base, capsys):
    code, err = _cli(capsys, ["run", str(base), "--set", 'failures.mtbf="1 ms"'])
    assert code == 2 and len(err) == 1, err
    assert "expected work is beyond the budget" in err[0] and "failures per run" in err[0]
    assert "--force" in err[0]
    from spare_core.commands.budget import check_budget
    from spare_core.commands.filejob import file_study
    sf = load_scenario_file(base, ['failures.mtbf="1 ms"'])
    est = check_budget(file_study(sf), True, "x")  # --force: no error, the same estimate
    assert est.failures_per_run > _limits.BUDGET["failures_per_run"]


def test_advise_checks_its_sensitivity_grids_before_any_run(base, capsys):
    # x1.5 the rate is beyond the budget, x1 is not: refused before the first grid runs
    code, err = _cli(capsys, ["advise", str(base), "--set", 'failures.mtbf="5 ms"'])
    assert code == 2 and "at failure rate x1.5" in err[0], err


def test_the_examples_and_the_compare_preset_are_within_the_budget():
    from pathlib import Path

    from spare_core.commands.budget import check_budget
    from spare_core.commands.filejob import file_study
    from spare_core.sim import Study
    for f in sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml")):
        check_budget(file_study(load_scenario_file(f)), False, str(f))
    study = Study([Scenario.paper_600k(n) for n in (200, 600, 1000)], ("ckpt", "rep", "spare"), range(1, 21),
                  seeds=5, streams="seed")
    check_budget(study, False, "compare")


# -- the wall limit stops a run whatever its failure model -------------------------------------
class _Recording:
    """An EpochSource that records the epoch starts it is asked for."""

    def __init__(self, inner):
        self.inner = inner
        self.starts = []

    def get(self, k, need, want=0, *, start):
        self.starts.append(start)
        return self.inner.get(k, need, want, start=start)

    def times(self, k, need, want=0, *, start):
        self.starts.append(start)
        return self.inner.times(k, need, want, start=start)

    def next_time(self, k, i, *, start):
        self.starts.append(start)
        return self.inner.next_time(k, i, start=start)


def test_a_restart_ending_past_the_wall_limit_ends_the_run_without_drawing_that_epoch():
    sc = Scenario(8, n_steps=200, t_compute=2.0, t_allreduce=0.0, system_mtbf=60.0, failure_model="node",
                  gpus_per_group=64, restart_time=1e11)
    src = _Recording(sc.epoch_failures(0))
    res = simulate(sc, make_policy("ckpt"), seed=0, failures=src)
    wall = sc.max_wall_factor * sc.t0
    assert not res.finished and res.restarts == 1
    assert max(src.starts) <= wall  # was asked for the epoch starting at 1e11 s (a node log drawn up to it)
    again = simulate(sc, make_policy("ckpt"), seed=0)
    assert (again.wall_time, again.restarts, again.failures_seen) == (res.wall_time, res.restarts, res.failures_seen)


# -- the node log: bursts in blocks, empty chunks skipped --------------------------------------
class _PerPass(NodeFailureLog):
    """The log drawn one pass at a time (a subclass's draw_lifetimes is asked per pass)."""

    def draw_lifetimes(self, nodes):
        return self.law.sample(self._rng, nodes.shape[0])


@pytest.mark.parametrize("shape, initial", [(0.05, "new"), (0.05, "stationary"), (0.3, "new"), (0.78, "stationary")])
def test_bursts_drawn_in_blocks_give_the_same_log_bit_for_bit_in_fewer_draws(shape, initial):
    law = Weibull.from_mean(64e3, shape)
    calls = []

    class Counting(Weibull):
        def sample(self, rng, size):
            calls.append(size)
            return law.sample(rng, size)

    counted = Counting(shape, law.scale)
    for seed in range(3):
        calls.clear()
        a = NodeFailureLog(counted, 8, 2, seed, initial=initial, chunk_seconds=4096 * 64e3 / 16)
        b = _PerPass(law, 8, 2, seed, initial=initial, chunk_seconds=4096 * 64e3 / 16)
        a.extend()
        b.extend()
        assert a.times == b.times and a.groups == b.groups and np.array_equal(a._next, b._next)
        if shape == 0.05 and initial == "new":
            # one pass per failure before: about as many calls as the longest burst (thousands)
            assert len(calls) < 400, len(calls)


def test_a_next_failure_far_ahead_skips_the_empty_chunks_at_once():
    log = NodeFailureLog(Weibull.from_mean(100.0, 1.0), 1, 1, 0, chunk_seconds=10.0)
    log._next[:] = 1e30
    log.extend()  # was one chunk of 10 s per call: 1e29 calls to reach the failure
    assert 1e30 - 20.0 * 1e30 * 1e-15 < log.horizon <= 1e30 and log.times == []
    log.extend()  # lifetimes of ~100 s vanish in rounding at 1e30 s: the times move on by one float
    from spare_core.events.nodes import _STUCK_PASSES
    assert 1 <= len(log.times) <= 2 * _STUCK_PASSES and set(log.times) == {1e30}
