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
calendar queue (R. Brown, "Calendar queues", CACM 31(10), 1988): O(1) insert, amortised
O(1) pop when the bucket width matches the event density. Measured at 6e5 units, memory
access of the queue dominates, not the arithmetic or the random numbers, so:

- entries (time, key) sit inline in 128-byte bucket blocks: a pop walks the buckets in
  order (prefetch-friendly), an insert touches one random cache line;
- the block pool is on 2 MB pages (otherwise that insert also pays a TLB miss);
- repairs of fixed duration complete in the order they were scheduled, so they need no
  priority queue at all: a FIFO ring, merged with the calendar by (t, seq); and since
  lifetimes are then consumed in FIFO order, the block of an insert 12 repairs ahead is
  known and prefetched;
- with sampled repairs, inserts are software-pipelined (prefetched, inserted 8 pushes
  later, flushed early whenever a waiting entry could be due).

Ties in time are broken by the scheduling sequence number ``seq`` everywhere (packed
with the slot and the unit's event kind into one 64-bit key).
"""
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy

import numpy as np

from _types cimport float64_t, int32_t, int64_t, uint8_t, intp_t
from _prefetch cimport prefetch_write_once
from _calendar cimport (
    Entry, Block, Calendar, SLOT_BITS, SEQ_SHIFT, BLOCK_ENTRIES, EV_FAILURE, EV_REPAIR, EV_SYSTEM, EV_TRACE,
    EV_TIMER, ST_STOP, ST_UNTIL, ST_EMPTY, ST_MAX, ST_NEED_LIFE, ST_NEED_REPAIR, ST_NEED_SYS,
    ST_NEED_VICTIM, ST_STALL, ST_NOMEM, ST_SEQ, REPAIR_NONE, REPAIR_FIXED, REPAIR_SAMPLED,
)

# The enums of _calendar.pxd for Python callers (spare_core.events reads them from here).
CONSTANTS = {
    "EV_FAILURE": EV_FAILURE, "EV_REPAIR": EV_REPAIR, "EV_SYSTEM": EV_SYSTEM,
    "EV_TRACE": EV_TRACE, "EV_TIMER": EV_TIMER,
    "ST_STOP": ST_STOP, "ST_UNTIL": ST_UNTIL, "ST_EMPTY": ST_EMPTY, "ST_MAX": ST_MAX,
    "ST_NEED_LIFE": ST_NEED_LIFE, "ST_NEED_REPAIR": ST_NEED_REPAIR, "ST_NEED_SYS": ST_NEED_SYS,
    "ST_NEED_VICTIM": ST_NEED_VICTIM, "ST_STALL": ST_STALL, "ST_NOMEM": ST_NOMEM, "ST_SEQ": ST_SEQ,
    "REPAIR_NONE": REPAIR_NONE, "REPAIR_FIXED": REPAIR_FIXED, "REPAIR_SAMPLED": REPAIR_SAMPLED,
    "SLOT_BITS": SLOT_BITS,
}

cdef float64_t BK_MAX = 4.0e18
cdef float64_t INF = float("inf")
cdef int64_t SLOT_MASK = (1 << SLOT_BITS) - 1
cdef int64_t REPAIR_FLAG = 1 << SLOT_BITS
cdef int64_t SEQ_MAX = (<int64_t>1) << (63 - SEQ_SHIFT)
# Distance (in FIFO entries) at which the blocks of upcoming inserts are prefetched.
cdef intp_t PREFETCH = 12
# Depth of the insert pipeline (must match the pend_* array sizes in EventCore).
cdef enum:
    PIPE = 8

cdef extern from *:
    """
    #include <stdlib.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* The calendar's bucket blocks are hit at random by inserts; at 10^5-10^6 units they
       span tens of MB, so 4 kB pages cost a TLB miss per insert. Ask for 2 MB pages. */
    static void* spare_huge_alloc(size_t size) {
        void* p = NULL;
        size_t align = (size_t)1 << 21;
        if (size < align) return malloc(size);
        size = (size + align - 1) & ~(align - 1);
        if (posix_memalign(&p, align, size) != 0) return NULL;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        madvise(p, size, MADV_HUGEPAGE);
    #endif
        return p;
    }
    """
    void* spare_huge_alloc(size_t size) noexcept nogil


# ---------------------------------------------------------------------------------------
# calendar queue
# ---------------------------------------------------------------------------------------
cdef inline int64_t cal_bucket(Calendar* c, float64_t t) noexcept nogil:
    """Absolute bucket number of time t (monotone non-decreasing in t; clamped far out)."""
    cdef float64_t x = t * c.inv_w
    if x >= BK_MAX:
        return <int64_t>BK_MAX
    return <int64_t>x


cdef inline bint _before(float64_t t1, int64_t k1, float64_t t2, int64_t k2) noexcept nogil:
    return t1 < t2 or (t1 == t2 and k1 < k2)


cdef int cal_init(Calendar* c, intp_t nb, float64_t width, bint track, intp_t n_slots) noexcept nogil:
    """Allocate an empty calendar of nb (a power of two) buckets. 0, or -1 on failure."""
    cdef intp_t i
    c.nb = nb
    c.mask = nb - 1
    c.cap = nb + nb // 4 + 16
    c.pool = <Block*>spare_huge_alloc(c.cap * sizeof(Block))
    c.track = track
    c.live_key = NULL
    c.live_t = NULL
    if track:
        c.live_key = <int64_t*>malloc(n_slots * sizeof(int64_t))
        c.live_t = <float64_t*>malloc(n_slots * sizeof(float64_t))
        if c.live_key == NULL or c.live_t == NULL:
            return -1
        for i in range(n_slots):
            c.live_key[i] = -1
    if c.pool == NULL:
        return -1
    c.inv_w = 1.0 / width
    cal_clear(c, 0.0)
    return 0


cdef void cal_free(Calendar* c) noexcept nogil:
    free(c.pool)
    free(c.live_key)
    free(c.live_t)
    c.pool = NULL
    c.live_key = NULL
    c.live_t = NULL


cdef void cal_clear(Calendar* c, float64_t t) noexcept nogil:
    """Drop every entry (live_key is the caller's business); cur = bucket of t."""
    cdef intp_t b
    for b in range(c.nb):
        c.pool[b].count = 0
        c.pool[b].next = -1
    c.top = c.nb
    c.free_head = -1
    c.count = 0
    c.cached = False
    c.cur = cal_bucket(c, t)


cdef int32_t _alloc_block(Calendar* c) noexcept nogil:
    cdef int32_t o
    cdef Block* grown
    if c.free_head != -1:
        o = c.free_head
        c.free_head = c.pool[o].next
        return o
    if c.top == c.cap:
        grown = <Block*>spare_huge_alloc(2 * c.cap * sizeof(Block))
        if grown == NULL:
            return -1
        memcpy(grown, c.pool, c.cap * sizeof(Block))
        free(c.pool)
        c.pool = grown
        c.cap *= 2
    o = <int32_t>c.top
    c.top += 1
    return o


cdef inline void _free_block(Calendar* c, int32_t o) noexcept nogil:
    c.pool[o].next = c.free_head
    c.free_head = o


cdef int cal_insert(Calendar* c, float64_t t, int64_t key) noexcept nogil:
    """Queue (t, key). PRE: the slot has no valid entry, t >= 0 and finite. 0 or -1 (no memory)."""
    cdef int64_t bk = cal_bucket(c, t)
    cdef int32_t b = <int32_t>(bk & c.mask)
    cdef int32_t target = b, o, prevb = -1
    cdef int32_t i
    if c.pool[b].count == BLOCK_ENTRIES:
        o = c.pool[b].next
        if o != -1 and c.pool[o].count < BLOCK_ENTRIES:
            target = o
        else:
            o = _alloc_block(c)
            if o == -1:
                return -1
            c.pool[o].count = 0
            c.pool[o].next = c.pool[b].next
            if c.cached and c.mprev == b:
                c.mprev = o  # the cached minimum's block now follows the new block
            c.pool[b].next = o
            target = o
        prevb = b
    i = c.pool[target].count
    c.pool[target].e[i].t = t
    c.pool[target].e[i].key = key
    c.pool[target].count = i + 1
    c.count += 1
    if c.track:
        c.live_key[key & SLOT_MASK] = key
        c.live_t[key & SLOT_MASK] = t
    if bk < c.cur:
        c.cur = bk
    if c.cached and _before(t, key, c.pool[c.mb].e[c.mi].t, c.pool[c.mb].e[c.mi].key):
        c.mb = target
        c.mi = i
        c.mprev = prevb
    return 0


cdef inline bint _scan_bucket(Calendar* c, int32_t b, bint filtered, int32_t* bb, int32_t* bi,
                              int32_t* bp) noexcept nogil:
    """Update the best (block bb, index bi, predecessor bp) with the valid entries of
    bucket b (only those due in the current year if `filtered`); stale entries and emptied
    overflow blocks are dropped on the way. Return whether bb changed."""
    cdef int32_t blk = b, prev = -1, nxt, i
    cdef Block* B
    cdef Entry* e
    cdef bint found = False
    # trunc(t * inv_w) <= cur  <=>  t * inv_w < cur + 1 (exact while cur < 2**53), one
    # multiply and compare per entry instead of a float-to-int conversion
    cdef float64_t limit = <float64_t>(c.cur + 1) if filtered else INF
    cdef bint exact = c.cur < (<int64_t>1 << 52)
    while blk != -1:
        B = &c.pool[blk]
        i = 0
        while i < B.count:
            e = &B.e[i]
            if c.track and c.live_key[e.key & SLOT_MASK] != e.key:
                B.count -= 1
                B.e[i] = B.e[B.count]
                if bb[0] == blk and bi[0] == B.count:
                    bi[0] = i
                continue
            if (e.t * c.inv_w < limit if exact else (not filtered or cal_bucket(c, e.t) <= c.cur)) and (
                    bb[0] == -1 or _before(e.t, e.key, c.pool[bb[0]].e[bi[0]].t, c.pool[bb[0]].e[bi[0]].key)):
                bb[0] = blk
                bi[0] = i
                bp[0] = prev
                found = True
            i += 1
        nxt = B.next
        if B.count == 0 and prev != -1 and bb[0] != blk:
            c.pool[prev].next = nxt
            _free_block(c, blk)
        else:
            prev = blk
        blk = nxt
    return found


cdef bint cal_min(Calendar* c) noexcept nogil:
    """Locate the earliest (t, key) entry in (c.mb, c.mi); False if the queue is empty.
    Advances `cur` past empty buckets (keeping the invariant)."""
    cdef intp_t i
    cdef int32_t bb = -1, bi = -1, bp = -1
    if c.cached:
        return True
    if c.count == 0:
        return False
    for i in range(c.nb):
        if _scan_bucket(c, <int32_t>(c.cur & c.mask), True, &bb, &bi, &bp):
            c.mb = bb
            c.mi = bi
            c.mprev = bp
            c.cached = True
            return True
        c.cur += 1
    # A whole year of buckets had nothing due: the next event is far away; find it directly.
    for i in range(c.nb):
        _scan_bucket(c, <int32_t>i, False, &bb, &bi, &bp)
    if bb == -1:  # pragma: no cover - count > 0 guarantees a valid entry
        c.count = 0
        return False
    c.mb = bb
    c.mi = bi
    c.mprev = bp
    c.cached = True
    c.cur = cal_bucket(c, c.pool[bb].e[bi].t)
    return True


cdef void cal_pop(Calendar* c) noexcept nogil:
    """Remove the cached minimum (PRE: cal_min returned True)."""
    cdef Block* B = &c.pool[c.mb]
    B.count -= 1
    if c.track:
        c.live_key[B.e[c.mi].key & SLOT_MASK] = -1
    B.e[c.mi] = B.e[B.count]
    if B.count == 0 and c.mprev != -1:
        c.pool[c.mprev].next = B.next
        _free_block(c, c.mb)
    c.count -= 1
    c.cached = False


cdef void cal_remove(Calendar* c, int32_t slot) noexcept nogil:
    """Lazily remove the slot's entry (PRE: track and the slot is queued)."""
    c.live_key[slot] = -1
    c.count -= 1
    c.cached = False


# ---------------------------------------------------------------------------------------
# engine state
# ---------------------------------------------------------------------------------------
cdef struct Buf:
    float64_t* p       # pre-sampled times (owned by a numpy array in EventCore.buf_objs)
    intp_t pos, len    # next unread entry, length


cdef inline float64_t* _ptr(object arr):
    cdef float64_t[::1] mv = arr
    if mv.shape[0] == 0:
        return NULL
    return &mv[0]


cdef class EventCore:
    """Mechanical state of the event engine (see the module docstring).

    Constructed and driven only by :class:`spare_core.events.Engine` and
    :func:`spare_core.events.simulate_renewals`, which validate every argument; the kernel
    trusts its inputs (1 <= n, n + 2 + n_timers < 2**24, times finite and >= 0, buffers of
    positive finite float64, trace units in range and trace times sorted). ``track``
    enables lazy removal (needed by system/trace kills and timers); the pure renewal loop
    runs without it.
    """
    cdef Calendar cal
    cdef readonly int32_t n, n_slots, n_timers, sys_slot, trace_slot, timer0
    cdef readonly bint track
    cdef readonly float64_t now
    cdef int64_t seq
    # unit state: alive_list[:n_alive] are the alive units (kept only with a system source)
    cdef uint8_t* alive
    cdef int32_t* alive_list
    cdef int32_t* alive_pos
    cdef readonly int32_t n_alive
    cdef bint keep_alive                   # per-unit flags kept (off only in run_renewals)
    # fixed-delay repair FIFO ring of capacity n: (time, key)
    cdef float64_t* fq_t
    cdef int64_t* fq_key
    cdef intp_t fq_head, fq_size
    # pipelined inserts (no-track mode): ring of PIPE (time, key), pend_min their minimum
    cdef float64_t pend_t[PIPE]
    cdef int64_t pend_key[PIPE]
    cdef int pend_head, pend_n
    cdef float64_t pend_min
    cdef bint pipe
    # configuration
    cdef readonly bint renewals, system
    cdef readonly int repair_mode          # REPAIR_NONE, REPAIR_FIXED (FIFO), REPAIR_SAMPLED (calendar)
    cdef float64_t repair_value
    cdef float64_t* timer_period           # > 0 periodic, 0 one-shot
    # pre-sampled buffers (numpy arrays kept alive by the object references)
    cdef Buf life, rep, sysb, vic
    cdef dict buf_objs
    cdef object trace_t_obj, trace_u_obj
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
                  float64_t start, bint track):
        cdef intp_t i, nb = 16
        if not (bucket_width > 0.0 and 1.0 / bucket_width < INF and start >= 0.0 and start < INF):
            raise ValueError(f"event engine: bucket_width must be > 0 with a finite inverse and start finite "
                             f">= 0, got {bucket_width!r} and {start!r}")
        self.n = n
        self.n_timers = n_timers
        self.sys_slot = n
        self.trace_slot = n + 1
        self.timer0 = n + 2
        self.n_slots = n + 2 + n_timers
        self.track = track
        while nb < n_buckets:
            nb *= 2
        self.alive = <uint8_t*>malloc(n * sizeof(uint8_t))
        self.alive_list = <int32_t*>malloc(n * sizeof(int32_t))
        self.alive_pos = <int32_t*>malloc(n * sizeof(int32_t))
        self.fq_t = <float64_t*>malloc(n * sizeof(float64_t))
        self.fq_key = <int64_t*>malloc(n * sizeof(int64_t))
        self.timer_period = <float64_t*>calloc(n_timers + 1, sizeof(float64_t))
        if (cal_init(&self.cal, nb, bucket_width, track, self.n_slots) != 0 or self.alive == NULL
                or self.alive_list == NULL or self.alive_pos == NULL or self.fq_t == NULL
                or self.fq_key == NULL or self.timer_period == NULL):
            raise MemoryError("event engine: cannot allocate state for n_units=%d" % n)
        self.cal.cur = cal_bucket(&self.cal, start)
        self.now = start
        for i in range(n):
            self.alive[i] = 1
            self.alive_list[i] = <int32_t>i
            self.alive_pos[i] = <int32_t>i
        self.n_alive = n
        self.keep_alive = True
        self.pend_min = INF
        self.stall_limit = 4 * <intp_t>self.n_slots + 64
        self.last_kind = -1
        self.last_unit = -1
        self.last_t = INF

    def __dealloc__(self):
        cal_free(&self.cal)
        free(self.alive)
        free(self.alive_list)
        free(self.alive_pos)
        free(self.fq_t)
        free(self.fq_key)
        free(self.timer_period)

    # -- configuration (called by the wrapper before the first event) --------------------
    def configure(self, bint renewals, int repair_mode, float64_t repair_value, bint system):
        self.renewals = renewals
        self.repair_mode = repair_mode
        self.repair_value = repair_value
        self.system = system
        # FIFO repairs already prefetch the one random insert per cycle (see _revive);
        # otherwise pipeline the inserts (lazy removal in track mode rules that out)
        self.pipe = (not self.track) and repair_mode != REPAIR_FIXED

    def set_buffer(self, str which, object arr):
        """Replace one pre-sampled buffer (float64, C-contiguous, positive finite)."""
        cdef Buf* b
        if which == "life":
            b = &self.life
        elif which == "repair":
            b = &self.rep
        elif which == "system":
            b = &self.sysb
        elif which == "victim":
            b = &self.vic
        else:
            raise ValueError(f"unknown buffer {which!r}")
        # never trust the wrapper: an empty buffer would be asked for again forever, a
        # NaN or negative time would corrupt the calendar's bucket arithmetic
        cdef const float64_t[::1] mv = arr
        cdef intp_t i, n = mv.shape[0]
        cdef bint bad = False
        cdef float64_t hi = 1.0 if which == "victim" else INF
        if n == 0:
            raise ValueError(f"event engine: the {which} buffer must not be empty")
        with nogil:
            for i in range(n):
                bad |= not (mv[i] >= 0.0 and mv[i] < hi)
        if bad:
            i = 0
            while mv[i] >= 0.0 and mv[i] < hi:
                i += 1
            raise ValueError(f"event engine: {which} times must be finite and >= 0"
                             f"{' and < 1' if which == 'victim' else ''}, got {mv[i]!r} at position {i}")
        if self.buf_objs is None:
            self.buf_objs = {}
        self.buf_objs[which] = arr  # keeps the memory alive while the kernel reads it
        b.p = _ptr(arr)
        b.pos = 0
        b.len = n

    def set_trace(self, object times, object units):
        cdef int32_t[::1] mu = units
        if mu.shape[0] != times.shape[0]:
            raise ValueError(f"event engine: trace times ({times.shape[0]}) and units ({mu.shape[0]}) differ in length")
        self.trace_t_obj = times
        self.trace_u_obj = units
        self.trace_t = _ptr(times)
        self.trace_u = &mu[0] if mu.shape[0] else NULL
        self.trace_len = times.shape[0]
        self.trace_pos = 0
        if self.trace_len:
            self._check(self._push(self.trace_slot, self.trace_t[0]))

    def start_units(self):
        """Schedule every unit's first failure (unit order) from the lifetime buffer."""
        self._need_lives()
        self._check(self._start_units(self.now))

    cdef _need_lives(self):
        if self.life.len - self.life.pos < self.n:
            raise ValueError(f"event engine: starting {self.n} units needs {self.n} lifetimes, "
                             f"the buffer holds {self.life.len - self.life.pos}")

    cdef _need_system(self):
        if self.sysb.pos >= self.sysb.len:
            raise ValueError("event engine: the system inter-arrival buffer is exhausted")

    def start_system(self):
        """Schedule the system source's first failure from the inter-arrival buffer."""
        self._need_system()
        self._check(self._push(self.sys_slot, self.now + self.sysb.p[self.sysb.pos]))
        self.sysb.pos += 1

    def _check(self, int st):
        if st == ST_NOMEM:
            raise MemoryError("event engine: cannot grow the calendar queue")
        if st == ST_SEQ:
            raise OverflowError("event engine: 2**38 events scheduled, sequence numbers exhausted")

    cdef inline int _push(self, int32_t slot, float64_t t, int64_t flag=0) noexcept nogil:
        """Schedule slot at t with the next sequence number; 0 or an ST_ error code.

        Without `track`, the insert is software-pipelined: the entry waits in a small ring
        (`pend_*`) while its bucket block is prefetched and is inserted PIPE pushes later;
        `_run` flushes the ring whenever a waiting entry could be due."""
        cdef int64_t seq = self.seq
        cdef int64_t key
        cdef int i, j
        if seq >= SEQ_MAX:
            return ST_SEQ
        self.seq = seq + 1
        key = (seq << SEQ_SHIFT) | flag | slot
        if not self.pipe:
            if cal_insert(&self.cal, t, key) != 0:
                return ST_NOMEM
            return 0
        if self.pend_n == PIPE:
            i = self.pend_head
            if cal_insert(&self.cal, self.pend_t[i], self.pend_key[i]) != 0:
                return ST_NOMEM
            self.pend_head = (i + 1) % PIPE
            self.pend_n -= 1
            if self.pend_t[i] == self.pend_min:  # the minimum left: recompute it
                self.pend_min = INF
                for j in range(self.pend_n):
                    i = (self.pend_head + j) % PIPE
                    if self.pend_t[i] < self.pend_min:
                        self.pend_min = self.pend_t[i]
        i = (self.pend_head + self.pend_n) % PIPE
        self.pend_t[i] = t
        self.pend_key[i] = key
        self.pend_n += 1
        if t < self.pend_min:
            self.pend_min = t
        prefetch_write_once(&self.cal.pool[cal_bucket(&self.cal, t) & self.cal.mask])
        return 0

    cdef int _flush(self) noexcept nogil:
        """Insert every pipelined entry into the calendar (0 or ST_NOMEM)."""
        cdef int i
        while self.pend_n > 0:
            i = self.pend_head
            if cal_insert(&self.cal, self.pend_t[i], self.pend_key[i]) != 0:
                return ST_NOMEM
            self.pend_head = (i + 1) % PIPE
            self.pend_n -= 1
        self.pend_min = INF
        return 0

    cdef int _start_units(self, float64_t t) noexcept nogil:
        cdef int32_t u
        cdef int st
        for u in range(self.n):
            if u + PREFETCH < self.n:
                prefetch_write_once(&self.cal.pool[cal_bucket(&self.cal, t + self.life.p[self.life.pos + PREFETCH]) & self.cal.mask])
            st = self._push(u, t + self.life.p[self.life.pos])
            if st != 0:
                return st
            self.life.pos += 1
        return 0

    cdef inline bint _queued(self, int32_t slot) noexcept nogil:
        return self.cal.live_key[slot] != -1

    # -- timers (track mode only) ---------------------------------------------------------
    def set_timer(self, int32_t j, float64_t first, float64_t period):
        """(Re)schedule timer j at `first` (>= now); period 0 = one-shot."""
        cdef int32_t slot = self.timer0 + j
        if self._queued(slot):
            cal_remove(&self.cal, slot)
        self.timer_period[j] = period
        self._check(self._push(slot, first))

    def cancel_timer(self, int32_t j):
        cdef int32_t slot = self.timer0 + j
        if self._queued(slot):
            cal_remove(&self.cal, slot)

    def timer_pending(self, int32_t j):
        return self.track and bool(self._queued(self.timer0 + j))

    # -- event effects ------------------------------------------------------------------
    cdef int _kill(self, int32_t u, float64_t t) noexcept nogil:
        """Unit u (alive, no queued failure) dies at t; its repair is scheduled."""
        cdef int32_t pos, last
        cdef intp_t k
        cdef int32_t down
        cdef int64_t seq
        if self.keep_alive:
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
        if self.repair_mode == REPAIR_FIXED:
            seq = self.seq
            if seq >= SEQ_MAX:
                return ST_SEQ
            self.seq = seq + 1
            k = self.fq_head + self.fq_size
            if k >= self.n:
                k -= self.n
            self.fq_t[k] = t + self.repair_value
            self.fq_key[k] = (seq << SEQ_SHIFT) | REPAIR_FLAG | u
            self.fq_size += 1
        elif self.repair_mode == REPAIR_SAMPLED:
            self.rep.pos += 1
            return self._push(u, t + self.rep.p[self.rep.pos - 1], REPAIR_FLAG)
        return 0

    cdef int _revive(self, int32_t u, float64_t t) noexcept nogil:
        cdef intp_t k
        if self.keep_alive:
            self.alive[u] = 1
        if self.system:
            self.alive_list[self.n_alive] = u
            self.alive_pos[u] = self.n_alive
        self.n_alive += 1
        self.n_repairs += 1
        if not self.renewals:
            return 0
        self.life.pos += 1
        if self.repair_mode == REPAIR_FIXED and self.fq_size > PREFETCH and self.life.pos + PREFETCH < self.life.len:
            # With FIFO repairs, lifetimes are consumed by repairs in FIFO order, so the
            # repair PREFETCH entries ahead will insert at fq_t + life[life_pos + PREFETCH]:
            # start loading that bucket's block now (the insert is the one random access).
            k = self.fq_head + PREFETCH
            if k >= self.n:
                k -= self.n
            prefetch_write_once(&self.cal.pool[cal_bucket(&self.cal, self.fq_t[k] + self.life.p[self.life.pos + PREFETCH]) & self.cal.mask])
            if self.keep_alive:
                prefetch_write_once(&self.alive[self.fq_key[k] & SLOT_MASK])
        return self._push(u, t + self.life.p[self.life.pos - 1])

    cdef int _run(self, float64_t until, int stop_mask, int64_t max_events) noexcept nogil:
        cdef int64_t done = 0, key = 0
        cdef int32_t u, kind, slot
        cdef float64_t t, x
        cdef bint fifo, have
        cdef Calendar* cal = &self.cal
        cdef Entry* e
        cdef intp_t idx
        cdef int err
        while True:
            if done >= max_events:
                return ST_MAX
            # every event draws at most one number from each buffer: refill before, never mid-event
            if self.renewals and self.life.pos >= self.life.len:
                return ST_NEED_LIFE
            if self.repair_mode == REPAIR_SAMPLED and self.rep.pos >= self.rep.len:
                return ST_NEED_REPAIR
            if self.system:
                if self.sysb.pos >= self.sysb.len:
                    return ST_NEED_SYS
                if self.vic.pos >= self.vic.len:
                    return ST_NEED_VICTIM
            have = cal_min(cal)
            fifo = False
            if have:
                e = &cal.pool[cal.mb].e[cal.mi]
                t = e.t
                key = e.key
                if self.fq_size > 0 and _before(self.fq_t[self.fq_head], self.fq_key[self.fq_head], t, key):
                    fifo = True
            elif self.fq_size > 0:
                fifo = True
            elif self.pend_n > 0:
                t = INF
            else:
                if until < INF:
                    self.now = until
                    return ST_UNTIL
                return ST_EMPTY
            if fifo:
                t = self.fq_t[self.fq_head]
                key = self.fq_key[self.fq_head]
            if self.pend_n > 0 and self.pend_min <= t:
                # a pipelined entry may be due first: put them all in the calendar, retry
                err = self._flush()
                if err != 0:
                    return err
                continue
            slot = <int32_t>(key & SLOT_MASK)
            if slot < self.n:
                kind = EV_REPAIR if key & REPAIR_FLAG else EV_FAILURE
            elif slot == self.sys_slot:
                kind = EV_SYSTEM
            elif slot == self.trace_slot:
                kind = EV_TRACE
            else:
                kind = EV_TIMER
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
                self.fq_head += 1
                if self.fq_head == self.n:
                    self.fq_head = 0
                self.fq_size -= 1
            else:
                cal_pop(cal)
            self.now = t
            u = slot
            err = 0
            if kind == EV_FAILURE:
                self.n_unit_failures += 1
                err = self._kill(u, t)
            elif kind == EV_REPAIR:
                err = self._revive(u, t)
            elif kind == EV_SYSTEM:
                self.n_system += 1
                x = self.vic.p[self.vic.pos]
                self.vic.pos += 1
                if self.n_alive > 0:
                    idx = <intp_t>(x * self.n_alive)
                    if idx >= self.n_alive:
                        idx = self.n_alive - 1
                    u = self.alive_list[idx]
                    if self._queued(u):
                        cal_remove(cal, u)
                    err = self._kill(u, t)
                else:
                    u = -1
                    self.n_system_missed += 1
                if err == 0:
                    self.sysb.pos += 1
                    err = self._push(self.sys_slot, t + self.sysb.p[self.sysb.pos - 1])
            elif kind == EV_TRACE:
                self.n_trace += 1
                u = self.trace_u[self.trace_pos]
                self.trace_pos += 1
                if self.alive[u]:
                    if self._queued(u):
                        cal_remove(cal, u)
                    err = self._kill(u, t)
                else:
                    self.n_trace_missed += 1
                if err == 0 and self.trace_pos < self.trace_len:
                    err = self._push(self.trace_slot, self.trace_t[self.trace_pos])
            else:  # EV_TIMER
                self.n_timer += 1
                u = slot - self.timer0
                if self.timer_period[u] > 0:
                    err = self._push(slot, t + self.timer_period[u])
            if err != 0:
                return err
            self.n_events += 1
            done += 1
            self.last_t = t
            self.last_kind = kind
            self.last_unit = u
            self.last_seq = key >> SEQ_SHIFT
            if stop_mask & (1 << kind):
                return ST_STOP

    def run(self, float64_t until, int stop_mask, int64_t max_events):
        """Process events with t < until; return a status code (module enums)."""
        cdef int st
        with nogil:
            st = self._run(until, stop_mask, max_events)
        self._check(st)
        return st

    def peek(self):
        """(t, seq) of the next event, (inf, -1) if none."""
        cdef float64_t t = INF
        cdef int64_t key = -1
        self._check(self._flush())
        if cal_min(&self.cal):
            t = self.cal.pool[self.cal.mb].e[self.cal.mi].t
            key = self.cal.pool[self.cal.mb].e[self.cal.mi].key
        if self.fq_size > 0 and (key == -1 or _before(self.fq_t[self.fq_head], self.fq_key[self.fq_head], t, key)):
            t = self.fq_t[self.fq_head]
            key = self.fq_key[self.fq_head]
        return t, (key >> SEQ_SHIFT if key != -1 else -1)

    def restart(self, float64_t t):
        """All units alive at t (>= now); repairs and unit failures dropped; unit clocks and
        the system source redrawn from the (already reset) buffers; timers due before t move
        to t (keeping their order); trace entries before t are skipped."""
        cdef int32_t slot, u, j
        cdef int64_t key
        cdef float64_t kt
        self.pend_n = 0  # pipelined entries are unit or source events: all dropped or redrawn
        self.pend_min = INF
        cal_clear(&self.cal, t)
        if self.track:
            for u in range(self.n + 2):
                self.cal.live_key[u] = -1
            # timers keep their sequence numbers: re-insert with the old keys
            for j in range(self.n_timers):
                slot = self.timer0 + j
                key = self.cal.live_key[slot]
                if key == -1:
                    continue
                kt = self.cal.live_t[slot]
                if kt < t:
                    kt = t
                self.cal.live_key[slot] = -1
                if cal_insert(&self.cal, kt, key) != 0:
                    raise MemoryError("event engine: cannot grow the calendar queue")
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
            self._need_lives()
            self._check(self._start_units(t))
        if self.system:
            self._need_system()
            self._check(self._push(self.sys_slot, t + self.sysb.p[self.sysb.pos]))
            self.sysb.pos += 1
        while self.trace_pos < self.trace_len and self.trace_t[self.trace_pos] < t:
            self.trace_pos += 1
            self.n_trace_skipped += 1
        if self.trace_pos < self.trace_len:
            self._check(self._push(self.trace_slot, self.trace_t[self.trace_pos]))

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


cdef class RenewalTotals:
    """What :func:`run_renewals` returns, read by name: the counts of failures, repairs and
    events, the most units down at once (``peak_down``) and the clock at the end (``now``)."""
    cdef readonly int64_t n_failures, n_repairs, n_events, peak_down
    cdef readonly float64_t now

    def __repr__(self):
        return (f"RenewalTotals(n_failures={self.n_failures}, n_repairs={self.n_repairs}, "
                f"n_events={self.n_events}, peak_down={self.peak_down}, now={self.now!r})")


def run_renewals(int32_t n, object life_sampler, int repair_mode, float64_t repair_value,
                 object repair_sampler, float64_t horizon, float64_t bucket_width,
                 intp_t n_buckets, intp_t batch):
    """Throughput loop behind ``simulate_renewals``: per-unit renewals with repairs until
    `horizon`. The samplers are callables ``size -> float64 array`` (validated upstream):
    ``n`` initial lifetimes, then batches of 1024, 2048, ... up to ``batch``. Returns a
    :class:`RenewalTotals`."""
    cdef EventCore core = EventCore(n, 0, bucket_width, n_buckets, 0.0, False)
    cdef int st
    # Refill sizes double from 1024 up to `batch`, so short runs do not sample (and throw
    # away) a full batch while long runs amortise the Python round trip.
    cdef intp_t life_batch = min(batch, 1024), rep_batch = min(batch, 1024)
    core.configure(True, repair_mode, repair_value, False)
    core.keep_alive = False  # only counts are returned: skip a random store per event
    core.set_buffer("life", life_sampler(n))
    core.start_units()
    if repair_mode == REPAIR_SAMPLED:
        core.set_buffer("repair", repair_sampler(rep_batch))
    while True:
        with nogil:
            st = core._run(horizon, 0, 1 << 62)
        if st == ST_NEED_LIFE:
            core.set_buffer("life", life_sampler(life_batch))
            life_batch = min(batch, 2 * life_batch)
        elif st == ST_NEED_REPAIR:
            rep_batch = min(batch, 2 * rep_batch)
            core.set_buffer("repair", repair_sampler(rep_batch))
        elif st == ST_UNTIL or st == ST_EMPTY:
            break
        elif st == ST_NOMEM or st == ST_SEQ:
            core._check(st)
        elif st == ST_STALL:
            raise RuntimeError(
                f"simulated time stopped advancing at t={core.now!r}: lifetimes or repair times "
                "are below the floating-point resolution of the clock")
        else:  # pragma: no cover - no stop mask, unbounded max_events
            raise RuntimeError(f"event kernel returned unexpected status {st}")
    cdef RenewalTotals out = RenewalTotals.__new__(RenewalTotals)
    out.n_failures, out.n_repairs, out.n_events = core.n_failures, core.n_repairs, core.n_events
    out.peak_down, out.now = core.peak_down, core.now
    return out
