"""``spare advise FILE.toml``: the recommendation a team acts on.

Runs the file's grid (policies x r x seeds), then reports:

- the policy and r with the least mean TTT/T0;
- the one checkpoint interval to set in the trainer, in steps (and the compute time it
  stands for), with the rule that chose it; a short simulated scan of intervals around it
  (the closed forms and multiples, on the same seeds and failures) replaces it only when
  an interval is faster beyond the seed noise;
- the expected time-to-train and TTT/T0, ETTR (T0 / time-to-train) and availability (time
  in kept steps / wall time, which counts redundant stack layers as kept), each with a 95 %
  confidence interval over seeds, cut at what is physically possible;
- the runner-up (the best other policy) and by how much it is slower, with a 95 %
  interval of the paired difference (the two see the same failures on each seed, so the
  difference is measured more tightly than either value);
- how the answer moves when the failure rate is 50 % lower or higher (the whole grid run
  again at each rate), and when the restart, the save and (with ``[repair]``) the swap,
  the repair time and the spare pool are halved or doubled (each policy's best cell run
  again: :mod:`spare_core.commands.variants`);
- with ``[repair]``, how many hot spares: every policy's best cell at several pool sizes
  (TTT/T0 and cost; ``spares.png`` with ``--plot``); with a ``[fleet]`` table (or
  ``--standbys``), how many warm standbys (``standbys.png``); where nodes differ (lemons, a frailty,
  ``fleet.retire_after``; or ``--retire-after``), after how many failures to retire a node; with
  an in-memory tier, the best policy without it. The recommendation at each of these values is
  a lever (its TTT and cost, paired over the seeds), which ``change first`` may name;
- with ``job.tokens_per_step`` and a price, the cost per million tokens (on demand and on spot
  nodes with ``costs.spot_gpu_hour``).

``--objective cost`` ranks by the mean cost of the runs (GPU-hours paid, spares included,
times ``costs.gpu_hour``) instead of the mean TTT/T0. Within one scenario every policy pays
for the same GPUs, so the two rankings differ only through what the GPUs cost while they
wait; they part where the spare pool changes (the spares sweep, ``spare map``).

Every run behind those lines (the grid, the sensitivity grids, the interval scan) is in
``--json``/``--csv``/``--parquet``, each with its ``grid``.

Each part is one function computing it and one printing it (``_advice`` / ``_print_advice``,
``_runner_up``, ``_interval_choice``, ``_sensitivity`` / ``_print_sensitivity``), so that
another objective ranks the same grids without touching the rest.
"""
from __future__ import annotations

import math
import sys
from typing import Any

from . import EXIT_INTERRUPTED
from .filejob import (IntervalScan, add_file_arguments, check_job_budget, describe_job, interval_scan, interval_steps,
                      job_studies, load_job, run_job, step_seconds)
from .outputs import MAIN_GRID, provenance, run_record, run_rows, write_outputs
from .._stats import mean_ci, paired_ratio_ci
from .text import fmt_ci, fmt_duration
from .plots import plot_sweep
from .run import best_rows, write_plots
from .variants import (class_variants, knob_variants, memory_variant, per_policy, retire_counts, retire_meaningful,
                       retire_variants, run_variants, spare_counts, spares_variants, standby_counts, standbys_variants,
                       winner)
from .budget import check_budget, check_counts, check_runs
from .filejob import file_policy
from ..sim.remedies import describe_remedies, weigh_remedies
from ..sim.results import FRACTION_BOUNDS, KEPT_STEPS, RATIO_BOUNDS, TIME_PARTS, ettr, time_breakdown
from . import UsageError

HELP = "recommend a policy, r and checkpoint interval for a scenario file, with confidence intervals and sensitivity"

#: failure-rate multipliers of the sensitivity check
RATE_FACTORS = (0.5, 1.5)

#: the grid name of the interval scan's runs in the outputs
SCAN_GRID = "interval scan"

#: family-wise level of the scan's decision: the best of K intervals replaces the rule's only
#: when its paired interval at 1 - (1 - this) / K (Bonferroni) is clear of 0
SCAN_LEVEL = 0.95


def _rate_grid(f: float) -> str:
    return f"failure rate x{f:g}"


#: what the recommendation minimises
OBJECTIVES = ("time", "cost")

#: grid names of the variants' runs in the outputs
KNOB_GRID, SPARES_GRID = "sensitivity", "spares sweep"
#: grid names of the fleet sweeps' runs ([fleet] standbys and retire_after)
STANDBYS_GRID, RETIRE_GRID = "standbys sweep", "retirement sweep"


def _counts(text: str, what: str = "spare-pool sizes", high: int = 10**7, example: str = "0,8,16") -> list[int]:
    """``--spares N,N,...``: hot-spare pool sizes, each an integer in 0..10**7 (repeats kept once);
    ``what``, ``high`` and ``example`` word another flag's list (:func:`_standby_counts`,
    :func:`_retire_counts`).

    An ``argparse.ArgumentTypeError``, whose message argparse prints as it is (a ValueError
    would be shown as "invalid _counts value"), names the item at fault in the user's words.
    """
    import argparse

    top = "10**7" if high == 10**7 else "10**6"
    rule = f"must be a comma-separated list of {what} (integers 0..{top}, e.g. {example})"
    items = text.split(",")
    out = []
    for item in items:
        x = item.strip()
        if not x:
            raise argparse.ArgumentTypeError(f"{rule}, got {text!r}: an empty item")
        try:
            n = int(x)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{rule}, got {text!r}: {x!r} is not an integer") from None
        if not 0 <= n <= high:
            raise argparse.ArgumentTypeError(f"{rule}, got {text!r}: {n} is {'negative' if n < 0 else 'above ' + top}")
        out.append(n)
    return list(dict.fromkeys(out))


