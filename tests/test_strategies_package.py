"""spare_core.strategies: one package per strategy, the one registry door, declared parameters.

- the old module paths (spare_core.layout, .rectlr, .analytic, .domain_endurance,
  spare_core.sim.policies, spare_core.sim.elastic) re-export the same objects with one
  DeprecationWarning naming the importing line;
- the built-ins enter through the same loader as installed entry points (and a built-in that
  fails to load is an error, a plugin that fails a warning);
- every declared parameter reads values in units, refuses values outside its kind and range
  with a message naming the key, and the same value reaches the policy from make_policy, a
  ``[policy.NAME]`` table, the policy's shorthand table and ``--set``;
- a strategy's name appears in its own package only.
"""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spare_core
import spare_core.strategies as strategies
from spare_core import _limits
from spare_core._params import KINDS, Param, read_options
from spare_core._registry import Registry
from spare_core.scenario_file import ScenarioFileError, parse_scenario
from spare_core.strategies import POLICY_NAMES, POLICY_REGISTRY, make_policy, registered_policy

OLD = {"spare_core.layout": "spare_core.strategies.spare.layout",
       "spare_core.rectlr": "spare_core.strategies.spare.rectlr",
       "spare_core.analytic": "spare_core.strategies.spare.analytic",
       "spare_core.domain_endurance": "spare_core.strategies.spare.domain_endurance",
       "spare_core.sim.policies": "spare_core.strategies",
       "spare_core.sim.elastic": "spare_core.strategies.elastic"}


@pytest.mark.parametrize("old", list(OLD))
def test_old_paths_warn_once_and_give_the_same_objects(tmp_path, old):
    new = OLD[old]
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent(f"""\
        import json, warnings
        warnings.simplefilter("always")
        import {old} as old
        import {new} as new
        same = all(getattr(old, n) is getattr(new, n) for n in old.__all__)
        print(json.dumps({{"same": same, "n": len(old.__all__)}}))
        """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["same"] and got["n"] > 0
    warned = [ln for ln in out.stderr.splitlines() if "DeprecationWarning" in ln]
    assert len(warned) == 1 and f"{script}:3" in warned[0], out.stderr


def test_builtins_are_entry_points_through_the_one_loader():
    eps = POLICY_REGISTRY.builtin_entry_points()
    assert [ep.name for ep in eps] == list(POLICY_NAMES)
    for ep in eps:
        assert ep.group == "spare_core.policies"
        entry = ep.load()  # what the loader admits: the package's own declaration
        assert isinstance(entry, strategies.RegisteredPolicy)
        assert registered_policy(ep.name).label == entry.label
        assert registered_policy(ep.name).params == entry.params
        # the entry is declared in the strategy's own package
        assert ep.value.startswith("spare_core.strategies.") and ep.value.split(":")[0].count(".") == 2


def test_failure_models_share_the_registry_class():
    from spare_core.events.models import FAILURE_MODELS

    assert isinstance(FAILURE_MODELS, Registry) and isinstance(POLICY_REGISTRY, Registry)
    assert {ep.name for ep in FAILURE_MODELS.builtin_entry_points()} <= set(FAILURE_MODELS)
    for ep in FAILURE_MODELS.builtin_entry_points():
        assert ep.load() is FAILURE_MODELS[ep.name] and ep.load().kind == ep.name


def test_a_builtin_that_fails_is_an_error_a_plugin_a_warning(monkeypatch):
    from importlib.metadata import EntryPoint

    seen = []

    def admit(reg, name, obj):
        seen.append(name)
        reg.add(name, obj)

    reg = Registry("thing", "spare_core.no_such_group", {"ok": "math:pi", "bad": "math:no_such"}, admit)
    with pytest.raises(AttributeError):
        reg.load()
    reg2 = Registry("thing", "spare_core.test_group", {"ok": "math:pi"}, admit)
    fake = [EntryPoint("broken", "math:no_such", "spare_core.test_group"),
            EntryPoint("fine", "math:e", "spare_core.test_group")]
    monkeypatch.setattr("spare_core._registry.entry_points", lambda group: fake if group == reg2.group else [])
    with pytest.warns(UserWarning, match="thing plugin 'broken'"):
        assert list(reg2) == ["ok", "fine"]
    assert reg2["fine"] == math.e


# -- declared parameters ---------------------------------------------------------------------------
def _declared():
    for name in POLICY_NAMES:
        for p in registered_policy(name).params:
            yield name, p


def test_every_builtin_option_is_declared():
    for name in POLICY_NAMES:
        entry = registered_policy(name)
        assert entry.options == tuple(p.name for p in entry.params)
        assert "interval" in entry.options
        for p in entry.params:
            assert p.kind in _limits.RANGES or p.kind in KINDS
            assert p.doc


@pytest.mark.parametrize("name,param", [(n, p) for n, p in _declared() if p.kind in ("duration0", "interval")],
                         ids=lambda x: getattr(x, "name", x))
def test_durations_take_units_everywhere(name, param):
    """``"2 min"`` is 120 s from make_policy, a [policy.NAME] table and --set alike."""
    r = 2 if registered_policy(name).uses_redundancy else None
    direct = getattr(make_policy(name, r, **{param.name: "2 min"}), param.name)
    assert direct == 120.0
    base = {"cluster": {"gpus": 64, "gpus_per_group": 8}, "job": {"step_time": 1, "steps": 10},
            "failures": {"mtbf": "2 h"}, "compare": {"policies": [name], "redundancies": [2]}}
    sf = parse_scenario({**base, "policy": {name: {param.name: "2 min"}}})
    built = sf.policy_kwargs()[name][param.name]
    assert built == 120.0
    with pytest.raises(ValueError, match=re.escape(f"policy.{name}.{param.name}")):
        make_policy(name, r, **{param.name: "soon"})


def test_a_shorthand_table_is_read_by_its_declarations():
    base = {"cluster": {"gpus": 64, "gpus_per_group": 8}, "job": {"step_time": 1, "steps": 10},
            "failures": {"mtbf": "2 h"}, "compare": {"policies": ["elastic"]}}
    sf = parse_scenario({**base, "elastic": {"reconfigure": "2 min", "microbatches": 4.0}})
    assert sf.policy_options["elastic"] == {"reconfigure": 120.0, "microbatches": 4}
    with pytest.raises(ScenarioFileError, match=r"elastic\.microbatches must be an integer"):
        parse_scenario({**base, "elastic": {"microbatches": 2.5}})
    with pytest.raises(ScenarioFileError, match=r"elastic\.batch must be one of \['keep', 'shrink'\]"):
        parse_scenario({**base, "elastic": {"batch": "grow"}})
    with pytest.raises(ScenarioFileError, match=r"is given in \[elastic\] and in \[policy\.elastic\]"):
        parse_scenario({**base, "elastic": {"batch": "keep"}, "policy": {"elastic": {"batch": "shrink"}}})


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.floats(allow_nan=True), st.integers(-10**13, 10**13), st.text(max_size=12), st.booleans(),
                 st.none()))
