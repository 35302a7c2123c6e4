"""Min-cost flow with dual-potential certificates.

Two entry points share two compiled kernels (:mod:`spare_core._ext._mcf`: shortest paths,
cost scaling, maximum flow; :mod:`spare_core._ext._netsimplex`: network simplex):

- :func:`min_cost_flow` routes given node supplies at least cost;
- :func:`max_flow_min_cost` finds the maximum ``source``-``sink`` flow of least cost
  (RECTLR's third phase: reorder shard stacks with the least displacement [3]_).

Both return a :class:`FlowResult` whose node potentials prove optimality;
:func:`check_flow_certificate` verifies a result independently of the solver (capacity,
conservation, complementary slackness, the cost sum and, for maximum flows, that no
augmenting path is left).

Conventions
-----------
Arc ``a`` goes from ``tail[a]`` to ``head[a]`` with integer ``capacity[a] >= 0`` and
integer ``cost[a]`` (any sign). ``supply[v] > 0`` is a source of that many units,
``supply[v] < 0`` a demand; supplies sum to zero. The reduced cost of an arc is
``cost[a] + potential[tail[a]] - potential[head[a]]``; a flow is optimal iff some
potential makes it ``>= 0`` on every arc with ``flow < capacity`` and ``<= 0`` on every
arc with ``flow > 0`` (complementary slackness, [1]_ thm. 9.8).

Negative costs and self-loops
-----------------------------
Capacities are finite, so no instance is unbounded. The solver starts from the flow that
saturates every negative-cost arc (its residual graph has non-negative costs only) and
lets the shortest-path phases un-saturate arcs where that is cheaper, so a negative
cycle ends saturated unless breaking it pays. The network simplex needs no such step:
every arc is bounded, so a negative cycle is just a pivot cycle that ends with one of
its arcs at capacity. A self-loop carries its full capacity if its
cost is negative and nothing otherwise; it never affects conservation.

Speed against OR-Tools and networkx (``python -m bench.ratios flow``): see docs/flow.md.

References
----------
.. [1] R. K. Ahuja, T. L. Magnanti, J. B. Orlin, "Network Flows: Theory, Algorithms, and
   Applications", Prentice Hall, 1993: successive shortest paths with potentials (9.7),
   the primal-dual algorithm (9.8), Dinic's maximum flow (7.5).
.. [2] E. A. Dinic, "Algorithm for solution of a problem of maximum flow in networks with
   power estimation", Soviet Math. Doklady 11, 1970.
.. [3] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357.
.. [4] A. V. Goldberg, "An efficient implementation of a scaling minimum-cost flow
   algorithm", J. Algorithms 22(1), 1997 (cost scaling, global price updates); A. V.
   Goldberg and R. E. Tarjan, "Finding minimum-cost circulations by successive
   approximation", Math. Oper. Res. 15(3), 1990.
.. [5] R. Jonker and A. Volgenant, "A shortest augmenting path algorithm for dense and
   sparse linear assignment problems", Computing 38(4), 1987.
.. [6] W. H. Cunningham, "A network simplex method", Math. Programming 11, 1976
   (strongly feasible trees); [1]_ ch. 11; Z. Kiraly and P. Kovacs, "Efficient
   implementations of minimum-cost flow algorithms", Acta Univ. Sapientiae Informatica
   4(1), 2012 (block search pricing, thread-based tree updates).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spare_core._native import load
from spare_core._results import fields_dict
from spare_core._validate import as_int, as_int_array, check_choice
from spare_core.graph._validate import max_flow_network, supply_network, validate_network

__all__ = ["FlowResult", "CertificateCheck", "min_cost_flow", "max_flow_min_cost", "check_flow_certificate"]

_kernel = load("_mcf")
_simplex = load("_netsimplex")

# Node ids are int32 in the kernel and every arc owns two int32-indexed residual slots.
# Costs, distances and potentials stay far inside int64 below these bounds (a potential
# is at most a path length, so about n * max|cost|; the kernel adds two of them).
# Largest |cost| for which method='auto' picks SSP (unit-source maximum flows only).
_SSP_MAX_COST = 64


@dataclass(frozen=True, eq=False, repr=False)
class FlowResult:
    """Outcome of :func:`min_cost_flow` or :func:`max_flow_min_cost`.

    Attributes
    ----------
    flow : numpy.ndarray of int64, shape (m,)
        Flow on every arc, in input order.
    cost : int
        ``sum(cost * flow)``.
    value : int
        Units routed: the ``source``-``sink`` flow value, or the total supply delivered.
    potential : numpy.ndarray of int64, shape (n_nodes,)
        Dual certificate: reduced costs ``cost + potential[tail] - potential[head]`` are
        ``>= 0`` where ``flow < capacity`` and ``<= 0`` where ``flow > 0``.
    status : {"optimal", "infeasible"}
        ``"infeasible"``: the supplies cannot all be routed; ``flow`` is then a least-cost
        flow among those delivering the most (``value``), short by ``shortfall`` units.
    shortfall : int
        Supply that could not be delivered (0 when optimal).
    method : str or None
        The algorithm that produced the flow: ``"ssp"``, ``"ssp_unit_paths"`` (SSP with the
        one-shortest-path-per-unit stage of :func:`max_flow_min_cost`, Notes),
        ``"cost_scaling"`` or ``"network_simplex"``; what ``method="auto"`` chose.
        ``None`` for a result built by hand.
    """

    flow: np.ndarray
    cost: int
    value: int
    potential: np.ndarray
    status: str
    shortfall: int = 0
    method: str | None = None

    @property
    def optimal(self) -> bool:
        """True when every supply was routed (or the maximum flow was found)."""
        return self.status == "optimal"

    def __repr__(self) -> str:
        extra = f", shortfall={self.shortfall}" if self.shortfall else ""
        if self.method is not None:
            extra += f", method={self.method!r}"
        return (
            f"FlowResult(status={self.status!r}, value={self.value}, cost={self.cost}, "
            f"n_arcs={self.flow.shape[0]}, n_nodes={self.potential.shape[0]}{extra})"
        )

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict (arrays as lists)."""
        return fields_dict(self)


