"""The compiled what-if replay (``_whatif_replay``) against a slow pure-Python reference on random
graphs, its checking pass on bad templates, and the replay properties the analysis rests on:
keeping everything recorded is (a), keeping nothing is (b), a trace at its ideal has S = 1,
the replay is monotone in every duration, and two replicas stand for an untouched DP rank's peers."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spare_core._native import load
from spare_core.stragglers import WhatIf, analyse, synthetic_trace

kernel = load("_whatif_replay")


@st.composite
def graphs(draw):
    """A random template: nodes of 1-3 ops in topological order, deps on earlier nodes only,
    op numbers permuted; with S steps, D replicas, a replica selection and a keep mask."""
    k = draw(st.integers(1, 8))
    sizes = [draw(st.integers(1, 3)) for _ in range(k)]
    n = sum(sizes)
    perm = draw(st.permutations(list(range(n))))
    nodes, pos = [], 0
    for s in sizes:
        nodes.append([perm[pos + i] for i in range(s)])
        pos += s
    deps = {j: [] for j in range(n)}
    for ki, members in enumerate(nodes):
        earlier = [u for m in nodes[:ki] for u in m]
        for j in members:
            if earlier:
                deps[j] = sorted(set(draw(st.lists(st.sampled_from(earlier), max_size=3))))
    sync = [draw(st.integers(0, 1)) for _ in range(k)]
    S, D = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    I = draw(st.integers(1, 4))
    inst = [draw(st.integers(0, D - 1)) for _ in range(I)]
    seed = draw(st.integers(0, 2**31))
    return nodes, deps, sync, S, D, inst, seed


def arrays(nodes, deps, sync):
    n = len(deps)
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(deps[j]) for j in range(n)])
    idx = np.array([u for j in range(n) for u in deps[j]], dtype=np.int32)
    nptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    nptr[1:] = np.cumsum([len(m) for m in nodes])
    ops = np.array([j for m in nodes for j in m], dtype=np.int32)
    return ptr, idx, nptr, ops, np.array(sync, dtype=np.uint8)


def reference(nodes, deps, sync, rec, inst, keep, ideal):
    """Fixed-point relaxation over every op until nothing changes (no topological order used)."""
    S, I, n = rec.shape[0], len(inst), len(deps)
    node_of = {j: k for k, m in enumerate(nodes) for j in m}
    out = []
    for s in range(S):
        dur = [[rec[s, inst[i], j] if keep[i, j] else ideal[j] for j in range(n)] for i in range(I)]
        end = [[0.0] * n for _ in range(I)]
        for _ in range(n + 2):
            start = [[max([end[i][u] for u in deps[j]], default=0.0) for j in range(n)] for i in range(I)]
            g = [[max(start[i][m] for m in nodes[node_of[j]]) for j in range(n)] for i in range(I)]
            for j in range(n):
                if sync[node_of[j]]:
                    top = max(g[i][j] for i in range(I))
                    for i in range(I):
                        g[i][j] = top
            end = [[g[i][j] + dur[i][j] for j in range(n)] for i in range(I)]
        out.append(max(max(row) for row in end))
    return np.array(out)


@given(graphs())
def test_the_kernel_matches_a_fixed_point_reference_on_random_graphs(case):
    nodes, deps, sync, S, D, inst, seed = case
    rng = np.random.default_rng(seed)
    n = len(deps)
    rec = rng.exponential(1.0, (S, D, n))
    keep = (rng.random((len(inst), n)) < 0.5).astype(np.uint8)
    ideal = rng.exponential(1.0, n)
    got = kernel.replay(*arrays(nodes, deps, sync), rec, np.array(inst, dtype=np.int64), keep, ideal)
    np.testing.assert_allclose(got, reference(nodes, deps, sync, rec, inst, keep, ideal), rtol=1e-12)


@given(graphs())
def test_the_replay_is_monotone_in_every_duration(case):
    nodes, deps, sync, S, D, inst, seed = case
    rng = np.random.default_rng(seed)
    n = len(deps)
    rec = rng.exponential(1.0, (S, D, n))
    keep = np.ones((len(inst), n), dtype=np.uint8)
    a = arrays(nodes, deps, sync)
    base = kernel.replay(*a, rec, np.array(inst, dtype=np.int64), keep, np.zeros(n))
    more = kernel.replay(*a, rec + rng.exponential(0.5, rec.shape), np.array(inst, dtype=np.int64), keep, np.zeros(n))
    assert (more >= base - 1e-12).all()


def test_effective_durations_subtract_the_last_peer_arrival():
    # op 0 alone; ops 1 and 2 a group (synced over the two replicas)
    a = arrays([[0], [1, 2]], {0: [], 1: [0], 2: []}, [0, 1])
    start = np.array([[[0.0, 1.0, 0.5], [0.0, 2.0, 0.2]]])
    end = np.array([[[1.0, 3.0, 2.5], [1.5, 3.0, 3.5]]])
    out = kernel.effective(*a, start, end)
    np.testing.assert_allclose(out, [[[1.0, 1.0, 0.5], [1.5, 1.0, 1.5]]])


def _good():
    return arrays([[0], [1]], {0: [], 1: [0]}, [0, 0])


@pytest.mark.parametrize("change, message", [
    (lambda a: (np.array([0, 0, 2], np.int64),) + a[1:], "dep_ptr"),
    (lambda a: (a[0], np.array([5], np.int32)) + a[2:], "dep_idx"),
    (lambda a: a[:2] + (np.array([0, 1, 3], np.int64),) + a[3:], "node_ptr"),
    (lambda a: a[:3] + (np.array([1, 1], np.int32),) + a[4:], "node_ops"),
    (lambda a: a[:3] + (np.array([1, 0], np.int32),) + a[4:], "topological"),
])
def test_the_kernel_refuses_a_bad_template_before_reading_it(change, message):
    a = change(_good())
    rec = np.ones((1, 1, 2))
    with pytest.raises(ValueError, match=message):
        kernel.replay(*a, rec, np.zeros(1, np.int64), np.ones((1, 2), np.uint8), np.ones(2))
    with pytest.raises(ValueError, match=message):
        kernel.effective(*a, rec, rec)


def test_the_kernel_refuses_bad_replicas_and_shapes():
    a = _good()
    rec = np.ones((1, 1, 2))
    with pytest.raises(ValueError, match="inst"):
        kernel.replay(*a, rec, np.array([1], np.int64), np.ones((1, 2), np.uint8), np.ones(2))
    with pytest.raises(ValueError, match="inst"):
        kernel.replay(*a, rec, np.array([-1], np.int64), np.ones((1, 2), np.uint8), np.ones(2))
    with pytest.raises(ValueError, match="keep"):
        kernel.replay(*a, rec, np.zeros(1, np.int64), np.ones((2, 2), np.uint8), np.ones(2))
    with pytest.raises(ValueError, match="ideal"):
        kernel.replay(*a, rec, np.zeros(1, np.int64), np.ones((1, 2), np.uint8), np.ones(3))
    with pytest.raises(ValueError, match="rec"):
        kernel.replay(*a, np.ones((1, 1, 3)), np.zeros(1, np.int64), np.ones((1, 2), np.uint8), np.ones(2))
    assert kernel.CONSTANTS["OK"] == 0 and len(set(kernel.CONSTANTS.values())) == len(kernel.CONSTANTS)


@pytest.fixture(scope="module")
def engine():
    return WhatIf(synthetic_trace(dp=3, pp=3, microbatches=4, steps=3, slow={4: 1.7}, jitter=0.1, seed=3))


def test_keeping_everything_is_a_and_nothing_is_b(engine):
    np.testing.assert_array_equal(engine.keep(), engine.recorded())
    np.testing.assert_array_equal(engine.keep(dp_ranks=[]), engine.ideal_steps())
    np.testing.assert_array_equal(engine.fix(), engine.ideal_steps())
    np.testing.assert_array_equal(engine.fix(dp_ranks=[]), engine.recorded())


@given(st.integers(0, 2), st.integers(0, 2))
def test_two_replicas_stand_for_the_untouched_ones(engine, d, p):
    D, n = engine.trace.sizes.dp, engine.template.n
    full = np.zeros((D, n), dtype=np.uint8)
    full[d] = engine.trace.op_stage == p
    np.testing.assert_array_equal(engine.keep_worker(d, p), engine.run(np.arange(D), full))
    rank = int(engine.trace.ranks[d, p])
    np.testing.assert_array_equal(engine.keep(workers=[rank]), engine.run(np.arange(D), full))


def test_the_synthetic_replay_reproduces_the_trace_it_wrote(engine):
    # no launch delays in a synthetic trace: (a) is the recorded step time exactly
    np.testing.assert_allclose(engine.recorded(), engine.trace_steps(), rtol=1e-12)


@pytest.mark.parametrize("vpp, mbs", [(1, 3), (2, 4)])
def test_a_trace_at_its_ideal_has_no_slowdown(vpp, mbs):
    tr = synthetic_trace(dp=2, pp=2, vpp=vpp, microbatches=mbs, steps=2, jitter=0.0, seed=0)
    for rule in ("mean", "median", "stage", "position"):
        r = analyse(tr, ideal=rule)
        assert r.slowdown == pytest.approx(1.0, rel=1e-12)
        assert all(v == pytest.approx(1.0, rel=1e-12) for t in (r.by_worker, r.by_stage, r.by_dp_rank, r.by_optype)
                   for v in t.values())


@given(st.floats(1.0, 3.0), st.integers(0, 5))
def test_a_slower_worker_never_speeds_the_job_up(factor, rank):
    # with the stage rule a stage's median is its healthy peers' time (2 of 3): every duration is
    # at least its ideal, so by monotonicity S >= 1 (under the mean rule S_c < 1 happens: the docs)
    r = analyse(synthetic_trace(dp=3, pp=2, microbatches=2, steps=1, slow={rank: factor}, jitter=0.0, seed=0),
                ideal="stage")
    assert r.slowdown >= 1.0 - 1e-12
    assert r.by_worker[rank] == pytest.approx(max(r.by_worker.values()))


_small_ints = st.lists(st.integers(-3, 6), max_size=8)


@given(_small_ints, _small_ints, _small_ints, _small_ints, st.lists(st.integers(-2, 3), min_size=1, max_size=3))
def test_arbitrary_index_arrays_are_refused_or_replayed_never_read_out_of_bounds(ptr, idx, nptr, ops, inst):
    # run on the bounds-checked build too (SPARE_CORE_DEBUG=1): an out-of-bounds read raises there
    a = (np.array(ptr, np.int64), np.array(idx, np.int32), np.array(nptr, np.int64), np.array(ops, np.int32))
    nodes = max(len(nptr) - 1, 0)
    sync = np.zeros(nodes, np.uint8)
    n = max(len(ptr) - 1, 0)
    rec = np.ones((1, 2, n))
    try:
        out = kernel.replay(*a, sync, rec, np.array(inst, np.int64), np.ones((len(inst), n), np.uint8), np.ones(n))
        assert out.shape == (1,) and np.isfinite(out).all()
    except ValueError:
        pass
    try:
        kernel.effective(*a, sync, rec, rec)
    except ValueError:
        pass


def _lists(t):
    n = t.n
    deps = {j: [int(u) for u in t.dep_idx[t.dep_ptr[j]:t.dep_ptr[j + 1]]] for j in range(n)}
    nodes = [[int(m) for m in t.node_ops[t.node_ptr[k]:t.node_ptr[k + 1]]] for k in range(t.node_ptr.size - 1)]
    return nodes, deps, [int(x) for x in t.node_sync]


@settings(max_examples=12)
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([1, 2]), st.integers(1, 2), st.floats(0.0, 0.3),
       st.integers(0, 2**20))
def test_small_random_traces_replay_as_the_reference_and_as_recorded(dp, pp, vpp, mb_per_pp, jitter, seed):
    mbs = mb_per_pp * pp if vpp > 1 else mb_per_pp + 1
    tr = synthetic_trace(dp=dp, pp=pp, vpp=vpp, microbatches=mbs, steps=2, slow={0: 1.4}, last_stage=1.2,
                         jitter=jitter, seed=seed)
    w = WhatIf(tr)
    nodes, deps, sync = _lists(w.template)
    D, n = tr.sizes.dp, w.template.n
    ones = np.ones((D, n), dtype=np.uint8)
    np.testing.assert_allclose(w.recorded(), reference(nodes, deps, sync, w.rec, list(range(D)), ones, w.ideal),
                               rtol=1e-12)
    np.testing.assert_allclose(w.ideal_steps(), reference(nodes, deps, sync, w.rec, [0], ones[:1] * 0, w.ideal),
                               rtol=1e-12)
    np.testing.assert_allclose(w.recorded(), w.trace_steps(), rtol=1e-9)


@given(st.floats(1.0, 3.0), st.integers(0, 5))
def test_with_a_healthy_majority_the_position_rule_never_gives_s_below_one(factor, rank):
    # the position rule's ideal is each op's median over DP ranks and steps: with 2 of 3 DP ranks
    # healthy and no jitter every duration is at least its ideal, so S >= 1 by monotonicity
    r = analyse(synthetic_trace(dp=3, pp=2, microbatches=2, steps=2, slow={rank: factor}, jitter=0.0, seed=1),
                ideal="position")
    assert r.slowdown >= 1.0 - 1e-12
