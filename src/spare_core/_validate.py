"""Input validation shared by the Python wrappers.

Every public entry point coerces and checks its arguments here *before* any kernel
runs, so bad input raises a clear ``TypeError``/``ValueError`` and a Cython kernel only
ever sees well-formed, contiguous, private copies (the caller's arrays are never
modified). Messages are lower-case and name the rule and the offending value.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

__all__ = [
    "as_int",
    "as_float",
    "as_int_array",
    "as_float_array",
    "check_choice",
    "as_generator",
]


def as_int(value, name: str, *, min_value: int | None = None, max_value: int | None = None) -> int:
    """Return ``value`` as a Python int; reject bools, floats, NaN and out-of-range values."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool {value!r}")
    try:
        out = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}") from None
    if min_value is not None and out < min_value:
        raise ValueError(f"{name} must be >= {min_value}, got {out}")
    if max_value is not None and out > max_value:
        raise ValueError(f"{name} must be <= {max_value}, got {out}")
    return out


def as_float(
    value,
    name: str,
    *,
    min_value: float | None = None,
    max_value: float | None = None,
    strict_min: bool = False,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a finite float within bounds (``strict_min``: ``> min_value``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    out = float(value)
    if np.isnan(out) or (np.isinf(out) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {out}")
    if min_value is not None:
        if strict_min and not out > min_value:
            raise ValueError(f"{name} must be > {min_value}, got {out}")
        if not strict_min and out < min_value:
            raise ValueError(f"{name} must be >= {min_value}, got {out}")
    if max_value is not None and out > max_value:
        raise ValueError(f"{name} must be <= {max_value}, got {out}")
    return out


def as_int_array(
    values,
    name: str,
    *,
    dtype=np.int64,
    ndim: int = 1,
    length: int | None = None,
    min_value: int | None = None,
    max_value: int | None = None,
    copy: bool = True,
) -> np.ndarray:
    """Return a fresh C-contiguous integer copy of ``values``.

    Accepts any integer dtype (and integral-valued nothing else: floats, bools, objects
    and NaN are refused with a TypeError). Values are range-checked before the cast so
    an int64 value cannot silently wrap into int32.

    ``copy=False`` returns ``values`` itself when it already is a C-contiguous ndarray of
    ``dtype`` (same checks); only for inputs a kernel reads through const memoryviews, so
    the caller's array still cannot be modified.
    """
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        if arr.size == 0 and arr.dtype == np.float64:
            arr = arr.astype(np.int64)  # np.asarray([]) is float64; an empty list is fine
        else:
            raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    if arr.size:
        lo, hi = arr.min(), arr.max()
        if min_value is not None and lo < min_value:
            raise ValueError(f"{name} must be >= {min_value}, got {lo}")
        if max_value is not None and hi > max_value:
            raise ValueError(f"{name} must be <= {max_value}, got {hi}")
        info = np.iinfo(dtype)
        if lo < info.min or hi > info.max:
            raise ValueError(f"{name} does not fit in {np.dtype(dtype).name}: range [{lo}, {hi}]")
    if not copy and arr is values and arr.dtype == np.dtype(dtype) and arr.flags.c_contiguous:
        return arr
    return np.array(arr, dtype=dtype, order="C", copy=True)


def as_float_array(
    values,
    name: str,
    *,
    ndim: int = 1,
    length: int | None = None,
    min_value: float | None = None,
    strict_min: bool = False,
) -> np.ndarray:
    """Return a fresh C-contiguous float64 copy; NaN and inf are refused."""
    arr = np.asarray(values)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    out = np.array(arr, dtype=np.float64, order="C", copy=True)
    if out.size:
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{name} must be finite (no NaN or inf)")
        lo = out.min()
        if min_value is not None:
            if strict_min and not lo > min_value:
                raise ValueError(f"{name} must be > {min_value}, got {lo}")
            if not strict_min and lo < min_value:
                raise ValueError(f"{name} must be >= {min_value}, got {lo}")
    return out


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` if it is one of ``choices`` (strings), else ValueError listing them."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def as_generator(seed) -> np.random.Generator:
    """A ``numpy.random.Generator`` from an int, SeedSequence, or Generator (never global state)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise TypeError("seed must be given (an int, SeedSequence or Generator) for reproducibility")
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    return np.random.default_rng(as_int(seed, "seed", min_value=0))
