"""Reading traces and meta files: Parquet and CSV in any row order give the same trace, and every
bad input is one line naming the row and column (missing columns, cells, negative durations,
unknown op types, a rank missing from a step, sizes that do not fit, size caps)."""
import numpy as np
import pytest

import spare_core.stragglers._trace as trace_mod
from spare_core.stragglers import (JobSizes, Trace, TraceError, analyse, read_meta, read_trace, synthetic_trace,
                                   trace_columns, write_trace)


@pytest.fixture(scope="module")
def small():
    return synthetic_trace(dp=2, pp=2, microbatches=2, steps=2, slow={1: 1.5}, seed=0)


def _cols(tr, shuffle=None):
    return {k: v.copy() for k, v in trace_columns(tr, shuffle=shuffle).items()}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_written_trace_reads_back_in_any_row_order(tmp_path, small, suffix):
    path = tmp_path / f"t{suffix}"
    write_trace(path, small, shuffle=7)
    back = read_trace(path, JobSizes(dp=2, pp=2))
    ordered = Trace.from_columns(trace_columns(small), JobSizes(dp=2, pp=2))  # ops in the reader's order
    np.testing.assert_allclose(back.start, ordered.start, rtol=0, atol=1e-8)
    np.testing.assert_allclose(back.end, ordered.end, rtol=0, atol=1e-8)
    assert analyse(back).slowdown == pytest.approx(analyse(small).slowdown, rel=1e-6)


def test_sizes_are_inferred_without_meta(small):
    tr = Trace.from_columns(_cols(small, shuffle=1))
    assert (tr.sizes.dp, tr.sizes.pp, tr.sizes.vpp) == (2, 2, 1)
    v = synthetic_trace(dp=1, pp=2, vpp=2, microbatches=2, steps=1)
    assert Trace.from_columns(trace_columns(v)).sizes.vpp == 2


def test_a_pandas_frame_is_read_too(small):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(_cols(small))
    df["optype"] = df["optype"].astype("category")
    assert Trace.from_columns(df, JobSizes(dp=2, pp=2)).n_ops == small.n_ops


def _bad(small, edit):
    cols = _cols(small)
    edit(cols)
    with pytest.raises(TraceError) as exc:
        Trace.from_columns(cols, JobSizes(dp=2, pp=2))
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_missing_columns_are_named(small):
    assert "missing column 'duration'" in _bad(small, lambda c: c.pop("duration"))
    assert "missing columns 'stage', 'seq_id'" in _bad(small, lambda c: (c.pop("stage"), c.pop("seq_id")))


def test_a_negative_duration_names_row_and_column(small):
    def edit(c):
        c["duration"][5] = -0.25
    assert _bad(small, edit) == "trace: row 6, column 'duration': negative duration -0.25"


def test_an_unknown_op_type_names_row_and_column(small):
    def edit(c):
        c["optype"][3] = "warp-drive"
    msg = _bad(small, edit)
    assert msg.startswith("trace: row 4, column 'optype': unknown operation type 'warp-drive'")


def test_a_missing_or_non_numeric_cell_names_row_and_column(small):
    def nan(c):
        c["start_ts"][9] = np.nan
    assert "row 10, column 'start_ts': missing or not finite" in _bad(small, nan)

    def text(c):
        c["step"] = c["step"].astype(object)
        c["step"][2] = "two"
    assert "row 3, column 'step': not a number: 'two'" in _bad(small, text)

    def frac(c):
        c["seq_id"] = c["seq_id"].astype(float)
        c["seq_id"][4] = 1.5
    assert "row 5, column 'seq_id': not an integer" in _bad(small, frac)


def test_a_step_with_a_missing_rank(small):
    def edit(c):
        gone = (c["step"] == 1) & (c["rank"] == 3)
        for k in c:
            c[k] = c[k][~gone]
    assert _bad(small, edit) == "trace: step 1: rank 3 (dp_rank 1, stage 1) has no rows"


def test_a_missing_and_a_duplicated_op(small):
    def drop(c):
        i = int(np.flatnonzero((c["step"] == 1) & (c["optype"] == "forward-compute"))[0])
        for k in c:
            c[k] = np.delete(c[k], i)
    assert "step 1, rank 0 (dp_rank 0, stage 0): no forward-compute seq_id 0" in _bad(small, drop)

    def dup(c):
        for k in c:
            c[k] = np.append(c[k], c[k][-1:])
    assert "a second" in _bad(small, dup)


