"""Stacked data-parallel layouts: which shard types each group holds, in which order.

SPARe [1]_ gives each of N data-parallel groups a *stack* of r different data shards.
Group g holds the shard types ``placement[g, 0], ..., placement[g, r-1]`` (depth 0 is
the top of the stack, computed first). Three families are provided:

- cyclic *consecutive* stacks (the paper's default): group g holds D_g, ..., D_{g+r-1};
- cyclic stacks with arbitrary offsets ``o_1..o_r``: group g holds D_{(g+o_i) mod N};
  with *Sidon-type* offsets (pairwise-distinct differences mod N, see
  :func:`sidon_offsets`) two shard types share at most one holder group, which is the
  independence the closed form for the endurable failures assumes;
- *rack-aware* stacks (:meth:`StackedLayout.rack_aware`): the same cyclic stacks laid
  along an order of the groups that interleaves the failure domains (racks, leaf switches,
  power domains), so that a shard type's r holders sit in r distinct domains whenever the
  domain sizes allow it;
- any custom (N, r) placement array (random, hand-made), validated.

Shard types are numbered 0..N-1, as many types as groups. In every family except custom
placements each stack depth is a permutation of the types (each type has exactly r
holders, one per depth), the invariant RECTLR's Phase 0 starts from.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357.
.. [2] J. Singer, "A theorem in finite projective geometry and some applications to
   number theory", Trans. AMS 43 (1938) - perfect difference sets (Sidon sets mod N).
"""
from __future__ import annotations

import numpy as np

from ._difference_sets import sidon_windows
from ..._validate import as_generator, as_int, as_int_array, check_choice
from ...topology import FailureDomains

#: the most groups a layout may have: groups are vertices of the matching graph, int32 ids
#: in its kernel (a larger count was an OverflowError deep in numpy)
MAX_GROUPS = 2**31 - 2

__all__ = ["StackedLayout", "sidon_offsets", "difference_multiplicity", "MAX_GROUPS"]


def check_sizes(n_groups, redundancy):
    """Validate a layout's size: ``(n_groups, redundancy)`` as ints with 1 <= r <= N.

    Shared by every constructor of a stacked layout and by the analytic models of one, so
    that the same sizes give the same error everywhere.

    Raises
    ------
    TypeError, ValueError
        Not integers, N < 1, N > :data:`MAX_GROUPS`, r < 1, or r > N (a stack holds distinct shard types).
    """
    n = as_int(n_groups, "n_groups", min_value=1, max_value=MAX_GROUPS)
    r = as_int(redundancy, "redundancy", min_value=1)
    if r > n:
        raise ValueError(f"redundancy must be <= n_groups (a stack holds distinct shard types), got {r} > {n}")
    return n, r


def _check_offsets(offsets, n, r=None):
    off = as_int_array(offsets, "offsets", length=r, min_value=0, max_value=n - 1)
    if np.unique(off).size != off.size:
        raise ValueError(f"offsets must be distinct modulo n_groups={n}, got {off.tolist()}")
    return off


def _difference_counts(off: np.ndarray, n: int) -> np.ndarray:
    """Number of ordered offset pairs (i != j) with o_i - o_j = d (mod n), for every d."""
    diff = (off[:, None] - off[None, :]) % n
    mask = ~np.eye(off.size, dtype=bool)
    return np.bincount(diff[mask], minlength=n)


def difference_multiplicity(offsets, n_groups) -> int:
    """Largest number of holder groups two distinct shard types share under cyclic offsets.

    Types a and b are both held by group g exactly when a - g and b - g are offsets, so
    the number of shared holders of a and b is the number of ordered offset pairs whose
    difference is b - a (mod N). The maximum over b != a is 1 exactly for Sidon-type
    offsets, and r - 1 for consecutive stacks with 2 <= r < N (N when r = N).

    Parameters
    ----------
    offsets : array_like of int
        Distinct offsets in [0, n_groups).
    n_groups : int
        N, the number of groups (and of shard types).

    Returns
    -------
    int
        The maximum multiplicity (0 when r = 1: no two types share a holder).

    Examples
    --------
    >>> difference_multiplicity([0, 1, 2, 3], 20)
    3
    >>> difference_multiplicity([0, 1, 3, 7], 20)
    1
    """
    n = as_int(n_groups, "n_groups", min_value=1)
    off = _check_offsets(offsets, n)
    if off.size < 2:
        return 0
    return int(_difference_counts(off, n).max())


