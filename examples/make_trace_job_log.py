"""Write examples/trace_job_failures.csv: the small *synthetic* failure log that
examples/trace_job.toml replays (it is not a real cluster's log).

64 nodes of 8 GPUs observed for 30 days. Each node fails as a renewal process with Weibull
lifetimes (shape 0.78, mean 33 days: about 0.03 failures per node-day, five times Meta
RSC-1's 6.5 per 1,000 node-days, as for a young cluster still in its infant-mortality
phase), plus one leaf-switch event that takes four nodes down at the same instant. Times are
ISO 8601 datetimes in UTC, units are host names, the third column is the cause. The job's
hostfile (trace_job_hosts.txt, one host per line in rank order) maps hosts to nodes.

Run ``python examples/make_trace_job_log.py`` to regenerate the file (seeded: same file).
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
from scipy.special import gamma

NODES, DAYS, SHAPE, MEAN_DAYS, SEED = 64, 30, 0.78, 33.0, 2025
START = dt.datetime(2025, 3, 3, tzinfo=dt.timezone.utc)
CAUSES = ("GPU", "GPU HBM3 memory", "GPU NVLink", "host", "network NIC")
CAUSE_WEIGHTS = (0.35, 0.25, 0.15, 0.15, 0.10)


def main() -> None:
    rng = np.random.default_rng(SEED)
    scale = MEAN_DAYS * 86400 / gamma(1 + 1 / SHAPE)
    rows: list[tuple[int, str, str]] = []
    for node in range(NODES):
        t = 0.0
        while True:
            t += scale * rng.weibull(SHAPE)
            if t >= DAYS * 86400:
                break
            rows.append((round(t), f"node-{node:03d}", str(rng.choice(CAUSES, p=CAUSE_WEIGHTS))))
    # a leaf switch behind nodes 6-9 (two data-parallel groups) fails once
    t_switch = round(12.4 * 86400)
    rows += [(t_switch, f"node-{n:03d}", "network leaf switch") for n in range(6, 10)]
    rows.sort(key=lambda r: r[0])
    out = Path(__file__).with_name("trace_job_failures.csv")
    with out.open("w") as f:
        f.write("# synthetic failure log for examples/trace_job.toml, written by examples/make_trace_job_log.py\n")
        f.write("timestamp,host,cause\n")
        for t, host, cause in rows:
            when = (START + dt.timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%SZ")
            f.write(f"{when},{host},{cause}\n")
    hosts = out.with_name("trace_job_hosts.txt")
    hosts.write_text("# the job's hosts in rank order (4 consecutive nodes = one data-parallel group)\n"
                     + "".join(f"node-{n:03d} slots=8\n" for n in range(NODES)))
    print(f"{len(rows)} failures written to {out}, {NODES} hosts to {hosts}")


if __name__ == "__main__":
    main()
