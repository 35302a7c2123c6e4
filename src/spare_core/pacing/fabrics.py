"""Fabric topologies: which switch links the all-reduce's inter-node flows cross.

A :class:`Fabric` turns the ring flows of one job (node ``src[i]`` sends to node
``dst[i]`` on every rail) into a :class:`LinkIncidence`: for each flow that leaves its
first switch, the links it may cross on each of its equal-cost (ECMP) paths, which
switch buffer each link's egress queue draws on, and which rails share links. The
simulator turns that into the kernel's validated link table once per run; the kernel
never needs to know the topology, so a new fabric is a new class here or in user code
(docs/pacing.md, "Adding a fabric").

Two fabrics come with the library:

- :class:`RailOptimisedFabric` (the default, and the fabric of every result before this
  module existed): NIC ``j`` of every node in a group of ``nodes_per_leaf`` nodes sits on
  the group's rail-``j`` leaf, as in NVIDIA's DGX SuperPOD scalable units [1]_; each leaf
  has one uplink to each of ``round(nodes_per_leaf / oversubscription)`` spines;
- :class:`TopOfRackFabric`: all ``g`` NICs of ``nodes_per_leaf`` nodes sit on one leaf
  (a rack switch), as in Meta's RoCE training clusters (rack training switches below
  cluster training switches) [2]_; the leaf's ``round(nodes_per_leaf * g /
  oversubscription)`` uplinks carry every rail.

References
----------
.. [1] NVIDIA DGX SuperPOD reference architecture (DGX H100): scalable units of 32 nodes,
   one leaf per rail per unit, "traffic per rail is always one hop away from the other
   nodes in a SU; traffic between nodes, or between rails, traverses the spine layer".
.. [2] A. Gangidi et al., "RDMA over Ethernet for Distributed Training at Meta Scale",
   ACM SIGCOMM 2024 (two-tier AI zones: rack training switches, cluster training
   switches, ECMP over the spine).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .._validate import as_float, as_int

__all__ = ["Fabric", "LinkIncidence", "RailOptimisedFabric", "TopOfRackFabric", "NO_LINK"]

NO_LINK = -1
"""Marks a hop a flow does not make (``hops``) or a path that skips a hop (``path_links``).
Equal to the kernel's exported ``NO_LINK`` (tested)."""


@dataclass(frozen=True, eq=False)
class LinkIncidence:
    """The link incidence of one job's ring flows on one fabric: what the kernel reads.

    Links are numbered per *plane*: rail ``j``'s flows cross links ``0 .. plane_links-1``
    of plane ``rail_plane[j]``. Rails on one plane may share links (a link's flows are
    counted over every rail that crosses it); rails on different planes never meet. Give
    each rail its own plane when its links are its own (the kernel then counts a rail
    with one scan of its plane); put rails on one plane when some links are shared (a
    top-of-rack leaf's uplinks, a dragonfly's global links).

    Attributes
    ----------
    flow_src : int array (F,)
        For each kept flow, in the order of the ``src``/``dst`` arrays the fabric was
        given, its source node (whose parked window the flow carries). Flows that cross
        no link (both ends on one switch) should be left out: each kept flow costs one
        ECMP draw per rail and iteration.
    hops : int array (F, H) or (g, F, H), H >= 1
        ``hops[f, h]`` (or ``hops[j, f, h]`` on rail ``j``): where hop ``h``'s ``n_paths``
        candidate links start in ``path_links`` (or, with ``path_links=None``, the first
        candidate link itself), or :data:`NO_LINK` when flow ``f`` makes no hop ``h``. A
        2-d array applies to every rail (on its own plane's links).
    path_links : int array (M,) or None
        On ECMP path ``s``, hop ``h`` of flow ``f`` crosses plane-local link
        ``path_links[hops[f, h] + s]`` (:data:`NO_LINK`: that path skips the hop). None
        (the identity table) means link ``hops[f, h] + s``: the hop's candidates are
        consecutive link ids, e.g. a leaf's uplinks to spines ``0..U-1``.
    n_paths : int
        ECMP paths per flow (>= 1). Every iteration, rail and flow draws one path index
        uniformly from ``[0, n_paths)`` (the ``ecmp`` stream).
    plane_links : int
        Links per plane.
    rail_plane : int array (g,)
        Plane of each rail; planes ``0 .. max`` must all be used.
    link_domain : int array (n_planes * plane_links,)
        Buffer domain of each link (plane ``q``'s link ``l`` at ``q * plane_links + l``):
        the switch whose shared buffer the link's egress queue uses. Per iteration and
        domain, competing traffic holds that buffer with probability
        ``FabricModel.background_duty`` (one ``background`` draw per domain), which sets
        the headroom of all the domain's links (``buffer`` when held, else
        ``buffer_idle``).
    n_domains : int
        Number of buffer domains (>= 1).

    Notes
    -----
    The kernel validates every index when the simulator builds its link table; bad
    incidences fail there with an error naming the field.
    """

    flow_src: np.ndarray
    hops: np.ndarray
    path_links: np.ndarray | None
    n_paths: int
    plane_links: int
    rail_plane: np.ndarray
    link_domain: np.ndarray
    n_domains: int

    @property
    def n_flows(self) -> int:
        return int(np.shape(self.flow_src)[0])

    @property
    def n_planes(self) -> int:
        return int(np.max(self.rail_plane)) + 1

    def kernel_fields(self) -> dict:
        """The fields as keyword arguments of the kernel's link table."""
        return dict(flow_src=self.flow_src, hops=self.hops, path_links=self.path_links,
                    n_paths=self.n_paths, plane_links=self.plane_links, rail_plane=self.rail_plane,
                    link_domain=self.link_domain, n_domains=self.n_domains)

    def links_of(self, rail: int, flow: int, path: int) -> list:
        """Plane-local links flow ``flow`` crosses on rail ``rail`` along ECMP path ``path``,
        in hop order (a reading aid for tests and debugging; the kernel does the same)."""
        out = []
        hops = np.asarray(self.hops)
        for seg in (hops[rail] if hops.ndim == 3 else hops)[flow]:
            if seg == NO_LINK:
                continue
            lnk = int(seg) + path if self.path_links is None else int(np.asarray(self.path_links)[seg + path])
            if lnk != NO_LINK:
                out.append(lnk)
        return out


