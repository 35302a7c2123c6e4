"""Does a fitted law reproduce the log it came from? Re-simulate the log's window and compare.

A likelihood can be maximised by a law that does not describe the data the way a simulation
uses it. The classic case: a per-node Weibull fitted to a fleet log in which most nodes never
fail, a few "lemons" fail again and again and the rate drifts from year to year comes out with
shape ~0.4 and a mean far beyond the window; with the nodes' ages stationary the simulated
cluster then fails an order of magnitude less often than the log it was fitted to
(docs/failures.md, "Checking a fit"). Nothing in the likelihood says so; re-simulating does.

:func:`check_fit` simulates the log's own window — the same nodes, the same span, the fitted
law through the simulator's own node-renewal code (:class:`~spare_core.events.NodeFailureLog`,
frailty multipliers and per-period rates included) — ``replicates`` times and compares:

- the **count**: is the log's number of failures within the central ``confidence`` interval of
  the simulated counts (:attr:`FitCheck.ok`; a scenario file refuses ``law = "fit"`` when not);
- the **per-period counts** (calendar years, quarters, ...): the continuous ranked probability
  score of each period's simulated counts against the log's, summed over the periods
  (:attr:`FitCheck.score`, in failures: lower is better; a proper scoring rule, so a law is not
  rewarded for being vague), and its Monte-Carlo p-value (:attr:`FitCheck.periods_p`: how often
  a simulated history scores worse against the others than the log does);
- the **failing nodes**: how many distinct nodes failed at least once. Lemons concentrate the
  failures on few nodes, so a law of identical nodes spreads the same count over too many
  (:attr:`FitCheck.nodes_interval`, :attr:`FitCheck.nodes_score`).

``fit_law = "best"`` ranks the candidate laws by these (:func:`rank_checks`), not by AIC: a
Weibull with shape < 1 can win the AIC on a log's short repeat gaps and still miss its count.

References
----------
.. [1] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and
   estimation", JASA 102(477), 2007 (the continuous ranked probability score).
.. [2] A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their Application*, Cambridge
   1997, section 4.2 (Monte-Carlo p-values, ``(1 + #{T* >= t}) / (R + 1)``).
.. [3] A. Gelman, X.-L. Meng and H. Stern, "Posterior predictive assessment of model fitness
   via realized discrepancies", Statistica Sinica 6, 1996 (checking a model by simulating the
   data it was fitted to).
"""
from __future__ import annotations

import math

import numpy as np

from .._results import fields_dict
from .._validate import as_float, as_int, check_choice
from ..distributions import Distribution, Exponential
from .fit import LifetimeFit, NodeRateFit
from .nodes import INITIAL_AGES, NodeFailureLog
from .rates import Periods, RateSchedule, calendar_periods
from .trace import Trace

__all__ = ["FitCheck", "check_fit", "rank_checks", "simulate_log", "DEFAULT_REPLICATES"]

#: simulated windows per check: the 2.5 % and 97.5 % quantiles are then the 5th and 196th of 200
DEFAULT_REPLICATES = 200


def _abs_sums(sorted_x, prefix, values):
    """``sum_s |x_s - v|`` for each ``v`` in ``values`` (``sorted_x`` sorted, ``prefix`` its
    cumulative sums with a leading 0)."""
    n = sorted_x.shape[0]
    i = np.searchsorted(sorted_x, values, side="right")
    below = values * i - prefix[i]
    above = (prefix[n] - prefix[i]) - values * (n - i)
    return below + above


