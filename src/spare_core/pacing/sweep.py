"""Node-count sweep with and without pacing, and scaling efficiency (``spare pacing``)."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._validate import as_int, as_int_array
from .controllers import BaselinePacer, NoPacing
from .model import PacingScenario
from .simulate import IterationStats, simulate_iterations

__all__ = ["DEFAULT_NODE_COUNTS", "SweepRow", "PacingSweepResult", "node_sweep", "scaling_efficiency"]

DEFAULT_NODE_COUNTS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)


def scaling_efficiency(node_counts, mean_times) -> np.ndarray:
    """Weak-scaling efficiency relative to the first entry.

    With a fixed batch per rank, throughput is proportional to ``nodes / mean_time``;
    efficiency is throughput per node relative to the first (smallest) configuration,
    i.e. ``mean_times[0] / mean_times``.

    Parameters
    ----------
    node_counts : array_like of int
        Node counts (> 0), same length as ``mean_times``.
    mean_times : array_like of float
        Mean iteration times (> 0).

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> scaling_efficiency([4, 8], [1.0, 1.25]).tolist()
    [1.0, 0.8]
    """
    nodes = as_int_array(node_counts, "node_counts", min_value=1)
    t = np.array(mean_times, dtype=np.float64)
    if t.shape != nodes.shape or t.size == 0 or not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError("mean_times must be finite, > 0 and as long as node_counts")
    thr_per_node = 1.0 / t      # (nodes / t) / nodes
    return thr_per_node / thr_per_node[0]


@dataclass(frozen=True)
class SweepRow:
    """One (node count, pacing on/off) cell of the sweep."""

    n_nodes: int
    paced: bool
    stats: IterationStats
    efficiency: float

    def to_dict(self) -> dict:
        """The row as a JSON-serialisable dict (``pacing`` is the on/off flag)."""
        d = {"n_nodes": self.n_nodes, "pacing": self.paced, "efficiency": self.efficiency}
        d.update(self.stats.to_dict())
        return d


@dataclass(frozen=True)
class PacingSweepResult:
    """Rows of a :func:`node_sweep` with a text table and JSON export."""

    rows: tuple
    n_iterations: int
    replicas: int
    seed: int
    pacer: str

    def row(self, n_nodes: int, paced: bool) -> SweepRow:
        for r in self.rows:
            if r.n_nodes == n_nodes and r.paced == paced:
                return r
        raise KeyError(f"no row for n_nodes={n_nodes}, paced={paced}")

    def table(self) -> str:
        """Fixed-width text table: one line per node count, off | on columns."""
        head = (f"{'nodes':>6} {'ranks':>7} | {'mean s':>7} {'p99 s':>7} {'CV':>6} {'eff':>5} | "
                f"{'mean s':>7} {'p99 s':>7} {'CV':>6} {'eff':>5} {'paced':>5} | {'thr gain':>8} {'CV ratio':>8}")
        label = "pacing: " + self.pacer.split("(")[0]
        lines = [f"{'':>14} | {'no pacing':^29} | {label:^35} |", head, "-" * len(head)]
        for n in sorted({r.n_nodes for r in self.rows}):
            a, b = self.row(n, False), self.row(n, True)
            gain = b.stats.throughput / a.stats.throughput - 1.0
            ratio = b.stats.cv / a.stats.cv if a.stats.cv > 0 else float("nan")
            lines.append(
                f"{n:>6} {a.stats.n_ranks:>7} | {a.stats.mean:>7.4f} {a.stats.p99:>7.4f} {a.stats.cv:>6.3f} "
                f"{a.efficiency:>5.2f} | {b.stats.mean:>7.4f} {b.stats.p99:>7.4f} {b.stats.cv:>6.3f} "
                f"{b.efficiency:>5.2f} {b.stats.fraction_paced:>5.2f} | {gain:>+8.1%} {ratio:>8.2f}")
        lines.append(f"pacer: {self.pacer}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Settings and every row as a JSON-serialisable dict."""
        return {"n_iterations": self.n_iterations, "replicas": self.replicas, "seed": self.seed,
                "pacer": self.pacer,
                "rows": [r.to_dict() for r in self.rows]}

    def to_json(self, path) -> None:
        """Write :meth:`to_dict` to ``path`` (indented strict JSON, atomically, through a symlink;
        the library's one writer, :mod:`spare_core._writer`)."""
        from .._writer import write_json

        write_json(path, self.to_dict(), indent=2)

    def __repr__(self) -> str:
        nodes = sorted({r.n_nodes for r in self.rows})
        return f"PacingSweepResult(node_counts={nodes}, n_iterations={self.n_iterations}, pacer={self.pacer})"


