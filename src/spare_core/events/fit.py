"""Fit lifetime laws to failure data: exponential, Weibull, log-normal, with right-censoring,
profile-likelihood confidence intervals, AIC and a model comparison; and the laws of a fleet
that is not one law: per-node gamma-frailty rate multipliers ("lemons") and a rate per period
(:func:`fit_node_rates`).

The data are durations: times between failures of one unit (:func:`durations` with
``level="unit"``), of the whole cluster (``level="system"``), or any array you bring. A
duration that ended without a failure (a unit still alive when the log ends) is
*right-censored*: it says "the lifetime is longer than this", and the likelihood uses the
survival ``S(x)`` for it instead of the density ``f(x)``. Dropping those durations, or
counting them as failures, biases the fit towards short lifetimes; here they enter the
likelihood properly.

Maximum likelihood:

- exponential (mean ``theta``): closed form ``theta = sum(x) / failures``;
- Weibull (shape ``k``, scale ``lambda``): for a fixed ``k`` the best scale is closed form
  (``lambda**k = sum(x**k) / failures``), so the shape is a one-dimensional maximisation
  of the profile log-likelihood (:func:`scipy.optimize.minimize_scalar`);
- log-normal (``mu``, ``sigma`` of ``log x``): closed form without censoring, otherwise
  :func:`scipy.optimize.minimize` from the uncensored estimate, log-likelihood through
  :func:`scipy.special.log_ndtr`.

With ``origin="stationary"`` (nodes found in service, the simulator's default ages) each
unit's first interval is a residual lifetime: density ``S(x) / mean`` and survival
``integral_x^inf S(u) du / mean`` (Weibull: the regularised upper incomplete gamma
``Q(1/k, (x/lambda)^k)``; log-normal: ``Phi(d1) - (x/mean) Phi(d2)``); both parameters are
then searched together. Whether a fitted law reproduces the log it came from is checked by
re-simulating the log's window (:mod:`spare_core.events.fit_check`).

Confidence intervals are profile-likelihood intervals: the set of values ``q`` of a
quantity whose profile log-likelihood ``max l(theta: q(theta) = q)`` is within
``chi2_1(confidence) / 2`` of the maximum (Wilks). Unlike Wald intervals they are
invariant to reparametrisation and asymmetric where the likelihood is (a shape or a mean
is positive); available for every parameter and for the mean (the MTBF).

References
----------
.. [1] J. F. Lawless, *Statistical Models and Methods for Lifetime Data*, 2nd ed., Wiley
   2003 (censored likelihoods, sections 2.2 and 4-5; profile likelihood intervals, 3.3).
.. [2] W. Q. Meeker and L. A. Escobar, *Statistical Methods for Reliability Data*, Wiley
   1998, chapter 8 (Weibull and log-normal ML with censoring, likelihood intervals).
.. [3] H. Akaike, "A new look at the statistical model identification", IEEE TAC 19(6),
   1974 (AIC); K. P. Burnham and D. R. Anderson, *Model Selection and Multimodel
   Inference*, Springer 2002 (Akaike weights).
.. [4] B. Schroeder and G. A. Gibson, "A large-scale study of failures in high-performance
   computing systems", IEEE TDSC 7(4), 2010 (Weibull shape < 1 between failures).
.. [5] J. F. Lawless, "Regression methods for Poisson process data", JASA 82(399), 1987
   (the gamma-frailty Poisson process and its closed-form marginal likelihood); P. Hougaard,
   *Analysis of Multivariate Survival Data*, Springer 2000, ch. 7.
.. [6] F. Proschan, "Theoretical explanation of observed decreasing failure rate",
   Technometrics 5(3), 1963 (pooling units of different constant rates looks like a
   decreasing hazard: a Weibull shape < 1).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, special, stats

from .._results import fields_dict
from .._validate import as_float, check_choice
from ..distributions import Exponential, LogNormal, Weibull
from .rates import Periods, RateSchedule, calendar_periods
from .trace import Trace

__all__ = ["LAWS", "NODE_LAWS", "ORIGINS", "MAX_FRAILTY", "Durations", "durations", "fit", "LifetimeFit", "compare",
           "Comparison", "fit_node_rates", "NodeRateFit", "merge_repeats"]

#: lifetime laws :func:`fit` knows
LAWS = ("exponential", "weibull", "lognormal")
#: laws a node-renewal model can take from a log: the lifetime laws and the gamma-frailty
#: exponential of :func:`fit_node_rates` (per-node rate multipliers)
NODE_LAWS = (*LAWS, "frailty")
#: how the units' clocks stand at the log's start (:func:`durations`)
ORIGINS = ("start", "first-failure", "stationary")
#: largest frailty variance fitted or simulated (gamma shape 1 / variance: beyond it almost every
#: multiplier underflows to 0 and a handful of nodes carry every failure)
MAX_FRAILTY = 1000.0
_PARAMS = {"exponential": ("mean",), "weibull": ("shape", "scale"), "lognormal": ("mu", "sigma")}
_QUANTITIES = {"exponential": ("mean",), "weibull": ("shape", "scale", "mean"), "lognormal": ("mu", "sigma", "mean")}


class Durations(NamedTuple):
    """Durations to fit: ``times`` (> 0) and ``observed`` (True: ended by a failure; False:
    right-censored, the unit was still alive). ``n_zero``: zero-length intervals dropped
    (simultaneous failures, or a failure at the trace's origin). ``residual``: with
    ``origin="stationary"``, True for each unit's first interval (a residual lifetime: the
    unit was already running at the log's start); None otherwise."""

    times: np.ndarray
    observed: np.ndarray
    n_zero: int
    residual: np.ndarray | None = None


def durations(trace, *, level="unit", origin="start") -> Durations:
    """Durations between failures in a :class:`~spare_core.events.trace.Trace`.

    Parameters
    ----------
    trace : Trace
    level : {"unit", "system"}, keyword-only
        ``"unit"``: each unit's times between its own failures (a node-renewal view: the
        failed node is replaced, its successor's lifetime starts at the failure); the
        interval from a unit's last failure to the trace's ``end`` is censored, and so is
        the whole window for units that never failed (``trace.n_units`` counts them).
        ``"system"``: times between the cluster's distinct failure instants (several units
        failing at one instant are one interruption); the interval after the last failure
        is censored.
    origin : {"start", "first-failure", "stationary"}, keyword-only
        ``"start"`` (default): every unit (or the system) is new at the trace's time 0, so
        the interval up to the first failure is a lifetime like the others; this is what
        the simulator assumes when it starts a job on fresh nodes (``node_ages = "new"``).
        ``"stationary"``: every unit has been in service for a long time at time 0, so the
        interval up to its first failure (or the whole window, for a unit that never failed)
        is a *residual* lifetime, flagged in :attr:`Durations.residual`; what the simulator
        assumes with stationary node ages (its default). ``"first-failure"``: intervals
        before a unit's first failure are dropped (the nodes' ages at the log's start are
        unknown; only renewals after a failure are counted), and units that never failed
        contribute nothing.

    Returns
    -------
    Durations
        Zero-length intervals are dropped and counted in ``n_zero``: they carry no
        information about a continuous lifetime law.

    Examples
    --------
    >>> tr = Trace([100.0, 300.0, 300.0], [0, 0, 1], n_units=3, end=1000.0)
    >>> d = durations(tr)
    >>> d.times.tolist(), d.observed.tolist()
    ([100.0, 200.0, 300.0, 700.0, 700.0, 1000.0], [True, True, True, False, False, False])
    >>> durations(tr, level="system").times.tolist()
    [100.0, 200.0, 700.0]
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"trace must be a Trace (see read_trace), got {type(trace).__name__}")
    check_choice(level, "level", ("unit", "system"))
    check_choice(origin, "origin", ORIGINS)
    stationary = origin == "stationary"
    if stationary:
        origin = "start"  # the same intervals; the first of each unit is a residual lifetime
    t, end = trace.times, trace.end
    if level == "system":
        inst = np.unique(t)
        if origin == "start":
            edges = np.concatenate(([0.0], inst))
        else:
            edges = inst
        obs_x = np.diff(edges)
        cens = [end - edges[-1]] if edges.size else ([end] if origin == "start" else [])
        x = np.concatenate((obs_x, cens))
        ok = np.concatenate((np.ones(obs_x.size, bool), np.zeros(len(cens), bool)))
        res = np.zeros(x.size, bool)
        res[:1] = stationary  # the gap from the log's start (to the first failure, or to its end)
    else:
        order = np.lexsort((t, trace.units))
        u, ts = trace.units[order], t[order]
        first = np.ones(u.size, bool)
        first[1:] = u[1:] != u[:-1]
        prev = np.empty_like(ts)
        prev[1:] = ts[:-1]
        prev[first] = 0.0
        keep = np.ones(u.size, bool) if origin == "start" else ~first
        obs_x = (ts - prev)[keep]
        last = np.ones(u.size, bool)
        last[:-1] = u[:-1] != u[1:]
        cens = end - ts[last]
        n_failing = cens.size
        if origin == "start":
            never = trace.n_units - int(np.count_nonzero(last))
            cens = np.concatenate((cens, np.full(never, end)))
        x = np.concatenate((obs_x, cens))
        ok = np.concatenate((np.ones(obs_x.size, bool), np.zeros(cens.size, bool)))
        # residual: each unit's first failure, and the whole window of a unit that never failed
        res = np.concatenate((first[keep], np.zeros(n_failing, bool), np.ones(cens.size - n_failing, bool)))
    pos = x > 0
    n_zero = int(np.count_nonzero(~pos))
    x, ok, res = x[pos], ok[pos], res[pos]
    x.setflags(write=False)
    ok.setflags(write=False)
    if not stationary:
        return Durations(x, ok, n_zero)
    res.setflags(write=False)
    return Durations(x, ok, n_zero, res)


def merge_repeats(trace, within) -> tuple[Trace, int]:
    """The log with each node's repeated reports of one failure merged into that failure.

    A failing part often reports the same fault again and again before it is pulled (a GPU's
    double-bit errors minutes apart). A renewal law reads each report as a new node failing at
    once, i.e. as extreme infant mortality: a Weibull shape far below 1 and a mean far beyond
    the window (docs/failures.md, "Checking a fit"). Here a failure of a node within
    ``within`` seconds of that node's previous failure (merged or not: a storm of reports is
    one failure as long as its gaps are short) is dropped.

    Parameters
    ----------
    trace : Trace
    within : float
        Seconds (>= 0; 0 merges only reports at the same instant).

    Returns
    -------
    (Trace, int)
        The merged log (same nodes, window, names and start; reasons kept for the failures
        kept) and the number of rows dropped.

    Examples
    --------
    >>> tr = Trace([10.0, 20.0, 500.0, 600.0], [1, 1, 1, 2], n_units=3, end=1000.0)
    >>> merged, dropped = merge_repeats(tr, 60.0)
    >>> merged.times.tolist(), dropped
    ([10.0, 500.0, 600.0], 1)
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"trace must be a Trace (see read_trace), got {type(trace).__name__}")
    w = as_float(within, "within", min_value=0.0)
    order = np.lexsort((trace.times, trace.units))
    t, u = trace.times[order], trace.units[order]
    drop = np.zeros(t.shape[0], bool)
    drop[1:] = (u[1:] == u[:-1]) & (t[1:] - t[:-1] <= w)
    keep = np.sort(order[~drop])  # original row order (times are sorted, ties keep the log's order)
    reasons = None if trace.reasons is None else [trace.reasons[i] for i in keep.tolist()]
    merged = Trace(trace.times[keep], trace.units[keep], n_units=trace.n_units, end=trace.end,
                   unit_names=trace.unit_names, reasons=reasons, start=trace.start, source=trace.source)
    return merged, int(np.count_nonzero(drop))


