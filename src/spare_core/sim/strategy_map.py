"""Which strategy wins where: one cell of a strategy map (``spare map``), searched, not gridded.

A *strategy* (:class:`Strategy`) is a policy of the live registry with its options, run
without or with the scenario's in-memory checkpoint tier (:class:`~spare_core.sim.MemoryTier`):
``"ckpt"``, ``"ckpt+memory"``, ``"spare"``, ``"elastic"``. A cell is one scenario;
:func:`evaluate_cell` gives each strategy its best redundancy r and checkpoint interval and
compares the strategies on the same failures (common random numbers: on one seed every
strategy meets the same failures), adding seeds only while the winner is not clear.

Per strategy, on the first ``search_seeds`` seeds (:class:`MapSettings`):

1. **r** (a policy with redundancy): the candidates are the settings' redundancies (those >= 2
   and <= N). The search starts at the candidate with the least closed-form estimate
   ``J(r) = (step at the policy's initial depth) / A``, A the first-order availability of the
   policy's closed-form checkpoint period with its mean time between restarts T_f(r)
   (docs/model.md §3.2), and moves by compass search: try the candidates ``step`` places
   either side, move to the better one if it beats the current by more than ``tolerance``
   (relative), else halve the step; at most ``r_evaluations`` values of r.
2. **the checkpoint interval**, at that r: the same search over the policy's own interval
   rule (the availability-optimal closed form by default; Young's where it is meaningless)
   times ``2**(k/2)``, k = -4..8 (1/4 to 16 times it: with an in-memory tier, restarts from
   the persistent checkpoint are rarer than the closed form assumes), from k = 0 with step 2;
   at most ``interval_evaluations`` values. No interval saves more than the time spent saving
   and redoing the work lost to rollbacks, so the search is skipped when that share of the
   wall time is at most ``tie``, or when even without it the strategy would be behind the best
   strategy searched before it (the strategies are searched from the most promising pilot on;
   the runner-up, whose margin the map shows, is searched all the same), or when the policy's
   interval is fixed in seconds. A strategy whose runs are all cut (below) at its
   start is not searched at all.

Every run after a first *pilot* (each strategy at its starting point) stops at
``cut`` times the best pilot TTT/T0 (or the scenario's horizon, if sooner): a strategy that
slow loses by more than ``cut - 1`` times whatever it does, and its margin is then a lower
bound. The pilot itself stops at ``cut`` T0, and is run again to the horizon only when no
strategy finished within it. A strategy the pilot cut on every search seed is *out*: slower
than ``cut`` T0 where the best finished within ``b`` T0, it loses by more than ``cut / b - 1``
(its margin, a lower bound, from the pilot's runs); it is not searched, not run again to the
later horizon and given no more seeds.

Then seeds are added one at a time (the search seeds count) to the strategies still in
contention. A strategy's *margin* over another is paired over the seeds both ran: the
geometric mean of ``value / other's value`` minus 1, with the 95 % Student-t interval of the
mean log ratio (logs, because the ratios are skewed: a restart-bound strategy is 10 % or
150 % slower depending on the seed). The *leader* has the least mean objective over the seeds
so far; from ``min_seeds`` seeds on, a strategy whose margin over the leader has its interval
above 0 leaves the contest, and the cell stops when the runner-up's interval lies below
``tie`` (``"tie"``: more seeds cannot make it a win), when one strategy is left (``"clear"``:
the winner's margin over every other strategy has its interval above 0), or at the settings'
``seeds`` (``"unsure"``).

The objective is the wall time over T0 (``"time"``: TTT/T0 for a finished run) or the cost
(``"cost"``: GPU-hours paid for, spares included, times the price); an unfinished run counts
at its wall time, a lower bound. Within one scenario every strategy pays for the same GPUs,
so both objectives rank alike; the cost differs between cells.

The runs go through the one executor (a :class:`~spare_core.sim.Study` of the policies to
try, :func:`~spare_core.sim.execute` in this process): each run equals
:func:`~spare_core.sim.simulate` on its seed, bit for bit.

References
----------
.. [1] SPARe, arXiv:2603.00357 (closed-form r* and J(r)).
.. [2] R. M. Lewis, V. Torczon, M. W. Trosset, "Direct search methods: then and now", J.
   Comput. Appl. Math. 124, 2000 (compass search).
.. [3] P. Heidelberger, P. D. Welch, "Simultaneous confidence intervals ... common random
   numbers"; A. M. Law, "Simulation Modeling and Analysis", 5th ed., McGraw-Hill 2015, §11.2
   (paired comparisons of simulated systems with common random numbers).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .._results import column, derived, fields_dict
from .._stats import paired_ratio_ci
from .._validate import as_float, as_int, check_choice
from ..checkpoint import availability
from .executor import execute
from .results import ResultSet, summarise
from .remedies import REMEDIES, has_stragglers, remedy_plan, with_pause
from ..strategies import policy_names, registered_policy
from .scenario import Scenario
from .study import Study

__all__ = ["Strategy", "MapSettings", "StrategyPick", "MapCell", "evaluate_cell", "OBJECTIVES", "STATUSES",
           "MEMORY_SUFFIX", "REMEDY_SUFFIXES", "split_name"]

#: what a map minimises
OBJECTIVES = ("time", "cost")
#: how sure a cell is: the winner beats every other strategy (paired 95 % interval above 0), the
#: runner-up is within the tie band, neither at the seed cap, or no strategy finished a run
STATUSES = ("clear", "tie", "unsure", "none")
#: a strategy's name with the in-memory checkpoint tier
MEMORY_SUFFIX = "+memory"
#: a strategy's name with a straggler remedy (``[stragglers]``), after any ``+memory``
REMEDY_SUFFIXES = {f"+{r}": r for r in REMEDIES}


def split_name(text: str) -> tuple[str, bool, str | None]:
    """``"NAME[+memory][+REMEDY]"`` -> (NAME, memory, remedy or None).

    Examples
    --------
    >>> split_name("ckpt+memory+evict"), split_name("spare")
    (('ckpt', True, 'evict'), ('spare', False, None))
    """
    remedy = None
    for suffix, r in REMEDY_SUFFIXES.items():
        if text.endswith(suffix):
            text, remedy = text[: -len(suffix)], r
            break
    memory = text.endswith(MEMORY_SUFFIX)
    return (text[: -len(MEMORY_SUFFIX)] if memory else text), memory, remedy

# the interval grid: the rule's interval times 2**(k/2), k = -4..8
_K_LOW, _K_HIGH = -4, 8


@dataclass(frozen=True)
class Strategy:
    """A policy of the registry with its options, without or with the in-memory tier.

    Parameters
    ----------
    policy : str
        A registered policy name (:func:`~spare_core.sim.policy_names`).
    memory : bool, default False
        Run with the scenario's in-memory checkpoint tier (which the scenario must have).
    options : mapping, optional
        The policy's options (as a ``[policy.NAME]`` table); an ``interval`` among them is the
        start of the interval search (a rule) or fixes it (seconds).
    remedy : {"evict", "rebalance", "pacing"} or None
        A straggler remedy on the scenario's measured stragglers (:mod:`spare_core.sim.remedies`);
        None tolerates them.
    """

    policy: str
    memory: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    remedy: str | None = None

    def __post_init__(self):
        if self.remedy is not None and self.remedy not in REMEDIES:
            raise ValueError(f"strategy: remedy must be one of {list(REMEDIES)} or None, got {self.remedy!r}")
        if self.policy not in policy_names():
            raise ValueError(f"strategy: unknown policy {self.policy!r} (registered: {', '.join(policy_names())})")
        object.__setattr__(self, "options", dict(self.options))
        registered_policy(self.policy).check_options({k: v for k, v in self.options.items() if k != "interval"})

    @property
    def name(self) -> str:
        """``policy``, ``policy+memory``, each with ``+REMEDY`` when it has one."""
        return self.policy + (MEMORY_SUFFIX if self.memory else "") + ("" if self.remedy is None else f"+{self.remedy}")

    @property
    def uses_redundancy(self) -> bool:
        return registered_policy(self.policy).uses_redundancy

    @classmethod
    def parse(cls, text: str, options: Mapping[str, Any] | None = None) -> "Strategy":
        """``"NAME"``, ``"NAME+memory"``, each optionally with ``+evict``, ``+rebalance`` or
        ``+pacing``; NAME a registered policy.

        Examples
        --------
        >>> Strategy.parse("ckpt+memory").memory, Strategy.parse("spare").name
        (True, 'spare')
        >>> Strategy.parse("spare+evict").remedy
        'evict'
        """
        if not isinstance(text, str) or not text:
            raise ValueError(f"a strategy must be a policy name or NAME{MEMORY_SUFFIX}, got {text!r}")
        name, memory, remedy = split_name(text)
        return cls(name, memory, options or {}, remedy)

    def policy_at(self, r: int | None, interval: Any) -> Any:
        """The policy object at ``r`` with ``interval`` (seconds or a rule)."""
        opts = {k: v for k, v in self.options.items() if k != "interval"}
        pol = registered_policy(self.policy).build(r if self.uses_redundancy else None, **opts)
        return pol.with_interval(interval)

    def to_dict(self) -> dict:
        return {"name": self.name, "policy": self.policy, "memory": self.memory, "options": dict(self.options),
                "remedy": self.remedy}


@dataclass(frozen=True)
class MapSettings:
    """How a cell is searched and when it stops adding seeds (module docstring).

    Parameters
    ----------
    objective : {"time", "cost"}, default "time"
    redundancies : sequence of int, default 1..12
        Candidates of r (those >= 2, unless there are none, and <= N).
    seeds : int, default 5
        The most seeds per cell (seeds 0..seeds-1).
    search_seeds : int, default 2
        Seeds the r and interval searches compare on (at most ``seeds``).
    min_seeds : int, default 3
        Seeds before a cell may stop (at most ``seeds``).
    tie : float, default 0.01
        A runner-up whose paired 95 % interval lies below this relative difference is a tie.
    cut : float, default 3.0
        Runs after the pilot stop at this many times the best pilot TTT/T0 (> 1).
    tolerance : float, default 0.002
        Relative improvement a search move needs.
    r_evaluations, interval_evaluations : int, default 6
        The most values of r and of the interval a search tries.
    """

    objective: str = "time"
    redundancies: tuple = tuple(range(1, 13))
    seeds: int = 5
    search_seeds: int = 2
    min_seeds: int = 3
    tie: float = 0.01
    cut: float = 3.0
    tolerance: float = 0.002
    r_evaluations: int = 6
    interval_evaluations: int = 6

    def __post_init__(self):
        check_choice(self.objective, "objective", OBJECTIVES)
        rs = tuple(sorted({as_int(r, "redundancies", min_value=1) for r in self.redundancies}))
        if not rs:
            raise ValueError("redundancies must not be empty")
        object.__setattr__(self, "redundancies", rs)
        seeds = as_int(self.seeds, "seeds", min_value=1, max_value=1 << 24)
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "search_seeds", min(seeds, as_int(self.search_seeds, "search_seeds", min_value=1)))
        object.__setattr__(self, "min_seeds", min(seeds, as_int(self.min_seeds, "min_seeds", min_value=1)))
        object.__setattr__(self, "tie", as_float(self.tie, "tie", min_value=0.0))
        object.__setattr__(self, "cut", as_float(self.cut, "cut", min_value=1.0, strict_min=True))
        object.__setattr__(self, "tolerance", as_float(self.tolerance, "tolerance", min_value=0.0))
        for k in ("r_evaluations", "interval_evaluations"):
            object.__setattr__(self, k, as_int(getattr(self, k), k, min_value=1, max_value=64))

    def max_runs(self, strategies: Sequence[Strategy]) -> int:
        """The most runs :func:`evaluate_cell` makes for ``strategies`` (the work budget's bound):
        per strategy the pilot (twice, if nothing finishes within ``cut`` T0) and every value
        its searches may try on the search seeds, then the other seeds at its choice."""
        total = 0
        for st in strategies:
            # the pilot (to `cut` T0, then to the horizon), the start again at the cell's horizon
            # (or the r search, which counts it), the interval search
            configs = 2 + (self.r_evaluations if st.uses_redundancy else 1) + self.interval_evaluations
            total += configs * self.search_seeds + (self.seeds - self.search_seeds)
        return total

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass
class StrategyPick:
    """One strategy's choice in a cell and what it gave.

    Attributes
    ----------
    strategy : str
    redundancy : int or None
        The r chosen (None without redundancy).
    interval : float
        Compute seconds between persistent checkpoints.
    interval_note : str
        How the interval was chosen.
    seeds : list of int
    values : list of float
        The objective per seed (TTT/T0 or cost; a lower bound where the run did not finish).
    ratios : list of float
        Wall time over T0 per seed.
    finished : list of bool
    mean : float
        Mean of ``values``.
    configurations : int
        Values of (r, interval) tried.
    costs : list of float
        The cost per seed (GPU-hours paid, spares and warm standbys included, times the price;
        NaN without ``costs.gpu_hour``), whichever the objective: a map by time shows what its
        choices cost too.
    """

    strategy: str = column("the strategy's name", cell="key", kind="text")
    redundancy: int | None = column("the r chosen (empty without redundancy)", cell="same", kind="int")
    interval: float = column("compute seconds between persistent checkpoints", unit="s", cell="same")
    interval_note: str = column("how the interval was chosen", cell="same", kind="text")
    seeds: list = field(default_factory=list)
    values: list = field(default_factory=list)
    ratios: list = field(default_factory=list)
    finished: list = field(default_factory=list)
    mean: float = column("the mean objective over its seeds (TTT/T0 or cost; a lower bound where a run was cut)",
                         default=math.nan)
    configurations: int = column("values of (r, interval) tried", cell="count", default=0)
    costs: list = field(default_factory=list)

    @derived("seeds run", cell="count")
    def n_seeds(self) -> int:
        return len(self.seeds)

    @derived("seeds whose run finished", cell="count")
    def n_finished(self) -> int:
        return int(sum(bool(f) for f in self.finished))

    @derived("the mean cost over its seeds (NaN without a price; a lower bound where a run was cut)", unit="price",
             cell="same")
    def cost_mean(self) -> float:
        costs = [float(c) for c in self.costs]
        return math.fsum(costs) / len(costs) if costs and all(math.isfinite(c) for c in costs) else math.nan

    def to_dict(self) -> dict:
        """Every field and derived column."""
        return {**fields_dict(self), **fields_dict(self, ("n_seeds", "n_finished", "cost_mean"))}


@dataclass
class MapCell:
    """One cell of a map: the winner, the runner-up and the paired margin.

    Attributes
    ----------
    winner, runner_up : str or None
        Strategy names (None: nothing finished; no runner-up with one strategy).
    margin, margin_low, margin_high : float
        The runner-up's objective over the winner's, minus 1 (a fraction): the geometric mean
        over the seeds both ran and its 95 % interval (module docstring; NaN with one seed); a
        lower bound when ``censored``. The runner-up has the least margin.
    status : {"clear", "tie", "unsure", "none"}
    seeds : int
        The most seeds any strategy ran.
    censored : bool
        A run of the winner or runner-up stopped unfinished (at the cut or the horizon).
    horizon : float
        The horizon (in T0) of the runs after the pilot.
    picks : list of StrategyPick
        Every strategy, in the order given.
    runs : int
        Simulations made.
    seconds : float
        Wall seconds spent on the cell.
    rival : str or None
        The best strategy of another family (a policy with or without the tier or a remedy is
        one family): None when every other strategy is of the winner's family.
    rival_margin, rival_margin_low, rival_margin_high : float
        Its margin over the winner and the 95 % interval, as ``margin``.
    rival_status : {"clear", "tie", "unsure", "none"}
        The winner against the rival: its margin's interval above 0, below ``tie``, neither,
        or no rival.
    """

    winner: str | None = column("the winning strategy (empty: nothing finished)", cell="same", kind="text")
    runner_up: str | None = column("the strategy of least margin after the winner", cell="same", kind="text")
    margin: float = column("the runner-up's objective over the winner's, minus 1 (geometric mean over paired seeds)",
                           cell="same")
    margin_low: float = column("the margin's 95 % interval, low end", cell="same")
    margin_high: float = column("the margin's 95 % interval, high end", cell="same")
    status: str = column("clear, tie, unsure or none", cell="same", kind="text")
    seeds: int = column("the most seeds any strategy ran", cell="count")
    censored: bool = column("a run of the winner or runner-up was cut unfinished: the margin is a lower bound",
                            cell="same")
    horizon: float = column("the horizon of the runs after the pilot", unit="T0", cell="same")
    picks: list = field(default_factory=list)
    runs: int = column("simulations made", cell="count", default=0)
    seconds: float = column("wall seconds spent on the cell", unit="s", cell="same", default=0.0)
    rival: str | None = column("the best strategy of another family than the winner's (ckpt and ckpt+memory are "
                               "one family)", cell="same", kind="text", default=None)
    rival_margin: float = column("the rival's objective over the winner's, minus 1", cell="same", default=math.nan)
    rival_margin_low: float = column("the rival margin's 95 % interval, low end", cell="same", default=math.nan)
    rival_margin_high: float = column("the rival margin's 95 % interval, high end", cell="same", default=math.nan)
    rival_status: str = column("clear (interval above 0), tie (below the tie band), unsure, or none (no rival)",
                               cell="same", kind="text", default="none")

    def pick(self, name: str) -> StrategyPick:
        for p in self.picks:
            if p.strategy == name:
                return p
        raise KeyError(name)

    @derived("the strategy of least mean cost, each at the choice the objective made (empty without a price or "
             "when a run of any was cut): with the objective time, the winner in cost beside the winner in time",
             cell="same")
    def cheapest(self) -> str:
        picks = [p for p in self.picks if p.costs and all(p.finished)]
        if not picks or len(picks) < len(self.picks) or not all(math.isfinite(p.cost_mean) for p in picks):
            return None
        return min(picks, key=lambda p: p.cost_mean).strategy

    def to_dict(self) -> dict:
        return {**fields_dict(self), **fields_dict(self, ("cheapest",))}


def _compass(n: int, start: int, step: int, f, tolerance: float, budget: int) -> int:
    """Index in 0..n-1 minimising ``f`` by compass search from ``start`` (module docstring):
    try ``step`` places either side, move to the better if it beats the current by more than
    ``tolerance`` (relative), else halve the step; ``f`` is called at most ``budget`` times."""
    seen = {start: f(start)}
    best, step = start, max(1, step)
    while True:
        trial = [i for i in (best - step, best + step) if 0 <= i < n]
        for i in trial:
            if i not in seen and len(seen) < budget:
                seen[i] = f(i)
        cand = min((i for i in trial if i in seen), key=seen.__getitem__, default=None)
        if cand is not None and seen[cand] < seen[best] * (1.0 - tolerance):
            best = cand  # a strict improvement: no cycle
        elif step > 1:
            step //= 2
        else:
            return best


class _Cell:
    """One cell's evaluation: its scenarios and one result set of every run made.

    The searches ask :attr:`results` for a configuration's runs and tell it each study they
    execute (:meth:`ResultSet.extend`); :attr:`index` says where a configuration's run of a
    seed is in it and the horizon it ran to. A run that finished before a horizon is the run at
    any later horizon too (the horizon only stops a run), so it is reused wherever it stays
    valid.
    """

    def __init__(self, scenario: Scenario, strategies: Sequence[Strategy], settings: MapSettings):
        self.settings = settings
        self.base = scenario
        self.plain = scenario.replace(memory=None) if scenario.memory is not None else scenario
        self.horizon = scenario.max_wall_factor
        self.results = ResultSet([], [])
        self.index: dict = {}  # (strategy name, r, interval) -> {seed: (position in results.runs, horizon)}
        # each remedy's plan, once: its scenario (with and without the tier) and its pause
        self.plans = {(m, rem): remedy_plan(self.base if m else self.plain, rem)
                      for m, rem in {(st.memory, st.remedy) for st in strategies}}
        rs = [r for r in settings.redundancies if r <= scenario.n_groups]
        self.rs = [r for r in rs if r >= 2] or rs or [1]

    @property
    def runs(self) -> int:
        """Simulations made."""
        return len(self.results.runs)

    def scenario(self, st: Strategy, horizon: float) -> Scenario:
        sc = self.plans[(st.memory, st.remedy)].scenario
        return sc if horizon == sc.max_wall_factor else sc.replace(max_wall_factor=horizon)

    def value(self, run) -> float:
        """The objective of a run (a lower bound when it did not finish)."""
        if self.settings.objective == "cost":
            return float(run.cost)
        return float(run.wall_time / run.t0)

    def _valid(self, entry, horizon: float) -> bool:
        at, h = entry
        run = self.results.runs[at]
        return h == horizon or (run.finished and run.wall_time <= horizon * run.t0)

    def run(self, jobs: Sequence[tuple], seeds: Sequence[int], horizon: float) -> None:
        """Simulate each (strategy, r, interval) of ``jobs`` on the ``seeds`` it has no valid run
        for: one study per scenario and set of seeds, so that the strategies of one study
        share each seed's failures (common random numbers) and go through the one executor;
        its result set is told to :attr:`results`."""
        todo: dict = {}
        for st, r, iv in jobs:
            got = self.index.setdefault((st.name, r, iv), {})
            missing = tuple(s for s in seeds if s not in got or not self._valid(got[s], horizon))
            if missing:
                todo.setdefault((st.memory, st.remedy, missing), []).append((st, r, iv))
        for (memory, remedy, missing), group in todo.items():
            plan = self.plans[(memory, remedy)]
            study = Study([self.scenario(group[0][0], horizon)], [st.policy_at(r, iv) for st, r, iv in group],
                          seeds=list(missing), streams="seed", name="map cell")
            res = _paused(execute(study, workers=1), plan)
            start = len(self.results.runs)
            self.results.extend(res)
            at = start
            for (st, r, iv), summary in zip(group, res.summaries):
                got = self.index[(st.name, r, iv)]
                for run in res.cell_runs(summary):
                    got[run.seed] = (at, horizon)
                    at += 1

    def runs_of(self, st: Strategy, r, iv, seeds, horizon) -> list:
        self.run([(st, r, iv)], seeds, horizon)
        got = self.index[(st.name, r, iv)]
        return [self.results.runs[got[s][0]] for s in seeds]

    def mean(self, st, r, iv, seeds, horizon) -> float:
        return math.fsum(self.value(x) for x in self.runs_of(st, r, iv, seeds, horizon)) / len(seeds)

    def configurations(self, st: Strategy) -> int:
        return sum(1 for k in self.index if k[0] == st.name)

    def start(self, st: Strategy) -> tuple:
        """(r, interval setting) to start from: the policy's own interval setting and, with
        redundancy, the candidate r of least closed-form J(r) (module docstring)."""
        own = st.options.get("interval", "auto")
        if not st.uses_redundancy:
            return None, own
        sc = self.plain
        best, best_j = self.rs[0], math.inf
        for r in self.rs:
            pol = st.policy_at(r, own)
            tau = pol.checkpoint_interval(sc).seconds
            tf = pol.time_between_restarts(sc)
            a = availability(tau + sc.checkpoint_time, sc.checkpoint_time, sc.restart_time, tf) if tau > 0 else 0.0
            step = pol.initial_depth(sc) * sc.t_compute + sc.t_allreduce
            j = step / a if a > 0 else math.inf
            if j < best_j:
                best, best_j = r, j
        return best, own


def _paused(res: ResultSet, plan) -> ResultSet:
    """``res`` with a remedy's one-time pause at the start of every run, its cells summarised
    again (``res`` itself without a pause)."""
    if plan.pause == 0:
        return res
    runs, cells = [], []
    for summary in res.summaries:
        paused = [with_pause(x, plan) for x in res.cell_runs(summary)]
        runs += paused
        cells.append(summarise(paused, summary.n_groups, summary.interval_setting))
    return dataclasses.replace(res, runs=runs, summaries=cells)


def evaluate_cell(scenario: Scenario, strategies: Sequence[Strategy], settings: MapSettings | None = None) -> MapCell:
    """Search and compare ``strategies`` on ``scenario`` (module docstring).

    Parameters
    ----------
    scenario : Scenario
        The cell's scenario; strategies with the in-memory tier need its ``memory``.
    strategies : sequence of Strategy
        At least one; distinct names.
    settings : MapSettings, optional

    Returns
    -------
    MapCell

    Raises
    ------
    ValueError
        No strategy, repeated names, a ``+memory`` strategy on a scenario without a tier, the
        cost objective without a price, or a policy that cannot run on the scenario.

    Examples
    --------
    >>> sc = Scenario(8, n_steps=200, t_compute=10.0, t_allreduce=1.0, system_mtbf=60.0, restart_time=30.0,
    ...               checkpoint_time=5.0)
    >>> cell = evaluate_cell(sc, [Strategy("ckpt"), Strategy("spare")], MapSettings(seeds=3, redundancies=(2, 3, 4)))
    >>> cell.winner, cell.status in STATUSES
    ('spare', True)
    """
    t_begin = time.perf_counter()
    settings = settings or MapSettings()
    if not isinstance(scenario, Scenario):
        raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    strategies = list(strategies)
    if not strategies or not all(isinstance(s, Strategy) for s in strategies):
        raise ValueError("strategies must be a non-empty list of Strategy")
    names = [s.name for s in strategies]
    if len(set(names)) != len(names):
        raise ValueError(f"strategies must be distinct, got {names}")
    if any(s.memory for s in strategies) and scenario.memory is None:
        raise ValueError(f"strategy {next(s.name for s in strategies if s.memory)!r} needs an in-memory checkpoint "
                         "tier in the scenario ([checkpoint] in a file)")
    if any(s.remedy for s in strategies) and not has_stragglers(scenario):
        raise ValueError(f"strategy {next(s.name for s in strategies if s.remedy)!r} needs measured stragglers in the "
                         "scenario ([stragglers] in a file)")
    if settings.objective == "cost" and scenario.pricing is None:
        raise ValueError("objective 'cost' needs the price of a GPU-hour (costs.gpu_hour in a file)")
    cell = _Cell(scenario, strategies, settings)
    search = list(range(settings.search_seeds))
    cfg = {st.name: cell.start(st) for st in strategies}

    # the pilot: each strategy at its start, stopped at `cut` T0 (at the horizon if nothing finishes)
    h = min(cell.horizon, settings.cut)
    best = _pilot_best(cell, strategies, cfg, search, h)
    if best is None and h < cell.horizon:
        h = cell.horizon
        best = _pilot_best(cell, strategies, cfg, search, h)
    if best is None:
        picks = [_pick(cell, st, cfg[st.name], search, h, "-") for st in strategies]
        return MapCell(None, None, math.nan, math.nan, math.nan, "none", len(search), True, h, picks, cell.runs,
                       time.perf_counter() - t_begin)
    h_pilot, h = h, min(cell.horizon, settings.cut * best)
    # cut on every search seed in the pilot: slower than `cut` T0 at its start while the best
    # finished within `best` T0, so it loses by more than cut / best - 1 (a lower bound), and r
    # and the interval move TTT by far less near a closed form: out, not searched, and not run
    # again to the later horizon (what the pilot's runs already show is its margin's bound)
    out = {st.name for st in strategies
           if not any(x.finished for x in cell.runs_of(st, *cfg[st.name], search, h_pilot))}

    def hz(st: Strategy) -> float:
        return h_pilot if st.name in out else h

    notes, behind = {}, set()
    for name in out:
        notes[name] = f"{cfg[name][1]} (cut at {h_pilot:.3g} T0 on every search seed in the pilot: not searched)"
    best_value = math.inf  # the least mean objective found so far
    # the most promising first, so that a strategy that cannot win is seen to be so
    for st in sorted((st for st in strategies if st.name not in out),
                     key=lambda st: cell.mean(st, *cfg[st.name], search, h)):
        r, own = cfg[st.name]
        if not any(x.finished for x in cell.runs_of(st, r, own, search, h)):
            # cut on every search seed: it loses by more than cut - 1 at its start (as above)
            notes[st.name] = f"{own} (cut at {h:.3g} T0 on every search seed: not searched)"
            continue
        if st.uses_redundancy and len(cell.rs) > 1:
            def f_r(i, st=st, own=own):
                return cell.mean(st, cell.rs[i], own, search, h)

            r = cell.rs[_compass(len(cell.rs), cell.rs.index(r), max(1, len(cell.rs) // 4), f_r, settings.tolerance,
                                 settings.r_evaluations)]
        iv, notes[st.name], lagging = _interval(cell, st, r, own, search, h, best_value)
        if lagging:
            behind.add(st.name)
        cfg[st.name] = (r, iv)
        best_value = min(best_value, cell.mean(st, r, iv, search, h))
    # the runner-up's margin is the map's number: its interval is searched too, even when it
    # could not win
    ranked = sorted(strategies, key=lambda st: cell.mean(st, *cfg[st.name], search, hz(st)))
    if len(ranked) > 1 and ranked[1].name in behind:
        st = ranked[1]
        r = cfg[st.name][0]
        iv, notes[st.name], _ = _interval(cell, st, r, st.options.get("interval", "auto"), search, h, math.inf)
        cfg[st.name] = (r, iv)

    # the comparison: seeds one at a time to the strategies still in contention (not those out)
    ran = {st.name: list(search) for st in strategies}
    contest = [st for st in strategies if st.name not in out] or list(strategies)
    seed = len(search)
    while True:
        if seed >= settings.min_seeds and len(contest) > 1:
            leader, others = _standing(cell, contest, cfg, ran, h)
            if min(others, key=lambda o: o[1][0])[1][2] < settings.tie:
                break  # the runner-up is within the tie band: more seeds cannot make it a win
            # a strategy clearly behind the leader (paired interval above 0) leaves the contest
            contest = [leader] + [st for st, (_, lo, _) in others if not lo > 0]
        if seed >= settings.seeds or (seed >= settings.min_seeds and len(contest) == 1):
            break
        cell.run([(st, *cfg[st.name]) for st in contest], [seed], h)
        for st in contest:
            ran[st.name].append(seed)
        seed += 1

    picks = [_pick(cell, st, cfg[st.name], ran[st.name], hz(st), notes[st.name]) for st in strategies]
    most = max(len(p.seeds) for p in picks)
    winner = min((p for p in picks if len(p.seeds) == most), key=lambda p: p.mean)
    w = dict(zip(winner.seeds, winner.values))
    stats = {p.strategy: paired_ratio_ci([v for s, v in zip(p.seeds, p.values) if s in w], [w[s] for s in p.seeds if s in w])
             for p in picks if p is not winner}
    seconds = time.perf_counter() - t_begin
    if not stats:
        return MapCell(winner.strategy, None, math.nan, math.nan, math.nan, "unsure", most,
                       not all(winner.finished), h, picks, cell.runs, seconds)
    ru = min(stats, key=lambda k: stats[k][0])
    m, lo, hi = stats[ru]
    if hi < settings.tie:
        status = "tie"
    elif all(s[1] > 0 for s in stats.values()):
        status = "clear"
    else:
        status = "unsure"
    runner_up = next(p for p in picks if p.strategy == ru)
    censored = not all(winner.finished) or not all(runner_up.finished)
    out = MapCell(winner.strategy, ru, m, lo, hi, status, most, censored, h, picks, cell.runs, seconds)
    # the best strategy of another family: with ckpt and ckpt+memory both compared, the
    # runner-up is often the winner's own variant, and the decision a team makes is between
    # families
    family = split_name(winner.strategy)[0]
    others = {k: v for k, v in stats.items() if split_name(k)[0] != family}
    if others:
        rv = min(others, key=lambda k: others[k][0])
        rm, rlo, rhi = others[rv]
        out.rival, out.rival_margin, out.rival_margin_low, out.rival_margin_high = rv, rm, rlo, rhi
        out.rival_status = "tie" if rhi < settings.tie else ("clear" if rlo > 0 else "unsure")
    return out


def _pilot_best(cell: _Cell, strategies, cfg, seeds, horizon) -> float | None:
    """The pilot's best TTT/T0 (the largest over the seeds of the strategy with the least
    one), among the strategies that finished every seed; None if none did."""
    cell.run([(st, *cfg[st.name]) for st in strategies], seeds, horizon)
    best = None
    for st in strategies:
        runs = cell.runs_of(st, *cfg[st.name], seeds, horizon)
        if all(x.finished for x in runs):
            worst = max(x.wall_time / x.t0 for x in runs)
            best = worst if best is None else min(best, worst)
    return best


def _interval(cell: _Cell, st: Strategy, r, own, seeds, h, best: float) -> tuple:
    """(interval setting, note, skipped as behind) at ``r``: the searched interval, or the
    policy's own (``best``: the least mean objective of the strategies searched so far)."""
    settings = cell.settings
    if not isinstance(own, str):
        return own, "fixed by the file", False
    sc = cell.scenario(st, h)
    rule = st.policy_at(r, own).checkpoint_interval(sc)
    runs = cell.runs_of(st, r, own, seeds, h)
    # no interval saves more than the time spent saving and redoing lost work
    share = math.fsum(x.save_time + x.lost_time for x in runs) / math.fsum(x.wall_time for x in runs)
    if share <= settings.tie:
        return own, f"{own} (saves and lost work {100 * share:.2g} % of the wall time: not searched)", False
    if cell.mean(st, r, own, seeds, h) * (1.0 - share) >= best:
        return own, f"{own} (behind even without its saves and lost work, {100 * share:.2g} %: not searched)", True
    base = rule.seconds if rule.seconds > 0 else st.policy_at(r, "young").checkpoint_interval(sc).seconds
    ks = list(range(_K_LOW, _K_HIGH + 1))

    def setting(k):
        # k = 0 is the rule itself (already run) when it gives an interval
        return own if (k == 0 and rule.seconds > 0) else base * 2.0 ** (k / 2)

    k = ks[_compass(len(ks), ks.index(0), 2, lambda i: cell.mean(st, r, setting(ks[i]), seeds, h), settings.tolerance,
                    settings.interval_evaluations)]
    if k == 0 and rule.seconds > 0:
        return own, f"{own} (searched)", False
    return setting(k), f"searched: {2.0 ** (k / 2):.3g} x the {own} interval{'' if rule.seconds > 0 else ' (Young)'}", False


def _standing(cell: _Cell, contest, cfg, ran, h):
    """(leader, [(strategy, (mean, low, high) of the paired value / leader's value - 1)]) over
    the contenders' seeds (the same for all of them)."""
    values = {st.name: [cell.value(x) for x in cell.runs_of(st, *cfg[st.name], ran[st.name], h)] for st in contest}
    leader = min(contest, key=lambda st: math.fsum(values[st.name]))
    return leader, [(st, paired_ratio_ci(values[st.name], values[leader.name])) for st in contest if st is not leader]


def _pick(cell: _Cell, st: Strategy, config, seeds, h, note) -> StrategyPick:
    r, iv = config
    runs = cell.runs_of(st, r, iv, seeds, h)
    values = [cell.value(x) for x in runs]
    return StrategyPick(st.name, r if st.uses_redundancy else None, float(runs[0].checkpoint_interval), note,
                        list(seeds), values, [float(x.wall_time / x.t0) for x in runs],
                        [bool(x.finished) for x in runs], math.fsum(values) / len(values), cell.configurations(st),
                        [float(x.cost) for x in runs])
