"""``spare map FILE.toml --x KEY --y KEY``: which strategy wins where, and by how much.

Two scenario-file keys (as ``--set`` takes them) span a grid; every cell is the file with
those two values, and on it the strategies (policies of the live registry, each without or
with the file's in-memory checkpoint tier: ``ckpt``, ``ckpt+memory``, ``rep``, ``spare``,
``elastic``) are searched and compared on the same failures by
:func:`spare_core.sim.strategy_map.evaluate_cell`: r and the checkpoint interval found by
search, seeds added only while the winner is not clear. The cells run in local worker
processes (the executor's :func:`~spare_core.sim.map_unordered`; each cell's runs go through
the one executor in its worker). The work is bounded up front (the work budget counts the most
runs every cell may make).

Outputs: a table in the terminal (winner and margin per cell), ``--plot FILE|DIR`` a PNG heat
map (``DIR/map.png``), ``--csv FILE`` one row per cell, ``--json FILE`` every cell with every
strategy's choice and values; all with their provenance, by the one writer.
"""
from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Sequence

from .. import _limits
from .._files import bytes_text, parse_bytes, parse_duration
from .._writer import json_safe
from .._writer import write_json as _write_json
from ..scenario_file import ScenarioFile, ScenarioFileError, load_scenario_file
from ..sim import map_unordered, policy_names
from ..sim.remedies import describe_remedies
from .._results import columns
from ..sim.strategy_map import (MEMORY_SUFFIX, OBJECTIVES, MapCell, MapSettings, Strategy, StrategyPick, evaluate_cell,
                                split_name)
from . import EXIT_INTERRUPTED, UsageError, bounded, horizon_float, positive_int, process_count, seed_count
from .budget import check_counts, check_runs, estimate
from .filejob import describe_job, flag_overrides
from .outputs import check_output_path, check_parquet, check_plot_dir, provenance, write_csv, write_parquet
from .plots import cell_versus, letters, margin_text, plot_map
from .progress import progress_bar
from .text import fmt_duration

HELP = "which strategy wins where: a map over two scenario-file keys, with the margin (PNG, --csv, --json)"

#: the most values along one axis
MAX_AXIS = 1000
#: the file --plot DIR writes
PLOT_FILE = "map.png"
#: why a cell's value is null in the JSON
NULL_REASONS = {
    **{k: {"nan": "one seed, or no runner-up: no interval"} for k in ("margin_low", "margin_high")},
    "margin": {"nan": "no runner-up (one strategy, or nothing finished)"},
    **{k: {"nan": "one seed, or no strategy of another family: no interval"}
       for k in ("rival_margin_low", "rival_margin_high")},
    "rival_margin": {"nan": "no strategy of another family than the winner's"},
}


@dataclass(frozen=True)
class Axis:
    """One axis of the map: the key, the values set (TOML values as ``--set`` takes them), their
    labels and, where numeric, their positions (seconds for a duration)."""

    name: str
    key: str
    texts: tuple
    labels: tuple
    numbers: tuple | None
    log: bool

    def to_dict(self) -> dict:
        return {"key": self.key, "values": [_toml_value(t) for t in self.texts], "labels": list(self.labels),
                "numbers": None if self.numbers is None else list(self.numbers), "log": self.log}