def _as_data(data, observed, level, origin):
    """``(durations, observed, residual or None)``."""
    if isinstance(data, Trace):
        if observed is not None:
            raise ValueError("observed is given by the trace itself (censoring at its end); do not pass it")
        d = durations(data, level=level, origin=origin)
        return d.times, d.observed, d.residual
    if isinstance(data, Durations):
        if observed is not None:
            raise ValueError("observed is part of the Durations; do not pass it")
        r = None if data.residual is None else np.asarray(data.residual, bool)
        return np.asarray(data.times, np.float64), np.asarray(data.observed, bool), r
    x = np.asarray(data)
    if x.dtype == np.bool_ or not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
        raise TypeError(f"data must be a Trace, Durations or an array of durations, got dtype {x.dtype}")
    x = np.array(x, dtype=np.float64).reshape(-1) if x.ndim == 1 else None
    if x is None:
        raise ValueError(f"durations must be 1-dimensional, got shape {np.shape(data)}")
    bad = np.flatnonzero(~(np.isfinite(x) & (x > 0)))
    if bad.size:
        raise ValueError(f"durations must be finite and > 0, got {x[bad[0]]} at index {bad[0]}")
    if observed is None:
        ok = np.ones(x.size, bool)
    else:
        ok = np.asarray(observed)
        if ok.dtype != np.bool_ or ok.shape != x.shape:
            raise ValueError(f"observed must be a bool array of shape {x.shape} (True: failure, "
                             f"False: censored), got dtype {ok.dtype} shape {ok.shape}")
        ok = ok.copy()
    return x, ok, None


