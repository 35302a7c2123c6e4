"""The ``--plot DIR`` pictures of the commands (matplotlib, the ``plot`` extra; imported lazily).

- ``ttt_vs_r.png``: TTT/T0 and availability (time in kept steps / wall time, redundant stack
  layers counted as kept: not ETTR) against r per policy, mean and the spread over seeds
  (min-max band);
- ``ettr_vs_interval.png``: ETTR (T0 / time-to-train) against the checkpoint interval,
  Young's, Daly's, the availability-optimal and the chosen interval marked;
- ``timeline.png``: one run's failures over wall time, masked ones and restarts apart, with
  the stack depth the policy ran at;
- ``map.png`` (``spare map``): the winner of each cell of a two-key grid, paler the smaller its
  margin, hatched where it is not clear, the margin in % written in the cell.
"""
from __future__ import annotations

import math
import os
from typing import Any, Sequence

__all__ = ["plot_vs_r", "plot_interval", "plot_timeline", "plot_map", "margin_text", "letters", "cell_versus",
           "strategy_colour", "axis_words", "AXIS_WORDS", "plot_breakdown"]

# one colour per strategy family in every picture, by the policy's registry name (not by its
# place in a list, so a strategy keeps its colour from one map to the next); a plugin's from
# the rest of the palette, by its name
_FAMILY = {"ckpt": "#7f7f7f", "rep": "#1f77b4", "rep-disjoint": "#17becf", "spare": "#d62728",
           "elastic": "#2ca02c"}
_OTHER_PALETTE = ("#9467bd", "#8c564b", "#bcbd22", "#ff7f0e", "#e377c2", "#393b79", "#637939", "#843c39")
# the variant with the in-memory tier: the family's colour darkened (not paler: paleness is a
# map's small margin), a straggler remedy: a marker hatch
_MEMORY_DARKEN = 0.45
#: how a map's axis is described, in words (a key not listed is shown as it is)
AXIS_WORDS = {
    "failures.mtbf": "time between failures of the whole job",
    "failures.node_mtbf": "time between failures of one node",
    "failures.per_node_day": "failures per node-day",
    "failures.per_1000_node_days": "failures per 1,000 node-days",
    "failures.per_gpu_year": "failures per GPU-year",
    "failures.weibull_shape": "Weibull shape of the time between failures",
    "repair.swap": "time to swap in a hot spare",
    "repair.time": "time to repair a failed node",
    "repair.rejoin": "time for a repaired group to rejoin",
    "repair.spares": "hot spare nodes",
    "costs.restart": "time to restart the job",
    "costs.checkpoint_save": "time to save a checkpoint",
    "costs.gpu_hour": "price of a GPU-hour",
    "cluster.gpus": "GPUs in the job",
    "cluster.gpus_per_group": "GPUs per data-parallel group",
    "job.step_time": "time per training step",
    "job.steps": "training steps",
    "elastic.reconfigure": "time to reconfigure the elastic job",
    "elastic.microbatches": "micro-batches per group and step",
    "elastic.step_overhead": "elastic training's extra time per step",
    "elastic.quorum": "elastic training's quorum time per step",
    "checkpoint.size": "size of the persistent checkpoint",
    "checkpoint.write_bandwidth": "storage write bandwidth",
    "checkpoint.read_bandwidth": "storage read bandwidth",
    "checkpoint.efficiency": "fraction of the storage bandwidth reached",
    "checkpoint.host_copy": "time an asynchronous save blocks",
    "checkpoint.memory_bandwidth": "network bandwidth of a node's in-memory copies",
    "checkpoint.memory_save": "time to snapshot to host memory",
    "checkpoint.memory_restore": "time to restore from host memory",
    "checkpoint.memory_every": "time between in-memory snapshots",
    "stragglers.slowdown": "straggler slowdown S",
}


def axis_words(key: str, unit: str = "") -> str:
    """A map axis in words, with the key and unit: ``"time to swap in a hot spare (repair.swap)"``."""
    words = AXIS_WORDS.get(key)
    tail = f", {unit}" if unit else ""
    return f"{words} ({key}{tail})" if words else f"{key}{f' ({unit})' if unit else ''}"


