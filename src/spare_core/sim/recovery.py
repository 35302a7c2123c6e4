"""How a cluster recovers besides its persistent checkpoint: hot spares and repairs, an
in-memory checkpoint tier, and what GPU time costs.

Three values a :class:`~spare_core.sim.Scenario` may carry (each omitted: the SPARe paper's
model, bit for bit):

* :class:`Repairs` -- a failed node goes to repair and is back in the spare pool
  ``time`` later; its replacement is in place ``swap`` after a spare is free; a group whose
  node was swapped catches up from a live peer and rejoins ``rejoin`` later. ``time`` and
  ``swap`` may be laws (:mod:`spare_core.distributions`), with a manual stage after the
  automatic repair (``escalate``), repairs that do not fix the node (``fail_fix``) and wrong
  diagnoses (``misdiagnose``); :class:`RepairDraws` draws them per take of the pool.
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
from .._seeding import run_seed, stream_rng
from .._validate import as_float, as_int
from ..distributions import Distribution, as_distribution, distribution_from_dict

#: ``[fleet] restart_when``: when a restart resumes (``Repairs.restart_when``)
RESTART_RULES = ("one", "job+standbys")

__all__ = ["RESTART_RULES", "Repairs", "MemoryTier", "Pricing", "RepairBook", "RepairDraws", "copy_holders"]


def _seconds(value, name, *, allow_inf=False, strict=False):
    return as_float(value, name, min_value=0.0, strict_min=strict, allow_inf=allow_inf)


def _law(value, name):
    """A duration: seconds >= 0, or a :class:`~spare_core.distributions.Distribution` (or the
    dict :meth:`~spare_core.distributions.Distribution.to_dict` writes, as a stored scenario has it)."""
    if isinstance(value, dict):
        value = distribution_from_dict(value, name)
    if isinstance(value, Distribution):
        return as_distribution(value, name)
    return _seconds(value, name)


def _mean(value) -> float:
    return float(value.mean) if isinstance(value, Distribution) else float(value)


def _probability(value, name, *, below_one):
    p = as_float(value, name, min_value=0.0)
    if p > 1.0 or (below_one and p == 1.0):
        raise ValueError(f"{name} must be a probability in [0, 1{')' if below_one else ']'}, got {p!r}")
    return p


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
    manual_time : float or Distribution, default 0
        The manual repair that follows an automatic one (``time``) with probability
        ``escalate``: that node is back after ``time + manual_time``.
    escalate : float, default 0
        Probability in [0, 1] that a repair escalates to the manual stage (needs
        ``manual_time`` > 0).
    fail_fix : float, default 0
        Probability in [0, 1) that a repair (both stages) leaves the node broken: it is
        repaired again, so a node's repair is a geometric number of rounds.
    misdiagnose : float, default 0
        Probability in [0, 1) that a failure's diagnosis blames a healthy node: that node is
        pulled (a spare and a repair of its own), the faulty one stays and its fault shows
        again when the replacement is in place; it is pulled then (a second take of the pool).
    standbys : int, default 0
        Warm standby nodes ([fleet]): a failure that finds one ready has it in place
        ``standby_swap`` after the failure, and the standby is refilled from the pool, ready
        ``host_select`` after the pool's node is free. A failure that finds none takes the
        pool's node directly, in place ``host_select + swap`` after it is free.
    standby_swap : float, default 0
        Seconds from a failure to a ready warm standby being in its place, >= 0.
    host_select : float, default 0
        Seconds to select and warm a node from the pool once it is free, >= 0.
    restart_when : {"one", "job+standbys"}, default "one"
        When a restart resumes: "one", as soon as the job's replacements are in place (each
        failure's node, so one free node per failed one); "job+standbys", only once every
        warm standby is ready again too (the job plus its standbys fit; needs ``standbys``).
    retire_after : int, default 0
        A node failing this many times leaves the fleet ([fleet]): its repair never ends, so
        the pool shrinks by one. The failures that retire are marked by the node failure log
        (``NodeRenewals.retire_after``, which must be the same); the pool is then a set of
        return times (:attr:`drawn`), a retired node's inf. 0: no node retires.

    ``time`` and ``swap`` (and ``manual_time``) are seconds >= 0 or a
    :class:`~spare_core.distributions.Distribution`.

    Notes
    -----
    With constant durations the pool is first-in first-out: the k-th failure the job sees
    takes an initial spare if ``k < spares``, else the node of failure ``k - spares`` once
    repaired (repair times are all equal, so nodes come back in failure order). Its
    replacement is in place at ``max(f, free) + swap``. With laws or probabilities
    (:attr:`drawn`) each take draws its own durations (:class:`RepairDraws`) and takes the
    node back first (docs/model.md, section 3.3). About ``rate * mean_time`` nodes are in
    repair at once (Little's law): a pool much smaller than that makes failures wait.
    """

    swap: float = 0.0
    spares: int | None = None
    time: float = 0.0
    rejoin: float = 0.0
    gpus_per_node: int = 8
    taken_until: float | None = None
    manual_time: float | Distribution = 0.0
    escalate: float = 0.0
    fail_fix: float = 0.0
    misdiagnose: float = 0.0
    standbys: int = 0
    standby_swap: float = 0.0
    host_select: float = 0.0
    restart_when: str = "one"
    retire_after: int = 0

    def __post_init__(self):
        object.__setattr__(self, "standbys", as_int(self.standbys, "fleet.standbys", min_value=0, max_value=10**6))
        if self.restart_when not in RESTART_RULES:
            raise ValueError(f"fleet.restart_when must be one of {list(RESTART_RULES)}, got {self.restart_when!r}")
        if self.restart_when == "job+standbys" and self.standbys < 1:
            raise ValueError("fleet.restart_when = 'job+standbys' needs fleet.standbys >= 1 (the warm standbys a "
                             "restart waits for)")
        object.__setattr__(self, "retire_after", as_int(self.retire_after, "fleet.retire_after", min_value=0))
        object.__setattr__(self, "standby_swap", _seconds(self.standby_swap, "fleet.standby_swap"))
        object.__setattr__(self, "host_select", _seconds(self.host_select, "fleet.host_select"))
        object.__setattr__(self, "swap", _law(self.swap, "repair.swap"))
        object.__setattr__(self, "time", _law(self.time, "repair.time"))
        object.__setattr__(self, "manual_time", _law(self.manual_time, "repair.manual_time"))
        object.__setattr__(self, "escalate", _probability(self.escalate, "repair.escalate", below_one=False))
        object.__setattr__(self, "fail_fix", _probability(self.fail_fix, "repair.fail_fix", below_one=True))
        object.__setattr__(self, "misdiagnose", _probability(self.misdiagnose, "repair.misdiagnose", below_one=True))
        if self.escalate > 0 and _mean(self.manual_time) == 0:
            raise ValueError("repair.escalate needs repair.manual_time (the manual repair it escalates to)")
        if _mean(self.manual_time) > 0 and self.escalate == 0:
            raise ValueError("repair.manual_time needs repair.escalate (the probability of the manual stage)")
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
        """GPUs held in the spare pool and the warm standbys (an unlimited pool is not paid for)."""
        return (self.standbys + (0 if self.spares is None else self.spares)) * self.gpus_per_node

    @property
    def drawn(self) -> bool:
        """True when a take draws its durations (a law or a probability is given)."""
        return any(isinstance(v, Distribution) for v in (self.time, self.swap, self.manual_time)) \
            or self.escalate > 0 or self.fail_fix > 0 or self.misdiagnose > 0 or self.standbys > 0 \
            or self.host_select > 0 or self.retire_after > 0

    @property
    def mean_time(self) -> float:
        """Mean seconds of a node's whole repair: ``(E[time] + escalate E[manual_time]) /
        (1 - fail_fix)`` (a geometric number of rounds, each automatic then maybe manual)."""
        return (_mean(self.time) + self.escalate * _mean(self.manual_time)) / (1.0 - self.fail_fix)

    @property
    def mean_swap(self) -> float:
        """Mean seconds of a swap."""
        return _mean(self.swap)

    def to_dict(self) -> dict:
        out = fields_dict(self, exclude=("time", "swap", "manual_time"))
        for k in ("time", "swap", "manual_time"):
            v = getattr(self, k)
            out[k] = v.to_dict() if isinstance(v, Distribution) else v
        out = {k: out[k] for k in [f for f in self.__dataclass_fields__]}  # field order
        if self.taken_until is None:  # the dict (and a stored run's key) it had before the field existed
            del out["taken_until"]
        for k in ("manual_time", "escalate", "fail_fix", "misdiagnose", "standbys", "standby_swap", "host_select"):
            if out[k] == 0:  # likewise for the fields of repair laws
                del out[k]
        if out["restart_when"] == "one":
            del out["restart_when"]
        if out["retire_after"] == 0:
            del out["retire_after"]
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
        Price of one GPU-hour (any currency), > 0: on demand.
    spot_gpu_hour : float or None
        Price of one GPU-hour of preemptible (spot) nodes, > 0: what a run whose fleet follows
        a log of capacity events (a preemption trace) pays instead of ``gpu_hour``. None
        (default): every run pays ``gpu_hour``.
    tokens_per_step : float or None
        Tokens one training step trains (``job.tokens_per_step``, the global batch), > 0: what
        a run's cost buys, for its cost per token (``RunResult.cost_per_mtoken``). None
        (default): unknown, and no cost per token is given.
    """

    gpu_hour: float
    spot_gpu_hour: float | None = None
    tokens_per_step: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "gpu_hour", as_float(self.gpu_hour, "costs.gpu_hour", min_value=0.0, strict_min=True))
        if self.spot_gpu_hour is not None:
            object.__setattr__(self, "spot_gpu_hour", as_float(self.spot_gpu_hour, "costs.spot_gpu_hour",
                                                               min_value=0.0, strict_min=True))
        if self.tokens_per_step is not None:
            object.__setattr__(self, "tokens_per_step", as_float(self.tokens_per_step, "job.tokens_per_step",
                                                                 min_value=0.0, strict_min=True))

    def price(self, spot: bool) -> float:
        """The price of a GPU-hour of a run on spot nodes (``spot``) or on demand."""
        return self.spot_gpu_hour if spot and self.spot_gpu_hour is not None else self.gpu_hour

    def to_dict(self) -> dict:
        out = fields_dict(self)
        if self.spot_gpu_hour is None:  # the dict (a stored scenario's key) of an on-demand price is unchanged
            del out["spot_gpu_hour"]
        if self.tokens_per_step is None:  # likewise without the tokens a step trains
            del out["tokens_per_step"]
        return out


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


def _sample(value, rng, n: int) -> np.ndarray:
    if isinstance(value, Distribution):
        return value.sample(rng, n)
    return np.full(n, float(value))  # a constant consumes no random numbers


class RepairDraws:
    """The drawn durations of a run's repairs, one row per take of the spare pool.

    Take ``k`` (the pool's k-th use: a failure the job sees, or the second pull after a wrong
    diagnosis) has its repair seconds ``rep[k]`` (a geometric number of rounds with success
    probability ``1 - fail_fix``, each ``time`` plus, with probability ``escalate``,
    ``manual_time``), its swap seconds ``swap[k]`` and ``mis[k]`` (1: the node pulled was
    healthy). Rows are drawn in chunks of :attr:`CHUNK` takes from three streams under
    ``run_seed(seed, "repairs")`` (``repair-times``, ``repair-swaps``, ``repair-diagnoses``),
    so row ``k`` depends only on the seed and ``k``: a restart that undoes takes draws them
    again identically, and the failures' own streams are untouched. The arrays hold rows from
    :attr:`base` on (rows before the pool's oldest take still undoable are dropped).
    """

    CHUNK = 1024

    __slots__ = ("repairs", "base", "hi", "rep", "swap", "mis", "slot", "old", "sb_slot", "sb_old", "ret", "_ret_cut",
                 "_times", "_swaps", "_diag")

    def __init__(self, repairs: Repairs, seed):
        root = run_seed(seed, "repairs")
        self.repairs = repairs
        self._times = stream_rng(root, "repair-times")
        self._swaps = stream_rng(root, "repair-swaps")
        self._diag = stream_rng(root, "repair-diagnoses")
        self.base = self.hi = 0
        self.rep = np.empty(0)
        self.swap = np.empty(0)
        self.mis = np.empty(0, dtype=np.int8)
        self.slot = np.empty(0, dtype=np.int64)
        self.old = np.empty(0)
        self.sb_slot = np.empty(0, dtype=np.int64)
        self.sb_old = np.empty(0)
        # [fleet] retire_after: each take's retirement time (-1: its node comes back), written by
        # the compiled take; the rows dropped below ``base`` leave their retirements here
        self.ret = np.empty(0)
        self._ret_cut: list = []

    def _chunk(self):
        rp, c = self.repairs, self.CHUNK
        rng = self._times
        rounds = rng.geometric(1.0 - rp.fail_fix, c) if rp.fail_fix > 0 else None
        total = c if rounds is None else int(rounds.sum())
        d = _sample(rp.time, rng, total)
        if rp.escalate > 0:
            esc = rng.random(total) < rp.escalate
            d[esc] += _sample(rp.manual_time, rng, int(esc.sum()))
        if rounds is not None:
            d = np.add.reduceat(d, np.concatenate(([0], np.cumsum(rounds)[:-1])))
        sw = _sample(rp.swap, self._swaps, c)
        mis = (self._diag.random(c) < rp.misdiagnose).astype(np.int8) if rp.misdiagnose > 0 else np.zeros(c, np.int8)
        return d, sw, mis

    def cover(self, lo: int, hi: int) -> None:
        """Hold rows ``[lo, hi)`` at least (``lo`` no earlier than the last ``cover``'s)."""
        if lo < self.base:
            raise ValueError(f"take {lo} is before the draws kept (from {self.base})")
        if lo - self.base >= 4 * self.CHUNK:  # drop rows no undo can reach
            cut = lo - self.base
            self.rep, self.swap, self.mis = self.rep[cut:], self.swap[cut:], self.mis[cut:]
            self.slot, self.old = self.slot[cut:], self.old[cut:]
            self.sb_slot, self.sb_old = self.sb_slot[cut:], self.sb_old[cut:]
            done = self.ret[:cut]
            self._ret_cut.append(done[done >= 0.0])  # takes before ``lo``: no undo reaches them
            self.ret = self.ret[cut:]
            self.base = lo
        if hi > self.hi:
            parts = []
            while self.hi < hi:
                parts.append(self._chunk())
                self.hi += self.CHUNK
            n_new = len(parts) * self.CHUNK
            self.rep = np.concatenate([self.rep] + [p[0] for p in parts])
            self.swap = np.concatenate([self.swap] + [p[1] for p in parts])
            self.mis = np.concatenate([self.mis] + [p[2] for p in parts])
            self.slot = np.concatenate([self.slot, np.full(n_new, -1, dtype=np.int64)])
            self.old = np.concatenate([self.old, np.zeros(n_new)])
            self.sb_slot = np.concatenate([self.sb_slot, np.full(n_new, -1, dtype=np.int64)])
            self.sb_old = np.concatenate([self.sb_old, np.zeros(n_new)])
            self.ret = np.concatenate([self.ret, np.full(n_new, -1.0)])

    def retired(self, used: int) -> np.ndarray:
        """The retirement times of takes ``0 .. used - 1`` (those a restart did not undo)."""
        rows = self.ret[: max(0, used - self.base)]
        return np.concatenate(self._ret_cut + [rows[rows >= 0.0]])

    def args(self, standby: np.ndarray) -> tuple:
        """The arrays as ``merge_repairs`` / ``restart_epochs`` take them (with the book's standbys)."""
        return self.rep, self.swap, self.mis, self.slot, self.old, standby, self.sb_slot, self.sb_old


class RepairBook:
    """One run's repairs between batches: which groups are out until when, the rejoins
    pending, the spare pool's counter and ring (state of ``_timeline.merge_repairs``), and
    with drawn durations (:attr:`Repairs.drawn`) the run's :class:`RepairDraws` and the warm
    standbys' ready times (``standby``)."""

    __slots__ = ("kern", "rs", "back", "pend_t", "pend_g", "pool", "n", "spares", "draws", "_used0", "standby", "_pre",
                 "_keep_ret")

    def __init__(self, repairs: Repairs, n_groups: int, seed=None):
        k = self.kern = load("_timeline")
        R = k.REPAIR_SLOTS
        self.n = n_groups
        self.rs = np.zeros(R["N_REPAIR"])
        self.draws = None
        self._used0 = 0
        self._keep_ret = False
        if repairs.drawn:
            if seed is None:
                raise ValueError("drawn repair durations need the run's seed")
            self.draws = RepairDraws(repairs, seed)
            self.rs[R["R_N_STANDBY"]] = repairs.standbys
            self.rs[R["R_STANDBY_SWAP"]] = repairs.standby_swap
            self.rs[R["R_HOST_SELECT"]] = repairs.host_select
            self.rs[R["R_RESTART_ALL"]] = 1.0 if repairs.restart_when == "job+standbys" else 0.0
        else:
            self.rs[R["R_SWAP"]] = repairs.swap
            self.rs[R["R_REPAIR"]] = repairs.time
        self.rs[R["R_REJOIN"]] = repairs.rejoin
        self.rs[R["R_NEVER"]] = math.inf  # a retired node's return time: the run sets it past its wall limit
        self.spares = -1 if repairs.spares is None else repairs.spares
        self.rs[R["R_N_SPARES"]] = self.spares
        self.back = np.zeros(n_groups)
        self.pend_t = np.zeros(n_groups)
        self.pend_g = np.zeros(n_groups, dtype=np.int64)
        self.pool = np.zeros(max(1, self.spares))
        self._pre = repairs.taken_until is not None
        # the warm standbys' ready times: every one ready at the start
        self.standby = np.full(max(1, repairs.standbys), -math.inf)
        if repairs.taken_until is not None:  # a spare taken before the start: the pool's first use
            self.pool[0] = repairs.taken_until
            self.rs[R["R_USED"]] = 1

    def never_after(self, max_wall: float) -> None:
        """A retired node ([fleet] retire_after) is back at ``2 * max_wall``: never within the
        run (finite, so a wait cut at the wall limit keeps its precision)."""
        self.rs[self.kern.REPAIR_SLOTS["R_NEVER"]] = 2.0 * max_wall
        self._keep_ret = True  # and each take records when its node retired (:meth:`retired`)

    def take_ret(self) -> np.ndarray | None:
        """Where the compiled takes write their retirement times (after :meth:`draw_args`,
        which may grow the arrays); None when the run retires no node."""
        return self.draws.ret if self._keep_ret and self.draws is not None else None

    def retired(self) -> np.ndarray:
        """When each node this run retired left the fleet ([fleet] retire_after): the takes'
        times the compiled take recorded, those a restart undid left out (empty without
        retirement). Takes of failures past the run's end are among them: the caller keeps
        those before the end."""
        if not self._keep_ret or self.draws is None:
            return np.zeros(0)
        return self.draws.retired(int(self.rs[self.kern.REPAIR_SLOTS["R_USED"]]))

    def draw_args(self, takes: int) -> tuple:
        """The draw arrays covering ``takes`` takes from the pool's next one (empty without
        draws), with ``rs[R_BASE]`` set to their first row."""
        if self.draws is None:
            return ()
        R = self.kern.REPAIR_SLOTS
        used = int(self.rs[R["R_USED"]])
        self.draws.cover(used, used + max(takes, 1))
        self.rs[R["R_BASE"]] = self.draws.base
        return self.draws.args(self.standby)

    def merge(self, raw_rel, raw_g, t_offset, raw_next, max_out, retire=None):
        """The next events (failures in the job and rejoins) of a batch of raw failures;
        ``retire`` (int8 per raw failure, optional) marks the nodes that retire ([fleet]
        ``retire_after``): they never come back to the pool."""
        rel = np.empty(max_out)
        g = np.empty(max_out, dtype=np.int64)
        rejoin = np.empty(max_out, dtype=np.int8)
        ready = np.empty(max_out)
        old = np.empty(max_out)
        raw = np.empty(max_out, dtype=np.int64)
        self._used0 = int(self.rs[self.kern.REPAIR_SLOTS["R_USED"]])
        extra = self.draw_args(2 * min(raw_rel.shape[0], max_out))
        m, used = self.kern.merge_repairs(self.rs, self.back, self.pend_t, self.pend_g, self.pool,
                                          raw_rel, raw_g, t_offset, raw_next, rel, g, rejoin, ready, old, raw, *extra,
                                          raw_ret=retire, take_ret=self.take_ret())
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
        if self.draws is None:
            for i in range(rejoin.shape[0] - 1, kept - 1, -1):
                if rejoin[i] == 0:
                    used -= 1
                    if self.spares > 0:
                        self.pool[used % self.spares] = old[i]
        else:
            # with draws ``old`` holds the take count after each failure event; the takes
            # after the kept events' are undone, last first, from their undo records
            fails = np.flatnonzero(rejoin[:kept] == 0)
            target = int(old[fails[-1]]) if fails.shape[0] else self._used0
            d = self.draws
            for k in range(used - 1, target - 1, -1):
                s = int(d.slot[k - d.base])
                if s >= 0:
                    self.pool[s] = d.old[k - d.base]
                s = int(d.sb_slot[k - d.base])
                if s >= 0:
                    self.standby[s] = d.sb_old[k - d.base]
            used = target
        self.rs[R["R_USED"]] = used
        self.rs[R["R_READY"]] = 0.0
        self.rs[R["R_HEAD"]] = 0.0
        self.rs[R["R_COUNT"]] = 0.0
        self.back[:] = 0.0

    def down(self, t: float) -> np.ndarray:
        """Groups out of the job at time ``t`` (failed, not yet rejoined)."""
        return np.flatnonzero(self.back > t)
