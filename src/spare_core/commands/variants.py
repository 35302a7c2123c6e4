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

__all__ = ["KNOB_FACTORS", "Variant", "knob_variants", "spare_counts", "spares_variants", "memory_variant",
           "run_variants", "winner"]

#: each cost or time the sensitivity varies is halved and doubled
KNOB_FACTORS = (0.5, 2.0)


@dataclass(frozen=True)
class Variant:
    """One variant of the file's scenario: which key changed to what, and the scenario."""

    key: str
    value: Any
    label: str
    scenario: Scenario


def _knobs(sc: Scenario) -> list[tuple[str, float, Callable[[float], Scenario]]]:
    """(file key, its value, the scenario at a multiple of it) for each cost the choice may
    hinge on: restart, save, and with repairs the swap, repair time and spare count."""
    out: list[tuple[str, float, Callable[[float], Scenario]]] = [
        ("costs.restart", sc.restart_time, lambda v: sc.replace(restart_time=v)),
        ("costs.checkpoint_save", sc.checkpoint_time, lambda v: sc.replace(checkpoint_time=v)),
    ]
    rp = sc.repair
    if rp is not None:
        # a law has no one value to halve or double: it is left as the file gives it
        out += [(k, v, make) for k, v, make in (
            ("repair.swap", rp.swap, lambda v: sc.replace(repair=dataclasses.replace(rp, swap=v))),
            ("repair.time", rp.time, lambda v: sc.replace(repair=dataclasses.replace(rp, time=v))))
            if isinstance(v, (int, float))]
    return out


def knob_variants(sc: Scenario) -> list[Variant]:
    """The scenario with each cost halved and doubled (costs at 0 have no multiple), and with
    half and twice the spare pool when it is finite."""
    out = []
    for key, value, make in _knobs(sc):
        if value > 0:
            out += [Variant(key, value * f, f"{key} x{f:g}", _named(make(value * f), f"{key} x{f:g}"))
                    for f in KNOB_FACTORS]
    rp = sc.repair
    if rp is not None and rp.spares is not None:
        for n in sorted({rp.spares // 2, 2 * rp.spares if rp.spares else 1} - {rp.spares}):
            out.append(Variant("repair.spares", n, f"repair.spares = {n}",
                               _named(sc.replace(repair=dataclasses.replace(rp, spares=n)), f"repair.spares = {n}")))
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
    rp = sc.repair
    return [Variant("repair.spares", n, f"spares = {n}",
                    _named(sc.replace(repair=dataclasses.replace(rp, spares=n)), f"spares = {n}")) for n in counts]


def memory_variant(sc: Scenario) -> list[Variant]:
    """The scenario without its in-memory tier (none when it has none)."""
    if sc.memory is None:
        return []
    return [Variant("checkpoint", None, "without the in-memory tier",
                    _named(sc.replace(memory=None), "without the in-memory tier"))]


def _named(sc: Scenario, what: str) -> Scenario:
    return sc.replace(name=f"{sc.name} [{what}]")


def run_variants(sf: Any, variants: list[Variant], cells: list[tuple[str, int]], args: Any, desc: str,
                 intervals: dict[tuple[str, int], float] | None = None) -> ResultSet:
    """Each policy ``(name, r)`` of ``cells`` on every variant, on the file's seeds, within the
    work budget (one study on the executor). ``intervals`` fixes a cell's checkpoint interval
    in seconds (the recommended one: the sensitivity is measured around the setting the
    advice gives, not around the rule's interval at the changed costs)."""
    fixed = intervals or {}
    policies = [file_policy(sf, name, r, interval=fixed.get((name, r))) for name, r in cells]
    study = Study([v.scenario for v in variants], policies, [1], seeds=sf.seeds, name=f"{sf.name} {desc}",
                  streams="seed")
    check_budget(study, bool(getattr(args, "force", False)), f"{sf.path} {desc}")
    return run_study(study, workers=sf.processes, desc=desc)


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
