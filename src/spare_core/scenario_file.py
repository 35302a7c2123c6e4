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

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import _files, _limits
from ._files import Reader, TomlFileError, parse_duration, plain, read_toml
from .events import FailureModel, failure_model_kinds
from .events.domains import DOMAIN_KEYS
from .events.files import (FAILURE_LAWS, FAILURE_RATE_KEYS, FIT_LAWS, TRACE_OPTIONS, FileCluster, FileFailures,
                           pinned_inputs, recording_inputs)
from .events.fit import LifetimeFit
from .events.nodes import NodeRenewals
from .events.rates import FailureRate
from .events.trace import Trace
from .events.trace_model import TraceReplay
from .sim import DEFAULT_POLICIES, Scenario, policy_names, registered_policy
from .sim.study import check_repairs
from .distributions import law_from_file
from .sim.recovery import RESTART_RULES, MemoryTier, Pricing, Repairs
from .sim.classes import RECOVERIES, FailureClass, FailureClasses
from .stragglers.steptime import STRAGGLER_KEYS, read_stragglers

__all__ = ["ScenarioFile", "ScenarioFileError", "TomlFileError", "MAX_SEEDS", "read_toml", "load_scenario_file",
           "parse_scenario", "parse_duration", "apply_overrides", "FAILURE_RATE_KEYS", "FAILURE_LAWS", "FIT_LAWS",
           "TRACE_OPTIONS", "DOMAIN_KEYS", "CLASS_KEYS"]

#: keys of one ``[[failures.classes]]`` table
CLASS_KEYS = ("name", "share", "recovery", "detect", "masked", "nodes", "values")

#: ``[checkpoint]``'s keys of the persistent checkpoint's size and storage (the others are the
#: in-memory tier's)
IO_KEYS = ("size", "write_bandwidth", "read_bandwidth", "efficiency", "mode", "host_copy")
#: ``[checkpoint]``'s keys that price the in-memory tier's copies by the network (they set
#: ``memory_save`` and ``memory_restore``)
MEMORY_IO_KEYS = ("memory_bandwidth", "node_state")


_SECTIONS: dict[str, tuple[str, ...]] = {
    # and the shorthand tables registered policies declare (``RegisteredPolicy.table``: elastic's
    # ``[elastic]``), see :func:`_top_keys`
    "": ("name", "description", "cluster", "job", "failures", "costs", "compare", "policy", "repair", "fleet",
         "checkpoint", "stragglers"),
    "cluster": ("gpus", "nodes", "gpus_per_node", "gpus_per_group", "tp", "pp"),
    "job": ("step_time", "allreduce_time", "tokens_per_second", "tokens_per_step", "steps", "tokens", "jitter"),
    # the built-in failure models' keys, in the order the messages list them; a model registered
    # later adds its own (``FailureModel.file_keys``, see :func:`_allowed`)
    "failures": ("model", "law", "weibull_shape", "period", "measured_on_gpus", *FAILURE_RATE_KEYS, "trace", "after",
                 "nodes_per_group", "node_ages", "domains", "fit_law", "classes"),
    "costs": ("restart", "checkpoint_save", "shrink", "controller", "gpu_hour", "spot_gpu_hour"),
    "repair": ("swap", "spares", "time", "rejoin", "manual_time", "escalate", "fail_fix", "misdiagnose"),
    # warm standbys before the spare pool (they refill from it)
    "fleet": ("standbys", "standby_swap", "host_select", "restart_when", "lemon_share", "lemon_rate",
              "lemon_fix", "retire_after", "lemons", "place"),
    "checkpoint": ("memory_save", "memory_every", "memory_restore", "memory_copies", *IO_KEYS, *MEMORY_IO_KEYS),
    # a measured slowdown or a trace, what the remedies leave of it and what they cost
    "stragglers": STRAGGLER_KEYS,
    # and the shorthands registered policies read here (``RegisteredPolicy.compare_keys``:
    # SPARe's ``layout``), see :func:`_allowed`
    "compare": ("policies", "redundancies", "r_max", "seeds", "interval", "horizon", "processes", "charge_patch"),
}
_SUBTABLES = ("cluster", "job", "failures", "costs", "compare", "repair", "fleet", "checkpoint", "stragglers")
#: ``failures.model`` when the file names none: a user's cluster replaces the failed node and
#: keeps the others (the paper preset names "per-unit")
_DEFAULT_FAILURE_MODEL = "node"


def _file_models() -> list[type]:
    """Classes of the registered failure models a file can use: ``model =`` kinds, then layers."""
    classes = [FailureModel.by_kind(k) for k in failure_model_kinds()]
    return [c for c in classes if c.reads_files()] + [c for c in classes if c.file_layer]


def _shorthand_tables() -> dict[str, str]:
    """Top-level tables that are registered policies' shorthands: table -> policy name."""
    return {e.table: n for n in policy_names() if (e := registered_policy(n)).table is not None}


def _top_keys() -> tuple[str, ...]:
    """The keys allowed at the top of a file: the sections and the policies' shorthand tables."""
    return _SECTIONS[""] + tuple(t for t in _shorthand_tables() if t not in _SECTIONS[""])


def _allowed(section: str) -> tuple[str, ...]:
    """The keys of ``[section]``: ``[failures]`` takes every registered model's keys, a
    policy's shorthand table that policy's options (but its interval, which ``[compare]`` or
    ``[policy.NAME]`` sets)."""
    short = _shorthand_tables()
    if section in short and section not in _SECTIONS:
        return tuple(o for o in registered_policy(short[section]).options or () if o != "interval")
    keys = _SECTIONS[section]
    if section == "failures":
        extra = [k for c in _file_models() for k in c.file_keys if k not in keys]
        keys = keys + tuple(dict.fromkeys(extra))
    elif section == "compare":
        extra = [k for n in policy_names() for k in registered_policy(n).compare_keys if k not in keys]
        keys = keys + tuple(dict.fromkeys(extra))
    return keys


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
    # period and measured_on_gpus qualify failures.interruptions, they are not a rate of their own:
    # setting one drops nothing (it used to drop the file's mtbf, and the error said "got none")
    for n in ("period", "measured_on_gpus"):
        out[f"failures.{n}"] = ()
    out["failures.law"] = rates + ("weibull_shape",)
    return out


# an override of one form of a quantity drops the file's other forms of it
_ALTERNATIVES = _alternatives()


