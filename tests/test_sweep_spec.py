"""The policy registry, policies as objects in sweeps and optima, and sweep specs with stable keys."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spare_core.sim import (
    POLICY_REGISTRY,
    CheckpointOnly,
    Policy,
    ReplicationCheckpoint,
    Scenario,
    SpareCheckpoint,
    make_policy,
    optimal_interval,
    optimal_redundancy,
    register_policy,
    simulate,
    sweep,
)
from spare_core.sweeps import SweepSpec, load_spec, run_batch
from spare_core.sweeps.spec import content_key


def tiny(n=30, **kw):
    return Scenario.paper_600k(n, n_steps=kw.pop("n_steps", 120), **kw)


class SlowShrink(SpareCheckpoint):
    """A user's policy: SPARe with a costlier communicator shrink (and its own label)."""

    name = "SPARe+slow-shrink"

    def failure_seconds(self, scenario):
        return 30.0 + super().failure_seconds(scenario)


class NoRedundancy(Policy):
    """A user's policy that behaves exactly like checkpoint-only (under another class)."""

    name = "mine"

    def handler(self, scenario):
        return CheckpointOnly().handler(scenario)


def _counts(r):
    return (r.finished, r.failures_seen, r.failures_masked, r.restarts, r.checkpoints, r.steps_executed)


def test_registry_builds_the_builtins_and_takes_new_names():
    assert make_policy("rep-disjoint", 3) == ReplicationCheckpoint(3, variant="disjoint")
    assert make_policy("spare", 4, interval="young") == SpareCheckpoint(4, interval="young")
    assert make_policy("ckpt") == CheckpointOnly()
    assert {"ckpt", "rep", "rep-disjoint", "spare"} <= set(POLICY_REGISTRY)
    register_policy("slow", SlowShrink, label=SlowShrink.name)
    try:
        assert make_policy("slow", 3) == SlowShrink(3)
        with pytest.raises(ValueError, match="already registered"):
            register_policy("slow", SlowShrink, label="x")
        res = sweep(tiny(), ("slow", "spare"), [2, 3], [0, 1])
        assert {s.policy for s in res.summaries} == {"SPARe+slow-shrink", "SPARe+CKPT"}
        choice = optimal_redundancy(tiny(), policy="slow", redundancies=[2, 3], seeds=[0])
        assert choice.simulated in (2, 3, None)
        opt = optimal_interval(tiny(), "slow", 3, factors=(1.0,), seeds=[0])
        assert opt.closed_form.seconds == SlowShrink(3).checkpoint_interval(tiny()).seconds
    finally:
        del POLICY_REGISTRY["slow"]
    with pytest.raises(ValueError, match="policy name must be"):
        register_policy("no spaces", SlowShrink, label="x")
    with pytest.raises(TypeError, match="factory must be callable"):
        register_policy("x", 3, label="x")


def test_objects_and_factories_work_everywhere_with_common_random_numbers():
    sc = tiny(40)
    res = sweep(sc, ("ckpt", NoRedundancy(), SpareCheckpoint, lambda r: SlowShrink(r)), [2, 3], [0, 1, 2])
    by = {(r.policy, r.redundancy, r.seed): r for r in res.runs}
    for seed in (0, 1, 2):
        # the user's policy is simulated (not relabelled) and sees the very failures of the
        # built-in checkpoint-only run on the seed: identical counts
        assert _counts(by[("mine", 1, seed)]) == _counts(by[("CKPT-only", 1, seed)])
        # a factory gives the named policy's runs; a user's subclass its own
        assert _counts(by[("SPARe+CKPT", 3, seed)]) == _counts(simulate(sc, SpareCheckpoint(3), seed=seed))
        assert _counts(by[("SPARe+slow-shrink", 2, seed)]) == _counts(simulate(sc, SlowShrink(2), seed=seed))
    assert res.best(40, "mine") is None or res.best(40, "mine").redundancy == 1
    choice = optimal_redundancy(sc, policy=SpareCheckpoint, redundancies=[2, 3], seeds=[0, 1, 2])
    assert choice.ratio_by_r[2][0] == pytest.approx(res.cell(40, "SPARe+CKPT", 2).ratio_mean, rel=1e-12)
    opt = optimal_interval(sc, SlowShrink(3), factors=(0.5, 1.0), seeds=[0])
    assert opt.simulated in opt.ratio_by_interval
    with pytest.raises(ValueError, match="has no redundancy"):
        optimal_redundancy(sc, policy=SlowShrink(3))