def _standby_counts(text: str) -> list[int]:
    """``--standbys N,N,...``: warm-standby counts (``fleet.standbys``: 0..10**6)."""
    return _counts(text, "warm-standby counts", 10**6, "0,2,4")


def _retire_counts(text: str) -> list[int]:
    """``--retire-after K,K,...``: failures after which a node retires (``fleet.retire_after``;
    0: never, 1..10**6)."""
    return _counts(text, "failure counts after which a node retires (0: never)", 10**6, "0,2,3")


def add_arguments(parser: Any) -> None:
    """Options of ``spare advise``."""
    add_file_arguments(parser)
    parser.add_argument("--no-sensitivity", action="store_true",
                        help="skip the sensitivity runs (failure rate ±50 %%, costs halved and doubled)")
    parser.add_argument("--objective", choices=OBJECTIVES, default="time",
                        help="rank by mean time-to-train (default) or by mean cost (needs costs.gpu_hour)")
    parser.add_argument("--spares", type=_counts, default=None, metavar="N,N,...",
                        help="hot-spare pool sizes of the spares sweep (needs [repair]; default 0, half, the "
                             "file's, double and 4x)")
    parser.add_argument("--standbys", type=_standby_counts, default=None, metavar="N,N,...",
                        help="warm-standby counts of the standbys sweep (fleet.standbys; needs [repair]; run by "
                             "default with a [fleet] table: 0, half, the file's and double)")
    parser.add_argument("--retire-after", type=_retire_counts, default=None, metavar="K,K,...",
                        help="failures after which a node retires, 0 for never, in the retirement sweep "
                             "(fleet.retire_after; needs failures.model = 'node' and [repair]; run by default with "
                             "lemons, a frailty or fleet.retire_after: off, half, the file's and double)")


# -- what each part computes ----------------------------------------------------------------
def _estimates(runs: list[Any], t0: float) -> dict[str, Any]:
    """TTT/T0, time-to-train, ETTR and availability of one cell's runs: mean and 95 % CI; with
    a price, GPU-hours and cost."""
    ratio = mean_ci([r.ratio for r in runs], bounds=RATIO_BOUNDS)
    priced = bool(runs) and all(math.isfinite(r.cost) for r in runs)

    def per_token(col: str):  # None unless every run has it (tokens per step, the price, finished)
        xs = [getattr(r, col) for r in runs]
        return mean_ci(xs, bounds=(0.0, math.inf)) if xs and all(math.isfinite(x) for x in xs) else None

    return {
        "gpu_hours": mean_ci([r.gpu_hours for r in runs], bounds=(0.0, math.inf)) if priced else None,
        "cost": mean_ci([r.cost for r in runs], bounds=(0.0, math.inf)) if priced else None,
        # the price the runs paid: the spot one on a capacity log (costs.spot_gpu_hour)
        "gpu_hour_price": runs[0].gpu_hour_price if priced and len({r.gpu_hour_price for r in runs}) == 1 else None,
        **{col: per_token(col) for col in ("cost_per_mtoken", "on_demand_cost_per_mtoken", "spot_cost_per_mtoken")},
        "ratio": ratio,
        "ttt_days": tuple(x * t0 / 86400 for x in ratio),
        "ettr": mean_ci([ettr(r) for r in runs], bounds=FRACTION_BOUNDS),
        "availability": mean_ci([r.availability for r in runs], bounds=FRACTION_BOUNDS),
        "seeds": len(runs),
    }


def _advice(res: Any, sf: Any, objective: str = "time") -> dict[str, Any] | None:
    """The best cell, its interval and the estimates (the ranking is :meth:`ResultSet.ranking`:
    with a policy without redundancy compared, the others are ranked at r >= 2, where they are
    an alternative to it); None if no policy finished on every seed."""
    ranked = res.ranking(objective=objective)
    if not ranked:
        return None
    best = ranked[0]
    every, rule = res.cell_interval(best)
    return {
        "policy": best.policy,
        "source": res.sources.get(best.policy),
        "redundancy": best.redundancy,
        "uses_redundancy": res.redundant.get(best.policy, True),
        "checkpoint_interval": every,
        "interval_rule": rule,
        **_estimates(res.cell_runs(best), sf.scenario.t0),
        "objective": objective,
        "runner_up": _runner_up(res, ranked),
    }


def _runner_up(res: Any, ranked: list[Any]) -> dict[str, Any] | None:
    """The best other policy and how much slower it is than the best, paired over seeds."""
    if len(ranked) < 2:
        return None
    best, second = ranked[0], ranked[1]
    other = {r.seed: r for r in res.cell_runs(second)}
    diffs = [100 * (other[r.seed].ratio / r.ratio - 1) for r in res.cell_runs(best) if r.seed in other]
    dearer = [100 * (other[r.seed].cost / r.cost - 1) for r in res.cell_runs(best) if r.seed in other]
    return {"policy": second.policy, "redundancy": second.redundancy,
            "uses_redundancy": res.redundant.get(second.policy, True),
            "ratio": second.ratio_mean, "slower_percent": mean_ci(diffs),
            "costlier_percent": mean_ci(dearer) if all(math.isfinite(d) for d in dearer) else None}


