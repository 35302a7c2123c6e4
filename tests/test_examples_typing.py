"""A user's typed script passes ``mypy --strict``: the README's library example and the
Python example in examples/ (the library's own modules are followed silently, as for an
installed package; scipy has no bundled types, hence --ignore-missing-imports)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mypy")


def _mypy(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--ignore-missing-imports",
         "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={"MYPYPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )


def test_readme_example_passes_mypy_strict(tmp_path):
    text = (ROOT / "README.md").read_text()
    block = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    script = tmp_path / "readme_example.py"
    script.write_text(block)
    p = _mypy(script, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


def test_python_example_passes_mypy_strict_and_runs(tmp_path):
    p = _mypy(ROOT / "examples" / "own_cluster.py", tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    run = subprocess.run([sys.executable, str(ROOT / "examples" / "own_cluster.py")], capture_output=True,
                         text=True, timeout=300, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("TTT/T0") == 6
