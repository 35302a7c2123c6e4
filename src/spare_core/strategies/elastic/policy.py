"""Elastic (fault-tolerant) data parallelism: a failed replica group drops out, the others go on.

The strategy of torchft-style fault-tolerant DDP/HSDP: the data-parallel groups form a quorum
every step; a failed group is dropped, every group pauses while the process groups are
reconfigured, and the step in flight is redone by the live groups. With repairs
(:class:`spare_core.sim.Repairs`), a group whose node was swapped recovers its state from a
live peer and rejoins at a later step (another reconfiguration). Fewer than ``min_groups``
live groups: a global restart from the last checkpoint.

References
----------
.. [1] torchft: per-step fault tolerance for PyTorch (quorum, live recovery from a peer,
   ``min_replica_size``), github.com/pytorch/torchft.
.. [2] SPARe, arXiv:2603.00357 (the masked-failure step model this extends).
"""
from __future__ import annotations

import math

import numpy as np

from ..._params import Param
from ..._validate import as_float, as_int, check_choice
from ..protocol import DROPPED, REJOINED, RESTART, FailureHandler, Outcome, Outcomes, Policy
from ..registry import INTERVAL, policy_entry

__all__ = ["ElasticDP", "BATCH_MODES", "RESUME_MODES", "RENDEZVOUS_MODES", "ENTRY"]

#: what the live groups do with the dropped groups' samples
BATCH_MODES = ("keep", "shrink")
#: when a job that restarted on a log of capacity events resumes: once the fleet holds it
#: whole again, or on any whole groups it can fill (at least its fewest)
RESUME_MODES = ("whole", "any")
#: how a job following a fleet pays its membership changes: every drop and every join pauses,
#: or the changes of one instant (a swap: a removal an idle node replaces) are one reconfiguration
RENDEZVOUS_MODES = ("per_change", "per_instant")


class _ElasticHandler(FailureHandler):
    batch_hint = 16

    def __init__(self, n, k, batch, min_groups, table=None):
        self._n, self._k, self._batch, self._min = n, k, batch, min_groups
        self._down = np.zeros(n, dtype=np.int8)
        self._live = n
        # with a step-time table: (its live sizes, the depth giving each one's step seconds);
        # the smallest tabled size is the fewest groups the job runs on
        self._table = table
        if table is not None:
            self._min = max(min_groups, int(table[0][0]))

    def _table_depth(self, live):
        """Depth of a step at ``live`` groups by the table: the next tabled size down, 1 at full size."""
        sizes, depths = self._table
        i = np.searchsorted(sizes, live, side="right") - 1
        return np.where(np.asarray(live) >= self._n, 1.0, depths[np.maximum(i, 0)])

    def _state(self):
        # depth: micro-batch units per live group relative to one group's share; worth: the
        # fraction of a full step's samples one step covers
        if self._table is not None:
            return float(self._table_depth(self._live)), 1.0
        if self._batch == "keep":
            return math.ceil(self._n * self._k / self._live) / self._k, 1.0
        return 1.0, self._live / self._n

    def on_failure(self, group):
        o = self.on_failures(np.array([group], dtype=np.int64))
        return Outcome(bool(o.restart[0] == RESTART), float(o.depth[0]), 0.0, drop=bool(o.restart[0] == DROPPED),
                       worth=float(o.worth[0]))

    def on_rejoin(self, group):
        if self._down[group]:
            self._down[group] = 0
            self._live += 1
        d, w = self._state()
        return Outcome(False, d, 0.0, worth=w)

    def on_events(self, groups, rejoin):
        fast = self._vectorised(groups, rejoin)
        if fast is not None:
            return fast
        # a group twice in the batch, a failure of a group already out or a rejoin of one in
        # (never from the run loop): one event at a time
        n = groups.shape[0]
        kind = np.empty(n, dtype=np.int8)
        depth = np.empty(n)
        worth = np.empty(n)
        down = self._down
        for i in range(n):
            g = int(groups[i])
            if rejoin[i]:
                if down[g]:
                    down[g] = 0
                    self._live += 1
                kind[i] = REJOINED
            else:
                if not down[g]:
                    down[g] = 1
                    self._live -= 1
                if self._live < self._min:
                    kind[i], depth[i], worth[i] = RESTART, 1.0, 1.0
                    return Outcomes(kind[: i + 1], depth[: i + 1], np.zeros(i + 1), worth[: i + 1])
                kind[i] = DROPPED
            depth[i], worth[i] = self._state()
        return Outcomes(kind, depth, np.zeros(n), worth)

    def _vectorised(self, groups, rejoin):
        """The batch's answer in numpy when every event changes the live count by one (what
        the run loop hands out: each group's failures and rejoins alternating from its state);
        None otherwise."""
        n = groups.shape[0]
        if n == 0:
            return None
        back = rejoin.astype(bool)
        # each group's events must alternate from its state (a failure when in, a rejoin when
        # out): then every event moves the live count by one, a group failing and rejoining
        # within the batch included (what a run with repairs hands out)
        order = np.argsort(groups, kind="stable")
        g, b = groups[order], back[order]
        first = np.ones(n, dtype=bool)
        first[1:] = g[1:] != g[:-1]
        if (b[first] != self._down[g[first]].astype(bool)).any() or (b[1:][~first[1:]] == b[:-1][~first[1:]]).any():
            return None
        live = self._live + np.cumsum(np.where(back, 1, -1))
        low = np.flatnonzero(live < self._min)
        m = n if low.shape[0] == 0 else int(low[0]) + 1
        live = live[:m]
        kind = np.where(back[:m], REJOINED, DROPPED).astype(np.int8)
        if self._table is not None:
            depth = self._table_depth(live)
            worth = np.ones(m)
        elif self._batch == "keep":
            depth = np.ceil(self._n * self._k / np.maximum(live, 1)) / self._k
            worth = np.ones(m)
        else:
            depth = np.ones(m)
            worth = live / self._n
        if m < n or low.shape[0]:
            kind[m - 1], depth[m - 1], worth[m - 1] = RESTART, 1.0, 1.0
        # the last event of each group decides its state
        u, last = np.unique(groups[:m][::-1], return_index=True)
        self._down[u] = np.where(back[:m][::-1][last], 0, 1)
        self._live = int(live[-1])
        return Outcomes(kind, depth, np.zeros(m), worth)

    def on_failures(self, groups):
        return self.on_events(groups, np.zeros(groups.shape[0], dtype=np.int8))

    def restart(self):
        self._down[:] = 0
        self._live = self._n

    def resume_at(self, live):
        """After :meth:`restart`, the job resumes on ``live`` groups (``0 .. live - 1``, the
        fleet's stack of :meth:`FleetCapacity.membership`): the others are out. Returns the
        (depth, worth) of its steps there."""
        self._down[:] = 0
        self._down[int(live):] = 1
        self._live = int(live)
        return self._state()