def _interval_choice(scan: IntervalScan, advice: dict[str, Any], sf: Any) -> dict[str, Any]:
    """The interval to set: the grid's (the policy's rule), unless the scan's fastest interval
    is faster beyond the seed noise (its paired interval, Bonferroni-corrected over the K
    intervals tried, clear of 0); the estimates then come from the scan's runs."""
    chosen = scan.chosen
    base = {r.seed: r for r in scan.runs(chosen)}
    fastest = scan.fastest()  # ties go to the interval nearest the rule's (on a log scale)
    k = len(scan.intervals())
    level = 1 - (1 - SCAN_LEVEL) / k
    diffs = [100 * (r.ratio / base[r.seed].ratio - 1) for r in scan.runs(fastest) if r.seed in base]
    gain = mean_ci(diffs, level) if fastest != chosen else (0.0, 0.0, 0.0)
    switch = fastest != chosen and gain[2] < 0
    seconds = fastest if switch else chosen
    names = scan.names(fastest)
    what = f"{fmt_duration(fastest)}" + (f" ({', '.join(n for n in names if n != 'chosen')})"
                                         if [n for n in names if n != "chosen"] else "")
    if fastest == chosen:
        verdict = f"the fastest of the {k} intervals simulated is the rule's own"
    elif switch:
        verdict = (f"{what} is faster than the rule's {fmt_duration(chosen)} by {-gain[0]:.2f} % "
                   f"[{-gain[2]:.2f}, {-gain[1]:.2f}] (paired over {len(diffs)} seeds, {100 * level:.2f} % CI: "
                   f"{100 * SCAN_LEVEL:g} % over the {k} intervals simulated): set instead")
    elif len(diffs) < 2:
        verdict = f"the fastest of the {k} intervals simulated, {what}, cannot be told apart with one seed"
    else:
        verdict = (f"none of the {k} intervals simulated is faster beyond the seed noise (the fastest, {what}: "
                   f"TTT {gain[0]:+.2f} % [{gain[1]:+.2f}, {gain[2]:+.2f}] against the rule's, paired, "
                   f"{100 * level:.2f} % CI)")
    step = step_seconds(sf, advice["source"], advice["redundancy"]) if advice.get("source") else math.nan
    out = {
        "seconds": seconds,
        "steps": interval_steps(seconds, step) if math.isfinite(step) else None,
        "step_seconds": step,
        "rule": advice["interval_rule"] if not switch else f"simulated scan: {verdict}",
        "scan": {"intervals": scan.intervals(), "fastest": fastest, "switched": switch,
                 "faster_percent": [-gain[0], -gain[2], -gain[1]], "level": level, "verdict": verdict,
                 "closed_forms": dict(scan.forms), "extended": scan.extended, "at_edge": scan.at_edge},
    }
    if scan.at_edge is not None:  # searched further and still at the edge: say so, do not pretend
        out["edge_warning"] = (f"the fastest interval simulated, {fmt_duration(fastest)}, is the {scan.at_edge} one "
                               f"even after {scan.extended} extension(s) of the scan: the optimum may lie "
                               f"{'beyond' if scan.at_edge == 'longest' else 'below'} it")
    if switch:
        out["estimates"] = _estimates(scan.runs(seconds), sf.scenario.t0)
    return out


def _sensitivity(grids: dict[float, Any], sf: Any) -> dict[float, dict[str, Any] | None]:
    """Per failure-rate factor: the best cell of that grid, its interval in seconds and steps."""
    sens: dict[float, dict[str, Any] | None] = {}
    for f, g in grids.items():
        if f == 1.0 or g.interrupted or not g.summaries:
            continue
        ranked = g.ranking()
        if not ranked:
            sens[f] = None
            continue
        top = ranked[0]
        every = g.cell_interval(top)[0]
        src = g.sources.get(top.policy)
        step = step_seconds(sf, src, top.redundancy) if src else math.nan
        sens[f] = {"policy": top.policy, "redundancy": top.redundancy,
                   "uses_redundancy": g.redundant.get(top.policy, True), "ratio": top.ratio_mean,
                   "checkpoint_interval": every,
                   "checkpoint_steps": interval_steps(every, step) if math.isfinite(step) else None,
                   "system_mtbf": sf.scenario.system_mtbf / f}
    return sens


# -- what each part prints --------------------------------------------------------------------
def _save_every(seconds: float, steps: int | None, step: float) -> str:
    if steps is None or not math.isfinite(step):
        return f"every {fmt_duration(seconds)} of training"
    return f"every {steps:,} steps ({fmt_duration(seconds)} of training at {step:.3g} s per step)"


