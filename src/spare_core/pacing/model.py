"""Straggler, fabric and collective parameters, and the analytic all-reduce cost.

The model follows the failure modes of [2]_ (synchronization amplification,
topology-induced contention, locality-driven variance) with one mechanism per knob:

- :class:`ComputeModel` - per-rank compute per iteration: persistent per-GPU speed
  (lognormal spread plus a fraction of ~1.5x outliers), i.i.d. per-iteration lognormal
  jitter, and episodic slowdowns (Poisson onsets, lognormal durations from seconds to
  hours, a slowdown factor while active);
- :class:`FabricModel` - ranks -> nodes -> a switch topology (:mod:`.fabrics`; default a
  rail-optimised two-tier leaf/spine fat-tree: per rail, ``nodes_per_leaf`` nodes under a
  leaf with ``nodes_per_leaf / oversubscription`` uplinks, one to each spine; ECMP picks a
  spine per cross-leaf flow); the GPU-to-NIC locality class of each (node, rail) adds
  latency and a bandwidth derate;
  the switch buffer (its headroom depends on whether competing traffic holds the
  leaf's shared buffer), the collective library's eager window and a loss-recovery
  timeout set the incast cost of uneven arrival;
- :class:`CollectiveModel` - ring or hierarchical all-reduce, alpha-beta-gamma cost.

All times are in seconds, sizes in bytes, bandwidths in bytes per second.

References
----------
.. [2] When Scaling Fails: Network and Fabric Effects on Distributed GPU Training
   Performance, arXiv:2603.04424.
.. [3] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
   operations in MPICH", IJHPCA 19(1), 2005 (ring and alpha-beta-gamma costs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .._validate import as_float, as_float_array, as_int, check_choice
from .fabrics import Fabric, RailOptimisedFabric

__all__ = [
    "ComputeModel",
    "FabricModel",
    "CollectiveModel",
    "PacingScenario",
    "collective_time",
    "RailTerms",
    "rail_terms",
]

_MIB = float(1 << 20)


def _positive(value, name):
    return as_float(value, name, min_value=0.0, strict_min=True)


def _nonneg(value, name):
    return as_float(value, name, min_value=0.0)


@dataclass(frozen=True)
class ComputeModel:
    """Per-rank compute time of one iteration.

    Parameters
    ----------
    t_compute : float
        Nominal compute (forward + backward) of one rank per iteration, s (> 0).
        Default 0.5 s: a ~1.3B-parameter model, 32k tokens per GPU on an H100.
    jitter : float
        Log-standard deviation of the i.i.d. per-iteration multiplicative jitter
        (mean-one lognormal). Default 0.05, the +-5 % step jitter of [1]_.
    speed_spread : float
        Log-standard deviation of the persistent per-GPU speed factor. Default 0.05
        (same-model GPUs differ by several percent [2]_).
    slow_fraction, slow_factor : float
        Fraction of GPUs that are persistent outliers and their slowdown.
        Defaults 0.02 and 1.5 ("a few percent of GPUs ~1.5x slower" [2]_).
    episode_rate : float
        Episodic slowdown onsets per GPU per second (thermal or power throttling,
        noisy host daemons). Default one per GPU-day.
    episode_median, episode_sigma, episode_max : float
        Lognormal episode duration (median s, log-sd) capped at ``episode_max`` s.
        Defaults 60 s, 2.0 (95 % between ~1 s and ~50 min) and 6 h.
    episode_factor : float
        Compute slowdown while an episode is active (>= 1). Default 1.5.
    """

    t_compute: float = 0.5
    jitter: float = 0.05
    speed_spread: float = 0.05
    slow_fraction: float = 0.02
    slow_factor: float = 1.5
    episode_rate: float = 1.0 / 86400.0
    episode_median: float = 60.0
    episode_sigma: float = 2.0
    episode_max: float = 6 * 3600.0
    episode_factor: float = 1.5

    def __post_init__(self):
        _positive(self.t_compute, "t_compute")
        _nonneg(self.jitter, "jitter")
        _nonneg(self.speed_spread, "speed_spread")
        as_float(self.slow_fraction, "slow_fraction", min_value=0.0, max_value=1.0)
        as_float(self.slow_factor, "slow_factor", min_value=1.0)
        _nonneg(self.episode_rate, "episode_rate")
        _positive(self.episode_median, "episode_median")
        _nonneg(self.episode_sigma, "episode_sigma")
        _positive(self.episode_max, "episode_max")
        as_float(self.episode_factor, "episode_factor", min_value=1.0)

    @classmethod
    def ideal(cls, t_compute: float = 0.5) -> "ComputeModel":
        """Identical, jitter-free ranks without outliers or episodes."""
        return cls(t_compute=t_compute, jitter=0.0, speed_spread=0.0, slow_fraction=0.0,
                   episode_rate=0.0)


@dataclass(frozen=True)
class FabricModel:
    """Nodes, switch topology, GPU-to-NIC locality, incast physics.

    Parameters
    ----------
    gpus_per_node : int
        Ranks per node; each has its own NIC (rail). Default 8.
    nodes_per_leaf : int
        Nodes under one leaf switch of a rail plane of the default topology
        (:class:`~spare_core.pacing.fabrics.RailOptimisedFabric`). Default 16.
    oversubscription : float
        Leaf downlink : uplink bandwidth ratio of the default topology (>= 1). A leaf
        has ``max(1, round(nodes_per_leaf / oversubscription))`` uplinks, one per spine.
        Default 2.0.
    ring_order : {"random", "topology"}
        Order of nodes in the ring. ``"topology"`` walks leaves in order (one cross-leaf
        flow per leaf); ``"random"`` is a rank order unrelated to the fabric (fragmented
        allocation, hostname-ordered hostfile), so most ring flows cross the spine.
        Default ``"random"``.
    nic_bandwidth, net_latency : float
        Per-rail NIC bandwidth (default 50e9 B/s = 400 Gb/s) and the per-step latency of
        an inter-node ring step (default 5 us).
    nvlink_bandwidth, nvlink_latency : float
        Per-GPU NVLink bandwidth per direction (default 450e9 B/s) and step latency (1 us).
    locality_probs, locality_latency, locality_derate : sequence of float
        GPU-to-NIC locality classes (same PCIe switch; through the host bridge; across
        sockets): probability of each class per (node, rail), extra latency per ring
        step, and bandwidth derate (>= 1). Defaults (0.95, 0.04, 0.01), (0, 1, 3) us,
        (1.0, 1.15, 1.5).
    window : float
        Bytes a rank pushes into the fabric toward a not-yet-ready ring peer (the
        collective library's eager buffer, NCCL_BUFFSIZE = 4 MiB). Default 4 MiB.
    buffer : float
        Headroom one egress port has when competing traffic already holds the switch's
        shared buffer: its static per-port share (~64 MB over 32 400G ports, ~2 MiB).
        Default 2 MiB.
    buffer_idle : float
        Headroom of one congested egress port when the shared buffer is otherwise idle.
        Under dynamic-threshold buffer sharing (Choudhury & Hahne 1998) a lone congested
        port may take ``alpha / (1 + alpha)`` of the free buffer: 32 MiB for a 64 MiB
        switch at ``alpha = 1``. Default 32 MiB (>= ``buffer``).
    background_duty : float
        Probability, per iteration and leaf, that competing traffic (other tenants'
        collectives crossing the same oversubscribed leaf uplinks, storage and
        checkpoint flows) holds the leaf's shared buffer when our burst arrives, so our
        parked bytes meet ``buffer`` instead of ``buffer_idle``; one draw per (iteration,
        leaf) shared by all rail planes and by the spine ports toward that leaf.
        Default 0.1: a neighbour whose collective crosses the spine for ~10 % of its
        iteration. 1.0 makes every link always contended (the fixed-buffer model).
    background_run : float or None
        Mean length, in iterations, of a busy period of competing traffic at one leaf.
        None (default): independent draws per iteration (mean busy run
        ``1 / (1 - background_duty)``). A number L makes each leaf's competing traffic a
        two-state Markov chain with the same stationary probability ``background_duty``:
        busy stays busy with probability ``1 - 1/L``, idle turns busy with probability
        ``duty / ((1 - duty) L)`` (so ``L >= max(1, duty / (1 - duty))``). Neighbours'
        jobs come in runs (a tenant's collective loads the spine for many iterations),
        which makes collapses cluster in time.
    rto : float
        Stall of one loss-recovery round (RDMA local ACK timeout 4.096 us * 2**14 =
        67 ms). A shared link whose fluid backlog ``sum P - max P`` of parked bursts
        exceeds ``buffer`` by ``X`` costs ``rto * ceil(X / (buffer + window)) + X /
        nic_bandwidth``: synchronized senders time out and resend together, so
        recovery repeats (incast collapse). See docs/pacing.md.
    topology : Fabric, optional
        The switch topology (any object satisfying
        :class:`~spare_core.pacing.fabrics.Fabric`, e.g.
        :class:`~spare_core.pacing.fabrics.TopOfRackFabric`). None (default):
        ``RailOptimisedFabric(nodes_per_leaf, oversubscription)``. With a topology,
        ``nodes_per_leaf`` and ``oversubscription`` must keep their defaults: the
        topology carries its own.
    """

    gpus_per_node: int = 8
    nodes_per_leaf: int = 16
    oversubscription: float = 2.0
    ring_order: str = "random"
    nic_bandwidth: float = 50e9
    net_latency: float = 5e-6
    nvlink_bandwidth: float = 450e9
    nvlink_latency: float = 1e-6
    locality_probs: tuple = (0.95, 0.04, 0.01)
    locality_latency: tuple = (0.0, 1e-6, 3e-6)
    locality_derate: tuple = (1.0, 1.15, 1.5)
    window: float = 4 * _MIB
    buffer: float = 2 * _MIB
    buffer_idle: float = 32 * _MIB
    background_duty: float = 0.1
    background_run: float | None = None
    rto: float = 4.096e-6 * 2**14
    topology: Fabric | None = None

    def __post_init__(self):
        as_int(self.gpus_per_node, "gpus_per_node", min_value=1)
        as_int(self.nodes_per_leaf, "nodes_per_leaf", min_value=1, max_value=65535)
        as_float(self.oversubscription, "oversubscription", min_value=1.0)
        check_choice(self.ring_order, "ring_order", ("random", "topology"))
        _positive(self.nic_bandwidth, "nic_bandwidth")
        _nonneg(self.net_latency, "net_latency")
        _positive(self.nvlink_bandwidth, "nvlink_bandwidth")
        _nonneg(self.nvlink_latency, "nvlink_latency")
        probs = as_float_array(self.locality_probs, "locality_probs", min_value=0.0)
        if probs.size == 0 or not math.isclose(probs.sum(), 1.0, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"locality_probs must be non-empty and sum to 1, got {probs.tolist()}")
        as_float_array(self.locality_latency, "locality_latency", length=probs.size, min_value=0.0)
        as_float_array(self.locality_derate, "locality_derate", length=probs.size, min_value=1.0)
        _nonneg(self.window, "window")
        _nonneg(self.buffer, "buffer")
        _nonneg(self.buffer_idle, "buffer_idle")
        if self.buffer_idle < self.buffer:
            raise ValueError(f"buffer_idle must be >= buffer, got {self.buffer_idle} < {self.buffer}")
        as_float(self.background_duty, "background_duty", min_value=0.0, max_value=1.0)
        if self.background_run is not None:
            run = as_float(self.background_run, "background_run", min_value=1.0)
            duty = float(self.background_duty)
            if duty < 1.0 and run < duty / (1.0 - duty):
                raise ValueError(f"background_run must be >= duty / (1 - duty) = {duty / (1.0 - duty):g} "
                                 f"for background_duty={duty:g}, got {run:g}")
        _nonneg(self.rto, "rto")
        if self.topology is not None:
            if not isinstance(self.topology, Fabric):
                raise TypeError("topology must have an incidence(src, dst, *, n_nodes, gpus_per_node) "
                                f"method (Fabric), got {type(self.topology).__name__}")
            if (self.nodes_per_leaf, self.oversubscription) != (16, 2.0):
                raise ValueError(
                    "nodes_per_leaf and oversubscription configure the default topology; with "
                    f"topology={self.topology!r} leave them at 16 and 2.0 (got {self.nodes_per_leaf} and "
                    f"{self.oversubscription}) and set them on the topology")

    @property
    def topology_in_use(self) -> Fabric:
        """The switch topology: ``topology``, or the rail-optimised fabric of
        ``nodes_per_leaf`` and ``oversubscription`` when it is None."""
        if self.topology is not None:
            return self.topology
        return RailOptimisedFabric(self.nodes_per_leaf, self.oversubscription)

    @property
    def n_spines(self) -> int:
        """Spines per rail plane = uplinks per leaf of the default topology
        (``nodes_per_leaf`` and ``oversubscription``)."""
        return RailOptimisedFabric(self.nodes_per_leaf, self.oversubscription).n_spines

    @classmethod
    def uncontended(cls, **kw) -> "FabricModel":
        """Topology-ordered ring, non-blocking, every GPU next to its NIC (with a
        ``topology`` keyword, the topology's own oversubscription is kept)."""
        base = dict(oversubscription=1.0, ring_order="topology", locality_probs=(1.0,),
                    locality_latency=(0.0,), locality_derate=(1.0,))
        if kw.get("topology") is not None:
            del base["oversubscription"]
        base.update(kw)
        return cls(**base)


@dataclass(frozen=True)
class CollectiveModel:
    """The gradient all-reduce.

    Parameters
    ----------
    algorithm : {"hierarchical", "ring"}
        ``"hierarchical"``: NVLink reduce-scatter in each node, one ring per rail over
        the nodes (``message_bytes / g`` each), NVLink all-gather. ``"ring"``: one flat
        ring over all ``p`` ranks (``g`` channels, one per NIC). Default hierarchical.
    message_bytes : float
        Gradient bytes per iteration. Default 2.6e9 (1.3B parameters in bf16).
    reduce_bandwidth : float
        Bytes per second a GPU reduces (gamma = 1 / reduce_bandwidth). Default 1e12.
    """

    algorithm: str = "hierarchical"
    message_bytes: float = 2.6e9
    reduce_bandwidth: float = 1e12

    def __post_init__(self):
        check_choice(self.algorithm, "algorithm", ("hierarchical", "ring"))
        _nonneg(self.message_bytes, "message_bytes")
        _positive(self.reduce_bandwidth, "reduce_bandwidth")


@dataclass(frozen=True)
class PacingScenario:
    """One training job: node count plus the compute, fabric and collective models.

    Parameters
    ----------
    n_nodes : int
        Nodes in the job (>= 1); ranks = ``n_nodes * fabric.gpus_per_node``.
    compute, fabric, collective
        The sub-models (defaults: the documented default scenario).
    release_overhead : float
        Host-side cost of a paced barrier (timestamp exchange and stream sync) before
        the release travels the ``ceil(log2 n_nodes)`` hops of a tree. Default 1 ms.
    """

    n_nodes: int
    compute: ComputeModel = field(default_factory=ComputeModel)
    fabric: FabricModel = field(default_factory=FabricModel)
    collective: CollectiveModel = field(default_factory=CollectiveModel)
    release_overhead: float = 1e-3

    def __post_init__(self):
        as_int(self.n_nodes, "n_nodes", min_value=1)
        for name, cls in (("compute", ComputeModel), ("fabric", FabricModel),
                          ("collective", CollectiveModel)):
            if not isinstance(getattr(self, name), cls):
                raise TypeError(f"{name} must be a {cls.__name__}, got {type(getattr(self, name)).__name__}")
        _nonneg(self.release_overhead, "release_overhead")

    @property
    def n_ranks(self) -> int:
        return self.n_nodes * self.fabric.gpus_per_node

    @property
    def release_latency(self) -> float:
        """Time from the last arrival to the release of held ranks."""
        hops = math.ceil(math.log2(self.n_nodes)) if self.n_nodes > 1 else 0
        return self.release_overhead + hops * self.fabric.net_latency

    @property
    def nominal_step(self) -> float:
        """Jitter-free iteration: ``t_compute`` plus the uncontended collective."""
        return self.compute.t_compute + collective_time(self.n_nodes, self.fabric, self.collective)


class RailTerms(NamedTuple):
    """Alpha-beta-gamma parts of one all-reduce, per rail (what the kernel adds up).

    A rail's inter-node time at contention ``K`` is
    ``latency[j] + max(bandwidth[j] * K, floor[j])``; the iteration adds ``t_intra`` once.
    """

    t_intra: float
    latency: np.ndarray
    bandwidth: np.ndarray
    floor: np.ndarray


def rail_terms(n_nodes, fabric, collective, latency, derate) -> RailTerms:
    """Per-rail cost terms of the all-reduce for rails with extra latency and derate.

    Parameters
    ----------
    n_nodes : int
        Nodes (>= 1).
    fabric, collective : FabricModel, CollectiveModel
    latency, derate : array_like of float, one entry per rail
        Locality penalty of each rail's worst (node, rail) pair: extra latency per ring
        step (s) and bandwidth derate (>= 1).

    Returns
    -------
    RailTerms
        ``t_intra`` (the intra-node NVLink phases), and per rail the latency-plus-
        reduction part, the bandwidth part at contention 1 and its NVLink floor (all s);
        see :func:`collective_time` for the formulas.
    """
    g = fabric.gpus_per_node
    n = float(collective.message_bytes)
    gamma = 1.0 / collective.reduce_bandwidth
    latency = np.asarray(latency, dtype=np.float64)
    derate = np.asarray(derate, dtype=np.float64)
    zeros = np.zeros_like(latency)
    intra_one = (g - 1) * fabric.nvlink_latency + (g - 1) / g * n / fabric.nvlink_bandwidth
    intra_gamma = (g - 1) / g * n * gamma
    if n_nodes == 1:
        return RailTerms(2.0 * intra_one + intra_gamma, zeros, zeros.copy(), zeros.copy())
    if collective.algorithm == "hierarchical":
        nn = n_nodes
        a = 2.0 * (nn - 1) * (fabric.net_latency + latency) + (nn - 1) / nn * (n / g) * gamma
        bw = 2.0 * (nn - 1) / nn * (n / g) * derate / fabric.nic_bandwidth
        return RailTerms(2.0 * intra_one + intra_gamma, a, bw, zeros.copy())
    p = n_nodes * g
    # a flat ring step is as slow as its slowest hop: the inter-node one
    a = 2.0 * (p - 1) * (fabric.net_latency + latency) + (p - 1) / p * n * gamma
    bw = 2.0 * (p - 1) / p * (n / g) * derate / fabric.nic_bandwidth
    floor = np.full_like(latency, 2.0 * (p - 1) / p * n / fabric.nvlink_bandwidth)
    return RailTerms(0.0, a, bw, floor)


def collective_time(n_nodes, fabric: FabricModel | None = None,
                    collective: CollectiveModel | None = None, *, contention: float = 1.0,
                    extra_latency: float = 0.0, derate: float = 1.0) -> float:
    """Alpha-beta-gamma time of one gradient all-reduce, without incast.

    Ring all-reduce over ``q`` participants moving ``m`` bytes costs
    ``2(q-1) alpha + 2(q-1)/q m beta + (q-1)/q m gamma`` [3]_. Hierarchical: NVLink
    reduce-scatter and all-gather inside each node (``q = g``) around one ring per
    rail over the nodes (``q = n_nodes``, ``m = message / g``). Flat ring: ``q = p``
    ranks, ``g`` channels (one per NIC), each step as slow as its inter-node hop, the
    bandwidth term at least the NVLink volume.

    Parameters
    ----------
    n_nodes : int
        Nodes (>= 1).
    fabric, collective : FabricModel, CollectiveModel, optional
        Defaults when omitted.
    contention : float
        Flows sharing the most loaded fabric link (>= 1): divides the NIC bandwidth.
    extra_latency, derate : float
        Locality penalty of the worst (node, rail) on the ring: added latency per step
        (>= 0) and bandwidth derate (>= 1).

    Returns
    -------
    float
        Seconds.

    Raises
    ------
    ValueError
        On a non-positive node count, ``contention < 1`` or ``derate < 1``.

    Examples
    --------
    >>> f = FabricModel(gpus_per_node=1, nic_bandwidth=1e9, net_latency=0.0)
    >>> c = CollectiveModel(algorithm="ring", message_bytes=1e9, reduce_bandwidth=1e30)
    >>> round(collective_time(2, f, c), 6)   # 2 (p-1)/p n / B = 1 s
    1.0
    """
    n_nodes = as_int(n_nodes, "n_nodes", min_value=1)
    fabric = FabricModel() if fabric is None else fabric
    collective = CollectiveModel() if collective is None else collective
    contention = as_float(contention, "contention", min_value=1.0)
    extra_latency = as_float(extra_latency, "extra_latency", min_value=0.0)
    derate = as_float(derate, "derate", min_value=1.0)
    t_intra, a, bw, floor = rail_terms(n_nodes, fabric, collective, [extra_latency], [derate])
    return float(t_intra + a[0] + max(bw[0] * contention, floor[0]))
