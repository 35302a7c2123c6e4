"""Realistic generated failure logs for the trace tests (no real cluster's log is stored here).

:func:`cray_log` writes what a Cray XK/XC machine's GPU failure export looks like: host names
``c{column}-{row}c{cage}s{slot}n{node}`` (Titan's layout by default: 25 x 8 cabinets of 3
cages x 8 slots x 4 nodes = 19,200 positions), times in a strftime format (US month/day/year
with minutes by default), a reason column. What real fleets show is built in: the yearly rate
drifts (default counts per year proportional to the public Titan GPU log's 62, 366, 2,611,
1,421, 1,063, 844), a few "lemon" nodes fail again and again, and some failures take down
every node of a slot at once (a blade's power).
"""
from __future__ import annotations

import datetime as dt

import numpy as np

TITAN = (25, 8, 3, 8, 4)  # cabinet columns, rows, cages per cabinet, slots per cage, nodes per slot
TITAN_YEARS = (62, 366, 2611, 1421, 1063, 844)
CRAY_PATTERN = r"c(?P<cabinet>\d+-\d+)c(?P<cage>\d+)s(?P<slot>\d+)n(?P<node>\d+)"


def cray_host(col, row, cage, slot, node) -> str:
    return f"c{col}-{row}c{cage}s{slot}n{node}"


def cray_events(n_rows, seed, *, shape=TITAN, years=TITAN_YEARS, lemons=0.01, lemon_factor=40.0,
                blade_events=0.01, event_nodes=None, start=dt.datetime(2014, 1, 1, tzinfo=dt.timezone.utc)):
    """``(epoch seconds sorted, position (col, row, cage, slot, node) per row)`` of about ``n_rows``
    failures: yearly counts in the proportions of ``years``, nodes drawn with weight 1 or
    ``lemon_factor`` (a share ``lemons`` of them), a share ``blade_events`` of the rows being
    events that take down every node of the row's block of ``event_nodes`` positions at one
    instant (default a slot's nodes: a blade's power; a cage's: a chassis)."""
    rng = np.random.default_rng(seed)
    cols, rows, cages, slots, nodes = shape
    n_pos = cols * rows * cages * slots * nodes
    w = np.where(rng.random(n_pos) < lemons, lemon_factor, 1.0)
    share = np.asarray(years, dtype=float) / np.sum(years)
    counts = rng.multinomial(n_rows, share)
    year_s = 365.25 * 86400
    t0 = start.timestamp()
    times = np.concatenate([t0 + (y + rng.random(c)) * year_s for y, c in enumerate(counts)])
    pos = rng.choice(n_pos, size=times.size, p=w / w.sum())
    # block events: the row's node and the other nodes of its block, at its instant
    block = nodes if event_nodes is None else event_nodes
    blade = np.flatnonzero(rng.random(times.size) < blade_events)
    extra_t = np.repeat(times[blade], block - 1)
    base = pos[blade] - pos[blade] % block
    extra_p = (base[:, None] + (pos[blade][:, None] - base[:, None] + np.arange(1, block)) % block).reshape(-1)
    times = np.concatenate((times, extra_t))
    pos = np.concatenate((pos, extra_p))
    order = np.argsort(times, kind="stable")
    return times[order], np.stack(np.unravel_index(pos[order], shape), axis=1)


def cray_log(path, n_rows, seed, *, fmt="%m/%d/%Y %H:%M", **kw) -> tuple[np.ndarray, np.ndarray]:
    """Write a CSV ``time,host,reason`` of :func:`cray_events` with times in ``fmt`` (UTC);
    returns what it wrote: the epoch seconds (as ``fmt`` keeps them) and the positions."""
    times, pos = cray_events(n_rows, seed, **kw)
    stamps = [dt.datetime.fromtimestamp(t, dt.timezone.utc) for t in times.tolist()]
    text = [f.strftime(fmt) for f in stamps]
    written = np.array([dt.datetime.strptime(s, fmt).replace(tzinfo=dt.timezone.utc).timestamp() for s in text])
    reasons = np.where(np.arange(times.size) % 3 == 0, "DBE", "OTB")
    with open(path, "w") as f:
        f.write("time,host,reason\n")
        for s, p, r in zip(text, pos.tolist(), reasons.tolist()):
            f.write(f"{s},{cray_host(*p)},{r}\n")
    return written, pos