def levers(base_runs: list[Any], advice: dict[str, Any], grids: list[tuple[str, Any, list[Any]]],
           objective: str = "time") -> list[dict[str, Any]]:
    """What each variant does to the advice as given (the recommended policy, r and interval,
    on the same seeds): its TTT and cost over the recommendation's, paired over seeds, best
    first by ``objective``; and which policy wins that variant."""
    by_seed = {r.seed: r for r in base_runs}
    out = []
    seen = set()
    for _, res, variants in grids:
        for v in variants:
            if (v.key, v.value) in seen:  # the spares sweep repeats the sensitivity's pool sizes
                continue
            seen.add((v.key, v.value))
            cell = next((c for c in res.summaries if c.scenario == v.scenario.name and c.policy == advice["policy"]
                         and c.redundancy == advice["redundancy"]), None)
            if cell is None:
                continue
            runs = [x for x in res.cell_runs(cell) if x.seed in by_seed]
            paired = [(x, by_seed[x.seed]) for x in runs if x.finished and by_seed[x.seed].finished]
            if not paired:
                continue
            time_ci = [100 * d for d in paired_ratio_ci([x.ratio for x, _ in paired], [b.ratio for _, b in paired])]
            priced = all(math.isfinite(x.cost) and x.cost > 0 and b.cost > 0 for x, b in paired)
            cost_ci = [100 * d for d in paired_ratio_ci([x.cost for x, _ in paired], [b.cost for _, b in paired])] \
                if priced else None
            w = winner(res, v, objective)
            out.append({"label": v.label, "key": v.key, "value": v.value, "ratio": cell.ratio_mean,
                        "time_percent": time_ci, "cost_percent": cost_ci, "seeds": len(paired),
                        "winner": None if w is None else w["policy"],
                        "winner_ratio": None if w is None else w["ratio"]})
    key = "cost_percent" if objective == "cost" else "time_percent"
    return sorted(out, key=lambda lv: (lv[key] or lv["time_percent"])[0])


#: the share of failures finding every spare in repair below which the pool is "enough"
SPARES_WAIT_SHARE = 0.05


def spares_check(sc: Any) -> dict[str, Any] | None:
    """Little's law on the spare pool: the nodes in repair at any time, on average, are the
    failure rate times the repair time; a pool below that keeps restarts waiting. With failure
    classes only the node failures (``recovery = "swap"``) take a spare: their rate (a domain
    class's event one per group of its domain)."""
    rp = sc.repair
    # with a law, escalation or repeated repairs: the mean of a node's whole repair (M/G/inf)
    if rp is None or rp.spares is None or not rp.mean_time > 0 or not math.isfinite(sc.system_mtbf):
        return None
    cl = sc.failure_classes
    # a domain class's event takes a spare for each group of its domain
    swap = 1.0 if cl is None else (cl.spares_per_failure(sc.n_groups) if cl.has_domains else 1.0 - cl.restart_share)
    if not swap > 0:
        return None
    every = sc.system_mtbf if cl is None else sc.system_mtbf / swap
    in_repair = rp.mean_time / every
    # M/G/inf: the nodes in repair are Poisson(in_repair) in steady state, and a failure (a
    # Poisson arrival sees the time average) waits when every spare is in repair; a pool just
    # above the mean still keeps many failures waiting, so "enough" asks that few do
    from scipy.stats import poisson

    wait = float(poisson.sf(rp.spares - 1, in_repair)) if rp.spares > 0 else 1.0
    return {"in_repair": in_repair, "pool": rp.spares, "wait_share": wait, "enough": wait < SPARES_WAIT_SHARE,
            "failure_every": every, "repair_time": rp.mean_time, "drawn": rp.drawn}


def _print_advice(a: dict[str, Any], sf: Any) -> None:
    r_txt = f" at r = {a['redundancy']}" if a["uses_redundancy"] else ""
    iv = a["interval"]
    print(f"recommendation: {a['policy']}{r_txt}")
    print(f"  set in the trainer: save a checkpoint {_save_every(iv['seconds'], iv['steps'], iv['step_seconds'])}")
    print(f"    why: {iv['rule']}")
    if not iv["scan"]["switched"]:
        print(f"    checked: {iv['scan']['verdict']}")
    if iv["scan"].get("extended"):
        print(f"    searched further: the fastest was at the edge of the intervals scanned, so the scan went on "
              f"{iv['scan']['extended']} time(s) (up to {fmt_duration(max(iv['scan']['intervals']))})")
    if iv.get("edge_warning"):
        print(f"    warning: {iv['edge_warning']}")
    n = a["seeds"]
    m, lo, hi = a["ttt_days"]
    ci = f"[{lo:.2f}, {hi:.2f}] (95 % CI over {n} seeds)" if n > 1 else "(one seed: no CI)"
    print(f"  expected time-to-train {m:.2f} d {ci}, TTT/T0 {a['ratio'][0]:.3f} {fmt_ci(a['ratio'])}; "
          f"failure-free {fmt_duration(sf.scenario.t0)}")
    print(f"  expected ETTR (T0 / time-to-train) {a['ettr'][0]:.3f} {fmt_ci(a['ettr'])}")
    print(f"  availability (time in kept steps / wall time; redundant stack layers count as kept) "
          f"{a['availability'][0]:.3f} {fmt_ci(a['availability'])}")
    if a.get("cost") is not None:
        g, c = a["gpu_hours"], a["cost"]
        paid = a.get("gpu_hour_price") or sf.scenario.pricing.gpu_hour
        spot = sf.scenario.pricing.spot_gpu_hour is not None and paid == sf.scenario.pricing.spot_gpu_hour \
            and paid != sf.scenario.pricing.gpu_hour
        print(f"  GPU-hours {g[0]:,.0f} {fmt_ci(g, '{:,.0f}')}, cost {c[0]:,.0f} {fmt_ci(c, '{:,.0f}')} "
              f"(at {paid:g} per GPU-hour{', spot: the fleet follows a capacity log' if spot else ''}, spares "
              "included)")
    tok = [(what, a.get(k)) for what, k in (("", "cost_per_mtoken"), ("on demand", "on_demand_cost_per_mtoken"),
                                            ("on spot nodes", "spot_cost_per_mtoken"))]
    if tok[0][1] is not None:
        pr = sf.scenario.pricing
        both = tok[2][1] is not None  # with a spot price: both prices, whichever the run pays
        shown = tok[1:] if both else tok[:1]
        print("  cost per 1M tokens " + "; ".join(
            f"{v[0]:.4g} {fmt_ci(v, '{:.4g}')}" + (f" {what}" if what else "") for what, v in shown if v is not None)
            + f" ({pr.tokens_per_step:,.0f} tokens per step, {sf.scenario.n_steps:,} steps"
            + (f"; spot at {pr.spot_gpu_hour:g} per GPU-hour" if both else "") + ")")
    ru = a["runner_up"]
    if ru is None:
        print("  runner-up: none (one policy compared, or no other finished on every seed)")
        return
    m, lo, hi = ru["slower_percent"]
    rr = f" r = {ru['redundancy']}" if ru["uses_redundancy"] else ""
    if math.isnan(lo):
        print(f"  runner-up: {ru['policy']}{rr}, TTT {m:+.1f} % (one seed: no CI)")
        return
    if a.get("objective") == "cost" and ru.get("costlier_percent") is not None:
        m, lo, hi = ru["costlier_percent"]
        what = "cost"
    else:
        what = "TTT"
    sure = "the gap is clear of 0" if lo > 0 else "the gap is within the seed noise: run more seeds"
    print(f"  runner-up: {ru['policy']}{rr}, {what} {m:+.1f} % [{lo:+.1f}, {hi:+.1f}] (paired over seeds; {sure})")


