"""Fit lifetime laws to failure data: exponential, Weibull, log-normal, with right-censoring,
profile-likelihood confidence intervals, AIC and a model comparison.

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
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, special, stats

from .._results import fields_dict
from .._validate import as_float, check_choice
from ..distributions import Exponential, LogNormal, Weibull
from .trace import Trace

__all__ = ["LAWS", "Durations", "durations", "fit", "LifetimeFit", "compare", "Comparison"]

#: lifetime laws :func:`fit` knows
LAWS = ("exponential", "weibull", "lognormal")
_PARAMS = {"exponential": ("mean",), "weibull": ("shape", "scale"), "lognormal": ("mu", "sigma")}
_QUANTITIES = {"exponential": ("mean",), "weibull": ("shape", "scale", "mean"), "lognormal": ("mu", "sigma", "mean")}


class Durations(NamedTuple):
    """Durations to fit: ``times`` (> 0) and ``observed`` (True: ended by a failure; False:
    right-censored, the unit was still alive). ``n_zero``: zero-length intervals dropped
    (simultaneous failures, or a failure at the trace's origin)."""

    times: np.ndarray
    observed: np.ndarray
    n_zero: int


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
    origin : {"start", "first-failure"}, keyword-only
        ``"start"`` (default): every unit (or the system) is new at the trace's time 0, so
        the interval up to the first failure is a lifetime like the others; this is what
        the simulator assumes when it starts a job on fresh nodes. ``"first-failure"``:
        intervals before a unit's first failure are dropped (the nodes' ages at the log's
        start are unknown; only renewals after a failure are counted), and units that
        never failed contribute nothing.

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
    check_choice(origin, "origin", ("start", "first-failure"))
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
        if origin == "start":
            never = trace.n_units - int(np.count_nonzero(last))
            cens = np.concatenate((cens, np.full(never, end)))
        x = np.concatenate((obs_x, cens))
        ok = np.concatenate((np.ones(obs_x.size, bool), np.zeros(cens.size, bool)))
    pos = x > 0
    n_zero = int(np.count_nonzero(~pos))
    x, ok = x[pos], ok[pos]
    x.setflags(write=False)
    ok.setflags(write=False)
    return Durations(x, ok, n_zero)


def _as_data(data, observed, level, origin):
    if isinstance(data, Trace):
        if observed is not None:
            raise ValueError("observed is given by the trace itself (censoring at its end); do not pass it")
        d = durations(data, level=level, origin=origin)
        return d.times, d.observed
    if isinstance(data, Durations):
        if observed is not None:
            raise ValueError("observed is part of the Durations; do not pass it")
        return np.asarray(data.times, np.float64), np.asarray(data.observed, bool)
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
    return x, ok


# ---------------------------------------------------------------------------------------
# log-likelihoods (x > 0 durations, d: failure observed, c: censored)


class _Data:
    __slots__ = ("x", "d", "logx", "sum_logx_d", "n_fail", "scale")

    def __init__(self, x, d):
        # rescale so x**k cannot overflow for large k; parameters are scaled back at the end
        self.scale = float(x.max())
        self.x = x / self.scale
        self.d = d
        self.logx = np.log(self.x)
        self.sum_logx_d = float(self.logx[d].sum())
        self.n_fail = int(np.count_nonzero(d))


def _ll_exponential(D: _Data, theta):
    return -D.n_fail * math.log(theta) - float(D.x.sum()) / theta


def _weibull_log_scale(D: _Data, k):
    """``log lambda`` maximising the likelihood at shape ``k``: ``k log lambda = log(sum x^k / D)``."""
    return (special.logsumexp(k * D.logx) - math.log(D.n_fail)) / k


def _ll_weibull(D: _Data, k, log_lam):
    z = k * (D.logx - log_lam)
    return D.n_fail * math.log(k) - D.n_fail * k * log_lam + (k - 1.0) * D.sum_logx_d - float(np.exp(z).sum())