@runtime_checkable
class Fabric(Protocol):
    """Protocol of a fabric topology.

    Contract
    --------
    ``incidence(src, dst, *, n_nodes, gpus_per_node)`` receives the inter-node flows of
    the collective (int arrays: flow ``i`` goes from node ``src[i]`` to node ``dst[i]``,
    ``0 <= node < n_nodes``; every rail carries the same flows) and returns a
    :class:`LinkIncidence`. It must be a pure function of its arguments and the fabric's
    parameters (no randomness: ECMP choices and competing traffic are drawn by the
    simulator), keep the flows it returns in the given order, and number nodes so that
    consecutive node ids are close in the fabric (``ring_order="topology"`` walks node
    ids in order). Instances should be immutable (frozen dataclasses) with a useful
    ``repr``: a scenario holds them.
    """

    def incidence(self, src: np.ndarray, dst: np.ndarray, *, n_nodes: int,
                  gpus_per_node: int) -> LinkIncidence:  # pragma: no cover - protocol
        ...


def _two_tier(src, dst, n_nodes, nodes_per_leaf, n_spines, rail_plane):
    """Leaf/spine incidence: cross-leaf flows go up to a spine and down to their leaf.

    Per plane, uplink (leaf, spine) is link ``leaf * U + spine`` and downlink (spine,
    leaf) is ``L * U + leaf * U + spine``; ECMP path ``s`` is spine ``s``. A link's buffer
    domain is its leaf: the source leaf for an uplink (its egress queue is there), the
    destination leaf for a downlink (the spine's queue toward that leaf fills with
    whatever traffic converges on the leaf).
    """
    n_leaves = -(-n_nodes // nodes_per_leaf)
    u = n_spines
    src = np.asarray(src, dtype=np.intp)
    dst = np.asarray(dst, dtype=np.intp)
    leaf_s, leaf_d = src // nodes_per_leaf, dst // nodes_per_leaf
    cross = leaf_s != leaf_d          # flows inside a leaf use its non-blocking crossbar
    hops = np.stack([leaf_s[cross] * u, n_leaves * u + leaf_d[cross] * u], axis=1).astype(np.intp)
    plane = np.arange(2 * n_leaves * u, dtype=np.intp)
    domain = np.where(plane < n_leaves * u, plane // u, (plane - n_leaves * u) // u)
    n_planes = int(np.max(rail_plane)) + 1
    return LinkIncidence(
        flow_src=np.ascontiguousarray(src[cross]), hops=np.ascontiguousarray(hops.reshape(-1, 2)),
        path_links=None, n_paths=u, plane_links=2 * n_leaves * u,
        rail_plane=np.asarray(rail_plane, dtype=np.intp), link_domain=np.tile(domain, n_planes),
        n_domains=n_leaves)


@dataclass(frozen=True)
class RailOptimisedFabric:
    """Rail-optimised two-tier fabric: one leaf per rail per group of nodes.

    Nodes ``0..nodes_per_leaf-1`` form group 0, the next ``nodes_per_leaf`` group 1, ...;
    in each group, NIC ``j`` of every node connects to the group's rail-``j`` leaf, so a
    rail's traffic between two nodes of a group crosses one switch (its non-blocking
    crossbar: no shared link). Each leaf has ``U = max(1, round(nodes_per_leaf /
    oversubscription))`` uplinks, one to each spine; a flow between groups takes the spine
    ECMP hashes it to (``U`` paths), an uplink (source leaf, spine) and a downlink
    (spine, destination leaf).

    Whether the rails' leaves share one spine layer (DGX SuperPOD) or each rail has its
    own spines changes no link a rail-aligned ring crosses (each leaf serves one rail,
    so its up- and downlinks carry only that rail), so both are this fabric: one plane
    per rail. The rails would meet on the spines only through cross-rail traffic, which
    the hierarchical and rail-aligned ring all-reduces of this model do not generate.

    Buffer domains: one per group, shared by its ``g`` rail leaves (a competing job
    under the same group loads all its rails at once) and by the spine ports toward the
    group.

    Parameters
    ----------
    nodes_per_leaf : int
        Nodes per group (scalable unit), in [1, 65535]. Default 16.
    oversubscription : float
        Leaf downlink : uplink ratio (>= 1). Default 2.0.

    Examples
    --------
    >>> inc = RailOptimisedFabric(nodes_per_leaf=2, oversubscription=1.0).incidence(
    ...     np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0]), n_nodes=4, gpus_per_node=2)
    >>> inc.flow_src.tolist(), inc.n_paths, inc.rail_plane.tolist()    # 1->2 and 3->0 cross
    ([1, 3], 2, [0, 1])
    """

    nodes_per_leaf: int = 16
    oversubscription: float = 2.0

    def __post_init__(self):
        as_int(self.nodes_per_leaf, "nodes_per_leaf", min_value=1, max_value=65535)
        as_float(self.oversubscription, "oversubscription", min_value=1.0)

    @property
    def n_spines(self) -> int:
        """Uplinks per leaf = spines a flow can take."""
        return max(1, int(round(self.nodes_per_leaf / float(self.oversubscription))))

    def incidence(self, src, dst, *, n_nodes: int, gpus_per_node: int) -> LinkIncidence:
        g = as_int(gpus_per_node, "gpus_per_node", min_value=1)
        return _two_tier(src, dst, as_int(n_nodes, "n_nodes", min_value=1), self.nodes_per_leaf,
                         self.n_spines, np.arange(g))


@dataclass(frozen=True)
class TopOfRackFabric:
    """Top-of-rack two-tier fabric: every NIC of a node on the same leaf.

    Nodes ``0..nodes_per_leaf-1`` sit under leaf 0 with all their ``g`` NICs, the next
    ``nodes_per_leaf`` under leaf 1, ...; each leaf has ``U = max(1,
    round(nodes_per_leaf * g / oversubscription))`` uplinks, one to each spine, shared
    by all rails. A flow between leaves takes the spine ECMP hashes it to (``U``
    paths); flows of different rails between the same nodes hash independently (they
    are different queue pairs) and may collide on the same uplink. At equal switch
    radix a leaf holds ``g`` times fewer nodes than a rail-optimised leaf, so a ring
    leaves its leaf more often, and every rail's flows compete for the same uplinks.

    Buffer domains: one per leaf (the source leaf of an uplink, the destination leaf of
    a downlink), as for :class:`RailOptimisedFabric`.

    Parameters
    ----------
    nodes_per_leaf : int
        Nodes per leaf (rack), in [1, 65535]. Default 2: a leaf with the ports of a
        16-node rail-optimised leaf when ``g = 8`` (16 NIC ports; Meta's racks hold two
        8-GPU servers).
    oversubscription : float
        Leaf downlink : uplink ratio (>= 1). Default 2.0.

    Examples
    --------
    >>> inc = TopOfRackFabric(nodes_per_leaf=1).incidence(
    ...     np.array([0, 1]), np.array([1, 0]), n_nodes=2, gpus_per_node=4)
    >>> inc.n_paths, inc.rail_plane.tolist()      # 4 NICs / 2 = 2 uplinks, one shared plane
    (2, [0, 0, 0, 0])
    """

    nodes_per_leaf: int = 2
    oversubscription: float = 2.0

    def __post_init__(self):
        as_int(self.nodes_per_leaf, "nodes_per_leaf", min_value=1, max_value=65535)
        as_float(self.oversubscription, "oversubscription", min_value=1.0)

    def uplinks_per_leaf(self, gpus_per_node: int) -> int:
        """Uplinks per leaf (= spines a flow can take) for ``gpus_per_node`` NICs per node."""
        return max(1, int(round(self.nodes_per_leaf * gpus_per_node / float(self.oversubscription))))

    def incidence(self, src, dst, *, n_nodes: int, gpus_per_node: int) -> LinkIncidence:
        g = as_int(gpus_per_node, "gpus_per_node", min_value=1)
        return _two_tier(src, dst, as_int(n_nodes, "n_nodes", min_value=1), self.nodes_per_leaf,
                         self.uplinks_per_leaf(g), np.zeros(g, dtype=np.intp))

