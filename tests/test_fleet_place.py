"""Placing the job on the nodes with the fewest failures ([fleet] place): the lemons' and the
frailty's multipliers follow the nodes of a fleet larger than the job, and a failed node's
slot takes an idle node by a rule (docs/model.md, *Placement*)."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize

from spare_core._seeding import as_seed_sequence, stream_rng
from spare_core.distributions import Deterministic, Exponential, Weibull
from spare_core.events.nodes import _PLACE_DRAWS, NodeFailureLog, NodeRenewals
from spare_core.scenario_file import ScenarioFileError, load_scenario_file, parse_scenario
from spare_core.sim import CheckpointOnly, Repairs, Scenario, SpareCheckpoint, simulate

sys.path.insert(0, str(Path(__file__).parent))
from test_strategies_reference import assert_same  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
BASE = {"cluster": {"gpus": 256, "gpus_per_node": 8, "gpus_per_group": 8},
        "job": {"step_time": "10 s", "steps": 20_000},
        "failures": {"model": "node", "mtbf": "1 h", "weibull_shape": 1.0},
        "repair": {"spares": 8, "time": "2 h"}}


def _numbers(r):
    return {k: v for k, v in r.__dict__.items() if isinstance(v, (int, float, bool))}


def _file(fleet=None, **tables):
    data = {**BASE, **tables}
    if fleet is not None:
        data["fleet"] = fleet
    return parse_scenario(data, source="p.toml")


def _until(log, end):
    while log.horizon < end:
        log.extend()
    t = np.asarray(log.times)
    keep = t < end
    return t[keep], np.asarray(log.groups)[keep], log.failed_nodes()[keep]


def oracle(law, n, idle, seed, rule, end, *, lemons=None, frailty=0.0, initial="stationary", retire_after=0,
           frailty_fix=0.0):
    """The placement one failure at a time in plain Python, from the same streams: the next
    failure is the earliest slot's (ties: the lower slot); its node joins the idle list with its
    key (its count for "fewest_failures", else 0) and entry number; the smallest (key, entry)
    leaves it for the slot, with a fresh lifetime times its multiplier (the law's draws in
    blocks of _PLACE_DRAWS, drawn when one is needed). With a fix probability (lemons' third
    entry) a lemon's failure is fixed when its uniform (blocks from the lemons' stream, one per
    lemon failure) is below it: a normal node's multiplier from then on. With ``retire_after``
    a node's ``retire_after``-th failure retires it (the row's fourth entry 1): it joins no idle
    list, and a slot finding the list empty stays empty for good. With ``frailty_fix`` (lemons
    from the frailty) every failure draws a uniform and a fixed node a fresh multiplier,
    1 / Gamma(1/v, v), both in blocks from the lemons' stream, refilled when one is needed."""
    rng = stream_rng(as_seed_sequence(seed), "node-lifetimes")
    total = n + idle
    scale = np.ones(total)
    if frailty > 0:
        scale = 1.0 / (rng.standard_gamma(1.0 / frailty, total) * frailty)
    lem, fix, lrng = np.zeros(total, dtype=bool), 0.0, None
    if lemons is not None:
        share, m = lemons[:2]
        fix = lemons[2] if len(lemons) > 2 else 0.0
        k = min(total, int(round(share * total)))
        lrng = stream_rng(as_seed_sequence(seed), "node-lemons")
        lem[lrng.choice(total, k, replace=False)] = True
        c = 1.0 - k / total + m * k / total
        scale = np.where(lem, c / m, c)
    fix_u, upos = [], 0
    gam, gpos = [], 0
    if frailty_fix > 0:
        fix, lrng = frailty_fix, stream_rng(as_seed_sequence(seed), "node-lemons")
        lem[:] = True
    first = law.sample_residual if initial == "stationary" else law.sample
    nxt = list(first(rng, n) * scale[:n])
    occ = list(range(n))
    count = [0] * total
    waiting = [(0, j, n + j) for j in range(idle)]
    entry = idle
    draws, pos = [], 0
    rows = []
    while True:
        s = min(range(n), key=lambda i: (nxt[i], i))
        t = nxt[s]
        if not t < end:
            return rows
        u = occ[s]
        count[u] += 1
        ret = bool(retire_after) and count[u] % retire_after == 0
        rows.append((t, s, u, int(ret)))
        if fix > 0 and lem[u]:
            if upos == len(fix_u):
                fix_u, upos = lrng.random(_PLACE_DRAWS), 0
            if fix_u[upos] < fix:
                if frailty_fix > 0:
                    if gpos == len(gam):
                        gam, gpos = 1.0 / (lrng.standard_gamma(1.0 / frailty, _PLACE_DRAWS) * frailty), 0
                    scale[u] = gam[gpos]
                    gpos += 1
                else:
                    lem[u] = False
                    scale[u] = c
            upos += 1
        if not ret:
            waiting.append((count[u] if rule == "fewest_failures" else 0, entry, u))
            entry += 1
        if not waiting:
            occ[s], nxt[s] = None, math.inf
            continue
        best = min(waiting)
        waiting.remove(best)
        occ[s] = best[2]
        if pos == len(draws):
            draws, pos = law.sample(rng, _PLACE_DRAWS), 0
        nxt[s] = t + float(draws[pos]) * float(scale[best[2]])
        pos += 1