def _print_levers(a: dict[str, Any], objective: str) -> None:
    """Where the recommendation's time goes, what each lever buys, the one to change first,
    and the spare pool against the nodes in repair."""
    b = a.get("breakdown")
    if b:
        wall = b["wall"]
        parts = [(KEPT_STEPS.split(" (")[0], b[KEPT_STEPS])] + [(label, b[k]) for k, label in TIME_PARTS if b[k] > 0]
        print("  where the time goes: " + ", ".join(f"{label} {100 * v / wall:.1f} %" for label, v in parts)
              + f" of {fmt_duration(wall)}")
    lv = a.get("levers") or []
    if lv:
        print("  levers, on the recommendation as given (same seeds; TTT and cost change, paired 95 % CI):")
        for x in lv[:8]:
            t = x["time_percent"]
            c = x["cost_percent"]
            cost = f", cost {c[0]:+.1f} % [{c[1]:+.1f}, {c[2]:+.1f}]" if c is not None else ""
            also = "" if x["winner"] in (None, a["policy"]) else f"; {x['winner']} would then win"
            print(f"    {x['label']}: TTT {t[0]:+.1f} % [{t[1]:+.1f}, {t[2]:+.1f}]{cost}{also}")
        key = "cost_percent" if objective == "cost" else "time_percent"
        best = lv[0]
        gain = (best[key] or best["time_percent"])
        if gain[2] < 0:
            print(f"  change first: {best['label']} ({'cost' if key == 'cost_percent' else 'TTT'} {gain[0]:+.1f} %, "
                  "clear of the seed noise)")
        else:
            print("  change first: none of the changes tried helps beyond the seed noise")
    costs = a.get("class_costs") or []
    if costs:
        print("  failure classes by the time they cost (TTT without the class's failures, paired 95 % CI):")
        for x in costs:
            t = x["time_percent"]
            print(f"    {x['value']}: TTT {t[0]:+.1f} % [{t[1]:+.1f}, {t[2]:+.1f}] without it")
    sc = a.get("spares_check")
    if sc is not None:
        verdict = "enough" if sc["enough"] else "too few: restarts wait for repairs (raise repair.spares)"
        print(f"  spare pool: about {sc['in_repair']:.1f} nodes in repair at any time (Little's law: a failure every "
              f"{fmt_duration(sc['failure_every'])}, {fmt_duration(sc['repair_time'])} "
              f"{'on average' if sc.get('drawn') else 'each'}) against {sc['pool']} "
              f"spares; {100 * sc['wait_share']:.3g} % of failures find every spare in repair (M/G/inf): {verdict}")


def _print_sensitivity(sens: dict[float, Any], a: dict[str, Any], no_sensitivity: bool) -> None:
    for f, v in sens.items():
        tag = f"failure rate x{f:g} (system MTBF {fmt_duration(v['system_mtbf'] if v else math.nan)})"
        if v is None:
            print(f"  failure rate x{f:g}: no policy finishes on every seed")
            continue
        same = v["policy"] == a["policy"] and v["redundancy"] == a["redundancy"]
        rr = f" r = {v['redundancy']}" if v["uses_redundancy"] else ""
        verdict = "same choice" if same else "the choice changes"
        steps = f"{v['checkpoint_steps']:,} steps" if v["checkpoint_steps"] else fmt_duration(v["checkpoint_interval"])
        print(f"  {tag}: {v['policy']}{rr}, TTT/T0 {v['ratio']:.3f}, save every {steps} "
              f"({fmt_duration(v['checkpoint_interval'])}) — {verdict}")
    if not sens and not no_sensitivity:
        print("  sensitivity: not run")


