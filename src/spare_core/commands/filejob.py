"""What ``spare run`` and ``spare advise`` share: the scenario-file argument and the flags that
override its values, the job's description in the report, the file's study and its result
set, the extra simulations behind the plots."""
from __future__ import annotations

import math
from typing import Any

from . import UsageError, horizon_float, positive_int, process_count, seed_count
from .budget import check_budget
from .outputs import add_output_arguments, check_outputs
from .progress import progress_bar, run_study
from .report import fmt_duration
from ..scenario_file import ScenarioFile, ScenarioFileError, load_scenario_file
from ..sim import ResultSet, Scenario, Study, policy_names, registered_policy, simulate

__all__ = ["add_file_arguments", "load_job", "flag_overrides", "check_job_budget", "describe_job", "file_study", "run_job", "interval_points",
           "timeline_run"]


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
        sets.append("compare.policies=" + repr(list(args.policies)).replace("'", '"'))
    sets += flag_overrides(args)
    try:
        sf = load_scenario_file(args.file, sets)
    except ScenarioFileError as exc:
        raise UsageError(str(exc)) from None
    check_outputs(args)
    return sf


def flag_overrides(args: Any) -> list[str]:
    """``--set`` items for ``--r-max``, ``--seeds``, ``--steps``, ``--horizon``, ``--processes``
    (those given)."""
    sets = []
    if args.r_max is not None:
        sets += [f"compare.r_max={args.r_max}"]
    if args.seeds is not None:
        sets.append(f"compare.seeds={args.seeds}")
    if args.steps is not None:
        sets += [f"job.steps={args.steps}"]
    if args.horizon is not None:
        if not (math.isfinite(args.horizon) and args.horizon > 1):
            raise UsageError(f"--horizon must be a finite number > 1, got {args.horizon}")
        sets.append(f"compare.horizon={args.horizon!r}")
    if args.processes is not None:
        sets.append(f"compare.processes={args.processes}")
    return sets


def check_job_budget(sf: ScenarioFile, args: Any, factors: tuple[float, ...] = ()) -> None:
    """The file's grid (and its grids at failure rate x ``factors``) within the work budget,
    or a :class:`UsageError` with the estimate (``--force`` goes on); before any run."""
    force = bool(getattr(args, "force", False))
    check_budget(file_study(sf), force, sf.path)
    for f in factors:
        check_budget(file_study(sf, sf.at_rate(f)), force, f"{sf.path} at failure rate x{f:g}")


def describe_job(sf: ScenarioFile) -> list[str]:
    """The job in the user's units and in the simulator's, a few lines."""
    sc = sf.scenario
    return [
        f"{sf.name}: {sf.gpus:,} GPUs = {sf.nodes:,} nodes x {sf.gpus_per_node}, {sc.n_groups} data-parallel groups "
        f"of {sf.gpus_per_group} GPUs; {sc.n_steps:,} steps of {sc.step_time:g} s (all-reduce {sc.t_allreduce:g} s), "
        f"T0 = {fmt_duration(sc.t0)} failure-free",
        f"failures: {sc.failure_description}; rate: {sf.rate_note}"
        + ("; a replay: the seeds vary the step-time noise (and the fitted law past the log's end), not the "
           "logged failures" if sf.scenario.failure_model == "trace" else ""),
        f"restart {fmt_duration(sc.restart_time)}, checkpoint save {fmt_duration(sc.checkpoint_time)}; "
        f"policies {', '.join(sf.policies)}; r in {_span(sf.redundancies)}; seeds 0..{len(sf.seeds) - 1}; "
        f"horizon {sc.max_wall_factor:g} T0",
    ]


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


def run_job(sf: ScenarioFile, scenario: Scenario | None = None, *, desc: str) -> ResultSet:
    """The file's study executed (Ctrl-C: the result set so far, marked interrupted)."""
    return run_study(file_study(sf, scenario), workers=sf.processes, desc=desc)


def _policy(sf: ScenarioFile, name: str, r: int, interval: Any = None) -> Any:
    """The file's policy ``name`` at ``r`` with its options (and ``interval``, if given)."""
    entry = registered_policy(name)
    options = {k: v for k, v in sf.policy_kwargs().get(name, {}).items() if k != "interval" or interval is None}
    pol = entry.build(r if entry.uses_redundancy else None, **options)
    return pol if interval is None else pol.with_interval(interval)


def interval_points(sf: ScenarioFile, name: str, r: int, *, factors: tuple[float, ...] = (
        0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)) -> dict[str, Any]:
    """ETTR (availability) over seeds at checkpoint intervals around the chosen one.

    The candidates are ``factors`` times the policy's interval (Young's where the rule
    checkpoints every step) plus Young's and Daly's; each runs on the file's seeds (the
    runs of a seed see the same failures).
    """
    sc = sf.scenario
    chosen = _policy(sf, name, r).checkpoint_interval(sc)
    young = _policy(sf, name, r, "young").checkpoint_interval(sc).seconds
    daly = _policy(sf, name, r, "daly").checkpoint_interval(sc).seconds
    unit = chosen.seconds if chosen.seconds > 0 else young
    candidates = sorted({f * unit for f in factors} | {young, daly} - {0.0})
    bar = progress_bar(len(candidates) * len(sf.seeds), "ETTR vs interval")
    points = []
    try:
        for c in candidates:
            pol = _policy(sf, name, r, c)
            vals = []
            for s in sf.seeds:
                vals.append(simulate(sc, pol, seed=s).availability)
                bar.update(1)
            points.append((c, vals))
    finally:
        bar.close()
    return {"points": points, "young": young, "daly": daly, "chosen": chosen.seconds, "rule": chosen.rule}


def timeline_run(sf: ScenarioFile, name: str, r: int) -> Any:
    """The file's policy ``name`` at ``r`` on its first seed, with its timeline."""
    return simulate(sf.scenario, _policy(sf, name, r), seed=sf.seeds[0], timeline=True)
