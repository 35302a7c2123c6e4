# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The node log with placement (``[fleet] place``: ``spare_core.events.nodes.NodeFailureLog``).

With placement a node's rate multiplier (lemon, frailty) follows the *node*, not the slot: the
fleet is the job's ``n`` slots and ``S`` idle nodes, and at each failure the failed node joins
the idle set and the slot takes one idle node, by a rule:

* ``any`` (``fewest = 0``): the node idle longest (first in, first out);
* ``fewest_failures`` (``fewest = 1``): the idle node with the fewest failures so far, the one
  idle longest among equals.

With ``lemon_fix`` (``fix > 0``) a lemon's failure is repaired into a normal node with
probability ``fix`` (one uniform per lemon failure, from its own block): its multiplier becomes
the normal nodes' before it joins the idle set. The node placed starts a fresh lifetime (a node enters the idle set only by failing, and its
repair renews it; idle nodes do not fail). The pool being shared, each failure's choice
depends on every earlier one: the failures are taken in time order, one at a time, which is
this loop in C (a binary heap of the slots by their next failure, and one of the idle nodes by
their key).
"""
from _types cimport int64_t, intp_t
from libc.math cimport INFINITY, nextafter


cdef inline bint _slot_less(const double* t, int64_t a, int64_t b) noexcept nogil:
    return t[a] < t[b] or (t[a] == t[b] and a < b)


cdef void _slot_down(int64_t* h, intp_t size, intp_t i, const double* t) noexcept nogil:
    cdef int64_t v = h[i]
    cdef intp_t c
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _slot_less(t, h[c + 1], h[c]):
            c += 1
        if not _slot_less(t, h[c], v):
            break
        h[i] = h[c]
        i = c
    h[i] = v


cdef inline bint _idle_less(const int64_t* key, const int64_t* seq, int64_t a, int64_t b) noexcept nogil:
    return key[a] < key[b] or (key[a] == key[b] and seq[a] < seq[b])


cdef void _idle_push(int64_t* h, int64_t* size, int64_t v, const int64_t* key, const int64_t* seq) noexcept nogil:
    cdef intp_t i = size[0], p
    size[0] += 1
    while i > 0:
        p = (i - 1) >> 1
        if not _idle_less(key, seq, v, h[p]):
            break
        h[i] = h[p]
        i = p
    h[i] = v


cdef int64_t _idle_pop(int64_t* h, int64_t* size, const int64_t* key, const int64_t* seq) noexcept nogil:
    cdef int64_t top = h[0], v
    cdef intp_t i = 0, c, n
    size[0] -= 1
    n = size[0]
    if n == 0:
        return top
    v = h[n]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _idle_less(key, seq, h[c + 1], h[c]):
            c += 1
        if not _idle_less(key, seq, h[c], v):
            break
        h[i] = h[c]
        i = c
    h[i] = v
    return top


def place_chunk(double[::1] next_t, int64_t[::1] occ, int64_t[::1] count, double[::1] scale,
                int64_t[::1] idle, int64_t[::1] key, int64_t[::1] seq, int64_t[::1] state,
                const double[::1] draws, double end, int fewest, int64_t[::1] slots_heap,
                double[::1] out_t, int64_t[::1] out_slot, int64_t[::1] out_node,
                signed char[::1] lemon, const double[::1] fix_u, double fix, double normal_scale,
                double[::1] fixed_op, int64_t retire_after, signed char[::1] out_ret,
                int redraw, const double[::1] redraw_scale):
    """Take the failures before ``end`` in time order, placing a node at each.

    next_t     IN/OUT  each slot's next failure (the clock's time)
    occ        IN/OUT  the node in each slot
    count      IN/OUT  each node's failures so far
    scale      IN/OUT  each node's lifetime multiplier (1 / its rate multiple; a fix sets a lemon's)
    idle       IN/OUT  the idle nodes, a binary heap by (key, seq); its size is ``state[0]``
    key, seq   IN/OUT  per node: its idle key (its count with ``fewest``, else 0) and entry order
    state      IN/OUT  [idle size, next entry number, next draw, next fix uniform, next redrawn scale]
    draws      IN      the law's lifetimes, consumed from ``state[2]`` on
    slots_heap OUT     scratch, one entry per slot
    out_*      OUT     the failures taken: time, slot, node
    lemon      IN/OUT  with ``fix > 0``: 1 for a node that is a lemon now (else unread, may be empty)
    fix_u      IN      with ``fix > 0``: the fixes' uniforms, consumed from ``state[3]`` on
    fixed_op   OUT     with ``fix > 0`` and not ``redraw``: the (clock) time each fixed lemon was fixed
    redraw     IN      1: the lemons are a frailty's (``lemon`` all 1, one uniform per failure), and
                       a fixed node's multiplier becomes the next of ``redraw_scale`` (a fresh
                       draw of the same law) instead of ``normal_scale``; it stays eligible
    redraw_scale IN    with ``redraw``: the fixed nodes' new multipliers, consumed from ``state[4]`` on
    retire_after IN    > 0: a node retires at its ``retire_after``-th failure (it leaves the
                       fleet and is never placed again); 0: none retires
    out_ret    OUT     with ``retire_after > 0``: 1 for a failure that retires its node (else
                       unwritten, may be empty)
    A slot left with no idle node to take (every other node retired) stays empty: it never
    fails again (``occ`` -1, next failure inf).
    Returns ``(taken, status)``: status 0 when every failure before ``end`` is taken, 1 when
    the draws ran out (the caller draws more and calls again), 2 when ``out_*`` are full, 3
    when the fixes' uniforms ran out, 4 when the redrawn multipliers ran out.
    """
    cdef intp_t n = next_t.shape[0], i, k = 0, cap = out_t.shape[0], nd = draws.shape[0], nu = fix_u.shape[0]
    cdef intp_t nr = redraw_scale.shape[0]
    cdef int64_t s, u, v
    cdef int status = 0
    cdef bint ret
    cdef double t, nt
    if retire_after > 0 and out_ret.shape[0] < cap:
        raise ValueError("out_ret must hold as many entries as out_t with retire_after > 0")
    if state.shape[0] < 5 or (fix > 0 and lemon.shape[0] < count.shape[0]) or \
            (fix > 0 and not redraw and fixed_op.shape[0] < count.shape[0]):
        raise ValueError("state needs 5 entries, lemon and fixed_op one per node with fix > 0")
    with nogil:
        for i in range(n):
            slots_heap[i] = i
        i = n // 2 - 1
        while i >= 0:
            _slot_down(&slots_heap[0], n, i, &next_t[0])
            i -= 1
        while n > 0:
            s = slots_heap[0]
            t = next_t[s]
            if not t < end:
                break
            if state[2] >= nd:
                status = 1
                break
            if k >= cap:
                status = 2
                break
            u = occ[s]
            if fix > 0 and lemon[u] and state[3] >= nu:
                status = 3
                break
            if redraw and fix > 0 and fix_u[state[3]] < fix and state[4] >= nr:
                status = 4
                break
            count[u] += 1
            out_t[k] = t
            out_slot[k] = s
            out_node[k] = u
            k += 1
            if fix > 0 and lemon[u]:  # its repair may fix it (before it can be placed again)
                if fix_u[state[3]] < fix:
                    if redraw:  # a fresh multiplier from the frailty's law; the node stays eligible
                        scale[u] = redraw_scale[state[4]]
                        state[4] += 1
                    else:
                        lemon[u] = 0
                        scale[u] = normal_scale
                        fixed_op[u] = t
                state[3] += 1
            ret = retire_after > 0 and count[u] % retire_after == 0
            if retire_after > 0:
                out_ret[k - 1] = ret
            if not ret:  # a retired node leaves the fleet: it joins no idle set
                key[u] = count[u] if fewest else 0
                seq[u] = state[1]
                state[1] += 1
                _idle_push(&idle[0], &state[0], u, &key[0], &seq[0])
            if state[0] == 0:  # nothing left to place: the slot stays empty
                occ[s] = -1
                next_t[s] = INFINITY
                _slot_down(&slots_heap[0], n, 0, &next_t[0])
                continue
            v = _idle_pop(&idle[0], &state[0], &key[0], &seq[0])
            occ[s] = v
            nt = t + draws[state[2]] * scale[v]
            state[2] += 1
            if nt != nt:  # a zero draw of a node that never fails (0 x inf)
                nt = INFINITY
            elif nt == t:  # a lifetime lost in rounding this far out: one float further, or no progress
                nt = nextafter(t, INFINITY)
            next_t[s] = nt
            _slot_down(&slots_heap[0], n, 0, &next_t[0])
    return k, status
