"""Regressions of issue 16 found by the widened fuzz suite: a user's EpochSource (the
``failures=`` argument of ``simulate``, a public protocol) is checked, not trusted.
Before: negative times made the kernel loop for ever, NaN and unsorted times were
simulated silently, lists raised AttributeError, a 2-d array a Cython buffer message.
The same for a user's FailureHandler answering with lists (AttributeError) or strings."""
import numpy as np
import pytest

from spare_core.sim import Scenario, make_policy, simulate

SMALL = dict(n_groups=8, n_steps=100, t_compute=1.0, t_allreduce=0.1, system_mtbf=60.0, restart_time=5.0,
             checkpoint_time=1.0)


class _Source:
    """Failures every 7 s on groups 0, 1, ...; ``edit(times, groups)`` spoils them."""

    def __init__(self, edit=None):
        self.edit = edit

    def get(self, k, need, want=0, *, start):
        t = np.arange(1, max(need, 1) + 4) * 7.0
        g = np.arange(t.size) % SMALL["n_groups"]
        return self.edit(t, g) if self.edit else (t, g)

    def times(self, k, need, want=0, *, start):
        return self.get(k, need, want, start=start)[0]

    def next_time(self, k, i, *, start):
        t = self.times(k, i + 1, start=start)
        return float(np.ravel(t)[i]) if i < np.size(t) else float("inf")


def _run(policy, source):
    pol = make_policy("ckpt") if policy == "ckpt" else make_policy(policy, r=2)
    return simulate(Scenario(**SMALL), pol, seed=0, failures=source)


@pytest.mark.parametrize("policy", ["ckpt", "spare"])
@pytest.mark.parametrize("edit, says", [
    (lambda t, g: (t - 100.0, g), "finite times >= 0 in increasing order, got \\[-93.0"),
    (lambda t, g: (np.where(t == 14.0, np.nan, t), g), "increasing order, got \\[7.0, nan"),
    (lambda t, g: (t[::-1].copy(), g), "increasing order, got \\[2"),
    (lambda t, g: (t.reshape(1, -1), g), "1-d array of times, got shape \\(1, "),
])
def test_a_custom_sources_bad_times_are_refused_not_simulated(policy, edit, says):
    with pytest.raises(ValueError, match="_Source.(get|times) must return .*" + says):
        _run(policy, _Source(edit))


@pytest.mark.parametrize("edit, says", [
    (lambda t, g: (t, g + 5), "returned a group outside \\[0, 8\\)"),
    (lambda t, g: (t, g[:-1]), "one per time"),
    (lambda t, g: (t, g + 0.5), "integer groups"),
])
def test_a_custom_sources_bad_groups_are_refused(edit, says):
    with pytest.raises(ValueError, match=says):
        _run("spare", _Source(edit))


def test_a_custom_source_may_answer_with_lists_and_gives_the_same_run():
    plain = _run("spare", _Source())
    listed = _run("spare", _Source(lambda t, g: (t.tolist(), g.tolist())))
    assert listed.wall_time == plain.wall_time and listed.failures_seen == plain.failures_seen


class _ListsHandler:
    """A user's handler answering with lists (or strings) instead of numpy arrays."""

    batch_hint, needs_groups = 4, True

    def __init__(self, how):
        self.how = how

    def on_failures(self, groups):
        from spare_core.sim import Outcomes
        n = groups.shape[0]
        if self.how == "lists":
            return Outcomes([0] * n, [1.0] * n, [0.0] * n)
        return Outcomes(np.zeros(n, np.int8), np.full(n, "1.0"), np.zeros(n))

    def restart(self):
        pass


@pytest.mark.parametrize("how, says", [("lists", "outcomes.restart must be a numeric numpy array, got list"),
                                       ("strings", "outcomes.depth must be a numeric numpy array, got ndarray of <U3")])
def test_a_handler_answering_with_lists_or_strings_is_refused(how, says):
    from spare_core.sim import Policy

    class _User(Policy):
        name = "user"

        def handler(self, scenario):
            return _ListsHandler(how)
    with pytest.raises(TypeError, match=says):
        simulate(Scenario(**SMALL), _User(), seed=0)


class _Reporting(_Source):
    """A user's source that reads ahead and wants to hear where each epoch ended."""

    def __init__(self):
        super().__init__()
        self.reports = []

    def epoch_consumed(self, k, n):
        self.reports.append((k, n))


def test_checking_a_users_source_keeps_its_epoch_consumed_reports():
    src = _Reporting()
    res = _run("ckpt", src)  # checkpoint-only: every failure restarts, one consumed per epoch
    assert res.restarts > 0
    assert src.reports[:3] == [(0, 1), (1, 1), (2, 1)]
