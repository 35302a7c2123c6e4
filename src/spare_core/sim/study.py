"""A study: scenarios x policies x redundancies x intervals x seeds, the one description of
work that every command and entry point hands to the executor (:mod:`spare_core.sim.executor`).

``spare run`` and ``spare advise`` build one from a scenario file, ``spare compare`` from the
paper's preset, ``spare sweep`` from a sweep spec (:class:`spare_core.sweeps.SweepSpec` is a
study read from TOML), :func:`spare_core.sim.sweep` from its arguments. A study is checked
whole when it is built (every policy against every scenario, before any simulation) and is
split into *groups*: all runs of one scenario on one seed, which share that seed's failures
(common random numbers) and are the executor's unit of work.

Every run has a content key: the SHA-256 of the canonical JSON (sorted keys, no spaces,
floats written exactly) of its resolved scenario (:meth:`spare_core.sim.Scenario.to_dict` without the display name,
:func:`scenario_identity`), its policy (:meth:`spare_core.sim.Policy.to_dict`: class, label and parameters, the interval
setting and r included) and its seed. Where a group's random streams come from is the
study's ``streams``:

* ``"seed"``: the seed itself, as :func:`spare_core.sim.simulate` ``(seed=s)`` takes it, so
  a study's run equals that one call bit for bit (the commands and :func:`sweep`);
* ``"key"``: 128 bits of the group key (scenario and seed), so that a stored run's numbers
  depend on what it simulates and on nothing else (the result store,
  :mod:`spare_core.sweeps`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .. import _limits
from .._validate import as_float, as_int, check_choice
from ..strategies import DEFAULT_POLICIES, INTERVAL_RULES, policy_at, uses_redundancy
from .scenario import Scenario

__all__ = ["Study", "Run", "Group", "STREAMS", "MAX_SEEDS", "KEY_VERSION", "scenario_identity", "canonical_json", "content_key", "expand_policies", "check_repairs"]

#: bumped when what a key covers changes (old stores then simply hold other keys).
#: 2: a scenario is keyed without its display name (``name``), so a run's key depends on
#: what it simulates alone, not on how a spec's grid happened to name it
KEY_VERSION = 2

#: where a group's random streams come from (module docstring)
STREAMS = ("seed", "key")

#: the most seeds per cell a study may ask for: the executor keeps one group per (scenario,
#: seed) in memory, and 2**24 of them are already months of CPU at the smallest runs
MAX_SEEDS = _limits.MAX_SEEDS


def check_repairs(policy: Any, scenario: Scenario) -> None:
    """Raise ValueError if ``policy`` cannot run on ``scenario`` because of its ``[repair]``:
    the check every study, the scenario-file reader and so every command make before any
    simulation (the run itself would stop at its first step with the same fault).

    A policy that keeps groups out of the job (SPARe, Rep, elastic: a handler without
    ``every_failure_restarts``) with repairs needs a failure source in which a repaired group
    fails again on its own clock, and which hands out the failures of groups out of the job
    (``hands_out_every_failure``: node renewals, a replayed log). A model that renews every
    group only at a global restart (``system``, ``per-unit``) cannot, nor can correlated
    failure domains on top of any model (their source keeps only failures of groups in).
    """
    if scenario.repair is None:
        return
    model = scenario.failures
    if getattr(model, "hands_out_every_failure", False) and not model.renews_all_at_restart:
        return  # the common case decided without building a handler
    if getattr(policy.handler(scenario), "every_failure_restarts", False):
        return  # CKPT-only: no group is ever out, repairs need nothing of the source
    name = getattr(policy, "name", type(policy).__name__)
    if model.kind == "domains":
        raise ValueError(
            f"[repair] with [[failures.domains]] cannot run {name}: the correlated failure domains cannot hand out "
            "the failures of groups out of the job, which a repaired group needs to fail again on its own clock; "
            "drop [repair] or [[failures.domains]] for this policy (CKPT-only runs with both)")
    raise ValueError(
        f"[repair] with failures.model = {scenario.failure_model!r} cannot run {name}: a repaired group must fail "
        "again on its own clock, and this model renews every group only at a global restart; use failures.model = "
        "\"node\" (node renewals) or \"trace\", or drop [repair] for this policy (CKPT-only runs with it)")


def canonical_json(obj) -> str:
    """JSON with sorted keys and no spaces; floats exact (``repr``), inf/nan as JSON extensions."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def content_key(obj) -> str:
    """SHA-256 (hex) of :func:`canonical_json` ``(obj)``."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def scenario_identity(scenario) -> dict:
    """What a scenario simulates: :meth:`Scenario.to_dict` without its display ``name``, the
    scenario part of every key (two scenarios that differ by their names alone are one)."""
    d = scenario.to_dict()
    d.pop("name", None)
    return d


def _key_of(**parts) -> str:
    """:func:`content_key` of ``{name: value, ..., "v": KEY_VERSION}`` from values already in
    canonical JSON: the same bytes (keys sorted, no spaces) without re-encoding the scenario
    for each of a study's runs."""
    parts["v"] = str(KEY_VERSION)
    text = "{" + ",".join(f"{json.dumps(k)}:{parts[k]}" for k in sorted(parts)) + "}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Run:
    """One run of a study: what to simulate and the labels it is stored under.

    The keys and ``policy_json`` are None in a study with ``streams="seed"`` (nothing of
    it is stored, so nothing is encoded), and ``seed`` is -1 there: the runs are shared by
    the scenario's groups, whose ``seed`` is the run's.
    """

    key: str | None
    group_key: str | None
    scenario_key: str | None
    policy: object
    policy_source: str
    policy_json: str | None
    interval_setting: str
    seed: int


