"""Endurance under whole-rack failures: consecutive vs Sidon vs rack-aware stacks (docs/results_domains.md).

For each (N, groups per rack, r) and each layout -- consecutive and Sidon-type stacks in group
order (racks are blocks of consecutive groups, the usual numbering), and the rack-aware
versions of both (:meth:`StackedLayout.rack_aware`) -- it prints:

- *wiping racks*: how many of the D racks wipe the layout out on their own;
- *max/rack*: the largest number of holders one shard type has in one rack;
- *copysets*: distinct sets of racks holding a type (fewer overlapping sets: fewer ways to lose one);
- *racks endured*: the mean number of whole-rack failures endured in a random order before
  the wipe-out (exact by subset counting when D <= 24, else Monte-Carlo with its 95 % interval);
- *mixed*: Monte-Carlo failure events endured when a share ``--domain-share`` of the events
  are whole-rack failures and the rest single-group failures (default 0.084: the share of
  network switch/cable root causes among Llama 3's 419 unexpected interruptions), with the
  groups lost and the share of wipe-outs caused by a rack.

Usage::

    python bench/domain_endurance_table.py                       # ~3 min on one core
    python bench/domain_endurance_table.py --trials 40 --cells 200:10:3   # quick look
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from spare_core.strategies.spare.domain_endurance import (
    MAX_EXACT_DOMAINS,
    domain_endurance_mc,
    domain_exposure,
    endurable_domain_failures,
)
from spare_core.strategies.spare.layout import StackedLayout
from spare_core.topology import FailureDomains

LAYOUTS = ("consecutive", "sidon", "rack-aware", "rack-aware sidon")


def build(kind, fd, r):
    n = fd.n_groups
    if kind == "consecutive":
        return StackedLayout(n, r)
    if kind == "sidon":
        return StackedLayout.sidon(n, r, seed=0)
    return StackedLayout.rack_aware(fd, r, offsets="sidon" if kind.endswith("sidon") else "consecutive")


def fmt(est):
    return f"{est.mean:.1f} [{est.low:.1f}, {est.high:.1f}]"


def run(cells, trials, share, seed):
    print(f"| N | groups/rack | D | r | layout | shared | wiping racks | max/rack | copysets | racks endured | "
          f"mixed ({share:.3f}): events endured | groups lost | wiped by a rack | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, size, r in cells:
        fd = FailureDomains.contiguous(n, size, names=("rack",))
        d = fd.n_domains[0]
        for kid, kind in enumerate(LAYOUTS):
            t0 = time.perf_counter()
            lay = build(kind, fd, r)
            ex = domain_exposure(lay, fd)
            ss = np.random.SeedSequence([seed, n, size, r, kid])
            if d <= MAX_EXACT_DOMAINS:
                racks = f"{endurable_domain_failures(lay, fd):.2f} (exact)"
            else:
                racks = fmt(domain_endurance_mc(lay, fd, trials, seed=ss.spawn(1)[0], domain_share=1.0).events)
            mixed = domain_endurance_mc(lay, fd, trials, seed=ss.spawn(2)[1], domain_share=share)
            print(f"| {n} | {size} | {d} | {r} | {kind} | {lay.max_shared_holders} | {ex.wiping_domains} | "
                  f"{ex.max_holders_in_domain} | {ex.n_copysets} | {racks} | {fmt(mixed.events)} | {fmt(mixed.groups)} | "
                  f"{mixed.wiped_by_domain.mean:.2f} | {time.perf_counter() - t0:.1f} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", nargs="+", default=["200:10:3", "200:10:6", "1000:50:3", "1000:50:10", "1000:20:6", "1000:20:10"],
                    help="N:groups_per_rack:r")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--domain-share", type=float, default=35 / 419)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    cells = [tuple(int(x) for x in c.split(":")) for c in args.cells]
    print(f"# trials={args.trials} seed={args.seed} python={sys.version.split()[0]}")
    run(cells, args.trials, args.domain_share, args.seed)


if __name__ == "__main__":
    main()
