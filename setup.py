"""Build script: compiles the Cython kernels of spare_core.

Every ``src/_ext/<group>/<name>.pyx`` becomes the extension module ``spare_core._ext.<name>``
(there is no top-level ``_ext`` package in site-packages). The kernels are grouped by the
package they serve (``graph/``: matching and flow; ``events/``: the event engine and the log
scan; ``sim/``: the time-to-train loop; ``strategies/spare/``: RECTLR;
``strategies/replication/``: the wipe-out scans; ``pacing/``; ``stragglers/``: the what-if
replay of a job's trace); module names stay flat, so a
kernel moves between groups without its importers noticing. Every group directory is on the
Cython include path: a kernel cimports another's ``.pxd`` by its name wherever it lives. Code shared by several kernels
lives in ``.pxd`` files without a ``.pyx`` (``_types.pxd`` ctypedefs, ``_heap.pxd`` and
``_prefetch.pxd`` ``cdef inline`` helpers), compiled into each kernel that cimports them;
each kernel's own ``.pxd`` declares the types and enums other Cython code may cimport.

Compiler directives
-------------------
``COMPILER_DIRECTIVES`` below is the one place where Cython directives are set:
``language_level=3``; ``boundscheck``, ``wraparound`` and ``initializedcheck`` off and
``cdivision`` on, because the Python wrappers validate every index before a kernel runs.

Environment variables
---------------------
``SPARE_CORE_DEBUG=1``
    Debug build: bounds checking, wraparound and initialisation checks back on, C code
    compiled with ``-O0 -g``. Use it when a kernel misbehaves; the tests pass either way.
``SPARE_CORE_SANITIZE=1``
    AddressSanitizer + UndefinedBehaviorSanitizer build (``-fsanitize=address,undefined
    -fno-sanitize-recover=undefined -O1 -g -fno-omit-frame-pointer``, Cython bounds checks
    left off so that the sanitizers, not Cython, see any out-of-bounds access). The Python
    interpreter itself is not instrumented, so the ASan runtime must be loaded first::

        LD_PRELOAD=$(gcc -print-file-name=libasan.so) \
        ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        python -m pytest tests/fuzz

    (``detect_leaks=0``: CPython keeps its interned objects and arenas until exit by
    design.) ``.ci/sanitize`` builds such a copy in a temporary directory, leaving this
    tree's build untouched, and runs the fuzz suite's fast profile on it; see
    docs/reliability.md. Combines with ``SPARE_CORE_DEBUG=1`` (then ``-O0``).
``SPARE_CORE_ONLY=name[,name...]``
    Build only these kernels (development aid, e.g. ``SPARE_CORE_ONLY=_hk``).
``SPARE_CORE_ANNOTATE=1``
    Also write ``cython -a`` HTML annotation next to each ``.pyx`` (profiling aid; bypasses the
    build cache, since the annotation is written by the translation the cache skips).
``SPARE_CORE_BUILD_CACHE=DIR``
    Where compiled kernels are kept between builds (default ``$XDG_CACHE_HOME/spare_core/kernels``,
    else ``~/.cache/spare_core/kernels``); ``0`` or ``off`` disables the cache.

The build cache
---------------
pip builds every install in a fresh temporary environment, so without a cache the README's two
commands (``pip install .`` then ``pip install -e '.[test]'``) compile every kernel twice. Each
compiled kernel is therefore kept under a key that hashes everything its bytes depend on: every
file of ``src/_ext`` but the generated ``.c`` (kernels cimport each other's ``.pxd``, so one key
covers them all), this file, the directives and compiler and linker arguments, the interpreter's
version and extension suffix, the NumPy and Cython versions, and the ``CC``/``CFLAGS``/
``CPPFLAGS``/``LDFLAGS`` environment. A kernel whose key is cached is copied, neither translated
nor compiled; any other is built and then stored (written to a temporary name and renamed, so
an interrupted build never leaves half a file under the key). A debug or sanitizer build has
other arguments, hence another key.

A kernel last built with other flags (debug, sanitizer or normal) is recompiled: the flags of each
kernel's last build are kept in ``build/spare_core_build_flags.<name>`` and its generated
``.c`` is removed when they differ; otherwise setuptools would keep the ``-O0`` objects
because no source changed. Per kernel, so that ``SPARE_CORE_ONLY`` builds of different
kernels, debug or not, never leave another kernel with stale flags.
"""
import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
EXT_DIR = Path("src") / "_ext"

DEBUG = os.environ.get("SPARE_CORE_DEBUG", "0") not in ("", "0", "false", "False")
ONLY = {s.strip() for s in os.environ.get("SPARE_CORE_ONLY", "").split(",") if s.strip()}
ANNOTATE = os.environ.get("SPARE_CORE_ANNOTATE", "0") not in ("", "0")
SANITIZE = os.environ.get("SPARE_CORE_SANITIZE", "0") not in ("", "0", "false", "False")

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

if DEBUG:
    EXTRA_COMPILE_ARGS = ["-O0", "-g"]
else:
    EXTRA_COMPILE_ARGS = ["-O3"]
