"""RECTLR: the SPARe controller that keeps every training step complete after failures.

Model (SPARe [1]_; docs/model.md section 3). N groups hold stacks of r shard types
(:class:`~spare_core.strategies.spare.layout.StackedLayout`); every surviving group computes the top S
entries of its stack; a step is complete when every shard type is contributed by one
surviving group that has it within its top S. On each group failure RECTLR decides:

Phase 0 (HK-Fixed)
    Is every type still within the top S of some surviving group? Then nothing moves.
    In the fixed top-S graph every group can contribute its whole top S, so the
    matching question reduces to a coverage count per type (kept incrementally: O(S)
    per failure instead of a Hopcroft-Karp run).
Phase 1 (HK-Free)
    The least S* >= S for which a complete assignment exists when each surviving group
    may bring any of its r shards into its top S*: a b-matching, capacity S* per group.
    None even at S* = r means some type lost all its holders: a *wipe-out*.
Phase 2 (MCMF)
    Among the complete assignments at S*, one that reorders least. **Cost** of giving
    type t to group g: ``max(0, depth_g(t) - S* + 1)``, the number of positions t must
    climb in g's current stack to enter its top S* (0 if it is already there); the total
    is minimised exactly.

Phases 1 and 2 are one successive-shortest-path computation: the assignment before the
failure has cost 0 at any S* >= S (every contributed shard already sits in a top S),
so the types the failed group contributed and nobody else covers are re-inserted one
by one along shortest augmenting paths (Dijkstra with node potentials) in the residual
type/group graph, capacity S* per group. If some type finds no augmenting path at
S*, no complete assignment exists at S* (a flow-decomposition argument), the attempt
is undone and S* grows by one. The paths touch only the neighbourhood of the failure;
the state (assignment, loads, coverage counts, stacks) is kept across failures and is
never rebuilt.

Reordering: a group that must contribute a shard lying below its top S* swaps it with
the deepest top-S* shard it does not contribute (one *move* per such shard).

Patch plan: the failure strikes during a step in which the failed group's
contributions are lost. For each type it contributed, the plan names the surviving
group that supplies it in that step: a group that already computed it in its old top S
(``extra=False``), or, for types no survivor computed, its new contributor, which
computes it as *extra* work. ``patch_layers`` is the maximum over groups of extra
shards, i.e. the extra stack layers the failure step costs (rho_k in [1]_).

References
----------
.. [1] SPARe: Stacked Parallelism with Adaptive Reordering for Fault-Tolerant LLM
   Pretraining Systems with 100k+ GPUs, arXiv:2603.00357.
.. [2] J. Edmonds and R. M. Karp, "Theoretical improvements in algorithmic efficiency
   for network flow problems", J. ACM 19(2), 1972 (successive shortest paths with
   potentials).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._native import load
from ..._results import fields_dict
from ..._validate import as_int, as_int_array, check_choice
from .layout import StackedLayout

__all__ = ["Rectlr", "Decision", "DecisionArrays", "PatchPlan", "KINDS", "REJOINED"]

_core_module = load("_rectlr_core")
_C = _core_module.CONSTANTS
#: decision kinds, indexed by the kernel's K_* codes
KINDS = ("fixed", "reordered", "wipeout")
_WIPEOUT = _C["K_WIPEOUT"]
_PENDING = _C["K_PENDING"]  # kernel: Phase 0 left uncovered types, Phase 1 decided by the caller
#: the kind code of a rejoin's row in :meth:`Rectlr.events_arrays` (the decision kinds are
#: :data:`KINDS`' indices)
REJOINED = _C["K_REJOINED"]
# slots of the kernel's decision row
_KIND, _S_OLD, _MOVES, _COST = _C["OUT_KIND"], _C["OUT_S_OLD"], _C["OUT_MOVES"], _C["OUT_COST"]
_N_PATCH, _LAYERS, _S_AFTER, _N_OUT = _C["OUT_N_PATCH"], _C["OUT_LAYERS"], _C["OUT_S_AFTER"], _C["N_OUT"]


class PatchPlan:
    """Who supplies the failed group's lost contributions in the failure step.

    Attributes
    ----------
    group : ndarray of int64
        Supplying surviving group per row (-1 after a wipe-out: nobody can).
    shard_type : ndarray of int64
        The shard type the failed group contributed.
    extra : ndarray of bool
        True when the group was not already computing that type (extra work).
    """

    __slots__ = ("group", "shard_type", "extra")

    def __init__(self, group, shard_type, extra):
        self.group, self.shard_type, self.extra = group, shard_type, extra
        for a in (group, shard_type, extra):
            a.flags.writeable = False

    def __len__(self):
        return self.group.size

    def __repr__(self):
        rows = ", ".join(
            f"{t}->{g}{'+' if x else ''}" for g, t, x in zip(self.group.tolist(), self.shard_type.tolist(), self.extra.tolist())
        )
        return f"PatchPlan([{rows}])  # type->group, + = extra work"

    def to_dict(self) -> dict:
        """The three columns as JSON lists."""
        return fields_dict(self, ("group", "shard_type", "extra"))


class Decision:
    """RECTLR's answer to one group failure.

    Attributes
    ----------
    failed_group : int
    kind : {"fixed", "reordered", "wipeout"}
        "fixed": Phase 0 sufficed, nothing moved and S is unchanged; "reordered": S rose
        and/or shards were reordered; "wipeout": no complete assignment exists even at
        S = r (some type lost all its holders), a global restart is needed.
    stack_depth : int
        S after the decision (for a wipe-out, the S the system had).
    previous_stack_depth : int
        S before the failure.
    moves : int
        Shards swapped into a top S (0 unless "reordered").
    cost : int
        The Phase 2 objective: total positions climbed by the moved shards.
    patch : PatchPlan
        Suppliers of the failed group's contributions in the failure step.
    patch_layers : int
        Max over groups of the extra shards it computes in the failure step.
    """

    __slots__ = (
        "failed_group", "kind", "stack_depth", "previous_stack_depth", "moves", "cost", "patch_layers", "_patch",
        "_bufs", "_a", "_b",
    )

    def __init__(self, failed_group, kind, stack_depth, previous_stack_depth, moves, cost, patch_layers, bufs, a, b):
        self.failed_group = failed_group
        self.kind = kind
        self.stack_depth = stack_depth
        self.previous_stack_depth = previous_stack_depth
        self.moves = moves
        self.cost = cost
        self.patch_layers = patch_layers
        self._patch = None
        # bufs = (group, type, extra) kernel buffers owned by this decision or shared by one
        # fail_many call, rows a..b; the PatchPlan is built on first access (most callers only
        # read the scalars, and no per-decision container keeps a long sequence cheap)
        self._bufs, self._a, self._b = bufs, a, b

    @property
    def patch(self) -> PatchPlan:
        if self._patch is None:
            (pg, pt, px), a, b = self._bufs, self._a, self._b
            self._patch = PatchPlan(pg[a:b].astype(np.int64), pt[a:b].astype(np.int64), px[a:b].astype(bool))
            self._bufs = None
        return self._patch

    @property
    def patch_group(self):
        return self.patch.group

    @property
    def patch_type(self):
        return self.patch.shard_type

    @property
    def patch_extra(self):
        return self.patch.extra

    def __repr__(self):
        return (
            f"Decision(group={self.failed_group}, kind={self.kind!r}, S={self.previous_stack_depth}->"
            f"{self.stack_depth}, moves={self.moves}, cost={self.cost}, patch_rows={len(self.patch)}, "
            f"patch_layers={self.patch_layers})"
        )

    def to_dict(self) -> dict:
        """The scalars and the patch plan (as :meth:`PatchPlan.to_dict`) as a JSON-serialisable dict."""
        return fields_dict(self, ("failed_group", "kind", "stack_depth", "previous_stack_depth", "moves", "cost",
                                  "patch_layers", "patch"))


class DecisionArrays(NamedTuple):
    """Decisions of a failure sequence as columns (:meth:`Rectlr.fail_many_arrays`).

    Every field is a numpy array with one entry per failed group, in order.

    Attributes
    ----------
    groups : int64
        The failed groups.
    kind : int8
        Index into :data:`KINDS` (0 fixed, 1 reordered, 2 wipeout).
    stack_depth, previous_stack_depth, moves, cost, patch_layers : int64
        As the :class:`Decision` attributes of the same names.
    """

    groups: np.ndarray
    kind: np.ndarray
    stack_depth: np.ndarray
    previous_stack_depth: np.ndarray
    moves: np.ndarray
    cost: np.ndarray
    patch_layers: np.ndarray

    @classmethod
    def from_decisions(cls, decisions) -> "DecisionArrays":
        """Columns of a list of :class:`Decision`."""
        col = lambda f, dt=np.int64: np.array([f(d) for d in decisions], dtype=dt)  # noqa: E731
        return cls(col(lambda d: d.failed_group), col(lambda d: KINDS.index(d.kind), np.int8),
                   col(lambda d: d.stack_depth), col(lambda d: d.previous_stack_depth),
                   col(lambda d: d.moves), col(lambda d: d.cost), col(lambda d: d.patch_layers))

    def to_dict(self) -> dict:
        """The columns as JSON lists (``kind`` as indices into :data:`KINDS`)."""
        return fields_dict(self)


def _columns(arr: np.ndarray, rows: np.ndarray) -> DecisionArrays:
    """The kernel's decision rows (one per event of ``arr`` processed) as columns; a wipe-out
    keeps the depth it had."""
    kind = rows[:, _KIND].astype(np.int8)
    s_old = rows[:, _S_OLD].copy()
    s_new = np.where(kind == _WIPEOUT, s_old, rows[:, _S_AFTER])
    return DecisionArrays(arr[: rows.shape[0]].astype(np.int64), kind, s_new, s_old, rows[:, _MOVES].copy(),
                          rows[:, _COST].copy(), rows[:, _LAYERS].copy())


class Rectlr:
    """The RECTLR controller for one stacked layout, kept incrementally along failures.

    Parameters
    ----------
    layout : StackedLayout
        The placement of shard types on group stacks.
    phase1 : {"kernel", "matching"}
        Who finds S* when Phase 0 does not suffice. "kernel" (default): the
        shortest-path kernel itself (a lost type without an augmenting path at S proves
        S infeasible). "matching": a :class:`~spare_core.graph.matching.IncrementalMatching`
        (Hopcroft-Karp b-matching, capacity S per group) kept across failures, whose
        ``augment()`` is re-run after each group is switched off; the kernel then only runs
        Phase 2 at that S*. Decisions are identical; the default is the faster (see Notes).

    Attributes
    ----------
    layout : StackedLayout
    alive : ndarray of bool, read-only live view
        Changes as groups fail; copy it to keep a state.
    stack_depth : int
        The current S.
    stacks : ndarray of int64, shape (N, r)
        Current stack order: ``stacks[g, d]`` is the shard type at depth d of group g.
    assignment : ndarray of int64, shape (N,)
        ``assignment[t]`` is the group contributing type t (-1: none, after a wipe-out).
    n_failed : int
    wiped_out : bool

    Notes
    -----
    A wipe-out leaves the controller in the wiped-out state (the wiping group is dead,
    the types nobody can supply have assignment -1) until :meth:`restart`; failing a
    group in that state raises RuntimeError. Memory is O(N r). The kernel releases the
    GIL, but one controller must not be driven from two threads at once. A failure handled by
    Phase 0 costs O(r + S r); a reordering costs the Dijkstra searches of the lost
    types (typically a small neighbourhood; O((N r) log N) each in the worst case, which
    is also what proving an S infeasible costs, at most r - 1 times per sequence).

    The shortest-path Phase 1 is the default because the "matching" Phase 1 pays one
    Hopcroft-Karp ``augment()`` per reordering plus the calls from Python; the measured
    latencies of both are in docs/closed_form.md ("Decision latency of the controller",
    ``bench/tables/rectlr.py``).

    Examples
    --------
    >>> ctl = Rectlr(StackedLayout(6, 3))
    >>> ctl.fail(2)
    Decision(group=2, kind='reordered', S=1->2, moves=0, cost=0, patch_rows=1, patch_layers=1)
    >>> ctl.fail(4).kind
    'fixed'
    >>> [d.kind for d in ctl.fail_many([0, 5, 1])]  # 4, 5, 0 are r consecutive dead groups
    ['fixed', 'wipeout']
    >>> ctl.restart(); ctl.stack_depth
    1
    """

    def __init__(self, layout: StackedLayout, *, phase1: str = "kernel") -> None:
        if not isinstance(layout, StackedLayout):
            raise TypeError(f"layout must be a StackedLayout, got {type(layout).__name__}")
        self.phase1 = check_choice(phase1, "phase1", {"kernel", "matching"})
        self.layout = layout
        hptr, hgrp, hcol = layout.holders()
        self._core = _core_module.RectlrCore(layout.placement, hptr, hgrp, hcol)
        self._im = None
        self._failed = []
        if self.phase1 == "matching":
            import scipy.sparse as sp

            from ...graph.matching import IncrementalMatching

            n, r = layout.placement.shape
            rows = np.repeat(np.arange(n), r)
            graph = sp.csr_array((np.ones(n * r, dtype=np.int8), (layout.placement.ravel(), rows)), shape=(n, n))
            self._im = IncrementalMatching(graph)
        r = layout.redundancy
        self._pg = np.empty(r, dtype=np.int32)
        self._pt = np.empty(r, dtype=np.int32)
        self._px = np.empty(r, dtype=np.uint8)
        self._out = np.empty(_N_OUT, dtype=np.int64)
        self.restart()

    # ------------------------------------------------------------------ state
    def restart(self) -> None:
        """Global restart: all groups back, initial stacks, S back to 1.

        (For a custom placement whose depth-0 column does not cover every type, the least
        S that does, with the least reordering.)
        """
        self._core.reset()
        if self._im is not None:
            for g in self._failed:
                self._im.enable_right(g)
            self._im.set_capacities(int(self._core.S))
            if self._im.augment() != self.layout.n_groups:
                raise RuntimeError("matching kernel disagrees with the initial complete assignment")
        self._failed = []
        self._n_synced = 0
        self._n_failed = 0
        self._wiped = False

    def rejoin(self, group) -> int:
        """A failed group is back (its node replaced and its state caught up from a live
        peer): recompute the stack depth for the groups still down; returns the new S.

        The controller is reset and the groups still down are failed again (in index order)
        in one kernel call: Phase 1 raises S from the least feasible depth of each prefix,
        so the result is the least S at which the groups still down can be masked, whatever
        the order (fewer groups down never needs a larger S, so no wipe-out can occur). The
        stacks may be reordered differently from the original failure order. There is no
        rollback: the run keeps its progress.

        Raises
        ------
        ValueError
            ``group`` out of range or not down.
        RuntimeError
            The controller is wiped out (call :meth:`restart`).
        """
        if type(group) is int and 0 <= group < self.layout.n_groups:
            g = group  # the simulator's call; anything else is validated in full
        else:
            g = as_int(group, "group", min_value=0, max_value=self.layout.n_groups - 1)
        if self._wiped:
            raise RuntimeError("the controller is wiped out; call restart() before groups rejoin")
        if self._core.alive_arr[g]:
            raise ValueError(f"group must be down to rejoin, group {g} is alive")
        n_failed = self._n_failed
        if self._im is None:  # one kernel call: reset and fail again the groups still down
            s = int(self._core.rejoin(g, self._pg, self._pt, self._px, self._out))
            self._n_failed = n_failed
            return s
        down = np.flatnonzero(self._core.alive_arr == 0).astype(np.int32)
        down = down[down != g]
        self.restart()
        if down.size:
            self._fail_each(down)
        self._n_failed = n_failed
        return int(self._core.S)

    @property
    def alive(self) -> np.ndarray:
        view = self._core.alive_arr.view(np.bool_)
        view.flags.writeable = False
        return view

    @property
    def stack_depth(self) -> int:
        return int(self._core.S)

    @property
    def stacks(self) -> np.ndarray:
        c = self._core
        return np.take_along_axis(c.place_arr, c.stack_arr, axis=1).astype(np.int64)

    @property
    def assignment(self) -> np.ndarray:
        return self._core.assign_arr.astype(np.int64)

    @property
    def n_failed(self) -> int:
        return self._n_failed

    @property
    def wiped_out(self) -> bool:
        return self._wiped

    def _check_alive(self, g):
        if self._wiped:
            raise RuntimeError("the controller is wiped out; call restart() before failing more groups")
        if not self._core.alive_arr[g]:
            raise ValueError(f"group must be alive to fail, group {g} has already failed")

    # ------------------------------------------------------------------ failures
    def fail(self, group) -> Decision:
        """Fail one surviving group and run RECTLR.

        Parameters
        ----------
        group : int
            An alive group in [0, N).

        Returns
        -------
        Decision

        Raises
        ------
        TypeError
            ``group`` is not an integer.
        ValueError
            ``group`` out of range or already failed (state unchanged).
        RuntimeError
            The controller is wiped out (call :meth:`restart`).
        """
        if type(group) is int and 0 <= group < self.layout.n_groups:
            g = group  # fast path for the common call; everything else is validated in full
        else:
            g = as_int(group, "group", min_value=0, max_value=self.layout.n_groups - 1)
        self._check_alive(g)
        out = self._out
        if self._im is None:
            self._core.fail(g, self._pg, self._pt, self._px, out)
        else:
            self._fail_matching(g)
        out[_S_AFTER] = self._core.S
        k = int(out[_N_PATCH])
        return self._decision(g, out.tolist(), (self._pg[:k].copy(), self._pt[:k].copy(), self._px[:k].copy()), 0, k)

    def _fail_matching(self, g):
        """fail() with Phase 1 on the IncrementalMatching kept across failures.

        The matching is a witness of feasibility at the current S. Failed groups are
        queued and only switched off in the matching when Phase 0 does not suffice (a
        Phase-0 failure needs no Phase 1), then ``augment()`` repairs it; while it is not
        perfect, S grows for every group (``set_capacities``). The kernel then runs Phase 2
        at that S*.
        """
        core, im, out = self._core, self._im, self._out
        core.phase0(g, self._pg, self._pt, self._px, out)
        self._failed.append(g)
        if out[_KIND] != _PENDING:
            return
        for h in self._failed[self._n_synced :]:
            im.disable_right(h)
        self._n_synced = len(self._failed)
        s, n = int(core.S), self.layout.n_groups
        while im.augment() < n:
            s += 1
            im.set_capacities(s)
        core.finish(s, self._pg, self._pt, self._px, out)

    def _decision(self, g, out, bufs, a, b):
        kind = KINDS[out[_KIND]]
        self._n_failed += 1
        if kind == "wipeout":
            self._wiped = True
        s_after = out[_S_OLD] if kind == "wipeout" else out[_S_AFTER]
        return Decision(g, kind, s_after, out[_S_OLD], out[_MOVES], out[_COST], out[_LAYERS], bufs, a, b)

    def fail_many(self, groups) -> list:
        """Fail groups in order; stop at a wipe-out.

        The whole sequence runs in one call of the compiled kernel (GIL released).

        Parameters
        ----------
        groups : array_like of int
            Distinct alive groups, failed in this order.

        Returns
        -------
        list of Decision
            One per failed group; if a wipe-out happens the list ends with it and the
            remaining groups are not failed.

        Raises
        ------
        TypeError, ValueError, RuntimeError
            As :meth:`fail`, checked for all groups before any is failed (state unchanged);
            repeated groups are refused too.

        See Also
        --------
        fail_many_arrays : the same sequence as columns, without a Decision per failure.
        """
        arr = self._check_groups(groups)
        if arr.size == 0:
            return []
        if self._im is not None:
            return self._fail_each(arr)
        done, out, ptr, bufs = self._run_many(arr)
        if done == 0:
            return []
        # one Decision per row without a method call per row (this loop is the Python cost
        # of a sequence)
        cols = out[:done].T.tolist()
        kind, s_old, moves, cost = cols[_KIND], cols[_S_OLD], cols[_MOVES], cols[_COST]
        layers, s_after = cols[_LAYERS], cols[_S_AFTER]
        bounds = ptr[: done + 1].tolist()
        return [
            Decision(g, KINDS[k], so if k == _WIPEOUT else sa, so, mv, c, pl, bufs, a, b)
            for g, k, so, mv, c, pl, sa, a, b in zip(
                arr[:done].tolist(), kind, s_old, moves, cost, layers, s_after, bounds, bounds[1:]
            )
        ]

    def fail_many_arrays(self, groups) -> DecisionArrays:
        """Fail groups in order, stop at a wipe-out, and return the decisions as columns.

        The same state change and the same decisions as :meth:`fail_many`, for callers that
        drive long sequences (simulators, Monte-Carlo estimates) and read only the scalars:
        no Python object per failure, and no patch plans (use :meth:`fail_many` for those).

        Parameters
        ----------
        groups : array_like of int
            Distinct alive groups, failed in this order.

        Returns
        -------
        DecisionArrays
            One row per failed group (the last one is the wipe-out, if any).

        Raises
        ------
        TypeError, ValueError, RuntimeError
            As :meth:`fail_many`.
        """
        arr = self._check_groups(groups)
        if arr.size == 0:
            rows = np.zeros((0, _N_OUT), dtype=np.int64)
        elif self._im is not None:
            return DecisionArrays.from_decisions(self._fail_each(arr))
        else:
            done, out, _, _ = self._run_many(arr)
            rows = out[:done]
        return _columns(arr, rows)

    def events_arrays(self, groups, back) -> tuple[DecisionArrays, np.ndarray]:
        """Failures and rejoins in order, in one kernel call: what a run with repairs hands the
        controller (a failed group swapped and caught up rejoins between failures).

        Each rejoin recomputes S as :meth:`rejoin` does; each failure is decided as by
        :meth:`fail_many_arrays`. Stops after a wipe-out.

        Parameters
        ----------
        groups : array_like of int
            The groups, in event order.
        back : array_like of bool or {0, 1}
            True where the event is the group's rejoin (it must be down then), False where it
            fails (it must be alive then). A group may fail and rejoin several times.

        Returns
        -------
        decisions : DecisionArrays
            One row per event processed (a rejoin's row: kind :data:`REJOINED`, no moves,
            no patch, ``stack_depth`` the new S).
        back : numpy.ndarray of bool
            Which rows are rejoins.

        Raises
        ------
        TypeError, ValueError
            Bad arrays, or a sequence that does not match the groups' states (checked whole
            before any event is applied).
        RuntimeError
            The controller is wiped out (call :meth:`restart`).
        """
        n = self.layout.n_groups
        arr = as_int_array(groups, "groups", dtype=np.int32, min_value=0, max_value=n - 1)
        b = np.asarray(back)
        if b.size == 0 and b.ndim == 1:
            b = b.astype(np.uint8)  # an empty list reads as float64
        if b.shape != arr.shape or not (b.dtype == np.bool_ or np.issubdtype(b.dtype, np.integer)):
            raise ValueError(f"back must be one flag per group ({arr.shape[0]}), got {b.dtype} of shape {b.shape}")
        if b.size and not np.isin(b, (0, 1)).all():
            raise ValueError("back must hold 0 (a failure) or 1 (a rejoin)")
        b = b.astype(np.uint8)
        if arr.size and self._wiped:
            raise RuntimeError("the controller is wiped out; call restart() before more events")
        self._check_sequence(arr, b)
        if self._im is not None or arr.size == 0:  # the matching path: one event at a time
            return self._events_each(arr, b)
        out = np.empty((arr.size, _N_OUT), dtype=np.int64)
        done = self._core.events(arr, b, self._pg, self._pt, self._px, out)
        rows, bk = out[:done], b[:done].astype(bool)
        self._n_failed += int(done - bk.sum())
        self._wiped = bool(done and not bk[-1] and rows[-1, _KIND] == _WIPEOUT)
        return _columns(arr, rows), bk

    def _check_sequence(self, arr: np.ndarray, back: np.ndarray) -> None:
        """Each group's events alternate from its state: a failure when alive, a rejoin when down."""
        if arr.size == 0:
            return
        order = np.argsort(arr, kind="stable")
        g, b = arr[order], back[order]
        first = np.ones(g.size, dtype=bool)
        first[1:] = g[1:] != g[:-1]
        expect = np.empty(g.size, dtype=np.uint8)
        expect[first] = (self._core.alive_arr[g[first]] == 0).astype(np.uint8)  # a dead group's first event rejoins
        same = ~first
        ok = np.ones(g.size, dtype=bool)
        ok[first] = b[first] == expect[first]
        ok[same] = b[1:][same[1:]] != b[:-1][same[1:]]
        if not ok.all():
            i = int(order[np.flatnonzero(~ok)[0]])
            what = "rejoin of an alive group" if back[i] else "failure of a dead group"
            raise ValueError(f"events: event {i} (group {int(arr[i])}) is a {what}")

    def _events_each(self, arr: np.ndarray, back: np.ndarray) -> tuple[DecisionArrays, np.ndarray]:
        """Validated events one :meth:`fail` / :meth:`rejoin` at a time (the matching path)."""
        rows = []
        for g, b in zip(arr.tolist(), back.tolist()):
            if b:
                s_old = self.stack_depth
                rows.append((g, REJOINED, self.rejoin(g), s_old, 0, 0, 0))
            else:
                d = self.fail(g)
                rows.append((g, KINDS.index(d.kind), d.stack_depth, d.previous_stack_depth, d.moves, d.cost,
                             d.patch_layers))
                if d.kind == "wipeout":
                    break
        cols = np.array(rows, dtype=np.int64).reshape(len(rows), 7).T
        out = DecisionArrays(cols[0], cols[1].astype(np.int8), *(c.copy() for c in cols[2:]))
        return out, back[: len(rows)].astype(bool)

    def _check_groups(self, groups) -> np.ndarray:
        n = self.layout.n_groups
        arr = as_int_array(groups, "groups", dtype=np.int32, min_value=0, max_value=n - 1)
        if np.unique(arr).size != arr.size:
            raise ValueError("groups must be distinct, got a repeated group")
        if arr.size == 0:
            return arr
        if self._wiped:
            raise RuntimeError("the controller is wiped out; call restart() before failing more groups")
        dead = arr[self._core.alive_arr[arr] == 0]
        if dead.size:
            raise ValueError(f"groups must be alive to fail, group {dead[0]} has already failed")
        return arr

    def _fail_each(self, arr) -> list:
        """Validated groups one :meth:`fail` at a time (the ``phase1="matching"`` path)."""
        out = []
        for g in arr.tolist():
            out.append(self.fail(g))
            if out[-1].kind == "wipeout":
                break
        return out

    def _run_many(self, arr):
        """Run the kernel on validated groups; returns (done, out rows, patch ptr, patch bufs)."""
        m, r = arr.size, self.layout.redundancy
        pg = np.empty(m * r, dtype=np.int32)
        pt = np.empty(m * r, dtype=np.int32)
        px = np.empty(m * r, dtype=np.uint8)
        out = np.empty((m, _N_OUT), dtype=np.int64)
        ptr = np.empty(m + 1, dtype=np.int64)
        done = self._core.fail_many(arr, pg, pt, px, out, ptr)
        if done:
            self._n_failed += done
            self._wiped = bool(out[done - 1, _KIND] == _WIPEOUT)
        return done, out, ptr, (pg, pt, px)

    def __repr__(self):
        state = "wiped out" if self._wiped else f"S={self.stack_depth}"
        return f"Rectlr(n_groups={self.layout.n_groups}, redundancy={self.layout.redundancy}, failed={self._n_failed}, {state})"
