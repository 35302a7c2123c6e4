"""How often the confidence intervals of the mean TTT/T0 over seeds cover the true mean
(docs/results.md, "Confidence intervals"): the Student-t interval, the same cut at TTT/T0 >= 1
(what the commands print), and percentile and BCa bootstrap intervals, at 3, 5 and 10 seeds.

For each scenario, 2,000 seeds are simulated once; their mean stands for the true mean. Then
``TRIALS`` times, n seeds are drawn (with replacement) from those runs and each interval is
computed on them. Prints one table row per (scenario, n, method): coverage and the share of
intervals that reach below TTT/T0 = 1.

    python -m bench.ci_coverage
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np

from spare_core.sim import Scenario, simulate
from spare_core.strategies import policy_at
from spare_core.sim.results import RATIO_BOUNDS, mean_ci

TRIALS = 1000
POPULATION = 2000

SCENARIOS = {
    # a restart every ~3 h over a 2-day job: many restarts a run, a narrow, near-normal TTT/T0
    "CKPT-only, 16 restarts a run": (Scenario(64, n_steps=28_800, t_compute=5.5, t_allreduce=0.5,
                                               system_mtbf=3 * 3600.0, weibull_shape=0.78, failure_model="system",
                                               restart_time=1800.0), "ckpt", None),
    # a restart every ~10 h over a 3-h job: most runs see none, a few lose a restart: skewed
    "CKPT-only, 0.3 restarts a run": (Scenario(64, n_steps=1800, t_compute=5.5, t_allreduce=0.5,
                                                system_mtbf=10 * 3600.0, weibull_shape=0.78, failure_model="system",
                                                restart_time=1800.0), "ckpt", None),
    # SPARe r = 2 on the same rare failures: a wipe-out is rarer still
    "SPARe r=2, rare wipe-outs": (Scenario(16, n_steps=1800, t_compute=5.5, t_allreduce=0.5,
                                           system_mtbf=1.5 * 3600.0, weibull_shape=0.78, failure_model="system",
                                           restart_time=1800.0), "spare", 2),
}


def _bootstrap(x: np.ndarray, method: str) -> tuple[float, float]:
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ci = stats.bootstrap((x,), np.mean, method=method, n_resamples=2000, vectorized=True,
                                 random_state=np.random.default_rng(0)).confidence_interval
            lo, hi = float(ci.low), float(ci.high)
        except ValueError:
            lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi)):  # all values equal: a point
        lo = hi = float(x.mean())
    return lo, hi


def main() -> None:
    rng = np.random.default_rng(2024)
    print(f"{'scenario':<32} {'seeds':>5} {'method':<22} {'coverage':>8} {'low < 1':>8}")
    for name, (sc, pol, r) in SCENARIOS.items():
        t0 = time.perf_counter()
        policy = policy_at(pol, r)
        pop = np.array([simulate(sc, policy, seed=s).ratio for s in range(POPULATION)])
        assert np.isfinite(pop).all(), name
        true = pop.mean()
        for n in (3, 5, 10):
            hits = {"Student t": 0, "Student t, cut at 1": 0, "bootstrap percentile": 0, "bootstrap BCa": 0}
            below = dict.fromkeys(hits, 0)
            for _ in range(TRIALS):
                x = rng.choice(pop, n)
                m, lo, hi = mean_ci(x)
                _, clo, chi = mean_ci(x, bounds=RATIO_BOUNDS)
                for key, (a, b) in (("Student t", (lo, hi)), ("Student t, cut at 1", (clo, chi)),
                                    ("bootstrap percentile", _bootstrap(x, "percentile")),
                                    ("bootstrap BCa", _bootstrap(x, "BCa"))):
                    hits[key] += a <= true <= b
                    below[key] += a < 1.0
            for key in hits:
                print(f"{name:<32} {n:>5} {key:<22} {hits[key] / TRIALS:8.3f} {below[key] / TRIALS:8.3f}")
        print(f"{name:<32} true mean TTT/T0 {true:.4f}, median {np.median(pop):.4f}, "
              f"max {pop.max():.3f} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
