"""Stacked data-parallel layouts: which shard types each group holds, in which order.

SPARe [1]_ gives each of N data-parallel groups a *stack* of r different data shards.
Group g holds the shard types ``placement[g, 0], ..., placement[g, r-1]`` (depth 0 is
the top of the stack, computed first). Three families are provided:

- cyclic *consecutive* stacks (the paper's default): group g holds D_g, ..., D_{g+r-1};
- cyclic stacks with arbitrary offsets ``o_1..o_r``: group g holds D_{(g+o_i) mod N};
  with *Sidon-type* offsets (pairwise-distinct differences mod N, see
  :func:`sidon_offsets`) two shard types share at most one holder group, which is the
  independence the closed form for the endurable failures assumes;
- any custom (N, r) placement array (rack-aware, random), validated.

Shard types are numbered 0..N-1, as many types as groups.

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
from ._validate import as_generator, as_int, as_int_array

__all__ = ["StackedLayout", "sidon_offsets", "difference_multiplicity"]


def _check_sizes(n_groups, redundancy):
    n = as_int(n_groups, "n_groups", min_value=1)
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


def sidon_offsets(n_groups, redundancy, *, seed=0, max_iter: int = 1000) -> np.ndarray:
    """Offsets whose pairwise differences mod N are as distinct as possible (Sidon-type).

    A Sidon set modulo N (all r(r-1) ordered differences distinct) exists only when
    r(r-1) <= N-1; perfect ones (Singer difference sets [2]_) only for special N. When
    r(r-1) <= N-1 this first cuts windows of r elements out of the Singer and Bose
    difference sets for primes q near r (and their multiples t*B mod q^2+q+1 or q^2-1),
    keeps those whose differences are distinct mod N, and returns one of them chosen with
    ``seed`` (:func:`spare_core._difference_sets.sidon_windows`). When there is none, it
    runs a seeded local search on the number of colliding difference pairs
    sum_d m_d (m_d - 1) (m_d: ordered offset pairs with difference d): start from a
    random set, then repeatedly re-place a random offset among those with a repeated
    difference at the residue that adds the fewest collisions (ties broken at random,
    sideways moves allowed), keeping the best set by (largest multiplicity, collisions).
    It stops as soon as all differences are distinct. When that is impossible (or not
    found within ``max_iter`` moves) it returns the best set seen; check the result with
    :func:`difference_multiplicity`.

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

    Returns
    -------
    ndarray of int64, shape (r,)
        Sorted distinct offsets in [0, N) with offsets[0] == 0.

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
    n, r = _check_sizes(n_groups, redundancy)
    max_iter = as_int(max_iter, "max_iter", min_value=0)
    rng = as_generator(seed)
    if r <= 2 or r == n:
        return np.arange(r, dtype=np.int64)  # already Sidon-type when r <= 2 < N
    if r * (r - 1) <= n - 1:
        windows = sidon_windows(n, r)
        if windows.shape[0]:
            return windows[int(rng.integers(windows.shape[0]))].copy()
    all_res = np.arange(n, dtype=np.int64)

    def score(off):
        c = _difference_counts(off, n)
        return int(c.max()), int((c * (c - 1)).sum())

    off = rng.choice(n, size=r, replace=False).astype(np.int64)
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
        in_set = np.zeros(n, dtype=bool)
        in_set[others] = True
        cands = all_res[~in_set]
        inc = _collision_increase(cands, others, _difference_counts(others, n), n)
        off = np.append(others, rng.choice(cands[inc == inc.min()]))
        sc = score(off)
        if sc < best_score:
            best, best_score = off.copy(), sc
    best = np.sort((best - best.min()) % n)
    return best


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
    placement : ndarray of int64, shape (N, r), read-only
        ``placement[g, i]`` is the shard type at initial depth i of group g.
    kind : str
        "consecutive", "offsets" or "custom".

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
        n, r = _check_sizes(n_groups, redundancy)
        if offsets is None:
            off = np.arange(r, dtype=np.int64)
            kind = "consecutive"
        else:
            off = _check_offsets(offsets, n, r)
            kind = "consecutive" if np.array_equal(off, np.arange(r)) else "offsets"
        placement = (np.arange(n, dtype=np.int64)[:, None] + off[None, :]) % n
        self._init(placement, off, kind)

    def _init(self, placement, offsets, kind):
        self._placement = placement
        self._placement.flags.writeable = False
        self._offsets = offsets
        if offsets is not None:
            self._offsets.flags.writeable = False
        self.n_groups, self.redundancy = placement.shape
        self.kind = kind
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
        _check_sizes(n, r)
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

    @property
    def placement(self) -> np.ndarray:
        return self._placement

    @property
    def offsets(self):
        return self._offsets

    @property
    def is_cyclic(self) -> bool:
        """True for offset (cyclic rotation) layouts, False for custom placements."""
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
