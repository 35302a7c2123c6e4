"""What ``spare run`` and ``spare advise`` share: the scenario-file argument and the flags that
override its values, the job's description in the report, the file's study and its result
set, the extra simulations behind the plots."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import UsageError, horizon_float, positive_int, process_count, seed_count
from .budget import check_budget, check_grid, file_fit_cost
from .outputs import add_output_arguments, check_outputs
from .progress import run_study
from .text import fmt_duration
from ..checkpoint import availability_optimal, daly_interval, young_interval
from ..scenario_file import ScenarioFile, ScenarioFileError, load_scenario_file
from ..sim import ResultSet, Scenario, Study, policy_names, registered_policy, simulate

__all__ = ["add_file_arguments", "load_job", "flag_overrides", "job_studies", "check_job_budget", "describe_job",
           "file_study",
           "run_job", "interval_scan", "IntervalScan", "SCAN_FACTORS", "scan_study_size", "step_seconds", "interval_steps",
           "timeline_run", "file_policy"]


def add_file_arguments(parser: Any) -> None:
    """FILE and the flags that override its values (flags win over the file)."""
    parser.add_argument("file", metavar="FILE.toml", help="scenario file (see docs/cli.md and examples/)")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="override a file value, e.g. --set failures.mtbf='2 h' (repeatable)")
    parser.add_argument("--policies", nargs="+", metavar="NAME", default=None,
                        help="policies to compare, names of the live registry (built in: "
                             f"{', '.join(policy_names())}; plugins too) (file: compare.policies)")
    parser.add_argument("--r-max", type=positive_int, default=None,
                        help="try r = 1..R (file: compare.r_max / compare.redundancies)")
    parser.add_argument("--seeds", type=seed_count, default=None, help="seeds per cell (file: compare.seeds)")
    parser.add_argument("--steps", type=positive_int, default=None, help="training steps (file: job.steps)")
    parser.add_argument("--horizon", type=horizon_float, default=None,
                        help="stop a run at this many T0 (file: compare.horizon)")
    parser.add_argument("--processes", type=process_count, default=None,
                        help="worker processes, 0 = one per CPU (file: compare.processes)")
    parser.add_argument("--force", action="store_true", help="run even when the expected work is beyond the budget (docs/cli.md, Budget)")
    add_output_arguments(parser)


def load_job(args: Any) -> ScenarioFile:
    """The scenario file with the flags applied; every error a :class:`UsageError`."""
    sets = list(args.set)
    if args.policies is not None:
        known = policy_names()
        for name in args.policies:
            if name not in known:
                raise UsageError(f"--policies: unknown policy {name!r} (registered: {', '.join(known)})")
        sets.append(("compare.policies", list(args.policies)))
    sets += flag_overrides(args)
    try:
        sf = load_scenario_file(args.file, sets)
    except ScenarioFileError as exc:
        raise UsageError(str(exc)) from None
    check_outputs(args)
    # the file's grid within the budget before any Study is built (2**24 seeds of groups
    # would take gigabytes first); the commands check their studies again once built
    check_grid([sf.scenario], sf.policies, sf.redundancies, len(sf.seeds), bool(getattr(args, "force", False)),
               sf.path)
    return sf


def flag_overrides(args: Any) -> list[tuple[str, Any]]:
    """The file keys ``--r-max``, ``--seeds``, ``--steps``, ``--horizon`` and ``--processes`` set
    (those given), as ``(key, value)`` overrides: the flags' values, read by the file's reader
    like any other value of the key (never written out as text and parsed again)."""
    sets: list[tuple[str, Any]] = []
    if args.r_max is not None:
        sets.append(("compare.r_max", args.r_max))
    if args.seeds is not None:
        sets.append(("compare.seeds", args.seeds))
    if args.steps is not None:
        sets.append(("job.steps", args.steps))
    if args.horizon is not None:
        if not (math.isfinite(args.horizon) and args.horizon > 1):
            raise UsageError(f"--horizon must be a finite number > 1, got {args.horizon}")
        sets.append(("compare.horizon", args.horizon))
    if args.processes is not None:
        sets.append(("compare.processes", args.processes))
    return sets


def job_studies(sf: ScenarioFile, factors: tuple[float, ...] = ()) -> dict[float, Study]:
    """The file's study (key 1.0) and its studies at failure rate x ``factors``: built once per
    command, so that the work budget and the runs read the same objects."""
    out = {1.0: file_study(sf)}
    for f in factors:
        out[f] = file_study(sf, sf.at_rate(f))
    return out


def check_job_budget(sf: ScenarioFile, args: Any, studies: dict[float, Study], *, scan: bool = False) -> None:
    """The command's studies (:func:`job_studies`: the file's grid, its grids at other failure
    rates) and an interval scan within the work budget, or a :class:`UsageError` with the
    estimate (``--force`` goes on); before any run."""
    force = bool(getattr(args, "force", False))
    for f, study in studies.items():
        # the log's fit (law = "fit") is made once, with the file: counted with the file's own grid
        check_budget(study, force, sf.path if f == 1.0 else f"{sf.path} at failure rate x{f:g}",
                     file_fit_cost(sf) if f == 1.0 else 0.0)
    if scan:
        check_budget(scan_study_size(sf), force, f"{sf.path} interval scan")


def describe_job(sf: ScenarioFile) -> list[str]:
    """The job in the user's units and in the simulator's, a few lines."""
    sc = sf.scenario
    return [
        f"{sf.name}: {sf.gpus:,} GPUs = {sf.nodes:,} nodes x {sf.gpus_per_node}, {sc.n_groups} data-parallel groups "
        f"of {sf.gpus_per_group} GPUs; {sc.n_steps:,} steps of {sc.step_time:g} s (all-reduce {sc.t_allreduce:g} s), "
        f"T0 = {fmt_duration(sc.t0)} failure-free",
        f"failures: {sc.failure_description}; rate: {sf.rate_note}" + _replay_note(sf),
        (f"{sf.checkpoint_io.words()}; " if sf.checkpoint_io is not None else "")
        + f"restart {fmt_duration(sc.restart_time)}, checkpoint save {fmt_duration(sc.checkpoint_time)}"
        + (f" (drains {fmt_duration(sc.checkpoint_drain)} after)" if sc.checkpoint_drain > 0 else "") + "; "
        f"policies {', '.join(sf.policies)}; r in {_span(sf.redundancies)}; seeds 0..{len(sf.seeds) - 1}; "
        f"horizon {sc.max_wall_factor:g} T0",
    ] + ([] if sc.memory is None else [
        f"in-memory tier: a snapshot of {fmt_duration(sc.memory.save)} every {fmt_duration(sc.memory.every)} of "
        f"compute, {sc.memory.copies} cop{'y' if sc.memory.copies == 1 else 'ies'}, restore "
        f"{fmt_duration(sc.memory.restore)}"])


def _replay_note(sf: ScenarioFile) -> str:
    """What the seeds vary in a replay: the step-time noise, and the failure histories only
    when the log is replayed from several windows."""
    if sf.scenario.failure_model != "trace":
        return ""
    n = sf.scenario.failures.histories(sf.seeds)
    if n <= 1:
        return ("; a replay of one history: the seeds vary the step-time noise (and the fitted law past the log's "
                "end), not the logged failures (failures.windows replays others)")
    return f"; a replay from {n} windows of the log: the {len(sf.seeds)} seeds see {n} failure histories"


def _span(rs: tuple[int, ...]) -> str:
    if list(rs) == list(range(rs[0], rs[-1] + 1)):
        return f"{rs[0]}..{rs[-1]}"
    return "{" + ", ".join(map(str, rs)) + "}"


def file_study(sf: ScenarioFile, scenario: Scenario | None = None) -> Study:
    """The file's study: its policies (with their options) x r x seeds on its scenario (or on
    ``scenario``), at the file's checkpoint interval; each run equals ``simulate`` on its seed."""
    return Study([scenario or sf.scenario], sf.policies, sf.redundancies,
                 intervals=(None if sf.interval == "auto" else sf.interval,), seeds=sf.seeds,
                 policy_options=sf.policy_kwargs() or None, name=sf.name, streams="seed")


