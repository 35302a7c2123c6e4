"""The durable result store of a sweep: a Parquet dataset, one file per finished batch.

Layout of a store directory::

    DIR/store.json                    what this is (format, version), written once
    DIR/runs/part-<hash>.parquet      one finished batch of runs (the hash: of its run keys)
    DIR/runs/.part-*.tmp              a part being written (never read; removed on resume)
    DIR/.lock                         held (flock) by the one driver writing the store
    DIR/quarantine/                   damaged or foreign parts moved aside by a writer

A part is written to a temporary name, flushed to disk (fsync) and renamed into place
(``os.replace``, atomic on POSIX filesystems), so a reader sees a part whole or not at
all: a driver killed mid-write leaves only a ``.tmp`` file, which no reader counts and the
next writer removes. Only the driver writes (workers return rows to it), and an exclusive
lock keeps a second driver out, so no run is stored twice; :meth:`ResultStore.read` drops
repeated keys all the same (a defence, counted in ``duplicates``).

Every part is written with Parquet page checksums (CRC-32 of each page) and every read
checks them, the part's schema (the columns of a stored run, :data:`STORE_COLUMNS
<spare_core.sim.executor.STORE_COLUMNS>`, with their types) and its name (the hash of the
keys it holds). A part that fails any check (damaged, truncated, foreign, another schema, not
a file) is never merged: readers skip it with a :class:`StoreWarning` naming its path and the
reason, and a writer (:meth:`ResultStore.open_for_writing`) moves it to ``DIR/quarantine/``,
so that the runs it held are simulated again.

Why Parquet rather than SQLite or DuckDB: the store must be readable while a sweep writes it
(aggregation reads finished parts, no lock needed), live on the shared filesystems clusters
have (SQLite's locking is unreliable on NFS; an atomic rename is not), and be what the
analysis tools of a parameter study read directly (pandas, polars, DuckDB, Spark read a
directory of Parquet files). One file per batch, not per run, keeps the file count small.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import uuid
import warnings
from pathlib import Path

from .._files import note_input

__all__ = ["ResultStore", "StoreError", "StoreWriteError", "StoreWarning"]

_FORMAT = "spare_core sweep store"
_VERSION = 1
# bytes asked for per stored run by the free-space check before a sweep: about twice the
# ~94 B a run measured on the 10^5-run sweep of docs/sweeps.md (small parts compress less)
_BYTES_PER_RUN = 200
_MIN_FREE = 16 << 20


class StoreError(OSError):
    """The store cannot be used (not writable, full, in use, not a store)."""


class StoreWriteError(StoreError):
    """Writing a batch failed after the store was opened and checked (the disk filled up, the
    file system went read-only mid-sweep): an environment fault, not a bad argument (the
    ``spare`` command exits with status 1; the parts written before are kept)."""


class StoreWarning(UserWarning):
    """A part of the store was skipped (reading) or quarantined (writing): damaged or foreign."""


class _BadPart(Exception):
    """A part that fails a check (the message says which)."""


_PART_NAME = re.compile(r"part-([0-9a-f]{32})\.parquet")
_HEX_KEY = re.compile(r"[0-9a-f]{64}")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def _schema():
    """``(kinds, older, derived)`` of a stored run, from the columns declared on
    :class:`~spare_core.sim.RunResult` (:func:`spare_core._results.columns`): column name ->
    what its type must be ("string", "uint", "number", "bool"); the columns added after stores
    were first written -> the value a run stored before them holds (its scenario had no
    repairs, memory tier or price), filled in when an older part is read instead of setting it
    aside; and the derived columns, which an older part is given computed from its others."""
    from .._results import columns
    from ..sim.executor import STORE_COLUMNS
    from ..sim.run import RunResult

    declared = {c.name: c for c in columns(RunResult)}
    kinds = {}
    for c in STORE_COLUMNS:
        col = declared.get(c)
        if c == "seed":
            kinds[c] = "uint"
        elif col is None:  # key, group and scenario keys, JSON, source, interval setting
            kinds[c] = "string"
        else:
            kinds[c] = {"text": "string", "bool": "bool", "int": "number", "float": "number"}.get(col.kind, "any")
    older = {c.name: c.older for c in declared.values() if c.name in kinds and not c.required and not c.derived}
    derived = {c.name: c.kind for c in declared.values() if c.derived and c.name in kinds}
    return kinds, older, derived


#: columns a part holds besides a run's (the version that wrote it: provenance)
_EXTRA_COLUMNS = ("spare_core_version",)


def _fill_older(table, names, older: dict):
    """A part written before some columns existed, with them: each added column at the value
    its runs held then (the column's declared ``older``)."""
    pa, _ = require_pyarrow()
    for c, value in older.items():
        if c not in names:
            table = table.append_column(c, pa.array([value] * table.num_rows,
                                                    type=pa.float64() if isinstance(value, float) else pa.int64()))
    return table


def _derive_missing(table, derived: dict):
    """A checked part written before some derived columns existed, with them: computed from
    its other columns by the RunResult's own properties (one formula)."""
    pa, _ = require_pyarrow()
    lacking = [c for c in derived if c not in table.schema.names]
    if lacking:
        from ..sim.executor import stored_run

        runs = [stored_run(row) for row in table.to_pylist()]
        types = {"float": pa.float64(), "int": pa.int64(), "bool": pa.bool_(), "text": pa.string()}
        for c in lacking:
            table = table.append_column(c, pa.array([getattr(r, c) for r in runs], type=types[derived[c]]))
    return table


def _type_ok(t, kind) -> bool:
    import pyarrow.types as pt

    if kind == "any":
        return True
    if pt.is_null(t):  # a column of nulls: only where text may be missing
        return kind == "string"
    if kind == "string":
        return pt.is_string(t) or pt.is_large_string(t)
    if kind == "uint":
        return pt.is_integer(t)
    if kind == "bool":
        return pt.is_boolean(t)
    return pt.is_integer(t) or pt.is_floating(t)


def require_pyarrow():
    """``(pyarrow, pyarrow.parquet)``, or an ImportError saying which extra installs them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - the sweep extra is installed by the tests
        raise ImportError("the sweep store needs pyarrow: pip install 'spare_core[sweep]'") from None
    return pa, pq


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ResultStore:
    """A directory of Parquet parts holding the runs of one or more sweeps.

    Parameters
    ----------
    path : str or os.PathLike
        The store directory (created by :meth:`open_for_writing` if missing).

    Examples
    --------
    >>> import tempfile
    >>> store = ResultStore(tempfile.mkdtemp())
    >>> len(store.keys())
    0
    """

    def __init__(self, path):
        self.path = Path(path)
        self._lock_fd = None
        self.skipped: list = []  # (part, reason) of the last read or keys()
        self.quarantined: list = []  # (part, reason, new path) of the last open_for_writing()
        self.duplicates = 0
        self._checked: dict = {}  # part -> (size, mtime_ns, inode) when it passed every check

    @staticmethod
    def warm_up() -> None:
        """Import pyarrow and build one array: its first array imports pandas when installed
        (a one-off cost per process), so that the first part written does not pay it."""
        pa, _ = require_pyarrow()
        pa.array([0])

    @property
    def runs_dir(self) -> Path:
        return self.path / "runs"

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    # -- writing ---------------------------------------------------------------------------
    def open_for_writing(self, expected_runs: int = 0) -> None:
        """Create or check the store, take its lock and check it can take ``expected_runs``.

        Raises
        ------
        StoreError
            Not a directory or not writable, another driver holds it, a directory that is
            not a store, or less free space than the runs need; before any simulation.
        """
        import fcntl

        p = self.path
        try:
            if p.exists() and not p.is_dir():
                raise StoreError(f"store {str(p)!r} is not a directory")
            self.runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            if isinstance(e, StoreError):
                raise
            raise StoreError(f"store {str(p)!r} cannot be created: {e.strerror or e}") from None
        manifest = p / "store.json"
        if manifest.exists():
            note_input(manifest)  # an output of the command (spare sweep --json) never replaces it
            try:
                doc = json.loads(manifest.read_text())
                ok = doc.get("format") == _FORMAT
            except (OSError, ValueError, AttributeError):
                ok = False
            if not ok:
                raise StoreError(f"store {str(p)!r} has a store.json that is not a {_FORMAT}")
        elif any(x for x in p.iterdir() if x.name not in ("runs", ".lock")):
            raise StoreError(f"store {str(p)!r} is a non-empty directory that is not a sweep store")
        try:
            fd = os.open(p / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise StoreError(f"store {str(p)!r} is not writable: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreError(f"store {str(p)!r} is in use by another sweep (its lock is held)") from None
        self._lock_fd = fd
        try:
            need = _MIN_FREE + _BYTES_PER_RUN * max(0, int(expected_runs))
            free = shutil.disk_usage(p).free
            if free < need:
                raise StoreError(f"store {str(p)!r} has {free / 1e6:.1f} MB free, the sweep needs about "
                                 f"{need / 1e6:.1f} MB")
            self._probe()
            if not manifest.exists():
                self._atomic_write(manifest, json.dumps({"format": _FORMAT, "version": _VERSION}).encode())
            for stale in self.runs_dir.glob(".part-*.tmp"):  # torn writes of a killed driver
                stale.unlink()
            self.quarantine_bad_parts()  # damaged or foreign parts: aside, their runs redone
        except BaseException:
            self.close()
            raise

    def _probe(self) -> None:
        """Write, sync and remove a small file: a read-only or full disk fails here."""
        probe = self.runs_dir / f".probe-{uuid.uuid4().hex}.tmp"
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * 65536)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as e:
            what = "is full" if e.errno in (errno.ENOSPC, errno.EDQUOT) else "is not writable"
            raise StoreError(f"store {str(self.path)!r} {what}: {e.strerror or e}") from None
        finally:
            try:
                probe.unlink()
            except OSError:
                pass

    def _atomic_write(self, target: Path, data: bytes) -> None:
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        _fsync_dir(target.parent)

    def close(self) -> None:
        """Release the lock (also released when the process dies)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def write(self, columns: dict) -> Path:
        """Store one batch of runs (``columns``: name -> list, a ``key`` column among them)
        as one part, atomically. Returns the part's path."""
        if self._lock_fd is None:
            raise StoreError("open_for_writing() the store before writing to it")
        pa, pq = require_pyarrow()
        # seeds as uint64: every seed a keyed study accepts (0 .. 2**64 - 1) stores
        table = pa.table({k: pa.array(v, pa.uint64()) if k == "seed" else v for k, v in columns.items()})
        digest = hashlib.sha256("\n".join(sorted(columns["key"])).encode()).hexdigest()[:32]
        final = self.runs_dir / f"part-{digest}.parquet"
        tmp = self.runs_dir / f".part-{digest}-{uuid.uuid4().hex[:8]}.tmp"
        try:
            # encoded in memory and written in one call (pyarrow's many small writes to a
            # file cost several times the encoding); no column statistics: keys and JSON are
            # long strings nobody filters on by range; a CRC-32 per page, checked on every read
            buf = pa.BufferOutputStream()
            pq.write_table(table, buf, compression="zstd", write_statistics=False, write_page_checksum=True)
            with open(tmp, "wb") as fh:
                fh.write(buf.getvalue().to_pybytes())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except OSError as e:
            try:
                tmp.unlink()
            except OSError:
                pass
            raise StoreWriteError(f"store {str(self.path)!r}: writing a part failed: {e.strerror or e}") from e
        _fsync_dir(self.runs_dir)
        return final

    # -- reading ---------------------------------------------------------------------------
    def check_store(self) -> None:
        """Raise :class:`StoreError` unless the path is a sweep store (a directory with this
        format's ``store.json``): what a reader of something else is told, in one line."""
        p = self.path
        if not p.is_dir():
            raise StoreError(f"store {str(p)!r} does not exist or is not a directory")
        manifest = p / "store.json"
        note_input(manifest)
        try:
            doc = json.loads(manifest.read_text(encoding="utf-8"))
            ok = isinstance(doc, dict) and doc.get("format") == _FORMAT
        except FileNotFoundError:
            raise StoreError(f"{str(p)!r} is not a sweep store (it has no store.json)") from None
        except (OSError, ValueError):
            ok = False
        if not ok:
            raise StoreError(f"{str(p)!r} is not a sweep store (its store.json is not a {_FORMAT})")

    def parts(self) -> list:
        """The finished parts (sorted by name); temporary files are never listed, nor what
        does not have a part's name (stray files are not the store's)."""
        if not self.runs_dir.is_dir():
            return []
        return sorted(p for p in self.runs_dir.glob("part-*.parquet"))

    def _read_part(self, path: Path, schema_of_runs: tuple):
        """The whole part as a table, every check passed; :class:`_BadPart` otherwise."""
        pa, pq = require_pyarrow()
        kinds, older, derived = schema_of_runs
        if not path.is_file():
            raise _BadPart("is not a regular file")
        try:
            schema = pq.read_schema(path)
            names = list(schema.names)
        except Exception as e:  # truncated, not Parquet, a footer that does not decode
            raise _BadPart(f"is not a readable Parquet file ({_first_line(e)})") from None
        if len(set(names)) != len(names):
            raise _BadPart("has repeated column names")
        missing = [c for c in kinds if c not in names and c not in older and c not in derived]
        if missing:
            raise _BadPart(f"is not a part of a sweep store (no column {missing[0]!r})")
        # a column added since is filled in for a part written before it, which knew no other
        # names: a name it does not know beside one it lacks is a damaged name, not an old part
        absent = [c for c in kinds if c not in names]
        unknown = [c for c in names if c not in kinds and c not in _EXTRA_COLUMNS]
        if absent and unknown:
            raise _BadPart(f"has no column {absent[0]!r} but an unknown one, {unknown[0]!r}")
        for c, kind in kinds.items():
            if c not in names:
                continue  # a column added after the part was written (filled in below)
            t = schema.field(c).type
            if not _type_ok(t, kind):
                raise _BadPart(f"has column {c!r} of type {t}, not {kind}")
        note_input(path)  # a part the report reads: never an output's target
        try:
            table = pq.read_table(path, page_checksum_verification=True, use_threads=False)
        except Exception as e:  # a page checksum, a page that does not decode
            raise _BadPart(f"is damaged ({_first_line(e)})") from None
        if table.schema.names != names:
            raise _BadPart("changed its columns between two reads")
        table = _fill_older(table, names, older)
        for c, kind in kinds.items():
            if kind in ("number", "bool", "uint") and c in table.schema.names and table.column(c).null_count:
                raise _BadPart(f"has missing values in column {c!r}")
        keys = table.column("key")
        if keys.null_count:
            raise _BadPart("has runs without a key")
        klist = keys.to_pylist()
        if not all(isinstance(k, str) and _HEX_KEY.fullmatch(k) for k in klist):
            raise _BadPart("has keys that are not SHA-256 hex digests")
        m = _PART_NAME.fullmatch(path.name)
        if m is None:
            raise _BadPart("is not named part-<hash of its keys>.parquet")
        if hashlib.sha256("\n".join(sorted(klist)).encode()).hexdigest()[:32] != m.group(1):
            raise _BadPart("holds other keys than its name says")
        seed = table.column("seed")
        if seed.type != pa.uint64():  # parts written before the uint64 column: int64
            import pyarrow.compute as pc

            if len(seed) and pc.min(seed).as_py() < 0:
                raise _BadPart("has negative seeds")
            table = table.set_column(names.index("seed"), "seed", seed.cast(pa.uint64()))
        return _derive_missing(table, derived)

    def _good_parts(self, on_bad, keys_only=False):
        """``[(path, table)]`` of the parts that pass every check; ``on_bad(path, reason)``
        for the others. ``keys_only``: a part this object has checked whole and that has not
        changed since (same size, mtime, inode) is read back by its key column alone (still
        checksummed): a writer's resumption checks each part whole once, not twice."""
        _, pq = require_pyarrow()
        kinds = _schema()
        out = []
        for part in self.parts():
            try:
                st = part.stat()
                sig = (st.st_size, st.st_mtime_ns, st.st_ino)
            except OSError:
                sig = None
            if keys_only and sig is not None and self._checked.get(part) == sig:
                try:
                    out.append((part, pq.read_table(part, columns=["key"], page_checksum_verification=True,
                                                                use_threads=False)))
                    continue
                except Exception:
                    pass  # changed under us after all: the whole check below says how
            try:
                out.append((part, self._read_part(part, kinds)))
                if sig is not None:
                    self._checked[part] = sig
            except _BadPart as e:
                self._checked.pop(part, None)
                on_bad(part, str(e))
        return out

    def _skip(self, part: Path, reason: str) -> None:
        self.skipped.append((part, reason))
        warnings.warn(f"store {str(self.path)!r}: skipped part {str(part)!r}: it {reason}", StoreWarning, stacklevel=4)

    def quarantine_bad_parts(self) -> list:
        """Move every part that fails a check to ``DIR/quarantine/`` (the writer holds the
        lock); ``[(part, reason, new path)]``, each also a :class:`StoreWarning`."""
        if self._lock_fd is None:
            raise StoreError("open_for_writing() the store before quarantining parts")
        moved = []

        def move(part, reason):
            qdir = self.path / "quarantine"
            qdir.mkdir(exist_ok=True)
            target = qdir / part.name
            if target.exists() or target.is_symlink():
                target = qdir / f"{part.name}.{uuid.uuid4().hex[:8]}"
            os.replace(part, target)
            moved.append((part, reason, target))
            warnings.warn(f"store {str(self.path)!r}: part {str(part)!r} {reason}: moved to {str(target)!r}; "
                          "its runs will be simulated again", StoreWarning, stacklevel=4)

        self._good_parts(move)
        if moved:
            _fsync_dir(self.runs_dir)
        self.quarantined = moved
        return moved

    def keys(self) -> set:
        """The run keys of the parts that pass every check."""
        self.skipped = []
        out: set = set()
        for _, t in self._good_parts(self._skip, keys_only=True):
            out.update(t.column("key").to_pylist())
        return out

    def read(self, columns=None):
        """Every stored run as one ``pyarrow.Table`` (a repeated key kept once).

        Only parts that pass every check are read (page checksums, schema, name); each part
        skipped is a :class:`StoreWarning` and an entry ``(path, reason)`` of ``skipped``.

        Parameters
        ----------
        columns : list of str, optional
            Only these columns (``key`` is always read).
        """
        pa, _ = require_pyarrow()
        self.skipped = []
        cols = None if columns is None else list(dict.fromkeys(["key", *columns]))
        tables = [t if cols is None else t.select(cols) for _, t in self._good_parts(self._skip)]
        self.duplicates = 0
        if not tables:
            return pa.table({"key": pa.array([], pa.string())})
        table = pa.concat_tables(tables, promote_options="permissive")
        keys = table.column("key").to_pylist()
        first = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        self.duplicates = len(keys) - len(first)
        if self.duplicates:
            table = table.take(sorted(first.values()))
        return table

    def size_bytes(self) -> int:
        """Bytes of the finished parts."""
        return sum(p.stat().st_size for p in self.parts())
