"""Issue 23, item 2: inputs are regular files read with a size cap; outputs write through
symlinks, refuse devices and FIFOs, honour the umask, are atomic (``--report`` included) and
hold strict JSON.

Each test below failed on the main before this change (the comment says how). The commands
that could read ``/dev/zero`` for ever run in a child process with its address space capped
(so the old behaviour is a MemoryError, exit 1, not a machine out of memory) and a timeout
(so a FIFO that blocks is a failure, not a hang).
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from spare_core import _files
from spare_core._files import MAX_LOG_BYTES, MAX_LOG_ROWS, MAX_TOML_BYTES, InputFileError, read_input, read_toml
from spare_core.events.trace import TraceFormatError, read_trace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def spare(*argv, timeout=60, cwd=None):
    """``spare ARGV`` in a child with 2 GiB of address space at most."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SPARE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "spare_core", *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd, preexec_fn=_capped)


def one_line(p, code=2):
    lines = p.stderr.strip().splitlines()
    assert p.returncode == code and len(lines) == 1 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
    return lines[0]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


# -- inputs -----------------------------------------------------------------------------------

def test_spare_run_on_dev_zero_is_refused_as_not_a_regular_file():
    # before: read_bytes() of /dev/zero until MemoryError (exit 1 here, memory exhausted elsewhere)
    line = one_line(spare("run", "/dev/zero"))
    assert "/dev/zero" in line and "a character device, not a regular file" in line


def test_spare_run_on_a_fifo_or_a_directory_is_refused(fifo, tmp_path):
    # before: a FIFO blocked in open() for ever; a directory said "Is a directory" (kept, in the new words)
    assert "a FIFO, not a regular file" in one_line(spare("run", fifo, timeout=30))
    assert "a directory, not a regular file" in one_line(spare("run", tmp_path))


