"""The product files' reader: input files opened one way (:func:`read_input`: regular files
only, a stated size cap), TOML documents, durations with units, ``KEY=VALUE`` overrides and the
value checks that name the file and the key in every error.

Infrastructure: scenario files and sweep specs (product layer) read their documents here, and
the failure models (``spare_core.events``) check their own ``[failures]`` keys with
:class:`Reader`, without importing the product layer. Nothing here knows what a key means.
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from ._limits import range_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["InputFileError", "read_input", "command_files", "note_input", "input_named", "claim_output", "file_kind", "MAX_TOML_BYTES", "MAX_LOG_BYTES", "MAX_LOG_ROWS", "TomlFileError", "Reader", "read_toml", "parse_duration", "duration_text", "apply_overrides", "plain", "DAY", "YEAR"]

DAY = 86_400.0
#: the Julian year, as the failure-rate forms count it (``events.rates.SECONDS["year"]``; a test
#: checks they agree: this layer cannot import the rates)
YEAR = 365.25 * DAY
_UNITS = {
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3,
    "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": DAY, "day": DAY, "days": DAY,
    "w": 7 * DAY, "week": 7 * DAY, "weeks": 7 * DAY,
    "y": YEAR, "yr": YEAR, "year": YEAR, "years": YEAR,
}
#: the most bytes a TOML input (scenario file, sweep spec) may hold: real ones are a few KB
MAX_TOML_BYTES = 4 * 2**20
#: the most bytes a failure log (CSV or Parquet, and a Parquet log's selected columns once
#: decompressed) or a hostfile may hold: a 10**6-row log of 100-byte rows is 100 MB
MAX_LOG_BYTES = 128 * 2**20
#: the most rows of a failure log and hosts of a hostfile (the parsed cells are Python objects:
#: a 10**6-row log takes about 0.45 GB while it is read)
MAX_LOG_ROWS = 2**22
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_DURATION = re.compile(r"^\s*([0-9][0-9_]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]+)\s*$")
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


class TomlFileError(ValueError):
    """A TOML file of the product (scenario file, sweep spec) that cannot be read.

    The message is one line naming the file and, where the text is at fault, the line.

    Attributes
    ----------
    path : str
        The file as given.
    line : int or None
        1-based line of the fault (None for a missing or unreadable file, or a fault at the
        end of the document).
    """

    def __init__(self, message: str, path: str = "", line: int | None = None):
        super().__init__(message)
        self.path = path
        self.line = line


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, in words (``"a FIFO"``, ``"a character device"``, ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


class InputFileError(ValueError):
    """An input file that cannot be read: ``path`` and ``reason`` (one line, no file name).

    Each reader wraps it in its own error, e.g. ``cannot read scenario file 'x.toml': a FIFO,
    not a regular file``.
    """

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path!r}: {reason}")
        self.path = path
        self.reason = reason


# The files one command reads and the outputs it was asked for, so that no output replaces an
# input (``spare run f.toml --csv f.toml``): (device, inode) -> the path as given. None outside a
# command (:func:`command_files`): a library caller rewriting a file it read is not refused.
_command: list[dict[str, dict[tuple[int, int], str]] | None] = [None]


@contextlib.contextmanager
def command_files() -> Any:
    """Within the block (one ``spare`` command), the files :func:`read_input` reads and the
    outputs :func:`claim_output` is told of are remembered, and an output that is one of the
    inputs (the same file, through a symlink or a hard link too) is refused either way round:
    by :func:`claim_output` (or the writer's last check) when the input was read first, by
    :func:`read_input` when the output was checked first."""
    before = _command[0]
    _command[0] = {"inputs": {}, "outputs": {}}
    try:
        yield
    finally:
        _command[0] = before


def _same_file(path: str, key: tuple[int, int]) -> bool:
    """``path`` still names the file ``key`` (an inode freed and reused since is another file)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == key


def note_input(path: str | os.PathLike[str], st: os.stat_result | None = None) -> None:
    """Remember ``path`` as a file the running command reads (a reader that does not go through
    :func:`read_input`, such as a sweep store's manifest and parts). Nothing outside a command;
    a path that cannot be stat'ed is not remembered (it is not read either)."""
    book = _command[0]
    if book is None:
        return
    p = os.fspath(path)
    try:
        st = st or os.stat(p)
    except OSError:
        return
    book["inputs"][(st.st_dev, st.st_ino)] = p


def input_named(target: str) -> str | None:
    """The input of the running command that ``target`` is (the path it was read by), or None:
    the same device and inode, a symlink's target or a hard link alike."""
    book = _command[0]
    if book is None:
        return None
    try:
        st = os.stat(target)
    except OSError:
        return None
    key = (st.st_dev, st.st_ino)
    p = book["inputs"].get(key)
    return p if p is not None and _same_file(p, key) else None


def claim_output(target: str, flag: str | None = None) -> None:
    """Remember ``target`` as an output of the running command; a ValueError (one line) if it
    is a file the command has read (:func:`input_named`)."""
    book = _command[0]
    if book is None:
        return
    read = input_named(target)
    if read is not None:
        raise ValueError(_replaces(target, read, flag))
    try:
        st = os.stat(target)
    except OSError:
        return  # nothing there yet: no input can be it
    book["outputs"][(st.st_dev, st.st_ino)] = f"{flag} {target!r}" if flag else repr(target)


def _replaces(target: str, read: str, flag: str | None) -> str:
    same = "" if os.path.realpath(read) == target else f" (the same file as {read!r})"
    return (f"{flag + ': ' if flag else ''}{target!r}{same} is a file this command reads: an output never "
            "replaces an input (write it elsewhere)")


def read_input(path: str | os.PathLike[str], what: str, limit: int) -> bytes:
    """The bytes of an input file: the one way every reader of the library opens its inputs.

    The path (a symlink is followed) must be a regular file holding at most ``limit`` bytes:
    a directory, a FIFO, a device or a socket is refused before anything is read (a FIFO is
    opened non-blocking and checked again on the open descriptor, so a path swapped in between
    cannot block), and at most ``limit + 1`` bytes are ever read (a regular file that grows
    or whose size the kernel does not report, as in ``/proc``, is cut off there).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str
        What the file is (``"scenario file"``, ``"failure log"``), in the size message.
    limit : int
        The most bytes accepted (:data:`MAX_TOML_BYTES`, :data:`MAX_LOG_BYTES`).

    Raises
    ------
    InputFileError
        A ValueError with ``reason``: the OS error (missing, permission), the kind of a file
        that is not regular, or the size over ``limit``.

    Examples
    --------
    >>> read_input("/dev/zero", "scenario file", MAX_TOML_BYTES)
    Traceback (most recent call last):
    ...
    spare_core._files.InputFileError: '/dev/zero': a character device, not a regular file
    """
    p = os.fspath(path)
    over = f"over the {_mib(limit)} limit of a {what} (docs/cli.md, 'Input files')"
    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(p, f"{file_kind(st.st_mode)}, not a regular file")
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError(p, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(p, f"{file_kind(st.st_mode)}, not a regular file")
        book = _command[0]
        if book is not None:
            key = (st.st_dev, st.st_ino)
            out = book["outputs"].get(key)
            if out is not None:
                raise InputFileError(p, f"it is this command's output {out}: an output never replaces an input "
                                        "(write it elsewhere)")
            book["inputs"][key] = p
        if st.st_size > limit:
            raise InputFileError(p, f"{st.st_size:,} bytes, {over}")
        os.set_blocking(fd, True)
        chunks, n = [], 0
        while True:
            try:
                b = os.read(fd, min(1 << 20, limit + 1 - n))
            except OSError as exc:
                raise InputFileError(p, exc.strerror or str(exc)) from None
            if not b:
                break
            chunks.append(b)
            n += len(b)
            if n > limit:
                raise InputFileError(p, f"more than {limit:,} bytes, {over}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_duration(text: str) -> float:
    """Seconds in a duration written with a unit.

    Parameters
    ----------
    text : str
        A number and a unit: s, ms, min, h, d, w (and their long forms), e.g. ``"30 min"``.

    Returns
    -------
    float
        Seconds.

    Raises
    ------
    ValueError
        Not a number followed by a known unit.

    Examples
    --------
    >>> parse_duration("30 min"), parse_duration("1.5 h"), parse_duration("54 d")
    (1800.0, 5400.0, 4665600.0)
    """
    m = _DURATION.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"duration must be a number and a unit ({', '.join(sorted(set(_UNITS)))}), got {text!r}")
    return float(m.group(1).replace("_", "")) * _UNITS[m.group(2).lower()]


#: decimal and binary byte units (a storage bandwidth is quoted in decimal units)
_BYTE_UNITS = {"b": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
               "kib": 2.0**10, "mib": 2.0**20, "gib": 2.0**30, "tib": 2.0**40, "pib": 2.0**50}


def parse_bytes(text: str, *, per_second: bool = False) -> float:
    """Bytes (or bytes per second with ``per_second``) from ``"2.3 TB"`` (``"250 GB/s"``).

    Units: B, kB, MB, GB, TB, PB (powers of 1000) and KiB, MiB, GiB, TiB, PiB (of 1024), in any
    case; a bandwidth ends in ``/s``.

    Examples
    --------
    >>> parse_bytes("2.3 TB"), parse_bytes("250 GB/s", per_second=True), parse_bytes("1 GiB")
    (2300000000000.0, 250000000000.0, 1073741824.0)
    """
    t = text.strip().lower().replace(" ", "")
    if per_second:
        if not t.endswith("/s"):
            raise ValueError(f"a bandwidth ends in /s (e.g. '250 GB/s'), got {text!r}")
        t = t[:-2]
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)([a-z]+)", t)
    if m is None or m.group(2) not in _BYTE_UNITS:
        raise ValueError(f"not an amount of bytes with a unit ({', '.join(_BYTE_UNITS)}), got {text!r}")
    return float(m.group(1)) * _BYTE_UNITS[m.group(2)]


def duration_text(seconds: float) -> str:
    """A duration in the unit a person reads it in (the inverse of :func:`parse_duration`, rounded).

    Examples
    --------
    >>> duration_text(90), duration_text(600), duration_text(86400), duration_text(0)
    ('90 s', '10 min', '24 h', '0 s')
    """
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if abs(seconds) >= 2 * size or (unit == "min" and abs(seconds) >= 120):
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def bytes_text(amount: float, *, per_second: bool = False) -> str:
    """Bytes (per second) in decimal units (the inverse of :func:`parse_bytes`, rounded).

    Examples
    --------
    >>> bytes_text(2.3e12), bytes_text(2.5e11, per_second=True), bytes_text(512)
    ('2.3 TB', '250 GB/s', '512 B')
    """
    tail = "/s" if per_second else ""
    for unit in ("PB", "TB", "GB", "MB", "kB"):
        size = _BYTE_UNITS[unit.lower()]
        if abs(amount) >= size:
            return f"{amount / size:.3g} {unit}{tail}"
    return f"{amount:.3g} B{tail}"


class Reader:
    """Checks the values of one file, naming the file and the key in every error.

    Parameters
    ----------
    source : str
        The file, as named at the start of every message.
    error : type, default TomlFileError
        The :class:`TomlFileError` subclass raised (a scenario file's is
        ``ScenarioFileError``), so that a caller catches its own file's faults.

    Examples
    --------
    >>> rd = Reader("job.toml")
    >>> rd.duration("job.step_time", "2 min"), rd.integer("compare.seeds", 3.0)
    (120.0, 3)
    >>> rd.choice("failures.model", "nodes", ("node", "system"))
    Traceback (most recent call last):
    ...
    spare_core._files.TomlFileError: job.toml: failures.model must be one of ['node', 'system'], got 'nodes'
    """

    def __init__(self, source: str, error: type[TomlFileError] = TomlFileError) -> None:
        self.source = source
        self.error_type = error

    def error(self, message: str) -> TomlFileError:
        """The error ``"<source>: <message>"`` (to raise), for a fault that is not one value's."""
        return self.error_type(f"{self.source}: {message}")

    def fail(self, key: str, rule: str, value: Any) -> TomlFileError:
        """The error ``"<source>: <key> <rule>, got <value>"`` (to raise)."""
        return self.error_type(f"{self.source}: {key} {rule}, got {value!r}")

    def integer(self, key: str, value: Any, *, low: int = 1, high: int | None = None) -> int:
        """``value`` as an int in ``[low, high]`` (an integral float is taken: TOML ``3.0``)."""
        rule = f"must be an integer >= {low}" + ("" if high is None else f" and <= {high}")
        rng = range_of(key)  # the key's one range (spare_core._limits), as its flag's and a spec's
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and math.isfinite(value):
                value = int(value)
            else:
                raise self.fail(key, rule if rng is None else rng.rule(), value)
        if value < low or (high is not None and value > high):
            raise self.fail(key, rule, value)
        if rng is not None and not rng.contains(value):
            raise self.fail(key, rng.rule(), value)
        return int(value)

    def number(self, key: str, value: Any, *, low: float = 0.0, strict: bool = True, high: float | None = None,
               high_strict: bool = False) -> float:
        """``value`` as a finite float above ``low`` (``strict``: not equal) and up to ``high``."""
        bound = f"> {low:g}" if strict else f">= {low:g}"
        if high is not None:
            bound += f" and {'<' if high_strict else '<='} {high:g}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"must be a number {bound}", value)
        x = float(value)
        ok = math.isfinite(x) and (x > low if strict else x >= low)
        if ok and high is not None:
            ok = x < high if high_strict else x <= high
        if not ok:
            raise self.fail(key, f"must be a finite number {bound}", value)
        rng = range_of(key)
        if rng is not None and not rng.contains(x):
            raise self.fail(key, rng.rule(), value)
        return x

    def duration(self, key: str, value: Any, *, strict: bool = True) -> float:
        """Seconds: a number, or a string with a unit (:func:`parse_duration`); > 0 (``strict``) or >= 0."""
        rule = (f"must be a duration {'> 0' if strict else '>= 0'} (seconds, or a string such as "
                "'90 s', '30 min', '3.1 h', '54 d')")
        x = self._with_unit(key, value, rule, parse_duration)
        if not (math.isfinite(x) and (x > 0 if strict else x >= 0)):
            raise self.fail(key, rule, value)
        rng = range_of(key)
        if rng is not None and not rng.contains(x):
            raise self.fail(key, rng.rule(), value)
        return x

    def amount(self, key: str, value: Any, *, per_second: bool = False) -> float:
        """Bytes (bytes per second with ``per_second``) > 0: a number, or a string with a
        unit (:func:`parse_bytes`)."""
        rule = f"must be {'a bandwidth' if per_second else 'a size'} > 0 (bytes{' per second' if per_second else ''}, or " \
            f"a string such as {'250 GB/s' if per_second else '2.3 TB'!r})"
        x = self._with_unit(key, value, rule, lambda text: parse_bytes(text, per_second=per_second))
        if not (math.isfinite(x) and 0 < x <= 1e30):
            raise self.fail(key, rule, value)
        return x

    def _with_unit(self, key: str, value: Any, rule: str, parse: Any) -> float:
        """``value`` as a float: a number as it is, a string through ``parse`` (its unit); else
        the error ``rule``."""
        if isinstance(value, str):
            try:
                return float(parse(value))
            except ValueError:
                raise self.fail(key, rule, value) from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, rule, value)
        return float(value)

    def text(self, key: str, value: Any) -> str:
        """``value``, which must be a string."""
        if not isinstance(value, str):
            raise self.fail(key, "must be a string", value)
        return value

    def choice(self, key: str, value: Any, choices: Sequence[str]) -> str:
        """``value``, which must be one of ``choices``."""
        if not isinstance(value, str) or value not in choices:
            raise self.fail(key, f"must be one of {list(choices)}", value)
        return value


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str], *, source: str = "--set",
                    alternatives: Mapping[str, Sequence[str]] | None = None,
                    error: type[TomlFileError] = TomlFileError) -> dict[str, Any]:
    """A copy of ``data`` with overrides applied: ``KEY=VALUE`` text (``KEY`` dotted, ``VALUE``
    TOML, as ``--set`` gives them) or ``(KEY, value)`` pairs of values (a flag's, a sweep spec's
    grid value: never written out as text and parsed again).

    A text value that is not valid TOML is taken as a string (``failures.mtbf=2h``).

    Parameters
    ----------
    data : mapping
        The document.
    overrides : sequence of str or (str, value)
        ``NAME=VALUE`` or ``SECTION.NAME=VALUE`` items, or ``(KEY, value)`` pairs, applied in
        order.
    source : str
        Named in error messages.
    alternatives : mapping, optional
        ``"SECTION.NAME"`` -> the keys of that section an override of it removes (the other
        forms of the same quantity, which the file's owner knows).
    error : type, default TomlFileError
        The error raised for a malformed item.

    Examples
    --------
    >>> apply_overrides({"job": {"steps": 10, "tokens": 5}}, ["job.steps=20"], alternatives={"job.steps": ["tokens"]})
    {'job': {'steps': 20}}
    >>> apply_overrides({"job": {"steps": 10}}, [("job.steps", 30), ("compare.policies", ["ckpt"])])
    {'job': {'steps': 30}, 'compare': {'policies': ['ckpt']}}
    """
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()}
    for item in overrides:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            key, value = item[0].strip(), item[1]
        elif not isinstance(item, str):
            raise error(f"{source} items must be KEY=VALUE text or (KEY, value) pairs, got {item!r}")
        else:
            if "\n" in item or "\r" in item:
                # TOML would read the rest as more keys and keep only the first: 'k=v\nx=1' dropped x=1
                raise error(f"{source} item must be one line (one KEY=VALUE per --set), got {item!r}")
            if "=" not in item:
                raise error(f"{source} must be KEY=VALUE (e.g. failures.mtbf='2 h'), got {item!r}")
            key, raw = item.split("=", 1)
            key = key.strip()
            try:
                value = tomllib.loads(f"v = {raw}")["v"]
            except tomllib.TOMLDecodeError:
                value = raw.strip()
        parts = key.split(".")
        if not key or len(parts) > 3 or not all(parts):
            raise error(f"{source} key must be NAME, SECTION.NAME or SECTION.TABLE.NAME (e.g. policy.spare.offsets), "
                        f"got {key!r}")
        table = out
        for depth, part in enumerate(parts[:-1]):
            sub = table.get(part)
            if sub is None:
                sub = {}
            elif not isinstance(sub, dict):
                raise error(f"{source} {key}: [{'.'.join(parts[:depth + 1])}] is not a table, got {sub!r}")
            else:
                sub = dict(sub)  # a copy: the caller's tables are never changed
            table[part] = sub
            table = sub
        if len(parts) > 1:
            for other in (alternatives or {}).get(key, ()):
                table.pop(other, None)
        table[parts[-1]] = value
    return out