# ---------------------------------------------------------------------------------------
# log-likelihoods (x > 0 durations, d: failure observed, c: censored)


class _Data:
    """Scaled durations; with residual lifetimes (``origin="stationary"``) also the four
    kinds of terms: ordinary failures and censorings, residual failures and censorings."""

    __slots__ = ("x", "d", "logx", "sum_logx_d", "n_fail", "scale", "r", "ord_d", "n_ord", "sum_logx_ord",
                 "n_res_fail", "res_cens", "not_res_cens", "rc_logx", "rc_w")

    def __init__(self, x, d, r=None):
        # rescale so x**k cannot overflow for large k; parameters are scaled back at the end
        self.scale = float(x.max())
        self.x = x / self.scale
        self.d = d
        self.logx = np.log(self.x)
        self.sum_logx_d = float(self.logx[d].sum())
        self.n_fail = int(np.count_nonzero(d))
        self.r = r if r is not None and r.any() else None
        if self.r is not None:
            r = self.r
            self.ord_d = d & ~r
            self.n_ord = int(np.count_nonzero(self.ord_d))
            self.sum_logx_ord = float(self.logx[self.ord_d].sum())
            self.n_res_fail = int(np.count_nonzero(d & r))
            self.res_cens = ~d & r
            self.not_res_cens = ~self.res_cens
            # the units that never failed all share one window: their survival terms (special
            # functions, the slow part) are computed once per distinct length, weighted
            self.rc_logx, w = np.unique(self.logx[self.res_cens], return_counts=True)
            self.rc_w = w.astype(np.float64)


def _ll_exponential(D: _Data, theta):
    # a residual lifetime of an exponential law is exponential: the same likelihood either way
    return -D.n_fail * math.log(theta) - float(D.x.sum()) / theta


def _log_gammaincc(a, z):
    """``log Q(a, z)`` (regularised upper incomplete gamma), also where Q underflows: there
    the asymptotic series ``z**(a-1) e**-z / Gamma(a) * (1 + (a-1)/z + (a-1)(a-2)/z**2)``
    (Abramowitz and Stegun 6.5.32), accurate for the z > 700 it is used at."""
    q = special.gammaincc(a, z)
    out = np.empty_like(z)
    ok = q > 1e-280
    out[ok] = np.log(q[ok])
    zb = z[~ok]
    if zb.size:
        series = 1.0 + (a - 1.0) / zb + (a - 1.0) * (a - 2.0) / (zb * zb)
        out[~ok] = (a - 1.0) * np.log(zb) - zb - math.lgamma(a) + np.log(np.maximum(series, 1e-300))
    return out


def _log1mexp(a):
    """``log(1 - exp(a))`` for ``a < 0`` without cancellation (Maechler 2012)."""
    a = np.minimum(a, -np.finfo(np.float64).tiny)
    return np.where(a > -math.log(2.0), np.log(-np.expm1(a)), np.log1p(-np.exp(a)))


def _weibull_log_scale(D: _Data, k):
    """``log lambda`` maximising the likelihood at shape ``k``: ``k log lambda = log(sum x^k / D)``."""
    return (special.logsumexp(k * D.logx) - math.log(D.n_fail)) / k


def _ll_weibull(D: _Data, k, log_lam):
    z = k * (D.logx - log_lam)
    if D.r is None:
        return D.n_fail * math.log(k) - D.n_fail * k * log_lam + (k - 1.0) * D.sum_logx_d - float(np.exp(z).sum())
    # residual lifetimes (Cox 1962): density S(x) / mean, survival Q(1/k, (x/lambda)^k)
    ez = np.exp(z)
    ll = D.n_ord * (math.log(k) - k * log_lam) + (k - 1.0) * D.sum_logx_ord - float(ez[D.not_res_cens].sum())
    ll -= D.n_res_fail * (log_lam + math.lgamma(1.0 + 1.0 / k))
    return ll + float(D.rc_w @ _log_gammaincc(1.0 / k, np.exp(k * (D.rc_logx - log_lam))))


def _ll_weibull_profile_shape(D: _Data, k):
    # at the best scale, sum((x/lambda)^k) equals the number of failures
    return D.n_fail * math.log(k) - D.n_fail * k * _weibull_log_scale(D, k) + (k - 1.0) * D.sum_logx_d - D.n_fail


def _ll_lognormal(D: _Data, mu, sigma):
    z = (D.logx - mu) / sigma
    if D.r is not None:
        return _ll_lognormal_residual(D, mu, sigma, z)
    zd = z[D.d]
    ll = -0.5 * float(zd @ zd) - D.n_fail * (math.log(sigma) + 0.5 * math.log(2 * math.pi)) - D.sum_logx_d
    if D.n_fail < z.size:
        ll += float(special.log_ndtr(-z[~D.d]).sum())
    return ll


def _ll_lognormal_residual(D: _Data, mu, sigma, z):
    zd = z[D.ord_d]
    ll = -0.5 * float(zd @ zd) - D.n_ord * (math.log(sigma) + 0.5 * math.log(2 * math.pi)) - D.sum_logx_ord
    ll += float(special.log_ndtr(-z[~D.d & ~D.r]).sum())
    log_mean = mu + 0.5 * sigma * sigma
    # a residual failure: density S(x) / mean
    ll += float(special.log_ndtr(-z[D.d & D.r]).sum()) - D.n_res_fail * log_mean
    # a residual survival: E[(X - x)+] / mean = Phi(d1) - (x / mean) Phi(d2), d2 = -z, d1 = d2 + sigma
    if D.rc_w.size:
        zc = (D.rc_logx - mu) / sigma
        l1 = special.log_ndtr(sigma - zc)
        l2 = special.log_ndtr(-zc)
        ll += float(D.rc_w @ (l1 + _log1mexp(D.rc_logx - log_mean + l2 - l1)))
    return ll


