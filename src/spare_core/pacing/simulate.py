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
import numbers
from dataclasses import dataclass

import numpy as np

from .._native import load
from .._results import fields_dict
from .._seeding import as_seed_sequence, child_rng
from .._validate import as_int
from .controllers import (KERNEL_FORMS, BarrierObservation, BaselineHysteresis, NoHold, NoPacing,
                          PacingController, SpreadHysteresis)
from .fabrics import LinkIncidence
from .model import PacingScenario, RailTerms, rail_terms

__all__ = ["simulate_iterations", "IterationResult", "IterationStats", "Realisation", "KernelModel",
           "PACING_STREAMS", "stream", "CHUNK_CELLS", "draw_busy"]

PACING_STREAMS = {"speed": 0, "locality": 1, "ring": 2, "episodes": 3, "jitter": 4, "ecmp": 5,
                  "outlier": 6, "background": 7}
"""The pacing simulator's random sources and their fixed child numbers under the run's seed
(not names of the failure simulator's stream table: these streams are addressed by
number, as they always were, so every earlier result is reproduced)."""
CHUNK_CELLS = 1 << 20
"""Rank-iterations of noise drawn per kernel call: bounds memory (~8 MB) at any scale."""
# recording per-rank arrivals/entries is a test and debugging aid; refuse huge traces
_MAX_RECORD_CELLS = 1 << 24
# episodes are drawn up front (count ~ ranks x rate x simulated time): refuse absurd rates
_MAX_EPISODE_CELLS = 1 << 22


def stream(root: np.random.SeedSequence, name: str) -> np.random.Generator:
    """The generator of source ``name`` (a key of :data:`PACING_STREAMS`): a child of
    ``root`` at its fixed stream number, so every source draws the same numbers whatever
    else runs."""
    return child_rng(root, PACING_STREAMS[name])


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
        z = stream(root, "speed").standard_normal(p)
        speed = np.exp(c.speed_spread * z - 0.5 * c.speed_spread ** 2)
        slow = stream(root, "outlier").random(p) < c.slow_fraction
        base = c.t_compute * speed * np.where(slow, c.slow_factor, 1.0)
        rng = stream(root, "locality")
        locality = rng.choice(len(f.locality_probs), size=(n, f.gpus_per_node),
                              p=np.asarray(f.locality_probs, dtype=np.float64))
        rng = stream(root, "ring")
        order = rng.permutation(n) if f.ring_order == "random" else np.arange(n)
        episodes = _draw_episodes(scenario, n_iterations, stream(root, "episodes"))
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


