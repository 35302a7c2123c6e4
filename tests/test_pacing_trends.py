"""Statistical trends of the model (seeded): synchronization amplification, where CV grows,
and what pacing does at small and medium scale. These are the mechanism checks behind
the sweep in docs/pacing.md; they assert directions and bounds, never the paper's numbers."""
import json

import numpy as np
import pytest

from spare_core.cli import main
from spare_core.pacing import (BaselinePacer, ComputeModel, FabricModel, PacingScenario, SpreadPacer,
                               StragglerStepTime, node_sweep, scaling_efficiency, simulate_iterations)

IID = ComputeModel(speed_spread=0.0, slow_fraction=0.0, episode_rate=0.0)   # i.i.d. jitter only


def _stats(n, comp=None, fabric=None, ctrl=None, n_iter=1500, seeds=(0, 1)):
    kw = {} if fabric is None else {"fabric": fabric}
    sc = PacingScenario(n_nodes=n, compute=comp or ComputeModel(), **kw)
    runs = [simulate_iterations(sc, n_iter, controller=ctrl, seed=s) for s in seeds]
    t = np.concatenate([r.time for r in runs])
    return t.mean(), float(np.mean([r.time.std() / r.time.mean() for r in runs])), runs


def test_synchronization_amplification_emerges_from_the_max():
    # independent oracle: numpy Monte-Carlo of the max of p mean-one lognormals
    fab = FabricModel.uncontended()
    rng = np.random.default_rng(123)
    means = []
    for n in (1, 4, 16, 64):
        sc = PacingScenario(n_nodes=n, compute=IID, fabric=fab)
        r = simulate_iterations(sc, 2000, seed=n)
        p = sc.n_ranks
        mc = np.exp(0.05 * rng.standard_normal((4000, p)) - 0.5 * 0.05**2).max(axis=1).mean() * 0.5
        assert r.arrival_max.mean() == pytest.approx(mc, rel=3e-3)
        means.append(r.time.mean())
    assert all(b > a for a, b in zip(means, means[1:]))


def test_cv_of_pure_jitter_shrinks_with_ranks_but_jumps_when_the_job_leaves_one_leaf():
    # Extreme-value fact: the max of more i.i.d. lognormals is *more* concentrated, so on a
    # contention-free fabric CV falls with node count. CV grows only through the fabric:
    # past one leaf, ring flows share oversubscribed uplinks and the incast penalty varies
    # with the ECMP collisions of each iteration.
    cv_free = [_stats(n, IID, FabricModel.uncontended())[1] for n in (4, 16, 64)]
    assert cv_free[0] > cv_free[1] > cv_free[2]
    cv = {n: _stats(n, IID)[1] for n in (4, 8, 64, 128)}
    assert min(cv[64], cv[128]) > 1.5 * max(cv[4], cv[8])


def test_incast_is_intermittent_and_its_share_grows_with_the_leaves_spanned():
    # Overflow needs a leaf whose shared buffer competing traffic holds (probability
    # background_duty per leaf and iteration); otherwise the idle dynamic-threshold
    # headroom absorbs the parked windows. An iteration is hit at most with probability
    # 1 - (1 - duty)^L (L leaves): intermittent, and more frequent the more leaves.
    duty = FabricModel().background_duty
    share = {}
    for n in (16, 32, 64, 128):
        runs = _stats(n, n_iter=1000)[2]
        hit = np.concatenate([r.incast > 0 for r in runs])
        share[n] = hit.mean()
        L = n // 16
        assert share[n] <= 1 - (1 - duty) ** L + 0.03
    assert share[16] == 0.0            # one leaf: no shared uplink, nothing can overflow
    assert 0.0 < share[32] < share[64] < share[128] < 0.9


def test_cv_grows_with_node_count_while_bursts_stay_intermittent():
    # default scenario: persistent outliers set the max, so the CV is the fabric's;
    # it grows from one leaf to 8 leaves as the hit probability 1 - 0.9^L rises toward 1/2
    cv = [_stats(n, n_iter=1000)[1] for n in (16, 32, 64, 128)]
    assert cv[0] < cv[1] < cv[2] < cv[3]


