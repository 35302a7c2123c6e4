"""Maximum bipartite (b-)matching by Hopcroft-Karp, with König certificates and incremental repair.

The SPARe controller's phases 0 and 1 (HK-Fixed, HK-Free) ask whether every shard type
(left vertex) can be assigned to a surviving group (right vertex) that holds it within its top
``S`` stack entries: a maximum b-matching where group ``j`` takes up to ``capacity[j]`` types.
Along a failure sequence the graph changes by one group at a time, so
:class:`IncrementalMatching` repairs the current matching instead of solving again.

Graph convention
----------------
``graph`` is a scipy.sparse biadjacency matrix or array of shape ``(n_left, n_right)``: rows
are left vertices, columns right vertices. Any format is accepted (CSR, CSC and COO are read
directly; others go through ``tocoo()``); int32 and int64 indices are both fine. The graph is
its **sparsity structure**: every stored entry is an edge whatever its value, explicit zeros
included (as in ``scipy.sparse.csgraph.maximum_bipartite_matching``); call
``eliminate_zeros()`` on your matrix first if zeros should not be edges. Duplicate entries
are one edge.

References
----------
.. [1] J. E. Hopcroft and R. M. Karp, "An n^{5/2} algorithm for maximum matchings in
   bipartite graphs", SIAM J. Computing 2(4):225-231, 1973.
.. [2] D. König, "Gráfok és mátrixok", Matematikai és Fizikai Lapok 38:116-119, 1931
   (the vertex-cover certificate).
.. [3] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357 (RECTLR phases HK-Fixed and HK-Free).
"""
from __future__ import annotations

import threading

import numpy as np

from spare_core._native import load
from spare_core._results import fields_dict
from spare_core._validate import as_int, as_int_array
from spare_core.graph._validate import (CSR_TYPES, capacity_checked, capacity_raw, capacity_unit, csr_arrays,
                                        csr_graph, csr_graph_shared)

__all__ = ["Matching", "hopcroft_karp", "IncrementalMatching"]

_kern = load("_hk")
_tkern = load("_transversal")
_bkern = load("_bmatch")
# Cold-start strategy of the kernel: greedy in increasing degree order (see
# bench/tables/matching.py --ideas for what each start and the pruning buy); a warm start
# is repaired from the plain greedy.
_START = _kern.CONSTANTS["START_DEGREE_ORDER"]
_START_WARM = _kern.CONSTANTS["START_GREEDY"]


#: the values of ``method=``; "auto" chooses among the others (see :func:`hopcroft_karp`)
METHODS = ("auto", "hopcroft_karp", "pothen_fan", "push_relabel")
_T_METHOD = {"pothen_fan": _tkern.CONSTANTS["METHOD_POTHEN_FAN"],
             "push_relabel": _tkern.CONSTANTS["METHOD_PUSH_RELABEL"]}
# starts of the depth-first and push-relabel searches (measured in bench/tables/matching.py
# --catalogue --methods all; docs/matching.md): PF+'s own first phase is a greedy pass,
# push-relabel starts from a greedy pass (Karp-Sipser measured slower on most families)
_T_START = {"pothen_fan": _tkern.CONSTANTS["START_NONE"],
            "push_relabel": _tkern.CONSTANTS["START_GREEDY"]}

# method="auto" (the rules are in hopcroft_karp's docstring): PF+ below this many edges,
# push-relabel from it ...
_PF_MAX_EDGES = 30_000
# ... unless one side has fewer than this fraction of the other's vertices with an edge: then PF+
# from that side (from the right: the transposed graph), never push-relabel
# (bench/tables/matching.py --catalogue all --methods all; docs/matching.md)
_RIGHT_SIDE_RATIO = 0.95
_T_AUTO = _tkern.CONSTANTS["METHOD_AUTO"]
_T_NAME = {v: k for k, v in _T_METHOD.items()}
# what method="auto" reports when its greedy pass was already maximum (no search ran)
_T_NAME[_tkern.CONSTANTS["METHOD_GREEDY"]] = "greedy"
# ... and when a few right vertices it left free were matched by a breadth-first search over
# the graph as given (no transpose), from those right vertices
_T_NAME[_tkern.CONSTANTS["METHOD_GREEDY_REPAIR"]] = "greedy_repair"
_SIDE_PROBE = _tkern.CONSTANTS["SIDE_PROBE"]
# b-matchings (capacities other than 1) from scratch: _bmatch's greedy, then PF+ with native
# capacities (docs/matching.md, "b-matchings")
_B_METHOD = {"auto": _bkern.CONSTANTS["METHOD_AUTO"], "pothen_fan": _bkern.CONSTANTS["METHOD_POTHEN_FAN"]}
_B_NAME = {_bkern.CONSTANTS["METHOD_POTHEN_FAN"]: "pothen_fan", _bkern.CONSTANTS["METHOD_GREEDY"]: "greedy"}