def _toml_value(text: str) -> Any:
    """An axis value as the file reads it (a number, or the text)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip().strip('"').strip("'")


def _quantity(text: str) -> tuple[float, str]:
    """(value, unit) of a number written with a unit: a duration (``"s"``), an amount of bytes
    (``"B"``: ``"2.3 TB"``) or a bandwidth (``"B/s"``: ``"250 GB/s"``); ValueError otherwise."""
    t = text.strip()
    try:
        return parse_duration(t), "s"
    except ValueError:
        pass
    if t.replace(" ", "").lower().endswith("/s"):
        return parse_bytes(t, per_second=True), "B/s"
    return parse_bytes(t), "B"


def _number(text: str, flag: str) -> tuple[float, str]:
    """(value, its unit: "" for a plain number, else :func:`_quantity`'s) of a --x-range bound."""
    try:
        return float(text), ""
    except ValueError:
        pass
    try:
        return _quantity(text)
    except ValueError:
        raise UsageError(f"{flag}: bounds must be numbers, durations ('10 min'), sizes ('2.3 TB') or bandwidths "
                         f"('250 GB/s'), got {text!r}") from None


def _unit_text(v: float, unit: str) -> str:
    """A value in the words of its unit (a map's label)."""
    if unit == "s":
        return fmt_duration(v)
    if unit in ("B", "B/s"):
        return bytes_text(v, per_second=unit == "B/s")
    return _fmt_number(v)


def _fmt_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.4g}"


def build_axis(name: str, key: str, values: Sequence[str] | None, span: Sequence[str] | None, log: bool) -> Axis:
    """The axis of ``--NAME KEY`` with ``--NAME-values`` or ``--NAME-range LO HI N [--NAME-log]``."""
    if not key or "=" in key or not all(p for p in key.split(".")):
        raise UsageError(f"--{name} must be a scenario-file key as --set takes it (e.g. failures.mtbf), got {key!r}")
    if (values is None) == (span is None):
        raise UsageError(f"--{name} {key}: give its values with --{name}-values V [V ...] or --{name}-range LO HI N")
    if values is not None:
        if log:
            raise UsageError(f"--{name}-log goes with --{name}-range, not --{name}-values")
        texts = tuple(str(v) for v in values)
        if len(set(texts)) != len(texts):
            raise UsageError(f"--{name}-values must be distinct, got {' '.join(texts)}")
        if len(texts) > MAX_AXIS:
            raise UsageError(f"--{name}-values: at most {MAX_AXIS} values, got {len(texts)}")
        nums: list[float] | None = []
        units = set()
        for t in texts:
            v = _toml_value(t)
            if isinstance(v, (int, float)):
                nums.append(float(v))
            else:
                try:
                    q, unit = _quantity(v)
                except ValueError:
                    nums = None
                    break
                nums.append(q)
                units.add(unit)
        rng = _limits.range_of(key)
        if nums is not None and rng is not None and rng.unit == "s":
            labels = tuple(fmt_duration(v) for v in nums)
        elif nums is not None and len(units) == 1 and units <= {"B", "B/s"}:
            labels = tuple(_unit_text(v, next(iter(units))) for v in nums)
        else:
            labels = tuple(str(_toml_value(t)) for t in texts)
        return Axis(name, key, texts, labels, None if nums is None else tuple(nums), False)
    lo_t, hi_t, n_t = span
    flag = f"--{name}-range"
    lo, lo_unit = _number(lo_t, flag)
    hi, hi_unit = _number(hi_t, flag)
    try:
        n = int(n_t)
    except ValueError:
        raise UsageError(f"{flag}: N must be an integer >= 2, got {n_t!r}") from None
    if not 2 <= n <= MAX_AXIS:
        raise UsageError(f"{flag}: N must be an integer from 2 to {MAX_AXIS}, got {n}")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise UsageError(f"{flag}: LO must be below HI (both finite), got {lo_t} {hi_t}")
    if log and not lo > 0:
        raise UsageError(f"--{name}-log needs LO > 0, got {lo_t}")
    rng = _limits.range_of(key)
    if lo_unit and hi_unit and lo_unit != hi_unit:
        raise UsageError(f"{flag}: LO and HI must be in the same kind of unit, got {lo_t} {hi_t}")
    unit = lo_unit or hi_unit or ("s" if rng is not None and rng.unit == "s" else "")
    integral = not unit and (rng.kind == "int" if rng is not None else
                             all(t.strip().lstrip("+-").isdigit() for t in (lo_t, hi_t)))
    pts = [lo * (hi / lo) ** (k / (n - 1)) if log else lo + (hi - lo) * k / (n - 1) for k in range(n)]
    if integral:
        nums = tuple(dict.fromkeys(int(round(p)) for p in pts))
        texts = tuple(str(v) for v in nums)
        labels = texts
    else:
        nums = tuple(float(f"{p:.6g}") for p in pts)
        texts = tuple(repr(v) for v in nums)
        labels = tuple(_unit_text(v, unit) for v in nums)
    if len(nums) < 2:
        raise UsageError(f"{flag}: {lo_t} .. {hi_t} holds fewer than 2 distinct values of {key}")
    return Axis(name, key, texts, labels, tuple(float(v) for v in nums), log)


