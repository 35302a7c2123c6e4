"""Scenario files on the failure layer: rate forms through FailureRate (exact conversions),
a recorded log replayed (``model = "trace"``) or fitted (``law = "fit"``), their errors, the
failure-rate sensitivity, and the replay seen by the simulator."""
from __future__ import annotations

import math
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from spare_core.events.fit import fit
from spare_core.events.trace import read_trace
from spare_core.events.trace_model import TraceReplay
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import make_policy, simulate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TRACE_JOB = EXAMPLES / "trace_job.toml"
LOG = EXAMPLES / "trace_job_failures.csv"
HOSTS = EXAMPLES / "trace_job_hosts.txt"
DAY = 86400


def _base(failures, *, gpus=16_000, gpg=64):
    return {"cluster": {"gpus": gpus, "gpus_per_node": 8, "gpus_per_group": gpg},
            "job": {"step_time": "10 s", "steps": 1000}, "failures": failures}


# -- rate forms: one owner of the conversion, correctly rounded ---------------------------------
@pytest.mark.parametrize("form, exact", [
    ({"per_node_day": 0.0065}, lambda: 1 / (Fraction(0.0065) / DAY * 2000)),
    ({"per_1000_node_days": 6.5}, lambda: 1 / (Fraction(6.5) / 1000 / DAY * 2000)),
    ({"per_gpu_year": 0.173}, lambda: 1 / (Fraction(0.173) / (Fraction(36525, 100) * DAY) * 16_000)),
    ({"interruptions": 419, "period": "54 d", "measured_on_gpus": 16_384},
     lambda: Fraction(54 * DAY) / 419 * 16_384 / 16_000),
    ({"mtbf": "3.1 h"}, lambda: Fraction(3.1 * 3600)),
    ({"node_mtbf": "1234.5 h"}, lambda: Fraction(1234.5 * 3600) / 2000),
])
def test_rate_forms_are_the_exact_conversion_correctly_rounded(form, exact):
    # the oracle: the conversion in exact rational arithmetic, rounded once
    sf = parse_scenario(_base({"model": "system", **form}))
    assert sf.scenario.system_mtbf == float(exact())
    assert sf.failure_rate is not None
    assert sf.failure_rate.system_mtbf(2000, unit="node") == sf.scenario.system_mtbf


# -- trace replay ---------------------------------------------------------------------------------
def test_trace_example_resolves_to_a_replay_of_the_log():
    sf = load_scenario_file(TRACE_JOB)
    fm = sf.scenario.failures
    assert isinstance(fm, TraceReplay) and fm.after == "fit" and fm.nodes_per_group == 4
    # the same log read directly, hosts numbered by the hostfile's order
    hosts = [ln.split()[0] for ln in HOSTS.read_text().splitlines() if ln and not ln.startswith("#")]
    ref = read_trace(LOG, time_column="timestamp", unit_column="host", reason_column="cause", unit_map=hosts,
                     start="2025-03-03T00:00:00Z", end="2025-04-02T00:00:00Z")
    assert np.array_equal(fm.trace.times, ref.times) and np.array_equal(fm.trace.units, ref.units)
    assert fm.trace.end == 30 * DAY and fm.trace.n_units == 64 == sf.nodes
    # group of a failure = its host's rank // 4
    row = list(ref.unit_names).index("node-013")
    assert fm.groups(sf.scenario.n_groups)[list(fm.trace.units).index(row)] == 3
    assert sf.failure_rate is None and sf.trace is fm.trace
    assert sf.scenario.system_mtbf == fm.trace.end / np.unique(fm.trace.times).size
    assert "79 failure instants" in sf.rate_note


def test_provenance_names_the_log_and_rebuilds_the_replay():
    import hashlib
    import json

    from spare_core.events import FailureModel

    sf = load_scenario_file(TRACE_JOB)
    d = json.loads(json.dumps(sf.to_dict()))
    assert d["trace"]["sha256"] == hashlib.sha256(LOG.read_bytes()).hexdigest()
    assert d["trace"]["path"] == str(LOG.resolve()) and d["trace"]["rows"] == 82 and d["trace"]["units"] == 64
    assert d["trace"]["start"] == "2025-03-03T00:00:00+00:00"
    # the log by reference, not row by row; the model rebuilds from it, equal to the file's
    fm = d["scenario"]["failure_model"]
    assert "times" not in fm["trace"] and len(json.dumps(d)) < 20_000
    assert FailureModel.from_dict(fm) == sf.scenario.failures