_ONE = np.int64(1).tobytes()
# hopcroft_karp's one-call path (_tkern.solve_csr): method -> (kernel method, start)
_T_ONE_CALL = {"auto": (_T_AUTO, 0), **{m: (_T_METHOD[m], _T_START[m]) for m in _T_METHOD}}
_unit_cap = [np.ndarray((0,), np.int64, _ONE, strides=(0,))]


def _unit_capacity(n_right: int) -> np.ndarray:
    """Capacity 1 for ``n_right`` right vertices: read-only (a bytes buffer; numpy refuses to
    make it writeable) and stride 0, so no n_right int64 ones in memory; the last one is
    reused (a microsecond of the 10-20 us a solve on 1e3 edges costs)."""
    cap = _unit_cap[0]
    if cap.shape[0] != n_right:
        cap = np.ndarray((n_right,), np.int64, _ONE, strides=(0,))
        _unit_cap[0] = cap
    return cap


def _readonly(arr: np.ndarray) -> np.ndarray:
    view = arr.view()
    view.flags.writeable = False
    return view



class Matching:
    """A (b-)matching of a bipartite graph: the result of :func:`hopcroft_karp`.

    Attributes
    ----------
    match_left : ndarray of int64, shape (n_left,), read-only
        Right vertex matched to each left vertex, ``-1`` if unmatched.
    right_load : ndarray of int64, shape (n_right,), read-only
        Number of left vertices matched to each right vertex (``<= capacity``).
    capacity : ndarray of int64, shape (n_right,), read-only
        Capacity in force for each right vertex (0 for a disabled one).
    size : int
        Number of matched left vertices.
    phases : int
        Hopcroft-Karp phases (BFS + DFS rounds) the solve took.
    warm_kept : int or None
        Pairs adopted from ``warm_start`` (``None`` without a warm start).
    method : str
        The algorithm that ran: ``"hopcroft_karp"``, ``"pothen_fan"`` or ``"push_relabel"``
        (what ``method="auto"`` chose), ``"greedy"`` when ``method="auto"`` found its
        greedy pass already maximum and ran no search, or ``"greedy_repair"`` when that pass
        left only a few right vertices free (at most 1 in 1000 of those with an edge) and a
        short breadth-first search from them made it maximum. ``phases`` counts its phases
        (PF+: depth-first phases; push-relabel: global relabels; greedy: 0; greedy_repair:
        its breadth-first phases).
    searched_from : str
        ``"left"``, or ``"right"`` when PF+ or push-relabel searched from the right vertices
        (the same algorithm on the transposed graph), as the kernel's probe chose: fewer right
        than left vertices with an edge (see ``method`` of :func:`hopcroft_karp`), and for
        ``"greedy_repair"``.

    Notes
    -----
    The object keeps references to the graph's index arrays so that :meth:`vertex_cover`
    can build the certificate later. From :func:`hopcroft_karp` on a CSR graph with int32 or
    int64 indices these are the caller's own arrays (no copy is made); their fingerprint (a
    sum mod 2**64 of one term per position and value: splitmix64 mixing for ``indptr``, a
    position-keyed 32 x 32-bit product for ``indices``, so that any single edit and any
    swap of two entries changes it) is taken when they are validated, and
    :meth:`vertex_cover` raises ValueError if they were modified in place since.

    A Matching built by hand (the constructor is public) is validated as it is built:
    ``indptr``/``indices`` must be a well-formed CSR structure of shape
    ``(len(match_left), len(right_load))`` (private copies are kept), ``match_left`` in
    ``[-1, n_right)``, ``right_load`` its per-right-vertex count and ``capacity`` >= 0 of
    length ``n_right``. The result arrays are read-only; a caller who sets them writeable
    and edits them gets a ValueError from :meth:`vertex_cover` or as a ``warm_start``
    (their range is checked again there), never an out-of-bounds read.
    """

    __slots__ = ("match_left", "right_load", "capacity", "size", "phases", "warm_kept", "method",
                 "searched_from", "_indptr", "_indices", "_edge_off", "_fp")

    def __init__(self, match_left, right_load, capacity, indptr, indices, edge_off=None,
                 *, phases=0, warm_kept=None, size=None):
        match_left = as_int_array(match_left, "match_left", dtype=np.int64, min_value=-1)
        n_left = match_left.shape[0]
        right_load = as_int_array(right_load, "right_load", dtype=np.int64, min_value=0)
        n_right = right_load.shape[0]
        capacity = as_int_array(capacity, "capacity", dtype=np.int64, length=n_right, min_value=0)
        if n_left and match_left.max() >= n_right:
            raise ValueError(f"match_left must be < n_right = {n_right}, got {int(match_left.max())}")
        counted = np.bincount(match_left[match_left >= 0], minlength=n_right)
        if not np.array_equal(counted, right_load):
            j = int(np.flatnonzero(counted != right_load)[0])
            raise ValueError(f"right_load must count match_left per right vertex: right vertex {j} has "
                             f"{int(counted[j])} partners, right_load says {int(right_load[j])}")
        # private, validated copies: the kernel must never read a structure nobody checked
        indptr, indices, _ = csr_arrays(indptr, indices, n_left, n_right)
        if edge_off is not None:
            edge_off = np.ascontiguousarray(edge_off)
            if edge_off.dtype not in (np.dtype(np.uint8), np.dtype(np.bool_)) or edge_off.ndim != 1:
                raise TypeError(f"edge_off must be a 1-d uint8 or bool array, got {edge_off.dtype} {edge_off.shape}")
            if edge_off.shape[0] < indices.shape[0]:
                raise ValueError(f"edge_off must have at least {indices.shape[0]} entries (one per edge), "
                                 f"got {edge_off.shape[0]}")
            edge_off = edge_off.view(np.uint8).copy()
        self.match_left = _readonly(match_left.copy())
        self.right_load = _readonly(right_load.copy())
        self.capacity = _readonly(capacity.copy())
        self.size = int(np.count_nonzero(match_left >= 0)) if size is None else as_int(size, "size", min_value=0)
        self.phases = as_int(phases, "phases", min_value=0)
        self.warm_kept = warm_kept
        self.method = "hopcroft_karp"
        self.searched_from = "left"
        self._indptr = indptr
        self._indices = indices
        self._edge_off = edge_off
        self._fp = None

    @classmethod
    def _own(cls, match_left, right_load, capacity, indptr, indices, fingerprint, *, phases, warm_kept, size,
             method="hopcroft_karp", edge_off=None, searched_from="left"):
        """Wrap fresh int64 arrays without copying or viewing them (the fixed cost of a solve
        on 1e3 edges is a few microseconds). ``fingerprint``: that of ``indptr``/``indices``
        when they are the caller's arrays, None when private."""
        for arr in (match_left, right_load, capacity):
            arr.flags.writeable = False
        return cls._wrap(match_left, right_load, capacity, indptr, indices, fingerprint, phases, warm_kept, size,
                         method, searched_from, edge_off)

    @classmethod
    def _wrap(cls, match_left, right_load, capacity, indptr, indices, fingerprint, phases, warm_kept, size,
              method, searched_from, edge_off=None):
        """:meth:`_own` for arrays that are read-only already (as _transversal returns them)."""
        m = cls.__new__(cls)
        m.match_left, m.right_load, m.capacity = match_left, right_load, capacity
        m.size, m.phases, m.warm_kept, m.method, m.searched_from = size, phases, warm_kept, method, searched_from
        m._indptr, m._indices, m._edge_off, m._fp = indptr, indices, edge_off, fingerprint
        return m

    @property
    def n_left(self) -> int:
        """Number of left vertices."""
        return self.match_left.shape[0]

    @property
    def n_right(self) -> int:
        """Number of right vertices."""
        return self.right_load.shape[0]

    def unmatched_left(self) -> np.ndarray:
        """Indices of the unmatched left vertices, ascending."""
        return np.flatnonzero(self.match_left < 0)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(left, right)`` index arrays of the matched pairs, in left order."""
        left = np.flatnonzero(self.match_left >= 0)
        return left, self.match_left[left].copy()

    def vertex_cover(self) -> tuple[np.ndarray, np.ndarray]:
        """König's certificate of maximality: a minimum (capacity-weighted) vertex cover.

        Returns
        -------
        left_mask : ndarray of bool, shape (n_left,)
        right_mask : ndarray of bool, shape (n_right,)
            Every edge ``(i, j)`` has ``left_mask[i] or right_mask[j]`` (edges to disabled
            right vertices included: those have capacity 0 and sit in the cover for free).

        Raises
        ------
        ValueError
            The caller's graph arrays this matching refers to were modified in place after
            the solve.

        Notes
        -----
        Z is the set of vertices reachable from the unmatched left vertices by alternating
        paths; the cover is (left \\ Z) + (right & Z). For a maximum matching
        ``left_mask.sum() + capacity[right_mask].sum() == size`` [2]_, and any cover bounds
        every b-matching from above, so that equality proves maximality. For a matching that is
        not maximum (an :class:`IncrementalMatching` before :meth:`~IncrementalMatching.augment`)
        the cover is still a cover but heavier than ``size``. O(|E| + |V|)
        (a re-validation of the caller's index arrays included).

        References
        ----------
        .. [2] D. König, "Gráfok és mátrixok", Matematikai és Fizikai Lapok 38, 1931.

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> m = hopcroft_karp(sp.csr_array(np.array([[1, 1], [1, 0], [1, 0]])))
        >>> left, right = m.vertex_cover()
        >>> int(left.sum() + m.capacity[right].sum()) == m.size
        True
        """
        ml = _checked_matches(self.match_left, self.n_right, "match_left")
        if self.capacity.shape[0] != self.n_right:
            raise ValueError(f"capacity must have length n_right = {self.n_right}, got {self.capacity.shape[0]}")
        indptr, indices = self._indptr, self._indices
        if self._fp is not None:
            # the caller's own arrays: still in range and unchanged? The cover is then built
            # on the private copies this pass makes, so that another thread writing into the
            # caller's arrays meanwhile cannot send the kernel out of bounds
            try:
                indptr, indices, fp = _kern.csr_checked(indptr, indices, self.n_right, True)
            except ValueError as err:
                raise ValueError(f"the graph was modified after the matching was computed ({err})") from None
            if fp != self._fp:
                raise ValueError("the graph's indptr/indices were modified after the matching was computed: "
                                 "the certificate would not be about the graph that was solved")
        return _kern.koenig_cover(indptr, indices, self._edge_off, ml,
                                  np.ascontiguousarray(self.capacity, dtype=np.int64),
                                  np.ascontiguousarray(self.right_load, dtype=np.int64))

    def __repr__(self) -> str:
        kind = "matching" if np.all(self.capacity <= 1) else f"b-matching, capacity total {int(self.capacity.sum())}"
        return (f"Matching(size={self.size}, n_left={self.n_left}, n_right={self.n_right}, "
                f"unmatched_left={self.n_left - self.size}, {kind})")

    def to_dict(self) -> dict:
        """The public attributes as a JSON-serialisable dict (arrays as lists; the graph, which
        the matching only refers to, is left out)."""
        return fields_dict(self, ("match_left", "right_load", "capacity", "size", "phases", "warm_kept", "method",
                                 "searched_from"))


def _checked_matches(match_left, n_right: int, name: str) -> np.ndarray:
    """A private int64 copy of a Matching's ``match_left``, checked to lie in
    ``[-1, n_right)`` (its owner may have made it writeable and edited it)."""
    ml = np.array(match_left, dtype=np.int64, copy=True)
    if ml.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {ml.shape}")
    if ml.size and (ml.min() < -1 or ml.max() >= n_right):
        bad = int(ml[(ml < -1) | (ml >= n_right)][0])
        raise ValueError(f"{name} must lie in [-1, {n_right}) (-1 = unmatched), got {bad}: "
                         "was the matching's array edited?")
    return ml


def _warm_array(warm_start, n_left: int, n_right: int) -> np.ndarray:
    if isinstance(warm_start, Matching):
        if (warm_start.n_left, warm_start.n_right) != (n_left, n_right):
            raise ValueError(
                f"warm_start is a matching of a ({warm_start.n_left}, {warm_start.n_right}) graph, "
                f"the graph is ({n_left}, {n_right})"
            )
        return _checked_matches(warm_start.match_left, n_right, "warm_start.match_left")
    if isinstance(warm_start, IncrementalMatching):
        raise TypeError("warm_start must be a Matching or an array; use IncrementalMatching.matching")
    return as_int_array(warm_start, "warm_start", dtype=np.int64, length=n_left,
                        min_value=-1, max_value=n_right - 1)


def hopcroft_karp(graph, *, capacity=None, warm_start=None, method="auto") -> Matching:
    """Maximum bipartite matching (or b-matching) by Hopcroft-Karp.

    Parameters
    ----------
    graph : scipy.sparse matrix or array, shape (n_left, n_right)
        Biadjacency: rows are left vertices, columns right vertices; every stored entry is an
        edge, explicit zeros included (see the module notes). Not modified.
    capacity : array_like of int, shape (n_right,), optional
        Right vertex ``j`` takes up to ``capacity[j] >= 0`` left vertices (a group with that
        many stack slots). Default: 1 each (an ordinary matching). Solved on the original graph,
        never by expanding right vertices into slots.
    warm_start : Matching or array_like of int, shape (n_left,), optional
        A previous matching (``match_left`` form, -1 = unmatched), e.g. from before a group
        failed. Pairs that are still edges are kept, in left order, while their right vertex
        has spare capacity; pairs whose edge or capacity has gone (a removed column, a lowered
        capacity) are silently dropped and those left vertices re-matched by augmenting paths.
        Values must lie in ``[-1, n_right)``.
    method : {"auto", "hopcroft_karp", "pothen_fan", "push_relabel"}, default "auto"
        The algorithm (all return a maximum matching with its certificate; which maximum
        matching may differ). ``"pothen_fan"`` (PF+, depth-first with lookahead and fairness
        [4]_) and ``"push_relabel"`` (FIFO push-relabel with global relabels [4]_ [5]_) solve
        ordinary matchings (every capacity 1) from scratch, ``"pothen_fan"`` also
        b-matchings (with native capacities: a right vertex with spare capacity is free, a
        saturated one leads on to each of its partners); ``"hopcroft_karp"`` solves
        everything, warm starts included. ``"auto"``, from rules measured on every family of the
        benchmark catalogue (docs/matching.md): Hopcroft-Karp for a warm start; for
        capacities other than 1 a greedy pass (left vertices in order, first neighbour with
        spare capacity), returned as ``"greedy"`` when every left vertex with an edge to a
        right vertex of capacity > 0 is matched or no edge reaches spare capacity (König,
        as below), else PF+ with capacities from it; for ordinary matchings a greedy pass
        first (left vertices in order, first free neighbour), which is the answer when it
        matched every left vertex that has an edge or every right vertex that has one (that
        side is then a vertex cover of the size of the matching: König), reported as
        ``"greedy"``; else, starting from it, PF+
        searching from the right side when fewer right than 0.95 times the left vertices
        have an edge (searches from the smaller side mostly succeed; from
        the larger one most end unmatched after exploring a large alternating tree: the
        kernel counts both sides in the pass that starts the transpose), PF+ from the left
        when fewer left than 0.95 times the right vertices have an edge (a slot-expanded
        b-matching: most right vertices stay free, so the searches end at once, while
        push-relabel would relabel from every free right vertex); else PF+ below
        30,000 edges and push-relabel above. The named methods ``"pothen_fan"`` and
        ``"push_relabel"`` take the side from the same count. The choice is in
        :attr:`Matching.method`.

    Returns
    -------
    Matching
        A maximum matching; ``size`` is its cardinality and :meth:`Matching.vertex_cover` its
        König certificate.

    Raises
    ------
    TypeError
        ``graph`` not scipy.sparse; non-integer indices, capacities or warm start.
    ValueError
        Malformed graph (indices out of range, bad indptr, not 2-D), capacity of the wrong
        length or negative, warm start of the wrong length or out of range; an unknown
        ``method`` (before the graph is read), ``"push_relabel"`` with a capacity other
        than 1, ``"pothen_fan"``/``"push_relabel"`` with a warm start.

    Notes
    -----
    Hopcroft-Karp [1]_ with right capacities: a phase is a BFS from the free left vertices
    over alternating paths (a saturated right vertex leads to each of its partners) up to the
    first layer with spare capacity, then a DFS with current-arc pointers that flips a maximal
    set of vertex-disjoint shortest augmenting paths. O(sqrt(V) * E) time in the worst case
    (V = n_left + n_right, as for the slot-expanded graph); O(V + E) extra memory: a private
    copy of the graph (int64 indptr, int32 indices, written by the pass that validates it),
    per-vertex state (12-byte int32 records, plus a status byte and a free-list entry per
    left vertex, whose unused part holds the searches' queues: 12 bytes per right and 17 per
    left vertex), when the solve prunes, the transpose (4 bytes per edge and per right
    vertex), and for capacities of 2 or more the partner lists (8 bytes per left and 4 per
    right vertex). The int64 result arrays are made as that state is freed; docs/matching.md
    has the measured peaks. The GIL is released throughout. The kernels only ever read the
    private copy, so writing into the graph from another thread during a solve cannot make
    them read out of bounds (nor change the answer); the result refers to the caller's arrays
    (with their fingerprint, see :class:`Matching`) when no other Python thread runs, else
    to the copy.

    Between its greedy pass and its search (see ``method``), ``method="auto"`` tries a
    cheaper repair of an ordinary matching when the pass left at most 1 in 1000 of the right vertices that have an edge free:
    breadth-first phases from those vertices over the graph as given (one pass over the
    edges per layer, no transpose; the augmenting paths a phase finds are flipped when
    vertex-disjoint), until every right vertex with an edge is matched or a phase's layers
    stop growing (then no augmenting path exists), reported as ``"greedy_repair"``. After
    4 passes it gives up and the search runs from the matching it reached.

    A cold solve starts greedily, left vertices in increasing degree order (a degree-1
    vertex's only choice is safe, so those go first). When the right side is tight (no more
    free slots than left vertices), each takes the free neighbour that the fewest
    unprocessed left vertices compete for (counts kept exact, read off the transpose the
    pruning needs anyway): on family (b) of the benchmarks that start matches 450.7k of the
    454.4k instead of 429.0k. The kernel then marks every vertex
    that cannot reach spare capacity by an alternating path (one reverse BFS on a
    transpose): such vertices can never lie on an augmenting path, now or later, so the
    phases skip them, and unmatchable left vertices are not searched again in every phase
    as in textbook Hopcroft-Karp. This prune runs before the first phase when the greedy
    start left at least as many free left vertices as free right slots (then most of them
    end unmatched); otherwise, and again later, only once the phases since the last prune
    have scanned as much as a prune costs (|E| + |V| for the first, the measured cost of the
    previous one after that: a ski-rental rule). Either way its cost is at most about one
    pass over the graph per pass of search it follows, so the O(sqrt(V) E) bound holds.

    A warm start costs O(n_left + sum of the kept rows) to validate plus the searches from
    the vertices it left free (no pruning pass before the first phase): after one group
    fails, only its former partners are searched.

    A b-matching from scratch (``method="auto"`` or ``"pothen_fan"`` with capacities
    other than 1) runs a separate kernel on the graph itself, never the slot-expanded one:
    a greedy pass (left vertices in order, first neighbour with spare capacity; returned
    as it is when one side is then covered, see ``method``), then PF+ phases [4]_ in
    which a right vertex with spare capacity is free and a saturated one leads on to each
    of its partners (kept in linked lists through the left vertices; flipping a path
    replaces one list entry per right vertex on it). O(V * E) worst case like PF+; extra
    memory 8 bytes per right and 8 per left vertex for the greedy, and for the phases 4
    per right and about 24 per left vertex, of which only the pages the searches reach
    are touched.

    References
    ----------
    .. [1] J. E. Hopcroft and R. M. Karp, "An n^{5/2} algorithm for maximum matchings in
       bipartite graphs", SIAM J. Computing 2(4):225-231, 1973.
    .. [3] SPARe, arXiv:2603.00357: RECTLR phase 0 (HK-Fixed) and phase 1 (HK-Free).
    .. [4] I. S. Duff, K. Kaya and B. Uçar, "Design, implementation, and analysis of maximum
       transversal algorithms", ACM Trans. Math. Software 38(2), 2011.
    .. [5] K. Kaya, J. Langguth, F. Manne and B. Uçar, "Push-relabel based algorithms for the
       maximum transversal problem", Computers & Operations Research 40(5), 2013.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> g = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0], [1, 0, 0]]))
    >>> m = hopcroft_karp(g)
    >>> m.size, len(m.unmatched_left())     # left 1 and left 2 only fit right 0 and right 1
    (2, 1)
    >>> hopcroft_karp(g, capacity=[2, 1, 0]).size
    3
    """
    if (warm_start is None and type(graph) in CSR_TYPES and type(method) is str and method in _T_ONE_CALL
            and threading.active_count() == 1):
        # the common cases in one C call (validating copy, fingerprint, solve, read-only result
        # arrays): a third of the fixed cost on 1e3 edges was the Python steps between them.
        # None: not plain contiguous int32/int64 arrays (nothing read yet), the general path
        # below handles them. Other threads running: the general path, which checks snapshots
        # and keeps them (see csr_graph_shared)
        n_left, n_right = graph.shape
        ip, ix = graph.indptr, graph.indices
        got = 1 if capacity is None else None
        if capacity is not None and method in _B_METHOD:
            # b-matching: the capacities' check and copy too; 1 when every one is 1 (only
            # the capacities read: the unit-capacity call below takes the graph)
            got = _bkern.solve_csr(ip, ix, n_left, n_right, capacity, _B_METHOD[method])
            if got is not None and type(got) is not int:
                return Matching._wrap(got.match_left, got.right_load, got.capacity, ip, ix, got.fingerprint,
                                      got.phases, None, got.size, _B_NAME[got.method], "left")
        if got is not None:
            code, start = _T_ONE_CALL[method]
            got = _tkern.solve_csr(ip, ix, n_left, n_right, code, start, _SIDE_PROBE, _RIGHT_SIDE_RATIO,
                                   _PF_MAX_EDGES)
            if got is not None:
                return Matching._wrap(got.match_left, got.right_load, _unit_capacity(n_right), ip, ix,
                                      got.fingerprint, got.phases, None, got.size, _T_NAME[got.method],
                                      "right" if got.from_right else "left")
    if method not in METHODS:    # options before any scan of the graph
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if method in _T_METHOD and warm_start is not None:
        raise ValueError(f"warm_start needs method 'hopcroft_karp' or 'auto', got method={method!r}")
    indptr, indices, n_left, n_right, keep_ptr, keep_idx, fp = csr_graph_shared(graph)
    if capacity is None:
        cap, unit = None, True
    elif warm_start is None and method in _B_METHOD:
        # b-matching from scratch: the kernel checks and copies the capacities itself (one
        # C pass instead of capacity_unit's) and solves unless every one is 1
        b = _bkern.solve(indptr, indices, n_right, capacity_raw(capacity, n_right), _B_METHOD[method])
        if b is not None:
            return Matching._wrap(b.match_left, b.right_load, b.capacity, keep_ptr, keep_idx, fp, b.phases, None,
                                  b.size, _B_NAME[b.method], "left")
        cap, unit = None, True
    else:
        cap, unit = capacity_unit(capacity, n_right)
    if method == "push_relabel" and not unit:
        raise ValueError(f"method={method!r} solves ordinary matchings (every capacity 1); "
                         f"use method='hopcroft_karp' or 'pothen_fan' for capacities other than 1")
    if method == "auto" and unit and warm_start is None:
        method = "transversal"
    if method == "transversal" or method in _T_METHOD:
        code = _T_AUTO if method == "transversal" else _T_METHOD[method]
        t = _tkern.solve(indptr, indices, n_right, code, _T_START.get(method, 0), _SIDE_PROBE, _RIGHT_SIDE_RATIO,
                         _PF_MAX_EDGES)
        return Matching._wrap(t.match_left, t.right_load, _unit_capacity(n_right), keep_ptr, keep_idx, fp, t.phases,
                              None, t.size, _T_NAME[t.method], "right" if t.from_right else "left")
    warm = None if warm_start is None else _warm_array(warm_start, n_left, n_right)
    # unit capacities: no array of ones alive during the solve (lower peak memory)
    k = _kern.HKKernel(indptr, indices, cap, False, n_right)
    kept = None
    if warm is None:
        k.solve(_START, True)
    else:
        # repair: only the vertices the warm start left free are searched
        kept = int(k.seed(warm))
        k.solve(_START_WARM, True)
    phases, size = k.phases, k.size
    # int64 copies of the records, each made as the kernel frees what it no longer needs
    match_left, load = k.result(True)
    del k
    if cap is None:
        # read-only (a bytes buffer) and stride 0: no n_right int64 ones in memory, and a
        # microsecond instead of np.broadcast_to's ten
        cap = np.ndarray((n_right,), np.int64, _ONE, strides=(0,))
    return Matching._own(match_left, load, cap, keep_ptr, keep_idx, fp, phases=phases, warm_kept=kept, size=size)


class IncrementalMatching:
    """A maximum (b-)matching kept maximum along a sequence of graph changes.

    The stateful form of :func:`hopcroft_karp` for simulators that fail and restore right
    vertices (groups) one at a time, such as the SPARe controller (RECTLR [3]_). It owns a
    private copy of the graph and the current matching. Changes (:meth:`disable_right`,
    :meth:`enable_right`, :meth:`set_capacity`, :meth:`set_capacities`, :meth:`disable_edge`,
    :meth:`enable_edge`) unmatch what they invalidate at once and queue those left vertices;
    :meth:`augment` then restores maximality by Hopcroft-Karp phases from the queued vertices
    only.

    Parameters
    ----------
    graph : scipy.sparse matrix or array, shape (n_left, n_right)
        Biadjacency (e.g. N shard types x N groups, r stored entries per row); every stored
        entry is an edge, explicit zeros included. Copied; later changes to it are not seen.
    capacity : array_like of int, shape (n_right,), optional
        Capacity of each right vertex (the stack depth S of each group); default 1.

    Attributes
    ----------
    n_left, n_right : int
    size : int
        Current number of matched left vertices (maximum right after :meth:`augment`).
    match_left : ndarray of int32, read-only live view
        Right vertex of each left vertex, -1 = unmatched. No copy (a strided view into the
        kernel's packed int32 per-vertex records): it changes as the matching changes; copy
        it to keep a state (:attr:`matching` gives int64 copies).
    right_load : ndarray of int32, read-only
        Left vertices matched to each right vertex (computed on access, O(n_right): the
        kernel keeps each right vertex's spare count, not its load).
    capacity : ndarray of int64, read-only live view
        Capacity in force (0 while a right vertex is disabled), as set (the kernel itself
        works with ``min(capacity, n_left)``, which allows the same matchings).
    enabled : ndarray of bool, read-only live view
    work : int
        Edges and partner entries scanned so far: a machine-independent cost counter.

    Notes
    -----
    Cost per call: ``disable_right(j)`` O(load of j); ``set_capacity`` O(1 + unmatched);
    ``disable_edge(i, j)`` O(deg i); ``augment()`` the work of its augmenting searches,
    never a pass over the graph: scratch arrays are validated by epoch stamps rather than
    cleared. A left vertex whose search finds nothing is parked and not searched again
    until a right vertex gains a free slot (a capacity grows, a right vertex or an edge comes
    back, or a matched edge is disabled; those calls re-queue the parked vertices, O(number
    parked)). If one call's searches grow as large as the graph, the kernel prunes the
    vertices that cannot reach spare capacity (about one more pass, so at most doubling that
    call's cost; a transpose of the graph, 4 bytes per edge, is then kept for later calls).
    Between a change and :meth:`augment` the matching is valid but possibly not maximum.

    Not thread-safe: :meth:`augment` releases the GIL, so one object must not be changed
    from two threads at once (separate objects are independent).

    Only left vertices can be queried for being unmatched (:meth:`unmatched_left`, O(number
    unmatched)); left vertices and the graph's edge set are fixed at construction, edges can
    only be switched off and on.

    References
    ----------
    .. [1] J. E. Hopcroft and R. M. Karp, SIAM J. Computing 2(4):225-231, 1973.
    .. [3] SPARe, arXiv:2603.00357.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> n, r = 6, 2   # 6 shard types, each held by 2 cyclically consecutive groups
    >>> rows = np.repeat(np.arange(n), r); cols = (rows + np.tile(np.arange(r), n)) % n
    >>> im = IncrementalMatching(sp.csr_array((np.ones(n * r), (rows, cols)), shape=(n, n)))
    >>> im.size
    6
    >>> im.disable_right(3); im.augment()
    5
    >>> im.set_capacity(4, 2); im.augment()
    6
    """

    def __init__(self, graph, *, capacity=None):
        indptr, indices, n_left, n_right = csr_graph(graph)
        cap = capacity_checked(capacity, n_right)
        self._k = k = _kern.HKKernel(indptr, indices, cap, True)
        self._indptr = indptr
        self._indices = indices
        self._nl = n_left
        self._nr = n_right
        k.solve(_START, True)
        self.match_left = _readonly(k.match_left)
        self.capacity = _readonly(k.cap_in_force)
        self.enabled = _readonly(k.enabled.view(np.bool_))

    # -- cheap reads -------------------------------------------------------------------
    @property
    def right_load(self) -> np.ndarray:
        """Left vertices matched to each right vertex: int32, a new read-only array (O(n_right))."""
        return _readonly(self._k.load)

    @property
    def n_left(self) -> int:
        return self._nl

    @property
    def n_right(self) -> int:
        return self._nr

    @property
    def size(self) -> int:
        return self._k.size

    @property
    def work(self) -> int:
        return self._k.work

    def unmatched_left(self) -> np.ndarray:
        """Unmatched left vertices, ascending (O(number unmatched), no scan of all vertices)."""
        out = self._k.free_left()
        out.sort()
        return out

    @property
    def matching(self) -> Matching:
        """A :class:`Matching` snapshot (copies of the O(V) arrays; graph shared, read-only)."""
        off = self._k.edge_off
        off = off[: self._indices.shape[0]].copy() if off is not None and off.any() else None
        size = self._k.size
        return Matching._own(np.array(self._k.match_left, dtype=np.int64), np.array(self._k.load, dtype=np.int64),
                             self._k.cap_in_force.copy(), self._indptr, self._indices, None, phases=0,
                             warm_kept=None, size=size, edge_off=off)

    # -- changes -----------------------------------------------------------------------
    def _right(self, j) -> int:
        if type(j) is int and 0 <= j < self._nr:
            return j
        return as_int(j, "j", min_value=0, max_value=self._nr - 1) if self._nr else _no_vertex("right", j)

    def _left(self, i) -> int:
        if type(i) is int and 0 <= i < self._nl:
            return i
        return as_int(i, "i", min_value=0, max_value=self._nl - 1) if self._nl else _no_vertex("left", i)

    def disable_right(self, j) -> None:
        """Right vertex ``j`` fails: its partners become unmatched and queued. O(load of j).

        Idempotent. Its capacity setting is remembered for :meth:`enable_right`.
        """
        self._k.disable_right(self._right(j))

    def enable_right(self, j) -> None:
        """Right vertex ``j`` returns with its remembered capacity. Idempotent."""
        self._k.enable_right(self._right(j))

    def set_capacity(self, j, c) -> None:
        """Set right vertex ``j``'s capacity to ``c >= 0`` (kept while ``j`` is disabled).

        Lowering it below the current load unmatches the most recently matched partners.
        """
        j = self._right(j)
        c = c if type(c) is int and 0 <= c < 2**62 else as_int(c, "c", min_value=0, max_value=2**62)
        self._k.set_capacity(j, c)

    def set_capacities(self, capacity) -> None:
        """Set every right vertex's capacity at once (one validated array, one kernel call).

        ``capacity`` may also be a scalar int, applied to all (raise the stack depth S for all
        groups in one call).
        """
        if np.ndim(capacity) == 0:
            c = as_int(capacity, "capacity", min_value=0, max_value=2**62)
            caps = np.full(self._nr, c, dtype=np.int64)
        else:
            caps = as_int_array(capacity, "capacity", dtype=np.int64, length=self._nr, min_value=0)
        self._k.set_capacities(caps)

    def disable_edge(self, i, j) -> None:
        """Remove edge ``(i, j)`` (all stored copies) until :meth:`enable_edge`. O(deg i).

        Raises ValueError if ``(i, j)`` is not an edge of the graph.
        """
        i, j = self._left(i), self._right(j)
        if not self._k.set_edge(i, j, False):
            raise ValueError(f"({i}, {j}) is not an edge of the graph")

    def enable_edge(self, i, j) -> None:
        """Restore edge ``(i, j)`` removed by :meth:`disable_edge`. O(deg i)."""
        i, j = self._left(i), self._right(j)
        if not self._k.set_edge(i, j, True):
            raise ValueError(f"({i}, {j}) is not an edge of the graph")

    def augment(self) -> int:
        """Restore maximality by augmenting paths from the queued vertices; return ``size``."""
        return self._k.augment()

    def __repr__(self) -> str:
        n_off = int(self._nr - np.count_nonzero(self.enabled))
        return (f"IncrementalMatching(size={self.size}, n_left={self._nl}, n_right={self._nr}, "
                f"disabled_right={n_off}, queued={self._k.n_pending})")


def _no_vertex(side: str, value):
    raise ValueError(f"the graph has no {side} vertices, got index {value!r}")
