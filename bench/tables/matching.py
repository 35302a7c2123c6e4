"""matching: spare_core.graph.matching against scipy's maximum_bipartite_matching, same workloads, same run.

Prints, per graph family and size, our median time, scipy's median time and the ratio
scipy/ours (> 1: we are faster). Repeats alternate between the two so both see the same
machine load; the machine is shared, so read the ratios, not the absolute times. Every
repeat also checks that both found the same matching size.

Families (issue 2, section 5):

a  redundancy-shaped: n shard types, each held by r random groups of S = 2 slots, 5 % of the
   groups removed. Ours takes the group capacities; scipy gets the slot-expanded graph.
b  hard: 600k left vertices, r = 2 random right vertices each, one slot, 10 % of the right
   vertices removed (~1.1M edges); many left vertices cannot be matched.
c  uniform random sparse: nnz edges between 0.6 nnz left and 0.6 nnz right vertices.
d  incremental: 600k shard types on cyclic stacks (r = 3, stack depth S = 2); one group
   fails: ``disable_right`` + ``augment()`` on an IncrementalMatching, timed from Python
   (median and p99 over many failures, each undone afterwards), against a fresh scipy solve
   of the failed graph.
e  tight b-matching: N = 1000 types on cyclic stacks of r = 20, S = 2, right after enough
   random groups failed that S = 2 barely suffices; scipy solves the slot-expanded graph.

"peak extra memory" (b, c) is the tracemalloc peak of one call, kernel scratch and result
included, divided by the caller's indptr + indices bytes; scipy's is measured the same way,
and both again on the same graph with int32 index arrays.

Usage: ``python -m bench.ratios matching [--quick] [--ideas] [--catalogue NAMES] [--methods M] [families]``;
the graphs are built in bench/workloads.py (a-e) and bench/families.py (the catalogue).
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from spare_core.graph.matching import IncrementalMatching, hopcroft_karp

from bench.peers import scipy_size
from bench.workloads import SEED, cyclic_graph, expand_slots, hard_graph, redundancy_graph, tight_case, uniform_graph

METHODS = ("auto", "hopcroft_karp", "pothen_fan", "push_relabel")


# -- timing --------------------------------------------------------------------------------

def paired(ours, peer, repeats, budget=1.0):
    """Alternate the two callables; return (median ours, median peer, results).

    At least ``repeats`` rounds, more (up to 101) while the rounds so far took under
    ``budget`` seconds, so that millisecond cases get enough rounds for a stable median on a
    shared machine.
    """
    to, tp = [], []
    ro = rp = None
    start = time.perf_counter()
    rounds = 0
    while rounds < repeats or (rounds < 101 and time.perf_counter() - start < budget):
        rounds += 1
        t0 = time.perf_counter()
        ro = ours()
        t1 = time.perf_counter()
        rp = peer()
        t2 = time.perf_counter()
        to.append(t1 - t0)
        tp.append(t2 - t1)
        if ro != rp:
            raise SystemExit(f"size mismatch: ours {ro}, scipy {rp}")
    return float(np.median(to)), float(np.median(tp)), ro


def row(family, label, nnz, t_ours, t_peer, extra=""):
    print(f"{family:<2} {label:<28} {nnz:>10,} {t_ours * 1e3:>11.2f} {t_peer * 1e3:>11.2f} "
          f"{t_peer / t_ours:>8.1f}x  {extra}", flush=True)


def header():
    print(f"{'':<2} {'case':<28} {'edges':>10} {'ours ms':>11} {'scipy ms':>11} {'ratio':>9}")


def peak_extra_bytes(fn) -> int:
    """Peak of all allocations made during ``fn`` (tracemalloc), the result included.

    tracemalloc sees Python objects, numpy buffers and the kernel's own scratch (the
    transpose for pruning, the greedy's flags, the degree sort's buckets: allocated with
    PyMem_RawMalloc, which it traces), so this is everything the call adds on top of the
    caller's graph.
    """
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def graph_bytes(g) -> int:
    """The input graph: the caller's CSR structure, indptr + indices bytes (not ``data``,
    which a matching never reads)."""
    return g.indices.nbytes + g.indptr.nbytes


def memory_note(g) -> str:
    """Peak extra memory of one call over the input graph, ours and scipy's, for the graph as
    built (int64 indices here: scipy keeps the int64 coordinates it was given) and for the
    same graph with int32 index arrays (half the denominator; our per-vertex state is the
    same, so the ratio roughly doubles)."""
    g32 = sp.csr_array((g.data, g.indices.astype(np.int32), g.indptr.astype(np.int32)), shape=g.shape)
    out = []
    for label, h in ((str(g.indices.dtype), g), ("int32", g32)):
        ours = peak_extra_bytes(lambda: hopcroft_karp(h)) / graph_bytes(h)
        theirs = peak_extra_bytes(lambda: maximum_bipartite_matching(h, perm_type="column")) / graph_bytes(h)
        out.append(f"{label} indices {ours:.2f}x (scipy {theirs:.2f}x)")
    return "peak extra memory / input graph: " + ", ".join(out)


# -- families a-e ---------------------------------------------------------------------------

def family_a(quick):
    rng = np.random.default_rng([SEED, 1])
    sizes = [(2000, 3), (20000, 5)] if quick else [(10_000, 3), (100_000, 3), (600_000, 2), (600_000, 3),
                                                   (100_000, 10), (30_000, 20)]
    for n, r in sizes:
        g, cap = redundancy_graph(n, r, rng)
        ge = expand_slots(g, cap)
        to, tp, size = paired(lambda: hopcroft_karp(g, capacity=cap).size, lambda: scipy_size(ge),
                              3 if n * r > 500_000 else 5)
        row("a", f"n={n:,} r={r} S=2", g.nnz, to, tp, f"size {size:,}/{n:,}; scipy on {ge.nnz:,} slot edges")


def family_b(quick):
    rng = np.random.default_rng([SEED, 2])
    for n in ([60_000] if quick else [60_000, 600_000]):
        g = hard_graph(n, rng)
        to, tp, size = paired(lambda: hopcroft_karp(g).size, lambda: scipy_size(g), 3 if n > 100_000 else 5)
        row("b", f"n_left={n:,} r=2", g.nnz, to, tp, f"size {size:,}; {memory_note(g)}")


def family_c(quick):
    rng = np.random.default_rng([SEED, 3])
    for nnz in ([1_000, 10_000, 100_000] if quick else [1_000, 10_000, 100_000, 1_000_000]):
        g = uniform_graph(nnz, rng)
        to, tp, size = paired(lambda: hopcroft_karp(g).size, lambda: scipy_size(g),
                              3 if nnz >= 1_000_000 else 7)
        extra = f"size {size:,}, n_left {g.shape[0]:,}"
        if nnz >= 100_000:
            extra += f"; {memory_note(g)}"
        row("c", f"nnz=1e{int(round(np.log10(nnz)))}", g.nnz, to, tp, extra)


def family_d(quick):
    rng = np.random.default_rng([SEED, 4])
    n, r, s = (60_000, 3, 2) if quick else (600_000, 3, 2)
    n_fail = 300 if quick else 2000
    g = cyclic_graph(n, r)
    im = IncrementalMatching(g, capacity=np.full(n, s))
    assert im.size == n
    groups = rng.integers(0, n, n_fail).tolist()
    times = np.empty(n_fail)
    clock = time.perf_counter_ns
    for k, j in enumerate(groups):
        t0 = clock()
        im.disable_right(j)
        size = im.augment()
        times[k] = clock() - t0
        if size != n:
            raise SystemExit(f"repair lost types: {size} < {n}")
        im.enable_right(j)
        im.augment()
    med, p99 = np.median(times) * 1e-9, np.percentile(times, 99) * 1e-9
    cap = np.full(n, s, dtype=np.int64)
    cap[groups[-1]] = 0
    ge = expand_slots(g, cap)
    tp = []
    for _ in range(1 if not quick else 3):
        t0 = time.perf_counter()
        ref = scipy_size(ge)
        tp.append(time.perf_counter() - t0)
    assert ref == n
    tp = float(np.median(tp))
    row("d", f"n={n:,} r={r} S={s} one failure", g.nnz, p99, tp,
        f"p99 {p99 * 1e6:.1f} us, median {med * 1e6:.1f} us over {n_fail} failures; "
        f"ratio vs median {tp / med:,.0f}x")


def family_e(quick):
    rng = np.random.default_rng([SEED, 5])
    n, r, s = (300, 20, 2) if quick else (1000, 20, 2)
    for _ in range(2 if quick else 3):
        g, cap, k = tight_case(n, r, s, rng)
        ge = expand_slots(g, cap)
        to, tp, size = paired(lambda: hopcroft_karp(g, capacity=cap).size, lambda: scipy_size(ge), 3)
        row("e", f"N={n} r={r} S={s} after {k} fails", g.nnz, to, tp, f"size {size}/{n}")


def ideas(quick):
    """What each idea buys on the hard families: kernel variants against scipy, paired."""
    from spare_core.graph._validate import csr_graph as _graph_csr
    from spare_core.graph.matching import _kern

    rng = np.random.default_rng([SEED, 6])
    n = 60_000 if quick else 600_000
    cases = [("b", hard_graph(n, rng)), ("c", uniform_graph(n * 5 // 3, rng)), ]
    variants = [("textbook (vertex-order greedy)", 0, False), ("degree-order greedy", 1, False),
                ("default (fewest-competitors start when tight + pruning)", 1, True), ("Karp-Sipser", 2, False),
                ("Karp-Sipser + pruning", 2, True), ("fewest-competitors greedy", 3, False)]
    print("\nideas: kernel variants (no validation, graph already in CSR), ratio = scipy / variant")
    for fam, g in cases:
        indptr, indices, _, n_right = _graph_csr(g)
        cap = np.ones(n_right, dtype=np.int64)
        for label, start, prune in variants:
            stats = {}

            def ours():
                k = _kern.HKKernel(indptr, indices, cap.copy(), False)
                size = k.solve(start, prune)
                stats.update(phases=k.phases, prunes=k.prunes, work=k.work, start=k.start_size)
                return size

            to, tp, _ = paired(ours, lambda: scipy_size(g), 3)
            row(fam, label, g.nnz, to, tp,
                f"start {stats['start']:,}, phases {stats['phases']}, prunes {stats['prunes']}, "
                f"work {stats['work'] / g.nnz:.1f}|E|")


def catalogue(quick, names=None, methods=("auto",)):
    """bench/families.py: every family at 1e3 ... full size, each method against scipy.

    One row per (family, size): the median time of scipy and of each method over rounds that
    run them all in turn (same machine load for all), from the caller's graph to the result
    (validation and the wrapper's fixed cost included); every result's size is checked equal
    to scipy's. Rounds: as many as fit in about a second (up to 101, at least 3); a single
    round where scipy alone takes over 10 s (chain at 1e6).
    """
    from bench import families as fam

    print("\ncatalogue (bench/families.py): median ms, ratio = scipy / ours, wrapper included")
    print(f"{'family':<11} {'edges':>10} {'scipy ms':>10} " + " ".join(f"{m:>22}" for m in methods))
    for name in names or fam.FAMILIES:
        _, full, _ = fam.FAMILIES[name]
        for nnz in fam.sizes(full, quick):
            g, cap = fam.make(name, nnz)
            ge = g if cap is None else expand_slots(g, cap)
            runs = [m for m in methods if cap is None or m != "push_relabel"]
            times = {m: [] for m in ["scipy", *runs]}
            chose = ""
            start = time.perf_counter()
            rounds = 0
            while rounds < 3 or (rounds < 101 and time.perf_counter() - start < 1.0):
                rounds += 1
                t0 = time.perf_counter()
                ref = scipy_size(ge)
                times["scipy"].append(time.perf_counter() - t0)
                for m in runs:
                    t0 = time.perf_counter()
                    res = hopcroft_karp(g, capacity=cap, method=m)
                    times[m].append(time.perf_counter() - t0)
                    size = res.size
                    if m == "auto":
                        chose = f"{res.method} from the {res.searched_from}"
                    if size != ref:
                        raise SystemExit(f"{name} {nnz}: {m} found {size}, scipy {ref}")
                if times["scipy"][0] > 10.0:
                    break
            med = {m: float(np.median(v)) for m, v in times.items()}
            cells = [f"{med[m] * 1e3:>10.3f} ms {med['scipy'] / med[m]:>6.1f}x" if m in med else f"{'-':>22}"
                     for m in methods]
            note = f"  auto: {chose}" if "auto" in runs else ""
            print(f"{name:<11} {g.nnz:>10,} {med['scipy'] * 1e3:>10.3f} " + " ".join(cells) + note, flush=True)


def add_arguments(p):
    p.add_argument("--ideas", action="store_true", help="also time the kernel variants on (b), (c)")
    p.add_argument("--methods", default="auto",
                   help="comma-separated methods for the catalogue (default auto; 'all' for every one)")
    p.add_argument("--catalogue", default="",
                   help="comma-separated bench/families.py names ('all'); with no families given, "
                        "only the catalogue runs")
    p.add_argument("families", nargs="*", default=None, help="subset of a b c d e")


def run(args) -> int:
    fams = args.families if args.families else ([] if args.catalogue else list("abcde"))
    if fams:
        header()
    for f in fams:
        globals()[f"family_{f}"](args.quick)
    if args.catalogue or not args.families:
        methods = METHODS if args.methods == "all" else tuple(args.methods.split(","))
        names = None if args.catalogue in ("", "all") else args.catalogue.split(",")
        catalogue(args.quick, names, methods)
    if args.ideas:
        ideas(args.quick)
    return 0
