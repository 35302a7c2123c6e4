# cython: language_level=3
"""Replication's wipe-out kernels (the Rep+CKPT strategy, ``spare_core.strategies.replication``):
which failure of a batch first leaves a replica window or set with no live member.

Kernels hold no policy: the handler gives the dead groups' state and the batch, the kernel
says where the batch's first wipe-out is; the handler answers the failures up to it.
"""
from _types cimport intp_t, int8_t, int64_t, uint8_t


cdef intp_t _cyclic_first_wipe(
    int8_t* dead, intp_t n, const int64_t* units, intp_t m, intp_t r
) noexcept nogil:
    # A run of r cyclically consecutive dead groups is a wipe-out of cyclic stacks.
    # Scanning at most r - 1 each way is O(r); a run that wraps the circle means every
    # group is dead, which is a wipe-out too, so double counting cannot mislead.
    # Returns the index of the wiping failure, -1 if none, -2 on a unit out of range.
    cdef intp_t i, u, k, left, right
    for i in range(m):
        if units[i] < 0 or units[i] >= n:
            return -2
        u = <intp_t>units[i]
        dead[u] = 1
        left = 0
        k = u
        while left < r - 1:
            k = k - 1 if k > 0 else n - 1
            if not dead[k]:
                break
            left += 1
        right = 0
        k = u
        while right < r - 1 - left:
            k = k + 1 if k < n - 1 else 0
            if not dead[k]:
                break
            right += 1
        if left + 1 + right >= r:
            return i
    return -1


def cyclic_first_wipe(int8_t[::1] dead, const int64_t[::1] units, intp_t r):
    """Mark ``units`` dead in order; index of the first that leaves r cyclically consecutive
    dead groups (``-1`` if none). Stops marking after that unit.

    Parameters
    ----------
    dead : int8[N], IN-OUT
        1 for dead groups.
    units : int64[m], IN
        Groups failing in order, each in ``[0, N)`` (ValueError otherwise; the units before
        the bad one stay marked).
    r : int, IN
        Run length, ``1 <= r <= N``.
    """
    cdef intp_t n = dead.shape[0], m = units.shape[0], res
    if r < 1 or r > n:
        raise ValueError(f"r must be in [1, {n}], got {r}")
    if m == 0:
        return -1
    with nogil:
        res = _cyclic_first_wipe(&dead[0], n, &units[0], m, r)
    if res == -2:
        raise ValueError(f"units must be in [0, {n})")
    return res


cdef intp_t _set_first_wipe(
    int64_t* dead_count, const int64_t* set_of, const int64_t* set_size, intp_t n, intp_t ns,
    const int64_t* units, intp_t m
) noexcept nogil:
    # -2: a unit out of range; -3: a set id out of range
    cdef intp_t i, s
    for i in range(m):
        if units[i] < 0 or units[i] >= n:
            return -2
        s = <intp_t>set_of[units[i]]
        if s < 0 or s >= ns:
            return -3
        dead_count[s] += 1
        if dead_count[s] >= set_size[s]:
            return i
    return -1


def set_first_wipe(int64_t[::1] dead_count, const int64_t[::1] set_of, const int64_t[::1] set_size,
                   const int64_t[::1] units):
    """Count deaths per replica set; index of the first failure that empties a set (``-1``).

    Parameters
    ----------
    dead_count : int64[n_sets], IN-OUT
    set_of : int64[N], IN, values in ``[0, n_sets)``
    set_size : int64[n_sets], IN
    units : int64[m], IN, values in ``[0, N)``, each failing once per epoch

    Raises ValueError on an id out of range (the counts before it stay updated).
    """
    cdef intp_t m = units.shape[0], res
    cdef intp_t n = set_of.shape[0], ns = set_size.shape[0]
    if dead_count.shape[0] != ns:
        raise ValueError("dead_count and set_size must have one length")
    if m == 0:
        return -1
    with nogil:
        res = _set_first_wipe(&dead_count[0], &set_of[0], &set_size[0], n, ns, &units[0], m)
    if res == -2:
        raise ValueError(f"units must be in [0, {n})")
    if res == -3:
        raise ValueError(f"set_of must be in [0, {ns})")
    return res


def cyclic_events(int8_t[::1] dead, const int64_t[::1] units, const uint8_t[::1] back, intp_t r):
    """Failures (``back[i] == 0``) and rejoins (``back[i] == 1``: the group is alive again) in
    order; index of the first failure that leaves r cyclically consecutive dead groups (``-1``
    if none). Stops after that failure.

    Parameters
    ----------
    dead : int8[N], IN-OUT
        1 for dead groups.
    units : int64[m], IN
        The events' groups, each in ``[0, N)``; a failure's group alive, a rejoin's dead
        (ValueError otherwise; the events before the bad one stay applied).
    back : uint8[m], IN
    r : int, IN
        Run length, ``1 <= r <= N``.
    """
    cdef intp_t n = dead.shape[0], m = units.shape[0], i, res = -1, u
    cdef int bad = 0
    if r < 1 or r > n:
        raise ValueError(f"r must be in [1, {n}], got {r}")
    if back.shape[0] != m:
        raise ValueError("back must have one flag per unit")
    with nogil:
        for i in range(m):
            if units[i] < 0 or units[i] >= n:
                bad = 1
                break
            u = <intp_t>units[i]
            if back[i]:
                if not dead[u]:
                    bad = 2
                    break
                dead[u] = 0
            else:
                if dead[u]:
                    bad = 2
                    break
                if _cyclic_first_wipe(&dead[0], n, &units[i], 1, r) == 0:
                    res = i
                    break
    if bad == 1:
        raise ValueError(f"units must be in [0, {n})")
    if bad == 2:
        raise ValueError(f"event {i} (group {units[i]}) does not match the group's state")
    return res


def set_events(int64_t[::1] dead_count, const int64_t[::1] set_of, const int64_t[::1] set_size,
               const int64_t[::1] units, const uint8_t[::1] back):
    """Failures and rejoins of replica-set members in order; index of the first failure that
    empties a set (``-1``). Stops after that failure.

    Parameters
    ----------
    dead_count : int64[n_sets], IN-OUT
    set_of : int64[N], IN, values in ``[0, n_sets)``
    set_size : int64[n_sets], IN
    units : int64[m], IN, values in ``[0, N)``
    back : uint8[m], IN: 1 where the event is the group's rejoin (its set's count goes down)

    Raises ValueError on an id out of range or a rejoin into a set with no dead member (the
    events before it stay applied).
    """
    cdef intp_t m = units.shape[0], i, res = -1, s
    cdef intp_t n = set_of.shape[0], ns = set_size.shape[0]
    cdef int bad = 0
    if dead_count.shape[0] != ns:
        raise ValueError("dead_count and set_size must have one length")
    if back.shape[0] != m:
        raise ValueError("back must have one flag per unit")
    with nogil:
        for i in range(m):
            if units[i] < 0 or units[i] >= n:
                bad = 1
                break
            s = <intp_t>set_of[units[i]]
            if s < 0 or s >= ns:
                bad = 3
                break
            if back[i]:
                if dead_count[s] <= 0:
                    bad = 2
                    break
                dead_count[s] -= 1
            else:
                dead_count[s] += 1
                if dead_count[s] >= set_size[s]:
                    res = i
                    break
    if bad == 1:
        raise ValueError(f"units must be in [0, {n})")
    if bad == 2:
        raise ValueError(f"event {i}: a rejoin into a set with no dead member")
    if bad == 3:
        raise ValueError(f"set_of must be in [0, {ns})")
    return res
