"""Your own cluster from Python: load a scenario file, change a value, compare two policies.

Run: python examples/own_cluster.py (typed: ``mypy --strict`` passes on it, see
tests/test_examples_typing.py).
"""
from __future__ import annotations

from pathlib import Path

from spare_core.scenario_file import load_scenario_file
from spare_core.sim import RunResult, make_policy, simulate

HERE = Path(__file__).resolve().parent


def main() -> None:
    # the RSC-1-like job, shortened to 2,000 steps and with twice the failure rate
    job = load_scenario_file(HERE / "rsc1_2000_nodes.toml",
                             ["job.steps=2000", "failures.per_1000_node_days=13.0"])
    print(job.scenario, f"({job.rate_note})")
    results: list[RunResult] = []
    for name, r in (("ckpt", None), ("spare", 2), ("spare", 4)):
        for seed in job.seeds[:2]:  # the same seed gives every policy the same failures
            results.append(simulate(job.scenario, make_policy(name, r), seed=seed))
    for res in results:
        print(f"{res.policy:<11} r={res.redundancy} seed={res.seed}: TTT/T0 {res.ratio:.3f}, "
              f"availability {res.availability:.3f}, checkpoint every {res.checkpoint_interval:.0f} s")


if __name__ == "__main__":
    main()
