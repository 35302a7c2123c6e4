"""flow: peer ratios for spare_core.graph.flow: ours vs OR-Tools SimpleMinCostFlow vs networkx.

Same instance, same run, interleaved repeats; every timing goes from the caller's numpy
arrays to the per-arc flows (conversion included) and every solver's optimal cost is
checked against ours; networkx is interleaved too up to 1e4 arcs and timed once beyond.
Calls under 20 ms are timed as a loop of calls divided by their number (each call
still from the caller's arrays; the loop length is fixed per solver from its first
call). The machine is shared, so the table reports medians of CPU time
(``time.process_time``: what the solver itself consumed, insensitive to other jobs
stealing the core) and, for reference, the median wall time of ours.

Families (``workloads.FLOW_FAMILIES``; every instance from a seeded generator):

- ``reassign``: RECTLR's own reassignment network (``workloads.make_reassign``, s-t);
- ``user-st-<c>`` / ``user-sup-<c>``: the reassignment network as another simulator writes
  it (``workloads.user_reassign``: penalty arcs of cost 1000, transfer costs up to ``c`` =
  15, 200, 10000), given to ``max_flow_min_cost`` (s-t) or to ``min_cost_flow`` (supplies);
- ``generic``: NETGEN-like (``workloads.make_generic``, costs up to 1e4, 1 % sources and
  sinks);
- ``netgen-wide``: NETGEN-like with 5 % sources and sinks, out-degree 16, costs up to 100
  (``workloads.netgen_wide``), and ``grid``: a GRIDGEN/GOTO-like grid with random shortcuts
  (``workloads.grid``): generic shapes the network simplex's defaults were not tuned on.

The "method" column is ``FlowResult.method``: what ``method="auto"`` ran.

Usage::

    python -m bench.ratios flow            # every family, 1e3..1e6 arcs (several minutes)
    python -m bench.ratios flow --quick    # 1e3, 1e4 arcs (seconds)
    python -m bench.ratios flow --family generic --family user-st-200   # some families
    python -m bench.ratios flow --sizes 1000,1000000                    # some sizes
    python -m bench.ratios flow --methods  # our methods against each other (the data
                                           # behind method="auto"), 1e3..1e5 arcs

Targets (issue 15): reassignment networks (either formulation, conversion included)
>= 10x OR-Tools at 1e6 arcs with transfer costs < 16 and >= 5x with costs up to a few
hundred; generic NETGEN-like >= 3x at 1e6; never slower than OR-Tools from 1e3 arcs;
>= 100x networkx wherever networkx finishes.
"""
from __future__ import annotations

import statistics
import time

from bench.peers import solve_networkx, solve_ortools, solve_ours, solve_ours_result
from bench.workloads import FLOW_FAMILIES, make_generic, make_reassign

METHODS = ("ssp", "cost_scaling", "network_simplex")


# Calls shorter than this are timed in a loop of ``number`` calls (per peer, chosen
# from its first call) and divided: a single 50-microsecond call is at the mercy of one
# context switch on a shared machine. Every call still starts from the caller's arrays.
MIN_BLOCK_SECONDS = 0.02


def _timed(fn, inst, number=1):
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(number):
        out = fn(inst)
    return (time.process_time() - c0) / number, (time.perf_counter() - w0) / number, out[1]


def _calls_per_block(fn, inst) -> int:
    """1 for calls of MIN_BLOCK_SECONDS or more, else enough calls to fill that time."""
    first, _, _ = _timed(fn, inst)
    return 1 if first >= MIN_BLOCK_SECONDS else min(1000, max(1, int(MIN_BLOCK_SECONDS / max(first, 1e-6))))