def test_empty_and_impossible_grids_are_errors_naming_the_cause():
    sc = tiny(6)
    with pytest.raises(ValueError, match=r"no redundancy in \[8, 9\] is <= n_groups = 6 .*'spare'"):
        sweep(sc, ("ckpt", "spare"), [8, 9], [0])
    with pytest.raises(ValueError, match="redundancy r must be <= n_groups"):
        sweep(sc, (SpareCheckpoint(7),), [1], [0])
    for kw, what in ((dict(seeds=[]), "seeds"), (dict(redundancies=[]), "redundancies"), (dict(policies=()), "policies")):
        with pytest.raises(ValueError, match=f"{what} must not be empty"):
            sweep(sc, **({"policies": ("rep",), "redundancies": [2], "seeds": [0]} | kw))
    with pytest.raises(ValueError, match="both give label 'Rep\\+CKPT'"):
        sweep(sc, ("rep", lambda r: ReplicationCheckpoint(r, "cyclic", interval=60.0)), [2], [0])
    # the two replication variants carry their own labels and run side by side
    both = sweep(sc, ("rep", "rep-disjoint"), [2], [0])
    assert [c.policy for c in both.summaries] == ["Rep+CKPT", "Rep+CKPT (disjoint)"]
    with pytest.raises(TypeError, match="registered name"):
        sweep(sc, (3.5,), [2], [0])
    with pytest.raises(ValueError, match=r"no redundancy in \[8\] is <= n_groups = 6"):
        SweepSpec(sc, ("spare",), [8], seeds=1)
    with pytest.raises(ValueError, match="intervals must hold"):
        SweepSpec(sc, ("spare",), [2], intervals=["often"], seeds=1)


def _spec(**kw):
    args = dict(scenarios=[tiny(30), tiny(12, failure_model="system")], policies=("ckpt", "rep", "spare"),
                redundancies=[1, 2, 3], seeds=[0, 1])
    args.update(kw)
    return SweepSpec(**args)


def test_keys_cover_scenario_policy_interval_and_seed():
    spec = _spec(intervals=[None, "young", 900.0])
    runs = spec.runs()
    assert len(runs) == len({r.key for r in runs}) == 2 * 2 * 3 * (1 + 3 + 3)
    again = {r.key for r in _spec(intervals=[None, "young", 900.0], redundancies=[3, 2, 1, 2]).runs()}
    assert again == {r.key for r in runs}
    other = {r.key for r in _spec(scenarios=[tiny(30, restart_time=3601.0), tiny(12, failure_model="system")],
                                  intervals=[None, "young", 900.0]).runs()}
    assert len(other & again) == len(again) // 2  # only the unchanged scenario's runs keep their keys
    # the documented content: SHA-256 of the canonical JSON of the scenario dict without its
    # name, the policy dict and the seed (KEY_VERSION 2)
    for r in runs[:: 7]:
        sc = next(g.scenario for g in spec.groups() if g.key == r.group_key)
        sd = {k: v for k, v in sc.to_dict().items() if k != "name"}
        doc = {"v": 2, "scenario": sd, "policy": r.policy.to_dict(), "seed": r.seed}
        assert r.key == content_key(doc)
        assert r.group_key == content_key({"v": 2, "scenario": sd, "seed": r.seed})
        assert r.scenario_key == content_key({"v": 2, "scenario": sd})
    groups = spec.groups()
    assert len({g.key for g in groups}) == len(groups) == 4
    for g in groups:
        assert {r.group_key for r in g.runs} == {g.key}


def test_a_layout_enters_the_key_by_its_placement():
    from spare_core.strategies.spare.layout import StackedLayout

    sc = tiny(12)
    a = SpareCheckpoint(3, layout=StackedLayout(12, 3, offsets=[0, 1, 2]))
    b = SpareCheckpoint(3, layout=StackedLayout(12, 3, offsets=[0, 1, 2]))
    c = SpareCheckpoint(3, layout=StackedLayout(12, 3, offsets=[0, 1, 3]))
    keys = [SweepSpec(sc, (p,), [3], seeds=1).runs()[0].key for p in (a, b, c, SpareCheckpoint(3))]
    assert keys[0] == keys[1] and len(set(keys)) == 3
    assert a.to_dict()["params"]["layout"]["n_groups"] == 12


