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
    Also write ``cython -a`` HTML annotation next to each ``.pyx`` (profiling aid).

A kernel last built with other flags (debug, sanitizer or normal) is recompiled: the flags of each
kernel's last build are kept in ``build/spare_core_build_flags.<name>`` and its generated
``.c`` is removed when they differ; otherwise setuptools would keep the ``-O0`` objects
because no source changed. Per kernel, so that ``SPARE_CORE_ONLY`` builds of different
kernels, debug or not, never leave another kernel with stale flags.
"""
import os
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


def _extensions():
    exts = []
    for pyx in sorted((HERE / EXT_DIR).rglob("*.pyx"), key=lambda p: p.name):
        name = pyx.stem
        if ONLY and name not in ONLY:
            continue
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
    no ``-j``)."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS


setup(
    ext_modules=cythonize(
        _extensions(),
        compiler_directives=COMPILER_DIRECTIVES,
        include_path=INCLUDE,
        annotate=ANNOTATE,
        nthreads=JOBS if JOBS > 1 else 0,
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