@dataclass(frozen=True, repr=False)
class CertificateCheck:
    """Verdict of :func:`check_flow_certificate`: ``ok`` and the violated rules, if any."""

    ok: bool
    violations: tuple

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        if self.ok:
            return "CertificateCheck(ok=True)"
        shown = "; ".join(self.violations[:3]) + ("; ..." if len(self.violations) > 3 else "")
        return f"CertificateCheck(ok=False, {len(self.violations)} violation(s): {shown})"

    def to_dict(self) -> dict:
        """``{"ok": ..., "violations": [...]}``."""
        return fields_dict(self)



def _result(flow, potential, value, shortfall, method, *, cost=None, total=None):
    """FlowResult from the kernel's arrays; ``total`` (sum cost * flow) if known, else from ``cost``;
    ``method`` the kernel code that ran (``_SSP_UNIT`` for SSP with its unit-path stage)."""
    status = "optimal" if shortfall == 0 else "infeasible"
    if total is None:
        total = int(np.dot(flow, cost)) if flow.size else 0
    return FlowResult(flow=flow, cost=int(total), value=int(value), potential=potential, status=status,
                      shortfall=int(shortfall), method=_METHOD_NAMES[method])


# ----------------------------------------------------------------------------- public API
def min_cost_flow(n_nodes, tail, head, capacity, cost, supply, *, method="auto") -> FlowResult:
    """Least-cost flow meeting node supplies and demands.

    Parameters
    ----------
    n_nodes : int
        Number of nodes, ``0 <= n_nodes < 2**31 - 2``; nodes are ``0 .. n_nodes-1``.
    tail, head : array_like of int, shape (m,)
        Arc end points (any integer dtype). Parallel arcs, self-loops and isolated nodes
        are allowed.
    capacity : array_like of int, shape (m,)
        Arc capacities, ``>= 0`` (zero-capacity arcs are allowed and carry nothing).
    cost : array_like of int, shape (m,)
        Cost per unit of flow, any sign. Floats (even integral ones) are refused.
    supply : array_like of int, shape (n_nodes,)
        Net supply of every node (``> 0`` source, ``< 0`` demand); must sum to zero.
    method : {"auto", "ssp", "cost_scaling", "network_simplex"}, default "auto"
        ``"ssp"``: primal-dual successive shortest paths; ``"cost_scaling"``:
        Goldberg-Tarjan cost scaling; ``"network_simplex"``: primal network simplex.
        ``"auto"`` takes the network simplex, except for a single supply node and a
        single demand node on an assignment-layered network with unit arcs out of the
        supply node and costs >= 0 (the shape :func:`max_flow_min_cost` recognises), which
        goes to SSP's unit-path stage; see Notes for the measurements. All return the same
        optimal cost (not necessarily the same flow); ``FlowResult.method`` says which ran.

    Returns
    -------
    FlowResult
        ``status="optimal"`` with ``shortfall=0`` when every supply is routed. Otherwise
        ``"infeasible"``: the flow delivers the most that can be delivered, at least cost,
        and ``shortfall`` says how much is missing. The caller's arrays are not modified.

    Raises
    ------
    TypeError
        Non-integer arrays (floats, NaN, bools, objects) or a non-integer ``n_nodes``.
    ValueError
        Mismatched lengths, node ids out of range, negative capacities, supplies not
        summing to zero, magnitudes that could overflow int64 (max |cost| * n_nodes
        above 2**59; total |cost| * flow bound above 2**62), an unknown ``method``,
        ``method="cost_scaling"`` with max |cost| * (n_nodes + 3)**2 above 2**56, or
        ``method="network_simplex"`` with arcs + 2 * n_nodes above 2**31 - 12.

    Notes
    -----
    Negative-cost arcs are saturated first, so the zero potential is dual feasible.

    *SSP* (primal-dual successive shortest paths [1]_): a greedy pass first pushes flow
    along every path of zero cost (for an assignment network: each unit to a cheapest
    free slot); then each phase runs Dijkstra on reduced costs from all excess nodes
    over the ball up to the nearest deficit, updates the potentials of the settled nodes,
    and pushes flow along every zero-reduced-cost path inside that ball (depth-first,
    current-arc pointers). Time O(P * m log n) for P phases: the number of distinct
    shortest-path lengths, small when costs are small integers.

    *Cost scaling* [4]_: costs are multiplied by n + 1 and eps-optimality is refined from
    max |cost| down to 1 by partial augment-relabel (admissible paths of up to 8 arcs
    pushed at once) with Goldberg's global price updates; exact
    integer potentials are then recovered by label correcting from the final prices.
    Time O(n^2 m log(nC)) worst case; a max flow (Dinic [2]_) first checks feasibility.

    *Network simplex* [6]_: a spanning-tree basis over the nodes and an artificial root
    (big-M artificial arcs carry the supplies at the start), stored with parent,
    preorder thread, subtree sizes and last successors so that a pivot only touches the
    re-hung subtree, the nodes renumbered in preorder from time to time so that those
    walks run over consecutive memory; block pricing (blocks of about sqrt(m) arcs) that
    keeps a short list of the best candidates met; Cunningham's strongly
    feasible trees (the last blocking arc of the cycle leaves), so degenerate pivots
    cannot cycle. The start is a crash basis: nodes hung on shortest paths to the
    demands (a Dijkstra), the supplies routed down that tree wherever no arc would
    saturate, which saves the degenerate pivots that would grow that tree one node at a
    time and many of those that would move the supplies off the artificial arcs. The tree potentials are the certificate. Flow left on an artificial arc means
    the supplies are infeasible (see below). Time: O(m) per pivot in the worst case; no
    polynomial bound on the pivots for this rule, but far below the cap used (64 (n + m)
    + 1e6, a guard that raises RuntimeError instead of running on).

    On generic networks SSP needs one phase per distinct distance and cost scaling pays
    for every refine, while the simplex needs about a quarter pivot per arc, mostly
    degenerate and cheap; hence ``"auto"`` is the simplex here for every cost range
    (``python -m bench.ratios flow --methods``; the figures are in docs/flow.md). SSP
    stays best on assignment-shaped networks, where each unit's shortest path is one
    alternating path deep: ``"auto"`` detects a single supply/demand pair on such a
    network (one pass over the arcs) and routes it as :func:`max_flow_min_cost` does, the
    source's excess capped at the supply. An infeasible instance
    (remaining excess reaches no deficit, or artificial flow left) is re-solved on the
    network extended by a super source and super sink, which routes the most that can be
    delivered at least cost (for the simplex: that amount is fixed by a maximum flow
    first). O(m) memory.

    Examples
    --------
    >>> r = min_cost_flow(3, [0, 0, 1], [1, 2, 2], [2, 2, 2], [1, 4, 1], [2, 0, -2])
    >>> r.flow.tolist(), r.cost, r.status
    ([2, 0, 2], 4, 'optimal')
    """
    # every option before the O(m) scans of the arrays
    check_choice(method, "method", _METHODS)
    net = supply_network(n_nodes, tail, head, capacity, cost, supply)
    n, tail, head, capacity, cost, scan = net.n, net.tail, net.head, net.capacity, net.cost, net.scan
    supply, sup, positive = net.supply, net.supply_scan, net.routed
    if method == "auto" and scan.cost_min >= 0 and sup.nonzero == 2:
        # One supply node and one demand node on an assignment-layered network with unit
        # arcs out of the supply node: the maximum-flow path with its unit-path SSP stage,
        # the source's excess capped at the supply (SSP stops after that many shortest
        # paths: a least-cost flow of exactly that value).
        solved = _single_pair_assignment(n, tail, head, capacity, cost, int(sup.pos_node), int(sup.neg_node),
                                         positive)
        if solved is not None:
            return solved
    code = _method_code(method, n, tail.shape[0], scan.max_cost)
    if code == _SIMPLEX:
        solved = _simplex_solve(n, tail, head, capacity, cost, supply)
        if solved is not None:
            flow, potential, total = solved
            return _result(flow, potential, positive, 0, code, total=total)
        leftover = 1
    else:
        leftover = positive - _deliverable(n, tail, head, capacity, supply) if code == _SCALING else 0
    if leftover == 0:
        sol = _kernel.solve(n, tail, head, capacity, cost, supply, method=code)
        leftover = sol.leftover
        if leftover == 0:
            return _result(sol.flow, sol.potential, positive, 0, code, cost=cost)
    # Infeasible: deliver the most, at least cost, through a super source and sink whose
    # arcs are capped by the supplies; the potentials restricted to the real nodes still
    # certify the flow on the real arcs.
    big_s, big_t, a_tail, a_head, a_cap, a_cost = _with_super_terminals(n, tail, head, capacity, cost, supply)
    m = tail.shape[0]
    if code == _SIMPLEX:
        # The simplex needs balanced supplies: fix the deliverable amount first.
        value = _deliverable(n, tail, head, capacity, supply)
        a_supply = np.zeros(n + 2, dtype=np.int64)
        a_supply[big_s], a_supply[big_t] = value, -value
        flow, potential, _ = _simplex_solve(n + 2, a_tail, a_head, a_cap, a_cost, a_supply)
        return _result(flow[:m].copy(), potential[:n].copy(), value, positive - value, code, cost=cost)
    sol = _kernel.solve(
        n + 2, a_tail, a_head, a_cap, a_cost, np.zeros(n + 2, dtype=np.int64), big_s, big_t, positive,
        method=code,
    )
    return _result(sol.flow[:m].copy(), sol.potential[:n].copy(), sol.value, positive - sol.value, code,
                   cost=cost)


