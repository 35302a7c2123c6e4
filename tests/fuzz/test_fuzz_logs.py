"""Fuzz: the log surface (issue 23) - failure logs as CSV and Parquet, hostfiles, and every
input path that is not a regular file.

- CSV logs: a valid log mutated byte by byte (random bytes, NUL, lone CR, quotes, a cut in the
  middle of a UTF-8 sequence), huge fields and lines, many columns, in UTF-8 with or without a
  BOM, UTF-16/32, Latin-1, cp1252, read with random options;
- Parquet logs: tables of random column types (ints, floats with NaN/inf, text with odd
  characters, timestamps with and without a zone, dates, binary, nulls, dictionary-encoded
  long strings, duplicated names), and valid files with bytes flipped or cut;
- hostfiles: random lines and bytes as ``failures.trace.unit_map``;
- special files as every input (scenario file, sweep spec, CSV and Parquet log, hostfile): a
  FIFO, ``/dev/zero``, ``/dev/null``, a directory, a symlink to a FIFO, a symlink loop, a
  dangling symlink, ``/proc/self/status``, a sparse file over the cap.

Each case runs in a forked child whose address space is capped at 1.5 GiB above what it
inherited (so unbounded reading is a MemoryError, a finding, and never the machine's memory)
and with the suite's time limit (so a FIFO that blocks is a hang, a finding). The outcome must
be one clean error (ValueError/TypeError) on one line naming the file, or an answer whose
invariants hold (finite times >= 0 in order, unit ids in range).
"""
from __future__ import annotations

import math
import os
import resource
import shutil

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fuzz_isolate import SKIP_UNDER_SANITIZER, run_isolated
from fuzz_profile import fuzz

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLES = os.path.join(ROOT, "examples")

GOOD_LOG = ("time,unit,reason\n0,1,GPU\n1.5,2,HBM3\n7,0,\"network, switch\"\n7,3,PSU\n12.25,1,GPU\n")
ISO_LOG = ("time,unit\n2025-03-03T00:00:00Z,node-a\n2025-03-03T01:00:00+01:00,node-b\n"
           "2025-03-03T02:30:00Z,node-a\n")
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-32", "latin-1", "cp1252"]
ODD = ["\x00", "\r", "\n", "\"", ",", ";", "\t", "\ufeff", "\u2028", "\x85", "\udcff", "é", "\u0663", "#", " "]


def _capped(fn):
    """``fn`` with the address space capped 1.5 GiB above the child's current size."""
    def go():
        with open("/proc/self/status") as fh:
            vm = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + 3 * 2**29, vm + 3 * 2**29))
        return fn()
    return go


def _check_error(out, case, path=None):
    out.check_clean(case)
    if not out.ok:
        assert "\n" not in out.message.strip(), f"{case}: a message of several lines: {out.message!r}"
        if path is not None:
            assert os.path.basename(str(path)) in out.message, f"{case}: the message does not name the file: " \
                                                               f"{out.message!r}"


def _check_trace(value, case):
    times, units, n_units = value
    assert all(math.isfinite(t) and t >= 0 for t in times), (case, times)
    assert times == sorted(times), (case, times)
    assert all(0 <= u < n_units for u in units), (case, units, n_units)


def _read(path, **opts):
    from spare_core.events.trace import read_trace

    def go():
        tr = read_trace(path, **opts)
        return np.asarray(tr.times).tolist(), np.asarray(tr.units).tolist(), int(tr.n_units)
    return _capped(go)


