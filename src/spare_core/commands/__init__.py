"""Sub-commands of the ``spare`` CLI (see :mod:`spare_core.cli`), plus what they share: the
argparse value types and :class:`UsageError`, the one exception a command raises for bad
input (the CLI prints its message on one line and exits with status 2)."""
from __future__ import annotations

import argparse
import math
from typing import Any, Callable


#: exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input to a command: the message names the argument, the rule and the bad value."""


#: the largest count an argument may give (nodes, groups, iterations, steps, ...): the kernels
#: index with C ``int``, so a larger count is an overflow, refused at parsing (exit status 2)
MAX_COUNT = 2**31 - 1
#: the largest root seed: seeds are 63-bit integers wherever they are stored
MAX_SEED = 2**63 - 1
#: the most worker processes a command starts (each is a forked copy of this process)
MAX_PROCESSES = 1024


def bounded(cast: Callable[[str], Any], low: Any, what: str, high: Any = None) -> Callable[[str], Any]:
    """argparse type: ``cast(text)`` that must be >= ``low`` and <= ``high`` (``what`` names
    the kind); a float must also be finite (``nan``, ``inf`` and ``1e400`` are refused)."""

    def convert(text: str) -> Any:
        shown = text if len(text) <= 40 else text[:37] + "..."
        try:
            value = cast(text)
        except (ValueError, OverflowError):
            if high is not None and text.strip().lstrip("+").isdigit():  # more digits than int() converts
                raise argparse.ArgumentTypeError(f"must be <= {high}, got {shown}") from None
            raise argparse.ArgumentTypeError(f"must be {what}, got {shown!r}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {shown!r}")
        if not value >= low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {shown}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be <= {high}, got {shown}")
        return value

    return convert


positive_int = bounded(int, 1, "an integer", MAX_COUNT)
seed_int = bounded(int, 0, "an integer", MAX_SEED)
process_count = bounded(int, 0, "an integer", MAX_PROCESSES)
finite_float = bounded(float, -math.inf, "a number")


def distinct(values: list[Any], flag: str) -> list[Any]:
    """``values`` if no value repeats, else :class:`UsageError` naming ``flag``."""
    if len(set(values)) != len(values):
        raise UsageError(f"{flag} values must be distinct, got {' '.join(map(str, values))}")
    return values