class ElasticDP(Policy):
    """Elastic data parallelism (torchft-style): failed groups drop out, the others continue.

    Parameters
    ----------
    reconfigure : float, default 45
        Seconds every group pauses at a membership change (a group drops out or rejoins),
        >= 0.
    batch : {"keep", "shrink"}, default "keep"
        "keep": the live groups compute the dropped groups' micro-batches, so a step at L
        live groups of N takes ``ceil(N * k / L) / k`` times a group's share (k =
        ``microbatches``); "shrink": a step covers only the live groups' samples (a step
        takes the usual time and counts L / N of a step, so more steps are needed).
    min_groups : int, default 1
        Fewer live groups: global restart from the last checkpoint, >= 1.
    microbatches : int, default 1
        Micro-batches a group computes per step (gradient accumulation): the granularity at
        which "keep" spreads a dropped group's work, >= 1.
    interval : float or {"auto", "young", "daly"}, default "auto"
        Checkpoint interval (see :class:`Policy`); T_f is the mean time until fewer than
        ``min_groups`` groups are live without repairs, ``(N - min_groups + 1)`` failures.
    step_overhead : float or str, default 0
        What fault tolerance adds to every step, failures or not (the cross-group
        all-reduce of fault-tolerant DDP/HSDP, its bookkeeping): seconds (a number or a
        duration such as ``"0.4 s"``) or a share of the failure-free step (``"5 %"``).
    quorum : float or str, default 0
        Seconds of the membership quorum every step waits for (a duration).
    step_times : mapping of int to float or str, optional
        A step's seconds (compute and all-reduce, a number or a duration) at each number of
        live groups, measured rather than scaled: ``{6: "1.3 s", 4: "1.9 s"}``. A step at
        ``L`` live groups takes the entry of the largest tabled size ``<= L`` (the next size
        down: the job runs the configuration of that size, the groups above it idle), and at
        the full size the scenario's step. Fewer live groups than the smallest tabled size:
        a global restart (as below ``min_groups``). Keys are 1 .. ``n_groups - 1``, entries at
        least the full-size step (``t_compute + t_allreduce``); only with ``batch = "keep"``
        (each step covers the full batch). The per-step overhead and quorum come on top.
        None (default): ``batch``'s scaling.
    resume : {"whole", "any"}, optional
        On a log of capacity events that adds nodes, when a job that fell below its fewest
        groups (``min_groups``, the smallest tabled size) resumes after the restart:
        "whole" (the default) once the fleet holds the whole job again; "any" as soon as
        the fleet fills the fewest groups, on every whole group it fills then (and growing
        on later additions as before), from the last checkpoint.
    rendezvous : {"per_change", "per_instant"}, optional
        On a log of capacity events that adds nodes, what the job's membership changes cost:
        "per_change" (the default) pauses every group ``reconfigure`` at every drop and every
        join, so a swap (a removal an idle node replaces at once) pauses twice; "per_instant"
        makes the changes of one instant one reconfiguration: a join at the instant of an
        earlier drop or join pauses no more (one rendezvous rebuilds the job, as Bamboo's
        local rendezvous does, Thorpe et al., NSDI 2023). Drops at one instant already
        cost one pause either way (a drop during a pause starts it again).

    Notes
    -----
    A drop loses the step (or save) in flight: the live groups redo it after the pause. A
    rejoin pauses every group too and applies from the next step. Without repairs a dropped
    group stays out until a global restart, except on a log of capacity events that adds
    nodes (``failures.trace.event_column``): there the job follows the fleet, dropping groups
    at the removals and growing back to its size from the idle nodes
    (:meth:`FleetCapacity.membership <spare_core.events.trace_model.FleetCapacity.membership>`),
    each join pausing every group ``reconfigure`` seconds like a rejoin after a repair.
    """

    name = "Elastic DP"
    identity = "spare_core.sim.elastic.ElasticDP"
    redundancy = 1
    restart_is_wipeout = False
    # on a log of capacity events that adds nodes, the job follows the fleet: it grows back at
    # the additions (FleetCapacity.membership), each join a rejoin pause of ``reconfigure``
    grows_on_capacity = True

    def __init__(self, reconfigure=45.0, batch="keep", min_groups=1, microbatches=1, interval="auto",
                 step_overhead=0.0, quorum=0.0, step_times=None, resume=None, rendezvous=None) -> None:
        super().__init__(interval)
        self.step_overhead = step_overhead_value(step_overhead)
        self.quorum = STEP_PARAMS[1].read(quorum, "elastic.quorum")
        self.reconfigure = as_float(reconfigure, "elastic.reconfigure", min_value=0.0)
        self.batch = check_choice(batch, "elastic.batch", BATCH_MODES)
        self.min_groups = as_int(min_groups, "elastic.min_groups", min_value=1)
        self.microbatches = as_int(microbatches, "elastic.microbatches", min_value=1, max_value=1 << 20)
        if step_times is not None:  # set only when given: the dicts (run keys) of other policies are unchanged
            if self.batch != "keep":
                raise ValueError("elastic.step_times goes with batch = 'keep' (a tabled step covers the full batch)")
            self.step_times = _step_table(step_times)
        if resume is not None:  # set only when given, as step_times
            self.resume = check_choice(resume, "elastic.resume", RESUME_MODES)
        if rendezvous is not None:  # likewise
            self.rendezvous = check_choice(rendezvous, "elastic.rendezvous", RENDEZVOUS_MODES)

    def least_groups(self) -> int:
        """The fewest live groups the job runs on: ``min_groups``, or the smallest tabled size
        when larger (fewer: a global restart)."""
        table = getattr(self, "step_times", None)
        return self.min_groups if table is None else max(self.min_groups, int(table[0][0]))

    def check(self, scenario):
        if self.min_groups > scenario.n_groups:
            raise ValueError(f"elastic.min_groups must be at most the groups of the job ({scenario.n_groups}), "
                             f"got {self.min_groups}")
        table = getattr(self, "step_times", None)
        if table is not None:
            full = scenario.t_compute + scenario.t_allreduce
            for size, sec in table:
                if size >= scenario.n_groups:
                    raise ValueError(f"elastic.step_times: live sizes are 1 .. {scenario.n_groups - 1} (the full "
                                     f"size's step is the job's), got {size}")
                if sec < full:
                    raise ValueError(f"elastic.step_times: a step at {size} live groups ({sec:g} s) is shorter than "
                                     f"the full-size step ({full:g} s = step_time + allreduce_time)")

    def _depths(self, scenario):
        """The table as the kernel's depths: a step's seconds ``depth * t_compute + t_allreduce``."""
        sizes = np.array([k for k, _ in self.step_times], dtype=np.int64)
        secs = np.array([v for _, v in self.step_times])
        return sizes, (secs - scenario.t_allreduce) / scenario.t_compute

    def endurable_failures(self, scenario):
        table = getattr(self, "step_times", None)
        least = self.min_groups if table is None else max(self.min_groups, table[0][0])
        return float(scenario.n_groups - least + 1)

    def drop_seconds(self, scenario) -> float:
        """Seconds all groups pause when a group drops out."""
        return self.reconfigure

    def rejoin_seconds(self, scenario) -> float:
        """Seconds all groups pause when a group rejoins."""
        return self.reconfigure

    def step_seconds(self, scenario) -> float:
        """Seconds every step takes beyond the scenario's step: the per-step overhead (a share
        is of the failure-free step, compute plus all-reduce) and the quorum."""
        kind, x = self.step_overhead
        over = x * (scenario.t_compute + scenario.t_allreduce) if kind == "share" else x
        return over + self.quorum

    def handler(self, scenario):
        table = None if getattr(self, "step_times", None) is None else self._depths(scenario)
        return _ElasticHandler(scenario.n_groups, self.microbatches, self.batch, self.min_groups, table)


