"""One dict form for every result object: JSON values only.

Result types across the library use whichever container suits them (frozen dataclasses,
NamedTuples, slotted classes with lazily built parts), but they all export the same way:
``result.to_dict()`` returns plain JSON values, built by :func:`fields_dict` from the
result's public fields and :func:`to_jsonable` for each value. Callers can write it with
``json.dumps(result.to_dict(), allow_nan=False)``.

Conversion rules (:func:`to_jsonable`):

- ``None``, ``bool``, ``int``, ``str`` stay as they are;
- floats become Python floats, and non-finite ones (``inf`` for "did not finish", ``nan`` for
  "undefined") become ``None``, since JSON has no such numbers;
- numpy scalars become the Python scalar they hold (then as above), numpy arrays nested lists;
- lists and tuples become lists, dicts stay dicts (numpy-scalar keys become Python scalars);
- an object with a ``to_dict`` method is replaced by its dict, so results nest;
- any other dataclass or NamedTuple becomes the dict of its fields.

Anything else raises TypeError naming the path to the value, so a result never exports
something a JSON reader cannot take back.

A result whose fields are the columns of tables (a run: :class:`spare_core.sim.RunResult`)
declares each once, with :func:`column` (a dataclass field with its unit, doc, how a cell of
seeds summarises it and the value for stores written before it) and :func:`derived` (a
property computed from the fields); :func:`columns` reads the declaration back, and every
output, the result store's schema and the summaries derive from it.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable

import numpy as np

__all__ = ["to_jsonable", "fields_dict", "Column", "column", "derived", "columns", "columns_doc", "CELL_ROLES"]


def to_jsonable(value: Any, name: str = "value") -> Any:
    """``value`` as plain JSON values (see the module docstring for the rules).

    Parameters
    ----------
    value : object
    name : str, default "value"
        How the value is called in the TypeError for an unsupported type.

    Returns
    -------
    None, bool, int, float, str, list or dict
        Floats in the result are all finite.

    Raises
    ------
    TypeError
        A value (or a nested one) has no JSON form.

    Examples
    --------
    >>> import numpy as np
    >>> to_jsonable({"t": np.array([1.5, np.inf]), "n": np.int64(3)})
    {'t': [1.5, None], 'n': 3}
    """
    # bool before int (bool is an int), numpy scalars via .item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        return to_jsonable(value.item(), name)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist(), name)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        return to_dict()
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return {k: to_jsonable(v, f"{name}.{k}") for k, v in zip(value._fields, value)}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {(k.item() if isinstance(k, np.generic) else k): to_jsonable(v, f"{name}[{k!r}]")
                for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name), f"{name}.{f.name}") for f in dataclasses.fields(value)}
    raise TypeError(f"{name} must be a JSON value, numpy value, sequence, dict, dataclass or have to_dict(), "
                    f"got {type(value).__name__}")


def fields_dict(obj: Any, fields: Iterable[str] | None = None, *, exclude: Iterable[str] = ()) -> dict:
    """The dict form of a result object: ``{field: to_jsonable(value)}`` in field order.

    Parameters
    ----------
    obj : object
        A dataclass, a NamedTuple, or any object when ``fields`` is given.
    fields : iterable of str, optional
        The attribute names to export; by default the dataclass or NamedTuple fields.
    exclude : iterable of str, default ()
        Fields to leave out (a bulky or non-data part, such as a run's timeline).

    Returns
    -------
    dict
        JSON values only (see :func:`to_jsonable`).
    """
    if fields is None:
        if dataclasses.is_dataclass(obj):
            fields = [f.name for f in dataclasses.fields(obj)]
        elif isinstance(obj, tuple) and hasattr(obj, "_fields"):
            fields = obj._fields
        else:
            raise TypeError(f"fields must be given for a {type(obj).__name__} (not a dataclass or NamedTuple)")
    skip = set(exclude)
    kind = type(obj).__name__
    return {k: to_jsonable(getattr(obj, k), f"{kind}.{k}") for k in fields if k not in skip}


# -- columns: a result's fields declared once ---------------------------------------------------

#: how the seeds of a cell summarise a column (:class:`Column.cell`)
CELL_ROLES = ("key", "seed", "count", "ratio", "mean", "nanmean", "same")
#: a column's kind, from its annotation (``seed`` declared: an int, or a text for a SeedSequence)
KINDS = {"str": "text", "int": "int", "float": "float", "bool": "bool"}
_REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class Column:
    """One declared column of a result type (a field, or a property derived from fields).

    Attributes
    ----------
    name : str
    kind : {"text", "int", "float", "bool", "seed"}
        From the annotation (``seed``: declared).
    unit : str
        ``"s"``, ``"GPU"``, ``"GPU-h"``, ... ("" for counts, fractions and text).
    doc : str
        One sentence: what it holds.
    cell : str
        How a cell's seeds summarise it (:data:`CELL_ROLES`): ``"key"`` identifies the cell,
        ``"seed"`` and ``"count"`` are counted (its seeds; its true values), ``"ratio"`` gets
        the statistics of TTT/T0, ``"mean"`` / ``"nanmean"`` the mean over seeds (of the
        values that are not NaN), ``"same"`` is one value for every seed (the first's).
    older : object
        The value a run stored before the column existed holds (``required``: every store has
        it). Derived columns are computed from the others instead.
    derived : bool
        A property computed from the fields (not a constructor argument).
    """

    name: str
    kind: str
    unit: str
    doc: str
    cell: str
    older: Any
    derived: bool

    @property
    def required(self) -> bool:
        """Every stored run has it (no ``older`` value)."""
        return self.older is _REQUIRED and not self.derived

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "float")

    def to_dict(self) -> dict:
        """The declaration as JSON values (``older`` None when required)."""
        return {"name": self.name, "kind": self.kind, "unit": self.unit, "doc": self.doc, "cell": self.cell,
                "older": None if self.older is _REQUIRED else self.older, "derived": self.derived}

    def __repr__(self) -> str:
        return f"Column({self.name!r}, {self.kind}, unit={self.unit!r}, cell={self.cell!r})"


def _meta(doc: str, unit: str, cell: str, kind: str | None, older: Any) -> dict:
    if cell not in CELL_ROLES:
        raise ValueError(f"cell must be one of {list(CELL_ROLES)}, got {cell!r}")
    if not doc or not isinstance(doc, str):
        raise ValueError("a column needs its doc")
    return {"column": {"doc": doc, "unit": unit, "cell": cell, "kind": kind, "older": older}}


def column(doc: str, *, unit: str = "", cell: str = "mean", kind: str | None = None, older: Any = _REQUIRED,
           default: Any = dataclasses.MISSING, **field_options: Any) -> Any:
    """A dataclass field declared as a column (``name: float = column("...", unit="s")``).

    Parameters
    ----------
    doc : str
    unit : str, default ""
    cell : str, default "mean"
        How a cell's seeds summarise it (:class:`Column`).
    kind : str, optional
        Overrides the kind read from the annotation (``"seed"``).
    older : object, optional
        The value of a run stored before this column existed: every column added after
        stores were first written declares one, so older stores stay readable.
    default : object, optional
        The field's default (the constructor's; not the same thing as ``older``).
    **field_options
        Passed to :func:`dataclasses.field` (``repr``, ...).
    """
    return dataclasses.field(default=default, metadata=_meta(doc, unit, cell, kind, older), **field_options)


class _Derived(property):
    """A property declared as a column (:func:`derived`)."""

    column_meta: dict


def derived(doc: str, *, unit: str = "", cell: str = "mean") -> Any:
    """A property declared as a derived column (computed from the fields; its kind from the
    return annotation)::

        @derived("GPU-hours paid for", unit="GPU-h")
        def gpu_hours(self) -> float: ...
    """
    meta = _meta(doc, unit, cell, None, _REQUIRED)["column"]

    def wrap(fget: Any) -> _Derived:
        prop = _Derived(fget, doc=fget.__doc__ or doc)
        prop.column_meta = meta
        return prop

    return wrap


def _kind(annotation: Any, where: str) -> str:
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    if name not in KINDS:
        raise TypeError(f"{where}: a column's annotation must be one of {sorted(KINDS)} (or declare kind=), got {name!r}")
    return KINDS[name]


_COLUMNS: dict = {}


def columns(cls: type) -> tuple[Column, ...]:
    """The declared columns of a result type: its :func:`column` fields in field order, then
    its :func:`derived` properties in the order the class defines them."""
    got = _COLUMNS.get(cls)
    if got is not None:
        return got
    out = []
    for f in dataclasses.fields(cls):
        m = f.metadata.get("column")
        if m is not None:
            kind = m["kind"] or _kind(f.type, f"{cls.__name__}.{f.name}")
            out.append(Column(f.name, kind, m["unit"], m["doc"], m["cell"], m["older"], False))
    for name, attr in vars(cls).items():
        if isinstance(attr, _Derived):
            kind = _kind(attr.fget.__annotations__.get("return"), f"{cls.__name__}.{name}")
            m = attr.column_meta
            out.append(Column(name, kind, m["unit"], m["doc"], m["cell"], m["older"], True))
    _COLUMNS[cls] = got = tuple(out)
    return got


def columns_doc(cls: type, indent: str = "    ") -> str:
    """A numpydoc ``Attributes`` section of ``cls``'s columns (appended to its docstring, so
    that the declaration is also the documentation), each line indented by ``indent``."""
    lines = ["Attributes", "----------"]
    for c in columns(cls):
        unit = f", {c.unit}" if c.unit else ""
        lines += [f"{c.name} : {c.kind}{unit}" + (" (property)" if c.derived else ""), f"    {c.doc}"]
    return "\n" + "\n".join(indent + line for line in lines) + "\n"
