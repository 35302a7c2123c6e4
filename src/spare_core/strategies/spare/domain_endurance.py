"""What whole-domain failures (a rack, leaf switch or power domain at once) do to a SPARe layout.

A layout is wiped out when some shard type has lost every holder: with all r layers
available (S = r) any surviving holder can supply its type, so RECTLR finds a complete
assignment exactly while every type keeps one live holder [1]_. A domain failure downs all
groups of the domain at one instant, so what matters is, for each type, the set of
domains its r holders sit in (its *copyset*, the term of Cidon et al. [2]_ for replica
placement in storage): the domains that are down wipe the layout out exactly when they
contain some type's copyset.

This module measures that exposure three ways:

- :func:`domain_exposure`: structural counts (largest number of holders of one type in one
  domain, how many domains wipe the layout out on their own, how many distinct copysets);
- exact probabilities over uniformly random sets of failed domains:
  :func:`wipeout_probabilities` (every number of failed domains at once, by a superset
  closure over all 2^D domain subsets, D <= 24), :func:`endurable_domain_failures` (the mean
  number of domain failures endured in a random order) and, for any D,
  :func:`expected_types_lost` (exact mean number of types lost; a union bound on the
  wipe-out probability);
- :func:`domain_endurance_mc`: Monte-Carlo along random sequences mixing whole-domain and
  single-group failures, each step decided by a real :class:`~spare_core.strategies.spare.rectlr.Rectlr`.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357.
.. [2] A. Cidon, S. Rumble, R. Stutsman, S. Katti, J. Ousterhout, M. Rosenblum, "Copysets:
   Reducing the Frequency of Data Loss in Cloud Storage", USENIX ATC 2013.
"""
from __future__ import annotations

import math

import numpy as np

from ..._validate import as_float, as_generator, as_int
from .analytic import MonteCarloEstimate
from .layout import StackedLayout
from .rectlr import KINDS, Rectlr
from ...topology import FailureDomains

__all__ = [
    "holder_domains",
    "DomainExposure",
    "domain_exposure",
    "expected_types_lost",
    "wipeout_probabilities",
    "endurable_domain_failures",
    "DomainEnduranceEstimate",
    "domain_endurance_mc",
]

#: Largest number of domains for the exact subset computations (2^24 subsets: ~50 MB, ~1 s).
MAX_EXACT_DOMAINS = 24

_WIPEOUT = KINDS.index("wipeout")


def _check(layout, domains):
    if not isinstance(layout, StackedLayout):
        raise TypeError(f"layout must be a StackedLayout, got {type(layout).__name__}")
    if not isinstance(domains, FailureDomains):
        raise TypeError(f"domains must be a FailureDomains, got {type(domains).__name__}")
    if domains.n_groups != layout.n_groups:
        raise ValueError(
            f"domains must cover the layout's groups: {domains.n_groups} groups in domains, {layout.n_groups} in the layout"
        )


def holder_domains(layout, domains, level=-1) -> np.ndarray:
    """The domain of every holder of every shard type.

    Parameters
    ----------
    layout : StackedLayout
    domains : FailureDomains
        Over the same N groups.
    level : int or str
        The level of ``domains`` (index, negative from the finest, or name).

    Returns
    -------
    ndarray of int64, shape (N, r)
        Row t: the domains of the r holders of type t (a custom placement whose types have
        unequal holder counts is refused with ValueError).
    """
    _check(layout, domains)
    i = domains.level_index(level)
    indptr, group, _ = layout.holders()
    if np.any(np.diff(indptr) != layout.redundancy):
        raise ValueError("layout must give every shard type exactly r holders (a column-permutation placement)")
    return domains.labels[i][group].reshape(layout.n_groups, layout.redundancy)


def _copyset_masks(layout, domains, i):
    """Distinct copysets as bit masks (Python ints) of domain ids, and their sizes."""
    hd = holder_domains(layout, domains, i)
    masks = {sum(1 << int(d) for d in set(row)) for row in hd.tolist()}
    return masks