def test_trace_path_is_relative_to_the_file_not_the_working_directory(tmp_path, monkeypatch):
    d = tmp_path / "job"
    d.mkdir()
    for p in (TRACE_JOB, LOG, HOSTS):
        shutil.copy(p, d / p.name)
    monkeypatch.chdir(tmp_path)
    assert load_scenario_file(d / TRACE_JOB.name).trace.n_events == 82
    # a dict has no file: relative to base_dir (default the working directory)
    data = {"cluster": {"gpus": 512, "gpus_per_group": 32}, "job": {"step_time": 5, "steps": 10},
            "failures": {"model": "trace", "after": "stop", "trace": {"path": "job/trace_job_failures.csv",
                                                                       "time_column": "timestamp",
                                                                       "unit_column": "host",
                                                                       "unit_map": "job/trace_job_hosts.txt"}}}
    assert parse_scenario(data).trace.n_events == 82
    assert parse_scenario(data, base_dir=tmp_path).trace.n_events == 82


def test_trace_as_a_plain_path_numbers_hosts_in_order_of_appearance(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("time,unit\n10,3\n20,0\n20,1\n")
    sf = parse_scenario({"cluster": {"gpus": 64, "gpus_per_group": 16}, "job": {"step_time": 1, "steps": 10},
                         "failures": {"model": "trace", "after": "loop", "trace": str(log)}})
    fm = sf.scenario.failures
    assert fm.after == "loop" and fm.nodes_per_group == 2 and fm.trace.units.tolist() == [3, 0, 1]
    assert fm.groups(4).tolist() == [1, 0, 0]


def test_at_rate_scales_the_log_time_axis():
    sf = load_scenario_file(TRACE_JOB)
    fast = sf.at_rate(2.0).failures
    assert np.array_equal(fast.trace.times, sf.trace.times / 2) and fast.trace.end == sf.trace.end / 2
    assert np.array_equal(fast.trace.units, sf.trace.units) and fast.after == "fit"
    rate = parse_scenario(_base({"mtbf": "3 h"}))
    assert rate.at_rate(1.5).system_mtbf == 3 * 3600 / 1.5
    with pytest.raises(ValueError, match="factor"):
        rate.at_rate(0)


# -- a law fitted to the log ----------------------------------------------------------------------
def _fitted_job(tmp_path, model="system"):
    for p in (LOG, HOSTS):
        shutil.copy(p, tmp_path / p.name)
    text = "\n".join(ln for ln in TRACE_JOB.read_text().splitlines() if not ln.startswith("after ="))
    (tmp_path / "fit.toml").write_text(text.replace('model = "trace"', f'model = "{model}"\nlaw = "fit"'))
    return tmp_path / "fit.toml"


def test_law_fit_takes_rate_and_shape_from_a_censored_node_fit(tmp_path):
    sf = load_scenario_file(_fitted_job(tmp_path))
    # the system model's MTBF is a long-run rate: the fit takes the nodes as found in service
    # (each node's first interval a residual lifetime), the ages the rate models simulate
    lf = fit(sf.trace, "weibull", level="unit", origin="stationary")
    assert sf.scenario.failure_model == "system"
    assert sf.scenario.system_mtbf == pytest.approx(lf.mean / 64, rel=1e-12)
    assert sf.scenario.weibull_shape == lf.params["shape"]
    assert sf.failure_rate.unit_mtbf("node") == pytest.approx(lf.mean, rel=1e-12)
    assert "weibull fitted to the log's node lifetimes" in sf.rate_note and "95 % CI" in sf.rate_note
    assert "82 failures of 64 logged nodes" in sf.rate_note
    # and the fit was checked against the log: its count lies in the simulated interval
    assert sf.fit.check is not None and sf.fit.check.ok and sf.fit.check.count == 82
    assert "82 failures logged" in sf.rate_note
    # the log was drawn from new nodes with lifetimes of mean 33 days and shape 0.78
    # (make_trace_job_log.py): the fit that assumes new nodes has both in its 95 % intervals
    new = fit(sf.trace, "weibull", level="unit")
    lo, hi = new.interval("shape")
    assert lo < 0.78 < hi
    lo, hi = new.interval("mean")
    assert lo < 33 * DAY < hi
    d = sf.to_dict()
    assert d["fit"]["params"] == lf.params and d["fit"]["intervals"]["shape"] == list(lf.interval("shape"))
    assert d["fit"]["failures"] == 82 and d["trace"]["rows"] == 82


# -- errors: one line naming the key, the rule and the value ----------------------------------------
def _trace_failures(**kw):
    f = {"model": "trace", "after": "stop",
         "trace": {"path": str(LOG), "time_column": "timestamp", "unit_column": "host", "unit_map": str(HOSTS)}}
    f.update(kw)
    return {k: v for k, v in f.items() if v is not None}


@pytest.mark.parametrize("failures, words", [
    (_trace_failures(after=None), ["failures.after", "stop", "never guesses"]),
    (_trace_failures(after="repeat"), ["failures.after", "one of", "'repeat'"]),
    (_trace_failures(trace=None), ["failures.trace"]),
    (_trace_failures(mtbf="2 h"), ["failures.mtbf", "model = 'trace'", "'2 h'"]),
    (_trace_failures(weibull_shape=0.7), ["failures.weibull_shape", "model = 'trace'"]),
    (_trace_failures(trace="no_such_log.csv"), ["failures.trace", "readable file", "no_such_log.csv"]),
    (_trace_failures(trace={"path": str(LOG), "time_col": "timestamp"}),
     ["failures.trace.time_col", "unknown", "time_column"]),
    (_trace_failures(trace={"time_column": "timestamp"}), ["[failures.trace] needs path"]),
    (_trace_failures(trace=7), ["failures.trace", "path", "7"]),
    (_trace_failures(trace={"path": str(LOG)}), ["failures.trace", "trace_job_failures.csv", "time"]),
    (_trace_failures(trace={"path": str(LOG), "time_column": "timestamp", "unit_column": "host",
                            "unit_map": "no_hosts.txt"}), ["failures.trace.unit_map", "hostfile", "no_hosts.txt"]),
    (_trace_failures(trace={"path": str(LOG), "time_column": "timestamp", "unit_column": "host",
                            "time_format": "epoch"}), ["failures.trace", "line 3"]),
    (_trace_failures(nodes_per_group=0), ["failures.nodes_per_group", ">= 1", "0"]),
    ({"model": "system", "mtbf": "2 h", "after": "stop"}, ["failures.after", "only goes with model = 'trace'"]),
    ({"model": "system", "mtbf": "2 h", "trace": "x.csv"}, ["failures.trace", "model = 'trace' or law = 'fit'"]),
    ({"model": "system", "law": "fit"}, ["law = 'fit' needs failures.trace"]),
    ({"model": "system", "law": "fit", "mtbf": "2 h", "trace": str(LOG)}, ["failures.mtbf", "law = 'fit'"]),
    ({"model": "system", "law": "lognormal", "mtbf": "2 h"}, ["failures.law", "'lognormal'"]),
])
def test_bad_failures_tables(failures, words):
    with pytest.raises(ScenarioFileError) as e:
        parse_scenario(_base(failures, gpus=512, gpg=32), source="job.toml")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("job.toml")
    for w in words:
        assert w in msg, (w, msg)


def test_a_log_with_more_nodes_than_the_job_is_refused():
    # 64 logged hosts, 4 per group, on a 256-GPU job (8 groups of 4 nodes = 32 nodes)
    with pytest.raises(ScenarioFileError, match="n_groups=8"):
        parse_scenario(_base(_trace_failures(), gpus=256, gpg=32))


def test_groups_that_are_not_whole_nodes_need_nodes_per_group():
    with pytest.raises(ScenarioFileError, match="failures.nodes_per_group.*whole number of 8-GPU nodes"):
        parse_scenario(_base(_trace_failures(), gpus=512, gpg=4))
    sf = parse_scenario(_base(_trace_failures(nodes_per_group=1), gpus=512, gpg=4))
    assert sf.scenario.failures.nodes_per_group == 1


def test_overrides_switch_between_a_rate_and_a_fitted_law(tmp_path):
    path = _fitted_job(tmp_path)
    sf = load_scenario_file(path, ["failures.per_1000_node_days=6.5"])
    assert sf.trace is None and sf.scenario.system_mtbf == pytest.approx(1000 * DAY / (6.5 * 64))
    # a rate given by override replaced the log; a fitted law needs one again
    with pytest.raises(ScenarioFileError, match="law = 'fit' needs failures.trace"):
        load_scenario_file(path, ["failures.per_1000_node_days=6.5", "failures.law='fit'"])


# -- the replay the simulator sees ------------------------------------------------------------------
@pytest.mark.parametrize("policy, r", [("ckpt", None), ("spare", 2), ("rep", 2)])
def test_simulate_replays_the_log_through_each_runs_restarts(policy, r):
    sf = load_scenario_file(TRACE_JOB, ["job.steps=60000"])
    sc = sf.scenario
    tl = simulate(sc, make_policy(policy, r), seed=0, timeline=True).timeline
    assert tl.failure_time.size >= 10
    # reference 1: the model's own process (tested row by row against a slow replay) driven
    # through the run's restarts gives every epoch's failures, in order, with their groups
    proc = sc.failures.process(sc.n_groups, seed=0)
    i = 0
    for k, (start, n) in enumerate(zip(tl.epoch_start, tl.epoch_failures)):
        if k:
            proc.restart(float(start))
        t, g = proc.take(int(n))
        assert np.array_equal(t, tl.failure_time[i:i + n]) and np.array_equal(g, tl.failure_group[i:i + n])
        i += int(n)
    # reference 2 (CKPT-only: every failure is a restart): each epoch's failure is the log's
    # first row at or after the epoch's start, straight from the trace's arrays
    if policy == "ckpt":
        rows = np.searchsorted(sf.trace.times, tl.epoch_start[:tl.failure_time.size], side="left")
        inside = rows < sf.trace.n_events
        assert np.array_equal(tl.failure_time[inside], sf.trace.times[rows[inside]])
        assert not math.isnan(tl.failure_time.sum())


# -- node renewals on the file's layout -------------------------------------------------------------
def test_node_model_is_the_default_for_a_user_cluster():
    sf = parse_scenario(_base({"per_1000_node_days": 6.5}))
    assert sf.scenario.failure_model == "node" and sf.scenario.failures.nodes_in_group() == 8
    # the paper preset names the paper's model
    assert load_scenario_file(EXAMPLES / "paper_600k.toml").scenario.failure_model == "per-unit"


def test_node_model_takes_nodes_and_groups_from_the_cluster():
    sf = load_scenario_file(EXAMPLES / "rsc1_2000_nodes.toml", ["failures.model='node'"])
    fm = sf.scenario.failures
    assert sf.scenario.failure_model == "node" and fm.gpus_per_node == 8 and fm.nodes_in_group() == 8
    assert fm.initial == "stationary" and fm.shape == 0.78
    # one owner of the rate: the model's system MTBF is the file's, RSC-1's 6.5 per 1,000 node-days on 2,000 nodes
    assert sf.scenario.system_mtbf == float(1 / (Fraction(6.5) / 1000 / DAY * 2000))
    new = load_scenario_file(EXAMPLES / "rsc1_2000_nodes.toml", ["failures.model='node'", "failures.node_ages='new'"])
    assert new.scenario.failures.initial == "new"


def test_node_model_needs_whole_nodes_per_group():
    with pytest.raises(ScenarioFileError, match=r"cluster.gpus_per_group must be a multiple of cluster.gpus_per_node"):
        parse_scenario(_base({"model": "node", "mtbf": "2 h"}, gpus=512, gpg=4))


def test_node_ages_only_with_the_node_model():
    with pytest.raises(ScenarioFileError, match="failures.node_ages only goes with model = 'node'"):
        parse_scenario(_base({"model": "system", "mtbf": "2 h", "node_ages": "new"}))


# -- failures.fit_law: which law is fitted to the log --------------------------------------------
@pytest.mark.parametrize("law", ["exponential", "weibull", "lognormal"])
def test_fit_law_picks_the_node_law_and_the_rate_follows_it(tmp_path, law):
    path = _fitted_job(tmp_path, model="node")
    sf = load_scenario_file(path, [f"failures.fit_law={law!r}"])
    lf = fit(sf.trace, law, level="unit", origin="stationary")  # the node model's default stationary ages
    assert sf.fit.law == law and sf.fit.params == lf.params
    assert sf.scenario.system_mtbf == pytest.approx(lf.mean / 64, rel=1e-12)
    if law == "lognormal":  # the fitted law is the node lifetime itself
        assert sf.scenario.failures.lifetime == lf.distribution
        assert "sigma" in sf.rate_note
    else:
        assert sf.scenario.weibull_shape == (lf.params["shape"] if law == "weibull" else 1.0)
    assert sf.to_dict()["fit"]["law"] == law
    # the sensitivity scales the fitted law's time axis
    assert sf.at_rate(2.0).system_mtbf == pytest.approx(sf.scenario.system_mtbf / 2, rel=1e-12)


def test_fit_law_best_is_the_law_that_reproduces_the_log_best(tmp_path):
    from spare_core.events.fit import fit_node_rates
    from spare_core.events.fit_check import check_fit, rank_checks

    node = load_scenario_file(_fitted_job(tmp_path, model="node"), ["failures.fit_law='best'"])
    fits = [fit(node.trace, law, origin="stationary") for law in ("exponential", "weibull", "lognormal")]
    fits.append(fit_node_rates(node.trace))
    checks = [check_fit(f, node.trace) for f in fits]
    best = fits[rank_checks(checks, [f.aic for f in fits])[0]]
    assert node.fit.law == best.law and node.fit.params == best.params
    assert "that reproduces the log best" in node.rate_note and "exponential/weibull/lognormal/frailty" in node.rate_note
    system = load_scenario_file(_fitted_job(tmp_path, model="system"), ["failures.fit_law='best'"])
    assert system.fit.law in ("exponential", "weibull") and system.fit.check.ok


def test_fit_law_errors(tmp_path):
    with pytest.raises(ScenarioFileError, match="fit_law must be one of .*use model = 'node'"):
        load_scenario_file(_fitted_job(tmp_path, model="system"), ["failures.fit_law='lognormal'"])
    with pytest.raises(ScenarioFileError, match="fit_law must be one of"):
        load_scenario_file(_fitted_job(tmp_path, model="node"), ["failures.fit_law='gamma'"])
    with pytest.raises(ScenarioFileError, match="fit_law only goes with law = 'fit' or after = 'fit'"):
        parse_scenario(_base({"mtbf": "3 h", "fit_law": "weibull"}))
    with pytest.raises(ScenarioFileError, match="fit_law only goes with"):
        load_scenario_file(TRACE_JOB, ["failures.after='stop'", "failures.fit_law='weibull'"])


@pytest.mark.parametrize("law", ["exponential", "lognormal", "best"])
def test_fit_law_past_the_end_of_a_replay(law):
    from spare_core.events.fit_check import check_fit, rank_checks

    sf = load_scenario_file(TRACE_JOB, [f"failures.fit_law={law!r}"])
    want = law
    if law == "best":  # the law whose re-simulated system failures match the log's best
        fits = [fit(sf.trace, name, level="system") for name in ("exponential", "weibull", "lognormal")]
        checks = [check_fit(f, sf.trace, level="system") for f in fits]
        want = fits[rank_checks(checks, [f.aic for f in fits])[0]].law
    assert sf.scenario.failures.law == want and sf.fit.law == want
    assert sf.scenario.failures.fitted().params == sf.fit.params
    assert sf.to_dict()["fit"]["level"] == "times between system failures"
    assert "past its end" in sf.rate_note
