"""read_trace / Trace: formats (seconds, epoch, ISO with zones; ids, names, maps; CSV and
Parquet) and every malformed-log rule, each error naming file, line and rule."""
import datetime as dt
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

from spare_core.events import Engine, load_trace_csv
from spare_core.events.trace import Trace, TraceFormatError, read_trace

# the retired event engine (spare_core.events._engine) is tested until it is removed
pytestmark = pytest.mark.filterwarnings("ignore:spare_core.events.* is retired:DeprecationWarning")

UTC = dt.timezone.utc


def write(tmp_path, text, name="log.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


# -- formats ------------------------------------------------------------------------------

def test_seconds_ids_reason_and_defaults(tmp_path):
    p = write(tmp_path, "time,unit,reason\n0.5,3,GPU\n# a comment\n\n7,1,HBM3\n7,3,\"switch, leaf 4\"\n")
    tr = read_trace(p, reason_column="reason")
    assert tr.times.tolist() == [0.5, 7.0, 7.0]
    assert tr.units.tolist() == [3, 1, 3]
    assert tr.reasons == ("GPU", "HBM3", "switch, leaf 4")
    assert (tr.n_units, tr.end, tr.start, tr.unit_names, tr.source) == (4, 7.0, None, None, str(p))
    assert tr.times.dtype == np.float64 and tr.units.dtype == np.int64
    assert not tr.times.flags.writeable and not tr.units.flags.writeable
    with pytest.raises(AttributeError, match="immutable"):
        tr.end = 3.0


def test_iso_with_time_zones_and_explicit_start_end(tmp_path):
    p = write(tmp_path, "ts,host\n2024-03-31T00:30:00Z,a\n2024-03-31T04:00:00+02:00,b\n2024-03-31 03:00:00.25+01:00,a\n")
    tr = read_trace(p, time_column="ts", unit_column="host", start="2024-03-31T00:00:00+00:00",
                    end=dt.datetime(2024, 3, 31, 12, tzinfo=UTC))
    assert tr.times.tolist() == [1800.0, 7200.0, 7200.25]
    assert tr.unit_names == ("a", "b") and tr.units.tolist() == [0, 1, 0]
    assert tr.start == dt.datetime(2024, 3, 31, tzinfo=UTC) and tr.end == 12 * 3600.0


def test_naive_iso_in_a_named_zone_across_dst(tmp_path):
    # Europe/Paris springs forward at 02:00 local on 2024-03-31: 01:30 -> 03:30 local is 1 h
    p = write(tmp_path, "time,unit\n2024-03-31T01:30:00,0\n2024-03-31T03:30:00,1\n")
    assert read_trace(p, tz="Europe/Paris").times.tolist() == [0.0, 3600.0]
    assert read_trace(p).times.tolist() == [0.0, 7200.0]  # naive = UTC by default


def test_epoch_with_time_unit_and_default_start(tmp_path):
    p = write(tmp_path, "time,unit\n1714521600000,5\n1714521601500,2\n")
    tr = read_trace(p, time_format="epoch", time_unit="ms")
    assert tr.times.tolist() == [0.0, 1.5]
    assert tr.start == dt.datetime(2024, 5, 1, tzinfo=UTC)
    # numbers are never taken for epoch unless asked
    assert read_trace(p).times[1] == 1714521601500.0


def test_names_in_order_of_appearance_and_unit_map(tmp_path):
    p = write(tmp_path, "time,unit\n1,node-7\n2,node-3\n3,node-7\n")
    tr = read_trace(p)
    assert tr.units.tolist() == [0, 1, 0] and tr.unit_names == ("node-7", "node-3")
    tr = read_trace(p, unit_map={"node-3": 0, "node-7": 1, "node-9": 2})
    assert tr.units.tolist() == [1, 0, 1] and tr.n_units == 3 and tr.unit_names == ("node-3", "node-7", "node-9")
    tr = read_trace(p, unit_map=["node-9", "node-7", "node-3"], n_units=5)
    assert tr.units.tolist() == [1, 2, 1] and tr.n_units == 5 and tr.unit_names[:3] == ("node-9", "node-7", "node-3")
    # a many-to-one map (hosts -> data-parallel groups) has no names per id
    tr = read_trace(p, unit_map={"node-3": 0, "node-7": 0})
    assert tr.units.tolist() == [0, 0, 0] and tr.unit_names is None


def test_numeric_looking_names_and_23_digit_ids(tmp_path):
    p = write(tmp_path, "time,unit\n1,12345678901234567890123\n2,7\n")
    with pytest.raises(TraceFormatError, match=r"line 2: unit id 12345678901234567890123 \(23 digits\) does not fit in int64"):
        read_trace(p)
    tr = read_trace(p, units="names")
    assert tr.unit_names == ("12345678901234567890123", "7") and tr.units.tolist() == [0, 1]


def test_positional_columns_header_detection(tmp_path):
    assert read_trace(write(tmp_path, "1.0,2\n3.0,0\n"), time_column=0, unit_column=1).times.tolist() == [1.0, 3.0]
    assert read_trace(write(tmp_path, "t,u\n1.0,2\n"), time_column=0, unit_column=1).units.tolist() == [2]
    # a malformed first data row is an error, not a header
    for bad in ("1.0x,2\n3.0,0\n", "-abc,2\n3,0\n", ",2\n3,0\n"):
        with pytest.raises(TraceFormatError, match=r"line 1: time .* not"):
            read_trace(write(tmp_path, bad), time_column=0, unit_column=1)
    with pytest.raises(TraceFormatError, match=r"line 1: unit 'x' is not an integer id"):
        read_trace(write(tmp_path, "1.0,x\n2.0,0\n"), time_column=0, unit_column=1, units="ids")


def test_sort_option(tmp_path):
    p = write(tmp_path, "time,unit,reason\n5,0,a\n1,1,b\n5,2,c\n")
    with pytest.raises(TraceFormatError, match=r"line 3: time goes backwards \(1 s after 5 s on line 2\).*sort=True"):
        read_trace(p)
    tr = read_trace(p, sort=True, reason_column="reason")
    assert tr.times.tolist() == [1.0, 5.0, 5.0] and tr.units.tolist() == [1, 0, 2] and tr.reasons == ("b", "a", "c")


# -- malformed logs: one error naming file, line and rule ----------------------------------

@pytest.mark.parametrize("text, kwargs, where, rule", [
    ("", {}, None, "no failure rows"),
    ("time,unit\n# nothing\n", {}, None, "no failure rows"),
    ("when,unit\n1,2\n", {}, 1, "missing time column 'time'; the header has ['when', 'unit']"),
    ("time,unit\n1,2\n3\n", {}, 3, "row has 1 column(s), needs 2"),
    ("time,unit\n1,2\nsoon,1\n", {}, 3, "time 'soon' is not a number"),
    ("time,unit\n1,2\n,1\n", {}, 3, "time empty is not a number"),
    ("time,unit\n1,2\nnan,1\n", {}, 3, "time nan is not finite"),
    ("time,unit\n-1,2\n", {}, 2, "time -1 is negative"),
    ("time,unit\n2024-01-01T00:00Z,1\n2024-01-01T00:10,2\n", {}, 3, "mixes datetimes with and without a UTC offset"),
    ("time,unit\n2024-01-01T00:00Z,1\n2024-13-01T00:10Z,2\n", {}, 3, "time '2024-13-01T00:10Z' is not an ISO 8601"),
    ("time,unit\n2024-01-01T00:00Z,1\n", {"start": "2024-01-02T00:00Z"}, None,
     "no failure rows between start and end (1 before start, 0 after end)"),
    ("time,unit\n1,-4\n", {}, 2, "unit id -4 is negative"),
    ("time,unit\n1,a\n2,zz\n", {"unit_map": {"a": 0}}, 3, "host 'zz' is not in unit_map (1 hosts)"),
    ("time,unit\n1,a\n2,\n", {}, 3, "empty unit cell"),
    ("time,unit\n1,3\n", {"n_units": 2}, None, "n_units=2 but the trace has unit id 3"),
    ("time,unit\n1,3\n5,1\n", {"start": 5.5}, None, "no failure rows between start and end (2 before start, 0 "),
    ("time,unit\n1,3\n5,1\n", {"start": 3.0, "end": 2.0}, None, "end (2 s) is before start (3 s)"),
    ("time,unit\n\"1,3\n", {}, 2, "not valid CSV (unexpected end of data)"),
    ("time,unit\n\"1\"x,3\n", {}, 2, "not valid CSV"),
])
def test_malformed_logs(tmp_path, text, kwargs, where, rule):
    p = write(tmp_path, text)
    with pytest.raises(TraceFormatError) as exc:
        read_trace(p, **kwargs)
    e = exc.value
    assert isinstance(e, ValueError) and e.path == str(p) and e.line == where
    assert rule in str(e), str(e)
    assert str(e).startswith(f"trace {str(p)!r}" + ("" if where is None else f", line {where}"))


def test_bad_options_rejected_before_reading(tmp_path):
    missing = tmp_path / "nope.csv"  # never opened: the options fail first
    for kwargs, exc, msg in [
        ({"time_format": "unix"}, ValueError, "time_format must be one of"),
        ({"time_unit": "hours"}, ValueError, "time_unit must be one of"),
        ({"units": "hosts"}, ValueError, "units must be one of"),
        ({"time_column": 1.5}, TypeError, "time_column must be a column name"),
        ({"unit_column": -1}, ValueError, "unit_column must be a position >= 0"),
        ({"tz": "Mars/Olympus"}, ValueError, "tz must be an IANA time zone name"),
        ({"unit_map": {"a": -1}}, ValueError, r"unit_map\['a'\] must be >= 0"),
        ({"unit_map": ["a", "a"]}, ValueError, "unit_map lists host 'a' twice"),
        ({"header": False}, ValueError, "header=False needs columns given by position"),
        ({"sort": "yes"}, TypeError, "sort must be a bool"),
        ({"n_units": 0}, ValueError, "n_units must be >= 1"),
    ]:
        with pytest.raises(exc, match=msg):
            read_trace(missing, **kwargs)
    with pytest.raises(TypeError, match="trace path must be a str"):
        read_trace(3)


def test_trace_constructor_validation():
    with pytest.raises(ValueError, match="non-decreasing, got 2.0 at index 0 before 1.0"):
        Trace([2.0, 1.0], [0, 0])
    with pytest.raises(ValueError, match=">= 0"):
        Trace([-1.0], [0])
    with pytest.raises(ValueError, match="finite"):
        Trace([np.inf], [0])
    with pytest.raises(TypeError, match="units must hold integers"):
        Trace([1.0], [0.5])
    with pytest.raises(ValueError, match="n_units must be > every unit id"):
        Trace([1.0], [4], n_units=4)
    with pytest.raises(ValueError, match="end must be finite and >= the last failure time"):
        Trace([1.0], [0], end=0.5)
    with pytest.raises(TypeError, match="timezone-aware"):
        Trace([1.0], [0], start=dt.datetime(2024, 1, 1))
    times, units = np.array([1.0, 2.0]), np.array([0, 1])
    tr = Trace(times, units)
    times[0] = 9.0
    units[0] = 5
    assert tr.times[0] == 1.0 and tr.units[0] == 0  # private copies
    assert tr == Trace([1.0, 2.0], [0, 1]) and tr != Trace([1.0, 2.0], [0, 1], end=3.0)
    assert len(Trace([], [])) == 0


# -- the engine's loader goes through the same parser --------------------------------------

def test_load_trace_csv_delegates(tmp_path):
    t, u = load_trace_csv(write(tmp_path, "time,unit\n1.5,2\n# c\n4.0,1\n"))
    assert t.tolist() == [1.5, 4.0] and u.tolist() == [2, 1] and u.dtype == np.int64
    t, u = load_trace_csv(write(tmp_path, "1.5,2\n4.0,1\n"))
    assert t.tolist() == [1.5, 4.0]
    with pytest.raises(ValueError, match=r"line 1: time '1.5x' is not a number"):
        load_trace_csv(write(tmp_path, "1.5x,2\n4.0,1\n"))
    with pytest.raises(ValueError, match=r"line 2: time goes backwards"):
        load_trace_csv(write(tmp_path, "5,2\n4.0,1\n"))


# -- Parquet --------------------------------------------------------------------------------

def test_parquet_matches_csv(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ts = [dt.datetime(2024, 5, 1, 0, 0, tzinfo=UTC), dt.datetime(2024, 5, 1, 1, 0, 0, 250000, tzinfo=UTC)]
    tab = pa.table({"ts": pa.array(ts, pa.timestamp("ms", tz="UTC")), "host": ["b", "a"], "why": ["GPU", "NIC"]})
    pq.write_table(tab, tmp_path / "log.parquet")
    tr = read_trace(tmp_path / "log.parquet", time_column="ts", unit_column="host", reason_column="why")
    csv_tr = read_trace(write(tmp_path, "ts,host,why\n2024-05-01T00:00Z,b,GPU\n2024-05-01T01:00:00.25Z,a,NIC\n"),
                        time_column="ts", unit_column="host", reason_column="why")
    assert tr.times.tolist() == csv_tr.times.tolist() == [0.0, 3600.25]
    assert (tr.units.tolist(), tr.unit_names, tr.reasons, tr.start) == (
        csv_tr.units.tolist(), csv_tr.unit_names, csv_tr.reasons, csv_tr.start)
    # naive timestamps in a named zone, integer ids, numeric seconds
    tab = pa.table({"t": pa.array([dt.datetime(2024, 3, 31, 1, 30), dt.datetime(2024, 3, 31, 3, 30)], pa.timestamp("s")),
                    "u": pa.array([4, 1], pa.int32())})
    pq.write_table(tab, tmp_path / "naive.parquet")
    tr = read_trace(tmp_path / "naive.parquet", time_column="t", unit_column="u", tz="Europe/Paris")
    assert tr.times.tolist() == [0.0, 3600.0] and tr.units.tolist() == [4, 1] and tr.n_units == 5
    pq.write_table(pa.table({"time": [0.5, 2.0], "unit": [0, 1]}), tmp_path / "sec.pq")
    assert read_trace(tmp_path / "sec.pq").times.tolist() == [0.5, 2.0]


def test_parquet_errors_name_the_row(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"time": [0.5, None, 2.0], "unit": [0, 1, 1]}), tmp_path / "null.parquet")
    with pytest.raises(TraceFormatError, match=r"row 2: empty time cell \(null\)"):
        read_trace(tmp_path / "null.parquet")
    pq.write_table(pa.table({"time": [3.0, 2.0], "unit": [0, 1]}), tmp_path / "back.parquet")
    with pytest.raises(TraceFormatError, match=r"row 2: time goes backwards"):
        read_trace(tmp_path / "back.parquet")
    pq.write_table(pa.table({"t": [1.0], "unit": [0]}), tmp_path / "col.parquet")
    with pytest.raises(TraceFormatError, match=r"missing time column 'time'; the file has \['t', 'unit'\]"):
        read_trace(tmp_path / "col.parquet")
    pq.write_table(pa.table({"time": pa.array([], pa.float64()), "unit": pa.array([], pa.int64())}), tmp_path / "e.parquet")
    with pytest.raises(TraceFormatError, match="no failure rows"):
        read_trace(tmp_path / "e.parquet")


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_arrow(name, *a, **k):
        if name.startswith("pyarrow"):
            raise ImportError("no pyarrow")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_arrow)
    with pytest.raises(ImportError, match=re.escape("pip install 'spare_core[parquet]'")):
        read_trace(tmp_path / "x.parquet")