@pytest.mark.parametrize("duty", [0.0, 1.0])
def test_background_duty_limits_recover_simple_models(duty):
    # duty 1: every leaf contended, the headroom is always `buffer` (the idle headroom is
    # never used); duty 0: only the idle headroom, which the default windows never exceed
    sc = PacingScenario(n_nodes=64, fabric=FabricModel(background_duty=duty))
    other = PacingScenario(n_nodes=64, fabric=FabricModel(background_duty=duty, buffer_idle=64 * 2**20))
    a, b = simulate_iterations(sc, 300, seed=4), simulate_iterations(other, 300, seed=4)
    if duty == 1.0:
        np.testing.assert_array_equal(a.time, b.time)
        assert (a.incast > 0).mean() > 0.95
    else:
        assert (a.incast == 0).all() and (b.incast == 0).all()


def test_pacing_at_least_halves_cv_at_64_nodes_and_is_free_inside_one_leaf():
    ctrl = BaselinePacer()
    off, cv_off, _ = _stats(64, n_iter=1000)
    on, cv_on, runs = _stats(64, ctrl=ctrl, n_iter=1000)
    assert cv_on < 0.5 * cv_off and on < off
    assert np.mean([r.paced.mean() for r in runs]) > 0.9
    for n in (4, 8):
        off, cv_off, _ = _stats(n, n_iter=1000)
        on, cv_on, runs = _stats(n, ctrl=ctrl, n_iter=1000)
        # the collective phase is constant inside one leaf: the controller never engages
        assert all(r.paced.sum() == 0 for r in runs)
        assert on == off and cv_on == cv_off


def test_pacing_costs_little_where_nothing_is_shared_and_pays_off_across_leaves():
    ctrl = SpreadPacer()
    for n in (4, 8):
        off, _, _ = _stats(n)
        on, _, runs = _stats(n, ctrl=ctrl)
        loss = on / off - 1.0
        assert 0.0 <= loss <= 0.03          # never helps inside one leaf, costs < 3 %
        assert np.mean([r.paced.mean() for r in runs]) > 0      # it did pace
    off, cv_off, _ = _stats(64)
    on, cv_on, runs = _stats(64, ctrl=ctrl)
    assert off / on - 1.0 > 0.05            # throughput gain at 64 nodes
    assert cv_on < cv_off
    assert all(r.incast.mean() < 0.2 * o.incast.mean()
               for r, o in zip(runs, _stats(64)[2]))


def test_pacing_cuts_cv_at_64_nodes_when_jitter_is_iid():
    _, cv_off, _ = _stats(64, IID)
    _, cv_on, _ = _stats(64, IID, ctrl=SpreadPacer())
    assert cv_on < 0.75 * cv_off


