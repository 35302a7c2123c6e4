"""``spare pacing``: iteration time vs node count, with and without the pacing controller.

Simulates the documented default scenario (docs/pacing.md) at each node count, unpaced
and with a pacing controller (:class:`~spare_core.pacing.BaselinePacer` by default,
``--pacer spread`` for :class:`~spare_core.pacing.SpreadPacer`), on common random numbers,
on a rail-optimised fabric (default) or a top-of-rack one (``--fabric top-of-rack``), and prints
mean, p99, CV, weak-scaling efficiency, fraction of iterations paced, the throughput gain
and the CV ratio of pacing. ``--json FILE`` writes every cell with its provenance (library
version, command line, the whole resolved pacing scenario, node counts, seed, timings: the
same block ``spare run`` writes); ``--plot FILE`` draws CV and throughput per node against
node count when matplotlib is installed.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from dataclasses import replace
from typing import Any

from . import bounded, distinct, positive_int, seed_int
from .budget import check_pacing_work
from .outputs import check_output_path, check_plot_dir, provenance, shown_path, write_json

HELP = "straggler/fabric sweep over node counts with and without pacing (text table, --json, --plot)"


_at_least_one = bounded(float, 1.0, "a number")
_nonneg_float = bounded(float, 0.0, "a number")


def _duty(text):
    value = _nonneg_float(text)
    if value > 1.0:
        raise argparse.ArgumentTypeError(f"must be a probability in [0, 1], got {value}")
    return value


def add_arguments(parser) -> None:
    """Options of ``spare pacing``."""
    from ..pacing import DEFAULT_NODE_COUNTS

    parser.add_argument("--nodes", type=positive_int, nargs="+", default=list(DEFAULT_NODE_COUNTS),
                        metavar="N", help="node counts (default: 4 8 ... 1024)")
    parser.add_argument("--iterations", type=positive_int, default=1000,
                        help="iterations per run (default 1000)")
    parser.add_argument("--replicas", type=positive_int, default=3,
                        help="independent clusters averaged per cell (default 3)")
    parser.add_argument("--seed", type=seed_int, default=0, help="root seed (default 0)")
    parser.add_argument("--force", action="store_true",
                        help="run even when the expected work is beyond the budget (docs/cli.md, Budget)")
    parser.add_argument("--fabric", choices=("rail-optimised", "top-of-rack"), default="rail-optimised",
                        help="switch topology: one leaf per rail per group of nodes (default), or every NIC "
                             "of a node on one top-of-rack leaf (see docs/pacing.md)")
    parser.add_argument("--nodes-per-leaf", type=positive_int, default=None, metavar="N",
                        help="nodes under one leaf (default: 16 rail-optimised, 2 top-of-rack: equal switch ports "
                             "at 8 GPUs per node)")
    parser.add_argument("--oversubscription", type=_at_least_one, default=None,
                        help="leaf oversubscription ratio (default: scenario's 2.0)")
    parser.add_argument("--ring-order", choices=("random", "topology"), default=None,
                        help="node order of the ring (default: scenario's random)")
    parser.add_argument("--background-duty", type=_duty, default=None, metavar="P",
                        help="probability per iteration and leaf that competing traffic holds the leaf's "
                             "shared buffer (default: scenario's 0.1; 1 = always contended)")
    parser.add_argument("--background-run", type=_at_least_one, default=None, metavar="L",
                        help="mean busy run of competing traffic per leaf, in iterations (default: "
                             "independent per iteration); see FabricModel.background_run")
    parser.add_argument("--algorithm", choices=("hierarchical", "ring"), default=None,
                        help="all-reduce algorithm (default: scenario's hierarchical)")
    parser.add_argument("--pacer", choices=("baseline", "spread"), default="baseline",
                        help="controller of the paced runs: BaselinePacer (relative to the collective's "
                             "running baseline, default) or SpreadPacer (absolute arrival-spread threshold)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write per node count and pacing on/off: mean, p99, CV, throughput, fraction paced")
    parser.add_argument("--plot", metavar="FILE|DIR", default=None,
                        help="save a plot (PNG/PDF; DIR/pacing.png for a directory); needs matplotlib")


def _scenario(args):
    from ..pacing import PacingScenario, TopOfRackFabric

    sc = PacingScenario(n_nodes=1)
    topo = {name: value for name, value in (("nodes_per_leaf", args.nodes_per_leaf),
                                            ("oversubscription", args.oversubscription)) if value is not None}
    if args.fabric == "top-of-rack":
        # the topology carries its own leaf size and oversubscription
        topo = {"topology": TopOfRackFabric(**topo)}
    changes = {name: value for name, value in (("ring_order", args.ring_order),
                                               ("background_duty", args.background_duty),
                                               ("background_run", args.background_run))
               if value is not None}
    changes.update(topo)
    if changes:
        sc = replace(sc, fabric=replace(sc.fabric, **changes))
    if args.algorithm is not None:
        sc = replace(sc, collective=replace(sc.collective, algorithm=args.algorithm))
    return sc


def _plot(result, path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot written (pip install 'spare_core[plot]')"
    nodes = sorted({r.n_nodes for r in result.rows})
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for paced, label in ((False, "no pacing"), (True, "pacing")):
        rows = [result.row(n, paced) for n in nodes]
        ax1.plot(nodes, [r.stats.cv for r in rows], marker="o", label=label)
        ax2.plot(nodes, [r.stats.throughput / r.n_nodes for r in rows], marker="o", label=label)
    for ax, ylabel in ((ax1, "iteration-time CV"), (ax2, "throughput per node (rank-it/s)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes")
        ax.set_ylabel(ylabel)
        ax.legend()
    fig.tight_layout()
    from .plots import save_figure

    save_figure(fig, path)
    plt.close(fig)
    return f"plot written to {shown_path(path)}"


def _document(args: Any, base: Any, result: Any, elapsed: float) -> dict[str, Any]:
    """``--json``: the sweep's cells under the provenance every ``spare`` output carries."""
    cells = result.to_dict()
    scenario = {"pacing_scenario": dataclasses.asdict(base), "node_counts": list(args.nodes),
                "n_iterations": args.iterations, "replicas": args.replicas, "pacer": result.pacer}
    prov = provenance("spare pacing", getattr(args, "argv", None), scenario=scenario, seeds=[args.seed],
                      timings={"elapsed_seconds": elapsed})
    return {"command": "spare pacing", "provenance": prov, **cells}