def _single_pair_assignment(n, tail, head, capacity, cost, s, t, positive):
    """min_cost_flow's fast path for the single source ``s`` and sink ``t`` on an
    assignment-layered network (see min_cost_flow, Notes); None when the network is not of
    that shape or the supply cannot all be routed (the general path then reports the
    shortfall)."""
    if not _kernel.assignment_shape(n, tail, head, capacity, s, t):
        return None
    sol = _kernel.solve(n, tail, head, capacity, cost, np.zeros(n, dtype=np.int64), s, t, positive,
                        method=_SSP, unit_paths=True)
    if sol.value != positive:
        return None
    return _result(sol.flow, sol.potential, positive, 0, _SSP_UNIT, cost=cost)


def _with_super_terminals(n, tail, head, capacity, cost, supply):
    """The network plus node n (feeding every supply) and node n + 1 (fed by every demand)."""
    src = np.flatnonzero(supply > 0)
    dst = np.flatnonzero(supply < 0)
    a_tail = np.concatenate([tail, np.full(src.size, n), dst]).astype(np.int64)
    a_head = np.concatenate([head, src, np.full(dst.size, n + 1)]).astype(np.int64)
    a_cap = np.concatenate([capacity, supply[src], -supply[dst]])
    a_cost = np.concatenate([cost, np.zeros(src.size + dst.size, dtype=np.int64)])
    return n, n + 1, a_tail, a_head, a_cap, a_cost