def _collision_increase(cands: np.ndarray, others: np.ndarray, counts: np.ndarray, n: int) -> np.ndarray:
    """For each candidate x: increase of sum_d m_d (m_d - 1) when x joins ``others``.

    ``counts`` are the difference counts m_d of ``others``; x adds the 2(len(others))
    differences +-(x - o). The objective is 0 exactly for Sidon sets and penalises a
    difference repeated many times quadratically, so the search also spreads unavoidable
    repeats evenly (keeping the largest multiplicity low).
    """
    plus = (cands[:, None] - others[None, :]) % n
    minus = (others[None, :] - cands[:, None]) % n
    allv = np.concatenate([plus, minus], axis=1)
    cross = 2 * counts[allv].sum(axis=1)
    rows = np.repeat(np.arange(cands.size), allv.shape[1])
    codes, mult = np.unique(rows * n + allv.ravel(), return_counts=True)
    internal = np.bincount(codes // n, weights=mult * (mult - 1), minlength=cands.size)
    return cross + internal.astype(np.int64)


def sidon_offsets(n_groups, redundancy, *, seed=0, max_iter: int = 1000, max_span=None, distinct_mod=None) -> np.ndarray:
    """Offsets whose pairwise differences mod N are as distinct as possible (Sidon-type).

    A Sidon set modulo N (all r(r-1) ordered differences distinct) exists only when
    r(r-1) <= N-1; perfect ones (Singer difference sets [2]_) only for special N. When
    r(r-1) <= N-1 this first cuts windows of r elements out of the Singer and Bose
    difference sets for primes q near r (and their multiples t*B mod q^2+q+1 or q^2-1),
    keeps those whose differences are distinct mod N, and returns one of them chosen with
    ``seed`` (:func:`spare_core.strategies.spare._difference_sets.sidon_windows`). When there is none, it
    runs a seeded local search on the number of colliding difference pairs
    sum_d m_d (m_d - 1) (m_d: ordered offset pairs with difference d): start from a
    random set, then repeatedly re-place a random offset among those with a repeated
    difference at the residue that adds the fewest collisions (ties broken at random,
    sideways moves allowed), keeping the best set by (largest multiplicity, collisions).
    It stops as soon as all differences are distinct. When that is impossible (or not
    found within ``max_iter`` moves) it returns the best set seen; check the result with
    :func:`difference_multiplicity`.

    With ``max_span`` every offset lies in [0, max_span] (windows and search alike): the
    rack-aware stacks need their offsets in a short span
    (:meth:`StackedLayout.rack_aware`); a Sidon set in a span w needs r(r-1)/2 <= w. With
    ``distinct_mod`` = b the offsets also lie in r distinct classes modulo b (rack-aware
    stacks on equal domains): constructed windows are kept only if they do, and the search
    moves an offset only to a free class.

    Parameters
    ----------
    n_groups : int
        N >= 1.
    redundancy : int
        r, 1 <= r <= N.
    seed : int, SeedSequence or Generator
        Which constructed window is returned, or the randomness of the search
        (reproducible).
    max_iter : int
        Maximum number of local-search moves.
    max_span : int, optional
        Largest allowed offset, r - 1 <= max_span <= N - 1 (default N - 1: no limit).
    distinct_mod : int, optional
        b with r <= b <= N and b dividing N: no two offsets congruent modulo b.

    Returns
    -------
    ndarray of int64, shape (r,)
        Sorted distinct offsets in [0, max_span] with offsets[0] == 0.

    Notes
    -----
    Measured here (seed 0, default max_iter): strict Sidon sets from the constructions for
    N = 600 and N = 1000 at every r <= 20 and for N = 200 up to r = 13, each in 0.2 s or
    less; N = 200, r = 14 (182 <= 199 differences, but no window found) falls back to the
    local search (multiplicity 2, ~1 s; each move costs O(N r log r)). For N = 200 and
    r >= 15 no Sidon set exists (r(r-1) > N-1): the search reaches multiplicity 2 up to
    r = 17 and 3 beyond.

    Examples
    --------
    >>> off = sidon_offsets(1000, 10, seed=1)
    >>> difference_multiplicity(off, 1000)
    1
    """
    n, r = check_sizes(n_groups, redundancy)
    max_iter = as_int(max_iter, "max_iter", min_value=0)
    span = n - 1 if max_span is None else as_int(max_span, "max_span", min_value=r - 1, max_value=n - 1)
    mod = None
    if distinct_mod is not None:
        mod = as_int(distinct_mod, "distinct_mod", min_value=r, max_value=n)
        if n % mod:
            raise ValueError(f"distinct_mod must divide n_groups={n}, got {mod}")
    rng = as_generator(seed)
    if r <= 2 or r == n:
        return np.arange(r, dtype=np.int64)  # already Sidon-type when r <= 2 < N (and r <= b classes)
    if r * (r - 1) <= n - 1 and r * (r - 1) // 2 <= span:
        windows = sidon_windows(n, r, max_span=span)
        if mod is not None and windows.shape[0]:
            windows = windows[np.array([np.unique(w % mod).size == r for w in windows])]
        if windows.shape[0]:
            return windows[int(rng.integers(windows.shape[0]))].copy()
    all_res = np.arange(span + 1, dtype=np.int64)  # candidate offsets (all residues without max_span)

    def allowed(others):
        """Candidates for one more offset: not taken, and in a free class modulo ``mod``."""
        free = np.ones(span + 1, dtype=bool)
        free[others] = False
        if mod is not None:
            free &= ~np.isin(all_res % mod, others % mod)
        return all_res[free]

    def score(off):
        c = _difference_counts(off, n)
        return int(c.max()), int((c * (c - 1)).sum())

    if mod is None:
        off = rng.choice(span + 1, size=r, replace=False).astype(np.int64)
    else:
        off = np.zeros(0, dtype=np.int64)
        for _ in range(r):
            off = np.append(off, rng.choice(allowed(off)))
    best, best_score = off.copy(), score(off)
    for _ in range(max_iter):
        if best_score[0] <= 1:
            break
        counts = _difference_counts(off, n)
        diff = (off[:, None] - off[None, :]) % n
        # offsets with a difference that another pair also has; move one of them at random
        bad = (counts[diff] > 1).sum(axis=1) - (counts[0] > 1)
        i = int(rng.choice(np.flatnonzero(bad > 0)))
        others = np.delete(off, i)
        cands = allowed(others)
        inc = _collision_increase(cands, others, _difference_counts(others, n), n)
        off = np.append(others, rng.choice(cands[inc == inc.min()]))
        sc = score(off)
        if sc < best_score:
            best, best_score = off.copy(), sc
    best = np.sort((best - best.min()) % n)
    return best


def _rank_in_parent(parent_labels: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """For each domain d of ``labels``: its rank (by label) among the domains with its parent."""
    first = np.unique(labels, return_index=True)[1]
    parent = parent_labels[first]
    order = np.lexsort((np.arange(first.size), parent))
    srt = parent[order]
    rank = np.empty(first.size, dtype=np.int64)
    rank[order] = np.arange(first.size) - np.searchsorted(srt, srt, side="left")
    return rank


class StackedLayout:
    """The (N, r) placement of shard types on group stacks.

    Parameters
    ----------
    n_groups : int
        N, the number of data-parallel groups (and of shard types), N >= 1.
    redundancy : int
        r, the stack height: every group holds r distinct shard types, 1 <= r <= N.
    offsets : array_like of int, optional
        Cyclic offsets o_1..o_r (distinct, in [0, N)): group g holds D_{(g + o_i) mod N}
        at depth i-1. Default ``0..r-1``: the consecutive cyclic stacks of SPARe [1]_.

    Attributes
    ----------
    n_groups, redundancy : int
    offsets : ndarray or None
        The cyclic offsets; None for a custom placement.
    group_order : ndarray of int64 or None
        The cyclic order the offsets apply along: the group at position p holds the types
        (p + o_i) mod N. ``arange(N)`` for the offset layouts, the domain-interleaving order
        for rack-aware ones, None for a custom placement.
    placement : ndarray of int64, shape (N, r), read-only
        ``placement[g, i]`` is the shard type at initial depth i of group g.
    kind : str
        "consecutive", "offsets", "rack-aware" or "custom".
    domains : FailureDomains or None
        The failure domains a rack-aware layout was built for (else None).
    domain_level : int or None
        The level of ``domains`` whose domains the holders of a type avoid sharing (see
        :meth:`rack_aware`).

    Raises
    ------
    TypeError
        Non-integer sizes or offsets.
    ValueError
        r < 1, r > N, offsets of the wrong length, out of range or repeated.

    See Also
    --------
    StackedLayout.from_placement : any validated (N, r) placement.
    StackedLayout.sidon : cyclic stacks with Sidon-type offsets.

    Examples
    --------
    >>> lay = StackedLayout(5, 3)
    >>> lay.placement[4].tolist()
    [4, 0, 1]
    >>> lay
    StackedLayout(n_groups=5, redundancy=3, kind='consecutive', max_shared_holders=2)
    """

    def __init__(self, n_groups: int, redundancy: int, offsets: object = None) -> None:
        n, r = check_sizes(n_groups, redundancy)
        if offsets is None:
            off = np.arange(r, dtype=np.int64)
            kind = "consecutive"
        else:
            off = _check_offsets(offsets, n, r)
            kind = "consecutive" if np.array_equal(off, np.arange(r)) else "offsets"
        placement = (np.arange(n, dtype=np.int64)[:, None] + off[None, :]) % n
        self._init(placement, off, kind, np.arange(n, dtype=np.int64))

    def _init(self, placement, offsets, kind, order=None, domains=None, level=None):
        self._placement = placement
        self._placement.flags.writeable = False
        self._offsets = offsets
        self._order = order
        for a in (offsets, order):
            if a is not None:
                a.flags.writeable = False
        self.n_groups, self.redundancy = placement.shape
        self.kind = kind
        self.domains = domains
        self.domain_level = level
        self._holders = None
        self._max_shared = None

    @classmethod
    def from_placement(cls, placement) -> "StackedLayout":
        """A layout from any (N, r) placement array of shard types.

        Parameters
        ----------
        placement : array_like of int, shape (N, r)
            ``placement[g, i]``: the shard type at initial depth i of group g. Each row must
            hold r distinct types in [0, N); every type must be held by at least one group.
            The array is copied.

        Returns
        -------
        StackedLayout
            ``kind == "custom"``.

        Raises
        ------
        TypeError
            Non-integer entries.
        ValueError
            Not 2-d, r > N, r < 1, a type out of range, a repeated type in a row, or a
            type held by no group.

        Examples
        --------
        >>> StackedLayout.from_placement([[0, 1], [1, 2], [2, 0]]).kind
        'custom'
        """
        arr = as_int_array(placement, "placement", ndim=2)
        n, r = arr.shape
        if n < 1 or r < 1:
            raise ValueError(f"placement must have at least one group and one column, got shape {arr.shape}")
        check_sizes(n, r)
        if arr.min() < 0 or arr.max() >= n:
            raise ValueError(f"placement entries must be shard types in [0, {n}), got range [{arr.min()}, {arr.max()}]")
        srt = np.sort(arr, axis=1)
        dup = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
        if dup.size:
            raise ValueError(f"each group must hold r distinct shard types; group {dup[0]} holds {arr[dup[0]].tolist()}")
        held = np.bincount(arr.ravel(), minlength=n)
        missing = np.flatnonzero(held == 0)
        if missing.size:
            raise ValueError(f"every shard type must be held by at least one group; type {missing[0]} is held by none")
        self = cls.__new__(cls)
        self._init(arr, None, "custom")
        return self

    @classmethod
    def sidon(cls, n_groups, redundancy, *, seed=0, max_iter: int = 1000) -> "StackedLayout":
        """Cyclic stacks with Sidon-type offsets from :func:`sidon_offsets` (same parameters)."""
        return cls(n_groups, redundancy, sidon_offsets(n_groups, redundancy, seed=seed, max_iter=max_iter))

    @classmethod
    def rack_aware(cls, domains: object, redundancy: int, *, offsets: str = "consecutive", seed: object = 0,
                   max_iter: int = 1000) -> "StackedLayout":
        """Cyclic stacks whose holders of each shard type sit in distinct failure domains.

        The stacks are cyclic (consecutive or Sidon-type offsets) along an order of the
        groups that interleaves the domains, so every stack depth stays a permutation of
        the types and RECTLR runs unchanged; only which physical group sits where in the
        cycle changes.

        **When distinct domains are possible.** Each group holds r types and a domain of
        c groups holds c r type slots, so giving every type at most one holder in that
        domain needs c r <= N. Hence a placement with the r holders of every type in r
        distinct domains exists if and only if every domain has at most floor(N / r)
        groups (which implies at least r domains); this method finds one whenever it
        exists. With nested levels (``domains`` coarsest first) it uses the *coarsest* level
        where it exists (distinct power domains imply distinct racks); coarser levels that
        are too unbalanced are spread by interleaving (best effort, not guaranteed).

        **When they are not** (r above the number of domains, or one domain larger than
        floor(N / r)): the finest level is used and each type gets at most
        m = ceil(r / floor(N / c_max)) holders in any one domain (c_max the largest domain
        size), against the lower bound ceil(c_max r / N) every placement obeys.

        Construction. Let Q = c_max and b = floor(N / Q). The cycle is cut into Q blocks of
        b or b + 1 positions; the groups, domain by domain (largest domains first, then
        round-robin over the coarser levels), fill the blocks column by column (position j
        of every block, then position j + 1, ...). A domain then has at most one group per
        block and any two of its groups are at least b positions apart along the cycle, so
        any r positions within a span of m b hold at most m groups of one domain. The
        offsets are kept inside that span: 0..r-1 for ``"consecutive"``, or
        :func:`sidon_offsets` with ``max_span = m b - 1`` for ``"sidon"`` (strict Sidon where
        a Sidon set fits in the span, r(r-1)/2 <= m b - 1, else the fewest repeated
        differences found). When the domains are equal (N = Q b, every domain of Q groups)
        domain k is exactly the positions congruent to k modulo b, and Sidon offsets need only
        lie in distinct classes modulo b (``distinct_mod=b``), at any span.

        Parameters
        ----------
        domains : FailureDomains or array_like of int
            The group -> domain map (array_like: one level, or levels coarsest first, as
            :class:`~spare_core.topology.FailureDomains` takes).
        redundancy : int
            r, 1 <= r <= N.
        offsets : {"consecutive", "sidon"}
            The cyclic offsets along the interleaved order.
        seed, max_iter
            As :func:`sidon_offsets` (used only for ``"sidon"``).

        Returns
        -------
        StackedLayout
            ``kind == "rack-aware"``; ``group_order`` is the interleaved order,
            ``domain_level`` the level whose domains the holders avoid sharing.

        Raises
        ------
        TypeError, ValueError
            Bad domains (see :class:`~spare_core.topology.FailureDomains`), r out of range,
            or an unknown ``offsets``.

        Notes
        -----
        Under independent group failures a rack-aware layout is the consecutive (or Sidon)
        layout with the groups renamed, so its endurance is the same
        (:func:`spare_core.strategies.spare.analytic.endurable_failures_consecutive` still holds exactly for
        consecutive offsets); what changes is what a whole-domain failure does
        (:mod:`spare_core.strategies.spare.domain_endurance`). O(N log N) plus the offset search.

        Examples
        --------
        >>> from spare_core.topology import FailureDomains
        >>> fd = FailureDomains.contiguous(12, 4)            # 3 racks of 4 groups
        >>> lay = StackedLayout.rack_aware(fd, 3)
        >>> racks = fd.labels[0][lay.holders()[1].reshape(12, 3)]
        >>> bool((np.sort(racks, axis=1) == [0, 1, 2]).all())   # every type on 3 racks
        True
        >>> StackedLayout(12, 3).placement[0].tolist()        # consecutive: all in rack 0
        [0, 1, 2]
        """
        if not isinstance(domains, FailureDomains):
            domains = FailureDomains(domains)
        n, r = check_sizes(domains.n_groups, redundancy)
        check_choice(offsets, "offsets", {"consecutive", "sidon"})
        lab = domains.labels
        level = next((i for i in range(domains.n_levels) if domains.sizes(i).max() * r <= n), domains.n_levels - 1)
        colour = lab[level]
        sizes = np.bincount(colour)
        q = int(sizes.max())
        b = n // q
        m = -(-r // b)
        span = min(m * b - 1, n - 1)
        # Colours ordered by size (largest first: a domain of exactly q groups then fills whole
        # columns, which keeps its groups b apart across the column change), then round-robin
        # over the coarser levels: next the colour's rank within its parent, then the parent's
        # rank within its own parent, ..., then the coarsest label, so that neighbouring
        # colours differ at the coarsest level and, within it, at the next one.
        first = np.unique(colour, return_index=True)[1]
        keys = [np.arange(sizes.size), lab[0][first]]  # np.lexsort: the last key is the primary one
        for i in range(1, level + 1):
            keys.append(_rank_in_parent(lab[i - 1], lab[i])[lab[i][first]])
        keys.append(-sizes)
        colour_rank = np.empty(sizes.size, dtype=np.int64)
        colour_rank[np.lexsort(keys)] = np.arange(sizes.size)
        groups_in_order = np.lexsort((np.arange(n), colour_rank[colour]))
        # column-major fill of Q blocks; the first e blocks have b + 1 positions
        e = n - q * b
        k = np.arange(n, dtype=np.int64)
        col, blk = k // q, k % q
        pos = blk * b + np.minimum(blk, e) + col
        order = np.empty(n, dtype=np.int64)
        order[pos] = groups_in_order
        if offsets == "consecutive":
            off = np.arange(r, dtype=np.int64)
        elif m == 1 and e == 0 and np.all(sizes == q):
            # equal domains, N = Q b: domain k is column k, i.e. the positions = k (mod b), so
            # offsets in distinct classes mod b suffice at any span (room for a Sidon set)
            off = sidon_offsets(n, r, seed=seed, max_iter=max_iter, distinct_mod=b)
        else:
            off = sidon_offsets(n, r, seed=seed, max_iter=max_iter, max_span=span)
        placement = np.empty((n, r), dtype=np.int64)
        placement[order] = (np.arange(n, dtype=np.int64)[:, None] + off[None, :]) % n
        self = cls.__new__(cls)
        self._init(placement, off, "rack-aware", order, domains, level)
        return self

    @property
    def placement(self) -> np.ndarray:
        return self._placement

    @property
    def group_order(self):
        return self._order

    @property
    def offsets(self):
        return self._offsets

    @property
    def is_cyclic(self) -> bool:
        """True for offset (cyclic rotation) layouts, rack-aware ones included (cyclic along
        ``group_order``), False for custom placements."""
        return self._offsets is not None

    def holders(self):
        """CSR lists of the holders of each shard type.

        Returns
        -------
        indptr : ndarray of int64, shape (N + 1,)
        group : ndarray of int64
            ``group[indptr[t]:indptr[t+1]]`` are the groups holding type t (ascending).
        column : ndarray of int64
            The matching initial depth (column of ``placement``) in each holder.
        """
        if self._holders is None:
            n, r = self._placement.shape
            flat = self._placement.ravel()
            order = np.argsort(flat, kind="stable")
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(flat, minlength=n), out=indptr[1:])
            group = (order // r).astype(np.int64)
            column = (order % r).astype(np.int64)
            for a in (indptr, group, column):
                a.flags.writeable = False
            self._holders = (indptr, group, column)
        return self._holders

    @property
    def max_shared_holders(self) -> int:
        """The largest number of groups two distinct shard types both live on.

        1 for Sidon-type offsets, r - 1 for consecutive stacks with 2 <= r < N (0 when r = 1, N when r = N).
        """
        if self._max_shared is None:
            n, r = self._placement.shape
            if self._offsets is not None:
                self._max_shared = difference_multiplicity(self._offsets, n)
            elif r < 2:
                self._max_shared = 0
            else:
                srt = np.sort(self._placement, axis=1)
                i, j = np.triu_indices(r, 1)
                codes = srt[:, i] * n + srt[:, j]
                self._max_shared = int(np.unique(codes.ravel(), return_counts=True)[1].max())
        return self._max_shared

    def __eq__(self, other):
        if not isinstance(other, StackedLayout):
            return NotImplemented
        return np.array_equal(self._placement, other._placement)

    __hash__ = None

    def __repr__(self):
        return (
            f"StackedLayout(n_groups={self.n_groups}, redundancy={self.redundancy}, "
            f"kind={self.kind!r}, max_shared_holders={self.max_shared_holders})"
        )
