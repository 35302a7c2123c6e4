"""The one writer of output files: every file the library or the ``spare`` command writes
(``--json``/``--csv``/``--parquet``, the sweep report's ``--json``, the ``--plot`` pictures,
``PacingSweepResult.to_json``) goes through :func:`write_atomic`.

The rules (docs/cli.md, "Outputs"):

- **through symlinks**: a path that is a symlink (or a chain of them) is written at its final
  target, the link stays a link; a dangling link creates its target;
- **regular files only**: a target that exists and is a directory, a FIFO, a device or a
  socket is refused (:class:`OutputError`, one line), checked before any work
  (:func:`check_output`) and again when the file is written; nothing is ever written to it;
- **atomic**: the bytes go to a temporary file next to the target (``.NAME.XXXXXXXX.tmp``,
  created with ``O_EXCL``), flushed to disk and renamed over the target, so a reader, a
  SIGKILL or a Ctrl-C sees the old file or the new one, never half of one (a SIGKILL can leave
  the temporary file behind, never a torn target);
- **the umask**: a new file gets mode ``0o666 & ~umask`` (as ``open(path, "w")`` would); an
  existing file keeps its permission bits;
- **strict JSON**: :func:`strict_json` writes no ``Infinity`` or ``NaN`` token: a non-finite
  number becomes ``null`` and the object holding it says why under ``"null_reasons"``;
- **never an input**: within a ``spare`` command (``_files.command_files``) an output that is a
  file the command reads (the same device and inode: through a symlink or a hard link too) is
  refused, whichever of the two the command meets first;
- **"-" is standard output**, as for every Unix tool (a file named ``-`` is ``./-``): the bytes
  go to the stream :func:`stdout_to` names (the process's stdout otherwise), flushed, nothing
  else checked (a pipe, a terminal). The ``spare`` command then prints its report on stderr.

Infrastructure: any layer may write through it; nothing here knows what a file holds.
"""
from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import secrets
import stat
import sys
from typing import Any, Callable, Iterator, Mapping, TextIO

from ._files import claim_output, file_kind, input_named

__all__ = ["OutputError", "output_target", "check_output", "write_atomic", "strict_json", "json_safe",
           "write_json", "NULL_REASONS", "STDOUT", "stdout_to"]

#: the path that means standard output
STDOUT = "-"

# where a write to "-" goes while the ``spare`` command prints its report elsewhere (None: sys.stdout)
_stdout: list[TextIO | None] = [None]


@contextlib.contextmanager
def stdout_to(stream: TextIO) -> Iterator[None]:
    """Within the block, a write to ``"-"`` goes to ``stream`` (the real stdout, while
    ``sys.stdout`` is pointed at stderr for the human-readable report)."""
    before = _stdout[0]
    _stdout[0] = stream
    try:
        yield
    finally:
        _stdout[0] = before


def _write_stdout(data: bytes | Callable[[Any], None]) -> str:
    stream = _stdout[0] or sys.stdout
    stream.flush()
    raw = getattr(stream, "buffer", None)
    if raw is None:  # a text-only stream (io.StringIO): decode what was written
        import io

        sink = io.BytesIO()
        if callable(data):
            data(sink)
        else:
            sink.write(data)
        stream.write(sink.getvalue().decode("utf-8", "replace"))
    elif callable(data):
        data(raw)
    else:
        raw.write(data)
    (raw or stream).flush()
    return STDOUT

#: the key under which an object of a strict JSON document says why some of its values are null
NULL_REASONS = "null_reasons"


class OutputError(ValueError):
    """An output path that cannot be written as the rules say; the message is one line naming
    the path (and the flag, when one is given)."""


def _fail(flag: str | None, message: str) -> OutputError:
    return OutputError(f"{flag}: {message}" if flag else message)


