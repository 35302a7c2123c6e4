"""Trace replay: a recorded failure log drives the simulation (``failure_model="trace"``).

:class:`TraceReplay` is a :class:`~spare_core.events.models.FailureModel` whose failures are
the rows of a :class:`~spare_core.events.trace.Trace`, mapped from the log's units (nodes,
hosts) to the job's data-parallel groups. What happens once the simulated job outlives the
log is a required, explicit choice (``after``): stop failing, loop the log, or continue with
a law fitted to it.

References
----------
.. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783 (2024).
.. [2] A. Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
   Clusters", HPCA 2025.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import warnings

import numpy as np

from .._native import load
from .._seeding import as_seed_sequence, run_seed, stream_key, stream_rng
from .._validate import as_float, as_int, check_choice
from .files import FAILURE_RATE_KEYS, FileFailures, fit_from_file, trace_from_file, whole_nodes_warning
from .fit import LAWS, fit
from .instances import REMOVALS, walk_instances
from .models import FailureModel, rate_factor
from .trace import Trace, read_trace

__all__ = ["TraceReplay", "TraceWarning", "FleetCapacity", "AFTER", "PLACEMENTS"]

#: what a replay does past the trace's end
AFTER = ("stop", "loop", "fit")
#: where the log's units sit in the job (``TraceReplay.placement``)
PLACEMENTS = ("log", "spread")
#: the most windows a replay may take (a window per failure instant is already more than useful)
MAX_WINDOWS = 1_000_000
# below this share of the groups a random placement would touch, a log numbered by appearance
# is said to concentrate its failures (TraceReplay.concentration)
_CONCENTRATED = 0.5


class TraceWarning(UserWarning):
    """A replay that runs but probably not as meant (failures concentrated on a few groups
    because hosts were numbered by first appearance)."""


@functools.lru_cache(maxsize=16)
def _permutation(name: str, size: int) -> np.ndarray:
    """A fixed permutation of ``size`` drawn by a numpy Generator seeded with ``name`` and
    ``size``, the same in every run and process: ``"trace-windows"``, the order in which run
    seeds visit the windows; ``"trace-placement"``, the job node of each log unit."""
    out = np.random.default_rng(np.random.SeedSequence([stream_key(name), size])).permutation(size)
    out.flags.writeable = False
    return out

_SCAN = load("_trace_scan")  # the per-epoch scan, compiled
_NO_TIMES, _NO_GROUPS = np.zeros(0), np.zeros(0, dtype=np.int64)
_NO_TIMES.flags.writeable = _NO_GROUPS.flags.writeable = False



@dataclasses.dataclass(frozen=True)
class TraceReplay(FailureModel, kind="trace"):
    """Replay a recorded failure log; the log's units map to the job's groups.

    Parameters
    ----------
    trace : Trace
        The log (:func:`~spare_core.events.trace.read_trace`). Its time 0 is the job's start.
    after : {"stop", "loop", "fit"}
        Past the trace's ``end`` (required: a replay never guesses). ``"stop"``: no more
        failures. ``"loop"``: the log repeats with period ``trace.end`` (copy ``c`` at
        ``c * end + t``). ``"fit"``: a renewal process whose times between failures follow
        ``law`` fitted to the log's system-level inter-failure times (censored at the end,
        :func:`spare_core.events.fit.fit`), starting at the trace's end; each of its
        failures hits a uniformly random group still in the job.
    nodes_per_group : int, optional
        Unit ``u`` of the log belongs to group ``u // nodes_per_group`` (the log's units are
        nodes, numbered group by group: use ``read_trace(unit_map=...)`` to number hosts so).
        Default: unit ``u`` is group ``u``.
    law : {"exponential", "weibull", "lognormal"}
        The law fitted with ``after="fit"`` (default Weibull).
    windows : int
        K >= 1 (default 1: every run replays the log from its start). With K > 1 a run
        replays the log from one of K start offsets ``k * end / K`` (k = 0..K-1): its time 0
        is the log's time ``k * end / K``, it reads the log on to ``end`` then from the
        log's start again (the log as a circle), and ``after`` applies once it has read the
        whole log (``end`` after its start). A run on the integer seed ``s`` replays window
        ``order[s mod K]``, ``order`` a fixed permutation drawn by a seeded numpy Generator
        (:meth:`window`), so runs on seeds 0..n-1 replay ``min(n, K)`` distinct failure
        histories and a confidence interval over them reflects the log's variability, not
        only the step-time noise (:meth:`histories`).
    placement : {"log", "spread"}
        Where the log's units sit in the job. ``"log"`` (default): unit ``u`` is node ``u``
        of the job (in group ``u // nodes_per_group``): right when the ids are the job's rank
        order (ids, ``unit_map``) or physical positions (``host_pattern``). ``"spread"``: the
        log's units are placed on the job's ``n_groups * nodes_per_group`` nodes by a fixed
        permutation drawn by a seeded numpy Generator (the same for every run of a job of
        that size): for host names numbered by first appearance, whose ids say nothing
        about where a host sits (:meth:`concentration`).
    capacity : int, optional
        A log of capacity events: the fleet's nodes before its first row (default: the
        job's).
    removals : {"job", "instance"}
        A log of capacity events: ``"job"`` (default) has every removal take a node of the
        job; ``"instance"`` reads the log instance by instance
        (:mod:`~spare_core.events.instances`): a removal of an idle instance is no failure,
        and one of the job's takes the job node that instance held.
    boot : float
        A log of capacity events: seconds from an addition's row until its instance can
        serve (default 0); one removed while it boots never counts.

    Notes
    -----
    *When it fits.* You have a failure log of the cluster (or of a comparable one) and want
    the simulation to see exactly those failures, bursts and multi-node events included,
    instead of a law's idealisation.

    *Semantics.* A failure of a unit takes its group out of the job until the next restart;
    a failure of a unit whose group is already out is absorbed (the job does not see it).
    Simultaneous failures (one switch downing several nodes) come out as consecutive
    failures with the same time, in log order. A restart at ``t`` brings every group back
    and resumes the log at its first row at or after ``t`` (rows already consumed are never
    replayed): failures logged while the job was down for the restart are skipped (a real restart would have met the repaired
    cluster). The failures therefore depend on when the restarts happen
    (``renews_all_at_restart = False``).

    *Rate.* :meth:`mtbf` is the log's system MTBF: ``end`` over the number of distinct
    failure instants (the maximum-likelihood mean of an exponential fitted to the
    system-level gaps, the last one censored).

    *Windows, not a block bootstrap.* A window keeps the log's own sequence intact for as
    long as the job runs: bursts, multi-node events, a lemon node failing again and again,
    the drift of the rate over the years. A block bootstrap would splice blocks from
    different years into one job and cut those patterns at every seam; the circle has one
    seam (the log's end joined to its start), crossed only by a window that starts less than
    a job's length before the end. Windows are distinct histories as long as the job's
    wall time stays under ``end / K`` (longer jobs share part of their failures with the
    next window).

    *Racks.* A log read with ``host_pattern`` knows where each node sits:
    :meth:`domains` gives each group the domains of its first node at every level but the
    node's (for rack-aware SPARe stacks, :meth:`spare_core.strategies.spare.layout.StackedLayout.rack_aware`)
    and :meth:`Trace.domain_summary <spare_core.events.trace.Trace.domain_summary>` how the
    failures fall on them.

    Examples
    --------
    >>> tr = Trace([5.0, 5.0, 9.0, 30.0], [0, 1, 0, 3], n_units=4, end=40.0)
    >>> p = TraceReplay(tr, after="stop").process(4, seed=0)
    >>> p.take(10)
    ([5.0, 5.0, 30.0], [0, 1, 3])
    >>> p.restart(31.0); p.take(10)
    ([], [])
    >>> p = TraceReplay(tr, after="loop").process(4, seed=0)
    >>> p.take(2); p.restart(20.0); p.take(3)
    ([5.0, 5.0], [0, 1])
    ([30.0, 45.0, 45.0], [3, 0, 1])

    Four windows: seed 3 replays the one starting at t = 30 (the row at 30 comes first, then the
    log from its start, 10 s later):

    >>> m = TraceReplay(tr, after="loop", windows=4)
    >>> m.window_offsets().tolist(), [m.window(s) for s in range(4)]
    ([0.0, 10.0, 20.0, 30.0], [0, 2, 1, 3])
    >>> m.process(4, seed=3).take(3)
    ([0.0, 15.0, 15.0], [3, 0, 1])
    """

    trace: Trace
    after: str
    nodes_per_group: int | None = None
    law: str = "weibull"
    windows: int = 1
    placement: str = "log"
    capacity: int | None = None
    removals: str = "job"
    boot: float = 0.0

    renews_all_at_restart = False
    # a scenario file's ``[failures]`` with ``model = "trace"``: the log, what comes past its
    # end, its units per group, the windows replayed, where its units sit; the log is the
    # rate and the law, and holds its own multi-node events
    file_keys = ("trace", "after", "nodes_per_group", "fit_law", "windows", "placement")
    file_refused = {**{k: "does not go with model = 'trace' (the log is the rate and the law)"
                       for k in ("law", "weibull_shape", *FAILURE_RATE_KEYS, "period", "measured_on_gpus")},
                    "domains": "does not go with model = 'trace' (a log already holds its multi-node events)"}

    def __post_init__(self):
        if not isinstance(self.trace, Trace):
            raise TypeError(f"trace must be a Trace (see read_trace), got {type(self.trace).__name__}")
        if self.trace.n_events == 0:
            raise ValueError("trace must hold at least one failure to be replayed")
        check_choice(self.after, "after", AFTER)
        check_choice(self.law, "law", LAWS)
        if self.nodes_per_group is not None:
            object.__setattr__(self, "nodes_per_group", as_int(self.nodes_per_group, "nodes_per_group", min_value=1))
        if self.after == "loop" and not self.trace.end > 0:
            raise ValueError("after='loop' needs a trace with end > 0 (the loop's period)")
        object.__setattr__(self, "windows", as_int(self.windows, "windows", min_value=1, max_value=MAX_WINDOWS))
        if self.windows > 1 and not self.trace.end > 0:
            raise ValueError(f"windows={self.windows} needs a trace with end > 0 (the windows divide it)")
        check_choice(self.placement, "placement", PLACEMENTS)
        if self.capacity is not None:
            if self.trace.changes is None:
                raise ValueError("capacity (the fleet's starting nodes) goes with a log of capacity events "
                                 "(read_trace's event_column)")
            object.__setattr__(self, "capacity", as_int(self.capacity, "capacity", min_value=0))
        check_choice(self.removals, "removals", REMOVALS)
        object.__setattr__(self, "boot", as_float(self.boot, "boot", min_value=0.0))
        ch = self.trace.changes
        if self.by_instance:
            if ch is None or len(ch) != 3:
                raise ValueError("removals='instance' and boot go with a log of capacity events whose rows name "
                                 "their instances (read_trace's event_column)")
        elif ch is not None and len(ch) == 3:
            # read as counts the instances say nothing: the model's trace (and its dict) as before
            object.__setattr__(self, "trace", self.trace.replace(changes=ch[:2]))
        object.__setattr__(self, "_views", {})
        if self.trace.changes is not None and (self.after != "stop" or self.windows != 1):
            raise ValueError("a log of capacity events replays once from its start: after='stop' and windows=1 "
                             f"(got after={self.after!r}, windows={self.windows})")
        if self.placement == "spread" and self.trace.levels is not None:
            raise ValueError("placement='spread' would throw away where host_pattern placed the hosts; keep "
                             "placement='log'")
        if self.after == "fit":
            self.fitted()  # fails now, not mid-simulation, if the log cannot be fitted

    @classmethod
    def from_file(cls, reader, table, cluster):
        """The log of ``failures.trace`` replayed, ``after`` its end (required), unit u in group
        u // ``nodes_per_group`` (default: the group's nodes); ``after = "fit"`` fits ``fit_law``."""
        if "after" not in table:
            raise reader.error(f"model = 'trace' needs failures.after: what happens past the log's end, one of "
                               f"{list(AFTER)} (a replay never guesses)")
        if "trace" not in table:
            raise reader.error("model = 'trace' needs failures.trace (the log's path)")
        after = reader.choice("failures.after", table["after"], AFTER)
        gpg, gpn = cluster.gpus_per_group, cluster.gpus_per_node
        npg = reader.integer("failures.nodes_per_group", table["nodes_per_group"]) if "nodes_per_group" in table \
            else None
        if after != "fit" and "fit_law" in table:
            raise reader.fail("failures.fit_law", "only goes with law = 'fit' or after = 'fit'", table["fit_law"])
        windows = reader.integer("failures.windows", table.get("windows", 1), high=MAX_WINDOWS)
        placement = reader.choice("failures.placement", table.get("placement", "log"), PLACEMENTS)
        trace, read = trace_from_file(reader, table["trace"], cluster.base_dir)
        capacity = read.get("capacity")
        for key in ("capacity", "removals", "boot"):
            if key in read and trace.changes is None:
                raise reader.fail(f"failures.trace.{key}", "goes with event_column (a log of capacity events)",
                                  read[key])
        by_instance = {k: read[k] for k in ("removals", "boot") if k in read}
        npg, units_words = _units_per_group(reader, npg, read.get("unit_gpus"), gpg, gpn)
        past, lf = "", None
        if after == "fit":
            # past the end: a renewal process of the log's times between system failures
            lf, past = fit_from_file(reader, trace, table.get("fit_law", "weibull"), LAWS, level="system")
        try:
            replay = cls(trace, after=after, nodes_per_group=npg, windows=windows, placement=placement,
                         **({"law": lf.law} if lf else {}), **({"capacity": capacity} if capacity is not None else {}),
                         **by_instance)
            replay.view(cluster.n_groups)  # a log the instances contradict fails now, with the file's key
        except (TypeError, ValueError) as exc:
            raise reader.fail("failures.trace", f"cannot be replayed ({exc})", table["trace"]) from None
        instants = np.unique(trace.times).size
        # the rows dropped and the windows are in the model's description (describe), printed beside
        parts = [f"the log's: {instants} failure instants in {trace.end / 86_400:.3g} days: system MTBF "
                 f"{replay.mtbf(1) / 3600:.3g} h"]
        if units_words:
            parts.append(units_words)
        whole = whole_nodes_warning(read, cluster)
        if whole:
            parts.append(f"warning: {whole}")
        if trace.levels is not None:
            parts.append(f"by {trace.levels[0][0]}: {trace.domain_summary(0)}")
        try:
            crowded = replay.concentration(cluster.n_groups)
        except ValueError:  # more log units than the job's nodes: the scenario says so, in its words
            crowded = None
        if crowded:
            parts.append(f"warning: {crowded}")
        if past:
            parts.append(f"past its end {past}")
        return FileFailures(model=replay, note="; ".join(parts), trace=trace, trace_read=read, fit=lf)

    # -- the model contract ------------------------------------------------------------------
    def groups(self, n_groups: int) -> np.ndarray:
        """The group of each trace failure for a job of ``n_groups`` groups (int64 array).

        ``placement="log"``: unit ``u`` in group ``u // nodes_per_group``; ``"spread"``: unit
        ``u`` on job node ``perm[u]``, ``perm`` a seeded permutation of the job's
        ``n_groups * nodes_per_group`` nodes.

        Raises
        ------
        ValueError
            A unit maps to a group >= ``n_groups`` (more log units than job nodes).
        """
        n_groups = as_int(n_groups, "n_groups", min_value=1)
        per = self.nodes_per_group or 1
        if self.trace.changes is not None:
            # a capacity log names instances that come and go, more of them over the log than
            # the job has nodes: instance u sits on job node u mod the job's nodes
            nodes = self.trace.units % (n_groups * per)
            if self.placement == "spread":
                nodes = _permutation("trace-placement", n_groups * per)[nodes]
            return nodes // per
        need = -(-self.trace.n_units // per)
        if need > n_groups:
            how = {"ids": "", "unit_map": " (numbered by unit_map)", "appearance": " (hosts named in the log)",
                   "host_pattern": " (the positions of host_pattern: " + " x ".join(
                       f"{len(lab)} {name}" for name, lab in self.trace.levels or ()) + ")"}[self.trace.numbering]
            raise ValueError(
                f"the trace's {self.trace.n_units} units{how} map to {need} groups "
                f"({'1 unit' if per == 1 else f'{per} units'} per group) but the job has n_groups={n_groups}; "
                "set nodes_per_group or renumber hosts with read_trace(unit_map=...)"
            )
        if self.placement == "spread":
            return _permutation("trace-placement", n_groups * per)[self.trace.units] // per
        return self.trace.units // per

    def check(self, n_groups: int) -> None:
        """As :meth:`FailureModel.check`; warns (:class:`TraceWarning`) when the failures
        concentrate on a few groups (:meth:`concentration`)."""
        self.groups(n_groups)
        crowded = self.concentration(n_groups)
        if crowded:
            warnings.warn(crowded, TraceWarning, stacklevel=2)

    def concentration(self, n_groups: int) -> str | None:
        """Why the failures crowd into the first groups, in words, or None.

        A log of host names without ``unit_map`` numbers its hosts in order of first
        appearance, so with ``placement="log"`` the F hosts that fail fill groups 0, 1, ...
        while a random placement of F hosts on the job's M nodes would touch about
        ``n_groups * (1 - C(M - p, F) / C(M, F))`` groups (p nodes per group). When the
        groups the log touches are fewer than half of that, the replay is not the cluster's:
        failures share groups (and SPARe's cyclic stacks: consecutive groups) far more often
        than they would. None for any other numbering or placement.
        """
        tr = self.trace
        if tr.numbering != "appearance" or self.placement != "log":
            return None
        n_groups = as_int(n_groups, "n_groups", min_value=1)
        per = self.nodes_per_group or 1
        groups = self.groups(n_groups)
        touched = np.unique(groups).size
        failed = np.unique(tr.units).size
        nodes = n_groups * per
        # P(a group has none of the F failing nodes) = C(M - p, F) / C(M, F) = prod_i (M - F - i) / (M - i)
        i = np.arange(min(per, nodes))
        untouched = float(np.prod(np.clip((nodes - failed - i) / (nodes - i), 0.0, 1.0)))
        expected = n_groups * (1.0 - untouched)
        if touched >= _CONCENTRATED * expected:
            return None
        return (f"the log's failures concentrate on groups {int(groups.min())}-{int(groups.max())} of {n_groups} "
                f"({touched} touched): its {failed} failing hosts are numbered in order of first appearance "
                f"(no unit_map), so they fill the first groups, where a random placement would touch about "
                f"{expected:.0f}. Give the job's rank order (unit_map, e.g. a hostfile), decode racks from the "
                "names (host_pattern), or spread the hosts at random (placement = \"spread\")")

    def domains(self, n_groups: int):
        """The failure domains of the groups, from the log's racks (``host_pattern``).

        Group g's nodes are units ``g * p .. g * p + p - 1`` (p = ``nodes_per_group``); it is
        placed in the domains of its first node at every level of :attr:`Trace.levels
        <spare_core.events.trace.Trace.levels>` whose domains hold more than p nodes, coarsest
        first (a finer level, down to the node itself, would make every group its own domain).
        A group that straddles two domains (p not dividing a domain's size) counts in its
        first node's.

        Returns
        -------
        spare_core.topology.FailureDomains

        Raises
        ------
        ValueError
            A log without levels (not read with ``host_pattern``), or none whose domains
            hold more than one group.
        """
        from ..topology import FailureDomains

        n_groups = as_int(n_groups, "n_groups", min_value=1)
        tr = self.trace
        if tr.levels is None:
            raise ValueError("the replayed log has no racks: read it with host_pattern (a regex with named groups, "
                             "failures.trace.host_pattern) to place its hosts in cabinets, cages, ...")
        per = self.nodes_per_group or 1
        keep = [k for k in range(len(tr.levels)) if tr.domain_size(k) > per]
        if not keep:
            sizes = ", ".join(f"a {name} {tr.domain_size(k)}" for k, (name, _) in enumerate(tr.levels))
            raise ValueError(f"no level of host_pattern holds more than one group of {per} nodes ({sizes}): "
                             "name a coarser level (cabinet, rack, ...) to get domains")
        self.groups(n_groups)
        first = np.arange(n_groups, dtype=np.int64) * per
        return FailureDomains(np.stack([first // tr.domain_size(k) for k in keep]),
                              names=[tr.levels[k][0] for k in keep])

    # -- windows -----------------------------------------------------------------------------
    def window_offsets(self) -> np.ndarray:
        """Where each window starts on the log's time axis, seconds: ``k * end / K``."""
        return np.arange(self.windows, dtype=np.float64) * (self.trace.end / self.windows)

    def window(self, seed) -> int:
        """The window replayed by a run on ``seed`` (the run's seed, as
        :func:`spare_core.sim.simulate` takes it: an int or a SeedSequence).

        ``order[s mod K]`` for the integer seed ``s`` (``order``: a permutation of the K
        windows drawn once by a numpy Generator seeded with K); a SeedSequence enters with
        its entropy plus its spawn key, so a sweep's 128-bit keyed seeds land on windows
        uniformly.
        """
        return self._window_of(run_seed(seed, "failures"))

    def histories(self, seeds) -> int:
        """Distinct windows (failure histories) the runs on ``seeds`` replay."""
        return len({self.window(s) for s in seeds})

    def _window_of(self, root) -> int:
        """The window of the process seed ``root`` (a run's ``"failures"`` child or a seed given
        to :meth:`process` directly: the run child's key adds 0)."""
        if self.windows == 1:
            return 0
        root = as_seed_sequence(root)
        ent = root.entropy
        if not isinstance(ent, int):  # a sequence of 32-bit words
            ent = sum(int(w) << (32 * i) for i, w in enumerate(np.atleast_1d(ent).tolist()))
        return int(_permutation("trace-windows", self.windows)[(ent + sum(root.spawn_key)) % self.windows])

    def _windows_words(self) -> str:
        step = self.trace.end / self.windows
        return (f"{self.windows} windows of the log (starts every {step / 86_400:.3g} days, the log as a circle): "
                f"runs on seeds 0..n-1 replay min(n, {self.windows}) distinct failure histories")

    def mtbf(self, n_groups: int) -> float:
        """The log's system MTBF: ``trace.end`` / distinct failure instants, seconds."""
        return self.trace.end / np.unique(self.trace.times).size

    def fitted(self):
        """The :class:`~spare_core.events.fit.LifetimeFit` used past the end (``after="fit"``)."""
        return fit(self.trace, self.law, level="system")

    #: :meth:`process` takes ``every=True`` (every row, also of groups already out: for runs
    #: with repairs, which drop those themselves)
    hands_out_every_failure = True

    def process(self, n_groups, seed, *, start=0.0, every=False):
        return TraceProcess(self, n_groups, seed, start=start, every=every)

    def scaled(self, factor: float) -> "TraceReplay":
        """The log's time axis divided by ``factor``: the same failures, in the same order and
        groups, ``factor`` times as often (racks and windows alike)."""
        f = rate_factor(factor)
        ch = self.trace.changes
        more = {} if ch is None else {"changes": (ch[0] / f, *ch[1:])}
        return self.replace(trace=self.trace.replace(times=self.trace.times / f, end=self.trace.end / f, **more))

    @property
    def by_instance(self) -> bool:
        """Whether the capacity log is read instance by instance (``removals = "instance"``
        or a ``boot``): :meth:`view`."""
        return self.removals != "job" or self.boot > 0.0

    def view(self, n_groups: int):
        """The capacity log as a job of ``n_groups`` groups sees it, read instance by instance
        (:func:`~spare_core.events.instances.walk_instances`; once per job size), or None when
        it is read as counts."""
        if not self.by_instance:
            return None
        need = as_int(n_groups, "n_groups", min_value=1) * (self.nodes_per_group or 1)
        v = self._views.get(need)
        if v is None:
            v = self._views[need] = walk_instances(self.trace.changes, need if self.capacity is None else self.capacity,
                                                   need, self.trace.end, boot=self.boot, removals=self.removals)
        return v

    def replayed(self, n_groups: int):
        """The failures a run replays: ``(times, groups, rows)``, the rows (indices into
        ``trace.times``) None when they are every row of the log."""
        v = self.view(n_groups)
        if v is None:
            return self.trace.times, self.groups(n_groups), None
        per = self.nodes_per_group or 1
        if self.removals == "job":  # every removal of a usable instance, placed by its unit
            return self.trace.times[v.rows], self.groups(n_groups)[v.rows], v.rows
        nodes = v.nodes
        if self.placement == "spread":
            nodes = _permutation("trace-placement", n_groups * per)[nodes]
        return self.trace.times[v.rows], nodes // per, v.rows

    def capacity_timeline(self, n_groups: int) -> "FleetCapacity | None":
        """The fleet's capacity over the run for a job of ``n_groups`` groups (None without
        capacity events): see :class:`FleetCapacity`."""
        if self.trace.changes is None:
            return None
        need = n_groups * (self.nodes_per_group or 1)
        start = need if self.capacity is None else self.capacity
        v = self.view(n_groups)
        if v is not None:
            return FleetCapacity(v.changes, start, need, self.trace.end, hits=v.hits)
        return FleetCapacity(self.trace.changes, start, need, self.trace.end)

    def describe(self, n_groups: int) -> str:
        src = "" if self.trace.source is None else f" from {self.trace.source}"
        if self.after == "fit":
            past = f"then {self.fitted().distribution!r} between system failures"
        else:  # no fit: a log that cannot be fitted still describes itself
            past = {"stop": "no failures past its end", "loop": f"looped every {self.trace.end:g} s"}[self.after]
        extra = "".join(f"; {w}" for w, on in ((self.trace.filtered, self.trace.filtered is not None),
                                               (_blank_reasons(self.trace), bool(_blank_reasons(self.trace))),
                                               (_dropped_words(self.trace), self.trace.n_dropped),
                                               (self._windows_words(), self.windows > 1),
                                               ("hosts spread over the job's nodes at random (seeded)",
                                                self.placement == "spread")) if on)
        if self.trace.changes is not None:
            ch = self.trace.changes[1]
            cap = self.capacity_timeline(n_groups)
            what = "" if self.by_instance else " (the failures)"
            extra += (f"; capacity events: {int((ch < 0).sum())} removals{what} and {int((ch > 0).sum())} "
                      f"additions at {cap.instants.shape[0]} instants, the fleet {cap.start} nodes at the start, "
                      f"{int(cap.nodes.min())} at the least, below the job's {cap.need} for {cap.short():g} s "
                      f"({100 * cap.short() / self.trace.end:.3g} % of the log)" if self.trace.end > 0 else "")
            v = self.view(n_groups)
            if v is not None:
                extra += (f"; read instance by instance: of its removals {v.rows.shape[0]} take a node of the job"
                          + (f", {v.idle} an idle instance" if self.removals == "instance" else "")
                          + (f", {v.unbooted} an instance still booting ({self.boot:g}-s boot)" if self.boot else ""))
        return (f"trace: {self.trace.n_events} recorded failures over {self.trace.end:g} s{src} "
                f"(system MTBF {self.mtbf(n_groups):g} s), {past}{extra}")

    # -- values ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-friendly and exact: the trace's times, units, ``n_units``, ``end`` (and
        ``levels`` when it has them) inline; ``windows`` and ``placement`` when not the
        defaults (so the dicts, and the keys of stored runs, of earlier replays are unchanged)."""
        tr = self.trace
        trace = {"times": tr.times.tolist(), "units": tr.units.tolist(), "n_units": tr.n_units, "end": tr.end}
        if tr.levels is not None:
            trace["levels"] = [[name, list(labels)] for name, labels in tr.levels]
        out = {"kind": self.kind, "trace": trace, "after": self.after, "nodes_per_group": self.nodes_per_group,
               "law": self.law}
        if self.windows != 1:
            out["windows"] = self.windows
        if self.placement != "log":
            out["placement"] = self.placement
        if tr.changes is not None:  # only a capacity log has them (earlier dicts unchanged)
            trace["changes"] = [a.tolist() for a in tr.changes]
            out["capacity"] = self.capacity
            if self.by_instance:
                out["removals"], out["boot"] = self.removals, self.boot
        return out

    @classmethod
    def _from_fields(cls, fields: dict) -> "TraceReplay":
        names = [f.name for f in dataclasses.fields(cls)]
        for k in fields:
            if k not in names:
                raise ValueError(f"failure_model has unknown key {k!r} (a {cls.kind} model takes {names})")
        kw = dict(fields)
        t = kw.get("trace")
        if isinstance(t, str):
            kw["trace"] = read_trace(t)
        elif isinstance(t, dict):
            if "path" in t:
                opts = {k: v for k, v in t.items() if k != "path"}
                kw["trace"] = read_trace(t["path"], **opts)
            else:
                extra = set(t) - {"times", "units", "n_units", "end", "levels", "changes"}
                if extra or not {"times", "units"} <= set(t):
                    raise ValueError("failure_model.trace must be a path, {'path': ..., <read_trace options>} or "
                                     f"{{'times', 'units', 'n_units', 'end', 'levels'}}, got keys {sorted(t)}")
                levels = t.get("levels")
                ch = t.get("changes")
                kw["trace"] = Trace(t["times"], t["units"], n_units=t.get("n_units"), end=t.get("end"),
                                    levels=levels, numbering="ids" if levels is None else "host_pattern",
                                    changes=None if ch is None else tuple(ch))
        return cls(**kw)


class FleetCapacity:
    """The nodes of a fleet over time from a log of capacity events, and when a restart of a job
    needing ``need`` of them may resume.

    The capacity is ``start`` nodes, minus one per removal, plus one per addition, every row at
    one instant applied at once (a bulk event). It is exogenous: the log decides when nodes go
    and come back, whatever the job does.

    Parameters
    ----------
    changes : (ndarray, ndarray)
        :attr:`Trace.changes <spare_core.events.trace.Trace.changes>`: times and -1/+1.
    start : int
        Nodes before the log's first row, >= 0; with the log's rows at time 0 (a log that
        lists its fleet as additions at 0) they must hold ``need`` (the job starts on them).
    need : int
        The job's nodes (its groups times the log's units per group).
    end : float
        The log's end: past it the log says nothing, and a fleet still short of ``need``
        there is taken as whole again at ``end`` (a restart waits at most until then).
    hits : ndarray of bool, optional
        For each change, whether a removal takes a node of the job (a log read instance by
        instance: :meth:`TraceReplay.view`); default every removal does.

    Examples
    --------
    >>> import numpy as np
    >>> c = FleetCapacity((np.array([10.0, 10.0, 30.0, 50.0]), np.array([-1, -1, 1, 1])), 5, 4, 60.0)
    >>> c.nodes.tolist(), c.instants.tolist()
    ([3, 4, 5], [10.0, 30.0, 50.0])
    >>> c.ready(np.array([10.0, 12.0, 40.0]), 1.0).tolist()
    [30.0, 30.0, 0.0]
    """

    __slots__ = ("instants", "nodes", "need", "start", "end", "_next_ok", "removed", "added", "_next_of")

    def __init__(self, changes, start, need, end, hits=None):
        t, d = changes[0], changes[1]
        self.start, self.need, self.end = int(start), int(need), float(end)
        self.instants, first = np.unique(t, return_index=True)
        per = np.add.reduceat(d.astype(np.int64), first) if t.shape[0] else np.zeros(0, dtype=np.int64)
        # the rows of each instant: removals of the job's nodes and additions (a bulk event is
        # several of one kind)
        hit = d < 0 if hits is None else np.asarray(hits, dtype=bool) & (d < 0)
        self.removed = np.add.reduceat(hit.astype(np.int64), first) if t.shape[0] else per
        self.added = np.add.reduceat((d > 0).astype(np.int64), first) if t.shape[0] else per
        self.nodes = self.start + np.cumsum(per)
        at0 = int(self.nodes[0]) if self.instants.shape[0] and self.instants[0] == 0.0 else self.start
        if at0 < self.need:
            raise ValueError(f"capacity: the fleet holds {at0} nodes at time 0 ({self.start} plus the log's rows at 0), "
                             f"fewer than the job's {self.need}: give failures.trace.capacity (or start the log later)")
        if self.nodes.shape[0] and self.nodes.min() < 0:
            i = int(np.argmax(self.nodes < 0))
            raise ValueError(f"capacity: the log removes more nodes than the fleet has ({self.nodes[i]} at "
                             f"t = {self.instants[i]:g} s from {self.start} at the start): give failures.trace.capacity")
        self._next_ok = self._next_holding(self.need)
        self._next_of = {self.need: self._next_ok}

    def _next_holding(self, need: int) -> np.ndarray:
        """For each instant, the first instant at or after it where the fleet holds ``need``
        nodes (the number of instants where it never does again)."""
        ok = self.nodes >= need
        idx = np.where(ok, np.arange(ok.shape[0]), ok.shape[0])
        return np.minimum.accumulate(idx[::-1])[::-1] if idx.shape[0] else idx

    @property
    def grows(self) -> bool:
        """Whether the log adds nodes at all (an elastic job then grows back: :meth:`membership`)."""
        return bool(self.added.sum())

    def live_groups(self, n_groups: int, nodes_per_group: int = 1) -> np.ndarray:
        """The groups an elastic job runs on after each instant: ``min(n_groups, nodes //
        nodes_per_group)``, every whole group the fleet can fill."""
        return np.minimum(n_groups, self.nodes // nodes_per_group)

    def membership(self, n_groups: int, nodes_per_group: int = 1):
        """The membership changes of an elastic job that follows the fleet: ``(times, groups,
        rejoin)``, rejoin 1 for a group joining and 0 for one dropping out.

        Every removal hits a node of the job (as for any policy on the log): at an instant
        with ``r`` removals, ``min(r, G)`` of the job's ``G`` live groups drop out (each in
        its own group, the worst case when a group has several nodes). After the instant
        the job runs on :meth:`live_groups` ``G'`` groups, so ``G' - G + drops >= 0`` groups
        join, from the fleet's idle nodes: an addition's, or one that was idle while the
        fleet held more than the job (a removal then costs a drop and a rejoin, a swap).
        Within an instant drops and joins pair up first (swaps: a join then a drop when the
        job is short, ``G < n_groups``, so that a swap never takes it below ``G``; a drop
        then a join at the full size, where no group is out to join first), then the
        remaining drops, then the remaining joins. The groups are a stack: the job's live groups are ``0 .. L-1``, a drop takes
        group ``L - 1`` and a join brings back group ``L``, so every group's events alternate
        (out, in, out, ...). Before the log's first instant the job holds all its groups.

        The changes follow from the log alone: after a global restart the job resumes only
        once the fleet holds it whole (:meth:`ready`), where these changes have it whole
        too, so the stream holds after every restart (the changes of instants while the job
        was down are skipped, as every replay's). A job resuming on fewer groups
        (``elastic.resume = "any"``) resumes on :meth:`groups_at` its resume, the stream's
        state there, so the stream holds for it too.
        """
        n, npg = int(n_groups), int(nodes_per_group)
        g_after = self.live_groups(n, npg)
        g_before = np.concatenate(([n], g_after[:-1])).astype(np.int64)
        drops = np.minimum(self.removed, g_before)
        joins = g_after - g_before + drops
        pairs = np.minimum(drops, joins)
        m = drops + joins
        total = int(m.sum())
        times = np.repeat(self.instants, m)
        # each event's position within its instant, and what it is there (the pattern above)
        first = np.cumsum(m) - m
        j = np.arange(total) - np.repeat(first, m)
        p2, d_ = np.repeat(2 * pairs, m), np.repeat(drops - pairs, m)
        # a swap's join comes first when the job is short (parity 0), its drop first at full size
        lead = np.repeat((g_before < n).astype(np.int64), m)
        join = np.where(j < p2, j % 2 != lead, j >= p2 + d_)
        step = np.where(join, 1, -1)
        live = n + np.cumsum(step)
        groups = np.where(join, live - 1, live).astype(np.int64)
        return times, groups, join.astype(np.int8)

    def short(self) -> float:
        """Seconds of ``[0, end]`` during which the fleet holds fewer than ``need`` nodes."""
        bounds = np.append(self.instants, self.end)
        return float(np.sum(np.diff(bounds)[self.nodes < self.need]))

    def groups_at(self, t: float, n_groups: int, nodes_per_group: int = 1) -> int:
        """The whole groups of ``nodes_per_group`` nodes the fleet fills after every row at or
        before ``t`` (exactly: the rows a membership epoch starting at ``t`` skips), at most
        ``n_groups``; ``n_groups`` before the first row."""
        i = int(np.searchsorted(self.instants, t, side="right")) - 1
        nodes = self.start if i < 0 else int(self.nodes[i])
        return min(int(n_groups), nodes // int(nodes_per_group))

    def ready(self, at, delay, need=None) -> np.ndarray:
        """For restarts after failures at the run's times ``at`` (seconds) taking ``delay``
        seconds, the earliest resume the fleet allows: 0 where it holds the job at
        ``at + delay`` (no wait), else the next instant it does (or ``end``). The instant of
        ``at + delay`` is found with a relative tolerance of 1e-9, so a failure read one
        rounding away from its row still sees its own removal. ``need`` (default the job's
        nodes) is the nodes a resume asks for: an elastic job that resumes on whatever whole
        groups it can fill (``elastic.resume = "any"``) asks for its fewest groups' nodes."""
        nxt = self._next_ok
        if need is not None:
            need = int(need)
            if need not in self._next_of:
                self._next_of[need] = self._next_holding(need)
            nxt = self._next_of[need]
        t0 = np.asarray(at, dtype=np.float64) + delay
        i = np.searchsorted(self.instants, t0 + 1e-9 * np.maximum(1.0, np.abs(t0)), side="right") - 1
        out = np.zeros(t0.shape[0])
        inside = i >= 0
        if not inside.any():
            return out
        k = nxt[i[inside]]
        short = k != i[inside]
        vals = np.where(k < self.instants.shape[0], self.instants[np.minimum(k, self.instants.shape[0] - 1)], self.end)
        out[inside] = np.where(short, vals, 0.0)
        return out


def _units_per_group(reader, npg, unit_gpus, gpg, gpn):
    """The log's units per data-parallel group of a replay, and how they were counted in words.

    Without ``unit_gpus`` the log's units are the job's nodes: ``nodes_per_group`` as given,
    else ``gpus_per_group / gpus_per_node``. With ``unit_gpus = u`` a group of ``gpg`` GPUs holds
    ``gpg / u`` log units (a job node of ``g`` GPUs covers ``g / u`` of them), so every GPU of the
    job sees the per-GPU failures of the log: ``u`` must divide ``gpg`` (a replay places whole
    units), and a ``nodes_per_group`` given too must agree.
    """
    if unit_gpus is None:
        if npg is not None:
            return npg, ""
        if gpg % gpn == 0:
            return gpg // gpn, ""
        raise reader.fail("failures.nodes_per_group", f"is needed: a group of {gpg} GPUs is not a whole "
                          f"number of {gpn}-GPU nodes (give the log's units per group)", None)
    if gpg % unit_gpus:
        raise reader.fail("failures.trace.unit_gpus", f"must divide cluster.gpus_per_group ({gpg}) in a replay: a "
                          f"group is then a whole number of log units (a unit of {unit_gpus} GPUs cannot be split "
                          "between groups)", unit_gpus)
    per = gpg // unit_gpus
    if npg is not None and npg != per:
        raise reader.fail("failures.nodes_per_group", f"must be {per} with failures.trace.unit_gpus = {unit_gpus} "
                          f"(a group of {gpg} GPUs is {per} log units of {unit_gpus} GPUs), or be left out", npg)
    s = "s" if unit_gpus > 1 else ""
    return per, (f"log units of {unit_gpus} GPU{s} (failures.trace.unit_gpus): {per} per group of {gpg} GPUs, "
                 f"{gpn / unit_gpus:g} per {gpn}-GPU node, so the job sees the log's per-GPU rate")


def _blank_reasons(trace: Trace) -> str:
    """A warning in words when the log's reason column is blank on some failures and no
    ``where`` said which rows are failures ("" otherwise)."""
    if trace.reasons is None or trace.filtered is not None:
        return ""
    n = sum(1 for r in trace.reasons if not r.strip())
    if not n:
        return ""
    return (f"warning: {n:,} of {trace.n_events:,} rows have a blank reason and count as failures (say which rows "
            "are failures with failures.trace.where)")


def _dropped_words(trace: Trace) -> str:
    return (f"{trace.n_dropped:,} rows of the file outside [start, end] dropped ({trace.dropped_before:,} before "
            f"start, {trace.dropped_after:,} after end)")


def _rotate(times, groups, end, offset):
    """The log read from ``offset`` to ``end`` then from 0 to ``offset`` (times from 0 again):
    rows at or after ``offset`` first, then the earlier ones shifted by ``end - offset``."""
    cut = int(np.searchsorted(times, offset, side="left"))
    # clipped at end: t + (end - offset) <= end exactly, but not always once rounded
    t = np.concatenate((times[cut:] - offset, np.minimum(times[:cut] + (end - offset), end)))
    g = np.concatenate((groups[cut:], groups[:cut]))
    t.flags.writeable = False
    return t, g


# above every row index a scan compares with ``prev``: nothing is before the epoch's start
_EVERY_ROW = 1 << 62


class TraceProcess:
    """The replay of one run (built by :meth:`TraceReplay.process`; the
    :class:`~spare_core.events.models.FailureProcess` contract).

    Attributes
    ----------
    window : int
        The window this run replays (:meth:`TraceReplay.window`; 0 with one window).

    Notes
    -----
    A group is out from its first row in the epoch on, so the failures an epoch hands out
    are the rows ``j`` (from the epoch's first row ``p`` on) whose previous row of the same
    group lies before ``p``. The previous-row index of every row is computed once (a stable
    sort by group); :meth:`take` then scans the log with one comparison ``prev[j] < p`` per
    row in compiled code (``_ext/events/_trace_scan.pyx``), so a long log replays at the speed of a
    C loop whatever the restarts.
    When looping, the previous row of a group's first row in a copy is its last row in the
    copy before. This is where a failure of a group already out is absorbed (the ``prev[j] < p0``
    test of the scan); a window only rotates the rows before ``prev`` is computed.
    """

    def __init__(self, model: TraceReplay, n_groups, seed, *, start=0.0, every=False):
        self.n_units = as_int(n_groups, "n_groups", min_value=1)
        # every row, also of groups already out in the epoch (a run with repairs drops those itself)
        self._every = bool(every)
        # relative to the job's start; the log's row of each row read (a window rotates them, a
        # log read instance by instance leaves some out): what a row's class is read by
        self._times, self._groups, self._orig = model.replayed(self.n_units)
        self._root = as_seed_sequence(seed)
        self._start = as_float(start, "start", min_value=0.0)
        self.window = model._window_of(self._root)
        if self.window:  # the log as a circle, read from the window's offset
            off = float(model.window_offsets()[self.window])
            cut = int(np.searchsorted(self._times, off, side="left"))
            self._orig = np.concatenate((np.arange(cut, self._times.shape[0]), np.arange(cut)))
            self._times, self._groups = _rotate(self._times, self._groups, model.trace.end, off)
        n = self._n = self._times.shape[0]
        self._after = model.after
        # a capacity log's rows at one instant are one bulk event: a restart at that instant
        # (costs.restart = 0) skips them all, not only those already handed out
        self._bulk = model.trace.changes is not None
        self._period = model.trace.end
        self._end = model.trace.end
        self._law = model.fitted().distribution if model.after == "fit" else None
        order = np.argsort(self._groups, kind="stable")
        g_sorted = self._groups[order]
        same = g_sorted[1:] == g_sorted[:-1]
        prev = np.full(n, -1, dtype=np.int64)
        prev[order[1:][same]] = order[:-1][same]
        self._prev = prev
        if self._after == "loop":
            last = np.zeros(self.n_units, dtype=np.int64)
            last[self._groups] = np.arange(n)  # later rows overwrite: the last row of each group
            wrap = prev.copy()
            firsts = prev < 0
            wrap[firsts] = last[self._groups[firsts]] - n
            self._prev_wrap = wrap
        self._n_in_trace = int(np.unique(self._groups).size)
        self.epoch = 0
        self._epoch_start = self._now = self._start
        self._epoch_pos = 0      # first row of the epoch (loop: virtual index over copies)
        self._pos = 0            # next row to scan
        self._handed = 0         # failures handed out in this epoch
        self._cont = None        # continuation state past the end (after="fit")
        self._rows = []          # row arrays (virtual indices) of the log failures handed out this epoch
        self._n_rows = 0         # ... how many
        self._cont_times = []    # times of the continuation failures handed out this epoch

    @property
    def epoch_start(self) -> float:
        return self._epoch_start

    @property
    def now(self) -> float:
        return self._now

    @property
    def n_alive(self) -> int:
        return self.n_units - self._handed

    def restart(self, time) -> None:
        """Next epoch at ``time``: every group back, the log resumes at its first row at or
        after ``time`` not yet consumed."""
        if not (type(time) is float and time >= self._now):  # the simulator's fast path
            # the run sees the last failure at ``epoch_start + (now - epoch_start)`` (one
            # rounding away from ``now``, docs/reliability.md, *Determinism*): a restart at that
            # very time (``costs.restart = 0``) is no step back, so compare on the same value
            time = as_float(time, "time", min_value=self._epoch_start + (self._now - self._epoch_start))
        self.epoch += 1
        self._epoch_start = time
        self._now = time if time >= self._now else self._now
        rel = time - self._start
        if self._after == "loop":
            c = math.floor(rel / self._period)
            pos = c * self._n + int(np.searchsorted(self._times, rel - c * self._period, side="left"))
        elif self._bulk:
            # the restart's time is one rounding away from its failure's row (see above)
            pos = int(np.searchsorted(self._times, rel + 1e-9 * max(1.0, abs(rel)), side="right"))
        else:
            pos = int(np.searchsorted(self._times, rel, side="left"))
        # never back: rows at exactly ``time`` already handed out are not replayed again
        self._pos = self._epoch_pos = max(self._pos, pos)
        self._handed = 0
        self._cont = None
        self._rows, self._n_rows, self._cont_times = [], 0, []

    def rewind(self, n) -> None:
        """Forget every failure of this epoch after the first ``n`` handed out, as if only
        those had been taken; only a :meth:`restart` may follow.

        A reader that takes a chunk of the epoch ahead of its consumer (the epoch's failures
        are fixed until the next restart) rewinds to what was consumed before restarting: the
        restart resumes the log after the last row actually consumed, exactly as a reader that
        took those ``n`` one at a time (and asked for no more) would have left it.
        """
        n = as_int(n, "n", min_value=0, max_value=self._handed)
        if n > self._n_rows:  # the n-th failure came from the continuation: the log was scanned out
            self._now = self._cont_times[n - self._n_rows - 1]
        elif n == 0:
            self._pos, self._now = self._epoch_pos, self._epoch_start
        else:
            seen = 0
            for rows in self._rows:
                if n <= seen + rows.shape[0]:
                    row = int(rows[n - seen - 1])
                    break
                seen += rows.shape[0]
            self._pos = row + 1
            if self._after == "loop":
                c, i = divmod(row, self._n)
                self._now = float(self._times[i] + (self._start + c * self._period))
            else:
                self._now = float(self._times[row] + self._start)
        self._handed = n
        self._cont = "rewound"  # only a restart may follow

    def handed_rows(self) -> np.ndarray:
        """The log row (an index into ``trace.times``; -1 for a failure of ``after = "fit"``'s
        continuation) of each failure handed out in this epoch, in order (failure classes read a
        row's class from the log's cause column)."""
        idx = np.concatenate(self._rows) if len(self._rows) > 1 else (self._rows[0] if self._rows else _NO_GROUPS)
        if self._after == "loop":
            idx = idx % self._n
        if self._orig is not None:
            idx = self._orig[idx]
        if self._cont_times:
            idx = np.concatenate((idx, np.full(len(self._cont_times), -1, dtype=np.int64)))
        return idx

    def take(self, k, with_units=True):
        """Up to ``k`` next failures of the epoch: ``(times, groups)`` lists, in log order."""
        times, groups = self.take_arrays(k)
        return times.tolist(), groups.tolist()

    def take_arrays(self, k):
        """:meth:`take` as arrays: ``(times, groups)``, float64 and int64 (for readers that
        keep arrays, such as :class:`~spare_core.events.RunFailures`)."""
        if type(k) is not int or k < 0:
            k = as_int(k, "k", min_value=0)
        if self._cont == "rewound":
            raise RuntimeError("a rewound replay must restart before taking failures")
        t_parts, g_parts = [], []
        n, p0 = self._n, self._epoch_pos
        if self._every:
            need = k
            p0 = _EVERY_ROW  # every previous row index is below it: no row is absorbed
        else:
            need = min(k, self.n_units - self._handed)
            if self._after == "loop":  # a looped log only ever takes out the groups it names
                need = min(need, self._n_in_trace - self._handed)
        scan = _SCAN.scan
        while need > 0:
            pos = self._pos
            if self._after == "loop":  # one copy per scan: copy c compares prev_wrap + c * n with p0
                c = pos // n
                off = c * n
                rows, nxt = scan(self._prev if c == 0 else self._prev_wrap, off, pos, off + n, p0 - off, need)
                idx = rows - off if c else rows
                base = self._start + c * self._period
            else:
                if pos >= n:
                    if self._after == "fit":
                        times, groups = [], []
                        self._continue(need, times, groups)
                        t_parts.append(np.array(times, dtype=np.float64))
                        g_parts.append(np.array(groups, dtype=np.int64))
                    break
                rows, nxt = scan(self._prev, 0, pos, n, p0, need)
                idx, base = rows, self._start
            if rows.shape[0]:
                t_parts.append(self._times[idx] + base)
                g_parts.append(self._groups[idx])
                self._rows.append(rows)
                self._n_rows += rows.shape[0]
                need -= rows.shape[0]
                self._handed += rows.shape[0]
            self._pos = nxt
        if len(t_parts) == 1:
            times, groups = t_parts[0], g_parts[0]
        elif t_parts:
            times, groups = np.concatenate(t_parts), np.concatenate(g_parts)
        else:
            return _NO_TIMES, _NO_GROUPS
        if times.shape[0]:
            self._now = float(times[-1])
        return times, groups

    def take_units(self) -> list:
        """Nothing is ever owed: :meth:`take` always returns the groups."""
        return []

    # -- past the end (after="fit") ----------------------------------------------------------
    def _continue(self, need, times, groups):
        """A renewal process of the fitted law from ``max(end, epoch start)``; each failure
        hits a uniformly random live group (swap-removal list, like the system model)."""
        if self._cont is None:
            rng = stream_rng(self._root, "trace-continuation", self.epoch)
            anchor = max(self._start + self._end, self._epoch_start)
            dead = np.zeros(self.n_units, dtype=bool)
            if not self._every:
                dead[self._groups[min(self._epoch_pos, self._n):]] = True  # out in this epoch already
            self._cont = [rng, anchor, np.flatnonzero(~dead).tolist()]
        rng, t, alive = self._cont
        for _ in range(need):
            if not alive:
                break
            t += float(self._law.sample(rng, 1)[0])
            j = int(rng.integers(len(alive)))
            g = alive[j]
            if not self._every:  # a group out stays out until the restart
                alive[j] = alive[-1]
                alive.pop()
            self._handed += 1
            times.append(t)
            groups.append(g)
            self._cont_times.append(t)
        self._cont[1] = t
