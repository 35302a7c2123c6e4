"""The one registry door: policies (``spare_core.policies``) and failure models
(``spare_core.failure_models``) arrive by name through :class:`Registry`, the built-ins and
installed plugins alike.

A registry holds entries of one kind under short names. Its built-ins are entry points written
in code (``name = "module:attribute"``), loaded through the same loop as the entry points that
installed packages declare, the first time a name is asked for: the registry imports no
strategy or model module itself (no import cycle), and a built-in goes through exactly the
checks a third-party plugin does. A plugin that fails to load is skipped with a warning naming
it: an installed package never breaks the library or the command line; a built-in that fails
is an error.
"""
from __future__ import annotations

import warnings
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Iterator, Mapping, MutableMapping

__all__ = ["Registry", "check_name"]


def check_name(name: Any, what: str) -> str:
    """``name`` if it is a non-empty string of letters, digits, ``-`` and ``_``."""
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"{what} name must be a non-empty string of letters, digits, '-' and '_', got {name!r}")
    return name


class Registry(MutableMapping):
    """Named entries of one kind, filled from built-in and installed entry points.

    Parameters
    ----------
    what : str
        What an entry is, for messages (``"policy"``, ``"failure model"``).
    group : str
        The entry-point group installed packages declare their entries under.
    builtins : mapping of str to str
        The built-in entries as entry-point values (``"spare_core.strategies.spare:ENTRY"``).
    admit : callable
        ``admit(registry, name, loaded_object)``: checks the loaded object and adds the entry
        (through :meth:`add`); raises for an object of the wrong kind or a taken name.

    Notes
    -----
    Reading the mapping (``in``, ``[]``, iteration, ``len``) loads the built-ins and the
    plugins first, once per process. Writing it (``reg[name] = entry``, ``del reg[name]``)
    is the low-level door :meth:`add` uses; the strategy and failure-model modules wrap it
    with the checks of their kind (``register_policy``).
    """

    def __init__(self, what: str, group: str, builtins: Mapping[str, str],
                 admit: Callable[["Registry", str, Any], None]) -> None:
        self.what = what
        self.group = group
        self._builtins = dict(builtins)
        self._admit = admit
        self._entries: dict[str, Any] = {}
        self._state = "empty"  # "loading" while the entry points are read, then "loaded"

    # -- loading ---------------------------------------------------------------------------
    def builtin_entry_points(self) -> list[EntryPoint]:
        """The built-ins as entry points of :attr:`group` (what :meth:`load` reads first)."""
        return [EntryPoint(name, value, self.group) for name, value in self._builtins.items()]

    def load(self) -> list[str]:
        """Admit the built-ins, then the installed plugins (once per process).

        Returns
        -------
        list of str
            The names admitted by this call (empty after the first).
        """
        if self._state != "empty":
            return []
        self._state = "loading"
        done = []
        try:
            for ep in self.builtin_entry_points():
                if ep.name not in self._entries:  # a built-in defined by importing another one
                    self._admit(self, ep.name, ep.load())
                done.append(ep.name)
            for ep in entry_points(group=self.group):
                if ep.name in self._builtins:
                    continue  # an installed copy of the built-in table
                try:
                    self._admit(self, ep.name, ep.load())
                except Exception as exc:  # noqa: BLE001 - any fault of a third-party package
                    warnings.warn(f"{self.what} plugin {ep.name!r} ({ep.value}) skipped: {exc}", stacklevel=3)
                    continue
                done.append(ep.name)
        finally:
            self._state = "loaded"
        return done

    def _ready(self) -> dict[str, Any]:
        if self._state == "empty":
            self.load()
        return self._entries

    # -- the mapping -----------------------------------------------------------------------
    def add(self, name: str, entry: Any, *, replace: bool = False) -> Any:
        """Add ``entry`` under ``name`` (``replace``: over an existing one)."""
        check_name(name, self.what)
        if name in self._entries and not replace and self._entries[name] is not entry:
            raise ValueError(f"{self.what} name {name!r} is already registered (pass replace=True to replace it)")
        self._entries[name] = entry
        return entry

    def raw(self) -> Mapping[str, Any]:
        """The entries admitted so far, without loading anything (for checks during loading)."""
        return self._entries

    def __getitem__(self, name: str) -> Any:
        return self._ready()[name]

    def __setitem__(self, name: str, entry: Any) -> None:
        self.add(name, entry, replace=True)

    def __delitem__(self, name: str) -> None:
        del self._ready()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._ready()))

    def __len__(self) -> int:
        return len(self._ready())

    def __contains__(self, name: object) -> bool:
        return name in self._ready()

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {list(self._ready())})"
