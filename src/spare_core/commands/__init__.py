"""Sub-commands of the ``spare`` CLI (see :mod:`spare_core.cli`), plus what they share: the
argparse value types and :class:`UsageError`, the one exception a command raises for bad
input (the CLI prints its message on one line and exits with status 2)."""
from __future__ import annotations

import argparse
from typing import Any, Callable


#: exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input to a command: the message names the argument, the rule and the bad value."""


def bounded(cast: Callable[[str], Any], low: Any, what: str) -> Callable[[str], Any]:
    """argparse type: ``cast(text)`` that must be >= ``low`` (``what`` names the kind)."""

    def convert(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not value >= low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    return convert


positive_int = bounded(int, 1, "an integer")
nonneg_int = bounded(int, 0, "an integer")


def distinct(values: list[Any], flag: str) -> list[Any]:
    """``values`` if no value repeats, else :class:`UsageError` naming ``flag``."""
    if len(set(values)) != len(values):
        raise UsageError(f"{flag} values must be distinct, got {' '.join(map(str, values))}")
    return values
