"""Issue 23, item 4: user code is checked like user data.

Every handler answer goes through the same checks whatever class produced it (a built-in
handler whose ``on_failures`` is replaced on the instance used to be trusted by its class:
NaN depth -> "finished" with ratio NaN, depth -5 -> a negative wall time, an empty answer
-> a loop for ever), depths are >= 1 (0.55 and 1e-300 were accepted), and every draw of a
failure process built by a user's ``FailureModel`` is checked where it enters the library
(NaN times finished with 0 failures seen)."""
from dataclasses import dataclass

import numpy as np
import pytest

from spare_core.events import FailureModel
from spare_core.sim import CheckpointOnly, Outcomes, Policy, Scenario, SpareCheckpoint, simulate
from spare_core.strategies import ReplicationCheckpoint

from tests.user_code_fakes import EditedProcess

SMALL = dict(n_groups=8, n_steps=200, t_compute=1.0, t_allreduce=0.1, system_mtbf=40.0, restart_time=5.0,
             checkpoint_time=1.0)


class _Looped(RuntimeError):
    pass


def _patched(base, edit):
    """A built-in policy whose handler's ``on_failures`` is replaced on the instance."""

    class _P(base):
        def handler(self, scenario):
            h = super().handler(scenario)
            orig, calls = h.on_failures, [0]

            def on_failures(groups):
                calls[0] += 1
                if calls[0] > 10_000:  # the old code called it for ever on an empty answer
                    raise _Looped("on_failures called 10,000 times")
                return edit(orig(groups), groups)
            h.on_failures = on_failures
            return h
    return _P


def _with(depth=None, patch=None):
    def edit(out, groups):
        n = len(out)
        d = out.depth if depth is None else np.full(n, depth)
        p = out.patch_layers if patch is None else np.full(n, patch)
        return Outcomes(out.restart, d, p)
    return edit


@pytest.mark.parametrize("base, args", [(SpareCheckpoint, (2,)), (ReplicationCheckpoint, (2,)), (CheckpointOnly, ())])
@pytest.mark.parametrize("edit, says", [
    (_with(depth=np.nan), "finite depths >= 1 .* got depths \\[nan"),
    (_with(depth=-5.0), "got depths \\[-5.0"),
    (_with(depth=0.55), "got depths \\[0.55"),
    (_with(depth=1e-300), "got depths \\[1e-300"),
    (_with(depth=np.inf), "got depths \\[inf"),
    (_with(patch=np.nan), "patch_layers >= 0, got patch_layers \\[nan"),
    (_with(patch=-1.0), "got patch_layers \\[-1.0"),
])
def test_a_built_in_handler_replaced_on_the_instance_is_checked(base, args, edit, says):
    with pytest.raises(ValueError, match=says):
        simulate(Scenario(**SMALL), _patched(base, edit)(*args), seed=0)


@pytest.mark.parametrize("base, args", [(SpareCheckpoint, (2,)), (CheckpointOnly, ())])
def test_an_empty_answer_is_an_error_not_a_loop(base, args):
    def empty(out, groups):
        return Outcomes(np.zeros(0, np.int8), np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError, match="every failure up to the first restart: got 0 of"):
        simulate(Scenario(**SMALL), _patched(base, empty)(*args), seed=0)


def test_a_restart_before_the_last_entry_of_a_built_in_answer_is_refused():
    def early(out, groups):
        r = np.zeros(len(groups), np.int8)
        r[0] = 1
        return Outcomes(r, np.full(len(groups), 2.0), np.zeros(len(groups)))
    with pytest.raises(ValueError, match="restart only as the last entry"):
        simulate(Scenario(**SMALL), _patched(SpareCheckpoint, early)(2), seed=0)


def test_an_initial_depth_below_one_is_refused():
    class Thin(SpareCheckpoint):
        def initial_depth(self, scenario):
            return 0.55
    with pytest.raises(ValueError, match="policy initial depth must be >= 1"):
        simulate(Scenario(**SMALL), Thin(2), seed=0)


def test_a_user_handler_answering_depths_between_0_and_1_is_refused():
    from spare_core.sim import FailureHandler, Outcome

    class H(FailureHandler):
        def on_failure(self, group):
            return Outcome(False, 0.55)

        def restart(self):
            pass

    class P(Policy):
        name = "thin"

        def handler(self, scenario):
            return H()
    with pytest.raises(ValueError, match="got depths \\[0.55"):
        simulate(Scenario(**SMALL), P(), seed=0)


