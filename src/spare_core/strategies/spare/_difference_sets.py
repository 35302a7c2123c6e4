"""Algebraic Sidon sets (Singer and Bose difference sets) and their windows modulo N.

A set B of residues mod m is *Sidon* when all differences b - b' (b != b') are distinct
mod m. Two classical constructions from finite fields give Sidon sets of about sqrt(m)
elements, the most possible:

- Singer [1]_: for a prime q and a primitive element a of GF(q^3), the exponents
  i in [0, q^2+q+1) for which a^i lies in the plane spanned by 1 and a form a perfect
  difference set mod q^2+q+1 (q+1 elements; every nonzero residue is a difference once).
- Bose [2]_: for a primitive element a of GF(q^2), the exponents i in [0, q^2-1) with
  a^i - a in GF(q) form a Sidon set of q elements mod q^2-1.

A Sidon set mod m is also Sidon as a set of integers (equal integer differences are equal
mod m), and so is any multiple t*B mod m with gcd(t, m) = 1. A window of r of its elements
then gives offsets for cyclic stacks on N groups whose differences must still be checked
mod N (two integer differences can coincide mod N when their span reaches N/2):
:func:`sidon_windows` does exactly that. The SPARe layout uses these windows
(:func:`spare_core.strategies.spare.layout.sidon_offsets`) before falling back to a local search.

References
----------
.. [1] J. Singer, "A theorem in finite projective geometry and some applications to number
   theory", Trans. AMS 43 (1938) 377-385.
.. [2] R. C. Bose, "An affine analogue of Singer's theorem", J. Indian Math. Soc. 6 (1942) 1-15.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["singer_set", "bose_set", "sidon_windows"]


def _is_prime(p: int) -> bool:
    return p >= 2 and all(p % d for d in range(2, math.isqrt(p) + 1))


def _prime_factors(x: int) -> set:
    out, d = set(), 2
    while d * d <= x:
        while x % d == 0:
            out.add(d)
            x //= d
        d += 1
    if x > 1:
        out.add(x)
    return out


def _mulmod(a: list, b: list, f: list, q: int) -> list:
    """a*b mod (f, q) for polynomials over GF(q) as coefficient lists, lowest degree first
    (``f`` monic of degree k; ``a``, ``b`` of length k)."""
    k = len(f) - 1
    prod = [0] * (2 * k - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                prod[i + j] += x * y
    for d in range(2 * k - 2, k - 1, -1):
        c = prod[d] % q
        if c:
            for j in range(k):
                prod[d - k + j] -= c * f[j]
    return [c % q for c in prod[:k]]


def _powmod(a: list, e: int, f: list, q: int) -> list:
    res = [1] + [0] * (len(f) - 2)
    while e:
        if e & 1:
            res = _mulmod(res, a, f, q)
        a = _mulmod(a, a, f, q)
        e >>= 1
    return res


def _primitive_poly(q: int, k: int) -> list:
    """A monic degree-k polynomial over GF(q) (q prime) whose root x has order q^k - 1.

    Such an f is irreducible and x generates GF(q^k)* (first one in lexicographic order)."""
    order = q**k - 1
    factors = _prime_factors(order)
    x = [0, 1] + [0] * (k - 2)
    one = [1] + [0] * (k - 1)
    for coeffs in itertools.product(range(q), repeat=k):
        if coeffs[0] == 0:
            continue
        f = list(coeffs) + [1]
        if _powmod(x, order, f, q) == one and all(_powmod(x, order // p, f, q) != one for p in factors):
            return f
    raise AssertionError(f"no primitive polynomial of degree {k} over GF({q})")  # pragma: no cover


def _exponents(q: int, k: int, m: int, keep) -> np.ndarray:
    f = _primitive_poly(q, k)
    x = [0, 1] + [0] * (k - 2)
    power, out = [1] + [0] * (k - 1), []
    for i in range(m):
        if keep(power):
            out.append(i)
        power = _mulmod(power, x, f, q)
    return np.array(out, dtype=np.int64)


def singer_set(q: int) -> tuple[np.ndarray, int]:
    """Singer's perfect difference set for a prime q: (q+1 residues, modulus q^2+q+1)."""
    if not _is_prime(q):
        raise ValueError(f"q must be prime, got {q}")
    m = q * q + q + 1
    return _exponents(q, 3, m, lambda c: c[2] == 0), m


def bose_set(q: int) -> tuple[np.ndarray, int]:
    """Bose's Sidon set for a prime q: (q residues, modulus q^2-1)."""
    if not _is_prime(q):
        raise ValueError(f"q must be prime, got {q}")
    m = q * q - 1
    return _exponents(q, 2, m, lambda c: c[1] == 1), m


def _sidon_rows(w: np.ndarray, n: int) -> np.ndarray:
    """Which rows of ``w`` (windows of distinct offsets) have all differences distinct mod n."""
    r = w.shape[1]
    d = (w[:, :, None] - w[:, None, :]) % n
    iu = ~np.eye(r, dtype=bool)
    d = np.sort(d[:, iu], axis=1)
    return ~np.any(d[:, 1:] == d[:, :-1], axis=1)


def sidon_windows(n: int, r: int, *, max_q: int | None = None, limit: int = 64, max_span: int | None = None) -> np.ndarray:
    """Offsets of r residues, Sidon modulo n, cut from Singer and Bose sets.

    For each prime q (smallest first) whose set has at least r elements and each
    multiplier t coprime to its modulus m, the r-element windows of consecutive elements of
    sorted(t*B mod m) that span at most ``max_span`` and are Sidon mod n are collected,
    until ``limit`` are found in one construction.

    Parameters
    ----------
    n, r : int
        Modulus (number of groups) and size (redundancy); 3 <= r and r(r-1) <= n-1.
    max_q : int, optional
        Largest q tried (default ``min(2 w // r, r + 8)`` with w = max_span + 1, at least
        r: a window of r elements of a set of density about 1/q spans about r q, which must
        stay below w, and larger q cost more than a local search).
    limit : int
        Stop after this many windows.
    max_span : int, optional
        Largest allowed last element of a window (default n - 1: any window below n).
        Rack-aware stacks need offsets inside a short span
        (:meth:`spare_core.strategies.spare.layout.StackedLayout.rack_aware`).

    Returns
    -------
    ndarray of int64, shape (k, r)
        Each row sorted, starting at 0; k = 0 when no window was found.
    """
    span = n - 1 if max_span is None else min(int(max_span), n - 1)
    if max_q is None:
        max_q = max(r, min(2 * (span + 1) // r, r + 8))
    found = []
    for q in range(max(2, r - 1), max_q + 1):
        if not _is_prime(q):
            continue
        for build in (singer_set, bose_set):
            base, m = build(q)
            if base.size < r:
                continue
            for t in range(1, m):
                if math.gcd(t, m) != 1:
                    continue
                s = np.sort(t * base % m)
                ext = np.concatenate([s, s + m])
                starts = np.arange(s.size)
                w = ext[starts[:, None] + np.arange(r)[None, :]] - ext[starts, None]
                w = w[w[:, -1] <= span]
                if w.shape[0]:
                    found.extend(w[_sidon_rows(w, n)])
                if len(found) >= limit:
                    return np.array(found[:limit], dtype=np.int64)
            if found:
                return np.array(found, dtype=np.int64)
    return np.zeros((0, r), dtype=np.int64)