def run(args) -> int:
    """Run the sweep and print the table; 0 on success."""
    from ..pacing import BaselinePacer, SpreadPacer, node_sweep

    # every argument and output path checked before any work
    distinct(args.nodes, "--nodes")
    check_output_path(args.json, "--json")
    if args.plot is not None and args.plot != "-" and (os.path.isdir(args.plot) or not os.path.splitext(args.plot)[1]):
        check_plot_dir(args.plot, files=("pacing.png",))  # a directory to be made: its parent checked
        args.plot = os.path.join(args.plot, "pacing.png")
    if args.plot is None or os.path.isdir(os.path.dirname(os.path.abspath(args.plot))):
        check_output_path(args.plot, "--plot")
    t0 = time.perf_counter()
    try:
        base = _scenario(args)
    except ValueError as exc:  # an inconsistent combination of options (e.g. duty and run)
        print(f"spare pacing: error: {exc}", file=sys.stderr)
        return 2
    check_pacing_work(args.nodes, base.fabric.gpus_per_node, args.iterations, args.replicas,
                      bool(getattr(args, "force", False)))  # before any array of ranks is allocated
    result = node_sweep(args.nodes, n_iterations=args.iterations, replicas=args.replicas,
                        seed=args.seed, base=base,
                        pacer=SpreadPacer() if args.pacer == "spread" else BaselinePacer())
    print(result.table())
    print(f"fabric: {base.fabric.topology_in_use!r}")
    print(f"\n{args.iterations} iterations x {args.replicas} replicas per cell, seed {args.seed}, "
          f"{time.perf_counter() - t0:.1f} s. thr gain = paced/unpaced throughput - 1; "
          "eff = weak-scaling efficiency vs the smallest unpaced run.")
    if args.json:
        elapsed = time.perf_counter() - t0
        write_json(args.json, _document(args, base, result, elapsed))
        print(f"results written to {shown_path(args.json)}")
    if args.plot:
        if args.plot != "-":
            os.makedirs(os.path.dirname(os.path.abspath(args.plot)), exist_ok=True)
        print(_plot(result, args.plot))
    return 0