def read_toml(path: str | Path, what: str, error: type[TomlFileError] = TomlFileError) -> dict[str, Any]:
    """The table of a TOML file, or one clear error: the one reader of the product layer's files.

    Parameters
    ----------
    path : str or Path
        The file. A UTF-8 byte-order mark (as some Windows editors write) is skipped; CRLF line
        ends are plain TOML.
    what : str
        What the file is, for the messages (``"scenario file"``, ``"sweep spec"``).
    error : type, default TomlFileError
        The subclass of :class:`TomlFileError` raised, so that a caller's own error type
        (``ScenarioFileError``) keeps covering its file.

    Returns
    -------
    dict
        The parsed document.

    Raises
    ------
    TomlFileError
        The same for every fault, a ValueError: a missing or unreadable path, one that is not a
        regular file (a directory, FIFO or device) or holds more than :data:`MAX_TOML_BYTES`
        (``cannot read scenario file 'x.toml': No such file or directory``), bytes that are not
        UTF-8, or invalid TOML; the message names the file and, for the text, the line.
    """
    p = Path(path)
    try:
        raw = read_input(p, what, MAX_TOML_BYTES)
    except InputFileError as exc:
        raise error(f"cannot read {what} {str(p)!r}: {exc.reason}", str(p)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise error(f"{p}: line {line}: not a text (UTF-8) file (byte 0x{raw[exc.start]:02x})", str(p), line) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_LINE.search(str(exc))
        line = int(m.group(1)) if m else None
        where = f"line {line}" if line else "end of file"
        raise error(f"{p}: {where}: not valid TOML: {exc}", str(p), line) from None


def plain(data: Mapping[str, Any]) -> dict[str, Any]:
    """The table with TOML dates and times as ISO strings (JSON-friendly)."""
    def conv(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, (bool, int, float, str)) or v is None:
            return v
        return v.isoformat() if hasattr(v, "isoformat") else str(v)
    return {k: conv(v) for k, v in data.items()}
