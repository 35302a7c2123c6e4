"""map: ``spare map`` at 100k GPUs, 20 x 20 cells, five strategies, against the grid it replaces.

``python -m bench.ratios map [--quick] [--repeats 3] [--grid-cells 2]``, in one run:

1. *The map*: ``spare map examples/llama3_16k_strategies.toml`` at 102,400 GPUs (800 groups
   of 128; ``--set cluster.gpus=102400 elastic.microbatches=2 repair.spares=300``: the same
   2,048-sequence batch gives each group about 2.5 sequences, and 300 spares are twice the
   nodes in repair at the highest failure rate), strategies ckpt, ckpt+memory, rep, spare,
   elastic, x = ``failures.mtbf`` 10 min .. 4 h and y = ``repair.swap`` 1 min .. 2 h (20
   values each, geometric), ``--horizon 5``, ``--processes 2``: the median wall time over
   the repeats (target <= 300 s on 2 cores), the CPU seconds of the command and its workers,
   cells, runs and runs per second; and ``spare compare`` (the main job) timed in the same
   run, interleaved with the map's repeats, as the yardstick (target: the 20 x 20 map within
   10 times its wall). ``--quick``: 4 x 4 cells.
2. *Where the time goes*: CPU seconds of the cells by failure rate (the x column), and a
   profile of the costliest cell (functions by own time).
3. *The grid it replaces* (the peer a user would write): every strategy at every r of the
   file's 2..8 and at 7 checkpoint intervals (1/4 to 16 times its closed form, factors of
   2) on the map's most seeds, on ``--grid-cells`` cells of the map, through the same
   executor: runs and CPU seconds next to the map's on those cells, and whether the grid's
   best strategy is the map's winner.

The machine is shared: read the CPU seconds and ratios, and time it when it is otherwise idle.
"""
from __future__ import annotations

import contextlib
import cProfile
import io
import json
import math
import os
import pstats
import resource
import statistics
import tempfile
import time
from pathlib import Path

from spare_core.cli import main
from spare_core.scenario_file import load_scenario_file
from spare_core.sim import Study, execute
from spare_core.sim.strategy_map import MapSettings, Strategy, evaluate_cell

FILE = Path(__file__).resolve().parents[2] / "examples" / "llama3_16k_strategies.toml"
SETS = ["cluster.gpus=102400", "elastic.microbatches=2", "repair.spares=300", "compare.horizon=5"]
STRATEGIES = ["ckpt", "ckpt+memory", "rep", "spare", "elastic"]
X = ("failures.mtbf", "10 min", "4 h")
Y = ("repair.swap", "1 min", "2 h")


