"""Which of a fleet's instances the job runs on: a capacity log read instance by instance.

A capacity log (a spot trace: :func:`~spare_core.events.trace.read_trace`'s ``event_column``)
names the instance each row removes or adds. Read as counts, every removal takes a node of
the job and every addition is a node at once. Read instance by instance
(:func:`walk_instances`), two things a real fleet does come out of the names:

- *An idle instance costs nothing.* A fleet larger than the job holds idle instances; a
  preemption of one is no failure of the job (``removals = "instance"``).
- *An instance boots before it serves.* An addition is usable ``boot`` seconds after its
  row; one removed before that never served and never counted (``boot``).

The job's instances follow one rule, decided by the log alone (as every replay's failures
are, whatever the policy): the job holds ``min(usable, need)`` of the usable instances; when
one of them goes, the instance idle the longest takes over its node at once; an instance
becoming usable while the job holds fewer than ``need`` takes the lowest free node. So the
job holds, at every instant, the ``need`` instances usable the longest (the order Bamboo's
simulator fills its pipelines in: arrival, Thorpe et al., NSDI 2023), which
``tests/test_instances.py`` checks against a walk that ranks them from scratch at every row.
Where the log does not say which instances the fleet started with, those removed before
they are added are the starting fleet's, usable the longest in the order of their ids (a
log numbered by appearance: the order they came) and ahead of the rest of ``start``, which the
log never names (so the job starts on the instances that will go: the worst case).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import deque

import numpy as np

__all__ = ["InstanceView", "walk_instances", "REMOVALS"]

#: ``failures.trace.removals``: ``"job"`` (every removal takes a node of the job, the count
#: reading) or ``"instance"`` (a removal takes the instance its row names)
REMOVALS = ("job", "instance")


@dataclasses.dataclass(frozen=True, eq=False)
class InstanceView:
    """A capacity log as the job sees it (:func:`walk_instances`).

    Attributes
    ----------
    changes : (ndarray, ndarray)
        The fleet's usable capacity: times (float64, non-decreasing) and -1/+1 (int8), a
        removal of a usable instance at its row, an addition ``boot`` after its row.
    hits : ndarray of bool
        For each entry of ``changes``: a removal that takes a node of the job.
    rows : ndarray of int64
        The failure rows (indices into ``trace.times``) the job sees, in order.
    nodes : ndarray of int64
        The job's node (0 .. need-1) each of ``rows`` took (``"instance"``), or -1 (``"job"``:
        the count reading places a removal by its unit).
    idle, unbooted : int
        Removals of idle instances (no failure) and of instances still booting (no change).
    """

    changes: tuple
    hits: np.ndarray
    rows: np.ndarray
    nodes: np.ndarray
    idle: int
    unbooted: int


def walk_instances(changes, start: int, need: int, end: float, *, boot: float = 0.0,
                   removals: str = "instance") -> InstanceView:
    """Read a capacity log instance by instance (the module's rule).

    Parameters
    ----------
    changes : (ndarray, ndarray, ndarray)
        :attr:`Trace.changes <spare_core.events.trace.Trace.changes>` with its units: every
        row's time, -1/+1 and instance.
    start : int
        The fleet's instances before the log's first row (``failures.trace.capacity``).
    need : int
        The job's nodes.
    end : float
        The log's end: an instance whose boot ends after it is never usable (the log says
        nothing past it).
    boot : float
        Seconds from an addition's row until the instance can serve, >= 0 (rows at time 0 are
        the fleet the job starts on: usable at once).
    removals : {"instance", "job"}
        ``"instance"``: a removal of an idle instance is no failure. ``"job"``: every removal
        of a usable instance is one (the count reading, with ``boot`` applied).

    Returns
    -------
    InstanceView

    Raises
    ------
    ValueError
        The log removes an instance that is not in the fleet (removed twice), adds one already
        in it, or starts with more instances removed before added than ``start``.

    Examples
    --------
    A job of two on a fleet of two: instance 5, added at 1 s, is idle, and its removal at 3 s
    is no failure; instance 0 (of the starting fleet: its first row removes it) is on node 0,
    and when it goes at 6 s, 6 (idle since 4 s) takes over that node:

    >>> import numpy as np
    >>> ch = (np.array([1.0, 3.0, 4.0, 6.0]), np.array([1, -1, 1, -1]), np.array([5, 5, 6, 0]))
    >>> v = walk_instances(ch, 2, 2, 10.0)
    >>> v.rows.tolist(), v.nodes.tolist(), v.hits.tolist(), v.idle
    ([1], [0], [False, False, False, True], 1)

    With a 5-s boot, 5 is removed before it could serve (neither row counts) and 6 is usable
    at 9 s, after 0 left: node 0 is free from 6 s to 9 s:

    >>> v = walk_instances(ch, 2, 2, 10.0, boot=5.0)
    >>> v.changes[0].tolist(), v.changes[1].tolist(), v.rows.tolist(), v.unbooted
    ([6.0, 9.0], [-1, 1], [1], 1)
    """
    if len(changes) != 3:
        raise ValueError("reading a capacity log instance by instance needs the unit of every row "
                         "(a log read by read_trace's event_column)")
    ct, cd, cu = (np.asarray(a) for a in changes)
    start, need, boot = int(start), int(need), float(boot)
    if removals not in REMOVALS:
        raise ValueError(f"removals must be one of {list(REMOVALS)}, got {removals!r}")
    n = ct.shape[0]
    times, deltas, units = ct.tolist(), cd.tolist(), cu.tolist()
    # the starting fleet's named instances: those whose first row removes them
    first: dict = {}
    for u, d in zip(units, deltas):
        first.setdefault(u, d)
    named = sorted(u for u, d in first.items() if d < 0)
    if len(named) > start:
        raise ValueError(f"capacity: the log removes {len(named)} instances before adding them (the starting "
                         f"fleet's), more than its {start} nodes at the start: give failures.trace.capacity")
    # usable instances in the order they became usable (the anonymous ones as -1, -2, ...)
    order = deque(named + [-1 - i for i in range(start - len(named))])
    # "up" usable, the row of its addition while it boots; absent: out of the fleet
    state: dict = dict.fromkeys(named, "up")
    slot_of: dict = {}
    free: list = []  # free nodes of the job, a min-heap
    idle: deque = deque()  # usable instances outside the job, idle the longest first
    for s in range(need):
        if order:
            slot_of[order.popleft()] = s
        else:
            free.append(s)
    heapq.heapify(free)
    # the idle queue deletes lazily: an entry (instance, token) is live while in_idle holds that
    # token (an instance removed and added again queues anew, behind those idle longer)
    in_idle: dict = {}
    for tok, u in enumerate(order):
        idle.append((u, tok))
        in_idle[u] = tok
    token = len(order)
    out_t, out_d, out_h = [], [], []
    rows, nodes = [], []
    n_idle = n_unbooted = 0
    pending: list = []  # (ready time, row, instance) of booting instances

    def ready(u):
        nonlocal token
        if free:
            slot_of[u] = heapq.heappop(free)
        else:
            idle.append((u, token))
            in_idle[u] = token
            token += 1

    def boot_until(t):
        # instances whose boot ends before the row at t (at t itself too: a ready comes first)
        while pending and pending[0][0] <= t:
            r, row, u = heapq.heappop(pending)
            if state.get(u) == row:  # not removed (and added again) while it booted
                state[u] = "up"
                out_t.append(r)
                out_d.append(1)
                out_h.append(False)
                ready(u)

    fail = -1
    for i in range(n):
        t, d, u = times[i], deltas[i], units[i]
        boot_until(t)
        if d < 0:
            fail += 1
            s = state.pop(u, None)
            if s is None:
                raise ValueError(f"capacity: row {i} (t = {t:g} s) removes instance {u}, which is not in the fleet "
                                 "(removed before and not added since)")
            if s != "up":  # never served: neither its addition nor its removal counts
                n_unbooted += 1
                continue
            held = u in slot_of
            hit = held or removals == "job"
            out_t.append(t)
            out_d.append(-1)
            out_h.append(hit)
            if hit:
                rows.append(fail)
                nodes.append(slot_of[u] if (held and removals == "instance") else -1)
            if held:
                s_node = slot_of.pop(u)
                while idle and in_idle.get(idle[0][0]) != idle[0][1]:
                    idle.popleft()
                if idle:
                    v = idle.popleft()[0]
                    del in_idle[v]
                    slot_of[v] = s_node
                else:
                    heapq.heappush(free, s_node)
            else:
                del in_idle[u]
                n_idle += 1
        else:
            if u in state:
                raise ValueError(f"capacity: row {i} (t = {t:g} s) adds instance {u}, which is in the fleet already")
            if t == 0.0 or boot == 0.0:
                state[u] = "up"
                out_t.append(t)
                out_d.append(1)
                out_h.append(False)
                ready(u)
            else:
                state[u] = i
                heapq.heappush(pending, (t + boot, i, u))
    boot_until(float(end))  # past the log's end it says nothing
    ch = (np.array(out_t, dtype=np.float64), np.array(out_d, dtype=np.int8))
    if removals == "job":
        n_idle = 0
    return InstanceView(changes=ch, hits=np.array(out_h, dtype=bool), rows=np.array(rows, dtype=np.int64),
                        nodes=np.array(nodes, dtype=np.int64), idle=n_idle, unbooted=n_unbooted)