def _print_variants(knobs: list[Any], spares: list[Any], memory: list[Any], a: dict[str, Any], objective: str
                    ) -> None:
    metric = "cost" if objective == "cost" else "TTT/T0"
    for v in knobs:
        if v["winner"] is None:
            print(f"  {v['label']}: no policy finishes on every seed")
            continue
        w = v["winner"]
        same = w["policy"] == a["policy"]
        val = f"{w['cost']:,.0f}" if objective == "cost" else f"{w['ratio']:.3f}"
        print(f"  {v['label']}: {w['policy']}, {metric} {val} — {'same choice' if same else 'the choice changes'}")
    for v in memory:
        w = v["winner"]
        if w is not None:
            print(f"  {v['label']}: {w['policy']}, TTT/T0 {w['ratio']:.3f}"
                  + (f", cost {w['cost']:,.0f}" if math.isfinite(w["cost"]) else ""))
    _print_sweep("how many hot spares (each policy at its best r; TTT/T0, cost):", "spares", spares)


def _print_sweep(title: str, column: str, sweep: list[dict[str, Any]]) -> None:
    """One fleet sweep's table: a row per value of the key, each policy's TTT/T0 and cost."""
    if sweep:
        print()
        print(title)
        pols = list(dict.fromkeys(row["policy"] for v in sweep for row in v["rows"]))
        w = max(6, len(column))
        print(f"  {column:>{w}}  " + "  ".join(f"{p[:22]:>22}" for p in pols))
        for v in sweep:
            by = {row["policy"]: row for row in v["rows"]}
            cells = []
            for p in pols:
                row = by.get(p)
                if row is None or not math.isfinite(row["ratio"]):
                    cells.append(f"{'unfinished':>22}")
                else:
                    c = f", {row['cost']:,.0f}" if math.isfinite(row["cost"]) else ""
                    cells.append(f"{row['ratio']:.3f}{c}".rjust(22))
            print(f"  {v['value']:>{w}}  " + "  ".join(cells))


def _stragglers(sf: Any, advice: dict[str, Any], args: Any) -> dict[str, Any] | None:
    """The recommended policy at its r and interval tolerating the file's measured stragglers
    and with each remedy of ``stragglers.remedies``, on the file's seeds (the same failures):
    time and cost of each, and which worker to evict (None without ``[stragglers]``)."""
    if not sf.remedies and "stragglers" not in sf.data:
        return None
    pol = file_policy(sf, advice["source"], advice["redundancy"], interval=advice.get("checkpoint_interval"))
    out = weigh_remedies(sf.scenario, pol, sf.seeds, sf.remedies,
                         check=lambda st: check_budget(st, bool(getattr(args, "force", False)),
                                                       f"{sf.path} straggler remedies"))
    out["model"] = describe_remedies(sf.scenario, ())["model"]
    base = out["remedies"][0]
    for row in out["remedies"]:
        if row["remedy"] == "evict":  # which worker, and what evicting it buys
            out["evict"] = {"worker": out["worker"], "buys_seconds": base["time_to_train"] - row["time_to_train"],
                            "buys_time": row["saves_time"], "buys_cost": base["cost"] - row["cost"],
                            "buys_cost_share": row["saves_cost"], "pays": row["saves_time"] > 0}
    return out


def _print_stragglers(st: dict[str, Any], objective: str) -> None:
    """What tolerating the stragglers and each remedy give, and which worker to evict."""
    print()
    print(f"stragglers: S = {st['slowdown']:.4f} ({st['source']}); {st['policy']} r = {st['redundancy']} on "
          f"{len(st['seeds'])} seed(s), the same failures for every option")
    print(f"  {'option':<10} {'S':>7} {'pause':>9} {'TTT/T0':>8} {'time-to-train':>14} {'cost':>12} "
          f"{'saves time':>11} {'saves cost':>11}")
    for row in st["remedies"]:
        cost = f"{row['cost']:,.0f}" if math.isfinite(row["cost"]) else "-"
        sc = f"{100 * row['saves_cost']:+.1f} %" if math.isfinite(row["saves_cost"]) else "-"
        fin = "" if row["finished"] == row["seeds"] else f" ({row['finished']}/{row['seeds']} finished)"
        pause = fmt_duration(row["pause"]) if row["pause"] > 0 else "0 s"
        print(f"  {row['remedy']:<10} {row['slowdown']:>7.4f} {pause:>9} "
              f"{row['ratio']:>8.3f} {fmt_duration(row['time_to_train']):>14} {cost:>12} "
              f"{100 * row['saves_time']:>+9.1f} % {sc:>11}{fin}")
    base = st["remedies"][0]
    for row in st["remedies"][1:]:
        dt = base["time_to_train"] - row["time_to_train"]
        dc = base["cost"] - row["cost"]
        cost = f" and {dc:,.0f} of the cost ({100 * row['saves_cost']:.1f} %)" if math.isfinite(dc) else ""
        if row["remedy"] == "evict":
            who = "the worst worker" if st["worker"] is None else f"rank {st['worker']}"
            if row["saves_time"] > 0:
                print(f"  evict {who} to a hot spare: buys {fmt_duration(dt)} of the time-to-train "
                      f"({100 * row['saves_time']:.1f} %){cost}")
            else:
                print(f"  evicting {who} does not pay: {fmt_duration(-dt)} longer ({row['note']})")
        elif row["remedy"] == "pacing" and row["slowdown"] >= base["slowdown"]:
            print(f"  {row['note']}")
    key = "saves_cost" if objective == "cost" else "saves_time"
    best = [r for r in st["remedies"][1:] if math.isfinite(r[key]) and r[key] > 0]
    if best:
        b = max(best, key=lambda r: r[key])
        print(f"  best against these stragglers: {b['remedy']} ({b['note']})")
    else:
        print("  best against these stragglers: tolerate them (no remedy saves time here)")


