"""Failure classes of a replayed log's cause column (``values`` on each class; issue 32 item 1):
a row's class is its cause value's, in place of the draw (``spare_core.sim.classes.LogClassDraws``).

* A small CSV whose rows are far apart (every row met, every group back in between): the
  restarts, the class restarts, the spares taken and the detection time counted by hand from
  the rows match the run's, for checkpoint-only, elastic and SPARe, with and without ``[repair]``.
* The shares are the log's: each class's rows over the rows.
* Values no class lists are an error naming them and their row counts, unless a class takes
  ``values = ["*"]``; a ``share`` next to ``values`` is refused, and so is a class without values.
* The fast path equals the reference on the repository's example log (windows, ``after =
  "loop"`` and ``"fit"``, ``[repair]``, a domain class), policy by policy and seed by seed.
"""
import math

import pytest

from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import CheckpointOnly, ElasticDP, ReplicationCheckpoint, SpareCheckpoint, simulate
from spare_core.sim._reference import reference_simulate
from test_strategies_reference import COUNTS, TIMES

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]

# (time s, node, cause): 4000 s apart, so every row is met whatever the policy (a restart and its
# detection take minutes) and every swapped node is back before the next row
ROWS = [(1000, 0, "GPU"), (5000, 1, "software"), (9000, 2, "HBM3"), (13000, 3, "GPU"), (17000, 0, "NCCL"),
        (21000, 1, "host"), (25000, 2, "software"), (29000, 3, "HBM3")]
DETECT = {"gpu": 30.0, "host": 45.0, "software": 10.0}
CLASSES = [
    {"name": "gpu", "recovery": "swap", "values": ["GPU", "HBM3"], "detect": "30 s"},
    {"name": "host", "recovery": "swap", "values": ["host"], "detect": "45 s"},
    {"name": "software", "recovery": "restart", "values": ["software", "NCCL"], "detect": "10 s"},
]
OF = {"GPU": "gpu", "HBM3": "gpu", "host": "host", "software": "software", "NCCL": "software"}


def _log(tmp_path, rows=ROWS):
    p = tmp_path / "log.csv"
    p.write_text("time,node,cause\n" + "".join(f"{t},{u},{c}\n" for t, u, c in rows))
    return p


def _file(tmp_path, classes=CLASSES, rows=ROWS, repair=False, **failures):
    d = {"cluster": {"gpus": 32, "gpus_per_node": 8, "gpus_per_group": 8},
         "job": {"step_time": "10 s", "steps": 3500},
         "costs": {"restart": "60 s", "checkpoint_save": "5 s"},
         "failures": {"model": "trace", "after": "stop", **failures, "classes": classes,
                      "trace": {"path": str(_log(tmp_path, rows)), "time_column": "time", "unit_column": "node",
                                "reason_column": "cause", "n_units": 4}}}
    if repair:
        d["repair"] = {"swap": "10 s", "time": "100 s", "rejoin": "10 s"}
    return parse_scenario(d)


@pytest.mark.parametrize("repair", [False, True], ids=["no repair", "repair"])
@pytest.mark.parametrize("pol", [CheckpointOnly(), ElasticDP(reconfigure=5.0), SpareCheckpoint(3)],
                         ids=lambda p: type(p).__name__)