@dataclass(frozen=True)
class Group:
    """All runs of one scenario on one seed: the unit of work (they share the failures).

    ``stream_seed`` is the root of the group's random streams (the study's ``streams``);
    ``scenario_index`` the scenario's place in the study.
    """

    key: str | None
    scenario: Scenario
    scenario_json: str | None
    seed: int
    runs: tuple
    scenario_index: int = 0
    streams: str = "key"

    @property
    def stream_seed(self):
        if self.streams == "seed":
            return self.seed
        # 128 bits of the group key: the same key gives the same streams everywhere
        return np.random.SeedSequence(int(self.key[:32], 16))


def _source_name(src) -> str:
    if isinstance(src, str):
        return src
    return f"{getattr(src, '__module__', '?')}.{getattr(src, '__qualname__', type(src).__qualname__)}"


def _interval_arg(v):
    if v is None:
        return None
    if isinstance(v, str):
        if v not in INTERVAL_RULES:
            raise ValueError(f"intervals must hold seconds >= 0 or one of {list(INTERVAL_RULES)}, got {v!r}")
        return v
    return as_float(v, "interval", min_value=0.0, allow_inf=True)


def expand_policies(scenario, policies, redundancies, *, policy_kwargs=None, interval=None, where=""):
    """The policies of one scenario: ``[(policy index, Policy)]`` for every source at every r.

    Sources that use a redundancy are built at each r of ``redundancies`` that is <= the
    scenario's N; the others once. ``interval`` (the study's interval axis), when given,
    replaces the interval a policy's options set. Every policy is checked against the
    scenario.

    Raises
    ------
    ValueError
        A source for which no r fits (every r > N), a policy that cannot run on the
        scenario, or two sources with the same label at the same r.
    """
    policy_kwargs = policy_kwargs or {}
    out = []
    seen = {}
    for pi, src in enumerate(policies):
        kw = dict(policy_kwargs.get(src, {})) if isinstance(src, str) else {}
        # the interval is applied once, through policy_at: the axis's, else the policy's option
        own = kw.pop("interval", None)
        iv = interval if interval is not None else own
        if uses_redundancy(src):
            rs = [r for r in redundancies if r <= scenario.n_groups]
            if not rs:
                raise ValueError(
                    f"no redundancy in {list(redundancies)} is <= n_groups = {scenario.n_groups} of scenario "
                    f"{scenario.name!r}{where}, so policy {_show(src)} has no run there"
                )
            built = [policy_at(src, r, interval=iv, **kw) for r in rs]
        else:
            built = [policy_at(src, None, interval=iv, **kw)]
        for p in built:
            p.check(scenario)
            check_repairs(p, scenario)
            cell = (p.name, p.redundancy)
            if cell in seen and seen[cell] != pi:
                raise ValueError(
                    f"policies {_show(policies[seen[cell]])} and {_show(src)} both give label {p.name!r} at r = "
                    f"{p.redundancy}; give one another label (Policy.name) so their cells can be told apart"
                )
            seen[cell] = pi
            out.append((pi, p))
    return out


def _show(src):
    if isinstance(src, str):
        return repr(src)
    return getattr(src, "__qualname__", None) or type(src).__name__