def test_sizes_that_do_not_fit_the_ranks_present(small):
    cols = _cols(small)
    with pytest.raises(TraceError, match=r"column 'dp_rank': 1 is outside 0..0 \(dp = 1\)"):
        Trace.from_columns(cols, JobSizes(dp=1, pp=2))
    with pytest.raises(TraceError, match=r"dp 3 x pp 2 .* need 6 workers .* holds 4"):
        Trace.from_columns(cols, JobSizes(dp=3, pp=2))
    one = _cols(small)
    i = int(np.flatnonzero(one["rank"] == 3)[1])
    one["rank"][i] = 2
    with pytest.raises(TraceError, match=f"row {i + 1}, column 'rank': rank 2 for dp_rank 1 stage 1, which is rank 3"):
        Trace.from_columns(one, JobSizes(dp=2, pp=2))
    cols["rank"][cols["rank"] == 3] = 2
    with pytest.raises(TraceError, match="column 'rank': rank 2 is both dp_rank 0 stage 1 and dp_rank 1 stage 1"):
        Trace.from_columns(cols, JobSizes(dp=2, pp=2))


def test_meta_files(tmp_path):
    y = tmp_path / "meta-X.yaml"
    y.write_text("trial_name: X\nrun_id: 0\ndp_size: 4  # four\npp_size: 2\ntp_size: 2\ndsp_size: 1\n"
                 "vpp_size: 1\nworld_size: 16\n")
    z = read_meta(y)
    assert (z.dp, z.pp, z.tp, z.cp, z.world_size, z.name) == (4, 2, 2, 1, 16, "X")
    j = tmp_path / "m.json"
    j.write_text('{"dp": 2, "pp": 2, "cp": 2}')
    assert read_meta(j).world_size == 8
    t = tmp_path / "m.toml"
    t.write_text("dp_size = 2\npp_size = 4\n")
    assert read_meta(t).pp == 4
    for text, match in (("dp_size: 4\npp_size: 2\nworld_size: 9\n", "= 8, but world_size is 9"),
                        ("dp_size: 4\nfoo: 1\n", "unknown key 'foo'"),
                        ("dp_size: 0\npp_size: 1\n", "dp_size must be an integer >= 1"),
                        ("dp_size: 2\n  nested: 1\n", "line 2: expected 'key: value'"),
                        ("pp_size: 2\n", "no dp_size")):
        y.write_text(text)
        with pytest.raises(TraceError, match=match):
            read_meta(y)


def test_work_is_bounded_before_decoding(tmp_path, small, monkeypatch):
    p = tmp_path / "t.parquet"
    write_trace(p, small)
    monkeypatch.setattr(trace_mod, "MAX_TRACE_ROWS", 10)
    with pytest.raises(TraceError, match="rows, over the limit of 10"):
        read_trace(p)
    monkeypatch.setattr(trace_mod, "MAX_TRACE_BYTES", 100)
    with pytest.raises(TraceError, match="over the 9.53674e-05 MiB limit of a trace"):
        read_trace(p)
    with pytest.raises(TraceError, match="a directory, not a regular file"):
        read_trace(tmp_path)


def test_a_file_that_is_not_a_trace(tmp_path):
    p = tmp_path / "x.parquet"
    p.write_bytes(b"PAR1 nonsense")
    with pytest.raises(TraceError, match="not a Parquet file"):
        read_trace(p)
    c = tmp_path / "x.csv"
    c.write_text("a,b\n1,2\n")
    with pytest.raises(TraceError, match="missing columns 'dp_rank'"):
        read_trace(c)


def test_csv_without_pyarrow(tmp_path, small, monkeypatch):
    import sys

    path = tmp_path / "t.csv"
    write_trace(path, small, shuffle=3)
    with_arrow = read_trace(path)
    monkeypatch.setitem(sys.modules, "pyarrow.csv", None)
    plain = read_trace(path)
    np.testing.assert_allclose(plain.start, with_arrow.start)
    bad = tmp_path / "bad.csv"
    bad.write_text(path.read_text().replace("forward-compute", "lunch", 1))
    with pytest.raises(TraceError, match=r"\(line \d+\), column 'optype': unknown operation type 'lunch'"):
        read_trace(bad)


def test_select_steps(small):
    one = small.select_steps([1])
    assert one.steps.tolist() == [1] and one.start.shape[0] == 1
    np.testing.assert_array_equal(one.start[0], small.start[1])
    with pytest.raises(TraceError, match="none of the trace's steps"):
        small.select_steps([7])
