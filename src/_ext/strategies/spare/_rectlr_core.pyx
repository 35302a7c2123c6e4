# cython: language_level=3
"""RECTLR kernel: incremental coverage counts + successive shortest augmenting paths.

The model and the policy (what a decision means) live in ``spare_core.strategies.spare.rectlr``; this
module only keeps the state of one controller and updates it on a failure. Every
entry point is called with validated arguments (group in range and alive, controller
not wiped out); nothing here allocates after construction.

Graph. Left vertices are the N shard types, right vertices the N groups; type t has an
arc to each alive holder group h (column j of h), of cost
``max(0, depth[h, j] - S + 1)`` at capacity S per group. The contributed assignment is
a b-matching (``assign``/``load``). Dijkstra runs on the residual graph with node
potentials ``pi`` (types 0..N-1, groups N..2N-1, the sink has potential 0): forward arcs
type -> group not matched, backward arcs group -> contributed type (cost negated),
and group -> sink while ``load < S``.

Invariants between failures: every contributed shard sits within its group's top S
(so every matched arc costs 0 and pi = 0 is a valid potential); ``cover[t]`` counts alive
groups holding t within their top S; ``nhold[t]`` alive holders of t.

Sentinels: -1 in ``assign`` (no contributor), in ``hpos`` (not in the heap); ``seen`` /
``done`` hold the stamp of the search that last reached / settled a node.

Buffer sizes: O(N r) in all; log arrays hold N r + 1 entries (at most S <= r augmenting
paths of at most N types each per attempt after a failure; reset() of a custom placement,
which may queue more types, undoes from an O(N) snapshot instead).
"""
import numpy as np

from _types cimport int32_t, int64_t, uint8_t, intp_t
from _rectlr_core cimport (
    K_FIXED, K_REORDERED, K_WIPEOUT, K_PENDING, K_REJOINED, OUT_KIND, OUT_S_OLD, OUT_MOVES, OUT_COST,
    OUT_N_PATCH, OUT_LAYERS, OUT_S_AFTER, N_OUT,
)
from _heap cimport heap_sift_up, heap_push, heap_pop

cdef int64_t INF = 1 << 62

# The enums of _rectlr_core.pxd for Python callers (spare_core.strategies.spare.rectlr reads them from here).
CONSTANTS = {
    "K_FIXED": K_FIXED, "K_REORDERED": K_REORDERED, "K_WIPEOUT": K_WIPEOUT, "K_PENDING": K_PENDING,
    "K_REJOINED": K_REJOINED, "OUT_KIND": OUT_KIND, "OUT_S_OLD": OUT_S_OLD, "OUT_MOVES": OUT_MOVES, "OUT_COST": OUT_COST,
    "OUT_N_PATCH": OUT_N_PATCH, "OUT_LAYERS": OUT_LAYERS, "OUT_S_AFTER": OUT_S_AFTER, "N_OUT": N_OUT,
}