def _fleet_sweeps(sf: Any, args: Any) -> list[tuple[str, list[Any]]]:
    """The fleet's sweeps to run, ``(grid, variants)``: with ``[repair]`` the spare pool's; the
    warm standbys' with a ``[fleet]`` table or ``--standbys``; retirement's where it sorts nodes
    (:func:`~spare_core.commands.variants.retire_meaningful`) or with ``--retire-after``. Each is
    refused here beyond the work budget (each policy's best cell on the file's seeds per value),
    its counts before its scenarios are built: before any run."""
    sc = sf.scenario
    asked = {k: getattr(args, k, None) for k in ("spares", "standbys", "retire_after")}
    if asked["spares"] and sc.repair is None:
        raise UsageError(f"{sf.path}: --spares needs a [repair] table (how failed nodes come back)")
    if asked["standbys"] and sc.repair is None:
        raise UsageError(f"{sf.path}: --standbys needs a [repair] table (the warm standbys refill from the spare pool)")
    if asked["retire_after"] and not retire_meaningful(sc, possible=True):
        raise UsageError(f"{sf.path}: --retire-after needs failures.model = 'node' without [[failures.domains]] (the "
                         "node log counts each node's failures), no failure class of recovery = \"domain\", no "
                         "fleet.place moving nodes, and a [repair] table (a retired node leaves the pool)")
    if sc.repair is None:
        return []
    plan = [(SPARES_GRID, spare_counts(sc, asked["spares"]), spares_variants, "--spares")]
    if asked["standbys"] or isinstance(sf.data.get("fleet"), dict):
        plan.append((STANDBYS_GRID, standby_counts(sc, asked["standbys"]), standbys_variants, "--standbys"))
    if asked["retire_after"] or retire_meaningful(sc):
        plan.append((RETIRE_GRID, retire_counts(sc, asked["retire_after"]), retire_variants, "--retire-after"))
    force = bool(getattr(args, "force", False))
    per = len(sf.policies) * len(sf.seeds)  # each policy's best cell on every seed, per value
    out = []
    for grid, counts, make, flag in plan:
        what = f"{sf.path} {grid} ({flag})"
        check_counts(len(counts), len(counts) * len(sf.seeds), len(counts) * per, force, what)
        variants = make(sc, counts)
        check_runs([v.scenario for v in variants], [per] * len(variants), force, what)
        out.append((grid, variants))
    return out


