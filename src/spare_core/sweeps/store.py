"""The durable result store of a sweep: a Parquet dataset, one file per finished batch.

Layout of a store directory::

    DIR/store.json                    what this is (format, version), written once
    DIR/runs/part-<hash>.parquet      one finished batch of runs (the hash: of its run keys)
    DIR/runs/.part-*.tmp              a part being written (never read; removed on resume)
    DIR/.lock                         held (flock) by the one driver writing the store

A part is written to a temporary name, flushed to disk (fsync) and renamed into place
(``os.replace``, atomic on POSIX filesystems), so a reader sees a part whole or not at
all: a driver killed mid-write leaves only a ``.tmp`` file, which no reader counts and the
next writer removes. Only the driver writes (workers return rows to it), and an exclusive
lock keeps a second driver out, so no run is stored twice; :meth:`ResultStore.read` drops
repeated keys all the same (a defence, counted in ``duplicates``).

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
import shutil
import uuid
from pathlib import Path

__all__ = ["ResultStore", "StoreError"]

_FORMAT = "spare_core sweep store"
_VERSION = 1
# bytes asked for per stored run by the free-space check before a sweep: about twice the
# ~94 B a run measured on the 10^5-run sweep of docs/sweeps.md (small parts compress less)
_BYTES_PER_RUN = 200
_MIN_FREE = 16 << 20


class StoreError(OSError):
    """The store cannot be used (not writable, full, in use, not a store)."""


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
        table = pa.table(columns)
        digest = hashlib.sha256("\n".join(sorted(columns["key"])).encode()).hexdigest()[:32]
        final = self.runs_dir / f"part-{digest}.parquet"
        tmp = self.runs_dir / f".part-{digest}-{uuid.uuid4().hex[:8]}.tmp"
        try:
            # encoded in memory and written in one call (pyarrow's many small writes to a
            # file cost several times the encoding); no column statistics: keys and JSON are
            # long strings nobody filters on by range
            buf = pa.BufferOutputStream()
            pq.write_table(table, buf, compression="zstd", write_statistics=False)
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
            raise StoreError(f"store {str(self.path)!r}: writing a part failed: {e.strerror or e}") from e
        _fsync_dir(self.runs_dir)
        return final

    # -- reading ---------------------------------------------------------------------------
    def parts(self) -> list:
        """The finished parts (sorted by name); temporary files are never listed."""
        if not self.runs_dir.is_dir():
            return []
        return sorted(p for p in self.runs_dir.glob("part-*.parquet"))

    def keys(self) -> set:
        """The run keys stored so far."""
        _, pq = require_pyarrow()
        out: set = set()
        for part in self.parts():
            out.update(pq.read_table(part, columns=["key"]).column("key").to_pylist())
        return out

    def read(self, columns=None):
        """Every stored run as one ``pyarrow.Table`` (a repeated key kept once).

        Parameters
        ----------
        columns : list of str, optional
            Only these columns (``key`` is always read).
        """
        pa, pq = require_pyarrow()
        cols = None if columns is None else list(dict.fromkeys(["key", *columns]))
        tables = [pq.read_table(p, columns=cols) for p in self.parts()]
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