def _deliverable(n, tail, head, capacity, supply) -> int:
    """Most supply that can reach the demands (a maximum flow, costs ignored)."""
    s, t, a_tail, a_head, a_cap, _ = _with_super_terminals(n, tail, head, capacity, capacity, supply)
    return _max_flow_value(n + 2, a_tail, a_head, a_cap, s, t)


# Cost scaling multiplies costs by n + 1 and its prices reach a few times
# alpha * n * (n + 1) * max|cost| (alpha = 16); past this bound SSP is used instead.
_SCALING_LIMIT = 2**56
# Kernel method codes (the _mcf kernel's own numbers); _SIMPLEX is the wrapper's code for
# the separate network simplex kernel and matches none of them.
_SSP = _kernel.CONSTANTS["M_SSP"]
_SCALING = _kernel.CONSTANTS["M_COST_SCALING"]
_MAXFLOW = _kernel.CONSTANTS["M_MAX_FLOW"]
_SIMPLEX = -1
_SSP_UNIT = -2      # the wrapper's name for SSP with the unit-path stage (FlowResult.method)
_METHOD_NAMES = {_SSP: "ssp", _SSP_UNIT: "ssp_unit_paths", _SCALING: "cost_scaling", _SIMPLEX: "network_simplex"}
_NS_OK = _simplex.CONSTANTS["NS_OK"]
_NS_INFEASIBLE = _simplex.CONSTANTS["NS_INFEASIBLE"]
_SIMPLEX_MAX_ITEMS = 2**31 - 8
_METHODS = {"auto", "ssp", "cost_scaling", "network_simplex"}