class FitCheck:
    """A fitted law's re-simulation of the log's window (returned by :func:`check_fit`).

    Attributes
    ----------
    law : str
        The law checked, in words.
    level : {"unit", "system"}
        Node renewals over the log's nodes, or one renewal process of system failures.
    initial : str
        The nodes' ages at the window's start in the simulation ("stationary" or "new").
    n_units : int
        Nodes simulated (the log's).
    end : float
        The window's length, seconds.
    replicates, seed : int
        Simulated windows, and the seed of the first (each replicate has its own stream).
    confidence : float
        Level of :attr:`interval`.
    count : int
        Failures in the log (distinct failure instants for ``level="system"``).
    simulated : numpy.ndarray
        Failures in each simulated window.
    interval : tuple of int
        Central ``confidence`` interval of :attr:`simulated`.
    ok : bool
        Whether :attr:`count` lies in :attr:`interval`: the law reproduces the log's count.
    count_p : float
        Two-sided Monte-Carlo p-value of the count.
    periods : Periods
        The periods of the per-period comparison.
    period_counts : numpy.ndarray
        The log's failures per period.
    period_simulated : numpy.ndarray
        Simulated failures per period, ``(replicates, periods)``.
    score : float
        Sum over the periods of the continuous ranked probability score of the simulated
        counts at the log's count (failures; 0 for a law that always simulates the log's
        counts exactly, lower is better).
    periods_p : float
        Monte-Carlo p-value of :attr:`score`: the share of simulated windows that score at
        least as badly against the other windows (small: the per-period counts are not
        reproduced).
    failing_nodes : int or None
        Distinct nodes of the log with at least one failure (None for ``level="system"``).
    simulated_failing_nodes : numpy.ndarray or None
        The same in each simulated window.
    nodes_interval : tuple of int or None
        Central ``confidence`` interval of :attr:`simulated_failing_nodes`.
    nodes_score : float
        Continuous ranked probability score of the simulated failing nodes at the log's (0
        for ``level="system"``).
    score_se : float
        Monte-Carlo standard error of ``score + nodes_score`` (the standard deviation over the
        replicates of their absolute distances to the log's counts, over sqrt(replicates)).
    """

    __slots__ = ("law", "level", "initial", "n_units", "end", "replicates", "seed", "confidence", "count",
                 "simulated", "interval", "ok", "count_p", "periods", "period_counts", "period_simulated", "score",
                 "periods_p", "failing_nodes", "simulated_failing_nodes", "nodes_interval", "nodes_score", "score_se")

    def __init__(self, *, law, level, initial, n_units, end, seed, confidence, count, simulated, periods,
                 period_counts, period_simulated, failing_nodes=None, simulated_failing_nodes=None):
        self.law, self.level, self.initial = law, level, initial
        self.n_units, self.end, self.seed, self.confidence = n_units, end, seed, confidence
        self.count = int(count)
        self.simulated = simulated
        self.replicates = int(simulated.shape[0])
        self.interval = lo, hi = self._central(simulated)
        self.ok = lo <= self.count <= hi
        self.failing_nodes = failing_nodes
        self.simulated_failing_nodes = simulated_failing_nodes
        self.nodes_interval = None if failing_nodes is None else self._central(simulated_failing_nodes)
        self.nodes_score = 0.0 if failing_nodes is None else _crps(simulated_failing_nodes, failing_nodes)
        r = self.replicates
        le = (1 + int(np.count_nonzero(simulated <= self.count))) / (r + 1)
        ge = (1 + int(np.count_nonzero(simulated >= self.count))) / (r + 1)
        self.count_p = min(1.0, 2.0 * min(le, ge))
        self.periods = periods
        self.period_counts = period_counts
        self.period_simulated = period_simulated
        # CRPS per period: E|X - o| - E|X - X'| / 2, from the sorted simulated counts
        x = np.sort(period_simulated.astype(np.float64), axis=0)
        own = np.zeros(r)
        score = 0.0
        for p in range(x.shape[1]):
            col = x[:, p]
            prefix = np.concatenate(([0.0], np.cumsum(col)))
            spread = 0.5 * float(_abs_sums(col, prefix, col).sum()) / (r * r)
            score += float(_abs_sums(col, prefix, np.array([float(period_counts[p])]))[0]) / r - spread
            # each simulated window scored against the others (leave one out), for the p-value
            raw = _abs_sums(col, prefix, period_simulated[:, p].astype(np.float64))
            own += raw / max(r - 1, 1) - spread
        self.score = score
        dist = np.abs(period_simulated - period_counts).sum(axis=1).astype(np.float64)
        if failing_nodes is not None:
            dist += np.abs(simulated_failing_nodes - failing_nodes)
        self.score_se = float(dist.std(ddof=1)) / math.sqrt(r) if r > 1 else math.inf
        self.periods_p = (1 + int(np.count_nonzero(own >= score - 1e-9 * max(1.0, abs(score))))) / (r + 1)
        for arr in (self.simulated, self.period_counts, self.period_simulated, self.simulated_failing_nodes):
            if arr is not None:
                arr.setflags(write=False)

    def _central(self, x):
        a = 0.5 * (1.0 - self.confidence)
        return int(np.quantile(x, a, method="lower")), int(np.quantile(x, 1.0 - a, method="higher"))

    @property
    def median(self) -> float:
        """Median simulated count."""
        return float(np.median(self.simulated))

    @property
    def ratio(self) -> float:
        """The log's count over the median simulated count (inf if the median is 0)."""
        m = self.median
        return math.inf if m == 0 else self.count / m

    def summary(self) -> str:
        """One line: the count against the simulated interval, and the per-period p-value."""
        lo, hi = self.interval
        what = "failures" if self.level == "unit" else "failure instants"
        verdict = "reproduced" if self.ok else f"NOT reproduced (log/simulated {self.ratio:.3g}x)"
        years = self.end / (365.25 * 86400)
        span = f"{years:.3g} years" if years >= 1 else f"{self.end / 86400:.3g} days"
        nodes = ""
        if self.failing_nodes is not None:
            a, b = self.nodes_interval
            nodes = (f"; failing nodes {self.failing_nodes:,} logged, "
                     f"{float(np.median(self.simulated_failing_nodes)):,.0f} simulated ({a:,}-{b:,})")
        return (f"{self.law} re-simulated over the log's {span} on its {self.n_units:,} nodes ({self.initial} ages, "
                f"{self.replicates} runs): {self.count:,} {what} logged, {self.median:,.0f} simulated "
                f"({self.confidence:.0%} {lo:,}-{hi:,}): {verdict}; per period ({len(self.periods)}) "
                f"p = {self.periods_p:.3g}{nodes}")

    def period_table(self) -> list[str]:
        """One line per period: the log's count and the simulated median and central interval."""
        a = 0.5 * (1.0 - self.confidence)
        lo = np.quantile(self.period_simulated, a, axis=0, method="lower")
        hi = np.quantile(self.period_simulated, 1.0 - a, axis=0, method="higher")
        med = np.median(self.period_simulated, axis=0)
        return [f"{lab}: log {c:,}, simulated {m:,.0f} ({self.confidence:.0%} {int(lo_):,}-{int(hi_):,})"
                for lab, c, m, lo_, hi_ in zip(self.periods.labels, self.period_counts.tolist(), med, lo, hi)]

    def __repr__(self):
        return f"FitCheck({self.summary()})"

    def to_dict(self) -> dict:
        """The fields as JSON values (the simulated arrays as lists), the periods as edges and
        labels, and the per-period medians and intervals."""
        out = fields_dict(self, ("law", "level", "initial", "n_units", "end", "replicates", "seed", "confidence",
                                 "count", "interval", "ok", "count_p", "score", "periods_p", "period_counts",
                                 "simulated", "period_simulated", "failing_nodes", "simulated_failing_nodes",
                                 "nodes_interval", "nodes_score", "score_se"))
        out["periods"] = {"edges": self.periods.edges.tolist(), "labels": list(self.periods.labels)}
        return out


