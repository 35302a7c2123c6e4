"""Laws fitted to a fleet's failure log, each re-simulated over the log's window, next to the
log's own counts (docs/results.md, "Fits that reproduce the log").

The table is ``spare fit``'s (:func:`spare_core.commands.fit.fit_table`, one row per law, with
per-year periods); this script only brings the logs a scenario file cannot name: Titan's
release format and a seeded fleet-shaped log. For a log of your own, ``spare fit FILE.toml``
(docs/cli.md) prints the same table with ``--json``/``--csv`` outputs.

For every law (per-node Weibull and log-normal, fitted with every node new at the log's start
as the scenario file used to, and with the nodes' ages stationary as it does now; exponential;
gamma-frailty; exponential and frailty with a rate per calendar year), the table gives its
parameters and AIC, then :func:`spare_core.events.fit_check.check_fit`: the failures simulated
over the log's own window on its own nodes (median and central 95 % of ``--replicates`` runs),
whether the log's count falls inside, the per-year simulated medians and the per-year p-value,
and the distinct failing nodes. ``--why`` adds the decomposition of docs/failures.md: the
Weibull fitted with new nodes after merging each node's repeated reports within 1 h, 1 day,
1 week.

The log
-------
``--titan PATH``: OLCF Titan's GPU history as released with Ostrouchov et al., SC'20
(github.com/olcf/TitanGPULife, ``data/gc_full.csv``; no licence file, so it is not copied into
this repository: download it and give its path). A failure is a row with an event (``DBE``, a
double-bit error, or ``OTB``, the GPU off the bus) at its ``remove`` time, on its ``location``
(one GPU per node); 18,688 nodes; the window from the first event to the last (times read as
UTC). ``--log PATH``: any CSV failure log (``--time-column``, ``--unit-column``, ``--n-units``,
``--start``, ``--end`` as in read_trace). Without either: a seeded log *shaped like* such a fleet
(:func:`fleet_log`: lemons, a yearly drift, repeated reports; not real data).

Usage::

    python -m bench.fleet_fit_table                                   # the seeded fleet-shaped log
    python -m bench.fleet_fit_table --titan ~/TitanGPULife/data/gc_full.csv --why
    python -m bench.fleet_fit_table --titan gc_full.csv --merge 1h    # repeated reports merged
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
from pathlib import Path

import numpy as np

from spare_core._files import parse_duration
from spare_core.commands.fit import fit_table, table_lines
from spare_core.distributions import Exponential
from spare_core.events.fit import merge_repeats
from spare_core.events.fit_check import simulate_log
from spare_core.events.rates import RateSchedule, calendar_periods
from spare_core.events.trace import Trace, read_trace

DAY = 86400.0
YEAR = 365.25 * DAY
TITAN_NODES = 18_688
START = dt.datetime(2014, 1, 23, 6, 0, tzinfo=dt.timezone.utc)
#: yearly rate levels of the seeded log (a quiet first year, a wear-out wave in the third,
#: replacements after it), relative; the shape of a real GPU fleet's drift, not its data
LEVELS = np.array([0.05, 0.3, 2.2, 1.2, 0.9, 1.2])


def fleet_log(n=3000, years=5.5, frailty=1.5, storms=0.0, seed=0, node_mean=4 * YEAR) -> Trace:
    """A seeded log of ``n`` exponential nodes (mean ``node_mean`` at the average level) over
    ``years`` from 2014-01-23: gamma rate multipliers of variance ``frailty`` kept by each slot,
    the yearly levels :data:`LEVELS`, and a share ``storms`` of failures followed by a few (a
    geometric number, mean 1.5) repeated reports of the same node minutes apart."""
    end = years * YEAR
    per = calendar_periods(end, "year", start=START)
    lv = LEVELS[:len(per)]
    levels = lv / (lv * per.lengths).sum() * end
    tr = simulate_log(Exponential(node_mean), n, end, seed=seed, frailty=frailty, start=START,
                      schedule=RateSchedule(per.edges[1:-1], levels))
    if not storms:
        return tr
    rng = np.random.default_rng(seed + 1)
    pick = rng.random(tr.n_events) < storms
    k = rng.geometric(0.4, int(pick.sum()))
    t = np.minimum(np.repeat(tr.times[pick], k) + rng.exponential(300.0, int(k.sum())), end)
    times = np.concatenate((tr.times, t))
    units = np.concatenate((tr.units, np.repeat(tr.units[pick], k)))
    o = np.argsort(times, kind="stable")
    return Trace(times[o], units[o], n_units=n, end=end, start=START)


def titan_log(path) -> Trace:
    """The failure events of OLCF Titan's ``gc_full.csv`` as a :class:`Trace` (see the module
    docstring for the derivation)."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["event"]:
                t = dt.datetime.fromisoformat(r["remove"]).replace(tzinfo=dt.timezone.utc)
                rows.append((t, r["location"], r["event"]))
    rows.sort(key=lambda x: x[0])
    hosts = sorted({h for _, h, _ in rows})
    ids = {h: i for i, h in enumerate(hosts)}
    t0 = rows[0][0]
    times = [(t - t0).total_seconds() for t, _, _ in rows]
    names = hosts + [f"never-failed-{i}" for i in range(TITAN_NODES - len(hosts))]
    return Trace(times, [ids[h] for _, h, _ in rows], n_units=TITAN_NODES, end=times[-1], start=t0,
                 unit_names=names, reasons=[e for _, _, e in rows], source=str(path))