# -- CSV logs ---------------------------------------------------------------------------------
@st.composite
def mutated_bytes(draw, base):
    data = bytearray(base.encode("utf-8"))
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["insert", "replace", "delete", "cut", "odd", "huge_field", "long_line",
                                     "many_columns", "binary"]))
        at = draw(st.integers(0, len(data)))
        if kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "replace" and data:
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 8))]
        elif kind == "cut":
            data = data[:at]
        elif kind == "odd":
            data[at:at] = draw(st.sampled_from(ODD)).encode("utf-8", "surrogatepass")
        elif kind == "huge_field":
            data[at:at] = draw(st.sampled_from([b"9", b"x", b"\"", b"1,"])) * draw(st.sampled_from([10**3, 2 * 10**5, 2 * 10**6]))
        elif kind == "long_line":
            data[at:at] = b"\n" + b"1," * draw(st.sampled_from([10**4, 10**6])) + b"1\n"
        elif kind == "many_columns":
            data[at:at] = b"," * draw(st.sampled_from([10, 10**5]))
        elif kind == "binary":
            data[at:at] = draw(st.binary(min_size=16, max_size=256))
    return bytes(data)


CSV_OPTIONS = st.fixed_dictionaries({}, optional={
    "time_format": st.sampled_from(["auto", "seconds", "epoch", "iso"]),
    "units": st.sampled_from(["auto", "ids", "names"]),
    "sort": st.booleans(),
    "header": st.sampled_from(["auto", True]),
    "delimiter": st.sampled_from([",", ";", "\t"]),
    "reason_column": st.sampled_from(["reason", 2, 7]),
    "time_unit": st.sampled_from(["s", "ns", "d"]),
    "n_units": st.sampled_from([1, 4, 2**62]),
})


@fuzz(1.5)
@given(base=st.sampled_from([GOOD_LOG, ISO_LOG]), data=st.data(), encoding=st.sampled_from(ENCODINGS),
       opts=CSV_OPTIONS)
def test_csv_logs_mutated_in_any_encoding(tmp_path_factory, base, data, encoding, opts):
    raw = data.draw(mutated_bytes(base))
    try:
        raw = raw.decode("utf-8").encode(encoding)
    except (UnicodeDecodeError, UnicodeEncodeError):
        pass  # bytes that are not UTF-8 (or not encodable) go in as they are
    path = tmp_path_factory.mktemp("log") / "log.csv"
    path.write_bytes(raw)
    case = f"csv log {raw[:80]!r}... ({len(raw)} bytes, {encoding}) {opts}"
    out = run_isolated(_read(path, **opts), case=case)
    _check_error(out, case, path)
    if out.ok:
        _check_trace(out.value, case)


# -- Parquet logs -----------------------------------------------------------------------------
def _column(kind, n, rng):
    import pyarrow as pa
    if kind == "float":
        v = rng.random(n) * 100
        return pa.array(np.sort(v))
    if kind == "float_odd":
        return pa.array(rng.choice([0.0, 1.5, np.nan, np.inf, -np.inf, -1.0, 1e308, 5e-324], n))
    if kind == "int":
        return pa.array(np.sort(rng.integers(0, 10, n)))
    if kind == "int_huge":
        return pa.array(rng.choice([0, -1, 2**63 - 1, -2**63, 7], n).astype(np.int64))
    if kind == "uint64":
        return pa.array(np.array([2**64 - 1, 0, 5][:1] * n, dtype=np.uint64))
    if kind == "text":
        return pa.array([str(x) for x in rng.choice(["node-a", "node-b", "", " ", "\x00", "é", "1", "1.0", "7.0"], n)])
    if kind == "text_iso":
        return pa.array([f"2025-03-03T0{i % 10}:00:00Z" for i in range(n)])
    if kind == "timestamp":
        return pa.array(np.arange(n).astype("timedelta64[s]") + np.datetime64("2025-03-03T00:00:00"))
    if kind == "timestamp_tz":
        return pa.array(np.arange(n).astype("timedelta64[ms]") + np.datetime64("2025-03-03T00:00:00.000"),
                        pa.timestamp("ms", tz="Europe/Paris"))
    if kind == "date":
        return pa.array(np.arange(n).astype("datetime64[D]"))
    if kind == "binary":
        return pa.array([bytes([i % 256]) * 3 for i in range(n)], pa.binary())
    if kind == "nulls":
        return pa.array([None] * n, pa.float64())
    if kind == "some_null":
        return pa.array([1.0 if i % 3 else None for i in range(n)])
    if kind == "long_text_dict":
        return pa.DictionaryArray.from_arrays(pa.array([0] * n, pa.int32()), pa.array(["h" * 2_000_000]))
    if kind == "int_dict":
        return pa.array(np.sort(rng.integers(0, 10, n))).dictionary_encode()
    if kind == "bool":
        return pa.array([bool(i % 2) for i in range(n)])
    raise AssertionError(kind)


