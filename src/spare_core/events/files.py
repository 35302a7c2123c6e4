"""A failure model read from a scenario file's ``[failures]`` table: what a model's
:meth:`~spare_core.events.FailureModel.from_file` gets and returns, and the readers the
built-in models share (the published rate forms, a log on disk, a law fitted to it).

Each kind owns its keys: ``file_keys`` on the class lists what it reads, ``from_file`` reads
them (through the file's :class:`spare_core._files.Reader`, so every error names the file and
the key); the scenario file only picks the kind (``failures.model``) and refuses a key that
belongs to another kind. The rate models (``"node"``, ``"per-unit"``, ``"system"``) share
:func:`rate_model_from_file`; trace replay and the failure domains parse in their own modules.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import _limits
from .._files import DAY, MAX_LOG_BYTES, MAX_LOG_ROWS, InputFileError, Reader, plain, read_input
from .fit import NODE_LAWS, LifetimeFit, NodeRateFit, fit, fit_node_rates, merge_repeats
from .instances import REMOVALS
from .models import DEFAULT_WEIBULL_SHAPE, FailureModel, LifetimeLawModel
from .rates import PERIODS, FailureRate, Periods, calendar_periods
from .trace import Trace, TraceFormatError, read_log_bytes, read_trace

__all__ = ["FileCluster", "FileFailures", "FAILURE_RATE_KEYS", "FAILURE_LAWS", "FIT_LAWS", "FIT_RATES", "TRACE_OPTIONS",
           "RATE_MODEL_KEYS", "rate_model_from_file", "rate_from_file", "trace_from_file", "fit_from_file",
           "checked_fit_from_file", "fit_work", "FIT_CHECKS", "PERIODS_P", "TRACE_FILE_KEYS", "NodeScale",
           "node_scale", "whole_nodes_warning"]

#: the forms a failure rate can be given in, under ``[failures]`` (exactly one of them)
FAILURE_RATE_KEYS = ("per_node_day", "per_1000_node_days", "per_gpu_year", "interruptions", "mtbf", "node_mtbf")
#: ``failures.law``: a Weibull of ``weibull_shape`` at the given rate, or one fitted to ``failures.trace``
FAILURE_LAWS = ("weibull", "fit")
#: ``failures.fit_check``: what a ``law = "fit"`` must reproduce to be used: its count and its
#: per-period counts (``"periods"``, p >= :data:`PERIODS_P`), or the count alone (``"count"``)
FIT_CHECKS = ("periods", "count")
#: the p-value below which the per-period counts are "NOT reproduced" (as the report words it)
PERIODS_P = 0.05
#: ``failures.fit_law``: the law fitted to a log (``law = "fit"``, ``after = "fit"``); "frailty" (per-node rate
#: multipliers) with ``model = "node"`` only; "best" ranks them by how well each reproduces the log
FIT_LAWS = (*NODE_LAWS, "best")
#: ``failures.fit_rate`` (``model = "node"``): one rate over the log, or one per period of ``fit_periods``
FIT_RATES = ("constant", "periods")
#: keys of a ``[failures.trace]`` table besides ``path``: the options of :func:`~spare_core.events.trace.read_trace`
TRACE_OPTIONS = tuple(p for p in inspect.signature(read_trace).parameters if p != "path")
#: keys of a ``[failures.trace]`` table that the scenario file reads itself (not options of
#: :func:`~spare_core.events.trace.read_trace`): ``unit_gpus``, the GPUs of one log unit
TRACE_FILE_KEYS = ("unit_gpus", "capacity", "removals", "boot")
#: the keys every rate model reads: a law, its shape, one rate form, or a log to fit
RATE_MODEL_KEYS = LifetimeLawModel.file_keys


@dataclass(frozen=True)
class FileCluster:
    """The job a ``[failures]`` table is read for (the file's ``[cluster]``, resolved).

    Attributes
    ----------
    gpus, nodes, gpus_per_node, gpus_per_group : int
        The cluster as the file described it.
    base_dir : Path
        Where a relative path in the table (a log, a hostfile) starts: the file's directory.
    """

    gpus: int
    nodes: int
    gpus_per_node: int
    gpus_per_group: int
    base_dir: Path

    @property
    def n_groups(self) -> int:
        """Data-parallel groups of the job."""
        return self.gpus // self.gpus_per_group


@dataclass(frozen=True)
class FileFailures:
    """What a model's ``from_file`` returns: the model and how the file's rate became it.

    Attributes
    ----------
    model : FailureModel or str
        The scenario's failure model; a kind name (``"per-unit"``) when the scenario fills the
        rate from ``system_mtbf`` and ``shape``.
    note : str
        How the rate was read, in words (the report's rate line).
    system_mtbf, shape : float or None
        The scenario's system MTBF and Weibull shape (None when ``model`` carries its rate).
    rate : FailureRate or None
        The rate the file gave, exact (None without one: a replayed log, a user model).
    trace, fit, trace_read : optional
        A log read from the file, a law fitted to it, and how the log was read.
    """

    model: FailureModel | str
    note: str
    system_mtbf: float | None = None
    shape: float | None = None
    rate: FailureRate | None = None
    trace: Trace | None = None
    fit: LifetimeFit | None = None
    trace_read: dict[str, Any] | None = None


def rate_model_from_file(base: FailureModel | str, rd: Reader, fl: dict[str, Any], cluster: FileCluster, *,
                         laws: tuple[str, ...] = ("exponential", "weibull")) -> FileFailures:
    """A rate model's ``[failures]``: ``base`` (a kind, or a model without its rate) at the rate
    the table gives (one rate form and ``weibull_shape``), or at a law fitted to a log
    (``law = "fit"``, ``failures.trace``; ``laws``: the laws this model can take)."""
    law = rd.choice("failures.law", fl.get("law", "weibull"), FAILURE_LAWS)
    if "fit_check" in fl and law != "fit":
        raise rd.fail("failures.fit_check", "only goes with law = 'fit' (it says what a fitted law must reproduce)",
                      fl["fit_check"])
    if law == "fit":
        for key in ("weibull_shape", *FAILURE_RATE_KEYS, "period", "measured_on_gpus"):
            if key in fl:
                raise rd.fail(f"failures.{key}", "does not go with law = 'fit' (the fitted law gives the rate "
                              "and the shape)", fl[key])
        if "trace" not in fl:
            raise rd.error("law = 'fit' needs failures.trace (the log to fit)")
        trace, read = trace_from_file(rd, fl["trace"], cluster.base_dir)
        if trace.numbering == "appearance" and "n_units" not in read:
            # the hosts that never failed are the fit's exposure too: without them every node
            # seems to fail, and the fitted lifetime is far too short
            raise rd.error(f"failures.law = 'fit' on a log of host names needs the size of the fleet: the log "
                           f"names only the {trace.n_units:,} hosts that failed; give failures.trace.n_units (every "
                           "node, those that never failed too) or failures.trace.unit_map (a hostfile of them)")
        if trace.numbering == "ids" and "n_units" not in read:
            # a log of ids lists failures only: the units above its largest id that never failed
            # are not in it, and a fit without them sees too short a lifetime
            raise rd.error(f"failures.law = 'fit' on a log of unit ids needs the size of the fleet: the log lists "
                           f"only failures (its largest id is {trace.n_units - 1:,}), not the units that never failed; "
                           "give failures.trace.n_units (every unit of the logged cluster, those that never failed "
                           "too) or failures.trace.unit_map")
        scale = node_scale(read, cluster)
        judged = rd.choice("failures.fit_check", fl.get("fit_check", "periods"), FIT_CHECKS)
        # the law is fitted under the ages the simulation gives the nodes: a cluster in service
        # (stationary: each node's first interval is a residual lifetime), or new nodes
        ages = getattr(base, "initial", "stationary")
        origin = "start" if ages == "new" else "stationary"
        rates, periods, job_start = _fit_rate_options(rd, fl, trace)
        fitted, merged = trace, ""
        if "fit_merge" in fl:
            fitted, dropped = merge_repeats(trace, rd.duration("failures.fit_merge", fl["fit_merge"], strict=False))
            merged = f" ({dropped} repeated reports of a node's failure merged)"
        if fl.get("fit_law") == "best" and scale.m != 1.0:
            # "best" ranks only the laws that scale exactly to a node of m log units (_node_law)
            laws = tuple(n for n in laws if n == "exponential" or (scale.whole and n in ("weibull", "frailty")))
        lf, words, check = checked_fit_from_file(rd, fitted, fl.get("fit_law", "weibull"), laws, level="unit",
                                                 origin=origin, initial=ages, periods=periods,
                                                 per_period=rates == "periods")
        if not check.ok:
            raise rd.error(f"failures.law = 'fit': {_refusal(lf, check)}{_repeats_hint(fitted)}")
        if judged == "periods" and len(check.periods) > 1 and check.periods_p < PERIODS_P:
            raise rd.error(f"failures.law = 'fit': {_period_refusal(lf, check, rates)}")
        words += merged
        if trace.filtered is not None:  # which rows were failures: part of what the fit saw
            words += f" ({trace.filtered})"
        if isinstance(lf, NodeRateFit):
            return _node_rate_model(rd, base, lf, words, check, cluster, trace, read, job_start, scale)
        node_mean, per_node = _node_law(rd, lf, scale)
        rate = FailureRate.from_mtbf(node_mean, unit="node", gpus_per_node=cluster.gpus_per_node)
        mtbf = rate.system_mtbf(cluster.nodes)
        note = (f"{words}: {lf.n_failures} failures of {trace.n_units} logged {scale.units_words()} over "
                f"{trace.end / DAY:.3g} days ({lf.n_censored} censored){per_node} x {cluster.nodes} nodes: system "
                f"MTBF {mtbf / 3600:.3g} h; {_check_words(check)}{scale.warning()}")
        if lf.law == "lognormal":
            assert isinstance(base, FailureModel)  # only a model with a lifetime field lists it in ``laws``
            return FileFailures(model=base.replace(lifetime=lf.distribution), note=note, rate=rate, trace=trace,
                                fit=lf, trace_read=read)
        shape = float(lf.params["shape"]) if lf.law == "weibull" else 1.0
        return FileFailures(model=base, system_mtbf=mtbf, shape=shape, rate=rate, note=note, trace=trace, fit=lf,
                            trace_read=read)
    if "fit_law" in fl:
        raise rd.fail("failures.fit_law", "only goes with law = 'fit' or after = 'fit'", fl["fit_law"])
    for key in ("fit_rate", "fit_periods", "fit_job_start", "fit_merge"):
        if key in fl:
            raise rd.fail(f"failures.{key}", "only goes with law = 'fit'", fl[key])
    if "trace" in fl:
        raise rd.fail("failures.trace", "only goes with model = 'trace' or law = 'fit'", fl["trace"])
    shape = rd.number("failures.weibull_shape", fl.get("weibull_shape", DEFAULT_WEIBULL_SHAPE))
    rate, note = rate_from_file(rd, fl, cluster)
    if rate.unit == "gpu":
        mtbf = rate.system_mtbf(cluster.gpus, unit="gpu")
    else:
        mtbf = rate.system_mtbf(cluster.nodes, unit="node")
    return FileFailures(model=base, system_mtbf=mtbf, shape=shape, rate=rate,
                        note=f"{note}: system MTBF {mtbf / 3600:.3g} h")


def rate_from_file(rd: Reader, fl: dict[str, Any], cluster: FileCluster) -> tuple[FailureRate, str]:
    """The one rate form given, as a :class:`FailureRate` (exact conversions), and the form in words."""
    given = [k for k in FAILURE_RATE_KEYS if k in fl]
    if not given:
        for extra in ("measured_on_gpus", "period"):
            if extra in fl:
                raise rd.fail(f"failures.{extra}", "goes with failures.interruptions, which is not given (a rate "
                              f"needs one of {list(FAILURE_RATE_KEYS)})", fl[extra])
    if len(given) != 1:
        raise rd.error(f"[failures] needs exactly one rate form of {list(FAILURE_RATE_KEYS)}, got "
                       f"{given or 'none'} (or a log: law = 'fit' or model = 'trace' with failures.trace)")
    form = given[0]
    if form != "interruptions":
        for extra in ("period", "measured_on_gpus"):
            if extra in fl:
                raise rd.fail(f"failures.{extra}", "only goes with failures.interruptions", fl[extra])
    g, gpus, nodes = cluster.gpus_per_node, cluster.gpus, cluster.nodes
    if form == "per_node_day":
        r = rd.number("failures.per_node_day", fl[form])
        return FailureRate.from_node_days(r, gpus_per_node=g), f"{r:g} failures per node-day x {nodes} nodes"
    if form == "per_1000_node_days":
        r = rd.number("failures.per_1000_node_days", fl[form])
        return (FailureRate.from_node_days(r, 1000, gpus_per_node=g),
                f"{r:g} failures per 1,000 node-days x {nodes} nodes")
    if form == "per_gpu_year":
        r = rd.number("failures.per_gpu_year", fl[form])
        return FailureRate.from_gpu_years(r, gpus_per_node=g), f"{r:g} failures per GPU-year x {gpus} GPUs"
    if form == "interruptions":
        count = rd.integer("failures.interruptions", fl[form])
        if "period" not in fl:
            raise rd.error("failures.interruptions needs failures.period (e.g. '54 d')")
        period = rd.duration("failures.period", fl["period"])
        on = rd.integer("failures.measured_on_gpus", fl.get("measured_on_gpus", gpus))
        return (FailureRate.from_count(count, period, units=on, unit="gpu", gpus_per_node=g),
                f"{count} interruptions in {period / DAY:g} days on {on} GPUs, scaled to {gpus} GPUs")
    if form == "mtbf":
        m = rd.duration("failures.mtbf", fl[form])
        return FailureRate.from_mtbf(m, units=gpus, unit="gpu", gpus_per_node=g), "system MTBF given"
    m = rd.duration("failures.node_mtbf", fl[form])
    return FailureRate.from_mtbf(m, unit="node", gpus_per_node=g), f"node MTBF {m / 3600:g} h / {nodes} nodes"


def fit_from_file(rd: Reader, trace: Trace, fit_law: Any, allowed: tuple[str, ...], *, level: str
                  ) -> tuple[LifetimeFit, str]:
    """``failures.fit_law`` fitted to the log at ``level`` (every unit new at the log's start;
    "best": the law of ``allowed`` that reproduces the log best, :func:`checked_fit_from_file`),
    and the fit in words (mean and shape parameters with their 95 % profile-likelihood intervals)."""
    lf, words, _ = checked_fit_from_file(rd, trace, fit_law, allowed, level=level)
    return lf, words


def checked_fit_from_file(rd: Reader, trace: Trace, fit_law: Any, allowed: tuple[str, ...], *, level: str,
                          origin: str = "start", initial: str | None = None, periods: Any = "auto",
                          per_period: bool = False) -> tuple[LifetimeFit, str, Any]:
    """``failures.fit_law`` fitted to the log, checked against it, and the fit in words.

    Every candidate is re-simulated over the log's own window
    (:func:`spare_core.events.fit_check.check_fit`, ``initial`` ages, ``periods`` for the
    per-period counts). ``"best"`` fits every law of ``allowed`` (with ``per_period``: the
    exponential and the frailty law with a rate per period) and keeps the one
    :func:`~spare_core.events.fit_check.rank_checks` puts first: the log's count reproduced, then
    the per-period and failing-nodes scores; AIC is only reported. Returns ``(fit, words,
    check)``; the caller decides what a check that fails means (``law = "fit"`` refuses it).
    """
    from .fit_check import check_fit, rank_checks  # fit_check simulates with the node model, which imports this module

    name = rd.choice("failures.fit_law", fit_law, FIT_LAWS)
    if name != "best" and name not in allowed:
        raise rd.fail("failures.fit_law", f"must be one of {list(allowed) + ['best']} with this model (a {name} "
                      "node lifetime has no per-group or system form: use model = 'node')", fit_law)
    if per_period and name not in ("exponential", "frailty", "best"):
        raise rd.fail("failures.fit_rate", f"'periods' goes with fit_law = 'exponential', 'frailty' or 'best' (a "
                      f"{name} renewal law has one rate), got fit_law = {name!r} with fit_rate", "periods")
    if name == "best":
        names = [n for n in allowed if n in ("exponential", "frailty")] if per_period else list(allowed)
    else:
        names = [name]
    key = (_trace_key(trace), tuple(names), level, origin, initial, repr(periods), per_period)
    made = _FITS.get(key)
    if made is None:
        _check_fit_budget(rd, trace, names)
        try:
            fits = [_fit_one(trace, n, level, origin, periods if per_period else None) for n in names]
            check_periods = periods if isinstance(periods, Periods) else calendar_periods(trace.end, periods,
                                                                                           start=trace.start)
        except ValueError as exc:
            raise rd.fail("failures.trace", f"cannot be fitted ({exc})", rd.source) from None
        checks = [check_fit(f, trace, initial=initial, periods=check_periods, level=level) for f in fits]
        for f, c in zip(fits, checks):
            f.check = c
        made = (fits, checks)
        _remember(_FITS, key, made)
    fits, checks = made
    order = rank_checks(checks, [f.aic for f in fits])
    lf, check = fits[order[0]], checks[order[0]]
    chosen = ""
    if name == "best":
        if len(fits) > 1:
            nxt = fits[order[1]]
            chosen = (f", the law of {'/'.join(names)} that reproduces the log best ({_rank_words(check)}; next "
                      f"{_fit_name(nxt)}: {_rank_words(checks[order[1]])}; AIC {lf.aic - min(f.aic for f in fits):+.4g} "
                      f"from the lowest)")
        else:
            chosen = f", the only law of {names[0]} this model takes"
    what = ("node failures" if isinstance(lf, NodeRateFit) else "node lifetimes") if level == "unit" else \
        "times between system failures"
    return lf, f"{_fit_name(lf)} fitted to the log's {what}{chosen}: {_fit_words(lf, level)}", check


def fit_work(trace: Trace, laws: Sequence[str]) -> float:
    """The failures a fit of ``laws`` to ``trace`` and its check simulate: each law's check
    re-simulates the log's window :data:`~spare_core.events.fit_check.DEFAULT_REPLICATES` times,
    about as many failures each as the log holds (and one node clock per unit); the fits
    themselves are one pass over the rows."""
    from .fit_check import DEFAULT_REPLICATES

    per = float(max(trace.n_events, 1)) + float(trace.n_units or 0)
    return len(laws) * (DEFAULT_REPLICATES + 1) * per


def _check_fit_budget(rd: Reader, trace: Trace, laws: Sequence[str]) -> None:
    """Refuse, before fitting, a fit and check beyond the work budget's failures over all runs
    (the ``spare`` command's ``--force`` goes on); a fit already made in this process is free."""
    from .fit_check import DEFAULT_REPLICATES

    work = fit_work(trace, laws)
    budget = _limits.BUDGET["failures"]
    if work > budget and not _limits.forced():
        raise rd.error(f"failures.fit_law: fitting {'/'.join(laws)} to the log's {trace.n_events:,} failures and "
                       f"re-simulating each fit's window {DEFAULT_REPLICATES} times simulates about {work:.3g} failures, "
                       f"beyond the work budget ({budget:.3g} failures; --force runs it anyway, fit_law = one law "
                       "fits only it)")


def _fit_one(trace: Trace, law: str, level: str, origin: str, periods: Any) -> LifetimeFit:
    if law == "frailty" or (law == "exponential" and periods is not None):
        return fit_node_rates(trace, frailty=law == "frailty", periods=periods)
    return fit(trace, law, level=level, origin=origin)


def _fit_name(lf: LifetimeFit) -> str:
    if isinstance(lf, NodeRateFit) and lf.varies:
        return f"{lf.law} with a rate per period"
    return lf.law


def _fit_words(lf: LifetimeFit, level: str, *, short: bool = False) -> str:
    """The fit's parameters with their 95 % profile-likelihood intervals (``short``: without
    the notes on ages and periods)."""
    unit = DAY if level == "unit" else 3600.0
    lo, hi = lf.interval("mean")
    mean_words = "mean over the log" if isinstance(lf, NodeRateFit) else "mean"
    parts = [f"{mean_words} {lf.mean / unit:.3g} {'d' if level == 'unit' else 'h'} (95 % CI {lo / unit:.3g}-{hi / unit:.3g})"]
    for q in {"weibull": ("shape",), "lognormal": ("sigma",), "frailty": ("frailty",)}.get(lf.law, ()):
        q_lo, q_hi = lf.interval(q)
        parts.append(f"{q} {lf.params[q]:.3g} ({q_lo:.3g}-{q_hi:.3g})")
    if short:
        return ", ".join(parts)
    if lf.law == "frailty":
        p = lf.frailty_p
        parts.append(f"identical nodes: likelihood-ratio p {f'= {p:.2g}' if p > 0 else '< 1e-300'}")
    if lf.origin == "stationary" and lf.law in ("weibull", "lognormal"):
        parts.append("each node's first interval a residual lifetime (stationary ages)")
    if isinstance(lf, NodeRateFit) and lf.varies:
        per = lf.periods
        r = lf.period_rates * lf.mean
        parts.append("rate x " + ", ".join(f"{lab} {v:.3g}" for lab, v in zip(per.labels, r)) + " of the mean")
    return ", ".join(parts)


def _rank_words(c: Any) -> str:
    ok = "count reproduced" if c.ok else "count NOT reproduced"
    return f"{ok}, score {c.score + c.nodes_score:.4g}"


def _check_words(c: Any) -> str:
    """The check in a few words: the count, and the periods when they are not reproduced."""
    lo, hi = c.interval
    out = (f"re-simulated on the log's window ({c.replicates} runs): {c.count:,} failures logged, "
           f"{c.median:,.0f} simulated (95 % {lo:,}-{hi:,})")
    if c.failing_nodes is not None:
        a, b = c.nodes_interval
        out += f", {c.failing_nodes:,} failing nodes logged ({a:,}-{b:,} simulated)"
    if len(c.periods) > 1:
        if c.periods_p < PERIODS_P:
            med = np.median(c.period_simulated, axis=0)
            out += (f"; per-period counts NOT reproduced (p = {c.periods_p:.2g}): log "
                    f"{'/'.join(f'{v:,}' for v in c.period_counts.tolist())} against "
                    f"{'/'.join(f'{v:,.0f}' for v in med)} simulated ({c.periods.labels[0]}..{c.periods.labels[-1]})")
        else:
            out += f"; per-period counts reproduced (p = {c.periods_p:.2g})"
    return out


def _refusal(lf: LifetimeFit, c: Any) -> str:
    """Why a fit is refused, one line."""
    lo, hi = c.interval
    years = c.end / (365.25 * DAY)
    span = f"{years:.3g} years" if years >= 1 else f"{c.end / DAY:.3g} days"
    return (f"the fitted {_fit_name(lf)} ({_fit_words(lf, 'unit', short=True)}) does not reproduce the "
            f"log: re-simulated over its {span} on its {c.n_units:,} nodes with {c.initial} ages it gives "
            f"{c.median:,.0f} failures (95 % of {c.replicates} runs: {lo:,}-{hi:,}) against the {c.count:,} logged; "
            "try fit_law = 'best' or 'frailty' (docs/failures.md, 'Checking a fit')")


def _period_refusal(lf: LifetimeFit, c: Any, rates: str) -> str:
    """Why a fit whose count is reproduced but whose per-period counts are not is refused."""
    med = np.median(c.period_simulated, axis=0)
    hint = ("fit_rate = 'periods' gives each period its own rate" if rates != "periods" else
            "try other fit_periods")
    return (f"the fitted {_fit_name(lf)} reproduces the log's {c.count:,} failures but not their course: per-period "
            f"counts {'/'.join(f'{v:,}' for v in c.period_counts.tolist())} logged against "
            f"{'/'.join(f'{v:,.0f}' for v in med)} simulated ({c.periods.labels[0]}..{c.periods.labels[-1]}, p = "
            f"{c.periods_p:.2g}); {hint}, or fit_check = 'count' uses it judged on the count alone "
            "(docs/failures.md, 'Checking a fit')")


def _repeats_hint(trace: Trace) -> str:
    """A pointer to ``fit_merge`` when failures follow the same node's previous failure within an
    hour (a part reporting one fault again and again reads as extreme infant mortality)."""
    _, n = merge_repeats(trace, 3600.0)
    if not n:
        return ""
    return (f"; {n} of the log's {trace.n_events:,} failures follow the same node's previous one within 1 h "
            "(repeated reports of one failure? fit_merge = '1 h' merges them)")


def _fit_rate_options(rd: Reader, fl: dict[str, Any], trace: Trace) -> tuple[str, Any, float]:
    """``fit_rate``, the periods (``fit_periods``) and where the job starts in the log (``fit_job_start``)."""
    rates = rd.choice("failures.fit_rate", fl.get("fit_rate", "constant"), FIT_RATES)
    spec = fl.get("fit_periods", "auto")
    if isinstance(spec, str) and spec in PERIODS:
        periods: Any = spec
    else:
        periods = rd.duration("failures.fit_periods", spec)
    if trace.end > 0:
        try:
            periods = calendar_periods(trace.end, periods, start=trace.start)
        except ValueError as exc:
            raise rd.fail("failures.fit_periods", f"cannot cut the log's window ({exc})", spec) from None
    at = fl.get("fit_job_start", "end")
    if at == "end":
        job_start = float(trace.end)
    elif at == "start":
        job_start = 0.0
    else:
        job_start = rd.duration("failures.fit_job_start", at, strict=False)
        if job_start > trace.end:
            raise rd.fail("failures.fit_job_start", f"must be 'start', 'end' or a time within the log's "
                          f"{trace.end / DAY:.4g} days", at)
    if "fit_job_start" in fl and rates != "periods":
        raise rd.fail("failures.fit_job_start", "only goes with fit_rate = 'periods' (a constant rate is the same "
                      "everywhere in the log)", at)
    return rates, periods, job_start


def _node_rate_model(rd: Reader, base: Any, lf: NodeRateFit, words: str, check: Any, cluster: FileCluster,
                     trace: Trace, read: dict[str, Any], job_start: float,
                     scale: "NodeScale | None" = None) -> FileFailures:
    """The node model of an exponential / frailty fit: per-node multipliers, the rate in force
    where the job starts in the log (and the period rates after it), per log unit scaled to a
    job node by ``scale`` (:func:`node_scale`: a node of m units fails at m times a unit's rate;
    gamma frailty of variance v per unit is v / m per node, for a whole number m)."""
    scale = scale or NodeScale(None, cluster.gpus_per_node)
    r0 = lf.rate_at(job_start)
    if not r0 > 0:
        raise rd.fail("failures.fit_job_start", f"must fall in a period with failures (none was logged in the one "
                      f"holding {job_start / DAY:.4g} d: its rate is 0)", "end" if job_start >= trace.end else job_start)
    frailty = float(lf.params.get("frailty", 0.0))
    m = scale.m
    per_node = ""
    if m != 1.0:
        if lf.law == "frailty" and not scale.whole:
            raise rd.fail("failures.trace.unit_gpus", f"must divide cluster.gpus_per_node ({scale.gpus_per_node}) "
                          f"with fit_law = 'frailty': a {scale.gpus_per_node}-GPU node is {m:g} log units, and the "
                          "per-node frailty of a fraction of a unit is not known (fit_law = 'exponential' scales any "
                          "ratio)", scale.unit_gpus)
        per_node = (f"; per node of {scale.gpus_per_node} GPUs = {m:g} log units of {scale.unit_gpus} GPU"
                    f"{'s' if scale.unit_gpus > 1 else ''}: rate x {m:g}, node MTBF {1.0 / (r0 * m) / DAY:.3g} d "
                    f"(a unit's {1.0 / r0 / DAY:.3g} d)")
        if frailty:
            per_node += f", frailty variance {frailty:.3g} / {m:g} = {frailty / m:.3g} (the sum of {m:g} units' rates)"
        r0, frailty = r0 * m, frailty / m
    sched = lf.schedule(job_start)
    node_mean = 1.0 / r0
    rate = FailureRate.from_mtbf(node_mean, unit="node", gpus_per_node=cluster.gpus_per_node)
    mtbf = rate.system_mtbf(cluster.nodes)
    times, levels = ((), ()) if sched is None or not sched.times.shape[0] else (
        tuple(sched.times.tolist()), tuple(sched.levels.tolist()))
    model = base.replace(system_mtbf=mtbf, shape=1.0, frailty=frailty, rate_times=times, rate_levels=levels)
    where = ""
    if lf.varies:
        j = int(np.searchsorted(lf.periods.edges[1:-1], job_start, side="right"))
        where = (f"; the job starts {'at the end of' if job_start >= trace.end else f'{job_start / DAY:.4g} d into'} "
                 f"the log, at {lf.periods.labels[j]}'s rate: node MTBF {node_mean / DAY:.3g} d"
                 + (f", then the later periods' rates" if times else ""))
    note = (f"{words}: {lf.n_failures} failures of {trace.n_units} logged {scale.units_words()} over "
            f"{trace.end / DAY:.3g} days{where}{per_node} x {cluster.nodes} nodes: system MTBF {mtbf / 3600:.3g} h; "
            f"{_check_words(check)}{scale.warning()}")
    return FileFailures(model=model, note=note, rate=rate, trace=trace, fit=lf, trace_read=read)


@dataclass(frozen=True)
class NodeScale:
    """How a log's units stand to the job's nodes (``failures.trace.unit_gpus``).

    Attributes
    ----------
    unit_gpus : int or None
        GPUs of one log unit; None when the file does not say (the units are taken as whole
        job nodes).
    gpus_per_node : int
        GPUs of one job node (``cluster.gpus_per_node``).
    """

    unit_gpus: int | None
    gpus_per_node: int

    @property
    def m(self) -> float:
        """Log units per job node, ``gpus_per_node / unit_gpus`` (1 without ``unit_gpus``)."""
        return 1.0 if self.unit_gpus is None else self.gpus_per_node / self.unit_gpus

    @property
    def whole(self) -> bool:
        """Whether a job node is a whole number of log units."""
        return self.unit_gpus is None or self.gpus_per_node % self.unit_gpus == 0

    def units_words(self) -> str:
        """The log's units in words: ``"nodes"``, or ``"units of 1 GPU"``."""
        if self.unit_gpus is None:
            return "nodes"
        return f"units of {self.unit_gpus} GPU{'s' if self.unit_gpus > 1 else ''}"

    def warning(self) -> str:
        """``"; warning: ..."`` when ``unit_gpus`` is not given and a job node has more than one
        GPU (the log's units are then taken as whole nodes), else ``""``."""
        if self.unit_gpus is not None or self.gpus_per_node <= 1:
            return ""
        return (f"; warning: the log's units are taken as whole {self.gpus_per_node}-GPU nodes "
                "(failures.trace.unit_gpus not given: give the GPUs of one log unit, e.g. 1 for a log of GPUs, to "
                "keep its per-GPU rate)")


def node_scale(read: dict[str, Any], cluster: FileCluster) -> NodeScale:
    """The :class:`NodeScale` of a log read by :func:`trace_from_file` (``read``) for ``cluster``."""
    return NodeScale(read.get("unit_gpus"), cluster.gpus_per_node)


def whole_nodes_warning(read: dict[str, Any], cluster: FileCluster) -> str:
    """:meth:`NodeScale.warning` without its leading ``"; warning: "`` (the caller says
    "warning:" once; "" when there is nothing to say)."""
    return node_scale(read, cluster).warning().removeprefix("; warning: ")


def _node_law(rd: Reader, lf: LifetimeFit, scale: NodeScale) -> tuple[float, str]:
    """A job node's mean lifetime from the law ``lf`` fitted per log unit, and the scaling in
    words (``""`` when a node is one unit).

    A node of ``m`` independent units (``m = gpus_per_node / unit_gpus``) fails at the first of
    their failures: an exponential of rate ``lambda`` per unit is one of rate ``lambda * m`` (any
    ratio: a rate per GPU); a Weibull of shape ``k`` and scale ``eta`` is a Weibull of shape
    ``k`` and scale ``eta * m**(-1/k)`` (``m`` a whole number: the node is replaced whole, as the
    simulator replaces it). A log-normal minimum is not log-normal: refused unless ``m = 1``.
    """
    m = scale.m
    if m == 1.0:
        return lf.mean, ""
    u, g = scale.unit_gpus, scale.gpus_per_node
    head = f"; per node of {g} GPUs = {m:g} log units of {u} GPU{'s' if u > 1 else ''}"
    if lf.law == "exponential":
        node = lf.mean / m
        return node, f"{head}: rate x {m:g}, node MTBF {node / DAY:.3g} d (a unit's {lf.mean / DAY:.3g} d)"
    if lf.law == "weibull":
        if not scale.whole:
            raise rd.fail("failures.trace.unit_gpus", f"must divide cluster.gpus_per_node ({g}) with a Weibull fit: a "
                          f"{g}-GPU node is {m:g} log units, and only a whole number of units has an exact law (the "
                          "first failure of m Weibull units); fit_law = 'exponential' scales any ratio", u)
        k, eta = float(lf.params["shape"]), float(lf.params["scale"])
        f = m ** (-1.0 / k)
        node = lf.mean * f
        return node, (f"{head}: the first of {m:g} unit failures, Weibull shape {k:.3g}, scale {eta / DAY:.3g} d x "
                      f"{m:g}^(-1/{k:.3g}) = {eta * f / DAY:.3g} d, node MTBF {node / DAY:.3g} d (a unit's "
                      f"{lf.mean / DAY:.3g} d)")
    raise rd.fail("failures.trace.unit_gpus", f"must equal cluster.gpus_per_node ({g}) with fit_law = '{lf.law}': the "
                  f"first failure of {m:g} {lf.law} units has no {lf.law} law (fit_law = 'weibull' or "
                  "'exponential' scales to the node exactly)", u)


def trace_from_file(rd: Reader, spec: Any, base_dir: Path) -> tuple[Trace, dict[str, Any]]:
    """``failures.trace`` (a path, or a table with ``path`` and read_trace's options) read from disk,
    and how it was read (absolute path, sha256 of the file, the options); a relative path is
    taken from the scenario file's directory.

    ``unit_gpus`` (the GPUs of one log unit) is checked here, not passed to the reader, and
    comes back in the returned dict when it is given (:func:`node_scale` reads it)."""
    own: dict[str, Any] = {}
    if isinstance(spec, str):
        path, opts = spec, {}
    elif isinstance(spec, dict):
        unknown = sorted(set(spec) - {"path", *TRACE_OPTIONS, *TRACE_FILE_KEYS})
        if unknown:
            raise rd.fail(f"key 'failures.trace.{unknown[0]}'", f"is unknown (allowed in [failures.trace]: "
                          f"{['path', *TRACE_OPTIONS, *TRACE_FILE_KEYS]})", spec[unknown[0]])
        if "path" not in spec:
            raise rd.error("[failures.trace] needs path (the log file)")
        path = rd.text("failures.trace.path", spec["path"])
        if "unit_gpus" in spec:
            own["unit_gpus"] = rd.integer("failures.trace.unit_gpus", spec["unit_gpus"])
        if "capacity" in spec:  # the fleet's nodes at the start of a log of capacity events
            own["capacity"] = rd.integer("failures.trace.capacity", spec["capacity"], low=0, high=2**31 - 1)
        if "removals" in spec:  # a capacity log read instance by instance (events/instances.py)
            own["removals"] = rd.choice("failures.trace.removals", spec["removals"], REMOVALS)
        if "boot" in spec:
            own["boot"] = rd.duration("failures.trace.boot", spec["boot"], strict=False)
        opts = {k: v for k, v in spec.items() if k != "path" and k not in TRACE_FILE_KEYS}
        if isinstance(opts.get("unit_map"), str):
            opts["unit_map"] = _hostfile(rd, opts["unit_map"], base_dir)
    else:
        raise rd.fail("failures.trace", "must be a path (string) or a table with path and read options", spec)
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base_dir / full
    opts_key = repr(sorted(plain(opts).items()))
    pinned = pinned_digest(full)
    if pinned is not None and (resolved(full), pinned, opts_key) in _READ:
        # the log this scenario was resolved with, not the file as it is now (edited, deleted)
        note_input(full, pinned)
        return _READ[(resolved(full), pinned, opts_key)], {"path": resolved(full), "sha256": pinned,
                                                            **plain(opts), **own}
    try:
        data = read_input(full, "failure log", MAX_LOG_BYTES)
    except InputFileError as exc:
        raise rd.fail("failures.trace", f"must name a readable file ({exc.reason}; looked for {str(full)!r})",
                      path) from None
    digest = hashlib.sha256(data).hexdigest()
    if pinned is not None and digest != pinned:
        raise rd.fail("failures.trace", f"changed since the scenario was read (sha256 {pinned[:12]}... then, "
                      f"{digest[:12]}... now): the runs of one command read one log", path)
    full = full.resolve()  # the provenance names the file wherever the command ran
    key = (str(full), digest, opts_key)
    trace = _READ.get(key)
    if trace is None:
        try:
            with read_log_bytes(full, data):  # parse the bytes hashed, not the file read again
                trace = read_trace(full, **opts)
        except (TraceFormatError, TypeError, ValueError, ImportError) as exc:
            raise rd.error(f"failures.trace: {exc}") from None
        _remember(_READ, key, trace)
    del data
    note_input(full, digest)
    return trace, {"path": str(full), "sha256": digest, **plain(opts), **own}


# The input files a scenario was resolved with (its failure log, its straggler trace), by
# resolved path and sha256: recorded while a scenario is read (:func:`recording_inputs`), and
# pinned while ScenarioFile.with_overrides resolves it again (:func:`pinned_inputs`), so that a
# map's cells, an advice's variants and a sweep's points all run on the inputs the command
# started with -- taken from this process's memo without opening the file, or read and refused
# when the file's content is no longer the one pinned.
_PINNED: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("spare_core_pinned_inputs",
                                                                                 default=None)
_SEEN: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("spare_core_inputs_seen",
                                                                               default=None)


def resolved(path: str | Path) -> str:
    """``path`` made absolute with its symlinks followed, as the pins name it. ``os.path.realpath``,
    not ``Path.resolve``: a symlink loop is a path like any other here (the reader then refuses
    it in words), where ``resolve`` raises RuntimeError before the reader is reached."""
    return os.path.realpath(path)


def pinned_digest(path: str | Path) -> str | None:
    """The sha256 ``path``'s content must have in this resolution (None: not pinned)."""
    pins = _PINNED.get()
    return None if not pins else pins.get(resolved(path))


def note_input(path: str | Path, digest: str) -> None:
    """Record that the scenario being resolved read ``path`` with this content."""
    seen = _SEEN.get()
    if seen is not None:
        seen[resolved(path)] = digest


@contextlib.contextmanager
def recording_inputs():
    """Within the block, every input read is recorded in the dict yielded (path -> sha256)."""
    seen: dict[str, str] = {}
    token = _SEEN.set(seen)
    try:
        yield seen
    finally:
        _SEEN.reset(token)


@contextlib.contextmanager
def pinned_inputs(digests: dict[str, str] | None):
    """Within the block, the inputs in ``digests`` (path -> sha256) are the ones read before."""
    token = _PINNED.set(dict(digests) if digests else None)
    try:
        yield
    finally:
        _PINNED.reset(token)


# A command that loads one file many times (``spare map``'s cells, ``spare advise``'s variants,
# a sweep spec's grid) reads its log and fits its law once: the logs read (by path, content and
# options) and the fits made (by the log's content and the fit's options) of this process. A
# Trace is immutable and a fit is not changed after it is made, so sharing them is safe.
_READ: dict = {}
_FITS: dict = {}
#: the hostfiles read (by path and content): their hosts, for a resolution that pins them
_HOSTS: dict = {}
#: entries kept per memo (the least recently stored go first)
MEMO_ENTRIES = 16


def _remember(memo: dict, key: Any, value: Any) -> None:
    memo[key] = value
    while len(memo) > MEMO_ENTRIES:
        del memo[next(iter(memo))]


def _trace_key(trace: Trace) -> str:
    """The log's content: what a fit reads of it (times, units, window, count of units)."""
    h = hashlib.sha256()
    for a in (trace.times, trace.units):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr((trace.n_units, trace.end, str(trace.start), trace.unit_names is None or tuple(trace.unit_names)
                   )).encode())
    return h.hexdigest()


def _hostfile(rd: Reader, path: str, base_dir: Path) -> list[str]:
    """Host names in rank order from a hostfile (``failures.trace.unit_map = "hosts.txt"``): the
    first word of each line (so MPI's ``host slots=8`` works), blank and ``#`` lines skipped."""
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base_dir / full
    pinned = pinned_digest(full)
    if pinned is not None and (resolved(full), pinned) in _HOSTS:
        note_input(full, pinned)  # the hostfile this scenario was resolved with (edited or deleted since)
        return list(_HOSTS[(resolved(full), pinned)])
    try:
        raw = read_input(full, "hostfile", MAX_LOG_BYTES)
        text = raw.decode("utf-8")
    except InputFileError as exc:
        raise rd.fail("failures.trace.unit_map", f"must name a readable hostfile ({exc.reason}; looked for "
                                                 f"{str(full)!r})", path) from None
    except UnicodeDecodeError as exc:
        raise rd.fail("failures.trace.unit_map", f"must name a readable hostfile ({exc})", path) from None
    digest = hashlib.sha256(raw).hexdigest()
    del raw
    if pinned is not None and digest != pinned:
        raise rd.fail("failures.trace.unit_map", f"changed since the scenario was read (sha256 {pinned[:12]}... "
                      f"then, {digest[:12]}... now): the runs of one command read one hostfile", path)
    hosts = [line.split()[0] for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if len(hosts) > MAX_LOG_ROWS:
        raise rd.error(f"failures.trace.unit_map: the hostfile {str(full)!r} lists {len(hosts):,} hosts, more "
                       f"than the {MAX_LOG_ROWS:,} a hostfile may list (docs/cli.md, 'Input files')")
    if not hosts:
        raise rd.fail("failures.trace.unit_map", "must name a hostfile listing at least one host", path)
    _remember(_HOSTS, (resolved(full), digest), tuple(hosts))
    note_input(full, digest)
    return hosts