def _method_code(method, n, m, max_cost, *, unit_max_flow=False, assignment=False) -> int:
    """Kernel code of ``method`` (see :func:`min_cost_flow`); ``"auto"`` is resolved here.

    ``method`` is one of ``_METHODS`` (the public functions check it before any scan);
    the rules checked here depend on the network's size and costs.

    ``unit_max_flow``: a maximum flow whose source arcs all have capacity <= 1 and whose
    costs are >= 0 (RECTLR's reassignment network), where SSP's unit-path stage wins: for
    costs up to 64 on any such network, for any costs when ``assignment`` (the network is
    source -> L -> R -> sink layered, ``_mcf.assignment_shape``; docs/flow.md).
    """
    # The simplex numbers arcs (plus one artificial arc per node, plus the super
    # terminals' arcs of an infeasible instance) with int32.
    simplex_fits = m + 2 * n + 4 <= _SIMPLEX_MAX_ITEMS
    if method == "cost_scaling":
        if max_cost * (n + 3) * (n + 3) > _SCALING_LIMIT:
            raise ValueError(
                f"method='cost_scaling' needs max|cost| * (n_nodes + 3)**2 <= 2**56 to stay inside "
                f"int64, got {max_cost} * {n + 3}**2; use method='network_simplex'"
            )
        return _SCALING
    if method == "ssp":
        return _SSP
    if method == "network_simplex":
        if not simplex_fits:
            raise ValueError(
                f"method='network_simplex' needs arcs + 2 * n_nodes <= 2**31 - 12 (int32 ids), "
                f"got {m} + 2 * {n}; use method='ssp'"
            )
        return _SIMPLEX
    if unit_max_flow and (max_cost <= _SSP_MAX_COST or assignment) or not simplex_fits:
        return _SSP
    return _SIMPLEX


def _simplex_solve(n, tail, head, capacity, cost, supply):
    """Network simplex kernel: (flow, potential, total cost), None if the supplies are infeasible."""
    sol = _simplex.solve(n, tail, head, capacity, cost, supply)
    if sol.status == _NS_INFEASIBLE:
        return None
    if sol.status != _NS_OK:
        raise RuntimeError(f"internal error: network simplex stopped with status {sol.status}")
    return sol.flow, sol.potential, sol.cost


