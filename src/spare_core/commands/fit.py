"""``spare fit FILE.toml``: every law fitted to a scenario file's failure log, each re-simulated
over the log's own window next to the log's counts (docs/cli.md, "spare fit").

The log is the file's ``[failures.trace]`` (read as ``spare run`` reads it: the same keys, the
same reader). For each law of :data:`LAWS` (per-node Weibull and log-normal fitted with every
node new at the log's start and with stationary ages; exponential; gamma frailty; exponential
and frailty with a rate per period) the command gives the parameters and AIC, then
:func:`spare_core.events.fit_check.check_fit`: the failures simulated over the log's window on
its nodes (median and central 95 % of ``--replicates`` runs), whether the log's count falls
inside, the per-period simulated medians and p-value, and the distinct failing nodes.
``--merge`` (one or more windows) first merges each node's repeated reports: one table per
window, as docs/results.md's decomposition.

:func:`fit_table` is the library function behind the command (``bench/fleet_fit_table.py``
prints docs/results.md's tables with it); :class:`FitRow` declares the columns every output
(text, ``--json``, ``--csv``, ``--parquet``) carries.
"""
from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import UsageError, bounded, distinct, seed_int
from .._files import TomlFileError, Reader, parse_duration, read_toml
from .._results import column, columns, fields_dict
from .._writer import write_json as _write_json
from .budget import check_fit_command
from .outputs import check_output_path, check_parquet, provenance, shown_path, write_csv, write_parquet

HELP = "fit every failure law to a scenario file's log and re-simulate each over the log's window"

__all__ = ["LAWS", "FitRow", "FitTable", "fit_table", "law_fits", "read_log", "table_lines", "merge_label", "FIT_COLUMNS",
           "MAX_REPLICATES"]

#: the laws of the table: key -> (description, law, fitted ages, simulated ages, a rate per period)
LAWS: dict[str, tuple[str, str, str, str, bool]] = {
    "weibull-new": ("weibull, nodes new at the log's start; simulated with stationary ages",
                    "weibull", "new", "stationary", False),
    "weibull-new-new": ("weibull, nodes new at the log's start; simulated with new nodes",
                        "weibull", "new", "new", False),
    "weibull": ("weibull, stationary ages", "weibull", "stationary", "stationary", False),
    "lognormal-new": ("lognormal, nodes new at the log's start; simulated with stationary ages",
                      "lognormal", "new", "stationary", False),
    "lognormal-new-new": ("lognormal, nodes new at the log's start; simulated with new nodes",
                          "lognormal", "new", "new", False),
    "lognormal": ("lognormal, stationary ages", "lognormal", "stationary", "stationary", False),
    "exponential": ("exponential", "exponential", "stationary", "stationary", False),
    "frailty": ("frailty (gamma rate multipliers per slot)", "frailty", "stationary", "stationary", False),
    "exponential-periods": ("exponential, a rate per period", "exponential", "stationary", "stationary", True),
    "frailty-periods": ("frailty, a rate per period", "frailty", "stationary", "stationary", True),
}

#: the most ``--replicates``: each replicate keeps a seed stream and a row of per-period counts
#: before the first is simulated (10**6 SeedSequences take about 1 GB), so the bound is a
#: memory bound, checked even with --force; the work budget bounds the time below it
MAX_REPLICATES = 100_000
#: the most periods of a per-period check (a calendar day over 270 years; a check keeps a row
#: of counts per replicate and period)
MAX_PERIODS = 100_000
#: the fewest replicates a check takes (check_fit's own floor: a 95 % interval needs them)
MIN_REPLICATES = 20

_DAY = 86400.0


