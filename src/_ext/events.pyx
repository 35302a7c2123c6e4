# cython: language_level=3
"""Failure event engine kernel: calendar queue over per-entity slots, FIFO for fixed delays.

Policy-free: the kernel applies the mechanical effect of each event (a failure kills a unit
and schedules its repair; a repair revives it and schedules its next failure; sources and
timers reschedule themselves) and returns to Python only when (a) an event whose kind is in
the caller's stop mask was processed, (b) ``until`` or ``max_events`` was reached, or (c) a
buffer of pre-sampled random times ran dry (the wrapper refills it from the named numpy
stream and calls again). The whole loop runs without the GIL.

Queue
-----
Each slot (unit, system source, trace, timer) has at most one pending event, kept in a
calendar queue (R. Brown, "Calendar queues", CACM 31(10), 1988) of singly linked bucket
lists: O(1) insert, amortised O(1) pop when the bucket width matches the event density.
Repairs of fixed duration complete in the order they were scheduled, so they need no
priority queue at all: they sit in a FIFO ring, merged with the calendar by (t, seq).
Ties in time are broken by the scheduling sequence number ``seq`` everywhere.
"""
from libc.stdlib cimport malloc, calloc, free

import numpy as np

from _types cimport float64_t, int32_t, int64_t, uint8_t, intp_t
from events cimport (
    Node, Calendar, EV_FAILURE, EV_REPAIR, EV_SYSTEM, EV_TRACE, EV_TIMER, ST_STOP, ST_UNTIL,
    ST_EMPTY, ST_MAX, ST_NEED_LIFE, ST_NEED_REPAIR, ST_NEED_SYS, ST_NEED_VICTIM, ST_STALL,
)

cdef float64_t BK_MAX = 4.0e18
cdef float64_t INF = float("inf")


# ---------------------------------------------------------------------------------------
# calendar queue
# ---------------------------------------------------------------------------------------
cdef inline int64_t cal_bucket(Calendar* c, float64_t t) noexcept nogil:
    """Absolute bucket number of time t (monotone non-decreasing in t; clamped far out)."""
    cdef float64_t x = t * c.inv_w
    if x >= BK_MAX:
        return <int64_t>BK_MAX
    return <int64_t>x


cdef inline bint _before(float64_t t1, int64_t s1, float64_t t2, int64_t s2) noexcept nogil:
    return t1 < t2 or (t1 == t2 and s1 < s2)


cdef inline void cal_insert(Calendar* c, int32_t slot, float64_t t, int64_t seq, int32_t kind) noexcept nogil:
    """Queue `slot` at (t, seq). PRE: slot not queued, t >= 0 and finite."""
    cdef Node* nd = &c.nodes[slot]
    cdef int64_t bk = cal_bucket(c, t)
    cdef int64_t b = bk & c.mask
    nd.t = t
    nd.seq = seq
    nd.kind = kind
    nd.next = c.head[b]
    c.head[b] = slot
    c.queued[slot] = 1
    c.count += 1
    if bk < c.cur:
        c.cur = bk
    # keep the cached minimum valid: the new entry precedes it in its list, or beats it
    if c.min_slot != -1:
        if nd.next == c.min_slot and c.min_prev == -1:
            c.min_prev = slot
        if _before(t, seq, c.nodes[c.min_slot].t, c.nodes[c.min_slot].seq):
            c.min_slot = slot
            c.min_prev = -1