def run_job(sf: ScenarioFile, study: Study, *, desc: str) -> ResultSet:
    """One of the command's studies (:func:`job_studies`) executed on the file's processes
    (Ctrl-C: the result set so far, marked interrupted)."""
    return run_study(study, workers=sf.processes, desc=desc)


def file_policy(sf: ScenarioFile, name: str, r: int, interval: Any = None) -> Any:
    """The file's policy ``name`` at ``r`` with its options (and ``interval``, if given; else
    ``compare.interval`` where it is not "auto", as :func:`file_study` applies it)."""
    if interval is None and sf.interval != "auto":
        interval = sf.interval
    entry = registered_policy(name)
    options = {k: v for k, v in sf.policy_kwargs().get(name, {}).items() if k != "interval" or interval is None}
    pol = entry.build(r if entry.uses_redundancy else None, **options)
    return pol if interval is None else pol.with_interval(interval)


#: multiples of the policy's interval an interval scan simulates (besides the closed forms)
SCAN_FACTORS = (0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)
#: when the fastest interval is the longest (or shortest) simulated, the scan goes on that way by
#: these multiples of it, at most :data:`SCAN_EXTENSIONS` times: a pick at the edge of what
#: was searched says only that the optimum lies beyond
SCAN_STEP = (1.4, 2.0)
SCAN_EXTENSIONS = 3