@dataclass(frozen=True)
class FitRow:
    """One law fitted to the log (after one merge window) and its re-simulated check."""

    merge: str = column("repeated reports merged within this duration first ('none': every row a failure)", cell="key")
    law: str = column("the law's key (spare fit --laws)", cell="key")
    description: str = column("the law and the ages it was fitted and simulated with, in words", cell="same")
    family: str = column("the fitted family: weibull, lognormal, exponential or frailty", cell="same")
    fitted_ages: str = column("node ages the fit assumed: 'new' (every node new at the log's start) or 'stationary'",
                              cell="same")
    simulated_ages: str = column("node ages of the re-simulation: 'new' or 'stationary'", cell="same")
    per_period: bool = column("a rate per period (fit_rate = 'periods')", cell="same")
    mean: float = column("the fitted node mean lifetime (over the log, for a rate per period)", unit="s")
    shape: float = column("Weibull shape k (NaN for another law)")
    sigma: float = column("log-normal sigma (NaN for another law)")
    frailty: float = column("gamma frailty variance v (NaN for another law)")
    aic: float = column("Akaike information criterion of the fit")
    replicates: int = column("windows re-simulated", cell="same")
    seed: int = column("seed of the re-simulation (check_fit's)", kind="seed", cell="seed")
    log_failures: int = column("failures in the log (after the merge)", cell="same")
    merged_reports: int = column("rows merged into a previous failure of the same node", cell="same")
    simulated_median: float = column("median of the failures simulated over the log's window")
    simulated_low: int = column("low end of the central 95 % of the simulated failures")
    simulated_high: int = column("high end of the central 95 % of the simulated failures")
    reproduced: bool = column("the log's count lies in the central 95 % of the simulated counts", cell="same")
    count_ratio: float = column("log's count / simulated median (inf if the median is 0)")
    count_p: float = column("two-sided Monte-Carlo p-value of the log's count")
    periods: str = column("the periods of the per-period comparison, '/'-separated labels", cell="same")
    log_period_counts: str = column("the log's failures per period, '/'-separated", cell="same")
    period_medians: str = column("median simulated failures per period, '/'-separated")
    periods_p: float = column("Monte-Carlo p-value of the per-period CRPS (small: the course is not reproduced)")
    log_failing_nodes: int = column("distinct nodes of the log with a failure", cell="same")
    failing_nodes_median: float = column("median distinct failing nodes simulated")
    failing_nodes_low: int = column("low end of the central 95 % of the simulated failing nodes")
    failing_nodes_high: int = column("high end of the central 95 % of the simulated failing nodes")

    def to_dict(self) -> dict[str, Any]:
        """Every declared column as JSON values."""
        return fields_dict(self)


#: the columns of every output of ``spare fit`` (the one declaration: :class:`FitRow`)
FIT_COLUMNS = tuple(c.name for c in columns(FitRow))


@dataclass
class FitTable:
    """What :func:`fit_table` returns: one row per merge window and law, and the checks.

    Attributes
    ----------
    rows : list of FitRow
        In the order of the merge windows, then of the laws asked.
    fits, checks : list
        The :class:`~spare_core.events.fit.LifetimeFit` and
        :class:`~spare_core.events.fit_check.FitCheck` of each row.
    seconds : list of float
        Wall seconds of each row's check (not part of the rows: they differ run to run).
    period : str
        What a period is, in words ("year", ..., or "period").
    """

    rows: list[FitRow] = field(default_factory=list)
    fits: list[Any] = field(default_factory=list)
    checks: list[Any] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    period: str = "period"


def merge_label(seconds: float | None) -> str:
    """A merge window as the rows name it: ``"none"``, else in the largest unit that divides it
    (``3600`` -> ``"1 h"``, ``604800`` -> ``"7 d"``, ``90`` -> ``"1.5 min"``)."""
    if seconds is None:
        return "none"
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size and (seconds / size * 2).is_integer():
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def _nan(params: dict[str, float], key: str) -> float:
    return float(params[key]) if key in params else math.nan