#: the per-step costs' parameters: ``step_overhead`` (seconds or a share, read by
#: :func:`step_overhead_value`) and ``quorum``
STEP_PARAMS = (Param("step_overhead", "any", 0.0, "what every step costs more: seconds, or a share such as '5 %'"),
               Param("quorum", "duration0", 0.0, "the membership quorum every step waits for"))


def _step_table(value) -> list:
    """``elastic.step_times`` checked: ``[[live groups, seconds], ...]`` by size (a TOML table's
    keys are text: ``"4"`` is 4 groups)."""
    if not isinstance(value, dict) or not value:
        raise ValueError(f"elastic.step_times must be a non-empty table of live groups = step seconds, got {value!r}")
    out = {}
    for k, v in value.items():
        try:
            size = int(k.strip()) if isinstance(k, str) else k
        except ValueError:
            size = None
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"elastic.step_times: a key is a number of live groups >= 1, got {k!r}")
        if int(size) in out:
            raise ValueError(f"elastic.step_times: {size} live groups given twice")
        out[int(size)] = Param("step_times", "duration").read(v, f"elastic.step_times.{k}")
    return [[k, out[k]] for k in sorted(out)]


def step_overhead_value(value) -> tuple[str, float]:
    """``elastic.step_overhead`` as ``("seconds", s)`` or ``("share", f)``.

    Examples
    --------
    >>> step_overhead_value("5 %"), step_overhead_value("0.4 s"), step_overhead_value(2)
    (('share', 0.05), ('seconds', 0.4), ('seconds', 2.0))
    """
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            share = float(value.strip()[:-1]) / 100.0
        except ValueError:
            share = math.nan
        if not 0.0 <= share <= 10.0:
            raise ValueError(f"elastic.step_overhead as a share must be between '0 %' and '1000 %' of the step, "
                             f"got {value!r}")
        return "share", share
    try:
        return "seconds", Param("step_overhead", "duration0").read(value, "elastic.step_overhead")
    except ValueError:
        raise ValueError(f"elastic.step_overhead must be seconds (a duration >= 0 such as '0.4 s') or a share of "
                         f"the step such as '5 %', got {value!r}") from None


#: the registry entry (``elastic``); a scenario file's ``[elastic]`` table is its shorthand
ENTRY = policy_entry(
    lambda r, **options: ElasticDP(**options), label=ElasticDP.name, uses_redundancy=False,
    params=[Param("reconfigure", "duration0", 45.0, "pause of every group at a membership change"),
            Param("batch", "choice", "keep", "the dropped groups' samples: computed by the others, or dropped",
                  choices=BATCH_MODES),
            Param("min_groups", "count", 1, "fewer live groups: a global restart"),
            Param("microbatches", "count", 1, "micro-batches per group and step (granularity of 'keep')",
                  high=1 << 20),
            INTERVAL, *STEP_PARAMS,
            Param("step_times", "any", None, "a step's seconds at each number of live groups (a table)"),
            Param("resume", "choice", None, "after a restart on a capacity log: resume on the whole job, or on any "
                  "whole groups the fleet fills", choices=RESUME_MODES),
            Param("rendezvous", "choice", None, "on a capacity log: a pause per membership change, or one per "
                  "instant (a swap pauses once)", choices=RENDEZVOUS_MODES)],
    table="elastic",
    description="elastic data parallelism (torchft-style): failed groups drop out, the others go on")