class DomainExposure:
    """Result of :func:`domain_exposure` for one level.

    Attributes
    ----------
    level : str
        The level's name.
    n_domains : int
    max_holders_in_domain : int
        The largest number of holders one type has in one domain (1: every type's holders
        sit in distinct domains).
    types_lost_by_domain : ndarray of int64, shape (D,)
        For each domain, the number of types all of whose holders lie in it: a failure of
        that domain alone wipes the layout out when this is > 0.
    wiping_domains : int
        Number of domains whose failure alone wipes the layout out.
    n_copysets : int
        Number of distinct sets of holder domains over the types.
    """

    def __init__(self, level, n_domains, max_holders, lost, n_copysets):
        self.level = level
        self.n_domains = n_domains
        self.max_holders_in_domain = max_holders
        self.types_lost_by_domain = lost
        self.types_lost_by_domain.flags.writeable = False
        self.wiping_domains = int(np.count_nonzero(lost))
        self.n_copysets = n_copysets

    def __repr__(self):
        return (
            f"DomainExposure(level={self.level!r}, n_domains={self.n_domains}, "
            f"max_holders_in_domain={self.max_holders_in_domain}, wiping_domains={self.wiping_domains}, "
            f"n_copysets={self.n_copysets})"
        )


def domain_exposure(layout, domains, level=-1) -> DomainExposure:
    """How exposed a layout is to whole-domain failures at one level.

    Parameters
    ----------
    layout : StackedLayout
    domains : FailureDomains
    level : int or str

    Returns
    -------
    DomainExposure

    Examples
    --------
    >>> from spare_core.topology import FailureDomains
    >>> fd = FailureDomains.contiguous(12, 4)
    >>> domain_exposure(StackedLayout(12, 3), fd)   # consecutive stacks, racks in group order
    DomainExposure(level='level0', n_domains=3, max_holders_in_domain=3, wiping_domains=3, n_copysets=6)
    >>> domain_exposure(StackedLayout.rack_aware(fd, 3), fd)
    DomainExposure(level='level0', n_domains=3, max_holders_in_domain=1, wiping_domains=0, n_copysets=1)
    """
    hd = holder_domains(layout, domains, level)
    i = domains.level_index(level)
    n_dom = domains.n_domains[i]
    n, r = hd.shape
    counts = np.zeros((n, n_dom), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n), r), hd.ravel()), 1)
    lost = np.bincount(hd[counts.max(axis=1) == r, 0], minlength=n_dom)
    n_copysets = np.unique(counts > 0, axis=0).shape[0]
    return DomainExposure(domains.names[i], n_dom, int(counts.max()), lost.astype(np.int64), int(n_copysets))


def expected_types_lost(layout, domains, n_down, level=-1) -> float:
    """Exact mean number of shard types lost when ``n_down`` random domains fail together.

    A type whose holders span s distinct domains is lost with probability
    C(D - s, k - s) / C(D, k) when k of the D domains, chosen uniformly, fail. The sum over
    types is the mean number lost, and (Markov / union bound) an upper bound on the
    probability of a wipe-out, for any number of domains.

    Parameters
    ----------
    layout : StackedLayout
    domains : FailureDomains
    n_down : int
        k, 0 <= k <= D.
    level : int or str

    Returns
    -------
    float
    """
    hd = holder_domains(layout, domains, level)
    n_dom = domains.n_domains[domains.level_index(level)]
    k = as_int(n_down, "n_down", min_value=0, max_value=n_dom)
    srt = np.sort(hd, axis=1)
    spans = 1 + np.count_nonzero(srt[:, 1:] != srt[:, :-1], axis=1)
    total = math.comb(n_dom, k)
    return float(sum(math.comb(n_dom - s, k - s) * c for s, c in zip(*np.unique(spans, return_counts=True)) if s <= k) / total)


