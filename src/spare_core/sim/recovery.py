"""How a cluster recovers besides its persistent checkpoint: hot spares and repairs, an
in-memory checkpoint tier, and what GPU time costs.

Three values a :class:`~spare_core.sim.Scenario` may carry (each omitted: the SPARe paper's
model, bit for bit):

* :class:`Repairs` -- a failed node goes to repair and is back in the spare pool
  ``time`` later; its replacement is in place ``swap`` after a spare is free; a group whose
  node was swapped catches up from a live peer and rejoins ``rejoin`` later.
* :class:`MemoryTier` -- snapshots to other nodes' host memory every ``every`` seconds of
  compute at ``save`` seconds each; a restart whose snapshot copies survive restores from
  memory in ``restore`` seconds, else from the persistent checkpoint.
* :class:`Pricing` -- the price of a GPU-hour and the GPUs paid for (spares included).

The run loop's compiled parts (``spare_core._ext._timeline``: ``merge_repairs`` and the
event kinds of ``advance``) do the per-failure work; :class:`RepairBook` holds one run's
repair state between batches.

References
----------
.. [1] Z. Wang et al., "GEMINI: Fast Failure Recovery in Distributed Training with
   In-Memory Checkpoints", SOSP 2023 (snapshots in peers' CPU memory, placement against
   failure domains).
.. [2] A. Moody et al., "Design, Modeling, and Evaluation of a Scalable Multi-level
   Checkpointing System", SC 2010 (multi-level checkpoints).
.. [3] J. D. C. Little, "A Proof for the Queuing Formula L = lambda W", Operations Research
   9(3), 1961 (nodes in repair: failure rate times repair time).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._native import load
from .._results import fields_dict
from .._validate import as_float, as_int

__all__ = ["Repairs", "MemoryTier", "Pricing", "RepairBook", "copy_holders"]


def _seconds(value, name, *, allow_inf=False, strict=False):
    return as_float(value, name, min_value=0.0, strict_min=strict, allow_inf=allow_inf)


@dataclass(frozen=True)
class Repairs:
    """Hot spares and repairs: how failed nodes come back.

    Parameters
    ----------
    swap : float, default 0
        Seconds from a spare being free to it being in the failed node's place, >= 0.
    spares : int or None, default None
        Hot-spare nodes in the pool; None: unlimited (a spare is always free). 0: the job
        waits for the failed node's own repair.
    time : float, default 0
        Seconds from a node's failure to it being repaired and back in the pool, >= 0.
    rejoin : float, default 0
        Seconds a group whose node was swapped takes to catch up from a live peer before it
        rejoins the job (SPARe, Rep, elastic), >= 0.
    gpus_per_node : int, default 8
        GPUs of a spare node (for GPU-hours and cost).
    taken_until : float or None, default None
        One spare of a finite pool is taken before the run starts and its slot is free again
        at this time (seconds from the start, may be negative): a node evicted before training
        resumes (a straggler swapped for a spare, :mod:`spare_core.sim.remedies`), back from its
        repair then. It is the pool's first use, so the failure that comes ``spares`` uses later
        waits for it. None: every spare free at the start.

    Notes
    -----
    The pool is first-in first-out: the k-th failure the job sees takes an initial spare if
    ``k < spares``, else the node of failure ``k - spares`` once repaired (repair times are
    all equal, so nodes come back in failure order). Its replacement is in place at
    ``max(f, free) + swap``. About ``rate * time`` nodes are in repair at once (Little's
    law): a pool much smaller than that makes failures wait for repairs.
    """

    swap: float = 0.0
    spares: int | None = None
    time: float = 0.0
    rejoin: float = 0.0
    gpus_per_node: int = 8
    taken_until: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "swap", _seconds(self.swap, "repair.swap"))
        object.__setattr__(self, "time", _seconds(self.time, "repair.time"))
        object.__setattr__(self, "rejoin", _seconds(self.rejoin, "repair.rejoin"))
        if self.spares is not None:
            object.__setattr__(self, "spares", as_int(self.spares, "repair.spares", min_value=0, max_value=10**7))
        object.__setattr__(self, "gpus_per_node", as_int(self.gpus_per_node, "gpus_per_node", min_value=1))
        if self.taken_until is not None:
            t = as_float(self.taken_until, "taken_until")
            if not math.isfinite(t):
                raise ValueError(f"taken_until must be finite, got {t!r}")
            if self.spares is None or self.spares < 1:
                raise ValueError(f"taken_until needs a finite pool of at least one spare, got spares={self.spares!r}")
            object.__setattr__(self, "taken_until", t)

    @property
    def spare_gpus(self) -> int:
        """GPUs held in the spare pool (0 for an unlimited pool, which is not paid for)."""
        return 0 if self.spares is None else self.spares * self.gpus_per_node

    def to_dict(self) -> dict:
        out = fields_dict(self)
        if self.taken_until is None:  # the dict (and a stored run's key) it had before the field existed
            del out["taken_until"]
        return out


@dataclass(frozen=True)
class MemoryTier:
    """An in-memory checkpoint tier beside the persistent checkpoint.

    Parameters
    ----------
    save : float
        Blocking seconds of one snapshot to other nodes' host memory, > 0.
    every : float
        Seconds of compute between snapshots (a snapshot follows the first step ending this
        long after the last snapshot or persistent save), > 0.
    restore : float
        Seconds to restart from the snapshot (instead of the scenario's restart time), >= 0.
    copies : int, default 1
        Copies of each group's snapshot, on other groups: the next groups in other failure
        domains where the failure model has domains, else spread over the groups (:func:`copy_holders`).

    Notes
    -----
    A restart restores from memory when every group down at that moment still has a copy on a
    group that is up; otherwise (a domain that held a group and all its copies) it falls back
    to the persistent checkpoint and the scenario's restart time.
    """

    save: float
    every: float
    restore: float
    copies: int = 1

    def __post_init__(self):
        object.__setattr__(self, "save", _seconds(self.save, "checkpoint.memory_save", strict=True))
        object.__setattr__(self, "every", _seconds(self.every, "checkpoint.memory_every", strict=True))
        object.__setattr__(self, "restore", _seconds(self.restore, "checkpoint.memory_restore"))
        object.__setattr__(self, "copies", as_int(self.copies, "checkpoint.memory_copies", min_value=1, max_value=64))

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass(frozen=True)
class Pricing:
    """What GPU time costs.

    Parameters
    ----------
    gpu_hour : float
        Price of one GPU-hour (any currency), > 0.
    """

    gpu_hour: float

    def __post_init__(self):
        object.__setattr__(self, "gpu_hour", as_float(self.gpu_hour, "costs.gpu_hour", min_value=0.0, strict_min=True))

    def to_dict(self) -> dict:
        return fields_dict(self)


def copy_holders(n_groups: int, copies: int, domain_of: np.ndarray | None = None) -> np.ndarray:
    """Groups holding each group's in-memory snapshot copies, shape ``(n_groups, copies)``.

    Without failure domains, group g's copies are on groups ``g + i * (N // (copies + 1))``
    (mod N), i = 1..copies: spread over the ring. With ``domain_of`` (the domain of each group;
    domains ordered by their first group, a group's position its rank within its domain), the
    i-th copy is on the group ``i`` domains further on at the same position within its domain
    (wrapping), so one domain never holds a group and its copies when there are more domains
    than copies.
    """
    g = np.arange(n_groups, dtype=np.int64)
    if domain_of is None or np.unique(domain_of).shape[0] <= 1:
        # spread evenly: neighbouring groups share racks and switches in a real placement,
        # and r neighbours down at once is exactly a cyclic wipe-out
        step = max(1, n_groups // (copies + 1))
        return (g[:, None] + step * np.arange(1, copies + 1)[None, :]) % n_groups
    dom = np.asarray(domain_of, dtype=np.int64)
    _, first, inv, size = np.unique(dom, return_index=True, return_inverse=True, return_counts=True)
    # domains in the order of their first group, a group's position its rank in its domain:
    # labels need not be contiguous (FailureDomains takes any labels)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    idx = rank[inv.ravel()]
    size = size[order]
    members = np.lexsort((g, idx))  # the groups, domain by domain
    begin = np.concatenate(([0], np.cumsum(size)[:-1]))
    pos = np.empty(n_groups, dtype=np.int64)
    pos[members] = np.arange(n_groups) - begin[idx[members]]
    nd = size.shape[0]
    out = np.empty((n_groups, copies), dtype=np.int64)
    for i in range(1, copies + 1):
        d = (idx + i) % nd
        out[:, i - 1] = members[begin[d] + pos % size[d]]
    return out


class RepairBook:
    """One run's repairs between batches: which groups are out until when, the rejoins
    pending, the spare pool's counter and ring (state of ``_timeline.merge_repairs``)."""

    __slots__ = ("kern", "rs", "back", "pend_t", "pend_g", "pool", "n", "spares", "_pre")

    def __init__(self, repairs: Repairs, n_groups: int):
        k = self.kern = load("_timeline")
        R = k.REPAIR_SLOTS
        self.n = n_groups
        self.rs = np.zeros(R["N_REPAIR"])
        self.rs[R["R_SWAP"]] = repairs.swap
        self.rs[R["R_REPAIR"]] = repairs.time
        self.rs[R["R_REJOIN"]] = repairs.rejoin
        self.spares = -1 if repairs.spares is None else repairs.spares
        self.rs[R["R_N_SPARES"]] = self.spares
        self.back = np.zeros(n_groups)
        self.pend_t = np.zeros(n_groups)
        self.pend_g = np.zeros(n_groups, dtype=np.int64)
        self.pool = np.zeros(max(1, self.spares))
        self._pre = repairs.taken_until is not None
        if repairs.taken_until is not None:  # a spare taken before the start: the pool's first use
            self.pool[0] = repairs.taken_until
            self.rs[R["R_USED"]] = 1

    def merge(self, raw_rel, raw_g, t_offset, raw_next, max_out):
        """The next events (failures in the job and rejoins) of a batch of raw failures."""
        rel = np.empty(max_out)
        g = np.empty(max_out, dtype=np.int64)
        rejoin = np.empty(max_out, dtype=np.int8)
        ready = np.empty(max_out)
        old = np.empty(max_out)
        raw = np.empty(max_out, dtype=np.int64)
        m, used = self.kern.merge_repairs(self.rs, self.back, self.pend_t, self.pend_g, self.pool,
                                          raw_rel, raw_g, t_offset, raw_next, rel, g, rejoin, ready, old, raw)
        return rel[:m], g[:m], rejoin[:m], ready[:m], old[:m], raw[:m], used

    def ready(self) -> float:
        """The latest replacement in place among this epoch's failures so far (a restart now
        resumes no earlier)."""
        return float(self.rs[self.kern.REPAIR_SLOTS["R_READY"]])

    def taken(self) -> int:
        """Failures that took a replacement from the pool in this run (a spare taken before
        the start, ``Repairs.taken_until``, not counted)."""
        return int(self.rs[self.kern.REPAIR_SLOTS["R_USED"]]) - (1 if self._pre else 0)

    def next_rejoin(self, t_offset) -> float:
        """Absolute time of the first pending rejoin (``inf``: none)."""
        R = self.kern.REPAIR_SLOTS
        if self.rs[R["R_COUNT"]] == 0:
            return math.inf
        return float(self.pend_t[int(self.rs[R["R_HEAD"]])])

    def restart(self, rejoin: np.ndarray, old: np.ndarray, kept: int) -> None:
        """A restart at event ``kept - 1`` of the last merge: undo the spare-pool updates of
        the failures after it, then every group is back and nothing is pending."""
        R = self.kern.REPAIR_SLOTS
        used = int(self.rs[R["R_USED"]])
        for i in range(rejoin.shape[0] - 1, kept - 1, -1):
            if rejoin[i] == 0:
                used -= 1
                if self.spares > 0:
                    self.pool[used % self.spares] = old[i]
        self.rs[R["R_USED"]] = used
        self.rs[R["R_READY"]] = 0.0
        self.rs[R["R_HEAD"]] = 0.0
        self.rs[R["R_COUNT"]] = 0.0
        self.back[:] = 0.0

    def down(self, t: float) -> np.ndarray:
        """Groups out of the job at time ``t`` (failed, not yet rejoined)."""
        return np.flatnonzero(self.back > t)
