"""Closed-form SPARe fault model and the Monte-Carlo estimators that check it.

The closed forms of the SPARe paper [1]_ are approximations (they treat the loss of
each shard type as independent); :func:`endurable_failures_mc` and :func:`overhead_mc`
measure the truth by driving a real :class:`~spare_core.strategies.spare.rectlr.Rectlr` along seeded
random failure orders. ``bench/closed_form_table.py`` tabulates both; the measured
biases are in ``docs/closed_form.md``. Failures of whole racks or switches (several groups
at once) are analysed in :mod:`spare_core.strategies.spare.domain_endurance`.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

import math

import numpy as np

from ..._stats import t_quantile
from ..._validate import as_float, as_generator, as_int
from .layout import StackedLayout, check_sizes as _sizes

__all__ = [
    "endurable_failures",
    "endurable_failures_consecutive",
    "stack_depth_bound",
    "overhead_lower_bound",
    "MonteCarloEstimate",
    "OverheadEstimate",
    "endurable_failures_mc",
    "overhead_mc",
]


def endurable_failures(n_groups, redundancy) -> float:
    """The paper's closed form for the mean number of failures endured before a wipe-out.

    mu(N, r) = Gamma(1 + 1/r) * N^(1 - 1/r)  (= Gamma(1/r)/r * N^(1-1/r)).

    It follows from P(no wipe-out after k failures) ~ exp(-k^r / N^(r-1)): each of the
    N shard types is lost with probability (k/N)^r, independently.

    Being the integral of that continuous survival curve, mu differs by O(1) from the
    discrete count of failures *endured* (the index of the wiping failure minus one) that
    :func:`endurable_failures_consecutive` and :func:`endurable_failures_mc` return: by
    about half a failure when mu is large (Euler-Maclaurin: sum_{k>=1} S(k) ~ integral - 1/2),
    and at r = 1 mu = 1 while every first failure wipes out (0 endured). The offset is
    small against mu at the scales of interest (N >= 200) and is inside the bias measured
    in docs/closed_form.md.

    Parameters
    ----------
    n_groups : int
        N >= 1.
    redundancy : int
        r, 1 <= r <= N.

    Returns
    -------
    float

    References
    ----------
    SPARe [1]_, the endurable-failure analysis.

    Examples
    --------
    >>> round(endurable_failures(1000, 10), 1)
    476.8
    >>> endurable_failures(1000, 1)
    1.0
    """
    n, r = _sizes(n_groups, redundancy)
    return math.gamma(1.0 + 1.0 / r) * n ** (1.0 - 1.0 / r)


def endurable_failures_consecutive(n_groups, redundancy) -> float:
    """Exact mean number of failures endured before a wipe-out, consecutive cyclic stacks.

    With consecutive stacks a wipe-out happens exactly when r cyclically consecutive
    groups are dead. For a uniformly random failure order, the first k failures form a
    uniform k-subset, so P(no wipe-out after k failures) = A(N, k) / C(N, k) with A the
    number of k-subsets of the N-cycle without r consecutive members. Counting the
    m = N - k surviving groups and the runs of dead groups between them (each of length
    0..r-1, summing to k):

        A(N, k) = N/m * sum_j (-1)^j C(m, j) C(k - j r + m - 1, m - 1),

    and the mean number endured is sum_{k=1}^{N} A(N, k) / C(N, k). Exact integer
    arithmetic; O(N^2 / r) big-integer operations.

    Parameters
    ----------
    n_groups : int
    redundancy : int

    Returns
    -------
    float

    Notes
    -----
    This is the ground truth the closed form :func:`endurable_failures` approximates for
    the paper's default layout; the Monte-Carlo estimator is checked against it.

    Examples
    --------
    >>> endurable_failures_consecutive(3, 2)  # the 2nd failure always wipes out
    1.0
    >>> round(endurable_failures_consecutive(1000, 10), 1)
    512.7
    """
    n, r = _sizes(n_groups, redundancy)
    total = 0.0
    for k in range(1, n):
        m = n - k
        comps = sum((-1) ** j * math.comb(m, j) * math.comb(k - j * r + m - 1, m - 1) for j in range(min(m, k // r) + 1))
        p = (n * comps) / (m * math.comb(n, k))  # exact integers, one correctly rounded division
        total += p
        if p < 1e-18 * total:
            break  # survival probabilities decrease with k: the rest adds < N * 1e-18 relative
    return total


def stack_depth_bound(n_groups, n_failed) -> int:
    """c(k) = ceil(N / (N - k)): the least stack depth S after k failures.

    N shard types must fit on N - k surviving groups computing S layers each.

    Parameters
    ----------
    n_groups : int
        N >= 1.
    n_failed : int
        k, 0 <= k < N.

    Returns
    -------
    int

    Examples
    --------
    >>> [stack_depth_bound(10, k) for k in range(10)]
    [1, 2, 2, 2, 2, 2, 3, 4, 5, 10]
    """
    n = as_int(n_groups, "n_groups", min_value=1)
    k = as_int(n_failed, "n_failed", min_value=0, max_value=n - 1)
    return -(-n // (n - k))


def overhead_lower_bound(n_groups, redundancy) -> float:
    """Mean of c(k) over k < floor(mu): the paper's overhead bound without patch work.

    S_bar(N, r) >= (1/floor(mu)) * sum_{k < floor(mu)} c(k), with mu from
    :func:`endurable_failures` (clipped to [1, N]).

    Parameters
    ----------
    n_groups : int
    redundancy : int

    Returns
    -------
    float

    Examples
    --------
    >>> round(overhead_lower_bound(1000, 10), 3)
    1.998
    """
    n, r = _sizes(n_groups, redundancy)
    m = min(max(int(math.floor(endurable_failures(n, r))), 1), n)
    k = np.arange(m)
    return float(np.mean(-(-n // (n - k))))


class MonteCarloEstimate:
    """Mean of i.i.d. samples with a Student-t confidence interval.

    Attributes
    ----------
    mean, low, high : float
        The estimate and the two-sided interval at ``confidence``.
    std : float
        Sample standard deviation.
    n_samples : int
    confidence : float
    samples : ndarray
        The raw samples.
    """

    def __init__(self, samples, confidence):
        self.samples = np.asarray(samples, dtype=np.float64)
        self.samples.flags.writeable = False
        self.n_samples = self.samples.size
        self.confidence = confidence
        self.mean = float(self.samples.mean())
        self.std = float(self.samples.std(ddof=1)) if self.n_samples > 1 else math.nan
        if self.n_samples > 1:
            half = t_quantile(confidence, self.n_samples - 1) * self.std / math.sqrt(self.n_samples)
        else:
            half = math.inf
        self.low, self.high = self.mean - half, self.mean + half

    def __contains__(self, value):
        return self.low <= value <= self.high

    def __repr__(self):
        return (
            f"MonteCarloEstimate(mean={self.mean:.4g}, ci=[{self.low:.4g}, {self.high:.4g}] "
            f"at {self.confidence:.0%}, n={self.n_samples})"
        )


class OverheadEstimate:
    """Result of :func:`overhead_mc`: the true mean stack depth along failure sequences.

    Attributes
    ----------
    stack_depth : MonteCarloEstimate
        Per sequence, the mean of S over the K + 1 failure intervals k = 0..K before the
        wipe-out (K failures endured; S = 1 at k = 0; the interval after the K-th failure
        ends with the wiping failure): the S_bar of the paper, intervals weighted equally.
    bound : MonteCarloEstimate
        Per sequence, the mean of c(k) over the same k: the lower bound on the same path.
    patch_layers : MonteCarloEstimate
        Per sequence, the mean over endured failures of the extra stack layers the failure
        step costs (rho_k of the paper; the maximum over groups of patch work).
    phase0_fraction : MonteCarloEstimate
        Per sequence, the fraction of endured failures that Phase 0 alone handled.
    moves : MonteCarloEstimate
        Per sequence, the mean number of shards reordered per endured failure.
    endured : MonteCarloEstimate
        Failures endured per sequence (what :func:`endurable_failures_mc` returns for
        the same seed).
    """

    def __init__(self, stack_depth, bound, patch_layers, phase0_fraction, moves, endured):
        self.endured = endured
        self.stack_depth = stack_depth
        self.bound = bound
        self.patch_layers = patch_layers
        self.phase0_fraction = phase0_fraction
        self.moves = moves

    def __repr__(self):
        return (
            f"OverheadEstimate(stack_depth={self.stack_depth.mean:.4g}, bound={self.bound.mean:.4g}, "
            f"patch_layers={self.patch_layers.mean:.4g}, phase0_fraction={self.phase0_fraction.mean:.3f}, "
            f"moves={self.moves.mean:.3g}, n={self.stack_depth.n_samples})"
        )


def _mc_args(layout, n_trials, seed, confidence):
    if not isinstance(layout, StackedLayout):
        raise TypeError(f"layout must be a StackedLayout, got {type(layout).__name__}")
    n_trials = as_int(n_trials, "n_trials", min_value=2)
    confidence = as_float(confidence, "confidence", min_value=0.0, max_value=1.0, strict_min=True)
    if confidence >= 1.0:
        raise ValueError(f"confidence must be < 1, got {confidence}")
    return n_trials, as_generator(seed), confidence


def _sequences(layout, n_trials, rng):
    """Yield the decisions of n_trials random failure orders, each up to its wipe-out."""
    from .rectlr import Rectlr

    ctl = Rectlr(layout)
    n = layout.n_groups
    for _ in range(n_trials):
        ctl.restart()
        order = rng.permutation(n)
        yield ctl.fail_many(order)


def endurable_failures_mc(layout, n_trials=200, *, seed, confidence=0.95) -> MonteCarloEstimate:
    """Monte-Carlo mean number of failures endured before a wipe-out.

    Each trial restarts a real :class:`~spare_core.strategies.spare.rectlr.Rectlr` and fails groups in a
    uniformly random order (each failure hits a random surviving group, the paper's
    system-level failure model) until the wipe-out; the sample is the number of
    failures *endured*, i.e. the index of the wiping failure minus one.

    Parameters
    ----------
    layout : StackedLayout
    n_trials : int
        Number of independent failure orders (>= 2).
    seed : int, SeedSequence or Generator
        Required: every trial is reproducible.
    confidence : float
        Level of the Student-t interval, in (0, 1).

    Returns
    -------
    MonteCarloEstimate
        Compare with :func:`endurable_failures` (which it checks).

    Examples
    --------
    >>> from spare_core.strategies.spare.layout import StackedLayout
    >>> est = endurable_failures_mc(StackedLayout(50, 3), 20, seed=0)
    >>> 5 < est.mean < 25
    True
    """
    n_trials, rng, confidence = _mc_args(layout, n_trials, seed, confidence)
    samples = [len(decisions) - 1 for decisions in _sequences(layout, n_trials, rng)]
    return MonteCarloEstimate(samples, confidence)


def overhead_mc(layout, n_trials=200, *, seed, confidence=0.95) -> OverheadEstimate:
    """Monte-Carlo overhead of SPARe along random failure orders: S_bar vs the c(k) bound.

    Same trials as :func:`endurable_failures_mc` (same seed, same orders). For each
    sequence of K endured failures it averages, over k = 0..K, the stack depth S in
    force after k failures and the bound c(k); over the K endured failures it averages
    the patch layers, the reordered shards, and whether Phase 0 sufficed.

    Parameters
    ----------
    layout : StackedLayout
    n_trials : int
    seed : int, SeedSequence or Generator
    confidence : float

    Returns
    -------
    OverheadEstimate

    Examples
    --------
    >>> from spare_core.strategies.spare.layout import StackedLayout
    >>> est = overhead_mc(StackedLayout(50, 3), 10, seed=0)
    >>> est.stack_depth.mean >= est.bound.mean
    True
    """
    n_trials, rng, confidence = _mc_args(layout, n_trials, seed, confidence)
    n = layout.n_groups
    depth, bound, patch, phase0, moves, n_endured = [], [], [], [], [], []
    for decisions in _sequences(layout, n_trials, rng):
        endured = decisions[:-1]
        k = len(endured)
        n_endured.append(k)
        s = np.array([1] + [d.stack_depth for d in endured], dtype=np.float64)
        depth.append(s.mean())
        bound.append(np.mean(-(-n // (n - np.arange(k + 1)))))
        if k:
            patch.append(np.mean([d.patch_layers for d in endured]))
            phase0.append(np.mean([d.kind == "fixed" for d in endured]))
            moves.append(np.mean([d.moves for d in endured]))
        else:
            patch.append(0.0)
            phase0.append(1.0)
            moves.append(0.0)
    series = (depth, bound, patch, phase0, moves, n_endured)
    return OverheadEstimate(*(MonteCarloEstimate(v, confidence) for v in series))
