"""Sweeps, the shared epoch cache, the optimal redundancy and the `spare compare` command."""
import json
import math

import numpy as np
import pytest

from spare_core.cli import main
from spare_core.sim import (
    CheckpointOnly,
    ReplicationCheckpoint,
    Scenario,
    SpareCheckpoint,
    closed_form_redundancy,
    optimal_redundancy,
    simulate,
    sweep,
)
from spare_core._seeding import run_seed
from spare_core.events import EpochFailures
from spare_core.strategies import replication as replication_mod
from spare_core.strategies.spare import policy as spare_policy_mod


def tiny(n=30, **kw):
    return Scenario.paper_600k(n, n_steps=kw.pop("n_steps", 150), **kw)


def _key(r):
    d = r.to_dict()
    return {k: d[k] for k in ("finished", "time_to_train", "failures_seen", "failures_masked", "restarts", "checkpoints",
                              "availability", "overhead", "steps_executed")}


def test_r1_policies_are_checkpoint_only():
    s = tiny(max_wall_factor=3.0)
    a = simulate(s, CheckpointOnly(), seed=2)
    for p in (SpareCheckpoint(1), ReplicationCheckpoint(1), ReplicationCheckpoint(1, variant="disjoint")):
        b = simulate(s, p, seed=2)
        assert _key(a) == _key(b)
        assert b.wipeouts == b.restarts and a.wipeouts == 0


def test_sweep_equals_independent_runs_and_process_count():
    s = [tiny(30), tiny(12, failure_model="system")]
    res1 = sweep(s, ("ckpt", "rep", "spare"), [1, 2, 3], [0, 1], processes=1)
    res2 = sweep(s, ("ckpt", "rep", "spare"), [1, 2, 3], [0, 1], processes=2)
    assert [_key(r) for r in res1.runs] == [_key(r) for r in res2.runs]
    # a run inside the sweep (shared epoch cache, r = 1 relabelled) equals a fresh run
    by = {(r.scenario, r.policy, r.redundancy, r.seed): r for r in res1.runs}
    for sc in s:
        for seed in (0, 1):
            for p in (CheckpointOnly(), ReplicationCheckpoint(2), SpareCheckpoint(3), SpareCheckpoint(1)):
                fresh = _key(simulate(sc, p, seed=seed))
                got = _key(by[(sc.name, p.name, p.redundancy, seed)])
                # the cache stores each epoch's offsets drawn from 0: bit for bit
                assert got == fresh
    assert len(res1.summaries) == 2 * (1 + 3 + 3)
    assert "runs" in repr(res1)


def test_results_do_not_depend_on_batch_sizes(monkeypatch):
    s = tiny(40)
    a = simulate(s, SpareCheckpoint(3), seed=4)
    b = simulate(s, ReplicationCheckpoint(3), seed=4)
    monkeypatch.setattr(spare_policy_mod._RectlrHandler, "__init__",
                        _patched_init(spare_policy_mod._RectlrHandler.__init__, 1))
    monkeypatch.setattr(replication_mod._CyclicHandler, "__init__",
                        _patched_init(replication_mod._CyclicHandler.__init__, 7))
    # batch sizes change how far the epoch cache's driver has run before each restart,
    # which the cached offsets do not depend on: bit for bit
    assert _key(simulate(s, SpareCheckpoint(3), seed=4)) == _key(a)
    assert _key(simulate(s, ReplicationCheckpoint(3), seed=4)) == _key(b)


def _patched_init(orig, hint):
    def init(self, *args):
        orig(self, *args)
        self.batch_hint = hint

    return init


def test_epoch_cache_rebuild_replays_the_same_failures():
    s = tiny(25, failure_model="per-unit")
    seed = run_seed(9, "failures")
    a = EpochFailures(s.failures, s.n_groups, seed)
    t0, u0 = a.get(0, 3)
    t5, _ = a.get(5, 2)
    t0b, u0b = a.get(0, 20)  # the driver has moved on: rebuilt
    assert a.rebuilds == 1
    assert np.array_equal(u0b[:3], u0[:3]) and np.array_equal(t0b[:3], t0[:3])
    b = EpochFailures(s.failures, s.n_groups, seed)
    tb, ub = b.get(0, 20)
    assert np.array_equal(ub, u0b) and np.array_equal(tb, t0b)
    assert np.array_equal(b.get(5, 2)[0][:2], t5[:2])
    full, units = b.get(1, 10_000)
    assert full.shape[0] == 25 and sorted(units.tolist()) == list(range(25))
    assert b.next_time(1, 25) == math.inf
    with pytest.raises(ValueError):
        full[0] = 1.0  # read-only


