"""Scenario files: a cluster and a training job described in TOML, in the units people use.

A scenario file says how many GPUs the job has and how they are grouped, how long a step
takes (or how many tokens per second the job trains), how long the job is (steps or
tokens), how often things fail (in any of the forms failure rates are published in), what a
restart and a checkpoint cost, and which policies and redundancies to compare.
:func:`load_scenario_file` checks every key and value and resolves the file into a
:class:`ScenarioFile`: a :class:`spare_core.sim.Scenario` plus the comparison to run.

Layout of a file (docs/cli.md lists every key)::

    name = "my-job"

    [cluster]
    gpus = 16384
    gpus_per_node = 8
    gpus_per_group = 128          # or tp = 8 and pp = 16

    [job]
    step_time = "6 s"             # or tokens_per_second (with tokens_per_step)
    allreduce_time = "0.5 s"      # the part of a step spent in the gradient all-reduce
    steps = 200_000               # or tokens (with tokens_per_step)

    [failures]
    model = "node"                # node renewals (default); "per-unit", "system", or "trace"
    interruptions = 419           # one rate form: interruptions + period, per_node_day,
    period = "54 d"               # per_1000_node_days, per_gpu_year, mtbf, node_mtbf
    weibull_shape = 0.78          # (or law = "fit" with failures.trace: a law fitted to a log,
                                  #  fit_law = "weibull", "exponential", "lognormal" or "best")

    [costs]
    restart = "30 min"
    checkpoint_save = "60 s"

    [compare]
    policies = ["ckpt", "rep", "spare"]
    r_max = 12
    seeds = 5

Correlated failures (a switch, a rack, a PDU downing every node behind it) come on top of the
single failures as levels ``[[failures.domains]]`` (``name``, ``nodes`` per domain, ``mtbf`` or
``interruptions`` + ``period``), coarsest first: :class:`spare_core.events.DomainFailures`.

A recorded log replaces the rate with ``model = "trace"``, ``after = "stop" | "loop" | "fit"``
and ``[failures.trace]`` (``path`` relative to the file plus the options of
:func:`spare_core.events.trace.read_trace`; ``unit_map`` may name a hostfile). Rates are
converted by :class:`spare_core.events.rates.FailureRate`, exactly.

Durations are a number of seconds or a string with a unit (``"90 s"``, ``"30 min"``,
``"3.1 h"``, ``"54 d"``, ``"2 y"``). Every error names the key, the rule and the bad value, and is
raised before anything runs (:class:`ScenarioFileError`, a ValueError).

References
----------
.. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783, 2024
   (419 unexpected interruptions in 54 days on 16,384 GPUs).
.. [2] A. Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
   Clusters", HPCA 2025 (6.50 failures per 1,000 node-days on Meta's RSC-1).
.. [3] SPARe, arXiv:2603.00357 (the paper's 600k-GPU preset).
"""
from __future__ import annotations

import hashlib
import inspect
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .events import DEFAULT_WEIBULL_SHAPE, FailureModel, failure_model_kinds
from .distributions import Exponential, LogNormal
from .events.domains import DomainFailures
from .events.fit import LAWS, LifetimeFit, compare, fit
from .events.rates import SECONDS as RATE_SECONDS
from .events.rates import FailureRate
from .events.trace import Trace, TraceFormatError, read_trace
from .events.trace_model import AFTER, TraceReplay
from .sim import POLICY_NAMES, RACK_AWARE, Scenario, make_policy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["ScenarioFile", "ScenarioFileError", "TomlFileError", "MAX_SEEDS", "read_toml", "load_scenario_file", "parse_scenario", "parse_duration",
           "apply_overrides", "FAILURE_RATE_KEYS", "FAILURE_LAWS", "FIT_LAWS", "TRACE_OPTIONS", "DOMAIN_KEYS"]

_DAY = 86_400.0
_YEAR = float(RATE_SECONDS["year"])
_UNITS = {
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3,
    "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": _DAY, "day": _DAY, "days": _DAY,
    "w": 7 * _DAY, "week": 7 * _DAY, "weeks": 7 * _DAY,
    # the Julian year, as the rate forms count it (events.rates.SECONDS)
    "y": _YEAR, "yr": _YEAR, "year": _YEAR, "years": _YEAR,
}
_DURATION = re.compile(r"^\s*([0-9][0-9_]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]+)\s*$")

#: the forms a failure rate can be given in, under ``[failures]`` (exactly one of them)
FAILURE_RATE_KEYS = ("per_node_day", "per_1000_node_days", "per_gpu_year", "interruptions", "mtbf", "node_mtbf")
#: ``failures.law``: a Weibull of ``weibull_shape`` at the given rate, or one fitted to ``failures.trace``
FAILURE_LAWS = ("weibull", "fit")
#: ``failures.fit_law``: the law fitted to a log (``law = "fit"``, ``after = "fit"``); "best" ranks them by AIC
FIT_LAWS = (*LAWS, "best")
#: ``compare.layout``: SPARe's stack offsets, or the stacks placed across ``[[failures.domains]]``
SPARE_LAYOUTS = ("consecutive", "sidon", RACK_AWARE, f"{RACK_AWARE}-sidon")
#: keys of one level of ``[[failures.domains]]`` (a rate form: ``mtbf``, or ``interruptions`` with ``period``)
DOMAIN_KEYS = ("name", "nodes", "mtbf", "interruptions", "period")
#: keys of a ``[failures.trace]`` table besides ``path``: the options of :func:`~spare_core.events.trace.read_trace`
TRACE_OPTIONS = tuple(p for p in inspect.signature(read_trace).parameters if p != "path")

_SECTIONS: dict[str, tuple[str, ...]] = {
    "": ("name", "description", "cluster", "job", "failures", "costs", "compare"),
    "cluster": ("gpus", "nodes", "gpus_per_node", "gpus_per_group", "tp", "pp"),
    "job": ("step_time", "allreduce_time", "tokens_per_second", "tokens_per_step", "steps", "tokens", "jitter"),
    "failures": ("model", "law", "weibull_shape", "period", "measured_on_gpus", *FAILURE_RATE_KEYS, "trace", "after",
                 "nodes_per_group", "node_ages", "domains", "fit_law"),
    "costs": ("restart", "checkpoint_save", "shrink", "controller"),
    "compare": ("policies", "redundancies", "r_max", "seeds", "interval", "horizon", "processes", "layout",
                "charge_patch"),
}
_SUBTABLES = ("cluster", "job", "failures", "costs", "compare")