# -- property: whatever is written, the same events come back ------------------------------

@given(st.lists(st.tuples(st.floats(0, 1e9, allow_nan=False), st.integers(0, 2**63 - 1)), min_size=1, max_size=30))
def test_roundtrip_seconds_and_ids(tmp_path_factory, rows):
    rows = sorted(rows, key=lambda r: r[0])
    p = tmp_path_factory.mktemp("rt") / "t.csv"
    p.write_text("time,unit\n" + "".join(f"{t!r},{u}\n" for t, u in rows))
    tr = read_trace(p)
    assert tr.times.tolist() == [t for t, _ in rows] and tr.units.tolist() == [u for _, u in rows]


@given(st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["a", "b", "c.d", "n-1"])), min_size=1, max_size=30),
       st.integers(-12, 12))
def test_roundtrip_iso_names(tmp_path_factory, rows, offset_h):
    rows = sorted(rows, key=lambda r: r[0])
    tz = dt.timezone(dt.timedelta(hours=offset_h))
    base = dt.datetime(2024, 1, 1, tzinfo=UTC)
    p = tmp_path_factory.mktemp("iso") / "t.csv"
    p.write_text("time,host\n" + "".join(
        f"{(base + dt.timedelta(milliseconds=ms)).astimezone(tz).isoformat()},{h}\n" for ms, h in rows))
    tr = read_trace(p, unit_column="host", start=base)
    assert tr.times.tolist() == [ms / 1000 for ms, _ in rows]
    names = list(dict.fromkeys(h for _, h in rows))
    assert [tr.unit_names[u] for u in tr.units] == [h for _, h in rows] and list(tr.unit_names) == names


