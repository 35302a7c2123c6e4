"""RECTLR: the SPARe controller that keeps every training step complete after failures.

Model (SPARe [1]_, DESIGN.md section 3). N groups hold stacks of r shard types
(:class:`~spare_core.layout.StackedLayout`); every surviving group computes the top S
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

import heapq

import numpy as np

from ._validate import as_int, as_int_array
from .layout import StackedLayout

__all__ = ["Rectlr", "Decision", "PatchPlan"]

KINDS = ("fixed", "reordered", "wipeout")


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

    __slots__ = ("failed_group", "kind", "stack_depth", "previous_stack_depth", "moves", "cost", "patch", "patch_layers")

    def __init__(self, failed_group, kind, stack_depth, previous_stack_depth, moves, cost, patch):
        self.failed_group = failed_group
        self.kind = kind
        self.stack_depth = stack_depth
        self.previous_stack_depth = previous_stack_depth
        self.moves = moves
        self.cost = cost
        self.patch = patch
        extra_groups = patch.group[patch.extra]
        self.patch_layers = int(np.bincount(extra_groups).max()) if extra_groups.size else 0

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


class _PyCore:
    """Pure-Python core (the algorithm of src/_ext/rectlr.pyx, used when it is not built).

    State of one controller. Depths are 0-based, the top of a stack is depth 0.

    place[g, j]   type in column j of group g (fixed)
    stack[g, d]   column at depth d of group g (current order)
    depth[g, j]   depth of column j in group g (inverse of stack)
    hptr/hgrp/hcol  CSR holders of each type: group, column
    alive[g], nhold[t] (alive holders of t), cover[t] (alive groups with t in top S),
    assign[t] (group contributing t, -1 none), acol[t] (its column), load[g], S.
    """

    def __init__(self, place, hptr, hgrp, hcol):
        self.place = place
        self.hptr, self.hgrp, self.hcol = hptr, hgrp, hcol
        n, r = place.shape
        self.n, self.r = n, r
        self.stack = np.empty((n, r), dtype=np.int64)
        self.depth = np.empty((n, r), dtype=np.int64)
        self.alive = np.empty(n, dtype=np.uint8)
        self.nhold = np.empty(n, dtype=np.int64)
        self.cover = np.empty(n, dtype=np.int64)
        self.assign = np.empty(n, dtype=np.int64)
        self.acol = np.empty(n, dtype=np.int64)
        self.load = np.empty(n, dtype=np.int64)
        self.S = 1

    # ------------------------------------------------------------------ helpers
    def _cost(self, g, j, S):
        d = self.depth[g, j]
        return d - S + 1 if d >= S else 0

    def _find_top_holder(self, t):
        """An alive holder of t with t within its top S (caller knows cover[t] > 0)."""
        for k in range(self.hptr[t], self.hptr[t + 1]):
            g, j = self.hgrp[k], self.hcol[k]
            if self.alive[g] and self.depth[g, j] < self.S:
                return g, j
        raise AssertionError("cover count out of sync")

    def reset(self):
        n, r = self.n, self.r
        self.stack[:] = np.arange(r)
        self.depth[:] = np.arange(r)
        self.alive[:] = 1
        self.nhold[:] = np.diff(self.hptr)
        self.S = 1
        self.cover[:] = np.bincount(self.place[:, 0], minlength=n)
        self.assign[:] = -1
        self.load[:] = 0
        lost = []
        for t in range(n):
            if self.cover[t]:
                g, j = self._find_top_holder(t)
                self._set(t, g, j)
            else:
                lost.append(t)
        return self._repair(lost)

    def _set(self, t, g, j):
        self.assign[t] = g
        self.acol[t] = j
        self.load[g] += 1

    # ------------------------------------------------------------------ failure
    def fail(self, g):
        """Fail group g. Returns (kind, S_old, moves, cost, patch rows)."""
        r, S = self.r, self.S
        S_old = S
        self.alive[g] = 0
        wiped = False
        for j in range(r):
            t = self.place[g, j]
            self.nhold[t] -= 1
            if self.nhold[t] == 0:
                wiped = True
            if self.depth[g, j] < S:
                self.cover[t] -= 1
        lost = [self.place[g, self.stack[g, d]] for d in range(S)]
        lost = [t for t in lost if self.assign[t] == g]
        self.load[g] = 0
        if wiped:
            for t in lost:
                self.assign[t] = -1
            return "wipeout", S_old, 0, 0, []
        patch = []
        uncovered = []
        for t in lost:
            if self.cover[t]:
                h, j = self._find_top_holder(t)
                self._set(t, h, j)
                patch.append((h, t, False))
            else:
                self.assign[t] = -1
                uncovered.append(t)
        if not uncovered:
            return "fixed", S_old, 0, 0, patch
        moves, cost = self._repair(uncovered)
        for t in uncovered:
            patch.append((self.assign[t], t, True))
        return "reordered", S_old, moves, cost, patch

    # ------------------------------------------------------------------ phases 1+2
    def _repair(self, lost):
        """Assign the unassigned types ``lost`` at the least S* >= S, least reordering."""
        if not lost:
            return 0, 0
        S = self.S
        while True:
            log, ends = [], []
            ok = True
            self.pi_t = {}
            self.pi_g = {}
            for t in lost:
                if not self._ssp(t, S, log, ends):
                    ok = False
                    break
            if ok:
                break
            # infeasible at S: undo this attempt (costs change with S) and retry at S + 1
            for t, h, j in reversed(log):
                self.assign[t] = h
                self.acol[t] = j
            for h in ends:
                self.load[h] -= 1
            S += 1
            if S > self.r:
                raise AssertionError("no wipe-out detected but S > r")
        self._raise_to(S)
        return self._reorder(log)

    def _ssp(self, t0, S, log, ends):
        """One shortest augmenting path from unassigned type t0 at capacity S (Dijkstra)."""
        pi_t, pi_g = self.pi_t, self.pi_g
        dist_t = {t0: 0}
        dist_g = {}
        pred_g = {}  # group -> (type, column) that reached it
        settled_t, settled_g = {}, {}
        heap = [(0, 0, t0)]  # (dist, kind 0 type / 1 group, node)
        best_end, D = -1, None
        while heap:
            d, kind, v = heapq.heappop(heap)
            if D is not None and d >= D:
                break
            if kind == 0:
                if v in settled_t:
                    continue
                settled_t[v] = d
                pv = pi_t.get(v, 0)
                for k in range(self.hptr[v], self.hptr[v + 1]):
                    h = self.hgrp[k]
                    if not self.alive[h] or h == self.assign[v] or h in settled_g:
                        continue
                    nd = d + self._cost(h, self.hcol[k], S) + pv - pi_g.get(h, 0)
                    if nd < dist_g.get(h, 1 << 62):
                        dist_g[h] = nd
                        pred_g[h] = (v, self.hcol[k])
                        heapq.heappush(heap, (nd, 1, h))
            else:
                if v in settled_g:
                    continue
                settled_g[v] = d
                pv = pi_g.get(v, 0)
                if self.load[v] < S:
                    nd = d + pv  # arc to the sink, sink potential 0
                    if D is None or nd < D:
                        D, best_end = nd, v
                for j in range(self.r):
                    t = self.place[v, j]
                    if self.assign[t] != v or t in settled_t:
                        continue
                    nd = d - self._cost(v, j, S) + pv - pi_t.get(t, 0)
                    if nd < dist_t.get(t, 1 << 62):
                        dist_t[t] = nd
                        heapq.heappush(heap, (nd, 0, t))
        if best_end < 0:
            return False
        for v, d in settled_t.items():
            if d < D:
                pi_t[v] = pi_t.get(v, 0) + d - D
        for v, d in settled_g.items():
            if d < D:
                pi_g[v] = pi_g.get(v, 0) + d - D
        h = best_end
        self.load[h] += 1
        ends.append(h)
        while True:
            t, j = pred_g[h]
            prev_h, prev_j = self.assign[t], self.acol[t]
            log.append((t, prev_h, prev_j))
            self.assign[t] = h
            self.acol[t] = j
            if t == t0:
                break
            h = prev_h
        return True

    def _raise_to(self, S):
        for d in range(self.S, S):
            cols = self.stack[:, d]
            types = self.place[np.arange(self.n), cols]
            np.add.at(self.cover, types[self.alive.astype(bool)], 1)
        self.S = S

    def _reorder(self, log):
        """Bring assigned shards below the top S into it by swaps; return (moves, cost)."""
        S = self.S
        moves = cost = 0
        done = set()
        for t, _, _ in log:
            g = self.assign[t]
            if g in done:
                continue
            done.add(g)
            for j in range(self.r):
                t2 = self.place[g, j]
                d = self.depth[g, j]
                if self.assign[t2] != g or d < S:
                    continue
                # swap with the deepest top-S shard this group does not contribute
                p = S - 1
                while self.assign[self.place[g, self.stack[g, p]]] == g:
                    p -= 1
                jp = self.stack[g, p]
                self.stack[g, p], self.stack[g, d] = j, jp
                self.depth[g, j], self.depth[g, jp] = p, d
                self.cover[t2] += 1
                self.cover[self.place[g, jp]] -= 1
                moves += 1
                cost += d - S + 1
        return moves, cost


def _load_core():
    return _PyCore


class Rectlr:
    """The RECTLR controller for one stacked layout, kept incrementally along failures.

    Parameters
    ----------
    layout : StackedLayout
        The placement of shard types on group stacks.

    Attributes
    ----------
    layout : StackedLayout
    alive : ndarray of bool, read-only view
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
    group in that state raises RuntimeError. Memory is O(N r). A failure handled by
    Phase 0 costs O(r + S r); a reordering costs the Dijkstra searches of the lost
    types (typically a small neighbourhood; O((N r) log N) each in the worst case).

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

    def __init__(self, layout):
        if not isinstance(layout, StackedLayout):
            raise TypeError(f"layout must be a StackedLayout, got {type(layout).__name__}")
        self.layout = layout
        hptr, hgrp, hcol = layout.holders()
        self._core = _load_core()(
            np.ascontiguousarray(layout.placement, dtype=np.int64), hptr.copy(), hgrp.copy(), hcol.copy()
        )
        self.restart()

    # ------------------------------------------------------------------ state
    def restart(self) -> None:
        """Global restart: all groups back, initial stacks, S back to 1.

        (For a custom placement whose depth-0 column does not cover every type, the least
        S that does.)
        """
        self._core.reset()
        self._n_failed = 0
        self._wiped = False

    @property
    def alive(self) -> np.ndarray:
        view = self._core.alive.view(np.bool_)
        view.flags.writeable = False
        return view

    @property
    def stack_depth(self) -> int:
        return int(self._core.S)

    @property
    def stacks(self) -> np.ndarray:
        c = self._core
        return np.take_along_axis(c.place, c.stack, axis=1)

    @property
    def assignment(self) -> np.ndarray:
        return self._core.assign.copy()

    @property
    def n_failed(self) -> int:
        return self._n_failed

    @property
    def wiped_out(self) -> bool:
        return self._wiped

    def _check_group(self, group):
        g = as_int(group, "group", min_value=0, max_value=self.layout.n_groups - 1)
        if self._wiped:
            raise RuntimeError("the controller is wiped out; call restart() before failing more groups")
        if not self._core.alive[g]:
            raise ValueError(f"group must be alive to fail, group {g} has already failed")
        return g

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
        return self._fail(self._check_group(group))

    def _fail(self, g):
        kind, s_old, moves, cost, rows = self._core.fail(g)
        self._n_failed += 1
        if kind == "wipeout":
            self._wiped = True
            lost = np.flatnonzero(self._core.assign == -1)
            patch = PatchPlan(np.full(lost.size, -1, dtype=np.int64), lost.astype(np.int64), np.zeros(lost.size, dtype=bool))
            return Decision(g, kind, s_old, s_old, 0, 0, patch)
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
        patch = PatchPlan(arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].astype(bool))
        return Decision(g, kind, int(self._core.S), s_old, moves, cost, patch)

    def fail_many(self, groups) -> list:
        """Fail groups in order; stop at a wipe-out.

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
        """
        n = self.layout.n_groups
        arr = as_int_array(groups, "groups", min_value=0, max_value=n - 1)
        if self._wiped and arr.size:
            raise RuntimeError("the controller is wiped out; call restart() before failing more groups")
        if np.unique(arr).size != arr.size:
            raise ValueError("groups must be distinct, got a repeated group")
        dead = arr[self._core.alive[arr] == 0]
        if dead.size:
            raise ValueError(f"groups must be alive to fail, group {dead[0]} has already failed")
        out = []
        for g in arr.tolist():
            d = self._fail(g)
            out.append(d)
            if d.kind == "wipeout":
                break
        return out

    def __repr__(self):
        state = "wiped out" if self._wiped else f"S={self.stack_depth}"
        return f"Rectlr(n_groups={self.layout.n_groups}, redundancy={self.layout.redundancy}, failed={self._n_failed}, {state})"
