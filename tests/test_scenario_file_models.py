"""The recipe of docs/architecture.md, "A failure model", carried on to a scenario file: a model
written in its own module, with ``file_keys`` and ``from_file``, is named in ``[failures]`` with
its own keys and runs with ``spare run``, without an edit to scenario_file or the simulator."""
import importlib
import textwrap

import pytest

from spare_core.cli import main
from spare_core.events import FailureModel
from spare_core.scenario_file import ScenarioFileError, load_scenario_file

# the user's module: nothing in it but the public surface of spare_core.events
USER_MODULE = '''
import dataclasses

from spare_core.events import FailureModel, FileFailures


class Clockwork:
    """Group i of an epoch fails at epoch start + (i + 1) * every."""

    def __init__(self, n_units, every, start):
        self.n_units, self.every, self.epoch = n_units, every, 0
        self.epoch_start = self.now = start
        self.n_alive = n_units
        self._next = 0

    def restart(self, time):
        self.epoch += 1
        self.epoch_start = self.now = time
        self.n_alive, self._next = self.n_units, 0

    def take(self, k, with_units=True):
        units = list(range(self._next, min(self.n_units, self._next + k)))
        times = [self.epoch_start + (u + 1) * self.every for u in units]
        self._next += len(units)
        self.n_alive -= len(units)
        if times:
            self.now = times[-1]
        return times, units

    def take_units(self):
        return []


@dataclasses.dataclass(frozen=True)
class Clock(FailureModel, kind="test-clockwork"):
    every: float = 3600.0

    file_keys = ("every",)  # what it reads from [failures]

    @classmethod
    def from_file(cls, reader, table, cluster):
        every = reader.duration("failures.every", table.get("every", 3600.0))
        return FileFailures(model=cls(every=every), note=f"one group every {every:g} s")

    def mtbf(self, n_groups):
        return self.every

    def process(self, n_groups, seed, *, start=0.0):
        return Clockwork(n_groups, self.every, start)

    def describe(self, n_groups):
        return f"test-clockwork: a group every {self.every:g} s"
'''

TINY = """
[cluster]
gpus = 32
gpus_per_node = 4
gpus_per_group = 8

[job]
step_time = "1 s"
steps = 200

[failures]
model = "test-clockwork"
every = "1 min"

[costs]
restart = "10 s"
checkpoint_save = "1 s"

[compare]
seeds = 1
r_max = 2
processes = 1
"""


@pytest.fixture(scope="module")
def user_model(tmp_path_factory):
    where = tmp_path_factory.mktemp("user_model")
    (where / "spare_user_clockwork.py").write_text(textwrap.dedent(USER_MODULE))
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(where))
        return importlib.import_module("spare_user_clockwork").Clock


def _file(tmp_path, text=TINY):
    f = tmp_path / "clock.toml"
    f.write_text(text)
    return f


def test_a_model_added_in_its_own_module_is_named_in_a_file_with_its_own_keys_and_runs(user_model, tmp_path, capsys):
    sf = load_scenario_file(_file(tmp_path))
    assert sf.scenario.failures == user_model(every=60.0)
    assert sf.rate_note == "one group every 60 s" and sf.failure_rate is None
    assert FailureModel.by_kind("test-clockwork") is user_model
    assert main(["run", str(_file(tmp_path)), "--processes", "1"]) == 0
    out = capsys.readouterr().out
    assert "test-clockwork: a group every 60 s" in out and "one group every 60 s" in out


def test_the_models_keys_are_its_own(user_model, tmp_path):
    # its key is checked by its own reader call, naming the file and the key
    with pytest.raises(ScenarioFileError, match=r"clock.toml: failures.every must be a duration > 0 .*got 'soon'"):
        load_scenario_file(_file(tmp_path), ["failures.every=soon"])
    # a rate model's key does not go with it, nor its key with a rate model
    with pytest.raises(ScenarioFileError, match="failures.mtbf only goes with model = 'per-unit', 'system' or 'node'"):
        load_scenario_file(_file(tmp_path), ["failures.mtbf='2 h'"])
    with pytest.raises(ScenarioFileError, match="failures.every only goes with model = 'test-clockwork', got 60"):
        load_scenario_file(_file(tmp_path), ["failures.model=node", "failures.every=60"])
    # a key no model reads is still unknown
    with pytest.raises(ScenarioFileError, match=r"key 'failures.evry' is unknown \(allowed in \[failures\]: \[.*'every'\]"):
        load_scenario_file(_file(tmp_path), ["failures.evry=60"])


def test_a_model_without_from_file_cannot_be_named_in_a_file(tmp_path):
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Silent(FailureModel, kind="test-no-file"):
        def mtbf(self, n_groups):
            return 1.0

    assert not Silent.reads_files()
    with pytest.raises(ScenarioFileError, match=r"failures.model must be one of \['per-unit', 'system', 'node', "
                                                 r"'trace'.*\], got 'test-no-file'"):
        load_scenario_file(_file(tmp_path), ["failures.model='test-no-file'"])


def test_failure_domains_come_on_top_of_a_user_model(user_model, tmp_path):
    from spare_core.events import DomainFailures

    text = TINY.replace('every = "1 min"', 'every = "1 min"\n\n[[failures.domains]]\nname = "rack"\nnodes = 4\n'
                                            'mtbf = "30 d"')
    sf = load_scenario_file(_file(tmp_path, text))
    assert isinstance(sf.scenario.failures, DomainFailures) and sf.scenario.failures.base == user_model(every=60.0)
    assert sf.rate_note.startswith("one group every 60 s; plus 2 rack domains of 4 nodes")


def test_the_reader_counts_years_as_the_rates_do():
    # spare_core._files is infrastructure and cannot import the rates: the Julian year is written twice
    from spare_core._files import YEAR, parse_duration
    from spare_core.events.rates import SECONDS

    assert YEAR == SECONDS["year"] and parse_duration("2 y") == 2 * SECONDS["year"]


def test_an_installed_package_adds_a_failure_model_through_the_entry_point(tmp_path):
    """A package with a ``spare_core.failure_models`` entry point: ``spare run`` on a file naming
    its kind works in a fresh process that never imported the module (what ``pip install`` gives)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    site = tmp_path / "site"
    info = site / "spare_clock_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "spare_clock_plugin.py").write_text(textwrap.dedent(USER_MODULE))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: spare-clock-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[spare_core.failure_models]\ntest-clockwork = spare_clock_plugin:Clock\n"
                                           "broken = spare_clock_plugin:Nothing\n")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(root / "src")]))
    proc = subprocess.run([sys.executable, "-m", "spare_core", "run", str(_file(tmp_path))], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "test-clockwork: a group every 60 s" in proc.stdout
    assert "failure model plugin 'broken'" in proc.stderr  # skipped with a warning, never a crash