def file_point(data: dict, xa: Axis, ya: Axis) -> dict:
    """Where the file's own values of the two keys (its table after ``--set``) lie on the map:
    ``{"x", "y"}`` the values (None where the file does not set the key), their labels, and
    ``"i"``, ``"j"`` the positions in cell coordinates (None when off the axis or not numeric);
    between two cells it is interpolated, on a log scale for a ``--x-log`` axis."""
    out: dict = {}
    for name, axis, pos in (("x", xa, "i"), ("y", ya, "j")):
        node: Any = data
        for part in axis.key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        out[name], out[pos] = node, None
        out[f"{name}_label"] = None if node is None else str(node)
        if node is None or isinstance(node, (dict, list, bool)):
            continue
        text = str(node)
        shown = [str(_toml_value(t)) for t in axis.texts]
        if text in shown:
            out[pos] = float(shown.index(text))
            out[f"{name}_label"] = axis.labels[int(out[pos])]
            continue
        if axis.numbers is None:
            continue
        try:
            v, unit = (float(node), "") if isinstance(node, (int, float)) else _quantity(text)
        except ValueError:
            continue
        nums = list(axis.numbers)
        rng = _limits.range_of(axis.key)
        out[f"{name}_label"] = _unit_text(v, "s" if rng is not None and rng.unit == "s" else unit)
        order = sorted(range(len(nums)), key=nums.__getitem__)
        xs = [nums[k] for k in order]
        if not xs[0] <= v <= xs[-1]:
            continue
        f = (lambda z: math.log(z)) if axis.log and xs[0] > 0 else (lambda z: z)
        for a, b in zip(range(len(xs) - 1), range(1, len(xs))):
            if xs[a] <= v <= xs[b]:
                w = 0.0 if xs[b] == xs[a] else (f(v) - f(xs[a])) / (f(xs[b]) - f(xs[a]))
                out[pos] = order[a] + w * (order[b] - order[a])
                break
    return out


