"""The compiled restart loop (``_timeline.restart_epochs``): the epochs of a run whose every
failure restarts (checkpoint-only, with or without repairs and the memory tier) on a node
failure log, walked in C instead of one Python round trip per restart.

* Bit for bit the batch loop's results (``sim.run._run_batches``) on generated scenarios:
  every column of the run and the epochs' records; the step-by-step reference simulator
  checks both (tests/test_strategies_reference.py runs through this path too).
* Taken only where it applies: a handler that declares ``constant_restarts`` and has not been
  changed on the instance, a node log, no timeline.
* The kernel refuses inputs that would read out of bounds, and the log's array view follows
  its lists.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spare_core._native import load
from spare_core.events.nodes import NodeEpochs, NodeFailureLog
from spare_core.sim import CheckpointOnly, MemoryTier, Repairs, Scenario, simulate
from spare_core.sim import run as run_mod
from spare_core.sim.classes import FailureClass, FailureClasses
from spare_core.distributions import Exponential


def _slow(monkeypatch):
    """Route every run through the Python batch loop."""
    monkeypatch.setattr(run_mod, "_restart_epochs", lambda plan, src, mults, draws=None: run_mod._run_batches(
        plan, run_mod._clocked(plan, src), mults, False, draws))


@st.composite
def ckpt_cases(draw):
    n = draw(st.integers(1, 12))
    repair = None
    if draw(st.booleans()):
        repair = Repairs(swap=draw(st.sampled_from([0.0, 5.0, 30.0, 600.0])),
                         spares=draw(st.sampled_from([None, 0, 1, 2, 5])),
                         time=draw(st.sampled_from([0.0, 60.0, 400.0, 5000.0])),
                         rejoin=draw(st.sampled_from([0.0, 10.0, 40.0])))
    memory = None
    if draw(st.booleans()):
        memory = MemoryTier(save=draw(st.floats(0.5, 3.0)), every=draw(st.sampled_from([10.0, 30.0, 100.0])),
                            restore=draw(st.floats(0.0, 20.0)), copies=draw(st.integers(1, 3)))
    sc = Scenario(
        n,
        n_steps=draw(st.integers(1, 400)),
        t_compute=draw(st.floats(1.0, 20.0)),
        t_allreduce=draw(st.floats(0.0, 3.0)),
        gpus_per_group=draw(st.sampled_from([8, 16])),
        failure_model="node",
        system_mtbf=draw(st.floats(5.0, 600.0)),
        weibull_shape=draw(st.floats(0.4, 2.0)),
        restart_time=draw(st.sampled_from([0.0, 7.5, 60.0])),
        checkpoint_time=draw(st.floats(0.5, 20.0)),
        jitter=draw(st.sampled_from([0.0, 0.05, 0.3])),
        max_wall_factor=draw(st.floats(1.05, 30.0)),
        repair=repair,
        memory=memory,
    )
    if draw(st.booleans()):
        # failure classes: job-wide ones take no spare and keep host memory, detection delays restarts
        s = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
        det = draw(st.sampled_from([0.0, 4.0, Exponential(30.0)]))
        parts = [FailureClass("sw", s, "restart", detect=det), FailureClass("hw", 0.6 * (1 - s), "swap", detect=2.0),
                 FailureClass("odd", 1.0 - s - 0.6 * (1 - s), "swap", masked=False)]
        sc = sc.replace(failure_classes=FailureClasses(tuple(parts)))
    if draw(st.booleans()):  # the log on the job's compute clock (failures.clock)
        sc = sc.replace(failure_model=sc.failures.replace(clock="compute"))
    interval = draw(st.sampled_from(["auto", 0.0, 40.0, 150.0, math.inf]))
    return sc, CheckpointOnly(interval=interval), draw(st.integers(0, 2**31))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(ckpt_cases())
def test_compiled_restart_loop_equals_the_batch_loop(monkeypatch, case):
    sc, pol, seed = case
    taken = []
    real = run_mod._restart_epochs

    def spy(*a):
        taken.append(1)
        return real(*a)

    with monkeypatch.context() as m:
        m.setattr(run_mod, "_restart_epochs", spy)
        fast = simulate(sc, pol, seed=seed)
    assert taken, "the compiled loop was not taken"
    with monkeypatch.context() as m:
        _slow(m)
        slow = simulate(sc, pol, seed=seed)
    assert fast.to_dict() == slow.to_dict()
    # the timeline (the batch loop's) has the epochs the compiled loop recorded
    tl = simulate(sc, pol, seed=seed, timeline=True)
    assert tl.to_dict() == fast.to_dict()
    assert tl.epochs == tl.timeline.epoch_start.shape[0] == fast.restarts + 1


def test_a_run_with_many_restarts_hands_back_its_records(monkeypatch):
    """More restarts than one call records (4,096): the records are handed back and resumed."""
    sc = Scenario(4, n_steps=20_000, t_compute=1.0, t_allreduce=0.0, gpus_per_group=8, failure_model="node",
                  system_mtbf=3.0, weibull_shape=1.0, restart_time=0.0, checkpoint_time=0.1, max_wall_factor=4.0,
                  repair=Repairs(swap=0.0, spares=2, time=1.0, rejoin=0.0),
                  memory=MemoryTier(save=0.01, every=2.0, restore=0.0, copies=1))
    fast = simulate(sc, CheckpointOnly(1.0), seed=3)
    assert fast.restarts > 2 * run_mod._EPOCH_RECORDS
    # and more epochs than one chunk of failure classes (1,024): the classes are handed on
    cl = sc.replace(failure_classes=FailureClasses((FailureClass("sw", 0.4, "restart", detect=0.5),
                                                    FailureClass("hw", 0.6, "swap"))))
    fast_cl = simulate(cl, CheckpointOnly(1.0), seed=3)
    assert fast_cl.restarts > 2 * run_mod._CLASS_CHUNK and 0 < fast_cl.class_restarts < fast_cl.restarts
    _slow(monkeypatch)
    assert simulate(sc, CheckpointOnly(1.0), seed=3).to_dict() == fast.to_dict()
    assert simulate(cl, CheckpointOnly(1.0), seed=3).to_dict() == fast_cl.to_dict()


def test_a_handler_changed_on_the_instance_runs_the_batch_loop(monkeypatch):
    """``constant_restarts`` is the class's promise: an instance whose answers were replaced is
    asked for every batch."""
    sc = Scenario(6, n_steps=300, t_compute=5.0, t_allreduce=1.0, gpus_per_group=8, failure_model="node",
                  system_mtbf=60.0, restart_time=10.0, checkpoint_time=2.0)
    asked = []

    class Counting(CheckpointOnly):
        def handler(self, scenario):
            h = super().handler(scenario)
            base = h.on_failures

            def on_failures(groups):
                asked.append(groups.shape[0])
                return base(groups)

            h.on_failures = on_failures
            return h

    r = simulate(sc, Counting(50.0), seed=1)
    assert r.restarts > 0 and len(asked) >= r.restarts
    assert r.to_dict() == simulate(sc, CheckpointOnly(50.0), seed=1).to_dict()


def test_the_logs_array_view_follows_its_lists():
    from spare_core.distributions import Weibull

    log = NodeFailureLog(Weibull.from_mean(0.7, 50.0), 5, 2, 7, chunk_seconds=30.0)
    seen = 0
    for _ in range(40):
        log.extend()
        t, g = log.arrays()
        assert t.tolist() == log.times and g.tolist() == log.groups
        assert not t.flags.writeable and not g.flags.writeable
        seen = max(seen, t.shape[0])
    assert seen > 1024  # grown past the first buffer


def _kernel_inputs(n_groups=3, copies=1):
    k = load("_timeline")
    K = k.CONSTANTS
    params = np.zeros(K["N_PARAMS"])
    params[K["P_T_COMP"]], params[K["P_N_STEPS"]], params[K["P_INIT_DEPTH"]] = 1.0, 50.0, 1.0
    params[K["P_MAX_WALL"]], params[K["P_INTERVAL"]], params[K["P_MEM_EVERY"]] = 500.0, 5.0, 3.0
    state = k.new_state(1.0, 0.0)
    holders = (np.arange(n_groups)[:, None] + 1 + np.arange(copies)[None, :]) % n_groups
    return k, K, dict(state=state, params=params, io=np.zeros(K["N_EPOCH_IO"]), log_t=np.array([2.0, 7.5, 9.0]),
                      log_g=np.array([0, 2, 1]), horizon=10.0, rs=np.zeros(0), pool=np.zeros(0),
                      holders=holders.astype(np.int64), mult=np.ones(1000), rec_end=np.empty(8),
                      rec_start=np.empty(8))


def test_the_kernel_walks_a_small_log_by_hand():
    """Three failures at 2, 7.5 and 9 s, 1-s steps, a 1-s restart (from disk or memory): each
    failure restarts at its own time, the run resumes 1 s later, and at the log's horizon the
    kernel asks for more of it."""
    k, K, a = _kernel_inputs()
    a["params"][K["P_RESTART"]] = a["params"][K["P_MEM_RESTORE"]] = 1.0
    status = k.restart_epochs(*a.values())
    assert status == K["NEED_LOG"]
    n = int(a["io"][K["E_NREC"]])
    assert a["rec_end"][:n].tolist() == [2.0, 7.5, 9.0]
    assert a["rec_start"][:n].tolist() == [3.0, 8.5, 10.0]


@pytest.mark.parametrize("change, match", [
    (lambda a, K: a.update(io=np.zeros(3)), "wrong length"),
    (lambda a, K: a.update(log_g=np.array([0, 1])), "one length"),
    (lambda a, K: a.update(rec_end=np.empty(0), rec_start=np.empty(0)), "one length"),
    (lambda a, K: a["holders"].__setitem__((0, 0), 9), "holders"),
    (lambda a, K: a["io"].__setitem__(K["E_PHASE"], 7.0), "registers"),
    (lambda a, K: a["io"].__setitem__(K["E_NREC"], 99.0), "registers"),
    (lambda a, K: a["state"].__setitem__(K["ST_MULT_IDX"], 5000.0), "multiplier"),
    (lambda a, K: a.update(rs=np.zeros(3), pool=np.zeros(1)), "RepairBook"),
    (lambda a, K: a["params"].__setitem__(K["P_N_STEPS"], math.inf), "n_steps"),
    (lambda a, K: a.update(cls_flags=np.zeros(2, dtype=np.int8), cls_det=np.zeros(3)), "one length"),
    (lambda a, K: a.update(cls_flags=np.zeros(2, dtype=np.int8)), "go together"),
    (lambda a, K: a.update(cls_flags=np.zeros(1, dtype=np.int8), cls_det=np.array([-1.0])), "finite seconds"),
    (lambda a, K: a.update(cls_flags=np.array([5], dtype=np.int8), cls_det=np.zeros(1)), "cls_flags in 0..3"),
])
def test_the_kernel_refuses_what_would_read_out_of_bounds(change, match):
    k, K, a = _kernel_inputs()
    change(a, K)
    with pytest.raises(ValueError, match=match):
        k.restart_epochs(*a.values())


def test_the_kernel_walks_classes_by_hand():
    """The same log with classes: the first failure job-wide with 0.5 s of detection, the
    second a node's noticed after 2 s (its resume, 10.5 s, is past the log's horizon: the kernel
    asks for more log); the class arrays end there, so with more log it asks for the third
    epoch's class."""
    k, K, a = _kernel_inputs()
    a["params"][K["P_RESTART"]] = a["params"][K["P_MEM_RESTORE"]] = 1.0
    a.update(cls_flags=np.array([K["CL_FORCED"] | K["CL_WIDE"], 0], dtype=np.int8), cls_det=np.array([0.5, 2.0]))
    assert k.restart_epochs(*a.values()) == K["NEED_LOG"] and a["io"][K["E_EPOCH"]] == 2.0
    a.update(log_t=np.array([2.0, 7.5, 9.0, 12.0]), log_g=np.array([0, 2, 1, 0]), horizon=20.0)
    status = k.restart_epochs(*a.values())
    assert status == K["NEED_CLASSES"] and a["io"][K["E_EPOCH"]] == 2.0
    n = int(a["io"][K["E_NREC"]])
    assert a["rec_end"][:n].tolist() == [2.0, 7.5] and a["rec_start"][:n].tolist() == [3.5, 10.5]
    assert a["io"][K["E_NFORCED"]] == 1.0 and a["state"][K["ST_DETECT_TOTAL"]] == 2.5


def test_the_kernel_reports_a_group_outside_the_holders():
    k, K, a = _kernel_inputs()
    a["log_g"] = np.array([5, 0, 1])
    assert k.restart_epochs(*a.values()) == K["BAD_LOG"]


def test_node_epochs_is_the_source_the_fast_path_reads():
    sc = Scenario(6, n_steps=100, t_compute=5.0, t_allreduce=1.0, gpus_per_group=8, failure_model="node",
                  system_mtbf=60.0, restart_time=10.0, checkpoint_time=2.0)
    assert type(sc.epoch_failures(1)) is NodeEpochs
