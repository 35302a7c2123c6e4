"""A restore from the in-memory tier changes that run only.

The run loop marks a restart as a restore from memory (kind 2) in the batch's outcomes; CKPT-only
answers every failure with one shared constant, so marking it in place made every later
restart of every CKPT-only run in the process a restore (free, with no tier at all).
"""
from __future__ import annotations

from spare_core.sim import CheckpointOnly, MemoryTier, Repairs, Scenario, simulate


def _scenario(**kw):
    return Scenario(16, n_steps=400, t_compute=10.0, t_allreduce=1.0, system_mtbf=300.0, restart_time=600.0,
                    checkpoint_time=20.0, failure_model="node", gpus_per_group=8, max_wall_factor=50.0, **kw)


def test_a_run_with_a_memory_tier_leaves_later_runs_without_one_unchanged():
    plain = _scenario(repair=Repairs(swap=30.0))
    tiered = plain.replace(memory=MemoryTier(save=1.0, every=60.0, restore=30.0))
    before = [simulate(plain, CheckpointOnly(), seed=s) for s in range(3)]
    with_tier = [simulate(tiered, CheckpointOnly(), seed=s) for s in range(3)]
    after = [simulate(plain, CheckpointOnly(), seed=s) for s in range(3)]
    assert sum(r.memory_restores for r in with_tier) > 0  # the tier was used
    assert all(r.memory_restores == 0 and r.restart_time > 0 for r in after)
    assert [r.to_dict() for r in after] == [r.to_dict() for r in before]
