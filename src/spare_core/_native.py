"""Loads the compiled kernels with an actionable error when they were not built."""
from __future__ import annotations

import importlib
from types import ModuleType

_HINT = (
    "spare_core's compiled extension {name!r} is not built. From the repository root run\n"
    "    python -m pip install -e '.[test]'\n"
    "(or `python setup.py build_ext --inplace`); a C compiler, Cython and numpy are needed."
)


def load(name: str) -> ModuleType:
    """Import ``spare_core._ext.<name>``; raise ImportError with build instructions if missing."""
    try:
        return importlib.import_module(f"spare_core._ext.{name}")
    except ImportError as exc:  # pragma: no cover - exercised only on broken installs
        raise ImportError(_HINT.format(name=name)) from exc
