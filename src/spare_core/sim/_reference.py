"""A slow, step-by-step pure-Python simulator of the same run model (test oracle and peer).

It shares nothing with the fast path but the model's definition (docs/model.md, sections 2,
3 and 3.3): it drives a *live* failure process (:meth:`spare_core.events.FailureModel.process`,
restarted at each resume time, one failure at a time, never an epoch source), or with
repairs the node failure log itself (:meth:`spare_core.events.NodeRenewals.log`: every node
failure, the run drops those of groups out of the job); asks the policy one event at a time
(``FailureHandler.on_failure`` / ``on_rejoin``; the elastic policy's membership rule is
written out here from docs/model.md); keeps the spare pool as the set of its nodes' free
times; and walks every step, save, snapshot and pause in Python. The tests require it to
reproduce :func:`spare_core.sim.simulate` exactly; the benchmarks time it as the
straightforward implementation a user would otherwise write.

Failure classes (docs/model.md, "Failure classes"): the i-th failure the process hands out in
epoch k (those of groups out of the job included) takes the class and detection time of row
i of epoch k's draws (:class:`spare_core.sim.classes.ClassDraws`, shared like the step
multipliers). A class no strategy masks restarts the job without asking the policy; a
job-wide one (``recovery = "restart"``) hits the job whether or not its node's group is in
it, takes no spare and leaves every group its snapshot. The detection delays the restart
(``(f + detect) + restart``), a masked failure (its seconds after the detection) or a drop's pause.
A failure of a domain class (``recovery = "domain"``) takes, at its time, its own group and then
every other group of its domain that is in the job (increasing order), whether or not its own
group is in it: one event, handed to the run one group at a time, its detection on the first.
"""
from __future__ import annotations

import bisect
import copy
import heapq
import math

from ..strategies import ElasticDP
from ..strategies import CheckpointOnly, Outcome
from .._seeding import run_seed
from .run import StepMultipliers

__all__ = ["reference_simulate", "reference_holders"]

_STEP, _SAVE, _MSAVE, _PAUSE, _PENDING = "step", "save", "msave", "pause", "pending"


def reference_simulate(scenario, policy, *, seed) -> dict:
    """Simulate one run step by step; return the headline numbers as a dict.

    Keys: ``finished``, ``wall``, ``committed`` (steps kept, fractional with elastic
    ``batch = "shrink"``), ``checkpoints``, ``failures_seen``, ``restarts``, ``useful``,
    ``layers_useful``, ``steps_executed``, ``rejoins``, ``memory_snapshots``,
    ``memory_restores``, ``lost_time``, ``save_time``, ``memory_save_time``,
    ``restart_time``, ``wait_time``, ``pause_time``, ``detect_time``, ``class_restarts``.
    """
    return _Run(scenario, policy, seed).run()