def law_fits(trace: Any, laws: Sequence[str], periods: Any = "auto") -> list[tuple[str, Any]]:
    """``(key, fit)`` for each law of ``laws`` (keys of :data:`LAWS`) fitted to ``trace``; a fit
    two keys share (the same family and fitted ages) is made once.

    Parameters
    ----------
    trace : Trace
    laws : sequence of str
    periods : str, float or Periods, default "auto"
        The periods of the laws with a rate per period
        (:func:`~spare_core.events.rates.calendar_periods`).

    Raises
    ------
    ValueError
        A law cannot be fitted to the log (no failure, a window of length 0, ...).
    """
    from ..events.fit import fit, fit_node_rates

    made: dict[tuple[str, str, bool], Any] = {}
    out = []
    for key in laws:
        _, family, ages, _, per_period = LAWS[key]
        k = (family, ages, per_period)
        if k not in made:
            if family == "frailty" or per_period:
                made[k] = fit_node_rates(trace, frailty=family == "frailty", periods=periods if per_period else None)
            else:
                made[k] = fit(trace, family, origin="start" if ages == "new" else "stationary")
        out.append((key, made[k]))
    return out


def fit_table(trace: Any, laws: Sequence[str] = tuple(LAWS), *, replicates: int = 200, seed: int = 0,
              periods: Any = "auto", merges: Sequence[float | None] = (None,)) -> FitTable:
    """Every law of ``laws`` fitted to ``trace`` and re-simulated over its window.

    Parameters
    ----------
    trace : Trace
        The log (its ``n_units`` nodes over ``[0, end]``).
    laws : sequence of str, default every key of :data:`LAWS`
    replicates : int, default 200
        Windows each check re-simulates (:func:`~spare_core.events.fit_check.check_fit`).
    seed : int, default 0
        Seed of every check (the same for every law: common random numbers).
    periods : str, float or Periods, default "auto"
        The periods of the per-period comparison and of the laws with a rate per period.
    merges : sequence of float or None, default (None,)
        Merge windows in seconds (None: every row a failure): the table is made once per
        window, on the log with each node's reports within it merged
        (:func:`~spare_core.events.fit.merge_repeats`).

    Returns
    -------
    FitTable

    Raises
    ------
    ValueError
        An unknown law, or a law that cannot be fitted or checked on this log.
    """
    from ..events.fit import merge_repeats
    from ..events.fit_check import check_fit
    from ..events.rates import calendar_periods

    unknown = [k for k in laws if k not in LAWS]
    if unknown:
        raise ValueError(f"unknown law {unknown[0]!r} (one of {list(LAWS)})")
    # the periods named as the user named them ("a rate per year"); "auto" and durations: "period"
    word = periods if isinstance(periods, str) and periods in ("year", "quarter", "month", "week", "day") else "period"
    out = FitTable(period=word)
    for w in merges:
        x, dropped = (trace, 0) if w is None else merge_repeats(trace, w)
        per = calendar_periods(x.end, periods, start=x.start)
        for key, f in law_fits(x, laws, per):
            description, family, ages, initial, per_period = LAWS[key]
            description = description.replace("per period", f"per {word}")
            t0 = time.perf_counter()
            c = check_fit(f, x, initial=initial, periods=per, replicates=replicates, seed=seed)
            lo, hi = c.interval
            a, b = c.nodes_interval
            out.rows.append(FitRow(
                merge=merge_label(w), law=key, description=description, family=family,
                fitted_ages=ages, simulated_ages=initial, per_period=per_period, mean=float(f.mean),
                shape=_nan(f.params, "shape"), sigma=_nan(f.params, "sigma"), frailty=_nan(f.params, "frailty"),
                aic=float(f.aic), replicates=c.replicates, seed=int(seed), log_failures=c.count,
                merged_reports=int(dropped), simulated_median=c.median, simulated_low=int(lo), simulated_high=int(hi),
                reproduced=bool(c.ok), count_ratio=float(c.ratio), count_p=float(c.count_p),
                periods="/".join(c.periods.labels),
                log_period_counts="/".join(str(int(v)) for v in c.period_counts.tolist()),
                period_medians="/".join(f"{v:g}" for v in np.median(c.period_simulated, axis=0).tolist()),
                periods_p=float(c.periods_p), log_failing_nodes=int(c.failing_nodes),
                failing_nodes_median=float(np.median(c.simulated_failing_nodes)), failing_nodes_low=int(a),
                failing_nodes_high=int(b)))
            out.fits.append(f)
            out.checks.append(c)
            out.seconds.append(time.perf_counter() - t0)
    return out


