"""Summaries read from a result store: per cell mean, confidence interval and quantiles of
TTT/T0, and the best redundancy per (scenario, policy, interval).

A *cell* is (scenario, policy label, r, interval setting); its runs are its seeds. The
summaries read whatever the store holds, so they can be taken while a sweep still runs.
"""
from __future__ import annotations

import json
import math

import numpy as np

from ..sim.results import RATIO_BOUNDS, mean_ci
from .store import ResultStore, require_pyarrow

__all__ = ["summarise_store", "best_redundancy", "unfinished_combinations"]

_CELL = ("scenario_key", "policy", "redundancy", "interval_setting")
_MEANS = ("availability", "overhead", "checkpoint_interval", "failures_masked", "wipeouts", "restarts", "progress")


def _table(source):
    pa, _ = require_pyarrow()
    if isinstance(source, pa.Table):
        return source
    if not isinstance(source, ResultStore):
        source = ResultStore(source)
    source.check_store()  # a StoreError (one line) for what is not a store
    return source.read()  # parts that fail a check: skipped, each a StoreWarning


def summarise_store(source, *, confidence=0.95, quantiles=(0.05, 0.5, 0.95)):
    """One row per cell of the stored runs.

    Parameters
    ----------
    source : ResultStore, path or pyarrow.Table
        A store (its directory) or a table read from one. Parts that fail the store's
        checks are left out, each with a :class:`~spare_core.sweeps.StoreWarning`.
    confidence : float, default 0.95
        Level of the Student-t interval of the mean TTT/T0 over seeds, cut at TTT/T0 >= 1
        (:func:`spare_core.sim.results.mean_ci`).
    quantiles : sequence of float, default (0.05, 0.5, 0.95)
        Quantiles of TTT/T0 over seeds (columns ``ratio_q05`` ...).

    Returns
    -------
    pyarrow.Table
        Columns: scenario, scenario_key, n_groups, policy, redundancy, interval_setting,
        runs, finished, ratio_mean, ratio_ci_low, ratio_ci_high, the quantiles, and the means
        of availability, overhead, checkpoint_interval, failures_masked, wipeouts, restarts,
        progress. A cell with an unfinished seed has an infinite mean and interval (the run
        hit its horizon: its TTT is only bounded below); with one seed the interval is NaN.
        Sorted by scenario, policy, interval setting and r.

    Raises
    ------
    spare_core.sweeps.StoreError
        ``source`` is a path that is not a store (missing, no or a foreign store.json).
    """
    pa, _ = require_pyarrow()
    if not (0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    qs = [float(q) for q in quantiles]
    if not all(0 <= q <= 1 for q in qs):
        raise ValueError(f"quantiles must be in [0, 1], got {list(quantiles)}")
    t = _table(source)
    if t.num_rows == 0:
        return pa.table({})
    col = {c: t.column(c).to_numpy(zero_copy_only=False) for c in
           set(_CELL + _MEANS + ("ratio", "finished", "scenario", "scenario_json"))}
    cells: dict = {}
    for i, key in enumerate(zip(*(col[c] for c in _CELL))):
        cells.setdefault(key, []).append(i)
    n_of = {}
    rows = []
    for key, idx in cells.items():
        idx = np.asarray(idx)
        skey = key[0]
        if skey not in n_of:
            n_of[skey] = json.loads(col["scenario_json"][idx[0]]).get("n_groups")
        ratio = col["ratio"][idx].astype(np.float64)
        fin = int(np.count_nonzero(col["finished"][idx]))
        n = ratio.shape[0]
        if fin < n:
            mean = lo = hi = math.inf
        else:
            # the Student-t interval cut at TTT/T0 >= 1 (sim.results.mean_ci: why not a bootstrap)
            mean, lo, hi = mean_ci(ratio, confidence, RATIO_BOUNDS)
        method = "linear" if fin == n else "inverted_cdf"  # inf does not interpolate
        row = {
            "scenario": str(col["scenario"][idx[0]]), "scenario_key": skey, "n_groups": n_of[skey],
            "policy": key[1], "redundancy": int(key[2]), "interval_setting": key[3],
            "runs": n, "finished": fin, "ratio_mean": mean, "ratio_ci_low": lo, "ratio_ci_high": hi,
        }
        for q, v in zip(qs, np.quantile(ratio, qs, method=method)):
            row[f"ratio_q{round(100 * q):02d}"] = float(v)
        for m in _MEANS:
            row[f"{m}_mean"] = float(np.mean(col[m][idx].astype(np.float64)))
        rows.append(row)
    rows.sort(key=lambda r: (r["scenario"], r["scenario_key"], r["policy"], r["interval_setting"], r["redundancy"]))
    return pa.Table.from_pylist(rows)


def best_redundancy(summary):
    """Per (scenario, policy, interval setting), the cell with the least mean TTT/T0.

    Parameters
    ----------
    summary : pyarrow.Table
        From :func:`summarise_store`.

    Returns
    -------
    pyarrow.Table
        The chosen rows of ``summary`` (ties go to the smaller r), plus ``runner_up_r`` and
        ``runner_up_ratio`` (the next best r; null if none). Combinations where no r
        finished on every seed are left out (:func:`unfinished_combinations` gives them).
    """
    pa, _ = require_pyarrow()
    if summary.num_rows == 0:
        return summary
    out = []
    for cells in _combinations(summary).values():
        done = sorted((c for c in cells if math.isfinite(c["ratio_mean"])), key=lambda c: (c["ratio_mean"], c["redundancy"]))
        if not done:
            continue
        best = dict(done[0])
        best["runner_up_r"] = done[1]["redundancy"] if len(done) > 1 else None
        best["runner_up_ratio"] = done[1]["ratio_mean"] if len(done) > 1 else None
        out.append(best)
    return pa.Table.from_pylist(out)


def unfinished_combinations(summary):
    """The (scenario, policy, interval setting) combinations :func:`best_redundancy` leaves
    out: no r finished on every seed. Per combination, the cell that got furthest.

    Parameters
    ----------
    summary : pyarrow.Table
        From :func:`summarise_store`.

    Returns
    -------
    list of dict
        The chosen rows of ``summary`` (most mean progress; ties go to the smaller r), in the
        summary's order.
    """
    if summary.num_rows == 0:
        return []
    out = []
    for cells in _combinations(summary).values():
        if any(math.isfinite(c["ratio_mean"]) for c in cells):
            continue
        out.append(dict(max(cells, key=lambda c: (c["progress_mean"], c["finished"], -c["redundancy"]))))
    return out


def _combinations(summary) -> dict:
    """The summary's rows per (scenario, policy, interval setting), in the summary's order."""
    by: dict = {}
    for r in summary.to_pylist():
        by.setdefault((r["scenario_key"], r["policy"], r["interval_setting"]), []).append(r)
    return by
