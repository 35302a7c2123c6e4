"""Named, epoch-indexed random streams for common random numbers.

Every random source of the engine (per-unit lifetimes, system inter-arrival times, victim
choice, repair times, ...) gets its own stream, derived from the run's root
:class:`numpy.random.SeedSequence` by *name* and by *epoch* (the number of restarts so
far) rather than by the order in which streams happen to be requested. Two runs with the
same seed therefore draw identical numbers for the same (source, epoch) even when their
policies restart at different times or ask for the sources in a different order: the
common-random-numbers property that makes policy comparisons low-variance.
"""
from __future__ import annotations

import zlib

import numpy as np

from .._validate import as_int


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


def child_seed(root: np.random.SeedSequence, name: str, *index: int) -> np.random.SeedSequence:
    """The SeedSequence of stream ``name`` (and optional indices, e.g. the epoch) under ``root``.

    Built from ``root``'s entropy with the spawn key extended by ``(crc32(name), *index)``,
    the same mechanism as :meth:`numpy.random.SeedSequence.spawn` but addressed by name, so
    it does not depend on (or advance) ``root``'s spawn counter.
    """
    return np.random.SeedSequence(
        entropy=root.entropy,
        spawn_key=tuple(root.spawn_key) + (stream_key(name),) + tuple(int(i) for i in index),
        pool_size=root.pool_size,
    )


def child_rng(root: np.random.SeedSequence, name: str, *index: int) -> np.random.Generator:
    """A fresh PCG64 Generator on :func:`child_seed` ``(root, name, *index)``."""
    return np.random.Generator(np.random.PCG64(child_seed(root, name, *index)))
