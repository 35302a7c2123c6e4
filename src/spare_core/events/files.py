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

import hashlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._files import DAY, MAX_LOG_BYTES, MAX_LOG_ROWS, InputFileError, Reader, plain, read_input
from .fit import LAWS, LifetimeFit, compare, fit
from .models import DEFAULT_WEIBULL_SHAPE, FailureModel, LifetimeLawModel
from .rates import FailureRate
from .trace import Trace, TraceFormatError, read_trace

__all__ = ["FileCluster", "FileFailures", "FAILURE_RATE_KEYS", "FAILURE_LAWS", "FIT_LAWS", "TRACE_OPTIONS",
           "RATE_MODEL_KEYS", "rate_model_from_file", "rate_from_file", "trace_from_file", "fit_from_file"]

#: the forms a failure rate can be given in, under ``[failures]`` (exactly one of them)
FAILURE_RATE_KEYS = ("per_node_day", "per_1000_node_days", "per_gpu_year", "interruptions", "mtbf", "node_mtbf")
#: ``failures.law``: a Weibull of ``weibull_shape`` at the given rate, or one fitted to ``failures.trace``
FAILURE_LAWS = ("weibull", "fit")
#: ``failures.fit_law``: the law fitted to a log (``law = "fit"``, ``after = "fit"``); "best" ranks them by AIC
FIT_LAWS = (*LAWS, "best")
#: keys of a ``[failures.trace]`` table besides ``path``: the options of :func:`~spare_core.events.trace.read_trace`
TRACE_OPTIONS = tuple(p for p in inspect.signature(read_trace).parameters if p != "path")
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
    if law == "fit":
        for key in ("weibull_shape", *FAILURE_RATE_KEYS, "period", "measured_on_gpus"):
            if key in fl:
                raise rd.fail(f"failures.{key}", "does not go with law = 'fit' (the fitted law gives the rate "
                              "and the shape)", fl[key])
        if "trace" not in fl:
            raise rd.error("law = 'fit' needs failures.trace (the log to fit)")
        trace, read = trace_from_file(rd, fl["trace"], cluster.base_dir)
        # a Weibull (or exponential) per node scales to the per-unit and system models through
        # its mean and shape; a log-normal per node is a node model's lifetime only
        lf, words = fit_from_file(rd, trace, fl.get("fit_law", "weibull"), laws, level="unit")
        rate = FailureRate.from_mtbf(lf.mean, unit="node", gpus_per_node=cluster.gpus_per_node)
        mtbf = rate.system_mtbf(cluster.nodes)
        note = (f"{words}: {lf.n_failures} failures of {trace.n_units} logged nodes over {trace.end / DAY:.3g} "
                f"days ({lf.n_censored} censored) x {cluster.nodes} nodes: system MTBF {mtbf / 3600:.3g} h")
        if lf.law == "lognormal":
            assert isinstance(base, FailureModel)  # only a model with a lifetime field lists it in ``laws``
            return FileFailures(model=base.replace(lifetime=lf.distribution), note=note, rate=rate, trace=trace,
                                fit=lf, trace_read=read)
        shape = float(lf.params["shape"]) if lf.law == "weibull" else 1.0
        return FileFailures(model=base, system_mtbf=mtbf, shape=shape, rate=rate, note=note, trace=trace, fit=lf,
                            trace_read=read)
    if "fit_law" in fl:
        raise rd.fail("failures.fit_law", "only goes with law = 'fit' or after = 'fit'", fl["fit_law"])
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
    """``failures.fit_law`` fitted to the log at ``level`` ("best": the lowest AIC of ``allowed``),
    and the fit in words (mean and shape parameters with their 95 % profile-likelihood intervals)."""
    name = rd.choice("failures.fit_law", fit_law, FIT_LAWS)
    if name != "best" and name not in allowed:
        raise rd.fail("failures.fit_law", f"must be one of {list(allowed) + ['best']} with this model (a {name} "
                      "node lifetime has no per-group or system form: use model = 'node')", fit_law)
    what = "node lifetimes" if level == "unit" else "times between system failures"
    try:
        if name == "best":
            c = compare(trace, allowed, level=level)
            lf, chosen = c.best, (f", the lowest AIC of {'/'.join(allowed)} (Akaike weight {c.weights[0]:.2f}, "
                                  f"next {c.fits[1].law} at +{c.delta_aic[1]:.3g})")
        else:
            lf, chosen = fit(trace, name, level=level), ""
    except ValueError as exc:
        raise rd.fail("failures.trace", f"cannot be fitted ({exc})", rd.source) from None
    unit = DAY if level == "unit" else 3600.0
    lo, hi = lf.interval("mean")
    parts = [f"mean {lf.mean / unit:.3g} {'d' if level == 'unit' else 'h'} (95 % CI {lo / unit:.3g}-{hi / unit:.3g})"]
    for q in {"weibull": ("shape",), "lognormal": ("sigma",)}.get(lf.law, ()):
        q_lo, q_hi = lf.interval(q)
        parts.append(f"{q} {lf.params[q]:.3g} ({q_lo:.3g}-{q_hi:.3g})")
    return lf, f"{lf.law} fitted to the log's {what}{chosen}: {', '.join(parts)}"


