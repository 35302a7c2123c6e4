"""The recipes of docs/architecture.md §6, followed as a user would, each run through every
command that reads a scenario file: ``spare run``, ``spare advise``, ``spare map`` and
``spare sweep``.

- a policy with an option in units (``swap = "2 min"`` in its ``[policy.NAME]`` table), declared
  with :class:`spare_core.strategies.Param` and registered with ``register_policy``;
- a failure model with its own file keys (the recipe's ``Clock``, with no ``scaled()`` of its
  own: ``spare advise``'s failure-rate sensitivity compresses its time axis).
"""
from __future__ import annotations

import importlib
import json
import textwrap

import pytest

from spare_core.strategies import POLICY_REGISTRY, registered_policy

POLICY_MODULE = '''
from spare_core.strategies import INTERVAL, FailureHandler, Outcomes, Param, Policy, register_policy
import numpy as np


class _Swapping(FailureHandler):
    """Every failure is masked: the failed node is swapped while the step waits."""

    needs_groups = False

    def on_failures(self, groups):
        n = groups.shape[0]
        return Outcomes(np.zeros(n, dtype=np.int8), np.ones(n), np.zeros(n))

    def restart(self):
        pass


class HotSwap(Policy):
    """Every failure costs the step a node swap of ``swap`` seconds; never a restart."""

    name = "HotSwap"

    def __init__(self, swap=60.0, interval="auto"):
        super().__init__(interval)
        self.swap = float(swap)

    def failure_seconds(self, scenario):
        return self.swap

    def handler(self, scenario):
        return _Swapping()


register_policy("hotswap", lambda r, **o: HotSwap(**o), label=HotSwap.name, uses_redundancy=False,
                params=[Param("swap", "duration0", 60.0, "seconds a failure holds the step"), INTERVAL])
'''

def _file_text(failures: str, policies: str, extra: str = "") -> str:
    """The recipe test's tiny job (tests/test_scenario_file_models.py) with other failures,
    policies and tables."""
    from tests.test_scenario_file_models import TINY

    text = TINY.replace('model = "test-clockwork"\nevery = "1 min"', failures)
    return text.replace("seeds = 1", f"policies = {policies}\nseeds = 2") + extra + "\n"


@pytest.fixture(scope="module")
def user_code(tmp_path_factory):
    from tests.test_scenario_file_models import USER_MODULE

    where = tmp_path_factory.mktemp("user_code")
    (where / "spare_user_hotswap.py").write_text(textwrap.dedent(POLICY_MODULE))
    # the recipe's model under another kind and key, so that the recipe's own tests see theirs alone
    clock = textwrap.dedent(USER_MODULE).replace("test-clockwork", "test-clock2").replace('("every",)', '("tick",)')
    clock = clock.replace('"failures.every", table.get("every"', '"failures.tick", table.get("tick"')
    assert '("tick",)' in clock and "failures.tick" in clock
    (where / "spare_user_clock.py").write_text(clock)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(where))
        importlib.import_module("spare_user_hotswap")
        importlib.import_module("spare_user_clock")
    yield
    del POLICY_REGISTRY["hotswap"]


def _every_command(spare_here, tmp_path, path, sweep_policies):
    """run, advise, map and sweep on ``path``; their JSON documents."""
    docs = {}
    for cmd in ("run", "advise"):
        out = tmp_path / f"{cmd}.json"
        p = spare_here(cmd, path, "--json", out)
        assert p.returncode == 0, (cmd, p.stderr)
        docs[cmd] = json.loads(out.read_text())
    out = tmp_path / "map.json"
    p = spare_here("map", path, "--x", "costs.restart", "--x-values", "'10 s'", "'1 min'", "--y", "job.steps",
                   "--y-values", "100", "--seeds", "2", "--processes", "1", "--json", out)
    assert p.returncode == 0, ("map", p.stderr)
    docs["map"] = json.loads(out.read_text())
    spec = tmp_path / "spec.toml"
    spec.write_text(f'name = "recipe"\nseeds = 2\npolicies = {json.dumps(sweep_policies)}\nredundancies = [1, 2]\n'
                    f'[[scenarios]]\nfile = "{path.name}"\n')
    p = spare_here("sweep", spec, "--store", tmp_path / "store")
    assert p.returncode == 0, ("sweep", p.stderr)
    docs["sweep"] = p.stdout
    return docs


def test_a_policy_with_an_option_in_units_runs_through_every_command(user_code, spare_here, tmp_path):
    entry = registered_policy("hotswap")
    assert entry.build(None, swap="2 min").swap == 120.0
    path = tmp_path / "swap.toml"
    path.write_text(_file_text('model = "system"\nmtbf = "2 min"', '["ckpt", "hotswap"]',
                               '[policy.hotswap]\nswap = "2 min"'))
    docs = _every_command(spare_here, tmp_path, path, ["ckpt", "hotswap"])
    # the option reached the policy in seconds: each failure holds the step 120 s
    runs = [r for r in docs["run"]["runs"] if r["policy"] == "HotSwap"]
    assert runs and sum(r["failures_seen"] for r in runs) > 0
    for r in runs:
        assert r["restarts"] == 0 and r["failures_masked"] == r["failures_seen"]
        assert r["time_to_train"] >= r["t0"] + 120.0 * r["failures_seen"]
    assert docs["run"]["provenance"]["scenario"]["policy_options"]["hotswap"] == {"swap": 120.0}
    assert "hotswap" in [s["name"] for s in docs["map"]["strategies"]]
    assert "HotSwap" in docs["sweep"]
    # a value the declaration refuses is one line naming the key, before any run
    bad = tmp_path / "bad.toml"
    bad.write_text(path.read_text().replace('swap = "2 min"', 'swap = "soon"'))
    p = spare_here("run", bad)
    assert p.returncode == 2 and "policy.hotswap.swap must be a duration" in p.stderr


def test_a_failure_model_of_the_recipe_runs_through_every_command(user_code, spare_here, tmp_path):
    path = tmp_path / "clock.toml"
    path.write_text(_file_text('model = "test-clock2"\ntick = "1 min"', '["ckpt", "rep"]'))
    docs = _every_command(spare_here, tmp_path, path, ["ckpt", "rep"])
    assert docs["run"]["runs"] and docs["advise"]["advice"] is not None
    # advise's failure-rate sensitivity ran on the model's compressed time axis
    grids = {r.get("grid") for r in docs["advise"]["runs"]}
    assert {"failure rate x0.5", "failure rate x1.5"} <= grids
    assert docs["map"]["cells"]


def test_the_compressed_time_axis_is_the_same_failures_sooner(user_code):
    from spare_core.events import FailureModel

    clock = FailureModel.by_kind("test-clock2")(every=60.0)
    fast = clock.scaled(3.0)
    assert fast.mtbf(4) == pytest.approx(20.0)
    a, b = clock.process(4, 0), fast.process(4, 0)
    ta, ua = a.take(4)
    tb, ub = b.take(4)
    assert list(ub) == list(ua) and list(tb) == pytest.approx([t / 3.0 for t in ta])
    assert FailureModel.from_dict(fast.to_dict()) == fast