def _ll_weibull_profile_shape(D: _Data, k):
    # at the best scale, sum((x/lambda)^k) equals the number of failures
    return D.n_fail * math.log(k) - D.n_fail * k * _weibull_log_scale(D, k) + (k - 1.0) * D.sum_logx_d - D.n_fail


def _ll_lognormal(D: _Data, mu, sigma):
    z = (D.logx - mu) / sigma
    zd = z[D.d]
    ll = -0.5 * float(zd @ zd) - D.n_fail * (math.log(sigma) + 0.5 * math.log(2 * math.pi)) - D.sum_logx_d
    if D.n_fail < z.size:
        ll += float(special.log_ndtr(-z[~D.d]).sum())
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


def _profile(law, q, D: _Data, p_hat):
    """``(transform, l_p)``: the profile log-likelihood of quantity ``q`` as a function of its
    transformed value (log for positive quantities), maximised over the other parameter."""
    if law == "exponential":
        return "log", lambda v: _ll_exponential(D, math.exp(v))
    if law == "weibull":
        k_hat = p_hat[0]
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

    Notes
    -----
    ``aic = 2 p - 2 loglik`` and ``bic = p log(n_failures) - 2 loglik`` (``p`` parameters;
    with censoring the number of failures is the BIC's sample size, Volinsky and Raftery,
    Biometrics 2000).
    """

    __slots__ = ("law", "distribution", "params", "loglik", "n", "n_failures", "n_censored", "confidence",
                 "_data", "_p", "_cache")

    def __init__(self, law, p, loglik, D, confidence):
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
        self._data, self._p, self._cache = D, p, {}

    def _key(self):
        return (self.law, tuple(sorted(self.params.items())), self.loglik, self.n, self.n_failures,
                self.n_censored, self.confidence)

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
        check_choice(quantity, "quantity", _QUANTITIES[self.law])
        conf = self.confidence if confidence is None else as_float(
            confidence, "confidence", min_value=0.0, strict_min=True, max_value=1.0 - 1e-12)
        key = (quantity, conf)
        if key not in self._cache:
            self._cache[key] = self._interval(quantity, conf)
        return self._cache[key]

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
        return {q: self.interval(q) for q in _QUANTITIES[self.law]}

    def __repr__(self):
        ps = ", ".join(f"{k}={v:.6g}" for k, v in self.params.items())
        return (f"LifetimeFit({self.law}: {ps}; mean={self.mean:.6g}, loglik={self.loglik:.6g}, "
                f"aic={self.aic:.6g}; {self.n_failures} failures, {self.n_censored} censored)")

    def to_dict(self) -> dict:
        """The attributes and ``aic``, ``bic`` as a JSON-serialisable dict."""
        return fields_dict(self, ("law", "distribution", "params", "loglik", "n", "n_failures", "n_censored",
                                  "confidence", "aic", "bic"))


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
    x, ok = _as_data(data, observed, level, origin)
    need = 1 if law == "exponential" else 2
    n_fail = int(np.count_nonzero(ok))
    if n_fail < need:
        raise ValueError(f"fitting a {law} needs at least {need} observed failure(s), got {n_fail} "
                         f"(with {x.size - n_fail} censored durations)")
    if law != "exponential" and np.unique(x[ok]).size < 2:
        raise ValueError(f"fitting a {law} needs at least 2 distinct failure durations, got all equal to {x[ok][0]}")
    D = _Data(x, ok)
    p, ll = _mle(law, D)
    return LifetimeFit(law, p, ll, D, conf)


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
    x, ok = _as_data(data, observed, level, origin)
    fits = sorted((fit(x, law, observed=ok) for law in laws), key=lambda f: f.aic)
    best = fits[0].aic
    delta = tuple(f.aic - best for f in fits)
    w = np.exp(-0.5 * np.asarray(delta))
    by = {f.law: f for f in fits}
    p = None
    if "exponential" in by and "weibull" in by:
        lr = max(0.0, 2.0 * (by["weibull"].loglik - by["exponential"].loglik))
        p = float(stats.chi2.sf(lr, 1))
    return Comparison(tuple(fits), delta, tuple(float(v) for v in w / w.sum()), p)
