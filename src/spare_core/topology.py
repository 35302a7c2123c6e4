"""Failure domains of a cluster: which rack, leaf switch or power domain each group sits in.

Real clusters fail in correlated blocks: a leaf switch or cable takes down every node behind
it, a power-distribution fault a whole row of racks (the Llama 3 405B report attributes 8 %
of its unexpected interruptions to network switches and cables [1]_; Meta's research clusters
see multi-node co-occurring failures [2]_). :class:`FailureDomains` records, for each of the N
data-parallel groups, the domain it belongs to at one or more nested levels, coarsest first
(e.g. power domain, then rack). It is what rack-aware stacks
(:meth:`spare_core.strategies.spare.layout.StackedLayout.rack_aware`), the domain endurance analysis
(:mod:`spare_core.strategies.spare.domain_endurance`) and the correlated failure model read.

References
----------
.. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783 (2024),
   section 3.3.4 (root causes of unexpected interruptions).
.. [2] A. Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
   Clusters", HPCA 2025, arXiv:2410.21680.
"""
from __future__ import annotations

import numpy as np

from ._validate import as_int, as_int_array

__all__ = ["FailureDomains"]


class FailureDomains:
    """Nested failure domains of N groups, one label per group and level (coarsest first).

    Parameters
    ----------
    levels : array_like of int, shape (N,) or (L, N)
        ``levels[l][g]``: the level-l domain of group g. Labels are any non-negative
        integers (renumbered 0..D_l - 1 in increasing order, see ``labels``). Levels go from the coarsest (e.g. power domain) to the finest (e.g. rack); every
        finer domain must lie inside one domain of each coarser level. A 1-d array is one
        level.
    names : sequence of str, optional
        One name per level (default ``"level0"``, ``"level1"``, ...).

    Attributes
    ----------
    n_groups : int
    n_levels : int
    names : tuple of str
    labels : ndarray of int64, shape (L, N), read-only
        ``labels[l, g]`` in [0, D_l): domain ids renumbered in increasing order of the
        given labels.
    n_domains : tuple of int
        D_l, the number of domains at each level.

    Raises
    ------
    TypeError
        Non-integer labels.
    ValueError
        Empty, negative labels, a level of the wrong length, duplicate or wrong number of
        names, or a finer domain spanning two coarser ones.

    Examples
    --------
    >>> fd = FailureDomains([[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 2, 2, 3, 3]], names=("power", "rack"))
    >>> fd.n_domains, fd.sizes("rack").tolist()
    ((2, 4), [2, 2, 2, 2])
    >>> fd
    FailureDomains(n_groups=8, power=2, rack=4)
    """

    def __init__(self, levels: object, names: object = None) -> None:
        arr = np.asarray(levels)
        if arr.ndim == 1:
            arr = arr[None, :]
        lab = as_int_array(arr, "levels", ndim=2, min_value=0)
        n_levels, n = lab.shape
        if n_levels < 1 or n < 1:
            raise ValueError(f"levels must have at least one level and one group, got shape {lab.shape}")
        if names is None:
            names = tuple(f"level{i}" for i in range(n_levels))
        else:
            names = tuple(names)
            if len(names) != n_levels or not all(isinstance(s, str) and s for s in names):
                raise ValueError(f"names must be {n_levels} non-empty strings, got {names!r}")
            if len(set(names)) != n_levels:
                raise ValueError(f"names must be distinct, got {names!r}")
        dense = np.empty_like(lab)
        for i in range(n_levels):
            dense[i] = np.unique(lab[i], return_inverse=True)[1].ravel()
        for i in range(1, n_levels):
            # each finer domain must map to one coarser domain
            pairs = np.unique(dense[i - 1 : i + 1].T, axis=0)
            fine, count = np.unique(pairs[:, 1], return_counts=True)
            bad = fine[count > 1]
            if bad.size:
                groups = np.flatnonzero(dense[i] == bad[0])
                coarse = np.unique(dense[i - 1, groups])
                raise ValueError(
                    f"domains must be nested: {names[i]} domain {int(np.unique(lab[i])[bad[0]])} spans "
                    f"{names[i - 1]} domains {np.unique(lab[i - 1][groups]).tolist()[:2]} "
                    f"({coarse.size} in all)"
                )
        dense.flags.writeable = False
        self._labels = dense
        self.n_groups = n
        self.n_levels = n_levels
        self.names = names
        self.n_domains = tuple(int(dense[i].max()) + 1 for i in range(n_levels))

    @classmethod
    def contiguous(cls, n_groups: int, groups_per_domain: object, names: object = None) -> "FailureDomains":
        """Domains of consecutive groups: group g is in domain ``g // size`` at each level.

        The usual physical mapping when groups are numbered along the racks.

        Parameters
        ----------
        n_groups : int
            N >= 1.
        groups_per_domain : int or sequence of int
            The domain size at each level, coarsest first; each must be a multiple of the next
            (nested domains). The last domain of a level is smaller when N is not a multiple.
        names : sequence of str, optional

        Returns
        -------
        FailureDomains

        Examples
        --------
        >>> FailureDomains.contiguous(10, [6, 3], names=("power", "rack")).labels.tolist()
        [[0, 0, 0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]]
        """
        n = as_int(n_groups, "n_groups", min_value=1)
        sizes = as_int_array(np.atleast_1d(groups_per_domain), "groups_per_domain", min_value=1)
        if sizes.size == 0:
            raise ValueError("groups_per_domain must give at least one level")
        for a, b in zip(sizes[:-1].tolist(), sizes[1:].tolist()):
            if a % b:
                raise ValueError(f"groups_per_domain must be nested (each a multiple of the next), got {a} then {b}")
        g = np.arange(n, dtype=np.int64)
        return cls(g[None, :] // sizes[:, None], names=names)

    @property
    def labels(self) -> np.ndarray:
        return self._labels

    def level_index(self, level) -> int:
        """The index of ``level`` (an index, negative from the finest, or a name)."""
        if isinstance(level, str):
            if level not in self.names:
                raise ValueError(f"level must be one of {list(self.names)}, got {level!r}")
            return self.names.index(level)
        i = as_int(level, "level", min_value=-self.n_levels, max_value=self.n_levels - 1)
        return i % self.n_levels

    def sizes(self, level=-1) -> np.ndarray:
        """Number of groups in each domain of ``level``."""
        i = self.level_index(level)
        return np.bincount(self._labels[i], minlength=self.n_domains[i])

    def members(self, level=-1):
        """CSR lists of the groups of each domain of ``level``.

        Returns
        -------
        indptr : ndarray of int64, shape (D + 1,)
        groups : ndarray of int64
            ``groups[indptr[d]:indptr[d+1]]`` are the groups of domain d (ascending).
        """
        i = self.level_index(level)
        lab = self._labels[i]
        indptr = np.zeros(self.n_domains[i] + 1, dtype=np.int64)
        np.cumsum(np.bincount(lab, minlength=self.n_domains[i]), out=indptr[1:])
        return indptr, np.argsort(lab, kind="stable").astype(np.int64)

    def __eq__(self, other):
        if not isinstance(other, FailureDomains):
            return NotImplemented
        return self.names == other.names and np.array_equal(self._labels, other._labels)

    __hash__ = None

    def __repr__(self):
        doms = ", ".join(f"{s}={d}" for s, d in zip(self.names, self.n_domains))
        return f"FailureDomains(n_groups={self.n_groups}, {doms})"
