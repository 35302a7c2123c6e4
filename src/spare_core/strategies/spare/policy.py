"""SPARe+CKPT as a policy: stacked redundancy driven by the RECTLR controller, plus checkpoints.

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM Pretraining
   Systems with 100k+ GPUs, arXiv:2603.00357.
"""
from __future__ import annotations

import copy
import functools
import hashlib

import numpy as np

from ..._validate import as_int, as_int_array, check_choice
from ..protocol import REJOINED, RESTART, FailureHandler, Outcome, Outcomes, Policy
from ..registry import INTERVAL, policy_entry
from ..._params import Param
from .analytic import endurable_failures
from .layout import StackedLayout, sidon_offsets
from .rectlr import KINDS, Rectlr

__all__ = ["SpareCheckpoint", "RACK_AWARE", "SPARE_LAYOUTS", "ENTRY"]


@functools.lru_cache(maxsize=256)
def _sidon(n: int, r: int) -> tuple:
    # the local search takes seconds at r = 20; a sweep asks for the same (N, r) per seed
    return tuple(int(o) for o in sidon_offsets(n, r, seed=0))


#: ``SpareCheckpoint(layout=...)``: stacks placed across the scenario's failure domains
RACK_AWARE = "rack-aware"
#: SPARe's stack placements by name: offsets consecutive/Sidon-type, or along failure domains
SPARE_LAYOUTS = ("consecutive", "sidon", RACK_AWARE, f"{RACK_AWARE}-sidon")


def _rack_aware(failures, n: int, r: int, offsets):
    """The rack-aware stacks of ``failures.domains(n)``; cached when the model is hashable."""
    try:
        hash(failures)
    except TypeError:
        return _rack_aware_layout(failures, n, r, offsets)
    return _rack_aware_cached(failures, n, r, offsets)


def _rack_aware_layout(failures, n, r, offsets):
    return StackedLayout.rack_aware(failures.domains(n), r, offsets="sidon" if offsets == "sidon" else "consecutive")


# a sweep builds one handler per run: the placement is the same for every seed
_rack_aware_cached = functools.lru_cache(maxsize=64)(_rack_aware_layout)


# -- SPARe -----------------------------------------------------------------------------------
class _RectlrHandler(FailureHandler):
    def __init__(self, n, r, offsets, layout=None):
        self._wipeout = KINDS.index("wipeout")

        self.batch_hint = 1 if r == 1 else int(min(32, max(2, 0.5 * n ** (1.0 - 1.0 / r))))
        self._ctl = Rectlr(StackedLayout(n, r, offsets=offsets) if layout is None else layout)

    def on_failures(self, groups):
        d = self._ctl.fail_many_arrays(groups)  # stops at a wipe-out
        restart = (d.kind == self._wipeout).astype(np.int8)
        return Outcomes(restart, d.stack_depth.astype(np.float64), d.patch_layers.astype(np.float64))

    def on_failure(self, group):
        o = self.on_failures(np.array([group], dtype=np.int64))
        return Outcome(bool(o.restart[0]), float(o.depth[0]), float(o.patch_layers[0]))

    def restart(self):
        self._ctl.restart()

    def on_rejoin(self, group):
        return Outcome(False, float(self._ctl.rejoin(group)))

    def on_events(self, groups, rejoin):
        # failures and rejoins of a run with repairs in one kernel call (no Python per rejoin)
        if not rejoin.any():
            return self.on_failures(groups)
        d, back = self._ctl.events_arrays(groups, rejoin)
        kind = np.where(back, REJOINED, (d.kind == self._wipeout).astype(np.int8) * RESTART).astype(np.int8)
        return Outcomes(kind, d.stack_depth.astype(np.float64), np.where(back, 0, d.patch_layers).astype(np.float64))


