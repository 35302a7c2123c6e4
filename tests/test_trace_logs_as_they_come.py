"""Logs as they come: strftime timestamps, a window of a longer log, racks decoded from host
names (``host_pattern``), and what the reader reports about them."""
import datetime as dt
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from spare_core.events.trace import Trace, TraceFormatError, read_trace

from tests.trace_logs import CRAY_PATTERN, TITAN, cray_host, cray_log

UTC = dt.timezone.utc


def write(tmp_path, text, name="log.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


# -- strftime patterns ---------------------------------------------------------------------------

PATTERNS = ["%m/%d/%Y %H:%M", "%d.%m.%Y %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%a %b %d %H:%M:%S %Y",
            "%d %B %Y %I:%M %p", "%y%m%d-%H%M%S", "%Y/%j %H:%M", "%Y-%m-%dT%H:%M:%S%z"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2060, 12, 31),
                             timezones=st.sampled_from([UTC, dt.timezone(dt.timedelta(hours=5, minutes=30)),
                                                        dt.timezone(-dt.timedelta(hours=7))])),
                min_size=1, max_size=12),
       st.sampled_from(PATTERNS))
def test_a_pattern_reads_what_strptime_reads(tmp_path_factory, stamps, fmt):
    """Every supported pattern, column at a time, equals datetime.strptime row by row (UTC
    where the pattern has no offset)."""
    stamps = sorted(stamps, key=lambda d: d.astimezone(UTC) if "%z" in fmt else d.replace(tzinfo=None))
    text = [d.strftime(fmt) for d in stamps]
    p = write(tmp_path_factory.mktemp("fmt"), "time,unit\n" + "".join(f"{s},{i % 3}\n" for i, s in enumerate(text)))
    tr = read_trace(p, time_format=fmt, sort=True)
    want = []
    for s in text:
        d = dt.datetime.strptime(s, fmt)
        want.append(d if d.tzinfo else d.replace(tzinfo=UTC))
    want_us = sorted((d - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1) for d in want)
    origin = (tr.start - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)
    assert origin == want_us[0]
    assert np.array_equal(np.rint(tr.times * 1e6).astype(np.int64), np.array(want_us) - origin)


def test_us_dates_without_zero_padding_and_blanks(tmp_path):
    p = write(tmp_path, "time,unit\n1/23/2014 5:59,a\n 1/23/2014  17:05 ,b\n12/1/2014 0:00,a\n")
    tr = read_trace(p, time_format="%m/%d/%Y %H:%M")
    assert tr.start == dt.datetime(2014, 1, 23, 5, 59, tzinfo=UTC)
    assert tr.times.tolist() == [0.0, 11 * 3600 + 6 * 60, (dt.datetime(2014, 12, 1) - dt.datetime(2014, 1, 23, 5, 59))
                                 .total_seconds()]


def test_a_pattern_in_a_zone_with_summer_time(tmp_path):
    """Wall times of a zone with clock changes go through the zone's rules, fold and dst included."""
    p = write(tmp_path, "time,unit\n11/3/2024 1:30 AM,1\n11/3/2024 1:10 AM,2\n11/3/2024 3:00 AM,3\n")
    with pytest.raises(TraceFormatError, match=r"line 2: local time 2024-11-03T01:30:00 is ambiguous"):
        read_trace(p, time_format="%m/%d/%Y %I:%M %p", tz="America/New_York")
    tr = read_trace(p, time_format="%m/%d/%Y %I:%M %p", tz="America/New_York", fold="infer")
    assert tr.times.tolist() == [0.0, 40 * 60.0, 2.5 * 3600]  # 5:30 UTC, the second 1:10 (6:10 UTC), 3:00 EST


