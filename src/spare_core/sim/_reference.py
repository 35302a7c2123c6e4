"""A slow, step-by-step pure-Python simulator of the same run model (test oracle and peer).

It shares nothing with the fast path but the model's definition: it drives a *live*
failure process (:meth:`spare_core.events.FailureModel.process`, restarted at each resume
time, one failure at a time, never an epoch source), asks the policy one failure at a time
(``FailureHandler.on_failure``), and walks every step and save in Python. The tests require
it to reproduce :func:`spare_core.sim.simulate` exactly; the benchmarks time it as the
straightforward implementation a user would otherwise write.
"""
from __future__ import annotations

import math

from .policies import Outcome
from .._seeding import run_seed
from .run import StepMultipliers

__all__ = ["reference_simulate"]


def reference_simulate(scenario, policy, *, seed) -> dict:
    """Simulate one run step by step; return the headline numbers as a dict.

    Keys: ``finished``, ``wall``, ``committed``, ``checkpoints``, ``failures_seen``,
    ``restarts``, ``useful``, ``layers_useful``, ``steps_executed``.
    """
    stream = _Lookahead(scenario.failure_stream(seed))
    handler = policy.handler(scenario)
    mults = StepMultipliers(scenario, run_seed(seed, "step-multipliers"))
    buf, bi = mults.chunk(), 0
    interval = policy.checkpoint_interval(scenario).seconds
    init_depth = float(policy.initial_depth(scenario))
    fsec = float(policy.failure_seconds(scenario))
    patch_cost = scenario.t_compute if scenario.charge_patch else 0.0
    max_wall = scenario.max_wall_factor * scenario.t0

    charge = scenario.charge_patch
    st = dict(depth=init_depth, seen=0, restarts=0)

    def activity(end):
        """Failures before ``end``: ``(end, patch layers added, resume time or None)``."""
        added = 0.0
        while stream.peek() < end:
            t, g = stream.next_failure()
            st["seen"] += 1
            o = handler.on_failure(g)
            assert isinstance(o, Outcome)
            if o.restart:
                st["restarts"] += 1
                st["depth"] = init_depth
                resume = t + scenario.restart_time
                stream.restart(resume)
                handler.restart()
                return end, added, resume
            end += fsec + patch_cost * o.patch_layers
            added += o.patch_layers if charge else 0.0
            st["depth"] = o.depth
        return end, added, None

    now = last_ckpt = 0.0
    committed = done = checkpoints = executed = 0
    work_unc = layers_unc = useful = layers_useful = 0.0
    saving = False
    while True:
        if saving:
            end = now + scenario.checkpoint_time
        else:
            if now > max_wall:
                break
            if bi == buf.shape[0]:
                buf, bi = mults.chunk(), 0
            start, layers = now, st["depth"]
            end = start + float(buf[bi]) * (layers * scenario.t_compute + scenario.t_allreduce)
            bi += 1
        end, added, resume = activity(end)
        if resume is not None:
            done, work_unc, layers_unc = 0, 0.0, 0.0
            now = last_ckpt = resume
            saving = False
            continue
        if end > max_wall:
            break
        now = end
        if saving:
            last_ckpt = end
            committed += done
            useful += work_unc
            layers_useful += layers_unc
            done, work_unc, layers_unc = 0, 0.0, 0.0
            checkpoints += 1
            saving = False
            continue
        executed += 1
        done += 1
        work_unc += end - start
        layers_unc += layers + added
        if committed + done >= scenario.n_steps:
            return _out(True, now, committed + done, checkpoints, st["seen"], st["restarts"], useful + work_unc,
                        layers_useful + layers_unc, executed)
        saving = now - last_ckpt >= interval
    return _out(False, max_wall, committed, checkpoints, st["seen"], st["restarts"], useful, layers_useful, executed)


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


class _Lookahead:
    """``peek`` / ``next_failure`` over a :class:`spare_core.events.FailureProcess`.

    A failure happens at ``epoch_start + offset`` (one rounding; docs/reliability.md,
    *Determinism*), its offset being ``t - epoch_start`` for the time ``t`` the process
    hands out. For a process that computes ``t`` as ``epoch_start + offset`` (every built-in
    one that renews its clocks at a restart, and the node model) this gives ``t`` back bit
    for bit; for one that reads wall times (a trace) it is the time the fast path uses.
    """

    def __init__(self, proc):
        self.proc = proc
        self.buf = None

    def peek(self) -> float:
        if self.buf is None:
            t, u = self.proc.take(1, True)
            if t:
                start = self.proc.epoch_start
                self.buf = (start + (t[0] - start), u[0])
            else:
                self.buf = (math.inf, -1)
        return self.buf[0]

    def next_failure(self):
        self.peek()
        out, self.buf = self.buf, None
        return out

    def restart(self, time) -> None:
        self.buf = None  # a restart follows a consumed failure: nothing is pending
        self.proc.restart(time)