# -- the command --------------------------------------------------------------------------------
def run(args: Any) -> int:
    """Run the grid (the sensitivity grids, the interval scan), print the advice, write every run."""
    sf = load_job(args)
    objective = getattr(args, "objective", "time")
    if objective == "cost" and sf.scenario.pricing is None:
        raise UsageError(f"{sf.path}: --objective cost needs the price of a GPU-hour (costs.gpu_hour)")
    studies = job_studies(sf, () if args.no_sensitivity else tuple(RATE_FACTORS))
    check_job_budget(sf, args, studies, scan=True)
    fleet = _fleet_sweeps(sf, args)  # refused here, before any run, when beyond the budget
    sweeps: dict[str, list] = {}
    grids = {1.0: run_job(sf, studies[1.0], desc="spare advise")}
    if not args.no_sensitivity and not grids[1.0].interrupted:
        for f in RATE_FACTORS:
            grids[f] = run_job(sf, studies[f], desc=f"failure rate x{f:g}")
            if grids[f].interrupted:
                break
    main = grids[1.0]
    advice = _advice(main, sf, objective) if main.summaries and not main.interrupted else None
    scan = None
    if advice is not None and advice["source"] is not None and not any(g.interrupted for g in grids.values()):
        scan = interval_scan(sf, advice["source"], advice["redundancy"])
        if not scan.result.interrupted:
            advice["interval"] = _interval_choice(scan, advice, sf)
            advice.update(advice["interval"].pop("estimates", {}))
            advice["checkpoint_interval"] = advice["interval"]["seconds"]
    interrupted = any(g.interrupted for g in grids.values()) or (scan is not None and scan.result.interrupted)
    sens = _sensitivity(grids, sf)
    # each policy's best cell again on variants of the scenario (costs halved and doubled, the
    # spare pool, the memory tier off): a few runs per variant
    knobs, spares, memory, var_parts = [], [], [], []
    lever_grids: list = []  # (grid, result set, variants) the levers are read from
    if advice is not None and not interrupted:
        cells = [(main.sources[c.policy], c.redundancy) for c in main.ranking(objective=objective)
                 if main.sources.get(c.policy)]
        sens_v = ([] if args.no_sensitivity else knob_variants(sf.scenario, sf.checkpoint_io)) \
            + memory_variant(sf.scenario) + class_variants(sf.scenario)
        # the recommended policy at the recommended interval: what each change does to the advice as given
        fixed = {(advice["source"], advice["redundancy"]): advice["checkpoint_interval"]} if "interval" in advice else {}
        if cells and sens_v:
            res_k = run_variants(sf, sens_v, cells, args, KNOB_GRID, intervals=fixed)
            var_parts.append((KNOB_GRID, res_k))
            lever_grids.append((KNOB_GRID, res_k, sens_v))
            interrupted = interrupted or res_k.interrupted
            for v in sens_v:
                entry = {"label": v.label, "key": v.key, "value": v.value, "winner": winner(res_k, v, objective)}
                (memory if v.key == "checkpoint" else knobs).append(entry)
        for grid, sw_v in fleet:  # the spares, standbys and retirement sweeps, each on the same seeds
            if not cells or interrupted:
                break
            res_s = run_variants(sf, sw_v, cells, args, grid, intervals=fixed)
            var_parts.append((grid, res_s))
            lever_grids.append((grid, res_s, sw_v))
            interrupted = interrupted or res_s.interrupted
            sweeps[grid] = [{"value": v.value, "rows": per_policy(res_s, v), "winner": winner(res_s, v, objective)}
                            for v in sw_v]
        spares = sweeps.get(SPARES_GRID, [])
        if scan is not None and "interval" in advice:
            base_runs = scan.runs(advice["checkpoint_interval"])
            advice["breakdown"] = time_breakdown(base_runs)
            advice["levers"] = levers(base_runs, advice, lever_grids, objective)
            # what each failure class costs: the recommendation's TTT without it, most first
            advice["class_costs"] = sorted((lv for lv in advice["levers"] if lv["key"] == "failures.classes"),
                                           key=lambda lv: lv["time_percent"][0])
        advice["spares_check"] = spares_check(sf.scenario)

    stragglers = None
    if advice is not None and advice.get("source") is not None and not interrupted:
        try:  # in this process, like the map's cells: Ctrl-C keeps what the other grids finished
            stragglers = _stragglers(sf, advice, args)
        except KeyboardInterrupt:
            interrupted = True

    elapsed = sum(g.elapsed for g in grids.values()) + (scan.result.elapsed if scan else 0.0) \
        + sum(g.elapsed for _, g in var_parts)
    prov = provenance("spare advise", getattr(args, "argv", None), scenario=sf.to_dict(), seeds=sf.seeds,
                      timings={"elapsed_seconds": elapsed, "processes": main.workers, "tasks": main.task_seconds},
                      interrupted=interrupted)
    parts = [(MAIN_GRID, main)] + [(_rate_grid(f), g) for f, g in grids.items() if f != 1.0]
    if scan is not None:
        parts.append((SCAN_GRID, scan.result))
    parts += var_parts
    doc = {
        "command": "spare advise",
        "provenance": prov,
        "advice": advice,
        "sensitivity": {**{f"rate_x{f:g}": v for f, v in sens.items()}, **{v["label"]: v["winner"] for v in knobs}},
        "memory_tier": memory,
        "spares": spares,
        "standbys": sweeps.get(STANDBYS_GRID, []),
        "retirement": sweeps.get(RETIRE_GRID, []),
        "stragglers": stragglers,
        "cells": [{**s.to_dict(), "grid": name} for name, g in parts for s in g.summaries],
        "runs": [run_record(r, name) for name, g in parts for r in g.runs],
    }
    groups = {sf.scenario.name: sf.scenario.n_groups}
    table = [row for name, g in parts for row in run_rows(g.runs, groups, name)]
    if interrupted:
        written = write_outputs(args, doc, table, prov)
        where = f"; wrote {', '.join(written)}" if written else ""
        print(f"spare advise: interrupted, {len(table)} runs finished{where}", file=sys.stderr)
        return EXIT_INTERRUPTED

    for line in describe_job(sf):
        print(line)
    print()
    if advice is None:
        print(f"no policy finishes on every seed within {sf.scenario.max_wall_factor:g} T0: nothing to recommend; "
              "raise compare.horizon, try larger r or another policy")
    elif "interval" not in advice:  # a policy object without a registry name: no scan (never from a file)
        print(f"recommendation: {advice['policy']}, checkpoint every {fmt_duration(advice['checkpoint_interval'])}")
    else:
        _print_advice(advice, sf)
        _print_levers(advice, objective)
        _print_sensitivity(sens, advice, args.no_sensitivity)
        _print_variants(knobs, spares, memory, advice, objective)
        _print_sweep("how many warm standbys (fleet.standbys; each policy at its best r; TTT/T0, cost):", "standbys",
                     sweeps.get(STANDBYS_GRID, []))
        _print_sweep("when to retire a node (fleet.retire_after, 0 = never; each policy at its best r; TTT/T0, cost):",
                     "retire", sweeps.get(RETIRE_GRID, []))
        if stragglers is not None:
            _print_stragglers(stragglers, objective)
    print()
    grids_run = ", ".join(f"{name} {len(g.runs)}" for name, g in parts)
    if stragglers is not None:
        grids_run += f"; and {stragglers['n_runs']} runs weighing the straggler remedies"
    print(f"{len(table)} runs ({grids_run}) in {elapsed:.1f} s on {main.workers} process(es)")
    for path in write_outputs(args, doc, table, prov):
        print(f"wrote {path}")
    if args.plot:
        chosen = (advice["checkpoint_interval"], advice["interval"]["rule"]) if advice and "interval" in advice else None
        write_plots(args.plot, sf, main, best_rows(main), scan=scan, chosen=chosen)
        for kind, sweep in (("spares", spares), ("standbys", sweeps.get(STANDBYS_GRID, [])),
                            ("retire", sweeps.get(RETIRE_GRID, []))):
            if sweep:
                print(f"wrote {plot_sweep(args.plot, sf, sweep, kind)}")
    return 0