def wipeout_probabilities(layout, domains, level=-1) -> np.ndarray:
    """Exact P(wipe-out | k random domains down) for every k = 0..D.

    The k failed domains are a uniformly random k-subset of the D domains of the level
    (what the first k failures of a random order of domain failures are). The layout is
    wiped out exactly when the failed set contains some type's copyset (the set of domains
    of its holders). Every one of the 2^D subsets is marked by a superset closure (a subset
    is fatal when it contains a copyset: mark the copysets, then for each domain d OR each
    subset's mark into the subset with d added), then counted by size.

    Parameters
    ----------
    layout : StackedLayout
    domains : FailureDomains
    level : int or str
        A level with D <= 24 domains.

    Returns
    -------
    ndarray of float64, shape (D + 1,)
        ``p[k]``; exact ratios of integer counts.

    Raises
    ------
    ValueError
        More than 24 domains (use :func:`domain_endurance_mc` or :func:`expected_types_lost`).

    Notes
    -----
    O(D 2^D) time and 2^D bytes twice. For rack-aware consecutive stacks on D equal
    domains the copysets are the D cyclic windows of r domains, and p is the probability
    that k random domains of a D-cycle contain r consecutive ones
    (:func:`spare_core.strategies.spare.analytic.endurable_failures_consecutive` with N = D).

    Examples
    --------
    >>> from spare_core.topology import FailureDomains
    >>> fd = FailureDomains.contiguous(12, 2)                       # 6 racks of 2 groups
    >>> wipeout_probabilities(StackedLayout.rack_aware(fd, 2), fd).round(3).tolist()
    [0.0, 0.0, 0.4, 0.9, 1.0, 1.0, 1.0]
    """
    _check(layout, domains)
    i = domains.level_index(level)
    n_dom = domains.n_domains[i]
    if n_dom > MAX_EXACT_DOMAINS:
        raise ValueError(
            f"level must have at most {MAX_EXACT_DOMAINS} domains for the exact computation, got {n_dom} "
            f"(use domain_endurance_mc or expected_types_lost)"
        )
    fatal = np.zeros(1 << n_dom, dtype=bool)
    fatal[np.fromiter(_copyset_masks(layout, domains, i), dtype=np.int64)] = True
    for d in range(n_dom):
        view = fatal.reshape(-1, 2, 1 << d)  # [:, 1, :] are the subsets containing domain d
        view[:, 1, :] |= view[:, 0, :]
    size = np.zeros(1 << n_dom, dtype=np.int8)
    for d in range(n_dom):
        size.reshape(-1, 2, 1 << d)[:, 1, :] += 1
    fatal_by_k = np.bincount(size[fatal], minlength=n_dom + 1)
    return np.array([fatal_by_k[k] / math.comb(n_dom, k) for k in range(n_dom + 1)], dtype=np.float64)


def endurable_domain_failures(layout, domains, level=-1) -> float:
    """Exact mean number of whole-domain failures endured before a wipe-out.

    Domains fail one at a time in a uniformly random order (no single-group failures);
    the count is the index of the wiping domain failure minus one, i.e.
    sum_{k=1}^{D} (1 - p[k]) with p from :func:`wipeout_probabilities`.

    Parameters
    ----------
    layout : StackedLayout
    domains : FailureDomains
    level : int or str
        A level with D <= 24 domains.

    Returns
    -------
    float

    Examples
    --------
    >>> from spare_core.topology import FailureDomains
    >>> fd = FailureDomains.contiguous(12, 2)
    >>> endurable_domain_failures(StackedLayout(12, 2), fd)            # the first rack wipes out
    0.0
    >>> round(endurable_domain_failures(StackedLayout.rack_aware(fd, 2), fd), 2)
    1.7
    """
    p = wipeout_probabilities(layout, domains, level)
    return float(np.sum(1.0 - p[1:]))


