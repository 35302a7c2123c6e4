"""Declared parameters: the options a strategy or a failure model takes, with their kind, unit,
range and default, read the same way wherever a value comes from.

A :class:`Param` names a quantity of the one table of ranges (:data:`spare_core._limits.RANGES`:
``"duration"``, ``"count"``, ...) or one of the kinds below, and :meth:`Param.read` turns a
value as a user writes it into the value the strategy takes: ``"2 min"`` into 120.0 for a
duration, ``3.0`` into 3 for a count, a rule name or a duration for an interval. The scenario
file's ``[policy.NAME]`` tables, its shorthands, ``--set``, sweep specs, map axes and the
Python registry (:func:`spare_core.strategies.make_policy`) all read options through it, so
``swap = "2 min"`` means the same everywhere and a bad value gets one message naming its key.

Kinds besides the quantities of ``RANGES``: ``"interval"`` (a checkpoint-interval rule name,
or a duration >= 0 or ``inf``), ``"choice"`` (one of :attr:`Param.choices`), ``"bool"`` and
``"any"`` (passed as given; the strategy checks it, e.g. explicit stack offsets).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ._files import parse_duration
from ._limits import RANGES

__all__ = ["Param", "KINDS", "read_options", "param_table"]

#: the kinds a parameter may have that are not quantities of the table of ranges
KINDS = ("interval", "choice", "bool", "any")


@dataclass(frozen=True)
class Param:
    """One declared option.

    Attributes
    ----------
    name : str
        The option's name (the keyword of the strategy's factory, the key of its table).
    kind : str
        A quantity of :data:`spare_core._limits.RANGES` or one of :data:`KINDS`.
    default : object
        The value when the option is not given (documentation and listings; the factory's
        own default applies).
    doc : str
        One line for listings and docs/cli.md.
    choices : tuple of str
        The values of a ``"choice"`` (and the rule names of an ``"interval"``).
    high : float, optional
        A tighter upper bound than the quantity's (e.g. micro-batches <= 2**20).
    """

    name: str
    kind: str
    default: Any = None
    doc: str = ""
    choices: tuple = ()
    high: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"a parameter's name must be an identifier, got {self.name!r}")
        if self.kind not in RANGES and self.kind not in KINDS:
            raise ValueError(f"parameter {self.name!r}: kind must be one of {sorted(RANGES) + list(KINDS)}, "
                             f"got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"parameter {self.name!r}: a choice needs its choices")

    @property
    def unit(self) -> str:
        """``"s"`` for durations and intervals, ``""`` otherwise."""
        if self.kind == "interval":
            return "s"
        rng = RANGES.get(self.kind)
        return rng.unit if rng is not None else ""

    def rule(self) -> str:
        """What a value must be, in words (the end of an error message)."""
        if self.kind == "interval":
            return (f"must be one of {list(self.choices)} or a duration >= 0 (seconds, or a string such as "
                    "'30 min'; inf: never)")
        if self.kind == "choice":
            return f"must be one of {list(self.choices)}"
        if self.kind == "bool":
            return "must be true or false"
        if self.kind == "any":
            return "any value the strategy takes"
        rule = RANGES[self.kind].rule()
        return rule if self.high is None else f"{rule} (here <= {self.high:g})"

    def read(self, value: Any, key: str | None = None) -> Any:
        """``value`` as the strategy takes it; ValueError ``"<key> <rule>, got <value>"``.

        Examples
        --------
        >>> Param("swap", "duration0").read("2 min")
        120.0
        >>> Param("groups", "count").read(3.0)
        3
        >>> Param("interval", "interval", choices=("auto",)).read("1 h")
        3600.0
        >>> Param("swap", "duration0").read("soon", "policy.mine.swap")
        Traceback (most recent call last):
        ...
        ValueError: policy.mine.swap must be a duration (seconds, or a string such as '90 s', '30 min', \
'3.1 h', '54 d') >= 0 s and <= 1000000000000 s, got 'soon'
        """
        key = key or self.name
        bad = ValueError(f"{key} {self.rule()}, got {value!r}")
        if self.kind == "any":
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise bad
            return value
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise bad
            return value
        if self.kind == "interval":
            if isinstance(value, str) and value in self.choices:
                return value
            x = float(self._number(value, bad, seconds=True))
            if not x >= 0.0:  # NaN too
                raise bad
            return x
        rng = RANGES[self.kind]
        x = self._number(value, bad, seconds=rng.unit == "s")
        if isinstance(x, int) and not -2**63 <= x < 2**63:  # beyond every range; float() could overflow
            raise bad
        if rng.kind == "int":
            if not (math.isfinite(x) and float(x).is_integer()):
                raise bad
            x = int(x)
        else:
            x = float(x)
        if not rng.contains(x) or (self.high is not None and x > self.high):
            raise bad
        return x

    @staticmethod
    def _number(value: Any, bad: ValueError, *, seconds: bool) -> Any:
        if isinstance(value, bool):
            raise bad
        if isinstance(value, str) and seconds:
            try:
                return parse_duration(value)
            except ValueError:
                raise bad from None
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return value
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return float(value)
        raise bad


def read_options(params: Sequence[Param], options: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``options`` read by their declarations: values converted (units, integers), unknown names
    and bad values refused with ValueError naming ``<where>.<option>``.

    Examples
    --------
    >>> read_options([Param("swap", "duration0")], {"swap": "90 s"}, "policy.mine")
    {'swap': 90.0}
    >>> read_options([Param("swap", "duration0")], {"swop": 1}, "policy.mine")
    Traceback (most recent call last):
    ...
    ValueError: policy.mine has no option 'swop' (its options: ['swap'])
    """
    by_name = {p.name: p for p in params}
    out = {}
    for k, v in options.items():
        p = by_name.get(k)
        if p is None:
            raise ValueError(f"{where} has no option {k!r} (its options: {list(by_name)})")
        out[k] = p.read(v, f"{where}.{k}")
    return out


def param_table(params: Sequence[Param]) -> list[dict[str, Any]]:
    """The declarations as rows (name, kind, unit, rule, default, doc): listings and docs."""
    return [{"name": p.name, "kind": p.kind, "unit": p.unit, "rule": p.rule(), "default": p.default, "doc": p.doc}
            for p in params]