@pytest.mark.parametrize("text, fmt, line, rule", [
    ("time,unit\n04/09/2017 21:36,a\n13/10/2017 1:05,b\n", "%m/%d/%Y %H:%M", 3,
     "time '13/10/2017 1:05': month 13 is out of range 1-12 (time_format '%m/%d/%Y %H:%M')"),
    ("time,unit\n02/29/2016 1:05,a\n02/29/2017 1:05,b\n", "%m/%d/%Y %H:%M", 3,
     "day 29 is out of range for month 2 of 2017"),
    ("time,unit\n1/1/2017 24:00,a\n", "%m/%d/%Y %H:%M", 2, "hour 24 is out of range 0-23"),
    ("time,unit\n1/1/2017 1:00,a\n1/1/2017 1:60,a\n", "%m/%d/%Y %H:%M", 3, "minute 60 is out of range 0-59"),
    ("time,unit\n1/1/2017 1:00,a\n2017-01-02 1:00,a\n", "%m/%d/%Y %H:%M", 3,
     "time '2017-01-02 1:00' does not match time_format '%m/%d/%Y %H:%M'"),
    ("time,unit\n1/1/2017 1:00,a\n,a\n", "%m/%d/%Y %H:%M", 3, "time empty does not match"),
    ("time,unit\n01 Foo 2017 1:00,a\n", "%d %b %Y %H:%M", 2, "'Foo' is not a month name"),
    ("time,unit\n2017-01-01T00:00+2400,a\n", "%Y-%m-%dT%H:%M%z", 2, "UTC offset '+2400' is out of range"),
    ("time,unit\n0000-01-01 1:00,a\n", "%Y-%m-%d %H:%M", 2, "year 0 does not exist"),
    ("time,unit\n2017/366,a\n", "%Y/%j", 2, "day of the year 366 is out of range"),
])
def test_a_time_that_does_not_parse_names_its_line(tmp_path, text, fmt, line, rule):
    p = write(tmp_path, text)
    with pytest.raises(TraceFormatError) as exc:
        read_trace(p, time_format=fmt)
    assert exc.value.line == line and rule in str(exc.value), str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("fmt, words", [
    ("%m/%d %H:%M", "has no year (%Y or %y)"),
    ("%Y %H:%M", "needs a month and a day"),
    ("%m/%d/%Y %I:%M", "%I (hour 1-12) and %p (AM/PM) go together"),
    ("%m/%d/%Y %Q", "%Q is not supported (supported: %Y"),
    ("%Y-%m-%d %H:%M %H", "reads the hour twice"),
    ("%Y-%m-%d %j", "gives month and yday"),
    ("%Y-%m-%d 100%", "ends with a lone '%'"),
])
def test_a_bad_pattern_is_refused_before_the_file_is_read(tmp_path, fmt, words):
    with pytest.raises(ValueError, match=None) as exc:
        read_trace(tmp_path / "never-read.csv", time_format=fmt)
    assert words in str(exc.value) and not isinstance(exc.value, TraceFormatError)


def test_a_pattern_with_a_numeric_parquet_column_or_a_numeric_start(tmp_path):
    p = write(tmp_path, "time,unit\n1/2/2017 0:00,a\n1/3/2017 0:00,b\n1/4/2017 0:00,c\n")
    # start/end in the pattern's form, as an ISO string, or epoch seconds: the same window
    for start, end in (("1/2/2017 12:00", "1/3/2017 12:00"), ("2017-01-02T12:00Z", "2017-01-03T12:00Z"),
                       (dt.datetime(2017, 1, 2, 12, tzinfo=UTC).timestamp(), "1/3/2017 12:00")):
        tr = read_trace(p, time_format="%m/%d/%Y %H:%M", start=start, end=end)
        assert tr.times.tolist() == [43200.0] and (tr.dropped_before, tr.dropped_after) == (1, 1)
    with pytest.raises(ValueError, match=r"start must be an ISO 8601 datetime or a time in time_format"):
        read_trace(p, time_format="%m/%d/%Y %H:%M", start="soon")


# -- a window of a longer log ----------------------------------------------------------------------

