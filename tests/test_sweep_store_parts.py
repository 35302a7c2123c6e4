"""Issue 23, item 3: the store's parts are checksummed and checked on every read; a damaged
or foreign part is reported with its path and skipped (readers) or quarantined (a writer),
never merged; ``--report`` on something that is not a store says so in one line (exit 2)."""
import shutil
import warnings

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import spare_core.sweeps as sweeps  # noqa: E402
from spare_core.cli import main  # noqa: E402
from spare_core.sim import Scenario  # noqa: E402
from spare_core.sweeps import ResultStore, StoreError, SweepSpec, execute, run_sweep, summarise_store  # noqa: E402

# (a getattr so that, run against the code before it, these tests fail on what they check)
StoreWarning = getattr(sweeps, "StoreWarning", UserWarning)


def small_spec(seeds=4):
    return SweepSpec(Scenario.paper_600k(16, n_steps=40), ("ckpt", "spare"), [2, 3], seeds=seeds)


@pytest.fixture(scope="module")
def one_part(tmp_path_factory):
    """A store of one part (12 runs) and its table."""
    d = tmp_path_factory.mktemp("one") / "s"
    run_sweep(small_spec(), d, batch_runs=10_000)
    return d, ResultStore(d).read().sort_by("key")


def _same(a, b) -> bool:
    """``a.equals(b)`` with NaN equal to NaN (the cost of a run without a price is NaN, and
    Arrow's equality says NaN != NaN): the same schema and the same values, bit for bit."""
    return a.schema == b.schema and repr(a.to_pylist()) == repr(b.to_pylist())


def _copy(src, tmp_path):
    dst = tmp_path / "s"
    shutil.copytree(src, dst)
    (part,) = ResultStore(dst).parts()
    return dst, part


