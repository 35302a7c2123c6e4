"""The graph library's one validation path: CSR graphs (matching) and arc lists (flow).

Every public entry point of :mod:`spare_core.graph` checks its input here, before any work:
:func:`csr_graph` / :func:`csr_graph_shared` / :func:`csr_arrays` for a bipartite graph (any
scipy.sparse format, or CSR arrays of a hand-built :class:`~spare_core.graph.matching.Matching`),
:func:`capacity_unit` / :func:`capacity_raw` for right capacities, and
:func:`supply_network` / :func:`max_flow_network` / :func:`validate_network` for a flow
network. What reaches a kernel is a private, validated, contiguous copy (or, for flows, the
caller's plain int64 arrays while no other Python thread runs). The one-call fast paths of
``_transversal.solve_csr`` and ``_bmatch.solve_csr`` run the same C pass as
:func:`csr_arrays` (``_csr_check.pxd``, shared with ``_hk.csr_checked``), with the same messages.
"""
from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp

from spare_core._native import load
from spare_core._validate import as_int, as_int_array

__all__: list[str] = []   # private to spare_core.graph

_hk = load("_hk")
_mcf = load("_mcf")

MAX_VERTICES = 2**31 - 2  # the matching kernels store vertex ids as int32
MAX_ROW = 2**31 - 1       # and arc offsets within a row
NATIVE = (np.dtype(np.int32), np.dtype(np.int64))
# exact types of the fast paths in hopcroft_karp and csr_graph_shared (subclasses take the
# general path)
CSR_TYPES = (sp.csr_array, sp.csr_matrix)

# Flow: node ids are int32 in the kernel and every arc owns two int32-indexed residual slots.
MAX_NODES = 2**31 - 3          # room for the two helper nodes of an infeasible instance
MAX_ARCS = 2**30 - 2**20
# Costs, distances and potentials stay far inside int64 below these bounds (a potential
# is at most a path length, so about n * max|cost|; the kernel adds two of them).
MAX_TOTAL = 2**62
MAX_PATH = 2**59


