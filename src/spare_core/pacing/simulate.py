"""``simulate_iterations``: synchronous data-parallel iterations with stragglers, fabric
contention, incast and an optional pacing controller.

Every random quantity comes from one named stream per source, derived from the run's
:class:`numpy.random.SeedSequence` by a fixed index (persistent GPU speeds, locality
classes, ring order, episodes, per-iteration jitter, ECMP choices). Two runs with the
same seed therefore see the same stragglers and the same network draws whatever the
controller does (common random numbers): paced and unpaced runs differ only by pacing.

References
----------
.. [2] When Scaling Fails: Network and Fabric Effects on Distributed GPU Training
   Performance, arXiv:2603.04424.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._native import load
from .._seeding import as_seed_sequence, child_rng
from .._validate import as_int
from .controllers import BarrierObservation, BaselinePacer, NoPacing, PacingController, SpreadPacer
from .model import PacingScenario, _rail_terms

__all__ = ["simulate_iterations", "IterationResult", "IterationStats", "Realisation"]

_STREAMS = {"speed": 0, "locality": 1, "ring": 2, "episodes": 3, "jitter": 4, "ecmp": 5,
            "outlier": 6, "background": 7}
# rank-iterations of noise drawn per chunk: bounds memory (~8 MB) at any scale
_CHUNK_CELLS = 1 << 20
# recording per-rank arrivals/entries is a test and debugging aid; refuse huge traces
_MAX_RECORD_CELLS = 1 << 24
# episodes are drawn up front (count ~ ranks x rate x simulated time): refuse absurd rates
_MAX_EPISODE_CELLS = 1 << 22


def _stream(root: np.random.SeedSequence, name: str) -> np.random.Generator:
    """The generator of source ``name``: a child of ``root`` at its fixed stream number."""
    return child_rng(root, _STREAMS[name])


@dataclass(frozen=True, eq=False)
class Realisation:
    """The persistent draws of one scenario and seed (what does not change per iteration).

    Attributes
    ----------
    base : ndarray, float64 (p,)
        Nominal compute of each rank including its persistent speed and outlier factor.
    locality : ndarray, int (n_nodes, g)
        GPU-to-NIC locality class of each (node, rail).
    order : ndarray, int (n_nodes,)
        Ring order of the nodes.
    episodes : tuple of ndarrays
        ``(rank, start, end, factor)`` sorted by start iteration (start may be < 0:
        episodes already running when the simulation starts).
    """

    base: np.ndarray
    locality: np.ndarray
    order: np.ndarray
    episodes: tuple

    @classmethod
    def draw(cls, scenario: PacingScenario, n_iterations: int, root: np.random.SeedSequence):
        c, f = scenario.compute, scenario.fabric
        p, n = scenario.n_ranks, scenario.n_nodes
        # one stream per quantity, consumed rank by rank: rank r gets the same GPU speed,
        # outlier status and NIC locality at every job size (nested clusters)
        z = _stream(root, "speed").standard_normal(p)
        speed = np.exp(c.speed_spread * z - 0.5 * c.speed_spread ** 2)
        slow = _stream(root, "outlier").random(p) < c.slow_fraction
        base = c.t_compute * speed * np.where(slow, c.slow_factor, 1.0)
        rng = _stream(root, "locality")
        locality = rng.choice(len(f.locality_probs), size=(n, f.gpus_per_node),
                              p=np.asarray(f.locality_probs, dtype=np.float64))
        rng = _stream(root, "ring")
        order = rng.permutation(n) if f.ring_order == "random" else np.arange(n)
        episodes = _draw_episodes(scenario, n_iterations, _stream(root, "episodes"))
        return cls(base, locality, order, episodes)


def _draw_episodes(scenario, n_iterations, rng):
    c = scenario.compute
    p = scenario.n_ranks
    step = scenario.nominal_step
    # episodes are scheduled in iterations of the nominal step; starting up to one
    # maximal duration before iteration 0 makes the run start in the stationary regime
    lead = math.ceil(c.episode_max / step)
    mean_count = p * c.episode_rate * step * (n_iterations + lead)
    if lead > _MAX_EPISODE_CELLS or mean_count > _MAX_EPISODE_CELLS:
        raise ValueError(
            f"episodes must stay tractable: expected {mean_count:.3g} episodes over {lead} lead-in "
            f"iterations (limit {_MAX_EPISODE_CELLS}); lower episode_rate or episode_max, or raise t_compute")
    count = int(rng.poisson(mean_count)) if mean_count > 0 else 0
    rank = rng.integers(0, p, size=count)
    start = rng.integers(-lead, n_iterations, size=count)
    dur = np.minimum(c.episode_median * np.exp(c.episode_sigma * rng.standard_normal(count)), c.episode_max)
    end = start + np.maximum(1, np.ceil(dur / step)).astype(np.int64)
    keep = end > 0
    idx = np.argsort(start[keep], kind="stable")
    return (rank[keep][idx].astype(np.intp), start[keep][idx].astype(np.int64),
            end[keep][idx].astype(np.int64), np.full(idx.size, c.episode_factor, dtype=np.float64))


class _Statics:
    """Kernel-ready arrays derived from a scenario and its realisation."""

    def __init__(self, scenario: PacingScenario, real: Realisation):
        f = scenario.fabric
        n, g = scenario.n_nodes, f.gpus_per_node
        lat = np.asarray(f.locality_latency, dtype=np.float64)[real.locality]
        der = np.asarray(f.locality_derate, dtype=np.float64)[real.locality]
        # a ring runs at the pace of its worst hop: the worst (node, rail) per rail
        self.t_intra, self.rail_a, self.rail_bw, self.rail_floor = _rail_terms(
            n, f, scenario.collective, lat.max(axis=0), der.max(axis=0))
        self.n_leaves = -(-n // f.nodes_per_leaf)
        self.n_spines = f.n_spines
        if n > 1:
            src = real.order
            dst = np.roll(real.order, -1)
            leaf_s, leaf_d = src // f.nodes_per_leaf, dst // f.nodes_per_leaf
            cross = leaf_s != leaf_d   # flows inside a leaf use its non-blocking crossbar
            self.flow_src = np.ascontiguousarray(src[cross], dtype=np.intp)
            self.flow_src_leaf = np.ascontiguousarray(leaf_s[cross], dtype=np.intp)
            self.flow_dst_leaf = np.ascontiguousarray(leaf_d[cross], dtype=np.intp)
        else:
            self.flow_src = self.flow_src_leaf = self.flow_dst_leaf = np.zeros(0, dtype=np.intp)
        self.base = np.ascontiguousarray(real.base, dtype=np.float64)
        self.episodes = real.episodes


@dataclass(frozen=True)
class IterationStats:
    """Summary of a run's iteration times.

    Attributes
    ----------
    n_iterations, n_ranks : int
    mean, p50, p99 : float
        Iteration time statistics, s.
    cv : float
        Coefficient of variation (std / mean, population std).
    throughput : float
        Rank-iterations per second (``n_ranks / mean``): samples per second at one
        sample per rank and iteration (weak scaling).
    fraction_paced : float
        Fraction of iterations that ran with a hold bound > 0.
    mean_incast : float
        Mean incast penalty per iteration, s.
    """

    n_iterations: int
    n_ranks: int
    mean: float
    p50: float
    p99: float
    cv: float
    throughput: float
    fraction_paced: float
    mean_incast: float

    def __repr__(self) -> str:
        return (f"IterationStats(n_iterations={self.n_iterations}, n_ranks={self.n_ranks}, "
                f"mean={self.mean:.4g}s, p50={self.p50:.4g}s, p99={self.p99:.4g}s, cv={self.cv:.3f}, "
                f"throughput={self.throughput:.4g}/s, fraction_paced={self.fraction_paced:.3f})")

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True, eq=False)
class IterationResult:
    """Per-iteration output of :func:`simulate_iterations`.

    Attributes
    ----------
    scenario : PacingScenario
    controller : str
        ``repr`` of the controller used.
    time : ndarray (n,)
        Iteration times, s.
    arrival_max, spread : ndarray (n,)
        Slowest rank's arrival (s) and arrival spread ``(max - min) / mean``.
    hold : ndarray (n,)
        Hold bound applied (0 = not paced).
    held : ndarray (n,)
        Longest hold any rank actually served (certificate: ``0 <= held <= hold``).
    incast : ndarray (n,)
        Incast penalty of the worst shared link, s.
    contention : ndarray (n,)
        Flows on the most loaded fabric link.
    paced : ndarray of bool (n,)
    nominal_step : float
        Jitter-free, uncontended iteration time of the scenario, s.
    arrivals, entries : ndarray (n, p) or None
        Per-rank arrival and collective entry times when ``record_ranks=True``.
    """

    scenario: PacingScenario
    controller: str
    time: np.ndarray
    arrival_max: np.ndarray
    spread: np.ndarray
    hold: np.ndarray
    held: np.ndarray
    incast: np.ndarray
    contention: np.ndarray
    paced: np.ndarray
    nominal_step: float
    arrivals: np.ndarray | None = None
    entries: np.ndarray | None = None

    def stats(self) -> IterationStats:
        """Mean, p50, p99, CV, throughput and fraction paced."""
        t = self.time
        mean = float(t.mean())
        return IterationStats(
            n_iterations=int(t.size), n_ranks=self.scenario.n_ranks, mean=mean,
            p50=float(np.percentile(t, 50)), p99=float(np.percentile(t, 99)),
            cv=float(t.std() / mean), throughput=self.scenario.n_ranks / mean,
            fraction_paced=float(self.paced.mean()), mean_incast=float(self.incast.mean()))

    @property
    def multipliers(self) -> np.ndarray:
        """Iteration times divided by the nominal step (a copy)."""
        return self.time / self.nominal_step

    def __repr__(self) -> str:
        return (f"IterationResult(n_nodes={self.scenario.n_nodes}, n_iterations={self.time.size}, "
                f"controller={self.controller}, mean={self.time.mean():.4g}s)")


def _kernel_mode(controller):
    """Kernel controller arguments for built-in controllers, else None."""
    if type(controller) is NoPacing:
        return dict(mode=0, theta_on=0.0, theta_off=0.0, patience=1, hold_max=0.0)
    if type(controller) is SpreadPacer:
        return dict(mode=1, theta_on=controller.threshold_on, theta_off=controller.threshold_off,
                    patience=controller.patience, hold_max=controller.hold_max)
    if type(controller) is BaselinePacer:
        return dict(mode=3, theta_on=controller.threshold_on, theta_off=controller.threshold_off,
                    patience=controller.patience, hold_max=controller.hold_max,
                    smoothing=controller.smoothing, max_patience=controller.max_patience)
    return None


def simulate_iterations(scenario: PacingScenario, n_iterations: int, *, controller=None,
                        seed, record_ranks: bool = False,
                        use_kernel_controller: bool = True) -> IterationResult:
    """Simulate synchronous data-parallel iterations of one job.

    Each iteration: every rank computes (persistent speed x episode x jitter), arrives
    at the barrier, is optionally held by the pacing gate, enters the all-reduce; the
    iteration ends when the collective does. Synchronization amplification is not
    added by hand: the collective starts at the latest entry (a max over ranks), and
    uneven entries park eager data in the fabric that incasts on shared links when the
    last rank arrives (see :mod:`spare_core.pacing` and docs/pacing.md).

    Parameters
    ----------
    scenario : PacingScenario
        Job size and models.
    n_iterations : int
        Iterations to simulate (>= 1).
    controller : PacingController, optional
        Pacing policy; default :class:`NoPacing`. :class:`NoPacing` and
        :class:`SpreadPacer` and :class:`BaselinePacer` run inside the kernel; any other
        object satisfying the
        protocol is called once per iteration from Python.
    seed : int or numpy.random.SeedSequence
        Root of the named random streams (required).
    record_ranks : bool
        Also return per-rank arrival and entry times (n_iterations x ranks <= 2**24).
    use_kernel_controller : bool
        If False, built-in controllers also run through the Python protocol path (the
        two paths give identical results; used by the tests).

    Returns
    -------
    IterationResult

    Raises
    ------
    TypeError
        If ``scenario`` is not a PacingScenario, ``controller`` lacks the protocol, or
        ``seed`` is missing.
    ValueError
        On ``n_iterations < 1``, a too large recording, or a controller returning a
        negative or non-finite hold.

    Notes
    -----
    Cost O(n_iterations * (p + g * F)) with F the cross-leaf ring flows per rail
    (<= n_nodes), memory O(p + chunk) whatever the number of iterations.

    Examples
    --------
    >>> from spare_core.pacing import PacingScenario, SpreadPacer
    >>> r = simulate_iterations(PacingScenario(n_nodes=8), 200, seed=1)
    >>> r.time.shape
    (200,)
    """
    if not isinstance(scenario, PacingScenario):
        raise TypeError(f"scenario must be a PacingScenario, got {type(scenario).__name__}")
    n_iter = as_int(n_iterations, "n_iterations", min_value=1)
    controller = NoPacing() if controller is None else controller
    if not isinstance(controller, PacingController):
        raise TypeError("controller must have reset() and hold(last) methods (PacingController), "
                        f"got {type(controller).__name__}")
    root = as_seed_sequence(seed)
    for name, flag in (("record_ranks", record_ranks), ("use_kernel_controller", use_kernel_controller)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    p = scenario.n_ranks
    if record_ranks and n_iter * p > _MAX_RECORD_CELLS:
        raise ValueError(f"record_ranks needs n_iterations * ranks <= {_MAX_RECORD_CELLS}, got {n_iter * p}")
    fast = _kernel_mode(controller) if use_kernel_controller else None

    kernel = load("_pacing_core")
    st = _Statics(scenario, Realisation.draw(scenario, n_iter, root))
    f = scenario.fabric
    g, n_flows = f.gpus_per_node, st.flow_src.size
    rng_jitter, rng_ecmp = _stream(root, "jitter"), _stream(root, "ecmp")
    rng_bg = _stream(root, "background")
    ep_until = np.zeros(p, dtype=np.int64)
    ep_fac = np.ones(p, dtype=np.float64)
    eff = st.base.copy()
    active = np.empty(p, dtype=np.intp)
    state = np.zeros(4, dtype=np.int64)
    bstate = np.array([np.nan, getattr(controller, "patience", 1), -1.0], dtype=np.float64)
    chunk = max(1, min(n_iter, _CHUNK_CELLS // max(p, g * n_flows, 1)))
    common = dict(base=st.base, g=g, sigma=scenario.compute.jitter, flow_src=st.flow_src,
                  flow_src_leaf=st.flow_src_leaf, flow_dst_leaf=st.flow_dst_leaf,
                  n_leaves=st.n_leaves, n_spines=st.n_spines, rail_a=st.rail_a,
                  rail_bw=st.rail_bw, rail_floor=st.rail_floor, t_intra=st.t_intra,
                  nic_bw=f.nic_bandwidth, window=f.window, buffer=f.buffer, buffer_idle=f.buffer_idle, rto=f.rto,
                  ctrl_latency=scenario.release_latency, ep_rank=st.episodes[0],
                  ep_start=st.episodes[1], ep_end=st.episodes[2], ep_factor=st.episodes[3],
                  ep_until=ep_until, ep_fac=ep_fac, eff=eff, active=active, state=state, bstate=bstate,
                  record=bool(record_ranks))
    parts = []
    bg_state = None  # each leaf's competing-traffic state at the end of the last chunk
    controller.reset()
    last = None
    for it0 in range(0, n_iter, chunk):
        c = min(chunk, n_iter - it0)
        z = rng_jitter.standard_normal((c, p), dtype=np.float32)
        picks = rng_ecmp.integers(0, st.n_spines, size=(c, g, n_flows), dtype=np.uint32)
        busy, bg_state = _draw_busy(rng_bg, c, st.n_leaves, f.background_duty, f.background_run, bg_state)
        if fast is not None:
            parts.append(kernel.simulate_chunk(z=z, picks=picks, busy=busy, it0=it0,
                                               holds=np.zeros(0), **fast, **common))
            continue
        for k in range(c):
            h = _checked_hold(controller.hold(last))
            out = kernel.simulate_chunk(z=z[k:k + 1], picks=picks[k:k + 1], busy=busy[k:k + 1],
                                        it0=it0 + k, mode=2,
                                        holds=np.array([h]), theta_on=0.0, theta_off=0.0,
                                        patience=1, hold_max=0.0, **common)
            parts.append(out)
            last = BarrierObservation(iteration=it0 + k, spread=float(out["spread"][0]),
                                      iteration_time=float(out["time"][0]),
                                      arrival_max=float(out["arrival_max"][0]), hold=h)
    cat = {key: np.concatenate([o[key] for o in parts]) for key in parts[0]}
    return IterationResult(
        scenario=scenario, controller=repr(controller), time=cat["time"],
        arrival_max=cat["arrival_max"], spread=cat["spread"], hold=cat["hold"], held=cat["held"],
        incast=cat["incast"], contention=cat["contention"], paced=cat["paced"],
        nominal_step=scenario.nominal_step, arrivals=cat.get("arrivals"), entries=cat.get("entries"))


def _draw_busy(rng, c, n_leaves, duty, run=None, state=None):
    """(c, n_leaves) uint8: 1 where competing traffic holds the leaf's shared buffer; and the
    leaves' last state (to continue the chain in the next chunk).

    One draw per (iteration, leaf), shared by the leaf's rail planes: a competing job's
    collective loads all rails of its nodes at once, so the rails are not independent.
    ``run=None``: independent per iteration. Otherwise each leaf is a two-state Markov
    chain with stationary probability ``duty`` and mean busy run ``run`` iterations (see
    :class:`FabricModel`); ``state=None`` starts it from the stationary law. The same
    uniforms are drawn either way.
    """
    u = rng.random((c, n_leaves))
    if run is None:
        return (u < duty).astype(np.uint8), state  # independent draws carry no state
    p_stay = 1.0 - 1.0 / run
    p_on = duty / ((1.0 - duty) * run) if duty < 1.0 else 1.0
    busy = np.empty((c, n_leaves), dtype=np.uint8)
    prev = (u[0] < duty) if state is None else np.where(state, u[0] < p_stay, u[0] < p_on)
    busy[0] = prev
    for t in range(1, c):
        prev = np.where(prev, u[t] < p_stay, u[t] < p_on)
        busy[t] = prev
    return busy, prev


def _checked_hold(h) -> float:
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise TypeError(f"controller.hold() must return a real number, got {type(h).__name__}") from None
    if not math.isfinite(h) or h < 0.0:
        raise ValueError(f"controller.hold() must return a finite hold >= 0, got {h}")
    return h