PARQUET_KINDS = ["float", "float_odd", "int", "int_huge", "uint64", "text", "text_iso", "timestamp", "timestamp_tz",
                 "date", "binary", "nulls", "some_null", "long_text_dict", "int_dict", "bool"]


@pytest.mark.skipif(SKIP_UNDER_SANITIZER, reason="pyarrow's C++ exceptions abort under the ASan preload "
                    "(fuzz_isolate.SKIP_UNDER_SANITIZER); no kernel of ours is reached")
@fuzz(1.5)
@given(time_kind=st.sampled_from(PARQUET_KINDS), unit_kind=st.sampled_from(PARQUET_KINDS),
       n=st.sampled_from([0, 1, 3, 40, 3000]), names=st.sampled_from([("time", "unit"), ("time", "time"),
                                                                        ("unit", "time"), ("a", "b")]),
       damage=st.sampled_from(["none", "flip", "cut", "cut_footer", "zeros"]), seed=st.integers(0, 2**16),
       opts=st.fixed_dictionaries({}, optional={"units": st.sampled_from(["auto", "ids", "names"]),
                                                "time_format": st.sampled_from(["auto", "seconds", "epoch"]),
                                                "sort": st.booleans(), "time_column": st.sampled_from([0, 1, "time"]),
                                                "unit_column": st.sampled_from([1, "unit", 5])}))
def test_parquet_logs_of_any_column_type_and_damaged_files(tmp_path_factory, time_kind, unit_kind, n, names,
                                                          damage, seed, opts):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(seed)
    path = tmp_path_factory.mktemp("log") / "log.parquet"
    table = pa.Table.from_arrays([_column(time_kind, n, rng), _column(unit_kind, n, rng)], names=list(names))
    pq.write_table(table, path)
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        for _ in range(4):
            raw[int(rng.integers(0, len(raw)))] ^= 1 << int(rng.integers(0, 8))
    elif damage == "cut":
        raw = raw[: int(rng.integers(0, len(raw)))]
    elif damage == "cut_footer":
        raw = raw[:-8]
    elif damage == "zeros":
        at = int(rng.integers(0, len(raw)))
        raw[at:at + 64] = bytes(64)
    path.write_bytes(bytes(raw))
    case = f"parquet log {names} time={time_kind} unit={unit_kind} n={n} {damage} seed={seed} {opts}"
    out = run_isolated(_read(path, **opts), case=case)
    _check_error(out, case, path)
    if out.ok:
        _check_trace(out.value, case)


# -- hostfiles --------------------------------------------------------------------------------
HOST_LINES = ["node-%d", "node-%d slots=8", "# comment", "", "   ", "node-%d\tslots=8", "\x00", "\ufeffnode-%d",
              "node-%d\r", "\udcff", "é-%d", "node-0", "x" * 100_000, "node-%d max_slots=8 extra words"]


@fuzz(1.0)
@given(lines=st.lists(st.sampled_from(HOST_LINES), max_size=80), junk=st.binary(max_size=64),
       encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]), crlf=st.booleans())