# -- the log ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["any", "fewest_failures"])
@pytest.mark.parametrize("law, kw", [
    (Exponential(10.0), dict(lemons=(0.2, 5.0))),
    (Weibull.from_mean(10.0, 0.7), dict(lemons=(0.3, 3.0), initial="new")),
    (Exponential(10.0), dict(frailty=1.2)),
    (Weibull.from_mean(10.0, 1.5), {}),
    (Exponential(10.0), dict(lemons=(0.3, 6.0, 0.02))),
], ids=["exp-lemons", "weibull-new-lemons", "frailty", "plain", "lemons-fixed"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_compiled_placement_is_the_step_by_step_oracle(rule, law, kw, seed):
    """Bit for bit: every failure's time, slot and node (past several blocks of draws and
    chunks)."""
    n, idle, npg, end = 12, 4, 3, 25_000.0
    log = NodeFailureLog(law, n // npg, npg, seed, chunk_seconds=7.0, place=(rule, idle),
                         lemons=kw.get("lemons"), frailty=kw.get("frailty", 0.0), initial=kw.get("initial", "stationary"))
    t, g, u = _until(log, end)
    rows = oracle(law, n, idle, seed, rule, end, **kw)
    assert len(rows) > _PLACE_DRAWS  # past a block of draws
    assert t.tolist() == [r[0] for r in rows]
    assert g.tolist() == [r[1] // npg for r in rows] and u.tolist() == [r[2] for r in rows]
    # the same seed, the same log, whoever reads it how far
    again = NodeFailureLog(law, n // npg, npg, seed, chunk_seconds=7.0, place=(rule, idle),
                           lemons=kw.get("lemons"), frailty=kw.get("frailty", 0.0),
                           initial=kw.get("initial", "stationary"))
    assert np.array_equal(_until(again, end)[0], t)


def test_a_forced_choice_counted_by_hand():
    """Two slots, two idle nodes, lifetimes a constant 1: with one lemon of m = 3 among the four
    nodes, c = 1 - 1/4 + 3/4 = 1.5, so a normal node lasts 1.5 and the lemon 0.5. Seed 0 puts
    the lemon on node 0 (slot 0 at the start; nodes 2, 3 idle); nodes new at 0. Rows are
    (time, slot, node); a tie in time goes to the lower slot.

    any (the node idle longest, first in first out; the idle queue after each failure):
      0.5  s0 n0 -> n2 (to 2.0)  [3 0]       1.5  s1 n1 -> n3 (to 3.0)  [0 1]
      2.0  s0 n2 -> n0 (to 2.5)  [1 2]       2.5  s0 n0 -> n1 (to 4.0)  [2 0]
      3.0  s1 n3 -> n2 (to 4.5)  [0 3]       4.0  s0 n1 -> n0 (to 4.5)  [3 1]
      4.5  s0 n0 -> n3 (to 6.0)  [1 0]       4.5  s1 n2 -> n1 (to 6.0)  [0 2]
      6.0  s0 n3 -> n0 (to 6.5)  [2 3]       6.0  s1 n1 -> n2 (to 7.5)  [3 1]
      6.5  s0 n0 ...
    fewest_failures (node: failures so far; equal counts, the one idle longest):
      0.5  s0 n0:1 -> n2:0 (to 2.0)          1.5  s1 n1:1 -> n3:0 (to 3.0)
      2.0  s0 n2:1 -> n0:1 (to 2.5)          2.5  s0 n0:2 -> n1:1 (to 4.0)
      3.0  s1 n3:1 -> n2:1 (to 4.5)
      4.0  s0 n1:2 -> n3:1 (to 5.5)   the choice: any takes the lemon (idle longest), this n3
      4.5  s1 n2:2 -> n0:2 (to 5.0)          5.0  s1 n0:3 -> n1:2 (to 6.5)
      5.5  s0 n3:2 -> n2:2 (to 7.0)          6.5  s1 n1:3 -> n3:2 (to 8.0)
    Up to 6.5 the lemon fails 4 times under any (11 failures in all) and 3 times under
    fewest_failures (10)."""
    law = Deterministic(1.0)
    rows = {}
    for rule in ("any", "fewest_failures"):
        log = NodeFailureLog(law, 2, 1, 0, initial="new", chunk_seconds=1.0, lemons=(0.25, 3.0), place=(rule, 2))
        assert log.lemon.tolist() == [True, False, False, False]
        rows[rule] = list(zip(*[a.tolist() for a in _until(log, 6.51)]))
    assert rows["any"] == [(0.5, 0, 0), (1.5, 1, 1), (2.0, 0, 2), (2.5, 0, 0), (3.0, 1, 3), (4.0, 0, 1),
                           (4.5, 0, 0), (4.5, 1, 2), (6.0, 0, 3), (6.0, 1, 1), (6.5, 0, 0)]
    assert rows["fewest_failures"] == [(0.5, 0, 0), (1.5, 1, 1), (2.0, 0, 2), (2.5, 0, 0), (3.0, 1, 3),
                                       (4.0, 0, 1), (4.5, 1, 2), (5.0, 1, 0), (5.5, 0, 3), (6.5, 1, 1)]


def _fleet_rates(n, idle, share, m):
    """The job's long-run failure rate in units of a normal node's, per rule (exponential
    lifetimes, k = round(share N) lemons of the N = n + idle nodes, m times as often).

    any: a node serves an Exp(r) spell, then waits behind the ``idle`` nodes before it, which
    takes ``idle / L`` at the job's rate L: it serves a share ``f(r) = 1 / (1 + r idle / L)``
    of the time, and the n slots are full, ``sum f = n``, which fixes L (then L = sum r f too).
    fewest_failures (its fluid limit): every node's count grows at the same pace g (a node ahead
    waits, one behind is placed), so a node of rate r serves ``min(1, g / r)`` of the time; the
    n slots full fix g, and L = sum r f."""
    total = n + idle
    k = round(share * total)
    fifo = optimize.brentq(lambda L: k / (1 + m * idle / L) + (total - k) / (1 + idle / L) - n, 1e-6, 1e9)
    served = lambda g: k * min(1.0, g / m) + (total - k) * min(1.0, g)  # noqa: E731
    g = optimize.brentq(lambda g: served(g) - n, 1e-9, m)
    fewest = k * m * min(1.0, g / m) + (total - k) * min(1.0, g)
    return {"any": fifo, "fewest_failures": fewest, "lam0": 1.0 / (1.0 - k / total + m * k / total)}


def test_fewest_failures_lowers_the_jobs_failure_rate_to_the_computed_limits():
    """400 slots, 100 idle nodes, 15 % lemons failing 6 times as often: the job's failure rate
    over [20, 60] mean lifetimes, per seed and paired on the same seeds, against the two
    limits above (585.2 and 457.1 normal-node rates; the slot model's is 700). Within 4
    standard errors over 8 seeds, and fewest_failures below any on every seed."""
    n, idle, share, m = 400, 100, 0.15, 6.0
    want = _fleet_rates(n, idle, share, m)
    got = {"any": [], "fewest_failures": []}
    for seed in range(8):
        for rule in got:
            log = NodeFailureLog(Exponential(1.0), n, 1, seed, chunk_seconds=1.0, lemons=(share, m),
                                 place=(rule, idle), initial="new")
            t, _, _ = _until(log, 60.0)
            got[rule].append(((t >= 20.0).sum() / 40.0) / want["lam0"])
    a, f = np.array(got["any"]), np.array(got["fewest_failures"])
    for x, w in ((a, want["any"]), (f, want["fewest_failures"])):
        assert abs(x.mean() - w) < 4 * x.std(ddof=1) / math.sqrt(x.shape[0]), (x.mean(), w)
    d = a - f
    assert (d > 0).all()
    assert abs(d.mean() - (want["any"] - want["fewest_failures"])) < 4 * d.std(ddof=1) / math.sqrt(d.shape[0])


def test_without_lemons_the_rules_do_not_change_the_rate():
    """Identical nodes: a placement changes who fails, not how often: the job's rate over a
    window is n (in node rates) under both rules."""
    n, idle = 300, 50
    for rule in ("any", "fewest_failures"):
        log = NodeFailureLog(Exponential(1.0), n, 1, 2, chunk_seconds=1.0, place=(rule, idle))
        t, _, _ = _until(log, 40.0)
        assert abs(t.shape[0] - 40.0 * n) < 4 * math.sqrt(40.0 * n)


@pytest.mark.parametrize("rule", ["any", "fewest_failures"])
@pytest.mark.parametrize("p, seed", [(0.3, 0), (1.0, 1)])
def test_a_fixed_lemon_node_stays_fixed_wherever_it_goes(rule, p, seed):
    """lemon_fix with a placement: each lemon *node*'s failures as a lemon are Geometric(p)
    (a uniform per lemon failure), whatever slots it serves in: over a horizon where every
    lemon is fixed, the k lemons fail k / p times as lemons (variance k (1 - p) / p^2); a
    fixed node then fails at the normal rate, and its row's node is never a lemon after its
    fix time."""
    n, idle, share, m = 200, 50, 0.2, 5.0
    log = NodeFailureLog(Exponential(1.0), n, 1, seed, chunk_seconds=1.0, lemons=(share, m, p),
                         place=(rule, idle))
    lem0 = log.lemon.copy()
    k = int(lem0.sum())
    assert k == round(share * (n + idle))
    t, _, u = _until(log, 400.0)
    assert not log.lemon.any() and np.isfinite(log.fixed_at[lem0]).all() and np.isinf(log.fixed_at[~lem0]).all()
    as_lemon = lem0[u] & (t <= log.fixed_at[u])
    sd = math.sqrt(k * (1 - p)) / p
    assert abs(int(as_lemon.sum()) - k / p) <= 4 * sd + 1e-9
    # each lemon's last failure as a lemon is its fix
    for node in np.flatnonzero(lem0)[:20]:
        assert t[u == node][as_lemon[u == node]].max() == log.fixed_at[node]


# -- the runs ----------------------------------------------------------------------------------------


def test_place_slot_and_no_key_run_bit_for_bit():
    plain, slot = _file({"lemon_share": 0.15, "lemon_rate": 6}), _file({"lemon_share": 0.15, "lemon_rate": 6,
                                                                         "place": "slot"})
    assert plain.scenario.failures == slot.scenario.failures
    assert "place" not in plain.scenario.failures.to_dict()
    for pol in (CheckpointOnly(interval=600.0), SpareCheckpoint(2, interval=600.0)):
        assert _numbers(simulate(plain.scenario, pol, seed=1)) == _numbers(simulate(slot.scenario, pol, seed=1))


def test_a_run_on_the_nodes_with_the_fewest_failures_sees_fewer_failures_paired():
    """The file's job (32 slots, 8 spares and 2 standbys idle, 15 % lemons x6): checkpoint-only
    on the same 12 seeds, fewest_failures against any. The job's failures fall on average, paired,
    by more than 3 standard errors (the log's limits above put the rate at 0.78 of any's: the
    job is short, so less)."""
    fleet = {"lemon_share": 0.15, "lemon_rate": 6, "standbys": 2}
    runs = {r: _file({**fleet, "place": r}) for r in ("any", "fewest_failures")}
    fm = runs["fewest_failures"].scenario.failures
    assert (fm.place, fm.place_pool) == ("fewest_failures", 10)
    assert "placement: 10 idle nodes, a failed node's slot taking the idle node with the fewest" in \
        runs["fewest_failures"].rate_note
    sc = {r: sf.scenario.replace(n_steps=60_000) for r, sf in runs.items()}
    d = np.array([simulate(sc["any"], CheckpointOnly(interval=600.0), seed=s).failures_seen
                  - simulate(sc["fewest_failures"], CheckpointOnly(interval=600.0), seed=s).failures_seen
                  for s in range(12)], dtype=float)
    assert d.mean() > 3 * d.std(ddof=1) / math.sqrt(d.shape[0]), d


@pytest.mark.parametrize("pol", [CheckpointOnly(interval=120.0), SpareCheckpoint(3, interval=200.0)],
                         ids=lambda p: p.name)
@pytest.mark.parametrize("rule", ["any", "fewest_failures"])
def test_placed_runs_equal_the_reference(pol, rule):
    fm = NodeRenewals(gpus_per_node=8, lemon_share=0.25, lemon_rate=5.0, place=rule, place_pool=3)
    rp = Repairs(swap=20.0, spares=2, time=900.0, rejoin=15.0, standbys=1)
    sc = Scenario(12, n_steps=120, t_compute=10.0, t_allreduce=1.0, failure_model=fm, system_mtbf=150.0,
                  weibull_shape=0.8, gpus_per_group=16, restart_time=40.0, checkpoint_time=6.0, jitter=0.1,
                  max_wall_factor=40.0, repair=rp)
    for seed in range(3):
        fast, _ = assert_same(sc, pol, seed)
        assert fast.failures_seen > 0


@pytest.mark.parametrize("rule", ["any", "fewest_failures"])
@pytest.mark.parametrize("k, idle, kw", [(3, 4, dict(lemons=(0.3, 6.0, 0.3))), (1, 2, {}), (2, 1, dict(frailty=0.8))],
                         ids=["k3-lemons-fixed", "k1-pool-runs-dry", "k2-frailty"])
def test_placed_retirement_is_the_step_by_step_oracle(rule, k, idle, kw):
    """retire_after with a placement, bit for bit against the oracle: each row's time, slot,
    node and flag; a node retires at its own k-th failure wherever it ran, and once the idle
    nodes are gone the slots empty one by one."""
    n, npg, end = 12, 3, 4_000.0
    law = Exponential(10.0)
    log = NodeFailureLog(law, n // npg, npg, 5, chunk_seconds=7.0, place=(rule, idle), retire_after=k,
                         lemons=kw.get("lemons"), frailty=kw.get("frailty", 0.0))
    t, g, u = _until(log, end)
    rows = oracle(law, n, idle, 5, rule, end, retire_after=k, **kw)
    assert t.tolist() == [r[0] for r in rows] and u.tolist() == [r[2] for r in rows]
    assert g.tolist() == [r[1] // npg for r in rows]
    assert log.retire_flags()[: t.shape[0]].tolist() == [r[3] for r in rows]


@pytest.mark.parametrize("rule", ["any", "fewest_failures"])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_every_node_of_the_fleet_fails_k_times_then_the_log_ends(rule, k):
    """Run long enough, a fleet of n + idle nodes that retire at k failures gives exactly
    k (n + idle) failures, k per node, each node's last one flagged, and nothing after: a
    closed form of the placement's retirement, with no draw in it."""
    n, idle = 6, 3
    log = NodeFailureLog(Exponential(1.0), n, 1, 11, chunk_seconds=50.0, place=(rule, idle), retire_after=k)
    t, _, u = _until(log, 5_000.0)
    assert t.shape[0] == k * (n + idle)
    assert np.array_equal(np.bincount(u, minlength=n + idle), np.full(n + idle, k))
    flags = log.retire_flags()
    assert flags.sum() == n + idle
    last = {int(x): i for i, x in enumerate(u)}  # each node's last row
    assert sorted(last.values()) == np.flatnonzero(flags).tolist()


@pytest.mark.parametrize("pol", [CheckpointOnly(interval=120.0), SpareCheckpoint(3, interval=200.0)],
                         ids=lambda p: p.name)
@pytest.mark.parametrize("k, spares, standbys, dry", [(2, 3, 1, False), (1, 1, 0, True)], ids=["shrinks", "runs-dry"])
def test_placed_retirement_runs_equal_the_reference(pol, k, spares, standbys, dry):
    """The run's pool shrinks by the placement's retirements as by the slots' (the reference reads
    the same flags): the fast paths equal it, up to a fleet retired whole (the log then ends,
    the job waits for a node that never comes and stops at the wall limit)."""
    fm = NodeRenewals(gpus_per_node=8, lemon_share=0.25, lemon_rate=5.0, lemon_fix=0.5, place="fewest_failures",
                      place_pool=spares + standbys, retire_after=k)
    rp = Repairs(swap=20.0, spares=spares, time=900.0, rejoin=15.0, standbys=standbys, retire_after=k)
    sc = Scenario(12, n_steps=120, t_compute=10.0, t_allreduce=1.0, failure_model=fm, system_mtbf=150.0,
                  gpus_per_group=16, restart_time=40.0, checkpoint_time=6.0, jitter=0.1,
                  max_wall_factor=40.0 if not dry else 8.0, repair=rp)
    retired, finished = 0.0, []
    for seed in range(3):
        fast, _ = assert_same(sc, pol, seed)
        assert fast.failures_seen > 0
        retired += fast.retired_gpu_hours
        finished.append(fast.finished)
    assert retired > 0  # some nodes did retire on these seeds
    assert all(finished) != dry  # a fleet of 13 or 14 nodes retiring at their first failure runs dry


@pytest.mark.parametrize("rule", ["any", "fewest_failures"])
@pytest.mark.parametrize("fix, k", [(0.3, 0), (1.0, 0), (0.5, 3)])
def test_placed_frailty_lemons_are_the_step_by_step_oracle(rule, fix, k):
    """Lemons from the frailty with a placement, bit for bit against the oracle: a fix redraws
    the node's multiplier (past several blocks of uniforms and gammas), a retirement none."""
    n, npg, idle, end, v = 12, 3, 4, 20_000.0, 0.7
    law = Exponential(10.0)
    log = NodeFailureLog(law, n // npg, npg, 3, chunk_seconds=7.0, place=(rule, idle), frailty=v,
                         frailty_lemons=fix, retire_after=k)
    t, g, u = _until(log, end)
    rows = oracle(law, n, idle, 3, rule, end, frailty=v, frailty_fix=fix, retire_after=k)
    # past a block of uniforms (and of gammas with fix = 1); with retirement the fleet retires whole
    assert len(rows) > _PLACE_DRAWS if not k else len(rows) == k * (n + idle)
    assert t.tolist() == [r[0] for r in rows] and u.tolist() == [r[2] for r in rows]
    assert g.tolist() == [r[1] // npg for r in rows]


@pytest.mark.parametrize("v", [0.25, 0.4])
def test_placed_frailty_fixed_at_every_failure_runs_at_one_minus_v(v):
    """A fix after every failure redraws the node's multiplier, and "any" takes the idle node
    waiting longest whatever its multiplier: each lifetime is then a fresh E / Z, Z ~ Gamma(1/v, v),
    of mean E[1/Z] = 1 / (1 - v) law means, so the job's long-run rate is n (1 - v) per law mean
    (the slot rule's closed form, docs/model.md, now on moving nodes). The renewal count's
    standard deviation is sqrt(n T Var(G) / E[G]^3) with E[G^2] = 2 E[1/Z^2] = 2 / ((1 - v)(1 - 2 v))."""
    n, idle, T = 20, 5, 5_000.0
    log = NodeFailureLog(Exponential(1.0), n, 1, 7, chunk_seconds=50.0, place=("any", idle), frailty=v,
                         frailty_lemons=1.0)
    t, _, _ = _until(log, T)
    mean_g = 1.0 / (1.0 - v)
    var_g = 2.0 / ((1.0 - v) * (1.0 - 2.0 * v)) - mean_g ** 2
    expected, sd = n * T / mean_g, math.sqrt(n * T * var_g / mean_g ** 3)
    assert abs(t.shape[0] - expected) < 4 * sd + 2 * n, (t.shape[0], expected, sd)


# a placed fleet of frailty lemons against the reference: tests/test_fleet_frailty.py


@pytest.mark.parametrize("name", ["ckpt", "rep", "spare", "elastic"])
def test_a_fleet_retired_whole_ends_its_log_and_every_path_stops(name):
    """Regression (found by the fuzz suite's ``spare map`` fleet axes): once every node of a
    placed fleet has retired, the log is complete (no failure is left); the sources that read
    "the next rows" asked it for more for ever (a memory restore looking for failures at the
    restart's instant, the reference's next failure). Now they find none: the run waits on the
    empty pool and stops at the wall limit, the fast paths equal to the reference."""
    from spare_core.commands.filejob import file_policy

    sf = load_scenario_file(Path(__file__).parent / "data" / "fleet_retired_whole.toml")
    pol = file_policy(sf, name, 2)
    fast, _ = assert_same(sf.scenario, pol, 0)
    log = sf.scenario.failures.log(sf.scenario.n_groups, 0)
    while log.horizon < math.inf:
        log.extend()
    n_nodes = sf.scenario.n_groups * 2 + 2  # 6 job nodes, a spare and a standby
    assert len(log.times) == 2 * n_nodes  # each node's two failures, then none
    assert fast.failures_seen <= 2 * n_nodes


def test_the_file_places_and_retires():
    """fleet.place with fleet.retire_after reads and runs; the note names both."""
    sf = _file({"place": "fewest_failures", "retire_after": 2, "lemon_share": 0.2, "lemon_rate": 4})
    fm = sf.scenario.failures
    assert (fm.place, fm.retire_after) == ("fewest_failures", 2) and sf.scenario.repair.retire_after == 2
    r = simulate(sf.scenario.replace(n_steps=2_000), CheckpointOnly(interval=600.0), seed=0)
    assert r.failures_seen > 0


# -- the keys ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fleet, tables, words", [
    ({"place": "best"}, {}, "fleet.place must be one of"),
    ({"place": "any"}, {"repair": {"time": "2 h"}}, "fleet.place needs [repair] with a finite repair.spares"),
    ({"place": "any"}, {"repair": {"spares": 0, "time": "2 h"}}, "fleet.place needs at least one idle node"),
    ({"place": "any"}, {"failures": {"model": "per-unit", "mtbf": "1 h"}}, "fleet.place needs failures.model = 'node'"),
])
def test_bad_placements_are_refused_naming_the_key(fleet, tables, words):
    with pytest.raises(ScenarioFileError) as e:
        _file(fleet, **tables)
    assert words in str(e.value), str(e.value)


@pytest.mark.parametrize("kw, words", [
    (dict(place="near"), "fleet.place must be one of"),
])
def test_the_model_refuses_bad_placements(kw, words):
    with pytest.raises(ValueError) as e:
        NodeRenewals(system_mtbf=100.0, gpus_per_group=8, **kw)
    assert words in str(e.value)


def test_the_limits_cap_a_nodes_service_at_all_of_the_time():
    """The example's fleet (128 slots, 10 idle, 21 lemons x4): equal counts would have the
    normal nodes serve more than all of the time, so they serve all of it and the lemons fill
    the other 11 slots: 117 + 11 x 4 = 161 normal-node rates under fewest_failures."""
    r = _fleet_rates(128, 10, 0.15, 4.0)
    assert r["fewest_failures"] == pytest.approx(117 + 11 * 4, rel=1e-9)
    assert r["fewest_failures"] < r["any"] < 128 / r["lam0"]


def test_the_example_reads_and_runs():
    sf = load_scenario_file(EXAMPLES / "fleet_placement.toml")
    fm = sf.scenario.failures
    assert (fm.place, fm.place_pool, fm.lemon_share, fm.lemon_rate) == ("fewest_failures", 10, 0.15, 4.0)
    assert "lemons: 0.15 of the nodes failing x4" in fm.describe(sf.scenario.n_groups)
    sc = sf.scenario.replace(n_steps=20_000)
    for pol in (CheckpointOnly(), SpareCheckpoint(3)):
        r = simulate(sc, pol, seed=0)
        assert r.finished and r.failures_seen > 0 and _numbers(r) == _numbers(simulate(sc, pol, seed=0))


def test_a_pool_swept_by_spare_advise_moves_the_placements_idle_nodes():
    """spare advise's spare-pool variants and its spares sweep change repair.spares: the node
    log's idle nodes follow (spares plus standbys), as a file with that pool would read; a pool
    of 0 with no standby leaves no idle node, and every failed node comes back to its slot."""
    from spare_core.commands.variants import knob_variants, spares_variants

    sf = _file({"lemon_share": 0.15, "lemon_rate": 6, "standbys": 2, "place": "fewest_failures"})
    for v in knob_variants(sf.scenario) + spares_variants(sf.scenario, [0, 3, 16]):
        if v.key == "repair.spares":
            again = _file({"lemon_share": 0.15, "lemon_rate": 6, "standbys": 2, "place": "fewest_failures"},
                          repair={"spares": v.value, "time": "2 h"})
            assert v.scenario.failures == again.scenario.failures and v.scenario.failures.place_pool == v.value + 2
    bare = NodeRenewals(system_mtbf=100.0, gpus_per_group=8, lemon_share=0.2, lemon_rate=4.0, place="any",
                        place_pool=0)
    log = bare.log(20, 1)
    t, g, u = _until(log, 50 * 100.0 * 20)
    assert g.tolist() == u.tolist()  # one node a group: every row's node is its slot's own


def test_the_model_round_trips_and_says_what_it_holds():
    fm = NodeRenewals(system_mtbf=100.0, gpus_per_group=8, lemon_share=0.15, lemon_rate=4.0,
                      place="fewest_failures", place_pool=5)
    assert NodeRenewals.from_dict(fm.to_dict()) == fm
    assert "5 idle nodes beyond the job's, a failed node's slot taking the one with the fewest failures" in fm.describe(4)