cdef int32_t cal_min(Calendar* c, int32_t* prev) noexcept nogil:
    """Slot of the earliest (t, seq) entry, -1 if empty; `prev` OUT: its predecessor in the
    bucket list (-1 = list head). Advances `cur` past empty buckets (keeps the invariant)."""
    cdef intp_t nb = c.mask + 1, i
    cdef int32_t s, p, best, bestp
    cdef Node* nd
    cdef Node* nodes = c.nodes
    if c.min_slot != -1:
        prev[0] = c.min_prev
        return c.min_slot
    if c.count == 0:
        return -1
    for i in range(nb):
        s = c.head[c.cur & c.mask]
        p = -1
        best = -1
        bestp = -1
        while s != -1:
            nd = &nodes[s]
            if cal_bucket(c, nd.t) <= c.cur:
                if best == -1 or _before(nd.t, nd.seq, nodes[best].t, nodes[best].seq):
                    best = s
                    bestp = p
            p = s
            s = nd.next
        if best != -1:
            prev[0] = bestp
            c.min_slot = best
            c.min_prev = bestp
            return best
        c.cur += 1
    # A whole year of empty buckets: the next event is far away; find it directly.
    best = -1
    bestp = -1
    for i in range(nb):
        s = c.head[i]
        p = -1
        while s != -1:
            nd = &nodes[s]
            if best == -1 or _before(nd.t, nd.seq, nodes[best].t, nodes[best].seq):
                best = s
                bestp = p
            p = s
            s = nd.next
    c.cur = cal_bucket(c, nodes[best].t)
    prev[0] = bestp
    c.min_slot = best
    c.min_prev = bestp
    return best


cdef void cal_unlink(Calendar* c, int32_t slot, int32_t prev) noexcept nogil:
    """Remove `slot` given its predecessor `prev` (-1 = head of its bucket)."""
    if prev == -1:
        c.head[cal_bucket(c, c.nodes[slot].t) & c.mask] = c.nodes[slot].next
    else:
        c.nodes[prev].next = c.nodes[slot].next
    c.queued[slot] = 0
    c.count -= 1
    c.min_slot = -1


cdef void cal_remove(Calendar* c, int32_t slot) noexcept nogil:
    """Remove a queued `slot` wherever it is (scans its bucket list)."""
    cdef int32_t s = c.head[cal_bucket(c, c.nodes[slot].t) & c.mask]
    cdef int32_t p = -1
    while s != slot:
        p = s
        s = c.nodes[s].next
    cal_unlink(c, slot, p)


# ---------------------------------------------------------------------------------------
# engine state
# ---------------------------------------------------------------------------------------
cdef inline float64_t* _ptr(object arr):
    cdef float64_t[::1] mv = arr
    if mv.shape[0] == 0:
        return NULL
    return &mv[0]


