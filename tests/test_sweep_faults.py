"""Faults, each in a subprocess: the driver SIGKILLed mid-write, Ctrl-C, a Dask worker
killed mid-sweep, a full or unwritable store. Small runs; every wait is bounded."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

pytest.importorskip("pyarrow")

from spare_core.sweeps import ResultStore, load_spec, run_batch, run_sweep  # noqa: E402

SPEC = """
name = "faults"
seeds = {seeds}
policies = ["ckpt", "rep", "spare"]
redundancies = [1, 2, 3]
[[scenarios]]
preset = "paper_600k"
n_steps = {steps}
grid = {{n_groups = [30, 40]}}
"""


def write_spec(tmp_path, seeds=4, steps=100):
    f = tmp_path / "spec.toml"
    f.write_text(SPEC.format(seeds=seeds, steps=steps))
    return f


def env():
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.abspath(src), os.environ.get("PYTHONPATH", "")]))


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "spare_core", "sweep", *map(str, args)], capture_output=True,
                          text=True, env=env(), timeout=timeout)


def check_groups_against_fresh_runs(spec, store, n=3):
    """Stored rows of a few groups equal the rows of the same groups run here, bit for bit."""
    table = ResultStore(store).read().to_pylist()
    by_key = {r["key"]: r for r in table}
    for g in spec.groups()[:n]:
        fresh = run_batch([g])
        for i, k in enumerate(fresh["key"]):
            # repr: bit for bit, NaN (the cost of a run without a price) equal to NaN
            assert repr({c: fresh[c][i] for c in fresh}) == repr({c: by_key[k][c] for c in fresh})


def test_driver_killed_mid_write_then_resumed(tmp_path):
    f = write_spec(tmp_path)
    store = tmp_path / "store"
    script = textwrap.dedent(f"""
        import os, signal, sys
        from spare_core.cli import main
        real, parts = os.fsync, []
        def dying(fd):
            if ".part-" in os.readlink(f"/proc/self/fd/{{fd}}"):
                parts.append(fd)
                if len(parts) == 3:  # the third part half on disk, under its temporary name
                    os.ftruncate(fd, os.fstat(fd).st_size // 2)
                    real(fd)
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(fd)
        os.fsync = dying
        sys.exit(main(["sweep", {str(f)!r}, "--store", {str(store)!r}, "--batch-runs", "7"]))
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env(), timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr
    runs_dir = store / "runs"
    assert len(list(runs_dir.glob(".part-*.tmp"))) == 1  # the torn part, under its temporary name
    assert len(ResultStore(store).parts()) == 2 and len(ResultStore(store).keys()) == 14
    p = cli(f, "--store", store, "--batch-runs", "7")
    assert p.returncode == 0, p.stderr
    assert "42 runs simulated" in p.stdout and "14 were stored already" in p.stdout
    assert not list(runs_dir.glob(".part-*"))
    st = ResultStore(store)
    assert st.read().num_rows == 56 and st.duplicates == 0 and len(st.parts()) == 8
    check_groups_against_fresh_runs(load_spec(f), store)


def test_ctrl_c_exits_130_with_finished_runs_stored(tmp_path):
    f = write_spec(tmp_path, seeds=16, steps=300)
    store = tmp_path / "store"
    proc = subprocess.Popen([sys.executable, "-m", "spare_core", "sweep", str(f), "--store", str(store), "--workers", "2",
                             "--batch-runs", "7"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    try:
        deadline = time.monotonic() + 60
        while not ResultStore(store).parts() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ResultStore(store).parts(), "no batch finished within 60 s"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    stored = len(ResultStore(store).keys())
    assert 0 < stored < 32 * 7 and f"interrupted; {stored} runs are stored" in lines[0]
    p = cli(f, "--store", store, "--workers", "2", "--batch-runs", "7")
    assert p.returncode == 0, p.stderr
    assert f"{stored} were stored already" in p.stdout
    st = ResultStore(store)
    assert st.read().num_rows == 32 * 7 and st.duplicates == 0
    check_groups_against_fresh_runs(load_spec(f), store)


def test_dask_worker_killed_mid_sweep(tmp_path):
    pytest.importorskip("distributed")
    f = write_spec(tmp_path, seeds=6, steps=300)
    store = tmp_path / "store"
    script = textwrap.dedent(f"""
        import json, logging, os, signal
        from distributed import Client, LocalCluster
        from spare_core.sweeps import load_spec, run_sweep
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)
        client = Client(cluster)
        killed = []
        def kill_one(progress):
            if not killed:  # after the first stored batch: the other worker is busy with one
                addr, pid = sorted(client.run(os.getpid).items())[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(addr)
        done = run_sweep(load_spec({str(f)!r}), {str(store)!r}, executor="dask", scheduler=client, batch_runs=7,
                         on_batch=kill_one)
        print(json.dumps({{"computed": done.computed, "batches": done.batches, "killed": killed}}))
        client.close(); cluster.close()
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env(), timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    doc = json.loads(p.stdout.strip().splitlines()[-1])
    assert doc["killed"] and doc["computed"] == 12 * 7 and doc["batches"] == 12
    st = ResultStore(store)
    assert st.read().num_rows == 12 * 7 and st.duplicates == 0 and len(st.parts()) == 12
    local = tmp_path / "local"
    run_sweep(load_spec(f), local, workers=1)
    a, b = st.read().sort_by("key"), ResultStore(local).read().sort_by("key")
    assert a.schema == b.schema and repr(a.to_pylist()) == repr(b.to_pylist())  # NaN (a cost without price) equal


def test_unwritable_store_is_refused_before_any_work(tmp_path):
    f = write_spec(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x")
    p = cli(f, "--store", afile / "sub")  # under a regular file: cannot be created
    assert p.returncode == 2 and "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spare sweep: error:") and "cannot be created" in lines[0]
    assert afile.read_text() == "x"


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 256 KiB filesystem of our own (root and mount needed; skipped otherwise)."""
    mnt = tmp_path / f"mnt-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_full_or_read_only_disk_is_refused_before_any_work(tmp_path, small_tmpfs):
    f = write_spec(tmp_path)
    t = time.monotonic()
    p = cli(f, "--store", small_tmpfs / "store")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    line = p.stderr.strip()
    assert "MB free, the sweep needs about" in line and "\n" not in line
    assert not list((small_tmpfs / "store" / "runs").glob("part-*"))
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], capture_output=True).returncode == 0
    p = cli(f, "--store", small_tmpfs / "other")
    assert p.returncode == 2 and "Read-only file system" in p.stderr and "Traceback" not in p.stderr
    assert time.monotonic() - t < 30