def add_arguments(parser: Any) -> None:
    """Options of ``spare map``."""
    parser.add_argument("file", metavar="FILE.toml", help="scenario file (see docs/cli.md and examples/)")
    for a in ("x", "y"):
        parser.add_argument(f"--{a}", metavar="KEY", required=True,
                            help=f"the scenario-file key along {a} (as --set takes it, e.g. failures.mtbf)")
        parser.add_argument(f"--{a}-values", nargs="+", metavar="VALUE", default=None,
                            help=f"values of the {a} key (TOML values as --set takes them: 600, '10 min')")
        parser.add_argument(f"--{a}-range", nargs=3, metavar=("LO", "HI", "N"), default=None,
                            help=f"N values of the {a} key from LO to HI (numbers or durations; integers for a count)")
        parser.add_argument(f"--{a}-log", action="store_true", help=f"space the --{a}-range values geometrically")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                        help="override a file value in every cell, e.g. --set repair.spares=16 (repeatable)")
    parser.add_argument("--strategies", nargs="+", metavar="NAME", default=None,
                        help="policies of the registry, NAME+memory with the file's in-memory tier, NAME+evict, "
                             "NAME+rebalance, NAME+pacing with a straggler remedy of the file's [stragglers] "
                             "(default: compare.policies, each +memory when the file has [checkpoint], and each "
                             "+REMEDY of stragglers.remedies)")
    parser.add_argument("--objective", choices=OBJECTIVES, default="time",
                        help="minimise time-to-train or cost (needs costs.gpu_hour) (default: time)")
    parser.add_argument("--seeds", type=seed_count, default=None,
                        help="the most seeds per cell; fewer when the winner is clear (file: compare.seeds)")
    parser.add_argument("--tie", type=bounded(float, 0.0, "a number", 100.0), default=1.0,
                        help="a runner-up within this many %% of the winner (95 %% interval) is a tie (default: 1)")
    parser.add_argument("--r-max", type=positive_int, default=None,
                        help="r searched in 2..R (file: compare.r_max / compare.redundancies)")
    parser.add_argument("--steps", type=positive_int, default=None, help="training steps (file: job.steps)")
    parser.add_argument("--horizon", type=horizon_float, default=None,
                        help="stop a run at this many T0 (file: compare.horizon)")
    parser.add_argument("--processes", type=process_count, default=None,
                        help="worker processes, 0 = one per CPU (file: compare.processes)")
    parser.add_argument("--force", action="store_true",
                        help="run even when the expected work is beyond the budget (docs/cli.md, Budget)")
    parser.add_argument("--json", metavar="FILE", default=None, help="write every cell as JSON, with provenance")
    parser.add_argument("--csv", metavar="FILE", default=None,
                        help="write one row per cell as CSV (provenance in '# ' lines on top)")
    parser.add_argument("--parquet", metavar="FILE", default=None,
                        help="write one row per cell as Parquet (provenance in the schema metadata; needs pyarrow)")
    parser.add_argument("--plot", metavar="FILE|DIR", default=None,
                        help=f"write the map as a PNG (DIR/{PLOT_FILE} for a directory; needs matplotlib)")


def _strategies(args: Any, sf: ScenarioFile) -> list[str]:
    """The strategy names asked for (or the file's default), checked."""
    if args.strategies is not None:
        names = list(args.strategies)
    else:
        names = list(sf.policies)
        if sf.scenario.memory is not None:
            names += [p + MEMORY_SUFFIX for p in sf.policies]
        names += [f"{n}+{r}" for r in sf.remedies for n in list(names)]
    if len(set(names)) != len(names):
        raise UsageError(f"--strategies must be distinct, got {' '.join(names)}")
    known = policy_names()
    for n in names:
        base, memory, remedy = split_name(n)
        if base not in known:
            raise UsageError(f"--strategies: unknown policy {base!r} in {n!r} (registered: {', '.join(known)}; "
                             f"NAME{MEMORY_SUFFIX} adds the file's in-memory tier, NAME+evict, NAME+rebalance and "
                             "NAME+pacing a straggler remedy)")
        if memory and sf.scenario.memory is None:
            raise UsageError(f"--strategies: {n!r} needs an in-memory checkpoint tier: the file has no [checkpoint] "
                             "table")
        if remedy is not None and "stragglers" not in sf.data:
            raise UsageError(f"--strategies: {n!r} weighs a straggler remedy: the file has no [stragglers] table")
        rp = sf.scenario.repair
        if remedy == "evict" and (rp is None or rp.spares == 0):
            raise UsageError(f"--strategies: {n!r} swaps the slow node for a hot spare: the file needs a [repair] "
                             "table with repair.spares >= 1 (or unlimited)")
    return names


def _load(path: str, sets: list, where: str = "", base: ScenarioFile | None = None) -> ScenarioFile:
    """The file with ``sets`` on top: read from ``path`` once, then each cell resolved from the
    table already read (``base``), its log and fit reused."""
    try:
        return load_scenario_file(path, sets) if base is None else base.with_overrides(sets)
    except ScenarioFileError as exc:
        raise UsageError(f"{exc}{where}") from None


