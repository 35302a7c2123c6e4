"""Node renewals: nodes with their own lifetimes, only the failed node replaced.

The failure model of a cluster that swaps a failed node for a spare and keeps the others
running: every node is a renewal process in wall time (its lifetime redrawn when it is
replaced, the other nodes keep their age), nodes are mapped to the job's data-parallel
groups in blocks, and the job sees a failure when a node of a group still in the job fails.

Because a node's clock does not care what the job does, the wall-clock failure log of all
nodes is a function of the seed alone: :class:`NodeFailureLog` draws it once (in chunks of
wall time, batch-sampled with per-node next-failure arrays) and every run on the seed reads
it through :class:`NodeEpochs`, which keeps only the failures a run can see (after its
epoch's start, in a group not yet out).

References
----------
.. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783, 2024 (419
   unexpected interruptions in 54 days on 16,384 GPUs; faulty hosts replaced).
.. [2] D. R. Cox, *Renewal Theory*, Methuen, 1962 (superposition of renewal processes;
   the stationary residual lifetime).
.. [3] J. W. Vaupel, K. G. Manton and E. Stallard, "The impact of heterogeneity in individual
   frailty on the dynamics of mortality", Demography 16(3), 1979 (gamma frailty).
"""
from __future__ import annotations

import bisect
import dataclasses
import math
from typing import ClassVar

import numpy as np

from .._native import load
from .._seeding import as_seed_sequence, stream_rng
from .._validate import as_float, as_int, check_choice
from ..distributions import Distribution
from .fit import MAX_FRAILTY, NODE_LAWS
from .models import LifetimeLawModel
from .rates import RateSchedule

__all__ = ["NodeRenewals", "NodeFailureLog", "NodeEpochs", "NodeRenewalProcess", "INITIAL_AGES", "CLOCKS"]

#: how node clocks start at time 0
INITIAL_AGES = ("stationary", "new")

# wall time drawn per chunk of the log, in system MTBFs: ~4096 failures per chunk
_CHUNK_FAILURES = 4096
#: ``[fleet] place``: "slot", a node's multiplier stays with its slot (no placement); "any", a
#: failed node's slot takes the node idle longest; "fewest_failures", the idle node with the
#: fewest failures so far
PLACE_RULES = ("slot", "any", "fewest_failures")
#: ``failures.clock``: what the nodes' failure clocks count, wall time or the job's compute time
CLOCKS = ("wall", "compute")
#: lifetimes drawn at once for the placement loop (a fixed block: the log does not depend on
#: who reads it how far)
_PLACE_DRAWS = 4096
_PLACE = None  # the compiled placement loop, loaded on first use
#: empty chunks ahead beyond which the log skips to the next failure's chunk at once
_SKIP_CHUNKS = 1024
#: passes in a row in which no node's time moved (every lifetime below the spacing of floats)
#: after which the times move on by one float
_STUCK_PASSES = 1000
#: passes of one chunk drawn one at a time before a burst's passes are drawn in blocks
_BURST_PASSES = 8
#: passes per block at first (doubled while whole blocks are kept, halved otherwise) ...
_BURST_MIN_BLOCK = 4
#: ... and the most lifetimes one block draws (nodes x passes); more active nodes: one pass at a time
_BURST_MAX_DRAWS = 1 << 16

_EMPTY_T = np.zeros(0)
_EMPTY_U = np.zeros(0, dtype=np.int64)
_EMPTY_T.flags.writeable = False
_EMPTY_U.flags.writeable = False


