"""Exact ties of the checkpoint rule (issue 16): the fast timeline (epoch cache + ``_timeline``
kernel) and the step-by-step reference simulator agree bit for bit on a grid of intervals that
are exact multiples of the step time and one ulp either side, for every failure model.

The rule both implement (docs/reliability.md, *Determinism*): a failure of an epoch happens at
``epoch_start + offset`` (one rounding, the offset drawn relative to the epoch start); a save
follows the first step whose end satisfies ``end - last >= interval`` on those wall times; a
failure exactly at an activity's end happens after it."""
import itertools
import math

import numpy as np
import pytest

from spare_core.distributions import Exponential
from spare_core.events import DomainFailures, GroupLifetimes, Trace, TraceReplay
from spare_core.sim import CheckpointOnly, ReplicationCheckpoint, Scenario, SpareCheckpoint, simulate
from spare_core.sim._reference import reference_simulate

N, STEPS = 6, 60


def _trace(step):
    """Failures on step boundaries of a failure-free run (ties with activity ends), looped."""
    k = np.array([3, 4, 9, 10, 10, 17, 25, 26, 33, 41])
    times = k * step
    return Trace(times, np.arange(k.shape[0]) % N, n_units=N, end=float(times[-1] + 2 * step))


def _scenario(model, tc, tar):
    step = tc + tar
    rate = dict(system_mtbf=10 * step, weibull_shape=0.8)
    models = {
        "per-unit": dict(rate),
        "system": dict(rate, failure_model="system"),
        "node": dict(rate, failure_model="node", gpus_per_group=16),
        "trace": dict(failure_model=TraceReplay(_trace(step), after="loop")),
        "domains": dict(failure_model=DomainFailures(GroupLifetimes(system_mtbf=20 * step, shape=0.8),
                                                     [Exponential(3 * 20 * step)], groups_per_domain=[2])),
    }
    return Scenario(N, n_steps=STEPS, t_compute=tc, t_allreduce=tar, restart_time=3.1, checkpoint_time=0.7,
                    max_wall_factor=60.0, name=f"ties-{model}", **models[model])


def _policy(kind, interval):
    return {"ckpt": CheckpointOnly(interval=interval), "rep": ReplicationCheckpoint(2, interval=interval),
            "spare": SpareCheckpoint(2, interval=interval)}[kind]


def _tie_intervals(sc, kind):
    """``m`` steps at the policy's initial depth, as the run adds them, and one ulp either side."""
    depth = _policy(kind, 1.0).initial_depth(sc)
    step = depth * sc.t_compute + sc.t_allreduce
    for m in (1, 2, 3):
        exact = m * step
        yield from (math.nextafter(exact, 0.0), exact, math.nextafter(exact, math.inf))
    # the sum of m steps as a run starting at 0 accumulates them (differs from m * step)
    acc = step + step + step
    yield from (math.nextafter(acc, 0.0), acc, math.nextafter(acc, math.inf))


def _exact(sc, pol, seed):
    """Every number of both simulators, the fast one's derived exactly as it derives them."""
    fast = simulate(sc, pol, seed=seed)
    ref = reference_simulate(sc, pol, seed=seed)
    wall = ref["wall"] if ref["finished"] else sc.max_wall_factor * sc.t0
    committed = ref["committed"]
    want = (ref["finished"], wall, committed / sc.n_steps, ref["useful"] / wall,
            ref["layers_useful"] / committed if committed > 0 else None, ref["failures_seen"], ref["restarts"],
            ref["checkpoints"], ref["steps_executed"])
    got = (fast.finished, fast.wall_time, fast.progress, fast.availability,
           fast.overhead if committed > 0 else None, fast.failures_seen, fast.restarts, fast.checkpoints,
           fast.steps_executed)
    return got, want


@pytest.mark.parametrize("model", ["per-unit", "system", "node", "trace", "domains"])
def test_fast_timeline_and_reference_agree_exactly_at_checkpoint_ties(model):
    differ, saves = [], 0
    for (tc, tar), kind in itertools.product([(0.1, 0.0), (0.3, 0.2), (1.7, 0.2)], ["ckpt", "rep", "spare"]):
        sc = _scenario(model, tc, tar)
        for i, interval in enumerate(_tie_intervals(sc, kind)):
            got, want = _exact(sc, _policy(kind, interval), seed=i % 3)
            saves += want[7]
            if got != want:
                differ.append((tc, tar, kind, interval, got, want))
    assert saves > 0  # the grid does exercise the checkpoint rule
    assert not differ, f"{len(differ)} tie cases differ, e.g. {differ[:2]}"