def _without_standbys(sf: ScenarioFile) -> ScenarioFile:
    """The file as a cell with ``fleet.standbys = 0`` reads it: without ``fleet.standby_swap`` and
    a ``restart_when = "job+standbys"`` rule (nothing to swap in, nothing to wait for beyond the
    job; the reader refuses both without standbys), as ``spare advise``'s standbys sweep does."""
    fl = sf.data.get("fleet")
    if not isinstance(fl, dict) or ("standby_swap" not in fl and fl.get("restart_when") != "job+standbys"):
        return sf
    kept = {k: v for k, v in fl.items() if k != "standby_swap" and not (k == "restart_when" and v == "job+standbys")}
    return dataclasses.replace(sf, data={**sf.data, "fleet": kept})


def _settings(args: Any, sf: ScenarioFile) -> MapSettings:
    return MapSettings(objective=args.objective, redundancies=sf.redundancies, seeds=len(sf.seeds), tie=args.tie / 100.0)


def _evaluate(task: tuple) -> tuple:
    """One cell in a worker: ``(index, MapCell, None)``, or ``(index, None, (error, traceback))``
    when the cell fails (returned, not raised, so the driver knows which cell it was and keeps
    the cells already finished)."""
    index, scenario, strategies, settings = task
    try:
        return index, evaluate_cell(scenario, strategies, settings), None
    except Exception as exc:  # any failure of one cell: reported with the cell, the map's other cells kept
        import traceback

        return index, None, (f"{type(exc).__name__}: {exc}", traceback.format_exc())