def test_start_and_end_cut_a_window_and_count_what_they_drop(tmp_path):
    log = "time,host,reason\n" + "".join(f"2024-01-{d:02d}T00:00:00Z,h{d % 4},r{d}\n" for d in range(1, 31))
    p = write(tmp_path, log)
    full = read_trace(p, unit_column="host", reason_column="reason")
    tr = read_trace(p, unit_column="host", reason_column="reason", start="2024-01-10T12:00:00Z",
                    end="2024-01-20T00:00:00Z")
    assert (tr.dropped_before, tr.dropped_after, tr.n_dropped) == (10, 10, 20)
    assert tr.n_events == 10 and tr.times[0] == 12 * 3600.0 and tr.end == 9.5 * 86400
    assert tr.reasons == tuple(f"r{d}" for d in range(11, 21))
    # hosts are numbered over the whole log: the same ids as without a window
    assert tr.unit_names == full.unit_names and tr.n_units == 4
    assert tr.units.tolist() == full.units[10:20].tolist()
    assert "20 rows outside the window dropped" in repr(tr)
    # a row at exactly start or end is kept
    tr = read_trace(p, unit_column="host", start="2024-01-10T00:00:00Z", end="2024-01-20T00:00:00Z")
    assert tr.n_events == 11 and tr.times[-1] == tr.end


def test_a_window_of_a_seconds_log(tmp_path):
    p = write(tmp_path, "time,unit\n" + "".join(f"{t},{t % 3}\n" for t in range(0, 100, 10)))
    tr = read_trace(p, start=25.0, end=65.0)
    assert tr.times.tolist() == [5.0, 15.0, 25.0, 35.0] and tr.end == 40.0
    assert (tr.dropped_before, tr.dropped_after) == (3, 3) and tr.start is None


def test_an_empty_window_or_an_end_before_the_start_is_one_error(tmp_path):
    p = write(tmp_path, "time,unit\n2024-01-01T00:00Z,1\n2024-01-03T00:00Z,1\n")
    with pytest.raises(TraceFormatError, match=r"no failure rows between start and end \(1 before start, 1 after"):
        read_trace(p, start="2024-01-01T12:00Z", end="2024-01-02T00:00Z")
    with pytest.raises(TraceFormatError, match=r"end 2024-01-01T00:00:00\+00:00 is before start 2024-01-02"):
        read_trace(p, start="2024-01-02T00:00Z", end="2024-01-01T00:00Z")
    # every row is still checked, outside the window too
    bad = write(tmp_path, "time,unit\n2024-01-01T00:00Z,1\n2024-13-01T00:00Z,1\n2024-01-03T00:00Z,1\n", "bad.csv")
    with pytest.raises(TraceFormatError, match=r"line 3: time '2024-13-01T00:00Z' is not an ISO 8601"):
        read_trace(bad, start="2024-01-02T12:00Z")


# -- host_pattern ----------------------------------------------------------------------------------

def test_host_pattern_places_hosts_in_the_hierarchy(tmp_path):
    hosts = ["c21-5c0s7n2", "c3-0c2s0n0", "c10-0c1s3n1", "c3-0c2s0n0", "c2-1c0s5n3"]
    p = write(tmp_path, "time,host\n" + "".join(f"{i},{h}\n" for i, h in enumerate(hosts)))
    tr = read_trace(p, unit_column="host", host_pattern=CRAY_PATTERN)
    # cabinets in natural order (2-1 < 3-0 < 10-0 < 21-5), cage 0-2, slot 0-7, node 0-3
    assert tr.levels == (("cabinet", ("2-1", "3-0", "10-0", "21-5")), ("cage", ("0", "1", "2")),
                         ("slot", tuple(str(i) for i in range(8))), ("node", ("0", "1", "2", "3")))
    assert tr.n_units == 4 * 3 * 8 * 4 and tr.numbering == "host_pattern"

    def position(cab, cage, slot, node):
        return ((cab * 3 + cage) * 8 + slot) * 4 + node

    assert tr.units.tolist() == [position(3, 0, 7, 2), position(1, 2, 0, 0), position(2, 1, 3, 1),
                                 position(1, 2, 0, 0), position(0, 0, 5, 3)]
    assert tr.unit_names[position(3, 0, 7, 2)] == "c21-5c0s7n2" and tr.unit_names[1] == ""
    assert tr.domain_size("cabinet") == 96 and tr.domain_size("slot") == 4 and tr.domain_size(-1) == 1
    assert tr.domains("cage")[position(2, 1, 3, 1)] == 2 * 3 + 1
    assert tr.domain_names("cage")[7] == "10-0/1"
    assert tr.failures_per_domain("cabinet").tolist() == [1, 2, 1, 1]