class SpareCheckpoint(Policy):
    """SPARe stacked redundancy driven by the RECTLR controller, plus checkpoints.

    Each step computes the top S layers of every surviving group's stack (S starts at 1);
    on a failure RECTLR repairs the assignment (:class:`spare_core.strategies.spare.Rectlr`), the
    failure step pays ``shrink_time + controller_time`` plus the patch plan's extra layers
    (``patch_layers * t_compute`` when ``scenario.charge_patch``), and a wipe-out is a
    global restart.

    Parameters
    ----------
    r : int
        Redundancy (stack height), 1 <= r <= N.
    interval : float or {"auto", "young", "daly"}, default "auto"
        See :class:`Policy`; T_f = mu(N, r) x system MTBF.
    offsets : None, "sidon" or array-like of int, optional
        Stack offsets for :class:`spare_core.strategies.spare.StackedLayout`: None (default) the
        consecutive 0..r-1, the paper's cyclic stacks; "sidon" the Sidon-type offsets of
        :func:`spare_core.strategies.spare.sidon_offsets` for the scenario's N (seed 0: any two shard
        types share at most one holder where N allows); or explicit offsets (length r).
    layout : StackedLayout or "rack-aware", optional
        A whole layout instead of offsets (e.g. ``StackedLayout.rack_aware(domains, r)``); its
        redundancy must be r and its n_groups the scenario's. ``"rack-aware"``: that layout
        built for each scenario from its failure model's domains (a model with a
        ``domains(n_groups)`` method, :class:`spare_core.events.DomainFailures`), with
        ``offsets`` None (consecutive) or "sidon" along the interleaved cycle; a scenario
        whose failures have no domains is refused by :meth:`check`.

    References
    ----------
    .. [1] SPARe, arXiv:2603.00357.
    """

    name = "SPARe+CKPT"
    identity = "spare_core.sim.policies.SpareCheckpoint"

    def __init__(self, r: int, interval: str | float = "auto", offsets: object = None, layout: object = None) -> None:
        super().__init__(interval)
        self.redundancy = as_int(r, "r", min_value=1)
        if isinstance(layout, str):
            if layout != RACK_AWARE:
                raise ValueError(f"layout must be a StackedLayout or {RACK_AWARE!r}, got {layout!r}")
            if offsets is not None and not (isinstance(offsets, str) and offsets == "sidon"):
                raise ValueError(f"layout={RACK_AWARE!r} takes offsets None or 'sidon', got {offsets!r}")
            self.layout = layout
        elif layout is not None:  # an attribute only when given: repr/eq/hash of offset policies unchanged
            if not isinstance(layout, StackedLayout):
                raise TypeError(f"layout must be a StackedLayout, got {type(layout).__name__}")
            if offsets is not None:
                raise ValueError("give offsets or layout, not both")
            if layout.redundancy != self.redundancy:
                raise ValueError(f"layout must have redundancy r = {self.redundancy}, got {layout.redundancy}")
            self.layout = layout
        if offsets is None or (isinstance(offsets, str) and offsets == "sidon"):
            self.offsets = offsets
        elif isinstance(offsets, str):
            raise ValueError(f"offsets must be None, 'sidon' or a sequence of ints, got {offsets!r}")
        else:
            off = as_int_array(offsets, "offsets", min_value=0)
            if off.shape[0] != self.redundancy:
                raise ValueError(f"offsets must have length r = {self.redundancy}, got {off.shape[0]}")
            self.offsets = tuple(off.tolist())

    def check(self, scenario):
        self._check_r(scenario)
        layout = getattr(self, "layout", None)
        if isinstance(layout, str):
            if not callable(getattr(scenario.failures, "domains", None)):
                raise ValueError(f"layout={RACK_AWARE!r} needs failure domains in the scenario (a failure model "
                                 f"with domains, e.g. DomainFailures), got failure model {scenario.failure_model!r}")
            _rack_aware(scenario.failures, scenario.n_groups, self.redundancy, self.offsets)
        elif layout is not None and layout.n_groups != scenario.n_groups:
            raise ValueError(f"layout must have n_groups = {scenario.n_groups}, got {layout.n_groups}")
        if isinstance(self.offsets, tuple) and max(self.offsets) >= scenario.n_groups:
            raise ValueError(f"offsets must be < n_groups ({scenario.n_groups}), got {max(self.offsets)}")

    def _offsets(self, scenario):
        if self.offsets == "sidon":
            return _sidon(scenario.n_groups, self.redundancy)
        return self.offsets

    def failure_seconds(self, scenario):
        return scenario.shrink_time + scenario.controller_time

    def to_dict(self) -> dict:
        """As :meth:`Policy.to_dict`; a given ``layout`` enters as its size and the SHA-256 of
        its placement (layouts are equal exactly when their placements are)."""
        layout = getattr(self, "layout", None)
        if layout is None or isinstance(layout, str):
            return super().to_dict()
        plain = copy.copy(self)
        del plain.layout
        out = Policy.to_dict(plain)
        placement = np.ascontiguousarray(layout.placement, dtype="<i8")
        out["params"]["layout"] = {"n_groups": int(placement.shape[0]), "redundancy": int(placement.shape[1]),
                                   "placement_sha256": hashlib.sha256(placement.tobytes()).hexdigest()}
        return out

    def endurable_failures(self, scenario):
        return float(endurable_failures(scenario.n_groups, self.redundancy))

    def handler(self, scenario):
        layout = getattr(self, "layout", None)
        if isinstance(layout, str):
            return _RectlrHandler(scenario.n_groups, self.redundancy, None,
                                  _rack_aware(scenario.failures, scenario.n_groups, self.redundancy, self.offsets))
        return _RectlrHandler(scenario.n_groups, self.redundancy, self._offsets(scenario), layout)

    def checkpoint_only_equivalent(self):
        return self.redundancy == 1


def _layout_options(value) -> dict:
    """``compare.layout`` of a scenario file as SpareCheckpoint options."""
    check_choice(value, "compare.layout", SPARE_LAYOUTS)
    out: dict = {}
    if value.startswith(RACK_AWARE):
        out["layout"] = RACK_AWARE
    if value.endswith("sidon"):
        out["offsets"] = "sidon"
    return out


#: the registry entry (``spare``); ``compare.layout`` is its shorthand for offsets and layout
ENTRY = policy_entry(
    SpareCheckpoint, label=SpareCheckpoint.name,
    params=[INTERVAL,
            Param("offsets", "any", None, "stack offsets: none (consecutive), 'sidon' or r integers"),
            Param("layout", "any", None, f"a StackedLayout or {RACK_AWARE!r} (stacks across failure domains)")],
    compare_keys={"layout": _layout_options},
    description="SPARe+CKPT: stacked redundancy with RECTLR, plus checkpoints")