@dataclass
class IntervalScan:
    """TTT/T0 of one policy at one r over checkpoint intervals, every interval on the same
    seeds (and the same failures: common random numbers).

    Attributes
    ----------
    result : ResultSet
        One cell per interval (``interval_setting`` the seconds).
    label : str
        The policy's label; ``redundancy`` its r.
    chosen, chosen_rule : float, str
        The policy's own interval (what the grid ran) and its rule.
    forms : dict
        Closed form name -> seconds: ``Young``, ``Daly`` and, where meaningful, ``T_c*``
        (the availability-optimal period minus the save).
    uses_redundancy : bool
        Whether the policy has an r.
    extended : int
        Times the scan went on past its edge because the fastest interval was there.
    at_edge : str or None
        ``"longest"`` or ``"shortest"`` when the fastest interval is still the edge of what was
        simulated after the extensions (the optimum may lie beyond), else None.
    """

    result: ResultSet
    label: str
    redundancy: int
    chosen: float
    chosen_rule: str
    forms: dict
    uses_redundancy: bool = True
    extended: int = 0
    at_edge: str | None = None

    def fastest(self) -> float | None:
        """The interval of least mean TTT/T0 among those that finished every seed, ties going to
        the one nearest the policy's own on a log scale (None if none finished): past the job's
        length every interval saves never and ties."""
        done = [s for s in self.intervals() if math.isfinite(self.cell(s).ratio_mean)]
        c = self.chosen
        near = (lambda s: abs(math.log(s / c))) if 0 < c < math.inf else (lambda s: 0.0)
        return min(done, key=lambda s: (self.cell(s).ratio_mean, near(s) if s > 0 else math.inf)) if done else None

    def intervals(self) -> list[float]:
        """The simulated intervals, ascending."""
        return sorted(float(s.interval_setting) for s in self.result.summaries)

    def cell(self, seconds: float) -> Any:
        """The summary of one interval."""
        for s in self.result.summaries:
            if float(s.interval_setting) == seconds:
                return s
        raise KeyError(seconds)

    def runs(self, seconds: float) -> list[Any]:
        """The runs of one interval, in seed order."""
        return self.result.cell_runs(self.cell(seconds))

    def names(self, seconds: float) -> list[str]:
        """The closed forms (and "chosen") that equal ``seconds``."""
        out = [k for k, v in self.forms.items() if v == seconds]
        return out + (["chosen"] if seconds == self.chosen else [])