def test_best_and_optimal_redundancy():
    s = tiny(60, n_steps=300)
    res = sweep(s, ("rep", "spare"), range(1, 6), [0, 1])
    for label in ("Rep+CKPT", "SPARe+CKPT"):
        cells = [c for c in res.summaries if c.policy == label]
        best = res.best(60, label)
        assert best.ratio_mean == min(c.ratio_mean for c in cells)
        assert res.cell(60, label, best.redundancy) is best
    choice = optimal_redundancy(s, policy="spare", redundancies=range(1, 6), seeds=[0, 1])
    assert choice.simulated == res.best(60, "SPARe+CKPT").redundancy
    assert choice.closed_form == closed_form_redundancy(60) == math.floor(math.log2(60) + 0.8327)
    assert "closed_form" in repr(choice)
    with pytest.raises(KeyError):
        res.cell(60, "Rep+CKPT", 99)


def test_unfinished_cells_are_infinite_and_not_best():
    s = tiny(30, max_wall_factor=1.5)
    res = sweep(s, ("ckpt",), [1], [0])
    c = res.summaries[0]
    assert c.finished == 0 and math.isinf(c.ratio_mean) and c.to_dict()["ratio_mean"] is None
    assert res.best(30, "CKPT-only") is None


def test_closed_form_redundancy_paper_values():
    assert [closed_form_redundancy(n) for n in (200, 600, 1000)] == [8, 10, 10]
    assert closed_form_redundancy(1) == 1


def test_sweep_bad_input():
    s = tiny()
    with pytest.raises(ValueError, match="policy must be one of"):
        sweep(s, ("ckpt", "mirror"))
    with pytest.raises(ValueError, match="r must be >= 1"):
        sweep(s, ("rep",), [0, 1])
    with pytest.raises(TypeError, match="scenarios must be"):
        sweep([], ("rep",))
    with pytest.raises(ValueError, match="seed must be >= 0"):
        sweep(s, ("rep",), [2], [-1])
    with pytest.raises(ValueError, match="has no redundancy"):
        optimal_redundancy(s, policy="ckpt")
    with pytest.raises(ValueError, match="policy_kwargs"):
        sweep(s, ("rep",), [2], policy_kwargs={"spare": {}})


def test_compare_command(tmp_path, capsys):
    out = tmp_path / "c.json"
    rc = main(["compare", "--groups", "40", "80", "--r-max", "4", "--seeds", "2", "--steps", "200",
               "--processes", "1", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "SPARe+CKPT" in text and "Rep+CKPT" in text and "CKPT-only" in text
    assert "per-unit" in text and "closed-form r*" in text
    doc = json.loads(out.read_text())
    cells = doc["cells"]
    assert {c["n_groups"] for c in cells} == {40, 80}
    for c in cells:
        assert {"ratio_mean", "availability", "overhead", "failures_masked", "wipeouts"} <= set(c)
    for n in ("40", "80"):
        b = doc["best"][n]["SPARe+CKPT"]
        mine = [c for c in cells if c["n_groups"] == int(n) and c["policy"] == "SPARe+CKPT" and c["ratio_mean"] is not None]
        assert b["ratio_mean"] == min(c["ratio_mean"] for c in mine)
    assert len(doc["runs"]) == 2 * 2 * (1 + 4 + 4)


def test_compare_command_bad_input():
    with pytest.raises(SystemExit) as exc:  # refused by its one range at parsing: one line, exit status 2
        main(["compare", "--horizon", "1"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["compare", "--groups", "0"])
    with pytest.raises(SystemExit):
        main(["compare", "--failure-model", "poisson"])


def test_optimal_interval_candidates_are_plain_runs_and_the_argmin_is_their_best():
    from spare_core.sim import optimal_interval

    sc = Scenario.paper_600k(100, n_steps=400)
    opt = optimal_interval(sc, "spare", 4, factors=(0.5, 1.0, 3.0), seeds=range(3))
    auto = SpareCheckpoint(4).checkpoint_interval(sc).seconds
    assert opt.closed_form.seconds == auto
    assert set(opt.ratio_by_interval) == {0.5 * auto, auto, 3.0 * auto, opt.young, opt.daly}
    # the factor-1 candidate is exactly the default-rule run on each seed (shared failures
    # change nothing: common random numbers)
    direct = [simulate(sc, SpareCheckpoint(4), seed=s).ratio for s in range(3)]
    assert opt.ratio_by_interval[auto][0] == pytest.approx(np.mean(direct), rel=1e-12)
    best = min(opt.ratio_by_interval.items(), key=lambda kv: kv[1][0])
    assert opt.simulated == best[0] and "IntervalOptimum" in repr(opt)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(factors=()), ValueError, "factors must be a non-empty"),
        (dict(factors=(1.0, -2.0)), ValueError, "factors must be a non-empty"),
        (dict(seeds=()), ValueError, "seeds must not be empty"),
        (dict(interval=5.0), ValueError, "do not pass interval"),
        (dict(r=None), ValueError, "needs a redundancy"),
    ],
)
def test_optimal_interval_bad_input(kwargs, exc, match):
    from spare_core.sim import optimal_interval

    args = dict(r=4) | kwargs
    with pytest.raises(exc, match=match):
        optimal_interval(Scenario.paper_600k(100, n_steps=50), "spare", **args)
    with pytest.raises(TypeError, match="scenario must be a Scenario"):
        optimal_interval("paper", "spare", 4)