cdef class EventCore:
    """Mechanical state of the event engine (see the module docstring).

    Constructed and driven only by :class:`spare_core.events.Engine`, which validates every
    argument; the kernel trusts its inputs (n >= 1, times finite and >= 0, buffers of
    positive finite float64, trace units in range and trace times sorted).
    """
    cdef Calendar cal
    cdef Node* nodes
    cdef int32_t* head
    cdef uint8_t* queued
    cdef readonly int32_t n, n_slots, n_timers, sys_slot, trace_slot, timer0
    cdef readonly float64_t now
    cdef int64_t seq
    # unit state: alive_list[:n_alive] are the alive units, alive_pos its inverse
    cdef uint8_t* alive
    cdef int32_t* alive_list
    cdef int32_t* alive_pos
    cdef readonly int32_t n_alive
    # fixed-delay repair FIFO ring of capacity n
    cdef float64_t* fq_t
    cdef int64_t* fq_seq
    cdef int32_t* fq_u
    cdef intp_t fq_head, fq_size
    # configuration
    cdef readonly bint renewals, system
    cdef readonly int repair_mode          # 0 none, 1 fixed (FIFO), 2 sampled (calendar)
    cdef float64_t repair_value
    cdef float64_t* timer_period           # > 0 periodic, 0 one-shot
    # pre-sampled buffers (numpy arrays kept alive by the object references)
    cdef object life_obj, rep_obj, sys_obj, vic_obj, trace_t_obj, trace_u_obj
    cdef float64_t* life
    cdef float64_t* rep
    cdef float64_t* sysb
    cdef float64_t* vic
    cdef readonly intp_t life_pos, life_len, rep_pos, rep_len, sys_pos, sys_len, vic_pos, vic_len
    cdef float64_t* trace_t
    cdef int32_t* trace_u
    cdef readonly intp_t trace_pos, trace_len
    # counters
    cdef readonly int64_t n_events, n_failures, n_repairs, n_unit_failures, n_system, n_system_missed
    cdef readonly int64_t n_trace, n_trace_missed, n_trace_skipped, n_timer
    cdef readonly int32_t peak_down
    cdef intp_t stall, stall_limit
    # last processed event
    cdef readonly float64_t last_t
    cdef readonly int32_t last_kind, last_unit
    cdef readonly int64_t last_seq

    def __cinit__(self, int32_t n, int32_t n_timers, float64_t bucket_width, intp_t n_buckets,
                  float64_t start):
        cdef intp_t i, nb = 16
        self.n = n
        self.n_timers = n_timers
        self.sys_slot = n
        self.trace_slot = n + 1
        self.timer0 = n + 2
        self.n_slots = n + 2 + n_timers
        while nb < n_buckets:
            nb *= 2
        self.nodes = <Node*>calloc(self.n_slots, sizeof(Node))
        self.head = <int32_t*>malloc(nb * sizeof(int32_t))
        self.queued = <uint8_t*>calloc(self.n_slots, sizeof(uint8_t))
        self.alive = <uint8_t*>malloc(n * sizeof(uint8_t))
        self.alive_list = <int32_t*>malloc(n * sizeof(int32_t))
        self.alive_pos = <int32_t*>malloc(n * sizeof(int32_t))
        self.fq_t = <float64_t*>malloc(n * sizeof(float64_t))
        self.fq_seq = <int64_t*>malloc(n * sizeof(int64_t))
        self.fq_u = <int32_t*>malloc(n * sizeof(int32_t))
        self.timer_period = <float64_t*>calloc(n_timers + 1, sizeof(float64_t))
        if (self.nodes == NULL or self.head == NULL or self.queued == NULL or self.alive == NULL
                or self.alive_list == NULL or self.alive_pos == NULL or self.fq_t == NULL
                or self.fq_seq == NULL or self.fq_u == NULL or self.timer_period == NULL):
            raise MemoryError("event engine: cannot allocate state for n_units=%d" % n)
        for i in range(nb):
            self.head[i] = -1
        self.cal.nodes = self.nodes
        self.cal.head = self.head
        self.cal.queued = self.queued
        self.cal.mask = nb - 1
        self.cal.inv_w = 1.0 / bucket_width
        self.cal.count = 0
        self.cal.min_slot = -1
        self.cal.cur = cal_bucket(&self.cal, start)
        self.now = start
        for i in range(n):
            self.alive[i] = 1
            self.alive_list[i] = <int32_t>i
            self.alive_pos[i] = <int32_t>i
        self.n_alive = n
        self.stall_limit = 4 * <intp_t>self.n_slots + 64
        self.last_kind = -1
        self.last_unit = -1
        self.last_t = INF

    def __dealloc__(self):
        free(self.nodes)
        free(self.head)
        free(self.queued)
        free(self.alive)
        free(self.alive_list)
        free(self.alive_pos)
        free(self.fq_t)
        free(self.fq_seq)
        free(self.fq_u)
        free(self.timer_period)

    # -- configuration (called by the wrapper before the first event) --------------------
    def configure(self, bint renewals, int repair_mode, float64_t repair_value, bint system):
        self.renewals = renewals
        self.repair_mode = repair_mode
        self.repair_value = repair_value
        self.system = system

    def set_buffer(self, str which, object arr):
        """Replace one pre-sampled buffer (float64, C-contiguous, positive finite)."""
        if which == "life":
            self.life_obj = arr
            self.life = _ptr(arr)
            self.life_pos = 0
            self.life_len = arr.shape[0]
        elif which == "repair":
            self.rep_obj = arr
            self.rep = _ptr(arr)
            self.rep_pos = 0
            self.rep_len = arr.shape[0]
        elif which == "system":
            self.sys_obj = arr
            self.sysb = _ptr(arr)
            self.sys_pos = 0
            self.sys_len = arr.shape[0]
        elif which == "victim":
            self.vic_obj = arr
            self.vic = _ptr(arr)
            self.vic_pos = 0
            self.vic_len = arr.shape[0]
        else:
            raise ValueError(f"unknown buffer {which!r}")

    def set_trace(self, object times, object units):
        cdef int32_t[::1] mu = units
        self.trace_t_obj = times
        self.trace_u_obj = units
        self.trace_t = _ptr(times)
        self.trace_u = &mu[0] if mu.shape[0] else NULL
        self.trace_len = times.shape[0]
        self.trace_pos = 0
        if self.trace_len:
            cal_insert(&self.cal, self.trace_slot, self.trace_t[0], self._next_seq(), EV_TRACE)

    def start_units(self):
        """Schedule every unit's first failure (unit order) from the lifetime buffer."""
        self._start_units(self.now)

    def start_system(self):
        """Schedule the system source's first failure from the inter-arrival buffer."""
        cal_insert(&self.cal, self.sys_slot, self.now + self.sysb[self.sys_pos], self._next_seq(), EV_SYSTEM)
        self.sys_pos += 1

    cdef int64_t _next_seq(self) noexcept nogil:
        self.seq += 1
        return self.seq - 1

    cdef void _start_units(self, float64_t t) noexcept nogil:
        cdef int32_t u
        for u in range(self.n):
            cal_insert(&self.cal, u, t + self.life[self.life_pos], self._next_seq(), EV_FAILURE)
            self.life_pos += 1

    # -- timers -------------------------------------------------------------------------
    def set_timer(self, int32_t j, float64_t first, float64_t period):
        """(Re)schedule timer j at `first` (>= now); period 0 = one-shot."""
        cdef int32_t slot = self.timer0 + j
        if self.queued[slot]:
            cal_remove(&self.cal, slot)
        self.timer_period[j] = period
        cal_insert(&self.cal, slot, first, self._next_seq(), EV_TIMER)

    def cancel_timer(self, int32_t j):
        cdef int32_t slot = self.timer0 + j
        if self.queued[slot]:
            cal_remove(&self.cal, slot)

    def timer_pending(self, int32_t j):
        cdef int32_t slot = self.timer0 + j
        return bool(self.queued[slot])

    # -- event effects ------------------------------------------------------------------
    cdef void _kill(self, int32_t u, float64_t t) noexcept nogil:
        """Unit u (alive, no queued failure) dies at t; its repair is scheduled."""
        cdef int32_t pos, last
        cdef intp_t k
        cdef int32_t down
        self.alive[u] = 0
        self.n_alive -= 1
        if self.system:  # the victim list is only needed to pick uniform alive units
            pos = self.alive_pos[u]
            last = self.alive_list[self.n_alive]
            self.alive_list[pos] = last
            self.alive_pos[last] = pos
        self.n_failures += 1
        down = self.n - self.n_alive
        if down > self.peak_down:
            self.peak_down = down
        if self.repair_mode == 1:
            k = self.fq_head + self.fq_size
            if k >= self.n:
                k -= self.n
            self.fq_t[k] = t + self.repair_value
            self.fq_seq[k] = self._next_seq()
            self.fq_u[k] = u
            self.fq_size += 1
        elif self.repair_mode == 2:
            cal_insert(&self.cal, u, t + self.rep[self.rep_pos], self._next_seq(), EV_REPAIR)
            self.rep_pos += 1

    cdef void _revive(self, int32_t u, float64_t t) noexcept nogil:
        self.alive[u] = 1
        if self.system:
            self.alive_list[self.n_alive] = u
            self.alive_pos[u] = self.n_alive
        self.n_alive += 1
        self.n_repairs += 1
        if self.renewals:
            cal_insert(&self.cal, u, t + self.life[self.life_pos], self._next_seq(), EV_FAILURE)
            self.life_pos += 1

    cdef int _run(self, float64_t until, int stop_mask, int64_t max_events) noexcept nogil:
        cdef int64_t done = 0
        cdef int32_t slot, prev, u, kind
        cdef int64_t seq
        cdef float64_t t, x
        cdef bint fifo
        cdef Calendar* cal = &self.cal
        cdef Node* nodes = self.nodes
        cdef intp_t idx
        while True:
            if done >= max_events:
                return ST_MAX
            # every event draws at most one number from each buffer: refill before, never mid-event
            if self.renewals and self.life_pos >= self.life_len:
                return ST_NEED_LIFE
            if self.repair_mode == 2 and self.rep_pos >= self.rep_len:
                return ST_NEED_REPAIR
            if self.system:
                if self.sys_pos >= self.sys_len:
                    return ST_NEED_SYS
                if self.vic_pos >= self.vic_len:
                    return ST_NEED_VICTIM
            slot = cal_min(cal, &prev)
            fifo = False
            if self.fq_size > 0:
                fifo = slot == -1 or _before(self.fq_t[self.fq_head], self.fq_seq[self.fq_head],
                                             nodes[slot].t, nodes[slot].seq)
            if fifo:
                t = self.fq_t[self.fq_head]
                kind = EV_REPAIR
            elif slot == -1:
                if until < INF:
                    self.now = until
                    return ST_UNTIL
                return ST_EMPTY
            else:
                t = nodes[slot].t
                kind = nodes[slot].kind
            if t >= until:
                self.now = until
                return ST_UNTIL
            # Legitimate simultaneous events are bounded by the number of slots (each holds
            # one); more in a row at one instant means delays vanish below the clock's ulp.
            if kind == EV_TRACE or t != self.now:
                self.stall = 0
            else:
                self.stall += 1
                if self.stall > self.stall_limit:
                    return ST_STALL
            if fifo:
                u = self.fq_u[self.fq_head]
                seq = self.fq_seq[self.fq_head]
                self.fq_head += 1
                if self.fq_head == self.n:
                    self.fq_head = 0
                self.fq_size -= 1
            else:
                cal_unlink(cal, slot, prev)
                seq = nodes[slot].seq
                u = slot
            self.now = t
            if kind == EV_FAILURE:
                self.n_unit_failures += 1
                self._kill(u, t)
            elif kind == EV_REPAIR:
                self._revive(u, t)
            elif kind == EV_SYSTEM:
                self.n_system += 1
                x = self.vic[self.vic_pos]
                self.vic_pos += 1
                if self.n_alive > 0:
                    idx = <intp_t>(x * self.n_alive)
                    if idx >= self.n_alive:
                        idx = self.n_alive - 1
                    u = self.alive_list[idx]
                    if self.cal.queued[u]:
                        cal_remove(cal, u)
                    self._kill(u, t)
                else:
                    u = -1
                    self.n_system_missed += 1
                cal_insert(cal, self.sys_slot, t + self.sysb[self.sys_pos], self._next_seq(), EV_SYSTEM)
                self.sys_pos += 1
            elif kind == EV_TRACE:
                self.n_trace += 1
                u = self.trace_u[self.trace_pos]
                self.trace_pos += 1
                if self.alive[u]:
                    if self.cal.queued[u]:
                        cal_remove(cal, u)
                    self._kill(u, t)
                else:
                    self.n_trace_missed += 1
                if self.trace_pos < self.trace_len:
                    cal_insert(cal, self.trace_slot, self.trace_t[self.trace_pos], self._next_seq(), EV_TRACE)
            else:  # EV_TIMER
                self.n_timer += 1
                u = slot - self.timer0
                if self.timer_period[u] > 0:
                    cal_insert(cal, slot, t + self.timer_period[u], self._next_seq(), EV_TIMER)
            self.n_events += 1
            done += 1
            self.last_t = t
            self.last_kind = kind
            self.last_unit = u
            self.last_seq = seq
            if stop_mask & (1 << kind):
                return ST_STOP

    def run(self, float64_t until, int stop_mask, int64_t max_events):
        """Process events with t < until; return a status code (module enums)."""
        cdef int st
        with nogil:
            st = self._run(until, stop_mask, max_events)
        return st

    def peek(self):
        """(t, seq) of the next event, (inf, -1) if none."""
        cdef int32_t prev
        cdef int32_t slot = cal_min(&self.cal, &prev)
        cdef float64_t t = INF
        cdef int64_t seq = -1
        if slot != -1:
            t = self.nodes[slot].t
            seq = self.nodes[slot].seq
        if self.fq_size > 0 and (slot == -1 or _before(self.fq_t[self.fq_head], self.fq_seq[self.fq_head], t, seq)):
            t = self.fq_t[self.fq_head]
            seq = self.fq_seq[self.fq_head]
        return t, seq

    def restart(self, float64_t t):
        """All units alive at t (>= now); repairs and unit failures dropped; unit clocks and
        the system source redrawn from the (already reset) buffers; timers due before t move
        to t (keeping their order); trace entries before t are skipped."""
        cdef intp_t i, nb = self.cal.mask + 1
        cdef int32_t slot, u
        cdef int64_t keep_seq
        cdef float64_t keep_t
        cdef int32_t keep_kind
        # rebuild the calendar with the non-unit slots only
        for i in range(nb):
            self.head[i] = -1
        self.cal.count = 0
        self.cal.min_slot = -1
        self.cal.cur = cal_bucket(&self.cal, t)
        for slot in range(self.n_slots):
            if not self.queued[slot]:
                continue
            self.queued[slot] = 0
            if slot < self.n or slot == self.sys_slot or slot == self.trace_slot:
                continue
            keep_t = self.nodes[slot].t
            if keep_t < t:
                keep_t = t
            cal_insert(&self.cal, slot, keep_t, self.nodes[slot].seq, self.nodes[slot].kind)
        self.fq_head = 0
        self.fq_size = 0
        for u in range(self.n):
            self.alive[u] = 1
            self.alive_list[u] = u
            self.alive_pos[u] = u
        self.n_alive = self.n
        self.now = t
        self.stall = 0
        if self.renewals:
            self._start_units(t)
        if self.system:
            cal_insert(&self.cal, self.sys_slot, t + self.sysb[self.sys_pos], self._next_seq(), EV_SYSTEM)
            self.sys_pos += 1
        while self.trace_pos < self.trace_len and self.trace_t[self.trace_pos] < t:
            self.trace_pos += 1
            self.n_trace_skipped += 1
        if self.trace_pos < self.trace_len:
            cal_insert(&self.cal, self.trace_slot, self.trace_t[self.trace_pos], self._next_seq(), EV_TRACE)

    def alive_array(self):
        """Copy of the alive flags as a bool array."""
        out = np.empty(self.n, dtype=np.bool_)
        cdef uint8_t[::1] mv = out.view(np.uint8)
        cdef int32_t u
        for u in range(self.n):
            mv[u] = self.alive[u]
        return out

    def is_alive(self, int32_t u):
        return bool(self.alive[u])

    @property
    def queued_count(self):
        return self.cal.count + self.fq_size


