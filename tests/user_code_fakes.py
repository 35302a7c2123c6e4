"""A failure process of a user's model that answers garbage on demand: what the user-code
tests (tests/test_hardening_user_code.py) and their fuzz profile
(tests/fuzz/test_fuzz_user_code.py) feed the simulator."""
from __future__ import annotations


class EditedProcess:
    """Failures every 7 s of the epoch on groups 0, 1, ...; ``edit(offsets, groups)`` spoils
    each batch handed out from take number ``from_take`` on (offsets from the epoch's start;
    an edit may return anything in their place)."""

    def __init__(self, n, edit, start=0.0, from_take=1):
        self.n_units, self.epoch, self._start, self._now, self._i = n, 0, start, start, 0
        self._edit, self._from, self._takes = edit, from_take, 0

    epoch_start = property(lambda self: self._start)
    now = property(lambda self: self._now)
    n_alive = property(lambda self: self.n_units)

    def restart(self, time):
        self.epoch += 1
        self._start = self._now = time
        self._i = 0

    def take(self, k, with_units=True):
        t = [7.0 * (self._i + j + 1) for j in range(k)]
        g = [(self._i + j) % self.n_units for j in range(k)]
        self._i += k
        self._takes += 1
        if k:
            self._now = self._start + t[-1]
        if self._takes >= self._from:
            t, g = self._edit(t, g)
        return [self._start + x for x in t] if isinstance(t, list) else t, g

    def take_units(self):
        return []
