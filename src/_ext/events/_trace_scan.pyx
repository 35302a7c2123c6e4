# cython: language_level=3
"""The per-epoch scan of a trace replay (``spare_core.events.trace_model.TraceProcess``).

A replayed log's failures in an epoch that starts at row ``p0`` are the rows ``j >= p0``
whose previous row of the same group lies before ``p0`` (a group is out from its first row
in the epoch on). With the previous-row index of every row computed once, the epoch's next
failures are found by one comparison per row; this module runs that loop in C, so a replay
that restarts every few tens of failures pays one call per chunk instead of a numpy window
per call.
"""
from _types cimport int64_t

import numpy as np


cdef (int64_t, int64_t) _scan(const int64_t[::1] prev, int64_t offset, int64_t pos, int64_t limit, int64_t p0,
                              int64_t need, int64_t[::1] out) noexcept nogil:
    """Rows ``j`` in ``[pos, limit)`` with ``prev[j - offset] < p0``, at most ``need``.

    prev   IN   previous-row index of each row of one copy of the log (len n); the caller
                guarantees ``offset <= pos <= limit <= offset + n``
    out    OUT  the hits as virtual row numbers ``j`` (len(out) >= need)
    Returns ``(hits, next_pos)``: the row after the last hit when ``need`` were found, else
    ``limit`` (every row before it was looked at).
    """
    cdef int64_t j, k = 0
    for j in range(pos, limit):
        if prev[j - offset] < p0:
            out[k] = j
            k += 1
            if k == need:
                return k, j + 1
    return k, limit


def scan(const int64_t[::1] prev, int64_t offset, int64_t pos, int64_t limit, int64_t p0, int64_t need):
    """The next at most ``need`` rows ``j`` in ``[pos, limit)`` with ``prev[j - offset] < p0``.

    Parameters
    ----------
    prev : int64 array, C-contiguous
        Previous-row index of each row of one copy of the log (``-1`` / a negative index for
        a group's first row), already in the numbering of the epoch's first row ``p0``
        (for a later copy ``c`` of a looped log, the caller compares ``prev + c * n`` with
        ``p0`` by passing ``p0 - c * n``).
    offset : int
        Virtual index of the copy's row 0 (``c * n``); ``prev`` is read at ``j - offset``.
    pos, limit : int
        The rows looked at: ``offset <= pos <= limit <= offset + len(prev)``.
    p0 : int
        A row ``j`` is a failure of the epoch when ``prev[j - offset] < p0``.
    need : int
        At most this many hits (``>= 0``).

    Returns
    -------
    rows : int64 array
        The hits, in order, as virtual row numbers (``offset + i``).
    next_pos : int
        Where the next scan starts: the row after the last hit when ``need`` were found,
        else ``limit``.

    Raises
    ------
    ValueError
        ``pos``/``limit`` outside the copy, or ``need`` negative; checked before any row is
        read, so the loop never reads out of bounds.

    Notes
    -----
    O(limit - pos) comparisons, no allocation besides the result (``need`` int64).

    Examples
    --------
    >>> import numpy as np
    >>> prev = np.array([-1, -1, 0, -1, 2], dtype=np.int64)   # groups 0, 1, 0, 2, 0
    >>> scan(prev, 0, 0, 5, 0, 10)        # an epoch from row 0: each group's first row
    (array([0, 1, 3]), 5)
    >>> scan(prev, 0, 2, 5, 2, 1)         # an epoch from row 2: rows 2 (group 0) and 3
    (array([2]), 3)
    """
    cdef int64_t n = prev.shape[0]
    if need < 0:
        raise ValueError(f"need must be >= 0, got {need}")
    if not (offset <= pos <= limit <= offset + n):
        raise ValueError(f"rows [pos, limit) must lie in the copy [offset, offset + len(prev)) = "
                         f"[{offset}, {offset + n}), got pos={pos}, limit={limit}")
    out = np.empty(min(need, limit - pos), dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef int64_t k, nxt, m = o.shape[0]
    if m == 0:
        return out, pos if need == 0 else limit
    with nogil:
        k, nxt = _scan(prev, offset, pos, limit, p0, m, o)
    return out[:k], nxt