class DomainEnduranceEstimate:
    """Result of :func:`domain_endurance_mc`.

    Attributes
    ----------
    events : MonteCarloEstimate
        Failure events (domain or group) endured per sequence before the wiping one.
    groups : MonteCarloEstimate
        Groups lost per sequence before the wiping event.
    wiped_by_domain : MonteCarloEstimate
        Per sequence 1 if the wiping event was a domain failure, else 0 (its mean is the
        share of wipe-outs caused by domain failures).
    """

    def __init__(self, events, groups, wiped_by_domain):
        self.events = events
        self.groups = groups
        self.wiped_by_domain = wiped_by_domain

    def __repr__(self):
        return (
            f"DomainEnduranceEstimate(events={self.events.mean:.4g}, groups={self.groups.mean:.4g}, "
            f"wiped_by_domain={self.wiped_by_domain.mean:.3f}, n={self.events.n_samples})"
        )


def domain_endurance_mc(layout, domains, n_trials=200, *, seed, level=-1, domain_share=1.0,
                        confidence=0.95) -> DomainEnduranceEstimate:
    """Monte-Carlo endurance along random sequences of domain and group failures.

    Each trial restarts a :class:`~spare_core.strategies.spare.rectlr.Rectlr` and repeats, until the
    wipe-out: with probability ``domain_share`` a uniformly random domain of ``level``
    among those with a surviving group fails, downing all its surviving groups at once;
    otherwise a uniformly random surviving group fails. The controller decides every
    group loss (the groups of one domain event in increasing order; the wipe-out does not
    depend on that order).

    Parameters
    ----------
    layout : StackedLayout
    domains : FailureDomains
    n_trials : int
        >= 2.
    seed : int, SeedSequence or Generator
        Required.
    level : int or str
    domain_share : float
        Probability that an event is a whole-domain failure, in [0, 1]. 1: domains only
        (compare with :func:`endurable_domain_failures`); 0: the paper's single-group
        failures (compare with :func:`spare_core.strategies.spare.analytic.endurable_failures_mc`).
    confidence : float
        Level of the Student-t intervals, in (0, 1).

    Returns
    -------
    DomainEnduranceEstimate

    Examples
    --------
    >>> from spare_core.topology import FailureDomains
    >>> fd = FailureDomains.contiguous(12, 2)
    >>> est = domain_endurance_mc(StackedLayout.rack_aware(fd, 2), fd, 50, seed=1)
    >>> 1.0 < est.events.mean < 2.4
    True
    """
    _check(layout, domains)
    i = domains.level_index(level)
    n_trials = as_int(n_trials, "n_trials", min_value=2)
    share = as_float(domain_share, "domain_share", min_value=0.0, max_value=1.0)
    confidence = as_float(confidence, "confidence", min_value=0.0, max_value=1.0, strict_min=True)
    if confidence >= 1.0:
        raise ValueError(f"confidence must be < 1, got {confidence}")
    rng = as_generator(seed)
    indptr, members = domains.members(i)
    lab = domains.labels[i]
    n = layout.n_groups
    ctl = Rectlr(layout)
    events, groups, by_domain = [], [], []
    for _ in range(n_trials):
        ctl.restart()
        alive_count = np.diff(indptr).copy()  # surviving groups per domain
        alive = np.ones(n, dtype=bool)
        n_events = n_groups = 0
        while True:
            if rng.random() < share:
                live_domains = np.flatnonzero(alive_count)
                d = int(live_domains[rng.integers(live_domains.size)])
                down = members[indptr[d] : indptr[d + 1]]
                down = down[alive[down]]
                is_domain = 1
            else:
                live = np.flatnonzero(alive)
                down = live[rng.integers(live.size)][None]
                is_domain = 0
            alive[down] = False
            np.subtract.at(alive_count, lab[down], 1)
            if ctl.fail_many_arrays(down).kind[-1] == _WIPEOUT:
                break
            n_events += 1
            n_groups += down.size
        events.append(n_events)
        groups.append(n_groups)
        by_domain.append(is_domain)
    return DomainEnduranceEstimate(*(MonteCarloEstimate(v, confidence) for v in (events, groups, by_domain)))