@dataclasses.dataclass(frozen=True)
class NodeRenewals(LifetimeLawModel, kind="node"):
    """Nodes with their own lifetimes; a failed node is replaced and only its clock restarts.

    Parameters
    ----------
    system_mtbf : float, optional
        Long-run system MTBF, seconds, > 0: each node's lifetime is
        ``Weibull.from_mean(n_nodes * system_mtbf, shape)``, ``n_nodes = N * nodes_per_group``.
    shape : float, optional
        Weibull shape with ``system_mtbf`` (default 0.78).
    lifetime : Distribution, optional
        The per-node lifetime law instead (its mean is ``n_nodes`` times the system MTBF).
    gpus_per_node : int, default 8
    nodes_per_group : int, optional
        Nodes per data-parallel group. Or give ``gpus_per_group`` (a multiple of
        ``gpus_per_node``); a scenario fills it from its own ``gpus_per_group``.
    gpus_per_group : int, optional
    initial : {"stationary", "new"}, default "stationary"
        Node ages at time 0: "stationary", nodes found in service at a random instant (each
        clock starts from the residual lifetime, :meth:`Distribution.sample_residual`: the
        failure rate is ``1 / system_mtbf`` from the first second); "new", all nodes installed
        at time 0 (with shape < 1 the first hours see more failures).
    frailty : float, default 0
        Heterogeneous nodes ("lemons"): the variance ``v`` of per-node rate multipliers
        ``Z ~ Gamma(shape 1/v, scale v)`` (mean 1). Node ``i``'s lifetimes are the law's draws
        divided by ``Z_i`` (for an exponential law: failures at ``Z_i`` times the rate), and
        ``Z_i`` stays with the node's *slot* across replacements, so a lemon keeps failing.
        0: every node alike. At most :data:`MAX_FRAILTY`.
    rate_times, rate_levels : tuple of float, default ()
        A failure rate that changes over time: the levels of a
        :class:`~spare_core.events.rates.RateSchedule` (``rate_levels[0]`` from time 0 to
        ``rate_times[0]``, and so on; the last level continues). The level multiplies every
        node's hazard (a time change of the law). Both empty: a constant rate.
    lemon_share : float, default 0
        Lemon nodes (``[fleet]``): the share ``s`` in [0, 1) of the node slots holding a lemon,
        ``round(s * n_nodes)`` slots drawn at random (stream ``"node-lemons"``, apart from the
        lifetimes). 0: none.
    lemon_rate : float, default 1
        A lemon's failure rate as a multiple ``m >= 1`` of a normal node's. The law's rate
        stays the fleet's average: with ``k`` lemons of ``n`` nodes a normal node's lifetimes
        are the law's times ``c = 1 - k/n + m k/n`` and a lemon's times ``c / m``, so the
        fleet's long-run failure rate is ``1 / system_mtbf`` exactly and the lemons' share of
        failures is ``m k / (n c)``. A lemon stays with its slot (see Notes).
    lemon_fix : float, default 0
        Probability in [0, 1] that the repair after a lemon's failure fixes it: from then on
        its slot holds a normal node (lifetimes times ``c``). The draws come from the stream
        ``"node-lemons"`` too, one per lemon failure. 0: a lemon is never fixed. The fleet's
        rate is then the file's at the start and falls as lemons are fixed.
    retire_after : int, default 0
        A node failing this many times leaves the fleet ([fleet]): the log marks each slot's
        ``retire_after``-th, ``2 retire_after``-th, ... failure (the slot's node since its last
        retirement, :attr:`NodeFailureLog.retire`), and with ``[repair]`` that node never comes
        back to the spare pool, which shrinks. With ``place`` the count is the *node's* own
        failures wherever it ran (a node retires at its ``retire_after``-th), and a retired node
        is never placed again. 0: no node retires.
    frailty_lemons : bool, default False
        The fleet's lemons are the frailty's multipliers (``[fleet] lemons = "frailty"``, needs
        ``frailty > 0``): ``lemon_fix`` is then the probability that the repair after *any*
        failure fixes its node, which redraws the slot's multiplier from the same gamma, and a
        retired node's replacement (``retire_after``) draws its own multiplier too. The draws
        come from the stream ``"node-lemons"``. Without ``lemon_fix`` and ``retire_after`` it
        changes nothing (the frailty alone already gives each slot its multiplier).
    place : {"slot", "any", "fewest_failures"}, default "slot"
        ``[fleet] place``: "slot", a node's multiplier (lemon, frailty) stays with its slot;
        otherwise the multipliers belong to the fleet's ``n + place_pool`` nodes, and at each
        failure the failed node joins the idle nodes and its slot takes the idle node waiting
        longest ("any") or the one with the fewest failures so far ("fewest_failures", the one
        waiting longest among equals). Idle nodes do not fail; a node placed starts a fresh
        lifetime; ``lemon_fix`` fixes the lemon *node* (it stays fixed wherever it goes);
        ``retire_after`` retires the node (the idle set shrinks; a slot finding it empty stays
        empty and never fails again, the pool's wait then stopping the job); with
        ``frailty_lemons`` a fix redraws the *node's* multiplier (it keeps it wherever it goes)
        and a retired node leaves without a redraw (its slot takes another node of the fleet).
    place_pool : int, default 0
        The idle nodes beyond the job's with ``place`` (the file: ``repair.spares`` plus
        ``fleet.standbys``, at least 1; a pool swept to 0 by ``spare advise`` leaves none, and
        every failed node comes back to its slot).
    clock : {"wall", "compute"}, default "wall"
        What the nodes' lifetimes count. ``"wall"``: wall time; a node failing while the job
        is down for a restart is renewed unseen (a lemon fixed there is fixed for the job).
        ``"compute"``: the job's compute time, as AIReSim's failure clock (DSN 2026): the log
        is drawn in exposure time and every restart's stopped time (detection, restart, the
        wait for spares) shifts the rest of it, so no failure falls inside a restart and every
        failure of the log is the job's. The run does the shifting
        (:func:`spare_core.sim.simulate`); not with ``place``.

    Notes
    -----
    *Semantics.* Node ``i`` belongs to group ``i // nodes_per_group``. Each node fails after
    its lifetime and is replaced at once by a fresh node (lifetime redrawn from the failure
    time); the other nodes keep their age. A node failure takes its group out of the job
    until the next global restart. A node failing in a group that is already out (an earlier
    failure in the epoch) is replaced without any effect on the job. No failure hits the job
    during a restart: nodes failing then are replaced before the job resumes.

    *At a restart* (a checkpoint-only failure, a Rep+CKPT or SPARe wipe-out): every group
    rejoins, with whatever nodes it has, of whatever age; nothing is redrawn. So unlike the
    paper's model (:class:`GroupLifetimes`) a restart does not bring a burst of failures of
    fresh hardware: the job sees a stationary superposition of node renewals, and the only
    burst is a replaced node's own infant mortality (Weibull shape < 1).

    *When it fits.* A cluster that replaces the failed host and keeps the rest, which is how
    large training clusters are run; this is the model to describe a user's cluster with.

    *Frailty and a changing rate.* The multipliers are drawn once per seed (first draws of the
    lifetimes' stream); the system rate stays ``1 / system_mtbf`` on average over seeds (the
    multipliers have mean 1), while one seed's cluster may hold more or fewer lemons. With a
    rate schedule, ``system_mtbf`` is the MTBF at level 1 and :meth:`mtbf` the MTBF at the
    job's start (``system_mtbf / rate_levels[0]``), which is what checkpoint rules read.
    Both come from a log with ``fit_law = "frailty"`` / ``fit_rate = "periods"``
    (:func:`spare_core.events.fit.fit_node_rates`).

    *Lemons* are the two-point version of the frailty: a multiplier ``m / c`` on the rate of
    ``round(s n)`` slots and ``1 / c`` on the others, fixed for the seed (not redrawn per seed
    around a mean as the gamma multipliers are, so every seed's fleet has the file's rate). The
    multiplier stays with the *slot*: a lemon's replacement is a lemon. That is the fleet in
    which a lemon swapped out comes back from repair unfixed and is what the slot gets again;
    it leaves out a pool that mixes nodes between slots (the slot's next node a lemon with the
    pool's share) (docs/model.md, *Lemon nodes*).

    *Lemons from the frailty* (``frailty_lemons``): a repair that fixes a node, or a retirement,
    puts a new node from the same population in the slot, a fresh ``Gamma(1/v, v)`` multiplier
    (not 1: the fitted law says how new nodes vary, and a reset to the mean would make the good
    nodes worse). With ``lemon_fix = 1`` (or a retirement after every failure) a slot's
    failures are a renewal process of mean gap ``E[1/Z] / rate = 1 / (rate (1 - v))`` for
    ``v < 1``: the fleet's rate falls from the file's towards ``1 - v`` of it (and towards 0 for
    ``v >= 1``, as nodes that almost never fail accumulate).

    *Cost.* The wall-clock log is drawn in chunks of ``4096 * system_mtbf`` seconds: a pass over
    the nodes whose next failure falls in the chunk, then repeated batch draws for nodes that
    fail again within it, then one sort; O(n_nodes) per chunk plus O(f log f) for its f failures.
    All runs on one seed share the log; a run filters it in one pass per epoch.

    Examples
    --------
    >>> m = NodeRenewals(system_mtbf=300.0, gpus_per_node=8, gpus_per_group=1000)
    >>> m.nodes_in_group(), round(m.law(600).mean / 300.0)
    (125, 75000)
    """

    renews_all_at_restart: ClassVar[bool] = False
    #: the rate models' keys and the nodes' ages at the job's start
    file_keys: ClassVar[tuple[str, ...]] = (*LifetimeLawModel.file_keys, "node_ages", "fit_rate", "fit_periods",
                                            "fit_job_start", "fit_merge", "clock")

    system_mtbf: float | None = None
    shape: float | None = None
    lifetime: Distribution | None = None
    gpus_per_node: int = 8
    nodes_per_group: int | None = None
    gpus_per_group: int | None = None
    initial: str = "stationary"
    frailty: float = 0.0
    rate_times: tuple = ()
    rate_levels: tuple = ()
    lemon_share: float = 0.0
    lemon_rate: float = 1.0
    lemon_fix: float = 0.0
    retire_after: int = 0
    frailty_lemons: bool = False
    place: str = "slot"
    place_pool: int = 0
    clock: str = "wall"

    def __post_init__(self):
        super().__post_init__()
        set_ = object.__setattr__
        set_(self, "frailty", as_float(self.frailty, "frailty", min_value=0.0, max_value=MAX_FRAILTY))
        set_(self, "lemon_share", as_float(self.lemon_share, "fleet.lemon_share", min_value=0.0))
        if not self.lemon_share < 1.0:
            raise ValueError(f"fleet.lemon_share must be a share in [0, 1), got {self.lemon_share!r}")
        set_(self, "lemon_rate", as_float(self.lemon_rate, "fleet.lemon_rate", min_value=1.0))
        set_(self, "lemon_fix", as_float(self.lemon_fix, "fleet.lemon_fix", min_value=0.0, max_value=1.0))
        set_(self, "retire_after", as_int(self.retire_after, "fleet.retire_after", min_value=0))
        if not isinstance(self.frailty_lemons, (bool, np.bool_)):
            raise TypeError(f"frailty_lemons must be a bool, got {type(self.frailty_lemons).__name__} "
                            f"{self.frailty_lemons!r}")
        set_(self, "frailty_lemons", bool(self.frailty_lemons))
        if self.frailty_lemons and not self.frailty > 0:
            raise ValueError("fleet.lemons = 'frailty' needs a frailty > 0 (the gamma multipliers it takes the "
                             "lemons from)")
        if self.frailty_lemons and self.lemon_share > 0:
            raise ValueError("fleet.lemons = 'frailty' and fleet.lemon_share are two laws of the nodes' rate "
                             "multipliers: give one")
        if self.lemon_fix > 0 and self.lemon_share == 0 and not self.frailty_lemons:
            raise ValueError("fleet.lemon_fix needs fleet.lemon_share (the lemons a repair may fix) or "
                             "fleet.lemons = 'frailty'")
        if self.lemon_share > 0 and self.frailty > 0:
            raise ValueError("fleet.lemon_share and a frailty (fit_law = 'frailty') are two laws of the nodes' "
                             "rate multipliers: give one")
        check_choice(self.place, "fleet.place", PLACE_RULES)
        check_choice(self.clock, "failures.clock", CLOCKS)
        if self.clock == "compute" and self.place != "slot":
            raise ValueError("failures.clock = 'compute' does not go with fleet.place: a placement keeps idle nodes "
                             "in repair on the log's clock, which the compute clock stops while the job is down")
        set_(self, "place_pool", as_int(self.place_pool, "place_pool", min_value=0))
        for name in ("rate_times", "rate_levels"):
            v = getattr(self, name)
            if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
                raise TypeError(f"{name} must be a sequence of numbers, got {type(v).__name__} {v!r}")
            set_(self, name, tuple(float(as_float(x, name)) for x in v))
        if self.rate_times or self.rate_levels:
            sched = RateSchedule(self.rate_times, self.rate_levels)  # checks lengths, order, signs
            if not sched.levels[0] > 0:
                raise ValueError(f"rate_levels[0] (the level at the job's start) must be > 0, got {sched.levels[0]}")
        set_(self, "gpus_per_node", as_int(self.gpus_per_node, "gpus_per_node", min_value=1))
        if self.nodes_per_group is not None:
            set_(self, "nodes_per_group", as_int(self.nodes_per_group, "nodes_per_group", min_value=1))
        if self.gpus_per_group is not None:
            set_(self, "gpus_per_group", as_int(self.gpus_per_group, "gpus_per_group", min_value=1))
            g = self.gpus_per_group
            if g % self.gpus_per_node:
                raise ValueError(
                    f"gpus_per_group must be a multiple of gpus_per_node ({self.gpus_per_node}), got {g}"
                )
            if self.nodes_per_group is not None and self.nodes_per_group * self.gpus_per_node != g:
                raise ValueError(
                    f"nodes_per_group x gpus_per_node must equal gpus_per_group: {self.nodes_per_group} x "
                    f"{self.gpus_per_node} != {g}"
                )
        check_choice(self.initial, "initial", INITIAL_AGES)

    @classmethod
    def from_file(cls, reader, table, cluster):
        """Node renewals on the file's layout at the table's rate (or a law fitted to a log,
        log-normal included: it becomes each node's lifetime); ``node_ages`` sets ``initial``."""
        from .files import rate_model_from_file  # files imports the models

        # a node failure downs the one group holding it: groups must be whole nodes
        if cluster.gpus_per_group % cluster.gpus_per_node:
            raise reader.fail("cluster.gpus_per_group", f"must be a multiple of cluster.gpus_per_node "
                              f"({cluster.gpus_per_node}) with model = 'node' (a failed node downs one data-parallel "
                              "group)", cluster.gpus_per_group)
        ages = reader.choice("failures.node_ages", table.get("node_ages", "stationary"), INITIAL_AGES)
        clock = reader.choice("failures.clock", table.get("clock", "wall"), CLOCKS)
        base = cls(gpus_per_node=cluster.gpus_per_node, gpus_per_group=cluster.gpus_per_group, initial=ages,
                   clock=clock)
        return rate_model_from_file(base, reader, table, cluster, laws=NODE_LAWS)

    def to_dict(self) -> dict:
        out = super().to_dict()
        if self.lemon_share == 0 and self.lemon_rate == 1:  # the dict (a stored run's key) from before lemons
            del out["lemon_share"], out["lemon_rate"]
        if self.lemon_fix == 0:
            del out["lemon_fix"]
        if self.retire_after == 0:
            del out["retire_after"]
        if not self.frailty_lemons:
            del out["frailty_lemons"]
        if self.place == "slot" and self.place_pool == 0:
            del out["place"], out["place_pool"]
        if self.clock == "wall":
            del out["clock"]
        return out

    def lemons(self) -> tuple[float, float, float] | None:
        """``(lemon_share, lemon_rate, lemon_fix)`` when some slots hold lemons, else None."""
        return (self.lemon_share, self.lemon_rate, self.lemon_fix) if self.lemon_share > 0 else None

    def schedule(self) -> RateSchedule | None:
        """The rate schedule of ``rate_times`` / ``rate_levels`` (None for a constant rate)."""
        return RateSchedule(self.rate_times, self.rate_levels) if self.rate_levels else None

    def mtbf(self, n_groups):
        """System MTBF at the job's start: the law's over the nodes, divided by the level then."""
        base = super().mtbf(n_groups)
        return base / self.rate_levels[0] if self.rate_levels else base

    def nodes_in_group(self) -> int:
        """Nodes per group (``nodes_per_group`` or ``gpus_per_group // gpus_per_node``)."""
        if self.nodes_per_group is not None:
            return self.nodes_per_group
        if self.gpus_per_group is None:
            raise ValueError(
                "a 'node' failure model needs nodes_per_group or gpus_per_group (a scenario's gpus_per_group fills it)"
            )
        return self.gpus_per_group // self.gpus_per_node

    def entities(self, n_groups):
        return n_groups * self.nodes_in_group()

    def check(self, n_groups):
        self.nodes_in_group()
        super().check(n_groups)

    def _entity_name(self):
        return "nodes"

    def _mean_words(self):
        return f"N x {self.nodes_in_group()} x {self.system_mtbf:g} s"

    def log(self, n_groups: int, seed) -> "NodeFailureLog":
        """The wall-clock failure log of the job's nodes under ``seed``."""
        return NodeFailureLog(self.law(n_groups), n_groups, self.nodes_in_group(), seed, initial=self.initial,
                              chunk_seconds=_CHUNK_FAILURES * self.mtbf(n_groups), frailty=self.frailty,
                              schedule=self.schedule(), lemons=self.lemons(), retire_after=self.retire_after,
                              frailty_lemons=self.lemon_fix if self.frailty_lemons else None,
                              place=None if self.place == "slot" else (self.place, self.place_pool))

    def process(self, n_groups, seed, *, start=0.0):
        return NodeRenewalProcess(NodeEpochs(self.log(n_groups, seed)), start=start)

    #: its source (:class:`NodeEpochs`) hands out every failure, also of groups out of the job
    #: (``unfiltered``): runs with repairs need that (``sim.study.check_repairs``)
    hands_out_every_failure = True

    def epoch_source(self, n_groups, seed):
        return NodeEpochs(self.log(n_groups, seed))

    def describe(self, n_groups):
        npg = self.nodes_in_group()
        extra = ""
        if self.frailty:
            extra += f"; per-node rate multipliers Gamma(mean 1, variance {self.frailty:.3g}) kept by each slot"
            if self.frailty_lemons and (self.lemon_fix or self.retire_after):
                extra += (" until " + " or ".join(
                    ([f"a repair fixes its node (probability {self.lemon_fix:.3g})"] if self.lemon_fix else [])
                    + (["its node retires"] if self.retire_after else [])) + ", then redrawn")
        if self.lemon_share:
            extra += (f"; lemons: {self.lemon_share:.3g} of the {'slots' if self.place == 'slot' else 'nodes'} "
                      f"failing x{self.lemon_rate:.3g} as often "
                      "(the fleet's rate unchanged)" + (f", a repair fixing one with probability {self.lemon_fix:.3g}"
                                                        if self.lemon_fix else ""))
        if self.retire_after:
            extra += f"; a node retires after {self.retire_after} failures"
        if self.clock == "compute":
            extra += "; the nodes' clocks stopped while the job is down (failures.clock = 'compute')"
        if self.place != "slot":
            extra += (f"; {self.place_pool} idle nodes beyond the job's, a failed node's slot taking "
                      + ("the one idle longest" if self.place == "any" else "the one with the fewest failures"))
        if self.rate_levels:
            lv = self.rate_levels
            extra += (f"; rate x{lv[0]:.3g} at the start" + (f", then x{', x'.join(f'{v:.3g}' for v in lv[1:4])}"
                                                              f"{', ...' if len(lv) > 4 else ''} from "
                                                              f"{self.rate_times[0] / 86400:.4g} d" if len(lv) > 1 else ""))
        return (
            f"node: {self._law_words('per node')}; {npg} nodes of {self.gpus_per_node} GPUs per group, "
            f"only the failed node replaced, {self.initial} ages at the start{extra}"
        )


