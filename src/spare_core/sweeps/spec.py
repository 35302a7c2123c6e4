"""A sweep specification: a :class:`~spare_core.sim.Study` (scenarios x policies x
redundancies x intervals x seeds, every run with a stable key) read from a TOML file.

The key of a run is the SHA-256 of the canonical JSON (sorted keys, no spaces, floats written
exactly) of its resolved scenario (:meth:`spare_core.sim.Scenario.to_dict` without the
display name: renaming a scenario, or a grid that grows and so names it otherwise, keeps its
keys), its policy
(:meth:`spare_core.sim.Policy.to_dict`: class, label and parameters, the interval setting
and r included) and its seed. The random streams of a run derive from the key's scenario
and seed alone (the *group key*; the study's ``streams="key"``): every policy, redundancy and
interval on one scenario and seed sees the same failures (common random numbers), and
nothing about where, when or with which other runs it is computed enters its numbers.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

from .. import _limits
from .._validate import as_int
from ..sim import Scenario
from ..strategies import DEFAULT_POLICIES, policy_names
from ..sim.study import Group, Run, Study, canonical_json, content_key

__all__ = ["SweepSpec", "SpecSize", "spec_counts", "Run", "Group", "canonical_json", "content_key", "load_spec"]

_PRESETS = {"paper_600k": Scenario.paper_600k, "llama3_16k": Scenario.llama3_16k}
_TOP_KEYS = {"name", "seeds", "policies", "redundancies", "intervals", "policy_options", "scenario", "scenarios"}


class SweepSpec(Study):
    """A study whose runs go to a result store: random streams from the run keys.

    Parameters
    ----------
    scenarios, policies, redundancies, intervals, seeds, policy_options
        As :class:`~spare_core.sim.Study`.
    name : str, default "sweep"

    Examples
    --------
    >>> spec = SweepSpec(Scenario.paper_600k(40, n_steps=50), ("ckpt", "spare"), [2, 3], seeds=2)
    >>> len(spec.runs()), len(spec.groups())
    (6, 2)
    """

    def __init__(self, scenarios, policies=DEFAULT_POLICIES, redundancies=range(1, 21), intervals=(None,),
                 seeds=5, *, policy_options=None, name="sweep", scenario_options=None):
        super().__init__(scenarios, policies, redundancies, intervals, seeds, policy_options=policy_options,
                         name=name, streams="key", scenario_options=scenario_options)

    # -- files ------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data, *, source="spec", base_dir=".", precheck=None) -> "SweepSpec":
        """The spec of a TOML file's table (see :func:`load_spec` for the format); scenario
        files it names are read relative to ``base_dir``.

        ``precheck``, if given, is called with the spec's :class:`SpecSize` (read from the
        table's counts alone) before any scenario is built, and may raise to refuse it: a grid
        of 10**6 combinations or 2**24 seeds would otherwise take minutes and gigabytes before
        a budget could look at the built study.
        """
        if not isinstance(data, dict):
            raise TypeError(f"{source}: must be a table, got {type(data).__name__}")
        unknown = set(data) - _TOP_KEYS
        if unknown:
            raise ValueError(f"{source}: unknown key {sorted(unknown)[0]!r} (allowed: {sorted(_TOP_KEYS)})")
        if ("scenario" in data) == ("scenarios" in data):
            raise ValueError(f"{source}: give exactly one of [scenario] or [[scenarios]]")
        tables = [data["scenario"]] if "scenario" in data else data["scenarios"]
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            raise TypeError(f"{source}: scenarios must be tables")
        pol = data.get("policies", list(DEFAULT_POLICIES))
        if not isinstance(pol, list) or not all(isinstance(p, str) for p in pol):
            raise TypeError(f"{source}: policies must be a list of names from {sorted(policy_names())}, got {pol!r}")
        if precheck is not None:
            precheck(spec_counts(data, tables, pol))
        scenarios, own = [], []
        for i, t in enumerate(tables):
            for sc, opts in _scenarios_of(t, f"{source}: scenario {i + 1}", Path(base_dir), pol):
                scenarios.append(sc)
                own.append(opts)
        red = data.get("redundancies", list(range(1, 21)))
        if isinstance(red, dict):
            extra = set(red) - {"from", "to"}
            if extra or not {"from", "to"} <= set(red):
                raise ValueError(f"{source}: redundancies must be a list of ints or {{from = A, to = B}}, got {red!r}")
            lo = as_int(red["from"], "redundancies.from", min_value=1)
            hi = as_int(red["to"], "redundancies.to", min_value=1)
            # an r above every scenario's group count is never run: the range stops there
            # (but keeps ``from``, so that a range wholly above says so by name)
            red = range(lo, min(hi, max(lo, max(sc.n_groups for sc in scenarios))) + 1)
        elif not isinstance(red, list):
            raise TypeError(f"{source}: redundancies must be a list of ints or {{from = A, to = B}}, got {red!r}")
        opts = data.get("policy_options", {})
        if not isinstance(opts, dict) or not all(isinstance(v, dict) for v in opts.values()):
            raise TypeError(f"{source}: policy_options must be a table of tables, got {opts!r}")
        iv = data.get("intervals", [None])
        if not isinstance(iv, list):
            raise TypeError(f"{source}: intervals must be a list, got {iv!r}")
        seeds = data.get("seeds", 5)
        if not isinstance(seeds, (int, list)) or isinstance(seeds, bool):
            raise TypeError(f"{source}: seeds must be an int (0..n-1) or a list of ints, got {seeds!r}")
        # refused here, before any run: a seed beyond int64 would simulate, then fail to be stored
        for s in seeds if isinstance(seeds, list) else (seeds,):
            key, r = ("seed", _limits.RANGES["seed"]) if isinstance(seeds, list) else ("seeds", _limits.RANGES["seeds"])
            if isinstance(s, int) and not isinstance(s, bool) and not r.contains(s):
                raise ValueError(f"{source}: {key} {r.rule()}, got {s!r}")
        if isinstance(red, (list, range)):
            for r_ in red:
                if isinstance(r_, int) and not isinstance(r_, bool) and not _limits.RANGES["count"].contains(r_):
                    raise ValueError(f"{source}: redundancies {_limits.RANGES['count'].rule()}, got {r_!r}")
        try:
            return cls(scenarios, pol, red, iv, seeds, policy_options=opts, name=data.get("name", "sweep"),
                       scenario_options=own)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{source}: {e}") from None


@dataclass(frozen=True)
class SpecSize:
    """What a spec asks for, counted from its table before anything is built.

    Attributes
    ----------
    scenarios : int
        Scenarios: every table's grid combinations (the product of its lists' lengths).
    seeds : int
        Seeds per cell.
    pairs : int
        Scenario-seed pairs, ``scenarios x seeds``: the executor keeps one group per pair.
    runs : int
        The fewest runs those ask for: every policy once per pair and interval (a policy with
        redundancy runs at each r up to the scenario's group count, not known before the
        scenarios are built).
    """

    scenarios: int
    seeds: int
    pairs: int
    runs: int


def spec_counts(data, tables, policies) -> SpecSize:
    """:class:`SpecSize` of a spec's table, in exact integers (a product of list lengths
    never overflows); entries of the wrong type count as one and are named later."""
    n_sc = 0
    for t in tables:
        grid = t.get("grid", {}) if isinstance(t, dict) else {}
        n = 1
        if isinstance(grid, dict):
            for v in grid.values():
                n *= max(1, len(v)) if isinstance(v, list) else 1
        n_sc += n
    seeds = data.get("seeds", 5)
    if isinstance(seeds, bool) or not isinstance(seeds, (int, list)):
        n_seeds = 1
    else:
        n_seeds = len(seeds) if isinstance(seeds, list) else max(1, seeds)
    iv = data.get("intervals", [None])
    n_iv = max(1, len(iv)) if isinstance(iv, list) else 1
    n_pol = max(1, len(set(policies)))
    return SpecSize(scenarios=n_sc, seeds=n_seeds, pairs=n_sc * n_seeds, runs=n_sc * n_seeds * n_iv * n_pol)


def _scenarios_of(table, where, base_dir, policies):
    """Scenarios of one [[scenarios]] table (a scenario file, a preset and/or keys, and a grid
    of lists), each with its own policy options (a file's; ``{}`` otherwise)."""
    t = dict(table)
    grid = t.pop("grid", {})
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise ValueError(f"{where}: grid must map keys to non-empty lists, got {grid!r}")
    if "file" in t:
        return _file_scenarios(t, grid, where, base_dir, policies)
    preset = t.pop("preset", None)
    if preset is not None and preset not in _PRESETS:
        raise ValueError(f"{where}: preset must be one of {sorted(_PRESETS)}, got {preset!r}")
    both = set(grid) & set(t)
    if both:
        raise ValueError(f"{where}: key {sorted(both)[0]!r} is both fixed and in the grid")
    out = []
    combos = list(itertools.product(*grid.values()))
    for values in combos:
        kw = dict(t, **dict(zip(grid, values)))
        try:
            _check_ranges(kw)
            if preset is None:
                sc = _plain_scenario(kw)
            elif preset == "paper_600k":
                sc = Scenario.paper_600k(kw.pop("n_groups", 600), **kw)
            else:
                sc = _PRESETS[preset](**kw)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{where}: {e}") from None
        out.append((sc, values))
    return [(sc, {}) for sc in _named(out, grid)]


def _check_ranges(kw):
    """A spec's scenario keywords in the one table of ranges (``scenario.<keyword>``), as a
    scenario file's keys: a number outside its key's range is refused before anything runs."""
    for k, v in kw.items():
        r = _limits.range_of(f"scenario.{k}")
        if r is None or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue  # not a number: the scenario's own check names the type
        if r.kind == "int" and isinstance(v, float) and not v.is_integer():
            continue
        if not r.contains(v):
            raise ValueError(f"{k} {r.rule()}, got {v!r}")


def _plain_scenario(kw):
    """A scenario from keys: :meth:`Scenario.from_dict`'s exact form (a failure model table)
    or the constructor's keywords (``system_mtbf``, ``weibull_shape``, a model's name)."""
    if isinstance(kw.get("failure_model"), dict):
        return Scenario.from_dict(kw)
    kw = dict(kw)
    if "n_groups" not in kw:
        raise ValueError("scenario lacks the key 'n_groups'")
    return Scenario(kw.pop("n_groups"), **kw)


def _file_scenarios(t, grid, where, base_dir, policies):
    """A scenario file (the ``spare run`` format, in the user's units) and a grid over its
    dotted keys (``"failures.per_1000_node_days" = [3.0, 6.5]``, ``"elastic.microbatches" =
    [4, 16]``); ``set`` fixes keys. Each scenario comes with the options the file gives the
    sweep's ``policies`` (``[policy.NAME]``, ``[elastic]``, ``compare.layout``,
    ``compare.interval``): what ``spare run`` on the same file and overrides would use."""
    from ..events.files import pinned_inputs
    from ..scenario_file import ScenarioFileError, apply_overrides, parse_scenario, read_toml

    extra = set(t) - {"file", "set"}
    if extra:
        raise ValueError(f"{where}: a table with 'file' takes only 'file', 'set' and 'grid', got {sorted(extra)[0]!r}")
    fixed = t.get("set", {})
    if not isinstance(fixed, dict):
        raise ValueError(f"{where}: set must be a table of KEY = value, got {fixed!r}")
    path = Path(t["file"]) if Path(t["file"]).is_absolute() else base_dir / t["file"]
    out = []
    # the file is read once, and every point is resolved as load_scenario_file(path, items)
    # would, on the failure log and straggler trace the first point read (pinned_inputs): a
    # file edited while the spec loads cannot give its points different inputs
    data = read_toml(path, "scenario file", ScenarioFileError)
    inputs = None
    for values in itertools.product(*grid.values()):
        items = {**fixed, **dict(zip(grid, values))}
        # the spec's values as they are; the file's options read for the sweep's policies
        with pinned_inputs(inputs):
            sf = parse_scenario(apply_overrides(data, [*items.items(), ("compare.policies", list(policies))],
                                                source=f"{path}: --set"), source=str(path), base_dir=path.parent)
        inputs = sf.inputs if inputs is None else inputs
        out.append((sf.scenario, values, sf.policy_kwargs()))
    names = _named([(sc, v) for sc, v, _ in out], grid)
    return [(sc, opts) for sc, (_, _, opts) in zip(names, out)]


def _named(out, grid):
    names = [sc.name for sc, _ in out]
    if len(set(names)) == len(names):
        return [sc for sc, _ in out]
    # the grid varies something the name does not show: say it in the name
    return [sc.replace(name=f"{sc.name} [{', '.join(f'{k}={_short(v)}' for k, v in zip(grid, values))}]")
            for sc, values in out]


def _short(v):
    return f"{v:g}" if isinstance(v, float) and math.isfinite(v) else str(v)


def load_spec(path, *, precheck=None) -> SweepSpec:
    """Read a sweep specification from a TOML file.

    The file::

        name = "rsc-like"
        seeds = 20                          # 0..19, or a list
        policies = ["ckpt", "rep", "spare"] # registered names
        redundancies = {from = 1, to = 12}  # or a list
        intervals = ["auto", 1800.0]        # optional: seconds or "auto"/"young"/"daly"

        [policy_options.spare]              # optional: options of a policy's factory
        offsets = "sidon"

        [[scenarios]]                       # one or more; or a single [scenario]
        preset = "paper_600k"               # optional; otherwise Scenario.from_dict keys
        n_steps = 500
        grid = {n_groups = [200, 600], system_mtbf = [300.0, 600.0]}  # every combination

        [[scenarios]]                       # a scenario file (``spare run``'s format, relative
        file = "cluster.toml"               # to this file); its policy options ([policy.NAME],
                                            # [elastic], compare.layout, compare.interval) are
                                            # used, not its compare.policies/r_max/seeds
        set = {"job.steps" = 20000}         # fixed overrides of its dotted keys
        grid = {"failures.per_1000_node_days" = [3.0, 6.5, 13.0], "cluster.gpus" = [8192, 16384]}

    ``precheck``: called with the spec's :class:`SpecSize` before any scenario is built
    (:meth:`SweepSpec.from_dict`).

    Raises
    ------
    spare_core.scenario_file.TomlFileError
        A missing or unreadable file, bytes that are not UTF-8 or bad TOML (a ValueError
        naming the file and the line; the same reader as scenario files).
    ValueError, TypeError
        A bad entry; the message names the file and the key.
    """
    from ..scenario_file import read_toml  # the product layer's one TOML reader

    p = Path(path)
    data = read_toml(p, "sweep spec")
    return SweepSpec.from_dict(data, source=str(p), base_dir=p.parent, precheck=precheck)
