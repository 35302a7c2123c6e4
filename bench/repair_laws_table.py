"""Time-to-train with repair laws against the constant of the same mean (docs/model.md §3.3,
*Repair laws*, the measured table).

examples/airesim_repairs.toml (128 nodes, a node failure every 5.6 h, an automatic repair
log-normal with median 2 h and sigma 1 escalated with probability 0.8 to an exponential manual
repair of mean 2 d) on paired seeds: each variant draws one part of the repair and is compared
with the same scenario where that part is the constant of its mean (the same failures: the
repairs' draws have a stream of their own); the last add warm standbys ([fleet]), the restart
rule (``restart_when``) and lemon nodes (``lemon_share``, ``lemon_rate``, ``lemon_fix``; these
change the failures, so they are compared with the same file without lemons on the same seeds). Printed: the mean per-seed change of the
time-to-train and its 95 % interval, as docs/model.md's table rows.

Usage::

    python -m bench.repair_laws_table                 # ~20 s on one core
    python -m bench.repair_laws_table --seeds 50      # quick look
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from spare_core.scenario_file import load_scenario_file
from spare_core.sim import CheckpointOnly, SpareCheckpoint, simulate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "airesim_repairs.toml"


def variants(rp):
    """(name, drawn repairs, constant repairs) pairs: each part of the file's repair alone."""
    R = dataclasses.replace
    base = R(rp, fail_fix=0.0, misdiagnose=0.0, swap=rp.mean_swap)
    flat = R(base, time=base.mean_time, manual_time=0.0, escalate=0.0)
    ff = R(base, fail_fix=0.05)
    return [
        ("the repair law", base, flat),
        ("the repair law and `fail_fix = 0.05` (same E)", ff, R(base, time=ff.mean_time, manual_time=0.0, escalate=0.0)),
        ("the swap law alone (exponential, mean 15 min)", R(flat, swap=rp.swap), flat),
        ("`misdiagnose = 0.02` alone (against none)", R(flat, misdiagnose=0.02), flat),
        # [fleet]: two warm standbys (1-min swap) before a 30-min host selection, against the
        # same host selection without standbys
        ("2 warm standbys, `standby_swap` 1 min, `host_select` 30 min (against no standbys)",
         R(flat, standbys=2, standby_swap=60.0, host_select=1800.0), R(flat, host_select=1800.0)),
        # the restart rule: the same standbys, a restart waiting for them too (AIReSim's rule)
        ("the same standbys, `restart_when = \"job+standbys\"` (against `\"one\"`)",
         R(flat, standbys=2, standby_swap=60.0, host_select=1800.0, restart_when="job+standbys"),
         R(flat, standbys=2, standby_swap=60.0, host_select=1800.0)),
    ]


def fleet_variants(sc):
    """(name, scenario, baseline) pairs of the node fleet ([fleet] lemons), the repairs constant."""
    R = dataclasses.replace
    rp = sc.repair
    flat = R(rp, fail_fix=0.0, misdiagnose=0.0, swap=rp.mean_swap, time=rp.mean_time, manual_time=0.0, escalate=0.0)
    base = sc.replace(repair=flat)
    lem = sc.failures.replace(lemon_share=0.15, lemon_rate=4.0)
    return [
        ("lemons: 15 % of the nodes x4 as often, the same fleet rate (against none)",
         base.replace(failure_model=lem), base),
        ("the same lemons, `lemon_fix = 0.5` (against none)",
         base.replace(failure_model=lem.replace(lemon_fix=0.5)), base),
    ]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--spares", type=int, nargs="+", default=[8, 16])
    a = ap.parse_args(argv)
    sc = load_scenario_file(EXAMPLE).scenario
    for spares in a.spares:
        for name, law, const in variants(sc.repair):
            cells = []
            for pol in (CheckpointOnly(), SpareCheckpoint(3)):
                d = np.array([simulate(sc.replace(repair=dataclasses.replace(law, spares=spares)), pol, seed=s).time_to_train
                              / simulate(sc.replace(repair=dataclasses.replace(const, spares=spares)), pol,
                                         seed=s).time_to_train - 1 for s in range(a.seeds)])
                cells.append(f"{100 * d.mean():+.2f} % ± {100 * 1.96 * d.std(ddof=1) / np.sqrt(d.size):.2f}")
            print(f"| {spares} | {name} | {cells[0]} | {cells[1]} |")
        for name, var, base in fleet_variants(sc):
            cells = []
            for pol in (CheckpointOnly(), SpareCheckpoint(3)):
                rv, rb = dataclasses.replace(var.repair, spares=spares), dataclasses.replace(base.repair, spares=spares)
                d = np.array([simulate(var.replace(repair=rv), pol, seed=s).time_to_train
                              / simulate(base.replace(repair=rb), pol, seed=s).time_to_train - 1
                              for s in range(a.seeds)])
                cells.append(f"{100 * d.mean():+.2f} % ± {100 * 1.96 * d.std(ddof=1) / np.sqrt(d.size):.2f}")
            print(f"| {spares} | {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