def test_hostfiles_of_any_lines_and_bytes(tmp_path_factory, lines, junk, encoding, crlf):
    from spare_core.scenario_file import load_scenario_file
    d = tmp_path_factory.mktemp("hosts")
    shutil.copy(os.path.join(EXAMPLES, "trace_job_failures.csv"), d)
    text = "\n".join(ln % i if "%d" in ln else ln for i, ln in enumerate(lines)) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    try:
        raw = text.encode(encoding, "surrogatepass") + junk
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass") + junk
    (d / "hosts.txt").write_bytes(raw)
    overrides = [f'failures.trace.path="{d / "trace_job_failures.csv"}"', f'failures.trace.unit_map="{d / "hosts.txt"}"',
                 'failures.after="stop"']  # no law fitted past the log's end: the hostfile is what is tried

    def go():
        sf = load_scenario_file(os.path.join(EXAMPLES, "trace_job.toml"), overrides)
        return sf.scenario.n_groups
    case = f"hostfile {raw[:80]!r}... ({len(raw)} bytes)"
    out = run_isolated(_capped(go), case=case)
    _check_error(out, case, "trace_job.toml")
    if out.ok:
        assert out.value >= 1


# -- special files as every input -------------------------------------------------------------
SPECIALS = ["fifo", "dev_zero", "dev_null", "directory", "symlink_to_fifo", "symlink_loop", "dangling_symlink",
            "proc_status", "sparse_over_cap"]
READERS = ["scenario_file", "sweep_spec", "spec_scenario_file", "csv_log", "parquet_log", "hostfile"]


def _special(d, kind, suffix):
    if kind == "fifo":
        p = d / f"fifo{suffix}"
        os.mkfifo(p)
        return p
    if kind == "dev_zero":
        return "/dev/zero"
    if kind == "dev_null":
        return "/dev/null"
    if kind == "directory":
        p = d / f"dir{suffix}"
        p.mkdir()
        return p
    if kind == "symlink_to_fifo":
        os.mkfifo(d / "f")
        (d / f"l{suffix}").symlink_to(d / "f")
        return d / f"l{suffix}"
    if kind == "symlink_loop":
        (d / f"loop{suffix}").symlink_to(d / f"loop{suffix}")
        return d / f"loop{suffix}"
    if kind == "dangling_symlink":
        (d / f"dangling{suffix}").symlink_to(d / "nothing")
        return d / f"dangling{suffix}"
    if kind == "proc_status":
        return "/proc/self/status"
    p = d / f"big{suffix}"
    with open(p, "wb") as fh:
        fh.truncate(2**31 + 1)  # sparse: 2 GiB that take no disk, over every cap
    return p


@fuzz(2.0)
@given(kind=st.sampled_from(SPECIALS), reader=st.sampled_from(READERS))
def test_special_files_as_every_input_are_refused_without_blocking_or_reading_them(tmp_path_factory, kind, reader):
    from spare_core.events.trace import read_trace
    from spare_core.scenario_file import load_scenario_file
    from spare_core.sweeps import load_spec
    d = tmp_path_factory.mktemp("special")
    suffix = {"parquet_log": ".parquet", "csv_log": ".csv", "hostfile": ".txt"}.get(reader, ".toml")
    target = _special(d, kind, suffix)
    shutil.copy(os.path.join(EXAMPLES, "trace_job_failures.csv"), d)

    def go():
        if reader == "scenario_file":
            return load_scenario_file(target).name
        if reader == "sweep_spec":
            return len(load_spec(target))
        if reader == "spec_scenario_file":
            spec = d / "spec.toml"
            spec.write_text(f'seeds = 1\npolicies = ["ckpt"]\nredundancies = [1]\n[[scenarios]]\nfile = "{target}"\n')
            return len(load_spec(spec))
        if reader in ("csv_log", "parquet_log"):
            return len(read_trace(target).times)
        return load_scenario_file(os.path.join(EXAMPLES, "trace_job.toml"),
                                  [f'failures.trace.path="{d / "trace_job_failures.csv"}"',
                                   f'failures.trace.unit_map="{target}"']).name
    case = f"{reader} = {kind} ({target})"
    out = run_isolated(_capped(go), case=case)
    _check_error(out, case)
    if kind == "proc_status" and reader in ("csv_log", "hostfile"):
        return  # a small regular file of text: read (as a log it has no failure rows: an error)
    assert not out.ok, f"{case}: accepted"
    assert os.path.basename(str(target)) in out.message, f"{case}: the message does not name the file: {out.message}"