cdef class RectlrCore:
    """Controller state for an (N, r) placement; see the module docstring.

    Parameters
    ----------
    place : int32 array (N, r), IN
    hptr : int64 array (N + 1,), IN
    hgrp, hcol : int32 arrays, IN
        CSR holder lists per type (group, column).
    """
    # --- problem (IN, fixed) -----------------------------------------------------------
    cdef readonly intp_t n, r
    cdef int32_t[:, ::1] place        # place[g, j]: shard type in column j of group g
    cdef int64_t[::1] hptr            # CSR holders of type t: hptr[t]..hptr[t+1]
    cdef int32_t[::1] hgrp, hcol      # holder group and its column
    # --- state (IN-OUT, kept across failures) ------------------------------------------
    cdef int32_t[:, ::1] stack        # stack[g, d]: column at depth d (current order)
    cdef int32_t[:, ::1] depth        # depth[g, j]: inverse of stack
    cdef uint8_t[::1] alive
    cdef int32_t[::1] nhold           # alive holders per type (0 <=> wipe-out)
    cdef int32_t[::1] cover           # alive groups holding the type within their top S
    cdef int32_t[::1] assign, acol    # contributing group per type (-1 none), its column
    cdef int32_t[::1] load            # types contributed per group (<= S)
    cdef readonly intp_t S
    # --- scratch (allocated once) ------------------------------------------------------
    cdef int64_t[::1] dist, pi
    cdef int32_t[::1] seen, done, heap, hpos, pred_t, pred_c, settled, pi_list, mark
    cdef int32_t[::1] lost, log_t, log_h, log_c, ends, snap_assign, snap_acol, snap_load
    cdef int32_t[::1] down_buf        # the groups still down when one rejoins
    cdef int32_t stamp, mark_stamp
    cdef intp_t heap_n, n_pi, n_lost, n_alive
    cdef readonly object place_arr, stack_arr, alive_arr, assign_arr, load_arr

    def __init__(self, place, hptr, hgrp, hcol):
        n, r = place.shape
        self.n, self.r = n, r
        self.place_arr = np.array(place, dtype=np.int32, order="C")
        self.place = self.place_arr
        self.hptr = np.array(hptr, dtype=np.int64, order="C")
        self.hgrp = np.array(hgrp, dtype=np.int32, order="C")
        self.hcol = np.array(hcol, dtype=np.int32, order="C")
        self.stack_arr = np.empty((n, r), dtype=np.int32)
        self.stack = self.stack_arr
        self.depth = np.empty((n, r), dtype=np.int32)
        self.alive_arr = np.empty(n, dtype=np.uint8)
        self.alive = self.alive_arr
        self.nhold = np.empty(n, dtype=np.int32)
        self.cover = np.empty(n, dtype=np.int32)
        self.assign_arr = np.empty(n, dtype=np.int32)
        self.assign = self.assign_arr
        self.acol = np.empty(n, dtype=np.int32)
        self.load_arr = np.empty(n, dtype=np.int32)
        self.load = self.load_arr
        self.dist = np.zeros(2 * n, dtype=np.int64)
        self.pi = np.zeros(2 * n, dtype=np.int64)
        self.seen = np.zeros(2 * n, dtype=np.int32)
        self.done = np.zeros(2 * n, dtype=np.int32)
        self.heap = np.zeros(2 * n, dtype=np.int32)
        self.hpos = np.full(2 * n, -1, dtype=np.int32)
        self.pred_t = np.zeros(n, dtype=np.int32)
        self.pred_c = np.zeros(n, dtype=np.int32)
        self.settled = np.zeros(2 * n, dtype=np.int32)
        self.pi_list = np.zeros(2 * n, dtype=np.int32)
        self.mark = np.zeros(2 * n, dtype=np.int32)
        self.lost = np.zeros(n, dtype=np.int32)
        self.log_t = np.zeros(n * r + 1, dtype=np.int32)
        self.log_h = np.zeros(n * r + 1, dtype=np.int32)
        self.log_c = np.zeros(n * r + 1, dtype=np.int32)
        self.ends = np.zeros(r + 1, dtype=np.int32)
        self.snap_assign = np.zeros(n, dtype=np.int32)
        self.snap_acol = np.zeros(n, dtype=np.int32)
        self.snap_load = np.zeros(n, dtype=np.int32)
        self.down_buf = np.zeros(n, dtype=np.int32)
        self.stamp = 0
        self.mark_stamp = 0
        self.heap_n = 0
        self.n_pi = 0
        self.S = 1

    # ----------------------------------------------------------------- public wrappers
    def reset(self):
        """Restore the initial state (all alive, initial stacks, least S >= 1)."""
        cdef int rc
        with nogil:
            rc = self.reset_state()
        if rc < 0:
            raise RuntimeError(f"rectlr kernel: internal error {rc} in reset")

    def fail(self, intp_t g, int32_t[::1] pg, int32_t[::1] pt, uint8_t[::1] px, int64_t[::1] out):
        """Fail alive group g (caller-validated). OUT: patch rows in pg/pt/px (length >= r),
        out[:N_OUT - 1] (slots OUT_* of _rectlr_core.pxd)."""
        cdef int rc
        self._check_call(g, pg, pt, px, out.shape[0], 1)
        with nogil:
            rc = self.fail_one(g, &pg[0], &pt[0], &px[0], &out[0])
        if rc < 0:
            raise RuntimeError(f"rectlr kernel: internal error {rc} failing group {g}")

    def phase0(self, intp_t g, int32_t[::1] pg, int32_t[::1] pt, uint8_t[::1] px, int64_t[::1] out):
        """First half of fail(): Phase 0 only. out[OUT_KIND] == K_PENDING means the uncovered
        types wait for finish(S*) with the same buffers (Phase 1 decided by the caller)."""
        cdef int rc
        self._check_call(g, pg, pt, px, out.shape[0], 1)
        with nogil:
            rc = self._phase0(g, &pg[0], &pt[0], &px[0], &out[0])
        if rc < 0:
            raise RuntimeError(f"rectlr kernel: internal error {rc} failing group {g}")

    def finish(self, intp_t s_star, int32_t[::1] pg, int32_t[::1] pt, uint8_t[::1] px, int64_t[::1] out):
        """Second half of fail() after phase0() returned K_PENDING: Phase 2 at exactly S*
        (the caller's Phase 1 result); raises RuntimeError if S* is infeasible."""
        cdef int rc
        if pg.shape[0] < self.r or pt.shape[0] < self.r or px.shape[0] < self.r or out.shape[0] < N_OUT:
            raise ValueError(f"rectlr kernel: patch buffers need r entries and out {N_OUT}")
        if out[OUT_KIND] != K_PENDING or not (self.S <= s_star <= self.r):
            raise RuntimeError(f"rectlr kernel: finish({s_star}) without a pending phase0 at S={self.S}")
        with nogil:
            rc = self._finish(&pg[0], &pt[0], &px[0], &out[0], s_star, s_star)
        if rc < 0:
            raise RuntimeError(f"rectlr kernel: no complete assignment at S*={s_star} (error {rc})")

    def fail_many(self, int32_t[::1] groups, int32_t[::1] pg, int32_t[::1] pt, uint8_t[::1] px,
                  int64_t[:, ::1] out, int64_t[::1] pptr):
        """Fail groups in order, stopping after a wipe-out; returns the number failed.

        OUT: out[i, :N_OUT] (slots OUT_* of _rectlr_core.pxd) and the
        patch rows of failure i at pptr[i]..pptr[i+1] of pg/pt/px (caller sizes them
        len(groups) * r)."""
        cdef intp_t i, m = groups.shape[0], done_n = 0
        cdef int rc = 0
        if m == 0:
            return 0
        if (pg.shape[0] < m * self.r or pt.shape[0] < m * self.r or px.shape[0] < m * self.r
                or out.shape[0] < m or out.shape[1] < N_OUT or pptr.shape[0] < m + 1):
            raise ValueError("rectlr kernel: buffers must hold len(groups) * r patch rows")
        pptr[0] = 0
        with nogil:
            for i in range(m):
                # a safety net only: the Python layer validates the whole sequence first
                if groups[i] < 0 or groups[i] >= self.n or not self.alive[groups[i]]:
                    rc = -4
                    break
                rc = self.fail_one(groups[i], &pg[pptr[i]], &pt[pptr[i]], &px[pptr[i]], &out[i, 0])
                if rc < 0:
                    break
                out[i, OUT_S_AFTER] = self.S
                pptr[i + 1] = pptr[i] + out[i, OUT_N_PATCH]
                done_n = i + 1
                if out[i, OUT_KIND] == K_WIPEOUT:
                    break
        if rc == -4:
            raise ValueError(f"rectlr kernel: group {groups[done_n]} is out of range or dead "
                             f"({done_n} earlier groups were failed)")
        if rc < 0:
            raise RuntimeError(f"rectlr kernel: internal error {rc}")
        return done_n

    def rejoin(self, intp_t g, int32_t[::1] pg, int32_t[::1] pt, uint8_t[::1] px, int64_t[::1] out):
        """Dead group g is back: reset, then fail again every other group still down (in index
        order); returns the new S, the least at which those can be masked. pg/pt/px/out are
        scratch as for fail() (the re-failures' patch plans are not kept)."""
        cdef int rc = 0
        self._check_call(g, pg, pt, px, out.shape[0], 0)
        if self.alive[g]:
            raise ValueError(f"rectlr kernel: group {g} is alive, it cannot rejoin")
        with nogil:
            rc = self._rejoin(g, &pg[0], &pt[0], &px[0], &out[0])
        if rc < 0:
            raise RuntimeError(f"rectlr kernel: internal error {rc} when group {g} rejoined")
        return self.S

    def events(self, const int32_t[::1] groups, const uint8_t[::1] back, int32_t[::1] pg, int32_t[::1] pt,
               uint8_t[::1] px, int64_t[:, ::1] out):
        """Failures (``back[i] == 0``) and rejoins (``back[i] == 1``) in order, in one call,
        stopping after a wipe-out; returns the number processed.

        IN groups int32[m], back uint8[m]; scratch pg/pt/px of r entries (no patch plan is
        kept: the simulator reads the scalars); OUT out[i, :N_OUT]: a failure's row as
        fail_many() writes it, a rejoin's with kind K_REJOINED, S_OLD and S_AFTER the depth
        before and after, the rest 0. A failure of a dead group or a rejoin of an alive one
        stops the call (ValueError; the events before it stay applied): the Python layer
        validates the whole sequence first."""
        cdef intp_t i, m = groups.shape[0], done_n = 0
        cdef int rc = 0
        cdef int32_t g
        if back.shape[0] != m or out.shape[0] < m or out.shape[1] < N_OUT:
            raise ValueError("rectlr kernel: events needs len(back) == len(groups) and out rows for each")
        if pg.shape[0] < self.r or pt.shape[0] < self.r or px.shape[0] < self.r:
            raise ValueError(f"rectlr kernel: patch buffers need r entries")
        with nogil:
            for i in range(m):
                g = groups[i]
                if g < 0 or g >= self.n or (back[i] == 0) != (self.alive[g] != 0):
                    rc = -4
                    break
                if back[i] == 0:
                    rc = self.fail_one(g, &pg[0], &pt[0], &px[0], &out[i, 0])
                    if rc < 0:
                        break
                    out[i, OUT_S_AFTER] = self.S
                else:
                    rc = self._rejoin(g, &pg[0], &pt[0], &px[0], &out[i, 0])
                    if rc < 0:
                        break
                done_n = i + 1
                if back[i] == 0 and out[i, OUT_KIND] == K_WIPEOUT:
                    break
        if rc == -4:
            raise ValueError(f"rectlr kernel: event {done_n} (group {groups[done_n]}, "
                             f"{'rejoin' if back[done_n] else 'failure'}) does not match the group's state")
        if rc < 0:
            raise RuntimeError(f"rectlr kernel: internal error {rc}")
        return done_n

    cdef int _rejoin(self, intp_t g, int32_t* pg, int32_t* pt, uint8_t* px, int64_t* row) noexcept nogil:
        """Dead group g back: reset and fail again the other groups still down (index order);
        ``row`` is scratch for the re-failures, then the rejoin's decision row."""
        cdef intp_t h, m = 0, i = 0, j
        cdef int rc
        cdef int64_t s_old = self.S
        for h in range(self.n):
            if not self.alive[h] and h != g:
                self.down_buf[m] = <int32_t>h
                m += 1
        rc = self.reset_state()
        while rc >= 0 and i < m:
            rc = self.fail_one(self.down_buf[i], pg, pt, px, row)
            if rc >= 0 and row[OUT_KIND] == K_WIPEOUT:
                rc = -5  # fewer groups down than before cannot wipe out
            i += 1
        if rc < 0:
            return rc
        for j in range(N_OUT):
            row[j] = 0
        row[OUT_KIND] = K_REJOINED
        row[OUT_S_OLD] = s_old
        row[OUT_S_AFTER] = self.S
        return 0

    def _check_call(self, intp_t g, int32_t[::1] pg, int32_t[::1] pt, uint8_t[::1] px,
                    intp_t n_out, int alive_needed):
        """Safety net for direct callers of the kernel (spare_core.strategies.spare.rectlr validates first)."""
        if not (0 <= g < self.n) or (alive_needed and not self.alive[g]):
            raise ValueError(f"rectlr kernel: group {g} is out of range or dead")
        if pg.shape[0] < self.r or pt.shape[0] < self.r or px.shape[0] < self.r or n_out < N_OUT:
            raise ValueError(f"rectlr kernel: patch buffers need r entries and out {N_OUT}")

    # ----------------------------------------------------------------- state updates
    cdef int reset_state(self) noexcept nogil:
        cdef intp_t g, j, t, n = self.n, r = self.r, m = 0
        if self.stamp > (1 << 30):  # keep the search stamps far from int32 overflow
            self.seen[:] = 0
            self.done[:] = 0
            self.mark[:] = 0
            self.stamp = 0
            self.mark_stamp = 0
        for g in range(n):
            for j in range(r):
                self.stack[g, j] = <int32_t>j
                self.depth[g, j] = <int32_t>j
            self.alive[g] = 1
            self.load[g] = 0
        for t in range(n):
            self.nhold[t] = <int32_t>(self.hptr[t + 1] - self.hptr[t])
            self.cover[t] = 0
            self.assign[t] = -1
        self.S = 1
        self.n_alive = n
        for g in range(n):
            t = self.place[g, 0]
            self.cover[t] += 1
            if self.assign[t] < 0:
                self.assign[t] = <int32_t>g
                self.acol[t] = 0
                self.load[g] += 1
        for t in range(n):
            if self.assign[t] < 0:
                self.lost[m] = <int32_t>t
                m += 1
        return self._repair(m, NULL, 1, r)

    cdef int fail_one(self, intp_t g, int32_t* pg, int32_t* pt, uint8_t* px, int64_t* out) noexcept nogil:
        cdef int rc = self._phase0(g, pg, pt, px, out)
        if rc < 0 or out[OUT_KIND] != K_PENDING:
            return rc
        return self._finish(pg, pt, px, out, self.S, self.r)

    cdef int _phase0(self, intp_t g, int32_t* pg, int32_t* pt, uint8_t* px, int64_t* out) noexcept nogil:
        """Kill g; hand its contributions to survivors that already compute them. OUT: the
        patch rows (uncovered ones flagged px = 1, queued in lost[0..n_lost)), out[:N_OUT - 1]."""
        cdef intp_t j, d, t, i, k, r = self.r, S = self.S, npatch = 0, nunc = 0
        cdef int32_t h
        cdef bint wiped = False
        self.alive[g] = 0
        self.n_alive -= 1
        for j in range(r):
            t = self.place[g, j]
            self.nhold[t] -= 1
            if self.nhold[t] == 0:
                wiped = True
            if self.depth[g, j] < S:
                self.cover[t] -= 1
        for d in range(S):
            t = self.place[g, self.stack[g, d]]
            if self.assign[t] == g:
                pt[npatch] = <int32_t>t
                npatch += 1
        self.load[g] = 0
        out[OUT_S_OLD] = S
        out[OUT_MOVES] = 0
        out[OUT_COST] = 0
        out[OUT_N_PATCH] = npatch
        out[OUT_LAYERS] = 0
        self.n_lost = 0
        if wiped:
            for i in range(npatch):
                self.assign[pt[i]] = -1
                pg[i] = -1
                px[i] = 0
            out[OUT_KIND] = K_WIPEOUT
            return 0
        for i in range(npatch):
            t = pt[i]
            if self.cover[t] > 0:
                # Phase 0: a survivor already computes t within its top S
                h = -1
                for k in range(self.hptr[t], self.hptr[t + 1]):
                    if self.alive[self.hgrp[k]] and self.depth[self.hgrp[k], self.hcol[k]] < S:
                        h = self.hgrp[k]
                        self.acol[t] = self.hcol[k]
                        break
                if h < 0:
                    return -2
                self.assign[t] = h
                self.load[h] += 1
                pg[i] = h
                px[i] = 0
            else:
                self.assign[t] = -1
                self.lost[nunc] = <int32_t>t
                nunc += 1
                px[i] = 1
        self.n_lost = nunc
        out[OUT_KIND] = K_PENDING if nunc else K_FIXED
        return 0

    cdef int _finish(self, int32_t* pg, int32_t* pt, uint8_t* px, int64_t* out,
                     intp_t s_from, intp_t s_stop) noexcept nogil:
        """Phases 1 + 2 for the queued lost types, S* scanned in [s_from, s_stop]."""
        cdef intp_t i, i2, cnt, best = 0, npatch = out[OUT_N_PATCH]
        cdef int64_t mc[2]
        cdef int rc = self._repair(self.n_lost, mc, s_from, s_stop)
        if rc < 0:
            return rc
        self.n_lost = 0
        out[OUT_KIND] = K_REORDERED
        out[OUT_MOVES] = mc[0]
        out[OUT_COST] = mc[1]
        # new contributors of the uncovered types compute them as extra work this step
        for i in range(npatch):
            if px[i]:
                pg[i] = self.assign[pt[i]]
        for i in range(npatch):
            if not px[i]:
                continue
            cnt = 0
            for i2 in range(npatch):
                if px[i2] and pg[i2] == pg[i]:
                    cnt += 1
            if cnt > best:
                best = cnt
        out[OUT_LAYERS] = best
        return 0

    # ----------------------------------------------------------------- phases 1 and 2
    cdef int _repair(self, intp_t m, int64_t* mc, intp_t s_from, intp_t s_stop) noexcept nogil:
        """Insert the unassigned types lost[0..m) at the least feasible S* in [s_from, s_stop]
        (s_from >= S); OUT mc = [moves, cost]. Returns -3 if none is feasible (state as
        before the call)."""
        cdef intp_t S = s_from, i, nlog = 0, nends = 0, q
        cdef int ok
        # A failure queues at most S <= r lost types, whose paths fit the undo log (r N
        # entries). Only reset() of a custom placement can queue more: it undoes an attempt
        # from an O(N) snapshot instead and reorders every group.
        cdef bint snap = m > self.r
        if m == 0:
            if mc != NULL:
                mc[0] = 0
                mc[1] = 0
            return 0
        # counting bound c(k): N types need N slots on the survivors (no search needed)
        while S < s_stop and S * self.n_alive < self.n:
            S += 1
        while True:
            self._clear_potentials()
            nlog = 0
            nends = 0
            ok = 1
            if snap:
                self.snap_assign[:] = self.assign
                self.snap_acol[:] = self.acol
                self.snap_load[:] = self.load
            for i in range(m):
                if not self._ssp(self.lost[i], S, &nlog, &nends, not snap):
                    ok = 0
                    break
            if ok:
                break
            # infeasible at S (costs change with S): undo this attempt, retry at S + 1
            if snap:
                self.assign[:] = self.snap_assign
                self.acol[:] = self.snap_acol
                self.load[:] = self.snap_load
            q = nlog - 1
            while q >= 0:
                self.assign[self.log_t[q]] = self.log_h[q]
                self.acol[self.log_t[q]] = self.log_c[q]
                q -= 1
            for i in range(nends):
                self.load[self.ends[i]] -= 1
            S += 1
            if S > s_stop:
                return -3
        self._clear_potentials()
        self._raise_to(S)
        self._reorder(-1 if snap else nlog, mc)
        return 0

    cdef void _clear_potentials(self) noexcept nogil:
        cdef intp_t i
        for i in range(self.n_pi):
            self.pi[self.pi_list[i]] = 0
        self.n_pi = 0
        self.mark_stamp += 1

    # the shared indexed min-heap (_heap.pxd) on dist[], positions in hpos[] (-1: not in
    # the heap), nodes 0..2N-1
    cdef inline void _push_or_decrease(self, int32_t v) noexcept nogil:
        if self.hpos[v] < 0:
            heap_push(&self.heap[0], &self.heap_n, v, <const char*>&self.dist[0], sizeof(int64_t),
                      <char*>&self.hpos[0], sizeof(int32_t))
        else:
            heap_sift_up(&self.heap[0], self.hpos[v], <const char*>&self.dist[0], sizeof(int64_t),
                         <char*>&self.hpos[0], sizeof(int32_t))

    cdef inline int32_t _pop(self) noexcept nogil:
        return heap_pop(&self.heap[0], &self.heap_n, <const char*>&self.dist[0], sizeof(int64_t),
                        <char*>&self.hpos[0], sizeof(int32_t), -1)

    cdef int _ssp(self, int32_t t0, intp_t S, intp_t* nlog, intp_t* nends, bint logging) noexcept nogil:
        """One shortest augmenting path from unassigned type t0 (Dijkstra); 0 if none exists."""
        cdef intp_t n = self.n, r = self.r, k, j, nset = 0, i
        cdef int32_t v, h, t, node, ph, pj, best_end = -1
        cdef int64_t d, nd, pv, D = INF, c, dd
        self.stamp += 1
        cdef int32_t st = self.stamp
        self.heap_n = 0
        self.dist[t0] = 0
        self.seen[t0] = st
        self._push_or_decrease(t0)
        while self.heap_n > 0:
            v = self.heap[0]
            d = self.dist[v]
            if d >= D:
                break
            self._pop()
            self.done[v] = st
            self.settled[nset] = v
            nset += 1
            pv = self.pi[v]
            if v < n:
                for k in range(self.hptr[v], self.hptr[v + 1]):
                    h = self.hgrp[k]
                    node = <int32_t>(n + h)
                    if not self.alive[h] or h == self.assign[v] or self.done[node] == st:
                        continue
                    dd = self.depth[h, self.hcol[k]]
                    c = dd - S + 1 if dd >= S else 0
                    nd = d + c + pv - self.pi[node]
                    if self.seen[node] != st or nd < self.dist[node]:
                        self.seen[node] = st
                        self.dist[node] = nd
                        self.pred_t[h] = v
                        self.pred_c[h] = self.hcol[k]
                        self._push_or_decrease(node)
            else:
                h = <int32_t>(v - n)
                if self.load[h] < S and d + pv < D:
                    D = d + pv  # arc to the sink (potential 0)
                    best_end = h
                for j in range(r):
                    t = self.place[h, j]
                    if self.assign[t] != h or self.done[t] == st:
                        continue
                    dd = self.depth[h, j]
                    c = dd - S + 1 if dd >= S else 0
                    nd = d - c + pv - self.pi[t]
                    if self.seen[t] != st or nd < self.dist[t]:
                        self.seen[t] = st
                        self.dist[t] = nd
                        self._push_or_decrease(t)
        for i in range(self.heap_n):
            self.hpos[self.heap[i]] = -1
        self.heap_n = 0
        if best_end < 0:
            return 0
        # potentials: pi += min(dist, D) - D keeps every reduced cost >= 0 (only settled
        # nodes with dist < D change)
        for i in range(nset):
            v = self.settled[i]
            if self.dist[v] < D:
                if self.mark[v] != self.mark_stamp:
                    self.mark[v] = self.mark_stamp
                    self.pi_list[self.n_pi] = v
                    self.n_pi += 1
                self.pi[v] += self.dist[v] - D
        h = best_end
        self.load[h] += 1
        if logging:
            self.ends[nends[0]] = h
            nends[0] += 1
        while True:
            t = self.pred_t[h]
            j = self.pred_c[h]
            ph = self.assign[t]
            pj = self.acol[t]
            if logging:
                self.log_t[nlog[0]] = t
                self.log_h[nlog[0]] = ph
                self.log_c[nlog[0]] = pj
                nlog[0] += 1
            self.assign[t] = h
            self.acol[t] = <int32_t>j
            if t == t0:
                break
            h = ph
        return 1

    cdef void _raise_to(self, intp_t S) noexcept nogil:
        cdef intp_t d, g
        for d in range(self.S, S):
            for g in range(self.n):
                if self.alive[g]:
                    self.cover[self.place[g, self.stack[g, d]]] += 1
        self.S = S

    cdef void _reorder(self, intp_t nlog, int64_t* mc) noexcept nogil:
        """Swap contributed shards below the top S into it, in the groups that gained a type
        in log[0..nlog) (nlog = -1: every alive group); OUT mc = [moves, cost]."""
        cdef intp_t i, j, d, p, S = self.S, moves = 0, cost = 0, r = self.r
        cdef intp_t n_scan = self.n if nlog < 0 else nlog
        cdef int32_t g, jp
        self.mark_stamp += 1  # reuse mark[] on group nodes N..2N-1 as "already reordered"
        for i in range(n_scan):
            if nlog < 0:
                g = <int32_t>i
                if not self.alive[g]:
                    continue
            else:
                g = self.assign[self.log_t[i]]
            if self.mark[self.n + g] == self.mark_stamp:
                continue
            self.mark[self.n + g] = self.mark_stamp
            for j in range(r):
                d = self.depth[g, j]
                if d < S or self.assign[self.place[g, j]] != g:
                    continue
                p = S - 1
                while self.assign[self.place[g, self.stack[g, p]]] == g:
                    p -= 1
                jp = self.stack[g, p]
                self.stack[g, p] = <int32_t>j
                self.stack[g, d] = jp
                self.depth[g, j] = <int32_t>p
                self.depth[g, jp] = <int32_t>d
                self.cover[self.place[g, j]] += 1
                self.cover[self.place[g, jp]] -= 1
                moves += 1
                cost += d - S + 1
        if mc != NULL:
            mc[0] = moves
            mc[1] = cost