class NodeFailureLog:
    """Every node failure of a cluster in wall time, drawn chunk by chunk on demand.

    Parameters
    ----------
    law : Distribution
        Lifetime of one node.
    n_groups, nodes_per_group : int
        Node ``i`` belongs to group ``i // nodes_per_group``.
    seed : int or numpy.random.SeedSequence
        Lifetimes come from the named stream ``"node-lifetimes"`` of this seed.
    initial : {"stationary", "new"}
        Node ages at time 0 (see :class:`NodeRenewals`).
    chunk_seconds : float
        Wall time drawn per chunk (fixed, so the log does not depend on who reads it how far).
    frailty : float, default 0
        Variance of the per-node rate multipliers (see :class:`NodeRenewals`); drawn first
        from the lifetimes' stream when > 0.
    schedule : RateSchedule, optional
        A changing rate: the nodes' clocks run in the schedule's operational time (its
        cumulative level), and failure times are mapped back to wall time.
    lemons : (float, float) or (float, float, float), optional
        ``(share, rate multiple[, fix probability])`` of lemon slots (see :class:`NodeRenewals`):
        the slots, and whether each lemon failure's repair fixes it, come from the stream
        ``"node-lemons"`` of the seed, so the lifetimes' stream draws what it draws without
        them and only the per-slot multipliers differ. With a fix probability > 0 the passes
        over a chunk are drawn one at a time (a fix changes a slot's multiplier between passes).
    retire_after : int, default 0
        Mark every ``retire_after``-th failure of each slot (:attr:`retire`); 0: none.
    frailty_lemons : float, optional
        With ``frailty > 0``: the lemons are the frailty's multipliers (see
        :class:`NodeRenewals`). The value is the probability that a failure's repair fixes its
        node; a fixed node, and with ``retire_after`` a retiring one, gets a fresh
        ``Gamma(1/v, v)`` multiplier before its replacement lifetime is drawn (one uniform per
        failure when the value is > 0, then one gamma per redrawn slot in node order, both from
        the stream ``"node-lemons"``; the passes are then drawn one at a time). With ``place``
        only a fix redraws (a retiring node leaves): one uniform per failure, in log order, and
        the fixed nodes' gammas in blocks, both from ``"node-lemons"`` as the loop uses them up.
        None: off, the log as without it.
    place : (str, int), optional
        ``(rule, idle nodes)``: placement (see :class:`NodeRenewals`). The multipliers (lemons
        drawn as ``round(share * N)`` of the ``N = n + idle`` nodes, or a frailty's ``N``
        gammas) belong to nodes; the job starts on nodes ``0 .. n-1``. The failures are then
        taken in time order by a compiled loop (``_ext/events/_placement.pyx``) from blocks of
        the law's draws; :meth:`failed_nodes` gives each row's node. With ``retire_after`` the
        loop flags each node's ``retire_after``-th failure and leaves that node out of the idle set.

    Attributes
    ----------
    times : list of float
        Failure times, non-decreasing (ties ordered by node).
    groups : list of int
        The failed node's group, aligned with ``times``.
    horizon : float
        Every failure before it is in the log.
    retire : numpy.ndarray of int8 or None
        With ``retire_after``: 1 for a failure whose node retires (its slot's
        ``retire_after``-th failure since the slot's last retirement; with a placement the
        node's own ``retire_after``-th), aligned with ``times``
        (read :meth:`retire_flags`). None without.
    """

    __slots__ = ("law", "n_groups", "nodes_per_group", "chunk_seconds", "times", "groups", "horizon", "_next",
                 "_rng", "scales", "schedule", "lemon", "fixed_at", "_fix", "_c", "_lemon_rng", "_buf_t", "_buf_g",
                 "_buf_n", "retire_after", "_count", "_ret", "_n_ret", "_redraw_v", "_seen", "_pl", "nodes")

    def __init__(self, law, n_groups, nodes_per_group, seed, *, initial="stationary", chunk_seconds, frailty=0.0,
                 schedule=None, lemons=None, retire_after=0, frailty_lemons=None, place=None):
        self.law = law
        self.n_groups = n_groups
        self.nodes_per_group = nodes_per_group
        self.chunk_seconds = float(chunk_seconds)
        self._rng = stream_rng(as_seed_sequence(seed), "node-lifetimes")
        n = n_groups * nodes_per_group
        n_slots = n
        self._pl = None
        self.retire_after = int(retire_after)
        if place is not None:  # the multipliers belong to the fleet's nodes, the job's and the idle ones
            n = n_slots + int(place[1])
        #: per-node lifetime multipliers 1 / Z (None: all nodes alike); inf for a multiplier that
        #: underflowed to 0 (a node that never fails)
        self.scales = None
        if frailty > 0:
            z = self._rng.standard_gamma(1.0 / frailty, n) * frailty
            with np.errstate(divide="ignore"):
                self.scales = 1.0 / z
        #: the lemon slots (a bool per node), None without lemons
        self.lemon = None
        #: with a fix probability: the wall time each slot's lemon was fixed (inf: not fixed, or no lemon)
        self.fixed_at = None
        self._fix = 0.0
        if lemons is not None and lemons[0] > 0:
            if self.scales is not None:
                raise ValueError("lemons and a frailty are two laws of the rate multipliers: give one")
            share, m = float(lemons[0]), float(lemons[1])
            k = min(n, int(round(share * n)))
            self.lemon = np.zeros(n, dtype=bool)
            self._lemon_rng = stream_rng(as_seed_sequence(seed), "node-lemons")
            self.lemon[self._lemon_rng.choice(n, k, replace=False)] = True
            c = self._c = 1.0 - k / n + m * k / n  # the fleet's mean rate multiple: lifetimes times c keep the law's rate
            self.scales = np.where(self.lemon, c / m, c)
            self._fix = float(lemons[2]) if len(lemons) > 2 else 0.0
            if self._fix > 0:
                self.fixed_at = np.full(n, math.inf)
        self.schedule = schedule
        first = law.sample_residual if initial == "stationary" else law.sample
        nxt = first(self._rng, n_slots)  # per-slot next failure time (operational time with a schedule)
        if self.scales is not None:
            nxt *= self.scales[:n_slots]  # with a placement the job starts on nodes 0 .. n-1
        self._next = nxt
        # lemons from the frailty: the gamma's variance when a fix or a retirement redraws a
        # slot's multiplier (0: never), and each slot's failures counted pass by pass. With a
        # placement only a fix redraws (a retired node leaves; its slot takes another node)
        self._redraw_v, self._seen = 0.0, None
        if frailty_lemons is not None and frailty > 0 and (frailty_lemons > 0
                                                           or (self.retire_after > 0 and place is None)):
            if self.lemon is not None:
                raise ValueError("lemons and a frailty are two laws of the rate multipliers: give one")
            self._redraw_v = float(frailty)
            self._fix = float(frailty_lemons)
            self._lemon_rng = stream_rng(as_seed_sequence(seed), "node-lemons")
            if self.retire_after > 0 and place is None:
                self._seen = np.zeros(n, dtype=np.int64)
        #: with a placement: the failed node of each row (read :meth:`failed_nodes`), else None
        self.nodes = None
        if place is not None:
            self._place_init(place[0], n_slots, n)
        self.times: list = []
        self.groups: list = []
        self.horizon = 0.0
        self._buf_t, self._buf_g, self._buf_n = np.empty(1024), np.empty(1024, dtype=np.int64), 0
        # per slot: failures of its node so far; the flags, a buffer grown by doubling
        self._count = np.zeros(n, dtype=np.int64) if self.retire_after > 0 else None
        self._ret, self._n_ret = (np.empty(1024, dtype=np.int8), 0) if self.retire_after > 0 else (None, 0)

    def _place_init(self, rule: str, n_slots: int, n: int) -> None:
        """The placement's state: the job on nodes 0 .. n_slots-1, the others idle in id order."""
        global _PLACE
        if _PLACE is None:
            _PLACE = load("_placement")
        idle = np.zeros(n, dtype=np.int64)
        n_idle = n - n_slots
        idle[:n_idle] = np.arange(n_slots, n)  # keys all 0, entry order = id order: already a heap
        seq = np.zeros(n, dtype=np.int64)
        seq[n_slots:] = np.arange(n_idle)
        self._pl = {
            "fewest": int(rule == "fewest_failures"),
            "occ": np.arange(n_slots, dtype=np.int64), "count": np.zeros(n, dtype=np.int64),
            "scale": np.ones(n) if self.scales is None else np.ascontiguousarray(self.scales, dtype=float),
            "idle": idle, "key": np.zeros(n, dtype=np.int64), "seq": seq,
            "state": np.array([n_idle, n_idle, _PLACE_DRAWS], dtype=np.int64), "draws": np.empty(0),
            "heap": np.empty(n_slots, dtype=np.int64), "out_t": np.empty(_PLACE_DRAWS),
            "out_s": np.empty(_PLACE_DRAWS, dtype=np.int64), "out_u": np.empty(_PLACE_DRAWS, dtype=np.int64),
            # retire_after: each row's retirement flag (a node retires at its own k-th failure)
            "out_r": np.empty(_PLACE_DRAWS if self.retire_after > 0 else 0, dtype=np.int8),
            # lemon_fix: the lemons (a view: the kernel's fixes are the log's), the fixes' uniforms
            # in blocks from the lemons' stream, and when each node was fixed (the clock's time)
            "lemon": self.lemon.view(np.int8) if self._fix > 0 and self._redraw_v == 0 else
            np.ones(n if self._redraw_v > 0 else 0, dtype=np.int8),  # the frailty's: every node eligible
            "fix_u": np.empty(0), "fixed_op": np.full(n, math.inf) if self._fix > 0 else np.empty(0),
            # lemons from the frailty: the fixed nodes' new multipliers, 1 / Gamma(1/v, v), in blocks
            "redraw": int(self._redraw_v > 0), "redraw_scale": np.empty(0),
        }
        if self.scales is not None:
            self._pl["scale"] = self.scales  # the same array: a fix's new multiplier is the log's
        self._pl["state"] = np.array([n_idle, n_idle, _PLACE_DRAWS, _PLACE_DRAWS, _PLACE_DRAWS], dtype=np.int64)
        self.nodes = []

    def failed_nodes(self) -> np.ndarray | None:
        """With a placement, the node (0 .. n + idle - 1) failing at each row of the log; None
        without (a slot's node is the slot's)."""
        return None if self.nodes is None else np.asarray(self.nodes, dtype=np.int64)

    def _extend_placed(self, end: float) -> None:
        """The chunk's failures with a placement: the compiled loop in time order, fed blocks of
        ``_PLACE_DRAWS`` lifetimes from the lifetimes' stream as it uses them up."""
        p = self._pl
        op_end = end if self.schedule is None else float(self.schedule.cumulative(end))
        ts, ss, us, rs = [], [], [], []
        while True:
            k, status = _PLACE.place_chunk(self._next, p["occ"], p["count"], p["scale"], p["idle"], p["key"],
                                           p["seq"], p["state"], p["draws"], op_end, p["fewest"], p["heap"],
                                           p["out_t"], p["out_s"], p["out_u"], p["lemon"], p["fix_u"], self._fix,
                                           self._c if self._fix > 0 and not p["redraw"] else 1.0, p["fixed_op"],
                                           self.retire_after, p["out_r"], p["redraw"], p["redraw_scale"])
            if k:
                ts.append(p["out_t"][:k].copy())
                ss.append(p["out_s"][:k].copy())
                us.append(p["out_u"][:k].copy())
                if self.retire_after > 0:
                    rs.append(p["out_r"][:k].copy())
            if status == 0:
                break
            if status == 1:
                p["draws"] = self.law.sample(self._rng, _PLACE_DRAWS)
                p["state"][2] = 0
            elif status == 3:
                p["fix_u"] = self._lemon_rng.random(_PLACE_DRAWS)
                p["state"][3] = 0
            elif status == 4:
                v = self._redraw_v
                with np.errstate(divide="ignore"):
                    p["redraw_scale"] = 1.0 / (self._lemon_rng.standard_gamma(1.0 / v, _PLACE_DRAWS) * v)
                p["state"][4] = 0
        if ts:
            t = self._wall(np.concatenate(ts))  # in time order already (ties by slot)
            slot = np.concatenate(ss)
            self.times.extend(t.tolist())
            self.groups.extend((slot // self.nodes_per_group).tolist())
            self.nodes.extend(np.concatenate(us).tolist())
            if self.retire_after > 0:
                self._append_retired(np.concatenate(rs))
            if self.fixed_at is not None:
                fo = p["fixed_op"]
                new = np.isfinite(fo) & np.isinf(self.fixed_at)
                self.fixed_at[new] = self._wall(fo[new])
        self.horizon = end

    @property
    def retire(self) -> np.ndarray | None:
        return self.retire_flags() if self._ret is not None else None

    def retire_flags(self) -> np.ndarray | None:
        """The retirement flags of the log so far (read-only, aligned with ``times``), None
        without ``retire_after``."""
        if self._ret is None:
            return None
        v = self._ret[: self._n_ret]
        v.flags.writeable = False
        return v

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The log so far as read-only arrays (times, groups): what a compiled loop reads
        (``_timeline.restart_epochs``). The buffers grow by doubling and only the rows added
        since the last call are converted, so a log read after every extension costs
        O(failures) in all."""
        n, bt, bg = len(self.times), self._buf_t, self._buf_g
        have = self._buf_n
        if bt.shape[0] < n:
            bt, bg = np.empty(2 * n), np.empty(2 * n, dtype=np.int64)
            bt[:have], bg[:have] = self._buf_t[:have], self._buf_g[:have]
            self._buf_t, self._buf_g = bt, bg
        if have < n:
            bt[have:n] = self.times[have:n]
            bg[have:n] = self.groups[have:n]
            self._buf_n = n
        t, g = bt[:n], bg[:n]
        t.flags.writeable = False
        g.flags.writeable = False
        return t, g

    def draw_lifetimes(self, nodes: np.ndarray) -> np.ndarray:
        """Fresh lifetimes of the replacements of ``nodes`` (in this order)."""
        out = self.law.sample(self._rng, nodes.shape[0])
        if self.scales is not None:
            out *= self.scales[nodes]
        return out

    def _repair_lemons(self, nodes: np.ndarray, t: np.ndarray) -> None:
        """The repairs after the failures of ``nodes`` at (clock) times ``t``: each lemon among
        them is fixed with probability ``lemon_fix`` (one uniform per lemon, in node order),
        its slot's next lifetimes then a normal node's."""
        lem = self.lemon[nodes]
        if not lem.any():
            return
        idx = nodes[lem]
        hit = self._lemon_rng.random(idx.shape[0]) < self._fix
        fixed = idx[hit]
        self.lemon[fixed] = False
        self.scales[fixed] = self._c
        self.fixed_at[fixed] = self._wall(t[lem][hit])

    def _redraw_frailty(self, nodes: np.ndarray) -> None:
        """The repairs after one failure of each of ``nodes`` (a pass, in node order) when the
        lemons are the frailty's: a fixed node (probability ``lemon_fix``, one uniform per
        failure) or a retiring one gets a fresh ``Gamma(1/v, v)`` multiplier (one gamma per
        redrawn slot, in node order) before its replacement lifetime is drawn."""
        k = nodes.shape[0]
        hit = self._lemon_rng.random(k) < self._fix if self._fix > 0 else np.zeros(k, dtype=bool)
        if self._seen is not None:
            self._seen[nodes] += 1  # a node fails at most once per pass: no repeated index
            hit |= self._seen[nodes] % self.retire_after == 0
        idx = nodes[hit]
        if idx.shape[0]:
            v = self._redraw_v
            z = self._lemon_rng.standard_gamma(1.0 / v, idx.shape[0]) * v
            with np.errstate(divide="ignore"):
                self.scales[idx] = 1.0 / z

    def _wall(self, t):
        """Wall time of the clocks' time(s) ``t`` (the same array without a schedule)."""
        return t if self.schedule is None else self.schedule.inverse(t)

    def extend(self) -> None:
        """Add the failures of the next ``chunk_seconds`` of wall time.

        One pass draws a replacement lifetime for every node that failed again within the
        chunk. A burst (a few nodes failing again and again: a Weibull shape far below 1 draws
        many tiny lifetimes) would take one pass per failure; after :data:`_BURST_PASSES`
        passes the lifetimes of many passes are drawn at once instead, and the passes up to the
        first in which a node leaves the chunk are kept, the generator then set to where those
        passes alone leave it (the same draws in the same order: the log is the same, bit for
        bit, as one pass at a time).
        """
        nxt = self._next
        first = float(nxt.min()) if nxt.shape[0] else math.inf
        if self.schedule is not None:
            first = float(self._wall(first))
        if first == math.inf:
            # no node will ever fail again (every slot empty: a placement's fleet all retired, or
            # nodes that never fail): the log is complete for all time
            self.horizon = math.inf
            return
        if first - self.horizon > _SKIP_CHUNKS * self.chunk_seconds:
            # no failure for many chunks (a heavy-tailed residual age): skip the empty chunks at
            # once, to the last chunk boundary before the next failure (empty chunks draw nothing)
            n = math.floor((first - self.horizon) / self.chunk_seconds) - 1
            if math.isfinite(first) and n > 0:
                self.horizon = self.horizon + n * self.chunk_seconds
                return
        end = self.horizon + self.chunk_seconds
        if not end > self.horizon:  # a chunk below the spacing of floats this far: one float further
            end = float(np.nextafter(self.horizon, math.inf))
        if self._pl is not None:
            self._extend_placed(end)
            return
        active = np.flatnonzero(self._wall(nxt) < end)
        ts, ns = [], []
        passes = stuck = 0
        block = _BURST_MIN_BLOCK
        # blocks draw from the law directly: a subclass drawing its own lifetimes is asked per pass
        # and a lemon fixed between passes changes its slot's multiplier: one pass at a time
        # (so does a frailty multiplier redrawn by a fix or a retirement)
        redraw = self._redraw_v > 0
        own_draws = type(self).draw_lifetimes is NodeFailureLog.draw_lifetimes and not self._fix and not redraw
        while active.shape[0]:
            t = nxt[active]
            ts.append(t)
            ns.append(active)
            passes += 1
            if redraw:
                self._redraw_frailty(active)  # before the replacement lifetimes are drawn
            elif self._fix:
                self._repair_lemons(active, t)  # before the replacement lifetimes are drawn
            k = active.shape[0]
            if passes < _BURST_PASSES or k * block > _BURST_MAX_DRAWS or not own_draws:
                before, moved = t, 1
                t = t + self.draw_lifetimes(active)
            else:
                before = t
                t, block, moved = self._burst(t, active, end, block, ts, ns)
            stuck = stuck + moved if np.array_equal(t, before) else 0
            if stuck >= _STUCK_PASSES:
                # every lifetime vanished in rounding pass after pass (times far beyond the
                # lifetimes' scale): one float further, or the passes would repeat for ever
                t = np.nextafter(before, math.inf)
                stuck = 0
            nxt[active] = t
            active = active[self._wall(t) < end]
        if ts:
            t = self._wall(np.concatenate(ts))
            node = np.concatenate(ns)
            order = np.lexsort((node, t))
            self.times.extend(t[order].tolist())
            self.groups.extend((node[order] // self.nodes_per_group).tolist())
            if self._count is not None:
                self._mark_retired(node[order])
        self.horizon = end


    def _mark_retired(self, nodes: np.ndarray) -> None:
        """Flag, among the chunk's failures (``nodes``, in log order), each slot's
        ``retire_after``-th failure since its last retirement: its running count, vectorised."""
        m = nodes.shape[0]
        by_node = np.argsort(nodes, kind="stable")  # each slot's failures, in log order
        sn = nodes[by_node]
        starts = np.flatnonzero(np.r_[True, sn[1:] != sn[:-1]])
        occ = np.arange(m) - np.repeat(starts, np.diff(np.r_[starts, m]))
        count = np.empty(m, dtype=np.int64)
        count[by_node] = self._count[sn] + occ + 1
        self._count += np.bincount(nodes, minlength=self._count.shape[0])
        self._append_retired((count % self.retire_after == 0).astype(np.int8))

    def _append_retired(self, flags: np.ndarray) -> None:
        """Add the retirement flags of the chunk's failures (in log order) to the buffer."""
        m = flags.shape[0]
        have = self._n_ret
        if self._ret.shape[0] < have + m:
            buf = np.empty(2 * (have + m), dtype=np.int8)
            buf[:have] = self._ret[:have]
            self._ret = buf
        self._ret[have : have + m] = flags
        self._n_ret = have + m

    def _burst(self, t, active, end, block, ts, ns):
        """``block`` passes of ``active`` (times ``t``) drawn at once: the passes before the
        first in which a node reaches ``end`` are added to ``ts``/``ns``; returns the times
        after the last pass kept (the loop filters them), the next block size and the passes kept."""
        k = active.shape[0]
        bg = self._rng.bit_generator
        saved = bg.state
        drawn = self.law.sample(self._rng, k * block).reshape(block, k)
        if self.scales is not None:
            drawn *= self.scales[active]
        cum = np.empty((block + 1, k))
        cum[0] = t
        cum[1:] = drawn
        np.add.accumulate(cum, axis=0, out=cum)  # c[p] = c[p-1] + l[p], the additions of one pass at a time
        out = np.flatnonzero((self._wall(cum[1:]) >= end).any(axis=1))
        kept = int(out[0]) + 1 if out.shape[0] else block
        if kept < block:  # the generator where ``kept`` passes of ``k`` draws leave it
            bg.state = saved
            self.law.sample(self._rng, k * kept)
            nxt_block = max(_BURST_MIN_BLOCK, block // 2)
        else:
            nxt_block = min(2 * block, _BURST_MAX_DRAWS // k if k else block)
        for p in range(1, kept):
            ts.append(cum[p])
            ns.append(active)
        return cum[kept].copy(), max(_BURST_MIN_BLOCK, nxt_block), kept


class _Scan:
    """A run's view of one epoch: the log read from the epoch's start, groups out so far."""

    __slots__ = ("key", "start", "ptr", "first", "dead", "n_alive", "times", "units", "done", "_tb", "_ub")

    def __init__(self, key, start, ptr, n_groups):
        self.key = key
        self.start = start
        self.ptr = ptr
        self.first = ptr  # the log row of the epoch's first failure (every failure: rows are contiguous)
        self.dead = bytearray(n_groups)
        self.n_alive = n_groups
        self.times = _EMPTY_T
        self.units = _EMPTY_U
        self.done = False
        self._tb = self._ub = None  # buffers the read-only views times/units show a prefix of

    def append(self, t: np.ndarray, u: np.ndarray) -> None:
        """Add failures to the epoch's view. The buffers grow by doubling, so an epoch read in
        many small pieces costs O(failures) in all (not a copy of the epoch per piece); the
        views handed out stay valid (what they show is never written again)."""
        have, got = self.times.shape[0], t.shape[0]
        if self._tb is None or have + got > self._tb.shape[0]:
            cap = max(64, 2 * (have + got))
            tb, ub = np.empty(cap), np.empty(cap, dtype=np.int64)
            tb[:have], ub[:have] = self.times, self.units
            self._tb, self._ub = tb, ub
        self._tb[have : have + got] = t
        self._ub[have : have + got] = u
        times, units = self._tb[: have + got], self._ub[: have + got]
        times.flags.writeable = False
        units.flags.writeable = False
        self.times, self.units = times, units


class NodeEpochs:
    """The :class:`spare_core.events.EpochSource` of a node failure log, shared by the runs
    on one seed.

    Epoch ``k`` of a run started at ``start`` sees the log's failures after ``start``, each
    the first of its group in the epoch. The view of the epoch being read is kept (keyed by
    ``(k, start)``), and so is epoch 0, the same for every run.
    """

    __slots__ = ("log", "_cur", "_zero", "_all", "_every")

    def __init__(self, log: NodeFailureLog, *, every: bool = False):
        self.log = log
        self._cur = None
        self._zero = None
        self._every = every  # hand out failures of groups already out too (runs with repairs)
        self._all = None

    def unfiltered(self) -> "NodeEpochs":
        """The same log's epochs with every failure after the epoch's start, also those of
        groups already out (a run with repairs drops those itself: a repaired group is back
        in the job before the next restart). Shared by the runs of the seed like this one."""
        if self._every:
            return self
        if self._all is None:
            self._all = NodeEpochs(self.log, every=True)
        return self._all

    def _scan(self, k, start) -> _Scan:
        cur = self._cur
        if cur is not None and cur.key == (k, start):
            return cur
        if start is None:
            raise TypeError("start must be given: node failures depend on when an epoch starts")
        z = self._zero
        if z is not None and z.key == (k, start):
            self._cur = z
            return z
        log = self.log
        while log.horizon <= start:
            log.extend()
        cur = self._cur = _Scan((k, start), start, bisect.bisect_right(log.times, start), log.n_groups)
        if k == 0 and z is None:
            self._zero = cur
        return cur

    def _fill(self, s: _Scan, want: int) -> None:
        have = s.times.shape[0]
        if have >= want or s.done:
            return
        log = self.log
        T, G = log.times, log.groups
        ptr = s.ptr
        if self._every:
            # every failure after the epoch's start (a run with repairs drops those of groups
            # already out itself): the next rows of the log, sliced, no loop per failure
            while len(T) < ptr + want - have and log.horizon < math.inf:  # inf: the log is complete
                log.extend()
            new_t, new_g = T[ptr : ptr + want - have], G[ptr : ptr + want - have]
            s.ptr = ptr + len(new_t)
        else:
            dead = s.dead
            need = min(want - have, s.n_alive)
            new_t, new_g = [], []
            while need:
                end = len(T)
                if ptr >= end:
                    if log.horizon == math.inf:  # the log is complete: no failure is left to hand out
                        break
                    log.extend()
                    continue
                for i in range(ptr, end):
                    g = G[i]
                    if not dead[g]:
                        dead[g] = 1
                        new_t.append(T[i])
                        new_g.append(g)
                        need -= 1
                        if not need:
                            break
                else:
                    ptr = end
                    continue
                ptr = i + 1
            s.ptr = ptr
            s.n_alive -= len(new_t)
            s.done = s.n_alive == 0
        got = len(new_t)
        if got:
            start = s.start
            # the same IEEE subtraction as the other sources: t - start
            t = np.array([x - start for x in new_t]) if got <= 8 else np.array(new_t) - start
            s.append(t, np.array(new_g, dtype=np.int64))

    def get(self, k: int, need: int, want: int = 0, *, start) -> tuple[np.ndarray, np.ndarray]:
        s = self._scan(k, start)
        self._fill(s, max(need, want))
        return s.times, s.units

    def retire(self, k: int, lo: int, hi: int, *, start) -> np.ndarray | None:
        """The retirement flags (``NodeFailureLog.retire``) of rows ``lo:hi`` of epoch ``k``'s
        failures as :meth:`get` hands them out; only for the unfiltered view (rows of the log
        in order), None without ``retire_after``."""
        if self.log._ret is None:
            return None
        if not self._every:
            raise ValueError("retirement flags are read from the unfiltered epochs (a run with repairs)")
        s = self._scan(k, start)
        return self.log.retire_flags()[s.first + lo : s.first + hi]

    def times(self, k: int, need: int, want: int = 0, *, start) -> np.ndarray:
        return self.get(k, need, want, start=start)[0]

    def next_time(self, k: int, i: int, *, start) -> float:
        t = self.get(k, i + 1, start=start)[0]
        return float(t[i]) if i < t.shape[0] else math.inf


class NodeRenewalProcess:
    """The :class:`spare_core.events.FailureProcess` of a node failure log (one run's view).

    Parameters
    ----------
    epochs : NodeEpochs
    start : float, default 0
        Start of epoch 0.
    """

    __slots__ = ("_src", "n_units", "epoch", "_start", "_now", "_pos")

    def __init__(self, epochs: NodeEpochs, *, start=0.0):
        self._src = epochs
        self.n_units = epochs.log.n_groups
        self.epoch = 0
        self._start = self._now = float(start)
        self._pos = 0

    @property
    def epoch_start(self) -> float:
        return self._start

    @property
    def now(self) -> float:
        return self._now

    @property
    def n_alive(self) -> int:
        return self.n_units - self._pos

    def restart(self, time) -> None:
        time = float(time)
        if not time >= self._now or not math.isfinite(time):
            raise ValueError(f"restart time must be finite and >= now ({self._now}), got {time}")
        self.epoch += 1
        self._start = self._now = time
        self._pos = 0

    def peek(self) -> float:
        """Time of the next failure without consuming it (``inf`` if every group is out);
        lets a model built on this one merge its own failures without running ahead."""
        t = self._src.get(self.epoch, self._pos + 1, start=self._start)[0]
        return self._start + float(t[self._pos]) if self._pos < t.shape[0] else math.inf

    def take(self, k: int, with_units: bool = True):
        k = as_int(k, "k", min_value=0)
        t, u = self._src.get(self.epoch, self._pos + k, start=self._start)
        stop = min(self._pos + k, t.shape[0])
        start = self._start
        times = [start + x for x in t[self._pos:stop].tolist()]
        units = u[self._pos:stop].tolist()
        self._pos = stop
        if times:
            self._now = times[-1]
        return times, units

    def take_units(self) -> list:
        return []