def _maximise_1d(f, x0, step=0.5):
    """argmax of a unimodal ``f`` near ``x0`` (Brent, downhill bracketing from x0 +- step)."""
    res = optimize.minimize_scalar(lambda v: -f(v), bracket=(x0 - step, x0 + step), method="brent",
                                   options={"xtol": 1e-10})
    return float(res.x), -float(res.fun)


def _mle(law, D: _Data):
    """``(params in the scaled time unit, log-likelihood)``."""
    if law == "exponential":
        theta = float(D.x.sum()) / D.n_fail
        return (theta,), _ll_exponential(D, theta)
    if law == "weibull" and D.r is not None:
        return _mle_weibull_residual(D)
    if law == "weibull":
        # the profile in log k is smooth and unimodal; start from k = 1 (exponential)
        lk, ll = _maximise_1d(lambda v: _ll_weibull_profile_shape(D, math.exp(v)), 0.0)
        k = math.exp(lk)
        return (k, math.exp(_weibull_log_scale(D, k))), ll
    ld = D.logx[D.d]
    mu0 = float(ld.mean())
    s0 = float(ld.std()) if ld.size > 1 and ld.std() > 0 else 1.0
    if D.n_fail == D.x.size:
        return (mu0, s0), _ll_lognormal(D, mu0, s0)
    res = optimize.minimize(lambda p: -_ll_lognormal(D, p[0], math.exp(p[1])), x0=[mu0, math.log(s0)],
                            method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
    res = optimize.minimize(lambda p: -_ll_lognormal(D, p[0], math.exp(p[1])), x0=res.x, method="BFGS",
                            options={"gtol": 1e-9})
    return (float(res.x[0]), math.exp(float(res.x[1]))), -float(res.fun)


def _mle_weibull_residual(D: _Data):
    """Weibull ML with residual lifetimes: no closed-form scale, so both parameters are searched
    (log shape, log scale), from the best of a few shapes at the exponential's mean."""
    mean0 = float(D.x.sum()) / D.n_fail  # the exponential's mean: the rate a stationary law must match

    def nll(p):
        v = -_ll_weibull(D, math.exp(p[0]), p[1])
        return v if math.isfinite(v) else 1e300

    starts = [[math.log(k), math.log(mean0) - math.lgamma(1.0 + 1.0 / k)] for k in (0.3, 0.5, 0.8, 1.0, 1.5, 3.0)]
    x0 = min(starts, key=nll)
    res = optimize.minimize(nll, x0=x0, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
    res = optimize.minimize(nll, x0=res.x, method="BFGS", options={"gtol": 1e-9})
    return (math.exp(float(res.x[0])), math.exp(float(res.x[1]))), -float(res.fun)


def _profile(law, q, D: _Data, p_hat):
    """``(transform, l_p)``: the profile log-likelihood of quantity ``q`` as a function of its
    transformed value (log for positive quantities), maximised over the other parameter."""
    if law == "exponential":
        return "log", lambda v: _ll_exponential(D, math.exp(v))
    if law == "weibull":
        k_hat = p_hat[0]
        if q == "shape" and D.r is not None:  # no closed-form scale: maximise over it
            return "log", lambda v: _maximise_1d(lambda ll_: _ll_weibull(D, math.exp(v), ll_), math.log(p_hat[1]),
                                                 0.1)[1]
        if q == "shape":
            return "log", lambda v: _ll_weibull_profile_shape(D, math.exp(v))
        if q == "scale":
            return "log", lambda v: _maximise_1d(lambda lk: _ll_weibull(D, math.exp(lk), v), math.log(k_hat), 0.1)[1]

        def mean_profile(v):  # log mean = log lambda + lgamma(1 + 1/k)
            return _maximise_1d(
                lambda lk: _ll_weibull(D, math.exp(lk), v - math.lgamma(1.0 + math.exp(-lk))), math.log(k_hat), 0.1
            )[1]
        return "log", mean_profile
    mu_hat, s_hat = p_hat
    if q == "mu":
        return "linear", lambda v: _maximise_1d(lambda ls: _ll_lognormal(D, v, math.exp(ls)), math.log(s_hat), 0.1)[1]
    if q == "sigma":
        return "log", lambda v: _maximise_1d(lambda m: _ll_lognormal(D, m, math.exp(v)), mu_hat, 0.1 * s_hat)[1]
    return "log", lambda v: _maximise_1d(
        lambda ls: _ll_lognormal(D, v - 0.5 * math.exp(2 * ls), math.exp(ls)), math.log(s_hat), 0.1)[1]


def _quantity(law, q, p):
    """Value of quantity ``q`` at parameters ``p`` (scaled time unit)."""
    if q in _PARAMS[law]:
        return p[_PARAMS[law].index(q)]
    if law == "weibull":
        return p[1] * math.gamma(1.0 + 1.0 / p[0])
    return math.exp(p[0] + 0.5 * p[1] ** 2)


def _root_side(g, v0, step, direction, max_steps=60):
    """Where ``g`` (> 0 at ``v0``) crosses 0 going ``direction`` (+1/-1) from ``v0``; None if
    it never does within ``max_steps`` doublings (an unbounded interval)."""
    a, ga = v0, g(v0)
    for _ in range(max_steps):
        b = a + direction * step
        try:
            gb = g(b)
        except (OverflowError, ValueError, ZeroDivisionError):
            gb = -math.inf
        if not math.isfinite(gb) or gb < 0:
            if not math.isfinite(gb):  # shrink towards a finite negative value
                lo, hi = a, b
                for _ in range(200):
                    mid = 0.5 * (lo + hi)
                    try:
                        gm = g(mid)
                    except (OverflowError, ValueError, ZeroDivisionError):
                        gm = -math.inf
                    if math.isfinite(gm) and gm < 0:
                        b, gb = mid, gm
                        break
                    if not math.isfinite(gm):
                        hi = mid
                    else:
                        lo, a, ga = mid, mid, gm
                else:
                    return None
            return optimize.brentq(g, min(a, b), max(a, b), xtol=1e-12, rtol=1e-12)
        a, ga = b, gb
        step *= 2.0
    return None


class LifetimeFit:
    """A maximum-likelihood fit of one lifetime law (returned by :func:`fit`).

    Attributes
    ----------
    law : str
        ``"exponential"``, ``"weibull"`` or ``"lognormal"``.
    distribution : Distribution
        The fitted :mod:`spare_core.distributions` object (times in the data's unit).
    params : dict
        ``{"mean"}``, ``{"shape", "scale"}`` or ``{"mu", "sigma"}`` (``mu``, ``sigma`` of
        ``log x``).
    loglik : float
        Maximised log-likelihood (densities in the data's time unit).
    n, n_failures, n_censored : int
        Durations, of which ended by a failure, of which censored.
    confidence : float
        Level of :meth:`interval` by default.
    origin : str
        How the units' clocks stood at the log's start (:func:`durations`): ``"stationary"``
        fits the first interval of each unit as a residual lifetime.

    Notes
    -----
    ``aic = 2 p - 2 loglik`` and ``bic = p log(n_failures) - 2 loglik`` (``p`` parameters;
    with censoring the number of failures is the BIC's sample size, Volinsky and Raftery,
    Biometrics 2000).
    """

    __slots__ = ("law", "distribution", "params", "loglik", "n", "n_failures", "n_censored", "confidence",
                 "origin", "check", "_data", "_p", "_cache")

    def __init__(self, law, p, loglik, D, confidence, origin="start"):
        s = D.scale
        if law == "exponential":
            params = {"mean": p[0] * s}
            dist = Exponential(params["mean"])
        elif law == "weibull":
            params = {"shape": p[0], "scale": p[1] * s}
            dist = Weibull(params["shape"], params["scale"])
        else:
            params = {"mu": p[0] + math.log(s), "sigma": p[1]}
            dist = LogNormal.from_mu_sigma(params["mu"], params["sigma"])
        self.law, self.distribution, self.params = law, dist, params
        # the likelihood was computed on x / s: densities in the data's unit differ by -log s each
        self.loglik = loglik - D.n_fail * math.log(s)
        self.n, self.n_failures = int(D.x.size), D.n_fail
        self.n_censored = self.n - self.n_failures
        self.confidence = confidence
        self.origin = origin
        #: the :class:`~spare_core.events.fit_check.FitCheck` of this fit against its log, when one was run
        #: (a scenario file's ``law = "fit"`` always runs one)
        self.check = None
        self._data, self._p, self._cache = D, p, {}

    def _key(self):
        return (self.law, tuple(sorted(self.params.items())), self.loglik, self.n, self.n_failures,
                self.n_censored, self.confidence, self.origin)

    def __eq__(self, other):
        # by value, so that a pickled or deep-copied scenario file equals the one loaded
        if not isinstance(other, LifetimeFit):
            return NotImplemented
        return self._key() == other._key() and self.distribution == other.distribution

    def __hash__(self):
        return hash(self._key())

    @property
    def n_params(self) -> int:
        return len(_PARAMS[self.law])

    @property
    def aic(self) -> float:
        """Akaike information criterion ``2 p - 2 loglik`` (lower is better)."""
        return 2.0 * self.n_params - 2.0 * self.loglik

    @property
    def bic(self) -> float:
        """Bayesian information criterion ``p log(n_failures) - 2 loglik``."""
        return self.n_params * math.log(self.n_failures) - 2.0 * self.loglik

    @property
    def mean(self) -> float:
        """Mean of the fitted law (the MTBF of the level that was fitted)."""
        return self.distribution.mean

    def interval(self, quantity, confidence=None) -> tuple[float, float]:
        """Profile-likelihood confidence interval of a parameter or of ``"mean"``.

        Parameters
        ----------
        quantity : str
            One of :attr:`params`' names or ``"mean"``.
        confidence : float, optional
            In (0, 1); default :attr:`confidence`.

        Returns
        -------
        (low, high) : tuple of float
            ``0.0`` / ``inf`` (``-inf`` / ``inf`` for ``mu``) where the likelihood never
            drops far enough (too few failures to bound that side).
        """
        check_choice(quantity, "quantity", self._quantity_names())
        conf = self.confidence if confidence is None else as_float(
            confidence, "confidence", min_value=0.0, strict_min=True, max_value=1.0 - 1e-12)
        key = (quantity, conf)
        if key not in self._cache:
            self._cache[key] = self._interval(quantity, conf)
        return self._cache[key]

    def _quantity_names(self) -> tuple:
        return _QUANTITIES[self.law]

    def _interval(self, q, conf):
        D, p = self._data, self._p
        ll_hat = self.loglik + D.n_fail * math.log(D.scale)  # scaled-unit likelihood
        crit = 0.5 * float(stats.chi2.ppf(conf, 1))
        transform, lp = _profile(self.law, q, D, p)
        q_hat = _quantity(self.law, q, p)
        v0 = math.log(q_hat) if transform == "log" else q_hat
        g = lambda v: lp(v) - (ll_hat - crit)  # noqa: E731
        # first step: about one standard error (relative 1/sqrt(failures)), then doubling
        step = (1.0 if transform == "log" else p[1]) / math.sqrt(D.n_fail)
        lo, hi = _root_side(g, v0, step, -1), _root_side(g, v0, step, +1)
        if transform == "log":
            lo = 0.0 if lo is None else math.exp(lo)
            hi = math.inf if hi is None else math.exp(hi)
        else:
            lo = -math.inf if lo is None else lo
            hi = math.inf if hi is None else hi
        # back to the data's time unit
        if q in ("mean", "scale"):
            lo, hi = lo * D.scale, hi * D.scale
        elif q == "mu":
            lo, hi = lo + math.log(D.scale), hi + math.log(D.scale)
        return (lo, hi)

    @property
    def intervals(self) -> dict:
        """Every quantity's interval at :attr:`confidence` (``{name: (low, high)}``)."""
        return {q: self.interval(q) for q in self._quantity_names()}

    def __repr__(self):
        ps = ", ".join(f"{k}={v:.6g}" for k, v in self.params.items())
        return (f"LifetimeFit({self.law}: {ps}; mean={self.mean:.6g}, loglik={self.loglik:.6g}, "
                f"aic={self.aic:.6g}; {self.n_failures} failures, {self.n_censored} censored)")

    def to_dict(self) -> dict:
        """The attributes and ``aic``, ``bic`` as a JSON-serialisable dict."""
        return fields_dict(self, ("law", "distribution", "params", "loglik", "n", "n_failures", "n_censored",
                                  "confidence", "origin", "aic", "bic", "check"))


def fit(data, law="weibull", *, observed=None, level="unit", origin="start", confidence=0.95) -> LifetimeFit:
    """Maximum-likelihood fit of a lifetime law, with right-censoring.

    Parameters
    ----------
    data : Trace or Durations or array_like of float
        A trace (turned into durations by :func:`durations` with ``level`` and ``origin``),
        durations from :func:`durations`, or raw durations (finite, > 0).
    law : {"exponential", "weibull", "lognormal"}
    observed : array_like of bool, optional, keyword-only
        Raw durations only: False marks a right-censored duration (default all True).
    level, origin : str, keyword-only
        See :func:`durations` (traces only).
    confidence : float, keyword-only
        Default level of the profile-likelihood intervals (0.95).

    Returns
    -------
    LifetimeFit

    Raises
    ------
    ValueError
        Unknown law, non-positive or non-finite durations, fewer than 2 failures (1 for
        the exponential): the likelihood has no interior maximum.

    Notes
    -----
    Every quantity is estimated in a time unit rescaled by the largest duration, so
    ``x**k`` cannot overflow; results are scaled back. Cross-checked in the tests against
    :func:`scipy.stats.weibull_min.fit` / :func:`scipy.stats.lognorm.fit` (uncensored and
    with :class:`scipy.stats.CensoredData`).

    Examples
    --------
    >>> rng = np.random.default_rng(7)
    >>> f = fit(Weibull(0.7, 3600.0).sample(rng, 2000), "weibull")
    >>> round(f.params["shape"], 1), f.distribution.kind
    (0.7, 'weibull')
    >>> lo, hi = f.interval("shape")
    >>> lo < 0.7 < hi
    True
    """
    check_choice(law, "law", LAWS)
    conf = as_float(confidence, "confidence", min_value=0.0, strict_min=True, max_value=1.0 - 1e-12)
    x, ok, res = _as_data(data, observed, level, origin)
    need = 1 if law == "exponential" else 2
    n_fail = int(np.count_nonzero(ok))
    if n_fail < need:
        raise ValueError(f"fitting a {law} needs at least {need} observed failure(s), got {n_fail} "
                         f"(with {x.size - n_fail} censored durations)")
    if law != "exponential" and np.unique(x[ok]).size < 2:
        raise ValueError(f"fitting a {law} needs at least 2 distinct failure durations, got all equal to {x[ok][0]}")
    D = _Data(x, ok, res)
    p, ll = _mle(law, D)
    return LifetimeFit(law, p, ll, D, conf, "stationary" if D.r is not None else _origin_of(data, origin))


def _origin_of(data, origin):
    return origin if isinstance(data, Trace) else "start"


class Comparison(NamedTuple):
    """Fits of several laws to the same data, best (lowest AIC) first.

    ``delta_aic[i] = fits[i].aic - fits[0].aic``; ``weights`` are Akaike weights
    ``exp(-delta/2) / sum`` (relative support); ``exponential_vs_weibull_p`` is the
    likelihood-ratio test's p-value of "the hazard is constant" (Weibull shape 1) against
    the Weibull (chi-square with 1 degree of freedom; None if either law was not fitted).
    """

    fits: tuple
    delta_aic: tuple
    weights: tuple
    exponential_vs_weibull_p: float | None

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict (each fit as :meth:`LifetimeFit.to_dict`)."""
        return fields_dict(self)

    @property
    def best(self) -> LifetimeFit:
        return self.fits[0]

    def __repr__(self):
        rows = [f"{'law':<12} {'loglik':>12} {'aic':>12} {'delta':>8} {'weight':>7} {'mean':>12}"]
        for f, d, w in zip(self.fits, self.delta_aic, self.weights):
            rows.append(f"{f.law:<12} {f.loglik:>12.6g} {f.aic:>12.6g} {d:>8.3g} {w:>7.3f} {f.mean:>12.6g}")
        if self.exponential_vs_weibull_p is not None:
            rows.append(f"constant hazard (exponential) vs weibull: p = {self.exponential_vs_weibull_p:.3g}")
        return "\n".join(rows)


def compare(data, laws=LAWS, *, observed=None, level="unit", origin="start") -> Comparison:
    """Fit several laws to the same durations and rank them by AIC.

    Parameters
    ----------
    data, observed, level, origin
        As in :func:`fit`.
    laws : sequence of str
        Laws to fit (default all of :data:`LAWS`).

    Returns
    -------
    Comparison

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> c = compare(Weibull(0.6, 100.0).sample(rng, 3000))
    >>> c.best.law, c.exponential_vs_weibull_p < 1e-6
    ('weibull', True)
    """
    if isinstance(laws, str):
        laws = (laws,)
    laws = tuple(check_choice(law, "law", LAWS) for law in laws)
    if not laws or len(set(laws)) != len(laws):
        raise ValueError(f"laws must be distinct names from {LAWS}, got {laws}")
    x, ok, res = _as_data(data, observed, level, origin)
    d = Durations(x, ok, 0, res)
    fits = sorted((fit(d, law) for law in laws), key=lambda f: f.aic)
    if isinstance(data, Trace):
        for f in fits:
            f.origin = origin
    best = fits[0].aic
    delta = tuple(f.aic - best for f in fits)
    w = np.exp(-0.5 * np.asarray(delta))
    by = {f.law: f for f in fits}
    p = None
    if "exponential" in by and "weibull" in by:
        lr = max(0.0, 2.0 * (by["weibull"].loglik - by["exponential"].loglik))
        p = float(stats.chi2.sf(lr, 1))
    return Comparison(tuple(fits), delta, tuple(float(v) for v in w / w.sum()), p)


# ---------------------------------------------------------------------------------------
# heterogeneous nodes and a rate that changes over time (exponential node failures)


class _Counts:
    """What the node-rate likelihood needs from a trace: failures per node (as a histogram),
    failures per period, the periods' lengths."""

    __slots__ = ("n", "M", "T", "n_gt", "m_p", "e_p", "const")

    def __init__(self, trace, periods):
        per_node = trace.failures_per_unit()
        self.n, self.M, self.T = trace.n_units, int(per_node.sum()), float(trace.end)
        hist = np.bincount(per_node)
        # n_gt[j] = nodes with more than j failures, j = 0 .. max - 1
        self.n_gt = (self.n - np.cumsum(hist))[:-1].astype(np.float64)
        self.m_p = periods.counts(trace.times)
        self.e_p = periods.lengths
        m = self.m_p[self.m_p > 0].astype(np.float64)
        # sum_p m_p log(m_p / (M e_p)): the per-period rates' shape at their maximum
        self.const = float((m * np.log(m / (self.M * self.e_p[self.m_p > 0]))).sum())

    def ll(self, big_lambda, v):
        """Log-likelihood at ``big_lambda`` failures expected per node over the window and
        frailty variance ``v`` (period rates at their maximum for that total)."""
        base = self.const + self.M * math.log(big_lambda)
        if v <= 0.0:
            return base - self.n * big_lambda
        j = np.arange(self.n_gt.shape[0], dtype=np.float64)
        # log Gamma(1/v + n) - log Gamma(1/v) + n log v = sum_{j < n} log(1 + j v): no cancellation
        a = float(self.n_gt @ np.log1p(j * v))
        return base + a - (self.n / v + self.M) * math.log1p(big_lambda * v)

    def v_hat(self, big_lambda):
        """The frailty variance maximising :meth:`ll` at ``big_lambda`` (0: no overdispersion)."""
        j = np.arange(self.n_gt.shape[0], dtype=np.float64)
        # derivative at v = 0: sum_i n_i (n_i - 1) / 2 - n Lambda^2 / 2 + (n Lambda - M) Lambda
        slope0 = float(self.n_gt @ j) - 0.5 * self.n * big_lambda ** 2 + (self.n * big_lambda - self.M) * big_lambda
        if slope0 <= 0:
            return 0.0
        lo, hi = math.log(1e-12), math.log(MAX_FRAILTY)
        grid = np.linspace(lo, hi, 57)
        vals = [self.ll(big_lambda, math.exp(g)) for g in grid]
        i = int(np.argmax(vals))
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.shape[0] - 1)]
        res = optimize.minimize_scalar(lambda g: -self.ll(big_lambda, math.exp(g)), bounds=(a, b), method="bounded",
                                       options={"xatol": 1e-10})
        return math.exp(float(res.x)) if -res.fun >= vals[i] else math.exp(float(grid[i]))


