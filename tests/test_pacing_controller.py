"""Pacing controller: gate invariants, hysteresis, the plug-in protocol and the two paths."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from spare_core.pacing import (BarrierObservation, BaselineHysteresis, BaselinePacer, ComputeModel, FabricModel,
                               NoHold, NoPacing, PacingController, PacingScenario, SpreadHysteresis, SpreadPacer,
                               simulate_iterations)


class ScheduledHolds:
    """A user controller: replays a fixed list of holds (exercises the protocol path)."""

    def __init__(self, holds):
        self.holds = list(holds)
        self.seen = []

    def reset(self):
        self.i = 0
        self.seen = []

    def hold(self, last):
        self.seen.append(last)
        h = self.holds[self.i % len(self.holds)]
        self.i += 1
        return h


@given(st.integers(1, 40), st.integers(1, 4), st.integers(0, 10**6),
       st.lists(st.sampled_from([0.0, 1e-5, 1e-3, 0.02, 0.1, 5.0]), min_size=1, max_size=8))
def test_gate_never_admits_early_and_hold_is_bounded(n, g, seed, holds):
    sc = PacingScenario(n_nodes=n, compute=ComputeModel(jitter=0.2, episode_rate=1e-3, episode_median=3.0),
                        fabric=FabricModel(gpus_per_node=g, nodes_per_leaf=4))
    r = simulate_iterations(sc, 12, controller=ScheduledHolds(holds), seed=seed, record_ranks=True)
    wait = r.entries - r.arrivals
    assert (r.entries >= r.arrivals).all()                    # never enters before it arrives
    assert (r.entries <= r.arrivals + r.hold[:, None]).all()  # never held longer than the bound
    np.testing.assert_allclose(r.held, wait.max(axis=1), rtol=1e-12, atol=1e-15)
    unpaced = r.hold == 0
    assert (wait[unpaced] == 0).all()
    # a released rank enters no later than the controller's release after the last arrival
    assert (r.entries <= r.arrival_max[:, None] + sc.release_latency + 1e-12).all()


@pytest.mark.parametrize("n_nodes", [1, 8, 64])
def test_builtin_controllers_agree_exactly_on_both_paths(n_nodes):
    sc = PacingScenario(n_nodes=n_nodes)
    for ctrl in (NoPacing(), SpreadPacer(), SpreadPacer(threshold_on=0.35, threshold_off=0.3, patience=3,
                                                        hold_max=0.2),
                 BaselinePacer(), BaselinePacer(threshold_on=0.05, threshold_off=0.04, patience=2,
                                                max_patience=8, smoothing=0.3, hold_max=0.2)):
        fast = simulate_iterations(sc, 150, controller=ctrl, seed=11)
        slow = simulate_iterations(sc, 150, controller=ctrl, seed=11, use_kernel_controller=False)
        for key in ("time", "arrival_max", "spread", "hold", "held", "incast", "contention", "paced"):
            np.testing.assert_array_equal(getattr(fast, key), getattr(slow, key), err_msg=key)


def test_pacing_off_equals_no_pacing_exactly():
    # a pacer that never switches on (threshold above any spread) and a user controller that
    # always returns 0 must reproduce the unpaced baseline bit for bit
    sc = PacingScenario(n_nodes=48)
    base = simulate_iterations(sc, 200, seed=4)
    never = simulate_iterations(sc, 200, seed=4, controller=SpreadPacer(threshold_on=1e9, threshold_off=0.0))
    zero = simulate_iterations(sc, 200, seed=4, controller=ScheduledHolds([0.0]))
    for other in (never, zero):
        np.testing.assert_array_equal(base.time, other.time)
        assert not other.paced.any()


def test_common_random_numbers_pacing_changes_only_what_happens_after_arrival():
    sc = PacingScenario(n_nodes=64)
    a = simulate_iterations(sc, 300, seed=8)
    b = simulate_iterations(sc, 300, seed=8, controller=SpreadPacer())
    np.testing.assert_array_equal(a.arrival_max, b.arrival_max)
    np.testing.assert_array_equal(a.spread, b.spread)
    np.testing.assert_array_equal(a.contention, b.contention)


def test_a_long_hold_is_a_barrier_it_costs_the_release_latency_and_removes_incast():
    sc = PacingScenario(n_nodes=64)
    a = simulate_iterations(sc, 100, seed=2)
    b = simulate_iterations(sc, 100, seed=2, controller=ScheduledHolds([1e6]))
    assert (a.incast > 0).any() and (b.incast == 0).all()
    # with every rank released together the collective starts release_latency after the
    # last arrival and runs free of incast; the contention draws are unchanged, so the
    # barrier saves at most the worst incast and costs exactly the release latency
    saved = a.time - (b.time - sc.release_latency)
    assert (saved >= -1e-12).all() and (saved <= a.incast + 1e-12).all()
    calm = a.incast == 0
    np.testing.assert_allclose(b.time[calm], a.time[calm] + sc.release_latency, rtol=1e-12)


def test_spread_pacer_hysteresis():
    p = SpreadPacer(threshold_on=0.3, threshold_off=0.1, patience=3, hold_max=0.25)
    p.reset()
    obs = lambda s: BarrierObservation(0, s, 1.0, 1.0, 0.0)  # noqa: E731
    assert p.hold(None) == 0.0
    assert p.hold(obs(0.2)) == 0.0          # between thresholds while off: stays off
    assert p.hold(obs(0.31)) == 0.25        # above on: switches on
    assert p.hold(obs(0.2)) == 0.25         # between thresholds while on: stays on
    assert p.hold(obs(0.05)) == 0.25        # calm 1
    assert p.hold(obs(0.05)) == 0.25        # calm 2
    assert p.hold(obs(0.2)) == 0.25         # not calm: the count restarts
    assert [p.hold(obs(0.0)) for _ in range(3)] == [0.25, 0.25, 0.0]   # 3 calm in a row: off
    p.reset()
    assert p.hold(obs(0.0)) == 0.0


def test_controller_sees_the_previous_observation():
    sc = PacingScenario(n_nodes=4)
    ctrl = ScheduledHolds([0.0, 0.01])
    r = simulate_iterations(sc, 6, controller=ctrl, seed=1)
    assert ctrl.seen[0] is None
    for i, o in enumerate(ctrl.seen[1:]):
        assert o.iteration == i and o.spread == r.spread[i] and o.iteration_time == r.time[i]
        assert o.hold == r.hold[i]
    assert isinstance(ctrl, PacingController) and isinstance(SpreadPacer(), PacingController)


@pytest.mark.parametrize("bad, exc", [(-1.0, ValueError), (float("nan"), ValueError), (float("inf"), ValueError),
                                      ("x", TypeError), (None, TypeError)])
def test_bad_hold_from_a_user_controller_is_rejected(bad, exc):
    with pytest.raises(exc, match="controller.hold"):
        simulate_iterations(PacingScenario(n_nodes=2), 3, seed=0, controller=ScheduledHolds([bad]))


def test_repr_is_informative():
    r = simulate_iterations(PacingScenario(n_nodes=2), 10, seed=0, controller=SpreadPacer())
    assert "SpreadPacer" in repr(r) and "n_nodes=2" in repr(r)
    s = r.stats()
    assert "cv=" in repr(s) and s.n_iterations == 10 and 0 <= s.fraction_paced <= 1
    assert s.p50 <= s.p99 and s.throughput == pytest.approx(16 / s.mean)


def test_hysteresis_switches_on_and_off_in_a_simulation_identically_on_both_paths():
    # spreads straddle the thresholds, so the pacer toggles many times; the kernel's
    # mode 1 and the Python SpreadPacer must make the same decisions every iteration
    sc = PacingScenario(n_nodes=8, compute=ComputeModel(jitter=0.03, speed_spread=0.0, slow_fraction=0.0,
                                                        episode_rate=0.0))
    pacer = SpreadPacer(threshold_on=0.17, threshold_off=0.14, patience=2, hold_max=0.2)
    fast = simulate_iterations(sc, 300, controller=pacer, seed=2)
    slow = simulate_iterations(sc, 300, controller=pacer, seed=2, use_kernel_controller=False)
    np.testing.assert_array_equal(fast.paced, slow.paced)
    np.testing.assert_array_equal(fast.time, slow.time)
    assert (fast.paced[1:] != fast.paced[:-1]).sum() >= 10
    # replay the rule on the observed spreads: on after a spread > on, off after 2 calm
    on, calm = False, 0
    for k in range(300):
        assert fast.paced[k] == on
        if not on:
            if fast.spread[k] > 0.17:
                on, calm = True, 0
        elif fast.spread[k] < 0.14:
            calm += 1
            if calm >= 2:
                on, calm = False, 0
        else:
            calm = 0


def _phase(d, arrival=1.0):
    # an observation whose collective phase (iteration time - last arrival) is d
    return BarrierObservation(0, 0.5, arrival + d, arrival, 0.0)


def test_baseline_pacer_hysteresis_and_back_off():
    p = BaselinePacer(threshold_on=0.2, threshold_off=0.05, patience=2, hold_max=0.3, smoothing=0.5,
                      max_patience=4)
    p.reset()
    assert p.hold(None) == 0.0 and p.baseline is None
    assert p.hold(_phase(1.0)) == 0.0 and p.baseline == 1.0     # the first phase is the baseline
    assert p.hold(_phase(1.1)) == 0.0          # +10 %: below on
    b = p.baseline
    assert p.hold(_phase(2.0)) == 0.3          # far above: on
    # clipped average: the inflated phase moves the baseline only to b * (1 + on)
    assert p.baseline == pytest.approx(b + 0.5 * (b * 1.2 - b))
    assert p.hold(_phase(p.baseline * 1.1)) == 0.3     # between thresholds: the calm count restarts
    assert [p.hold(_phase(p.baseline)) for _ in range(2)] == [0.3, 0.0]     # 2 calm in a row: off
    assert p.current_patience == 2
    assert p.hold(_phase(p.baseline * 1.5)) == 0.3     # back within 2 iterations: patience doubles
    assert p.current_patience == 4
    assert [p.hold(_phase(p.baseline)) for _ in range(4)] == [0.3, 0.3, 0.3, 0.0]
    assert p.hold(_phase(p.baseline * 1.5)) == 0.3     # again: capped at max_patience
    assert p.current_patience == 4
    assert [p.hold(_phase(p.baseline)) for _ in range(4)][-1] == 0.0
    assert [p.hold(_phase(p.baseline)) for _ in range(5)] == [0.0] * 5    # a long calm stay off...
    assert p.current_patience == 2                                     # ...resets the back-off
    p.reset()
    assert p.baseline is None and p.current_patience == 2 and p.hold(_phase(9.0)) == 0.0


def test_baseline_pacer_ignores_compute_stragglers():
    # a huge arrival spread (a compute straggler) with an unchanged collective phase:
    # pacing could not shorten it, the pacer stays off
    p = BaselinePacer(patience=1)
    for k in range(50):
        assert p.hold(BarrierObservation(k, 3.0 if k % 2 else 0.1, 0.4 + (2.0 if k % 2 else 0.5),
                                         2.0 if k % 2 else 0.5, 0.0)) == 0.0


def test_baseline_pacer_in_a_simulation_holds_only_when_on_and_is_bounded():
    sc = PacingScenario(n_nodes=48)
    r = simulate_iterations(sc, 400, controller=BaselinePacer(hold_max=0.2), seed=3)
    assert 0 < r.paced.mean() < 1                          # it engaged, and it started off
    assert not r.paced[0]
    np.testing.assert_array_equal(r.hold[r.paced], 0.2)
    assert (r.held <= r.hold).all() and (r.held[~r.paced] == 0).all()
    # before its first engagement the run is the unpaced run exactly (same seed)
    first = int(np.argmax(r.paced))
    base = simulate_iterations(sc, 400, seed=3)
    np.testing.assert_array_equal(r.time[:first], base.time[:first])
    # what switched it on: the previous collective phase exceeded the baseline (which
    # lies above the smallest phase seen) by more than threshold_on (first >= 2: the
    # first phase is the baseline itself)
    d = r.time - r.arrival_max
    assert first >= 2 and d[first - 1] > 1.1 * d[:first - 1].min()


@pytest.mark.parametrize("kw, exc, match", [
    ({"threshold_on": 0.0}, ValueError, "threshold_on"),
    ({"threshold_off": 0.3}, ValueError, "threshold_off must be <= threshold_on"),
    ({"patience": 0}, ValueError, "patience"),
    ({"smoothing": 0.0}, ValueError, "smoothing"),
    ({"smoothing": 1.5}, ValueError, "smoothing"),
    ({"max_patience": 5}, ValueError, "max_patience"),
    ({"hold_max": -1.0}, ValueError, "hold_max"),
    ({"patience": "x"}, TypeError, "patience"),
])
def test_baseline_pacer_rejects_bad_parameters(kw, exc, match):
    with pytest.raises(exc, match=match):
        BaselinePacer(**kw)


def test_baseline_pacer_repr():
    assert repr(BaselinePacer()).startswith("BaselinePacer(threshold_on=0.1")


def test_baseline_pacer_toggles_and_backs_off_identically_on_both_paths():
    # thresholds inside the ECMP swings of the collective phase at 40 nodes: the pacer
    # switches on and off often and backs off; kernel mode 3 and the Python class must
    # take the same decision at every iteration, also across chunk boundaries
    sc = PacingScenario(n_nodes=40)
    pacer = BaselinePacer(threshold_on=0.05, threshold_off=0.04, patience=2, max_patience=16, smoothing=0.3)
    fast = simulate_iterations(sc, 400, controller=pacer, seed=6)
    slow = simulate_iterations(sc, 400, controller=pacer, seed=6, use_kernel_controller=False)
    np.testing.assert_array_equal(fast.paced, slow.paced)
    np.testing.assert_array_equal(fast.time, slow.time)
    assert (fast.paced[1:] != fast.paced[:-1]).sum() >= 6


# ---- the recipe "adding a controller to the fast path" (docs/pacing.md) ----------------
class BandPacer:
    """A user controller written from scratch (not a SpreadPacer subclass): pace with a
    fixed hold while the arrival spread is above `high`; leave after `calm` iterations in
    a row below `low` (a negative `low` never leaves). Its rule is the kernel's spread
    hysteresis, so it declares that form and runs in the kernel."""

    def __init__(self, high, low, calm, hold_s):
        self.high, self.low, self.calm, self.hold_s = high, low, calm, hold_s
        self.calls = 0

    def reset(self):
        self.on, self.quiet = False, 0

    def hold(self, last):
        self.calls += 1
        if last is not None:
            if not self.on:
                if last.spread > self.high:
                    self.on, self.quiet = True, 0
            elif last.spread < self.low:
                self.quiet += 1
                if self.quiet >= self.calm:
                    self.on, self.quiet = False, 0
            else:
                self.quiet = 0
        return self.hold_s if self.on else 0.0

    def kernel_form(self):
        return SpreadHysteresis(threshold_on=self.high, threshold_off=self.low, patience=self.calm,
                                hold_max=self.hold_s)


@pytest.mark.parametrize("low", [0.14, -1.0])
def test_a_user_controller_with_a_kernel_form_runs_in_the_kernel_identically(low):
    sc = PacingScenario(n_nodes=8, compute=ComputeModel(jitter=0.03, speed_spread=0.0, slow_fraction=0.0,
                                                        episode_rate=0.0))
    fast_ctrl, slow_ctrl = BandPacer(0.17, low, 2, 0.2), BandPacer(0.17, low, 2, 0.2)
    fast = simulate_iterations(sc, 300, controller=fast_ctrl, seed=2)
    slow = simulate_iterations(sc, 300, controller=slow_ctrl, seed=2, use_kernel_controller=False)
    assert fast_ctrl.calls == 0 and slow_ctrl.calls == 300      # the kernel ran the rule, not hold()
    for key in ("time", "hold", "held", "paced", "incast"):
        np.testing.assert_array_equal(getattr(fast, key), getattr(slow, key), err_msg=key)
    toggles = (fast.paced[1:] != fast.paced[:-1]).sum()
    assert toggles >= 10 if low > 0 else toggles == 1     # a negative `low` never switches off


def test_a_controller_without_a_kernel_form_runs_in_python():
    class Plain(BandPacer):
        kernel_form = None          # opted out

    class Declines(BandPacer):
        def kernel_form(self):
            return None

    sc = PacingScenario(n_nodes=4)
    for cls in (Plain, Declines):
        ctrl = cls(0.17, 0.14, 2, 0.2)
        simulate_iterations(sc, 40, controller=ctrl, seed=1)
        assert ctrl.calls == 40


def test_a_subclass_that_changes_the_rule_loses_the_parents_kernel_form():
    class Louder(SpreadPacer):
        def hold(self, last):
            return 2.0 * super().hold(last)

    assert SpreadPacer().kernel_form() == SpreadHysteresis(0.2, 0.1, 10, 0.5)
    assert NoPacing().kernel_form() == NoHold()
    assert isinstance(BaselinePacer().kernel_form(), BaselineHysteresis)
    assert Louder().kernel_form() is None
    sc = PacingScenario(n_nodes=64)
    r = simulate_iterations(sc, 200, controller=Louder(), seed=3)
    assert r.paced.any() and (r.hold[r.paced] == 1.0).all()     # its own hold, on the Python path


@pytest.mark.parametrize("make, exc, match", [
    (lambda: SpreadHysteresis(0.2, 0.1, 0, 0.5), ValueError, "patience must be >= 1"),
    (lambda: SpreadHysteresis(float("nan"), 0.1, 1, 0.5), ValueError, "threshold_on must be finite"),
    (lambda: SpreadHysteresis(0.2, 0.1, 1, -0.5), ValueError, "hold_max must be >= 0"),
    (lambda: BaselineHysteresis(0.1, 0.05, 4, 0.5, 0.0, 8), ValueError, "smoothing must be > 0"),
    (lambda: BaselineHysteresis(0.1, 0.05, 4, 0.5, 0.1, 2), ValueError, "max_patience must be >= 4"),
])
def test_kernel_forms_reject_bad_parameters(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_a_kernel_form_that_is_not_one_is_rejected():
    class Confused(BandPacer):
        def kernel_form(self):
            return {"mode": 1}

    with pytest.raises(TypeError, match="kernel_form\\(\\) must return one of"):
        simulate_iterations(PacingScenario(n_nodes=2), 3, seed=0, controller=Confused(0.1, 0.0, 1, 0.1))