@dataclass(frozen=True, eq=False)
class KernelModel:
    """The kernel-ready static form of a scenario and its realisation.

    Attributes
    ----------
    terms : RailTerms
        Per-rail alpha-beta-gamma parts, at the worst (node, rail) locality of each rail.
    incidence : LinkIncidence
        The topology's link incidence of the ring flows (``scenario.fabric.topology_in_use``).
    links : LinkTable
        The kernel's validated copy of ``incidence``.
    base : ndarray, float64 (p,)
        Nominal compute of each rank (contiguous copy of the realisation's).
    episodes : tuple of ndarrays
        The realisation's episodes ``(rank, start, end, factor)``.
    """

    terms: RailTerms
    incidence: LinkIncidence
    links: object
    base: np.ndarray
    episodes: tuple

    @classmethod
    def build(cls, scenario: PacingScenario, real: Realisation) -> "KernelModel":
        """Rail terms and link table of ``scenario`` with ``real``'s draws."""
        f = scenario.fabric
        n, g = scenario.n_nodes, f.gpus_per_node
        lat = np.asarray(f.locality_latency, dtype=np.float64)[real.locality]
        der = np.asarray(f.locality_derate, dtype=np.float64)[real.locality]
        # a ring runs at the pace of its worst hop: the worst (node, rail) per rail
        terms = rail_terms(n, f, scenario.collective, lat.max(axis=0), der.max(axis=0))
        # every rail's ring visits the nodes in ring order; one node sends to no one
        src = np.asarray(real.order, dtype=np.intp) if n > 1 else np.zeros(0, dtype=np.intp)
        dst = np.roll(src, -1)
        inc = f.topology_in_use.incidence(src, dst, n_nodes=n, gpus_per_node=g)
        if not isinstance(inc, LinkIncidence):
            raise TypeError(f"{type(f.topology_in_use).__name__}.incidence() must return a LinkIncidence, "
                            f"got {type(inc).__name__}")
        links = load("_pacing_core").LinkTable(n_nodes=n, gpus_per_node=g, **inc.kernel_fields())
        return cls(terms, inc, links, np.ascontiguousarray(real.base, dtype=np.float64), real.episodes)


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

    def to_dict(self) -> dict:
        """The fields as a JSON-serialisable dict (a non-finite statistic becomes None)."""
        return fields_dict(self)


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

    def to_dict(self) -> dict:
        """Every field as a JSON-serialisable dict: the scenario as nested dicts, the
        per-iteration arrays as lists (per-rank ones as lists of lists, or None)."""
        return fields_dict(self)


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
        Job size and models (the fabric's topology included).
    n_iterations : int
        Iterations to simulate (>= 1).
    controller : PacingController, optional
        Pacing policy; default :class:`NoPacing`. A controller whose ``kernel_form()``
        returns one of the kernel's forms (the built-ins do) runs inside the kernel; any
        other object satisfying the protocol is called once per iteration from Python.
    seed : int or numpy.random.SeedSequence
        Root of the named random streams (required).
    record_ranks : bool
        Also return per-rank arrival and entry times (n_iterations x ranks <= 2**24).
    use_kernel_controller : bool
        If False, every controller runs through the Python protocol path (both paths
        give identical results; used by the tests).

    Returns
    -------
    IterationResult

    Raises
    ------
    TypeError
        If ``scenario`` is not a PacingScenario, ``controller`` lacks the protocol or
        declares something that is not a kernel form, ``seed`` is missing, or the
        topology returns something other than a LinkIncidence.
    ValueError
        On ``n_iterations < 1``, a too large recording, a topology's invalid incidence,
        or a controller returning a negative or non-finite hold.

    Notes
    -----
    Cost O(n_iterations * (p + g * F * H + planes * plane_links)) with F the flows that
    leave their first switch (<= n_nodes) and H their hops; memory O(p + chunk) whatever
    the number of iterations.

    Examples
    --------
    >>> from spare_core.pacing import PacingScenario, SpreadPacer
    >>> r = simulate_iterations(PacingScenario(n_nodes=8), 200, seed=1)
    >>> r.time.shape
    (200,)
    """
    n_iter, controller, form, root = _check_call(scenario, n_iterations, controller, seed, record_ranks,
                                                 use_kernel_controller)
    kernel = load("_pacing_core")
    model = KernelModel.build(scenario, Realisation.draw(scenario, n_iter, root))
    parts = _run_chunks(kernel, scenario, model, n_iter, controller, form, root, bool(record_ranks))
    return _assemble(scenario, controller, parts)


def _check_call(scenario, n_iterations, controller, seed, record_ranks, use_kernel_controller):
    """Validate every argument (before any O(p) work); resolve the controller's kernel form."""
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
    if record_ranks and n_iter * scenario.n_ranks > _MAX_RECORD_CELLS:
        raise ValueError(f"record_ranks needs n_iterations * ranks <= {_MAX_RECORD_CELLS}, "
                         f"got {n_iter * scenario.n_ranks}")
    form = None
    declare = getattr(controller, "kernel_form", None)
    if use_kernel_controller and callable(declare):
        form = declare()
        if form is not None and not isinstance(form, KERNEL_FORMS):
            raise TypeError(f"{type(controller).__name__}.kernel_form() must return one of "
                            f"{[c.__name__ for c in KERNEL_FORMS]} or None, got {type(form).__name__}")
    return n_iter, controller, form, root


def _kernel_controller(kernel, form) -> dict:
    """The kernel's controller arguments for a kernel form."""
    if isinstance(form, NoHold):
        return dict(mode=kernel.MODE_NONE, theta_on=0.0, theta_off=0.0, patience=1, hold_max=0.0)
    args = dict(theta_on=form.threshold_on, theta_off=form.threshold_off, patience=form.patience,
                hold_max=form.hold_max)
    if isinstance(form, SpreadHysteresis):
        return dict(mode=kernel.MODE_SPREAD, **args)
    assert isinstance(form, BaselineHysteresis)
    return dict(mode=kernel.MODE_BASELINE, smoothing=form.smoothing, max_patience=form.max_patience, **args)


def _run_chunks(kernel, scenario, model, n_iter, controller, form, root, record):
    """The batch loop: draw each chunk's noise, run it in the kernel (whole chunks for a
    kernel form, one iteration per call for a Python controller); the kernel's outputs."""
    f = scenario.fabric
    g, p = f.gpus_per_node, scenario.n_ranks
    links = model.links
    n_flows = links.n_flows
    rng_jitter, rng_ecmp, rng_bg = stream(root, "jitter"), stream(root, "ecmp"), stream(root, "background")
    patience = form.patience if isinstance(form, BaselineHysteresis) else 1
    state = dict(ep_until=np.zeros(p, dtype=np.int64), ep_fac=np.ones(p, dtype=np.float64),
                 eff=model.base.copy(), active=np.empty(p, dtype=np.intp), state=np.zeros(4, dtype=np.int64),
                 bstate=np.array([np.nan, patience, -1.0], dtype=np.float64))
    t = model.terms
    ep = model.episodes
    common = dict(base=model.base, g=g, sigma=scenario.compute.jitter, links=links, rail_a=t.latency,
                  rail_bw=t.bandwidth, rail_floor=t.floor, t_intra=t.t_intra, nic_bw=f.nic_bandwidth,
                  window=f.window, buffer=f.buffer, buffer_idle=f.buffer_idle, rto=f.rto,
                  ctrl_latency=scenario.release_latency, ep_rank=ep[0], ep_start=ep[1], ep_end=ep[2],
                  ep_factor=ep[3], record=record, **state)
    fast = None if form is None else _kernel_controller(kernel, form)
    chunk = max(1, min(n_iter, CHUNK_CELLS // max(p, g * n_flows, 1)))
    parts = []
    bg_state = None  # each domain's competing-traffic state at the end of the last chunk
    controller.reset()
    last = None
    for it0 in range(0, n_iter, chunk):
        c = min(chunk, n_iter - it0)
        z = rng_jitter.standard_normal((c, p), dtype=np.float32)
        picks = rng_ecmp.integers(0, links.n_paths, size=(c, g, n_flows), dtype=np.uint32)
        busy, bg_state = draw_busy(rng_bg, c, links.n_domains, f.background_duty, f.background_run, bg_state)
        if fast is not None:
            parts.append(kernel.simulate_chunk(z=z, picks=picks, busy=busy, it0=it0,
                                               holds=np.zeros(0), **fast, **common))
            continue
        for k in range(c):
            h = _checked_hold(controller.hold(last))
            out = kernel.simulate_chunk(z=z[k:k + 1], picks=picks[k:k + 1], busy=busy[k:k + 1],
                                        it0=it0 + k, mode=kernel.MODE_HOLDS,
                                        holds=np.array([h]), theta_on=0.0, theta_off=0.0,
                                        patience=1, hold_max=0.0, **common)
            parts.append(out)
            last = BarrierObservation(iteration=it0 + k, spread=float(out["spread"][0]),
                                      iteration_time=float(out["time"][0]),
                                      arrival_max=float(out["arrival_max"][0]), hold=h)
    return parts


def _assemble(scenario, controller, parts) -> IterationResult:
    """One IterationResult from the kernel's per-chunk outputs."""
    cat = {key: np.concatenate([o[key] for o in parts]) for key in parts[0]}
    return IterationResult(
        scenario=scenario, controller=repr(controller), time=cat["time"],
        arrival_max=cat["arrival_max"], spread=cat["spread"], hold=cat["hold"], held=cat["held"],
        incast=cat["incast"], contention=cat["contention"], paced=cat["paced"],
        nominal_step=scenario.nominal_step, arrivals=cat.get("arrivals"), entries=cat.get("entries"))


def draw_busy(rng, c, n_domains, duty, run=None, state=None):
    """(c, n_domains) uint8: 1 where competing traffic holds the domain's shared buffer;
    and the domains' last state (to continue the chain in the next chunk).

    One draw per (iteration, buffer domain); a domain is a switch buffer that all links
    of the domain draw on (for the built-in fabrics: the leaves of a group of nodes,
    shared by its rails, because a competing job's collective loads all rails of its
    nodes at once). ``run=None``: independent per iteration. Otherwise each domain is a two-state Markov
    chain with stationary probability ``duty`` and mean busy run ``run`` iterations (see
    :class:`FabricModel`); ``state=None`` starts it from the stationary law. The same
    uniforms are drawn either way.
    """
    u = rng.random((c, n_domains))
    if run is None:
        return (u < duty).astype(np.uint8), state  # independent draws carry no state
    p_stay = 1.0 - 1.0 / run
    p_on = duty / ((1.0 - duty) * run) if duty < 1.0 else 1.0
    busy = np.empty((c, n_domains), dtype=np.uint8)
    prev = (u[0] < duty) if state is None else np.where(state, u[0] < p_stay, u[0] < p_on)
    busy[0] = prev
    for t in range(1, c):
        prev = np.where(prev, u[t] < p_stay, u[t] < p_on)
        busy[t] = prev
    return busy, prev


def _checked_hold(h) -> float:
    # numbers only: float() would also accept the string "0.5" or True without a word
    if not isinstance(h, numbers.Real) or isinstance(h, (bool, np.bool_)):
        raise TypeError(f"controller.hold() must return a real number, got {type(h).__name__} {h!r}")
    h = float(h)
    if not math.isfinite(h) or h < 0.0:
        raise ValueError(f"controller.hold() must return a finite hold >= 0, got {h}")
    return h
