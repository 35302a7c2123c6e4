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
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable

import numpy as np

__all__ = ["to_jsonable", "fields_dict"]


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
