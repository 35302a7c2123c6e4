"""Write examples/preemption_log.csv: the small *synthetic* preemption trace that
examples/preemption_job.toml replays (it is not a cloud's log).

A spot fleet of 20 instances observed for 12 hours. Preemptions come in bulk: at exponential
gaps (mean 20 min) 1 to 4 instances are reclaimed at the same instant; each reclaimed
instance is replaced by a fresh one (a new name) after an exponential delay (mean 40 min), as
an autoscaler's request waits for capacity. The columns are the time in seconds from the
start, the event (``preempt`` or ``add``) and the instance's name; the fleet's 20 instances
are listed as additions at time 0, as Bamboo's p3 trace lists its own.

Run ``python examples/make_preemption_log.py`` to regenerate the file (seeded: same file).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

FLEET, HOURS, GAP_MIN, BACK_MIN, SEED = 20, 12, 20.0, 40.0, 31


def main() -> None:
    rng = np.random.default_rng(SEED)
    end = HOURS * 3600.0
    rows = [(0.0, "add", f"i-{k:03d}") for k in range(FLEET)]
    live = [f"i-{k:03d}" for k in range(FLEET)]
    fresh = FLEET
    t = 0.0
    while True:
        t += rng.exponential(GAP_MIN * 60.0)
        if t >= end:
            break
        t = round(t)
        for _ in range(int(rng.integers(1, 5))):
            if not live:
                break
            name = live.pop(int(rng.integers(len(live))))
            rows.append((t, "preempt", name))
            back = round(t + rng.exponential(BACK_MIN * 60.0))
            if back < end:
                rows.append((float(back), "add", f"i-{fresh:03d}"))
                live.append(f"i-{fresh:03d}")  # live from its addition on (a later preemption may pick it)
                fresh += 1
    rows.sort(key=lambda r: r[0])
    out = Path(__file__).with_name("preemption_log.csv")
    out.write_text("time,event,instance\n" + "".join(f"{t:.0f},{e},{n}\n" for t, e, n in rows))


if __name__ == "__main__":
    main()
