"""Entry points of installed packages: the one loop through which policies
(``spare_core.policies``) and failure models (``spare_core.failure_models``) arrive as plugins.
A plugin that fails is skipped with a warning naming it: an installed package never breaks the
library or the command line."""
from __future__ import annotations

import warnings
from importlib.metadata import entry_points
from typing import Any, Callable

__all__ = ["load_entry_points"]


def load_entry_points(group: str, what: str, register: Callable[[str, Any], None]) -> list[str]:
    """``register(name, object)`` for every entry point of ``group``, in the order installed.

    Parameters
    ----------
    group : str
        The entry-point group.
    what : str
        What a plugin of the group is, for the warning (``"policy"``).
    register : callable
        Called with the entry point's name and its loaded object; raising any exception
        (a wrong kind of object, a taken name) skips that plugin with a warning.

    Returns
    -------
    list of str
        The names registered.
    """
    done = []
    for ep in entry_points(group=group):
        try:
            register(ep.name, ep.load())
        except Exception as exc:  # noqa: BLE001 - any fault of a third-party package
            warnings.warn(f"{what} plugin {ep.name!r} ({ep.value}) skipped: {exc}", stacklevel=3)
            continue
        done.append(ep.name)
    return done