def _crps(samples, obs) -> float:
    """Continuous ranked probability score of ``samples`` at ``obs``."""
    x = np.sort(np.asarray(samples, dtype=np.float64))
    prefix = np.concatenate(([0.0], np.cumsum(x)))
    r = x.shape[0]
    return (float(_abs_sums(x, prefix, np.array([float(obs)]))[0]) / r
            - 0.5 * float(_abs_sums(x, prefix, x).sum()) / (r * r))


def _law_of(fitted):
    """(lifetime law, frailty, schedule over the window from its start, words)."""
    if isinstance(fitted, NodeRateFit):
        mean = fitted.params["mean"]
        sched = None
        if fitted.varies:  # levels relative to the window's average rate
            sched = RateSchedule.from_periods(fitted.periods.edges, fitted.period_rates * mean, at=0.0)
        words = fitted.law + (f" per {len(fitted.periods)} periods" if fitted.varies else "")
        return Exponential(mean), fitted.params.get("frailty", 0.0), sched, words
    if isinstance(fitted, LifetimeFit):
        ps = ", ".join(f"{k} {v:.3g}" for k, v in fitted.params.items() if k != "scale")
        return fitted.distribution, 0.0, None, f"{fitted.law} ({ps})"
    if isinstance(fitted, Distribution):
        return fitted, 0.0, None, repr(fitted)
    raise TypeError(f"fitted must be a LifetimeFit, NodeRateFit or Distribution, got {type(fitted).__name__}")