def output_target(path: str | os.PathLike[str], flag: str | None = None) -> str:
    """The file a write to ``path`` lands in: ``path`` itself, or the final target of a symlink
    (chain), as an absolute path. A symlink loop or a target that exists and is not a regular
    file raises :class:`OutputError`."""
    p = os.fspath(path)
    if not p or not p.strip():
        raise _fail(flag, f"must be a file path, got {p!r}")
    target = os.path.realpath(p)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _fail(flag, f"{p!r} is a symlink loop") from None
        raise _fail(flag, f"cannot write {p!r}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise _fail(flag, f"must be a file path, not a directory: {p!r}")
    if not stat.S_ISREG(st.st_mode):
        via = "" if target == os.path.abspath(p) else f" (through the symlink {p!r})"
        raise _fail(flag, f"{target!r}{via} is {file_kind(st.st_mode)}: outputs are written only to regular files "
                          "(refused; write a file and copy it there)")
    if input_named(target) is not None:  # within a command: a file it read (spare_core._files.command_files)
        try:
            claim_output(target, flag)
        except ValueError as exc:
            raise OutputError(str(exc)) from None
    return target


def check_output(path: str | os.PathLike[str] | None, flag: str | None = None) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written by :func:`write_atomic`:
    checked before any work, nothing is created."""
    if path is None:
        return
    p = os.fspath(path)
    if p == STDOUT:
        return
    target = output_target(p, flag)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise _fail(flag, f"the directory {parent!r} does not exist (for {p!r})")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise _fail(flag, f"the directory {parent!r} is not writable (for {p!r}; the file is replaced by a "
                          "rename there)")
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise _fail(flag, f"the file {p!r} exists and is not writable")
    try:
        claim_output(target, flag)  # not an input of the command; and an input read later is not it
    except ValueError as exc:
        raise OutputError(str(exc)) from None


def write_atomic(path: str | os.PathLike[str], data: bytes | Callable[[Any], None], flag: str | None = None) -> str:
    """Write ``data`` (bytes, or a function writing into a binary file object) to ``path`` by
    the rules of this module; return the file written (the symlink's target for a symlink,
    ``"-"`` for standard output).

    Raises
    ------
    OutputError
        The target is not a regular file (it may have become one since :func:`check_output`).
    OSError
        The disk is full, the directory not writable, ...: the target is left as it was.
    """
    if os.fspath(path) == STDOUT:
        return _write_stdout(data)
    target = output_target(path, flag)
    parent, name = os.path.split(target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    while True:
        tmp = os.path.join(parent, f".{name[:200]}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the kernel applies the umask
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            if callable(data):
                data(fh)
            else:
                fh.write(data)
            fh.flush()
            try:
                os.fsync(fh.fileno())
            except OSError:  # a file system without fsync: the rename is still atomic
                pass
        output_target(path, flag)  # still a regular file (or nothing) at the last moment
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


def _reason(key: str, value: float, reasons: Mapping[str, Mapping[str, str]] | None) -> str:
    what = "nan" if value != value else ("inf" if value > 0 else "-inf")
    base = key.split("[", 1)[0]
    given = (reasons or {}).get(base, {}).get(what)
    return given or f"the value was {what}, which JSON cannot hold"


def json_safe(value: Any, reasons: Mapping[str, Mapping[str, str]] | None = None) -> Any:
    """``value`` as plain JSON values with every float finite: a non-finite float becomes None,
    and the dict holding it (directly or in a list) gets ``"null_reasons": {key: why}``.

    ``reasons`` maps a key to the reason of each kind of value (``{"ratio_mean": {"inf": "..."}}``;
    ``"null"``: the reason of a None already there, for a key whose None has one meaning);
    without one the reason says what the value was (``"the value was inf, ..."``). numpy
    scalars become Python scalars, tuples lists, dict keys strings.

    Examples
    --------
    >>> json_safe({"ratio": float("inf"), "ok": 1.5}, {"ratio": {"inf": "unfinished"}})
    {'ratio': None, 'ok': 1.5, 'null_reasons': {'ratio': 'unfinished'}}
    """
    def conv(v: Any, key: str, why: dict[str, str]) -> Any:
        if hasattr(v, "item") and callable(v.item) and not isinstance(v, (list, tuple, dict)):
            try:
                v = v.item()  # numpy scalars
            except (TypeError, ValueError):
                pass
        if isinstance(v, float) and not math.isfinite(v):
            why[key] = _reason(key, v, reasons)
            return None
        if v is None and "null" in (reasons or {}).get(key, {}):  # made None upstream (a to_dict)
            why[key] = reasons[key]["null"]  # type: ignore[index]
            return None
        if isinstance(v, Mapping):
            return obj(v)
        if isinstance(v, (list, tuple)):
            return [conv(x, f"{key}[{i}]", why) for i, x in enumerate(v)]
        return v

    def obj(d: Mapping[Any, Any]) -> dict[str, Any]:
        why: dict[str, str] = {}
        out = {str(k): conv(v, str(k), why) for k, v in d.items()}
        if why:
            prior = out.get(NULL_REASONS)
            out[NULL_REASONS] = {**(prior if isinstance(prior, dict) else {}), **why}
        return out

    if isinstance(value, Mapping):
        return obj(value)
    why: dict[str, str] = {}
    return conv(value, "value", why)


def strict_json(doc: Any, *, indent: int | None = 1, reasons: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """``doc`` as JSON text without ``Infinity``/``NaN`` tokens (:func:`json_safe`)."""
    return json.dumps(json_safe(doc, reasons), indent=indent, allow_nan=False)


def write_json(path: str | os.PathLike[str], doc: Any, *, reasons: Mapping[str, Mapping[str, str]] | None = None,
               indent: int | None = 1, flag: str | None = None) -> str:
    """``doc`` as strict JSON (:func:`strict_json`), written by :func:`write_atomic`."""
    return write_atomic(path, (strict_json(doc, indent=indent, reasons=reasons) + "\n").encode("utf-8"), flag)
