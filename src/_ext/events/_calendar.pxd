# Failure event engine kernel: the types other Cython code may cimport.
#
# Only types and enums live here. setup.py names the module spare_core._ext._calendar, under
# which Cython does not find this file as the module's own .pxd, so the calendar functions
# (cal_bucket, cal_insert, cal_min, cal_unlink, cal_remove in _calendar.pyx) are not a shared
# C-API; Python callers use spare_core.events.
#
# The engine keeps one *slot* per entity that can have a pending event: slots 0..n-1 are
# the units (their next failure or repair), slot n the system-level renewal source,
# slot n+1 the trace replay, slots n+2.. the timers. Each slot holds at most one pending
# event (per-entity next-event state, Starsim style); the queue stores (time, key) pairs.
from _types cimport float64_t, int32_t, int64_t, uint8_t, intp_t

# Event kinds (``Event.kind``); -1 = no event.
cdef enum:
    EV_FAILURE = 0     # per-unit renewal failure of unit `unit`
    EV_REPAIR = 1      # unit `unit` repaired and alive again
    EV_SYSTEM = 2      # system renewal failure; hits a uniformly random alive unit (or -1)
    EV_TRACE = 3       # trace replay failure of unit `unit` (no effect if already down)
    EV_TIMER = 4       # timer `unit` fired (periodic or one-shot)

# Repair modes of EventCore.configure / run_renewals.
cdef enum:
    REPAIR_NONE = 0     # failed units stay down
    REPAIR_FIXED = 1    # one fixed delay: repairs complete in scheduling order (a FIFO)
    REPAIR_SAMPLED = 2  # delays drawn from the repair buffer, queued in the calendar

# Return codes of EventCore.run (>0) and errors (<0).
cdef enum:
    ST_STOP = 1        # processed an event whose kind is in the stop mask
    ST_UNTIL = 2       # next event at or after `until`; now = until
    ST_EMPTY = 3       # no pending event at all
    ST_MAX = 4         # processed max_events events
    ST_NEED_LIFE = 10  # lifetime buffer empty: refill and call again
    ST_NEED_REPAIR = 11
    ST_NEED_SYS = 12
    ST_NEED_VICTIM = 13
    ST_STALL = -1      # time stopped advancing (delays below float resolution)
    ST_NOMEM = -2      # the calendar could not grow its block pool
    ST_SEQ = -3        # 2**38 events scheduled: sequence numbers exhausted

# Queue keys: key = seq << SEQ_SHIFT | repair << SLOT_BITS | slot, so comparing keys
# compares sequence numbers (ties in time) while the slot and the unit's event kind ride
# along for free (no lookup of the unit's state on the hot path). seq < 2**38.
cdef enum:
    SLOT_BITS = 24
    SEQ_SHIFT = 25
    BLOCK_ENTRIES = 7

cdef struct Entry:
    float64_t t
    int64_t key

# A calendar bucket is a chain of 128-byte blocks; the first block of bucket b is pool[b],
# overflow blocks live in pool[nb:] and are recycled through a free list.
cdef struct Block:
    int32_t count      # entries in e[:count]
    int32_t next       # next block of the bucket's chain, -1 = end
    Entry e[7]
    int64_t _pad

# Calendar queue (Brown 1988) with entries stored inline in bucket blocks, so a pop reads
# the buckets in order (prefetch-friendly) and an insert touches one random cache line.
# An entry lives in bucket floor(t / w) mod nb. Invariant: no entry has floor(t / w) < cur.
# With `track`, removal is lazy: live_key[slot] is the key of the slot's queued entry (-1:
# none) and entries whose key differs are stale and dropped when met.
cdef struct Calendar:
    Block* pool
    intp_t nb, cap, top  # buckets, pool capacity, first never-used overflow block
    int32_t free_head    # free overflow blocks, linked by .next
    int64_t mask
    int64_t cur          # current bucket number (absolute, not modulo)
    float64_t inv_w
    intp_t count         # valid entries
    bint track
    int64_t* live_key    # n_slots (track only)
    float64_t* live_t    # n_slots (track only): time of the slot's queued entry
    bint cached          # (mb, mi) is the minimum; mprev its predecessor block (-1: head)
    int32_t mb, mi, mprev