def test_sweep_efficiency_and_json(tmp_path):
    res = node_sweep([4, 16, 64], n_iterations=300, replicas=2, seed=3)
    eff = [res.row(n, False).efficiency for n in (4, 16, 64)]
    assert eff[0] == 1.0 and eff[2] < eff[0]
    assert res.row(64, True).efficiency > res.row(64, False).efficiency
    assert "thr gain" in res.table() and "BaselinePacer" in res.table()     # the sweep's default pacer
    np.testing.assert_allclose(scaling_efficiency([4, 8], [2.0, 2.5]), [1.0, 0.8])
    with pytest.raises(ValueError, match="mean_times"):
        scaling_efficiency([4, 8], [1.0, 0.0])
    with pytest.raises(ValueError, match="distinct"):
        node_sweep([4, 4])
    out = tmp_path / "sweep.json"
    assert main(["pacing", "--nodes", "2", "4", "--iterations", "40", "--replicas", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {(r["n_nodes"], r["pacing"]) for r in data["rows"]} == {(2, False), (2, True), (4, False), (4, True)}
    for r in data["rows"]:
        assert {"mean", "p99", "cv", "throughput", "fraction_paced"} <= set(r)


def test_cli_options_and_plot_message(tmp_path, capsys):
    assert main(["pacing", "--nodes", "2", "--iterations", "20", "--replicas", "1", "--oversubscription", "4",
                 "--ring-order", "topology", "--algorithm", "ring", "--plot", str(tmp_path / "p.png")]) == 0
    out = capsys.readouterr().out
    assert "nodes" in out and ("plot written" in out or "matplotlib is not installed" in out)
    with pytest.raises(SystemExit):
        main(["pacing", "--oversubscription", "0.5"])
    with pytest.raises(SystemExit):
        main(["pacing", "--background-duty", "1.5"])
    # no competing traffic: nothing overflows, so pacing can only cost its release latency
    js = tmp_path / "duty0.json"
    assert main(["pacing", "--nodes", "32", "--iterations", "30", "--replicas", "1", "--background-duty", "0",
                 "--pacer", "spread", "--json", str(js)]) == 0
    assert "SpreadPacer" in capsys.readouterr().out
    rows = {r["pacing"]: r for r in json.loads(js.read_text())["rows"]}
    assert rows[True]["mean"] > rows[False]["mean"] and rows[True]["fraction_paced"] > 0.9
    # correlated competing traffic; an impossible (duty, run) pair is refused with rc 2
    assert main(["pacing", "--nodes", "32", "--iterations", "30", "--replicas", "1", "--background-run", "20"]) == 0
    capsys.readouterr()
    assert main(["pacing", "--nodes", "8", "--background-duty", "0.8", "--background-run", "2"]) == 2
    assert "background_run must be >= duty / (1 - duty)" in capsys.readouterr().err
    # the fabric options: the topology carries the leaf size and oversubscription
    assert main(["pacing", "--nodes", "4", "--iterations", "20", "--replicas", "1", "--fabric", "top-of-rack",
                 "--nodes-per-leaf", "1", "--oversubscription", "4"]) == 0
    assert "fabric: TopOfRackFabric(nodes_per_leaf=1, oversubscription=4.0)" in capsys.readouterr().out
    assert main(["pacing", "--nodes", "4", "--iterations", "20", "--replicas", "1", "--nodes-per-leaf", "2"]) == 0
    assert "fabric: RailOptimisedFabric(nodes_per_leaf=2, oversubscription=2.0)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["pacing", "--fabric", "dragonfly"])


def test_step_time_hook():
    sc = PacingScenario(n_nodes=16)
    st = StragglerStepTime(sc, n_iterations=300, seed=2)
    a = st.sample_multipliers(1000, np.random.default_rng(5))
    b = st.sample_multipliers(1000, np.random.default_rng(5))
    assert a.dtype == np.float64 and a.shape == (1000,) and (a > 0).all()
    np.testing.assert_array_equal(a, b)
    # the pool is the simulated iteration time over the nominal step
    r = simulate_iterations(sc, 300, seed=2)
    np.testing.assert_allclose(np.sort(st.pool), np.sort(r.time / sc.nominal_step))
    assert set(np.unique(a)) <= set(st.pool.tolist())
    assert st.sample_multipliers(0, 1).shape == (0,)
    assert st.mean_multiplier() > 1.0          # stragglers only ever inflate steps on average
    paced = StragglerStepTime(PacingScenario(n_nodes=64), controller=SpreadPacer(), n_iterations=300, seed=2)
    unpaced = StragglerStepTime(PacingScenario(n_nodes=64), n_iterations=300, seed=2)
    assert paced.mean_multiplier() < unpaced.mean_multiplier()
    with pytest.raises(ValueError, match="n_steps must be >= 0"):
        st.sample_multipliers(-1, 0)
    with pytest.raises(TypeError, match="scenario must be a PacingScenario"):
        StragglerStepTime(16)
    assert "StragglerStepTime(n_nodes=16" in repr(st)