# -- the command ---------------------------------------------------------------------------------

def _replicates(text: str) -> int:
    return bounded(int, MIN_REPLICATES, "an integer", MAX_REPLICATES)(text)


def _merge(text: str) -> float | None:
    """A ``--merge`` value: ``none`` or a duration (``1h``, ``"1 day"``, seconds)."""
    if text.strip().lower() == "none":
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = parse_duration(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"must be 'none' or a duration (1h, '30 min', seconds), got {text!r}"
                                             f" ({exc})") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be 'none' or a duration > 0, got {text!r}")
    return seconds


def add_arguments(parser: Any) -> None:
    """Options of ``spare fit``."""
    parser.add_argument("file", metavar="FILE.toml",
                        help="scenario file with a failure log, [failures.trace] (docs/cli.md)")
    parser.add_argument("--laws", nargs="+", metavar="LAW", choices=tuple(LAWS), default=None,
                        help=f"laws to fit, of {', '.join(LAWS)} (default: all)")
    parser.add_argument("--replicates", type=_replicates, default=200,
                        help=f"windows each law's check re-simulates, {MIN_REPLICATES}..{MAX_REPLICATES} (default 200)")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the re-simulations (default 0)")
    parser.add_argument("--merge", nargs="+", metavar="DURATION", type=_merge, default=None,
                        help="merge each node's repeated reports within DURATION first ('none': every row; several "
                             "values: one table each) (default: the file's failures.fit_merge, else none)")
    parser.add_argument("--periods", default=None, metavar="PERIOD",
                        help="periods of the per-period check and of the laws with a rate per period: year, quarter, "
                             "month, week, day, auto or a duration (default: the file's failures.fit_periods, else "
                             "auto)")
    parser.add_argument("--force", action="store_true",
                        help="run even when the expected work is beyond the budget (docs/cli.md, Budget)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write every row with the log's summary and the provenance as JSON")
    parser.add_argument("--csv", metavar="FILE", default=None,
                        help="write one row per merge window and law as CSV (provenance in '# ' lines on top)")
    parser.add_argument("--parquet", metavar="FILE", default=None,
                        help="write the same rows as Parquet (provenance in the schema metadata; needs pyarrow)")


def read_log(path: str) -> tuple[Any, dict[str, Any], dict[str, Any], Reader]:
    """The failure log of scenario file ``path`` (its ``[failures.trace]``, read as ``spare run``
    reads it), how it was read, and the file's ``[failures]`` table; every fault a
    :class:`UsageError` naming the file and the key."""
    from ..events.files import trace_from_file
    from ..scenario_file import ScenarioFileError

    try:
        data = read_toml(path, "scenario file", ScenarioFileError)
        rd = Reader(path, ScenarioFileError)
        fl = data.get("failures")
        if not isinstance(fl, dict) or "trace" not in fl:
            raise rd.error("spare fit needs a failure log: a [failures.trace] table (or failures.trace = PATH) "
                           "naming it (docs/cli.md, 'A failure log: replayed or fitted')")
        trace, read = trace_from_file(rd, fl["trace"], Path(path).resolve().parent)
    except TomlFileError as exc:
        raise UsageError(str(exc)) from None
    if trace.numbering == "appearance" and "n_units" not in read:
        # as law = "fit" refuses it: the hosts that never failed are the fit's exposure too
        raise UsageError(f"{path}: a fit on a log of host names needs the size of the fleet: the log names only the "
                         f"{trace.n_units:,} hosts that failed; give failures.trace.n_units (every node, those that "
                         "never failed too) or failures.trace.unit_map (a hostfile of them)")
    if trace.n_events == 0 or not trace.end > 0:
        raise UsageError(f"{path}: failures.trace: the log has {trace.n_events} failures over a window of "
                         f"{trace.end:g} s: nothing to fit (a fit needs failures and a window of length > 0)")
    return trace, read, fl, rd