class Study:
    """Scenarios x policies x redundancies x intervals x seeds.

    Parameters
    ----------
    scenarios : Scenario or sequence of Scenario
    policies : sequence, default :data:`~spare_core.strategies.DEFAULT_POLICIES`
        Registered names (the live registry, plugins included), Policy objects (run as they
        are, at their own r) or factories of r.
    redundancies : iterable of int, default 1..20
        r values; those above a scenario's N are skipped there (an error if none is left
        for a policy).
    intervals : sequence, default (None,)
        Checkpoint interval settings: seconds, "auto", "young", "daly", or None (the policy's
        own setting, from its options).
    seeds : int or iterable of int, default 5
        An int n means 0..n-1 (at most :data:`MAX_SEEDS`).
    policy_options : dict, optional
        Per policy name, its options (``{"spare": {"offsets": "sidon"}}``), checked against
        what the policy declares (:attr:`~spare_core.sim.RegisteredPolicy.options`).
    name : str, default "study"
    streams : {"key", "seed"}, default "key"
        Where each group's random streams come from (module docstring).
    scenario_options : sequence of dict, optional
        One per scenario: per policy name, options of that scenario alone (a scenario file's
        ``[policy.NAME]``, ``[elastic]``, ``compare.layout``, ``compare.interval``, which a sweep
        over the file takes as ``spare run`` does), under ``policy_options`` (which win). A
        scenario with options of its own is keyed with them: two scenarios equal but for
        them (a grid over ``elastic.microbatches``) are two cells, not one scenario twice.

    Raises
    ------
    TypeError, ValueError
        Any bad or empty axis, an impossible (scenario, policy) pair, two policies with one
        label, a scenario or policy that cannot be written down with ``streams="key"``; all
        before any simulation.

    Examples
    --------
    >>> study = Study(Scenario.paper_600k(40, n_steps=50), ("ckpt", "spare"), [2, 3], seeds=2)
    >>> len(study.runs()), len(study.groups())
    (6, 2)
    """

    def __init__(self, scenarios: Any, policies: Any = DEFAULT_POLICIES, redundancies: Iterable[int] = range(1, 21),
                 intervals: Iterable[Any] = (None,), seeds: Any = 5, *, policy_options: dict | None = None,
                 name: str = "study", streams: str = "key", scenario_options: Any = None) -> None:
        if isinstance(scenarios, Scenario):
            scenarios = [scenarios]
        self.scenarios = list(scenarios) if isinstance(scenarios, (list, tuple)) else None
        if not self.scenarios or not all(isinstance(s, Scenario) for s in self.scenarios):
            raise TypeError("scenarios must be a Scenario or a non-empty list of Scenario")
        self.policies = [policies] if isinstance(policies, str) or callable(policies) else list(policies)
        for p in self.policies:
            uses_redundancy(p, "policies")
        self.redundancies = sorted({as_int(r, "redundancies", min_value=1) for r in redundancies})
        self.intervals = list(dict.fromkeys(_interval_arg(v) for v in intervals))
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            # a count, not a list: bounded as a scenario file's compare.seeds (10**20 would
            # otherwise be a list of 10**20 seeds built before the first run)
            seeds = range(as_int(seeds, "seeds", min_value=1, max_value=MAX_SEEDS))
        self.seeds = list(dict.fromkeys(as_int(s, "seed", min_value=0, max_value=_limits.MAX_SEED) for s in seeds))
        for what, grid in (("scenarios", self.scenarios), ("policies", self.policies),
                           ("redundancies", self.redundancies), ("intervals", self.intervals), ("seeds", self.seeds)):
            if not grid:
                raise ValueError(f"{what} must not be empty: the sweep would have no run")
        self.streams = check_choice(streams, "streams", STREAMS)
        if not isinstance(policy_options, (dict, type(None))):
            raise TypeError(f"policy_options must be a dict of dicts, got {type(policy_options).__name__}")
        self.policy_options = {k: dict(v) for k, v in (policy_options or {}).items()}
        named = {p for p in self.policies if isinstance(p, str)}
        unknown = set(self.policy_options) - named
        if unknown:
            raise ValueError(f"policy_options names policies not in the sweep: {sorted(unknown)}")
        if scenario_options is None:
            scenario_options = [{}] * len(self.scenarios)
        scenario_options = list(scenario_options)
        if len(scenario_options) != len(self.scenarios) or not all(
                isinstance(o, dict) and all(isinstance(v, dict) for v in o.values()) for o in scenario_options):
            raise TypeError("scenario_options must hold one dict of dicts (policy name -> options) per scenario")
        self.scenario_options = [{k: dict(v) for k, v in o.items() if k in named} for o in scenario_options]
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.name = name
        self._groups = None
        self._labels = {}
        self.groups()  # every check now, before anyone runs anything

    def groups(self) -> list:
        """Every (scenario, seed) group with its runs, in a fixed order (biggest work first)."""
        if self._groups is not None:
            return self._groups
        keyed = self.streams == "key"
        groups = []
        for si, sc in enumerate(self.scenarios):
            # keys only where streams derive from them: a "seed" study (a command's, sweep()'s)
            # also runs what cannot be written down, and skips encoding a scenario it never stores
            # the key's scenario (without its name) and the stored one (with it, to rebuild it)
            own = self.scenario_options[si]
            kwargs = {n: {**own.get(n, {}), **self.policy_options.get(n, {})} for n in {*own, *self.policy_options}}
            sjson = plain = canonical_json(scenario_identity(sc)) if keyed else None
            if sjson is not None and own:
                # the scenario's own policy options are part of what its cell and its runs are (a
                # scenario without them keeps the keys it always had); its failures are the plain
                # scenario's (the group key, the streams: a grid over elastic.* shares them)
                sjson = canonical_json({"scenario": scenario_identity(sc), "policy_options": own})
            stored_json = canonical_json(sc.to_dict()) if keyed else None
            skey = None if sjson is None else _key_of(scenario=sjson)
            where = f" (sweep {self.name!r})"
            built = []
            for iv in self.intervals:
                for pi, p in expand_policies(sc, self.policies, self.redundancies,
                                             policy_kwargs=kwargs, interval=iv, where=where):
                    pjson = canonical_json(p.to_dict()) if keyed else None
                    src = self.policies[pi]
                    built.append((_source_name(src), pjson, "" if iv is None else str(iv), p))
                    self._labels.setdefault(p.name, (src if isinstance(src, str) else None, uses_redundancy(src)))
            seen = {}
            for src, pjson, _, _ in built:
                if pjson is None:
                    continue
                if pjson in seen:
                    raise ValueError(f"policies {seen[pjson]!r} and {src!r} build the same policy {pjson} on scenario "
                                     f"{sc.name!r}: each run would appear twice")
                seen[pjson] = src
            if not keyed:
                # nothing to key: one tuple of runs serves every seed (a command's study of 10^5
                # seeds is 10^5 small groups, not 10^6 runs, before the first simulation)
                shared = tuple(Run(None, None, None, p, src, None, ivs, -1) for src, _, ivs, p in built)
                groups.extend(Group(None, sc, None, seed, shared, si, self.streams) for seed in self.seeds)
                continue
            for seed in self.seeds:
                sjs = str(seed)
                gkey = None if plain is None else _key_of(scenario=plain, seed=sjs)
                runs = tuple(Run(None if gkey is None or pjson is None else _key_of(policy=pjson, scenario=sjson, seed=sjs),
                                 gkey, skey, p, src, pjson, ivs, seed)
                             for src, pjson, ivs, p in built)
                groups.append(Group(gkey, sc, stored_json, seed, runs, si, self.streams))
        first: dict = {}
        for g in groups:
            if g.key is None:
                continue
            # a scenario and its own policy options: the cell (the runs' scenario key)
            other = first.setdefault((g.key, g.runs[0].scenario_key if g.runs else None), g)
            if other is not g:
                raise ValueError(
                    f"scenarios {other.scenario.name!r} and {g.scenario.name!r} of the sweep are the same scenario "
                    "(equal to_dict() but for the name; e.g. one value spelt two ways): runs would repeat")
        # the biggest scenarios first, so a pool's last tasks are short (stable otherwise)
        groups.sort(key=lambda g: -g.scenario.n_groups * max(1, len(g.runs)))
        self._groups = groups
        return groups

    def runs(self) -> list:
        """Every run of the study."""
        return [r for g in self.groups() for r in g.runs]

    def labels(self) -> dict:
        """Label -> ``(registry name or None, uses_redundancy)`` of every policy source: what
        the runs of each label were built from."""
        return dict(self._labels)

    def __len__(self) -> int:
        return sum(len(g.runs) for g in self.groups())

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.name!r}: {len(self.scenarios)} scenarios x {len(self.policies)} policies x "
                f"{len(self.redundancies)} r x {len(self.intervals)} intervals x {len(self.seeds)} seeds = {len(self)} runs)")