def why(tr, replicates):
    """docs/results.md's decomposition: the Weibull fitted with new nodes (simulated with
    stationary ages), the stationary Weibull and the frailty law after merging each node's
    reports within 1 h, 1 day, 1 week (:func:`spare_core.commands.fit.fit_table`'s rows)."""
    merges = ((None, "(none)"), (3600.0, "1 h"), (DAY, "1 day"), (7 * DAY, "1 week"))
    t = fit_table(tr, ("weibull-new", "weibull", "frailty"), replicates=replicates, periods="year",
                  merges=[w for w, _ in merges])
    print("\n| repeated reports merged within | failures | Weibull (nodes new) shape, mean | its failures simulated "
          "with stationary ages, over the log's | Weibull (stationary) shape: count reproduced? | frailty v |")
    print("|---|---|---|---|---|---|")
    for i, (_, label) in enumerate(merges):
        new, st, fr = t.rows[3 * i:3 * i + 3]
        print(f"| {label} | {new.log_failures:,} | {new.shape:.2f}, {new.mean / DAY:,.3g} d | "
              f"{1 / new.count_ratio:.3g} | {st.shape:.2f}: {'yes' if st.reproduced else f'no ({st.count_ratio:.3g}x)'} "
              f"| {fr.frailty:.2f} |")


def _when(text):
    """A --start/--end value: seconds (a number) or a datetime string, as read_trace takes them."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return text


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.fleet_fit_table", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--titan", type=Path, help="OLCF Titan's data/gc_full.csv")
    src.add_argument("--log", type=Path, help="a CSV failure log")
    p.add_argument("--time-column", default="time")
    p.add_argument("--unit-column", default="unit")
    p.add_argument("--n-units", type=int)
    p.add_argument("--start")
    p.add_argument("--end")
    p.add_argument("--merge", help="merge a node's repeated reports within this duration first (e.g. 1h)")
    p.add_argument("--replicates", type=int, default=200)
    p.add_argument("--why", action="store_true", help="also the repeated-reports decomposition")
    p.add_argument("--seed", type=int, default=0, help="seed of the fleet-shaped log")
    a = p.parse_args(argv)
    if a.titan:
        tr = titan_log(a.titan)
    elif a.log:
        tr = read_trace(a.log, time_column=a.time_column, unit_column=a.unit_column, n_units=a.n_units,
                        start=_when(a.start), end=_when(a.end))
    else:
        tr = fleet_log(n=TITAN_NODES, frailty=0.4, storms=0.06, seed=a.seed, node_mean=15 * YEAR)
    if a.merge:
        tr, dropped = merge_repeats(tr, parse_duration(a.merge.replace("h", " h").replace("d", " d")))
        print(f"{dropped} repeated reports merged")
    print(f"{tr!r}, {tr.end / YEAR:.3g} years\n")
    print("\n".join(table_lines(fit_table(tr, replicates=a.replicates, periods="year"))))
    if a.why:
        why(tr, max(50, a.replicates // 4))


if __name__ == "__main__":
    main()