def _options(args: Any, fl: dict[str, Any], rd: Reader) -> tuple[list[float | None], Any]:
    """The merge windows and the periods: the flags, else the file's ``fit_merge`` and ``fit_periods``."""
    from ..events.rates import PERIODS

    try:
        if args.merge is not None:
            merges = distinct(list(args.merge), "--merge")
        elif "fit_merge" in fl:
            merges = [rd.duration("failures.fit_merge", fl["fit_merge"])]
        else:
            merges = [None]
        spec = args.periods if args.periods is not None else fl.get("fit_periods", "auto")
        where = "--periods" if args.periods is not None else "failures.fit_periods"
        if isinstance(spec, str) and spec in PERIODS:
            periods: Any = spec
        elif args.periods is not None:
            try:
                periods = float(spec)
            except ValueError:
                try:
                    periods = parse_duration(spec)
                except ValueError:
                    raise UsageError(f"--periods must be one of {list(PERIODS)} or a duration, got {spec!r}") from None
            if not (math.isfinite(periods) and periods > 0):
                raise UsageError(f"--periods must be a duration > 0, got {spec!r}")
        else:
            periods = rd.duration(where, spec)
    except TomlFileError as exc:
        raise UsageError(str(exc)) from None
    return merges, periods


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if math.isfinite(v) else "inf"


def _params_words(r: FitRow) -> str:
    parts = [f"mean {r.mean / _DAY:.3g} d"]
    for name, short in (("shape", "k"), ("sigma", "sigma"), ("frailty", "v")):
        v = getattr(r, name)
        if math.isfinite(v):
            parts.append(f"{short} {v:.3g}")
    return ", ".join(parts)


def _p(p: float, reps: int) -> str:
    """A Monte-Carlo p-value; at its floor 1 / (runs + 1) it says so."""
    return f"<= {p:.2g}" if p <= 1.0 / (reps + 1) + 1e-12 else f"{p:.2g}"


def table_lines(table: FitTable) -> list[str]:
    """The table as Markdown lines: per merge window, the log's row then one row per law
    (what ``spare fit`` prints, and docs/results.md's tables)."""
    out: list[str] = []
    merge = None
    for r, s in zip(table.rows, table.seconds):
        if r.merge != merge:
            merge = r.merge
            if out:
                out.append("")
            head = r.periods
            if r.merge != "none":
                out.append(f"repeated reports merged within {r.merge}: {r.merged_reports:,} rows merged")
            out.append(f"| law | fitted | AIC | failures simulated: median (95 %) | count | per {table.period} "
                       f"({head}) | per-{table.period} p | failing nodes (95 %) | s |")
            out.append("|---|---|---|---|---|---|---|---|---|")
            counts = "/".join(f"{int(v):,}" for v in r.log_period_counts.split("/"))
            out.append(f"| **the log** | | | **{r.log_failures:,}** | | **{counts}** | | **{r.log_failing_nodes:,}** | |")
        meds = "/".join(_fmt(float(v)) for v in r.period_medians.split("/"))
        verdict = "reproduced" if r.reproduced else f"**no** ({r.count_ratio:.3g}x)"
        out.append(f"| {r.description} | {_params_words(r)} | {r.aic:,.0f} | {r.simulated_median:,.0f} "
                   f"({r.simulated_low:,}-{r.simulated_high:,}) | {verdict} | {meds} | {_p(r.periods_p, r.replicates)} | "
                   f"{r.failing_nodes_median:,.0f} ({r.failing_nodes_low:,}-{r.failing_nodes_high:,}) | {s:.1f} |")
    return out


#: why a value of a row is null in the JSON output
_NULL_REASONS = {
    "shape": {"nan": "not a parameter of this law (a Weibull's)"},
    "sigma": {"nan": "not a parameter of this law (a log-normal's)"},
    "frailty": {"nan": "not a parameter of this law (the frailty law's)"},
    "count_ratio": {"inf": "the simulated median is 0"},
}


