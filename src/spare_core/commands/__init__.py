"""Sub-commands of the ``spare`` CLI (see :mod:`spare_core.cli`), plus the argparse value
types they share."""
from __future__ import annotations

import argparse


def bounded(cast, low, what):
    """argparse type: ``cast(text)`` that must be >= ``low`` (``what`` names the kind)."""

    def convert(text):
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
