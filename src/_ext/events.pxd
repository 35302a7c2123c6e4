# Failure event engine kernel: the types other Cython code may cimport.
#
# Only types and enums live here. setup.py names the module spare_core._ext.events, under
# which Cython does not find this file as the module's own .pxd, so the calendar functions
# (cal_bucket, cal_insert, cal_min, cal_unlink, cal_remove in events.pyx) are not a shared
# C-API; Python callers use spare_core.events.
#
# The engine keeps one *slot* per entity that can have a pending event: slots 0..n-1 are
# the units (their next failure or repair), slot n the system-level renewal source,
# slot n+1 the trace replay, slots n+2.. the timers. Each slot holds at most one pending
# event, so the queue stores slot indices only (per-entity next-event arrays, Starsim
# style) and needs no allocation while running.
from _types cimport float64_t, int32_t, int64_t, uint8_t, intp_t

# Event kinds (``Event.kind``); -1 = no event.
cdef enum:
    EV_FAILURE = 0     # per-unit renewal failure of unit `unit`
    EV_REPAIR = 1      # unit `unit` repaired and alive again
    EV_SYSTEM = 2      # system renewal failure; hits a uniformly random alive unit (or -1)
    EV_TRACE = 3       # trace replay failure of unit `unit` (no effect if already down)
    EV_TIMER = 4       # timer `unit` fired (periodic or one-shot)

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

cdef struct Node:
    float64_t t        # pending event time (valid while in the queue)
    int64_t seq        # scheduling sequence number: ties in t broken by seq
    int32_t next       # next slot in the same calendar bucket, -1 = end
    int32_t kind       # EV_* of the pending event

# Calendar queue (Brown 1988) over a fixed set of slots, keyed by (t, seq).
# Buckets of width w in a circular array of nb = mask + 1 lists; an entry lives in
# bucket floor(t / w) mod nb. Invariant: no queued entry has floor(t / w) < cur.
cdef struct Calendar:
    Node* nodes        # IN-OUT, n_slots entries (owned by EventCore)
    int32_t* head      # nb list heads, -1 = empty
    uint8_t* queued    # n_slots flags: slot currently in the calendar
    int64_t mask
    int64_t cur        # current bucket number (absolute, not modulo)
    float64_t inv_w
    intp_t count
    int32_t min_slot   # cached result of cal_min, -1 = not cached
    int32_t min_prev   # predecessor of min_slot in its bucket list
