"""Sub-commands of the ``spare`` CLI (see :mod:`spare_core.cli`), plus what they share: the
argparse value types and :class:`UsageError`, the one exception a command raises for bad
input (the CLI prints its message on one line and exits with status 2)."""
from __future__ import annotations

import argparse
import math
from typing import Any, Callable

from .. import _limits


#: exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input to a command: the message names the argument, the rule and the bad value."""


# the bounds of counts, seeds and processes: the one table of ranges (spare_core._limits), which
# the scenario-file reader, --set and sweep specs read too
MAX_COUNT = _limits.MAX_COUNT
MAX_SEED = _limits.MAX_SEED
MAX_PROCESSES = _limits.MAX_PROCESSES


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


def ranged(quantity: str) -> Callable[[str], Any]:
    """argparse type of a quantity of the one table of ranges (:data:`spare_core._limits.RANGES`)."""
    r = _limits.RANGES[quantity]
    if r.kind == "int":
        return bounded(int, r.low, "an integer", r.high)

    def convert(text: str) -> Any:
        shown = text if len(text) <= 40 else text[:37] + "..."
        try:
            value = float(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"must be a number, got {shown!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {shown!r}")
        if not r.contains(value):
            raise argparse.ArgumentTypeError(f"{r.rule()}, got {shown}")
        return value

    return convert


positive_int = ranged("count")
seed_int = ranged("seed")
seed_count = ranged("seeds")
process_count = ranged("processes")
horizon_float = ranged("horizon")
finite_float = bounded(float, -math.inf, "a number")


def distinct(values: list[Any], flag: str) -> list[Any]:
    """``values`` if no value repeats, else :class:`UsageError` naming ``flag``."""
    if len(set(values)) != len(values):
        # (not the builtin map: in this package's namespace `map` is the `spare map` sub-module
        # once it is imported)
        raise UsageError(f"{flag} values must be distinct, got {' '.join(str(v) for v in values)}")
    return values
