"""Lifetime and repair-time distributions for the failure event engine.

Every distribution is a small immutable object with a ``mean``, a ``var``, a ``cdf`` and a
batch sampler ``sample(rng, size)`` that draws from a caller-supplied, seeded
:class:`numpy.random.Generator` (never global state). The event engine
(:mod:`spare_core.events`) draws event times in batches through ``sample``, so any object
following the same protocol (``mean`` and ``sample(rng, size) -> float64 array`` of
positive finite times) can be used as a lifetime or repair distribution.

Times are in whatever unit the caller uses consistently (the simulation uses seconds).

References
----------
.. [1] W. Weibull, "A statistical distribution function of wide applicability",
   J. Appl. Mech. 18 (1951), 293-297.
.. [2] B. Schroeder and G. A. Gibson, "A large-scale study of failures in high-performance
   computing systems", IEEE TDSC 7(4), 2010 (Weibull shape < 1 for time between failures,
   lognormal repair times).
.. [3] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357 (system MTBF 5 min, Weibull shape 0.78).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ._validate import as_float, as_generator, as_int

__all__ = [
    "Distribution", "Weibull", "Exponential", "LogNormal", "Deterministic", "as_distribution",
    "distribution_from_dict",
]


def _as_size(size) -> int | tuple[int, ...]:
    """Validate a numpy-style ``size``: a non-negative int or a tuple of them."""
    if isinstance(size, tuple):
        return tuple(as_int(s, "size", min_value=0) for s in size)
    return as_int(size, "size", min_value=0)


class Distribution:
    """Base class of the positive time distributions (lifetimes, repair times).

    Subclasses implement ``mean``, ``var``, ``cdf`` and ``_draw(rng, size)``; ``sample``
    validates its arguments and guarantees a float64 array of positive finite times.
    """

    __slots__ = ()

    #: short name used by the engine and in reprs
    kind = "distribution"

    @property
    def mean(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def var(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def cdf(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def _draw(self, rng: np.random.Generator, size) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def cumulative_hazard(self, x):
        """``H(x) = -log(1 - F(x))``; implemented by the continuous distributions."""
        raise NotImplementedError(f"{type(self).__name__} has no cumulative hazard")

    def inverse_cumulative_hazard(self, h):
        """The time ``t`` with ``H(t) = h`` (``h >= 0``); see :meth:`cumulative_hazard`.

        Together with the Renyi representation of order statistics this lets the failure
        stream draw the first failures among ``n`` fresh units without drawing all ``n``
        lifetimes (:class:`spare_core.events.FailureStream`). Distributions without it
        (the base class raises NotImplementedError) are sampled by sorting a batch.
        """
        raise NotImplementedError(f"{type(self).__name__} has no inverse cumulative hazard")

    def sample(self, rng, size) -> np.ndarray:
        """Draw ``size`` independent times.

        Parameters
        ----------
        rng : numpy.random.Generator or int or numpy.random.SeedSequence
            Source of randomness (an int or SeedSequence is turned into a fresh Generator).
        size : int or tuple of int
            Output shape.

        Returns
        -------
        numpy.ndarray
            float64 array of shape ``size``; every entry is > 0 and finite.
        """
        size = _as_size(size)
        rng = as_generator(rng)
        return self._checked_times(self._draw(rng, size), size, "_draw")

    def _checked_times(self, drawn, size, method: str) -> np.ndarray:
        """``drawn`` as a new float64 array of shape ``size``, each time > 0 and finite.

        A subclass's sampler is user code: a short array would send the event engine past
        its buffer, a NaN would drop events silently and an inf would stop the clock, so
        each is a ValueError naming the distribution instead. Exact zeros (``exp(log(E)/k)``
        underflows for tiny E and small shapes) are raised to the smallest positive float:
        a zero lifetime would schedule an event at the current instant forever.
        """
        name = type(self).__name__
        try:
            out = np.asarray(drawn, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name}.{method} must return an array of float times, got "
                            f"{type(drawn).__name__} ({err})") from None
        shape = (size,) if isinstance(size, int) else tuple(size)
        if out.shape != shape:
            raise ValueError(f"{name}.{method} returned shape {out.shape}, but {shape} times were asked for")
        if out.size:
            lo, hi = out.min(), out.max()   # NaN propagates through both
            if not (lo >= 0.0 and hi < math.inf):
                bad = out.ravel()[~((out.ravel() >= 0.0) & (out.ravel() < math.inf))][0]
                raise ValueError(f"{name}.{method} drew the time {float(bad)!r}: times must be finite and >= 0 "
                                 f"(parameters {self._describe()})")
        return np.maximum(out, np.finfo(np.float64).tiny)

    def _describe(self) -> str:
        try:
            return ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self._params())) or "custom"
        except NotImplementedError:
            return "custom"

    def _check_moments(self) -> None:
        """Refuse parameters whose mean or variance overflows float64 (the analytic formulas
        and the engine's bucket width use both); ValueError naming the parameters."""
        try:
            ok = math.isfinite(self.mean) and math.isfinite(self.var)
        except OverflowError:
            ok = False
        if not ok:
            raise ValueError(f"{self.kind} parameters must give a finite mean and variance in float64 "
                             f"(below about 1.8e308), got {self._describe()}")

    def sample_residual(self, rng, size) -> np.ndarray:
        """Draw ``size`` residual lifetimes of a unit found running at a random instant.

        The forward-recurrence time of a stationary renewal process with this lifetime law:
        density ``(1 - F(t)) / mean``. Starting each unit's clock from it makes a
        superposition of renewal processes stationary from time 0 (its failure rate is
        ``units / mean`` at every instant), i.e. a cluster whose nodes have been in service
        for a while rather than all installed at once.

        Parameters
        ----------
        rng : numpy.random.Generator or int or numpy.random.SeedSequence
        size : int or tuple of int

        Returns
        -------
        numpy.ndarray
            float64 array of positive finite times.

        Notes
        -----
        Exact for every built-in law: the length-biased lifetime ``L*`` (density
        ``t f(t) / mean``) times an independent ``U(0, 1)`` has the residual law
        (Cox, *Renewal Theory*, 1962, ch. 5). Weibull(k, lam): ``lam * G**(1/k)`` with
        ``G ~ Gamma(1/k)`` directly; exponential: the lifetime itself (memoryless);
        log-normal: ``L* ~ LogNormal(mu + sigma**2, sigma)``; deterministic: ``U(0, value)``.
        """
        size = _as_size(size)
        rng = as_generator(rng)
        # the same check as sample(): a subclass's residual sampler is user code too
        return self._checked_times(self._draw_residual(rng, size), size, "_draw_residual")

    def _draw_residual(self, rng, size):
        raise NotImplementedError(f"{type(self).__name__} has no residual-lifetime sampler")

    @property
    def cv(self) -> float:
        """Coefficient of variation ``sqrt(var) / mean``."""
        return math.sqrt(self.var) / self.mean

    def __eq__(self, other):
        return type(self) is type(other) and self._params() == other._params()

    def __hash__(self):
        return hash((type(self).__name__, self._params()))

    def _params(self) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    #: constructor keywords, in the order of :meth:`_params` (for :meth:`to_dict`)
    _fields: tuple = ()

    def to_dict(self) -> dict:
        """``{"kind": ..., <constructor keywords>}``; :func:`distribution_from_dict` inverts it
        exactly (the parameters are the stored floats, not recomputed from a mean)."""
        return {"kind": self.kind, **dict(zip(self._fields, self._params()))}


class Weibull(Distribution):
    """Weibull lifetime ``F(t) = 1 - exp(-(t/scale)**shape)``.

    Parameters
    ----------
    shape : float
        Shape ``k > 0``. ``k < 1``: decreasing hazard (infant mortality; failures burst
        after units are replaced), ``k = 1``: exponential, ``k > 1``: wear-out.
    scale : float
        Scale ``lambda > 0`` (same unit as the times); ``mean = scale * Gamma(1 + 1/k)``.

    Raises
    ------
    ValueError
        If ``shape <= 0`` or ``scale <= 0`` (or either is not finite).

    Notes
    -----
    Sampling by inversion of a standard exponential ``E``: ``scale * exp(log(E) / k)``
    (numpy's vectorised ``log``/``exp`` are several times faster than ``pow`` per element).

    References
    ----------
    .. [1] W. Weibull (1951); SPARe (arXiv:2603.00357) uses shape 0.78.

    Examples
    --------
    >>> w = Weibull.from_mean(300.0, 0.78)
    >>> round(w.mean, 6)
    300.0
    >>> w.sample(np.random.default_rng(0), 3).shape
    (3,)
    """

    __slots__ = ("shape", "scale")
    kind = "weibull"
    _fields = ("shape", "scale")

    def __init__(self, shape, scale):
        self.shape = as_float(shape, "weibull shape", min_value=0.0, strict_min=True)
        self.scale = as_float(scale, "weibull scale", min_value=0.0, strict_min=True)
        self._check_moments()

    @classmethod
    def from_mean(cls, mean, shape) -> "Weibull":
        """Weibull with the given ``mean`` and ``shape``: ``scale = mean / Gamma(1 + 1/shape)``.

        Parameters
        ----------
        mean : float
            Mean lifetime, > 0.
        shape : float
            Weibull shape, > 0.
        """
        mean = as_float(mean, "weibull mean", min_value=0.0, strict_min=True)
        shape = as_float(shape, "weibull shape", min_value=0.0, strict_min=True)
        try:
            scale = mean / math.gamma(1.0 + 1.0 / shape)
        except OverflowError:
            scale = 0.0
        if not scale > 0.0:
            raise ValueError(f"weibull shape must be large enough that Gamma(1 + 1/shape) is finite "
                             f"(shape >= about 0.0059), got shape={shape!r}")
        return cls(shape, scale)

    @property
    def mean(self) -> float:
        return self.scale * math.gamma(1.0 + 1.0 / self.shape)

    @property
    def var(self) -> float:
        g1 = math.gamma(1.0 + 1.0 / self.shape)
        g2 = math.gamma(1.0 + 2.0 / self.shape)
        return self.scale**2 * (g2 - g1 * g1)

    def cdf(self, x):
        """``P(T <= x)``; 0 for ``x <= 0``."""
        x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
        return -np.expm1(-((x / self.scale) ** self.shape))

    def cumulative_hazard(self, x):
        """``H(x) = (x/scale)**shape``; 0 for ``x <= 0``."""
        x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
        return (x / self.scale) ** self.shape

    def inverse_cumulative_hazard(self, h):
        """``scale * h**(1/shape)``."""
        return self.scale * np.asarray(h, dtype=np.float64) ** (1.0 / self.shape)

    def _draw(self, rng, size):
        out = rng.standard_exponential(size)
        np.log(out, out=out)
        out *= 1.0 / self.shape
        np.exp(out, out=out)
        out *= self.scale
        return out

    def _draw_residual(self, rng, size):
        out = rng.standard_gamma(1.0 / self.shape, size)
        out **= 1.0 / self.shape
        out *= self.scale
        return out

    def _params(self):
        return (self.shape, self.scale)

    def __repr__(self):
        return f"Weibull(shape={self.shape:g}, scale={self.scale:g}, mean={self.mean:g})"


class Exponential(Distribution):
    """Exponential lifetime (memoryless; constant hazard ``1/mean``).

    Parameters
    ----------
    mean : float
        Mean time, > 0.

    Raises
    ------
    ValueError
        If ``mean <= 0`` or not finite.

    Examples
    --------
    >>> Exponential(60.0)
    Exponential(mean=60)
    """

    __slots__ = ("_mean",)
    kind = "exponential"
    _fields = ("mean",)

    def __init__(self, mean):
        self._mean = as_float(mean, "exponential mean", min_value=0.0, strict_min=True)
        self._check_moments()

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def var(self) -> float:
        return self._mean**2

    def cdf(self, x):
        """``P(T <= x)``; 0 for ``x <= 0``."""
        x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
        return -np.expm1(-x / self._mean)

    def cumulative_hazard(self, x):
        """``H(x) = x / mean``; 0 for ``x <= 0``."""
        return np.maximum(np.asarray(x, dtype=np.float64), 0.0) / self._mean

    def inverse_cumulative_hazard(self, h):
        """``mean * h``."""
        return self._mean * np.asarray(h, dtype=np.float64)

    def _draw(self, rng, size):
        out = rng.standard_exponential(size)
        out *= self._mean
        return out

    def _draw_residual(self, rng, size):
        return self._draw(rng, size)

    def _params(self):
        return (self._mean,)

    def __repr__(self):
        return f"Exponential(mean={self._mean:g})"


class LogNormal(Distribution):
    """Log-normal time, parameterised by its **mean** and the log-scale ``sigma``.

    ``log T ~ Normal(mu, sigma**2)`` with ``mu = log(mean) - sigma**2 / 2``, so that
    ``E[T] = mean`` whatever ``sigma`` is (repair times are usually quoted by their mean).
    Use :meth:`from_mu_sigma` to give ``mu`` directly.

    Parameters
    ----------
    mean : float
        Mean time, > 0.
    sigma : float
        Standard deviation of ``log T``, > 0.

    Raises
    ------
    ValueError
        If ``mean <= 0`` or ``sigma <= 0`` (or either is not finite).

    References
    ----------
    .. [1] Schroeder & Gibson, IEEE TDSC 2010: repair times in HPC systems are well fitted
       by a log-normal.

    Examples
    --------
    >>> d = LogNormal(600.0, 1.0)
    >>> round(d.mean, 6), round(d.mu, 4)
    (600.0, 5.8969)
    """

    __slots__ = ("_mean", "sigma")
    kind = "lognormal"
    _fields = ("mean", "sigma")

    def __init__(self, mean, sigma):
        self._mean = as_float(mean, "lognormal mean", min_value=0.0, strict_min=True)
        self.sigma = as_float(sigma, "lognormal sigma", min_value=0.0, strict_min=True)
        self._check_moments()

    @classmethod
    def from_mu_sigma(cls, mu, sigma) -> "LogNormal":
        """Log-normal with ``log T ~ Normal(mu, sigma**2)`` (``mean = exp(mu + sigma**2/2)``)."""
        mu = as_float(mu, "lognormal mu")
        sigma = as_float(sigma, "lognormal sigma", min_value=0.0, strict_min=True)
        log_mean = mu + 0.5 * sigma * sigma
        if not -745.0 < log_mean < 709.0:
            raise ValueError(f"lognormal mu + sigma**2/2 must lie in (-745, 709) so the mean is a positive "
                             f"float64, got mu={mu!r}, sigma={sigma!r}")
        return cls(math.exp(log_mean), sigma)

    @property
    def mu(self) -> float:
        """Mean of ``log T``."""
        return math.log(self._mean) - 0.5 * self.sigma * self.sigma

    @property
    def mean(self) -> float:
        return self._mean

    @property
    def var(self) -> float:
        return math.expm1(self.sigma * self.sigma) * self._mean**2

    def cdf(self, x):
        """``P(T <= x)``; 0 for ``x <= 0``."""
        from scipy.special import ndtr

        x = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore"):
            z = (np.log(np.maximum(x, 0.0)) - self.mu) / self.sigma
        return ndtr(z)

    def cumulative_hazard(self, x):
        """``H(x) = -log(1 - F(x))``, accurate in both tails (``log_ndtr`` of ``-z``)."""
        from scipy.special import log_ndtr

        x = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore"):
            z = (np.log(np.maximum(x, 0.0)) - self.mu) / self.sigma
        return -log_ndtr(-z)

    def inverse_cumulative_hazard(self, h):
        """``exp(mu + sigma * z)`` with ``1 - Phi(z) = exp(-h)``.

        For ``h < log 2`` the survival ``exp(-h)`` is close to 1, so ``z`` comes from the
        small failure probability ``-expm1(-h)``; beyond, from the survival itself (which
        stays representable long after ``1 - exp(-h)`` has rounded to 1).
        """
        from scipy.special import ndtri

        h = np.asarray(h, dtype=np.float64)
        small = h < math.log(2.0)
        z = np.where(small, ndtri(-np.expm1(-np.where(small, h, 0.0))), -ndtri(np.exp(-np.where(small, 1.0, h))))
        return np.exp(self.mu + self.sigma * z)

    def _draw(self, rng, size):
        out = rng.standard_normal(size)
        out *= self.sigma
        out += self.mu
        np.exp(out, out=out)
        return out

    def _draw_residual(self, rng, size):
        out = rng.standard_normal(size)
        out *= self.sigma
        out += self.mu + self.sigma * self.sigma
        np.exp(out, out=out)
        out *= rng.random(size)
        return out

    def _params(self):
        return (self._mean, self.sigma)

    def __repr__(self):
        return f"LogNormal(mean={self._mean:g}, sigma={self.sigma:g})"


class Deterministic(Distribution):
    """A fixed time (e.g. a constant repair or restart duration).

    Parameters
    ----------
    value : float
        The time, > 0.

    Raises
    ------
    ValueError
        If ``value <= 0`` or not finite.

    Notes
    -----
    ``sample`` consumes no random numbers, so swapping a deterministic repair for another
    leaves the lifetime stream of a seeded run unchanged.

    Examples
    --------
    >>> Deterministic(60).sample(np.random.default_rng(0), 2)
    array([60., 60.])
    """

    __slots__ = ("value",)
    kind = "deterministic"
    _fields = ("value",)

    def __init__(self, value):
        self.value = as_float(value, "deterministic value", min_value=0.0, strict_min=True)

    @property
    def mean(self) -> float:
        return self.value

    @property
    def var(self) -> float:
        return 0.0

    def cdf(self, x):
        """``P(T <= x)``: a step at ``value``."""
        return (np.asarray(x, dtype=np.float64) >= self.value).astype(np.float64)

    def _draw(self, rng, size):
        return np.full(size, self.value, dtype=np.float64)

    def _draw_residual(self, rng, size):
        return self.value * rng.random(size)

    def _params(self):
        return (self.value,)

    def __repr__(self):
        return f"Deterministic(value={self.value:g})"


def as_distribution(value, name: str) -> Distribution:
    """Coerce ``value`` to a :class:`Distribution`.

    A positive real number means :class:`Deterministic`; a :class:`Distribution` is returned
    as is. Anything else raises TypeError naming ``name``.
    """
    if isinstance(value, Distribution):
        if type(value) not in _BUILTIN:
            # a user's subclass: its mean sets rates and bucket widths downstream
            try:
                mean = float(value.mean)
            except Exception as err:  # noqa: BLE001 - any failure of user code is the user's
                raise TypeError(f"{name}: {type(value).__name__}.mean must be a number ({err})") from None
            if not (0.0 < mean < math.inf):
                raise ValueError(f"{name} mean must be positive and finite, got {mean!r} "
                                 f"from {type(value).__name__}.mean")
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return Deterministic(as_float(value, name, min_value=0.0, strict_min=True))
    raise TypeError(
        f"{name} must be a distribution (Weibull, Exponential, LogNormal, Deterministic) "
        f"or a positive number, got {type(value).__name__} {value!r}"
    )


_KINDS = {c.kind: c for c in (Weibull, Exponential, LogNormal, Deterministic)}
_BUILTIN = frozenset(_KINDS.values())


def distribution_from_dict(data, name: str = "distribution") -> Distribution:
    """The distribution described by ``data`` (the output of :meth:`Distribution.to_dict`).

    Parameters
    ----------
    data : dict
        ``{"kind": "weibull" | "exponential" | "lognormal" | "deterministic", <parameters>}``.
    name : str
        What the caller calls it, used in error messages.

    Raises
    ------
    TypeError, ValueError
        Not a dict, unknown kind, missing or unknown parameter, or a bad value.

    Examples
    --------
    >>> Exponential(600.0).to_dict()
    {'kind': 'exponential', 'mean': 600.0}
    >>> distribution_from_dict({'kind': 'exponential', 'mean': 600.0})
    Exponential(mean=600)
    """
    if not isinstance(data, dict):
        raise TypeError(f"{name} must be a dict with a 'kind', got {type(data).__name__} {data!r}")
    kind = data.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"{name}.kind must be one of {sorted(_KINDS)}, got {kind!r}")
    cls = _KINDS[kind]
    given = set(data) - {"kind"}
    unknown = sorted(given - set(cls._fields))
    if unknown:
        raise ValueError(f"{name} has unknown key {unknown[0]!r} (a {kind} takes {list(cls._fields)})")
    missing = [f for f in cls._fields if f not in given]
    if missing:
        raise ValueError(f"{name} lacks key {missing[0]!r} (a {kind} takes {list(cls._fields)})")
    return cls(*(data[f] for f in cls._fields))