def trace_from_file(rd: Reader, spec: Any, base_dir: Path) -> tuple[Trace, dict[str, Any]]:
    """``failures.trace`` (a path, or a table with ``path`` and read_trace's options) read from disk,
    and how it was read (absolute path, sha256 of the file, the options); a relative path is
    taken from the scenario file's directory."""
    if isinstance(spec, str):
        path, opts = spec, {}
    elif isinstance(spec, dict):
        unknown = sorted(set(spec) - {"path", *TRACE_OPTIONS})
        if unknown:
            raise rd.fail(f"key 'failures.trace.{unknown[0]}'",
                          f"is unknown (allowed in [failures.trace]: {['path', *TRACE_OPTIONS]})", spec[unknown[0]])
        if "path" not in spec:
            raise rd.error("[failures.trace] needs path (the log file)")
        path = rd.text("failures.trace.path", spec["path"])
        opts = {k: v for k, v in spec.items() if k != "path"}
        if isinstance(opts.get("unit_map"), str):
            opts["unit_map"] = _hostfile(rd, opts["unit_map"], base_dir)
    else:
        raise rd.fail("failures.trace", "must be a path (string) or a table with path and read options", spec)
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base_dir / full
    try:
        data = read_input(full, "failure log", MAX_LOG_BYTES)
    except InputFileError as exc:
        raise rd.fail("failures.trace", f"must name a readable file ({exc.reason}; looked for {str(full)!r})",
                      path) from None
    digest = hashlib.sha256(data).hexdigest()
    del data
    full = full.resolve()  # the provenance names the file wherever the command ran
    try:
        trace = read_trace(full, **opts)
    except (TraceFormatError, TypeError, ValueError, ImportError) as exc:
        raise rd.error(f"failures.trace: {exc}") from None
    return trace, {"path": str(full), "sha256": digest, **plain(opts)}


def _hostfile(rd: Reader, path: str, base_dir: Path) -> list[str]:
    """Host names in rank order from a hostfile (``failures.trace.unit_map = "hosts.txt"``): the
    first word of each line (so MPI's ``host slots=8`` works), blank and ``#`` lines skipped."""
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base_dir / full
    try:
        text = read_input(full, "hostfile", MAX_LOG_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise rd.fail("failures.trace.unit_map", f"must name a readable hostfile ({exc.reason}; looked for "
                                                 f"{str(full)!r})", path) from None
    except UnicodeDecodeError as exc:
        raise rd.fail("failures.trace.unit_map", f"must name a readable hostfile ({exc})", path) from None
    hosts = [line.split()[0] for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if len(hosts) > MAX_LOG_ROWS:
        raise rd.error(f"failures.trace.unit_map: the hostfile {str(full)!r} lists {len(hosts):,} hosts, more "
                       f"than the {MAX_LOG_ROWS:,} a hostfile may list (docs/cli.md, 'Input files')")
    if not hosts:
        raise rd.fail("failures.trace.unit_map", "must name a hostfile listing at least one host", path)
    return hosts
