"""Deprecated import paths: one warning, pointing at the line that imported the old path."""
from __future__ import annotations

import sys
import warnings

__all__ = ["warn_moved", "warn_retired"]

_INIT = __file__.rsplit("_deprecation", 1)[0] + "__init__.py"


def _importer_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by :func:`warn_moved` name the importer.

    ``warnings`` itself skips importlib's ``_bootstrap`` frames when it counts levels, but not
    ``importlib.import_module`` nor ``spare_core.__getattr__`` (the lazy top-level attribute
    that imports a submodule on first use): those are counted and stepped over here.
    """
    level = 2                       # 1 = warn_moved, 2 = the deprecated module's body
    frame = sys._getframe(2)        # the deprecated module's body
    while frame.f_back is not None:
        frame = frame.f_back
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            continue                # not counted by warnings
        level += 1
        if "importlib" not in name and name != _INIT:
            break
    return level


def warn_moved(old: str, new: str) -> None:
    """Warn (DeprecationWarning) that module ``old`` is now ``new``; call it from ``old``'s body."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; import from {new} instead",
                  DeprecationWarning, stacklevel=_importer_stacklevel())


def warn_retired(old: str, instead: str) -> None:
    """Warn (DeprecationWarning, naming the caller's line) that ``old`` is retired for one
    release and what to use ``instead``; call it at the start of the retired function."""
    warnings.warn(f"{old} is retired and will be removed in the next release: {instead}", DeprecationWarning,
                  stacklevel=3)