#: the laws :func:`law_from_file` reads: law -> (required keys, alternatives: exactly one of them)
FILE_LAWS = {
    "constant": (("value",), ()),
    "exponential": (("mean",), ()),
    "lognormal": (("sigma",), ("median", "mean")),
    "weibull": (("shape",), ("mean", "scale")),
}


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def law_from_file(rd, key: str, value):
    """A file's duration or law of durations, read with ``rd`` (a :class:`spare_core._files.Reader`).

    A plain duration (``rd.duration``, >= 0) gives seconds; a table ``{law = ..., ...}`` a
    :class:`Distribution`: ``{law = "constant", value = d}``, ``{law = "exponential", mean =
    d}``, ``{law = "lognormal", median = d, sigma = s}`` (or ``mean = d``: ``median = mean
    exp(-s**2/2)``), ``{law = "weibull", shape = k, mean = d}`` (or ``scale = d``), each ``d`` a
    duration > 0. Errors name ``key`` (``repair.time.law``, ``repair.time.mean``, ...).

    Examples
    --------
    >>> from spare_core._files import Reader
    >>> law_from_file(Reader("f.toml"), "repair.time", {"law": "lognormal", "median": "2 h", "sigma": 1})
    LogNormal(mean=11870.8, sigma=1)
    >>> law_from_file(Reader("f.toml"), "repair.time", "2 h")
    7200.0
    """
    if not isinstance(value, dict):
        return rd.duration(key, value, strict=False)
    law = rd.choice(f"{key}.law", value.get("law"), tuple(FILE_LAWS))
    need, one_of = FILE_LAWS[law]
    allowed = ("law",) + need + one_of
    for k in value:
        if k not in allowed:
            raise rd.error(f"{key}.{k} is unknown ({_article(law)} {law} law takes {list(allowed[1:])})")
    for k in need:
        if k not in value:
            raise rd.error(f"{key}: {_article(law)} {law} law needs {k!r}")
    given = [k for k in one_of if k in value]
    if one_of and len(given) != 1:
        raise rd.error(f"{key}: {_article(law)} {law} law needs exactly one of {list(one_of)}, got {given or 'none'}")
    p = {k: rd.duration(f"{key}.{k}", value[k]) for k in ("value", "mean", "median", "scale") if k in value}
    # the shapes a law of durations can take without its draws collapsing or overflowing
    if "sigma" in value:
        p["sigma"] = rd.number(f"{key}.sigma", value["sigma"], low=0.0, high=5.0)
    if "shape" in value:
        p["shape"] = rd.number(f"{key}.shape", value["shape"], low=0.05, strict=False, high=20.0)
    try:
        if law == "constant":
            return Deterministic(p["value"])
        if law == "exponential":
            return Exponential(p["mean"])
        if law == "lognormal":
            if "median" in p:
                return LogNormal.from_mu_sigma(math.log(p["median"]), p["sigma"])
            return LogNormal(p["mean"], p["sigma"])
        return Weibull.from_mean(p["mean"], p["shape"]) if "mean" in p else Weibull(p["shape"], p["scale"])
    except ValueError as err:  # a law's own bound (a mean too large for its float64 moments)
        raise rd.error(f"{key}: {err}") from None