#: failure models a rate and a Weibull shape define (``failures.model`` besides "trace")
_RATE_MODELS = ("per-unit", "system", "node")


def _failure_kinds() -> tuple[str, ...]:
    """The file's ``failures.model`` values: the registered rate models, and "trace"."""
    return tuple(k for k in failure_model_kinds() if k in _RATE_MODELS) + ("trace",)


@dataclass(frozen=True)
class _Failures:
    """``[failures]`` resolved: a model (or a kind with its rate and shape) and the rate in words."""

    model: FailureModel | str
    system_mtbf: float | None
    shape: float | None
    rate: FailureRate | None
    note: str
    trace: Trace | None = None
    fit: LifetimeFit | None = None
    trace_read: dict[str, Any] | None = None


def _alternatives() -> dict[str, tuple[str, ...]]:
    groups = [("job", ("steps", "tokens")), ("job", ("step_time", "tokens_per_second")),
              ("cluster", ("gpus", "nodes")), ("cluster", ("gpus_per_group", "tp", "pp")),
              ("compare", ("redundancies", "r_max")),
              ("failures", FAILURE_RATE_KEYS + ("period", "measured_on_gpus"))]
    out: dict[str, tuple[str, ...]] = {}
    for section, names in groups:
        for n in names:
            keep = {n} | ({"tp", "pp"} if n in ("tp", "pp") else set())
            keep |= {"interruptions", "period", "measured_on_gpus"} if n in ("interruptions", "period",
                                                                             "measured_on_gpus") else set()
            out[f"{section}.{n}"] = tuple(x for x in names if x not in keep)
    # a rate form replaces a fitted law; a law (fitted or not) replaces the rate forms and the shape
    rates = FAILURE_RATE_KEYS + ("period", "measured_on_gpus")
    for n in rates:
        out[f"failures.{n}"] += ("law", "trace")
    out["failures.law"] = rates + ("weibull_shape",)
    return out


# an override of one form of a quantity drops the file's other forms of it
_ALTERNATIVES = _alternatives()
_DEFAULT_POLICIES = ("ckpt", "rep", "spare")


#: the most seeds per cell a file (or ``--seeds``) may ask for: a grid keeps one task per
#: (scenario, seed) in memory, and 2**24 of them are already months of CPU at the smallest runs
MAX_SEEDS = 2**24


class TomlFileError(ValueError):
    """A TOML file of the product (scenario file, sweep spec) that cannot be read.

    The message is one line naming the file and, where the text is at fault, the line.

    Attributes
    ----------
    path : str
        The file as given.
    line : int or None
        1-based line of the fault (None for a missing or unreadable file, or a fault at the
        end of the document).
    """

    def __init__(self, message: str, path: str = "", line: int | None = None):
        super().__init__(message)
        self.path = path
        self.line = line


class ScenarioFileError(TomlFileError):
    """A scenario file (or an override of one of its keys) that cannot be used.

    The message is one line naming the file, the key, the rule and the bad value.
    """


