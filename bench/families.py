"""Graph families for the matching benchmarks: other simulators' graphs, not only SPARe's.

Every family is a function ``make(nnz, rng) -> (graph, capacity)`` building a CSR biadjacency
(rows = left vertices) with about ``nnz`` stored entries, and the right capacities (``None`` for
an ordinary matching). ``FAMILIES`` maps a short name to ``(make, full_nnz, note)``:
``full_nnz`` is the size the issue quotes; ``python -m bench.ratios matching --catalogue all``
runs every family at 1e3, 1e4, 1e5 edges and at that size. The flow families ``user_reassign``,
``netgen_wide`` and ``grid`` are defined in bench/workloads.py and importable from here too.

The first four are the graphs of issue 15's table (uniform random at average degree 5 and 4,
rectangular, heavy-tailed right degrees); ``redundancy``, ``hard`` and ``sparse`` are the
SPARe-shaped families (a, b, c) of the matching table (bench/workloads.py); ``redundancy_slots``
is the redundancy family with every group expanded into its S = 2 slots (one right vertex per
slot, capacity 1: the ordinary matching a simulator without b-matchings solves, and what scipy is
given for ``redundancy``); the last three are built to hurt a matching code:

- ``chain``: a randomly relabelled staircase (left i joined to right i and i+1, plus a sprinkle
  of random edges): a greedy start leaves free vertices whose augmenting paths are very long.
- ``blocks``: many dense complete bipartite blocks of 24 x 22 vertices (every block has 2 left
  vertices too many) joined by a few random edges: many equally good choices, a matching of
  deficiency 2 per block that only exhaustive search proves.
- ``planted``: a hidden perfect matching plus random edges at average degree 2.7 (about e, where
  Karp-Sipser's degree-1 rule runs out early and the rest is left to augmenting search).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from bench.workloads import distinct_random, expand_slots
# the flow families (defined with the other workloads), kept here under their names
from bench.workloads import grid, netgen_wide, user_reassign  # noqa: F401


def _csr(rows, cols, shape):
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=shape)


def uniform(nnz: int, rng, degree: float = 5.0):
    """n x n, n = nnz / degree, nnz uniform random entries (duplicates merged by scipy)."""
    n = max(int(round(nnz / degree)), 1)
    return _csr(rng.integers(0, n, nnz), rng.integers(0, n, nnz), (n, n)), None


def uniform4(nnz: int, rng):
    """The 500k x 500k, 2M-edge case: average degree 4."""
    return uniform(nnz, rng, degree=4.0)


def rectangular(nnz: int, rng):
    """1.5 n x n, three random right vertices per left vertex (300k x 200k at 900k edges)."""
    n_left = max(nnz // 3, 1)
    n_right = max(2 * n_left // 3, 1)
    rows = np.repeat(np.arange(n_left), 3)
    return _csr(rows, rng.integers(0, n_right, rows.size), (n_left, n_right)), None


def zipf(nnz: int, rng, n: int | None = None):
    """n x n (n = nnz / 5, 300k at 1.5M), five entries per left vertex; right endpoints drawn
    with probability proportional to 1 / (rank + 1) over a random permutation of the right side
    (a Zipf-like in-degree: a few right vertices are in tens of thousands of rows)."""
    n = n or max(nnz // 5, 1)
    w = 1.0 / np.arange(1, n + 1)
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    ranks = np.minimum(np.searchsorted(cdf, rng.random(nnz)), n - 1)
    perm = rng.permutation(n)
    rows = np.repeat(np.arange(n), 5)[:nnz]
    return _csr(rows, perm[ranks[: rows.size]], (n, n)), None


def redundancy(nnz: int, rng, r: int = 3, removed: float = 0.05):
    """(a) of the matching table: n types, each held by r random groups of S = 2 slots, 5 % of the
    groups removed (capacity 0)."""
    n = max(nnz // r, r + 1)
    cols = distinct_random(n, r, rng)
    g = _csr(np.repeat(np.arange(n), r), cols.ravel(), (n, n))
    cap = np.full(n, 2, dtype=np.int64)
    cap[rng.random(n) < removed] = 0
    return g, cap


def redundancy_slots(nnz: int, rng):
    """The redundancy family slot-expanded (S = 2, 5 % of the groups removed: 0 slots), about
    ``nnz`` edges after the expansion: n types x about 1.9 n slots, 6 edges per type. An
    ordinary matching (capacity None)."""
    g, cap = redundancy(max(int(nnz / 1.9), 4), rng)
    return expand_slots(g, cap), None


def hard(nnz: int, rng):
    """(b): n x n, two random right vertices per left, 10 % of the right vertices removed."""
    n = max(int(nnz / 1.8), 1)
    rows = np.repeat(np.arange(n), 2)
    cols = rng.integers(0, n, 2 * n)
    keep = (rng.random(n) >= 0.1)[cols]
    return _csr(rows[keep], cols[keep], (n, n)), None


def sparse(nnz: int, rng):
    """(c): nnz uniform entries in a 0.6 nnz x 0.6 nnz biadjacency (average degree 1.67)."""
    n = max(int(0.6 * nnz), 1)
    return _csr(rng.integers(0, n, nnz), rng.integers(0, n, nnz), (n, n)), None


def chain(nnz: int, rng):
    """Relabelled staircase: left i -- right i, right i+1 (n - 1 of them), plus n / 20 random
    edges; rows and columns randomly permuted. Perfect matching exists."""
    n = max(int(nnz / 2.05), 2)
    rows = np.concatenate([np.arange(n), np.arange(n - 1), rng.integers(0, n, n // 20)])
    cols = np.concatenate([np.arange(n), np.arange(1, n), rng.integers(0, n, n // 20)])
    pl, pr = rng.permutation(n), rng.permutation(n)
    return _csr(pl[rows], pr[cols], (n, n)), None


def blocks(nnz: int, rng, a: int = 24, b: int = 22):
    """Complete a x b blocks on the diagonal plus one random edge per 10 left vertices, rows
    and columns permuted."""
    k = max(nnz // (a * b), 1)
    bl = np.arange(k).repeat(a * b)
    i = np.tile(np.repeat(np.arange(a), b), k)
    j = np.tile(np.tile(np.arange(b), a), k)
    n_left, n_right = k * a, k * b
    extra = n_left // 10
    rows = np.concatenate([bl * a + i, rng.integers(0, n_left, extra)])
    cols = np.concatenate([bl * b + j, rng.integers(0, n_right, extra)])
    pl, pr = rng.permutation(n_left), rng.permutation(n_right)
    return _csr(pl[rows], pr[cols], (n_left, n_right)), None


def planted(nnz: int, rng, degree: float = 2.7):
    """A hidden perfect matching (a random permutation) plus uniform random edges up to average
    degree ``degree``."""
    n = max(int(nnz / degree), 1)
    extra = max(nnz - n, 0)
    rows = np.concatenate([np.arange(n), rng.integers(0, n, extra)])
    cols = np.concatenate([rng.permutation(n), rng.integers(0, n, extra)])
    return _csr(rows, cols, (n, n)), None


FAMILIES = {
    "uniform5": (uniform, 1_000_000, "uniform random 200k x 200k, 1M edges (issue 15)"),
    "uniform4": (uniform4, 2_000_000, "uniform random 500k x 500k, 2M edges (issue 15)"),
    "rect": (rectangular, 900_000, "rectangular 300k x 200k, 3 per left (issue 15)"),
    "zipf": (zipf, 1_500_000, "Zipf-like right degrees, 300k, 1.5M edges (issue 15)"),
    "redundancy": (redundancy, 1_800_000, "(a) SPARe stacks r=3 S=2, 5% groups removed"),
    "redundancy_slots": (redundancy_slots, 1_800_000, "(a) slot-expanded: one column per slot, unit capacities"),
    "hard": (hard, 1_080_000, "(b) hard: r=2, 10% right removed"),
    "sparse": (sparse, 1_000_000, "(c) uniform at degree 1.67"),
    "chain": (chain, 1_000_000, "relabelled staircase: long augmenting paths"),
    "blocks": (blocks, 1_000_000, "dense 24 x 22 blocks, deficiency 2 each"),
    "planted": (planted, 1_000_000, "planted perfect matching at degree 2.7"),
}


def sizes(full_nnz: int, quick: bool = False) -> list[int]:
    """1e3, 1e4, 1e5 and the family's full size (quick: 1e3, 1e4)."""
    out = [1_000, 10_000] if quick else [1_000, 10_000, 100_000, full_nnz]
    return out


# each family's stream number: the first ten in sorted order (as before redundancy_slots was
# added), later families appended, so that adding one does not change the others' graphs
_STREAM = (*sorted(set(FAMILIES) - {"redundancy_slots"}), "redundancy_slots")


def make(name: str, nnz: int, seed: int = 15):
    """Build family ``name`` at about ``nnz`` edges from a seeded generator."""
    fn = FAMILIES[name][0]
    return fn(nnz, np.random.default_rng([seed, nnz, _STREAM.index(name)]))
