"""What ``spare advise`` runs besides the file's grid: each compared policy at its best r on
variants of the scenario (a cost halved or doubled, another spare pool, the in-memory tier
off), on the file's seeds (the same failures: common random numbers), in one study.

The variants answer "how sure is the choice" and "how many hot spares": they re-run only the
top cell of each policy, not the whole grid, so they cost a few runs per variant.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable

from ..sim import Scenario, Study
from ..sim.results import ResultSet
from .budget import check_budget
from .filejob import file_policy
from .progress import run_study

__all__ = ["KNOB_FACTORS", "Variant", "knob_variants", "io_variants", "spare_counts", "spares_variants", "memory_variant",
           "class_variants", "run_variants", "winner", "standby_counts", "standbys_variants", "retire_meaningful",
           "retire_counts", "retire_variants"]

#: each cost or time the sensitivity varies is halved and doubled
KNOB_FACTORS = (0.5, 2.0)


@dataclass(frozen=True)
class Variant:
    """One variant of the file's scenario: which key changed to what, and the scenario."""

    key: str
    value: Any
    label: str
    scenario: Scenario
    #: run at its own rule's interval, not the recommended one (a change the interval must follow:
    #: a blocking save of minutes at an interval chosen for one of seconds says nothing)
    retune: bool = False


def _knobs(sc: Scenario, io: Any = None) -> list[tuple[str, float, Callable[[float], Scenario]]]:
    """(file key, its value, the scenario at a multiple of it) for each cost the choice may
    hinge on: restart, save, and with repairs the swap, repair time and spare count. With a
    checkpoint priced by size (``io``, a ``CheckpointIO``) the restart varies without its load and
    the storage's bandwidths stand for the save (:func:`io_variants`)."""
    if io is None:
        out: list[tuple[str, float, Callable[[float], Scenario]]] = [
            ("costs.restart", sc.restart_time, lambda v: sc.replace(restart_time=v)),
            ("costs.checkpoint_save", sc.checkpoint_time, lambda v: sc.replace(checkpoint_time=v)),
        ]
    else:
        load = io.load_seconds
        out = [("costs.restart", sc.restart_time - load, lambda v: sc.replace(restart_time=v + load))]
    rp = sc.repair
    if rp is not None:
        # a law has no one value to halve or double: it is left as the file gives it
        out += [(k, v, make) for k, v, make in (
            ("repair.swap", rp.swap, lambda v: sc.replace(repair=dataclasses.replace(rp, swap=v))),
            ("repair.time", rp.time, lambda v: sc.replace(repair=dataclasses.replace(rp, time=v))))
            if isinstance(v, (int, float))]
    return out


def with_spares(sc: Scenario, n: int) -> Scenario:
    """The scenario with a pool of ``n`` spares; with a placement (``[fleet] place``) the node
    log's idle nodes follow (``n`` plus the warm standbys), as the file would set them."""
    rp = sc.repair
    out = sc.replace(repair=dataclasses.replace(rp, spares=n))
    fm = out.failures
    if getattr(fm, "place", "slot") != "slot":
        out = out.replace(failure_model=fm.replace(place_pool=n + rp.standbys))
    return out