@dataclass(frozen=True)
class ScenarioFile:
    """A scenario file resolved into what the ``spare`` commands run.

    Attributes
    ----------
    path : str
        The file read (``"<dict>"`` for :func:`parse_scenario` on a dict).
    name : str
        The job's name.
    scenario : Scenario
        The job in the simulator's terms: N = GPUs / GPUs per group data-parallel groups,
        the step split into one stack layer of compute and the all-reduce, the failure rate
        as the job's system MTBF.
    gpus, gpus_per_node, gpus_per_group, nodes : int
        The cluster as the file described it.
    policies : tuple of str
        Policy names compared (:func:`spare_core.sim.make_policy`).
    redundancies : tuple of int
        Values of r tried (those <= N).
    seeds : tuple of int
        Seeds of every cell (common random numbers across policies).
    interval : str or float
        Checkpoint-interval rule of every policy: "auto", "young", "daly" or seconds.
    processes : int
        Worker processes (0: one per CPU).
    spare_layout : str
        SPARe stacks: "consecutive" or "sidon" offsets, or "rack-aware" / "rack-aware-sidon"
        (those offsets along a cycle that interleaves the failure domains of
        ``[[failures.domains]]``, :meth:`spare_core.layout.StackedLayout.rack_aware`).
    rate_note : str
        How the failure rate was converted to the system MTBF, in words.
    data : dict
        The file's table after overrides (what was asked, in the user's units).
    failure_rate : FailureRate or None
        The rate the file gave (or the fitted law's, ``law = "fit"``), exact; None for a
        trace replay (the log is the rate).
    trace : Trace or None
        The log read from ``failures.trace`` (replayed or fitted), else None.
    trace_read : dict or None
        How that log was read: absolute ``path``, the file's ``sha256`` and the
        :func:`~spare_core.events.trace.read_trace` options.
    fit : LifetimeFit or None
        With ``law = "fit"``: the law (``failures.fit_law``) fitted to the log's per-node
        lifetimes; with ``after = "fit"``: the one fitted to its times between system failures.
    """

    path: str
    name: str
    scenario: Scenario
    gpus: int
    gpus_per_node: int
    gpus_per_group: int
    nodes: int
    policies: tuple[str, ...]
    redundancies: tuple[int, ...]
    seeds: tuple[int, ...]
    interval: str | float
    processes: int
    spare_layout: str
    rate_note: str
    data: dict[str, Any] = field(repr=False)
    failure_rate: FailureRate | None = None
    trace: Trace | None = field(default=None, repr=False)
    trace_read: dict[str, Any] | None = field(default=None, repr=False)
    fit: LifetimeFit | None = field(default=None, repr=False)

    def policy_kwargs(self) -> dict[str, dict[str, Any]]:
        """Keyword arguments per policy name for :func:`spare_core.sim.make_policy`."""
        out: dict[str, dict[str, Any]] = {}
        for name in self.policies:
            kw: dict[str, Any] = {}
            if self.interval != "auto":
                kw["interval"] = self.interval
            if name == "spare" and self.spare_layout == "sidon":
                kw["offsets"] = "sidon"
            elif name == "spare" and self.spare_layout.startswith(RACK_AWARE):
                kw["layout"] = RACK_AWARE
                if self.spare_layout.endswith("sidon"):
                    kw["offsets"] = "sidon"
            if kw:
                out[name] = kw
        return out

    def at_rate(self, factor: float) -> Scenario:
        """The scenario with failures ``factor`` times as frequent (the sensitivity of an answer).

        A rate-law model gets the system MTBF divided by ``factor``; a trace replay gets the
        log's time axis divided by ``factor`` (the same failures, in the same order and
        groups, ``factor`` times as often); with failure domains, the single failures and
        every level's domains are each ``factor`` times as frequent.

        Parameters
        ----------
        factor : float
            Multiplier of the failure rate, > 0.

        Examples
        --------
        >>> sf = parse_scenario({"cluster": {"gpus": 64, "gpus_per_group": 8},
        ...                      "job": {"step_time": 1, "steps": 10}, "failures": {"mtbf": "2 h"}})
        >>> sf.at_rate(2.0).system_mtbf
        3600.0
        """
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not (math.isfinite(factor)
                                                                                    and factor > 0):
            raise ValueError(f"factor must be a finite number > 0, got {factor!r}")
        fm = self.scenario.failures
        if isinstance(fm, TraceReplay):
            tr = fm.trace
            faster = Trace(tr.times / factor, tr.units, n_units=tr.n_units, end=tr.end / factor,
                           unit_names=tr.unit_names, reasons=tr.reasons, start=tr.start, source=tr.source)
            return self.scenario.replace(failure_model=fm.replace(trace=faster))
        if isinstance(fm, DomainFailures):  # the single failures and every domain's, alike
            return self.scenario.replace(failure_model=fm.replace(
                base=_faster(fm.base, factor), lifetimes=tuple(Exponential(law.mean / factor) for law in fm.lifetimes)))
        return self.scenario.replace(failure_model=_faster(fm, factor))

    def to_dict(self) -> dict[str, Any]:
        """The resolved file as JSON-friendly values: the user's table and the simulator's scenario.

        A log (``failures.trace``) appears as how it was read — path, sha256, read options,
        rows, units, end — not row by row: the provenance of a job replaying a million-row log
        stays small, and the scenario's failure model still rebuilds from it
        (:meth:`spare_core.events.FailureModel.from_dict` reads the path with those options).
        """
        scenario = scenario_to_dict(self.scenario)
        out: dict[str, Any] = {
            "path": self.path,
            "name": self.name,
            "file": self.data,
            "cluster": {"gpus": self.gpus, "nodes": self.nodes, "gpus_per_node": self.gpus_per_node,
                        "gpus_per_group": self.gpus_per_group, "groups": self.scenario.n_groups},
            "failure_rate": self.rate_note,
            "scenario": scenario,
            "policies": list(self.policies),
            "redundancies": list(self.redundancies),
            "seeds": list(self.seeds),
            "interval": self.interval,
            "processes": self.processes,
            "spare_layout": self.spare_layout,
        }
        if self.trace is not None and self.trace_read is not None:
            out["trace"] = {**self.trace_read, "rows": self.trace.n_events, "units": self.trace.n_units,
                            "end_seconds": self.trace.end}
            fm = scenario.get("failure_model")
            if isinstance(fm, dict) and fm.get("kind") == "trace":
                fm["trace"] = {k: v for k, v in self.trace_read.items() if k != "sha256"}
        if self.fit is not None:
            level = "times between system failures" if isinstance(self.scenario.failures, TraceReplay) else "node lifetimes"
            out["fit"] = {"law": self.fit.law, "level": level, "params": dict(self.fit.params),
                          "mean": self.fit.mean, "confidence": self.fit.confidence,
                          "intervals": {k: list(v) for k, v in self.fit.intervals.items()},
                          "failures": self.fit.n_failures, "censored": self.fit.n_censored}
        return out