def run(args: Any) -> int:
    """Build the grid, check it whole, run it, print and write the map."""
    xa = build_axis("x", args.x, args.x_values, args.x_range, args.x_log)
    ya = build_axis("y", args.y, args.y_values, args.y_range, args.y_log)
    if xa.key == ya.key:
        raise UsageError(f"--x and --y must be different keys, got {xa.key} twice")
    for flag in ("json", "csv", "parquet"):
        check_output_path(getattr(args, flag), f"--{flag}")
    check_parquet(args.parquet)
    if args.plot is not None:
        if os.path.isdir(args.plot) or not os.path.splitext(args.plot)[1]:
            check_plot_dir(args.plot, files=(PLOT_FILE,))  # created when the map is written
            args.plot = os.path.join(args.plot, PLOT_FILE)
        else:
            check_output_path(args.plot, "--plot")
            check_plot_dir(os.path.dirname(os.path.abspath(args.plot)), files=())  # and matplotlib
    base_sets = list(args.set) + flag_overrides(args)
    sf = _load(args.file, base_sets)
    names = _strategies(args, sf)
    # the strategies' policies are the file's compared ones, so that their options are read
    policies = list(dict.fromkeys(split_name(n)[0] for n in names))
    sf = _load(args.file, [("compare.policies", policies)], base=sf)
    no_standbys = _without_standbys(sf)

    def cell(i: int, j: int) -> tuple:
        """The cell at (i, j), read and checked: ``((i, j), scenario, strategies, settings)``."""
        xv, yv = xa.texts[i], ya.texts[j]
        where = f" (the map's cell {xa.key} = {xa.labels[i]}, {ya.key} = {ya.labels[j]})"
        zero = any(a.key == "fleet.standbys" and _toml_value(v) == 0 for a, v in ((xa, xv), (ya, yv)))
        csf = _load(args.file, [f"{xa.key}={xv}", f"{ya.key}={yv}"], where, base=no_standbys if zero else sf)
        opts = csf.policy_kwargs()
        strategies = [Strategy.parse(n, opts.get(split_name(n)[0])) for n in names]
        settings = _settings(args, csf)
        sc = csf.scenario
        if any(s.memory for s in strategies) and sc.memory is None:
            raise UsageError(f"{args.file}: a +memory strategy needs [checkpoint]{where}")
        rp = sc.repair
        if any(s.remedy == "evict" for s in strategies) and (rp is None or rp.spares == 0):
            raise UsageError(f"{args.file}: a +evict strategy needs a spare (repair.spares >= 1){where}")
        if args.objective == "cost" and sc.pricing is None:
            raise UsageError(f"--objective cost needs the price of a GPU-hour: costs.gpu_hour in the file{where}")
        try:
            for st in strategies:
                rs = [r for r in settings.redundancies if r <= sc.n_groups] if st.uses_redundancy else [None]
                for r in rs or [1]:
                    st.policy_at(r, st.options.get("interval", "auto")).check(sc)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{args.file}: {exc}{where}") from None
        return ((i, j), sc, strategies, settings)

    # refused from the counts before the cells are built (1000 x 1000 axes are 10**6 file
    # reads): too many cells, or work beyond the budget even if every cell cost as little as
    # the cheapest of the grid's corners (--steps 2**31 is refused at once, not after 10**6 reads)
    n_cells = len(xa.texts) * len(ya.texts)
    what = f"{args.file}: the map's {n_cells} cells"
    check_counts(n_cells, n_cells, n_cells, bool(args.force), what)
    corners = [cell(i, j) for i, j in dict.fromkeys((i, j) for i in (0, len(xa.texts) - 1)
                                                    for j in (0, len(ya.texts) - 1))]
    if not args.force:
        ests = [(estimate([c[1]], [n_cells * c[3].max_runs(c[2])]), c) for c in corners]
        if all(e.over() for e, _ in ests):
            _, c = min(ests, key=lambda ec: len(ec[0].over()))
            check_runs([c[1]], [n_cells * c[3].max_runs(c[2])], False,
                       f"{what} (each estimated as its cheapest corner, {xa.key} = {xa.labels[c[0][0]]}, "
                       f"{ya.key} = {ya.labels[c[0][1]]})")
    # every cell read and checked before any run
    done_corners = {c[0]: c for c in corners}
    cells = [done_corners.get((i, j)) or cell(i, j) for j in range(len(ya.texts)) for i in range(len(xa.texts))]
    check_runs([c[1] for c in cells], [c[3].max_runs(c[2]) for c in cells], bool(args.force),
               f"{args.file}: the map's {len(cells)} cells")

    workers = sf.processes or (os.cpu_count() or 1)
    workers = max(1, min(workers, len(cells)))
    # the costliest cells first (failures up to the horizon), so the last tasks are short
    order = sorted(range(len(cells)), key=lambda k: -cells[k][1].max_wall_factor * cells[k][1].t0
                   / max(cells[k][1].system_mtbf, 1e-9))
    tasks = [(k, cells[k][1], cells[k][2], cells[k][3]) for k in order]
    done: dict = {}
    bar = progress_bar(len(tasks), "spare map", unit="cell")
    t0 = time.perf_counter()
    interrupted = False
    failed = None  # (cell index, error, traceback) of the first cell that failed
    try:
        results = (_evaluate(t) for t in tasks) if workers == 1 else map_unordered(_evaluate, tasks, workers)
        for k, cell, error in results:
            if error is not None:
                failed = (k, *error)
                break  # the workers stop; what they finished is kept below
            done[k] = cell
            bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    elapsed = time.perf_counter() - t0

    doc = _document(args, sf, xa, ya, names, cells, done, elapsed, workers, interrupted or failed is not None)
    doc["file_point"] = file_point(sf.data, xa, ya)
    if failed is not None:
        (i, j), error, trace = cells[failed[0]][0], failed[1], failed[2]
        doc["failed"] = {"i": i, "j": j, "x": _toml_value(xa.texts[i]), "y": _toml_value(ya.texts[j]),
                         "error": error, "traceback": trace}
    written = _write(args, doc, xa, ya, names)
    if failed is not None:
        where = f"; kept the {len(done)} finished cells in {', '.join(written)}" if written else ""
        print(f"spare map: the cell {xa.key} = {xa.labels[i]}, {ya.key} = {ya.labels[j]} failed: {error}{where}",
              file=sys.stderr)
        return 1
    if interrupted:
        where = f"; wrote {', '.join(written)}" if written else ""
        print(f"spare map: interrupted after {len(done)}/{len(cells)} cells{where}", file=sys.stderr)
        return EXIT_INTERRUPTED
    for line in describe_job(sf)[:2]:
        print(line)
    print(f"map: {xa.key} ({len(xa.texts)} values) x {ya.key} ({len(ya.texts)} values); strategies "
          f"{', '.join(names)}; objective {args.objective}; at most {cells[0][3].seeds} seeds per cell")
    print()
    for line in _table(doc, xa, ya, names):
        print(line)
    if doc.get("stragglers"):
        st = doc["stragglers"]
        print()
        print(f"stragglers: S = {st['slowdown']:.4f} ({st['source']}); the file's remedies:")
        for name, plan in st["remedies"].items():
            print(f"  +{name}: {plan['note']}")
    print()
    runs = sum(c.runs for c in done.values())
    print(f"{len(done)} cells, {runs} runs in {elapsed:.1f} s on {workers} process(es)")
    for path in written:
        print(f"wrote {path}")
    return 0