def strategy_colour(name: str) -> tuple:
    """The RGB colour of a strategy (``ckpt``, ``ckpt+memory``, ``spare+evict``) or a policy's
    label (``"SPARe+CKPT"``) in every picture: its family's, darkened with the in-memory tier."""
    from matplotlib.colors import to_rgb

    from ..sim.strategy_map import split_name
    from ..strategies import policy_names, registered_policy

    base, memory, _ = split_name(name)
    if base not in policy_names():  # a label: the entry that carries it
        base = next((n for n in policy_names() if registered_policy(n).label == base), base)
    if base in _FAMILY:
        rgb = to_rgb(_FAMILY[base])
    else:
        import zlib

        rgb = to_rgb(_OTHER_PALETTE[zlib.crc32(base.encode()) % len(_OTHER_PALETTE)])
    return tuple(v * (1.0 - _MEMORY_DARKEN) for v in rgb) if memory else rgb


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        from . import UsageError

        raise UsageError("--plot needs matplotlib: pip install 'spare_core[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
                         "axes.spines.right": False})
    return plt


def save_figure(fig: Any, path: str) -> str:
    """``fig`` saved at ``path`` by the one writer (atomic, through symlinks, regular files only,
    the umask); the format from the suffix (PNG without one). Returns the path."""
    from .._writer import write_atomic

    fmt = os.path.splitext(path)[1][1:].lower() or "png"
    write_atomic(path, lambda fh: fig.savefig(fh, format=fmt))
    return path


def plot_vs_r(result: Any, scenarios: Sequence[Any], directory: str, *, title: str) -> list[str]:
    """TTT/T0 and availability vs r per policy (one row of panels per scenario); returns paths."""
    import numpy as np

    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    os.makedirs(directory, exist_ok=True)
    shown = [sc for sc in scenarios if any(s.scenario == sc.name for s in result.summaries)]
    fig, axes = plt.subplots(len(shown), 2, figsize=(11, 3.6 * len(shown)), squeeze=False)
    for row, sc in zip(axes, shown):
        ax_t, ax_a = row
        labels = list(dict.fromkeys(s.policy for s in result.summaries if s.scenario == sc.name))
        for i, label in enumerate(labels):
            cells = sorted((s for s in result.summaries if s.scenario == sc.name and s.policy == label),
                           key=lambda s: s.redundancy)
            r = np.array([s.redundancy for s in cells])
            runs = [[x for x in result.runs if x.scenario == sc.name and x.policy == label and x.redundancy == s.redundancy]
                    for s in cells]
            ratio = [np.array([x.ratio for x in rs]) for rs in runs]
            fin = np.array([np.isfinite(x).all() for x in ratio])
            colour = strategy_colour(label)
            if len(cells) == 1:  # CKPT-only has no r: a horizontal reference line
                if fin[0]:
                    ax_t.axhline(ratio[0].mean(), color=colour, ls="--", lw=1.2,
                                 label=f"{label} ({ratio[0].mean():.2f})")
                else:
                    ax_t.plot([], [], color=colour, ls="--", label=f"{label}: unfinished at the horizon")
                ax_a.axhline(cells[0].availability, color=colour, ls="--", lw=1.2, label=label)
                continue
            mean = np.array([x.mean() if ok else np.nan for x, ok in zip(ratio, fin)])
            lo = np.array([x.min() if ok else np.nan for x, ok in zip(ratio, fin)])
            hi = np.array([x.max() if ok else np.nan for x, ok in zip(ratio, fin)])
            ax_t.plot(r, mean, marker="o", ms=3.5, color=colour, label=label)
            ax_t.fill_between(r, lo, hi, color=colour, alpha=0.18, lw=0)
            # the best r as the tables judge it (ResultSet.best_per_policy: at r >= 2 beside CKPT-only)
            best = next((c for c, done in result.best_per_policy(sc.name) if done and c.policy == label), None)
            if best is not None:
                ax_t.plot([best.redundancy], [best.ratio_mean], marker="*", ms=13, color=colour, mec="black",
                          mew=0.6, zorder=5)
            av = [np.array([x.availability for x in rs]) for rs in runs]
            ax_a.plot(r, [a.mean() for a in av], marker="o", ms=3.5, color=colour, label=label)
            ax_a.fill_between(r, [a.min() for a in av], [a.max() for a in av], color=colour, alpha=0.18, lw=0)
        seeds = max((s.seeds for s in result.summaries if s.scenario == sc.name), default=0)
        ax_t.set_title(f"{sc.name}: N = {sc.n_groups} groups — TTT/T0 (★ best r)", fontsize=10)
        rs = [s.redundancy for s in result.summaries if s.scenario == sc.name]
        for ax in (ax_t, ax_a):  # r is an integer: no tick at 1.5; both panels over every r run
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
            ax.set_xlim(min(rs) - 0.5, max(rs) + 0.5)
        ax_t.set_xlabel("redundancy r")
        ax_t.set_ylabel("time-to-train / failure-free T0")
        ours = [s for s in result.summaries if s.scenario == sc.name]
        lows = [s.ratio_min for s in ours if math.isfinite(s.ratio_min)]
        highs = [s.ratio_max for s in ours if math.isfinite(s.ratio_max)]
        if lows and highs:
            # keep the interesting range: runaway cells (e.g. replication at large r) are clipped
            top = min(max(highs), 4 * min(lows))
            ax_t.set_ylim(0.95 * min(lows), 1.05 * top)
        ax_t.legend(fontsize=8, loc="upper right")
        ax_a.set_title(f"availability (time in kept steps / wall time; redundant layers count as kept),\n"
                       f"band: min-max over {seeds} seeds; ETTR = 1 / (TTT/T0), left", fontsize=9)
        ax_a.set_xlabel("redundancy r")
        ax_a.set_ylabel("availability")
        ax_a.set_ylim(0, 1.02)
        ax_a.legend(fontsize=8, loc="lower right")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    path = os.path.join(directory, "ttt_vs_r.png")
    save_figure(fig, path)
    plt.close(fig)
    return [path]