def _system_counts(law, end, initial, rng, periods):
    """One renewal process of ``law`` over ``[0, end)``: its failures per period."""
    t = law.sample_residual(rng, 1) if initial == "stationary" else law.sample(rng, 1)
    out = [t]
    total = float(t[0])
    batch = max(16, int(2 * end / law.mean) + 16) if law.mean > 0 else 16
    while total < end:
        more = law.sample(rng, batch)
        c = total + np.cumsum(more)
        out.append(c)
        total = float(c[-1])
        batch *= 2
    times = np.concatenate(out)
    return periods.counts(times[times < end])


def _window(law, n_units, end, initial, frailty, sched, seed):
    """Every failure of ``n_units`` node renewals in ``[0, end)``: (times, nodes), in time order."""
    log = NodeFailureLog(law, n_units, 1, seed, initial=initial, chunk_seconds=end, frailty=frailty, schedule=sched)
    while log.horizon < end:
        log.extend()
    t = np.asarray(log.times, dtype=np.float64)
    u = np.asarray(log.groups, dtype=np.int64)
    inside = t < end
    return t[inside], u[inside]


def simulate_log(fitted, n_units, end, *, seed=0, initial="stationary", frailty=0.0, schedule=None,
                 start=None) -> Trace:
    """A failure log drawn from a law: ``n_units`` node renewals over ``[0, end)``.

    What :func:`check_fit` draws, as a :class:`~spare_core.events.trace.Trace`: to see a fitted
    law's histories, or to build a log of a known law (lemons, drift) to test a pipeline on.

    Parameters
    ----------
    fitted : LifetimeFit, NodeRateFit or Distribution
        The law (a :class:`NodeRateFit` brings its own frailty and period rates).
    n_units : int
        Nodes (>= 1).
    end : float
        Length of the window, seconds (> 0).
    seed : int, default 0
    initial : {"stationary", "new"}, default "stationary"
    frailty : float, default 0
        Variance of per-node rate multipliers, for a bare law (see
        :class:`~spare_core.events.NodeRenewals`).
    schedule : RateSchedule, optional
        A changing rate, for a bare law.
    start : datetime.datetime, optional
        The log's absolute time 0 (so that :func:`calendar_periods` finds calendar years).

    Examples
    --------
    >>> from spare_core.distributions import Exponential
    >>> from spare_core.events.rates import RateSchedule
    >>> tr = simulate_log(Exponential(1000.0), 50, 2000.0, schedule=RateSchedule([1000.0], [0.2, 1.8]))
    >>> bool((tr.times < 1000).sum() < (tr.times >= 1000).sum())
    True
    """
    law, fr, sched, _ = _law_of(fitted)
    if not isinstance(fitted, NodeRateFit):
        fr = as_float(frailty, "frailty", min_value=0.0)
        if schedule is not None and not isinstance(schedule, RateSchedule):
            raise TypeError(f"schedule must be a RateSchedule, got {type(schedule).__name__}")
        sched = schedule
    n = as_int(n_units, "n_units", min_value=1)
    end = as_float(end, "end", min_value=0.0, strict_min=True)
    check_choice(initial, "initial", INITIAL_AGES)
    t, u = _window(law, n, end, initial, fr, sched, as_int(seed, "seed", min_value=0))
    return Trace(t, u, n_units=n, end=end, start=start)


