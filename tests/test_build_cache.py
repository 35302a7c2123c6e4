"""The kernel build cache of setup.py: a second build of the same sources and flags copies the
compiled kernel instead of translating and compiling it again, and anything that changes the
kernel's bytes (a ``.pxd`` it cimports, the build flags) or turning the cache off builds anew.

One small kernel (``_types_check``) is built in a copy of the build inputs, so the repository's
own build is never touched."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "_types_check"

pytest.importorskip("Cython")


def _tree(where: Path) -> Path:
    """A copy of what a build reads: setup.py, pyproject.toml, README.md and the kernel sources
    (without generated C), with an empty package to build into."""
    where.mkdir()
    for f in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, where / f)
    shutil.copytree(ROOT / "src" / "_ext", where / "src" / "_ext",
                    ignore=shutil.ignore_patterns("*.c", "*.so", "*.html", "__pycache__"))
    (where / "src" / "spare_core" / "_ext").mkdir(parents=True)
    (where / "src" / "spare_core" / "__init__.py").write_text("")
    (where / "src" / "spare_core" / "_ext" / "__init__.py").write_text("")
    return where


def _build(tree: Path, cache) -> str:
    env = {**os.environ, "SPARE_CORE_ONLY": KERNEL, "SPARE_CORE_BUILD_CACHE": str(cache)}
    env.pop("SPARE_CORE_DEBUG", None)
    env.pop("SPARE_CORE_SANITIZE", None)
    r = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return r.stdout + r.stderr


def _built(tree: Path) -> Path:
    (so,) = (tree / "src" / "spare_core" / "_ext").glob(f"{KERNEL}.*")
    return so


def test_second_build_is_copied_from_the_cache_and_a_change_builds_anew(tmp_path):
    cache = tmp_path / "cache"
    first = _tree(tmp_path / "a")
    out = _build(first, cache)
    assert "from the build cache" not in out
    assert list(first.rglob(f"{KERNEL}.c")), "the first build translated the kernel"
    (stored,) = cache.glob(f"*/{KERNEL}.*")
    assert stored.read_bytes() == _built(first).read_bytes()

    second = _tree(tmp_path / "b")
    out = _build(second, cache)
    assert "from the build cache" in out
    assert not list(second.rglob(f"{KERNEL}.c")), "a cached kernel is neither translated nor compiled"
    assert _built(second).read_bytes() == stored.read_bytes()
    # the copy imports and works like a compiled one
    r = subprocess.run([sys.executable, "-c", f"import spare_core._ext.{KERNEL} as m; print(m.__name__)"],
                       cwd=second / "src", capture_output=True, text=True)
    assert r.returncode == 0 and KERNEL in r.stdout, r.stderr

    # a shared .pxd every kernel may cimport changes the key: built, not copied
    third = _tree(tmp_path / "c")
    with open(third / "src" / "_ext" / "_types.pxd", "a") as f:
        f.write("\n# changed\n")
    out = _build(third, cache)
    assert "from the build cache" not in out
    assert len(list(cache.glob(f"*/{KERNEL}.*"))) == 2


def test_cache_off_builds_and_stores_nothing(tmp_path):
    tree = _tree(tmp_path / "a")
    out = _build(tree, "off")
    assert "from the build cache" not in out
    assert _built(tree).is_file()
    assert list(tree.rglob(f"{KERNEL}.c"))