def _average(stats):
    """Field-wise mean of per-replica IterationStats (throughput from the mean time)."""
    mean = float(np.mean([s.mean for s in stats]))
    return IterationStats(
        n_iterations=sum(s.n_iterations for s in stats), n_ranks=stats[0].n_ranks, mean=mean,
        p50=float(np.mean([s.p50 for s in stats])), p99=float(np.mean([s.p99 for s in stats])),
        cv=float(np.mean([s.cv for s in stats])), throughput=stats[0].n_ranks / mean,
        fraction_paced=float(np.mean([s.fraction_paced for s in stats])),
        mean_incast=float(np.mean([s.mean_incast for s in stats])))


def node_sweep(node_counts=DEFAULT_NODE_COUNTS, *, n_iterations: int = 1000, replicas: int = 3,
               seed: int = 0, base: PacingScenario | None = None, pacer=None) -> PacingSweepResult:
    """Simulate the default scenario (or ``base``) at each node count, unpaced and paced.

    Both runs at a node count share the seed, so they see the same stragglers, episodes
    and network draws (common random numbers): their difference is the pacing alone.
    Each cell averages ``replicas`` independent clusters (persistent outliers, locality
    and ring order redrawn), because at small node counts whether the job contains a
    1.5x outlier is a matter of luck; statistics are replica means (CV, p99 are computed
    within each replica, then averaged). Rank r has the same persistent speed at every
    node count within a replica.

    Parameters
    ----------
    node_counts : sequence of int
        Node counts (>= 1, distinct).
    n_iterations : int
        Iterations per run (>= 1).
    replicas : int
        Independent clusters per cell (>= 1).
    seed : int
        Root seed (>= 0).
    base : PacingScenario, optional
        Template whose ``n_nodes`` is replaced; default :class:`PacingScenario` defaults.
    pacer : PacingController, optional
        Controller of the paced runs; default :class:`BaselinePacer` (switches itself
        off where pacing buys nothing; :class:`SpreadPacer` is the absolute-threshold
        alternative).

    Returns
    -------
    PacingSweepResult
        Efficiency is relative to the smallest node count without pacing.

    Examples
    --------
    >>> r = node_sweep([2, 4], n_iterations=50, seed=1)
    >>> len(r.rows)
    4
    """
    nodes = as_int_array(node_counts, "node_counts", min_value=1)
    if nodes.size == 0 or np.unique(nodes).size != nodes.size:
        raise ValueError(f"node_counts must be non-empty and distinct, got {nodes.tolist()}")
    n_iter = as_int(n_iterations, "n_iterations", min_value=1)
    n_rep = as_int(replicas, "replicas", min_value=1)
    seed = as_int(seed, "seed", min_value=0)
    if base is not None and not isinstance(base, PacingScenario):
        raise TypeError(f"base must be a PacingScenario, got {type(base).__name__}")
    base = PacingScenario(n_nodes=1) if base is None else base
    pacer = BaselinePacer() if pacer is None else pacer
    nodes = np.sort(nodes)
    stats = {}
    for n in nodes.tolist():
        sc = replace(base, n_nodes=n)
        for paced, ctrl in ((False, NoPacing()), (True, pacer)):
            stats[n, paced] = _average([
                simulate_iterations(sc, n_iter, controller=ctrl,
                                    seed=np.random.SeedSequence(seed, spawn_key=(i,))).stats()
                for i in range(n_rep)])
    ref = stats[int(nodes[0]), False].mean
    rows = tuple(SweepRow(n, paced, s, ref / s.mean) for (n, paced), s in stats.items())
    return PacingSweepResult(rows=rows, n_iterations=n_iter, replicas=n_rep, seed=seed, pacer=repr(pacer))
