"""``StragglerStepTime``: the straggler-inflated step-time distribution, as a hook for the
time-to-train simulation (``spare_core.sim``).

The time-to-train model charges a fixed, jitter-free step time. An object with
``sample_multipliers(n_steps, rng)`` on its scenario replaces that with the factor by
which each synchronous step is inflated: iteration time / nominal jitter-free step, drawn
from this module's simulated iteration-time distribution.
"""
from __future__ import annotations

import numpy as np

from .._validate import as_generator, as_int
from .controllers import NoPacing
from .model import PacingScenario
from .simulate import simulate_iterations

__all__ = ["StragglerStepTime"]


class StragglerStepTime:
    """Step-time multipliers resampled from one simulated run of a scenario.

    The first call simulates ``n_iterations`` iterations once (with ``controller``) and
    keeps ``time / scenario.nominal_step``; every call then draws ``n_steps`` of them
    uniformly with replacement from the caller's generator, so a call costs O(n_steps).

    Parameters
    ----------
    scenario : PacingScenario
        Job size (ranks, nodes) and straggler/fabric models.
    controller : PacingController, optional
        Pacing policy of the simulated run (default: no pacing).
    n_iterations : int
        Iterations simulated to build the empirical distribution (>= 1). Default 2000.
    seed : int or SeedSequence
        Seed of that simulation. Default 0.

    Notes
    -----
    Steps are resampled independently: the autocorrelation of episodic slowdowns
    (minutes to hours) is not carried over, only their share of slow steps. Multipliers
    may be below 1 when ranks run faster than nominal; they are always > 0.

    Examples
    --------
    >>> st = StragglerStepTime(PacingScenario(n_nodes=8), n_iterations=200, seed=1)
    >>> m = st.sample_multipliers(5, np.random.default_rng(0))
    >>> m.shape, bool((m > 0).all())
    ((5,), True)
    """

    def __init__(self, scenario: PacingScenario, *, controller=None, n_iterations: int = 2000,
                 seed=0):
        if not isinstance(scenario, PacingScenario):
            raise TypeError(f"scenario must be a PacingScenario, got {type(scenario).__name__}")
        self.scenario = scenario
        self.controller = NoPacing() if controller is None else controller
        self.n_iterations = as_int(n_iterations, "n_iterations", min_value=1)
        self.seed = seed
        self._pool = None

    @property
    def pool(self) -> np.ndarray:
        """The simulated multipliers (simulated on first access; read-only)."""
        if self._pool is None:
            res = simulate_iterations(self.scenario, self.n_iterations, controller=self.controller,
                                      seed=self.seed)
            pool = res.multipliers
            pool.setflags(write=False)
            self._pool = pool
        return self._pool

    def sample_multipliers(self, n_steps, rng) -> np.ndarray:
        """Draw ``n_steps`` step-time multipliers.

        Parameters
        ----------
        n_steps : int
            Number of steps (>= 0).
        rng : numpy.random.Generator, SeedSequence or int
            Source of the resampling indices.

        Returns
        -------
        ndarray of float64, shape (n_steps,)
            Factors (> 0) by which each step exceeds the nominal jitter-free step.
        """
        n = as_int(n_steps, "n_steps", min_value=0)
        gen = as_generator(rng)
        pool = self.pool
        return pool[gen.integers(0, pool.size, size=n)]

    def mean_multiplier(self) -> float:
        """Mean of the simulated multipliers."""
        return float(self.pool.mean())

    def __repr__(self) -> str:
        return (f"StragglerStepTime(n_nodes={self.scenario.n_nodes}, controller={self.controller!r}, "
                f"n_iterations={self.n_iterations}, seed={self.seed!r})")