def _max_flow_value(n, tail, head, capacity, source, sink) -> int:
    """Maximum source-sink flow value (Dinic; costs ignored)."""
    zero = np.zeros(tail.shape[0], dtype=np.int64)
    return int(_kernel.solve(n, tail, head, capacity, zero, np.zeros(n, dtype=np.int64), source, sink,
                             method=_MAXFLOW).value)


def max_flow_min_cost(n_nodes, tail, head, capacity, cost, source, sink, *, method="auto") -> FlowResult:
    """Maximum ``source``-``sink`` flow, of least cost among maximum flows.

    Parameters
    ----------
    n_nodes, tail, head, capacity, cost
        The network, as in :func:`min_cost_flow`.
    source, sink : int
        Distinct node ids.
    method : {"auto", "ssp", "cost_scaling", "network_simplex"}, default "auto"
        As :func:`min_cost_flow`. ``"auto"`` takes SSP with the unit-path stage when
        every arc out of ``source`` has capacity <= 1, all costs are >= 0 and either they
        are at most 64 (RECTLR's reassignment network) or the network is
        assignment-layered (``source`` -> L -> R -> ``sink``, penalty arcs L -> ``sink``
        allowed: an assignment or transportation network with any cost range), and the
        network simplex otherwise. ``FlowResult.method`` records the choice.

    Returns
    -------
    FlowResult
        ``value`` is the maximum flow value, ``status`` is always ``"optimal"``. Every node
        other than ``source`` and ``sink`` is balanced.

    Raises
    ------
    TypeError, ValueError
        As :func:`min_cost_flow`; also ``source == sink`` or either out of range, and a
        total capacity out of ``source`` or into ``sink`` above 2**61.

    Notes
    -----
    Without negative-cost arcs the source starts with an excess bounded by the capacity
    around it and the primal-dual phases of :func:`min_cost_flow` run until no
    augmenting path is left, which yields a maximum flow of least cost [1]_. With
    negative-cost arcs the value is fixed first by Dinic's algorithm [2]_, since
    saturating negative arcs creates interior imbalances that must not steal source flow.
    RECTLR's reordering network (source -> shard type -> (group, stack position) -> group
    -> sink) is the workload this is tuned for [3]_: when every arc out of ``source`` has
    capacity <= 1 (and SSP is used without negative costs), the units left after the
    greedy start wait at the heads of the source arcs and each gets its own Dijkstra,
    stopped at the first free slot, with potentials updated on the scanned nodes only
    (shortest augmenting paths for assignment, Jonker and Volgenant [5]_); this stage
    halves the SSP time on the 1e6-arc reassign instance of ``bench/bench_flow.py`` and
    the network simplex is an order of magnitude slower there (docs/flow.md), hence the
    ``"auto"`` rule. With ``method="network_simplex"``
    the value is fixed by Dinic's algorithm and then routed at least cost by the simplex.

    Examples
    --------
    >>> r = max_flow_min_cost(4, [0, 0, 1, 2], [1, 2, 3, 3], [1, 1, 1, 1], [0, 1, 0, 0], 0, 3)
    >>> r.value, r.cost
    (2, 1)
    """
    check_choice(method, "method", _METHODS)
    net = max_flow_network(n_nodes, tail, head, capacity, cost, source, sink)
    n, tail, head, capacity, cost, scan = net.n, net.tail, net.head, net.capacity, net.cost, net.scan
    s, t, bound, arcs = net.source, net.sink, net.routed, net.scan.arcs
    # Unit source arcs (RECTLR's shard types): one shortest path per waiting unit.
    unit_sources = arcs.out_max <= 1
    unit_flow = unit_sources and scan.cost_min >= 0
    code = _method_code(method, n, tail.shape[0], scan.max_cost, unit_max_flow=unit_flow,
                        assignment=(method == "auto" and unit_flow and scan.max_cost > _SSP_MAX_COST
                                    and _kernel.assignment_shape(n, tail, head, capacity, s, t)))
    if code == _SIMPLEX:
        # Fix the value by a maximum flow, then route it at least cost.
        value = _max_flow_value(n, tail, head, capacity, s, t)
        supply = np.zeros(n, dtype=np.int64)
        supply[s], supply[t] = value, -value
        flow, potential, total = _simplex_solve(n, tail, head, capacity, cost, supply)
        return _result(flow, potential, value, 0, code, total=total)
    unit = code == _SSP and unit_sources
    sol = _kernel.solve(
        n, tail, head, capacity, cost, np.zeros(n, dtype=np.int64), s, t, bound, method=code,
        unit_paths=unit,
    )
    return _result(sol.flow, sol.potential, sol.value, 0, _SSP_UNIT if unit else code, cost=cost)