def test_keys_and_streams_are_the_same_in_another_interpreter():
    spec = _spec()
    code = textwrap.dedent("""
        from spare_core.sim import Scenario
        from spare_core.sweeps import SweepSpec
        sc = [Scenario.paper_600k(30, n_steps=120), Scenario.paper_600k(12, n_steps=120, failure_model="system")]
        spec = SweepSpec(sc, ("ckpt", "rep", "spare"), [1, 2, 3], seeds=[0, 1])
        for g in spec.groups():
            print(g.key, g.stream_seed.generate_state(2)[1], *sorted(r.key for r in g.runs))
    """)
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    mine = [f"{g.key} {g.stream_seed.generate_state(2)[1]} " + " ".join(sorted(r.key for r in g.runs)) for g in spec.groups()]
    assert out.stdout.split("\n")[:-1] == mine


def test_a_run_equals_simulate_on_its_group_stream():
    spec = _spec()
    g = spec.groups()[0]
    cols = run_batch([g])
    for i, run in enumerate(g.runs):
        fresh = simulate(g.scenario, run.policy, seed=g.stream_seed)
        assert cols["key"][i] == run.key
        assert (cols["failures_seen"][i], cols["restarts"][i], cols["checkpoints"][i]) == \
            (fresh.failures_seen, fresh.restarts, fresh.checkpoints)
        assert cols["wall_time"][i] == pytest.approx(fresh.wall_time, rel=1e-12)


def test_toml_spec(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(textwrap.dedent("""
        name = "t"
        seeds = 3
        policies = ["ckpt", "spare"]
        redundancies = {from = 2, to = 4}
        intervals = ["auto", 600.0]
        [policy_options.spare]
        offsets = "sidon"
        [[scenarios]]
        preset = "paper_600k"
        n_steps = 50
        grid = {n_groups = [20, 30], restart_time = [1800.0, 3600.0]}
        [[scenarios]]
        n_groups = 10
        n_steps = 40
        t_compute = 60.0
        t_allreduce = 2.0
        system_mtbf = 600.0
    """))
    spec = load_spec(f)
    assert len(spec.scenarios) == 5 and len(spec.seeds) == 3
    assert len({s.name for s in spec.scenarios}) == 5  # the grid shows in the names
    assert len(spec) == 5 * 3 * 2 * (1 + 3)
    assert all(r.policy.offsets == "sidon" for r in spec.runs() if isinstance(r.policy, SpareCheckpoint))
    for body, match in (("seeds = 2\nwhat = 1\n[scenario]\nn_groups = 4\nn_steps = 5\nt_compute = 1.0\nt_allreduce = 1.0\nsystem_mtbf = 9.0",
                         "unknown key 'what'"),
                        ("seeds = 2\n[scenario]\npreset = 'nope'", "preset must be one of"),
                        ("seeds = 2\npolicies = ['spare']\nredundancies = [9]\n[scenario]\npreset = 'paper_600k'\nn_groups = 4",
                         "no redundancy in \\[9\\]"),
                        ("seeds = [", "not valid TOML"),
                        ("seeds = 2", "exactly one of")):
        f.write_text(body)
        with pytest.raises(ValueError, match=match):
            load_spec(f)
    with pytest.raises(ValueError, match="cannot read sweep spec .*nope.toml"):
        load_spec(tmp_path / "nope.toml")


def test_toml_spec_over_a_scenario_file(tmp_path):
    from spare_core.scenario_file import load_scenario_file

    example = Path(__file__).parent.parent / "examples" / "rsc1_2000_nodes.toml"
    shutil.copy(example, tmp_path / "cluster.toml")
    f = tmp_path / "s.toml"
    f.write_text(textwrap.dedent("""
        seeds = 2
        policies = ["spare"]
        redundancies = [2, 3]
        [[scenarios]]
        file = "cluster.toml"
        set = {"job.tokens" = 1.0e10}
        grid = {"failures.per_1000_node_days" = [3.0, 6.5, 13.0]}
    """))
    spec = load_spec(f)
    assert len(spec.scenarios) == 3 and len(spec) == 3 * 2 * 2
    mtbf = [s.system_mtbf for s in spec.scenarios]
    assert mtbf[0] * 3.0 == pytest.approx(mtbf[1] * 6.5, rel=1e-12) == pytest.approx(mtbf[2] * 13.0, rel=1e-12)
    direct = load_scenario_file(tmp_path / "cluster.toml", ["job.tokens=1.0e10"]).scenario
    assert spec.scenarios[1].to_dict() == direct.to_dict() | {"name": spec.scenarios[1].name}
    f.write_text('seeds = 2\n[[scenarios]]\nfile = "cluster.toml"\nn_groups = 3\n')
    with pytest.raises(ValueError, match="takes only 'file', 'set' and 'grid'"):
        load_spec(f)