def interval_scan(sf: ScenarioFile, name: str, r: int, *, factors: tuple[float, ...] = SCAN_FACTORS) -> IntervalScan:
    """TTT/T0 of the file's policy ``name`` at ``r`` at checkpoint intervals around its own.

    The candidates are Young's, Daly's and (where meaningful) the availability-optimal
    interval with the policy's mean time between restarts, the policy's own interval (what
    the file's grid ran) and ``factors`` times it (Young's where the policy saves after every
    step); each runs on the file's seeds through the executor (Ctrl-C: the result set so
    far, marked interrupted). The policy's own interval runs exactly as in the grid.
    """
    sc = sf.scenario
    pol = file_policy(sf, name, r)
    chosen = pol.checkpoint_interval(sc)
    tf = pol.time_between_restarts(sc)
    ts = sc.checkpoint_time
    forms = {"Young": young_interval(ts, tf), "Daly": daly_interval(ts, tf)}
    opt = availability_optimal(ts, sc.restart_time, tf)
    if opt.meaningful:
        forms["T_c*"] = opt.period - ts
    unit = chosen.seconds if chosen.seconds > 0 and math.isfinite(chosen.seconds) else forms["Young"]
    # the policy's own interval even where it is 0 (every step) or inf (never): what the grid ran
    candidates = sorted((({f * unit for f in factors} | set(forms.values())) - {0.0, math.inf}) | {chosen.seconds})
    entry = registered_policy(name)
    options = {k: v for k, v in sf.policy_kwargs().get(name, {}).items() if k != "interval"}
    rr = r if entry.uses_redundancy else 1

    def run(intervals: list[float]) -> ResultSet:
        study = Study([sc], [name], [rr], intervals=intervals, seeds=sf.seeds,
                      policy_options={name: options} if options else None, name=f"{sf.name} interval scan",
                      streams="seed")
        return run_study(study, workers=sf.processes, desc="interval scan")

    scan = IntervalScan(run(candidates), pol.name, rr, chosen.seconds, chosen.rule, forms, entry.uses_redundancy)
    # the fastest at an edge: go on that way (the same seeds, so the new intervals pair with the old)
    while not scan.result.interrupted:
        fastest, have = scan.fastest(), scan.intervals()
        edge = None if fastest is None or len(have) < 2 else (
            "longest" if fastest == have[-1] else "shortest" if fastest == have[0] else None)
        if edge is None or scan.extended >= SCAN_EXTENSIONS:
            scan.at_edge = edge
            break
        more = [fastest * f for f in SCAN_STEP] if edge == "longest" else [fastest / f for f in SCAN_STEP]
        more = [x for x in more if 0 < x < math.inf and x not in have]
        if not more:
            scan.at_edge = edge
            break
        scan.result.extend(run(more))
        scan.extended += 1
    return scan


def scan_study_size(sf: ScenarioFile) -> Study:
    """A study the size of :func:`interval_scan`'s (for the work budget before any run: the
    budget reads the scenario and the number of runs, not which policy runs)."""
    name = sf.policies[0]
    r = sf.redundancies[0] if registered_policy(name).uses_redundancy else 1
    # the factors, three closed forms and the policy's own, and every extension past an edge
    n = len(SCAN_FACTORS) + 4 + SCAN_EXTENSIONS * len(SCAN_STEP)
    return Study([sf.scenario], [name], [r], intervals=[float(i + 1) for i in range(n)], seeds=sf.seeds,
                 name=f"{sf.name} interval scan", streams="seed")


def step_seconds(sf: ScenarioFile, name: str, r: int) -> float:
    """Seconds of one failure-free step of policy ``name`` at ``r`` right after a (re)start
    (``initial_depth`` stack layers plus the all-reduce): what turns an interval into steps."""
    sc = sf.scenario
    return file_policy(sf, name, r).initial_depth(sc) * sc.t_compute + sc.t_allreduce


def interval_steps(seconds: float, step: float) -> int:
    """Steps between saves for an interval of ``seconds``: the simulator saves after the first
    step that ends ``seconds`` after the last save, so ``ceil(seconds / step)`` (at least 1)."""
    if not math.isfinite(seconds):
        return 0
    return max(1, math.ceil(seconds / step - 1e-9))


def timeline_run(sf: ScenarioFile, name: str, r: int) -> Any:
    """The file's policy ``name`` at ``r`` on its first seed, with its timeline."""
    return simulate(sf.scenario, file_policy(sf, name, r), seed=sf.seeds[0], timeline=True)
