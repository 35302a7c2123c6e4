"""Summaries read from a result store: per cell mean, confidence interval and quantiles of
TTT/T0, and the best redundancy per (scenario, policy, interval).

A *cell* is (scenario, policy label, r, interval setting); its runs are its seeds. The
summaries read whatever the store holds, so they can be taken while a sweep still runs.
"""
from __future__ import annotations

import json
import math

import numpy as np

from .._results import columns
from .._stats import mean_ci
from ..sim.results import MEAN_COLUMNS, RATIO_BOUNDS, SAME_COLUMNS, cell_mean, judged_cells
from ..sim.run import RunResult
from .store import ResultStore, require_pyarrow

__all__ = ["summarise_store", "best_redundancy", "unfinished_combinations", "report_columns"]

_CELL = ("scenario_key", "policy", "redundancy", "interval_setting")


def report_columns() -> dict:
    """Run column -> the columns of :func:`summarise_store` it gives (from the columns declared
    on :class:`~spare_core.sim.RunResult`): a cell key itself, the seeds ``runs``, the finished
    count ``finished``, TTT/T0 its mean, interval and quantiles (``ratio_*``), a column one value
    per cell itself, every averaged one ``NAME_mean``."""
    out = {}
    for c in columns(RunResult):
        out[c.name] = {"key": (c.name,), "seed": ("runs",), "count": (c.name,), "same": (c.name,),
                       "ratio": ("ratio_mean", "ratio_ci_low", "ratio_ci_high")}.get(c.cell, (f"{c.name}_mean",))
    return out


def _uses_redundancy(source) -> bool:
    """Whether the policy a store's ``policy_source`` names uses r: the registry says for a
    registered name; any other source (a factory's or a class's path) is taken to (a cell at
    r = 1 of a policy without r is then judged like any other)."""
    from ..sim import policy_names, uses_redundancy

    return bool(uses_redundancy(source)) if source in policy_names() else True


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
        policy_source (the registry name), uses_redundancy (from the registry), runs,
        finished, ratio_mean, ratio_ci_low, ratio_ci_high, the quantiles, every run column
        that is one value per cell (failure_model, interval_rule) and ``NAME_mean`` for every
        averaged one (availability, overhead, ettr, times, failures, GPU-hours, cost, ...):
        what :func:`report_columns` maps each declared run column to. A cell with an
        unfinished seed has an infinite mean and interval (the run hit its horizon: its TTT is
        only bounded below); with one seed the interval is NaN. Sorted by scenario, policy,
        interval setting and r.

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
    how = {c.name: c.cell for c in columns(RunResult)}
    col = {c: t.column(c).to_numpy(zero_copy_only=False) for c in
           set(_CELL + MEAN_COLUMNS + SAME_COLUMNS + ("ratio", "finished", "scenario", "scenario_json", "policy_source"))}
    uses = {}
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
        source = str(col["policy_source"][idx[0]])
        if source not in uses:
            uses[source] = _uses_redundancy(source)
        row = {
            "scenario": str(col["scenario"][idx[0]]), "scenario_key": skey, "n_groups": n_of[skey],
            "policy": key[1], "redundancy": int(key[2]), "interval_setting": key[3], "policy_source": source,
            "uses_redundancy": uses[source], "runs": n, "finished": fin,
            "ratio_mean": mean, "ratio_ci_low": lo, "ratio_ci_high": hi,
        }
        for q, v in zip(qs, np.quantile(ratio, qs, method=method)):
            row[f"ratio_q{round(100 * q):02d}"] = float(v)
        for m in SAME_COLUMNS:
            row[m] = col[m][idx[0]].item() if hasattr(col[m][idx[0]], "item") else col[m][idx[0]]
        for m in MEAN_COLUMNS:
            row[f"{m}_mean"] = cell_mean(col[m][idx].astype(np.float64), how[m])
        rows.append(row)
    rows.sort(key=lambda r: (r["scenario"], r["scenario_key"], r["policy"], r["interval_setting"], r["redundancy"]))
    return pa.Table.from_pylist(rows)


def best_redundancy(summary):
    """Per (scenario, policy, interval setting), the cell with the least mean TTT/T0.

    Parameters
    ----------
    summary : pyarrow.Table
        From :func:`summarise_store`.

    With a policy without redundancy in the summary (CKPT-only), the others are judged at
    r >= 2, as :meth:`spare_core.sim.ResultSet.best_per_policy` judges them (one rule:
    :func:`spare_core.sim.results.judged_cells`): at r = 1 they are that policy under another
    name. A summary without ``uses_redundancy`` (one written before it) judges every r.

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
    for judged in _judged(summary):
        done = sorted((c for c in judged if math.isfinite(c["ratio_mean"])), key=lambda c: (c["ratio_mean"], c["redundancy"]))
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
    for cells in _judged(summary):
        if any(math.isfinite(c["ratio_mean"]) for c in cells):
            continue
        out.append(dict(max(cells, key=lambda c: (c["progress_mean"], c["finished"], -c["redundancy"]))))
    return out


def _judged(summary) -> list:
    """Per (scenario, policy, interval setting), the cells it is judged on
    (:func:`~spare_core.sim.results.judged_cells`), in the summary's order."""
    by = _combinations(summary)
    plain = any(not c.get("uses_redundancy", True) for cells in by.values() for c in cells)
    return [judged_cells(cells, uses_redundancy=cells[0].get("uses_redundancy", True), plain_compared=plain,
                         redundancy=lambda c: c["redundancy"]) for cells in by.values()]


def _combinations(summary) -> dict:
    """The summary's rows per (scenario, policy, interval setting), in the summary's order."""
    by: dict = {}
    for r in summary.to_pylist():
        by.setdefault((r["scenario_key"], r["policy"], r["interval_setting"]), []).append(r)
    return by