EXTRA_LINK_ARGS: list[str] = []
if SANITIZE:
    # -O1 keeps the reports' stacks readable at a tolerable speed; UB is fatal so a test fails
    _SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"]
    EXTRA_COMPILE_ARGS = (["-O0"] if DEBUG else ["-O1"]) + ["-g"] + _SAN
    EXTRA_LINK_ARGS = list(_SAN)


def _refresh_if_flags_changed(name: str) -> None:
    """Remove kernel ``name``'s generated C file when its last build used other flags (or
    is unknown), so cythonize and the compiler redo it with the current ones."""
    stamp = HERE / "build" / f"spare_core_build_flags.{name}"
    flags = f"debug={DEBUG} args={' '.join(EXTRA_COMPILE_ARGS)} link={' '.join(EXTRA_LINK_ARGS)}"
    old = stamp.read_text() if stamp.exists() else None
    if old != flags:
        for c in (HERE / EXT_DIR).rglob(f"{name}.c"):
            c.unlink()
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(flags)


#: the kernel directories: where a cimport looks for a .pxd
INCLUDE = [str(EXT_DIR)] + sorted(str(d.relative_to(HERE)) for d in (HERE / EXT_DIR).rglob("*") if d.is_dir()
                                  and d.name != "__pycache__")
_names = [p.stem for p in (HERE / EXT_DIR).rglob("*.pyx")]
assert len(_names) == len(set(_names)), f"two kernels share a name: {sorted(_names)}"


def _cache_dir():
    """The build cache's directory for this exact build (see the module docstring), or None
    when the cache is off."""
    where = os.environ.get("SPARE_CORE_BUILD_CACHE", "")
    if where.lower() in ("0", "off", "false", "no") or ANNOTATE:
        return None
    if not where:
        where = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"),
                             "spare_core", "kernels")
    import Cython

    h = hashlib.sha256()
    for f in sorted(p for p in (HERE / EXT_DIR).rglob("*") if p.is_file() and p.suffix in (".pyx", ".pxd", ".pxi", ".h")):
        h.update(str(f.relative_to(HERE)).encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(Path(__file__).read_bytes())
    for part in (sorted(COMPILER_DIRECTIVES.items()), EXTRA_COMPILE_ARGS, EXTRA_LINK_ARGS, sys.version,
                 sysconfig.get_config_var("EXT_SUFFIX"), np.__version__, Cython.__version__,
                 [os.environ.get(v, "") for v in ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS")]):
        h.update(repr(part).encode() + b"\0")
    return Path(where) / h.hexdigest()[:32]


CACHE = _cache_dir()
_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def _cached(name: str):
    """The cached build of kernel ``name``, or None."""
    if CACHE is None:
        return None
    f = CACHE / f"{name}{_SUFFIX}"
    return f if f.is_file() else None


def _extensions():
    exts = []
    for pyx in sorted((HERE / EXT_DIR).rglob("*.pyx"), key=lambda p: p.name):
        name = pyx.stem
        if ONLY and name not in ONLY:
            continue
        if _cached(name) is None:
            _refresh_if_flags_changed(name)
        exts.append(
            Extension(
                f"spare_core._ext.{name}",
                [str(pyx.relative_to(HERE))],
                include_dirs=[np.get_include(), *INCLUDE],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=EXTRA_COMPILE_ARGS,
                extra_link_args=EXTRA_LINK_ARGS,
            )
        )
    return exts


#: processes that translate and compile the kernels: every CPU (a fresh install compiles 15
#: kernels; one at a time it took minutes on a loaded 2-core machine)
JOBS = max(1, os.cpu_count() or 1)


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling the kernels in parallel unless ``-j`` says otherwise (pip passes
    no ``-j``), copying a kernel from the build cache when it holds it and storing every kernel
    it compiles there."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS

    def build_extension(self, ext):
        name = ext.name.rsplit(".", 1)[-1]
        out = Path(self.get_ext_fullpath(ext.name))
        hit = _cached(name)
        if hit is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(hit, out)
            print(f"spare_core: {name} from the build cache {CACHE}")
            return
        super().build_extension(ext)
        if CACHE is not None and out.is_file():
            try:
                CACHE.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=CACHE, prefix=f".{name}.")
                os.close(fd)
                shutil.copyfile(out, tmp)
                os.chmod(tmp, 0o644)
                os.replace(tmp, CACHE / f"{name}{_SUFFIX}")
            except OSError as e:  # a read-only or full cache only costs the next build its time
                print(f"spare_core: build cache not written ({e})")


_exts = _extensions()
_todo = [e for e in _exts if _cached(e.name.rsplit(".", 1)[-1]) is None]
setup(
    # only what the cache lacks is translated; a cached kernel keeps its .pyx source, which
    # build_extension never reaches
    ext_modules=(cythonize(_todo, compiler_directives=COMPILER_DIRECTIVES, include_path=INCLUDE, annotate=ANNOTATE,
                           nthreads=JOBS if JOBS > 1 else 0) if _todo else [])
    + [e for e in _exts if e not in _todo],
    cmdclass={"build_ext": ParallelBuildExt},
)