#: the most seeds per cell a file (or ``--seeds``) may ask for: a grid keeps one task per
#: (scenario, seed) in memory, and 2**24 of them are already months of CPU at the smallest runs
MAX_SEEDS = _limits.MAX_SEEDS


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
    rate_note: str
    data: dict[str, Any] = field(repr=False)
    failure_rate: FailureRate | None = None
    trace: Trace | None = field(default=None, repr=False)
    trace_read: dict[str, Any] | None = field(default=None, repr=False)
    fit: LifetimeFit | None = field(default=None, repr=False)
    policy_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the straggler remedies ``[stragglers]`` lets ``spare advise`` and ``spare map`` weigh
    #: (``"evict"``, ``"rebalance"``, ``"pacing"``); empty without the table
    remedies: tuple[str, ...] = ()
    #: where the file's relative paths (``failures.trace``, a hostfile) start
    base_dir: str | None = field(default=None, repr=False)
    #: ``[checkpoint]``'s size and bandwidths, which set the save, drain and load times (None: not given)
    checkpoint_io: "CheckpointIO | None" = field(default=None, repr=False)
    #: the input files read (failure log, straggler trace): resolved path -> sha256 of the content
    #: used, which :meth:`with_overrides` keeps whatever happens to the files
    inputs: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def with_overrides(self, overrides: Sequence[str | tuple[str, Any]], *, source: str | None = None) -> "ScenarioFile":
        """The file resolved again with ``overrides`` on top of its table, without reading it
        again: what a map's cell or a sweep's point is (its log and its fit are the ones already
        read and fitted, :mod:`spare_core.events.files`, when the overrides leave the failure
        input as it was).

        Parameters
        ----------
        overrides : sequence of str or (str, value)
            As :func:`load_scenario_file` takes them.
        source : str, optional
            Named in error messages (default: the file's path).

        Examples
        --------
        >>> sf = parse_scenario({"cluster": {"gpus": 64, "gpus_per_group": 8},
        ...                      "job": {"step_time": 1, "steps": 10}, "failures": {"mtbf": "2 h"}})
        >>> sf.with_overrides([("job.steps", 20)]).scenario.n_steps, sf.scenario.n_steps
        (20, 10)
        """
        where = source or self.path
        data = apply_overrides(self.data, overrides, source=f"{where}: --set") if overrides else self.data
        with pinned_inputs(self.inputs):  # the log and trace read, even if the files changed since
            return parse_scenario(data, source=where, base_dir=self.base_dir)

    def policy_kwargs(self) -> dict[str, dict[str, Any]]:
        """Options per compared policy name (:attr:`policy_options`), with the file's interval
        when it is not "auto": the keywords of :func:`spare_core.sim.make_policy`."""
        out: dict[str, dict[str, Any]] = {}
        for name in self.policies:
            kw = dict(self.policy_options.get(name, {}))
            if self.interval != "auto":
                kw["interval"] = self.interval
            if kw:
                out[name] = kw
        return out

    def at_rate(self, factor: float) -> Scenario:
        """The scenario with failures ``factor`` times as frequent (the sensitivity of an answer).

        The failure model says how (:meth:`spare_core.events.FailureModel.scaled`): a rate-law
        model divides its system MTBF, a trace replay its log's time axis (the same failures,
        in the same order and groups, ``factor`` times as often), failure domains the single
        failures and every level's rate; any other model has its time axis compressed.

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
        return self.scenario.replace(failure_model=self.scenario.failures.scaled(factor))

    def to_dict(self) -> dict[str, Any]:
        """The resolved file as JSON-friendly values: the user's table and the simulator's scenario.

        A log (``failures.trace``) appears as how it was read — path, sha256, read options,
        rows, units, end — not row by row: the provenance of a job replaying a million-row log
        stays small, and the scenario's failure model still rebuilds from it
        (:meth:`spare_core.events.FailureModel.from_dict` reads the path with those options).
        """
        scenario = self.scenario.to_dict()
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
            "policy_options": {k: dict(v) for k, v in self.policy_options.items()},
        }
        if self.remedies or "stragglers" in self.data:
            out["stragglers"] = {"remedies": list(self.remedies)}
        if self.trace is not None and self.trace_read is not None:
            out["trace"] = {**self.trace_read, "rows": self.trace.n_events, "units": self.trace.n_units,
                            "end_seconds": self.trace.end}
            fm = scenario.get("failure_model")
            if isinstance(fm, dict) and fm.get("kind") == "trace":
                # read_trace's options only: unit_gpus is the file's (the replay's nodes_per_group holds it)
                fm["trace"] = {k: v for k, v in self.trace_read.items() if k not in ("sha256", "unit_gpus", "capacity")}
        if self.fit is not None:
            level = "times between system failures" if isinstance(self.scenario.failures, TraceReplay) else "node lifetimes"
            out["fit"] = {"law": self.fit.law, "level": level, "params": dict(self.fit.params),
                          "mean": self.fit.mean, "confidence": self.fit.confidence,
                          "intervals": {k: list(v) for k, v in self.fit.intervals.items()},
                          "failures": self.fit.n_failures, "censored": self.fit.n_censored}
            check = getattr(self.fit, "check", None)
            if check is not None:  # the fit re-simulated over the log's own window
                out["fit"]["check"] = check.to_dict()
        return out


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str | tuple[str, Any]], *,
                    source: str = "--set") -> dict[str, Any]:
    """A copy of ``data`` with ``KEY=VALUE`` overrides (``KEY`` dotted, ``VALUE`` TOML) or
    ``(KEY, value)`` pairs applied.

    A value that is not valid TOML is taken as a string, so ``failures.mtbf=2h`` and
    ``failures.mtbf="2 h"`` both work. An override replaces the file's other forms of the same
    quantity (``job.steps`` drops ``job.tokens``, ``failures.mtbf`` another rate form,
    ``compare.r_max`` the list of redundancies, ...); ``checkpoint.size`` replaces
    ``costs.checkpoint_save``.

    A count of interruptions (``failures.interruptions`` + ``failures.period``) without
    ``failures.measured_on_gpus`` was measured on the file's own job: when the overrides change
    ``[cluster]`` and leave the count as written, the file's GPUs are pinned as
    ``measured_on_gpus``, so the per-GPU rate holds at the new size (and the failures line says
    "scaled to").

    Examples
    --------
    >>> apply_overrides({"job": {"steps": 10}}, ["job.steps=20", "compare.seeds=3"])
    {'job': {'steps': 20}, 'compare': {'seeds': 3}}
    >>> apply_overrides({"cluster": {"gpus": 16384}, "failures": {"interruptions": 419, "period": "54 d"}},
    ...                 ["cluster.gpus=131072"])["failures"]["measured_on_gpus"]
    16384
    """
    out = _files.apply_overrides(data, overrides, source=source, alternatives=_ALTERNATIVES,
                                 error=ScenarioFileError)
    return _pin_measured_size(data, _size_replaces_save(data, out))


def _size_replaces_save(before: Mapping[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """An override that gives ``checkpoint.size`` replaces the file's ``costs.checkpoint_save``
    (the other form of a save's time), as overrides of one quantity do."""
    ck_b, ck_a, co = before.get("checkpoint"), after.get("checkpoint"), after.get("costs")
    had = isinstance(ck_b, dict) and "size" in ck_b
    if (isinstance(ck_a, dict) and "size" in ck_a and not had and isinstance(co, dict) and "checkpoint_save" in co
            and co.get("checkpoint_save") == (before.get("costs") or {}).get("checkpoint_save")):
        return {**after, "costs": {k: v for k, v in co.items() if k != "checkpoint_save"}}
    return after


def _pin_measured_size(before: Mapping[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``after`` with the file's job size as ``measured_on_gpus`` of every count of
    interruptions (``[failures]``'s and each ``[[failures.domains]]`` level's) that overrides
    left as written while resizing the cluster (see :func:`apply_overrides`)."""
    fb, fa, cl = before.get("failures"), after.get("failures"), before.get("cluster")
    if not (isinstance(fb, dict) and isinstance(fa, dict) and isinstance(cl, dict)
            and before.get("cluster") != after.get("cluster")):
        return after
    gpn = cl.get("gpus_per_node", 8)
    gpus = cl.get("gpus", cl["nodes"] * gpn if isinstance(cl.get("nodes"), int) and isinstance(gpn, int) else None)
    if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
        return after  # the reader refuses the file's own cluster with its own message

    def pinned(b: Any, a: Any) -> Any:
        if (isinstance(b, dict) and isinstance(a, dict) and "interruptions" in b and "measured_on_gpus" not in a
                and a.get("interruptions") == b["interruptions"] and a.get("period") == b.get("period")):
            return {**a, "measured_on_gpus": gpus}
        return a

    fa = pinned(fb, fa)
    db, da = fb.get("domains"), fa.get("domains")
    if isinstance(db, list) and isinstance(da, list) and len(db) == len(da):
        fa = {**fa, "domains": [pinned(b, a) for b, a in zip(db, da)]}
    elif isinstance(db, dict) and isinstance(da, dict):
        fa = {**fa, "domains": pinned(db, da)}
    return {**after, "failures": fa}


def load_scenario_file(path: str | Path, overrides: Sequence[str | tuple[str, Any]] = ()) -> ScenarioFile:
    """Read, check and resolve a scenario file.

    Parameters
    ----------
    path : str or Path
        A TOML file (layout in the module docstring and docs/cli.md).
    overrides : sequence of str or (str, value)
        ``KEY=VALUE`` items (``--set``) or ``(KEY, value)`` pairs (a flag's or a spec's values)
        applied on top of the file (:func:`apply_overrides`).

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
    with recording_inputs() as inputs:
        sf = _parse_scenario(data, source, base_dir)
    return dataclasses.replace(sf, inputs=inputs)


def _parse_scenario(data: Mapping[str, Any], source: str, base_dir: str | Path | None) -> ScenarioFile:
    rd = Reader(source, ScenarioFileError)
    tables = _tables(rd, data)
    name = rd.text("name", data.get("name", Path(source).stem if source != "<dict>" else "custom"))
    if "description" in data:
        rd.text("description", data["description"])
    cluster = _cluster(rd, tables["cluster"], Path(base_dir) if base_dir is not None else Path.cwd())
    job = _job(rd, tables["job"])
    fails = _failures(rd, {k: v for k, v in tables["failures"].items() if k != "classes"}, cluster)
    classes = _classes(rd, tables["failures"], cluster, fails)
    costs = _costs(rd, tables.get("costs", {}))
    io = _checkpoint_io(rd, tables.get("checkpoint", {}), tables.get("costs", {}))
    policy_tables = _with_shorthand_tables(rd, tables, data.get("policy", {}))
    cmp = _compare(rd, tables.get("compare", {}), policy_tables, n_groups=cluster.n_groups)
    fails = _lemons(rd, tables.get("fleet"), fails)
    # retire_after = 0 is no retirement (as absent), so it goes with a domain class (``_lemons`` checked it)
    if classes is not None and classes.has_domains and (tables.get("fleet") or {}).get("retire_after", 0) != 0:
        raise rd.fail("fleet.retire_after", "cannot go with a failure class of recovery = \"domain\" (a domain "
                      "event's groups are no failures of their nodes to count)", tables["fleet"]["retire_after"])
    fails = _place(rd, tables.get("fleet"), tables.get("repair"), fails)
    repair = _repair(rd, tables.get("repair"), cluster, tables.get("fleet"))
    try:
        scenario = Scenario(
            cluster.n_groups, n_steps=job.steps, t_compute=job.step - job.allreduce, t_allreduce=job.allreduce,
            system_mtbf=fails.system_mtbf, weibull_shape=fails.shape, failure_model=fails.model,
            restart_time=costs.restart if io is None else costs.restart + io.load_seconds,
            checkpoint_time=costs.save if io is None else io.blocking_seconds,
            checkpoint_drain=0.0 if io is None else io.drain_seconds, jitter=job.jitter, shrink_time=costs.shrink,
            controller_time=costs.controller, charge_patch=cmp.charge_patch, max_wall_factor=cmp.horizon,
            gpus_per_group=cluster.gpus_per_group, name=name, repair=repair,
            pricing=None if costs.gpu_hour is None else Pricing(costs.gpu_hour, costs.spot_gpu_hour,
                                                                 tokens_per_step=job.tokens_per_step),
            failure_classes=classes,
        )
    except (TypeError, ValueError) as exc:
        raise ScenarioFileError(f"{source}: {exc}") from None
    memory_keys = _memory_by_network(rd, tables.get("checkpoint", {}), io, costs.restart, cluster)
    if memory_keys:
        scenario = scenario.replace(memory=_memory(rd, memory_keys, scenario))
    remedies: tuple[str, ...] = ()
    if "stragglers" in tables:
        model, remedies = read_stragglers(rd, tables["stragglers"], base_dir=cluster.base_dir, nodes=cluster.nodes,
                                          jitter=job.jitter, restart=costs.restart, repair=repair)
        scenario = scenario.replace(step_time_model=model)
    for p in cmp.policies:  # options, an interval or a layout a policy refuses fail here, before any run
        entry = registered_policy(p)
        opts, where = cmp.options[p]
        try:
            for r in cmp.redundancies if entry.uses_redundancy else (None,):
                pol = entry.build(r, **opts)
                if cmp.interval != "auto":
                    pol = pol.with_interval(cmp.interval)
                pol.check(scenario)
                check_repairs(pol, scenario)  # [repair] on a model that cannot give it (every command, up front)
        except (TypeError, ValueError) as exc:
            raise ScenarioFileError(f"{source}: {' and '.join(where) or f'policy {p!r}'}: {exc}") from None
    return ScenarioFile(
        path=source, name=name, scenario=scenario, gpus=cluster.gpus, gpus_per_node=cluster.gpus_per_node,
        gpus_per_group=cluster.gpus_per_group, nodes=cluster.nodes, policies=cmp.policies,
        redundancies=cmp.redundancies, seeds=cmp.seeds, interval=cmp.interval, processes=cmp.processes,
        rate_note=fails.note, data=plain(data), failure_rate=fails.rate, trace=fails.trace,
        trace_read=fails.trace_read, fit=fails.fit,
        policy_options={p: opts for p, (opts, _) in cmp.options.items() if opts}, remedies=remedies,
        base_dir=None if base_dir is None else str(base_dir), checkpoint_io=io,
    )


# -- the tables, one function each --------------------------------------------------------------
def _tables(rd: Reader, data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The file's sub-tables, every key checked against its table's (a typo is never a default)."""
    if not isinstance(data, Mapping):
        raise rd.error(f"the scenario must be a table, got {type(data).__name__}")
    tables: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if key not in _top_keys():
            raise rd.fail(f"key {key!r}", f"is unknown (allowed at the top: {list(_top_keys())})", value)
        if key in _SUBTABLES or key in _shorthand_tables():
            if not isinstance(value, dict):
                raise rd.fail(f"[{key}]", "must be a table", value)
            allowed = _allowed(key)
            for k, v in value.items():
                if k not in allowed:
                    raise rd.fail(f"key '{key}.{k}'", f"is unknown (allowed in [{key}]: {list(allowed)})", v)
            tables[key] = dict(value)
    for needed in ("cluster", "job", "failures"):
        if needed not in tables:
            raise rd.error(f"the table [{needed}] is missing")
    return tables


def _cluster(rd: Reader, cl: dict[str, Any], base_dir: Path) -> FileCluster:
    """``[cluster]``: GPUs -> nodes and data-parallel groups (at least 2)."""
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
        raise rd.error("[cluster] needs gpus or nodes")
    if "gpus_per_group" in cl and ("tp" in cl or "pp" in cl):
        raise rd.fail("cluster.gpus_per_group and cluster.tp/pp", "must not both be given",
                      (cl.get("gpus_per_group"), cl.get("tp"), cl.get("pp")))
    if "gpus_per_group" in cl:
        gpg = rd.integer("cluster.gpus_per_group", cl["gpus_per_group"])
    elif "tp" in cl or "pp" in cl:
        if ("tp" in cl) != ("pp" in cl):  # never a silent 1: a replica of tp x 1 GPUs is rarely what was meant
            given, other = ("tp", "pp") if "tp" in cl else ("pp", "tp")
            raise rd.fail(f"cluster.{given}", f"needs cluster.{other} too (a replica is tp x pp GPUs; write {other} = 1 "
                          f"if the model has no {'pipeline' if other == 'pp' else 'tensor'} parallelism)", cl[given])
        gpg = rd.integer("cluster.tp", cl["tp"]) * rd.integer("cluster.pp", cl["pp"])
    else:
        raise rd.error("[cluster] needs gpus_per_group (or tp and pp): the GPUs of one data-parallel replica")
    if gpus % gpg:
        raise rd.fail("cluster.gpus_per_group", f"must divide the job's GPUs ({gpus})", gpg)
    if gpus // gpg < 2:
        raise rd.fail("cluster.gpus_per_group", f"must leave at least 2 data-parallel groups in {gpus} GPUs", gpg)
    return FileCluster(gpus=gpus, nodes=nodes, gpus_per_node=gpn, gpus_per_group=gpg, base_dir=base_dir)


@dataclass(frozen=True)
class _Job:
    step: float
    allreduce: float
    steps: int
    jitter: float
    tokens_per_step: float | None = None


def _job(rd: Reader, jb: dict[str, Any]) -> _Job:
    """``[job]``: the failure-free step (and its all-reduce part), the job's length in steps, the jitter."""
    tokens_per_step = rd.number("job.tokens_per_step", jb["tokens_per_step"]) if "tokens_per_step" in jb else None
    if "step_time" in jb and "tokens_per_second" in jb:
        raise rd.fail("job.step_time and job.tokens_per_second", "must not both be given",
                      (jb["step_time"], jb["tokens_per_second"]))
    if "step_time" in jb:
        step = rd.duration("job.step_time", jb["step_time"])
    elif "tokens_per_second" in jb:
        if tokens_per_step is None:
            raise rd.error("job.tokens_per_second needs job.tokens_per_step (the global batch in tokens) to give a "
                           "step time")
        step = tokens_per_step / rd.number("job.tokens_per_second", jb["tokens_per_second"])
    else:
        raise rd.error("[job] needs step_time (or tokens_per_second and tokens_per_step)")
    allreduce = rd.duration("job.allreduce_time", jb.get("allreduce_time", 0.0), strict=False)
    if not allreduce < step:
        raise rd.fail("job.allreduce_time", f"must be shorter than the step ({step:g} s)", jb.get("allreduce_time"))
    if "steps" in jb and "tokens" in jb:
        raise rd.fail("job.steps and job.tokens", "must not both be given", (jb["steps"], jb["tokens"]))
    if "steps" in jb:
        steps = rd.integer("job.steps", jb["steps"])
    elif "tokens" in jb:
        if tokens_per_step is None:
            raise rd.error("job.tokens needs job.tokens_per_step (the global batch in tokens)")
        steps = max(1, math.ceil(rd.number("job.tokens", jb["tokens"]) / tokens_per_step))
    else:
        raise rd.error("[job] needs steps (or tokens and tokens_per_step)")
    jitter = rd.number("job.jitter", jb.get("jitter", 0.05), low=0.0, strict=False, high=1.0, high_strict=True)
    return _Job(step=step, allreduce=allreduce, steps=steps, jitter=jitter, tokens_per_step=tokens_per_step)


def _failures(rd: Reader, fl: dict[str, Any], cluster: FileCluster) -> FileFailures:
    """``[failures]``: the kind named by ``model`` reads its own keys (``FailureModel.from_file``),
    then each layer given (``[[failures.domains]]``) composes it.

    A key of another kind is refused here, naming the kinds it goes with (or with the kind's own
    reason, ``FailureModel.file_refused``), so that a kind sees only its keys.
    """
    models = _file_models()
    kinds = [c.kind for c in models if not c.file_layer]
    kind = rd.choice("failures.model", fl.get("model", _DEFAULT_FAILURE_MODEL), kinds)
    cls = FailureModel.by_kind(kind)
    for key, rule in cls.file_refused.items():
        if key in fl:
            raise rd.fail(f"failures.{key}", rule, fl[key])
    own = set(cls.file_keys) | {"model"} | {k for c in models if c.file_layer for k in c.file_keys}
    for key in _allowed("failures"):
        if key in fl and key not in own:
            owners = [c.kind for c in models if key in c.file_keys]
            kinds_words = " or ".join(", ".join(repr(k) for k in owners).rsplit(", ", 1))
            raise rd.fail(f"failures.{key}", f"only goes with model = {kinds_words}", fl[key])
    layers = [c for c in models if c.file_layer]
    layer_keys = {k for c in layers for k in c.file_keys}
    out = cls.from_file(rd, {k: v for k, v in fl.items() if k != "model" and k not in layer_keys}, cluster)
    for layer in layers:
        if any(k in fl for k in layer.file_keys):
            out = layer.from_file(rd, {k: fl[k] for k in layer.file_keys if k in fl}, cluster, below=out)
    return out


def _classes(rd: Reader, fl: dict[str, Any], cluster, fails) -> FailureClasses | None:
    """``[[failures.classes]]``: shares of the file's failure rate by recovery and detection time
    (``spare_core.sim.classes``). A class's own rate is refused: the shares split the one rate
    the file gives, so the classes add up to the failures the file describes. A ``"domain"``
    class gives its domain's ``nodes`` (contiguous nodes, e.g. the 32 behind a leaf switch): a
    multiple of the nodes per group (that many groups per domain) or a divisor (a domain inside
    one group takes that group).

    With ``values`` (every class, or none) the classes map a replayed log's cause column
    (``failures.trace.reason_column``): a row's class is its value's, and each class's share is
    its rows' fraction of the log (a ``share`` is refused: the log says it)."""
    spec = fl.get("classes")
    if spec is None:
        return None
    key = "failures.classes"
    if isinstance(spec, dict):
        spec = [spec]
    if not isinstance(spec, list) or not spec or not all(isinstance(c, dict) for c in spec):
        raise rd.fail(key, "must be one table per class ([[failures.classes]] with name, share and recovery)", spec)
    if "domains" in fl:
        raise rd.fail(key, "cannot go with [[failures.domains]] (a level's event would get one class per group it "
                      "takes): give the domains, or the classes, a switch's or a rack's failures as a class of "
                      "recovery = \"domain\" with its nodes", spec)
    out = []
    for i, c in enumerate(spec):
        at = f"{key}[{i}]"
        for k, v in c.items():
            if k in ("mtbf", "interruptions", "period", "per_1000_node_days"):
                raise rd.fail(f"{at}.{k}", "is not taken: a class is a share of the failure rate [failures] gives "
                              "(share = its fraction, the shares adding up to 1)", v)
            if k not in CLASS_KEYS:
                raise rd.fail(f"key '{at}.{k}'", f"is unknown (allowed in a failure class: {list(CLASS_KEYS)})", v)
        by_value = any("values" in o for o in spec)
        if by_value and "values" not in c:
            raise rd.fail(at, "needs values: a class of a log's rows lists its cause values (every class does when "
                          "one does; values = [\"*\"] takes the values no other class lists)", c)
        if by_value and "share" in c:
            raise rd.fail(f"{at}.share", "is not taken with values: the log's rows give each class's share (its rows "
                          "over the log's rows)", c["share"])
        for k in ("name", "recovery") if by_value else ("name", "share", "recovery"):
            if k not in c:
                raise rd.fail(at, f"needs {k} (a class is a name, a share of the failure rate and a recovery)", c)
        name = rd.text(f"{at}.name", c["name"])
        share = 0.0 if by_value else rd.number(f"{at}.share", c["share"], low=0.0, strict=False, high=1.0)
        values = None
        if by_value:
            v = c["values"]
            if isinstance(v, str):
                v = [v]
            if not isinstance(v, list) or not v or not all(isinstance(x, str) and x.strip() for x in v):
                raise rd.fail(f"{at}.values", "must be a non-empty list of the log's cause values (text), or \"*\"", c["values"])
            values = tuple(x.strip() for x in v)
            if "*" in values and len(values) > 1:
                raise rd.fail(f"{at}.values", "\"*\" (every value no other class lists) goes alone", c["values"])
        recovery = rd.choice(f"{at}.recovery", c["recovery"], RECOVERIES)
        groups = None
        if recovery == "domain":
            if "nodes" not in c:
                raise rd.fail(at, "needs nodes with recovery = \"domain\" (the nodes of one domain, e.g. 32 behind a "
                              "switch)", c)
            d = rd.integer(f"{at}.nodes", c["nodes"], high=cluster.nodes)
            if cluster.gpus_per_group % cluster.gpus_per_node:
                raise rd.fail(f"{at}.nodes", f"needs groups of whole nodes: cluster.gpus_per_group "
                              f"({cluster.gpus_per_group}) is not a multiple of cluster.gpus_per_node "
                              f"({cluster.gpus_per_node})", d)
            g = cluster.gpus_per_group // cluster.gpus_per_node
            if d % g and g % d:
                raise rd.fail(f"{at}.nodes", f"must be a multiple or a divisor of the nodes per group ({g}): a domain "
                              "that straddles groups is not modelled", d)
            groups = max(d // g, 1)
        elif "nodes" in c:
            raise rd.fail(f"{at}.nodes", f"only goes with recovery = \"domain\" (this class's is {recovery!r})", c["nodes"])
        masked = c.get("masked")
        if masked is not None and not isinstance(masked, bool):
            raise rd.fail(f"{at}.masked", "must be true or false", masked)
        if masked and recovery == "restart":
            raise rd.fail(f"{at}.masked", "cannot be true with recovery = \"restart\": a job-wide fault hits every "
                          "rank, so no redundancy masks it", masked)
        detect = _detect(rd, f"{at}.detect", c.get("detect", 0.0))
        out.append(FailureClass(name, share, recovery, detect=detect, masked=masked, groups=groups, values=values))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise rd.fail(key, "need distinct names", names)
    if out[0].values is not None:
        out = _log_shares(rd, key, out, fails)
    total = math.fsum(c.share for c in out)
    if abs(total - 1.0) > 1e-9:
        raise rd.fail(key, f"shares must add up to 1 (within 1e-9), got {total!r}", {c.name: c.share for c in out})
    try:
        return FailureClasses(tuple(out))
    except (TypeError, ValueError) as exc:
        raise rd.fail(key, str(exc), spec) from None


def _log_shares(rd: Reader, key: str, out: list, fails) -> list:
    """The classes of a log's cause values with their shares: each class's rows over the log's
    rows (the same mapping as a run's, ``FailureClasses.row_classes``)."""
    model = fails.model
    tr = getattr(model, "trace", None)
    if getattr(model, "kind", None) != "trace" or tr is None:
        raise rd.fail(f"{key}[0].values", "needs failures.model = \"trace\" (the values are a replayed log's "
                      "causes)", out[0].values)
    if tr.changes is not None:
        raise rd.fail(f"{key}[0].values", "cannot go with a log of capacity events (failures.trace.event_column)",
                      out[0].values)
    if tr.reasons is None:
        raise rd.fail(f"{key}[0].values", "needs the log's cause column: failures.trace.reason_column",
                      out[0].values)
    seen: dict[str, str] = {}
    for c in out:
        for v in c.values:
            if v in seen:
                raise rd.fail(key, f"list the value {v!r} twice ({seen[v]!r} and {c.name!r})", v)
            seen[v] = c.name
    try:
        shares = FailureClasses(tuple(dataclasses.replace(c, share=1.0 if i == 0 else 0.0)
                                      for i, c in enumerate(out))).log_shares(tr.reasons)
    except ValueError as exc:
        raise rd.fail(f"{key}[*].values", str(exc).removeprefix("failure classes: "), sorted(seen)) from None
    shares = list(shares)
    shares[-1] = max(0.0, 1.0 - math.fsum(shares[:-1]))  # exactly 1 in all
    return [dataclasses.replace(c, share=p) for c, p in zip(out, shares)]


def _detect(rd: Reader, key: str, v: Any):
    """A class's ``detect``: a duration, or a law of durations as ``[repair]`` takes them
    (:func:`spare_core.distributions.law_from_file`; a constant law is its duration)."""
    from .distributions import Deterministic, law_from_file

    law = law_from_file(rd, key, v)
    return float(law.value) if isinstance(law, Deterministic) else law


@dataclass(frozen=True)
class _Costs:
    restart: float
    save: float
    shrink: float
    controller: float
    gpu_hour: float | None
    spot_gpu_hour: float | None = None


def _costs(rd: Reader, co: dict[str, Any]) -> _Costs:
    """``[costs]``: a global restart, one checkpoint save, per masked failure the shrink and
    RECTLR, and the price of a GPU-hour."""
    return _Costs(restart=rd.duration("costs.restart", co.get("restart", 1800.0), strict=False),
                  save=rd.duration("costs.checkpoint_save", co.get("checkpoint_save", 60.0)),
                  shrink=rd.duration("costs.shrink", co.get("shrink", 0.1), strict=False),
                  controller=rd.duration("costs.controller", co.get("controller", 0.1), strict=False),
                  gpu_hour=None if "gpu_hour" not in co else rd.number("costs.gpu_hour", co["gpu_hour"], low=0.0,
                                                                        strict=True),
                  spot_gpu_hour=_spot_price(rd, co))


def _spot_price(rd: Reader, co: dict[str, Any]) -> float | None:
    """``costs.spot_gpu_hour``: the spot price, beside the on-demand ``gpu_hour`` (required with it)."""
    if "spot_gpu_hour" not in co:
        return None
    if "gpu_hour" not in co:
        raise rd.fail("costs.spot_gpu_hour", "needs costs.gpu_hour (the on-demand price it stands beside)",
                      co["spot_gpu_hour"])
    return rd.number("costs.spot_gpu_hour", co["spot_gpu_hour"], low=0.0, strict=True)


#: the ``[fleet]`` keys of the spare pool (they need ``[repair]``); the others describe the nodes
_POOL_FLEET_KEYS = ("standbys", "standby_swap", "host_select", "restart_when", "retire_after")


#: ``fleet.lemons``: where the lemons come from, the ``lemon_share`` / ``lemon_rate`` keys or a fitted frailty
LEMON_SOURCES = ("declared", "frailty")


def _lemons(rd: Reader, fl: dict[str, Any] | None, fails: FileFailures) -> FileFailures:
    """``[fleet]`` ``lemon_share`` / ``lemon_rate``: lemon slots in the node renewals (the file's
    rate stays the fleet's average, :class:`~spare_core.events.nodes.NodeRenewals`); or
    ``lemons = "frailty"``: the fitted frailty's multipliers are the lemons, which ``lemon_fix``
    and ``retire_after`` redraw."""
    if fl is None or not any(k in fl for k in ("lemon_share", "lemon_rate", "lemon_fix", "retire_after", "lemons")):
        return fails
    source = rd.choice("fleet.lemons", fl["lemons"], LEMON_SOURCES) if "lemons" in fl else "declared"
    model = fails.model
    # 0: no node retires, the key's default (what ``spare advise --retire-after 0`` and a map's
    # axis through 0 stand for): the file reads as if it were absent
    if "retire_after" in fl and rd.integer("fleet.retire_after", fl["retire_after"], low=0, high=10**6) > 0:
        k = rd.integer("fleet.retire_after", fl["retire_after"], low=1, high=10**6)
        if type(model) is not NodeRenewals:
            kind = model if isinstance(model, str) else getattr(model, "kind", type(model).__name__)
            raise rd.fail("fleet.retire_after", f"needs failures.model = 'node' without [[failures.domains]] (the "
                          f"node log counts each node's failures), not {kind!r}", fl["retire_after"])
        model = model.replace(retire_after=k)
        fails = dataclasses.replace(fails, model=model, note=fails.note + f"; a node retires after {k} failures")
    if source == "frailty":
        return _frailty_lemons(rd, fl, fails, model)
    if not any(k in fl for k in ("lemon_share", "lemon_rate", "lemon_fix")):
        return fails
    if "lemon_share" not in fl:
        key = "lemon_rate" if "lemon_rate" in fl else "lemon_fix"
        raise rd.fail(f"fleet.{key}", "needs fleet.lemon_share (the share of nodes that are lemons)", fl[key])
    share = rd.number("fleet.lemon_share", fl["lemon_share"], low=0.0, strict=False, high=1.0, high_strict=True)
    rate = rd.number("fleet.lemon_rate", fl.get("lemon_rate", 1.0), low=1.0, strict=False)
    fix = rd.number("fleet.lemon_fix", fl.get("lemon_fix", 0.0), low=0.0, strict=False, high=1.0)
    if type(model) is not NodeRenewals:
        kind = model if isinstance(model, str) else getattr(model, "kind", type(model).__name__)
        raise rd.fail("fleet.lemon_share", f"needs failures.model = 'node' without [[failures.domains]] (lemons are "
                      f"node slots with their own clocks), not {kind!r}", fl["lemon_share"])
    if model.frailty > 0:
        raise rd.fail("fleet.lemon_share", "and a fitted frailty (fit_law = 'frailty') are two laws of the nodes' "
                      "rate multipliers: give one (fleet.lemons = 'frailty' takes the lemons from the fit)",
                      fl["lemon_share"])
    return dataclasses.replace(fails, model=model.replace(lemon_share=share, lemon_rate=rate, lemon_fix=fix),
                               note=fails.note + (f"; lemons: {share:g} of the nodes x{rate:g} as often (the rate is "
                                                  "the fleet's average" + (f" at the start; a repair fixes one with "
                                                                           f"probability {fix:g})" if fix else ")")
                                                  if share else ""))


def _frailty_lemons(rd: Reader, fl: dict[str, Any], fails: FileFailures, model) -> FileFailures:
    """``fleet.lemons = "frailty"``: the lemons are the fitted gamma frailty's per-slot
    multipliers; ``lemon_fix`` is then the probability that a failure's repair fixes its node (a
    fresh multiplier from the same gamma), and a retired node's replacement draws its own."""
    for key in ("lemon_share", "lemon_rate"):
        if key in fl:
            raise rd.fail(f"fleet.{key}", "declares the lemons, and fleet.lemons = 'frailty' takes them from the "
                          "fitted frailty: give one", fl[key])
    if type(model) is not NodeRenewals:
        kind = model if isinstance(model, str) else getattr(model, "kind", type(model).__name__)
        raise rd.fail("fleet.lemons", f"'frailty' needs failures.model = 'node' with law = 'fit' and "
                      f"fit_law = 'frailty' (the fitted per-node multipliers), not {kind!r}", fl["lemons"])
    if not model.frailty > 0:
        fit = getattr(fails, "fit", None)
        why = ("no law was fitted" if fit is None else f"the fitted law is {fit.law!r}" if fit.law != "frailty"
               else "the fitted frailty is 0 (identical nodes fit the log best)")
        raise rd.fail("fleet.lemons", f"'frailty' needs a fitted gamma frailty (failures.law = 'fit' with "
                      f"fit_law = 'frailty', or 'best' choosing it), but {why}", fl["lemons"])
    fix = rd.number("fleet.lemon_fix", fl.get("lemon_fix", 0.0), low=0.0, strict=False, high=1.0)
    words = "; lemons: the fitted frailty's multipliers"
    if fix:
        words += f", a repair fixing a node (a new multiplier) with probability {fix:g}"
    if model.retire_after:
        words += ", a retired node's replacement drawing its own"
    return dataclasses.replace(fails, model=model.replace(frailty_lemons=True, lemon_fix=fix), note=fails.note + words)


def _place(rd: Reader, fl: dict[str, Any] | None, rp: dict[str, Any] | None, fails: FileFailures) -> FileFailures:
    """``fleet.place``: which idle node a failed node's slot takes (``"slot"``: none, the
    multipliers stay with the slots; ``"any"``, ``"fewest_failures"``: they follow the nodes of a
    fleet of the job's nodes plus ``repair.spares`` and ``fleet.standbys`` idle ones)."""
    if fl is None or "place" not in fl:
        return fails
    from .events.nodes import PLACE_RULES

    rule = rd.choice("fleet.place", fl["place"], PLACE_RULES)
    if rule == "slot":
        return fails
    model = fails.model
    if type(model) is not NodeRenewals:
        kind = model if isinstance(model, str) else getattr(model, "kind", type(model).__name__)
        raise rd.fail("fleet.place", f"needs failures.model = 'node' without [[failures.domains]] (nodes with their "
                      f"own clocks, moved between slots), not {kind!r}", fl["place"])
    if rp is None or rp.get("spares") is None:
        raise rd.fail("fleet.place", "needs [repair] with a finite repair.spares (the idle nodes a failed node's "
                      "slot chooses from)", fl["place"])
    idle = rd.integer("repair.spares", rp["spares"], low=0, high=10**7)
    idle += rd.integer("fleet.standbys", fl.get("standbys", 0), low=0, high=10**6)
    if idle < 1:
        raise rd.fail("fleet.place", "needs at least one idle node (repair.spares plus fleet.standbys >= 1)",
                      fl["place"])
    words = "the idle node waiting longest" if rule == "any" else "the idle node with the fewest failures so far"
    return dataclasses.replace(fails, model=model.replace(place=rule, place_pool=idle),
                               note=fails.note + f"; placement: {idle} idle nodes, a failed node's slot taking {words}")


def _repair(rd: Reader, rp: dict[str, Any] | None, cluster: FileCluster,
            fl: dict[str, Any] | None = None) -> Repairs | None:
    """``[repair]``: hot spares, repair and rejoin times (omitted: none of it, the paper's model);
    ``[fleet]``: warm standbys in front of its pool."""
    pool_keys = [k for k in _POOL_FLEET_KEYS if fl is not None and k in fl
                 and not (k == "retire_after" and fl[k] == 0)]  # 0: none retires, as absent (``_lemons``)
    if rp is None:
        if pool_keys:
            raise rd.error(f"fleet.{pool_keys[0]} needs [repair] (the standbys refill from the spare pool); "
                           "[fleet] needs [repair] for its standbys")
        return None
    fleet = {}
    if pool_keys:
        fleet = {"standbys": rd.integer("fleet.standbys", fl.get("standbys", 0), low=0, high=10**6),
                 "standby_swap": rd.duration("fleet.standby_swap", fl.get("standby_swap", 0.0), strict=False),
                 "host_select": rd.duration("fleet.host_select", fl.get("host_select", 0.0), strict=False)}
        if fleet["standbys"] == 0 and "standby_swap" in fl:
            raise rd.error("fleet.standby_swap needs fleet.standbys >= 1 (the warm standbys it swaps in)")
        if "retire_after" in fl and fl["retire_after"] != 0:  # the pool's side; the node log marks the failures
            fleet["retire_after"] = rd.integer("fleet.retire_after", fl["retire_after"], low=1, high=10**6)
        if "restart_when" in fl:
            fleet["restart_when"] = rd.choice("fleet.restart_when", fl["restart_when"], RESTART_RULES)
            if fleet["restart_when"] == "job+standbys" and fleet["standbys"] == 0:
                raise rd.fail("fleet.restart_when", "'job+standbys' needs fleet.standbys >= 1 (the warm standbys a "
                              "restart waits for)", fl["restart_when"])
    spares = rp.get("spares")
    if ("manual_time" in rp) != ("escalate" in rp):
        given, other = ("manual_time", "escalate") if "manual_time" in rp else ("escalate", "manual_time")
        raise rd.error(f"repair.{given} needs repair.{other} (a manual repair after the automatic one "
                       "happens with probability escalate and takes manual_time)")
    probs = {k: rd.number(f"repair.{k}", rp[k], strict=False, high=1.0, high_strict=k != "escalate")
             for k in ("escalate", "fail_fix", "misdiagnose") if k in rp}
    try:
        return Repairs(swap=law_from_file(rd, "repair.swap", rp.get("swap", 0.0)),
                       spares=None if spares is None else rd.integer("repair.spares", spares, low=0, high=10**7),
                       time=law_from_file(rd, "repair.time", rp.get("time", 0.0)),
                       rejoin=rd.duration("repair.rejoin", rp.get("rejoin", 0.0), strict=False),
                       gpus_per_node=cluster.gpus_per_node,
                       manual_time=law_from_file(rd, "repair.manual_time", rp.get("manual_time", 0.0)), **probs,
                       **fleet)
    except ScenarioFileError:
        raise
    except ValueError as err:  # the rules between the keys (escalate needs a manual_time > 0)
        raise rd.error(str(err)) from None


@dataclass(frozen=True)
class CheckpointIO:
    """A persistent checkpoint priced by its size and the storage's bandwidths.

    A save writes ``size`` at ``write_bandwidth * efficiency``; a restart from it reads it back
    at ``read_bandwidth * efficiency`` on top of ``costs.restart``. ``mode = "async"``: a save
    blocks only for ``host_copy`` seconds (the copy to host memory), then drains in the
    background for the write time (``Scenario.checkpoint_drain``). Bandwidths are the
    aggregate the job reaches; ``efficiency`` is the measured fraction of it (a 504-GPU report
    saw 16 % of 250 GB/s on save, 21.5 % of 700 GB/s on load).
    """

    size: float
    write_bandwidth: float
    read_bandwidth: float
    efficiency: float = 1.0
    mode: str = "blocking"
    host_copy: float | None = None
    #: the fraction of the read bandwidth reached, when it differs from the write's (None: ``efficiency``)
    read_efficiency: float | None = None

    @property
    def read_fraction(self) -> float:
        """The fraction of the read bandwidth reached (``read_efficiency``, else ``efficiency``)."""
        return self.efficiency if self.read_efficiency is None else self.read_efficiency

    @property
    def write_seconds(self) -> float:
        """Seconds to write the checkpoint to storage (inf when bandwidth x efficiency underflows)."""
        return _transfer_seconds(self.size, self.write_bandwidth * self.efficiency)

    @property
    def load_seconds(self) -> float:
        """Seconds to read it back at a restart (inf when bandwidth x efficiency underflows)."""
        return _transfer_seconds(self.size, self.read_bandwidth * self.read_fraction)

    @property
    def blocking_seconds(self) -> float:
        """Seconds a save blocks training (``Scenario.checkpoint_time``)."""
        return self.write_seconds if self.mode == "blocking" else float(self.host_copy)

    @property
    def drain_seconds(self) -> float:
        """Seconds an asynchronous save drains after it (``Scenario.checkpoint_drain``); 0 blocking."""
        return 0.0 if self.mode == "blocking" else self.write_seconds

    def words(self) -> str:
        """The derived times, for the job's description."""
        gb = self.size / 1e9
        out = (f"checkpoint {gb:.4g} GB: write {self.write_seconds:.3g} s at {self.write_bandwidth / 1e9:.4g} GB/s x "
               f"{self.efficiency:g}, load {self.load_seconds:.3g} s at {self.read_bandwidth / 1e9:.4g} GB/s x "
               f"{self.read_fraction:g} (the efficiency reached)")
        if self.mode == "async":
            out += f"; async: blocks {self.host_copy:g} s, drains {self.write_seconds:.3g} s"
        elif self.host_copy is not None:
            out += "; blocking (checkpoint.host_copy unused)"
        return out


def _transfer_seconds(size: float, rate: float) -> float:
    """Seconds to move ``size`` bytes at ``rate`` bytes per second (inf at a rate of 0)."""
    return size / rate if rate > 0.0 else math.inf


def _checkpoint_io(rd: Reader, ck: dict[str, Any], co: dict[str, Any]) -> CheckpointIO | None:
    """``[checkpoint]``'s size and bandwidths, or None when the table gives no size."""
    given = [k for k in IO_KEYS if k in ck]
    if not given:
        return None
    if "size" not in ck:
        raise rd.fail(", ".join(f"checkpoint.{k}" for k in given), "price a save by its size: they need "
                      "checkpoint.size (e.g. '2.3 TB') with write_bandwidth and read_bandwidth", {k: ck[k] for k in given})
    for k in ("write_bandwidth", "read_bandwidth"):
        if k not in ck:
            raise rd.error(f"checkpoint.size needs checkpoint.{k} (e.g. '250 GB/s': the aggregate the job reaches)")
    if "checkpoint_save" in co:
        raise rd.fail("costs.checkpoint_save and checkpoint.size", "must not both be given (the size and the write "
                      "bandwidth set the save's time)", (co["checkpoint_save"], ck["size"]))
    mode = rd.choice("checkpoint.mode", ck.get("mode", "blocking"), ("blocking", "async"))
    if mode == "async" and "host_copy" not in ck:
        raise rd.error("checkpoint.mode = 'async' needs checkpoint.host_copy (the seconds a save blocks for its "
                       "copy to host memory)")
    # read with a blocking save too (and unused, as printed): a file can then be run both ways
    # with one override of checkpoint.mode, or mapped over it
    host = rd.duration("checkpoint.host_copy", ck["host_copy"]) if "host_copy" in ck else None
    eff, read_eff = _efficiencies(rd, ck.get("efficiency", 1.0))
    io = CheckpointIO(size=rd.amount("checkpoint.size", ck["size"]),
                      write_bandwidth=rd.amount("checkpoint.write_bandwidth", ck["write_bandwidth"], per_second=True),
                      read_bandwidth=rd.amount("checkpoint.read_bandwidth", ck["read_bandwidth"], per_second=True),
                      efficiency=eff, mode=mode, host_copy=host, read_efficiency=read_eff)
    for verb, bw, seconds in (("write", "write_bandwidth", io.write_seconds),
                              ("load", "read_bandwidth", io.load_seconds)):
        # bandwidth x efficiency of two tiny numbers can underflow to 0 or leave a time beyond
        # any run: both are the file's numbers, refused naming them
        if not seconds <= _limits.MAX_SECONDS:
            keys = ["checkpoint.size", f"checkpoint.{bw}"] + (["checkpoint.efficiency"] if "efficiency" in ck else [])
            keys = " and ".join(", ".join(keys).rsplit(", ", 1))
            raise rd.fail(keys, f"take {seconds:.3g} s to {verb} the checkpoint (size / ({bw} x efficiency)), more "
                          f"than {_limits.MAX_SECONDS:.0e} s", (ck["size"], ck[bw], ck.get("efficiency", 1.0)))
    return io


def _efficiencies(rd: Reader, value: Any) -> tuple[float, float | None]:
    """``checkpoint.efficiency``: one fraction of both bandwidths, or ``{write = .., read = ..}``
    (measured saves and loads often reach different fractions)."""
    if not isinstance(value, dict):
        return rd.number("checkpoint.efficiency", value, high=1.0), None
    extra = sorted(set(value) - {"write", "read"})
    if extra or set(value) != {"write", "read"}:
        raise rd.fail("checkpoint.efficiency", "must be a fraction in (0, 1], or a table {write = .., read = ..} "
                      "giving both", value)
    return (rd.number("checkpoint.efficiency.write", value["write"], high=1.0),
            rd.number("checkpoint.efficiency.read", value["read"], high=1.0))


def _memory_by_network(rd: Reader, ck: dict[str, Any], io: CheckpointIO | None, restart: float,
                       cluster: FileCluster) -> dict[str, Any]:
    """The in-memory tier's keys of ``[checkpoint]``, with ``memory_save`` and ``memory_restore``
    derived from ``memory_bandwidth`` when it is given.

    A node's state is ``node_state``, or by default its share of one replica's checkpoint:
    ``checkpoint.size * gpus_per_node / gpus_per_group`` (every data-parallel replica holds the
    whole state, spread over its GPUs). A snapshot sends it ``memory_copies`` times over the
    node's link (``memory_save = node_state * copies / memory_bandwidth``); a restore restarts
    every rank (``costs.restart``) and reads the state of a replaced node back from a peer
    (``memory_restore = costs.restart + node_state / memory_bandwidth``; the other nodes read
    their own host memory, taken as free).
    """
    keys = {k: v for k, v in ck.items() if k not in IO_KEYS and k not in MEMORY_IO_KEYS}
    if "memory_bandwidth" not in ck:
        if "node_state" in ck:
            raise rd.fail("checkpoint.node_state", "only goes with checkpoint.memory_bandwidth (the network "
                          "bandwidth of a node's copies)", ck["node_state"])
        return keys
    both = [f"checkpoint.{k}" for k in ("memory_save", "memory_restore") if k in ck]
    if both:
        raise rd.fail(f"{' and '.join(both)} with checkpoint.memory_bandwidth", "must not both be given (the "
                      "node's state and the bandwidth set the snapshot's and the restore's times)",
                      {k: ck[k] for k in ("memory_save", "memory_restore", "memory_bandwidth") if k in ck})
    bw = rd.amount("checkpoint.memory_bandwidth", ck["memory_bandwidth"], per_second=True)
    if "node_state" in ck:
        state = rd.amount("checkpoint.node_state", ck["node_state"])
    elif io is not None:
        state = io.size * cluster.gpus_per_node / cluster.gpus_per_group
    else:
        raise rd.error("checkpoint.memory_bandwidth needs the state a node copies: checkpoint.node_state (bytes "
                       "per node), or checkpoint.size (with its bandwidths) to take a node's share of it")
    copies = ck.get("memory_copies", 1)
    copies = copies if isinstance(copies, int) and not isinstance(copies, bool) and copies >= 1 else 1
    save, load = state * copies / bw, state / bw
    if not max(save, load) <= _limits.MAX_SECONDS:
        raise rd.fail("checkpoint.memory_bandwidth", f"takes {save:.3g} s to copy a node's state at that "
                      f"bandwidth, more than {_limits.MAX_SECONDS:.0e} s", ck["memory_bandwidth"])
    return {**keys, "memory_save": save, "memory_restore": restart + load}


def _memory(rd: Reader, ck: dict[str, Any], scenario: Scenario) -> MemoryTier:
    """``[checkpoint]``: the in-memory tier. ``memory_every = "auto"`` is Young's interval
    sqrt(2 * memory_save * MTBF) with the system MTBF (every failure may restore from memory)."""
    # every value given is checked first (a bad one is named whatever else is missing)
    save = rd.duration("checkpoint.memory_save", ck["memory_save"]) if "memory_save" in ck else None
    restore = rd.duration("checkpoint.memory_restore", ck["memory_restore"], strict=False) \
        if "memory_restore" in ck else None
    every = ck.get("memory_every", "auto")
    if every != "auto":
        every = rd.duration("checkpoint.memory_every", every)
    copies = rd.integer("checkpoint.memory_copies", ck.get("memory_copies", 1), low=1, high=64)
    if save is None or restore is None:
        given = ", ".join(f"checkpoint.{k}" for k in ck)
        raise rd.fail(given, "sets an in-memory tier, which needs checkpoint.memory_save and "
                      "checkpoint.memory_restore as well", {k: ck[k] for k in ck})
    _check_copies(rd, copies, scenario)
    if every == "auto":
        every = math.sqrt(2.0 * save * scenario.system_mtbf)
    return MemoryTier(save=save, every=every, restore=restore, copies=copies)


def _check_copies(rd: Reader, copies: int, scenario: Scenario) -> None:
    """``checkpoint.memory_copies`` that each land on a group of their own: copy i of a group is
    ``i`` failure domains further on (``sim.recovery.copy_holders``), so with no more domains
    than copies the last ones come back to the group's own domain (the group itself with one
    group per domain) and go down with it; without domains, the ring of groups has room for
    N - 1 copies."""
    import numpy as np

    domains = getattr(scenario.failures, "domains", None)
    n_dom = 1
    if callable(domains):
        try:
            n_dom = int(np.unique(domains(scenario.n_groups).labels[0]).shape[0])
        except (TypeError, ValueError, AttributeError):
            n_dom = 1
    if n_dom > 1 and copies >= n_dom:
        raise rd.fail("checkpoint.memory_copies", f"must be at most {n_dom - 1}: the copies go to groups in other "
                      f"failure domains, and the coarsest level of [[failures.domains]] has {n_dom} domains (a "
                      "copy in a group's own domain goes down with it)", copies)
    if n_dom <= 1 and copies >= scenario.n_groups:
        raise rd.fail("checkpoint.memory_copies", f"must be at most {scenario.n_groups - 1}: each copy goes to "
                      f"another of the job's {scenario.n_groups} data-parallel groups", copies)


def _with_shorthand_tables(rd: Reader, tables: dict[str, dict[str, Any]], policy: Any) -> Any:
    """The ``[policy.NAME]`` tables with the shorthand tables policies declare merged in
    (elastic's ``[elastic]``): one or the other for each option."""
    if not isinstance(policy, dict):
        return policy  # _policy_options says what is wrong with it
    out = dict(policy)
    for table, name in _shorthand_tables().items():
        if table not in tables:
            continue
        try:  # read here, so that a bad value is named where it was written
            opts = registered_policy(name).check_options(tables[table], prefix=table)
        except (TypeError, ValueError) as exc:
            raise rd.error(str(exc)) from None
        own = out.get(name, {})
        both = sorted(set(opts) & set(own)) if isinstance(own, dict) else []
        if both:
            raise rd.fail(f"{table}.{both[0]}", f"is given in [{table}] and in [policy.{name}]", opts[both[0]])
        out[name] = {**own, **opts} if isinstance(own, dict) else own
    return out


@dataclass(frozen=True)
class _Compare:
    policies: tuple[str, ...]
    redundancies: tuple[int, ...]
    seeds: tuple[int, ...]
    interval: str | float
    horizon: float
    processes: int
    charge_patch: bool
    options: dict[str, tuple[dict[str, Any], list[str]]]


def _compare(rd: Reader, cp: dict[str, Any], tables: Any, *, n_groups: int) -> _Compare:
    """``[compare]`` and the ``[policy.NAME]`` tables: the policies (names of the live registry)
    with their options, the values of r (those <= ``n_groups``), the seeds, the interval rule, the
    horizon and the workers."""
    names = policy_names()
    pol = cp.get("policies", list(DEFAULT_POLICIES))
    if not isinstance(pol, list) or not pol:
        raise rd.fail("compare.policies", f"must be a non-empty list of {list(names)}", pol)
    policies = tuple(rd.choice("compare.policies", p, names) for p in pol)
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
    charge_patch = cp.get("charge_patch", True)
    if not isinstance(charge_patch, bool):
        raise rd.fail("compare.charge_patch", "must be true or false", charge_patch)
    return _Compare(policies=policies, redundancies=usable, seeds=seeds, interval=interval, horizon=horizon,
                    processes=processes, charge_patch=charge_patch,
                    options=_policy_options(rd, cp, tables, policies))


def _policy_options(rd: Reader, cp: dict[str, Any], tables: Any, policies: tuple[str, ...]
                    ) -> dict[str, tuple[dict[str, Any], list[str]]]:
    """Each compared policy's options and the keys they came from: the ``[compare]`` shorthands
    the policy declares (``RegisteredPolicy.compare_keys``), then its ``[policy.NAME]`` table.

    A table may name any registered policy (``--policies`` may pick it later); its options are
    read by what the policy declares (names, kinds, units and ranges: ``"2 min"`` is 120 s),
    then checked by the policy itself when it is built.
    """
    if not isinstance(tables, dict) or not all(isinstance(v, dict) for v in tables.values()):
        raise rd.fail("[policy]", "must hold one table per policy ([policy.NAME] with its options)", tables)
    known = policy_names()
    read = {}
    for name, opts in tables.items():
        if name not in known:
            raise rd.fail(f"[policy.{name}]", f"names no registered policy (registered: {list(known)})", opts)
        try:
            read[name] = registered_policy(name).check_options(opts)
        except (TypeError, ValueError) as exc:
            raise rd.fail(f"[policy.{name}]", f"is refused ({exc})", opts) from None
    out = {}
    for name in policies:
        entry = registered_policy(name)
        opts: dict[str, Any] = {}
        where = []
        for key, translate in entry.compare_keys.items():
            if key in cp:
                try:
                    opts.update(translate(cp[key]))
                except (TypeError, ValueError) as exc:
                    raise rd.fail(f"compare.{key}", f"is refused by policy {name!r} ({exc})", cp[key]) from None
                where.append(f"compare.{key}")
        if name in read:
            opts.update(read[name])
            where.append(f"[policy.{name}]")
        out[name] = (opts, where)
    return out