def test_a_replaced_on_failures_that_answers_well_gives_the_same_run():
    plain = simulate(Scenario(**SMALL), SpareCheckpoint(2), seed=3)
    same = simulate(Scenario(**SMALL), _patched(SpareCheckpoint, lambda out, g: out)(2), seed=3)
    assert same == plain and plain.failures_seen > 0


# -- a user's FailureModel whose process answers garbage ---------------------------------

def _model(edit, renews=True):
    @dataclass(frozen=True)
    class M(FailureModel, kind=f"test-user-code-{id(edit)}-{renews}"):
        def mtbf(self, n_groups):
            return 7.0

        def process(self, n_groups, seed, *, start=0.0):
            return EditedProcess(n_groups, edit, start)

        def describe(self, n_groups):
            return "every 7 s"

        @property
        def renews_all_at_restart(self):
            return renews
    return M()


_NO_RATE = {k: v for k, v in SMALL.items() if k != "system_mtbf"}


def _nan_second(t, g):
    return [float("nan") if x == 14.0 else x for x in t], g


def _back_second(t, g):  # the epoch's second failure 4 s before its first
    return [3.0 if x == 14.0 else x for x in t], g


@pytest.mark.parametrize("renews", [True, False])
@pytest.mark.parametrize("edit, says", [
    (lambda t, g: ([float("nan")] * len(t), g), "finite, non-decreasing .* got \\[nan"),
    (_nan_second, "got \\[(.*, )?nan"),
    (lambda t, g: ([x - 1e6 for x in t], g), "not before the epoch's start"),
    (_back_second, "non-decreasing .* got \\[(.*, )?3.0"),
    (lambda t, g: ([float("inf")] * len(t), g), "got \\[inf"),
    (lambda t, g: (t, [x + 100 for x in g]), "group outside \\[0, 8\\)"),
    (lambda t, g: (t, [-1] * len(g)), "group outside"),
    (lambda t, g: (t, [0.5] * len(g)), "integer groups"),
    (lambda t, g: (t, g[:-1]), "one per failure"),
    (lambda t, g: (t + t, g + g), "at most"),
])
@pytest.mark.parametrize("policy", [CheckpointOnly, lambda: SpareCheckpoint(2)])
def test_a_user_failure_models_bad_draws_are_refused(renews, edit, says, policy):
    s = Scenario(**_NO_RATE, failure_model=_model(edit, renews))
    # CKPT-only restarts at each epoch's first failure: it never reads the second one
    if edit in (_nan_second, _back_second) and policy is CheckpointOnly:
        assert simulate(s, policy(), seed=0) == simulate(Scenario(**_NO_RATE, failure_model=_model(
            lambda t, g: (t, g), renews)), policy(), seed=0)
        return
    with pytest.raises(ValueError, match=r"M: the process.*" + says):
        simulate(s, policy(), seed=0)


@pytest.mark.parametrize("renews", [True, False])
def test_a_user_failure_model_answering_well_runs(renews):
    s = Scenario(**_NO_RATE, failure_model=_model(lambda t, g: (t, g), renews))
    r = simulate(s, SpareCheckpoint(2), seed=0)
    assert r.failures_seen > 0


def test_a_user_process_whose_epoch_does_not_count_restarts_is_refused():
    # before: EpochFailures moved the process to epoch k in a loop that never ended
    class Stuck(EditedProcess):
        restarts = [0]

        def restart(self, time):
            self.restarts[0] += 1
            if self.restarts[0] > 10_000:  # the old code restarted it for ever
                raise _Looped("restarted 10,000 times")
            super().restart(time)
            self.epoch = 0

    @dataclass(frozen=True)
    class M(FailureModel, kind="test-user-code-stuck-epoch"):
        def mtbf(self, n_groups):
            return 7.0

        def process(self, n_groups, seed, *, start=0.0):
            return Stuck(n_groups, lambda t, g: (t, g), start)

        def describe(self, n_groups):
            return "every 7 s"

        @property
        def renews_all_at_restart(self):
            return True
    with pytest.raises(ValueError, match="M: the process's epoch must count its restarts \\(epoch 0 became 0"):
        simulate(Scenario(**_NO_RATE, failure_model=M()), CheckpointOnly(), seed=0)