def plot_interval(scan: Any, *, directory: str, horizon: float, chosen: float | None = None,
                  chosen_rule: str | None = None) -> str:
    """ETTR (T0 / time-to-train; mean and min-max over seeds) against the checkpoint interval
    of an interval scan (:func:`spare_core.commands.filejob.interval_scan`), the closed forms
    and the chosen interval marked; returns the path.

    The closed forms are vertical lines named in the legend (they often lie a few per cent
    apart, where tick labels would print over each other); the ticks are 1-2-5 steps. A seed
    that did not finish (its ETTR is below 1 / ``horizon``) is drawn as a cross at 0.
    """
    import textwrap

    import numpy as np

    from ..sim.results import ettr

    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    os.makedirs(directory, exist_ok=True)
    secs = scan.intervals()
    xs = np.array(secs) / 60.0
    vals = [np.array([ettr(r) for r in scan.runs(s)]) for s in secs]
    done = np.array([np.isfinite(v).all() for v in vals])
    fig, ax = plt.subplots(figsize=(8, 4.6))
    mean = np.array([v.mean() if ok else np.nan for v, ok in zip(vals, done)])
    ax.plot(xs, mean, marker="o", ms=4, color="#d62728", label="simulated ETTR, mean over seeds")
    lo = np.array([np.nanmin(v) if np.isfinite(v).any() else np.nan for v in vals])
    hi = np.array([np.nanmax(v) if np.isfinite(v).any() else np.nan for v in vals])
    ax.fill_between(xs, lo, hi, color="#d62728", alpha=0.15, lw=0, label=f"min-max over {len(vals[0])} seeds")
    lost = [(x, int((~np.isfinite(v)).sum())) for x, v in zip(xs, vals) if not np.isfinite(v).all()]
    if lost:
        ax.plot([x for x, _ in lost], [0.0] * len(lost), "x", ms=7, color="black",
                label=f"a seed unfinished at {horizon:g} T0 (ETTR < {1 / horizon:.2g})")
    # one line per distinct interval: the closed forms and the chosen one (names joined when equal)
    marks: dict[float, list[str]] = {}
    for name, v in scan.forms.items():
        marks.setdefault(v, []).append(name)
    pick = scan.chosen if chosen is None else chosen  # the advice's choice, when it moved off the rule's
    marks.setdefault(pick, []).append("chosen")
    styles = {"Young": ":", "Daly": "--", "T_c*": "-."}
    for v, names in sorted(marks.items()):
        if not (v > 0 and math.isfinite(v)):
            continue
        chosen = "chosen" in names
        ax.axvline(v / 60.0, color="#2ca02c" if chosen else "black", lw=1.8 if chosen else 1,
                   ls="-" if chosen else styles.get(names[0], ":"),
                   label=f"{' = '.join(names)}: {v / 60:.3g} min")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(xs.min() / 1.15, xs.max() * 1.15)
    if lost:  # the crosses sit at 0
        ax.set_ylim(bottom=0)
    ax.set_xlabel("checkpoint interval (minutes of training between saves, log scale)")
    ax.set_ylabel("ETTR = T0 / time-to-train")
    rule = textwrap.fill(f"chosen by: {scan.chosen_rule if chosen_rule is None else chosen_rule}", 110)
    who = f"{scan.label} r={scan.redundancy}" if scan.uses_redundancy else scan.label
    ax.set_title(f"{who}: ETTR vs checkpoint interval\n{rule}", fontsize=8)
    ax.legend(fontsize=7, loc="lower center")
    fig.tight_layout()
    path = os.path.join(directory, "ettr_vs_interval.png")
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_timeline(run: Any, *, directory: str, hours_shown: float | None = None) -> str:
    """One run's failures, restarts and stack depth over wall time; returns the path."""
    import numpy as np

    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    os.makedirs(directory, exist_ok=True)
    tl = run.timeline
    t = np.asarray(tl.failure_time) / 3600.0
    restart = np.asarray(tl.failure_restart, dtype=bool)
    depth = np.asarray(tl.depth_after)
    fig, (ax_c, ax_d) = plt.subplots(2, 1, figsize=(10, 5), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    ax_c.step(t, np.arange(1, t.size + 1), where="post", color="#444444", lw=1, label="failures (cumulative)")
    if (~restart).any():
        ax_c.plot(t[~restart], np.arange(1, t.size + 1)[~restart], "o", ms=2.5, color="#1f77b4",
                  label=f"masked by redundancy ({int((~restart).sum())})")
    if restart.any():
        for x in t[restart]:
            ax_c.axvline(x, color="#d62728", lw=0.6, alpha=0.5)
        ax_c.plot([], [], color="#d62728", lw=0.8, label=f"global restart ({int(restart.sum())})")
    ax_c.set_ylabel("failures so far")
    end = run.wall_time / 3600.0
    status = f"finished at {run.ratio:.3f} T0" if run.finished else f"unfinished, {100 * run.progress:.0f} % done"
    ax_c.set_title(f"{run.scenario}: {run.policy} r={run.redundancy}, seed {run.seed} — {status}", fontsize=10)
    ax_c.legend(fontsize=8, loc="upper left")
    ax_d.step(np.concatenate([[0.0], t, [end]]), np.concatenate([[1.0], depth, depth[-1:] if depth.size else [1.0]]),
              where="post", color="#2ca02c", lw=1)
    ax_d.set_ylabel("stack depth S")
    ax_d.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # S is an integer: no tick at 1.25
    ax_d.set_ylim(0.5, max(1.0, float(depth.max()) if depth.size else 1.0) + 0.5)
    ax_d.set_xlabel("wall time (hours)")
    ax_d.set_xlim(0, hours_shown if hours_shown else end)
    fig.tight_layout()
    path = os.path.join(directory, "timeline.png")
    save_figure(fig, path)
    plt.close(fig)
    return path


#: ``spare advise``'s fleet sweeps as plotted: the file's stem, the x axis, the title's question
SWEEP_PLOTS = {
    "spares": ("spares", "hot spares (nodes)", "how many hot spares"),
    "standbys": ("standbys", "warm standbys (fleet.standbys)", "how many warm standbys"),
    "retire": ("retire_after", "retire a node after k failures (fleet.retire_after; 0 = never)",
               "when to retire a node"),
}


def plot_sweep(directory: str, sf: Any, sweep: list[Any], kind: str) -> str:
    """TTT/T0 and cost against one of ``spare advise``'s fleet sweeps, one line per policy
    (``spares.png``, ``standbys.png``, ``retire_after.png``): ``sweep`` holds, per value of the
    key, each policy's row at its best cell; ``kind`` is a key of :data:`SWEEP_PLOTS`. A policy
    unfinished at a value has no point there (a gap in its line)."""
    stem, xlabel, question = SWEEP_PLOTS[kind]
    plt = _pyplot()
    priced = sf.scenario.pricing is not None
    fig, axes = plt.subplots(1, 2 if priced else 1, figsize=(10 if priced else 5.5, 4), squeeze=False)
    pols = list(dict.fromkeys(row["policy"] for v in sweep for row in v["rows"]))
    for p in pols:
        xs = [v["value"] for v in sweep]
        rows = [next((r for r in v["rows"] if r["policy"] == p), None) for v in sweep]
        ys = [r["ratio"] if r is not None else math.nan for r in rows]
        axes[0][0].plot(xs, ys, "o-", color=strategy_colour(p), label=p)
        if priced:
            axes[0][1].plot(xs, [r["cost"] if r is not None else math.nan for r in rows], "o-",
                            color=strategy_colour(p), label=p)
    from matplotlib.ticker import MaxNLocator

    for ax, what in zip(axes[0], ("TTT / T0", f"cost (at {sf.scenario.pricing.gpu_hour:g} per GPU-hour)"
                                  if priced else "")):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(what)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{sf.name}: {question}")
    path = save_figure(fig, f"{directory}/{stem}.png")
    plt.close(fig)
    return path


def margin_text(cell: dict) -> str:
    """The margin in % as a cell shows it (``>=`` for a lower bound, ``=`` a tie, ``?`` unsure)."""
    if cell["winner"] is None:
        return "x"
    m = cell["margin"]
    if m is None or not math.isfinite(m):
        return "?"
    pct = 100.0 * m
    txt = f"{pct:.0f}" if pct >= 9.5 else f"{pct:.1f}"
    if cell["censored"]:
        txt = ">=" + txt
    return txt + {"clear": "", "tie": "=", "unsure": "?"}.get(cell["status"], "")


def _set_items(argv: Sequence[str]) -> list[str]:
    """The ``--set`` items of a command line (what the figure's cells share besides the file)."""
    return [argv[k + 1] for k, a in enumerate(argv[:-1]) if a == "--set"]


def letters(names: Sequence[str]) -> dict:
    """One letter per strategy, in the order given (the map's table and picture)."""
    return {n: chr(ord("A") + k) if k < 26 else "*" for k, n in enumerate(names)}


def cell_versus(cell: dict) -> tuple:
    """(other strategy, margin, status) a map cell shows: the best strategy of another family
    (the rival) when there is one, else the runner-up."""
    if cell.get("rival"):
        return cell["rival"], cell["rival_margin"], cell["rival_status"]
    return cell["runner_up"], cell["margin"], cell["status"]


def plot_map(doc: dict, xa: Any, ya: Any, names: Sequence[str], path: str, *, title: str | None = None) -> str:
    """The map as a heat map: the winner's colour in each cell (one colour per strategy family
    in every map, :func:`strategy_colour`), paler the smaller its margin over the best strategy
    of another family, hatched where that is not clear (a tie or unsure at the seed cap); each
    cell names the winner and that rival by their letters with the margin in %; the file's own
    operating point ringed. Returns ``path``."""
    plt = _pyplot()
    from matplotlib.patches import Patch, Rectangle

    nx, ny = len(xa.texts), len(ya.texts)
    fig_w = min(24.0, max(8.0, 4.6 + 0.7 * nx))
    fig_h = min(20.0, max(4.5, 2.6 + 0.5 * ny))
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    colour = {n: strategy_colour(n) for n in names}
    code = letters(names)
    small = max(4.5, min(9.0, 130.0 / max(nx, ny)))
    for c in doc["cells"]:
        i, j = c["i"], c["j"]
        other, m, status = cell_versus(c)
        if c["winner"] is None:
            face, text = (0.85, 0.85, 0.85), "x"
        else:
            m = m if m is not None else 0.0
            # paler for a smaller margin: full colour from a 30 % margin on
            s = 0.3 + 0.7 * min(1.0, max(0.0, m) / 0.3)
            base = colour[c["winner"]]
            face = tuple(1.0 - s * (1.0 - v) for v in base)
            shown = {**c, "margin": m, "status": status}
            text = code[c["winner"]] + " " + margin_text(shown).replace(">=", "\u2265")
            if other is not None:
                text += f"\nvs {code[other]}"
        clear = status == "clear" or c["winner"] is None
        ax.add_patch(Rectangle((i - 0.5, j - 0.5), 1, 1, facecolor=face, edgecolor="white", linewidth=0.6,
                               hatch=None if clear else "///"))
        ax.text(i, j, text, ha="center", va="center", fontsize=small, color="black", linespacing=0.95)
    point = doc.get("file_point") or {}
    pi, pj = point.get("i"), point.get("j")
    if pi is not None and pj is not None:
        ax.plot([pi], [pj], marker="o", markersize=22, markerfacecolor="none", markeredgecolor="black",
                markeredgewidth=2.0, zorder=5)
    elif pi is not None:  # the file sets only the x key: its column
        ax.axvline(pi, color="black", linewidth=1.5, linestyle="--", zorder=2)  # under the cells' text
    elif pj is not None:
        ax.axhline(pj, color="black", linewidth=1.5, linestyle="--", zorder=2)
    ax.set_xlim(-0.5, nx - 0.5)
    ax.set_ylim(-0.5, ny - 0.5)
    ax.set_xticks(range(nx))
    tilt = sum(len(lb) for lb in xa.labels) > 6 * nx or nx > 8
    ax.set_xticklabels(xa.labels, rotation=45 if tilt else 0, ha="right" if tilt else "center")
    ax.set_yticks(range(ny))
    ax.set_yticklabels(ya.labels)
    ax.set_xlabel(axis_words(xa.key) + (", log spacing" if xa.log else ""))
    ax.set_ylabel(axis_words(ya.key) + (", log spacing" if ya.log else ""))
    ax.grid(False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    what = "TTT" if doc["objective"] == "time" else "cost"
    sc = doc["provenance"]["scenario"]
    cl = sc.get("cluster", {})
    sets = _set_items(doc["provenance"].get("argv", []))
    import textwrap

    width = max(60, int((fig_w - 1.3) * 12))  # characters of a 10-pt title line from the axes to the edge
    lines = [f"{sc.get('name', '')} ({cl.get('gpus', 0):,} GPUs, {cl.get('groups', 0)} groups): which strategy wins "
             f"({doc['objective']})", *([f"--set {' '.join(sets)}"] if sets else []),
             f"each cell: the winner's letter and by how much its {what} beats the best strategy of another family "
             "(vs), %, paired over seeds; paler: a smaller margin"]
    ax.set_title(title or "\n".join(textwrap.fill(t, width) for t in lines), fontsize=10, loc="left")
    handles = [Patch(facecolor=colour[n], label=f"{code[n]} = {n}") for n in names]
    handles.append(Patch(facecolor="white", edgecolor="grey", hatch="///", label="not clear: a tie (=) or unsure (?)"))
    if pi is not None or pj is not None:
        from matplotlib.lines import Line2D

        both = pi is not None and pj is not None
        handles.append(Line2D([], [], marker="o" if both else None, markersize=10, markerfacecolor="none",
                              markeredgecolor="black", color="black", linestyle="none" if both else "--",
                              label="the file's own values" if both else "the file's own value of one key"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
    fig.tight_layout()
    try:
        return save_figure(fig, path)
    finally:
        plt.close(fig)


def plot_breakdown(rows: Sequence[dict], path: str) -> str:
    """Where each strategy's wall time goes, as stacked bars of shares (``rows``: ``strategy``,
    ``wall`` and each part of :func:`spare_core.sim.results.time_breakdown`). Returns ``path``."""
    from ..sim.results import KEPT_STEPS, TIME_PARTS

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.7 + 0.55 * len(rows)))
    names = [r["strategy"] for r in rows]
    left = [0.0] * len(rows)
    colours = ["#4c72b0", "#dd8452", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
    for (key, label), colour in zip(((KEPT_STEPS, KEPT_STEPS), *TIME_PARTS), colours):
        share = [100.0 * r[key] / r["wall"] if r["wall"] > 0 else 0.0 for r in rows]
        ax.barh(names, share, left=left, color=colour, label=label)
        left = [a + b for a, b in zip(left, share)]
    ax.set_xlabel("share of the wall time, %")
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25 if len(rows) > 2 else -0.5), ncol=4, frameon=False,
              fontsize=8)
    fig.tight_layout()
    try:
        return save_figure(fig, path)
    finally:
        plt.close(fig)
