"""The what-if analysis names what was planted in synthetic traces from the straggler model: a slow
GPU, an imbalanced last stage, sequence-length spread, fabric contention; the ideal rules; the
JSON document's keys; the measured slowdown handed to a step-time model."""
import json
import math

import numpy as np
import pytest

from spare_core.stragglers import IDEALS, WhatIfResult, analyse, measured_slowdown, synthetic_trace
from spare_core.stragglers.synth import schedule


@pytest.mark.parametrize("vpp, mbs, rank", [(1, 8, 9), (2, 8, 6)])
def test_a_planted_slow_gpu_is_named(vpp, mbs, rank):
    r = analyse(synthetic_trace(dp=4, pp=4, vpp=vpp, microbatches=mbs, steps=4, slow={rank: 1.6}, seed=1))
    d, p = rank % 4, rank // 4
    assert r.fixes["worker"].label == str(rank)
    assert r.fixes["dp_rank"].label == str(d) and r.fixes["stage"].label == str(p)
    assert r.worst_workers == [rank]
    assert r.worker_share > 0.8 and r.stage_share < 0.2
    assert r.fixes["worker"].saves > 0.1
    assert "individual worker" in r.report()


def test_an_imbalanced_last_stage_is_named():
    r = analyse(synthetic_trace(dp=4, pp=4, steps=4, last_stage=1.5, seed=2))
    assert max(r.by_stage, key=r.by_stage.get) == 3
    assert r.stage_share > 0.8 and r.worker_share < 0.2
    assert "stage imbalance" in r.report()
    # with the per-stage ideal, the imbalance is nobody's fault
    assert analyse(synthetic_trace(dp=4, pp=4, steps=4, last_stage=1.5, jitter=0.0, seed=2),
                   ideal="stage").slowdown == pytest.approx(1.0)


def test_sequence_length_spread_blames_no_single_worker():
    r = analyse(synthetic_trace(dp=8, pp=2, steps=6, seq_spread=0.3, jitter=0.0, seed=3))
    assert r.slowdown > 1.1
    assert r.worker_share < 0.5 and r.stage_share < 0.5
    assert np.ptp(list(r.per_step.values())) > 0.01
    assert "spread over workers" in r.report()


def test_fabric_contention_shows_in_the_communication_op_types():
    r = analyse(synthetic_trace(dp=8, pp=2, steps=8, contention=0.5, contention_factor=20.0, jitter=0.0, seed=4),
                ideal="median")
    comm = max(r.by_optype[o] for o in ("grads-reduce-scatter", "params-all-gather"))
    assert comm > max(r.by_optype["forward-compute"], r.by_optype["backward-compute"])
    contended = [s for s, v in r.per_step.items() if v > 1.05]
    assert 0 < len(contended) < 8


def test_the_schedules_hold_every_microbatch_once():
    for pp, mbs, vpp in ((4, 8, 1), (4, 8, 2), (2, 6, 3), (3, 2, 1)):
        for stage in schedule(pp, mbs, vpp):
            f = sorted((g, mb) for t, g, mb in stage if t == 0)
            b = sorted((g, mb) for t, g, mb in stage if t == 1)
            assert f == b and len(f) == mbs * vpp and len(set(f)) == len(f)
    with pytest.raises(ValueError, match="multiple of pp"):
        schedule(4, 6, 2)


def test_the_json_document():
    r = analyse(synthetic_trace(dp=2, pp=2, microbatches=2, steps=3, slow={3: 1.5}, seed=5))
    d = r.to_dict()
    doc = json.loads(json.dumps(d, allow_nan=False))
    for key in ("slowdown", "by_dp_rank", "by_stage", "by_optype", "by_worker", "per_step", "worker_share",
                "stage_share", "fixes", "step_time", "by_worker_per_step"):
        assert key in doc
    assert set(doc["by_worker"]) == {"0", "1", "2", "3"}
    assert set(doc["by_dp_rank"]) == {"0", "1"} and set(doc["by_stage"]) == {"0", "1"}
    assert "forward-compute" in doc["by_optype"]
    assert set(doc["per_step"]) == {"0", "1", "2"}
    assert doc["per_step"]["0"]["worst_worker"] == "3"
    assert math.isclose(doc["slowdown"], r.slowdown)
    assert "WhatIfResult(slowdown=" in repr(r)


def test_measured_slowdown_for_a_step_time_model():
    m = measured_slowdown(synthetic_trace(dp=2, pp=2, microbatches=4, steps=2, slow={2: 2.0}, jitter=0.0, seed=6))
    assert m.worst_worker == 2 and m.slowdown > 1.3 and 0 < m.evict_saves < 1
    assert json.dumps(m.to_dict(), allow_nan=False)


def test_bad_arguments_are_refused_up_front():
    tr = synthetic_trace(dp=2, pp=2, microbatches=2, steps=1)
    with pytest.raises(ValueError, match="ideal must be one of"):
        analyse(tr, ideal="mode")
    from spare_core.stragglers import WhatIf

    w = WhatIf(tr)
    with pytest.raises(ValueError, match="unknown operation type"):
        w.keep(optypes=["nap"])
    with pytest.raises(ValueError, match="stages must hold integers in 0..1"):
        w.keep(stages=[2])
    with pytest.raises(ValueError, match="no worker of rank 9"):
        w.fix(workers=[9])
    for kw, match in (({"slow": {99: 2.0}}, "no worker of rank 99"), ({"jitter": -1.0}, "jitter"),
                      ({"contention": 2.0}, "probability"), ({"steps": 0}, "steps"), ({"vpp": 2, "microbatches": 3},
                                                                                       "multiple of pp")):
        with pytest.raises(ValueError, match=match):
            synthetic_trace(dp=2, pp=2, **kw)
    assert IDEALS == ("mean", "median", "stage", "position")
    assert isinstance(analyse(tr), WhatIfResult)


def test_interleaved_traces_with_not_launched_p2p_records():
    kw = dict(dp=2, pp=2, vpp=2, microbatches=4, steps=3, slow={1: 1.6}, jitter=0.0, seed=7)
    plain, noops = analyse(synthetic_trace(**kw)), analyse(synthetic_trace(record_noops=True, **kw))
    assert noops.n_ops > plain.n_ops
    # the no-ops sit on the p2p streams and pull the p2p medians down: close, not equal
    assert noops.slowdown == pytest.approx(plain.slowdown, rel=0.02)
    assert noops.fixes["worker"].label == plain.fixes["worker"].label == "1"


@pytest.mark.parametrize("kw", [dict(dp=4, pp=1), dict(dp=1, pp=4), dict(dp=3, pp=3, vpp=3, microbatches=6),
                                dict(dp=3, pp=2, vpp=2, microbatches=4, overlap_grads=True),
                                dict(dp=2, pp=3, overlap_grads=True)])
def test_layouts_read_back_replay_as_recorded_and_name_the_slow_worker(kw):
    from spare_core.stragglers import Trace, trace_columns

    tr = synthetic_trace(steps=3, slow={1: 1.6}, seed=8, **kw)
    r = analyse(Trace.from_columns(trace_columns(tr, shuffle=2)))
    np.testing.assert_allclose(r.recorded, r.trace, rtol=1e-9)
    assert r.fixes["worker"].label == "1"
