"""Named, epoch-indexed random streams for common random numbers (shared by the event
engine, the failure stream and the pacing simulator).

Every random source of a simulation (per-unit lifetimes, system inter-arrival times, victim
choice, repair times, ...) gets its own stream, derived from the run's root
:class:`numpy.random.SeedSequence` by *name* and by *epoch* (the number of restarts so
far) rather than by the order in which streams happen to be requested. Two runs with the
same seed therefore draw identical numbers for the same (source, epoch) even when their
policies restart at different times or ask for the sources in a different order: the
common-random-numbers property that makes policy comparisons low-variance.

:data:`STREAMS` is the one table of stream names: each name has one generator family, and
every module draws through :func:`stream_rng` / :func:`epoch_stream`, which refuse a name
that is not in the table or a family it does not have. So one name means the same numbers
wherever it is used (the event engine's system source and the simulator's system renewal
process draw their inter-failure times from the same stream, for instance). The pacing
simulator still addresses its sources by fixed child numbers (:mod:`spare_core.pacing.
simulate`); it may adopt the table later.
"""
from __future__ import annotations

import zlib

import numpy as np

from ._validate import as_int


def as_seed_sequence(seed) -> np.random.SeedSequence:
    """Return ``seed`` as a SeedSequence (an int >= 0 or a SeedSequence; never None)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is None:
        raise TypeError("seed must be given (an int or SeedSequence) so runs are reproducible")
    if isinstance(seed, np.random.Generator):
        raise TypeError(
            "seed must be an int or SeedSequence, not a Generator: common random numbers "
            "need named child streams derived from a SeedSequence"
        )
    return np.random.SeedSequence(as_int(seed, "seed", min_value=0))


def stream_key(name: str) -> int:
    """Stable 32-bit key of a stream name (crc32, identical across runs and platforms)."""
    return zlib.crc32(name.encode("utf-8"))


def child_seed(root: np.random.SeedSequence, *key) -> np.random.SeedSequence:
    """The SeedSequence of the stream addressed by ``key`` under ``root``.

    ``key`` is a stream name and/or integer indices, e.g. ``("lifetime", epoch)`` or a fixed
    stream number; a name enters as its crc32 (:func:`stream_key`). Built from ``root``'s
    entropy with the spawn key extended by the key, the same mechanism as
    :meth:`numpy.random.SeedSequence.spawn` but addressed by name, so it does not depend on
    (or advance) ``root``'s spawn counter.
    """
    ext = tuple(stream_key(k) if isinstance(k, str) else int(k) for k in key)
    return np.random.SeedSequence(
        entropy=root.entropy,
        spawn_key=tuple(root.spawn_key) + ext,
        pool_size=root.pool_size,
    )


#: Every named random stream: name -> (generator family, what it draws). Families:
#: ``"epoch"``: :class:`EpochStream` (one Philox key per name; epoch k is counter block k);
#: ``"epoch-seeded"``: :func:`child_rng` ``(root, name, epoch)`` (a PCG64 per epoch);
#: ``"seeded"``: :func:`child_rng` ``(root, name)`` (one PCG64 for the whole run).
STREAMS = {
    "per-unit-order": ("epoch", "GroupLifetimes: spacings of the sorted group lifetimes, then the victims"),
    "per-unit-lifetimes": ("epoch-seeded", "GroupLifetimes, a law without a cumulative hazard: every lifetime"),
    "system-interarrivals": ("epoch", "SystemRenewals and the retired Engine's system source: times between failures"),
    "system-victims": ("epoch", "SystemRenewals: the victim permutation (raw 64-bit words)"),
    "system-victim-uniforms": ("epoch", "the retired Engine's system source: one uniform per failure picks an alive unit"),
    "unit-lifetimes": ("epoch-seeded", "the retired Engine's renewals (and simulate_renewals): lifetimes"),
    "unit-repairs": ("epoch-seeded", "the retired Engine's renewals (and simulate_renewals): repair times"),
    "node-lifetimes": ("seeded", "NodeRenewals: residual node ages at time 0, then replacement lifetimes"),
    "node-lemons": ("seeded", "NodeRenewals with [fleet] lemon_share: which node slots hold lemons (then each lemon "
                    "failure's fix); with lemons = 'frailty': each failure's fix, then the redrawn multipliers"),
    "domain-lifetime": ("epoch", "DomainFailures: the failure domains' lifetimes"),
    "trace-continuation": ("epoch-seeded", "TraceReplay(after='fit'): the fitted law past the trace's end"),
    "failure-classes": ("epoch", "FailureClasses: per failure after an epoch's first, the class and the detection's uniform"),
    "failure-classes-first": ("seeded", "FailureClasses: the first failure of each epoch, in epoch order: the same"),
    "repair-times": ("seeded", "RepairDraws: each take's repair rounds, automatic and manual durations (under run 'repairs')"),
    "repair-swaps": ("seeded", "RepairDraws: each take's swap duration (under run 'repairs')"),
    "repair-diagnoses": ("seeded", "RepairDraws: whether each take pulled a healthy node (under run 'repairs')"),
}


def _family(name: str, family: str) -> None:
    got = STREAMS.get(name)
    if got is None:
        raise ValueError(f"random stream {name!r} is not in spare_core._seeding.STREAMS; add it there")
    if got[0] != family:
        raise ValueError(f"random stream {name!r} is of family {got[0]!r}, not {family!r}")


def stream_rng(root: np.random.SeedSequence, name: str, epoch: int | None = None) -> np.random.Generator:
    """The generator of the named stream ``name`` (family ``"seeded"``, or ``"epoch-seeded"``
    with ``epoch``) under ``root``."""
    if epoch is None:
        _family(name, "seeded")
        return child_rng(root, name)
    _family(name, "epoch-seeded")
    return child_rng(root, name, epoch)


def epoch_stream(root: np.random.SeedSequence, name: str) -> "EpochStream":
    """The :class:`EpochStream` of the named stream ``name`` (family ``"epoch"``) under ``root``."""
    _family(name, "epoch")
    return EpochStream(root, name)


#: children of a run's root seed, addressed by position (the layout every simulated number so
#: far was drawn with): the failure process and the per-step duration multipliers
RUN_CHILDREN = {"failures": 0, "step-multipliers": 1, "repairs": 2}


def run_seed(seed, name: str) -> np.random.SeedSequence:
    """The SeedSequence of the run-level stream ``name`` (:data:`RUN_CHILDREN`) of ``seed``.

    Built without mutating ``seed`` (:func:`child_seed`), so the same seed always gives the
    same streams and every policy run on it sees the same failures.
    """
    if name not in RUN_CHILDREN:
        raise ValueError(f"run stream must be one of {list(RUN_CHILDREN)}, got {name!r}")
    return child_seed(as_seed_sequence(seed), RUN_CHILDREN[name])


def child_rng(root: np.random.SeedSequence, *key) -> np.random.Generator:
    """A fresh PCG64 Generator on :func:`child_seed` ``(root, *key)``."""
    return np.random.Generator(np.random.PCG64(child_seed(root, *key)))


class EpochStream:
    """A named random stream with one independent sub-stream per epoch, addressed in O(1).

    :func:`child_rng` costs a SeedSequence hash and a generator construction, which dominates a simulation that restarts every few failures. Here the stream's key is
    hashed once (Philox-4x64 key from :func:`child_seed` ``(root, name)``) and epoch ``k``
    is the block of Philox's 256-bit counter whose third word is ``k``: a counter-based
    generator's blocks never overlap (each epoch has 2**128 draws of its own) and jumping to
    one is a state assignment.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The run's root seed.
    name : str
        Stream name, e.g. ``"per-unit-order"``.

    References
    ----------
    .. [1] J. K. Salmon, M. A. Moraes, R. O. Dror and D. E. Shaw, "Parallel random
       numbers: as easy as 1, 2, 3", SC 2011 (Philox, counter-based streams).
    """

    __slots__ = ("_bitgen", "_gen", "_key", "_state", "_counter", "_buffer")

    def __init__(self, root: np.random.SeedSequence, name: str):
        self._key = child_seed(root, name).generate_state(2, np.uint64)
        self._bitgen = np.random.Philox(key=self._key)
        self._gen = np.random.Generator(self._bitgen)
        # one state dict, re-filled per epoch: the setter copies it into the bit generator,
        # and building a new dict and two arrays per call was half the cost of ``at``
        self._counter = np.zeros(4, dtype=np.uint64)
        self._buffer = np.zeros(4, dtype=np.uint64)
        self._state = {
            "bit_generator": "Philox",
            "state": {"counter": self._counter, "key": self._key},
            "buffer": self._buffer,
            "buffer_pos": 4,
            "has_uint32": 0,
            "uinteger": 0,
        }

    def at(self, epoch: int) -> np.random.Generator:
        """The generator positioned at the start of ``epoch``'s sub-stream.

        The same Generator object is returned (re-positioned) on every call, so a caller
        holds it only until its next call of ``at``.
        """
        self._counter[2] = epoch        # counter (0, 0, epoch, 0); the buffer is empty (pos 4)
        self._bitgen.state = self._state
        return self._gen