def test_a_digit_level_spans_its_range_and_a_text_level_its_values(tmp_path):
    p = write(tmp_path, "time,host\n0,rackB-n3\n1,rackA-n7\n2,rack10-n5\n")
    tr = read_trace(p, unit_column="host", host_pattern=r"rack(?P<rack>\w+?)-n(?P<node>\d+)")
    assert tr.levels == (("rack", ("10", "A", "B")), ("node", ("3", "4", "5", "6", "7")))
    assert tr.units.tolist() == [2 * 5 + 0, 1 * 5 + 4, 0 * 5 + 2]


@pytest.mark.parametrize("hosts, pattern, kwargs, error, words", [
    (["c1-0c0s0n0", "nid00042"], CRAY_PATTERN, {}, TraceFormatError,
     "line 3: host 'nid00042' does not match host_pattern"),
    (["c1-0c0s0n0", "c1-0c0s0n1"], r"c(?P<cabinet>\d+-\d+)c\d+s\d+n\d+", {}, TraceFormatError,
     "line 3: hosts 'c1-0c0s0n0' and 'c1-0c0s0n1' fall on one position"),
    (["n1", "n123456789"], r"n(?P<node>\d+)", {}, TraceFormatError, "more than 4,194,304 node positions"),
    (["a"], r"(a)", {}, ValueError, "has no named group"),
    (["a"], r"(?P<x>a", {}, ValueError, "is not a valid regular expression"),
    (["a"], r"(?P<x>a)", {"unit_map": ["a"]}, ValueError, "host_pattern does not go with unit_map"),
    (["a"], r"(?P<x>a)", {"units": "ids"}, ValueError, "host_pattern does not go with units='ids'"),
    (["a"], r"(?P<x>a)", {"n_units": 5}, ValueError, "host_pattern does not go with n_units=5"),
    (["a"], 7, {}, TypeError, "host_pattern must be a regular expression"),
])
def test_host_pattern_errors_are_one_line(tmp_path, hosts, pattern, kwargs, error, words):
    p = write(tmp_path, "time,host\n" + "".join(f"{i},{h}\n" for i, h in enumerate(hosts)))
    with pytest.raises(error) as exc:
        read_trace(p, unit_column="host", host_pattern=pattern, **kwargs)
    assert words in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


def test_domain_summary_tells_racks_that_fail_together_from_random_ones(tmp_path):
    rng = np.random.default_rng(3)
    # 2,000 failures on 20 racks of 16 nodes at random: dispersion near 1, no shared instants
    units = rng.integers(0, 320, 2000)
    levels = (("rack", tuple(str(i) for i in range(20))), ("node", tuple(str(i) for i in range(16))))
    tr = Trace(np.arange(2000.0), units, n_units=320, levels=levels, numbering="host_pattern")
    s = tr.domain_summary("rack")
    assert s.domains == 20 and s.failures == 2000 and 0.5 < s.dispersion < 1.8 and s.p_uniform > 1e-4
    assert s.shared_instants == 0
    # rack 7 fails 5x as often, and three instants take down 3 nodes of one rack
    hot = np.concatenate((units, rng.integers(7 * 16, 8 * 16, 400)))
    t = np.concatenate((np.arange(2000.0), np.full(400, 5.5)))
    t[:9], hot[:9] = [1, 1, 1, 2, 2, 2, 3, 3, 3], [0, 1, 2, 40, 41, 40, 200, 300, 201]
    order = np.argsort(t, kind="stable")
    s = Trace(t[order], hot[order], n_units=320, levels=levels, numbering="host_pattern").domain_summary(0)
    assert s.busiest == "7" and s.dispersion > 10 and s.p_uniform < 1e-10
    # instants 1 (rack 0: 3 nodes), 2 (rack 2: 2 distinct nodes) and 5.5 (rack 7); not 3 (racks 12, 18, 12: 2 nodes)
    assert s.shared_instants == 4
    assert "the busiest (7)" in str(s) and "\n" not in str(s)