def _plain(v: Any) -> Any:
    """A table cell: NaN and inf are empty cells (a law without that parameter, a median of 0)."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def run(args: Any) -> int:
    """Fit, check and print; write the outputs asked for. 0 on success."""
    t_start = time.perf_counter()
    for flag in ("json", "csv", "parquet"):
        check_output_path(getattr(args, flag), f"--{flag}")
    check_parquet(args.parquet)
    trace, read, fl, rd = read_log(args.file)
    for flag in ("json", "csv", "parquet"):
        # again, now that the log (and a hostfile) are known inputs: an output naming one is refused
        # before the fit, not when it is written
        check_output_path(getattr(args, flag), f"--{flag}")
    merges, periods = _options(args, fl, rd)
    laws = distinct(list(args.laws), "--laws") if args.laws else list(LAWS)
    where = "--periods" if args.periods else "failures.fit_periods"
    if isinstance(periods, float) and trace.end / periods > MAX_PERIODS:
        # before the periods' edges are built: a 1-s period over years is 10**8 of them
        raise UsageError(f"{args.file}: {where}: {periods:g} s cuts the log's {trace.end:g} s into more than "
                         f"{MAX_PERIODS:,} periods; take a longer period")
    try:
        from ..events.rates import calendar_periods
        n_periods = len(calendar_periods(trace.end, periods, start=trace.start))
    except ValueError as exc:
        raise UsageError(f"{args.file}: {where}: cannot cut the log's window ({exc})") from None
    work = check_fit_command(trace, len(laws) * len(merges), args.replicates, bool(args.force), args.file,
                             periods=n_periods)
    try:
        table = fit_table(trace, laws, replicates=args.replicates, seed=args.seed, periods=periods, merges=merges)
    except ValueError as exc:
        raise UsageError(f"{args.file}: the log cannot be fitted ({exc})") from None
    years = trace.end / (365.25 * _DAY)
    span = f"{years:.3g} years" if years >= 1 else f"{trace.end / _DAY:.3g} days"
    print(f"{args.file}: {trace.n_events:,} failures of {np.unique(trace.units).size:,} nodes (of {trace.n_units:,}) "
          f"over {span}; {len(laws)} laws x {len(merges)} merge window(s), each re-simulated {args.replicates} times "
          f"(seed {args.seed}; work about {work:.3g} failure-equivalents)\n")
    print("\n".join(table_lines(table)))
    rows = [{k: _plain(v) for k, v in r.to_dict().items()} for r in table.rows]
    elapsed = time.perf_counter() - t_start
    scenario = {"failures_trace": read, "log": {"rows": trace.n_events, "units": trace.n_units,
                                                 "end_seconds": trace.end, "start": str(trace.start)},
                "laws": laws, "merges": [None if w is None else w for w in merges], "periods": periods,
                "replicates": args.replicates}
    prov = provenance("spare fit", getattr(args, "argv", None), scenario=scenario, seeds=[args.seed],
                      timings={"elapsed_seconds": elapsed, "check_seconds": list(table.seconds)})
    written = []
    if args.json:
        doc = {"command": "spare fit", "provenance": prov, "columns": [c.to_dict() for c in columns(FitRow)],
               # the rows' raw values: the writer turns a NaN or inf into null with its reason
               "rows": [{k: getattr(r, k) for k in FIT_COLUMNS} for r in table.rows]}
        _write_json(args.json, doc, reasons=_NULL_REASONS, indent=1)
        written.append(shown_path(args.json))
    if args.csv:
        write_csv(args.csv, rows, prov, columns=FIT_COLUMNS)
        written.append(shown_path(args.csv))
    if args.parquet:
        write_parquet(args.parquet, rows, prov, columns=FIT_COLUMNS)
        written.append(shown_path(args.parquet))
    if written:
        print(f"\nresults written to {', '.join(written)}")
    return 0
