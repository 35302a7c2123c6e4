"""A slow, step-by-step pure-Python simulator of the same run model (test oracle and peer).

It shares nothing with the fast path but the model's definition: it drives a *live*
:class:`spare_core.events.FailureStream` (restarted at each resume time, one ``peek`` /
``next_failure`` at a time, never the epoch cache), asks the policy one failure at a time
(``FailureHandler.on_failure``), and walks every step and save in Python. The tests require
it to reproduce :func:`spare_core.sim.simulate` exactly; the benchmarks time it as the
straightforward implementation a user would otherwise write.
"""
from __future__ import annotations

import math

from .policies import Outcome
from .run import _Multipliers, _seed_children

__all__ = ["reference_simulate"]


def reference_simulate(scenario, policy, *, seed) -> dict:
    """Simulate one run step by step; return the headline numbers as a dict.

    Keys: ``finished``, ``wall``, ``committed``, ``checkpoints``, ``failures_seen``,
    ``restarts``, ``useful``, ``layers_useful``, ``steps_executed``.
    """
    fail_seed, mult_seed = _seed_children(seed)
    stream = scenario.failure_stream(fail_seed)
    handler = policy.handler(scenario)
    mults = _Multipliers(scenario, mult_seed)
    buf, bi = mults.chunk(), 0
    interval = policy.checkpoint_interval(scenario).seconds
    init_depth = float(policy.initial_depth(scenario))
    fsec = float(policy.failure_seconds(scenario))
    patch_cost = scenario.t_compute if scenario.charge_patch else 0.0
    max_wall = scenario.max_wall_factor * scenario.t0

    now = 0.0
    depth = init_depth
    last_ckpt = 0.0
    committed = done = 0
    work_unc = layers_unc = useful = layers_useful = 0.0
    checkpoints = seen = restarts = executed = 0
    while True:
        # one step
        if now > max_wall:
            return _out(False, max_wall, committed, checkpoints, seen, restarts, useful, layers_useful, executed)
        if bi == buf.shape[0]:
            buf, bi = mults.chunk(), 0
        start = now
        end = start + float(buf[bi]) * (depth * scenario.t_compute + scenario.t_allreduce)
        bi += 1
        layers = depth
        restarted = False
        while stream.peek() < end:
            t, g = stream.next_failure()
            seen += 1
            o = handler.on_failure(g)
            assert isinstance(o, Outcome)
            if o.restart:
                restarts += 1
                restarted = True
                done, work_unc, layers_unc = 0, 0.0, 0.0
                now = t + scenario.restart_time
                last_ckpt = now
                depth = init_depth
                stream.restart(now)
                handler.restart()
                break
            end += fsec + patch_cost * o.patch_layers
            layers += o.patch_layers if scenario.charge_patch else 0.0
            depth = o.depth
        if restarted:
            continue
        if end > max_wall:
            return _out(False, max_wall, committed, checkpoints, seen, restarts, useful, layers_useful, executed)
        now = end
        executed += 1
        done += 1
        work_unc += end - start
        layers_unc += layers
        if committed + done >= scenario.n_steps:
            return _out(True, now, committed + done, checkpoints, seen, restarts, useful + work_unc,
                        layers_useful + layers_unc, executed)
        if now - last_ckpt < interval:
            continue
        # a save
        s_end = now + scenario.checkpoint_time
        lost = False
        while stream.peek() < s_end:
            t, g = stream.next_failure()
            seen += 1
            o = handler.on_failure(g)
            if o.restart:
                restarts += 1
                lost = True
                done, work_unc, layers_unc = 0, 0.0, 0.0
                now = t + scenario.restart_time
                last_ckpt = now
                depth = init_depth
                stream.restart(now)
                handler.restart()
                break
            s_end += fsec + patch_cost * o.patch_layers
            depth = o.depth
        if lost:
            continue
        if s_end > max_wall:
            return _out(False, max_wall, committed, checkpoints, seen, restarts, useful, layers_useful, executed)
        now = last_ckpt = s_end
        committed += done
        useful += work_unc
        layers_useful += layers_unc
        done, work_unc, layers_unc = 0, 0.0, 0.0
        checkpoints += 1


def _out(finished, wall, committed, checkpoints, seen, restarts, useful, layers_useful, executed):
    return dict(
        finished=finished,
        wall=wall if finished else math.inf,
        committed=committed,
        checkpoints=checkpoints,
        failures_seen=seen,
        restarts=restarts,
        useful=useful,
        layers_useful=layers_useful,
        steps_executed=executed,
    )
