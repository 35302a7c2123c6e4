"""Reading and checking a job's operation trace (Parquet, CSV or in-memory columns).

Every problem is one :class:`TraceError` line naming the row (1-based, header excluded) and the
column. The work is bounded before anything is decoded: the file through
:func:`spare_core._files.read_input` (at most :data:`MAX_TRACE_BYTES`), the rows of a Parquet file
from its footer (at most :data:`MAX_TRACE_ROWS`), and the dense per-step arrays hold exactly one
cell per row.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .._files import InputFileError, read_input
from ._schema import CODE, OPTIONAL, OPTYPES, REQUIRED

__all__ = ["TraceError", "JobSizes", "Trace", "read_trace", "read_meta", "MAX_TRACE_BYTES", "MAX_TRACE_ROWS"]

#: the most bytes of a trace file (Parquet or CSV): a 16,384-GPU job's 10 steps are ~150 MB of Parquet
MAX_TRACE_BYTES = 1 << 30
#: the most rows (operations) of a trace: about 100 bytes each while it is checked (1.7 GB at the cap)
MAX_TRACE_ROWS = 1 << 24
#: the most bytes of a meta file (a few lines)
MAX_META_BYTES = 1 << 16

_INT_COLUMNS = ("dp_rank", "stage", "rank", "step", "seq_id", "mc", "gmc", "mb_id")


class TraceError(ValueError):
    """A trace or meta file that cannot be analysed: one line naming the row and column."""


@dataclass(frozen=True)
class JobSizes:
    """The parallel layout of a job: ``dp × pp`` workers in the trace (one per TP×CP group).

    Attributes
    ----------
    dp, pp : int
        Data-parallel and pipeline-parallel sizes: the trace holds one worker per
        (``dp_rank``, ``stage``).
    tp, cp : int
        Tensor- and context-parallel sizes (the artifact's ``dsp_size``): the GPUs each worker
        of the trace stands for.
    vpp : int
        Model chunks per stage (interleaved schedule; 1 = plain 1F1B).
    world_size : int
        ``dp * pp * tp * cp`` GPUs.
    name : str
        The job's name (the meta file's ``trial_name``), or "".
    """

    dp: int
    pp: int
    tp: int = 1
    cp: int = 1
    vpp: int = 1
    name: str = ""
    world_size: int = field(init=False)

    def __post_init__(self) -> None:
        for key in ("dp", "pp", "tp", "cp", "vpp"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 2**31 - 1:
                raise TraceError(f"{key} must be an integer >= 1, got {v!r}")
        object.__setattr__(self, "world_size", self.dp * self.pp * self.tp * self.cp)

    def to_dict(self) -> dict[str, Any]:
        """The sizes as a JSON-ready dict."""
        return {"dp": self.dp, "pp": self.pp, "tp": self.tp, "cp": self.cp, "vpp": self.vpp,
                "world_size": self.world_size, "name": self.name}


_META_KEYS = {"dp_size": "dp", "dp": "dp", "pp_size": "pp", "pp": "pp", "tp_size": "tp", "tp": "tp",
              "dsp_size": "cp", "cp_size": "cp", "cp": "cp", "vpp_size": "vpp", "vpp": "vpp",
              "world_size": "world_size", "trial_name": "name", "name": "name", "run_id": None}


def _flat_yaml(text: str, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip() or line.strip() == "---":
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$", line)
        if m is None or line[:1].isspace():
            raise TraceError(f"meta file {path!r}: line {no}: expected 'key: value' (a flat YAML mapping), got {raw.strip()!r}")
        key, value = m.group(1), m.group(2).strip().strip("'\"")
        out[key] = int(value) if re.fullmatch(r"[+-]?\d+", value) else value
    return out


def read_meta(path: str | os.PathLike[str]) -> JobSizes:
    """The job's sizes from a meta file: flat YAML (``key: value`` lines, the artifact's
    ``meta-*.yaml``), JSON (``.json``) or TOML (``.toml``).

    Keys: ``dp_size``, ``pp_size``, ``tp_size``, ``dsp_size`` (or ``cp_size``), ``vpp_size``,
    ``world_size`` (checked: the product of the sizes), ``trial_name``; the short forms
    ``dp``, ``pp``, ``tp``, ``cp``, ``vpp`` too. Other keys are refused.

    Raises
    ------
    TraceError
        An unreadable file, a line that is not ``key: value``, an unknown key, a size that is
        not a positive integer, or a ``world_size`` the sizes do not multiply to.
    """
    p = os.fspath(path)
    try:
        text = read_input(p, "meta file", MAX_META_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise TraceError(f"cannot read meta file {p!r}: {exc.reason}") from None
    except UnicodeDecodeError:
        raise TraceError(f"meta file {p!r}: not UTF-8 text") from None
    if p.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise TraceError(f"meta file {p!r}: not JSON: {exc}") from None
    elif p.endswith(".toml"):
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise TraceError(f"meta file {p!r}: not TOML: {exc}") from None
    else:
        data = _flat_yaml(text, p)
    if not isinstance(data, dict):
        raise TraceError(f"meta file {p!r}: expected a mapping of keys to values")
    sizes: dict[str, Any] = {}
    world = None
    for key, value in data.items():
        if key not in _META_KEYS:
            raise TraceError(f"meta file {p!r}: unknown key {key!r} (known: {', '.join(sorted(_META_KEYS))})")
        target = _META_KEYS[key]
        if target is None:
            continue
        if target == "name":
            sizes["name"] = str(value)
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TraceError(f"meta file {p!r}: {key} must be an integer >= 1, got {value!r}")
        if target == "world_size":
            world = value
        else:
            sizes[target] = value
    for need in ("dp", "pp"):
        if need not in sizes:
            raise TraceError(f"meta file {p!r}: no {need}_size")
    js = JobSizes(**sizes)
    if world is not None and world != js.world_size:
        raise TraceError(f"meta file {p!r}: dp_size {js.dp} x pp_size {js.pp} x tp_size {js.tp} x dsp_size {js.cp} "
                         f"= {js.world_size}, but world_size is {world}")
    return js


@dataclass(frozen=True)
class Trace:
    """A checked trace in dense form: one cell per (step, DP rank, template operation).

    The *template* is the operations of one data-parallel replica in one step (every stage),
    as the first step's DP rank 0 recorded them; every other (step, DP rank) holds exactly the
    same operations.

    Attributes
    ----------
    sizes : JobSizes
    steps : int64 (S,)
        Step labels as in the trace, ascending.
    op_stage, op_type, op_seq, op_mc, op_gmc : int arrays (n,)
        Each template operation's stage, type code (:data:`OPTYPES`), ``seq_id``, chunk and global
        chunk (``-1`` where the trace has none).
    ranks : int64 (dp, pp)
        The trace's ``rank`` of each worker.
    start, end : float64 (S, dp, n)
        Recorded start and end times.
    source : str
        Where it came from (a path, or "columns").
    """

    sizes: JobSizes
    steps: np.ndarray
    op_stage: np.ndarray
    op_type: np.ndarray
    op_seq: np.ndarray
    op_mc: np.ndarray
    op_gmc: np.ndarray
    ranks: np.ndarray
    start: np.ndarray
    end: np.ndarray
    source: str = "columns"

    @property
    def n_ops(self) -> int:
        """Operations in the trace (rows)."""
        return int(self.start.size)

    def select_steps(self, steps: Any) -> "Trace":
        """The trace of the steps whose labels are in ``steps`` (an iterable of step labels).

        Raises
        ------
        TraceError
            None of the trace's steps is selected.
        """
        from dataclasses import replace

        keep = np.isin(self.steps, np.asarray(list(steps), dtype=np.int64))
        if not keep.any():
            raise TraceError(f"none of the trace's steps ({self.steps[0]}..{self.steps[-1]}) is selected")
        return replace(self, steps=self.steps[keep], start=self.start[keep], end=self.end[keep])

    def worker_label(self, d: int, p: int) -> str:
        """``"rank R (dp D, pp P)"``."""
        return f"rank {int(self.ranks[d, p])} (dp {d}, pp {p})"

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any], sizes: JobSizes | None = None, *,
                     source: str = "columns", csv_lines: bool = False) -> "Trace":
        """A trace from columns (a mapping of name to array, or a pandas DataFrame).

        ``sizes`` None: ``dp`` and ``pp`` are the largest ``dp_rank`` and ``stage`` plus one,
        one chunk per stage unless ``gmc`` says otherwise. See :func:`read_trace` for the checks.
        """
        names = list(columns.keys()) if hasattr(columns, "keys") else list(columns)
        return _build(lambda k: columns[k], names, sizes, source, csv_lines)


def _row(i: int, csv_lines: bool) -> str:
    return f"row {i + 1} (line {i + 2})" if csv_lines else f"row {i + 1}"


def _numeric(get, name: str, n: int, where, integer: bool) -> np.ndarray:
    raw = get(name)
    a = np.asarray(raw)
    if a.shape != (n,):
        raise TraceError(f"{where}: column {name!r} has {a.size} values, the others {n}")
    if a.dtype == object or a.dtype.kind in "US":
        out = np.empty(n, dtype=np.float64)
        for i, v in enumerate(a.tolist()):
            try:
                out[i] = math.nan if v is None else float(v)
            except (TypeError, ValueError):
                raise TraceError(f"{where}: {_row(i, where.csv)}, column {name!r}: not a number: {str(v)[:40]!r}") from None
        a = out
    if a.dtype.kind == "b" or a.dtype.kind not in "iuf":
        raise TraceError(f"{where}: column {name!r} must hold numbers, got {a.dtype}")
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a)
        if bad.any():
            i = int(np.argmax(bad))
            raise TraceError(f"{where}: {_row(i, where.csv)}, column {name!r}: missing or not finite ({a[i]})")
        if integer:
            frac = a != np.floor(a)
            if frac.any():
                i = int(np.argmax(frac))
                raise TraceError(f"{where}: {_row(i, where.csv)}, column {name!r}: not an integer ({a[i]})")
            big = np.abs(a) > 2**53
            if big.any():
                i = int(np.argmax(big))
                raise TraceError(f"{where}: {_row(i, where.csv)}, column {name!r}: out of range ({a[i]})")
            return a.astype(np.int64)
        return a.astype(np.float64, copy=False)
    return a.astype(np.int64, copy=False) if integer else a.astype(np.float64)


class _Where(str):
    csv: bool = False


def _build(get, names, sizes: JobSizes | None, source: str, csv_lines: bool) -> Trace:
    where = _Where(f"trace {source!r}" if source != "columns" else "trace")
    where.csv = csv_lines
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise TraceError(f"{where}: missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
                         f"(needs {', '.join(REQUIRED)})")
    n = len(np.asarray(get("duration")))
    if n == 0:
        raise TraceError(f"{where}: no rows")
    if n > MAX_TRACE_ROWS:
        raise TraceError(f"{where}: {n:,} rows, over the limit of {MAX_TRACE_ROWS:,} (docs/stragglers.md)")
    # the op types first: an unknown one names its row
    ot = get("optype")
    if hasattr(ot, "cat"):  # a pandas categorical
        cats, codes = list(ot.cat.categories), np.asarray(ot.cat.codes)
    elif isinstance(ot, tuple) and len(ot) == 2:  # (dictionary, indices) from pyarrow
        cats, codes = ot
    else:
        cats, codes = np.unique(np.asarray(ot).astype(str), return_inverse=True)
        cats = list(cats)
    codes = np.asarray(codes).astype(np.int64)
    if (codes < 0).any():
        i = int(np.argmax(codes < 0))
        raise TraceError(f"{where}: {_row(i, csv_lines)}, column 'optype': missing")
    table = np.array([CODE.get(str(c), -1) for c in cats] + [-1], dtype=np.int64)
    optype = table[codes]
    if (optype < 0).any():
        i = int(np.argmax(optype < 0))
        raise TraceError(f"{where}: {_row(i, csv_lines)}, column 'optype': unknown operation type "
                         f"{str(cats[codes[i]])[:60]!r} (known: {', '.join(OPTYPES)})")
    cols = {c: _numeric(get, c, n, where, True) for c in ("dp_rank", "stage", "rank", "step", "seq_id")}
    for c in ("mc", "gmc"):
        cols[c] = _numeric(get, c, n, where, True) if c in names else np.full(n, -1, dtype=np.int64)
    start = _numeric(get, "start_ts", n, where, False)
    dur = _numeric(get, "duration", n, where, False)
    neg = dur < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise TraceError(f"{where}: {_row(i, csv_lines)}, column 'duration': negative duration {dur[i]:g}")
    for c in ("dp_rank", "stage", "seq_id", "step"):
        bad = cols[c] < 0
        if bad.any():
            i = int(np.argmax(bad))
            raise TraceError(f"{where}: {_row(i, csv_lines)}, column {c!r}: negative ({cols[c][i]})")
    d, p = cols["dp_rank"], cols["stage"]
    inferred = sizes is None
    if inferred:
        gmc = cols["gmc"]
        pp = int(p.max()) + 1
        vpp = max(1, (int(gmc.max()) + 1) // pp) if (gmc >= 0).any() else 1
        sizes = JobSizes(dp=int(d.max()) + 1, pp=pp, vpp=vpp)
    D, P = sizes.dp, sizes.pp
    for c, size, flag in (("dp_rank", D, "dp"), ("stage", P, "pp")):
        bad = cols[c] >= size
        if bad.any():
            i = int(np.argmax(bad))
            raise TraceError(f"{where}: {_row(i, csv_lines)}, column {c!r}: {cols[c][i]} is outside 0..{size - 1} "
                             f"({flag} = {size})")
    worker = d * P + p
    present = np.bincount(worker, minlength=D * P)
    if (present == 0).any():
        raise TraceError(f"{where}: the sizes dp {D} x pp {P} x tp {sizes.tp} x cp {sizes.cp} = {sizes.world_size} GPUs "
                         f"need {D * P} workers (dp_rank x stage), but the trace holds {int((present > 0).sum())}"
                         f" (first missing: dp_rank {int(np.argmin(present)) // P}, stage {int(np.argmin(present)) % P})")
    # one rank label per worker, and one worker per rank label
    rank = cols["rank"]
    first = np.full(D * P, -1, dtype=np.int64)
    order = np.argsort(worker, kind="stable")
    ws = worker[order]
    heads = np.flatnonzero(np.r_[True, ws[1:] != ws[:-1]])
    first[ws[heads]] = order[heads]
    del order, ws, heads
    label = rank[first]
    clash = rank != label[worker]
    if clash.any():
        i = int(np.argmax(clash))
        raise TraceError(f"{where}: {_row(i, csv_lines)}, column 'rank': rank {rank[i]} for dp_rank {d[i]} stage {p[i]}, "
                         f"which is rank {label[worker[i]]} in {_row(int(first[worker[i]]), csv_lines)}")
    u, inv, cnt = np.unique(label, return_inverse=True, return_counts=True)
    if (cnt > 1).any():
        w = np.flatnonzero(cnt[inv] > 1)[:2]
        raise TraceError(f"{where}: column 'rank': rank {label[w[0]]} is both dp_rank {w[0] // P} stage {w[0] % P} and "
                         f"dp_rank {w[1] // P} stage {w[1] % P}")
    del clash
    steps, sidx = np.unique(cols["step"], return_inverse=True)
    S = steps.size
    # every worker in every step
    sw = np.bincount(sidx * (D * P) + worker, minlength=S * D * P)
    if (sw == 0).any():
        k = int(np.argmin(sw))
        s, w = divmod(k, D * P)
        raise TraceError(f"{where}: step {steps[s]}: rank {label[w]} (dp_rank {w // P}, stage {w % P}) has no rows")
    # the template: the first step's DP rank 0; an op is (stage, type, seq_id)
    T = len(OPTYPES)
    tmask = (sidx == 0) & (d == 0)
    seq = cols["seq_id"]
    key = p * T + optype
    cnt_t = np.zeros(P * T, dtype=np.int64)
    np.maximum.at(cnt_t, key[tmask], seq[tmask] + 1)
    offset = np.concatenate([[0], np.cumsum(cnt_t)])
    n_t = int(offset[-1])
    over = seq >= cnt_t[key]
    if over.any():
        i = int(np.argmax(over))
        raise TraceError(f"{where}: {_row(i, csv_lines)}, column 'seq_id': {OPTYPES[optype[i]]} #{seq[i]} on stage {p[i]}, "
                         f"but step {steps[0]} dp_rank 0 has {cnt_t[key[i]]} of them there (every step and DP rank "
                         "must record the same operations)")
    j = offset[key] + seq
    if S * D * n_t != n:
        flat = (sidx * D + d) * n_t + j
        c = np.bincount(flat, minlength=S * D * n_t)
        if (c > 1).any():
            dup = np.flatnonzero(c[flat] > 1)[1]
            raise TraceError(f"{where}: {_row(int(dup), csv_lines)}: a second {OPTYPES[optype[dup]]} seq_id {seq[dup]} "
                             f"in step {cols['step'][dup]} on rank {rank[dup]} (dp_rank {d[dup]}, stage {p[dup]})")
        k = int(np.argmin(c))
        s, rest = divmod(k, D * n_t)
        dd, jj = divmod(rest, n_t)
        pj = int(np.searchsorted(offset, jj, side="right") - 1)
        stg, t = divmod(pj, T)
        raise TraceError(f"{where}: step {steps[s]}, rank {label[dd * P + stg]} (dp_rank {dd}, stage {stg}): "
                         f"no {OPTYPES[t]} seq_id {jj - offset[pj]} (step {steps[0]} dp_rank 0 records it)")
    flat = (sidx * D + d) * n_t + j
    st = np.empty(n, dtype=np.float64)
    st[flat] = start
    en = np.empty(n, dtype=np.float64)
    en[flat] = start + dur
    if np.bincount(flat, minlength=n).max() > 1:
        c = np.bincount(flat, minlength=n)
        dup = np.flatnonzero(c[flat] > 1)[1]
        raise TraceError(f"{where}: {_row(int(dup), csv_lines)}: a second {OPTYPES[optype[dup]]} seq_id {seq[dup]} "
                         f"in step {cols['step'][dup]} on rank {rank[dup]} (dp_rank {d[dup]}, stage {p[dup]})")
    # template attributes
    tj = j[tmask]
    op_stage = np.empty(n_t, dtype=np.int64)
    op_type = np.empty(n_t, dtype=np.int64)
    op_seq = np.empty(n_t, dtype=np.int64)
    op_mc = np.empty(n_t, dtype=np.int64)
    op_gmc = np.empty(n_t, dtype=np.int64)
    op_stage[tj], op_type[tj], op_seq[tj] = p[tmask], optype[tmask], seq[tmask]
    op_mc[tj], op_gmc[tj] = cols["mc"][tmask], cols["gmc"][tmask]
    if sizes.vpp > 1:
        comp = np.isin(op_type, (CODE["forward-compute"], CODE["backward-compute"]))
        if (op_gmc[comp] < 0).all() and (op_mc[comp] < 0).all():
            raise TraceError(f"{where}: vpp = {sizes.vpp} needs column 'gmc' or 'mc' on the compute rows")
    return Trace(sizes=sizes, steps=steps.astype(np.int64), op_stage=op_stage, op_type=op_type, op_seq=op_seq,
                 op_mc=op_mc, op_gmc=op_gmc, ranks=label.reshape(D, P).astype(np.int64),
                 start=st.reshape(S, D, n_t), end=en.reshape(S, D, n_t), source=source)


def _read_parquet(data: bytes, p: str, sizes: JobSizes | None) -> Trace:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise TraceError(f"trace {p!r}: reading Parquet needs pyarrow (pip install 'spare_core[parquet]'); "
                         "CSV needs nothing") from None
    try:
        f = pq.ParquetFile(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises its own error types
        raise TraceError(f"trace {p!r}: not a Parquet file ({str(exc).splitlines()[0][:120]})") from None
    rows = f.metadata.num_rows
    if rows > MAX_TRACE_ROWS:
        raise TraceError(f"trace {p!r}: {rows:,} rows, over the limit of {MAX_TRACE_ROWS:,} (docs/stragglers.md)")
    names = f.schema_arrow.names
    want = [c for c in REQUIRED + OPTIONAL if c in names]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise TraceError(f"trace {p!r}: missing column{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(map(repr, missing))} (needs {', '.join(REQUIRED)})")
    try:
        table = f.read(columns=want)
    except Exception as exc:
        raise TraceError(f"trace {p!r}: unreadable Parquet ({str(exc).splitlines()[0][:120]})") from None
    return _from_arrow(table, names, p, sizes, csv_lines=False)


def _from_arrow(table, names, p, sizes, csv_lines):
    import pyarrow as pa
    import pyarrow.compute as pc

    def convert(name):
        col = table.column(name)  # noqa: F821 (the enclosing table, deleted only after the last convert)
        if name == "optype":
            if not pa.types.is_dictionary(col.type):
                col = pc.dictionary_encode(col.cast(pa.string()) if not pa.types.is_string(col.type) else col)
            col = col.combine_chunks() if hasattr(col, "combine_chunks") else col
            if isinstance(col, pa.ChunkedArray):
                col = col.chunk(0) if col.num_chunks == 1 else pa.concat_arrays(col.chunks)
            idx = col.indices.to_numpy(zero_copy_only=False)
            if col.null_count:
                idx = np.where(col.is_null().to_numpy(zero_copy_only=False), -1, idx)
            return ([str(x) for x in col.dictionary.to_pylist()], idx)
        if col.null_count:
            mask = col.is_null()
            i = int(np.argmax(np.asarray(mask.to_numpy(zero_copy_only=False))))
            raise TraceError(f"trace {p!r}: {_row(i, csv_lines)}, column {name!r}: missing")
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            return np.asarray(col.to_pylist(), dtype=object)
        return col.to_numpy()

    present = [c for c in names if c in table.column_names]
    cols = {}
    for name in present:  # column by column, each Arrow buffer dropped once converted (peak memory)
        cols[name] = convert(name)
        table = table.drop_columns([name])
    del table
    return _build(cols.__getitem__, present, sizes, p, csv_lines)


def _read_csv(data: bytes, p: str, sizes: JobSizes | None) -> Trace:
    try:
        import pyarrow.csv as pcsv
    except ImportError:
        pcsv = None
    if pcsv is not None:
        try:
            table = pcsv.read_csv(io.BytesIO(data), convert_options=pcsv.ConvertOptions(
                column_types={"optype": __import__("pyarrow").string()}))
        except Exception as exc:
            raise TraceError(f"trace {p!r}: not a CSV table ({str(exc).splitlines()[0][:160]})") from None
        if table.num_rows > MAX_TRACE_ROWS:
            raise TraceError(f"trace {p!r}: {table.num_rows:,} rows, over the limit of {MAX_TRACE_ROWS:,}")
        return _from_arrow(table, table.column_names, p, sizes, csv_lines=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(f"trace {p!r}: not UTF-8 text") from None
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise TraceError(f"trace {p!r}: empty")
    header = [h.strip() for h in header]
    cols: dict[str, list[str]] = {h: [] for h in header}
    for no, row in enumerate(reader):
        if len(row) != len(header):
            raise TraceError(f"trace {p!r}: {_row(no, True)}: {len(row)} cells, the header has {len(header)}")
        if no >= MAX_TRACE_ROWS:
            raise TraceError(f"trace {p!r}: over the limit of {MAX_TRACE_ROWS:,} rows")
        for h, v in zip(header, row):
            cols[h].append(v.strip())
    arrays = {h: np.asarray(v, dtype=object) for h, v in cols.items()}
    return Trace.from_columns(arrays, sizes, source=p, csv_lines=True)


def read_trace(path: str | os.PathLike[str], sizes: JobSizes | None = None) -> Trace:
    """Read and check a trace file: Parquet (``.parquet``/``.pq``) or CSV (anything else).

    Rows may come in any order. ``sizes`` (:class:`JobSizes`, e.g. from :func:`read_meta`):
    None infers ``dp`` and ``pp`` from the largest ``dp_rank`` and ``stage``.

    Raises
    ------
    TraceError
        One line naming the row and column: a missing column, a missing or non-numeric cell,
        a negative duration, an unknown ``optype``, a ``dp_rank``/``stage`` outside the sizes,
        sizes whose workers are not all in the trace, a worker with no rows in a step, an
        operation that the first step's DP rank 0 does not record (or records once where another
        records it twice), a file over :data:`MAX_TRACE_BYTES` or :data:`MAX_TRACE_ROWS`.

    Notes
    -----
    Reading takes O(rows log rows) (one sort for the workers); the dense arrays hold one value
    per row.
    """
    p = os.fspath(path)
    try:
        data = read_input(p, "trace", MAX_TRACE_BYTES)
    except InputFileError as exc:
        raise TraceError(f"cannot read trace {p!r}: {exc.reason}") from None
    return parse_trace(data, p, sizes)


def parse_trace(data: bytes, path: str | os.PathLike[str], sizes: JobSizes | None = None) -> Trace:
    """:func:`read_trace` of bytes already read from ``path`` (named in errors; its suffix says
    Parquet or CSV): a caller that hashed the file parses the very bytes it hashed."""
    p = os.fspath(path)
    if p.endswith((".parquet", ".pq")) or data[:4] == b"PAR1":
        return _read_parquet(data, p, sizes)
    return _read_csv(data, p, sizes)