def test_parts_carry_page_checksums(one_part):
    d, _ = one_part
    (part,) = ResultStore(d).parts()
    meta = pq.ParquetFile(part).metadata
    assert meta.num_rows == 12
    # a page's CRC is in its header: a flip in a data page is a checksum error on read
    with pytest.raises(OSError, match="CRC|checksum"):
        raw = bytearray(part.read_bytes())
        col = meta.row_group(0).column(meta.schema.names.index("ratio"))
        raw[col.data_page_offset + (col.total_compressed_size // 2)] ^= 0x10
        bad = part.with_name("x.parquet")
        bad.write_bytes(bytes(raw))
        try:
            pq.read_table(bad, page_checksum_verification=True)
        finally:
            bad.unlink()


def test_no_single_bit_flip_reads_back_changed_values(one_part, tmp_path):
    # main: 54 and 67 of 300 flips (bench/store_bitflips.py) read back changed values, no error
    d, ref = one_part
    dst, part = _copy(d, tmp_path)
    good = part.read_bytes()
    rng = np.random.default_rng(23)
    outcomes = {"skipped": 0, "same": 0}
    for bit in rng.integers(0, 8 * len(good), 120):
        b = bytearray(good)
        b[bit // 8] ^= 1 << (bit % 8)
        part.write_bytes(bytes(b))
        store = ResultStore(dst)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = store.read()
        if t.num_rows == 0:
            assert [p for p, _ in store.skipped] == [part]
            assert any(issubclass(x.category, StoreWarning) and str(part) in str(x.message) for x in w)
            outcomes["skipped"] += 1
        else:
            assert _same(t.sort_by("key"), ref), f"bit {bit}: changed values read back"
            outcomes["same"] += 1
    assert outcomes["skipped"] > 60


def _foreign(path):
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), path)


def _wrong_schema(path, ref):
    t = ref.set_column(ref.schema.names.index("ratio"), "ratio", pa.array([str(x) for x in ref.column("ratio").to_pylist()]))
    pq.write_table(t, path)


@pytest.mark.parametrize("damage", ["truncated", "foreign", "wrong schema", "empty", "directory", "not parquet",
                                    "other keys"])
def test_a_bad_part_is_skipped_by_readers_and_quarantined_by_a_writer(one_part, tmp_path, damage, capsys):
    d, ref = one_part
    dst, part = _copy(d, tmp_path)
    good = part.read_bytes()
    if damage == "truncated":
        part.write_bytes(good[: len(good) // 2])
    elif damage == "foreign":
        _foreign(part)
    elif damage == "wrong schema":
        _wrong_schema(part, ref)
    elif damage == "empty":
        part.write_bytes(b"")
    elif damage == "directory":
        part.unlink()
        part.mkdir()
    elif damage == "not parquet":
        part.write_bytes(b"PAR1" + b"\0" * 100 + b"PAR1")
    else:  # a valid part under another part's name: its keys are not the name's
        pq.write_table(ref.slice(0, 5), part)
    # readers: skipped, named, never merged; the report is one line per part, no traceback
    store = ResultStore(dst)
    with pytest.warns(StoreWarning, match=str(part)):
        assert store.read().num_rows == 0
    with pytest.warns(StoreWarning):
        assert summarise_store(dst).num_rows == 0
    assert main(["sweep", "--report", "--store", str(dst)]) == 0
    cap = capsys.readouterr()
    assert "holds no runs" in cap.out
    assert cap.err.count("\n") == 1 and str(part) in cap.err and "Traceback" not in cap.err
    # a writer: moved to quarantine/, its runs simulated again, the store as an uninterrupted one
    with pytest.warns(StoreWarning, match="quarantine"):
        done = run_sweep(small_spec(), dst)
    assert done.stored_before == 0 and done.computed == 12
    assert (dst / "quarantine" / part.name).exists()
    assert _same(ResultStore(dst).read().sort_by("key"), ref)


def test_resumption_reads_back_only_checked_runs(one_part, tmp_path):
    # execute(collect=True) reads stored runs back: a damaged part's runs are recomputed,
    # never taken from the damaged bytes
    d, ref = one_part
    dst, part = _copy(d, tmp_path)
    meta = pq.ParquetFile(part).metadata
    col = meta.row_group(0).column(meta.schema.names.index("wall_time"))
    raw = bytearray(part.read_bytes())
    raw[col.data_page_offset + col.total_compressed_size - 3] ^= 0x01
    part.write_bytes(bytes(raw))
    with pytest.warns(StoreWarning, match="quarantine"):
        res = execute(small_spec(), store=ResultStore(dst))
    clean = execute(small_spec())
    assert [r.wall_time for r in res.runs] == [r.wall_time for r in clean.runs] and len(res.runs) == 12
    assert _same(ResultStore(dst).read().sort_by("key"), ref)


def test_stray_files_in_runs_are_not_the_stores(one_part, tmp_path):
    d, ref = one_part
    dst, _ = _copy(d, tmp_path)
    (dst / "runs" / "notes.txt").write_text("mine")
    _foreign(dst / "runs" / "other.parquet")
    (dst / "runs" / ".part-abc.tmp").write_bytes(b"torn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _same(ResultStore(dst).read().sort_by("key"), ref)
    assert run_sweep(small_spec(), dst).stored_before == 12
    assert (dst / "runs" / "notes.txt").exists() and (dst / "runs" / "other.parquet").exists()


def test_a_part_of_an_older_store_still_reads(one_part, tmp_path):
    # parts written before this change: int64 seeds, no page checksums
    d, ref = one_part
    dst, part = _copy(d, tmp_path)
    t = pq.read_table(part)
    t = t.set_column(t.schema.names.index("seed"), "seed", t.column("seed").cast(pa.int64()))
    pq.write_table(t, part, compression="zstd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = ResultStore(dst).read().sort_by("key")
    assert _same(back, ref) and back.schema.field("seed").type == pa.uint64()


@pytest.mark.parametrize("what", ["empty", "foreign", "missing", "bad manifest"])
def test_report_on_what_is_not_a_store(tmp_path, capsys, what):
    # main: "holds no runs", exit 0 (empty or foreign directory)
    d = tmp_path / "d"
    if what != "missing":
        d.mkdir()
    if what == "foreign":
        (d / "data.csv").write_text("a,b\n")
        (d / "runs").mkdir()
        _foreign(d / "runs" / "part-0.parquet")
    elif what == "bad manifest":
        (d / "store.json").write_text('{"format": "something else"}')
    assert main(["sweep", "--report", "--store", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("spare sweep: error:") and "\n" not in err
    assert ("does not exist" if what == "missing" else "is not a sweep store") in err
    with pytest.raises(StoreError):
        summarise_store(d)


def test_a_part_with_missing_values_is_skipped(one_part, tmp_path):
    # a Parquet file with the store's columns, keys and name, but nulls where numbers belong
    d, ref = one_part
    dst, part = _copy(d, tmp_path)
    t = ref.set_column(ref.schema.names.index("ratio"), "ratio", pa.nulls(ref.num_rows, pa.float64()))
    pq.write_table(t, part)
    with pytest.warns(StoreWarning, match="missing values in column 'ratio'"):
        assert ResultStore(dst).read().num_rows == 0
    t = ref.set_column(ref.schema.names.index("wipeouts"), "wipeouts", pa.nulls(ref.num_rows))
    pq.write_table(t, part)
    with pytest.warns(StoreWarning, match="'wipeouts' of type null"):
        assert ResultStore(dst).read().num_rows == 0
