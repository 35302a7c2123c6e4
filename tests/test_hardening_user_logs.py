"""Issue 23, item 4 and its neighbours: logs and loaded files read like user data.

Local times crossing a clock change were silently shifted (or refused as "time goes
backwards"); integral floats in an id column became names numbered by appearance; a
Parquet trace with duplicate columns gave a 7-line ArrowInvalid without the file name; a
loaded scenario file could not be pickled or deep-copied; ``--set 'k=v\\nx=1'`` silently
dropped ``x=1``; trace ``start = 1e19`` was an OverflowError traceback."""
import copy
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spare_core.events.trace import TraceFormatError, read_trace
from spare_core.scenario_file import load_scenario_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# Paris, 27 Oct 2024: 02:00-03:00 happens twice (summer time +02:00, then winter time +01:00)
AUTUMN = ("time,unit\n2024-10-27T01:30:00,1\n2024-10-27T02:10:00,2\n2024-10-27T02:50:00,3\n"
          "2024-10-27T02:20:00,4\n2024-10-27T03:10:00,5\n")
# Paris, 31 Mar 2024: 02:00-03:00 does not happen
SPRING = "time,unit\n2024-03-31T01:30:00,1\n2024-03-31T02:30:00,2\n2024-03-31T03:30:00,3\n"


def _write(tmp_path, text, name="log.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("sort", [False, True])
def test_a_repeated_local_hour_is_refused_naming_the_line(tmp_path, sort):
    # before: refused as "time goes backwards" (line 5), or with sort=True shifted one hour
    with pytest.raises(TraceFormatError, match="line 3: local time 2024-10-27T02:10:00 is ambiguous in "
                                               "Europe/Paris .* set fold"):
        read_trace(_write(tmp_path, AUTUMN), tz="Europe/Paris", sort=sort)


@pytest.mark.parametrize("fold, times", [
    ("infer", [0.0, 2400.0, 4800.0, 6600.0, 9600.0]),   # the log runs forward across the change
    ("later", None),    # every 02:xx in winter time: 02:50 then 02:20 goes back
    ("earlier", None),  # every 02:xx in summer time: 02:50 then 02:20 goes back
])
def test_fold_resolves_the_repeated_hour(tmp_path, fold, times):
    p = _write(tmp_path, AUTUMN)
    if times is None:
        with pytest.raises(TraceFormatError, match="line 5: time goes backwards"):
            read_trace(p, tz="Europe/Paris", fold=fold)
        tr = read_trace(p, tz="Europe/Paris", fold=fold, sort=True)
        assert tr.n_events == 5
        return
    tr = read_trace(p, tz="Europe/Paris", fold=fold)
    assert tr.times.tolist() == times
    assert tr.start.isoformat() == "2024-10-26T23:30:00+00:00"


def test_fold_earlier_and_later_are_an_hour_apart(tmp_path):
    p = _write(tmp_path, "time,unit\n2024-10-27T00:00:00,0\n2024-10-27T02:30:00,1\n")
    early = read_trace(p, tz="Europe/Paris", fold="earlier")
    late = read_trace(p, tz="Europe/Paris", fold="later")
    assert late.times[1] - early.times[1] == 3600.0


def test_a_skipped_local_hour_is_refused_or_resolved_by_dst(tmp_path):
    p = _write(tmp_path, SPRING)
    with pytest.raises(TraceFormatError, match="line 3: local time 2024-03-31T02:30:00 does not exist in "
                                               "Europe/Paris .* set dst"):
        read_trace(p, tz="Europe/Paris")
    assert read_trace(p, tz="Europe/Paris", dst="before").times.tolist() == [0.0, 3600.0, 3600.0]
    assert read_trace(p, tz="Europe/Paris", dst="after").times.tolist() == [0.0, 0.0, 3600.0]


def test_an_ambiguous_start_is_refused_too(tmp_path):
    p = _write(tmp_path, "time,unit\n2024-10-27T05:00:00,1\n")
    with pytest.raises(ValueError, match="start: local time 2024-10-27T02:30:00 is ambiguous"):
        read_trace(p, tz="Europe/Paris", start="2024-10-27T02:30:00")
    tr = read_trace(p, tz="Europe/Paris", start="2024-10-27T02:30:00", fold="later")
    assert tr.times.tolist() == [9000.0]


def test_utc_and_offsets_are_unchanged(tmp_path):
    p = _write(tmp_path, AUTUMN.replace(":00,", ":00+02:00,", 3).replace("02:20:00,", "02:20:00+01:00,")
               .replace("03:10:00,", "03:10:00+01:00,"))
    assert read_trace(p, tz="Europe/Paris").times.tolist() == [0.0, 2400.0, 4800.0, 6600.0, 9600.0]
    assert read_trace(_write(tmp_path, AUTUMN, "u.csv"), sort=True).n_events == 5  # UTC: no change of clocks


def test_fold_and_dst_values_are_checked(tmp_path):
    with pytest.raises(ValueError, match="fold"):
        read_trace(_write(tmp_path, AUTUMN), fold="first")
    with pytest.raises(ValueError, match="dst"):
        read_trace(_write(tmp_path, AUTUMN), dst=True)


def test_a_parquet_log_in_local_time_obeys_the_same_rules(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import datetime as dt
    stamps = [dt.datetime(2024, 10, 27, 1, 30), dt.datetime(2024, 10, 27, 2, 10), dt.datetime(2024, 10, 27, 2, 50),
              dt.datetime(2024, 10, 27, 2, 20)]
    p = tmp_path / "log.parquet"
    pq.write_table(pa.table({"time": pa.array(stamps, pa.timestamp("us")), "unit": [1, 2, 3, 4]}), p)
    with pytest.raises(TraceFormatError, match="row 2: local time .* is ambiguous"):
        read_trace(p, tz="Europe/Paris")
    assert read_trace(p, tz="Europe/Paris", fold="infer").times.tolist() == [0.0, 2400.0, 4800.0, 6600.0]


# -- ids written as integral floats ----------------------------------------------------------

def test_integral_floats_in_the_unit_column_stay_ids(tmp_path):
    # before: 15, 0, 7.0 was read as names numbered by appearance: groups 0, 1, 2 of 3 units
    tr = read_trace(_write(tmp_path, "time,unit\n10,15\n20,0\n30,7.0\n"))
    assert tr.units.tolist() == [15, 0, 7] and tr.unit_names is None and tr.n_units == 16
    assert read_trace(_write(tmp_path, "time,unit\n10,15.0\n20,0.00\n", "b.csv"), units="ids").units.tolist() == [15, 0]


def test_non_integral_floats_are_still_names_or_refused_as_ids(tmp_path):
    p = _write(tmp_path, "time,unit\n10,15\n20,7.5\n")
    assert read_trace(p).unit_names == ("15", "7.5")
    with pytest.raises(TraceFormatError, match="line 3: unit '7.5' is not an integer id"):
        read_trace(p, units="ids")


def test_a_parquet_float_unit_column_of_integers_is_ids(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "f.parquet"
    pq.write_table(pa.table({"time": [10.0, 20.0, 30.0], "unit": [15.0, 0.0, 7.0]}), p)
    assert read_trace(p).units.tolist() == [15, 0, 7]
    pq.write_table(pa.table({"time": [10.0, 20.0], "unit": [15.0, 0.5]}), p)
    with pytest.raises(TraceFormatError, match="not integers"):
        read_trace(p)


# -- one line instead of a traceback -----------------------------------------------------------

@pytest.mark.parametrize("names, which", [(["time", "unit", "unit"], "unit"), (["time", "time", "unit"], "time")])
def test_a_parquet_log_with_duplicate_columns_is_one_error_naming_the_file(tmp_path, names, which):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1.0, 2.0]), pa.array([1, 2]), pa.array([3, 4])], names=names), p)
    with pytest.raises(TraceFormatError) as info:
        read_trace(p)
    msg = str(info.value)
    assert "\n" not in msg and str(p) in msg and f"{which} column {which!r} appears more than once" in msg