# ----------------------------------------------------------------------------- CSR graphs
def index_array(arr, name: str) -> np.ndarray:
    arr = np.asarray(arr)
    if arr.dtype.kind not in "iu":      # signed or unsigned integers; bool is kind "b"
        raise TypeError(f"graph {name} must hold integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"graph {name} must be 1-dimensional, got shape {arr.shape}")
    return arr


def check_range(arr: np.ndarray, name: str, size: int) -> None:
    if arr.size:
        lo, hi = arr.min(), arr.max()
        if lo < 0:
            raise ValueError(f"graph {name} must be non-negative, got {lo}")
        if hi >= size:
            raise ValueError(f"graph {name} must be < {size}, got {hi}")


def check_indptr(indptr, n_major: int, n_stored: int) -> np.ndarray:
    indptr = index_array(indptr, "indptr")
    if indptr.shape[0] != n_major + 1:
        raise ValueError(f"graph indptr must have length {n_major + 1}, got {indptr.shape[0]}")
    if indptr[0] != 0:
        raise ValueError(f"graph indptr must start at 0, got {indptr[0]}")
    if n_major and np.any(indptr[1:] < indptr[:-1]):
        raise ValueError("graph indptr must be non-decreasing")
    if indptr[-1] > n_stored:
        raise ValueError(f"graph indptr ends at {indptr[-1]} but only {n_stored} indices are stored")
    return indptr


def csr_graph(graph) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Validate ``graph`` and return private CSR arrays (indptr int64, indices int32, n_left, n_right).

    Every index is range-checked on the caller's own arrays before any conversion, so a
    malformed matrix raises ValueError instead of reaching scipy's or our C code.
    """
    indptr, indices, n_left, n_right, _ = csr_graph_any(graph)
    check_rows(indptr, indices)
    return indptr, indices, n_left, n_right


def csr_graph_shared(graph):
    """As :func:`csr_graph`, and what a :class:`Matching` may keep instead of the copies.

    Returns ``(indptr, indices, n_left, n_right, keep_indptr, keep_indices, fingerprint)``.
    The kernels always read ``indptr``/``indices``: private copies (int64, int32) made in the
    validating pass itself, so that nothing another thread (or a C extension without the
    GIL) writes into the caller's arrays during a solve can send a kernel out of bounds.
    Measured against reading the caller's arrays in place: within the run-to-run noise at
    1e3 ... 1e6 edges, because the copy is written in the pass that validates anyway
    (docs/matching.md, section 2).

    For a CSR graph with int32/int64 index arrays, ``keep_*`` are the caller's own arrays
    and ``fingerprint`` theirs (see ``csr_checked``), so that a result need not hold a
    second copy of the graph and :meth:`Matching.vertex_cover` can tell whether they were
    modified since. While other Python threads run, the result keeps the private copies
    instead (fingerprint None): one of them may be writing into the graph. Other inputs
    are converted to private arrays, kept as they are.
    """
    if type(graph) in CSR_TYPES:
        # the common case without the general path's Python-level checks (a third of the
        # wrapper's fixed cost on 1e3 edges): plain contiguous int32/int64 arrays go straight
        # to the one C pass, which checks everything else
        ip, ix = graph.indptr, graph.indices
        n_left, n_right = graph.shape
        if (type(ip) is np.ndarray and type(ix) is np.ndarray and ip.dtype in NATIVE and ix.dtype in NATIVE
                and ip.ndim == 1 and ix.ndim == 1 and ip.shape[0] == n_left + 1 and ip.flags.c_contiguous
                and ix.flags.c_contiguous and n_left <= MAX_VERTICES and n_right <= MAX_VERTICES):
            threaded = threading.active_count() > 1
            if threaded:  # check snapshots, not the caller's arrays (see csr_graph_any)
                ip, ix = ip.copy(), ix.copy()
            indptr, indices, fp = _hk.csr_checked(ip, ix, n_right, True)
            if indices.shape[0] > MAX_ROW:
                check_rows(indptr, indices)
            if threaded:
                return indptr, indices, n_left, n_right, indptr, indices, None
            return indptr, indices, n_left, n_right, ip, ix[: indices.shape[0]], fp
    indptr, indices, n_left, n_right, fp = csr_graph_any(graph)
    check_rows(indptr, indices)
    if fp is None or threading.active_count() > 1:
        return indptr, indices, n_left, n_right, indptr, indices, None
    ip, ix = np.asarray(graph.indptr), np.asarray(graph.indices)
    return indptr, indices, n_left, n_right, ip, ix[: indices.shape[0]], fp


def check_rows(indptr, indices) -> None:
    if indices.shape[0] > MAX_ROW and indptr.shape[0] > 1 and int(np.diff(indptr).max()) > MAX_ROW:
        # the kernel keeps its current arc as an int32 offset within the row
        raise ValueError(f"graph has a row with more than {MAX_ROW} stored entries")


def csr_arrays(indptr, indices, n_left: int, n_right: int) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Validate a CSR structure given as arrays and return private copies.

    The one check of ``indptr``/``indices`` shared by :func:`csr_graph_any` (a CSR graph) and
    by :class:`~spare_core.graph.matching.Matching` built by hand.

    Parameters
    ----------
    indptr, indices : array_like of int
        Row pointers (length ``n_left + 1``) and column indices; not modified.
    n_left, n_right : int
        The graph's shape.

    Returns
    -------
    indptr : ndarray of int64
    indices : ndarray of int32 or int64
        Private, validated copies (``indices`` cut to ``indptr[-1]`` entries).
    fingerprint : int or None
        That of the caller's arrays when they are contiguous int32/int64 arrays (the very
        arrays read; see ``_hk.csr_checked``), else None.

    Raises
    ------
    TypeError
        Non-integer arrays.
    ValueError
        Not 1-d, ``indptr`` of the wrong length, not starting at 0, decreasing or ending past
        the stored indices, a column index out of ``[0, n_right)``.
    """
    indices = index_array(indices, "indices")
    indptr = index_array(indptr, "indptr")
    if indptr.shape[0] != n_left + 1:
        raise ValueError(f"graph indptr must have length {n_left + 1}, got {indptr.shape[0]}")
    if indptr.dtype in NATIVE and indices.dtype in NATIVE:
        # one pass in C: the checks, private int64/int32 copies, and the fingerprint of
        # the caller's arrays (only meaningful when they are contiguous: the very arrays read)
        contiguous = indptr.flags.c_contiguous and indices.flags.c_contiguous
        indptr, indices, fp = _hk.csr_checked(np.ascontiguousarray(indptr), np.ascontiguousarray(indices),
                                              n_right, True)
        return indptr, indices, (fp if contiguous else None)
    indptr = check_indptr(indptr, n_left, indices.shape[0])
    nnz = int(indptr[-1])
    check_range(indices[:nnz], "column index", n_right)
    return np.array(indptr, dtype=np.int64, copy=True), np.array(indices[:nnz], dtype=np.int32, copy=True), None


def csr_graph_any(graph) -> tuple[np.ndarray, np.ndarray, int, int, int | None]:
    """Validated private CSR arrays (indptr int64, indices int32 or int64), n_left, n_right,
    and the fingerprint of the caller's index arrays when they are contiguous CSR arrays of
    int32/int64 (else None), before the row-length check."""
    if not sp.issparse(graph):
        raise TypeError(
            f"graph must be a scipy.sparse matrix or array (biadjacency, rows = left), "
            f"got {type(graph).__name__}"
        )
    if len(graph.shape) != 2:
        raise ValueError(f"graph must be 2-dimensional, got shape {graph.shape}")
    n_left, n_right = (int(x) for x in graph.shape)
    if n_left > MAX_VERTICES or n_right > MAX_VERTICES:
        raise ValueError(f"graph has too many vertices for int32 ids: shape {graph.shape}")
    fmt = graph.format
    # While other Python threads run, validate private snapshots, not the caller's arrays.
    # csr_checked once read its input twice without the GIL (a check pass, then a copy pass),
    # and a writer thread between the two put unchecked indices into the "validated" copy
    # (SIGSEGV in tests/fuzz/test_fuzz_threads.py); it now reads each entry once, so its copy
    # is always what it checked, and the snapshot keeps the Matching's certificate on arrays
    # no other thread is rewriting.
    grab = (lambda a: np.array(a, copy=True)) if threading.active_count() > 1 else (lambda a: a)
    if fmt == "csr":
        indptr, indices, fp = csr_arrays(grab(graph.indptr), grab(graph.indices), n_left, n_right)
        return indptr, indices, n_left, n_right, fp
    if fmt == "csc":
        indices = index_array(grab(graph.indices), "indices")
        indptr = check_indptr(grab(graph.indptr), n_right, indices.shape[0])
        nnz = int(indptr[-1])
        rows = indices[:nnz]
        check_range(rows, "row index", n_left)
        cols = np.repeat(np.arange(n_right, dtype=np.int64), np.diff(indptr).astype(np.int64))
        rows = rows.astype(np.int64)
    else:
        coo = graph if fmt == "coo" else graph.tocoo()
        if hasattr(coo, "coords"):
            rows, cols = coo.coords[0], coo.coords[1]
        else:  # pragma: no cover - scipy < 1.13
            rows, cols = coo.row, coo.col
        rows = index_array(grab(rows), "row")
        cols = index_array(grab(cols), "col")
        if rows.shape != cols.shape:
            raise ValueError(f"graph row and col must have equal length, got {rows.shape[0]} and {cols.shape[0]}")
        check_range(rows, "row index", n_left)
        check_range(cols, "column index", n_right)
        rows = rows.astype(np.int64)
        cols = cols.astype(np.int64)
    indptr64, indices32 = _hk.csr_from_pairs(np.ascontiguousarray(rows), np.ascontiguousarray(cols), n_left)
    return indptr64, indices32, n_left, n_right, None


def capacity_checked(capacity, n_right: int) -> np.ndarray:
    return capacity_unit(capacity, n_right)[0]


def capacity_raw(capacity, n_right: int) -> np.ndarray:
    """``capacity`` itself when the b-matching kernel can check and copy it (a contiguous
    int32/int64 vector of length n_right), else the validated int64 copy."""
    if (type(capacity) is np.ndarray and capacity.dtype in NATIVE and capacity.ndim == 1
            and capacity.shape[0] == n_right and capacity.flags.c_contiguous):
        return capacity
    return as_int_array(capacity, "capacity", dtype=np.int64, length=n_right, min_value=0)


def capacity_unit(capacity, n_right: int) -> tuple[np.ndarray, bool]:
    """The validated int64 capacities and whether every one is 1."""
    if capacity is None:
        return np.ones(n_right, dtype=np.int64), True
    if (type(capacity) is np.ndarray and capacity.dtype in NATIVE and capacity.ndim == 1
            and capacity.shape[0] == n_right and capacity.flags.c_contiguous):
        # the common case in one C pass (as_int_array takes ~14 us even for 1000 entries,
        # np.all(cap == 1) another 5)
        return _hk.nonneg_copy(capacity)
    cap = as_int_array(capacity, "capacity", dtype=np.int64, length=n_right, min_value=0)
    return cap, bool(np.all(cap == 1))

# ----------------------------------------------------------------------------- flow networks

def checked_total(approx: float, exact: int, name: str) -> int:
    """An int64 sum of non-negative values, refused if it could leave the safe range.

    ``approx`` is the same sum in float64 (no wrap-around); ``exact`` is trusted only
    below the bound, where int64 cannot have wrapped."""
    if approx > MAX_TOTAL / 2:
        raise ValueError(f"{name} must be at most 2**61 in total to stay inside int64, got about {approx:.3g}")
    return int(exact)


def int_array(values, name, *, length=None, nonneg=False):
    """``as_int_array(copy=False)``, skipped for a plain 1-d C-contiguous int64 ndarray.

    Such an array needs no conversion; its range is checked afterwards from one pass of
    the kernel's scan (with ``as_int_array``'s message), which at 1e3 arcs saves most of
    the wrapper's time (a dozen numpy reductions and dtype queries)."""
    # The kernel builds its graph from these arrays without the GIL. While other Python
    # threads run, one could write an out-of-range node into a shared array after the scan
    # checked it, so then the solve reads private copies (as hopcroft_karp does).
    shared_ok = threading.active_count() == 1
    if (shared_ok and type(values) is np.ndarray and values.dtype == np.int64 and values.ndim == 1
            and values.flags.c_contiguous):
        if length is not None and values.shape[0] != length:
            raise ValueError(f"{name} must have length {length}, got {values.shape[0]}")
        return values
    return as_int_array(values, name, length=length, min_value=0 if nonneg else None, copy=not shared_ok)


class NetworkScan:
    """What validation learned about the arcs in one pass (see ``_mcf.scan_network``).

    A plain slotted class: a frozen dataclass costs more to build than the whole scan of
    a 1e3-arc network."""

    __slots__ = ("cost_min", "cost_max", "negative_cap", "arcs", "loop_cost")

    def __init__(self, cost_min: int, cost_max: int, negative_cap: int, arcs, loop_cost: float = 0.0):
        self.cost_min = cost_min            # smallest and largest arc cost
        self.cost_max = cost_max
        self.negative_cap = negative_cap    # capacity of non-loop negative-cost arcs (< 2**61)
        self.arcs = arcs                    # the kernel's NetworkScan (terminal sums unchecked)
        # sum |cost| * capacity over the negative-cost self-loops, in float64: the solvers
        # saturate those whatever is routed, so they escape the routed-flow bound
        self.loop_cost = loop_cost

    @property
    def max_cost(self) -> int:
        return max(-self.cost_min, self.cost_max)


def validate_network(n_nodes, tail, head, capacity, cost, source=-1, sink=-1):
    n = as_int(n_nodes, "n_nodes", min_value=0, max_value=MAX_NODES)
    tail = int_array(tail, "tail", nonneg=True)
    m = tail.shape[0]
    if m > MAX_ARCS:
        raise ValueError(f"the number of arcs must be at most {MAX_ARCS}, got {m}")
    head = int_array(head, "head", length=m, nonneg=True)
    capacity = int_array(capacity, "capacity", length=m, nonneg=True)
    cost = int_array(cost, "cost", length=m)
    arcs = _mcf.scan_network(tail, head, capacity, cost, source, sink)
    for name, lo in (("tail", arcs.tail_min), ("head", arcs.head_min), ("capacity", arcs.cap_min)):
        if lo < 0:
            raise ValueError(f"{name} must be >= 0, got {lo}")
    if m:
        for name, hi in (("tail", arcs.tail_max), ("head", arcs.head_max)):
            if hi >= n:
                raise ValueError(f"{name} holds node id {hi}, out of range for n_nodes={n}")
    negative_cap = checked_total(arcs.neg_cap_approx, arcs.neg_cap, "capacity of negative-cost arcs")
    loop_cost = 0.0
    if m and arcs.cost_min < 0:
        loops = (cost < 0) & (tail == head)
        if loops.any():
            loop_cost = float(-cost[loops].astype(np.float64) @ capacity[loops].astype(np.float64))
    return n, tail, head, capacity, cost, NetworkScan(arcs.cost_min, arcs.cost_max, negative_cap, arcs,
                                                       loop_cost)


def check_magnitudes(n, capacity, cost, routed, scan):
    """Refuse instances whose costs, potentials or flows could overflow int64.

    ``routed`` bounds the units the solver moves from sources to sinks; no arc ever
    carries more than that plus the capacity of the saturated negative arcs.
    """
    if cost.size == 0:
        return
    max_cost = scan.max_cost
    if max_cost * (n + 3) > MAX_PATH:
        raise ValueError(
            f"max |cost| times n_nodes must be at most 2**59 so potentials fit in int64, "
            f"got {max_cost} * {n}"
        )
    bound = routed + scan.negative_cap
    if bound > MAX_TOTAL / 2:
        raise ValueError(f"the flow that can be moved must be at most 2**61 units, got {bound}")
    if max_cost * cost.size * bound <= MAX_TOTAL / 2 and scan.loop_cost <= MAX_TOTAL / 2:
        return  # no arc but a saturated self-loop carries more than bound units
    carried = np.minimum(capacity, bound).astype(np.float64)
    total = float(np.abs(cost).astype(np.float64) @ carried) + scan.loop_cost
    if total > MAX_TOTAL:
        raise ValueError(
            f"sum of |cost| * capacity (capacities capped at the routable {bound} units, "
            f"negative-cost self-loops at their full capacity) must be at most 2**62 so the "
            f"total cost fits in int64, got about {total:.3g}"
        )


class Network:
    """A validated flow network and what its checks learned (see :func:`supply_network`,
    :func:`max_flow_network`). A plain slotted class: built once per solve, read by name."""

    __slots__ = ("n", "tail", "head", "capacity", "cost", "scan", "supply", "routed", "source", "sink",
                 "supply_scan")

    def __init__(self, n, tail, head, capacity, cost, scan, *, supply=None, routed=0, source=-1, sink=-1,
                 supply_scan=None):
        self.n = n                      # number of nodes
        self.tail, self.head = tail, head
        self.capacity, self.cost = capacity, cost
        self.scan = scan                # NetworkScan of the arcs
        self.supply = supply            # int64 supplies (min_cost_flow), else None
        self.routed = routed            # bound on the units moved from sources to sinks
        self.source, self.sink = source, sink
        self.supply_scan = supply_scan  # the kernel's SupplyScan (min_cost_flow), else None


def supply_network(n_nodes, tail, head, capacity, cost, supply) -> Network:
    """Validate a :func:`~spare_core.graph.flow.min_cost_flow` instance: the arcs, then the
    supplies (length, integers, at most 2**61 each, summing to zero), then the magnitudes
    (:func:`check_magnitudes` with the total supply as the routed bound)."""
    n, tail, head, capacity, cost, scan = validate_network(n_nodes, tail, head, capacity, cost)
    supply = int_array(supply, "supply", length=n)
    sup = _mcf.scan_supply(supply)
    if max(-float(sup.supply_min), float(sup.supply_max)) > MAX_TOTAL / 2:
        raise ValueError("supply values must be at most 2**61 in absolute value")
    positive = checked_total(sup.positive_approx, sup.positive, "positive supply")
    negative = checked_total(sup.negative_approx, sup.negative, "negative supply")
    if positive != negative:
        raise ValueError(f"supplies must sum to zero, got {positive - negative}")
    check_magnitudes(n, capacity, cost, positive, scan)
    return Network(n, tail, head, capacity, cost, scan, supply=supply, routed=positive, supply_scan=sup)


def max_flow_network(n_nodes, tail, head, capacity, cost, source, sink) -> Network:
    """Validate a :func:`~spare_core.graph.flow.max_flow_min_cost` instance: the terminals
    are integers, the arcs (the capacity out of ``source`` and into ``sink`` summed in the
    same scan), at least 2 nodes, terminals in range and distinct, those capacities at most
    2**61, then the magnitudes with the smaller of the two as the routed bound."""
    # The terminals are range-checked after the network (n_nodes first), but summed in
    # the same scan: out-of-range ids match no arc and are refused just below.
    s = as_int(source, "source")
    t = as_int(sink, "sink")
    n, tail, head, capacity, cost, scan = validate_network(
        n_nodes, tail, head, capacity, cost, s if 0 <= s < 2**31 else -1, t if 0 <= t < 2**31 else -1)
    if n < 2:
        raise ValueError(f"a maximum flow needs at least 2 nodes, got n_nodes={n}")
    s = as_int(s, "source", min_value=0, max_value=n - 1)
    t = as_int(t, "sink", min_value=0, max_value=n - 1)
    if s == t:
        raise ValueError(f"source and sink must differ, got {s} for both")
    arcs = scan.arcs
    out_s = checked_total(arcs.out_approx, arcs.out_cap, "capacity out of source")
    in_t = checked_total(arcs.in_approx, arcs.in_cap, "capacity into sink")
    bound = min(out_s, in_t)
    check_magnitudes(n, capacity, cost, bound, scan)
    return Network(n, tail, head, capacity, cost, scan, routed=bound, source=s, sink=t)
