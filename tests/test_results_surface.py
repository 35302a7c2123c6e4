"""One result surface: every public result type exports ``to_dict()`` with JSON values only.

Each type is built from a small real call; its dict must survive ``json.dumps(...,
allow_nan=False)`` and give back the scalar fields (non-finite floats as None) and arrays as
lists. The rewritten exports (runs, sweep summaries, pacing statistics) are checked against the
dict code they replaced, so ``spare compare --json`` and ``spare pacing --json`` keep their bytes.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import math
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

import spare_core
from spare_core._results import fields_dict, to_jsonable
from spare_core.checkpoint import availability_optimal
from spare_core.distributions import Exponential
from spare_core.events import Engine, simulate_renewals
from spare_core.events.fit import compare, fit
from spare_core.events.trace import Trace
from spare_core.graph.flow import check_flow_certificate, min_cost_flow
from spare_core.strategies.spare.layout import StackedLayout
from spare_core.graph.matching import hopcroft_karp
from spare_core.pacing import PacingScenario
from spare_core.pacing.simulate import simulate_iterations
from spare_core.pacing.sweep import node_sweep
from spare_core.strategies.spare.rectlr import DecisionArrays, Rectlr
from spare_core.sim import Scenario, make_policy, simulate, sweep
from spare_core.sim.optimum import optimal_interval, optimal_redundancy
from spare_core.sim.results import MEAN_COLUMNS

# the retired event engine (spare_core.events._engine) is tested until it is removed
pytestmark = pytest.mark.filterwarnings("ignore:spare_core.events.* is retired:DeprecationWarning")

ROOT = Path(spare_core.__file__).resolve().parent


def _small():
    return Scenario(8, n_steps=50, t_compute=10.0, t_allreduce=1.0, system_mtbf=200.0, restart_time=30.0,
                    checkpoint_time=5.0, max_wall_factor=200.0, name="small")


def _flow():
    # 0 -> 1 -> 3 and 0 -> 2 -> 3, two units from 0 to 3
    args = (4, np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3]), np.array([1, 1, 1, 1]), np.array([1, 2, 1, 1]))
    return args, min_cost_flow(*args, np.array([2, 0, 0, -2]))


def _engine_run():
    eng = Engine(5, seed=3)
    eng.add_renewals(Exponential(10.0), Exponential(1.0))
    event = eng.run(50.0, stop_on=("failure",))
    return event, eng.stats


def _decision():
    return Rectlr(StackedLayout(8, 3)).fail(2)


def _pacing():
    return simulate_iterations(PacingScenario(n_nodes=4), 12, seed=1)


def _node_sweep():
    return node_sweep((2, 4), n_iterations=10, replicas=1, seed=0)


def _durations():
    return np.random.default_rng(0).weibull(1.5, 40) * 100.0


def _node_log():
    from spare_core.events.fit_check import simulate_log

    return simulate_log(Exponential(50.0), 30, 200.0, seed=1, frailty=1.0)


def _node_rate_fit():
    from spare_core.events.fit import fit_node_rates

    return fit_node_rates(_node_log(), periods=50.0)


def _fit_check():
    from spare_core.events.fit_check import check_fit

    return check_fit(_node_rate_fit(), _node_log(), replicates=20)


def _fit_row():
    from spare_core.commands.fit import fit_table

    # a Weibull row: its sigma and frailty are NaN (None in the dict), the rest numbers and text
    return fit_table(_node_log(), ["weibull"], replicates=20).rows[0]


# every public result type and a small real call that makes one
MAKERS = {
    "spare_core.graph.matching.Matching": lambda: hopcroft_karp(sp.csr_array(np.array([[1, 1], [1, 0], [1, 0]]))),
    "spare_core.graph.flow.FlowResult": lambda: _flow()[1],
    "spare_core.graph.flow.CertificateCheck": lambda: check_flow_certificate(*_flow()[0], _flow()[1],
                                                                       supply=np.array([2, 0, 0, -2])),
    "spare_core.strategies.spare.rectlr.Decision": _decision,
    "spare_core.strategies.spare.rectlr.PatchPlan": lambda: _decision().patch,
    "spare_core.strategies.spare.rectlr.DecisionArrays": lambda: DecisionArrays.from_decisions([_decision()]),
    "spare_core.events._engine.Event": lambda: _engine_run()[0],
    "spare_core.events._engine.EngineStats": lambda: _engine_run()[1],
    "spare_core.events._engine.RenewalCounts": lambda: simulate_renewals(20, Exponential(5.0), Exponential(1.0),
                                                                        100.0, seed=2),
    "spare_core.events.fit.LifetimeFit": lambda: fit(_durations(), "weibull"),
    "spare_core.events.fit.Comparison": lambda: compare(_durations()),
    "spare_core.events.fit.NodeRateFit": _node_rate_fit,
    "spare_core.events.fit_check.FitCheck": _fit_check,
    "spare_core.commands.fit.FitRow": _fit_row,
    "spare_core.events.trace.DomainSummary": lambda: Trace(
        [1.0, 1.0, 2.0, 5.0], [0, 1, 5, 5], n_units=8, numbering="host_pattern",
        levels=(("rack", ("a", "b")), ("node", ("0", "1", "2", "3")))).domain_summary("rack"),
    "spare_core.checkpoint.CheckpointPeriod": lambda: availability_optimal(30.0, 60.0, 3600.0),
    "spare_core.strategies.protocol.IntervalChoice": lambda: make_policy("spare", 2).checkpoint_interval(_small()),
    "spare_core.sim.run.RunResult": lambda: simulate(_small(), make_policy("spare", 2), seed=0,
                                                     timeline=True),
    "spare_core.sim.run.Timeline": lambda: simulate(_small(), make_policy("spare", 2), seed=0,
                                                    timeline=True).timeline,
    "spare_core.sim.results.Summary": lambda: sweep(_small(), ("spare",), (2,), (0, 1)).summaries[0],
    "spare_core.sim.results.SweepResult": lambda: sweep(_small(), ("spare",), (2,), (0,)),
    "spare_core.sim.results.ResultSet": lambda: sweep(_small(), ("ckpt", "spare"), (1, 2), (0, 1)),
    "spare_core.sim.optimum.RedundancyChoice": lambda: optimal_redundancy(_small(), redundancies=(1, 2), seeds=(0,)),
    "spare_core.sim.optimum.IntervalOptimum": lambda: optimal_interval(_small(), "spare", 2, factors=(0.5, 1.0),
                                                                       seeds=(0,)),
    "spare_core.pacing.simulate.IterationResult": _pacing,
    "spare_core.pacing.simulate.IterationStats": lambda: _pacing().stats(),
    "spare_core.pacing.sweep.SweepRow": lambda: _node_sweep().rows[0],
    "spare_core.pacing.sweep.PacingSweepResult": _node_sweep,
    "spare_core.stragglers._analysis.WhatIfResult": lambda: _whatif(),
    "spare_core.sim.remedies.RemedyPlan": lambda: _remedy_plan(),
}


def _remedy_plan():
    from spare_core.sim.remedies import remedy_plan
    from spare_core.stragglers import MeasuredStragglers

    sc = Scenario(4, n_steps=10, t_compute=1.0, t_allreduce=0.1, system_mtbf=60.0,
                  step_time_model=MeasuredStragglers(slowdown=1.2, stage_share=0.5, rebalance_cost=60.0))
    return remedy_plan(sc, "rebalance")


def _whatif():
    from spare_core.stragglers import analyse, synthetic_trace

    return analyse(synthetic_trace(dp=2, pp=2, microbatches=2, steps=2, slow={1: 1.5}, seed=0))

# names that mark a class as a result; the ones below are not results (state, settings, inputs)
RESULT_NAME = re.compile(r"(Result|ResultSet|Stats|Counts|Choice|Optimum|Summary|Check|Fit|Period|Decision|Plan|Arrays|"
                         r"Comparison|Matching|Event|Timeline|Row)$")
NOT_RESULTS = {
    "spare_core.graph.matching.IncrementalMatching",  # a solver with state, not an answer
    "spare_core.sweeps.store.ResultStore",      # an on-disk store
}


def _public_classes():
    seen = {}
    for info in pkgutil.walk_packages([str(ROOT)], "spare_core."):
        if "._ext" in info.name or info.name.endswith("__main__"):
            continue
        if info.name in ("spare_core.matching", "spare_core.flow", "spare_core.layout", "spare_core.rectlr",
                         "spare_core.analytic", "spare_core.domain_endurance", "spare_core.sim.policies",
                         "spare_core.sim.elastic"):
            continue  # deprecated re-exports of moved modules (they warn when imported)
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and obj.__module__ == info.name and not name.startswith("_"):
                seen[f"{info.name}.{name}"] = obj
    return seen


def test_every_result_type_is_listed():
    found = {k for k in _public_classes() if RESULT_NAME.search(k.rsplit(".", 1)[1])} - NOT_RESULTS
    assert found - set(MAKERS) == set(), "a result type has no maker here: add it to MAKERS"


def _type(qualname):
    mod, name = qualname.rsplit(".", 1)
    return getattr(importlib.import_module(mod), name)


def _same(exported, value):
    """``exported`` (after a JSON round trip) is ``value`` in JSON form."""
    if isinstance(value, (float, np.floating)):
        return exported is None if not math.isfinite(value) else exported == float(value)
    if isinstance(value, (bool, np.bool_)):
        return exported is bool(value)
    if isinstance(value, (int, np.integer, str)) or value is None:
        return exported == value
    if isinstance(value, np.ndarray):
        flat = value.ravel().tolist()
        got = np.array(exported, dtype=object).ravel().tolist() if exported is not None else None
        return got is not None and len(got) == len(flat) and all(_same(g, v) for g, v in zip(got, flat))
    return True  # nested objects: checked through their own to_dict


def _field(obj, key):
    # a pacing sweep row flattens its statistics and calls its on/off flag "pacing"
    if key == "pacing":
        return obj.paced
    if not hasattr(obj, key) and hasattr(obj, "stats"):
        return getattr(obj.stats, key)
    return getattr(obj, key)


@pytest.mark.parametrize("qualname", sorted(MAKERS))
def test_to_dict_is_json_and_round_trips(qualname):
    obj = MAKERS[qualname]()
    assert type(obj) is _type(qualname)
    assert "to_dict" in vars(type(obj)), f"{qualname} must define to_dict itself"
    d = obj.to_dict()
    assert isinstance(d, dict) and d
    back = json.loads(json.dumps(d, allow_nan=False))
    for key, exported in back.items():
        value = _field(obj, key)
        assert _same(exported, value), (qualname, key, exported, value)
    # the dict names the result's own fields (dataclasses and NamedTuples: all but excluded ones)
    if dataclasses.is_dataclass(obj):
        # flattened: a pacing row's stats, a Summary's means (each under its column's name)
        names = {f.name for f in dataclasses.fields(obj)} - {"timeline", "stats", "paced", "means"}
        assert names <= set(d)
    elif hasattr(obj, "_fields"):
        assert set(d) == set(obj._fields)
    assert not repr(obj).startswith("<"), "a result needs a useful repr"


def test_nested_results_export_their_own_dicts():
    opt = MAKERS["spare_core.sim.optimum.IntervalOptimum"]()
    d = opt.to_dict()
    assert d["closed_form"] == opt.closed_form.to_dict()
    assert set(d["ratio_by_interval"]) == set(opt.ratio_by_interval)
    dec = _decision()
    assert dec.to_dict()["patch"] == dec.patch.to_dict()
    res = _pacing()
    assert res.to_dict()["scenario"]["n_nodes"] == 4


def test_rewritten_exports_keep_their_bytes():
    """The exports that ``spare compare --json`` and ``spare pacing --json`` print are
    byte-identical to the dict code they replaced."""
    def old_run(r):
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in vars(r).items() if k != "timeline"}

    s = _small()
    # a horizon short enough that some runs do not finish (inf -> None)
    res = sweep(Scenario(8, n_steps=50, t_compute=10.0, t_allreduce=1.0, system_mtbf=20.0, restart_time=30.0,
                         checkpoint_time=5.0, max_wall_factor=1.5, name="tight"), ("ckpt", "spare"), (1, 2), (0, 1))
    res2 = sweep(s, ("spare",), (2, 3), (0,))
    def finite(v):
        return v if math.isfinite(v) else None

    def old_run_grown(r):
        # the dict grew derived columns at its end (GPU-hours, cost, ETTR, then the costs per
        # million tokens), nothing else
        return dict(old_run(r), gpu_hours=finite(r.gpu_hours), cost=finite(r.cost), ettr=finite(r.ettr),
                    cost_per_mtoken=finite(r.cost_per_mtoken), on_demand_cost_per_mtoken=finite(r.on_demand_cost_per_mtoken),
                    spot_cost_per_mtoken=finite(r.spot_cost_per_mtoken))

    def old_cell_grown(c, d):
        # a summary's dict: the fields it had, the same bytes each, and the means of the
        # columns declared since (each under its column's name; spare_core.sim.results.MEAN_COLUMNS)
        old = old_run(c)
        old.pop("means")
        old.update({k: finite(v) for k, v in c.means.items()})
        return {k: old[k] for k in d}

    for r in res.runs + res2.runs:
        assert json.dumps(r.to_dict()) == json.dumps(old_run_grown(r))
    assert any(not r.finished for r in res.runs), "the check needs an unfinished run"
    for c in res.summaries + res2.summaries:
        d = c.to_dict()
        assert set(d) == {f for f in vars(c) if f != "means"} | set(MEAN_COLUMNS)
        assert json.dumps(d) == json.dumps(old_cell_grown(c, d))
        assert {"availability", "overhead", "failures_masked", "wipeouts", "restarts", "progress", "ettr"} <= set(d)
    old_sweep = {"runs": [old_run_grown(r) for r in res.runs], "summaries": [c.to_dict() for c in res.summaries]}
    # a result set leads with what a sweep result held, then says how it was executed
    d = res.to_dict()
    assert list(d)[:2] == ["runs", "summaries"]
    assert json.dumps({k: d[k] for k in ("runs", "summaries")}) == json.dumps(old_sweep)
    stats = _pacing().stats()
    assert json.dumps(stats.to_dict()) == json.dumps({k: getattr(stats, k) for k in stats.__dataclass_fields__})


def test_no_as_dict_left():
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in ROOT.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if re.search(r"\bas_dict\b", line)]
    assert hits == []


# -- the helper itself ---------------------------------------------------------------------------
def test_to_jsonable_rules():
    assert to_jsonable({"a": np.int64(3), "b": np.float32(0.5), "c": np.bool_(True), "d": (1, "x", None)}) == \
        {"a": 3, "b": 0.5, "c": True, "d": [1, "x", None]}
    out = to_jsonable({"a": np.int64(3), "c": np.bool_(True)})
    assert type(out["a"]) is int and type(out["c"]) is bool
    assert to_jsonable([math.inf, -math.inf, math.nan, np.float64("nan")]) == [None, None, None, None]
    assert to_jsonable(np.arange(6).reshape(2, 3)) == [[0, 1, 2], [3, 4, 5]]
    assert to_jsonable({np.int64(2): 1.0}) == {2: 1.0}
    with pytest.raises(TypeError, match=r"value\['x'\]\[1\] must be a JSON value.*got object"):
        to_jsonable({"x": [1, object()]}, "value")
    with pytest.raises(TypeError, match="fields must be given for a object"):
        fields_dict(object())


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=5)))
def test_to_jsonable_float_arrays(a):
    out = to_jsonable(a)
    text = json.dumps(out, allow_nan=False)
    back = np.array(json.loads(text), dtype=object).reshape(a.shape)
    for got, want in zip(back.ravel(), a.ravel()):
        assert (got is None) if not np.isfinite(want) else got == want
