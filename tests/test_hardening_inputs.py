"""Regressions of issue 16 found by the long fuzz profile: library inputs refused with a
clean error where they used to escape as another exception or pass unchecked."""
import numpy as np
import pytest

from spare_core.distributions import Distribution
from spare_core.strategies.spare.layout import MAX_GROUPS, StackedLayout
from spare_core.sim import Scenario, make_policy, simulate

SMALL = dict(n_steps=200, t_compute=1.0, t_allreduce=0.1, system_mtbf=500.0)


class _Residual(Distribution):
    """A custom law whose residual sampler misbehaves in the way ``bad`` says."""

    kind = "custom"

    def __init__(self, bad):
        self.bad = bad

    @property
    def mean(self):
        return 1.0

    def _draw(self, rng, size):
        return rng.random(size) + 0.5

    def _draw_residual(self, rng, size):
        out = rng.random(size) + 0.5
        if self.bad == "short":
            return out[:-1]
        out[0] = {"nan": np.nan, "inf": np.inf, "negative": -1.0}[self.bad]
        return out


@pytest.mark.parametrize("bad, says", [("short", r"_draw_residual returned shape \(4,\), but \(5,\)"),
                                       ("nan", "_draw_residual drew the time nan"),
                                       ("inf", "_draw_residual drew the time inf"),
                                       ("negative", "_draw_residual drew the time -1.0")])
def test_sample_residual_checks_a_custom_laws_draws_like_sample(bad, says):
    with pytest.raises(ValueError, match=says):
        _Residual(bad).sample_residual(0, 5)


def test_sample_residual_of_a_built_in_law_is_unchanged():
    from spare_core.distributions import Weibull
    w = Weibull(0.7, 100.0)
    a = w.sample_residual(3, 1000)
    rng = np.random.default_rng(3)
    b = np.maximum(rng.standard_gamma(1 / 0.7, 1000) ** (1 / 0.7) * 100.0, np.finfo(float).tiny)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("n", [MAX_GROUPS + 1, 2**63])
def test_a_group_count_beyond_int32_is_refused_by_scenario_and_layout(n):
    with pytest.raises(ValueError, match=f"n_groups must be <= {MAX_GROUPS}, got {n}"):
        Scenario(n_groups=n, **SMALL)
    with pytest.raises(ValueError, match=f"n_groups must be <= {MAX_GROUPS}"):
        StackedLayout(n, 2)


def test_the_largest_group_count_is_accepted_by_the_scenario():
    sc = Scenario(n_groups=MAX_GROUPS, **SMALL)
    assert sc.n_groups == MAX_GROUPS
    assert simulate(Scenario(n_groups=16, **SMALL), make_policy("spare", r=2), seed=0).finished