def reference_holders(n_groups: int, copies: int, domain_of=None) -> list:
    """Who holds each group's snapshot copies, as docs/model.md section 3.3 states it:
    spread evenly over the ring of groups without domains (copy i of group g on group
    ``g + i * max(1, N // (copies + 1))``), else copy i on the group at the same position
    in the domain i domains further on (domains in order of their first group, a group's
    position its rank among its domain's groups, wrapping in a smaller domain)."""
    if domain_of is None or len(set(int(d) for d in domain_of)) <= 1:
        step = max(1, n_groups // (copies + 1))
        return [[(g + step * i) % n_groups for i in range(1, copies + 1)] for g in range(n_groups)]
    members: dict = {}
    for g, d in enumerate(domain_of):
        members.setdefault(int(d), []).append(g)
    order = list(members)  # dicts keep insertion order: domains by their first group
    out = []
    for g, d in enumerate(domain_of):
        k = order.index(int(d))
        pos = members[int(d)].index(g)
        row = []
        for i in range(1, copies + 1):
            other = members[order[(k + i) % len(order)]]
            row.append(other[pos % len(other)])
        out.append(row)
    return out


class _Run:
    """One run's state; :meth:`run` walks it to the end."""

    def __init__(self, scenario, policy, seed):
        sc = self.sc = scenario
        self.policy = policy
        self.rep = sc.repair
        self.mem = sc.memory
        self.ckpt_only = isinstance(policy, CheckpointOnly)
        self.elastic = isinstance(policy, ElasticDP)
        # [fleet] retire_after: the log's rows carry the retirement flags, read from it
        retires = getattr(sc.failures, "retire_after", 0) and getattr(sc.failures, "log", None) is not None
        if self.rep is not None and (not self.ckpt_only or retires):
            # a swapped group is back before the next restart and can fail again: every node
            # failure (a replayed log hands out every row, also of groups out of the job)
            if getattr(sc.failures, "log", None) is None and getattr(sc.failures, "hands_out_every_failure", False):
                self.stream = _Lookahead(sc.failures.process(sc.n_groups, run_seed(seed, "failures"), every=True))
            else:
                self.stream = _LogFailures(sc, seed)
        else:
            self.stream = _Lookahead(sc.failure_stream(seed))
        # failures.clock = "compute": the stream reads the log on the job's computing time
        self.compute = getattr(sc.failures, "clock", "wall") == "compute"
        if self.compute:
            self.stream = _Exposure(self.stream)
        # a log of capacity events: the fleet's nodes over time (a restart waits for the job's),
        # and an elastic job on a log that adds nodes follows the fleet (_FleetMembers)
        self.fleet = None
        cap_of = getattr(sc.failures, "capacity_timeline", None)
        trace = getattr(sc.failures, "trace", None)
        if cap_of is not None and trace is not None and trace.changes is not None:
            npg = sc.failures.nodes_per_group or 1
            # a log read instance by instance: the fleet's usable nodes and the removals that take
            # one of the job's (events/instances.py, checked against its own oracle)
            view = sc.failures.view(sc.n_groups)
            self.fleet = _Fleet(trace.changes if view is None else view.changes, sc.failures.capacity,
                                sc.n_groups * npg, trace.end, None if view is None else view.hits)
            if self.elastic and self.fleet.grows:
                self.stream = _FleetMembers(self.fleet, sc.n_groups, npg)
        # elastic.resume = "any": a restart resumes once the fleet fills the fewest groups, on
        # every whole group it fills then (the reference's own count of them)
        self.resume_any = None
        if isinstance(self.stream, _FleetMembers) and getattr(policy, "resume", "whole") == "any":
            table = getattr(policy, "step_times", None)
            least = policy.min_groups if table is None else max(policy.min_groups, table[0][0])
            self.resume_any = (least, npg)
        self.handler = None if (self.ckpt_only or self.elastic) else policy.handler(sc)
        self.mults = StepMultipliers(sc, run_seed(seed, "step-multipliers"))
        self.buf, self.bi = self.mults.chunk(), 0
        self.interval = policy.checkpoint_interval(sc).seconds
        self.init_depth = float(policy.initial_depth(sc))
        self.fsec = float(policy.failure_seconds(sc))
        self.patch_cost = sc.t_compute if sc.charge_patch else 0.0
        self.max_wall = sc.max_wall_factor * sc.t0
        # a retired node's return time ([fleet] retire_after): past the wall limit, as the fast
        # path's (``RepairBook.never``)
        self.never = 2.0 * self.max_wall
        self.retired = []  # when each retired node left the fleet (its take's time): what the fleet holds
        self.reconf = float(policy.reconfigure) if self.elastic else 0.0
        self.per_instant = getattr(policy, "rendezvous", "per_change") == "per_instant"
        self.quiet_join = False
        # elastic's per-step overhead and quorum, once per step like the all-reduce
        over = policy.step_overhead[1] * (sc.t_compute + sc.t_allreduce) \
            if self.elastic and policy.step_overhead[0] == "share" else (policy.step_overhead[1] if self.elastic else 0.0)
        self.t_ar = sc.t_allreduce + (over + float(policy.quorum) if self.elastic else 0.0)
        self.holders = None
        if self.mem is not None:
            dom = None
            domains = getattr(sc.failures, "domains", None)
            if callable(domains):
                try:
                    dom = [int(x) for x in domains(sc.n_groups).labels[0]]
                except (TypeError, ValueError, AttributeError):
                    dom = None  # a model that cannot place its groups in domains (a log without racks)
            self.holders = reference_holders(sc.n_groups, self.mem.copies, dom)
        # the spare pool: a heap of the times its nodes are free (FIFO follows: repairs all take
        # the same time, so the node back first is the one that failed first)
        if self.rep is not None and self.rep.spares:
            self.pool = [-math.inf] * self.rep.spares
        else:
            self.pool = None
        self.c = dict(seen=0, restarts=0, rejoins=0, ckpt=0, nmem=0, nmemr=0, executed=0, forced=0)
        self.t = dict(lost=0.0, save=0.0, msave=0.0, restart=0.0, wait=0.0, pause=0.0, detect=0.0)
        cl = sc.failure_classes
        self.classes = None if cl is None else cl.classes
        self.cdraws = None if cl is None else cl.draws(run_seed(seed, "failures"))
        # classes by a replayed log's cause values: each row's class, mapped here one row at a
        # time (the fast path maps them with numpy.unique); the process says which row it handed
        self.row_class = None
        if cl is not None and cl.classes[0].values is not None:
            table = {v: i for i, c in enumerate(cl.classes) for v in c.values}
            self.row_class = [table[r.strip()] if r.strip() in table else table["*"] for r in sc.failures.trace.reasons]
        # a domain class's groups per domain (0: not a domain class)
        self.dgroups = None if cl is None else [c.groups if c.domain else 0 for c in cl.classes]
        self.pending = []  # the groups of a domain event not handed out yet: (time, group, class)
        self.det_row = -1  # the draws' row of the last failure's detection (-1: none, a copy)
        self.k = -1  # the epoch: restarts so far
        # drawn repairs: each take of the pool has its row of durations (the same rows as the
        # fast path's: a take's index, not the order of calls, addresses it)
        self.draws = None
        self.takes = 0
        if self.rep is not None and self.rep.drawn:
            from .recovery import RepairDraws

            self.draws = RepairDraws(self.rep, seed)
            self.standby = [-math.inf] * self.rep.standbys  # warm standbys' ready times

    # -- the job's events ---------------------------------------------------------------------
    def _epoch(self, start):
        self.start = start
        self.k += 1
        self.raw_i = 0  # failures the process handed out in the epoch
        self.pending = []
        self.out = {}  # group -> time its replacement is in place (inf: back only at a restart)
        self.rejoins = []  # heap of (absolute time, order of the failure, group)
        self.live = self.sc.n_groups
        # group -> since when it is up without a break (absent: the whole epoch; inf: down)
        self.up_since = {}
        self.depth = self.init_depth
        self.worth = 1.0

    def _rel(self, t):
        # every event reaches the run as an offset from its epoch's start (docs/reliability.md,
        # *Determinism*): a rejoin at absolute time t happens at start + (t - start)
        return self.start + (t - self.start)

    def _next_event(self, before):
        """The next event of the job before ``before``: ``("rejoin", t, g)``, ``("fail", t, g)``
        or None. Failures of groups out of the job are dropped on the way."""
        while True:
            f = self.pending[0][0] if self.pending else self.stream.peek()
            if self.rejoins and self.rejoins[0][0] <= f:  # a tie: the rejoin first
                t, _, g = self.rejoins[0]
                if self._rel(t) >= before:
                    return None
                heapq.heappop(self.rejoins)
                return ("rejoin", self._rel(t), g, -1)
            if f >= before:
                return None
            if self.pending:
                f, g, c = self.pending.pop(0)
                self.det_row = -1  # the event's detection came with its first group
                return ("fail", f, g, c)
            if isinstance(self.stream, _FleetMembers):
                f, g, join = self.stream.next_change()
                if join:
                    # elastic.rendezvous = "per_instant": a join after a change at its instant pauses no more
                    self.quiet_join = self.per_instant and self.stream.after_change
                    return ("rejoin", f, g, -1)
                return ("fail", f, g, -1)
            f, g = self.stream.next_failure()
            c = -1
            if self.cdraws is not None:
                cls, _ = self.cdraws.at(self.k, self.raw_i + 1)
                c = int(cls[self.raw_i])
                if self.row_class is not None:
                    row = int(self.stream.proc.handed_rows()[self.raw_i])
                    if row >= 0:  # a row of the log: its cause's class (the continuation's are drawn)
                        c = self.row_class[row]
            self.raw_i += 1
            self.det_row = self.raw_i - 1
            self.det_class = c
            if c >= 0 and self.dgroups[c]:
                # a domain's fault: its groups in the job at once, the failure's own first
                dg = self.dgroups[c]
                lo = (g // dg) * dg
                hit = [h for h in [g] + [h for h in range(lo, min(lo + dg, self.sc.n_groups)) if h != g]
                       if h not in self.out]
                if not hit:
                    continue
                self.pending = [(f, h, c) for h in hit[1:]]
                return ("fail", f, hit[0], c)
            if g in self.out and not (c >= 0 and self.classes[c].job_wide):
                continue  # the group is out: its node's failure changes nothing
            return ("fail", f, g, c)

    def _take_spare(self, f):
        """The time the failed node's replacement is in place."""
        rep = self.rep
        # [fleet] retire_after: a retired node never comes back (its return time inf)
        retire = getattr(self.stream, "last_retire", False)
        if self.draws is not None:
            return self._take_drawn(f, True, retire)
        back_at = self.never if retire else f + rep.time
        if retire:
            self.retired.append(f)
        if rep.spares is None:
            free = f
        elif rep.spares == 0:
            free = back_at  # no pool: the node itself, once repaired
        else:
            free = heapq.heapreplace(self.pool, back_at)
        return (free if free > f else f) + rep.swap

    def _take_drawn(self, f, first, retire=False):
        """``_take_spare`` with the take's own durations: the node back first among the pool
        and the failed node itself; a wrong diagnosis pulls the faulty node when the healthy
        one's replacement is in place (docs/model.md, section 3.3)."""
        k = self.takes
        self.takes += 1
        self.draws.cover(0, k + 1)  # never trimmed: the reference undoes no take
        i = k - self.draws.base
        back_at = f + float(self.draws.rep[i])
        wrong = first and self.draws.mis[i]
        if retire and not wrong:  # after a wrong diagnosis the faulty node, pulled second, retires
            back_at = self.never
            self.retired.append(f)
        # a warm standby ready at the failure: the one ready first (the lowest index on ties)
        j = min(range(len(self.standby)), key=lambda c: (self.standby[c], c), default=None)
        if j is not None and self.standby[j] > f:
            j = None
        if self.rep.spares is None:
            free = f
        elif self.rep.spares == 0:
            free = back_at
        else:
            free = heapq.heappushpop(self.pool, back_at)
        free = free if free > f else f
        hs = self.rep.host_select
        if j is not None:  # the standby in place; this take of the pool refills it
            self.standby[j] = free + hs
            ready = f + self.rep.standby_swap
        else:
            ready = (free + hs + float(self.draws.swap[i])) if hs != 0.0 else free + float(self.draws.swap[i])
        if wrong:
            return self._take_drawn(ready, False, retire)
        return ready

    # -- policy decisions ---------------------------------------------------------------------
    def _elastic_state(self):
        n, k = self.sc.n_groups, self.policy.microbatches
        table = getattr(self.policy, "step_times", None)
        if table is not None:
            # the next tabled size down, as a depth of (seconds - all-reduce) / compute
            if self.live >= n:
                return 1.0, 1.0
            sec = [v for size, v in sorted(table) if size <= self.live][-1]
            return (sec - self.sc.t_allreduce) / self.sc.t_compute, 1.0
        if self.policy.batch == "keep":
            return math.ceil(n * k / self.live) / k, 1.0
        return 1.0, self.live / n

    def _on_failure(self, g):
        """(kind, depth, patch) for a failure of group ``g``, which is in the job."""
        if self.ckpt_only:
            return "restart", self.init_depth, 0.0
        if self.elastic:
            self.live -= 1
            table = getattr(self.policy, "step_times", None)
            least = self.policy.min_groups if table is None else max(self.policy.min_groups, table[0][0])
            if self.live < least:
                return "restart", self.init_depth, 0.0
            return ("drop", *self._elastic_state()[:1], 0.0)
        o = self.handler.on_failure(g)
        assert isinstance(o, Outcome)
        return ("restart" if o.restart else "mask"), float(o.depth), float(o.patch_layers)

    def _on_rejoin(self, g):
        if self.elastic:
            self.live += 1
            return self._elastic_state()[0]
        return float(self.handler.on_rejoin(g).depth)

    # -- the walk ---------------------------------------------------------------------------
    def run(self) -> dict:
        sc, t = self.sc, self.t
        self._epoch(0.0)
        kind, a0, a1, layers, resume_kind = _PENDING, 0.0, 0.0, 0.0, None
        step_worth = 1.0
        self.t_last = self.t_mem = 0.0
        committed = done_mem = done_unc = 0.0
        work_mem = work_unc = useful = 0.0
        lay_mem = lay_unc = layers_useful = 0.0
        # rejoin pauses inside the activity in progress: seconds, and when the last one ends
        # (a rejoin pauses every group at once, after any pause under way)
        a_pause, pause_end = 0.0, -math.inf
        last_wait = 0.0  # the wait for replacements of the last restart
        wall = self.max_wall
        # an asynchronous save draining until drain_end, holding these steps until then
        drain = sc.checkpoint_drain
        drain_end = math.inf
        pend_done = pend_work = pend_lay = 0.0

        def land():
            # the save has drained: its steps are part of the trained model
            nonlocal committed, useful, layers_useful, pend_done, pend_work, pend_lay, drain_end
            committed += pend_done
            useful += pend_work
            layers_useful += pend_lay
            self.c["ckpt"] += 1
            pend_done = pend_work = pend_lay = 0.0
            drain_end = math.inf

        def elapsed_pause(x):
            # the part of the activity's rejoin pauses before x (what comes after x never happens)
            if pause_end > x:
                t["pause"] -= pause_end - x
                return a_pause - (pause_end - x)
            return a_pause

        def stop():
            # the run stops at the wall limit: the activity in progress is cut there and the
            # work not saved by then is lost with the job
            if kind == _PENDING:  # a restart (and its wait) still under way
                over = a1 - wall
                w = min(last_wait, over)
                t["wait"] -= w
                t["restart"] -= over - w
            elif kind == _PAUSE:
                t["pause"] += wall - a0
            else:
                t["lost"] += (wall - a0) - elapsed_pause(wall)
            if drain_end <= wall:
                land()
            t["lost"] += work_unc + work_mem + pend_work
            return self._out(False, committed, useful, layers_useful)

        while True:
            if kind == _PENDING:
                if a1 > self.max_wall:
                    return stop()
                if self.bi == self.buf.shape[0]:
                    self.buf, self.bi = self.mults.chunk(), 0
                a0, layers, step_worth = a1, self.depth, self.worth
                a1 = a0 + float(self.buf[self.bi]) * (self.depth * sc.t_compute + self.t_ar)
                self.bi += 1
                kind = _STEP
                a_pause, pause_end = 0.0, -math.inf
            ev = self._next_event(a1)
            if ev is not None:
                what, f, g, c = ev
                if f > self.max_wall:
                    return stop()  # the activity is still under way at the wall limit
                if drain_end <= f:
                    land()
                if what == "rejoin":
                    self.c["rejoins"] += 1
                    del self.out[g]
                    self.up_since[g] = f
                    self.depth = self._on_rejoin(g)
                    if self.elastic:
                        _, self.worth = self._elastic_state()
                    # every group pauses: the activity in progress takes longer (not when an
                    # earlier change of the instant paid its reconfiguration)
                    pause = 0.0 if self.quiet_join else self.reconf
                    self.quiet_join = False
                    a1 += pause
                    if kind != _PAUSE:
                        t["pause"] += pause
                        a_pause += pause
                        pause_end = max(pause_end, f) + pause
                    continue
                self.c["seen"] += 1
                cl = None if c < 0 else self.classes[c]
                d = 0.0
                if cl is not None and self.det_row >= 0:
                    d = float(self.cdraws.at(self.k, self.raw_i)[1][self.det_row])
                    if self.row_class is not None:  # the detection law of the row's class, on the row's uniform
                        import numpy as np

                        u = self.cdraws.uniforms(self.k)[self.det_row : self.det_row + 1]
                        d = float(self.cdraws.detection(np.array([self.det_class], dtype=np.int8), u)[0])
                t["detect"] += d
                if cl is None or not cl.job_wide:  # a node's fault: the node is replaced
                    self.up_since[g] = math.inf
                    ready = self._take_spare(f) if self.rep is not None else -math.inf
                    self.out[g] = (ready, ready + self.rep.rejoin if self.rep is not None else math.inf)
                    if self.rep is not None:
                        heapq.heappush(self.rejoins, (self.out[g][1], self.c["seen"], g))
                if cl is not None and not cl.masked:
                    what, depth, patch = "restart", self.init_depth, 0.0  # the policy is not asked
                    self.c["forced"] += 1
                else:
                    what, depth, patch = self._on_failure(g)
                if what == "restart":
                    from_memory = self._restore_from_memory(f)
                    if kind == _PAUSE:
                        t["pause"] += f - a0
                        own = 0.0
                    else:
                        own = (f - a0) - elapsed_pause(f)
                    if from_memory:
                        t["lost"] += work_unc + own
                        if drain_end < math.inf:  # the drain ends; its steps are held in memory
                            done_mem += pend_done
                            work_mem += pend_work
                            lay_mem += pend_lay
                            pend_done = pend_work = pend_lay = 0.0
                            drain_end = math.inf
                        rt = self.mem.restore
                        self.c["nmemr"] += 1
                    else:
                        t["lost"] += work_unc + work_mem + pend_work + own
                        pend_done = pend_work = pend_lay = 0.0
                        drain_end = math.inf
                        done_mem = work_mem = lay_mem = 0.0
                        rt = sc.restart_time
                    done_unc = work_unc = lay_unc = 0.0
                    resume = (f + d) + rt
                    t["restart"] += d + rt
                    last_wait = 0.0
                    if self.rep is not None and (self.out or self.rep.restart_when != "one"):
                        # every group down has its replacement in place before the job resumes
                        ready = max((r for r, _ in self.out.values()), default=-math.inf)
                        if self.rep.restart_when == "job+standbys":  # and every warm standby is ready
                            ready = max(ready, *self.standby)
                        if ready > resume:
                            last_wait = ready - resume
                            t["wait"] += ready - resume
                            resume = ready
                    if self.fleet is not None:
                        # the job resumes once the fleet holds its nodes again
                        need = None if self.resume_any is None else self.resume_any[0] * self.resume_any[1]
                        ok = self.fleet.ready_at(f + rt, need)
                        if ok > resume:
                            last_wait = ok - resume
                            t["wait"] += ok - resume
                            resume = ok
                    if not from_memory:
                        self.t_last = resume
                    self.t_mem = resume
                    self.c["restarts"] += 1
                    if self.handler is not None:
                        self.handler.restart()
                    kind, a1 = _PENDING, resume
                    if resume > self.max_wall:
                        return stop()  # the next epoch's failures are never needed
                    if self.compute:  # the job was down from the failure to the resume
                        self.stream.off += resume - f
                    self.stream.restart(resume)
                    self._epoch(resume)
                    if self.resume_any is not None:
                        least, npg = self.resume_any
                        if resume < self.fleet.end:  # past the log's end the fleet counts as whole
                            self.live = max(least, min(sc.n_groups, self.fleet.nodes_at(resume) // npg))
                        for g in range(self.live, sc.n_groups):  # the groups the fleet does not fill are out
                            self.out[g] = (-math.inf, math.inf)
                            self.up_since[g] = math.inf
                        self.depth, self.worth = self._elastic_state()
                    continue
                if what == "drop":
                    # the activity in flight is lost; all pause, then the live groups redo it
                    if kind == _PAUSE:
                        t["pause"] += f - a0
                    else:
                        t["lost"] += (f - a0) - elapsed_pause(f)
                        resume_kind = kind
                    self.depth, self.worth = self._elastic_state()
                    kind, a0, a1 = _PAUSE, f, (f + d) + self.reconf
                    continue
                a1 += d + self.fsec + self.patch_cost * patch
                if kind == _STEP and sc.charge_patch:
                    layers += patch
                self.depth = depth
                continue
            if a1 > self.max_wall:
                return stop()
            if drain_end <= a1:
                land()
            if kind == _STEP:
                self.c["executed"] += 1
                done_unc += step_worth
                work_unc += (a1 - a0) - a_pause  # a rejoin's pause is pause time, not the step's
                lay_unc += layers
                if committed + pend_done + done_mem + done_unc >= sc.n_steps:
                    # the last step covers what remains of the job (a "shrink" step counts a
                    # fraction: the kept steps are n_steps, not more)
                    committed = float(sc.n_steps)
                    useful += pend_work  # a save still draining no longer matters
                    layers_useful += pend_lay
                    useful += work_mem + work_unc
                    layers_useful += lay_mem + lay_unc
                    return self._out(True, committed, useful, layers_useful, wall=a1)
                a0 = a1
                a_pause, pause_end = 0.0, -math.inf
                if a1 - self.t_last >= self.interval:
                    # a save due while the previous one drains waits for it
                    kind, a1 = _SAVE, (a1 if drain_end == math.inf else drain_end) + sc.checkpoint_time
                elif self.mem is not None and a1 - self.t_mem >= self.mem.every:
                    kind, a1 = _MSAVE, a1 + self.mem.save
                else:
                    kind = _PENDING
            elif kind == _SAVE:
                if drain > 0.0:
                    # the host copy is taken: the steps wait for the drain
                    pend_done, pend_work, pend_lay = done_mem + done_unc, work_mem + work_unc, lay_mem + lay_unc
                    drain_end = a1 + drain
                else:
                    committed += done_mem + done_unc
                    useful += work_mem + work_unc
                    layers_useful += lay_mem + lay_unc
                    self.c["ckpt"] += 1
                done_mem = work_mem = lay_mem = done_unc = work_unc = lay_unc = 0.0
                t["save"] += (a1 - a0) - a_pause
                self.t_last = self.t_mem = a1
                kind = _PENDING
            elif kind == _MSAVE:
                done_mem += done_unc
                work_mem += work_unc
                lay_mem += lay_unc
                done_unc = work_unc = lay_unc = 0.0
                self.c["nmem"] += 1
                t["msave"] += (a1 - a0) - a_pause
                self.t_mem = a1
                kind = _PENDING
            else:  # the pause is over: the lost activity starts again
                t["pause"] += a1 - a0
                a0 = a1
                a_pause, pause_end = 0.0, -math.inf
                if resume_kind == _SAVE:
                    kind, a1 = _SAVE, (a0 if drain_end == math.inf else drain_end) + sc.checkpoint_time
                elif resume_kind == _MSAVE:
                    kind, a1 = _MSAVE, a0 + self.mem.save
                else:
                    kind = _PENDING

    def _restore_from_memory(self, f) -> bool:
        """A restart at ``f`` restores the last snapshot (ended at ``t_mem``) when every group
        without it has a copy on a group that has it. A group has the snapshot and the copies
        it holds when it has been up without a break since then: not a group down at the
        snapshot, failing since (its node replaced, host memory and all) or at ``f`` itself."""
        if self.mem is None:
            return False
        gone = {g for g, t in self.up_since.items() if t >= self.t_mem} | set(self.stream.at(f)) \
            | {h for _, h, _ in self.pending}  # a domain event's groups not handed out yet
        return all(any(h not in gone for h in self.holders[g]) for g in gone)

    def _out(self, finished, committed, useful, layers_useful, wall=None):
        c, t = self.c, self.t
        return dict(
            finished=finished,
            wall=wall if finished else math.inf,
            committed=committed,
            checkpoints=c["ckpt"],
            failures_seen=c["seen"],
            restarts=c["restarts"],
            useful=useful,
            layers_useful=layers_useful,
            steps_executed=c["executed"],
            rejoins=c["rejoins"],
            memory_snapshots=c["nmem"],
            memory_restores=c["nmemr"],
            lost_time=t["lost"],
            save_time=t["save"],
            memory_save_time=t["msave"],
            restart_time=t["restart"],
            wait_time=t["wait"],
            pause_time=t["pause"],
            detect_time=t["detect"],
            class_restarts=c["forced"],
            retired=list(self.retired),
        )


class _Fleet:
    """The fleet's nodes from a capacity log's rows, walked row by row (no numpy): the
    reference's own reading of ``failures.trace.capacity`` and the log."""

    def __init__(self, changes, start, need, end, hits=None):
        hits = [d < 0 for d in changes[1].tolist()] if hits is None else hits.tolist()
        # (time, change, whether a removal takes a node of the job)
        self.rows = sorted(zip(changes[0].tolist(), changes[1].tolist(), hits), key=lambda r: r[0])
        self.start = need if start is None else int(start)
        self.need, self.end = int(need), float(end)
        self.instants = sorted({t for t, _, _ in self.rows})
        self.grows = any(d > 0 for _, d, _ in self.rows)

    def nodes_at(self, x) -> int:
        """Nodes after every row at or before ``x``."""
        return self.start + sum(d for t, d, _ in self.rows if t <= x)

    def ready_at(self, t0, need=None) -> float:
        """The earliest resume at or after ``t0`` with ``need`` nodes (default the job's) in
        the fleet (a row one rounding away from ``t0`` counts as at it; the log's end when it
        never holds them)."""
        need = self.need if need is None else need
        x = t0 + 1e-9 * max(1.0, abs(t0))
        if self.nodes_at(x) >= need or not any(t <= x for t in self.instants):
            return -math.inf
        return next((u for u in self.instants if u > x and self.nodes_at(u) >= need), self.end)


class _FleetMembers:
    """An elastic job following the fleet, instant by instant: ``r`` removals drop
    ``min(r, live)`` groups, then the job fills ``min(n, nodes // nodes_per_group)`` groups
    from the idle nodes; drops and joins pair up first (a swap: the join first when the job is
    short, the drop first at its full size), then the other drops, then the other joins; a drop takes the top live group, a join brings the
    next one back. The changes of instants up to a restart's resume are skipped."""

    def __init__(self, fleet, n, npg):
        self.events = []
        live, nodes = n, fleet.start
        for u in fleet.instants:
            rows = [(d, h) for t, d, h in fleet.rows if t == u]
            nodes += sum(d for d, _ in rows)
            drops = min(sum(1 for d, h in rows if d < 0 and h), live)
            target = min(n, nodes // npg)
            joins = target - live + drops
            seq = []
            while drops and joins:  # a swap: its join first when the job is short
                seq += [1, 0] if live < n else [0, 1]
                drops, joins = drops - 1, joins - 1
            seq += [0] * drops + [1] * joins
            for j in seq:
                if j:
                    self.events.append((u, live, 1))
                    live += 1
                else:
                    live -= 1
                    self.events.append((u, live, 0))
        self.i, self.start, self.first = 0, 0.0, True

    def peek(self) -> float:
        if self.i >= len(self.events):
            return math.inf
        t = self.events[self.i][0]
        return self.start + (t - self.start)

    def next_change(self):
        t, g, j = self.events[self.i]
        # whether an earlier change of the job is at this instant
        self.after_change = self.i > 0 and self.events[self.i - 1][0] == t
        self.i += 1
        return self.start + (t - self.start), g, j

    def restart(self, time) -> None:
        self.start = time
        while self.i < len(self.events) and self.events[self.i][0] <= time:
            self.i += 1


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

    def at(self, t) -> list:
        """The groups of the next failures if they are at ``t`` exactly, not consumed (read from a
        copy of the process: the live one cannot restart before a failure it has handed out)."""
        probe = _Lookahead(copy.deepcopy(self.proc))
        probe.buf = self.buf
        out = []
        while probe.peek() == t:
            out.append(probe.next_failure()[1])
        return out

    def restart(self, time) -> None:
        self.buf = None  # a restart follows a consumed failure: nothing is pending
        self.proc.restart(time)


class _Exposure:
    """The reference's compute clock: a stream reading the log at the job's computing time,
    ``off`` (the seconds the job was down, kept by the run) behind the wall clock. A restart
    resumes the log after ``resume - off``, a row one rounding from the restart's own failure
    counting as at it."""

    def __init__(self, inner):
        self.inner, self.off = inner, 0.0
        self.last = None  # the log time of the last failure handed out

    @property
    def last_retire(self):
        return getattr(self.inner, "last_retire", False)

    def peek(self) -> float:
        return self.inner.peek() + self.off

    def next_failure(self):
        e, g = self.inner.next_failure()
        self.last = e
        return e + self.off, g

    def at(self, t) -> list:
        # the instant of the failure just handed out, on the log's clock (not peeked: a peek
        # would take the next failure from the stream)
        e = self.last if self.last is not None and self.last + self.off == t else t - self.off
        return self.inner.at(e)

    def restart(self, time) -> None:
        # the rows after the restart's own failure (within a rounding of it: at it), each
        # ``off`` after its log time
        x = time - self.off
        self.inner.restart(x + 1e-9 * max(1.0, abs(x)) if self.off != 0.0 else x)


class _LogFailures:
    """Every failure of the scenario's node failure log after the epoch's start, also those
    of groups out of the job (the run drops them): what a job with repairs meets."""

    def __init__(self, scenario, seed):
        log = getattr(scenario.failures, "log", None)
        if log is None:
            raise ValueError(f"[repair]: failure model {scenario.failure_model!r} has no node failure log")
        self.log = log(scenario.n_groups, run_seed(seed, "failures"))
        self.start = 0.0
        self.i = 0
        self.last_retire = False  # [fleet] retire_after: the last failure handed out retires its node

    def peek(self) -> float:
        log = self.log
        while self.i >= len(log.times):
            if log.horizon == math.inf:  # the log is complete (a placement's fleet retired whole)
                return math.inf
            log.extend()
        return self.start + (log.times[self.i] - self.start)

    def next_failure(self):
        f = self.peek()
        g = self.log.groups[self.i]
        ret = self.log.retire
        self.last_retire = bool(ret is not None and ret[self.i])
        self.i += 1
        return f, g

    def at(self, t) -> list:
        """The groups of the next failures if they are at ``t`` exactly (not consumed)."""
        i, out = self.i, []
        while self.peek() == t:
            out.append(self.log.groups[self.i])
            self.i += 1
        self.i = i
        return out

    def restart(self, time) -> None:
        log = self.log
        while log.horizon <= time:
            log.extend()
        self.start = time
        self.i = bisect.bisect_right(log.times, time)