def measure(family: str, arcs: int, repeats: int):
    make, networkx_max = FLOW_FAMILIES[family]
    inst = make(arcs, seed=1)
    peers = {"ours": solve_ours}
    try:
        import ortools  # noqa: F401

        peers["ortools"] = solve_ortools
    except ImportError:
        pass
    late = {}
    if arcs <= networkx_max:
        try:
            import networkx  # noqa: F401
        except ImportError:
            pass
        else:
            # Interleaved with the others where a call takes well under a second; one
            # call after them beyond (tens of seconds per call).
            (peers if arcs <= 10**4 else late)["networkx"] = solve_networkx
    number = {name: _calls_per_block(fn, inst) for name, fn in peers.items()}
    cpu = {k: [] for k in peers}
    wall = {k: [] for k in peers}
    costs = {}
    for _ in range(repeats):
        for name, fn in peers.items():
            c, w, cost = _timed(fn, inst, number[name])
            cpu[name].append(c)
            wall[name].append(w)
            costs[name] = cost
    for name, fn in late.items():
        c, w, cost = _timed(fn, inst)
        cpu[name] = [c]
        costs[name] = cost
    if len(set(costs.values())) != 1:
        raise SystemExit(f"{family} {arcs}: optimal costs disagree: {costs}")
    med = {k: statistics.median(v) for k, v in cpu.items()}
    method = solve_ours_result(inst).method
    return inst.arcs, med, statistics.median(wall["ours"]), med.pop("networkx", None), method


def compare_methods(sizes) -> None:
    """Median CPU milliseconds of every method of ours on both families (interleaved repeats;
    the generic family also with small costs, where SSP needs few phases)."""
    cases = [("reassign", {}), ("generic", {}), ("generic", {"max_cost": 10})]
    print("median CPU milliseconds per method (interleaved repeats); optimal costs checked equal")
    print(f"{'family':9} {'max_cost':>8} {'arcs':>8} " + " ".join(f"{m:>15}" for m in METHODS) + f" {'auto':>15}")
    for family, kw in cases:
        for arcs in sizes:
            inst = (make_reassign if family == "reassign" else make_generic)(arcs, seed=1, **kw)
            names = METHODS + ("auto",)
            cpu = {m: [] for m in names}
            costs = set()
            for _ in range(5 if arcs <= 10**4 else 3):
                for m in names:
                    c, _, cost = _timed(lambda i: solve_ours(i, method=m), inst)
                    cpu[m].append(c)
                    costs.add(cost)
            if len(costs) != 1:
                raise SystemExit(f"{family} {arcs}: optimal costs disagree: {costs}")
            label = str(kw.get("max_cost", "-" if family == "reassign" else 10_000))
            print(f"{family:9} {label:>8} {inst.arcs:8d} "
                  + " ".join(f"{1e3 * statistics.median(cpu[m]):15.3f}" for m in names), flush=True)


def add_arguments(p):
    p.add_argument("--methods", action="store_true",
                   help="our methods against each other (the data behind method='auto'), 1e3..1e5 arcs")
    p.add_argument("--family", action="append", default=[], choices=list(FLOW_FAMILIES), metavar="NAME",
                   help=f"a family (repeat for several; default all): {', '.join(FLOW_FAMILIES)}")
    p.add_argument("--sizes", default=None, help="comma-separated arc counts (default 1e3..1e6, --quick 1e3,1e4)")


def run(args) -> int:
    if args.methods:
        compare_methods([10**3, 10**4, 10**5])
        return 0
    sizes = [10**3, 10**4] if args.quick else [10**3, 10**4, 10**5, 10**6]
    if args.sizes:
        sizes = [int(float(x)) for x in args.sizes.split(",")]
    print("median CPU seconds (time.process_time), ratio = peer / ours; costs checked equal")
    header = (f"{'family':14} {'arcs':>8} {'method (auto)':>15} {'ours':>9} {'ours wall':>9} {'ortools':>9} "
              f"{'x ortools':>9} {'networkx':>9} {'x networkx':>10}")
    print(header)
    for family in args.family or FLOW_FAMILIES:
        for arcs in sizes:
            repeats = 5 if arcs <= 10**5 else 3
            m, med, ours_wall, nx_cpu, method = measure(family, arcs, repeats)
            ours = med["ours"]
            ort = med.get("ortools")
            # Three significant digits: a 1e3-arc call takes tens of microseconds.
            row = f"{family:14} {m:8d} {method:>15} {ours:9.3g} {ours_wall:9.3g} "
            row += f"{ort:9.3g} {ort / ours:9.1f} " if ort is not None else f"{'-':>9} {'-':>9} "
            row += f"{nx_cpu:9.3g} {nx_cpu / ours:10.0f}" if nx_cpu is not None else f"{'-':>9} {'-':>10}"
            print(row, flush=True)
    return 0