def _faster(model: FailureModel, factor: float) -> FailureModel:
    """A rate model of a file with its failures ``factor`` times as frequent: the system MTBF
    divided, or a fitted log-normal node lifetime's time axis (its mean; sigma is unchanged)."""
    law = getattr(model, "lifetime", None)
    if law is None:
        return model.replace(system_mtbf=model.system_mtbf / factor)
    if not isinstance(law, LogNormal):  # pragma: no cover - files set a lifetime only for a fitted log-normal
        raise TypeError(f"cannot scale a {type(law).__name__} lifetime")
    return model.replace(lifetime=LogNormal(law.mean / factor, law.sigma))


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """Every parameter of ``scenario`` as JSON-friendly values (its ``to_dict`` when it has one)."""
    to_dict = getattr(scenario, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    out: dict[str, Any] = {}
    for k in Scenario.__slots__:
        v = getattr(scenario, k)
        out[k] = v if v is None or isinstance(v, (bool, int, float, str)) else repr(v)
    return out


# -- values -------------------------------------------------------------------------------
class _Reader:
    """Checks values of one file, naming the file and the key in every error."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, rule: str, value: Any) -> ScenarioFileError:
        return ScenarioFileError(f"{self.source}: {key} {rule}, got {value!r}")

    def integer(self, key: str, value: Any, *, low: int = 1, high: int | None = None) -> int:
        rule = f"must be an integer >= {low}" + ("" if high is None else f" and <= {high}")
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and math.isfinite(value):
                value = int(value)
            else:
                raise self.fail(key, rule, value)
        if value < low or (high is not None and value > high):
            raise self.fail(key, rule, value)
        return int(value)

    def number(self, key: str, value: Any, *, low: float = 0.0, strict: bool = True, high: float | None = None,
               high_strict: bool = False) -> float:
        bound = f"> {low:g}" if strict else f">= {low:g}"
        if high is not None:
            bound += f" and {'<' if high_strict else '<='} {high:g}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"must be a number {bound}", value)
        x = float(value)
        ok = math.isfinite(x) and (x > low if strict else x >= low)
        if ok and high is not None:
            ok = x < high if high_strict else x <= high
        if not ok:
            raise self.fail(key, f"must be a finite number {bound}", value)
        return x

    def duration(self, key: str, value: Any, *, strict: bool = True) -> float:
        rule = (f"must be a duration {'> 0' if strict else '>= 0'} (seconds, or a string such as "
                "'90 s', '30 min', '3.1 h', '54 d')")
        if isinstance(value, str):
            try:
                x = parse_duration(value)
            except ValueError:
                raise self.fail(key, rule, value) from None
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, rule, value)
        else:
            x = float(value)
        if not (math.isfinite(x) and (x > 0 if strict else x >= 0)):
            raise self.fail(key, rule, value)
        return x

    def text(self, key: str, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail(key, "must be a string", value)
        return value

    def choice(self, key: str, value: Any, choices: Sequence[str]) -> str:
        if not isinstance(value, str) or value not in choices:
            raise self.fail(key, f"must be one of {list(choices)}", value)
        return value


def parse_duration(text: str) -> float:
    """Seconds in a duration written with a unit.

    Parameters
    ----------
    text : str
        A number and a unit: s, ms, min, h, d, w (and their long forms), e.g. ``"30 min"``.

    Returns
    -------
    float
        Seconds.

    Raises
    ------
    ValueError
        Not a number followed by a known unit.

    Examples
    --------
    >>> parse_duration("30 min"), parse_duration("1.5 h"), parse_duration("54 d")
    (1800.0, 5400.0, 4665600.0)
    """
    m = _DURATION.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"duration must be a number and a unit ({', '.join(sorted(set(_UNITS)))}), got {text!r}")
    return float(m.group(1).replace("_", "")) * _UNITS[m.group(2).lower()]


# -- overrides ------------------------------------------------------------------------------
def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str], *, source: str = "--set") -> dict[str, Any]:
    """A copy of ``data`` with ``KEY=VALUE`` overrides applied (``KEY`` dotted, ``VALUE`` TOML).

    A value that is not valid TOML is taken as a string, so ``failures.mtbf=2h`` and
    ``failures.mtbf="2 h"`` both work. An override replaces the file's other forms of the same
    quantity (``job.steps`` drops ``job.tokens``, ``failures.mtbf`` another rate form,
    ``compare.r_max`` the list of redundancies, ...).

    Examples
    --------
    >>> apply_overrides({"job": {"steps": 10}}, ["job.steps=20", "compare.seeds=3"])
    {'job': {'steps': 20}, 'compare': {'seeds': 3}}
    """
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()}
    for item in overrides:
        if "=" not in item:
            raise ScenarioFileError(f"{source} must be KEY=VALUE (e.g. failures.mtbf='2 h'), got {item!r}")
        key, raw = item.split("=", 1)
        key = key.strip()
        parts = key.split(".")
        if not key or len(parts) > 2 or not all(parts):
            raise ScenarioFileError(f"{source} key must be NAME or SECTION.NAME, got {key!r}")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        if len(parts) == 1:
            out[parts[0]] = value
        else:
            section = out.get(parts[0])
            if section is None:
                section = out[parts[0]] = {}
            elif not isinstance(section, dict):
                raise ScenarioFileError(f"{source} {key}: [{parts[0]}] is not a table, got {section!r}")
            for other in _ALTERNATIVES.get(key, ()):
                section.pop(other, None)
            section[parts[1]] = value
    return out


# -- the file ---------------------------------------------------------------------------------
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def read_toml(path: str | Path, what: str, error: type[TomlFileError] = TomlFileError) -> dict[str, Any]:
    """The table of a TOML file, or one clear error: the one reader of the product layer's files.

    Parameters
    ----------
    path : str or Path
        The file. A UTF-8 byte-order mark (as some Windows editors write) is skipped; CRLF line
        ends are plain TOML.
    what : str
        What the file is, for the messages (``"scenario file"``, ``"sweep spec"``).
    error : type, default TomlFileError
        The subclass of :class:`TomlFileError` raised, so that a caller's own error type
        (:class:`ScenarioFileError`) keeps covering its file.

    Returns
    -------
    dict
        The parsed document.

    Raises
    ------
    TomlFileError
        The same for every fault, a ValueError: a missing, unreadable or directory path
        (``cannot read scenario file 'x.toml': No such file or directory``), bytes that are not
        UTF-8, or invalid TOML; the message names the file and, for the text, the line.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise error(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}", str(p)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise error(f"{p}: line {line}: not a text (UTF-8) file (byte 0x{raw[exc.start]:02x})", str(p), line) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_LINE.search(str(exc))
        line = int(m.group(1)) if m else None
        where = f"line {line}" if line else "end of file"
        raise error(f"{p}: {where}: not valid TOML: {exc}", str(p), line) from None


def load_scenario_file(path: str | Path, overrides: Sequence[str] = ()) -> ScenarioFile:
    """Read, check and resolve a scenario file.

    Parameters
    ----------
    path : str or Path
        A TOML file (layout in the module docstring and docs/cli.md).
    overrides : sequence of str
        ``KEY=VALUE`` items applied on top of the file (:func:`apply_overrides`).

    Returns
    -------
    ScenarioFile

    Raises
    ------
    ScenarioFileError
        Unreadable file, invalid TOML, an unknown key, a wrong type or an out-of-range value;
        one line naming the file, the key, the rule and the value.
    """
    p = Path(path)
    data = read_toml(p, "scenario file", ScenarioFileError)
    if overrides:
        data = apply_overrides(data, overrides, source=f"{p}: --set")
    return parse_scenario(data, source=str(p), base_dir=p.parent)


def parse_scenario(data: Mapping[str, Any], *, source: str = "<dict>",
                   base_dir: str | Path | None = None) -> ScenarioFile:
    """Check and resolve a scenario file's table (what :func:`load_scenario_file` reads).

    Parameters
    ----------
    data : mapping
        The file's top-level table.
    source : str
        Named in error messages.
    base_dir : str or Path, optional
        Where a relative ``failures.trace`` path starts (default: the current directory;
        :func:`load_scenario_file` passes the file's directory).

    Returns
    -------
    ScenarioFile

    Raises
    ------
    ScenarioFileError
        As :func:`load_scenario_file`.

    Examples
    --------
    >>> sf = parse_scenario({
    ...     "cluster": {"gpus": 1024, "gpus_per_node": 8, "tp": 8, "pp": 4},
    ...     "job": {"step_time": "10 s", "steps": 1000},
    ...     "failures": {"model": "system", "per_1000_node_days": 6.5},
    ... })
    >>> sf.scenario.n_groups, sf.nodes, round(sf.scenario.system_mtbf / 3600, 1)
    (32, 128, 28.8)
    """
    rd = _Reader(source)
    if not isinstance(data, Mapping):
        raise ScenarioFileError(f"{source}: the scenario must be a table, got {type(data).__name__}")
    tables: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if key not in _SECTIONS[""]:
            raise rd.fail(f"key {key!r}", f"is unknown (allowed at the top: {list(_SECTIONS[''])})", value)
        if key in _SUBTABLES:
            if not isinstance(value, dict):
                raise rd.fail(f"[{key}]", "must be a table", value)
            for k, v in value.items():
                if k not in _SECTIONS[key]:
                    raise rd.fail(f"key '{key}.{k}'", f"is unknown (allowed in [{key}]: {list(_SECTIONS[key])})", v)
            tables[key] = dict(value)
    for needed in ("cluster", "job", "failures"):
        if needed not in tables:
            raise ScenarioFileError(f"{source}: the table [{needed}] is missing")
    name = rd.text("name", data.get("name", Path(source).stem if source != "<dict>" else "custom"))
    if "description" in data:
        rd.text("description", data["description"])

    # cluster: GPUs -> nodes and data-parallel groups
    cl = tables["cluster"]
    gpn = rd.integer("cluster.gpus_per_node", cl.get("gpus_per_node", 8))
    if "gpus" in cl and "nodes" in cl:
        raise rd.fail("cluster.gpus and cluster.nodes", "must not both be given (one sets the other)",
                      (cl["gpus"], cl["nodes"]))
    if "gpus" in cl:
        gpus = rd.integer("cluster.gpus", cl["gpus"])
        if gpus % gpn:
            raise rd.fail("cluster.gpus", f"must be a multiple of cluster.gpus_per_node ({gpn})", gpus)
        nodes = gpus // gpn
    elif "nodes" in cl:
        nodes = rd.integer("cluster.nodes", cl["nodes"])
        gpus = nodes * gpn
    else:
        raise ScenarioFileError(f"{source}: [cluster] needs gpus or nodes")
    if "gpus_per_group" in cl and ("tp" in cl or "pp" in cl):
        raise rd.fail("cluster.gpus_per_group and cluster.tp/pp", "must not both be given",
                      (cl.get("gpus_per_group"), cl.get("tp"), cl.get("pp")))
    if "gpus_per_group" in cl:
        gpg = rd.integer("cluster.gpus_per_group", cl["gpus_per_group"])
    elif "tp" in cl or "pp" in cl:
        gpg = rd.integer("cluster.tp", cl.get("tp", 1)) * rd.integer("cluster.pp", cl.get("pp", 1))
    else:
        raise ScenarioFileError(f"{source}: [cluster] needs gpus_per_group (or tp and pp): the GPUs of one "
                                "data-parallel replica")
    if gpus % gpg:
        raise rd.fail("cluster.gpus_per_group", f"must divide the job's GPUs ({gpus})", gpg)
    n_groups = gpus // gpg
    if n_groups < 2:
        raise rd.fail("cluster.gpus_per_group", f"must leave at least 2 data-parallel groups in {gpus} GPUs", gpg)

    # job: step time and length
    jb = tables["job"]
    tokens_per_step = rd.number("job.tokens_per_step", jb["tokens_per_step"]) if "tokens_per_step" in jb else None
    if "step_time" in jb and "tokens_per_second" in jb:
        raise rd.fail("job.step_time and job.tokens_per_second", "must not both be given",
                      (jb["step_time"], jb["tokens_per_second"]))
    if "step_time" in jb:
        step = rd.duration("job.step_time", jb["step_time"])
    elif "tokens_per_second" in jb:
        if tokens_per_step is None:
            raise ScenarioFileError(f"{source}: job.tokens_per_second needs job.tokens_per_step (the global batch "
                                    "in tokens) to give a step time")
        step = tokens_per_step / rd.number("job.tokens_per_second", jb["tokens_per_second"])
    else:
        raise ScenarioFileError(f"{source}: [job] needs step_time (or tokens_per_second and tokens_per_step)")
    allreduce = rd.duration("job.allreduce_time", jb.get("allreduce_time", 0.0), strict=False)
    if not allreduce < step:
        raise rd.fail("job.allreduce_time", f"must be shorter than the step ({step:g} s)", jb.get("allreduce_time"))
    if "steps" in jb and "tokens" in jb:
        raise rd.fail("job.steps and job.tokens", "must not both be given", (jb["steps"], jb["tokens"]))
    if "steps" in jb:
        steps = rd.integer("job.steps", jb["steps"])
    elif "tokens" in jb:
        if tokens_per_step is None:
            raise ScenarioFileError(f"{source}: job.tokens needs job.tokens_per_step (the global batch in tokens)")
        steps = max(1, math.ceil(rd.number("job.tokens", jb["tokens"]) / tokens_per_step))
    else:
        raise ScenarioFileError(f"{source}: [job] needs steps (or tokens and tokens_per_step)")
    jitter = rd.number("job.jitter", jb.get("jitter", 0.05), low=0.0, strict=False, high=1.0, high_strict=True)

    # failures: one rate form -> the job's system MTBF
    fails = _failures(rd, tables["failures"], gpus=gpus, nodes=nodes, gpus_per_node=gpn, gpus_per_group=gpg,
                      base_dir=Path(base_dir) if base_dir is not None else Path.cwd())

    # costs
    co = tables.get("costs", {})
    restart = rd.duration("costs.restart", co.get("restart", 1800.0), strict=False)
    save = rd.duration("costs.checkpoint_save", co.get("checkpoint_save", 60.0))
    shrink = rd.duration("costs.shrink", co.get("shrink", 0.1), strict=False)
    controller = rd.duration("costs.controller", co.get("controller", 0.1), strict=False)

    # compare
    cp = tables.get("compare", {})
    pol = cp.get("policies", list(_DEFAULT_POLICIES))
    if not isinstance(pol, list) or not pol:
        raise rd.fail("compare.policies", f"must be a non-empty list of {list(POLICY_NAMES)}", pol)
    policies = tuple(rd.choice("compare.policies", p, POLICY_NAMES) for p in pol)
    if len(set(policies)) != len(policies):
        raise rd.fail("compare.policies", "must not repeat a policy", pol)
    if "redundancies" in cp and "r_max" in cp:
        raise rd.fail("compare.redundancies and compare.r_max", "must not both be given",
                      (cp["redundancies"], cp["r_max"]))
    if "redundancies" in cp:
        rr = cp["redundancies"]
        if not isinstance(rr, list) or not rr:
            raise rd.fail("compare.redundancies", "must be a non-empty list of integers >= 1", rr)
        reds = tuple(sorted({rd.integer("compare.redundancies", r) for r in rr}))
    else:
        # an r above the group count is never usable: the range stops there (r_max = 10**18 is
        # not a list of 10**18 numbers)
        reds = tuple(range(1, min(rd.integer("compare.r_max", cp.get("r_max", min(12, n_groups))), n_groups) + 1))
    usable = tuple(r for r in reds if r <= n_groups)
    if not usable:
        raise rd.fail("compare.redundancies", f"must include an r <= the number of groups ({n_groups})", list(reds))
    seeds = tuple(range(rd.integer("compare.seeds", cp.get("seeds", 5), high=MAX_SEEDS)))
    interval: str | float
    iv = cp.get("interval", "auto")
    if isinstance(iv, str) and iv in ("auto", "young", "daly"):
        interval = iv
    elif isinstance(iv, str):
        try:
            interval = parse_duration(iv)
        except ValueError:
            raise rd.fail("compare.interval", "must be 'auto', 'young', 'daly' or a duration > 0", iv) from None
    else:
        interval = rd.duration("compare.interval", iv)
    horizon = rd.number("compare.horizon", cp.get("horizon", 20.0), low=1.0)
    processes = rd.integer("compare.processes", cp.get("processes", 0), low=0)
    layout = rd.choice("compare.layout", cp.get("layout", "consecutive"), SPARE_LAYOUTS)
    if layout.startswith(RACK_AWARE) and not isinstance(fails.model, DomainFailures):
        raise rd.fail("compare.layout", "needs failure domains ([[failures.domains]]) to place the stacks across",
                      layout)
    charge_patch = cp.get("charge_patch", True)
    if not isinstance(charge_patch, bool):
        raise rd.fail("compare.charge_patch", "must be true or false", charge_patch)

    try:
        scenario = Scenario(
            n_groups, n_steps=steps, t_compute=step - allreduce, t_allreduce=allreduce, system_mtbf=fails.system_mtbf,
            weibull_shape=fails.shape, failure_model=fails.model, restart_time=restart, checkpoint_time=save, jitter=jitter,
            shrink_time=shrink, controller_time=controller, charge_patch=charge_patch, max_wall_factor=horizon,
            gpus_per_group=gpg, name=name,
        )
        for p in policies:  # an interval or layout a policy refuses fails here, before any run
            make_policy(p, max(usable) if p != "ckpt" else None,
                        **({"interval": interval} if interval != "auto" else {}))
    except (TypeError, ValueError) as exc:
        raise ScenarioFileError(f"{source}: {exc}") from None
    return ScenarioFile(
        path=source, name=name, scenario=scenario, gpus=gpus, gpus_per_node=gpn, gpus_per_group=gpg, nodes=nodes,
        policies=policies, redundancies=usable, seeds=seeds, interval=interval, processes=processes,
        spare_layout=layout, rate_note=fails.note, data=_plain(data),
        failure_rate=fails.rate, trace=fails.trace, trace_read=fails.trace_read,
        fit=fails.fit,
    )


def _failures(rd: _Reader, fl: dict[str, Any], *, gpus: int, nodes: int, gpus_per_node: int,
              gpus_per_group: int, base_dir: Path) -> _Failures:
    """The ``[failures]`` table resolved: a failure model (or its kind and rate) and the rate in words."""
    single = _single_failures(rd, {k: v for k, v in fl.items() if k != "domains"}, gpus=gpus, nodes=nodes,
                              gpus_per_node=gpus_per_node, gpus_per_group=gpus_per_group, base_dir=base_dir)
    if "domains" not in fl:
        return single
    if isinstance(single.model, TraceReplay):
        raise rd.fail("failures.domains", "does not go with model = 'trace' (a log already holds its multi-node "
                      "events)", fl["domains"])
    # the single failures as a whole model (kind + rate), which the domains compose
    base = (FailureModel.by_kind(single.model) if isinstance(single.model, str) else single.model.replace)(
        system_mtbf=single.system_mtbf, shape=single.shape)
    model, words = _domains(rd, fl["domains"], base, nodes=nodes, gpus_per_node=gpus_per_node,
                            gpus_per_group=gpus_per_group)
    mtbf = model.mtbf(gpus // gpus_per_group)
    return _Failures(model=model, system_mtbf=None, shape=None, rate=single.rate,
                     note=f"{single.note}; plus {words}: all failures, system MTBF {mtbf / 3600:.3g} h",
                     fit=single.fit, trace=single.trace, trace_read=single.trace_read)


def _domains(rd: _Reader, spec: Any, base: FailureModel, *, nodes: int, gpus_per_node: int,
             gpus_per_group: int) -> tuple[DomainFailures, str]:
    """``[[failures.domains]]`` (levels coarsest first) on top of ``base``: the model and the levels in words.

    A domain of ``d`` nodes holds whole groups (``d`` a multiple of the nodes per group ``g``:
    ``d / g`` groups per domain) or lies inside one group (``g`` a multiple of ``d``: the group
    is down when any of its ``g / d`` domains fails; the first of ``g / d`` independent
    exponential clocks of mean ``m`` rings after an exponential time of mean ``m d / g``, so the
    group gets one clock of that mean, exactly). A domain that straddles groups is refused.
    """
    key = "failures.domains"
    if isinstance(spec, dict):
        spec = [spec]
    if not isinstance(spec, list) or not spec or not all(isinstance(lv, dict) for lv in spec):
        raise rd.fail(key, "must be one table per level, coarsest first ([[failures.domains]] with name, nodes "
                      "and mtbf or interruptions + period)", spec)
    if gpus_per_group % gpus_per_node:
        raise rd.fail(key, f"need groups of whole nodes: cluster.gpus_per_group ({gpus_per_group}) is not a multiple "
                      f"of cluster.gpus_per_node ({gpus_per_node})", spec)
    g = gpus_per_group // gpus_per_node
    names, gpd, laws, words = [], [], [], []
    for i, lv in enumerate(spec):
        at = f"{key}[{i}]"
        for k, v in lv.items():
            if k not in DOMAIN_KEYS:
                raise rd.fail(f"key '{at}.{k}'", f"is unknown (allowed in a domain level: {list(DOMAIN_KEYS)})", v)
        name = rd.text(f"{at}.name", lv.get("name", f"level{i}"))
        if "nodes" not in lv:
            raise ScenarioFileError(f"{rd.source}: {at} needs nodes (the nodes of one domain, e.g. 16 for a rack)")
        d = rd.integer(f"{at}.nodes", lv["nodes"], high=nodes)
        if names and d_prev % d:
            raise rd.fail(f"{at}.nodes", f"must divide the coarser level's nodes ({d_prev}): levels nest, coarsest "
                          "first", d)
        if d % g and g % d:
            raise rd.fail(f"{at}.nodes", f"must be a multiple or a divisor of the nodes per group ({g}): a domain "
                          "that straddles groups is not modelled", d)
        count = -(-nodes // d)  # the job's domains of this level (the last one may be partial)
        if ("mtbf" in lv) == ("interruptions" in lv):
            raise ScenarioFileError(f"{rd.source}: {at} needs exactly one rate form: mtbf (of one domain) or "
                                    f"interruptions with period (over the job's {count} domains)")
        if "mtbf" in lv:
            if "period" in lv:
                raise rd.fail(f"{at}.period", "only goes with interruptions", lv["period"])
            mean = rd.duration(f"{at}.mtbf", lv["mtbf"])
        else:
            if "period" not in lv:
                raise ScenarioFileError(f"{rd.source}: {at}.interruptions needs {at}.period (e.g. '54 d')")
            mean = rd.duration(f"{at}.period", lv["period"]) * count / rd.integer(f"{at}.interruptions",
                                                                                   lv["interruptions"])
        names.append(name)
        gpd.append(max(d // g, 1))
        laws.append(Exponential(mean / max(g // d, 1)))
        words.append(f"{count} {name} domains of {d} nodes, each failing once per {mean / _DAY:.3g} d")
        d_prev = d
    try:
        model = DomainFailures(base, laws, groups_per_domain=gpd, names=names)
    except (TypeError, ValueError) as exc:
        raise rd.fail(key, f"cannot be modelled ({exc})", spec) from None
    return model, "; ".join(words)


def _single_failures(rd: _Reader, fl: dict[str, Any], *, gpus: int, nodes: int, gpus_per_node: int,
                     gpus_per_group: int, base_dir: Path) -> _Failures:
    """``[failures]`` without its domains: the failures of single nodes or groups."""
    kinds = _failure_kinds()
    # a user's cluster replaces the failed node and keeps the others: node renewals unless the
    # file names another model (the paper preset names "per-unit")
    model = rd.choice("failures.model", fl.get("model", "node"), kinds)
    law = rd.choice("failures.law", fl.get("law", "weibull"), FAILURE_LAWS)
    if model == "trace":
        for key in ("law", "weibull_shape", *FAILURE_RATE_KEYS, "period", "measured_on_gpus"):
            if key in fl:
                raise rd.fail(f"failures.{key}", "does not go with model = 'trace' (the log is the rate and the law)",
                              fl[key])
        if "after" not in fl:
            raise ScenarioFileError(f"{rd.source}: model = 'trace' needs failures.after: what happens past the "
                                    f"log's end, one of {list(AFTER)} (a replay never guesses)")
        if "trace" not in fl:
            raise ScenarioFileError(f"{rd.source}: model = 'trace' needs failures.trace (the log's path)")
        after = rd.choice("failures.after", fl["after"], AFTER)
        if "nodes_per_group" in fl:
            npg = rd.integer("failures.nodes_per_group", fl["nodes_per_group"])
        elif gpus_per_group % gpus_per_node == 0:
            npg = gpus_per_group // gpus_per_node
        else:
            raise rd.fail("failures.nodes_per_group", f"is needed: a group of {gpus_per_group} GPUs is not a whole "
                          f"number of {gpus_per_node}-GPU nodes (give the log's units per group)", None)
        if after != "fit" and "fit_law" in fl:
            raise rd.fail("failures.fit_law", "only goes with law = 'fit' or after = 'fit'", fl["fit_law"])
        trace, read = _read_trace(rd, fl["trace"], base_dir)
        past, lf = "", None
        if after == "fit":
            # past the end: a renewal process of the log's times between system failures
            lf, past = _fit_log(rd, trace, fl.get("fit_law", "weibull"), LAWS, level="system")
        try:
            replay = TraceReplay(trace, after=after, nodes_per_group=npg, **({"law": lf.law} if lf else {}))
        except (TypeError, ValueError) as exc:
            raise rd.fail("failures.trace", f"cannot be replayed ({exc})", fl["trace"]) from None
        instants = len(set(trace.times.tolist()))
        note = (f"the log's: {instants} failure instants in {trace.end / _DAY:.3g} days: system MTBF "
                f"{replay.mtbf(1) / 3600:.3g} h" + (f"; past its end {past}" if past else ""))
        return _Failures(model=replay, system_mtbf=None, shape=None, rate=None, note=note, trace=trace,
                         trace_read=read, fit=lf)
    for key in ("after", "nodes_per_group"):
        if key in fl:
            raise rd.fail(f"failures.{key}", "only goes with model = 'trace'", fl[key])
    if model != "node" and "node_ages" in fl:
        raise rd.fail("failures.node_ages", "only goes with model = 'node'", fl["node_ages"])
    kind: FailureModel | str = model
    if model == "node":
        # node renewals on the file's layout: a node failure downs the one group holding it
        if gpus_per_group % gpus_per_node:
            raise rd.fail("cluster.gpus_per_group", f"must be a multiple of cluster.gpus_per_node ({gpus_per_node}) "
                          "with model = 'node' (a failed node downs one data-parallel group)", gpus_per_group)
        ages = rd.choice("failures.node_ages", fl.get("node_ages", "stationary"), ("stationary", "new"))
        kind = FailureModel.by_kind("node")(gpus_per_node=gpus_per_node, gpus_per_group=gpus_per_group,
                                            initial=ages)
    if law == "fit":
        for key in ("weibull_shape", *FAILURE_RATE_KEYS, "period", "measured_on_gpus"):
            if key in fl:
                raise rd.fail(f"failures.{key}", "does not go with law = 'fit' (the fitted law gives the rate "
                              "and the shape)", fl[key])
        if "trace" not in fl:
            raise ScenarioFileError(f"{rd.source}: law = 'fit' needs failures.trace (the log to fit)")
        trace, read = _read_trace(rd, fl["trace"], base_dir)
        # a Weibull (or exponential) per node scales to the per-unit and system models through
        # its mean and shape; a log-normal per node is a node model's lifetime only
        allowed = LAWS if model == "node" else ("exponential", "weibull")
        lf, words = _fit_log(rd, trace, fl.get("fit_law", "weibull"), allowed, level="unit")
        rate = FailureRate.from_mtbf(lf.mean, unit="node", gpus_per_node=gpus_per_node)
        mtbf = rate.system_mtbf(nodes)
        note = (f"{words}: {lf.n_failures} failures of {trace.n_units} logged nodes over {trace.end / _DAY:.3g} "
                f"days ({lf.n_censored} censored) x {nodes} nodes: system MTBF {mtbf / 3600:.3g} h")
        if lf.law == "lognormal":
            return _Failures(model=kind.replace(lifetime=lf.distribution), system_mtbf=None, shape=None, rate=rate,
                             note=note, trace=trace, fit=lf, trace_read=read)
        shape = float(lf.params["shape"]) if lf.law == "weibull" else 1.0
        return _Failures(model=kind, system_mtbf=mtbf, shape=shape, rate=rate, note=note, trace=trace, fit=lf,
                         trace_read=read)
    if "fit_law" in fl:
        raise rd.fail("failures.fit_law", "only goes with law = 'fit' or after = 'fit'", fl["fit_law"])
    if "trace" in fl:
        raise rd.fail("failures.trace", "only goes with model = 'trace' or law = 'fit'", fl["trace"])
    shape = rd.number("failures.weibull_shape", fl.get("weibull_shape", DEFAULT_WEIBULL_SHAPE))
    rate, note = _rate(rd, fl, gpus=gpus, nodes=nodes, gpus_per_node=gpus_per_node)
    mtbf = rate.system_mtbf(gpus, unit="gpu") if rate.unit == "gpu" else rate.system_mtbf(nodes, unit="node")
    return _Failures(model=kind, system_mtbf=mtbf, shape=shape, rate=rate,
                     note=f"{note}: system MTBF {mtbf / 3600:.3g} h")


def _fit_log(rd: _Reader, trace: Trace, fit_law: Any, allowed: tuple[str, ...], *, level: str
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
    unit = _DAY if level == "unit" else 3600.0
    lo, hi = lf.interval("mean")
    parts = [f"mean {lf.mean / unit:.3g} {'d' if level == 'unit' else 'h'} (95 % CI {lo / unit:.3g}-{hi / unit:.3g})"]
    for q in {"weibull": ("shape",), "lognormal": ("sigma",)}.get(lf.law, ()):
        q_lo, q_hi = lf.interval(q)
        parts.append(f"{q} {lf.params[q]:.3g} ({q_lo:.3g}-{q_hi:.3g})")
    return lf, f"{lf.law} fitted to the log's {what}{chosen}: {', '.join(parts)}"


def _rate(rd: _Reader, fl: dict[str, Any], *, gpus: int, nodes: int, gpus_per_node: int) -> tuple[FailureRate, str]:
    """The one rate form given, as a :class:`FailureRate` (exact conversions), and the form in words."""
    given = [k for k in FAILURE_RATE_KEYS if k in fl]
    if len(given) != 1:
        raise ScenarioFileError(
            f"{rd.source}: [failures] needs exactly one rate form of {list(FAILURE_RATE_KEYS)}, got "
            f"{given or 'none'} (or a log: law = 'fit' or model = 'trace' with failures.trace)"
        )
    form = given[0]
    if form != "interruptions":
        for extra in ("period", "measured_on_gpus"):
            if extra in fl:
                raise rd.fail(f"failures.{extra}", "only goes with failures.interruptions", fl[extra])
    g = gpus_per_node
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
            raise ScenarioFileError(f"{rd.source}: failures.interruptions needs failures.period (e.g. '54 d')")
        period = rd.duration("failures.period", fl["period"])
        on = rd.integer("failures.measured_on_gpus", fl.get("measured_on_gpus", gpus))
        return (FailureRate.from_count(count, period, units=on, unit="gpu", gpus_per_node=g),
                f"{count} interruptions in {period / _DAY:g} days on {on} GPUs, scaled to {gpus} GPUs")
    if form == "mtbf":
        m = rd.duration("failures.mtbf", fl[form])
        return FailureRate.from_mtbf(m, units=gpus, unit="gpu", gpus_per_node=g), "system MTBF given"
    m = rd.duration("failures.node_mtbf", fl[form])
    return FailureRate.from_mtbf(m, unit="node", gpus_per_node=g), f"node MTBF {m / 3600:g} h / {nodes} nodes"


def _read_trace(rd: _Reader, spec: Any, base_dir: Path) -> tuple[Trace, dict[str, Any]]:
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
            raise ScenarioFileError(f"{rd.source}: [failures.trace] needs path (the log file)")
        path = rd.text("failures.trace.path", spec["path"])
        opts = {k: v for k, v in spec.items() if k != "path"}
        if isinstance(opts.get("unit_map"), str):
            opts["unit_map"] = _hostfile(rd, opts["unit_map"], base_dir)
    else:
        raise rd.fail("failures.trace", "must be a path (string) or a table with path and read options", spec)
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base_dir / full
    if not full.is_file():
        raise rd.fail("failures.trace", f"must name a readable file (looked for {str(full)!r})", path)
    full = full.resolve()  # the provenance names the file wherever the command ran
    try:
        trace = read_trace(full, **opts)
    except TraceFormatError as exc:
        raise ScenarioFileError(f"{rd.source}: failures.trace: {exc}") from None
    except (TypeError, ValueError, ImportError) as exc:
        raise ScenarioFileError(f"{rd.source}: failures.trace: {exc}") from None
    digest = hashlib.sha256(full.read_bytes()).hexdigest()
    return trace, {"path": str(full), "sha256": digest, **_plain(opts)}


def _hostfile(rd: _Reader, path: str, base_dir: Path) -> list[str]:
    """Host names in rank order from a hostfile (``failures.trace.unit_map = "hosts.txt"``): the
    first word of each line (so MPI's ``host slots=8`` works), blank and ``#`` lines skipped."""
    full = Path(path).expanduser()
    if not full.is_absolute():
        full = base_dir / full
    try:
        text = full.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise rd.fail("failures.trace.unit_map", f"must name a readable hostfile ({exc})", path) from None
    hosts = [line.split()[0] for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not hosts:
        raise rd.fail("failures.trace.unit_map", "must name a hostfile listing at least one host", path)
    return hosts


def _plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """The table with TOML dates and times as ISO strings (JSON-friendly)."""
    def conv(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, (bool, int, float, str)) or v is None:
            return v
        return v.isoformat() if hasattr(v, "isoformat") else str(v)
    return {k: conv(v) for k, v in data.items()}