def test_a_spec_naming_dev_zero_as_its_scenario_file_is_refused(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('seeds = 1\npolicies = ["ckpt"]\nredundancies = [1]\n[[scenarios]]\nfile = "/dev/zero"\n')
    line = one_line(spare("sweep", spec, "--store", tmp_path / "store"))
    assert "/dev/zero" in line and "not a regular file" in line
    assert not (tmp_path / "store" / "runs").exists() or not list((tmp_path / "store" / "runs").iterdir())


@pytest.mark.parametrize("key", ["failures.trace.unit_map", "failures.trace.path"])
@pytest.mark.parametrize("kind", ["dev_zero", "fifo"])
def test_a_trace_log_or_hostfile_that_is_a_device_or_a_fifo_is_refused(tmp_path, fifo, key, kind):
    # before: unit_map = "/dev/zero" read until memory ran out; a FIFO as unit_map blocked for ever
    target = "/dev/zero" if kind == "dev_zero" else str(fifo)
    line = one_line(spare("run", EXAMPLES / "trace_job.toml", "--set", f"{key}={json.dumps(target)}",
                          "--seeds", "1", "--r-max", "1", "--steps", "100", timeout=60))
    assert key.removesuffix(".path") in line and target in line and "not a regular file" in line


def test_read_input_caps_the_bytes_read_even_when_the_size_is_not_reported(tmp_path):
    p = tmp_path / "x.toml"
    p.write_bytes(b"a = 1\n" * 10)
    assert read_input(p, "scenario file", 60) == b"a = 1\n" * 10
    with pytest.raises(InputFileError, match="61 bytes, over the .* limit of a scenario file"):
        p.write_bytes(b"x" * 61)
        read_input(p, "scenario file", 60)
    # /proc files are regular files whose st_size is 0: the read itself stops at the cap
    with pytest.raises(InputFileError, match="more than 10 bytes"):
        read_input("/proc/self/status", "scenario file", 10)


def test_a_scenario_file_over_the_toml_cap_is_refused_with_one_line_naming_it(tmp_path):
    # before: any size was read and parsed (a sparse 4 GB file was read whole)
    big = tmp_path / "big.toml"
    with open(big, "wb") as fh:
        fh.truncate(MAX_TOML_BYTES + 1)
    with pytest.raises(_files.TomlFileError, match=r"big\.toml.*4,194,305 bytes, over the 4 MiB limit"):
        read_toml(big, "scenario file")
    line = one_line(spare("run", big))
    assert str(big) in line and "limit of a scenario file" in line


def test_a_failure_log_over_the_byte_cap_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "log.csv"
    with open(big, "wb") as fh:  # sparse: nothing is written, and nothing may be read
        fh.truncate(MAX_LOG_BYTES + 1)
    with pytest.raises(TraceFormatError, match=r"log\.csv.*over the 128 MiB limit of a failure log"):
        read_trace(big)


def test_a_failure_log_over_the_row_cap_is_refused(tmp_path, monkeypatch):
    import spare_core.events.trace as trace_mod
    monkeypatch.setattr(trace_mod, "MAX_LOG_ROWS", 5)
    p = tmp_path / "log.csv"
    p.write_text("time,unit\n" + "".join(f"{i},{i}\n" for i in range(6)))
    with pytest.raises(TraceFormatError, match="line 7: more than 5 failure rows"):
        read_trace(p)
    p.write_text("time,unit\n" + "".join(f"{i},{i}\n" for i in range(5)))
    assert len(read_trace(p).times) == 5


def test_the_caps_take_a_million_row_log_and_are_documented():
    # a 10**6-row log of 100-byte rows (ISO time, host name, a cause) fits both caps
    assert 10**6 * 100 < MAX_LOG_BYTES and 10**6 < MAX_LOG_ROWS
    doc = (ROOT / "docs" / "cli.md").read_text()
    for words in ("4 MiB", "128 MiB", f"{MAX_LOG_ROWS:,}"):
        assert words in doc, words


def test_a_parquet_log_whose_text_would_expand_past_the_cap_is_refused_before_it_is_decoded(tmp_path, monkeypatch):
    # one long host name on every row: a few KB of dictionary-encoded Parquet, gigabytes decoded
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    import spare_core.events.trace as trace_mod
    p = tmp_path / "log.parquet"
    n = 200_000
    unit = pa.DictionaryArray.from_arrays(pa.array([0] * n, pa.int32()), pa.array(["h" * 10_000]))
    pq.write_table(pa.table({"time": pa.array(range(n), pa.float64()), "unit": unit}), p)
    assert p.stat().st_size < 2_000_000
    monkeypatch.setattr(trace_mod, "MAX_LOG_BYTES", 100 * 2**20)
    with pytest.raises(TraceFormatError, match="column 'unit' holds 2,000,000,000 bytes of text"):
        read_trace(p)


def test_a_parquet_log_with_a_duplicated_column_is_one_error_naming_the_file(tmp_path):
    # before: 7 lines of pyarrow traceback without the file name
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "dup.parquet"
    t = pa.Table.from_arrays([pa.array([1.0, 2.0]), pa.array([0, 1]), pa.array([3, 4])], names=["time", "unit", "unit"])
    pq.write_table(t, p)
    with pytest.raises(TraceFormatError, match=r"dup\.parquet.*unit column 'unit' appears more than once"):
        read_trace(p)


def test_a_hostfile_over_the_host_cap_is_refused(tmp_path, monkeypatch):
    import spare_core.events.files as files_mod
    monkeypatch.setattr(files_mod, "MAX_LOG_ROWS", 3)
    shutil.copy(EXAMPLES / "trace_job_failures.csv", tmp_path)
    (tmp_path / "hosts.txt").write_text("a\nb\nc\nd\n")
    from spare_core.scenario_file import ScenarioFileError, load_scenario_file
    with pytest.raises(ScenarioFileError, match="lists 4 hosts, more than the 3"):
        load_scenario_file(EXAMPLES / "trace_job.toml",
                           [f'failures.trace.path="{tmp_path / "trace_job_failures.csv"}"',
                            f'failures.trace.unit_map="{tmp_path / "hosts.txt"}"'])