def _cell_row(ij: tuple, xa: Axis, ya: Axis, cell: MapCell) -> dict:
    i, j = ij
    d = cell.to_dict()
    return {"i": i, "j": j, "x": _toml_value(xa.texts[i]), "y": _toml_value(ya.texts[j]), **d}


def _document(args, sf, xa, ya, names, cells, done, elapsed, workers, interrupted) -> dict:
    prov = provenance("spare map", getattr(args, "argv", None), scenario=sf.to_dict(),
                      seeds=list(range(cells[0][3].seeds)),
                      timings={"elapsed_seconds": elapsed, "processes": workers,
                               "cells": [{"i": cells[k][0][0], "j": cells[k][0][1], "seconds": c.seconds}
                                         for k, c in sorted(done.items())]},
                      interrupted=interrupted)
    rows = [_cell_row(cells[k][0], xa, ya, c) for k, c in sorted(done.items())]
    won: dict = {n: 0 for n in names}
    status: dict = {}
    for c in done.values():
        if c.winner is not None:
            won[c.winner] += 1
        status[c.status] = status.get(c.status, 0) + 1
    remedies = list(dict.fromkeys(s.remedy for s in cells[0][2] if s.remedy is not None))
    out = {"command": "spare map", "provenance": prov, "objective": args.objective, "x": xa.to_dict(),
           "y": ya.to_dict(), "strategies": [s.to_dict() for s in cells[0][2]], "settings": cells[0][3].to_dict(),
           "cells": rows, "won": won, "status": status}
    st = describe_remedies(sf.scenario, remedies)
    if st is not None:  # at the file's own values (a cell's axis may change what a remedy costs)
        out["stragglers"] = st
    return out


def _cell_text(c: dict | None, code: dict) -> str:
    """A cell as the table shows it: winner>rival and the margin (``W>R12``), ``x`` when
    nothing finished, ``-`` not run."""
    if c is None:
        return "-"
    if c["winner"] is None:
        return "x"
    other, m, status = cell_versus(c)
    vs = f">{code[other]}" if other is not None else ""
    return code[c["winner"]] + vs + margin_text({**c, "margin": m, "status": status})