def test_trace_values_keep_what_the_reader_found(tmp_path):
    p = tmp_path / "log.csv"
    cray_log(p, 300, seed=1, fmt="%m/%d/%Y %H:%M")
    tr = read_trace(p, unit_column="host", time_format="%m/%d/%Y %H:%M", host_pattern=CRAY_PATTERN,
                    start="2016-01-01T00:00Z", end="2018-01-01T00:00Z")
    assert tr.dropped_before > 0 and tr.dropped_after > 0
    assert pickle.loads(pickle.dumps(tr)) == tr
    half = tr.replace(times=tr.times / 2, end=tr.end / 2)
    assert half.levels == tr.levels and half.dropped_after == tr.dropped_after and half.end == tr.end / 2
    with pytest.raises(TypeError, match="Trace has no attribute 'racks'"):
        tr.replace(racks=3)
    with pytest.raises(ValueError, match=r"levels give 4 positions \(2 x 2\) but n_units=5"):
        Trace([1.0], [0], n_units=5, levels=(("a", ("0", "1")), ("b", ("0", "1"))), numbering="host_pattern")
    with pytest.raises(ValueError, match="levels go with numbering='host_pattern'"):
        Trace([1.0], [0], n_units=2, levels=(("a", ("0", "1")),))


def test_a_generated_titan_like_log_reads_whole(tmp_path):
    """A 20,000-row log in Titan's layout with US minutes: every row where the generator put it."""
    p = tmp_path / "titan.csv"
    written, pos = cray_log(p, 20_000, seed=7)
    tr = read_trace(p, unit_column="host", reason_column="reason", time_format="%m/%d/%Y %H:%M",
                    host_pattern=CRAY_PATTERN, sort=True)
    assert tr.n_events == written.size
    assert np.allclose(tr.times, written - written.min())
    radix = [len(lab) for _, lab in tr.levels]
    assert radix[1:] == list(TITAN[2:])
    # the positions are the generator's (cabinet = column-major over the columns and rows seen)
    names = np.array(tr.unit_names)[tr.units]
    assert names.tolist() == [cray_host(*q) for q in pos.tolist()]


def test_the_titan_table_runs_on_a_file_of_its_format(tmp_path, capsys):
    """bench/trace_log_table.py (docs/failures.md's Titan table) on a generated file in the
    public log's format: its failure rows become a log, and every row of the table runs."""
    from bench.trace_log_table import main
    from tests.trace_logs import cray_events

    times, pos = cray_events(300, seed=3, shape=(2, 1, 3, 8, 4), years=(1,), lemons=0.05,
                             start=dt.datetime(2016, 1, 1, tzinfo=UTC))
    src = tmp_path / "gc_full.csv"
    with open(src, "w") as f:
        f.write("SN,location,insert,remove,duration,out,event\n")
        for i, (t, p) in enumerate(zip(times.tolist(), pos.tolist())):
            when = dt.datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S")
            f.write(f"{i:013d},{cray_host(*p)},2013-12-01 00:00:00,{when},1,FALSE,{('DBE', 'OTB', '')[i % 3]}\n")
    assert main(["--log", str(src), "--group", "8", "--days", "2", "--seeds", "3", "--r", "2"]) == 0
    out = capsys.readouterr().out
    assert f"log: {sum(1 for i in range(times.size) if i % 3 != 2):,} failure rows" in out
    assert "| host_pattern, windows = 3, rack-aware | " in out and "by cabinet: " in out


def test_a_parquet_log_of_text_times_and_names(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "log.parquet"
    pq.write_table(pa.table({"time": ["1/23/2014 5:59", "1/23/2014 17:05", "12/1/2014 0:00"],
                             "host": ["c1-0c0s0n1", "c0-1c2s7n3", "c1-0c0s0n1"]}), p)
    tr = read_trace(p, unit_column="host", time_format="%m/%d/%Y %H:%M", host_pattern=CRAY_PATTERN,
                    end="2014-06-01T00:00Z")
    assert tr.times.tolist() == [0.0, 11 * 3600 + 6 * 60.0] and tr.dropped_after == 1
    assert [tr.unit_names[u] for u in tr.units] == ["c1-0c0s0n1", "c0-1c2s7n3"]
    assert tr.domains("cabinet")[tr.units].tolist() == [1, 0]
