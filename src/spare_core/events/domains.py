"""Correlated failures: whole racks, leaf switches or power domains failing on top of a base model.

A :class:`DomainFailures` model composes any base :class:`~spare_core.events.FailureModel`
(the failures of single groups or nodes) with failure *domains* at one or more nested levels
(e.g. power domain, then rack), each level with its own law for the time to failure of one
domain. A domain failure downs every group of the domain that is still in the job at the same
instant; the groups come back at the next global restart, like every other failed group.

Why: in the Llama 3 405B run 8.4 % of the unexpected interruptions (35 of 419) were network
switch or cable failures, which take down every node behind the switch [1]_; Meta's research
clusters see co-occurring multi-node failures and failure cascades [2]_. Whether SPARe's stacks
survive such an event depends on where a shard type's holders sit
(:meth:`spare_core.strategies.spare.layout.StackedLayout.rack_aware`, :mod:`spare_core.strategies.spare.domain_endurance`).

References
----------
.. [1] A. Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783 (2024), section 3.3.4.
.. [2] A. Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research
   Clusters", HPCA 2025, arXiv:2410.21680.
"""
from __future__ import annotations

import dataclasses
import math
from collections import deque

import numpy as np

from .._seeding import as_seed_sequence, epoch_stream
from .._validate import as_float, as_int
from ..distributions import Distribution, Exponential, as_distribution, distribution_from_dict
from ..topology import FailureDomains
from .models import FailureModel, faster_law, rate_factor

__all__ = ["DomainFailures", "DomainFailureProcess", "DOMAIN_KEYS"]

#: keys of one level of ``[[failures.domains]]`` (a rate form: ``mtbf``, or ``interruptions`` with ``period``,
#: counted over the domains of ``measured_on_gpus`` GPUs, by default the job's)
DOMAIN_KEYS = ("name", "nodes", "mtbf", "interruptions", "period", "measured_on_gpus")

#: name of the random stream of the domains' times to failure (one sub-stream per epoch)
STREAM = "domain-lifetime"