class NodeRateFit(LifetimeFit):
    """Exponential node failures fitted to a log: one rate, optionally per-node gamma-frailty
    multipliers ("lemons") and per-period rates (returned by :func:`fit_node_rates`).

    Attributes
    ----------
    law : str
        ``"frailty"`` (gamma-frailty multipliers) or ``"exponential"``.
    params : dict
        ``"mean"``: a node's mean time between failures over the log's window (seconds, the
        window's length over the failures per node); ``"frailty"``: the variance of the
        per-node rate multipliers (``law == "frailty"``).
    distribution : Exponential
        A node's lifetime at multiplier 1, at the window's average rate.
    periods : Periods or None
        The periods with their own rate (None: one rate for the whole window).
    period_counts : numpy.ndarray
        Failures logged in each period (one entry without periods).
    period_rates : numpy.ndarray
        Failures per node per second in each period (maximum likelihood: count over nodes x
        length).
    frailty_p : float
        Likelihood-ratio p-value of "every node alike" (frailty 0) against the frailty law
        (half a chi-square with one degree of freedom: the null is on the boundary, Self and
        Liang 1987); None for ``law == "exponential"``.
    constant_rate_p : float or None
        Likelihood-ratio p-value of one rate for the whole window against the per-period
        rates (chi-square, periods - 1 degrees of freedom); None without periods.
    n, n_failures, n_censored : int
        Nodes, failures, nodes that never failed.
    end : float
        Length of the window (seconds).

    Notes
    -----
    The likelihood of the failure times with node ``i`` failing as a Poisson process of rate
    ``Z_i lambda(t)``, ``Z_i ~ Gamma(1/v, v)`` integrated out (closed form, [5]_)::

        sum_p m_p log lambda_p + sum_i [log Gamma(1/v + n_i) - log Gamma(1/v) + n_i log v
                                         - (1/v + n_i) log(1 + v Lambda)]

    with ``n_i`` node ``i``'s failures, ``m_p`` period ``p``'s, ``Lambda = sum_p lambda_p e_p``
    the expected failures per node over the window. Every node shares the window, so the
    maximum separates: ``lambda_p = m_p / (n e_p)`` (the per-period rates do not depend on
    ``v``), ``Lambda = M / n``, and ``v`` maximises a one-dimensional function (a negative
    binomial's dispersion). A multiplier belongs to the node's slot: replaced nodes keep it.
    """

    __slots__ = ("periods", "period_counts", "period_rates", "frailty_p", "constant_rate_p", "end", "_counts")

    def __init__(self, counts: _Counts, periods, v, loglik, confidence):
        self.law = "frailty" if v is not None else "exponential"
        mean = counts.T * counts.n / counts.M
        self.params = {"mean": mean} if v is None else {"mean": mean, "frailty": v}
        self.distribution = Exponential(mean)
        self.loglik = loglik
        self.n, self.n_failures = counts.n, counts.M
        self.n_censored = int(counts.n - counts.n_gt[0]) if counts.n_gt.shape[0] else counts.n
        self.confidence = confidence
        self.origin = "stationary"
        self.check = None
        self.periods = periods
        self.period_counts = counts.m_p.copy()
        self.period_rates = counts.m_p / (counts.n * counts.e_p)
        for a in (self.period_counts, self.period_rates):
            a.setflags(write=False)
        self.end = counts.T
        self._counts = counts
        self._data, self._p, self._cache = None, None, {}
        lam = counts.M / counts.n
        self.frailty_p = None
        if v is not None:
            lr = max(0.0, 2.0 * (counts.ll(lam, v) - counts.ll(lam, 0.0)))
            self.frailty_p = 1.0 if v == 0 else float(0.5 * stats.chi2.sf(lr, 1))
        self.constant_rate_p = None
        if periods is not None and len(periods) > 1:
            e, m = counts.e_p, counts.m_p.astype(np.float64)
            ok = m > 0
            lr = 2.0 * float((m[ok] * np.log(m[ok] * counts.T / (counts.M * e[ok]))).sum())
            self.constant_rate_p = float(stats.chi2.sf(max(lr, 0.0), len(periods) - 1))

    def _key(self):
        return (super()._key(), self.period_counts.tobytes(), None if self.periods is None else self.periods.edges.tobytes())

    @property
    def n_params(self) -> int:
        return 1 + (self.law == "frailty") + (len(self.periods) - 1 if self.periods is not None else 0)

    @property
    def varies(self) -> bool:
        """Whether the rate changes from period to period."""
        return self.periods is not None and len(self.periods) > 1

    def rate_at(self, t) -> float:
        """Failures per node per second in force at ``t`` seconds from the log's start (the
        last period's rate after the window)."""
        if self.periods is None:
            return float(self.period_rates[0])
        j = int(np.searchsorted(self.periods.edges[1:-1], float(t), side="right"))
        return float(self.period_rates[j])

    def schedule(self, at=0.0):
        """The rate seen by a job starting ``at`` seconds from the log's start, as a
        :class:`~spare_core.events.rates.RateSchedule` of levels relative to the rate at ``at``
        (None without periods).

        Raises
        ------
        ValueError
            No failure was logged in the period holding ``at`` (a zero rate has no MTBF).
        """
        if not self.varies:
            return None
        r0 = self.rate_at(at)
        if not r0 > 0:
            raise ValueError(f"no failure was logged in the period holding {at / 86400:.4g} d: the rate there is 0")
        return RateSchedule.from_periods(self.periods.edges, self.period_rates / r0, at=at)

    def _quantity_names(self) -> tuple:
        # "mean" (the node MTBF over the window) and "frailty": :meth:`LifetimeFit.interval` gives them
        return tuple(self.params)

    def _interval(self, q, conf):
        c = self._counts
        crit = 0.5 * float(stats.chi2.ppf(conf, 1))
        lam_hat = c.M / c.n
        v_hat = self.params.get("frailty")
        target = self.loglik - crit
        if q == "frailty":
            def g(lv):
                return c.ll(lam_hat, math.exp(lv)) - target
            lo = 0.0
            if c.ll(lam_hat, 0.0) < target:  # the likelihood drops below the cut before v = 0
                a = math.log(v_hat)
                b = a - 1.0
                while g(b) > 0 and b > math.log(1e-300):
                    b -= 2.0 * (a - b)
                lo = math.exp(optimize.brentq(g, b, a, xtol=1e-12)) if g(b) <= 0 else 0.0
            hi = _root_side(g, math.log(max(v_hat, 1e-12)), 1.0 / math.sqrt(c.M), +1)
            hi = math.inf if hi is None or math.exp(hi) >= MAX_FRAILTY else math.exp(hi)
            return (lo, hi)

        def prof(llam):
            lam = math.exp(llam)
            v = c.v_hat(lam) if v_hat is not None else 0.0
            return c.ll(lam, v) - target
        v0 = math.log(lam_hat)
        lo = _root_side(prof, v0, 1.0 / math.sqrt(c.M), -1)
        hi = _root_side(prof, v0, 1.0 / math.sqrt(c.M), +1)
        # the mean is the window over the failures per node: its bounds swap
        return (0.0 if hi is None else c.T / math.exp(hi), math.inf if lo is None else c.T / math.exp(lo))

    def __repr__(self):
        ps = ", ".join(f"{k}={v:.6g}" for k, v in self.params.items())
        per = "" if self.periods is None else f", {len(self.periods)} periods"
        return (f"NodeRateFit({self.law}{per}: {ps}; loglik={self.loglik:.6g}, aic={self.aic:.6g}; "
                f"{self.n_failures} failures of {self.n} nodes)")

    def to_dict(self) -> dict:
        """The fields of :meth:`LifetimeFit.to_dict` and the periods, their counts and rates,
        ``frailty_p`` and ``constant_rate_p``."""
        out = fields_dict(self, ("law", "distribution", "params", "loglik", "n", "n_failures", "n_censored",
                                 "confidence", "origin", "aic", "bic", "check", "period_counts", "period_rates",
                                 "frailty_p", "constant_rate_p", "end"))
        out["periods"] = None if self.periods is None else {"edges": self.periods.edges.tolist(),
                                                            "labels": list(self.periods.labels)}
        return out


