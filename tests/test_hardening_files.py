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


# -- outputs ----------------------------------------------------------------------------------
from spare_core import _writer  # noqa: E402

RUN = [EXAMPLES / "paper_600k.toml", "--steps", "200", "--seeds", "2", "--r-max", "2", "--processes", "1"]
# a horizon of 1.05 T0: most runs do not finish, so TTT/T0 is infinite in runs and cells
UNFINISHED = ["--horizon", "1.05"]


def strict_load(path):
    def no(token):
        raise AssertionError(f"{path}: non-standard JSON token {token}")
    return json.loads(Path(path).read_text(), parse_constant=no)


def null_reasons(doc):
    """Every (key, reason) of every "null_reasons" in the document."""
    out = []
    if isinstance(doc, dict):
        out += list(doc.get("null_reasons", {}).items())
        for v in doc.values():
            out += null_reasons(v)
    elif isinstance(doc, list):
        for v in doc:
            out += null_reasons(v)
    return out


@pytest.mark.parametrize("flag", ["--json", "--csv", "--parquet"])
def test_an_output_through_a_symlink_writes_its_target_and_keeps_the_link(spare_here, tmp_path, flag):
    # before: os.replace(tmp, link) replaced the symlink with a regular file; the target kept its old bytes
    if flag == "--parquet":
        pytest.importorskip("pyarrow")
    target = tmp_path / "real" / f"out{flag[2:]}"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link"
    link.symlink_to(target)
    code, _, err = spare_here("run", *RUN, flag, link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() != b"old" and target.stat().st_size > 100
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temporary file left


def test_a_dangling_symlink_creates_its_target(spare_here, tmp_path):
    target = tmp_path / "made.json"
    link = tmp_path / "link.json"
    link.symlink_to(target)
    code, _, err = spare_here("run", *RUN, "--json", link)
    assert code == 0, err
    assert link.is_symlink() and strict_load(target)["provenance"]["command"] == "spare run"


@pytest.mark.parametrize("flag", ["--json", "--csv", "--parquet"])
@pytest.mark.parametrize("kind", ["fifo", "device", "symlink to a fifo"])
def test_an_output_that_is_a_fifo_or_a_device_is_refused_before_any_work(spare_here, tmp_path, fifo, flag, kind):
    # before: the run went ahead and the FIFO or device was replaced by a regular file
    path = {"fifo": fifo, "device": Path("/dev/null"), "symlink to a fifo": tmp_path / "l"}[kind]
    if kind == "symlink to a fifo":
        path.symlink_to(fifo)
    code, out, err = spare_here("run", *RUN, flag, path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and out == "", (code, out, err)
    assert flag in err and ("a FIFO" in err or "a character device" in err) and "regular files" in err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_outputs_honour_the_umask_and_keep_an_existing_files_mode(spare_here, tmp_path):
    # before: mkstemp's 0600 for every output, whatever the umask; an existing 0644 file became 0600
    old = os.umask(0o022)
    try:
        code, _, err = spare_here("run", *RUN, "--json", tmp_path / "a.json", "--csv", tmp_path / "a.csv")
        assert code == 0, err
        assert stat.S_IMODE(os.stat(tmp_path / "a.json").st_mode) == 0o644
        assert stat.S_IMODE(os.stat(tmp_path / "a.csv").st_mode) == 0o644
        os.umask(0o077)
        (tmp_path / "b.json").write_text("{}")
        os.chmod(tmp_path / "b.json", 0o640)
        code, _, err = spare_here("run", *RUN, "--json", tmp_path / "b.json", "--csv", tmp_path / "c.csv")
        assert code == 0, err
        assert stat.S_IMODE(os.stat(tmp_path / "b.json").st_mode) == 0o640
        assert stat.S_IMODE(os.stat(tmp_path / "c.csv").st_mode) == 0o600
    finally:
        os.umask(old)


def test_run_json_is_strict_and_says_why_a_value_is_null(spare_here, tmp_path):
    # before: null without a word of why (the reader had to know that "finished": false means inf)
    code, _, err = spare_here("run", *RUN, *UNFINISHED, "--json", tmp_path / "r.json")
    assert code == 0, err
    doc = strict_load(tmp_path / "r.json")
    unfinished = [r for r in doc["runs"] if not r["finished"]]
    assert unfinished and all(r["ratio"] is None and "did not finish" in r["null_reasons"]["ratio"]
                              for r in unfinished)


def test_a_sigkill_while_writing_leaves_the_old_file(tmp_path):
    target = tmp_path / "good.json"
    target.write_text('{"good": true}\n')

    def die(fh):
        fh.write(b'{"half": ')
        fh.flush()
        os.kill(os.getpid(), 9)

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child dies in the write
        try:
            _writer.write_atomic(target, die)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
    assert json.loads(target.read_text()) == {"good": True}


def test_json_safe_gives_reasons_in_lists_and_nested_objects():
    doc = _writer.json_safe({"a": [1.0, float("nan")], "b": {"c": float("-inf")}, "d": float("inf")},
                            {"d": {"inf": "unfinished"}})
    assert doc == {"a": [1.0, None], "b": {"c": None, "null_reasons": {"c": "the value was -inf, which JSON "
                                                                           "cannot hold"}},
                   "d": None, "null_reasons": {"a[1]": "the value was nan, which JSON cannot hold",
                                               "d": "unfinished"}}


# -- the sweep report and the plots -----------------------------------------------------------
SPEC = """
name = "unfinished"
seeds = 2
policies = ["ckpt", "spare"]
redundancies = [1, 2]
[[scenarios]]
preset = "paper_600k"
n_steps = 300
max_wall_factor = 1.05
grid = {n_groups = [30]}
"""


@pytest.fixture
def store(tmp_path):
    pytest.importorskip("pyarrow")
    from spare_core.sweeps import ResultStore, load_spec, run_sweep
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    run_sweep(load_spec(spec), ResultStore(tmp_path / "store"))
    return tmp_path / "store"


def test_sweep_report_json_is_strict_with_reasons(spare_here, store, tmp_path):
    # before: json.dump(..., default=...) with allow_nan: "ratio_mean": Infinity
    code, _, err = spare_here("sweep", "--report", "--store", store, "--json", tmp_path / "rep.json")
    assert code == 0, err
    text = (tmp_path / "rep.json").read_text()
    assert "Infinity" not in text and "NaN" not in text
    doc = strict_load(tmp_path / "rep.json")
    assert any(c["ratio_mean"] is None and "did not finish" in c["null_reasons"]["ratio_mean"] for c in doc["cells"])


class _Interrupted(dict):
    """A report row that stops the program (Ctrl-C) when the JSON writer walks it."""

    def items(self):
        raise KeyboardInterrupt


def test_sweep_report_json_interrupted_mid_write_leaves_the_good_report(spare_here, store, tmp_path, monkeypatch):
    # before: written in place (open(path, "w") then json.dump), so Ctrl-C or SIGKILL in the middle
    # left a truncated, invalid JSON where the good report was
    out = tmp_path / "rep.json"
    assert spare_here("sweep", "--report", "--store", store, "--json", out)[0] == 0
    good = out.read_bytes()
    import spare_core.sweeps as sweeps
    real = sweeps.summarise_store

    class Rows:
        def __init__(self, t):
            self.t = t

        def to_pylist(self):
            return [_Interrupted(r) for r in self.t.to_pylist()]

        def __getattr__(self, name):
            return getattr(self.t, name)
    monkeypatch.setattr(sweeps, "summarise_store", lambda s: Rows(real(s)))
    code, _, err = spare_here("sweep", "--report", "--store", store, "--json", out)
    assert code == 130, err
    assert out.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep.json", "spec.toml", "store"]


def test_sweep_json_onto_a_fifo_is_refused_before_any_run(tmp_path, fifo):
    # before: only the directory was checked: the whole sweep ran, then open(FIFO, "w") blocked for ever
    pytest.importorskip("pyarrow")
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    line = one_line(spare("sweep", spec, "--store", tmp_path / "store", "--json", fifo, timeout=60))
    assert "--json" in line and "a FIFO" in line
    assert not (tmp_path / "store").exists()


def test_plot_files_go_through_symlinks_and_a_fifo_among_them_is_refused_before_any_work(spare_here, tmp_path, fifo):
    pytest.importorskip("matplotlib")
    d = tmp_path / "plots"
    d.mkdir()
    real = tmp_path / "elsewhere.png"
    (d / "ttt_vs_r.png").symlink_to(real)
    (d / "timeline.png").symlink_to(fifo)
    code, out, err = spare_here("run", *RUN, "--plot", d)
    # before: the whole grid ran, then matplotlib opened the FIFO for writing and blocked
    assert code == 2 and out == "" and "timeline.png" in err and "a FIFO" in err, (code, err)
    (d / "timeline.png").unlink()
    code, out, err = spare_here("run", *RUN, "--plot", d)
    assert code == 0, err
    assert (d / "ttt_vs_r.png").is_symlink() and real.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, err = spare_here("pacing", "--nodes", "4", "8", "--iterations", "30", "--replicas", "1",
                                "--plot", d / "ttt_vs_r.png")
    assert code == 0, err
    assert (d / "ttt_vs_r.png").is_symlink() and real.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pacing_sweep_to_json_is_strict_and_atomic(tmp_path):
    from spare_core.pacing import node_sweep
    res = node_sweep([4], n_iterations=20, replicas=1, seed=0)
    link = tmp_path / "l.json"
    link.symlink_to(tmp_path / "t.json")
    res.to_json(link)
    assert link.is_symlink() and strict_load(tmp_path / "t.json")["rows"]


def test_a_damaged_parquet_log_is_one_line_naming_the_file(tmp_path):
    # found by tests/fuzz/test_fuzz_logs.py: pyarrow's thrift message ends in a newline, and the
    # error was two lines ("... Invalid data\n)")
    pytest.importorskip("pyarrow")
    import struct
    p = tmp_path / "bad.parquet"
    p.write_bytes(b"PAR1" + b"\xff" * 40 + struct.pack("<i", 40) + b"PAR1")
    with pytest.raises(TraceFormatError) as e:
        read_trace(p)
    assert "\n" not in str(e.value) and "bad.parquet" in str(e.value) and "not a readable Parquet file" in str(e.value)


def test_a_huge_n_units_with_host_names_is_refused_not_padded(tmp_path):
    # found by the long fuzz profile: n_units = 2**62 with host names padded the name tuple to
    # n_units entries (MemoryError)
    p = tmp_path / "log.csv"
    p.write_text("time,unit\n0,node-a\n1,node-b\n")
    with pytest.raises(TraceFormatError, match=r"log\.csv.*n_units=4611686018427387904 with host names: at most "
                                               r"4,194,304 named units"):
        read_trace(p, n_units=2**62)
    assert read_trace(p, n_units=5).unit_names == ("node-a", "node-b", "", "", "")


def test_a_parquet_unit_column_of_out_of_range_timestamps_is_one_error(tmp_path):
    # found by the long fuzz profile (a flipped bit in a timestamp column): OverflowError
    # "date value out of range" escaped from pyarrow's to_pylist
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "ts.parquet"
    pq.write_table(pa.table({"time": pa.array([1.0, 2.0]), "unit": pa.array([2**62, 0], pa.timestamp("us"))}), p)
    with pytest.raises(TraceFormatError, match=r"ts\.parquet.*unit column 'unit' \(timestamp\[us\]\) holds a value "
                                               "that cannot be read as text"):
        read_trace(p)