# ----------------------------------------------------------------------------- certificate
def _terminal_slackness(potential, supply, net) -> list[str]:
    """Least cost among the flows delivering the most, for an infeasible result.

    Such a flow is a min-cost flow of the network with a super source S (arc S -> i of
    capacity supply[i] > 0, cost 0) and a super sink T (arc j -> T of capacity -supply[j]):
    the arcs' slackness alone does not say *which* sources send. Potentials for S and T
    exist iff every source that sends has a potential at least that of every source with
    supply left (reduced cost p[S] - p[i]), and every demand that receives at most that of
    every demand left unmet (p[j] - p[T]).
    """
    bad = []
    src = supply > 0
    sends, unmet = src & (net > 0), src & (net < supply)
    if sends.any() and unmet.any():
        lo, hi = potential[sends].min(), potential[unmet].max()
        if hi > lo:
            bad.append(f"optimality: source {int(np.flatnonzero(unmet & (potential == hi))[0])} has supply left "
                       f"at potential {hi} while source {int(np.flatnonzero(sends & (potential == lo))[0])} "
                       f"sends at the lower potential {lo}: a cheaper choice of sources exists")
    dst = supply < 0
    gets, short = dst & (net < 0), dst & (net > supply)
    if gets.any() and short.any():
        hi, lo = potential[gets].max(), potential[short].min()
        if hi > lo:
            bad.append(f"optimality: demand {int(np.flatnonzero(short & (potential == lo))[0])} is short at "
                       f"potential {lo} while demand {int(np.flatnonzero(gets & (potential == hi))[0])} "
                       f"receives at the higher potential {hi}: a cheaper choice of demands exists")
    return bad