def run_renewals(int32_t n, object life_sampler, int repair_mode, float64_t repair_value,
                 object repair_sampler, float64_t horizon, float64_t bucket_width,
                 intp_t n_buckets, intp_t batch):
    """Throughput loop behind ``simulate_renewals``: per-unit renewals with repairs until
    `horizon`. The samplers are callables ``size -> float64 array`` (validated upstream):
    ``n`` initial lifetimes, then batches of ``batch``."""
    cdef EventCore core = EventCore(n, 0, bucket_width, n_buckets, 0.0)
    cdef int st
    core.configure(True, repair_mode, repair_value, False)
    core.set_buffer("life", life_sampler(n))
    core.start_units()
    if repair_mode == 2:
        core.set_buffer("repair", repair_sampler(batch))
    while True:
        with nogil:
            st = core._run(horizon, 0, 1 << 62)
        if st == ST_NEED_LIFE:
            core.set_buffer("life", life_sampler(batch))
        elif st == ST_NEED_REPAIR:
            core.set_buffer("repair", repair_sampler(batch))
        elif st == ST_UNTIL or st == ST_EMPTY:
            break
        elif st == ST_STALL:
            raise RuntimeError(
                f"simulated time stopped advancing at t={core.now!r}: lifetimes or repair times "
                "are below the floating-point resolution of the clock")
        else:  # pragma: no cover - no stop mask, unbounded max_events
            raise RuntimeError(f"event kernel returned unexpected status {st}")
    return (core.n_failures, core.n_repairs, core.n_events, core.peak_down, core.now)