@pytest.mark.parametrize("value", [1e19, -1e19, 1e15])
def test_an_epoch_start_out_of_range_is_one_line(tmp_path, value):
    p = _write(tmp_path, "time,unit\n100,1\n")
    with pytest.raises(ValueError, match="start must be epoch seconds within the years 1-9999"):
        read_trace(p, time_format="epoch", start=value)
    with pytest.raises(ValueError, match="end must be epoch seconds"):
        read_trace(p, time_format="epoch", end=value)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_a_loaded_scenario_file_pickles_and_deep_copies_equal(name):
    sf = load_scenario_file(EXAMPLES / name)
    assert pickle.loads(pickle.dumps(sf)) == sf
    assert copy.deepcopy(sf) == sf
    assert copy.deepcopy(sf).scenario.t0 == sf.scenario.t0


def _spare(*args):
    return subprocess.run([sys.executable, "-m", "spare_core", *args], capture_output=True, text=True)


@pytest.mark.parametrize("item", ["costs.restart=60\nx=1", "costs.restart=60\r\ncompare.seeds=1"])
def test_a_set_item_with_a_newline_is_refused_with_one_line(item):
    out = _spare("run", str(EXAMPLES / "llama3_16k.toml"), "--seeds", "1", "--set", item)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "--set item must be one line" in out.stderr


def test_a_trace_start_of_1e19_in_a_file_is_one_line_exit_2():
    out = _spare("run", str(EXAMPLES / "trace_job.toml"), "--seeds", "1", "--set", "failures.trace.start=1e19")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "start must be epoch seconds" in out.stderr