def test_a_small_log_counted_by_hand(tmp_path, pol, repair):
    sc = _file(tmp_path, repair=repair).scenario
    cls = [OF[c] for _, _, c in ROWS]
    r = simulate(sc, pol, seed=0, timeline=True)
    assert r.finished and r.failures_seen == len(ROWS)
    assert [sc.failure_classes.names[c] for c in r.timeline.failure_class] == cls
    forced = sum(c == "software" for c in cls)
    assert r.class_restarts == forced
    # checkpoint-only restarts on every row; elastic and SPARe (3 groups deep, one failure at a
    # time, every node back or the job restarted in between) on the job-wide ones only
    assert r.restarts == (len(ROWS) if isinstance(pol, CheckpointOnly) else forced)
    assert r.detect_time == pytest.approx(math.fsum(DETECT[c] for c in cls), rel=1e-12)
    if repair:
        assert r.spares_taken == sum(c != "software" for c in cls)
    ref = reference_simulate(sc, pol, seed=0)
    for k in COUNTS + ("class_restarts",):
        assert getattr(r, k) == ref[k], k
    for k in TIMES + ("detect_time",):
        assert math.isclose(getattr(r, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), k


def test_the_shares_are_the_logs(tmp_path):
    cl = _file(tmp_path).scenario.failure_classes
    n = {k: sum(OF[c] == k for _, _, c in ROWS) for k in ("gpu", "host", "software")}
    assert [c.share for c in cl.classes] == pytest.approx([n["gpu"] / 8, n["host"] / 8, n["software"] / 8], abs=1e-15)
    assert math.fsum(c.share for c in cl.classes) == 1.0
    assert [c.values for c in cl.classes] == [("GPU", "HBM3"), ("host",), ("software", "NCCL")]


def test_a_default_class_takes_the_other_values(tmp_path):
    classes = [CLASSES[0], {"name": "rest", "recovery": "restart", "values": "*"}]
    sc = _file(tmp_path, classes=classes).scenario
    r = simulate(sc, ElasticDP(reconfigure=5.0), seed=0, timeline=True)
    want = [0 if OF[c] == "gpu" else 1 for _, _, c in ROWS]
    assert r.timeline.failure_class.tolist() == want and r.class_restarts == want.count(1)


def test_values_no_class_lists_are_an_error_with_their_counts(tmp_path):
    with pytest.raises(ScenarioFileError) as e:
        _file(tmp_path, classes=CLASSES[:2])
    msg = str(e.value)
    assert "failures.classes[*].values" in msg and "'NCCL' (1 row)" in msg and "'software' (2 rows)" in msg


@pytest.mark.parametrize("bad, words", [
    ([dict(CLASSES[0], share=0.5), CLASSES[1], CLASSES[2]], "failures.classes[0].share is not taken with values"),
    ([CLASSES[0], {"name": "x", "recovery": "swap", "share": 0.5}, CLASSES[2]], "failures.classes[1] needs values"),
    ([CLASSES[0], dict(CLASSES[1], values=["GPU"]), CLASSES[2]], "list the value 'GPU' twice"),
    ([CLASSES[0], dict(CLASSES[1], values=[]), CLASSES[2]], "failures.classes[1].values must be a non-empty list"),
    ([CLASSES[0], dict(CLASSES[1], values=["*", "host"]), CLASSES[2]], "goes alone"),
])
def test_bad_values_are_refused_naming_the_key(tmp_path, bad, words):
    with pytest.raises(ScenarioFileError, match=__import__("re").escape(words)):
        _file(tmp_path, classes=bad)


def test_values_need_a_replayed_log_with_causes(tmp_path):
    d = {"cluster": {"gpus": 32, "gpus_per_node": 8, "gpus_per_group": 8}, "job": {"step_time": "10 s", "steps": 10},
         "failures": {"mtbf": "1 h", "classes": CLASSES}}
    with pytest.raises(ScenarioFileError, match=r"failures\.classes\[0\]\.values needs failures\.model = \"trace\""):
        parse_scenario(d)
    d = {"cluster": {"gpus": 32, "gpus_per_node": 8, "gpus_per_group": 8}, "job": {"step_time": "10 s", "steps": 10},
         "failures": {"model": "trace", "after": "stop", "classes": CLASSES,
                      "trace": {"path": str(_log(tmp_path)), "time_column": "time", "unit_column": "node"}}}
    with pytest.raises(ScenarioFileError, match="reason_column"):
        parse_scenario(d)


# -- the repository's example log, against the reference ---------------------------------------------
EXAMPLE_CLASSES = [
    {"name": "gpu", "recovery": "swap", "values": ["GPU", "GPU HBM3 memory", "GPU NVLink"], "detect": "30 s"},
    {"name": "host", "recovery": "swap", "values": ["host", "network NIC"],
     "detect": {"law": "exponential", "mean": "2 min"}},
    {"name": "switch", "recovery": "restart", "values": ["network leaf switch"], "detect": "5 min"},
]


@pytest.mark.parametrize("variant", ["fit", "loop-windows", "stop-repair", "domain"])
def test_the_example_log_equals_the_reference(variant):
    import tomllib

    d = tomllib.loads((ROOT / "examples" / "trace_job.toml").read_text())
    d["failures"]["classes"] = [dict(c) for c in EXAMPLE_CLASSES]
    d["job"]["steps"] = 600_000  # past the log's 30 days: the continuation (fit) or the loop is met
    if variant == "loop-windows":
        d["failures"]["after"], d["failures"]["windows"] = "loop", 3
    elif variant == "stop-repair":
        d["failures"]["after"] = "stop"
        d["repair"] = {"swap": "10 min", "time": "6 h", "rejoin": "2 min", "spares": 2}
    elif variant == "domain":  # the leaf switch as a domain of 4 nodes: one group of the job
        d["failures"]["classes"][2] = {"name": "switch", "recovery": "domain", "nodes": 8,
                                       "values": ["network leaf switch"], "detect": "5 min"}
    sc = parse_scenario(d, base_dir=ROOT / "examples").scenario
    pols = [CheckpointOnly(), ElasticDP(reconfigure=30.0), ReplicationCheckpoint(2), SpareCheckpoint(2)]
    met = set()
    for pol in pols:
        for seed in range(3):
            fast = simulate(sc, pol, seed=seed, timeline=True)
            ref = reference_simulate(sc, pol, seed=seed)
            for k in COUNTS + ("class_restarts",):
                assert getattr(fast, k) == ref[k], (type(pol).__name__, seed, k)
            for k in TIMES + ("detect_time",):
                assert math.isclose(getattr(fast, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), k
            met |= set(fast.timeline.failure_class.tolist())
    assert met == {0, 1, 2}  # every class was met


def test_the_example_log_with_classes_runs(spare_here, tmp_path):
    ex = ROOT / "examples" / "trace_job_classes.toml"
    sf = load_scenario_file(ex)
    assert sf.scenario.failure_classes.names == ("gpu", "host", "switch")
    p = spare_here("run", ex, "--seeds", "2", "--r-max", "2", "--processes", "1")
    assert p.returncode == 0, p.stderr
    assert "classes: gpu" in p.stdout


@pytest.mark.parametrize("pol", [CheckpointOnly(), ElasticDP(reconfigure=5.0), SpareCheckpoint(3)],
                         ids=lambda p: type(p).__name__)
def test_one_class_of_every_value_is_the_log_without_classes(tmp_path, pol):
    from test_failure_classes import _same_run

    sf = _file(tmp_path, classes=[{"name": "all", "recovery": "swap", "values": "*"}])
    plain = sf.scenario.replace(failure_classes=None)
    for seed in range(2):
        a, b = simulate(plain, pol, seed=seed, timeline=True), simulate(sf.scenario, pol, seed=seed, timeline=True)
        _same_run(a, b)
        assert b.detect_time == 0.0 and b.class_restarts == 0
        assert (a.timeline.failure_time == b.timeline.failure_time).all()


def test_advise_drops_a_class_as_its_rows(tmp_path):
    from spare_core.commands.variants import class_variants

    sc = _file(tmp_path).scenario
    vs = class_variants(sc)
    assert [v.value for v in vs] == ["gpu", "host", "software"]
    for v in vs:
        tr = v.scenario.failures.trace
        kept = [(t, u, c) for t, u, c in ROWS if OF[c] != v.value]
        # the log without the class's rows, the others at their times
        assert tr.times.tolist() == [float(t) for t, _, _ in kept] and list(tr.reasons) == [c for _, _, c in kept]
        assert v.value not in v.scenario.failure_classes.names
        n = {k: sum(OF[c] == k for _, _, c in kept) for k in v.scenario.failure_classes.names}
        assert [c.share for c in v.scenario.failure_classes.classes] == pytest.approx(
            [n[k] / len(kept) for k in v.scenario.failure_classes.names], abs=1e-12)
        r = simulate(v.scenario, ElasticDP(reconfigure=5.0), seed=0)
        assert r.failures_seen == len(kept)
        assert r.class_restarts == sum(OF[c] == "software" for _, _, c in kept)


def test_classes_with_values_round_trip(tmp_path):
    from spare_core.sim.classes import FailureClass, FailureClasses

    cl = _file(tmp_path).scenario.failure_classes
    assert FailureClasses.from_dict(cl.to_dict()) == cl
    with pytest.raises(ValueError, match="give values to every class or to none"):
        FailureClasses((FailureClass("a", 0.5, "swap", values=["x"]), FailureClass("b", 0.5, "swap")))
    with pytest.raises(ValueError, match="listed by 'a' and 'b'"):
        FailureClasses((FailureClass("a", 0.5, "swap", values=["x"]), FailureClass("b", 0.5, "swap", values=["x"])))
    with pytest.raises(TypeError, match="values must be a non-empty list"):
        FailureClass("a", 1.0, "swap", values="x")


@pytest.mark.parametrize("pol", [CheckpointOnly(), ElasticDP(reconfigure=1.0), ReplicationCheckpoint(2),
                                 SpareCheckpoint(2)], ids=lambda p: type(p).__name__)
def test_a_domain_class_of_a_log_that_ends_with_repairs_still_under_way(tmp_path, pol):
    """Regression (harden5, found by tests/wave4_files.cause_files): a replay that stops at the
    log's end, a domain class taking both groups and [repair]; a repaired group's rejoin after the
    last failure indexed the domain events' detection past their end (an IndexError). The run
    now matches the reference."""
    (tmp_path / "log.csv").write_text("time,unit,cause\n10.0,n0,GPU\n")
    d = {"cluster": {"gpus": 2, "gpus_per_node": 1, "gpus_per_group": 1},
         "job": {"step_time": 1.0, "steps": 20},
         "failures": {"model": "trace", "after": "stop",
                      "trace": {"path": "log.csv", "unit_column": "unit", "reason_column": "cause", "unit_gpus": 1},
                      "classes": [{"name": "switch", "recovery": "domain", "values": "*", "nodes": 2, "detect": 0.5}]},
         "repair": {"time": 0.0, "spares": 0},
         "costs": {"restart": 0.0, "checkpoint_save": 0.1}}
    sc = parse_scenario(d, base_dir=tmp_path).scenario
    fast = simulate(sc, pol, seed=0, timeline=True)
    ref = reference_simulate(sc, pol, seed=0)
    assert fast.finished and fast.failures_seen >= 1
    assert fast.detect_time == 0.5  # counted once per event
    for k in COUNTS + ("class_restarts",):
        assert getattr(fast, k) == ref[k], k
    for k in TIMES + ("detect_time",):
        assert math.isclose(getattr(fast, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), k


@pytest.mark.parametrize("pol", [ElasticDP(reconfigure=1.0), SpareCheckpoint(2), CheckpointOnly()], ids=str)
def test_a_job_wide_fault_on_a_group_a_domain_event_took_still_reaches_the_job(tmp_path, pol):
    """Regression (harden5's open case): without [repair], a "restart" row on a group that a
    domain event had already taken was dropped by DomainEpochs (each group's first failure of
    the epoch only) while the reference counted it. A job-wide fault reaches the job from a
    group out of it, as it does with [repair]; the run matches the reference and restarts."""
    (tmp_path / "log.csv").write_text("time,unit,cause\n10.0,n0,switch\n20.0,n1,GPU\n30.0,n2,bug\n")
    d = {"cluster": {"gpus": 6, "gpus_per_node": 1, "gpus_per_group": 2},
         "job": {"step_time": 1.0, "steps": 60},
         "failures": {"model": "trace", "after": "stop",
                      "trace": {"path": "log.csv", "unit_column": "unit", "reason_column": "cause", "unit_gpus": 1},
                      "classes": [{"name": "switch", "recovery": "domain", "values": ["switch"], "nodes": 4},
                                  {"name": "gpu", "recovery": "swap", "values": ["GPU"]},
                                  {"name": "bug", "recovery": "restart", "values": ["bug"]}]},
         "costs": {"restart": 2.0, "checkpoint_save": 0.1}}
    sc = parse_scenario(d, base_dir=tmp_path).scenario
    fast = simulate(sc, pol, seed=0, timeline=True)
    ref = reference_simulate(sc, pol, seed=0)
    assert ref["class_restarts"] == 1
    for k in COUNTS + ("class_restarts",):
        assert getattr(fast, k) == ref[k], k
    for k in TIMES + ("detect_time",):
        assert math.isclose(getattr(fast, k), ref[k], rel_tol=1e-9, abs_tol=1e-9), k