@dataclasses.dataclass(frozen=True)
class DomainFailures(FailureModel, kind="domains"):
    """Failures of single groups (a base model) plus failures of whole domains of groups.

    Parameters
    ----------
    base : FailureModel or dict
        The failures of single groups/nodes (e.g. ``GroupLifetimes(system_mtbf=...)``), with
        its own rate; a dict is read by :meth:`FailureModel.from_dict`.
    lifetimes : sequence of Distribution or float
        One law per level, coarsest first: the time to failure of one domain of that level
        (a number means a fixed time). ``Exponential(mean)`` is the usual choice: a switch or
        PDU failing at a constant rate, one failure per ``mean`` seconds per domain.
    groups_per_domain : sequence of int, optional
        Contiguous domains: at level l, group g is in domain ``g // groups_per_domain[l]``;
        each entry a multiple of the next (nested), one per level.
    labels : sequence of sequences of int, optional
        Instead of ``groups_per_domain``: ``labels[l][g]``, the level-l domain of group g, for a
        fixed number of groups (see :class:`~spare_core.topology.FailureDomains`).
    names : sequence of str, optional
        One name per level (default ``"level0"``, ...).

    Notes
    -----
    *Semantics.* Every domain of every level is a failure clock, drawn at the start of each
    epoch (the time between two global restarts) from the level's law, relative to the epoch
    start. When a clock rings, every group of the domain still in the job fails at that
    instant (consecutive failures with equal times, groups in increasing order); the domain
    stays down for the rest of the epoch, and a domain whose groups are all out already fails
    silently. At a restart every group comes back and every domain clock is redrawn (exact for
    exponential laws, which are memoryless). The base model runs unchanged on the same seed,
    so its failures are the ones it gives alone (common random numbers: comparing a model
    with and without domains sees the same single-group failures); a base failure that
    lands on a group a domain already took out has no effect and is dropped.

    *Rate.* :meth:`mtbf` counts a domain failure as one failure (one interruption, as a
    failure log counts it): 1 / (1 / base MTBF + sum over levels of D_l / mean_l).

    *When it fits.* A cluster whose failure log shows multi-node events (switch, cable,
    power); the domain laws come from the share of such events (e.g. 35 of 419 interruptions
    in 54 days over the job's switches gives a per-switch rate). With the SPARe policy, compare
    ``StackedLayout.rack_aware(model.domains(N), r)`` against the default stacks.

    Examples
    --------
    >>> from spare_core.events import GroupLifetimes
    >>> from spare_core.distributions import Exponential
    >>> m = DomainFailures(GroupLifetimes(system_mtbf=600.0), [Exponential(20 * 3600.0)],
    ...                    groups_per_domain=[10], names=["rack"])
    >>> round(m.mtbf(200), 1)          # 20 racks, one failure per rack per 20 h: 1 per hour
    514.3
    >>> m.domains(200)
    FailureDomains(n_groups=200, rack=20)
    >>> DomainFailures.from_dict(m.to_dict()) == m
    True
    """

    base: FailureModel
    lifetimes: tuple
    groups_per_domain: tuple | None = None
    labels: tuple | None = None
    names: tuple | None = None

    # a scenario file's ``[[failures.domains]]``: levels on top of the file's model
    file_keys = ("domains",)
    file_layer = True

    @classmethod
    def from_file(cls, reader, table, cluster, *, below):
        """``[[failures.domains]]`` (levels coarsest first) on top of ``below``, the file's model
        (a :class:`~spare_core.events.files.FileFailures`): the whole model and the rate in words.

        A domain of ``d`` nodes holds whole groups (``d`` a multiple of the nodes per group ``g``:
        ``d / g`` groups per domain) or lies inside one group (``g`` a multiple of ``d``: the group
        is down when any of its ``g / d`` domains fails; the first of ``g / d`` independent
        exponential clocks of mean ``m`` rings after an exponential time of mean ``m d / g``, so the
        group gets one clock of that mean, exactly). A domain that straddles groups is refused.
        """
        from .files import FileFailures  # files imports the models

        single = below
        # the single failures as a whole model (kind + rate), which the domains compose
        if isinstance(single.model, str):
            base = FailureModel.by_kind(single.model)(system_mtbf=single.system_mtbf, shape=single.shape)
        elif single.system_mtbf is None:
            base = single.model
        else:
            base = single.model.replace(system_mtbf=single.system_mtbf, shape=single.shape)
        model, words = cls._levels_from_file(reader, table["domains"], base, cluster)
        mtbf = model.mtbf(cluster.n_groups)
        return FileFailures(model=model, rate=single.rate,
                            note=f"{single.note}; plus {words}: all failures, system MTBF {mtbf / 3600:.3g} h",
                            fit=single.fit, trace=single.trace, trace_read=single.trace_read)

    @classmethod
    def _levels_from_file(cls, rd, spec, base, cluster):
        key = "failures.domains"
        nodes, gpus_per_node, gpus_per_group = cluster.nodes, cluster.gpus_per_node, cluster.gpus_per_group
        if isinstance(spec, dict):
            spec = [spec]
        if not isinstance(spec, list) or not spec or not all(isinstance(lv, dict) for lv in spec):
            raise rd.fail(key, "must be one table per level, coarsest first ([[failures.domains]] with name, nodes "
                          "and mtbf or interruptions + period)", spec)
        if gpus_per_group % gpus_per_node:
            raise rd.fail(key, f"need groups of whole nodes: cluster.gpus_per_group ({gpus_per_group}) is not a "
                          f"multiple of cluster.gpus_per_node ({gpus_per_node})", spec)
        g = gpus_per_group // gpus_per_node
        names, gpd, laws, words = [], [], [], []
        d_prev = 0
        for i, lv in enumerate(spec):
            at = f"{key}[{i}]"
            for k, v in lv.items():
                if k not in DOMAIN_KEYS:
                    raise rd.fail(f"key '{at}.{k}'", f"is unknown (allowed in a domain level: {list(DOMAIN_KEYS)})", v)
            name = rd.text(f"{at}.name", lv.get("name", f"level{i}"))
            if "nodes" not in lv:
                raise rd.error(f"{at} needs nodes (the nodes of one domain, e.g. 16 for a rack)")
            d = rd.integer(f"{at}.nodes", lv["nodes"], high=nodes)
            if names and d_prev % d:
                raise rd.fail(f"{at}.nodes", f"must divide the coarser level's nodes ({d_prev}): levels nest, "
                              "coarsest first", d)
            if d % g and g % d:
                raise rd.fail(f"{at}.nodes", f"must be a multiple or a divisor of the nodes per group ({g}): a "
                              "domain that straddles groups is not modelled", d)
            count = -(-nodes // d)  # the job's domains of this level (the last one may be partial)
            if ("mtbf" in lv) == ("interruptions" in lv):
                raise rd.error(f"{at} needs exactly one rate form: mtbf (of one domain) or interruptions with "
                               f"period (over the job's {count} domains)")
            if "mtbf" in lv:
                for extra in ("period", "measured_on_gpus"):
                    if extra in lv:
                        raise rd.fail(f"{at}.{extra}", "only goes with interruptions", lv[extra])
                mean = rd.duration(f"{at}.mtbf", lv["mtbf"])
            else:
                if "period" not in lv:
                    raise rd.error(f"{at}.interruptions needs {at}.period (e.g. '54 d')")
                # the count was seen over the domains of the size it was measured on: one domain's
                # mean holds when the job is resized
                on = rd.integer(f"{at}.measured_on_gpus", lv.get("measured_on_gpus", nodes * gpus_per_node))
                seen_nodes = -(-on // gpus_per_node)
                seen = -(-seen_nodes // d)
                mean = rd.duration(f"{at}.period", lv["period"]) * seen / rd.integer(f"{at}.interruptions",
                                                                                      lv["interruptions"])
            names.append(name)
            gpd.append(max(d // g, 1))
            laws.append(Exponential(mean / max(g // d, 1)))
            words.append(f"{count} {name} domains of {d} nodes, each failing once per {mean / 86_400:.3g} d")
            d_prev = d
        try:
            model = cls(base, laws, groups_per_domain=gpd, names=names)
        except (TypeError, ValueError) as exc:
            raise rd.fail(key, f"cannot be modelled ({exc})", spec) from None
        return model, "; ".join(words)

    def __post_init__(self):
        set_ = object.__setattr__
        base = self.base
        if isinstance(base, dict):
            base = FailureModel.from_dict(base)
        if not isinstance(base, FailureModel):
            raise TypeError(f"base must be a FailureModel, got {type(base).__name__} {base!r}")
        if isinstance(base, DomainFailures):
            raise ValueError("base must be a model of single failures, got another DomainFailures (give both levels in one)")
        set_(self, "base", base)
        if isinstance(self.lifetimes, (Distribution, dict)) or not hasattr(self.lifetimes, "__len__"):
            raise TypeError(f"lifetimes must be a sequence (one law per level), got {type(self.lifetimes).__name__}")
        laws = tuple(
            distribution_from_dict(v, f"lifetimes[{i}]") if isinstance(v, dict) else as_distribution(v, f"lifetimes[{i}]")
            for i, v in enumerate(self.lifetimes)
        )
        if not laws:
            raise ValueError("lifetimes must give one law per level, got none")
        set_(self, "lifetimes", laws)
        if (self.groups_per_domain is None) == (self.labels is None):
            raise ValueError("give exactly one of groups_per_domain (contiguous domains) and labels (a domain per group)")
        if self.groups_per_domain is not None:
            gpd = tuple(as_int(x, f"groups_per_domain[{i}]", min_value=1) for i, x in enumerate(self.groups_per_domain))
            if len(gpd) != len(laws):
                raise ValueError(f"groups_per_domain must have one entry per level ({len(laws)}), got {len(gpd)}")
            FailureDomains.contiguous(max(gpd), gpd)  # nesting checked here
            set_(self, "groups_per_domain", gpd)
        else:
            labels = tuple(tuple(int(x) for x in np.asarray(row).tolist()) for row in np.atleast_2d(np.asarray(self.labels)))
            fd = FailureDomains(labels)  # validated (integers, nested)
            if fd.n_levels != len(laws):
                raise ValueError(f"labels must have one row per level ({len(laws)}), got {fd.n_levels}")
            set_(self, "labels", labels)
        names = self.names
        if names is not None:
            names = tuple(names)
            FailureDomains(np.zeros((len(laws), 1), dtype=np.int64), names=names)  # names checked
            set_(self, "names", names)

    # -- structure --------------------------------------------------------------------------
    @property
    def renews_all_at_restart(self) -> bool:
        """As the base model: the domain clocks are redrawn at every restart."""
        return self.base.renews_all_at_restart

    def domains(self, n_groups) -> FailureDomains:
        """The group -> domain map of a job of ``n_groups`` groups (for rack-aware stacks)."""
        n = as_int(n_groups, "n_groups", min_value=1)
        if self.groups_per_domain is not None:
            return FailureDomains.contiguous(n, self.groups_per_domain, names=self.names)
        if len(self.labels[0]) != n:
            raise ValueError(f"labels give a domain for {len(self.labels[0])} groups, the job has n_groups={n}")
        return FailureDomains(self.labels, names=self.names)

    def check(self, n_groups) -> None:
        self.domains(n_groups)
        self.mtbf(n_groups)

    def mtbf(self, n_groups) -> float:
        fd = self.domains(n_groups)
        rate = 1.0 / self.base.mtbf(n_groups)
        rate += sum(d / law.mean for d, law in zip(fd.n_domains, self.lifetimes))
        return 1.0 / rate

    def describe(self, n_groups) -> str:
        fd = self.domains(n_groups)
        levels = "; ".join(f"{d} {name} domains, each {law!r}" for name, d, law in zip(fd.names, fd.n_domains, self.lifetimes))
        return f"domains: {levels}; plus {self.base.describe(n_groups)}"

    def scaled(self, factor: float) -> "DomainFailures":
        """The single failures (the base's :meth:`~FailureModel.scaled`) and every level's
        domains ``factor`` times as frequent."""
        f = rate_factor(factor)
        return self.replace(base=self.base.scaled(f), lifetimes=tuple(faster_law(law, f) for law in self.lifetimes))

    def process(self, n_groups, seed, *, start=0.0) -> "DomainFailureProcess":
        return DomainFailureProcess(self, n_groups, seed, start=start)

    # -- values ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "base": self.base.to_dict(),
            "lifetimes": [law.to_dict() for law in self.lifetimes],
            "groups_per_domain": None if self.groups_per_domain is None else list(self.groups_per_domain),
            "labels": None if self.labels is None else [list(row) for row in self.labels],
            "names": None if self.names is None else list(self.names),
        }

    @classmethod
    def _from_fields(cls, fields: dict) -> "DomainFailures":
        names = [f.name for f in dataclasses.fields(cls)]
        for k in fields:
            if k not in names:
                raise ValueError(f"failure_model has unknown key {k!r} (a {cls.kind} model takes {names})")
        return cls(**fields)  # __post_init__ reads the dicts of base and lifetimes


class DomainFailureProcess:
    """The failures of one seeded run of a :class:`DomainFailures` model (a FailureProcess).

    Merges the base process's failures with the domain clocks of the epoch, in time order
    (a base failure first on an exact tie). Domain clocks of epoch k come from the named
    stream ``"domain-lifetime"`` at sub-stream k, relative to the epoch start.

    Parameters
    ----------
    model : DomainFailures
    n_groups : int
    seed : int or numpy.random.SeedSequence
    start : float
    """

    def __init__(self, model, n_groups, seed, *, start=0.0):
        n = as_int(n_groups, "n_groups", min_value=1)
        start = as_float(start, "start")
        root = as_seed_sequence(seed)
        self.n_units = n
        self.epoch = 0
        self._base = model.base.process(n, root, start=start)
        # merging needs the base's next failure time without consuming it: its peek() when it
        # has one (FailureStream does); else one failure is held back, and a restart before
        # that failure's time is refused (the base cannot restart before its own clock)
        self._base_peek = getattr(self._base, "peek", None)
        fd = model.domains(n)
        ptrs, members, laws = [0], [], []
        for level, law in enumerate(model.lifetimes):
            indptr, groups = fd.members(level)
            members.append(groups)
            ptrs.extend((ptrs[-1] + indptr[1:]).tolist())
            laws.append((law, fd.n_domains[level]))
        self._indptr = np.array(ptrs, dtype=np.int64)
        self._members = np.concatenate(members)
        self._laws = laws
        self._clocks = epoch_stream(root, STREAM)
        self._alive = np.ones(n, dtype=bool)
        self._begin(start)

    def _begin(self, start):
        self._start = self._now = start
        self._alive[:] = True
        self._n_alive = self.n_units
        rng = self._clocks.at(self.epoch)
        rel = np.concatenate([law.sample(rng, d) for law, d in self._laws])
        times = start + rel
        self._order = np.argsort(times, kind="stable").tolist()
        self._dom_times = times.tolist()
        self._next_dom = 0
        self._pending = deque()          # groups of a domain failure not handed out yet
        self._pending_time = 0.0
        self._base_head = None           # a base failure taken and not yet merged
        self._base_done = False

    # -- the FailureProcess attributes --------------------------------------------------------
    @property
    def epoch_start(self) -> float:
        return self._start

    @property
    def now(self) -> float:
        return self._now

    @property
    def n_alive(self) -> int:
        # the groups of a domain failure not handed out yet still count: a reader that stops at
        # n_alive == 0 (the epoch cache) would lose the rest of a domain event split by a request
        return self._n_alive + len(self._pending)

    def restart(self, time) -> None:
        """Next epoch at ``time``: every group back, every domain clock redrawn, the base
        model restarted."""
        t = as_float(time, "time")
        # the run sees a failure at ``start + (now - start)``, one rounding away from ``now``
        # (docs/reliability.md, *Determinism*): a restart at that very time (restart = 0) is no
        # step back, so compare on the same value
        if t < self._start + (self._now - self._start):
            raise ValueError(f"time must be >= now ({self._now}), got {t}")
        base_now = self._base.now
        if t < self._start + (base_now - self._start):
            raise ValueError(
                f"time must be >= the base process's clock ({base_now}) for a base model without peek(), got {t}"
            )
        self._base.restart(t)
        self.epoch += 1
        self._begin(t)

    def restart_from_zero(self) -> None:
        """Next epoch on a clock set back to 0 (the epoch cache's restart; see
        :meth:`spare_core.events.FailureStream.restart_from_zero`)."""
        if not callable(getattr(self._base, "restart_from_zero", None)):
            raise NotImplementedError(f"the base process {type(self._base).__name__} has no restart_from_zero")
        self._base.restart_from_zero()
        self.epoch += 1
        self._begin(0.0)

    def take_units(self) -> list:
        return []  # take() always hands out the groups

    def _peek_base(self) -> float:
        """Time of the base model's next failure (inf: none left in the epoch)."""
        if self._base_peek is not None:
            return self._base_peek()
        if self._base_head is None and not self._base_done:
            t, g = self._base.take(1, True)
            if t:
                self._base_head = (t[0], int(g[0]))
            else:
                self._base_done = True
        return math.inf if self._base_head is None else self._base_head[0]

    def _pop_base(self):
        if self._base_peek is not None:
            t, g = self._base.take(1, True)
            return t[0], int(g[0])
        head, self._base_head = self._base_head, None
        return head

    def take(self, k, with_units=True):
        """Up to ``k`` next failures ``(times, groups)``; fewer means the epoch has no more."""
        k = as_int(k, "k", min_value=0)
        times, groups = [], []
        alive = self._alive
        while len(times) < k:
            if self._pending:
                g = self._pending.popleft()
                times.append(self._pending_time)
                groups.append(g)
                continue
            if self._n_alive == 0:
                break
            t_base = self._peek_base()
            t_dom = self._dom_times[self._order[self._next_dom]] if self._next_dom < len(self._order) else math.inf
            if t_base <= t_dom and t_base < math.inf:
                t, g = self._pop_base()
                if alive[g]:
                    alive[g] = False
                    self._n_alive -= 1
                    self._now = t
                    times.append(t)
                    groups.append(g)
                continue
            if t_dom == math.inf:
                break
            d = self._order[self._next_dom]
            self._next_dom += 1
            down = self._members[self._indptr[d] : self._indptr[d + 1]]
            down = np.sort(down[alive[down]])
            if down.size:
                alive[down] = False
                self._n_alive -= int(down.size)
                self._now = self._pending_time = t_dom
                self._pending.extend(down.tolist())
        return times, groups

    def __repr__(self):
        return f"DomainFailureProcess(n_units={self.n_units}, epoch={self.epoch}, now={self._now:g}, alive={self._n_alive})"