def test_engine_replays_a_read_trace(tmp_path):
    tr = read_trace(write(tmp_path, "time,unit\n1.5,2\n1.5,0\n4.0,2\n"))
    eng = Engine(tr.n_units, seed=0)
    eng.add_trace(tr.times, tr.units)
    assert [eng.step()[:3] for _ in range(3)] == [(1.5, "trace-failure", 2), (1.5, "trace-failure", 0),
                                                  (4.0, "trace-failure", 2)]


def test_where_keeps_only_the_rows_that_are_failures_and_counts_the_rest(tmp_path):
    # a GPU history where most rows are not failures (a blank event) and one is another kind
    rows = "time,unit,event\n" + "".join(f"{10 * k},{k % 4},{ev}\n"
                                         for k, ev in enumerate(["DBE", "", "OTB", "", "", "retired", "DBE"]))
    p = write(tmp_path, rows)
    tr = read_trace(p, where={"event": ["DBE", "OTB"]})
    assert tr.times.tolist() == [0.0, 20.0, 60.0] and tr.units.tolist() == [0, 2, 2]
    assert tr.filtered.startswith("3 of 7 rows are failures") and "3 blank, 1 other values ('retired' x1)" in tr.filtered
    # by position, a single value, and the same rows from Parquet
    assert read_trace(p, where={2: "DBE"}).n_events == 2
    assert read_trace(p, where={"2": ["DBE"]}).n_events == 2
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    q = tmp_path / "log.parquet"
    pq.write_table(pa.table({"time": [0.0, 10.0, 20.0], "unit": [0, 1, 2], "event": ["DBE", None, "OTB"]}), q)
    tq = read_trace(q, where={"event": ["DBE", "OTB"]})
    assert tq.times.tolist() == [0.0, 20.0] and "1 blank" in tq.filtered
    # pickled to workers with the filter's words
    import pickle

    assert pickle.loads(pickle.dumps(tr)).filtered == tr.filtered


def test_where_refusals_name_the_problem(tmp_path):
    p = write(tmp_path, "time,unit,event\n1,0,DBE\n2,1,\n")
    with pytest.raises(TraceFormatError, match="keeps none of the 2 rows"):
        read_trace(p, where={"event": "OTB"})
    with pytest.raises(TraceFormatError, match="missing where column 'kind'"):
        read_trace(p, where={"kind": "OTB"})
    with pytest.raises(TypeError, match="where"):
        read_trace(p, where={"event": []})
    with pytest.raises(TypeError, match="where"):
        read_trace(p, where=["event"])


def test_a_blank_reason_without_where_is_warned_about_in_the_replays_words(tmp_path):
    from spare_core.events import TraceReplay

    p = write(tmp_path, "time,unit,why\n1,0,gpu\n2,1,\n3,2,\n")
    words = TraceReplay(read_trace(p, reason_column="why"), "stop").describe(4)
    assert "2 of 3 rows have a blank reason and count as failures" in words
    kept = TraceReplay(read_trace(p, reason_column="why", where={"why": "gpu"}), "stop").describe(4)
    assert "blank reason" not in kept and "1 of 3 rows are failures" in kept
