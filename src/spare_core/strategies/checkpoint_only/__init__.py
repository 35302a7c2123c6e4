"""Checkpoint-only: no redundancy; every failure is a global restart and a rollback to the last
checkpoint (the SPARe paper's CKPT-only baseline).

References
----------
.. [1] SPARe, arXiv:2603.00357 (the CKPT-only baseline).
"""
from __future__ import annotations

import numpy as np

from ..protocol import FailureHandler, Outcome, Outcomes, Policy
from ..registry import INTERVAL, policy_entry

__all__ = ["CheckpointOnly", "ENTRY"]


def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class _RestartEveryFailure(FailureHandler):
    batch_hint = 1
    every_failure_restarts = True  # no group is ever out: repairs need no failures of groups out
    needs_groups = False  # every failure restarts, whichever group it hits
    constant_restarts = True  # the answer is always "restart" and restart() does nothing
    # the simulator only reads outcomes, so one constant answer serves every failure
    _ONE = Outcomes(_ro(np.ones(1, dtype=np.int8)), _ro(np.ones(1)), _ro(np.zeros(1)))
    _NONE = Outcomes(_ro(np.zeros(0, dtype=np.int8)), _ro(np.zeros(0)), _ro(np.zeros(0)))

    def on_failures(self, groups):
        return self._ONE if groups.shape[0] else self._NONE

    def on_failure(self, group):
        return Outcome(True)

    def restart(self):
        pass


class CheckpointOnly(Policy):
    """No redundancy: every failure is a global restart and a rollback to the last checkpoint.

    Parameters
    ----------
    interval : float or {"auto", "young", "daly"}, default "auto"
        See :class:`Policy`; T_f is the system MTBF.

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (the CKPT-only baseline).

    Examples
    --------
    >>> from spare_core.sim import Scenario
    >>> CheckpointOnly(600.0).checkpoint_interval(Scenario.paper_600k(200))
    IntervalChoice(600.0 s: fixed by the caller)
    """

    name = "CKPT-only"
    restart_is_wipeout = False
    identity = "spare_core.sim.policies.CheckpointOnly"

    def handler(self, scenario):
        return _RestartEveryFailure()

    def checkpoint_only_equivalent(self):
        return True


#: the registry entry (``ckpt``): admitted through :data:`spare_core.strategies.POLICY_REGISTRY`
ENTRY = policy_entry(lambda r, interval="auto": CheckpointOnly(interval), label=CheckpointOnly.name,
                     uses_redundancy=False, params=[INTERVAL],
                     description="checkpoint-only: every failure a global restart and a rollback")