def _reaches(n, tail, head, flow, capacity, starts, targets) -> bool:
    """True if some node of ``targets`` is reachable from ``starts`` in the residual graph."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    if starts.size == 0 or targets.size == 0:
        return False
    fwd = flow < capacity
    bwd = flow > 0
    hub = n  # one extra node linked to every start
    rows = np.concatenate([tail[fwd], head[bwd], np.full(starts.size, hub)])
    cols = np.concatenate([head[fwd], tail[bwd], starts])
    graph = csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
    seen = breadth_first_order(graph, hub, directed=True, return_predecessors=False)
    return bool(np.isin(targets, seen).any())


def check_flow_certificate(n_nodes, tail, head, capacity, cost, result, *, supply=None,
                           source=None, sink=None) -> CertificateCheck:
    """Verify a :class:`FlowResult` without trusting the solver.

    Parameters
    ----------
    n_nodes, tail, head, capacity, cost
        The network the result claims to solve.
    result : FlowResult
        The claimed solution (``flow``, ``cost``, ``value``, ``potential``, ``status``).
    supply : array_like of int, optional
        For a :func:`min_cost_flow` result: the supplies.
    source, sink : int, optional
        For a :func:`max_flow_min_cost` result (give these instead of ``supply``).

    Returns
    -------
    CertificateCheck
        ``ok`` is True iff all of these hold: ``0 <= flow <= capacity``; conservation
        (net outflow equals the supply; for an ``"infeasible"`` result it lies between 0
        and the supply, and the shortfall is what is missing; for a maximum flow it is
        ``value`` at the source, ``-value`` at the sink and 0 elsewhere); complementary
        slackness with ``potential`` (reduced cost >= 0 where flow < capacity, <= 0 where
        flow > 0), which proves least cost [1]_; ``cost == sum(cost * flow)``; and, for a
        maximum flow or an infeasible result, no residual path from an unmet source to an
        unmet sink (max-flow min-cut), which proves that nothing more can be routed.

    Raises
    ------
    TypeError, ValueError
        Malformed network or arguments (as :func:`min_cost_flow`), or neither / both of
        ``supply`` and ``source``/``sink`` given.

    Examples
    --------
    >>> net = (3, [0, 0, 1], [1, 2, 2], [2, 2, 2], [1, 4, 1])
    >>> r = min_cost_flow(*net, [2, 0, -2])
    >>> check_flow_certificate(*net, r, supply=[2, 0, -2])
    CertificateCheck(ok=True)
    """
    n, tail, head, capacity, cost, _ = validate_network(n_nodes, tail, head, capacity, cost)
    m = tail.shape[0]
    if (supply is None) == (source is None or sink is None):
        raise ValueError("give either supply (min_cost_flow) or source and sink (max_flow_min_cost)")
    if not isinstance(result, FlowResult):
        raise TypeError(f"result must be a FlowResult, got {type(result).__name__}")
    flow = as_int_array(result.flow, "result.flow", length=m)
    potential = as_int_array(result.potential, "result.potential", length=n)
    for name in ("cost", "value", "shortfall"):
        as_int(getattr(result, name), f"result.{name}")
    bad: list[str] = []
    statuses = ("optimal", "infeasible") if supply is not None else ("optimal",)
    if not (isinstance(result.status, str) and result.status in statuses):
        bad.append(f"status: must be one of {list(statuses)}, got {result.status!r}")
    if m and ((flow < 0).any() or (flow > capacity).any()):
        arc = int(np.flatnonzero((flow < 0) | (flow > capacity))[0])
        bad.append(f"capacity: arc {arc} carries {flow[arc]} outside [0, {capacity[arc]}]")
    # Python ints: a certificate check must not be fooled by int64 wrap-around.
    net = np.zeros(n, dtype=object)
    np.add.at(net, tail, flow.astype(object))
    np.subtract.at(net, head, flow.astype(object))
    if supply is not None:
        supply = as_int_array(supply, "supply", length=n).astype(object)
        if result.status == "optimal":
            wrong = np.flatnonzero(net != supply)
            if wrong.size:
                v = int(wrong[0])
                bad.append(f"conservation: node {v} sends {net[v]}, supply is {supply[v]}")
        else:
            lo = np.minimum(supply, 0)
            hi = np.maximum(supply, 0)
            wrong = np.flatnonzero((net < lo) | (net > hi))
            if wrong.size:
                v = int(wrong[0])
                bad.append(f"conservation: node {v} sends {net[v]}, outside [{lo[v]}, {hi[v]}]")
        delivered = int(net[supply > 0].sum()) if n else 0
        total = int(supply[supply > 0].sum()) if n else 0
        if delivered != result.value or total - delivered != result.shortfall:
            bad.append(f"value: {delivered} of {total} delivered, result says value={result.value}, "
                       f"shortfall={result.shortfall}")
        if result.status == "optimal" and result.shortfall:
            bad.append("status: optimal with a nonzero shortfall")
        if result.status != "optimal":
            unmet_src = np.flatnonzero(net < supply)
            unmet_dst = np.flatnonzero(net > supply)
            if _reaches(n, tail, head, flow, capacity, unmet_src, unmet_dst):
                bad.append("maximality: a residual path joins an unmet supply to an unmet demand")
            bad.extend(_terminal_slackness(potential, supply, net))
    else:
        s = as_int(source, "source", min_value=0, max_value=n - 1)
        t = as_int(sink, "sink", min_value=0, max_value=n - 1)
        expect = np.zeros(n, dtype=object)
        expect[s] = result.value
        expect[t] = -result.value
        wrong = np.flatnonzero(net != expect)
        if wrong.size:
            v = int(wrong[0])
            bad.append(f"conservation: node {v} sends {net[v]}, expected {expect[v]}")
        if _reaches(n, tail, head, flow, capacity, np.array([s]), np.array([t])):
            bad.append("maximality: a residual source-sink path is left")
    reduced = cost.astype(object) + potential[tail].astype(object) - potential[head].astype(object)
    loose = np.flatnonzero(((flow < capacity) & (reduced < 0)) | ((flow > 0) & (reduced > 0)))
    if loose.size:
        a = int(loose[0])
        bad.append(f"optimality: arc {a} has reduced cost {reduced[a]} with flow {flow[a]} of {capacity[a]}")
    total_cost = int(np.dot(cost.astype(object), flow.astype(object))) if m else 0
    if total_cost != result.cost:
        bad.append(f"cost: sum(cost * flow) is {total_cost}, result says {result.cost}")
    return CertificateCheck(ok=not bad, violations=tuple(bad))