def check_fit(fitted, trace, *, initial=None, periods="auto", replicates=DEFAULT_REPLICATES, seed=0, confidence=0.95,
              level="unit") -> FitCheck:
    """Simulate the log's window with a fitted law and compare its counts with the log's.

    Parameters
    ----------
    fitted : LifetimeFit, NodeRateFit or Distribution
        The law: a fitted lifetime law (:func:`~spare_core.events.fit.fit`), a frailty or
        per-period fit (:func:`~spare_core.events.fit.fit_node_rates`, simulated with its
        multipliers and its period rates from the log's start), or a node lifetime law.
    trace : Trace
        The log: its ``n_units`` nodes over ``[0, end]``.
    initial : {"stationary", "new"}, optional
        The nodes' ages at the window's start; default: the fit's own assumption
        (``origin="stationary"`` fits stationary ages, ``"start"`` new nodes; a bare
        distribution: "stationary").
    periods : Periods or str or float, default "auto"
        The periods of the per-period comparison
        (:func:`~spare_core.events.rates.calendar_periods`: "auto" is calendar years for a
        log of two years, 730 days, or more); a :class:`NodeRateFit` with periods uses its own.
    replicates : int, default 200
        Simulated windows (>= 20).
    seed : int, default 0
        Seed of the simulation (replicate ``i`` uses child ``i`` of ``SeedSequence(seed)``).
    confidence : float, default 0.95
        Level of the central interval the log's count must fall in.
    level : {"unit", "system"}, default "unit"
        ``"unit"``: node renewals of the law on every node of the log (the fit of
        ``level="unit"``); ``"system"``: one renewal process of the law, compared with the
        log's distinct failure instants (the fit of ``level="system"``).

    Returns
    -------
    FitCheck

    Examples
    --------
    A log drawn from exponential nodes is reproduced by the exponential fitted to it:

    >>> from spare_core.events.fit import fit
    >>> rng = np.random.default_rng(4)
    >>> t = np.sort(rng.uniform(0, 4e7, 300))
    >>> tr = Trace(t, rng.integers(0, 500, 300), n_units=500, end=4e7)
    >>> check_fit(fit(tr, "exponential"), tr, replicates=50).ok
    True
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"trace must be a Trace (see read_trace), got {type(trace).__name__}")
    check_choice(level, "level", ("unit", "system"))
    reps = as_int(replicates, "replicates", min_value=20)
    seed = as_int(seed, "seed", min_value=0)
    conf = as_float(confidence, "confidence", min_value=0.0, strict_min=True, max_value=1.0 - 1e-12)
    if not trace.end > 0:
        raise ValueError(f"checking a fit needs a log window of length > 0, got end = {trace.end}")
    law, frailty, sched, words = _law_of(fitted)
    if initial is None:
        initial = "new" if getattr(fitted, "origin", "stationary") == "start" else "stationary"
    check_choice(initial, "initial", INITIAL_AGES)
    if isinstance(fitted, NodeRateFit) and fitted.varies:
        per = fitted.periods
    else:
        per = periods if isinstance(periods, Periods) else calendar_periods(trace.end, periods, start=trace.start)
    if per.edges[-1] != trace.end:
        raise ValueError(f"periods must end at the log's end {trace.end:g} s, got {per.edges[-1]:g}")
    end = float(trace.end)
    children = np.random.SeedSequence(seed).spawn(reps)
    counts = np.empty((reps, len(per)), dtype=np.int64)
    failing = np.empty(reps, dtype=np.int64)
    for i, ss in enumerate(children):
        if level == "system":
            counts[i] = _system_counts(law, end, initial, np.random.default_rng(ss), per)
            continue
        t, u = _window(law, trace.n_units, end, initial, frailty, sched, ss)
        counts[i] = per.counts(t)
        failing[i] = np.unique(u).shape[0]
    logged = trace.n_events if level == "unit" else int(np.unique(trace.times).shape[0])
    log_times = trace.times if level == "unit" else np.unique(trace.times)
    unit = level == "unit"
    return FitCheck(law=words, level=level, initial=initial, n_units=trace.n_units, end=end, seed=seed,
                    confidence=conf, count=logged, simulated=counts.sum(axis=1), periods=per,
                    period_counts=per.counts(log_times), period_simulated=counts,
                    failing_nodes=int(np.unique(trace.units).shape[0]) if unit else None,
                    simulated_failing_nodes=failing if unit else None)


def rank_checks(checks, aics=None) -> list[int]:
    """Indices of ``checks`` (FitCheck), best first.

    Those that reproduce the log's count come before those that do not; among them, the lowest
    sum of the per-period and failing-nodes scores. Scores within two Monte-Carlo standard
    errors of the lowest (:attr:`FitCheck.score_se`, combined) cannot be told apart by the
    simulation: among those the lowest AIC (``aics``, one per check) comes first, so that a
    law with more parameters must reproduce the log visibly better to be chosen.
    """
    def key(i):
        c = checks[i]
        return (not c.ok, c.score + c.nodes_score, abs(math.log((c.count + 1) / (c.median + 1))))
    order = sorted(range(len(checks)), key=key)
    if aics is None or len(order) < 2:
        return order
    top = checks[order[0]]
    s0 = top.score + top.nodes_score
    tied = [i for i in order if checks[i].ok == top.ok
            and checks[i].score + checks[i].nodes_score - s0 <= 2.0 * math.hypot(checks[i].score_se, top.score_se)]
    first = min(tied, key=lambda i: (aics[i], order.index(i)))
    return [first] + [i for i in order if i != first]