def _table(doc: dict, xa: Axis, ya: Axis, names: Sequence[str]) -> list[str]:
    """The map as text: winner>rival letters and the margin in %, y from the top."""
    code = letters(names)
    by = {(c["i"], c["j"]): c for c in doc["cells"]}
    cells = {ij: _cell_text(c, code) for ij, c in by.items()}
    w = max(8, max(len(lb) for lb in ya.labels) + 1)
    col = max(7, max(len(lb) for lb in xa.labels) + 1, max((len(t) for t in cells.values()), default=0) + 1)
    what = "TTT" if doc["objective"] == "time" else "cost"
    lines = [f"winner>rival and margin (the best strategy of another family: its {what} over the winner's, %); "
             + ", ".join(f"{code[n]} = {n}" for n in names),
             "  '=' a tie (within --tie), '?' not clear at the seed cap, '>=' a lower bound (a run cut), 'x' nothing "
             "finished", ""]
    lines.append(f"{ya.key:>{w}} | " + "".join(f"{lb:>{col}}" for lb in xa.labels) + f"   <- {xa.key}")
    lines.append("-" * (w + 3 + col * len(xa.labels)))
    for j in reversed(range(len(ya.texts))):
        row = [cells.get((i, j), "-") for i in range(len(xa.texts))]
        lines.append(f"{ya.labels[j]:>{w}} | " + "".join(f"{t:>{col}}" for t in row))
    lines.append("")
    lines.append("cells won: " + ", ".join(f"{n} {doc['won'][n]}" for n in names) + "; "
                 + ", ".join(f"{k} {v}" for k, v in sorted(doc["status"].items())))
    cheap = [c.get("cheapest") for c in doc["cells"] if c.get("cheapest")]
    if cheap and doc.get("objective") == "time":  # the winner in cost beside the winner in time
        lines.append("cheapest (each strategy's choice by time, its mean cost): "
                     + ", ".join(f"{n} {cheap.count(n)}" for n in names)
                     + f"; {sum(1 for c in doc['cells'] if c.get('cheapest') and c['cheapest'] != c['winner'])} "
                     "cell(s) where it is not the winner")
    point = doc.get("file_point") or {}
    if point.get("x") is not None or point.get("y") is not None:
        shown = [f"{a.key} = {point.get(f'{n}_label') or 'not set in the file'}" for n, a in (("x", xa), ("y", ya))]
        ringed = point.get("i") is not None and point.get("j") is not None
        marked = point.get("i") is not None or point.get("j") is not None
        lines.append(f"the file's own values: {', '.join(shown)}"
                     + (" (ringed in the picture)" if ringed else " (a dashed line in the picture)" if marked else ""))
    return lines


def table_columns(xa: Axis, ya: Axis, names: Sequence[str]) -> list[str]:
    """The columns of the map's CSV and Parquet rows, from the declarations: the two keys, every
    declared column of :class:`~spare_core.sim.strategy_map.MapCell`, then every declared
    column of each strategy's :class:`~spare_core.sim.strategy_map.StrategyPick` as
    ``NAME.COLUMN`` (the strategy column itself left out: it is in the name)."""
    cell = [c.name for c in columns(MapCell)]
    pick = [c.name for c in columns(StrategyPick) if c.name != "strategy"]
    return [xa.key, ya.key, *cell, *(f"{n}.{c}" for n in names for c in pick)]


def table_rows(doc: dict, xa: Axis, ya: Axis, names: Sequence[str]) -> list[dict]:
    """One row per cell of the (JSON-safe) document, with :func:`table_columns`."""
    cols = table_columns(xa, ya, names)
    rows = []
    for c in doc["cells"]:
        row = {xa.key: c["x"], ya.key: c["y"], **{k: c[k] for k in cols[2:] if k in c}}
        for p in c["picks"]:
            row.update({f"{p['strategy']}.{k}": v for k, v in p.items() if f"{p['strategy']}.{k}" in cols})
        rows.append({k: row.get(k) for k in cols})
    return rows


def _write(args: Any, doc: dict, xa: Axis, ya: Axis, names: Sequence[str]) -> list[str]:
    """The outputs asked for; returns the paths written."""
    written = []
    safe = json_safe(doc, NULL_REASONS)
    if args.json:
        _write_json(args.json, safe, reasons=NULL_REASONS, indent=1)
        written.append(args.json)
    if args.csv or getattr(args, "parquet", None):
        cols, rows = table_columns(xa, ya, names), table_rows(safe, xa, ya, names)
        if args.csv:
            write_csv(args.csv, rows, safe["provenance"], cols)
            written.append(args.csv)
        if args.parquet:
            write_parquet(args.parquet, rows, safe["provenance"], cols)
            written.append(args.parquet)
    if args.plot and safe["cells"]:
        os.makedirs(os.path.dirname(os.path.abspath(args.plot)), exist_ok=True)
        written.append(plot_map(safe, xa, ya, names, args.plot))
    return written