def knob_variants(sc: Scenario, io: Any = None) -> list[Variant]:
    """The scenario with each cost halved and doubled (costs at 0 have no multiple), and with
    half and twice the spare pool when it is finite; with ``io`` (the file's
    ``ScenarioFile.checkpoint_io``) the storage's variants of :func:`io_variants` too."""
    out = [] if io is None else io_variants(sc, io)
    for key, value, make in _knobs(sc, io):
        if value > 0:
            out += [Variant(key, value * f, f"{key} x{f:g}", _named(make(value * f), f"{key} x{f:g}"))
                    for f in KNOB_FACTORS]
    rp = sc.repair
    if rp is not None and rp.spares is not None:
        for n in sorted({rp.spares // 2, 2 * rp.spares if rp.spares else 1} - {rp.spares}):
            out.append(Variant("repair.spares", n, f"repair.spares = {n}",
                               _named(with_spares(sc, n), f"repair.spares = {n}")))
    return out


def io_variants(sc: Scenario, io: Any) -> list[Variant]:
    """A checkpoint priced by size: each bandwidth halved and doubled (the write sets the save
    or, asynchronous, the drain; the read sets the load of every restart from the persistent
    checkpoint), and the other save mode (asynchronous needs ``checkpoint.host_copy``)."""
    out = []
    load = io.load_seconds
    for f in KNOB_FACTORS:
        write = io.write_seconds / f
        sc_w = sc.replace(checkpoint_drain=write) if io.mode == "async" else sc.replace(checkpoint_time=write)
        out.append(Variant("checkpoint.write_bandwidth", io.write_bandwidth * f, f"checkpoint.write_bandwidth x{f:g}",
                           _named(sc_w, f"checkpoint.write_bandwidth x{f:g}")))
        sc_r = sc.replace(restart_time=sc.restart_time - load + load / f)
        out.append(Variant("checkpoint.read_bandwidth", io.read_bandwidth * f, f"checkpoint.read_bandwidth x{f:g}",
                           _named(sc_r, f"checkpoint.read_bandwidth x{f:g}")))
    # the other mode moves the save's blocking time by orders of magnitude: run at its rule's interval
    if io.mode == "async":
        label = "checkpoint.mode = blocking (its rule's interval)"
        out.append(Variant("checkpoint.mode", "blocking", label,
                           _named(sc.replace(checkpoint_time=io.write_seconds, checkpoint_drain=0.0), label),
                           retune=True))
    elif io.host_copy is not None:
        label = "checkpoint.mode = async (its rule's interval)"
        out.append(Variant("checkpoint.mode", "async", label,
                           _named(sc.replace(checkpoint_time=io.host_copy, checkpoint_drain=io.write_seconds), label),
                           retune=True))
    return out


def spare_counts(sc: Scenario, asked: list[int] | None) -> list[int]:
    """The pool sizes of the spares sweep: those asked, else 0, half, the file's, double and
    four times the file's (8 when the file's pool is unlimited)."""
    if asked:
        return sorted(set(asked))
    s = sc.repair.spares if sc.repair is not None and sc.repair.spares is not None else 8
    return sorted({0, s // 2, s, 2 * s, 4 * s} if s else {0, 1, 2, 4, 8})


def spares_variants(sc: Scenario, counts: list[int]) -> list[Variant]:
    """The scenario at each pool size (needs ``[repair]``)."""
    return [Variant("repair.spares", n, f"spares = {n}", _named(with_spares(sc, n), f"spares = {n}")) for n in counts]


def standby_counts(sc: Scenario, asked: list[int] | None) -> list[int]:
    """The warm-standby counts of the standbys sweep (``fleet.standbys``): those asked, else 0,
    half, the file's and double the file's (0, 1, 2 and 4 when the file has none)."""
    if asked:
        return sorted(set(asked))
    s = sc.repair.standbys if sc.repair is not None else 0
    return sorted({0, s // 2, s, 2 * s} if s else {0, 1, 2, 4})


def standbys_variants(sc: Scenario, counts: list[int]) -> list[Variant]:
    """The scenario with each number of warm standbys (needs ``[repair]``). Without standbys,
    ``fleet.standby_swap`` has nothing to swap in and ``restart_when = "job+standbys"`` nothing
    to wait for beyond the job: both go back to their defaults (0 and ``"one"``), which is what
    a file without standbys must say (the reader refuses the others)."""
    rp = sc.repair
    out = []
    for n in counts:
        kw: dict[str, Any] = {"standbys": n}
        if n == 0:
            kw.update(standby_swap=0.0, restart_when="one")
        label = f"standbys = {n}"
        out.append(Variant("fleet.standbys", n, label, _named(sc.replace(repair=dataclasses.replace(rp, **kw)), label)))
    return out


def retire_meaningful(sc: Scenario, possible: bool = False) -> bool:
    """Whether retiring nodes (``fleet.retire_after``) can be weighed on this scenario: the reader
    needs node renewals (``failures.model = "node"`` without domains: the node log counts each
    node's failures) and ``[repair]`` (a retired node leaves the pool); it only sorts nodes when
    they differ (lemons, a fitted frailty) or when the file already retires them. ``possible``:
    whether it can run at all (what ``--retire-after`` needs), differing nodes or not."""
    from ..events.nodes import NodeRenewals

    fm = sc.failures
    if sc.repair is None or type(fm) is not NodeRenewals:
        return False
    # nor beside a domain class (the reader refuses it: a domain event's copies are no failures)
    if sc.failure_classes is not None and sc.failure_classes.has_domains:
        return False
    return possible or fm.lemon_share > 0 or fm.frailty > 0 or fm.retire_after > 0


def retire_counts(sc: Scenario, asked: list[int] | None) -> list[int]:
    """The ``fleet.retire_after`` values of the retirement sweep, 0 for no retirement: those
    asked, else off, half the file's (at least 1), the file's and double (off, 2, 3 and 5 when
    the file retires no node)."""
    if asked:
        return sorted(set(asked))
    k = sc.failures.retire_after
    return sorted({0, max(1, k // 2), k, 2 * k} if k else {0, 2, 3, 5})


def retire_variants(sc: Scenario, counts: list[int]) -> list[Variant]:
    """The scenario retiring a node after each number of failures (0: never). The node log
    marks the retirements and the pool follows them, so both take the value (the reader sets
    both from ``fleet.retire_after``)."""
    rp = sc.repair
    out = []
    for k in counts:
        label = f"retire after {k} failure{'s' if k != 1 else ''}" if k else "no retirement"
        varied = sc.replace(failure_model=sc.failures.replace(retire_after=k),
                            repair=dataclasses.replace(rp, retire_after=k))
        out.append(Variant("fleet.retire_after", k, label, _named(varied, label)))
    return out


def memory_variant(sc: Scenario) -> list[Variant]:
    """The scenario without its in-memory tier (none when it has none)."""
    if sc.memory is None:
        return []
    return [Variant("checkpoint", None, "without the in-memory tier",
                    _named(sc.replace(memory=None), "without the in-memory tier"))]


def class_variants(sc: Scenario) -> list[Variant]:
    """The scenario without each failure class (``[[failures.classes]]``): the failure rate of
    the other classes (the model's rate times ``1 - share``, ``FailureModel.scaled``) split
    among them in their own proportions; with classes of a replayed log's causes (``values``),
    the log without the class's rows. The recommendation's time on it, against the file's, is
    the time the class costs (``spare advise``'s levers)."""
    cl = sc.failure_classes
    if cl is None or len(cl) < 2:
        return []
    from ..sim.classes import FailureClasses

    out = []
    # classes of a replayed log's causes: the log without the class's rows (its other rows as
    # they were), not the log's time axis stretched
    row_cls = cl.row_classes(sc.failures.trace.reasons) if cl.by_value else None
    for i, c in enumerate(cl.classes):
        if not 0.0 < c.share < 1.0:
            continue
        rest = [o for o in cl.classes if o is not c]
        keep = 1.0 - c.share
        shares = [o.share / keep for o in rest]
        shares[-1] = max(0.0, 1.0 - math.fsum(shares[:-1]))  # exactly 1 in all
        others = FailureClasses(tuple(dataclasses.replace(o, share=p) for o, p in zip(rest, shares)))
        label = f"without the {c.name} failures ({100 * c.share:.3g} %)"
        if row_cls is None:
            fm = sc.failures.scaled(keep)
        else:
            tr = sc.failures.trace
            kept = row_cls != i
            fm = sc.failures.replace(trace=tr.replace(times=tr.times[kept], units=tr.units[kept],
                                                      reasons=tuple(r for r, k in zip(tr.reasons, kept) if k)))
        out.append(Variant("failures.classes", c.name, label, _named(sc.replace(failure_model=fm, failure_classes=others),
                                                                     label)))
    return out


def _named(sc: Scenario, what: str) -> Scenario:
    return sc.replace(name=f"{sc.name} [{what}]")


def run_variants(sf: Any, variants: list[Variant], cells: list[tuple[str, int]], args: Any, desc: str,
                 intervals: dict[tuple[str, int], float] | None = None) -> ResultSet:
    """Each policy ``(name, r)`` of ``cells`` on every variant, on the file's seeds, within the
    work budget (one study on the executor). ``intervals`` fixes a cell's checkpoint interval
    in seconds (the recommended one: the sensitivity is measured around the setting the
    advice gives, not around the rule's interval at the changed costs)."""
    fixed = intervals or {}
    kept = [v for v in variants if not v.retune]
    retuned = [v for v in variants if v.retune]
    parts = []
    for group, fix in ((kept, fixed), (retuned, {})):
        if not group:
            continue
        policies = [file_policy(sf, name, r, interval=fix.get((name, r))) for name, r in cells]
        study = Study([v.scenario for v in group], policies, [1], seeds=sf.seeds, name=f"{sf.name} {desc}",
                      streams="seed")
        check_budget(study, bool(getattr(args, "force", False)), f"{sf.path} {desc}")
        parts.append(run_study(study, workers=sf.processes, desc=desc))
    out = parts[0]
    for part in parts[1:]:
        out.extend(part)
    return out


def winner(res: ResultSet, variant: Variant, objective: str) -> dict[str, Any] | None:
    """The best policy on one variant by ``objective`` (None if nothing finished on every seed)."""
    ranked = res.ranking(variant.scenario.name, objective=objective)
    if not ranked:
        return None
    top = ranked[0]
    return {"policy": top.policy, "redundancy": top.redundancy, "ratio": top.ratio_mean,
            "cost": res.cell_cost(top), "key": variant.key, "value": variant.value, "label": variant.label}


def per_policy(res: ResultSet, variant: Variant) -> list[dict[str, Any]]:
    """Every policy's TTT/T0 and cost on one variant (the spares sweep's rows)."""
    out = []
    for cell in res.summaries:
        if cell.scenario != variant.scenario.name:
            continue
        out.append({"policy": cell.policy, "redundancy": cell.redundancy, "value": variant.value,
                    "ratio": cell.ratio_mean, "cost": res.cell_cost(cell) if math.isfinite(cell.ratio_mean)
                    else math.nan, "finished": cell.finished, "seeds": cell.seeds})
    return out