def fit_node_rates(trace, *, frailty=True, periods=None, confidence=0.95) -> NodeRateFit:
    """Fit exponential node failures to a log: per-node gamma-frailty rate multipliers
    (heterogeneous nodes: lemons keep failing) and/or a rate per period.

    Parameters
    ----------
    trace : Trace
        The log; every one of its ``n_units`` nodes is observed over ``[0, end]``.
    frailty : bool, default True
        Fit the variance of per-node rate multipliers (``law = "frailty"``); False: every
        node alike (``"exponential"``).
    periods : Periods or str or float, optional
        A rate per period: a :class:`~spare_core.events.rates.Periods`, or a spec of
        :func:`~spare_core.events.rates.calendar_periods` (``"year"``, ``"auto"``, seconds).
        None (default): one rate for the whole window.
    confidence : float, default 0.95
        Level of the profile-likelihood intervals.

    Returns
    -------
    NodeRateFit

    Raises
    ------
    ValueError
        An empty log or window (nothing to fit).

    Examples
    --------
    Nodes whose rates differ (gamma multipliers of variance 4) on a constant rate: the
    variance comes back within its interval, and a homogeneous law is rejected.

    >>> from spare_core.events.trace import Trace
    >>> rng = np.random.default_rng(1)
    >>> z = rng.gamma(0.25, 4.0, 3000)                  # mean 1, variance 4
    >>> n = rng.poisson(z * 2.0)                         # 2 failures per node on average
    >>> units = np.repeat(np.arange(3000), n)
    >>> times = np.sort(rng.uniform(0, 1e6, units.size))
    >>> f = fit_node_rates(Trace(times, rng.permutation(units), n_units=3000, end=1e6))
    >>> lo, hi = f.interval("frailty")
    >>> bool(lo < 4.0 < hi), f.frailty_p < 1e-6
    (True, True)
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"trace must be a Trace (see read_trace), got {type(trace).__name__}")
    conf = as_float(confidence, "confidence", min_value=0.0, strict_min=True, max_value=1.0 - 1e-12)
    if not trace.end > 0 or trace.n_events == 0:
        raise ValueError(f"fitting node rates needs at least one failure in a window of length > 0, got "
                         f"{trace.n_events} failures over {trace.end:g} s")
    if periods is None:
        per = None
        cut = Periods([0.0, trace.end], ["the whole window"])
    else:
        per = periods if isinstance(periods, Periods) else calendar_periods(trace.end, periods, start=trace.start)
        if per.edges[-1] != trace.end:
            raise ValueError(f"periods must end at the log's end {trace.end:g} s, got {per.edges[-1]:g}")
        cut = per
    c = _Counts(trace, cut)
    lam = c.M / c.n
    v = c.v_hat(lam) if frailty else None
    return NodeRateFit(c, per, v, c.ll(lam, v or 0.0), conf)