def _argv(n: int, out: str) -> list:
    sets = [a for s in SETS for a in ("--set", s)]
    return ["map", str(FILE), *sets, "--strategies", *STRATEGIES, "--x", X[0], "--x-range", X[1], X[2], str(n),
            "--x-log", "--y", Y[0], "--y-range", Y[1], Y[2], str(n), "--y-log", "--processes", "2", "--json", out]


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _one_map(n: int, out: str) -> tuple:
    c, t = _cpu(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(_argv(n, out))
    assert code == 0, code
    return time.perf_counter() - t, _cpu() - c


def _one_compare() -> tuple:
    """``spare compare`` (the main job, 615 runs on 2 processes): the yardstick of the map's wall."""
    c, t = _cpu(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["compare", "--processes", "2"])
    assert code == 0, code
    return time.perf_counter() - t, _cpu() - c


def _cell_scenario(doc: dict, i: int, j: int):
    xv, yv = doc["x"]["values"][i], doc["y"]["values"][j]
    return load_scenario_file(FILE, SETS + [f"{X[0]}={xv!r}", f"{Y[0]}={yv!r}"])


def _grid(sf, names, seeds: int) -> tuple:
    """Every strategy at every r and 7 intervals on ``seeds`` seeds: (runs, CPU s, best strategy)."""
    opts = sf.policy_kwargs()
    t = time.process_time()
    runs, means = 0, {}
    for name in names:
        st = Strategy.parse(name, opts.get(name.split("+")[0], {}))
        sc = sf.scenario if st.memory else sf.scenario.replace(memory=None)
        rs = [r for r in sf.redundancies if r >= 2] if st.uses_redundancy else [None]
        for r in rs:
            base = st.policy_at(r, "auto").checkpoint_interval(sc).seconds
            base = base or st.policy_at(r, "young").checkpoint_interval(sc).seconds
            study = Study([sc], [st.policy_at(r, "auto")], intervals=[base * 2.0 ** (k / 2) for k in range(-4, 9, 2)],
                          seeds=seeds, streams="seed")
            res = execute(study, workers=1)
            runs += len(res.runs)
            for s in res.summaries:
                m = statistics.mean(x.wall_time / x.t0 for x in res.cell_runs(s))
                means[name] = min(means.get(name, math.inf), m)
    return runs, time.process_time() - t, min(means, key=means.get), means


def add_arguments(p):
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--grid-cells", type=int, default=2, help="cells on which the full grid is timed (0: none)")


def run(args) -> int:
    n = 4 if args.quick else 20
    reps = 1 if args.quick else args.repeats
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "map.json")
        walls, cpus, cmp_walls = [], [], []
        for _ in range(reps):  # interleaved, so that both see the same load
            w, c = _one_map(n, out)
            walls.append(w)
            cpus.append(c)
            cmp_walls.append(_one_compare()[0])
        doc = json.loads(Path(out).read_text())
    cells = doc["cells"]
    runs = sum(c["runs"] for c in cells)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"1. spare map, {n} x {n} cells, {len(STRATEGIES)} strategies, 102,400 GPUs (800 groups), 2 processes, "
          f"{reps} repeat(s)")
    cmp_wall = statistics.median(cmp_walls)
    print(f"   wall {wall:7.1f} s (median; each: {', '.join(f'{w:.1f}' for w in walls)}), target <= 300 s")
    print(f"   spare compare in the same run: wall {cmp_wall:.1f} s (median; each: "
          f"{', '.join(f'{w:.1f}' for w in cmp_walls)}): the map takes {wall / cmp_wall:.1f}x it "
          f"(target <= 10x at 20 x 20)")
    print(f"   CPU  {cpu:7.1f} s (this process and its workers), {runs} runs, {runs / wall:.0f} runs/s, "
          f"{runs / len(cells):.1f} runs and {sum(c['seconds'] for c in cells) / len(cells):.2f} s per cell")
    print(f"   cells won: {doc['won']}; {doc['status']}")

    print("2. where the time goes: cell seconds by failures.mtbf (summed over the column)")
    by_x: dict = {}
    for c in cells:
        by_x[c["i"]] = by_x.get(c["i"], 0.0) + c["seconds"]
    total = sum(by_x.values())
    for i, lab in enumerate(doc["x"]["labels"]):
        print(f"   {lab:>10}: {by_x.get(i, 0.0):7.1f} s ({100 * by_x.get(i, 0.0) / total:4.1f} %)")
    top = max(cells, key=lambda c: c["seconds"])
    sf = _cell_scenario(doc, top["i"], top["j"])
    opts = sf.policy_kwargs()
    strategies = [Strategy.parse(s, opts.get(s.split("+")[0], {})) for s in STRATEGIES]
    settings = MapSettings(redundancies=sf.redundancies, seeds=len(sf.seeds))
    prof = cProfile.Profile()
    prof.enable()
    evaluate_cell(sf.scenario, strategies, settings)
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    whole = sum(v[2] for v in stats.stats.values())
    print(f"   the costliest cell ({doc['x']['labels'][top['i']]}, {doc['y']['labels'][top['j']]}): {whole:.2f} s "
          "profiled; own time by function:")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:8]
    for (fname, line, func), (cc, nc, tt, ct, _) in rows:
        print(f"   {100 * tt / whole:5.1f} %  {nc:>8} calls  {Path(fname).name}:{line} {func}")
    # the handlers' Python per event (failures and rejoins of a run with repairs), all it calls
    per_event = sum(v[3] for (f, _, func), v in stats.stats.items() if func == "on_events" and "strategies" in Path(f).parts)
    # a compiled (Cython) function is not seen by cProfile: its time is its caller's own time
    loop = sum(v[2] for (f, _, func), v in stats.stats.items() if func in ("_run_batches", "_restart_epochs"))
    print(f"   cumulative: FailureHandler.on_events (Python per failure and rejoin, RECTLR's included) "
          f"{100 * per_event / whole:.0f} %; the batch loop with the compiled timeline it calls "
          f"{100 * loop / whole:.0f} %")

    if args.grid_cells > 0:
        print(f"3. the grid it replaces: every r of 2..8 x 7 intervals x {len(sf.seeds)} seeds per strategy")
        picks = [(n // 2, max(0, n // 4)), (n // 2, min(n - 1, 3 * n // 4)), (n - 1, n // 2)][: args.grid_cells]
        for i, j in picks:
            sf = _cell_scenario(doc, i, j)
            opts = sf.policy_kwargs()
            strategies = [Strategy.parse(s, opts.get(s.split("+")[0], {})) for s in STRATEGIES]
            t = time.process_time()
            cell = evaluate_cell(sf.scenario, strategies, MapSettings(redundancies=sf.redundancies, seeds=len(sf.seeds)))
            mcpu = time.process_time() - t
            gruns, gcpu, gbest, means = _grid(sf, STRATEGIES, len(sf.seeds))
            print(f"   ({doc['x']['labels'][i]}, {doc['y']['labels'][j]}): map {cell.runs} runs {mcpu:.1f} s, "
                  f"grid {gruns} runs {gcpu:.1f} s: {gcpu / mcpu:.1f}x the CPU; winner map {cell.winner} "
                  f"({cell.status}, margin {100 * cell.margin:.1f} %), grid {gbest} "
                  f"({'same' if gbest == cell.winner else 'DIFFERENT'})")
    return 0