def test_a_value_is_read_or_refused_with_its_key(value):
    for kind in ("duration0", "count", "shape"):
        p = Param("x", kind)
        try:
            got = p.read(value, "policy.t.x")
        except ValueError as exc:
            assert str(exc).startswith("policy.t.x must be")
            continue
        rng = _limits.RANGES[kind]
        assert rng.contains(got) and not isinstance(got, bool)
        assert isinstance(got, int) if rng.kind == "int" else isinstance(got, float)


def test_read_options_names_an_unknown_option():
    with pytest.raises(ValueError, match=r"policy\.t has no option 'y' \(its options: \['x'\]\)"):
        read_options([Param("x", "count")], {"y": 1}, "policy.t")


# -- one room per strategy -----------------------------------------------------------------------
LABELS = {"CheckpointOnly": "checkpoint_only", "ReplicationCheckpoint": "replication",
          "SpareCheckpoint": "spare", "ElasticDP": "elastic", "Rectlr": "spare", "StackedLayout": "spare"}


def test_a_strategy_class_is_named_in_its_own_package_only():
    """The simulator, the files, the sweeps and the commands reach a strategy through the
    registry and the protocol: none of them names a built-in strategy's class."""
    root = Path(spare_core.__file__).parent
    outside = [p for p in root.rglob("*.py") if "strategies" not in p.parts
               and p.name not in ("layout.py", "rectlr.py", "analytic.py", "domain_endurance.py")
               and not (p.parent.name == "sim" and p.name in ("policies.py", "elastic.py"))]
    bad = []
    for path in outside:
        code = "\n".join(ln for ln in path.read_text().splitlines()
                         if not ln.lstrip().startswith((">>>", "...", "#")))
        for cls in LABELS:
            for m in re.finditer(rf"(?<![\w`~.]){cls}\(", code):
                bad.append(f"{path.relative_to(root)}: {cls}( at {m.start()}")
    # the reference simulator (an independent oracle of the run loop) is the one exception
    bad = [b for b in bad if not b.startswith("sim/_reference.py")]
    assert not bad, "\n".join(bad)


# -- the kernels, grouped as the packages they serve ----------------------------------------------
EXT = Path(__file__).resolve().parents[1] / "src" / "_ext"
GROUPS = {"graph": {"_hk", "_transversal", "_bmatch", "_mcf", "_netsimplex"},
          "events": {"_calendar", "_trace_scan", "_placement"}, "sim": {"_timeline"}, "pacing": {"_pacing_core"},
          "strategies/spare": {"_rectlr_core"}, "strategies/replication": {"_rep_wipe"},
          "stragglers": {"_whatif_replay"}}


def test_the_kernels_sit_with_the_packages_they_serve():
    where = {p.stem: str(p.parent.relative_to(EXT)) for p in EXT.rglob("*.pyx")}
    for group, names in GROUPS.items():
        for name in names:
            assert where.get(name) == group, (name, where.get(name))
    # the rest is shared (type checks) at the top; every kernel has its stub
    assert {n for n, g in where.items() if g == "."} == {"_types_check"}
    stubs = Path(spare_core.__file__).parent / "_ext"
    assert {p.stem for p in stubs.glob("*.pyi")} == set(where)


def test_a_pxd_is_there_because_a_kernel_cimports_it():
    sources = {p: p.read_text() for p in list(EXT.rglob("*.pyx")) + list(EXT.rglob("*.pxd"))}
    for pxd in EXT.rglob("*.pxd"):
        users = [p for p, text in sources.items() if p != pxd and re.search(rf"^from {pxd.stem} cimport", text, re.M)]
        assert users, f"{pxd.relative_to(EXT)} is cimported by no kernel"
