"""Replays that carry real variability: windows of the log per seed, where the log's hosts sit
in the job (placement, the concentration warning) and its racks (host_pattern -> domains,
rack-aware SPARe)."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spare_core._seeding import run_seed
from spare_core.events import FailureModel
from spare_core.events.trace import Trace, read_trace
from spare_core.events.trace_model import TraceReplay, TraceWarning
from spare_core.scenario_file import ScenarioFileError, parse_scenario
from spare_core.sim import Scenario, make_policy, simulate

from tests.test_trace_replay import SlowReplay, drive_both
from tests.trace_logs import CRAY_PATTERN, cray_log


def rotated(tr, offset):
    """The trace read from ``offset``: a slow, row-by-row reference of a window."""
    rows = [(t - offset, u) for t, u in zip(tr.times.tolist(), tr.units.tolist()) if t >= offset]
    rows += [(min(t + tr.end - offset, tr.end), u) for t, u in zip(tr.times.tolist(), tr.units.tolist()) if t < offset]
    return Trace([t for t, _ in rows], [u for _, u in rows], n_units=tr.n_units, end=tr.end)


# -- windows ----------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 11)), min_size=1, max_size=40),
    extra_end=st.integers(1, 10),
    windows=st.integers(2, 7),
    seed=st.integers(0, 20),
    after=st.sampled_from(["stop", "loop"]),
    ops=st.lists(st.one_of(st.tuples(st.just("take"), st.integers(0, 9)),
                           st.tuples(st.just("restart"), st.integers(0, 40))), max_size=20),
)
def test_a_window_replays_the_log_read_from_its_offset(rows, extra_end, windows, seed, after, ops):
    rows = sorted(rows, key=lambda r: r[0])
    tr = Trace([float(t) for t, _ in rows], [u for _, u in rows], n_units=12, end=rows[-1][0] + extra_end)
    model = TraceReplay(tr, after=after, windows=windows)
    proc = model.process(12, seed=run_seed(seed, "failures"))
    w = model.window(seed)
    assert proc.window == w and model.window_offsets()[w] == pytest.approx(w * tr.end / windows)
    drive_both(proc, SlowReplay(rotated(tr, model.window_offsets()[w]), after, 12, 1, 0.0), ops, 12)


def test_seeds_visit_every_window_once_before_any_twice():
    tr = Trace(np.arange(100.0), np.arange(100) % 10, end=100.0)
    model = TraceReplay(tr, after="loop", windows=8)
    seen = [model.window(s) for s in range(16)]
    assert sorted(seen[:8]) == list(range(8)) and seen[8:] == seen[:8]
    assert model.histories(range(5)) == 5 and model.histories(range(30)) == 8
    assert seen[:8] != list(range(8))  # a seeded permutation: 5 seeds are not the log's first 5/8
    # a direct process seed (no run child) lands on the same window as the run on that seed
    assert [model.process(10, seed=s).window for s in range(8)] == seen[:8]
    # a sweep's keyed 128-bit seeds spread over the windows
    keyed = [model._window_of(np.random.SeedSequence(int(k))) for k in
             np.random.default_rng(0).integers(0, 2**62, 400)]
    assert set(keyed) == set(range(8)) and max(np.bincount(keyed)) < 80
    assert TraceReplay(tr, after="loop").window(123) == 0


def test_one_window_is_the_replay_as_before():
    rng = np.random.default_rng(2)
    t = np.sort(rng.integers(0, 5000, 3000)).astype(float)
    tr = Trace(t, rng.integers(0, 64, t.size), n_units=64, end=5000.0)
    a = TraceReplay(tr, after="loop").process(64, seed=3)
    b = TraceReplay(tr, after="loop", windows=1).process(64, seed=3)
    for k in (5, 100, 7):
        assert a.take(k) == b.take(k)
        a.restart(a.now + 100.0)
        b.restart(b.now + 100.0)


def test_windows_make_the_seeds_see_different_failure_histories():
    """A log whose rate drifts tenfold: one window gives every seed the same failures; eight
    give runs of different failure counts, and a CI over them widens."""
    rng = np.random.default_rng(5)
    quiet, busy = np.sort(rng.uniform(0, 50 * 86400, 40)), np.sort(rng.uniform(50 * 86400, 100 * 86400, 400))
    t = np.concatenate((quiet, busy))
    tr = Trace(t, rng.integers(0, 32, t.size), n_units=32, end=100 * 86400.0)
    counts = {}
    for k in (1, 8):
        sc = Scenario(32, n_steps=20_000, t_compute=5.0, t_allreduce=0.5, restart_time=600.0, checkpoint_time=30.0,
                      failure_model=TraceReplay(tr, after="loop", windows=k), name="windows")
        counts[k] = [simulate(sc, make_policy("ckpt"), seed=s).to_dict()["failures_seen"] for s in range(8)]
    assert len(set(counts[1])) <= 2  # the same history (step noise moves a restart at most)
    assert max(counts[8]) > 3 * min(counts[8]) and np.std(counts[8]) > 5 * (np.std(counts[1]) + 1)


@pytest.mark.parametrize("kwargs, error, words", [
    ({"windows": 0}, ValueError, "windows must be >= 1"),
    ({"windows": 2.5}, TypeError, "windows must be an integer"),
    ({"windows": 10**7}, ValueError, "windows must be <= 1000000"),
    ({"placement": "random"}, ValueError, "placement must be one of"),
])
def test_bad_window_and_placement_values(kwargs, error, words):
    tr = Trace([1.0, 2.0], [0, 1], end=5.0)
    with pytest.raises(error, match=words):
        TraceReplay(tr, after="stop", **kwargs)
    with pytest.raises(ValueError, match=r"windows=3 needs a trace with end > 0"):
        TraceReplay(Trace([0.0], [0]), after="stop", windows=3)


# -- where the hosts sit: the concentration warning and placement = "spread" --------------------------

def _named_log(tmp_path, hosts=300, rows=2000, seed=0):
    rng = np.random.default_rng(seed)
    names = [f"node{i:05d}" for i in rng.permutation(20_000)[:hosts]]
    p = tmp_path / "named.csv"
    p.write_text("time,host\n" + "".join(f"{i * 60},{names[j]}\n" for i, j in enumerate(rng.integers(0, hosts, rows))))
    return p


def test_hosts_numbered_by_appearance_warn_and_spread_fixes_it(tmp_path):
    tr = read_trace(_named_log(tmp_path), unit_column="host")
    assert tr.numbering == "appearance"
    model = TraceReplay(tr, after="stop", nodes_per_group=32)
    words = model.concentration(600)
    assert words.startswith("the log's failures concentrate on groups 0-9 of 600 (10 touched)")
    assert "its 300 failing hosts" in words and "about 238" in words and 'placement = "spread"' in words
    with pytest.warns(TraceWarning, match="concentrate on groups 0-9 of 600"):
        Scenario(600, n_steps=100, t_compute=1.0, t_allreduce=0.1, failure_model=model)
    spread = model.replace(placement="spread")
    g = spread.groups(600)
    assert spread.concentration(600) is None and np.unique(g).size > 200
    assert np.array_equal(g, TraceReplay(tr, after="stop", nodes_per_group=32, placement="spread").groups(600))
    # one host keeps one node: its failures stay in one group
    assert all(np.unique(g[tr.units == u]).size == 1 for u in range(0, 300, 37))
    assert "hosts spread over the job's nodes at random" in spread.describe(600)
    # a job the hosts fill, ids, a map: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TraceReplay(tr, after="stop", nodes_per_group=1).check(300)
        TraceReplay(tr.replace(numbering="ids"), after="stop", nodes_per_group=32).check(600)


def test_spread_needs_room_and_refuses_racks(tmp_path):
    tr = read_trace(_named_log(tmp_path, hosts=50), unit_column="host")
    with pytest.raises(ValueError, match="the trace's 50 units .hosts named in the log. map to 50 groups"):
        TraceReplay(tr, after="stop", placement="spread").groups(10)
    p = tmp_path / "cray.csv"
    cray_log(p, 200, seed=1, shape=(2, 1, 3, 8, 4))
    racks = read_trace(p, unit_column="host", time_format="%m/%d/%Y %H:%M", host_pattern=CRAY_PATTERN)
    with pytest.raises(ValueError, match="placement='spread' would throw away where host_pattern placed"):
        TraceReplay(racks, after="stop", placement="spread")


# -- racks: host_pattern -> failure domains -> rack-aware SPARe -----------------------------------------

def test_domains_of_the_groups_come_from_the_positions(tmp_path):
    p = tmp_path / "cray.csv"
    cray_log(p, 500, seed=2, shape=(2, 2, 3, 8, 4))  # 4 cabinets of 3 cages of 32 nodes
    tr = read_trace(p, unit_column="host", time_format="%m/%d/%Y %H:%M", host_pattern=CRAY_PATTERN)
    assert tr.n_units == 384
    fd = TraceReplay(tr, after="stop", nodes_per_group=8).domains(48)
    assert fd.names == ("cabinet", "cage") and fd.n_domains == (4, 12)
    assert fd.labels[0].tolist() == np.repeat(np.arange(4), 12).tolist()
    assert fd.labels[1].tolist() == np.repeat(np.arange(12), 4).tolist()
    # groups of a whole cage: the cage level is the group itself, only cabinets remain
    assert TraceReplay(tr, after="stop", nodes_per_group=32).domains(12).names == ("cabinet",)
    # a job larger than the log's machine: its extra groups get domains of their own
    assert TraceReplay(tr, after="stop", nodes_per_group=8).domains(60).n_domains == (5, 15)
    with pytest.raises(ValueError, match="no level of host_pattern holds more than one group of 96 nodes"):
        TraceReplay(tr, after="stop", nodes_per_group=96).domains(4)
    with pytest.raises(ValueError, match="the replayed log has no racks: read it with host_pattern"):
        TraceReplay(Trace([1.0], [0]), after="stop").domains(4)


def _cage_job(tmp_path, layout=None, windows=None):
    p = tmp_path / "cages.csv"
    # 2 cabinets x 3 cages x 32 nodes; a fifth of the rows take down a whole cage (8 groups)
    cray_log(p, 400, seed=4, shape=(2, 1, 3, 8, 4), years=(1,), lemons=0.0, blade_events=0.2, event_nodes=32)
    failures = {"model": "trace", "after": "loop",
                "trace": {"path": str(p), "unit_column": "host", "reason_column": "reason",
                          "time_format": "%m/%d/%Y %H:%M", "host_pattern": CRAY_PATTERN}}
    if windows:
        failures["windows"] = windows
    data = {"cluster": {"gpus": 192 * 8, "gpus_per_node": 8, "gpus_per_group": 32},
            "job": {"step_time": "30 s", "steps": 60_000},
            "failures": failures, "costs": {"restart": "10 min", "checkpoint_save": "30 s"},
            "compare": {"seeds": 2, "r_max": 3}}
    if layout:
        data["policy"] = {"spare": {"layout": layout}}
    return parse_scenario(data)


def test_rack_aware_spare_on_a_log_with_racks(tmp_path):
    from spare_core.strategies.spare.layout import StackedLayout

    sf = _cage_job(tmp_path, layout="rack-aware", windows=4)
    sc = sf.scenario
    assert sf.policy_kwargs()["spare"] == {"layout": "rack-aware"}
    fd = sc.failures.domains(sc.n_groups)
    assert fd.names == ("cabinet", "cage") and fd.n_domains == (2, 6)
    # the report's rate line: how the failures fall on the cabinets, the windows
    assert "by cabinet: " in sf.rate_note and "instants with 2+ nodes of one cabinet failing together" in sf.rate_note
    assert "4 windows of the log" in sc.failure_description and "windows" not in sf.rate_note
    by_hand = StackedLayout.rack_aware(fd, 3)
    wipe = {"consecutive": 0, "rack-aware": 0}
    for seed in range(4):
        a = simulate(sc, make_policy("spare", 3, layout="rack-aware"), seed=seed).to_dict()
        b = simulate(sc, make_policy("spare", 3, layout=by_hand), seed=seed).to_dict()
        assert {k: v for k, v in a.items() if k != "policy"} == {k: v for k, v in b.items() if k != "policy"}
        wipe["rack-aware"] += a["wipeouts"]
        wipe["consecutive"] += simulate(sc, make_policy("spare", 3), seed=seed).to_dict()["wipeouts"]
    # a cage failure takes 8 consecutive groups: every holder of some type with consecutive stacks,
    # never all three holders across the cages (the wipe-outs left come from failures piling up:
    # a cage event spends 8 of the ~12 failures r = 3 endures at N = 48); 20 against 34 when written
    assert wipe["rack-aware"] < 0.8 * wipe["consecutive"]


def test_rack_aware_without_racks_is_one_error(tmp_path):
    p = tmp_path / "plain.csv"
    p.write_text("time,unit\n" + "".join(f"{60 * i},{i % 8}\n" for i in range(20)))
    data = {"cluster": {"gpus": 64, "gpus_per_node": 8, "gpus_per_group": 8}, "job": {"step_time": "1 s", "steps": 10},
            "failures": {"model": "trace", "after": "stop", "trace": str(p)},
            "policy": {"spare": {"layout": "rack-aware"}}, "compare": {"r_max": 2}}
    with pytest.raises(ScenarioFileError, match="the replayed log has no racks: read it with host_pattern"):
        parse_scenario(data)


# -- values --------------------------------------------------------------------------------------------

def test_to_dict_round_trips_windows_placement_and_levels(tmp_path):
    sf = _cage_job(tmp_path, windows=3)
    model = sf.scenario.failures
    d = model.to_dict()
    assert d["windows"] == 3 and d["trace"]["levels"][0][0] == "cabinet"
    back = FailureModel.from_dict(d)
    assert back.windows == 3 and back.trace.levels == model.trace.levels
    assert back.domains(sf.scenario.n_groups).n_domains == model.domains(sf.scenario.n_groups).n_domains
    # the defaults stay out of the dict (earlier replays keep their dicts and stored keys)
    plain = TraceReplay(Trace([1.0], [0], end=2.0), after="stop").to_dict()
    assert "windows" not in plain and "placement" not in plain and "levels" not in plain["trace"]
    spread = TraceReplay(Trace([1.0], [0], end=2.0), after="stop", placement="spread")
    assert FailureModel.from_dict(spread.to_dict()).placement == "spread"
    # the ±50 % runs of advise keep the racks and the windows
    faster = sf.at_rate(2.0).failures
    assert faster.trace.levels == model.trace.levels and faster.windows == 3
    assert faster.trace.end == pytest.approx(model.trace.end / 2)


def test_scenario_file_keys_and_the_rate_line(tmp_path):
    p = _named_log(tmp_path, hosts=300, rows=600)
    base = {"cluster": {"gpus": 600 * 32, "gpus_per_node": 1, "gpus_per_group": 32},
            "job": {"step_time": "1 s", "steps": 10}, "compare": {"r_max": 2}}

    def load(**fl):
        failures = {"model": "trace", "after": "stop", "trace": {"path": str(p), "unit_column": "host",
                                                                  "start": 6000.0, "end": 30000.0}, **fl}
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            sf = parse_scenario({**base, "failures": failures})
        return sf, [str(w.message) for w in seen if issubclass(w.category, TraceWarning)]

    sf, warned = load()
    assert "rows of the file outside [start, end] dropped (100 before start, 99 after end)" in \
        sf.scenario.failure_description
    assert "warning: the log's failures concentrate on groups" in sf.rate_note and len(warned) == 1
    sf, warned = load(placement="spread", windows=5)
    assert "warning" not in sf.rate_note and not warned
    assert sf.scenario.failures.windows == 5 and sf.scenario.failures.placement == "spread"
    for key, value, words in (("windows", 0, "failures.windows"), ("windows", "3", "failures.windows"),
                              ("placement", "random", "failures.placement")):
        with pytest.raises(ScenarioFileError, match=words):
            load(**{key: value})
    with pytest.raises(ScenarioFileError, match="failures.windows"):
        parse_scenario({**base, "failures": {"mtbf": "1 h", "windows": 2}})
