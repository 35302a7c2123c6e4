"""The time-to-train kernel never lets time run backwards (issue 16): a failure placed before
the activity it would interrupt used to restart the run *earlier* than its current time, and a
caller that kept feeding such failures restarted forever without reaching the wall limit."""
import math

import numpy as np
import pytest

from spare_core._native import load

K = load("_timeline")
S = K.SLOTS


def _params(**kw):
    par = np.zeros(S["N_PARAMS"])
    values = dict(P_T_COMP=1.0, P_RESTART=1.0, P_INTERVAL=math.inf, P_N_STEPS=5.0, P_INIT_DEPTH=1.0,
                  P_MAX_WALL=1e6)
    values.update(kw)
    for name, v in values.items():
        par[S[name]] = v
    return par


def _one_failure(rel):
    return (np.array([rel]), np.ones(1, dtype=np.int8), np.ones(1), np.zeros(1))


# -1e-14: a few ulps below 10.0 after the addition (-1e-300 would round back to 10.0)
@pytest.mark.parametrize("rel", [-5.0, -1e-14, -math.inf])
def test_a_failure_before_the_current_activity_is_refused_not_replayed(rel):
    state = K.new_state(1.0, start_time=10.0)
    frel, fkind, fdepth, fpatch = _one_failure(rel)
    with pytest.raises(ValueError, match="before the activity it interrupts"):
        K.advance(state, _params(), frel, 10.0, fkind, fdepth, fpatch, 0, math.inf, np.ones(8))


def test_a_failure_exactly_at_the_activity_start_still_restarts():
    state = K.new_state(1.0, start_time=10.0)
    frel, fkind, fdepth, fpatch = _one_failure(0.0)
    status, j = K.advance(state, _params(), frel, 10.0, fkind, fdepth, fpatch, 0, math.inf, np.ones(8))
    assert (status, j) == (S["RESTARTED"], 1)
    assert state[S["ST_T_LAST"]] == 11.0  # failure at 10 + restart 1


def test_a_caller_feeding_backward_failures_stops_instead_of_restarting_forever():
    # what a broken failure source did to the simulator's loop: each epoch's first failure
    # 5 s before the epoch start; before the fix this ran as long as the loop was allowed
    state, start = K.new_state(1.0, start_time=0.0), 0.0
    frel, fkind, fdepth, fpatch = _one_failure(-5.0)
    with pytest.raises(ValueError):
        for _ in range(1000):
            status, _ = K.advance(state, _params(), frel, start, fkind, fdepth, fpatch, 0, math.inf, np.ones(8))
            assert status == S["RESTARTED"]
            start = state[S["ST_T_LAST"]]
