"""Traditional r-way replication plus checkpoints (the SPARe paper's Rep+CKPT baseline): every
step computes all r layers; a wipe-out of a replica window is a global restart.

References
----------
.. [1] SPARe, arXiv:2603.00357 (the Rep+CKPT baseline).
"""
from __future__ import annotations

import numpy as np

from ..._native import load
from ..._validate import as_int, check_choice
from ..protocol import MASKED, REJOINED, RESTART, FailureHandler, Outcome, Outcomes, Policy
from ..registry import INTERVAL, policy_entry

__all__ = ["ReplicationCheckpoint", "DISJOINT_LABEL", "ENTRY", "DISJOINT_ENTRY"]


class _CyclicHandler(FailureHandler):
    def __init__(self, n, r):
        self._k = load("_rep_wipe")
        self._dead = np.zeros(n, dtype=np.int8)
        self._r = r
        # about half the failures an epoch endures (mu ~ N^(1 - 1/r)); 1 when each failure wipes out
        self.batch_hint = 1 if r == 1 else int(min(64, max(2, 0.5 * n ** (1.0 - 1.0 / r))))

    def on_failures(self, groups):
        i = self._k.cyclic_first_wipe(self._dead, groups, self._r)
        n = groups.shape[0] if i < 0 else i + 1
        restart = np.zeros(n, dtype=np.int8)
        if i >= 0:
            restart[i] = 1
        return Outcomes(restart, np.full(n, float(self._r)), np.zeros(n))

    def on_failure(self, group):
        o = self.on_failures(np.array([group], dtype=np.int64))
        return Outcome(bool(o.restart[0]), float(self._r))

    def restart(self):
        self._dead[:] = 0

    def on_rejoin(self, group):
        self._dead[group] = 0
        return Outcome(False, float(self._r))

    def on_events(self, groups, rejoin):
        # failures and rejoins of a run with repairs in one kernel call (no Python per rejoin)
        if not rejoin.any():
            return self.on_failures(groups)
        i = self._wipe_events(groups, rejoin.astype(np.uint8, copy=False))
        n = groups.shape[0] if i < 0 else i + 1
        kind = np.where(rejoin[:n] != 0, REJOINED, MASKED).astype(np.int8)
        if i >= 0:
            kind[i] = RESTART
        return Outcomes(kind, np.full(n, float(self._r)), np.zeros(n))

    def _wipe_events(self, groups, back):
        return self._k.cyclic_events(self._dead, groups, back, self._r)


class _DisjointHandler(_CyclicHandler):
    def __init__(self, n, r):
        super().__init__(n, r)
        n_sets = n // r
        # N // r replica sets; the N mod r leftover groups join the first sets (size r + 1)
        self._set_of = np.arange(n, dtype=np.int64) % n_sets
        self._size = np.bincount(self._set_of, minlength=n_sets).astype(np.int64)
        self._count = np.zeros(n_sets, dtype=np.int64)

    def on_failures(self, groups):
        i = self._k.set_first_wipe(self._count, self._set_of, self._size, groups)
        n = groups.shape[0] if i < 0 else i + 1
        restart = np.zeros(n, dtype=np.int8)
        if i >= 0:
            restart[i] = 1
        return Outcomes(restart, np.full(n, float(self._r)), np.zeros(n))

    def restart(self):
        self._count[:] = 0

    def on_rejoin(self, group):
        self._count[self._set_of[group]] -= 1
        return Outcome(False, float(self._r))

    def _wipe_events(self, groups, back):
        return self._k.set_events(self._count, self._set_of, self._size, groups, back)


#: the label of Rep+CKPT with disjoint replica sets (distinct from the cyclic variant's)
DISJOINT_LABEL = "Rep+CKPT (disjoint)"


class ReplicationCheckpoint(Policy):
    """Traditional r-way replication plus checkpoints: every step computes r layers.

    Parameters
    ----------
    r : int
        Redundancy, 1 <= r <= N.
    variant : {"cyclic", "disjoint"}, default "cyclic"
        "cyclic": the SPARe paper's cyclic stacks with all r layers computed every step; a
        wipe-out exactly when r cyclically consecutive groups are dead (exactly when SPARe
        wipes out), so the comparison isolates adaptive reordering. "disjoint": N // r
        replica sets of r consecutive groups (the N mod r leftover groups join the first
        sets); a wipe-out when a whole set is dead.
    interval : float or {"auto", "young", "daly"}, default "auto"
        See :class:`Policy`.

    Notes
    -----
    A masked failure costs the communicator shrink (``scenario.shrink_time``) and no
    controller time. Closed-form endurable failures: the SPARe paper's
    mu = Gamma(1 + 1/r) N^(1 - 1/r) for "cyclic"; for "disjoint" the same independent-loss
    approximation with N/r sets instead of N windows, mu * r^(1/r).

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357 (the Rep+CKPT baseline).
    """

    name = "Rep+CKPT"
    identity = "spare_core.sim.policies.ReplicationCheckpoint"

    def __init__(self, r: int, variant: str = "cyclic", interval: str | float = "auto") -> None:
        super().__init__(interval)
        self.redundancy = as_int(r, "r", min_value=1)
        self.variant = check_choice(variant, "variant", ("cyclic", "disjoint"))
        if self.variant == "disjoint":
            # an instance label only for the variant: the cyclic policy's parameters (and the
            # store keys hashed from them) stay as they were
            self.name = DISJOINT_LABEL

    def check(self, scenario):
        self._check_r(scenario)

    def initial_depth(self, scenario):
        return float(self.redundancy)

    def failure_seconds(self, scenario):
        return scenario.shrink_time

    def endurable_failures(self, scenario):
        from ..spare.analytic import endurable_failures

        mu = float(endurable_failures(scenario.n_groups, self.redundancy))
        if self.variant == "disjoint":
            mu *= self.redundancy ** (1.0 / self.redundancy)
        return mu

    def handler(self, scenario):
        cls = _CyclicHandler if self.variant == "cyclic" else _DisjointHandler
        return cls(scenario.n_groups, self.redundancy)

    def checkpoint_only_equivalent(self):
        return self.redundancy == 1


#: the registry entries (``rep``, ``rep-disjoint``)
ENTRY = policy_entry(lambda r, interval="auto": ReplicationCheckpoint(r, "cyclic", interval),
                     label=ReplicationCheckpoint.name, params=[INTERVAL],
                     description="Rep+CKPT: r-way replication on SPARe's cyclic stacks, all r layers every step")
DISJOINT_ENTRY = policy_entry(lambda r, interval="auto": ReplicationCheckpoint(r, "disjoint", interval),
                              label=DISJOINT_LABEL, params=[INTERVAL],
                              description="Rep+CKPT with N/r disjoint replica sets")
